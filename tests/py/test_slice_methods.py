"""`vgt slice` carries each channel's engine state (CHANNEL_METHODS, format 1.1: the MME program and the
latest value of every pure state method), so that a window cut out of a real graphics capture replays and
analyzes on its own:
- `vgt replay SLICE --backend sim --check`: every macro call of the window runs (as many as the whole trace
  runs there), none fails, no check fails;
- `vgt mme SLICE` resolves each call of the window to the same macro (index, content hash, name), with the
  same emission count and outcome, as `vgt mme WHOLE --submits A..B`;
- `vgt decode --expand-macros` expands the window's calls as the whole trace does;
- the control: the same slice without its CHANNEL_METHODS records cannot resolve its macros;
- the record: one per channel right after its CHANNEL_STATE, only writes to bound subchannels, never host
  methods or macro calls, read alike by the Python twin and by `vgt dump`; decode shows it under a
  "state preamble" header, apart from the submissions."""
import json
import re
import struct
from pathlib import Path

import pytest

import vgtrace
from vgtrace import records as vrec
from vgtrace import spec

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CASES = [("vk_triangle.vgt", 12, 23), ("vk_triangle.vgt", 20, 23), ("vk_triangle.vgt", 1, 23),
         ("gl_egl.vgt", 1, 4), ("gl_egl.vgt", 2, 4), ("gl_egl.vgt", 3, 4)]
CALL_MME_FIRST = 0x3800   # CALL_MME_MACRO(0) / CALL_MME_DATA(0) .. (open-gpu-doc clcb97.h)


def make_slice(vgt, tmp_path, name, a, b):
    out = tmp_path / f"{Path(name).stem}-{a}-{b}.vgt"
    vgt("slice", CORPUS / name, out, "--submits", f"{a}..{b}", check=0)
    return out


def without(src, dst, type_name):
    """src rewritten by the Python twin without its records of one type."""
    t = vgtrace.read_trace(src)
    code = spec.BY_NAME[type_name].code
    recs = [(r.type, r.payload, r.ts, r.flags) for r in t.records if r.type != code]
    vgtrace.write_trace(dst, recs, identity=tuple(t.identity.items()))
    return dst


def mme_json(vgt, *args):
    r = vgt("mme", *map(str, args), "--json", "--calls", "--no-disasm")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def call_key(c, shift=0):
    return (c["submission"] + shift, c["entry"], c["dword"], c["channel"], c["macro"], c["hash"], c["kind"],
            tuple(c["params"]), c["nemits"], c["status"])


@pytest.fixture(scope="module")
def whole_mme(vgt):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = mme_json(vgt, CORPUS / name)
        return cache[name]
    return get


@pytest.mark.parametrize("name,a,b", CASES)
def test_slice_replays_its_macros_on_sim(vgt, tmp_path, whole_mme, name, a, b):
    out = make_slice(vgt, tmp_path, name, a, b)
    r = vgt("replay", out, "--backend", "sim", "--check", check=0)
    calls, errors = map(int, re.search(r"macro calls (\d+) \((\d+) errors", r.stdout).groups())
    failed = int(re.search(r"checks: \d+ passed, (\d+) failed", r.stdout).group(1))
    window = [c for c in whole_mme(name)["calls"] if a <= c["submission"] <= b]
    assert errors == 0 and failed == 0, r.stdout[-1500:]
    assert calls == len(window), f"the slice ran {calls} macro calls, the whole trace {len(window)} in {a}..{b}"


@pytest.mark.parametrize("name,a,b", CASES)
def test_mme_resolves_the_window_like_the_whole_trace(vgt, tmp_path, whole_mme, name, a, b):
    out = make_slice(vgt, tmp_path, name, a, b)
    s = mme_json(vgt, out)
    window = [call_key(c) for c in whole_mme(name)["calls"] if a <= c["submission"] <= b]
    got = [call_key(c, a) for c in s["calls"]]
    assert got == window
    assert s["total"]["unbound_calls"] == 0 and s["total"]["call_errors"] == 0


@pytest.mark.parametrize("name,a,b", [("vk_triangle.vgt", 12, 23), ("gl_egl.vgt", 2, 4)])
def test_decode_expands_the_window_like_the_whole_trace(vgt, tmp_path, name, a, b):
    out = make_slice(vgt, tmp_path, name, a, b)

    def expansions(*args):
        lines = vgt("decode", *map(str, args), "--jsonl", "--expand-macros", "--no-events", check=0).stdout
        keep = []
        for line in lines.splitlines():
            d = json.loads(line)
            if d.get("type") == "macro_call":
                e = d["expansion"]
                keep.append((e["macro"], e["hash"], e["kind"], tuple(e["params"]), e["status"],
                             json.dumps(e["emits"], sort_keys=True)))
        return keep
    whole = expansions(CORPUS / name, "--submits", f"{a}..{b}")
    assert whole and expansions(out) == whole


def test_control_without_channel_methods_macros_do_not_resolve(vgt, tmp_path):
    out = make_slice(vgt, tmp_path, "vk_triangle.vgt", 12, 23)
    bare = without(out, tmp_path / "bare.vgt", "CHANNEL_METHODS")
    s = mme_json(vgt, bare)
    assert s["total"]["unbound_calls"] + s["total"]["call_errors"] > 0, s["total"]


def test_record_follows_its_channel_state_and_holds_only_state(vgt, vgt_bin, tmp_path):
    out = make_slice(vgt, tmp_path, "vk_triangle.vgt", 12, 23)
    t = vgtrace.read_trace(out)
    recs = t.records
    methods = [i for i, r in enumerate(recs) if r.name == "CHANNEL_METHODS"]
    assert methods, "the slice carries engine state"
    first_submit = next(i for i, r in enumerate(recs) if r.name == "GPFIFO_SUBMIT")
    dumped = {d["seq"]: d for d in (json.loads(line) for line in
                                    vgt("dump", out, "--jsonl", "--type", "CHANNEL_METHODS", check=0).stdout.splitlines())}
    channels = set()
    for i in methods:
        r, prev = recs[i], recs[i - 1]
        assert i < first_submit
        assert prev.name == "CHANNEL_STATE" and prev.fields["channel"] == r.fields["channel"]
        assert r.fields["channel"] not in channels
        channels.add(r.fields["channel"])
        writes = vrec.unpack_channel_methods(r.fields["writes"])
        bound = {s for s in range(8) if prev.fields[f"subch{s}_class"]}
        assert writes and all(s in bound for s, _, _ in writes)
        assert all(0x100 <= m < CALL_MME_FIRST or 0x3400 <= m < 0x3800 for _, m, _ in writes), "no host or call method"
        c = dumped[r.seq]["methods"]   # the C reader's decoding of the same bytes
        assert [(w["subch"], w["method"], w["value"]) for w in c] == writes
    mme_upload = [w for i in methods for w in vrec.unpack_channel_methods(recs[i].fields["writes"]) if w[1] == 0x0118]
    assert len(mme_upload) > 1000, "the MME program of the channels is in the record"


def test_decode_shows_a_state_preamble_apart_from_submissions(vgt, tmp_path):
    out = make_slice(vgt, tmp_path, "vk_triangle.vgt", 20, 23)
    text = vgt("decode", out, check=0).stdout
    heads = re.findall(r"^state preamble seq (\d+) channel (0x[0-9a-f]+) client 0x[0-9a-f]+ writes (\d+) "
                       r"\(engine state restored before submit 0; not submitted work\)$", text, re.M)
    t = vgtrace.read_trace(out)
    want = [(r.seq, r.fields["channel"], r.fields["writes_length"] // 8) for r in t.records if r.name == "CHANNEL_METHODS"]
    assert [(int(s), int(c, 16), int(n)) for s, c, n in heads] == want
    lines = vgt("decode", out, "--jsonl", check=0).stdout.splitlines()
    kinds = [json.loads(x).get("type") for x in lines]
    assert kinds.count("state_method") == sum(n for _, _, n in want)
    assert kinds.index("state_preamble") < kinds.index("submit")


def test_python_writes_a_record_c_checks(vgt, tmp_path):
    """A write naming subchannel 8 is malformed for both readers."""
    good = vrec.pack_channel_methods([(1, 0x0200, 5)])
    bad = good[:2] + struct.pack("<H", 8) + good[4:]
    for blob, ok in ((good, True), (bad, False)):
        path = tmp_path / f"cm-{ok}.vgt"
        vgtrace.write_trace(path, [("CHANNEL_METHODS", {"client": 1, "channel": 2, "flags": 0,
                                                      "writes_length": len(blob), "writes": blob}, 0)])
        r = vgt("dump", path, "--jsonl")
        d = json.loads(r.stdout.splitlines()[0])
        if ok:
            assert d["methods"] == [{"subch": 1, "method": 0x200, "value": 5}]
        else:
            assert "methods" not in d
            with pytest.raises(vgtrace.FormatError):
                vrec.unpack_channel_methods(blob)


def test_a_slice_of_a_slice_keeps_the_state(vgt, tmp_path, whole_mme):
    """The input's own CHANNEL_METHODS are engine state too: slicing 16..23 out of the 12..23 slice
    resolves the same calls as the whole trace's 16..23."""
    first = make_slice(vgt, tmp_path, "vk_triangle.vgt", 12, 23)
    second = tmp_path / "again.vgt"
    vgt("slice", first, second, "--submits", "4..11", check=0)
    s = mme_json(vgt, second)
    window = [call_key(c) for c in whole_mme("vk_triangle.vgt")["calls"] if 16 <= c["submission"] <= 23]
    assert window and [call_key(c, 16) for c in s["calls"]] == window
    r = vgt("replay", second, "--backend", "sim", "--check", check=0)
    assert re.search(r"macro calls \d+ \(0 errors", r.stdout) and re.search(r"checks: \d+ passed, 0 failed", r.stdout)
