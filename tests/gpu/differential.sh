#!/usr/bin/env bash
# differential.sh: every corpus trace (and any trace given) replayed on sim and on the GPU, and the end states
# compared: every semaphore the trace observes or releases, and every range it observes, 256 bytes at a time
# (`vgt replay --dump-state`, compared by tests/gpu/state_diff.py). Where sim says it did not know a value
# (shaders it does not execute wrote there) a difference is "not modelled"; a difference where it knew, a
# region one side lacks, or a sim replay left blocked is a divergence. The capture arbitrates semaphores that
# differ (the trace's last MEMORY record holding each); a GPU replay that hung is "gpu-unfinished", not sim's
# fault where sim equals the capture. A trace marked derived or synthetic (its identity, or the corpus manifest)
# never runs on the GPU: derived traces are edited to fault on purpose (an engine exception there leaves the
# GPU unable to finish Vulkan draws for every later trace); its row says "skipped: derived trace ...".
#
#   tests/gpu/differential.sh build            (build machine, repository root) stage the shared binaries
#                                               (tests/gpu/all.sh build-bin), the workload below among them
#   tests/gpu/differential.sh run [TRACE...]   (GPU machine, repository root) record the CUDA-graph workload,
#                                               check it on both backends, then the differential over the corpus
#                                               and TRACE...; results in $OUT
#   tests/gpu/differential.sh sim [TRACE...]   the sim half only (any machine): sim states and notes, no GPU
#
# Environment: OUT (default /tmp/vgt-diff), VGT (default .carry/capture/bin/vgt), WORKLOAD (default
# cuda_graph_memcpy; empty: record nothing), LIMIT (seconds per replay, default 40), DEADLINE (no trace starts
# after it, default 150 s), CORPUS (the corpus traces to include, a glob, default corpus/*.vgt; empty: none).
# Output: $OUT/table.txt (the differential table), $OUT/NAME.sim.json / .gpu.json (replay summaries),
# $OUT/NAME.sim.state / .gpu.state (end states), $OUT/NAME.diff.txt (the regions that are not equal, and what
# sim said it did not model), $OUT/$WORKLOAD.vgt and its logs. Exit: 0 no divergence, 1 divergence, 2 usage.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
mode=${1:-run}
[ $# -gt 0 ] && shift
carry=.carry/capture
out=${OUT:-/tmp/vgt-diff}
vgt=${VGT:-$carry/bin/vgt}
workload=${WORKLOAD-cuda_graph_memcpy}
limit=${LIMIT:-40}
deadline=${DEADLINE:-150}   # seconds: traces not started by then are listed as skipped (the run fits 3 minutes)
corpus_glob=${CORPUS-corpus/*.vgt}

stage() { bash tests/gpu/all.sh build-bin; }

# replay NAME TRACE BACKEND: the replay's summary and end state; never fails the script (the table says)
replay() {
    local name=$1 trace=$2 be=$3
    timeout -k 5 "$limit" "$vgt" replay "$trace" --backend "$be" --check --json \
        --dump-state "$out/$name.$be.state" >"$out/$name.$be.json" 2>"$out/$name.$be.err"
    echo $? >"$out/$name.$be.rc"
}

# row NAME VERDICT: a table row for a trace not compared
row() {
    printf '{"trace":"%s","verdict":"%s"}\n' "$1" "$2" >>"$out/rows.jsonl"
}

# diff_one NAME TRACE: both replays, one table row
diff_one() {
    local name=$1 trace=$2 t0=$SECONDS mark
    mark=$("$vgt" info --json "$trace" | python3 tests/gpu/state_diff.py --mark - --manifest corpus/manifest.json)
    if [ -n "$mark" ] && [ "$mode" != sim ]; then   # sim is harmless; the GPU is not
        row "$name" "$mark"
        echo "  $name: $mark"
        return
    fi
    replay "$name" "$trace" sim
    if [ "$mode" = sim ]; then
        python3 - "$out/$name.sim.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
notes = [r["message"] for r in d.get("reports", []) if r.get("event") == "unsupported"]
print(f"  sim: result {d['result']}, blocked {d['blocked']}, qmds {d.get('qmds')}, not modelled {len(notes)}")
EOF
        return
    fi
    # a draw whose program lies in no mapping (or was never written) faults the 3D engine, and a graphics-engine fault leaves the
    # GPU unable to finish Vulkan draws for every later program (backend/gpu/README.md, "Engine
    # exceptions"): such a trace (gl_lints, vk_lints) is replayed on sim only
    if "$vgt" draws "$trace" --json 2>/dev/null | grep -qE '"code":"program_(unmapped|never_written)"'; then
        printf '{"trace":"%s","sem":0,"sem_eq":0,"sem_diff":0,"sem_nm":0,"ranges":0,"rng_eq":0,"rng_diff":0,"rng_nm":0,"sim_notes":0,"verdict":"SKIPPED (a draw program at an unmapped VA would fault the GPU)"}\n' \
            "$name" >>"$out/rows.jsonl"
        return
    fi
    replay "$name" "$trace" gpu
    if [ ! -s "$out/$name.gpu.state" ] || [ ! -s "$out/$name.sim.state" ]; then
        row "$name" "NO-STATE sim=$(cat "$out/$name.sim.rc") gpu=$(cat "$out/$name.gpu.rc")"
        return
    fi
    local cmp=(python3 tests/gpu/state_diff.py "$out/$name.sim.state" "$out/$name.gpu.state" --name "$name"
        --sim-json "$out/$name.sim.json" --gpu-json "$out/$name.gpu.json" --trace "$trace" --vgt "$vgt")
    "${cmp[@]}" >"$out/$name.diff.txt"
    "${cmp[@]}" --json >>"$out/rows.jsonl"
    echo "  $name: $((SECONDS - t0)) s, gpu rc $(cat "$out/$name.gpu.rc"), sim rc $(cat "$out/$name.sim.rc")"
}

# The new CUDA-graph workload: recorded here, then checked on both backends (sim must finish: no channel
# left on an acquire), then in the differential with the corpus.
record_workload() {
    local t="$out/$workload.vgt"
    timeout -k 5 60 "$vgt" record -o "$t" -- ".carry/workloads/$workload" >"$out/$workload.record.out" \
        2>"$out/$workload.record.err"
    echo "record: rc $? $(grep -h ^RESULT "$out/$workload.record.out") size $(stat -c %s "$t" 2>/dev/null)"
    for be in sim gpu; do
        timeout -k 5 "$limit" "$vgt" replay "$t" --backend "$be" --check >"$out/$workload.check.$be.txt" 2>&1
        echo "check $be: rc $? $(grep -E '^result' "$out/$workload.check.$be.txt" | head -1)"
    done
}

run() {
    [ -x "$vgt" ] || { echo "$vgt missing: run '$0 build' on the build machine first" >&2; exit 2; }
    mkdir -p "$out"
    : >"$out/rows.jsonl"
    local traces=() t
    if [ "$mode" = run ] && [ -n "$workload" ] && [ -x ".carry/workloads/$workload" ]; then
        record_workload
        [ -s "$out/$workload.vgt" ] && traces+=("$out/$workload.vgt")
    fi
    # shellcheck disable=SC2086  # the glob is meant to expand
    for t in $corpus_glob "$@"; do [ -f "$t" ] && traces+=("$t"); done
    for t in "${traces[@]}"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            row "$(basename "$t" .vgt)" "SKIPPED (time)"
            continue
        fi
        diff_one "$(basename "$t" .vgt)" "$t"
    done
    [ "$mode" = sim ] && return 0
    python3 tests/gpu/state_diff.py --table "$out/rows.jsonl" | tee "$out/table.txt"
    local rc=${PIPESTATUS[0]}
    grep -l '"class": "differ"\|"class": "missing"\|"class": "gpu unfinished"\|blocked:' "$out"/*.diff.txt 2>/dev/null |
        while read -r f; do echo "--- $f"; head -20 "$f"; done
    return "$rc"
}

case "$mode" in
build) stage ;;
run | sim) run "$@" ;;
*) echo "usage: $0 build | run [TRACE...] | sim [TRACE...]" >&2; exit 2 ;;
esac
