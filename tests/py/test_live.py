"""Live: the engine on a trace stream while it is recorded.

Without a GPU, the program recorded is bench/live's live_feed: it plays a corpus trace back through the
capture's own stream (VGT_CAPTURE_FD, what the shim writes into `vgt record`), paced and stamped with the
time it sends each record, so `vgt record` (relay, live flushing, policies, --replay) and the replay run
exactly as with a real program; only the shim's interception is not exercised (tests/unit/test_capture_shim.c
does that, and bench/live/run.sh on the GPU machine does the whole path)."""
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from conftest import check_exit

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "corpus").glob("*.vgt"))


@pytest.fixture(scope="module")
def feed(build_dir):
    b = build_dir / "bench" / "live_feed"
    if not b.is_file():
        pytest.fail(f"{b} is missing: build the tree (cmake --build {build_dir})", pytrace=False)
    return b


def checks_line(text):
    m = re.search(r"checks: (\d+) passed, (\d+) failed, (\d+) not comparable.*?(\d+) bytes compared\)", text)
    assert m, text[-3000:]
    return m.groups()


def submissions_of(vgt, trace):
    return int(re.search(r"submissions:\s+(\d+)", vgt("info", trace, check=0).stdout).group(1))


@pytest.mark.parametrize("trace", CORPUS, ids=[t.stem for t in CORPUS])
def test_record_replay_checks_like_the_file(vgt, vgt_bin, feed, trace):
    """vgt record --replay=sim --check: the program's submissions replayed live, checked as a replay of the
    recorded file checks them, with counters per channel; the program's output and status untouched."""
    r = subprocess.run([str(vgt_bin), "record", "--replay=sim", "--check", "--", str(feed), str(trace)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == check_exit(trace), r.stderr[-3000:]
    assert r.stdout == ""   # live_feed prints nothing: nothing of the replay lands on the program's stdout
    f = vgt("replay", trace, "--backend", "sim", "--check", "--quiet", check=check_exit(trace))
    assert checks_line(r.stderr) == checks_line(f.stdout)
    assert ("result: ok" if not check_exit(trace) else "result: FAILED") in r.stderr
    chans = re.findall(r"channel 0x[0-9a-f]+: (\d+) submissions, (\d+) launches, (\d+) draws, (\d+) macro calls, "
                       r"(\d+) faults", r.stderr)
    assert chans and sum(int(c[0]) for c in chans) == submissions_of(vgt, trace)
    assert all(c[4] == "0" for c in chans)


def test_record_replay_counts_launches_draws_and_macro_calls(vgt_bin, feed):
    def totals(trace):
        r = subprocess.run([str(vgt_bin), "record", "--replay=sim", "--", str(feed), str(REPO / "corpus" / trace)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        rows = re.findall(r"channel 0x[0-9a-f]+: (\d+) submissions, (\d+) launches, (\d+) draws, (\d+) macro calls",
                          r.stderr)
        return [sum(int(x[i]) for x in rows) for i in range(4)]
    assert totals("many_launches.vgt")[:2] == [10178, 10000]   # vgt census: 10000 launches
    gl = totals("gl_egl.vgt")
    assert gl[2] >= 1 and gl[3] == 3131                          # a draw; vgt census: 3131 macro calls


def test_record_replay_without_a_backend_chooses_and_says(vgt_bin, feed):
    r = subprocess.run([str(vgt_bin), "record", "--replay", "--", str(feed), str(REPO / "corpus" / "gl_egl.vgt")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "vgt replay: using backend" in r.stderr


def test_record_replay_usage(vgt):
    assert "--check is for --replay" in vgt("record", "--check", "--", "true", check=2).stderr
    assert "not a backend" in vgt("record", "--replay=bogus", "--", "true", check=2).stderr
    assert "-o is not written" in vgt("record", "--replay", "-o", "x.vgt", "--", "true", check=2).stderr


def test_live_stream_reaches_the_consumer_per_submission(vgt_bin, feed):
    """Live flushing: each submission is in the consumer's hands while the program is still running (before,
    the stream was flushed every 1 MiB: nothing until the end for a trace this small)."""
    t0 = time.monotonic()
    rec = subprocess.Popen([str(vgt_bin), "record", "-o", "-", "--", str(feed), "--rate", "10", "--limit", "30",
                            str(REPO / "corpus" / "many_launches.vgt")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dump = subprocess.Popen([str(vgt_bin), "dump", "-", "--type", "GPFIFO_SUBMIT"], stdin=rec.stdout,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rec.stdout.close()
    first = dump.stdout.readline()
    t_first = time.monotonic() - t0
    rest = dump.stdout.read()
    dump.wait(timeout=60)
    rec.wait(timeout=60)
    t_end = time.monotonic() - t0
    assert b"GPFIFO_SUBMIT" in first
    assert rest.count(b"GPFIFO_SUBMIT") == 29
    assert t_end > 2.5                 # 30 submissions at 10 a second
    assert t_first < t_end - 1.5, (t_first, t_end)   # the first came long before the end


def _slow_consumer(vgt_bin, feed, policy, tmp_path):
    """Record streams_threads (3 MB of trace) into a consumer that starts reading only after 3 s. Returns
    (seconds the program ran, the trace the consumer got)."""
    done = tmp_path / f"done-{policy}"
    out = tmp_path / f"got-{policy}.vgt"
    t0 = time.time()
    cmd = f'"{feed}" "{REPO / "corpus" / "streams_threads.vgt"}"; date +%s.%N > "{done}"'
    rec = subprocess.Popen([str(vgt_bin), "record", "--live-policy", policy, "-o", "-", "--", "sh", "-c", cmd],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3)
    out.write_bytes(rec.stdout.read())
    rec.wait(timeout=120)
    assert rec.returncode == 0, rec.stderr.read()[-2000:]
    return float(done.read_text()) - t0, out, rec.stderr.read().decode()


def test_live_policy_block_makes_the_program_wait(vgt, vgt_bin, feed, tmp_path):
    took, got, _ = _slow_consumer(vgt_bin, feed, "block", tmp_path)
    assert took > 2.5, took            # it could not go on while nobody read
    assert submissions_of(vgt, got) == submissions_of(vgt, REPO / "corpus" / "streams_threads.vgt")


def test_live_policy_spill_never_blocks_and_loses_nothing(vgt, vgt_bin, feed, tmp_path):
    took, got, err = _slow_consumer(vgt_bin, feed, "spill", tmp_path)
    assert took < 2.5, took            # the records waited on disk, not the program
    src = REPO / "corpus" / "streams_threads.vgt"
    assert submissions_of(vgt, got) == submissions_of(vgt, src)
    mine = vgt("dump", got, "--jsonl", "--type", "GPFIFO_SUBMIT", check=0).stdout.splitlines()
    theirs = vgt("dump", src, "--jsonl", "--type", "GPFIFO_SUBMIT", check=0).stdout.splitlines()
    strip = lambda l: re.sub(r'"(seq|ts|chunk_offset)":\d+,?', "", l)
    assert [strip(l) for l in mine] == [strip(l) for l in theirs]   # every submission, in order, bytes intact
    diag = vgt("dump", got, "--type", "DIAGNOSTIC", check=0).stdout
    m = re.search(r"live policy spill: the consumer fell behind by up to (\d+) bytes", diag)
    assert m and int(m.group(1)) > 1 << 20, diag   # it did fall behind, and the trace says so
    assert "live policy spill" in err


def test_live_replay_checks_equal_and_census_says_what_it_misses(vgt, vgt_bin, feed):
    trace = REPO / "corpus" / "gl_egl.vgt"
    live = subprocess.run(f'"{feed}" "{trace}" | "{vgt_bin}" replay --live - --backend sim --check --census --quiet',
                          shell=True, capture_output=True, text=True, timeout=120)
    f = vgt("replay", trace, "--backend", "sim", "--check", "--census", "--quiet", check=0)
    assert checks_line(live.stdout) == checks_line(f.stdout)
    assert "starts at the end of the stream" not in live.stderr
    held = subprocess.run([str(vgt_bin), "replay", "-", "--backend", "sim", "--census", "--quiet"],
                          input=trace.read_bytes(), capture_output=True, timeout=120)
    assert b"starts at the end of the stream (--live starts at once)" in held.stderr   # it says why it waits
    assert "live census: the ranges the trace observes are watched from when they are read" in live.stdout
    assert re.search(r"live: planned over the \d+ records before the first submission", live.stdout)
    # the finished file's census has the rows the live one cannot have had
    assert int(re.search(r"(\d+) rows", f.stdout).group(1)) > int(re.search(r"(\d+) rows", live.stdout).group(1))


def test_latency_file_and_summary(vgt_bin, feed, tmp_path):
    trace = REPO / "corpus" / "vk_triangle.vgt"
    lat = tmp_path / "lat.tsv"
    r = subprocess.run(f'"{feed}" --rate 200 "{trace}" | "{vgt_bin}" replay --live - --backend sim --quiet '
                       f'--latency "{lat}"', shell=True, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [l.split("\t") for l in lat.read_text().splitlines() if not l.startswith("#")]
    assert len(rows) == 24   # vgt info: 24 submissions
    for row in rows:
        capture_ts, received, submit, doorbell, latency = map(int, row[3:8])
        assert capture_ts <= received <= submit <= doorbell and latency == doorbell - capture_ts
        assert latency < 10_000_000_000   # same clock, same machine: well under 10 s
    m = re.search(r"latency: 24 submissions; capture doorbell -> replayed doorbell p50 ([\d.]+) us, p99 ([\d.]+) us, "
                  r"max ([\d.]+) us", r.stdout)
    assert m and float(m.group(1)) <= float(m.group(2)) <= float(m.group(3))
    assert max(int(x[7]) for x in rows) / 1e3 == pytest.approx(float(m.group(3)), abs=0.1)


def on_terminal(cmd, env=None):
    """What a shell command line writes on stderr when that is a terminal (stdout to /dev/null)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    got = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    p.wait(timeout=60)
    os.close(master)
    return got.decode(errors="replace")


def test_counters_on_a_terminal(vgt_bin, feed):
    """stderr a terminal: the counters are drawn while the replay runs."""
    text = on_terminal(f'"{feed}" "{REPO / "corpus" / "gl_egl.vgt"}" | "{vgt_bin}" replay --live - --backend sim '
                       f'--quiet')
    assert re.search(r"live: 5 submissions, \d+ launches, 1 draws, 3131 macro calls, 0 faults", text), text[-2000:]
    assert "channel 0xbeef0100: 5 submissions" in text and "\x1b[" in text


@pytest.mark.parametrize("how", ["replay", "record"])
def test_live_counters_replace_the_progress_line(vgt_bin, feed, how):
    """One thing draws on the terminal: a live replay's counters, never the progress line the verbs show
    otherwise (VGT_PROGRESS_DELAY_MS=0 would make it appear at once), neither the replay's nor, with
    --replay, the record's (its child draws the counters on the same terminal)."""
    trace = REPO / "corpus" / "gl_egl.vgt"
    cmd = {"replay": f'"{feed}" "{trace}" | "{vgt_bin}" replay --live - --backend sim',
           "record": f'"{vgt_bin}" record --replay=sim -- "{feed}" "{trace}"'}[how]
    text = on_terminal(cmd, env=dict(os.environ, VGT_PROGRESS_DELAY_MS="0"))
    assert re.search(r"live: 5 submissions, \d+ launches, 1 draws", text), text[-2000:]
    assert not re.search(r"vgt (record|replay): [^\r\n]*/s", text), text[-2000:]   # every progress line has a rate
