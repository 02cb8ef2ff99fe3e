/* pushbuf.c: GPFIFO entries and push-buffer method headers, decoded into method events.
 *
 * The bits of entries and headers are the codec's (vgt/nv_pushbuf.h, which cites NVIDIA's class headers);
 * this file keeps the decoder's state machine.
 *
 * Invariants:
 *  - Every dword is read through a bounds check against length_bytes: a count that runs past the bytes
 *    given becomes a pending run in the state (and a diagnostic), never an over-read.
 *  - The method loop does no allocation and no formatting; messages are only built for diagnostics.
 *  - Method runs, SET_OBJECT bindings and the subdevice mask live in vgt_pb_state and so continue
 *    across GPFIFO entries and submissions of one channel.
 *
 * Run state (one per channel). A run that fits in the entry is delivered straight from the header
 * (deliver), never stored; only one cut by the end of the entry becomes pending state:
 *
 *     HEADER --INC/NONINC/ONEINC, count fits (deliver)--> HEADER
 *       |
 *       +--count runs past the entry (start_run)--> PENDING --next entry's dwords (run_dwords)--> HEADER
 *                                                      |  entry ends again: stays PENDING
 *     IMMD (a one-dword run from the header's data), GRP0 mask ops, END_PB_SEGMENT: handled in header()
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vgt/nv/clc86f.h"
#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/pushbuf.h"

enum {
    SEC_GRP0 = VGT_NV_SEC_GRP0, SEC_INC = VGT_NV_SEC_INC, SEC_GRP2 = VGT_NV_SEC_GRP2, SEC_NONINC = VGT_NV_SEC_NON_INC,
    SEC_IMMD = VGT_NV_SEC_IMMD, SEC_ONEINC = VGT_NV_SEC_ONE_INC, SEC_END_SEGMENT = VGT_NV_SEC_END_PB_SEGMENT,
};
enum { MTHD_SET_OBJECT = NVC86F_SET_OBJECT, HOST_METHOD_END = VGT_NV_HOST_METHOD_END, SUBDEVICE_ALL = 0xfff,
       VGT_PB_METHOD_SPACE = VGT_NV_METHOD_SPACE };

static const char *const diag_names[] = {
    [VGT_DIAG_COUNT_PAST_SEGMENT] = "COUNT_PAST_SEGMENT",
    [VGT_DIAG_ADDRESS_NOT_CAPTURED] = "ADDRESS_NOT_CAPTURED",
    [VGT_DIAG_ILLEGAL_HEADER] = "ILLEGAL_HEADER",
    [VGT_DIAG_UNKNOWN_SUBCHANNEL] = "UNKNOWN_SUBCHANNEL",
    [VGT_DIAG_UNKNOWN_METHOD] = "UNKNOWN_METHOD",
    [VGT_DIAG_TRUNCATED_SEGMENT] = "TRUNCATED_SEGMENT",
    [VGT_DIAG_RUN_ACROSS_ENTRIES] = "RUN_ACROSS_ENTRIES",
    [VGT_DIAG_END_SEGMENT] = "END_SEGMENT",
    [VGT_DIAG_CONTROL_ENTRY] = "CONTROL_ENTRY",
};

const char *vgt_diag_kind_name(vgt_diag_kind kind)
{
    if ((unsigned)kind < sizeof diag_names / sizeof diag_names[0] && diag_names[kind]) return diag_names[kind];
    return "UNKNOWN_DIAG";
}

const char *vgt_hdr_kind_name(unsigned kind)
{
    switch (kind) {
    case VGT_HDR_INC: return "INC";
    case VGT_HDR_NONINC: return "NONINC";
    case VGT_HDR_IMMD: return "IMMD";
    case VGT_HDR_ONEINC: return "ONEINC";
    default: return "?";
    }
}

/* GP_ENTRY1_OPCODE values (vgt/nv_pushbuf.h VGT_NV_GP_OPCODE_*). */
static const char *const gp_opcode_names[] = {"NOP", "ILLEGAL", "GP_CRC", "PB_CRC", "SET_PB_SEGMENT_EXTENDED_BASE"};

const char *vgt_gp_opcode_name(unsigned opcode)
{
    return opcode < sizeof gp_opcode_names / sizeof gp_opcode_names[0] ? gp_opcode_names[opcode] : NULL;
}

void vgt_gp_entry_decode(uint64_t raw, vgt_gp_entry *out)
{
    memset(out, 0, sizeof *out);
    out->raw = raw;
    out->fetch = vgt_nv_gp_fetch(raw);
    out->level = vgt_nv_gp_level(raw);
    out->length = vgt_nv_gp_length(raw);
    out->sync = vgt_nv_gp_sync(raw);
    out->is_control = vgt_nv_gp_is_control(raw);
    if (out->is_control) {
        out->opcode = (uint8_t)vgt_nv_gp_opcode(raw);
        out->operand = out->opcode == VGT_NV_GP_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE ? vgt_nv_gp_extended_operand(raw)
                                                                                   : vgt_nv_gp_operand(raw);
        return;
    }
    out->va = vgt_nv_gp_va(raw);
}

void vgt_pb_state_init(vgt_pb_state *st, uint32_t channel_class)
{
    memset(st, 0, sizeof *st);
    st->channel_class = channel_class;
    st->subdevice_mask = SUBDEVICE_ALL;
    st->stored_subdevice_mask = SUBDEVICE_ALL;
}

void vgt_pb_state_adopt(vgt_pb_state *st, uint32_t channel_class, const vgt_rec_channel_state *cs)
{
    uint64_t methods = st->methods;
    vgt_pb_state_init(st, channel_class);
    memcpy(st->subch_class, cs->subch_class, sizeof st->subch_class);
    st->subdevice_mask = cs->subdevice_mask;
    st->stored_subdevice_mask = cs->stored_subdevice_mask;
    st->extended_base = cs->extended_base;
    st->methods = methods;
}

static void diag(const vgt_pb_callbacks *cb, vgt_diag_kind kind, const vgt_mpos *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void diag(const vgt_pb_callbacks *cb, vgt_diag_kind kind, const vgt_mpos *pos, const char *fmt, ...)
{
    if (!cb->diag) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb->diag(cb->ctx, kind, pos, msg);
}

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* SET_OBJECT: NVCLASS 15:0 binds the subchannel. */
static void bind(vgt_pb_state *st, uint32_t subch, uint32_t data)
{
    st->subch_class[subch] = VGT_NV_GET(data, NVC86F_SET_OBJECT_NVCLASS);
    st->unbound_reported &= (uint8_t)~(1u << subch);
}

/* The method loop: deliver take data dwords (at p; the first at dword `dword` of the entry at) of a run
 * starting at method mthd. step is 4 (INC, or ONEINC before its first method) or 0; keep is ~0 for INC
 * (the step repeats) and 0 otherwise. Returns how many were consumed (fewer than take when a callback
 * stopped, with *stop set) and leaves the next method address in *next. Builds the event once and updates
 * only what changes per dword; no allocation, no formatting. */
static inline __attribute__((always_inline)) uint32_t deliver(vgt_pb_state *st, const vgt_pb_callbacks *cb,
                                                              const uint8_t *p, uint32_t take, uint32_t mthd,
                                                              uint32_t subch, uint8_t kind, uint8_t first,
                                                              uint32_t step, uint32_t keep, const vgt_mpos *at, uint32_t dword,
                                                              uint32_t *next, int *stop)
{
    uint8_t masked = (st->subdevice_mask & 1u) == 0;
    uint32_t chan_cls = st->channel_class, k = 0;
    if (first && mthd >= HOST_METHOD_END && st->subch_class[subch] == 0 && !(st->unbound_reported >> subch & 1u)) {
        st->unbound_reported |= (uint8_t)(1u << subch);
        vgt_mpos pos = {.seq = at->seq, .entry = at->entry, .dword = dword};
        diag(cb, VGT_DIAG_UNKNOWN_SUBCHANNEL, &pos,
             "method 0x%04x on subchannel %u, which has no SET_OBJECT yet (its methods have class 0 until one)", mthd,
             subch);
    }
    /* the position field by field, the dword apart: a position struct whose dword the caller had just
     * stored, copied whole, was read back in one 16-byte load that the store cannot be forwarded to (a
     * stall on every run's header, most of the decoder's own time) */
    vgt_method m = {.subch = subch, .kind = kind, .first = first, .masked = masked};
    m.pos.seq = at->seq;
    m.pos.entry = at->entry;
    m.pos.dword = dword;
    uint32_t done = 0;   /* dwords delivered before the bulk run (the first method of an increase-once) */
    if (cb->noninc_run && kind == VGT_HDR_ONEINC && step && take > 1) {
        /* increase-once (the NVIDIA drivers' LAUNCH_DMA + LOAD_INLINE_DATA...): its first method on its
         * own, then the rest, one method many dwords, as a run */
        m.mthd = mthd;
        m.data = load_le32(p);
        m.is_host = mthd < HOST_METHOD_END;
        m.cls = m.is_host ? chan_cls : st->subch_class[subch];
        if (mthd == MTHD_SET_OBJECT && !masked) bind(st, subch, m.data);
        mthd = (mthd + 4u) & (VGT_PB_METHOD_SPACE - 4u);
        if (cb->method && cb->method(cb->ctx, &m)) {
            *stop = 1;
            *next = mthd;
            return 1;
        }
        p += 4;
        take--;
        dword++;
        step = 0;
        done = 1;
        m.first = 0;
        m.pos.dword = dword;
    }
    if (cb->noninc_run && (kind == VGT_HDR_NONINC || (kind == VGT_HDR_ONEINC && !step)) && take) {
        m.mthd = mthd;
        m.data = load_le32(p);
        m.is_host = mthd < HOST_METHOD_END;
        m.cls = m.is_host ? chan_cls : st->subch_class[subch];
        if (mthd == MTHD_SET_OBJECT && !masked) bind(st, subch, load_le32(p + 4u * (take - 1)));
        *stop = cb->noninc_run(cb->ctx, &m, p, take) != 0;
        *next = mthd;
        return done + take;
    }
    if (!cb->method && mthd != MTHD_SET_OBJECT && (!keep || mthd + 4u * take <= VGT_PB_METHOD_SPACE)) {
        /* nobody listens and no SET_OBJECT can be in the run: only the state moves */
        *next = keep ? mthd + 4u * take : mthd + (take ? step : 0);
        return take;
    }
    for (; k < take; k++) {
        m.mthd = mthd;
        m.data = load_le32(p + 4u * k);
        m.pos.dword = dword + k;
        m.is_host = mthd < HOST_METHOD_END;
        m.cls = m.is_host ? chan_cls : st->subch_class[subch];
        if (mthd == MTHD_SET_OBJECT && !masked) bind(st, subch, m.data);
        mthd = (mthd + step) & (VGT_PB_METHOD_SPACE - 4u);
        step &= keep;
        if (cb->method && cb->method(cb->ctx, &m)) {
            *stop = 1;
            k++;
            break;
        }
        m.first = 0;
    }
    *next = mthd;
    return done + k;
}

/* Deliver up to n dwords of the pending run (one that began in an earlier entry or ran past the data). */
static uint32_t run_dwords(vgt_pb_state *st, const vgt_pb_callbacks *cb, const uint8_t *p, uint32_t n,
                           const vgt_mpos *at, uint32_t dword, int *stop)
{
    uint32_t take = st->run_remaining < n ? st->run_remaining : n;
    uint8_t kind = st->run_kind;
    uint32_t step = kind == VGT_HDR_NONINC || (kind == VGT_HDR_ONEINC && !st->run_first) ? 0u : 4u;
    uint32_t next;
    uint32_t k = deliver(st, cb, p, take, st->run_mthd, st->run_subch, kind, st->run_first, step,
                         kind == VGT_HDR_INC ? ~0u : 0u, at, dword, &next, stop);
    st->run_mthd = next & (VGT_PB_METHOD_SPACE - 4u);
    st->run_remaining -= k;
    if (k) st->run_first = 0;
    st->methods += k;
    return k;
}

/* The header's position field by field, as deliver takes it. */
static void start_run(vgt_pb_state *st, uint8_t kind, uint32_t subch, uint32_t mthd, uint32_t count, const vgt_mpos *at,
                      uint32_t dword)
{
    st->run_kind = kind;
    st->run_subch = subch;
    st->run_mthd = mthd;
    st->run_remaining = count;
    st->run_count = count;
    st->run_first = 1;
    st->run_header.seq = at->seq;
    st->run_header.entry = at->entry;
    st->run_header.dword = dword;
}

/* GRP0: the legacy increasing header (TERT_OP 0) or a subdevice-mask operation. */
static void header_grp0(vgt_pb_state *st, uint32_t h, const vgt_mpos *at, uint32_t dword)
{
    uint32_t mask = vgt_nv_mh_subdevice_mask(h);
    switch (vgt_nv_mh_tert_op(h)) {
    case VGT_NV_TERT_OLD_METHOD:   /* 0x00000000 is the NOP: count 0 */
        start_run(st, VGT_HDR_INC, vgt_nv_mh_subch(h), vgt_nv_mh_legacy_method(h), vgt_nv_mh_legacy_count(h), at, dword);
        break;
    case VGT_NV_TERT_SET_SUBDEVICE_MASK: st->subdevice_mask = mask; break;
    case VGT_NV_TERT_STORE_SUBDEVICE_MASK: st->stored_subdevice_mask = mask; break;
    case VGT_NV_TERT_USE_SUBDEVICE_MASK: st->subdevice_mask = st->stored_subdevice_mask; break;
    }
}

/* Decode one header dword (no run pending). Returns 1 when the segment ends here (END_PB_SEGMENT), -1 when
 * a method callback asked to stop, 0 otherwise. */
static int header(vgt_pb_state *st, const vgt_pb_callbacks *cb, uint32_t h, const vgt_mpos *at, uint32_t dword)
{
    vgt_mpos pos = {.seq = at->seq, .entry = at->entry, .dword = dword};   /* for diagnostics only */
    uint32_t subch = vgt_nv_mh_subch(h), mthd = vgt_nv_mh_method(h), count = vgt_nv_mh_count(h);
    switch (vgt_nv_mh_sec_op(h)) {
    case SEC_GRP0: header_grp0(st, h, at, dword); return 0;
    case SEC_INC: start_run(st, VGT_HDR_INC, subch, mthd, count, at, dword); return 0;
    case SEC_NONINC: start_run(st, VGT_HDR_NONINC, subch, mthd, count, at, dword); return 0;
    case SEC_ONEINC: start_run(st, VGT_HDR_ONEINC, subch, mthd, count, at, dword); return 0;
    case SEC_IMMD: {
        uint8_t data[4] = {(uint8_t)count, (uint8_t)(count >> 8), 0, 0};   /* IMMD_DATA 28:16 */
        int stop = 0;
        start_run(st, VGT_HDR_IMMD, subch, mthd, 1, at, dword);
        run_dwords(st, cb, data, 1, at, dword, &stop);
        return stop ? -1 : 0;
    }
    case SEC_GRP2:
        if (vgt_nv_mh_tert_op(h) == VGT_NV_TERT_OLD_METHOD) {   /* legacy non-increasing */
            start_run(st, VGT_HDR_NONINC, subch, vgt_nv_mh_legacy_method(h), vgt_nv_mh_legacy_count(h), at, dword);
            return 0;
        }
        diag(cb, VGT_DIAG_ILLEGAL_HEADER, &pos, "header 0x%08x: SEC_OP 2 with TERT_OP %u is not a method header",
             h, vgt_nv_mh_tert_op(h));
        return 0;
    case SEC_END_SEGMENT: return 1;
    default:
        diag(cb, VGT_DIAG_ILLEGAL_HEADER, &pos, "header 0x%08x: reserved SEC_OP %u", h, vgt_nv_mh_sec_op(h));
        return 0;
    }
}

vgt_status vgt_pb_decode(vgt_pb_state *st, const uint8_t *bytes, uint32_t length_bytes, vgt_mpos pos,
                         const vgt_pb_callbacks *cb, vgt_error *err)
{
    if (!st || !cb || (!bytes && length_bytes))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "vgt_pb_decode: state, callbacks and bytes are required");
    uint32_t n = length_bytes / 4u;
    int stop = 0;
    st->stopped = 0;
    if (st->run_remaining && n)
        diag(cb, VGT_DIAG_RUN_ACROSS_ENTRIES, &pos,
             "method run of header at entry %u dword %u continues here with %u of %u methods left",
             st->run_header.entry, st->run_header.dword, st->run_remaining, st->run_count);
    /* pos stays as given: each position is (pos, dword i) passed apart (deliver says why) */
    for (uint32_t i = 0; i < n;) {
        if (st->run_remaining) {
            i += run_dwords(st, cb, bytes + 4u * i, n - i, &pos, i, &stop);
            if (stop) goto stopped;
            continue;
        }
        uint32_t h = load_le32(bytes + 4u * i), sec = vgt_nv_mh_sec_op(h), count = vgt_nv_mh_count(h);
        if ((sec == SEC_INC || sec == SEC_NONINC || sec == SEC_ONEINC) && count < n - i) {
            /* the common case: a whole run inside this entry, decoded without touching the run state */
            uint32_t next, k;
            k = deliver(st, cb, bytes + 4u * (i + 1), count, vgt_nv_mh_method(h), vgt_nv_mh_subch(h), (uint8_t)sec, 1,
                        sec == SEC_NONINC ? 0u : 4u, sec == SEC_INC ? ~0u : 0u, &pos, i + 1, &next, &stop);
            st->methods += k;
            if (stop) {
                if (k < count) {   /* keep the rest as a pending run, as if the entry had ended */
                    start_run(st, (uint8_t)sec, vgt_nv_mh_subch(h), next, count - k, &pos, i + 1);
                    st->run_first = 0;
                }
                goto stopped;
            }
            i += 1 + count;
            continue;
        }
        int r = header(st, cb, h, &pos, i);
        if (r < 0) goto stopped;
        if (r > 0) {
            pos.dword = i;
            if (i + 1 < n)
                diag(cb, VGT_DIAG_END_SEGMENT, &pos, "END_PB_SEGMENT at dword %u ends the entry; %u dwords after it ignored",
                     i, n - i - 1);
            return VGT_OK;
        }
        i++;
    }
    if (st->run_remaining) {
        pos.dword = n;
        diag(cb, VGT_DIAG_COUNT_PAST_SEGMENT, &pos,
             "count runs past segment end at entry %u dword %u: header at dword %u (count %u) still needs %u dwords",
             pos.entry, n, st->run_header.dword, st->run_count, st->run_remaining);
    }
    return VGT_OK;
stopped:
    st->stopped = 1;
    return VGT_OK;
}
