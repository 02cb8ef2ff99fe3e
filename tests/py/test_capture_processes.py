"""`vgt record` and the capture shim across processes, without a GPU (CI).

VGT_CAPTURE_CTL_PATH makes the shim treat a plain file as /dev/nvidiactl: the program "opens the GPU"
and every ioctl on it (refused by the kernel with ENOTTY) is still recorded as an IOCTL record, which is
enough to see which process wrote what where. Each process uses its own ioctl number, so a record in the
wrong trace is caught.

Choice under test (capture/README.md "Processes"): the first process to open an NVIDIA node owns OUT; any
other process that uses the GPU (a forked child, a program exec'd later) writes its own complete trace
OUT.<pid>.vgt; a child that never touches the GPU (here: it execs /bin/true) leaves nothing.
"""
import os
import re
import subprocess

import pytest

PARENT_NR, CHILD_NR, DUP_NR, LATE_NR = 0x10, 0x11, 0x12, 0x13

FORKING = r'''
import os, sys, fcntl
ctl = sys.argv[1]
def req(nr): return (3 << 30) | (32 << 16) | (ord('F') << 8) | nr
def poke(fd, nr, n):
    for _ in range(n):
        try: fcntl.ioctl(fd, req(nr), bytearray(32))
        except OSError: pass
fd = os.open(ctl, os.O_RDWR)
poke(fd, 0x10, 2)
pid = os.fork()
if pid == 0:
    cfd = os.open(ctl, os.O_RDWR)          # the child opens the GPU itself, as CUDA does after fork
    poke(cfd, 0x11, 3)
    dup = fcntl.fcntl(cfd, fcntl.F_DUPFD_CLOEXEC, 50)   # a duplicate is still the NVIDIA node
    poke(dup, 0x12, 1)
    os.execv("/bin/true", ["/bin/true"])
_, status = os.waitpid(pid, 0)
print("CHILD", pid, os.waitstatus_to_exitcode(status))
poke(fd, 0x13, 1)
sys.exit(5)
'''


def dump(vgt, path):
    return vgt("dump", path, check=0).stdout.splitlines()


def ioctl_nrs(lines):
    return [int(m.group(1), 16) & 0xff for l in lines for m in [re.search(r" IOCTL .*request=(0x[0-9a-f]+)", l)] if m]


def record_forking(vgt_bin, tmp_path, out="out.vgt"):
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "fork.py"
    prog.write_text(FORKING)
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    return subprocess.run([str(vgt_bin), "record", "-o", out, "--", "python3", str(prog), str(ctl)],
                          capture_output=True, timeout=60, env=env, cwd=tmp_path)


def test_forked_child_gets_its_own_trace(vgt_bin, vgt, tmp_path):
    r = record_forking(vgt_bin, tmp_path)
    assert r.returncode == 5, r.stderr              # the program's own status
    child = int(re.search(rb"CHILD (\d+) 0", r.stdout).group(1))
    main = dump(vgt, tmp_path / "out.vgt")
    vgt("verify", tmp_path / "out.vgt", check=0)
    assert ioctl_nrs(main) == [PARENT_NR, PARENT_NR, LATE_NR]
    starts = [l for l in main if " PROCESS_START " in l]
    assert len(starts) == 1 and f"pid={child}" not in starts[0]

    own = tmp_path / f"out.{child}.vgt"
    assert own.is_file(), sorted(os.listdir(tmp_path))
    vgt("verify", own, check=0)
    lines = dump(vgt, own)
    assert " SESSION_START " in lines[0] and f"pid={child} " in lines[0]
    parent_pid = re.search(r" PROCESS_START pid=(\d+)", starts[0]).group(1)
    assert f"ppid={parent_pid}" in lines[0]
    assert ioctl_nrs(lines) == [CHILD_NR] * 3 + [DUP_NR]
    assert any(f"PROCESS_END pid={child} exit_status=-1" in l for l in lines)   # it exec'd: no status of its own
    assert " SESSION_END " in lines[-1]
    assert "preload, child process" in vgt("info", own, check=0).stdout
    assert f"out.{child}.vgt".encode() in r.stderr  # vgt record names the extra trace
    # /bin/true, exec'd by the child, never opened the GPU: no trace of its own
    assert sorted(p.name for p in tmp_path.glob("out.*.vgt")) == [f"out.{child}.vgt"]


def test_live_output_leaves_children_uncaptured(vgt_bin, vgt, tmp_path):
    r = record_forking(vgt_bin, tmp_path, out="-")
    assert r.returncode == 5
    assert r.stdout.startswith(b"VGTRACE\0")
    live = tmp_path / "live.vgt"
    live.write_bytes(r.stdout)
    assert ioctl_nrs(dump(vgt, live)) == [PARENT_NR, PARENT_NR, LATE_NR]
    assert b"not captured" in r.stderr and not list(tmp_path.glob("*.[0-9]*.vgt"))


def test_wrapper_process_without_gpu_hands_the_trace_to_its_child(vgt_bin, vgt, tmp_path):
    """sh (no GPU) runs the GPU program as a child: that child is the first to open the GPU, so it owns
    OUT, not a side file."""
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "one.py"
    prog.write_text("import os, sys, fcntl\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
                    "try: fcntl.ioctl(fd, (3 << 30) | (32 << 16) | (ord('F') << 8) | 0x21, bytearray(32))\n"
                    "except OSError: pass\n")
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", "w.vgt", "--", "sh", "-c", f"python3 {prog} {ctl}; exit 3"],
                       capture_output=True, timeout=60, env=env, cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert ioctl_nrs(dump(vgt, tmp_path / "w.vgt")) == [0x21]
    assert not list(tmp_path.glob("w.*.vgt"))


def test_reused_fd_numbers_are_never_written(vgt_bin, vgt, tmp_path):
    """A program that closes the capture's inherited fds and reuses their numbers for its own files (a
    daemon closing everything, then opening files): the shim must notice they are no longer the pipe and
    the claim memfd, and never write there. The GPU-using program it then runs is still captured, into
    its own file."""
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    data = [tmp_path / "data0", tmp_path / "data1"]
    prog = tmp_path / "reuse.py"
    prog.write_text(f'''
import os, sys
gpu = "import os, fcntl; fd = os.open({str(ctl)!r}, os.O_RDWR)\\ntry: fcntl.ioctl(fd, (3 << 30) | (32 << 16) | (ord('F') << 8) | 0x31, bytearray(32))\\nexcept OSError: pass"
for name, path in (("VGT_CAPTURE_FD", {str(data[0])!r}), ("VGT_CAPTURE_CLAIM", {str(data[1])!r})):
    n = int(os.environ[name])
    os.close(n)
    f = os.open(path, os.O_RDWR | os.O_CREAT)
    os.write(f, b"USER DATA " * 4)
    os.dup2(f, n)                       # inheritable, same number as the capture's fd had
    os.close(f)
os.execv(sys.executable, [sys.executable, "-c", gpu])
''')
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", "r.vgt", "--", "python3", str(prog)], capture_output=True,
                       timeout=60, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for d in data:
        assert d.read_bytes() == b"USER DATA " * 4, d
    own = list(tmp_path.glob("r.*.vgt"))
    assert len(own) == 1, r.stderr
    vgt("verify", own[0], check=0)
    assert ioctl_nrs(dump(vgt, own[0])) == [0x31]


def test_vfork_children_leave_the_capture_alone(vgt_bin, vgt, tmp_path):
    """Python's subprocess starts children with vfork: the child shares the parent's memory (the shim's
    state) until it execs or _exits. Its close/execve/_exit go through the shim's hooks and must not
    finish, close or change the parent's capture: the parent's records after the children are all there,
    with one PROCESS_END, its own."""
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "spawner.py"
    prog.write_text(f'''
import os, sys, fcntl, subprocess
fd = os.open({str(ctl)!r}, os.O_RDWR)
def poke(nr):
    try: fcntl.ioctl(fd, (3 << 30) | (32 << 16) | (ord('F') << 8) | nr, bytearray(32))
    except OSError: pass
poke(0x40)
for _ in range(3):
    subprocess.run(["/bin/true"], check=True)                  # vfork + execve
try: subprocess.run(["/nonexistent/program"])                  # vfork + failed execve + _exit
except OSError: pass
poke(0x41)
sys.exit(6)
''')
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", "v.vgt", "--", "python3", str(prog)], capture_output=True,
                       timeout=60, env=env, cwd=tmp_path)
    assert r.returncode == 6, r.stderr
    lines = dump(vgt, tmp_path / "v.vgt")
    vgt("verify", tmp_path / "v.vgt", check=0)
    assert ioctl_nrs(lines) == [0x40, 0x41]
    ends = [l for l in lines if " PROCESS_END " in l]
    assert len(ends) == 1 and "exit_status=6" in ends[0], ends
    assert not list(tmp_path.glob("v.*.vgt"))
