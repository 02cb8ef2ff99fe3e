"""A minimal, independent fold of records into state (the C library's is trace-format's model.h): live
objects, channels, GPU mappings and memory contents by GPU VA, from docs/trace-format.md section 5.

Memory comes from MEMORY records and from GPFIFO_SUBMIT records: the push-buffer segments (the bytes in
memory at the doorbell) and the new ring entries (written at the channel's ring VA, entry gp_put_before
onwards, wrapping at the ring size). Bytes never recorded are unknown. Used by tests to check `vgt slice`.
"""
from . import records, spec

PAGE = 4096
T = {name: layout.code for name, layout in spec.BY_NAME.items()}


class Fold:
    def __init__(self):
        self.objects = {}      # (client, handle) -> (type name, seq)
        self.channels = {}     # (client, handle) -> CHANNEL fields
        self.states = {}       # (client, channel) -> CHANNEL_STATE fields (1.1), of live channels only
        self.methods = {}      # (client, channel) -> [(subch, method, value)] of CHANNEL_METHODS (1.1)
        self.mappings = {}     # gpu_va -> fields of GPU_MAP
        self.pages = {}        # page va -> [bytearray data, bytearray known (0/1 per byte)]
        self.submits = 0

    def write(self, va, data):
        pos = 0
        while pos < len(data):
            page = (va + pos) & ~(PAGE - 1)
            off = (va + pos) - page
            n = min(PAGE - off, len(data) - pos)
            p = self.pages.setdefault(page, [bytearray(PAGE), bytearray(PAGE)])
            p[0][off:off + n] = data[pos:pos + n]
            p[1][off:off + n] = b"\1" * n
            pos += n

    def apply(self, rec):
        f = rec.fields
        t = rec.type
        if t in (T["RM_ALLOC"], T["MEM_ALLOC"]) and f["status"] == 0:
            self.objects[(f["client"], f["handle"])] = (rec.name, rec.seq)
        elif t == T["RM_FREE"]:
            self.objects.pop((f["client"], f["handle"]), None)
            self.channels.pop((f["client"], f["handle"]), None)
            self.states.pop((f["client"], f["handle"]), None)
        elif t == T["CHANNEL"] and f["status"] == 0:
            self.channels[(f["client"], f["handle"])] = f
            self.states.pop((f["client"], f["handle"]), None)   # a new channel starts with no state
            self.methods.pop((f["client"], f["handle"]), None)
        elif t == T["CHANNEL_STATE"] and (f["client"], f["channel"]) in self.channels:
            self.states[(f["client"], f["channel"])] = f
        elif t == T["CHANNEL_METHODS"] and (f["client"], f["channel"]) in self.channels:
            self.methods[(f["client"], f["channel"])] = records.unpack_channel_methods(f["writes"])
        elif t == T["GPU_MAP"] and f["status"] == 0:
            self.mappings[f["gpu_va"]] = f
        elif t == T["GPU_UNMAP"]:
            self.mappings.pop(f["gpu_va"], None)
        elif t == T["MEMORY"]:
            self.write(f["gpu_va"], f["data"])
        elif t == T["GPFIFO_SUBMIT"]:
            for s in f["segments"]:
                self.write(s["gpu_va"], s["data"])
            ch = self.channels.get((f["client"], f["channel"]))
            if ch and ch["entries"]:
                for i, e in enumerate(f["entries"]):
                    slot = (f["gp_put_before"] + i) % ch["entries"]
                    self.write(ch["ring_va"] + 8 * slot, e.to_bytes(8, "little"))
            self.submits += 1

    def mapped(self, va):
        return any(m["gpu_va"] <= va < m["gpu_va"] + m["length"] for m in self.mappings.values())

    def known_bytes(self, mapped_only=True):
        """{page va: bytes with unknown bytes as None-free tuples}: (data, known) of every page, restricted
        to mapped pages when mapped_only (what a replay can see)."""
        out = {}
        for va, (data, known) in self.pages.items():
            if mapped_only and not self.mapped(va):
                continue
            if any(known):
                out[va] = (bytes(d if k else 0 for d, k in zip(data, known)), bytes(known))
        return out


def fold_until_submit(records, n):
    """State just before the n-th (0-based) GPFIFO_SUBMIT record; records is an iterable of reader Records."""
    st = Fold()
    for rec in records:
        if rec.type == T["GPFIFO_SUBMIT"] and st.submits == n:
            return st
        if rec.fields is not None:
            st.apply(rec)
    raise ValueError(f"trace has only {st.submits} submissions, not {n + 1}")
