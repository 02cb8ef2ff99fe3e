"""SIGKILL at random points, 100 times for each writing verb (repack, slice, verify --salvage, db, synth,
ingest, and record relaying a recorded stream): whatever the moment, OUT is absent (or the file that was
there before, untouched), complete, or -- for the verbs that write a recording's prefix (ingest writes in
place; record writes beside OUT and keeps its prefix) -- salvageable to its last complete record, the
salvaged records a prefix of the complete output. A killed verb cannot remove its temporary (SIGKILL is not
caught): what it left there must be a temporary, never OUT; a recording's temporary is salvageable.

Each verb's runs are bounded: a small input (tens of milliseconds a run) and kill points drawn uniformly
over the time a clean run takes."""
import os
import random
import re
import signal
import sqlite3
import struct
import subprocess
import time

import pytest

from vgtrace import reader, spec

KILLS = 100
SENTINEL = b"the previous contents of OUT\n"
LIBC = next((p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib/libc.so.6")
             if os.path.exists(p)), None)


@pytest.fixture(scope="module")
def inputs(vgt_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("kill")
    base, small, stream = d / "base.vgt", d / "small.vgt", d / "stream.vgt"
    subprocess.run([str(vgt_bin), "synth", "-o", base, "--submits", "300", "--chunk-size", "65536"], check=True,
                   capture_output=True)
    subprocess.run([str(vgt_bin), "synth", "-o", small, "--submits", "60", "--chunk-size", "65536"], check=True,
                   capture_output=True)
    subprocess.run([str(vgt_bin), "synth", "-o", stream, "--submits", "300", "--chunk-size", "65536", "--stored",
                    "--no-trailer"], check=True, capture_output=True)
    from test_ingest import end_mark, stream_header, stream_records
    recs = reader.read_trace(small).records   # ingest syncs every chunk it writes: a smaller stream
    raw = d / "ingest.stream"
    raw.write_bytes(stream_header() + b"".join(stream_records(recs)) + end_mark(len(recs)))
    return {"base": base, "small": small, "stream": stream, "raw": raw}


def scenario(verb, i, out):
    """(argv, env, policy): 'replace' (absent/previous or complete) or 'prefix' (also salvageable)."""
    return {
        "repack": (["repack", i["base"], out, "--chunk-size", "65536", "--level", "9"], {}, "replace"),
        "slice": (["slice", i["base"], out, "--submits", "20..250"], {}, "replace"),
        "salvage": (["verify", i["base"], "--salvage", out], {}, "replace"),
        "db": (["db", i["small"], "-o", out], {}, "replace"),
        "synth": (["synth", "-o", out, "--submits", "300", "--chunk-size", "65536"], {}, "replace"),
        "ingest": (["ingest", i["raw"], "-o", out], {}, "prefix"),
        "record": (["record", "-o", out, "--", "sh", "-c", f"cat '{i['stream']}' >&$VGT_CAPTURE_FD"],
                   {"VGT_CAPTURE_LIB": LIBC or "/nonexistent"}, "prefix"),
    }[verb]


def trace_summary(vgt_bin, path):
    """Record count when `vgt verify` accepts path as a complete trace, else None."""
    r = subprocess.run([str(vgt_bin), "verify", str(path)], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "no trailer" in r.stdout:
        return None
    return int(re.search(r": (\d+) records", r.stdout).group(1))


def db_complete(path, want):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            return c.execute("select count(*) from submissions").fetchone()[0] == want
    except sqlite3.Error:
        return False


def salvaged_prefix(vgt_bin, path, tmp, complete, skip=0):
    """The records `vgt verify --salvage` keeps of path (less the first skip), checked to be a prefix of the
    complete output's."""
    r = subprocess.run([str(vgt_bin), "verify", str(path), "--salvage", str(tmp)], capture_output=True, timeout=60)
    if r.returncode not in (0, 1):
        return None
    got = reader.read_trace(tmp).records[skip:]
    if skip and got and got[-1].type == spec.BY_NAME["SESSION_END"].code:
        got = got[:-1]   # the recording ended, its trailer not yet written: SESSION_END carries the clock
    keys = [(x.type, x.ts, bytes(x.payload)) for x in got]
    if keys != complete[:len(keys)]:
        return None
    return len(keys)


@pytest.mark.parametrize("verb", ["repack", "slice", "salvage", "db", "synth", "ingest", "record"])
def test_sigkill_at_random_points(vgt_bin, inputs, tmp_path, verb):
    if verb == "record" and not LIBC:
        pytest.skip("no libc path to stand in for the capture library")
    out = tmp_path / ("out.db" if verb == "db" else "out.vgt")
    argv, env, policy = scenario(verb, inputs, out)
    e = dict(os.environ, **env)
    t0 = time.monotonic()
    clean = subprocess.run([str(vgt_bin), *map(str, argv)], capture_output=True, env=e, timeout=60)
    took = time.monotonic() - t0
    assert clean.returncode == 0, clean.stderr
    if verb == "db":
        with sqlite3.connect(out) as c:
            want = c.execute("select count(*) from submissions").fetchone()[0]
    else:
        want = trace_summary(vgt_bin, out)
        complete = [(x.type, x.ts, bytes(x.payload)) for x in reader.read_trace(out).records]
    skip, header_size = 0, 0
    if verb != "db":
        header_size = struct.unpack_from("<I", out.read_bytes(), 16)[0]   # header_length (docs/trace-format.md)
    if verb == "record":   # its SESSION_START/END carry the wall clock: compare what was relayed
        complete, skip = complete[1:-1], 1
    rng = random.Random(f"kill-{verb}")
    outcomes = {"absent": 0, "complete": 0, "prefix": 0}
    for k in range(KILLS):
        for p in tmp_path.iterdir():
            if p.name.startswith("out"):
                p.unlink()
        if policy == "replace":
            out.write_bytes(SENTINEL)
        p = subprocess.Popen([str(vgt_bin), *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=e)
        time.sleep(rng.uniform(0, took * 1.1))
        p.send_signal(signal.SIGKILL)
        p.wait()
        what = f"{verb}: kill {k} after {took:.3f} s scale"
        left = sorted(x.name for x in tmp_path.iterdir() if x.name.startswith("out") and x != out)
        assert all(n.endswith(".partial") for n in left), what + f": left {left}"
        if not out.exists() or (policy == "replace" and out.read_bytes() == SENTINEL):
            tmp = tmp_path / left[0] if left else None
            # a temporary killed before its header was whole holds no record: as good as absent
            if policy == "prefix" and tmp and tmp.stat().st_size >= header_size:   # a recording's prefix
                n = salvaged_prefix(vgt_bin, tmp, tmp_path / "salvaged.vgt", complete, skip)
                assert n is not None, what + f": {left[0]} is not salvageable to a prefix of the complete output"
                outcomes["prefix"] += 1
                continue
            outcomes["absent"] += 1
            continue
        if verb == "db":
            assert db_complete(out, want), what + ": OUT is not the complete database"
            outcomes["complete"] += 1
            continue
        if trace_summary(vgt_bin, out) == want:
            outcomes["complete"] += 1
            continue
        assert policy == "prefix", what + ": OUT is neither the previous file nor complete"
        n = salvaged_prefix(vgt_bin, out, tmp_path / "salvaged.vgt", complete, skip)
        assert n is not None, what + ": OUT is not salvageable to a prefix of the complete output"
        outcomes["prefix"] += 1
    # the kill points reach both ends: runs killed before OUT was in place (a verb that writes in place
    # has OUT from its start: a prefix instead), and runs that finished
    assert outcomes["absent" if policy == "replace" else "prefix"] > 0 and outcomes["complete"] > 0, outcomes
