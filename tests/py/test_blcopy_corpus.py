"""The copy engine's block-linear layout, from the hardware: corpus/vk_blcopy.vgt.

vk_blcopy (corpus/workloads/vk_blcopy.c) wrote known values through the H200's copy engine into two
optimal-tiling images (2-D with 2 layers, 200x50 RGBA8; 3-D 40x24x5 R32), then copied each image's memory
whole, as raw bytes, into a host buffer, and two rectangles back out of the images. The capture recorded that
buffer as observed memory. Here:
  - the observed buffer is what the program hashed (its RESULT line), and the rectangles hold the values it
    wrote: the record is the hardware's output;
  - the first GOB of image A, read with the GOB swizzle written out below (64 bytes by 8 rows), holds the
    first 16 texels of its first 8 rows: the bytes are block-linear, not pitch;
  - sim, replaying the trace, produces every byte of it (the copy engine's pitch to block-linear and
    block-linear to pitch, with a partial GOB at the right edge, partial blocks, layers and depth slices);
  - one byte changed in the record's raw block-linear part is found by the check, at its address: the
    comparison covers those bytes.
"""
import json
import re
import struct
from pathlib import Path

import pytest

from conftest import fnv1a64
import vgtrace
from vgtrace.writer import rewrite_trace

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "corpus" / "vk_blcopy.vgt"
AW, AH = 200, 50                       # image A: texels per row, rows (layer 0 first)
RA = (33, 9, 64, 24)                   # A's read-back rectangle (layer 1): x, y, width, height
RB = (3, 2, 1, 20, 10, 3)              # B's: x, y, z, width, height, depth
BW, BH = 40, 24
P = (17, 5, 40, 20)                    # the rectangle of A's layer 1 written a second time


def texel(salt, i):
    """The workload's value for texel i of an upload (vk_blcopy.c texel())."""
    v = (((i + 1) * 2654435761) & 0xFFFFFFFF) ^ salt
    v ^= v >> 15
    return (v * 2246822519) & 0xFFFFFFFF


def a_value(x, y, layer):
    px, py, pw, ph = P
    if layer == 1 and px <= x < px + pw and py <= y < py + ph:
        return texel(0x5EED0003, (y - py) * pw + (x - px))
    return texel(0x5EED0001, (layer * AH + y) * AW + x)


def gob_offset(xb, y):
    """Byte (xb, y) of a 64-byte by 8-row GOB: the offset's bits, low to high, are x0 x1 x2 x3 y0 y1 x4 y2 x5
    (16-byte rows in 32-byte sectors of two rows; the Tegra X1 TRM's GOB, as Mesa src/nouveau/nil uses it)."""
    return (xb & 15) | (y & 3) << 4 | (xb >> 4 & 1) << 6 | (y >> 2 & 1) << 7 | (xb >> 5 & 1) << 8


@pytest.fixture(scope="module")
def blcopy():
    """(the RESULT fields, the observed record holding the read-back buffer)."""
    manifest = json.loads((REPO / "corpus" / "manifest.json").read_text())
    entry = next(e for e in manifest["traces"] if e["workload"] == "vk_blcopy")
    assert entry["result_unchanged"], entry
    res = dict(re.findall(r"(\w+)=(\w+)", entry["result_captured"]))
    a, b = int(res["a_bytes"]), int(res["b_bytes"])
    need = a + b + (RA[2] * RA[3] + RB[3] * RB[4] * RB[5]) * 4
    observed = [r for r in vgtrace.read_trace(str(TRACE)).records
                if r.name == "MEMORY" and r.fields["reason"] == 2 and r.fields["length"] >= need]
    assert len(observed) == 1, [r.seq for r in observed]
    return res, observed[0]


def test_the_record_is_what_the_program_read(blcopy):
    res, rec = blcopy
    data = rec.fields["data"]
    a, b = int(res["a_bytes"]), int(res["b_bytes"])
    assert "%016x" % fnv1a64(data[:a]) == res["raw_a"]
    assert "%016x" % fnv1a64(data[a:a + b]) == res["raw_b"]
    rect = data[a + b:a + b + (RA[2] * RA[3] + RB[3] * RB[4] * RB[5]) * 4]
    assert "%016x" % fnv1a64(rect) == res["rect"]
    x0, y0, w, h = RA
    got = struct.unpack_from(f"<{w * h}I", rect)
    assert list(got) == [a_value(x0 + i % w, y0 + i // w, 1) for i in range(w * h)]
    bx, by, bz, bw, bh, bd = RB
    got = struct.unpack_from(f"<{bw * bh * bd}I", rect, w * h * 4)
    want = [texel(0x5EED0002, ((bz + z) * BH + by + y) * BW + bx + x)
            for z in range(bd) for y in range(bh) for x in range(bw)]
    assert list(got) == want


def test_the_first_gob_is_block_linear(blcopy):
    res, rec = blcopy
    data = rec.fields["data"]
    for y in range(8):
        for xb in range(64):
            word = struct.pack("<I", a_value(xb // 4, y, 0))
            assert data[gob_offset(xb, y)] == word[xb % 4], (xb, y)


def replay_sim(vgt, trace):
    r = vgt("replay", trace, "--backend", "sim", "--check")
    return r, r.stdout + r.stderr


def test_sim_produces_every_byte(vgt, blcopy):
    res, rec = blcopy
    r, out = replay_sim(vgt, TRACE)
    assert r.returncode == 0, out[-3000:]
    assert "MISMATCH" not in out
    assert not re.search(r"record seq %d\b.*not comparable" % rec.seq, out)
    compared = int(re.search(r"checks: \d+ passed, 0 failed, \d+ not comparable .*?; (\d+) bytes compared", out).group(1))
    written = int(res["a_bytes"]) + int(res["b_bytes"]) + (RA[2] * RA[3] + RB[3] * RB[4] * RB[5]) * 4
    assert compared >= written, out[-2000:]


def test_one_changed_byte_is_found(vgt, blcopy, tmp_path):
    res, rec = blcopy
    off = 1234                                           # inside image A's raw bytes
    assert off < int(res["a_bytes"])
    bad = tmp_path / "vk_blcopy_flipped.vgt"

    def flip(r):
        if r.seq != rec.seq:
            return None
        data = bytearray(r.fields["data"])
        data[off] ^= 0x01
        return dict(r.fields, data=bytes(data))

    rewrite_trace(TRACE, bad, flip)
    r, out = replay_sim(vgt, bad)
    assert r.returncode == 1, out[-3000:]
    mism = re.findall(r"MISMATCH .*MEMORY observed record seq (\d+) at VA (0x[0-9a-f]+) \(\d+ bytes\): "
                      r"(\d+) of \d+ compared bytes differ; first at VA (0x[0-9a-f]+)", out)
    assert mism == [(str(rec.seq), hex(rec.fields["gpu_va"]), "1", hex(rec.fields["gpu_va"] + off))], out[-3000:]
