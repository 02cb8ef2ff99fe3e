/* shim_abi.c: what the ABI table (vgt/nv_abi.h, facts/rm_abi.txt) does not know, and which driver runs.
 *
 * An RM escape, an RM control command, an object class or a UVM ioctl the table does not name is recorded
 * raw, as every call is, and never parsed by guess; it is also counted here, and at the end of the
 * capture one DIAGNOSTIC (and one stderr line) lists them: "unknown: escape 0xd2 x3, control 0x20800110 x1,
 * ...". A driver version the table was not checked against gets a warning DIAGNOSTIC when the capture
 * starts; the version itself is in the trace's identity (driver_version). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"
#include "vgt/nv_facts.h"

#define SLOTS 128u   /* distinct unknown items kept; more are counted in `dropped` */

static _Atomic uint64_t keys[SLOTS];      /* kind << 32 | value, with bit 63 set: never 0 */
static _Atomic uint64_t counts[SLOTS];
static _Atomic uint64_t dropped;

static const char *const kind_name[] = {[SHIM_UNKNOWN_ESCAPE] = "escape", [SHIM_UNKNOWN_CONTROL] = "control",
                                        [SHIM_UNKNOWN_CLASS] = "class", [SHIM_UNKNOWN_UVM] = "uvm"};

void shim_abi_unknown(int kind, uint32_t value)
{
    uint64_t key = 1ull << 63 | (uint64_t)kind << 32 | value;
    for (uint32_t i = 0, h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 57) % SLOTS; i < SLOTS; i++, h = (h + 1) % SLOTS) {
        uint64_t cur = atomic_load(&keys[h]), expected = 0;
        if (cur == 0 && !atomic_compare_exchange_strong(&keys[h], &expected, key)) cur = expected;
        if (cur == 0 || cur == key) {
            atomic_fetch_add(&counts[h], 1);
            return;
        }
    }
    atomic_fetch_add(&dropped, 1);
}

void shim_abi_summary(void)
{
    enum { LISTED = 24 };   /* a line stays readable; the rest are counted */
    char line[2048];
    size_t n = (size_t)snprintf(line, sizeof line, "unknown:");
    uint32_t listed = 0;
    uint64_t more = 0, more_calls = atomic_load(&dropped);
    for (int kind = SHIM_UNKNOWN_ESCAPE; kind <= SHIM_UNKNOWN_UVM; kind++)   /* grouped by kind */
        for (uint32_t i = 0; i < SLOTS; i++) {
            uint64_t k = atomic_load(&keys[i]), c = atomic_load(&counts[i]);
            if (!k || (int)((k >> 32) & 0xff) != kind) continue;
            if (listed == LISTED) {
                more++, more_calls += c;
                continue;
            }
            n += (size_t)snprintf(line + n, sizeof line - n, "%s %s 0x%x x%llu", listed ? "," : "", kind_name[kind],
                                  (uint32_t)k, (unsigned long long)c);
            listed++;
        }
    if (!listed && !more_calls) return;
    if (more_calls)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s %llu more in %llu more calls", listed ? "," : "",
                              (unsigned long long)more, (unsigned long long)more_calls);
    snprintf(line + n, sizeof line - n, " (recorded raw, not parsed)");
    shim_problem(0, VGT_E_UNSUPPORTED, "%s", line);
}

void shim_abi_check_driver(const char *version)
{
    char why[512];
    if (vgt_nv_abi_driver_check(version, why, sizeof why) != VGT_NV_DRIVER_CHECKED)
        shim_problem(1, VGT_E_UNSUPPORTED, "%s", why);
}
