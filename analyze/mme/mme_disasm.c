/* mme_disasm.c: the disassembler front end: picks the format's line printer, prints ranges. */
#include "mme_internal.h"
#include "mme_text.h"

#include <errno.h>
#include <string.h>

size_t vgt_mme_disasm_line(vgt_mme_format fmt, const uint32_t *code, uint32_t ndwords, uint32_t start,
                           uint32_t at, unsigned flags, char *buf, size_t cap)
{
    mme_text t = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    uint32_t step = vgt_mme_inst_dwords(fmt);
    if (!code || step == 0 || at < start || at >= ndwords || ndwords - at < step) return 0;
    uint32_t index = (at - start) / step;
    if (fmt == VGT_MME_TU104) return mme_tu104_line(code + at, index, flags, &t);
    return mme_fermi_line(code[at], index, flags, &t);
}

vgt_status vgt_mme_disasm(vgt_mme_format fmt, const uint32_t *code, uint32_t ndwords, uint32_t start,
                          uint32_t max_insts, unsigned flags, FILE *out, vgt_error *err)
{
    uint32_t step = vgt_mme_inst_dwords(fmt);
    if (step == 0)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME format %d is neither TU104 nor Fermi", (int)fmt);
    if (!out || (!code && ndwords))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME disassembly needs code and a FILE");
    char line[512];
    uint32_t n = 0;
    for (uint64_t at = start; at + step <= ndwords && (max_insts == 0 || n < max_insts); at += step, n++) {
        vgt_mme_disasm_line(fmt, code, ndwords, start, (uint32_t)at, flags, line, sizeof line);
        if (fprintf(out, "%s\n", line) < 0)
            return VGT_FAIL(err, VGT_E_IO, at, "writing MME disassembly of dword %llu: %s", (unsigned long long)at,
                            strerror(errno));
    }
    return VGT_OK;
}
