"""MEMORY_CAS (format 1.3): `vgt synth --shape torch|triton --memory-cas` writes repeated memory contents as
copies and patches. The Python twin, written from the spec, must expand them into exactly the MEMORY
records of the same trace written without (record for record), the trace must verify and be at most half
the size, and `vgt replay --backend sim --check` must say the same of both."""
import struct

import pytest

from vgtrace import reader, spec

MEMORY_CAS = spec.BY_NAME["MEMORY_CAS"].code


def raw_types(path):
    """Record types as stored in the chunks (the twin keeps MEMORY_CAS there)."""
    t = reader.read_trace(path)
    return t, {r.type for c in t.chunks for r in c.records}


@pytest.mark.parametrize("shape", ["torch", "triton"])
def test_copies_expand_to_the_same_records(vgt, tmp_path, shape):
    plain, cas = tmp_path / "plain.vgt", tmp_path / "cas.vgt"
    vgt("synth", "-o", plain, "--shape", shape, "--submits", "400", check=0)
    vgt("synth", "-o", cas, "--shape", shape, "--submits", "400", "--memory-cas", check=0)
    a, types_a = raw_types(plain)
    b, types_b = raw_types(cas)
    assert MEMORY_CAS not in types_a and MEMORY_CAS in types_b
    assert (a.minor, a.flags, b.minor, b.flags) == (spec.MINOR, 0, spec.MINOR, spec.HEADER_FLAG_MEMORY_CAS)
    assert len(a.records) == len(b.records)
    for x, y in zip(a.records, b.records):
        assert (x.type, x.flags, x.seq, x.ts, bytes(x.payload)) == (y.type, y.flags, y.seq, y.ts, bytes(y.payload)), x
    mid = len(a.records) // 2   # a seek: the memory stream before it is read first
    assert [bytes(r.payload) for r in reader.records_from_seq(cas, mid)] == [bytes(r.payload) for r in a.records[mid:]]
    assert "ok" in vgt("verify", cas, check=0).stdout
    assert cas.stat().st_size * 2 <= plain.stat().st_size
    r1 = vgt("replay", plain, "--backend", "sim", "--check", check=0).stdout
    r2 = vgt("replay", cas, "--backend", "sim", "--check", check=0).stdout
    keep = lambda out, p: [l.replace(str(p), "T") for l in out.splitlines() if "timing:" not in l]
    assert keep(r1, plain) == keep(r2, cas)


def test_a_copy_outside_the_window_is_malformed(vgt, tmp_path):
    """The twin refuses a COPY that reaches before the start of the memory stream."""
    cas = tmp_path / "cas.vgt"
    vgt("synth", "-o", cas, "--shape", "triton", "--submits", "40", "--memory-cas", "--stored", check=0)
    t = reader.read_trace(cas)
    rec = next(r for c in t.chunks for r in c.records if r.type == MEMORY_CAS and struct.unpack_from("<I", r.payload, 24)[0])
    from vgtrace import memcas
    from vgtrace.errors import FormatError
    payload = bytearray(rec.payload)
    kinds = [struct.unpack_from("<IIQ", payload, 40 + 16 * i) for i in range(struct.unpack_from("<I", payload, 24)[0])]
    i = next(i for i, k in enumerate(kinds) if k[0] == spec.MEMCAS_COPY)
    struct.pack_into("<Q", payload, 40 + 16 * i + 8, 1 << 40)
    with pytest.raises(FormatError, match="outside the window"):
        memcas.expand_payload(memcas.Window(), bytes(payload), "test")
