#!/usr/bin/env bash
# tests/setup.sh: install what the build and every test need (Debian packages and PyPI), idempotent.
#   build:   the tool's own dependencies (the README's user command installs just these)
#   tests:   clang and its libFuzzer runtime (fuzz targets), zstd and sqlite3 (command-line tools the tests
#            call), headless Chromium (the report test), Python: pytest, zstandard, xxhash, numpy, pandas,
#            pyarrow, duckdb (the format twin, the Python package's tables and its DuckDB check)
set -euo pipefail
BUILD_PKGS="cmake ninja-build gcc libc6-dev pkg-config python3 libzstd-dev libxxhash-dev libsqlite3-dev libcapstone-dev zlib1g-dev"
# the fuzzing runtime is versioned with clang: take the one that matches the clang this release installs
TEST_PKGS="build-essential clang zstd sqlite3 python3-pip python3-venv chromium"
PY_MODULES="pytest zstandard xxhash numpy pandas pyarrow duckdb"

missing() {
    local out=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out="$out $p"
    done
    echo "$out"
}

export DEBIAN_FRONTEND=noninteractive
need=$(missing $BUILD_PKGS $TEST_PKGS)
updated=0
if [ -n "$need" ]; then
    apt-get update -qq
    updated=1
    apt-get install -y -qq $need >/dev/null
fi
# libFuzzer's runtime: libclang-rt-<clang major>-dev (clang 14 on Debian 12); found by clang's version
clang_major=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
if [ -n "$clang_major" ] && [ -n "$(missing "libclang-rt-$clang_major-dev")" ]; then
    [ "$updated" = 1 ] || apt-get update -qq
    apt-get install -y -qq "libclang-rt-$clang_major-dev" >/dev/null ||
        echo "setup: libclang-rt-$clang_major-dev not installed: the fuzz targets (-DVGT_FUZZ=ON) will not link" >&2
fi
py=python3
if ! $py -c 'import pytest, zstandard, xxhash, numpy, pandas, pyarrow, duckdb' 2>/dev/null; then
    $py -m pip install -q $PY_MODULES 2>/dev/null ||
        $py -m pip install -q --break-system-packages $PY_MODULES
fi
