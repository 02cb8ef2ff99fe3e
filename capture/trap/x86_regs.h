/* x86_regs.h: capstone register id -> location in a ucontext (see x86_regs.c). */
#ifndef VGT_CAPTURE_X86_REGS_H
#define VGT_CAPTURE_X86_REGS_H
#include "vgt/capture_trap.h"
/* 0 and *out filled, or -1 for a register the engine does not handle (segment, x87, YMM...). */
int x86_reg_lookup(unsigned capstone_reg, vgt_trap_reg *out);
#endif
