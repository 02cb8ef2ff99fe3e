#!/usr/bin/env bash
# bench/h200.sh: the performance figures that need the GPU machine (16+ host cores, an NVIDIA GPU), in one
# run, from the repository root, with the static vgt and shim staged as for tests/gpu/capture_corpus.sh
# (.carry/capture/{bin,lib}, .carry/workloads/; tests/gpu/README.md) and a build of the benches in build/.
#
#   1. capture: many_launches, medians of RUNS plain and captured runs per variant (bench/capture/variants.sh):
#      none (doorbell sites patched), none_trap (every doorbell trapped), default, trap; the shim's time
#      split (VGT_CAPTURE_STATS) of the first captured run of each
#   2. trace size: each workload recorded with and without MEMORY_CAS (`--no-memory-cas`), bytes per
#      submission of each (trace bytes / submissions from `vgt info`)
#   3. analysis: bench/decode/run.sh (census_vs_zstd_d, db_vs_baseline), then `vgt census --total`
#      restricted to 1, 2, 4, 8 and 16 cores (taskset): how the read-ahead scales with cores
#   4. replay: bench/replay/run.sh (sim_vs_decode)
#   5. synthetic trace sizes: bench/format/cas.sh
#
# Environment: RUNS (7), SIZE (bench/decode's trace size, default 1300M), OUT (/tmp/h200_bench), STEPS (the
# steps to run, default "1 2 3 4 5"), VGT_BUILD (the build with bin/vgt and bench/, default build; a staged
# copy such as the one tests/gpu/all.sh pack makes serves as well).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
RUNS=${RUNS:-7}
OUT=${OUT:-/tmp/h200_bench}
STEPS=" ${STEPS:-1 2 3 4 5} "
export VGT_BUILD=${VGT_BUILD:-$repo/build}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/h200_bench.txt") 2>&1
V=.carry/capture/bin/vgt
B=.carry/workloads
echo "== machine: $(uname -a); $(nproc) cores"; head -1 /proc/driver/nvidia/version 2>/dev/null; date -u

want() { [[ $STEPS == *" $1 "* ]]; }

if want 1; then
echo "== 1. capture, many_launches ($RUNS + $RUNS runs per variant)"
VARIANTS="none none_trap default trap" bash bench/capture/variants.sh "$V" "$B/many_launches" "$RUNS" "$OUT/variants"
fi

if want 2; then
echo "== 2. trace bytes per submission, with and without MEMORY_CAS"
for w in ${WORKLOADS:-vadd many_launches streams_threads vk_compute vk_triangle gl_egl}; do
    [ -x "$B/$w" ] || continue
    for mode in cas plain; do
        opt=(); [ $mode = plain ] && opt=(--no-memory-cas)
        "$V" record -o "$OUT/$w.$mode.vgt" "${opt[@]}" -- "$B/$w" >/dev/null 2>&1
        subs=$("$V" info "$OUT/$w.$mode.vgt" | awk '/^submissions:/ { print $2 }')
        bytes=$(stat -c %s "$OUT/$w.$mode.vgt")
        echo "$w $mode: $bytes bytes, $subs submissions, $(awk -v b="$bytes" -v s="$subs" 'BEGIN { printf "%.0f", s ? b / s : 0 }') bytes/submission"
    done
done
fi

if want 3; then
echo "== 3. analysis"
SIZE=${SIZE:-1300M} KEEP=1 WORK=$OUT/decode bash bench/decode/run.sh
for k in 1 2 4 8 16; do
    [ "$k" -le "$(nproc)" ] || break
    t=$( { /usr/bin/time -f "%e" taskset -c 0-$((k - 1)) $VGT_BUILD/bin/vgt census "$OUT/decode/pb.vgt" --total >/dev/null; } 2>&1 | tail -1)
    echo "census on $k cores: $t s"
done
rm -f "$OUT/decode/pb.vgt" "$OUT/decode/pb.sqlite"
fi

if want 4; then
echo "== 4. replay on sim"
bash bench/replay/run.sh 1G
fi

if want 5; then
echo "== 5. synthetic workloads"
bash bench/format/cas.sh 5000
fi
