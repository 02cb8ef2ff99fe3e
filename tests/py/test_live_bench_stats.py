"""bench/live/run.sh's summary of a latency file: the stages, and the split of each latency into queue
(waiting because the replay had not yet rung the previous doorbell when the capture trapped this one) and
own cost, with the submissions whose own cost was largest named (the stalls that start queues).

The summary is the bench's `stats` function, run here on a latency file written by hand: one stall of
1 ms in the engine (model_decode) at submission 1, then a replay slower than the program (300 ns per
submission against one every 100 ns), so the queue grows behind it."""
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_SH = REPO / "bench" / "live" / "run.sh"


def stats_function():
    text = RUN_SH.read_text()
    m = re.search(r"^stats\(\) \{\n.*?^\}\n", text, re.S | re.M)
    assert m, "bench/live/run.sh defines stats()"
    return m.group(0)


def latency_lines():
    # submission seq channel capture_ts received_ns submit_ns doorbell_ns latency_ns read_ns waited_ns
    rows = []
    cap, db = 1000, 0
    for i in range(200):
        read = max(cap + 50, db + 50)
        recv = read + 50
        sub = recv + (1_000_000 if i == 1 else 100)
        db = sub + 100
        rows.append((i, 10 + i, "0x5c00001c", cap, recv, sub, db, db - cap, read, 0))
        cap += 100 if i else 1000
    return rows


def run_stats(tmp_path, rows):
    lat = tmp_path / "x.lat"
    lat.write_text("# submission\tseq\tchannel\tcapture_ts\treceived_ns\tsubmit_ns\tdoorbell_ns\tlatency_ns\tread_ns\twaited_ns\n" +
                   "".join("\t".join(str(v) for v in r) + "\n" for r in rows))
    script = stats_function() + f'stats w "{lat}"\n'
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_queue_and_own_split_names_the_stall(tmp_path):
    rows = latency_lines()
    out = run_stats(tmp_path, rows)
    # the lines the bench always printed are still there
    assert re.search(r"^w: 200 submissions; latency p50 .* p99 .* max ", out, re.M), out
    assert re.search(r"^\s+model_decode\s+p50 .* p99 .* max\s+1000\.0 us$", out, re.M), out
    assert "dominant stage at p99: capture_to_read" in out, out
    # queue + own = latency for every submission; the queue is what the earlier stall left
    q = re.search(r"queue \(behind earlier\) p50\s+(\S+) us\s+p99\s+(\S+) us\s+max\s+(\S+) us", out)
    o = re.search(r"own \(this submission\)\s+p50\s+(\S+) us\s+p99\s+(\S+) us\s+max\s+(\S+) us", out)
    assert q and o, out
    lat_max = max(r[7] for r in rows) / 1e3
    queue_max = max(max(0, rows[i - 1][6] - rows[i][3]) for i in range(1, len(rows))) / 1e3
    assert float(q.group(3)) == round(queue_max, 1) and float(q.group(3)) <= lat_max
    assert float(o.group(3)) == 1000.2 and float(o.group(1)) == 0.3, out
    assert "p99 is mostly: queue behind earlier submissions" in out, out
    stalls = re.findall(r"^\s+stall: (.*)$", out, re.M)
    assert len(stalls) == 3, out
    assert stalls[0].startswith("submission 1 (seq 11, channel 0x5c00001c): own 1.0 ms") and "model_decode 1.0" in stalls[0], stalls


def test_no_queue_when_the_replay_keeps_up(tmp_path):
    # every submission is done before the next is captured: no queue, the p99 is the submissions' own cost
    rows = [(i, i, "0x5c00001c", 10_000 * i + 1000, 10_000 * i + 1100, 10_000 * i + 1200, 10_000 * i + 1300,
             300, 10_000 * i + 1050, 0) for i in range(50)]
    out = run_stats(tmp_path, rows)
    assert re.search(r"queue \(behind earlier\) p50\s+0\.0 us\s+p99\s+0\.0 us\s+max\s+0\.0 us", out), out
    assert "p99 is mostly: own cost" in out, out
