/* bench_memtrack.c: the shim's write tracking on the CPU, on a synthetic many_launches pattern (built and
 * run by bench/capture/cpu.sh; not in the CMake bench glob, which would lack the capture headers).
 *
 *   bench_memtrack LAUNCHES
 *
 * Ordinary shared memory plays CPU-visible GPU memory, tracked by write-protection as device mappings
 * are (userfaultfd off). Per "launch", the writes a CUDA launch makes (capture/README.md: ~3.5 dirty
 * pages per launch): one GPFIFO entry in a 64 KiB ring, 1.5 KiB appended to a 4 MiB push buffer, 512
 * bytes of parameters in a rotating 256 KiB area, and a 16-byte semaphore/tracking word in one page; then
 * the submission (shim_mem_before_submit). One line per variant: ns per launch, overhead per launch
 * against the same writes untracked (measured in the same run), faults, pages read, records and bytes
 * per launch. On the H200 the reads are from uncached or write-combined memory and cost more: combine
 * the counts with the device's costs (faults x SIGSEGV round trip + pages read x 4 KiB uncached read). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../../capture/src/shim_libc.c"
#include "../../../capture/src/shim_memtrack.c"

shim_state g_shim;
shim_time g_shim_time;
void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...) { (void)severity; (void)code; (void)fmt; }
void shim_write_failed(const vgt_error *err) { fprintf(stderr, "bench_memtrack: write: %s\n", err->msg); exit(1); }

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (!shim_mem_write_fault(si->si_addr)) { signal(sig, SIG_DFL); }
}

enum { RING = 64 << 10, PUSH = 4 << 20, PARAMS = 256 << 10, SEM = 4096 };
typedef struct area { uint8_t *p; uint32_t len; uint64_t va; } area;
static area areas[4];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint8_t *shared(uint32_t len)
{
    int fd = memfd_create("bench", 0);
    if (fd < 0 || ftruncate(fd, len) != 0) { perror("memfd"); exit(2); }
    uint8_t *p = g_libc.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(2); }
    close(fd);
    return p;
}

/* The writes of launch i. */
static void launch(uint32_t i)
{
    uint64_t entry = 0x100000000ull + i;
    memcpy(areas[0].p + (i * 8u) % RING, &entry, 8);
    uint32_t push_off = (uint32_t)(((uint64_t)i * 1536u) % (PUSH - 1536));
    memset(areas[1].p + push_off, (int)(i & 0xff), 1536);
    memset(areas[2].p + (i * 512u) % PARAMS, (int)((i >> 3) & 0xff), 512);
    memcpy(areas[3].p + 64, &i, 4);
}

typedef struct result { double ns; uint64_t faults, reads, records, bytes; } result;

static result run(uint32_t n, int tracked)
{
    char path[] = "/tmp/bench_memtrack_XXXXXX";
    close(mkstemp(path));
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = VGT_CODEC_STORED;            /* as the shim writes: vgt record compresses elsewhere */
    if (vgt_writer_open_path(&g_shim.w, path, &o, NULL, 0, &err) != VGT_OK) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    g_shim.active = 1;
    g_shim.memory_mode = tracked ? SHIM_MEM_CHANGED : SHIM_MEM_NONE;
    g_shim.track_mode = SHIM_TRACK_WRITE;
    wp_tried = 1;                          /* device mappings: write-protection, not userfaultfd */
    static const uint32_t lens[4] = { RING, PUSH, PARAMS, SEM };
    for (int k = 0; k < 4; k++) {
        areas[k] = (area){ shared(lens[k]), lens[k], 0x7000000000ull + ((uint64_t)k << 28) };
        if (tracked) shim_mem_view_added(areas[k].va, lens[k], areas[k].p, 1, 0x100u + (uint32_t)k);
    }
    uint64_t f0 = shim_mem_write_faults(), r0 = shim_mem_pages_read();
    uint64_t rec0 = atomic_load(&g_shim_time.memory_records), b0 = atomic_load(&g_shim_time.memory_bytes);
    double t0 = now_ns();
    for (uint32_t i = 0; i < n; i++) {
        launch(i);
        shim_mem_before_submit();
    }
    double t1 = now_ns();
    result res = { (t1 - t0) / n, shim_mem_write_faults() - f0, shim_mem_pages_read() - r0,
                   atomic_load(&g_shim_time.memory_records) - rec0, atomic_load(&g_shim_time.memory_bytes) - b0 };
    for (int k = 0; k < 4; k++) {
        if (tracked) shim_mem_view_removing(areas[k].va, lens[k]);
        g_libc.munmap(areas[k].p, lens[k]);
    }
    vgt_writer_close(g_shim.w, &err);
    unlink(path);
    return res;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 10000;
    shim_libc_resolve();
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigaction(SIGSEGV, &sa, NULL);
    static const struct { const char *name; uint32_t hot, quiet, ahead; } variants[] = {
        { "default", 32, 4, 0 }, { "ahead2", 32, 4, 2 }, { "ahead4", 32, 4, 4 }, { "nohot", 0, 4, 0 },
        { "quiet1", 32, 1, 0 },
    };
    run(n / 10 + 1, 1);                    /* warm up page tables and the allocator */
    result base = run(n, 0);
    printf("untracked: %.0f ns/launch (%u launches)\n", base.ns, n);
    for (unsigned v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        shim_mem_configure(variants[v].hot, variants[v].quiet, variants[v].ahead);
        result r = run(n, 1);
        base = run(n, 0);                  /* the baseline again, next to each variant */
        printf("%-8s %7.0f ns/launch, overhead %6.0f ns/launch (x%.2f), faults %.2f, pages read %.2f, records %.2f, "
               "bytes %.0f per launch\n", variants[v].name, r.ns, r.ns - base.ns, r.ns / base.ns, (double)r.faults / n,
               (double)r.reads / n, (double)r.records / n, (double)r.bytes / n);
    }
    return 0;
}
