"""Record payloads (docs/trace-format.md sections 4 and 5): dict <-> bytes for every record type.

Decoding reads every field through a length-checked cursor; a payload shorter than its fixed part, or
whose blobs run past the payload length, raises FormatError naming the record and the field. Bytes past
the last blob are allowed (a newer minor may append fields) and reported as `_extra` (their count).
"""
import struct

from . import spec
from .errors import FormatError


class Cursor:
    """Reads little-endian fields from bytes, never past `end`."""

    def __init__(self, data, what):
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, n, field):
        if n > len(self.data) - self.pos:
            raise FormatError(
                f"{self.what}: field {field} needs {n} bytes at payload offset {self.pos}, "
                f"only {len(self.data) - self.pos} left of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(b)

    def field(self, code, name):
        return struct.unpack("<" + code, self.take(spec.FIELD_SIZES[code], name))[0]

    def blob(self, n, name):
        b = self.take(n, name)
        # the blob's padding: the last blob's padding is the record padding, outside the payload
        self.pos = min(len(self.data), self.pos + (spec.pad8(n) - n))
        return b


def decode_payload(code, payload, seq=None):
    """The fields of a payload as a dict (blobs as bytes); None for an unknown type."""
    layout = spec.BY_CODE.get(code)
    if layout is None:
        return None
    what = f"record seq {seq} ({layout.name})" if seq is not None else layout.name
    if len(payload) < layout.fixed_size:
        raise FormatError(f"{what}: payload of {len(payload)} bytes is shorter than the fixed part "
                          f"({layout.fixed_size} bytes)")
    cur = Cursor(payload, what)
    out = {}
    for name, fcode in layout.fixed:
        out[name] = cur.field(fcode, name)
    for name, length_field in layout.blobs:
        out[name] = cur.blob(out[length_field], name)
    if layout.special == "gpfifo":
        _decode_gpfifo(cur, out)
    out["_extra"] = len(payload) - cur.pos
    return out


def _decode_gpfifo(cur, out):
    n = out["entry_count"]
    if n * 8 > len(cur.data) - cur.pos:
        raise FormatError(f"{cur.what}: {n} entries need {n * 8} bytes, "
                          f"only {len(cur.data) - cur.pos} left at payload offset {cur.pos}")
    out["entries"] = [cur.field("Q", f"entries[{i}]") for i in range(n)]
    segs = []
    for i in range(out["segment_count"]):
        va = cur.field("Q", f"segments[{i}].gpu_va")
        length = cur.field("I", f"segments[{i}].length")
        flags = cur.field("I", f"segments[{i}].flags")
        data = cur.blob(length, f"segments[{i}].data")
        segs.append({"gpu_va": va, "length": length, "flags": flags, "data": data})
    out["segments"] = segs


def encode_payload(code, fields):
    """Bytes of a payload from a dict. Length fields are filled from their blobs when absent, and must
    agree with them when given (RM_ALLOC's params_in and params_out share one). Missing integer fields
    (reserved ones) are written as 0. The last blob is not padded: its padding is the record padding."""
    layout = spec.BY_CODE.get(code)
    if layout is None:
        raise ValueError(f"unknown record type {code:#x}: pass the payload as bytes")
    f = dict(fields)
    blobs = []
    for name, length_field in layout.blobs:
        blob = bytes(f.get(name, b""))
        f.setdefault(length_field, len(blob))
        if f[length_field] != len(blob):
            raise ValueError(f"{layout.name}: {length_field}={f[length_field]} but {name} has {len(blob)} bytes")
        blobs.append(blob)
    if layout.special == "gpfifo":
        f.setdefault("entry_count", len(f.get("entries", [])))
        f.setdefault("segment_count", len(f.get("segments", [])))
    codes = "".join(c for _, c in layout.fixed)
    parts = [struct.pack("<" + codes, *[int(f.get(n, 0)) for n, _ in layout.fixed])]
    for i, blob in enumerate(blobs):
        parts.append(blob)
        if i != len(blobs) - 1:
            parts.append(b"\0" * (spec.pad8(len(blob)) - len(blob)))
    if layout.special == "gpfifo":
        parts.append(_encode_gpfifo(f))
    return b"".join(parts)


def _encode_gpfifo(f):
    parts = [struct.pack("<%dQ" % len(f.get("entries", [])), *f.get("entries", []))]
    segs = f.get("segments", [])
    for i, s in enumerate(segs):
        data = bytes(s["data"])
        length = s.get("length", len(data))
        if length != len(data):
            raise ValueError(f"GPFIFO_SUBMIT segment {i}: length {length} but {len(data)} data bytes")
        parts.append(struct.pack("<QII", s["gpu_va"], length, s.get("flags", 0)))
        parts.append(data)
        if i != len(segs) - 1:
            parts.append(b"\0" * (spec.pad8(length) - length))
    return b"".join(parts)


def unpack_channel_methods(writes):
    """CHANNEL_METHODS writes (section 5, 0x0028) -> [(subchannel, method, value)], checked as the spec says."""
    if len(writes) % spec.CHANNEL_METHOD_SIZE:
        raise FormatError(f"CHANNEL_METHODS: writes_length {len(writes)} is not a multiple of 8")
    out = []
    for i in range(0, len(writes), spec.CHANNEL_METHOD_SIZE):
        method, subch, value = struct.unpack_from("<HHI", writes, i)
        if subch > 7 or method % 4 or method > spec.MAX_METHOD_ADDRESS:
            raise FormatError(f"CHANNEL_METHODS: write {i // 8} names subchannel {subch} method {method:#x}")
        out.append((subch, method, value))
    return out


def pack_channel_methods(writes):
    """[(subchannel, method, value)] -> the writes blob of CHANNEL_METHODS (section 5, 0x0028)."""
    return b"".join(struct.pack("<HHI", method, subch, value) for subch, method, value in writes)
