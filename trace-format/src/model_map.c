/* model_map.c: live GPU mappings, never overlapping: a new mapping replaces whatever it overlaps (the VA
 * was reused without an unmap in the trace). Removing a mapping forgets the memory contents under it:
 * the next mapping at that VA is other memory.
 *
 * The mappings are a treap keyed by gpu_va with subtree sizes, so that map, unmap, find-by-VA and the
 * i-th mapping in VA order are all O(log n) however many mappings are live. Nodes live in one array and
 * are recycled through a free list, so a node's index is stable while it is live: memnode remembers the
 * latest mapping of each memory object, and freeing that object usually finds its mapping without a scan. */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "vgt/grow.h"

struct map_node {
    vgt_model_mapping m;
    uint32_t left, right, size, prio;   /* size 0: a free node; next free node in `left` */
};

#define NONE 0u

static uint32_t size_of(const vgt_model *m, uint32_t t) { return t ? m->nodes[t].size : 0; }

static void update(vgt_model *m, uint32_t t)
{
    m->nodes[t].size = 1 + size_of(m, m->nodes[t].left) + size_of(m, m->nodes[t].right);
}

/* Splits t into starts < key (*l) and starts >= key (*r). */
static void split(vgt_model *m, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = NONE;
        return;
    }
    if (m->nodes[t].m.gpu_va < key) {
        split(m, m->nodes[t].right, key, &m->nodes[t].right, r);
        *l = t;
    } else {
        split(m, m->nodes[t].left, key, l, &m->nodes[t].left);
        *r = t;
    }
    update(m, t);
}

static uint32_t merge(vgt_model *m, uint32_t l, uint32_t r)
{
    if (!l || !r) return l ? l : r;
    if (m->nodes[l].prio > m->nodes[r].prio) {
        m->nodes[l].right = merge(m, m->nodes[l].right, r);
        update(m, l);
        return l;
    }
    m->nodes[r].left = merge(m, l, m->nodes[r].left);
    update(m, r);
    return r;
}

/* The node with the largest start <= va, or NONE. */
static uint32_t floor_node(const vgt_model *m, uint64_t va)
{
    uint32_t t = m->root, best = NONE;
    while (t) {
        if (m->nodes[t].m.gpu_va <= va) best = t, t = m->nodes[t].right;
        else t = m->nodes[t].left;
    }
    return best;
}

static void ref(vgt_model *m, uint32_t client, uint32_t handle, int delta)
{
    uint32_t n = 0;
    if (!handle) return;
    int had = u64map_get(&m->mapref, model_key(client, handle), &n);
    if (delta > 0) u64map_put(&m->mapref, model_key(client, handle), n + 1);   /* no memory: a slower free later */
    else if (had && n <= 1) u64map_del(&m->mapref, model_key(client, handle));
    else if (had) u64map_put(&m->mapref, model_key(client, handle), n - 1);
}

static void refs(vgt_model *m, const vgt_model_mapping *mp, int delta)
{
    ref(m, mp->client, mp->memory, delta);
    if (mp->va_space != mp->memory) ref(m, mp->client, mp->va_space, delta);
    if (mp->device != mp->memory && mp->device != mp->va_space) ref(m, mp->client, mp->device, delta);
}

/* Removes the mapping that starts at va (it must exist). */
static void erase(vgt_model *m, uint64_t va, int forget)
{
    uint32_t l, mid, r;
    split(m, m->root, va, &l, &r);
    split(m, r, va + 1, &mid, &r);
    m->root = merge(m, l, r);
    if (!mid) return;
    vgt_model_mapping gone = m->nodes[mid].m;
    refs(m, &gone, -1);
    m->nodes[mid].size = 0;
    m->nodes[mid].left = m->free_nodes;
    m->free_nodes = mid;
    m->nmap--;
    if (forget) model_mem_forget(m, gone.gpu_va, gone.length);
}

static vgt_status new_node(vgt_model *m, uint32_t *out, vgt_error *err)
{
    if (m->free_nodes) {
        *out = m->free_nodes;
        m->free_nodes = m->nodes[*out].left;
        return VGT_OK;
    }
    if (m->nnodes == m->nodecap) {
        uint64_t need = (m->nnodes ? m->nnodes : 1) + 1ull;   /* node 0 is NONE */
        if (vgt_grow(&m->nodes, &m->nodecap, need, 64))
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %llu mappings", (unsigned long long)need);
        if (m->nnodes == 0) m->nnodes = 1;
    }
    *out = m->nnodes++;
    return VGT_OK;
}

vgt_status model_map_add(vgt_model *m, const vgt_model_mapping *mp, vgt_error *err)
{
    /* by the last byte: a mapping may end exactly at 2^64 */
    if (!mp->length || mp->gpu_va + (mp->length - 1) < mp->gpu_va)
        return VGT_FAIL(err, VGT_E_FORMAT, VGT_NO_OFFSET, "GPU_MAP of %llu bytes at 0x%llx is empty or wraps around",
                        (unsigned long long)mp->length, (unsigned long long)mp->gpu_va);
    /* Mappings do not overlap, so the ones the new range overlaps are the last few starting before its end. */
    for (uint32_t t; (t = floor_node(m, mp->gpu_va + mp->length - 1)) &&
                     m->nodes[t].m.gpu_va + (m->nodes[t].m.length - 1) >= mp->gpu_va;)
        erase(m, m->nodes[t].m.gpu_va, 0);
    uint32_t n = NONE;
    VGT_TRY(new_node(m, &n, err));
    m->rng ^= m->rng << 13, m->rng ^= m->rng >> 7, m->rng ^= m->rng << 17;   /* xorshift64 */
    m->nodes[n] = (struct map_node){*mp, NONE, NONE, 1, (uint32_t)(m->rng >> 32)};
    uint32_t l, r;
    split(m, m->root, mp->gpu_va, &l, &r);
    m->root = merge(m, merge(m, l, n), r);
    m->nmap++;
    refs(m, mp, +1);
    u64map_put(&m->memnode, model_key(mp->client, mp->memory), n);   /* no memory: a slower free later */
    return VGT_OK;
}

void model_map_remove_at(vgt_model *m, uint64_t gpu_va)
{
    uint32_t t = floor_node(m, gpu_va);
    if (t && m->nodes[t].m.gpu_va == gpu_va) erase(m, gpu_va, 1);
}

static int names(const vgt_model_mapping *mp, uint32_t client, uint32_t handle)
{
    return mp->client == client && (mp->memory == handle || mp->va_space == handle || mp->device == handle);
}

void model_map_remove_object(vgt_model *m, uint32_t client, uint32_t handle)
{
    uint32_t n = 0, t = 0;
    if (!u64map_get(&m->mapref, model_key(client, handle), &n)) return;   /* no mapping names it */
    /* The common case: a memory object with one mapping, remembered in memnode. */
    if (n == 1 && u64map_get(&m->memnode, model_key(client, handle), &t) && t < m->nnodes && m->nodes[t].size &&
        names(&m->nodes[t].m, client, handle)) {
        erase(m, m->nodes[t].m.gpu_va, 1);
        u64map_del(&m->memnode, model_key(client, handle));
        return;
    }
    for (t = 1; t < m->nnodes && u64map_get(&m->mapref, model_key(client, handle), &n); t++)
        if (m->nodes[t].size && names(&m->nodes[t].m, client, handle)) erase(m, m->nodes[t].m.gpu_va, 1);
    u64map_del(&m->memnode, model_key(client, handle));
}

void model_map_free(vgt_model *m)
{
    free(m->nodes);
    u64map_free(&m->mapref);
    u64map_free(&m->memnode);
}

uint32_t vgt_model_mapping_count(const vgt_model *m) { return m->nmap; }

const vgt_model_mapping *vgt_model_mapping_at(const vgt_model *m, uint32_t i)
{
    if (i >= m->nmap) return NULL;
    uint32_t t = m->root;
    for (;;) {
        uint32_t ls = size_of(m, m->nodes[t].left);
        if (i < ls) t = m->nodes[t].left;
        else if (i == ls) return &m->nodes[t].m;
        else i -= ls + 1, t = m->nodes[t].right;
    }
}

const vgt_model_mapping *vgt_model_mapping_find(const vgt_model *m, uint64_t gpu_va)
{
    uint32_t t = floor_node(m, gpu_va);
    return t && gpu_va - m->nodes[t].m.gpu_va < m->nodes[t].m.length ? &m->nodes[t].m : NULL;
}
