/* capture_nvos32.c: RM_VID_HEAP_CONTROL (escape 0x4A) parameters -> MEM_ALLOC.
 *
 * Layout of NVOS32_PARAMETERS (0xB8 bytes) transcribed from open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/nvos.h (595.45.04; the same in 580), checked offline against the
 * recorded payloads of corpus/vk_compute.vgt, vk_triangle.vgt and gl_egl.vgt (size == limit + 1):
 *   header  hRoot 0x00, hObjectParent 0x04, function 0x08, hVASpace 0x0c, ivcHeapNumber 0x10 (s16),
 *           status 0x14, total 0x18, free 0x20; the union 'data' starts at 0x28.
 *   AllocSize (2)               owner 28 hMemory 2c type 30 flags 34 attr 38 format 3c size 58
 *                               offset 68 attr2 90
 *   AllocTiledPitchHeight (6)   owner 28 hMemory 2c type 30 flags 34 attr 40 format 48 size 58
 *                               offset 68 attr2 90
 *   AllocSizeRange (14)         owner 28 hMemory 2c type 30 flags 34 attr 38 format 3c size 50
 *                               offset 60 attr2 88
 *   AllocOsDesc (27)            hMemory 28 type 2c flags 30 attr 34 attr2 38 descriptor 40 limit 48
 *   Free (3)                    owner 28 hMemory 2c flags 30
 * Field meanings (same header): ATTR_LOCATION is attr bits 26:25 (0 vidmem, 1 PCI, 3 any);
 * ALLOC_FLAGS_VIRTUAL is 0x00080000 (a VA range in hVASpace, no backing). Which class RM gives the
 * object is derived from those, as RM does for heap allocations: vidmem 0x40 (NV01_MEMORY_LOCAL_USER),
 * PCI 0x3e (NV01_MEMORY_SYSTEM), virtual 0x50a0 (NV50_MEMORY_VIRTUAL), OS descriptor 0x71. */
#include "vgt/capture.h"

#define NVOS32_ALLOC_FLAGS_VIRTUAL 0x00080000u
#define NVOS32_ATTR_LOCATION_SHIFT 25
#define NVOS32_ATTR_LOCATION_MASK 3u
enum { LOC_VIDMEM = 0, LOC_PCI = 1, LOC_ANY = 3 };

/* Where each allocating function keeps its fields (offsets into NVOS32_PARAMETERS). */
typedef struct alloc_layout {
    uint32_t function;
    uint16_t handle, type, flags, attr, format, size, offset, attr2;
} alloc_layout;

static const alloc_layout LAYOUTS[] = {
    { VGT_NVOS32_ALLOC_SIZE, 0x2c, 0x30, 0x34, 0x38, 0x3c, 0x58, 0x68, 0x90 },
    { VGT_NVOS32_ALLOC_TILED_PITCH_HEIGHT, 0x2c, 0x30, 0x34, 0x40, 0x48, 0x58, 0x68, 0x90 },
    { VGT_NVOS32_ALLOC_SIZE_RANGE, 0x2c, 0x30, 0x34, 0x38, 0x3c, 0x50, 0x60, 0x88 },
};

static uint32_t rd32(const uint8_t *p, uint32_t off)
{
    return (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
}
static uint64_t rd64(const uint8_t *p, uint32_t off) { return (uint64_t)rd32(p, off) | (uint64_t)rd32(p, off + 4) << 32; }

static void classify(vgt_rec_mem_alloc *m)
{
    uint32_t loc = (m->attr >> NVOS32_ATTR_LOCATION_SHIFT) & NVOS32_ATTR_LOCATION_MASK;
    if (m->flags & NVOS32_ALLOC_FLAGS_VIRTUAL) {
        m->cls = 0x50a0;
        m->aperture = VGT_APERTURE_UNKNOWN;
    } else if (loc == LOC_VIDMEM) {
        m->cls = 0x40;
        m->aperture = VGT_APERTURE_VIDMEM;
    } else if (loc == LOC_PCI) {
        m->cls = 0x3e;
        m->aperture = VGT_APERTURE_SYSMEM;
    } else {
        m->cls = 0;   /* LOCATION_ANY: RM picks; the parameters do not say which */
        m->aperture = VGT_APERTURE_UNKNOWN;
    }
}

static void decode_alloc(const uint8_t *p, const alloc_layout *l, vgt_capture_nvos32 *o)
{
    vgt_rec_mem_alloc *m = &o->alloc;
    m->handle = rd32(p, l->handle);
    o->type = rd32(p, l->type);
    m->flags = rd32(p, l->flags);
    m->attr = rd32(p, l->attr);
    o->format = rd32(p, l->format);
    m->size = rd64(p, l->size);
    o->offset = rd64(p, l->offset);
    m->attr2 = rd32(p, l->attr2);
    classify(m);
    o->is_alloc = 1;
}

static void decode_os_descriptor(const uint8_t *p, vgt_capture_nvos32 *o)
{
    vgt_rec_mem_alloc *m = &o->alloc;
    m->handle = rd32(p, 0x28);
    o->type = rd32(p, 0x2c);
    m->flags = rd32(p, 0x30);
    m->attr = rd32(p, 0x34);
    m->attr2 = rd32(p, 0x38);
    m->cpu_address = rd64(p, 0x40);
    m->size = rd64(p, 0x48) + 1;
    m->cls = 0x71;
    m->aperture = VGT_APERTURE_OS;
    o->is_alloc = 1;
}

vgt_status vgt_capture_nvos32_decode(const uint8_t *p, uint32_t len, vgt_capture_nvos32 *out, vgt_error *err)
{
    *out = (vgt_capture_nvos32){ 0 };
    if (!p || len < VGT_NVOS32_SIZE)
        return VGT_FAIL(err, VGT_E_TRUNCATED, VGT_NO_OFFSET, "NVOS32 parameters: %u bytes, expected 0x%x", len,
                        VGT_NVOS32_SIZE);
    out->function = rd32(p, 0x08);
    out->alloc.client = rd32(p, 0x00);
    out->alloc.parent = rd32(p, 0x04);
    out->va_space = rd32(p, 0x0c);
    out->alloc.status = rd32(p, 0x14);
    for (uint32_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++)
        if (LAYOUTS[i].function == out->function) { decode_alloc(p, &LAYOUTS[i], out); return VGT_OK; }
    if (out->function == VGT_NVOS32_ALLOC_OS_DESCRIPTOR) { decode_os_descriptor(p, out); return VGT_OK; }
    if (out->function == VGT_NVOS32_FREE) {
        out->is_free = 1;
        out->free_client = out->alloc.client;
        out->free_handle = rd32(p, 0x2c);
        return VGT_OK;
    }
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, 0x08, "NVOS32 function %u neither allocates nor frees", out->function);
}
