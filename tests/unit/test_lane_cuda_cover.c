/* test_lane_cuda_cover.c: lane 3's bitmap of covered submissions (lc_cover, lc_covered) grows by doubling
 * from 4096 bits, keeps the bits set before, clears the new ones, and stays as it is for submission numbers a
 * hostile trace makes up near 2^64 (a bitmap that large cannot be had; the doubling must not wrap to 0 and
 * spin). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../replay/src/lane_cuda.h"
#include "check.h"

static int bit(const lane_cuda *lc, uint64_t i) { return i < lc->capcovered && (lc->covered[i / 8] >> (i % 8)) & 1; }

int main(void)
{
    lane_cuda lc = {0};
    lc.submits = UINT64_MAX;   /* count every covered bit the bitmap holds */

    lc_cover(&lc, 5000, 3);
    CHECK_EQ_U64(lc.capcovered, 8192, "4096 bits doubled once for submission 5002");
    CHECK_EQ_U64(lc_covered(&lc), 3, "three covered");
    CHECK(bit(&lc, 5000) && bit(&lc, 5002) && !bit(&lc, 4999) && !bit(&lc, 5003), "exactly 5000..5002");

    lc_cover(&lc, 0, 1);
    CHECK_EQ_U64(lc.capcovered, 8192, "room already");
    CHECK_EQ_U64(lc_covered(&lc), 4, "four covered");

    lc_cover(&lc, 8190, 4);
    CHECK_EQ_U64(lc.capcovered, 16384, "doubled again for 8193");
    CHECK_EQ_U64(lc_covered(&lc), 8, "the bits before kept, the new ones clear but for 8190..8193");
    CHECK(bit(&lc, 8193) && !bit(&lc, 8194) && !bit(&lc, 16383), "new bits cleared");

    lc_cover(&lc, 40000, 1);
    CHECK_EQ_U64(lc.capcovered, 65536, "doubled twice for 40000");
    CHECK_EQ_U64(lc_covered(&lc), 9, "one more");

    /* made-up numbers: no bitmap of 2^63 bits; nothing changes, and the call returns */
    lc_cover(&lc, (1ull << 63) + 5, 1);
    CHECK_EQ_U64(lc.capcovered, 65536, "past 2^63 bits: not grown");
    CHECK_EQ_U64(lc_covered(&lc), 9, "past 2^63 bits: nothing covered");
    lc_cover(&lc, UINT64_MAX - 1, 5);
    CHECK_EQ_U64(lc.capcovered, 65536, "first + count past 2^64: not grown");
    CHECK_EQ_U64(lc_covered(&lc), 9, "first + count past 2^64: nothing covered");

    free(lc.covered);
    return check_finish("test_lane_cuda_cover");
}
