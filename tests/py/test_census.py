"""`vgt census` on traces whose content is known: one written here by hand with vgtpy (every event kind,
counts computed from what was written), and `vgt synth` traces whose push buffers are decoded again
here, independently of the C decoder, to count what census must find.

Method offsets and field encodings (NVIDIA open-gpu-doc class headers, see analyze/src/events_table.c):
host C86F SEM_ADDR_LO 0x5c .. SEM_EXECUTE 0x6c; compute CBC0 SEND_PCAS_A 0x2b4, SEND_SIGNALING_PCAS2_B
0x2c0, SET_INLINE_QMD_ADDRESS_A/B 0x318/0x31c, LOAD_INLINE_QMD_DATA 0x320; I2M A140 0x180..0x1b4; copy
C8B5 LAUNCH_DMA 0x300, offsets 0x400..0x41c; 3D CB97 BEGIN 0x1618, END 0x1614, DRAW_VERTEX_ARRAY 0xd78,
SET_PIPELINE_* 0x2000 + 64j, SET_REPORT_SEMAPHORE_A-D 0x1b00..0x1b0c.
"""
import json
import struct

import vgtrace

CH_CLIENT, CH_HANDLE, HOST = 1, 0x100, 0xC86F
SUB_3D, SUB_COMPUTE, SUB_I2M, SUB_COPY = 0, 1, 2, 4
CLASSES = {SUB_3D: 0xCB97, SUB_COMPUTE: 0xCBC0, SUB_I2M: 0xA140, SUB_COPY: 0xC8B5}
MEM_VA = 0x7F00000000
QMD_VA = MEM_VA + 0x1000          # two QMDs by address, 256-byte aligned
QMD_UNKNOWN_VA = 0x5500000000     # a QMD the trace never captured
PB_VA = 0x7E00000000


def set_bits(b, hi, lo, v):
    for bit in range(lo, hi + 1):
        if (v >> (bit - lo)) & 1:
            b[bit >> 3] |= 1 << (bit & 7)


def qmd_v04(grid, block, program, release_va, payload):
    """A QMD V04_00 (clcbc0qmd.h): grid 1055:1024.., block 1167:1152.., program 1247:1216, release 0."""
    q = bytearray(384)
    set_bits(q, 583, 580, 4)
    set_bits(q, 1055, 1024, grid[0]); set_bits(q, 1071, 1056, grid[1]); set_bits(q, 1103, 1088, grid[2])
    set_bits(q, 1167, 1152, block[0]); set_bits(q, 1183, 1168, block[1]); set_bits(q, 1199, 1184, block[2])
    set_bits(q, 1247, 1216, program & 0xFFFFFFFF); set_bits(q, 1272, 1248, program >> 32)
    set_bits(q, 320, 320, 1); set_bits(q, 322, 321, 1)
    set_bits(q, 671, 640, release_va & 0xFFFFFFFF); set_bits(q, 696, 672, release_va >> 32)
    set_bits(q, 735, 704, payload)
    return bytes(q)


class PB:
    """A push buffer under construction, and the methods it holds (subch, method, data) in order."""

    def __init__(self):
        self.dw, self.methods = [], []

    def inc(self, sc, m, data):
        self.dw.append((1 << 29) | (len(data) << 16) | (sc << 13) | (m >> 2))
        self.dw += data
        self.methods += [(sc, m + 4 * i, d) for i, d in enumerate(data)]

    def noninc(self, sc, m, data):
        self.dw.append((3 << 29) | (len(data) << 16) | (sc << 13) | (m >> 2))
        self.dw += data
        self.methods += [(sc, m, d) for d in data]

    def immd(self, sc, m, v):
        self.dw.append((4 << 29) | (v << 16) | (sc << 13) | (m >> 2))
        self.methods.append((sc, m, v))

    def bytes(self):
        return struct.pack("<%dI" % len(self.dw), *self.dw)

    def per_class(self, bound):
        """Methods per class; bound (subchannel -> class) carries SET_OBJECT across submissions."""
        out = {}
        for sc, m, d in self.methods:
            if m == 0:
                bound[sc] = d & 0xFFFF
            cls = HOST if m < 0x100 else bound.get(sc, 0)
            out[cls] = out.get(cls, 0) + 1
        return out


def gp_entry(va, ndw):
    return (va & 0xFFFFFFFC) | (((va >> 32) & 0xFF) | (ndw << 10)) << 32


def submission_0(pb):
    """Bindings, host semaphores (4 releases, 1 acquire), two I2M uploads (8 and 12 bytes)."""
    for sc, cls in CLASSES.items():
        pb.inc(sc, 0x0000, [cls])
    for i in range(4):
        pb.inc(0, 0x5C, [0x2000 + 16 * i, 0x7F, i + 1, 0, 0x01100001])   # RELEASE, WFI, 64-bit
    pb.inc(0, 0x5C, [0x2000, 0x7F, 4, 0, 0x01000002])                   # ACQ_STRICT_GEQ, 64-bit
    for n, va in ((8, 0x3000), (12, 0x3100)):
        pb.inc(SUB_I2M, 0x180, [n, 1, 0x7F, va, n])
        pb.inc(SUB_I2M, 0x1B0, [1])
        pb.noninc(SUB_I2M, 0x1B4, list(range(0x11, 0x11 + n // 4)))


def submission_1(pb, inline_qmd):
    """3 launches by address (2 known QMDs, 1 unknown), 2 inline launches, 1 copy with a release, a
    program bind, 2 draws (one with 2 instances), a report semaphore release."""
    for k in range(2):
        pb.inc(SUB_COMPUTE, 0x2B4, [(QMD_VA + 0x200 * k) >> 8])
        pb.immd(SUB_COMPUTE, 0x2C0, 3)      # INVALIDATE_COPY_SCHEDULE
    pb.inc(SUB_COMPUTE, 0x2B4, [QMD_UNKNOWN_VA >> 8])
    pb.immd(SUB_COMPUTE, 0x2C0, 9)          # PREFETCH_SCHEDULE
    words = list(struct.unpack("<96I", inline_qmd))
    for k in range(2):
        pb.inc(SUB_COMPUTE, 0x318, [(1 << 30), (MEM_VA + 0x8000 + 0x200 * k) >> 8])
        pb.inc(SUB_COMPUTE, 0x320, words)
    pb.inc(SUB_COPY, 0x240, [0x7F, 0x4000, 77])
    pb.inc(SUB_COPY, 0x400, [0x7F, 0x10000, 0x7F, 0x20000, 0, 0, 4096, 1])
    pb.inc(SUB_COPY, 0x300, [0x182 | (1 << 3)])       # non-pipelined, pitch to pitch, one-word release
    pb.inc(SUB_3D, 0x2000 + 64, [0x11])
    pb.inc(SUB_3D, 0x2014 + 64, [0x7F, 0x9000])
    for inst in range(2):
        pb.inc(SUB_3D, 0x1618, [4 | ((1 << 26) if inst else 0)])
        pb.inc(SUB_3D, 0x0D74, [0, 3])
        pb.inc(SUB_3D, 0x1614, [0])
    pb.inc(SUB_3D, 0x17C8, [0x7F, 0xA000])
    pb.inc(SUB_3D, 0x17D8, [2])
    pb.inc(SUB_3D, 0x1618, [4])
    pb.inc(SUB_3D, 0x17DC, [0, 36])
    pb.inc(SUB_3D, 0x1614, [0])
    pb.inc(SUB_3D, 0x1B00, [0x7F, 0x5000, 9, 1 << 28])


EXPECTED = [
    dict(launches=0, draws=0, program_binds=0, uploads=2, upload_bytes=20, copies=0, copy_bytes=0,
         sem_releases=4, sem_acquires=1, reports=0),
    dict(launches=5, draws=2, program_binds=1, uploads=0, upload_bytes=0, copies=1, copy_bytes=4096,
         # 2 known QMDs + 2 inline QMDs release, 1 copy release, 1 report release
         sem_releases=6, sem_acquires=0, reports=0),
]


def build_trace(path):
    """Write the hand-built trace; returns ([PB of submission 0, 1], qmd bytes by address)."""
    qmds = [qmd_v04((8 + k, 1, 1), (64, 1, 1), 0x7F00100000, MEM_VA + 0x6000 + 16 * k, k + 1) for k in range(2)]
    inline = qmd_v04((1024, 1, 1), (128, 1, 1), 0x7F00200000, MEM_VA + 0x7000, 5)
    pbs = [PB(), PB()]
    submission_0(pbs[0])
    submission_1(pbs[1], inline)
    recs = [
        ("CHANNEL", dict(client=CH_CLIENT, parent=0x10, handle=CH_HANDLE, **{"class": HOST}, ring_va=0x7D00000000,
                         entries=1024, engine_type=1), 1),
    ]
    for i, (sc, cls) in enumerate(sorted(CLASSES.items())):
        recs.append(("ENGINE_OBJECT", {"client": CH_CLIENT, "channel": CH_HANDLE, "handle": 0x200 + i, "class": cls}, 2))
    recs.append(("GPU_MAP", dict(client=CH_CLIENT, device=0x20, va_space=0x30, memory=0x40, gpu_va=MEM_VA,
                                 length=1 << 20, source=4), 3))
    recs.append(("MEMORY", dict(gpu_va=QMD_VA, reason=0, memory=0x40, data=qmds[0] + b"\0" * 128 + qmds[1]), 4))
    for k, pb in enumerate(pbs):
        data = pb.bytes()
        va = PB_VA + 0x100000 * k
        recs.append(("GPFIFO_SUBMIT", dict(client=CH_CLIENT, channel=CH_HANDLE, token=7, gp_put_before=k,
                                           gp_put_after=k + 1, entries=[gp_entry(va, len(data) // 4)],
                                           segments=[{"gpu_va": va, "data": data}]), 10 + k))
    vgtrace.write_trace(path, recs)
    return pbs, qmds


def census_json(vgt, *args):
    r = vgt("census", *args, "--json", check=0)
    return json.loads(r.stdout)


def test_census_hand_built_trace(vgt, tmp_path):
    path = tmp_path / "hand.vgt"
    pbs, _ = build_trace(path)
    doc = census_json(vgt, path)
    subs = doc["submissions"]
    assert len(subs) == 2
    bound = {}
    for k, (got, want) in enumerate(zip(subs, EXPECTED)):
        assert got["index"] == k and got["channel"] == CH_HANDLE
        for key, val in want.items():
            assert got[key] == val, f"submission {k}: {key} = {got[key]}, expected {val}"
        assert got["methods"] == len(pbs[k].methods)
        per_class = {v["class"]: v["methods"] for v in got["classes"].values()}
        assert per_class == pbs[k].per_class(bound)
    total = doc["total"]
    assert total["submissions"] == 2
    assert total["launches"] == 5 and total["draws"] == 2 and total["copies"] == 1
    assert total["sem_releases"] == 10 and total["sem_acquires"] == 1
    assert total["upload_bytes"] == 20 and total["copy_bytes"] == 4096
    assert total["methods"] == sum(len(p.methods) for p in pbs)
    # threads of the 4 decoded launches: 2 by address (8 and 9 CTAs of 64) + 2 inline (1024 x 128)
    assert total["launch_threads"] == 8 * 64 + 9 * 64 + 2 * 1024 * 128
    assert total["push_buffer_bytes"] == sum(len(p.bytes()) for p in pbs)


def test_census_filters_and_text(vgt, tmp_path):
    path = tmp_path / "hand.vgt"
    build_trace(path)
    one = census_json(vgt, path, "--submits", "1")
    assert [s["index"] for s in one["submissions"]] == [1]
    assert one["total"]["launches"] == 5 and one["total"]["uploads"] == 0
    none = census_json(vgt, path, "--channel", "0x999")
    assert none["submissions"] == [] and none["total"]["methods"] == 0
    text = vgt("census", path, check=0).stdout
    assert "submission 1 seq" in text and "launches 5" in text
    assert "HOPPER_COMPUTE_A" in text or "CBC0" in text
    assert "semaphore releases 10  acquires 1" in text
    tot = vgt("census", path, "--total", check=0).stdout
    assert not tot.startswith("submission") and "total: 2 submissions" in tot


def test_census_errors(vgt, tmp_path):
    assert vgt("census", tmp_path / "missing.vgt").returncode == 2
    assert vgt("census").returncode == 2
    assert vgt("census", "--bogus", "x").returncode == 2
    assert vgt("census", "--help", check=0).stdout.startswith("usage: vgt census")
    bad = tmp_path / "bad.vgt"
    path = tmp_path / "hand.vgt"
    build_trace(path)
    data = path.read_bytes()
    bad.write_bytes(data[: len(data) // 2])      # cut inside a chunk
    r = vgt("census", bad)
    assert r.returncode in (1, 2) and "vgt census:" in r.stderr


def decode_pb(data, bound, host_cls):
    """Independent decoder (INC/NONINC/IMMD/ONEINC, SET_OBJECT) of one segment: yields (cls, mthd, data)."""
    dw = struct.unpack("<%dI" % (len(data) // 4), data)
    i = 0
    while i < len(dw):
        h = dw[i]; i += 1
        op, count, sc, m = h >> 29, (h >> 16) & 0x1FFF, (h >> 13) & 7, (h & 0xFFF) << 2
        if op == 4:
            items = [(m, count)]
        elif op in (1, 3, 5):
            vals = dw[i:i + count]; i += count
            items = [((m + 4 * k) if op == 1 else (m if op == 3 or k == 0 else m + 4), v)
                     for k, v in enumerate(vals)]
        else:
            continue
        for mm, v in items:
            if mm == 0:
                bound[sc] = v & 0xFFFF
            yield (host_cls if mm < 0x100 else bound.get(sc, 0)), mm, v


def expected_from_trace(path):
    """Count launches, copies, uploads and host releases from the push buffers, in Python."""
    t = vgtrace.read_trace(path)
    host = {}
    bound = {}
    n = dict(launches=0, copies=0, uploads=0, host_releases=0, methods=0)
    for r in t.records:
        f = vgtrace.decode_payload(r.type, r.payload, r.seq)
        if r.type == 0x0021:
            host[(f["client"], f["handle"])] = f["class"]
        if r.type != 0x0023:
            continue
        b = bound.setdefault((f["client"], f["channel"]), {})
        for seg in f["segments"]:
            for cls, m, v in decode_pb(seg["data"], b, host.get((f["client"], f["channel"]), 0)):
                n["methods"] += 1
                if cls & 0xFF == 0xC0 and m == 0x2C0 and (v & 0xF) in (2, 3, 9, 10, 11):
                    n["launches"] += 1
                elif cls & 0xFF == 0xB5 and m == 0x300:
                    n["copies"] += 1
                elif m == 0x1B0 and (cls & 0xFF in (0xC0, 0x97) or cls == 0xA140):
                    n["uploads"] += 1
                elif cls & 0xFF == 0x6F and m == 0x6C and (v & 7) in (1, 6):
                    n["host_releases"] += 1
    return n


def test_census_matches_synth(vgt, synth):
    path = synth("census_mixed", "--shape", "mixed", "--submits", "40", "--channels", "3", "--seed", "5")
    want = expected_from_trace(path)
    assert want["launches"] > 0 and want["copies"] > 0 and want["uploads"] > 0
    total = census_json(vgt, path)["total"]
    assert total["launches"] == want["launches"]
    assert total["copies"] == want["copies"]
    assert total["uploads"] == want["uploads"]
    assert total["methods"] == want["methods"]
    # every copy and every synth QMD releases a semaphore, besides the host releases
    assert total["sem_releases"] == want["host_releases"] + want["copies"] + want["launches"]
