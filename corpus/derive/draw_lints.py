#!/usr/bin/env python3
"""corpus/derive/draw_lints.py: the derived corpus traces of the draw lints that no driver produces on purpose.

    VGT=build/bin/vgt python3 corpus/derive/draw_lints.py corpus [OUTDIR]

Each is a real H200 trace of corpus/ with a few method data dwords of its push buffers changed, nothing else:
every record is copied as recorded (its seq, timestamp and flags), and the GPFIFO_SUBMIT records named below
are written again with the changed segment bytes. The methods are found by name with `vgt decode` (the
position seq:entry:dword it prints), the traces written with the Python package of trace-format/python. The
identity says what was derived from what (derived_from, derived_by, derived_change).

  gl_lints.vgt (from gl_nostore.vgt: clear to black, then draw; six times)
    draw 0  unchanged: the normal draw, no lint
    draw 1  the vertex program address moved to a VA no mapping holds         -> program_unmapped
    draw 2  the vertex program address moved into a mapping the trace never wrote -> program_never_written
    draw 3  unchanged: rasterizer discard                                   -> stage_disabled
    draw 4  the clear's color target moved off the draw's (SET_COLOR_TARGET_B(0) rewritten before the clear,
            a harmless single-method header after it rewritten to set the draw's target back)
                                                                               -> clear_target_mismatch
    draw 5  DRAW_VERTEX_ARRAY COUNT 3 -> 0                                    -> zero_count
  vk_lints.vgt (from vk_nostore.vgt)
    draw 5's DRAW_VERTEX_ARRAY_BEGIN_END_A/B (the draw itself, not a macro) turned into host NOPs: its window
    releases macro calls, binds the pipeline and draws nothing while the uploaded draw macros stay
    uncalled                                                                    -> draw_macro_not_called
    the other draws are unchanged (their lints are vk_nostore's)
  vk_scene_lints.vgt (from vk_scene.vgt: 4 draws a frame, 2 frames, one submission a frame; no draw has a lint)
    draws 0-2, 4-6 unchanged: no lint
    draw 3  (frame 1's last) the single-method header of SET_GLOBAL_BASE_INSTANCE_INDEX (0, as before every
            draw) before it turned into SET_CT_SELECT with that 0 (TARGET_COUNT=0), and the null dword after it
            into an immediate SET_ZT_SELECT 0: no color and no depth target; frame 2 selects them again
                                                                               -> no_render_target
    draw 7  (frame 2's last, the trace's last draw) the same header turned into SET_VIEWPORT_CLIP_HORIZONTAL(0)
            with that 0: X0 0, WIDTH 0                                         -> viewport_zero
"""
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "trace-format" / "python"))
from vgtrace import spec  # noqa: E402
from vgtrace.writer import rewrite_trace  # noqa: E402

SUBMIT = spec.BY_NAME["GPFIFO_SUBMIT"].code
POS = re.compile(r"^\s+(\d+):(\d+):(\d+)\s+s(\d)\s+\S+\s+0x([0-9a-f]{8})\s+(\S+?)(?:\s+=|$)")


def decode(vgt, trace, submission):
    """[(seq, entry, dword, subch, data, method name)] of one submission, as `vgt decode` prints them."""
    out = subprocess.run([vgt, "decode", str(trace), "--submits", f"{submission}..{submission}"],
                         capture_output=True, text=True).stdout
    return [(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5], 16), m[6])
            for m in map(POS.match, out.splitlines()) if m]


def find(methods, name, nth=0, after=None):
    hits = [m for m in methods if m[5] == name and (after is None or (m[1], m[2]) > after)]
    if len(hits) <= nth:
        raise SystemExit(f"derive: no {name} #{nth} in the submission")
    return hits[nth]


def patch_record(fields, entry, dword, value):
    """Set the data dword `dword` of GPFIFO entry `entry` (in the segment that holds it) to value."""
    raw = fields["entries"][entry]
    va = (raw & 0xFFFFFFFC) | ((raw >> 32) & 0xFF) << 32
    at = va + 4 * dword
    for s in fields["segments"]:
        if s["gpu_va"] <= at < s["gpu_va"] + len(s["data"]):
            data = bytearray(s["data"])
            off = at - s["gpu_va"]
            data[off:off + 4] = struct.pack("<I", value)
            s["data"] = bytes(data)
            return
    raise SystemExit(f"derive: entry {entry} dword {dword} (VA {at:#x}) is in no captured segment")


def rewrite(src, dst, patches, change):
    """Copy src to dst with patches {seq: [(entry, dword, value)]} applied."""
    left = dict(patches)

    def edit(r):
        if r.type != SUBMIT or r.seq not in left:
            return None
        fields = dict(r.fields)
        fields["segments"] = [dict(s) for s in fields["segments"]]
        for entry, dword, value in left.pop(r.seq):
            patch_record(fields, entry, dword, value)
        return fields

    derived = [("derived_from", Path(src).name), ("derived_by", "corpus/derive/draw_lints.py"),
               ("derived_change", change)]
    try:
        rewrite_trace(src, dst, edit, derived)
    except ValueError as e:
        raise SystemExit(f"derive: {e}")
    if left:
        raise SystemExit(f"derive: submissions {sorted(left)} not found in {src}")


SET_COLOR_TARGET_B0 = 0x0804   # NVCB97_SET_COLOR_TARGET_B(0) (vgt/nv/clcb97.h)
HOST_NOP = 0x0008              # NVC86F_NOP (vgt/nv/clc86f.h)
SET_CT_SELECT = 0x121c         # NVCB97_SET_CT_SELECT: TARGET_COUNT 3:0
SET_ZT_SELECT = 0x1538         # NVCB97_SET_ZT_SELECT: TARGET_COUNT 0:0
SET_VIEWPORT_CLIP_H0 = 0x0c00  # NVCB97_SET_VIEWPORT_CLIP_HORIZONTAL(0): X0 15:0, WIDTH 31:16


def header(sec_op, count, subch, method):
    """A method header: SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (vgt/nv_pushbuf.h)."""
    return sec_op << 29 | count << 16 | subch << 13 | method >> 2


def gl_lints(vgt, corpus, out):
    src = corpus / "gl_nostore.vgt"
    draws = {n: decode(vgt, src, sub) for n, sub in enumerate(range(3, 9))}
    patches = {}

    def add(m, value, back=0):   # back 1: the header dword before the method's data
        patches.setdefault(m[0], []).append((m[1], m[2] - back, value))

    # draw 1: the vertex stage's program (set again before every draw) far past every mapping
    add(find(draws[1], "SET_PIPELINE_PROGRAM_ADDRESS_A(1)"), 0xFF)
    add(find(draws[1], "SET_PIPELINE_PROGRAM_ADDRESS_B(1)"), 0xFFFF0000)
    # draw 2: the vertex program 1 MiB further into the shader heap's mapping, where the trace holds no byte
    pb = find(draws[2], "SET_PIPELINE_PROGRAM_ADDRESS_B(1)")
    add(pb, pb[4] + 0x100000)
    # draw 4: the clear hits a target 16 KiB (one 64x64 target) past the draw's, in the same mapping:
    # SET_COLOR_TARGET_B(0) moved before the clear,
    # and the single-method header of SET_PS_SATURATE (0 there, its default) between the clear and the draw
    # turned into SET_COLOR_TARGET_B(0) with the draw's own target
    ct = find(draws[4], "SET_COLOR_TARGET_B(0)")
    add(ct, ct[4] + 0x4000)
    clear = find(draws[4], "CLEAR_SURFACE")
    sat = find(draws[4], "SET_PS_SATURATE", after=(clear[1], clear[2]))
    add(sat, header(1, 1, sat[3], SET_COLOR_TARGET_B0), back=1)
    add(sat, ct[4])
    # draw 5: no vertices
    add(find(draws[5], "DRAW_VERTEX_ARRAY"), 0)
    dst = out / "gl_lints.vgt"
    rewrite(src, dst, patches, "draw 1 vertex program unmapped; draw 2 vertex program never written; draw 4 clear "
                               "target moved off the draw's; draw 5 vertex count 0")
    return dst


def vk_lints(vgt, corpus, out):
    src = corpus / "vk_nostore.vgt"
    d5 = decode(vgt, src, 23)
    a = find(d5, "DRAW_VERTEX_ARRAY_BEGIN_END_A")
    b = find(d5, "DRAW_VERTEX_ARRAY_BEGIN_END_B")
    if (b[1], b[2]) != (a[1], a[2] + 1):
        raise SystemExit("derive: DRAW_VERTEX_ARRAY_BEGIN_END_A/B are not one run of two")
    # the draw's header (A and B in one incrementing run) becomes two host NOPs: the draw is gone
    dst = out / "vk_lints.vgt"
    rewrite(src, dst, {a[0]: [(a[1], a[2] - 1, header(3, 2, 0, HOST_NOP))]},
            "draw 5 (DRAW_VERTEX_ARRAY_BEGIN_END_A/B) replaced by host NOPs")
    return dst


def vk_scene_lints(vgt, corpus, out):
    src = corpus / "vk_scene.vgt"
    patches = {}
    for sub, methods in ((19, (SET_CT_SELECT, SET_ZT_SELECT)), (20, (SET_VIEWPORT_CLIP_H0,))):
        ms = decode(vgt, src, sub)
        last = find(ms, "DRAW_INDEX_BUFFER_BEGIN_END_B", 3)     # the frame's fourth and last draw
        prev = find(ms, "DRAW_INDEX_BUFFER_BEGIN_END_B", 2)
        base = find(ms, "SET_GLOBAL_BASE_INSTANCE_INDEX", after=(prev[1], prev[2]))
        if (base[1], base[2]) > (last[1], last[2]) or base[4] != 0:
            raise SystemExit(f"derive: no SET_GLOBAL_BASE_INSTANCE_INDEX 0 between submission {sub}'s last draws")
        # its single-method header now names the state method, the data 0 stays: the base instance was 0 already
        edits = [(base[1], base[2] - 1, header(1, 1, base[3], methods[0]))]
        if len(methods) > 1:
            # the null dword after it (the driver's padding, no method) becomes an immediate method of value 0;
            # the next method's header follows it, so its data is two dwords further
            nxt = find(ms, "SET_DRAW_CONTROL_A", after=(base[1], base[2]))
            if (nxt[1], nxt[2]) != (base[1], base[2] + 3):
                raise SystemExit(f"derive: no null dword after submission {sub}'s SET_GLOBAL_BASE_INSTANCE_INDEX")
            edits.append((base[1], base[2] + 1, header(4, 0, base[3], methods[1])))
        patches.setdefault(base[0], []).extend(edits)
    dst = out / "vk_scene_lints.vgt"
    rewrite(src, dst, patches, "draw 3 with no color and no depth target selected (SET_CT_SELECT and SET_ZT_SELECT "
                               "TARGET_COUNT 0); draw 7 with viewport 0 clip width 0")
    return dst


def main(argv):
    corpus = Path(argv[1] if len(argv) > 1 else "corpus")
    out = Path(argv[2]) if len(argv) > 2 else corpus
    vgt = os.environ.get("VGT", "build/bin/vgt")
    for make in (gl_lints, vk_lints, vk_scene_lints):
        p = make(vgt, corpus, out)
        print(f"wrote {p} ({p.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv)
