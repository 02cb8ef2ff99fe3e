"""Lane 2 (synthesized launches) and `vgt launches` on the real corpus traces.

Every corpus trace replays on sim through `--lane synth --check` with no failed check and at least what the
verbatim lane compares; the CUDA traces and vk_compute run no captured push buffer at all. `vgt launches`
describes each launch from its QMD (uploaded by I2M in the CUDA traces, built by an MME macro in vk_compute)
with the program bytes the trace determines and the pointers in its constant buffers."""
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
# cuda_graph: each graph launch is an empty dispatch that schedules the graph's node chain (QMDs the stream
# does not launch itself); lane 2 rebuilds it with that dependent, so the chain's release (0x22 at
# submission 205) happens, while CUDA's ordering QMDs, decremented by a launch of the same submission, stay
# out (test_synth_graph_launches)
TRACES = ["vadd", "many_launches", "streams_threads", "triton_small", "multi_kernel", "cuda_graph",
          "cuda_graph_memcpy", "vk_compute", "vk_triangle", "gl_egl", "vk_nostore", "gl_nostore"]
# vk_compute's graphics-queue submissions with a 3D-class NOTIFY (0, 1, 4 and 8) run verbatim: rebuilt on the
# 3D class or on the inline-to-memory class, that NOTIFY raised Xid 25 on the H200 (backend/gpu/README.md);
# the rest of vk_compute, its 3D-class report semaphores included, is rebuilt
COMPUTE_ONLY = {"vadd", "many_launches", "streams_threads", "triton_small", "multi_kernel", "cuda_graph",
                "cuda_graph_memcpy"}
NOTIFY_VERBATIM = {"vk_compute": 4}


def replay_json(vgt, name, *args):
    r = vgt("replay", CORPUS / f"{name}.vgt", "--backend", "sim", "--check", "--json", *args, check=None, timeout=300)
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("name", TRACES)
def test_synth_lane_passes_on_the_corpus(vgt, name):
    rc, s = replay_json(vgt, name, "--lane", "synth")
    _, v = replay_json(vgt, name, "--lane", "verbatim")
    assert rc == 0, s
    assert s["lane"] == "synth"
    assert s["checks"]["failed"] == 0 and s["synth_refused"] == 0
    lanes = s["lanes"]
    assert lanes["synth"] + lanes["verbatim"] == s["submissions_replayed"]
    assert lanes["cuda"] == 0
    if name in COMPUTE_ONLY:
        assert lanes["verbatim"] == 0, lanes          # nothing fell back to the captured push buffers
    elif name in NOTIFY_VERBATIM:
        assert lanes["verbatim"] == NOTIFY_VERBATIM[name] and lanes["synth"] > 0, lanes
    else:
        assert lanes["verbatim"] > 0 and lanes["synth"] > 0, lanes   # draws run verbatim, the rest is synthesized
    # the synthesized streams do the same work the captured ones did
    for k in ("launches", "uploads", "copies", "memsets", "empty_dmas"):
        assert s[k] == v[k], (k, s[k], v[k])
    assert s["checks"]["bytes_compared"] >= v["checks"]["bytes_compared"]
    assert v["lanes"]["verbatim"] == v["submissions_replayed"] and v["lanes"]["synth"] == 0


def test_synth_graph_launches(vgt):
    # a graph launch (an empty dispatch no launch of its submission waits on) is rebuilt: it starts the node chain
    rc, s = replay_json(vgt, "cuda_graph", "--lane", "synth")
    _, v = replay_json(vgt, "cuda_graph", "--lane", "verbatim")
    assert rc == 0 and s["checks"]["failed"] == 0, s
    assert s["empty_dispatches"] == v["empty_dispatches"] == 8
    # CUDA's stream-ordering QMDs (decremented by the launch after them) are not: the stream orders the launches
    rc, s = replay_json(vgt, "vadd", "--lane", "synth")
    _, v = replay_json(vgt, "vadd", "--lane", "verbatim")
    assert rc == 0 and s["empty_dispatches"] == 0 and v["empty_dispatches"] == 2 and s["launches"] == v["launches"] == 2


@pytest.mark.parametrize("name", ["cuda_graph", "cuda_graph_memcpy"])
def test_synth_graph_node_chain(vgt, name):
    # the graph's kernel nodes wait for their scheduling QMD (REQUIRE_SCHEDULING_PCAS): each graph launch runs
    # the whole chain, node after node, as it did when captured; the last node's reduction on the stream's
    # progress semaphore is what the copy of the next memcpy node waits for (cuda_graph_memcpy)
    rc, s = replay_json(vgt, name, "--lane", "synth")
    _, v = replay_json(vgt, name, "--lane", "verbatim")
    assert rc == 0 and s["checks"]["failed"] == 0 and not s["blocked"], s
    assert v["qmds"]["dependent_runs"] > 0
    assert s["qmds"] == v["qmds"], (s["qmds"], v["qmds"])
    assert s["semaphores"]["reductions"] == v["semaphores"]["reductions"] > 0
    for k in ("releases", "acquires"):
        assert s["semaphores"][k] == v["semaphores"][k], k


def test_auto_on_sim_is_verbatim(vgt):
    rc, s = replay_json(vgt, "vadd")
    assert rc == 0
    assert s["lanes"] == {"verbatim": s["submissions_replayed"], "synth": 0, "cuda": 0}


def launches(vgt, name, *args):
    r = vgt("launches", CORPUS / f"{name}.vgt", "--json", *args, check=0, timeout=300)
    return json.loads(r.stdout)


def test_launches_describe_the_cuda_kernels(vgt):
    d = launches(vgt, "vadd")
    work = d["work"]
    ls = [w for w in work if "launch" in w]
    assert d["total"]["launches"] == 2 and d["total"]["not_rebuildable"] == 0
    assert [l["grid"] for l in ls] == [[512, 1, 1], [4096, 1, 1]]
    assert [l["block"] for l in ls] == [[512, 1, 1], [256, 1, 1]]
    for l in ls:
        assert l["qmd"]["version"] == "V04_00" and l["qmd"]["source"] == "upload" and l["qmd"]["known"] == 384
        assert l["program"]["bytes"] > 0 and l["problem"] is None
        cb0 = next(c for c in l["constant_buffers"] if c["slot"] == 0)
        # the driver's bank holds the QMD's own address and the kernel's parameters (at 0x210)
        values = {a["offset"]: int(a["value"], 16) for a in cb0["addresses"]}
        assert values["0x38"] == int(l["qmd"]["va"], 16)
        assert "0x210" in values
        kinds = {b["kind"] for b in l["buffers"]}
        assert {"qmd", "constant_buffer", "memory"} <= kinds
        assert l["releases"] and l["dependents"]
    assert sum(1 for w in work if "dma" in w) == d["total"]["dma"] > 0
    # the second kernel reads two input buffers the copy engine filled from trace-known staging memory
    second = ls[1]["buffers"]
    assert sum(1 for b in second if b["kind"] == "memory" and b["known_bytes"] == 65536) >= 2


def test_launches_macro_built_qmd(vgt):
    d = launches(vgt, "vk_compute")
    (l,) = [w for w in d["work"] if "launch" in w]
    assert l["qmd"]["source"] == "macro" and l["grid"] == [1024, 1, 1] and l["block"] == [64, 1, 1]
    assert l["program"]["bytes"] > 0 and l["problem"] is None
    assert any(s["method"] == "SET_SHADER_LOCAL_MEMORY_B" for s in l["state"])


def test_launch_in_full(vgt):
    d = launches(vgt, "vadd", "--launch", "1")
    l = d["launch"]
    assert l["launch"] == 1
    assert len(l["program"]["hex"]) == 2 * l["program"]["bytes"]
    assert len(l["qmd"]["hex"]) == 2 * 384
    r = vgt("launches", CORPUS / "vadd.vgt", "--launch", "2", check=1)
    assert "the window has 2 launches" in r.stderr
