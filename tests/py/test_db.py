"""`vgt db`: the SQLite export checked with sqlite3 queries against traces whose content is known (the
hand-built trace of test_census.py, and `vgt synth` traces decoded again in Python)."""
import sqlite3

from test_census import CH_HANDLE, EXPECTED, QMD_VA, build_trace, expected_from_trace


def export(vgt, trace, out, *args):
    r = vgt("db", trace, "-o", out, *args, check=0)
    assert "wrote" in r.stdout
    return sqlite3.connect(str(out))


def one(db, sql, *params):
    return db.execute(sql, params).fetchone()


def test_db_hand_built(vgt, tmp_path):
    trace = tmp_path / "hand.vgt"
    pbs, qmds = build_trace(trace)
    db = export(vgt, trace, tmp_path / "hand.sqlite", "--with-bytes")
    assert one(db, "SELECT value FROM meta WHERE key = 'schema_version'") == ("5",)
    assert one(db, "SELECT count(*) FROM submissions") == (2,)
    assert one(db, "SELECT count(*) FROM methods") == (sum(len(p.methods) for p in pbs),)
    # methods in stream order, with the values written
    rows = db.execute("SELECT subch, address, value FROM methods WHERE submission = 1 ORDER BY id").fetchall()
    assert rows == [tuple(m) for m in pbs[1].methods]
    assert one(db, "SELECT method, fields FROM methods WHERE address = 108 LIMIT 1")[0] == "SEM_EXECUTE"
    assert one(db, "SELECT count(*) FROM gpfifo_entries") == (2,)
    assert one(db, "SELECT channel FROM submissions WHERE submission = 0") == (CH_HANDLE,)
    # events, per table and per submission
    for k, want in enumerate(EXPECTED):
        got = one(db, "SELECT launches, draws, uploads, copies, releases, acquires FROM submission_summary "
                      "WHERE submission = ?", k)
        assert got == (want["launches"], want["draws"], want["uploads"], want["copies"], want["sem_releases"],
                       want["sem_acquires"])
    assert one(db, "SELECT count(*) FROM launches WHERE qmd_known = 0") == (1,)
    assert one(db, "SELECT grid_x, block_x, qmd_version FROM launches WHERE qmd_va = ?", QMD_VA) == (8, 64, "V04_00")
    assert one(db, "SELECT count(*), sum(grid_x) FROM launches WHERE inline = 1") == (2, 2048)
    assert db.execute("SELECT source, count(*) FROM semaphore_releases GROUP BY source ORDER BY source").fetchall() == \
        [("copy", 1), ("host", 4), ("qmd", 4), ("report", 1)]
    assert one(db, "SELECT op, payload, size FROM semaphores WHERE kind = 'acquire'") == ("ACQ_STRICT_GEQ", 4, 8)
    assert one(db, "SELECT instances, topology FROM draws WHERE kind = 'arrays'") == (2, "TRIANGLES")
    assert one(db, "SELECT count, index_size FROM draws WHERE kind = 'indexed'") == (36, 4)
    assert one(db, "SELECT stage, program_va FROM program_binds") == (1, 0x7F00009000)
    # upload bytes: dwords 0x11.. little-endian, cut to the length
    assert one(db, "SELECT length, hex(data) FROM uploads WHERE dst_va = ?", 0x7F00003000) == \
        (8, "1100000012000000")
    assert one(db, "SELECT bytes FROM copies") == (4096,)
    # memory with bytes, mappings, channels, identity
    assert one(db, "SELECT length(data) FROM memory WHERE gpu_va = ?", QMD_VA) == (384 + 128 + 384,)
    assert one(db, "SELECT data FROM memory")[0][:384] == qmds[0]
    assert one(db, "SELECT class_name FROM channels")[0] in ("HOPPER_CHANNEL_GPFIFO_A", "CLASS_C86F")
    assert one(db, "SELECT count(*) FROM engine_objects") == (4,)
    assert one(db, "SELECT count(*) FROM mappings") == (1,)
    assert one(db, "SELECT value FROM identity WHERE key = 'producer'") == ("vgtpy",)
    writes = db.execute("SELECT how, count(*) FROM writes WHERE submission = 1 GROUP BY how ORDER BY how").fetchall()
    assert writes == [("copy", 1), ("semaphore:copy", 1), ("semaphore:qmd", 4), ("semaphore:report", 1)]
    hist = dict(((c, m), n) for c, m, n in db.execute("SELECT class, method, n FROM method_histogram"))
    assert hist[(0xCBC0, "LOAD_INLINE_QMD_DATA(0)")] == 2


def test_db_options_and_window(vgt, tmp_path):
    trace = tmp_path / "hand.vgt"
    pbs, _ = build_trace(trace)
    db = export(vgt, trace, tmp_path / "w.sqlite", "--submits", "1", "--no-fields")
    assert one(db, "SELECT count(*) FROM submissions") == (1,)
    assert one(db, "SELECT count(*) FROM methods") == (len(pbs[1].methods),)
    assert one(db, "SELECT count(*) FROM methods WHERE fields IS NOT NULL") == (0,)
    assert one(db, "SELECT count(*) FROM memory WHERE data IS NOT NULL") == (0,)
    assert one(db, "SELECT count(*) FROM launches") == (5,)
    assert one(db, "SELECT count(*) FROM uploads") == (0,)
    assert one(db, "SELECT count(*) FROM sqlite_master WHERE name = 'methods_by_class'") == (0,)
    # a second export replaces the file
    db = export(vgt, trace, tmp_path / "w.sqlite", "--index-methods")
    assert one(db, "SELECT count(*) FROM submissions") == (2,)
    assert one(db, "SELECT count(*) FROM sqlite_master WHERE name = 'methods_by_class'") == (1,)
    assert one(db, "SELECT sum(n) FROM method_counts") == (sum(len(p.methods) for p in pbs),)


def test_db_errors_leave_no_file(vgt, tmp_path):
    out = tmp_path / "x.sqlite"
    assert vgt("db", tmp_path / "missing.vgt", "-o", out).returncode == 2
    assert not out.exists() and not (tmp_path / "x.sqlite.partial").exists()
    assert vgt("db", tmp_path / "missing.vgt").returncode == 2       # no -o
    trace = tmp_path / "hand.vgt"
    build_trace(trace)
    data = trace.read_bytes()
    bad = tmp_path / "bad.vgt"
    bad.write_bytes(data[: len(data) - 100])
    r = vgt("db", bad, "-o", out)
    if r.returncode != 0:       # a reader that cannot recover: nothing half-written is left
        assert not out.exists() and not (tmp_path / "x.sqlite.partial").exists()
    assert vgt("db", "--help", check=0).stdout.startswith("usage: vgt db")


def test_db_matches_synth(vgt, synth, tmp_path):
    trace = synth("db_mixed", "--shape", "mixed", "--submits", "30", "--channels", "2", "--seed", "9")
    want = expected_from_trace(trace)
    db = export(vgt, trace, tmp_path / "s.sqlite")
    assert one(db, "SELECT count(*) FROM methods") == (want["methods"],)
    assert one(db, "SELECT count(*) FROM launches") == (want["launches"],)
    assert one(db, "SELECT count(*) FROM copies") == (want["copies"],)
    assert one(db, "SELECT count(*) FROM uploads") == (want["uploads"],)
    assert one(db, "SELECT count(*) FROM semaphores WHERE source = 'host' AND kind = 'release'") == \
        (want["host_releases"],)
    # the census of the same trace agrees with the database
    import json
    total = json.loads(vgt("census", trace, "--json", check=0).stdout)["total"]
    assert one(db, "SELECT count(*) FROM methods") == (total["methods"],)
    assert one(db, "SELECT sum(methods) FROM submissions") == (total["methods"],)
    assert one(db, "SELECT count(*) FROM submissions") == (total["submissions"],)
