"""`vgt record` when things go wrong, without a GPU (CI): the capture library missing, an output that
cannot be created, the disk filling up midway (a file size limit: the kernel answers EFBIG exactly where
a full disk answers ENOSPC). Each gives a clear message; the program's exit status is preserved; what was
written before a failure stays readable.
"""
import os
import resource
import subprocess

import pytest

CHATTY = r'''
import os, sys, fcntl
fd = os.open(sys.argv[1], os.O_RDWR)
req = (3 << 30) | (4096 << 16) | (ord('F') << 8) | 0x10
for _ in range(int(sys.argv[2])):
    try: fcntl.ioctl(fd, req, bytearray(os.urandom(4096)))   # incompressible: the trace grows fast
    except OSError: pass
print("PROGRAM DONE")
sys.exit(4)
'''


def test_missing_capture_library(vgt_bin, tmp_path):
    env = dict(os.environ, VGT_CAPTURE_LIB=str(tmp_path / "nope" / "libvgt-capture.so"))
    r = subprocess.run([str(vgt_bin), "record", "-o", str(tmp_path / "t.vgt"), "--", "sh", "-c", "echo RAN"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2
    assert "libvgt-capture.so" in r.stderr and "VGT_CAPTURE_LIB" in r.stderr
    assert "RAN" not in r.stdout and not (tmp_path / "t.vgt").exists()


def test_unwritable_output(vgt_bin, tmp_path):
    for out in (tmp_path / "no" / "such" / "dir" / "t.vgt", "/proc/version"):
        r = subprocess.run([str(vgt_bin), "record", "-o", str(out), "--", "sh", "-c", "echo RAN"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r
        assert str(out) in r.stderr and "RAN" not in r.stdout


def test_disk_full_midway_keeps_what_was_written(vgt_bin, vgt, tmp_path):
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "chatty.py"
    prog.write_text(CHATTY)
    limit = 3_000_000

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    out = tmp_path / "t.vgt"
    r = subprocess.run([str(vgt_bin), "record", "-o", str(out), "--", "python3", str(prog), str(ctl), "1500"],
                       capture_output=True, text=True, timeout=120, env=env, preexec_fn=small_disk)
    assert r.returncode == 4, r.stderr                # the program's status, not vgt's
    assert "PROGRAM DONE" in r.stdout                   # it ran to the end, never blocked on the pipe
    assert "cannot write the trace" in r.stderr and "File too large" in r.stderr
    assert r.stderr.count("cannot write") == 1          # one message, not one per record
    assert 0 < out.stat().st_size <= limit
    v = vgt("verify", out, check=0)                     # what was written is a valid (trailer-less) trace
    assert "no trailer" in v.stdout
    lines = vgt("dump", out, check=0).stdout.splitlines()
    assert " SESSION_START " in lines[0]
    assert sum(" IOCTL " in l for l in lines) > 100


def test_program_killed_by_file_size_limit_of_its_own(vgt_bin, tmp_path):
    """vgt record ignores SIGXFSZ for itself only: a program that exceeds its own limit dies as usual."""
    def small(): resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    big = tmp_path / "big"
    r = subprocess.run([str(vgt_bin), "record", "-o", str(tmp_path / "t.vgt"), "--", "sh", "-c",
                        f"head -c 200000 /dev/zero > {big}"], capture_output=True, timeout=60, preexec_fn=small)
    assert r.returncode == 128 + 25   # SIGXFSZ, as without vgt record


def test_program_survives_vgt_record_being_killed(vgt_bin, tmp_path):
    """If vgt record dies (SIGKILL), the shim's next write into the stream's pipe fails with EPIPE: that
    must not kill the program with SIGPIPE (here restored to its default action, as in a C program)."""
    import signal
    import time
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    ready, killed, done = tmp_path / "ready", tmp_path / "killed", tmp_path / "done"
    prog = tmp_path / "victim.py"
    prog.write_text(f'''
import os, fcntl, signal, time
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
fd = os.open({str(ctl)!r}, os.O_RDWR)
req = (3 << 30) | (4096 << 16) | (ord('F') << 8) | 0x10
def poke(n):
    for _ in range(n):
        try: fcntl.ioctl(fd, req, bytearray(os.urandom(4096)))
        except OSError: pass
poke(50)
open({str(ready)!r}, "w").close()
while not os.path.exists({str(killed)!r}): time.sleep(0.01)
poke(1000)                                    # several 1 MiB chunks into the broken pipe
open({str(done)!r}, "w").write("survived")
''')
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    rec = subprocess.Popen([str(vgt_bin), "record", "-o", str(tmp_path / "k.vgt"), "--", "python3", str(prog)],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while not ready.exists() and time.time() < deadline:
        time.sleep(0.01)
    assert ready.exists(), "the program never started"
    rec.send_signal(signal.SIGKILL)
    rec.wait()
    killed.write_text("")
    while not done.exists() and time.time() < deadline:
        time.sleep(0.02)
    stderr = rec.stderr.read().decode()
    assert done.exists() and done.read_text() == "survived", stderr
    assert "Broken pipe" in stderr and "the program goes on" in stderr


# signal(), bsd_signal(), sysv_signal() and sigset() go to the kernel through glibc's internal sigaction,
# around the shim's sigaction hook. Once the shim's SIGSEGV handler is in (at the first NVIDIA open), a
# program that sets SIGSEGV with them must not replace it (its doorbell stores fault on purpose), yet must
# see its own handler as the disposition. The kernel's view is read with the raw rt_sigaction system call.
SIGNAL_FUNCS = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDWR)                  # "opens the GPU": the shim installs its handler
HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)
h = HANDLER(lambda s: None)
mine = ctypes.cast(h, ctypes.c_void_p).value
fn = getattr(libc, sys.argv[2])
fn.restype, fn.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p]
fn(11, mine)
kernel = (ctypes.c_ulong * 4)()                         # struct kernel_sigaction: handler first
libc.syscall.restype = ctypes.c_long
assert libc.syscall(13, 11, None, kernel, 8) == 0       # rt_sigaction(SIGSEGV, NULL, &kernel, 8)
seen = (ctypes.c_ulong * 40)()                          # struct sigaction: handler first
assert libc.sigaction(11, None, seen) == 0
print("KERNEL_IS_PROGRAMS", kernel[0] == mine, "SIGACTION_SAYS_PROGRAMS", seen[0] == mine)
'''



@pytest.mark.parametrize("func", ["signal", "bsd_signal", "sysv_signal", "sigset"])
def test_signal_functions_keep_the_shims_segv_handler(vgt_bin, tmp_path, func):
    ctl = tmp_path / "fakectl"
    ctl.write_bytes(b"")
    prog = tmp_path / "sig.py"
    prog.write_text(SIGNAL_FUNCS)
    env = dict(os.environ, VGT_CAPTURE_CTL_PATH=str(ctl))
    r = subprocess.run([str(vgt_bin), "record", "-o", str(tmp_path / "s.vgt"), "--", "python3", str(prog), str(ctl),
                        func], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "KERNEL_IS_PROGRAMS False SIGACTION_SAYS_PROGRAMS True" in r.stdout, (r.stdout, r.stderr)
