"""Mutations of .vgt files for differential tests: random damage, then optionally every checksum made
right again (docs/trace-format.md sections 2, 3, 6) so that the damage reaches the structural checks
behind them. The C fuzzer (tests/fuzz/fuzz_reader.c) does the same fix-up on its inputs."""
import struct

import xxhash
import zstandard

from . import spec


def _fix_chunk(d, pos):
    clen = struct.unpack_from("<I", d, pos + 8)[0]
    if clen > len(d) - pos - spec.CHUNK_HEADER_SIZE:
        return None
    payload = bytes(d[pos + spec.CHUNK_HEADER_SIZE:pos + spec.CHUNK_HEADER_SIZE + clen])
    h = xxhash.xxh64_intdigest(payload)
    d[pos + 48:pos + 56] = struct.pack("<Q", h)
    codec = struct.unpack_from("<H", d, pos + 4)[0]
    if codec == spec.CODEC_STORED:
        d[pos + 56:pos + 64] = struct.pack("<Q", h)
    elif codec == spec.CODEC_ZSTD:
        try:
            out = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
            d[pos + 56:pos + 64] = struct.pack("<Q", xxhash.xxh64_intdigest(out))
        except zstandard.ZstdError:
            pass
    d[pos + 68:pos + 72] = struct.pack("<I", xxhash.xxh32_intdigest(bytes(d[pos:pos + 68])))
    return pos + spec.CHUNK_HEADER_SIZE + clen


def fix_checksums(data):
    """A copy of data with the header, chunk, index and footer checksums recomputed where the structure
    can still be followed."""
    d = bytearray(data)
    if len(d) < spec.HEADER_MIN:
        return bytes(d)
    hlen = struct.unpack_from("<I", d, 16)[0]
    if not spec.HEADER_MIN <= hlen <= len(d):
        return bytes(d)
    d[hlen - 8:hlen] = struct.pack("<Q", xxhash.xxh64_intdigest(bytes(d[:hlen - 8])))
    pos = hlen
    while pos + spec.CHUNK_HEADER_SIZE <= len(d) and d[pos:pos + 4] == spec.CHUNK_MAGIC:
        nxt = _fix_chunk(d, pos)
        if nxt is None:
            break
        pos = nxt
    if d[pos:pos + 4] == spec.INDEX_MAGIC and len(d) - pos >= 16 + spec.FOOTER_SIZE:
        n = struct.unpack_from("<I", d, pos + 4)[0]
        size = 8 + spec.INDEX_ENTRY_SIZE * n
        if pos + size + 8 + spec.FOOTER_SIZE == len(d):
            d[pos + size:pos + size + 8] = struct.pack("<Q", xxhash.xxh64_intdigest(bytes(d[pos:pos + size])))
            f = len(d) - spec.FOOTER_SIZE
            d[f + 20:f + 24] = struct.pack("<I", xxhash.xxh32_intdigest(bytes(d[f:f + 20])))
    return bytes(d)


def mutate(rng, data, start=0):
    """One to two random changes at or after `start`: a byte set, a cut, or a few bytes inserted."""
    d = bytearray(data)
    for _ in range(rng.randint(1, 2)):
        op = rng.random()
        lo = min(start, len(d))
        if op < 0.7 and len(d) > lo:
            d[rng.randrange(lo, len(d))] = rng.choice([0, 1, 0xFF, rng.randrange(256)])
        elif op < 0.85:
            d = d[:rng.randrange(lo, len(d) + 1)]
        else:
            p = rng.randrange(lo, len(d) + 1)
            d[p:p] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 8, 24])))
    return bytes(d)
