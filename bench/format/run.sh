#!/usr/bin/env bash
# bench/format/run.sh: trace writer and reader throughput against the `zstd` command, same bytes, same
# level, same run.
#
#   1. `vgt synth --shape pushbuf --bytes SIZE`: a synthetic trace of push buffers and memory pages
#   2. `bench_format raw`: its uncompressed record stream, RAW (the bytes chunks hold)
#   3. baseline: `zstd -LEVEL -T THREADS RAW` and `zstd -d` of the result (both from the page cache)
#   4. `bench_format write RAW` (writer, same level, THREADS zstd workers) and `bench_format read`
#   5. MB/s (10^6 bytes of records per second) and ratios to zstd; goal: both >= 0.9
#
# Environment: SIZE (default 1G), LEVEL (3), THREADS (nproc), CHUNK (writer chunk target, default the
# library's), VGT_BUILD (build dir, default <repo>/build), WORK (scratch dir, default /tmp/vgt-bench-format;
# needs about 2.5x SIZE of disk), KEEP=1 keeps the files.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${VGT_BUILD:-$repo/build}
size=${SIZE:-1G}
level=${LEVEL:-3}
threads=${THREADS:-$(nproc)}
work=${WORK:-/tmp/vgt-bench-format}
vgt=$build/bin/vgt
bench=$build/bench/bench_format
for b in "$vgt" "$bench" "$(command -v zstd || true)"; do
    if [ -z "$b" ] || [ ! -x "$b" ]; then
        echo "bench/format: missing ${b:-zstd} (build first; apt-get install zstd)" >&2
        exit 2
    fi
done
mkdir -p "$work"
trap '[ "${KEEP:-0}" = 1 ] || rm -f "$work"/src.vgt "$work"/raw.bin "$work"/raw.zst "$work"/out.vgt' EXIT

now() { date +%s.%N; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }

echo "== setup: vgt synth --shape pushbuf --bytes $size (level 1)"
"$vgt" synth -o "$work/src.vgt" --shape pushbuf --bytes "$size" --level 1 --threads "$threads" >/dev/null
"$bench" raw "$work/src.vgt" "$work/raw.bin"
bytes=$(stat -c %s "$work/raw.bin")
cat "$work/raw.bin" >/dev/null   # page cache warm for everyone

echo "== zstd -$level -T$threads (baseline)"
t0=$(now); zstd -q -f "-$level" "-T$threads" "$work/raw.bin" -o "$work/raw.zst"; t1=$(now)
zc=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
t0=$(now); zstd -q -d -f "$work/raw.zst" -o /dev/null; t1=$(now)
zd=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
zsize=$(stat -c %s "$work/raw.zst")

echo "== vgt writer and reader"
wargs=(--level "$level" --threads "$threads")
[ -n "${CHUNK:-}" ] && wargs+=(--chunk-size "$CHUNK")
wline=$("$bench" write "$work/raw.bin" "$work/out.vgt" "${wargs[@]}")
rline=$("$bench" read "$work/out.vgt")
ws=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$wline")
rs=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$rline")
vsize=$(stat -c %s "$work/out.vgt")

printf '\nrecords: %s bytes (%.2f GiB); level %s; %s threads; %s cores\n' "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$level" "$threads" "$(nproc)"
printf '%-22s %10s %10s %12s\n' "" "seconds" "MB/s" "output"
printf '%-22s %10.3f %10s %12s\n' "zstd -$level -T$threads" "$zc" "$(mbps "$bytes" "$zc")" "$zsize"
printf '%-22s %10.3f %10s %12s\n' "vgt writer" "$ws" "$(mbps "$bytes" "$ws")" "$vsize"
printf '%-22s %10.3f %10s\n' "zstd -d" "$zd" "$(mbps "$bytes" "$zd")"
printf '%-22s %10.3f %10s\n' "vgt reader" "$rs" "$(mbps "$bytes" "$rs")"
wr=$(awk -v z="$zc" -v v="$ws" 'BEGIN { printf "%.2f", z / v }')
rr=$(awk -v z="$zd" -v v="$rs" 'BEGIN { printf "%.2f", z / v }')
echo
echo "writer/zstd   = ${wr}x  (goal >= 0.9x)"
echo "reader/zstd-d = ${rr}x  (goal >= 0.9x)"
