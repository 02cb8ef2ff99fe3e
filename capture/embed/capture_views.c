/* capture_views.c: memory views (GPU VA ranges the capture can read) and MEMORY records read through
 * them. Views never overlap; an index sorted by gpu_va (by_va) makes a lookup a binary search, while the
 * views themselves stay in the order they came (capture_internal.h says why). */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "vgt/devcopy.h"

/* Position in by_va of the view containing va, or -1. */
static int64_t view_pos(const vgt_capture *c, uint64_t va)
{
    uint32_t lo = 0, hi = c->nviews;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const vgt_capture_view *v = &c->views[c->by_va[mid]];
        if (va < v->gpu_va) hi = mid;
        else if (va - v->gpu_va >= v->length) lo = mid + 1;
        else return mid;
    }
    return -1;
}

/* Index in views of the view containing va, or -1. */
static int64_t view_index(const vgt_capture *c, uint64_t va)
{
    int64_t p = view_pos(c, va);
    return p < 0 ? -1 : (int64_t)c->by_va[p];
}

static uint32_t insert_pos(const vgt_capture *c, uint64_t va)
{
    uint32_t lo = 0, hi = c->nviews;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->views[c->by_va[mid]].gpu_va < va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

vgt_status cap_view_add(vgt_capture *c, const vgt_capture_view *v, uint32_t cls, int zeroed, vgt_error *err)
{
    if (v->length == 0 || v->gpu_va + v->length < v->gpu_va || (!v->host && !v->read))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: view at 0x%llx+0x%llx is empty, wraps, or has no source",
                        (unsigned long long)v->gpu_va, (unsigned long long)v->length);
    if (v->host) cap_cpu_bounds_add(c, (uint64_t)(uintptr_t)v->host, v->length);
    uint32_t pos = insert_pos(c, v->gpu_va);
    const vgt_capture_view *prev = pos > 0 ? &c->views[c->by_va[pos - 1]] : NULL;
    const vgt_capture_view *next = pos < c->nviews ? &c->views[c->by_va[pos]] : NULL;
    if (prev && prev->gpu_va + prev->length > v->gpu_va) next = prev;
    else if (next && next->gpu_va >= v->gpu_va + v->length) next = NULL;
    if (next)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: view 0x%llx+0x%llx overlaps view 0x%llx+0x%llx",
                        (unsigned long long)v->gpu_va, (unsigned long long)v->length,
                        (unsigned long long)next->gpu_va, (unsigned long long)next->length);
    VGT_TRY(cap_grow((void **)&c->views, &c->cap_views, c->nviews + 1, sizeof *c->views, VGT_CAPTURE_MAX_VIEWS,
                     "memory views", err));
    VGT_TRY(cap_grow((void **)&c->by_va, &c->cap_by_va, c->nviews + 1, sizeof *c->by_va, VGT_CAPTURE_MAX_VIEWS,
                     "memory views", err));
    memmove(&c->by_va[pos + 1], &c->by_va[pos], (c->nviews - pos) * sizeof *c->by_va);
    c->by_va[pos] = c->nviews;
    c->views[c->nviews++] = *v;
    if (c->tracker.view_added) c->tracker.view_added(c->tracker.ctx, v, cls, zeroed);
    return VGT_OK;
}

void cap_view_drop(vgt_capture *c, uint32_t i)
{
    if (c->tracker.view_removing) c->tracker.view_removing(c->tracker.ctx, &c->views[i]);
    int64_t p = view_pos(c, c->views[i].gpu_va);
    memmove(&c->by_va[p], &c->by_va[p + 1], (c->nviews - (uint32_t)p - 1) * sizeof *c->by_va);
    uint32_t last = --c->nviews;
    if (i != last) {   /* the last view takes the freed slot */
        c->views[i] = c->views[last];
        c->by_va[view_pos(c, c->views[i].gpu_va)] = i;
    }
}

vgt_status vgt_capture_add_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = cap_view_add(c, v, 0, 0, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Removes the view starting at gpu_va; *out (may be NULL) receives it. */
static vgt_status remove_locked(vgt_capture *c, uint64_t gpu_va, vgt_capture_view *out, vgt_error *err)
{
    int64_t i = view_index(c, gpu_va);
    if (i < 0 || c->views[i].gpu_va != gpu_va)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: no view starts at 0x%llx", (unsigned long long)gpu_va);
    if (out) *out = c->views[i];
    cap_view_drop(c, (uint32_t)i);
    return VGT_OK;
}

vgt_status vgt_capture_remove_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = remove_locked(c, gpu_va, NULL, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_map_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = cap_view_add(c, v, 0, 0, err);
    if (rc == VGT_OK) {
        vgt_rec_gpu_map m = { .client = v->client, .memory = v->memory, .gpu_va = v->gpu_va, .offset = v->memory_offset,
                              .length = v->length, .source = VGT_MAP_EMBEDDED };
        rc = vgt_write_gpu_map(c->w, vgt_now_ns(), &m, err);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_unmap_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_capture_view v = {0};   /* filled on VGT_OK; -O2 cannot see that */
    vgt_status rc = remove_locked(c, gpu_va, &v, err);
    if (rc == VGT_OK) {
        vgt_rec_gpu_unmap u = { .client = v.client, .memory = v.memory, .gpu_va = v.gpu_va, .length = v.length,
                                .source = VGT_MAP_EMBEDDED };
        rc = vgt_write_gpu_unmap(c->w, vgt_now_ns(), &u, err);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

uint64_t cap_read_locked(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len)
{
    uint64_t done = 0;
    while (done < len) {
        int64_t i = view_index(c, gpu_va + done);
        if (i < 0) break;
        const vgt_capture_view *v = &c->views[i];
        uint64_t off = gpu_va + done - v->gpu_va, n = v->length - off;
        if (n > len - done) n = len - done;
        if (v->host) {
            if (c->opt.device_views) vgt_copy_from_device((uint8_t *)dst + done, (const uint8_t *)v->host + off, n);
            else memcpy((uint8_t *)dst + done, (const uint8_t *)v->host + off, n);
            done += n;
            continue;
        }
        while (n > 0) {   /* the callback takes 32-bit lengths */
            uint32_t part = n > (1u << 30) ? (1u << 30) : (uint32_t)n;
            uint32_t got = v->read(v->ctx, gpu_va + done, (uint8_t *)dst + done, part);
            done += got > part ? part : got;
            if (got < part) return done;
            n -= part;
        }
    }
    return done;
}

const void *cap_direct_locked(vgt_capture *c, uint64_t gpu_va, uint64_t len)
{
    int64_t i = view_index(c, gpu_va);
    if (i < 0) return NULL;
    const vgt_capture_view *v = &c->views[i];
    uint64_t off = gpu_va - v->gpu_va;
    if (!v->host || c->opt.device_views || len > v->length - off) return NULL;
    return (const uint8_t *)v->host + off;
}

uint64_t vgt_capture_read(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len)
{
    pthread_mutex_lock(&c->mu);
    uint64_t n = cap_read_locked(c, gpu_va, dst, len);
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* The scratch buffer grown to at least n bytes, for the copy of a piece at va (named in the error). */
static vgt_status scratch_reserve(vgt_capture *c, uint64_t va, uint32_t n, vgt_error *err)
{
    if (c->scratch_size >= n) return VGT_OK;
    void *p = realloc(c->scratch, n);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, va, "capture: out of memory reading %u bytes at 0x%llx", n,
                            (unsigned long long)va);
    c->scratch = p;
    c->scratch_size = n;
    return VGT_OK;
}

/* One MEMORY record of at most VGT_CAPTURE_MAX_MEMORY_RECORD bytes from a single view. */
static vgt_status memory_piece(vgt_capture *c, const vgt_capture_view *v, uint64_t va, uint32_t n, uint32_t reason,
                               vgt_error *err)
{
    const void *data = v->host && !c->opt.device_views ? (const uint8_t *)v->host + (va - v->gpu_va) : NULL;
    if (!data && v->host) {
        VGT_TRY(scratch_reserve(c, va, n, err));
        vgt_copy_from_device(c->scratch, (const uint8_t *)v->host + (va - v->gpu_va), n);
        data = c->scratch;
    } else if (!data) {
        VGT_TRY(scratch_reserve(c, va, n, err));
        uint32_t got = v->read(v->ctx, va, c->scratch, n);
        if (got < n) {
            c->stats.read_failures++;
            return VGT_FAIL(err, VGT_E_FAULT, va, "capture: view read %u of %u bytes at 0x%llx", got, n,
                            (unsigned long long)va);
        }
        data = c->scratch;
    }
    vgt_rec_memory m = { .gpu_va = va, .length = n, .reason = reason, .memory = v->memory, .data = data };
    c->stats.memory_records++;
    c->stats.memory_bytes += n;
    return vgt_write_memory(c->w, vgt_now_ns(), &m, err);
}

vgt_status vgt_capture_memory(vgt_capture *c, uint64_t gpu_va, uint64_t length, uint32_t reason, vgt_error *err)
{
    vgt_status rc = VGT_OK;
    if (!cap_lock_live(c)) return VGT_OK;
    uint64_t va = gpu_va, end = gpu_va + length;
    while (rc == VGT_OK && va < end) {
        int64_t i = view_index(c, va);
        if (i < 0) {
            rc = VGT_FAIL(err, VGT_E_NOT_FOUND, va, "capture: GPU VA 0x%llx is in no memory view", (unsigned long long)va);
            break;
        }
        vgt_capture_view v = c->views[i];
        uint64_t n = v.gpu_va + v.length - va;
        if (n > end - va) n = end - va;
        if (n > VGT_CAPTURE_MAX_MEMORY_RECORD) n = VGT_CAPTURE_MAX_MEMORY_RECORD;
        rc = memory_piece(c, &v, va, (uint32_t)n, reason, err);
        va += n;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}
