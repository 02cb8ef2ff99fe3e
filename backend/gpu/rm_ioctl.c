/* rm_ioctl.c: the ioctl wrappers. Each call is traced through the session's log callback and every
 * failure becomes a vgt_error naming the ioctl, the handles and the RM status (number and name), or
 * errno when the ioctl itself failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu_internal.h"

void gpu_log(const vgt_gpu *g, const char *fmt, ...)
{
    if (!g->opt.log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    g->opt.log(g->opt.log_user, line);
}

/* Runs one RM escape; on a failed ioctl fills err with errno and returns VGT_E_BACKEND. */
static vgt_status rm_escape(vgt_gpu *g, int fd, unsigned nr, void *params, uint32_t size, const char *name,
                            vgt_error *err)
{
    int rc;
    do
        rc = ioctl(fd, RM_REQUEST(nr, size), params);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int e = errno;
        gpu_log(g, "%s (request 0x%08lx): ioctl failed: %s", name, RM_REQUEST(nr, size), strerror(e));
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "%s (request 0x%08lx) failed: %s", name,
                        RM_REQUEST(nr, size), strerror(e));
    }
    return VGT_OK;
}

static vgt_status rm_status_fail(vgt_error *err, uint32_t status, const char *fmt_ctx)
{
    return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "%s: RM status 0x%x %s", fmt_ctx, status,
                    vgt_gpu_rm_status_name(status));
}

vgt_status rm_alloc(vgt_gpu *g, uint32_t parent, uint32_t cls, void *params, uint32_t size, const char *what,
                    uint32_t *handle, vgt_error *err)
{
    rm_alloc_params a = { .client = g->client, .parent = parent, .cls = cls,
                          .params_ptr = (uint64_t)(uintptr_t)params, .params_size = size };
    char ctx[160];
    snprintf(ctx, sizeof ctx, "RM_ALLOC %s (class 0x%04x) under 0x%08x", what, cls, parent);
    VGT_TRY(rm_escape(g, g->fd_ctl, RM_ESC_ALLOC, &a, sizeof a, ctx, err));
    gpu_log(g, "%s -> status 0x%x %s, handle 0x%08x", ctx, a.status, vgt_gpu_rm_status_name(a.status), a.object);
    if (a.status != 0)
        return rm_status_fail(err, a.status, ctx);
    *handle = a.object;
    return VGT_OK;
}

vgt_status rm_control_status(vgt_gpu *g, uint32_t object, uint32_t cmd, void *params, uint32_t size,
                             const char *what, uint32_t *rm_status, vgt_error *err)
{
    rm_control_params a = { .client = g->client, .object = object, .cmd = cmd,
                            .params_ptr = (uint64_t)(uintptr_t)params, .params_size = size };
    char ctx[160];
    snprintf(ctx, sizeof ctx, "RM_CONTROL %s (cmd 0x%08x) on 0x%08x", what, cmd, object);
    if (rm_status)
        *rm_status = 0;
    VGT_TRY(rm_escape(g, g->fd_ctl, RM_ESC_CONTROL, &a, sizeof a, ctx, err));
    gpu_log(g, "%s -> status 0x%x %s", ctx, a.status, vgt_gpu_rm_status_name(a.status));
    if (rm_status)
        *rm_status = a.status;
    if (a.status != 0)
        return rm_status_fail(err, a.status, ctx);
    return VGT_OK;
}

vgt_status rm_control(vgt_gpu *g, uint32_t object, uint32_t cmd, void *params, uint32_t size, const char *what,
                      vgt_error *err)
{
    return rm_control_status(g, object, cmd, params, size, what, NULL, err);
}

vgt_status rm_free(vgt_gpu *g, uint32_t parent, uint32_t object, const char *what, vgt_error *err)
{
    rm_free_params a = { .client = g->client, .parent = parent, .object = object };
    char ctx[160];
    snprintf(ctx, sizeof ctx, "RM_FREE %s 0x%08x", what, object);
    VGT_TRY(rm_escape(g, g->fd_ctl, RM_ESC_FREE, &a, sizeof a, ctx, err));
    gpu_log(g, "%s -> status 0x%x %s", ctx, a.status, vgt_gpu_rm_status_name(a.status));
    if (a.status != 0)
        return rm_status_fail(err, a.status, ctx);
    return VGT_OK;
}

vgt_status node_open(vgt_gpu *g, const char *name, int *fd, vgt_error *err)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", g->dev_dir, name);
    *fd = open(path, O_RDWR | O_CLOEXEC);
    if (*fd >= 0)
        return VGT_OK;
    int e = errno;
    gpu_log(g, "open %s: %s", path, strerror(e));
    if (e == ENOENT && !strcmp(name, "nvidiactl"))
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "no NVIDIA GPU: %s not found", path);
    if (e == ENOENT)
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "%s not found: the NVIDIA driver is only partly loaded "
                        "(nvidia-uvm is a separate module)", path);
    return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "cannot open %s: %s", path, strerror(e));
}

vgt_status rm_open_registered_dev(vgt_gpu *g, int *fd, vgt_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "nvidia%u", g->info.minor);
    VGT_TRY(node_open(g, name, fd, err));
    int32_t ctl = g->fd_ctl;
    vgt_status st = rm_escape(g, *fd, RM_ESC_REGISTER_FD, &ctl, sizeof ctl, "REGISTER_FD", err);
    if (st != VGT_OK) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

vgt_status rm_read_cards(vgt_gpu *g, rm_card_info *cards, uint32_t n, vgt_error *err)
{
    memset(cards, 0, n * sizeof *cards);
    return rm_escape(g, g->fd_ctl, RM_ESC_CARD_INFO, cards, n * (uint32_t)sizeof *cards, "CARD_INFO", err);
}

/* The mapping context lives in the fd passed to RM_MAP_MEMORY; mmap it at offset 0 with the exact
 * size, then the fd can be closed (OGKM kernel-open/nvidia/nv-mmap.c). Sysmem needs a nvidiactl fd,
 * BAR memory (vidmem, the usermode page) a registered /dev/nvidiaN fd (probe fact 1). */
vgt_status rm_map_cpu(vgt_gpu *g, uint32_t memory, uint64_t size, bool bar, const char *what,
                      volatile uint8_t **out, vgt_error *err)
{
    int mfd = -1;
    VGT_TRY(bar ? rm_open_registered_dev(g, &mfd, err) : node_open(g, "nvidiactl", &mfd, err));
    rm_map_params m = { .client = g->client, .device = g->device, .memory = memory, .length = size, .map_fd = mfd };
    char ctx[160];
    snprintf(ctx, sizeof ctx, "RM_MAP_MEMORY %s (memory 0x%08x, 0x%llx bytes)", what, memory, (unsigned long long)size);
    vgt_status st = rm_escape(g, g->fd_ctl, RM_ESC_MAP_MEMORY, &m, sizeof m, ctx, err);
    if (st == VGT_OK && m.status != 0)
        st = rm_status_fail(err, m.status, ctx);
    if (st != VGT_OK) {
        close(mfd);
        return st;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    int e = errno;
    close(mfd);
    gpu_log(g, "%s -> status 0x%x, mmap %p", ctx, m.status, p == MAP_FAILED ? NULL : p);
    if (p == MAP_FAILED)
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "%s: mmap of 0x%llx bytes failed: %s", ctx,
                        (unsigned long long)size, strerror(e));
    *out = p;
    return VGT_OK;
}

vgt_status rm_map_dma_fixed(vgt_gpu *g, uint32_t memory, uint64_t offset, uint64_t va, uint64_t size,
                            const char *what, vgt_error *err)
{
    rm_map_dma_params d = { .client = g->client, .device = g->device, .dma = g->virtmem, .memory = memory,
                            .offset = offset, .length = size, .dma_offset = va,
                            .flags = RM_DMA_FLAG_PAGE_4K | RM_DMA_FLAG_SNOOP | RM_DMA_FLAG_OFFSET_FIXED };
    char ctx[200];
    snprintf(ctx, sizeof ctx, "RM_MAP_MEMORY_DMA %s (memory 0x%08x + 0x%llx at VA 0x%llx, 0x%llx bytes)", what, memory,
             (unsigned long long)offset, (unsigned long long)va, (unsigned long long)size);
    VGT_TRY(rm_escape(g, g->fd_ctl, RM_ESC_MAP_MEMORY_DMA, &d, sizeof d, ctx, err));
    gpu_log(g, "%s -> status 0x%x %s, dmaOffset 0x%llx", ctx, d.status, vgt_gpu_rm_status_name(d.status),
            (unsigned long long)d.dma_offset);
    if (d.status != 0)
        return rm_status_fail(err, d.status, ctx);
    if (d.dma_offset != va)
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "%s: mapped at 0x%llx, expected the fixed VA 0x%llx", ctx,
                        (unsigned long long)d.dma_offset, (unsigned long long)va);
    return VGT_OK;
}

void rm_unmap_dma(vgt_gpu *g, uint32_t memory, uint64_t va, uint64_t size)
{
    rm_unmap_dma_params d = { .client = g->client, .device = g->device, .dma = g->virtmem, .memory = memory,
                              .dma_offset = va, .size = size };
    char ctx[160];
    snprintf(ctx, sizeof ctx, "RM_UNMAP_MEMORY_DMA (memory 0x%08x at VA 0x%llx, 0x%llx bytes)", memory,
             (unsigned long long)va, (unsigned long long)size);
    vgt_error ignored;
    vgt_status st = rm_escape(g, g->fd_ctl, RM_ESC_UNMAP_MEMORY_DMA, &d, sizeof d, ctx, &ignored);
    gpu_log(g, "%s -> %s, status 0x%x %s", ctx, st == VGT_OK ? "ok" : ignored.msg, d.status,
            vgt_gpu_rm_status_name(d.status));
}

vgt_status uvm_call(vgt_gpu *g, int fd, unsigned long req, void *params, const uint32_t *status, const char *what,
                    vgt_error *err)
{
    int rc;
    do
        rc = ioctl(fd, req, params);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int e = errno;
        gpu_log(g, "UVM %s (%lu): ioctl failed: %s", what, req, strerror(e));
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "UVM %s (ioctl %lu) failed: %s", what, req, strerror(e));
    }
    gpu_log(g, "UVM %s (%lu) -> status 0x%x %s", what, req, *status, vgt_gpu_rm_status_name(*status));
    if (*status != 0)
        return VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "UVM %s (ioctl %lu): RM status 0x%x %s", what, req, *status,
                        vgt_gpu_rm_status_name(*status));
    return VGT_OK;
}
