#!/bin/bash
# hostile.sh: hostile traces confined on the GPU. Run on the GPU machine (not a ctest: CI has no GPU).
#
#   tests/gpu/hostile.sh [VGT] [OUTDIR]
#
# Builds the suite (tests/gpu/hostile/make.py: wild addresses, illegal methods, huge counts, looping and
# illegal macros, QMDs with absurd grids or programs at unmapped VAs, GPFIFO entries into unmapped memory,
# a push buffer that overwrites itself, 100,000 channels), checks each on sim first, then replays each
# with `vgt replay --backend gpu --check` (never --force) and runs the health check
# (tests/gpu/health_check.sh: a stock Vulkan draw, a GL draw and a CUDA kernel, each by another process)
# after every case. Prints one table row per case:
#
#   case | expected | replay exit | what the replay said | health
#
# "refused" cases would raise an engine exception that leaves the H200 unable to finish other programs'
# Vulkan draws until reboot (backend/gpu/README.md, "Engine exceptions"): the replay must refuse them
# before submitting anything (a synthetic trace is refused at open, exit 2; the MME guard refuses an
# ILLEGAL_OPCODE call, "refused: N submissions"). The suite STOPS at the first refused case that was not
# refused, and never passes --force. "confined" cases reach the GPU: every fault must be reported with its
# submission and method window, every wait bounded (the replay ends within REPLAY_TIMEOUT, default 120 s),
# and the GPU must pass the health check afterwards.
# Exit status: 0 when every case behaved and every health check passed, 1 otherwise, 2 when nothing ran.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
vgt=${1:-$root/.carry/lane1/vgt}
[ -x "$vgt" ] || vgt=$root/build/bin/vgt
out=${2:-${OUT:-/tmp}/hostile}
limit=${REPLAY_TIMEOUT:-120}
mkdir -p "$out"
[ -x "$vgt" ] || { echo "hostile: no vgt at $vgt"; exit 2; }
# the suite made on the build machine (tests/gpu/all.sh build: .carry/hostile), or made here (needs the
# vgtrace package's Python modules: zstandard, xxhash)
suite=${HOSTILE_SUITE:-$root/.carry/hostile}
if [ -f "$suite/manifest.tsv" ]; then
    cp "$suite"/*.vgt "$suite/manifest.tsv" "$out"/ || exit 2
else
    python3 "$root/tests/gpu/hostile/make.py" "$out" || exit 2
fi

"$root/tests/gpu/health_check.sh" before || { echo "hostile: the GPU is not healthy before the suite; not run"; exit 2; }

printf '| %-20s | %-8s | %-4s | %-70s | %-6s |\n' case expected exit "what the replay said" health
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..22})" "----------" "------" "$(printf -- '-%.0s' {1..72})" "--------"
bad=0
while IFS=$'\t' read -r name expect what; do
    trace=$out/$name.vgt
    log=$out/$name.log
    # on sim first: the case is what it says (and a trace the tools cannot even read never reaches the GPU)
    timeout -k 5 "$limit" "$vgt" replay "$trace" --backend sim >"$log.sim" 2>&1
    timeout -k 5 "$limit" "$vgt" replay "$trace" --backend gpu --check >"$log" 2>&1
    rc=$?
    said=$(grep -m1 -E "refused|synthetic|fault|error|exception|timed out|never|not created" "$log" | sed 's/^ *//' | cut -c1-70)
    verdict=ok
    if [ "$expect" = refused ]; then
        if ! grep -qE "refused: [1-9]|synthetic" "$log"; then
            verdict=NOT-REFUSED
        fi
    else
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && verdict=UNBOUNDED
        if grep -qE "fault:|faults [1-9]" "$log" && ! grep -qE "submission [0-9]+ \(seq [0-9]+\)" "$log"; then verdict=NO-WINDOW; fi
    fi
    "$root/tests/gpu/health_check.sh" "$name" >"$log.health" 2>&1
    hrc=$?
    health=$([ $hrc -eq 0 ] && echo ok || echo FAILED)
    [ "$verdict" = ok ] && [ $hrc -eq 0 ] || bad=1
    printf '| %-20s | %-8s | %-4s | %-70s | %-6s |\n' "$name" "$expect" "$rc" "${said:-(nothing)} [$verdict]" "$health"
    if [ "$verdict" = NOT-REFUSED ]; then
        echo "hostile: $name was not refused; stopping before anything else reaches the GPU (see $log)"
        exit 1
    fi
    if [ $hrc -ne 0 ]; then
        echo "hostile: the GPU failed the health check after $name; stopping (see $log.health)"
        exit 1
    fi
done <"$out/manifest.tsv"
exit $bad
