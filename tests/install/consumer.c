/* consumer.c: a program built against an installed vgtrace (tests/py/test_install.py builds it with CMake
 * and with pkg-config). It reads a trace through the public API only: the reader for records and
 * GPFIFO_SUBMIT records, the push-buffer decoder for one submission's methods (with the channel's class
 * from its CHANNEL record), and the rows API for the whole trace's tables. Prints one JSON object. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <vgt/pushbuf.h>
#include <vgt/rows.h>
#include <vgt/trace.h>
#include <vgt/version.h>

static int count_rows(void *ctx, int table, const void *rows, uint32_t n)
{
    (void)rows;
    ((uint64_t *)ctx)[table] += n;
    return 0;
}

static int count_method(void *ctx, const vgt_method *m)
{
    (void)m;
    ++*(uint64_t *)ctx;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer TRACE\n");
        return 2;
    }
    if (vgt_library_abi() != VGT_ABI) {
        fprintf(stderr, "consumer: libvgt ABI %d, headers %d\n", vgt_library_abi(), VGT_ABI);
        return 2;
    }
    vgt_error err;
    vgt_reader *r;
    if (vgt_reader_open_path(&r, argv[1], NULL, &err) != VGT_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    uint64_t records = 0, submits = 0, first_submit_methods = 0;
    uint32_t channel_class = 0;
    vgt_record rec;
    vgt_status st;
    while ((st = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        records++;
        if (rec.type == VGT_REC_CHANNEL && !channel_class) {
            vgt_rec_channel ch;
            if (vgt_decode_channel(&rec, &ch, &err) == VGT_OK) channel_class = ch.cls;
        }
        if (rec.type != VGT_REC_GPFIFO_SUBMIT) continue;
        if (submits++ == 0) {   /* the first submission's methods, decoded here */
            vgt_segment seg[256];
            vgt_rec_gpfifo_submit sub;
            if (vgt_decode_gpfifo_submit(&rec, &sub, seg, 256, &err) != VGT_OK) break;
            vgt_pb_state pb;
            vgt_pb_state_init(&pb, channel_class);
            vgt_pb_callbacks cb = {.method = count_method, .ctx = &first_submit_methods};
            if (vgt_pb_decode_submit(&pb, rec.seq, &sub, &cb, &err) != VGT_OK) break;
        }
    }
    vgt_reader_close(r);
    if (st != VGT_E_EOF) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    uint64_t rows[VGT_ROWS_TABLE_COUNT_] = {0};
    vgt_rows_sink sink = {.batch = count_rows, .ctx = rows, .tables = VGT_ROWS_ALL};
    if (vgt_rows_walk(argv[1], &sink, NULL, &err) != VGT_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    printf("{\"library\":\"%s\",\"records\":%" PRIu64 ",\"submissions\":%" PRIu64 ",\"first_submit_methods\":%" PRIu64
           ",\"rows\":{\"submissions\":%" PRIu64 ",\"entries\":%" PRIu64 ",\"methods\":%" PRIu64 ",\"events\":%" PRIu64
           ",\"macro_calls\":%" PRIu64 "}}\n",
           vgt_library_version(), records, submits, first_submit_methods, rows[VGT_ROWS_SUBMITS], rows[VGT_ROWS_ENTRIES],
           rows[VGT_ROWS_METHODS], rows[VGT_ROWS_EVENTS], rows[VGT_ROWS_MACRO_CALLS]);
    return 0;
}
