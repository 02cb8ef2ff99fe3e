/* test_qmd.c: QMD decoding for V02_02, V02_03, V03_00 and V04_00.
 *
 * Each test writes known values at bit ranges transcribed here independently of the decoder's tables
 * (from NVIDIA open-gpu-doc classes/compute/clc3c0qmd.h, clc5c0qmd.h, clc6c0qmd.h, clcbc0qmd.h), then
 * decodes and compares, so a wrong range in a table fails here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/qmd.h"
#include "check.h"

#define SET(q, hi, lo, v) vgt_qmd_set_bits(q, sizeof q, hi, lo, v)

/* Values every version test uses. */
enum { GX = 640, GY = 3, GZ = 2, BX = 128, BY = 2, BZ = 1, SMEM = 0xC000, REGS = 40, BARRIERS = 3 };
#define PROG UINT64_C(0x1c2d3e4f5600)
#define CB0 UINT64_C(0x1a0000001000)
#define CB3 UINT64_C(0x1b00000fff00)
#define REL0 UINT64_C(0xab12345670)

static void check_common(const vgt_qmd *q, vgt_qmd_version v)
{
    CHECK(q->version == v, "version %d, expected %d", q->version, v);
    CHECK(q->grid[0] == GX && q->grid[1] == GY && q->grid[2] == GZ, "grid %ux%ux%u", q->grid[0], q->grid[1], q->grid[2]);
    CHECK(q->block[0] == BX && q->block[1] == BY && q->block[2] == BZ, "block %ux%ux%u", q->block[0], q->block[1], q->block[2]);
    CHECK(q->program_va == PROG, "program 0x%llx", (unsigned long long)q->program_va);
    CHECK(q->shared_memory == SMEM, "shared memory %u", q->shared_memory);
    CHECK(q->register_count == REGS, "registers %u", q->register_count);
    CHECK(q->barrier_count == BARRIERS, "barriers %u", q->barrier_count);
    CHECK(q->cb_valid_mask == 0x9, "cb mask 0x%x", q->cb_valid_mask);
    CHECK(q->cb[0].va == CB0 && q->cb[0].size == 0x10000, "cb0 0x%llx+%u", (unsigned long long)q->cb[0].va, q->cb[0].size);
    CHECK(q->cb[3].va == CB3 && q->cb[3].size == 0x100, "cb3 0x%llx+%u", (unsigned long long)q->cb[3].va, q->cb[3].size);
    CHECK(!q->cb[1].valid && !q->cb[2].valid, "cb1/cb2 should be invalid");
    CHECK(q->release[0].enabled && q->release[0].va == REL0, "release0 %u 0x%llx", q->release[0].enabled,
          (unsigned long long)q->release[0].va);
    CHECK(!q->release[1].enabled, "release1 should be off");
}

/* V02_02 and V02_03 share these ranges (clc3c0qmd.h / clc5c0qmd.h). */
static void fill_v02(uint8_t *q, unsigned minor)
{
    uint8_t buf[256] = { 0 };
    SET(buf, 583, 580, 2); SET(buf, 579, 576, minor);
    SET(buf, 415, 384, GX); SET(buf, 431, 416, GY); SET(buf, 463, 448, GZ);
    SET(buf, 607, 592, BX); SET(buf, 623, 608, BY); SET(buf, 639, 624, BZ);
    SET(buf, 1567, 1536, PROG & 0xffffffff); SET(buf, 1584, 1568, PROG >> 32);
    SET(buf, 561, 544, SMEM); SET(buf, 656, 648, REGS); SET(buf, 959, 955, BARRIERS);
    SET(buf, 640, 640, 1); SET(buf, 643, 643, 1);
    SET(buf, 1055, 1024, CB0 & 0xffffffff); SET(buf, 1072, 1056, CB0 >> 32); SET(buf, 1087, 1075, 0x10000 >> 4);
    SET(buf, 1055 + 192, 1024 + 192, CB3 & 0xffffffff); SET(buf, 1072 + 192, 1056 + 192, CB3 >> 32);
    SET(buf, 1087 + 192, 1075 + 192, 0x100 >> 4);
    SET(buf, 138, 138, 1); SET(buf, 767, 736, REL0 & 0xffffffff); SET(buf, 775, 768, REL0 >> 32);
    SET(buf, 831, 800, 0xcafe); SET(buf, 799, 799, 1);
    SET(buf, 863, 832, 0xdead0000); /* release1 address, not enabled */
    memcpy(q, buf, sizeof buf);
}

static void test_v02(void)
{
    uint8_t q[256];
    vgt_qmd d;
    vgt_error err;
    fill_v02(q, 2);
    vgt_qmd_set_bits(q, sizeof q, 287, 256, 0x4400);   /* PROGRAM_OFFSET, V02_02 only */
    CHECK_EQ_U64(vgt_qmd_detect(q, sizeof q), VGT_QMD_V02_02, "detect V02_02");
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_OK, &err, "decode V02_02");
    check_common(&d, VGT_QMD_V02_02);
    CHECK(d.program_offset == 0x4400, "program offset 0x%x", d.program_offset);
    CHECK(d.release[0].payload == 0xcafe && !d.release[0].payload64 && d.release[0].structure_size == 1,
          "V02_02 release payload 0x%llx", (unsigned long long)d.release[0].payload);
    CHECK(d.release_count == 2 && d.size == 256, "release count %u size %u", d.release_count, d.size);

    fill_v02(q, 3);
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_OK, &err, "decode V02_03");
    check_common(&d, VGT_QMD_V02_03);
    CHECK_EQ_U64(d.release[0].payload, 0xcafe, "V02_03 release payload");
}

static void test_v03(void)
{
    uint8_t q[256] = { 0 };
    vgt_qmd d;
    vgt_error err;
    SET(q, 583, 580, 3); SET(q, 579, 576, 0);
    SET(q, 415, 384, GX); SET(q, 431, 416, GY); SET(q, 463, 448, GZ);
    SET(q, 607, 592, BX); SET(q, 623, 608, BY); SET(q, 639, 624, BZ);
    SET(q, 1567, 1536, PROG & 0xffffffff); SET(q, 1584, 1568, PROG >> 32);
    SET(q, 561, 544, SMEM); SET(q, 656, 648, REGS); SET(q, 767, 763, BARRIERS);
    SET(q, 640, 640, 1); SET(q, 643, 643, 1);
    SET(q, 1055, 1024, CB0 & 0xffffffff); SET(q, 1072, 1056, CB0 >> 32); SET(q, 1087, 1075, 0x10000 >> 4);
    SET(q, 1055 + 192, 1024 + 192, CB3 & 0xffffffff); SET(q, 1072 + 192, 1056 + 192, CB3 >> 32);
    SET(q, 1087 + 192, 1075 + 192, 0x100 >> 4);
    SET(q, 823, 823, 1); SET(q, 799, 768, REL0 & 0xffffffff); SET(q, 807, 800, REL0 >> 32);
    SET(q, 829, 829, 1); SET(q, 863, 832, 0x00000002); SET(q, 895, 864, 0x00000001);
    /* release 2 lives at 1664.. */
    SET(q, 1719, 1719, 1); SET(q, 1695, 1664, 0x5000); SET(q, 1703, 1696, 0x7f); SET(q, 1759, 1728, 77);
    SET(q, 1722, 1722, 1); SET(q, 1718, 1716, 0);   /* reduction ADD */
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_OK, &err, "decode V03_00");
    check_common(&d, VGT_QMD_V03_00);
    CHECK(d.release[0].payload64 && d.release[0].payload == UINT64_C(0x100000002), "V03 release0 payload 0x%llx",
          (unsigned long long)d.release[0].payload);
    CHECK(d.release[2].enabled && d.release[2].va == UINT64_C(0x7f00005000) && d.release[2].payload == 77 &&
          d.release[2].reduction_enable, "V03 release2 0x%llx %llu", (unsigned long long)d.release[2].va,
          (unsigned long long)d.release[2].payload);
}

static void test_v04(void)
{
    uint8_t q[384] = { 0 };
    vgt_qmd d;
    vgt_error err;
    SET(q, 583, 580, 4); SET(q, 579, 576, 0);
    SET(q, 1055, 1024, GX); SET(q, 1071, 1056, GY); SET(q, 1103, 1088, GZ);
    SET(q, 1167, 1152, BX); SET(q, 1183, 1168, BY); SET(q, 1199, 1184, BZ);
    SET(q, 1247, 1216, PROG & 0xffffffff); SET(q, 1272, 1248, PROG >> 32);
    SET(q, 601, 584, SMEM); SET(q, 1208, 1200, REGS); SET(q, 1215, 1211, BARRIERS);
    SET(q, 416, 416, 1); SET(q, 428, 428, 1);   /* CONSTANT_BUFFER_VALID(0), (3) at 416 + 4i */
    SET(q, 1567, 1536, (CB0 >> 6) & 0xffffffff); SET(q, 1586, 1568, CB0 >> 38); SET(q, 1599, 1587, 0x10000 >> 4);
    SET(q, 1567 + 192, 1536 + 192, (CB3 >> 6) & 0xffffffff); SET(q, 1586 + 192, 1568 + 192, CB3 >> 38);
    SET(q, 1599 + 192, 1587 + 192, 0x100 >> 4);
    SET(q, 320, 320, 1); SET(q, 332, 332, 1); SET(q, 322, 321, 1);
    SET(q, 671, 640, REL0 & 0xffffffff); SET(q, 696, 672, REL0 >> 32);
    SET(q, 735, 704, 0x89abcdef); SET(q, 767, 736, 0x01234567);
    CHECK_EQ_U64(vgt_qmd_detect(q, sizeof q), VGT_QMD_V04_00, "detect V04_00");
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_OK, &err, "decode V04_00");
    check_common(&d, VGT_QMD_V04_00);
    CHECK(d.size == 384 && d.release_count == 3, "V04 size %u", d.size);
    CHECK(d.release[0].payload == UINT64_C(0x0123456789abcdef) && d.release[0].payload64 &&
          d.release[0].structure_size == 1, "V04 release0 payload 0x%llx", (unsigned long long)d.release[0].payload);
    /* a V04 QMD cut to 256 bytes is refused, not over-read */
    CHECK_STATUS(vgt_qmd_decode(q, 256, &d, &err), VGT_E_TRUNCATED, &err, "256-byte V04 should be truncated");
}

static void test_format(void)
{
    uint8_t q[384] = { 0 };
    vgt_qmd_set_bits(q, sizeof q, 583, 580, 4);
    vgt_qmd_set_bits(q, sizeof q, 1055, 1024, 640);
    vgt_qmd_set_bits(q, sizeof q, 428, 428, 1);   /* CONSTANT_BUFFER_VALID(3) */
    char buf[4096], small[32];
    int n = vgt_qmd_format_fields(VGT_QMD_V04_00, q, sizeof q, buf, sizeof buf);
    CHECK(n > 0 && (size_t)n == strlen(buf), "length %d vs %zu", n, strlen(buf));
    CHECK(strstr(buf, "QMD_MAJOR_VERSION=4") && strstr(buf, "GRID_WIDTH=0x280") &&
          strstr(buf, "CONSTANT_BUFFER_VALID(3)=1") && !strstr(buf, "CONSTANT_BUFFER_VALID(0)"), "format: %s", buf);
    int m = vgt_qmd_format_fields(VGT_QMD_V04_00, q, sizeof q, small, sizeof small);
    CHECK(m == n && strlen(small) == sizeof small - 1, "truncation: %d %zu", m, strlen(small));
}

static void test_errors(void)
{
    uint8_t q[384] = { 0 };
    vgt_qmd d;
    vgt_error err;
    vgt_qmd_set_bits(q, sizeof q, 583, 580, 5);
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_E_DECODE, &err, "version 5.0 must be refused");
    CHECK(strstr(err.msg, "5.0") != NULL, "message names the version: %s", err.msg);
    CHECK_STATUS(vgt_qmd_decode(q, 16, &d, &err), VGT_E_TRUNCATED, &err, "16 bytes must be truncated");
    CHECK_EQ_U64(vgt_qmd_detect(q, 0), VGT_QMD_UNKNOWN, "empty detect");
}

static void test_tables(void)
{
    for (int v = VGT_QMD_V02_02; v <= VGT_QMD_V04_00; v++) {
        uint32_t n = 0;
        const vgt_qmd_field *f = vgt_qmd_fields((vgt_qmd_version)v, &n);
        CHECK(f && n > 20, "table of %s has %u fields", vgt_qmd_version_name((vgt_qmd_version)v), n);
        for (uint32_t k = 0; k < n; k++) {
            unsigned last_hi = f[k].hi + (f[k].count - 1u) * f[k].stride;
            CHECK(f[k].hi >= f[k].lo && f[k].hi - f[k].lo < 64, "%s: range %u:%u", f[k].name, f[k].hi, f[k].lo);
            CHECK(last_hi < vgt_qmd_version_size((vgt_qmd_version)v) * 8, "%s runs to bit %u", f[k].name, last_hi);
            CHECK(f[k].meaning && f[k].meaning[0], "%s has no meaning", f[k].name);
        }
    }
}

static void test_bits(void)
{
    uint8_t b[24];
    srand(7);
    for (int i = 0; i < 20000; i++) {
        for (unsigned k = 0; k < sizeof b; k++) b[k] = (uint8_t)rand();
        unsigned lo = (unsigned)rand() % 120, width = 1 + (unsigned)rand() % 64, hi = lo + width - 1;
        uint64_t v = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
        if (width < 64) v &= (UINT64_C(1) << width) - 1;
        vgt_qmd_set_bits(b, sizeof b, hi, lo, v);
        uint64_t got = vgt_qmd_bits(b, sizeof b, hi, lo);
        if (got != v) {
            CHECK(got == v, "bits %u:%u wrote 0x%llx read 0x%llx", hi, lo, (unsigned long long)v, (unsigned long long)got);
            break;
        }
    }
    /* bits past the buffer read as zero */
    memset(b, 0xff, sizeof b);
    CHECK(vgt_qmd_bits(b, 2, 23, 8) == 0xff, "partial read 0x%llx", (unsigned long long)vgt_qmd_bits(b, 2, 23, 8));
}

/* Dependent QMDs (clcbc0qmd.h): V04_00 ENABLE(i) 368+5i, ACTION(i) 371:369+5i, PREFETCH(i) 372+5i,
 * DEPENDENT_QMD0/1_POINTER 479:448 / 511:480 (VA >> 8); V03_00 QMD0 POINTER 511:480, ENABLE 512,
 * ACTION 515:513, PREFETCH 516. Values as in corpus/vadd.vgt's CTA-less ordering QMDs. */
static void test_dependents(void)
{
    uint8_t q[384] = { 0 };
    vgt_qmd d;
    vgt_error err;
    vgt_qmd_set_bits(q, 384, 583, 580, 4);
    vgt_qmd_set_bits(q, 384, 368, 368, 1);
    vgt_qmd_set_bits(q, 384, 371, 369, 1);              /* SCHEDULE */
    vgt_qmd_set_bits(q, 384, 479, 448, 0x204e0c8);
    vgt_qmd_set_bits(q, 384, 373, 373, 1);
    vgt_qmd_set_bits(q, 384, 376, 374, 4);              /* DECREMENT_DEPENDENCE */
    vgt_qmd_set_bits(q, 384, 377, 377, 1);
    vgt_qmd_set_bits(q, 384, 511, 480, 0x1234567);
    CHECK_STATUS(vgt_qmd_decode(q, sizeof q, &d, &err), VGT_OK, &err, "decode");
    CHECK(d.dependent[0].enabled && d.dependent[0].action == 1 && !d.dependent[0].prefetch &&
          d.dependent[0].va == 0x204e0c800ull, "dep0 %u %u 0x%llx", d.dependent[0].enabled, d.dependent[0].action,
          (unsigned long long)d.dependent[0].va);
    CHECK(d.dependent[1].enabled && d.dependent[1].action == 4 && d.dependent[1].prefetch &&
          d.dependent[1].va == 0x123456700ull, "dep1 0x%llx", (unsigned long long)d.dependent[1].va);
    CHECK(!strcmp(vgt_qmd_dependent_action_name(4), "DECREMENT_DEPENDENCE") && !strcmp(vgt_qmd_dependent_action_name(2), "?"),
          "action names");
    uint8_t r[256] = { 0 };
    vgt_qmd_set_bits(r, 256, 583, 580, 3);
    vgt_qmd_set_bits(r, 256, 511, 480, 0x77);
    vgt_qmd_set_bits(r, 256, 512, 512, 1);
    vgt_qmd_set_bits(r, 256, 515, 513, 3);
    CHECK(vgt_qmd_decode(r, sizeof r, &d, &err) == VGT_OK && d.dependent[0].enabled && d.dependent[0].action == 3 &&
          d.dependent[0].va == 0x7700 && !d.dependent[1].enabled, "V03 dep0 0x%llx", (unsigned long long)d.dependent[0].va);
}

int main(void)
{
    test_dependents();
    test_bits();
    test_tables();
    test_v02();
    test_v03();
    test_v04();
    test_errors();
    test_format();
    return check_finish("test_qmd");
}
