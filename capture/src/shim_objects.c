/* shim_objects.c: which RM classes are which kind of object, as the flags the capture's registry keeps
 * (capture.h, vgt_capture_register_object). The objects, their mappings and the memory views they make
 * live in that registry (capture/embed/capture_objects.c, capture_maps.c), not here. */
#include "shim.h"

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

uint32_t shim_class_flags(uint32_t cls)
{
    return (shim_class_is_memory(cls) ? VGT_CAPTURE_OBJ_MEMORY : 0) | (shim_class_is_channel(cls) ? VGT_CAPTURE_OBJ_CHANNEL : 0) |
           (shim_class_is_usermode(cls) ? VGT_CAPTURE_OBJ_USERMODE : 0);
}
