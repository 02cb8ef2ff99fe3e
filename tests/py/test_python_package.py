"""The Python package (trace-format/python): pip-installed into a fresh virtual environment, it reads the
corpus (records and submissions in pure Python, methods and tables through libvgt with ctypes), writes
Parquet partitioned by trace, and DuckDB's counts over that Parquet must equal `vgt db`'s tables.

The venv sees the system's site-packages (tests/setup.sh installs pandas, pyarrow and duckdb there once),
so the install itself is the package's: pip builds and installs it from the repository."""
import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO

TRACES = ["vadd.vgt", "vk_triangle.vgt", "gl_egl.vgt", "vk_compute.vgt"]
# Parquet table -> the db's table of the same rows
DB_TABLES = {"submissions": "submissions", "entries": "gpfifo_entries", "methods": "methods", "events": "events",
             "launches": "launches", "draws": "draws", "semaphores": "semaphores", "macro_calls": "macro_calls"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    d = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(d)], check=True, timeout=120)
    py = d / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        str(REPO / "trace-format" / "python") + "[tables]", "duckdb"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return py


def run_py(py, code, build_dir, lib=True, **env):
    e = dict(os.environ, **env)
    e.pop("PYTHONPATH", None)
    if lib:
        e["VGTRACE_LIB"] = str(build_dir / "lib" / "libvgt.so.0")
    r = subprocess.run([str(py), "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600, env=e,
                       cwd="/")
    return r


def test_installed_not_the_source_tree(venv, build_dir):
    r = run_py(venv, "import vgtrace; print(vgtrace.__file__)", build_dir)
    assert r.returncode == 0, r.stderr
    assert "site-packages" in r.stdout and str(REPO) not in r.stdout


def test_records_submissions_methods(venv, build_dir, vgt):
    trace = REPO / "corpus" / "vk_triangle.vgt"
    r = run_py(venv, f"""
        import json, vgtrace
        t = {str(trace)!r}
        ms = list(vgtrace.iter_methods(t))
        print(json.dumps({{"records": sum(1 for _ in vgtrace.iter_records(t)),
                          "submissions": sum(1 for _ in vgtrace.iter_submissions(t)),
                          "methods": len(ms), "first": ms[0]._asdict(),
                          "draw_events": sum(1 for e in vgtrace.iter_events(t) if e.kind == "DRAW")}}))
    """, build_dir)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    info = json.loads(vgt("info", "--json", trace, check=0).stdout)
    census = json.loads(vgt("census", "--json", "--total", trace, check=0).stdout)["total"]
    assert got["records"] == info["records"]
    assert got["submissions"] == info["records_by_type"]["GPFIFO_SUBMIT"]
    assert got["methods"] == census["methods"]
    assert got["draw_events"] == census["draws"]
    # the first method, as `vgt decode --jsonl` has it
    first = next(json.loads(l) for l in vgt("decode", "--jsonl", trace, check=0).stdout.splitlines()
                 if json.loads(l).get("type") == "method")
    assert got["first"]["seq"] == first["seq"] and got["first"]["value"] == first["data"]
    assert got["first"]["name"] == first["method"] and got["first"]["address"] == first["mthd"]


def test_missing_library_is_a_clear_error(venv, build_dir):
    r = run_py(venv, f"""
        import vgtrace
        list(vgtrace.iter_methods({str(REPO / "corpus" / "vk_triangle.vgt")!r}))
    """, build_dir, lib=False, VGTRACE_LIB="/nonexistent/libvgt.so.0")
    assert r.returncode != 0
    assert "LibraryNotFound" in r.stderr and "VGTRACE_LIB" in r.stderr and "/nonexistent/libvgt.so.0" in r.stderr


def db_counts(vgt, trace, tmp_path):
    out = tmp_path / (trace.stem + ".sqlite")
    vgt("db", trace, "-o", out, "--no-fields", check=0)
    con = sqlite3.connect(out)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {db}").fetchone()[0] for t, db in DB_TABLES.items()}
    finally:
        con.close()


def test_parquet_duckdb_counts_equal_vgt_db(venv, build_dir, vgt, tmp_path):
    out = tmp_path / "parquet"
    traces = [REPO / "corpus" / t for t in TRACES]
    r = run_py(venv, f"""
        import json, duckdb, vgtrace.parquet as vp
        vp.export({[str(t) for t in traces]!r}, {str(out)!r})
        con = duckdb.connect()
        res = {{}}
        for table in {list(DB_TABLES)!r}:
            q = f"SELECT trace, count(*) FROM read_parquet('{out}/{{table}}/*/*.parquet', hive_partitioning=true) GROUP BY trace"
            for trace, n in con.execute(q).fetchall():
                res.setdefault(trace, {{}})[table] = n
        # a query across traces: launches' threads per trace, as a forensic query would ask it
        res["_threads"] = dict(con.execute(
            f"SELECT trace, sum(grid_x*grid_y*grid_z*block_x*block_y*block_z) FROM "
            f"read_parquet('{out}/launches/*/*.parquet', hive_partitioning=true) GROUP BY trace").fetchall())
        print(json.dumps(res))
    """, build_dir)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout)
    for t in traces:
        want = db_counts(vgt, t, tmp_path)
        have = got.get(t.stem, {})
        # a table without rows has an empty partition file: DuckDB then lists no group for it
        have = {k: have.get(k, 0) for k in DB_TABLES}
        assert have == want, (t.name, have, want)
        assert (out / "methods" / f"trace={t.stem}" / "part-0.parquet").is_file()
    census = json.loads(vgt("census", "--json", "--total", REPO / "corpus" / "vadd.vgt", check=0).stdout)["total"]
    assert got["_threads"]["vadd"] == census["launch_threads"]
