"""Systematic corruption: `vgt verify` must catch every damaged chunk-header field, payload byte, record
header, index and footer byte and every truncation inside a structure, exit 1 and name the right byte
offset (the chunk header's for anything in a chunk, the trailer's for the trailer); `vgt verify --salvage
OUT` must write a valid trace that keeps every complete record before the problem, checked by the Python
twin. A cut exactly between chunks is a valid trace without trailer (a killed crash-safe capture).
Also: unknown header flags and a newer major are rejected with a clear message; unknown record types are
skipped, unknown record and chunk flags ignored, older and newer minors accepted.

Chunk-layout facts come from docs/trace-format.md sections 3-6 (vgtrace.spec)."""
import io
import re
import struct

import pytest
import xxhash

import vgtrace
from vgtrace import spec

# chunk header fields (section 3): (name, offset, size)
CHUNK_FIELDS = [("magic", 0, 4), ("codec", 4, 2), ("header_size", 6, 2), ("compressed_length", 8, 4),
                ("uncompressed_length", 12, 4), ("first_seq", 16, 8), ("record_count", 24, 4),
                ("submit_count", 28, 4), ("first_ts", 32, 8), ("last_ts", 40, 8), ("payload_xxh64", 48, 8),
                ("records_xxh64", 56, 8), ("flags", 64, 4), ("header_xxh32", 68, 4)]
assert sum(s for _, _, s in CHUNK_FIELDS) == spec.CHUNK_HEADER_SIZE


@pytest.fixture(scope="module")
def base(synth):
    """A small all-types trace in many chunks, and its records as the Python twin reads them."""
    path = synth("corrupt-base", "--shape", "all-types", "--submits", "6", "--channels", "1", "--memory-pages", "8",
                 "--chunk-size", "8192", "--seed", "21")
    data = path.read_bytes()
    t = vgtrace.read_trace(data)
    assert len(t.chunks) >= 4 and t.has_index
    return data, t


def offsets_named(text):
    """Every "offset N" (decimal or 0x hex) in a message, in order."""
    return [int(m, 0) for m in re.findall(r"offset (0x[0-9a-fA-F]+|[0-9]+)", text)]


def names_offset(text, off):
    return off in offsets_named(text)


class Checker:
    def __init__(self, vgt, tmp_path, original):
        self.vgt, self.tmp, self.orig = vgt, tmp_path, original
        self.n = 0

    def problem(self, data, offsets, keep, what):
        """verify exits 1 naming one of `offsets` (a list or a range; a list of one: as the first offset of
        its message);
        salvage keeps at least `keep` records, all equal to the original's first records."""
        self.n += 1
        bad = self.tmp / f"bad{self.n}.vgt"
        bad.write_bytes(data)
        r = self.vgt("verify", bad)
        msg = r.stdout + r.stderr
        assert r.returncode == 1, f"{what}: vgt verify exited {r.returncode}, expected 1: {msg}"
        named = offsets_named(msg)
        if isinstance(offsets, list) and len(offsets) == 1:
            assert named[:1] == offsets, f"{what}: the problem is at offset {offsets[0]}, vgt says {named}: {msg}"
        assert set(named) & set(offsets), f"{what}: message names none of offsets {offsets}: {msg}"
        out = self.tmp / f"salvaged{self.n}.vgt"
        r = self.vgt("verify", bad, "--salvage", out)
        assert r.returncode in (0, 1), f"{what}: vgt verify --salvage exited {r.returncode}: {r.stderr}"
        try:
            s = vgtrace.read_trace(out)
        except vgtrace.VgtError as e:
            pytest.fail(f"{what}: the salvaged trace is not valid: {e}")
        assert keep <= len(s.records) <= len(self.orig.records), \
            f"{what}: salvage kept {len(s.records)} records, expected at least {keep}"
        for a, b in zip(s.records, self.orig.records):
            assert (a.seq, a.type, a.flags, a.ts, a.payload) == (b.seq, b.type, b.flags, b.ts, b.payload), \
                f"{what}: salvaged record {a.seq} differs from the original"
        bad.unlink()
        out.unlink()

    def fine(self, data, what):
        self.n += 1
        p = self.tmp / f"ok{self.n}.vgt"
        p.write_bytes(data)
        r = self.vgt("verify", p)
        assert r.returncode == 0, f"{what}: vgt verify exited {r.returncode}: {r.stdout}{r.stderr}"
        return p


@pytest.fixture
def check(vgt, tmp_path, base):
    return Checker(vgt, tmp_path, base[1])


def flip(data, pos, mask=0xFF):
    b = bytearray(data)
    b[pos] ^= mask
    return bytes(b)


def sample_chunks(t):
    return sorted({0, len(t.chunks) // 2, len(t.chunks) - 1})


@pytest.mark.parametrize("field", [f[0] for f in CHUNK_FIELDS])
def test_every_chunk_header_field(base, check, field):
    data, t = base
    _, off, size = next(f for f in CHUNK_FIELDS if f[0] == field)
    for k in sample_chunks(t):
        c = t.chunks[k]
        for i in range(size):
            for mask in (0x01, 0x80):
                check.problem(flip(data, c.offset + off + i, mask), [c.offset], c.first_seq,
                              f"chunk {k} at {c.offset}: {field} byte {i} ^ {mask:#x}")


def test_payload_bytes(base, check):
    data, t = base
    for k, c in enumerate(t.chunks):
        start, n = c.offset + spec.CHUNK_HEADER_SIZE, c.compressed_length
        for pos in sorted({start, start + 1, start + n // 3, start + n // 2, start + n - 2, start + n - 1}):
            check.problem(flip(data, pos, 0x10), [c.offset], c.first_seq, f"chunk {k}: payload byte {pos - start}")


def test_index_and_footer_bytes(base, check):
    data, t = base
    ioff, foff = t.footer["index_offset"], t.footer["offset"]
    n = len(t.index)
    positions = list(range(ioff, ioff + 8))                                    # magic, entry_count
    for e in (0, n - 1):                                                       # first and last entry, every byte
        positions += range(ioff + 8 + 48 * e, ioff + 8 + 48 * (e + 1))
    positions += range(ioff + 8 + 48 * n, ioff + 16 + 48 * n)                  # index checksum
    positions += range(foff, foff + spec.FOOTER_SIZE)                          # the footer, every byte
    for pos in positions:
        check.problem(flip(data, pos, 0x04), range(ioff, len(data)), len(t.records), f"trailer byte at {pos}")


def test_truncation_at_a_chunk_boundary_is_a_trace_without_trailer(base, vgt, tmp_path):
    """A file cut exactly between chunks is what a crash-safe capture killed after a flush leaves: valid
    (spec sections 1 and 6: complete up to its last whole chunk, read by a linear scan). verify says so,
    with the number of records it holds, and the Python twin reads the same prefix."""
    data, t = base
    p = tmp_path / "cut.vgt"
    for c in t.chunks + [None]:
        cut = c.offset if c else t.footer["index_offset"]
        p.write_bytes(data[:cut])
        r = vgt("verify", p)
        assert r.returncode == 0 and "no trailer" in r.stdout, f"cut at {cut}: {r.stdout}{r.stderr}"
        want = c.first_seq if c else len(t.records)
        assert re.search(rf"\b{want} records\b", r.stdout), f"cut at {cut}: expected {want} records: {r.stdout}"
        assert [x.payload for x in vgtrace.read_trace(p).records] == [x.payload for x in t.records[:want]]


def test_truncation(base, check):
    data, t = base
    ioff = t.footer["index_offset"]
    for k, c in enumerate(t.chunks):
        for cut in (c.offset + 1, c.offset + 40, c.offset + spec.CHUNK_HEADER_SIZE - 1,
                    c.offset + spec.CHUNK_HEADER_SIZE, c.offset + spec.CHUNK_HEADER_SIZE + c.compressed_length // 2,
                    c.end - 1):
            check.problem(data[:cut], [c.offset], c.first_seq, f"truncated at {cut} (chunk {k} at {c.offset})")
    for cut in (ioff + 3, ioff + 30, len(data) - spec.FOOTER_SIZE, len(data) - 1):
        check.problem(data[:cut], range(ioff, cut + 1), len(t.records), f"truncated at {cut} (trailer)")


def test_truncation_inside_the_file_header(base, vgt, tmp_path):
    data, t = base
    for cut in (0, 7, 31, t.header_length - 1):
        p = tmp_path / "h.vgt"
        p.write_bytes(data[:cut])
        r = vgt("verify", p)
        assert r.returncode in (1, 2) and r.stderr.strip(), f"cut at {cut}: exit {r.returncode}"


# ---- structural problems behind valid checksums, built with the Python twin ----

def chunk(records, first_seq, codec=spec.CODEC_ZSTD, **override):
    """A chunk of encoded records with correct checksums, then header fields overridden (the header
    checksum recomputed) so that only the structural check can catch them."""
    raw = b"".join(records)
    ts = [struct.unpack_from("<Q", r, 16)[0] for r in records]
    subs = sum(1 for r in records if struct.unpack_from("<H", r)[0] == 0x23)
    b = bytearray(vgtrace.encode_chunk(raw, first_seq, len(records), subs, ts[0] if ts else 0, ts[-1] if ts else 0,
                                     codec, 3))
    for name, value in override.items():
        _, off, size = next(f for f in CHUNK_FIELDS if f[0] == name)
        b[off:off + size] = value.to_bytes(size, "little")
    b[68:72] = struct.pack("<I", xxhash.xxh32_intdigest(bytes(b[:68])))
    return bytes(b)


def marker(seq, ts=None, text=b"note", rtype=0x40, payload=None):
    p = payload if payload is not None else vgtrace.encode_payload(0x40, {"text": text})
    return vgtrace.encode_record(rtype, p, seq, 1000 + seq if ts is None else ts)


STRUCTURAL = {
    "record seq gap": lambda: [chunk([marker(3), marker(5)], 3)],
    "record type 0": lambda: [chunk([marker(3), marker(4, rtype=0)], 3)],
    "record type 0xFFFF": lambda: [chunk([marker(3, rtype=0xFFFF)], 3)],
    "payload_length past the chunk": lambda: [chunk([marker(3)[:4] + struct.pack("<I", 4000) + marker(3)[8:]], 3)],
    "record_count too high": lambda: [chunk([marker(3), marker(4)], 3, record_count=3)],
    "record_count too low": lambda: [chunk([marker(3), marker(4)], 3, record_count=1)],
    "submit_count wrong": lambda: [chunk([marker(3)], 3, submit_count=1)],
    "first_ts wrong": lambda: [chunk([marker(3), marker(4)], 3, first_ts=7)],
    "last_ts wrong": lambda: [chunk([marker(3), marker(4)], 3, last_ts=7)],
    "first_seq discontinuous": lambda: [chunk([marker(4)], 4)],
    "malformed payload (short fixed part)": lambda: [chunk([marker(3, rtype=0x11, payload=b"\0" * 12)], 3)],
    "blob past the payload": lambda: [chunk([marker(3, payload=struct.pack("<II", 99, 0) + b"abc")], 3)],
    "stored lengths differ": lambda: [chunk([marker(3)], 3, codec=spec.CODEC_STORED, uncompressed_length=24)],
    "uncompressed_length too small": lambda: [chunk([marker(3)], 3, uncompressed_length=8)],
    "uncompressed_length over 64 MiB": lambda: [chunk([marker(3)], 3, uncompressed_length=(64 << 20) + 8)],
    "compressed_length past the file": lambda: [chunk([marker(3)], 3, compressed_length=1 << 20)],
    "compressed_length over 68 MiB": lambda: [chunk([marker(3)], 3, compressed_length=(68 << 20) + 1)],
    "unknown codec": lambda: [chunk([marker(3)], 3, codec=7)],
    "header_size not 72": lambda: [chunk([marker(3)], 3, header_size=80)],
    "record_count 0": lambda: [chunk([], 3, record_count=0, uncompressed_length=24)],
    "garbage after the chunks": lambda: [b"XXXX" + b"\0" * 68],
    "non-zero record padding": lambda: [chunk([marker(3)[:-4] + b"\xaa\xaa\xaa\xaa", marker(4)], 3)],
}


@pytest.mark.parametrize("case", sorted(STRUCTURAL))
def test_structural_problems(vgt, tmp_path, case):
    good = chunk([marker(0), marker(1), marker(2)], 0)
    head = vgtrace.encode_header([("producer", "vgtpy corrupt test")])
    data = head + good + b"".join(STRUCTURAL[case]())
    bad_at = len(head) + len(good)
    orig = vgtrace.read_trace(head + good)
    Checker(vgt, tmp_path, orig).problem(data, [bad_at], 3, case)


def test_non_zero_padding_is_read_but_reported(vgt, tmp_path):
    """Spec section 1: readers MUST NOT reject non-zero padding; only `vgt verify` reports it."""
    head = vgtrace.encode_header([("producer", "vgtpy corrupt test")])
    p = tmp_path / "pad.vgt"
    p.write_bytes(head + chunk([marker(0)[:-4] + b"\xaa\xaa\xaa\xaa", marker(1)], 0))
    assert len(vgtrace.read_trace(p).records) == 2
    r = vgt("dump", p)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr
    assert vgt("verify", p).returncode == 1


def header_with(entries, count):
    """A file header (section 2) holding raw identity entries [(key bytes, value bytes)] and `count`."""
    body = b""
    for k, v in entries:
        e = struct.pack("<II", len(k), len(v)) + k + v
        body += e + b"\0" * (-len(e) % 8)
    head = struct.pack("<8sHHIIIQ", spec.FILE_MAGIC, 1, 0, 0, 32 + len(body) + 8, count, 0) + body
    return head + struct.pack("<Q", xxhash.xxh64_intdigest(head))


IDENTITY_CASES = {
    "NUL in a key": ([(b"pro\0ducer", b"x")], 1, 32),
    "duplicate key": ([(b"a", b"1"), (b"a", b"2")], 2, 48),
    "count says more entries": ([(b"a", b"1")], 2, 48),
    "count says fewer entries": ([(b"a", b"1"), (b"b", b"2")], 1, 48),
    "key over 255 bytes": ([(b"k" * 256, b"1")], 1, 32),
    "empty key": ([(b"", b"1")], 1, 32),
    "value not UTF-8": ([(b"producer", b"\xff\xfe")], 1, 32),
    "key not UTF-8": ([(b"\xc3\x28", b"x")], 1, 32),
}


@pytest.mark.parametrize("case", sorted(IDENTITY_CASES))
def test_bad_identity_blocks(vgt, tmp_path, case):
    """Section 2: keys unique, UTF-8 without NUL, key at most 255 bytes, entries filling the block exactly.
    Both readers reject each, naming the entry's offset."""
    entries, count, where = IDENTITY_CASES[case]
    data = header_with(entries, count) + chunk([marker(0)], 0)
    with pytest.raises(vgtrace.VgtError) as e:
        vgtrace.read_trace(data)
    assert e.value.offset == where
    p = tmp_path / "ident.vgt"
    p.write_bytes(data)
    r = vgt("verify", p)
    assert r.returncode in (1, 2) and names_offset(r.stderr, where), f"{case}: exit {r.returncode}: {r.stdout}{r.stderr}"


# ---- compatibility (section 8) ----

def one_marker_file(**kw):
    buf = io.BytesIO()
    w = vgtrace.Writer(buf, identity=[("producer", "vgtpy")], **kw)
    w.write("MARKER", {"text": b"compat"}, 5)
    w.close()
    return buf.getvalue()


@pytest.mark.parametrize("flags", [0x2, 0x4, 0x80000000])   # bit 0 is MEMORY_CAS (1.3)
def test_unknown_header_flags_rejected(vgt, tmp_path, flags):
    p = tmp_path / "flags.vgt"
    p.write_bytes(one_marker_file(header_flags=flags))
    for verb in ("verify", "dump", "info"):
        r = vgt(verb, p)
        msg = r.stderr.lower()
        assert r.returncode in (1, 2), f"vgt {verb} accepted header flags {flags:#x}"
        assert "flag" in msg and flags in [int(x, 16) for x in re.findall(r"0x([0-9a-f]+)", msg)], \
            f"vgt {verb}: message does not name the flag bits {flags:#x}: {r.stderr}"


@pytest.mark.parametrize("major", [2, 7, 0xFFFF])
def test_newer_major_rejected(vgt, tmp_path, major):
    p = tmp_path / "major.vgt"
    p.write_bytes(one_marker_file(major=major))
    r = vgt("verify", p)
    assert r.returncode in (1, 2) and "major" in r.stderr.lower() and str(major) in r.stderr, r.stderr


@pytest.mark.parametrize("minor", [0, 1, 2, 9, 0xFFFF])
def test_older_and_newer_minor_accepted(vgt, check, minor):
    p = check.fine(one_marker_file(minor=minor), f"minor {minor}")
    assert "compat" in vgt("dump", p, check=0).stdout


def test_unknown_record_types_skipped_and_flags_ignored(vgt, check):
    buf = io.BytesIO()
    w = vgtrace.Writer(buf, identity=[("producer", "vgtpy")], chunk_flags=0x40000000, chunk_target=200)
    w.write(0x0777, b"future type", 1)
    w.write(0xF123, b"experimental" * 5, 2)
    w.write("MARKER", {"text": b"after the unknown ones"}, 3, 0x8000)
    w.write("RM_FREE", vgtrace.encode_payload(0x11, {"handle": 5}) + b"\1" * 16, 4, 0x0003)
    w.close()
    p = check.fine(buf.getvalue(), "unknown types and flags")
    out = vgt("dump", p, check=0).stdout
    assert "after the unknown ones" in out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 4, out
