/* test_pbwriter.c: the push-buffer writer (vgt/pbwriter.h): a run longer than COUNT allows is split over
 * headers (ONE_INC going on as NON_INC at the next method; an INC run may not pass method 0x3ffc), immediate data,
 * the 64-bit host release with and without WFI, and what marks the writer bad. Header words by hand from
 * clc86f.h's layout: SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = method >> 2. */
#include <stdlib.h>

#include "vgt/pbwriter.h"

#include "check.h"

static uint32_t hdr(uint32_t op, uint32_t count, uint32_t subch, uint32_t method)
{
    return op << 29 | count << 16 | subch << 13 | method >> 2;
}

static void test_split(void)
{
    enum { N = VGT_PBW_MAX_COUNT + 2 };
    uint32_t *data = calloc(N, 4), *dw = calloc(N + 8, 4);
    for (uint32_t i = 0; i < N; i++) data[i] = i;
    vgt_pbw w;
    vgt_pbw_init(&w, dw, N + 8);
    vgt_pbw_non_inc(&w, 3, 0x1b4, data, N);   /* LOAD_INLINE_DATA of a long upload */
    CHECK(w.n == N + 2, "NON_INC run of %u: %u dwords", N, w.n);
    CHECK(dw[0] == hdr(3, VGT_PBW_MAX_COUNT, 3, 0x1b4), "first header 0x%08x", dw[0]);
    CHECK(dw[1 + VGT_PBW_MAX_COUNT] == hdr(3, 2, 3, 0x1b4), "second NON_INC header 0x%08x", dw[1 + VGT_PBW_MAX_COUNT]);
    CHECK(dw[2 + VGT_PBW_MAX_COUNT] == VGT_PBW_MAX_COUNT, "data continue after the second header");
    vgt_pbw_reset(&w);
    vgt_pbw_inc(&w, 0, 0x3ff8, data, 3);      /* an INC run past ADDRESS 11:0 is refused */
    CHECK(w.overflow && w.n == 0, "INC run past method 0x3ffc accepted");
    vgt_pbw_reset(&w);
    vgt_pbw_one_inc(&w, 1, 0x1b0, data, N);
    CHECK(dw[0] == hdr(5, VGT_PBW_MAX_COUNT, 1, 0x1b0) && dw[1 + VGT_PBW_MAX_COUNT] == hdr(3, 2, 1, 0x1b4),
          "ONE_INC split: 0x%08x then 0x%08x", dw[0], dw[1 + VGT_PBW_MAX_COUNT]);
    vgt_error err;
    CHECK(vgt_pbw_check(&w, &err) == VGT_OK, "split runs are not an overflow");
    free(data);
    free(dw);
}

static void test_words(void)
{
    uint32_t dw[16];
    vgt_pbw w;
    vgt_pbw_init(&w, dw, 16);
    vgt_pbw_immd(&w, 2, 0x1b0, 1);
    vgt_pbw_host_release(&w, 0x1234567890ull, 0x1122334455667788ull, VGT_PBW_RELEASE_WFI | VGT_PBW_PAYLOAD_64);
    const uint32_t want[] = { hdr(4, 1, 2, 0x1b0), hdr(1, 5, 0, 0x05c), 0x34567890, 0x12, 0x55667788, 0x11223344,
                              1u | 1u << 20 | 1u << 24 };
    CHECK(w.n == 7, "%u dwords", w.n);
    for (uint32_t i = 0; i < 7 && i < w.n; i++) CHECK(dw[i] == want[i], "dword %u: 0x%08x, expected 0x%08x", i, dw[i], want[i]);
    vgt_pbw_reset(&w);
    vgt_pbw_host_release(&w, 0x1000, 7, 0);
    CHECK(w.n == 6 && dw[5] == 1, "release without WFI: SEM_EXECUTE 0x%08x", dw[5]);
}

static void test_bad(void)
{
    uint32_t dw[8];
    vgt_pbw w;
    vgt_error err;
    const uint32_t v[2] = { 1, 2 };
    vgt_pbw_init(&w, dw, 8);
    vgt_pbw_inc(&w, 0, 0x102, v, 1);   /* not a multiple of 4 */
    CHECK(vgt_pbw_check(&w, &err) == VGT_E_LIMIT && w.n == 0, "unaligned method accepted");
    vgt_pbw_init(&w, dw, 8);
    vgt_pbw_inc(&w, 0, 0x4000, v, 1);  /* past ADDRESS 11:0 */
    CHECK(vgt_pbw_check(&w, &err) == VGT_E_LIMIT && w.n == 0, "method 0x4000 accepted");
    vgt_pbw_init(&w, dw, 8);
    vgt_pbw_immd(&w, 0, 0x100, 0x2000);   /* immediate data is 13 bits */
    CHECK(vgt_pbw_check(&w, &err) == VGT_E_LIMIT, "14-bit immediate accepted");
    vgt_pbw_init(&w, dw, 2);
    vgt_pbw_inc(&w, 0, 0x100, v, 2);   /* 3 dwords into 2: nothing written */
    CHECK(vgt_pbw_check(&w, &err) == VGT_E_LIMIT && w.n == 0, "a run that does not fit wrote %u dwords", w.n);
    vgt_pbw_1(&w, 0, 0x100, 5);        /* and the writer stays bad */
    CHECK(w.n == 0, "a bad writer went on writing");
}

int main(void)
{
    test_split();
    test_words();
    test_bad();
    return check_finish("test_pbwriter");
}
