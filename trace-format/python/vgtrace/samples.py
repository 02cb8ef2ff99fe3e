"""Sample records of every record type of 1.0, 1.1 and 1.2 (and one experimental type), deterministic for a seed:
what the cross-checks feed the C reader."""
import struct
import random

from . import records, spec


def _bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def _call(api, before, after, result=0, thread=4242, flags=0):
    """The call head of a 1.2 CUDA API record (section 5, 0x0033-0x0037)."""
    return {"api": api, "result": result, "thread": thread, "flags": flags, "submits_before": before,
            "submits_after": after}


def all_type_records(seed=1):
    """[(type name or code, fields or raw bytes, ts)] covering every type of section 5, with blob lengths
    that exercise padding (0, odd, multiples of 8)."""
    rng = random.Random(seed)
    ts = 1_000_000

    def t():
        nonlocal ts
        ts += rng.randrange(1, 5000)
        return ts

    seg_a = _bytes(rng, 36)
    seg_b = _bytes(rng, 8)
    recs = [
        ("SESSION_START", {"wall_ns": 1_700_000_000_000_000_000, "pid": 4242, "ppid": 1,
                           "cmdline": b"./app\0--flag\0"}, t()),
        ("PROCESS_START", {"pid": 4243, "ppid": 4242, "exe": b"/usr/bin/child"}, t()),
        ("RM_ALLOC", {"client": 0xC1D00001, "parent": 0xC1D00001, "handle": 0xC1D00001, "class": 0x41,
                      "status": 0, "params_in": b"", "params_out": b""}, t()),
        ("RM_ALLOC", {"client": 0xC1D00001, "parent": 0xC1D00001, "handle": 0x5C000001, "class": 0x80,
                      "status": 0, "params_in": _bytes(rng, 0x38), "params_out": _bytes(rng, 0x38)}, t()),
        ("RM_CONTROL", {"client": 0xC1D00001, "object": 0x5C000001, "cmd": 0x800201, "status": 0, "flags": 0,
                        "params_in": _bytes(rng, 13), "params_out": _bytes(rng, 13)}, t()),
        ("MEM_ALLOC", {"client": 0xC1D00001, "parent": 0x5C000001, "handle": 0x5C000010, "class": 0x40,
                       "size": 1 << 21, "cpu_address": 0, "flags": 0x1234, "attr": 5, "attr2": 6,
                       "aperture": 2, "status": 0}, t()),
        ("GPU_MAP", {"client": 0xC1D00001, "device": 0x5C000001, "va_space": 0x5C000003, "memory": 0x5C000010,
                     "gpu_va": 0x7FFF_0000_0000, "offset": 0, "length": 1 << 21, "flags": 0x8110, "source": 1,
                     "status": 0}, t()),
        ("CPU_MAP", {"client": 0xC1D00001, "device": 0x5C000001, "memory": 0x5C000010, "flags": 0, "offset": 0,
                     "length": 1 << 21, "cpu_address": 0x7F00_1234_0000, "status": 0}, t()),
        ("IOCTL", {"node": 3, "request": 0x30000001, "result": -22, "params_in": _bytes(rng, 16),
                   "params_out": _bytes(rng, 16)}, t()),
        ("MEMORY", {"gpu_va": 0x7FFF_0000_1000, "reason": 0, "memory": 0x5C000010, "flags": 0,
                    "data": _bytes(rng, 4096)}, t()),
        ("MEMORY", {"gpu_va": 0x7FFF_0000_3003, "reason": 1, "memory": 0, "flags": 0, "data": _bytes(rng, 5)}, t()),
        ("CHANNEL", {"client": 0xC1D00001, "parent": 0x5C000020, "handle": 0x5C000030, "class": 0xC86F,
                     "ring_va": 0x7FFF_0010_0000, "entries": 1024, "userd_memory": 0x5C000011,
                     "userd_offset": 0x200, "userd_gpu_va": 0x7FFF_0020_0200, "engine_type": 1,
                     "va_space": 0x5C000003, "context_share": 0x5C000021, "error_notifier": 0x5C000022,
                     "status": 0}, t()),
        ("ENGINE_OBJECT", {"client": 0xC1D00001, "channel": 0x5C000030, "handle": 0x5C000031, "class": 0xCBC0,
                           "status": 0}, t()),
        ("WORK_SUBMIT_TOKEN", {"client": 0xC1D00001, "channel": 0x5C000030, "token": 0x10005}, t()),
        ("CHANNEL_STATE", {"client": 0xC1D00001, "channel": 0x5C000030, "subdevice_mask": 0xFFF,
                           "flags": spec.CHANNEL_STATE_RUN_PENDING, "extended_base": 0x12 << 40,
                           **{f"subch{i}_class": c for i, c in enumerate([0xCB97, 0xCBC0, 0xA140, 0, 0xC8B5, 0,
                                                                          0x902D, 0xC86F])},
                           "stored_subdevice_mask": 0x3}, t()),
        ("CHANNEL_METHODS", {"client": 0xC1D00001, "channel": 0x5C000030, "flags": 0, "writes_length": 24,
                             "writes": records.pack_channel_methods([(0, 0x0114, 0), (0, 0x0118, 0x1234ABCD),
                                                                     (7, 0x3FFC, 0xFFFFFFFF)])}, t()),
        ("GPFIFO_SUBMIT", {"client": 0xC1D00001, "channel": 0x5C000030, "token": 0x10005, "flags": 0,
                           "gp_get_before": 0, "gp_put_before": 0, "gp_get_after": 0xFFFFFFFF,
                           "gp_put_after": 2,
                           "entries": [(0x7FFF_0030_0000 & 0xFFFFFFFC) | ((9 << 10 | 0x7F) << 32),
                                       (0x7FFF_0030_0100 & 0xFFFFFFFC) | ((2 << 10 | 0x7F) << 32)],
                           "segments": [{"gpu_va": 0x7FFF_0030_0000, "flags": 0, "data": seg_a},
                                        {"gpu_va": 0x7FFF_0030_0100, "flags": 1, "data": seg_b}]}, t()),
        ("DOORBELL", {"token": 0x10005, "channel": 0x5C000030, "offset": 0x90, "flags": 0}, t()),
        ("CHANNEL_PROGRESS", {"client": 0xC1D00001, "channel": 0x5C000030, "gp_get": 2, "gp_put": 2, "flags": 1},
         t()),
        ("SEMAPHORE", {"gpu_va": 0x7FFF_0000_2000, "value": 0x1_0000_0001, "size": 8, "flags": 0}, t()),
        ("CUDA_MODULE", {"module": 0x55550000, "flags": 0, "image": _bytes(rng, 77)}, t()),
        ("CUDA_LAUNCH", {"module": 0x55550000, "function": 0x55551000, "stream": 0, "grid_x": 128, "grid_y": 2,
                         "grid_z": 1, "block_x": 256, "block_y": 1, "block_z": 1, "shared_bytes": 1024,
                         "name": b"_Z6kernelPf", "params": _bytes(rng, 24)}, t()),
        ("CUDA_IMAGE", {"hash": 0x0123456789ABCDEF, "kind": 1, "image": _bytes(rng, 45)}, t()),
        ("CUDA_IMAGE_REF", {"hash": 0x0FEDCBA987654321, "file_offset": 0x1234000, "file_size": 0x4000000,
                            "image_length": 0x200000, "kind": 1, "flags": 0, "path": b"/usr/lib/libkernels.so",
                            "entries": struct.pack("<4I4I", 2, 90, 0x1F0000, 1, 3, 90, 0xFF00, 0)}, t()),
        ("CUDA_LOAD", {**_call(6, 1, 1), "handle": 0x55552000, "image_hash": 0x0123456789ABCDEF,
                       "path": b""}, t()),
        ("CUDA_FUNCTION", {**_call(11, 1, 1), "function": 0x55553000, "owner": 0x55552000,
                           "name": b"_Z4vaddPKfS0_Pfi"}, t()),
        ("CUDA_KERNEL", {**_call(13, 0, 1, flags=1), "function": 0x55553000, "stream": 0x5555A000, "grid_x": 4096,
                         "grid_y": 1, "grid_z": 1, "block_x": 256, "block_y": 1, "block_z": 1, "shared_bytes": 0,
                         "graph_exec": 0, "node_index": 0, "params": _bytes(rng, 28),
                         "layout": struct.pack("<8I", 0, 8, 8, 8, 16, 8, 24, 4)}, t()),
        ("CUDA_MEMORY", {**_call(19, 1, 1), "dst": 0x7F00_2000_0000, "src": 0, "size": 12,
                         "stream": 0, "graph_exec": 0, "op": 1, "value": 0, "node_index": 0,
                         "data": _bytes(rng, 12)}, t()),
        ("CUDA_CALL", {**_call(44, 1, 1), "object": 0x5555A000, "arg0": 0, "arg1": 0}, t()),
        ("MARKER", {"flags": 0, "text": "wall \u2014 annotated".encode()}, t()),
        (0xF00D, _bytes(rng, 19), t()),          # experimental range: readers skip it by its length
        ("DIAGNOSTIC", {"severity": 1, "code": 6, "text": b"a segment was truncated"}, t()),
        ("GPU_UNMAP", {"client": 0xC1D00001, "device": 0x5C000001, "va_space": 0x5C000003, "memory": 0x5C000010,
                       "gpu_va": 0x7FFF_0000_0000, "length": 1 << 21, "source": 1, "status": 0}, t()),
        ("CPU_UNMAP", {"client": 0xC1D00001, "device": 0x5C000001, "memory": 0x5C000010,
                       "cpu_address": 0x7F00_1234_0000, "length": 1 << 21}, t()),
        ("RM_FREE", {"client": 0xC1D00001, "parent": 0x5C000001, "handle": 0x5C000010, "status": 0}, t()),
        ("PROCESS_END", {"pid": 4243, "exit_status": 0, "signal": 0}, t()),
        ("SESSION_END", {"wall_ns": 1_700_000_000_500_000_000, "exit_status": -1, "signal": 9,
                         "records_lost": 0}, t()),
    ]
    names = {r[0] for r in recs if isinstance(r[0], str)}
    # MEMORY_CAS lives only in files with its header flag and is read back as the MEMORY record it stands
    # for: tests/py/test_memcas.py covers it
    missing = [t.name for t in spec.LAYOUTS if t.name not in names and t.name != "MEMORY_CAS"]
    assert not missing, f"samples miss record types {missing}"
    return recs
