"""python3 -m vgtrace: the Python package's view of traces.

    python3 -m vgtrace info TRACE             header, identity, chunks, record counts (the pure-Python reader)
    python3 -m vgtrace dump TRACE             one JSON object per record (seq, ts, type, type_id, flags,
                                              length, chunk_offset, fields; blobs in hex), like `vgt dump --jsonl`
    python3 -m vgtrace tables TRACE           rows per table (submissions, methods, launches, draws, ...), JSON
    python3 -m vgtrace parquet OUT TRACE...   Parquet under OUT/<table>/trace=<name>/ (needs pyarrow)
Exit: 0 ok, 1 the trace has a problem (printed on stderr, naming the offset), 2 usage.
"""
import collections
import json
import sys

from . import VgtError, read_prefix


def jsonable(v):
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items() if k not in ("reserved", "_extra")}
    return v


def tables_main(argv):
    from . import native, parquet, tables
    try:
        if argv[1] == "parquet":
            counts = parquet.export(argv[3:], argv[2])
        else:
            counts = {k: len(next(iter(v.values()))) if v else 0 for k, v in tables.columns(argv[2]).items()}
    except native.LibraryNotFound as e:
        print(f"vgtrace: {e}", file=sys.stderr)
        return 2
    except (native.NativeError, OSError) as e:
        print(f"vgtrace: {e}", file=sys.stderr)
        return 1
    print(json.dumps(counts, indent=1))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "parquet" or len(argv) == 3 and argv[1] == "tables":
        return tables_main(argv)
    if len(argv) != 3 or argv[1] not in ("info", "dump"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        t, err = read_prefix(argv[2])
    except OSError as e:
        print(f"vgtrace: {e}", file=sys.stderr)
        return 2
    except VgtError as e:
        print(f"vgtrace: {e}", file=sys.stderr)
        return 1
    if argv[1] == "dump":
        for r in t.records:
            print(json.dumps({"seq": r.seq, "ts": r.ts, "type": r.name, "type_id": r.type, "flags": r.flags,
                              "length": r.length, "chunk_offset": r.chunk_offset,
                              "fields": jsonable(r.fields) if r.fields is not None else None}))
    else:
        print(json.dumps({"version": f"{t.major}.{t.minor}", "flags": t.flags, "identity": t.identity,
                          "chunks": len(t.chunks), "records": len(t.records), "submissions": t.submit_count,
                          "has_index": t.has_index,
                          "by_type": collections.Counter(r.name or hex(r.type) for r in t.records)}, indent=1))
    if err:
        print(f"vgtrace: {err}", file=sys.stderr)
        return 1
    return 0


def entry():
    """The `vgtrace-py` console script."""
    sys.exit(main(sys.argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
