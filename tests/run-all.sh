#!/usr/bin/env bash
# tests/run-all.sh: set up, build, and run every test: C unit tests, pytest, bounded fuzzing, corpus check.
# Usage: bash tests/run-all.sh            (FUZZ_SECONDS=N to change the per-target fuzz time; 0 skips)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
echo "== C unit tests (ctest)"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== CLI and format tests (pytest)"
VGT_BUILD="$PWD/build" python3 -m pytest -q tests/py
if [ -d corpus ] && ls corpus/*.vgt >/dev/null 2>&1 && ./build/bin/vgt verbs | grep -qx corpus; then
    echo "== corpus check"
    ./build/bin/vgt corpus check corpus
fi
if [ "${FUZZ_SECONDS:-60}" != 0 ] && [ -f .ci/fuzz.sh ]; then
    echo "== fuzzing (bounded)"
    bash .ci/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
