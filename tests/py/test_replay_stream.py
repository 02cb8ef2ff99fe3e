"""A stream replays like the file it came from. The engine plans inside itself, over the records it holds
back before replaying any (replay/src/plan.c), so `cat T | vgt replay -` finds the same observed ranges,
address plan and relocations as `vgt replay T`: the census rows and summary, the --plan output and the
relocation reports are equal for every corpus trace. (Before, only the verb planned, by pre-scanning a
file: the census of a stream came out with 0 rows.)"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import check_exit

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
TRACES = sorted(t["trace"] for t in json.loads((CORPUS / "manifest.json").read_text())["traces"])


def replay(vgt_bin, source, *args, stdin_path=None):
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        return subprocess.run([str(vgt_bin), "replay", str(source), "--backend", "sim", *map(str, args)],
                              stdin=stdin, capture_output=True, text=True, timeout=300)
    finally:
        if stdin_path:
            stdin.close()


def both(vgt_bin, trace, *args):
    """(file run, stream run) of the same trace with the same options."""
    return replay(vgt_bin, trace, *args), replay(vgt_bin, "-", *args, stdin_path=trace)


def steady(text):
    """The output without the wall-clock timings (the only lines that may differ between two runs)."""
    return [ln for ln in text.splitlines() if not ln.lstrip().startswith("timing:")]


@pytest.mark.parametrize("name", TRACES, ids=lambda t: Path(t).stem)
def test_stream_census_equals_file(vgt_bin, tmp_path, name):
    trace = REPO / name
    fj, sj = tmp_path / "file.jsonl", tmp_path / "stream.jsonl"
    f = replay(vgt_bin, trace, "--check", "--census", "--census-json", fj)
    s = replay(vgt_bin, "-", "--check", "--census", "--census-json", sj, stdin_path=trace)
    assert f.returncode == s.returncode == check_exit(name), (f.stdout[-2000:], s.stdout[-2000:], s.stderr[-2000:])
    rows_f, rows_s = fj.read_text().splitlines(), sj.read_text().splitlines()
    assert rows_f, "the file's census has rows"
    assert rows_s == rows_f
    census = [ln for ln in steady(s.stdout) if ln.lstrip().startswith("census:")]
    assert census and re.search(r"; [1-9]\d* rows;", census[0]), census
    assert steady(s.stdout) == steady(f.stdout)


@pytest.mark.parametrize("name", TRACES, ids=lambda t: Path(t).stem)
def test_stream_plan_equals_file(vgt_bin, name):
    f, s = both(vgt_bin, REPO / name, "--check", "--quiet", "--plan")
    assert f.returncode == s.returncode == check_exit(name), (f.stdout[-2000:], s.stdout[-2000:])
    assert any(ln.startswith("address plan: ") for ln in s.stdout.splitlines()), s.stdout[:2000]
    assert steady(s.stdout) == steady(f.stdout)


def test_stream_relocation_equals_file(vgt_bin):
    """A forced relocation from a stream: the plan's operand notes, the macro-built operand the replay
    warns about and every rewrite are those of the file (vk_compute's macro case, test_replay_reloc.py)."""
    f, s = both(vgt_bin, CORPUS / "vk_compute.vgt", "--check", "--plan", "--relocate", "0x5200000", "--json")
    assert f.returncode == s.returncode == 1
    jf, js = json.loads(f.stdout), json.loads(s.stdout)
    assert [r["message"] for r in js["reports"]] == [r["message"] for r in jf["reports"]]
    assert any("MME macro" in r["message"] and r["kind"] == "warning" for r in js["reports"])
    assert js["addresses"] == jf["addresses"] and js["addresses"]["relocations"] >= 1
    assert js["checks"] == jf["checks"]
    # --plan goes to stderr with --json; a stream adds only the note that it starts at the stream's end
    note = "vgt replay: note: the replay is planned over the whole trace, so it starts at the end of the stream"
    assert s.stderr.startswith(note)
    assert "relocation (operand)" in s.stderr and s.stderr.split("\n", 1)[1] == f.stderr
