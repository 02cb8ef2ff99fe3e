/* decompile.c: `vgt decompile TRACE (--launch N | --submits A..B) -o FILE.c`: a captured launch, or a
 * window of captured submissions, as a standalone C program that recreates the memory, builds the push
 * buffer method by method with the generated method names (vgt/nv/clXXXX.h) and the push-buffer writer
 * (vgt/pbwriter.h), submits it through the backend operation table (vgt/backend.h: sim, or the GPU), waits,
 * checks the release semaphores against the capture and dumps the buffers. A developer edits one method
 * and runs it again (freedreno's rddecompiler, for NVIDIA).
 *
 *   --launch N   the launch as the synth lane rebuilds it (analyze's synth.h): the compute state, a fresh
 *                QMD, its program and constant buffers in memory of its own; the memory its pointers reach,
 *                as the trace determines it, in FILE.c.mem
 *   --submits    the submissions' methods as captured (decoded, named), each submission one push buffer on
 *                its channel; the memory every mapping held when the window starts, in FILE.c.mem; a trace
 *                cut by `vgt slice` brings its channels' state as a preamble
 *
 * The memory file: "VGTMEM1\n", then records of (VA u64, length u64, bytes), little-endian. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/grow.h"
#include "vgt/launch_desc.h"
#include "vgt/model.h"
#include "vgt/replay.h"
#include "vgt/synth.h"
#include "vgt/walk.h"

#define DC_ARENA_SIZE (64ull << 20)
#define DC_MAX_METHODS (4u << 20)          /* methods of a --submits window */
#define DC_MAX_SUBMITS 4096u

typedef struct dc_method {
    uint32_t sub;                 /* index into subs */
    uint8_t subch;
    uint32_t cls, mthd, data;
} dc_method;

typedef struct dc_submit {
    uint64_t index, seq;
    uint32_t channel;             /* index into chans */
} dc_submit;

typedef struct dc_chan {
    uint32_t client, handle, host_cls;
    uint32_t bound[8];            /* subchannel classes when the window starts */
    uint32_t engines[VGT_MODEL_MAX_ENGINES];
    uint32_t nengines;
} dc_chan;

typedef struct dc_release {
    uint64_t va, expected;
    uint8_t size, checked;        /* checked: a plain release (not a reduction or a report) */
    char what[48];
} dc_release;

typedef struct dc_cli {
    const char *trace, *out;
    int has_launch;
    uint64_t launch;
    vgt_range window;
    int window_mode;
    const vgt_model *model;
    vgt_ldx *x;
    int selected, done;
    vgt_status rc;
    vgt_error err;
    /* --launch */
    vgt_synth *syn;
    uint64_t arena, arena_used;
    /* --submits */
    dc_method *methods;
    uint32_t nmethods, cap_methods;
    dc_submit subs[DC_MAX_SUBMITS];
    uint32_t nsubs;
    dc_chan chans[64];
    uint32_t nchans;
    int snapshot_taken;
    dc_release rel[1024];
    uint32_t nrel;
    FILE *mem;
    uint64_t mem_bytes;
} dc_cli;

/* ---- writing C ---- */

/* The generated constant of a method: NVCBC0_SEND_PCAS_A, NVCBC0_LOAD_INLINE_QMD_DATA(3); else hex. */
static void method_expr(uint32_t cls, uint32_t mthd, char *buf, size_t cap)
{
    char name[96];
    vgt_method_name(cls, mthd, name, sizeof name);
    if (!strncmp(name, "0x", 2) || !vgt_class_find(cls & 0xffff)) snprintf(buf, cap, "0x%04x", mthd);
    else snprintf(buf, cap, "NV%04X_%s", cls & 0xffff, name);
}

static int class_has_header(uint32_t cls)
{
    static const uint32_t known[] = {0x902D, 0xA140, 0xC46F, 0xC56F, 0xC597, 0xC5B5, 0xC5C0, 0xC6B5, 0xC6C0,
                                     0xC76F, 0xC797, 0xC7B5, 0xC7C0, 0xC86F, 0xC8B5, 0xCB97, 0xCBC0};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if ((cls & 0xffff) == known[i]) return 1;
    return 0;
}

static void emit_method(FILE *f, unsigned subch, uint32_t cls, uint32_t mthd, uint32_t data)
{
    char expr[128], fields[256], cn[64];
    if (mthd == 0) {   /* SET_OBJECT */
        fprintf(f, "    vgt_pbw_set_object(w, %u, 0x%04X);   /* %s */\n", subch, data & 0xffff,
                vgt_class_name(data & 0xffff, cn, sizeof cn));
        return;
    }
    if (!class_has_header(cls)) snprintf(expr, sizeof expr, "0x%04x", mthd);
    else method_expr(cls, mthd, expr, sizeof expr);
    vgt_method_format_fields(cls, mthd, data, fields, sizeof fields);
    fprintf(f, "    vgt_pbw_1(w, %u, %s, 0x%08x);   /* %s */\n", subch, expr, data, fields);
}

static void emit_bytes(FILE *f, const char *name, const uint8_t *p, uint64_t n)
{
    fprintf(f, "static const uint8_t %s[%" PRIu64 "] = {\n", name, n ? n : 1);
    for (uint64_t i = 0; i < n; i += 16) {
        fputs("   ", f);
        for (uint64_t k = i; k < i + 16 && k < n; k++) fprintf(f, " 0x%02x,", p[k]);
        fputc('\n', f);
    }
    if (!n) fputs("    0\n", f);
    fputs("};\n\n", f);
}

/* Known, non-zero 4 KiB pages of [va, va+len) into the memory file. */
static void snapshot_range(dc_cli *c, uint64_t va, uint64_t len)
{
    static uint8_t page[4096];
    vgt_error e;
    for (uint64_t at = va; at < va + len; at += sizeof page) {
        uint64_t n = va + len - at < sizeof page ? va + len - at : sizeof page, known = 0;
        if (vgt_ldx_read_trace(c->x, at, page, n, &known, &e) != VGT_OK || !known) continue;
        int nonzero = 0;
        for (uint64_t i = 0; i < n && !nonzero; i++) nonzero = page[i] != 0;
        if (!nonzero) continue;
        fwrite(&at, 8, 1, c->mem);
        fwrite(&n, 8, 1, c->mem);
        fwrite(page, 1, n, c->mem);
        c->mem_bytes += n;
    }
}

static void emit_prologue(FILE *f, dc_cli *c, const char *what)
{
    fprintf(f, "/* %s, decompiled from %s by `vgt decompile`.\n *\n", what, c->trace);
    fputs(" * Build against an installed vgtrace (or a build tree: -I<src>/trace-format/include -I<build>/trace-format/include\n"
          " * -I<src>/analyze/include -I<src>/backend/include -L<build>/lib):\n"
          " *     cc -std=c11 -O1 THIS.c -lvgt_backend -lvgt_analyze -lvgt_format -lsqlite3 -lzstd -lxxhash -lpthread -lm\n"
          " * Run: ./a.out [--backend sim|gpu] [--mem FILE.mem] [--dump DIR]\n"
          " * The backend is chosen at run time (default sim; sim executes no shaders: semaphores, uploads and copies\n"
          " * are reproduced there, a kernel's stores only on the GPU). Edit a method below and run it again. */\n", f);
    fputs("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
          "#include \"vgt/backend.h\"\n#include \"vgt/nv_pushbuf.h\"\n#include \"vgt/pbwriter.h\"\n", f);
    static const char *const hdrs[] = {"clc56f", "clc86f", "clc5c0", "clc6c0", "clc7c0", "clcbc0", "clc5b5", "clc6b5",
                                       "clc7b5", "clc8b5", "clc597", "clc797", "clcb97", "cla140", "cl902d"};
    for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) fprintf(f, "#include \"vgt/nv/%s.h\"\n", hdrs[i]);
    fputs("\nstruct range { uint64_t va, len; };\n"
          "struct blob { uint64_t va; uint64_t len; const uint8_t *bytes; const char *what; };\n"
          "struct release { uint64_t va; unsigned size; uint64_t expected; int checked; const char *what; };\n\n", f);
}

/* The driver: backend, memory, channels, submissions, wait, results. */
static void emit_main(FILE *f, dc_cli *c, int nchans, const char *mem_default)
{
    fprintf(f, "static const char *default_mem = \"%s\";\n\n", mem_default);
    fputs("static int fail(const char *what, const vgt_error *e)\n{\n"
          "    fprintf(stderr, \"%s: %s\\n\", what, e->msg);\n    return 2;\n}\n\n"
          "/* FILE.mem: \"VGTMEM1\\n\", then (VA u64, length u64, bytes) records */\n"
          "static int load_memory(const vgt_backend_ops *ops, vgt_backend *b, uint32_t vas, const char *path)\n{\n"
          "    FILE *f = fopen(path, \"rb\");\n    char magic[8];\n"
          "    if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, \"VGTMEM1\\n\", 8)) {\n"
          "        fprintf(stderr, \"%s: not a memory file of vgt decompile\\n\", path);\n        if (f) fclose(f);\n        return 2;\n    }\n"
          "    uint64_t hdr[2];\n    static uint8_t buf[1u << 20];\n    vgt_error e;\n"
          "    while (fread(hdr, 8, 2, f) == 2) {\n"
          "        if (hdr[1] > sizeof buf || fread(buf, 1, hdr[1], f) != hdr[1]) break;\n"
          "        if (ops->mem_write(b, vas, hdr[0], buf, hdr[1], &e) != VGT_OK) fprintf(stderr, \"memory at 0x%llx: %s\\n\", (unsigned long long)hdr[0], e.msg);\n"
          "    }\n    fclose(f);\n    return 0;\n}\n\n", f);
    fputs("int main(int argc, char **argv)\n{\n"
          "    const char *backend = \"sim\", *mem = default_mem, *dump = \".\";\n"
          "    for (int i = 1; i + 1 < argc; i += 2) {\n"
          "        if (!strcmp(argv[i], \"--backend\")) backend = argv[i + 1];\n"
          "        else if (!strcmp(argv[i], \"--mem\")) mem = argv[i + 1];\n"
          "        else if (!strcmp(argv[i], \"--dump\")) dump = argv[i + 1];\n"
          "        else { fprintf(stderr, \"usage: %s [--backend sim|gpu] [--mem FILE] [--dump DIR]\\n\", argv[0]); return 2; }\n"
          "    }\n"
          "    const vgt_backend_ops *ops = vgt_backend_find(backend);\n    vgt_error e;\n"
          "    if (!ops) { fprintf(stderr, \"no backend %s\\n\", backend); return 2; }\n"
          "    if (ops->probe(&e) != VGT_OK) return fail(backend, &e);\n"
          "    vgt_backend *b;\n    uint32_t vas;\n"
          "    if (ops->open(&b, NULL, &e) != VGT_OK || ops->vaspace_create(b, &vas, &e) != VGT_OK) return fail(\"open\", &e);\n"
          "    for (size_t i = 0; i < sizeof mappings / sizeof mappings[0]; i++)\n"
          "        if (ops->map(b, vas, mappings[i].va, mappings[i].len, VGT_APERTURE_VIDMEM, &e) != VGT_OK) return fail(\"map\", &e);\n"
          "    if (load_memory(ops, b, vas, mem)) return 2;\n"
          "    for (size_t i = 0; i < sizeof blobs / sizeof blobs[0]; i++)\n"
          "        if (ops->mem_write(b, vas, blobs[i].va, blobs[i].bytes, blobs[i].len, &e) != VGT_OK) return fail(blobs[i].what, &e);\n", f);
    fprintf(f, "    uint32_t ch[%d];\n", nchans);
    fputs("    for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++) {\n"
          "        vgt_backend_channel_desc d = {.vas = vas, .cls = channels[i].host_cls, .entries = 1024, .handle = 0x5e000000u + (uint32_t)i};\n"
          "        if (ops->channel_create(b, &d, &ch[i], &e) != VGT_OK) return fail(\"channel\", &e);\n"
          "        for (unsigned k = 0; k < 8 && channels[i].objects[k]; k++)\n"
          "            if (ops->object_create(b, ch[i], channels[i].objects[k], 0x5e100000u + (uint32_t)(i * 8 + k), &e) != VGT_OK) return fail(\"object\", &e);\n"
          "    }\n"
          "    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++) {   /* so that what is read after proves this run wrote it */\n"
          "        uint64_t zero = 0;\n"
          "        if (releases[i].checked && ops->mem_write(b, vas, releases[i].va, &zero, releases[i].size, &e) != VGT_OK) return fail(\"release\", &e);\n"
          "    }\n"
          "    static uint32_t dw[1u << 22];\n"
          "    uint64_t pb_va = PUSHBUF_VA;\n"
          "    for (size_t s = 0; s < sizeof submissions / sizeof submissions[0]; s++) {\n"
          "        vgt_pbw w;\n        vgt_pbw_init(&w, dw, sizeof dw / sizeof dw[0]);\n"
          "        submissions[s].build(&w);\n"
          "        if (vgt_pbw_check(&w, &e) != VGT_OK) return fail(\"push buffer\", &e);\n"
          "        if (ops->mem_write(b, vas, pb_va, dw, (uint64_t)w.n * 4, &e) != VGT_OK) return fail(\"push buffer\", &e);\n"
          "        uint64_t entry = vgt_nv_gp_encode(pb_va, w.n, 0);\n"
          "        if (ops->submit(b, ch[submissions[s].channel], &entry, 1, 0, &e) != VGT_OK) fprintf(stderr, \"submission %zu: %s\\n\", s, e.msg);\n"
          "        if (ops->idle(b, 10000000000ull, &e) != VGT_OK) fprintf(stderr, \"submission %zu did not finish: %s\\n\", s, e.msg);\n"
          "        pb_va += ((uint64_t)w.n * 4 + 4095) & ~4095ull;\n"
          "    }\n"
          "    int bad = 0;\n"
          "    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++) {\n"
          "        uint64_t v = 0;\n"
          "        if (ops->mem_read(b, vas, releases[i].va, &v, releases[i].size, &e) != VGT_OK) return fail(\"release\", &e);\n"
          "        int ok = !releases[i].checked || v == releases[i].expected;\n"
          "        printf(\"release %s 0x%llx = 0x%llx (capture 0x%llx)%s\\n\", releases[i].what, (unsigned long long)releases[i].va,\n"
          "               (unsigned long long)v, (unsigned long long)releases[i].expected, ok ? \"\" : \"  MISMATCH\");\n"
          "        bad += !ok;\n"
          "    }\n"
          "    static uint8_t out[4u << 20];\n"
          "    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {\n"
          "        if (!outputs[i].len) continue;\n"
          "        uint64_t n = outputs[i].len < sizeof out ? outputs[i].len : sizeof out, h = 0xcbf29ce484222325ull;\n"
          "        if (ops->mem_read(b, vas, outputs[i].va, out, n, &e) != VGT_OK) { fprintf(stderr, \"dump: %s\\n\", e.msg); continue; }\n"
          "        for (uint64_t k = 0; k < n; k++) h = (h ^ out[k]) * 0x100000001b3ull;\n"
          "        char path[512];\n"
          "        snprintf(path, sizeof path, \"%s/buffer-0x%llx.bin\", dump, (unsigned long long)outputs[i].va);\n"
          "        FILE *o = fopen(path, \"wb\");\n"
          "        if (o) { fwrite(out, 1, n, o); fclose(o); }\n"
          "        printf(\"buffer 0x%llx+%llu fnv1a64 %016llx -> %s\\n\", (unsigned long long)outputs[i].va, (unsigned long long)n,\n"
          "               (unsigned long long)h, path);\n"
          "    }\n"
          "    ops->close(b);\n"
          "    printf(\"%s\\n\", bad ? \"result: MISMATCH\" : \"result: ok\");\n"
          "    return bad ? 1 : 0;\n}\n", f);
    (void)c;
}

static void emit_mappings(FILE *f, const vgt_model *m, uint64_t arena, uint64_t arena_len)
{
    fputs("/* every GPU mapping of the trace at that point, and the program's own memory */\nstatic const struct range mappings[] = {\n", f);
    for (uint32_t i = 0, n = vgt_model_mapping_count(m); i < n; i++) {
        const vgt_model_mapping *mp = vgt_model_mapping_at(m, i);
        uint64_t lo = mp->gpu_va & ~0xfffull, hi = (mp->gpu_va + mp->length + 0xfff) & ~0xfffull;
        fprintf(f, "    {0x%" PRIx64 "ull, 0x%" PRIx64 "ull},\n", lo, hi - lo);
    }
    fprintf(f, "    {0x%" PRIx64 "ull, 0x%" PRIx64 "ull},   /* the program's own: QMDs, programs, constant buffers, push buffers */\n};\n",
            arena, arena_len);
    fprintf(f, "#define PUSHBUF_VA 0x%" PRIx64 "ull\n\n", arena + arena_len / 2);
}

static void emit_channels(FILE *f, const dc_chan *ch, uint32_t n)
{
    char cn[64];
    fputs("struct channel { uint32_t host_cls; uint32_t objects[8]; };\nstatic const struct channel channels[] = {\n", f);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "    {0x%04X, {", ch[i].host_cls & 0xffff);
        for (uint32_t k = 0; k < ch[i].nengines && k < 8; k++) fprintf(f, "%s0x%04X", k ? ", " : "", ch[i].engines[k] & 0xffff);
        fprintf(f, "}},   /* captured channel 0x%x (%s) */\n", ch[i].handle, vgt_class_name(ch[i].host_cls, cn, sizeof cn));
    }
    fputs("};\n\n", f);
}

static void emit_releases(FILE *f, const dc_release *r, uint32_t n)
{
    fputs("static const struct release releases[] = {\n", f);
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "    {0x%" PRIx64 "ull, %u, 0x%" PRIx64 "ull, %d, \"%s\"},\n", r[i].va, r[i].size, r[i].expected, r[i].checked,
                r[i].what);
    if (!n) fputs("    {0, 0, 0, 0, \"none\"},\n", f);
    fputs("};\n\n", f);
}

static void add_release(dc_cli *c, uint64_t va, uint64_t value, unsigned size, int checked, const char *what)
{
    for (uint32_t i = 0; i < c->nrel; i++)
        if (c->rel[i].va == va) {   /* the last release to a VA is what it holds at the end */
            c->rel[i].expected = value, c->rel[i].size = (uint8_t)size, c->rel[i].checked = (uint8_t)checked;
            snprintf(c->rel[i].what, sizeof c->rel[i].what, "%s", what);
            return;
        }
    if (c->nrel == sizeof c->rel / sizeof c->rel[0]) return;
    dc_release *r = &c->rel[c->nrel++];
    *r = (dc_release){.va = va, .expected = value, .size = (uint8_t)size, .checked = (uint8_t)checked};
    snprintf(r->what, sizeof r->what, "%s", what);
}

/* ---- --launch N ---- */

static uint64_t arena_alloc(void *ctx, uint64_t size, uint64_t align)
{
    dc_cli *c = ctx;
    uint64_t at = (c->arena_used + align - 1) & ~(align - 1);
    if (at + size > DC_ARENA_SIZE / 2) return 0;   /* the upper half holds the push buffers */
    c->arena_used = at + size;
    return c->arena + at;
}

static int choose_arena(dc_cli *c)
{
    uint32_t n = vgt_model_mapping_count(c->model);
    vgt_reloc_range *t = calloc((size_t)n + 1, sizeof *t);
    if (!t) return 0;
    for (uint32_t i = 0; i < n; i++) {
        const vgt_model_mapping *m = vgt_model_mapping_at(c->model, i);
        t[i] = (vgt_reloc_range){.va = m->gpu_va, .len = m->length};
    }
    t[n] = (vgt_reloc_range){.va = VGT_BACKEND_RESERVED_DEFAULT, .len = VGT_BACKEND_RESERVED_SPAN};
    vgt_error e;
    vgt_status st = vgt_reloc_choose_va(t, n + 1, DC_ARENA_SIZE, 1ull << 32, 64ull << 30, VGT_BACKEND_PB_VA_LIMIT,
                                        &c->arena, &e);
    free(t);
    return st == VGT_OK;
}

static void write_launch(dc_cli *c, const vgt_work *w)
{
    const vgt_launch_desc *d = w->launch;
    vgt_error e;
    if (!choose_arena(c)) {
        c->rc = VGT_FAIL(&c->err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "no free range for the program's own memory");
        return;
    }
    vgt_synth_config scfg = {.alloc = arena_alloc, .ctx = c, .host_cls = w->host_cls};
    if (vgt_synth_new(&scfg, &c->syn, &e) != VGT_OK) { c->rc = e.code, c->err = e; return; }
    vgt_synth_begin(c->syn);
    if (vgt_synth_work(c->syn, w, &e) != VGT_OK || vgt_synth_check(c->syn, &e) != VGT_OK) {
        c->rc = VGT_FAIL(&c->err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "launch %" PRIu64 " cannot be rebuilt: %s", d->index, e.msg);
        return;
    }
    const vgt_synth_plan *p = vgt_synth_plan_get(c->syn);
    FILE *f = fopen(c->out, "w");
    char mempath[1024];
    snprintf(mempath, sizeof mempath, "%s.mem", c->out);
    c->mem = fopen(mempath, "wb");
    if (!f || !c->mem) {
        if (f) fclose(f);
        c->rc = VGT_FAIL(&c->err, VGT_E_IO, VGT_NO_OFFSET, "cannot write %s", f ? mempath : c->out);
        return;
    }
    fwrite("VGTMEM1\n", 1, 8, c->mem);
    char what[160], cn[64];
    snprintf(what, sizeof what, "Launch %" PRIu64 " (submission %" PRIu64 ", seq %" PRIu64 ", channel 0x%x, %s)", d->index,
             d->submission, d->seq, d->channel, vgt_class_name(d->cls, cn, sizeof cn));
    emit_prologue(f, c, what);
    fprintf(f, "/* grid %ux%ux%u, block %ux%ux%u, shared memory %u, registers %u, barriers %u; captured QMD 0x%" PRIx64
               " (%s, %s), program 0x%" PRIx64 " (%u bytes) */\n\n",
            d->qmd.grid[0], d->qmd.grid[1], d->qmd.grid[2], d->qmd.block[0], d->qmd.block[1], d->qmd.block[2],
            d->qmd.shared_memory, d->qmd.register_count, d->qmd.barrier_count, d->qmd_va,
            vgt_qmd_version_name(d->version), vgt_ld_qmd_source_name(d->qmd_source), d->program_va, d->program_len);
    for (uint32_t i = 0; i < p->nblobs; i++) {
        char name[32];
        snprintf(name, sizeof name, "blob%u", i);
        fprintf(f, "/* %s at 0x%" PRIx64 " */\n", p->blobs[i].what, p->blobs[i].va);
        if (strstr(p->blobs[i].what, "QMD")) {
            vgt_qmd_version v = vgt_qmd_detect(p->bytes + p->blobs[i].off, (uint32_t)p->blobs[i].len);
            char fields[4096];
            vgt_qmd_format_fields(v, p->bytes + p->blobs[i].off, (uint32_t)p->blobs[i].len, fields, sizeof fields);
            fprintf(f, "/* %s: %s */\n", vgt_qmd_version_name(v), fields);
        }
        emit_bytes(f, name, p->bytes + p->blobs[i].off, p->blobs[i].len);
    }
    fputs("static const struct blob blobs[] = {\n", f);
    for (uint32_t i = 0; i < p->nblobs; i++)
        fprintf(f, "    {0x%" PRIx64 "ull, %" PRIu64 ", blob%u, \"%s\"},\n", p->blobs[i].va, p->blobs[i].len, i, p->blobs[i].what);
    fputs("};\n\n", f);
    /* upload data arrays */
    for (uint32_t i = 0; i < p->nruns; i++)
        if (p->runs[i].noninc) {
            char name[32];
            snprintf(name, sizeof name, "data%u", i);
            emit_bytes(f, name, (const uint8_t *)(p->dw + p->runs[i].first), (uint64_t)p->runs[i].count * 4);
        }
    emit_mappings(f, c->model, c->arena, DC_ARENA_SIZE);
    dc_chan ch = {.host_cls = w->host_cls, .handle = w->channel};
    const vgt_model_channel *mc = vgt_model_channel_find(c->model, w->client, w->channel);
    for (uint32_t i = 0; mc && i < mc->engine_count && i < 8; i++) ch.engines[ch.nengines++] = mc->engines[i].cls;
    if (!ch.nengines) ch.engines[ch.nengines++] = d->cls;
    emit_channels(f, &ch, 1);
    fputs("/* the push buffer, method by method */\nstatic void launch(vgt_pbw *w)\n{\n", f);
    for (uint32_t i = 0; i < p->nruns; i++) {
        const vgt_synth_run *r = &p->runs[i];
        if (r->noninc) {
            char expr[128];
            method_expr(r->cls, r->mthd, expr, sizeof expr);
            fprintf(f, "    vgt_pbw_non_inc(w, %u, %s, (const uint32_t *)data%u, %u);\n", r->subch, expr, i, r->count);
            continue;
        }
        for (uint32_t k = 0; k < r->count; k++)
            emit_method(f, r->subch, r->cls, r->set_object ? 0 : r->mthd + 4 * k, p->dw[r->first + k]);
    }
    fputs("}\n\nstruct submission { void (*build)(vgt_pbw *); unsigned channel; };\n"
          "static const struct submission submissions[] = {{launch, 0}};\n\n", f);
    /* releases: the QMD's; the buffers its pointers reach are dumped */
    for (unsigned i = 0; i < d->qmd.release_count && i < VGT_QMD_MAX_RELEASE; i++) {
        const vgt_qmd_release *r = &d->qmd.release[i];
        if (!r->enabled) continue;
        char rw[32];
        snprintf(rw, sizeof rw, "qmd release %u", i);
        add_release(c, r->va, r->payload64 ? r->payload : (uint32_t)r->payload, r->payload64 ? 8 : 4, !r->reduction_enable, rw);
        const vgt_model_mapping *mp = vgt_model_mapping_find(c->model, r->va);
        if (mp) snapshot_range(c, mp->gpu_va, mp->length);
    }
    emit_releases(f, c->rel, c->nrel);
    fputs("static const struct range outputs[] = {\n", f);
    for (uint32_t i = 0; i < d->nbuffers; i++) {
        const vgt_ld_buffer *b = &d->buffers[i];
        if (b->kind != VGT_LD_BUF_MEMORY) continue;
        fprintf(f, "    {0x%" PRIx64 "ull, 0x%" PRIx64 "ull},\n", b->va, b->len);
        snapshot_range(c, b->va, b->len);
    }
    fputs("    {0, 0}\n};\n\n", f);
    /* the captured program's mapping (its trap handler, code it calls) */
    const vgt_model_mapping *pm = vgt_model_mapping_find(c->model, d->program_va);
    if (pm) snapshot_range(c, pm->gpu_va, pm->length);
    emit_main(f, c, 1, mempath);
    fclose(f);
    fclose(c->mem);
    c->mem = NULL;
    c->done = 1;
}

static void on_work(void *ctx, const vgt_work *w)
{
    dc_cli *c = ctx;
    if (c->done || c->rc != VGT_OK) return;
    if (!c->window_mode) {
        if (w->kind == VGT_WORK_LAUNCH && w->launch->index == c->launch) write_launch(c, w);
        return;
    }
    if (!c->selected) return;
    const vgt_event *ev = w->ev;
    if (w->kind == VGT_WORK_LAUNCH || w->kind == VGT_WORK_EMPTY_DISPATCH) {
        const vgt_qmd *q = &w->launch->qmd;
        for (unsigned i = 0; i < q->release_count && i < VGT_QMD_MAX_RELEASE; i++)
            if (q->release[i].enabled)
                add_release(c, q->release[i].va, q->release[i].payload64 ? q->release[i].payload : (uint32_t)q->release[i].payload,
                            q->release[i].payload64 ? 8 : 4, !q->release[i].reduction_enable, "qmd release");
    } else if (w->kind == VGT_WORK_COPY && ev->u.copy.semaphore_type) {
        add_release(c, ev->u.copy.sem_va, ev->u.copy.sem_payload, ev->u.copy.sem_payload >> 32 ? 8 : 4, 1, "copy release");
    } else if (w->kind == VGT_WORK_SEMAPHORE && ev->kind == VGT_EV_SEM_RELEASE) {
        int plain = ev->u.sem.op == VGT_SEM_OP_RELEASE;
        add_release(c, ev->u.sem.va, ev->u.sem.payload, ev->u.sem.size ? ev->u.sem.size : 4, plain,
                    ev->u.sem.source == VGT_SEM_SRC_HOST ? "host release" : "report release");
    }
}

/* ---- --submits A..B ---- */

static uint32_t chan_of(dc_cli *c, const vgt_walk_channel *ch)
{
    for (uint32_t i = 0; i < c->nchans; i++)
        if (c->chans[i].client == ch->client && c->chans[i].handle == ch->handle) return i;
    if (c->nchans == sizeof c->chans / sizeof c->chans[0]) return UINT32_MAX;
    dc_chan *d = &c->chans[c->nchans];
    memset(d, 0, sizeof *d);
    d->client = ch->client, d->handle = ch->handle, d->host_cls = ch->cls;
    memcpy(d->bound, ch->pb.subch_class, sizeof d->bound);
    const vgt_model_channel *mc = vgt_model_channel_find(c->model, ch->client, ch->handle);
    for (uint32_t i = 0; mc && i < mc->engine_count && i < 8; i++) d->engines[d->nengines++] = mc->engines[i].cls;
    return c->nchans++;
}

static void snapshot_all(dc_cli *c)
{
    for (uint32_t i = 0, n = vgt_model_mapping_count(c->model); i < n; i++) {
        const vgt_model_mapping *m = vgt_model_mapping_at(c->model, i);
        snapshot_range(c, m->gpu_va, m->length);
    }
    c->snapshot_taken = 1;
}

static void keep_method(dc_cli *c, uint32_t sub, const vgt_method *m)
{
    if (c->nmethods == DC_MAX_METHODS || vgt_grow(&c->methods, &c->cap_methods, c->nmethods + 1ull, 4096)) {
        c->rc = VGT_FAIL(&c->err, VGT_E_LIMIT, VGT_NO_OFFSET, "more than %u methods in the window", DC_MAX_METHODS);
        return;
    }
    c->methods[c->nmethods++] = (dc_method){.sub = sub, .subch = (uint8_t)m->subch, .cls = m->cls, .mthd = m->mthd,
                                            .data = m->data};
}

/* ---- the walk ---- */

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    dc_cli *c = ctx;
    c->model = model;
    vgt_ldx_walk_record(c->x, rec, model);
    return 0;
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    dc_cli *c = ctx;
    if (vgt_ldx_walk_channel(c->x, chan, &c->err) != VGT_OK) c->rc = c->err.code;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    vgt_ldx_walk_channel_end(chan);
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    dc_cli *c = ctx;
    c->selected = c->window_mode && vgt_range_has(&c->window, s->index);
    if (c->selected) {
        if (!c->snapshot_taken) snapshot_all(c);
        uint32_t ch = chan_of(c, s->chan);
        if (ch == UINT32_MAX || c->nsubs == DC_MAX_SUBMITS) {
            c->rc = VGT_FAIL(&c->err, VGT_E_LIMIT, VGT_NO_OFFSET, "the window has too many channels or submissions");
            return 1;
        }
        c->subs[c->nsubs++] = (dc_submit){.index = s->index, .seq = s->seq, .channel = ch};
    }
    if (s->chan->user) vgt_ldx_submit_begin(s->chan->user, s->index, s->seq);
    return c->rc != VGT_OK;
}

static int feed(dc_cli *c, const vgt_walk_submit *s, const vgt_method *m)
{
    if (s->chan->user && vgt_ldx_method(s->chan->user, m, &c->err) != VGT_OK) c->rc = c->err.code;
    if (c->selected && !m->masked) keep_method(c, c->nsubs - 1, m);
    return c->rc != VGT_OK || c->done;
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m) { return feed(ctx, s, m); }

/* A CHANNEL_METHODS preamble (a trace cut by vgt slice): the channel's engine state, before its first
 * submission of the window. */
static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    dc_cli *c = ctx;
    if (s->chan->user && vgt_ldx_method(s->chan->user, m, &c->err) != VGT_OK) c->rc = c->err.code;
    return c->rc != VGT_OK;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    dc_cli *c = ctx;
    if (s->chan->user && vgt_ldx_submit_end(s->chan->user, &c->err) != VGT_OK) c->rc = c->err.code;
    if (c->window_mode && c->window.last != UINT64_MAX && s->index >= c->window.last) c->done = 1;
    return c->rc != VGT_OK || c->done;
}

static void write_window(dc_cli *c)
{
    FILE *f = fopen(c->out, "w");
    if (!f) {
        c->rc = VGT_FAIL(&c->err, VGT_E_IO, VGT_NO_OFFSET, "cannot write %s", c->out);
        return;
    }
    char what[160], mempath[1024];
    snprintf(mempath, sizeof mempath, "%s.mem", c->out);
    snprintf(what, sizeof what, "Submissions %" PRIu64 "..%" PRIu64 " as captured", c->subs[0].index,
             c->subs[c->nsubs - 1].index);
    emit_prologue(f, c, what);
    fputs("/* A window starts from the engine state its channels had: what earlier submissions set up (macros,\n"
          " * class state) is not here unless the trace was cut by `vgt slice`, whose preamble restores it. */\n\n", f);
    if (!choose_arena(c)) c->arena = 0xe000000000ull;
    emit_mappings(f, c->model, c->arena, DC_ARENA_SIZE);
    emit_channels(f, c->chans, c->nchans);
    fputs("static const struct blob blobs[] = {{0, 0, NULL, \"none\"}};\n\n", f);
    uint32_t k = 0;
    for (uint32_t s = 0; s < c->nsubs; s++) {
        const dc_submit *d = &c->subs[s];
        fprintf(f, "/* submission %" PRIu64 " (seq %" PRIu64 ") on channel 0x%x */\nstatic void submission%u(vgt_pbw *w)\n{\n",
                d->index, d->seq, c->chans[d->channel].handle, s);
        if (s == 0 || c->subs[s - 1].channel != d->channel) {   /* the subchannel bindings it started with */
            int first = 1;
            for (uint32_t p = 0; p < s; p++) first &= c->subs[p].channel != d->channel;
            for (unsigned sc = 0; first && sc < 8; sc++)
                if (c->chans[d->channel].bound[sc]) emit_method(f, sc, 0, 0, c->chans[d->channel].bound[sc]);
        }
        for (; k < c->nmethods && c->methods[k].sub == s; k++) {
            const dc_method *m = &c->methods[k];
            emit_method(f, m->subch, m->cls, m->mthd, m->data);
        }
        fputs("}\n\n", f);
    }
    fputs("struct submission { void (*build)(vgt_pbw *); unsigned channel; };\nstatic const struct submission submissions[] = {\n", f);
    for (uint32_t s = 0; s < c->nsubs; s++) fprintf(f, "    {submission%u, %u},\n", s, c->subs[s].channel);
    fputs("};\n\n", f);
    emit_releases(f, c->rel, c->nrel);
    fputs("static const struct range outputs[] = {\n", f);
    for (uint32_t i = 0; i < c->nrel; i++) fprintf(f, "    {0x%" PRIx64 "ull, %u},\n", (uint64_t)(c->rel[i].va & ~7ull), 16u);
    fputs("    {0, 0}\n};\n\n", f);
    emit_main(f, c, (int)c->nchans, mempath);
    fclose(f);
}

typedef struct decompile_args {
    uint64_t launch;
    vgt_range submits;
    const char *output;
    int follow;
} decompile_args;

static const vgt_cli_opt decompile_options[] = {
    {"launch", 0, VGT_ARG_U64, "N", "decompile launch N (0-based over the trace's launches that run threads, as "
     "`vgt launches` numbers them), rebuilt as the synth lane rebuilds it", .off = offsetof(decompile_args, launch),
     .what = "launch number"},
    VGT_OPT_SUBMITS(decompile_args, submits, "decompile submissions A..B as captured (their methods, decoded and "
                    "named); the memory is what every mapping held when the window starts"),
    {"output", 'o', VGT_ARG_PATH, "FILE.c", "the C program to write (its memory goes to FILE.c.mem)",
     .off = offsetof(decompile_args, output), .flags = VGT_OPT_REQUIRED},
    VGT_OPT_FOLLOW(decompile_args, follow),
    {0}};

const vgt_cli_spec cmd_decompile_spec = {
    .verb = "decompile", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = decompile_options,
    .about = "A captured launch, or a window of captured submissions, as a standalone, readable C program: it "
             "recreates the memory (the mappings of the trace, their contents as the trace determines them, in "
             "FILE.c.mem), builds the push buffer method by method with the generated method names and the "
             "push-buffer writer, submits it through the backend operation table (sim or the GPU, chosen when it "
             "runs), waits, prints the release semaphores against the capture's values and dumps the buffers the "
             "launch's pointers reach. Edit a method and run it again. With --launch N the launch is rebuilt as "
             "the synth lane rebuilds it (a fresh QMD; program and constant buffers in the program's own memory); "
             "with --submits the methods are the captured ones.",
    .notes = "exit: 0 written, 1 the launch cannot be rebuilt (its program or QMD is not in the trace), 2 usage or "
             "I/O error (--launch or --submits naming what the trace lacks)",
};

int cmd_decompile(int argc, char **argv)
{
    decompile_args da = {.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_decompile_spec, argc, argv, &da, &a);
    if (rc >= 0) return rc;
    rc = 0;
    int has_launch = vgt_cli_given(&cmd_decompile_spec, &a, "launch"), has_window = vgt_cli_given(&cmd_decompile_spec, &a, "submits");
    if (has_launch == has_window)
        return vgt_cli_error("decompile", VGT_EXIT_USAGE, "give one of --launch N or --submits A..B");
    dc_cli *c = calloc(1, sizeof *c);
    if (!c) return vgt_cli_error("decompile", VGT_EXIT_USAGE, "out of memory");
    c->trace = a.pos[0], c->out = da.output, c->has_launch = has_launch, c->launch = da.launch;
    c->window_mode = has_window, c->window = da.submits, c->rc = VGT_OK;
    vgt_ldx_config cfg = {.on_work = on_work, .ctx = c, .trace_read = vgt_sem_model_ptr_reader, .trace_ctx = &c->model};
    vgt_error err;
    if (vgt_ldx_new(&cfg, &c->x, &err) != VGT_OK) {
        free(c);
        return vgt_cli_report("decompile", &err);
    }
    char mempath[1024];
    snprintf(mempath, sizeof mempath, "%s.mem", c->out);
    if (c->window_mode) {
        if (!(c->mem = fopen(mempath, "wb"))) {
            vgt_ldx_free(c->x);
            free(c);
            return vgt_cli_error("decompile", VGT_EXIT_USAGE, "cannot write %s", mempath);
        }
        fwrite("VGTMEM1\n", 1, 8, c->mem);
    }
    vgt_walk_options opt = vgt_walk_defaults();
    opt.follow = da.follow;
    /* the window is written after the walk, from the model's mappings: the model is ours, so it outlives
     * the walk (the walker frees its own) */
    vgt_model *model = NULL;
    if (c->window_mode && vgt_model_new(&model, &err) != VGT_OK) {
        if (c->mem) fclose(c->mem);
        vgt_ldx_free(c->x);
        free(c);
        return vgt_cli_report("decompile", &err);
    }
    opt.model = model;
    vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_channel_end = on_channel_end,
                             .on_submit_begin = on_submit_begin, .on_method = on_method,
                             .on_state_method = on_state_method, .on_submit_end = on_submit_end, .ctx = c};
    vgt_walk_stats wst = {0};
    vgt_status st = vgt_walk_path(c->trace, &opt, &cb, &wst, &err);
    if (st == VGT_OK && c->rc != VGT_OK) st = c->rc, err = c->err;
    if (st == VGT_OK && c->window_mode) {
        if (!c->nsubs) rc = vgt_cli_window_check("decompile", "--submits", &c->window, wst.submits, "submissions");
        if (!c->nsubs && !rc) rc = vgt_cli_error("decompile", VGT_EXIT_USAGE, "the window holds no submission");
        if (!rc) write_window(c);
        if (c->rc != VGT_OK) st = c->rc, err = c->err;
    }
    if (c->mem) fclose(c->mem);
    if (rc) {
    } else if (st != VGT_OK) {
        rc = err.code == VGT_E_UNSUPPORTED ? vgt_cli_error("decompile", VGT_EXIT_PROBLEM, "%s", err.msg)
                                           : vgt_cli_report("decompile", &err);
    } else if (!c->window_mode && !c->done) {
        rc = vgt_cli_error("decompile", VGT_EXIT_USAGE, "--launch %" PRIu64 ": the trace has fewer launches", c->launch);
    } else {
        fprintf(stderr, "vgt decompile: wrote %s (%s, %" PRIu64 " bytes of memory)\n", c->out, mempath, c->mem_bytes);
        char note[256];
        if (vgt_ldx_budget_note(c->x, note, sizeof note)) {   /* work those macro calls built is missing */
            fprintf(stderr, "vgt decompile: %s\n", note);
            rc = VGT_EXIT_PROBLEM;
        }
    }
    vgt_synth_free(c->syn);
    vgt_ldx_free(c->x);
    vgt_model_free(model);
    free(c->methods);
    free(c);
    return rc;
}
