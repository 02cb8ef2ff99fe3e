"""Traces in a valid format with hostile content: runaway MME macros, huge method counts, many channels,
huge copies inside a huge mapping, wild addresses. A tool that reads traces from elsewhere must finish on
each of them, quickly, with a clear message (the project's budget tests, tests/py/test_budgets.py, and its
GPU confinement suite, tests/gpu/hostile/make.py, are built from these).

Everything here is written from docs/trace-format.md and the NVIDIA facts the C code cites
(trace-format/include/vgt/nv_pushbuf.h for the GPFIFO entry and method header bits, open-gpu-doc
clcb97.h for the MME methods, clc8b5.h for the copy engine). A trace is built as a list of records for
writer.write_trace(); `Builder` keeps the handles and the sequence straight."""
import struct

from . import records as vrec
from .writer import Writer

CLIENT = 0xC1D00001
DEVICE, SUBDEVICE, VASPACE = 0x5C000001, 0x5C000002, 0x5C000004
HOST_CLASS = 0xC86F          # HOPPER_CHANNEL_GPFIFO_A
CLS_3D, CLS_COPY, CLS_COMPUTE = 0xCB97, 0xC8B5, 0xCBC0

# method header SEC_OP (nv_pushbuf.h): INC 1, NON_INC 3, IMMD 4
SEC_INC, SEC_NON_INC, SEC_IMMD = 1, 3, 4

# MME methods of the 3D class (vgt/mme.h, open-gpu-doc clcb97.h)
LOAD_IRAM_PTR, LOAD_IRAM, LOAD_START_PTR, LOAD_START = 0x0114, 0x0118, 0x011C, 0x0120
CALL_MACRO0 = 0x3800


def header(sec, subch, method, count):
    """A method header: SEC_OP 31:29, COUNT/IMMD 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (method >> 2)."""
    assert count < (1 << 13) and method % 4 == 0 and method < 0x4000
    return (sec << 29) | (count << 16) | (subch << 13) | (method >> 2)


def incr(subch, method, *values):
    return struct.pack("<%dI" % (1 + len(values)), header(SEC_INC, subch, method, len(values)), *values)


def nonincr(subch, method, values):
    """One NON_INC header per 8191 values (COUNT is 13 bits)."""
    out = []
    for i in range(0, len(values), 8191):
        part = values[i:i + 8191]
        out.append(struct.pack("<%dI" % (1 + len(part)), header(SEC_NON_INC, subch, method, len(part)), *part))
    return b"".join(out)


def gp_entry(va, ndwords):
    """A GPFIFO entry for a push buffer at va (below 2^40) of ndwords (nv_pushbuf.h vgt_nv_gp_encode)."""
    w0 = va & 0xFFFFFFFC
    w1 = ((va >> 32) & 0xFF) | ((ndwords & 0x1FFFFF) << 10)
    return w1 << 32 | w0


def tu104_inst(op0, imm0=0, op1=0, end_next=0):
    """One TU104 MME instruction (three dwords, high word first): ALU0 op0 ZERO, ZERO, ZERO with imm0,
    ALU1 op1 (ADD: a no-op) likewise, predicate ZERO mode 0, no outputs (tests/unit/mme_enc.h's layout)."""
    ZERO = 24
    bits = end_next
    bits |= ZERO << 5                                     # pred 9:5
    for i, (op, imm) in enumerate(((op0, imm0), (op1, 0))):
        base, imm_lo = (10, 30) if i == 0 else (46, 66)
        bits |= op << base | ZERO << (base + 5) | ZERO << (base + 10) | ZERO << (base + 15)
        bits |= (imm & 0xFFFF) << imm_lo
    return [(bits >> 64) & 0xFFFFFFFF, (bits >> 32) & 0xFFFFFFFF, bits & 0xFFFFFFFF]


TU104_JAL = 24
# JAL to ip + 0: a one-instruction infinite loop (mme_tu104_sim.c: JAL next_ip = ip + imm[14:0]).
LOOP_FOREVER = tu104_inst(TU104_JAL, 0)
TU104_STATE = 22
# Both ALUs STATE: ILLEGAL_OPCODE in the simulator (Mesa mme_tu104_sim.c: "both ALUs may not be STATE"),
# an MME exception on the hardware: what the replay's MME guard must refuse.
ILLEGAL_BOTH_STATE = tu104_inst(TU104_STATE, 0, TU104_STATE, end_next=1) + tu104_inst(0)
# end_next on an ADD no-op, then one more no-op: a macro that exits at once.
EXIT_AT_ONCE = tu104_inst(0, 0, 0, end_next=1) + tu104_inst(0)


class Builder:
    """Records of one synthetic-looking trace: RM root objects, a VA space, mapped memory, channels with
    3D/copy/compute objects, and submissions whose push buffers are carried in the GPFIFO_SUBMIT."""

    PB_VA = 0x20_0000_0000
    PB_SIZE = 64 << 20
    RING_VA = 0x10_0000_0000

    def __init__(self, capture_mode="synthetic"):
        self.recs = []
        self.ts = 1_000_000
        self.next_handle = 0x5C000100
        self.channels = []
        self.identity = (("producer", "vgtpy hostile"), ("capture_mode", capture_mode))
        self.add("SESSION_START", {"wall_ns": 1_700_000_000_000_000_000, "pid": 4242, "ppid": 1,
                                   "cmdline": b"hostile\0"})
        self.alloc(CLIENT, 0, CLIENT, 0x41)
        self.alloc(CLIENT, CLIENT, DEVICE, 0x80, struct.pack("<14I", 0, CLIENT, *([0] * 12)))
        self.alloc(CLIENT, DEVICE, SUBDEVICE, 0x2080, b"\0" * 4)
        self.alloc(CLIENT, DEVICE, VASPACE, 0x90F1)
        self.pb_mem = self.memory(self.PB_VA, self.PB_SIZE)
        self.ring_mem = self.memory(self.RING_VA, 1 << 20)
        self.pb_off = 0
        self.submits = 0

    def add(self, rtype, fields):
        self.ts += 1000
        self.recs.append((rtype, fields, self.ts))

    def handle(self):
        self.next_handle += 1
        return self.next_handle

    def alloc(self, client, parent, handle, cls, params=b""):
        self.add("RM_ALLOC", {"client": client, "parent": parent, "handle": handle, "class": cls, "status": 0,
                              "params_in": params, "params_out": params})

    def memory(self, va, size, aperture=2):
        """A memory object of size bytes mapped at va; returns its handle."""
        h = self.handle()
        self.add("MEM_ALLOC", {"client": CLIENT, "parent": DEVICE, "handle": h, "class": 0x40, "size": size,
                               "cpu_address": 0, "flags": 0, "attr": 0, "attr2": 0, "aperture": aperture,
                               "status": 0})
        self.add("GPU_MAP", {"client": CLIENT, "device": DEVICE, "va_space": VASPACE, "memory": h, "gpu_va": va,
                             "offset": 0, "length": size, "flags": 0x8100, "source": 1, "status": 0})
        return h

    def contents(self, va, data, memory=0):
        self.add("MEMORY", {"gpu_va": va, "reason": 0, "memory": memory, "flags": 0, "data": data})

    def channel(self, engines=(CLS_3D, CLS_COPY, CLS_COMPUTE)):
        """A HOPPER_CHANNEL_GPFIFO_A channel with one object per engine class; returns its handle."""
        h = self.handle()
        self.add("CHANNEL", {"client": CLIENT, "parent": DEVICE, "handle": h, "class": HOST_CLASS,
                             "ring_va": self.RING_VA, "entries": 1024, "userd_memory": self.ring_mem,
                             "userd_offset": 0x8000, "userd_gpu_va": self.RING_VA + 0x8000, "engine_type": 1,
                             "va_space": VASPACE, "context_share": 0, "error_notifier": 0, "status": 0})
        for cls in engines:
            self.add("ENGINE_OBJECT", {"client": CLIENT, "channel": h, "handle": self.handle(), "class": cls,
                                       "status": 0})
        self.channels.append(h)
        return h

    def bind(self, classes=(CLS_3D, CLS_COMPUTE, None, None, CLS_COPY)):
        """SET_OBJECT for subchannels 0.. (None: left unbound)."""
        return b"".join(incr(i, 0x0000, c) for i, c in enumerate(classes) if c is not None)

    def submit(self, channel, pushbuf, at=None, entries=None):
        """One GPFIFO_SUBMIT of pushbuf (bytes) at `at` (default: the next free place in the push-buffer
        memory), carried in the record as its segment. entries: override the GPFIFO entries."""
        if at is None:
            at = self.PB_VA + self.pb_off
            self.pb_off = (self.pb_off + len(pushbuf) + 0xFFF) & ~0xFFF
            assert self.pb_off <= self.PB_SIZE, "push-buffer memory is full"
        n = len(pushbuf) // 4
        ents = entries if entries is not None else [gp_entry(at, n)]
        put = (self.submits + len(ents)) % 1024
        self.add("GPFIFO_SUBMIT", {"client": CLIENT, "channel": channel, "token": 0, "flags": 0,
                                   "gp_get_before": self.submits % 1024, "gp_put_before": self.submits % 1024,
                                   "gp_get_after": 0xFFFFFFFF, "gp_put_after": put, "entries": ents,
                                   "segments": [{"gpu_va": at, "flags": 0, "data": pushbuf}] if pushbuf else []})
        self.submits += len(ents)

    def channel_methods(self, channel, writes):
        """A CHANNEL_METHODS record (format 1.1): [(subchannel, method, value)]."""
        blob = vrec.pack_channel_methods(writes)
        self.add("CHANNEL_METHODS", {"client": CLIENT, "channel": channel, "flags": 0, "writes_length": len(blob),
                                     "writes": blob})

    def write(self, path, **kw):
        with open(path, "wb") as f:
            w = Writer(f, identity=self.identity, **kw)
            for r in self.recs:
                w.write(*r)
            w.close()
        return path


def upload_macro(code, macro=0, subch=0):
    """Push-buffer methods that upload code at instruction 0 and bind macro `macro` to it."""
    return (incr(subch, LOAD_IRAM_PTR, 0) + nonincr(subch, LOAD_IRAM, code) + incr(subch, LOAD_START_PTR, macro)
            + incr(subch, LOAD_START, 0))


def macro_calls(n, macro=0, subch=0, param=0):
    """n calls of macro `macro`, one parameter each (every CALL_MME_MACRO write ends the call before it)."""
    return nonincr(subch, CALL_MACRO0 + 8 * macro, [param] * n)


# ---- the hostile traces of the reliability issue ------------------------------------------------------

def runaway_macro(path, calls=3000, submissions=1, capture_mode="synthetic"):
    """A one-instruction infinite-loop macro called `calls` times, spread over `submissions` submissions."""
    b = Builder(capture_mode)
    ch = b.channel()
    b.submit(ch, b.bind() + upload_macro(LOOP_FOREVER))
    per = calls // submissions
    for i in range(submissions):
        b.submit(ch, macro_calls(per if i < submissions - 1 else calls - per * (submissions - 1)))
    return b.write(path)


def macro_call_flood(path, writes=4_000_000, capture_mode="synthetic"):
    """A CHANNEL_METHODS record with `writes` CALL_MME_MACRO writes of a macro that exits at once, then one
    submission on the channel (the record applies before it)."""
    b = Builder(capture_mode)
    ch = b.channel()
    b.submit(ch, b.bind())
    up = [(0, LOAD_IRAM_PTR, 0)] + [(0, LOAD_IRAM, w) for w in EXIT_AT_ONCE] + [(0, LOAD_START_PTR, 0),
                                                                             (0, LOAD_START, 0)]
    b.channel_methods(ch, up + [(0, CALL_MACRO0, 0)] * writes)
    b.submit(ch, incr(0, 0x0200, 0))
    return b.write(path)


def many_channels(path, channels=100_000, capture_mode="synthetic"):
    """`channels` channels (host class only), each with one submission of one no-op method."""
    b = Builder(capture_mode)
    for _ in range(channels):
        b.channel(engines=())
    pb = incr(0, 0x0008, 0)    # NV_UDMA_NOP-like: host method 0x0008 (SET_REFERENCE is harmless)
    at = b.PB_VA
    b.contents(at, pb, b.pb_mem)
    for ch in b.channels:
        b.submit(ch, pb, at=at)
    return b.write(path)


def huge_copies(path, copies=6, size=1 << 30, mapping=1 << 40, capture_mode="synthetic"):
    """`copies` copy-engine transfers of `size` bytes between never-written places of one `mapping`-byte
    mapping (clc8b5.h: OFFSET_IN/OUT, LINE_LENGTH_IN, LAUNCH_DMA pitch/pitch, 1D)."""
    b = Builder(capture_mode)
    big = 0x100_0000_0000
    b.memory(big, mapping)
    ch = b.channel()
    pb = b.bind()
    for i in range(copies):
        src, dst = big + 2 * i * size, big + (2 * i + 1) * size
        pb += incr(4, 0x0400, src >> 32, src & 0xFFFFFFFF, dst >> 32, dst & 0xFFFFFFFF)  # OFFSET_IN/OUT
        pb += incr(4, 0x0418, size)                # LINE_LENGTH_IN
        # LAUNCH_DMA: DATA_TRANSFER_TYPE NON_PIPELINED (2), FLUSH_ENABLE, SRC/DST pitch (bits 7, 8 = 1)
        pb += incr(4, 0x0300, 2 | 1 << 2 | 1 << 7 | 1 << 8)
    b.submit(ch, pb)
    return b.write(path)
