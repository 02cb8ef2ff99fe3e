#!/usr/bin/env bash
# bench/format/cas.sh [SUBMITS]: trace bytes per submission of a PyTorch-style and a Triton-style workload
# (`vgt synth --shape torch|triton`: tensors staged again and again through pinned buffers, kernel
# binaries uploaded again, parameter blocks changing in a few words, small fresh inputs), written without
# and with MEMORY_CAS (`--memory-cas`, format 1.3), and the check that both replay alike on sim
# (`vgt replay --backend sim --check`, output compared without its timing line).
#
# Prints per shape: bytes/submission without, with, and `cas_ratio_<shape>=R` (with / without; goal <= 0.5).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
vgt=${VGT_BUILD:-$repo/build}/bin/vgt
n=${1:-2000}
[ -x "$vgt" ] || { echo "bench/format/cas.sh: $vgt is missing: build first" >&2; exit 2; }
tmp=$(mktemp -d /tmp/vgt-bench-cas.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for shape in torch triton; do
    "$vgt" synth -o "$tmp/plain.vgt" --shape "$shape" --submits "$n" >/dev/null
    "$vgt" synth -o "$tmp/cas.vgt" --shape "$shape" --submits "$n" --memory-cas >/dev/null
    a=$(stat -c %s "$tmp/plain.vgt") b=$(stat -c %s "$tmp/cas.vgt")
    "$vgt" replay "$tmp/plain.vgt" --backend sim --check 2>&1 | grep -v "timing:" | sed "s|$tmp/plain.vgt|TRACE|g" >"$tmp/r1"
    "$vgt" replay "$tmp/cas.vgt" --backend sim --check 2>&1 | grep -v "timing:" | sed "s|$tmp/cas.vgt|TRACE|g" >"$tmp/r2"
    same=$(cmp -s "$tmp/r1" "$tmp/r2" && echo same || echo DIFFERENT)
    printf '%-7s %d submissions: %8.0f bytes/submission plain, %8.0f with MEMORY_CAS; replay on sim: %s\n' "$shape" "$n" \
        "$(awk -v a="$a" -v n="$n" 'BEGIN { print a / n }')" "$(awk -v b="$b" -v n="$n" 'BEGIN { print b / n }')" "$same"
    echo "cas_ratio_$shape=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
done
