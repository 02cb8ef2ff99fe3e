"""What counts as a launch and as a copy, in every tool: `vgt census`, `vgt decode`, `vgt db` and the
summary of `vgt replay` on a trace written here by hand.

- A launch is a compute dispatch that runs threads: grid x*y*z > 0 and block x*y*z > 0. A scheduled QMD
  with a zero grid or a zero block (CUDA schedules CTA-less QMDs only to order a stream's kernels) is an
  empty dispatch (census/db/replay `empty_dispatches`, event `EMPTY_DISPATCH`).
- A copy is a copy-engine LAUNCH_DMA that moves bytes: a DATA_TRANSFER_TYPE other than NONE and a
  non-zero size. A LAUNCH_DMA that only releases a semaphore (DATA_TRANSFER_TYPE NONE) or whose size is 0
  is an empty DMA (`empty_dmas`, event `EMPTY_DMA`).

QMD V04_00 fields (clcbc0qmd.h) and copy-engine methods (clc8b5.h) as in test_census.py.
"""
import collections
import json
import sqlite3
import struct

import pytest

import vgtrace
from conftest import run_vgt
from test_census import PB, gp_entry, qmd_v04

CH_CLIENT, CH_HANDLE, HOST = 1, 0x100, 0xC86F
SUB_COMPUTE, SUB_COPY = 1, 4
CLASSES = {SUB_COMPUTE: 0xCBC0, SUB_COPY: 0xC8B5}
MEM_VA = 0x7F00000000
QMD_VA = MEM_VA + 0x1000      # the kernel's QMD; the CTA-less one follows 0x200 later
PB_VA = 0x7E00000000
SRC_VA, DST_VA, SEM_VA = MEM_VA + 0x10000, MEM_VA + 0x20000, MEM_VA + 0x4000


def build(path):
    """One submission: a real launch by address (2x1x1 CTAs of 32), a zero-grid QMD by address (program 0,
    as CUDA's CTA-less QMDs), an inline QMD with a zero block; a 4096-byte copy, a semaphore-only LAUNCH_DMA,
    a LAUNCH_DMA of 0 bytes (pipelined, LINE_LENGTH_IN 0)."""
    kernel = qmd_v04((2, 1, 1), (32, 1, 1), 0x7F00100000, MEM_VA + 0x6000, 1)
    ctaless = qmd_v04((0, 0, 0), (1, 1, 1), 0, MEM_VA + 0x6010, 2)
    no_block = qmd_v04((4, 1, 1), (0, 0, 0), 0x7F00200000, MEM_VA + 0x6020, 3)
    pb = PB()
    for sc, cls in CLASSES.items():
        pb.inc(sc, 0x0000, [cls])
    for va in (QMD_VA, QMD_VA + 0x200):
        pb.inc(SUB_COMPUTE, 0x2B4, [va >> 8])
        pb.immd(SUB_COMPUTE, 0x2C0, 2)                          # SCHEDULE
    pb.inc(SUB_COMPUTE, 0x318, [(1 << 30), (MEM_VA + 0x8000) >> 8])   # 384-byte inline QMD
    pb.inc(SUB_COMPUTE, 0x320, list(struct.unpack("<96I", no_block)))
    pb.inc(SUB_COPY, 0x240, [SEM_VA >> 32, SEM_VA & 0xFFFFFFFF, 77])
    pb.inc(SUB_COPY, 0x400, [SRC_VA >> 32, SRC_VA & 0xFFFFFFFF, DST_VA >> 32, DST_VA & 0xFFFFFFFF, 0, 0, 4096, 1])
    pb.inc(SUB_COPY, 0x300, [0x182])                 # non-pipelined, pitch to pitch: 4096 bytes
    pb.inc(SUB_COPY, 0x300, [0x180 | (1 << 3)])      # DATA_TRANSFER_TYPE NONE, one-word release
    pb.inc(SUB_COPY, 0x418, [0])
    pb.inc(SUB_COPY, 0x300, [0x181])                 # pipelined, but LINE_LENGTH_IN 0: nothing moves
    data = pb.bytes()
    recs = [("CHANNEL", dict(client=CH_CLIENT, parent=0x10, handle=CH_HANDLE, **{"class": HOST}, ring_va=0x7D00000000,
                             entries=1024, engine_type=1), 1)]
    for i, (sc, cls) in enumerate(sorted(CLASSES.items())):
        recs.append(("ENGINE_OBJECT", {"client": CH_CLIENT, "channel": CH_HANDLE, "handle": 0x200 + i, "class": cls}, 2))
    recs.append(("GPU_MAP", dict(client=CH_CLIENT, device=0x20, va_space=0x30, memory=0x40, gpu_va=MEM_VA,
                                 length=1 << 20, source=4), 3))
    recs.append(("MEMORY", dict(gpu_va=QMD_VA, reason=0, memory=0x40, data=kernel + b"\0" * 128 + ctaless), 4))
    recs.append(("MEMORY", dict(gpu_va=SRC_VA, reason=0, memory=0x40, data=bytes(range(256)) * 16), 5))
    recs.append(("GPFIFO_SUBMIT", dict(client=CH_CLIENT, channel=CH_HANDLE, token=7, gp_put_before=0, gp_put_after=1,
                                       entries=[gp_entry(PB_VA, len(data) // 4)],
                                       segments=[{"gpu_va": PB_VA, "data": data}]), 10))
    vgtrace.write_trace(path, recs)


@pytest.fixture(scope="module")
def outs(vgt_bin, tmp_path_factory):
    """The hand-built trace through census --json and text, decode --jsonl and text, db, replay --json and
    text (sim)."""
    d = tmp_path_factory.mktemp("counts")
    path, db = d / "counts.vgt", d / "counts.sqlite"
    build(path)
    run = lambda *a: run_vgt(vgt_bin, *a, check=0).stdout
    run("db", path, "-o", db, "--quiet")
    lines = run("decode", path, "--jsonl").splitlines()
    return dict(census=json.loads(run("census", path, "--json"))["total"], census_text=run("census", path, "--total"),
                events=[json.loads(l) for l in lines if l.startswith('{"event"')], decode_text=run("decode", path),
                db=sqlite3.connect(db), replay=json.loads(run("replay", path, "--backend", "sim", "--json")),
                replay_text=run("replay", path, "--backend", "sim"))


def one(db, sql):
    return db.execute(sql).fetchone()


def test_zero_grid_or_block_qmd_is_not_a_launch(outs):
    c, db, r = outs["census"], outs["db"], outs["replay"]
    assert (c["launches"], c["empty_dispatches"], c["launch_threads"]) == (1, 2, 2 * 32), c
    assert "launches 1 (64 threads)  empty dispatches 2" in outs["census_text"], outs["census_text"]
    kinds = collections.Counter(e["event"] for e in outs["events"])
    assert kinds["LAUNCH"] == 1 and kinds["EMPTY_DISPATCH"] == 2, kinds
    launch = next(e for e in outs["events"] if e["event"] == "LAUNCH")
    assert launch["grid"] == [2, 1, 1] and launch["block"] == [32, 1, 1]
    empty = [e for e in outs["events"] if e["event"] == "EMPTY_DISPATCH"]
    assert sorted((e["grid"], e["block"]) for e in empty) == [([0, 0, 0], [1, 1, 1]), ([4, 1, 1], [0, 0, 0])]
    assert "EMPTY_DISPATCH qmd=" in outs["decode_text"]
    assert one(db, "SELECT count(*) FROM launches") == (1,)
    assert one(db, "SELECT count(*) FROM empty_dispatches") == (2,)
    assert one(db, "SELECT count(*) FROM empty_dispatches t JOIN events e ON e.id = t.event "
                   "WHERE e.kind = 'EMPTY_DISPATCH'") == (2,)
    assert one(db, "SELECT grid_x, block_x, program_va FROM empty_dispatches WHERE inline = 0") == (0, 1, 0)
    assert one(db, "SELECT launches, empty_dispatches FROM submission_summary") == (1, 2)
    assert one(db, "SELECT launches, ctas FROM compute_submissions") == (1, 2)
    assert r["faults"] == 0 and (r["launches"], r["empty_dispatches"]) == (1, 2), r
    assert "launches 1; empty dispatches 2;" in outs["replay_text"], outs["replay_text"]


def test_launch_dma_moving_no_bytes_is_not_a_copy(outs):
    c, db, r = outs["census"], outs["db"], outs["replay"]
    assert (c["copies"], c["empty_dmas"], c["copy_bytes"]) == (1, 2, 4096), c
    assert "copies 1 (4096 bytes)  empty DMAs 2" in outs["census_text"], outs["census_text"]
    evs = outs["events"]
    assert [e["bytes"] for e in evs if e["event"] == "COPY"] == [4096]
    assert [e["bytes"] for e in evs if e["event"] == "EMPTY_DMA"] == [0, 0]
    assert "EMPTY_DMA " in outs["decode_text"]
    # the semaphore-only DMA still releases its semaphore
    assert [e["payload"] for e in evs if e["event"] == "SEM_RELEASE" and e["source"] == "copy"] == [77]
    assert one(db, "SELECT count(*) FROM copies") == (1,)
    assert one(db, "SELECT count(*) FROM empty_dmas") == (2,)
    assert one(db, "SELECT count(*) FROM empty_dmas t JOIN events e ON e.id = t.event WHERE e.kind = 'EMPTY_DMA'") == (2,)
    assert one(db, "SELECT copies, empty_dmas FROM submission_summary") == (1, 2)
    # a DMA that moved nothing wrote nothing: only the copy and the releases are writes
    assert db.execute("SELECT how, bytes FROM writes WHERE how NOT LIKE 'semaphore:%'").fetchall() == [("copy", 4096)]
    assert r["faults"] == 0 and (r["copies"], r["empty_dmas"]) == (1, 2), r
    assert "copies 1 (4096 bytes, 0 memsets); empty DMAs 2" in outs["replay_text"], outs["replay_text"]
