/* launch_desc_print.c: launch descriptions and copy-engine work as JSON and as text (`vgt launches`). */
#include <inttypes.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/json.h"
#include "vgt/launch_desc.h"

static const char *buffer_kind_name(unsigned k)
{
    static const char *const n[] = {"memory", "constant_buffer", "program", "qmd"};
    return k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static const char *class_name(uint32_t cls, char *buf, size_t n) { return vgt_class_name(cls, buf, n); }

static void json_hex64(FILE *f, const char *key, uint64_t v, int comma)
{
    fprintf(f, "%s\"%s\":\"0x%" PRIx64 "\"", comma ? "," : "", key, v);
}

static void print_releases_json(FILE *f, const vgt_qmd *q)
{
    fputs(",\"releases\":[", f);
    int first = 1;
    for (unsigned i = 0; i < q->release_count && i < VGT_QMD_MAX_RELEASE; i++) {
        const vgt_qmd_release *r = &q->release[i];
        if (!r->enabled) continue;
        fprintf(f, "%s{\"slot\":%u", first ? "" : ",", i);
        json_hex64(f, "va", r->va, 1);
        json_hex64(f, "payload", r->payload, 1);
        fprintf(f, ",\"size\":%u,\"structure_size\":%u,\"reduction\":%s", r->payload64 ? 8 : 4, r->structure_size,
                r->reduction_enable ? "true" : "false");
        if (r->reduction_enable) fprintf(f, ",\"reduction_op\":%u,\"reduction_format\":%u", r->reduction_op, r->reduction_format);
        fputc('}', f);
        first = 0;
    }
    fputs("],\"dependents\":[", f);
    first = 1;
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++) {
        const vgt_qmd_dependent *d = &q->dependent[i];
        if (!d->enabled) continue;
        fprintf(f, "%s{\"slot\":%u", first ? "" : ",", i);
        json_hex64(f, "va", d->va, 1);
        fprintf(f, ",\"action\":\"%s\",\"prefetch\":%s}", vgt_qmd_dependent_action_name(d->action),
                d->prefetch ? "true" : "false");
        first = 0;
    }
    fputc(']', f);
}

void vgt_launch_desc_print_json(FILE *f, const vgt_launch_desc *d, unsigned flags)
{
    char cn[64];
    fprintf(f, "{\"%s\":%" PRIu64 ",\"submission\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"position\":\"%" PRIu64 ":%u:%u\"",
            d->empty ? "empty_dispatch" : "launch", d->index, d->submission, d->seq, d->pos.seq, d->pos.entry, d->pos.dword);
    fprintf(f, ",\"channel\":\"0x%x\",\"class\":", d->channel);
    vgt_json_string(f, class_name(d->cls, cn, sizeof cn));
    fprintf(f, ",\"subchannel\":%u,\"qmd\":{", d->subch);
    json_hex64(f, "va", d->qmd_va, 0);
    fprintf(f, ",\"source\":\"%s\",\"version\":\"%s\",\"size\":%u,\"known\":%u", vgt_ld_qmd_source_name(d->qmd_source),
            vgt_qmd_version_name(d->version), d->qmd_size, d->qmd_known);
    if (d->signal_method) fprintf(f, ",\"signal\":\"0x%x\"", d->signal);
    fputs(",\"unnamed\":[", f);   /* dwords holding bits no field of the table names */
    for (uint32_t i = 0, first = 1; i + 4 <= d->qmd_size; i += 4) {
        uint32_t w;
        memcpy(&w, d->unnamed + i, 4);
        if (!w) continue;
        fprintf(f, "%s[%u,\"0x%08x\"]", first ? "" : ",", i / 4, w);
        first = 0;
    }
    fputs("]", f);
    if (flags & VGT_LD_PRINT_BYTES) {
        fputs(",\"hex\":", f);
        vgt_json_bytes_hex(f, d->qmd_bytes, d->qmd_size);
    }
    fputc('}', f);
    const vgt_qmd *q = &d->qmd;
    fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_memory\":%u,\"registers\":%u,\"barriers\":%u,"
               "\"sass_version\":%u,\"local_memory\":[%u,%u]",
            q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2], q->shared_memory,
            q->register_count, q->barrier_count, q->sass_version, q->local_memory_low, q->local_memory_high);
    if (!d->empty) {
        fputs(",\"program\":{", f);
        json_hex64(f, "va", d->program_va, 0);
        fprintf(f, ",\"entry\":0,\"bytes\":%u,\"fnv1a64\":\"%016" PRIx64 "\"", d->program_len, d->program_hash);
        if (flags & VGT_LD_PRINT_BYTES) {
            fputs(",\"hex\":", f);
            vgt_json_bytes_hex(f, d->program, d->program_len);
        }
        fputs("},\"constant_buffers\":[", f);
        int first = 1;
        for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
            const vgt_ld_cb *cb = &d->cb[i];
            if (!cb->valid) continue;
            fprintf(f, "%s{\"slot\":%u", first ? "" : ",", i);
            json_hex64(f, "va", cb->va, 1);
            fprintf(f, ",\"size\":%u,\"mapped\":%s,\"known\":%u,\"addresses\":[", cb->size, cb->mapped ? "true" : "false",
                    cb->known);
            int fa = 1;
            for (uint32_t k = 0; k < d->naddrs; k++) {
                if (d->addrs[k].cb != i) continue;
                fprintf(f, "%s{\"offset\":\"0x%x\"", fa ? "" : ",", d->addrs[k].offset);
                json_hex64(f, "value", d->addrs[k].value, 1);
                if (d->addrs[k].buffer != UINT32_MAX) fprintf(f, ",\"buffer\":%u", d->addrs[k].buffer);
                fputc('}', f);
                fa = 0;
            }
            fputc(']', f);
            if ((flags & VGT_LD_PRINT_BYTES) && cb->known) {
                fputs(",\"hex\":", f);
                vgt_json_bytes_hex(f, cb->bytes, cb->size < VGT_LD_CB_MAX ? cb->size : VGT_LD_CB_MAX);
            }
            fputc('}', f);
            first = 0;
        }
        fprintf(f, "],\"addresses_dropped\":%u,\"buffers\":[", d->addrs_dropped);
        for (uint32_t i = 0; i < d->nbuffers; i++) {
            const vgt_ld_buffer *b = &d->buffers[i];
            fprintf(f, "%s{\"buffer\":%u", i ? "," : "", i);
            json_hex64(f, "va", b->va, 1);
            fprintf(f, ",\"length\":%" PRIu64 ",\"map_seq\":%" PRIu64 ",\"kind\":\"%s\"", b->len, b->map_seq,
                    buffer_kind_name(b->kind));
            if (b->kind == VGT_LD_BUF_CB) fprintf(f, ",\"constant_buffer\":%u", b->cb);
            fprintf(f, ",\"words\":%u,\"known_bytes\":%" PRIu64 "}", b->words, b->known);
        }
        fputs("],\"state\":[", f);
        for (uint32_t i = 0; i < d->nstate; i++) {
            char name[96];
            vgt_method_name(d->cls, d->state[i].method, name, sizeof name);
            fprintf(f, "%s{\"method\":", i ? "," : "");
            vgt_json_string(f, name);
            fprintf(f, ",\"offset\":\"0x%04x\",\"value\":\"0x%x\"}", d->state[i].method, d->state[i].value);
        }
        fputc(']', f);
    }
    print_releases_json(f, q);
    fputs(",\"problem\":", f);
    if (d->problem[0]) vgt_json_string(f, d->problem);
    else fputs("null", f);
    fputc('}', f);
}

static void hexdump(FILE *f, const uint8_t *p, uint32_t n, uint64_t va)
{
    for (uint32_t i = 0; i < n; i += 16) {
        fprintf(f, "      %012" PRIx64 ":", va + i);
        for (uint32_t k = i; k < i + 16 && k < n; k += 4) {
            uint32_t w = 0;
            memcpy(&w, p + k, n - k < 4 ? n - k : 4);
            fprintf(f, " %08x", w);
        }
        fputc('\n', f);
    }
}

void vgt_launch_desc_print_text(FILE *f, const vgt_launch_desc *d, unsigned flags)
{
    char cn[64];
    const vgt_qmd *q = &d->qmd;
    fprintf(f, "%s %" PRIu64 " (submission %" PRIu64 ", %" PRIu64 ":%u:%u) channel 0x%x %s s%u\n",
            d->empty ? "empty dispatch" : "launch", d->index, d->submission, d->pos.seq, d->pos.entry, d->pos.dword,
            d->channel, class_name(d->cls, cn, sizeof cn), d->subch);
    fprintf(f, "  qmd 0x%" PRIx64 " %s %s (%u of %u bytes known)\n", d->qmd_va, vgt_qmd_version_name(d->version),
            vgt_ld_qmd_source_name(d->qmd_source), d->qmd_known, d->qmd_size);
    fprintf(f, "  grid %ux%ux%u block %ux%ux%u shared %u registers %u barriers %u\n", q->grid[0], q->grid[1], q->grid[2],
            q->block[0], q->block[1], q->block[2], q->shared_memory, q->register_count, q->barrier_count);
    if (!d->empty) {
        fprintf(f, "  program 0x%" PRIx64 " %u bytes fnv1a64 %016" PRIx64 "\n", d->program_va, d->program_len,
                d->program_hash);
        if (flags & VGT_LD_PRINT_BYTES) hexdump(f, d->program, d->program_len, d->program_va);
        for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
            const vgt_ld_cb *cb = &d->cb[i];
            if (!cb->valid) continue;
            fprintf(f, "  cb%u 0x%" PRIx64 "+%u%s, %u bytes known\n", i, cb->va, cb->size, cb->mapped ? "" : " (not mapped)",
                    cb->known);
            for (uint32_t k = 0; k < d->naddrs; k++)
                if (d->addrs[k].cb == i)
                    fprintf(f, "    +0x%x = 0x%" PRIx64 " (pointer, buffer %u)\n", d->addrs[k].offset, d->addrs[k].value,
                            d->addrs[k].buffer);
            if ((flags & VGT_LD_PRINT_BYTES) && cb->known) hexdump(f, cb->bytes, cb->size, cb->va);
        }
        for (uint32_t i = 0; i < d->nbuffers; i++)
            fprintf(f, "  buffer %u 0x%" PRIx64 "+%" PRIu64 " %s (%u pointers, %" PRIu64 " bytes known)\n", i,
                    d->buffers[i].va, d->buffers[i].len, buffer_kind_name(d->buffers[i].kind), d->buffers[i].words,
                    d->buffers[i].known);
        for (uint32_t i = 0; i < d->nstate; i++) {
            char name[96];
            vgt_method_name(d->cls, d->state[i].method, name, sizeof name);
            fprintf(f, "  state %s = 0x%x\n", name, d->state[i].value);
        }
    }
    for (unsigned i = 0; i < q->release_count && i < VGT_QMD_MAX_RELEASE; i++)
        if (q->release[i].enabled)
            fprintf(f, "  release%u 0x%" PRIx64 " := 0x%" PRIx64 "%s\n", i, q->release[i].va, q->release[i].payload,
                    q->release[i].reduction_enable ? " (reduction)" : "");
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (q->dependent[i].enabled)
            fprintf(f, "  dependent%u 0x%" PRIx64 " %s\n", i, q->dependent[i].va,
                    vgt_qmd_dependent_action_name(q->dependent[i].action));
    if (d->problem[0]) fprintf(f, "  NOT REBUILDABLE: %s\n", d->problem);
}

void vgt_work_copy_print_json(FILE *f, const vgt_work *w)
{
    const vgt_ev_copy *k = &w->ev->u.copy;
    char cn[64];
    fprintf(f, "{\"dma\":%" PRIu64 ",\"submission\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"position\":\"%" PRIu64 ":%u:%u\"",
            w->index, w->submission, w->seq, w->ev->pos.seq, w->ev->pos.entry, w->ev->pos.dword);
    fprintf(f, ",\"channel\":\"0x%x\",\"class\":", w->channel);
    vgt_json_string(f, class_name(w->ev->cls, cn, sizeof cn));
    fprintf(f, ",\"what\":\"%s\"", w->ev->kind == VGT_EV_EMPTY_DMA ? "semaphore" : k->memset ? "memset" : "copy");
    json_hex64(f, "src", k->src_va, 1);
    json_hex64(f, "dst", k->dst_va, 1);
    fprintf(f, ",\"bytes\":%" PRIu64 ",\"line_length\":%u,\"line_count\":%u,\"pitch_in\":%u,\"pitch_out\":%u,"
               "\"layout\":\"%s->%s\",\"launch_dma\":\"0x%x\"",
            k->bytes, k->line_length, k->line_count, k->pitch_in, k->pitch_out, k->src_pitch ? "pitch" : "block",
            k->dst_pitch ? "pitch" : "block", k->raw);
    if (k->remap) fprintf(f, ",\"remap\":{\"const_a\":\"0x%x\",\"const_b\":\"0x%x\",\"components\":\"0x%x\"}",
                          k->remap_const_a, k->remap_const_b, k->remap_components);
    if (k->semaphore_type) {
        fputs(",\"release\":{", f);
        json_hex64(f, "va", k->sem_va, 0);
        json_hex64(f, "payload", k->sem_payload, 1);
        fprintf(f, ",\"type\":%u}", k->semaphore_type);
    }
    fputc('}', f);
}

void vgt_work_copy_print_text(FILE *f, const vgt_work *w)
{
    const vgt_ev_copy *k = &w->ev->u.copy;
    fprintf(f, "dma %" PRIu64 " (submission %" PRIu64 ", %" PRIu64 ":%u:%u) channel 0x%x %s", w->index, w->submission,
            w->ev->pos.seq, w->ev->pos.entry, w->ev->pos.dword, w->channel,
            w->ev->kind == VGT_EV_EMPTY_DMA ? "semaphore" : k->memset ? "memset" : "copy");
    if (w->ev->kind != VGT_EV_EMPTY_DMA)
        fprintf(f, " 0x%" PRIx64 " -> 0x%" PRIx64 " %" PRIu64 " bytes %s->%s", k->src_va, k->dst_va, k->bytes,
                k->src_pitch ? "pitch" : "block", k->dst_pitch ? "pitch" : "block");
    if (k->semaphore_type) fprintf(f, " release 0x%" PRIx64 " := 0x%" PRIx64, k->sem_va, k->sem_payload);
    fputc('\n', f);
}
