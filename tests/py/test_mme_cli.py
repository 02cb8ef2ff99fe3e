"""`vgt mme` on a trace written here with vgtpy, whose macros are encoded here by a TU104 encoder written
independently of the C one (field layout from NVIDIA open-gpu-doc MME-MacroMethodExpander/tu104):
uploads, calls, a re-upload at the same index, an
illegal instruction; and on the corpus's real traces when they are present.

Method offsets (open-gpu-doc classes/3d/clcb97.h HOPPER_A): LOAD_MME_INSTRUCTION_RAM_POINTER 0x114,
LOAD_MME_START_ADDRESS_RAM_POINTER 0x11c, BEGIN 0x1618, END 0x1614, DRAW_VERTEX_ARRAY 0xd78,
CLEAR_SURFACE 0x19d0, CALL_MME_MACRO(j) 0x3800 + 8j.
"""
import json
import struct
from pathlib import Path

import pytest

import vgtrace

REPO = Path(__file__).resolve().parents[2]
CLIENT, CHANNEL, HOST, HOPPER_A = 1, 0x100, 0xC86F, 0xCB97
PB_VA = 0x7E00000000
BEGIN, END, DRAW_VERTEX_ARRAY, CLEAR_SURFACE = 0x1618, 0x1614, 0x0D78, 0x19D0
ADD, ZERO, LOAD0 = 0, 24, 28
OUT_ALU0, OUT_IMM0, OUT_IMM1 = 1, 5, 6
NOP_ALU = (ADD, ZERO, ZERO, ZERO, 0)


def group(alu0=NOP_ALU, alu1=NOP_ALU, out0=(0, 0), out1=(0, 0), end_next=False):
    """One 96-bit TU104 group as the three dwords it is uploaded as (high word first)."""
    fields = [(0, 0, int(end_next)), (4, 1, 0), (9, 5, ZERO)]
    for (op, dst, s0, s1, imm), base, imm_lo in ((alu0, 10, 30), (alu1, 46, 66)):
        fields += [(base + 4, base, op), (base + 9, base + 5, dst), (base + 14, base + 10, s0),
                   (base + 19, base + 15, s1), (imm_lo + 15, imm_lo, imm & 0xFFFF)]
    fields += [(84, 82, out0[0]), (88, 85, out0[1]), (91, 89, out1[0]), (95, 92, out1[1])]
    b = 0
    for hi, lo, v in fields:
        assert v < (1 << (hi - lo + 1))
        b |= v << lo
    return [(b >> 64) & 0xFFFFFFFF, (b >> 32) & 0xFFFFFFFF, b & 0xFFFFFFFF]


def emit_param(method, reg):
    """reg = next parameter; emit it to `method`."""
    return group(alu0=(ADD, reg, LOAD0, ZERO, 0), alu1=(ADD, ZERO, ZERO, ZERO, method >> 2), out0=(OUT_IMM1, OUT_ALU0))


def ending():
    return group(end_next=True) + group()


DRAW = emit_param(BEGIN, 0) + emit_param(DRAW_VERTEX_ARRAY, 1) + \
    group(alu1=(ADD, ZERO, ZERO, ZERO, END >> 2), out0=(OUT_IMM1, OUT_IMM0)) + ending()
CLEAR = emit_param(CLEAR_SURFACE, 0) + ending()
BAD = emit_param(CLEAR_SURFACE, 0) + group(alu0=(ADD, 30, ZERO, ZERO, 0)) + ending()   # R30 does not exist


class PB:
    def __init__(self):
        self.dw = []

    def header(self, op, sc, m, n):
        self.dw.append((op << 29) | (n << 16) | (sc << 13) | (m >> 2))

    def inc(self, sc, m, data):
        self.header(1, sc, m, len(data))
        self.dw += data

    def oneinc(self, sc, m, data):
        self.header(5, sc, m, len(data))
        self.dw += data

    def upload(self, j, at, body):
        """Bind macro j to `at` and upload body there; `at` counts 96-bit groups (TU104, as NVIDIA's driver)."""
        self.inc(0, 0x11C, [j, at])
        self.oneinc(0, 0x114, [at] + body)

    def call(self, j, params):
        self.oneinc(0, 0x3800 + 8 * j, params)
        return len(self.dw) - len(params)   # dword of the CALL_MME_MACRO value

    def bytes(self):
        return struct.pack("<%dI" % len(self.dw), *self.dw)


def build(path):
    """S0: uploads draw->0x22, clear->0x23, bad->0x24, packed back to back in groups; S1: calls 0x22(4,3),
    0x23(0x3c), 0x24(7); S2: clear re-uploaded and bound to 0x22, call 0x22(0x3d). Returns the call positions."""
    pbs = [PB(), PB(), PB()]
    pbs[0].inc(0, 0, [HOPPER_A])
    pbs[0].upload(0x22, 0, DRAW)
    pbs[0].upload(0x23, len(DRAW) // 3, CLEAR)
    pbs[0].upload(0x24, (len(DRAW) + len(CLEAR)) // 3, BAD)
    pos = {"draw": pbs[1].call(0x22, [4, 3]), "clear": pbs[1].call(0x23, [0x3C]), "bad": pbs[1].call(0x24, [7])}
    pbs[2].upload(0x22, (len(DRAW) + len(CLEAR) + len(BAD)) // 3, CLEAR)
    pos["redraw"] = pbs[2].call(0x22, [0x3D])
    recs = [("CHANNEL", dict(client=CLIENT, parent=0x10, handle=CHANNEL, **{"class": HOST}, ring_va=0x7D00000000,
                             entries=1024, engine_type=1), 1)]
    for k, pb in enumerate(pbs):
        data, va = pb.bytes(), PB_VA + 0x100000 * k
        entry = (va & 0xFFFFFFFC) | (((va >> 32) & 0xFF) | ((len(data) // 4) << 10)) << 32
        recs.append(("GPFIFO_SUBMIT", dict(client=CLIENT, channel=CHANNEL, token=7, gp_put_before=k, gp_put_after=k + 1,
                                           entries=[entry], segments=[{"gpu_va": va, "data": data}]), 10 + k))
    vgtrace.write_trace(path, recs)
    return pos


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    path = tmp_path_factory.mktemp("mme") / "mme.vgt"
    return path, build(path)


def mme_json(vgt, *args, check=1):
    return json.loads(vgt("mme", *args, "--json", check=check).stdout)


def test_macros_calls_and_names(vgt, hand):
    path, pos = hand
    doc = mme_json(vgt, path, "--expand")
    by_index = {}
    for m in doc["macros"]:
        by_index.setdefault(m["macro"], []).append(m)
    assert sorted(by_index) == [0x22, 0x23, 0x24]
    draw, clear = by_index[0x22][0], by_index[0x23][0]
    assert draw["name"] == "draw" and draw["named_from"] == "calls" and draw["dwords"] == len(DRAW)
    assert clear["name"] == "clear" and clear["dwords"] == len(CLEAR)
    # start addresses count groups: the clear body starts where the draw body ends
    assert clear["start"] == len(DRAW) // 3 and clear["start_dword"] == len(DRAW)
    # the same body re-uploaded at 0x22 is a second version of 0x22 with the clear body's hash
    redraw = by_index[0x22][1]
    assert redraw["hash"] == clear["hash"] != draw["hash"] and redraw["name"] == "clear"
    assert redraw["first_submission"] == 2 and draw["first_submission"] == 0
    assert any("0x1618" in line for line in draw["disassembly"])
    calls = {(c["submission"], c["dword"]): c for c in doc["calls"]}
    assert len(calls) == 4
    c = calls[(1, pos["draw"])]
    assert c["macro"] == 0x22 and c["version"] == draw["version"] and c["kind"] == "draw" and c["params"] == [4, 3]
    assert [(e["name"], e["value"]) for e in c["emits"]] == [("BEGIN", 4), ("DRAW_VERTEX_ARRAY", 3), ("END", 0)]
    c = calls[(2, pos["redraw"])]
    assert c["version"] == redraw["version"] and [(e["name"], e["value"]) for e in c["emits"]] == [("CLEAR_SURFACE", 0x3D)]
    assert c["emits"][0]["decoded"]["method"] == "CLEAR_SURFACE"


def test_errors_with_pc_and_position(vgt, hand):
    path, pos = hand
    doc = mme_json(vgt, path)
    assert doc["errors_total"] == 1 and doc["total"]["call_errors"] == 1
    assert doc["total"]["objects"] == 1 and doc["total"]["channels"] == 1
    e = doc["errors"][0]
    assert e["class"] == "ILLEGAL_OPCODE" and e["pc"] == 1 and e["macro"] == 0x24
    assert e["seq"] == 2 and e["entry"] == 0 and e["dword"] == pos["bad"]   # records: channel 0, S0 1, S1 2
    text = vgt("mme", path, check=1).stdout
    assert "ILLEGAL_OPCODE at pc 1" in text and '"draw"' in text


def test_window_and_macro_filters(vgt, hand):
    path, _ = hand
    # which macros does submission 1 release: 0x22 (draw), 0x23 (clear), 0x24 (the bad one, which emits
    # CLEAR_SURFACE before its illegal instruction)
    doc = mme_json(vgt, path, "--submits", "1")
    rows = [(r["submission"], r["macro"], r["kind"], r["calls"]) for r in doc["per_submission"]]
    assert rows == [(1, 0x22, "draw", 1), (1, 0x23, "clear", 1), (1, 0x24, "clear", 1)]
    per_macro = [(m["macro"], m["kind"], m["calls"], m["submissions"]) for m in doc["per_macro"]]
    assert per_macro == [(0x22, "draw", 1, 1), (0x23, "clear", 1, 1), (0x24, "clear", 1, 1)]
    # submission 2 runs 0x22 again, now with the clear body; no error in that window: exit 0
    doc = mme_json(vgt, path, "--submits", "2", "--macro", "0x22", check=0)
    assert [(r["macro"], r["kind"]) for r in doc["per_submission"]] == [(0x22, "clear")]
    assert {m["macro"] for m in doc["macros"]} == {0x22}
    # over the whole trace 0x22 ran twice, once per version
    doc = mme_json(vgt, path, "--macro", "0x22", check=0)
    assert [(m["version"], m["kind"], m["calls"]) for m in doc["per_macro"]] == \
        [(doc["macros"][0]["version"], "draw", 1), (doc["macros"][1]["version"], "clear", 1)]


def test_usage(vgt, hand, tmp_path):
    r = vgt("mme", "--help", check=0)
    assert "usage: vgt mme TRACE" in r.stdout
    assert vgt("mme", check=2).returncode == 2
    assert vgt("mme", hand[0], "--macro", "256", check=2).returncode == 2
    assert vgt("mme", hand[0], "--bogus", check=2).returncode == 2
    assert vgt("mme", tmp_path / "missing.vgt", check=2).returncode == 2


@pytest.mark.parametrize("name", ["gl_egl.vgt", "vk_triangle.vgt", "vk_compute.vgt"])
def test_corpus_macros_simulate_cleanly(vgt, name):
    path = REPO / "corpus" / name
    if not path.is_file():
        pytest.skip(f"corpus trace {name} not captured yet")
    doc = mme_json(vgt, path, "--no-disasm", check=0)
    assert doc["errors_total"] == 0 and doc["total"]["calls"] > 0
    assert doc["total"]["unbound_calls"] == 0
    assert any(m["calls"] for m in doc["macros"])


def test_corpus_compute_runs_code_uploaded_through_3d(vgt):
    """vk_compute: HOPPER_COMPUTE_A (0xCBC0) calls macros whose code only HOPPER_A (0xCB97) uploaded: the
    channel's one instruction RAM, with start addresses in groups, makes those calls run cleanly."""
    path = REPO / "corpus" / "vk_compute.vgt"
    if not path.is_file():
        pytest.skip("corpus trace vk_compute.vgt not captured yet")
    doc = mme_json(vgt, path, "--no-disasm", "--calls", check=0)
    compute = [c for c in doc["calls"] if c["class"] == 0xCBC0]
    assert compute and all(c["status"] == "VGT_OK" and c["version"] is not None for c in compute)
    assert all(m["start_dword"] == 3 * m["start"] for m in doc["macros"] if m["format"] == "tu104")


def test_corpus_calls_that_leave_parameters_unread(vgt):
    """vk_nostore: NVIDIA's driver calls a 3-instruction macro with 4 parameters that reads 2 and exits, 5 times.
    The TU104 MME discards the rest with the call: no error, but each such call says how many it left
    ("params_read" per call, "params_left_calls" in the total, "N of M params unread" in the text)."""
    path = REPO / "corpus" / "vk_nostore.vgt"
    if not path.is_file():
        pytest.skip("corpus trace vk_nostore.vgt not captured yet")
    doc = mme_json(vgt, path, "--no-disasm", "--calls", check=0)
    left = [c for c in doc["calls"] if c["status"] == "VGT_OK" and c["params_read"] < c["nparams"]]
    assert doc["errors_total"] == 0
    assert doc["total"]["params_left_calls"] == len(left) == 5
    assert {(c["macro"], c["nparams"], c["params_read"], c["instructions"]) for c in left} == {(0x53, 4, 2, 3)}
    assert all(c["params_read"] == c["nparams"] for c in doc["calls"] if c not in left and c["status"] == "VGT_OK")
    text = vgt("mme", path, "--no-disasm", "--calls", check=0).stdout
    assert text.count("2 of 4 params unread") == 5 and "5 calls left parameters unread" in text
