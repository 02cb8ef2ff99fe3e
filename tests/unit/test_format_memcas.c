/* test_format_memcas.c: MEMORY_CAS (format 1.3): a writer with memory_cas turns MEMORY records whose
 * contents repeat earlier contents (a whole block anywhere in the window, or a block differing from the
 * last contents at its address in a few words) into MEMORY_CAS, and the reader gives back exactly the
 * MEMORY records written: same sequence numbers, times, flags and bytes, also after a seek into the middle
 * (the window is rebuilt from the start). The trace is much smaller than without, and says 1.3 with the
 * MEMORY_CAS header flag. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "vgt/trace.h"
#include "check.h"

#define BLOCK 4096u
#define RECORDS 600u

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static uint8_t tensors[8][4 * BLOCK], params[1024], fresh[300];

/* Record i's MEMORY contents: a tensor staged into one of 3 slots (whole-block copies from far back), a
 * parameter block with a few words changed (patches), fresh noise of an odd length (literal). */
static vgt_rec_memory record(uint32_t i, uint8_t *scratch)
{
    vgt_rec_memory m = {.reason = VGT_MEM_CHANGED, .memory = 7, .flags = i % 7 == 0 ? VGT_MEM_FLAG_DERIVED : 0};
    switch (i % 3) {
    case 0:
        m.gpu_va = 0x100000000ull + (uint64_t)(i / 3 % 3) * sizeof tensors[0];
        m.length = sizeof tensors[0];
        m.data = tensors[i / 3 % 8];
        break;
    case 1:
        memcpy(scratch, params, sizeof params);
        for (int k = 0; k < 3; k++) memcpy(scratch + 4 * ((i * 37 + k * 101) % 256), &i, 4);
        m.gpu_va = 0x200000000ull;
        m.length = sizeof params;
        m.data = scratch;
        break;
    default:
        for (uint32_t k = 0; k < sizeof fresh; k++) fresh[k] = (uint8_t)next();
        m.gpu_va = 0x300000000ull + 8 * (uint64_t)i;
        m.length = sizeof fresh - (i % 4);
        m.data = fresh;
        break;
    }
    return m;
}

static uint64_t write_trace(const char *path, int cas)
{
    rng = 88172645463325252ull;
    vgt_writer *w;
    vgt_error e;
    vgt_writer_options o = vgt_writer_defaults();
    o.memory_cas = cas;
    o.chunk_target = 64 << 10;   /* many chunks: copies reach across them */
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) { fprintf(stderr, "open: %s\n", e.msg); exit(1); }
    static uint8_t scratch[1024];
    uint64_t h = 0;
    for (uint32_t i = 0; i < RECORDS; i++) {
        vgt_rec_memory m = record(i, scratch);
        h ^= XXH3_64bits(m.data, m.length) + i;
        CHECK_STATUS(vgt_write_memory(w, 1000 + i, &m, &e), VGT_OK, &e, "memory %u", i);
        vgt_rec_marker mk = {.text = "x", .length = 1};
        if (i % 50 == 0) CHECK_STATUS(vgt_write_marker(w, 1000 + i, &mk, &e), VGT_OK, &e, "marker");
    }
    CHECK_STATUS(vgt_writer_close(w, &e), VGT_OK, &e, "close");
    return h;
}

/* Hash of every record from seq `from` on (type, seq, ts, payload). */
static uint64_t read_from(const char *path, uint64_t from, uint64_t *count, uint32_t *flags, uint16_t *minor)
{
    vgt_reader *r;
    vgt_error e;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) { CHECK(0, "open: %s", e.msg); return 0; }
    *flags = vgt_reader_info(r)->header_flags;
    *minor = vgt_reader_info(r)->minor;
    if (from) CHECK_STATUS(vgt_reader_seek_seq(r, from, &e), VGT_OK, &e, "seek");
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    vgt_record rec;
    vgt_status rc;
    *count = 0;
    while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        CHECK(rec.type != VGT_REC_MEMORY_CAS, "a MEMORY_CAS record reached the caller at seq %llu", (unsigned long long)rec.seq);
        XXH3_64bits_update(st, &rec.type, 2);
        XXH3_64bits_update(st, &rec.flags, 2);
        XXH3_64bits_update(st, &rec.seq, 8);
        XXH3_64bits_update(st, &rec.ts, 8);
        XXH3_64bits_update(st, rec.payload, rec.length);
        (*count)++;
    }
    CHECK(rc == VGT_E_EOF, "read: %s", e.msg);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    vgt_reader_close(r);
    return h;
}

static uint64_t file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return (uint64_t)n;
}

int main(void)
{
    for (int t = 0; t < 8; t++)
        for (uint32_t k = 0; k < sizeof tensors[0]; k++) tensors[t][k] = (uint8_t)next();
    for (uint32_t k = 0; k < sizeof params; k++) params[k] = (uint8_t)(k * 7);
    char plain[] = "/tmp/test_memcas_plain_XXXXXX", cas[] = "/tmp/test_memcas_cas_XXXXXX";
    close(mkstemp(plain));
    close(mkstemp(cas));
    write_trace(plain, 0);
    write_trace(cas, 1);
    uint64_t n1, n2;
    uint32_t f1, f2;
    uint16_t m1, m2;
    uint64_t h1 = read_from(plain, 0, &n1, &f1, &m1), h2 = read_from(cas, 0, &n2, &f2, &m2);
    CHECK(n1 == n2 && h1 == h2, "records read back: %llu vs %llu, hashes %s", (unsigned long long)n1,
          (unsigned long long)n2, h1 == h2 ? "equal" : "differ");
    CHECK(f1 == 0 && f2 == VGT_HEADER_FLAG_MEMORY_CAS && m2 == VGT_FORMAT_MINOR, "header flags %u / %u, minor %u", f1, f2, m2);
    uint64_t s1 = file_size(plain), s2 = file_size(cas);
    CHECK(s2 * 2 < s1, "with MEMORY_CAS %llu bytes, without %llu: not halved", (unsigned long long)s2, (unsigned long long)s1);
    /* A seek into the middle: the window is rebuilt, the records from there on are the same. */
    h1 = read_from(plain, 377, &n1, &f1, &m1);
    h2 = read_from(cas, 377, &n2, &f2, &m2);
    CHECK(n1 == n2 && h1 == h2 && n1 > 0, "after a seek to 377: %llu vs %llu records, hashes %s", (unsigned long long)n1,
          (unsigned long long)n2, h1 == h2 ? "equal" : "differ");
    printf("test_format_memcas: %llu bytes without, %llu with MEMORY_CAS\n", (unsigned long long)s1, (unsigned long long)s2);
    unlink(plain);
    unlink(cas);
    return check_finish("test_format_memcas");
}
