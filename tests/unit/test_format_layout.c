/* test_format_layout.c: payload layouts against docs/trace-format.md section 5.
 *  - the table's field widths add up to every type's fixed size;
 *  - typed encoders put fields at the offsets the spec gives (golden offsets, checked in the bytes);
 *  - decoders reject a short fixed part and a blob running past the payload, naming seq and field;
 *    they accept a payload longer than its fields (a newer minor's additions) and blobs padded or not;
 *  - type names and numbers; the generic field walk reports every field of the spec's table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../trace-format/src/le.h"
#include "../../trace-format/src/records.h"
#include "vgt/trace.h"

#include "check.h"

static void test_table_sizes(void)
{
    int n = 0;
    for (uint32_t i = 0; rec_layout_at(i); i++, n++) {
        const rec_layout *l = rec_layout_at(i);
        uint32_t sum = 0;
        for (uint32_t f = 0; f < l->nfields; f++) sum += rec_field_width(l->fields[f].kind);
        CHECK(sum == l->fixed, "%s: widths add to %u, fixed is %u", l->name, sum, l->fixed);
        CHECK(vgt_rec_type_fixed_size(l->type) == l->fixed, "%s fixed size", l->name);
        CHECK(vgt_rec_type_from_name(l->name) == l->type, "%s by name", l->name);
    }
    CHECK(n == 35, "24 record types in 1.0, CHANNEL_STATE and CHANNEL_METHODS in 1.1, six CUDA API types in 1.2, "
          "MEMORY_CAS in 1.3, CHANNEL_PROGRESS in 1.4, CUDA_IMAGE_REF in 1.5, table has %d", n);
    CHECK(vgt_rec_type_from_name("cuda_image_ref") == 0x0038 && vgt_rec_type_fixed_size(0x0038) == 48,
          "CUDA_IMAGE_REF (1.5)");
    CHECK(vgt_rec_type_fixed_size(VGT_REC_CUDA_IMAGE) == 16 && vgt_rec_type_fixed_size(VGT_REC_CUDA_LOAD) == 56 &&
          vgt_rec_type_fixed_size(VGT_REC_CUDA_FUNCTION) == 56 && vgt_rec_type_fixed_size(VGT_REC_CUDA_KERNEL) == 96 &&
          vgt_rec_type_fixed_size(VGT_REC_CUDA_MEMORY) == 88 && vgt_rec_type_fixed_size(VGT_REC_CUDA_CALL) == 56,
          "1.2 fixed sizes as the spec's tables give them");
    CHECK(vgt_rec_type_from_name("channel_progress") == 0x002A && vgt_rec_type_fixed_size(0x002A) == 24,
          "CHANNEL_PROGRESS (1.4)");
    CHECK(vgt_rec_type_from_name("memory_cas") == 0x0029 && vgt_rec_type_fixed_size(0x0029) == 40, "MEMORY_CAS (1.3)");
    CHECK(vgt_rec_type_from_name("channel_methods") == 0x0028 && vgt_rec_type_fixed_size(0x0028) == 16, "CHANNEL_METHODS (1.1)");
    CHECK(vgt_rec_type_from_name("channel_state") == 0x0027 && vgt_rec_type_fixed_size(0x0027) == 64, "CHANNEL_STATE (1.1)");
    CHECK(vgt_rec_type_from_name("gpfifo_submit") == VGT_REC_GPFIFO_SUBMIT, "any case");
    CHECK(vgt_rec_type_from_name("0x23") == 0x23 && vgt_rec_type_from_name("61440") == 0xF000, "numbers");
    CHECK(vgt_rec_type_from_name("NOPE") == -1 && vgt_rec_type_from_name("0") == -1 && vgt_rec_type_from_name("65535") == -1, "invalid");
    CHECK(vgt_rec_type_name(0x9999) == NULL && vgt_rec_type_fixed_size(0x9999) == 0, "unknown type");
}

/* A writer to a temp file; read back the records' payloads. */
static char path[256];
static vgt_writer *w;

static void start(void)
{
    vgt_error e;
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = VGT_CODEC_STORED;
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) {
        fprintf(stderr, "open: %s\n", e.msg);
        exit(2);
    }
}

static vgt_reader *finish(void)
{
    vgt_error e;
    vgt_reader *r;
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        fprintf(stderr, "reopen: %s\n", e.msg);
        exit(2);
    }
    return r;
}

static void test_golden_offsets(void)
{
    vgt_error e;
    start();
    uint8_t name[3] = {'a', 'b', 'c'}, params[5] = {1, 2, 3, 4, 5};
    vgt_write_channel(w, 1, &(vgt_rec_channel){11, 12, 13, 0xc86f, 0x1111222233334444ull, 1024, 15, 0x16, 0x17, 18, 19, 20, 21, 22}, &e);
    vgt_write_mem_alloc(w, 2, &(vgt_rec_mem_alloc){1, 2, 3, 0x40, 0x5555, 0x6666, 7, 8, 9, 2, 0x33}, &e);
    vgt_write_gpu_map(w, 3, &(vgt_rec_gpu_map){1, 2, 3, 4, 0xaaaa, 0xbbbb, 0xcccc, 0xdd, 2, 0xee}, &e);
    vgt_write_cuda_launch(w, 4, &(vgt_rec_cuda_launch){1, 2, 3, {4, 5, 6}, {7, 8, 9}, 10, 3, 5, (const char *)name, params}, &e);
    vgt_write_rm_control(w, 5, &(vgt_rec_rm_control){1, 2, 0xc36f0108, 0, 0, 5, params, params}, &e);
    vgt_write_cpu_unmap(w, 6, &(vgt_rec_cpu_unmap){1, 2, 3, 0x7777, 0x8888}, &e);
    vgt_write_channel_state(w, 7, &(vgt_rec_channel_state){0x11, 0x12, 0x13, 1, 0x0000560000000000ull,
                                                          {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7}, 0x14}, &e);
    vgt_reader *r = finish();
    vgt_record rec;
    vgt_reader_next(r, &rec, &e);   /* CHANNEL: spec offsets 16 ring_va, 40 userd_gpu_va, 64 status */
    CHECK(rec.length == 72 && le_get64(rec.payload + 16) == 0x1111222233334444ull && le_get64(rec.payload + 40) == 0x17 &&
          le_get32(rec.payload + 48) == 18 && le_get32(rec.payload + 64) == 22 && le_get32(rec.payload + 68) == 0, "CHANNEL offsets");
    vgt_reader_next(r, &rec, &e);   /* MEM_ALLOC: 16 size, 24 cpu_address, 44 aperture, 48 status */
    CHECK(rec.length == 56 && le_get64(rec.payload + 16) == 0x5555 && le_get64(rec.payload + 24) == 0x6666 &&
          le_get32(rec.payload + 44) == 2 && le_get32(rec.payload + 48) == 0x33, "MEM_ALLOC offsets");
    vgt_reader_next(r, &rec, &e);   /* GPU_MAP: 16 gpu_va, 24 offset, 32 length, 40 flags, 44 source, 48 status */
    CHECK(rec.length == 56 && le_get64(rec.payload + 16) == 0xaaaa && le_get64(rec.payload + 24) == 0xbbbb &&
          le_get64(rec.payload + 32) == 0xcccc && le_get32(rec.payload + 40) == 0xdd && le_get32(rec.payload + 44) == 2 &&
          le_get32(rec.payload + 48) == 0xee, "GPU_MAP offsets");
    vgt_reader_next(r, &rec, &e);   /* CUDA_LAUNCH: 24 grid, 36 block, 48 shared, 52 name_length, 56 params_length, 64 name, 72 params */
    CHECK(le_get32(rec.payload + 24) == 4 && le_get32(rec.payload + 44) == 9 && le_get32(rec.payload + 48) == 10 &&
          le_get32(rec.payload + 52) == 3 && le_get32(rec.payload + 56) == 5 && !memcmp(rec.payload + 64, "abc", 3) &&
          rec.payload[67] == 0 && !memcmp(rec.payload + 72, params, 5) && rec.length == 77, "CUDA_LAUNCH offsets (length %u)", rec.length);
    vgt_reader_next(r, &rec, &e);   /* RM_CONTROL: params_in at 24, params_out at 32 (padded), last blob unpadded */
    CHECK(rec.length == 24 + 8 + 5 && le_get32(rec.payload + 8) == 0xc36f0108 && !memcmp(rec.payload + 32, params, 5), "RM_CONTROL");
    vgt_reader_next(r, &rec, &e);   /* CPU_UNMAP: 12 reserved, 16 cpu_address, 24 length */
    CHECK(rec.length == 32 && le_get64(rec.payload + 16) == 0x7777 && le_get64(rec.payload + 24) == 0x8888, "CPU_UNMAP");
    /* CHANNEL_STATE (1.1): 0 client, 4 channel, 8 subdevice_mask, 12 flags, 16 extended_base, 24 + 4i subchi_class,
     * 56 stored_subdevice_mask, 60 reserved */
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.type == VGT_REC_CHANNEL_STATE && rec.length == 64, "CHANNEL_STATE read");
    CHECK(le_get32(rec.payload) == 0x11 && le_get32(rec.payload + 4) == 0x12 && le_get32(rec.payload + 8) == 0x13 &&
          le_get32(rec.payload + 12) == 1 && le_get64(rec.payload + 16) == 0x0000560000000000ull &&
          le_get32(rec.payload + 24) == 0xa0 && le_get32(rec.payload + 24 + 4 * 7) == 0xa7 &&
          le_get32(rec.payload + 56) == 0x14 && le_get32(rec.payload + 60) == 0, "CHANNEL_STATE offsets");
    vgt_rec_channel_state cs;
    CHECK(vgt_decode_channel_state(&rec, &cs, &e) == VGT_OK && cs.subch_class[3] == 0xa3 && cs.extended_base == 0x0000560000000000ull &&
          cs.stored_subdevice_mask == 0x14 && cs.flags == VGT_CHANNEL_STATE_RUN_PENDING, "CHANNEL_STATE decode");
    vgt_reader_close(r);
}

/* CHANNEL_METHODS (1.1): 0 client, 4 channel, 8 flags, 12 writes_length, 16 writes of 8 bytes each
 * (u16 method, u16 subchannel, u32 value); decode rejects a ragged length and out-of-range writes. */
/* Format 1.2: the call head and the CUDA_KERNEL / CUDA_MEMORY offsets of docs/trace-format.md section 5. */
static void test_cuda_offsets(void)
{
    vgt_error e;
    start();
    uint8_t params[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, layout[16] = {0, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0};
    vgt_rec_cuda_kernel k = {{13, -2, 77, 0x10001, 5, 6}, 0xf00d, 0x5a, {1, 2, 3}, {4, 5, 6}, 7, 12, 0xe1, 9, 16,
                             params, layout};
    CHECK(vgt_write_cuda_kernel(w, 1, &k, &e) == VGT_OK, "write CUDA_KERNEL: %s", e.msg);
    vgt_rec_cuda_memory m = {{29, 0, 1, 0, 3, 4}, 0xd57, 0x5c, 3, 0, 0, 3, 0xab, 0, 3, params};
    CHECK(vgt_write_cuda_memory(w, 2, &m, &e) == VGT_OK, "write CUDA_MEMORY: %s", e.msg);
    vgt_reader *r = finish();
    vgt_record rec;
    /* CUDA_KERNEL: 0 api, 4 result, 8 thread, 12 flags, 16 submits_before, 24 submits_after, 32 function, 40 stream,
     * 48 grid, 60 block, 72 shared_bytes, 76 params_length, 80 graph_exec, 88 node_index, 92 layout_length,
     * 96 params (padded to 8), 112 layout */
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.type == VGT_REC_CUDA_KERNEL, "CUDA_KERNEL read");
    CHECK(le_get32(rec.payload) == 13 && le_get32(rec.payload + 4) == 0xfffffffe && le_get32(rec.payload + 8) == 77 &&
          le_get32(rec.payload + 12) == 0x10001 && le_get64(rec.payload + 16) == 5 && le_get64(rec.payload + 24) == 6 &&
          le_get64(rec.payload + 32) == 0xf00d && le_get64(rec.payload + 40) == 0x5a && le_get32(rec.payload + 56) == 3 &&
          le_get32(rec.payload + 60) == 4 && le_get32(rec.payload + 72) == 7 && le_get32(rec.payload + 76) == 12 &&
          le_get64(rec.payload + 80) == 0xe1 && le_get32(rec.payload + 88) == 9 && le_get32(rec.payload + 92) == 16 &&
          !memcmp(rec.payload + 96, params, 12) && !memcmp(rec.payload + 112, layout, 16) && rec.length == 128,
          "CUDA_KERNEL offsets (length %u)", rec.length);
    vgt_rec_cuda_kernel kd;
    CHECK(vgt_decode_cuda_kernel(&rec, &kd, &e) == VGT_OK && kd.call.result == -2 && kd.layout_length == 16 &&
          kd.params_length == 12 && kd.grid[2] == 3, "CUDA_KERNEL decodes");
    /* CUDA_MEMORY: 32 dst, 40 src, 48 size, 56 stream, 64 graph_exec, 72 op, 76 value, 80 node_index,
     * 84 data_length, 88 data */
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.type == VGT_REC_CUDA_MEMORY, "CUDA_MEMORY read");
    CHECK(le_get64(rec.payload + 32) == 0xd57 && le_get64(rec.payload + 40) == 0x5c && le_get64(rec.payload + 48) == 3 &&
          le_get32(rec.payload + 72) == 3 && le_get32(rec.payload + 76) == 0xab && le_get32(rec.payload + 84) == 3 &&
          !memcmp(rec.payload + 88, params, 3) && rec.length == 91, "CUDA_MEMORY offsets (length %u)", rec.length);
    vgt_reader_close(r);
}

static void test_channel_methods(void)
{
    vgt_error e;
    start();
    uint8_t writes[3 * 8];
    vgt_state_method in[3] = {{0, 0x0114, 0}, {5, 0x0118, 0x1234abcd}, {7, 0x3ffc, 0xffffffff}};
    for (int i = 0; i < 3; i++) vgt_channel_method_put(writes + 8 * i, &in[i]);
    CHECK(vgt_write_channel_methods(w, 9, &(vgt_rec_channel_methods){0x21, 0x22, 0, 24, writes}, &e) == VGT_OK, "write: %s", e.msg);
    vgt_reader *r = finish();
    vgt_record rec;
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.type == VGT_REC_CHANNEL_METHODS && rec.length == 40, "CHANNEL_METHODS read");
    CHECK(le_get32(rec.payload) == 0x21 && le_get32(rec.payload + 4) == 0x22 && le_get32(rec.payload + 12) == 24 &&
          rec.payload[16] == 0x14 && rec.payload[17] == 0x01 && rec.payload[18] == 0 && le_get32(rec.payload + 20) == 0 &&
          rec.payload[24] == 0x18 && rec.payload[26] == 5 && le_get32(rec.payload + 28) == 0x1234abcd &&
          rec.payload[32] == 0xfc && rec.payload[33] == 0x3f && rec.payload[34] == 7, "CHANNEL_METHODS offsets");
    vgt_rec_channel_methods cm;
    CHECK(vgt_decode_channel_methods(&rec, &cm, &e) == VGT_OK && vgt_channel_methods_count(&cm) == 3, "decode: %s", e.msg);
    for (uint32_t i = 0; i < 3; i++) {
        vgt_state_method m = vgt_channel_method_at(&cm, i);
        CHECK(m.subch == in[i].subch && m.method == in[i].method && m.value == in[i].value, "write %u", i);
    }
    vgt_reader_close(r);

    uint8_t bad[16 + 16] = {0};
    bad[12] = 12;   /* writes_length 12: not whole writes */
    vgt_record b = {VGT_REC_CHANNEL_METHODS, 0, 28, 5, 0, bad, 0, 0};
    CHECK(vgt_decode_channel_methods(&b, &cm, &e) == VGT_E_FORMAT && strstr(e.msg, "multiple of 8"), "ragged: %s", e.msg);
    bad[12] = 16;
    bad[16 + 8 + 2] = 8;   /* write 1: subchannel 8 */
    b.length = 32;
    CHECK(vgt_decode_channel_methods(&b, &cm, &e) == VGT_E_FORMAT && strstr(e.msg, "write 1") && strstr(e.msg, "subchannel 8"),
          "subchannel: %s", e.msg);
    bad[16 + 8 + 2] = 0;
    bad[16] = 0x02;        /* write 0: method 0x2, not a multiple of 4 */
    CHECK(vgt_decode_channel_methods(&b, &cm, &e) == VGT_E_FORMAT && strstr(e.msg, "write 0"), "unaligned: %s", e.msg);
    bad[16] = 0;
    bad[12] = 24;          /* writes past the payload */
    CHECK(vgt_decode_channel_methods(&b, &cm, &e) == VGT_E_FORMAT && strstr(e.msg, "CHANNEL_METHODS"), "overrun: %s", e.msg);
}

static vgt_record raw(uint16_t type, const uint8_t *p, uint32_t n)
{
    vgt_record r = {type, 0, n, 77, 0, p, 1234, 0};
    return r;
}

static void test_malformed(void)
{
    uint8_t buf[128] = {0};
    vgt_error e;
    vgt_rec_memory m;
    vgt_record r = raw(VGT_REC_MEMORY, buf, 20);
    CHECK(vgt_decode_memory(&r, &m, &e) == VGT_E_FORMAT && strstr(e.msg, "seq 77") && strstr(e.msg, "MEMORY"), "short fixed: %s", e.msg);
    le_put32(buf + 8, 100);   /* data length 100 in a 64-byte payload */
    r = raw(VGT_REC_MEMORY, buf, 64);
    CHECK(vgt_decode_memory(&r, &m, &e) == VGT_E_FORMAT && strstr(e.msg, "'data'"), "blob overrun: %s", e.msg);
    le_put32(buf + 8, 40);    /* exactly fits, unpadded last blob */
    r = raw(VGT_REC_MEMORY, buf, 64);
    CHECK(vgt_decode_memory(&r, &m, &e) == VGT_OK && m.length == 40 && m.data == buf + 24, "exact fit");
    le_put32(buf + 8, 3);     /* with bytes after: a newer minor's fields */
    r = raw(VGT_REC_MEMORY, buf, 64);
    CHECK(vgt_decode_memory(&r, &m, &e) == VGT_OK && m.length == 3, "longer payload accepted");
    /* RM_ALLOC: params_in padded, params_out runs past */
    memset(buf, 0, sizeof buf);
    le_put32(buf + 20, 7);
    r = raw(VGT_REC_RM_ALLOC, buf, 24 + 8 + 6);
    vgt_rec_rm_alloc a;
    CHECK(vgt_decode_rm_alloc(&r, &a, &e) == VGT_E_FORMAT && strstr(e.msg, "params_out"), "second blob overrun: %s", e.msg);
    r = raw(VGT_REC_RM_ALLOC, buf, 24 + 8 + 7);
    CHECK(vgt_decode_rm_alloc(&r, &a, &e) == VGT_OK && a.params_out == buf + 32, "second blob fits");
    /* GPFIFO_SUBMIT: entries past the payload, a segment past the payload */
    memset(buf, 0, sizeof buf);
    le_put32(buf + 32, 20);
    r = raw(VGT_REC_GPFIFO_SUBMIT, buf, 128);
    vgt_rec_gpfifo_submit s;
    vgt_segment seg[4];
    CHECK(vgt_decode_gpfifo_submit(&r, &s, seg, 4, &e) == VGT_E_FORMAT && strstr(e.msg, "entries"), "entries overrun: %s", e.msg);
    le_put32(buf + 32, 1);
    le_put32(buf + 36, 1);
    le_put32(buf + 48 + 8, 200);
    CHECK(vgt_decode_gpfifo_submit(&r, &s, seg, 4, &e) == VGT_E_FORMAT && strstr(e.msg, "segment"), "segment overrun: %s", e.msg);
    le_put32(buf + 48 + 8, 64);
    CHECK(vgt_decode_gpfifo_submit(&r, &s, seg, 4, &e) == VGT_OK && seg[0].length == 64 && seg[0].data == buf + 64, "segment fits");
    CHECK(vgt_decode_gpfifo_submit(&r, &s, seg, 0, &e) == VGT_E_LIMIT, "no room for the segment");
    r = raw(0x7777, buf, 8);
    CHECK(vgt_record_fields(&r, NULL, NULL, &e) == VGT_E_NOT_FOUND, "unknown type has no fields");
}

struct names { char list[1024]; };
static int collect(void *ctx, const vgt_field *f)
{
    struct names *n = ctx;
    strncat(n->list, f->name, sizeof n->list - strlen(n->list) - 2);
    strcat(n->list, ",");
    return 0;
}

static void test_field_walk(void)
{
    uint8_t buf[64] = {0};
    le_put32(buf + 0, 4);
    memcpy(buf + 8, "note", 4);
    vgt_record r = raw(VGT_REC_MARKER, buf, 12);
    struct names n = {""};
    vgt_error e;
    CHECK(vgt_record_fields(&r, collect, &n, &e) == VGT_OK && !strcmp(n.list, "length,flags,text,"), "marker fields: %s", n.list);
    memset(buf, 0, sizeof buf);
    r = raw(VGT_REC_CHANNEL, buf, 64);
    CHECK(vgt_record_fields(&r, collect, &n, &e) == VGT_E_FORMAT, "short CHANNEL");
    memset(&n, 0, sizeof n);
    uint8_t big[80] = {0};
    r = raw(VGT_REC_CHANNEL, big, 72);
    CHECK(vgt_record_fields(&r, collect, &n, &e) == VGT_OK &&
          !strcmp(n.list, "client,parent,handle,class,ring_va,entries,userd_memory,userd_offset,userd_gpu_va,engine_type,"
                          "va_space,context_share,error_notifier,status,"), "channel fields: %s", n.list);
    memset(&n, 0, sizeof n);
    r = raw(VGT_REC_CHANNEL_STATE, big, 60);
    CHECK(vgt_record_fields(&r, collect, &n, &e) == VGT_E_FORMAT && strstr(e.msg, "CHANNEL_STATE"), "short CHANNEL_STATE: %s", e.msg);
    r = raw(VGT_REC_CHANNEL_STATE, big, 72);   /* 8 bytes a newer minor appended: ignored */
    CHECK(vgt_record_fields(&r, collect, &n, &e) == VGT_OK &&
          !strcmp(n.list, "client,channel,subdevice_mask,flags,extended_base,subch0_class,subch1_class,subch2_class,"
                          "subch3_class,subch4_class,subch5_class,subch6_class,subch7_class,stored_subdevice_mask,"),
          "channel_state fields: %s", n.list);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/vgt-test-layout-%d.vgt", (int)getpid());
    test_table_sizes();
    test_golden_offsets();
    test_cuda_offsets();
    test_channel_methods();
    test_malformed();
    test_field_walk();
    remove(path);
    return check_finish("test_format_layout");
}
