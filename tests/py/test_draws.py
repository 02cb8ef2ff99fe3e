"""`vgt draws`: the pipeline state of each draw, its shader program headers and the lints, on a trace
written here by hand (one draw per lint, each beside the same state with one thing changed, and normal
draws that must not be flagged), and the JSON contract on the corpus's real traces.

Method offsets and fields (NVIDIA open-gpu-doc classes/3d/clcb97.h HOPPER_A): SET_RASTER_ENABLE 0x037c (V 0), SET_PIPELINE_SHADER(j)
0x2000+64j (ENABLE 0, TYPE 7:4), SET_PIPELINE_REGISTER_COUNT(j) 0x200c+64j, SET_PIPELINE_PROGRAM_ADDRESS_A/B(j)
0x2014/0x2018+64j, SET_COLOR_TARGET_A/B/WIDTH/HEIGHT/FORMAT(j) 0x800..0x810+64j, SET_CT_SELECT 0x121c
(TARGET_COUNT 3:0, TARGETn 6+3n:4+3n), SET_CT_WRITE(n) 0x1a00+4n (R 0, G 4, B 8, A 12),
SET_VIEWPORT_CLIP_HORIZONTAL/VERTICAL(0) 0xc00/0xc04 (WIDTH/HEIGHT 31:16), SET_SCISSOR_ENABLE/HORIZONTAL/
VERTICAL(0) 0xe00/0xe04/0xe08 (MIN 15:0, MAX 31:16), CLEAR_SURFACE 0x19d0 (R..A 2..5, MRT_SELECT 9:6),
BEGIN 0x1618, SET_VERTEX_ARRAY_START 0xd74, DRAW_VERTEX_ARRAY 0xd78, END 0x1614.
SPH bits (open-gpu-doc Shader-Program-Header.html): SphType 4:0, Version 9:5, ShaderType 13:10, VTG
OmapPosition 428..431 and OmapGenericVector 432.., PS OmapTarget 576..607.
"""
import json
from pathlib import Path

import pytest

import vgtrace
from test_census import gp_entry, set_bits
from test_mme_cli import CLEAR, DRAW, PB

REPO = Path(__file__).resolve().parents[2]
CLIENT, CHANNEL, HOST, HOPPER_A = 1, 0x100, 0xC86F, 0xCB97
PB_VA, MEM_VA = 0x7E00000000, 0x7F00000000
VS, PS, PS_NOOUT, NEVER_WRITTEN = MEM_VA, MEM_VA + 0x200, MEM_VA + 0x400, MEM_VA + 0x8000
UNMAPPED = 0x6600000000
RT, OTHER_RT = 0x7F00100000, 0x7F00200000


def sph(ps, outputs=True):
    b = bytearray(128)
    set_bits(b, 4, 0, 2 if ps else 1)
    set_bits(b, 9, 5, 4)
    set_bits(b, 13, 10, 5 if ps else 1)
    if outputs and ps:
        set_bits(b, 579, 576, 0xF)                 # OmapTarget[0] RGBA
    elif outputs:
        set_bits(b, 431, 428, 0xF)                 # OmapPosition
        set_bits(b, 435, 432, 0xF)                 # OmapGenericVector[0]
    return bytes(b)


def state(pb, **change):
    """The state of a draw that stores: vertex and pixel stages, one 64x64 target, viewport, scissor."""
    s = dict(ps_shader=0x51, vs_prog=VS, ps_prog=PS, ct_select=0x1, ct_write=0x1111, vp=64 << 16, scissor=64 << 16)
    s.update(change)
    pb.inc(0, 0x2000 + 64, [0x11])
    pb.inc(0, 0x2014 + 64, [s["vs_prog"] >> 32, s["vs_prog"] & 0xFFFFFFFF])
    pb.inc(0, 0x200C + 64, [16])
    pb.inc(0, 0x2000 + 5 * 64, [s["ps_shader"]])
    pb.inc(0, 0x2014 + 5 * 64, [s["ps_prog"] >> 32, s["ps_prog"] & 0xFFFFFFFF])
    pb.inc(0, 0x800, [RT >> 32, RT & 0xFFFFFFFF, 64, 64, 0xD5])
    pb.inc(0, 0x121C, [s["ct_select"]])
    pb.inc(0, 0x1A00, [s["ct_write"]])
    pb.inc(0, 0xC00, [s["vp"], s["vp"]])
    pb.inc(0, 0xE00, [1, s["scissor"], s["scissor"]])


def draw(pb, count=3):
    pb.inc(0, 0x1618, [4])
    pb.inc(0, 0xD74, [0, count])
    pb.inc(0, 0x1614, [0])


def clear_other(pb):
    """Clear OTHER_RT (slot 1 selected as the first target), then select slot 0 again."""
    pb.inc(0, 0x840, [OTHER_RT >> 32, OTHER_RT & 0xFFFFFFFF, 64, 64, 0xD5])
    pb.inc(0, 0x121C, [0x1 | (1 << 4)])
    pb.inc(0, 0x19D0, [0x3C])
    pb.inc(0, 0x121C, [0x1])


# (expected lint or None, how the submission is built)
CASES = [
    (None, lambda pb: (state(pb), draw(pb))),
    ("stage_disabled", lambda pb: (state(pb, ps_shader=0x50), draw(pb))),
    ("stage_disabled", lambda pb: (state(pb), pb.inc(0, 0x037C, [0]), draw(pb), pb.inc(0, 0x037C, [1]))),
    ("sph_no_outputs", lambda pb: (state(pb, ps_prog=PS_NOOUT), draw(pb))),
    ("no_render_target", lambda pb: (state(pb, ct_select=0), draw(pb))),
    ("write_mask_zero", lambda pb: (state(pb, ct_write=0), draw(pb))),
    ("viewport_zero", lambda pb: (state(pb, vp=0), draw(pb))),
    ("scissor_zero", lambda pb: (state(pb, scissor=0), draw(pb))),
    ("clear_target_mismatch", lambda pb: (state(pb), clear_other(pb), draw(pb))),
    ("program_unmapped", lambda pb: (state(pb, vs_prog=UNMAPPED), draw(pb))),
    ("program_never_written", lambda pb: (state(pb, vs_prog=NEVER_WRITTEN), draw(pb))),
    ("zero_count", lambda pb: (state(pb), draw(pb, count=0))),
    (None, lambda pb: (state(pb), pb.call(0x22, [4, 3]))),          # a draw a macro issues
]


def build(path, with_window=True):
    """Submission 0 binds HOPPER_A and uploads a draw macro (0x22) and a clear macro (0x23); then one
    submission per case; last, a submission that binds programs and calls the clear macro but never draws."""
    pbs = [PB()]
    pbs[0].inc(0, 0, [HOPPER_A])
    pbs[0].upload(0x22, 0, DRAW)
    pbs[0].upload(0x23, len(DRAW) // 3, CLEAR)
    for _, make in CASES:
        pb = PB()
        make(pb)
        pbs.append(pb)
    if with_window:
        pb = PB()
        state(pb)
        pb.call(0x23, [0x3C])
        pbs.append(pb)
    recs = [("CHANNEL", dict(client=CLIENT, parent=0x10, handle=CHANNEL, **{"class": HOST}, ring_va=0x7D00000000,
                             entries=1024, engine_type=1), 1),
            ("ENGINE_OBJECT", {"client": CLIENT, "channel": CHANNEL, "handle": 0x200, "class": HOPPER_A}, 2),
            ("GPU_MAP", dict(client=CLIENT, device=0x20, va_space=0x30, memory=0x40, gpu_va=MEM_VA, length=4 << 20,
                             source=4), 3),
            ("MEMORY", dict(gpu_va=VS, reason=0, memory=0x40, data=sph(False)), 4),
            ("MEMORY", dict(gpu_va=PS, reason=0, memory=0x40, data=sph(True)), 5),
            ("MEMORY", dict(gpu_va=PS_NOOUT, reason=0, memory=0x40, data=sph(True, outputs=False)), 6)]
    for k, pb in enumerate(pbs):
        data, va = pb.bytes(), PB_VA + 0x100000 * k
        recs.append(("GPFIFO_SUBMIT", dict(client=CLIENT, channel=CHANNEL, token=7, gp_put_before=k, gp_put_after=k + 1,
                                           entries=[gp_entry(va, len(data) // 4)],
                                           segments=[{"gpu_va": va, "data": data}]), 10 + k))
    vgtrace.write_trace(path, recs)


def draws_json(vgt, *args, rc=None):
    r = vgt("draws", *args, "--json")
    if rc is not None:
        assert r.returncode == rc, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    path = tmp_path_factory.mktemp("draws") / "draws.vgt"
    build(path)
    return path


def test_each_lint_fires_alone(vgt, hand):
    doc = draws_json(vgt, hand, rc=1)
    draws = doc["draws"]
    assert len(draws) == len(CASES)
    for d, (want, _) in zip(draws, CASES):
        codes = [l["code"] for l in d["lints"]]
        assert codes == ([want] if want else []), f"draw {d['draw']} (submission {d['submission']}): {d['lints']}"
        for l in d["lints"]:
            assert l["message"]                      # evidence, not just a code
    # every draw lint the help lists has a case here
    help_text = vgt("draws", "--help").stdout
    for code in ("stage_disabled", "sph_no_outputs", "no_render_target", "write_mask_zero", "viewport_zero",
                 "scissor_zero", "clear_target_mismatch", "program_unmapped", "program_never_written", "zero_count"):
        assert code in help_text and code in {w for w, _ in CASES}


def test_state_at_the_draw(vgt, hand):
    d = draws_json(vgt, hand)["draws"][0]
    assert d["submission"] == 1 and d["kind"] == "draw" and d["window"]["entry"] == 0
    assert d["window"]["bytes"] == d["window"]["dwords"] * 4 > 0
    stages = {s["stage"]: s for s in d["stages"]}
    assert stages[1]["enabled"] is True and stages[1]["program_va"] == VS and stages[1]["register_count"] == 16
    assert stages[5]["enabled"] is True and stages[5]["program_va"] == PS
    assert stages[5]["sph"]["shader_type"] == "PIXEL" and stages[5]["sph"]["version"] == 4
    assert stages[5]["sph"]["omap_target"] == "0xf" and stages[5]["sph"]["no_outputs"] is False
    assert stages[1]["sph"]["shader_type"] == "VERTEX" and stages[1]["sph"]["omap_position"] == "0xf"
    assert stages[2]["enabled"] is None and stages[2]["sph"] is None    # never set: unknown, not disabled
    rt = d["render_targets"]
    assert len(rt) == 1 and rt[0]["va"] == RT and rt[0]["width"] == 64 and rt[0]["format_name"] == "A8B8G8R8"
    assert rt[0]["write_mask"] == 15
    assert d["viewport"]["width"] == 64 and d["scissor"]["xmax"] == 64
    assert d["primitive"]["count"] == 3 and d["primitive"]["topology"] == "TRIANGLES"
    # the state of the disabled-pixel case is its own, not the next submission's
    assert draws_json(vgt, hand)["draws"][1]["stages"][5]["enabled"] is False


def test_macro_draw_and_window(vgt, hand):
    doc = draws_json(vgt, hand)
    d = doc["draws"][-1]
    assert d["origin"] == "macro" and d["lints"] == []
    assert [m["macro"] for m in d["macros"]] == [0x22] and d["macros"][0]["name"] == "draw"
    assert d["stages"][5]["sph"]["shader_type"] == "PIXEL"
    [w] = doc["windows"]
    assert w["submission"] == len(CASES) + 1
    assert [m["macro"] for m in w["macros"]] == [0x23]
    assert [l["code"] for l in w["lints"]] == ["draw_macro_not_called"]
    assert "0x22" in w["lints"][0]["message"]


def test_filters(vgt, hand, tmp_path):
    one = draws_json(vgt, hand, "--draw", "4")
    assert [d["draw"] for d in one["draws"]] == [4] and one["draws"][0]["lints"][0]["code"] == "no_render_target"
    sub = draws_json(vgt, hand, "--submits", "2..3")
    assert [d["submission"] for d in sub["draws"]] == [2, 3]
    assert vgt("draws", hand, "--draw", "x").returncode == 2
    assert vgt("draws", hand, "--bogus").returncode == 2
    text = vgt("draws", hand).stdout
    assert "LINT write_mask_zero" in text and "draw_macro_not_called" in text
    # a trace where nothing is wrong exits 0
    clean = tmp_path / "clean.vgt"
    build(clean, with_window=False)
    assert vgt("draws", clean, "--submits", "1").returncode == 0


CORPUS = [REPO / "corpus" / n for n in ("vk_triangle.vgt", "gl_egl.vgt")]


@pytest.mark.parametrize("trace", CORPUS, ids=lambda p: p.stem)
def test_corpus_json_contract(vgt, trace):
    if not trace.exists():
        pytest.skip("corpus trace not present")
    doc = draws_json(vgt, trace, rc=0)      # normal draws: no lint, no quiet window
    assert doc["total"]["draws"] >= 1 and doc["windows"] == []
    for d in doc["draws"]:
        for key in ("draw", "submission", "seq", "window", "stages", "render_targets", "macros", "lints"):
            assert key in d
        assert d["lints"] == []
        assert set(d["window"]) >= {"seq", "entry", "va", "dwords", "bytes"}
        for s in d["stages"]:
            assert set(s) >= {"stage", "enabled", "program_va", "sph"}
            assert s["sph"] is None or {"version", "shader_type"} <= set(s["sph"])
        ps = d["stages"][5]
        assert ps["enabled"] is True and ps["sph"]["shader_type"] == "PIXEL" and ps["sph"]["version"] == 4
        assert int(ps["sph"]["omap_target"], 16) != 0
        assert d["stages"][1]["sph"]["shader_type"] == "VERTEX"
        assert d["render_targets"] and d["render_targets"][0]["write_mask"] == 15
