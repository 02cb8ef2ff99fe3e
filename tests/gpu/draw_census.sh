#!/usr/bin/env bash
# tests/gpu/draw_census.sh: the store census per draw on the GPU (`vgt replay --census-per-draw`).
#
#   bash tests/gpu/draw_census.sh build    # here, from the repository root: stages the shared binaries (tests/gpu/all.sh build-bin)
#   bash tests/gpu/draw_census.sh run      # on the GPU machine, from the repository root (about 1 minute)
#
# run: vk_triangle, gl_egl, vk_nostore, gl_nostore, vk_compute replayed with
# `vgt replay --backend gpu --check --census-per-draw`: every submission is cut before and after each draw
# and launch, each piece fenced (idle: a semaphore released behind it, waited for with a bound) and the
# render targets and observed pages read back. One table row per draw or launch: its lints (`vgt draws`),
# the render-target bytes and pixels its piece changed, the observed bytes. Asserted: the draws with a lint
# that says they store nothing stored no render-target byte, and the draws without a lint stored some.
# Outputs under $OUT: <trace>.stores.jsonl, <trace>.draws.json, <trace>.log, draw_census.txt, health.txt.
#
# A draw whose piece the GPU did not finish (the fence after it timed out: rows "unfinished":1) is
# reported UNFINISHED, not "stored nothing": its counts say nothing. Before the replays, the stock Vulkan
# and GL triangles run (tests/gpu/health_check.sh): a GPU left unable to finish Vulkan draws by an earlier
# engine exception (backend/gpu/README.md, "Engine exceptions") is said first, and its Vulkan rows are
# "UNFINISHED (GPU cannot finish Vulkan draws)". For every draw of a Vulkan trace a detail line gives its
# render target (VA, format, layout, size, write mask; the replay allocates every surface as generic,
# uncompressed memory) and, per census row of its piece, the range, the bytes changed, px0 and whether
# the piece finished.
#
# The derived lint traces (corpus/*_lints.vgt) are not replayed here: one points a program at an unmapped
# VA, which would fault on the GPU.
#
# BACKEND=sim runs the same steps on sim (a dry run: sim rasterizes nothing, so the normal draws fail).
# Safety: replays keep the MME guard on (a submission whose macro calls would raise an MME exception is
# refused); nothing here provokes an engine exception.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$root/.carry/capture
mode=${1:-run}
TRACES=${TRACES:-"vk_triangle gl_egl vk_nostore gl_nostore vk_compute"}

build() { bash "$root/tests/gpu/all.sh" build-bin; }

. "$root/tests/gpu/gl_env.sh"

pick_python() {
    for p in "${PY:-}" python3 /opt/torch/.venv/bin/python; do
        [ -n "$p" ] && command -v "$p" >/dev/null && { echo "$p"; return; }
    done
}

run() {
    local V=$stage/bin/vgt out=${OUT:-/tmp/draw_census} fails=0 py
    mkdir -p "$out"
    [ -x "$V" ] || { echo "no $V: run 'bash tests/gpu/draw_census.sh build' first"; return 2; }
    py=$(pick_python)
    [ -n "$py" ] || { echo "no python"; return 2; }
    echo "== $(uname -n) $(head -1 /proc/driver/nvidia/version 2>/dev/null)"
    # before anything of ours: can this GPU finish a stock Vulkan draw at all?
    local vk_ok=1
    HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-20} bash "$root/tests/gpu/health_check.sh" before-drawcensus >"$out/health.txt" 2>&1
    grep -E '^health' "$out/health.txt" | sed 's/^/  /'
    grep -qE 'vk_triangle: (FAILED|TIMEOUT)|FAILED \(.*vk_triangle' "$out/health.txt" && vk_ok=0
    [ $vk_ok -eq 1 ] || echo "  the stock Vulkan triangle does not finish: this GPU cannot finish Vulkan draws (an earlier engine exception); the Vulkan rows below cannot pass"
    for t in $TRACES; do
        local tr=$root/corpus/$t.vgt t0 rc
        [ -f "$tr" ] || { echo "$t: not staged"; continue; }
        "$V" draws "$tr" --json >"$out/$t.draws.json" 2>/dev/null
        t0=$(date +%s)
        # 40 s at most a trace (each is a few seconds): five traces stay under the 3 minutes of the run
        timeout -k 5 40 "$V" replay "$tr" --backend "${BACKEND:-gpu}" --check --census-per-draw --census-json "$out/$t.stores.jsonl" \
            --submit-timeout 5000 >"$out/$t.log" 2>&1
        rc=$?
        echo "$t: replay exit $rc in $(($(date +%s) - t0)) s; $(grep -E '^result:' "$out/$t.log" | head -1)"
        grep -E 'census per draw:' "$out/$t.log" | sed 's/^ */  /'
        [ $rc -eq 0 ] || { fails=$((fails + 1)); tail -5 "$out/$t.log" | sed 's/^/  | /'; }
    done
    VK_OK=$vk_ok "$py" - "$out" $TRACES <<'EOF' | tee "$out/draw_census.txt"
import json, os, sys
from collections import defaultdict
out, traces = sys.argv[1], sys.argv[2:]
vk_ok = os.environ.get("VK_OK", "1") == "1"
# lints that say a draw stores nothing (zero_count, program_* and the rest say so too)
QUIET = {"stage_disabled", "sph_no_outputs", "no_render_target", "write_mask_zero", "viewport_zero",
         "scissor_zero", "zero_count", "program_unmapped", "program_never_written"}
bad = 0
print(f"{'trace':12} {'draw':>4} {'kind':6} {'sub':>4} {'rt_bytes':>9} {'rt_px':>7} {'obs_bytes':>9}  lints / verdict")
for t in traces:
    try:
        draws = json.load(open(f"{out}/{t}.draws.json"))["draws"]
        rows = [json.loads(l) for l in open(f"{out}/{t}.stores.jsonl") if l.strip()]
    except (OSError, ValueError) as e:
        print(f"{t:12} missing output: {e}"); bad += 1; continue
    rt, obs, unfinished, mine = defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(list)
    for r in rows:
        if r.get("draw") is None: continue
        for n in range(r["draw"], r["draw"] + r["draw_count"]):
            (rt if r["what"] == "render-target" else obs)[n] += r["bytes_changed"]
            unfinished[n] += r.get("unfinished", 0)
            mine[n].append(r)
    for d in draws:
        n, lints = d["draw"], {l["code"] for l in d["lints"]}
        verdict = ""
        if unfinished[n]:
            verdict = "UNFINISHED: the GPU did not finish its piece" + ("" if vk_ok or not t.startswith("vk") else
                                                                       " (GPU cannot finish Vulkan draws)")
        elif d["kind"] == "draw" and lints & QUIET:
            verdict = "ok: stored nothing" if rt[n] == 0 else "FAIL: flagged but stored"
        elif d["kind"] == "draw" and not lints:
            verdict = "ok: stored" if rt[n] > 0 else "FAIL: stored nothing"
        bad += verdict.startswith(("FAIL", "UNFINISHED"))
        print(f"{t:12} {n:>4} {d['kind']:6} {d['submission']:>4} {rt[n]:>9} {rt[n] // 4:>7} {obs[n]:>9}  "
              f"{','.join(sorted(lints)) or '-'} {verdict}")
        if t.startswith("vk") and d["kind"] == "draw":   # what the census read, for a Vulkan draw
            for s in d.get("render_targets") or []:
                print(f"{'':17}rt{s.get('slot')}: va {s.get('va', 0):#x} {s.get('format_name')} {s.get('layout')} "
                      f"{s.get('width')}x{s.get('height')} mask {s.get('write_mask')} memory {s.get('memory')}")
            for r in mine[n]:
                px0 = "-" if r["px0"] is None else f"{r['px0']:#010x}"
                print(f"{'':17}row: {r['what']} va {r['va']:#x}+{r['length']} bytes_changed {r['bytes_changed']} "
                      f"first_changed {r['first_changed']} px0 {px0} "
                      f"{'UNFINISHED' if r.get('unfinished') else 'finished'}")
            if not mine[n]:
                print(f"{'':17}no row: its piece finished and changed no watched byte")
print("RESULT draw_census", "ok" if not bad else f"FAILED {bad}")
sys.exit(1 if bad else 0)
EOF
    local prc=${PIPESTATUS[0]}
    [ "$prc" -eq 0 ] || fails=$((fails + 1))
    echo "draw_census: $fails failures (outputs in $out)"
    [ $fails -eq 0 ]
}

case $mode in
    build) build ;;
    run) gl_env "$root"; run ;;
    *) echo "usage: $0 build|run"; exit 2 ;;
esac
