"""The reference device model end to end: guest activity rebuilt from a corpus trace, recorded by
capture/examples/devmodel through the page-table walker and the freestanding encoder, packed by
`vgt ingest`, and compared with the original submission by submission.

The test plays the guest: it gives the trace's mappings physical pages in a guest-memory image (system
memory, and video memory for what the trace allocated there), writes GPU page tables for them with a small
page-table writer of its own (below: MMU format version 2 as on Turing, or version 3 as on Hopper; 2 MiB,
64 KiB and 4 KiB pages), and turns the trace's records into events: objects, channels, mappings, the
memory the CPU wrote, and for each submission the push buffers and ring entries written to memory and the
doorbell. The device model sees only guest memory and those host-visible events.

The Turing variant rewrites the trace as a Turing guest would have made it: channel class C46F
(TURING_CHANNEL_GPFIFO_A), 3D class C597 (TURING_A), compute C5C0 and copy C5B5, in the objects and in the
SET_OBJECT methods of the push buffers; the ingested trace must decode to the same methods and replay on
the sim backend. A Turing compute guest (vadd, its QMDs re-encoded as V02_02) replays through lane 2 with its
synthesized QMDs in V02_02 (test_devmodel_turing_compute_guest).
"""
import ctypes
import hashlib
import json
import re
import struct
import subprocess

import pytest

from conftest import REPO
from vgtrace import reader

PAGE = 4096
BIG = 1 << 16
HUGE = 1 << 21

# Turing classes for the Hopper/Ampere ones of the corpus traces (the guests of the users are Turing).
TURING = {0xC56F: 0xC46F, 0xC86F: 0xC46F, 0xCB97: 0xC597, 0xC797: 0xC597, 0xCBC0: 0xC5C0, 0xC7C0: 0xC5C0,
          0xC8B5: 0xC5B5, 0xC7B5: 0xC5B5}

EV = dict(WRITE=1, OBJECT=2, FREE=3, VASPACE=4, CHANNEL=5, ENGINE=6, MAP=7, UNMAP=8, DOORBELL=9,
          COMPLETION=10, MARKER=11)
VIDMEM, SYSMEM = 0, 2          # PTE apertures (dev_mmu: 0 video memory, 2 system coherent)
PDE_VID, PDE_SYS = 1, 2        # PDE apertures (1 video memory, 2 system coherent)
V2_TURING, V3_HOPPER = 1, 3    # vgt/mmu.h format ids


class PageTables:
    """A page-table writer for a guest's VA space, from the manuals (not from the walker):
    version 2 (open-gpu-doc manuals/turing/tu104/dev_mmu.ref.txt, NV_MMU_VER2_*): PDE aperture 2:1 and
    address 53:8 (>> 12); dual PDE big half aperture 2:1, address 53:4 (>> 8), small half aperture 66:65,
    address 117:72 (>> 12); PTE valid 0, aperture 2:1, VOL 3, address 53:8 (>> 12).
    version 3 (open-gpu-kernel-modules hopper/gh100/dev_mmu.h, NV_MMU_VER3_*): PDE aperture 2:1, address
    51:12; dual PDE big address 51:8 (>> 8), small half aperture 66:65, address 115:76; PTE valid 0,
    aperture 2:1, PCF 7:3 (1: uncached), address 51:12.
    Levels (nvidia-uvm uvm_turing_mmu.c, uvm_hopper_mmu.c): v2 48:47, 46:38, 37:29, 28:21 (dual), 20:12;
    v3 56:56, 55:47, 46:38, 37:29, 28:21 (dual), 20:12. Big pages are 64 KiB (PT index 20:16)."""

    def __init__(self, version, ram, alloc):
        self.v = version
        self.ram = ram            # bytearray of system memory: the tables live there
        self.alloc = alloc        # alloc(size, align) -> physical address in system memory
        self.dirs = [(48, 47), (46, 38), (37, 29)] if version == 2 else [(56, 56), (55, 47), (46, 38), (37, 29)]
        self.root = alloc(PAGE, PAGE)

    def _w(self, pa, v):
        self.ram[pa:pa + 8] = struct.pack("<Q", v)

    def _r(self, pa):
        return struct.unpack_from("<Q", self.ram, pa)[0]

    def pde(self, pa):
        return PDE_SYS << 1 | ((pa >> 12) << 8 if self.v == 2 else pa)

    def pte(self, ap, pa, vol=0):
        return 1 | ap << 1 | vol << 3 | ((pa >> 12) << 8 if self.v == 2 else pa)

    def _pd0(self, va):
        """Physical address of va's dual PDE, creating the directories above it."""
        table = self.root
        for hi, lo in self.dirs:
            slot = table + 8 * ((va >> lo) & ((2 << (hi - lo)) - 1))
            e = self._r(slot)
            if not e:
                nxt = self.alloc(PAGE, PAGE)
                self._w(slot, self.pde(nxt))
                e = self._r(slot)
            table = (e >> 8 & ((1 << 46) - 1)) << 12 if self.v == 2 else e & 0x000FFFFFFFFFF000
        return table + 16 * ((va >> 21) & 0xFF)

    def map_huge(self, va, ap, pa):
        self._w(self._pd0(va), self.pte(ap, pa))

    def _pt(self, va, big):
        slot = self._pd0(va)
        lo, hi = self._r(slot), self._r(slot + 8)
        if big:
            if not lo & 6:
                t = self.alloc(256, 256)
                lo = PDE_SYS << 1 | ((t >> 8) << 4 if self.v == 2 else t)
                self._w(slot, lo)
            return (lo >> 4 & ((1 << 50) - 1)) << 8 if self.v == 2 else lo & 0x000FFFFFFFFFFF00
        if not hi & 6:
            t = self.alloc(PAGE, PAGE)
            hi = PDE_SYS << 1 | ((t >> 12) << 8 if self.v == 2 else t)
            self._w(slot + 8, hi)
        return (hi >> 8 & ((1 << 46) - 1)) << 12 if self.v == 2 else hi & 0x000FFFFFFFFFF000

    def map_big(self, va, ap, pa):
        self._w(self._pt(va, True) + 8 * ((va >> 16) & 0x1F), self.pte(ap, pa))

    def map_small(self, va, ap, pa, vol=0):
        self._w(self._pt(va, False) + 8 * ((va >> 12) & 0x1FF), self.pte(ap, pa, vol))


class Guest:
    """Guest memory (system and video), its page tables for the trace's mappings, and the events."""

    def __init__(self, trace, version):
        self.trace = trace
        self.sys = bytearray(1 << 20)     # the first MiB stays unused
        self.vid = bytearray(1 << 20)
        self.events = bytearray()
        self.pages = {}                    # VA page -> (aperture, physical page)
        mem_aperture = {}
        for r in trace.records:
            if r.name == "MEM_ALLOC" and r.fields["status"] == 0:
                mem_aperture[(r.fields["client"], r.fields["handle"])] = r.fields["aperture"]
        va_ap = {}
        for r in trace.records:
            if r.name == "GPU_MAP" and r.fields["status"] == 0:
                f = r.fields
                ap = VIDMEM if mem_aperture.get((f["client"], f["memory"])) == 2 else SYSMEM
                for va in range(f["gpu_va"] & ~(PAGE - 1), f["gpu_va"] + f["length"], PAGE):
                    va_ap.setdefault(va, ap)
        self.pt = PageTables(version, self.sys, lambda n, a: self._alloc(SYSMEM, n, a))
        self.sizes = {"2M": 0, "64K": 0, "4K": 0}
        done = set()
        for va in sorted(va_ap):
            if va in done:
                continue
            ap = va_ap[va]
            for size, mapper in ((HUGE, self.pt.map_huge), (BIG, self.pt.map_big), (PAGE, self.pt.map_small)):
                base = va & ~(size - 1)
                if base == va and all(va_ap.get(base + k) == ap for k in range(0, size, PAGE)):
                    pa = self._alloc(ap, size, size)
                    mapper(va, ap, pa)
                    for k in range(0, size, PAGE):
                        self.pages[va + k] = (ap, pa + k)
                        done.add(va + k)
                    self.sizes[{HUGE: "2M", BIG: "64K", PAGE: "4K"}[size]] += 1
                    break

    def _alloc(self, ap, n, align):
        mem = self.vid if ap == VIDMEM else self.sys
        pa = (len(mem) + align - 1) & ~(align - 1)
        mem.extend(bytes(pa + n - len(mem)))
        return pa

    def event(self, kind, ts, payload):
        self.events += struct.pack("<IIQ", EV[kind], len(payload), ts) + payload

    def write_va(self, ts, va, data):
        """The guest CPU writes data at GPU VA va: into memory now, and as WRITE events for the device model
        (whose dirty log then sees the pages)."""
        pos = 0
        while pos < len(data):
            page, off = (va + pos) & ~(PAGE - 1), (va + pos) & (PAGE - 1)
            n = min(PAGE - off, len(data) - pos)
            if page in self.pages:
                ap, pa = self.pages[page]
                self.event("WRITE", ts, struct.pack("<IIQ", ap, 0, pa + off) + bytes(data[pos:pos + n]))
            pos += n


def set_object_patches(vgt, path):
    """{(seq, data dword VA): class} of the SET_OBJECT methods of a trace, from `vgt decode --jsonl`."""
    out = vgt("decode", "--jsonl", "--no-fields", "--no-events", path).stdout.splitlines()
    entry_va, patches = {}, {}
    for line in out:
        j = json.loads(line)
        if j["type"] == "entry":
            entry_va[(j["seq"], j["entry"])] = j["va"]
        elif j["type"] == "method" and j["mthd"] == 0 and j["class"] & 0xFF == 0x6F:   # host SET_OBJECT
            patches[(j["seq"], entry_va[(j["seq"], j["entry"])] + 4 * j["dword"])] = j["data"]
    return patches


def build_events(vgt, path, version, turing, extra=None):
    trace = reader.read_trace(path)
    g = Guest(trace, 2 if version == V2_TURING else 3)
    cls = (lambda c: TURING.get(c, c)) if turing else (lambda c: c)
    patches = set_object_patches(vgt, path) if turing else {}
    g.event("VASPACE", 0, struct.pack("<IIQII", 0, SYSMEM, g.pt.root, version, 16))
    channels = {}
    for r in trace.records:
        f, t = r.fields, r.ts
        if f is None:
            continue
        if r.name == "RM_ALLOC" and f["status"] == 0:
            g.event("OBJECT", t, struct.pack("<4I", f["client"], f["parent"], f["handle"], cls(f["class"])))
        elif r.name == "RM_FREE":
            g.event("FREE", t, struct.pack("<4I", f["client"], f["parent"], f["handle"], 0))
        elif r.name in ("GPU_MAP", "GPU_UNMAP") and f["status"] == 0:
            g.event("MAP" if r.name == "GPU_MAP" else "UNMAP", t,
                    struct.pack("<4IQQ", f["client"], f["device"], f["va_space"], f["memory"], f["gpu_va"], f["length"]))
        elif r.name == "CHANNEL" and f["status"] == 0:
            channels[(f["client"], f["handle"])] = f
            g.event("CHANNEL", t, struct.pack("<4IQ4I", f["client"], f["parent"], f["handle"], cls(f["class"]),
                                               f["ring_va"], f["entries"], f["engine_type"], f["va_space"], 0))
        elif r.name == "ENGINE_OBJECT" and f["status"] == 0:
            g.event("ENGINE", t, struct.pack("<4I", f["client"], f["channel"], f["handle"], cls(f["class"])))
        elif r.name == "MEMORY":
            g.write_va(t, f["gpu_va"], f["data"])
        elif r.name == "SEMAPHORE":
            g.event("COMPLETION", t, struct.pack("<QQII", f["gpu_va"], f["value"], f["size"], 0))
        elif r.name == "GPFIFO_SUBMIT":
            ch = channels[(f["client"], f["channel"])]
            for s in f["segments"]:
                data = bytearray(s["data"])
                for (seq, va), c in patches.items():
                    if seq == r.seq and s["gpu_va"] <= va < s["gpu_va"] + len(data):
                        off = va - s["gpu_va"]
                        old = struct.unpack_from("<I", data, off)[0]
                        assert old == c, f"SET_OBJECT data at {va:#x} reads {old:#x}, decode said {c:#x}"
                        struct.pack_into("<I", data, off, (c & ~0xFFFF) | cls(c & 0xFFFF))
                for (seq, va), (what, old, new) in (extra or {}).items():
                    if seq == r.seq and s["gpu_va"] <= va < s["gpu_va"] + len(data):
                        off = va - s["gpu_va"]
                        cur = struct.unpack_from("<I", data, off)[0]
                        if what == "header":   # the method address of an incrementing header (dwords, bits 12:0)
                            assert cur & 0x1FFF == old >> 2, f"header at {va:#x} reads {cur:#x}"
                            struct.pack_into("<I", data, off, (cur & ~0x1FFF) | new >> 2)
                        else:
                            assert cur == old, f"dword at {va:#x} reads {cur:#x}, decode said {old:#x}"
                            struct.pack_into("<I", data, off, new)
                g.write_va(t, s["gpu_va"], data)
            for i, e in enumerate(f["entries"]):
                slot = (f["gp_put_before"] + i) % ch["entries"]
                g.write_va(t, ch["ring_va"] + 8 * slot, struct.pack("<Q", e))
            # the GP_GET the model read from USERD (+1; 0 = not read): the GPU had fetched every earlier entry
            g.event("DOORBELL", t, struct.pack("<4I", f["client"], f["channel"], f["gp_put_after"],
                                               f["gp_put_before"] + 1))
    return g, patches


def digest(vgt, path, class_map=None):
    """Per submission: the number of entries and a hash of its methods (subchannel, method, data; SET_OBJECT
    classes through class_map)."""
    out = vgt("decode", "--jsonl", "--no-fields", "--no-events", path).stdout.splitlines()
    subs = []
    for line in out:
        j = json.loads(line)
        if j["type"] == "submit":
            subs.append([j["entries"], hashlib.sha256(), 0])
        elif j["type"] == "method" and subs:
            data = j["data"]
            if class_map and j["mthd"] == 0 and j["class"] & 0xFF == 0x6F:
                data = (data & ~0xFFFF) | class_map.get(data & 0xFFFF, data & 0xFFFF)
            subs[-1][1].update(struct.pack("<III", j["subch"], j["mthd"], data))
            subs[-1][2] += 1
    return [(n, h.hexdigest(), m) for n, h, m in subs]


@pytest.fixture(scope="module")
def devmodel_bin(build_dir):
    b = build_dir / "examples" / "devmodel"
    if not b.is_file():
        pytest.fail(f"{b} is missing: build it (cmake --build {build_dir})", pytrace=False)
    return b


CASES = [("gl_egl", V3_HOPPER, False), ("gl_egl", V2_TURING, True), ("vk_triangle", V2_TURING, True)]


@pytest.mark.parametrize("name,version,turing", CASES, ids=["gl_egl-hopper", "gl_egl-turing", "vk_triangle-turing"])
def test_devmodel_end_to_end(vgt, devmodel_bin, tmp_path, name, version, turing):
    src = REPO / "corpus" / f"{name}.vgt"
    g, patches = build_events(vgt, src, version, turing)
    assert g.sizes["4K"] and g.sizes["64K"], f"the layout should use small and big pages: {g.sizes}"
    if turing:
        assert patches, "the trace binds classes with SET_OBJECT: the Turing rewrite must find them"
    (tmp_path / "sys.img").write_bytes(g.sys)
    (tmp_path / "vid.img").write_bytes(g.vid)
    (tmp_path / "events.bin").write_bytes(g.events)
    stream, out = tmp_path / "guest.stream", tmp_path / "guest.vgt"
    chip = "TU104" if version == V2_TURING else "GH100"
    r = subprocess.run([str(devmodel_bin), "--sysmem", str(tmp_path / "sys.img"), "--vidmem", str(tmp_path / "vid.img"),
                        "--events", str(tmp_path / "events.bin"), "-o", str(stream), "--chip", chip],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    vgt("ingest", stream, "-o", out, check=0)
    vgt("verify", out, check=0)

    want = digest(vgt, src, TURING if turing else None)
    got = digest(vgt, out)
    assert len(got) == len(want) and got == want, "per-submission method digests differ"
    assert sum(m for _, _, m in got) > 100, "the submissions carry methods"

    # completion forensics: every doorbell's GP_GET carried into the trace, and checked against the ring
    gp = json.loads(vgt("info", "--json", out).stdout)["gp"]
    subs = [r for r in reader.read_trace(src).records if r.name == "GPFIFO_SUBMIT"]
    assert gp["get_read"] == gp["submissions"] == len(subs) and gp["get_checked"] == len(subs), gp
    assert gp["get_past_put"] == 0 and not [e for e in gp["events"] if e["kind"] != "PUT_WRAP"], gp

    ingested = reader.read_trace(out)
    assert [r.fields["gp_get_before"] for r in ingested.records if r.name == "GPFIFO_SUBMIT"] == \
        [r.fields["gp_put_before"] for r in subs], "GP_GET the model read, in gp_get_before"
    assert ingested.identity["chip"] == chip and ingested.identity["crash_safe"] == "1"
    names = {r.name for r in ingested.records}
    assert {"CHANNEL", "ENGINE_OBJECT", "GPU_MAP", "GPFIFO_SUBMIT", "MEMORY"} <= names
    if turing:
        classes = {r.fields["class"] for r in ingested.records if r.name in ("CHANNEL", "ENGINE_OBJECT")}
        assert 0xC46F in classes and 0xC597 in classes, f"Turing classes: {sorted(map(hex, classes))}"
        # the analyzer knows the Turing classes by name, and the sim replays the guest's trace
        dec = vgt("decode", "--jsonl", "--no-events", out).stdout
        assert '"class_name":"TURING_CHANNEL_GPFIFO_A"' in dec and '"class_name":"TURING_A"' in dec
        rep = vgt("replay", out, "--backend", "sim", "--json")
        orig = vgt("replay", src, "--backend", "sim", "--json")
        assert rep.returncode == orig.returncode == 0, rep.stderr[-2000:]


# ---- a Turing compute guest (issue: the lane-2 encoder on the users' Turing guests) ----
#
# vadd rewritten as a Turing guest would have made it: TURING_COMPUTE_A (C5C0) and TURING_DMA_COPY_A on
# TURING_CHANNEL_GPFIFO_A (C46F); each QMD the stream uploads (V04_00, 384 bytes) re-encoded as QMD V02_02
# (the layout Mesa writes on Turing; 256 bytes, the upload's other 128 bytes zero) by the library's own QMD
# decoder and encoder; SEND_SIGNALING_PCAS2_B, which Turing lacks, turned into SEND_SIGNALING_PCAS_B with
# INVALIDATE and SCHEDULE (bits 0 and 1). V02_02 has no dependent QMDs: CUDA's ordering QMDs become plain
# empty dispatches.
PCAS2_B, PCAS_B = 0x2C0, 0x2BC
LOAD_INLINE_DATA = 0x1B4
V02_02 = 1   # vgt_qmd_version


def qmd_codec(build_dir):
    lib = ctypes.CDLL(str(build_dir / "lib" / "libvgt.so.0"))
    err = ctypes.create_string_buffer(4096)   # vgt_error, with room

    def to_v02_02(v04):
        q = ctypes.create_string_buffer(8192)  # vgt_qmd, with room: version (an enum), then major, minor (bytes)
        assert lib.vgt_qmd_decode(v04, len(v04), q, err) == 0
        assert struct.unpack_from("<i", q.raw, 0)[0] == 4, "a V04_00 QMD"
        struct.pack_into("<iBB", q, 0, V02_02, 0, 0)   # as stored: the encoder writes the layout's own
        out = ctypes.create_string_buffer(256)
        assert lib.vgt_qmd_encode(V02_02, q, None, out, 256, err) == 0, err.raw[:200]
        return out.raw

    def version(raw):
        return lib.vgt_qmd_detect(raw, len(raw))
    return to_v02_02, version


def turing_compute_patches(vgt, path, to_v02_02):
    """{(seq, dword VA): new dword} for the QMD uploads (re-encoded) and SEND_SIGNALING_PCAS2_B (method header
    and data) of a trace's compute work, from `vgt decode --jsonl`."""
    out = vgt("decode", "--jsonl", "--no-fields", path).stdout.splitlines()
    entry_va, inline, patches, qmds = {}, [], {}, 0
    for line in out:
        j = json.loads(line)
        if j.get("type") == "entry":
            entry_va[(j["seq"], j["entry"])] = j["va"]
        elif j.get("type") == "method":
            va = entry_va[(j["seq"], j["entry"])] + 4 * j["dword"]
            if j["mthd"] == LOAD_INLINE_DATA:
                inline.append((j["seq"], va))
            elif j["mthd"] == PCAS2_B:
                assert j["data"] == 0xA, "INVALIDATE_PREFETCH_COPY_SCHEDULE"
                patches[(j["seq"], va - 4)] = ("header", PCAS2_B, PCAS_B)
                patches[(j["seq"], va)] = ("data", 0xA, 3)
        elif j.get("event") == "UPLOAD":
            data = bytes.fromhex(j.get("data", ""))
            if len(data) == 384 and (data[72] >> 4) == 4:   # QMD_MAJOR_VERSION 583:580: a V04_00 QMD
                words = inline[-96:]
                assert len(words) == 96 and all(s == j["seq"] for s, _ in words)
                new = to_v02_02(data) + bytes(128)
                for i, (s, va) in enumerate(words):
                    patches[(s, va)] = ("data", struct.unpack_from("<I", data, 4 * i)[0], struct.unpack_from("<I", new, 4 * i)[0])
                qmds += 1
            inline = []
    return patches, qmds


def test_devmodel_turing_compute_guest(vgt, devmodel_bin, build_dir, tmp_path):
    src = REPO / "corpus" / "vadd.vgt"
    to_v02_02, version = qmd_codec(build_dir)
    patches, qmds = turing_compute_patches(vgt, src, to_v02_02)
    assert qmds >= 4, "vadd uploads its launches' and ordering QMDs"
    g, _ = build_events(vgt, src, V2_TURING, True, extra=patches)
    (tmp_path / "sys.img").write_bytes(g.sys)
    (tmp_path / "vid.img").write_bytes(g.vid)
    (tmp_path / "events.bin").write_bytes(g.events)
    stream, out = tmp_path / "guest.stream", tmp_path / "guest.vgt"
    r = subprocess.run([str(devmodel_bin), "--sysmem", str(tmp_path / "sys.img"), "--vidmem", str(tmp_path / "vid.img"),
                        "--events", str(tmp_path / "events.bin"), "-o", str(stream), "--chip", "TU104"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    vgt("ingest", stream, "-o", out, check=0)
    vgt("verify", out, check=0)

    # the analyzer sees a Turing compute guest: its launches on TURING_COMPUTE_A with V02_02 QMDs
    d = json.loads(vgt("launches", out, "--json", check=0).stdout)
    launches = [w for w in d["work"] if "launch" in w]
    assert len(launches) == 2 and d["total"]["not_rebuildable"] == 0, d["total"]
    assert {w["class"] for w in launches} == {"TURING_COMPUTE_A"}
    assert {w["qmd"]["version"] for w in launches} == {"V02_02"}

    # lane 2 on the guest: every submission synthesized, decoded back, its checks pass
    rep = vgt("replay", out, "--backend", "sim", "--lane", "synth", "--check", "--json")
    s = json.loads(rep.stdout)
    assert rep.returncode == 0 and s["result"] == "ok", rep.stderr[-2000:]
    assert s["lanes"]["verbatim"] == 0 and s["lanes"]["synth"] == s["submissions_replayed"] > 100
    assert s["synth_refused"] == 0 and s["checks"]["failed"] == 0 and s["launches"] == 2

    # the synthesized QMD (vgt decompile rebuilds a launch as lane 2 does) decodes back as V02_02
    c = tmp_path / "launch.c"
    vgt("decompile", out, "--launch", "1", "-o", c, check=0)
    text = c.read_text()
    m = re.search(r"/\* QMD of launch 1 at 0x[0-9a-f]+ \*/.*?static const uint8_t blob\d+\[(\d+)\] = \{([^}]*)\}", text, re.S)
    assert m, "the decompiled launch carries its QMD"
    raw = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", m.group(2)))
    assert int(m.group(1)) == len(raw) == 256 and version(raw) == V02_02
    assert "NVC5C0_SEND_SIGNALING_PCAS_B" in text and "PCAS2" not in text.split("static void launch(")[1]
