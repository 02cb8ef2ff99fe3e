"""The per-push-window recipes of docs/forensics.md ("Per push window: why did this draw store nothing?")
run against the corpus's databases, with the answers known for vk_triangle; and the draw tables of a
hand-built trace whose lints are known (test_draws.py)."""
import re
import sqlite3
from pathlib import Path

import pytest

from test_draws import CASES, build

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Per push window: why did this draw store nothing?"


def recipes():
    text = (REPO / "docs" / "forensics.md").read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    out = []
    for block in re.findall(r"```sql\n(.*?)```", text[start:end], re.S):
        body = "\n".join(line for line in block.splitlines() if not line.strip().startswith("--"))
        out += [s.strip() for s in body.split(";") if s.strip()]
    return out


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    trace = REPO / "corpus" / "vk_triangle.vgt"
    if not trace.exists():
        pytest.skip("corpus trace not present")
    return trace, tmp_path_factory.mktemp("recipes") / "vk_triangle.sqlite"


def export(vgt, trace, out):
    vgt("db", trace, "-o", out, "--no-fields", "--quiet", check=0)
    return sqlite3.connect(str(out))


def test_recipes_on_the_corpus(vgt, corpus_db):
    db = export(vgt, *corpus_db)
    stmts = recipes()
    assert len(stmts) == 7
    answers = [db.execute(s).fetchall() for s in stmts]
    windows, ran, sph, stages, lints, window_lints, stored = answers
    # which macros did the windows of the drawing submission release
    by_window = {(w[1], w[2]): w[5] for w in windows}
    assert by_window[(1481, 4)] == "0x3b,0x0,0x39"            # the macro-emitted clear, then constant buffers
    assert by_window[(1481, 6)] == "0x32"
    # did macro 0x22 run: never, in any window of this trace (the Vulkan driver draws from the push buffer)
    assert ran and all(r[3] == 0 for r in ran)
    # the SPH bits: the pixel shader writes RGBA of target 0 (word 18), reads position W (word 5)
    ps = [r for r in sph if r[2] == "PIXEL"]
    assert len(ps) == 1 and ps[0][6] == "0x0000000f" and ps[0][4] == "0x80000000" and ps[0][9] == 0
    vs = [r for r in sph if r[2] == "VERTEX"]
    assert len(vs) == 1 and vs[0][5] == "0x80000000"          # word 10: it reads the vertex id
    # the state at the draw: the pixel stage is enabled (SET_PIPELINE_SHADER(5)=0x51 came after the bind)
    pixel = [r for r in stages if r[2] == 5]
    assert pixel == [(0, 18, 5, "PIXEL", 1, "0xdefdfeba00", "decoded")]
    # a normal draw: nothing to explain
    assert lints == [] and window_lints == []
    # no census loaded: the draw is listed, with nothing stored
    assert stored == [(0, 18, 0, "", 0)]


def test_recipes_on_known_lints(vgt, tmp_path):
    trace = tmp_path / "draws.vgt"
    build(trace)
    db = export(vgt, trace, tmp_path / "draws.sqlite")
    stmts = recipes()
    lints = db.execute(stmts[4]).fetchall()
    assert sorted({r[4] for r in lints}) == sorted({w for w, _ in CASES if w})
    [window] = db.execute(stmts[5]).fetchall()
    assert window[5] == "draw_macro_not_called" and window[4] == "0x23"
    ran = db.execute(stmts[1]).fetchall()
    assert any(r[3] == 1 for r in ran)                         # the macro draw's window ran 0x22
    assert db.execute("SELECT count(*) FROM draw_state WHERE kind = 'draw'").fetchone() == (len(CASES),)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",)


# The corpus traces with lints (corpus/README.md): the recipes name each draw's reasons and the window that
# drew nothing; the census per draw joins them (sim: every draw stored nothing; the clears are not a draw's).
CORPUS_LINTS = {
    "vk_nostore": ({1: {"write_mask_zero", "sph_no_outputs"}, 2: {"sph_no_outputs"}, 3: {"stage_disabled"},
                    4: {"scissor_zero"}}, []),
    "gl_nostore": ({1: {"write_mask_zero"}, 2: {"sph_no_outputs"}, 3: {"stage_disabled"}, 4: {"scissor_zero"}}, []),
    "gl_lints": ({1: {"program_unmapped", "write_mask_zero"}, 2: {"program_never_written", "sph_no_outputs"},
                  3: {"stage_disabled"}, 4: {"clear_target_mismatch", "scissor_zero"}, 5: {"zero_count"}}, []),
    "vk_lints": ({1: {"write_mask_zero", "sph_no_outputs"}, 2: {"sph_no_outputs"}, 3: {"stage_disabled"},
                  4: {"scissor_zero"}}, [(23, 1496, 4, "draw_macro_not_called")]),
}


@pytest.mark.parametrize("name", sorted(CORPUS_LINTS))
def test_recipes_on_the_corpus_lint_traces(vgt, tmp_path, name):
    trace = REPO / "corpus" / f"{name}.vgt"
    stores = tmp_path / "stores.jsonl"
    vgt("replay", trace, "--backend", "sim", "--census-per-draw", "--census-json", stores, "--quiet", check=0)
    out = tmp_path / f"{name}.sqlite"
    vgt("db", trace, "-o", out, "--no-fields", "--quiet", "--stores", stores, check=0)
    db = sqlite3.connect(str(out))
    stmts = recipes()
    want_draws, want_windows = CORPUS_LINTS[name]
    got = {}
    for draw, _sub, _seq, _entry, code, message in db.execute(stmts[4]).fetchall():
        got.setdefault(draw, set()).add(code)
        assert message
    assert got == want_draws
    windows = [(r[0], r[1], r[2], r[5]) for r in db.execute(stmts[5]).fetchall()]
    assert windows == want_windows
    stored = db.execute(stmts[6]).fetchall()
    assert [r[0] for r in stored] == sorted(set(range(len(stored))))
    assert all(r[4] == 0 for r in stored)                       # sim rasterizes nothing
    assert {r[0] for r in stored if r[2]} == set(want_draws)     # nlints: the flagged draws, no other
    # the clears before the draws are in the pieces that name no draw
    assert db.execute("SELECT count(*) FROM stores WHERE what = 'render-target' AND draw IS NULL").fetchone()[0] > 0
