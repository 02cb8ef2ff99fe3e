"""`vgt replay --check` states its coverage: how many of the bytes the trace observed were compared.

Observed bytes are the bytes of the SEMAPHORE records and of the MEMORY records of reason observed that
come after a replayed submission: what the capture read back of the GPU's results, that a check takes
as the expected output. Here they are counted independently, from the records as the Python reader
(trace-format/python/vgtrace) sees them, and compared with what `vgt replay` and `vgt corpus` report.
"""
import json
import re
import shutil
from pathlib import Path

import pytest

import vgtrace
from vgtrace import spec

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
MEMORY = spec.type_code("MEMORY")
SEMAPHORE = spec.type_code("SEMAPHORE")
SUBMIT = spec.type_code("GPFIFO_SUBMIT")
OBSERVED = 2


def observed_bytes(path):
    """Bytes of SEMAPHORE (4 or 8 byte) and MEMORY observed records after the first submission: those a
    full replay checks (every corpus submission is replayed, so each such record follows a replayed one)."""
    total, seen_submit = 0, False
    for r in vgtrace.read_trace(str(path)).records:
        if r.type == SUBMIT:
            seen_submit = True
        elif not seen_submit:
            continue
        elif r.type == MEMORY and r.fields["reason"] == OBSERVED:
            total += r.fields["length"]
        elif r.type == SEMAPHORE and r.fields["size"] in (4, 8):
            total += r.fields["size"]
    return total


def pct_text(compared, observed):
    """The percentage as the summary writes it: truncated (never rounded up), with two significant
    digits below 1%."""
    if compared == 0:
        return "0"
    for d in range(2, 13):
        v = compared * 100 * 10 ** d // observed
        if v >= 10 or d == 12:
            if v == 0:
                return "<0." + "0" * (d - 1) + "1"
            s = f"{v // 10 ** d}.{v % 10 ** d:0{d}d}"
            return s.rstrip("0").rstrip(".")
    raise AssertionError


def coverage_line(stdout):
    m = re.search(r"^  coverage: (\d+) of (\d+) observed bytes compared \(([0-9.]+)%\)", stdout, re.M)
    assert m, stdout[-3000:]
    return int(m.group(1)), int(m.group(2)), m.group(3)


@pytest.mark.parametrize("name", ["vadd", "vk_compute"])
def test_coverage_text_and_json_on_a_corpus_trace(vgt, name):
    trace = CORPUS / f"{name}.vgt"
    want = observed_bytes(trace)
    assert want > 0
    r = vgt("replay", trace, "--backend", "sim", "--check", check=0)
    compared, observed, pct = coverage_line(r.stdout)
    assert observed == want
    assert 0 < compared <= observed
    assert pct == pct_text(compared, observed)
    checks = re.search(r"checks: (\d+) passed, (\d+) failed, (\d+) not comparable", r.stdout)
    assert checks, r.stdout[-2000:]
    # the verdict says what it rests on
    assert re.search(rf"^result: ok \(coverage {re.escape(pct)}%\)$", r.stdout, re.M), r.stdout[-500:]

    j = json.loads(vgt("replay", trace, "--backend", "sim", "--check", "--json", check=0).stdout)
    c = j["checks"]
    assert c["observed_bytes"] == want and c["observed_bytes_compared"] == compared
    assert c["coverage_pct"] == pytest.approx(100.0 * compared / want, rel=1e-9)
    assert (c["passed"], c["failed"], c["not_comparable"]) == tuple(int(x) for x in checks.groups())
    # bytes_compared also counts the MEMORY changed/initial bytes the submissions wrote: never fewer
    assert c["bytes_compared"] >= compared
    assert j["result"] == "ok" and "min_coverage" not in j


def test_compared_bytes_are_those_of_the_checked_observed_records(vgt, synth, tmp_path):
    """The compared observed bytes, counted another way: with every byte of every observed record
    inverted, each observed record that is compared fails, and its mismatch report names how many bytes
    were compared. Their sum is the coverage's numerator; a check that fails still covers its bytes."""
    trace = synth("cover-synth", "--shape", "mixed", "--submits", "8", "--seed", "9")
    want = observed_bytes(trace)
    assert want > 0
    j = json.loads(vgt("replay", trace, "--backend", "sim", "--check", "--json", check=0).stdout)
    c = j["checks"]
    assert c["observed_bytes"] == want and 0 < c["observed_bytes_compared"] <= want

    t = vgtrace.read_trace(str(trace))
    recs = []
    for r in t.records:
        if r.type == MEMORY and r.fields["reason"] == OBSERVED:
            f = dict(r.fields)
            f["data"] = bytes(b ^ 0xFF for b in f["data"])
            recs.append((r.type, vgtrace.encode_payload(r.type, f), r.ts, r.flags))
        else:
            recs.append((r.type, bytes(r.payload), r.ts, r.flags))
    bad = tmp_path / "inverted.vgt"
    vgtrace.write_trace(str(bad), recs, identity=list(t.identity.items()))
    jb = json.loads(vgt("replay", bad, "--backend", "sim", "--check", "--json", check=1).stdout)
    mism = [x for x in jb["reports"] if x["kind"] == "mismatch" and x["record"] == "MEMORY observed"]
    assert mism and all(x["differing"] == x["compared"] for x in mism)
    assert sum(x["compared"] for x in mism) == c["observed_bytes_compared"]
    assert jb["checks"]["observed_bytes"] == want
    assert jb["checks"]["observed_bytes_compared"] == c["observed_bytes_compared"]
    assert jb["why"].startswith(f"{len(mism)} check{'s' if len(mism) > 1 else ''} failed")
    r = vgt("replay", bad, "--backend", "sim", "--check", "--min-coverage", "100", check=1)
    assert re.search(rf"^result: FAILED \({len(mism)} checks? failed; coverage [0-9.]+% < 100%\)$", r.stdout, re.M)


def test_min_coverage_fails_below_and_passes_above(vgt):
    trace = CORPUS / "vadd.vgt"
    base = vgt("replay", trace, "--backend", "sim", "--check", check=0)
    compared, observed, pct = coverage_line(base.stdout)
    achieved = 100.0 * compared / observed
    # above what the trace reaches: exit 1 and the result line says why
    r = vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", "50", check=1)
    assert re.search(rf"^result: FAILED \(coverage {re.escape(pct)}% < 50%\)$", r.stdout, re.M), r.stdout[-500:]
    r = vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", f"{achieved * 1.01:.12f}%", check=1)
    assert "result: FAILED (coverage" in r.stdout
    # the exact fraction it reaches passes; one more byte does not
    vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", f"{compared}/{observed}", check=0)
    r = vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", f"{compared + 1}/{observed}", check=1)
    assert "result: FAILED (coverage" in r.stdout
    # below: ok, and the line says against what
    r = vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", f"{achieved / 2:.12f}", check=0)
    assert re.search(rf"^result: ok \(coverage {re.escape(pct)}% >= ", r.stdout, re.M), r.stdout[-500:]
    vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", "0", check=0)
    # JSON
    j = json.loads(vgt("replay", trace, "--backend", "sim", "--check", "--json", "--min-coverage", "50", check=1).stdout)
    assert j["result"] == "failed"
    assert j["min_coverage"] == {"requested": "50", "pct": 50, "met": False}
    assert j["why"] == f"coverage {pct}% < 50%"
    j = json.loads(vgt("replay", trace, "--backend", "sim", "--check", "--json", "--min-coverage", "0.0000001",
                       check=0).stdout)
    assert j["result"] == "ok" and j["min_coverage"]["met"] is True and "why" not in j


@pytest.mark.parametrize("bad", ["abc", "-1", "101", "100.5", "", "1/0", "3/2", "1/", "/2", "50%%", "nan", "1e3",
                                 "0x10", " 5", "5 "])
def test_min_coverage_bad_values_are_usage_errors(vgt, synth, bad):
    trace = synth("cover-bad", "--shape", "mixed", "--submits", "2", "--seed", "3")
    r = vgt("replay", trace, "--backend", "sim", "--check", "--min-coverage", bad, check=2)
    assert f"--min-coverage '{bad}' is not a percentage" in r.stderr, r.stderr


def test_min_coverage_needs_check(vgt, synth):
    trace = synth("cover-bad", "--shape", "mixed", "--submits", "2", "--seed", "3")
    r = vgt("replay", trace, "--backend", "sim", "--min-coverage", "10", check=2)
    assert "--min-coverage needs --check" in r.stderr, r.stderr


def test_help_defines_observed_bytes(vgt):
    out = vgt("replay", "--help", check=0).stdout
    assert "--min-coverage PCT" in out and "observed bytes" in out
    assert "coverage" in vgt("corpus", "--help", check=0).stdout


def test_corpus_floor_is_blessed_and_enforced(vgt, tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "goldens").mkdir(parents=True)
    for name in ("vadd", "vk_compute"):
        shutil.copy(CORPUS / f"{name}.vgt", corpus)
    (corpus / "manifest.txt").write_text("vadd.vgt\nvk_compute.vgt\n")
    vgt("corpus", "bless", corpus, check=0)
    # bless records the coverage each trace reaches today as its floor
    floors = {}
    for name in ("vadd", "vk_compute"):
        compared, observed, _ = coverage_line(vgt("replay", corpus / f"{name}.vgt", "--backend", "sim", "--check",
                                                  check=0).stdout)
        text = (corpus / "goldens" / f"{name}.coverage").read_text()
        lines = [x for x in text.splitlines() if x and not x.startswith("#")]
        assert lines == [f"{compared}/{observed}"], text
        floors[name] = (compared, observed)
    r = vgt("corpus", "check", corpus, check=0)
    assert "0 with replay problems" in r.stdout
    assert re.search(r"coverage: \d+ of \d+ observed bytes compared \([0-9.]+%\); floor ", r.stdout), r.stdout
    # a floor above what the trace reaches fails the check, naming the trace and both figures
    compared, observed = floors["vadd"]
    (corpus / "goldens" / "vadd.coverage").write_text(f"{compared + 1}/{observed}\n")
    r = vgt("corpus", "check", corpus, check=1)
    assert "1 with replay problems" in r.stdout and "COVERAGE BELOW FLOOR" in r.stdout, r.stdout
    (corpus / "goldens" / "vadd.coverage").write_text("# a percentage works too\n50\n")
    r = vgt("corpus", "check", corpus, check=1)
    assert "< 50%" in r.stdout
    # a malformed or missing floor is a problem too, never a silent pass
    (corpus / "goldens" / "vadd.coverage").write_text("lots\n")
    r = vgt("corpus", "check", corpus, check=1)
    assert "vadd.coverage" in r.stdout
    (corpus / "goldens" / "vadd.coverage").unlink()
    r = vgt("corpus", "check", corpus, check=1)
    assert "no golden" in r.stdout and "vadd.coverage" in r.stdout
    vgt("corpus", "bless", corpus, check=0)
    vgt("corpus", "check", corpus, check=0)


def test_repository_corpus_has_floors():
    """Every corpus trace has a blessed floor that is the fraction of its own observed bytes."""
    for trace in sorted(CORPUS.glob("*.vgt")):
        text = (CORPUS / "goldens" / f"{trace.stem}.coverage").read_text()
        value = [x for x in text.splitlines() if x and not x.startswith("#")]
        assert len(value) == 1
        num, den = (int(x) for x in value[0].split("/"))
        assert den == observed_bytes(trace) and 0 < num <= den
