"""Verbs that read one trace and write another must never destroy their input, and must refuse sizes
they cannot hold: `vgt repack IN OUT` and `vgt verify TRACE --salvage OUT` with OUT naming IN (by the
same path, another spelling of it, or a hard link), and a --chunk-size whose multiplication overflows.

Each was a real defect: OUT was opened for writing (truncated) before IN was read, so `vgt repack t t`
left a header-only file and said "repacked 0 records" with exit 0."""
import os
import shutil

import pytest


@pytest.fixture
def trace(synth, tmp_path):
    src = synth("outputs-src", "--submits", "20", "--chunk-size", "4K", "--seed", "3")
    t = tmp_path / "t.vgt"
    shutil.copy(src, t)
    return t


def records(vgt, path):
    return vgt("dump", path, "--jsonl", check=0).stdout.count("\n")


@pytest.mark.parametrize("spell", ["same", "dot", "link"])
def test_repack_onto_its_input_is_refused(vgt, trace, spell):
    before = trace.read_bytes()
    out = {"same": trace, "dot": trace.parent / "." / trace.name, "link": trace.parent / "hard.vgt"}[spell]
    if spell == "link":
        os.link(trace, out)
    r = vgt("repack", trace, out, check=2)
    assert "input file itself" in r.stderr, r.stderr
    assert trace.read_bytes() == before, "the input was changed"
    vgt("verify", trace, check=0)


@pytest.mark.parametrize("spell", ["same", "link"])
def test_slice_onto_its_input_is_refused(vgt, trace, spell):
    before = trace.read_bytes()
    out = {"same": trace, "link": trace.parent / "hard.vgt"}[spell]
    if spell == "link":
        os.link(trace, out)
    r = vgt("slice", trace, out, "--submits", "0..1", check=2)
    assert "input file itself" in r.stderr, r.stderr
    assert trace.read_bytes() == before, "the input was changed"


def test_salvage_onto_the_trace_is_refused(vgt, trace):
    before = trace.read_bytes()
    r = vgt("verify", trace, "--salvage", trace, check=2)
    assert "trace being verified" in r.stderr, r.stderr
    assert trace.read_bytes() == before, "the trace was changed"


def test_repack_and_salvage_to_another_file_still_work(vgt, trace, tmp_path):
    n = records(vgt, trace)
    assert n > 20
    vgt("repack", trace, tmp_path / "r.vgt", "--chunk-size", "8KiB", check=0)
    vgt("verify", trace, "--salvage", tmp_path / "s.vgt", check=0)
    assert records(vgt, tmp_path / "r.vgt") == records(vgt, tmp_path / "s.vgt") == n


@pytest.mark.parametrize("size", ["17592186044420M", "18446744073709551616", "4398046511108G", "3K", "65M", "-4K",
                                  "4X", ""])
def test_repack_rejects_chunk_sizes_out_of_range(vgt, trace, tmp_path, size):
    out = tmp_path / "o.vgt"
    r = vgt("repack", trace, out, "--chunk-size", size, check=2)
    assert "bad chunk size" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("size", ["4096", "4K", "4k", "64M", "64MiB", "0x10000"])
def test_repack_accepts_chunk_sizes_in_range(vgt, trace, tmp_path, size):
    vgt("repack", trace, tmp_path / "o.vgt", "--chunk-size", size, check=0)


def test_synth_rejects_an_overflowing_size(vgt, tmp_path):
    r = vgt("synth", "-o", tmp_path / "y.vgt", "--bytes", "99999999999999999999999", check=2)
    assert "bad size" in r.stderr, r.stderr
