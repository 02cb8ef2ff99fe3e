"""`vgt slice IN OUT --submits A..B`, checked with the Python twin and its independent fold (vgtrace.fold):
the slice verifies, holds exactly submissions A..B (the same records, renumbered from 0), says where it
came from, and at its first submission has the same live objects, channels, mappings and mapped memory
as the original had at submission A, except for the bytes the GPU itself wrote before A, which the slice
derives from the dropped submissions and flags (MEMORY flag DERIVED, format 1.1)."""
import json

import pytest

import vgtrace
from vgtrace import spec
from vgtrace.fold import fold_until_submit

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code
DERIVED = spec.MEMORY_FLAG_DERIVED


def derived_bytes(t):
    """{va} of every byte a DERIVED MEMORY record of t gives."""
    out = set()
    for r in t.records:
        if r.name == "MEMORY" and r.fields["flags"] & DERIVED:
            out.update(range(r.fields["gpu_va"], r.fields["gpu_va"] + r.fields["length"]))
    return out


def byte_map(fold):
    """{va: byte} of every known byte of mapped pages."""
    out = {}
    for page, (data, known) in fold.known_bytes().items():
        out.update((page + i, data[i]) for i in range(len(data)) if known[i])
    return out


@pytest.fixture(scope="module")
def original(synth):
    path = synth("slice-src", "--shape", "all-types", "--submits", "30", "--channels", "3", "--memory-pages", "24",
                 "--chunk-size", "16384", "--seed", "8")
    return path, vgtrace.read_trace(path)


def submits(t):
    return [r for r in t.records if r.type == SUBMIT]


def do_slice(vgt, src, tmp_path, rng, name="s.vgt"):
    out = tmp_path / name
    vgt("slice", src, out, "--submits", rng, check=0)
    vgt("verify", out, check=0)
    return out, vgtrace.read_trace(out)


@pytest.mark.parametrize("a,b", [(0, 0), (0, 9), (12, 21), (29, 29)])
def test_slice_holds_the_submissions_and_their_state(vgt, tmp_path, original, a, b):
    src, t = original
    out, s = do_slice(vgt, src, tmp_path, f"{a}..{b}")
    assert [r.seq for r in s.records] == list(range(len(s.records)))
    got, want = submits(s), submits(t)[a:b + 1]
    assert [r.payload for r in got] == [r.payload for r in want]
    assert s.identity["slice_submits"] == f"{a}..{b}"
    assert s.identity["sliced_from"].endswith(src.name)
    for k, v in t.identity.items():
        assert s.identity[k] == v
    # the records between submissions A and B are all there, in order
    first, last = want[0].seq, want[-1].seq
    span = [r.payload for r in t.records if first <= r.seq <= last]
    i = s.records.index(got[0])
    assert [r.payload for r in s.records[i:i + len(span)]] == span
    # state at the first sliced submission equals the original's at A
    before_o, before_s = fold_until_submit(t.records, a), fold_until_submit(s.records, 0)
    assert before_s.objects.keys() == before_o.objects.keys()
    assert before_s.channels.keys() == before_o.channels.keys()
    assert before_s.mappings.keys() == before_o.mappings.keys()
    mem_o, mem_s, derived = byte_map(before_o), byte_map(before_s), derived_bytes(s)
    differ = {va for va in mem_o.keys() | mem_s.keys() if mem_o.get(va) != mem_s.get(va)}
    assert not differ - derived, f"memory differs at submission {a} outside derived bytes: {sorted(differ - derived)[:8]}"
    if a > 0:
        assert derived, "the submissions before A release semaphores: the slice must derive them"


def model_memory(t):
    """The C model's memory at a slice's first submission, as slice wrote it: {va: byte} of the MEMORY
    records (reason initial) before that submission (derived or not: a slice of a slice keeps the bytes,
    not the flag)."""
    first = submits(t)[0].seq
    out = {}
    for r in t.records:
        if r.name == "MEMORY" and r.seq < first and r.fields["reason"] == 0:
            out.update((r.fields["gpu_va"] + i, b) for i, b in enumerate(r.fields["data"]))
    return out


@pytest.mark.parametrize("a,b", [(3, 11), (17, 29)])
def test_the_c_models_memory_at_a_is_the_same(vgt, tmp_path, original, a, b):
    """Slicing the slice at its first submission dumps the C model's memory there; slicing the original at
    submission A dumps the C model's memory at A. They must be equal."""
    src, _ = original
    sliced, _ = do_slice(vgt, src, tmp_path, f"{a}..{b}", "ab.vgt")
    _, at_a = do_slice(vgt, src, tmp_path, f"{a}..{a}", "a.vgt")
    _, again = do_slice(vgt, sliced, tmp_path, "0..0", "again.vgt")
    assert model_memory(again) == model_memory(at_a)
    assert len(model_memory(at_a)) > 0


def test_freed_objects_and_records_before_a_are_left_out(vgt, tmp_path, original):
    src, t = original
    out, s = do_slice(vgt, src, tmp_path, "20..22")
    names = {r.name for r in s.records[:s.records.index(submits(s)[0])]}
    # what slice keeps before the first submission: the session, live objects, tokens, maps, memory
    assert names <= {"SESSION_START", "RM_ALLOC", "MEM_ALLOC", "CHANNEL", "ENGINE_OBJECT", "WORK_SUBMIT_TOKEN",
                     "RM_CONTROL", "GPU_MAP", "CPU_MAP", "MEMORY", "DIAGNOSTIC", "CHANNEL_STATE",
                     "CHANNEL_METHODS"}, names
    assert "RM_FREE" not in names and "GPU_UNMAP" not in names
    freed = {r.fields["handle"] for r in t.records if r.name == "RM_FREE" and r.seq < submits(t)[20].seq}
    assert freed, "the source trace should free an object before submission 20"
    alive = {r.fields["handle"] for r in s.records if r.name in ("RM_ALLOC", "MEM_ALLOC")}
    assert not freed & alive
    tokens = {r.fields["channel"] for r in s.records if r.name == "WORK_SUBMIT_TOKEN"}
    assert tokens == {r.fields["handle"] for r in s.records if r.name == "CHANNEL"}
    memory = [r for r in s.records if r.name == "MEMORY" and r.seq < submits(s)[0].seq]
    assert memory and all(r.fields["reason"] == 0 for r in memory)


def test_open_range_and_info(vgt, tmp_path, original):
    src, t = original
    out, s = do_slice(vgt, src, tmp_path, "25..")
    assert len(submits(s)) == 5
    info = vgt("info", out, "--json", check=0).stdout
    doc = json.loads(info)
    found = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if "submi" in k.lower() and isinstance(v, int):
                    found.append(v)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(doc)
    assert 5 in found, f"vgt info --json does not report 5 submissions: {info[:400]}"


def test_slice_of_a_slice(vgt, tmp_path, original):
    src, t = original
    mid, _ = do_slice(vgt, src, tmp_path, "5..24", "mid.vgt")
    out, s = do_slice(vgt, mid, tmp_path, "3..4", "inner.vgt")
    assert [r.payload for r in submits(s)] == [r.payload for r in submits(t)[8:10]]
    assert s.identity["slice_submits"] == "3..4" and s.identity["sliced_from"].endswith("mid.vgt")
    assert list(s.identity).count("sliced_from") == 1


@pytest.mark.parametrize("rng", ["30..31", "40..", "7..3", "x"])
def test_bad_ranges(vgt, tmp_path, original, rng):
    src, _ = original
    r = vgt("slice", src, tmp_path / "bad.vgt", "--submits", rng)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip()
