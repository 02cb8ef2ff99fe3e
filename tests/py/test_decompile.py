"""`vgt decompile`: a captured launch (and a window of submissions) as a C program that builds against the
library (backend.h, pbwriter.h, the generated method names), runs on sim and reproduces what sim can: the
release semaphores (sim executes no shaders). Editing one method changes what the program does."""
import shutil
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"


def compile_c(build_dir, src, exe):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed"
    flags = [f"-I{REPO}/trace-format/include", f"-I{build_dir}/trace-format/include", f"-I{REPO}/analyze/include",
             f"-I{REPO}/backend/include", f"-L{build_dir}/lib"]
    libs = ["-lvgt_backend", "-lvgt_analyze", "-lvgt_format", "-lsqlite3", "-lzstd", "-lxxhash", "-lpthread", "-lm"]
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", str(src), *flags, *libs, "-o", str(exe)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def run(exe, cwd, *args):
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_decompiled_launch_runs_on_sim(vgt, build_dir, tmp_path):
    src = tmp_path / "launch.c"
    vgt("decompile", CORPUS / "vadd.vgt", "--launch", "1", "-o", src, check=0)
    text = src.read_text()
    assert "NVCBC0_SEND_PCAS_A" in text and "NVCBC0_SET_SHADER_LOCAL_MEMORY_A" in text   # named methods
    assert "vgt_pbw_set_object(w, 1, 0xCBC0);" in text
    assert (tmp_path / "launch.c.mem").stat().st_size > 8
    compile_c(build_dir, src, tmp_path / "launch")
    r = run(tmp_path / "launch", tmp_path, "--backend", "sim")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "release qmd release 0 0x204637f34 = 0x6 (capture 0x6)" in r.stdout
    assert "result: ok" in r.stdout
    # the output buffer, dumped: the one the program copies back to the host (its cuMemcpyDtoH, op 4, in the
    # trace's CUDA records), at the address the recording gave it
    d2h = [l for l in vgt("dump", CORPUS / "vadd.vgt", "--type", "CUDA_MEMORY", check=0).stdout.splitlines()
           if " op=4 " in l]
    assert len(d2h) == 1, d2h
    out = re.search(r" src=(0x[0-9a-f]+) size=(\d+) ", d2h[0])
    assert int(out.group(2)) == 4 << 20
    assert (tmp_path / f"buffer-{out.group(1)}.bin").stat().st_size == 4 << 20

    # a user edits one method: without the scheduling signal the launch never runs, its release never comes
    edited = "\n".join(l for l in text.splitlines() if "NVCBC0_SEND_SIGNALING_PCAS2_B" not in l)
    assert edited != text
    src.write_text(edited)
    compile_c(build_dir, src, tmp_path / "edited")
    r = run(tmp_path / "edited", tmp_path, "--backend", "sim", "--mem", str(tmp_path / "launch.c.mem"))
    assert r.returncode == 1 and "MISMATCH" in r.stdout, r.stdout


def test_decompiled_macro_launch_and_window(vgt, build_dir, tmp_path):
    src = tmp_path / "vk.c"
    vgt("decompile", CORPUS / "vk_compute.vgt", "--launch", "0", "-o", src, check=0)
    compile_c(build_dir, src, tmp_path / "vk")
    r = run(tmp_path / "vk", tmp_path)
    assert r.returncode == 0 and "release qmd release 0 0x55cea08 = 0x1" in r.stdout, r.stdout + r.stderr

    win = tmp_path / "win.c"
    vgt("decompile", CORPUS / "vadd.vgt", "--submits", "175..185", "-o", win, check=0)
    text = win.read_text()
    assert "static void submission10(vgt_pbw *w)" in text and "NVC8B5_LAUNCH_DMA" in text
    compile_c(build_dir, win, tmp_path / "win")
    r = run(tmp_path / "win", tmp_path)
    assert r.returncode == 0 and "result: ok" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("release ") >= 5


def test_decompile_usage(vgt, tmp_path):
    out = tmp_path / "x.c"
    assert "one of --launch" in vgt("decompile", CORPUS / "vadd.vgt", "-o", out, check=2).stderr
    vgt("decompile", CORPUS / "vadd.vgt", "--launch", "0", "--submits", "1", "-o", out, check=2)
    assert "fewer launches" in vgt("decompile", CORPUS / "vadd.vgt", "--launch", "5", "-o", out, check=2).stderr
    vgt("decompile", CORPUS / "vadd.vgt", "--submits", "9999", "-o", out, check=2)
