"""Completion forensics on a hand-built trace: a 4-entry ring whose GP_GET reads (at doorbells and at the
end of the capture, CHANNEL_PROGRESS) stage a PUT wrap, a GET wrap and a GET past the last recorded PUT;
`vgt info` counts them and lists them, `vgt verify` prints them as notes and still exits 0."""
import json
import struct

from vgtrace import writer

CLIENT, CH = 0xC1D00001, 0xBEEF0100


def submit(get, put0, put1, ts):
    n = (put1 - put0) % 4
    entries = [0x0000040000200000] * n           # 1 dword of push buffer at 0x200000
    return ("GPFIFO_SUBMIT", {"client": CLIENT, "channel": CH, "token": 1, "flags": 0, "gp_get_before": get,
                              "gp_put_before": put0, "gp_get_after": 0xFFFFFFFF, "gp_put_after": put1,
                              "entry_count": n, "segment_count": 1 if n else 0, "entries": entries,
                              "segments": [{"gpu_va": 0x200000, "flags": 0, "data": struct.pack("<I", 0)}] if n else []},
            ts)


def test_ring_events_in_info_and_verify(vgt, tmp_path):
    recs = [("CHANNEL", {"client": CLIENT, "parent": 2, "handle": CH, "class": 0xC86F, "ring_va": 0x100000,
                         "entries": 4, "userd_memory": 0, "userd_offset": 0, "userd_gpu_va": 0, "engine_type": 0,
                         "va_space": 0, "context_share": 0, "error_notifier": 0, "status": 0, "reserved": 0}, 1),
            submit(0, 0, 2, 2), submit(2, 2, 1, 3), submit(0, 1, 2, 4), submit(3, 2, 3, 5),
            ("CHANNEL_PROGRESS", {"client": CLIENT, "channel": CH, "gp_get": 3, "gp_put": 3, "flags": 1,
                                  "reserved": 0}, 6)]
    p = tmp_path / "gp.vgt"
    writer.write_trace(p, recs)
    gp = json.loads(vgt("info", "--json", p).stdout)["gp"]
    assert (gp["submissions"], gp["get_read"], gp["get_checked"]) == (4, 4, 5), gp
    assert (gp["progress"], gp["fetched_all"]) == (1, 1), gp
    assert (gp["put_wraps"], gp["get_wraps"], gp["get_past_put"]) == (1, 1, 1), gp
    assert [(e["kind"], e["seq"]) for e in gp["events"]] == [("PUT_WRAP", 2), ("GET_WRAP", 3), ("GET_PAST_PUT", 4)]
    past = gp["events"][2]
    assert (past["get"], past["put"], past["prev_get"], past["entries"]) == (3, 2, 0, 4)
    text = vgt("info", p).stdout
    assert "gp_get:       read at 4 of 4 doorbells" in text and "GET past PUT: 1" in text, text
    v = vgt("verify", p)
    assert v.returncode == 0
    notes = [line for line in v.stdout.splitlines() if line.startswith("note:")]
    assert len(notes) == 3 and "GET_PAST_PUT: GP_GET 3 is beyond the last recorded GP_PUT 2" in notes[2], v.stdout
    vj = json.loads(vgt("verify", "--json", p).stdout)
    assert vj["ok"] and vj["gp_event_count"] == 3 and vj["gp_events"][1]["kind"] == "GET_WRAP"
    assert vgt("verify", "-q", p).stdout == ""


def test_corpus_traces_have_no_gp_reads(vgt):
    """The corpus was recorded before GP_GET was read: nothing read, nothing checked, no false alarm."""
    from pathlib import Path
    gp = json.loads(vgt("info", "--json", Path(__file__).resolve().parents[2] / "corpus" / "vadd.vgt").stdout)["gp"]
    assert gp["get_read"] == 0 and gp["get_past_put"] == 0 and gp["get_wraps"] == 0
