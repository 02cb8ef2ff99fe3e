/* model_mem.c: memory contents by GPU VA: a sparse map of 4 KiB pages (hash table keyed by VA >> 12).
 * A page fully written holds no mask; a partly known page holds a byte mask (non-zero = known). Page
 * storage counts against the model's memory limit (vgt_model_set_memory_limit). Some of a page's bytes
 * may be pieces of lent record bytes (model_lend.c): reads and foreach put them in. */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "vgt/grow.h"

#define PAGE VGT_MODEL_PAGE_SIZE

static vgt_status new_page(vgt_model *m, uint64_t va, model_page **out, vgt_error *err)
{
    if (m->mem_bytes + PAGE > m->mem_limit)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET,
                        "model memory limit of %llu bytes reached at GPU VA 0x%llx (%u pages held)",
                        (unsigned long long)m->mem_limit, (unsigned long long)va, m->npages);
    if (vgt_grow(&m->pages, &m->pagecap, m->npages + 1ull, 256))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %u pages", m->npages + 1);
    model_page *p = &m->pages[m->npages];
    p->va = va;
    p->bytes = calloc(1, PAGE);
    p->mask = NULL;
    p->known = 0;
    p->npieces = 0;
    p->listed_id = 0;
    if (!p->bytes || u64map_put(&m->pagemap, va / PAGE, m->npages)) {
        free(p->bytes);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for the page at 0x%llx", (unsigned long long)va);
    }
    m->npages++;
    m->mem_bytes += PAGE;
    *out = p;
    return VGT_OK;
}

static model_page *get_page(const vgt_model *m, uint64_t va)
{
    uint32_t i;
    return u64map_get(&m->pagemap, va / PAGE, &i) ? &m->pages[i] : NULL;
}

static void drop_mask(vgt_model *m, model_page *p)
{
    if (!p->mask) return;
    free(p->mask);
    p->mask = NULL;
    m->mem_bytes -= PAGE;
}

/* Marks [off, off+n) of the page known. */
static vgt_status mark_known(vgt_model *m, model_page *p, uint32_t off, uint32_t n, vgt_error *err)
{
    if (p->known == PAGE) return VGT_OK;
    if (n == PAGE) {
        drop_mask(m, p);
        p->known = PAGE;
        return VGT_OK;
    }
    if (!p->mask) {
        if (m->mem_bytes + PAGE > m->mem_limit)
            return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "model memory limit of %llu bytes reached at GPU VA 0x%llx",
                            (unsigned long long)m->mem_limit, (unsigned long long)(p->va + off));
        p->mask = calloc(1, PAGE);
        if (!p->mask) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for a page mask");
        m->mem_bytes += PAGE;
    }
    /* mask bytes are 0 or 1: count those already set eight at a time (the byte sum of a word), then set
     * them all; a byte-at-a-time loop here was a tenth of a census's decoding thread */
    uint32_t had = 0, i = off, end = off + n;
    for (; i + 8 <= end; i += 8) {
        uint64_t x;
        memcpy(&x, p->mask + i, 8);
        had += (uint32_t)((x * 0x0101010101010101ull) >> 56);
    }
    for (; i < end; i++) had += p->mask[i];
    p->known += n - had;
    memset(p->mask + off, 1, n);
    if (p->known == PAGE) drop_mask(m, p);
    return VGT_OK;
}

static vgt_status check_range(uint64_t va, uint64_t len, vgt_error *err)
{
    /* by the last byte: a range may end exactly at 2^64; a wrapping one is the trace's fault, as a GPU_MAP's */
    if (len && va + (len - 1) < va)
        return VGT_FAIL(err, VGT_E_FORMAT, VGT_NO_OFFSET, "memory range of %llu bytes at 0x%llx wraps around",
                        (unsigned long long)len, (unsigned long long)va);
    return VGT_OK;
}

vgt_status model_mem_put(vgt_model *m, uint64_t gpu_va, const void *src, uint64_t len, int lendable, vgt_error *err)
{
    VGT_TRY(check_range(gpu_va, len, err));
    const uint8_t *s = src;
    while (len) {
        uint64_t base = gpu_va & ~(uint64_t)(PAGE - 1);
        uint32_t off = (uint32_t)(gpu_va - base);
        uint32_t n = len < PAGE - off ? (uint32_t)len : PAGE - off;
        model_page *p;
        if (m->hot_ix1 && m->hot_va == base) p = &m->pages[m->hot_ix1 - 1];
        else {
            p = get_page(m, base);
            if (!p) VGT_TRY(new_page(m, base, &p, err));
            m->hot_va = base;
            m->hot_ix1 = (uint32_t)(p - m->pages) + 1;
        }
        /* known first: a page over the limit keeps the bytes copied, as it always did */
        vgt_status rc = mark_known(m, p, off, n, err);
        model_put_bytes(m, p, off, s, n, lendable && rc == VGT_OK && model_may_lend(m, s, n));
        VGT_TRY(rc);
        gpu_va += n;
        s += n;
        len -= n;
    }
    return VGT_OK;
}

vgt_status vgt_model_mem_write(vgt_model *m, uint64_t gpu_va, const void *src, uint64_t len, vgt_error *err)
{
    return model_mem_put(m, gpu_va, src, len, 0, err);
}

vgt_status vgt_model_mem_read(const vgt_model *m, uint64_t gpu_va, void *dst, uint64_t len, uint64_t *known,
                              vgt_error *err)
{
    VGT_TRY(check_range(gpu_va, len, err));
    uint8_t *d = dst;
    uint64_t k = 0;
    while (len) {
        uint64_t base = gpu_va & ~(uint64_t)(PAGE - 1);
        uint32_t off = (uint32_t)(gpu_va - base);
        uint32_t n = len < PAGE - off ? (uint32_t)len : PAGE - off;
        const model_page *p = get_page(m, base);
        if (!p) {
            memset(d, 0, n);
        } else if (!p->mask) {
            memcpy(d, p->bytes + off, n);
            k += n;
        } else {
            for (uint32_t i = 0; i < n; i++) {
                d[i] = p->mask[off + i] ? p->bytes[off + i] : 0;
                k += p->mask[off + i] != 0;
            }
        }
        if (p && p->npieces) model_page_pieces(p, off, n, d);   /* known bytes, over the stale ones */
        gpu_va += n;
        d += n;
        len -= n;
    }
    if (known) *known = k;
    return VGT_OK;
}

static void delete_page(vgt_model *m, uint32_t i)
{
    m->hot_ix1 = 0;   /* indices move */
    model_page *p = &m->pages[i];
    u64map_del(&m->pagemap, p->va / PAGE);
    drop_mask(m, p);
    free(p->bytes);
    m->mem_bytes -= PAGE;
    if (i != m->npages - 1) {
        m->pages[i] = m->pages[m->npages - 1];
        u64map_put(&m->pagemap, m->pages[i].va / PAGE, i);
    }
    m->npages--;
}

/* Forgets [va, va+len) of one page. */
static void forget_in_page(vgt_model *m, uint32_t i, uint64_t va, uint64_t end)
{
    model_page *p = &m->pages[i];
    uint64_t lo = va > p->va ? va : p->va, hi = end < p->va + PAGE ? end : p->va + PAGE;
    if (lo >= hi) return;
    if (lo == p->va && hi == p->va + PAGE) {
        delete_page(m, i);
        return;
    }
    model_page_settle(p);   /* the bytes left known stay known: simplest with them all in the page */
    if (!p->mask) {
        p->mask = malloc(PAGE);
        if (!p->mask) {           /* cannot keep a partial page: forget all of it */
            delete_page(m, i);
            return;
        }
        memset(p->mask, 1, PAGE);
        m->mem_bytes += PAGE;
    }
    for (uint64_t a = lo; a < hi; a++) {
        p->known -= p->mask[a - p->va] != 0;
        p->mask[a - p->va] = 0;
        p->bytes[a - p->va] = 0;
    }
    if (!p->known) delete_page(m, i);
}

void model_mem_forget(vgt_model *m, uint64_t gpu_va, uint64_t len)
{
    uint64_t end = gpu_va + len < gpu_va ? UINT64_MAX : gpu_va + len;
    if (len / PAGE > m->npages) {   /* a large range: walk the pages held rather than the range */
        for (uint32_t i = 0; i < m->npages;) {
            uint32_t before = m->npages;
            forget_in_page(m, i, gpu_va, end);
            if (m->npages == before) i++;
        }
        return;
    }
    for (uint64_t base = gpu_va & ~(uint64_t)(PAGE - 1); base < end; base += PAGE) {
        uint32_t i;
        if (u64map_get(&m->pagemap, base / PAGE, &i)) forget_in_page(m, i, gpu_va, end);
        if (base + PAGE < base) break;
    }
}

static int by_va(const void *a, const void *b)
{
    uint64_t x = (*(model_page *const *)a)->va, y = (*(model_page *const *)b)->va;
    return x < y ? -1 : x > y;
}

vgt_status vgt_model_mem_foreach(const vgt_model *m, vgt_model_page_fn fn, void *ctx, vgt_error *err)
{
    if (!m->npages) return VGT_OK;
    model_page **order = malloc(sizeof *order * m->npages);
    if (!order) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory to sort %u pages", m->npages);
    for (uint32_t i = 0; i < m->npages; i++) order[i] = &m->pages[i];
    qsort(order, m->npages, sizeof *order, by_va);
    uint8_t *compose = NULL;   /* a page with pieces, put together */
    for (uint32_t i = 0; i < m->npages; i++) {
        const model_page *p = order[i];
        const uint8_t *bytes = p->bytes;
        if (p->npieces) {
            if (!compose && !(compose = malloc(PAGE))) {
                free(order);
                return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory to put a page together");
            }
            memcpy(compose, p->bytes, PAGE);
            model_page_pieces(p, 0, PAGE, compose);
            bytes = compose;
        }
        if (fn(ctx, p->va, bytes, p->mask)) break;
    }
    free(compose);
    free(order);
    return VGT_OK;
}

uint64_t vgt_model_mem_bytes(const vgt_model *m) { return m->mem_bytes; }

void model_mem_free(vgt_model *m)
{
    for (uint32_t i = 0; i < m->npages; i++) {
        free(m->pages[i].bytes);
        free(m->pages[i].mask);
    }
    free(m->pages);
    u64map_free(&m->pagemap);
    model_loans_free(m);
}
