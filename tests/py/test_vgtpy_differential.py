"""Differential test of the two readers: damaged traces (random changes, most with their checksums made
right again so the damage reaches the structural checks) must be accepted or rejected alike by the Python
twin and by `vgt verify`; a problem inside the chunks must be named at the same offset; what both accept
must decode to the same records in both (`vgt dump --jsonl`).

Known, intended difference: non-zero padding, which readers accept and only `vgt verify` reports (spec
section 1). Trailer problems: both must name an offset in the trailer, but may name different fields of it."""
import random
import re
import struct
from pathlib import Path

import pytest

import vgtrace
from test_vgtpy_cross import assert_agree, dump_jsonl
from vgtrace.mutate import fix_checksums, mutate

SEEDS = sorted((Path(__file__).resolve().parents[1] / "fuzz" / "corpus_reader").glob("*.vgt"))
CASES = 400


def c_verdict(vgt, path):
    r = vgt("verify", path)
    assert r.returncode in (0, 1, 2), r.stderr
    return r.returncode == 0, [int(x) for x in re.findall(r"offset (\d+)", r.stderr)], r.stderr


@pytest.mark.parametrize("seed", [1, 2])
def test_readers_agree_on_damaged_traces(vgt, vgt_bin, tmp_path, seed):
    assert SEEDS, "no seed traces under tests/fuzz/corpus_reader"
    rng = random.Random(seed)
    seeds = [p.read_bytes() for p in SEEDS]
    path = tmp_path / "damaged.vgt"
    disagreements = []
    accepted = 0
    for n in range(CASES):
        base = rng.choice(seeds)
        hlen = struct.unpack_from("<I", base, 16)[0]
        data = mutate(rng, base, start=hlen if rng.random() < 0.8 else 0)
        if rng.random() < 0.8:
            data = fix_checksums(data)
        try:
            t, py_err = vgtrace.read_trace(data), None
        except vgtrace.VgtError as e:
            t, py_err = None, e
        path.write_bytes(data)
        c_ok, c_offsets, c_msg = c_verdict(vgt, path)
        if "padding" in c_msg:
            continue
        if c_ok != (py_err is None):
            disagreements.append(f"case {n}: python {'accepts' if py_err is None else py_err}; vgt verify "
                                 f"{'accepts' if c_ok else c_msg.strip()}")
            continue
        if py_err is None:
            assert_agree(t.records, dump_jsonl(vgt_bin, path))
            accepted += 1
            continue
        try:
            chunks_end = vgtrace.read_prefix(data)[0].chunks_end
        except vgtrace.VgtError:
            chunks_end = len(data)   # the file header itself is bad
        # a cut input: the structure it cuts (python) or where it ends (vgt) are both right
        named_ok = py_err.offset in c_offsets or (py_err.kind == "TRUNCATED" and len(data) in c_offsets)
        if py_err.offset is not None and py_err.offset < chunks_end and not named_ok:
            disagreements.append(f"case {n}: python names offset {py_err.offset} ({py_err}); vgt: {c_msg.strip()}")
        elif py_err.offset is not None and py_err.offset >= chunks_end:
            assert any(o >= chunks_end for o in c_offsets), f"case {n}: vgt does not name the trailer: {c_msg}"
    assert not disagreements, "\n".join(disagreements[:10])
    assert accepted >= CASES // 20, f"only {accepted} damaged traces were valid: the mutations are too coarse"
