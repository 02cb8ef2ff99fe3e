#!/usr/bin/env bash
# bench/lib/stage.sh DEST: what the GPU-machine benches carry there, built on a build machine from the
# repository root: statically linked `vgt` and the capture shim (DEST/bin/vgt, DEST/lib/libvgt-capture.so;
# the GPU machine lacks capstone, SQLite's headers and xxhash's), and the corpus workloads (DEST/workloads,
# corpus/workloads/build.sh: nvcc, the Vulkan and EGL link stubs). Sourced or run; exits 2 on a failure.
# A workload folder already built (WORKLOADS_FROM=DIR) is copied instead of rebuilt.
set -euo pipefail
dest=${1:?usage: bench/lib/stage.sh DEST}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bdir=${STAGE_BUILD:-build-static}
cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVGT_STATIC_DEPS=ON \
      -DCMAKE_C_STANDARD_LIBRARIES="-lm -lpthread -ldl" >/dev/null || exit 2
cmake --build "$bdir" -j"${JOBS:-2}" --target vgt vgt-capture >/dev/null || exit 2
mkdir -p "$dest/bin" "$dest/lib" "$dest/workloads"
cp "$bdir/bin/vgt" "$dest/bin/" && cp "$bdir/lib/libvgt-capture.so" "$dest/lib/" || exit 2
if [ -n "${WORKLOADS_FROM:-}" ]; then
    cp -a "$WORKLOADS_FROM"/. "$dest/workloads/" || exit 2
else
    corpus/workloads/build.sh "$dest/workloads" >/dev/null || exit 2
fi
echo "staged: $dest/bin/vgt $dest/lib/libvgt-capture.so $(ls "$dest/workloads" | tr '\n' ' ')"
