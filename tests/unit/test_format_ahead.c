/* test_format_ahead.c: the reader's read-ahead workers (reader_ahead.c) hand out exactly what the reader
 * alone does: the same records in the same order, a damaged chunk reported at the same point with the
 * same message (never earlier, although a worker met it first), and a seek back while workers are
 * ahead continuing from the right record. The workers also check each record's fields: records of a
 * chunk whose fields all pass come marked (fields_checked), those of a chunk holding a malformed one not. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "vgt/trace.h"
#include "check.h"

#define RECORDS 4000

static void write_trace(const char *path, uint32_t bad_at)
{
    vgt_writer *w;
    vgt_error e;
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 4096;   /* many small chunks */
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) { fprintf(stderr, "open: %s\n", e.msg); exit(1); }
    char text[200];
    for (uint32_t i = 0; i < RECORDS; i++) {
        int n = snprintf(text, sizeof text, "marker %u %08x", i, i * 2654435761u);
        vgt_rec_marker m = { .text = text, .length = (uint32_t)n };
        if (i == bad_at) {   /* a GPU_MAP of 8 bytes, shorter than its fixed part: its fields fail */
            uint8_t bad[8] = {0};
            CHECK_STATUS(vgt_write_record(w, VGT_REC_GPU_MAP, 0, 1000 + i, bad, sizeof bad, NULL, &e), VGT_OK, &e, "bad");
            continue;
        }
        CHECK_STATUS(vgt_write_marker(w, 1000 + i, &m, &e), VGT_OK, &e, "marker %u", i);
    }
    CHECK_STATUS(vgt_writer_close(w, &e), VGT_OK, &e, "close");
}

typedef struct result { uint64_t n, hash, checked, bad_checked; vgt_status rc; char msg[VGT_ERROR_MSG_MAX]; } result;

static result read_all(const char *path, int ahead)
{
    result res = { 0 };
    vgt_reader *r;
    vgt_error e;
    vgt_reader_options o = { .verify_checksums = 1, .read_ahead = ahead };
    if (vgt_reader_open_path(&r, path, &o, &e) != VGT_OK) { res.rc = e.code; snprintf(res.msg, sizeof res.msg, "%s", e.msg); return res; }
    XXH64_state_t *h = XXH64_createState();
    XXH64_reset(h, 0);
    vgt_record rec;
    while ((res.rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        res.n++;
        res.checked += rec.fields_checked != 0;
        if (rec.type == VGT_REC_GPU_MAP) res.bad_checked += rec.fields_checked != 0;
        XXH64_update(h, &rec.seq, 8);
        XXH64_update(h, rec.payload, rec.length);
    }
    if (res.rc != VGT_E_EOF) snprintf(res.msg, sizeof res.msg, "%s", e.msg);
    res.hash = XXH64_digest(h);
    XXH64_freeState(h);
    vgt_reader_close(r);
    return res;
}

int main(void)
{
    char path[] = "/tmp/test_format_ahead_XXXXXX";
    close(mkstemp(path));
    write_trace(path, RECORDS / 2);

    result alone = read_all(path, -1), two = read_all(path, 2), one = read_all(path, 1), eight = read_all(path, 8);
    /* the malformed record's chunk is not marked; every other chunk the workers loaded is */
    CHECK(alone.checked == 0, "reader alone marked %llu records", (unsigned long long)alone.checked);
    CHECK(two.bad_checked == 0 && two.checked > RECORDS * 9 / 10 && two.checked < RECORDS,
          "two workers marked %llu of %u records (the malformed one %s)", (unsigned long long)two.checked, RECORDS,
          two.bad_checked ? "too" : "not");
    CHECK(alone.rc == VGT_E_EOF && alone.n == RECORDS, "reader alone: %llu records, %s", (unsigned long long)alone.n, alone.msg);
    CHECK(two.rc == VGT_E_EOF && two.n == RECORDS && two.hash == alone.hash, "two workers: %llu records, hash %s",
          (unsigned long long)two.n, two.hash == alone.hash ? "same" : "different");
    CHECK(one.rc == VGT_E_EOF && one.n == RECORDS && one.hash == alone.hash, "one worker: %llu records", (unsigned long long)one.n);
    /* the most workers there may be, each with its slots (chunks of differing sizes grow their buffers) */
    CHECK(eight.rc == VGT_E_EOF && eight.n == RECORDS && eight.hash == alone.hash && eight.bad_checked == 0,
          "eight workers: %llu records, hash %s", (unsigned long long)eight.n, eight.hash == alone.hash ? "same" : "different");

    /* VGT_READ_AHEAD stands for an option left on auto (0): -1 no workers (nothing marked), 1 one */
    setenv("VGT_READ_AHEAD", "-1", 1);
    result env_none = read_all(path, 0), env_opt = read_all(path, 2);
    setenv("VGT_READ_AHEAD", "1", 1);
    result env_one = read_all(path, 0);
    unsetenv("VGT_READ_AHEAD");
    CHECK(env_none.checked == 0 && env_none.hash == alone.hash, "VGT_READ_AHEAD=-1: %llu records marked",
          (unsigned long long)env_none.checked);
    CHECK(env_opt.checked > 0 && env_one.checked > 0 && env_one.hash == alone.hash,
          "an option of 2 over VGT_READ_AHEAD=-1: %llu marked; VGT_READ_AHEAD=1: %llu marked",
          (unsigned long long)env_opt.checked, (unsigned long long)env_one.checked);

    /* A seek back while the workers are ahead: reading goes on from the record asked for. */
    vgt_reader *r;
    vgt_error e;
    vgt_reader_options o = { .verify_checksums = 1, .read_ahead = 2 };
    CHECK_STATUS(vgt_reader_open_path(&r, path, &o, &e), VGT_OK, &e, "open");
    vgt_record rec;
    for (int i = 0; i < 3000; i++) vgt_reader_next(r, &rec, &e);
    CHECK_STATUS(vgt_reader_seek_seq(r, 100, &e), VGT_OK, &e, "seek back");
    uint64_t want = 100, bad = 0;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) bad += rec.seq != want++;
    CHECK(bad == 0 && want == RECORDS, "after the seek: %llu out of order, ended at %llu", (unsigned long long)bad,
          (unsigned long long)want);
    vgt_reader_close(r);

    /* Damage one byte in the payload of a chunk in the middle: same records before it, same error. */
    const vgt_chunk_info *c;
    uint32_t nc;
    CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, &e), VGT_OK, &e, "open");
    CHECK_STATUS(vgt_reader_chunks(r, &c, &nc, &e), VGT_OK, &e, "chunks");
    uint64_t at = nc > 10 ? c[nc / 2].offset + 72 + 5 : 0;
    vgt_reader_close(r);
    CHECK(nc > 10, "only %u chunks", nc);
    int fd = open(path, O_RDWR);
    uint8_t byte;
    CHECK(pread(fd, &byte, 1, (off_t)at) == 1, "read");
    byte ^= 0x40;
    CHECK(pwrite(fd, &byte, 1, (off_t)at) == 1, "write");
    close(fd);
    alone = read_all(path, -1);
    two = read_all(path, 2);
    CHECK(alone.rc == VGT_E_CHECKSUM, "reader alone: %s", alone.msg);
    CHECK(two.rc == alone.rc && two.n == alone.n && !strcmp(two.msg, alone.msg),
          "with workers: %llu records then '%s'; alone: %llu then '%s'", (unsigned long long)two.n, two.msg,
          (unsigned long long)alone.n, alone.msg);
    unlink(path);
    return check_finish("test_format_ahead");
}
