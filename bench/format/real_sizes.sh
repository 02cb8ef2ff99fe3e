#!/usr/bin/env bash
# bench/format/real_sizes.sh build|run: trace bytes per submission of real programs recorded with and
# without MEMORY_CAS (format 1.3), and the check that both forms replay alike.
#
#   build   on a build machine, from the repository root: stages a statically linked vgt and capture shim
#           in .carry/capture (tests/gpu/all.sh build-bin; STAGE=DIR for another)
#   run     on the GPU machine, from the repository root (about 1 minute; PY, default
#           /opt/torch/.venv/bin/python, with PyTorch and Triton): records corpus/workloads/torch_small.py and
#           triton_small.py with `vgt record` in the default memory mode, once as it writes by default
#           (MEMORY_CAS on) and once with `--no-memory-cas`; replays each on sim with --check and compares the
#           two replays: both must pass their checks (exit 0, "result: ok", no failed check; "identical" when
#           the summaries agree line for line, the timing line left out). Writes the logs and the
#           table under $OUT (default /tmp/vgt-real-sizes) and prints, per workload: submissions, bytes,
#           bytes/submission of each form, `cas_ratio_real_<workload>=R` (with / without; goal <= 0.5) and
#           whether the replays agree. Exit 1 when a recording or a replay fails or a check fails.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
stage=${STAGE:-.carry/capture}
case "${1:-}" in
build) exec bash tests/gpu/all.sh build-bin ;;
run) ;;
*) echo "usage: bench/format/real_sizes.sh build|run" >&2; exit 2 ;;
esac
V=$stage/bin/vgt
PY=${PY:-/opt/torch/.venv/bin/python}
OUT=${OUT:-/tmp/vgt-real-sizes}
mkdir -p "$OUT"
[ -x "$V" ] || { echo "real_sizes: $V missing (run build first)" >&2; exit 2; }
[ -x "$PY" ] || { echo "real_sizes: no Python at $PY (PY=)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/vgt-real-sizes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bad=0
table=$OUT/real_sizes.txt
printf '%-13s %6s %11s %11s %9s %9s %7s %s\n' workload subs bytes_plain bytes_cas B/sub_pl B/sub_cas ratio replays | tee "$table"
for w in ${SIZE_WORKLOADS:-torch_small triton_small}; do
    declare -A bytes=() subs=()
    for mode in cas plain; do
        opt=(); [ $mode = plain ] && opt=(--no-memory-cas)
        t=$tmp/$w.$mode.vgt
        if ! timeout 60 "$V" record -o "$t" "${opt[@]}" -- "$PY" "${WORKLOAD_DIR:-corpus/workloads}/$w.py" >"$OUT/$w.$mode.record.log" 2>&1; then
            echo "real_sizes: recording $w ($mode) failed: $(tail -1 "$OUT/$w.$mode.record.log")"; bad=1; continue 2
        fi
        bytes[$mode]=$(stat -c %s "$t")
        subs[$mode]=$("$V" info "$t" | awk '/^submissions:/ { print $2 }')
        "$V" info "$t" >"$OUT/$w.$mode.info.txt" 2>&1
        timeout 30 "$V" replay "$t" --backend sim --check >"$tmp/r.$mode" 2>&1
        echo "exit $?" >>"$tmp/r.$mode"
        grep -v "timing" "$tmp/r.$mode" | sed "s|$t|TRACE|g" >"$OUT/$w.$mode.replay.txt"
    done
    # Two recordings of a program may differ (another run, another JIT cache state): both replays must pass
    # their checks (exit 0, "result: ok", no failed check); "identical" when the whole summaries also agree.
    same=agree
    for mode in cas plain; do
        f=$OUT/$w.$mode.replay.txt
        grep -q "^exit 0" "$f" && grep -q "^result: ok" "$f" && grep -qE "checks: [0-9]+ passed, 0 failed" "$f" ||
            same="DIFFERENT ($mode: $(grep -E '^result:' "$f" | head -1))"
    done
    [ "$same" = agree ] && cmp -s "$OUT/$w.cas.replay.txt" "$OUT/$w.plain.replay.txt" && same="agree, identical"
    case $same in agree*) ;; *) bad=1 ;; esac
    bp=$(awk -v b="${bytes[plain]}" -v s="${subs[plain]}" 'BEGIN { printf "%.0f", s ? b / s : 0 }')
    bc=$(awk -v b="${bytes[cas]}" -v s="${subs[cas]}" 'BEGIN { printf "%.0f", s ? b / s : 0 }')
    r=$(awk -v p="$bp" -v c="$bc" 'BEGIN { printf "%.3f", p ? c / p : 0 }')
    printf '%-13s %6s %11s %11s %9s %9s %7s %s\n' "$w" "${subs[cas]}/${subs[plain]}" "${bytes[plain]}" "${bytes[cas]}" \
        "$bp" "$bc" "$r" "$same" | tee -a "$table"
    echo "cas_ratio_real_$w=$r" | tee -a "$table"
    # traces of at most 1 MB come back for a look
    for mode in cas plain; do
        [ "$(stat -c %s "$tmp/$w.$mode.vgt")" -le 1000000 ] && cp "$tmp/$w.$mode.vgt" "$OUT/"
    done
done
exit $bad
