/* shim_rm.c: RM escapes on /dev/nvidiactl and /dev/nvidiaN -> records and calls on the capture's registry
 * (objects, memory, channels, tokens, GPU mappings; capture.h). The shim keeps no table of its own.
 *
 * Request = _IOWR('F', nr, size); the kernel looks at the nr and the size only. NV_ESC_IOCTL_XFER_CMD
 * wraps {u32 cmd; u32 size; u64 ptr} and is unwrapped here. Escape numbers, control ids and struct
 * offsets are the ABI table's (trace-format/facts/rm_abi.txt, vgt/nv_abi.h: open-gpu-kernel-modules 580
 * nvos.h, nv-ioctl.h, each offset checked at compile time).
 * Every escape is recorded with its parameters in and out; the ones below also update state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"
#include "shim_copy.h"
#include "vgt/nv_abi.h"
#include "vgt/nv_facts.h"

/* A field of an ABI struct read from the bytes of one. */
#define RD32(p, T, f) shim_rd32(p, (uint32_t)offsetof(T, f))
#define RD64(p, T, f) shim_rd64(p, (uint32_t)offsetof(T, f))

#define MAX_PARAMS (1u << 20)          /* RM params copied per call; larger ones are recorded cut */
#define XFER_MAX RM_XFER_MAX            /* NV_ESC_IOCTL_XFER_CMD's own limit */

enum {
    ESC_RM_ALLOC_MEMORY = RM_ESC_ALLOC_MEMORY, ESC_RM_FREE = RM_ESC_FREE, ESC_RM_CONTROL = RM_ESC_CONTROL,
    ESC_RM_ALLOC = RM_ESC_ALLOC, ESC_RM_VID_HEAP_CONTROL = RM_ESC_VID_HEAP_CONTROL, ESC_RM_MAP_MEMORY = RM_ESC_MAP_MEMORY,
    ESC_RM_MAP_MEMORY_DMA = RM_ESC_MAP_MEMORY_DMA, ESC_RM_UNMAP_MEMORY_DMA = RM_ESC_UNMAP_MEMORY_DMA,
    ESC_XFER = RM_ESC_IOCTL_XFER_CMD,
};
#define CTRL_GET_WORK_SUBMIT_TOKEN RM_CTRL_CHAN_GET_WORK_TOKEN

uint64_t shim_copy_in(void *dst, const void *src, uint64_t n)
{
    if (n == 0) return 0;
    if (!src) return 0;
    struct iovec local = { dst, n }, remote = { (void *)src, n };
    ssize_t got = process_vm_readv(shim_pid(), &local, 1, &remote, 1, 0);
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
    { RM_CLASS_MEMORY_SYSTEM, sizeof(rm_memory_alloc) }, { RM_CLASS_MEMORY_LOCAL_USER, sizeof(rm_memory_alloc) },
    { RM_CLASS_CONTEXT_SHARE, sizeof(rm_ctxshare_alloc) }, { RM_CLASS_CHANNEL_GROUP, sizeof(rm_tsg_alloc) },
};

static uint32_t class_params_size(uint32_t cls, uint32_t given)
{
    uint32_t need = shim_class_is_channel(cls) ? (uint32_t)sizeof(rm_channel_alloc) : 0;
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

/* NV_MEMORY_ALLOCATION_PARAMS (rm_memory_alloc): flags, attr, attr2, size. */
static void mem_alloc_from_params(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, uint32_t status,
                                  const uint8_t *p, uint32_t plen)
{
    vgt_rec_mem_alloc m = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status,
                            .aperture = cls == 0x40 ? VGT_APERTURE_VIDMEM : VGT_APERTURE_SYSMEM };
    if (p && plen >= offsetof(rm_memory_alloc, size) + 8) {
        m.flags = RD32(p, rm_memory_alloc, flags);
        m.attr = RD32(p, rm_memory_alloc, attr);
        m.attr2 = RD32(p, rm_memory_alloc, attr2);
        m.size = RD64(p, rm_memory_alloc, size);
    }
    vgt_error err;
    vgt_status rc = vgt_capture_mem_alloc(g_shim.cap, &m, VGT_CAPTURE_OBJ_FRESH, &err);
    refused(rc, &err);   /* a full table was said at RM_ALLOC */
}

/* NV_CHANNEL_ALLOC_PARAMS (rm_channel_alloc): hObjectError, gpFifoOffset, gpFifoEntries, hContextShare,
 * hVASpace, hUserdMemory[0], userdOffset[0], engineType. */
static void channel_from_params(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, uint32_t status,
                                const uint8_t *p, uint32_t plen)
{
    vgt_rec_channel ch = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status };
    if (p && plen >= offsetof(rm_channel_alloc, engine_type) + 4) {
        ch.error_notifier = RD32(p, rm_channel_alloc, error_notifier);
        ch.ring_va = RD64(p, rm_channel_alloc, gpfifo_va);
        ch.entries = RD32(p, rm_channel_alloc, gpfifo_entries);
        ch.context_share = RD32(p, rm_channel_alloc, context_share);
        ch.va_space = RD32(p, rm_channel_alloc, va_space);
        ch.userd_memory = RD32(p, rm_channel_alloc, userd_memory[0]);
        ch.userd_offset = RD64(p, rm_channel_alloc, userd_offset[0]);
        ch.engine_type = RD32(p, rm_channel_alloc, engine_type);
    } else {
        shim_problem(1, VGT_E_FORMAT, "channel 0x%x: allocation parameters of %u bytes, expected at least 0x%zx",
                     handle, plen, offsetof(rm_channel_alloc, engine_type) + 4);
    }
    vgt_error err;
    if (refused(vgt_capture_channel(g_shim.cap, &ch, &err), &err))   /* and its ring, USERD when status is 0 */
        shim_problem(1, err.code, "channel 0x%x: %s", handle, err.msg);
}

static void on_alloc(rm_call *c)
{
    int v64 = c->size >= sizeof(rm_alloc64_params);   /* NVOS64 vs NVOS21 */
    uint32_t client = RD32(c->arg, rm_alloc_params, client), parent = RD32(c->arg, rm_alloc_params, parent);
    uint32_t handle = RD32(c->arg, rm_alloc_params, object), cls = RD32(c->arg, rm_alloc_params, cls);
    uint32_t status = v64 ? RD32(c->arg, rm_alloc64_params, status) : RD32(c->arg, rm_alloc_params, status);
    if (c->rc != 0 && status == 0) status = 0xffffffffu;
    if (cls == RM_CLASS_ROOT_CLIENT && client == 0) client = handle;    /* NV01_ROOT_CLIENT: the new handle is the client */
    if (c->pout) c->plen = (uint32_t)shim_copy_in(c->pout, (const void *)(uintptr_t)RD64(c->arg, rm_alloc_params, params_ptr), c->plen);
    vgt_rec_rm_alloc a = { .client = client, .parent = parent, .handle = handle, .cls = cls, .status = status,
                           .params_length = c->pin ? c->plen : 0, .params_in = c->pin, .params_out = c->pout };
    shim_record(VGT_REC_RM_ALLOC, &a);
    if (!vgt_nv_abi_knows_class(cls)) shim_abi_unknown(SHIM_UNKNOWN_CLASS, cls);
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

/* NVOS02 (+fd): hRoot, hObjectParent, hObjectNew, hClass, flags, pMemory, limit, status (rm_alloc_memory_params). */
static void on_alloc_memory(rm_call *c)
{
    uint32_t client = RD32(c->arg, rm_alloc_memory_params, client), parent = RD32(c->arg, rm_alloc_memory_params, parent);
    uint32_t handle = RD32(c->arg, rm_alloc_memory_params, object);
    uint32_t cls = RD32(c->arg, rm_alloc_memory_params, cls), status = RD32(c->arg, rm_alloc_memory_params, status);
    if (c->rc != 0 && status == 0) status = 0xffffffffu;
    uint64_t addr = RD64(c->arg, rm_alloc_memory_params, memory_ptr), size = RD64(c->arg, rm_alloc_memory_params, limit) + 1;
    vgt_rec_mem_alloc m = { .client = client, .parent = parent, .handle = handle, .cls = cls, .size = size,
                            .cpu_address = cls == 0x71 ? addr : 0, .flags = RD32(c->arg, rm_alloc_memory_params, flags), .status = status,
                            .aperture = cls == 0x71 ? VGT_APERTURE_OS : cls == 0x40 ? VGT_APERTURE_VIDMEM : VGT_APERTURE_SYSMEM };
    vgt_error err;
    /* An OS descriptor's pinned pages are the program's: only memory RM hands out is fresh. */
    if (refused(vgt_capture_mem_alloc(g_shim.cap, &m, shim_class_flags(cls) | (cls != 0x71 ? VGT_CAPTURE_OBJ_FRESH : 0),
                                      &err), &err))
        shim_problem(1, VGT_E_LIMIT, "object table full at handle 0x%x", handle);
}

static void on_free(rm_call *c)
{
    vgt_rec_rm_free f = { .client = RD32(c->arg, rm_free_params, client), .parent = RD32(c->arg, rm_free_params, parent),
                          .handle = RD32(c->arg, rm_free_params, object), .status = RD32(c->arg, rm_free_params, status) };
    if (c->rc != 0 && f.status == 0) f.status = 0xffffffffu;
    shim_record(VGT_REC_RM_FREE, &f);
    if (f.status == 0) vgt_capture_forget_object(g_shim.cap, f.client, f.handle);   /* and its children */
}

/* NVOS54 (rm_control_params): hClient, hObject, cmd, flags, params, paramsSize, status. */
static void on_control(rm_call *c)
{
    vgt_rec_rm_control r = { .client = RD32(c->arg, rm_control_params, client), .object = RD32(c->arg, rm_control_params, object),
                             .cmd = RD32(c->arg, rm_control_params, cmd), .flags = RD32(c->arg, rm_control_params, flags),
                             .status = RD32(c->arg, rm_control_params, status) };
    if (c->rc != 0 && r.status == 0) r.status = 0xffffffffu;
    if (c->pout) c->plen = (uint32_t)shim_copy_in(c->pout, (const void *)(uintptr_t)RD64(c->arg, rm_control_params, params_ptr), c->plen);
    r.params_length = c->pin ? c->plen : 0;
    r.params_in = c->pin;
    r.params_out = c->pout;
    shim_record(VGT_REC_RM_CONTROL, &r);
    if (!vgt_nv_abi_knows_control(r.cmd)) shim_abi_unknown(SHIM_UNKNOWN_CONTROL, r.cmd);
    if (r.cmd == CTRL_GET_WORK_SUBMIT_TOKEN && r.status == 0 && c->pout && c->plen >= sizeof(rm_work_token)) {
        vgt_error err;
        if (refused(vgt_capture_token(g_shim.cap, r.client, r.object, RD32(c->pout, rm_work_token, token), &err), &err))
            shim_problem(1, err.code, "%s", err.msg);
    }
}

/* NVOS33 + fd (rm_map_params): hClient, hDevice, hMemory, offset, length, status, flags, the mapping fd. */
static void on_map_memory(rm_call *c)
{
    record_ioctl(c);
    if (c->rc != 0 || RD32(c->arg, rm_map_params, status) != 0 || c->size < offsetof(rm_map_params, map_fd) + 4) return;
    shim_pending_map m = { .client = RD32(c->arg, rm_map_params, client), .device = RD32(c->arg, rm_map_params, device),
                           .memory = RD32(c->arg, rm_map_params, memory), .offset = RD64(c->arg, rm_map_params, offset),
                           .length = RD64(c->arg, rm_map_params, length), .flags = RD32(c->arg, rm_map_params, flags) };
    shim_fd_set_pending((int)RD32(c->arg, rm_map_params, map_fd), &m);
}

/* NVOS46 (rm_map_dma_params, 0x40 in 580): hClient, hDevice, hDma, hMemory, offset, length, flags, dmaOffset,
 * status. */
static void on_map_dma(rm_call *c)
{
    if (c->size < sizeof(rm_map_dma_params)) { record_ioctl(c); return; }
    vgt_rec_gpu_map g = { .client = RD32(c->arg, rm_map_dma_params, client), .device = RD32(c->arg, rm_map_dma_params, device),
                          .va_space = RD32(c->arg, rm_map_dma_params, dma), .memory = RD32(c->arg, rm_map_dma_params, memory),
                          .offset = RD64(c->arg, rm_map_dma_params, offset), .length = RD64(c->arg, rm_map_dma_params, length),
                          .flags = RD32(c->arg, rm_map_dma_params, flags), .gpu_va = RD64(c->arg, rm_map_dma_params, dma_offset),
                          .status = RD32(c->arg, rm_map_dma_params, status), .source = VGT_MAP_RM_DMA };
    if (c->rc != 0 && g.status == 0) g.status = 0xffffffffu;
    vgt_error err;
    refused(vgt_capture_gpu_map(g_shim.cap, &g, &err), &err);   /* views form with its CPU mappings */
}

/* NVOS47 (rm_unmap_dma_params): hClient, hDevice, hDma, hMemory, flags, dmaOffset, size, status. */
static void on_unmap_dma(rm_call *c)
{
    if (c->size < sizeof(rm_unmap_dma_params)) { record_ioctl(c); return; }
    vgt_rec_gpu_unmap u = { .client = RD32(c->arg, rm_unmap_dma_params, client), .device = RD32(c->arg, rm_unmap_dma_params, device),
                            .va_space = RD32(c->arg, rm_unmap_dma_params, dma), .memory = RD32(c->arg, rm_unmap_dma_params, memory),
                            .gpu_va = RD64(c->arg, rm_unmap_dma_params, dma_offset), .length = RD64(c->arg, rm_unmap_dma_params, size),
                            .status = RD32(c->arg, rm_unmap_dma_params, status), .source = VGT_MAP_RM_DMA };
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

/* VGT_CAPTURE_PROFILE's family of an escape. */
static int prof_family(uint32_t nr)
{
    switch (nr) {
    case ESC_RM_ALLOC: return SHIM_PROF_IOCTL_ALLOC;
    case ESC_RM_CONTROL: return SHIM_PROF_IOCTL_CONTROL;
    case ESC_RM_FREE: return SHIM_PROF_IOCTL_FREE;
    case ESC_RM_MAP_MEMORY: case ESC_RM_MAP_MEMORY_DMA: case ESC_RM_UNMAP_MEMORY_DMA: return SHIM_PROF_IOCTL_MAP;
    case ESC_RM_ALLOC_MEMORY: case ESC_RM_VID_HEAP_CONTROL: return SHIM_PROF_IOCTL_MEMORY;
    default: return SHIM_PROF_IOCTL_OTHER;
    }
}

int shim_rm_ioctl(int fd, int node, unsigned long request, void *arg)
{
    SHIM_SPAN(span);
    rm_call c = { .fd = fd, .node = node, .nr = (uint32_t)(request & 0xff), .size = (uint32_t)((request >> 16) & 0x3fff),
                  .request = request, .arg = arg };
    uint8_t xfer[sizeof(rm_xfer_params)];
    if (c.nr == ESC_XFER && c.size >= sizeof(rm_xfer_params) && shim_copy_in(xfer, arg, sizeof xfer) == sizeof xfer) {
        c.nr = RD32(xfer, rm_xfer_params, cmd);
        c.size = RD32(xfer, rm_xfer_params, size);
        c.arg = (uint8_t *)(uintptr_t)RD64(xfer, rm_xfer_params, ptr);
        if (c.size > XFER_MAX) c.size = XFER_MAX;
        c.request = RM_REQUEST(c.nr, c.size);
    }
    c.in = calloc(1, c.size ? c.size : 1);
    int readable = c.in && shim_copy_in(c.in, c.arg, c.size) == c.size;
    if (readable && c.nr == ESC_RM_ALLOC && c.size >= sizeof(rm_alloc_params))
        params_snapshot(&c, RD64(c.in, rm_alloc_params, params_ptr),
                        class_params_size(RD32(c.in, rm_alloc_params, cls),
                                          c.size >= sizeof(rm_alloc64_params) ? RD32(c.in, rm_alloc64_params, params_size)
                                                                              : RD32(c.in, rm_alloc_params, params_size)));
    if (readable && c.nr == ESC_RM_CONTROL && c.size >= sizeof(rm_control_params))
        params_snapshot(&c, RD64(c.in, rm_control_params, params_ptr), RD32(c.in, rm_control_params, params_size));
    SHIM_SPAN(call);
    c.rc = g_libc.ioctl(fd, request, arg);
    int saved = errno;
    SHIM_SPAN_END(call, SHIM_PROF_REAL);
    if (readable) {
        uint64_t t0 = vgt_now_ns();
        if (g_shim.active) switch (c.nr) {
        case ESC_RM_ALLOC: on_alloc(&c); break;
        case ESC_RM_ALLOC_MEMORY: if (c.size >= sizeof(rm_alloc_memory_params)) on_alloc_memory(&c); else record_ioctl(&c); break;
        case ESC_RM_FREE: on_free(&c); break;
        case ESC_RM_CONTROL: on_control(&c); break;
        case ESC_RM_VID_HEAP_CONTROL: on_vid_heap(&c); break;
        case ESC_RM_MAP_MEMORY: on_map_memory(&c); break;
        case ESC_RM_MAP_MEMORY_DMA: on_map_dma(&c); break;
        case ESC_RM_UNMAP_MEMORY_DMA: on_unmap_dma(&c); break;
        default: record_ioctl(&c); break;
        }
        if (g_shim.active && !vgt_nv_abi_knows_escape(c.nr)) shim_abi_unknown(SHIM_UNKNOWN_ESCAPE, c.nr);
        atomic_fetch_add(&g_shim_time.ioctl_ns, vgt_now_ns() - t0);
    }
    free(c.in);
    free(c.pin);
    free(c.pout);
    SHIM_SPAN_END(span, prof_family(c.nr));
    errno = saved;
    return c.rc;
}
