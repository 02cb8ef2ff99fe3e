/* test_capture_wp.c: write tracking of ordinary memory with userfaultfd async write-protect (capture's
 * tracker for OS-descriptor memory). Checks that exactly the written pages are reported, that a system
 * call writing into a protected page succeeds (read(2) into it: no EFAULT, unlike mprotect), that a
 * second collect after no writes reports nothing, and that a page written again is reported again.
 * Kernels without the feature (before 6.7) skip with a message: the shim falls back to hashing there. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vgt/capture.h"
#include "check.h"

#define PAGES 64
static uint8_t *base;
static int seen[PAGES];

static void on_range(void *ctx, void *addr, uint64_t len)
{
    (void)ctx;
    for (uint64_t p = ((uint8_t *)addr - base) / 4096; p < ((uint8_t *)addr - base + len) / 4096 && p < PAGES; p++) seen[p]++;
}

static void expect(const char *what, const int *pages, int n)
{
    int want[PAGES] = { 0 };
    for (int i = 0; i < n; i++) want[pages[i]] = 1;
    for (int p = 0; p < PAGES; p++)
        CHECK((seen[p] != 0) == want[p], "%s: page %d reported %d times, expected %s", what, p, seen[p],
              want[p] ? "once" : "never");
    memset(seen, 0, sizeof seen);
}

int main(void)
{
    vgt_capture_wp *wp;
    vgt_error err;
    if (vgt_capture_wp_open(&wp, &err) != VGT_OK) {
        printf("test_capture_wp: skipped: %s\n", err.msg);
        return 0;
    }
    base = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(base, 1, PAGES * 4096);   /* populated, like pinned memory */
    if (vgt_capture_wp_add(wp, base, PAGES * 4096, &err) != VGT_OK) { fprintf(stderr, "FAIL add: %s\n", err.msg); return 1; }
    if (vgt_capture_wp_collect(wp, base, PAGES * 4096, on_range, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    expect("nothing written yet", NULL, 0);
    base[3 * 4096 + 5] = 7;
    memset(base + 10 * 4096, 9, 3 * 4096);
    int fd = open("/proc/self/cmdline", O_RDONLY);
    ssize_t got = read(fd, base + 40 * 4096 + 100, 16);   /* the kernel writes into a protected page */
    close(fd);
    CHECK(got > 0, "read(2) into a tracked page returned %zd", got);
    vgt_capture_wp_collect(wp, base, PAGES * 4096, on_range, NULL, &err);
    int first[] = { 3, 10, 11, 12, 40 };
    expect("after writes", first, 5);
    vgt_capture_wp_collect(wp, base, PAGES * 4096, on_range, NULL, &err);
    expect("no writes since", NULL, 0);
    base[11 * 4096] = 1;
    vgt_capture_wp_collect(wp, base, PAGES * 4096, on_range, NULL, &err);
    int again[] = { 11 };
    expect("written again", again, 1);
    CHECK(base[3 * 4096 + 5] == 7 && base[10 * 4096] == 9, "writes lost");
    vgt_capture_wp_remove(wp, base, PAGES * 4096);
    vgt_capture_wp_close(wp);
    return check_finish("test_capture_wp");
}
