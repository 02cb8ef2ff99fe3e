/* bench_chunks.c: the zstd frames of a trace's chunks, concatenated into one file that `zstd -d`
 * decompresses: the baseline of `vgt census` in bench/decode/run.sh (the same compressed bytes, the
 * same decompressor, nothing decoded).
 *
 *   bench_chunks TRACE OUT.zst      prints "chunks=N compressed=C uncompressed=U" */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vgt/trace.h"

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: bench_chunks TRACE OUT.zst\n"); return 2; }
    vgt_reader *r;
    vgt_error err;
    const vgt_chunk_info *c;
    uint32_t n;
    if (vgt_reader_open_path(&r, argv[1], NULL, &err) != VGT_OK || vgt_reader_chunks(r, &c, &n, &err) != VGT_OK) {
        fprintf(stderr, "bench_chunks: %s\n", err.msg);
        return 2;
    }
    int in = open(argv[1], O_RDONLY);
    FILE *out = fopen(argv[2], "wb");
    if (in < 0 || !out) { perror("bench_chunks"); return 2; }
    unsigned long long comp = 0, unc = 0, stored = 0;
    for (uint32_t i = 0; i < n; i++) {
        vgt_chunk_info h;   /* the index does not say the codec: the chunk header does */
        if (vgt_reader_chunk_header(r, c[i].offset, &h, &err) != VGT_OK) { fprintf(stderr, "bench_chunks: %s\n", err.msg); return 2; }
        if (h.codec != 1) { stored++; continue; }
        char *buf = malloc(h.compressed_length);
        if (!buf || pread(in, buf, h.compressed_length, (off_t)(c[i].offset + 72)) != (ssize_t)h.compressed_length ||
            fwrite(buf, 1, h.compressed_length, out) != h.compressed_length) {
            fprintf(stderr, "bench_chunks: chunk %u at %llu\n", i, (unsigned long long)c[i].offset);
            return 2;
        }
        free(buf);
        comp += h.compressed_length;
        unc += h.uncompressed_length;
    }
    fclose(out);
    close(in);
    vgt_reader_close(r);
    printf("chunks=%u compressed=%llu uncompressed=%llu stored_chunks=%llu\n", n, comp, unc, stored);
    return 0;
}
