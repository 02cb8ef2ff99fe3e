"""The RM/UVM ABI table (trace-format/facts/rm_abi.txt) against the driver's public headers for the series it
declares (its `driver` line): every struct's size and the offset of every field the capture and the
backend read, as NVIDIA/open-gpu-kernel-modules 580 defines them.

Always: against tests/abi/ogkm580_sizes.txt, the numbers check_ogkm.py measured by compiling NVIDIA's
headers at tag 580.142 (numbers only; no NVIDIA text is kept here). With VGT_OGKM_DIR naming a checkout of
open-gpu-kernel-modules at a 580 tag: against those headers, compiled now (the same check at 595.45.04
finds UVM_UNREGISTER_CHANNEL_PARAMS and UVM_FREE_PARAMS changed: why the table is keyed by series)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ABI = Path(__file__).resolve().parents[1] / "abi"


def check(*args):
    return subprocess.run([sys.executable, str(ABI / "check_ogkm.py"), *args], capture_output=True, text=True,
                          timeout=120)


def test_table_matches_transcribed_580_layouts():
    r = check("--transcribed", str(ABI / "ogkm580_sizes.txt"))
    assert r.returncode == 0, r.stdout + r.stderr
    n = int(r.stdout.splitlines()[-1].split()[0])
    assert n >= 140, r.stdout   # every struct of the table, and the fields the capture reads


def test_transcription_is_of_the_tables_series():
    first = next(l for l in (ABI / "ogkm580_sizes.txt").read_text().splitlines() if l.startswith("# tag "))
    table = (ABI.parents[1] / "trace-format" / "facts" / "rm_abi.txt").read_text()
    series = next(l.split()[1] for l in table.splitlines() if l.startswith("driver "))
    assert first.split()[2].startswith(series + "."), (first, series)


@pytest.mark.skipif(not os.environ.get("VGT_OGKM_DIR"), reason="VGT_OGKM_DIR (open-gpu-kernel-modules at a 580 tag) not set")
def test_table_matches_the_headers():
    r = check("--headers", os.environ["VGT_OGKM_DIR"])
    assert r.returncode == 0, r.stdout + r.stderr
