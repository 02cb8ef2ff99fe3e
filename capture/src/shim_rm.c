/* shim_rm.c: RM escapes on /dev/nvidiactl and /dev/nvidiaN -> records and calls on the capture's registry
 * (objects, memory, channels, tokens, GPU mappings; capture.h). The shim keeps no table of its own.
 *
 * Request = _IOWR('F', nr, size); the kernel looks at the nr and the size only. NV_ESC_IOCTL_XFER_CMD
 * (nr 0xD3) wraps {u32 cmd; u32 size; u64 ptr} and is unwrapped here. Struct offsets are transcribed
 * from open-gpu-kernel-modules 580 (src/common/sdk/nvidia/inc/nvos.h, kernel-open/common/inc/nv-ioctl.h),
 * checked by compiling the headers.
 * Every escape is recorded with its parameters in and out; the ones below also update state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"
#include "shim_copy.h"

#define MAX_PARAMS (1u << 20)          /* RM params copied per call; larger ones are recorded cut */
#define XFER_MAX 16384u                /* NV_ESC_IOCTL_XFER_CMD's own limit */

enum {
    ESC_RM_ALLOC_MEMORY = 0x27, ESC_RM_FREE = 0x29, ESC_RM_CONTROL = 0x2A, ESC_RM_ALLOC = 0x2B,
    ESC_RM_VID_HEAP_CONTROL = 0x4A, ESC_RM_MAP_MEMORY = 0x4E, ESC_RM_MAP_MEMORY_DMA = 0x57, ESC_RM_UNMAP_MEMORY_DMA = 0x58,
    ESC_XFER = 0xD3,
};
#define CTRL_GET_WORK_SUBMIT_TOKEN 0xc36f0108u   /* NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN */

uint64_t shim_copy_in(void *dst, const void *src, uint64_t n)
{
    if (n == 0) return 0;
    if (!src) return 0;
    struct iovec local = { dst, n }, remote = { (void *)src, n };
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got < 0) {   /* process_vm_readv refused (seccomp, old kernel): trust the pointer like the kernel would */
        memcpy(dst, src, n);
        return n;
    }
    return (uint64_t)got;
}

/* One call as seen: the escape's struct and the params block it points to, before and after. */
typedef struct rm_call {
    int fd, node;
    uint32_t nr, size;               /* unwrapped escape number and struct size */
    unsigned long request;           /* as recorded: the program's, or _IOWR('F', nr, size) when unwrapped */
    uint8_t *arg;                    /* the program's struct (after the call: as returned) */
    uint8_t *in;                     /* the struct as passed (c.size bytes) */
    uint8_t *pin, *pout;             /* params block in/out (RM_ALLOC, RM_CONTROL), or NULL */
    uint32_t plen;
    int rc;
} rm_call;

/* A registry call's error: 0 when it wrote and registered; a write that failed (the trace is short) is
 * counted here; 1: the call refused the registration (err says why). */
static int refused(vgt_status rc, const vgt_error *err)
{
    if (rc == VGT_OK) return 0;
    if (err->code != VGT_E_IO && err->code != VGT_E_NOMEM) return 1;
    shim_write_failed(err);
    return 0;
}

/* RM_ALLOC copies the size it registered for the class, whatever paramsSize says (the NVIDIA Vulkan
 * and CUDA drivers pass 0 for channels): for the classes whose parameters the trace must carry, read that
 * size. NV_CHANNEL_ALLOC_PARAMS and NV_MEMORY_ALLOCATION_PARAMS in 580: checked by the H200 probe
 * (probes/README.md: CHANNEL=0x170 MEM_ALLOC=0x80). The others from open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/class/: cl9067.h NV_CTXSHARE_ALLOCATION_PARAMETERS (hVASpace, flags,
 * subctxId) and cla06c.h NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS (hObjectError, hObjectEccError,
 * hVASpace, engineType, bIsCallingContextVgpuPlugin, padded to 4): a replay reproduces the sync/async
 * subcontext and the TSG's engine from them. */
static const struct { uint32_t cls, size; } class_params[] = {
    { 0x003e, 0x80 }, { 0x0040, 0x80 }, { 0x9067, 0x0c }, { 0xa06c, 0x14 },
};

static uint32_t class_params_size(uint32_t cls, uint32_t given)
{
    uint32_t need = shim_class_is_channel(cls) ? 0x170u : 0;
    for (size_t i = 0; i < sizeof class_params / sizeof class_params[0]; i++)
        if (class_params[i].cls == cls) need = class_params[i].size;
    return given > need ? given : need;
}

/* Copy a params block the escape points at (before the call; after it with out != NULL). */
static void params_snapshot(rm_call *c, uint64_t ptr, uint32_t len)
{
    if (!ptr || !len) return;
    if (len > MAX_PARAMS) len = MAX_PARAMS;
    c->pin = calloc(1, len);
    c->pout = calloc(1, len);
    if (!c->pin || !c->pout) { free(c->pin); free(c->pout); c->pin = c->pout = NULL; return; }
    c->plen = (uint32_t)shim_copy_in(c->pin, (const void *)(uintptr_t)ptr, len);
}

static void record_ioctl(const rm_call *c)
{
    uint32_t n = c->size;
    vgt_rec_ioctl r = { .node = (uint32_t)c->node, .request = (uint32_t)c->request, .result = c->rc,
                        .params_length = n, .params_in = c->in };
    uint8_t *out = malloc(n ? n : 1);
    if (!out) return;
    r.params_out = out;
    r.params_length = (uint32_t)shim_copy_in(out, c->arg, n);
    shim_record(VGT_REC_IOCTL, &r);
    free(out);
}

/* NV_MEMORY_ALLOCATION_PARAMS (0x80): flags 8, attr 0x18, attr2 0x1c, size 0x40. */
static void mem_alloc_from_params(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, uint32_t status,
                                  const uint8_t *p, uint32_t plen)
{
    vgt_rec_mem_alloc m = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status,
                            .aperture = cls == 0x40 ? VGT_APERTURE_VIDMEM : VGT_APERTURE_SYSMEM };
    if (p && plen >= 0x48) {
        m.flags = shim_rd32(p, 8);
        m.attr = shim_rd32(p, 0x18);
        m.attr2 = shim_rd32(p, 0x1c);
        m.size = shim_rd64(p, 0x40);
    }
    vgt_error err;
    vgt_status rc = vgt_capture_mem_alloc(g_shim.cap, &m, VGT_CAPTURE_OBJ_FRESH, &err);
    refused(rc, &err);   /* a full table was said at RM_ALLOC */
}

/* NV_CHANNEL_ALLOC_PARAMS (0x170): hObjectError 0, gpFifoOffset 8, gpFifoEntries 0x10, hContextShare 0x18,
 * hVASpace 0x1c, hUserdMemory[0] 0x20, userdOffset[0] 0x40, engineType 0x80. */
static void channel_from_params(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, uint32_t status,
                                const uint8_t *p, uint32_t plen)
{
    vgt_rec_channel ch = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status };
    if (p && plen >= 0x84) {
        ch.error_notifier = shim_rd32(p, 0);
        ch.ring_va = shim_rd64(p, 8);
        ch.entries = shim_rd32(p, 0x10);
        ch.context_share = shim_rd32(p, 0x18);
        ch.va_space = shim_rd32(p, 0x1c);
        ch.userd_memory = shim_rd32(p, 0x20);
        ch.userd_offset = shim_rd64(p, 0x40);
        ch.engine_type = shim_rd32(p, 0x80);
    } else {
        shim_problem(1, VGT_E_FORMAT, "channel 0x%x: allocation parameters of %u bytes, expected at least 0x84",
                     handle, plen);
    }
    vgt_error err;
    if (refused(vgt_capture_channel(g_shim.cap, &ch, &err), &err))   /* and its ring, USERD when status is 0 */
        shim_problem(1, err.code, "channel 0x%x: %s", handle, err.msg);
}

static void on_alloc(rm_call *c)
{
    int v64 = c->size >= 0x30;   /* NVOS64 vs NVOS21 */
    uint32_t client = shim_rd32(c->arg, 0), parent = shim_rd32(c->arg, 4), handle = shim_rd32(c->arg, 8);
    uint32_t cls = shim_rd32(c->arg, 0xc), status = shim_rd32(c->arg, v64 ? 0x28 : 0x1c);
    if (c->rc != 0 && status == 0) status = 0xffffffffu;
    if (cls == 0x41 && client == 0) client = handle;    /* NV01_ROOT_CLIENT: the new handle is the client */
    if (c->pout) c->plen = (uint32_t)shim_copy_in(c->pout, (const void *)(uintptr_t)shim_rd64(c->arg, 0x10), c->plen);
    vgt_rec_rm_alloc a = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status,
                           .params_length = c->pin ? c->plen : 0, .params_in = c->pin, .params_out = c->pout };
    shim_record(VGT_REC_RM_ALLOC, &a);
    uint32_t parent_flags = vgt_capture_object_flags(g_shim.cap, client, parent);
    vgt_error err;
    int rm_memory = cls == 0x3e || cls == 0x40;   /* RM allocates it now: zero as handed out */
    if (status == 0 &&
        vgt_capture_register_object(g_shim.cap, client, parent, handle, cls,
                                    shim_class_flags(cls) | (rm_memory ? VGT_CAPTURE_OBJ_FRESH : 0), &err) != VGT_OK)
        shim_problem(1, VGT_E_LIMIT, "object table full at handle 0x%x", handle);
    if (rm_memory) mem_alloc_from_params(client, parent, handle, cls, status, c->pout, c->plen);
    if (shim_class_is_channel(cls)) channel_from_params(client, parent, handle, cls, status, c->pout, c->plen);
    if (parent_flags & VGT_CAPTURE_OBJ_CHANNEL) {
        vgt_rec_engine_object e = { .client = client, .channel = parent, .handle = handle, .cls = cls, .status = status };
        shim_record(VGT_REC_ENGINE_OBJECT, &e);
    }
}

/* NVOS02 (+fd 0x30): hRoot 0, hObjectParent 4, hObjectNew 8, hClass 0xc, flags 0x10, pMemory 0x18,
 * limit 0x20, status 0x28. */
static void on_alloc_memory(rm_call *c)
{
    uint32_t client = shim_rd32(c->arg, 0), parent = shim_rd32(c->arg, 4), handle = shim_rd32(c->arg, 8);
    uint32_t cls = shim_rd32(c->arg, 0xc), status = shim_rd32(c->arg, 0x28);
    if (c->rc != 0 && status == 0) status = 0xffffffffu;
    uint64_t addr = shim_rd64(c->arg, 0x18), size = shim_rd64(c->arg, 0x20) + 1;
    vgt_rec_mem_alloc m = { .client = client, .parent = parent, .handle = handle, .cls = cls, .size = size,
                            .cpu_address = cls == 0x71 ? addr : 0, .flags = shim_rd32(c->arg, 0x10), .status = status,
                            .aperture = cls == 0x71 ? VGT_APERTURE_OS : cls == 0x40 ? VGT_APERTURE_VIDMEM : VGT_APERTURE_SYSMEM };
    vgt_error err;
    /* An OS descriptor's pinned pages are the program's: only memory RM hands out is fresh. */
    if (refused(vgt_capture_mem_alloc(g_shim.cap, &m, shim_class_flags(cls) | (cls != 0x71 ? VGT_CAPTURE_OBJ_FRESH : 0),
                                      &err), &err))
        shim_problem(1, VGT_E_LIMIT, "object table full at handle 0x%x", handle);
}

static void on_free(rm_call *c)
{
    vgt_rec_rm_free f = { .client = shim_rd32(c->arg, 0), .parent = shim_rd32(c->arg, 4), .handle = shim_rd32(c->arg, 8),
                          .status = shim_rd32(c->arg, 0xc) };
    if (c->rc != 0 && f.status == 0) f.status = 0xffffffffu;
    shim_record(VGT_REC_RM_FREE, &f);
    if (f.status == 0) vgt_capture_forget_object(g_shim.cap, f.client, f.handle);   /* and its children */
}

/* NVOS54: hClient 0, hObject 4, cmd 8, flags 0xc, params 0x10, paramsSize 0x18, status 0x1c. */
static void on_control(rm_call *c)
{
    vgt_rec_rm_control r = { .client = shim_rd32(c->arg, 0), .object = shim_rd32(c->arg, 4), .cmd = shim_rd32(c->arg, 8),
                             .flags = shim_rd32(c->arg, 0xc), .status = shim_rd32(c->arg, 0x1c) };
    if (c->rc != 0 && r.status == 0) r.status = 0xffffffffu;
    if (c->pout) c->plen = (uint32_t)shim_copy_in(c->pout, (const void *)(uintptr_t)shim_rd64(c->arg, 0x10), c->plen);
    r.params_length = c->pin ? c->plen : 0;
    r.params_in = c->pin;
    r.params_out = c->pout;
    shim_record(VGT_REC_RM_CONTROL, &r);
    if (r.cmd == CTRL_GET_WORK_SUBMIT_TOKEN && r.status == 0 && c->pout && c->plen >= 4) {
        vgt_error err;
        if (refused(vgt_capture_token(g_shim.cap, r.client, r.object, shim_rd32(c->pout, 0), &err), &err))
            shim_problem(1, err.code, "%s", err.msg);
    }
}

/* NVOS33 (+fd 0x30): hClient 0, hDevice 4, hMemory 8, offset 0x10, length 0x18, status 0x28, flags 0x2c. */
static void on_map_memory(rm_call *c)
{
    record_ioctl(c);
    if (c->rc != 0 || shim_rd32(c->arg, 0x28) != 0 || c->size < 0x34) return;
    shim_pending_map m = { .client = shim_rd32(c->arg, 0), .device = shim_rd32(c->arg, 4), .memory = shim_rd32(c->arg, 8),
                           .offset = shim_rd64(c->arg, 0x10), .length = shim_rd64(c->arg, 0x18),
                           .flags = shim_rd32(c->arg, 0x2c) };
    shim_fd_set_pending((int)shim_rd32(c->arg, 0x30), &m);
}

/* NVOS46 (0x40 in 580): hClient 0, hDevice 4, hDma 8, hMemory 0xc, offset 0x10, length 0x18, flags 0x20,
 * dmaOffset 0x30, status 0x38. */
static void on_map_dma(rm_call *c)
{
    if (c->size < 0x40) { record_ioctl(c); return; }
    vgt_rec_gpu_map g = { .client = shim_rd32(c->arg, 0), .device = shim_rd32(c->arg, 4), .va_space = shim_rd32(c->arg, 8),
                          .memory = shim_rd32(c->arg, 0xc), .offset = shim_rd64(c->arg, 0x10),
                          .length = shim_rd64(c->arg, 0x18), .flags = shim_rd32(c->arg, 0x20),
                          .gpu_va = shim_rd64(c->arg, 0x30), .status = shim_rd32(c->arg, 0x38), .source = VGT_MAP_RM_DMA };
    if (c->rc != 0 && g.status == 0) g.status = 0xffffffffu;
    vgt_error err;
    refused(vgt_capture_gpu_map(g_shim.cap, &g, &err), &err);   /* views form with its CPU mappings */
}

/* NVOS47 (0x30): hClient 0, hDevice 4, hDma 8, hMemory 0xc, flags 0x10, dmaOffset 0x18, size 0x20, status 0x28. */
static void on_unmap_dma(rm_call *c)
{
    if (c->size < 0x30) { record_ioctl(c); return; }
    vgt_rec_gpu_unmap u = { .client = shim_rd32(c->arg, 0), .device = shim_rd32(c->arg, 4), .va_space = shim_rd32(c->arg, 8),
                            .memory = shim_rd32(c->arg, 0xc), .gpu_va = shim_rd64(c->arg, 0x18),
                            .length = shim_rd64(c->arg, 0x20), .status = shim_rd32(c->arg, 0x28), .source = VGT_MAP_RM_DMA };
    if (c->rc != 0 && u.status == 0) u.status = 0xffffffffu;
    vgt_error err;
    refused(vgt_capture_gpu_unmap(g_shim.cap, &u, &err), &err);
}

/* RM_VID_HEAP_CONTROL (NVOS32, capture_nvos32.c): the raw IOCTL record as for every escape, then the
 * allocation as MEM_ALLOC (and a memory object the shim's maps can find), or the free. */
static void on_vid_heap(rm_call *c)
{
    record_ioctl(c);
    if (c->size < VGT_NVOS32_SIZE) return;
    uint8_t out[VGT_NVOS32_SIZE];
    if (shim_copy_in(out, c->arg, sizeof out) != sizeof out) return;
    vgt_capture_nvos32 h;
    vgt_error err;
    if (vgt_capture_nvos32_decode(out, sizeof out, &h, &err) != VGT_OK) return;   /* INFO and the like */
    if (c->rc != 0 && h.alloc.status == 0) h.alloc.status = 0xffffffffu;
    if (h.is_free) {
        if (h.alloc.status == 0) vgt_capture_forget_object(g_shim.cap, h.free_client, h.free_handle);
        return;
    }
    uint32_t flags = shim_class_flags(h.alloc.cls) | (h.alloc.cls != 0x71 ? VGT_CAPTURE_OBJ_FRESH : 0);
    if (refused(vgt_capture_mem_alloc(g_shim.cap, &h.alloc, flags, &err), &err))
        shim_problem(1, VGT_E_LIMIT, "object table full at handle 0x%x", h.alloc.handle);
}

int shim_rm_ioctl(int fd, int node, unsigned long request, void *arg)
{
    rm_call c = { .fd = fd, .node = node, .nr = (uint32_t)(request & 0xff), .size = (uint32_t)((request >> 16) & 0x3fff),
                  .request = request, .arg = arg };
    uint8_t xfer[16];
    if (c.nr == ESC_XFER && c.size >= 16 && shim_copy_in(xfer, arg, 16) == 16) {
        c.nr = shim_rd32(xfer, 0);
        c.size = shim_rd32(xfer, 4);
        c.arg = (uint8_t *)(uintptr_t)shim_rd64(xfer, 8);
        if (c.size > XFER_MAX) c.size = XFER_MAX;
        c.request = (3ul << 30) | ((unsigned long)c.size << 16) | (0x46ul << 8) | c.nr;
    }
    c.in = calloc(1, c.size ? c.size : 1);
    int readable = c.in && shim_copy_in(c.in, c.arg, c.size) == c.size;
    if (readable && c.nr == ESC_RM_ALLOC && c.size >= 0x20)
        params_snapshot(&c, shim_rd64(c.in, 0x10),
                        class_params_size(shim_rd32(c.in, 0xc), shim_rd32(c.in, c.size >= 0x30 ? 0x20 : 0x18)));
    if (readable && c.nr == ESC_RM_CONTROL && c.size >= 0x20)
        params_snapshot(&c, shim_rd64(c.in, 0x10), shim_rd32(c.in, 0x18));
    c.rc = g_libc.ioctl(fd, request, arg);
    int saved = errno;
    if (readable) {
        uint64_t t0 = vgt_now_ns();
        if (g_shim.active) switch (c.nr) {
        case ESC_RM_ALLOC: on_alloc(&c); break;
        case ESC_RM_ALLOC_MEMORY: if (c.size >= 0x30) on_alloc_memory(&c); else record_ioctl(&c); break;
        case ESC_RM_FREE: on_free(&c); break;
        case ESC_RM_CONTROL: on_control(&c); break;
        case ESC_RM_VID_HEAP_CONTROL: on_vid_heap(&c); break;
        case ESC_RM_MAP_MEMORY: on_map_memory(&c); break;
        case ESC_RM_MAP_MEMORY_DMA: on_map_dma(&c); break;
        case ESC_RM_UNMAP_MEMORY_DMA: on_unmap_dma(&c); break;
        default: record_ioctl(&c); break;
        }
        atomic_fetch_add(&g_shim_time.ioctl_ns, vgt_now_ns() - t0);
    }
    free(c.in);
    free(c.pin);
    free(c.pout);
    errno = saved;
    return c.rc;
}
