"""`vgt decode --expand-macros` prints the semantic events a macro call makes, in line after the call: the
Vulkan compute trace's only dispatch is an inline QMD emitted by an MME macro (corpus/workloads/README.md),
so its LAUNCH exists only when macro calls are run. The dispatch size is read from the workload source."""
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "corpus" / "vk_compute.vgt"
SRC = REPO / "corpus" / "workloads" / "vk_compute.c"


def dispatch_groups():
    src = SRC.read_text()
    n = int(re.search(r"#define\s+N\s+(\d+)u?", src).group(1))
    m = re.search(r"vkCmdDispatch\(cb, N / (\d+), 1, 1\)", src)
    assert m, "vk_compute's dispatch changed: update this test"
    return n // int(m.group(1)), int(m.group(1))


@pytest.fixture(scope="module")
def trace():
    if not TRACE.is_file():
        pytest.fail(f"corpus trace {TRACE} is missing", pytrace=False)
    return TRACE


def test_text_launch_after_its_call(vgt, trace):
    groups, local = dispatch_groups()
    lines = vgt("decode", trace, "--expand-macros", check=0).stdout.splitlines()
    launches = [(i, l) for i, l in enumerate(lines) if l.startswith("    => LAUNCH ")]
    assert len(launches) == 1, launches
    i, line = launches[0]
    assert f"grid={groups}x1x1" in line and f"block={local}x1x1" in line, line
    m = re.search(r"\[macro call (\d+)\]$", line)
    assert m, f"the launch does not name its macro call: {line}"
    call = m.group(1)
    # the call's own line comes before it, and between them only that call's expansion (params, emits)
    starts = [j for j, l in enumerate(lines) if l.startswith(f"    => call {call} macro ")]
    assert len(starts) == 1 and starts[0] < i, (call, starts, i)
    assert "HOPPER_COMPUTE_A" in lines[starts[0]]
    between = lines[starts[0] + 1:i]
    assert between and all(l.startswith("    =>   ") for l in between), between[:5]
    assert any("LOAD_INLINE_QMD_DATA" in l for l in between)


def test_jsonl_launch_origin(vgt, trace):
    groups, local = dispatch_groups()
    objs = [json.loads(l) for l in vgt("decode", trace, "--expand-macros", "--jsonl", check=0).stdout.splitlines()]
    launches = [(i, o) for i, o in enumerate(objs) if o.get("event") == "LAUNCH"]
    assert len(launches) == 1, launches
    i, ev = launches[0]
    assert ev["grid"] == [groups, 1, 1] and ev["block"] == [local, 1, 1]
    assert ev["origin"] == "macro"
    call = objs[i - 1]
    assert call.get("type") == "macro_call" and call["expansion"]["call"] == ev["macro_call"], call
    x = call["expansion"]
    # the event sits where the macro was called
    assert (ev["seq"], ev["entry"], ev["dword"]) == (x["seq"], x["entry"], x["dword"])
    # stream events carry no origin
    assert all("origin" not in o for o in objs if "event" in o and o is not ev and o.get("macro_call") is None)


def test_without_expansion_no_macro_events(vgt, trace):
    out = vgt("decode", trace, "--jsonl", check=0).stdout.splitlines()
    evs = [json.loads(l) for l in out if l.startswith('{"event"')]
    assert not [e for e in evs if e["event"] == "LAUNCH" or e.get("origin") == "macro"]


def test_submit_filter_keeps_macro_events(vgt, trace):
    objs = [json.loads(l) for l in vgt("decode", trace, "--expand-macros", "--jsonl", check=0).stdout.splitlines()]
    ev = next(o for o in objs if o.get("event") == "LAUNCH")
    sub = next(o for o in objs if o.get("type") == "submit" and o["seq"] == ev["seq"])["index"]
    only = [json.loads(l) for l in vgt("decode", trace, "--expand-macros", "--jsonl", "--submits", sub,
                                      check=0).stdout.splitlines()]
    assert [o for o in only if o.get("event") == "LAUNCH"] == [ev]
    other = sub - 1 if sub else sub + 1
    rest = vgt("decode", trace, "--expand-macros", "--jsonl", "--submits", other, check=0).stdout
    assert '"event":"LAUNCH"' not in rest
