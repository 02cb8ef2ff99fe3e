"""`vgt synth`, checked by the Python twin: deterministic, says it is synthetic, holds the objects and
record types it promises, and its push buffers are valid method streams whose effects (executed here by a
small independent interpreter) equal the "observed" MEMORY records it writes after each submission."""
import struct

import pytest

import vgtrace
from vgtrace import spec
from vgtrace.fold import Fold

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code


def test_deterministic_for_a_seed(vgt, tmp_path):
    a, b, c = tmp_path / "a.vgt", tmp_path / "b.vgt", tmp_path / "c.vgt"
    vgt("synth", "-o", a, "--seed", "9", "--submits", "6", check=0)
    vgt("synth", "-o", b, "--seed", "9", "--submits", "6", check=0)
    vgt("synth", "-o", c, "--seed", "10", "--submits", "6", check=0)
    d = tmp_path / "d.vgt"
    vgt("synth", "-o", d, "--seed", "9", "--submits", "6", "--threads", "2", check=0)   # compression workers
    assert a.read_bytes() == b.read_bytes() == d.read_bytes()
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize("shape", ["pushbuf", "mixed", "all-types"])
def test_every_shape_verifies(synth, vgt, shape):
    path = synth(f"verify-{shape}", "--shape", shape, "--submits", "20", "--channels", "4", "--chunk-size", "64K")
    assert "ok" in vgt("verify", path, check=0).stdout


def test_usage_errors(vgt, tmp_path):
    for args in (["--submits", "3"], ["-o", tmp_path / "x.vgt", "--shape", "bogus"],
                 ["-o", tmp_path / "x.vgt", "--channels", "0"], ["-o", tmp_path / "x.vgt", "--bytes", "12Q"],
                 ["-o", tmp_path / "x.vgt", "--memory-pages", "2"], ["-o", tmp_path / "x.vgt", "--seed"]):
        r = vgt("synth", *args)
        assert r.returncode == 2 and r.stderr.strip(), args
    r = vgt("synth", "-o", tmp_path / "no" / "such" / "dir.vgt")
    assert r.returncode == 2 and "dir.vgt" in r.stderr


def test_says_it_is_synthetic(synth, vgt):
    t = vgtrace.read_trace(synth("ident", "--submits", "2"))
    assert t.identity["capture_mode"] == "synthetic"
    assert t.identity["producer"] == "vgt synth"
    assert "capture_mode" in vgt("info", synth("ident", "--submits", "2"), check=0).stdout


def test_all_types_shape_has_every_record_type(synth):
    t = vgtrace.read_trace(synth("all", "--shape", "all-types", "--submits", "5"))
    have = {r.name for r in t.records}
    want = {layout.name for layout in spec.LAYOUTS} - {"MEMORY_CAS"}   # read back as MEMORY (test_memcas.py)
    assert have >= want, sorted(want - have)


def test_objects_channels_and_engines(synth):
    t = vgtrace.read_trace(synth("objs", "--channels", "3", "--submits", "6"))
    by = lambda name: [r.fields for r in t.records if r.name == name]
    classes = {f["class"] for f in by("RM_ALLOC")}
    assert {0x41, 0x80, 0x2080, 0x90F1, 0xA06C} <= classes
    chans = by("CHANNEL")
    assert len(chans) == 3 and {c["class"] for c in chans} == {0xC86F}
    for c in chans:
        engines = {e["class"] for e in by("ENGINE_OBJECT") if e["channel"] == c["handle"]}
        assert engines == {0xCBC0, 0xC8B5, 0xCB97, 0xA140}
    tokens = {w["channel"]: w["token"] for w in by("WORK_SUBMIT_TOKEN")}
    assert set(tokens) == {c["handle"] for c in chans}
    for s in by("GPFIFO_SUBMIT"):
        assert tokens[s["channel"]] == s["token"]
    mapped = {(m["memory"]) for m in by("GPU_MAP")}
    assert {m["handle"] for m in by("MEM_ALLOC")} == mapped


def test_bytes_sizes_the_trace(synth):
    path = synth("sized", "--shape", "pushbuf", "--bytes", "3M")
    t = vgtrace.read_trace(path)
    total = sum(spec.RECORD_HEADER_SIZE + spec.pad8(r.length) for r in t.records)
    assert 3 << 20 <= total < (3 << 20) + (256 << 10), total
    mems = [r for r in t.records if r.name == "MEMORY"]
    assert mems and all(r.fields["length"] == 4096 for r in mems)


# ---- an independent interpreter for the methods synth emits (nvidia-rm-userspace.md §3-§4) ----

def methods(data):
    """(subch, method, value) of a method stream; asserts the headers are valid and fit the segment."""
    dw = struct.unpack("<%dI" % (len(data) // 4), data)
    i = 0
    while i < len(dw):
        h = dw[i]
        sec, count, subch, mthd = h >> 29, (h >> 16) & 0x1FFF, (h >> 13) & 7, (h & 0xFFF) << 2
        if sec == 4:                      # IMMD
            yield subch, mthd, count
            i += 1
            continue
        assert sec in (1, 3, 5), f"SEC_OP {sec} in header {h:#010x} at dword {i}"
        assert i + 1 + count <= len(dw), f"count {count} at dword {i} runs past {len(dw)} dwords"
        for k in range(count):
            m = mthd + 4 * k if sec == 1 else (mthd if sec == 3 or k == 0 else mthd + 4)
            yield subch, m, dw[i + 1 + k]
        i += 1 + count


class Interpreter:
    def __init__(self, fold):
        self.mem = fold
        self.bound = {}     # (channel, subch) -> class
        self.regs = {}      # (channel, subch, method) -> value
        self.i2m = {}       # (channel, subch) -> [va, remaining bytes, bytearray]
        self.launches = 0

    def read(self, va, n):
        out = bytearray()
        for k in range(n):
            page = self.mem.pages.get((va + k) & ~4095)
            assert page and page[1][(va + k) & 4095], f"read of unknown byte {va + k:#x}"
            out.append(page[0][(va + k) & 4095])
        return bytes(out)

    def run(self, ch, data):
        for subch, m, v in methods(data):
            r = lambda mm: self.regs.get((ch, subch, mm), 0)
            self.regs[(ch, subch, m)] = v
            if m == 0:
                self.bound[(ch, subch)] = v & 0xFFFF
            elif m == 0x6C and v & 7 == 1:                         # host SEM_EXECUTE release
                va = (r(0x60) & 0x1FFFFFF) << 32 | (r(0x5C) & ~3)
                n = 8 if v >> 24 & 1 else 4
                self.mem.write(va, struct.pack("<Q", r(0x68) << 32 | r(0x64))[:n])
            elif m < 0x100:
                continue
            else:
                self.engine(ch, subch, self.bound.get((ch, subch)), m, v, r)

    def engine(self, ch, subch, cls, m, v, r):
        assert cls, f"method {m:#x} on unbound subchannel {subch}"
        if cls in (0xA140, 0xCBC0) and m == 0x1B0:                   # I2M LAUNCH_DMA
            self.i2m[(ch, subch)] = [(r(0x188) & 0x1FFFFFF) << 32 | r(0x18C), r(0x180) * r(0x184), bytearray()]
        elif cls in (0xA140, 0xCBC0) and m == 0x1B4:                 # LOAD_INLINE_DATA
            st = self.i2m[(ch, subch)]
            st[2] += struct.pack("<I", v)
            if len(st[2]) >= st[1]:
                self.mem.write(st[0], bytes(st[2][:st[1]]))
        elif cls == 0xCBC0 and m == 0x2B4:                           # SEND_PCAS_A
            qmd = self.read(v << 8, 384)
            assert qmd[72] >> 4 == 4, "QMD major version is not 4"
            self.launches += 1
        elif cls == 0xC8B5 and m == 0x300:                           # copy LAUNCH_DMA
            src = (r(0x400) & 0x1FFFFFF) << 32 | r(0x404)
            dst = (r(0x408) & 0x1FFFFFF) << 32 | r(0x40C)
            self.mem.write(dst, self.read(src, r(0x418) * r(0x41C)))
            if v >> 3 & 3 == 1:
                self.mem.write((r(0x240) & 0x1FFFFFF) << 32 | r(0x244), struct.pack("<I", r(0x248)))


@pytest.mark.parametrize("shape", ["mixed", "all-types", "pushbuf"])
def test_push_buffers_execute_to_the_observed_memory(synth, shape):
    t = vgtrace.read_trace(synth(f"exec-{shape}", "--shape", shape, "--submits", "40", "--channels", "2",
                               "--memory-pages", "16", "--seed", "3"))
    fold = Fold()
    run = Interpreter(fold)
    observed = 0
    for rec in t.records:
        f = rec.fields
        if rec.type == SUBMIT:
            fold.apply(rec)
            segs = {(s["gpu_va"], s["length"]): s["data"] for s in f["segments"]}
            assert f["entry_count"] == len(f["entries"]) >= 1
            for e in f["entries"]:
                va = (e & 0xFFFFFFFC) | ((e >> 32) & 0xFF) << 32
                ndw = (e >> 42) & 0x1FFFFF
                assert (va, 4 * ndw) in segs, f"seq {rec.seq}: entry {e:#x} points at no segment"
                run.run(f["channel"], segs[(va, 4 * ndw)])
        elif rec.name == "MEMORY" and f["reason"] == 2:
            assert run.read(f["gpu_va"], f["length"]) == f["data"], f"seq {rec.seq}: observed memory differs"
            observed += 1
        elif f is not None:
            fold.apply(rec)
    if shape != "pushbuf":
        assert observed >= 40 and run.launches >= 1
