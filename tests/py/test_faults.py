"""Fault injection at every I/O call of the writing verbs (vgt/io.h: all file and stream I/O goes through one
table; the `vgt` command swaps in a faulty one when VGT_TEST_FAULT=OP:N:KIND is set, trace-format/cli/fault.c).

For each verb (repack, slice, verify --salvage, db, timeline, ingest, and record relaying a recorded stream) and each
operation it performs, the N-th call is made to fail for N over the calls the verb makes (all of them when
there are few, else the first and last dozen and a spread between; the faulty table says when call N was
never reached, which gives the count): EIO at every operation, ENOSPC where a full disk answers with it,
EPIPE at writes, EINTR and short
transfers at reads and writes. Then:
- the verb either succeeds with a complete output (EINTR and short transfers must always end so), or exits
  2 with an error that names the cause;
- its output is complete, absent (the previous file untouched), or salvageable: a valid prefix that
  `vgt verify` accepts (verify --salvage, ingest and record keep what they wrote);
- no temporary file is left beside it."""
import os
import re
import sqlite3
import subprocess

import pytest


OPS = ["open", "mkstemp", "read", "pread", "write", "pwrite", "fsync", "ftruncate", "lseek", "rename", "unlink",
       "close"]
TRANSFER = {"read", "pread", "write", "pwrite"}
CAUSE = {"ENOSPC": ("No space left on device", "database or disk is full"),
         "EIO": ("Input/output error", "disk I/O error"),
         "EPIPE": ("Broken pipe",)}
SENTINEL = b"the previous contents of OUT\n"
LIBC = next((p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib/libc.so.6")
             if os.path.exists(p)), None)


def kinds_for(op):
    """ENOSPC where a full disk can answer it; EIO everywhere."""
    k = ["EIO"] + (["ENOSPC"] if op in ("open", "mkstemp", "write", "pwrite", "fsync", "ftruncate", "rename", "close")
                   else [])
    if op == "write":   # a pipe is written, never pwritten
        k.append("EPIPE")
    if op in TRANSFER:
        k += ["EINTR", "SHORT"]
    return k


@pytest.fixture(scope="module")
def inputs(vgt_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    base, stream = d / "base.vgt", d / "stream.vgt"
    subprocess.run([str(vgt_bin), "synth", "-o", base, "--submits", "40", "--chunk-size", "65536"], check=True,
                   capture_output=True)
    subprocess.run([str(vgt_bin), "synth", "-o", stream, "--submits", "40", "--chunk-size", "65536", "--stored",
                    "--no-trailer"], check=True, capture_output=True)
    # an ingest source: the uncompressed record stream of docs/trace-format.md section 10
    from test_ingest import end_mark, stream_header, stream_records
    from vgtrace import reader
    recs = reader.read_trace(base).records
    raw = d / "ingest.stream"
    raw.write_bytes(stream_header() + b"".join(stream_records(recs)) + end_mark(len(recs)))
    return {"base": base, "stream": stream, "raw": raw, "dir": d}


def scenario(name, inputs, out):
    """(argv after `vgt`, extra env, policy): policy 'replace' (absent or complete) or 'prefix' (salvageable)."""
    i = inputs
    return {
        "repack": (["repack", i["base"], out, "--chunk-size", "65536"], {}, "replace"),
        "slice": (["slice", i["base"], out, "--submits", "5..30"], {}, "replace"),
        "salvage": (["verify", i["base"], "--salvage", out], {}, "prefix"),
        "db": (["db", i["base"], "-o", out], {}, "replace"),
        "timeline": (["timeline", i["base"], "-o", out, "--quiet"], {}, "replace"),
        "ingest": (["ingest", i["raw"], "-o", out], {}, "prefix"),
        "record": (["record", "-o", out, "--", "sh", "-c", f"cat '{i['stream']}' >&$VGT_CAPTURE_FD"],
                   {"VGT_CAPTURE_LIB": LIBC or "/nonexistent"}, "prefix"),
    }[name]


def run(vgt_bin, argv, env, fault=None):
    e = dict(os.environ, **env)
    e.pop("VGT_TEST_FAULT", None)
    if fault:
        e["VGT_TEST_FAULT"] = fault
    return subprocess.run([str(vgt_bin), *map(str, argv)], capture_output=True, text=True, timeout=60, env=e)


def trace_records(vgt_bin, path):
    r = subprocess.run([str(vgt_bin), "verify", str(path)], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    return int(re.search(r": (\d+) records", r.stdout).group(1))


def salvageable(vgt_bin, path, tmp):
    r = subprocess.run([str(vgt_bin), "verify", str(path), "--salvage", str(tmp)], capture_output=True, text=True,
                       timeout=60)
    return r.returncode in (0, 1) and trace_records(vgt_bin, tmp) is not None


def db_rows(path):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            return c.execute("select count(*) from submissions").fetchone()[0]
    except sqlite3.Error:
        return None


def output_measure(vgt_bin, verb, out):
    """What a complete output holds: a database's rows, a timeline's bytes, a trace's records."""
    if verb == "db":
        return db_rows(out)
    if verb == "timeline":
        return out.read_bytes() if out.exists() else None
    return trace_records(vgt_bin, out)


def calls_to_try(total):
    if total <= 40:
        return list(range(1, total + 1))
    spread = [1 + (total - 1) * k // 11 for k in range(12)]
    return sorted(set(list(range(1, 13)) + list(range(total - 11, total + 1)) + spread))


@pytest.mark.parametrize("verb", ["repack", "slice", "salvage", "db", "timeline", "ingest", "record"])
def test_every_io_call_fails_cleanly(vgt_bin, inputs, tmp_path, verb):
    if verb == "record" and not LIBC:
        pytest.skip("no libc path to stand in for the capture library")
    out = tmp_path / {"db": "out.db", "timeline": "out.json"}.get(verb, "out.vgt")
    argv, env, policy = scenario(verb, inputs, out)
    clean = run(vgt_bin, argv, env)
    assert clean.returncode == 0, clean.stderr
    want = output_measure(vgt_bin, verb, out)
    assert want, f"{verb}: the clean run wrote nothing usable"
    tried = 0
    for op in OPS:
        probe = run(vgt_bin, argv, env, f"{op}:1000000000:EIO")
        m = re.search(r"VGT_TEST_FAULT: \w+ call \d+ not reached \((\d+) calls\)", probe.stderr)
        assert m, probe.stderr[-500:]
        total = int(m.group(1))
        for n in calls_to_try(total):
            for kind in kinds_for(op):
                tried += 1
                out.unlink(missing_ok=True)
                if policy == "replace":
                    out.write_bytes(SENTINEL)
                r = run(vgt_bin, argv, env, f"{op}:{n}:{kind}")
                what = f"{verb}: {op} call {n}/{total} {kind}: exit {r.returncode}\n{r.stderr[-1500:]}"
                if "not reached" in r.stderr and verb == "record":
                    continue   # reads of a pipe: how many depends on the timing of the writer
                if "not reached" in r.stderr and op == "pread":
                    # the reader's read-ahead workers load chunks a verb that stops early (slice) may never
                    # reach: how many they load depends on timing. A fault not met is a clean run.
                    assert r.returncode == 0 and output_measure(vgt_bin, verb, out) == want, what
                    continue
                assert "not reached" not in r.stderr, what
                assert not list(tmp_path.glob("*.partial")), what + "\na temporary was left behind"
                # record exits with its program's status: its own trouble is what it says on stderr
                ok = r.returncode == 0 and "vgt record:" not in r.stderr
                if kind in ("EINTR", "SHORT"):
                    assert ok, what   # retried or continued: never an error
                if ok:
                    got = output_measure(vgt_bin, verb, out)
                    # a fault on reading the input's index may make a verb read without it: same records
                    assert got == want, what + "\nthe output differs from the clean run's"
                    continue
                if verb != "record":
                    assert r.returncode == 2, what
                assert any(c in r.stderr for c in CAUSE[kind]), what + "\nthe error does not name its cause"
                if policy == "replace":
                    assert out.read_bytes() == SENTINEL, what + "\nOUT was changed"
                elif out.exists():
                    assert salvageable(vgt_bin, out, tmp_path / "s.vgt"), what + "\nOUT is not salvageable"
    assert tried > 20


def test_enospc_message_matches_what_stays(vgt_bin, inputs, tmp_path):
    """repack replaces OUT only when complete: on ENOSPC OUT stays as it was and the message says so (it used
    to claim the chunks before the error were intact while it deleted them). verify --salvage keeps what it
    salvaged: the chunks before the error are in OUT, as its message says."""
    out = tmp_path / "out.vgt"
    out.write_bytes(SENTINEL)
    r = run(vgt_bin, ["repack", inputs["base"], out, "--chunk-size", "65536"], {}, "write:5:ENOSPC")
    assert r.returncode == 2 and "No space left on device" in r.stderr, r.stderr
    assert f"'{out}' is left as it was" in r.stderr and "intact" not in r.stderr, r.stderr
    assert out.read_bytes() == SENTINEL
    sal = tmp_path / "sal.vgt"
    big = tmp_path / "big.vgt"
    subprocess.run([str(vgt_bin), "synth", "-o", big, "--submits", "400", "--stored"], check=True, capture_output=True)
    r = run(vgt_bin, ["verify", big, "--salvage", sal], {}, "write:5:ENOSPC")
    m = re.search(r"the (\d+) chunks \((\d+) records\) before it are intact", r.stderr)
    assert r.returncode == 2 and m and int(m.group(2)) > 0, r.stderr
    assert trace_records(vgt_bin, sal) == int(m.group(2)), "the salvage does not hold the records its message names"


def test_read_ahead_workers_read_through_the_table(vgt_bin, tmp_path):
    """A sequential read of a trace with an index loads its chunks past the second on worker threads
    (trace-format/src/reader_ahead.c): their reads go through the I/O table too, are counted once each, and a
    failure there is reported when the read reaches that chunk, naming its offset. EINTR and short reads
    are retried."""
    trace = tmp_path / "many.vgt"
    subprocess.run([str(vgt_bin), "synth", "-o", trace, "--submits", "200", "--chunk-size", "65536"], check=True,
                   capture_output=True)
    argv = ["census", trace, "--total"]
    clean = run(vgt_bin, argv, {})
    assert clean.returncode == 0, clean.stderr
    probe = run(vgt_bin, argv, {}, "pread:1000000000:EIO")
    total = int(re.search(r"pread call \d+ not reached \((\d+) calls\)", probe.stderr).group(1))
    chunks = int(re.search(r"chunks:\s+(\d+)", run(vgt_bin, ["info", trace], {}).stdout).group(1))
    assert chunks >= 8 and total >= 2 * chunks, (chunks, total)   # header and payload of every chunk
    size = trace.stat().st_size
    late = 0
    for n in calls_to_try(total):
        for kind in ("EIO", "EINTR", "SHORT"):
            r = run(vgt_bin, argv, {}, f"pread:{n}:{kind}")
            what = f"pread call {n}/{total} {kind}: exit {r.returncode}\n{r.stderr[-800:]}"
            assert "not reached" not in r.stderr, what
            if r.returncode == 0:
                assert r.stdout == clean.stdout, what   # retried, or a failed index read: the same counts
                continue
            assert kind == "EIO" and r.returncode == 2 and "Input/output error" in r.stderr, what
            m = re.search(r"read at offset (\d+) failed", r.stderr)
            late += bool(m and int(m.group(1)) > size // 2)
    assert late, "no failed read past the middle of the file: the workers' reads are not in the table"
