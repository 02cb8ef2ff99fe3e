"""Iteration over a trace: records and submissions (the pure-Python reader: no C library needed), decoded
methods and semantic events (the C library, native.py). Every iterator streams: memory stays bounded
whatever the trace's size.

    for rec in vgtrace.iter_records("t.vgt"): rec.seq, rec.name, rec.fields
    for sub in vgtrace.iter_submissions("t.vgt"): sub.fields["channel"], len(sub.fields["entries"]) // 8
    for m in vgtrace.iter_methods("t.vgt"): m.submission, m.name, hex(m.value)
"""
import collections

from . import spec
from .reader import iter_stream

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code

Method = collections.namedtuple("Method", "submission seq channel cls address value entry dword subch name")
Event = collections.namedtuple("Event", "id submission seq kind channel cls origin macro_call va va2 args")


def iter_records(path):
    """Every record in sequence order (vgtrace.Record: seq, ts, type, name, flags, payload, fields)."""
    with open(path, "rb") as f:
        it = iter_stream(f)
        next(it)   # the header
        yield from it


def iter_submissions(path):
    """The GPFIFO_SUBMIT records, in order."""
    return (r for r in iter_records(path) if r.type == SUBMIT)


def iter_methods(path):
    """Every decoded method (Method), in trace order; names from the C class tables."""
    from . import native
    nm = native.names()
    for _, rows in native.iter_batches(path, ("methods",)):
        for r in rows:
            yield Method(int(r["submission"]), int(r["seq"]), int(r["channel"]), int(r["class"]), int(r["address"]),
                         int(r["value"]), int(r["entry"]), int(r["dword"]), int(r["subch"]),
                         nm.method(r["class"], r["address"]))


def iter_events(path):
    """Every semantic event (Event: kind "LAUNCH", "DRAW", ...; args: the kind's fields, see rows.h)."""
    from . import native
    for _, rows in native.iter_batches(path, ("events",)):
        for r in rows:
            yield Event(int(r["id"]), int(r["submission"]), int(r["seq"]), native.EVENT_KINDS.get(int(r["kind"]), "?"),
                        int(r["channel"]), int(r["class"]), "macro" if r["origin"] == 1 else "stream",
                        int(r["macro_call"]), int(r["va"]), int(r["va2"]), tuple(int(r[f"a{i}"]) for i in range(10)))
