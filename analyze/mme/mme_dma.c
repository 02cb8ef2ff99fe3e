/* mme_dma.c: the DMA side of the TU104 MME unit: SET_MME_MEM_ADDRESS_A/B, SET_MME_DATA_RAM_ADDRESS,
 * MME_DMA_READ (memory -> data RAM), MME_DMA_READ_FIFOED (memory -> parameter FIFO), MME_DMA_SYNC and
 * SET_MME_DATA_FIFO_CONFIG (facts section 1; Mesa mme_tu104_sim.c models READ_FIFOED the same way).
 *
 * Modelling choices:
 *   - a DMA completes when its method is emitted; the EXTENDED(0x1000, 1) load barrier that real
 *     macros put between READ_FIFOED and the loads is then a no-op;
 *   - MME_DMA_SYNC stores its value at dataRAM[SET_MME_DATA_RAM_ADDRESS] (facts: "writes a value into
 *     dataRAM when done") [location unconfirmed];
 *   - MME_DMA_WRITE, _REDUCTION and _SYSMEMBAR write GPU memory and are not modelled (as in Mesa);
 *   - the FIFO holds FIFO_SIZE * 4 KB (SET_MME_DATA_FIFO_CONFIG 2:0 = 0/4/8/12/16 KB); before any
 *     config the largest size is assumed; sizes 5..7 are DMA_ILLEGAL_FIFO_CONFIG [unconfirmed].
 */
#include "mme_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mem_addr(const vgt_mme_machine *m)
{
    /* SET_MME_MEM_ADDRESS_A UPPER is 7:0 on Turing and 24:0 on Hopper (facts section 3). */
    return ((uint64_t)(m->mem_addr_hi & 0x1ffffff) << 32) | m->mem_addr_lo;
}

static vgt_mme_error read_mem(const vgt_mme_sim_io *io, uint64_t va, uint32_t *dst, uint32_t words, vgt_error *why)
{
    if (words == 0) return VGT_MME_OK;
    if (!io || !io->read_mem) {
        vgt_fail(why, VGT_E_FAULT, VGT_NO_OFFSET, "DMA read of %u words at 0x%llx: no memory is available", words,
                 (unsigned long long)va);
        return VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS;
    }
    uint8_t bytes[4 * 256];
    for (uint32_t done = 0; done < words;) {
        uint32_t n = words - done < 256 ? words - done : 256;
        vgt_error e;
        vgt_error_clear(&e);
        uint64_t at = va + 4ull * done;
        if (io->read_mem(io->user, at, bytes, 4u * n, &e) != VGT_OK) {
            vgt_fail(why, VGT_E_FAULT, VGT_NO_OFFSET, "DMA read of %u words at 0x%llx failed: %s", n,
                     (unsigned long long)at, e.msg[0] ? e.msg : "memory not readable");
            return VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS;
        }
        for (uint32_t i = 0; i < n; i++)   /* GPU memory is little-endian */
            dst[done + i] = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 |
                            (uint32_t)bytes[4 * i + 2] << 16 | (uint32_t)bytes[4 * i + 3] << 24;
        done += n;
    }
    return VGT_MME_OK;
}

static vgt_mme_error dma_read(vgt_mme_machine *m, uint32_t words, const vgt_mme_sim_io *io, vgt_error *why)
{
    if (m->data_ram_addr > VGT_MME_DATA_RAM_WORDS || words > VGT_MME_DATA_RAM_WORDS - m->data_ram_addr) {
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "MME_DMA_READ of %u words at data RAM word %u, RAM has %u", words,
                 m->data_ram_addr, VGT_MME_DATA_RAM_WORDS);
        return VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS;
    }
    return read_mem(io, mem_addr(m), m->data_ram + m->data_ram_addr, words, why);
}

static uint32_t fifo_capacity(const vgt_mme_machine *m)
{
    return m->fifo_config_set ? (m->fifo_config & 7) * 1024u : VGT_MME_DMA_FIFO_MAX_WORDS;
}

static vgt_mme_error dma_read_fifoed(vgt_mme_machine *m, uint32_t words, const vgt_mme_sim_io *io, mme_run *r,
                                     vgt_error *why)
{
    uint32_t cap = fifo_capacity(m);
    if (m->fifo_config_set && ((m->fifo_config & 7) == 0 || (m->fifo_config & 7) > 4)) {
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "MME_DMA_READ_FIFOED with FIFO_SIZE %u", m->fifo_config & 7);
        return VGT_MME_DMA_ILLEGAL_FIFO_CONFIG;
    }
    /* The buffer on the first READ_FIFOED of the run: most macros never use it. */
    if (!r->fifo && !(r->fifo = malloc(VGT_MME_DMA_FIFO_MAX_WORDS * sizeof *r->fifo))) {
        vgt_fail(why, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the MME DMA FIFO");
        return VGT_MME_DMA_READ_FIFOED_OVERFLOW;
    }
    /* Compact the queue so that fifo_tail never passes the buffer. */
    uint32_t queued = r->fifo_tail - r->fifo_head;
    memmove(r->fifo, r->fifo + r->fifo_head, queued * sizeof *r->fifo);
    r->fifo_head = 0;
    r->fifo_tail = queued;
    if (words > cap - queued) {
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "MME_DMA_READ_FIFOED of %u words with %u queued, FIFO holds %u",
                 words, queued, cap);
        return VGT_MME_DMA_READ_FIFOED_OVERFLOW;
    }
    vgt_mme_error e = read_mem(io, mem_addr(m), r->fifo + r->fifo_tail, words, why);
    if (e == VGT_MME_OK) {
        r->fifo_tail += words;
        r->res->fifo_words_read += words;
    }
    return e;
}

static vgt_mme_error fifo_config(vgt_mme_machine *m, uint32_t value, mme_run *r, vgt_error *why)
{
    if (r && r->fifo_tail > r->fifo_head) {
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "SET_MME_DATA_FIFO_CONFIG with %u FIFOed words unread",
                 r->fifo_tail - r->fifo_head);
        return VGT_MME_DMA_FIFO_RESIZED_WHEN_NONIDLE;
    }
    m->fifo_config = value & 7;
    m->fifo_config_set = true;
    return VGT_MME_OK;
}

static vgt_mme_error dma_sync(vgt_mme_machine *m, uint32_t value, vgt_error *why)
{
    if (m->data_ram_addr >= VGT_MME_DATA_RAM_WORDS) {
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "MME_DMA_SYNC to data RAM word %u, RAM has %u", m->data_ram_addr,
                 VGT_MME_DATA_RAM_WORDS);
        return VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS;
    }
    m->data_ram[m->data_ram_addr] = value;
    return VGT_MME_OK;
}

vgt_mme_error mme_machine_apply(vgt_mme_machine *m, uint32_t method, uint32_t value, const vgt_mme_sim_io *io,
                                mme_run *r, vgt_error *why)
{
    switch (method) {
    case VGT_MME_M_SET_MEM_ADDRESS_A: m->mem_addr_hi = value; return VGT_MME_OK;
    case VGT_MME_M_SET_MEM_ADDRESS_B: m->mem_addr_lo = value; return VGT_MME_OK;
    case VGT_MME_M_SET_DATA_RAM_ADDRESS: m->data_ram_addr = value; return VGT_MME_OK;
    case VGT_MME_M_DMA_READ: return dma_read(m, value, io, why);
    case VGT_MME_M_DMA_SYNC: return dma_sync(m, value, why);
    case VGT_MME_M_SET_DATA_FIFO_CONFIG: return fifo_config(m, value, r, why);
    case VGT_MME_M_DMA_READ_FIFOED:
        if (r) return dma_read_fifoed(m, value, io, r, why);
        vgt_fail(why, VGT_E_DECODE, VGT_NO_OFFSET, "MME_DMA_READ_FIFOED of %u words sent by the push buffer", value);
        return VGT_MME_DMA_READ_FIFOED_FROM_PB;
    default: return VGT_MME_OK;
    }
}

vgt_mme_error vgt_mme_machine_write(vgt_mme_machine *m, uint32_t method, uint32_t value, const vgt_mme_sim_io *io,
                                    vgt_error *why)
{
    if (!m) return VGT_MME_OK;
    return mme_machine_apply(m, method, value, io, NULL, why);
}
