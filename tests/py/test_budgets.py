"""Budgets against traces in a valid format with hostile content (vgtrace.hostile, trace-format/python): every verb finishes
within its budget, quickly, with a clear message.

- MME work (vgt/mme.h vgt_mme_budget): a one-instruction infinite-loop macro called 3,000 times (in one
  submission, and once per submission), and a CHANNEL_METHODS record with 4 M macro-call writes, keep no
  verb busy: census, db, decode --expand-macros, draws, launches, mme, slice, timeline, report and replay
  (the sim backend, the synth lane's work extractor) stop running macros once a budget is spent and say which
  budget, where, and how many calls were not run.
- Channels: lookups are hashed (walker, model, MME trace, replay engine), so 100,000 channels take well
  under a second; the walker's limit of 65,536 channels is reported by name.
- Sim memory is allocated only when written: six 1 GiB copies inside a 1 TiB mapping of never-written
  memory run in 256 MiB of address space.
Each run has a wall-clock limit far below what the trace used to cost (minutes, or 5 GB of RSS)."""
import resource
import subprocess
import time

import pytest

from vgtrace import hostile

LIMIT_S = 30          # each verb: far below the minutes these traces took before the budgets


def run(vgt_bin, *args, limit=LIMIT_S):
    """(returncode, stdout, stderr, seconds, peak RSS in MiB) of one `vgt` run."""
    t0 = time.monotonic()
    p = subprocess.Popen([str(vgt_bin), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"vgt {' '.join(map(str, args))} ran past {limit} s")
    return p.returncode, out, err, time.monotonic() - t0


def run_capped(vgt_bin, *args, cap_mib, limit=LIMIT_S):
    """As run(), under an address-space limit of cap_mib (a peak RSS measured from here would include the
    forking test process's own pages)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (cap_mib << 20, cap_mib << 20))
    t0 = time.monotonic()
    r = subprocess.run([str(vgt_bin), *map(str, args)], capture_output=True, text=True, timeout=limit,
                       preexec_fn=cap)
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t0


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    return {
        "loop": hostile.runaway_macro(d / "loop.vgt"),
        "loop_each": hostile.runaway_macro(d / "loop_each.vgt", submissions=3000),
        "flood": hostile.macro_call_flood(d / "flood.vgt"),
        "channels": hostile.many_channels(d / "channels.vgt", channels=100_000),
        "copies": hostile.huge_copies(d / "copies.vgt"),
        "dir": d,
    }


def budget_said(err):
    assert "MME budget of " in err and "macro calls not run" in err, err[-2000:]


@pytest.mark.parametrize("name", ["loop", "loop_each"])
@pytest.mark.parametrize("verb", ["census", "mme", "decode", "draws", "launches"])
def test_runaway_macro_stops_at_the_budget(vgt_bin, traces, name, verb):
    extra = ["--expand-macros"] if verb == "decode" else []
    rc, out, err, secs = run(vgt_bin, verb, *extra, traces[name])
    assert rc == 1, (rc, err[-2000:])
    budget_said(err)
    # 8 runaway calls of 2^20 instructions reach the budget for failing calls; the rest are not run
    assert "per trace for calls that fail" in err and "2992 macro calls not run" in err, err


def test_runaway_macro_db(vgt_bin, traces):
    out = traces["dir"] / "loop.db"
    rc, _, err, _ = run(vgt_bin, "db", traces["loop"], "-o", out)
    assert rc == 1 and out.is_file(), err
    budget_said(err)


@pytest.mark.parametrize("verb", ["timeline", "report"])
def test_runaway_macro_timeline_and_report(vgt_bin, traces, verb):
    """Both walk the trace's rows (vgt/rows.h), whose MME trace has the budget: the output is written, the
    budget named on stderr (and in the report's page), exit 1."""
    out = traces["dir"] / f"loop.{verb}"
    extra = ["--no-replay"] if verb == "report" else []
    rc, _, err, _ = run(vgt_bin, verb, traces["loop"], "-o", out, *extra)
    assert rc == 1 and out.is_file(), (rc, err[-2000:])
    budget_said(err)
    assert "2992 macro calls not run" in err, err
    if verb == "report":
        assert "Not all macro calls ran: MME budget of" in out.read_text()


def test_runaway_macro_synth_lane(vgt_bin, traces):
    """The synth lane's work extractor has its own trackers under the budget: a submission whose calls it did
    not run cannot be synthesized (the work they build is missing) and runs verbatim, saying why."""
    rc, out, err, _ = run(vgt_bin, "replay", traces["loop"], "--backend", "sim", "--lane", "synth")
    assert "macro calls not run by the work extractor: MME budget of" in out + err, (out + err)[-2000:]
    assert "lanes: verbatim 1, synth 1" in out, out[-2000:]


def test_runaway_macro_replay(vgt_bin, traces):
    rc, out, err, _ = run(vgt_bin, "replay", traces["loop_each"], "--backend", "sim")
    assert "macro calls 8 (8 errors" in out and "macro calls not run: 2992" in out, out[-2000:]
    assert "MME budget of" in out + err


@pytest.mark.parametrize("verb", ["mme", "db", "slice"])
def test_macro_call_flood_stops_at_the_budget(vgt_bin, traces, verb):
    args = {"mme": [traces["flood"]], "db": [traces["flood"], "-o", traces["dir"] / "flood.db"],
            "slice": [traces["flood"], traces["dir"] / "flood-slice.vgt", "--submits", "1..1"]}[verb]
    rc, _, err, _ = run(vgt_bin, verb, *args)
    assert rc == 1, (rc, err[-2000:])
    budget_said(err)


@pytest.mark.parametrize("verb", ["decode", "census", "mme"])
def test_100k_channels_reach_the_channel_limit_at_once(vgt_bin, traces, verb):
    rc, _, err, secs = run(vgt_bin, verb, traces["channels"], limit=20)
    assert rc == 1 and "more than 65536 channels in one trace" in err, (rc, err[-500:])


@pytest.fixture(scope="module")
def ch60k(traces):
    return hostile.many_channels(traces["dir"] / "ch60k.vgt", channels=60_000)


@pytest.mark.parametrize("verb", ["census", "timeline"])
def test_60k_channels_decode_in_linear_time(vgt_bin, traces, ch60k, verb):
    """census walks them; timeline lays each channel's submissions out (its track, the next submission on it)."""
    args = ["--total"] if verb == "census" else ["-o", traces["dir"] / "ch60k.json", "--quiet"]
    rc, out, err, secs = run(vgt_bin, verb, ch60k, *args, limit=30)
    assert rc == 0, err[-500:]
    assert secs < 10, f"60,000 channels took {secs:.1f} s"


def test_100k_channels_replay(vgt_bin, traces):
    rc, out, err, secs = run(vgt_bin, "replay", traces["channels"], "--backend", "sim", limit=20)
    assert "more than 4096 channels" in out + err, (out + err)[-500:]
    assert secs < 10, f"replay of 100,000 channels took {secs:.1f} s"


def test_huge_copies_allocate_only_what_is_written(vgt_bin, traces):
    rc, out, err, secs = run_capped(vgt_bin, "replay", traces["copies"], "--backend", "sim", "--check", cap_mib=256)
    assert rc == 0, (out + err)[-1500:]
    assert "result: ok" in out, out[-1500:]
