/* fuzz_model_rm.c: libFuzzer target for the trace model fed random RM and ioctl records (trace-format's
 * model.h): each 2-byte opcode and its fields come from the input, with handles drawn from a small pool so
 * that objects, parents, channels, mappings and frees meet (trees freed from the middle, channels
 * re-allocated, mappings overlapping and ending at 2^64, tokens, controls whose parameters are read). Every
 * record is encoded by the writer's encoders and decoded by the model as a trace would be; after each, the
 * model is queried (objects, channels, mappings by VA, memory) with limits as the CLI sets them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vgt/model.h"

static uint64_t take(const uint8_t **p, size_t *n, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && *n; i++, (*p)++, (*n)--) v |= (uint64_t)**p << (8 * i);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_model_rm", 0);
    if (fd < 0) return 0;
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = fz_writer_options();
    if (vgt_writer_open_fd(&w, fd, 0, &o, NULL, 0, &err) != VGT_OK) {
        close(fd);
        return 0;
    }
    const uint8_t *p = data;
    size_t n = size;
    uint8_t blob[256];
    for (uint64_t ts = 1; n >= 2 && ts < 2000; ts++) {
        uint32_t op = (uint32_t)take(&p, &n, 1), client = 1 + (uint32_t)take(&p, &n, 1) % 2;
        uint32_t h = 0x100 + (uint32_t)take(&p, &n, 1) % 24, parent = 0x100 + (uint32_t)take(&p, &n, 1) % 24;
        uint32_t cls = (uint32_t)take(&p, &n, 2), status = (op & 0x80) ? (uint32_t)take(&p, &n, 1) : 0;
        uint32_t bl = (uint32_t)take(&p, &n, 1);
        if (bl > n) bl = (uint32_t)n;
        memcpy(blob, p, bl), p += bl, n -= bl;
        switch (op % 11) {
        case 0: {
            vgt_rec_rm_alloc a = {client, parent, h, cls, status, bl, blob, blob};
            vgt_write_rm_alloc(w, ts, &a, &err);
        } break;
        case 1: {
            vgt_rec_rm_free f = {.client = client, .parent = parent, .handle = op & 0x40 ? client : h, .status = status};
            vgt_write_rm_free(w, ts, &f, &err);
        } break;
        case 2: {
            vgt_rec_rm_control c = {.client = client, .object = h, .cmd = (uint32_t)take(&p, &n, 4), .status = status,
                                    .params_length = bl, .params_in = blob, .params_out = blob};
            vgt_write_rm_control(w, ts, &c, &err);
        } break;
        case 3: {
            vgt_rec_mem_alloc m = {.client = client, .parent = parent, .handle = h, .cls = cls & 0xff,
                                   .size = take(&p, &n, 8), .aperture = op & 3, .status = status};
            vgt_write_mem_alloc(w, ts, &m, &err);
        } break;
        case 4: {
            vgt_rec_gpu_map g = {.client = client, .device = parent, .va_space = cls, .memory = h,
                                 .gpu_va = take(&p, &n, 8), .offset = take(&p, &n, 2), .length = take(&p, &n, 8),
                                 .status = status, .source = 1};
            vgt_write_gpu_map(w, ts, &g, &err);
        } break;
        case 5: {
            vgt_rec_gpu_unmap u = {.client = client, .memory = h, .gpu_va = take(&p, &n, 8), .length = take(&p, &n, 8),
                                   .status = status};
            vgt_write_gpu_unmap(w, ts, &u, &err);
        } break;
        case 6: {
            vgt_rec_channel c = {.client = client, .parent = parent, .handle = h, .cls = 0xC800 | (cls & 0xff),
                                 .ring_va = take(&p, &n, 8), .entries = (uint32_t)take(&p, &n, 2), .status = status};
            vgt_write_channel(w, ts, &c, &err);
        } break;
        case 7: {
            vgt_rec_engine_object e = {.client = client, .channel = parent, .handle = h, .cls = cls, .status = status};
            vgt_write_engine_object(w, ts, &e, &err);
        } break;
        case 8: {
            vgt_rec_work_submit_token t = {client, h, (uint32_t)take(&p, &n, 4)};
            vgt_write_work_submit_token(w, ts, &t, &err);
        } break;
        case 9: {
            vgt_rec_ioctl io = {.node = op & 3, .request = (uint32_t)take(&p, &n, 4), .result = (int32_t)status,
                                .params_length = bl, .params_in = blob, .params_out = blob};
            vgt_write_ioctl(w, ts, &io, &err);
        } break;
        default: {
            vgt_rec_memory m = {.gpu_va = take(&p, &n, 8), .length = bl, .reason = op & 3, .memory = h, .data = blob};
            vgt_write_memory(w, ts, &m, &err);
        } break;
        }
    }
    vgt_writer_close(w, &err);
    lseek(fd, 0, SEEK_SET);
    vgt_reader *r;
    vgt_reader_options ro = {.verify_checksums = 1};
    vgt_model *m;
    if (vgt_reader_open_fd(&r, fd, 0, &ro, &err) == VGT_OK && vgt_model_new(&m, &err) == VGT_OK) {
        vgt_model_set_memory_limit(m, 1ull << 32);   /* the CLI's default model limit (4 GiB) */
        vgt_record rec;
        while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
            if (vgt_model_apply(m, &rec, &err) != VGT_OK) continue;
            uint32_t nch = vgt_model_channel_count(m);
            for (uint32_t i = 0; i < nch; i++) {
                const vgt_model_channel *c = vgt_model_channel_at(m, i);
                if (vgt_model_channel_find(m, c->rec.client, c->rec.handle) != c) abort();
                vgt_model_engine_class(c, c->rec.handle);
            }
            vgt_model_channel_by_token(m, 7);
            uint8_t b[64];
            uint64_t known;
            vgt_model_mem_read(m, rec.seq * 4096, b, sizeof b, &known, &err);
            vgt_model_mapping_find(m, rec.seq << 20);
        }
        vgt_model_free(m);
        vgt_reader_close(r);
    }
    close(fd);
    return 0;
}
