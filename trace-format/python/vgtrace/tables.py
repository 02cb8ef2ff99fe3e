"""A trace as tables: submissions, entries, methods, events, launches, draws, semaphores and macro calls, as
pandas DataFrames or Arrow tables. The rows come from libvgt (native.py), the same decoders as `vgt db`, so
the counts agree with the db's tables of the same names.

    import vgtrace.tables as vt
    t = vt.arrow_tables("vadd.vgt")            # {"submissions": pyarrow.Table, "methods": ..., ...}
    df = vt.pandas_tables("vadd.vgt")["launches"]

Integers are int64 (what Spark, Trino and DuckDB read without surprises): a GPU VA fits; the two 64-bit
values that may not (a GPFIFO entry's raw word, a macro's hash) are int64 with the same bits (raw) and a
hex string (hash).
"""
import numpy as np

from . import native

TABLE_NAMES = ("submissions", "entries", "methods", "events", "launches", "draws", "semaphores", "macro_calls")
# which native tables each output table is built from
_SOURCES = {"submissions": "submissions", "entries": "entries", "methods": "methods", "events": "events",
            "launches": "events", "draws": "events", "semaphores": "events", "macro_calls": "macro_calls"}


def _i64(a):
    return np.ascontiguousarray(a).astype(np.int64, copy=False) if a.dtype != np.int64 else a


def _strings(values, fn):
    """Map small-integer codes (or pairs) through fn, once per distinct value."""
    if not len(values):
        return np.array([], dtype=object)
    uniq, inv = np.unique(values, return_inverse=True, axis=0 if values.ndim > 1 else None)
    mapped = np.array([fn(*u) if values.ndim > 1 else fn(u) for u in uniq], dtype=object)
    return mapped[inv.reshape(-1)]


def _columns(name, rows, nm):
    """{column: numpy array} of one output table from the native rows."""
    r = rows
    if name == "submissions":
        return {k: _i64(r[k]) for k in r.dtype.names}
    if name == "entries":
        cols = {k: _i64(r[k]) for k in r.dtype.names if k != "raw"}
        cols["raw"] = r["raw"].view(np.int64)
        return cols
    if name == "methods":
        flags = r["flags"]
        cols = {k: _i64(r[k]) for k in ("submission", "entry", "dword", "seq", "channel", "subch", "class")}
        cols["method"] = _strings(np.stack([r["class"], r["address"]], axis=1), nm.method)
        cols["address"] = _i64(r["address"])
        cols["value"] = _i64(r["value"])
        cols["header"] = _i64(flags & 0xFF)
        cols["host"] = (flags & 0x100) != 0
        cols["masked"] = (flags & 0x400) != 0
        return cols
    common = lambda e: {"event": _i64(e["id"]), "submission": _i64(e["submission"]), "seq": _i64(e["seq"]),  # noqa: E731
                        "channel": _i64(e["channel"]), "class": _i64(e["class"]),
                        "origin": np.where(e["origin"] == 1, "macro", "stream").astype(object),
                        "macro_call": np.where(e["origin"] == 1, e["macro_call"].astype(np.int64), -1)}
    if name == "events":
        cols = common(r)
        cols["kind"] = _strings(r["kind"], lambda k: native.EVENT_KINDS.get(int(k), "?"))
        cols["entry"], cols["dword"] = _i64(r["entry"]), _i64(r["dword"])
        return cols
    if name == "launches":
        e = r[r["kind"] == native.EV["LAUNCH"]]
        cols = common(e)
        cols.update(qmd_va=_i64(e["va"]), program_va=_i64(e["va2"]), grid_x=_i64(e["a0"]), grid_y=_i64(e["a1"]),
                    grid_z=_i64(e["a2"]), block_x=_i64(e["a3"]), block_y=_i64(e["a4"]), block_z=_i64(e["a5"]),
                    inline=e["a6"] != 0, qmd_known=e["a7"] != 0, shared_memory=_i64(e["a8"]),
                    registers=_i64(e["a9"]))
        return cols
    if name == "draws":
        e = r[r["kind"] == native.EV["DRAW"]]
        cols = common(e)
        cols.update(kind=_strings(e["a0"], lambda v: nm.enum("vgt_draw_kind_name", v)),
                    topology=_strings(e["a1"], lambda v: nm.enum("vgt_topology_name", v)),
                    first=_i64(e["a2"]), count=_i64(e["a3"]), instances=_i64(e["a4"]), index_size=_i64(e["a5"]),
                    base_vertex=_i64(e["a6"]), base_instance=_i64(e["a7"]), index_buffer_va=_i64(e["va"]))
        return cols
    if name == "semaphores":
        e = r[np.isin(r["kind"], [native.EV["SEM_RELEASE"], native.EV["SEM_ACQUIRE"], native.EV["REPORT"]])]
        cols = common(e)
        cols.update(kind=_strings(e["kind"], lambda k: native.EVENT_KINDS.get(int(k), "?")),
                    source=_strings(e["a0"], lambda v: nm.enum("vgt_sem_source_name", v)),
                    op=_strings(e["a1"], lambda v: nm.enum("vgt_sem_op_name", v)),
                    va=_i64(e["va"]), payload=e["va2"].view(np.int64), size=_i64(e["a2"]))
        return cols
    if name == "macro_calls":
        cols = {k: _i64(r[k]) for k in ("call", "submission", "seq", "entry", "dword", "channel", "subch", "class",
                                        "macro", "nparams", "nemits", "instructions", "status", "categories")}
        cols["version"] = np.where(r["version"] == 0xFFFFFFFF, -1, r["version"].astype(np.int64))
        cols["hash"] = np.array([f"{h:016x}" for h in r["hash"]], dtype=object)
        return cols
    raise KeyError(name)


def columns(path, tables=TABLE_NAMES):
    """{table: {column: numpy array}} of a trace (one walk of the C library for all of them)."""
    for t in tables:
        if t not in _SOURCES:
            raise KeyError(f"no table {t!r}; tables: {', '.join(TABLE_NAMES)}")
    rows = native.read_rows(path, sorted({_SOURCES[t] for t in tables}, key=native.TABLES.index))
    nm = native.names()
    return {t: _columns(t, rows[_SOURCES[t]], nm) for t in tables}


def arrow_tables(path, tables=TABLE_NAMES):
    import pyarrow as pa
    return {t: pa.table({k: pa.array(v) for k, v in cols.items()}) for t, cols in columns(path, tables).items()}


def pandas_tables(path, tables=TABLE_NAMES):
    import pandas as pd
    return {t: pd.DataFrame(cols) for t, cols in columns(path, tables).items()}
