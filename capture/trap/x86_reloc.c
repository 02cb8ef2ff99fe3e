/* x86_reloc.c: moving the instructions a 5-byte jump displaces, and the check that nothing jumps into
 * the middle of the displaced range (capture_patch.h).
 *
 * An instruction moves unchanged unless it addresses memory relative to RIP: its 32-bit displacement is
 * rewritten so that it names the same address from its new place (refused when that is out of reach).
 * Control transfers (jumps, calls, returns, interrupts, loops) are refused rather than moved: their
 * targets or return addresses would change meaning. */
#include <string.h>

#include "x86_patch.h"

static int is_control(const cs_insn *ci)
{
    const cs_detail *d = ci->detail;
    for (uint8_t g = 0; g < d->groups_count; g++) {
        switch (d->groups[g]) {
        case X86_GRP_JUMP: case X86_GRP_CALL: case X86_GRP_RET: case X86_GRP_INT: case X86_GRP_IRET:
        case X86_GRP_BRANCH_RELATIVE:
            return 1;
        default:
            break;
        }
    }
    return 0;
}

static int rip_relative(const cs_insn *ci)
{
    const cs_x86 *x = &ci->detail->x86;
    for (uint8_t i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP) return 1;
    return 0;
}

vgt_status patch_relocate(csh cs, cs_insn *ci, uint64_t site, const uint8_t *code, uint32_t code_len,
                          uint32_t store_len, uint8_t *out, uint64_t out_addr, uint32_t *displaced,
                          uint32_t *out_len, vgt_error *err)
{
    uint32_t off = store_len, n = 0;
    while (off < PATCH_JMP_LEN) {
        const uint8_t *p = code + off;
        size_t left = code_len - off;
        uint64_t addr = site + off;
        if (!cs_disasm_iter(cs, &p, &left, &addr, ci))
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: cannot decode the instruction at 0x%llx, "
                            "%u bytes after the store", (unsigned long long)(site + off), off);
        if (is_control(ci))
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: '%s %s' %u bytes after the store is a "
                            "control transfer", ci->mnemonic, ci->op_str, off);
        uint32_t len = ci->size;
        memcpy(out + n, code + off, len);
        if (rip_relative(ci)) {
            const cs_x86 *x = &ci->detail->x86;
            if (x->encoding.disp_size != 4 || x->encoding.disp_offset == 0 || x->encoding.disp_offset + 4u > len)
                return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: RIP-relative '%s %s' has no 32-bit "
                                "displacement", ci->mnemonic, ci->op_str);
            int32_t disp;
            memcpy(&disp, code + off + x->encoding.disp_offset, 4);
            uint64_t target = site + off + len + (int64_t)disp;
            int64_t moved = (int64_t)(target - (out_addr + n + len));
            if (moved < INT32_MIN || moved > INT32_MAX)
                return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: the operand of '%s %s' is out of reach "
                                "of the trampoline", ci->mnemonic, ci->op_str);
            int32_t d32 = (int32_t)moved;
            memcpy(out + n + x->encoding.disp_offset, &d32, 4);
        }
        n += len;
        off += len;
        if (off > PATCH_MAX_DISPLACED) break;
    }
    *displaced = off;
    *out_len = n;
    return VGT_OK;
}

vgt_status patch_check_targets(csh cs, cs_insn *ci, uint64_t win_addr, const uint8_t *win, uint32_t win_len,
                               uint64_t site, uint32_t len, vgt_error *err)
{
    uint32_t off = 0;
    while (off < win_len) {
        const uint8_t *p = win + off;
        size_t left = win_len - off;
        uint64_t addr = win_addr + off;
        if (!cs_disasm_iter(cs, &p, &left, &addr, ci)) {   /* data or padding: step one byte, resynchronise */
            off++;
            continue;
        }
        const cs_x86 *x = &ci->detail->x86;
        for (uint8_t g = 0; g < ci->detail->groups_count; g++) {
            if (ci->detail->groups[g] != X86_GRP_BRANCH_RELATIVE) continue;
            for (uint8_t i = 0; i < x->op_count; i++) {
                if (x->operands[i].type != X86_OP_IMM) continue;
                uint64_t t = (uint64_t)x->operands[i].imm;
                if (t > site && t < site + len)
                    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: '%s %s' at 0x%llx jumps into "
                                    "the displaced range 0x%llx+%u", ci->mnemonic, ci->op_str,
                                    (unsigned long long)(win_addr + off), (unsigned long long)site, len);
            }
        }
        off += ci->size;
    }
    return VGT_OK;
}
