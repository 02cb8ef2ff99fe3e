/* fuzz_pushbuf.c: libFuzzer target over the push-buffer decoder, the semantic tracker and the QMD
 * decoders, on arbitrary bytes.
 *
 * Input: byte 0 picks the host class and the subchannel bindings (bits 0-1, 3-5), whether upload bytes are
 * kept (bit 2), the bulk path (bit 6) and macro feeding (bit 7); bytes 1..384 are "GPU memory" that every
 * QMD read by address sees (and are decoded as a QMD with every layout); the rest is a push buffer,
 * decoded in two segments (so a method run crosses an entry boundary), each method fed to the tracker,
 * each event formatted as text and JSON. Nothing may crash, over-read, leak or hang.
 *
 * Bulk path (bit 6): the push buffer is decoded a second time with the noninc_run callback, its runs fed
 * to vgt_sem_noninc_run, and the events of both passes must be the same (events.h promises it).
 * Macro feeding (bit 7): every CALL_MME_MACRO(j) method of the stream is followed by a made-up completed
 * call (vgt_sem_macro_call) whose emitted methods come from the memory bytes: up to MAX_FUZZ_EMITS
 * (method, value) pairs, so the tracker sees MME-origin methods interleaved with the stream's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/mme_trace.h"
#include "vgt/pushbuf.h"
#include "vgt/qmd.h"

#define MAX_FUZZ_EMITS 64u
#define CALL_MME_MACRO_FIRST 0x3800u   /* CALL_MME_MACRO(0); NVIDIA open-gpu-doc classes/3d/clcb97.h */

typedef struct fuzz_ctx {
    vgt_sem_tracker *t;
    const uint8_t *mem;
    uint32_t mem_len;
    FILE *sink;
    int macros;
    uint64_t calls;
    uint64_t events, hash;        /* over the formatted events: the two passes must agree */
    vgt_mme_emit emits[MAX_FUZZ_EMITS];
} fuzz_ctx;

static vgt_status mem_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    const fuzz_ctx *f = ctx;
    (void)err;
    memset(dst, 0, len);
    uint64_t n = len < f->mem_len ? len : f->mem_len;
    if (va & 0x100) n /= 2;   /* some reads only partly known */
    memcpy(dst, f->mem, n);
    *known = n;
    return VGT_OK;
}

static void on_event(void *ctx, const vgt_event *ev)
{
    fuzz_ctx *f = ctx;
    char buf[1024];
    vgt_event_format(ev, buf, sizeof buf);
    if (f->sink) { vgt_event_print_json(f->sink, ev); fputs(buf, f->sink); }
    f->events++;
    for (const char *p = buf; *p; p++) f->hash = (f->hash ^ (uint8_t)*p) * 0x100000001b3ull;
    f->hash = (f->hash ^ ev->kind ^ (uint64_t)ev->origin << 8) * 0x100000001b3ull;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* A completed call of CALL_MME_MACRO(j) at m: its emissions are memory bytes picked by the call's value. */
static void feed_call(fuzz_ctx *f, const vgt_method *m)
{
    uint32_t pairs = f->mem_len / 8u, at = pairs ? (m->data % pairs) : 0, n = (m->data >> 16) % (MAX_FUZZ_EMITS + 1);
    if (n > pairs - at) n = pairs - at;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = f->mem + 8u * (at + i);
        f->emits[i] = (vgt_mme_emit){ .method = le32(p) & 0xfffcu, .value = le32(p + 4) };
    }
    vgt_mme_trace_call call = { .id = f->calls++, .pos = m->pos, .subch = m->subch, .cls = m->cls, .selected = 1,
                                .index = (m->mthd - CALL_MME_MACRO_FIRST) / 8u, .emits = f->emits, .nemits = n };
    vgt_error err;
    vgt_sem_macro_call(f->t, &call, &err);
}

static int is_call(const vgt_method *m)
{
    return !m->is_host && m->mthd >= CALL_MME_MACRO_FIRST && !(m->mthd & 4u) &&
           vgt_mme_format_for_class(m->cls) != VGT_MME_NONE;
}

static int on_method(void *ctx, const vgt_method *m)
{
    fuzz_ctx *f = ctx;
    vgt_error err;
    vgt_sem_method(f->t, m, &err);
    if (f->macros && is_call(m)) feed_call(f, m);
    return 0;
}

/* The bulk path. A run of CALL_MME_MACRO goes one dword at a time, so calls land where they do above. */
static int on_noninc_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    fuzz_ctx *f = ctx;
    if (f->macros && is_call(m)) {
        vgt_method one = *m;
        for (uint32_t i = 0; i < count; i++) {
            one.data = le32(data + 4u * i);
            one.pos.dword = m->pos.dword + i;
            one.first = i == 0 && m->first;
            on_method(f, &one);
        }
        return 0;
    }
    vgt_error err;
    vgt_sem_noninc_run(f->t, m, data, count, 0, &err);
    return 0;
}

/* Decode the push buffer in two segments with a fresh tracker; the events' count and hash in *f. */
static void run(fuzz_ctx *f, const vgt_sem_config *cfg0, uint32_t host, const uint32_t *subch_class,
                const uint8_t *pb, uint32_t pb_len, int bulk)
{
    vgt_sem_config cfg = *cfg0;
    cfg.ctx = cfg.mem_ctx = f;
    vgt_error err;
    f->events = f->calls = 0;
    f->hash = 0xcbf29ce484222325ull;
    if (vgt_sem_new(&f->t, &cfg, &err) != VGT_OK) return;
    vgt_pb_state st;
    vgt_pb_state_init(&st, host);
    memcpy(st.subch_class, subch_class, sizeof st.subch_class);
    vgt_pb_callbacks cb = { .method = on_method, .noninc_run = bulk ? on_noninc_run : NULL, .ctx = f };
    uint32_t half = (pb_len / 2) & ~3u;
    vgt_mpos pos = { .seq = 1, .entry = 0, .dword = 0 };
    vgt_pb_decode(&st, pb, half, pos, &cb, &err);
    pos.entry = 1;
    vgt_pb_decode(&st, pb + half, pb_len - half, pos, &cb, &err);
    vgt_sem_flush(f->t);
    vgt_sem_free(f->t);
    f->t = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t hosts[4] = { 0xC46F, 0xC56F, 0xC86F, 0xC76F };
    static const uint32_t engines[8] = { 0xCB97, 0xCBC0, 0xA140, 0x902D, 0xC8B5, 0xC5C0, 0xC6C0, 0xC597 };
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    if (size < 1) return 0;
    uint8_t sel = data[0];
    uint32_t mem_len = size - 1 < VGT_QMD_MAX_BYTES ? (uint32_t)(size - 1) : VGT_QMD_MAX_BYTES;
    const uint8_t *mem = data + 1, *pb = data + 1 + mem_len;
    uint32_t pb_len = (uint32_t)(size - 1 - mem_len);

    /* QMD decoders on the memory bytes, every layout */
    vgt_qmd q;
    vgt_error err;
    vgt_qmd_decode(mem, mem_len, &q, &err);
    char text[512];
    for (int v = VGT_QMD_V02_02; v <= VGT_QMD_V04_00; v++) {
        vgt_qmd_decode_as((vgt_qmd_version)v, mem, mem_len, &q, &err);
        vgt_qmd_format_fields((vgt_qmd_version)v, mem, mem_len, text, sizeof text);
    }

    uint32_t subch_class[8];
    for (unsigned i = 0; i < 8; i++) subch_class[i] = engines[(i + (sel >> 3)) & 7];
    vgt_sem_config cfg = { .on_event = on_event, .mem_read = mem_read, .keep_upload_bytes = (sel >> 2) & 1,
                           .max_upload = 1u << 16 };
    fuzz_ctx f = { .mem = mem, .mem_len = mem_len, .sink = sink, .macros = (sel >> 7) & 1 };
    run(&f, &cfg, hosts[sel & 3], subch_class, pb, pb_len, 0);
    if (!((sel >> 6) & 1)) return 0;
    uint64_t events = f.events, hash = f.hash;
    run(&f, &cfg, hosts[sel & 3], subch_class, pb, pb_len, 1);
    if (f.events != events || f.hash != hash) {
        fprintf(stderr, "fuzz_pushbuf: the bulk path made %llu events (hash %016llx), one method at a time %llu "
                        "(hash %016llx)\n", (unsigned long long)f.events, (unsigned long long)f.hash,
                (unsigned long long)events, (unsigned long long)hash);
        abort();
    }
    return 0;
}
