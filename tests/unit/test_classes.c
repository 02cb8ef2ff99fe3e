/* test_classes.c: the generated class tables: lookups, arrays, field extraction and formatting.
 *
 * Expected values are facts of NVIDIA's class headers (open-gpu-doc classes/..., and
 * open-gpu-kernel-modules clc86f.h): e.g. SEM_EXECUTE 0x006c with OPERATION 2:0 (RELEASE 1),
 * RELEASE_WFI 20:20, PAYLOAD_SIZE 24:24 (64BIT 1); HOPPER_A SET_COLOR_TARGET_FORMAT(j) 0x0810+64j with
 * RF32_GF32_BF32_AF32 = 0xc0; HOPPER_DMA_COPY_A LAUNCH_DMA 0x0300 with DATA_TRANSFER_TYPE 1:0
 * (NON_PIPELINED 2), SRC/DST_MEMORY_LAYOUT 7:7/8:8 (PITCH 1).
 */
#include <stdio.h>
#include <string.h>

#include "vgt/classes.h"
#include "check.h"

static void expect_format(uint32_t cls, uint32_t mthd, uint32_t data, const char *want)
{
    char buf[1024];
    size_t n = vgt_method_format(cls, mthd, data, buf, sizeof buf);
    CHECK(!strcmp(buf, want) && n == strlen(want), "%04x 0x%04x = 0x%x:\n   got  \"%s\"\n   want \"%s\"", cls, mthd,
          data, buf, want);
}

static void test_required_classes(void)
{
    static const struct { uint32_t id; const char *name; vgt_class_kind kind; } want[] = {
        {0xC46F, "TURING_CHANNEL_GPFIFO_A", VGT_CLASS_HOST}, {0xC56F, "AMPERE_CHANNEL_GPFIFO_A", VGT_CLASS_HOST},
        {0xC86F, "HOPPER_CHANNEL_GPFIFO_A", VGT_CLASS_HOST}, {0xC597, "TURING_A", VGT_CLASS_3D},
        {0xC797, "AMPERE_B", VGT_CLASS_3D}, {0xCB97, "HOPPER_A", VGT_CLASS_3D},
        {0xC5C0, "TURING_COMPUTE_A", VGT_CLASS_COMPUTE}, {0xC6C0, "AMPERE_COMPUTE_A", VGT_CLASS_COMPUTE},
        {0xC7C0, "AMPERE_COMPUTE_B", VGT_CLASS_COMPUTE}, {0xCBC0, "HOPPER_COMPUTE_A", VGT_CLASS_COMPUTE},
        {0xC5B5, "TURING_DMA_COPY_A", VGT_CLASS_COPY}, {0xC6B5, "AMPERE_DMA_COPY_A", VGT_CLASS_COPY},
        {0xC7B5, "AMPERE_DMA_COPY_B", VGT_CLASS_COPY}, {0xC8B5, "HOPPER_DMA_COPY_A", VGT_CLASS_COPY},
        {0xA140, "KEPLER_INLINE_TO_MEMORY_B", VGT_CLASS_I2M}, {0x902D, "FERMI_TWOD_A", VGT_CLASS_2D},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const vgt_class *c = vgt_class_find(want[i].id);
        CHECK(c && !strcmp(c->name, want[i].name) && c->kind == want[i].kind && c->method_count > 0 && c->source[0],
              "class %04x: %s", want[i].id, c ? c->name : "missing");
        CHECK(vgt_class_find_name(want[i].name) == c, "by name %s", want[i].name);
    }
    CHECK(vgt_class_find(0x1234) == NULL, "unknown class");
    CHECK(vgt_class_find_name("cb97") == vgt_class_find(0xCB97) && vgt_class_find_name("0xC86F") == vgt_class_find(0xC86F),
          "class by hex id");
    char buf[32];
    CHECK(!strcmp(vgt_class_name(0x1234, buf, sizeof buf), "CLASS_1234"), "unknown class name");
    CHECK(!strcmp(vgt_class_kind_name(VGT_CLASS_COPY), "copy"), "kind name");
}

/* Every element of every array resolves to its method, and scalars to themselves. */
static void test_index_consistency(void)
{
    for (uint32_t k = 0; k < vgt_class_count(); k++) {
        const vgt_class *c = vgt_class_at(k);
        for (uint32_t i = 1; i < c->method_count; i++)
            CHECK(c->methods[i - 1].offset <= c->methods[i].offset, "%s methods sorted", c->name);
        for (uint32_t i = 0; i < c->method_count; i++) {
            const vgt_method_info *m = &c->methods[i];
            for (uint32_t e = 0; e < m->count; e++) {
                uint32_t addr = m->offset + e * m->stride, index = 99;
                const vgt_method_info *got = vgt_class_method(c, addr, &index);
                CHECK(got != NULL, "%s %s(%u) at 0x%04x not found", c->name, m->name, e, addr);
                if (got == m) CHECK(index == e, "%s %s index %u, want %u", c->name, m->name, index, e);
                else if (got) CHECK(!got->stride || (addr - got->offset) % got->stride == 0, "%s shadowed element", c->name);
            }
            for (uint16_t f = 0; f < m->field_count; f++)
                CHECK(m->fields[f].hi >= m->fields[f].lo && m->fields[f].hi < 32, "%s %s field range", c->name, m->name);
        }
    }
}

static void test_lookups(void)
{
    const vgt_class *hopper = vgt_class_find(0xCB97);
    uint32_t index, mthd = 0;
    const vgt_method_info *m = vgt_class_method(hopper, 0x0810 + 3 * 64, &index);
    CHECK(m && !strcmp(m->name, "SET_COLOR_TARGET_FORMAT") && index == 3 && m->count == 8 && m->stride == 64,
          "SET_COLOR_TARGET_FORMAT(3): %s index %u", m ? m->name : "none", index);
    m = vgt_class_method_by_name(hopper, "SET_COLOR_TARGET_FORMAT(3)", &mthd);
    CHECK(m && mthd == 0x08d0, "by name with index: 0x%x", mthd);
    CHECK(vgt_class_method_by_name(hopper, "set_color_target_format", &mthd) && mthd == 0x0810, "by name, any case");
    CHECK(vgt_class_method_by_name(hopper, "SET_COLOR_TARGET_FORMAT(8)", &mthd) == NULL, "index out of range");
    CHECK(vgt_class_method_by_name(hopper, "SET_COLOR_TARGET", &mthd) == NULL, "a prefix is not a name");
    m = vgt_class_method(hopper, 0x3800 + 8 * 255 + 4, &index);
    CHECK(m && !strcmp(m->name, "CALL_MME_DATA") && index == 255, "CALL_MME_DATA(255)");
    m = vgt_class_method(vgt_class_find(0xCBC0), 0x0320 + 4 * 95, &index);
    CHECK(m && !strcmp(m->name, "LOAD_INLINE_QMD_DATA") && index == 95 && m->count == 96, "Hopper inline QMD is 96 dwords");
    m = vgt_class_method(vgt_class_find(0xC6C0), 0x0320 + 4 * 63, &index);
    CHECK(m && m->count == 64 && index == 63, "Ampere inline QMD is 64 dwords");
    m = vgt_class_method(vgt_class_find(0xCBC0), 0x02b4, &index);
    CHECK(m && !strcmp(m->name, "SEND_PCAS_A") && index == 0, "SEND_PCAS_A");
    CHECK(vgt_class_method(hopper, 0x4000, &index) == NULL && vgt_class_method(NULL, 0, &index) == NULL, "out of space");
    /* field extraction */
    m = vgt_class_method(vgt_class_find(0xC86F), 0x006c, NULL);
    CHECK(m && m->field_count >= 3 && !strcmp(m->fields[0].name, "OPERATION") && m->fields[0].hi == 2 && m->fields[0].lo == 0,
          "SEM_EXECUTE OPERATION 2:0");
    if (m) CHECK(vgt_class_field_get(&m->fields[0], 0x01100001) == 1 && !strcmp(vgt_class_enum_name(&m->fields[0], 1), "RELEASE"),
                 "OPERATION of 0x01100001 is RELEASE");
}

static void test_format(void)
{
    /* Host semaphore release, 64-bit payload, WFI (the Hopper host header's own values). */
    expect_format(0xC86F, 0x006c, 0x01100001,
                  "SEM_EXECUTE = OPERATION=RELEASE, ACQUIRE_SWITCH_TSG=DIS, RELEASE_WFI=EN, PAYLOAD_SIZE=64BIT, "
                  "RELEASE_TIMESTAMP=DIS, REDUCTION=IMIN, REDUCTION_FORMAT=SIGNED");
    expect_format(0xC86F, 0x0060, 0x00abcdef, "SEM_ADDR_HI = OFFSET=0xabcdef");   /* 24:0 on Hopper */
    expect_format(0xC56F, 0x0060, 0x00abcdef, "SEM_ADDR_HI = OFFSET=0xef");       /* 7:0 on Ampere */
    expect_format(0xCB97, 0x08d0, 0xc0, "SET_COLOR_TARGET_FORMAT(3) = V=RF32_GF32_BF32_AF32");
    expect_format(0xCB97, 0x0a20, 0x3f800000, "SET_VIEWPORT_SCALE_X(1) = V=1");   /* a float method */
    expect_format(0xCB97, 0x0a20, 0xc0490fdb, "SET_VIEWPORT_SCALE_X(1) = V=-3.14159274");
    char buf[1024];
    vgt_method_format(0xC8B5, 0x0300, 0x182, buf, sizeof buf);
    CHECK(!strncmp(buf, "LAUNCH_DMA = DATA_TRANSFER_TYPE=NON_PIPELINED, FLUSH_ENABLE=FALSE, ", 67) &&
              strstr(buf, "SRC_MEMORY_LAYOUT=PITCH") && strstr(buf, "DST_MEMORY_LAYOUT=PITCH") &&
              strstr(buf, "MULTI_LINE_ENABLE=FALSE"),
          "C8B5 LAUNCH_DMA 0x182: %s", buf);
    expect_format(0x1234, 0x0100, 0x12, "0x0100 = 0x00000012");   /* unknown class */
    vgt_method_name(0xCB97, 0x3804 + 8 * 7, buf, sizeof buf);
    CHECK(!strcmp(buf, "CALL_MME_DATA(7)"), "name: %s", buf);
    vgt_method_format_fields(0xCBC0, 0x02b4, 0x00123456, buf, sizeof buf);
    CHECK(!strcmp(buf, "QMD_ADDRESS_SHIFTED8=0x123456"), "SEND_PCAS_A fields: %s", buf);
    /* JSON */
    vgt_method_format_json(0xCB97, 0x08d0, 0xc0, buf, sizeof buf);
    CHECK(!strcmp(buf, "{\"method\":\"SET_COLOR_TARGET_FORMAT\",\"index\":3,\"fields\":{\"V\":\"RF32_GF32_BF32_AF32\"}}"),
          "json: %s", buf);
    vgt_method_format_json(0xC86F, 0x0060, 0x12, buf, sizeof buf);
    CHECK(!strcmp(buf, "{\"method\":\"SEM_ADDR_HI\",\"fields\":{\"OFFSET\":18}}"), "json numbers: %s", buf);
    vgt_method_format_json(0x1234, 0x0100, 0x12, buf, sizeof buf);
    CHECK(!strcmp(buf, "{\"method\":null,\"fields\":{}}"), "json unknown: %s", buf);
    /* truncation: full length returned, output NUL-terminated */
    char small[8];
    size_t n = vgt_method_format(0xCB97, 0x08d0, 0xc0, small, sizeof small);
    CHECK(n == strlen("SET_COLOR_TARGET_FORMAT(3) = V=RF32_GF32_BF32_AF32") && !strcmp(small, "SET_COL"), "truncated: %zu %s",
          n, small);
    CHECK(vgt_method_format(0xCB97, 0x08d0, 0xc0, NULL, 0) == n, "NULL buffer measures");
}

int main(void)
{
    test_required_classes();
    test_index_consistency();
    test_lookups();
    test_format();
    printf("test_classes: %u classes\n", vgt_class_count());
    return check_finish("test_classes");
}
