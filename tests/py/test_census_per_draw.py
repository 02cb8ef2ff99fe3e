"""`vgt replay --census-per-draw`: each submission is cut after (and before) every draw and launch, each
piece waited for and read back, so that every store row names its draws. On sim (the same engine path as
the GPU: the submission handed to the backend in pieces) the corpus shows the cut: vk_triangle's clear
lands in the piece before draw 0, and sim, which rasterizes nothing, sees every draw store nothing.
What a per-draw census reads must agree with the per-submission census of the same replay."""
import json
from collections import defaultdict
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
TRACES = ["vk_triangle", "gl_egl", "vk_nostore", "gl_nostore", "vk_compute"]


def rows(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def draw_numbers(vgt, name):
    r = vgt("draws", CORPUS / f"{name}.vgt", "--json")
    return [d["draw"] for d in json.loads(r.stdout)["draws"]]


def census(vgt, tmp_path, name, *extra):
    out = tmp_path / f"{name}{'-'.join(extra)}.jsonl"
    r = vgt("replay", CORPUS / f"{name}.vgt", "--backend", "sim", "--census-json", out, *extra, check=0)
    return r.stdout, rows(out)


@pytest.mark.parametrize("name", TRACES)
def test_rows_name_draws_and_agree_with_the_per_submission_census(vgt, tmp_path, name):
    out, per_draw = census(vgt, tmp_path, name, "--census-per-draw")
    _, per_sub = census(vgt, tmp_path, name, "--census")
    numbers = draw_numbers(vgt, name)
    assert numbers, name
    # every draw and launch was cut and read back after its piece; sim stores nothing for any of them
    assert f"census per draw: {len(numbers)} draws and launches read back after their piece, {len(numbers)} of them " \
           "changed no watched byte" in out, out
    assert all("draw" in r and "draw_count" in r for r in per_draw)
    assert all("draw" not in r for r in per_sub)
    for r in per_draw:
        assert (r["draw"] is None) == (r["draw_count"] == 0), r
        if r["draw"] is not None:
            assert r["draw"] in numbers
    # the same ranges changed in the same submissions; a range changed in several pieces counts its bytes in
    # each (at least what the whole submission changed); the last piece leaves the submission's first pixel
    whole = {(r["submission"], r["va"]): r for r in per_sub}
    pieces = defaultdict(list)
    for r in per_draw:
        pieces[(r["submission"], r["va"])].append(r)
    assert set(pieces) == set(whole)
    for key, rs in pieces.items():
        assert sum(r["bytes_changed"] for r in rs) >= whole[key]["bytes_changed"], key
        assert rs[-1]["px0"] == whole[key]["px0"], key
        assert {r["seq"] for r in rs} == {whole[key]["seq"]}


def test_vk_triangle_clear_is_read_back_before_its_draw(vgt, tmp_path):
    """Submission 18 clears the render target (a macro-emitted CLEAR_SURFACE, modelled by sim) and then
    draws: the clear's 4096 bytes are in the piece before draw 0, whose own piece changed nothing."""
    _, per_draw = census(vgt, tmp_path, "vk_triangle", "--census-per-draw")
    sub18 = [r for r in per_draw if r["submission"] == 18]
    rt = [r for r in sub18 if r["what"] == "render-target"]
    assert len(rt) == 1 and rt[0]["bytes_changed"] == 4096 and rt[0]["draw"] is None
    assert not [r for r in per_draw if r["draw"] == 0]
    # the submission was read back more than once: rows before and after the draw
    assert len(sub18) >= 3


def test_db_and_census_read_per_draw_rows(vgt, tmp_path):
    _, per_draw = census(vgt, tmp_path, "gl_nostore", "--census-per-draw")
    path = tmp_path / "gl_nostore--census-per-draw.jsonl"
    db = tmp_path / "s.db"
    vgt("db", CORPUS / "gl_nostore.vgt", "-o", db, "--stores", path, check=0)
    import sqlite3
    con = sqlite3.connect(db)
    got = con.execute("SELECT count(*), count(draw_count), count(draw) FROM stores").fetchone()
    assert got[0] == len(per_draw) and got[1] == len(per_draw)
    assert got[2] == sum(1 for r in per_draw if r["draw"] is not None)
    r = vgt("census", CORPUS / "gl_nostore.vgt", "--stores", path, "--total", check=0)
    assert f"{len(per_draw)} ranges changed" in r.stdout


def test_stores_file_needs_both_draw_keys(vgt, tmp_path):
    base = ('{"submission":0,"seq":408,"channel":3203334400,"what":"observed","va":68943872,"length":4096,'
            '"pages_written":1,"bytes_changed":1,"first_changed":2992,"first_nonzero_pixel":748,"px0":null')
    for tail, ok in [(',"draw":null,"draw_count":0}', True), (',"draw":3,"draw_count":1}', True),
                     (',"draw":3}', False), (',"draw":null,"draw_count":2}', False), (',"draw":-1,"draw_count":0}', False)]:
        f = tmp_path / "s.jsonl"
        f.write_text(base + tail + "\n")
        r = vgt("db", CORPUS / "gl_nostore.vgt", "-o", tmp_path / "x.db", "--stores", f, check=None)
        (tmp_path / "x.db").unlink(missing_ok=True)
        assert (r.returncode == 0) == ok, (tail, r.stderr)


def test_census_per_draw_refuses_a_stream(vgt):
    r = vgt("replay", "-", "--backend", "sim", "--census-per-draw", check=2)
    assert "needs a trace file" in r.stderr


def test_stores_file_unfinished_key(vgt, tmp_path):
    """"unfinished":1 marks a row read before the GPU finished its piece: optional, 1 only."""
    base = ('{"submission":0,"seq":408,"channel":3203334400,"what":"observed","va":68943872,"length":4096,'
            '"pages_written":0,"bytes_changed":0,"first_changed":-1,"first_nonzero_pixel":748,"px0":null,'
            '"draw":3,"draw_count":1')
    for tail, ok in [('}', True), (',"unfinished":1}', True), (',"unfinished":2}', False),
                     (',"unfinished":1,"unfinished":1}', False)]:
        f = tmp_path / "s.jsonl"
        f.write_text(base + tail + "\n")
        r = vgt("db", CORPUS / "gl_nostore.vgt", "-o", tmp_path / "x.db", "--stores", f, check=None)
        (tmp_path / "x.db").unlink(missing_ok=True)
        assert (r.returncode == 0) == ok, (tail, r.stderr)
