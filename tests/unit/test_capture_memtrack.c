/* test_capture_memtrack.c: the shim's memory tracking on the CPU (CI has no GPU).
 *
 * Builds capture/src/shim_memtrack.c into this test (with stubs for the rest of the shim) and drives it
 * on a memfd mapped twice: the tracked mapping plays CPU-visible GPU memory written by the program,
 * the second mapping plays the GPU writing the same memory behind the CPU's back. Checks the MEMORY
 * records read back from the trace: the whole region at first (initial); at each submission only what
 * the CPU wrote (changed): a whole page the first time, then only the changed bytes; a page written at
 * every submission becomes hot (no more faults) and is still recorded exactly; after HOT_QUIET quiet
 * submissions it is protected again; a fresh view of RM memory is not read and its changes are recorded
 * against zero, unless its first page is not zero; what the GPU wrote shows up at exit (observed). The write-protect
 * path is forced (no userfaultfd) because that is what device mappings use. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../capture/src/shim_libc.c"
#include "../../capture/src/shim_memtrack.c"
#include "../../capture/src/shim_pristine.c"
#include "../../capture/src/shim_prof.c"
#include "check.h"

shim_state g_shim;
shim_time g_shim_time;
void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...)
{
    (void)severity; (void)code;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "shim problem: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}
void shim_write_failed(const vgt_error *err) { fprintf(stderr, "FAIL write: %s\n", err->msg); exit(1); }
static int problems;
int shim_first_time(uint64_t key) { (void)key; problems++; return 1; }

#define VA 0x7700000000ull
#define NPAGES 16
static uint8_t *cpu, *gpu;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    if (!shim_mem_write_fault(si->si_addr)) { signal(SIGSEGV, SIG_DFL); }
}

/* An expected record, and one byte it must hold (at data[at], or at < 0 for none). */
typedef struct expect { uint64_t va; uint32_t len, reason; int at; uint8_t byte; } expect;
static expect want[64];
static int nwant;
static void want_rec(uint64_t off, uint32_t len, uint32_t reason, int at, uint8_t byte)
{
    want[nwant++] = (expect){ VA + off, len, reason, at, byte };
}

static void submit(void) { shim_mem_before_submit(NULL, 0); }

int main(void)
{
    shim_libc_resolve();
    int fd = memfd_create("memtrack", 0);
    if (fd < 0 || ftruncate(fd, NPAGES * 4096) != 0) { perror("memfd"); return 1; }
    cpu = mmap(NULL, NPAGES * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    gpu = mmap(NULL, NPAGES * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memset(gpu, 0x5a, NPAGES * 4096);
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigaction(SIGSEGV, &sa, NULL);

    char path[] = "/tmp/test_capture_memtrack_XXXXXX";
    close(mkstemp(path));
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    if (vgt_writer_open_path(&g_shim.w, path, &o, NULL, 0, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    g_shim.active = 1;
    g_shim.memory_mode = SHIM_MEM_CHANGED;
    g_shim.track_mode = SHIM_TRACK_WRITE;
    wp_tried = 1;   /* force the mprotect path, as for device mappings */

    shim_mem_view_added(VA, NPAGES * 4096, cpu, 1, 0x40, 0);
    want_rec(0, NPAGES * 4096, VGT_MEM_INITIAL, 2 * 4096 + 100, 0x5a);

    cpu[2 * 4096 + 100] = 0x11;            /* submission 1: pages 2 and 5, whole (no shadow yet) */
    memset(cpu + 5 * 4096, 0x22, 8);
    submit();
    want_rec(2 * 4096, 4096, VGT_MEM_CHANGED, 100, 0x11);
    want_rec(5 * 4096, 4096, VGT_MEM_CHANGED, 7, 0x22);
    uint64_t faults1 = shim_mem_write_faults();
    CHECK(faults1 == 2, "%llu faults after two pages written", (unsigned long long)faults1);

    cpu[2 * 4096 + 200] = 0x33;            /* submission 2: page 2 again -> only bytes 200..207; becomes hot */
    submit();
    want_rec(2 * 4096 + 200, 8, VGT_MEM_CHANGED, 0, 0x33);
    cpu[2 * 4096 + 300] = 0x44;            /* hot: no fault, still recorded */
    cpu[2 * 4096 + 301] = 0x45;
    submit();
    want_rec(2 * 4096 + 296, 8, VGT_MEM_CHANGED, 5, 0x45);
    CHECK(shim_mem_write_faults() == faults1 + 1, "a hot page faulted: %llu faults", (unsigned long long)shim_mem_write_faults());
    submit();                              /* nothing written: nothing recorded */

    for (unsigned i = 0; i < HOT_QUIET + 1; i++) submit();   /* quiet long enough: page 2 protected again */
    uint64_t before = shim_mem_write_faults();
    cpu[2 * 4096 + 8] = 0x55;
    CHECK_EQ_U64(shim_mem_write_faults(), before + 1, "a demoted page did not fault");
    submit();
    want_rec(2 * 4096 + 8, 8, VGT_MEM_CHANGED, 0, 0x55);

    /* Re-protection in runs: pages dirtied together are protected again with one call per run of
     * consecutive pages, except a page promoted to hot in the middle of the run. Every protected page
     * must fault at its next write, the hot one must not, and every write is recorded exactly. */
    cpu[10 * 4096 + 1] = 0xA1;             /* submission A: 10..13, whole pages */
    cpu[11 * 4096 + 2] = 0xA2;
    cpu[12 * 4096 + 3] = 0xA3;
    cpu[13 * 4096 + 4] = 0xA4;
    submit();
    want_rec(10 * 4096, 4096, VGT_MEM_CHANGED, 1, 0xA1);
    want_rec(11 * 4096, 4096, VGT_MEM_CHANGED, 2, 0xA2);
    want_rec(12 * 4096, 4096, VGT_MEM_CHANGED, 3, 0xA3);
    want_rec(13 * 4096, 4096, VGT_MEM_CHANGED, 4, 0xA4);
    cpu[12 * 4096 + 16] = 0xB2;            /* submission B: 12 again (-> hot), 14 and 15 new */
    cpu[14 * 4096 + 5] = 0xB4;
    cpu[15 * 4096 + 6] = 0xB5;
    submit();
    want_rec(12 * 4096 + 16, 8, VGT_MEM_CHANGED, 0, 0xB2);
    want_rec(14 * 4096, 4096, VGT_MEM_CHANGED, 5, 0xB4);
    want_rec(15 * 4096, 4096, VGT_MEM_CHANGED, 6, 0xB5);
    before = shim_mem_write_faults();
    static const unsigned pages[] = { 10, 11, 13, 14, 15 };
    for (unsigned i = 0; i < 5; i++) {
        uint64_t f0 = shim_mem_write_faults();
        cpu[pages[i] * 4096 + 8] = (uint8_t)(0xC0 + pages[i]);
        CHECK(shim_mem_write_faults() == f0 + 1, "page %u was not protected again after submission B", pages[i]);
    }
    cpu[12 * 4096 + 8] = 0xCC;             /* hot: writable, no fault */
    CHECK(shim_mem_write_faults() == before + 5, "%llu faults for five protected pages and a hot one",
          (unsigned long long)(shim_mem_write_faults() - before));
    submit();                              /* C: the dirty pages in order, then the hot page's scan */
    for (unsigned i = 0; i < 5; i++) want_rec(pages[i] * 4096 + 8, 8, VGT_MEM_CHANGED, 0, (uint8_t)(0xC0 + pages[i]));
    want_rec(12 * 4096 + 8, 8, VGT_MEM_CHANGED, 0, 0xCC);

    /* Read-ahead (VGT_CAPTURE_READAHEAD=2): a fault on a page whose predecessor is dirty opens the next
     * two as well. Streaming through pages 0..4 then costs three faults instead of five; the pages opened
     * but never written give no record (they hash as their initial contents) and are protected again. */
    int fd2 = memfd_create("memtrack2", 0);
    CHECK(fd2 >= 0 && ftruncate(fd2, 8 * 4096) == 0, "memfd 2");
    uint8_t *ra = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
    memset(ra, 0x3c, 8 * 4096);
    shim_mem_configure(HOT_MAX, HOT_QUIET, 2);
    shim_mem_view_added(VA + 0x200000, 8 * 4096, ra, 1, 0x41, 0);
    want_rec(0x200000, 8 * 4096, VGT_MEM_INITIAL, 5 * 4096, 0x3c);
    before = shim_mem_write_faults();
    for (unsigned pg = 0; pg < 5; pg++) ra[pg * 4096 + 64] = (uint8_t)(0xD0 + pg);
    CHECK(shim_mem_write_faults() == before + 3, "%llu faults streaming through 5 pages with read-ahead 2",
          (unsigned long long)(shim_mem_write_faults() - before));
    submit();
    for (unsigned pg = 0; pg < 5; pg++) want_rec(0x200000 + pg * 4096, 4096, VGT_MEM_CHANGED, 64, (uint8_t)(0xD0 + pg));
    before = shim_mem_write_faults();
    ra[6 * 4096] = 0xE6;                   /* opened ahead at the last submission, protected again since */
    CHECK_EQ_U64(shim_mem_write_faults(), before + 1, "a read-ahead page was left writable");
    submit();
    want_rec(0x200000 + 6 * 4096, 8, VGT_MEM_CHANGED, 0, 0xE6);   /* its shadow was taken when it was read */
    shim_mem_configure(HOT_MAX, HOT_QUIET, 0);

    /* Fresh RM memory (zeroed): no initial read, its changes are recorded against zero; a view said to be
     * fresh whose first page is not zero is read whole after all, and that is reported. */
    int fd3 = memfd_create("memtrack3", 0);
    CHECK(fd3 >= 0 && ftruncate(fd3, 6 * 4096) == 0, "memfd 3");
    uint8_t *z = mmap(NULL, 6 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd3, 0);
    shim_mem_view_added(VA + 0x300000, 4 * 4096, z, 1, 0x42, 1);
    CHECK_EQ_U64(atomic_load(&g_shim_time.zero_initial_bytes), 4 * 4096, "fresh view not started from zero");
    z[3 * 4096 + 1000] = 0x77;
    submit();
    want_rec(0x300000 + 3 * 4096 + 1000, 8, VGT_MEM_CHANGED, 0, 0x77);
    /* The other order: the CPU mapping first, kept pristine (write-protected) until the GPU mapping makes
     * the view. Untouched, the view skips the read and then tracks writes; written in between, the write
     * goes through and the view is read whole. */
    int fd4 = memfd_create("memtrack4", 0);
    CHECK(fd4 >= 0 && ftruncate(fd4, 4 * 4096) == 0, "memfd 4");
    uint8_t *pr = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd4, 0);
    shim_pristine_add((uintptr_t)pr, 2 * 4096);
    shim_pristine_add((uintptr_t)pr + 2 * 4096, 2 * 4096);
    pr[2 * 4096 + 9] = 0x31;               /* breaks the second one's premise */
    CHECK(pr[2 * 4096 + 9] == 0x31, "a write to a pristine mapping was lost");
    uint64_t zb = atomic_load(&g_shim_time.zero_initial_bytes);
    shim_mem_view_added(VA + 0x500000, 2 * 4096, pr, 1, 0x44, 0);
    CHECK_EQ_U64(atomic_load(&g_shim_time.zero_initial_bytes), zb + 2 * 4096, "an untouched pristine view was read");
    shim_mem_view_added(VA + 0x600000, 2 * 4096, pr + 2 * 4096, 1, 0x45, 0);
    want_rec(0x600000, 2 * 4096, VGT_MEM_INITIAL, 9, 0x31);
    CHECK_EQ_U64(atomic_load(&g_shim_time.zero_initial_bytes), zb + 2 * 4096, "a written pristine view was not read");
    uint64_t fp = shim_mem_write_faults();
    pr[4096 + 3] = 0x32;                   /* the claimed view tracks writes from zero */
    CHECK_EQ_U64(shim_mem_write_faults(), fp + 1, "a claimed view's page did not fault");
    submit();
    want_rec(0x500000 + 4096, 8, VGT_MEM_CHANGED, 3, 0x32);

    z[4 * 4096 + 5] = 0x99;                /* the second view's first page is not zero */
    shim_mem_view_added(VA + 0x400000, 2 * 4096, z + 4 * 4096, 1, 0x43, 1);
    want_rec(0x400000, 2 * 4096, VGT_MEM_INITIAL, 5, 0x99);
    CHECK(problems == 1, "a broken zero premise reported %d times", problems);

    /* Channel infrastructure: ring pages are not tracked (no fault, no record); a USERD window is left
     * out of the changed records while the rest of its page is still recorded. */
    int fd5 = memfd_create("memtrack5", 0);
    CHECK(fd5 >= 0 && ftruncate(fd5, 4 * 4096) == 0, "memfd 5");
    uint8_t *inf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd5, 0);
    shim_mem_view_added(VA + 0x700000, 4 * 4096, inf, 1, 0x46, 0);
    want_rec(0x700000, 4 * 4096, VGT_MEM_INITIAL, -1, 0);
    shim_mem_channel_infra(VA + 0x700000, 0x2000, (uintptr_t)inf + 2 * 4096 + 0x40, 0x200);
    uint64_t fi = shim_mem_write_faults();
    inf[100] = 1;
    inf[4096 + 8] = 2;
    CHECK_EQ_U64(shim_mem_write_faults(), fi, "a ring page faulted");
    inf[2 * 4096 + 0x48] = 3;              /* USERD (GP_PUT): not recorded */
    inf[2 * 4096 + 0x800] = 4;             /* the same page outside USERD: recorded */
    submit();
    want_rec(0x700000 + 2 * 4096 + 0x800, 8, VGT_MEM_CHANGED, 0, 4);
    fi = shim_mem_write_faults();
    for (int i = 0; i < 3 * (int)HOT_QUIET; i++) {   /* GP_PUT at every submission: hot for good, unrecorded */
        inf[2 * 4096 + 0x48] = (uint8_t)(0x10 + i);
        submit();
    }
    CHECK(shim_mem_write_faults() - fi <= 1, "a page written only in USERD faulted %llu times in %u submissions",
          (unsigned long long)(shim_mem_write_faults() - fi), 3 * HOT_QUIET);

    /* The submission's own push-buffer segments are left out of the changed records (its GPFIFO_SUBMIT
     * record carries them): a page changed only inside a segment gives no record, and one changed on both
     * sides of a segment gives the bytes outside it. */
    int fd6 = memfd_create("memtrack6", 0);
    CHECK(fd6 >= 0 && ftruncate(fd6, 2 * 4096) == 0, "memfd 6");
    uint8_t *pbm = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd6, 0);
    shim_mem_view_added(VA + 0x800000, 2 * 4096, pbm, 1, 0x47, 0);
    want_rec(0x800000, 2 * 4096, VGT_MEM_INITIAL, -1, 0);
    memset(pbm + 0x100, 0x61, 0x200);      /* a segment's bytes only */
    vgt_segment seg1 = { .gpu_va = VA + 0x800100, .length = 0x200 };
    shim_mem_before_submit(&seg1, 1);
    memset(pbm + 4096 + 0x100, 0x62, 0x200);   /* page 1: the segment and bytes on both sides */
    pbm[4096 + 0x10] = 0x63;
    pbm[4096 + 0x400] = 0x64;
    vgt_segment seg2 = { .gpu_va = VA + 0x801100, .length = 0x200 };
    shim_mem_before_submit(&seg2, 1);
    want_rec(0x801000 + 0x10, 0x3f8, VGT_MEM_CHANGED, 0, 0x63);   /* 0x10..0x408: one range around it */

    /* Ordinary memory through userfaultfd (the OS-descriptor path), where the kernel supports it: a
     * system call writing into the tracked page must work, and the page is recorded. */
    uint8_t *anon = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(anon, 0, 4 * 4096);
    wp_tried = 0;
    shim_mem_view_added(VA + 0x100000, 4 * 4096, anon, 1, 0x71, 0);
    want_rec(0x100000, 4 * 4096, VGT_MEM_INITIAL, -1, 0);
    int uffd_on = wp != NULL;
    if (uffd_on) {
        int p[2];
        CHECK(pipe(p) == 0 && write(p[1], "xyz", 3) == 3, "pipe");
        CHECK_EQ_U64(read(p[0], anon + 4096 + 40, 3), 3, "read(2) into a tracked page failed");
        close(p[0]); close(p[1]);
        submit();
        want_rec(0x100000 + 4096 + 40, 8, VGT_MEM_CHANGED, 1, 'y');   /* a zero page: diffed against zero */
    } else {
        printf("test_capture_memtrack: userfaultfd write-protect unavailable here, that part skipped\n");
    }

    gpu[9 * 4096 + 17] = 0x66;             /* the "GPU" writes: seen at exit only, three runs of one piece */
    gpu[11 * 4096 + 18] = 0x67;
    gpu[14 * 4096 + 19] = 0x68;
    uint64_t live_pages = 0, read_before = shim_mem_pages_read();
    for (int i = 0; i < atomic_load(&region_hw); i++)
        if (atomic_load(&regions[i].cpu)) live_pages += regions[i].npages;
    shim_mem_at_exit();
    want_rec(9 * 4096, 4096, VGT_MEM_OBSERVED, 17, 0x66);
    want_rec(11 * 4096, 4096, VGT_MEM_OBSERVED, 18, 0x67);
    want_rec(14 * 4096, 4096, VGT_MEM_OBSERVED, 19, 0x68);
    /* The exit pass reads each page of each live view once (over the BAR on a GPU), however many runs
     * of changed pages a piece holds. */
    CHECK_EQ_U64(shim_mem_pages_read() - read_before, live_pages, "pages read by the exit pass");
    vgt_writer_close(g_shim.w, &err);

    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    vgt_record rec;
    int got = 0;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        vgt_rec_memory m;
        if (rec.type != VGT_REC_MEMORY || vgt_decode_memory(&rec, &m, &err) != VGT_OK) continue;
        if (got < nwant)
            CHECK(m.gpu_va == want[got].va && m.length == want[got].len && m.reason == want[got].reason,
                  "record %d: va +0x%llx len %u reason %u, expected +0x%llx len %u reason %u", got,
                  (unsigned long long)(m.gpu_va - VA), m.length, m.reason, (unsigned long long)(want[got].va - VA),
                  want[got].len, want[got].reason);
        if (got >= nwant)
            fprintf(stderr, "unexpected record %d: va +0x%llx len %u reason %u\n", got,
                    (unsigned long long)(m.gpu_va - VA), m.length, m.reason);
        if (got < nwant && want[got].at >= 0 && (uint32_t)want[got].at < m.length)
            CHECK(m.data[want[got].at] == want[got].byte, "record %d: byte %d is 0x%02x, expected 0x%02x", got,
                  want[got].at, m.data[want[got].at], want[got].byte);
        got++;
    }
    CHECK(got == nwant, "%d MEMORY records, expected %d", got, nwant);
    vgt_reader_close(r);
    unlink(path);
    printf("test_capture_memtrack: %d records\n", got);
    return check_finish("test_capture_memtrack");
}
