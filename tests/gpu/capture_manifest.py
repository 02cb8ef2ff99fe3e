#!/usr/bin/env python3
"""tests/gpu/capture_manifest.py: write corpus/manifest.json from a run of capture_corpus.sh on the GPU machine.

    tests/gpu/capture_manifest.py LOG TRACES_DIR VGT [OUT=corpus/manifest.json]

LOG is the run's capture_log.txt, TRACES_DIR the unpacked traces.tar (traces and PNGs), VGT a host build
of vgt (for `vgt info --json`). For each workload: the command, GPU, driver, date (from the trace's
identity), the program's RESULT line without and with capture (they must be equal), its output hash,
the PNG's sha256 where there is one, and the trace's sha256, size, record and submission counts.
"""
import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

WORKLOADS = ["vadd", "many_launches", "streams_threads", "vk_compute", "vk_triangle", "gl_egl", "vk_nostore", "gl_nostore",
             "vk_scene", "vk_blcopy"]


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def output_hash(result):
    """The RESULT line's hash= value; None for a workload that prints its hashes under other names."""
    m = re.search(r"\bhash=([0-9a-f]+)", result)
    return m.group(1) if m else None


def sections(log):
    """{workload: text of its '== workload' section}."""
    out, name = {}, None
    for line in log.splitlines():
        m = re.match(r"^== (\S+)$", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def main():
    log_path, traces, vgt = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    out = Path(sys.argv[4]) if len(sys.argv) > 4 else Path("corpus/manifest.json")
    sec = sections(Path(log_path).read_text())
    entries = []
    for w in WORKLOADS:
        # a workload this run did not record (WORKLOADS=...), or whose trace is not in corpus/ yet, keeps its old entry
        if w not in sec or not Path(f"corpus/{w}.vgt").exists():
            print(f"capture_manifest: {w}: not in the log or no corpus/{w}.vgt, skipped", file=sys.stderr)
            continue
        s = sec[w]
        plain = re.search(r"^  plain:    (RESULT .*)$", s, re.M).group(1)
        captured = re.search(r"^  captured: (RESULT .*)$", s, re.M).group(1)
        pms = int(re.search(r"^plain: rc=\d+ (\d+) ms", s, re.M).group(1))
        cms = int(re.search(r"^captured: rc=\d+ (\d+) ms", s, re.M).group(1))
        stats = re.search(r"stats pid=\d+ (.*)$", s, re.M)
        trace = Path(f"corpus/{w}.vgt")
        info = json.loads(subprocess.run([vgt, "info", "--json", str(trace)], capture_output=True, text=True,
                                         check=True).stdout)
        ident = info["identity"]
        wall = int(ident["start_time_wall_ns"]) / 1e9
        e = {
            "workload": w,
            "source": f"corpus/workloads/{w}" + (".cu" if w in ("vadd", "many_launches", "streams_threads") else ".c"),
            "command": f"vgt record -o {w}.vgt -- {ident['command_line']}",
            "gpu": ident.get("gpu_name"), "pci_id": ident.get("pci_id"), "chip": ident.get("chip"),
            "driver": ident.get("driver_version"), "rm_api_version": ident.get("rm_api_version"),
            "kernel": ident.get("os"),
            "date": datetime.fromtimestamp(wall, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "memory_mode": ident.get("memory_mode"),
            "result_plain": plain, "result_captured": captured, "result_unchanged": plain == captured,
            "output_hash": output_hash(captured),
            "wall_ms_plain": pms, "wall_ms_captured": cms,
            "trace": str(trace), "trace_sha256": sha256(trace), "trace_bytes": info["file_size"],
            "records": info["records"], "submissions": info["submissions"], "channels": info["channel_count"],
            "records_by_type": info["records_by_type"],
            "capture_stats": stats.group(1) if stats else None,
        }
        png = traces / f"{w}.cap.png"
        if png.exists():
            e["png_sha256_captured"] = sha256(png)
            e["png_sha256_plain"] = sha256(traces / f"{w}.plain.png")
            e["png_unchanged"] = e["png_sha256_captured"] == e["png_sha256_plain"]
        entries.append(e)
    # entries of the traces recorded by the other hardware scripts (cuda_lane.sh, synth_lane.sh), and of the
    # workloads this run skipped, are kept
    if out.exists():
        done = {e["workload"] for e in entries}
        entries += [e for e in json.loads(out.read_text())["traces"] if e["workload"] not in done]
    doc = {"about": "Real H200 traces of the corpus workloads, recorded by `vgt record` "
                    "(tests/gpu/capture_corpus.sh, cuda_lane.sh, synth_lane.sh); see corpus/README.md.",
           "total_bytes": sum(e["trace_bytes"] for e in entries), "traces": entries}
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out}: {len(entries)} traces, {doc['total_bytes']} bytes")


if __name__ == "__main__":
    main()
