"""`vgt decode`: text and JSONL output, filters, diagnostics and exit codes, on hand-built traces (written
with the Python twin, trace-format/python/vgtrace) whose expected decode comes from NVIDIA's class headers, and on
`vgt synth` traces.

Facts used (open-gpu-doc classes/host/clc56f.h method-header and GPFIFO-entry layouts; clc86f.h / clc76f.h
host methods; clcbc0.h HOPPER_COMPUTE_A): SET_OBJECT 0x0000 NVCLASS 15:0; SEM_ADDR_LO 0x005c,
SEM_EXECUTE 0x006c (OPERATION 2:0 RELEASE 1, RELEASE_WFI 20:20, PAYLOAD_SIZE 24:24 64BIT 1);
SEND_PCAS_A 0x02b4 (QMD_ADDRESS_SHIFTED8 31:0); LOAD_INLINE_DATA 0x01b4; header SEC_OP 31:29 (1 INC,
3 NON_INC, 4 IMMD, 5 ONE_INC), COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = method >> 2.
"""
import json
import struct

import pytest

from vgtrace import writer

CLIENT, CHANNEL, CHANNEL2 = 0xC1D00001, 0xCAFE0001, 0xCAFE0002


def hdr(sec, subch, mthd, count):
    return sec << 29 | (count & 0x1FFF) << 16 | subch << 13 | (mthd >> 2)


def INC(s, m, n): return hdr(1, s, m, n)
def NONINC(s, m, n): return hdr(3, s, m, n)
def IMMD(s, m, d): return hdr(4, s, m, d)


def gp_entry(va, ndw, level=0):
    return (va & 0xFFFFFFFC) | ((va >> 32) & 0xFF | level << 9 | ndw << 10) << 32


def dwords(*dw):
    return struct.pack("<%dI" % len(dw), *dw)


def channel(handle, ts):
    return ("CHANNEL", {"client": CLIENT, "parent": 0xC1D00002, "handle": handle, "class": 0xC86F,
                        "ring_va": 0x100000, "entries": 1024, "userd_memory": 0, "userd_offset": 0,
                        "userd_gpu_va": 0, "engine_type": 0, "va_space": 0, "context_share": 0,
                        "error_notifier": 0, "status": 0, "reserved": 0}, ts)


def submit(handle, segments, entries, ts, put=(0, 0)):
    return ("GPFIFO_SUBMIT", {"client": CLIENT, "channel": handle, "token": 1, "flags": 0,
                              "gp_get_before": put[0], "gp_put_before": put[0], "gp_get_after": 0xFFFFFFFF,
                              "gp_put_after": put[1], "entry_count": len(entries),
                              "segment_count": len(segments), "entries": entries,
                              "segments": [{"gpu_va": va, "flags": 0, "data": data} for va, data in segments]}, ts)


@pytest.fixture(scope="module")
def hand_trace(tmp_path_factory):
    """Two channels. Submission 0 binds HOPPER_COMPUTE_A on subchannel 1; submission 1 uses it and has a
    NON_INC run that continues from entry 0 into entry 1; submission 2 (channel 2) releases a host semaphore."""
    seg_a = dwords(INC(1, 0x0000, 1), 0xCBC0)
    seg_b = dwords(INC(1, 0x02B4, 1), 0x00123456, NONINC(1, 0x01B4, 4), 0x11, 0x22)
    seg_c = dwords(0x33, 0x44, IMMD(0, 0x0008, 5))
    seg_d = dwords(INC(0, 0x005C, 2), 0x1000, 0x7F, INC(0, 0x006C, 1), 0x01100001)
    recs = [
        channel(CHANNEL, 1),
        channel(CHANNEL2, 2),
        submit(CHANNEL, [(0x200000, seg_a)], [gp_entry(0x200000, 2)], 3, (0, 1)),
        submit(CHANNEL, [(0x201000, seg_b), (0x202000, seg_c)],
               [gp_entry(0x201000, 5), gp_entry(0x202000, 3, level=1)], 4, (1, 3)),
        submit(CHANNEL2, [(0x300000, seg_d)], [gp_entry(0x300000, 5)], 5, (0, 1)),
    ]
    p = tmp_path_factory.mktemp("decode") / "hand.vgt"
    writer.write_trace(p, recs)
    return p


@pytest.fixture(scope="module")
def bad_trace(tmp_path_factory):
    """An entry outside every captured segment, an illegal header, and a count past the segment end."""
    seg = dwords(INC(0, 0x0008, 1), 0, hdr(6, 0, 0x100, 1), INC(0, 0x0050, 12), 1, 2)
    recs = [channel(CHANNEL, 1),
            submit(CHANNEL, [(0x200000, seg)], [gp_entry(0x200000, 6), gp_entry(0x900000, 4)], 2, (0, 2))]
    p = tmp_path_factory.mktemp("decode") / "bad.vgt"
    writer.write_trace(p, recs)
    return p


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_help(vgt):
    r = vgt("decode", "--help", check=0)
    assert r.stdout.startswith("usage: vgt decode TRACE")
    assert "--jsonl" in r.stdout and "--method" in r.stdout


@pytest.mark.parametrize("args", [[], ["--submits"], ["--submits", "5..2", "x.vgt"], ["--bogus", "x.vgt"],
                                  ["a.vgt", "b.vgt"], ["--channel", "zz", "x.vgt"]])
def test_usage_errors(vgt, args):
    r = vgt("decode", *args, check=2)
    assert r.stderr.startswith("vgt decode: ")


def test_missing_file(vgt, tmp_path):
    r = vgt("decode", tmp_path / "nope.vgt", check=2)
    assert "nope.vgt" in r.stderr


def test_text_output(vgt, hand_trace):
    out = vgt("decode", hand_trace, check=0).stdout
    lines = out.splitlines()
    assert lines[0].startswith("channel 0xcafe0001 client 0xc1d00001 HOPPER_CHANNEL_GPFIFO_A")
    assert "submit 0 seq 2 channel 0xcafe0001 client 0xc1d00001 HOPPER_CHANNEL_GPFIFO_A gp_put 0..1 entries 1" in out
    assert "  entry 0 va 0x200000 dwords 2 main" in lines
    assert any(l.split()[:5] == ["2:0:1", "s1", "HOPPER_CHANNEL_GPFIFO_A", "0x0000cbc0", "SET_OBJECT"] and
               "NVCLASS=0xcbc0" in l for l in lines)
    # the binding from submission 0 names submission 1's methods
    assert any(l.split()[:4] == ["3:0:1", "s1", "HOPPER_COMPUTE_A", "0x00123456"] and
               "SEND_PCAS_A = QMD_ADDRESS_SHIFTED8=0x123456" in l for l in lines)
    # NON_INC run: 4 dwords, two in entry 0 and two in the subroutine entry 1, all LOAD_INLINE_DATA
    runs = [l.split()[0] for l in lines if "LOAD_INLINE_DATA" in l]
    assert runs == ["3:0:3", "3:0:4", "3:1:0", "3:1:1"]
    assert "  entry 1 va 0x202000 dwords 3 subroutine" in lines
    assert any("!! 3:0:5 COUNT_PAST_SEGMENT" in l for l in lines)
    assert any("!! 3:1:0 RUN_ACROSS_ENTRIES" in l for l in lines)
    # host semaphore release decoded from the header's fields
    sem = [l for l in lines if "SEM_EXECUTE" in l]
    assert len(sem) == 1 and sem[0].split()[0] == "4:0:4"
    assert "OPERATION=RELEASE" in sem[0] and "RELEASE_WFI=EN" in sem[0] and "PAYLOAD_SIZE=64BIT" in sem[0]


def test_jsonl(vgt, hand_trace):
    objs = jsonl(vgt("decode", "--jsonl", hand_trace, check=0).stdout)
    kinds = [o.get("type", "event" if "event" in o else None) for o in objs]
    assert kinds.count("submit") == 3 and kinds.count("channel") == 2 and kinds.count("entry") == 4
    methods = [o for o in objs if o.get("type") == "method"]
    assert len(methods) == 10
    pcas = [m for m in methods if m["method"] == "SEND_PCAS_A"][0]
    assert (pcas["seq"], pcas["entry"], pcas["dword"], pcas["subch"]) == (3, 0, 1, 1)
    assert pcas["class"] == 0xCBC0 and pcas["class_name"] == "HOPPER_COMPUTE_A" and pcas["mthd"] == 0x2B4
    assert pcas["fields"] == {"QMD_ADDRESS_SHIFTED8": 0x123456} and pcas["kind"] == "INC"
    sem = [m for m in methods if m["method"] == "SEM_EXECUTE"][0]
    assert sem["fields"]["OPERATION"] == "RELEASE" and sem["fields"]["PAYLOAD_SIZE"] == "64BIT"
    immd = [m for m in methods if m["kind"] == "IMMD"][0]
    assert immd["method"] == "NOP" and immd["data"] == 5 and immd["subch"] == 0
    diags = [o for o in objs if o.get("type") == "diag"]
    assert {d["kind"] for d in diags} == {"COUNT_PAST_SEGMENT", "RUN_ACROSS_ENTRIES"}
    assert not any(d["problem"] for d in diags)


def test_filters(vgt, hand_trace):
    objs = jsonl(vgt("decode", "--jsonl", "--submits", "1", hand_trace, check=0).stdout)
    subs = [o for o in objs if o.get("type") == "submit"]
    assert [s["index"] for s in subs] == [1]
    assert not any(o.get("type") == "channel" for o in objs)   # record lines only without filters
    assert all(o["seq"] == 3 for o in objs if o.get("type") == "method")
    # the SET_OBJECT of the unselected submission 0 still binds subchannel 1
    assert {o["class_name"] for o in objs if o.get("type") == "method" and o["subch"] == 1} == {"HOPPER_COMPUTE_A"}

    objs = jsonl(vgt("decode", "--jsonl", "--channel", hex(CHANNEL2), hand_trace, check=0).stdout)
    assert [o["channel"] for o in objs if o.get("type") == "submit"] == [CHANNEL2]

    out = vgt("decode", "--no-events", "--method", "sem_*", "--method", "0x2b4", hand_trace, check=0).stdout
    names = [l.split()[4] for l in out.splitlines()]
    assert names == ["SEND_PCAS_A", "SEM_ADDR_LO", "SEM_ADDR_HI", "SEM_EXECUTE"]

    out = vgt("decode", "--no-fields", "--method", "SEND_PCAS_A", hand_trace, check=0).stdout
    assert out.split() == ["3:0:1", "s1", "HOPPER_COMPUTE_A", "0x00123456", "SEND_PCAS_A"]

    # a window past the trace's 3 submissions is a usage error naming the window and the trace's extent
    r = vgt("decode", "--submits", "7..9", hand_trace, check=2)
    assert "submit" not in r.stdout
    assert "--submits 7..9 is outside the trace: it has 3 submissions (0..2)" in r.stderr, r.stderr


def test_problems_exit_1(vgt, bad_trace):
    r = vgt("decode", bad_trace, check=1)
    lines = r.stdout.splitlines()
    assert any("!! 1:0:2 ILLEGAL_HEADER" in l for l in lines)
    assert any("COUNT_PAST_SEGMENT" in l and "count runs past segment end at entry 0 dword 6" in l for l in lines)
    assert any("!! 1:1:0 ADDRESS_NOT_CAPTURED" in l and "0x900000" in l for l in lines)
    assert "decoder problem" in r.stderr
    objs = jsonl(vgt("decode", "--jsonl", bad_trace, check=1).stdout)
    assert sum(1 for o in objs if o.get("type") == "diag" and o["problem"]) == 2


def test_synth_trace(vgt, small_trace):
    """Every submission of a synthetic trace decodes without problems, every method is named, and the
    compute launches come back as LAUNCH events after their scheduling method."""
    objs = jsonl(vgt("decode", "--jsonl", "--no-events", small_trace, check=0).stdout)
    assert not any("event" in o for o in objs)
    subs = [o for o in objs if o.get("type") == "submit"]
    assert [s["index"] for s in subs] == list(range(len(subs))) and len(subs) == 12
    methods = [o for o in objs if o.get("type") == "method"]
    assert methods and all(m["method"] is not None for m in methods)
    assert not any(o.get("type") == "diag" and o["problem"] for o in objs)
    signals = [m for m in methods if m["method"] == "SEND_SIGNALING_PCAS2_B"]
    assert signals
    # each launch by address is printed right after the method that schedules it
    lines = vgt("decode", small_trace, check=0).stdout.splitlines()
    launches = [i for i, l in enumerate(lines) if l.startswith("    => LAUNCH")]
    assert len(launches) == len(signals)
    assert all("SEND_SIGNALING_PCAS2_B" in lines[i - 1] for i in launches)
    want = ["%d:%d:%d" % (m["seq"], m["entry"], m["dword"]) for m in signals]
    assert [lines[i - 1].split()[0] for i in launches] == want


# ---- the real traces in corpus/ ----
# Invariants any correct recording of the workload must meet (corpus/workloads/README.md says what each
# program does): it decodes without a problem, every subchannel is bound before use, the classes are the
# ones the API path uses, the host/compute/copy/I2M/2D methods are all in the public class headers (HOPPER_A
# also gets a few offsets those headers leave undocumented), and the workload's own work is visible
# (launches, draws). The exact decode of each recording is compared by `vgt corpus check` against
# corpus/goldens/ (CI runs it).
COMPUTE = {"HOPPER_CHANNEL_GPFIFO_A", "HOPPER_COMPUTE_A", "HOPPER_DMA_COPY_A"}
GRAPHICS = {"AMPERE_CHANNEL_GPFIFO_A", "FERMI_TWOD_A", "HOPPER_A", "HOPPER_DMA_COPY_A", "KEPLER_INLINE_TO_MEMORY_B"}
HOPPER_A_UNDOCUMENTED = {"0x0f60", "0x0f64", "0x0f68", "0x0f6c", "0x0f70", "0x0f80", "0x1108", "0x2610"}
INVARIANTS = {   # name: (classes, {method name pattern: at least this many})
    "vadd.vgt": (COMPUTE, {"SEND_PCAS_A": 1}),
    "many_launches.vgt": (COMPUTE, {"SEND_PCAS_A": 10000}),
    "streams_threads.vgt": (COMPUTE, {"SEND_PCAS_A": 4 * 2 * 8}),
    "vk_compute.vgt": (GRAPHICS | {"HOPPER_COMPUTE_A"}, {}),
    "vk_triangle.vgt": (GRAPHICS | {"HOPPER_COMPUTE_A"}, {"DRAW_VERTEX_ARRAY_BEGIN_END_B": 1}),
    "gl_egl.vgt": (GRAPHICS, {"DRAW_VERTEX_ARRAY": 1}),
}
def decode_summary(vgt, path):
    """Summary of `vgt decode --no-events`: exit code, submissions, entries, methods per class, methods
    without a name per class, diagnostics by kind; also (not compared exactly) names and bare addresses."""
    r = vgt("decode", "--no-events", path)
    s = {"exit": r.returncode, "submits": 0, "entries": 0, "methods": {}, "unknown": {}, "diags": {}}
    names, bare = {}, set()
    for line in r.stdout.splitlines():
        if line.startswith("submit "):
            s["submits"] += 1
        elif line.startswith("  entry "):
            s["entries"] += 1
        elif line.startswith("    !! "):
            kind = line.split()[2].rstrip(":")
            s["diags"][kind] = s["diags"].get(kind, 0) + 1
        elif line.startswith("    "):
            f = line.split(None, 5)   # position, subchannel, class, data, name
            s["methods"][f[2]] = s["methods"].get(f[2], 0) + 1
            if f[4].startswith("0x"):
                s["unknown"][f[2]] = s["unknown"].get(f[2], 0) + 1
                bare.add((f[2], f[4]))
            name = f[4].split("(")[0]
            names[name] = names.get(name, 0) + 1
    return s, names, bare


@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_corpus(vgt, name):
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "corpus" / name
    assert path.is_file(), f"corpus trace {path} is missing"
    s, names, bare = decode_summary(vgt, path)
    classes, at_least = INVARIANTS[name]
    assert s["exit"] == 0 and s["submits"] > 0
    assert set(s["diags"]) <= {"COUNT_PAST_SEGMENT", "RUN_ACROSS_ENTRIES"}, s["diags"]
    assert s["diags"].get("COUNT_PAST_SEGMENT", 0) == s["diags"].get("RUN_ACROSS_ENTRIES", 0)
    assert set(s["methods"]) == classes
    assert {c for c, _ in bare} <= {"HOPPER_A"} and {a for _, a in bare} <= HOPPER_A_UNDOCUMENTED, bare
    for method, n in at_least.items():
        assert names.get(method, 0) >= n, (method, names.get(method, 0))


def test_stdin_stream(vgt_bin, vgt, hand_trace):
    """`vgt decode -` reads a trace stream from stdin (a pipe: no seeking) and decodes it the same."""
    import subprocess
    with open(hand_trace, "rb") as f:
        r = subprocess.run([str(vgt_bin), "decode", "-"], stdin=f, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == vgt("decode", hand_trace, check=0).stdout
