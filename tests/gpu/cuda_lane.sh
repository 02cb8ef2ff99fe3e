#!/usr/bin/env bash
# tests/gpu/cuda_lane.sh: lane 3 on the GPU machine, in one command (under 8 minutes on the H200): the CUDA
# workloads recorded with their CUDA driver API records, then forwarded through the host's libcuda.
#
#   bash tests/gpu/cuda_lane.sh            from the repository root
#   bash tests/gpu/cuda_lane.sh corpus     only step 4, on every CUDA trace of corpus/ (about a minute)
#
# Needs (tests/gpu/README.md "Building the binaries"): .carry/capture/bin/vgt and .carry/capture/lib/
# libvgt-capture.so (the static build), the compiled workloads in .carry/workloads (corpus/workloads/build.sh:
# vadd, many_launches, streams_threads, cuda_graph), and a Python with PyTorch and Triton for torch_small.py
# and triton_small.py ($PY, default /opt/torch/.venv/bin/python; those two are skipped, and said so, without it).
#
# For each workload:
#   1. run plainly, then under `vgt record` (the trace in $OUT/traces/<name>.vgt): the RESULT line must be the
#      same (and, for the new workloads, the one corpus/workloads/expected/results_computed.txt gives);
#   2. `vgt verify`, and `vgt info --json`: the CUDA records (launches, loads, images) and their consistency
#      (every call that put work on the GPU linked to a submission);
#   3. `vgt db`: the calls linked to submissions, from the cuda_api_submissions view;
#   4. `vgt replay --lane cuda --backend cuda --check --json`: every captured call forwarded through libcuda,
#      the bytes copied back compared with the capture's.
# Then one table row per workload, and tests/gpu/health_check.sh (the GPU still serves other processes).
# Exit 0 when every step of every workload passed and the health check is ok; 1 otherwise; 2 when the
# binaries are missing.
# Environment: OUT (default /tmp/cuda_lane_out), PY, WORKLOADS (default all six), TIMEOUT (per run, 180 s).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/cuda_lane_out}
mkdir -p "$OUT/traces"
exec > >(tee -a "$OUT/cuda_lane_log.txt") 2>&1
V=.carry/capture/bin/vgt
B=.carry/workloads
PY=${PY:-/opt/torch/.venv/bin/python}
T=$OUT/traces
LIMIT=${TIMEOUT:-180}
WORKLOADS=${WORKLOADS:-"vadd many_launches streams_threads cuda_graph torch_small triton_small"}
expected=corpus/workloads/expected
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@" 2>/dev/null; }
[ -x "$V" ] && [ -f .carry/capture/lib/libvgt-capture.so ] || { echo "cuda_lane: $V or its shim missing (tests/gpu/README.md)"; exit 2; }

# corpus: the committed CUDA traces forwarded through libcuda, one row each
if [ "${1:-}" = corpus ]; then
    fails=0
    printf '%-20s %-6s %s\n' trace exit summary
    for t in $(python3 -c "import json; print(' '.join(e['workload'] for e in json.load(open('corpus/manifest.json'))['traces'] if e['source'].endswith(('.cu', '.py')) and not e.get('derived')))"); do
        timeout -k 5 "$LIMIT" "$V" replay "corpus/$t.vgt" --lane cuda --backend cuda --check --json >"$OUT/$t.cuda.json" 2>"$OUT/$t.cuda.err"
        rc=$?
        [ $rc -eq 0 ] || fails=$((fails + 1))
        printf '%-20s %-6s %s\n' "$t" "$rc" "$(json_get "$OUT/$t.cuda.json" "(d['result'], d.get('checks'), d.get('lanes'))" || tail -1 "$OUT/$t.cuda.err")"
    done
    bash tests/gpu/health_check.sh after || fails=$((fails + 1))
    echo "cuda_lane corpus: $fails problem(s)"
    [ $fails -eq 0 ]; exit
fi

cmd_of() {
    case $1 in
    torch_small|triton_small) echo "$PY corpus/workloads/$1.py" ;;
    *) echo "$B/$1" ;;
    esac
}

echo "== machine: $(uname -r) $(head -1 /proc/driver/nvidia/version 2>/dev/null)"; date -u
echo "== health before"; bash tests/gpu/health_check.sh before
fails=0
rows=()
t_start=$(date +%s)
for w in $WORKLOADS; do
    echo "== $w"
    cmd=$(cmd_of "$w")
    case $w in torch_small|triton_small)
        if [ ! -x "$PY" ] || ! "$PY" -c "import torch, triton" 2>/dev/null; then
            echo "SKIP $w: $PY has no torch/triton"; rows+=("$w|skipped (no PyTorch/Triton)|-|-|-|-|-"); continue
        fi ;;
    *) [ -x "$cmd" ] || { echo "cuda_lane: $cmd missing (corpus/workloads/build.sh .carry/workloads)"; exit 2; } ;;
    esac
    timeout "$LIMIT" $cmd >"$OUT/$w.plain.out" 2>"$OUT/$w.plain.err"; prc=$?
    t0=$(date +%s%N)
    timeout "$LIMIT" "$V" record -o "$T/$w.vgt" -- $cmd >"$OUT/$w.cap.out" 2>"$OUT/$w.cap.err"; crc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    plain=$(grep -m1 '^RESULT' "$OUT/$w.plain.out"); cap=$(grep -m1 '^RESULT' "$OUT/$w.cap.out")
    want=$(grep -hm1 "^RESULT $w " "$expected/results_h200.txt" "$expected/results_computed.txt" 2>/dev/null | head -1)
    echo "  plain:    rc=$prc $plain"
    echo "  captured: rc=$crc $cap ($ms ms, $(stat -c %s "$T/$w.vgt" 2>/dev/null) bytes)"
    tail -3 "$OUT/$w.cap.err" | sed 's/^/  stderr: /'
    same=no
    if [ "$prc" = 0 ] && [ "$crc" = 0 ] && [ -n "$plain" ] && [ "$plain" = "$cap" ] && { [ -z "$want" ] || [ "$want" = "$cap" ]; }; then
        same=yes
    else
        fails=$((fails + 1)); [ -n "$want" ] && echo "  expected: $want"
    fi
    "$V" verify "$T/$w.vgt" >"$OUT/$w.verify.txt" 2>&1 || { fails=$((fails + 1)); echo "  verify FAILED: $(tail -1 "$OUT/$w.verify.txt")"; }
    "$V" info --json "$T/$w.vgt" >"$OUT/$w.info.json" 2>"$OUT/$w.info.err"; irc=$?
    "$V" info "$T/$w.vgt" | sed -n '/^submissions/,/^chunks/p' | grep -v '^chunks' | head -24 | sed 's/^/  /'
    launches=$(json_get "$OUT/$w.info.json" "(d['cuda'] or {}).get('launches', 0) + (d['cuda'] or {}).get('graph_launches', 0)")
    linked=$(json_get "$OUT/$w.info.json" "'%d/%d' % ((d['cuda'] or {}).get('work_linked', 0), (d['cuda'] or {}).get('work_calls', 0))")
    [ "$irc" = 0 ] && [ "${launches:-0}" -gt 0 ] || { fails=$((fails + 1)); echo "  info: rc=$irc, $launches launches: CUDA records missing or inconsistent"; }
    rm -f "$OUT/$w.db"
    "$V" db "$T/$w.vgt" -o "$OUT/$w.db" --quiet >/dev/null 2>"$OUT/$w.db.err" || echo "  db FAILED: $(tail -1 "$OUT/$w.db.err")"
    links=$(python3 - "$OUT/$w.db" <<'PY' 2>/dev/null
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT count(DISTINCT api_seq), count(*) FROM cuda_api_submissions").fetchone()
q = db.execute("SELECT count(*), count(qmd_va) FROM cuda_launches WHERE submission_count > 0").fetchone()
print(f"{n[0]} calls -> {n[1]} submissions; QMD found for {q[1]} of {q[0]} linked launches")
for row in db.execute("SELECT api_seq, api, submission, channel FROM cuda_api_submissions WHERE api LIKE 'cuLaunch%' LIMIT 3"):
    print("   e.g.", row)
PY
)
    echo "  db: $links"
    t0=$(date +%s%N)
    timeout "$LIMIT" "$V" replay --lane cuda --backend cuda --check --json "$T/$w.vgt" >"$OUT/$w.replay.json" 2>"$OUT/$w.replay.err"; rrc=$?
    rms=$(( ($(date +%s%N) - t0) / 1000000 ))
    checks=$(json_get "$OUT/$w.replay.json" "'%d passed, %d failed' % (d['checks']['passed'], d['checks']['failed'])")
    fwd=$(json_get "$OUT/$w.replay.json" "'%d forwarded, %d skipped, ranges kept %d moved %d, params relocated %d, lanes %s' % (d['cuda']['forwarded'], d['cuda']['skipped'], d['cuda']['ranges_kept'], d['cuda']['ranges_moved'], d['cuda']['params_relocated'], d['lanes'])")
    echo "  replay: rc=$rrc ($rms ms) checks: $checks; $fwd"
    grep -h -m5 -i 'warning\|error\|MISMATCH' "$OUT/$w.replay.err" | sed 's/^/  replay stderr: /'
    python3 - "$OUT/$w.replay.json" <<'PY' 2>/dev/null | head -5
import json, sys
d = json.load(open(sys.argv[1]))
for r in d.get("reports", [])[:5]:
    if r.get("kind") in ("mismatch", "warning", "event"): print("  replay:", r.get("kind"), r.get("message", "")[:300])
PY
    replay=FAILED
    [ "$rrc" = 0 ] && replay=ok || fails=$((fails + 1))
    rows+=("$w|$same|${launches:-?}|${linked:-?}|$(stat -c %s "$T/$w.vgt" 2>/dev/null)|$replay (${checks:-no summary})|$rms ms")
done

echo
echo "== lane 3 (vgt $(cd "$root" && git rev-parse --short HEAD 2>/dev/null)): $(( $(date +%s) - t_start )) s"
printf '%-16s %-9s %-9s %-12s %-11s %-36s %s\n' workload "RESULT=" launches "work linked" "trace B" "replay --lane cuda --check" "replay time"
for r in "${rows[@]}"; do IFS='|' read -r a b c d e f g <<<"$r"; printf '%-16s %-9s %-9s %-12s %-11s %-36s %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g"; done
echo
dmesg 2>/dev/null | grep -i xid | tail -5
echo "== health after"
bash tests/gpu/health_check.sh after || fails=$((fails + 1))
echo "== done: $fails problems; traces in $T (copy the new ones into corpus/ with their RESULT lines)"
exit $((fails > 0))
