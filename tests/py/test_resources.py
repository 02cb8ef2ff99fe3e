"""Bounded resources: every verb that reads a trace streams it. Peak RSS does not grow with the trace's
size (the bound in docs/architecture.md, "Untrusted input"), measured per child process with wait4.
bench/resources/run.sh measures the same at 1, 2 and 10 GB; this is its small, CI-sized form (24 MiB and
96 MiB of records: four times the records, peak RSS within 25% + 16 MiB, and under the stated bound)."""
import os
import subprocess

import pytest

BOUND_MIB = 1024
VERBS = [
    ("info", ["info", "T"]),
    ("verify", ["verify", "T"]),
    ("dump", ["dump", "T"]),
    ("census", ["census", "T", "--total"]),
    ("mme", ["mme", "T"]),
    ("launches", ["launches", "T"]),
    ("slice", ["slice", "T", "O.vgt", "--submits", "1.."]),
    ("repack", ["repack", "T", "O.vgt", "--level", "1"]),
    ("replay-sim", ["replay", "T", "--backend", "sim"]),
]


def peak_mib(argv):
    """Run argv; its own peak RSS in MiB (ru_maxrss of that child alone) and its exit status."""
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_maxrss / 1024.0, p.returncode, err


@pytest.fixture(scope="module")
def traces(vgt_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("res")
    out = {}
    for size in ("24M", "96M"):
        t = d / f"t{size}.vgt"
        subprocess.run([str(vgt_bin), "synth", "-o", str(t), "--shape", "pushbuf", "--bytes", size, "--level", "1",
                        "--channels", "4"], check=True, capture_output=True, timeout=300)
        out[size] = t
    return d, out


@pytest.mark.parametrize("name,args", VERBS, ids=[v[0] for v in VERBS])
def test_peak_rss_does_not_grow_with_the_trace(vgt_bin, traces, name, args):
    d, ts = traces
    rss = {}
    for size, t in ts.items():
        argv = [str(vgt_bin)] + [str(t) if a == "T" else str(d / f"out{size}.vgt") if a == "O.vgt" else a for a in args]
        mib, rc, err = peak_mib(argv)
        assert rc == 0, (name, size, err)
        rss[size] = mib
    assert rss["96M"] <= rss["24M"] * 1.25 + 16, (name, rss)
    assert max(rss.values()) <= BOUND_MIB, (name, rss)
