"""`vgt timeline TRACE -o FILE.json`: Chrome trace-event JSON (the JSON Object Format of the Trace Event
Format, what ui.perfetto.dev opens), checked against the format's rules and against the trace's counts:
required keys, durations, B/E balance, slices nested per track, and one event per submission, launch,
draw, macro call, semaphore release and record."""
import collections
import json

import pytest

from conftest import REPO

EPS = 0.002   # microseconds: timestamps are printed with 3 decimals
PHASES = set("BEXiIMCbnePsSTftFNODRc") | {"(", ")"}


def load(vgt, trace, tmp_path, *opts):
    out = tmp_path / (trace.stem + ".json")
    vgt("timeline", trace, "-o", out, *opts, check=0)
    return json.loads(out.read_text())


def check_format(doc):
    """The Trace Event Format's rules; returns the events."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)
    evs = doc["traceEvents"]
    open_b = collections.Counter()
    for e in evs:
        for k in ("ph", "ts", "pid", "tid", "name"):
            assert k in e, (k, e)
        assert e["ph"] in PHASES, e
        assert isinstance(e["ts"], (int, float)) and isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        if e["ph"] == "B":
            open_b[(e["pid"], e["tid"])] += 1
        if e["ph"] == "E":
            open_b[(e["pid"], e["tid"])] -= 1
            assert open_b[(e["pid"], e["tid"])] >= 0, "E without B"
        if e["ph"] in "iI":
            assert e.get("s", "t") in ("g", "p", "t")
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index")
            assert "name" in e["args"]
    assert not any(open_b.values()), "unbalanced B/E"
    return evs


def check_nesting(evs):
    """On each track, complete slices nest (an entry inside its submission) and every instant event on a
    GPU track lies inside a slice."""
    by_track = collections.defaultdict(list)
    for e in evs:
        if e["ph"] in ("X", "i"):
            by_track[(e["pid"], e["tid"])].append(e)
    for track, es in by_track.items():
        xs = sorted((e for e in es if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in xs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + EPS:
                stack.pop()
            if stack:
                parent = stack[-1]
                assert e["ts"] + e["dur"] <= parent["ts"] + parent["dur"] + EPS, (track, parent, e)
            stack.append(e)
        if track[0] != 1:
            continue
        starts = [x["ts"] for x in xs if x.get("cat") == "submission"]
        subs = [x for x in xs if x.get("cat") == "submission"]
        import bisect
        for e in es:
            if e["ph"] != "i":
                continue
            k = bisect.bisect_right(starts, e["ts"] + EPS) - 1
            assert k >= 0 and e["ts"] <= subs[k]["ts"] + subs[k]["dur"] + EPS, (track, e)


@pytest.mark.parametrize("name", ["vk_triangle", "vadd"])
def test_timeline_is_trace_event_json_with_the_trace_counts(vgt, tmp_path, name):
    trace = REPO / "corpus" / f"{name}.vgt"
    evs = check_format(load(vgt, trace, tmp_path))
    check_nesting(evs)
    info = json.loads(vgt("info", "--json", trace, check=0).stdout)
    total = json.loads(vgt("census", "--json", "--total", trace, check=0).stdout)["total"]
    cats = collections.Counter((e["pid"], e["ph"], e.get("cat")) for e in evs)
    assert cats[(1, "X", "submission")] == info["records_by_type"]["GPFIFO_SUBMIT"]
    assert cats[(1, "i", "launch")] == total["launches"]
    assert cats[(1, "i", "draw")] == total["draws"]
    assert cats[(1, "i", "semaphore")] == total["sem_releases"]
    assert cats[(1, "i", "macro")] == total["macro_calls"]
    entries = sum(e["args"]["entries"] for e in evs if e.get("cat") == "submission")
    assert cats[(1, "X", "gpfifo")] == entries
    # the capture's CPU side: every record at its timestamp, and a thread name per GPU channel
    assert cats[(2, "i", None)] == info["records"]
    names = [e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1]
    assert len(names) == len({e["tid"] for e in evs if e.get("cat") == "submission"})
    assert all(n.startswith("channel 0x") for n in names)


def test_timeline_draw_and_submission_args(vgt, tmp_path):
    evs = load(vgt, REPO / "corpus" / "vk_triangle.vgt", tmp_path)["traceEvents"]
    draw = [e for e in evs if e.get("cat") == "draw"]
    assert len(draw) == 1 and draw[0]["args"]["topology"] and draw[0]["args"]["count"] > 0
    sub = [e for e in evs if e.get("cat") == "submission"]
    assert sum(s["args"]["draws"] for s in sub) == 1


def test_timeline_stdout_and_no_cpu(vgt, tmp_path):
    r = vgt("timeline", REPO / "corpus" / "vk_triangle.vgt", "-o", "-", "--no-cpu", check=0)
    evs = check_format(json.loads(r.stdout))
    assert not [e for e in evs if e["pid"] == 2 and e["ph"] != "M"]


def test_timeline_bad_input(vgt, tmp_path):
    bad = tmp_path / "bad.vgt"
    bad.write_bytes(b"not a trace at all")
    r = vgt("timeline", bad, "-o", tmp_path / "x.json")
    assert r.returncode in (1, 2) and "vgt timeline:" in r.stderr
    assert not (tmp_path / "x.json").exists()
