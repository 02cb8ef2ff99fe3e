/* test_format_roundtrip.c: libvgt writer and reader against each other.
 *  - every record type written with its typed encoder and read back field by field, in stored and zstd
 *    chunks, with one record per chunk and many per chunk;
 *  - seeks by sequence number, time and submission, through the index and through a scan (no trailer);
 *  - a stream through a pipe (writer thread, streaming reader), trailer included;
 *  - crash-safe mode: every submission readable by a second reader while the writer is still open;
 *  - a writer whose writes start failing (EFBIG) reports it, and the file keeps every chunk before. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vgt/trace.h"

#include "check.h"

static char tmpdir[256];
static const vgt_identity IDENT[] = {{"producer", "test_format_roundtrip"}, {"gpu_name", "NVIDIA H200"}, {"chip", "GH100"}};

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static uint8_t blob_a[100], blob_b[100], seg_data[3][300], entries[5 * 8];
static vgt_segment segs[3];

/* One of each type; ts = 1000 + 10 * seq. Returns the number of records written. */
static uint32_t write_all_types(vgt_writer *w, uint64_t base_ts, vgt_error *err)
{
    fill(blob_a, sizeof blob_a, 1);
    fill(blob_b, sizeof blob_b, 2);
    for (int i = 0; i < 3; i++) fill(seg_data[i], sizeof seg_data[i], 10 + i);
    fill(entries, sizeof entries, 3);
    segs[0] = (vgt_segment){0x200000000ull, 300, 0, seg_data[0]};
    segs[1] = (vgt_segment){0x200001000ull, 13, VGT_SEGMENT_FLAG_SUBROUTINE, seg_data[1]};
    segs[2] = (vgt_segment){0x200002000ull, 0, VGT_SEGMENT_FLAG_TRUNCATED, NULL};
    uint64_t t = base_ts;
    int rc = 0;
#define W(call) rc |= (call) != VGT_OK, t += 10
    W(vgt_write_session_start(w, t, &(vgt_rec_session_start){111, 42, 1, blob_a, 13}, err));
    W(vgt_write_process_start(w, t, &(vgt_rec_process_start){43, 42, "/usr/bin/x", 10}, err));
    W(vgt_write_rm_alloc(w, t, &(vgt_rec_rm_alloc){0xc1d00001, 0xc1d00002, 0xcafe0001, 0xc86f, 0, 7, blob_a, blob_b}, err));
    W(vgt_write_rm_free(w, t, &(vgt_rec_rm_free){1, 2, 3, 0x1f}, err));
    W(vgt_write_rm_control(w, t, &(vgt_rec_rm_control){1, 2, 0xc36f0108, 0, 5, 4, blob_b, blob_a}, err));
    W(vgt_write_mem_alloc(w, t, &(vgt_rec_mem_alloc){1, 2, 3, 0x3e, 1ull << 33, 0x7f0000001000ull, 4, 5, 6, 2, 0}, err));
    W(vgt_write_gpu_map(w, t, &(vgt_rec_gpu_map){1, 2, 3, 4, 0x200000000ull, 0x1000, 0x10000, 9, VGT_MAP_RM_DMA, 0}, err));
    W(vgt_write_gpu_unmap(w, t, &(vgt_rec_gpu_unmap){1, 2, 3, 4, 0x200000000ull, 0x10000, VGT_MAP_UVM_EXTERNAL, 0}, err));
    W(vgt_write_cpu_map(w, t, &(vgt_rec_cpu_map){1, 2, 3, 4, 0x10, 0x20, 0x7f00deadb000ull, 0}, err));
    W(vgt_write_cpu_unmap(w, t, &(vgt_rec_cpu_unmap){1, 2, 3, 0x7f00deadb000ull, 0x20}, err));
    W(vgt_write_ioctl(w, t, &(vgt_rec_ioctl){VGT_NODE_UVM, 0xc0104601, -22, 16, blob_a, blob_b}, err));
    W(vgt_write_memory(w, t, &(vgt_rec_memory){0x200003000ull, 99, VGT_MEM_CHANGED, 4, 0, blob_b}, err));
    W(vgt_write_channel(w, t, &(vgt_rec_channel){1, 2, 3, 0xc86f, 0x300000000ull, 1024, 5, 0x40, 0x300100000ull, 1, 6, 7, 8, 0}, err));
    W(vgt_write_engine_object(w, t, &(vgt_rec_engine_object){1, 3, 0xbeef, 0xcbc0, 0}, err));
    W(vgt_write_work_submit_token(w, t, &(vgt_rec_work_submit_token){1, 3, 0x1234}, err));
    W(vgt_write_gpfifo_submit(w, t, &(vgt_rec_gpfifo_submit){1, 3, 0x1234, VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED, 0, 0,
                                                            VGT_GP_NOT_READ, 5, 5, 3, entries, segs}, err));
    W(vgt_write_doorbell(w, t, &(vgt_rec_doorbell){0x1234, 3, 0x90, 0}, err));
    W(vgt_write_semaphore(w, t, &(vgt_rec_semaphore){0x200004000ull, 0x123456789ull, 8, 1}, err));
    W(vgt_write_cuda_module(w, t, &(vgt_rec_cuda_module){0xabc, 64, 2, blob_a}, err));
    W(vgt_write_cuda_launch(w, t, &(vgt_rec_cuda_launch){0xabc, 0xdef, 0x77, {1, 2, 3}, {32, 4, 1}, 1024, 6, 24, "kernel", blob_b}, err));
    W(vgt_write_marker(w, t, &(vgt_rec_marker){11, 0, "hello world"}, err));
    W(vgt_write_diagnostic(w, t, &(vgt_rec_diagnostic){1, VGT_E_IO, 5, "oops!"}, err));
    W(vgt_write_process_end(w, t, &(vgt_rec_process_end){43, 3, 0}, err));
    W(vgt_write_session_end(w, t, &(vgt_rec_session_end){222, -1, 9, 0}, err));
#undef W
    return rc ? 0 : 24;
}

static int next_ok(vgt_reader *r, vgt_record *rec, const char *what)
{
    vgt_error e;
    vgt_status rc = vgt_reader_next(r, rec, &e);
    CHECK(rc == VGT_OK, "%s: next: %s", what, rc == VGT_OK ? "" : e.msg);
    return rc == VGT_OK;
}

#define DEC(fn, T, v)                                                    \
    T v;                                                                 \
    do {                                                                 \
        vgt_error e_;                                                    \
        vgt_status rc_ = fn(&rec, &v, &e_);                              \
        CHECK(rc_ == VGT_OK, "%s: %s", #fn, rc_ == VGT_OK ? "" : e_.msg); \
        if (rc_ != VGT_OK) return;                                       \
    } while (0)

static void check_all_types(vgt_reader *r, uint64_t first_seq, uint64_t base_ts)
{
    vgt_record rec;
    uint64_t seq = first_seq, t = base_ts;
#define NEXT(want)                                                                     \
    if (!next_ok(r, &rec, #want)) return;                                              \
    CHECK(rec.type == want && rec.seq == seq && rec.ts == t, "%s: type 0x%x seq %llu ts %llu", #want, rec.type, \
          (unsigned long long)rec.seq, (unsigned long long)rec.ts);                    \
    seq++, t += 10
    NEXT(VGT_REC_SESSION_START);
    { DEC(vgt_decode_session_start, vgt_rec_session_start, a);
      CHECK(a.wall_ns == 111 && a.pid == 42 && a.ppid == 1 && a.cmdline_length == 13 && !memcmp(a.cmdline, blob_a, 13), "session_start"); }
    NEXT(VGT_REC_PROCESS_START);
    { DEC(vgt_decode_process_start, vgt_rec_process_start, a);
      CHECK(a.pid == 43 && a.ppid == 42 && a.exe_length == 10 && !memcmp(a.exe, "/usr/bin/x", 10), "process_start"); }
    NEXT(VGT_REC_RM_ALLOC);
    { DEC(vgt_decode_rm_alloc, vgt_rec_rm_alloc, a);
      CHECK(a.client == 0xc1d00001 && a.parent == 0xc1d00002 && a.handle == 0xcafe0001 && a.cls == 0xc86f && a.status == 0 &&
            a.params_length == 7 && !memcmp(a.params_in, blob_a, 7) && !memcmp(a.params_out, blob_b, 7), "rm_alloc"); }
    NEXT(VGT_REC_RM_FREE);
    { DEC(vgt_decode_rm_free, vgt_rec_rm_free, a);
      CHECK(a.client == 1 && a.parent == 2 && a.handle == 3 && a.status == 0x1f, "rm_free"); }
    NEXT(VGT_REC_RM_CONTROL);
    { DEC(vgt_decode_rm_control, vgt_rec_rm_control, a);
      CHECK(a.client == 1 && a.object == 2 && a.cmd == 0xc36f0108 && a.flags == 5 && a.params_length == 4 &&
            !memcmp(a.params_in, blob_b, 4) && !memcmp(a.params_out, blob_a, 4), "rm_control"); }
    NEXT(VGT_REC_MEM_ALLOC);
    { DEC(vgt_decode_mem_alloc, vgt_rec_mem_alloc, a);
      CHECK(a.cls == 0x3e && a.size == 1ull << 33 && a.cpu_address == 0x7f0000001000ull && a.flags == 4 && a.attr == 5 &&
            a.attr2 == 6 && a.aperture == 2, "mem_alloc"); }
    NEXT(VGT_REC_GPU_MAP);
    { DEC(vgt_decode_gpu_map, vgt_rec_gpu_map, a);
      CHECK(a.va_space == 3 && a.memory == 4 && a.gpu_va == 0x200000000ull && a.offset == 0x1000 && a.length == 0x10000 &&
            a.flags == 9 && a.source == VGT_MAP_RM_DMA, "gpu_map"); }
    NEXT(VGT_REC_GPU_UNMAP);
    { DEC(vgt_decode_gpu_unmap, vgt_rec_gpu_unmap, a);
      CHECK(a.gpu_va == 0x200000000ull && a.length == 0x10000 && a.source == VGT_MAP_UVM_EXTERNAL, "gpu_unmap"); }
    NEXT(VGT_REC_CPU_MAP);
    { DEC(vgt_decode_cpu_map, vgt_rec_cpu_map, a);
      CHECK(a.memory == 3 && a.flags == 4 && a.offset == 0x10 && a.length == 0x20 && a.cpu_address == 0x7f00deadb000ull, "cpu_map"); }
    NEXT(VGT_REC_CPU_UNMAP);
    { DEC(vgt_decode_cpu_unmap, vgt_rec_cpu_unmap, a);
      CHECK(a.memory == 3 && a.cpu_address == 0x7f00deadb000ull && a.length == 0x20, "cpu_unmap"); }
    NEXT(VGT_REC_IOCTL);
    { DEC(vgt_decode_ioctl, vgt_rec_ioctl, a);
      CHECK(a.node == VGT_NODE_UVM && a.request == 0xc0104601 && a.result == -22 && a.params_length == 16 &&
            !memcmp(a.params_in, blob_a, 16) && !memcmp(a.params_out, blob_b, 16), "ioctl"); }
    NEXT(VGT_REC_MEMORY);
    { DEC(vgt_decode_memory, vgt_rec_memory, a);
      CHECK(a.gpu_va == 0x200003000ull && a.length == 99 && a.reason == VGT_MEM_CHANGED && a.memory == 4 &&
            !memcmp(a.data, blob_b, 99), "memory"); }
    NEXT(VGT_REC_CHANNEL);
    { DEC(vgt_decode_channel, vgt_rec_channel, a);
      CHECK(a.cls == 0xc86f && a.ring_va == 0x300000000ull && a.entries == 1024 && a.userd_memory == 5 && a.userd_offset == 0x40 &&
            a.userd_gpu_va == 0x300100000ull && a.engine_type == 1 && a.va_space == 6 && a.context_share == 7 &&
            a.error_notifier == 8, "channel"); }
    NEXT(VGT_REC_ENGINE_OBJECT);
    { DEC(vgt_decode_engine_object, vgt_rec_engine_object, a);
      CHECK(a.channel == 3 && a.handle == 0xbeef && a.cls == 0xcbc0, "engine_object"); }
    NEXT(VGT_REC_WORK_SUBMIT_TOKEN);
    { DEC(vgt_decode_work_submit_token, vgt_rec_work_submit_token, a);
      CHECK(a.channel == 3 && a.token == 0x1234, "work_submit_token"); }
    NEXT(VGT_REC_GPFIFO_SUBMIT);
    {
        vgt_rec_gpfifo_submit a;
        vgt_segment got[4];
        vgt_error e;
        CHECK(vgt_decode_gpfifo_submit(&rec, &a, got, 2, &e) == VGT_E_LIMIT, "3 segments into room for 2 must fail");
        CHECK(vgt_decode_gpfifo_submit(&rec, &a, got, 4, &e) == VGT_OK, "gpfifo decode: %s", e.msg);
        CHECK(a.channel == 3 && a.token == 0x1234 && a.flags == 1 && a.gp_get_after == VGT_GP_NOT_READ && a.gp_put_after == 5 &&
              a.entry_count == 5 && a.segment_count == 3 && !memcmp(a.entries, entries, 40), "gpfifo fixed");
        uint64_t e1 = 0;
        for (int b = 0; b < 8; b++) e1 |= (uint64_t)entries[8 + b] << (8 * b);
        CHECK(vgt_submit_entry(&a, 1) == e1, "entry 1 is little-endian");
        for (int i = 0; i < 3; i++)
            CHECK(got[i].gpu_va == segs[i].gpu_va && got[i].length == segs[i].length && got[i].flags == segs[i].flags &&
                  (!segs[i].length || !memcmp(got[i].data, segs[i].data, segs[i].length)), "segment %d", i);
    }
    NEXT(VGT_REC_DOORBELL);
    { DEC(vgt_decode_doorbell, vgt_rec_doorbell, a);
      CHECK(a.token == 0x1234 && a.channel == 3 && a.offset == 0x90, "doorbell"); }
    NEXT(VGT_REC_SEMAPHORE);
    { DEC(vgt_decode_semaphore, vgt_rec_semaphore, a);
      CHECK(a.gpu_va == 0x200004000ull && a.value == 0x123456789ull && a.size == 8 && a.flags == 1, "semaphore"); }
    NEXT(VGT_REC_CUDA_MODULE);
    { DEC(vgt_decode_cuda_module, vgt_rec_cuda_module, a);
      CHECK(a.module == 0xabc && a.image_length == 64 && a.flags == 2 && !memcmp(a.image, blob_a, 64), "cuda_module"); }
    NEXT(VGT_REC_CUDA_LAUNCH);
    { DEC(vgt_decode_cuda_launch, vgt_rec_cuda_launch, a);
      CHECK(a.module == 0xabc && a.function == 0xdef && a.stream == 0x77 && a.grid[2] == 3 && a.block[0] == 32 &&
            a.shared_bytes == 1024 && a.name_length == 6 && !memcmp(a.name, "kernel", 6) && a.params_length == 24 &&
            !memcmp(a.params, blob_b, 24), "cuda_launch"); }
    NEXT(VGT_REC_MARKER);
    { DEC(vgt_decode_marker, vgt_rec_marker, a); CHECK(a.length == 11 && !memcmp(a.text, "hello world", 11), "marker"); }
    NEXT(VGT_REC_DIAGNOSTIC);
    { DEC(vgt_decode_diagnostic, vgt_rec_diagnostic, a);
      CHECK(a.severity == 1 && a.code == VGT_E_IO && a.length == 5 && !memcmp(a.text, "oops!", 5), "diagnostic"); }
    NEXT(VGT_REC_PROCESS_END);
    { DEC(vgt_decode_process_end, vgt_rec_process_end, a); CHECK(a.pid == 43 && a.exit_status == 3, "process_end"); }
    NEXT(VGT_REC_SESSION_END);
    { DEC(vgt_decode_session_end, vgt_rec_session_end, a);
      CHECK(a.wall_ns == 222 && a.exit_status == -1 && a.signal == 9, "session_end"); }
#undef NEXT
}

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmpdir, name); }

static void test_every_type(int codec, uint32_t chunk_target, int threads)
{
    char path[512];
    path_of(path, sizeof path, "all.vgt");
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = codec;
    o.chunk_target = chunk_target;
    o.zstd_threads = threads;
    vgt_writer *w;
    vgt_error e;
    CHECK(vgt_writer_open_path(&w, path, &o, IDENT, 3, &e) == VGT_OK, "open: %s", e.msg);
    CHECK(write_all_types(w, 1000, &e) == 24, "write: %s", e.msg);
    CHECK(vgt_writer_next_seq(w) == 24, "next_seq");
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "reader open: %s", e.msg);
        return;
    }
    const vgt_trace_info *info = vgt_reader_info(r);
    CHECK(info->major == VGT_FORMAT_MAJOR && info->minor == VGT_FORMAT_MINOR && info->minor == 5 && info->identity_count == 3 && info->has_index, "info");
    CHECK(vgt_reader_identity(r, "chip") && !strcmp(vgt_reader_identity(r, "chip"), "GH100"), "identity");
    CHECK(vgt_reader_identity(r, "absent") == NULL, "absent identity");
    check_all_types(r, 0, 1000);
    vgt_record rec;
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_E_EOF, "EOF after 24 records");
    int has_trailer = 0;
    CHECK(vgt_reader_trailer_check(r, &has_trailer, &e) == VGT_OK && has_trailer, "trailer: %s", e.msg);
    const vgt_chunk_info *c;
    uint32_t n;
    CHECK(vgt_reader_chunks(r, &c, &n, &e) == VGT_OK, "chunks");
    CHECK(n >= 1 && c[0].first_seq == 0 && c[n - 1].first_seq + c[n - 1].record_count == 24, "chunk list covers 24 records");
    vgt_reader_close(r);
}

/* 3000 records in small chunks: MARKERs with 1 GPFIFO_SUBMIT every 3rd record; ts = 5 * seq. */
static void write_many(vgt_writer *w, uint32_t n)
{
    vgt_error e;
    char text[64];
    for (uint32_t i = 0; i < n; i++) {
        if (i % 3 == 2) {
            vgt_rec_gpfifo_submit s = {1, 2, 3, 0, 0, 0, 0, 1, 1, 0, entries, NULL};
            CHECK(vgt_write_gpfifo_submit(w, 5ull * i, &s, &e) == VGT_OK, "submit %u: %s", i, e.msg);
        } else {
            int len = snprintf(text, sizeof text, "marker %u", i);
            vgt_rec_marker m = {(uint32_t)len, 0, text};
            CHECK(vgt_write_marker(w, 5ull * i, &m, &e) == VGT_OK, "marker %u: %s", i, e.msg);
        }
    }
}

static void test_seeks(int trailer, int threads)
{
    char path[512];
    path_of(path, sizeof path, trailer ? "seek.vgt" : "seek-notrailer.vgt");
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 4096;
    o.write_trailer = trailer;
    o.zstd_threads = threads;
    vgt_writer *w;
    vgt_error e;
    CHECK(vgt_writer_open_path(&w, path, &o, IDENT, 1, &e) == VGT_OK, "open: %s", e.msg);
    write_many(w, 3000);
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "open: %s", e.msg);
        return;
    }
    CHECK(vgt_reader_info(r)->has_index == trailer, "has_index %d", vgt_reader_info(r)->has_index);
    const vgt_chunk_info *c;
    uint32_t n;
    CHECK(vgt_reader_chunks(r, &c, &n, &e) == VGT_OK && n > 10, "chunk list (%u)", n);
    vgt_record rec;
    uint64_t targets[] = {0, 1, 2, 777, 1500, 2999};
    for (unsigned i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        CHECK(vgt_reader_seek_seq(r, targets[i], &e) == VGT_OK, "seek_seq %llu: %s", (unsigned long long)targets[i], e.msg);
        CHECK(next_ok(r, &rec, "after seek") && rec.seq == targets[i], "seek_seq %llu gave %llu", (unsigned long long)targets[i],
              (unsigned long long)rec.seq);
        CHECK(vgt_reader_seek_time(r, 5 * targets[i] - (targets[i] ? 2 : 0), &e) == VGT_OK, "seek_time: %s", e.msg);
        CHECK(next_ok(r, &rec, "after seek_time") && rec.seq == targets[i], "seek_time to %llu gave %llu",
              (unsigned long long)targets[i], (unsigned long long)rec.seq);
    }
    CHECK(vgt_reader_seek_seq(r, 3000, &e) == VGT_E_NOT_FOUND, "seek past the end");
    CHECK(vgt_reader_seek_submit(r, 0, &e) == VGT_OK && next_ok(r, &rec, "submit 0") && rec.seq == 2, "submit 0 at seq 2");
    CHECK(vgt_reader_seek_submit(r, 500, &e) == VGT_OK && next_ok(r, &rec, "submit 500") && rec.seq == 1502, "submit 500");
    CHECK(vgt_reader_seek_submit(r, 1000, &e) == VGT_E_NOT_FOUND, "submit 1000 does not exist");
    /* after a seek, reading continues in order across chunks to the end */
    CHECK(vgt_reader_seek_seq(r, 2900, &e) == VGT_OK, "seek 2900");
    uint64_t expect = 2900;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) CHECK(rec.seq == expect++, "order after seek");
    CHECK(rc == VGT_E_EOF && expect == 3000, "end after seek: %s", e.msg);
    vgt_reader_close(r);
}

struct pipe_job { int fd; int ok; };

static void *pipe_writer(void *arg)
{
    struct pipe_job *j = arg;
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 4096;
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_fd(&w, j->fd, 1, &o, IDENT, 3, &e) != VGT_OK) return NULL;
    j->ok = write_all_types(w, 1000, &e) == 24;
    write_many(w, 600);
    j->ok &= vgt_writer_close(w, &e) == VGT_OK;
    return NULL;
}

static void test_pipe(void)
{
    int fds[2];
    if (pipe(fds)) {
        CHECK(0, "pipe: %s", strerror(errno));
        return;
    }
    struct pipe_job j = {fds[1], 0};
    pthread_t t;
    pthread_create(&t, NULL, pipe_writer, &j);
    vgt_reader *r;
    vgt_error e;
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1};
    if (vgt_reader_open_fd(&r, fds[0], 1, &ro, &e) == VGT_OK) {
        CHECK(vgt_reader_info(r)->file_size == 0, "stream has no size");
        check_all_types(r, 0, 1000);
        vgt_record rec;
        uint64_t n = 0;
        vgt_status rc;
        while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) n++;
        CHECK(rc == VGT_E_EOF && n == 600, "stream: %llu more records, rc %d %s", (unsigned long long)n, rc, e.msg);
        int has_trailer = 0;
        CHECK(vgt_reader_trailer_check(r, &has_trailer, &e) == VGT_OK && has_trailer, "stream trailer: %s", e.msg);
        CHECK(vgt_reader_seek_seq(r, 0, &e) == VGT_E_UNSUPPORTED, "a stream cannot seek");
        vgt_reader_close(r);
    } else {
        CHECK(0, "open stream: %s", e.msg);
        close(fds[0]);
    }
    pthread_join(t, NULL);
    CHECK(j.ok, "pipe writer failed");
}

/* Live: every submission reaches a reader of the pipe while the writer is still open (no fdatasync on a
 * pipe, and the chunk target is far away); the records after the last submission wait for the next. */
static void test_live_pipe(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    vgt_writer_options o = vgt_writer_defaults();
    o.live = 1;
    vgt_writer *w;
    vgt_reader *r = NULL;
    vgt_error e;
    CHECK(vgt_writer_open_fd(&w, fds[1], 1, &o, IDENT, 3, &e) == VGT_OK, "live writer: %s", e.msg);
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1};
    CHECK(vgt_reader_open_fd(&r, fds[0], 1, &ro, &e) == VGT_OK, "live reader: %s", e.msg);
    vgt_record rec;
    for (int round = 0; round < 4 && r; round++) {
        write_many(w, 3);   /* marker, marker, submit: the submit closes the chunk */
        for (int k = 0; k < 3; k++)
            CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.seq == (uint64_t)(3 * round + k),
                  "round %d record %d read before the writer closes: %s", round, k, e.msg);
    }
    /* the program's setup reaches the reader as it is made, each record before the next is written (a live
     * replay creates the channel and maps the allocation while the program goes on starting up) */
    vgt_rec_channel ch = {.client = 1, .parent = 2, .handle = 3, .cls = 0xc86f, .entries = 64};
    vgt_rec_engine_object eo = {.client = 1, .channel = 3, .handle = 4, .cls = 0xcbc0};
    vgt_rec_gpu_map gm = {.client = 1, .device = 2, .va_space = 5, .memory = 6, .gpu_va = 0x200000, .length = 0x1000};
    for (int k = 0; k < 3 && r; k++) {
        vgt_status st = k == 0 ? vgt_write_channel(w, 100, &ch, &e)
                        : k == 1 ? vgt_write_engine_object(w, 101, &eo, &e) : vgt_write_gpu_map(w, 102, &gm, &e);
        CHECK(st == VGT_OK, "setup record %d: %s", k, e.msg);
        uint16_t want[] = {VGT_REC_CHANNEL, VGT_REC_ENGINE_OBJECT, VGT_REC_GPU_MAP};
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        if (poll(&pf, 1, 2000) != 1) {   /* still in the writer's chunk: reading would wait for the close */
            CHECK(0, "setup record %d (type %u) not handed on by the live writer", k, want[k]);
            break;
        }
        CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK && rec.type == want[k] && rec.seq == (uint64_t)(12 + k),
              "setup record %d read before the next is written: %s", k, e.msg);
    }
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    CHECK(r && vgt_reader_next(r, &rec, &e) == VGT_E_EOF && vgt_reader_at_end(r), "the end after the trailer");
    vgt_reader_close(r);
}

/* --follow: a reader of a file still being written waits at its end for more, until the trailer. */
struct follow_job {
    const char *path;
    int ok;
    volatile int opened;   /* the header is written: a reader may open */
};

static void *slow_writer(void *arg)
{
    struct follow_job *j = arg;
    vgt_writer_options o = vgt_writer_defaults();
    o.placement = VGT_PLACE_IN_PLACE;
    o.live = 1;
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, j->path, &o, IDENT, 3, &e) != VGT_OK) {
        j->opened = -1;
        return NULL;
    }
    __atomic_store_n(&j->opened, 1, __ATOMIC_RELEASE);
    for (int round = 0; round < 5; round++) {
        write_many(w, 30);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    j->ok = vgt_writer_close(w, &e) == VGT_OK;
    return NULL;
}

static void test_follow(void)
{
    char path[512];
    path_of(path, sizeof path, "follow.vgt");
    struct follow_job j = {path, 0, 0};
    vgt_error e;
    pthread_t t;
    pthread_create(&t, NULL, slow_writer, &j);
    while (!__atomic_load_n(&j.opened, __ATOMIC_ACQUIRE)) nanosleep(&(struct timespec){0, 100000L}, NULL);
    vgt_reader *r;
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1, .follow = 1, .follow_poll_us = 500};
    uint64_t n = 0;
    if (vgt_reader_open_path(&r, path, &ro, &e) == VGT_OK) {
        vgt_record rec;
        vgt_status rc;
        while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) CHECK(rec.seq == n++, "order");
        CHECK(rc == VGT_E_EOF && vgt_reader_at_end(r), "the end is the trailer: %s", e.msg);
        vgt_reader_close(r);
    } else {
        CHECK(0, "follow open: %s", e.msg);
    }
    pthread_join(t, NULL);
    CHECK(j.ok && n == 150, "followed %llu of 150 records", (unsigned long long)n);
}

static void test_crash_safe(void)
{
    char path[512];
    path_of(path, sizeof path, "crash.vgt");
    vgt_writer_options o = vgt_writer_defaults();
    o.crash_safe = 1;
    vgt_writer *w;
    vgt_error e;
    CHECK(vgt_writer_open_path(&w, path, &o, IDENT, 1, &e) == VGT_OK, "open: %s", e.msg);
    vgt_reader *follow = NULL;
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1};
    CHECK(vgt_reader_open_path(&follow, path, &ro, &e) == VGT_OK, "follower open: %s", e.msg);
    vgt_record rec;
    uint64_t seen = 0;
    for (int round = 0; round < 5; round++) {
        write_many(w, 3);   /* 2 markers then a submit: the submit closes the chunk */
        vgt_reader *r;
        CHECK(vgt_reader_open_path(&r, path, NULL, &e) == VGT_OK, "reopen: %s", e.msg);
        uint64_t n = 0;
        vgt_status rc;
        while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) n++;
        CHECK(rc == VGT_E_EOF && n == 3u * (round + 1), "round %d: %llu records readable (%s)", round, (unsigned long long)n, e.msg);
        vgt_reader_close(r);
        while (follow && vgt_reader_next(follow, &rec, &e) == VGT_OK) CHECK(rec.seq == seen++, "follower order");
        CHECK(seen == 3u * (round + 1), "follower saw %llu", (unsigned long long)seen);
    }
    vgt_rec_marker m = {4, 0, "tail"};
    CHECK(vgt_write_marker(w, 1, &m, &e) == VGT_OK, "marker");
    CHECK(follow && vgt_reader_next(follow, &rec, &e) == VGT_E_EOF, "an unflushed marker is not visible yet");
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    CHECK(follow && vgt_reader_next(follow, &rec, &e) == VGT_OK && rec.seq == 15, "the marker after close");
    CHECK(follow && vgt_reader_next(follow, &rec, &e) == VGT_E_EOF, "end after the trailer");
    vgt_reader_close(follow);
}

/* A child process limits the file size, so that a later chunk write fails with EFBIG. KEEP_PREFIX (a
 * recording): the chunks before the failure are put in place, as the error says. REPLACE (the default):
 * the file that was there before stays as it was, as the error says, and no temporary is left beside it. */
static void test_write_failure(int threads, int placement)
{
    char path[512];
    path_of(path, sizeof path, placement == VGT_PLACE_REPLACE ? "kept.vgt" : "full.vgt");
    static const char before[] = "the file that was here before";
    if (placement == VGT_PLACE_REPLACE) {
        FILE *f = fopen(path, "w");
        CHECK(f && fputs(before, f) >= 0 && fclose(f) == 0, "writing %s", path);
    }
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {20000, 20000};
        setrlimit(RLIMIT_FSIZE, &rl);
        vgt_writer_options o = vgt_writer_defaults();
        o.codec = threads ? VGT_CODEC_ZSTD : VGT_CODEC_STORED;
        o.zstd_level = 1;
        o.zstd_threads = threads;
        o.chunk_target = 4096;
        o.placement = placement;
        vgt_writer *w;
        vgt_error e;
        if (vgt_writer_open_path(&w, path, &o, IDENT, 1, &e) != VGT_OK) _exit(10);
        uint8_t page[1000];
        for (unsigned k = 0; k < sizeof page; k++) page[k] = (uint8_t)(k * 2654435761u >> 13);   /* incompressible */
        vgt_status rc = VGT_OK;
        for (int i = 0; i < 200 && rc == VGT_OK; i++) {
            vgt_rec_memory m = {0x1000ull * i, sizeof page, 0, 0, 0, page};
            rc = vgt_write_memory(w, i, &m, &e);
        }
        /* the message says what stays: the chunks before the failure, or the file that was there */
        if (rc != VGT_E_IO || !strstr(e.msg, placement == VGT_PLACE_REPLACE ? "is left as it was" : "intact")) _exit(11);
        vgt_rec_marker mk = {1, 0, "x"};
        if (vgt_write_marker(w, 1, &mk, &e) != VGT_E_IO) _exit(12);   /* sticky */
        if (vgt_writer_close(w, &e) != VGT_E_IO) _exit(13);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "write-failure child exited %d", WEXITSTATUS(status));
    if (placement == VGT_PLACE_REPLACE) {
        char got[64] = {0};
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
        if (f) fclose(f);
        CHECK(n == strlen(before) && !strcmp(got, before), "the old file was not kept: '%s'", got);
        DIR *d = opendir(tmpdir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            CHECK(!strstr(e->d_name, ".partial"), "a temporary was left behind: %s", e->d_name);
        if (d) closedir(d);
        return;
    }
    vgt_reader *r;
    vgt_error e;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "reopen after failure: %s", e.msg);
        return;
    }
    vgt_record rec;
    uint64_t n = 0;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) n++;
    CHECK(rc == VGT_E_EOF && n >= 8, "the chunks before the failure read back cleanly: %llu records, %s", (unsigned long long)n,
          rc == VGT_E_EOF ? "" : e.msg);
    vgt_reader_close(r);
}

/* Several threads append at once: sequence numbers stay contiguous and each thread's records keep
 * their order. */
struct thread_job { vgt_writer *w; uint32_t id; int ok; };

static void *thread_writer(void *arg)
{
    struct thread_job *j = arg;
    vgt_error e;
    j->ok = 1;
    for (uint32_t i = 0; i < 2000; i++) {
        uint32_t v[2] = {j->id, i};
        j->ok &= vgt_write_record(j->w, 0xF001, 0, i, v, sizeof v, NULL, &e) == VGT_OK;
    }
    return NULL;
}

static void test_threads(void)
{
    char path[512];
    path_of(path, sizeof path, "threads.vgt");
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 8192;
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) {
        CHECK(0, "open: %s", e.msg);
        return;
    }
    struct thread_job jobs[4];
    pthread_t t[4];
    for (uint32_t i = 0; i < 4; i++) {
        jobs[i] = (struct thread_job){w, i, 0};
        pthread_create(&t[i], NULL, thread_writer, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(jobs[i].ok, "thread %d", i);
    }
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "reopen: %s", e.msg);
        return;
    }
    uint32_t next[4] = {0};
    uint64_t n = 0;
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) {
        uint32_t id, i;
        memcpy(&id, rec.payload, 4);
        memcpy(&i, rec.payload + 4, 4);
        CHECK(rec.seq == n && id < 4 && i == next[id], "seq %llu: thread %u record %u", (unsigned long long)rec.seq, id, i);
        if (id < 4) next[id] = i + 1;
        n++;
    }
    CHECK(n == 8000, "8000 records, got %llu", (unsigned long long)n);
    vgt_reader_close(r);
}

static void test_bad_args(void)
{
    char path[512];
    path_of(path, sizeof path, "args.vgt");
    vgt_writer *w;
    vgt_error e;
    vgt_identity dup[] = {{"a", "1"}, {"a", "2"}};
    CHECK(vgt_writer_open_path(&w, path, NULL, dup, 2, &e) == VGT_E_ARG, "duplicate identity key");
    vgt_identity bad_utf8[] = {{"host", "caf\xc3"}};
    CHECK(vgt_writer_open_path(&w, path, NULL, bad_utf8, 1, &e) == VGT_E_ARG && strstr(e.msg, "UTF-8"), "identity not UTF-8");
    vgt_identity good_utf8[] = {{"host", "caf\xc3\xa9 \xf0\x9f\x9a\x80"}};
    CHECK(vgt_writer_open_path(&w, path, NULL, good_utf8, 1, &e) == VGT_OK && vgt_writer_close(w, &e) == VGT_OK, "UTF-8 identity");
    vgt_writer_options o = vgt_writer_defaults();
    o.zstd_level = 99;
    CHECK(vgt_writer_open_path(&w, path, &o, NULL, 0, &e) == VGT_E_ARG, "level 99");
    CHECK(vgt_writer_open_path(&w, path, NULL, NULL, 0, &e) == VGT_OK, "open: %s", e.msg);
    vgt_rec_memory m = {0, 10, 0, 0, 0, NULL};
    CHECK(vgt_write_memory(w, 0, &m, &e) == VGT_E_ARG, "blob length without bytes");
    CHECK(vgt_write_record(w, 0, 0, 0, NULL, 0, NULL, &e) == VGT_E_ARG, "type 0");
    uint64_t seq = 99;
    CHECK(vgt_write_record(w, 0xF123, 0, 7, "abc", 3, &seq, &e) == VGT_OK && seq == 0, "experimental type");
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close");
    vgt_reader *r;
    CHECK(vgt_reader_open_path(&r, path, NULL, &e) == VGT_OK, "open");
    vgt_record rec;
    CHECK(next_ok(r, &rec, "experimental") && rec.type == 0xF123 && rec.length == 3 && !memcmp(rec.payload, "abc", 3), "raw");
    vgt_rec_marker mk;
    CHECK(vgt_decode_marker(&rec, &mk, &e) == VGT_E_ARG, "decode of the wrong type");
    vgt_reader_close(r);
    CHECK(vgt_reader_open_path(&r, "/nonexistent/x.vgt", NULL, &e) == VGT_E_IO && strstr(e.msg, "x.vgt"), "missing file");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vgt-test-roundtrip-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_every_type(VGT_CODEC_ZSTD, 2u << 20, 0);
    test_every_type(VGT_CODEC_STORED, 2u << 20, 0);
    test_every_type(VGT_CODEC_ZSTD, 1, 0);      /* clamped to 4 KiB */
    test_every_type(VGT_CODEC_ZSTD, 1, 3);      /* compression threads */
    test_seeks(1, 0);
    test_seeks(0, 0);
    test_seeks(1, 3);                           /* chunks compressed in parallel, written in order */
    test_pipe();
    test_live_pipe();
    test_follow();
    test_crash_safe();
    test_write_failure(0, VGT_PLACE_KEEP_PREFIX);
    test_write_failure(2, VGT_PLACE_KEEP_PREFIX);
    test_write_failure(0, VGT_PLACE_REPLACE);
    test_write_failure(2, VGT_PLACE_REPLACE);
    test_threads();
    test_bad_args();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_finish("test_format_roundtrip");
}
