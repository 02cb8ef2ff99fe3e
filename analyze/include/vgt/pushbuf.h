/* pushbuf.h: GPFIFO entries and push-buffer method streams, decoded into method events.
 *
 * Facts: GPFIFO entry and method-header layouts per NVIDIA open-gpu-doc (classes/host/clc86f.h and
 * manuals/.../dev_ram / dma-pusher docs).
 *
 * A decoder state exists per channel: the class bound to each subchannel (SET_OBJECT), a method run that
 * continues across GPFIFO entries, the subdevice mask. Host methods (< 0x100) go to the host class on any
 * subchannel. Every method reaches the caller as a vgt_method with its position; problems (a count that
 * runs past its segment, an entry whose address is in no segment, an illegal header) reach the caller
 * as diagnostics, never a crash or an over-read.
 */
#ifndef VGT_PUSHBUF_H
#define VGT_PUSHBUF_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One GPFIFO entry, decoded. */
typedef struct vgt_gp_entry {
    uint64_t raw;
    uint64_t va;              /* push-buffer GPU VA (GET | GET_HI << 32), extended base applied by the caller */
    uint32_t length;          /* dwords; 0 means a control entry */
    uint8_t level;            /* 0 main, 1 subroutine */
    uint8_t sync;             /* SYNC bit */
    uint8_t fetch;            /* FETCH bit (conditional fetch) */
    uint8_t is_control;       /* length == 0 */
    uint8_t opcode;           /* control entries: 0 NOP, 1 ILLEGAL, 2 GP_CRC, 3 PB_CRC, 4 SET_PB_SEGMENT_EXTENDED_BASE */
    uint32_t operand;         /* control entries: the opcode's operand (e.g. VA[63:40] for the extended base) */
} vgt_gp_entry;

void vgt_gp_entry_decode(uint64_t raw, vgt_gp_entry *out);

/* Where a method came from: the record (submission) sequence number, the GPFIFO entry index within the
 * submission, and the dword index within that entry's push buffer. */
typedef struct vgt_mpos {
    uint64_t seq;
    uint32_t entry;
    uint32_t dword;
} vgt_mpos;

enum vgt_hdr_kind {
    VGT_HDR_INC = VGT_NV_SEC_INC,          /* SEC_OP 1: increasing */
    VGT_HDR_NONINC = VGT_NV_SEC_NON_INC,   /* SEC_OP 3: non-increasing */
    VGT_HDR_IMMD = VGT_NV_SEC_IMMD,        /* SEC_OP 4: immediate data in the header */
    VGT_HDR_ONEINC = VGT_NV_SEC_ONE_INC,   /* SEC_OP 5: increase once */
};

typedef struct vgt_method {
    uint32_t subch;           /* 0..7 */
    uint32_t cls;             /* class bound to the subchannel, or the channel class for host methods; 0 unknown */
    uint32_t mthd;            /* method byte address */
    uint32_t data;
    uint8_t kind;             /* enum vgt_hdr_kind of the header that carried it */
    uint8_t is_host;          /* mthd < 0x100 */
    uint8_t first;            /* first method of its header */
    uint8_t masked;           /* the subdevice mask (SET/USE_SUBDEVICE_MASK) excludes subdevice 0: the GPU ignores it */
    vgt_mpos pos;
} vgt_method;

typedef enum vgt_diag_kind {
    VGT_DIAG_COUNT_PAST_SEGMENT = 1,  /* a header's count runs past the end of its segment (continues next entry) */
    VGT_DIAG_ADDRESS_NOT_CAPTURED,    /* an entry's VA is in no captured segment */
    VGT_DIAG_ILLEGAL_HEADER,          /* unknown SEC_OP / TERT_OP */
    VGT_DIAG_UNKNOWN_SUBCHANNEL,      /* a method on a subchannel with no SET_OBJECT (reported once until bound) */
    VGT_DIAG_UNKNOWN_METHOD,          /* a method not in the class table (reported by table users) */
    VGT_DIAG_TRUNCATED_SEGMENT,       /* a segment captured short */
    VGT_DIAG_RUN_ACROSS_ENTRIES,      /* informational: a method run continued into the next entry */
    VGT_DIAG_END_SEGMENT,             /* informational: END_PB_SEGMENT ended the entry before its length */
    VGT_DIAG_CONTROL_ENTRY,           /* a control entry with an opcode this decoder does not know */
} vgt_diag_kind;

const char *vgt_diag_kind_name(vgt_diag_kind kind);   /* "COUNT_PAST_SEGMENT" style, never NULL */
/* Header kinds by name ("INC", "NONINC", "IMMD", "ONEINC"; "?" otherwise), never NULL. The legacy GRP0
 * increasing and GRP2 non-increasing headers (COUNT 28:18, ADDRESS 12:2) are reported as INC / NONINC. */
const char *vgt_hdr_kind_name(unsigned kind);
/* GPFIFO control-entry opcodes by name ("NOP", "SET_PB_SEGMENT_EXTENDED_BASE", ...), NULL if unknown. */
const char *vgt_gp_opcode_name(unsigned opcode);

typedef struct vgt_pb_callbacks {
    /* Return non-zero to stop decoding (the decode function then returns VGT_OK early, st->stopped set,
     * the rest of an interrupted run kept pending). NULL: decode for state only (SET_OBJECT, runs, mask);
     * that path skips data dwords without touching them. */
    int (*method)(void *ctx, const vgt_method *m);
    void (*entry)(void *ctx, const vgt_gp_entry *e, uint32_t index, const vgt_mpos *pos);   /* optional */
    void (*diag)(void *ctx, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg);     /* optional */
    void *ctx;
    /* Optional bulk path for non-increasing runs (one method, many dwords: LOAD_INLINE_DATA uploads,
     * MME instruction and data uploads). When set, the dwords of a NON_INC header that lie in one entry
     * reach this callback in one call instead of one `method` call each: m is the event of the first
     * (m->data its value), data points at count little-endian dwords (data[0..3] is m->data). A run split
     * across entries arrives as one call per entry. An increase-once (ONE_INC) header delivers its first
     * method through `method` and the dwords that follow it (all to the next method) through this path
     * too: drivers send LAUNCH_DMA plus its inline data that way. Return non-zero to stop (after the
     * whole call). */
    int (*noninc_run)(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count);
} vgt_pb_callbacks;

/* Write i of a non-incrementing run handed to noninc_run (m: its first write, data: count little-endian
 * dwords), as the single method the run stands for. */
static inline vgt_method vgt_pb_run_method(const vgt_method *m, const uint8_t *data, uint32_t i)
{
    vgt_method one = *m;
    const uint8_t *p = data + 4u * i;
    one.data = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    one.pos.dword = m->pos.dword + i;
    one.first = i == 0 && m->first;
    return one;
}

/* Per-channel decoder state. Zero-initialise with vgt_pb_state_init. */
typedef struct vgt_pb_state {
    uint32_t channel_class;   /* host class, e.g. 0xC86F */
    uint32_t subch_class[8];  /* from SET_OBJECT; 0 = none yet */
    /* a method run that continues across entries */
    uint32_t run_remaining;
    uint32_t run_mthd;
    uint32_t run_subch;
    uint8_t run_kind;
    uint8_t run_first;
    uint32_t subdevice_mask;
    uint64_t extended_base;   /* SET_PB_SEGMENT_EXTENDED_BASE, VA bits 63:40 */
    /* extensions (after the original fields) */
    uint32_t stored_subdevice_mask; /* STORE_SUBDEVICE_MASK, applied by USE_SUBDEVICE_MASK */
    vgt_mpos run_header;      /* where the pending run's header was */
    uint32_t run_count;       /* the pending run's header count */
    uint8_t stopped;          /* a method callback asked to stop; vgt_pb_decode_submit returns early */
    uint64_t methods;         /* methods delivered so far (statistics) */
    uint8_t unbound_reported; /* subchannels already reported UNKNOWN_SUBCHANNEL (bit per subchannel;
                               * cleared by their SET_OBJECT): one diagnostic per subchannel, not per header */
} vgt_pb_state;

void vgt_pb_state_init(vgt_pb_state *st, uint32_t channel_class);
/* Resume a channel's decoder from a format 1.1 CHANNEL_STATE record (a trace cut out of a longer one):
 * subchannel bindings, subdevice masks and extended base as the record gives them, no method run pending.
 * The statistics (st->methods) are kept. */
void vgt_pb_state_adopt(vgt_pb_state *st, uint32_t channel_class, const vgt_rec_channel_state *cs);

/* Decode one push-buffer segment's dwords. pos gives seq and entry; dword indices start at 0. */
vgt_status vgt_pb_decode(vgt_pb_state *st, const uint8_t *bytes, uint32_t length_bytes, vgt_mpos pos,
                         const vgt_pb_callbacks *cb, vgt_error *err);

/* Decode a whole GPFIFO_SUBMIT: each entry in order, its bytes found in the record's segments (main and
 * subroutine levels alike). Every entry, control entries included, is reported through cb->entry before
 * its methods, with the extended base (SET_PB_SEGMENT_EXTENDED_BASE, kept in st) already added to its VA.
 * An entry in no segment is ADDRESS_NOT_CAPTURED; one longer than its segment decodes the captured part
 * and reports TRUNCATED_SEGMENT. Fails only on bad arguments. */
vgt_status vgt_pb_decode_submit(vgt_pb_state *st, uint64_t seq, const vgt_rec_gpfifo_submit *sub,
                                const vgt_pb_callbacks *cb, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
