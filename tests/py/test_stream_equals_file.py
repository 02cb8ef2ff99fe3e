"""Stream equals file: every verb that reads a TRACE (each verb of `vgt verbs` whose usage starts with
TRACE, so a verb added later is held to it too) gives, on a stream of every corpus trace, what it gives on
the finished file. A stream is one of: standard input from a pipe ('-'), a FIFO named as TRACE, or the file
itself while it is still being written (--follow). Each (verb, trace) pair runs once on the file and once
on one kind of stream, the kinds rotating so that every verb meets each kind and every trace too: one pass
per verb per trace, and each pair is its own test (parallel-friendly).

Outputs are compared as text after the name of the input is replaced (a summary names what it read), for
db as the rows of every table and for decompile as the files it writes; a replay's wall-clock timing line
is left out. Where a result needs the
end of the trace (db reads it three times; a planned replay holds the records back), the verb finishes at
the end: the result is still the file's."""
import os
import re
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "corpus").glob("*.vgt"))
KINDS = ["pipe", "fifo", "follow"]

# What each verb is asked (the default for any other verb: TRACE alone). A verb that writes its result
# to a file is asked for it on stdout where it can ('-o -'), else it writes OUTPUT below.
ARGS = {
    "info": ["--json"],
    "dump": ["--jsonl"],
    "replay": ["--backend", "sim", "--check", "--census", "--quiet"],
    "db": ["--no-fields"],
    "timeline": ["-o", "-", "--quiet"],
    "report": ["-o", "-", "--quiet"],
    "decompile": ["--submits", "0"],   # the first submission: every corpus trace has one
}
# Verbs whose result is a file (-o FILE, never stdout): its name for the run on the file and on the stream.
OUTPUT = {"db": ("file.db", "stream.db"), "decompile": ("file.c", "stream.c")}


def _vgt_bin():
    return Path(os.environ.get("VGT_BUILD", REPO / "build")).resolve() / "bin" / "vgt"


def trace_verbs():
    """The verbs whose first argument is a TRACE, from the CLI itself."""
    b = _vgt_bin()
    if not b.is_file():
        return ["info"]   # the vgt fixture then fails with the message saying the build is missing
    out = []
    for v in subprocess.run([str(b), "verbs"], capture_output=True, text=True).stdout.split():
        usage = subprocess.run([str(b), v, "--help"], capture_output=True, text=True).stdout.splitlines()
        if usage and usage[0].startswith(f"usage: vgt {v} TRACE"):
            out.append(v)
    return out


VERBS = trace_verbs()
PAIRS = [(v, t, KINDS[(i + j) % len(KINDS)]) for i, v in enumerate(VERBS) for j, t in enumerate(CORPUS)]


def normalize(text, names):
    for n in sorted(map(str, names), key=len, reverse=True):   # whole paths before '-' (inside them too)
        text = text.replace(n, "TRACE")
    text = re.sub(r'"trace":"[^"]*"', '"trace":"TRACE"', text)
    # wall-clock times of a replay differ from run to run; a planned replay of a stream says it waits for the end
    return "\n".join(l for l in text.splitlines()
                     if not l.lstrip().startswith("timing:") and "starts at the end of the stream" not in l)


def db_rows(path):
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    rows = {}
    for t in tables:
        q = f"SELECT * FROM {t}" + (" WHERE key != 'trace'" if t == "meta" else "")
        rows[t] = sorted(con.execute(q).fetchall(), key=repr)
    con.close()
    return rows


def run(vgt_bin, verb, trace_arg, extra, out_file, stdin_bytes=None, feeder=None):
    args = [str(vgt_bin), verb, str(trace_arg), *extra]
    if verb in OUTPUT:
        args += ["-o", str(out_file)] + (["--quiet"] if verb == "db" else [])
    p = subprocess.Popen(args, stdin=subprocess.PIPE if stdin_bytes is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if feeder:
        feeder.start()
    out, err = p.communicate(stdin_bytes, timeout=300)
    if feeder:
        feeder.join(timeout=60)
    return p.returncode, out.decode(), err.decode()


def fifo_feeder(fifo, data):
    def go():
        try:
            with open(fifo, "wb") as f:   # blocks until the verb opens the FIFO
                f.write(data)
        except BrokenPipeError:   # a verb done before the end (decompile of the first submission) closes it
            pass
    return threading.Thread(target=go)


def growing_feeder(path, data, first):
    """The rest of the trace appended in pieces while the verb follows the file; the last piece (the
    trailer with the chunks before it) in one write, as a writer closing the trace does."""
    def go():
        tail = max(first, len(data) - 4096)
        cuts = [first + (tail - first) * k // 4 for k in range(1, 4)] + [tail]
        at = first
        with open(path, "ab") as f:
            for c in cuts + [len(data)]:
                time.sleep(0.02)
                f.write(data[at:c])
                f.flush()
                at = c
    return threading.Thread(target=go)


@pytest.mark.parametrize("verb,trace,kind", PAIRS, ids=[f"{v}-{t.stem}-{k}" for v, t, k in PAIRS])
def test_stream_equals_file(vgt_bin, tmp_path, verb, trace, kind):
    extra = ARGS.get(verb, [])
    data = trace.read_bytes()
    out_names = OUTPUT.get(verb, ("file.out", "stream.out"))
    rc_f, out_f, err_f = run(vgt_bin, verb, trace, extra, tmp_path / out_names[0])
    assert rc_f in (0, 1), f"{verb} {trace.name}: exit {rc_f}\n{err_f[-2000:]}"
    if kind == "pipe":
        arg, feeder, stdin = "-", None, data
    elif kind == "fifo":
        arg = tmp_path / "trace.fifo"
        os.mkfifo(arg)
        feeder, stdin = fifo_feeder(arg, data), None
    else:
        arg = tmp_path / "growing.vgt"
        first = 4096 if len(data) > 8192 else len(data) // 2
        arg.write_bytes(data[:first])
        feeder, stdin = growing_feeder(arg, data, first), None
        extra = extra + ["--follow"]
    rc_s, out_s, err_s = run(vgt_bin, verb, arg, extra, tmp_path / out_names[1], stdin, feeder)
    assert rc_s == rc_f, f"{verb} {trace.name} ({kind}): exit {rc_s}, the file gave {rc_f}\n{err_s[-2000:]}"
    names = [trace, arg, *(tmp_path / n for n in out_names)]
    assert normalize(out_s, names) == normalize(out_f, names), f"{verb} {trace.name} ({kind}): stdout differs"
    assert normalize(err_s, names) == normalize(err_f, names), f"{verb} {trace.name} ({kind}): stderr differs"
    if verb == "db":
        assert db_rows(tmp_path / "stream.db") == db_rows(tmp_path / "file.db")
    if verb == "decompile" and rc_f == 0:   # the program (it names the trace and its memory file) and its memory
        f, s = ((tmp_path / n).read_text() for n in out_names)
        assert normalize(s, names) == normalize(f, names), f"{verb} {trace.name} ({kind}): {out_names[1]} differs"
        f, s = ((tmp_path / (n + ".mem")).read_bytes() for n in out_names)
        assert s == f, f"{verb} {trace.name} ({kind}): {out_names[1]}.mem differs"


def test_every_trace_verb_is_covered():
    """The verbs the issue names are among those tested (a verb that stops taking a TRACE would drop out)."""
    assert {"info", "dump", "verify", "decode", "census", "mme", "db", "replay", "draws", "launches", "timeline",
            "report", "decompile"} <= set(VERBS)
    for v in VERBS:   # each has --follow, the third kind of stream
        opts = subprocess.run([str(_vgt_bin()), "__options", v], capture_output=True, text=True).stdout.split()
        assert "--follow" in opts, f"vgt {v} has no --follow"
