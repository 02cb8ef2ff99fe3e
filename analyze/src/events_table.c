/* events_table.c: which methods the semantic tracker listens to, per class family, as data.
 *
 * Offsets from NVIDIA open-gpu-doc: host classes/host/clc46f.h, clc56f.h, clc76f.h (clc86f.h: same
 * offsets); compute classes/compute/clc5c0.h, clc6c0.h, clc7c0.h, clcbc0.h; 3D classes/3d/clc597.h,
 * clc797.h, clcb97.h; copy classes/dma-copy/clc5b5.h .. clc8b5.h; inline-to-memory
 * classes/inline-to-memory/cla140.h. min_class marks methods that first appear in a later class of the
 * family (REPORT_SEMAPHORE_EXECUTE: C797 / C7C0; copy SET_SEMAPHORE_PAYLOAD_UPPER: C7B5). */
#include "sem_internal.h"

#define M(fam, off, role) { fam, off, 1, 0, role, 0 }
#define MA(fam, off, n, stride, role) { fam, off, n, stride, role, 0 }
#define MC(fam, off, role, min) { fam, off, 1, 0, role, min }

/* Inline-to-memory and report semaphores are shared by 3D and compute classes (same offsets). */
#define I2M_METHODS(fam)                                                                                   \
    M(fam, 0x0180, R_I2M_LINE_LENGTH), M(fam, 0x0184, R_I2M_LINE_COUNT), M(fam, 0x0188, R_I2M_OFFSET_UPPER), \
    M(fam, 0x018c, R_I2M_OFFSET), M(fam, 0x0190, R_I2M_PITCH), M(fam, 0x01b0, R_I2M_LAUNCH),                 \
    M(fam, 0x01b4, R_I2M_DATA)
#define REPORT_METHODS(fam, min)                                                                           \
    M(fam, 0x1b00, R_REP_A), M(fam, 0x1b04, R_REP_B), M(fam, 0x1b08, R_REP_C), M(fam, 0x1b0c, R_REP_D),       \
    MC(fam, 0x0158, R_REPX_PAYLOAD_LO, min), MC(fam, 0x015c, R_REPX_PAYLOAD_HI, min),                        \
    MC(fam, 0x0160, R_REPX_ADDR_LO, min), MC(fam, 0x0164, R_REPX_ADDR_HI, min),                              \
    MC(fam, 0x0168, R_REPX_EXECUTE, min)

const sem_method_spec vgt_sem_method_table[] = {
    /* host: SEMAPHOREA-D (0x10-0x1c) and SEM_ADDR_LO .. SEM_EXECUTE (0x5c-0x6c) */
    M(FAM_HOST, 0x0010, R_SEMA_A), M(FAM_HOST, 0x0014, R_SEMA_B), M(FAM_HOST, 0x0018, R_SEMA_C),
    M(FAM_HOST, 0x001c, R_SEMA_D),
    M(FAM_HOST, 0x005c, R_SEM_ADDR_LO), M(FAM_HOST, 0x0060, R_SEM_ADDR_HI), M(FAM_HOST, 0x0064, R_SEM_PAYLOAD_LO),
    M(FAM_HOST, 0x0068, R_SEM_PAYLOAD_HI), M(FAM_HOST, 0x006c, R_SEM_EXECUTE),

    /* compute */
    I2M_METHODS(FAM_COMPUTE),
    REPORT_METHODS(FAM_COMPUTE, 0xC7C0),
    M(FAM_COMPUTE, 0x02b4, R_PCAS_A), M(FAM_COMPUTE, 0x02bc, R_SIGNAL_PCAS_B), M(FAM_COMPUTE, 0x02c0, R_SIGNAL_PCAS2_B),
    M(FAM_COMPUTE, 0x0318, R_INLINE_QMD_A), M(FAM_COMPUTE, 0x031c, R_INLINE_QMD_B),
    MA(FAM_COMPUTE, 0x0320, 96, 4, R_INLINE_QMD_DATA),

    /* 3D */
    I2M_METHODS(FAM_3D),
    REPORT_METHODS(FAM_3D, 0xC797),
    M(FAM_3D, 0x1618, R_BEGIN), M(FAM_3D, 0x1614, R_END),
    M(FAM_3D, 0x0d74, R_VA_START), M(FAM_3D, 0x0d78, R_DRAW_VA),
    M(FAM_3D, 0x0270, R_VA_BE_A), M(FAM_3D, 0x0274, R_VA_BE_B),
    M(FAM_3D, 0x0268, R_IB_BE_A), M(FAM_3D, 0x026c, R_IB_BE_B),
    M(FAM_3D, 0x1214, R_VA_INST_FIRST), M(FAM_3D, 0x1218, R_VA_INST_SUBSEQ),
    /* DRAW_INDEX_BUFFER32/16/8_BEGIN_END_INSTANCE_FIRST 0x17e4/0x17e8/0x17ec, _SUBSEQUENT 0x17f0/0x17f4/0x17f8 */
    MA(FAM_3D, 0x17e4, 3, 4, R_IB_INST_FIRST), MA(FAM_3D, 0x17f0, 3, 4, R_IB_INST_SUBSEQ),
    M(FAM_3D, 0x17e0, R_DRAW_IB),
    M(FAM_3D, 0x17c8, R_IB_A), M(FAM_3D, 0x17cc, R_IB_B), M(FAM_3D, 0x17d8, R_IB_E), M(FAM_3D, 0x17dc, R_IB_F),
    M(FAM_3D, 0x15e8, R_INLINE_INDEX), M(FAM_3D, 0x15f0, R_INLINE_INDEX2X16), M(FAM_3D, 0x1304, R_INLINE_INDEX4X8),
    M(FAM_3D, 0x0304, R_DRAW_ZERO_INDEX), M(FAM_3D, 0x123c, R_DRAW_AUTO),
    M(FAM_3D, 0x1434, R_BASE_VERTEX), M(FAM_3D, 0x1438, R_BASE_INSTANCE),
    /* SET_DRAW_CONTROL_A/B 0x260/0x264, SET_PRIMITIVE_TOPOLOGY_CONTROL 0x1948, SET_PRIMITIVE_TOPOLOGY 0x1970
     * (clc597.h, clc797.h, clcb97.h alike) */
    M(FAM_3D, 0x0260, R_DRAW_CTL_A), M(FAM_3D, 0x0264, R_DRAW_CTL_B),
    M(FAM_3D, 0x1948, R_TOPO_CONTROL), M(FAM_3D, 0x1970, R_TOPOLOGY),
    MA(FAM_3D, 0x2000, 6, 64, R_PIPE_SHADER), MA(FAM_3D, 0x200c, 6, 64, R_PIPE_REGCOUNT),
    MA(FAM_3D, 0x2014, 6, 64, R_PIPE_ADDR_A), MA(FAM_3D, 0x2018, 6, 64, R_PIPE_ADDR_B),
    /* SET_COLOR_TARGET_A/B/FORMAT(j) 0x0800/0x0804/0x0810+64j, SET_CT_SELECT 0x121c, SET_ZT_A/B 0x0fe0/0x0fe4,
     * CLEAR_SURFACE 0x19d0, SET_NOTIFY_A/B 0x0104/0x0108, NOTIFY 0x010c (clc597.h, clc797.h, clcb97.h alike) */
    MA(FAM_3D, 0x0800, 8, 64, R_CT_A), MA(FAM_3D, 0x0804, 8, 64, R_CT_B), MA(FAM_3D, 0x0810, 8, 64, R_CT_FORMAT),
    /* SET_COLOR_TARGET_WIDTH/HEIGHT/MEMORY(j) 0x0808/0x080c/0x0814+64j, SET_COLOR_CLEAR_VALUE(i) 0x0d80+4i */
    MA(FAM_3D, 0x0808, 8, 64, R_CT_WIDTH), MA(FAM_3D, 0x080c, 8, 64, R_CT_HEIGHT), MA(FAM_3D, 0x0814, 8, 64, R_CT_MEMORY),
    MA(FAM_3D, 0x0d80, 4, 4, R_CLEAR_VALUE),
    M(FAM_3D, 0x121c, R_CT_SELECT), M(FAM_3D, 0x0fe0, R_ZT_A), M(FAM_3D, 0x0fe4, R_ZT_B),
    M(FAM_3D, 0x19d0, R_CLEAR),
    M(FAM_3D, 0x0104, R_NOTIFY_A), M(FAM_3D, 0x0108, R_NOTIFY_B), M(FAM_3D, 0x010c, R_NOTIFY),
    /* compute classes keep the notifier methods at the same offsets (clc5c0.h .. clcbc0.h) */
    M(FAM_COMPUTE, 0x0104, R_NOTIFY_A), M(FAM_COMPUTE, 0x0108, R_NOTIFY_B), M(FAM_COMPUTE, 0x010c, R_NOTIFY),

    /* inline-to-memory class */
    I2M_METHODS(FAM_I2M),

    /* copy engine */
    M(FAM_COPY, 0x0240, R_CE_SEM_A), M(FAM_COPY, 0x0244, R_CE_SEM_B), M(FAM_COPY, 0x0248, R_CE_SEM_PAYLOAD),
    MC(FAM_COPY, 0x024c, R_CE_SEM_PAYLOAD_UPPER, 0xC7B5),
    M(FAM_COPY, 0x0300, R_CE_LAUNCH),
    M(FAM_COPY, 0x0400, R_CE_OFF_IN_UPPER), M(FAM_COPY, 0x0404, R_CE_OFF_IN_LOWER),
    M(FAM_COPY, 0x0408, R_CE_OFF_OUT_UPPER), M(FAM_COPY, 0x040c, R_CE_OFF_OUT_LOWER),
    M(FAM_COPY, 0x0410, R_CE_PITCH_IN), M(FAM_COPY, 0x0414, R_CE_PITCH_OUT),
    M(FAM_COPY, 0x0418, R_CE_LINE_LENGTH), M(FAM_COPY, 0x041c, R_CE_LINE_COUNT),
    M(FAM_COPY, 0x0700, R_CE_REMAP_A), M(FAM_COPY, 0x0704, R_CE_REMAP_B), M(FAM_COPY, 0x0708, R_CE_REMAP_COMPONENTS),
};
const uint32_t vgt_sem_method_table_count = sizeof vgt_sem_method_table / sizeof vgt_sem_method_table[0];
