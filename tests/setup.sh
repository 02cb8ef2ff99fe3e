#!/usr/bin/env bash
# tests/setup.sh: install the build and test dependencies (Debian packages and PyPI), idempotent.
set -euo pipefail
need_apt=0
for p in build-essential cmake ninja-build pkg-config libzstd-dev libxxhash-dev libsqlite3-dev \
         libcapstone-dev clang libclang-rt-14-dev zstd sqlite3 python3 python3-pip; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_apt=1
done
if [ "$need_apt" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq build-essential cmake ninja-build pkg-config libzstd-dev libxxhash-dev \
        libsqlite3-dev libcapstone-dev clang libclang-rt-14-dev zstd sqlite3 python3 python3-pip >/dev/null
fi
py=python3
if ! $py -c 'import pytest, zstandard, xxhash' 2>/dev/null; then
    $py -m pip install -q pytest zstandard xxhash 2>/dev/null ||
        $py -m pip install -q --break-system-packages pytest zstandard xxhash
fi
