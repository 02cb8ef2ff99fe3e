"""The DIAGNOSTIC a slice writes about the GPU writes it derived before the cut counts each write once,
and only writes: a copy-engine LAUNCH_DMA with DATA_TRANSFER_TYPE NONE moves no bytes (it only releases
its semaphore, a SEM_RELEASE of its own), so it is neither a derived copy nor a write "not derived".
libcuda sends one after most copies (corpus/vadd.vgt: 115 of its 218 LAUNCH_DMA)."""
import json
import re
from pathlib import Path

from conftest import run_vgt

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
NOTE = re.compile(r"(\d+) semaphore releases, (\d+) reductions, (\d+) uploads, (\d+) copies, \d+ bytes; "
                  r"not derived: outputs of \d+ launches \(shaders are not executed\), (\d+) other writes")


def writes_before(vgt_bin, trace, first):
    """GPU writes the stream makes before submission `first`: semaphore releases and reports, uploads, and
    copy-engine launches that transfer data (DATA_TRANSFER_TYPE 1:0 not NONE, from the method itself)."""
    out = run_vgt(vgt_bin, "decode", trace, "--jsonl", "--no-fields", "--submits", f"0..{first - 1}", check=0).stdout
    n = transfers = launches = 0
    for line in out.splitlines():
        d = json.loads(line)
        kind = d.get("event")
        if kind in ("SEM_RELEASE", "REPORT", "UPLOAD"):
            n += 1
        elif d.get("type") == "method" and d.get("method") == "LAUNCH_DMA" and (d["class"] & 0xff) == 0xb5:
            launches += 1
            transfers += (d["data"] & 3) != 0
    return n + transfers, launches, transfers


def test_semaphore_only_launch_is_not_a_write(vgt_bin, tmp_path):
    trace, first = CORPUS / "vadd.vgt", 150
    out = tmp_path / "slice.vgt"
    run_vgt(vgt_bin, "slice", trace, out, "--submits", f"{first}..160", check=0)
    dump = run_vgt(vgt_bin, "dump", out, "--jsonl", "--type", "DIAGNOSTIC", check=0).stdout
    m = NOTE.search(dump)
    assert m, f"no derive note in the slice's diagnostics: {dump[:500]}"
    releases, reductions, uploads, copies, other = map(int, m.groups())
    writes, launches, transfers = writes_before(vgt_bin, trace, first)
    assert launches > transfers > 0, f"the control needs both kinds of LAUNCH_DMA: {launches} launches, {transfers} transfers"
    accounted = releases + reductions + uploads + copies + other
    assert accounted == writes, (f"derived {releases}+{reductions}+{uploads}+{copies} and {other} not derived = "
                                 f"{accounted}, but the stream made {writes} writes before submission {first} "
                                 f"({launches - transfers} semaphore-only LAUNCH_DMA among them)")
