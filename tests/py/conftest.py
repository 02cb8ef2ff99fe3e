"""Shared pytest fixtures: the built `vgt` binary, the build directory, synthetic traces, and the Python
twin (trace-format/python/vgtrace) on the import path.

The build is found through $VGT_BUILD (default: <repo>/build). A missing binary is a failure with a clear
message, never a silent skip: the harness must not pass on a tree that was not built.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "trace-format" / "python"))   # import vgtrace (the source tree's)


def _build_dir():
    return Path(os.environ.get("VGT_BUILD", REPO / "build")).resolve()


@pytest.fixture(scope="session")
def build_dir():
    d = _build_dir()
    if not d.is_dir():
        pytest.fail(f"build directory {d} does not exist: build first (cmake -S {REPO} -B {d} && "
                    f"cmake --build {d}) or set VGT_BUILD", pytrace=False)
    return d


@pytest.fixture(scope="session")
def vgt_bin(build_dir):
    b = build_dir / "bin" / "vgt"
    if not b.is_file() or not os.access(b, os.X_OK):
        pytest.fail(f"vgt binary {b} is missing: build it (cmake --build {build_dir}) or set VGT_BUILD",
                    pytrace=False)
    return b


def check_exit(trace):
    """The exit status `vgt replay TRACE --backend sim --check` must give for a corpus trace: 1 where its
    hand-written corpus/goldens/<name>.mismatches lists checks that must fail (a derived trace whose change
    removed work the recording observed), else 0."""
    return 1 if (REPO / "corpus" / "goldens" / f"{Path(trace).stem}.mismatches").exists() else 0


def fnv1a64(data):
    """FNV-1a 64 of bytes, as the corpus workloads hash their results (corpus/workloads/wl_common.h)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def run_vgt(vgt_bin, *args, check=None, timeout=120):
    """Run `vgt args...`; returns CompletedProcess (text). check=N asserts the exit code is N."""
    r = subprocess.run([str(vgt_bin), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check is not None:
        assert r.returncode == check, (f"vgt {' '.join(map(str, args))} exited {r.returncode}, expected {check}\n"
                                       f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}")
    return r


@pytest.fixture(scope="session")
def vgt(vgt_bin):
    """vgt(*args, check=None) -> CompletedProcess."""
    def call(*args, check=None, timeout=120):
        return run_vgt(vgt_bin, *args, check=check, timeout=timeout)
    return call


@pytest.fixture(scope="session")
def synth(vgt_bin, tmp_path_factory):
    """synth(name, *synth_args) -> Path of a trace written by `vgt synth`, cached for the session."""
    cache = {}
    root = tmp_path_factory.mktemp("synth")

    def make(name, *args):
        key = (name, args)
        if key not in cache:
            out = root / f"{name}.vgt"
            run_vgt(vgt_bin, "synth", "-o", out, *args, check=0)
            cache[key] = out
        return cache[key]
    return make


@pytest.fixture
def small_trace(synth):
    """A small mixed trace from `vgt synth` (several chunks, every shape of push buffer)."""
    return synth("small", "--shape", "mixed", "--submits", "12", "--channels", "2", "--seed", "7")
