/* model_map.c: live GPU mappings, kept sorted by GPU VA and never overlapping: a new mapping replaces
 * whatever it overlaps (the VA was reused without an unmap in the trace). Removing a mapping forgets the
 * memory contents under it: the next mapping at that VA is other memory. */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

/* Index of the first mapping whose end is above va. */
static uint32_t first_ending_after(const vgt_model *m, uint64_t va)
{
    uint32_t lo = 0, hi = m->nmap;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->maps[mid].gpu_va + m->maps[mid].length <= va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void remove_at(vgt_model *m, uint32_t i, int forget)
{
    if (forget) model_mem_forget(m, m->maps[i].gpu_va, m->maps[i].length);
    memmove(&m->maps[i], &m->maps[i + 1], sizeof *m->maps * (m->nmap - i - 1));
    m->nmap--;
}

vgt_status model_map_add(vgt_model *m, const vgt_model_mapping *mp, vgt_error *err)
{
    if (!mp->length || mp->gpu_va + mp->length < mp->gpu_va)
        return VGT_FAIL(err, VGT_E_FORMAT, VGT_NO_OFFSET, "GPU_MAP of %llu bytes at 0x%llx is empty or wraps around",
                        (unsigned long long)mp->length, (unsigned long long)mp->gpu_va);
    uint32_t i = first_ending_after(m, mp->gpu_va);
    while (i < m->nmap && m->maps[i].gpu_va < mp->gpu_va + mp->length) remove_at(m, i, 0);
    if (m->nmap == m->mapcap) {
        uint32_t ncap = m->mapcap ? 2 * m->mapcap : 64;
        vgt_model_mapping *q = realloc(m->maps, sizeof *q * ncap);
        if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %u mappings", ncap);
        m->maps = q;
        m->mapcap = ncap;
    }
    memmove(&m->maps[i + 1], &m->maps[i], sizeof *m->maps * (m->nmap - i));
    m->maps[i] = *mp;
    m->nmap++;
    return VGT_OK;
}

void model_map_remove_at(vgt_model *m, uint64_t gpu_va)
{
    uint32_t i = first_ending_after(m, gpu_va);
    if (i < m->nmap && m->maps[i].gpu_va == gpu_va) remove_at(m, i, 1);
}

void model_map_remove_object(vgt_model *m, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < m->nmap;) {
        const vgt_model_mapping *mp = &m->maps[i];
        if (mp->client == client && (mp->memory == handle || mp->va_space == handle || mp->device == handle))
            remove_at(m, i, 1);
        else
            i++;
    }
}

uint32_t vgt_model_mapping_count(const vgt_model *m) { return m->nmap; }
const vgt_model_mapping *vgt_model_mapping_at(const vgt_model *m, uint32_t i) { return i < m->nmap ? &m->maps[i] : NULL; }

const vgt_model_mapping *vgt_model_mapping_find(const vgt_model *m, uint64_t gpu_va)
{
    uint32_t i = first_ending_after(m, gpu_va);
    return i < m->nmap && m->maps[i].gpu_va <= gpu_va ? &m->maps[i] : NULL;
}
