/* rm_memory.c: allocations mapped at GPU VAs the caller chooses, with a CPU mapping each.
 *
 * GPU mapping, in the order the probe proved on the H200 (rmchan-h200.log step 4):
 *   UVM_CREATE_EXTERNAL_RANGE(va, size)   reserve the range in the UVM-owned VA space
 *   RM_MAP_MEMORY_DMA(DMA_OFFSET_FIXED)   map through NV01_MEMORY_VIRTUAL at exactly va
 *   UVM_MAP_EXTERNAL_ALLOCATION(va)       map the memory object into the channel's VA space
 * Release: unmap the CPU view, UVM_FREE the range, RM_FREE the memory object (which drops its DMA
 * mappings). Allocation attributes: sysmem CPU-cached (snooped) and GPU-uncached; vidmem
 * GPU-cached, non-contiguous); they come from NVOS32 in nvos.h.
 *
 * Aliases (one memory object the trace maps at two VAs): the same three steps with the owner's handle
 * at the new VA, RM_MAP_MEMORY_DMA and UVM_MAP_EXTERNAL_ALLOCATION at the alias's offset in the
 * memory. Releasing an alias: UVM_FREE its range and RM_UNMAP_MEMORY_DMA its DMA mapping. Releasing an
 * owner that aliases still use: the same for its own range, while its memory object and CPU mapping
 * stay (detached) until the last alias goes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpu_internal.h"
#include "vgt/grow.h"

static void memory_params(rm_memory_alloc *p, vgt_gpu *g, vgt_gpu_mem_kind kind, uint64_t size)
{
    memset(p, 0, sizeof *p);
    p->owner = g->client;
    p->flags = RM_MEM_FLAG_MAP_NOT_REQUIRED | RM_MEM_FLAG_HANDLE_PROVIDED | RM_MEM_FLAG_ALIGNMENT_FORCE |
               RM_MEM_FLAG_IGNORE_BANK_PLACEMENT;
    p->format = RM_MEM_FORMAT_GENERIC;
    p->size = size;
    p->alignment = VGT_GPU_PAGE;
    p->limit = size - 1;
    if (kind == VGT_GPU_SYSMEM) {
        p->type = RM_MEM_TYPE_NOTIFIER;
        /* CPU-cached (the GPU snoops it, as CUDA's pinned memory): the replay writes the trace's memory
         * contents through the CPU, and an uncached mapping made vadd's 84 MB of them the bulk of its
         * replay time. */
        p->attr = RM_MEM_ATTR_NONCONTIGUOUS | RM_MEM_ATTR_LOCATION_PCI | RM_MEM_ATTR_COHERENCY_CACHED;
        p->attr2 = RM_MEM_ATTR2_GPU_UNCACHED | RM_MEM_ATTR2_NO_ZBC;
    } else {
        p->type = RM_MEM_TYPE_IMAGE;
        p->flags |= RM_MEM_FLAG_PERSISTENT_VIDMEM;
        p->attr = RM_MEM_ATTR_NONCONTIGUOUS;
        p->attr2 = RM_MEM_ATTR2_GPU_CACHED | RM_MEM_ATTR2_NO_ZBC;
    }
}

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

static vgt_status check_range(vgt_gpu *g, uint64_t va, uint64_t size, bool internal, vgt_error *err)
{
    if (!size || size % VGT_GPU_PAGE || va % VGT_GPU_PAGE)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "allocation at VA 0x%llx of 0x%llx bytes: VA and size must be "
                        "non-zero 4 KiB multiples", (unsigned long long)va, (unsigned long long)size);
    if (size > VGT_GPU_MAX_ALLOC_BYTES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "allocation of 0x%llx bytes is over the limit 0x%llx",
                        (unsigned long long)size, (unsigned long long)VGT_GPU_MAX_ALLOC_BYTES);
    if (va < RM_VASPACE_BASE || va + size > RM_VASPACE_BASE + RM_VASPACE_SIZE || va + size < va)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "VA range 0x%llx+0x%llx is outside the GPU VA space "
                        "[0x%llx, 0x%llx)", (unsigned long long)va, (unsigned long long)size,
                        (unsigned long long)RM_VASPACE_BASE, (unsigned long long)(RM_VASPACE_BASE + RM_VASPACE_SIZE));
    if (!internal && ranges_overlap(va, size, g->opt.infra_va, VGT_GPU_INFRA_SPAN))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "VA range 0x%llx+0x%llx overlaps the backend's reserved range "
                        "0x%llx+0x%llx", (unsigned long long)va, (unsigned long long)size,
                        (unsigned long long)g->opt.infra_va, (unsigned long long)VGT_GPU_INFRA_SPAN);
    for (uint32_t i = 0; i < g->nmems; i++)
        if (ranges_overlap(va, size, g->mems[i]->va, g->mems[i]->size))
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "VA range 0x%llx+0x%llx overlaps the allocation at "
                            "0x%llx+0x%llx", (unsigned long long)va, (unsigned long long)size,
                            (unsigned long long)g->mems[i]->va, (unsigned long long)g->mems[i]->size);
    if (g->nmems >= VGT_GPU_MAX_ALLOCS)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "%u allocations: the limit is %u", g->nmems, VGT_GPU_MAX_ALLOCS);
    return VGT_OK;
}

static vgt_status track(vgt_gpu *g, vgt_gpu_mem *m, vgt_error *err)
{
    if (vgt_grow(&g->mems, &g->capmems, g->nmems + 1ull, 16))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "allocation table of %u entries: out of memory", g->nmems + 1);
    g->mems[g->nmems++] = m;
    return VGT_OK;
}

/* m's range in the UVM VA space, then m->handle + offset at exactly m->va (an alias maps its owner's
 * memory object at the alias's offset in it). */
static vgt_status map_gpu(vgt_gpu *g, vgt_gpu_mem *m, uint64_t offset, const char *what, vgt_error *err)
{
    uvm_range_params r = { .base = m->va, .length = m->size };
    VGT_TRY(uvm_call(g, g->fd_uvm, UVM_REQ_CREATE_EXTERNAL_RANGE, &r, &r.status, "CREATE_EXTERNAL_RANGE", err));
    m->uvm_range = true;
    VGT_TRY(rm_map_dma_fixed(g, m->handle, offset, m->va, m->size, what, err));
    m->dma_mapped = true;
    uvm_map_external_params *x = calloc(1, sizeof *x);
    if (!x)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "UVM_MAP_EXTERNAL_ALLOCATION parameters: out of memory");
    x->base = m->va;
    x->length = m->size;
    x->offset = offset;
    memcpy(x->per_gpu[0].uuid, g->info.uuid, 16);
    x->per_gpu[0].mapping_type = 1;   /* read/write/atomic */
    x->gpu_count = 1;
    x->rm_ctrl_fd = g->fd_ctl;
    x->client = g->client;
    x->memory = m->handle;
    vgt_status st = uvm_call(g, g->fd_uvm, UVM_REQ_MAP_EXTERNAL_ALLOCATION, x, &x->status, "MAP_EXTERNAL_ALLOCATION", err);
    free(x);
    return st;
}

static void free_range(vgt_gpu *g, vgt_gpu_mem *m)
{
    vgt_error ignored;
    if (!m->uvm_range)
        return;
    uvm_range_params r = { .base = m->va, .length = m->size };
    uvm_call(g, g->fd_uvm, UVM_REQ_FREE, &r, &r.status, "FREE (external range)", &ignored);
    m->uvm_range = false;
}

/* The memory object and its CPU view (an owner's, once nothing maps it any more). */
static void free_storage(vgt_gpu *g, vgt_gpu_mem *m)
{
    vgt_error ignored;
    if (m->cpu)
        munmap((void *)m->cpu, m->size);
    if (m->handle)
        rm_free(g, g->device, m->handle, "memory", &ignored);
    free(m);
}

static void release(vgt_gpu *g, vgt_gpu_mem *m)
{
    if (m->owner) {   /* an alias: its own mapping only */
        vgt_gpu_mem *o = m->owner;
        free_range(g, m);
        if (m->dma_mapped)
            rm_unmap_dma(g, o->handle, m->va, m->size);
        free(m);
        if (--o->refs == 0 && o->detached) {
            g->detached_owners--;
            free_storage(g, o);
        }
        return;
    }
    if (m->refs) {   /* aliases still map the memory: only this mapping goes */
        free_range(g, m);
        if (m->handle)
            rm_unmap_dma(g, m->handle, m->va, m->size);
        m->detached = true;
        g->detached_owners++;
        return;
    }
    free_range(g, m);
    free_storage(g, m);
}

static vgt_status alloc_at(vgt_gpu *g, vgt_gpu_mem_kind kind, uint64_t va, uint64_t size, bool internal,
                           vgt_gpu_mem **out, vgt_error *err)
{
    if (kind != VGT_GPU_SYSMEM && kind != VGT_GPU_VIDMEM)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "memory kind %d is neither sysmem (1) nor vidmem (2)", (int)kind);
    VGT_TRY(check_range(g, va, size, internal, err));
    vgt_gpu_mem *m = calloc(1, sizeof *m);
    if (!m)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "allocation record: out of memory");
    *m = (vgt_gpu_mem){ .kind = kind, .va = va, .size = size, .internal = internal };
    const char *what = kind == VGT_GPU_SYSMEM ? "sysmem" : "vidmem";
    rm_memory_alloc p;
    memory_params(&p, g, kind, size);
    uint32_t cls = kind == VGT_GPU_SYSMEM ? RM_CLASS_MEMORY_SYSTEM : RM_CLASS_MEMORY_LOCAL_USER;
    vgt_status st = rm_alloc(g, g->device, cls, &p, sizeof p, what, &m->handle, err);
    if (st == VGT_OK)
        st = rm_map_cpu(g, m->handle, size, kind == VGT_GPU_VIDMEM, what, &m->cpu, err);
    if (st == VGT_OK)
        st = map_gpu(g, m, 0, what, err);
    if (st == VGT_OK)
        st = track(g, m, err);
    if (st != VGT_OK) {
        vgt_error_prefix(err, "%s at VA 0x%llx (0x%llx bytes)", what, (unsigned long long)va, (unsigned long long)size);
        release(g, m);
        return st;
    }
    *out = m;
    return VGT_OK;
}

vgt_status vgt_gpu_mem_alloc(vgt_gpu *g, vgt_gpu_mem_kind kind, uint64_t va, uint64_t size, vgt_gpu_mem **out,
                             vgt_error *err)
{
    *out = NULL;
    return alloc_at(g, kind, va, size, false, out, err);
}

vgt_status mem_alloc_internal(vgt_gpu *g, uint64_t va, uint64_t size, vgt_gpu_mem **out, vgt_error *err)
{
    return alloc_at(g, VGT_GPU_SYSMEM, va, size, true, out, err);
}

vgt_status vgt_gpu_mem_free(vgt_gpu *g, vgt_gpu_mem *m, vgt_error *err)
{
    for (uint32_t i = 0; i < g->nmems; i++)
        if (g->mems[i] == m) {
            g->mems[i] = g->mems[--g->nmems];
            release(g, m);
            return VGT_OK;
        }
    return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "allocation %p is not one of this session's", (void *)m);
}

void mem_release_all(vgt_gpu *g)
{
    while (g->nmems)
        release(g, g->mems[--g->nmems]);   /* the last alias of a detached owner frees its storage */
}

vgt_status mem_alias_source(vgt_gpu *g, uint64_t va, uint64_t size, vgt_gpu_mem **owner, uint64_t *offset,
                            vgt_error *err)
{
    vgt_gpu_mem *m = vgt_gpu_mem_find(g, va, size);
    if (!m)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "alias source 0x%llx+0x%llx is not inside one of our "
                        "allocations", (unsigned long long)va, (unsigned long long)size);
    *owner = m->owner ? m->owner : m;
    *offset = (m->owner ? m->offset : 0) + (va - m->va);
    return VGT_OK;
}

static vgt_status map_alias_gpu(vgt_gpu *g, vgt_gpu_mem *m, vgt_error *err)
{
    char what[96];
    snprintf(what, sizeof what, "alias of memory 0x%08x", m->owner->handle);
    return map_gpu(g, m, m->offset, what, err);
}

vgt_status vgt_gpu_mem_alias(vgt_gpu *g, uint64_t va, uint64_t size, uint64_t src_va, vgt_gpu_mem **out,
                             vgt_error *err)
{
    *out = NULL;
    vgt_gpu_mem *owner;
    uint64_t offset;
    VGT_TRY(mem_alias_source(g, src_va, size, &owner, &offset, err));
    if (offset % VGT_GPU_PAGE)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "alias at VA 0x%llx: source 0x%llx is at offset 0x%llx of its "
                        "memory, not a 4 KiB multiple", (unsigned long long)va, (unsigned long long)src_va,
                        (unsigned long long)offset);
    VGT_TRY(check_range(g, va, size, false, err));
    vgt_gpu_mem *m = calloc(1, sizeof *m);
    if (!m)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "alias record: out of memory");
    *m = (vgt_gpu_mem){ .kind = owner->kind, .handle = owner->handle, .va = va, .size = size,
                        .cpu = owner->cpu ? owner->cpu + offset : NULL, .owner = owner, .offset = offset };
    owner->refs++;   /* from here release() undoes whatever was done */
    vgt_status st = map_alias_gpu(g, m, err);
    if (st == VGT_OK)
        st = track(g, m, err);
    if (st != VGT_OK) {
        vgt_error_prefix(err, "alias at VA 0x%llx (0x%llx bytes) of 0x%llx", (unsigned long long)va,
                         (unsigned long long)size, (unsigned long long)src_va);
        release(g, m);
        return st;
    }
    *out = m;
    return VGT_OK;
}

vgt_status mem_alloc_notifier(vgt_gpu *g, uint32_t *handle, volatile uint8_t **cpu, vgt_error *err)
{
    rm_memory_alloc p;
    memory_params(&p, g, VGT_GPU_SYSMEM, NOTIFIER_BYTES);
    VGT_TRY(rm_alloc(g, g->device, RM_CLASS_MEMORY_SYSTEM, &p, sizeof p, "error notifier", handle, err));
    return rm_map_cpu(g, *handle, NOTIFIER_BYTES, false, "error notifier", cpu, err);
}
