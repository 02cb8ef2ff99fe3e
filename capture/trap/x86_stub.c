/* x86_stub.c: the machine code of a store site's trampoline (capture_patch.h has the picture).
 *
 * The entry keeps the interrupted code's world intact: it steps over the red zone (a leaf function may
 * keep data below RSP), saves RFLAGS and all 15 general registers (the frame), the whole extended state
 * with xsave (a C function may use any vector register; fxsave where xsave is missing), aligns the
 * stack for the call, clears DF as the ABI wants, calls dispatch(frame, arg) and undoes it all in
 * reverse. */
#include <string.h>

#include "x86_patch.h"

static uint8_t *put(uint8_t *p, const void *bytes, uint32_t n)
{
    memcpy(p, bytes, n);
    return p + n;
}
static uint8_t *put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); return p + 4; }
static uint8_t *put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); return p + 8; }

uint32_t patch_emit_entry(uint8_t *p0, uint64_t arg, uint64_t dispatch, uint32_t xsave_size, int compact)
{
    static const uint8_t enter[] = {
        0x48, 0x8d, 0x64, 0x24, 0x80,                         /* lea rsp,[rsp-128]: over the red zone */
        0x9c,                                                 /* pushfq */
        0x50, 0x51, 0x52, 0x53, 0x55, 0x56, 0x57,             /* push rax rcx rdx rbx rbp rsi rdi */
        0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53,       /* push r8 .. r11 */
        0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57,       /* push r12 .. r15 */
        0x48, 0x89, 0xe3,                                     /* mov rbx,rsp (the frame) */
        0x48, 0x83, 0xe4, 0xc0,                               /* and rsp,-64 */
        0xfc,                                                 /* cld */
    };
    static const uint8_t leave[] = {
        0x48, 0x89, 0xdc,                                     /* mov rsp,rbx */
        0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c,       /* pop r15 .. r12 */
        0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58,       /* pop r11 .. r8 */
        0x5f, 0x5e, 0x5d, 0x5b, 0x5a, 0x59, 0x58,             /* pop rdi rsi rbp rbx rdx rcx rax */
        0x9d,                                                 /* popfq */
        0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00,       /* lea rsp,[rsp+128] */
    };
    static const uint8_t all_ones[] = { 0xb8, 0xff, 0xff, 0xff, 0xff, 0xba, 0xff, 0xff, 0xff, 0xff }; /* eax=edx=-1 */
    uint32_t area = xsave_size ? (xsave_size + 63u) & ~63u : 512u;
    uint8_t *p = put(p0, enter, sizeof enter);
    p = put(p, (const uint8_t[]){ 0x48, 0x81, 0xec }, 3);     /* sub rsp, area */
    p = put32(p, area);
    if (xsave_size) {
        /* xrstor faults on a header with stray bits: zero its 64 bytes (at +512) before xsave. */
        p = put(p, (const uint8_t[]){ 0x31, 0xc0 }, 2);       /* xor eax,eax */
        for (uint32_t k = 0; k < 8; k++) {
            p = put(p, (const uint8_t[]){ 0x48, 0x89, 0x84, 0x24 }, 4);   /* mov [rsp+disp32],rax */
            p = put32(p, 512 + 8 * k);
        }
        p = put(p, all_ones, sizeof all_ones);
        if (compact) p = put(p, (const uint8_t[]){ 0x48, 0x0f, 0xc7, 0x24, 0x24 }, 5);  /* xsavec64 [rsp] */
        else p = put(p, (const uint8_t[]){ 0x48, 0x0f, 0xae, 0x24, 0x24 }, 5);          /* xsave64 [rsp] */
    } else {
        p = put(p, (const uint8_t[]){ 0x48, 0x0f, 0xae, 0x04, 0x24 }, 5);  /* fxsave64 [rsp] */
    }
    p = put(p, (const uint8_t[]){ 0x48, 0x89, 0xdf }, 3);     /* mov rdi,rbx */
    p = put(p, (const uint8_t[]){ 0x48, 0xbe }, 2);           /* movabs rsi, arg */
    p = put64(p, arg);
    p = put(p, (const uint8_t[]){ 0x48, 0xb8 }, 2);           /* movabs rax, dispatch */
    p = put64(p, dispatch);
    p = put(p, (const uint8_t[]){ 0xff, 0xd0 }, 2);           /* call rax */
    if (xsave_size) {
        p = put(p, all_ones, sizeof all_ones);
        p = put(p, (const uint8_t[]){ 0x48, 0x0f, 0xae, 0x2c, 0x24 }, 5);  /* xrstor64 [rsp] */
    } else {
        p = put(p, (const uint8_t[]){ 0x48, 0x0f, 0xae, 0x0c, 0x24 }, 5);  /* fxrstor64 [rsp] */
    }
    p = put(p, leave, sizeof leave);
    return (uint32_t)(p - p0);
}

uint32_t patch_emit_jmp(uint8_t *p, uint64_t from, uint64_t to)
{
    int64_t rel = (int64_t)(to - (from + 5));
    if (rel >= INT32_MIN && rel <= INT32_MAX) {
        p[0] = 0xe9;
        put32(p + 1, (uint32_t)(int32_t)rel);
        return 5;
    }
    p = put(p, (const uint8_t[]){ 0xff, 0x25, 0, 0, 0, 0 }, 6);   /* jmp [rip+0] */
    put64(p, to);
    return 14;
}
