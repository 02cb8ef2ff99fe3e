#!/usr/bin/env bash
# tests/gpu/gpget.sh: completion forensics and the resized CUDA workloads on the GPU machine.
#
#   bash tests/gpu/gpget.sh build     here, from the repository root: the static vgt and capture shim of this
#                                     tree into .carry/capture/{bin,lib}, the compiled workloads into
#                                     .carry/workloads (tests/gpu/all.sh build-bin)
#   bash tests/gpu/gpget.sh run       on the H200 (about 1 minute): vadd, many_launches and vk_triangle
#                                     recorded; per trace the GP_GET figures of `vgt info --json` (doorbells
#                                     whose GP_GET was read, channels read at the end, ring wraps, GETs past
#                                     PUT) and `vgt verify`'s notes; a table
#   bash tests/gpu/gpget.sh record    on the H200 (about 2 minutes): streams_threads and torch_small recorded
#                                     for the corpus, each followed by `vgt info`, `vgt replay --lane cuda
#                                     --backend cuda --check` and `vgt replay --backend gpu --check`; a table
#                                     with each trace's size (the goal: 1-2 MB) and the checks
#   bash tests/gpu/gpget.sh imgref    on the H200 (under 1 minute): torch_small recorded with the default
#                                     --cuda-images=auto (PyTorch's large fatbins named by their library's path,
#                                     offset and hash instead of stored); its size, `vgt info`'s image lines,
#                                     `vgt verify --image-files`, and `vgt replay --lane cuda --backend cuda
#                                     --check` (which reads those images back from the libraries); a table
#   bash tests/gpu/gpget.sh all       run, then record (about 3 minutes)
#
# Results under $OUT (default /tmp/gpget_out): logs, JSON, and the traces of `record` in $OUT/traces (small by
# design; the `run` traces are deleted after their figures are taken, vk_triangle's kept). The replays keep
# their MME guard on. Exit 0 when every step passed, 1 otherwise, 2 when binaries are missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mode=${1:-all}
C=.carry/capture
V=$C/bin/vgt
B=.carry/workloads
PY=${PY:-/opt/torch/.venv/bin/python}
LIMIT=${TIMEOUT:-90}

build() { bash tests/gpu/all.sh build-bin; }

[ "$mode" = build ] && { build; exit $?; }

OUT=${OUT:-/tmp/gpget_out}
mkdir -p "$OUT/traces"
exec > >(tee -a "$OUT/gpget_log.txt") 2>&1
[ -x "$V" ] && [ -f $C/lib/libvgt-capture.so ] || { echo "gpget: $V or its shim missing (bash tests/gpu/gpget.sh build)"; exit 2; }
# vgt record preloads the shim found beside its binary (../lib); say so in the log
echo "== machine: $(uname -r) $(head -1 /proc/driver/nvidia/version 2>/dev/null)"; date -u
# Vulkan loader (vk_triangle): unpacked from .gl/*.deb when the machine lacks it (tests/gpu/README.md)
. tests/gpu/gl_env.sh && gl_env .
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@" 2>/dev/null; }
fails=0
T=$OUT/traces

cmd_of() {
    case $1 in
    torch_small) echo "$PY corpus/workloads/$1.py" ;;
    vk_triangle) echo "$B/$1 $OUT/vk_triangle.png" ;;
    *) echo "$B/$1" ;;
    esac
}

# record NAME: plain run and captured run, RESULT lines compared; sets $same
record_one() {
    local w=$1 cmd plain cap
    cmd=$(cmd_of "$w")
    timeout "$LIMIT" $cmd >"$OUT/$w.plain.out" 2>"$OUT/$w.plain.err"; local prc=$?
    local t0=$(date +%s%N)
    timeout "$LIMIT" "$V" record -o "$T/$w.vgt" ${REC_OPTS:-} -- $cmd >"$OUT/$w.cap.out" 2>"$OUT/$w.cap.err"; local crc=$?
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    plain=$(grep -m1 '^RESULT' "$OUT/$w.plain.out"); cap=$(grep -m1 '^RESULT' "$OUT/$w.cap.out")
    want=$(grep -hm1 "^RESULT $w " corpus/workloads/expected/results_h200.txt corpus/workloads/expected/results_computed.txt 2>/dev/null | head -1)
    echo "  plain:    rc=$prc $plain"
    echo "  captured: rc=$crc $cap ($ms ms, $(stat -c %s "$T/$w.vgt" 2>/dev/null) bytes)"
    tail -3 "$OUT/$w.cap.err" | sed 's/^/  stderr: /'
    same=no
    if [ "$prc" = 0 ] && [ "$crc" = 0 ] && [ -n "$plain" ] && [ "$plain" = "$cap" ] && { [ -z "$want" ] || [ "$want" = "$cap" ]; }; then
        same=yes
    else
        fails=$((fails + 1)); echo "  expected: ${want:-(none)}"
    fi
}

run_gpget() {
    local rows=()
    for w in vadd many_launches vk_triangle; do
        echo "== gpget $w"
        record_one "$w"
        "$V" info --json "$T/$w.vgt" >"$OUT/$w.info.json" 2>"$OUT/$w.info.err"
        "$V" info "$T/$w.vgt" | sed -n '/^gp_get/,/^chunks/p' | grep -v '^chunks' | head -12 | sed 's/^/  /'
        "$V" verify "$T/$w.vgt" >"$OUT/$w.verify.txt" 2>&1 || { fails=$((fails + 1)); echo "  verify FAILED"; }
        grep -c '^note:' "$OUT/$w.verify.txt" | sed 's/^/  verify notes: /'
        local g="d['gp']"
        local read=$(json_get "$OUT/$w.info.json" "'%d/%d' % ($g['get_read'], $g['submissions'])")
        local endr=$(json_get "$OUT/$w.info.json" "'%d/%d' % ($g['fetched_all'], $g['progress'])")
        local wr=$(json_get "$OUT/$w.info.json" "'%d/%d' % ($g['put_wraps'], $g['get_wraps'])")
        local past=$(json_get "$OUT/$w.info.json" "$g['get_past_put']")
        [ "${read%%/*}" = "${read##*/}" ] && [ -n "$read" ] || { fails=$((fails + 1)); echo "  not every doorbell read GP_GET: $read"; }
        rows+=("$w|$same|$read|$endr|$wr|$past")
        [ "$w" = vk_triangle ] || rm -f "$T/$w.vgt"
    done
    echo
    printf '%-14s %-8s %-14s %-16s %-16s %s\n' workload result "gp_get read" "end fetched/all" "wraps put/get" "get>put"
    for r in "${rows[@]}"; do IFS='|' read -r a b c d e f <<<"$r"; printf '%-14s %-8s %-14s %-16s %-16s %s\n' "$a" "$b" "$c" "$d" "$e" "$f"; done
}

run_record() {
    local rows=()
    for w in streams_threads torch_small; do
        echo "== record $w"
        if [ "$w" = torch_small ] && { [ ! -x "$PY" ] || ! "$PY" -c "import torch" 2>/dev/null; }; then
            echo "SKIP $w: $PY has no torch"; rows+=("$w|skipped|-|-|-|-"); fails=$((fails + 1)); continue
        fi
        record_one "$w"
        local size=$(stat -c %s "$T/$w.vgt" 2>/dev/null || echo 0)
        "$V" verify "$T/$w.vgt" >"$OUT/$w.verify.txt" 2>&1 || { fails=$((fails + 1)); echo "  verify FAILED: $(tail -1 "$OUT/$w.verify.txt")"; }
        "$V" info "$T/$w.vgt" >"$OUT/$w.info.txt" 2>&1
        "$V" info --json "$T/$w.vgt" >"$OUT/$w.info.json" 2>/dev/null
        sed -n '/^records:/,/^channels:/p' "$OUT/$w.info.txt" | sed 's/^/  /'
        grep -E '^(submissions|gp_get|cuda|bytes)' "$OUT/$w.info.txt" | sed 's/^/  /'
        timeout "$LIMIT" "$V" replay "$T/$w.vgt" --lane cuda --backend cuda --check --json >"$OUT/$w.cuda.json" 2>"$OUT/$w.cuda.err"; local lrc=$?
        timeout "$LIMIT" "$V" replay "$T/$w.vgt" --backend gpu --check --json >"$OUT/$w.gpu.json" 2>"$OUT/$w.gpu.err"; local grc=$?
        echo "  replay cuda: exit $lrc $(tail -2 "$OUT/$w.cuda.err" | tr '\n' ' ' | cut -c1-200)"
        echo "  replay gpu:  exit $grc $(tail -2 "$OUT/$w.gpu.err" | tr '\n' ' ' | cut -c1-200)"
        [ $lrc = 0 ] || fails=$((fails + 1))
        [ $grc = 0 ] || fails=$((fails + 1))
        local small=yes
        [ "$size" -le $((2 * 1024 * 1024 + 512 * 1024)) ] || { small=NO; fails=$((fails + 1)); }
        rows+=("$w|$same|$size|$small|$lrc|$grc")
    done
    echo
    printf '%-16s %-8s %-12s %-8s %-12s %s\n' workload result bytes "<=2.5MB" "cuda exit" "gpu exit"
    for r in "${rows[@]}"; do IFS='|' read -r a b c d e f <<<"$r"; printf '%-16s %-8s %-12s %-8s %-12s %s\n' "$a" "$b" "$c" "$d" "$e" "$f"; done
}

# torch_small with referenced images: the size the corpus would keep, and the cuda lane reading the images back
run_imgref() {
    local w=torch_small
    # the corpus keeps each trace to a megabyte or two: PyTorch's own fatbins (several 300 KB to 1 MB images, in
    # its shared libraries) are referenced, not stored
    local REC_OPTS="--cuda-image-embed-max=${IMG_EMBED_MAX:-256K}"
    echo "== imgref $w (vgt record, default --cuda-images=auto, $REC_OPTS)"
    if [ ! -x "$PY" ] || ! "$PY" -c "import torch" 2>/dev/null; then
        echo "SKIP $w: $PY has no torch"; fails=$((fails + 1)); return
    fi
    record_one "$w"
    local size=$(stat -c %s "$T/$w.vgt" 2>/dev/null || echo 0)
    "$V" info "$T/$w.vgt" >"$OUT/$w.imgref.info.txt" 2>&1
    "$V" info --json "$T/$w.vgt" >"$OUT/$w.imgref.info.json" 2>/dev/null
    grep -E '^(cuda|bytes)|referenced by file|CUDA_IMAGE' "$OUT/$w.imgref.info.txt" | sed 's/^/  /'
    "$V" verify --image-files "$T/$w.vgt" >"$OUT/$w.imgref.verify.txt" 2>&1; local vrc=$?
    grep '^note: .*CUDA image\|^ok' "$OUT/$w.imgref.verify.txt" | head -4 | sed 's/^/  /'
    "$V" db "$T/$w.vgt" -o "$OUT/$w.imgref.db" >/dev/null 2>&1 &&
        python3 -c "import sqlite3,sys; [print('  image', *r) for r in sqlite3.connect(sys.argv[1]).execute('SELECT printf(\"0x%016x\", hash), kind, length, referenced, path, file_offset, substr(entries, 1, 120) FROM cuda_images')]" "$OUT/$w.imgref.db"
    rm -f "$OUT/$w.imgref.db"
    timeout "$LIMIT" "$V" replay "$T/$w.vgt" --lane cuda --backend cuda --check --json >"$OUT/$w.imgref.cuda.json" 2>"$OUT/$w.imgref.cuda.err"; local lrc=$?
    echo "  replay --lane cuda --backend cuda --check: exit $lrc $(tail -2 "$OUT/$w.imgref.cuda.err" | tr '\n' ' ' | cut -c1-300)"
    timeout "$LIMIT" "$V" replay "$T/$w.vgt" --backend gpu --check --json >"$OUT/$w.imgref.gpu.json" 2>"$OUT/$w.imgref.gpu.err"; local grc=$?
    echo "  replay --backend gpu --check (lane 1): exit $grc $(tail -1 "$OUT/$w.imgref.gpu.err" | cut -c1-200)"
    [ $grc = 0 ] || fails=$((fails + 1))
    local refs=$(json_get "$OUT/$w.imgref.info.json" "'%d of %d (%d of %d bytes)' % (d['cuda']['ref_images'], d['cuda']['images'], d['cuda']['ref_image_bytes'], d['cuda']['image_bytes'])")
    local checks=$(json_get "$OUT/$w.imgref.cuda.json" "'%d passed, %d failed' % (d['checks']['passed'], d['checks']['failed'])")
    [ $lrc = 0 ] || fails=$((fails + 1))
    [ $vrc = 0 ] || fails=$((fails + 1))
    local small=yes
    [ "$size" -le $((2 * 1024 * 1024 + 512 * 1024)) ] || { small=NO; fails=$((fails + 1)); }
    echo
    printf '%-12s %-7s %-10s %-8s %-36s %-10s %-10s %s\n' workload result bytes "<=2.5MB" "referenced images" "verify" "cuda exit" checks
    printf '%-12s %-7s %-10s %-8s %-36s %-10s %-10s %s\n' "$w" "$same" "$size" "$small" "${refs:-?}" "$vrc" "$lrc" "${checks:-?}"
}

t0=$(date +%s)
case $mode in
run) run_gpget ;;
record) run_record ;;
imgref) run_imgref ;;
all) run_gpget; run_record ;;
*) echo "usage: gpget.sh build|run|record|imgref|all"; exit 2 ;;
esac
[ -x tests/gpu/health_check.sh ] || [ -f tests/gpu/health_check.sh ] && VGT_WORKLOADS=$root/$B bash tests/gpu/health_check.sh after
echo "gpget $mode: $fails failure(s) in $(( $(date +%s) - t0 )) s"
[ $fails = 0 ]
