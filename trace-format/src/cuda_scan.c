/* cuda_scan.c: a fold of a trace's CUDA records (include/vgt/cuda.h): counts for info, census and db, and
 * the consistency every CUDA trace keeps: each image stored once; each launched function looked up before
 * its launch; each call that put work on the GPU linked to a submission of the trace (the link rule of
 * vgt_cuda_link_of); submission counters that never run ahead of the trace. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/cuda.h"
#include "vgt/grow.h"

typedef struct vgt_cuda_scan_work {
    uint64_t seq;
    uint16_t type;
    vgt_cuda_call_head head;
} scan_work;

void vgt_cuda_scan_init(vgt_cuda_scan *s) { memset(s, 0, sizeof *s); }

void vgt_cuda_scan_free(vgt_cuda_scan *s)
{
    free(s->img);
    free(s->fn);
    free(s->work);
    s->img = s->fn = NULL;
    s->work = NULL;
}

__attribute__((format(printf, 2, 3))) static void problem(vgt_cuda_scan *s, const char *fmt, ...)
{
    if (s->problems < VGT_CUDA_SCAN_MAX_PROBLEMS) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->problem[s->problems], sizeof s->problem[0], fmt, ap);
        va_end(ap);
    }
    s->problems++;
}

/* A small set of 64-bit keys (linear: traces hold few images and functions). */
static int set_has(const uint64_t *v, uint64_t n, uint64_t k)
{
    for (uint64_t i = 0; i < n; i++)
        if (v[i] == k) return 1;
    return 0;
}

static void set_add(uint64_t **v, uint64_t *n, uint64_t *cap, uint64_t k)
{
    if (set_has(*v, *n, k)) return;
    if (vgt_grow(v, cap, *n + 1, 64)) return;   /* out of memory: the set stays as it is; later references may be reported */
    (*v)[(*n)++] = k;
}

/* An image record (stored or referenced): counted, and said when its hash came before (again: what). */
static void note_image(vgt_cuda_scan *s, const vgt_record *r, uint64_t hash, uint32_t len, const char *again)
{
    if (set_has(s->img, s->nimg, hash))
        problem(s, "seq %llu: %s 0x%016llx %s", (unsigned long long)r->seq,
                r->type == VGT_REC_CUDA_IMAGE_REF ? "CUDA_IMAGE_REF" : "CUDA_IMAGE", (unsigned long long)hash, again);
    set_add(&s->img, &s->nimg, &s->capimg, hash);
    s->images++;
    s->image_bytes += len;
}

static void keep_work(vgt_cuda_scan *s, const vgt_record *r, const vgt_cuda_call_head *h)
{
    if (vgt_grow(&s->work, &s->capwork, s->nwork + 1, 256)) return;
    s->work[s->nwork++] = (scan_work){r->seq, r->type, *h};
}

vgt_status vgt_cuda_scan_record(vgt_cuda_scan *s, const vgt_record *r, vgt_error *err)
{
    switch (r->type) {
    case VGT_REC_GPFIFO_SUBMIT: s->submits++; return VGT_OK;
    case VGT_REC_CUDA_MODULE: s->legacy_modules++; return VGT_OK;
    case VGT_REC_CUDA_LAUNCH: s->legacy_launches++; return VGT_OK;
    case VGT_REC_CUDA_IMAGE: {
        vgt_rec_cuda_image im;
        VGT_TRY(vgt_decode_cuda_image(r, &im, err));
        note_image(s, r, im.hash, im.image_length, "stored a second time");
        return VGT_OK;
    }
    case VGT_REC_CUDA_IMAGE_REF: {
        vgt_rec_cuda_image_ref im;
        VGT_TRY(vgt_decode_cuda_image_ref(r, &im, err));
        note_image(s, r, im.hash, im.image_length, "names an image stored before");
        if (!im.path_length)
            problem(s, "seq %llu: CUDA_IMAGE_REF 0x%016llx names no file", (unsigned long long)r->seq,
                    (unsigned long long)im.hash);
        s->ref_images++;
        s->ref_bytes += im.image_length;
        return VGT_OK;
    }
    default: break;
    }
    if (!vgt_rec_is_cuda_api(r->type)) return VGT_OK;
    vgt_cuda_call_head h;
    switch (r->type) {
    case VGT_REC_CUDA_LOAD: {
        vgt_rec_cuda_load l;
        VGT_TRY(vgt_decode_cuda_load(r, &l, err));
        h = l.call;
        s->loads++;
        break;
    }
    case VGT_REC_CUDA_FUNCTION: {
        vgt_rec_cuda_function f;
        VGT_TRY(vgt_decode_cuda_function(r, &f, err));
        h = f.call;
        s->functions++;
        if (h.result == 0) set_add(&s->fn, &s->nfn, &s->capfn, f.function);
        break;
    }
    case VGT_REC_CUDA_KERNEL: {
        vgt_rec_cuda_kernel k;
        VGT_TRY(vgt_decode_cuda_kernel(r, &k, err));
        h = k.call;
        if (h.flags & VGT_CUDA_KERNEL_GRAPH_NODE) s->graph_nodes++;
        else s->launches++;
        if (h.result == 0 && !set_has(s->fn, s->nfn, k.function))
            problem(s, "seq %llu: %s of function 0x%llx, which no CUDA_FUNCTION record looked up before",
                    (unsigned long long)r->seq, vgt_cuda_api_name(h.api) ? vgt_cuda_api_name(h.api) : "launch",
                    (unsigned long long)k.function);
        break;
    }
    case VGT_REC_CUDA_MEMORY: {
        vgt_rec_cuda_memory m;
        VGT_TRY(vgt_decode_cuda_memory(r, &m, err));
        h = m.call;
        s->memory_ops++;
        if (m.op == 0 || m.op >= VGT_CUDA_OP_COUNT)
            problem(s, "seq %llu: CUDA_MEMORY with unknown op %u", (unsigned long long)r->seq, m.op);
        break;
    }
    default: {
        vgt_rec_cuda_call c;
        VGT_TRY(vgt_decode_cuda_call(r, &c, err));
        h = c.call;
        s->calls++;
        if (h.api == VGT_CUDA_GRAPH_LAUNCH) s->graph_launches++;
        break;
    }
    }
    if (h.api < VGT_CUDA_API_COUNT) s->api_count[h.api]++;
    else problem(s, "seq %llu: unknown CUDA API number %u", (unsigned long long)r->seq, h.api);
    if (h.submits_after < h.submits_before || h.submits_after > s->submits)
        problem(s, "seq %llu: %s counts submissions %llu..%llu, but the trace had %llu GPFIFO_SUBMIT records by then",
                (unsigned long long)r->seq, vgt_cuda_api_name(h.api) ? vgt_cuda_api_name(h.api) : "call",
                (unsigned long long)h.submits_before, (unsigned long long)h.submits_after,
                (unsigned long long)s->submits);
    if (vgt_cuda_does_work(r, &h)) keep_work(s, r, &h);
    return VGT_OK;
}

void vgt_cuda_scan_finish(vgt_cuda_scan *s)
{
    s->work_calls = s->nwork;
    for (uint64_t i = 0; i < s->nwork; i++) {
        vgt_cuda_link l;
        vgt_cuda_link_of(&s->work[i].head, s->submits, &l);
        if (!l.count) {
            const char *n = vgt_cuda_api_name(s->work[i].head.api);
            problem(s, "seq %llu: %s is linked to no submission (no GPFIFO_SUBMIT while it ran, and none after it)",
                    (unsigned long long)s->work[i].seq, n ? n : "call");
            continue;
        }
        s->work_linked++;
        s->work_deferred += l.deferred;
    }
}

int vgt_cuda_scan_any(const vgt_cuda_scan *s)
{
    return s->images || s->loads || s->functions || s->launches || s->graph_nodes || s->memory_ops || s->calls ||
           s->legacy_modules || s->legacy_launches;
}
