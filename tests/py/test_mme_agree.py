"""tests/gpu/mme_agree --dry-run (no GPU): its macros use only the group forms of NVIDIA's driver macros in the
corpus, it refuses to run when they do not, stage 0 comes first, and every listed macro gets AGREE/DISAGREE/SKIP
(DRY in a dry run) with a reason."""
import glob
import re
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "gpu"))
import mme_macros  # noqa: E402

CORPUS = sorted(glob.glob(str(REPO / "corpus" / "*.vgt")))


@pytest.fixture(scope="module")
def agree(build_dir):
    b = build_dir / "tests" / "mme_agree"
    if not b.is_file():
        pytest.fail(f"{b} is missing: build it (cmake --build {build_dir} --target mme_agree)", pytrace=False)
    return b


@pytest.fixture(scope="module")
def macros(vgt_bin):
    return mme_macros.collect(str(vgt_bin), CORPUS)


@pytest.fixture(scope="module")
def listfile(macros, tmp_path_factory):
    p = tmp_path_factory.mktemp("mme") / "macros.txt"
    mme_macros.write_list(macros, str(p))
    return p


def run(agree, *args):
    return subprocess.run([str(agree), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_dry_run_staged_and_per_macro(agree, listfile, macros):
    r = run(agree, "--list", listfile, "--dry-run")
    assert r.returncode == 0, r.stdout[-3000:]
    out = r.stdout
    m = re.search(r"driver forms: (\d+) distinct group forms in (\d+) groups of (\d+) driver macros", out)
    assert m and int(m.group(3)) == len(macros) and int(m.group(1)) > 100
    ours = re.findall(r"^our macro (\S+) +\d+ groups: (.*)$", out, re.M)
    names = [n for n, _ in ours]
    for want in ("probe_shadow", "probe_dataram", "dwrite", "guard_branch", "store3", "b14_loop"):
        assert want in names
    assert all(v.startswith("driver forms only") for _, v in ours), ours
    # the data-RAM writer is NVIDIA's own macro 0x63, byte for byte
    assert dict(ours)["dwrite"].endswith("the very body of driver macro 2e7ecf3e37d886fa")
    # stage 0 is the first row
    rows = re.findall(r"^(stage0_zero_probe|extra_\w+|b14_\w+) +(\S+) ", out, re.M)
    assert rows[0] == ("stage0_zero_probe", "DRY")
    # extra_branch_exit raised MME ILLEGAL_OPCODE on the H200: skipped unless --run-known-bad
    assert all(res == ("SKIP" if name == "extra_branch_exit" else "DRY") for name, res in rows), rows
    # one line per listed macro, each with a verdict; every SKIP says why
    lines = re.findall(r"^(DRY|SKIP|AGREE|DISAGREE|ERROR) +([0-9a-f]{16}) .*?insts: (.*)$", out, re.M)
    assert [h for _, h, _ in lines] == [m["hash"] for m in macros]
    never = {m["hash"] for m in macros if not m["calls"]}
    for res, h, detail in lines:
        if h in never:
            assert res == "SKIP" and "never called cleanly in the corpus" in detail
        if res == "SKIP":
            assert detail.strip()
    assert any(res == "DRY" for res, _, _ in lines)
    assert any(res == "SKIP" and "MME DMA" in d for res, _, d in lines)
    s = re.search(r"macros: (\d+) distinct, (\d+) would run, (\d+) skipped", out)
    assert s and int(s.group(1)) == len(macros) and int(s.group(2)) + int(s.group(3)) == len(macros)
    assert int(s.group(2)) == sum(res == "DRY" for res, _, _ in lines)
    counts = [int(n) for n in re.findall(r"^  skipped +(\d+): ", out, re.M)]
    assert sum(counts) == int(s.group(3))


def test_safe_skips_driver_macros(agree, listfile):
    out = run(agree, "--list", listfile, "--dry-run", "--safe").stdout
    assert re.search(r"^SKIP +[0-9a-f]{16} .*--safe", out, re.M)
    assert not re.search(r"^DRY +[0-9a-f]{16} ", out, re.M)


def test_refuses_without_the_driver_forms(agree, macros, tmp_path):
    # a list holding only the driver's data-RAM writer: our probes' forms are not in it, so nothing may run
    only = [m for m in macros if m["hash"] == "2e7ecf3e37d886fa"]
    p = tmp_path / "one.txt"
    mme_macros.write_list(only, str(p))
    r = run(agree, "--list", p, "--dry-run")
    assert r.returncode == 2
    assert "REFUSED" in r.stdout and "nothing submitted" in r.stdout
    assert re.search(r"^our macro dwrite .*driver forms only", r.stdout, re.M)
    assert re.search(r"^our macro probe_shadow .*is in no driver macro", r.stdout, re.M)
    assert "stage0_zero_probe" not in r.stdout


def test_forms_table_keeps_both_alus_writing_one_register_out(agree, listfile):
    # the old zeroing macro's first group ("ADD R1, LOAD0, ZERO ; ADD R1, ZERO, #0xc00") was refused by the H200
    r = run(agree, "--list", listfile, "--forms")
    assert r.returncode == 0
    forms = [l for l in r.stdout.splitlines() if " ; " in l and not l.startswith("our macro")]
    assert forms
    assert not any(re.match(r"^(\[[a-z-]+\])*ADD a,L0,Z ; ADD a,", f) for f in forms)
    assert "DWRITE Z,L0,L1 ; - ; NONE/NONE ; NONE/NONE ; end_next" in forms
