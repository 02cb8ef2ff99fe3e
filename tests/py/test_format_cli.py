"""The format verbs on traces written by `vgt synth`: info, dump, verify (with --salvage) and repack.

Each test checks behaviour a user relies on: counts that agree with what was written, records that
survive a repack unchanged, a corruption reported at the byte offset where it is, and a salvage that is
itself a valid trace holding exactly the records before the problem."""
import json
import re
import shutil
import struct
import subprocess

import pytest
import xxhash


def jsonl(vgt, path, *args):
    out = vgt("dump", path, "--jsonl", *args, check=0).stdout
    return [json.loads(line) for line in out.splitlines()]


def without_chunk(recs):
    return [{k: v for k, v in r.items() if k != "chunk_offset"} for r in recs]


@pytest.fixture
def mixed(synth):
    return synth("fmt-mixed", "--shape", "mixed", "--submits", "24", "--channels", "3", "--seed", "11",
                 "--chunk-size", "16K")


@pytest.fixture
def all_types(synth):
    return synth("fmt-all", "--shape", "all-types", "--submits", "6", "--seed", "5")


def test_info_json_agrees_with_dump(vgt, mixed):
    info = json.loads(vgt("info", mixed, "--json", check=0).stdout)
    recs = jsonl(vgt, mixed)
    assert info["records"] == len(recs) == sum(info["records_by_type"].values())
    for name, n in info["records_by_type"].items():
        assert n == sum(1 for r in recs if r["type"] == name), name
    assert info["submissions"] == 24
    assert info["channel_count"] == 3 and len(info["channels"]) == 3
    assert sum(c["submissions"] for c in info["channels"]) == 24
    assert all(c["token"] is not None for c in info["channels"])
    assert info["chunks"] > 1 and info["has_index"] is True
    assert info["bytes_raw"] > info["bytes_compressed"] > 0
    assert abs(info["ratio"] - info["bytes_raw"] / info["bytes_compressed"]) < 0.01
    assert info["first_ts"] == min(r["ts"] for r in recs) and info["last_ts"] == max(r["ts"] for r in recs)
    assert info["identity"]["capture_mode"] == "synthetic"
    assert info["problem"] is None
    assert info["format"] == "1.5"


def test_info_text_names_what_matters(vgt, mixed):
    out = vgt("info", mixed, check=0).stdout
    assert re.search(r"format: +1\.5 ", out), out[:300]   # writers write format 1.5
    for word in ("format:", "identity:", "producer", "GPFIFO_SUBMIT", "channels:", "submissions:  24",
                 "chunks:", "ratio", "time span:"):
        assert word in out, word


def test_dump_every_type_decodes(vgt, all_types):
    recs = jsonl(vgt, all_types)
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    assert all("error" not in r for r in recs)
    names = {r["type"] for r in recs}
    for t in ("SESSION_START", "RM_ALLOC", "MEM_ALLOC", "GPU_MAP", "CHANNEL", "GPFIFO_SUBMIT", "MEMORY", "MARKER"):
        assert t in names, t
    sub = next(r for r in recs if r["type"] == "GPFIFO_SUBMIT")
    f = sub["fields"]
    assert len(f["entries"]) == f["entry_count"] and len(f["segments"]) == f["segment_count"]
    for s in f["segments"]:
        assert len(bytes.fromhex(s["data"])) == s["length"]
    text = vgt("dump", all_types, check=0).stdout.splitlines()
    assert len(text) == len(recs)
    assert text[0].split()[:3] == ["0", str(recs[0]["ts"]), recs[0]["type"]]


def test_dump_filters(vgt, mixed):
    every = jsonl(vgt, mixed)
    some = jsonl(vgt, mixed, "--seq", "10..40", "--type", "gpfifo_submit,MEMORY")
    assert some == [r for r in every if 10 <= r["seq"] <= 40 and r["type"] in ("GPFIFO_SUBMIT", "MEMORY")]
    assert some
    last = jsonl(vgt, mixed, "--seq", f"{len(every) - 2}..")
    assert [r["seq"] for r in last] == [len(every) - 2, len(every) - 1]
    assert vgt("dump", mixed, "--type", "NO_SUCH_TYPE").returncode == 2
    assert vgt("dump", mixed, "--seq", "9..3").returncode == 2


def test_dump_reads_a_stream_on_stdin(vgt_bin, vgt, mixed):
    every = vgt("dump", mixed, "--jsonl", check=0).stdout
    with open(mixed, "rb") as f:
        r = subprocess.run([str(vgt_bin), "dump", "-", "--jsonl"], stdin=f, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert without_chunk([json.loads(x) for x in r.stdout.splitlines()]) == \
        without_chunk([json.loads(x) for x in every.splitlines()])


def test_verify_ok_and_without_trailer(vgt, mixed, synth):
    out = vgt("verify", mixed, check=0).stdout
    assert "ok:" in out and "index agrees" in out
    bare = synth("fmt-bare", "--shape", "mixed", "--submits", "8", "--no-trailer", "--chunk-size", "8K")
    out = vgt("verify", bare, check=0).stdout
    assert "no trailer" in out
    assert json.loads(vgt("info", bare, "--json", check=0).stdout)["has_index"] is False


def chunk_offsets(vgt, path):
    return sorted({r["chunk_offset"] for r in jsonl(vgt, path)})


def test_verify_names_the_offset_and_salvages_the_prefix(vgt, mixed, tmp_path):
    offsets = chunk_offsets(vgt, mixed)
    assert len(offsets) >= 3
    bad = tmp_path / "bad.vgt"
    shutil.copy(mixed, bad)
    data = bytearray(bad.read_bytes())
    victim = offsets[2]
    data[victim + 72 + 10] ^= 0xFF            # a payload byte of the third chunk
    bad.write_bytes(bytes(data))
    salvage = tmp_path / "salvage.vgt"
    r = vgt("verify", bad, "--salvage", salvage)
    assert r.returncode == 1
    assert f"offset {victim}" in r.stderr
    before = [x for x in jsonl(vgt, mixed) if x["chunk_offset"] < victim]
    assert vgt("verify", salvage).returncode == 0
    assert without_chunk(jsonl(vgt, salvage)) == without_chunk(before)


def test_verify_truncation(vgt, mixed, tmp_path):
    data = mixed.read_bytes()
    offsets = chunk_offsets(vgt, mixed)
    cut = tmp_path / "cut.vgt"
    cut.write_bytes(data[:offsets[1] + 100])          # inside the second chunk
    r = vgt("verify", cut)
    assert r.returncode == 1 and f"offset {offsets[1]}" in r.stderr
    cut.write_bytes(data[:offsets[1]])                 # at a chunk boundary: valid, no trailer
    assert vgt("verify", cut).returncode == 0


def test_unknown_header_flag_is_rejected_by_name(vgt, mixed, tmp_path):
    data = bytearray(mixed.read_bytes())
    hlen = struct.unpack_from("<I", data, 16)[0]
    struct.pack_into("<I", data, 12, 0x4)
    struct.pack_into("<Q", data, hlen - 8, xxhash.xxh64(bytes(data[:hlen - 8]), seed=0).intdigest())
    p = tmp_path / "flag.vgt"
    p.write_bytes(bytes(data))
    r = vgt("info", p)
    assert r.returncode == 2 and "flags" in r.stderr and "0x00000004" in r.stderr


def test_repack_keeps_every_record(vgt, mixed, tmp_path):
    before = without_chunk(jsonl(vgt, mixed))
    for args in (["--level", "19", "--chunk-size", "4K"], ["--stored"], ["--level", "-5", "--chunk-size", "1M"],
                 ["--threads", "2"]):
        out = tmp_path / "re.vgt"
        vgt("repack", mixed, out, *args, check=0)
        assert vgt("verify", out).returncode == 0, args
        assert without_chunk(jsonl(vgt, out)) == before, args
    small = json.loads(vgt("info", tmp_path / "re.vgt", "--json", check=0).stdout)
    assert small["records"] == len(before)
    assert vgt("repack", mixed, tmp_path / "x.vgt", "--chunk-size", "12").returncode == 2


def test_bad_input_is_not_a_trace(vgt, tmp_path):
    p = tmp_path / "junk.vgt"
    p.write_bytes(b"this is not a trace at all, just text" * 4)
    r = vgt("verify", p)
    assert r.returncode == 1 and "magic" in r.stderr
    r = vgt("info", p)
    assert r.returncode == 1 and "magic" in r.stderr


def test_verify_checks_payload_structure_behind_valid_checksums(vgt, tmp_path):
    """A record whose blob runs past its payload, in a chunk whose checksums are right (written by the
    Python twin): only the structure check can catch it; dump shows it as malformed."""
    import vgtrace
    p = tmp_path / "blob.vgt"
    with open(p, "wb") as f:
        w = vgtrace.Writer(f, identity=[("producer", "test_format_cli")])
        w.write("MARKER", {"text": b"fine"}, 10)
        w.write("MARKER", struct.pack("<II", 99, 0) + b"abc", 11)
        w.close()
    r = vgt("verify", p)
    assert r.returncode == 1 and "seq 1" in r.stderr and "'text'" in r.stderr, r.stderr
    out = tmp_path / "fixed.vgt"
    r = vgt("verify", p, "--salvage", out)
    assert r.returncode == 1 and "salvaged 1 records" in r.stdout
    assert [x["fields"]["text"] for x in jsonl(vgt, out)] == ["fine"]
    r = vgt("dump", p, "--jsonl")
    assert r.returncode == 1 and "seq 1" in r.stderr
    dumped = [json.loads(x) for x in r.stdout.splitlines()]
    assert "error" in dumped[1] and "error" not in dumped[0]


def test_dump_follows_a_trace_being_written(vgt_bin, vgt, mixed, tmp_path):
    """--follow prints each chunk's records once the chunk is complete in the file, waits while a chunk is
    half written, and stops at the trailer."""
    import time
    every = jsonl(vgt, mixed)
    offsets = chunk_offsets(vgt, mixed)
    data = mixed.read_bytes()
    live = tmp_path / "live.vgt"
    live.write_bytes(data[:offsets[2]])                      # header and two whole chunks
    p = subprocess.Popen([str(vgt_bin), "dump", "--follow", "--jsonl", str(live)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = [json.loads(p.stdout.readline()) for _ in range(sum(1 for r in every if r["chunk_offset"] < offsets[2]))]
        assert [r["seq"] for r in first] == list(range(len(first)))
        with open(live, "ab") as f:
            f.write(data[offsets[2]:offsets[2] + 100])          # half a chunk: nothing new yet
            f.flush()
            time.sleep(0.3)
            assert p.poll() is None
            f.write(data[offsets[2] + 100:])                     # the rest and the trailer
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    rest = [json.loads(x) for x in out.splitlines()]
    assert without_chunk(first + rest) == without_chunk(every)


def test_verify_json(vgt, mixed, tmp_path):
    ok = json.loads(vgt("verify", mixed, "--json", check=0).stdout)
    n = len(jsonl(vgt, mixed))
    assert ok["ok"] is True and ok["problem"] is None and ok["records"] == n and ok["has_trailer"] is True
    assert ok["valid_end"] < mixed.stat().st_size           # the trailer follows the chunks
    offsets = chunk_offsets(vgt, mixed)
    bad = tmp_path / "bad.vgt"
    data = bytearray(mixed.read_bytes())
    data[offsets[1] + 8] ^= 0x01                           # compressed_length: header checksum breaks
    bad.write_bytes(bytes(data))
    r = vgt("verify", bad, "--json", "--salvage", tmp_path / "s.vgt")
    assert r.returncode == 1
    j = json.loads(r.stdout)
    assert j["ok"] is False and j["problem"]["offset"] == offsets[1] and j["problem"]["code"] == "VGT_E_CHECKSUM"
    assert j["valid_end"] == offsets[1] and j["salvaged"] == j["records"] > 0


@pytest.mark.parametrize("trailer", [True, False])
def test_info_quick_agrees_with_the_full_read(vgt, synth, trailer):
    args = ["--shape", "mixed", "--submits", "20", "--chunk-size", "8K", "--seed", "3"]
    path = synth(f"fmt-quick-{trailer}", *args, *([] if trailer else ["--no-trailer"]))
    full = json.loads(vgt("info", path, "--json", check=0).stdout)
    quick = json.loads(vgt("info", path, "--json", "--quick", check=0).stdout)
    assert quick["quick"] is True and full["quick"] is False
    for k in ("records", "submissions", "chunks", "bytes_raw", "bytes_compressed", "first_ts", "last_ts", "has_index"):
        assert quick[k] == full[k], k
    assert quick["records_by_type"] is None and full["records_by_type"]
