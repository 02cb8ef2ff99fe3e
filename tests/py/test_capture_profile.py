"""VGT_CAPTURE_PROFILE=1: the capture prints, once at exit, where its own start-up and exit time went
(bench/capture/startup.sh reads it). Without a GPU: VGT_CAPTURE_CTL_PATH makes a plain file stand in for
/dev/nvidiactl, which starts the capture as a real first open would."""
import os
import re
import subprocess

PROG = ("import os, sys, fcntl\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try: fcntl.ioctl(fd, (3 << 30) | (32 << 16) | (ord('F') << 8) | 0x21, bytearray(32))\n"
        "except OSError: pass\n")

KEYS = ["ctor", "activate", "views", "register", "submits", "submit", "lifetime", "cuda+abi", "capture_finish",
        "exit_pass", "end_records", "writer_close", "total_finish"]


def record_prog(vgt_bin, tmp_path, text, name, profile=False):
    """`vgt record` of a Python program `text` that gets the stand-in node's path as its argument; the trace
    is tmp_path/<name>.vgt."""
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / f"{name}.py"
    prog.write_text(text)
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    env.pop("VGT_CAPTURE_PROFILE", None)
    if profile:
        env["VGT_CAPTURE_PROFILE"] = "1"
    return subprocess.run([str(vgt_bin), "record", "-o", f"{name}.vgt", "--", "python3", str(prog), str(ctl)],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


def run(vgt_bin, tmp_path, profile):
    return record_prog(vgt_bin, tmp_path, PROG, "p", profile)


def test_profile_line_names_every_phase(vgt_bin, vgt, tmp_path):
    r = run(vgt_bin, tmp_path, True)
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("vgt-capture: profile ")]
    assert len(lines) == 1, r.stderr
    vals = dict(re.findall(r"([a-z_+]+)=([0-9.]+)", lines[0]))
    for k in KEYS:
        assert k in vals, (k, lines[0])
    ms = {k: float(v) for k, v in vals.items()}
    # the parts of the finish add up to its total, and the program ran between start and finish
    parts = ms["cuda+abi"] + ms["capture_finish"] + ms["end_records"] + ms["writer_close"]
    assert abs(parts - ms["total_finish"]) < 0.05
    assert ms["exit_pass"] <= ms["capture_finish"] + 0.01
    assert ms["lifetime"] >= ms["activate"]
    vgt("verify", tmp_path / "p.vgt", check=0)


def test_no_profile_line_by_default(vgt_bin, tmp_path):
    r = run(vgt_bin, tmp_path, False)
    assert r.returncode == 0, r.stderr
    assert "vgt-capture: profile" not in r.stderr


HOOK_PROG = ("import os, sys, fcntl, mmap\nfd = os.open(sys.argv[1], os.O_RDWR)\nos.ftruncate(fd, 4096)\n"
             "for i in range(3):\n"
             "    try: fcntl.ioctl(fd, (3 << 30) | (32 << 16) | (ord('F') << 8) | 0x2a, bytearray(32))\n"
             "    except OSError: pass\n"
             "m = mmap.mmap(fd, 4096)\nm.close()\n")


def test_hooks_and_record_lines_account_by_family(vgt_bin, vgt, tmp_path):
    """The hooks line: calls and exclusive ms per hook family (three RM_CONTROL escapes, one mmap of the
    node), the capture's total; vgt record's own line: its phases and the writer's parts."""
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "hooks.py"
    prog.write_text(HOOK_PROG)
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl), VGT_CAPTURE_PROFILE="1")
    r = subprocess.run([str(vgt_bin), "record", "-o", "h.vgt", "--", "python3", str(prog), str(ctl)],
                       capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    hooks = [l for l in r.stderr.splitlines() if l.startswith("vgt-capture: hooks ")]
    assert len(hooks) == 1, r.stderr
    h = {k: float(v) for k, v in re.findall(r"([a-z_]+)=([0-9.]+)", hooks[0])}
    assert h["ioctl_control_n"] == 3 and h["mmap_n"] == 1 and h["activate_n"] == 1, hooks[0]
    assert h["open_n"] >= 1 and h["real_n"] >= 4, hooks[0]   # the real ioctls and mmap: the program's own
    families = sum(v for k, v in h.items() if not k.endswith("_n") and k not in ("pid", "real", "hooks_total")
                   and not k.startswith("writer_"))
    assert abs(families - h["hooks_total"]) < 0.05, hooks[0]
    assert h["writer_chunks"] >= 1, hooks[0]
    rec = [l for l in r.stderr.splitlines() if l.startswith("vgt record: profile ")]
    assert len(rec) == 1, r.stderr
    v = {k: float(x) for k, x in re.findall(r"([a-z_]+)=([0-9.]+)", rec[0])}
    for k in ["setup", "child", "after_exit", "drain", "close", "compress", "write", "cas", "trailer", "commit",
              "chunks", "in_mb", "out_mb", "total"]:
        assert k in v, (k, rec[0])
    assert v["total"] + 0.01 >= v["setup"] + v["child"] and v["after_exit"] + 0.01 >= v["close"], rec[0]
    assert v["chunks"] >= 1, rec[0]
    vgt("verify", tmp_path / "h.vgt", check=0)


# The stream's fd is moved high (900 and up) by the constructor, while the program has one thread: at the
# first NVIDIA open, in a program that has started threads, growing the fd table waits for an RCU grace
# period (tens of ms). The program looks for it before its first open of the node.
EARLY = ("import os, sys, stat\n"
         "high = [f for f in os.listdir('/proc/self/fd') if int(f) >= 900 and stat.S_ISFIFO(os.fstat(int(f)).st_mode)]\n"
         "print('HIGH_PIPE_BEFORE_OPEN', bool(high))\n"
         "fd = os.open(sys.argv[1], os.O_RDWR)\n")


def test_stream_moved_high_before_the_first_open(vgt_bin, vgt, tmp_path):
    r = record_prog(vgt_bin, tmp_path, EARLY, "early")
    assert r.returncode == 0, r.stderr
    assert "HIGH_PIPE_BEFORE_OPEN True" in r.stdout, (r.stdout, r.stderr)
    dump = vgt("dump", tmp_path / "early.vgt").stdout
    assert " PROCESS_START " in dump and " PROCESS_END " in dump
