#!/usr/bin/env bash
# bench/decode/run.sh: push-buffer decode-to-census throughput (GB/s, one core) and `vgt db` method rows
# per second, each beside a baseline measured in the same run.
#
#   1. `vgt synth --shape pushbuf --bytes SIZE`: a synthetic trace of SIZE bytes of records, about 80% of
#      them push buffer (the default 1300M gives more than 1 GiB of push buffer)
#   2. `bench_decode TRACE`: the push buffers loaded in memory, then (best of REPEAT) a plain pass that sums
#      their dwords (the ceiling) and the census pass (push-buffer decoder + per-class counts + semantic
#      tracker per channel): GB/s of push buffer and census/ceiling; goal census >= 1 GB/s
#      (and once with --per-method: every dword through the method callback, the path before bulk runs)
#   3. `vgt census TRACE --total`, end to end (reader, zstd, model, decode): GB/s, for reference
#   4. `vgt db` on the first DB_SUBMITS submissions of the same trace (--submits 0..N-1): method rows/s,
#      and the same window through `vgt census` as the baseline; goal db >= 1e6 rows/s
#   5. the ratios the performance goals name, each on a line of its own (best of REPEAT, wall time, not
#      pinned: the reader decompresses the next chunks on the other cores):
#        census_vs_zstd_d=R   `zstd -d` of the trace's chunk payloads (bench_chunks: the same zstd frames,
#                             concatenated) over `vgt census --total` end to end; goal >= 0.8
#        db_vs_baseline=R     bench_db_baseline (the same rows inserted into the same schema with prepared
#                             statements in one transaction, nothing else) over `vgt db` of the same
#                             window; goal >= 0.8
#   6. scaling: `vgt census --total` with VGT_READ_AHEAD=-1 (no workers), 1, 2, 4, 8 (fewer than the cores)
#      workers, each with its ratio to `zstd -d` (lines "workers=N census_s=S ratio_to_zstd_d=R")
#
# Figures are printed against wall time and against CPU time (user + sys): on a shared machine the CPU
# figures are the ones other load disturbs less.
#
# Environment: SIZE (default 1300M), DB_SUBMITS (default 1024, about 2 million methods), REPEAT (3),
# VGT_BUILD (build dir, default <repo>/build), WORK (scratch dir, default /tmp/vgt-bench-decode; needs about
# SIZE/4 plus the db), KEEP=1 keeps the files. Pinned to one core with taskset when available.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${VGT_BUILD:-$repo/build}
size=${SIZE:-1300M}
db_submits=${DB_SUBMITS:-1024}
repeat=${REPEAT:-3}
work=${WORK:-/tmp/vgt-bench-decode}
vgt=$build/bin/vgt
bench=$build/bench/bench_decode
chunks=$build/bench/bench_chunks
dbbase=$build/bench/bench_db_baseline
for b in "$vgt" "$bench" "$chunks" "$dbbase" "$(command -v zstd || echo zstd)"; do
    if [ ! -x "$b" ]; then echo "bench/decode: missing $b (build first)" >&2; exit 2; fi
done
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
mkdir -p "$work"
trap '[ "${KEEP:-0}" = 1 ] || rm -f "$work"/pb.vgt "$work"/pb.sqlite "$work"/chunks.zst "$work"/base.sqlite' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
# timed CMD...: run it, set wall and cpu (user + sys seconds); cpu is less disturbed by other load
timed() {
    local t
    t=$( { /usr/bin/time -f "%e %U %S" "$@" >/dev/null; } 2>&1 | tail -1 )
    wall=$(awk '{ print $1 }' <<<"$t")
    cpu=$(awk '{ print $2 + $3 }' <<<"$t")
}

echo "== setup: vgt synth --shape pushbuf --bytes $size"
[ -s "$work/pb.vgt" ] && [ "${KEEP:-0}" = 1 ] || "$vgt" synth -o "$work/pb.vgt" --shape pushbuf --bytes "$size" >/dev/null
cat "$work/pb.vgt" >/dev/null

echo "== bench_decode (in memory, best of $repeat)"
line=$("${pin[@]}" "$bench" "$work/pb.vgt" --repeat "$repeat")
echo "$line"
field() { sed -E "s/.*(^| )$1=([^ ]+).*/\\2/" <<<"$line"; }
bytes=$(field bytes)

echo "== bench_decode --per-method (every dword through the method callback: the path before bulk runs)"
pm=$("${pin[@]}" "$bench" "$work/pb.vgt" --repeat 1 --pass census --per-method)
echo "$pm"
pm_cpu=$(sed -E 's/.* census_cpu_gbps=([^ ]+).*/\1/' <<<"$pm")

echo "== vgt census --total (end to end)"
timed "${pin[@]}" "$vgt" census "$work/pb.vgt" --total
census_s=$wall census_cpu=$cpu

echo "== vgt db --submits 0..$((db_submits - 1)) vs vgt census on the same window"
"$vgt" census "$work/pb.vgt" --total --submits "0..$((db_submits - 1))" >"$work/census_w.txt"
rows=$(grep -E "^total:" "$work/census_w.txt" | sed -E 's/.* ([0-9]+) methods.*/\1/')
timed "${pin[@]}" "$vgt" census "$work/pb.vgt" --total --submits "0..$((db_submits - 1))"
cw_s=$wall cw_cpu=$cpu
timed "${pin[@]}" "$vgt" db "$work/pb.vgt" -o "$work/pb.sqlite" --submits "0..$((db_submits - 1))" --quiet --no-fields
dbnf_s=$wall dbnf_cpu=$cpu
timed "${pin[@]}" "$vgt" db "$work/pb.vgt" -o "$work/pb.sqlite" --submits "0..$((db_submits - 1))" --quiet
db_s=$wall db_cpu=$cpu
dbsize=$(stat -c %s "$work/pb.sqlite")

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
gbps() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.3f", n / s / 1e9 }'; }
printf '\npush buffer: %s bytes (%.2f GiB), %s cores, load %s, pinned: %s\n' "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" "${pin[*]:-no}"
printf '%-38s %14s %20s\n' "" "wall" "cpu (user+sys)"
printf '%-38s %9s GB/s\n' "ceiling (sum dwords, in memory)" "$(field ceiling_gbps)"
printf '%-38s %9s GB/s %15s GB/s   ratio to ceiling %s; goal >= 1 GB/s\n' "census pass (decode+track, in memory)" \
    "$(field census_gbps)" "$(field census_cpu_gbps)" "$(field ratio)"
printf '%-38s %9s %20s GB/s\n' "census pass, per-method path" "" "$pm_cpu"
printf '%-38s %9s GB/s %15s GB/s\n' "vgt census end to end (zstd, model)" "$(gbps "$bytes" "$census_s")" \
    "$(gbps "$bytes" "$census_cpu")"
printf '%-38s %9s rows/s %13s rows/s  (%s rows; goal >= 1e6)\n' "vgt db" "$(rate "$rows" "$db_s")" \
    "$(rate "$rows" "$db_cpu")" "$rows"
printf '%-38s %9s rows/s %13s rows/s\n' "vgt db --no-fields" "$(rate "$rows" "$dbnf_s")" "$(rate "$rows" "$dbnf_cpu")"
printf '%-38s %9s rows/s %13s rows/s  (baseline: census of the same window)\n' "vgt census, same window" \
    "$(rate "$rows" "$cw_s")" "$(rate "$rows" "$cw_cpu")"
printf 'db file: %s bytes\n' "$dbsize"

echo
echo "== ratios (best of $repeat, wall time, all cores: $(nproc))"
"$chunks" "$work/pb.vgt" "$work/chunks.zst"
best() { printf '%s\n' "$@" | sort -g | head -1; }
zd_all=(); ce_all=(); db_all=(); base_all=()
for _ in $(seq "$repeat"); do
    timed zstd -q -d -c "$work/chunks.zst"; zd_all+=("$wall")
    timed "$vgt" census "$work/pb.vgt" --total; ce_all+=("$wall")
    timed "$vgt" db "$work/pb.vgt" -o "$work/pb.sqlite" --submits "0..$((db_submits - 1))" --quiet; db_all+=("$wall")
    b=$("$dbbase" "$work/pb.sqlite" "$work/base.sqlite"); base_all+=("$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$b")")
done
zd=$(best "${zd_all[@]}"); ce=$(best "${ce_all[@]}"); dbw=$(best "${db_all[@]}"); base=$(best "${base_all[@]}")
echo "zstd -d ${zd_all[*]} | vgt census ${ce_all[*]} | vgt db ${db_all[*]} | baseline inserts ${base_all[*]} (s)"
echo "census_vs_zstd_d=$(awk -v z="$zd" -v c="$ce" 'BEGIN { printf "%.2f", z / c }')"
echo "db_vs_baseline=$(awk -v b="$base" -v d="$dbw" 'BEGIN { printf "%.2f", b / d }')"

# 6. how census scales with the reader's workers (VGT_READ_AHEAD=N: N threads decompress and check chunks
#    ahead of the decoding thread; -1: none, the decoding thread reads alone), up to the cores there are
echo
echo "== scaling: vgt census --total with VGT_READ_AHEAD=N (best of $repeat, wall; zstd -d $zd s)"
for n in -1 1 2 4 8; do
    [ "$n" -lt "$(nproc)" ] || [ "$n" = 1 ] || [ "$n" = -1 ] || break
    all=()
    for _ in $(seq "$repeat"); do VGT_READ_AHEAD=$n timed "$vgt" census "$work/pb.vgt" --total; all+=("$wall"); done
    b=$(best "${all[@]}")
    echo "workers=$n census_s=$b ratio_to_zstd_d=$(awk -v z="$zd" -v c="$b" 'BEGIN { printf "%.2f", z / c }')"
done
