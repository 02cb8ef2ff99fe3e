#!/usr/bin/env python3
"""make_seeds.py: seed corpora of the fuzz targets, cut from the real corpus traces (corpus/*.vgt) with the
built `vgt` and the Python reader (vgtrace, trace-format/python). Deterministic; run from the repository root:

    python3 tests/fuzz/make_seeds.py [--vgt build/bin/vgt]

writes tests/fuzz/corpus_<target>/ for qmd, sph, stores, trap, model_rm and verbs (the reader's seeds come from
tests/fuzz/make_reader_seeds.py; the pushbuf, mme and replay seeds stay as they are). Each seed is small: libFuzzer mutates short
inputs fastest."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "trace-format" / "python"))
import vgtrace  # noqa: E402
from vgtrace import records as vrec, spec  # noqa: E402

CORPUS = ROOT / "corpus"
OUT = ROOT / "tests" / "fuzz"


def put(target, name, data):
    d = OUT / f"corpus_{target}"
    d.mkdir(exist_ok=True)
    (d / name).write_bytes(data)


def vgt_run(vgt, *args):
    return subprocess.run([vgt, *map(str, args)], capture_output=True, text=True, timeout=600)


def qmd_seeds(vgt):
    """The QMDs of launches, read from trace memory folded up to the end: the corpus traces' where their QMDs
    are captured memory (others are uploaded through the push buffer), and a synthetic trace's."""
    from vgtrace.fold import Fold
    n = 0
    with tempfile.TemporaryDirectory() as d:
        syn = Path(d) / "syn.vgt"
        vgt_run(vgt, "synth", "-o", syn, "--submits", "24")
        for trace in sorted(CORPUS.glob("*.vgt")) + [syn]:
            evs = [json.loads(l) for l in vgt_run(vgt, "decode", "--jsonl", trace).stdout.splitlines()
                   if '"event":"LAUNCH"' in l]
            want = sorted({e["qmd_va"] for e in evs if e.get("qmd_va")})[:8]
            if not want:
                continue
            f = Fold()
            for r in vgtrace.read_trace(trace).records:
                f.apply(r)
            for va in want:
                data, known = bytearray(), 0
                for k in range(384):
                    page = f.pages.get((va + k) & ~0xFFF)
                    data.append(page[0][(va + k) & 0xFFF] if page else 0)
                    known += bool(page and page[1][(va + k) & 0xFFF])
                if known >= 256:
                    put("qmd", f"{trace.stem}-{va:x}", bytes(data))
                    n += 1
    return n


def sph_seeds(vgt):
    """The shader program headers of the corpus traces' draws, as `vgt draws --json` decodes them from trace
    memory (the 32 words of each distinct header)."""
    seen = set()
    for trace in sorted(CORPUS.glob("*.vgt")):
        r = vgt_run(vgt, "draws", "--json", trace)
        if not r.stdout.strip():
            continue
        for d in json.loads(r.stdout)["draws"]:
            for st in d.get("stages", []):
                sph = st.get("sph")
                if not sph or "words" not in sph:
                    continue
                data = b"".join(struct.pack("<I", int(w, 16)) for w in sph["words"])
                if data not in seen:
                    seen.add(data)
                    put("sph", f"{trace.stem}-{st['program_va']:x}", data)
    return len(seen)


def stores_seeds(vgt):
    n = 0
    for trace in ("vk_triangle", "gl_egl", "vadd"):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "c.jsonl"
            vgt_run(vgt, "replay", CORPUS / f"{trace}.vgt", "--backend", "sim", "--census", "--census-json", out)
            if out.exists():
                lines = out.read_bytes().splitlines(keepends=True)[:40]
                put("stores", trace, b"".join(lines))
                n += 1
    return n


# Stores and loads compilers emit for a doorbell or USERD write (the trap engine's job), as bytes.
TRAP = {
    "mov_m32_r32": bytes([0x89, 0x48, 0x10]),                       # mov [rax+0x10], ecx
    "mov_m32_r32_disp32": bytes([0x89, 0x88, 0x90, 0, 0, 0]),       # mov [rax+0x90], ecx
    "mov_m64_r64": bytes([0x48, 0x89, 0x0c, 0x24]),                 # mov [rsp], rcx
    "mov_m32_imm": bytes([0xc7, 0x40, 0x08, 0x78, 0x56, 0x34, 0x12]),   # mov dword [rax+8], 0x12345678
    "mov_m8_r8": bytes([0x88, 0x08]),                               # mov [rax], cl
    "mov_m16_r16": bytes([0x66, 0x89, 0x08]),                       # mov [rax], cx
    "mov_r32_m32": bytes([0x8b, 0x08]),                             # mov ecx, [rax]
    "movzx_r32_m8": bytes([0x0f, 0xb6, 0x08]),                      # movzx ecx, byte [rax]
    "movsxd": bytes([0x48, 0x63, 0x08]),                            # movsxd rcx, dword [rax]
    "movd_m32_xmm": bytes([0x66, 0x0f, 0x7e, 0x00]),                # movd [rax], xmm0
    "movq_m64_xmm": bytes([0x66, 0x0f, 0xd6, 0x00]),                # movq [rax], xmm0
    "mov_sib": bytes([0x89, 0x0c, 0x98]),                           # mov [rax+rbx*4], ecx
    "mov_rip": bytes([0x89, 0x0d, 0x10, 0, 0, 0]),                  # mov [rip+0x10], ecx
    "lock_xadd": bytes([0xf0, 0x0f, 0xc1, 0x08]),                   # lock xadd [rax], ecx (not emulated)
    "mov_r12": bytes([0x45, 0x89, 0x0c, 0x24]),                     # mov [r12], r9d
}


def trap_seeds():
    for name, code in TRAP.items():
        code = code + bytes([0x90] * (15 - len(code)))
        regs = bytearray(8 * 23)
        struct.pack_into("<Q", regs, 8 * 13, 0x90)   # REG_RAX: the offset inside the range
        put("trap", name, code + struct.pack("<I", 0xffffffff) + bytes(regs) + bytes(range(64)))
    return len(TRAP)


def model_rm_seeds():
    """fuzz_model_rm's opcodes over the RM records of a corpus trace (op, client, handle, parent, class, status,
    blob length, blob, the op's own fields)."""
    ops = {"RM_ALLOC": 0, "RM_FREE": 1, "RM_CONTROL": 2, "MEM_ALLOC": 3, "GPU_MAP": 4, "GPU_UNMAP": 5,
           "CHANNEL": 6, "ENGINE_OBJECT": 7, "WORK_SUBMIT_TOKEN": 8, "IOCTL": 9}
    n = 0
    for trace in ("vadd", "vk_triangle"):
        out = bytearray()
        for r in vgtrace.read_trace(CORPUS / f"{trace}.vgt").records[:400]:
            name = spec.BY_CODE[r.type].name if r.type in spec.BY_CODE else None
            if name not in ops:
                continue
            f = vrec.decode_payload(r.type, bytes(r.payload))
            h = (f.get("handle", f.get("memory", f.get("object", 0))) or 0) % 24
            p = (f.get("parent", f.get("device", f.get("channel", 0))) or 0) % 24
            out += bytes([ops[name], 0, h, p]) + struct.pack("<H", f.get("class", 0) & 0xffff) + bytes([8])
            out += bytes(8)
            if name in ("GPU_MAP", "GPU_UNMAP"):
                out += struct.pack("<Q", f["gpu_va"]) + (struct.pack("<H", 0) if name == "GPU_MAP" else b"")
                out += struct.pack("<Q", f["length"])
        put("model_rm", trace, bytes(out[:8192]))
        n += 1
    return n


def verbs_seeds(vgt):
    """[selector][trace]: a few submissions of each corpus trace (slices), for every verb (draws, launches and
    timeline with selector bit 4), and wrapped hostile content from the replay seeds (selector bit 3)."""
    n = 0
    with tempfile.TemporaryDirectory() as d:
        for trace, window in (("vk_triangle", "12..14"), ("gl_egl", "2..3"), ("vadd", "0..2"), ("vk_compute", "0..3")):
            s = Path(d) / f"{trace}.vgt"
            if vgt_run(vgt, "slice", CORPUS / f"{trace}.vgt", s, "--submits", window, "--level", "19").returncode:
                continue
            data = s.read_bytes()
            if len(data) > 200_000:
                continue
            for sel in list(range(8)) + [16, 17, 18]:
                put("verbs", f"{trace}-{sel}", bytes([sel]) + data)
                n += 1
    for seed in sorted((OUT / "corpus_replay").iterdir()):
        b = seed.read_bytes()
        if b and b[0] & 1:   # fuzz_replay's wrapped content
            for sel in range(8):
                put("verbs", f"wrapped-{seed.name}-{sel}", bytes([8 | sel]) + b[1:])
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vgt", default=str(ROOT / "build" / "bin" / "vgt"))
    a = ap.parse_args()
    print("qmd", qmd_seeds(a.vgt), "sph", sph_seeds(a.vgt), "stores", stores_seeds(a.vgt), "trap", trap_seeds(), "model_rm", model_rm_seeds(),
          "verbs", verbs_seeds(a.vgt))


if __name__ == "__main__":
    main()
