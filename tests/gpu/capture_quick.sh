#!/usr/bin/env bash
# tests/gpu/capture_quick.sh: a short check of the capture's cost on the GPU machine (from the repository
# root, binaries staged in .carry/ as for capture_corpus.sh): many_launches and vadd with
# VGT_CAPTURE_STATS=1 under each memory mode, wall time of each.
set -uo pipefail
OUT=${OUT:-/tmp/capture_out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/quick_log.txt") 2>&1
V=.carry/capture/bin/vgt; B=.carry/workloads
now() { echo "${EPOCHREALTIME/./}"; }
for w in ${WORKLOADS:-many_launches vadd}; do
    t0=$(now); "$B/$w" >/dev/null; t1=$(now); echo "PLAIN $w $(( (t1 - t0) / 1000 )) ms"
    for opts in ${MODES_LIST:-"--memory=none" "--memory=changed"}; do
        t0=$(now)
        VGT_CAPTURE_STATS=1 timeout 60 "$V" record -o "/tmp/q_$w.vgt" $opts -- "$B/$w" >/tmp/q.out 2>/tmp/q.err
        rc=$?; t1=$(now)
        echo "CAP $w $opts rc=$rc $(( (t1 - t0) / 1000 )) ms size=$(stat -c %s /tmp/q_$w.vgt) $(grep -h ^RESULT /tmp/q.out)"
        grep -o 'submits=.*' /tmp/q.err | head -1
        grep -v 'stats pid' /tmp/q.err | head -5
    done
done
