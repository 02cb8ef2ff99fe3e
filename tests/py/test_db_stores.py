"""`vgt db --stores FILE`: the store census of a replay as the `stores` table (docs/sqlite-schema.md), from a
real sim replay of corpus/vk_triangle.vgt (replay -> db) and from files written here by hand; the worked
query of docs/forensics.md ("which submissions wrote nothing to their render target") is run as the page
prints it. A bad stores file leaves no database behind."""
import json
import re
import sqlite3
from pathlib import Path

from test_census_stores import HOSTILE, KEYS, hand, row, subs_of, triangle, write_rows  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parents[2]


def export(vgt, trace, out, *args):
    r = vgt("db", trace, "-o", out, *args, check=0)
    return sqlite3.connect(str(out)), r.stdout


def forensics_query(title):
    """The first ```sql block after the heading that contains title, in docs/forensics.md."""
    text = (REPO / "docs" / "forensics.md").read_text()
    at = text.index(title)
    m = re.compile(r"```sql\n(.*?)```", re.S).search(text, at)
    assert m, f"no sql block after '{title}' in docs/forensics.md"
    return m.group(1)


def test_replay_to_db(vgt, triangle, tmp_path):
    trace, stores, rows = triangle
    db, out = export(vgt, trace, tmp_path / "t.sqlite", "--stores", stores)
    assert f"{len(rows)} store rows" in out
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",)
    assert db.execute("SELECT value FROM meta WHERE key = 'stores'").fetchone() == (str(stores),)
    got = db.execute("SELECT %s FROM stores ORDER BY id" % ", ".join(KEYS)).fetchall()
    want = [tuple(None if k in ("first_changed", "first_nonzero_pixel") and r[k] < 0 else r[k] for k in KEYS)
            for r in rows]
    assert all(r["px0"] is None for r in rows if r["what"] != "render-target")
    assert got == want
    # every row names a submission of the trace, with its seq and channel
    assert db.execute("SELECT count(*) FROM stores t JOIN submissions s ON s.submission = t.submission"
                      " AND s.seq = t.seq AND s.channel = t.channel").fetchone() == (len(rows),)
    view = db.execute("SELECT submission, ranges, pages_written, bytes_changed FROM submission_stores"
                      " ORDER BY submission").fetchall()
    sums = {}
    for r in rows:
        n, p, b = sums.get(r["submission"], (0, 0, 0))
        sums[r["submission"]] = (n + 1, p + r["pages_written"], b + r["bytes_changed"])
    assert view == [(k,) + v for k, v in sorted(sums.items())]
    # the census and the database agree
    doc = json.loads(vgt("census", trace, "--stores", stores, "--json", check=0).stdout)
    assert db.execute("SELECT sum(bytes_changed) FROM stores").fetchone()[0] == doc["total"]["stores"]["bytes_changed"]


def test_without_stores_table_empty(vgt, hand, tmp_path):
    db, out = export(vgt, hand, tmp_path / "h.sqlite")
    assert "store rows" not in out
    assert db.execute("SELECT count(*) FROM stores").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM meta WHERE key = 'stores'").fetchone() == (0,)


def test_worked_query_render_target_wall(vgt, hand, tmp_path):
    subs = subs_of(vgt, hand)
    sql = forensics_query("wrote nothing to their render target")
    # submission 1 draws; it changed an observed page only: it is the wall
    f = write_rows(tmp_path / "a.jsonl", [row(subs[0]), row(subs[1])])
    db, _ = export(vgt, hand, tmp_path / "a.sqlite", "--stores", f)
    got = db.execute(sql).fetchall()
    assert [r[0] for r in got] == [1], got
    # once it writes its render target it is not
    f = write_rows(tmp_path / "b.jsonl", [row(subs[1], what="render-target", nz=0, px0=0x80402010)])
    db, _ = export(vgt, hand, tmp_path / "b.sqlite", "--stores", f)
    assert db.execute(sql).fetchall() == []
    # the index of the first non-zero pixel and the value of the first pixel, in the table and the view
    assert db.execute("SELECT first_changed, first_nonzero_pixel, px0 FROM stores").fetchone() == (16, 0, 0x80402010)
    assert db.execute("SELECT render_target_bytes, render_target_first_nonzero_px, render_target_px0"
                      " FROM submission_stores").fetchone() == (4, 0, 0x80402010)
    # two targets: the view's px0 is the first target's, its first non-zero pixel the lowest index
    f = write_rows(tmp_path / "d.jsonl", [row(subs[1], what="render-target", nz=9, px0=0),
                                          row(subs[1], what="render-target", va=0x7F00009000, nz=3, px0=0xFF)])
    db, _ = export(vgt, hand, tmp_path / "d.sqlite", "--stores", f)
    assert db.execute("SELECT render_target_bytes, render_target_first_nonzero_px, render_target_px0"
                      " FROM submission_stores").fetchone() == (8, 3, 0)
    # none values (-1, null): NULL in the table and the view
    f = write_rows(tmp_path / "c.jsonl", [row(subs[1], nz=-1)])
    db, _ = export(vgt, hand, tmp_path / "c.sqlite", "--stores", f)
    assert db.execute("SELECT first_nonzero_pixel, px0 FROM stores").fetchone() == (None, None)
    assert db.execute("SELECT render_target_first_nonzero_px, render_target_px0"
                      " FROM submission_stores").fetchone() == (None, None)


def test_submit_filter(vgt, hand, tmp_path):
    subs = subs_of(vgt, hand)
    f = write_rows(tmp_path / "s.jsonl", [row(subs[0]), row(subs[1], nbytes=8)])
    db, _ = export(vgt, hand, tmp_path / "s.sqlite", "--stores", f, "--submits", "1")
    assert db.execute("SELECT submission, bytes_changed FROM stores").fetchall() == [(1, 8)]
    # rows past a finite window are not checked against the trace (the walk stops there)
    f = write_rows(tmp_path / "t.jsonl", [row(subs[0]), dict(row(subs[1]), submission=9)])
    db, _ = export(vgt, hand, tmp_path / "t.sqlite", "--stores", f, "--submits", "0")
    assert db.execute("SELECT submission FROM stores").fetchall() == [(0,)]


def test_bad_stores_leave_no_database(vgt, hand, triangle, tmp_path):
    out = tmp_path / "x.sqlite"
    for i, (text, code, message) in enumerate(HOSTILE[:6] + HOSTILE[-3:]):
        f = tmp_path / f"bad{i}.jsonl"
        f.write_bytes(text.encode("latin-1") + b"\n")
        r = vgt("db", hand, "-o", out, "--stores", f, check=code)
        assert message in r.stderr, r.stderr
        assert not out.exists() and not Path(str(out) + ".partial").exists()
    # a file made from another trace is found during the export: the partial file is removed too
    _, stores, _ = triangle
    r = vgt("db", hand, "-o", out, "--stores", stores, check=1)
    assert "made from another trace" in r.stderr or "is not in the trace" in r.stderr, r.stderr
    assert not out.exists() and not Path(str(out) + ".partial").exists()
    r = vgt("db", hand, "-o", out, "--stores", tmp_path / "missing.jsonl", check=2)
    assert "cannot open stores file" in r.stderr and not out.exists()
