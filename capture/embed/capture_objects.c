/* capture_objects.c: the RM objects a capture knows: (client, handle) -> parent, class, flags, and for
 * memory what decides whether its first view must be read (capture_maps.c).
 * Open addressing with linear probing and backward-shift deletion; the table is allocated at the first
 * object, so a host that never registers objects pays nothing. */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

#define OBJ_SLOTS (1u << 16)   /* power of two; far above the few thousand objects a driver makes */

static uint32_t slot_of(uint32_t client, uint32_t handle)
{
    uint64_t k = ((uint64_t)client << 32 | handle) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 40) & (OBJ_SLOTS - 1);
}

cap_object *cap_object_find(vgt_capture *c, uint32_t client, uint32_t handle)
{
    if (!c->objects) return NULL;
    for (uint32_t i = slot_of(client, handle), n = 0; n < OBJ_SLOTS; i = (i + 1) & (OBJ_SLOTS - 1), n++) {
        if (!c->objects[i].used) return NULL;
        if (c->objects[i].client == client && c->objects[i].handle == handle) return &c->objects[i];
    }
    return NULL;
}

static cap_object *object_add(vgt_capture *c, uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls,
                              uint32_t flags)
{
    if (!c->objects && !(c->objects = calloc(OBJ_SLOTS, sizeof *c->objects))) return NULL;
    cap_object *o = cap_object_find(c, client, handle);
    if (!o) {
        if (c->nobjects >= OBJ_SLOTS * 3 / 4) return NULL;
        uint32_t i = slot_of(client, handle);
        while (c->objects[i].used) i = (i + 1) & (OBJ_SLOTS - 1);
        o = &c->objects[i];
        c->nobjects++;
    }
    *o = (cap_object){ .client = client, .handle = handle, .parent = parent, .cls = cls, .used = 1, .flags = (uint8_t)flags };
    return o;
}

static void object_remove(vgt_capture *c, cap_object *o)
{
    cap_object *t = c->objects;
    uint32_t i = (uint32_t)(o - t);
    t[i].used = 0;
    c->nobjects--;
    /* Backward-shift: move later members of the probe run into the hole. */
    for (uint32_t j = (i + 1) & (OBJ_SLOTS - 1); t[j].used; j = (j + 1) & (OBJ_SLOTS - 1)) {
        uint32_t home = slot_of(t[j].client, t[j].handle);
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            t[i] = t[j];
            t[j].used = 0;
            i = j;
        }
    }
}

/* Any live child of (client, parent), or NULL. */
static cap_object *object_child(vgt_capture *c, uint32_t client, uint32_t parent)
{
    if (!c->objects || c->nobjects == 0) return NULL;
    for (uint32_t i = 0; i < OBJ_SLOTS; i++) {
        cap_object *o = &c->objects[i];
        if (o->used && o->client == client && o->parent == parent && o->handle != parent) return o;
    }
    return NULL;
}

static vgt_status register_locked(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                                  uint32_t flags, vgt_error *err)
{
    if (object_add(c, client, handle, parent, cls, flags)) return VGT_OK;
    return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "capture: object table full at handle 0x%x", handle);
}

vgt_status vgt_capture_register_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                                       uint32_t flags, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = register_locked(c, client, parent, handle, cls, flags, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

uint32_t vgt_capture_object_flags(vgt_capture *c, uint32_t client, uint32_t handle)
{
    pthread_mutex_lock(&c->mu);
    const cap_object *o = cap_object_find(c, client, handle);
    uint32_t flags = o ? o->flags : 0;
    pthread_mutex_unlock(&c->mu);
    return flags;
}

void cap_cpu_map_add(vgt_capture *c, const vgt_rec_cpu_map *m, int implicit);   /* capture_maps.c */

vgt_status vgt_capture_mem_alloc(vgt_capture *c, const vgt_rec_mem_alloc *m, uint32_t flags, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_mem_alloc(c->w, vgt_now_ns(), m, err);
    if (m->status == 0) {
        vgt_error reg;
        if (register_locked(c, m->client, m->parent, m->handle, m->cls, flags | VGT_CAPTURE_OBJ_MEMORY, &reg) != VGT_OK &&
            rc == VGT_OK) {
            *err = reg;
            rc = reg.code;
        }
        if (m->cpu_address) {   /* an OS descriptor: the program's own pages are its CPU mapping */
            vgt_rec_cpu_map own = { .client = m->client, .device = m->parent, .memory = m->handle, .length = m->size,
                                    .cpu_address = m->cpu_address };
            cap_cpu_map_add(c, &own, 1);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* The object and, recursively, its children: a TSG's channels, a channel's engines, a device's memory. */
static void forget_locked(vgt_capture *c, uint32_t client, uint32_t handle, int depth)
{
    cap_object *o = cap_object_find(c, client, handle);
    uint32_t flags = o ? o->flags : 0;
    if (flags & VGT_CAPTURE_OBJ_MEMORY) cap_memory_freed(c, client, handle);
    if (!o || (flags & VGT_CAPTURE_OBJ_CHANNEL)) cap_channel_forget(c, client, handle);
    if (!o) return;
    object_remove(c, o);
    if (depth < 8) {
        cap_object *child;
        while ((child = object_child(c, client, handle)) != NULL) forget_locked(c, child->client, child->handle, depth + 1);
    }
}

void vgt_capture_forget_object(vgt_capture *c, uint32_t client, uint32_t handle)
{
    if (!cap_lock_live(c)) return;
    forget_locked(c, client, handle, 0);
    pthread_mutex_unlock(&c->mu);
}
