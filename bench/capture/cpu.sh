#!/usr/bin/env bash
# bench/capture/cpu.sh: the write-tracking variants on the CPU (no GPU), synthetic many_launches pattern.
#
#   bench/capture/cpu.sh [BUILD_DIR] [LAUNCHES]
#
# Builds bench/capture/cpu/bench_memtrack.c against BUILD_DIR's libraries (default $VGT_BUILD or
# build) and runs it: per variant, ns and overhead per launch against the untracked baseline measured
# in the same run, and faults / pages read / records / bytes per launch (see the source's comment for
# how to turn the counts into an estimate for the GPU machine).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-${VGT_BUILD:-$ROOT/build}}
N=${2:-10000}
BIN=$(mktemp -d)/bench_memtrack
cc -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-unused-function \
   -I"$ROOT/capture/include" -I"$ROOT/capture/src" -I"$ROOT/trace-format/include" \
   "$ROOT/bench/capture/cpu/bench_memtrack.c" -o "$BIN" \
   "$B/lib/libvgt_capture_embed.a" "$B/lib/libvgt_capture_trap.a" "$B/lib/libvgt_format.a" \
   -lzstd -lxxhash -lcapstone -lpthread -ldl -lm
"$BIN" "$N"
