"""Reading .vgt files and streams (docs/trace-format.md sections 2-8), independently of the C library.

    t = read_trace("x.vgt")                 # every check of the spec; raises VgtError at the first problem
    t.identity["capture_mode"], t.records[0].fields, t.chunks, t.index
    t, err = read_prefix("x.vgt")           # every complete, valid chunk before the first problem
    for rec in iter_stream(pipe): ...        # a stream: each chunk as soon as it has arrived

Every size read from the input is checked against its named maximum (spec section 9) and against the
bytes left before anything is sliced or decompressed.
"""
import io
import struct

import xxhash
import zstandard

from . import memcas, spec
from .errors import (ChecksumError, FormatError, LimitError, SequenceError, TruncatedError, VersionError,
                     VgtError)
from .records import decode_payload

CHUNK_FMT = "<4sHHIIQIIQQQQII"   # section 3, 72 bytes
INDEX_ENTRY_FMT = "<QQQQQII"     # section 6, 48 bytes
FOOTER_FMT = "<QQII8s"           # section 6, 32 bytes
assert struct.calcsize(CHUNK_FMT) == spec.CHUNK_HEADER_SIZE
assert struct.calcsize(INDEX_ENTRY_FMT) == spec.INDEX_ENTRY_SIZE
assert struct.calcsize(FOOTER_FMT) == spec.FOOTER_SIZE

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code


class Record:
    __slots__ = ("type", "flags", "length", "seq", "ts", "payload", "chunk_offset", "_fields")

    def __init__(self, rtype, flags, length, seq, ts, payload, chunk_offset):
        self.type, self.flags, self.length, self.seq, self.ts = rtype, flags, length, seq, ts
        self.payload, self.chunk_offset, self._fields = payload, chunk_offset, None

    @property
    def name(self):
        return spec.type_name(self.type)

    @property
    def fields(self):
        """Decoded payload (dict), or None for a type this reader does not know (skipped by length)."""
        if self._fields is None:
            self._fields = decode_payload(self.type, self.payload, self.seq)
        return self._fields

    def __repr__(self):
        return f"Record(seq={self.seq}, {self.name or hex(self.type)}, {self.length} bytes)"


class Chunk:
    FIELDS = ("magic", "codec", "header_size", "compressed_length", "uncompressed_length", "first_seq",
              "record_count", "submit_count", "first_ts", "last_ts", "payload_xxh64", "records_xxh64",
              "flags", "header_xxh32")

    def __init__(self, offset, raw):
        self.offset = offset
        for k, v in zip(self.FIELDS, struct.unpack(CHUNK_FMT, raw)):
            setattr(self, k, v)
        self.first_submit = 0
        self.records = []

    @property
    def end(self):
        return self.offset + spec.CHUNK_HEADER_SIZE + self.compressed_length


class Trace:
    def __init__(self):
        self.major = self.minor = self.flags = self.header_length = 0
        self.identity = {}
        self.chunks = []
        self.records = []
        self.index = None       # list of dicts (section 6) when a valid trailer was found
        self.footer = None
        self.file_size = None
        self.chunks_end = 0     # offset just past the last chunk read

    @property
    def has_index(self):
        return self.index is not None

    @property
    def submit_count(self):
        return sum(c.submit_count for c in self.chunks)


# ---- file header (section 2) ----

def parse_header(buf, file_size=None):
    """Parse and check the file header at the start of buf; returns a Trace with the header fields."""
    if len(buf) < spec.HEADER_FIXED:
        raise TruncatedError(f"file of {len(buf)} bytes is shorter than the {spec.HEADER_FIXED}-byte header", 0)
    magic, major, minor, flags, hlen, count, _res = struct.unpack_from("<8sHHIIIQ", buf, 0)
    if magic != spec.FILE_MAGIC:
        raise FormatError(f"bad file magic {magic.hex()} (expected {spec.FILE_MAGIC.hex()})", 0)
    if major != spec.MAJOR:
        raise VersionError(f"format major version {major} is not supported (this reader knows {spec.MAJOR})", 8)
    if hlen < spec.HEADER_MIN or hlen > spec.MAX_HEADER_LENGTH or hlen % 8:
        raise LimitError(f"header_length {hlen} is not a multiple of 8 in [{spec.HEADER_MIN}, "
                         f"{spec.MAX_HEADER_LENGTH}]", 16)
    if hlen > len(buf):
        raise TruncatedError(f"header_length {hlen} but the file has only {len(buf)} bytes", 16)
    # every entry takes at least 8 bytes of the identity block
    if count > spec.MAX_IDENTITY_ENTRIES or count > (hlen - spec.HEADER_MIN) // 8:
        raise LimitError(f"identity_count {count} over the limit {spec.MAX_IDENTITY_ENTRIES} or more than the "
                         f"{(hlen - spec.HEADER_MIN) // 8} entries that fit the header", 20)
    (want,) = struct.unpack_from("<Q", buf, hlen - 8)
    got = xxhash.xxh64_intdigest(bytes(buf[:hlen - 8]))
    if want != got:
        raise ChecksumError(f"header checksum {want:#018x} does not match the bytes ({got:#018x})", hlen - 8)
    # flags are judged once the checksum says they are what the writer wrote
    if flags & ~spec.KNOWN_HEADER_FLAGS:
        raise VersionError(f"unknown header flags {flags & ~spec.KNOWN_HEADER_FLAGS:#x} "
                           f"(this reader knows {spec.KNOWN_HEADER_FLAGS:#x})", 12)
    t = Trace()
    t.major, t.minor, t.flags, t.header_length = major, minor, flags, hlen
    t.identity = _parse_identity(buf, count, hlen)
    return t


def _parse_identity(buf, count, hlen):
    pos, end, ident = spec.HEADER_FIXED, hlen - 8, {}
    for i in range(count):
        if end - pos < 8:
            raise FormatError(f"identity entry {i} header runs past the identity block end {end}", pos)
        klen, vlen = struct.unpack_from("<II", buf, pos)
        if klen > spec.MAX_IDENTITY_KEY or vlen > spec.MAX_IDENTITY_VALUE:
            raise LimitError(f"identity entry {i}: key {klen} / value {vlen} bytes over the limits "
                             f"{spec.MAX_IDENTITY_KEY} / {spec.MAX_IDENTITY_VALUE}", pos)
        size = spec.pad8(8 + klen + vlen)
        if size > end - pos:
            raise FormatError(f"identity entry {i} of {size} bytes runs past the identity block end {end}", pos)
        try:
            key = bytes(buf[pos + 8:pos + 8 + klen]).decode("utf-8")
            value = bytes(buf[pos + 8 + klen:pos + 8 + klen + vlen]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"identity entry {i} is not UTF-8: {e}", pos) from None
        if not key or "\0" in key or "\0" in value:
            raise FormatError(f"identity entry {i} has an empty key or contains a NUL", pos)
        if key in ident:
            raise FormatError(f"identity key {key!r} appears twice", pos)
        ident[key] = value
        pos += size
    if pos != end:
        raise FormatError(f"identity entries end at {pos}, expected exactly at {end}", pos)
    return ident


# ---- chunks (section 3) and records (section 4) ----

def parse_chunk_header(raw, offset, bytes_left, expected_first_seq):
    """Check a 72-byte chunk header; bytes_left is what the file holds after the header (None: stream)."""
    if len(raw) < spec.CHUNK_HEADER_SIZE:
        raise TruncatedError(f"chunk header at offset {offset} is cut after {len(raw)} of "
                             f"{spec.CHUNK_HEADER_SIZE} bytes", offset)
    c = Chunk(offset, raw)
    if c.magic != spec.CHUNK_MAGIC:
        raise FormatError(f"bad chunk magic {c.magic.hex()} at offset {offset} (expected {spec.CHUNK_MAGIC.hex()})",
                          offset)
    got = xxhash.xxh32_intdigest(bytes(raw[:68]))
    if got != c.header_xxh32:
        raise ChecksumError(f"chunk header checksum at offset {offset}: stored {c.header_xxh32:#010x}, "
                            f"computed {got:#010x}", offset)
    if c.codec not in (spec.CODEC_STORED, spec.CODEC_ZSTD):
        raise FormatError(f"chunk at offset {offset}: unknown codec {c.codec}", offset)
    if c.header_size != spec.CHUNK_HEADER_SIZE:
        raise FormatError(f"chunk at offset {offset}: header_size {c.header_size}, expected "
                          f"{spec.CHUNK_HEADER_SIZE}", offset)
    if c.compressed_length > spec.MAX_CHUNK_PAYLOAD:
        raise LimitError(f"chunk at offset {offset}: compressed_length {c.compressed_length} over the limit "
                         f"{spec.MAX_CHUNK_PAYLOAD}", offset)
    if not spec.MIN_CHUNK_RECORDS <= c.uncompressed_length <= spec.MAX_CHUNK_RECORDS:
        raise LimitError(f"chunk at offset {offset}: uncompressed_length {c.uncompressed_length} outside "
                         f"[{spec.MIN_CHUNK_RECORDS}, {spec.MAX_CHUNK_RECORDS}]", offset)
    if c.codec == spec.CODEC_STORED and c.compressed_length != c.uncompressed_length:
        raise FormatError(f"stored chunk at offset {offset}: compressed_length {c.compressed_length} != "
                          f"uncompressed_length {c.uncompressed_length}", offset)
    if bytes_left is not None and c.compressed_length > bytes_left:
        raise TruncatedError(f"chunk at offset {offset}: payload of {c.compressed_length} bytes but only "
                             f"{bytes_left} left in the file", offset)
    if c.record_count < 1:
        raise FormatError(f"chunk at offset {offset}: record_count 0", offset)
    if c.first_seq != expected_first_seq:
        raise SequenceError(f"chunk at offset {offset}: first_seq {c.first_seq}, expected {expected_first_seq}",
                            offset)
    return c


def decode_chunk(c, payload, check_payloads=True):
    """Check the payload of chunk c and split it into records (c.records)."""
    off = c.offset
    got = xxhash.xxh64_intdigest(bytes(payload))
    if got != c.payload_xxh64:
        raise ChecksumError(f"chunk at offset {off}: payload checksum stored {c.payload_xxh64:#018x}, "
                            f"computed {got:#018x}", off)
    data = bytes(payload) if c.codec == spec.CODEC_STORED else _unzstd(payload, c.uncompressed_length, off)
    got = xxhash.xxh64_intdigest(data)
    if got != c.records_xxh64:
        raise ChecksumError(f"chunk at offset {off}: records checksum stored {c.records_xxh64:#018x}, "
                            f"computed {got:#018x}", off)
    c.records = _split_records(c, data, check_payloads)
    return c.records


def _unzstd(payload, want, off):
    d = zstandard.ZstdDecompressor().decompressobj()
    try:
        data = d.decompress(bytes(payload))
    except zstandard.ZstdError as e:
        raise FormatError(f"chunk at offset {off}: zstd frame does not decompress: {e}", off) from None
    if not d.eof:
        raise FormatError(f"chunk at offset {off}: zstd frame is incomplete", off)
    if d.unused_data:
        raise FormatError(f"chunk at offset {off}: {len(d.unused_data)} bytes after the zstd frame", off)
    if len(data) != want:
        raise FormatError(f"chunk at offset {off}: decompressed to {len(data)} bytes, header says {want}", off)
    return data


def _split_records(c, data, check_payloads):
    off, pos, recs, submits = c.offset, 0, [], 0
    while pos < len(data):
        if len(data) - pos < spec.RECORD_HEADER_SIZE:
            raise FormatError(f"chunk at offset {off}: record header at record byte {pos} cut after "
                              f"{len(data) - pos} bytes", off)
        rtype, rflags, plen, seq, ts = struct.unpack_from("<HHIQQ", data, pos)
        expect = c.first_seq + len(recs)
        if rtype in spec.INVALID_TYPES:
            raise FormatError(f"chunk at offset {off}: record seq {seq} at record byte {pos} has invalid type "
                              f"{rtype:#06x}", off)
        if plen > spec.MAX_RECORD_PAYLOAD:
            raise LimitError(f"chunk at offset {off}: record at record byte {pos}: payload_length {plen} over "
                             f"the limit {spec.MAX_RECORD_PAYLOAD}", off)
        size = spec.RECORD_HEADER_SIZE + spec.pad8(plen)
        if size > len(data) - pos:
            raise FormatError(f"chunk at offset {off}: record at record byte {pos} ({size} bytes) runs past the "
                              f"chunk's {len(data)} record bytes", off)
        if seq != expect:
            raise SequenceError(f"chunk at offset {off}: record seq {seq}, expected {expect}", off)
        payload = data[pos + spec.RECORD_HEADER_SIZE:pos + spec.RECORD_HEADER_SIZE + plen]
        rec = Record(rtype, rflags, plen, seq, ts, payload, off)
        if check_payloads:
            try:
                rec.fields
            except VgtError as e:
                raise FormatError(f"chunk at offset {off}: {e}", off) from None
        submits += rtype == SUBMIT
        recs.append(rec)
        pos += size
    if len(recs) != c.record_count:
        raise FormatError(f"chunk at offset {off}: {len(recs)} records, header says {c.record_count}", off)
    if submits != c.submit_count:
        raise FormatError(f"chunk at offset {off}: {submits} GPFIFO_SUBMIT records, header says "
                          f"{c.submit_count}", off)
    if recs[0].ts != c.first_ts or recs[-1].ts != c.last_ts:
        raise FormatError(f"chunk at offset {off}: timestamps {recs[0].ts}..{recs[-1].ts}, header says "
                          f"{c.first_ts}..{c.last_ts}", off)
    return recs


# ---- trailer (section 6) ----

def parse_trailer(buf, file_size, min_offset):
    """(index entries, footer) when the last 32 bytes are a valid footer pointing at a valid index; None
    when there is no footer magic (no trailer: scan). A footer or index that is present but broken
    raises, naming its offset."""
    if file_size - min_offset < spec.FOOTER_SIZE + 16:
        return None
    foff = file_size - spec.FOOTER_SIZE
    index_offset, record_count, chunk_count, fsum, magic = struct.unpack_from(FOOTER_FMT, buf, foff)
    if magic != spec.FOOTER_MAGIC:
        return None
    got = xxhash.xxh32_intdigest(bytes(buf[foff:foff + 20]))
    if got != fsum:
        raise ChecksumError(f"footer checksum at offset {foff}: stored {fsum:#010x}, computed {got:#010x}", foff)
    if index_offset < min_offset or index_offset > foff - 16:
        raise FormatError(f"footer at offset {foff}: index_offset {index_offset} outside [{min_offset}, "
                          f"{foff - 16}]", foff)
    imagic, n = struct.unpack_from("<4sI", buf, index_offset)
    if imagic != spec.INDEX_MAGIC:
        raise FormatError(f"bad index magic {imagic.hex()} at offset {index_offset}", index_offset)
    if n > file_size // spec.INDEX_ENTRY_DIVISOR:
        raise LimitError(f"index at offset {index_offset}: {n} entries over the limit "
                         f"{file_size // spec.INDEX_ENTRY_DIVISOR}", index_offset)
    size = 8 + spec.INDEX_ENTRY_SIZE * n + 8
    if index_offset + size != foff:
        raise FormatError(f"index at offset {index_offset}: {n} entries end at {index_offset + size}, the footer "
                          f"starts at {foff}", index_offset)
    (want,) = struct.unpack_from("<Q", buf, index_offset + size - 8)
    got = xxhash.xxh64_intdigest(bytes(buf[index_offset:index_offset + size - 8]))
    if got != want:
        raise ChecksumError(f"index checksum at offset {index_offset}: stored {want:#018x}, computed {got:#018x}",
                            index_offset)
    names = ("offset", "first_seq", "first_ts", "last_ts", "first_submit", "record_count", "submit_count")
    entries = [dict(zip(names, struct.unpack_from(INDEX_ENTRY_FMT, buf, index_offset + 8 + 48 * i)))
               for i in range(n)]
    footer = {"offset": foff, "index_offset": index_offset, "record_count": record_count,
              "chunk_count": chunk_count}
    return entries, footer


def check_index(t):
    """The index and footer MUST agree with the chunks (section 6)."""
    foff, ioff = t.footer["offset"], t.footer["index_offset"]
    if len(t.index) != len(t.chunks):
        raise FormatError(f"index at offset {ioff}: {len(t.index)} entries for {len(t.chunks)} chunks", ioff)
    for i, (e, c) in enumerate(zip(t.index, t.chunks)):
        have = {"offset": c.offset, "first_seq": c.first_seq, "first_ts": c.first_ts, "last_ts": c.last_ts,
                "first_submit": c.first_submit, "record_count": c.record_count, "submit_count": c.submit_count}
        for k, v in have.items():
            if e[k] != v:
                raise FormatError(f"index at offset {ioff}: entry {i} {k} {e[k]}, the chunk at offset {c.offset} "
                                  f"says {v}", ioff)
    if t.footer["record_count"] != len(t.records) or t.footer["chunk_count"] != len(t.chunks):
        raise FormatError(f"footer at offset {foff}: {t.footer['record_count']} records in "
                          f"{t.footer['chunk_count']} chunks, the file has {len(t.records)} in {len(t.chunks)}", foff)


# ---- whole files ----

def _load(src):
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src)
    with open(src, "rb") as f:
        return f.read()


def _read_chunks(t, buf, end, check_payloads, trailer_error=None):
    """Chunks from the end of the header up to `end` (the index offset, or the end of the file). Problems
    are raised in file order: an index block met by the scan raises the trailer's own problem."""
    pos, seq, submits = t.header_length, 0, 0
    while pos < end:
        magic = buf[pos:pos + 4]
        if magic == spec.INDEX_MAGIC and t.index is None:
            raise trailer_error or FormatError(f"index block at offset {pos} without a valid footer", pos)
        c = parse_chunk_header(buf[pos:pos + spec.CHUNK_HEADER_SIZE], pos,
                               end - pos - spec.CHUNK_HEADER_SIZE, seq)
        decode_chunk(c, buf[pos + spec.CHUNK_HEADER_SIZE:c.end], check_payloads)
        c.first_submit = submits
        submits += c.submit_count
        seq += c.record_count
        t.chunks.append(c)
        t.records.extend(c.records)
        pos = c.end
        t.chunks_end = pos


def read_trace(src, check_payloads=True):
    """Read a whole file (path or bytes) with every check of the spec; raise VgtError at the first problem
    in file order (a broken trailer is reported after the chunks before it are checked)."""
    buf = _load(src)
    t = parse_header(buf)
    t.file_size = len(buf)
    t.chunks_end = t.header_length
    try:
        trailer, trailer_error = parse_trailer(buf, len(buf), t.header_length), None
    except VgtError as e:
        trailer, trailer_error = None, e
    end = len(buf)
    if trailer:
        t.index, t.footer = trailer
        end = t.footer["index_offset"]
    _read_chunks(t, buf, end, check_payloads, trailer_error)
    if trailer_error:
        raise trailer_error
    if trailer:
        check_index(t)
    _expand(t)
    return t


def _expand(t):
    """1.3: MEMORY_CAS records become the MEMORY records they stand for (t.chunks keep them as stored)."""
    if t.flags & spec.HEADER_FLAG_MEMORY_CAS:
        t.records = list(memcas.expand(t.records, Record))


def read_prefix(src):
    """(Trace, error): the header and every whole chunk that passes every check, in order, up to the first
    problem (error is None when there is none). What `vgt verify --salvage` must keep."""
    buf = _load(src)
    t = parse_header(buf)
    t.file_size = len(buf)
    t.chunks_end = t.header_length
    try:
        trailer = parse_trailer(buf, len(buf), t.header_length)
    except VgtError:
        trailer = None
    end = trailer[1]["index_offset"] if trailer else len(buf)
    if trailer:
        t.index, t.footer = trailer
    try:
        _read_chunks(t, buf, end, True)
        if trailer:
            check_index(t)
    except VgtError as e:
        _expand(t)
        return t, e
    _expand(t)
    return t, None


def find_index_offset(buf):
    """Index offset named by a valid footer, or None."""
    try:
        tr = parse_trailer(buf, len(buf), 0)
    except VgtError:
        return None
    return tr[1]["index_offset"] if tr else None


def read_chunk_at(src, offset, expected_first_seq):
    """Random access through the index: read and check the chunk whose header is at `offset`."""
    buf = _load(src)
    c = parse_chunk_header(buf[offset:offset + spec.CHUNK_HEADER_SIZE], offset,
                           len(buf) - offset - spec.CHUNK_HEADER_SIZE, expected_first_seq)
    decode_chunk(c, buf[offset + spec.CHUNK_HEADER_SIZE:c.end])
    return c


def records_from_seq(src, seq):
    """Records from sequence number `seq` to the end, starting at the chunk the index names."""
    t = read_trace(src, check_payloads=False) if not isinstance(src, Trace) else src
    if t.index is None:
        raise FormatError("the trace has no index")
    if t.flags & spec.HEADER_FLAG_MEMORY_CAS:
        # 1.3 (section 5, MEMORY_CAS): after a seek the memory stream before the target must be read first,
        # so the records come from the whole trace, expanded
        return [r for r in t.records if r.seq >= seq]
    starts = [e for e in t.index if e["first_seq"] <= seq]
    if not starts:
        return []
    e = starts[-1]
    out = []
    buf = _load(src)
    for entry in t.index[t.index.index(e):]:
        c = read_chunk_at(buf, entry["offset"], entry["first_seq"])
        out.extend(r for r in c.records if r.seq >= seq)
    return out


# ---- streams (section 7) ----

def _read_exact(f, n):
    parts, got = [], 0
    while got < n:
        b = f.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def iter_stream(f):
    """Yield the header (a Trace without records) and then each record of a stream (a file object opened
    for binary reading) as soon as its chunk has arrived. Ends at the trailer or at the end of the stream;
    a chunk cut by the end of the stream raises TruncatedError."""
    fixed = _read_exact(f, spec.HEADER_FIXED)
    if len(fixed) < spec.HEADER_FIXED:
        raise TruncatedError(f"stream ends after {len(fixed)} bytes of the header", 0)
    (hlen,) = struct.unpack_from("<I", fixed, 16)
    if hlen > spec.MAX_HEADER_LENGTH or hlen < spec.HEADER_MIN:
        parse_header(fixed)  # raises the magic, version or limit error in the spec's order
        raise LimitError(f"header_length {hlen} outside [{spec.HEADER_MIN}, {spec.MAX_HEADER_LENGTH}]", 16)
    buf = fixed + _read_exact(f, hlen - spec.HEADER_FIXED)
    t = parse_header(buf)
    yield t
    if t.flags & spec.HEADER_FLAG_MEMORY_CAS:
        yield from memcas.expand(_stream_records(f, hlen), Record)
    else:
        yield from _stream_records(f, hlen)


def _stream_records(f, hlen):
    pos, seq = hlen, 0
    while True:
        magic = _read_exact(f, 4)
        if not magic or magic == spec.INDEX_MAGIC:
            return
        raw = magic + _read_exact(f, spec.CHUNK_HEADER_SIZE - 4)
        c = parse_chunk_header(raw, pos, None, seq)
        payload = _read_exact(f, c.compressed_length)
        if len(payload) < c.compressed_length:
            raise TruncatedError(f"stream ends inside the chunk at offset {pos}", pos)
        for r in decode_chunk(c, payload):
            yield r
        seq += c.record_count
        pos = c.end


def read_stream_bytes(data):
    """Convenience: (Trace header, [records]) of a stream held in bytes."""
    it = iter_stream(io.BytesIO(data))
    t = next(it)
    t.records = list(it)
    return t
