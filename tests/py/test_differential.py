"""The sim-versus-hardware differential (tests/gpu/differential.sh) on what can be checked without the GPU:
`vgt replay --dump-state` on sim, what sim reports as not modelled, the comparer's classes
(tests/gpu/state_diff.py), and the CUDA-graph QMD chain that sim used to leave blocked."""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_vgt

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "gpu"))
import state_diff  # noqa: E402

GRAPH = REPO / "corpus" / "cuda_graph.vgt"
GRAPH_COUNTER = 0x204627fe4   # the stream's progress semaphore the graph's last node adds 1 to


def sim_state(vgt_bin, trace, tmp_path, name="sim"):
    state = tmp_path / f"{name}.state"
    rep = json.loads(run_vgt(vgt_bin, "replay", trace, "--backend", "sim", "--json", "--dump-state", state,
                             check=0).stdout)
    return state, rep


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


# ---- the CUDA-graph chain ----
def test_cuda_graph_chain_runs_on_sim(vgt_bin, tmp_path):
    """Each graph launch schedules only the graph's CTA-less root QMD; its kernel nodes (REQUIRE_SCHEDULING_PCAS)
    run through DEPENDENT_QMD SCHEDULE, and the last releases ADD 1 on the counter after the driver's upload of
    its base. Without that, sim left the copy channel on an ACQ_CIRC_GEQ (waits for base+1, holds base)."""
    state, rep = sim_state(vgt_bin, GRAPH, tmp_path)
    blocked = [r["message"] for r in rep["reports"] if r.get("event") == "blocked"]
    assert not blocked, blocked
    assert rep["blocked"] is False and rep["result"] == "ok"
    assert rep["qmds"] == {"armed": 3, "dependent_runs": 24}   # 3 nodes armed once; 8 launches x 3 nodes
    assert rep["semaphores"]["reductions"] == 8                  # one ADD per launch, not one per capture
    sems = {r["va"]: r for r in read_lines(state) if r["type"] == "semaphore"}
    assert sems[GRAPH_COUNTER]["value"] == 0x22                  # the last upload wrote 0x21, then ADD 1


def test_cuda_graph_check_passes(vgt_bin):
    r = run_vgt(vgt_bin, "replay", GRAPH, "--backend", "sim", "--check", "--json", check=0)
    rep = json.loads(r.stdout)
    assert rep["checks"]["failed"] == 0 and rep["checks"]["passed"] >= 1


# ---- --dump-state ----
def test_dump_state_regions(vgt_bin, tmp_path):
    state, _ = sim_state(vgt_bin, GRAPH, tmp_path)
    rows = read_lines(state)
    head, regions = rows[0], rows[1:]
    assert head == {"type": "state", "backend": "sim", "known_bytes": True, "regions": len(regions)}
    ranges = [r for r in regions if r["type"] == "range" and "error" not in r]
    assert all(isinstance(r["seq"], int) for r in regions if r["type"] == "range")   # read at their record
    assert ranges and all(len(r["chunks"]) == -(-r["len"] // r["chunk"]) for r in ranges)
    keys = [(r["type"], r["va"], r["len"], r["seq"]) for r in regions]
    assert len(keys) == len(set(keys)), "a region listed twice"
    # sim does not run the graph's kernels: what they wrote (the observed ranges) is not known to it
    assert any(r["unknown"] for r in ranges)
    # the same replay twice gives the same state (deterministic: the comparison can rely on it)
    again, _ = sim_state(vgt_bin, GRAPH, tmp_path, "again")
    assert again.read_text() == state.read_text()


def test_sim_reports_what_it_does_not_model(vgt_bin, tmp_path):
    """vk_scene draws and clears its depth target: sim neither rasterizes nor clears depth; it says so
    (unsupported reports for the depth clears) and marks what shaders may have written unknown in its state."""
    state, rep = sim_state(vgt_bin, REPO / "corpus" / "vk_scene.vgt", tmp_path)
    assert rep["unsupported"] == sum(1 for r in rep["reports"] if r.get("event") == "unsupported") > 0
    rows = read_lines(state)[1:]
    assert any(r["type"] == "range" and r["unknown"] for r in rows) or \
        any(r["type"] == "semaphore" and not r["known"] for r in rows)


# ---- the comparer ----
def test_compare_identical_is_ok(vgt_bin, tmp_path):
    state, rep = sim_state(vgt_bin, GRAPH, tmp_path)
    row, details, _ = state_diff.compare(state, state, "cuda_graph", rep)
    assert row["verdict"] == "ok" and not details
    assert row["sem"] == row["sem_eq"] > 0 and row["ranges"] == row["rng_eq"] > 0


def test_compare_classes(tmp_path):
    sim = [{"type": "state", "backend": "sim", "known_bytes": True, "regions": 4},
           {"type": "semaphore", "va": 0x1000, "len": 4, "value": 5, "known": True},
           {"type": "semaphore", "va": 0x1010, "len": 4, "value": 5, "known": False},
           {"type": "range", "va": 0x2000, "len": 600, "chunk": 256, "chunks": ["a", "b", "c"], "unknown": [1]},
           {"type": "range", "va": 0x3000, "len": 256, "chunk": 256, "chunks": ["d"], "unknown": []}]
    gpu = copy.deepcopy(sim)
    gpu[0]["backend"] = "gpu"
    write_lines(tmp_path / "s", sim)
    write_lines(tmp_path / "g", gpu)
    row, _, _ = state_diff.compare(tmp_path / "s", tmp_path / "g")
    assert row["verdict"] == "ok"
    gpu[2]["value"] = 6            # differs where sim did not know: not modelled
    gpu[3]["chunks"][1] = "x"      # differs in an unknown chunk: not modelled
    write_lines(tmp_path / "g", gpu)
    row, details, _ = state_diff.compare(tmp_path / "s", tmp_path / "g")
    assert (row["sem_nm"], row["rng_nm"], row["sem_diff"], row["rng_diff"]) == (1, 1, 0, 0)
    assert row["verdict"] == "not-modelled"
    gpu[1]["value"] = 6            # differs where sim knew: a disagreement
    gpu[3]["chunks"][2] = "y"      # a known chunk differs: the range disagrees, first offset 512
    write_lines(tmp_path / "g", gpu)
    row, details, _ = state_diff.compare(tmp_path / "s", tmp_path / "g")
    assert (row["sem_diff"], row["rng_diff"], row["verdict"]) == (1, 1, "DIVERGE")
    rng = [d for d in details if d["kind"] == "range"][0]
    assert rng["class"] == "differ" and rng["first_offset"] == 512 and rng["chunks_differ"] == 2
    del gpu[4]                     # a range only one side has
    write_lines(tmp_path / "g", gpu)
    row, details, _ = state_diff.compare(tmp_path / "s", tmp_path / "g")
    assert any(d["class"] == "missing" for d in details)


def test_compare_blocked_sim_diverges(tmp_path):
    rows = [{"type": "state", "backend": "sim", "known_bytes": True, "regions": 1},
            {"type": "semaphore", "va": 0x1000, "len": 4, "value": 5, "known": True}]
    write_lines(tmp_path / "s", rows)
    summary = {"blocked": True, "finish": "1 channel(s) wait on an acquire", "reports": [
        {"event": "unsupported", "message": "semaphore reduction FADD at VA 0x10 is not modelled"}]}
    row, _, notes = state_diff.compare(tmp_path / "s", tmp_path / "s", "t", summary)
    assert row["verdict"] == "DIVERGE" and row["sim_notes"] == 2
    assert any(n.startswith("not modelled: semaphore reduction FADD") for n in notes)


def test_state_diff_cli_table(tmp_path):
    rows = [dict(state_diff.COLUMNS and {c: 0 for c in state_diff.COLUMNS}, trace="a", verdict="ok"),
            dict({c: 0 for c in state_diff.COLUMNS}, trace="b", verdict="DIVERGE")]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = subprocess.run([sys.executable, str(REPO / "tests/gpu/state_diff.py"), "--table", str(tmp_path / "rows.jsonl")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "trace" and lines[0].split()[-1] == "verdict" and len(lines) == 3


def test_differential_script_parses():
    assert subprocess.run(["bash", "-n", str(REPO / "tests/gpu/differential.sh")]).returncode == 0


# ---- derived traces never reach the GPU ----
LINTS = ("gl_lints", "vk_lints", "vk_scene_lints")   # derived by corpus/derive/draw_lints.py (one moves a program
# to an unmapped VA)


def info_identity(vgt_bin, trace):
    return json.loads(run_vgt(vgt_bin, "info", "--json", trace).stdout)["identity"]


def test_trace_mark_derived_from_identity_and_manifest(vgt_bin):
    manifest = REPO / "corpus" / "manifest.json"
    for name in LINTS:
        ident = info_identity(vgt_bin, REPO / "corpus" / f"{name}.vgt")
        assert state_diff.trace_mark(ident) == "skipped: derived trace (would fault on purpose)"
        # the manifest alone says so too (a derived trace whose identity lost the mark)
        entry = state_diff.manifest_entry(manifest, name)
        assert entry["derived"] is True
        assert state_diff.trace_mark({}, entry).startswith("skipped: derived")
    ident = info_identity(vgt_bin, REPO / "corpus" / "vk_triangle.vgt")
    assert state_diff.trace_mark(ident, state_diff.manifest_entry(manifest, "vk_triangle")) is None
    assert state_diff.trace_mark({"capture_mode": "synthetic"}).startswith("skipped: synthetic")


def test_differential_skips_derived_traces(vgt_bin, tmp_path):
    """run mode over the derived traces alone: nothing reaches the GPU (no GPU replay is even started: on a
    machine without one an attempt would show as NO-STATE), each row says why, and skipping is no failure."""
    env = dict(os.environ, OUT=str(tmp_path), VGT=str(vgt_bin), WORKLOAD="", CORPUS="corpus/*_lints.vgt")
    r = subprocess.run(["bash", str(REPO / "tests/gpu/differential.sh"), "run"], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert sorted(row["trace"] for row in rows) == sorted(LINTS)
    assert all(row["verdict"] == "skipped: derived trace (would fault on purpose)" for row in rows)
    assert not list(tmp_path.glob("*.gpu.*")) and not list(tmp_path.glob("*.sim.*"))
    assert "skipped: derived trace" in (tmp_path / "table.txt").read_text()


@pytest.mark.parametrize("name", LINTS)
def test_replay_gpu_refuses_derived_trace(vgt_bin, name):
    """`vgt replay --backend gpu` refuses a derived trace before it opens the GPU (so this holds on a machine
    without one); a captured trace goes on to open it."""
    r = run_vgt(vgt_bin, "replay", REPO / "corpus" / f"{name}.vgt", "--backend", "gpu", check=2)
    assert "derived" in r.stderr and "refusing to run it on backend gpu" in r.stderr, r.stderr
    assert "nvidiactl" not in r.stderr
    r = run_vgt(vgt_bin, "replay", REPO / "corpus" / "gl_nostore.vgt", "--backend", "gpu", check=None)
    assert "refusing" not in r.stderr
    # sim runs it: a derived trace is harmless there
    run_vgt(vgt_bin, "replay", REPO / "corpus" / f"{name}.vgt", "--backend", "sim", "--quiet", check=0)


# ---- semaphores: the capture is the arbiter ----
# The H200 differential showed these lower on the GPU than on sim; the GPU was the one wrong (its graphics
# channel hung after an earlier derived trace faulted it). The capture observed sim's values.
VK_SEMS = {"vk_triangle": {0x5700bb0: 0x8, 0x5700c30: 0x1a, 0x4ea0080: 0x1},
           "vk_nostore": {0x5700bb0: 0xd, 0x5700c30: 0x42},
           "vk_lints": {0x5700bb0: 0xd, 0x5700c30: 0x42}}


@pytest.mark.parametrize("name", sorted(VK_SEMS))
def test_sim_semaphores_equal_capture(vgt_bin, tmp_path, name):
    trace = REPO / "corpus" / f"{name}.vgt"
    state, _ = sim_state(vgt_bin, trace, tmp_path)
    sems = {r["va"]: r for r in read_lines(state) if r["type"] == "semaphore" and "value" in r}
    capture = state_diff.capture_values(str(vgt_bin), trace, {va: r["len"] for va, r in sems.items()})
    assert len(capture) >= len(sems) - 1          # all but one of them the capture saw
    wrong = {hex(va): (hex(sems[va]["value"]), hex(v)) for va, (v, _, _) in capture.items() if sems[va]["value"] != v}
    assert not wrong, wrong
    for va, want in VK_SEMS[name].items():
        assert sems[va]["value"] == want and sems[va]["known"]
        assert capture[va][0] == want and capture[va][2] == "observed"


def test_compare_gpu_unfinished(tmp_path):
    sim = [{"type": "state", "backend": "sim", "known_bytes": True, "regions": 2},
           {"type": "semaphore", "va": 0x1000, "len": 4, "value": 8, "known": True},
           {"type": "semaphore", "va": 0x1010, "len": 4, "value": 3, "known": True}]
    gpu = copy.deepcopy(sim)
    gpu[1]["value"] = 6            # the GPU stopped before the last release
    write_lines(tmp_path / "s", sim)
    write_lines(tmp_path / "g", gpu)
    capture = {0x1000: (8, 1621, "observed")}
    hung = {"blocked": True, "finish": "idle, channel 0x1: semaphore ... waited 10000 ms"}
    row, details, notes = state_diff.compare(tmp_path / "s", tmp_path / "g", "t", None, hung, capture)
    assert (row["sem_gpu_unf"], row["sem_diff"], row["verdict"]) == (1, 0, "gpu-unfinished")
    assert details[0]["class"] == "gpu unfinished" and details[0]["capture"]["value"] == "0x8"
    assert any(n.startswith("gpu unfinished: idle") for n in notes)
    # a GPU that finished and still differs: a disagreement, with the capture's value beside it
    row, details, _ = state_diff.compare(tmp_path / "s", tmp_path / "g", "t", None, {"blocked": False}, capture)
    assert (row["sem_diff"], row["verdict"]) == (1, "DIVERGE") and details[0]["capture"]["seq"] == 1621
    # sim not at the capture's value: sim's fault even where the GPU hung
    row, _, _ = state_diff.compare(tmp_path / "s", tmp_path / "g", "t", None, hung, {0x1000: (7, 9, "observed")})
    assert row["verdict"] == "DIVERGE"
    assert not state_diff.passing("gpu-unfinished") and state_diff.passing("skipped: derived trace (x)")
