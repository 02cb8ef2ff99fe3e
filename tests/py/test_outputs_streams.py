"""Outputs and streams, for every verb.

- An output never clobbers what is not its own: a file is written as a temporary beside the target and
  renamed over it only once complete, so a failed or interrupted write leaves the old target as it was and
  no temporary; a device or a FIFO is written to as a stream and stays what it is; a directory is refused;
  a database (which cannot be streamed) refuses a device, a FIFO and '-'.
- '-' is standard input for every verb that reads a trace (read from a pipe here, the harder case), and
  standard output for every trace output; no verb creates a file named '-'.
- Output that cannot be written (a full disk, a pipe closed early with SIGPIPE ignored) is an error, exit 2,
  naming standard output.
"""
import os
import signal
import sqlite3
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
SMALL = CORPUS / "gl_egl.vgt"      # 30 KB, 5 submissions
TRACE = CORPUS / "vk_compute.vgt"  # 320 KB, 24 submissions; MBs of decode output


def run(vgt_bin, *args, input=None, stdout=subprocess.PIPE, cwd=None, preexec_fn=None, timeout=120):
    return subprocess.run([str(vgt_bin), *map(str, args)], input=input, stdout=stdout, stderr=subprocess.PIPE,
                          cwd=cwd, preexec_fn=preexec_fn, timeout=timeout)


def verify_ok(vgt_bin, data):
    """data is a complete, valid trace (read from a pipe by `vgt verify -`)."""
    assert data[:4] == b"VGT1" or len(data) > 64, data[:16]
    r = run(vgt_bin, "verify", "-", input=data)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def entries(d):
    return sorted(p.name for p in Path(d).iterdir())


def char_device(path):
    """A character device node like /dev/null (the tests run as root), inside the test's directory."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


# The verbs that write a trace or a file at a path, as argument lists with OUT in place of the path.
TRACE_WRITERS = {
    "repack": ["repack", TRACE, "OUT"],
    "slice": ["slice", TRACE, "OUT", "--submits", "2..4"],
    "verify --salvage": ["verify", TRACE, "--salvage", "OUT"],
    "synth": ["synth", "-o", "OUT", "--submits", "3"],
}
ALL_WRITERS = dict(TRACE_WRITERS, **{
    "db": ["db", SMALL, "-o", "OUT"],
    "replay --census-json": ["replay", SMALL, "--backend", "sim", "--census", "--census-json", "OUT"],
})


def with_out(args, out):
    return [out if a == "OUT" else a for a in args]


# ---- 2. outputs never clobber what is not theirs ----

@pytest.mark.parametrize("name", sorted(ALL_WRITERS))
def test_device_target_stays_a_device(vgt_bin, tmp_path, name):
    dev = char_device(tmp_path / "null")
    r = run(vgt_bin, *with_out(ALL_WRITERS[name], dev))
    if name == "db":   # SQLite cannot stream: a clear refusal naming the path
        assert r.returncode == 2 and str(dev) in r.stderr.decode() and "regular file" in r.stderr.decode(), r.stderr
    else:
        assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISCHR(os.stat(dev).st_mode), f"{name} replaced the device node with a file"
    assert entries(tmp_path) == ["null"], "a temporary was left behind"


@pytest.mark.parametrize("name", sorted(TRACE_WRITERS))
def test_fifo_target_is_written_as_a_stream(vgt_bin, tmp_path, name):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = {}

    def drain():
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    r = run(vgt_bin, *with_out(TRACE_WRITERS[name], fifo), timeout=60)
    t.join(30)
    assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert "ok:" in verify_ok(vgt_bin, got["data"])
    assert entries(tmp_path) == ["fifo"]


def test_database_refuses_a_fifo_and_stdout(vgt_bin, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for out in (fifo, "-"):
        r = run(vgt_bin, "db", SMALL, "-o", out, cwd=tmp_path, timeout=30)
        assert r.returncode == 2 and f"'{out}'" in r.stderr.decode(), r.stderr
        assert r.stdout == b""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert entries(tmp_path) == ["fifo"]


@pytest.mark.parametrize("name", sorted(ALL_WRITERS))
def test_directory_target_refused(vgt_bin, tmp_path, name):
    d = tmp_path / "out"
    d.mkdir()
    (d / "keep").write_text("mine")
    r = run(vgt_bin, *with_out(ALL_WRITERS[name], d))
    assert r.returncode == 2, r.stderr.decode()
    assert str(d) in r.stderr.decode() and "directory" in r.stderr.decode(), r.stderr
    assert entries(tmp_path) == ["out"] and entries(d) == ["keep"] and (d / "keep").read_text() == "mine"


def small_disk(limit, sigxfsz):
    def setup():
        import resource
        signal.signal(signal.SIGXFSZ, sigxfsz)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


@pytest.mark.parametrize("name", sorted(TRACE_WRITERS))
def test_failed_write_leaves_target_intact(vgt_bin, tmp_path, name):
    """The disk fills up midway (a file size limit: EFBIG where a full disk says ENOSPC)."""
    out = tmp_path / "out.vgt"
    out.write_bytes(b"the old target")
    args = with_out(TRACE_WRITERS[name], out)
    if name == "synth":
        args = ["synth", "-o", out, "--submits", "400", "--stored"]
    r = run(vgt_bin, *args, preexec_fn=small_disk(8_000, signal.SIG_IGN))
    assert r.returncode == 2, r.stderr.decode()
    assert "File too large" in r.stderr.decode()
    assert entries(tmp_path) == ["out.vgt"], "a temporary was left behind"
    if name == "verify --salvage":   # a salvage keeps what it salvaged, as its message says
        assert "before it are intact" in r.stderr.decode()
        assert run(vgt_bin, "verify", out).returncode == 0, "the salvaged prefix is not a valid trace"
        return
    assert out.read_bytes() == b"the old target"
    assert "is left as it was" in r.stderr.decode() and "intact" not in r.stderr.decode(), r.stderr.decode()


def test_killed_by_the_size_limit_leaves_no_temporary(vgt_bin, tmp_path):
    out = tmp_path / "out.vgt"
    out.write_bytes(b"the old target")
    r = run(vgt_bin, "synth", "-o", out, "--submits", "400", "--stored",
            preexec_fn=small_disk(60_000, signal.SIG_DFL))
    assert r.returncode == -signal.SIGXFSZ
    assert out.read_bytes() == b"the old target"
    assert entries(tmp_path) == ["out.vgt"]


def test_broken_input_leaves_target_intact(vgt_bin, tmp_path):
    bad = tmp_path / "bad.vgt"
    data = bytearray(TRACE.read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = b"\xff" * 64
    bad.write_bytes(bytes(data))
    out = tmp_path / "out.vgt"
    out.write_bytes(b"the old target")
    r = run(vgt_bin, "repack", bad, out)
    assert r.returncode == 1, r.stderr.decode()
    assert out.read_bytes() == b"the old target"
    assert entries(tmp_path) == ["bad.vgt", "out.vgt"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_write_leaves_target_intact(vgt_bin, tmp_path, sig):
    out = tmp_path / "out.vgt"
    out.write_bytes(b"the old target")
    # the signal at its default disposition, as a terminal gives it: a suite started in the background
    # (`cmd &`) inherits SIGINT ignored, and a writer leaves an ignored signal alone (it then ran to the end)
    p = subprocess.Popen([str(vgt_bin), "synth", "-o", str(out), "--bytes", "8G"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    deadline = time.time() + 30
    while len(entries(tmp_path)) < 2 and time.time() < deadline:   # its temporary, beside the target
        time.sleep(0.01)
    assert len(entries(tmp_path)) == 2, "the writer never started"
    p.send_signal(sig)
    p.wait(30)
    assert p.returncode == -sig
    assert out.read_bytes() == b"the old target"
    assert entries(tmp_path) == ["out.vgt"], "an interrupted write left its temporary"


def test_regular_target_replaced_whole(vgt_bin, tmp_path):
    out = tmp_path / "out.vgt"
    out.write_bytes(b"x" * 10_000_000)   # longer than the new trace: nothing of it may remain
    r = run(vgt_bin, "repack", SMALL, out)
    assert r.returncode == 0, r.stderr.decode()
    assert out.read_bytes() == run(vgt_bin, "repack", SMALL, "-", cwd=tmp_path).stdout
    assert entries(tmp_path) == ["out.vgt"]


# ---- 3. '-' is standard input and standard output ----

def normalized(text, path):
    """What a verb prints about a trace, with its name replaced by '-' and the lines that differ between a
    file and a stream by nature (file size, index; replay timing) left out."""
    out = []
    for line in text.replace(str(path), "-").splitlines():
        if line.startswith(("file size:", "index:")) or "timing:" in line:
            continue
        out.append(line)
    return out


READERS = {
    "info": ["info", "IN"],
    "dump": ["dump", "IN", "--jsonl"],
    "verify": ["verify", "IN"],
    "decode": ["decode", "IN", "--submits", "3..6"],
    "census": ["census", "IN", "--json"],
    "mme": ["mme", "IN", "--calls"],
    "replay": ["replay", "IN", "--backend", "sim", "--check"],
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_stdin_reads_like_the_file(vgt_bin, name):
    args = READERS[name]
    a = run(vgt_bin, *[TRACE if x == "IN" else x for x in args])
    b = run(vgt_bin, *["-" if x == "IN" else x for x in args], input=TRACE.read_bytes())
    assert a.returncode == 0 and b.returncode == 0, (a.stderr.decode(), b.stderr.decode())
    assert normalized(b.stdout.decode(), "-") == normalized(a.stdout.decode(), TRACE)


def test_stdin_db(vgt_bin, tmp_path):
    a = run(vgt_bin, "db", TRACE, "-o", tmp_path / "a.sqlite", "--quiet")
    b = run(vgt_bin, "db", "-", "-o", tmp_path / "b.sqlite", "--quiet", input=TRACE.read_bytes())
    assert a.returncode == 0 and b.returncode == 0, b.stderr.decode()
    counts = []
    for name in ("a", "b"):
        con = sqlite3.connect(tmp_path / f"{name}.sqlite")
        try:
            counts.append([con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                           for t in ("records", "submissions", "methods", "events", "identity")])
            trace = con.execute("SELECT value FROM meta WHERE key = 'trace'").fetchone()[0]
        finally:
            con.close()
    assert counts[0] == counts[1] and counts[0][2] > 0
    assert trace == "-"
    assert entries(tmp_path) == ["a.sqlite", "b.sqlite"]


def test_stdin_slice_and_repack(vgt_bin, tmp_path):
    data = TRACE.read_bytes()
    run(vgt_bin, "slice", TRACE, tmp_path / "a.vgt", "--submits", "3..5")
    b = run(vgt_bin, "slice", "-", tmp_path / "b.vgt", "--submits", "3..5", input=data)
    assert b.returncode == 0, b.stderr.decode()
    # the text dump: the records, without chunk offsets (the identity, and so the header, names the input)
    dump = [run(vgt_bin, "dump", tmp_path / f"{n}.vgt").stdout for n in ("a", "b")]
    assert dump[0] == dump[1] and dump[0]
    r = run(vgt_bin, "repack", "-", tmp_path / "c.vgt", input=data)
    assert r.returncode == 0, r.stderr.decode()
    assert run(vgt_bin, "dump", tmp_path / "c.vgt").stdout == run(vgt_bin, "dump", TRACE).stdout


STDOUT_WRITERS = {
    "repack": ["repack", "IN", "-"],
    "slice": ["slice", "IN", "-", "--submits", "2..4"],
    "verify --salvage": ["verify", "IN", "--salvage", "-"],
}


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("name", sorted(STDOUT_WRITERS))
def test_stdout_output_is_a_trace_and_no_file_named_dash(vgt_bin, tmp_path, name, stdin):
    args = [("-" if stdin else TRACE) if a == "IN" else a for a in STDOUT_WRITERS[name]]
    r = run(vgt_bin, *args, cwd=tmp_path, input=TRACE.read_bytes() if stdin else None)
    assert r.returncode == 0, r.stderr.decode()
    verify_ok(vgt_bin, r.stdout)   # only the trace on stdout: any report went to stderr
    assert entries(tmp_path) == [], "a file was created"


def test_salvage_to_stdout_refuses_json(vgt_bin, tmp_path):
    r = run(vgt_bin, "verify", TRACE, "--salvage", "-", "--json", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == b"" and entries(tmp_path) == []


# ---- 4. write errors are reported ----

def tiny_corpus(tmp_path):
    d = tmp_path / "corpus"
    (d / "goldens").mkdir(parents=True)
    (d / SMALL.name).write_bytes(SMALL.read_bytes())
    for g in (CORPUS / "goldens").glob(SMALL.stem + ".*"):
        (d / "goldens" / g.name).write_bytes(g.read_bytes())
    (d / "manifest.json").write_text('{"traces": [{"trace": "corpus/%s"}]}' % SMALL.name)
    return d


PRINTERS = {
    "info": ["info", TRACE],
    "info --json": ["info", TRACE, "--json"],
    "dump": ["dump", TRACE],
    "verify": ["verify", TRACE],
    "verify --json": ["verify", TRACE, "--json"],
    "decode": ["decode", TRACE],
    "census": ["census", TRACE],
    "census --json": ["census", TRACE, "--json"],
    "mme": ["mme", TRACE],
    "replay": ["replay", SMALL, "--backend", "sim", "--check"],
    "replay --json": ["replay", SMALL, "--backend", "sim", "--json"],
    "corpus": ["corpus", "check", "CORPUS"],
    "db": ["db", SMALL, "-o", "OUT"],
    "repack": ["repack", SMALL, "OUT"],
    "synth": ["synth", "-o", "OUT", "--submits", "2"],
    "help": ["--help"],
}


@pytest.mark.parametrize("name", sorted(PRINTERS))
def test_full_disk_on_stdout_is_an_error(vgt_bin, tmp_path, name):
    args = [tiny_corpus(tmp_path) if a == "CORPUS" else tmp_path / "out" if a == "OUT" else a for a in PRINTERS[name]]
    with open("/dev/full", "wb") as full:
        r = run(vgt_bin, *args, stdout=full)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "standard output: No space left on device" in err, err
    assert err.count("standard output") == 1, err   # reported once


def ignore_sigpipe():
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


@pytest.mark.parametrize("args", [["decode", TRACE], ["dump", TRACE, "--jsonl"], ["census", TRACE],
                                  ["mme", TRACE, "--expand"], ["replay", TRACE, "--backend", "sim", "--verbose"]],
                         ids=["decode", "dump", "census", "mme", "replay"])
def test_closed_pipe_with_sigpipe_ignored_is_an_error(vgt_bin, args):
    p = subprocess.Popen([str(vgt_bin), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=ignore_sigpipe)
    p.stdout.close()   # the reader is gone before anything was written
    err = p.stderr.read().decode()
    p.wait(60)
    assert p.returncode == 2, err
    assert "standard output: Broken pipe" in err, err


def test_symbolic_link_target_keeps_the_link(vgt_bin, tmp_path):
    real = tmp_path / "real.vgt"
    real.write_bytes(b"old")
    link = tmp_path / "link.vgt"
    link.symlink_to(real)
    r = run(vgt_bin, "repack", SMALL, link)
    assert r.returncode == 0, r.stderr.decode()
    assert link.is_symlink() and "ok:" in verify_ok(vgt_bin, real.read_bytes())
    assert entries(tmp_path) == ["link.vgt", "real.vgt"]
    dangling = tmp_path / "dangling.vgt"
    dangling.symlink_to(tmp_path / "nowhere" / "x.vgt")
    r = run(vgt_bin, "repack", SMALL, dangling)
    assert r.returncode == 2 and str(dangling) in r.stderr.decode()
