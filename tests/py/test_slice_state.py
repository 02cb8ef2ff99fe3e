"""`vgt slice` carries each channel's push-buffer decoder state (CHANNEL_STATE, format 1.1) and the GPU's
own writes before the cut (MEMORY flag DERIVED), so that a slice of a real capture decodes and replays on
its own:
- slices of corpus captures decode with no UNKNOWN_SUBCHANNEL diagnostic and to the same methods, per
  submission, as the same submissions of the whole trace; without their CHANNEL_STATE records they do not
  (the control that shows the comparison can fail);
- the semaphore a slice's first acquire waits on holds the value the last release before the cut wrote;
- a method run pending at the cut is not carried: flagged RUN_PENDING and explained in a DIAGNOSTIC;
- a CHANNEL_STATE of the input survives for a channel with no submission before the cut;
- `vgt replay SLICE --backend sim --check` fails no check."""
import json
import re
import struct
from pathlib import Path

import pytest

import vgtpy
from vgtpy import spec

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
RUN_PENDING = spec.CHANNEL_STATE_RUN_PENDING
DERIVED = spec.MEMORY_FLAG_DERIVED
# (capture, A, B, whether submissions A..B use subchannels bound only before A)
CASES = [("vk_triangle.vgt", 12, 23, True), ("vk_triangle.vgt", 1, 23, True), ("vadd.vgt", 150, 160, True),
         ("vadd.vgt", 5, 9, False)]


def decode(vgt, path):
    """[{submission's method (subch, class name, method name) list, its diagnostics, its events}] in order."""
    out = vgt("decode", path, "--jsonl", check=0).stdout
    subs = []
    for line in out.splitlines():
        d = json.loads(line)
        t = d.get("type")
        if t == "submit":
            subs.append({"methods": [], "diags": [], "events": []})
        elif t == "method":
            subs[-1]["methods"].append((d["subch"], d.get("class_name"), d.get("method")))
        elif t == "diag":
            subs[-1]["diags"].append(d["kind"])
        elif "event" in d and subs:
            subs[-1]["events"].append(d)
    return subs


@pytest.fixture(scope="module")
def full_decodes(vgt):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = decode(vgt, CORPUS / name)
        return cache[name]
    return get


def make_slice(vgt, tmp_path, name, a, b):
    out = tmp_path / f"{Path(name).stem}-{a}-{b}.vgt"
    vgt("slice", CORPUS / name, out, "--submits", f"{a}..{b}", check=0)
    vgt("verify", out, check=0)
    return out


def without(src, dst, type_name):
    """src rewritten by the Python twin without its records of one type."""
    t = vgtpy.read_trace(src)
    code = spec.BY_NAME[type_name].code
    recs = [(r.type, r.payload, r.ts, r.flags) for r in t.records if r.type != code]
    vgtpy.write_trace(dst, recs, identity=tuple(t.identity.items()))
    return dst


@pytest.mark.parametrize("name,a,b,needs_state", CASES)
def test_slice_decodes_like_the_whole_trace(vgt, tmp_path, full_decodes, name, a, b, needs_state):
    out = make_slice(vgt, tmp_path, name, a, b)
    t = vgtpy.read_trace(out)
    states = [r for r in t.records if r.name == "CHANNEL_STATE"]
    assert states, "a slice after the first submission carries the channels' decoder state"
    assert t.minor >= 1   # CHANNEL_STATE is a 1.1 record
    first_submit = next(r.seq for r in t.records if r.name == "GPFIFO_SUBMIT")
    assert all(r.seq < first_submit for r in states)
    got, want = decode(vgt, out), full_decodes(name)[a:b + 1]
    assert len(got) == len(want) == b - a + 1
    assert not [d for s in got for d in s["diags"] if d == "UNKNOWN_SUBCHANNEL"]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g["methods"] == w["methods"], f"submission {a + i}: methods differ from the whole trace's"
    # the control: without its CHANNEL_STATE records, the same slice shows unbound subchannels exactly when
    # its submissions use bindings made before A
    bare = decode(vgt, without(out, tmp_path / "bare.vgt", "CHANNEL_STATE"))
    unbound = [d for s in bare for d in s["diags"] if d == "UNKNOWN_SUBCHANNEL"]
    assert bool(unbound) == needs_state
    assert ([s["methods"] for s in bare] != [s["methods"] for s in want]) == needs_state


def memory_at(t, va, size):
    """The value of size bytes at va as the MEMORY records before the first submission leave it, or None."""
    first = next(r.seq for r in t.records if r.name == "GPFIFO_SUBMIT")
    got = {}
    for r in t.records:
        if r.seq >= first:
            break
        if r.name == "MEMORY":
            f = r.fields
            for i in range(size):
                if f["gpu_va"] <= va + i < f["gpu_va"] + f["length"]:
                    got[i] = f["data"][va + i - f["gpu_va"]]
    return int.from_bytes(bytes(got[i] for i in range(size)), "little") if len(got) == size else None


def test_semaphores_hold_what_the_dropped_submissions_released(vgt, tmp_path, full_decodes):
    a, b = 150, 160
    full = full_decodes("vadd.vgt")
    acquires = [e for s in full[a:b + 1] for e in s["events"] if e["event"] == "SEM_ACQUIRE"]
    assert acquires, "vadd waits on semaphores in submissions 150..160"
    t = vgtpy.read_trace(make_slice(vgt, tmp_path, "vadd.vgt", a, b))
    checked = 0
    for acq in acquires:
        released = [e for s in full[:a] for e in s["events"]
                    if e["event"] == "SEM_RELEASE" and e["va"] == acq["va"] and e["op"] == "RELEASE"]
        if not released:
            continue
        assert memory_at(t, acq["va"], acq["size"]) == released[-1]["payload"], f"semaphore {acq['va']:#x}"
        checked += 1
    assert checked
    derived = [r for r in t.records if r.name == "MEMORY" and r.fields["flags"] & DERIVED]
    assert derived and all(r.fields["reason"] == 0 for r in derived)
    notes = [r.fields["text"].decode() for r in t.records if r.name == "DIAGNOSTIC"]
    assert any(re.search(r"[1-9]\d* semaphore releases", n) for n in notes), notes


# ---- a method run pending at the cut, in a trace written by the Python twin ----

CLIENT, CHAN, PB = 0xC1D00001, 0xCAFE0001, 0x40_0000


def inc(subch, mthd, count):
    return 1 << 29 | count << 16 | subch << 13 | mthd >> 2


def submit(va, dwords):
    data = struct.pack(f"<{len(dwords)}I", *dwords)
    entry = (va & 0xFFFFFFFC) | (((va >> 32) & 0xFF) | len(dwords) << 10) << 32
    return ("GPFIFO_SUBMIT", {"client": CLIENT, "channel": CHAN, "token": 1, "flags": 0, "gp_get_before": 0,
                              "gp_put_before": 0, "gp_get_after": 0xFFFFFFFF, "gp_put_after": 1,
                              "entries": [entry], "segments": [{"gpu_va": va, "flags": 0, "data": data}]})


def test_a_pending_run_is_flagged_not_carried(vgt, tmp_path):
    src = tmp_path / "pending.vgt"
    chan = {"client": CLIENT, "parent": 0xC1D00002, "handle": CHAN, "class": 0xC86F, "ring_va": 0x10_0000,
            "entries": 64, "userd_memory": 0, "userd_offset": 0, "userd_gpu_va": 0, "engine_type": 1,
            "va_space": 0, "context_share": 0, "error_notifier": 0, "status": 0}
    # submission 0: bind subch 1 to HOPPER_COMPUTE_A, then a header for 4 dwords of which 2 arrive;
    # submission 1: two more dwords of that run, then SEND_PCAS_A (0x02b4, open-gpu-doc clcbc0.h)
    s0 = submit(PB, [inc(1, 0x0000, 1), 0xCBC0, inc(1, 0x0400, 4), 0x11, 0x22])
    s1 = submit(PB + 0x1000, [0x33, 0x44, inc(1, 0x02B4, 1), 0x1234])
    recs = [("CHANNEL", chan, 10), (*s0, 20), (*s1, 30)]
    vgtpy.write_trace(src, recs)
    out = tmp_path / "cut.vgt"
    vgt("slice", src, out, "--submits", "1..1", check=0)
    t = vgtpy.read_trace(out)
    (state,) = [r.fields for r in t.records if r.name == "CHANNEL_STATE"]
    assert state["flags"] & RUN_PENDING and state["subch1_class"] == 0xCBC0 and state["channel"] == CHAN
    diag = [r for r in t.records if r.name == "DIAGNOSTIC" and r.fields["severity"] == 1]
    assert len(diag) == 1 and diag[0].fields["code"] == 12   # VGT_E_DECODE
    text = diag[0].fields["text"].decode()
    # INC: the run's next method is the header's third, 0x400 + 2 * 4
    assert "0x408" in text and "2 of 4" in text and f"{CHAN:#x}" in text and "INC" in text, text
    # the whole trace decodes 0x33, 0x44 as the run's data (0x400 is LOAD_INLINE_QMD_DATA(56), JSON names it without the index); the slice
    # decodes its first dword as a header, binding kept
    whole, cut = decode(vgt, src)[1], decode(vgt, out)[0]
    pcas = (1, "HOPPER_COMPUTE_A", "SEND_PCAS_A")
    assert whole["methods"] == [(1, "HOPPER_COMPUTE_A", "LOAD_INLINE_QMD_DATA"),
                                (1, "HOPPER_COMPUTE_A", "LOAD_INLINE_QMD_DATA"), pcas]
    assert cut["methods"] == [pcas] and "UNKNOWN_SUBCHANNEL" not in cut["diags"]


def test_input_channel_state_survives_without_submissions(vgt, tmp_path, synth):
    """synth's all-types shape states every channel's bindings before any submission: a slice from 0 has no
    decoded submission to take them from, so it carries the input's."""
    src = synth("state-src", "--shape", "all-types", "--submits", "9", "--channels", "3", "--seed", "3")
    want = {(r.fields["client"], r.fields["channel"]): r.fields for r in vgtpy.read_trace(src).records
            if r.name == "CHANNEL_STATE"}
    assert len(want) == 3
    out = tmp_path / "s0.vgt"
    vgt("slice", src, out, "--submits", "0..2", check=0)
    got = {(r.fields["client"], r.fields["channel"]): r.fields for r in vgtpy.read_trace(out).records
           if r.name == "CHANNEL_STATE"}
    assert got == want


@pytest.mark.parametrize("name,a,b,needs_state", CASES)
def test_slice_replays_on_sim_without_failed_checks(vgt, tmp_path, name, a, b, needs_state):
    out = make_slice(vgt, tmp_path, name, a, b)
    r = vgt("replay", out, "--backend", "sim", "--check")
    m = re.search(r"checks: (\d+) passed, (\d+) failed", r.stdout + r.stderr)
    assert m, f"no checks line in the replay output:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}"
    assert m.group(2) == "0", r.stdout[-3000:]
    assert re.search(r"faults 0;", r.stdout + r.stderr), r.stdout[-3000:]
    # the sim resumes each channel from its CHANNEL_STATE: no method lands on an unbound subchannel,
    # and no acquire waits for a release the cut left out
    assert re.search(r"blocked waits 0;", r.stdout + r.stderr), r.stdout[-3000:]
    assert "result: ok" in r.stdout + r.stderr, r.stdout[-3000:]
