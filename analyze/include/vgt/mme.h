/* mme.h: the MME (macro method expander) of NVIDIA 3D/compute classes: decoders, disassembler,
 * simulator and a macro-upload tracker. Pure computation: no I/O except the FILE* disassembler.
 *
 * Two instruction formats exist:
 *   - TU104 ("MME64"), Turing..Hopper: 96-bit instruction groups, 3 dwords sent high word first,
 *     two ALUs, two outputs, predicates (NVIDIA open-gpu-doc MME-MacroMethodExpander/tu104/).
 *   - Fermi, Fermi..Volta: 32-bit instructions, one ALU, delay slots (envytools envydis/macro.c).
 *
 * Typical use:
 *     vgt_mme_sim_io io = { .emit = my_emit, .user = ctx };
 *     vgt_mme_result res;
 *     vgt_error err;
 *     if (vgt_mme_sim_run(NULL, VGT_MME_TU104, code, ndw, start, params, np, &io, NULL, &res, &err) != VGT_OK)
 *         printf("%s (%s at pc %u)\n", err.msg, vgt_mme_error_name(res.error), res.pc);
 *
 * Hardware error classes (vgt_mme_error) are results of a macro, not failures of the library: the
 * simulator returns VGT_E_DECODE with the class in result->error and a message naming pc and cause;
 * other statuses (VGT_E_NOMEM, VGT_E_ARG, a callback's own failure) mean the run itself failed.
 */
#ifndef VGT_MME_H
#define VGT_MME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/nv_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sizes and limits ------------------------------------------------------------------------ */
#define VGT_MME_MACRO_COUNT 256u             /* CALL_MME_MACRO(j), j < 256; ESR_INFO MACRO_ADDRESS 19:12 */
#define VGT_MME_DATA_RAM_WORDS 0xC00u        /* DREAD/DWRITE data RAM (Mesa mme_tu104.h) */
#define VGT_MME_TU104_IRAM_DWORDS 0x3000u    /* 4096 groups: ESR_INFO PC is 11:0 [unconfirmed size] */
#define VGT_MME_FERMI_IRAM_DWORDS 0x800u     /* envytools envydis/macro.c: code space 0x800 words */
#define VGT_MME_IRAM_MAX_DWORDS 0x3000u      /* the larger of the two: a tracker's RAM size */
#define VGT_MME_DMA_FIFO_MAX_WORDS 4096u     /* SET_MME_DATA_FIFO_CONFIG largest size, 16 KB */
#define VGT_MME_DEFAULT_MAX_INSTRUCTIONS (1u << 20)
#define VGT_MME_DEFAULT_MAX_CALL_PARAMS (1u << 20)
#define VGT_MME_DEFAULT_MAX_EMITS (1u << 21)
#define VGT_MME_SHADOW_WORDS 0x1000u         /* one shadow word per method, byte address < 0x4000 */

/* MME method byte offsets, identical in TURING_A, HOPPER_A, HOPPER_COMPUTE_A (facts section 1). */
enum {
    VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER = 0x0114,
    VGT_MME_M_LOAD_INSTRUCTION_RAM = 0x0118,
    VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER = 0x011c,
    VGT_MME_M_LOAD_START_ADDRESS_RAM = 0x0120,
    VGT_MME_M_SET_SHADOW_RAM_CONTROL = 0x0124,
    VGT_MME_M_SET_MEM_ADDRESS_A = 0x0550,
    VGT_MME_M_SET_MEM_ADDRESS_B = 0x0554,
    VGT_MME_M_SET_DATA_RAM_ADDRESS = 0x0558,
    VGT_MME_M_DMA_READ = 0x055c,
    VGT_MME_M_DMA_READ_FIFOED = 0x0560,
    VGT_MME_M_DMA_WRITE = 0x0564,
    VGT_MME_M_DMA_REDUCTION = 0x0568,
    VGT_MME_M_DMA_SYSMEMBAR = 0x056c,
    VGT_MME_M_DMA_SYNC = 0x0570,
    VGT_MME_M_SET_DATA_FIFO_CONFIG = 0x0574,
    VGT_MME_M_SET_SHADOW_SCRATCH0 = 0x3400,  /* + 4i, i < 256 */
    VGT_MME_M_CALL_MACRO0 = 0x3800,          /* + 8j */
    VGT_MME_M_CALL_DATA0 = 0x3804,           /* + 8j */
};

/* ---- formats ---------------------------------------------------------------------------------- */
typedef enum vgt_mme_format {
    VGT_MME_NONE = VGT_NV_MME_NONE,   /* the class has no MME of either format */
    VGT_MME_TU104 = VGT_NV_MME_TU104,
    VGT_MME_FERMI = VGT_NV_MME_FERMI,
} vgt_mme_format;

/* TU104 for classes >= 0xC500 (Turing and later, 3D and compute), Fermi for 0x9000..0xC4FF
 * (Fermi..Volta), VGT_MME_NONE below (Mesa's choice; the ranges are data: trace-format/facts/families.txt). */
vgt_mme_format vgt_mme_format_for_class(uint32_t cls);
const char *vgt_mme_format_name(vgt_mme_format fmt);   /* "tu104", "fermi", "none" */
uint32_t vgt_mme_iram_dwords(vgt_mme_format fmt);      /* instruction RAM size of the format */
uint32_t vgt_mme_inst_dwords(vgt_mme_format fmt);      /* 3 for TU104, 1 for Fermi, 0 for none */
/* An instruction-RAM pointer or start address (counted in instructions of the format, see the
 * tracker's "Units") in dwords: v * vgt_mme_inst_dwords(fmt), UINT32_MAX when that overflows. */
uint32_t vgt_mme_pointer_dword(vgt_mme_format fmt, uint32_t v);

/* ---- hardware error classes ------------------------------------------------------------------ */
/* Our own stable numbering (append only); the ESR bit of NV_PGRAPH_PRI_MME_HWW_ESR (open-gpu-doc
 * manuals/turing/tu104/pri_mme.ref.txt) is given by vgt_mme_error_esr_bit(). */
typedef enum vgt_mme_error {
    VGT_MME_OK = 0,
    VGT_MME_MISSING_MACRO_DATA = 1,     /* a load found the parameter FIFO empty */
    VGT_MME_EXTRA_MACRO_DATA = 2,       /* Fermi: the macro ended with call parameters unconsumed (TU104
                                           discards them at exit: no error) */
    VGT_MME_ILLEGAL_OPCODE = 3,         /* undefined op, register, output source or pairing; TU104: also an
                                           output reading a MUL/MULU/MULH result of its own group (H200) */
    VGT_MME_BRANCH_IN_DELAY_SLOT = 4,   /* Fermi: a branch in the delay slot of a branch or exit */
    VGT_MME_MAX_INSTR_LIMIT = 5,        /* more than config max_instructions executed */
    VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS = 6, /* fetch outside the instruction RAM */
    VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS = 7,  /* DREAD/DWRITE/DMA outside the data RAM */
    VGT_MME_ILLEGAL_MME_METHOD = 8,     /* a macro emitted LOAD_MME_* or CALL_MME_* [unconfirmed meaning] */
    VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS = 9,  /* the memory-read callback failed */
    VGT_MME_DMA_READ_FIFOED_FROM_PB = 10,       /* MME_DMA_READ_FIFOED sent by the push buffer */
    VGT_MME_DMA_ILLEGAL_FIFO_CONFIG = 11,       /* READ_FIFOED with a 0 KB FIFO configured */
    VGT_MME_DMA_READ_FIFOED_OVERFLOW = 12,      /* READ_FIFOED beyond the FIFO capacity */
    VGT_MME_DMA_FIFO_RESIZED_WHEN_NONIDLE = 13, /* SET_MME_DATA_FIFO_CONFIG while FIFOed data waits */
    VGT_MME_ERROR_COUNT_
} vgt_mme_error;

const char *vgt_mme_error_name(vgt_mme_error e);   /* "ILLEGAL_OPCODE" style, never NULL */
int vgt_mme_error_esr_bit(vgt_mme_error e);        /* bit in NV_PGRAPH_PRI_MME_HWW_ESR, -1 for OK */

/* ---- decoded instructions ---------------------------------------------------------------------- */
/* TU104 register numbers (open-gpu-doc tu104/reg.h): R0..R23 = 0..23, then these. */
enum {
    VGT_MME_TU104_ZERO = 24, VGT_MME_TU104_IMM = 25, VGT_MME_TU104_IMMPAIR = 26,
    VGT_MME_TU104_IMM32 = 27, VGT_MME_TU104_LOAD0 = 28, VGT_MME_TU104_LOAD1 = 29,
};
/* TU104 ALU ops (tu104/op.h). */
enum {
    VGT_MME_TU104_ADD, VGT_MME_TU104_ADDC, VGT_MME_TU104_SUB, VGT_MME_TU104_SUBB,
    VGT_MME_TU104_MUL, VGT_MME_TU104_MULH, VGT_MME_TU104_MULU, VGT_MME_TU104_EXTENDED,
    VGT_MME_TU104_CLZ, VGT_MME_TU104_SLL, VGT_MME_TU104_SRL, VGT_MME_TU104_SRA,
    VGT_MME_TU104_AND, VGT_MME_TU104_NAND, VGT_MME_TU104_OR, VGT_MME_TU104_XOR,
    VGT_MME_TU104_MERGE, VGT_MME_TU104_SLT, VGT_MME_TU104_SLTU, VGT_MME_TU104_SLE,
    VGT_MME_TU104_SLEU, VGT_MME_TU104_SEQ, VGT_MME_TU104_STATE, VGT_MME_TU104_LOOP,
    VGT_MME_TU104_JAL, VGT_MME_TU104_BLT, VGT_MME_TU104_BLTU, VGT_MME_TU104_BLE,
    VGT_MME_TU104_BLEU, VGT_MME_TU104_BEQ, VGT_MME_TU104_DREAD, VGT_MME_TU104_DWRITE,
};
/* TU104 output sources (tu104/out.h); 7 is RESERVED, 11..15 undefined. */
enum {
    VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0, VGT_MME_OUT_ALU1, VGT_MME_OUT_LOAD0, VGT_MME_OUT_LOAD1,
    VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1, VGT_MME_OUT_RESERVED, VGT_MME_OUT_IMMHIGH0,
    VGT_MME_OUT_IMMHIGH1, VGT_MME_OUT_IMM32,
};

typedef struct vgt_mme_tu104_alu {
    uint8_t op, dst, src[2];
    uint16_t imm;
} vgt_mme_tu104_alu;

typedef struct vgt_mme_tu104_inst {
    bool end_next;
    uint8_t pred_mode;   /* 0..15, see vgt_mme_tu104_pred_name() */
    uint8_t pred;        /* register tested */
    vgt_mme_tu104_alu alu[2];
    struct { uint8_t mthd, emit; } out[2];
} vgt_mme_tu104_inst;

/* Fermi ops (op field 3:0; Mesa mme_fermi.h, envytools macro.c) and assign ops (6:4). */
enum {
    VGT_MME_FERMI_ALU_REG, VGT_MME_FERMI_ADD_IMM, VGT_MME_FERMI_MERGE, VGT_MME_FERMI_BFE_LSL_IMM,
    VGT_MME_FERMI_BFE_LSL_REG, VGT_MME_FERMI_STATE, VGT_MME_FERMI_UNK6, VGT_MME_FERMI_BRANCH,
};
enum {
    VGT_MME_FERMI_LOAD, VGT_MME_FERMI_MOVE, VGT_MME_FERMI_MOVE_SET_MADDR, VGT_MME_FERMI_LOAD_EMIT,
    VGT_MME_FERMI_MOVE_EMIT, VGT_MME_FERMI_LOAD_SET_MADDR, VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT,
    VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT_HIGH,
};

typedef struct vgt_mme_fermi_inst {
    uint8_t op, assign, alu_op;   /* alu_op for ALU_REG only */
    bool end_next;                /* "exit": one more (delay-slot) instruction runs */
    bool not_zero, no_delay;      /* BRANCH only */
    uint8_t dst, src[2];          /* registers 0..7, 0 reads as zero */
    int32_t imm;                  /* 18-bit signed immediate (ADD_IMM, STATE, BRANCH) */
    uint8_t src_bit, size, dst_bit; /* bitfield ops */
} vgt_mme_fermi_inst;

/* Decode one instruction. code points at the instruction's first dword as uploaded (TU104: the
 * high word first). Never fails: every bit pattern decodes; legality is checked by
 * vgt_mme_*_check() and by the simulator. */
void vgt_mme_tu104_decode(const uint32_t code[3], vgt_mme_tu104_inst *out);
void vgt_mme_fermi_decode(uint32_t word, vgt_mme_fermi_inst *out);
/* Static legality: VGT_MME_OK or VGT_MME_ILLEGAL_OPCODE; *why (may be NULL) names the cause. */
vgt_mme_error vgt_mme_tu104_check(const vgt_mme_tu104_inst *in, const char **why);
vgt_mme_error vgt_mme_fermi_check(const vgt_mme_fermi_inst *in, const char **why);

/* Name tables; out-of-range values give "?" style names, never NULL. */
const char *vgt_mme_tu104_op_name(unsigned op);
const char *vgt_mme_tu104_reg_name(unsigned reg);
const char *vgt_mme_tu104_pred_name(unsigned mode);   /* four letters for ALU0, ALU1, OUT0, OUT1 */
const char *vgt_mme_tu104_out_name(unsigned src);
const char *vgt_mme_fermi_op_name(unsigned op);
const char *vgt_mme_fermi_alu_name(unsigned alu_op);
const char *vgt_mme_fermi_assign_name(unsigned assign);

/* ---- disassembler ------------------------------------------------------------------------------ */
/* One line per instruction. Syntax (both formats):
 *
 *   TU104:  IIII: [@MODE Rp ;] ALU0 ; ALU1 ; OUT0 ; OUT1 [; end_next]
 *     IIII     instruction index from the start address, hex; the group's dwords follow as
 *              "[hhhhhhhh mmmmmmmm llllllll]" only with VGT_MME_DISASM_RAW.
 *     @MODE Rp predicate: four letters for ALU0, ALU1, OUT0, OUT1; U always runs, T runs when
 *              Rp == 0, F when Rp != 0 (Mesa mme_tu104_sim.c; see facts "Pitfalls"). Absent = UUUU.
 *     ALUn     "OP DST, SRC0, SRC1"; sources print as register names, IMM as #imm (signed 16-bit),
 *              IMMPAIR as #imm(pair), IMM32 as #0xhhhhhhhh. Special forms:
 *                MERGE D, X, Y <dst_pos,width,src_pos>   STATE D, X+Y (method 0xmmmm when constant)
 *                BEQ X, Y ?T -> IIII | ?T -> exit          ("?T": taken when the test is true, "?F": false)
 *                JAL D -> IIII      LOOP X x[IIII..IIII]    DREAD D, [X]    DWRITE [X], Y
 *              "-" for ADD ZERO, ZERO, ZERO (no effect).
 *     OUTn     "mthd(SRC) emit(SRC)", either part omitted when NONE, "-" when both are; a constant
 *              mthd source shows the method it selects: mthd(IMM0=0x3400+1) = method 0x3400, increment 1.
 *   Fermi:  IIII: OPERATION ; ASSIGNMENT [; exit]
 *     OPERATION  "ADD R2, R3" | "ADD_IMM R2, #-4" | "MERGE R1, R2 <dst_pos,width,src_pos>" |
 *                "BFE_LSL_IMM R1, R2 <width,dst_pos>" | "BFE_LSL_REG R1, R2 <src_pos,width>" |
 *                "STATE R1+#16" | "BZ R1 -> IIII" | "BNZ.ND R1 -> IIII" (.ND: no delay slot)
 *     ASSIGNMENT assign op name and destination, e.g. "MOVE_EMIT -> R3"; absent for branches.
 *   An instruction the simulator would refuse ends with " ; ILLEGAL(<why>)" (vgt_mme_*_check()).
 */
#define VGT_MME_DISASM_RAW 1u

/* Format the instruction at dword index `at` of code[0..ndwords) into buf (always terminated);
 * `start` is the macro's start dword, used for index numbering and branch targets. Returns the
 * number of characters written, 0 when the instruction does not fit inside ndwords. */
size_t vgt_mme_disasm_line(vgt_mme_format fmt, const uint32_t *code, uint32_t ndwords, uint32_t start,
                           uint32_t at, unsigned flags, char *buf, size_t cap);
/* Print up to max_insts instructions from `start` (0 = until the end of code). */
vgt_status vgt_mme_disasm(vgt_mme_format fmt, const uint32_t *code, uint32_t ndwords, uint32_t start,
                          uint32_t max_insts, unsigned flags, FILE *out, vgt_error *err);

/* ---- simulator --------------------------------------------------------------------------------- */
/* One decoded instruction as the simulator keeps it: decoding and the legality check cost more than
 * executing most instructions, and macros loop. Keyed by the instruction's own dwords (not its
 * address), so an entry never goes stale when the instruction RAM is reloaded: the same dwords always
 * decode to the same instruction. */
typedef struct vgt_mme_decoded {
    uint32_t words[3];      /* the key: a TU104 group's dwords as uploaded; Fermi: words[0], the rest 0 */
    uint8_t fmt_plus1;      /* 0: empty slot; else the vgt_mme_format + 1 */
    uint8_t loads;          /* TU104: parameters the group pops (0, 1 or 2) */
    const char *why;        /* NULL: legal; else the check's reason (VGT_MME_ILLEGAL_OPCODE) */
    union {
        vgt_mme_tu104_inst tu104;
        vgt_mme_fermi_inst fermi;
    } in;
} vgt_mme_decoded;
#define VGT_MME_DECODE_CACHE 256u   /* slots, direct-mapped by a hash of the dwords */

/* The MME unit's persistent state: the data RAM and the DMA registers, which outlive a macro call
 * and are written both by the push buffer and by the macros' own emissions; and the simulator's
 * decoded-instruction cache, which changes no result. Zero-initialise. */
typedef struct vgt_mme_machine {
    uint32_t data_ram[VGT_MME_DATA_RAM_WORDS];
    uint32_t mem_addr_hi, mem_addr_lo;   /* SET_MME_MEM_ADDRESS_A (upper, 24:0) / _B */
    uint32_t data_ram_addr;              /* SET_MME_DATA_RAM_ADDRESS */
    uint32_t fifo_config;                /* SET_MME_DATA_FIFO_CONFIG FIFO_SIZE 2:0 */
    bool fifo_config_set;                /* false: every FIFO size is accepted (16 KB) */
    vgt_mme_decoded decoded[VGT_MME_DECODE_CACHE];
} vgt_mme_machine;

/* Reads len bytes of GPU memory at va (little-endian words). A failure becomes the macro's
 * VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS; the callback's message is quoted. */
typedef vgt_status (*vgt_mme_read_mem_fn)(void *user, uint64_t va, void *dst, size_t len, vgt_error *err);
/* The shadow-state value of a method (byte address), as STATE reads it. */
typedef uint32_t (*vgt_mme_state_fn)(void *user, uint32_t method);
/* One emitted (method byte address, value). A non-OK return stops the run with that status. */
typedef vgt_status (*vgt_mme_emit_fn)(void *user, uint32_t method, uint32_t value);

typedef struct vgt_mme_sim_io {
    vgt_mme_emit_fn emit;          /* may be NULL: emissions are dropped */
    vgt_mme_state_fn state;        /* may be NULL: STATE reads 0 */
    vgt_mme_read_mem_fn read_mem;  /* may be NULL: every DMA read fails */
    void *user;
} vgt_mme_sim_io;

typedef struct vgt_mme_sim_config {
    uint64_t max_instructions;   /* 0: VGT_MME_DEFAULT_MAX_INSTRUCTIONS */
    uint32_t iram_dwords;        /* 0: the format's RAM size; fetches at or beyond are out of bounds */
} vgt_mme_sim_config;

typedef struct vgt_mme_result {
    vgt_mme_error error;
    uint32_t pc;              /* instruction index from the start where it stopped or faulted */
    uint32_t pc_dword;        /* that instruction's dword address in the instruction RAM */
    uint64_t instructions;    /* instructions executed (predicated-off ones count) */
    uint32_t params_consumed; /* call parameters loaded (the first is the CALL_MME_MACRO word) */
    uint32_t params_total;
    uint32_t fifo_words_read;     /* words queued by MME_DMA_READ_FIFOED */
    uint32_t fifo_words_consumed; /* of those, words the macro loaded */
    uint32_t emits;
} vgt_mme_result;

/* Run the macro starting at dword `start` of iram[0..iram_dwords) with the call's parameters (a start
 * address RAM entry counts instructions: convert it with vgt_mme_pointer_dword()).
 * machine may be NULL (a zeroed one is used and discarded); cfg may be NULL (defaults). Never reads
 * outside iram or params, never runs more than max_instructions. Returns VGT_OK on a clean exit,
 * VGT_E_DECODE with result->error set for a hardware error class, or another status when the run
 * itself failed (VGT_E_ARG, VGT_E_NOMEM, a callback's status). result is always filled. */
vgt_status vgt_mme_sim_run(const vgt_mme_sim_config *cfg, vgt_mme_format fmt, const uint32_t *iram,
                           uint32_t iram_dwords, uint32_t start, const uint32_t *params, uint32_t nparams,
                           const vgt_mme_sim_io *io, vgt_mme_machine *machine, vgt_mme_result *result,
                           vgt_error *err);

/* Apply a push-buffer write of an MME DMA method (0x0550..0x0574) to the machine: MME_DMA_READ
 * copies memory into the data RAM, MME_DMA_SYNC stores its value, READ_FIFOED from the push buffer
 * is VGT_MME_DMA_READ_FIFOED_FROM_PB. Returns the hardware error class (VGT_MME_OK if none); other
 * methods are ignored. why (may be NULL) receives a message for an error. */
vgt_mme_error vgt_mme_machine_write(vgt_mme_machine *m, uint32_t method, uint32_t value,
                                    const vgt_mme_sim_io *io, vgt_error *why);

/* ---- budgets: how much MME work a submission and a trace may cost ------------------------------------
 * A trace is untrusted input: a one-instruction infinite loop called thousands of times, or millions of
 * calls in one CHANNEL_METHODS record, must not keep a verb busy for minutes. Every call charges the
 * instructions it ran, at least VGT_MME_CALL_COST (a call of an empty macro still costs its bookkeeping),
 * to the submission's and the trace's budget; a call that ended in an error class also charges the
 * trace's budget for failing calls (runaway loops end there: 8 calls at the per-call limit). A call that
 * would start with a budget spent is not run and not reported: it is counted in `refused`, and
 * vgt_mme_budget_note() says which budget ran out and where. The per-call limit stays
 * vgt_mme_sim_config.max_instructions; a call also stops where its budgets end.
 * Real traces are far inside these: the corpus runs about 5 instructions a call, 7,000 calls and 38,000
 * instructions per trace, at most 21,000 per submission. */
#define VGT_MME_CALL_COST 16u
#define VGT_MME_DEFAULT_BUDGET_SUBMISSION (1ull << 24)   /* 16 M: 16 calls at the per-call limit */
#define VGT_MME_DEFAULT_BUDGET_TRACE (1ull << 28)        /* 256 M: about 13 s of simulation */
#define VGT_MME_DEFAULT_BUDGET_FAILED (1ull << 23)       /* 8 M: 8 runaway calls */

typedef enum vgt_mme_budget_kind {
    VGT_MME_BUDGET_OK = 0, VGT_MME_BUDGET_SUBMISSION, VGT_MME_BUDGET_TRACE, VGT_MME_BUDGET_FAILED,
} vgt_mme_budget_kind;

typedef struct vgt_mme_budget {
    uint64_t per_submission, per_trace, per_failed;   /* limits; set by vgt_mme_budget_init */
    uint64_t submission_used, trace_used, failed_used;
    uint64_t submissions;          /* vgt_mme_budget_next_submission() calls: the current submission's index (a
                                    * caller that knows the trace's own index may set it after the call) */
    uint64_t refused;              /* calls not run */
    vgt_mme_budget_kind first;     /* the budget that refused the first call (OK: none yet) */
    uint64_t first_submission;     /* ... in which submission (index as counted here) */
} vgt_mme_budget;

/* Limits of 0 take the defaults above; UINT64_MAX is unlimited. */
void vgt_mme_budget_init(vgt_mme_budget *b, uint64_t per_submission, uint64_t per_trace, uint64_t per_failed);
/* A new submission starts: its budget is whole again (the trace's is not). */
void vgt_mme_budget_next_submission(vgt_mme_budget *b);
/* Instructions the next call may run (0: refuse it; the refusal is counted). */
uint64_t vgt_mme_budget_allow(vgt_mme_budget *b);
/* Charge a call that ran `instructions` (failed: it ended in an error class). */
void vgt_mme_budget_charge(vgt_mme_budget *b, uint64_t instructions, int failed);
/* "MME budget of N instructions per submission spent in submission S: K macro calls not run" into buf;
 * returns 0 (buf empty) when no call was refused. */
int vgt_mme_budget_note(const vgt_mme_budget *b, char *buf, size_t size);

/* ---- emission list: collect the emitted methods, then dispatch them as the caller likes ---------- */
typedef struct vgt_mme_emit {
    uint32_t method;   /* byte address in the calling class */
    uint32_t value;
} vgt_mme_emit;

typedef struct vgt_mme_emit_list {
    vgt_mme_emit *v;
    uint32_t n, cap;
    uint32_t max;      /* 0: VGT_MME_DEFAULT_MAX_EMITS; more fails with VGT_E_LIMIT */
} vgt_mme_emit_list;

/* A vgt_mme_emit_fn: user is a vgt_mme_emit_list*. */
vgt_status vgt_mme_emit_list_push(void *list, uint32_t method, uint32_t value);
void vgt_mme_emit_list_clear(vgt_mme_emit_list *l);   /* n = 0, keeps the memory */
void vgt_mme_emit_list_free(vgt_mme_emit_list *l);
/* Call fn for each entry in order; stops at the first non-OK status and returns it. */
vgt_status vgt_mme_emit_list_dispatch(const vgt_mme_emit_list *l, vgt_mme_emit_fn fn, void *user);

/* ---- macro bodies and their content hash ---------------------------------------------------------- */
/* The body of the macro starting at dword `start`: instructions in address order from the start up
 * to and including the instruction after the first end_next/exit instruction that no branch, JAL or
 * LOOP seen before it targets beyond; cut at iram_dwords. (A static extent: code reached only by a
 * computed path past that point is not part of it.) *ndwords receives the length in dwords, 0 when
 * start is outside the RAM. The hash is XXH64 (seed 0) of those dwords as little-endian bytes. */
uint32_t vgt_mme_body_dwords(vgt_mme_format fmt, const uint32_t *iram, uint32_t iram_dwords, uint32_t start);
uint64_t vgt_mme_body_hash(vgt_mme_format fmt, const uint32_t *iram, uint32_t iram_dwords, uint32_t start,
                           uint32_t *ndwords);

/* ---- macro-upload tracker ----------------------------------------------------------------------- */
/* One tracker follows the MME of one channel: fed every method write of the channel's 3D and compute
 * objects in stream order, tagged with the object's class, it keeps
 *   - ONE instruction RAM, shared by every class of the channel: HOPPER_A uploads code and
 *     HOPPER_COMPUTE_A calls it (corpus vk_compute: compute writes 215 start addresses in 31 code
 *     uploads of its own and calls macros whose code only HOPPER_A uploaded) [inferred from NVIDIA
 *     driver traces];
 *   - per class: the start-address RAM (both classes write their own entries), the shadow state
 *     (methods are per class), the DMA machine [per class: unconfirmed];
 * collects each macro call's parameters and, when the call is complete, runs the macro and reports it.
 *
 * Units. LOAD_MME_INSTRUCTION_RAM_POINTER and the LOAD_MME_START_ADDRESS_RAM entries count
 * INSTRUCTIONS of the format: for TU104 96-bit groups (3 dwords), for Fermi dwords. TU104 in groups
 * is [inferred from NVIDIA driver traces]: gl_egl.vgt submission 2 uploads 15 dwords at pointer 0,
 * then binds and uploads the next macro at 5; with groups every macro call of the corpus runs cleanly.
 * NVK (Mesa src/nouveau/vulkan/nvk_queue.c, the macro upload loop) writes the same running dword count
 * `mme_pos` to both the pointer and the start address, so its macros run whatever the unit is (in
 * groups they are merely spread out); Mesa's hardware test (src/nouveau/mme/tests/
 * mme_tu104_sim_hw_test.cpp, push_macro) uploads at 0 and binds 0. Neither confirms nor contradicts
 * the group unit.
 *
 * Calls. A call completes when the next method of the channel (any class) that is not its
 * CALL_MME_DATA arrives, or at flush(): the GPU runs a macro once its data stops.
 *
 *   idle --CALL_MME_MACRO(j) of class c--> collecting(c, j) --CALL_MME_DATA(j) of c--> collecting(c, j)
 *   collecting --any other method / flush()--> run_call(): simulate, report --> idle
 *   (the method that ended the call is then handled as in idle)
 *
 * The shadow state (what STATE reads) takes every non-MME method of its class and every method a macro
 * of that class emits; SET_MME_SHADOW_RAM_CONTROL METHOD_PASSTHROUGH and METHOD_REPLAY stop it from
 * changing, except SET_MME_SHADOW_SCRATCH(i) [mode semantics unconfirmed]. Hardware error classes of a
 * call are reported to on_call (call->status, call->result->error); they do not fail the feed.
 */
#define VGT_MME_TRACKER_MAX_CLASSES 8u   /* distinct MME classes fed to one channel's tracker */

typedef struct vgt_mme_tracker vgt_mme_tracker;

typedef struct vgt_mme_call {
    uint64_t seq;                 /* 0, 1, 2 ... per tracker */
    uint32_t cls;                 /* the class whose CALL_MME_MACRO(j) it was */
    uint32_t macro;               /* j of CALL_MME_MACRO(j) */
    uint32_t start;               /* the class's start address RAM entry in effect (instructions) */
    uint32_t start_dword;         /* the same in instruction-RAM dwords */
    const uint32_t *params;
    uint32_t nparams;
    bool params_truncated;        /* more than max_call_params arrived; the rest were dropped */
    uint64_t body_hash;           /* vgt_mme_body_hash() of the body at call time */
    uint32_t body_dwords;
    vgt_status status;            /* of vgt_mme_sim_run() */
    const vgt_error *err;         /* its message when status != VGT_OK */
    const vgt_mme_result *result;
    const vgt_mme_emit *emits;    /* what the macro emitted, in order */
    uint32_t nemits;
} vgt_mme_call;

/* Called once per completed call; the pointers in *call are valid only during the call. A non-OK
 * return stops the feed/flush that triggered it with that status. */
typedef vgt_status (*vgt_mme_call_fn)(void *user, const vgt_mme_call *call, vgt_error *err);

typedef struct vgt_mme_tracker_config {
    uint32_t cls;                   /* a class of the channel: picks the format; vgt_mme_tracker_feed()'s class */
    vgt_mme_sim_config sim;
    uint32_t max_call_params;       /* 0: VGT_MME_DEFAULT_MAX_CALL_PARAMS */
    uint32_t max_emits;             /* 0: VGT_MME_DEFAULT_MAX_EMITS */
    vgt_mme_read_mem_fn read_mem;   /* for DMA; may be NULL */
    vgt_mme_call_fn on_call;        /* may be NULL */
    void *user;                     /* passed to read_mem and on_call */
    vgt_mme_budget *budget;         /* may be NULL (only the per-call limit); shared by a trace's trackers */
} vgt_mme_tracker_config;

typedef struct vgt_mme_tracker_stats {
    uint64_t methods;               /* writes fed */
    uint64_t calls;                 /* calls completed */
    uint64_t refused;               /* calls not run: a budget was spent (vgt_mme_budget) */
    uint64_t call_errors;           /* calls that did not end cleanly (an error class, or VGT_E_LIMIT) */
    uint64_t iram_words;            /* LOAD_MME_INSTRUCTION_RAM words stored */
    uint64_t iram_out_of_bounds;    /* ... dropped: pointer at or beyond the RAM */
    uint64_t start_out_of_bounds;   /* LOAD_MME_START_ADDRESS_RAM with pointer >= 256 */
    uint64_t orphan_data;           /* CALL_MME_DATA with no call of that macro collecting */
    uint64_t dma_errors;            /* push-buffer DMA methods that raised an error class */
    vgt_mme_error last_dma_error;
    uint32_t classes;               /* classes fed so far */
} vgt_mme_tracker_stats;

vgt_status vgt_mme_tracker_create(const vgt_mme_tracker_config *cfg, vgt_mme_tracker **out, vgt_error *err);
void vgt_mme_tracker_destroy(vgt_mme_tracker *t);
/* One method write (byte address, data) of the channel's object of class cls, in stream order.
 * VGT_E_UNSUPPORTED when cls has no MME or another format than the tracker's; VGT_E_LIMIT when it
 * would be the (VGT_MME_TRACKER_MAX_CLASSES + 1)th class. */
vgt_status vgt_mme_tracker_feed_class(vgt_mme_tracker *t, uint32_t cls, uint32_t method, uint32_t value,
                                      vgt_error *err);
/* A non-increasing run: count writes of method (data: count little-endian dwords), the same as feeding
 * them one by one; a method that only sets its shadow word costs one write for the whole run. */
vgt_status vgt_mme_tracker_feed_run(vgt_mme_tracker *t, uint32_t cls, uint32_t method, const uint8_t *data,
                                    uint32_t count, vgt_error *err);
/* The same for class cfg.cls (a channel with one MME class). */
vgt_status vgt_mme_tracker_feed(vgt_mme_tracker *t, uint32_t method, uint32_t value, vgt_error *err);
/* The stream ended (or a point where a pending call must be complete): run a pending call. */
vgt_status vgt_mme_tracker_flush(vgt_mme_tracker *t, vgt_error *err);
const vgt_mme_tracker_stats *vgt_mme_tracker_stats_get(const vgt_mme_tracker *t);
vgt_mme_format vgt_mme_tracker_format(const vgt_mme_tracker *t);
/* The shadow value of a method of class cls as STATE would read it now (0 for a class never fed). */
uint32_t vgt_mme_tracker_shadow(const vgt_mme_tracker *t, uint32_t cls, uint32_t method);
/* The start address class cls bound to macro j (as written, in instructions, and in dwords) and its
 * body hash, as a call now would see them; any output may be NULL. VGT_E_NOT_FOUND when j >= 256,
 * cls was never fed or nothing was ever bound to j by cls. */
vgt_status vgt_mme_tracker_macro(const vgt_mme_tracker *t, uint32_t cls, uint32_t j, uint32_t *start,
                                 uint32_t *start_dword, uint64_t *hash, uint32_t *ndwords, vgt_error *err);
/* The shared instruction RAM (VGT_MME_IRAM_MAX_DWORDS dwords) and how far uploads reached (dwords). */
const uint32_t *vgt_mme_tracker_iram(const vgt_mme_tracker *t, uint32_t *used_dwords);

#ifdef __cplusplus
}
#endif
#endif
