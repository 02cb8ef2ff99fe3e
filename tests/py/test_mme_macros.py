"""The distinct-macro list of the MME agreement test (tests/gpu/mme_macros.py) over the corpus, and `vgt mme --code`."""
import glob
import json
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "gpu"))
import mme_macros  # noqa: E402

CORPUS = sorted(glob.glob(str(REPO / "corpus" / "*.vgt")))


def mme_json(vgt_bin, trace):
    p = subprocess.run([str(vgt_bin), "mme", trace, "--json", "--code", "--no-disasm"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_code_is_the_body(vgt_bin):
    d = mme_json(vgt_bin, str(REPO / "corpus" / "gl_egl.vgt"))
    assert d["macros"]
    for v in d["macros"]:
        assert len(v["code"]) == v["dwords"]
        assert all(0 <= w < 1 << 32 for w in v["code"])
    # macro 0x63 of the NVIDIA driver: DWRITE [LOAD0], LOAD1 with end_next, then a no-op group
    v = next(v for v in d["macros"] if v["hash"] == "2e7ecf3e37d886fa")
    assert v["code"] == [0x00000003, 0x18c00000, 0x3bcc7f01, 0x00000003, 0x18c00000, 0x318c0300]


def test_distinct_by_hash_over_the_corpus(vgt_bin, tmp_path):
    macros = mme_macros.collect(str(vgt_bin), CORPUS)
    hashes = [m["hash"] for m in macros]
    assert len(hashes) == len(set(hashes)) > 20
    # every hash any trace reports is in the list, named by the first trace (in the order given) that has it
    first = {}
    for t in CORPUS:
        for v in mme_json(vgt_bin, t)["macros"]:
            if v["format"] == "tu104":
                first.setdefault(v["hash"], t.rsplit("/", 1)[1])
    assert {m["hash"]: m["trace"] for m in macros} == first
    called = [m for m in macros if m["calls"]]
    assert len(called) >= 15
    for m in called:
        assert len(m["calls"]) <= 4
        params = [tuple(c["params"]) for c in m["calls"]]
        assert len(params) == len(set(params)), "captured calls have distinct parameters"
    # the list file mme_agree reads: one macro line per hash, its calls after it
    path = tmp_path / "macros.txt"
    mme_macros.write_list(macros, str(path))
    lines = path.read_text().splitlines()
    mlines = [l.split() for l in lines if l.startswith("macro ")]
    assert [l[1] for l in mlines] == hashes
    for l, m in zip(mlines, macros):
        assert int(l[4], 16) == len(m["code"]) == len(l) - 5
        assert [int(w, 16) for w in l[5:]] == m["code"]
    assert sum(l.startswith("call ") for l in lines) == sum(len(m["calls"]) for m in macros)


def test_bit14_branches(vgt_bin):
    macros = mme_macros.collect(str(vgt_bin), CORPUS)
    found = [b for m in macros for b in mme_macros.branches_bit14(m["code"])]
    # NVIDIA's driver sets bit 14 on branches, never on an exit (offset 0x1000)
    assert len(found) >= 50
    assert all(imm & 0x4000 and (imm & 0x1fff) != 0x1000 for _, _, _, imm in found)
