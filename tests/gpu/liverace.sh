#!/usr/bin/env bash
# tests/gpu/liverace.sh: does a live replay keep many_launches' result?
#
# many_launches launches 10,000 kernels, each ordered after the one before, calls cudaDeviceSynchronize,
# then copies its result back with cudaMemcpy on CUDA's copy channel, which carries no semaphore acquire
# (the host had already waited). Two ways a live replay lost that result on the H200, both fixed:
#  - waiting on demand, it submitted that copy while the last launches were still queued on the compute
#    channel (2 runs of 4): the replay now also waits where the program waited;
#  - waiting on demand with two submissions in flight, while the recorded program's own work ran on the GPU
#    beside it, the launches ran out of order (every run): a live replay now waits after each submission
#    (replay/README.md, "Waiting for the GPU").
#
#   tests/gpu/liverace.sh build   on the build machine, from the repository root: stages .carry/liverace/{bin,lib}
#                                 (static vgt and the capture shim of this tree) and .carry/liverace/workloads
#                                 (many_launches and the health check's programs; .carry/workloads when it exists)
#   tests/gpu/liverace.sh run     on the H200, from the repository root: RUNS (default 8) live replays
#                                 `vgt record --replay=gpu --check -- many_launches` (the default waits), then
#                                 FILE_RUNS (default 2) traces recorded and replayed from the file with
#                                 `--wait demand --check` (the GPU to itself), then BESIDE_RUNS (default 2) replays
#                                 of a recorded trace fed at the program's pace (650 bytes every 57 us) while the
#                                 program runs again beside them (captured, so at its live pace): the default
#                                 waits must pass; one more with `--wait demand` shows the hazard (expected to
#                                 fail, not counted); a table in $OUT/liverace.txt; then
#                                 tests/gpu/health_check.sh. About 1-2 minutes.
# Exit 0 when every replay passed its checks and the program's own result was unchanged; 1 otherwise.
set -uo pipefail
mode=${1:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

if [ "$mode" = build ]; then
    cmake -S . -B build-capture -G Ninja -DCMAKE_BUILD_TYPE=Release -DVGT_STATIC_DEPS=ON \
          -DCMAKE_C_STANDARD_LIBRARIES="-lm -lpthread -ldl" >/dev/null || exit 2
    cmake --build build-capture -j2 --target vgt vgt-capture || exit 2
    mkdir -p .carry/liverace/bin .carry/liverace/lib
    cp build-capture/bin/vgt .carry/liverace/bin/ && cp build-capture/lib/libvgt-capture.so .carry/liverace/lib/ || exit 2
    if [ -x .carry/workloads/many_launches ]; then echo "workloads: .carry/workloads (already staged)"
    else corpus/workloads/build.sh .carry/liverace/workloads || exit 2; fi
    echo "staged .carry/liverace: $(du -sh .carry/liverace | cut -f1)"
    exit 0
fi
[ "$mode" = run ] || { echo "usage: tests/gpu/liverace.sh build|run" >&2; exit 2; }

OUT=${OUT:-/tmp/liverace_out}
mkdir -p "$OUT"
V=.carry/liverace/bin/vgt
[ -x "$V" ] || V=.carry/capture/bin/vgt   # the binaries tests/gpu/all.sh build-bin stages serve as well
W=.carry/liverace/workloads
[ -d "$W" ] || W=.carry/workloads
[ -x "$V" ] && [ -x "$W/many_launches" ] || { echo "run tests/gpu/liverace.sh build first"; exit 2; }
# the shim next to the staged vgt (vgt record looks for it beside its binary's ../lib)
RUNS=${RUNS:-8}
FILE_RUNS=${FILE_RUNS:-2}
echo "== liverace: $(uname -r); $(head -1 /proc/driver/nvidia/version 2>/dev/null); $(date -u)"
timeout 40 "$W/many_launches" >"$OUT/plain.out" 2>&1
expect=$(grep '^RESULT' "$OUT/plain.out")
echo "plain: ${expect:-NO RESULT}"

# row LABEL LOG APP_OUT: one line of the table from a replay's summary
row() {
    local label=$1 log=$2 app=$3 res checks waits demand same
    res=$(grep -m1 '^result:' "$log" | cut -c9-60)
    checks=$(grep -m1 '^  checks:' "$log" | sed 's/^  checks: //; s/ (.*//')
    waits=$(grep -m1 '^  waits for the GPU:' "$log" | sed 's/^  waits for the GPU: //; s/, on demand//; s/, after each submission//')
    demand=$(grep -m1 '^    on demand:' "$log" | sed 's/^    on demand: //; s/ before checks/ chk/; s/ before host writes/ wr/;
        s/ for the census/ cen/; s/ before push buffers in flight were written over/ pb/; s/ where the program waited for the GPU/ sync/')
    same=-
    [ -n "$app" ] && { [ "$(grep '^RESULT' "$app")" = "$expect" ] && same=same || same=DIFFERENT; }
    printf '%-8s | %-24s | %-34s | %-22s | %-36s | app %s\n' "$label" "${res:-none}" "${checks:-none}" "${waits:-none}" \
        "${demand:-none}" "$same" | tee -a "$OUT/liverace.txt"
    grep -m3 'differ' "$log" | cut -c1-300 | sed 's/^/           /' | tee -a "$OUT/liverace.txt"
    [ "$same" != DIFFERENT ] && grep -q '^result: ok' "$log"
}

fails=0
: >"$OUT/liverace.txt"
printf '%-8s | %-24s | %-34s | %-22s | %-36s | %s\n' run result checks waits "on demand (why)" application | tee -a "$OUT/liverace.txt"
for i in $(seq 1 "$RUNS"); do
    timeout 90 "$V" record --replay=gpu --check -- "$W/many_launches" >"$OUT/live$i.out" 2>"$OUT/live$i.err"
    row "live$i" "$OUT/live$i.err" "$OUT/live$i.out" || fails=$((fails + 1))
done
for i in $(seq 1 "$FILE_RUNS"); do
    timeout 60 "$V" record -o "$OUT/ml$i.vgt" -- "$W/many_launches" >"$OUT/rec$i.out" 2>"$OUT/rec$i.err"
    timeout 90 "$V" replay "$OUT/ml$i.vgt" --backend gpu --check --wait demand >"$OUT/file$i.err" 2>&1
    row "file$i" "$OUT/file$i.err" "$OUT/rec$i.out" || fails=$((fails + 1))
    rm -f "$OUT/ml$i.vgt"   # ~1 MB each: only the logs come back
done
# pace FILE: FILE on standard output 650 bytes every 57 us (many_launches' bytes per submission and pace)
pace() {
    python3 -c '
import os, sys, time
data = open(sys.argv[1], "rb").read()
t = time.perf_counter()
for off in range(0, len(data), 650):
    b = memoryview(data)[off:off + 650]
    while b:
        b = b[os.write(1, b):]
    t += 57e-6
    while time.perf_counter() < t:
        pass
' "$1"
}
# beside LABEL TRACE [REPLAY OPTIONS]: TRACE replayed at the program's pace, the program running beside it
beside() {
    local label=$1 trace=$2 app
    shift 2
    ( timeout 60 "$V" record -o /dev/null --live -- "$W/many_launches" >"$OUT/$label.app" 2>/dev/null ) &
    app=$!
    pace "$trace" | timeout 90 "$V" replay --live - --backend gpu --check "$@" >"$OUT/$label.err" 2>&1
    wait "$app"
    row "$label" "$OUT/$label.err" "$OUT/$label.app"
}
BESIDE_RUNS=${BESIDE_RUNS:-2}
if [ "$BESIDE_RUNS" -gt 0 ]; then
    timeout 60 "$V" record -o "$OUT/ml_b.vgt" --live -- "$W/many_launches" >"$OUT/rec_b.out" 2>"$OUT/rec_b.err"
    for i in $(seq 1 "$BESIDE_RUNS"); do beside "beside$i" "$OUT/ml_b.vgt" || fails=$((fails + 1)); done
    beside "demand" "$OUT/ml_b.vgt" --wait demand && echo "           (--wait demand passed this time)" ||
        echo "           (--wait demand failed, as expected beside other GPU work: not counted)"
    rm -f "$OUT/ml_b.vgt"
fi
VGT_WORKLOADS=$root/$W tests/gpu/health_check.sh liverace || fails=$((fails + 1))
echo "liverace: $fails problem(s) in $RUNS live, $FILE_RUNS file and $BESIDE_RUNS beside replays; logs in $OUT"
exit $((fails > 0))
