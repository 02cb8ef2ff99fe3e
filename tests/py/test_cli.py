"""Every verb answers --help, and the top-level CLI follows its exit-code convention."""
import subprocess

import pytest


def verbs(vgt_bin):
    out = subprocess.run([str(vgt_bin), "verbs"], capture_output=True, text=True, check=True).stdout
    return [v for v in out.split() if v]


def test_there_are_verbs(vgt_bin):
    assert len(verbs(vgt_bin)) >= 5


def test_every_verb_answers_help(vgt_bin):
    for verb in verbs(vgt_bin):
        for flag in ("--help", "-h"):
            r = subprocess.run([str(vgt_bin), verb, flag], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, f"vgt {verb} {flag} exited {r.returncode}: {r.stderr}"
            assert "usage" in r.stdout.lower(), f"vgt {verb} {flag} printed no usage: {r.stdout!r}"


def test_unknown_verb_is_a_usage_error(vgt_bin):
    r = subprocess.run([str(vgt_bin), "no-such-verb"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "no-such-verb" in r.stderr


def test_top_level_help_lists_every_verb(vgt_bin):
    r = subprocess.run([str(vgt_bin), "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for verb in verbs(vgt_bin):
        assert verb in r.stdout


@pytest.mark.parametrize("verb", ["info", "dump", "verify"])
def test_missing_file_is_an_io_error_naming_the_path(vgt_bin, tmp_path, verb):
    missing = tmp_path / "absent.vgt"
    r = subprocess.run([str(vgt_bin), verb, str(missing)], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "absent.vgt" in r.stderr
