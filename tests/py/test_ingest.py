"""`vgt ingest`: an uncompressed record stream (docs/trace-format.md section 10) into a crash-safe,
indexed trace. The streams here are made by this test from the spec (trace-format/python/vgtrace's record encoder), out
of corpus traces, so the producer is independent of the C encoder (tests/unit/test_fenc.c checks that
one against the library).

Covered: files, FIFOs and standard input; every record kept as it was (type, flags, timestamp, payload);
the identity carried with crash_safe=1; streams that end without an END mark, inside a record, with a
sequence gap or a malformed payload (exit 1, every record before kept); a foreign magic or a newer major
(exit 2); kill -9 in the middle of a stream (the trace is valid up to its last flushed record and
salvageable); --follow on a growing file until the END mark, and until SIGINT."""
import os
import signal
import struct
import subprocess
import threading
import time

import pytest

from conftest import REPO
from vgtrace import reader, writer

END = 0xFFFF


def stream_header(identity=(("producer", "test_ingest"), ("chip", "TU104")), major=1, flags=0):
    ident = b""
    for k, v in identity:
        e = struct.pack("<II", len(k), len(v)) + k.encode() + v.encode()
        ident += e + b"\0" * (-len(e) % 8)
    return b"VGTSTRM\0" + struct.pack("<HHIHHIQ", major, 0, flags, 1, 1, len(ident), 0) + ident


def stream_records(records, first_seq=0):
    return [writer.encode_record(r.type, bytes(r.payload), first_seq + i, r.ts, r.flags) for i, r in enumerate(records)]


def end_mark(seq, ts=0):
    return struct.pack("<HHIQQ", END, 0, 0, seq, ts)


@pytest.fixture(scope="module")
def corpus_records():
    return reader.read_trace(REPO / "corpus" / "vk_triangle.vgt").records


def same_records(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.type, g.flags, g.ts, bytes(g.payload)) == (w.type, w.flags, w.ts, bytes(w.payload)), f"record {w.seq}"


def test_ingest_file_stdin_fifo(vgt_bin, vgt, tmp_path, corpus_records):
    data = stream_header() + b"".join(stream_records(corpus_records)) + end_mark(len(corpus_records))
    src = tmp_path / "s.stream"
    src.write_bytes(data)
    out = tmp_path / "a.vgt"
    vgt("ingest", src, "-o", out, check=0)
    t = reader.read_trace(out)
    same_records(t.records, corpus_records)
    assert t.has_index and t.identity["crash_safe"] == "1" and t.identity["chip"] == "TU104"
    assert t.identity["producer"] == "test_ingest"
    assert len(t.chunks) > 1, "crash-safe: a chunk closed at each submission"
    vgt("verify", out, check=0)

    # standard input
    out2 = tmp_path / "b.vgt"
    r = subprocess.run([str(vgt_bin), "ingest", "-", "-o", str(out2)], input=data, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    same_records(reader.read_trace(out2).records, corpus_records)

    # a FIFO, written in pieces by another thread
    fifo = tmp_path / "f.fifo"
    os.mkfifo(fifo)
    out3 = tmp_path / "c.vgt"
    p = subprocess.Popen([str(vgt_bin), "ingest", str(fifo), "-o", str(out3)], stderr=subprocess.PIPE)
    with open(fifo, "wb") as f:
        for i in range(0, len(data), 7919):
            f.write(data[i:i + 7919])
    assert p.wait(60) == 0, p.stderr.read()
    same_records(reader.read_trace(out3).records, corpus_records)


def test_ingest_incomplete_and_malformed(vgt, tmp_path, corpus_records):
    recs = stream_records(corpus_records[:50])
    cases = {
        "no_end": (stream_header() + b"".join(recs), 50, "without an END mark"),
        "cut": (stream_header() + b"".join(recs) + stream_records(corpus_records[50:51], 50)[0][:30], 50,
                "inside record seq 50"),
        "gap": (stream_header() + b"".join(recs[:20]) + stream_records(corpus_records[21:30], 21)[0], 20,
                "expected 20"),
    }
    # a CHANNEL record whose payload is shorter than its fixed part
    chan = next(i for i, r in enumerate(corpus_records) if r.name == "CHANNEL")
    bad = writer.encode_record(corpus_records[chan].type, bytes(corpus_records[chan].payload[:40]), chan, 1)
    cases["short"] = (stream_header() + b"".join(stream_records(corpus_records[:chan])) + bad, chan, "CHANNEL")
    for name, (data, kept, msg) in cases.items():
        src, out = tmp_path / f"{name}.stream", tmp_path / f"{name}.vgt"
        src.write_bytes(data)
        r = vgt("ingest", src, "-o", out, check=1)
        assert msg in r.stderr, (name, r.stderr)
        t = reader.read_trace(out)
        same_records(t.records, corpus_records[:kept])
        vgt("verify", out, check=0)
    for name, data in {"magic": b"VGTRACE\0" + stream_header()[8:], "major": stream_header(major=2),
                       "flags": stream_header(flags=1), "empty": b""}.items():
        src = tmp_path / f"{name}.stream"
        src.write_bytes(data + end_mark(0))
        r = vgt("ingest", src, "-o", tmp_path / f"{name}.vgt", check=2)
        assert "ingest" in r.stderr


def wait_records(path, n, timeout=30):
    """Wait until the trace at path holds at least n records in complete chunks."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists():
            t, _ = reader.read_prefix(path)
            if len(t.records) >= n:
                return t
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {n} records")


def test_ingest_crash(vgt_bin, vgt, tmp_path, corpus_records):
    """kill -9 in the middle of a stream: the trace holds every record the ingest had flushed, and
    `vgt verify --salvage` turns it into a valid trace of exactly those records."""
    fifo, out, fixed = tmp_path / "f.fifo", tmp_path / "crash.vgt", tmp_path / "fixed.vgt"
    os.mkfifo(fifo)
    p = subprocess.Popen([str(vgt_bin), "ingest", str(fifo), "-o", str(out)], stderr=subprocess.PIPE)
    recs = stream_records(corpus_records)
    half = len(recs) // 2
    with open(fifo, "wb") as f:
        f.write(stream_header() + b"".join(recs[:half]))
        f.flush()
        wait_records(out, half)              # flushed: at submissions, or once the source went quiet
        f.write(b"".join(recs[half:half + 10]) + recs[half + 10][:17])   # more, and half a record
        f.flush()
        time.sleep(0.1)
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    assert p.returncode == -signal.SIGKILL
    t, problem = reader.read_prefix(out)
    assert len(t.records) >= half
    same_records(t.records, corpus_records[:len(t.records)])
    r = vgt("verify", out, "--salvage", fixed)
    assert r.returncode in (0, 1), r.stderr
    salvaged = reader.read_trace(fixed)
    assert len(salvaged.records) == len(t.records)
    same_records(salvaged.records, corpus_records[:len(t.records)])
    vgt("verify", fixed, check=0)


def test_ingest_follow(vgt_bin, vgt, tmp_path, corpus_records):
    """--follow a growing file: appended records are taken as they come; the END mark ends the ingest
    with everything written and the index."""
    src, out = tmp_path / "grow.stream", tmp_path / "follow.vgt"
    recs = stream_records(corpus_records)
    src.write_bytes(stream_header() + b"".join(recs[:100]))
    p = subprocess.Popen([str(vgt_bin), "ingest", "--follow", str(src), "-o", str(out)], stderr=subprocess.PIPE)
    wait_records(out, 100)
    with open(src, "ab") as f:
        for i in range(100, len(recs), 300):
            f.write(b"".join(recs[i:i + 300])[:-5])    # a record cut short at the file's end for a while
            f.flush()
            time.sleep(0.15)
            f.write(b"".join(recs[i:i + 300])[-5:])
            f.flush()
        assert p.poll() is None, "still following: no END mark yet"
        f.write(end_mark(len(recs)))
    assert p.wait(30) == 0, p.stderr.read()
    t = reader.read_trace(out)
    assert t.has_index
    same_records(t.records, corpus_records)


def test_ingest_follow_sigint(vgt_bin, vgt, tmp_path, corpus_records):
    """--follow stopped by SIGINT: everything appended is in the trace, closed with its index."""
    src, out = tmp_path / "grow.stream", tmp_path / "stopped.vgt"
    recs = stream_records(corpus_records[:400])
    src.write_bytes(stream_header() + b"".join(recs[:150]))
    p = subprocess.Popen([str(vgt_bin), "ingest", "--follow", str(src), "-o", str(out)], stderr=subprocess.PIPE)
    wait_records(out, 150)
    with open(src, "ab") as f:
        f.write(b"".join(recs[150:]))
    wait_records(out, 400)
    p.send_signal(signal.SIGINT)
    assert p.wait(30) == 0, p.stderr.read()
    t = reader.read_trace(out)
    assert t.has_index
    same_records(t.records, corpus_records[:400])
    vgt("verify", out, check=0)
