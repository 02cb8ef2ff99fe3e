"""Small defects found while attacking the tools with hostile input, each fixed (ENOSPC in repack and verify
--salvage: tests/py/test_faults.py):
- `dump --follow` on a file whose writer has not written its header yet waits for it (it gave up at once);
- census `launch_threads` saturates at 2^64-1 instead of wrapping modulo 2^64 (a QMD's grid and block are
  six 32-bit factors);
- a MEMORY record that wraps around the address space is the trace's fault (exit 1), as a wrapping GPU_MAP
  is (it exited 2, a usage/I/O error); a range ending exactly at 2^64 is accepted (it was rejected);
- a malformed record of a type a verb does not use fails that verb, naming it (it passed silently)."""
import json
import struct
import subprocess
import threading
import time

import pytest

import vgtrace
from vgtrace import hostile, spec


def test_dump_follow_waits_for_the_header(vgt_bin, vgt, tmp_path):
    src = tmp_path / "whole.vgt"
    vgt("synth", "-o", src, "--submits", "6", check=0)
    data = src.read_bytes()
    live = tmp_path / "live.vgt"
    live.write_bytes(b"")
    p = subprocess.Popen([str(vgt_bin), "dump", "--follow", str(live)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)

    def write_slowly():
        time.sleep(0.3)
        with open(live, "ab") as f:
            for at in (0, 10, 40, len(data)):   # inside the magic, inside the header, then the rest
                f.write(data[f.tell():at] if at else b"")
                f.flush()
                time.sleep(0.2)
    t = threading.Thread(target=write_slowly)
    t.start()
    out, err = p.communicate(timeout=30)
    t.join()
    assert p.returncode == 0, err
    want = vgt("dump", src, check=0).stdout
    assert out == want


def test_dump_follow_still_refuses_a_file_that_is_not_a_trace(vgt, tmp_path):
    bad = tmp_path / "bad.vgt"
    bad.write_bytes(b"hello")
    r = vgt("dump", "--follow", bad, timeout=10)
    assert r.returncode != 0 and "not a .vgt trace" in r.stderr


def qmd_patched(vgt, tmp_path, factors):
    """A synth trace whose first launch's QMD (V04, in a MEMORY record) has grid/block = factors."""
    src = tmp_path / "syn.vgt"
    vgt("synth", "-o", src, "--submits", "16", check=0)
    ev = next(json.loads(l) for l in vgt("decode", "--jsonl", src, check=0).stdout.splitlines() if '"LAUNCH"' in l)
    qva = ev["qmd_va"]
    t = vgtrace.read_trace(src)
    mem = spec.BY_NAME["MEMORY"].code
    recs = []
    patched = False
    for r in t.records:
        payload = bytes(r.payload)
        if r.type == mem and not patched:
            f = vgtrace.records.decode_payload(r.type, payload)
            va, data = f["gpu_va"], bytearray(f["data"])
            if va <= qva and qva + 160 <= va + len(data):
                o = qva - va
                gx, gy, gz, bx, by, bz = factors
                struct.pack_into("<I", data, o + 128, gx)          # GRID_WIDTH 1055:1024
                struct.pack_into("<H", data, o + 132, gy)          # GRID_HEIGHT 1071:1056
                struct.pack_into("<H", data, o + 136, gz)          # GRID_DEPTH 1103:1088
                struct.pack_into("<HHH", data, o + 144, bx, by, bz)   # CTA_THREAD_DIMENSION0..2
                f["data"] = bytes(data)
                payload = vgtrace.records.encode_payload(r.type, f)
                patched = True
        recs.append((r.type, payload, r.ts, r.flags))
    assert patched, "no MEMORY record holds the QMD"
    out = tmp_path / "qmd.vgt"
    vgtrace.write_trace(out, recs, identity=tuple(t.identity.items()))
    return out


def test_census_launch_threads_saturates(vgt, tmp_path):
    huge = qmd_patched(vgt, tmp_path, (0xFFFFFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF))
    total = json.loads(vgt("census", huge, "--json", check=0).stdout)["total"]
    assert total["launch_threads"] == 2**64 - 1, total["launch_threads"]


def test_census_launch_threads_zero_factor_after_overflow(vgt, tmp_path):
    zero = qmd_patched(vgt, tmp_path, (0xFFFFFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0))
    whole = json.loads(vgt("census", tmp_path / "syn.vgt", "--json", check=0).stdout)["total"]["launch_threads"]
    got = json.loads(vgt("census", zero, "--json", check=0).stdout)["total"]["launch_threads"]
    assert got < whole, (got, whole)   # that launch counts 0 threads


def map_record(b, va, length):
    b.add("GPU_MAP", {"client": hostile.CLIENT, "device": hostile.DEVICE, "va_space": hostile.VASPACE,
                      "memory": b.pb_mem, "gpu_va": va, "offset": 0, "length": length, "flags": 0x8100, "source": 1,
                      "status": 0})


@pytest.fixture
def edge_traces(tmp_path):
    def make(name, fill):
        b = hostile.Builder()
        ch = b.channel()
        fill(b)
        b.submit(ch, b.bind())
        return b.write(tmp_path / f"{name}.vgt")
    return {
        "memory_wraps": make("memwrap", lambda b: b.contents(2**64 - 16, b"\1" * 32)),
        "map_wraps": make("mapwrap", lambda b: map_record(b, 2**64 - 0x10000, 0x20000)),
        "ends_at_2_64": make("end", lambda b: (map_record(b, 2**64 - 0x10000, 0x10000),
                                               b.contents(2**64 - 0x100, b"\2" * 0x100))),
    }


@pytest.mark.parametrize("verb", ["decode", "census", "mme", "replay"])
def test_wrapping_ranges_are_the_traces_fault_alike(vgt, edge_traces, verb):
    extra = ["--backend", "sim"] if verb == "replay" else []
    for name in ("memory_wraps", "map_wraps"):
        r = vgt(verb, edge_traces[name], *extra)
        assert r.returncode == 1 and "wraps around" in r.stderr, (name, r.returncode, r.stderr)


@pytest.mark.parametrize("verb", ["decode", "census", "mme"])
def test_a_range_ending_at_2_64_is_accepted(vgt, edge_traces, verb):
    r = vgt(verb, edge_traces["ends_at_2_64"])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("verb", ["decode", "census", "mme", "db", "replay"])
def test_malformed_record_of_an_unused_type_is_reported(vgt, tmp_path, verb):
    b = hostile.Builder()
    ch = b.channel()
    b.submit(ch, b.bind())
    b.add("CUDA_LAUNCH", b"\1\2\3")   # no verb here reads CUDA_LAUNCH; its fixed part is 64 bytes
    b.submit(ch, b.bind())
    path = b.write(tmp_path / "bad.vgt")
    extra = {"replay": ["--backend", "sim"], "db": ["-o", tmp_path / "bad.db"]}.get(verb, [])
    r = vgt(verb, path, *extra)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "CUDA_LAUNCH" in r.stderr and "shorter than its fixed part" in r.stderr, r.stderr
