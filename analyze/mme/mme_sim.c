/* mme_sim.c: the part of the simulator both formats share: the run entry point, the parameter
 * FIFO, method emission and the fetch guard. The per-format cores are mme_tu104_sim.c and
 * mme_fermi_sim.c; the DMA side of the MME unit is mme_dma.c.
 *
 * Parameter FIFO (facts section 1): the first load returns the CALL_MME_MACRO word, later loads the
 * CALL_MME_DATA words. Words queued by MME_DMA_READ_FIFOED are served before the remaining call
 * parameters: Mesa's hardware-checked test dma_read_fifoed (src/nouveau/mme/tests/
 * mme_tu104_sim_hw_test.cpp) loads the DMA words although the call word was never loaded, and the
 * ESR_INFO_EX LOADSOURCE field (MTHD / DMA, pri_mme.ref.txt) shows two load sources [ordering
 * beyond that test unconfirmed].
 */
#include "mme_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vgt_status mme_run_fail(mme_run *r, vgt_mme_error e, const char *fmt, ...)
{
    char why[VGT_ERROR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    r->res->error = e;
    /* the offset is the instruction's dword in the instruction RAM; the text names it */
    return vgt_fail(r->err, VGT_E_DECODE, r->res->pc_dword,
                    "%s macro starting at dword 0x%x: %s at pc %u (dword offset 0x%x): %s", vgt_mme_format_name(r->fmt),
                    r->start, vgt_mme_error_name(e), r->res->pc, r->res->pc_dword, why);
}

vgt_status mme_run_load(mme_run *r, uint32_t *v)
{
    if (r->fifo_head < r->fifo_tail) {
        *v = r->fifo[r->fifo_head++];
        r->res->fifo_words_consumed++;
        return VGT_OK;
    }
    if (r->next_param < r->nparams) {
        *v = r->params[r->next_param++];
        r->res->params_consumed++;
        return VGT_OK;
    }
    *v = 0;
    return mme_run_fail(r, VGT_MME_MISSING_MACRO_DATA, "a load found no parameter left (%u consumed)",
                        r->res->params_consumed);
}

void mme_run_set_mthd(mme_run *r, uint32_t v, unsigned inc_bits)
{
    r->mthd = (v & 0xfff) << 2;
    r->inc = (v >> 12) & ((1u << inc_bits) - 1);
}

/* Methods a macro may not send: the upload and call methods of the MME itself. Which methods raise
 * ILLEGAL_MME_METHOD is not documented; this is our reading [unconfirmed]. */
static bool illegal_from_macro(uint32_t m)
{
    return (m >= VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER && m <= VGT_MME_M_LOAD_START_ADDRESS_RAM) ||
           m >= VGT_MME_M_CALL_MACRO0;
}

vgt_status mme_run_emit(mme_run *r, uint32_t value)
{
    uint32_t m = r->mthd;
    if (illegal_from_macro(m))
        return mme_run_fail(r, VGT_MME_ILLEGAL_MME_METHOD, "emit to MME method 0x%04x", m);
    r->mthd = (r->mthd + r->inc * 4) & 0x3ffc;   /* 12-bit method word index wraps */
    if (r->io->emit) {
        vgt_status rc = r->io->emit(r->io->user, m, value);
        if (rc != VGT_OK)
            return vgt_fail(r->err, rc, r->res->pc_dword, "emit of method 0x%04x at pc %u failed: %s", m, r->res->pc,
                            vgt_status_name(rc));
    }
    r->res->emits++;
    if (r->fmt != VGT_MME_TU104 || m < VGT_MME_M_SET_MEM_ADDRESS_A || m > VGT_MME_M_SET_DATA_FIFO_CONFIG)
        return VGT_OK;
    vgt_error why;
    vgt_error_clear(&why);
    vgt_mme_error e = mme_machine_apply(r->m, m, value, r->io, r, &why);
    if (e != VGT_MME_OK) return mme_run_fail(r, e, "%s", why.msg);
    return VGT_OK;
}

uint32_t mme_run_state(mme_run *r, uint32_t method)
{
    return r->io->state ? r->io->state(r->io->user, method) : 0;
}

vgt_status mme_run_fetch(mme_run *r, int64_t ip, const uint32_t **code)
{
    uint32_t step = vgt_mme_inst_dwords(r->fmt);
    int64_t dw = (int64_t)r->start + ip * step;
    r->res->pc = (uint32_t)ip;
    r->res->pc_dword = (uint32_t)dw;
    if (r->res->instructions >= r->max_instructions)
        return mme_run_fail(r, VGT_MME_MAX_INSTR_LIMIT, "%llu instructions executed without an exit",
                            (unsigned long long)r->res->instructions);
    if (ip < 0 || dw + step > r->iram_dwords)
        return mme_run_fail(r, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, "fetch at dword %lld, RAM has %u dwords",
                            (long long)dw, r->iram_dwords);
    r->res->instructions++;
    *code = r->iram + dw;
    return VGT_OK;
}

const vgt_mme_decoded *mme_run_decode(mme_run *r, const uint32_t *code)
{
    bool tu = r->fmt == VGT_MME_TU104;
    uint32_t w0 = code[0], w1 = tu ? code[1] : 0, w2 = tu ? code[2] : 0;
    uint32_t h = w0 * 0x9E3779B1u ^ w1 * 0x85EBCA77u ^ w2 * 0xC2B2AE3Du;
    vgt_mme_decoded *d = &r->m->decoded[(h ^ h >> 16) % VGT_MME_DECODE_CACHE];
    if (d->fmt_plus1 == (uint8_t)(r->fmt + 1) && d->words[0] == w0 && d->words[1] == w1 && d->words[2] == w2)
        return d;
    memset(d, 0, sizeof *d);
    d->words[0] = w0, d->words[1] = w1, d->words[2] = w2;
    d->fmt_plus1 = (uint8_t)(r->fmt + 1);
    if (tu) {
        vgt_mme_tu104_decode(code, &d->in.tu104);
        vgt_mme_tu104_check(&d->in.tu104, &d->why);
        d->loads = (uint8_t)mme_tu104_loads(&d->in.tu104);
    } else {
        vgt_mme_fermi_decode(w0, &d->in.fermi);
        vgt_mme_fermi_check(&d->in.fermi, &d->why);
    }
    return d;
}

static vgt_status check_args(vgt_mme_format fmt, const uint32_t *iram, uint32_t iram_dwords, const uint32_t *params,
                             uint32_t nparams, vgt_error *err)
{
    if (fmt != VGT_MME_TU104 && fmt != VGT_MME_FERMI)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME format %d is neither TU104 nor Fermi", (int)fmt);
    if (!iram && iram_dwords) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME instruction RAM is NULL");
    if (!params && nparams) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME parameters are NULL");
    return VGT_OK;
}

/* After a clean exit, call parameters nobody loaded:
 *   - Fermi: EXTRA_MACRO_DATA (envytools envydis/macro.c: "If an unconsumed parameter remains after macro
 *     exits ... a trap occurs");
 *   - TU104: discarded with the call, no error. NVIDIA's Vulkan driver on Hopper calls a 6-instruction guard
 *     macro with 21 parameters that consumes 4 and exits, and the hardware renders the frame; Mesa's TU104
 *     simulator (src/nouveau/mme/mme_tu104_sim.c) ends such a call silently too. [hardware check:
 *     tests/gpu/mme_agree.c "extra" rows: a second call sees its own parameters and the channel raises no
 *     error] The count stays visible as params_total - params_consumed. */
static vgt_status finish(mme_run *r, vgt_status rc)
{
    if (rc == VGT_OK && r->fmt == VGT_MME_FERMI && r->next_param < r->nparams)
        return mme_run_fail(r, VGT_MME_EXTRA_MACRO_DATA, "%u of %u parameters left unconsumed",
                            r->nparams - r->next_param, r->nparams);
    return rc;
}

vgt_status vgt_mme_sim_run(const vgt_mme_sim_config *cfg, vgt_mme_format fmt, const uint32_t *iram,
                           uint32_t iram_dwords, uint32_t start, const uint32_t *params, uint32_t nparams,
                           const vgt_mme_sim_io *io, vgt_mme_machine *machine, vgt_mme_result *result,
                           vgt_error *err)
{
    static const vgt_mme_sim_io no_io;
    vgt_mme_result dummy;
    if (!result) result = &dummy;
    memset(result, 0, sizeof *result);
    result->params_total = nparams;
    result->pc_dword = start;
    VGT_TRY(check_args(fmt, iram, iram_dwords, params, nparams, err));
    uint32_t limit = cfg && cfg->iram_dwords ? cfg->iram_dwords : vgt_mme_iram_dwords(fmt);
    mme_run r = {
        .fmt = fmt, .iram = iram, .iram_dwords = iram_dwords < limit ? iram_dwords : limit, .start = start,
        .params = params, .nparams = nparams, .io = io ? io : &no_io, .m = machine, .res = result, .err = err,
        .max_instructions = cfg && cfg->max_instructions ? cfg->max_instructions : VGT_MME_DEFAULT_MAX_INSTRUCTIONS,
    };
    vgt_mme_machine *own = NULL;
    if (!r.m && !(r.m = own = calloc(1, sizeof *own)))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the MME data RAM");
    vgt_status rc = finish(&r, fmt == VGT_MME_TU104 ? mme_tu104_run(&r) : mme_fermi_run(&r));
    free(r.fifo);
    free(own);
    return rc;
}
