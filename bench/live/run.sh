#!/usr/bin/env bash
# bench/live/run.sh: how far a live replay lags behind the program it replays, in one clock.
#
#   bench/live/run.sh gpu      on the H200, from the repository root: each corpus workload (the 10,000-launch
#                              stream is many_launches) run under `vgt record --replay=gpu --check --latency`,
#                              with .carry/capture/{bin,lib} (vgt and the capture shim) and .carry/workloads
#                              (corpus/workloads/build.sh .carry/workloads); tests/gpu/README.md says how to
#                              stage them. Ends with tests/gpu/health_check.sh.
#   bench/live/run.sh cpu      anywhere, with the build tree (VGT_BUILD, default ./build): every corpus trace
#                              played back live by bench/live/live_feed (paced as captured, and many_launches
#                              also at a fixed rate) into `vgt replay --live - --backend sim --latency`.
#
# Latency of a submission: from the GPFIFO_SUBMIT record's timestamp (taken by the capture in the recorded
# process when it trapped the doorbell, just before the real doorbell rings) to the moment the replay's
# backend submit returned (the replayed doorbell rung), both CLOCK_MONOTONIC on this machine. Split in two:
# "to engine" (capture -> vgt record's relay -> pipe -> the replay's reader: the record reached the engine)
# and "in engine" (model, decode, lane, submit). Printed per workload: p50, p99, max of each, the
# application's submission rate and the replay's, and whether it keeps up (the replay's span of doorbells
# is no longer than the application's plus its p99 latency: no backlog built up).
# Goals: p99 <= 50 us; the live replay's throughput >= the application's submission rate.
# Environment: OUT (default /tmp/live_out), WORKLOADS (gpu; default all six), RATE (cpu: the fixed rate
# of the many_launches run, submissions/s, default 5000), BACKEND (cpu: sim), RT (cpu: 1 real-time priority
# when allowed, 0 not).
set -uo pipefail
mode=${1:-cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/live_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/live_log.txt") 2>&1

# stats NAME LATENCY_FILE: one summary line from the replay's per-submission lines
# (submission seq channel capture_ts received_ns submit_ns doorbell_ns latency_ns)
stats() {
    local name=$1 f=$2 col
    [ -s "$f" ] || { echo "$name: no latency lines"; return 1; }
    local d
    d=$(mktemp -d)
    grep -v '^#' "$f" | awk -v d="$d" '{ print $8 > (d "/tot"); print $5 - $4 > (d "/to"); print $7 - $5 > (d "/en") }'
    for col in tot to en; do sort -n -o "$d/$col" "$d/$col"; done
    # nearest rank: the ceil(n q / 100)-th smallest, in us
    p() { awk -v q="$2" '{ a[NR] = $1 } END { k = int((NR * q + 99) / 100); if (k < 1) k = 1; printf "%.1f", a[k] / 1e3 }' "$d/$1"; }
    local n tp50 tp99 tmax op50 op99 ep50 ep99
    n=$(wc -l <"$d/tot")
    tp50=$(p tot 50) tp99=$(p tot 99) tmax=$(p tot 100) op50=$(p to 50) op99=$(p to 99) ep50=$(p en 50) ep99=$(p en 99)
    # rates: the application's (capture timestamps) and the replay's (its doorbells), first to last
    local rates
    rates=$(grep -v '^#' "$f" | awk -v p99="$tp99" 'NR == 1 { c0 = $4; d0 = $7 } { c1 = $4; d1 = $7; n++ }
        END { if (n < 2 || c1 == c0 || d1 == d0) { print "n/a"; exit }
              keeps = "yes"; if (d1 - d0 > c1 - c0 + p99 * 1e3) keeps = "NO"
              printf "application %.0f submissions/s, replay %.0f/s, keeps up: %s", (n - 1) * 1e9 / (c1 - c0), (n - 1) * 1e9 / (d1 - d0), keeps }')
    local dom="the engine" goal="met"
    awk -v a="$op99" -v b="$ep99" 'BEGIN { exit !(a > b) }' && dom="transport to the engine"
    awk -v a="$tp99" 'BEGIN { exit !(a > 50) }' && goal="NOT met"
    echo "$name: $n submissions; latency p50 $tp50 us, p99 $tp99 us, max $tmax us; to engine p50 $op50, p99 $op99 us;" \
         "in engine p50 $ep50, p99 $ep99 us; $rates; dominant (p99): $dom; p99 goal 50 us: $goal"
    rm -rf "$d"
}

if [ "$mode" = cpu ]; then
    B=${VGT_BUILD:-$root/build}
    V=$B/bin/vgt
    F=$B/bench/live_feed
    [ -x "$V" ] && [ -x "$F" ] || { echo "build first: $V and $F are missing"; exit 2; }
    # RT=1 (default): both processes at real-time priority when allowed (chrt), so that the figures are the
    # pipeline's and not the wait for a CPU on a loaded machine; RT=0 measures under the normal scheduler
    rt=()
    [ "${RT:-1}" = 1 ] && chrt -f 10 true 2>/dev/null && rt=(chrt -f 10)
    echo "== cpu: $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), backend ${BACKEND:-sim}," \
         "${rt[*]:-normal priority}, $(date -u)"
    fails=0
    run_one() {   # NAME FEED_ARGS...
        local name=$1
        shift
        "${rt[@]}" "$F" "$@" | "${rt[@]}" "$V" replay --live - --backend "${BACKEND:-sim}" --check --quiet \
            --latency "$OUT/$name.lat" >"$OUT/$name.txt" 2>&1
        local rc=$?
        grep -q '^result: ok' "$OUT/$name.txt" || { echo "$name: replay rc=$rc"; tail -5 "$OUT/$name.txt"; fails=$((fails + 1)); }
        stats "$name" "$OUT/$name.lat"
    }
    for t in "$root"/corpus/*.vgt; do run_one "$(basename "$t" .vgt)" --speed 1 "$t"; done
    run_one "many_launches_rate${RATE:-5000}" --rate "${RATE:-5000}" "$root/corpus/many_launches.vgt"
    run_one "many_launches_flood" "$root/corpus/many_launches.vgt"
    exit $((fails > 0))
fi

[ "$mode" = gpu ] || { echo "usage: bench/live/run.sh gpu|cpu"; exit 2; }
cd "$root"
for f in .gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
ldconfig 2>/dev/null
nv=/usr/local/nvidia/share
[ -z "${VK_DRIVER_FILES:-}" ] && [ -e "$nv/vulkan/icd.d/nvidia_icd.json" ] && export VK_DRIVER_FILES=$nv/vulkan/icd.d/nvidia_icd.json
[ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -e "$nv/glvnd/egl_vendor.d/10_nvidia.json" ] && \
    export __EGL_VENDOR_LIBRARY_FILENAMES=$nv/glvnd/egl_vendor.d/10_nvidia.json
V=.carry/capture/bin/vgt
W=.carry/workloads
[ -x "$V" ] && [ -d "$W" ] || { echo "stage .carry/capture and .carry/workloads first (tests/gpu/README.md)"; exit 2; }
WORKLOADS=${WORKLOADS:-"vadd many_launches streams_threads vk_compute vk_triangle gl_egl"}
wl_args() { case $1 in vk_triangle|gl_egl) echo "$OUT/$1.$2.png" ;; *) echo "" ;; esac; }
echo "== gpu: $(uname -r); $(head -1 /proc/driver/nvidia/version 2>/dev/null); $(date -u)"
fails=0
for w in $WORKLOADS; do
    echo "== $w"
    timeout 120 "$W/$w" $(wl_args "$w" plain) >"$OUT/$w.plain.out" 2>"$OUT/$w.plain.err"
    prc=$?
    timeout 300 "$V" record --replay=gpu --check --latency "$OUT/$w.lat" -- "$W/$w" $(wl_args "$w" live) \
        >"$OUT/$w.live.out" 2>"$OUT/$w.live.err"
    lrc=$?
    grep -E '^(result|  checks|  coverage|  live|  latency|  faults)' "$OUT/$w.live.err" | sed 's/^/  /'
    if [ "$prc" = "$lrc" ] && grep -q '^RESULT' "$OUT/$w.live.out" &&
       diff <(grep '^RESULT' "$OUT/$w.plain.out") <(grep '^RESULT' "$OUT/$w.live.out") >/dev/null; then
        echo "  application: SAME result as without capture (rc $lrc)"
    else
        echo "  application: DIFFERENT (plain rc $prc, live rc $lrc)"
        grep -h '^RESULT' "$OUT/$w.plain.out" "$OUT/$w.live.out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
    [ -f "$OUT/$w.plain.png" ] && { cmp -s "$OUT/$w.plain.png" "$OUT/$w.live.png" && echo "  PNG SAME" || echo "  PNG DIFFERENT"; }
    grep -q '^result: ok' "$OUT/$w.live.err" || { echo "  replay: FAILED"; tail -20 "$OUT/$w.live.err" | sed 's/^/    /'; fails=$((fails + 1)); }
    stats "$w" "$OUT/$w.lat"
done
tests/gpu/health_check.sh live || fails=$((fails + 1))
echo "live bench: $fails problem(s); logs in $OUT"
exit $((fails > 0))
