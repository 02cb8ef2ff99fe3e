"""`vgt db -o OUT` never leaves a half-written or stray file: the export goes to a temporary beside OUT and
is renamed over OUT only when complete. OUT that is a directory is refused before any work, and the message
says why. An existing OUT file is replaced whole; paths with quotes and spaces are taken as they are (SQLite
opens the file by name, nothing is quoted into SQL)."""
import sqlite3
from pathlib import Path

from conftest import run_vgt

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
TRACE = CORPUS / "gl_egl.vgt"


def test_rename_failure_leaves_nothing(vgt_bin, tmp_path):
    out = tmp_path / "out.sqlite"
    out.mkdir()
    (out / "keep").write_text("the directory's contents stay")
    r = run_vgt(vgt_bin, "db", TRACE, "-o", out, check=2)
    assert "is a directory" in r.stderr and str(out) in r.stderr, r.stderr
    assert not Path(str(out) + ".partial").exists(), "a complete export was left as OUT.partial"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sqlite"]
    assert (out / "keep").read_text() == "the directory's contents stay"


def test_existing_output_replaced_and_odd_names(vgt_bin, tmp_path):
    d = tmp_path / "it's \"quoted\" dir"
    d.mkdir()
    out = d / "o'ut \"x\".sqlite"
    out.write_bytes(b"not a database")
    run_vgt(vgt_bin, "db", TRACE, "-o", out, "--quiet", check=0)
    con = sqlite3.connect(out)
    try:
        assert con.execute("SELECT count(*) FROM submissions").fetchone()[0] == 5
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    assert sorted(p.name for p in d.iterdir()) == [out.name]


def test_small_trace_small_pages(vgt_bin, tmp_path):
    """A small trace's database uses SQLite's 4 KiB pages: every table and index starts with a root page of
    its own, and with 64 KiB pages (kept for traces of 16 MiB and more) each of those was a 64 KiB page
    zeroed, written and mostly empty."""
    out = tmp_path / "small.sqlite"
    run_vgt(vgt_bin, "db", TRACE, "-o", out, "--quiet", check=0)
    con = sqlite3.connect(out)
    try:
        assert con.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*) FROM submissions").fetchone()[0] == 5
    finally:
        con.close()
