"""The CUDA driver API lane without a GPU: tests/fakecuda's libcuda.so.1 (host memory) and its program
cuda_prog, which calls the driver directly, through dlopen + dlsym(cuGetProcAddress_v2) + cuGetProcAddress
(the CUDA runtime's way), through a graph launched twice, and through a graph captured from a stream as the
CUDA runtime makes one (its kernel nodes hold functions the driver made from CUkernels: never looked up).

- capture: `vgt record` writes the format 1.2 CUDA records beside the RM-level ones, and the program's output
  is unchanged (also with the shim loaded but not capturing); every road to an entry point is recorded;
- the Python twin reads them (images stored once, parameters, bytes copied each way, graph nodes);
- `vgt info` checks their consistency, `vgt db` links calls to submissions (traces written by the twin);
- `vgt replay --lane cuda --backend cuda` forwards them through the fake driver, at the captured addresses
  and relocated, and checks the bytes copied back; without a driver it refuses (exit 2)."""
import json
import os
import shutil
import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

import vgtrace
from vgtrace import spec

N = 1024
PTX = b"// fake PTX: .entry vadd .entry scale .entry iota\n\0"
API = {"cuModuleLoadData": 3, "cuLibraryLoadData": 6, "cuModuleGetFunction": 10, "cuLibraryGetKernel": 11,
       "cuLaunchKernel": 13, "cuLaunchKernelEx": 14, "cuGraphLaunch": 16, "cuGraphInstantiate": 17, "cuMemAlloc": 19,
       "cuMemcpyHtoD": 29, "cuMemcpyHtoDAsync": 30, "cuMemcpyDtoH": 31, "cuMemcpyDtoHAsync": 32,
       "cuStreamSynchronize": 44, "cuCtxSynchronize": 50, "cuStreamBeginCapture": 51, "cuStreamEndCapture": 52}
PER_THREAD = 1 << 16


@pytest.fixture(scope="session")
def fake(build_dir):
    d = build_dir / "tests" / "fakecuda"
    lib, prog = d / "libcuda.so.1", d / "cuda_prog"
    if not lib.is_file() or not prog.is_file():
        pytest.fail(f"{lib} or {prog} is missing: build the tree", pytrace=False)
    return {"lib": lib, "prog": prog}


def run_prog(fake, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run([str(fake["prog"])], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


GLOBAL_AT = "0x6f0000000000"


@pytest.fixture(scope="session")
def captured(fake, vgt_bin, tmp_path_factory):
    """(trace path, plain stdout, captured stdout, capture's stderr)"""
    d = tmp_path_factory.mktemp("cudacap")
    ctl = d / "nvidiactl"
    ctl.write_bytes(b"")
    plain = run_prog(fake)
    out = d / "prog.vgt"
    env = dict(os.environ, FAKECUDA_CTL=str(ctl), VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", str(out), "--", str(fake["prog"])], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return out, plain, r.stdout, r.stderr


def records(path):
    return [r for r in vgtrace.read_trace(path).records]


def by_name(recs, name):
    return [r.fields for r in recs if r.name == name]


def floats(vals):
    return struct.pack(f"<{len(vals)}f", *vals)


def test_capture_is_transparent(captured, fake, build_dir):
    _, plain, cap, _ = captured
    assert plain.startswith("RESULT cuda_prog ok") and "rtld_next same" in plain
    assert cap == plain
    # loaded but not capturing: the dlsym and cuGetProcAddress hooks still pass everything through
    shim = build_dir / "lib" / "libvgt-capture.so"
    assert run_prog(fake, {"LD_PRELOAD": str(shim)}) == plain


def test_every_road_is_recorded(captured):
    recs = records(captured[0])
    assert vgtrace.read_trace(captured[0]).minor >= 2   # the CUDA records are 1.2; the writer writes its own minor
    images = by_name(recs, "CUDA_IMAGE")
    assert len(images) == 1, "one image, stored once for its two loads"
    assert images[0]["image"] == PTX and images[0]["kind"] == 3
    loads = by_name(recs, "CUDA_LOAD")
    assert [l["api"] for l in loads] == [API["cuModuleLoadData"], API["cuLibraryLoadData"]]
    assert all(l["image_hash"] == images[0]["hash"] and l["result"] == 0 for l in loads)
    funcs = {}
    for f in by_name(recs, "CUDA_FUNCTION"):
        funcs.setdefault(f["name"], f)   # the first lookup of each name
    assert set(funcs) == {b"vadd", b"iota", b"scale"}
    assert funcs[b"vadd"]["api"] == API["cuModuleGetFunction"] and funcs[b"vadd"]["owner"] == loads[0]["handle"]
    assert funcs[b"iota"]["api"] == API["cuLibraryGetKernel"] and funcs[b"iota"]["owner"] == loads[1]["handle"]
    kernels = by_name(recs, "CUDA_KERNEL")[:4]   # parts 1 to 3 (part 4: test_stream_captured_graph)
    assert [(k["api"], k["function"]) for k in kernels] == [
        (API["cuLaunchKernel"], funcs[b"vadd"]["function"]),      # linked call
        (API["cuLaunchKernel"], funcs[b"iota"]["function"]),      # cuGetProcAddress, per-thread stream
        (API["cuLaunchKernelEx"], funcs[b"scale"]["function"]),   # cuGetProcAddress
        (API["cuGraphInstantiate"], funcs[b"vadd"]["function"]),  # the graph's kernel node
    ]
    assert kernels[1]["flags"] & PER_THREAD and not kernels[0]["flags"] & PER_THREAD
    assert kernels[3]["flags"] & 2 and kernels[3]["node_index"] == 1 and kernels[3]["graph_exec"]
    allocs = [m["dst"] for m in by_name(recs, "CUDA_MEMORY") if m["op"] == 1]
    da, db, dc = allocs[:3]
    vadd = kernels[0]
    assert vadd["params"] == struct.pack("<QQQi", da, db, dc, N)
    assert vadd["layout"] == struct.pack("<8I", 0, 8, 8, 8, 16, 8, 24, 4)
    assert (vadd["grid_x"], vadd["block_x"]) == (N // 256, 256)
    assert kernels[1]["params"] == struct.pack("<QIi", allocs[3], 7000, N)


def test_bytes_crossing_host_and_device(captured):
    mem = by_name(records(captured[0]), "CUDA_MEMORY")
    a = [i * 0.5 for i in range(N)]
    b = [float(N - i) for i in range(N)]
    htod = [m for m in mem if m["op"] == 3 and m["api"] == API["cuMemcpyHtoD"]]
    assert [m["data"] for m in htod] == [floats(a), floats(b)]
    dtoh = [m for m in mem if m["op"] == 4 and m["api"] == API["cuMemcpyDtoH"]]
    assert dtoh[0]["data"] == floats([x + y for x, y in zip(a, b)])
    later = [m for m in mem if m["op"] == 4 and m["api"] == API["cuMemcpyDtoHAsync"] and not m["flags"] & 4]
    assert len(later) == 2 and all(m["flags"] & 16 and not m["data"] for m in later)
    results = [m for m in mem if m["op"] == 9]
    iota = [m for m in results if m["src"] == later[0]["src"]]
    assert iota[0]["data"] == struct.pack(f"<{N}I", *range(7000, 7000 + N))
    assert iota[0]["api"] == API["cuStreamSynchronize"]
    # the graph: the host bytes of its host-to-device node as of each of its two launches
    launch_data = [m for m in mem if m["api"] == API["cuGraphLaunch"] and m["op"] == 3]
    first = launch_data[0]["graph_exec"]
    assert [m["data"] for m in launch_data if m["graph_exec"] == first] == [
        floats([float(i + r * 3) for i in range(N)]) for r in (0, 1)]
    assert all(m["flags"] & 2 and m["node_index"] == 0 for m in launch_data)
    # the captured graph's: its host-to-device node copied part 4's x of each round
    assert [m["data"] for m in launch_data if m["graph_exec"] != first] == [
        floats([float(3 * i + r) for i in range(N)]) for r in (0, 1)]


def test_info_and_census_count_and_check(captured, vgt):
    r = vgt("info", "--json", captured[0])
    assert r.returncode == 1, "no submission at all: every call that put work on the GPU is unlinked"
    c = json.loads(r.stdout)["cuda"]
    # functions: vadd, iota, scale, the CUkernel vadd, the two node functions of the captured graph;
    # launches: 3 run, 2 into the stream being captured; graph launches: 2 of each graph
    assert (c["images"], c["loads"], c["functions"], c["launches"], c["graph_nodes"], c["graph_launches"]) == (1, 2, 6, 5, 3, 4)
    assert c["work_calls"] == 13 and c["work_linked"] == 0 and c["problem_count"] == 13
    assert "cuLaunchKernel is linked to no submission" in " ".join(c["problems"])
    assert "looked up before" not in " ".join(c["problems"]), "every launched function was looked up"
    t = json.loads(vgt("census", "--json", "--total", captured[0], check=0).stdout)["total"]["cuda"]
    assert t["launches"] == 5 and t["graph_launches"] == 4 and t["work_linked"] == 0


def head(api, before, after, result=0, flags=0):
    return {"api": api, "result": result, "thread": 7, "flags": flags, "submits_before": before, "submits_after": after}


def submit(i):
    """A GPFIFO_SUBMIT of one entry on channel 0xC0 (the link rule needs only the count)."""
    va = 0x200000 + 0x100 * i
    return ("GPFIFO_SUBMIT", {"client": 1, "channel": 0xC0, "token": 5, "flags": 0, "gp_get_before": 0xFFFFFFFF,
                              "gp_put_before": i, "gp_get_after": 0xFFFFFFFF, "gp_put_after": i + 1,
                              "entries": [(va & 0xFFFFFFFC) | ((1 << 10) << 32)],
                              "segments": [{"gpu_va": va, "flags": 0, "data": struct.pack("<I", 0x20010000)}]})


def linked_trace(path, extra=()):
    """Submissions 0-3 and CUDA calls linked to them: a load, a lookup, a launch that rang two doorbells
    (1, 2), a copy queued without one (deferred to 3), a cuInit that rang one (0)."""
    recs = [
        submit(0),   # written while cuInit ran: its record comes when it returned
        ("CUDA_CALL", {**head(1, 0, 1), "object": 0, "arg0": 0, "arg1": 0}),
        ("CUDA_IMAGE", {"hash": 0x77, "kind": 3, "image": PTX}),
        ("CUDA_LOAD", {**head(3, 1, 1), "handle": 0xA0, "image_hash": 0x77, "path": b""}),
        ("CUDA_FUNCTION", {**head(10, 1, 1), "function": 0xF0, "owner": 0xA0, "name": b"vadd"}),
        submit(1), submit(2),
        ("CUDA_KERNEL", {**head(13, 1, 3), "function": 0xF0, "stream": 0, "grid_x": 4, "grid_y": 1, "grid_z": 1,
                         "block_x": 256, "block_y": 1, "block_z": 1, "shared_bytes": 0, "graph_exec": 0,
                         "node_index": 0, "params": bytes(28), "layout": b""}),
        ("CUDA_MEMORY", {**head(30, 3, 3, flags=1), "dst": 0x1000, "src": 0x2000, "size": 64, "stream": 0,
                         "graph_exec": 0, "op": 3, "value": 0, "node_index": 0, "data": bytes(64)}),
        submit(3),
        *extra,
    ]
    vgtrace.write_trace(path, [(t, f, 1000 + i) for i, (t, f) in enumerate(recs)])
    return path


def test_consistent_trace(vgt, tmp_path):
    p = linked_trace(tmp_path / "linked.vgt")
    r = vgt("info", p, check=0)
    assert "consistency: ok" in r.stdout
    assert "linked to submissions: 2 of 2 (1 deferred" in r.stdout


def test_inconsistent_traces(vgt, tmp_path):
    late = ("CUDA_MEMORY", {**head(29, 4, 4), "dst": 0x1000, "src": 0x2000, "size": 8, "stream": 0, "graph_exec": 0,
                            "op": 3, "value": 0, "node_index": 0, "data": bytes(8)})
    r = vgt("info", linked_trace(tmp_path / "late.vgt", [late]), check=1)
    assert "cuMemcpyHtoD is linked to no submission" in r.stdout
    unknown = ("CUDA_KERNEL", {**head(13, 4, 4), "function": 0xBAD, "stream": 0, "grid_x": 1, "grid_y": 1, "grid_z": 1,
                               "block_x": 1, "block_y": 1, "block_z": 1, "shared_bytes": 0, "graph_exec": 0,
                               "node_index": 0, "params": b"", "layout": b""})
    r = vgt("info", linked_trace(tmp_path / "unknown.vgt", [unknown, submit(4)]), check=1)
    assert "function 0xbad, which no CUDA_FUNCTION record looked up before" in r.stdout
    ahead = ("CUDA_CALL", {**head(44, 9, 9), "object": 0, "arg0": 0, "arg1": 0})
    r = vgt("info", linked_trace(tmp_path / "ahead.vgt", [ahead]), check=1)
    assert "the trace had 4 GPFIFO_SUBMIT records by then" in r.stdout


def test_db_links_calls_to_submissions(vgt, tmp_path):
    p = linked_trace(tmp_path / "linked.vgt")
    out = tmp_path / "linked.db"
    vgt("db", p, "-o", out, check=0)
    db = sqlite3.connect(out)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "5"
    rows = db.execute("SELECT api, submission FROM cuda_api_submissions ORDER BY api_seq, submission").fetchall()
    assert rows == [("cuInit", 0), ("cuLaunchKernel", 1), ("cuLaunchKernel", 2), ("cuMemcpyHtoDAsync", 3)]
    assert db.execute("SELECT deferred FROM cuda_api WHERE api = 'cuMemcpyHtoDAsync'").fetchone() == (1,)
    assert db.execute("SELECT name, first_submission, submission_count FROM cuda_launches").fetchall() == [("vadd", 1, 2)]
    assert db.execute("SELECT count(*) FROM cuda_api_entries WHERE api = 'cuLaunchKernel'").fetchone() == (2,)
    assert db.execute("SELECT api, handle, image_hash FROM cuda_modules").fetchall() == [("cuModuleLoadData", 0xA0, 0x77)]


def replay(vgt_bin, fake, trace, *args, env=None):
    e = dict(os.environ, VGT_CUDA_LIB=str(fake["lib"]), **(env or {}))
    cmd = [str(vgt_bin), "replay", "--lane", "cuda", "--backend", "cuda", "--check", "--json", str(trace), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
    if r.returncode < 0 and shutil.which("gdb"):
        # killed by a signal: run it again under gdb so that the failure shows where it happened
        g = subprocess.run(["gdb", "-q", "-batch", "-ex", "run", "-ex", "bt", "--args", *cmd], capture_output=True,
                           text=True, env=e, timeout=300)
        r.stderr += "\n-- the same replay under gdb --\n" + g.stdout[-6000:] + g.stderr[-2000:]
    return r


def test_replay_through_the_fake_driver(captured, fake, vgt_bin):
    r = replay(vgt_bin, fake, captured[0])
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(r.stdout)
    assert s["backend"] == "cuda" and s["lane"] == "cuda"
    assert s["checks"]["passed"] == 7 and s["checks"]["failed"] == 0 and s["checks"]["observed_bytes"] == 7 * 4 * N
    assert s["cuda"]["forwarded"] == 13 and s["cuda"]["skipped"] == 0 and s["cuda"]["graphs_not_run"] == 0
    assert set(s["lanes"]) == {"verbatim", "synth", "cuda"}


@pytest.fixture(scope="session")
def captured_global(fake, vgt_bin, tmp_path_factory):
    """cuda_prog with its module-global part, its global where the replay's load will not put it (the replay
    does not set the hint): the trace path."""
    d = tmp_path_factory.mktemp("cudaglob")
    ctl = d / "nvidiactl"
    ctl.write_bytes(b"")
    out = d / "prog.vgt"
    env = dict(os.environ, FAKECUDA_CTL=str(ctl), VGT_CAPTURE_CTL_PATH=str(ctl), FAKECUDA_GLOBAL_AT=GLOBAL_AT)
    r = subprocess.run([str(vgt_bin), "record", "-o", str(out), "--", str(fake["prog"]), "global"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "RESULT cuda_prog ok" in r.stdout and "h5=0000000000000000" not in r.stdout
    return out


def test_module_global_lands_on_the_replays_global(captured_global, fake, vgt_bin):
    """cudaMemcpyToSymbol: the copy goes to the address cuLibraryGetGlobal answered at the capture; the replay
    loads the module again, its global lives elsewhere, and the copy must land there for the kernel that reads
    it (addg) to give the captured result."""
    recs = records(captured_global)
    glob = [r for r in recs if r.name == "CUDA_FUNCTION" and r.fields["api"] == 55]
    assert len(glob) == 1 and glob[0].fields["name"] == b"bias"
    at = glob[0].fields["function"]
    assert at & ~0xffffffff == int(GLOBAL_AT, 16)   # a page of the capture's hint: not where the replay puts it
    lib = glob[0].fields["owner"]
    assert any(r.name == "CUDA_LOAD" and r.fields["handle"] == lib for r in recs)
    # the image is in the trace before the lookup: the copy to the global comes before any launch needs it
    first_img = min(r.seq for r in recs if r.name == "CUDA_IMAGE")
    assert first_img < glob[0].seq
    copy = [r for r in recs if r.name == "CUDA_MEMORY" and r.fields["dst"] == at]
    assert len(copy) == 1 and copy[0].fields["op"] == 3
    r = replay(vgt_bin, fake, captured_global)
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(r.stdout)
    assert s["checks"]["failed"] == 0 and s["checks"]["passed"] == 8
    assert not [x for x in s["reports"] if x["kind"] == "warning"], s["reports"]


def test_replay_relocated(captured, fake, vgt_bin):
    """The driver will not reserve the captured addresses: the ranges move and the pointer parameters
    follow (the checks pass only if every pointer was rewritten)."""
    r = replay(vgt_bin, fake, captured[0], env={"FAKECUDA_NO_FIXED": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(r.stdout)
    assert s["cuda"]["ranges_moved"] >= 1 and s["cuda"]["ranges_kept"] == 0
    # vadd 3, iota 1, scale 1, the graph's vadd 3 at each of 2 launches, the captured graph's scale 1 and vadd 3
    # at each of 2 launches
    assert s["cuda"]["params_relocated"] == 19
    assert s["checks"]["passed"] == 7 and s["checks"]["failed"] == 0


def test_replay_detects_a_different_result(captured, fake, vgt_bin, tmp_path):
    """The capture says the async copy brought back other bytes than the kernels make: a failed check."""
    recs = records(captured[0])
    out = []
    for r in recs:
        f = r.fields
        if r.name == "CUDA_MEMORY" and f["op"] == 9 and f["data"][:4] == struct.pack("<I", 7000):
            f = dict(f, data=struct.pack("<I", 6999) + f["data"][4:])
        out.append((r.type, f, r.ts))
    bad = tmp_path / "bad.vgt"
    vgtrace.write_trace(bad, out)
    r = replay(vgt_bin, fake, bad)
    assert r.returncode == 1, r.stdout
    s = json.loads(r.stdout)
    assert s["checks"]["failed"] == 1 and s["checks"]["passed"] == 6



def test_stream_captured_graph(captured):
    """Part 4, the CUDA runtime's way: the CUkernels launched into a stream being captured become kernel nodes
    of the driver's own CUfunctions, which the program never looked up. At instantiation the capture writes
    their CUDA_FUNCTION records (api cuGraphInstantiate, owner the CUkernel, name), before the node records;
    the entry points the runtime asks cuGetProcAddress for at its versions are all wrapped."""
    path, _, _, err = captured
    assert "which is no exported entry point of libcuda" not in err, err
    recs = records(path)
    kernel_of = {f["function"]: f for f in by_name(recs, "CUDA_FUNCTION") if f["api"] == API["cuLibraryGetKernel"]}
    launches = [r for r in recs if r.name == "CUDA_KERNEL" and r.fields["flags"] & 4]   # into the capturing stream
    assert [kernel_of[r.fields["function"]]["name"] for r in launches] == [b"scale", b"vadd"]
    nodes = [r for r in recs if r.name == "CUDA_KERNEL" and r.fields["flags"] & 2][1:]  # the second graph's
    assert [n.fields["node_index"] for n in nodes] == [1, 2]
    looked_up = {}
    for r in recs:
        if r.name == "CUDA_FUNCTION":
            looked_up.setdefault(r.fields["function"], r)
    for node, launch in zip(nodes, launches):
        fn = node.fields["function"]
        assert fn != launch.fields["function"], "the node's function is the driver's, not the CUkernel launched"
        rec = looked_up[fn]
        assert rec.seq < node.seq and rec.fields["api"] == API["cuGraphInstantiate"]
        assert rec.fields["owner"] == launch.fields["function"]   # the CUkernel, itself owned by the library
        assert rec.fields["name"] == kernel_of[launch.fields["function"]]["name"]
        assert node.fields["params"] == launch.fields["params"] and node.fields["layout"] == launch.fields["layout"]
    calls = [r.fields for r in recs if r.name == "CUDA_CALL"]
    assert [c["api"] for c in calls if c["api"] in (API["cuStreamBeginCapture"], API["cuStreamEndCapture"])] == [
        API["cuStreamBeginCapture"], API["cuStreamEndCapture"]]
    # cuCtxSynchronize as the runtime of CUDA 13 has it (cuCtxSynchronize_v2): recorded, and the bytes the
    # graph's device-to-host node brought back carried at each
    syncs = [c for c in calls if c["api"] == API["cuCtxSynchronize"]]
    assert len(syncs) == 3   # part 1's, then one after each launch of the captured graph
    y = [m for m in by_name(recs, "CUDA_MEMORY") if m["op"] == 9 and m["api"] == API["cuCtxSynchronize"]]
    b = [float(N - i) for i in range(N)]
    assert [m["data"] for m in y] == [floats([(3 * i + r) * 2.0 + b[i] for i in range(N)]) for r in (0, 1)]


def test_graph_with_an_unknown_kernel_fails(captured, fake, vgt_bin, tmp_path):
    """A trace whose captured graph's node functions were never looked up (as the capture wrote them before
    it resolved them at instantiation): the graph's launches are not run, each counted once, and the replay
    fails and says why, rather than running part of the graph."""
    recs = records(captured[0])
    out = [(r.type, r.fields, r.ts) for r in recs
           if not (r.name == "CUDA_FUNCTION" and r.fields["api"] == API["cuGraphInstantiate"])]
    old = tmp_path / "unresolved.vgt"
    vgtrace.write_trace(old, out)
    r = replay(vgt_bin, fake, old)
    assert r.returncode == 1, r.stdout
    s = json.loads(r.stdout)
    assert s["cuda"]["graphs_not_run"] == 2 and s["cuda"]["skipped"] == 2
    assert s["cuda"]["forwarded"] == 11, "the other calls, each counted once"
    assert "2 CUDA graph launches not run" in s["why"]
    text = subprocess.run([str(vgt_bin), "replay", "--lane", "cuda", "--backend", "cuda", str(old)], capture_output=True,
                          text=True, env=dict(os.environ, VGT_CUDA_LIB=str(fake["lib"])), timeout=120)
    assert text.returncode == 1
    assert "result: FAILED (2 CUDA graph launches not run)" in text.stdout
    lines = [l for l in (text.stdout + text.stderr).splitlines() if "not replayed, nor any later launch" in l]
    assert len(lines) == 1 and "kernel node 1" in lines[0] and "was never looked up in the trace" in lines[0], lines


def test_refusal_without_a_driver(captured, vgt_bin, vgt):
    e = dict(os.environ, VGT_CUDA_LIB="/nonexistent/libcuda.so.1")
    r = subprocess.run([str(vgt_bin), "replay", "--backend", "cuda", str(captured[0])], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.returncode == 2 and "no CUDA driver on this machine" in r.stderr
    r = vgt("replay", "--backend", "sim", "--lane", "cuda", captured[0], check=2)
    assert "lane cuda is not implemented by backend sim" in r.stderr


def test_lane_counts_on_sim(vgt, small_trace):
    s = json.loads(vgt("replay", "--backend", "sim", "--json", small_trace, check=0).stdout)
    assert s["lanes"] == {"verbatim": s["submissions_replayed"], "synth": 0, "cuda": 0}
    assert s["submissions_replayed"] > 0


def test_slice_renumbers_the_links(vgt, tmp_path):
    """A slice numbers its submissions from its first: the CUDA calls it keeps are linked to the same
    submissions as in the whole trace."""
    p = linked_trace(tmp_path / "linked.vgt")
    out = tmp_path / "cut.vgt"
    vgt("slice", p, out, "--submits", "1..", check=0)
    heads = {r.name: (r.fields["submits_before"], r.fields["submits_after"]) for r in records(out)
             if r.name in ("CUDA_KERNEL", "CUDA_MEMORY")}
    assert heads == {"CUDA_KERNEL": (0, 2), "CUDA_MEMORY": (2, 2)}
    r = vgt("info", out, check=0)
    assert "linked to submissions: 2 of 2 (1 deferred" in r.stdout and "consistency: ok" in r.stdout


def test_replay_relocates_pointers_inside_a_struct_parameter(fake, vgt_bin, tmp_path):
    """A kernel that takes its pointers in one struct parameter (as PyTorch's do): moved ranges reach it
    through the aligned words of that parameter."""
    n = 256
    a = floats([float(i) for i in range(n)])
    b = floats([float(2 * i) for i in range(n)])
    c = floats([float(3 * i) for i in range(n)])
    da, db, dc = 0x7E1200000000, 0x7E1200001000, 0x7E1200002000
    size = 4 * n
    recs = [
        ("CUDA_IMAGE", {"hash": 0x77, "kind": 3, "image": PTX}),
        ("CUDA_LOAD", {**head(3, 0, 0), "handle": 0xA0, "image_hash": 0x77, "path": b""}),
        ("CUDA_FUNCTION", {**head(10, 0, 0), "function": 0xF0, "owner": 0xA0, "name": b"vadd"}),
        *[("CUDA_MEMORY", {**head(19, 0, 0), "dst": d, "src": 0, "size": size, "stream": 0, "graph_exec": 0, "op": 1,
                           "value": 0, "node_index": 0, "data": b""}) for d in (da, db, dc)],
        ("CUDA_MEMORY", {**head(29, 0, 0), "dst": da, "src": 0x1000, "size": size, "stream": 0, "graph_exec": 0,
                         "op": 3, "value": 0, "node_index": 0, "data": a}),
        ("CUDA_MEMORY", {**head(29, 0, 0), "dst": db, "src": 0x2000, "size": size, "stream": 0, "graph_exec": 0,
                         "op": 3, "value": 0, "node_index": 0, "data": b}),
        ("CUDA_KERNEL", {**head(13, 0, 0), "function": 0xF0, "stream": 0, "grid_x": 1, "grid_y": 1, "grid_z": 1,
                         "block_x": n, "block_y": 1, "block_z": 1, "shared_bytes": 0, "graph_exec": 0, "node_index": 0,
                         "params": struct.pack("<QQQiI", da, db, dc, n, 0), "layout": struct.pack("<II", 0, 32)}),
        ("CUDA_MEMORY", {**head(31, 0, 0), "dst": 0x3000, "src": dc, "size": size, "stream": 0, "graph_exec": 0,
                         "op": 4, "value": 0, "node_index": 0, "data": c}),
    ]
    trace = tmp_path / "struct.vgt"
    vgtrace.write_trace(trace, [(t, f, 100 + i) for i, (t, f) in enumerate(recs)])
    r = replay(vgt_bin, fake, trace, env={"FAKECUDA_NO_FIXED": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(r.stdout)
    assert s["cuda"]["ranges_moved"] == 1 and s["cuda"]["params_relocated"] == 3
    assert s["checks"]["passed"] == 1 and s["checks"]["failed"] == 0


CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CUDA_RECORDS = ("CUDA_IMAGE", "CUDA_LOAD", "CUDA_FUNCTION", "CUDA_KERNEL")


def test_corpus_cuda_traces_carry_cuda_records(vgt):
    """Every CUDA trace of the corpus carries the CUDA driver API records, as the manifest says and the trace
    itself counts; the launches the RESULT line implies are there; lane 3 on sim is refused on them."""
    man = json.loads((CORPUS / "manifest.json").read_text())["traces"]
    cuda = {e["workload"]: e for e in man if e["source"].endswith((".cu", ".py"))}
    assert set(cuda) == {"vadd", "many_launches", "streams_threads", "cuda_graph", "cuda_graph_memcpy", "triton_small",
                         "multi_kernel", "torch_small"}
    for name, e in cuda.items():
        info = json.loads(vgt("info", "--json", CORPUS / f"{name}.vgt").stdout)
        assert info["records_by_type"] == e["records_by_type"] and info["records"] == e["records"], name
        assert info["file_size"] == e["trace_bytes"] == (CORPUS / f"{name}.vgt").stat().st_size, name
        by = info["records_by_type"]
        # an image is stored (CUDA_IMAGE) or referenced in its library (CUDA_IMAGE_REF: torch_small's fatbins)
        has = [by.get(t, 0) > 0 or (t == "CUDA_IMAGE" and by.get("CUDA_IMAGE_REF", 0) > 0) for t in CUDA_RECORDS]
        assert all(has), (name, by)
    assert cuda["torch_small"]["records_by_type"].get("CUDA_IMAGE_REF") == 7
    assert cuda["many_launches"]["records_by_type"]["CUDA_KERNEL"] == 10000   # launches=10000 in its RESULT line
    r = vgt("replay", "--backend", "sim", "--lane", "cuda", CORPUS / "vadd.vgt", check=2)
    assert "lane cuda is not implemented by backend sim" in r.stderr
