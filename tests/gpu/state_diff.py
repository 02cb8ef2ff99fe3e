#!/usr/bin/env python3
"""state_diff.py - compare the end states two replays of one trace wrote with `vgt replay --dump-state`
(sim against the GPU), and print the differential table.

    state_diff.py SIM_STATE GPU_STATE [--name TRACE] [--sim-json SIM_SUMMARY] [--gpu-json GPU_SUMMARY]
                  [--trace TRACE --vgt VGT] [--json]
    state_diff.py --table ROWS.jsonl       the table of rows written before (one JSON row per trace)
    state_diff.py --mark INFO_JSON [--manifest MANIFEST]
                                           why a trace must not run on the GPU (`vgt info --json` of it, '-'
                                           for standard input; the corpus manifest's entry by its name): prints
                                           the skip reason and exits 1, or nothing and exits 0

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
The capture is the arbiter (--trace): for each semaphore that differs, the last MEMORY record of the trace
that holds it (its value, seq and reason) is shown beside both. A GPU replay that never finished (its
summary, --gpu-json, says blocked: a channel hung, as on a GPU an earlier engine exception left unable to
finish draws) did not reach the trace's end state: a semaphore where sim equals the capture and only the
unfinished GPU differs is "gpu unfinished" (column sem_gpu_unf), not a disagreement, and the verdict is
gpu-unfinished unless sim disagrees elsewhere.
Verdict: ok (no disagreement), not-modelled (differences only where sim said it did not know),
gpu-unfinished (the GPU replay hung; sim agrees with the capture where they differ), DIVERGE (a disagreement,
a missing region, or sim blocked), "skipped: ..." (not run on the GPU, --mark). Exit 0 ok / not-modelled /
skipped, 1 DIVERGE or gpu-unfinished, 2 usage.
"""
import json
import subprocess
import sys

COLUMNS = ("trace", "sem", "sem_eq", "sem_diff", "sem_nm", "sem_gpu_unf", "ranges", "rng_eq", "rng_diff", "rng_nm",
           "sim_notes", "verdict")
PASSING = ("ok", "not-modelled")
REASONS = {1: "changed", 2: "observed"}


def trace_mark(identity, manifest_entry=None):
    """Why a trace must not be replayed on the GPU, or None: a derived trace (edited to provoke a lint: a
    program moved to an unmapped VA raises an engine exception that leaves the GPU unable to finish draws
    for others) or a synthetic one (placeholder shader code). The trace's identity says so (derived_from,
    capture_mode=synthetic), and for the corpus its manifest entry (derived)."""
    if identity.get("derived_from") or (manifest_entry or {}).get("derived"):
        return "skipped: derived trace (would fault on purpose)"
    if identity.get("capture_mode") == "synthetic":
        return "skipped: synthetic trace (placeholder shader code would fault)"
    return None


def manifest_entry(manifest_path, trace_name):
    try:
        with open(manifest_path) as f:
            traces = json.load(f).get("traces", [])
    except (OSError, ValueError):
        return None
    return next((t for t in traces if t.get("workload") == trace_name), None)


def capture_values(vgt, trace, sems):
    """{va: (value, seq, reason)}: for each semaphore (va -> length), the last MEMORY record of the trace
    that holds all of it; what the capture saw there last."""
    out = subprocess.run([vgt, "dump", str(trace), "--jsonl", "--type", "MEMORY"], capture_output=True,
                         text=True, check=True).stdout
    last = {}
    for line in out.splitlines():
        r = json.loads(line)
        f = r["fields"]
        base, data = f["gpu_va"], bytes.fromhex(f.get("data", ""))
        for va, n in sems.items():
            if base <= va and va + n <= base + len(data):
                last[va] = (int.from_bytes(data[va - base:va - base + n], "little"), r["seq"],
                            REASONS.get(f["reason"], str(f["reason"])))
    return last


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


def compare(sim_path, gpu_path, name="trace", sim_summary=None, gpu_summary=None, capture=None):
    """One row of the table, with the details of every region that is not equal. capture: {va: (value, seq,
    reason)} of capture_values, the arbiter for semaphores that differ."""
    _, ssem, srng = load_state(sim_path)
    _, gsem, grng = load_state(gpu_path)
    row = dict.fromkeys(COLUMNS, 0)
    row["trace"], details = name, []
    capture = capture or {}
    gpu_unfinished = bool(gpu_summary and gpu_summary.get("blocked"))
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
            cap = capture.get(key[0])
            if s["known"] and gpu_unfinished and cap and cap[0] == s["value"]:
                cls, col = "gpu unfinished", "sem_gpu_unf"   # sim reached the capture's value; the GPU hung
            else:
                cls, col = ("differ", "sem_diff") if s["known"] else ("not modelled", "sem_nm")
            row[col] += 1
            d = {"kind": "semaphore", "va": hex(key[0]), "class": cls, "sim": hex(s["value"]), "gpu": hex(g["value"])}
            if cap:
                d["capture"] = {"value": hex(cap[0]), "seq": cap[1], "reason": cap[2]}
            details.append(d)
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
    if gpu_unfinished:
        notes.append("gpu unfinished: " + gpu_summary.get("finish", gpu_summary.get("why", "channels never finished")))
    row["sim_notes"] = len(notes)
    blocked = bool(sim_summary and sim_summary.get("blocked"))
    if row["sem_diff"] or row["rng_diff"] or blocked:
        row["verdict"] = "DIVERGE"
    elif gpu_unfinished:
        row["verdict"] = "gpu-unfinished"
    elif row["sem_nm"] or row["rng_nm"]:
        row["verdict"] = "not-modelled"
    else:
        row["verdict"] = "ok"
    return row, details, notes


def table(rows):
    widths = {c: max(len(c), *(len(str(r.get(c, 0))) for r in rows)) if rows else len(c) for c in COLUMNS}
    out = ["  ".join(c.ljust(widths[c]) for c in COLUMNS).rstrip()]
    for r in rows:
        out.append("  ".join(str(r.get(c, 0)).ljust(widths[c]) for c in COLUMNS).rstrip())
    return "\n".join(out)


def passing(verdict):
    return verdict in PASSING or verdict.startswith("skipped:")


def main(argv):
    args, opts, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--name", "--sim-json", "--gpu-json", "--table", "--trace", "--vgt", "--mark", "--manifest"):
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
        return 1 if any(not passing(r["verdict"]) for r in rows) else 0
    if "--mark" in opts:
        with (sys.stdin if opts["--mark"] == "-" else open(opts["--mark"])) as f:
            text = f.read().strip()
        info = json.loads(text) if text else {}
        name = (info.get("trace") or "").rsplit("/", 1)[-1].removesuffix(".vgt")
        entry = manifest_entry(opts["--manifest"], name) if "--manifest" in opts else None
        why = trace_mark(info.get("identity") or {}, entry)
        if why:
            print(why)
        return 1 if why else 0
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    summaries = {}
    for o in ("--sim-json", "--gpu-json"):
        if o in opts:
            try:
                with open(opts[o]) as f:
                    text = f.read().strip()
                summaries[o] = json.loads(text) if text else None
            except ValueError:
                summaries[o] = None   # a replay that died before its summary: the states say the rest
    capture = None
    if "--trace" in opts:
        _, ssem, _ = load_state(args[0])
        capture = capture_values(opts.get("--vgt", "vgt"), opts["--trace"], {k[0]: k[1] for k in ssem})
    row, details, notes = compare(args[0], args[1], opts.get("--name", "trace"), summaries.get("--sim-json"),
                                  summaries.get("--gpu-json"), capture)
    if opts.get("--json"):
        print(json.dumps(row))
    else:
        print(table([row]))
        for d in details:
            print("  " + json.dumps(d))
        for n in notes:
            print("  " + n)
    return 0 if passing(row["verdict"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
