#!/bin/sh
# bench/replay/run.sh [SIZE]: replay throughput through the sim backend on a large synthetic trace,
# against a plain decode pass over the same trace measured in the same run.
#
#   SIZE   bytes of records for `vgt synth --shape pushbuf --bytes SIZE` (default 256M)
#   env    VGT_BUILD (default <repo>/build), PASSES (default 3; the fastest pass counts), KEEP=1 keeps the trace
#
# Prints submissions/s and push-buffer MB/s for: read (reader only), decode (reader + push-buffer
# decoder, one callback per method: the baseline), bulk (the decoder with non-increasing runs in one
# callback, as census and the sim take them), replay (reader + model + sim), check (replay with --check),
# the time of each against decode, and on lines of their own sim_vs_decode=R (decode seconds over replay
# seconds, i.e. replay throughput as a fraction of decode's; goal >= 0.5) and sim_vs_decode_bulk=R
# (the same against the bulk decode).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${VGT_BUILD:-$repo/build}
size=${1:-256M}
passes=${PASSES:-3}
vgt=$build/bin/vgt
drv=$build/bench/bench_replay
for f in "$vgt" "$drv"; do
    [ -x "$f" ] || { echo "run.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/vgt-bench-replay.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
trace=$tmp/pushbuf.vgt
"$vgt" synth -o "$trace" --shape pushbuf --bytes "$size" --seed 1 >/dev/null
echo "trace: vgt synth --shape pushbuf --bytes $size ($(stat -c %s "$trace") bytes on disk); $passes passes, fastest kept"
"$drv" "$trace" --passes "$passes" | awk '
    { mode[NR] = $1; sec[NR] = $2; sub_[NR] = $3; pb[NR] = $4; m[NR] = $5; if ($1 == "decode") base = $2
      if ($1 == "bulk") bulk = $2; if ($1 == "replay") rep = $2 }
    END {
        printf "%-7s %9s %12s %12s %14s %14s\n", "mode", "seconds", "submits/s", "pushbuf MB/s", "methods/s", "time vs decode"
        for (i = 1; i <= NR; i++) {
            mbs = pb[i] > 0 ? sprintf("%.1f", pb[i] / sec[i] / 1e6) : "-"
            mps = m[i] > 0 ? sprintf("%.0f", m[i] / sec[i]) : "-"
            printf "%-7s %9.3f %12.0f %12s %14s %13.2fx\n", mode[i], sec[i], sub_[i] / sec[i], mbs, mps, sec[i] / base
        }
        printf "sim_vs_decode=%.2f\n", base / rep
        printf "sim_vs_decode_bulk=%.2f\n", bulk / rep
    }'
