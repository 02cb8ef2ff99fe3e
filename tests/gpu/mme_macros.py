#!/usr/bin/env python3
"""mme_macros.py: the distinct MME macros the drivers of a set of traces upload, for the MME agreement test.

    mme_macros.py [--vgt VGT] [--calls N] [--list FILE] [--json] [--branches] TRACE...

Runs `vgt mme TRACE --json --expand --code` on every trace and keeps one entry per macro body (TU104 format,
keyed by the body's content hash, the first trace that uploaded it named as its source). Each entry carries
the body as uploaded and up to N (default 4) captured calls that ended cleanly in the trace, with distinct
parameters, and the methods and values each of them emitted there.

  --list FILE   writes the list mme_agree reads: per macro a line
                    macro HASH TRACE CLASS NDWORDS DW...
                followed by one line per captured call
                    call SUBMISSION NPARAMS P... NEMITS M V M V ...
                (numbers in hex without 0x; TRACE is the file name)
  --json        the whole list as JSON on stdout (else a table)
  --branches    the branches (BLT..BEQ) whose immediate has bit 14 set: macro, instruction, immediate

Exit: 0 ok, 2 a trace could not be read.
"""
import argparse
import json
import os
import subprocess
import sys

# TU104 group layout (open-gpu-doc MME-MacroMethodExpander/tu104/MME64Group_init.cpp): 96 bits sent as three
# dwords, the high word first; ALU i: op, dst, src0, src1, imm at these (hi, lo) bit positions.
ALU_FIELDS = (((14, 10), (19, 15), (24, 20), (29, 25), (45, 30)),
              ((50, 46), (55, 51), (60, 56), (65, 61), (81, 66)))
BRANCH_OPS = {25: "BLT", 26: "BLTU", 27: "BLE", 28: "BLEU", 29: "BEQ"}


def group_bits(d0, d1, d2):
    """The 96-bit group as an integer (bit 0 = bit 0 of the last dword sent)."""
    return (d0 << 64) | (d1 << 32) | d2


def field(bits, hi, lo):
    return (bits >> lo) & ((1 << (hi - lo + 1)) - 1)


def branches_bit14(code):
    """(instruction index, alu, op name, immediate) of every branch whose immediate has bit 14 set."""
    out = []
    for i in range(0, len(code) - 2, 3):
        bits = group_bits(code[i], code[i + 1], code[i + 2])
        for a in (0, 1):
            op = field(bits, *ALU_FIELDS[a][0])
            imm = field(bits, *ALU_FIELDS[a][4])
            if op in BRANCH_OPS and imm & 0x4000:
                out.append((i // 3, a, BRANCH_OPS[op], imm))
    return out


def run_mme(vgt, trace):
    p = subprocess.run([vgt, "mme", trace, "--json", "--expand", "--code", "--no-disasm"], capture_output=True,
                       text=True)
    if p.returncode not in (0, 1) or not p.stdout.startswith("{"):
        raise RuntimeError("%s mme %s: exit %d: %s" % (vgt, trace, p.returncode, p.stderr.strip()[:300]))
    return json.loads(p.stdout)


def collect(vgt, traces, ncalls=4):
    """Distinct TU104 macro bodies by hash, in order of first sight over the traces as given."""
    macros = {}
    for trace in traces:
        d = run_mme(vgt, trace)
        for v in d["macros"]:
            if v["format"] != "tu104" or v["hash"] in macros:
                continue
            macros[v["hash"]] = {"hash": v["hash"], "trace": os.path.basename(trace), "class": v["class"],
                                 "class_name": v["class_name"], "code": v["code"], "instructions": v["dwords"] // 3,
                                 "name": v["name"], "calls": []}
        for c in d["calls"]:
            m = macros.get(c["hash"])
            if m is None or c["status"] != "VGT_OK" or c["params_truncated"] or len(m["calls"]) >= ncalls:
                continue
            if any(k["params"] == c["params"] for k in m["calls"]):
                continue
            m["calls"].append({"trace": os.path.basename(trace), "submission": c["submission"],
                               "params": c["params"],
                               "emits": [[e["method"], e["value"]] for e in c.get("emits", [])]})
    return list(macros.values())


def write_list(macros, path):
    with open(path, "w") as f:
        for m in macros:
            f.write("macro %s %s %x %x %s\n" % (m["hash"], m["trace"], m["class"], len(m["code"]),
                                                " ".join("%x" % w for w in m["code"])))
            for c in m["calls"]:
                ems = " ".join("%x %x" % (a, b) for a, b in c["emits"])
                f.write("call %x %x %s %x %s\n" % (c["submission"], len(c["params"]),
                                                   " ".join("%x" % p for p in c["params"]), len(c["emits"]), ems))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--vgt", default=os.environ.get("VGT", "vgt"))
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--list")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--branches", action="store_true")
    a = ap.parse_args(argv)
    try:
        macros = collect(a.vgt, a.traces, a.calls)
    except (RuntimeError, OSError, ValueError) as e:
        print("mme_macros: %s" % e, file=sys.stderr)
        return 2
    if a.list:
        write_list(macros, a.list)
    if a.json:
        json.dump(macros, sys.stdout)
        print()
    elif a.branches:
        n = 0
        for m in macros:
            for ip, alu, op, imm in branches_bit14(m["code"]):
                n += 1
                print("%s %-16s %04x alu%d %-4s imm 0x%04x (bit15 %d, bits 13:0 0x%04x)" % (
                    m["hash"], m["trace"], ip, alu, op, imm, imm >> 15, imm & 0x3fff))
        print("%d branches with bit 14 set in %d distinct macros" % (n, len(macros)))
    else:
        print("%-16s %-22s %-18s %5s %5s  %s" % ("hash", "source", "class", "insts", "calls", "name"))
        for m in macros:
            print("%-16s %-22s %-18s %5d %5d  %s" % (m["hash"], m["trace"], m["class_name"], m["instructions"],
                                                    len(m["calls"]), m["name"]))
        print("%d distinct macros" % len(macros))
    return 0


if __name__ == "__main__":
    sys.exit(main())
