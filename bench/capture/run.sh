#!/usr/bin/env bash
# bench/capture/run.sh: capture overhead on the 10,000-launch workload (run on the H200, see capture/README.md).
#
#   bench/capture/run.sh VGT WORKLOAD [RUNS] [OUTDIR]
#
# Interleaves RUNS plain runs and RUNS runs under `vgt record` ($REC_OPTS, default options when unset) in one run of this script, so
# both see the same machine state; prints each wall time, the medians, their ratio (goal <= 1.10) and
# the trace bytes per submission of the captured runs. Wall time is the whole process (start-up included),
# as a user of the tool experiences it.
set -euo pipefail
VGT=${1:?usage: run.sh VGT WORKLOAD [RUNS] [OUTDIR]}
WL=${2:?usage: run.sh VGT WORKLOAD [RUNS] [OUTDIR]}
RUNS=${3:-5}
OUT=${4:-$(mktemp -d)}
mkdir -p "$OUT"

now() { echo "${EPOCHREALTIME/./}"; }   # microseconds
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

"$WL" >/dev/null   # warm the driver and the page cache once, untimed
plain=() captured=() bps=()
for i in $(seq 1 "$RUNS"); do
    t0=$(now); "$WL" >/dev/null; t1=$(now)
    plain+=($((t1 - t0)))
    t0=$(now); VGT_CAPTURE_STATS=1 "$VGT" record -o "$OUT/bench_$i.vgt" ${REC_OPTS:-} -- "$WL" >/dev/null 2>"$OUT/bench_$i.err"; t1=$(now)
    captured+=($((t1 - t0)))
    subs=$(sed -n 's/.*stats pid=[0-9]* doorbells=[0-9]* submits=\([0-9]*\).*/\1/p' "$OUT/bench_$i.err" | head -1)
    size=$(stat -c %s "$OUT/bench_$i.vgt")
    [ -n "$subs" ] && [ "$subs" -gt 0 ] && bps+=($((size / subs)))
    echo "run $i: plain ${plain[-1]} us, captured ${captured[-1]} us, trace $size bytes, submissions ${subs:-?}"
done
mp=$(printf '%s\n' "${plain[@]}" | median)
mc=$(printf '%s\n' "${captured[@]}" | median)
mb=$(printf '%s\n' "${bps[@]:-0}" | median)
ratio=$(awk -v a="$mc" -v b="$mp" 'BEGIN {printf "%.3f", a / b}')
echo "options '${REC_OPTS:-}': median plain ${mp} us, median captured ${mc} us, ratio ${ratio} (goal <= 1.10), trace bytes per submission ${mb}"
grep -ho "time_ms.*" "$OUT/bench_1.err" | head -1
grep -ho "split_ms.*" "$OUT/bench_1.err" | head -1
