"""CUDA images referenced by file (format 1.5 CUDA_IMAGE_REF, `vgt record --cuda-images`): a large image that
lies in a file mapped into the program (a shared library's fatbins) is named by path, offset and hash
instead of stored.

- capture: with --cuda-images=ref the fake program's PTX (a constant in its own executable, passed to
  cuModuleLoadData and cuLibraryLoadData) is recorded as a reference to that executable; with embed and
  with auto (the image is small) it is stored;
- the Python twin reads the record; info, census, db and verify count referenced images and say so;
- `vgt replay --lane cuda --backend cuda` reads the image from its file when the bytes there hash to the
  recorded hash, and refuses (exit 2, naming the image, the path and the hash) when the file is absent or
  changed, never loading another module."""
import json
import os
import sqlite3
import struct
import subprocess

import pytest
import xxhash

import vgtrace
from test_cuda import PTX, by_name, fake, head, records, replay, run_prog  # noqa: F401 (fake: a fixture)

def record(vgt_bin, fake, out, *opts):
    ctl = out.parent / "nvidiactl"
    ctl.write_bytes(b"")
    env = dict(os.environ, FAKECUDA_CTL=str(ctl), VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", str(out), *opts, "--", str(fake["prog"])], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def by_ref(fake, vgt_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp("imgref") / "ref.vgt"
    record(vgt_bin, fake, out, "--cuda-images=ref")
    return out


def test_ref_mode_names_the_program_file(by_ref, fake):
    recs = records(by_ref)
    refs = by_name(recs, "CUDA_IMAGE_REF")
    assert refs and not by_name(recs, "CUDA_IMAGE")
    body = PTX[:-1]   # the program's constant, without the NUL the capture keeps as part of PTX text
    exe = fake["prog"].read_bytes()
    for f in refs:
        assert os.path.samefile(f["path"].decode(), fake["prog"])
        got = exe[f["file_offset"]:f["file_offset"] + f["image_length"]]
        assert got.startswith(body) and f["kind"] == 3 and f["entries"] == b""
        assert f["file_size"] == len(exe)
    # every load names an image the trace describes
    hashes = {f["hash"] for f in refs}
    assert all(l["image_hash"] in hashes for l in by_name(recs, "CUDA_LOAD") if l["image_hash"])


def test_embed_and_auto_store_a_small_image(fake, vgt_bin, tmp_path):
    for mode in ("embed", "auto"):
        out = tmp_path / f"{mode}.vgt"
        record(vgt_bin, fake, out, f"--cuda-images={mode}")
        recs = records(out)
        assert by_name(recs, "CUDA_IMAGE") and not by_name(recs, "CUDA_IMAGE_REF"), mode
    # auto with a threshold under the image's size references it
    out = tmp_path / "auto0.vgt"
    record(vgt_bin, fake, out, "--cuda-image-embed-max=8")
    assert by_name(records(out), "CUDA_IMAGE_REF") and not by_name(records(out), "CUDA_IMAGE")
    out = tmp_path / "auto1m.vgt"
    record(vgt_bin, fake, out, "--cuda-image-embed-max=1M")
    assert by_name(records(out), "CUDA_IMAGE") and not by_name(records(out), "CUDA_IMAGE_REF")


def test_ref_mode_is_transparent(fake, vgt_bin, tmp_path):
    plain = run_prog(fake)
    r = record(vgt_bin, fake, tmp_path / "t.vgt", "--cuda-images=ref")
    assert r.stdout == plain


def test_replay_reads_the_image_from_its_file(by_ref, fake, vgt_bin):
    r = replay(vgt_bin, fake, by_ref)
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(r.stdout)
    assert s["checks"]["failed"] == 0 and s["checks"]["passed"] == 7


def synthetic(tmp_path, image_file, offset, length, h):
    """A trace written by the twin: one referenced PTX image at offset of image_file, a launch of it, and a
    copy back whose bytes the fake driver's vadd produces (zeros + zeros)."""
    n = 64
    da, db, dc = 0x7E1300000000, 0x7E1300001000, 0x7E1300002000
    size = 4 * n
    recs = [
        ("CUDA_IMAGE_REF", {"hash": h, "file_offset": offset, "file_size": image_file.stat().st_size,
                            "image_length": length, "kind": 3, "flags": 0, "path": str(image_file).encode(),
                            "entries": b""}),
        ("CUDA_LOAD", {**head(3, 0, 0), "handle": 0xA0, "image_hash": h, "path": b""}),
        ("CUDA_FUNCTION", {**head(10, 0, 0), "function": 0xF0, "owner": 0xA0, "name": b"vadd"}),
        *[("CUDA_MEMORY", {**head(19, 0, 0), "dst": d, "src": 0, "size": size, "stream": 0, "graph_exec": 0, "op": 1,
                           "value": 0, "node_index": 0, "data": b""}) for d in (da, db, dc)],
        *[("CUDA_MEMORY", {**head(29, 0, 0), "dst": d, "src": 0x1000, "size": size, "stream": 0, "graph_exec": 0,
                           "op": 3, "value": 0, "node_index": 0, "data": bytes(size)}) for d in (da, db)],
        ("CUDA_KERNEL", {**head(13, 0, 0), "function": 0xF0, "stream": 0, "grid_x": 1, "grid_y": 1, "grid_z": 1,
                         "block_x": n, "block_y": 1, "block_z": 1, "shared_bytes": 0, "graph_exec": 0, "node_index": 0,
                         "params": struct.pack("<QQQiI", da, db, dc, n, 0), "layout": struct.pack("<IIIIIIII", 0, 8, 8, 8, 16, 8, 24, 4)}),
        ("CUDA_MEMORY", {**head(31, 0, 0), "dst": 0x3000, "src": dc, "size": size, "stream": 0, "graph_exec": 0,
                         "op": 4, "value": 0, "node_index": 0, "data": bytes(size)}),
    ]
    trace = tmp_path / "synthetic_ref.vgt"
    vgtrace.write_trace(trace, [(t, f, 100 + i) for i, (t, f) in enumerate(recs)])
    return trace


@pytest.fixture
def image_at_offset(tmp_path):
    """A file that holds the PTX 4096 bytes in, as a library holds its fatbin."""
    f = tmp_path / "libkernels.so"
    f.write_bytes(b"\x7fELF" + bytes(4092) + PTX + b"tail")
    return f, 4096, len(PTX), xxhash.xxh64_intdigest(PTX)


def test_synthetic_ref_replays_info_db_verify(vgt, vgt_bin, fake, tmp_path, image_at_offset):
    f, off, length, h = image_at_offset
    trace = synthetic(tmp_path, f, off, length, h)
    rec = by_name(records(trace), "CUDA_IMAGE_REF")[0]
    assert rec["path"] == str(f).encode() and rec["file_offset"] == off
    r = replay(vgt_bin, fake, trace)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["checks"]["failed"] == 0
    info = vgt("info", trace, check=None).stdout
    assert "images referenced by file, not stored: 1" in info, info
    j = json.loads(vgt("info", "--json", trace, check=None).stdout)
    assert j["cuda"]["ref_images"] == 1 and j["cuda"]["images"] == 1 and j["cuda"]["ref_image_bytes"] == length
    census = vgt("census", trace, check=None).stdout
    assert "1 images (1 referenced by file)" in census, census
    db = tmp_path / "t.db"
    vgt("db", trace, "-o", db)
    row = sqlite3.connect(db).execute("SELECT referenced, path, file_offset, data FROM cuda_images").fetchone()
    assert row == (1, str(f), off, None)
    v = vgt("verify", trace, check=0).stdout
    assert "1 CUDA image referenced by file" in v
    v = vgt("verify", "--image-files", trace, check=0).stdout
    assert "1 checked against their files, 0 absent, 0 changed" in v, v


def test_changed_or_absent_file_is_refused(vgt, vgt_bin, fake, tmp_path, image_at_offset):
    f, off, length, h = image_at_offset
    trace = synthetic(tmp_path, f, off, length, h)
    data = bytearray(f.read_bytes())
    data[off + 5] ^= 1
    f.write_bytes(bytes(data))
    r = replay(vgt_bin, fake, trace)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"0x{h:016x}" in r.stderr and str(f) in r.stderr and "hash" in r.stderr, r.stderr
    assert "checks" not in r.stdout or json.loads(r.stdout)["checks"]["passed"] == 0
    v = vgt("verify", "--image-files", trace, check=1)
    assert "changed" in v.stderr and "0 absent, 1 changed" in v.stdout
    f.unlink()
    r = replay(vgt_bin, fake, trace)
    assert r.returncode == 2 and "cannot be opened" in r.stderr and str(f) in r.stderr, r.stderr
    v = vgt("verify", "--image-files", trace, check=0)
    assert "1 absent, 0 changed" in v.stdout and "absent here" in v.stdout
