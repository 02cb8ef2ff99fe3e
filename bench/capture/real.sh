#!/usr/bin/env bash
# bench/capture/real.sh: the capture's cost on GPU-bound real programs (goal: at most 1.02x), on the GPU machine.
#
#   bench/capture/real.sh [RUNS] [OUTDIR]        from the repository root
#
# For each program (PROGRAMS, default: a PyTorch training step, a Triton program, the Vulkan renderer vk_scene,
# the GL program gl_egl), bench/capture/run.sh interleaves RUNS plain runs and RUNS runs under `vgt record`
# (default options) and prints the medians and their ratio; one summary line per program follows, then
# `capture_real_max_ratio=R` on a line of its own. The Python programs need $PY (default the GPU machine's
# PyTorch environment) and are skipped, and said so, without it.
# Needs the staged binaries (tests/gpu/all.sh build-bin): .carry/capture/bin/vgt and .carry/workloads/.
set -uo pipefail
RUNS=${1:-7}
OUT=${2:-/tmp/capture_real}
PY=${PY:-/opt/torch/.venv/bin/python}
V=${VGT:-.carry/capture/bin/vgt}
B=${WORKLOAD_DIR:-.carry/workloads}
PROGRAMS=${PROGRAMS:-"torch_small triton_small vk_scene gl_egl"}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$OUT/bin"

# run.sh times one executable without arguments: each program gets a wrapper that runs it from the repository
wrapper() {
    local w=$1 f=$OUT/bin/$1
    case $w in
    *_small) [ -x "$PY" ] || return 1; printf '#!/bin/sh\ncd %s && exec %s corpus/workloads/%s.py "$@"\n' "$repo" "$PY" "$w" >"$f" ;;
    vk_scene) printf '#!/bin/sh\nexec %s/%s %s/%s.png\n' "$(cd "$B" && pwd)" "$w" "$OUT" "$w" >"$f" ;;
    *) printf '#!/bin/sh\nexec %s/%s "$@"\n' "$(cd "$B" && pwd)" "$w" >"$f" ;;
    esac
    chmod +x "$f"
}

rows=() max=0
for w in $PROGRAMS; do
    if ! wrapper "$w"; then rows+=("$w skipped: no $PY"); continue; fi
    echo "== $w ($RUNS + $RUNS runs)"
    bash "$here/run.sh" "$V" "$OUT/bin/$w" "$RUNS" "$OUT/$w" | tee "$OUT/$w.txt" | tail -3
    line=$(grep -m1 '^options' "$OUT/$w.txt")
    ratio=$(sed -n 's/.*ratio \([0-9.]*\).*/\1/p' <<<"$line")
    line=${line#options \'\': }
    rows+=("$w ${line/goal <= 1.10/goal <= 1.02 for GPU-bound programs}")
    [ -n "$ratio" ] && max=$(awk -v a="$max" -v b="$ratio" 'BEGIN {print (b > a) ? b : a}')
    rm -f "$OUT/$w"/bench_*.vgt
done
echo
printf '%s\n' "${rows[@]}"
echo "capture_real_max_ratio=$max"
