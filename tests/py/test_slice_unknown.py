"""A slice cannot reproduce what the GPU wrote before its cut that no decoder can know: the timestamps of
semaphore releases with a timestamp (four-word structure: the time at +8) and report values. The slice
leaves those bytes out of the observed contents it copies, so a replay of the slice is not checked against
a timestamp it cannot have (H200: vk_triangle's slice 12..23 failed --check on the copy channel's
timestamp at 0x5030008 before this). The rest of each observed record is kept."""
import json
from pathlib import Path

from conftest import run_vgt

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
TIMESTAMP = 2   # events.h VGT_SEM_FLAG_TIMESTAMP


def timestamps_before(vgt_bin, trace, first):
    out = run_vgt(vgt_bin, "decode", trace, "--jsonl", "--no-fields", "--submits", f"0..{first - 1}", check=0).stdout
    spans = set()
    for line in out.splitlines():
        d = json.loads(line)
        if d.get("event") == "SEM_RELEASE" and d["flags"] & TIMESTAMP:
            spans.add((d["va"] + 8, d["va"] + 16))
        elif d.get("event") == "REPORT":
            spans.add((d["va"], d["va"] + 16))
    return spans


def observed(vgt_bin, trace):
    out = run_vgt(vgt_bin, "dump", trace, "--jsonl", "--type", "MEMORY", check=0).stdout
    recs = (json.loads(line)["fields"] for line in out.splitlines())
    return [(f["gpu_va"], f["gpu_va"] + f["length"], bytes.fromhex(f["data"])) for f in recs if f["reason"] == 2]


def covered(records, lo, hi):
    return any(va < hi and lo < end for va, end, _ in records)


def test_slice_leaves_out_timestamps_written_before_the_cut(vgt_bin, tmp_path):
    trace, first = CORPUS / "vk_triangle.vgt", 12
    spans = timestamps_before(vgt_bin, trace, first)
    whole = observed(vgt_bin, trace)
    at_stake = [s for s in spans if covered(whole, *s)]
    assert at_stake, "the trace observes none of the timestamps written before the cut: the test proves nothing"
    out = tmp_path / "slice.vgt"
    run_vgt(vgt_bin, "slice", trace, out, "--submits", f"{first}..23", check=0)
    sliced = observed(vgt_bin, out)
    assert not [s for s in at_stake if covered(sliced, *s)]
    # the bytes around them are still observed, unchanged
    for va, end, data in sliced:
        for wva, wend, wdata in whole:
            if wva <= va and end <= wend:
                assert data == wdata[va - wva:end - wva]
                break
        else:
            raise AssertionError(f"observed bytes 0x{va:x}..0x{end:x} of the slice are in no observed record of the trace")
    assert sum(end - va for va, end, _ in sliced) > 0
    run_vgt(vgt_bin, "replay", out, "--backend", "sim", "--check", "--quiet", check=0)
