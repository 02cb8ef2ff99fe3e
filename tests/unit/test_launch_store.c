/* test_launch_store.c: the work extractor's store of copied bytes (analyze/src/launch_store.c).
 * Its ranges come from the trace: an upload or a CPU write may name 2^40 bytes (fuzz_verbs found one that
 * kept `vgt launches` busy past 60 s forgetting a page at a time). Forgetting walks only the pages held.
 * Long fills are extents, not pages: CUDA clears a fresh 72 MB allocation with one copy-engine memset
 * (corpus/many_launches.vgt submission 143), and written out a byte at a time into 17,600 pages it cost
 * a live replay ~470 ms of that one submission on the H200. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "../../analyze/src/launch_store.h"

static uint64_t known_at(const ld_store *s, uint64_t va, uint64_t len)
{
    uint8_t buf[2 * LD_STORE_PAGE];
    return ld_store_read(s, va, buf, len, NULL);
}

int main(void)
{
    ld_store s;
    memset(&s, 0, sizeof s);
    uint8_t bytes[LD_STORE_PAGE];
    memset(bytes, 0xab, sizeof bytes);
    ld_store_write(&s, 0x10000, bytes, LD_STORE_PAGE);
    ld_store_write(&s, 0x7f0000000000, bytes, LD_STORE_PAGE);
    ld_store_write(&s, 0xfffffffffffff000, bytes, LD_STORE_PAGE);

    /* a range of 2^40 bytes from 0x10800: the first page's tail and nothing past 0x100_0001_0800 */
    ld_store_forget(&s, 0x10800, 1ull << 40);
    CHECK_EQ_U64(known_at(&s, 0x10000, LD_STORE_PAGE), 0x800, "the bytes before the range stay known");
    CHECK_EQ_U64(known_at(&s, 0x7f0000000000, LD_STORE_PAGE), LD_STORE_PAGE, "a page past the range stays known");

    /* a range that runs past 2^64 forgets up to the end of the address space */
    ld_store_forget(&s, 0xfffffffffffff800, UINT64_MAX);
    CHECK_EQ_U64(known_at(&s, 0xfffffffffffff000, LD_STORE_PAGE), 0x800, "the last page's head stays known");

    /* the whole address space */
    ld_store_forget(&s, 0, UINT64_MAX);
    CHECK_EQ_U64(known_at(&s, 0x7f0000000000, LD_STORE_PAGE), 0, "everything forgotten");

    /* a short range still goes page by page: one byte in the middle */
    ld_store_write(&s, 0x20000, bytes, 16);
    ld_store_forget(&s, 0x20004, 1);
    CHECK_EQ_U64(known_at(&s, 0x20000, 16), 15, "one byte forgotten");
    ld_store_free(&s);

    /* a 72 MB fill of a 4-byte element: one extent, no page; its bytes read back in phase from its start */
    memset(&s, 0, sizeof s);
    const uint8_t elem[4] = {1, 2, 3, 4};
    uint64_t base = 0x7f7ba4000000ull, big = 72116352;
    ld_store_fill(&s, base + 2, big, elem, 4);
    CHECK(s.n == 0 && s.nfills == 1, "a long fill is one extent: %u pages, %u extents", s.n, s.nfills);
    uint8_t got[32], mask[32];
    memset(got, 0xee, sizeof got);
    CHECK_EQ_U64(ld_store_read(&s, base, got, 8, mask), 6, "the fill's bytes are known from its start");
    CHECK(mask[0] == 0 && mask[1] == 0 && got[0] == 0xee && mask[2] == 1 && got[2] == 1 && got[3] == 2 && got[5] == 4 &&
              got[6] == 1, "in phase from the fill's start: %02x %02x %02x %02x", got[2], got[3], got[5], got[6]);
    CHECK_EQ_U64(ld_store_read(&s, base + 2 + big - 4, got, 8, mask), 4, "the fill ends where it ends");
    CHECK(got[0] == 1 && got[3] == 4 && mask[3] == 1 && mask[4] == 0, "its last element whole");

    /* a write over the fill wins; the fill's bytes around it stay */
    memset(bytes, 0xab, 16);
    ld_store_write(&s, base + 0x1000, bytes, 16);
    CHECK(s.nfills == 2, "a write inside cuts the extent in two: %u", s.nfills);
    CHECK_EQ_U64(ld_store_read(&s, base + 0x1000 - 2, got, 20, mask), 20, "the write and the fill around it are known");
    CHECK(got[0] == 1 && got[1] == 2 && got[2] == 0xab && got[17] == 0xab && got[18] == 3 && got[19] == 4,
          "the write over the fill: %02x %02x %02x %02x %02x", got[0], got[1], got[2], got[18], got[19]);

    /* a fill over written bytes wins, and a forget cuts the extents */
    ld_store_fill(&s, base + 0x1000, LD_STORE_FILL_MIN, (const uint8_t[]){0x55}, 1);
    CHECK_EQ_U64(ld_store_read(&s, base + 0x1000, got, 16, NULL), 16, "the fill over the write is known");
    CHECK(got[0] == 0x55 && got[15] == 0x55, "the later fill's bytes: %02x", got[0]);
    ld_store_forget(&s, base + 0x800, 0x2000);
    CHECK_EQ_U64(ld_store_read(&s, base + 0x7fe, got, 4, NULL), 2, "forgotten from the range's start");
    CHECK_EQ_U64(ld_store_read(&s, base + 0x27fe, got, 4, NULL), 2, "and up to its end");

    /* short fills go into pages, as copies */
    ld_store_fill(&s, 0x30000, 100, (const uint8_t[]){7, 8}, 2);
    CHECK_EQ_U64(ld_store_read(&s, 0x30000, got, 4, NULL), 4, "a short fill is known");
    CHECK(got[0] == 7 && got[1] == 8 && got[2] == 7, "a short fill's bytes");

    /* a fill to the end of the address space, then everything forgotten */
    ld_store_fill(&s, 0xffffffffffff0000ull, UINT64_MAX, elem, 4);
    CHECK_EQ_U64(ld_store_read(&s, 0xfffffffffffffff8ull, got, 8, NULL), 8, "a fill reaching 2^64 ends there");
    ld_store_forget(&s, 0, UINT64_MAX);   /* [0, 2^64 - 1): all but the last byte */
    CHECK(s.nfills == 1 && ld_store_read(&s, 0xfffffffffffffff8ull, got, 8, NULL) == 1,
          "forgetting [0, 2^64 - 1) leaves the last byte alone: %u extents", s.nfills);
    ld_store_forget(&s, 0xffffffffffffffffull, 1);
    CHECK(s.nfills == 0, "and that byte forgotten drops the last extent: %u", s.nfills);

    /* past LD_STORE_MAX_FILLS extents a long fill is forgotten, never half kept */
    for (uint32_t i = 0; i <= LD_STORE_MAX_FILLS; i++) ld_store_fill(&s, 0x100000000ull + (uint64_t)i * 0x100000, LD_STORE_FILL_MIN, elem, 4);
    CHECK(s.nfills == LD_STORE_MAX_FILLS, "at most %u extents: %u", LD_STORE_MAX_FILLS, s.nfills);
    CHECK_EQ_U64(ld_store_read(&s, 0x100000000ull + (uint64_t)LD_STORE_MAX_FILLS * 0x100000, got, 8, NULL), 0,
                 "the fill past the limit is unknown");
    ld_store_free(&s);
    return check_finish("test_launch_store");
}
