"""sim models the copy engine's block-linear copies: the Vulkan and GL corpus traces upload textures and
read render targets back through them (LAUNCH_DMA SRC/DST_MEMORY_LAYOUT BLOCKLINEAR), and a replay on sim
no longer reports them as not modelled.

vk_lints.vgt is derived from vk_nostore.vgt with submission 23's draw removed while the recording's
readback of its render target stays: sim, which models the submission's clear and the block-linear
readback, finds the clear color where the recording has the triangle. The bytes that differ are counted
here independently, from the record itself: every byte the triangle changed, and no other.
"""
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

import vgtrace

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"


def replay_sim(vgt, name):
    return vgt("replay", CORPUS / f"{name}.vgt", "--backend", "sim", "--check")


@pytest.mark.parametrize("name", ["vk_triangle", "vk_scene", "gl_egl", "vk_nostore", "gl_nostore"])
def test_block_linear_copies_are_modelled(vgt, name):
    r = replay_sim(vgt, name)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "block-linear" not in out, [ln for ln in out.splitlines() if "block-linear" in ln]
    # the copies ran: the counters count them and nothing about a copy was left unmodelled
    copies = re.search(r"copies (\d+) \((\d+) bytes", out)
    assert copies and int(copies.group(1)) > 0, out[-2000:]
    assert not [ln for ln in out.splitlines() if "unsupported:" in ln and "copy" in ln]


def test_derived_readback_differs_exactly_where_the_removed_draw_drew(vgt):
    r = replay_sim(vgt, "vk_lints")
    assert r.returncode == 1, r.stdout[-2000:]
    mism = re.findall(r"MISMATCH submission 23 .*MEMORY observed record seq (\d+) at VA (0x[0-9a-f]+) \((\d+) bytes\): "
                      r"(\d+) of (\d+) compared bytes differ", r.stdout)
    assert len(mism) == 1, r.stdout[-3000:]
    seq, va, length, differ, compared = mism[0]
    assert int(compared) == int(length) == 16384      # the whole readback was produced by sim
    rec = next(x for x in vgtrace.read_trace(str(CORPUS / "vk_lints.vgt")).records if x.seq == int(seq))
    data = rec.fields["data"]
    assert rec.fields["gpu_va"] == int(va, 16) and len(data) == 16384
    pixels = [data[i:i + 4] for i in range(0, len(data), 4)]
    background, n = Counter(pixels).most_common(1)[0]
    assert 0 < n < len(pixels)                        # a clear color and a triangle over it
    want = sum(a != b for p in pixels for a, b in zip(p, background))
    assert int(differ) == want


def small_corpus(tmp_path, mismatches):
    """A corpus of vk_lints alone, with its goldens and the given <name>.mismatches text (None: none)."""
    d = tmp_path / "corpus"
    (d / "goldens").mkdir(parents=True)
    shutil.copy(CORPUS / "vk_lints.vgt", d / "vk_lints.vgt")
    for g in (CORPUS / "goldens").glob("vk_lints.*"):
        if g.suffix != ".mismatches":
            shutil.copy(g, d / "goldens" / g.name)
    if mismatches is not None:
        (d / "goldens" / "vk_lints.mismatches").write_text(mismatches)
    (d / "manifest.txt").write_text("vk_lints.vgt\n")
    return d


@pytest.mark.parametrize("text,rc,says", [
    ((CORPUS / "goldens" / "vk_lints.mismatches").read_text(), 0, "(expected) submission 23"),
    (None, 1, "REPLAY PROBLEMS"),
    ("# one more than fails\nrecord 1500\nrecord 1499\n", 1, "EXPECTED MISMATCH DID NOT OCCUR: record 1499"),
    ("record fifteen hundred\n", 1, "is not `record SEQ`"),
])
def test_corpus_expected_mismatches(vgt, tmp_path, text, rc, says):
    r = vgt("corpus", "check", small_corpus(tmp_path, text))
    assert r.returncode == rc, r.stdout[-3000:]
    assert says in r.stdout, r.stdout[-3000:]
