#!/bin/bash
# bench/resources/run.sh [SIZE_A [SIZE_B [VGT]]]: bounded resources. Every verb streams: its peak RSS stays
# under a bound that does not grow with the trace, and its time grows linearly with the trace's size.
# Writes two synthetic traces (`vgt synth --bytes SIZE_A`, then SIZE_B; defaults 1G and 2G: records of
# push buffers and memory pages, zstd level 1), runs each verb on both, and prints per verb: wall seconds,
# CPU seconds (user + sys: what other load on a shared machine disturbs less) and peak RSS (MiB) at each
# size, the CPU-time ratio B/A (linear: about B/A) and the RSS ratio (bounded: about 1), the verb's exit
# status at each size, and whether the peak RSS is under RSS_BOUND_MB (default 1024). Not a timed test: figures vary with the
# machine; quote them with the command line. Needs GNU time (/usr/bin/time) and 2 x (A + B) of free disk
# under $TMPDIR (default /tmp); say 10G 20G for the ten-gigabyte point when disk and time allow.
# VERBS="info census ..." runs only those verbs (names as in the first column). `vgt db` writes about six
# times the records' size of SQLite (6.5 GB for 1G): leave it out of the ten-gigabyte point unless the
# disk has room for it.
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
measure() {   # verb args... -> "wall_s cpu_s rss_mib exit"
    /usr/bin/time -f "%e %U %S %M %x" -o "$dir/time" "$vgt" "$@" >/dev/null 2>"$dir/err" || true
    tail -1 "$dir/time" | awk '{printf "%s %.2f %d %s", $1, $2 + $3, $4 / 1024, $5}'
}
printf "%-11s %8s %8s %8s %8s %7s %7s %7s %7s %5s %s\n" verb "s@$a" "s@$b" "cpu@$a" "cpu@$b" "MiB@$a" "MiB@$b" \
    "cpu-rat" "rss-rat" "exit" "bound"
over=0
for v in "${verbs[@]}"; do
    name=${v%%|*}
    if [ -n "${VERBS:-}" ] && ! grep -qw -- "$name" <<<"$VERBS"; then continue; fi
    res=()
    for s in "$a" "$b"; do
        args=${v#*|}
        args=${args//T/$dir/t$s.vgt}
        args=${args//O/$dir/out$s}
        # shellcheck disable=SC2086
        res+=($(measure $args))
        rm -f "$dir"/out*
    done
    ta=${res[0]} ca=${res[1]} ra=${res[2]} xa=${res[3]} tb=${res[4]} cb=${res[5]} rb=${res[6]} xb=${res[7]}
    cr=$(awk -v x="$ca" -v y="$cb" 'BEGIN {printf "%.2f", (x > 0 ? y / x : 0)}')
    rr=$(awk -v x="$ra" -v y="$rb" 'BEGIN {printf "%.2f", (x > 0 ? y / x : 0)}')
    ok=$([ "$ra" -le "$bound" ] && [ "$rb" -le "$bound" ] && echo "ok" || echo "OVER")
    [ "$ok" = ok ] || over=1
    printf "%-11s %8s %8s %8s %8s %7s %7s %7s %7s %5s %s\n" "$name" "$ta" "$tb" "$ca" "$cb" "$ra" "$rb" "$cr" "$rr" \
        "$xa/$xb" "$ok (<= $bound MiB)"
done
sizes=$(stat -c %s "$dir/t$a.vgt" "$dir/t$b.vgt" | tr '\n' ' ')
echo "trace files: $sizes bytes (records $a and $b before compression)"
exit $over
