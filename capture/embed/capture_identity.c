/* capture_identity.c: the identity block of a trace made by capture: host, kernel, GPU, driver, command.
 * Sources: uname(2); /proc/driver/nvidia/version ("NVRM version: ... <version> ..."); the per-GPU
 * /proc/driver/nvidia/gpus/<bus>/information ("Model:", "Bus Location:"); sysfs PCI ids; and the
 * NV_ESC_CHECK_VERSION_STR query (nr 0xD2, {u32 cmd; u32 reply; char versionString[64]}, cmd '2' =
 * QUERY: the kernel module answers with its version without checking; open-gpu-kernel-modules
 * kernel-open/common/inc/nv-ioctl.h). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "vgt/capture.h"

/* PCI device id ranges -> chip (NVIDIA's device id lists per chip; only what we have checked). */
typedef struct chip_row { uint32_t first, last; const char *chip, *arch; } chip_row;
static const chip_row CHIPS[] = {
    { 0x2321, 0x2324, "GH100", "hopper" },   /* H100 variants */
    { 0x2330, 0x233f, "GH100", "hopper" },   /* H100 SXM/PCIe, H200 (0x2335), H20 */
    { 0x2342, 0x2348, "GH100", "hopper" },   /* GH200 */
};

void vgt_capture_chip_of_pci(uint32_t device_id, const char **chip, const char **architecture)
{
    *chip = *architecture = NULL;
    for (unsigned i = 0; i < sizeof CHIPS / sizeof CHIPS[0]; i++)
        if (device_id >= CHIPS[i].first && device_id <= CHIPS[i].last) {
            *chip = CHIPS[i].chip;
            *architecture = CHIPS[i].arch;
        }
}

void vgt_capture_identity_set(vgt_capture_identity *id, const char *key, const char *value)
{
    if (!key || !value) return;
    size_t kl = strlen(key), vl = strlen(value);
    if (vl > VGT_MAX_IDENTITY_VALUE) vl = VGT_MAX_IDENTITY_VALUE;
    if (id->used + kl + vl + 2 > sizeof id->text) return;
    char *k = id->text + id->used;
    memcpy(k, key, kl + 1);
    char *v = k + kl + 1;
    memcpy(v, value, vl);
    v[vl] = 0;
    id->used += (uint32_t)(kl + vl + 2);
    for (uint32_t i = 0; i < id->count; i++)
        if (strcmp(id->entries[i].key, key) == 0) { id->entries[i].value = v; return; }
    if (id->count < VGT_CAPTURE_IDENTITY_MAX) id->entries[id->count++] = (vgt_identity){ k, v };
}

static int read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
    return 0;
}

/* "Key:   value\n" in text -> value (trimmed) into out. */
static int field(const char *text, const char *key, char *out, size_t n)
{
    const char *p = strstr(text, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ' || *p == '\t' || *p == ':') p++;
    size_t i = 0;
    while (p[i] && p[i] != '\n' && i + 1 < n) { out[i] = p[i]; i++; }
    while (i > 0 && (out[i - 1] == ' ' || out[i - 1] == '\t')) i--;
    out[i] = 0;
    return 0;
}

/* The first word of the form N.N[.N] in text. */
static int version_word(const char *text, char *out, size_t n)
{
    for (const char *p = text; *p; p++) {
        if (!(*p >= '0' && *p <= '9') || (p > text && p[-1] != ' ' && p[-1] != '\t')) continue;
        size_t i = 0;
        int dots = 0;
        while (((p[i] >= '0' && p[i] <= '9') || p[i] == '.') && i + 1 < n) { dots += p[i] == '.'; out[i] = p[i]; i++; }
        out[i] = 0;
        if (dots >= 1 && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == 0)) return 0;
    }
    return -1;
}

static void gpu_identity(vgt_capture_identity *id)
{
    char text[4096], value[256], path[512];
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
        if (read_text(path, text, sizeof text) != 0) continue;
        if (field(text, "Model", value, sizeof value) == 0) vgt_capture_identity_set(id, "gpu_name", value);
        char bus[64] = "";
        if (field(text, "Bus Location", bus, sizeof bus) == 0) vgt_capture_identity_set(id, "pci_bus", bus);
        char vend[32] = "", dev[32] = "";
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", bus);
        read_text(path, vend, sizeof vend);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device", bus);
        read_text(path, dev, sizeof dev);
        unsigned v = 0, dv = 0;
        if (sscanf(vend, "%x", &v) == 1 && sscanf(dev, "%x", &dv) == 1) {
            snprintf(value, sizeof value, "%04x:%04x", v, dv);
            vgt_capture_identity_set(id, "pci_id", value);
            const char *chip, *arch;
            vgt_capture_chip_of_pci(dv, &chip, &arch);
            vgt_capture_identity_set(id, "chip", chip);
            vgt_capture_identity_set(id, "architecture", arch);
        }
        break;   /* the first GPU: the capture names one device */
    }
    if (d) closedir(d);
}

static void rm_api_version(vgt_capture_identity *id)
{
    int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    struct { uint32_t cmd, reply; char version[64]; } q = { .cmd = '2' };
    unsigned long req = (3ul << 30) | ((unsigned long)sizeof q << 16) | (0x46ul << 8) | 0xD2;   /* _IOWR('F', 0xD2, 0x48) */
    if (ioctl(fd, req, &q) == 0 && q.reply == 1) {
        q.version[sizeof q.version - 1] = 0;
        vgt_capture_identity_set(id, "rm_api_version", q.version);
    }
    close(fd);
}

void vgt_capture_identity_collect(vgt_capture_identity *id, const char *producer, const char *capture_mode,
                                  const char *memory_mode, int crash_safe, int argc, char *const *argv)
{
    memset(id, 0, sizeof *id);
    char buf[8192];
    vgt_capture_identity_set(id, "producer", producer);
    vgt_capture_identity_set(id, "producer_version", VGT_VERSION_STRING);
    struct utsname u;
    if (uname(&u) == 0) {
        vgt_capture_identity_set(id, "host", u.nodename);
        snprintf(buf, sizeof buf, "%s %s", u.sysname, u.release);
        vgt_capture_identity_set(id, "os", buf);
        snprintf(buf, sizeof buf, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
        vgt_capture_identity_set(id, "kernel", buf);
    }
    char ver[64];
    if (read_text("/proc/driver/nvidia/version", buf, sizeof buf) == 0 && version_word(buf, ver, sizeof ver) == 0)
        vgt_capture_identity_set(id, "driver_version", ver);
    gpu_identity(id);
    rm_api_version(id);
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && argv[i]; i++) {
        int w = snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof buf - n) break;
        n += (size_t)w;
    }
    vgt_capture_identity_set(id, "command_line", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)vgt_wall_ns());
    vgt_capture_identity_set(id, "start_time_wall_ns", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)vgt_now_ns());
    vgt_capture_identity_set(id, "start_time_monotonic_ns", buf);
    vgt_capture_identity_set(id, "capture_mode", capture_mode);
    vgt_capture_identity_set(id, "memory_mode", memory_mode);
    vgt_capture_identity_set(id, "crash_safe", crash_safe ? "1" : "0");
}
