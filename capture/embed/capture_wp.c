/* capture_wp.c: which pages of ordinary memory were written, without signals.
 *
 * userfaultfd in asynchronous write-protect mode (UFFD_FEATURE_WP_ASYNC, Linux 6.7): the kernel resolves
 * a write to a protected page by itself (no fault reaches user space, and system calls that write into
 * the page work, unlike with mprotect); the PAGEMAP_SCAN ioctl on /proc/self/pagemap then lists the
 * written pages of a range and protects them again in the same call. Constants and structures from the
 * Linux UAPI (include/uapi/linux/userfaultfd.h, include/uapi/linux/fs.h), defined here because the build
 * machine's headers predate them. Works on anonymous and shared memory, not on device mappings. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vgt/capture.h"

#define UFFD_API_VERSION 0xAAull
#define FEATURE_WP_UNPOPULATED (1ull << 13)
#define FEATURE_WP_ASYNC (1ull << 15)
#define REGISTER_MODE_WP (1ull << 1)
#define WRITEPROTECT_MODE_WP (1ull << 0)
#define IOC_UFFDIO 0xAA
#define PAGE_IS_WRITTEN (1ull << 1)
#define PM_SCAN_WP_MATCHING (1ull << 0)
#define PM_SCAN_CHECK_WPASYNC (1ull << 1)

struct wp_uffdio_api { uint64_t api, features, ioctls; };
struct wp_uffdio_range { uint64_t start, len; };
struct wp_uffdio_register { struct wp_uffdio_range range; uint64_t mode, ioctls; };
struct wp_uffdio_writeprotect { struct wp_uffdio_range range; uint64_t mode; };
struct wp_page_region { uint64_t start, end, categories; };
struct wp_pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define UFFDIO_API_REQ _IOWR(IOC_UFFDIO, 0x3F, struct wp_uffdio_api)
#define UFFDIO_REGISTER_REQ _IOWR(IOC_UFFDIO, 0x00, struct wp_uffdio_register)
#define UFFDIO_UNREGISTER_REQ _IOR(IOC_UFFDIO, 0x01, struct wp_uffdio_range)
#define UFFDIO_WRITEPROTECT_REQ _IOWR(IOC_UFFDIO, 0x06, struct wp_uffdio_writeprotect)
#define PAGEMAP_SCAN_REQ _IOWR('f', 16, struct wp_pm_scan_arg)

#define SCAN_VEC 256

struct vgt_capture_wp {
    int uffd, pagemap;
    struct wp_page_region vec[SCAN_VEC];
};

vgt_status vgt_capture_wp_open(vgt_capture_wp **out, vgt_error *err)
{
    *out = NULL;
    vgt_capture_wp *wp = calloc(1, sizeof *wp);
    if (!wp) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "write tracking: out of memory");
    wp->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    wp->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    struct wp_uffdio_api api = { .api = UFFD_API_VERSION, .features = FEATURE_WP_ASYNC | FEATURE_WP_UNPOPULATED };
    if (wp->uffd < 0 || wp->pagemap < 0 || ioctl(wp->uffd, UFFDIO_API_REQ, &api) != 0) {
        int e = errno;
        vgt_capture_wp_close(wp);
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                        "write tracking: userfaultfd asynchronous write-protect is not available (%s; Linux 6.7+)",
                        strerror(e));
    }
    *out = wp;
    return VGT_OK;
}

void vgt_capture_wp_close(vgt_capture_wp *wp)
{
    if (!wp) return;
    if (wp->uffd >= 0) close(wp->uffd);
    if (wp->pagemap >= 0) close(wp->pagemap);
    free(wp);
}

vgt_status vgt_capture_wp_add(vgt_capture_wp *wp, void *addr, uint64_t len, vgt_error *err)
{
    struct wp_uffdio_register reg = { .range = { (uint64_t)(uintptr_t)addr, len }, .mode = REGISTER_MODE_WP };
    if (ioctl(wp->uffd, UFFDIO_REGISTER_REQ, &reg) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "write tracking: cannot register %p+0x%llx: %s", addr,
                        (unsigned long long)len, strerror(errno));
    struct wp_uffdio_writeprotect w = { .range = reg.range, .mode = WRITEPROTECT_MODE_WP };
    if (ioctl(wp->uffd, UFFDIO_WRITEPROTECT_REQ, &w) != 0) {
        int e = errno;
        ioctl(wp->uffd, UFFDIO_UNREGISTER_REQ, &reg.range);
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "write tracking: cannot protect %p+0x%llx: %s", addr,
                        (unsigned long long)len, strerror(e));
    }
    return VGT_OK;
}

void vgt_capture_wp_remove(vgt_capture_wp *wp, void *addr, uint64_t len)
{
    struct wp_uffdio_range r = { (uint64_t)(uintptr_t)addr, len };
    ioctl(wp->uffd, UFFDIO_UNREGISTER_REQ, &r);
}

vgt_status vgt_capture_wp_collect(vgt_capture_wp *wp, void *addr, uint64_t len, vgt_capture_wp_fn fn, void *ctx,
                                  vgt_error *err)
{
    uint64_t start = (uint64_t)(uintptr_t)addr, end = start + len;
    while (start < end) {
        struct wp_pm_scan_arg a = { .size = sizeof a, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
                                    .start = start, .end = end, .vec = (uint64_t)(uintptr_t)wp->vec,
                                    .vec_len = SCAN_VEC, .category_mask = PAGE_IS_WRITTEN,
                                    .return_mask = PAGE_IS_WRITTEN };
        long n = ioctl(wp->pagemap, PAGEMAP_SCAN_REQ, &a);
        if (n < 0)
            return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "write tracking: PAGEMAP_SCAN of 0x%llx..0x%llx: %s",
                            (unsigned long long)start, (unsigned long long)end, strerror(errno));
        for (long i = 0; i < n; i++)
            fn(ctx, (void *)(uintptr_t)wp->vec[i].start, wp->vec[i].end - wp->vec[i].start);
        if (a.walk_end <= start) break;   /* no progress: the kernel walked nothing more */
        start = a.walk_end;
    }
    return VGT_OK;
}
