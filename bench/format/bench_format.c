/* bench_format.c: the timed parts of bench/format/run.sh (writer and reader throughput).
 *
 *   bench_format raw TRACE RAW        write TRACE's uncompressed record stream (headers, payloads,
 *                                     padding: the bytes chunks hold) to RAW: what `zstd` is given
 *   bench_format write RAW OUT [--level L] [--threads N] [--chunk-size B]
 *                                     time writing every record of RAW through the writer into OUT
 *   bench_format read TRACE           time reading every record of TRACE (checksums verified)
 *
 * `write` and `read` print one line: "<mode> bytes=<record bytes> records=<n> seconds=<s> mbps=<MB/s>",
 * MB = 10^6 bytes of records, the same bytes zstd compresses, so the ratios in run.sh compare like
 * with like. RAW is mapped, not read, so the writer is timed from the page cache as zstd is.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vgt/range.h"
#include "vgt/trace.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(const char *what, const vgt_error *err)
{
    fprintf(stderr, "bench_format %s: %s\n", what, err->msg);
    return 1;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int cmd_raw(const char *in, const char *out)
{
    vgt_reader *r;
    vgt_error err;
    if (vgt_reader_open_path(&r, in, NULL, &err) != VGT_OK) return fail("raw", &err);
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        vgt_reader_close(r);
        return 1;
    }
    static const uint8_t zero[8];
    vgt_record rec;
    vgt_status st;
    while ((st = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        uint8_t h[VGT_RECORD_HEADER_SIZE];   /* docs/trace-format.md section 4 */
        put_le(h, rec.type, 2);
        put_le(h + 2, rec.flags, 2);
        put_le(h + 4, rec.length, 4);
        put_le(h + 8, rec.seq, 8);
        put_le(h + 16, rec.ts, 8);
        fwrite(h, 1, sizeof h, f);
        fwrite(rec.payload, 1, rec.length, f);
        fwrite(zero, 1, (8 - rec.length % 8) % 8, f);
    }
    vgt_reader_close(r);
    if (fclose(f) != 0 || st != VGT_E_EOF) return st != VGT_E_EOF ? fail("raw", &err) : 1;
    return 0;
}

static int cmd_write(int argc, char **argv)
{
    vgt_writer_options o = vgt_writer_defaults();
    uint64_t v;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (vgt_parse_u64(argv[i + 1], &v)) return 2;
        if (!strcmp(argv[i], "--level")) o.zstd_level = (int)v;
        else if (!strcmp(argv[i], "--threads")) o.zstd_threads = (int)v;
        else if (!strcmp(argv[i], "--chunk-size")) o.chunk_target = (uint32_t)v;
        else return 2;
    }
    int fd = open(argv[2], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[2]);
        return 1;
    }
    const uint8_t *raw = sb.st_size ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (raw == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    vgt_writer *w;
    vgt_error err;
    static const vgt_identity id[] = {{"producer", "bench_format"}, {"capture_mode", "synthetic"}};
    double t0 = now_s();
    if (vgt_writer_open_path(&w, argv[3], &o, id, 2, &err) != VGT_OK) return fail("write", &err);
    uint64_t off = 0, n = 0, size = (uint64_t)sb.st_size;
    while (off + VGT_RECORD_HEADER_SIZE <= size) {
        uint32_t len = (uint32_t)get_le(raw + off + 4, 4);
        if (len > size - off - VGT_RECORD_HEADER_SIZE) break;
        if (vgt_write_record(w, (uint16_t)get_le(raw + off, 2), (uint16_t)get_le(raw + off + 2, 2),
                             get_le(raw + off + 16, 8), raw + off + VGT_RECORD_HEADER_SIZE, len, NULL, &err) != VGT_OK) {
            vgt_writer_close(w, NULL);
            return fail("write", &err);
        }
        off += VGT_RECORD_HEADER_SIZE + ((len + 7u) & ~7ull);
        n++;
    }
    if (vgt_writer_close(w, &err) != VGT_OK) return fail("write", &err);
    double dt = now_s() - t0;
    printf("write bytes=%llu records=%llu seconds=%.3f mbps=%.1f\n", (unsigned long long)off,
           (unsigned long long)n, dt, (double)off / dt / 1e6);
    return off == size ? 0 : 1;
}

static int cmd_read(const char *path)
{
    vgt_reader *r;
    vgt_error err;
    double t0 = now_s();
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) return fail("read", &err);
    vgt_record rec;
    vgt_status st;
    uint64_t bytes = 0, n = 0, sum = 0;
    while ((st = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        bytes += VGT_RECORD_HEADER_SIZE + ((rec.length + 7u) & ~7ull);
        sum += rec.length ? rec.payload[rec.length - 1] : 0;   /* touch the payload */
        n++;
    }
    vgt_reader_close(r);
    double dt = now_s() - t0;
    if (st != VGT_E_EOF) return fail("read", &err);
    printf("read bytes=%llu records=%llu seconds=%.3f mbps=%.1f (touch %llu)\n", (unsigned long long)bytes,
           (unsigned long long)n, dt, (double)bytes / dt / 1e6, (unsigned long long)(sum & 0xff));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "raw")) return cmd_raw(argv[2], argv[3]);
    if (argc >= 4 && !strcmp(argv[1], "write")) return cmd_write(argc, argv);
    if (argc == 3 && !strcmp(argv[1], "read")) return cmd_read(argv[2]);
    fprintf(stderr, "usage: bench_format raw TRACE RAW | write RAW OUT [--level L] [--threads N] "
                    "[--chunk-size B] | read TRACE\n");
    return 2;
}
