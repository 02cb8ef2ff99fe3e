#!/bin/bash
# gpu_selftest.sh: the hardware check of backend/gpu (CI has no GPU, so this is not a ctest).
#
#   tests/gpu/gpu_selftest.sh build [BUILD_DIR]
#       on the build machine: configure BUILD_DIR (default build-gpu) with -DVGT_STATIC_DEPS=ON, build the
#       libraries and link .carry/gpu/gpu_selftest (.carry/ is a git-ignored staging folder; a binary
#       built against an older glibc runs on a machine with a newer one). With the MME simulator in
#       libvgt_analyze.a the self-test also checks an MME macro against it.
#   tests/gpu/gpu_selftest.sh run [ARGS...]
#       on the GPU machine (the repository with its .carry/ folder): runs the binary with ARGS (default
#       -v), then prints the kernel log's NVRM/Xid lines. Exit status: the self-test's.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:-}
shift || true

build() {
    local bdir=${1:-$root/build-gpu}
    cmake -S "$root" -B "$bdir" -G Ninja -DVGT_STATIC_DEPS=ON >/dev/null || return 2
    cmake --build "$bdir" -j2 --target vgt_backend vgt_analyze vgt_format || return 2   # and the generated facts headers
    local lib=$bdir/lib
    local xxh zstd defs=()
    xxh=$(sed -n 's/^_lib_xxhash:FILEPATH=//p' "$bdir/CMakeCache.txt")
    zstd=$(sed -n 's/^_lib_zstd:FILEPATH=//p' "$bdir/CMakeCache.txt")
    if nm "$lib/libvgt_analyze.a" 2>/dev/null | grep -q ' T vgt_mme_sim_run$'; then
        defs+=(-DVGT_SELFTEST_MME)
    fi
    mkdir -p "$root/.carry/gpu"
    cc -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE "${defs[@]}" \
        -I"$root/backend/gpu" -I"$root/backend/include" -I"$root/analyze/include" -I"$root/trace-format/include" \
        -I"$bdir/trace-format/include" \
        -o "$root/.carry/gpu/gpu_selftest" "$root/tests/gpu/gpu_selftest.c" \
        "$lib/libvgt_backend.a" "$lib/libvgt_analyze.a" "$lib/libvgt_format.a" ${xxh:+"$xxh"} ${zstd:+"$zstd"} -lm \
        || return 2
    echo "built $root/.carry/gpu/gpu_selftest (${defs[*]:-without the MME check})"
}

run() {
    local bin=$root/.carry/gpu/gpu_selftest
    [ -x "$bin" ] || { echo "gpu_selftest.sh: $bin not built (run: $0 build)"; return 2; }
    [ $# -gt 0 ] || set -- -v
    "$bin" "$@"
    local rc=$?
    echo "--- kernel log: NVRM / Xid (last 20) ---"
    dmesg 2>/dev/null | grep -iE 'nvrm|xid' | tail -20
    echo "gpu_selftest exit code: $rc"
    return $rc
}

case "$mode" in
build) build "$@" ;;
run) run "$@" ;;
*) echo "usage: $0 build [BUILD_DIR] | run [ARGS...]"; exit 2 ;;
esac
