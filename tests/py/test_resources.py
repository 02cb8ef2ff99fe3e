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


# A child forked from this (possibly large) pytest process inherits its memory high-water mark: Linux
# carries the old address space's peak RSS across exec into ru_maxrss. So the verb is started by a small
# Python of its own, and ru_maxrss is that grandchild's alone.
_WAIT4 = """
import os, subprocess, sys
with open(os.devnull, "wb") as null:
    p = subprocess.Popen(sys.argv[1:], stdout=null)
    _, status, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def peak_mib(argv):
    """Run argv; its own peak RSS in MiB (ru_maxrss of that process alone) and its exit status."""
    r = subprocess.run(["python3", "-c", _WAIT4] + argv, capture_output=True, text=True, timeout=600)
    kib, rc = r.stdout.split()
    return int(kib) / 1024.0, int(rc), r.stderr


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
