/* capture_maps.c: CPU and GPU mappings of memory objects, and the views derived from them (a GPU VA
 * range whose bytes the capture reads through a CPU pointer).
 *
 * A view exists where a GPU mapping (RM_MAP_MEMORY_DMA dmaOffset, UVM_MAP_EXTERNAL_ALLOCATION base) and a
 * CPU mapping (RM_MAP_MEMORY + mmap, or the user address of an OS-descriptor allocation) cover the same
 * bytes of the same memory object (client, handle). CUDA's unified VA shows up here as views whose GPU VA
 * equals their CPU address; that equality is derived from the two recorded mappings, never assumed.
 * (UVM-managed memory, an mmap of /dev/nvidia-uvm, is never a view: reading it would migrate it.)
 * The mapping tables keep the order mappings came in (a removed one's slot takes the last one): views
 * are made, and so recorded, in that order. */
#include <stdlib.h>

#include "capture_internal.h"

#define MAX_MAPS (1u << 24)

/* Whether a view made by the first CPU mapping of a memory object can skip its initial read: RM
 * allocated the memory in this capture (RM hands memory out zeroed: the 300 MB of initial contents the
 * six corpus traces recorded before this rule were all zero), the CPU had no mapping of it before (so
 * it wrote nothing untracked), and no doorbell rang since its first GPU mapping (so no GPU work can have
 * written it). The other order (CPU mapping first, then the GPU's) goes through the tracker's
 * fresh_cpu_map. The shim's tracker still reads the view's first page and falls back to a full read if
 * that is not zero. */
static int fresh_view(const vgt_capture *c, const cap_object *o, int first_cpu_map)
{
    return o && (o->flags & VGT_CAPTURE_OBJ_FRESH) && first_cpu_map &&
           (!o->gpu_mapped || c->stats.doorbells == o->doorbells_at_gpu_map);
}

/* A view of (client, memory), unless the same one exists; one overlapping a view already there is left
 * out (that view's bytes are already read). */
static void view_add(vgt_capture *c, uint32_t client, uint32_t memory, uint64_t gpu_va, uint64_t length, uint64_t cpu,
                     int zeroed)
{
    for (uint32_t i = 0; i < c->nviews; i++)
        if (c->views[i].gpu_va == gpu_va && (uintptr_t)c->views[i].host == cpu && c->views[i].length == length) return;
    vgt_capture_view v = { .gpu_va = gpu_va, .length = length, .host = (const void *)(uintptr_t)cpu,
                           .client = client, .memory = memory };
    const cap_object *o = cap_object_find(c, client, memory);
    vgt_error err;
    cap_view_add(c, &v, o ? o->cls : 0, zeroed, &err);
}

/* Views for the overlap of one CPU mapping and one GPU mapping of the same memory object. */
static void pair(vgt_capture *c, const cap_cpu_map *cm, const cap_gpu_map *g, int zeroed)
{
    if (cm->client != g->client || cm->memory != g->memory) return;
    uint64_t lo = cm->offset > g->offset ? cm->offset : g->offset;
    uint64_t ce = cm->offset + cm->length, ge = g->offset + g->length, hi = ce < ge ? ce : ge;
    if (lo >= hi) return;
    view_add(c, cm->client, cm->memory, g->gpu_va + (lo - g->offset), hi - lo, cm->cpu + (lo - cm->offset), zeroed);
}

void cap_cpu_map_add(vgt_capture *c, const vgt_rec_cpu_map *m, int implicit)
{
    vgt_error err;
    if (cap_grow((void **)&c->cmaps, &c->cap_cmaps, c->ncmaps + 1, sizeof *c->cmaps, MAX_MAPS, "CPU mappings", &err) != VGT_OK)
        return;
    cap_cpu_map *cm = &c->cmaps[c->ncmaps];
    *cm = (cap_cpu_map){ m->client, m->device, m->memory, m->offset, m->length, m->cpu_address, implicit };
    cap_cpu_bounds_add(c, m->cpu_address, m->length);
    cap_object *o = cap_object_find(c, m->client, m->memory);
    int zeroed = fresh_view(c, o, o && o->cpu_maps == 0);
    if (o && (o->flags & VGT_CAPTURE_OBJ_FRESH) && o->cpu_maps == 0 && !o->gpu_mapped && !implicit &&
        c->tracker.fresh_cpu_map)
        c->tracker.fresh_cpu_map(c->tracker.ctx, m->cpu_address, m->length);   /* its view may then skip the read */
    if (o) o->cpu_maps++;
    for (uint32_t i = 0; i < c->ngmaps; i++) pair(c, cm, &c->gmaps[i], zeroed);
    c->ncmaps++;
}

vgt_status vgt_capture_cpu_map(vgt_capture *c, const vgt_rec_cpu_map *m, int track, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_cpu_map(c->w, vgt_now_ns(), m, err);
    if (track) cap_cpu_map_add(c, m, 0);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void cap_cpu_bounds_add(vgt_capture *c, uint64_t cpu, uint64_t length)
{
    uint64_t end = cpu + length < cpu ? UINT64_MAX : cpu + length;
    if (cpu < atomic_load(&c->cpu_lo)) atomic_store(&c->cpu_lo, cpu);
    if (end > atomic_load(&c->cpu_hi)) atomic_store(&c->cpu_hi, end);
}

int vgt_capture_cpu_may_cover(const vgt_capture *c, uint64_t cpu, uint64_t length)
{
    vgt_capture *m = (vgt_capture *)c;
    uint64_t end = cpu + length < cpu ? UINT64_MAX : cpu + length;
    return cpu < atomic_load(&m->cpu_hi) && atomic_load(&m->cpu_lo) < end;
}

vgt_status vgt_capture_cpu_unmap(vgt_capture *c, uint64_t cpu, uint64_t length, vgt_error *err)
{
    /* Most munmaps are the program's own memory (malloc, the loader): outside everything the capture
     * ever had mapped there is nothing to drop or record, and no lock to take. */
    if (!vgt_capture_cpu_may_cover(c, cpu, length)) return VGT_OK;
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = VGT_OK;
    if (c->tracker.cpu_unmapping) c->tracker.cpu_unmapping(c->tracker.ctx, cpu, length);
    for (uint32_t i = 0; i < c->nviews;) {
        uint64_t at = (uint64_t)(uintptr_t)c->views[i].host;
        if (c->views[i].host && at < cpu + length && cpu < at + c->views[i].length) cap_view_drop(c, i);
        else i++;
    }
    for (uint32_t i = 0; i < c->ncmaps;) {
        cap_cpu_map *m = &c->cmaps[i];
        if (!m->implicit && m->cpu < cpu + length && cpu < m->cpu + m->length) {
            vgt_rec_cpu_unmap u = { .client = m->client, .device = m->device, .memory = m->memory,
                                    .cpu_address = m->cpu, .length = m->length };
            vgt_error werr;
            if (vgt_write_cpu_unmap(c->w, vgt_now_ns(), &u, &werr) != VGT_OK && rc == VGT_OK) {
                *err = werr;
                rc = werr.code;
            }
            c->cmaps[i] = c->cmaps[--c->ncmaps];
        } else i++;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_cpu_map_at(vgt_capture *c, uint64_t cpu, vgt_rec_cpu_map *out, vgt_error *err)
{
    vgt_status rc = VGT_E_NOT_FOUND;
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < c->ncmaps && rc != VGT_OK; i++) {
        const cap_cpu_map *m = &c->cmaps[i];
        if (!m->implicit && m->cpu == cpu) {
            *out = (vgt_rec_cpu_map){ .client = m->client, .device = m->device, .memory = m->memory, .offset = m->offset,
                                      .length = m->length, .cpu_address = m->cpu };
            rc = VGT_OK;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc == VGT_OK ? rc : VGT_FAIL(err, rc, VGT_NO_OFFSET, "capture: no CPU mapping starts at 0x%llx",
                                        (unsigned long long)cpu);
}

vgt_status vgt_capture_gpu_map(vgt_capture *c, const vgt_rec_gpu_map *g, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_gpu_map(c->w, vgt_now_ns(), g, err);
    vgt_error gerr;
    if (g->status == 0 &&
        cap_grow((void **)&c->gmaps, &c->cap_gmaps, c->ngmaps + 1, sizeof *c->gmaps, MAX_MAPS, "GPU mappings", &gerr) == VGT_OK) {
        cap_gpu_map *gm = &c->gmaps[c->ngmaps];
        *gm = (cap_gpu_map){ g->client, g->device, g->va_space, g->memory, g->offset, g->length, g->gpu_va };
        cap_object *o = cap_object_find(c, g->client, g->memory);
        if (o && !o->gpu_mapped) {
            o->gpu_mapped = 1;
            o->doorbells_at_gpu_map = c->stats.doorbells;
        }
        for (uint32_t i = 0; i < c->ncmaps; i++) pair(c, &c->cmaps[i], gm, 0);   /* the CPU may have written */
        c->ngmaps++;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void cap_gpu_unmap_range(vgt_capture *c, uint64_t gpu_va, uint64_t length)
{
    for (uint32_t i = 0; i < c->nviews;) {
        if (c->views[i].gpu_va < gpu_va + length && gpu_va < c->views[i].gpu_va + c->views[i].length) cap_view_drop(c, i);
        else i++;
    }
    for (uint32_t i = 0; i < c->ngmaps;) {
        if (c->gmaps[i].gpu_va < gpu_va + length && gpu_va < c->gmaps[i].gpu_va + c->gmaps[i].length)
            c->gmaps[i] = c->gmaps[--c->ngmaps];
        else i++;
    }
}

vgt_status vgt_capture_gpu_unmap(vgt_capture *c, const vgt_rec_gpu_unmap *u, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_gpu_unmap(c->w, vgt_now_ns(), u, err);
    for (uint32_t i = 0; u->status == 0 && i < c->ngmaps; i++) {
        const cap_gpu_map *g = &c->gmaps[i];
        if (g->client == u->client && g->gpu_va == u->gpu_va && (u->memory == 0 || g->memory == u->memory)) {
            cap_gpu_unmap_range(c, g->gpu_va, g->length);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_gpu_unmap_range(vgt_capture *c, const vgt_rec_gpu_unmap *u, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_gpu_unmap(c->w, vgt_now_ns(), u, err);
    if (u->status == 0) cap_gpu_unmap_range(c, u->gpu_va, u->length);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void *cap_cpu_pointer(vgt_capture *c, uint32_t client, uint32_t memory, uint64_t offset, uint64_t length)
{
    for (uint32_t i = 0; i < c->ncmaps; i++) {
        const cap_cpu_map *m = &c->cmaps[i];
        if (m->client == client && m->memory == memory && offset >= m->offset && offset + length <= m->offset + m->length)
            return (void *)(uintptr_t)(m->cpu + (offset - m->offset));
    }
    return NULL;
}

void cap_memory_freed(vgt_capture *c, uint32_t client, uint32_t memory)
{
    for (uint32_t i = 0; i < c->nviews;) {
        if (c->views[i].client == client && c->views[i].memory == memory) cap_view_drop(c, i);
        else i++;
    }
    for (uint32_t i = 0; i < c->ngmaps;) {
        if (c->gmaps[i].client == client && c->gmaps[i].memory == memory) c->gmaps[i] = c->gmaps[--c->ngmaps];
        else i++;
    }
    for (uint32_t i = 0; i < c->ncmaps;) {
        if (c->cmaps[i].client == client && c->cmaps[i].memory == memory && c->cmaps[i].implicit) c->cmaps[i] = c->cmaps[--c->ncmaps];
        else i++;
    }
}
