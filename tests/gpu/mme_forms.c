/* mme_forms.c: TU104 group forms (mme_forms.h). */
#include "mme_forms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/mme.h"

typedef struct names {
    uint8_t reg[24];   /* register -> letter index + 1 */
    unsigned next;
} names;

static void put(char *out, size_t *n, const char *fmt, const char *s)
{
    int w = snprintf(out + *n, MME_FORM_CHARS - *n, fmt, s);
    if (w > 0) *n = *n + (size_t)w < MME_FORM_CHARS ? *n + (size_t)w : MME_FORM_CHARS - 1;
}

static const char *kind(names *nm, unsigned r)
{
    static const char *const letters[24] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
                                             "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x" };
    switch (r) {
    case VGT_MME_TU104_ZERO: return "Z";
    case VGT_MME_TU104_IMM: return "#";
    case VGT_MME_TU104_IMMPAIR: return "#pair";
    case VGT_MME_TU104_IMM32: return "#32";
    case VGT_MME_TU104_LOAD0: return "L0";
    case VGT_MME_TU104_LOAD1: return "L1";
    }
    if (r >= 24) return "?";
    if (!nm->reg[r]) nm->reg[r] = (uint8_t)++nm->next;
    return letters[nm->reg[r] - 1];
}

static int is_nop_alu(const vgt_mme_tu104_alu *a)
{
    return a->op == VGT_MME_TU104_ADD && a->dst == VGT_MME_TU104_ZERO && a->src[0] == VGT_MME_TU104_ZERO &&
           a->src[1] == VGT_MME_TU104_ZERO;
}

static int is_control(unsigned op) { return op >= VGT_MME_TU104_LOOP && op <= VGT_MME_TU104_BEQ; }

/* Where control flow goes, the part of an immediate that is part of the form. */
static void control_part(const vgt_mme_tu104_alu *a, char *out, size_t *n)
{
    char b[48];
    if (a->op == VGT_MME_TU104_LOOP) snprintf(b, sizeof b, " x%u", a->imm);
    else if (a->op == VGT_MME_TU104_JAL) snprintf(b, sizeof b, " %s", (a->imm & 0x7fff) ? "fwd" : "self");
    else {
        unsigned off = a->imm & 0x1fff;
        snprintf(b, sizeof b, " ?%c%s %s", a->imm & 0x8000 ? 'T' : 'F', a->imm & 0x4000 ? " b14" : "",
                 off == 0x1000 ? "exit" : off & 0x1000 ? "back" : off ? "fwd" : "self");
    }
    put(out, n, "%s", b);
}

static void decode_group(const uint32_t *code, uint32_t g, vgt_mme_tu104_inst *in) { vgt_mme_tu104_decode(code + 3 * g, in); }

void mme_form_of(const uint32_t *code, uint32_t ndwords, uint32_t g, char out[MME_FORM_CHARS])
{
    size_t n = 0;
    out[0] = 0;
    vgt_mme_tu104_inst in, prev;
    decode_group(code, g, &in);
    /* its place: after end_next, after a control op, inside a LOOP body (any LOOP before it reaching it) */
    if (g) {
        decode_group(code, g - 1, &prev);
        if (prev.end_next) put(out, &n, "%s", "[after-end]");
        if (is_control(prev.alu[0].op) || is_control(prev.alu[1].op)) put(out, &n, "%s", "[after-ctl]");
    }
    for (uint32_t k = 0; k < g && 3 * k + 3 <= ndwords; k++) {
        vgt_mme_tu104_inst l;
        decode_group(code, k, &l);
        for (int i = 0; i < 2; i++)
            if (l.alu[i].op == VGT_MME_TU104_LOOP && g > k && g <= k + (uint32_t)l.alu[i].imm - 1) {
                put(out, &n, "%s", "[in-loop]");
                k = g;
                break;
            }
    }
    names nm;
    memset(&nm, 0, sizeof nm);
    if (in.pred_mode || in.pred == VGT_MME_TU104_LOAD0 || in.pred == VGT_MME_TU104_LOAD1) {
        put(out, &n, "@%s ", vgt_mme_tu104_pred_name(in.pred_mode));
        put(out, &n, "%s ; ", kind(&nm, in.pred));
    }
    for (int i = 0; i < 2; i++) {
        const vgt_mme_tu104_alu *a = &in.alu[i];
        if (is_nop_alu(a)) {
            put(out, &n, "%s", "- ; ");
            continue;
        }
        put(out, &n, "%s ", vgt_mme_tu104_op_name(a->op));
        put(out, &n, "%s,", kind(&nm, a->dst));
        put(out, &n, "%s,", kind(&nm, a->src[0]));
        put(out, &n, "%s", kind(&nm, a->src[1]));
        if (is_control(a->op)) control_part(a, out, &n);
        put(out, &n, "%s", " ; ");
    }
    for (int i = 0; i < 2; i++) {
        put(out, &n, "%s/", vgt_mme_tu104_out_name(in.out[i].mthd));
        put(out, &n, "%s", vgt_mme_tu104_out_name(in.out[i].emit));
        put(out, &n, "%s", i ? "" : " ; ");
    }
    if (in.end_next) put(out, &n, "%s", " ; end_next");
}

int mme_forms_add_macro(mme_forms *t, const uint32_t *code, uint32_t ndwords)
{
    for (uint32_t g = 0; 3 * g + 3 <= ndwords; g++) {
        if (t->n == t->cap) {
            uint32_t cap = t->cap ? 2 * t->cap : 256;
            void *p = realloc(t->form, (size_t)cap * MME_FORM_CHARS);
            if (!p) return 0;
            t->form = p;
            t->cap = cap;
        }
        mme_form_of(code, ndwords, g, t->form[t->n++]);
        t->groups++;
    }
    t->macros++;
    return 1;
}

static int cmp_form(const void *a, const void *b) { return strcmp(a, b); }

void mme_forms_finish(mme_forms *t)
{
    if (!t->n) return;
    qsort(t->form, t->n, MME_FORM_CHARS, cmp_form);
    uint32_t w = 1;
    for (uint32_t i = 1; i < t->n; i++)
        if (strcmp(t->form[i], t->form[w - 1])) memmove(t->form[w++], t->form[i], MME_FORM_CHARS);
    t->n = w;
}

int mme_forms_has(const mme_forms *t, const char *form)
{
    return t->n && bsearch(form, t->form, t->n, MME_FORM_CHARS, cmp_form) != NULL;
}

int mme_forms_check_macro(const mme_forms *t, const uint32_t *code, uint32_t ndwords, char *why, size_t cap)
{
    if (!ndwords || ndwords % 3) {
        snprintf(why, cap, "%u dwords: not whole groups", ndwords);
        return 0;
    }
    for (uint32_t g = 0; 3 * g < ndwords; g++) {
        vgt_mme_tu104_inst in;
        const char *w = NULL;
        decode_group(code, g, &in);
        if (vgt_mme_tu104_check(&in, &w) != VGT_MME_OK) {
            snprintf(why, cap, "group %u: illegal: %s", g, w ? w : "?");
            return 0;
        }
        char f[MME_FORM_CHARS];
        mme_form_of(code, ndwords, g, f);
        if (!mme_forms_has(t, f)) {
            snprintf(why, cap, "group %u: form \"%s\" is in no driver macro", g, f);
            return 0;
        }
    }
    return 1;
}

void mme_forms_free(mme_forms *t)
{
    free(t->form);
    memset(t, 0, sizeof *t);
}
