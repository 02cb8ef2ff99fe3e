/* nv_abi.c: which driver the RM/UVM ABI table (vgt/nv_abi.h, generated from facts/rm_abi.txt) is for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/nv_abi.h"
#include "vgt/nv_facts.h"

vgt_nv_driver_fit vgt_nv_abi_driver_check(const char *version, char *why, size_t size)
{
    vgt_nv_driver_fit fit;
    if (!version || !*version) {
        fit = VGT_NV_DRIVER_UNKNOWN;
    } else if (strtoul(version, NULL, 10) != VGT_NV_ABI_SERIES) {
        fit = VGT_NV_DRIVER_OTHER_SERIES;
    } else {
        fit = VGT_NV_DRIVER_UNCHECKED;
        static const char checked[] = VGT_NV_ABI_CHECKED;   /* space-separated versions */
        size_t n = strlen(version);
        for (const char *p = checked; (p = strstr(p, version)); p += n)
            if ((p == checked || p[-1] == ' ') && (p[n] == ' ' || !p[n])) fit = VGT_NV_DRIVER_CHECKED;
    }
    if (why && size) {
        static const char *what[] = {
            [VGT_NV_DRIVER_CHECKED] = "checked",
            [VGT_NV_DRIVER_UNCHECKED] = "not checked: the layouts of its series are used",
            [VGT_NV_DRIVER_OTHER_SERIES] = "of another series: its layouts may differ",
            [VGT_NV_DRIVER_UNKNOWN] = "unknown: the layouts may differ",
        };
        snprintf(why, size, "driver %s is %s (the RM/UVM ABI tables are for the %u series, checked against %s)",
                 version && *version ? version : "(version unknown)", what[fit], VGT_NV_ABI_SERIES, VGT_NV_ABI_CHECKED);
    }
    return fit;
}

int vgt_nv_running_driver(char *out, size_t size)
{
    char text[1024];
    FILE *f = fopen("/proc/driver/nvidia/version", "r");   /* "NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04  ..." */
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    for (char *p = strstr(text, "Module"); p && *p; p++) {
        if (*p < '0' || *p > '9' || (p[-1] != ' ' && p[-1] != '\t')) continue;
        size_t k = strspn(p, "0123456789.");
        if (!memchr(p, '.', k) || k >= size) continue;
        memcpy(out, p, k);
        out[k] = 0;
        return 0;
    }
    if (size) out[0] = 0;
    return -1;
}

static int in(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return 1;
    return 0;
}

#define IN(list, x) in(list, sizeof list / sizeof list[0], x)

int vgt_nv_abi_knows_escape(uint32_t nr) { return IN(vgt_nv_abi_known_escapes, nr); }
int vgt_nv_abi_knows_control(uint32_t cmd) { return IN(vgt_nv_abi_known_controls, cmd); }
int vgt_nv_abi_knows_uvm(uint32_t request) { return IN(vgt_nv_abi_known_uvm, request); }
int vgt_nv_abi_knows_class(uint32_t cls)
{
    return IN(vgt_nv_abi_known_classes, cls) || vgt_nv_class_family(cls) != VGT_NV_FAM_NONE;
}
