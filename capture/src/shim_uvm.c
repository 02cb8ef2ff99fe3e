/* shim_uvm.c: /dev/nvidia-uvm ioctls -> records and GPU mappings in the capture's registry. UVM requests
 * are plain numbers (not _IOC-encoded), so the parameter size comes from the ABI table
 * (trace-format/facts/rm_abi.txt, vgt_nv_uvm_params_size: the layouts of open-gpu-kernel-modules 580
 * kernel-open/nvidia-uvm/uvm_ioctl.h); an ioctl not in it is recorded without parameters rather than by
 * guessing how much to read. */
#include <errno.h>
#include <stdlib.h>

#include "shim.h"
#include "shim_copy.h"
#include "vgt/nv_abi.h"
#include "vgt/nv_facts.h"

#define RD32(p, T, f) shim_rd32(p, (uint32_t)offsetof(T, f))
#define RD64(p, T, f) shim_rd64(p, (uint32_t)offsetof(T, f))

enum { UVM_MAP_EXTERNAL_ALLOCATION = UVM_REQ_MAP_EXTERNAL_ALLOCATION, UVM_FREE = UVM_REQ_FREE };

static uint32_t uvm_size(unsigned long request) { return vgt_nv_uvm_params_size(request); }

static void record(unsigned long request, int rc, const uint8_t *in, const uint8_t *out, uint32_t n)
{
    vgt_rec_ioctl r = { .node = VGT_NODE_UVM, .request = (uint32_t)request, .result = rc, .params_length = n,
                        .params_in = in, .params_out = out };
    shim_record(VGT_REC_IOCTL, &r);
}

/* UVM_MAP_EXTERNAL_ALLOCATION_PARAMS (uvm_map_external_params): base, length, offset, hClient, hMemory,
 * rmStatus. */
static void on_map_external(int rc, const uint8_t *out)
{
    vgt_rec_gpu_map g = { .client = RD32(out, uvm_map_external_params, client), .memory = RD32(out, uvm_map_external_params, memory),
                          .gpu_va = RD64(out, uvm_map_external_params, base), .length = RD64(out, uvm_map_external_params, length),
                          .offset = RD64(out, uvm_map_external_params, offset), .status = RD32(out, uvm_map_external_params, status),
                          .source = VGT_MAP_UVM_EXTERNAL };
    if (rc != 0 && g.status == 0) g.status = 0xffffffffu;
    vgt_error err;
    if (vgt_capture_gpu_map(g_shim.cap, &g, &err) != VGT_OK) shim_write_failed(&err);   /* views form when status is 0 */
}

/* UVM_FREE_PARAMS (uvm_range_params): base, length, rmStatus: unmaps whatever the range held. */
static void on_uvm_free(int rc, const uint8_t *out)
{
    vgt_rec_gpu_unmap u = { .gpu_va = RD64(out, uvm_range_params, base), .length = RD64(out, uvm_range_params, length),
                            .status = RD32(out, uvm_range_params, status), .source = VGT_MAP_UVM_EXTERNAL };
    if (rc != 0 && u.status == 0) u.status = 0xffffffffu;
    vgt_error err;
    if (vgt_capture_gpu_unmap_range(g_shim.cap, &u, &err) != VGT_OK) shim_write_failed(&err);
}

int shim_uvm_ioctl(int fd, unsigned long request, void *arg)
{
    SHIM_SPAN(span);
    uint32_t n = uvm_size(request);
    uint8_t *in = n ? calloc(2, n) : NULL;
    int readable = in && shim_copy_in(in, arg, n) == n;
    SHIM_SPAN(call);
    int rc = g_libc.ioctl(fd, request, arg);
    int saved = errno;
    SHIM_SPAN_END(call, SHIM_PROF_REAL);
    uint8_t *out = in ? in + n : NULL;
    if (readable && shim_copy_in(out, arg, n) != n) readable = 0;
    if (!g_shim.active) { }
    else if (readable && request == UVM_MAP_EXTERNAL_ALLOCATION) on_map_external(rc, out);
    else if (readable && request == UVM_FREE) { record(request, rc, in, out, n); on_uvm_free(rc, out); }
    else record(request, rc, readable ? in : NULL, readable ? out : NULL, readable ? n : 0);
    if (g_shim.active && !vgt_nv_abi_knows_uvm((uint32_t)request)) shim_abi_unknown(SHIM_UNKNOWN_UVM, (uint32_t)request);
    free(in);
    SHIM_SPAN_END(span, SHIM_PROF_IOCTL_UVM);
    errno = saved;
    return rc;
}
