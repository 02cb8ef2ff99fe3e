#!/usr/bin/env python3
"""make.py OUTDIR: the hostile-trace suite for tests/gpu/hostile.sh, built with the Python writer
(vgtrace.hostile, trace-format/python). Writes OUTDIR/<case>.vgt and OUTDIR/manifest.tsv: case, expectation, what the
case is.

Expectations:
  refused   the replay must not submit it: cases whose work would raise an engine exception (an MME or SM
            exception leaves the H200 unable to finish other programs' Vulkan draws until reboot,
            backend/gpu/README.md "Engine exceptions"). They are written with capture_mode=synthetic,
            which a hardware replay refuses before creating anything, or (mme_illegal_opcode) as a capture,
            to show the MME guard refusing the call itself. Never run them with --force.
  confined  the work reaches the GPU and must be confined: faults (MMU faults: Xid 31, harmless to other
            clients, checked by the self-test's fault row) reported with their submission and method
            window, bounded waits, a clean teardown, and the health check passing afterwards."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "trace-format", "python"))
from vgtrace import hostile as H  # noqa: E402

CAPTURED = "hostile-test"   # not "synthetic": such a trace reaches the GPU
UNMAPPED = 0x7_0000_0000    # no mapping of the builder's is there

# host class (C86F) semaphore methods: SEM_ADDR_LO/HI 0x5c/0x60, SEM_PAYLOAD_LO 0x64, SEM_EXECUTE 0x6c
SEM_ADDR_LO, SEM_ADDR_HI, SEM_PAYLOAD_LO, SEM_EXECUTE = 0x005C, 0x0060, 0x0064, 0x006C


def sem_release(va, value):
    return (H.incr(0, SEM_ADDR_LO, va & 0xFFFFFFFF, va >> 32, value) +
            H.incr(0, SEM_EXECUTE, 1))   # OPERATION RELEASE


def case_mme_illegal_opcode(b):
    ch = b.channel()
    b.submit(ch, b.bind() + H.upload_macro(H.ILLEGAL_BOTH_STATE) + H.macro_calls(1))


def case_mme_runaway_loop(b):
    ch = b.channel()
    b.submit(ch, b.bind() + H.upload_macro(H.LOOP_FOREVER) + H.macro_calls(3000))


def qmd_launch(b, grid, program_va):
    """A compute launch (CBC0 SEND_PCAS_A of a QMD V04 at QMD_VA) with the given grid and program address."""
    qmd = bytearray(384)
    struct.pack_into("<I", qmd, 128, grid[0])
    struct.pack_into("<HH", qmd, 132, grid[1], 0)
    struct.pack_into("<H", qmd, 136, grid[2])
    struct.pack_into("<HHH", qmd, 144, 1024, 1024, 64)
    struct.pack_into("<Q", qmd, 0x48, program_va)   # PROGRAM_ADDRESS (illustrative; the replay is refused)
    qva = b.PB_VA + (32 << 20)
    b.contents(qva, bytes(qmd), b.pb_mem)
    # HOPPER_COMPUTE_A SEND_PCAS_A (0x02b4) with QMD_ADDRESS_SHIFTED8, SEND_SIGNALING_PCAS2_B (0x02c0)
    return H.incr(1, 0x02B4, qva >> 8) + H.incr(1, 0x02C0, 9)


def case_qmd_absurd_grid(b):
    ch = b.channel()
    b.submit(ch, b.bind() + qmd_launch(b, (0xFFFFFFFF, 0xFFFF, 0xFFFF), b.PB_VA))


def case_qmd_program_unmapped(b):
    ch = b.channel()
    b.submit(ch, b.bind() + qmd_launch(b, (1, 1, 1), UNMAPPED))


def case_illegal_method(b):
    ch = b.channel()
    b.submit(ch, b.bind() + H.incr(0, 0x3FF0, 0xDEAD) + H.incr(4, 0x3FF0, 0xBEEF))


def case_wild_semaphore(b):
    ch = b.channel()
    b.submit(ch, sem_release(UNMAPPED, 1))


def case_gpfifo_unmapped(b):
    ch = b.channel()
    b.submit(ch, H.incr(0, 0x0008, 0), entries=[H.gp_entry(UNMAPPED, 2)])


def case_huge_counts(b):
    ch = b.channel()
    # a NON_INC header of the largest count on a host NOP, then a copy of 1 GiB into unmapped memory
    nop = H.nonincr(0, 0x0008, [0] * 8191)
    src = b.PB_VA
    copy = (H.incr(4, 0x0400, src >> 32, src & 0xFFFFFFFF, UNMAPPED >> 32, UNMAPPED & 0xFFFFFFFF) + H.incr(4, 0x0418, 1 << 30)
            + H.incr(4, 0x0300, 2 | 1 << 7 | 1 << 8))
    b.submit(ch, b.bind() + nop + copy)


def case_self_overwriting_pb(b):
    ch = b.channel()
    at = b.PB_VA + (40 << 20)
    tail = H.incr(0, 0x0008, 0) * 4
    head = sem_release(at + 64, 0x2000_0000)   # overwrites a header of its own later entry with junk
    b.submit(ch, head + b"\0" * (64 - len(head)) + tail, at=at)


def case_channels_100k(b):
    for _ in range(100_000):
        b.channel(engines=())
    pb = H.incr(0, 0x0008, 0)
    b.contents(b.PB_VA, pb, b.pb_mem)
    for ch in b.channels:
        b.submit(ch, pb, at=b.PB_VA)


CASES = [
    ("mme_illegal_opcode", CAPTURED, "refused", "a macro both of whose ALUs are STATE (ILLEGAL_OPCODE): the MME guard"),
    ("mme_runaway_loop", "synthetic", "refused", "a one-instruction infinite-loop macro called 3,000 times"),
    ("qmd_absurd_grid", "synthetic", "refused", "a QMD with a 2^32 x 2^16 x 2^16 grid of 1024x1024x64 CTAs"),
    ("qmd_program_unmapped", "synthetic", "refused", "a QMD whose program is at an unmapped VA"),
    ("illegal_method", "synthetic", "refused", "methods at offsets no class defines"),
    ("wild_semaphore", CAPTURED, "confined", "a semaphore release to an unmapped VA (MMU fault)"),
    ("gpfifo_unmapped", CAPTURED, "confined", "a GPFIFO entry pointing into unmapped memory (PBDMA fault)"),
    ("huge_counts", CAPTURED, "confined", "8191 NOPs in one header, a 1 GiB copy into unmapped memory"),
    ("self_overwriting_pb", CAPTURED, "confined", "a push buffer whose semaphore release overwrites its own tail"),
    ("channels_100k", CAPTURED, "confined", "100,000 channels, one submission each"),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "manifest.tsv"), "w") as m:
        for name, mode, expect, what in CASES:
            b = H.Builder(capture_mode=mode)
            globals()["case_" + name](b)
            b.write(os.path.join(out, name + ".vgt"))
            m.write(f"{name}\t{expect}\t{what}\n")
    print(f"{len(CASES)} hostile traces in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "hostile-traces")
