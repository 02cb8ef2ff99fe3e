/* nv_pushbuf.h: the GPFIFO entry and push-buffer method header codec: the one place that knows their bits.
 *
 * Facts (bit ranges hi:lo), from NVIDIA/open-gpu-doc classes/host/clc56f.h (NVC56F_GP_ENTRY*, NVC56F_DMA_*)
 * and open-gpu-kernel-modules src/common/sdk/nvidia/inc/class/clc86f.h (GP_ENTRY1_OPCODE
 * SET_PB_SEGMENT_EXTENDED_BASE):
 *   GPFIFO entry word 0: FETCH 0:0, GET 31:2 (VA 31:2); a control entry: OPERAND 31:0, the extended-base
 *                        operand 24:8 (VA 56:40 of the entries after it)
 *   GPFIFO entry word 1: GET_HI 7:0 (VA 39:32), LEVEL 9:9 (1 SUBROUTINE), LENGTH 30:10 (dwords),
 *                        SYNC 31:31 (wait for the previous entries' pushes); LENGTH 0 is a control entry
 *                        whose OPCODE is 7:0
 *   method header: SEC_OP 31:29, COUNT / IMMD_DATA 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (method >> 2);
 *                  GRP0/GRP2 TERT_OP 17:16; subdevice mask value 15:4;
 *                  legacy GRP0 INC / GRP2 NON_INC: COUNT 28:18, ADDRESS 12:2
 * All static inline: the capture's hot path uses it too. */
#ifndef VGT_NV_PUSHBUF_H
#define VGT_NV_PUSHBUF_H

#include <stdint.h>

/* ---- GPFIFO entries (8 bytes, little-endian: word 0 then word 1) ---- */
#define VGT_NV_GP_ENTRY_BYTES 8u
#define VGT_NV_GP_MAX_LENGTH 0x1fffffu         /* LENGTH is 21 bits of dwords */
#define VGT_NV_GP_VA_BITS 40u                  /* GET and GET_HI: a push buffer below 2^40 */
#define VGT_NV_GP_SUBROUTINE 1u                /* vgt_nv_gp_encode flags: LEVEL = SUBROUTINE */
#define VGT_NV_GP_SYNC 2u                      /* SYNC */
enum {                                         /* GP_ENTRY1_OPCODE of a control entry */
    VGT_NV_GP_OPCODE_NOP = 0, VGT_NV_GP_OPCODE_ILLEGAL = 1, VGT_NV_GP_OPCODE_GP_CRC = 2, VGT_NV_GP_OPCODE_PB_CRC = 3,
    VGT_NV_GP_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE = 4,
};

static inline uint32_t vgt_nv_gp_w0(uint64_t e) { return (uint32_t)e; }
static inline uint32_t vgt_nv_gp_w1(uint64_t e) { return (uint32_t)(e >> 32); }
static inline uint64_t vgt_nv_gp_join(uint32_t w0, uint32_t w1) { return (uint64_t)w1 << 32 | w0; }
static inline uint64_t vgt_nv_gp_load(const uint8_t *p)   /* an entry as it lies in the ring */
{
    return vgt_nv_gp_join((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24,
                          (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24);
}

static inline uint32_t vgt_nv_gp_length(uint64_t e) { return (vgt_nv_gp_w1(e) >> 10) & VGT_NV_GP_MAX_LENGTH; }
static inline uint32_t vgt_nv_gp_level(uint64_t e) { return (vgt_nv_gp_w1(e) >> 9) & 1u; }
static inline uint32_t vgt_nv_gp_sync(uint64_t e) { return vgt_nv_gp_w1(e) >> 31; }
static inline uint32_t vgt_nv_gp_fetch(uint64_t e) { return vgt_nv_gp_w0(e) & 1u; }
static inline int vgt_nv_gp_is_control(uint64_t e) { return vgt_nv_gp_length(e) == 0; }
/* The push buffer's VA bits 39:2 (without an extended base). */
static inline uint64_t vgt_nv_gp_va(uint64_t e)
{
    return (uint64_t)(vgt_nv_gp_w0(e) & ~3u) | (uint64_t)(vgt_nv_gp_w1(e) & 0xffu) << 32;
}
static inline uint32_t vgt_nv_gp_opcode(uint64_t e) { return vgt_nv_gp_w1(e) & 0xffu; }
static inline uint32_t vgt_nv_gp_operand(uint64_t e) { return vgt_nv_gp_w0(e); }
/* SET_PB_SEGMENT_EXTENDED_BASE's operand (VA 56:40) and the base it sets. */
static inline uint32_t vgt_nv_gp_extended_operand(uint64_t e) { return (vgt_nv_gp_w0(e) >> 8) & 0x1ffffu; }
static inline uint64_t vgt_nv_gp_extended_base(uint64_t e) { return (uint64_t)vgt_nv_gp_extended_operand(e) << 40; }

/* An entry for a push buffer at va (4-byte aligned, below 2^40) of ndwords (< 2^21); flags VGT_NV_GP_*. */
static inline uint64_t vgt_nv_gp_encode(uint64_t va, uint32_t ndwords, unsigned flags)
{
    uint32_t w0 = (uint32_t)va & ~3u;
    uint32_t w1 = ((uint32_t)(va >> 32) & 0xffu) | (ndwords & VGT_NV_GP_MAX_LENGTH) << 10;
    if (flags & VGT_NV_GP_SUBROUTINE) w1 |= 1u << 9;
    if (flags & VGT_NV_GP_SYNC) w1 |= 1u << 31;
    return vgt_nv_gp_join(w0, w1);
}
/* A control entry (LENGTH 0). */
static inline uint64_t vgt_nv_gp_control(uint32_t opcode, uint32_t operand) { return vgt_nv_gp_join(operand, opcode & 0xffu); }
/* The same entry pointing at va (GET, GET_HI) instead: every other bit kept. */
static inline uint64_t vgt_nv_gp_with_va(uint64_t e, uint64_t va)
{
    uint32_t w0 = (vgt_nv_gp_w0(e) & 3u) | ((uint32_t)va & ~3u);
    uint32_t w1 = (vgt_nv_gp_w1(e) & ~0xffu) | ((uint32_t)(va >> 32) & 0xffu);
    return vgt_nv_gp_join(w0, w1);
}

/* ---- method headers ---- */
enum {                                         /* SEC_OP */
    VGT_NV_SEC_GRP0 = 0, VGT_NV_SEC_INC = 1, VGT_NV_SEC_GRP2 = 2, VGT_NV_SEC_NON_INC = 3, VGT_NV_SEC_IMMD = 4,
    VGT_NV_SEC_ONE_INC = 5, VGT_NV_SEC_RESERVED6 = 6, VGT_NV_SEC_END_PB_SEGMENT = 7,
};
enum {                                         /* TERT_OP of GRP0 / GRP2 */
    VGT_NV_TERT_OLD_METHOD = 0, VGT_NV_TERT_SET_SUBDEVICE_MASK = 1, VGT_NV_TERT_STORE_SUBDEVICE_MASK = 2,
    VGT_NV_TERT_USE_SUBDEVICE_MASK = 3,
};
#define VGT_NV_MH_MAX_COUNT 0x1fffu            /* COUNT and IMMD_DATA are 13 bits */
#define VGT_NV_MH_MAX_SUBCH 7u
#define VGT_NV_METHOD_SPACE 0x4000u            /* ADDRESS is 12 bits of dwords */
#define VGT_NV_HOST_METHOD_END 0x100u          /* methods below it are the channel's host (PBDMA) methods */

static inline int vgt_nv_is_host_method(uint32_t method) { return method < VGT_NV_HOST_METHOD_END; }

static inline uint32_t vgt_nv_mh_encode(uint32_t sec_op, uint32_t count, uint32_t subch, uint32_t method)
{
    return sec_op << 29 | (count & VGT_NV_MH_MAX_COUNT) << 16 | (subch & 7u) << 13 | (method >> 2 & 0xfffu);
}
static inline uint32_t vgt_nv_mh_sec_op(uint32_t h) { return h >> 29; }
static inline uint32_t vgt_nv_mh_count(uint32_t h) { return (h >> 16) & VGT_NV_MH_MAX_COUNT; }   /* or IMMD_DATA */
static inline uint32_t vgt_nv_mh_subch(uint32_t h) { return (h >> 13) & 7u; }
static inline uint32_t vgt_nv_mh_method(uint32_t h) { return (h & 0xfffu) << 2; }
static inline uint32_t vgt_nv_mh_tert_op(uint32_t h) { return (h >> 16) & 3u; }
static inline uint32_t vgt_nv_mh_subdevice_mask(uint32_t h) { return (h >> 4) & 0xfffu; }
/* Legacy GRP0 increasing / GRP2 non-increasing headers (TERT_OP 0): COUNT 28:18, ADDRESS 12:2. */
static inline uint32_t vgt_nv_mh_legacy_count(uint32_t h) { return (h >> 18) & 0x7ffu; }
static inline uint32_t vgt_nv_mh_legacy_method(uint32_t h) { return h & 0x1ffcu; }

#endif
