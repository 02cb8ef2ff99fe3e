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


def run(vgt_bin, tmp_path, profile):
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "one.py"
    prog.write_text(PROG)
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    env.pop("VGT_CAPTURE_PROFILE", None)
    if profile:
        env["VGT_CAPTURE_PROFILE"] = "1"
    return subprocess.run([str(vgt_bin), "record", "-o", "p.vgt", "--", "python3", str(prog), str(ctl)],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


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
