"""Parquet export of traces, partitioned by trace (Hive layout), so one set of queries runs in DuckDB on one
machine and in Spark or Trino when a corpus outgrows it:

    OUT/<table>/trace=<name>/part-0.parquet          table: submissions, methods, launches, draws, ...

    python3 -m vgtrace parquet OUT corpus/*.vgt
    duckdb -c "SELECT trace, count(*) FROM read_parquet('OUT/launches/*/*.parquet', hive_partitioning=true)
               GROUP BY trace"
    spark.read.parquet("OUT/launches")              # trace becomes a column from the partition

A trace's name is its file name without .vgt; exporting it again replaces its partition only.
"""
import os
import re
import shutil

from . import tables as _tables


def trace_name(path):
    base = os.path.basename(str(path))
    return base[:-4] if base.endswith(".vgt") else base


def _partition_value(name):
    # Hive partition values are path segments: keep them plain
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def export(traces, out, tables=_tables.TABLE_NAMES, compression="zstd"):
    """Write every trace's tables under out; returns {trace name: {table: rows}}."""
    import pyarrow.parquet as pq
    counts = {}
    for path in traces:
        name = _partition_value(trace_name(path))
        t = _tables.arrow_tables(path, tables)
        counts[name] = {}
        for table, at in t.items():
            d = os.path.join(str(out), table, f"trace={name}")
            if os.path.isdir(d):
                shutil.rmtree(d)
            os.makedirs(d)
            pq.write_table(at, os.path.join(d, "part-0.parquet"), compression=compression)
            counts[name][table] = at.num_rows
    return counts
