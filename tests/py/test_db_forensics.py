"""Every SQL query in docs/forensics.md runs against a `vgt db` export (and the schema doc names every
table the export has), so the worked examples cannot rot."""
import re
import sqlite3
from pathlib import Path

from test_census import build_trace

DOCS = Path(__file__).resolve().parents[2] / "docs"


def sql_statements():
    text = (DOCS / "forensics.md").read_text()
    out = []
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        body = "\n".join(line for line in block.splitlines() if not line.strip().startswith("--"))
        out += [s.strip() for s in body.split(";") if s.strip()]
    return out


def test_forensics_queries_run(vgt, tmp_path):
    trace = tmp_path / "hand.vgt"
    build_trace(trace)
    out = tmp_path / "hand.sqlite"
    vgt("db", trace, "-o", out, "--with-bytes", check=0)
    db = sqlite3.connect(str(out))
    stmts = sql_statements()
    assert len(stmts) >= 15
    for s in stmts:
        db.execute(s).fetchall()   # raises on a bad query
    # a few answers are known for this trace
    assert db.execute("SELECT count(*) FROM compute_submissions").fetchone() == (1,)
    assert db.execute("SELECT count(*) FROM writes WHERE submission = 0").fetchone() == (6,)   # 2 uploads, 4 releases


def test_schema_doc_names_every_table(vgt, tmp_path):
    trace = tmp_path / "hand.vgt"
    build_trace(trace)
    out = tmp_path / "hand.sqlite"
    vgt("db", trace, "-o", out, check=0)
    db = sqlite3.connect(str(out))
    doc = (DOCS / "sqlite-schema.md").read_text()
    documented = set()
    for heading in re.findall(r"^### (.+)$", doc, re.M):      # "### objects, object_frees — RM objects"
        documented.update(n.strip() for n in heading.split(" — ")[0].split(","))
    documented.update(re.findall(r"^\| `(\w+)` \|", doc, re.M))  # the views table
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    views = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    assert len(tables) > 20 and len(views) >= 5
    for n in tables + views:
        assert n in documented, f"{n} is not documented in docs/sqlite-schema.md"


def test_writes_lists_color_and_zeta_clears(vgt, tmp_path):
    """vk_scene clears its color target and its depth target each frame (the clear macro's CLEAR_SURFACE):
    `writes` lists both, the zeta one at the depth target the draws use, with its origin in clears."""
    corpus = Path(__file__).resolve().parents[2] / "corpus"
    out = tmp_path / "scene.sqlite"
    vgt("db", corpus / "vk_scene.vgt", "-o", out)
    db = sqlite3.connect(str(out))
    rows = db.execute("SELECT how, va FROM writes WHERE how LIKE 'clear%' ORDER BY seq, how").fetchall()
    assert [h for h, _ in rows] == ["clear", "clear:zeta"] * 2, rows
    zt = {va for h, va in rows if h == "clear:zeta"}
    assert len(zt) == 1 and 0 not in zt
    assert db.execute("SELECT count(*) FROM clears WHERE depth = 1 AND zt_va IN (%d)" % zt.pop()).fetchone() == (2,)
