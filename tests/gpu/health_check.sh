#!/bin/bash
# health_check.sh: is the GPU still usable by everyone else? Run on the GPU machine after any hardware run.
#
#   tests/gpu/health_check.sh [LABEL]
#
# Runs three stock-driver programs as separate processes, each with its expected result: a Vulkan draw
# (vk_triangle), an OpenGL ES draw through EGL (gl_egl) and a CUDA kernel (vadd). Each must print the
# RESULT line recorded on the H200 (corpus/workloads/expected/results_h200.txt) within its time limit.
# The programs are the corpus workloads (corpus/workloads/build.sh), looked up in $VGT_WORKLOADS
# (default .carry/workloads). Prints one line per program and a verdict line
# "health[LABEL]: ok|FAILED (...)". Exit status 0 when all three pass, 1 when any fails, 2 when the
# programs are missing.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
label=${1:-}
bin=${VGT_WORKLOADS:-$root/.carry/workloads}
expected=$root/corpus/workloads/expected/results_h200.txt
limit=${HEALTH_TIMEOUT:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The Vulkan and EGL loaders: unpacked from .gl/*.deb when the machine lacks them (tests/gpu/README.md).
. "$root/tests/gpu/gl_env.sh" && gl_env "$root"

failed=()
for w in vk_triangle gl_egl vadd; do
    [ -x "$bin/$w" ] || { echo "health: $bin/$w missing (build with corpus/workloads/build.sh)"; exit 2; }
    args=()
    case $w in vk_triangle|gl_egl) args=("$tmp/$w.png") ;; esac
    t0=$(date +%s%N)
    timeout -k 5 "$limit" "$bin/$w" "${args[@]}" >"$tmp/$w.out" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    got=$(grep -m1 "^RESULT $w " "$tmp/$w.out")
    want=$(grep -m1 "^RESULT $w " "$expected")
    if [ $rc -eq 0 ] && [ -n "$got" ] && [ "$got" = "$want" ]; then
        echo "health${label:+[$label]} $w: ok ($ms ms) $got"
    else
        why="rc=$rc"
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="TIMEOUT after ${limit}s"
        [ $rc -eq 0 ] && why="result differs: ${got:-no RESULT line}"
        echo "health${label:+[$label]} $w: FAILED ($why, $ms ms); last output: $(tail -2 "$tmp/$w.out" | tr '\n' ' ' | cut -c1-300)"
        failed+=("$w")
    fi
done
if [ ${#failed[@]} -eq 0 ]; then
    echo "health${label:+[$label]}: ok (Vulkan draw, GL draw, CUDA kernel)"
    exit 0
fi
echo "health${label:+[$label]}: FAILED (${failed[*]})"
exit 1
