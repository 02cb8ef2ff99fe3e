#!/bin/bash
# bench/replay-gpu/run.sh: lane 1 speed on the GPU machine (tests/gpu/run.sh --bench runs it; tests/gpu/README.md).
#
#  1. Per corpus trace: `vgt replay --backend gpu --no-wait` (no per-submission wait, no checks) and the
#     replay's own timing line: wall time from its first submission to all work done, against the
#     original program's span from the first to the last submission (trace timestamps), measured in the
#     same run. ratio = capture span / replay span: >= 1.0 means the replay submits at least as fast as
#     the original did. Also with the per-submission wait (--check off), to show what verification costs.
#  2. Raw rate of trivial submissions (one host semaphore release, one doorbell each), from the gpu
#     self-test's `rate` row (VGT_SELFTEST_LOG, or a run of .carry/lane1/gpu_selftest --no-fault).
#
# Environment: VGT_BIN (default .carry/lane1/vgt), VGT_CORPUS (default .carry/lane1/corpus or corpus/): the
# binaries and corpus `tests/gpu/run.sh build` stages in the git-ignored .carry/ folder.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
vgt=${VGT_BIN:-$root/.carry/lane1/vgt}
corpus=${VGT_CORPUS:-$root/.carry/lane1/corpus}
[ -d "$corpus" ] || corpus=$root/corpus
[ -x "$vgt" ] || { echo "bench/replay-gpu: $vgt not built (tests/gpu/run.sh build)"; exit 2; }

timing() {   # $1 log -> "replay_ms capture_ms"
    sed -n 's/.*timing: replay \([0-9.]*\) ms.*capture \([0-9.]*\) ms.*/\1 \2/p' "$1" | head -1
}

printf '%-16s %12s %12s %8s %14s %8s\n' trace "capture ms" "replay ms" ratio "waited ms" ratio
for t in gl_egl vk_triangle vk_compute vadd streams_threads many_launches; do
    f=$corpus/$t.vgt
    [ -f "$f" ] || continue
    log=$(mktemp)
    timeout -k 5 15 "$vgt" replay "$f" --backend gpu --no-wait --quiet >"$log" 2>&1
    read -r fast cap <<<"$(timing "$log")"
    timeout -k 5 15 "$vgt" replay "$f" --backend gpu --quiet >"$log" 2>&1
    read -r waited _ <<<"$(timing "$log")"
    rm -f "$log"
    awk -v t="$t" -v c="${cap:-0}" -v f="${fast:-0}" -v w="${waited:-0}" 'BEGIN {
        printf "%-16s %12.3f %12.3f %8s %14.3f %8s\n", t, c, f, (f > 0 ? sprintf("%.2fx", c / f) : "-"), w,
               (w > 0 ? sprintf("%.2fx", c / w) : "-") }'
done

log=${VGT_SELFTEST_LOG:-}
if [ -z "$log" ] || [ ! -f "$log" ]; then
    log=$(mktemp)
    timeout -k 5 40 "$root/.carry/lane1/gpu_selftest" --no-fault >"$log" 2>&1
fi
echo "trivial submissions (gpu self-test, one semaphore release and one doorbell each):"
grep -E '^rate ' "$log" || echo "  no rate row in $log"
