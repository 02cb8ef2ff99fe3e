#!/usr/bin/env python3
"""synth_diag.py: which checks a replay failed, and which captured work writes there.

    synth_diag.py NAME REPLAY.json LAUNCHES.json [REPLAY.err]

REPLAY.json is `vgt replay ... --check --json`, LAUNCHES.json `vgt launches TRACE --json`, REPLAY.err the
replay's stderr. Prints one line of summary (lanes, checks, faults, warnings, synth_refused), the stderr
lines that say work did not run, then one row per failed check: the record's VA and size, how many of
its compared bytes differ, the first differing VA and its offset in the record, the trace's and the
replay's value there, and the captured work whose writes cover that VA (copy and memset destinations,
copy-engine releases, QMD releases; else the launches with a pointer into the mapping that holds it).
Small output: at most 20 rows per trace, 3 writers per row. Standard library only (runs on the GPU
machine's python3)."""
import json
import sys


def num(v):
    if isinstance(v, str):
        return int(v, 0)
    return int(v or 0)


def writers(work, va):
    """Work whose writes cover va: exact writes first, then launches that point into va's mapping."""
    exact, near = [], []
    for w in reversed(work):   # the latest writer first
        if "dma" in w:
            name = "dma %d (sub %d, ch %s)" % (w["dma"], w.get("submission", -1), w.get("channel", "?"))
            dst, n = num(w.get("dst", 0)), num(w.get("bytes", 0))
            if n and dst <= va < dst + n:
                exact.append(name + " dst")
            sem = w.get("release") or {}
            sva = num(sem.get("va", 0)) if isinstance(sem, dict) else 0
            if sva and sva <= va < sva + 16:
                exact.append(name + " release")
        elif "launch" in w or "empty_dispatch" in w:
            key = "launch" if "launch" in w else "empty_dispatch"
            name = "%s %d (sub %d, ch %s)" % (key.replace("_", " "), w[key], w.get("submission", -1), w.get("channel", "?"))
            for r in w.get("releases", []) or []:
                rva = num(r.get("va", 0))
                if rva and rva <= va < rva + 16:
                    exact.append(name + " qmd release")
            for b in w.get("buffers", []) or []:
                bva, bl = num(b.get("va", 0)), num(b.get("length", b.get("len", 0)))
                if bl and bva <= va < bva + bl:
                    near.append(name + " points into 0x%x" % bva)
    return exact[:3] or near[:3] or ["(no listed work: a host or report semaphore, the captured driver or the CPU)"]


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    name, rpath, lpath = sys.argv[1:4]
    try:
        rep = json.load(open(rpath))
    except (OSError, ValueError) as e:
        print("%s: no replay summary (%s)" % (name, e))
        return 1
    try:
        work = json.load(open(lpath)).get("work", [])
    except (OSError, ValueError):
        work = []
    ck = rep.get("checks", {})
    print("%s: result=%s lanes=%s checks passed=%s failed=%s not_comparable=%s faults=%s warnings=%s synth_refused=%s"
          % (name, rep.get("result"), json.dumps(rep.get("lanes")), ck.get("passed"), ck.get("failed"),
             ck.get("not_comparable"), rep.get("faults"), rep.get("warnings"), rep.get("synth_refused")))
    if len(sys.argv) > 4:
        try:
            said = [l.rstrip() for l in open(sys.argv[4], errors="replace")
                    if "did not run" in l or "not created" in l or "not written" in l or "channels open" in l]
        except OSError:
            said = []
        for l in said[:5]:
            print("  stderr: " + l[:220])
        if len(said) > 5:
            print("  stderr: ... %d more such lines" % (len(said) - 5))
    rows = [r for r in rep.get("reports", []) if r.get("kind") == "mismatch"]
    if rows:
        print("  %-8s %-18s %9s %17s %-18s %8s %-18s %-18s %s" % ("record", "va", "length", "differ/compared",
                                                                   "first_va", "offset", "trace", "replay", "written by"))
    for r in rows[:20]:
        va, first = num(r["va"]), num(r["first_va"])
        print("  %-8s 0x%-16x %9d %8d/%-8d 0x%-16x %8s 0x%-16x 0x%-16x %s"
              % (str(r.get("record_seq")), va, num(r["length"]), num(r["differing"]), num(r["compared"]), first,
                 "+0x%x" % (first - va), num(r["expected"]), num(r["found"]), "; ".join(writers(work, first))))
    if len(rows) > 20:
        print("  ... %d more failed checks" % (len(rows) - 20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
