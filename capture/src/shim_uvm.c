/* shim_uvm.c: /dev/nvidia-uvm ioctls -> records and GPU mappings in the capture's registry. UVM requests are plain numbers (not _IOC-encoded), so
 * the parameter size comes from this table (sizes from open-gpu-kernel-modules 580
 * kernel-open/nvidia-uvm/uvm_ioctl.h); an ioctl not in
 * it is recorded without parameters rather than by guessing how much to read. */
#include <errno.h>
#include <stdlib.h>

#include "shim.h"
#include "shim_copy.h"

enum { UVM_REGISTER_GPU_VASPACE = 25, UVM_REGISTER_CHANNEL = 27, UVM_MAP_EXTERNAL_ALLOCATION = 33, UVM_FREE = 34,
       UVM_REGISTER_GPU = 37, UVM_CREATE_EXTERNAL_RANGE = 73, UVM_MM_INITIALIZE = 75, UVM_INITIALIZE = 0x30000001 };

typedef struct uvm_row { uint32_t request, size; } uvm_row;
static const uvm_row UVM_SIZES[] = {
    { UVM_INITIALIZE, 0x10 }, { UVM_REGISTER_GPU_VASPACE, 0x20 }, { UVM_REGISTER_CHANNEL, 0x38 },
    { UVM_MAP_EXTERNAL_ALLOCATION, 0x2430 }, { UVM_FREE, 0x18 }, { UVM_REGISTER_GPU, 0x28 },
    { UVM_CREATE_EXTERNAL_RANGE, 0x18 }, { UVM_MM_INITIALIZE, 8 },
};

static uint32_t uvm_size(unsigned long request)
{
    for (unsigned i = 0; i < sizeof UVM_SIZES / sizeof UVM_SIZES[0]; i++)
        if (UVM_SIZES[i].request == request) return UVM_SIZES[i].size;
    return 0;
}

static void record(unsigned long request, int rc, const uint8_t *in, const uint8_t *out, uint32_t n)
{
    vgt_rec_ioctl r = { .node = VGT_NODE_UVM, .request = (uint32_t)request, .result = rc, .params_length = n,
                        .params_in = in, .params_out = out };
    shim_record(VGT_REC_IOCTL, &r);
}

/* UVM_MAP_EXTERNAL_ALLOCATION_PARAMS: base 0, length 8, offset 0x10, hClient 0x2424, hMemory 0x2428,
 * rmStatus 0x242c. */
static void on_map_external(int rc, const uint8_t *out)
{
    vgt_rec_gpu_map g = { .client = shim_rd32(out, 0x2424), .memory = shim_rd32(out, 0x2428), .gpu_va = shim_rd64(out, 0),
                          .length = shim_rd64(out, 8), .offset = shim_rd64(out, 0x10), .status = shim_rd32(out, 0x242c),
                          .source = VGT_MAP_UVM_EXTERNAL };
    if (rc != 0 && g.status == 0) g.status = 0xffffffffu;
    vgt_error err;
    if (vgt_capture_gpu_map(g_shim.cap, &g, &err) != VGT_OK) shim_write_failed(&err);   /* views form when status is 0 */
}

/* UVM_FREE_PARAMS: base 0, length 8, rmStatus 0x10: unmaps whatever the range held. */
static void on_uvm_free(int rc, const uint8_t *out)
{
    vgt_rec_gpu_unmap u = { .gpu_va = shim_rd64(out, 0), .length = shim_rd64(out, 8), .status = shim_rd32(out, 0x10),
                            .source = VGT_MAP_UVM_EXTERNAL };
    if (rc != 0 && u.status == 0) u.status = 0xffffffffu;
    vgt_error err;
    if (vgt_capture_gpu_unmap_range(g_shim.cap, &u, &err) != VGT_OK) shim_write_failed(&err);
}

int shim_uvm_ioctl(int fd, unsigned long request, void *arg)
{
    uint32_t n = uvm_size(request);
    uint8_t *in = n ? calloc(2, n) : NULL;
    int readable = in && shim_copy_in(in, arg, n) == n;
    int rc = g_libc.ioctl(fd, request, arg);
    int saved = errno;
    uint8_t *out = in ? in + n : NULL;
    if (readable && shim_copy_in(out, arg, n) != n) readable = 0;
    if (!g_shim.active) { }
    else if (readable && request == UVM_MAP_EXTERNAL_ALLOCATION) on_map_external(rc, out);
    else if (readable && request == UVM_FREE) { record(request, rc, in, out, n); on_uvm_free(rc, out); }
    else record(request, rc, readable ? in : NULL, readable ? out : NULL, readable ? n : 0);
    free(in);
    errno = saved;
    return rc;
}
