/* fuzz_reader.c: libFuzzer target for the trace reader, the payload decoders and the trace model.
 *
 * The input is a .vgt file. It is opened through a memfd (so the reader sees a real, seekable fd with a
 * file size), read twice (once as a file, using the index when there is one; once in streaming mode),
 * every record's payload is decoded with its typed decoder and walked field by field, and every record is
 * folded into a model whose memory is limited to MODEL_MEMORY_LIMIT. Then a few seeks through the index.
 * Any crash, over-read, leak or undefined behaviour is a bug; errors are the expected outcome.
 *
 * Checksums stop almost every mutation at the first check, so the input is also read a third time after
 * fix_checksums() has recomputed every checksum it can find (file header, chunk headers and payloads,
 * records of stored and decompressible zstd chunks, index, footer): that lets mutations reach the record,
 * payload and model code.
 *
 * Build: cmake -DVGT_FUZZ=ON -DVGT_SANITIZE=ON with clang (see .ci/fuzz.sh). Seeds: tests/fuzz/corpus_reader/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "vgt/model.h"
#include "vgt/trace.h"

#define MODEL_MEMORY_LIMIT (8u << 20)
#define MAX_RECORDS 100000u
#define MAX_SEGMENTS 64u
#define FIXUP_MAX_RECORDS_BYTES (1u << 20)   /* zstd chunks larger than this keep their records checksum */

static int page_sink(void *ctx, uint64_t va, const uint8_t *bytes, const uint8_t *known)
{
    uint64_t *acc = ctx;
    *acc += va + bytes[0] + bytes[VGT_MODEL_PAGE_SIZE - 1] + (known ? known[VGT_MODEL_PAGE_SIZE - 1] : 1);
    return 0;
}

static int field_sink(void *ctx, const vgt_field *f)
{
    uint64_t *acc = ctx;
    *acc += f->value + f->length;
    if (f->bytes && f->length) *acc += f->bytes[0] + f->bytes[f->length - 1];   /* touch both ends */
    return 0;
}

/* The typed decoder of each known type; GPFIFO_SUBMIT has its own signature. */
static void decode_typed(const vgt_record *r, vgt_error *err)
{
    union {
        vgt_rec_session_start ss; vgt_rec_session_end se; vgt_rec_process_start ps; vgt_rec_process_end pe;
        vgt_rec_rm_alloc ra; vgt_rec_rm_free rf; vgt_rec_rm_control rc; vgt_rec_mem_alloc ma;
        vgt_rec_gpu_map gm; vgt_rec_gpu_unmap gu; vgt_rec_cpu_map cm; vgt_rec_cpu_unmap cu; vgt_rec_ioctl io;
        vgt_rec_memory me; vgt_rec_channel ch; vgt_rec_engine_object eo; vgt_rec_work_submit_token wt;
        vgt_rec_doorbell db; vgt_rec_semaphore sm; vgt_rec_cuda_module cmod; vgt_rec_cuda_launch cl;
        vgt_rec_cuda_image ci; vgt_rec_cuda_load cld; vgt_rec_cuda_function cf; vgt_rec_cuda_kernel ck;
        vgt_rec_cuda_memory cme; vgt_rec_cuda_call cc;
        vgt_rec_marker mk; vgt_rec_diagnostic dg;
    } u;
    switch (r->type) {
    case VGT_REC_SESSION_START: vgt_decode_session_start(r, &u.ss, err); break;
    case VGT_REC_SESSION_END: vgt_decode_session_end(r, &u.se, err); break;
    case VGT_REC_PROCESS_START: vgt_decode_process_start(r, &u.ps, err); break;
    case VGT_REC_PROCESS_END: vgt_decode_process_end(r, &u.pe, err); break;
    case VGT_REC_RM_ALLOC: vgt_decode_rm_alloc(r, &u.ra, err); break;
    case VGT_REC_RM_FREE: vgt_decode_rm_free(r, &u.rf, err); break;
    case VGT_REC_RM_CONTROL: vgt_decode_rm_control(r, &u.rc, err); break;
    case VGT_REC_MEM_ALLOC: vgt_decode_mem_alloc(r, &u.ma, err); break;
    case VGT_REC_GPU_MAP: vgt_decode_gpu_map(r, &u.gm, err); break;
    case VGT_REC_GPU_UNMAP: vgt_decode_gpu_unmap(r, &u.gu, err); break;
    case VGT_REC_CPU_MAP: vgt_decode_cpu_map(r, &u.cm, err); break;
    case VGT_REC_CPU_UNMAP: vgt_decode_cpu_unmap(r, &u.cu, err); break;
    case VGT_REC_IOCTL: vgt_decode_ioctl(r, &u.io, err); break;
    case VGT_REC_MEMORY: vgt_decode_memory(r, &u.me, err); break;
    case VGT_REC_CHANNEL: vgt_decode_channel(r, &u.ch, err); break;
    case VGT_REC_ENGINE_OBJECT: vgt_decode_engine_object(r, &u.eo, err); break;
    case VGT_REC_WORK_SUBMIT_TOKEN: vgt_decode_work_submit_token(r, &u.wt, err); break;
    case VGT_REC_DOORBELL: vgt_decode_doorbell(r, &u.db, err); break;
    case VGT_REC_SEMAPHORE: vgt_decode_semaphore(r, &u.sm, err); break;
    case VGT_REC_CUDA_MODULE: vgt_decode_cuda_module(r, &u.cmod, err); break;
    case VGT_REC_CUDA_LAUNCH: vgt_decode_cuda_launch(r, &u.cl, err); break;
    case VGT_REC_CUDA_IMAGE: vgt_decode_cuda_image(r, &u.ci, err); break;
    case VGT_REC_CUDA_LOAD: vgt_decode_cuda_load(r, &u.cld, err); break;
    case VGT_REC_CUDA_FUNCTION: vgt_decode_cuda_function(r, &u.cf, err); break;
    case VGT_REC_CUDA_KERNEL: vgt_decode_cuda_kernel(r, &u.ck, err); break;
    case VGT_REC_CUDA_MEMORY: vgt_decode_cuda_memory(r, &u.cme, err); break;
    case VGT_REC_CUDA_CALL: vgt_decode_cuda_call(r, &u.cc, err); break;
    case VGT_REC_MARKER: vgt_decode_marker(r, &u.mk, err); break;
    case VGT_REC_DIAGNOSTIC: vgt_decode_diagnostic(r, &u.dg, err); break;
    case VGT_REC_GPFIFO_SUBMIT: {
        vgt_rec_gpfifo_submit s;
        vgt_segment seg[MAX_SEGMENTS];
        if (vgt_decode_gpfifo_submit(r, &s, seg, MAX_SEGMENTS, err) == VGT_OK)
            for (uint32_t i = 0; i < s.entry_count; i++) (void)vgt_submit_entry(&s, i);
        break;
    }
    default: break;
    }
}

static void read_all(int fd, int streaming, uint64_t *acc)
{
    vgt_reader_options o = {.streaming = streaming, .verify_checksums = 1};
    vgt_reader *r;
    vgt_error err;
    if (lseek(fd, 0, SEEK_SET) != 0 || vgt_reader_open_fd(&r, fd, 0, &o, &err) != VGT_OK) return;
    const vgt_trace_info *info = vgt_reader_info(r);
    for (uint32_t i = 0; i < info->identity_count; i++) *acc += strlen(info->identity[i].key);
    (void)vgt_reader_identity(r, "producer");
    vgt_model *m = NULL;
    if (vgt_model_new(&m, &err) == VGT_OK) vgt_model_set_memory_limit(m, MODEL_MEMORY_LIMIT);
    vgt_record rec;
    for (uint32_t n = 0; n < MAX_RECORDS && vgt_reader_next(r, &rec, &err) == VGT_OK; n++) {
        decode_typed(&rec, &err);
        vgt_record_fields(&rec, field_sink, acc, &err);
        if (m && vgt_model_apply(m, &rec, &err) != VGT_OK) {   /* a model that refused stays refused */
            vgt_model_free(m);
            m = NULL;
        }
    }
    if (m) {
        uint8_t buf[64];
        uint64_t known;
        vgt_model_mem_read(m, 0x4000000000ull, buf, sizeof buf, &known, &err);
        vgt_model_mem_foreach(m, page_sink, acc, &err);
        for (uint32_t i = 0; i < vgt_model_mapping_count(m); i++)
            (void)vgt_model_mapping_find(m, vgt_model_mapping_at(m, i)->gpu_va);
        vgt_model_free(m);
    }
    if (!streaming) {
        const vgt_chunk_info *chunks;
        uint32_t n;
        if (vgt_reader_chunks(r, &chunks, &n, &err) == VGT_OK && n) {
            vgt_reader_seek_seq(r, chunks[n - 1].first_seq, &err);
            if (vgt_reader_next(r, &rec, &err) == VGT_OK) *acc += rec.length;
            vgt_reader_seek_time(r, chunks[0].last_ts, &err);
            vgt_reader_seek_submit(r, 1, &err);
            if (vgt_reader_next(r, &rec, &err) == VGT_OK) *acc += rec.length;
        }
    }
    vgt_reader_close(r);
}

/* ---- checksum fix-up (docs/trace-format.md sections 2, 3, 6) ---- */

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void wr(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t records_hash(const uint8_t *payload, uint32_t clen, uint32_t codec, uint64_t keep)
{
    if (codec == VGT_CODEC_STORED) return XXH64(payload, clen, 0);
    unsigned long long n = ZSTD_getFrameContentSize(payload, clen);
    if (codec != VGT_CODEC_ZSTD || n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN ||
        n > FIXUP_MAX_RECORDS_BYTES)
        return keep;
    void *buf = malloc(n ? n : 1);
    if (!buf) return keep;
    size_t got = ZSTD_decompress(buf, n, payload, clen);
    uint64_t h = ZSTD_isError(got) ? keep : XXH64(buf, got, 0);
    free(buf);
    return h;
}

/* Returns the end of the chunks (where a trailer would start). */
static size_t fix_chunks(uint8_t *d, size_t size, size_t pos)
{
    while (pos + VGT_CHUNK_HEADER_SIZE <= size && !memcmp(d + pos, "VGTC", 4)) {
        uint8_t *h = d + pos;
        uint32_t clen = (uint32_t)rd(h + 8, 4);
        if (clen > size - pos - VGT_CHUNK_HEADER_SIZE) break;
        const uint8_t *payload = h + VGT_CHUNK_HEADER_SIZE;
        wr(h + 48, XXH64(payload, clen, 0), 8);
        wr(h + 56, records_hash(payload, clen, (uint32_t)rd(h + 4, 2), rd(h + 56, 8)), 8);
        wr(h + 68, XXH32(h, 68, 0), 4);
        pos += VGT_CHUNK_HEADER_SIZE + clen;
    }
    return pos;
}

static void fix_checksums(uint8_t *d, size_t size)
{
    if (size < VGT_FILE_HEADER_FIXED + 8) return;
    uint32_t hlen = (uint32_t)rd(d + 16, 4);
    if (hlen < VGT_FILE_HEADER_FIXED + 8 || hlen > size) return;
    wr(d + hlen - 8, XXH64(d, hlen - 8, 0), 8);
    size_t end = fix_chunks(d, size, hlen);
    if (size - end < 16 + VGT_FOOTER_SIZE || memcmp(d + end, "VGTI", 4)) return;
    uint64_t n = rd(d + end + 4, 4);
    if (n > (size - end - 16 - VGT_FOOTER_SIZE) / VGT_INDEX_ENTRY_SIZE) return;
    size_t isz = 8 + VGT_INDEX_ENTRY_SIZE * n;
    wr(d + end + isz, XXH64(d + end, isz, 0), 8);
    uint8_t *foot = d + size - VGT_FOOTER_SIZE;
    wr(foot, end, 8);   /* the footer points at this index */
    wr(foot + 20, XXH32(foot, 20, 0), 4);
}

static int memfd_with(const uint8_t *data, size_t size)
{
    int fd = memfd_create("vgt-fuzz", 0);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    if (off != size) {
        close(fd);
        return -1;
    }
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile uint64_t sink;
    uint64_t acc = 0;
    int fd = memfd_with(data, size);
    if (fd >= 0) {
        read_all(fd, 0, &acc);
        read_all(fd, 1, &acc);
        close(fd);
    }
    uint8_t *fixed = malloc(size ? size : 1);
    if (fixed) {
        memcpy(fixed, data, size);
        fix_checksums(fixed, size);
        if ((fd = memfd_with(fixed, size)) >= 0) {
            read_all(fd, 0, &acc);
            close(fd);
        }
        free(fixed);
    }
    sink = acc;
    (void)sink;
    return 0;
}
