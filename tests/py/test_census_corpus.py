"""`vgt census` / `vgt decode` / `vgt db` on the real H200 traces in corpus/, checked against the workload
sources in corpus/workloads (the expected launch shapes and draws are read from the sources here, not
from the decoder):

- CUDA (vadd, many_launches): libcuda uploads each QMD with inline-to-memory just before SEND_PCAS_A; the
  semantic tracker reads it from the stream (the overlay), so every LAUNCH is decoded.
- Vulkan compute: the dispatch is an inline QMD emitted by an MME macro; it counts only when macro calls
  are run (census default), and is marked as coming from a macro.
- Vulkan and GL triangles: one vkCmdDraw(3) / glDrawArrays(GL_TRIANGLES, 0, 3) each.
"""
import json
import re
import sqlite3
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
WL = CORPUS / "workloads"


def need(name):
    p = CORPUS / name
    if not p.is_file():
        pytest.fail(f"corpus trace {p} is missing", pytrace=False)
    return p


def census_json(vgt, *args):
    return json.loads(vgt("census", *args, "--json", check=0).stdout)["total"]


def events(vgt, trace, kind):
    r = vgt("decode", trace, "--jsonl", check=0, timeout=300)
    return [o for o in map(json.loads, r.stdout.splitlines()) if o.get("event") == kind]


def c_int(src, name):
    """The value of `const int NAME = EXPR` (or `#define NAME EXPRu`) in a workload source."""
    m = (re.search(r"const int\s+(?:\w+\s*=\s*[^,;]+,\s*)?%s\s*=\s*([^,;]+)[,;]" % name, src)
         or re.search(r"#define\s+%s\s+(\S+)" % name, src))
    assert m, f"{name} not found in the workload source"
    return int(eval(m.group(1).rstrip("u"), {}))   # small integer expressions such as 1 << 20


def test_vadd_launches_decoded_from_stream(vgt):
    src = (WL / "vadd.cu").read_text()
    n = c_int(src, "n")
    m = re.search(r"vadd<<<\(n \+ 255\) / 256, (\d+)>>>", src)
    assert m, "vadd's launch configuration changed: update this test"
    block = int(m.group(1))
    grid = (n + 255) // 256
    real = events(vgt, need("vadd.vgt"), "LAUNCH")
    empty = events(vgt, need("vadd.vgt"), "EMPTY_DISPATCH")
    assert real and empty, "no launches or no CTA-less QMDs decoded in vadd.vgt"
    for l in real + empty:
        assert "grid" in l and l["qmd_known"] == 1, f"launch without a decoded QMD: {l}"
    for l in real:   # a launch runs CTAs, has a program and signals its completion
        assert 0 not in l["grid"] + l["block"] and l["program_va"] != 0 and l["releases"], l
    for l in empty:  # CUDA's CTA-less QMDs: no grid, no program
        assert l["grid"] == [0, 0, 0] and l["program_va"] == 0, l
    vadd = [l for l in real if l["grid"] == [grid, 1, 1] and l["block"] == [block, 1, 1]]
    assert len(vadd) == 1, f"expected one {grid}x1x1 / {block}x1x1 launch, got {[(l['grid'], l['block']) for l in real]}"
    # stream order through dependent QMDs: a CTA-less QMD whose completion schedules the vadd kernel's QMD
    scheduled = {d["va"] for l in empty for d in l["dependents"] if d["action"] == "SCHEDULE"}
    assert vadd[0]["qmd_va"] in scheduled, (hex(vadd[0]["qmd_va"]), [hex(v) for v in scheduled])


def test_many_launches_threads(vgt):
    src = (WL / "many_launches.cu").read_text()
    n, count = c_int(src, "n"), c_int(src, "launches")
    m = re.search(r"step<<<n / 256, (\d+)>>>", src)
    assert m, "many_launches' launch configuration changed: update this test"
    t = census_json(vgt, need("many_launches.vgt"))
    # one launch per kernel; the CTA-less QMD CUDA schedules before each is an empty dispatch
    assert t["launches"] == count and t["empty_dispatches"] == count, t
    # every step<<<n/256, 256>>> launch decoded: n threads each, and nothing else in the trace runs threads
    assert t["launch_threads"] == count * (n // 256) * int(m.group(1))


def test_vk_compute_dispatch_from_macro(vgt):
    n = c_int((WL / "vk_compute.c").read_text(), "N")
    trace = need("vk_compute.vgt")
    t = census_json(vgt, trace)
    assert t["launches"] == 1 and t["from_macros"]["launches"] == 1 and t["macro_calls"] > 0, t
    assert t["launch_threads"] == n
    plain = census_json(vgt, trace, "--no-macros")
    assert plain["launches"] == 0 and plain["macro_calls"] == 0 and plain["from_macros"]["launches"] == 0


@pytest.mark.parametrize("trace", ["vk_triangle.vgt", "gl_egl.vgt"])
def test_triangle_draw(vgt, trace):
    src = (WL / trace.replace(".vgt", ".c")).read_text()
    assert re.search(r"vkCmdDraw\(cb, 3, 1, 0, 0\)|glDrawArrays\(GL_TRIANGLES, 0, 3\)", src)
    t = census_json(vgt, need(trace))
    assert t["draws"] >= 1
    draws = events(vgt, need(trace), "DRAW")
    assert any(d["count"] == 3 and d["topology"] == "TRIANGLES" and d["instances"] == 1 for d in draws), draws


def test_census_deterministic(vgt):
    a = vgt("census", need("vk_triangle.vgt"), "--json", check=0).stdout
    b = vgt("census", need("vk_triangle.vgt"), "--json", check=0).stdout
    assert a == b


def test_db_event_origin(vgt, tmp_path):
    out = tmp_path / "vkc.sqlite"
    vgt("db", need("vk_compute.vgt"), "-o", out, "--quiet", check=0)
    db = sqlite3.connect(out)
    rows = db.execute("SELECT e.kind, e.origin, c.call, c.nemits FROM events e JOIN macro_calls c ON c.call = e.macro_call"
                      " WHERE e.origin = 'macro'").fetchall()
    assert [r[0] for r in rows] == ["LAUNCH"] and rows[0][3] > 0, rows
    assert db.execute("SELECT count(*) FROM events WHERE origin = 'stream' AND macro_call IS NULL").fetchone()[0] > 0
    assert db.execute("SELECT count(*) FROM events WHERE origin NOT IN ('stream', 'macro')").fetchone()[0] == 0
    out2 = tmp_path / "vkc2.sqlite"
    vgt("db", need("vk_compute.vgt"), "-o", out2, "--quiet", "--no-macros", check=0)
    assert sqlite3.connect(out2).execute("SELECT count(*) FROM launches").fetchone()[0] == 0
