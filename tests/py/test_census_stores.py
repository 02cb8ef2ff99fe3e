"""`vgt census --stores FILE`: the store census of a replay (`vgt replay --census --census-json FILE`, one
JSON object a line per watched range a submission changed) read back and shown per submission and in the
totals. Two sources: a real replay of corpus/vk_triangle.vgt on the sim backend (the rows are whatever the
replay found; the census must report exactly them), and files written here by hand for the hand-built
trace of test_census.py (exact values, render-target rows, the "wrote=0" wall). Hostile files must give
an error naming the line, never a crash or a partial answer."""
import json
from collections import defaultdict
from pathlib import Path

import pytest

from test_census import CH_HANDLE, build_trace

REPO = Path(__file__).resolve().parents[2]
TRIANGLE = REPO / "corpus" / "vk_triangle.vgt"
KEYS = ["submission", "seq", "channel", "what", "va", "length", "pages_written", "bytes_changed", "first_changed",
        "first_nonzero_pixel", "px0"]


def replay_stores(vgt, trace, out):
    """Run the sim replay with the census; returns the rows it wrote."""
    vgt("replay", trace, "--backend", "sim", "--census", "--census-json", out, check=0, timeout=300)
    rows = [json.loads(l) for l in Path(out).read_text().splitlines()]
    assert rows, "the sim replay's census found no changed range"
    return rows


@pytest.fixture(scope="module")
def triangle(vgt, tmp_path_factory):
    if not TRIANGLE.is_file():
        pytest.fail(f"corpus trace {TRIANGLE} is missing", pytrace=False)
    out = tmp_path_factory.mktemp("stores") / "triangle.jsonl"
    return TRIANGLE, out, replay_stores(vgt, TRIANGLE, out)


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    """The hand-built trace of test_census.py: submission 0 uploads and releases, submission 1 launches and
    draws. Returns (path, [(index, seq)])."""
    path = tmp_path_factory.mktemp("hand") / "hand.vgt"
    build_trace(path)
    return path


def subs_of(vgt, trace):
    doc = json.loads(vgt("census", trace, "--json", check=0).stdout)
    return doc["submissions"]


def row(sub, what="observed", va=0x7F00005000, length=4096, pages=1, nbytes=4, first=16, nz=4, px0=None):
    """A stores row; nz: index of the first non-zero pixel (-1 none); px0: a render target's first pixel value."""
    return dict(submission=sub["index"], seq=sub["seq"], channel=sub["channel"], what=what, va=va, length=length,
                pages_written=pages, bytes_changed=nbytes, first_changed=first, first_nonzero_pixel=nz, px0=px0)


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    return path


def test_replay_rows_in_census(vgt, triangle):
    trace, stores, rows = triangle
    doc = json.loads(vgt("census", trace, "--stores", stores, "--json", check=0).stdout)
    by_sub = defaultdict(list)
    for r in rows:
        by_sub[r["submission"]].append(r)
    for s in doc["submissions"]:
        mine = by_sub.get(s["index"], [])
        st = s["stores"]
        assert st["ranges"] == len(mine)
        assert st["pages_written"] == sum(r["pages_written"] for r in mine)
        assert st["bytes_changed"] == sum(r["bytes_changed"] for r in mine)
        assert st["rows"] == [{k: r[k] for k in KEYS[3:]} for r in mine]
    t = doc["total"]["stores"]
    assert t["rows"] == len(rows) and t["file"] == str(stores)
    assert t["pages_written"] == sum(r["pages_written"] for r in rows)
    assert t["bytes_changed"] == sum(r["bytes_changed"] for r in rows)
    assert t["submissions_written"] == len(by_sub)
    assert t["submissions_quiet"] == len(doc["submissions"]) - len(by_sub)
    worked = [s for s in doc["submissions"] if s["draws"] or s["launches"]]
    assert t["work_without_stores"] == sum(1 for s in worked if s["index"] not in by_sub)
    drew = [s for s in doc["submissions"] if s["draws"]]
    assert t["draws_without_render_target"] == sum(
        1 for s in drew if not any(r["what"] == "render-target" for r in by_sub.get(s["index"], [])))
    # without --stores the census output has no stores keys (goldens stay as they are)
    plain = json.loads(vgt("census", trace, "--json", check=0).stdout)
    assert "stores" not in plain["total"] and all("stores" not in s for s in plain["submissions"])


def test_replay_rows_text(vgt, triangle):
    trace, stores, rows = triangle
    out = vgt("census", trace, "--stores", stores, check=0).stdout
    first = rows[0]
    line = next(l for l in out.splitlines() if l.startswith("  stores: ") and f"0x{first['va']:x}+" in l)
    assert f"pages {first['pages_written']} bytes {first['bytes_changed']} first {first['first_changed']} " \
           f"first_nonzero_px {first['first_nonzero_pixel']}" in line
    assert first["px0"] is None and " px0 " not in line.split(f"0x{first['va']:x}+")[1].split(";")[0]
    assert f"stores ({stores}): {len(rows)} ranges changed" in out


def test_hand_values_and_wall(vgt, hand, tmp_path):
    subs = subs_of(vgt, hand)
    assert [s["draws"] for s in subs] == [0, 2] and subs[1]["launches"] == 5
    # submission 1 drew and launched but changed only an observed page: no render-target write
    f = write_rows(tmp_path / "a.jsonl", [row(subs[0]), row(subs[1], nbytes=9, first=0, nz=-1)])
    t = json.loads(vgt("census", hand, "--stores", f, "--json", check=0).stdout)["total"]["stores"]
    assert t == {"file": str(f), "rows": 2, "pages_written": 2, "bytes_changed": 13, "render_target_bytes": 0,
                 "submissions_written": 2, "submissions_quiet": 0, "work_without_stores": 0,
                 "draws_without_render_target": 1}
    # a render target written: 2 pages, first non-zero pixel at index 7, the first pixel's value 0xff0000ff
    rt = row(subs[1], what="render-target", va=0x7F00010000, length=3 * 4096, pages=2, nbytes=4100, first=40, nz=7,
             px0=0xFF0000FF)
    f = write_rows(tmp_path / "b.jsonl", [rt])
    doc = json.loads(vgt("census", hand, "--stores", f, "--json", check=0).stdout)
    assert doc["submissions"][1]["stores"]["render_target_bytes"] == 4100
    assert doc["submissions"][1]["stores"]["rows"][0]["first_nonzero_pixel"] == 7
    assert doc["submissions"][1]["stores"]["rows"][0]["px0"] == 0xFF0000FF
    assert doc["total"]["stores"]["draws_without_render_target"] == 0
    assert doc["total"]["stores"]["submissions_quiet"] == 1
    text = vgt("census", hand, "--stores", f, check=0).stdout
    assert "  stores: nothing watched was written (wrote=0)" in text.split("submission 1 ")[0]
    assert "render-target 0x7f00010000+12288 pages 2 bytes 4100 first 40 first_nonzero_px 7 px0 0xff0000ff" in text
    # nothing written at all: submission 1 launched and drew, and is the wall
    f = write_rows(tmp_path / "c.jsonl", [])
    t = json.loads(vgt("census", hand, "--stores", f, "--json", check=0).stdout)["total"]["stores"]
    assert (t["rows"], t["submissions_quiet"], t["work_without_stores"], t["draws_without_render_target"]) == (0, 2, 1, 1)
    assert "1 of them launched or drew: wrote=0" in vgt("census", hand, "--stores", f, "--total", check=0).stdout


def test_submit_filter(vgt, hand, tmp_path):
    subs = subs_of(vgt, hand)
    f = write_rows(tmp_path / "s.jsonl", [row(subs[0]), row(subs[1], nbytes=8)])
    doc = json.loads(vgt("census", hand, "--stores", f, "--submits", "1", "--json", check=0).stdout)
    assert [s["index"] for s in doc["submissions"]] == [1]
    assert doc["total"]["stores"]["bytes_changed"] == 8


def test_file_of_another_trace(vgt, hand, triangle, tmp_path):
    _, stores, _ = triangle
    r = vgt("census", hand, "--stores", stores, check=1)
    assert "made from another trace" in r.stderr or "is not in the trace" in r.stderr, r.stderr
    subs = subs_of(vgt, hand)
    f = write_rows(tmp_path / "x.jsonl", [row(subs[1]), dict(row(subs[1]), submission=7)])
    r = vgt("census", hand, "--stores", f, check=1)
    assert "line 2: submission 7 is not in the trace (it has 2 submissions)" in r.stderr, r.stderr
    f = write_rows(tmp_path / "y.jsonl", [dict(row(subs[1]), channel=CH_HANDLE + 1)])
    r = vgt("census", hand, "--stores", f, check=1)
    assert "line 1: submission 1 is seq" in r.stderr and "made from another trace" in r.stderr, r.stderr


GOOD = ('{"submission":0,"seq":10,"channel":256,"what":"observed","va":4096,"length":4096,"pages_written":1,'
        '"bytes_changed":2,"first_changed":8,"first_nonzero_pixel":2,"px0":null}')
RT = GOOD.replace('"observed"', '"render-target"')

# (file text, exit code, what the message must say)
HOSTILE = [
    (GOOD.replace('"va":4096', '"va":18446744073709551616'), 1, "line 1 column 63: field 'va': 18446744073709551616 (20 digits) is over the maximum 18446744073709551615"),
    (GOOD.replace('"va":4096', '"va":99999999999999999999999999999999999999999999'), 1, "field 'va'"),
    (GOOD.replace('"channel":256', '"channel":4294967296'), 1, "field 'channel': 4294967296 is over the maximum 4294967295"),
    (GOOD.replace('"va":4096', '"va":4096.5'), 1, "field 'va': expected an integer, found a fraction or exponent"),
    (GOOD.replace('"va":4096', '"va":4e3'), 1, "fraction or exponent"),
    (GOOD.replace('"va":4096', '"va":-4096'), 1, "field 'va': -4096 is negative"),
    (GOOD.replace('"va":4096', '"va":04096'), 1, "a leading zero is not JSON"),
    (GOOD.replace('"va":4096', '"va":"4096"'), 1, "field 'va': expected an integer, found '\"'"),
    (GOOD.replace('"va":4096,', ''), 1, 'line 1: missing key "va"'),
    (GOOD.replace('"va":4096', '"va":4096,"va":4096'), 1, 'key "va" given twice'),
    (GOOD.replace('"va":4096', '"vb":4096'), 1, 'unknown key "vb"'),
    (GOOD.replace('"observed"', '"obs\\u0065rved"'), 1, "escapes are not accepted"),
    (GOOD.replace('"observed"', '"' + "x" * 40 + '"'), 1, "is longer than 31 characters"),
    (GOOD.replace('"observed"', '""'), 1, "field 'what' is empty"),
    (GOOD.replace('"observed"', '{"a":1}'), 1, "expected the value of 'what' (a quoted string)"),
    (GOOD.replace('"first_changed":8', '"first_changed":-2'), 1, "-2 is below the minimum -1"),
    (GOOD.replace('"bytes_changed":2', '"bytes_changed":5000'), 1, "bytes_changed 5000 is over length 4096"),
    (GOOD.replace('"pages_written":1', '"pages_written":3'), 1, "pages_written 3 does not fit"),
    (GOOD.replace('"first_changed":8', '"first_changed":4096'), 1, "first_changed 4096 does not fit"),
    (GOOD.replace('"first_nonzero_pixel":2', '"first_nonzero_pixel":1024'), 1, "first_nonzero_pixel 1024 is past"),
    (GOOD.replace('"length":4096', '"length":0'), 1, "length is 0"),
    (GOOD.replace('"px0":null', '"px0":5'), 1, 'line 1: px0 5 on a "observed" row (only render-target rows'),
    (RT.replace('"px0":null', '"px0":4294967296'), 1, "field 'px0': 4294967296 is over the maximum 4294967295"),
    (RT.replace('"px0":null', '"px0":-1'), 1, "field 'px0': -1 is negative"),
    (RT.replace('"px0":null', '"px0":nul'), 1, "field 'px0': expected an integer, found 'n'"),
    (RT.replace('"first_nonzero_pixel":2', '"first_nonzero_pixel":-1').replace('"px0":null', '"px0":7'), 1,
     "px0 0x00000007 is not zero but first_nonzero_pixel says the range is all zero"),
    (GOOD.replace(',"px0":null', ''), 1, 'line 1: missing key "px0"'),
    (GOOD.replace('"va":4096', '"va":18446744073709551615'), 1, "runs past 2^64"),
    (GOOD + " x", 1, "expected the end of the line after the row, found 'x'"),
    (GOOD[:-1], 1, "expected '}'"),
    ("[" + GOOD + "]", 1, "line 1 column 1: expected '{' at the start of a row, found '['"),
    (GOOD + "\n\n" + GOOD.replace('"seq":10', '"seq":1e1'), 1, "line 3 column"),
    ("{" + "x" * 5000 + "}", 1, "line 1: longer than 1024 bytes"),
    ("\x00\xff\xfe", 1, "found byte 0x00"),
]


@pytest.mark.parametrize("text,code,message", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_stores(vgt, tmp_path, text, code, message):
    trace = tmp_path / "hand.vgt"
    build_trace(trace)
    f = tmp_path / "bad.jsonl"
    f.write_bytes(text.encode("latin-1") + b"\n")
    r = vgt("census", trace, "--stores", f, check=code)
    assert message in r.stderr, r.stderr
    assert f"stores file {f}" in r.stderr
    assert r.stdout == ""   # refused before any output


def test_missing_stores_file(vgt, tmp_path):
    trace = tmp_path / "hand.vgt"
    build_trace(trace)
    r = vgt("census", trace, "--stores", tmp_path / "none.jsonl", check=2)
    assert "cannot open stores file" in r.stderr and "none.jsonl" in r.stderr


def test_help_mentions_stores(vgt):
    assert "--stores FILE" in vgt("census", "--help", check=0).stdout
