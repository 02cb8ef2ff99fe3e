/* model_objects.c: RM objects keyed by (client, handle), and the channels among them.
 *
 * Freeing an object frees its descendants (RM frees a subtree; freeing a client frees all its objects),
 * their channels, and the mappings that used them as memory, VA space or device. An alloc of a key that
 * is live replaces the old object (the trace missed a free, or a handle was reused). */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "vgt/grow.h"

static vgt_status nomem(vgt_error *err, const char *what)
{
    return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %s", what);
}

/* Child counts let freeing a leaf (the common case: memory, engine objects) skip the subtree search. */
static void child_count(vgt_model *m, uint32_t client, uint32_t parent, uint32_t handle, int delta)
{
    uint32_t i;
    if (parent == handle || !u64map_get(&m->objmap, model_key(client, parent), &i)) return;
    if (delta > 0) m->nchild[i]++;
    else if (m->nchild[i]) m->nchild[i]--;
}

static void remove_object_at(vgt_model *m, uint32_t i)
{
    vgt_model_object o = m->objs[i];
    u64map_del(&m->objmap, model_key(o.client, o.handle));
    if (i != m->nobj - 1) {
        m->objs[i] = m->objs[m->nobj - 1];
        m->nchild[i] = m->nchild[m->nobj - 1];
        u64map_put(&m->objmap, model_key(m->objs[i].client, m->objs[i].handle), i);   /* slot exists: cannot fail */
    }
    m->nobj--;
    child_count(m, o.client, o.parent, o.handle, -1);
}

/* An engine object freed on its own leaves its channel's list too (its parent: the channel). */
static void remove_engine(vgt_model *m, uint32_t client, uint32_t parent, uint32_t handle)
{
    vgt_model_channel *ch = model_channel_get(m, client, parent);
    if (!ch) return;
    for (uint32_t k = 0; k < ch->engine_count; k++) {
        if (ch->engines[k].handle != handle) continue;
        memmove(&ch->engines[k], &ch->engines[k + 1], sizeof ch->engines[0] * (ch->engine_count - k - 1));
        ch->engine_count--;
        break;
    }
}

/* Drop the freed channels, keeping the order of the others (slice writes them in it). */
static void compact_channels(vgt_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nch; i++) {
        if (m->chdead[i]) continue;
        if (n != i) {
            m->chans[n] = m->chans[i];
            u64map_put(&m->chmap, model_key(m->chans[n].rec.client, m->chans[n].rec.handle), n);   /* slot exists */
        }
        m->chdead[n++] = 0;
    }
    m->nch = n;
    m->ndead = 0;
}

/* Marked, and compacted once half the list is freed: freeing 100,000 channels one by one stays linear. */
static void remove_channel(vgt_model *m, uint32_t client, uint32_t handle)
{
    uint32_t i;
    if (!u64map_get(&m->chmap, model_key(client, handle), &i)) return;
    u64map_del(&m->chmap, model_key(client, handle));
    free(m->chans[i].methods);
    m->chans[i].methods = NULL;
    m->chdead[i] = 1;
    if (++m->ndead * 2 > m->nch) compact_channels(m);
}

vgt_status model_object_add(vgt_model *m, const vgt_model_object *o, vgt_error *err)
{
    uint32_t i;
    if (u64map_get(&m->objmap, model_key(o->client, o->handle), &i)) {
        child_count(m, o->client, m->objs[i].parent, o->handle, -1);
        m->objs[i] = *o;
        child_count(m, o->client, o->parent, o->handle, +1);
        return VGT_OK;
    }
    if (m->nobj == m->objcap) {   /* objs[] and nchild[] share objcap: the smaller of the two grown */
        uint32_t ocap = m->objcap, ccap = m->objcap;
        if (vgt_grow(&m->objs, &ocap, m->nobj + 1ull, 256) || vgt_grow(&m->nchild, &ccap, m->nobj + 1ull, 256))
            return nomem(err, "objects");
        m->objcap = ocap < ccap ? ocap : ccap;
    }
    if (u64map_put(&m->objmap, model_key(o->client, o->handle), m->nobj)) return nomem(err, "the object map");
    m->objs[m->nobj] = *o;
    m->nchild[m->nobj++] = 0;
    child_count(m, o->client, o->parent, o->handle, +1);
    return VGT_OK;
}

static int in_set(const u64map *set, uint32_t h)
{
    uint32_t v;
    return u64map_get(set, h, &v);
}

vgt_status model_object_free(vgt_model *m, uint32_t client, uint32_t handle, vgt_error *err)
{
    /* Collect the subtree: handle, then every live object of the client whose parent is collected. A
     * known leaf is the whole subtree. */
    uint32_t cap = 16, n = 0, at;
    uint32_t *set = malloc(sizeof *set * cap);
    u64map members = {0};   /* the same handles, hashed: the collection stays linear per level */
    if (!set || u64map_put(&members, handle, 0)) {
        free(set);
        return nomem(err, "a free");
    }
    set[n++] = handle;
    int leaf = handle != client && u64map_get(&m->objmap, model_key(client, handle), &at) && m->nchild[at] == 0;
    for (int grew = !leaf; grew;) {
        grew = 0;
        for (uint32_t i = 0; i < m->nobj; i++) {
            const vgt_model_object *o = &m->objs[i];
            if (o->client != client || in_set(&members, o->handle)) continue;
            if (handle != client && !in_set(&members, o->parent)) continue;
            if (vgt_grow(&set, &cap, n + 1ull, 16)) {
                free(set);
                u64map_free(&members);
                return nomem(err, "a free");
            }
            if (u64map_put(&members, o->handle, n)) {
                free(set);
                u64map_free(&members);
                return nomem(err, "a free");
            }
            set[n++] = o->handle;
            grew = 1;
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i, parent = 0;
        int known = u64map_get(&m->objmap, model_key(client, set[k]), &i);
        if (known) {
            parent = m->objs[i].parent;
            remove_object_at(m, i);
        }
        remove_channel(m, client, set[k]);
        if (known) remove_engine(m, client, parent, set[k]);
        model_map_remove_object(m, client, set[k]);
    }
    free(set);
    u64map_free(&members);
    return VGT_OK;
}

vgt_status model_channel_add(vgt_model *m, const vgt_rec_channel *c, uint64_t seq, vgt_error *err)
{
    remove_channel(m, c->client, c->handle);
    if (m->nch == m->chcap) {   /* chans[] and chdead[] share chcap: the smaller of the two grown */
        uint32_t ncap = m->chcap, dcap = m->chcap;
        if (vgt_grow(&m->chans, &ncap, m->nch + 1ull, 16) || vgt_grow(&m->chdead, &dcap, m->nch + 1ull, 16))
            return nomem(err, "channels");
        m->chcap = ncap < dcap ? ncap : dcap;
    }
    m->chdead[m->nch] = 0;
    if (u64map_put(&m->chmap, model_key(c->client, c->handle), m->nch)) return nomem(err, "channels");
    vgt_model_channel *ch = &m->chans[m->nch++];
    memset(ch, 0, sizeof *ch);
    ch->rec = *c;
    ch->alloc_seq = seq;
    return VGT_OK;
}

vgt_model_channel *model_channel_get(vgt_model *m, uint32_t client, uint32_t handle)
{
    uint32_t i;
    return u64map_get(&m->chmap, model_key(client, handle), &i) ? &m->chans[i] : NULL;
}

void model_objects_free(vgt_model *m)
{
    free(m->objs);
    free(m->nchild);
    for (uint32_t i = 0; i < m->nch; i++) free(m->chans[i].methods);
    free(m->chans);
    free(m->chdead);
    u64map_free(&m->chmap);
    u64map_free(&m->objmap);
}

const vgt_model_object *vgt_model_object_find(const vgt_model *m, uint32_t client, uint32_t handle)
{
    uint32_t i;
    return u64map_get(&m->objmap, model_key(client, handle), &i) ? &m->objs[i] : NULL;
}

uint32_t vgt_model_object_count(const vgt_model *m) { return m->nobj; }
const vgt_model_object *vgt_model_object_at(const vgt_model *m, uint32_t i) { return i < m->nobj ? &m->objs[i] : NULL; }
/* The list is compacted before it is counted or indexed (the model is logically unchanged by it). */
uint32_t vgt_model_channel_count(const vgt_model *m)
{
    if (m->ndead) compact_channels((vgt_model *)m);
    return m->nch;
}
const vgt_model_channel *vgt_model_channel_at(const vgt_model *m, uint32_t i)
{
    if (m->ndead) compact_channels((vgt_model *)m);
    return i < m->nch ? &m->chans[i] : NULL;
}

const vgt_model_channel *vgt_model_channel_find(const vgt_model *m, uint32_t client, uint32_t handle)
{
    return model_channel_get((vgt_model *)m, client, handle);
}

const vgt_model_channel *vgt_model_channel_by_token(const vgt_model *m, uint32_t token)
{
    for (uint32_t i = 0; i < m->nch; i++)
        if (!m->chdead[i] && m->chans[i].has_token && m->chans[i].token == token) return &m->chans[i];
    return NULL;
}

uint32_t vgt_model_engine_class(const vgt_model_channel *ch, uint32_t handle)
{
    for (uint32_t i = 0; i < ch->engine_count; i++)
        if (ch->engines[i].handle == handle) return ch->engines[i].cls;
    return 0;
}
