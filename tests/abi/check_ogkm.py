#!/usr/bin/env python3
"""check_ogkm.py: our RM/UVM ABI table (trace-format/facts/rm_abi.txt) against the driver's public headers.

    check_ogkm.py --headers OGKM_DIR [--transcribe OUT]   compile sizeof/offsetof of NVIDIA's types (the
                                                          pairs of ogkm580.map) with the C compiler, compare
                                                          them with the table; --transcribe writes the
                                                          measured numbers (numbers only, no NVIDIA text)
    check_ogkm.py --transcribed ogkm580_sizes.txt          compare the table with numbers transcribed before
                                                          (what CI runs: no headers needed)

OGKM_DIR is a checkout (or `git archive`) of NVIDIA/open-gpu-kernel-modules at a tag of the driver series
the table declares (its `driver` line). Nothing of it is kept in this repository. Exit 0 when every size
and offset agrees, 1 with one line per difference."""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "trace-format", "facts"))
import gen_abi  # noqa: E402

INCLUDES = ["src/common/sdk/nvidia/inc", "kernel-open/common/inc", "src/common/inc",
            "src/nvidia/arch/nvalloc/unix/include", "kernel-open/nvidia-uvm"]
HEADERS = ["nvos.h", "nv-ioctl.h", "nv-unix-nvos-params-wrappers.h", "class/cl0080.h", "class/cl2080.h",
           "class/cl0070.h", "class/cla06c.h", "class/cl9067.h", "alloc/alloc_channel.h",
           "ctrl/ctrl0000/ctrl0000gpu.h", "ctrl/ctrl0080/ctrl0080gpu.h", "ctrl/ctrl2080/ctrl2080gpu.h",
           "ctrl/ctrlc36f.h", "ctrl/ctrla06f/ctrla06fgpfifo.h", "uvm_linux_ioctl.h", "uvm_ioctl.h"]


def load_map(path):
    pairs = []
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        fields = dict(f.split("=", 1) for f in line[2:])
        pairs.append((line[0], line[1], fields))
    return pairs


def our_table():
    """{struct: (size, {field: offset})} and the driver line of rm_abi.txt."""
    path = os.path.join(ROOT, "trace-format", "facts", "rm_abi.txt")
    items = gen_abi.parse(path)[0]
    out = {}
    for it in items:
        if it[0] == "struct":
            s = it[1]
            out[s["name"]] = (s["size"], {f["name"]: f["off"] for f in s["fields"]})
    return out, items


def measure(headers_dir, pairs):
    """Compile and run a program printing 'ours size N' and 'ours.field offset N' for NVIDIA's side."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include \"nvtypes.h\""]
    lines += ['#include "%s"' % h for h in HEADERS]
    lines += ["int main(void) {"]
    for ours, theirs, fields in pairs:
        lines.append('    printf("%s size %%zu\\n", sizeof(%s));' % (ours, theirs))
        for of, tf in fields.items():
            lines.append('    printf("%s.%s offset %%zu\\n", offsetof(%s, %s));' % (ours, of, theirs, tf))
    lines += ["    return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "abi.c"), os.path.join(d, "abi")
        open(src, "w").write("\n".join(lines) + "\n")
        cmd = [os.environ.get("CC", "cc"), "-w", "-o", exe, src] + ["-I" + os.path.join(headers_dir, i) for i in INCLUDES]
        subprocess.run(cmd, check=True)
        return subprocess.run([exe], check=True, capture_output=True, text=True).stdout


def compare(measured_text, table):
    problems = []
    for line in measured_text.splitlines():
        key, what, value = line.split()
        value = int(value)
        struct, _, field = key.partition(".")
        if struct not in table:
            problems.append("%s: not in rm_abi.txt" % struct)
            continue
        size, offsets = table[struct]
        ours = size if what == "size" else offsets.get(field)
        if ours is None:
            problems.append("%s: no field %s in rm_abi.txt" % (struct, field))
        elif ours != value:
            problems.append("%s %s: rm_abi.txt says 0x%x, the driver's headers 0x%x" % (key, what, ours, value))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--headers")
    ap.add_argument("--transcribe")
    ap.add_argument("--transcribed")
    a = ap.parse_args()
    table, _ = our_table()
    if a.headers:
        text = measure(a.headers, load_map(os.path.join(HERE, "ogkm580.map")))
        if a.transcribe:
            open(a.transcribe, "w").write(
                "# sizeof/offsetof of NVIDIA/open-gpu-kernel-modules types for the structs of rm_abi.txt\n"
                "# (tests/abi/ogkm580.map), measured by check_ogkm.py --headers at the tag named below.\n"
                + "# tag %s\n" % os.environ.get("OGKM_TAG", "580.x") + text)
    elif a.transcribed:
        text = "".join(l for l in open(a.transcribed) if not l.startswith("#"))
    else:
        ap.error("give --headers or --transcribed")
    problems = compare(text, table)
    for p in problems:
        print(p)
    n = len(text.splitlines())
    print("%d sizes and offsets compared, %d differ" % (n, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
