"""The constants and record layouts of the .vgt format 1.4, transcribed from docs/trace-format.md.

This package is the independent second implementation of the format: it is written from the spec alone,
never from the C sources, so that a disagreement between the two shows a bug in one of them or in the
spec. Every number here cites the spec section it comes from.
"""

# section 2: file header
FILE_MAGIC = b"VGTRACE\0"
MAJOR = 1
MINOR = 5  # section 2: a writer of 1.5 writes minor 5; readers take every minor (section 8)
HEADER_FIXED = 32
HEADER_MIN = 40
MAX_HEADER_LENGTH = 1 << 20
MAX_IDENTITY_ENTRIES = 4096
MAX_IDENTITY_KEY = 255
MAX_IDENTITY_VALUE = 64 << 10
HEADER_FLAG_MEMORY_CAS = 1  # section 2 (1.3): the trace may hold MEMORY_CAS records
KNOWN_HEADER_FLAGS = HEADER_FLAG_MEMORY_CAS  # 1.0, 1.1 and 1.2 define none
# section 5, MEMORY_CAS (1.3): the memory stream window, op and patch sizes, op kinds
MEMCAS_WINDOW = 64 << 20
MEMCAS_OP_SIZE = 16
MEMCAS_PATCH_SIZE = 8
MEMCAS_LITERAL, MEMCAS_COPY = 0, 1

# section 3: chunks
CHUNK_MAGIC = b"VGTC"
CHUNK_HEADER_SIZE = 72
CODEC_STORED = 0
CODEC_ZSTD = 1
MAX_CHUNK_PAYLOAD = 68 << 20
MIN_CHUNK_RECORDS = 24
MAX_CHUNK_RECORDS = 64 << 20

# section 4: records
RECORD_HEADER_SIZE = 24
MAX_RECORD_PAYLOAD = (64 << 20) - 24
EXPERIMENTAL_FIRST = 0xF000
EXPERIMENTAL_LAST = 0xFFFE
INVALID_TYPES = (0x0000, 0xFFFF)

# section 6: trailer
INDEX_MAGIC = b"VGTI"
INDEX_ENTRY_SIZE = 48
FOOTER_SIZE = 32
FOOTER_MAGIC = b"VGTFOOT\0"
# index entries are limited to (file size) / 72 (section 9)
INDEX_ENTRY_DIVISOR = 72

# section 5, CHANNEL_STATE flags (1.1)
CHANNEL_STATE_RUN_PENDING = 1
# section 5, CHANNEL_METHODS (1.1): bytes per write, the largest method address
CHANNEL_METHOD_SIZE = 8
MAX_METHOD_ADDRESS = 0x3FFC
# section 5, MEMORY flags (1.1): bytes the GPU wrote, derived by the producer, not read from memory
MEMORY_FLAG_DERIVED = 1

# section 4, "Handles and enums"
APERTURES = {0: "unknown", 1: "sysmem", 2: "vidmem", 3: "os"}
MEMORY_REASONS = {0: "initial", 1: "changed", 2: "observed"}


def pad8(n):
    return (n + 7) & ~7


class RecordLayout:
    """One record type of section 5: fixed fields (name, struct code) in order, then blobs in order.

    A blob is (name, length_field): its byte length is the value of that fixed field. The GPFIFO_SUBMIT
    variable part (entries and segments) has its own codec in records.py, named by `special`.
    """

    def __init__(self, code, name, fixed, blobs=(), special=None):
        self.code = code
        self.name = name
        self.fixed = list(fixed)
        self.blobs = list(blobs)
        self.special = special
        self.fixed_size = sum(FIELD_SIZES[f] for _, f in self.fixed)


FIELD_SIZES = {"Q": 8, "q": 8, "I": 4, "i": 4}


def _u32(*names):
    return [(n, "I") for n in names]


# section 5 (1.2), the call head of the CUDA API records: u32 api, s32 result, u32 thread, u32 flags,
# u64 submits_before, u64 submits_after (32 bytes)
CALL_HEAD = [("api", "I"), ("result", "i"), ("thread", "I"), ("flags", "I"), ("submits_before", "Q"),
             ("submits_after", "Q")]

# section 5, one entry per table. Field names are the spec's; "reserved" fields are kept (written 0).
LAYOUTS = [
    RecordLayout(0x0001, "SESSION_START",
                 [("wall_ns", "Q")] + _u32("pid", "ppid", "cmdline_length", "reserved"),
                 [("cmdline", "cmdline_length")]),
    RecordLayout(0x0002, "SESSION_END",
                 [("wall_ns", "Q"), ("exit_status", "i"), ("signal", "i")] + _u32("records_lost", "reserved")),
    RecordLayout(0x0003, "PROCESS_START", _u32("pid", "ppid", "exe_length", "reserved"), [("exe", "exe_length")]),
    RecordLayout(0x0004, "PROCESS_END", [("pid", "I"), ("exit_status", "i"), ("signal", "i"), ("reserved", "I")]),
    RecordLayout(0x0010, "RM_ALLOC", _u32("client", "parent", "handle", "class", "status", "params_length"),
                 [("params_in", "params_length"), ("params_out", "params_length")]),
    RecordLayout(0x0011, "RM_FREE", _u32("client", "parent", "handle", "status")),
    RecordLayout(0x0012, "RM_CONTROL", _u32("client", "object", "cmd", "status", "flags", "params_length"),
                 [("params_in", "params_length"), ("params_out", "params_length")]),
    RecordLayout(0x0013, "MEM_ALLOC",
                 _u32("client", "parent", "handle", "class") + [("size", "Q"), ("cpu_address", "Q")]
                 + _u32("flags", "attr", "attr2", "aperture", "status", "reserved")),
    RecordLayout(0x0014, "GPU_MAP",
                 _u32("client", "device", "va_space", "memory") + [("gpu_va", "Q"), ("offset", "Q"), ("length", "Q")]
                 + _u32("flags", "source", "status", "reserved")),
    RecordLayout(0x0015, "GPU_UNMAP",
                 _u32("client", "device", "va_space", "memory") + [("gpu_va", "Q"), ("length", "Q")]
                 + _u32("source", "status")),
    RecordLayout(0x0016, "CPU_MAP",
                 _u32("client", "device", "memory", "flags") + [("offset", "Q"), ("length", "Q"), ("cpu_address", "Q")]
                 + _u32("status", "reserved")),
    RecordLayout(0x0017, "CPU_UNMAP",
                 _u32("client", "device", "memory", "reserved") + [("cpu_address", "Q"), ("length", "Q")]),
    RecordLayout(0x0018, "IOCTL", [("node", "I"), ("request", "I"), ("result", "i"), ("params_length", "I")],
                 [("params_in", "params_length"), ("params_out", "params_length")]),
    RecordLayout(0x0020, "MEMORY", [("gpu_va", "Q")] + _u32("length", "reason", "memory", "flags"),
                 [("data", "length")]),
    RecordLayout(0x0021, "CHANNEL",
                 _u32("client", "parent", "handle", "class") + [("ring_va", "Q")] + _u32("entries", "userd_memory")
                 + [("userd_offset", "Q"), ("userd_gpu_va", "Q")]
                 + _u32("engine_type", "va_space", "context_share", "error_notifier", "status", "reserved")),
    RecordLayout(0x0022, "ENGINE_OBJECT", _u32("client", "channel", "handle", "class", "status", "reserved")),
    RecordLayout(0x0023, "GPFIFO_SUBMIT",
                 _u32("client", "channel", "token", "flags", "gp_get_before", "gp_put_before", "gp_get_after",
                      "gp_put_after", "entry_count", "segment_count"),
                 special="gpfifo"),
    RecordLayout(0x0024, "WORK_SUBMIT_TOKEN", _u32("client", "channel", "token", "reserved")),
    RecordLayout(0x0025, "DOORBELL", _u32("token", "channel", "offset", "flags")),
    RecordLayout(0x0026, "SEMAPHORE", [("gpu_va", "Q"), ("value", "Q")] + _u32("size", "flags")),
    # 1.1: a channel's push-buffer decoder state (section 5, 0x0027)
    RecordLayout(0x0027, "CHANNEL_STATE",
                 _u32("client", "channel", "subdevice_mask", "flags") + [("extended_base", "Q")]
                 + _u32(*[f"subch{i}_class" for i in range(8)]) + _u32("stored_subdevice_mask", "reserved")),
    # 1.1: method writes restoring a channel's engine state (section 5, 0x0028); each write is 8 bytes:
    # u16 method (byte address), u16 subchannel, u32 value
    RecordLayout(0x0028, "CHANNEL_METHODS", _u32("client", "channel", "flags", "writes_length"),
                 [("writes", "writes_length")]),
    # 1.3: memory contents as copies of earlier memory contents, word patches and literal bytes (0x0029);
    # ops, patches and literals follow the fixed part (memcas.expand_payload reads them)
    RecordLayout(0x0029, "MEMORY_CAS", [("gpu_va", "Q")]
                 + _u32("length", "reason", "memory", "flags", "op_count", "patch_count", "literal_length", "reserved")),
    # 1.4: a channel's GP_GET and GP_PUT read from its USERD without a doorbell (the end of the capture)
    RecordLayout(0x002A, "CHANNEL_PROGRESS", _u32("client", "channel", "gp_get", "gp_put", "flags", "reserved")),
    RecordLayout(0x0030, "CUDA_MODULE", [("module", "Q")] + _u32("image_length", "flags"), [("image", "image_length")]),
    RecordLayout(0x0031, "CUDA_LAUNCH",
                 [("module", "Q"), ("function", "Q"), ("stream", "Q")]
                 + _u32("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_bytes",
                        "name_length", "params_length", "reserved"),
                 [("name", "name_length"), ("params", "params_length")]),
    # 1.2: the CUDA driver API (section 5, 0x0032-0x0037). Every API record starts with the call head.
    RecordLayout(0x0032, "CUDA_IMAGE", [("hash", "Q")] + _u32("image_length", "kind"), [("image", "image_length")]),
    RecordLayout(0x0033, "CUDA_LOAD", CALL_HEAD + [("handle", "Q"), ("image_hash", "Q")] + _u32("path_length", "reserved"),
                 [("path", "path_length")]),
    RecordLayout(0x0034, "CUDA_FUNCTION", CALL_HEAD + [("function", "Q"), ("owner", "Q")]
                 + _u32("name_length", "reserved"), [("name", "name_length")]),
    RecordLayout(0x0035, "CUDA_KERNEL",
                 CALL_HEAD + [("function", "Q"), ("stream", "Q")]
                 + _u32("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_bytes", "params_length")
                 + [("graph_exec", "Q")] + _u32("node_index", "layout_length"),
                 [("params", "params_length"), ("layout", "layout_length")]),
    RecordLayout(0x0036, "CUDA_MEMORY",
                 CALL_HEAD + [("dst", "Q"), ("src", "Q"), ("size", "Q"), ("stream", "Q"), ("graph_exec", "Q")]
                 + _u32("op", "value", "node_index", "data_length"), [("data", "data_length")]),
    RecordLayout(0x0037, "CUDA_CALL", CALL_HEAD + [("object", "Q"), ("arg0", "Q"), ("arg1", "Q")]),
    # 1.5: an image named by its file (path, offset, xxh64) instead of stored; entries: a fatbin's entries,
    # 16 bytes each (u32 kind 2 cubin / 3 ptx / 0 other, u32 arch, u32 size, u32 flags: bit 0 compressed)
    RecordLayout(0x0038, "CUDA_IMAGE_REF", [("hash", "Q"), ("file_offset", "Q"), ("file_size", "Q")]
                 + _u32("image_length", "kind", "flags", "path_length", "entries_length", "reserved"),
                 [("path", "path_length"), ("entries", "entries_length")]),
    RecordLayout(0x0040, "MARKER", _u32("length", "flags"), [("text", "length")]),
    RecordLayout(0x0041, "DIAGNOSTIC", _u32("severity", "code", "length", "reserved"), [("text", "length")]),
]

BY_CODE = {t.code: t for t in LAYOUTS}
BY_NAME = {t.name: t for t in LAYOUTS}

# GPFIFO_SUBMIT variable part (section 5, 0x0023): entries are u64; each segment is
# u64 gpu_va, u32 length, u32 flags, then the data padded to 8.
SEGMENT_HEADER_SIZE = 16


def type_name(code):
    t = BY_CODE.get(code)
    return t.name if t else None


def type_code(name_or_code):
    if isinstance(name_or_code, int):
        return name_or_code
    return BY_NAME[name_or_code.upper()].code
