#!/usr/bin/env bash
# bench/decode/run.sh: push-buffer decode-to-census throughput (GB/s, one core) and `vgt db` method rows
# per second, each beside a baseline measured in the same run.
#
#   1. `vgt synth --shape pushbuf --bytes SIZE`: a synthetic trace of SIZE bytes of push buffer
#   2. `bench_decode TRACE`: the push buffers loaded in memory, then (best of REPEAT) a plain pass that sums
#      their dwords (the ceiling) and the census pass (push-buffer decoder + per-class counts + semantic
#      tracker per channel): GB/s of push buffer and census/ceiling; goal census >= 1 GB/s
#   3. `vgt census TRACE --total`, end to end (reader, zstd, model, decode): GB/s, for reference
#   4. `vgt db` on the first DB_SUBMITS submissions of the same trace (--submit 0..N-1): method rows/s,
#      and the same window through `vgt census` as the baseline; goal db >= 1e6 rows/s
#
# Environment: SIZE (default 1G), DB_SUBMITS (default 64), REPEAT (3), VGT_BUILD (build dir, default
# <repo>/build), WORK (scratch dir, default /tmp/vgt-bench-decode; needs about SIZE/4 plus the db), KEEP=1
# keeps the files. Pinned to one core with taskset when available.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${VGT_BUILD:-$repo/build}
size=${SIZE:-1G}
db_submits=${DB_SUBMITS:-64}
repeat=${REPEAT:-3}
work=${WORK:-/tmp/vgt-bench-decode}
vgt=$build/bin/vgt
bench=$build/bench/bench_decode
for b in "$vgt" "$bench"; do
    if [ ! -x "$b" ]; then echo "bench/decode: missing $b (build first)" >&2; exit 2; fi
done
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
mkdir -p "$work"
trap '[ "${KEEP:-0}" = 1 ] || rm -f "$work"/pb.vgt "$work"/pb.sqlite' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }

echo "== setup: vgt synth --shape pushbuf --bytes $size"
[ -s "$work/pb.vgt" ] && [ "${KEEP:-0}" = 1 ] || "$vgt" synth -o "$work/pb.vgt" --shape pushbuf --bytes "$size" >/dev/null
cat "$work/pb.vgt" >/dev/null

echo "== bench_decode (in memory, best of $repeat)"
line=$("${pin[@]}" "$bench" "$work/pb.vgt" --repeat "$repeat")
echo "$line"
field() { sed -E "s/.*(^| )$1=([^ ]+).*/\\2/" <<<"$line"; }
bytes=$(field bytes)

echo "== vgt census --total (end to end)"
t0=$(now); "${pin[@]}" "$vgt" census "$work/pb.vgt" --total >"$work/census.txt"; t1=$(now)
census_s=$(secs "$t0" "$t1")

echo "== vgt db --submit 0..$((db_submits - 1)) vs vgt census on the same window"
t0=$(now); "${pin[@]}" "$vgt" census "$work/pb.vgt" --total --submit "0..$((db_submits - 1))" >"$work/census_w.txt"; t1=$(now)
cw_s=$(secs "$t0" "$t1")
rm -f "$work/pb.sqlite"
t0=$(now); "${pin[@]}" "$vgt" db "$work/pb.vgt" -o "$work/pb.sqlite" --submit "0..$((db_submits - 1))" --quiet; t1=$(now)
db_s=$(secs "$t0" "$t1")
rows=$(grep -E "^total:" "$work/census_w.txt" | sed -E 's/.* ([0-9]+) methods.*/\1/')
t0=$(now); "${pin[@]}" "$vgt" db "$work/pb.vgt" -o "$work/pb.sqlite" --submit "0..$((db_submits - 1))" --quiet --no-fields; t1=$(now)
dbnf_s=$(secs "$t0" "$t1")
dbsize=$(stat -c %s "$work/pb.sqlite")

printf '\npush buffer: %s bytes (%.2f GiB), %s cores, pinned: %s\n' "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$(nproc)" "${pin[*]:-no}"
printf '%-40s %12s\n' "ceiling (sum dwords, in memory)" "$(field ceiling_gbps) GB/s"
printf '%-40s %12s   ratio to ceiling %s   goal >= 1 GB/s\n' "census pass (decode+track, in memory)" \
    "$(field census_gbps) GB/s" "$(field ratio)"
printf '%-40s %12s\n' "vgt census end to end (zstd, model)" \
    "$(awk -v b="$bytes" -v s="$census_s" 'BEGIN { printf "%.3f GB/s", b / s / 1e9 }')"
printf '%-40s %12s rows in %.2fs = %s rows/s   goal >= 1e6\n' "vgt db (fields text)" "$rows" "$db_s" \
    "$(awk -v r="$rows" -v s="$db_s" 'BEGIN { printf "%.0f", r / s }')"
printf '%-40s %12s rows in %.2fs = %s rows/s\n' "vgt db --no-fields" "$rows" "$dbnf_s" \
    "$(awk -v r="$rows" -v s="$dbnf_s" 'BEGIN { printf "%.0f", r / s }')"
printf '%-40s %12s rows in %.2fs = %s rows/s (baseline; db/census time %.2f)\n' "vgt census, same window" "$rows" \
    "$cw_s" "$(awk -v r="$rows" -v s="$cw_s" 'BEGIN { printf "%.0f", r / s }')" \
    "$(awk -v a="$db_s" -v b="$cw_s" 'BEGIN { print a / b }')"
printf 'db file: %s bytes\n' "$dbsize"
