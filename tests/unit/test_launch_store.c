/* test_launch_store.c: the work extractor's store of copied bytes (analyze/src/launch_store.c).
 * Its ranges come from the trace: an upload or a CPU write may name 2^40 bytes (fuzz_verbs found one that
 * kept `vgt launches` busy past 60 s forgetting a page at a time). Forgetting walks only the pages held. */
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
    return check_finish("test_launch_store");
}
