/* model_lend.c: loans of record bytes (vgt_model_lend). A page keeps pointers to up to MODEL_PIECES
 * disjoint pieces of lent bytes instead of copies; any later write to the page cuts its bytes out of the
 * pieces (a piece overwritten whole is never copied). Each loan lists the pages it gave a piece to, so that
 * its reclaim copies the pieces still there without a search. A piece is copied early only when a page
 * has no room for another, or where a cut would split it with no room for the second half. */
#include <stdlib.h>

#include "model_impl.h"
#include "vgt/grow.h"

/* Below this, a copy costs less than the bookkeeping (ring entries are 8 bytes). */
#define LEND_MIN 512u

int model_may_lend(const vgt_model *m, const uint8_t *src, uint64_t len)
{
    if (!m->cur_loan || len < LEND_MIN) return 0;
    const model_loan *l = &m->loans[m->nloans - 1];
    uintptr_t a = (uintptr_t)src;
    return a >= l->lo && a <= l->hi && len <= l->hi - a;
}

/* Lists page p under the current loan (for its reclaim); 0 on no memory (the write then copies). */
static int note(vgt_model *m, model_page *p)
{
    model_loan *l = &m->loans[m->nloans - 1];
    if (p->listed_id == l->id) return 1;
    if (vgt_grow(&l->vas, &l->vascap, l->nvas + 1ull, 256)) return 0;
    l->vas[l->nvas++] = p->va;
    p->listed_id = l->id;
    return 1;
}

static void settle_piece(model_page *p, uint32_t i)
{
    const model_piece *q = &p->pieces[i];
    memcpy(p->bytes + q->lo, q->src, q->hi - q->lo);
    p->pieces[i] = p->pieces[--p->npieces];
}

void model_page_settle(model_page *p)
{
    while (p->npieces) settle_piece(p, p->npieces - 1);
}

/* Removes [lo, hi) from the page's pieces: a piece inside goes, one overlapping an end is trimmed, one
 * that [lo, hi) would split in two is split (or copied, when the page has no room for another piece). */
static void cut(model_page *p, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = 0; i < p->npieces;) {
        model_piece *q = &p->pieces[i];
        if (hi <= q->lo || q->hi <= lo) {                   /* apart */
            i++;
        } else if (lo <= q->lo && q->hi <= hi) {            /* covered: never copied */
            p->pieces[i] = p->pieces[--p->npieces];
        } else if (lo <= q->lo) {                           /* its start overwritten */
            q->src += hi - q->lo;
            q->lo = hi;
            i++;
        } else if (q->hi <= hi) {                           /* its end overwritten */
            q->hi = lo;
            i++;
        } else if (p->npieces < MODEL_PIECES) {             /* its middle: two pieces */
            model_piece tail = {q->src + (hi - q->lo), q->id, hi, q->hi};
            q->hi = lo;
            p->pieces[p->npieces++] = tail;
            i++;
        } else {
            settle_piece(p, i);
        }
    }
}

void model_put_bytes(vgt_model *m, model_page *p, uint32_t off, const uint8_t *src, uint32_t n, int lend)
{
    if (p->npieces) cut(p, off, off + n);
    if (lend && note(m, p)) {
        if (p->npieces == MODEL_PIECES) settle_piece(p, 0);
        p->pieces[p->npieces++] = (model_piece){src, m->loans[m->nloans - 1].id, off, off + n};
        return;
    }
    memcpy(p->bytes + off, src, n);
}

static int find(const vgt_model *m, uint64_t id)
{
    for (uint32_t i = 0; i < m->nloans; i++)
        if (m->loans[i].id == id) return (int)i;
    return -1;
}

int vgt_model_lend(vgt_model *m, uint64_t id, const void *bytes, uint64_t len)
{
    m->cur_loan = 0;
    if (!id || !bytes || find(m, id) >= 0 || (uintptr_t)bytes + len < (uintptr_t)bytes) return 0;
    if (vgt_grow(&m->loans, &m->loancap, m->nloans + 1ull, 8)) return 0;
    m->loans[m->nloans++] = (model_loan){id, (uintptr_t)bytes, (uintptr_t)bytes + len, NULL, 0, 0};
    m->cur_loan = 1;
    return 1;
}

void vgt_model_reclaim(vgt_model *m, uint64_t id)
{
    int i = find(m, id);
    if (i < 0) return;
    model_loan *l = &m->loans[i];
    for (uint32_t k = 0; k < l->nvas; k++) {
        uint32_t ix;
        if (!u64map_get(&m->pagemap, l->vas[k] / VGT_MODEL_PAGE_SIZE, &ix)) continue;   /* forgotten since */
        model_page *p = &m->pages[ix];
        for (uint32_t j = p->npieces; j-- > 0;)
            if (p->pieces[j].id == id) settle_piece(p, j);
        if (p->listed_id == id) p->listed_id = 0;
    }
    free(l->vas);
    if ((uint32_t)i == m->nloans - 1) m->cur_loan = 0;
    memmove(l, l + 1, sizeof *l * (m->nloans - 1 - (uint32_t)i));
    m->nloans--;
}

uint32_t vgt_model_loans(const vgt_model *m) { return m->nloans; }

void model_loans_free(vgt_model *m)
{
    for (uint32_t i = 0; i < m->nloans; i++) free(m->loans[i].vas);
    free(m->loans);
}
