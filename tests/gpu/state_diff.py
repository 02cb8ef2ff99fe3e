#!/usr/bin/env python3
"""state_diff.py - compare the end states two replays of one trace wrote with `vgt replay --dump-state`
(sim against the GPU), and print the differential table.

    state_diff.py SIM_STATE GPU_STATE [--name TRACE] [--sim-json SIM_SUMMARY] [--json]
    state_diff.py --table ROWS.jsonl       the table of rows written before (one JSON row per trace)

Each semaphore and each 256-byte chunk of each observed range is classed:
  equal          same value on both
  differ         different, and sim says it knew the value (a disagreement: a bug in sim or in the replay)
  not modelled   different, and sim says it did not know the value (shaders it does not execute wrote
                 there): the sim's own account of what it does not model
Regions are matched by VA, length and the record they were read at ("seq"; null: at the end). A semaphore or
range only one side has, or only one side could read, is "missing"; one neither could read (unmapped) is
left out. The sim's replay summary (--sim-json, the --json of
`vgt replay --backend sim`) adds what sim reported not modelling (unsupported operations, channels left
blocked on an acquire that can never be satisfied); a blocked sim is never an "ok" verdict.
Verdict: ok (no disagreement), not-modelled (differences only where sim said it did not know),
DIVERGE (a disagreement, a missing region, or sim blocked). Exit 0 ok / not-modelled, 1 DIVERGE, 2 usage.
"""
import json
import sys

COLUMNS = ("trace", "sem", "sem_eq", "sem_diff", "sem_nm", "ranges", "rng_eq", "rng_diff", "rng_nm", "sim_notes",
           "verdict")


def load_state(path):
    sems, ranges, head = {}, {}, {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r["type"] == "state":
                head = r
            elif r["type"] == "semaphore":
                sems[(r["va"], r["len"], r.get("seq"))] = r
            elif r["type"] == "range":
                ranges[(r["va"], r["len"], r.get("seq"))] = r
    return head, sems, ranges


def first_diff_chunk(a, b):
    for i, (x, y) in enumerate(zip(a["chunks"], b["chunks"])):
        if x != y:
            return i
    return None


def compare(sim_path, gpu_path, name="trace", sim_summary=None):
    """One row of the table, with the details of every region that is not equal."""
    _, ssem, srng = load_state(sim_path)
    _, gsem, grng = load_state(gpu_path)
    row = dict.fromkeys(COLUMNS, 0)
    row["trace"], details = name, []
    for key in sorted(set(ssem) | set(gsem)):
        row["sem"] += 1
        s, g = ssem.get(key), gsem.get(key)
        if s and g and "error" in s and "error" in g:   # unmapped on both: nothing to compare
            row["sem"] -= 1
            continue
        if s is None or g is None or "error" in s or "error" in g:
            row["sem_diff"] += 1
            details.append({"kind": "semaphore", "va": hex(key[0]), "class": "missing",
                            "sim": s and s.get("value"), "gpu": g and g.get("value")})
        elif s["value"] == g["value"]:
            row["sem_eq"] += 1
        else:
            cls = "differ" if s["known"] else "not modelled"
            row["sem_diff" if s["known"] else "sem_nm"] += 1
            details.append({"kind": "semaphore", "va": hex(key[0]), "class": cls, "sim": hex(s["value"]),
                            "gpu": hex(g["value"])})
    for key in sorted(set(srng) | set(grng)):
        row["ranges"] += 1
        s, g = srng.get(key), grng.get(key)
        if s and g and "error" in s and "error" in g:
            row["ranges"] -= 1
            continue
        if s is None or g is None or "error" in s or "error" in g:
            row["rng_diff"] += 1
            details.append({"kind": "range", "va": hex(key[0]), "len": key[1], "class": "missing"})
            continue
        unknown = set(s.get("unknown", ()))
        bad = [i for i, (x, y) in enumerate(zip(s["chunks"], g["chunks"])) if x != y]
        if not bad:
            row["rng_eq"] += 1
            continue
        known_bad = [i for i in bad if i not in unknown]
        cls = "differ" if known_bad else "not modelled"
        row["rng_diff" if known_bad else "rng_nm"] += 1
        first = (known_bad or bad)[0] * s["chunk"]
        details.append({"kind": "range", "va": hex(key[0]), "len": key[1], "class": cls, "first_offset": first,
                        "chunks_differ": len(bad), "chunks_differ_known": len(known_bad)})
    notes = []
    if sim_summary:
        for r in sim_summary.get("reports", []):
            if r.get("event") == "unsupported":
                notes.append("not modelled: " + r.get("message", ""))
        if sim_summary.get("blocked"):
            notes.append("blocked: " + sim_summary.get("finish", sim_summary.get("why", "channels never finished")))
    row["sim_notes"] = len(notes)
    blocked = bool(sim_summary and sim_summary.get("blocked"))
    if row["sem_diff"] or row["rng_diff"] or blocked:
        row["verdict"] = "DIVERGE"
    elif row["sem_nm"] or row["rng_nm"]:
        row["verdict"] = "not-modelled"
    else:
        row["verdict"] = "ok"
    return row, details, notes


def table(rows):
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c) for c in COLUMNS}
    out = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    for r in rows:
        out.append("  ".join(str(r[c]).ljust(widths[c]) for c in COLUMNS))
    return "\n".join(out)


def main(argv):
    args, opts, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--name", "--sim-json", "--table"):
            if i + 1 >= len(argv):
                print(f"state_diff.py: {a} needs a value", file=sys.stderr)
                return 2
            opts[a] = argv[i + 1]
            i += 2
        elif a == "--json":
            opts[a] = True
            i += 1
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            args.append(a)
            i += 1
    if "--table" in opts:
        with open(opts["--table"]) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        print(table(rows))
        return 1 if any(r["verdict"] not in ("ok", "not-modelled") for r in rows) else 0
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    summary = None
    if "--sim-json" in opts:
        with open(opts["--sim-json"]) as f:
            text = f.read().strip()
        summary = json.loads(text) if text else None
    row, details, notes = compare(args[0], args[1], opts.get("--name", "trace"), summary)
    if opts.get("--json"):
        print(json.dumps(row))
    else:
        print(table([row]))
        for d in details:
            print("  " + json.dumps(d))
        for n in notes:
            print("  " + n)
    return 1 if row["verdict"] == "DIVERGE" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
