/* fuzz_pushbuf.c: libFuzzer target over the push-buffer decoder, the semantic tracker and the QMD
 * decoders, on arbitrary bytes.
 *
 * Input: byte 0 picks the host class and the subchannel bindings; bytes 1..384 are "GPU memory" that
 * every QMD read by address sees (and are decoded as a QMD with every layout); the rest is a push buffer,
 * decoded in two segments (so a method run crosses an entry boundary), each method fed to the tracker,
 * each event formatted as text and JSON. Nothing may crash, over-read, leak or hang. */
#include <stdio.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/pushbuf.h"
#include "vgt/qmd.h"

typedef struct fuzz_ctx {
    vgt_sem_tracker *t;
    const uint8_t *mem;
    uint32_t mem_len;
    FILE *sink;
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
    char buf[256];
    vgt_event_format(ev, buf, sizeof buf);
    if (f->sink) { vgt_event_print_json(f->sink, ev); fputs(buf, f->sink); }
}

static int on_method(void *ctx, const vgt_method *m)
{
    fuzz_ctx *f = ctx;
    vgt_error err;
    vgt_sem_method(f->t, m, &err);
    return 0;
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

    fuzz_ctx f = { .mem = mem, .mem_len = mem_len, .sink = sink };
    vgt_sem_config cfg = { .on_event = on_event, .ctx = &f, .mem_read = mem_read, .mem_ctx = &f,
                           .keep_upload_bytes = (sel >> 2) & 1, .max_upload = 1u << 16 };
    if (vgt_sem_new(&f.t, &cfg, &err) != VGT_OK) return 0;
    vgt_pb_state st;
    vgt_pb_state_init(&st, hosts[sel & 3]);
    for (unsigned i = 0; i < 8; i++) st.subch_class[i] = engines[(i + (sel >> 3)) & 7];
    vgt_pb_callbacks cb = { .method = on_method, .ctx = &f };
    uint32_t half = (pb_len / 2) & ~3u;
    vgt_mpos pos = { .seq = 1, .entry = 0, .dword = 0 };
    vgt_pb_decode(&st, pb, half, pos, &cb, &err);
    pos.entry = 1;
    vgt_pb_decode(&st, pb + half, pb_len - half, pos, &cb, &err);
    vgt_sem_flush(f.t);
    vgt_sem_free(f.t);
    return 0;
}
