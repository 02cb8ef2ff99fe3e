/* dump_record.c: printing one record (see dump_record.h). */
#include "dump_record.h"

#include <inttypes.h>
#include <string.h>

#include "vgt/cli.h"

#define TEXT_PREFIX_BYTES 16u
#define TEXT_MAX_CHARS 96u
#define TEXT_MAX_ENTRIES 4u
#define TEXT_MAX_STATE_METHODS 8u   /* CHANNEL_METHODS writes spelled out on a text line */

static void hex_prefix(FILE *f, const uint8_t *p, uint32_t n)
{
    fprintf(f, "%uB", n);
    if (!n) return;
    fputc(':', f);
    for (uint32_t i = 0; i < n && i < TEXT_PREFIX_BYTES; i++) fprintf(f, "%02x", p[i]);
    if (n > TEXT_PREFIX_BYTES) fputs("...", f);
}

static void quoted_text(FILE *f, const uint8_t *p, uint32_t n)
{
    fputc('"', f);
    for (uint32_t i = 0; i < n && i < TEXT_MAX_CHARS; i++) {
        if (p[i] == '"' || p[i] == '\\') fprintf(f, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] >= 0x7f) fprintf(f, "\\x%02x", p[i]);
        else fputc(p[i], f);
    }
    fputs(n > TEXT_MAX_CHARS ? "...\"" : "\"", f);
}

static void text_value(FILE *f, const vgt_field *v)
{
    switch (v->kind) {
    case VGT_FIELD_U32: case VGT_FIELD_U64: fprintf(f, "%" PRIu64, v->value); break;
    case VGT_FIELD_X32: case VGT_FIELD_X64: fprintf(f, "0x%" PRIx64, v->value); break;
    case VGT_FIELD_S32: fprintf(f, "%" PRId64, (int64_t)v->value); break;
    case VGT_FIELD_BLOB: hex_prefix(f, v->bytes, v->length); break;
    case VGT_FIELD_TEXT: quoted_text(f, v->bytes, v->length); break;
    case VGT_FIELD_ENTRIES:
        fputc('[', f);
        for (uint32_t i = 0; i < v->length / 8 && i < TEXT_MAX_ENTRIES; i++) {
            uint64_t e = 0;
            for (int b = 7; b >= 0; b--) e = (e << 8) | v->bytes[8 * i + b];
            fprintf(f, "%s0x%016" PRIx64, i ? "," : "", e);
        }
        if (v->length / 8 > TEXT_MAX_ENTRIES) fprintf(f, ",+%u more", v->length / 8 - TEXT_MAX_ENTRIES);
        fputc(']', f);
        break;
    case VGT_FIELD_SEGMENT:
        fprintf(f, "0x%" PRIx64 "/flags=0x%x/", v->value, v->aux);
        hex_prefix(f, v->bytes, v->length);
        break;
    }
}

static int text_field(void *ctx, const vgt_field *v)
{
    FILE *f = ctx;
    fprintf(f, " %s=", v->name);
    text_value(f, v);
    return 0;
}

/* CHANNEL_METHODS (1.1): its writes as subch:method=value, beyond the hex prefix of the blob. */
static void text_state_methods(FILE *f, const vgt_record *r)
{
    vgt_rec_channel_methods cm;
    vgt_error e;
    if (vgt_decode_channel_methods(r, &cm, &e) != VGT_OK) return;
    uint32_t n = vgt_channel_methods_count(&cm);
    fprintf(f, " count=%u [", n);
    for (uint32_t i = 0; i < n && i < TEXT_MAX_STATE_METHODS; i++) {
        vgt_state_method m = vgt_channel_method_at(&cm, i);
        fprintf(f, "%s%u:0x%04x=0x%x", i ? "," : "", m.subch, m.method, m.value);
    }
    if (n > TEXT_MAX_STATE_METHODS) fprintf(f, ",+%u more", n - TEXT_MAX_STATE_METHODS);
    fputc(']', f);
}

static void json_state_methods(FILE *f, const vgt_record *r)
{
    vgt_rec_channel_methods cm;
    vgt_error e;
    if (vgt_decode_channel_methods(r, &cm, &e) != VGT_OK) return;
    fputs(",\"methods\":[", f);
    for (uint32_t i = 0; i < vgt_channel_methods_count(&cm); i++) {
        vgt_state_method m = vgt_channel_method_at(&cm, i);
        fprintf(f, "%s{\"subch\":%u,\"method\":%u,\"value\":%u}", i ? "," : "", m.subch, m.method, m.value);
    }
    fputc(']', f);
}

int vgt_dump_record_text(FILE *f, const vgt_record *r)
{
    const char *name = vgt_rec_type_name(r->type);
    fprintf(f, "%" PRIu64 " %" PRIu64 " ", r->seq, r->ts);
    if (name) fputs(name, f);
    else fprintf(f, "TYPE_0x%04x", r->type);
    if (r->flags) fprintf(f, " rflags=0x%x", r->flags);
    vgt_error e;
    int bad = 0;
    if (!name) {
        fputs(" payload=", f);
        hex_prefix(f, r->payload, r->length);
    } else if (vgt_record_fields(r, text_field, f, &e) != VGT_OK) {
        fprintf(f, " !malformed: %s", e.msg);
        bad = 1;
    } else if (r->type == VGT_REC_CHANNEL_METHODS) {
        text_state_methods(f, r);
    }
    fputc('\n', f);
    return bad;
}

/* ---- JSON ---- */

static uint32_t utf8_len(const uint8_t *p, uint32_t n)
{
    uint32_t len = p[0] >= 0xf0 && p[0] < 0xf5 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    if (!len || len > n) return 0;
    for (uint32_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return len;
}

void vgt_dump_json_text(FILE *f, const uint8_t *p, uint32_t n)
{
    fputc('"', f);
    for (uint32_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc(c, f);
        else {
            uint32_t k = utf8_len(p + i, n - i);
            if (k) {
                fwrite(p + i, 1, k, f);
                i += k;
                continue;
            }
            fprintf(f, "\\u%04x", c);
        }
        i++;
    }
    fputc('"', f);
}

struct json_ctx {
    FILE *f;
    int n;           /* fields printed */
    int segments;    /* segments printed (the array is open when > 0) */
};

static int json_field(void *vctx, const vgt_field *v)
{
    struct json_ctx *c = vctx;
    FILE *f = c->f;
    if (v->kind == VGT_FIELD_SEGMENT) {
        fputs(c->segments++ ? "," : (c->n++ ? ",\"segments\":[" : "\"segments\":["), f);
        fprintf(f, "{\"gpu_va\":%" PRIu64 ",\"length\":%u,\"flags\":%u,\"data\":", v->value, v->length, v->aux);
        vgt_json_bytes_hex(f, v->bytes, v->length);
        fputc('}', f);
        return 0;
    }
    if (c->n++) fputc(',', f);
    vgt_json_string(f, v->name);
    fputc(':', f);
    switch (v->kind) {
    case VGT_FIELD_S32: fprintf(f, "%" PRId64, (int64_t)v->value); break;
    case VGT_FIELD_BLOB: vgt_json_bytes_hex(f, v->bytes, v->length); break;
    case VGT_FIELD_TEXT: vgt_dump_json_text(f, v->bytes, v->length); break;
    case VGT_FIELD_ENTRIES:
        fputc('[', f);
        for (uint32_t i = 0; i < v->length / 8; i++) {
            uint64_t e = 0;
            for (int b = 7; b >= 0; b--) e = (e << 8) | v->bytes[8 * i + b];
            fprintf(f, "%s%" PRIu64, i ? "," : "", e);
        }
        fputc(']', f);
        break;
    default: fprintf(f, "%" PRIu64, v->value); break;
    }
    return 0;
}

int vgt_dump_record_json(FILE *f, const vgt_record *r)
{
    const char *name = vgt_rec_type_name(r->type);
    fprintf(f, "{\"seq\":%" PRIu64 ",\"ts\":%" PRIu64 ",\"type\":", r->seq, r->ts);
    if (name) vgt_json_string(f, name);
    else fputs("null", f);
    fprintf(f, ",\"type_id\":%u,\"flags\":%u,\"length\":%u,\"chunk_offset\":%" PRIu64 ",\"fields\":{", r->type, r->flags,
            r->length, r->chunk_offset);
    vgt_error e;
    struct json_ctx c = {f, 0, 0};
    vgt_status rc = VGT_OK;
    if (name) rc = vgt_record_fields(r, json_field, &c, &e);
    if (c.segments) fputc(']', f);
    else if (r->type == VGT_REC_GPFIFO_SUBMIT && rc == VGT_OK) fputs(c.n ? ",\"segments\":[]" : "\"segments\":[]", f);
    fputc('}', f);
    if (rc == VGT_OK && r->type == VGT_REC_CHANNEL_METHODS) json_state_methods(f, r);
    if (!name) {
        fputs(",\"payload\":", f);
        vgt_json_bytes_hex(f, r->payload, r->length);
    }
    if (rc != VGT_OK) {
        fputs(",\"error\":", f);
        vgt_json_string(f, e.msg);
    }
    fputs("}\n", f);
    return rc != VGT_OK;
}
