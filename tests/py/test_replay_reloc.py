"""Lane 1 relocation and aliases through `vgt replay` on sim (no GPU): `--relocate VA` moves the mapping
that holds VA to a new VA, every address operand and GPFIFO entry pointing into it is rewritten and
reported, and the replay must still pass --check; a memory object mapped twice is one storage."""
import json
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"


def replay(vgt_bin, *args, timeout=120):
    return subprocess.run([str(vgt_bin), "replay", "--backend", "sim", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def mapped_vas(vgt_bin, trace):
    out = subprocess.run([str(vgt_bin), "dump", str(trace)], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return sorted({m.group(1) for m in re.finditer(r"GPU_MAP .* gpu_va=(0x[0-9a-f]+) ", out)})


def summary(r):
    j = json.loads(r.stdout)
    return j, j["addresses"], j["checks"]


def test_synth_every_mapping_relocated(vgt_bin, synth):
    trace = synth("reloc", "--shape", "mixed", "--submits", "16", "--seed", "3")
    base, base_addr, base_checks = summary(replay(vgt_bin, trace, "--check", "--json"))
    assert base["result"] == "ok" and base_addr["relocations"] == 0
    vas = mapped_vas(vgt_bin, trace)
    args = [a for va in vas for a in ("--relocate", va)]
    r = replay(vgt_bin, trace, "--check", "--json", *args)
    j, addr, checks = summary(r)
    assert r.returncode == 0 and j["result"] == "ok", r.stdout[-3000:] + r.stderr[-3000:]
    assert addr["relocations"] == len(vas)
    assert addr["operands_rewritten"] > 0 and addr["entries_rewritten"] == j["entries"]
    # the same checks pass at the new VAs as at the captured ones
    assert checks["passed"] == base_checks["passed"] and checks["failed"] == 0
    assert checks["bytes_compared"] == base_checks["bytes_compared"]
    kinds = {rep["kind"] for rep in j["reports"]}
    assert "relocation" in kinds
    moved = [rep["message"] for rep in j["reports"] if "relocated to" in rep["message"]]
    assert len(moved) == len(vas)


def test_vk_compute_semaphore_mapping_relocated(vgt_bin, tmp_path):
    trace = CORPUS / "vk_compute.vgt"
    plain = replay(vgt_bin, trace, "--check", "--dump", f"0x4278000:256:{tmp_path / 'plain.bin'}")
    assert plain.returncode == 0, plain.stdout[-2000:]
    r = replay(vgt_bin, trace, "--check", "--relocate", "0x4278000", "--dump", f"0x4278000:256:{tmp_path / 'moved.bin'}")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "result: ok" in r.stdout
    m = re.search(r"memory 0xd at 0x4200000\+0x80000 relocated to (0x[0-9a-f]+) \(--relocate 0x4278000\)", r.stdout)
    assert m, r.stdout[-3000:]
    new = int(m.group(1), 16)
    assert new != 0x4200000 and new % 4096 == 0 and new < 1 << 40
    # the host semaphore and the report semaphores are rewritten, each reported with old -> new VA
    assert f"SEM_ADDR_HI/LO 0x4278000 -> {hex(new + 0x78000)}" in r.stdout
    assert "SET_REPORT_SEMAPHORE_A/B 0x4278010 -> " in r.stdout
    assert re.search(r"addresses: 1 mappings relocated; \d+ address operands", r.stdout)
    checks = lambda out: re.search(r"checks: (\d+) passed, (\d+) failed", out).groups()
    assert checks(r.stdout) == checks(plain.stdout)
    # --dump reads the captured VA where the replay put it: the same bytes, which the GPU wrote
    a, b = (tmp_path / "plain.bin").read_bytes(), (tmp_path / "moved.bin").read_bytes()
    assert a == b and any(a)


def test_gl_egl_render_target_relocated(vgt_bin):
    r = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--check", "--relocate", "0x120000000", "--list-rt")
    assert r.returncode == 0, r.stdout[-3000:]
    assert re.search(r"SET_COLOR_TARGET_A/B 0x120000000 -> 0x[0-9a-f]+", r.stdout)
    assert "OFFSET_IN_UPPER/LOWER 0x120000000 -> " in r.stdout     # the copy that reads the target back
    assert "0: VA 0x120000000 64x64" in r.stdout                   # listed at its captured VA


def test_vk_triangle_aliases(vgt_bin):
    r = replay(vgt_bin, CORPUS / "vk_triangle.vgt", "--check", "--json")
    j, addr, checks = summary(r)
    assert r.returncode == 0 and addr["aliases"] == 4 and addr["aliases_not_reproduced"] == 0
    notes = [rep["message"] for rep in j["reports"] if rep["kind"] == "relocation"]
    assert any("memory 0x61" in n and "0xdefdfe0000" in n and "alias of its mapping at 0x63f0000" in n for n in notes)


def test_macro_operand_is_warned(vgt_bin):
    # the mapping at 0x5200000 holds an inline QMD address an MME macro builds (NVIDIA's Vulkan dispatch)
    r = replay(vgt_bin, CORPUS / "vk_compute.vgt", "--check", "--relocate", "0x5200000")
    assert "warning: " in r.stdout and "MME macro" in r.stdout and "cannot be rewritten" in r.stdout
    assert re.search(r"builds SET_INLINE_QMD_ADDRESS_A/B 0x55ceb00", r.stdout), r.stdout[-3000:]
    assert r.returncode == 1   # the launch it feeds cannot run right: never silently ok


def test_relocate_unmapped_va_is_said(vgt_bin):
    r = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--check", "--relocate", "0x7777000000")
    assert r.returncode == 0 and "--relocate 0x7777000000: no GPU_MAP of the trace contains it" in r.stderr


def test_relocate_usage(vgt_bin):
    r = replay(vgt_bin, CORPUS / "gl_egl.vgt", "--relocate", "nonsense")
    assert r.returncode == 2 and "--relocate 'nonsense' is not a VA" in r.stderr
    h = subprocess.run([str(vgt_bin), "replay", "--help"], capture_output=True, text=True)
    assert "--relocate VA" in h.stdout
