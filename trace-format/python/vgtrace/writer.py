"""Writing .vgt files and streams (docs/trace-format.md sections 2-7), independently of the C library.

    with open("x.vgt", "wb") as f:
        w = Writer(f, identity=[("producer", "vgtpy")])
        w.write("MARKER", {"text": b"hello"}, ts=10)
        w.write(0xF123, b"raw experimental payload", ts=11)
        w.close()                      # index + footer (unless trailer=False)

Knobs that a conforming writer would never turn (major, minor, header_flags, record and chunk flags) exist so
that tests can make files a reader must accept or reject.
"""
import struct

import xxhash
import zstandard

from . import spec
from .records import encode_payload

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code


def encode_header(identity, major=spec.MAJOR, minor=spec.MINOR, flags=0):
    """The file header bytes (section 2) for identity [(key, value)] in order."""
    entries = []
    for k, v in identity:
        kb, vb = k.encode("utf-8"), v.encode("utf-8")
        if len(kb) > spec.MAX_IDENTITY_KEY or len(vb) > spec.MAX_IDENTITY_VALUE:
            raise ValueError(f"identity {k!r}: key or value over the limits")
        e = struct.pack("<II", len(kb), len(vb)) + kb + vb
        entries.append(e + b"\0" * (spec.pad8(len(e)) - len(e)))
    body = b"".join(entries)
    hlen = spec.HEADER_FIXED + len(body) + 8
    if hlen > spec.MAX_HEADER_LENGTH:
        raise ValueError(f"header of {hlen} bytes over the limit {spec.MAX_HEADER_LENGTH}")
    head = struct.pack("<8sHHIIIQ", spec.FILE_MAGIC, major, minor, flags, hlen, len(identity), 0) + body
    return head + struct.pack("<Q", xxhash.xxh64_intdigest(head))


def encode_record(rtype, payload, seq, ts, flags=0):
    """Record header + payload + zero padding (section 4)."""
    if len(payload) > spec.MAX_RECORD_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes over the limit {spec.MAX_RECORD_PAYLOAD}")
    pad = spec.pad8(len(payload)) - len(payload)
    return struct.pack("<HHIQQ", rtype, flags, len(payload), seq, ts) + payload + b"\0" * pad


def encode_chunk(records_bytes, first_seq, record_count, submit_count, first_ts, last_ts, codec, level,
                 chunk_flags=0):
    """Chunk header (section 3) + payload for the given record bytes."""
    if codec == spec.CODEC_ZSTD:
        payload = zstandard.ZstdCompressor(level=level, write_content_size=True).compress(records_bytes)
    else:
        payload = records_bytes
    head = struct.pack("<4sHHIIQIIQQQQI", spec.CHUNK_MAGIC, codec, spec.CHUNK_HEADER_SIZE, len(payload),
                       len(records_bytes), first_seq, record_count, submit_count, first_ts, last_ts,
                       xxhash.xxh64_intdigest(payload), xxhash.xxh64_intdigest(records_bytes), chunk_flags)
    return head + struct.pack("<I", xxhash.xxh32_intdigest(head)) + payload


def encode_trailer(index_offset, entries, record_count):
    """Index block + footer (section 6); entries are dicts with the index entry's fields."""
    body = struct.pack("<4sI", spec.INDEX_MAGIC, len(entries)) + b"".join(
        struct.pack("<QQQQQII", e["offset"], e["first_seq"], e["first_ts"], e["last_ts"], e["first_submit"],
                    e["record_count"], e["submit_count"]) for e in entries)
    index = body + struct.pack("<Q", xxhash.xxh64_intdigest(body))
    foot = struct.pack("<QQI", index_offset, record_count, len(entries))
    return index + foot + struct.pack("<I", xxhash.xxh32_intdigest(foot)) + spec.FOOTER_MAGIC


class Writer:
    def __init__(self, f, identity=(), codec=spec.CODEC_ZSTD, level=3, chunk_target=2 << 20, trailer=True,
                 major=spec.MAJOR, minor=spec.MINOR, header_flags=0, chunk_flags=0):
        self.f = f
        self.codec, self.level, self.chunk_target, self.trailer = codec, level, chunk_target, trailer
        self.chunk_flags = chunk_flags
        self.offset = 0
        self.seq = 0
        self.submits = 0
        self.index = []
        self._pending = []      # (record bytes, type, ts)
        self._pending_bytes = 0
        self._emit(encode_header(list(identity), major, minor, header_flags))

    def _emit(self, b):
        self.f.write(b)
        self.offset += len(b)

    def write(self, rtype, fields, ts, flags=0):
        """Append a record: fields is a dict (known types) or the raw payload bytes. Returns its seq."""
        code = spec.type_code(rtype)
        payload = bytes(fields) if isinstance(fields, (bytes, bytearray)) else encode_payload(code, fields)
        rec = encode_record(code, payload, self.seq, ts, flags)
        if self._pending and self._pending_bytes + len(rec) > self.chunk_target:
            self.flush()
        self._pending.append((rec, code, ts))
        self._pending_bytes += len(rec)
        self.seq += 1
        if self._pending_bytes >= self.chunk_target:
            self.flush()
        return self.seq - 1

    def flush(self):
        """Close the current chunk (section 3: a writer MAY close a chunk early)."""
        if not self._pending:
            return
        recs = b"".join(r for r, _, _ in self._pending)
        n = len(self._pending)
        submits = sum(1 for _, t, _ in self._pending if t == SUBMIT)
        first_ts, last_ts = self._pending[0][2], self._pending[-1][2]
        first_seq = self.seq - n
        self.index.append({"offset": self.offset, "first_seq": first_seq, "first_ts": first_ts, "last_ts": last_ts,
                           "first_submit": self.submits, "record_count": n, "submit_count": submits})
        self._emit(encode_chunk(recs, first_seq, n, submits, first_ts, last_ts, self.codec, self.level,
                                self.chunk_flags))
        self.submits += submits
        self._pending, self._pending_bytes = [], 0
        if hasattr(self.f, "flush"):
            self.f.flush()

    def close(self):
        self.flush()
        if self.trailer:
            self._emit(encode_trailer(self.offset, self.index, self.seq))
        if hasattr(self.f, "flush"):
            self.f.flush()


def write_trace(path, records, identity=(("producer", "vgtpy"),), **kw):
    """Write [(type, fields_or_bytes, ts[, flags])] to path; returns the number of records."""
    with open(path, "wb") as f:
        w = Writer(f, identity=identity, **kw)
        for r in records:
            w.write(*r)
        w.close()
    return len(records)


def rewrite_trace(src, dst, edit, identity_extra=()):
    """Copy the trace src to dst record by record, each with its own type, timestamp and flags: edit(record)
    returns the record's new fields (a dict or payload bytes), or None to copy it as it is. The header's
    identity is kept, identity_extra appended. A trace whose records are not numbered 0, 1, 2... cannot be
    copied under the same numbers: ValueError. Returns the number of records."""
    from .reader import iter_stream   # the reader imports nothing of the writer; here to keep it that way
    with open(src, "rb") as f, open(dst, "wb") as out:
        it = iter_stream(f)
        w = Writer(out, identity=list(next(it).identity.items()) + list(identity_extra))
        for r in it:
            if r.seq != w.seq:
                raise ValueError(f"{src}: record seq {r.seq} is not the next ({w.seq})")
            new = edit(r)
            w.write(r.type, r.payload if new is None else new, r.ts, r.flags)
        w.close()
        return w.seq
