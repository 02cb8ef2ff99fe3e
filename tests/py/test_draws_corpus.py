"""`vgt draws` on the two corpus traces made for it: vk_nostore and gl_nostore (corpus/workloads), recorded on
the H200. Each draws the same triangle six times, one draw per submission, each after a clear to black:
normal, color write mask 0, a fragment shader that discards everything, rasterizer discard, a 0x0 scissor,
normal again; on the GPU only the two normal draws stored pixels (RESULT ... stored=2). Each quiet draw must
be flagged with its reason and the normal ones with nothing; `vgt db` keeps the same lints.

What the real traces show (and the hand-built traces of test_draws.py do not):
- Vulkan's color write mask is pipeline state: the driver compiles that pipeline's pixel shader without
  color outputs (SPH OmapTarget 0, KillsPixels 0), so its draw has sph_no_outputs beside write_mask_zero;
  GL's glColorMask is not part of the program, so its draw has write_mask_zero alone.
- The discarding shader is recognised from its SPH alone: OmapTarget 0 (the writes after `discard` are
  gone) and KillsPixels 1; the lint names both.
- Rasterizer discard is SET_RASTER_ENABLE V=0 in both drivers.
"""
import json
import sqlite3
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CASES = ["normal", "write_mask_zero", "discard", "rasterizer_discard", "scissor_zero", "normal_again"]
EXPECTED = {
    "vk_nostore": [set(), {"write_mask_zero", "sph_no_outputs"}, {"sph_no_outputs"}, {"stage_disabled"},
                   {"scissor_zero"}, set()],
    "gl_nostore": [set(), {"write_mask_zero"}, {"sph_no_outputs"}, {"stage_disabled"}, {"scissor_zero"}, set()],
}
PIXEL = 5


def draws(vgt, name):
    r = vgt("draws", CORPUS / f"{name}.vgt", "--json", "--no-launches", check=1)   # 1: lints fired
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_quiet_draw_has_its_lint_and_the_normal_ones_none(vgt, name):
    doc = draws(vgt, name)
    got = [{l["code"] for l in d["lints"]} for d in doc["draws"]]
    assert got == EXPECTED[name], dict(zip(CASES, got))
    # one draw per submission, in the order the program ran the cases
    subs = [d["submission"] for d in doc["draws"]]
    assert subs == sorted(subs) and len(set(subs)) == 6
    assert doc["total"] == {"draws": 6, "launches": 0, "linted": 4, "windows": 0}
    assert doc["windows"] == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_lints_carry_their_evidence(vgt, name):
    d = draws(vgt, name)["draws"]
    msg = {c: {l["code"]: l["message"] for l in x["lints"]} for c, x in zip(CASES, d)}
    assert "SET_CT_WRITE R/G/B/A=0" in msg["write_mask_zero"]["write_mask_zero"]
    assert "SET_RASTER_ENABLE V=0" in msg["rasterizer_discard"]["stage_disabled"]
    assert "x 0..0, y 0..0" in msg["scissor_zero"]["scissor_zero"]
    assert d[4]["scissor"]["enable"] and not d[3]["raster_enable"] and d[0]["raster_enable"]
    # the discard: no color output and KillsPixels in the SPH, named in the message
    ps = d[2]["stages"][PIXEL]
    assert ps["enabled"] and ps["sph_state"] == "decoded"
    assert ps["sph"]["omap_target"] == "0x0" and ps["sph"]["kills_pixels"] and ps["sph"]["no_outputs"]
    assert "KillsPixels=1" in msg["discard"]["sph_no_outputs"] and "discards" in msg["discard"]["sph_no_outputs"]
    # the normal draws: a pixel shader writing RGBA of target 0, not killing, a target with every component
    for x in (d[0], d[5]):
        s = x["stages"][PIXEL]["sph"]
        assert s["omap_target"] == "0xf" and not s["kills_pixels"] and not s["no_outputs"]
        assert [t["write_mask"] for t in x["render_targets"]] == [0xF]
    if name == "vk_nostore":   # the write-mask pipeline's shader writes nothing, but does not kill either
        s = d[1]["stages"][PIXEL]["sph"]
        assert s["no_outputs"] and not s["kills_pixels"]
        assert "discards" not in msg["write_mask_zero"]["sph_no_outputs"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_db_keeps_the_same_lints(vgt, name, tmp_path):
    out = tmp_path / f"{name}.sqlite"
    vgt("db", CORPUS / f"{name}.vgt", "-o", out, "-q", check=0)
    db = sqlite3.connect(out)
    rows = db.execute("SELECT l.draw, l.code FROM draw_lints l JOIN draw_state d ON d.draw = l.draw "
                      "WHERE d.kind = 'draw' ORDER BY l.draw, l.idx").fetchall()
    draws_ = [r[0] for r in db.execute("SELECT draw FROM draw_state WHERE kind = 'draw' ORDER BY draw")]
    got = [{code for d, code in rows if d == n} for n in draws_]
    assert got == EXPECTED[name]


# The derived traces (corpus/derive/draw_lints.py): the lints no driver produces on purpose, each from a few
# method dwords of a real trace changed; the draws beside them keep their own reasons, and the normal draw
# none.
DERIVED = {
    "gl_lints": [set(), {"program_unmapped", "write_mask_zero"}, {"program_never_written", "sph_no_outputs"},
                 {"stage_disabled"}, {"clear_target_mismatch", "scissor_zero"}, {"zero_count"}],
    "vk_lints": [set(), {"write_mask_zero", "sph_no_outputs"}, {"sph_no_outputs"}, {"stage_disabled"},
                 {"scissor_zero"}],
    # vk_scene: 4 draws a frame, 2 frames; each frame's last draw changed
    "vk_scene_lints": [set(), set(), set(), {"no_render_target"}, set(), set(), set(), {"viewport_zero"}],
}


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_derived_traces_name_each_remaining_lint(vgt, name):
    doc = draws(vgt, name)
    got = [{l["code"] for l in d["lints"]} for d in doc["draws"]]
    assert got == DERIVED[name]
    msgs = {l["code"]: l["message"] for d in doc["draws"] for l in d["lints"]}
    if name == "gl_lints":
        assert "stage 1 program 0xffffff0000 is in no mapping" in msgs["program_unmapped"]
        assert "is mapped but the trace never holds its header bytes" in msgs["program_never_written"]
        assert "a clear hit color target 0x120004000 (slot 0) but the draw writes 0x120000000" \
            in msgs["clear_target_mismatch"]
        assert "count 0" in msgs["zero_count"]
        # the unchanged normal draw binds a program the trace holds, with the target it cleared
        d0 = doc["draws"][0]
        assert d0["clears"][0]["target_va"] == d0["render_targets"][0]["va"]
    elif name == "vk_scene_lints":
        d = doc["draws"]
        assert doc["total"] == {"draws": 8, "launches": 0, "linted": 2, "windows": 0}
        assert msgs["no_render_target"] == "SET_CT_SELECT TARGET_COUNT=0 and no depth target"
        assert d[3]["ct_select"]["target_count"] == 0 and d[3]["render_targets"] == []
        assert d[3]["depth"]["zt_selected"] == 0
        assert msgs["viewport_zero"] == "viewport 0 clip is 0x256 at (0,0)"
        assert d[7]["viewport"]["width"] == 0 and d[7]["viewport"]["height"] == 256
        # the state is the recorded one beside them: frame 2 selects its targets again, and every other draw
        # has one 256x256 color target, a depth target and the full viewport
        for x in d[:3] + d[4:7]:
            assert x["ct_select"]["target_count"] == 1 and x["depth"]["zt_selected"] == 1
            assert [(t["width"], t["height"]) for t in x["render_targets"]] == [(256, 256)]
            assert (x["viewport"]["width"], x["viewport"]["height"]) == (256, 256)
        assert d[7]["render_targets"] == d[6]["render_targets"]
    else:
        # draw 5 is gone: its window released macros, bound the pipeline and drew nothing
        [w] = doc["windows"]
        assert [l["code"] for l in w["lints"]] == ["draw_macro_not_called"]
        assert "0x22" in w["lints"][0]["message"] and w["window"]["seq"] == 1496


def test_derived_traces_are_named_and_reproducible(tmp_path, vgt_bin):
    """The generator, run again, writes the committed traces' records (compression aside); the manifest names
    them as derived."""
    import os
    import subprocess
    import sys
    gen = CORPUS / "derive" / "draw_lints.py"
    subprocess.run([sys.executable, str(gen), str(CORPUS), str(tmp_path)], check=True,
                   env={**os.environ, "VGT": str(vgt_bin)}, capture_output=True)
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    sys.path.insert(0, str(CORPUS.parent / "trace-format" / "python"))
    from vgtrace.iterate import iter_records

    def recs(p):
        return [(r.seq, r.ts, r.type, r.flags, bytes(r.payload)) for r in iter_records(p)]

    for name in DERIVED:
        assert recs(tmp_path / f"{name}.vgt") == recs(CORPUS / f"{name}.vgt"), name
        [entry] = [t for t in manifest["traces"] if t["workload"] == name]
        assert entry["derived"] is True
        assert entry["derived_from"] == {"gl_lints": "gl_nostore", "vk_lints": "vk_nostore",
                                         "vk_scene_lints": "vk_scene"}[name]
