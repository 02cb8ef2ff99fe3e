/* test_qmd_encode.c: the QMD encoder against the decoder, for every version the tables know (V02_02,
 * V02_03, V03_00, V04_00).
 *
 *  1. Documented layouts: a QMD is written bit by bit at ranges transcribed here from NVIDIA open-gpu-doc
 *     (commit c8607fe) classes/compute/clc3c0qmd.h (NVC3C0_QMDV02_02_*), clc5c0qmd.h (NVC5C0_QMDV02_03_*),
 *     clc6c0qmd.h (NVC6C0_QMDV03_00_*) and clcbc0qmd.h (NVCBC0_QMDV04_00_*), independently of the tables;
 *     decoding it and encoding the decode must give back the same bytes, and encoding a vgt_qmd filled
 *     by hand must give those bytes too.
 *  2. Round trips: pseudo-random launches (every member within its field) encode and decode back equal;
 *     pseudo-random QMD bytes decode, and encode (with their unnamed bits) back to the same bytes.
 *  3. Values a layout cannot hold are refused (nothing that would decode differently is produced). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/qmd.h"
#include "check.h"

#define SET(q, hi, lo, v) vgt_qmd_set_bits(q, sizeof q, hi, lo, v)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static uint64_t rbits(unsigned n) { return n >= 64 ? rnd() : rnd() & ((1ull << n) - 1); }

/* The documented-layout launch every version test writes. */
#define PROG 0x1c2d3e4f5600ull
#define CB0 0x1a0000001000ull
#define CB3 0x1b00000fff00ull
#define REL0 0xab12345670ull

static vgt_qmd launch_common(void)
{
    vgt_qmd q;
    memset(&q, 0, sizeof q);
    q.grid[0] = 640, q.grid[1] = 3, q.grid[2] = 2;
    q.block[0] = 128, q.block[1] = 2, q.block[2] = 1;
    q.program_va = PROG;
    q.shared_memory = 0xc000, q.register_count = 40, q.barrier_count = 3, q.sass_version = 0x90;
    q.cb_valid_mask = 0x9;
    q.cb[0] = (vgt_qmd_cb){1, CB0, 0x10000};
    q.cb[3] = (vgt_qmd_cb){1, CB3, 0x100};
    q.release[0].enabled = 1, q.release[0].va = REL0, q.release[0].structure_size = 1;
    return q;
}

static void expect_bytes(vgt_qmd_version v, const uint8_t *doc, const vgt_qmd *hand)
{
    uint32_t size = vgt_qmd_version_size(v);
    uint8_t out[VGT_QMD_MAX_BYTES], unnamed[VGT_QMD_MAX_BYTES];
    vgt_qmd d;
    vgt_error err;
    const char *what = NULL;
    CHECK_STATUS(vgt_qmd_decode(doc, size, &d, &err), VGT_OK, &err, "%s: decode", vgt_qmd_version_name(v));
    CHECK_STATUS(vgt_qmd_encode(v, hand, NULL, out, sizeof out, &err), VGT_OK, &err, "%s: encode by hand",
                 vgt_qmd_version_name(v));
    for (uint32_t i = 0; i < size; i++)
        if (out[i] != doc[i]) {
            CHECK(0, "%s: byte %u is 0x%02x, the documented layout has 0x%02x", vgt_qmd_version_name(v), i, out[i], doc[i]);
            break;
        }
    CHECK(vgt_qmd_equal(&d, hand, &what) || (hand->major == 0 && strcmp(what, "version") == 0),
          "%s: decode differs from the hand-filled launch in %s", vgt_qmd_version_name(v), what ? what : "?");
    vgt_qmd_unnamed(v, doc, size, unnamed);
    for (uint32_t i = 0; i < size; i++) CHECK(!unnamed[i], "%s: unnamed byte %u is set", vgt_qmd_version_name(v), i);
    CHECK_STATUS(vgt_qmd_encode(v, &d, NULL, out, sizeof out, &err), VGT_OK, &err, "%s: encode decode",
                 vgt_qmd_version_name(v));
    CHECK(!memcmp(out, doc, size), "%s: encode(decode(doc)) differs from doc", vgt_qmd_version_name(v));
}

/* clc3c0qmd.h / clc5c0qmd.h: V02_02 and V02_03 share these ranges; PROGRAM_OFFSET is V02_02's alone. */
static void test_v02_documented(void)
{
    for (unsigned minor = 2; minor <= 3; minor++) {
        uint8_t q[256] = { 0 };
        SET(q, 583, 580, 2); SET(q, 579, 576, minor);                       /* QMD_MAJOR_VERSION, QMD_VERSION */
        SET(q, 415, 384, 640); SET(q, 431, 416, 3); SET(q, 463, 448, 2);   /* CTA_RASTER_WIDTH/HEIGHT/DEPTH */
        SET(q, 607, 592, 128); SET(q, 623, 608, 2); SET(q, 639, 624, 1);   /* CTA_THREAD_DIMENSION0/1/2 */
        SET(q, 1567, 1536, PROG & 0xffffffff); SET(q, 1584, 1568, PROG >> 32);   /* PROGRAM_ADDRESS_LOWER/UPPER */
        SET(q, 561, 544, 0xc000); SET(q, 656, 648, 40); SET(q, 959, 955, 3);     /* SHARED_MEMORY_SIZE, REGISTER_COUNT_V, BARRIER_COUNT */
        SET(q, 1023, 1016, 0x90);                                          /* SASS_VERSION */
        SET(q, 640, 640, 1); SET(q, 643, 643, 1);                          /* CONSTANT_BUFFER_VALID(i) 640+i */
        SET(q, 1055, 1024, CB0 & 0xffffffff); SET(q, 1072, 1056, CB0 >> 32); SET(q, 1087, 1075, 0x10000 >> 4);
        SET(q, 1247, 1216, CB3 & 0xffffffff); SET(q, 1264, 1248, CB3 >> 32); SET(q, 1279, 1267, 0x100 >> 4);
        SET(q, 138, 138, 1);                                               /* SEMAPHORE_RELEASE_ENABLE0 */
        SET(q, 767, 736, REL0 & 0xffffffff); SET(q, 775, 768, REL0 >> 32); /* RELEASE0_ADDRESS_LOWER/UPPER */
        SET(q, 799, 799, 1);                                               /* RELEASE0_STRUCTURE_SIZE ONE_WORD */
        SET(q, 831, 800, 0xcafe);                                          /* RELEASE0_PAYLOAD */
        vgt_qmd h = launch_common();
        h.major = 2, h.minor = (uint8_t)minor, h.version = minor == 2 ? VGT_QMD_V02_02 : VGT_QMD_V02_03;
        h.release_count = 2, h.size = 256;
        h.release[0].payload = 0xcafe;
        if (minor == 2) {
            SET(q, 287, 256, 0x4400);                                      /* PROGRAM_OFFSET */
            h.program_offset = 0x4400;
        } else {                                                           /* PROGRAM_PREFETCH_ADDR_*_SHIFTED, _SIZE */
            SET(q, 287, 256, (PROG >> 8) & 0xffffffff); SET(q, 1000, 992, PROG >> 40); SET(q, 1009, 1001, 12);
            h.program_prefetch_va = PROG, h.program_prefetch_size = 12;
        }
        expect_bytes(h.version, q, &h);
    }
}

/* clc6c0qmd.h: V03_00. */
static void test_v03_documented(void)
{
    uint8_t q[256] = { 0 };
    SET(q, 583, 580, 3); SET(q, 579, 576, 0);
    SET(q, 415, 384, 640); SET(q, 431, 416, 3); SET(q, 463, 448, 2);
    SET(q, 607, 592, 128); SET(q, 623, 608, 2); SET(q, 639, 624, 1);
    SET(q, 1567, 1536, PROG & 0xffffffff); SET(q, 1584, 1568, PROG >> 32);
    SET(q, 561, 544, 0xc000); SET(q, 656, 648, 40); SET(q, 767, 763, 3); SET(q, 1663, 1656, 0x90);
    SET(q, 640, 640, 1); SET(q, 643, 643, 1);
    SET(q, 1055, 1024, CB0 & 0xffffffff); SET(q, 1072, 1056, CB0 >> 32); SET(q, 1087, 1075, 0x10000 >> 4);
    SET(q, 1247, 1216, CB3 & 0xffffffff); SET(q, 1264, 1248, CB3 >> 32); SET(q, 1279, 1267, 0x100 >> 4);
    SET(q, 823, 823, 1);                                                   /* RELEASE0_ENABLE */
    SET(q, 799, 768, REL0 & 0xffffffff); SET(q, 807, 800, REL0 >> 32);     /* RELEASE0_ADDRESS_LOWER/UPPER */
    SET(q, 831, 830, 1);                                                   /* RELEASE0_STRUCTURE_SIZE ONE_WORD */
    SET(q, 829, 829, 1); SET(q, 863, 832, 2); SET(q, 895, 864, 1);          /* RELEASE0_PAYLOAD64B, _LOWER, _UPPER */
    SET(q, 1719, 1719, 1); SET(q, 1695, 1664, 0x5000); SET(q, 1703, 1696, 0x7f);   /* RELEASE2_ENABLE, ADDRESS */
    SET(q, 1722, 1722, 1); SET(q, 1718, 1716, 3); SET(q, 1759, 1728, 77);   /* RELEASE2_REDUCTION_ENABLE/OP INC, PAYLOAD */
    SET(q, 511, 480, 0x204e108); SET(q, 512, 512, 1); SET(q, 515, 513, 4);  /* DEPENDENT_QMD0_POINTER/ENABLE/ACTION */
    SET(q, 287, 256, (PROG >> 8) & 0xffffffff); SET(q, 1640, 1632, PROG >> 40); SET(q, 1649, 1641, 7);   /* PROGRAM_PREFETCH_* */
    vgt_qmd h = launch_common();
    h.program_prefetch_va = PROG, h.program_prefetch_size = 7;
    h.major = 3, h.version = VGT_QMD_V03_00, h.release_count = 3, h.size = 256;
    h.release[0].payload64 = 1, h.release[0].payload = 0x100000002ull;
    h.release[2] = (vgt_qmd_release){.enabled = 1, .va = 0x7f00005000ull, .reduction_enable = 1, .reduction_op = 3,
                                     .payload = 77};
    h.dependent[0] = (vgt_qmd_dependent){.enabled = 1, .action = 4, .va = 0x204e10800ull};
    expect_bytes(VGT_QMD_V03_00, q, &h);
}

/* clcbc0qmd.h: V04_00 (96 dwords; constant buffer addresses stored >> 6). */
static void test_v04_documented(void)
{
    uint8_t q[384] = { 0 };
    SET(q, 583, 580, 4); SET(q, 579, 576, 0);                              /* QMD_MAJOR_VERSION, QMD_MINOR_VERSION */
    SET(q, 1055, 1024, 640); SET(q, 1071, 1056, 3); SET(q, 1103, 1088, 2); /* GRID_WIDTH/HEIGHT/DEPTH */
    SET(q, 1167, 1152, 128); SET(q, 1183, 1168, 2); SET(q, 1199, 1184, 1); /* CTA_THREAD_DIMENSION0/1/2 */
    SET(q, 1247, 1216, PROG & 0xffffffff); SET(q, 1272, 1248, PROG >> 32);
    SET(q, 601, 584, 0xc000); SET(q, 1208, 1200, 40); SET(q, 1215, 1211, 3); SET(q, 543, 536, 0x90);
    SET(q, 416, 416, 1); SET(q, 428, 428, 1);                              /* CONSTANT_BUFFER_VALID(i) 416+4i */
    SET(q, 1567, 1536, (CB0 >> 6) & 0xffffffff); SET(q, 1586, 1568, CB0 >> 38); SET(q, 1599, 1587, 0x10000 >> 4);
    SET(q, 1759, 1728, (CB3 >> 6) & 0xffffffff); SET(q, 1778, 1760, CB3 >> 38); SET(q, 1791, 1779, 0x100 >> 4);
    SET(q, 320, 320, 1); SET(q, 322, 321, 1);                              /* RELEASE_ENABLE(0), STRUCTURE_SIZE(0) */
    SET(q, 671, 640, REL0 & 0xffffffff); SET(q, 696, 672, REL0 >> 32);     /* RELEASE_SEMAPHORE0_ADDR_LOWER/UPPER */
    SET(q, 352, 352, 1); SET(q, 364, 364, 1);                              /* RELEASE_ENABLE(2), PAYLOAD64B(2) */
    SET(q, 927, 896, 0x9000); SET(q, 952, 928, 0x1ff);                     /* RELEASE_SEMAPHORE2_ADDR_LOWER/UPPER */
    SET(q, 991, 960, 0x89abcdef); SET(q, 1023, 992, 0x01234567);           /* RELEASE_SEMAPHORE2_PAYLOAD_LOWER/UPPER */
    SET(q, 368, 368, 1); SET(q, 371, 369, 4); SET(q, 372, 372, 1);         /* DEPENDENT_QMD_ENABLE/ACTION/PREFETCH(0) */
    SET(q, 479, 448, 0x204e100);                                           /* DEPENDENT_QMD0_POINTER */
    SET(q, 373, 373, 1); SET(q, 376, 374, 1); SET(q, 511, 480, 0x204e0c8);  /* dependent 1: SCHEDULE */
    SET(q, 1375, 1344, (PROG >> 8) & 0xffffffff); SET(q, 1392, 1376, PROG >> 40); SET(q, 1401, 1393, 12);   /* PROGRAM_PREFETCH_* */
    vgt_qmd h = launch_common();
    h.program_prefetch_va = PROG, h.program_prefetch_size = 12;
    h.major = 4, h.version = VGT_QMD_V04_00, h.release_count = 3, h.size = 384;
    h.release[2] = (vgt_qmd_release){.enabled = 1, .payload64 = 1, .va = 0x1ff00009000ull, .payload = 0x0123456789abcdefull};
    h.dependent[0] = (vgt_qmd_dependent){.enabled = 1, .action = 4, .prefetch = 1, .va = 0x204e10000ull};
    h.dependent[1] = (vgt_qmd_dependent){.enabled = 1, .action = 1, .va = 0x204e0c800ull};
    expect_bytes(VGT_QMD_V04_00, q, &h);
}

/* Every table field of v filled with random bits: decode -> encode (with the unnamed bits) -> same bytes;
 * and the decode -> encode -> decode is the same launch. Random unnamed bits too. */
static void test_roundtrip(vgt_qmd_version v)
{
    uint32_t size = vgt_qmd_version_size(v), n = 0;
    const vgt_qmd_field *f = vgt_qmd_fields(v, &n);
    for (int iter = 0; iter < 200; iter++) {
        uint8_t q[VGT_QMD_MAX_BYTES], unnamed[VGT_QMD_MAX_BYTES], out[VGT_QMD_MAX_BYTES];
        for (uint32_t i = 0; i < size; i++) q[i] = (uint8_t)rnd();
        for (uint32_t k = 0; k < n; k++)
            for (unsigned i = 0; i < f[k].count; i++) {
                unsigned hi = f[k].hi + i * f[k].stride, lo = f[k].lo + i * f[k].stride;
                vgt_qmd_set_bits(q, size, hi, lo, rbits(hi - lo + 1));
            }
        /* the version is the version */
        vgt_qmd_set_bits(q, size, 583, 580, v == VGT_QMD_V04_00 ? 4 : v == VGT_QMD_V03_00 ? 3 : 2);
        vgt_qmd_set_bits(q, size, 579, 576, v == VGT_QMD_V02_02 ? 2 : v == VGT_QMD_V02_03 ? 3 : 0);
        vgt_qmd d, d2;
        vgt_error err;
        CHECK_STATUS(vgt_qmd_decode(q, size, &d, &err), VGT_OK, &err, "%s: decode random", vgt_qmd_version_name(v));
        vgt_qmd_unnamed(v, q, size, unnamed);
        vgt_status rc = vgt_qmd_encode(v, &d, unnamed, out, sizeof out, &err);
        CHECK_STATUS(rc, VGT_OK, &err, "%s: encode random", vgt_qmd_version_name(v));
        if (rc != VGT_OK) return;
        CHECK(!memcmp(out, q, size), "%s: round trip of random QMD %d changed its bytes", vgt_qmd_version_name(v), iter);
        CHECK_STATUS(vgt_qmd_decode(out, size, &d2, &err), VGT_OK, &err, "%s: decode again", vgt_qmd_version_name(v));
        const char *what = NULL;
        CHECK(vgt_qmd_equal(&d, &d2, &what), "%s: launch %d differs after a round trip in %s", vgt_qmd_version_name(v),
              iter, what ? what : "?");
        /* without the unnamed bits, the launch still decodes the same */
        CHECK_STATUS(vgt_qmd_encode(v, &d, NULL, out, sizeof out, &err), VGT_OK, &err, "%s: encode bare",
                     vgt_qmd_version_name(v));
        CHECK_STATUS(vgt_qmd_decode(out, size, &d2, &err), VGT_OK, &err, "%s: decode bare", vgt_qmd_version_name(v));
        CHECK(vgt_qmd_equal(&d, &d2, &what), "%s: bare launch %d differs in %s", vgt_qmd_version_name(v), iter,
              what ? what : "?");
    }
}

static void test_refusals(void)
{
    uint8_t out[VGT_QMD_MAX_BYTES];
    vgt_error err;
    vgt_qmd q = launch_common();
    q.cb[0].va = CB0 + 8;   /* V04_00 stores constant buffer addresses >> 6 */
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V04_00, &q, NULL, out, sizeof out, &err), VGT_E_ARG, &err, "unaligned cb");
    CHECK(strstr(err.msg, "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)") != NULL, "message: %s", err.msg);
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V03_00, &q, NULL, out, sizeof out, &err), VGT_OK, &err, "V03 keeps low bits");
    q = launch_common();
    q.grid[1] = 0x10000;    /* 16-bit field */
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V04_00, &q, NULL, out, sizeof out, &err), VGT_E_ARG, &err, "wide grid");
    q = launch_common();
    q.release[0].payload = 1ull << 40;
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V02_03, &q, NULL, out, sizeof out, &err), VGT_E_ARG, &err, "V02 64-bit payload");
    q = launch_common();
    q.release[2].enabled = 1;
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V02_02, &q, NULL, out, sizeof out, &err), VGT_E_ARG, &err, "V02 third release");
    q = launch_common();
    q.major = 3;
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V04_00, &q, NULL, out, sizeof out, &err), VGT_E_ARG, &err, "version mismatch");
    CHECK_STATUS(vgt_qmd_encode(VGT_QMD_V04_00, &q, NULL, out, 256, &err), VGT_E_ARG, &err, "short buffer");
}

int main(void)
{
    test_v02_documented();
    test_v03_documented();
    test_v04_documented();
    const vgt_qmd_version all[] = {VGT_QMD_V02_02, VGT_QMD_V02_03, VGT_QMD_V03_00, VGT_QMD_V04_00};
    for (unsigned i = 0; i < 4; i++) test_roundtrip(all[i]);
    test_refusals();
    return check_finish("test_qmd_encode");
}
