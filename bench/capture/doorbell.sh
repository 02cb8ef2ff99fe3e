#!/usr/bin/env bash
# bench/capture/doorbell.sh [STORES]: one doorbell store under the capture, trapped against patched, on the
# CPU (no GPU needed): ns per store of each path and their ratio, measured in the same run
# (bench_doorbell.c says what is timed). Build first (cmake --build build).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${VGT_BUILD:-$repo/build}/bench/bench_doorbell
[ -x "$bin" ] || { echo "bench/capture/doorbell.sh: $bin is missing: build first" >&2; exit 2; }
"$bin" "${1:-200000}"
