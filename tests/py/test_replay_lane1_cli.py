"""`vgt replay` outputs of lane 1 that run without a GPU (sim backend, real corpus traces): render targets
from the decoded SET_COLOR_TARGET_* state (--list-rt, --dump-rt PNG + pixel hash, --expect-hash), the store
census (--census, --census-json), the address plan (--plan) and the usage errors of the new options."""
import json
import struct
import subprocess
import zlib
from pathlib import Path

from conftest import fnv1a64

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"


def replay(vgt_bin, *args, timeout=120):
    return subprocess.run([str(vgt_bin), "replay", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def png_pixels(path):
    d = path.read_bytes()
    assert d[:8] == b"\x89PNG\r\n\x1a\n"
    i, w, h, idat = 8, 0, 0, b""
    while i < len(d):
        n, t = struct.unpack(">I4s", d[i:i + 8])
        body = d[i + 8:i + 8 + n]
        assert zlib.crc32(t + body) == struct.unpack(">I", d[i + 8 + n:i + 12 + n])[0], t
        if t == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
            assert body[8:10] == b"\x08\x06"
        elif t == b"IDAT":
            idat += body
        i += 12 + n
    raw = zlib.decompress(idat)
    row = 1 + 4 * w
    assert len(raw) == row * h and all(raw[y * row] == 0 for y in range(h))
    return w, h, b"".join(raw[y * row + 1:(y + 1) * row] for y in range(h))


def test_list_rt_finds_the_triangle_target(vgt_bin):
    r = replay(vgt_bin, CORPUS / "vk_triangle.vgt", "--backend", "sim", "--quiet", "--list-rt")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "render targets (from the decoded SET_COLOR_TARGET_* methods): 1" in r.stdout
    assert "0: VA 0x6400000 64x64 format 0xd5 (A8B8G8R8) block-linear" in r.stdout


def test_dump_rt_png_and_hash(vgt_bin, tmp_path):
    png = tmp_path / "rt.png"
    r = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--backend", "sim", "--quiet", "--dump-rt", f"0:{png}")
    assert r.returncode == 0, r.stdout + r.stderr
    w, h, px = png_pixels(png)
    assert (w, h) == (64, 64)
    line = next(l for l in r.stdout.splitlines() if l.startswith("render target 0:"))
    assert "VA 0x120000000 64x64 A8R8G8B8 block-linear" in line
    assert f"hash={fnv1a64(px):016x}" in line           # the hash printed is the PNG's pixels
    # sim does not rasterize: a hash that is not the dumped one is a mismatch, exit 1
    r2 = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--backend", "sim", "--quiet", "--dump-rt", f"0:{png}",
                "--expect-hash", "b0a14caaecba137b")
    assert r2.returncode == 1 and "DIFFERS" in r2.stdout
    r3 = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--backend", "sim", "--quiet", "--dump-rt", f"0:{png}",
                "--expect-hash", f"{fnv1a64(px):016x}")
    assert r3.returncode == 0 and "MATCH" in r3.stdout


def test_dump_rt_missing_target(vgt_bin, tmp_path):
    r = replay(vgt_bin, CORPUS / "vadd.vgt", "--backend", "sim", "--quiet", "--dump-rt", f"0:{tmp_path / 'x.png'}")
    assert r.returncode == 1
    assert "bound 0 render target(s)" in r.stderr


def test_census_rows(vgt_bin, tmp_path):
    out = tmp_path / "stores.jsonl"
    r = replay(vgt_bin, CORPUS / "vadd.vgt", "--backend", "sim", "--quiet", "--census", "--census-json", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stores (ranges read back around each submission; changed ranges only)" in r.stdout
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert rows and all(x["bytes_changed"] > 0 and x["pages_written"] >= 1 for x in rows)
    assert {x["what"] for x in rows} <= {"observed", "render-target"}
    assert [x["submission"] for x in rows] == sorted(x["submission"] for x in rows)
    assert "census:" in r.stdout and "rows" in r.stdout


def test_plan(vgt_bin):
    r = replay(vgt_bin, CORPUS / "vadd.vgt", "--backend", "sim", "--quiet", "--plan")
    assert r.returncode == 0
    assert "address plan: 30 mappings at their captured VAs; backend range at 0xf000000000" in r.stdout
    # a requested backend range that the trace's mappings cover is moved, and said so
    r = replay(vgt_bin, CORPUS / "vadd.vgt", "--backend", "sim", "--quiet", "--plan", "--reserved-va", "0x200000000")
    assert "relocation (reserved-moved)" in r.stdout


def test_usage_errors(vgt_bin):
    t = CORPUS / "gl_egl.vgt"
    for args in (["--dump-rt", "x.png"], ["--dump-rt", "99:x.png"], ["--expect-hash", "12"],
                 ["--submit-timeout", "0"], ["--dump-rt", "0:x.png", "--expect-hash", "zz"]):
        r = replay(vgt_bin, t, "--backend", "sim", *args)
        assert r.returncode == 2, (args, r.stderr)
    r = replay(vgt_bin, "--help")
    assert "--dump-rt N:FILE.png" in r.stdout and "--census" in r.stdout


def test_subcontexts_option(vgt_bin):
    """--subcontexts picks how the gpu backend reproduces capture channel groups; the software backend has
    no subcontexts and replays the same either way, and a wrong value is a usage error naming the choices."""
    t = CORPUS / "vk_triangle.vgt"
    outs = []
    for mode in ("captured", "group", "tsg"):
        r = replay(vgt_bin, t, "--backend", "sim", "--check", "--quiet", "--subcontexts", mode)
        assert r.returncode == 0, (mode, r.stdout[-2000:], r.stderr)
        outs.append([ln for ln in r.stdout.splitlines() if ln.startswith("  checks:")])
    assert outs[0] and outs[0] == outs[1] == outs[2]
    r = replay(vgt_bin, t, "--backend", "sim", "--subcontexts", "veid")
    assert r.returncode == 2 and "captured, group or tsg" in r.stderr
    assert "--subcontexts" in replay(vgt_bin, "--help").stdout


def rt_trace(path, rt_va, pixels):
    """A hand-built trace: one channel binds a 16x8 A8R8G8B8 block-linear render target at rt_va (3D CB97
    SET_COLOR_TARGET_A..MEMORY(0), 0x800..0x814) and uploads pixels (32-bit words) to its first row with I2M
    A140 (LINE_LENGTH_IN 0x180 .. LAUNCH_DMA 0x1b0, LOAD_INLINE_DATA 0x1b4)."""
    import vgtrace
    from test_census import PB, gp_entry
    pb = PB()
    pb.inc(0, 0x0000, [0xCB97])
    pb.inc(2, 0x0000, [0xA140])
    pb.inc(0, 0x0800, [rt_va >> 32, rt_va & 0xFFFFFFFF, 16, 8, 0xCF, 0])
    pb.inc(2, 0x180, [4 * len(pixels), 1, rt_va >> 32, rt_va & 0xFFFFFFFF, 4 * len(pixels)])
    pb.inc(2, 0x1B0, [1])
    pb.noninc(2, 0x1B4, list(pixels))
    data, pb_va = pb.bytes(), 0x7E00000000
    recs = [("CHANNEL", dict(client=1, parent=0x10, handle=0x100, **{"class": 0xC86F}, ring_va=0x7D00000000,
                             entries=1024, engine_type=1), 1),
            ("ENGINE_OBJECT", {"client": 1, "channel": 0x100, "handle": 0x200, "class": 0xCB97}, 2),
            ("ENGINE_OBJECT", {"client": 1, "channel": 0x100, "handle": 0x201, "class": 0xA140}, 3),
            ("GPU_MAP", dict(client=1, device=0x20, va_space=0x30, memory=0x40, gpu_va=rt_va & ~0xFFFFF,
                             length=1 << 20, source=4), 4),
            ("GPFIFO_SUBMIT", dict(client=1, channel=0x100, token=7, gp_put_before=0, gp_put_after=1,
                                   entries=[gp_entry(pb_va, len(data) // 4)],
                                   segments=[{"gpu_va": pb_va, "data": data}]), 10)]
    vgtrace.write_trace(path, recs)


def test_census_px0_is_the_first_pixel_value(vgt_bin, tmp_path):
    """px0 of a render-target row is the value of the target's first pixel after the submission (the same
    4 bytes --dump reads at the target's VA, and the first pixel of the --dump-rt PNG); first_nonzero_pixel
    is an index, counted from the start of the (page-aligned) range."""
    rt_va = 0x7F00010040                              # 0x40 into its page
    pixels = [0xFF336699, 0x11223344, 0, 0x55667788]  # A8R8G8B8: 0xAARRGGBB
    trace, out, raw, png = tmp_path / "rt.vgt", tmp_path / "rt.jsonl", tmp_path / "rt.bin", tmp_path / "rt.png"
    rt_trace(trace, rt_va, pixels)
    r = replay(vgt_bin, trace, "--backend", "sim", "--census", "--census-json", out, "--dump", f"{rt_va:#x}:16:{raw}",
               "--dump-rt", f"0:{png}")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert [x["what"] for x in rows] == ["render-target"], rows
    row = rows[0]
    assert row["va"] == rt_va & ~0xFFF and row["first_changed"] == 0x40
    assert row["first_nonzero_pixel"] == 0x40 // 4                        # an index, not a value
    first = struct.unpack("<I", raw.read_bytes()[:4])[0]
    assert row["px0"] == first == pixels[0]                               # the value
    _, _, px = png_pixels(png)
    a, rr, g, b = (first >> 24) & 255, (first >> 16) & 255, (first >> 8) & 255, first & 255
    assert px[:4] == bytes([rr, g, b, a])
    # the text table names both
    head = next(l for l in r.stdout.splitlines() if l.lstrip().startswith("submission channel"))
    assert head.split()[-2:] == ["first_nonzero_px", "px0"]
    line = next(l for l in r.stdout.splitlines() if " render-target " in l)
    assert line.split()[-2:] == [str(0x40 // 4), f"0x{pixels[0]:08x}"]


def test_census_px0_null_off_render_targets(vgt_bin, tmp_path):
    out = tmp_path / "stores.jsonl"
    r = replay(vgt_bin, CORPUS / "vadd.vgt", "--backend", "sim", "--quiet", "--census", "--census-json", out)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert rows and all(x["what"] == "observed" and x["px0"] is None for x in rows)
