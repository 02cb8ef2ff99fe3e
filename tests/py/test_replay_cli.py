"""`vgt replay` and `vgt corpus` on synthetic traces (`vgt synth`), run on the sim backend.

The traces come from `vgt synth`, whose observed MEMORY records hold what its submissions write
(semaphores, uploads, copies): a correct replay must reproduce them, a corrupted record must be caught
and named per submission.
"""
import json
import os
import subprocess

import pytest
import zstandard

import vgtrace
from vgtrace import spec

MEMORY = spec.type_code("MEMORY")


def rewrite(src, dst, edit):
    """Copy trace src to dst through the Python twin, passing each record's payload through edit(rec)."""
    t = vgtrace.read_trace(str(src))
    recs = []
    for r in t.records:
        payload = edit(r)
        recs.append((r.type, bytes(r.payload if payload is None else payload), r.ts, r.flags))
    vgtrace.write_trace(str(dst), recs, identity=list(t.identity.items()))
    return t


def observed_records(path):
    """(seq, gpu_va, data) of every MEMORY record of reason observed (2), in order."""
    out = []
    for r in vgtrace.read_trace(str(path)).records:
        if r.type == MEMORY and r.fields["reason"] == 2:
            out.append((r.seq, r.fields["gpu_va"], bytes(r.fields["data"])))
    return out


def test_help(vgt):
    r = vgt("replay", "--help", check=0)
    assert "--backend" in r.stdout and "--check" in r.stdout and "--dump VA:LEN:FILE" in r.stdout
    r = vgt("corpus", "--help", check=0)
    assert "bless" in r.stdout and "check" in r.stdout


@pytest.mark.parametrize("shape", ["mixed", "all-types"])
def test_replay_synth_checks_pass(vgt, synth, shape):
    trace = synth(f"replay-{shape}", "--shape", shape, "--submits", "12", "--channels", "3", "--seed", "5")
    r = vgt("replay", trace, "--backend", "sim", "--check", check=0)
    assert "result: ok" in r.stdout
    assert "shaders not executed; draws not rasterized" in r.stdout
    assert "submissions 12 replayed of 12" in r.stdout
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("checks:"))
    passed = int(line.split()[1])
    assert passed > 0 and " 0 failed" in line
    # a per-submission line for submissions that had checks
    assert "submission 0 (seq" in r.stdout and "0 failed" in r.stdout


def test_replay_json_counts_match_the_trace(vgt, synth, tmp_path):
    trace = synth("replay-json", "--shape", "mixed", "--submits", "10", "--seed", "11")
    r = vgt("replay", trace, "--backend", "sim", "--check", "--json", check=0)
    j = json.loads(r.stdout)
    t = vgtrace.read_trace(str(trace))
    submits = sum(1 for x in t.records if x.name == "GPFIFO_SUBMIT")
    entries = sum(x.fields["entry_count"] for x in t.records if x.name == "GPFIFO_SUBMIT")
    assert j["backend"] == "sim" and j["lane"] == "verbatim" and j["result"] == "ok"
    assert j["submissions"] == submits and j["submissions_replayed"] == submits
    assert j["entries"] == entries
    assert j["checks"]["failed"] == 0 and j["checks"]["passed"] > 0
    assert j["note"] == "shaders not executed; draws not rasterized"
    assert j["semaphores"]["releases"] > 0 and j["launches"] > 0
    subs = [x for x in j["reports"] if x["kind"] == "submission"]
    assert subs and all(x["failed"] == 0 for x in subs)


def test_corrupted_observed_memory_fails_with_a_clear_message(vgt, synth, tmp_path):
    trace = synth("replay-corrupt", "--shape", "mixed", "--submits", "8", "--seed", "3")
    obs = observed_records(trace)
    assert obs, "synth wrote no observed MEMORY record"
    # the first observed record the sim must produce: the replay passes on the original
    good = vgt("replay", trace, "--backend", "sim", "--check", "--json", check=0)
    assert json.loads(good.stdout)["checks"]["failed"] == 0
    target_seq, target_va, data = obs[0]
    bad = tmp_path / "corrupt.vgt"

    def edit(r):
        if r.seq != target_seq:
            return None
        p = bytearray(r.payload)
        p[24] ^= 0xFF          # first data byte (MEMORY: 24 bytes of fixed fields, then the data)
        return p
    rewrite(trace, bad, edit)
    r = vgt("replay", bad, "--backend", "sim", "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    want = f"MEMORY observed record seq {target_seq} at VA {target_va:#x}"
    mism = [x for x in r.stdout.splitlines() if "MISMATCH" in x]
    assert len(mism) == 1 and want in mism[0], r.stdout
    assert f"first at VA {target_va:#x}: trace 0x" in mism[0]
    # the per-submission line names the submission the record follows, with one failure
    sub_line = [x for x in r.stdout.splitlines() if x.startswith("submission ") and "1 failed" in x]
    assert len(sub_line) == 1 and mism[0].split("MISMATCH ")[1].startswith(sub_line[0].split(":")[0])
    assert "result: FAILED" in r.stdout


def test_submits_range_and_stream_from_stdin(vgt_bin, vgt, synth):
    trace = synth("replay-range", "--shape", "mixed", "--submits", "8", "--seed", "9")
    r = vgt("replay", trace, "--backend", "sim", "--check", "--submits", "2..4", check=0)
    assert "submissions 3 replayed" in r.stdout and "(2 before --submits: not checked)" in r.stdout
    assert "submission 1 (seq" not in r.stdout and "submission 2 (seq" in r.stdout
    r = vgt("replay", trace, "--backend", "sim", "--check", "--submits", "2..4", "--prefix", "state", check=0)
    j = json.loads(vgt("replay", trace, "--backend", "sim", "--submits", "2..4", "--prefix", "state", "--json",
                       check=0).stdout)
    assert j["submissions_replayed"] == 3 and j["submissions_prefix"] == 2
    vgt("replay", trace, "--backend", "sim", "--submits", "2..4", "--prefix", "bogus", check=2)
    with open(trace, "rb") as f:
        p = subprocess.run([str(vgt_bin), "replay", "-", "--backend", "sim", "--check"], stdin=f,
                           capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "submissions 8 replayed of 8" in p.stdout


def test_backend_and_lane_choice(vgt, vgt_bin, synth):
    trace = synth("replay-choice", "--shape", "mixed", "--submits", "2")
    r = vgt("replay", trace, check=0)
    assert "using backend" in r.stderr          # the automatic choice is said
    # without a CUDA driver (VGT_CUDA_LIB names none: the same on a machine that has one)
    env = dict(os.environ, VGT_CUDA_LIB="/nonexistent/libcuda.so.1")
    r = subprocess.run([str(vgt_bin), "replay", str(trace), "--backend", "cuda"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2 and "backend cuda: no CUDA driver on this machine" in r.stderr
    r = vgt("replay", trace, "--backend", "sim", "--lane", "cuda", check=2)
    assert "lane cuda is not implemented by backend sim" in r.stderr
    r = vgt("replay", trace, "--backend", "sim", "--lane", "synth", "--json", check=0)
    assert json.loads(r.stdout)["lanes"]["synth"] == 2
    r = vgt("replay", trace, "--backend", "nope", check=2)
    assert "unknown backend" in r.stderr


def test_dump_writes_replayed_memory(vgt, synth, tmp_path):
    trace = synth("replay-dump", "--shape", "mixed", "--submits", "6", "--seed", "2")
    seq, va, data = observed_records(trace)[-1]
    out = tmp_path / "dump.bin"
    vgt("replay", trace, "--backend", "sim", "--dump", f"{va:#x}:{len(data)}:{out}", check=0)
    assert out.read_bytes() == data
    r = vgt("replay", trace, "--backend", "sim", "--dump", "0x10:nope:x", check=2)
    assert "VA:LEN:FILE" in r.stderr


def test_hostile_inputs_fail_cleanly(vgt, synth, tmp_path):
    junk = tmp_path / "junk.vgt"
    junk.write_bytes(b"VGTRACE\0" + bytes(range(256)) * 4)
    r = vgt("replay", junk, "--backend", "sim")
    assert r.returncode in (1, 2) and "vgt replay:" in r.stderr
    trace = synth("replay-trunc", "--shape", "mixed", "--submits", "6")
    cut = tmp_path / "cut.vgt"
    cut.write_bytes(trace.read_bytes()[: trace.stat().st_size // 2])
    r = vgt("replay", cut, "--backend", "sim", "--check")
    assert r.returncode in (0, 1, 2) and "Traceback" not in r.stderr
    assert r.returncode >= 0   # never killed by a signal


def test_corpus_bless_then_check(vgt, vgt_bin, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    vgt("synth", "-o", corpus / "one.vgt", "--shape", "mixed", "--submits", "5", "--seed", "4", check=0)
    vgt("synth", "-o", corpus / "two.vgt", "--shape", "all-types", "--submits", "4", "--seed", "8", check=0)
    r = vgt("corpus", "bless", corpus, check=0)
    for name in ("one", "two"):
        for suffix in ("decode.digest.zst", "census.json.zst", "db.sql"):
            assert (corpus / "goldens" / f"{name}.{suffix}").stat().st_size > 0
    r = vgt("corpus", "check", corpus, check=0)
    assert "2 trace(s), 0 with replay problems, 0 output(s) different" in r.stdout
    # a golden that no longer matches: exit 1 with the differing line
    census = corpus / "goldens" / "two.census.json.zst"
    lines = zstandard.ZstdDecompressor().decompress(census.read_bytes()).decode().splitlines()
    i = next(k for k, x in enumerate(lines) if '"methods":' in x)
    lines[i] = lines[i].replace('"methods":', '"methods":1')
    census.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    r = vgt("corpus", "check", corpus)
    assert r.returncode == 1, r.stdout
    assert f"census line {i + 1}:" in r.stdout and "1 line(s) differ" in r.stdout
    # the decode golden is one digest line per submission: a change inside submission 2 is named by it
    digest = corpus / "goldens" / "one.decode.digest.zst"
    lines = zstandard.ZstdDecompressor().decompress(digest.read_bytes()).decode().splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("submit 2 "))
    lines[i] = lines[i][:-1] + ("0" if lines[i][-1] != "0" else "1")
    digest.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    r = vgt("corpus", "check", corpus)
    assert r.returncode == 1 and f"decode line {i + 1}:" in r.stdout and "submit 2 " in r.stdout, r.stdout
    vgt("corpus", "bless", corpus)
    # a manifest restricts the corpus to the traces it lists
    (corpus / "manifest.txt").write_text("# only one\none.vgt\n")
    r = vgt("corpus", "check", corpus, check=0)
    assert "1 trace(s)" in r.stdout
    # a corpus whose trace fails its replay checks is a failure
    bad = corpus / "one.vgt"
    seq = observed_records(bad)[0][0]

    def edit(rec):
        if rec.seq != seq:
            return None
        p = bytearray(rec.payload)
        p[24] ^= 0x55
        return p
    rewrite(bad, corpus / "bad.vgt", edit)
    (corpus / "manifest.txt").write_text("bad.vgt\n")
    vgt("corpus", "bless", corpus)
    r = vgt("corpus", "check", corpus)
    assert r.returncode == 1 and "1 with replay problems" in r.stdout and "MEMORY observed" in r.stdout


def test_defensive_unmaps_are_not_warnings(vgt):
    """The Vulkan driver unmaps a VA range before mapping it (RM answers NV_OK when nothing is there):
    corpus/vk_triangle.vgt has four such GPU_UNMAP records. Replay has nothing to undo for them and must
    not report them as faults or warnings."""
    from pathlib import Path
    trace = Path(__file__).resolve().parents[2] / "corpus" / "vk_triangle.vgt"
    unmaps = [l for l in vgt("dump", trace, "--type", "GPU_UNMAP").stdout.splitlines() if "GPU_UNMAP" in l]
    assert len(unmaps) >= 4
    r = vgt("replay", trace, "--backend", "sim", "--check")
    out = r.stdout + r.stderr
    assert "is not mapped" not in out, out[-2000:]
    assert "warnings 0" in out and "result: ok" in out, out[-2000:]
