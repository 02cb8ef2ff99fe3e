/* mme_trace_registry.c: every distinct macro version of a trace, (channel incarnation, class, index,
 * start, body hash), with a copy of its body, found again in O(1) through an open-addressing table.
 * Bounded by VGT_MME_TRACE_MAX_VERSIONS versions and VGT_MME_TRACE_MAX_CODE_DWORDS body dwords. */
#include <stdlib.h>
#include <string.h>

#include "mme_trace_internal.h"
#include "vgt/grow.h"

static uint32_t key_hash(uint32_t channel, uint32_t cls, uint32_t j, uint32_t start, uint64_t hash)
{
    uint64_t h = hash ^ ((uint64_t)channel << 32 | cls) ^ ((uint64_t)j << 48 | start) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

static uint32_t version_hash(const vgt_mme_trace_macro *v)
{
    return key_hash(v->channel, v->cls, v->index, v->start_dword, v->hash);
}

static bool key_equal(const vgt_mme_trace_macro *v, const mt_object *o, uint32_t j, uint32_t start, uint64_t hash)
{
    return v->index == j && v->start_dword == start && v->hash == hash && v->client == o->client &&
           v->channel == o->channel && v->cls == o->cls && v->channel_alloc_seq == o->alloc_seq;
}

static vgt_status slots_grow(vgt_mme_trace *t, vgt_error *err)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 256;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME registry slots", n);
    for (uint32_t i = 0; i < t->nversions; i++) {
        uint32_t h = version_hash(&t->versions[i]);
        while (s[h & (n - 1)]) h++;
        s[h & (n - 1)] = i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return VGT_OK;
}

static uint32_t find(const vgt_mme_trace *t, const mt_object *o, uint32_t j, uint32_t start, uint64_t hash)
{
    if (!t->nslots) return MT_NONE;
    for (uint32_t h = key_hash(o->channel, o->cls, j, start, hash);; h++) {
        uint32_t s = t->slots[h & (t->nslots - 1)];
        if (!s) return MT_NONE;
        if (key_equal(&t->versions[s - 1], o, j, start, hash)) return s - 1;
    }
}

/* Room for n more body dwords; the versions' code pointers follow the pool when it moves. */
static vgt_status code_reserve(vgt_mme_trace *t, uint32_t n, vgt_error *err)
{
    if (t->code_n + n <= t->code_cap) return VGT_OK;
    /* the caller keeps code_n + n within VGT_MME_TRACE_MAX_CODE_DWORDS, 4096 times a power of two: doubling
     * from 4096 never passes it */
    if (vgt_grow(&t->code_pool, &t->code_cap, t->code_n + n, 4096))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %llu MME body dwords",
                        (unsigned long long)(t->code_n + n));
    for (uint32_t i = 0; i < t->nversions; i++) t->versions[i].code = t->code_pool + t->code_off[i];
    return VGT_OK;
}

static vgt_status versions_reserve(vgt_mme_trace *t, vgt_error *err)
{
    if (t->nversions < t->versions_cap) return VGT_OK;
    uint32_t vcap = t->versions_cap, ocap = t->versions_cap;   /* versions[] and code_off[] share versions_cap */
    if (vgt_grow(&t->versions, &vcap, t->nversions + 1ull, 64) || vgt_grow(&t->code_off, &ocap, t->nversions + 1ull, 64))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME macro versions", t->nversions + 1);
    t->versions_cap = vcap < ocap ? vcap : ocap;
    return VGT_OK;
}

vgt_status mt_version(vgt_mme_trace *t, mt_object *o, uint32_t j, uint32_t start, uint32_t start_dword, uint64_t hash,
                      uint32_t dwords, uint64_t submission, uint64_t seq, uint32_t *id, vgt_error *err)
{
    *id = find(t, o, j, start_dword, hash);
    if (*id != MT_NONE) return VGT_OK;
    if (t->nversions >= VGT_MME_TRACE_MAX_VERSIONS || t->code_n + dwords > VGT_MME_TRACE_MAX_CODE_DWORDS) {
        t->stats.dropped_versions++;
        return VGT_OK;
    }
    if (2 * (t->nversions + 1) > t->nslots) VGT_TRY(slots_grow(t, err));
    VGT_TRY(versions_reserve(t, err));
    VGT_TRY(code_reserve(t, dwords, err));
    uint32_t used = 0;
    const uint32_t *iram = vgt_mme_tracker_iram(o->chan->tr, &used);
    uint32_t have = start_dword < used ? used - start_dword : 0;
    if (have > dwords) have = dwords;
    uint32_t *dst = t->code_pool + t->code_n;
    if (have) memcpy(dst, iram + start_dword, have * sizeof *dst);
    memset(dst + have, 0, (dwords - have) * sizeof *dst);

    uint32_t i = t->nversions++;
    t->code_off[i] = t->code_n;
    t->code_n += dwords;
    vgt_mme_trace_macro *v = &t->versions[i];
    memset(v, 0, sizeof *v);
    v->id = i;
    v->client = o->client;
    v->channel = o->channel;
    v->channel_alloc_seq = o->alloc_seq;
    v->cls = o->cls;
    v->fmt = o->fmt;
    v->index = j;
    v->start_dword = start_dword;
    v->start = start;
    v->dwords = dwords;
    v->hash = hash;
    v->first_submission = submission;
    v->first_seq = seq;
    v->code = dst;
    v->static_categories = vgt_mme_static_categories(o->fmt, o->cls, dst, dwords);
    uint32_t h = version_hash(v);
    while (t->slots[h & (t->nslots - 1)]) h++;
    t->slots[h & (t->nslots - 1)] = i + 1;
    t->stats.versions = t->nversions;
    *id = i;
    return VGT_OK;
}

vgt_status mt_check_bindings(vgt_mme_trace *t, mt_object *o, uint64_t submission, uint64_t seq, vgt_error *err)
{
    for (uint32_t j = 0; j < VGT_MME_MACRO_COUNT; j++) {
        uint32_t start, start_dword, dwords;
        uint64_t hash;
        if (vgt_mme_tracker_macro(o->chan->tr, o->cls, j, &start, &start_dword, &hash, &dwords, NULL) != VGT_OK) continue;
        uint32_t cur = o->cur_version[j];
        if (cur != MT_NONE && t->versions[cur].start_dword == start_dword && t->versions[cur].hash == hash) continue;
        if (!dwords) continue;   /* bound to a start nothing was uploaded at (yet) */
        uint32_t id;
        VGT_TRY(mt_version(t, o, j, start, start_dword, hash, dwords, submission, seq, &id, err));
        o->cur_version[j] = id;
    }
    return VGT_OK;
}

void mt_registry_free(vgt_mme_trace *t)
{
    free(t->versions);
    free(t->code_off);
    free(t->code_pool);
    free(t->slots);
}
