#!/usr/bin/env bash
# bench/perf_h200.sh build|run: the GPU-machine half of the short-program and trace-size figures.
#
#   build   on a build machine, from the repository root: stages a statically linked vgt, the capture shim and the corpus
#           workloads in .carry/capture (tests/gpu/all.sh build-bin; STAGE=DIR for another)
#   run     on the GPU machine, from the repository root; about 2-3 minutes (at most 3m50s), each step under a time limit:
#             1. bench/capture/startup.sh run   (limit 120 s): plain vs `vgt record` of /bin/true, vadd,
#                vk_compute, gl_egl (RUNS=7 + 7, medians) and the shim's start-up and exit phases
#             2. bench/format/real_sizes.sh run (limit 140 s): torch_small.py and triton_small.py recorded
#                with and without MEMORY_CAS: bytes per submission, ratio, both replays on sim checked
#           Writes $OUT/startup/ and $OUT/sizes/ (tables, logs, small traces; OUT default /tmp/vgt-perf) and
#           prints both tables; exit 1 when a step failed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
case "${1:-}" in
build) exec bash tests/gpu/all.sh build-bin ;;
run) ;;
*) echo "usage: bench/perf_h200.sh build|run" >&2; exit 2 ;;
esac
OUT=${OUT:-/tmp/vgt-perf}
mkdir -p "$OUT/startup" "$OUT/sizes"
echo "== $(uname -r); $(nproc) cores; $(head -1 /proc/driver/nvidia/version 2>/dev/null | cut -c1-80); $(date -u +%FT%TZ)"
fail=0
t0=$(date +%s)
OUT=$OUT/startup timeout -k 5 120 bash bench/capture/startup.sh run >"$OUT/startup/log.txt" 2>&1 || fail=1
echo "== 1. start-up and exit ($(( $(date +%s) - t0 )) s)"; cat "$OUT/startup/startup.txt" 2>/dev/null || tail -5 "$OUT/startup/log.txt"
t0=$(date +%s)
OUT=$OUT/sizes timeout -k 5 140 bash bench/format/real_sizes.sh run >"$OUT/sizes/log.txt" 2>&1 || fail=1
echo "== 2. trace sizes of real programs ($(( $(date +%s) - t0 )) s)"; cat "$OUT/sizes/real_sizes.txt" 2>/dev/null || tail -5 "$OUT/sizes/log.txt"
[ $fail = 0 ] && echo "perf_h200: done" || echo "perf_h200: a step failed (see the logs under $OUT)"
exit $fail
