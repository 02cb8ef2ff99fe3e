#!/usr/bin/env bash
# bench/live/run.sh: how far a live replay lags behind the program it replays, in one clock.
#
#   bench/live/run.sh gpu      on the H200, from the repository root: each corpus workload (the 10,000-launch
#                              stream is many_launches; the command its manifest entry gives, Python programs
#                              with $PY) run under `vgt record --replay=gpu --check --latency`,
#                              with .carry/capture/{bin,lib} (vgt and the capture shim) and .carry/workloads
#                              (corpus/workloads/build.sh .carry/workloads); tests/gpu/README.md says how to
#                              stage them; then many_launches again with the replay waiting for the GPU only on
#                              demand (--wait demand, faster but not safe beside other GPU work: replay/README.md;
#                              COMPARE_WAIT_DEMAND=0 skips it). Ends with
#                              tests/gpu/health_check.sh. About 1.5-2.5 minutes.
#   bench/live/run.sh build    on the build machine: stages .carry/live/{bin,lib} (static vgt and the capture
#                              shim of this tree) and .carry/live/workloads (unless .carry/workloads exists);
#                              `run.sh gpu` prefers them to .carry/capture and .carry/workloads.
#   bench/live/run.sh cpu      anywhere, with the build tree (VGT_BUILD, default ./build): every corpus trace
#                              played back live by bench/live/live_feed (paced as captured, and many_launches
#                              also at a fixed rate) into `vgt replay --live - --backend sim --latency`; then
#                              many_launches through `vgt record --replay=sim` (live_feed as the program).
#
# Latency of a submission: from the GPFIFO_SUBMIT record's timestamp (taken by the capture in the recorded
# process when it trapped the doorbell, just before the real doorbell rings) to the moment the replay's
# backend submit returned (the replayed doorbell rung), both CLOCK_MONOTONIC on this machine. Split in two:
# "to engine" (capture -> vgt record's relay -> pipe -> the replay's reader: the record reached the engine)
# and "in engine" (model, decode, lane, submit); then per stage (p50, p99, max): capture_to_relay (the
# capture's write, the pipe, vgt record's wake-up; only through vgt record, from FILE.relay), relay (its
# copy into the replay's pipe), relay_to_read or capture_to_read (the pipe and the queue before the replay's
# reader: a replay slower than the program shows here), records_before (the reader's checks and the engine
# applying the records that came before the submission: MEMORY written to the GPU, mappings made and
# cleared), model_decode, lane_submit, and
# gpu_waits_before (the replay's waits for the GPU since the previous doorbell), and the dominant stage;
# then the latency split into queue (waiting because the replay had not yet rung the previous doorbell when
# this one was trapped) and own (the rest), which of the two makes the p99, and the three submissions with
# the largest own cost, with their stages (the stalls that started the queues). On the GPU also each
# program's wall time, plain and live (a program held by the replay's backlog runs longer live).
# Printed per workload: p50, p99, max of each, the
# application's submission rate and the replay's, and whether it keeps up (the replay's span of doorbells
# is no longer than the application's plus its p99 latency: no backlog built up).
# Goals: p99 <= 50 us; the live replay's throughput >= the application's submission rate.
# Environment: OUT (default /tmp/live_out), WORKLOADS (gpu; default every recorded corpus workload), PY, RATE (cpu: the fixed rate
# of the many_launches run, submissions/s, default 5000), BACKEND (cpu: sim), RT (cpu: 1 real-time priority
# when allowed, 0 not).
set -uo pipefail
mode=${1:-cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/live_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/live_log.txt") 2>&1

# stats NAME LATENCY_FILE: summary lines from the replay's per-submission lines (submission seq channel
# capture_ts received_ns submit_ns doorbell_ns latency_ns read_ns waited_ns) and, when vgt record relayed
# the stream, LATENCY_FILE.relay (capture_ts relay_read_ns relay_written_ns), joined on capture_ts
stats() {
    local name=$1 f=$2 col
    [ -s "$f" ] || { echo "$name: no latency lines"; return 1; }
    local d
    d=$(mktemp -d)
    [ -s "$f.relay" ] && grep -v '^#' "$f.relay" >"$d/relay"
    touch "$d/relay"
    # one file per series, in ns; the stages in the order a submission goes through them
    grep -v '^#' "$f" | awk -v d="$d" -v rf="$d/relay" 'FILENAME == rf { r1[$1] = $2; r2[$1] = $3; next }
        { rd = (NF >= 9 && $9 > 0) ? $9 : $5; w = (NF >= 10) ? $10 : 0
          print $8 > (d "/tot"); print $5 - $4 > (d "/to"); print $7 - $5 > (d "/en")
          if ($4 in r1) { print r1[$4] - $4 > (d "/s1_capture_to_relay"); print r2[$4] - r1[$4] > (d "/s2_relay");
                          print rd - r2[$4] > (d "/s3_relay_to_read") }
          else print rd - $4 > (d "/s3_capture_to_read")
          print $5 - rd > (d "/s4_records_before"); print $6 - $5 > (d "/s5_model_decode");
          print $7 - $6 > (d "/s6_lane_submit"); print w > (d "/s7_gpu_waits_before") }' "$d/relay" -
    for col in "$d"/tot "$d"/to "$d"/en "$d"/s*; do sort -n -o "$col" "$col"; done
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
    # the engine's own cost per submission (received -> doorbell, plus the GPU waits it made): its throughput
    local busy
    busy=$(grep -v '^#' "$f" | awk '{ s += $7 - $5 + ((NF >= 10) ? $10 : 0); n++ } END { if (n) printf "%.1f", s / n / 1e3 }')
    local goal="met"
    awk -v a="$tp99" 'BEGIN { exit !(a > 50) }' && goal="NOT met"
    echo "$name: $n submissions; latency p50 $tp50 us, p99 $tp99 us, max $tmax us; to engine p50 $op50, p99 $op99 us;" \
         "in engine p50 $ep50, p99 $ep99 us; $rates; engine busy $busy us per submission on average (GPU waits included);" \
         "p99 goal 50 us: $goal"
    local s dom="" domv=-1 v
    for s in "$d"/s*; do
        [ -s "$s" ] || continue
        s=$(basename "$s")
        v=$(p "$s" 99)
        printf '    %-22s p50 %10s us  p99 %10s us  max %10s us\n' "${s#s?_}" "$(p "$s" 50)" "$v" "$(p "$s" 100)"
        awk -v a="$v" -v b="$domv" 'BEGIN { exit !(a > b) }' && dom=${s#s?_} domv=$v
    done
    echo "    dominant stage at p99: $dom"
    # Queue or own cost: latency = queue + own, where queue = how long the submission waited because the
    # replay had not yet rung the previous doorbell when the capture trapped this one (max(0, previous
    # doorbell - capture_ts)), own = the rest (its transport and the engine's work on it and on the records
    # before it). A p99 made of queue is a backlog some earlier stall left (or a replay slower than the
    # program); the stalls line names the submissions whose own cost was largest, with their stages, i.e.
    # what started the queues. In the latency file's order (the replay's), joined with FILE.relay.
    grep -v '^#' "$f" | awk -v d="$d" -v rf="$d/relay" 'FILENAME == rf { r1[$1] = $2; r2[$1] = $3; next }
        { q = (n > 0 && pd > $4) ? pd - $4 : 0; if (q > $8) q = $8; own = $8 - q; pd = $7; n++
          print q > (d "/q_queue"); print own > (d "/q_own")
          rd = (NF >= 9 && $9 > 0) ? $9 : $5
          if ($4 in r1) tr = sprintf("capture_to_relay %.1f, relay %.1f, relay_to_read %.1f", (r1[$4] - $4) / 1e6,
                                     (r2[$4] - r1[$4]) / 1e6, (rd - r2[$4]) / 1e6)
          else tr = sprintf("capture_to_read %.1f", (rd - $4) / 1e6)
          line = sprintf("submission %s (seq %s, channel %s): own %.1f ms; stages in ms, a queue in the transport ones (%s, records_before %.1f, model_decode %.1f, lane_submit %.1f, gpu_waits_before %.1f)",
                         $1, $2, $3, own / 1e6, tr, ($5 - rd) / 1e6, ($6 - $5) / 1e6, ($7 - $6) / 1e6, (NF >= 10 ? $10 : 0) / 1e6)
          # the three largest own costs, kept in order
          for (k = 1; k <= 3; k++) if (own > bo[k]) { for (j = 3; j > k; j--) { bo[j] = bo[j - 1]; bl[j] = bl[j - 1] } bo[k] = own; bl[k] = line; break } }
        END { for (k = 1; k <= 3; k++) if (bl[k] != "") print bl[k] > (d "/stalls") }' "$d/relay" -
    for col in "$d"/q_*; do sort -n -o "$col" "$col"; done
    printf '    %-22s p50 %10s us  p99 %10s us  max %10s us\n' "queue (behind earlier)" "$(p q_queue 50)" "$(p q_queue 99)" "$(p q_queue 100)"
    printf '    %-22s p50 %10s us  p99 %10s us  max %10s us\n' "own (this submission)" "$(p q_own 50)" "$(p q_own 99)" "$(p q_own 100)"
    local qw="own cost"
    awk -v a="$(p q_queue 99)" -v b="$(p q_own 99)" 'BEGIN { exit !(a > b) }' && qw="queue behind earlier submissions"
    echo "    p99 is mostly: $qw"
    [ -s "$d/stalls" ] && sed 's/^/    stall: /' "$d/stalls"
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
    # the whole live path as on the GPU machine: live_feed as the recorded program (it writes to the capture's
    # stream like the shim), vgt record's relay, the replay it starts (the .relay file splits the transport)
    name=many_launches_record_replay
    "${rt[@]}" "$V" record --replay="${BACKEND:-sim}" --check --latency "$OUT/$name.lat" -- \
        "$F" --speed 1 "$root/corpus/many_launches.vgt" >"$OUT/$name.txt" 2>&1
    grep -q '^result: ok' "$OUT/$name.txt" || { echo "$name: replay failed"; tail -5 "$OUT/$name.txt"; fails=$((fails + 1)); }
    stats "$name" "$OUT/$name.lat"
    exit $((fails > 0))
fi

if [ "$mode" = build ]; then   # on the build machine: .carry/live/{bin,lib,workloads} for `run.sh gpu`
    cd "$root"
    cmake -S . -B build-capture -G Ninja -DCMAKE_BUILD_TYPE=Release -DVGT_STATIC_DEPS=ON \
          -DCMAKE_C_STANDARD_LIBRARIES="-lm -lpthread -ldl" >/dev/null || exit 2
    cmake --build build-capture -j2 --target vgt vgt-capture || exit 2
    mkdir -p .carry/live/bin .carry/live/lib
    cp build-capture/bin/vgt .carry/live/bin/ && cp build-capture/lib/libvgt-capture.so .carry/live/lib/ || exit 2
    if [ -d .carry/workloads ]; then echo "workloads: .carry/workloads (already staged)"
    else corpus/workloads/build.sh .carry/live/workloads || exit 2; fi
    echo "staged .carry/live: $(du -sh .carry/live | cut -f1)"
    exit 0
fi
[ "$mode" = gpu ] || { echo "usage: bench/live/run.sh build|gpu|cpu"; exit 2; }
cd "$root"
. tests/gpu/gl_env.sh && gl_env .
V=.carry/capture/bin/vgt
W=.carry/workloads
[ -x .carry/live/bin/vgt ] && V=.carry/live/bin/vgt   # what `run.sh build` staged (this tree's vgt and shim)
[ -d .carry/live/workloads ] && W=.carry/live/workloads
[ -x "$V" ] && [ -d "$W" ] || { echo "stage .carry/capture and .carry/workloads first (tests/gpu/README.md)"; exit 2; }
PY=${PY:-/opt/torch/.venv/bin/python}
# every workload recorded into corpus/ (its manifest's command), unless WORKLOADS names some
WORKLOADS=${WORKLOADS:-$(python3 -c "import json; print(' '.join(e['workload'] for e in json.load(open('corpus/manifest.json'))['traces'] if not e.get('derived')))")}
# wl_cmd NAME TAG: the manifest's command line after `--`, from the staged workloads; Python programs with $PY,
# an image the program writes as $OUT/NAME.TAG.png
wl_cmd() {
    python3 - "$1" "$2" "$W" "$PY" "$OUT" <<'PYEOF'
import json, shlex, sys
name, tag, wdir, py, out = sys.argv[1:]
e = next(e for e in json.load(open("corpus/manifest.json"))["traces"] if e["workload"] == name)
argv = shlex.split(e["command"].split(" -- ", 1)[1])
argv = [py if a == "python3" else f"{wdir}/{a.rsplit('/', 1)[1]}" if a.startswith(".carry/workloads/")
        else f"{out}/{name}.{tag}.png" if a.endswith(".png") else a for a in argv]
print(shlex.join(argv))
PYEOF
}
echo "== gpu: $(uname -r); $(head -1 /proc/driver/nvidia/version 2>/dev/null); $(date -u)"
fails=0
t_start=$(date +%s)
for w in $WORKLOADS; do
    echo "== $w"
    t0=$(date +%s%N)
    timeout 40 $(wl_cmd "$w" plain) >"$OUT/$w.plain.out" 2>"$OUT/$w.plain.err"
    prc=$?
    t1=$(date +%s%N)
    # VGT_GPU_PROFILE: where the replay's backend time went (maps, clears, host writes, channels, submits, waits)
    VGT_GPU_PROFILE=$OUT/$w.gpu_profile timeout 60 "$V" record --replay=gpu --check --latency "$OUT/$w.lat" -- \
        $(wl_cmd "$w" live) >"$OUT/$w.live.out" 2>"$OUT/$w.live.err"
    lrc=$?
    t2=$(date +%s%N)
    # the program blocks when the replay falls behind (the default live policy): a live run much longer
    # than the plain one means the latencies are a queue the program itself was held in
    echo "  wall time: plain $(( (t1 - t0) / 1000000 )) ms; under vgt record --replay $(( (t2 - t1) / 1000000 )) ms" \
         "(the program, the capture and the replay to its end)"
    grep -E '^(result|  checks|  coverage|  live|  latency|    stage|    dominant|  waits|    on demand|  faults)' \
        "$OUT/$w.live.err" | sed 's/^/  /'
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
    [ -s "$OUT/$w.gpu_profile" ] && sed 's/^/  gpu profile: /' "$OUT/$w.gpu_profile" | head -3
done
# the 10,000-launch stream again with the replay waiting on demand (the live default before 2026-12-02, when
# it was found to reorder dependent launches with the program's work beside them): the same pipeline,
# vgt record -o - into vgt replay --live --wait demand; its last check is expected to fail on the H200
if [[ " $WORKLOADS " == *" many_launches "* ]] && [ "${COMPARE_WAIT_DEMAND:-1}" = 1 ]; then
    echo "== many_launches, replay waiting on demand (--wait demand), for comparison"
    timeout 60 "$V" record -o - -- "$W/many_launches" 2>"$OUT/ml_demand.rec.err" |
        timeout 60 "$V" replay --live - --backend gpu --check --quiet --wait demand --latency "$OUT/ml_demand.lat" \
        >"$OUT/ml_demand.txt" 2>&1
    grep -E '^(result|  latency|    dominant|  waits)' "$OUT/ml_demand.txt" | sed 's/^/  /'
    stats many_launches_wait_demand "$OUT/ml_demand.lat"
fi
echo "live bench took $(( $(date +%s) - t_start )) s before the health check"
tests/gpu/health_check.sh live || fails=$((fails + 1))
echo "live bench: $fails problem(s); logs in $OUT"
exit $((fails > 0))
