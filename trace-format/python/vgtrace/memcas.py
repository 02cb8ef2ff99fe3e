"""MEMORY_CAS (format 1.3, docs/trace-format.md section 5): turning MEMORY_CAS records back into the MEMORY
records they stand for, from the spec alone.

The memory stream is the data of every MEMORY record and every expanded MEMORY_CAS record, in sequence
order; a COPY names bytes of it by their distance back from the start of the record's own data.
"""
import struct

from . import spec
from .errors import FormatError

MEMORY = spec.BY_NAME["MEMORY"].code
MEMORY_CAS = spec.BY_NAME["MEMORY_CAS"].code


class Window:
    """The last MEMCAS_WINDOW bytes of the memory stream."""

    def __init__(self):
        self.buf, self.start = bytearray(), 0   # buf holds stream bytes [start, start + len(buf))

    @property
    def pos(self):
        return self.start + len(self.buf)

    def append(self, data):
        self.buf += data
        extra = len(self.buf) - spec.MEMCAS_WINDOW
        if extra > 0:
            del self.buf[:extra]
            self.start += extra

    def get(self, src, n, what):
        if src < self.start or src + n > self.pos or src + spec.MEMCAS_WINDOW < self.pos:
            raise FormatError(f"{what}: copies memory stream bytes {src}..{src + n}, outside the window "
                              f"(the stream is at {self.pos})")
        return bytes(self.buf[src - self.start:src - self.start + n])


def expand_payload(window, payload, what):
    """The MEMORY payload a MEMORY_CAS payload stands for."""
    if len(payload) < 40:
        raise FormatError(f"{what}: {len(payload)} bytes, shorter than the 40-byte fixed part")
    length, nops, npatch, nlit = struct.unpack_from("<I", payload, 8)[0], *struct.unpack_from("<III", payload, 24)
    ops_end = 40 + nops * spec.MEMCAS_OP_SIZE
    patch_end = ops_end + npatch * spec.MEMCAS_PATCH_SIZE
    if patch_end + nlit > len(payload):
        raise FormatError(f"{what}: ops, patches and literals run past the {len(payload)}-byte payload")
    data, lit_at, lits = bytearray(), 0, payload[patch_end:patch_end + nlit]
    for i in range(nops):
        kind, n, back = struct.unpack_from("<IIQ", payload, 40 + i * spec.MEMCAS_OP_SIZE)
        if len(data) + n > length:
            raise FormatError(f"{what}: op {i} runs past the {length} bytes of contents")
        if kind == spec.MEMCAS_LITERAL:
            if lit_at + n > nlit:
                raise FormatError(f"{what}: op {i} takes more literal bytes than the {nlit} there are")
            data += lits[lit_at:lit_at + n]
            lit_at += n
        elif kind == spec.MEMCAS_COPY:
            data += window.get(window.pos - back, n, what)
        else:
            raise FormatError(f"{what}: op {i} has unknown kind {kind}")
    if len(data) != length or lit_at != nlit:
        raise FormatError(f"{what}: ops give {len(data)} bytes and use {lit_at} literal bytes; the record says "
                          f"{length} and {nlit}")
    for i in range(npatch):
        off, = struct.unpack_from("<I", payload, ops_end + i * spec.MEMCAS_PATCH_SIZE)
        if off % 4 or off + 4 > length:
            raise FormatError(f"{what}: patch {i} at byte {off} is not a whole word of the {length} bytes")
        data[off:off + 4] = payload[ops_end + i * 8 + 4:ops_end + i * 8 + 8]
    return bytes(payload[:24]) + bytes(data)


def expand(records, record_class):
    """Yield the records with every MEMORY_CAS replaced by its MEMORY record (same seq, ts, flags)."""
    window = Window()
    for r in records:
        if r.type == MEMORY_CAS:
            payload = expand_payload(window, bytes(r.payload), f"record seq {r.seq} (MEMORY_CAS)")
            r = record_class(MEMORY, r.flags, len(payload), r.seq, r.ts, payload, r.chunk_offset)
        if r.type == MEMORY and r.length >= 24:
            n, = struct.unpack_from("<I", r.payload, 8)
            if 24 + n <= r.length:
                window.append(bytes(r.payload[24:24 + n]))
        yield r
