"""The installed libvgt (libvgt.so.0) through ctypes: decoded submissions, GPFIFO entries, methods, semantic
events and MME macro calls of a trace, as numpy record arrays in batches (rows.h in the C headers).

The pure-Python reader (reader.py) reads records; decoding push buffers, tracking semantic events and
running MME macros is the C library's job, so that Python sees exactly what `vgt decode` and `vgt db` see.

The library is looked up, in order: $VGTRACE_LIB (a path to libvgt.so.0), the directories of
$LD_LIBRARY_PATH, `pkg-config --variable=libdir vgtrace`, lib/ next to the `vgt` on $PATH, this Python's
prefix, then the system's loader (ldconfig). LibraryNotFound says what was tried.
"""
import ctypes
import ctypes.util
import os
import queue
import shutil
import subprocess
import sys
import threading

import numpy as np

ABI = 0   # the SONAME's number this binding is written for (vgt/version.h VGT_ABI)
SONAME = f"libvgt.so.{ABI}"

TABLES = ("submissions", "entries", "methods", "events", "macro_calls")   # enum vgt_rows_table order

_U64, _U32 = "<u8", "<u4"
# The row layouts of rows.h, field for field (each only ever grows at its end).
DTYPES = {
    "submissions": [("submission", _U64), ("seq", _U64), ("ts", _U64), ("client", _U64), ("channel", _U64),
                    ("channel_class", _U64), ("entry_count", _U64), ("segment_count", _U64), ("methods", _U64),
                    ("pb_bytes", _U64), ("launches", _U64), ("draws", _U64), ("sem_releases", _U64),
                    ("macro_calls", _U64)],
    "entries": [("submission", _U64), ("entry", _U64), ("seq", _U64), ("ts", _U64), ("raw", _U64), ("va", _U64),
                ("length", _U64), ("level", _U64), ("is_control", _U64), ("opcode", _U64)],
    "methods": [("submission", _U64), ("seq", _U64), ("channel", _U32), ("class", _U32), ("address", _U32),
                ("value", _U32), ("entry", _U32), ("dword", _U32), ("subch", _U32), ("flags", _U32)],
    "events": [("id", _U64), ("submission", _U64), ("seq", _U64), ("macro_call", _U64), ("va", _U64), ("va2", _U64),
               ("kind", _U32), ("origin", _U32), ("channel", _U32), ("class", _U32), ("subch", _U32),
               ("entry", _U32), ("dword", _U32)] + [(f"a{i}", _U32) for i in range(10)] + [("pad_", _U32)],
    "macro_calls": [("call", _U64), ("submission", _U64), ("seq", _U64), ("hash", _U64), ("instructions", _U64),
                    ("channel", _U32), ("class", _U32), ("subch", _U32), ("entry", _U32), ("dword", _U32),
                    ("macro", _U32), ("version", _U32), ("nparams", _U32), ("nemits", _U32), ("status", _U32),
                    ("categories", _U32), ("pad_", _U32)],
}

# enum vgt_event_kind (events.h); stable numbers
EVENT_KINDS = {1: "LAUNCH", 2: "UPLOAD", 3: "COPY", 4: "SEM_RELEASE", 5: "SEM_ACQUIRE", 6: "REPORT",
               7: "PROGRAM_BIND", 8: "DRAW", 9: "EMPTY_DISPATCH", 10: "EMPTY_DMA"}
EV = {v: k for k, v in EVENT_KINDS.items()}


class LibraryNotFound(ImportError):
    """libvgt.so.0 could not be loaded; the message lists where it was looked for."""


class NativeError(RuntimeError):
    """The C library failed on a trace (the message is its vgt_error text)."""


class _Error(ctypes.Structure):   # vgt_error (error.h)
    _fields_ = [("code", ctypes.c_int), ("offset", ctypes.c_uint64), ("msg", ctypes.c_char * 512)]


_BATCH_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)
_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64)


class _Sink(ctypes.Structure):   # vgt_rows_sink (rows.h)
    _fields_ = [("batch", _BATCH_FN), ("ctx", ctypes.c_void_p), ("tables", ctypes.c_uint),
                ("batch_rows", ctypes.c_uint32), ("progress", _PROGRESS_FN)]


def _candidates():
    env = os.environ.get("VGTRACE_LIB")
    if env:
        yield env
        return
    for d in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        yield os.path.join(d, SONAME)
    if shutil.which("pkg-config"):
        try:
            d = subprocess.run(["pkg-config", "--variable=libdir", "vgtrace"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
            if d:
                yield os.path.join(d, SONAME)
        except (OSError, subprocess.SubprocessError):
            pass
    vgt = shutil.which("vgt")
    if vgt:
        yield os.path.join(os.path.dirname(os.path.realpath(vgt)), "..", "lib", SONAME)
    yield os.path.join(sys.prefix, "lib", SONAME)
    found = ctypes.util.find_library("vgt")
    yield found or SONAME


_lib = None
_lock = threading.Lock()


def library():
    """The loaded libvgt (ctypes.CDLL), loaded once; raises LibraryNotFound with what was tried."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.path.sep in path and not os.path.exists(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            _bind(lib)
            if lib.vgt_library_abi() != ABI:
                tried.append(f"{path} (ABI {lib.vgt_library_abi()}, this package needs {ABI})")
                continue
            _lib = lib
            return lib
        raise LibraryNotFound(
            f"{SONAME} (the vgtrace C library) was not found; decoding needs it. Install vgtrace "
            "(cmake --install build --prefix PREFIX) and put PREFIX/lib on LD_LIBRARY_PATH or PKG_CONFIG_PATH, "
            "or set VGTRACE_LIB to the library's path. Tried: " + "; ".join(tried))


def _bind(lib):
    lib.vgt_library_abi.restype = ctypes.c_int
    lib.vgt_library_version.restype = ctypes.c_char_p
    lib.vgt_rows_size.restype = ctypes.c_uint32
    lib.vgt_rows_size.argtypes = [ctypes.c_int]
    lib.vgt_rows_walk.restype = ctypes.c_int
    lib.vgt_rows_walk.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Sink), ctypes.c_void_p, ctypes.POINTER(_Error)]
    lib.vgt_method_name.restype = ctypes.c_size_t
    lib.vgt_method_name.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    lib.vgt_class_name.restype = ctypes.c_char_p
    lib.vgt_class_name.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    for fn in ("vgt_draw_kind_name", "vgt_topology_name", "vgt_sem_op_name", "vgt_sem_source_name",
               "vgt_event_kind_name"):
        getattr(lib, fn).restype = ctypes.c_char_p
        getattr(lib, fn).argtypes = [ctypes.c_uint]


def version():
    return library().vgt_library_version().decode()


def _dtype(table, lib):
    """The row dtype, laid over the library's row size (a newer library's rows may be longer)."""
    fields = DTYPES[table]
    base = np.dtype(fields)
    size = lib.vgt_rows_size(TABLES.index(table))
    if size < base.itemsize:
        raise NativeError(f"libvgt rows of {table} are {size} bytes, this package reads {base.itemsize}: "
                          "the library is older than the package")
    return np.dtype({"names": base.names, "formats": [base.fields[n][0] for n in base.names],
                     "offsets": [base.fields[n][1] for n in base.names], "itemsize": size})


def iter_batches(path, tables=TABLES, batch_rows=65536, progress=None):
    """Yield (table name, numpy record array) batches of a trace as the C walk makes them, in trace order
    within each table. The walk runs in a thread; at most a few batches wait in memory. progress(offset):
    optional, called with the file offset of the chunk being read."""
    lib = library()
    wanted = 0
    for t in tables:
        wanted |= 1 << TABLES.index(t)
    dtypes = {t: _dtype(t, lib) for t in tables}
    q = queue.Queue(maxsize=4)
    stop = threading.Event()
    END = object()

    def on_batch(ctx, table, rows, n):
        if stop.is_set():
            return 1
        name = TABLES[table]
        dt = dtypes[name]
        arr = np.frombuffer(ctypes.string_at(rows, n * dt.itemsize), dtype=dt)
        while not stop.is_set():
            try:
                q.put((name, arr), timeout=0.1)
                return 0
            except queue.Full:
                continue
        return 1

    def on_progress(ctx, off):
        if progress:
            progress(off)

    batch_cb, progress_cb = _BATCH_FN(on_batch), _PROGRESS_FN(on_progress)
    sink = _Sink(batch_cb, None, wanted, batch_rows, progress_cb)
    result = {}

    def walk():
        err = _Error()
        try:
            rc = lib.vgt_rows_walk(os.fsencode(path), ctypes.byref(sink), None, ctypes.byref(err))
            if rc != 0 and not stop.is_set():
                result["error"] = err.msg.decode(errors="replace") or f"status {rc}"
        finally:
            while True:
                try:
                    q.put(END, timeout=0.1)
                    break
                except queue.Full:
                    if stop.is_set():
                        break

    th = threading.Thread(target=walk, name="vgtrace-rows", daemon=True)
    th.start()
    try:
        while True:
            item = q.get()
            if item is END:
                break
            yield item
    finally:
        stop.set()
        while th.is_alive():   # drain so the walk thread can finish its put and see stop
            try:
                q.get(timeout=0.05)
            except queue.Empty:
                pass
        th.join()
    if "error" in result:
        raise NativeError(f"{path}: {result['error']}")


def read_rows(path, tables=TABLES):
    """{table: numpy record array} of the whole trace (each table concatenated)."""
    parts = {t: [] for t in tables}
    for name, arr in iter_batches(path, tables):
        parts[name].append(arr)
    return {t: (np.concatenate(p) if p else np.zeros(0, dtype=_dtype(t, library()))) for t, p in parts.items()}


class _Names:
    """Names from the C class tables, cached (a trace has few distinct classes and methods)."""

    def __init__(self):
        self.lib = library()
        self.methods, self.classes, self.enums = {}, {}, {}

    def method(self, cls, addr):
        key = (int(cls), int(addr))
        v = self.methods.get(key)
        if v is None:
            buf = ctypes.create_string_buffer(128)
            self.lib.vgt_method_name(key[0], key[1], buf, 128)
            v = self.methods[key] = buf.value.decode()
        return v

    def cls(self, cls):
        v = self.classes.get(int(cls))
        if v is None:
            buf = ctypes.create_string_buffer(64)
            v = self.classes[int(cls)] = (self.lib.vgt_class_name(int(cls), buf, 64) or b"").decode()
        return v

    def enum(self, fn, v):
        key = (fn, int(v))
        r = self.enums.get(key)
        if r is None:
            r = self.enums[key] = (getattr(self.lib, fn)(int(v)) or b"?").decode()
        return r


def names():
    return _Names()
