/* fuzz_stores.c: libFuzzer target for the `--stores` JSONL parser (analyze/verbs/db_stores_parse.c, the
 * store census file `vgt db --stores` and `vgt census --stores` read): each line parsed on its own, then the
 * whole input loaded as a file (row ordering, limits, consistency checks) and matched against submissions
 * the way a walk would. Errors are the expected outcome; a crash, over-read or leak is a bug. Seeds: the
 * census rows of the corpus traces (`vgt replay --census --census-json`). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyze/verbs/db_stores.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    /* line by line, each in its own exact-size buffer */
    for (size_t at = 0, line = 1; at < size; line++) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
        if (len <= DB_STORES_MAX_LINE) {
            char *t = malloc(len + 1);
            if (!t) return 0;
            memcpy(t, data + at, len);
            t[len] = 0;
            db_store_row row;
            vgt_error err;
            db_stores_parse_line("fuzz", t, (uint32_t)len, line, at, &row, &err);
            free(t);
        }
        at += len + 1;
    }
    int fd = fz_memfd("fuzz_stores", data, size);
    if (fd < 0) return 0;
    char path[64];
    db_stores s;
    vgt_error err;
    if (db_stores_load(&s, fz_path(fd, path, sizeof path), &err) == VGT_OK) {
        for (uint64_t i = 0; i < 64 && i < s.n + 2; i++) {
            uint64_t first, count;
            uint64_t seq = i < s.n ? s.rows[i].seq : i;
            uint32_t ch = i < s.n ? s.rows[i].channel : 0;
            if (db_stores_match(&s, i, seq, ch, &first, &count, &err) != VGT_OK) break;
        }
        db_stores_check_unmatched(&s, 64, &err);
        db_stores_free(&s);
    }
    close(fd);
    return 0;
}
