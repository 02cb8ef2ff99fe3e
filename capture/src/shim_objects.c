/* shim_objects.c: what the shim knows about RM objects and mappings, and the memory views derived from
 * them (a GPU VA range whose bytes the shim can read through a CPU pointer).
 *
 * A view exists where a GPU map (RM_MAP_MEMORY_DMA dmaOffset, UVM_MAP_EXTERNAL_ALLOCATION base) and a CPU
 * map (RM_MAP_MEMORY + mmap, or the user address of an OS-descriptor allocation) cover the same bytes of
 * the same memory object (client, handle). CUDA's unified VA shows up here as views whose GPU VA equals
 * their CPU address; that equality is derived from the two recorded maps, never assumed. The one
 * exception is a mapping of /dev/nvidia-uvm itself: UVM places its memory at GPU VA == CPU VA by
 * definition, so that mmap is a view by itself (shim_uvm_range_add).
 * All functions here run with g_shim.mu held. */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define OBJ_SLOTS (1u << 16)   /* power of two; far above the few thousand objects a driver makes */

static shim_object *objs;      /* open addressing, linear probing, backward-shift deletion */
static uint32_t nobjs;

typedef struct cpu_map { uint32_t client, device, memory; uint64_t offset, length, cpu; int implicit; } cpu_map;
typedef struct gpu_map { uint32_t client, device, va_space, memory, source; uint64_t offset, length, gpu_va; } gpu_map;
typedef struct view { uint32_t client, memory; uint64_t gpu_va, length, cpu; } view;

static cpu_map *cmaps; static uint32_t ncmaps, capcmaps;
static gpu_map *gmaps; static uint32_t ngmaps, capgmaps;
static view *views; static uint32_t nviews, capviews;

/* Class lists (numbers from NVIDIA open-gpu-kernel-modules src/common/sdk/nvidia/inc/class/cl*.h). */
static const uint32_t USERMODE_CLASSES[] = { 0xc361 /* VOLTA */, 0xc461 /* TURING */, 0xc561 /* AMPERE */,
                                             0xc661 /* HOPPER */, 0xc761 /* BLACKWELL */ };
static const uint32_t CHANNEL_CLASSES[] = { 0xc36f, 0xc46f, 0xc56f, 0xc66f, 0xc76f, 0xc86f, 0xc96f, 0xca6f };
static const uint32_t MEMORY_CLASSES[] = { 0x3e /* SYSTEM */, 0x40 /* LOCAL_USER */, 0x71 /* OS_DESCRIPTOR */,
                                           0x3f /* LOCAL_PRIVILEGED */ };

static int in_list(uint32_t v, const uint32_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++) if (list[i] == v) return 1;
    return 0;
}
int shim_class_is_usermode(uint32_t cls) { return in_list(cls, USERMODE_CLASSES, sizeof USERMODE_CLASSES / 4); }
int shim_class_is_channel(uint32_t cls) { return in_list(cls, CHANNEL_CLASSES, sizeof CHANNEL_CLASSES / 4); }
int shim_class_is_memory(uint32_t cls) { return in_list(cls, MEMORY_CLASSES, sizeof MEMORY_CLASSES / 4); }

static uint32_t slot_of(uint32_t client, uint32_t handle)
{
    uint64_t k = ((uint64_t)client << 32 | handle) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 40) & (OBJ_SLOTS - 1);
}

shim_object *shim_obj_find(uint32_t client, uint32_t handle)
{
    if (!objs) return NULL;
    for (uint32_t i = slot_of(client, handle), n = 0; n < OBJ_SLOTS; i = (i + 1) & (OBJ_SLOTS - 1), n++) {
        if (!objs[i].used) return NULL;
        if (objs[i].client == client && objs[i].handle == handle) return &objs[i];
    }
    return NULL;
}

shim_object *shim_obj_add(uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls)
{
    if (!objs && !(objs = calloc(OBJ_SLOTS, sizeof *objs))) return NULL;
    shim_object *o = shim_obj_find(client, handle);
    if (!o) {
        if (nobjs >= OBJ_SLOTS * 3 / 4) return NULL;
        uint32_t i = slot_of(client, handle);
        while (objs[i].used) i = (i + 1) & (OBJ_SLOTS - 1);
        o = &objs[i];
        nobjs++;
    }
    memset(o, 0, sizeof *o);
    *o = (shim_object){ .client = client, .handle = handle, .parent = parent, .cls = cls, .used = 1,
                        .is_memory = (uint8_t)shim_class_is_memory(cls), .is_channel = (uint8_t)shim_class_is_channel(cls),
                        .is_usermode = (uint8_t)shim_class_is_usermode(cls) };
    return o;
}

void shim_obj_remove(uint32_t client, uint32_t handle)
{
    shim_object *o = shim_obj_find(client, handle);
    if (!o) return;
    uint32_t i = (uint32_t)(o - objs);
    objs[i].used = 0;
    nobjs--;
    /* Backward-shift: move later members of the probe run into the hole. */
    for (uint32_t j = (i + 1) & (OBJ_SLOTS - 1); objs[j].used; j = (j + 1) & (OBJ_SLOTS - 1)) {
        uint32_t home = slot_of(objs[j].client, objs[j].handle);
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            objs[i] = objs[j];
            objs[j].used = 0;
            i = j;
        }
    }
}

shim_object *shim_obj_child(uint32_t client, uint32_t parent)
{
    if (!objs || nobjs == 0) return NULL;
    for (uint32_t i = 0; i < OBJ_SLOTS; i++)
        if (objs[i].used && objs[i].client == client && objs[i].parent == parent && objs[i].handle != parent)
            return &objs[i];
    return NULL;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint32_t n = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* Whether a view made by the first CPU mapping of a memory object can skip its initial read: RM
 * allocated the memory in this capture (RM hands memory out zeroed: the 300 MB of initial contents the
 * six corpus traces recorded before this rule were all zero), the CPU had no mapping of it before (so
 * it wrote nothing untracked), and no doorbell rang since its first GPU mapping (so no GPU work can have
 * written it). The other order (CPU mapping first, then the GPU's) goes through shim_pristine.c.
 * shim_memtrack.c still reads the view's first page and falls back to a full read if that is not zero. */
static int fresh_view(const shim_object *o, int first_cpu_map)
{
    return o && o->rm_zeroed && first_cpu_map && (!o->gpu_mapped || shim_trap_doorbells() == o->doorbells_at_gpu_map);
}

static void view_add(uint32_t client, uint32_t memory, uint64_t gpu_va, uint64_t length, uint64_t cpu, int zeroed)
{
    for (uint32_t i = 0; i < nviews; i++)
        if (views[i].gpu_va == gpu_va && views[i].cpu == cpu && views[i].length == length) return;
    vgt_capture_view v = { .gpu_va = gpu_va, .length = length, .host = (const void *)(uintptr_t)cpu,
                           .client = client, .memory = memory };
    vgt_error err;
    if (vgt_capture_add_view(g_shim.cap, &v, &err) != VGT_OK) return;   /* overlaps a view we already read */
    if (grow((void **)&views, &capviews, nviews + 1, sizeof *views) != 0) {
        vgt_capture_remove_view(g_shim.cap, gpu_va, &err);
        return;
    }
    views[nviews++] = (view){ client, memory, gpu_va, length, cpu };
    shim_mem_view_added(gpu_va, length, (void *)(uintptr_t)cpu, client, memory, zeroed);
}

static void view_drop(uint32_t i)
{
    vgt_error err;
    shim_mem_view_removing(views[i].gpu_va, views[i].length);
    vgt_capture_remove_view(g_shim.cap, views[i].gpu_va, &err);
    views[i] = views[--nviews];
}

/* Views for the overlap of one CPU map and one GPU map of the same memory object. */
static void pair(const cpu_map *c, const gpu_map *g, int zeroed)
{
    if (c->client != g->client || c->memory != g->memory) return;
    uint64_t lo = c->offset > g->offset ? c->offset : g->offset;
    uint64_t ce = c->offset + c->length, ge = g->offset + g->length, hi = ce < ge ? ce : ge;
    if (lo >= hi) return;
    view_add(c->client, c->memory, g->gpu_va + (lo - g->offset), hi - lo, c->cpu + (lo - c->offset), zeroed);
}

void shim_cpu_map_add(uint32_t client, uint32_t device, uint32_t memory, uint64_t offset, uint64_t length,
                      uint64_t cpu, int implicit)
{
    if (grow((void **)&cmaps, &capcmaps, ncmaps + 1, sizeof *cmaps) != 0) return;
    cmaps[ncmaps] = (cpu_map){ client, device, memory, offset, length, cpu, implicit };
    shim_object *o = shim_obj_find(client, memory);
    int zeroed = fresh_view(o, o && o->cpu_maps == 0);
    if (o && o->rm_zeroed && o->cpu_maps == 0 && !o->gpu_mapped && !implicit && g_shim.memory_mode == SHIM_MEM_CHANGED)
        shim_pristine_add(cpu, length);   /* its view, when the GPU mapping comes, may then skip the read */
    if (o) o->cpu_maps++;
    for (uint32_t i = 0; i < ngmaps; i++) pair(&cmaps[ncmaps], &gmaps[i], zeroed);
    ncmaps++;
}

void shim_cpu_unmap_range(uint64_t cpu, uint64_t length)
{
    shim_pristine_drop(cpu, length);
    for (uint32_t i = 0; i < nviews;) {
        if (views[i].cpu < cpu + length && cpu < views[i].cpu + views[i].length) view_drop(i);
        else i++;
    }
    for (uint32_t i = 0; i < ncmaps;) {
        cpu_map *m = &cmaps[i];
        if (!m->implicit && m->cpu < cpu + length && cpu < m->cpu + m->length) {
            vgt_rec_cpu_unmap u = { .client = m->client, .device = m->device, .memory = m->memory,
                                    .cpu_address = m->cpu, .length = m->length };
            vgt_error err;
            if (vgt_write_cpu_unmap(g_shim.w, vgt_now_ns(), &u, &err) != VGT_OK) shim_write_failed(&err);
            cmaps[i] = cmaps[--ncmaps];
        } else i++;
    }
}

void shim_gpu_map_add(uint32_t client, uint32_t device, uint32_t va_space, uint32_t memory, uint64_t offset,
                      uint64_t length, uint64_t gpu_va, uint32_t source)
{
    if (grow((void **)&gmaps, &capgmaps, ngmaps + 1, sizeof *gmaps) != 0) return;
    gmaps[ngmaps] = (gpu_map){ client, device, va_space, memory, source, offset, length, gpu_va };
    shim_object *o = shim_obj_find(client, memory);
    if (o && !o->gpu_mapped) {
        o->gpu_mapped = 1;
        o->doorbells_at_gpu_map = shim_trap_doorbells();
    }
    for (uint32_t i = 0; i < ncmaps; i++) pair(&cmaps[i], &gmaps[ngmaps], 0);   /* the CPU may have written */
    ngmaps++;
}

void shim_gpu_unmap_range(uint64_t gpu_va, uint64_t length)
{
    for (uint32_t i = 0; i < nviews;) {
        if (views[i].gpu_va < gpu_va + length && gpu_va < views[i].gpu_va + views[i].length) view_drop(i);
        else i++;
    }
    for (uint32_t i = 0; i < ngmaps;) {
        if (gmaps[i].gpu_va < gpu_va + length && gpu_va < gmaps[i].gpu_va + gmaps[i].length) gmaps[i] = gmaps[--ngmaps];
        else i++;
    }
}

void shim_gpu_unmap(uint32_t client, uint32_t memory, uint64_t gpu_va, uint32_t source)
{
    for (uint32_t i = 0; i < ngmaps; i++) {
        gpu_map *g = &gmaps[i];
        if (g->client == client && g->gpu_va == gpu_va && (memory == 0 || g->memory == memory)) {
            uint64_t len = g->length;
            shim_gpu_unmap_range(gpu_va, len);
            return;
        }
    }
    (void)source;
}

void *shim_cpu_pointer(uint32_t client, uint32_t memory, uint64_t offset, uint64_t length)
{
    for (uint32_t i = 0; i < ncmaps; i++) {
        const cpu_map *m = &cmaps[i];
        if (m->client == client && m->memory == memory && offset >= m->offset && offset + length <= m->offset + m->length)
            return (void *)(uintptr_t)(m->cpu + (offset - m->offset));
    }
    return NULL;
}

void shim_uvm_range_add(uint64_t va, uint64_t length) { view_add(0, 0, va, length, va, 0); }

void shim_memory_freed(uint32_t client, uint32_t memory)
{
    for (uint32_t i = 0; i < nviews;) {
        if (views[i].client == client && views[i].memory == memory) view_drop(i);
        else i++;
    }
    for (uint32_t i = 0; i < ngmaps;) {
        if (gmaps[i].client == client && gmaps[i].memory == memory) gmaps[i] = gmaps[--ngmaps];
        else i++;
    }
    for (uint32_t i = 0; i < ncmaps;) {
        if (cmaps[i].client == client && cmaps[i].memory == memory && cmaps[i].implicit) cmaps[i] = cmaps[--ncmaps];
        else i++;
    }
}

int shim_cpu_map_at(uint64_t cpu, shim_cpu_map_info *out)
{
    for (uint32_t i = 0; i < ncmaps; i++) {
        const cpu_map *m = &cmaps[i];
        if (!m->implicit && m->cpu == cpu) {
            *out = (shim_cpu_map_info){ m->client, m->device, m->memory, m->offset, m->length };
            return 1;
        }
    }
    return 0;
}

/* A forked child starts with nothing: the parent's objects belong to the parent's RM clients (the child
 * makes its own when it opens the GPU), and its maps are the parent's. The tables' memory is reused. */
void shim_objects_reset(void)
{
    if (objs) memset(objs, 0, (size_t)OBJ_SLOTS * sizeof *objs);
    nobjs = 0;
    ncmaps = ngmaps = nviews = 0;
}
