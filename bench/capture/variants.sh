#!/usr/bin/env bash
# bench/capture/variants.sh: the capture's write-tracking trade-offs measured in one run on the GPU machine.
#
#   bench/capture/variants.sh VGT WORKLOAD [RUNS] [OUTDIR]
#
# Runs bench/capture/run.sh (medians of RUNS interleaved plain and captured runs, ratio, trace bytes per
# submission) once per variant below, then prints one summary line per variant. A variant is a set of
# `vgt record` options and VGT_CAPTURE_* tunables (capture/src/shim_memtrack.c):
#   none         --memory=none: the doorbell path and the records alone (doorbell sites patched)
#   none_trap    --memory=none with VGT_CAPTURE_PATCH=0: one trap per doorbell (the floor before patching)
#   default      --memory=changed, hot pages 32 (quiet 4), no read-ahead, doorbell sites patched
#   trap         default with VGT_CAPTURE_PATCH=0 (every doorbell trapped)
#   ahead2/4     + read-ahead of 2 / 4 pages after a fault on a page whose predecessor is dirty
#   nohot        hot pages off: every dirty page faults and is re-protected at every submission
#   quiet1       hot pages protected again after 1 quiet submission (fewer reads of quiet pages)
# Each line: variant, median plain us, median captured us, ratio (goal <= 1.10), bytes/submission,
# and the shim's own time split (VGT_CAPTURE_STATS) of the first captured run.
set -uo pipefail
VGT=${1:?usage: variants.sh VGT WORKLOAD [RUNS] [OUTDIR]}
WL=${2:?usage: variants.sh VGT WORKLOAD [RUNS] [OUTDIR]}
RUNS=${3:-5}
OUT=${4:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
VARIANTS=${VARIANTS:-"none none_trap default trap ahead2 ahead4 nohot quiet1"}
summary=()
for v in $VARIANTS; do
    opts="" env=()
    case $v in
        none) opts=--memory=none ;;
        none_trap) opts=--memory=none env=(VGT_CAPTURE_PATCH=0) ;;
        default) ;;
        trap) env=(VGT_CAPTURE_PATCH=0) ;;
        ahead2) env=(VGT_CAPTURE_READAHEAD=2) ;;
        ahead4) env=(VGT_CAPTURE_READAHEAD=4) ;;
        nohot) env=(VGT_CAPTURE_HOT_PAGES=0) ;;
        quiet1) env=(VGT_CAPTURE_HOT_QUIET=1) ;;
        *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    echo "== variant $v: options '$opts' ${env[*]}"
    line=$(env "${env[@]}" REC_OPTS="$opts" bash "$HERE/run.sh" "$VGT" "$WL" "$RUNS" "$OUT/$v" | tee /dev/stderr | tail -3 | tr '\n' ' ')
    summary+=("$v: $line")
done
echo "== summary ($(basename "$WL"), $RUNS + $RUNS runs each)"
printf '%s\n' "${summary[@]}"
