"""`vgt record` without a GPU (CI): the trace it writes for ordinary programs, exit-status and signal
pass-through, stdout transparency, live output to stdout, and its usage errors.

The capture library starts at a program's first open of an NVIDIA device node, so these programs leave
no records of their own: the trace holds SESSION_START, a DIAGNOSTIC saying no GPU activity was seen,
and SESSION_END with the program's exit status or signal. (The device half is tests/gpu/capture_corpus.sh.)
"""
import os
import re
import subprocess

import pytest


def record(vgt_bin, tmp_path, *cmd, opts=(), env=None, name="out.vgt"):
    out = tmp_path / name
    r = subprocess.run([str(vgt_bin), "record", "-o", str(out), *opts, "--", *cmd], capture_output=True,
                       timeout=60, env=env)
    return r, out


def dump_lines(vgt, path):
    r = vgt("dump", path, check=0)
    return r.stdout.splitlines()


def session_end(lines):
    ends = [l for l in lines if " SESSION_END " in l]
    assert len(ends) == 1, lines
    m = re.search(r"exit_status=(-?\d+) signal=(\d+)", ends[0])
    return int(m.group(1)), int(m.group(2))


def test_true_gives_a_valid_trace(vgt_bin, vgt, tmp_path):
    r, out = record(vgt_bin, tmp_path, "/bin/true")
    assert r.returncode == 0, r.stderr
    vgt("verify", out, check=0)
    lines = dump_lines(vgt, out)
    assert " SESSION_START " in lines[0] and " SESSION_END " in lines[-1]
    assert session_end(lines) == (0, 0)
    info = vgt("info", out, check=0).stdout
    assert re.search(r"producer\s+vgt record", info) and re.search(r"command_line\s+/bin/true", info)
    assert re.search(r"capture_mode\s+preload", info) and re.search(r"memory_mode\s+changed", info)


def test_exit_status_is_passed_through(vgt_bin, vgt, tmp_path):
    r, out = record(vgt_bin, tmp_path, "sh", "-c", "exit 7")
    assert r.returncode == 7
    assert session_end(dump_lines(vgt, out)) == (7, 0)


def test_signal_is_reported(vgt_bin, vgt, tmp_path):
    r, out = record(vgt_bin, tmp_path, "sh", "-c", "kill -TERM $$")
    assert r.returncode == 128 + 15
    vgt("verify", out, check=0)
    assert session_end(dump_lines(vgt, out)) == (-1, 15)


def test_program_output_is_unchanged(vgt_bin, tmp_path):
    prog = ["python3", "-c", "import sys; print('out line'); print('err line', file=sys.stderr); sys.exit(3)"]
    plain = subprocess.run(prog, capture_output=True, timeout=60)
    r, _ = record(vgt_bin, tmp_path, *prog)
    assert r.returncode == plain.returncode == 3
    assert r.stdout == plain.stdout == b"out line\n"
    assert r.stderr.startswith(plain.stderr)   # vgt's own note about no GPU activity may follow


def test_live_trace_on_stdout(vgt_bin, vgt, tmp_path):
    r = subprocess.run([str(vgt_bin), "record", "-o", "-", "--", "echo", "hello"], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert r.stdout.startswith(b"VGTRACE\0")
    assert b"hello\n" in r.stderr            # the program's stdout moves to stderr
    path = tmp_path / "live.vgt"
    path.write_bytes(r.stdout)
    vgt("verify", path, check=0)


def test_usage_errors(vgt_bin, vgt, tmp_path):
    assert vgt("record", "--help", check=0).stdout.startswith("usage: vgt record")
    assert vgt("record", check=2).stderr
    assert "--memory" in vgt("record", "--memory=bogus", "--", "/bin/true", check=2).stderr
    assert "--track" in vgt("record", "--track=bogus", "--", "/bin/true", check=2).stderr
    env = dict(os.environ, VGT_CAPTURE_LIB=str(tmp_path / "missing.so"))
    r, _ = record(vgt_bin, tmp_path, "/bin/true", env=env)
    assert r.returncode == 2 and b"libvgt-capture.so" in r.stderr


def test_command_not_found(vgt_bin, vgt, tmp_path):
    r, out = record(vgt_bin, tmp_path, "/nonexistent/program")
    assert r.returncode == 127
    assert session_end(dump_lines(vgt, out)) == (127, 0)
