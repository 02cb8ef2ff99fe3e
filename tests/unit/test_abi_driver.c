/* test_abi_driver.c: the ABI table's driver key (facts/rm_abi.txt "driver 580 ...", vgt_nv_abi_driver_check)
 * and what the capture does with what the table does not know (capture/src/shim_abi.c): a checked
 * version passes quietly, an unchecked one of the series and one of another series are warned about
 * (a DIAGNOSTIC the capture writes into the trace), and escapes, controls, classes and UVM requests the
 * table does not name are listed in one "unknown: ..." summary with their counts, the known ones never. */
#include <string.h>

#include "check.h"
#include "vgt/nv_abi.h"
#include "vgt/nv_facts.h"

/* shim_abi.c's only outside call, captured here */
static char said[4096];
static uint32_t said_severity;
static int said_count;
void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...);
#include <stdarg.h>
#include <stdio.h>
void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...)
{
    (void)code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(said, sizeof said, fmt, ap);
    va_end(ap);
    said_severity = severity;
    said_count++;
}

#include "../../capture/src/shim_abi.c"

int main(void)
{
    char why[512];
    CHECK(VGT_NV_ABI_SERIES == 580, "the table is for the 580 series, got %u", VGT_NV_ABI_SERIES);
    CHECK(vgt_nv_abi_driver_check("580.159.04", why, sizeof why) == VGT_NV_DRIVER_CHECKED, "%s", why);
    CHECK(vgt_nv_abi_driver_check("580.142", why, sizeof why) == VGT_NV_DRIVER_CHECKED, "%s", why);
    CHECK(vgt_nv_abi_driver_check("580.159", why, sizeof why) == VGT_NV_DRIVER_UNCHECKED, "a prefix of a checked version: %s", why);
    CHECK(vgt_nv_abi_driver_check("580.65.06", why, sizeof why) == VGT_NV_DRIVER_UNCHECKED, "%s", why);
    CHECK(strstr(why, "580.65.06") && strstr(why, "not checked"), "the warning names the version: %s", why);
    CHECK(vgt_nv_abi_driver_check("575.64.05", why, sizeof why) == VGT_NV_DRIVER_OTHER_SERIES, "%s", why);
    CHECK(vgt_nv_abi_driver_check("", why, sizeof why) == VGT_NV_DRIVER_UNKNOWN, "%s", why);
    CHECK(vgt_nv_abi_driver_check(NULL, NULL, 0) == VGT_NV_DRIVER_UNKNOWN, "NULL");

    /* the capture's driver warning: none for a checked version, a warning DIAGNOSTIC otherwise */
    said_count = 0;
    shim_abi_check_driver("580.159.04");
    CHECK(said_count == 0, "a checked driver was warned about: %s", said);
    shim_abi_check_driver("590.48.01");
    CHECK(said_count == 1 && said_severity == 1 && strstr(said, "590.48.01") && strstr(said, "another series"),
          "warning for another series: '%s'", said);

    /* known by name: the table's escapes, controls, classes (and the class data's), UVM requests */
    CHECK(vgt_nv_abi_knows_escape(RM_ESC_ALLOC) && !vgt_nv_abi_knows_escape(0xd2), "escapes");
    CHECK(vgt_nv_abi_knows_control(RM_CTRL_CHAN_GET_WORK_TOKEN) && !vgt_nv_abi_knows_control(0x20800110), "controls");
    CHECK(vgt_nv_abi_knows_class(RM_CLASS_VASPACE) && vgt_nv_abi_knows_class(0xcb97) && !vgt_nv_abi_knows_class(0xbeef),
          "classes");
    CHECK(vgt_nv_abi_knows_uvm(UVM_REQ_MAP_EXTERNAL_ALLOCATION) && !vgt_nv_abi_knows_uvm(0x4a), "uvm");

    /* the summary at the end of a capture */
    said_count = 0;
    shim_abi_summary();
    CHECK(said_count == 0, "a summary with nothing unknown: '%s'", said);
    for (int i = 0; i < 3; i++) shim_abi_unknown(SHIM_UNKNOWN_ESCAPE, 0xd2);
    shim_abi_unknown(SHIM_UNKNOWN_CONTROL, 0x20800110);
    shim_abi_unknown(SHIM_UNKNOWN_CLASS, 0xbeef);
    shim_abi_unknown(SHIM_UNKNOWN_UVM, 0x4a);
    shim_abi_summary();
    CHECK(said_count == 1 && said_severity == 0, "one info summary (%d, severity %u)", said_count, said_severity);
    CHECK(!strcmp(said, "unknown: escape 0xd2 x3, control 0x20800110 x1, class 0xbeef x1, uvm 0x4a x1 (recorded raw, "
                        "not parsed)"),
          "summary '%s'", said);
    /* more distinct items than the table keeps: counted, never lost silently */
    for (uint32_t i = 0; i < 200; i++) shim_abi_unknown(SHIM_UNKNOWN_CONTROL, 0x10000000u + i);
    shim_abi_summary();
    CHECK(strstr(said, "more in") && strstr(said, "more calls (recorded raw, not parsed)"), "overflow said: '%s'", said);
    return check_finish("test_abi_driver");
}
