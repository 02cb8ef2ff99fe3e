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
# Each measurement is repeated REPEAT times (default 3), interleaved, and the best time of each is kept:
# on a shared machine the best run is the one least disturbed by others.
#
# Environment: SIZE (default 1G), LEVEL (3), THREADS (nproc), REPEAT (3), CHUNK (writer chunk target,
# default the library's), VGT_BUILD (build dir, default <repo>/build), WORK (scratch dir, default a new
# /tmp/vgt-bench-format.XXXXXX; needs about 2.5x SIZE of disk), KEEP=1 keeps the files.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${VGT_BUILD:-$repo/build}
size=${SIZE:-1G}
level=${LEVEL:-3}
threads=${THREADS:-$(nproc)}
repeat=${REPEAT:-3}
work=${WORK:-$(mktemp -d /tmp/vgt-bench-format.XXXXXX)}   # private: runs by others must not collide
vgt=$build/bin/vgt
bench=$build/bench/bench_format
for b in "$vgt" "$bench" "$(command -v zstd || true)"; do
    if [ -z "$b" ] || [ ! -x "$b" ]; then
        echo "bench/format: missing ${b:-zstd} (build first; apt-get install zstd)" >&2
        exit 2
    fi
done
mkdir -p "$work"
trap '[ "${KEEP:-0}" = 1 ] || { rm -f "$work"/src.vgt "$work"/raw.bin "$work"/raw.zst "$work"/out.vgt; rmdir "$work" 2>/dev/null || true; }' EXIT

now() { date +%s.%N; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }

echo "== setup: vgt synth --shape pushbuf --bytes $size (level 1)"
"$vgt" synth -o "$work/src.vgt" --shape pushbuf --bytes "$size" --level 1 --threads "$threads" >/dev/null
"$bench" raw "$work/src.vgt" "$work/raw.bin"
bytes=$(stat -c %s "$work/raw.bin")
cat "$work/raw.bin" >/dev/null   # page cache warm for everyone

secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
best() { printf '%s\n' "$@" | sort -g | head -1; }
wargs=(--level "$level" --threads "$threads")
[ -n "${CHUNK:-}" ] && wargs+=(--chunk-size "$CHUNK")
zc_all=(); zd_all=(); ws_all=(); rs_all=()
echo "== $repeat rounds of: zstd -$level -T$threads, vgt writer, zstd -d, vgt reader (best of each is kept)"
for _ in $(seq "$repeat"); do
    t0=$(now); zstd -q -f "-$level" "-T$threads" "$work/raw.bin" -o "$work/raw.zst"; t1=$(now)
    zc_all+=("$(secs "$t0" "$t1")")
    wline=$("$bench" write "$work/raw.bin" "$work/out.vgt" "${wargs[@]}")
    ws_all+=("$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$wline")")
    t0=$(now); zstd -q -d -f "$work/raw.zst" -o /dev/null; t1=$(now)
    zd_all+=("$(secs "$t0" "$t1")")
    rline=$("$bench" read "$work/out.vgt")
    rs_all+=("$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$rline")")
done
zc=$(best "${zc_all[@]}"); ws=$(best "${ws_all[@]}"); zd=$(best "${zd_all[@]}"); rs=$(best "${rs_all[@]}")
zsize=$(stat -c %s "$work/raw.zst")
vsize=$(stat -c %s "$work/out.vgt")

printf '\nrecords: %s bytes (%.2f GiB); level %s; %s threads; %s cores\n' "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$level" "$threads" "$(nproc)"
printf '%-22s %10s %10s %12s\n' "" "seconds" "MB/s" "output"
printf '%-22s %10.3f %10s %12s\n' "zstd -$level -T$threads" "$zc" "$(mbps "$bytes" "$zc")" "$zsize"
printf '%-22s %10.3f %10s %12s\n' "vgt writer" "$ws" "$(mbps "$bytes" "$ws")" "$vsize"
printf '%-22s %10.3f %10s\n' "zstd -d" "$zd" "$(mbps "$bytes" "$zd")"
printf '%-22s %10.3f %10s\n' "vgt reader" "$rs" "$(mbps "$bytes" "$rs")"
echo "all runs (s): zstd ${zc_all[*]} | writer ${ws_all[*]} | zstd -d ${zd_all[*]} | reader ${rs_all[*]}"
wr=$(awk -v z="$zc" -v v="$ws" 'BEGIN { printf "%.2f", z / v }')
rr=$(awk -v z="$zd" -v v="$rs" 'BEGIN { printf "%.2f", z / v }')
echo
echo "writer/zstd   = ${wr}x  (goal >= 0.9x)"
echo "reader/zstd-d = ${rr}x  (goal >= 0.9x)"
