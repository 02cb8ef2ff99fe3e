"""The progress line of long verbs (vgt/cli.h, progress.c): one line on stderr with what is done, the rate
and the time left, only when stderr is a terminal (a pty here), never when it is a pipe, never with
--quiet. VGT_PROGRESS_DELAY_MS=0 makes it appear at once (default: after half a second), so the small
corpus traces show it too."""
import os
import pty
import shutil
import subprocess

import pytest

from conftest import REPO

CORPUS = REPO / "corpus"
TRACE = CORPUS / "vadd.vgt"
BAR_WORDS = ("/s",)   # every bar shows a rate


def _env(**kw):
    return dict(os.environ, VGT_PROGRESS_DELAY_MS="0", **kw)


def run_on_pty(argv, cwd=None):
    """Run argv with stderr on a pseudo-terminal (stdout to /dev/null); returns (exit code, stderr bytes)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=_env(), cwd=cwd)
    os.close(slave)
    out = b""
    while True:
        try:
            d = os.read(master, 65536)
        except OSError:   # EIO: the last holder of the slave side exited
            break
        if not d:
            break
        out += d
    p.wait(timeout=300)
    os.close(master)
    return p.returncode, out


def run_on_pipe(argv, cwd=None):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=_env(), cwd=cwd, timeout=300)
    return r.returncode, r.stderr


def _cases(vgt_bin, tmp_path):
    small = tmp_path / "corpus"
    small.mkdir()
    shutil.copy(CORPUS / "vk_triangle.vgt", small / "vk_triangle.vgt")
    return {
        "db": ([vgt_bin, "db", TRACE, "-o", tmp_path / "t.sqlite"], "vgt db: "),
        "census": ([vgt_bin, "census", "--total", TRACE], "vgt census: "),
        "decode": ([vgt_bin, "decode", TRACE], "vgt decode: "),
        "replay": ([vgt_bin, "replay", TRACE, "--backend", "sim"], "vgt replay: "),
        "repack": ([vgt_bin, "repack", TRACE, tmp_path / "r.vgt"], "vgt repack: "),
        "slice": ([vgt_bin, "slice", TRACE, tmp_path / "s.vgt", "--submits", "5..9"], "vgt slice: "),
        "corpus": ([vgt_bin, "corpus", "check", small], "vgt corpus: "),
        "record": ([vgt_bin, "record", "-o", tmp_path / "true.vgt", "--", "true"], "vgt record: "),
    }


VERBS = ["db", "census", "decode", "replay", "repack", "slice", "corpus", "record"]


@pytest.mark.parametrize("verb", VERBS)
def test_progress_on_a_terminal(vgt_bin, tmp_path, verb):
    argv, prefix = _cases(vgt_bin, tmp_path)[verb]
    rc, err = run_on_pty([str(a) for a in argv])
    text = err.decode(errors="replace")
    bars = [seg for seg in text.split("\r") if seg.startswith(prefix) and "/s" in seg]
    assert bars, f"no progress line from vgt {verb} on a terminal: {text[-800:]!r}"
    assert "\x1b[K" in text, "the line is not erased to its end"
    assert text.rstrip("\n").endswith("\r\x1b[K") or "\r\x1b[K" in text, "the line is not erased at the end"
    if verb in ("db", "census", "decode", "replay", "repack", "slice"):
        # bytes of the trace: "N / TOTAL (P%)" with the file's size as the total
        assert any(" / " in b and "%)" in b for b in bars), bars[:3]


@pytest.mark.parametrize("verb", VERBS)
def test_no_progress_on_a_pipe(vgt_bin, tmp_path, verb):
    argv, prefix = _cases(vgt_bin, tmp_path)[verb]
    rc, err = run_on_pipe([str(a) for a in argv])
    assert b"\r" not in err and b"\x1b[K" not in err, err[-400:]


@pytest.mark.parametrize("verb", VERBS)
def test_quiet_turns_progress_off(vgt_bin, tmp_path, verb):
    argv, prefix = _cases(vgt_bin, tmp_path)[verb]
    argv = [str(a) for a in argv]
    at = argv.index("--") if "--" in argv else len(argv)
    argv.insert(at, "--quiet")
    rc, err = run_on_pty(argv)
    assert b"\x1b[K" not in err, err[-400:]
    assert not [s for s in err.split(b"\r") if s.startswith(prefix.encode()) and b"/s" in s], err[-400:]
