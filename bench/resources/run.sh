#!/bin/bash
# bench/resources/run.sh [SIZE_A [SIZE_B [VGT]]]: bounded resources. Every verb streams: its peak RSS stays
# under a bound that does not grow with the trace, and its time grows linearly with the trace's size.
# Writes two synthetic traces (`vgt synth --bytes SIZE_A`, then SIZE_B; defaults 1G and 2G: records of
# push buffers and memory pages, zstd level 1), runs each verb on both, and prints per verb: seconds and
# peak RSS (MiB) at each size, the time ratio B/A (linear: about B/A) and the RSS ratio (bounded: about 1),
# and whether the peak RSS is under RSS_BOUND_MB (default 1024). Not a timed test: figures vary with the
# machine; quote them with the command line. Needs GNU time (/usr/bin/time) and 2 x (A + B) of free disk
# under $TMPDIR (default /tmp); say 10G 20G for the ten-gigabyte point when disk and time allow.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
a=${1:-1G}
b=${2:-2G}
vgt=${3:-$root/build/bin/vgt}
bound=${RSS_BOUND_MB:-1024}
dir=$(mktemp -d "${TMPDIR:-/tmp}/vgt-resources.XXXXXX")
trap 'rm -rf "$dir"' EXIT
[ -x /usr/bin/time ] || { echo "resources: needs GNU time at /usr/bin/time"; exit 2; }

for s in "$a" "$b"; do
    "$vgt" synth -o "$dir/t$s.vgt" --shape pushbuf --bytes "$s" --level 1 --channels 4 >/dev/null || exit 2
done

# verb name, then its arguments with T for the trace and O for an output beside it
verbs=(
    "info|info T"
    "verify|verify T"
    "dump|dump T"
    "decode|decode T"
    "census|census T --total"
    "mme|mme T"
    "draws|draws T"
    "launches|launches T"
    "db|db T -o O.db --no-macros"
    "slice|slice T O.vgt --submits 1.."
    "repack|repack T O.vgt --level 1"
    "replay-sim|replay T --backend sim"
)
measure() {   # verb args... -> "seconds rss_mib"
    /usr/bin/time -f "%e %M" -o "$dir/time" "$vgt" "$@" >/dev/null 2>"$dir/err" || true
    awk '{printf "%s %d", $1, $2 / 1024}' "$dir/time"
}
printf "%-11s %9s %9s %9s %9s %7s %7s %s\n" verb "s@$a" "s@$b" "MiB@$a" "MiB@$b" "t-ratio" "rss-rat" "bound"
over=0
for v in "${verbs[@]}"; do
    name=${v%%|*}
    res=()
    for s in "$a" "$b"; do
        args=${v#*|}
        args=${args//T/$dir/t$s.vgt}
        args=${args//O/$dir/out$s}
        # shellcheck disable=SC2086
        res+=($(measure $args))
        rm -f "$dir"/out*
    done
    ta=${res[0]} ra=${res[1]} tb=${res[2]} rb=${res[3]}
    tr=$(awk -v x="$ta" -v y="$tb" 'BEGIN {printf "%.2f", (x > 0 ? y / x : 0)}')
    rr=$(awk -v x="$ra" -v y="$rb" 'BEGIN {printf "%.2f", (x > 0 ? y / x : 0)}')
    ok=$([ "$ra" -le "$bound" ] && [ "$rb" -le "$bound" ] && echo "ok" || echo "OVER")
    [ "$ok" = ok ] || over=1
    printf "%-11s %9s %9s %9s %9s %7s %7s %s\n" "$name" "$ta" "$tb" "$ra" "$rb" "$tr" "$rr" "$ok (<= $bound MiB)"
done
sizes=$(stat -c %s "$dir/t$a.vgt" "$dir/t$b.vgt" | tr '\n' ' ')
echo "trace files: $sizes bytes (records $a and $b before compression)"
exit $over
