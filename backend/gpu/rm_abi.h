/* rm_abi.h: the user-space ABI of the NVIDIA kernel driver (RM escapes and UVM ioctls) as our own
 * tables: request numbers, parameter layouts with their byte offsets checked at compile time, object
 * classes, control commands and field encodings. No NVIDIA header is included or copied; every fact
 * names the file of NVIDIA/open-gpu-kernel-modules (tag 580.x, "OGKM") or open-gpu-doc ("DOC") it
 * was read from, and the layouts were confirmed on the H200 by a standalone probe program (driver
 * 580.159.04, open kernel module).
 *
 * Internal to backend/gpu. Layout structs are packed the way the driver's are on x86-64 (natural
 * alignment); explicit pad fields keep every offset visible.
 */
#ifndef VGT_GPU_RM_ABI_H
#define VGT_GPU_RM_ABI_H

#include <stddef.h>
#include <stdint.h>

#define RM_CHECK_SIZE(t, n) _Static_assert(sizeof(t) == (n), #t " must be " #n " bytes")
#define RM_CHECK_OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), #t "." #f " must be at " #n)

/* ---- request numbers ------------------------------------------------------------------------- */
/* RM escapes: _IOWR('F', nr, size); the kernel checks nr and that size equals the struct's
 * (OGKM kernel-open/common/inc/nv-ioctl-numbers.h, src/nvidia/arch/nvalloc/unix/include/nv_escape.h). */
#define RM_REQUEST(nr, size) ((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | (0x46u << 8) | (uint32_t)(nr)))
enum {
    RM_ESC_ALLOC_MEMORY = 0x27,
    RM_ESC_FREE = 0x29,
    RM_ESC_CONTROL = 0x2a,
    RM_ESC_ALLOC = 0x2b,
    RM_ESC_MAP_MEMORY = 0x4e,
    RM_ESC_MAP_MEMORY_DMA = 0x57,
    RM_ESC_CARD_INFO = 0xc8,     /* NV_IOCTL_BASE + 0 */
    RM_ESC_REGISTER_FD = 0xc9,   /* NV_IOCTL_BASE + 1 */
};

/* UVM: the raw number is the request (OGKM kernel-open/nvidia-uvm/uvm_ioctl.h, uvm_linux_ioctl.h). */
enum {
    UVM_REQ_REGISTER_GPU_VASPACE = 25,
    UVM_REQ_UNREGISTER_GPU_VASPACE = 26,
    UVM_REQ_REGISTER_CHANNEL = 27,
    UVM_REQ_UNREGISTER_CHANNEL = 28,
    UVM_REQ_MAP_EXTERNAL_ALLOCATION = 33,
    UVM_REQ_FREE = 34,
    UVM_REQ_REGISTER_GPU = 37,
    UVM_REQ_UNREGISTER_GPU = 38,
    UVM_REQ_CREATE_EXTERNAL_RANGE = 73,
    UVM_REQ_MM_INITIALIZE = 75,
};
#define UVM_REQ_INITIALIZE 0x30000001ul

/* ---- object classes (OGKM src/common/sdk/nvidia/inc/class/clXXXX.h) ---------------------------- */
enum {
    RM_CLASS_ROOT_CLIENT = 0x0041,
    RM_CLASS_MEMORY_SYSTEM = 0x003e,
    RM_CLASS_MEMORY_LOCAL_USER = 0x0040,
    RM_CLASS_MEMORY_VIRTUAL = 0x0070,
    RM_CLASS_DEVICE = 0x0080,
    RM_CLASS_SUBDEVICE = 0x2080,
    RM_CLASS_CONTEXT_SHARE = 0x9067,
    RM_CLASS_VASPACE = 0x90f1,
    RM_CLASS_CHANNEL_GROUP = 0xa06c,
    RM_CLASS_TURING_USERMODE = 0xc461,
    RM_CLASS_AMPERE_USERMODE = 0xc561,
    RM_CLASS_HOPPER_USERMODE = 0xc661,
};

/* ---- control commands: class << 16 | interface << 8 | message ---------------------------------- */
enum {
    RM_CTRL_ROOT_GET_ID_INFO_V2 = 0x00000205,   /* ctrl/ctrl0000/ctrl0000gpu.h */
    RM_CTRL_DEV_GET_CLASSLIST_V2 = 0x00800292,  /* ctrl/ctrl0080/ctrl0080gpu.h */
    RM_CTRL_SUBDEV_GET_GID_INFO = 0x2080014a,   /* ctrl/ctrl2080/ctrl2080gpu.h */
    RM_CTRL_CHAN_GET_WORK_TOKEN = 0xc36f0108,   /* ctrl/ctrlc36f.h */
    RM_CTRL_TSG_GPFIFO_SCHEDULE = 0xa06c0101,   /* ctrl/ctrla06c.h */
};

/* ---- escape parameter blocks (OGKM src/common/sdk/nvidia/inc/nvos.h; the _with_fd wrappers in
 * src/nvidia/arch/nvalloc/unix/include/nv-unix-nvos-params-wrappers.h) --------------------------- */
typedef struct rm_free_params {          /* NVOS00 */
    uint32_t client, parent, object, status;
} rm_free_params;
RM_CHECK_SIZE(rm_free_params, 0x10);

typedef struct rm_alloc_params {         /* NVOS21 */
    uint32_t client, parent, object, cls;
    uint64_t params_ptr;
    uint32_t params_size, status;
} rm_alloc_params;
RM_CHECK_OFF(rm_alloc_params, params_ptr, 0x10);
RM_CHECK_OFF(rm_alloc_params, status, 0x1c);
RM_CHECK_SIZE(rm_alloc_params, 0x20);

typedef struct rm_control_params {       /* NVOS54 */
    uint32_t client, object, cmd, flags;
    uint64_t params_ptr;
    uint32_t params_size, status;
} rm_control_params;
RM_CHECK_OFF(rm_control_params, params_ptr, 0x10);
RM_CHECK_OFF(rm_control_params, status, 0x1c);
RM_CHECK_SIZE(rm_control_params, 0x20);

typedef struct rm_map_params {           /* NVOS33 + mapping fd */
    uint32_t client, device, memory, pad0;
    uint64_t offset, length, linear_address;
    uint32_t status, flags;
    int32_t map_fd;
    uint32_t pad1;
} rm_map_params;
RM_CHECK_OFF(rm_map_params, offset, 0x10);
RM_CHECK_OFF(rm_map_params, linear_address, 0x20);
RM_CHECK_OFF(rm_map_params, status, 0x28);
RM_CHECK_OFF(rm_map_params, flags, 0x2c);
RM_CHECK_OFF(rm_map_params, map_fd, 0x30);
RM_CHECK_SIZE(rm_map_params, 0x38);

typedef struct rm_map_dma_params {       /* NVOS46: 0x40 bytes in the 580 series */
    uint32_t client, device, dma, memory;
    uint64_t offset, length;
    uint32_t flags, flags2, kind_override, pad0;
    uint64_t dma_offset;
    uint32_t status, pad1;
} rm_map_dma_params;
RM_CHECK_OFF(rm_map_dma_params, flags, 0x20);
RM_CHECK_OFF(rm_map_dma_params, dma_offset, 0x30);
RM_CHECK_OFF(rm_map_dma_params, status, 0x38);
RM_CHECK_SIZE(rm_map_dma_params, 0x40);

/* NVOS46 flags: CACHE_SNOOP 4:4, PAGE_SIZE 11:8 (4 KiB = 1), DMA_OFFSET_FIXED 15:15 (nvos.h). */
#define RM_DMA_FLAG_SNOOP (1u << 4)
#define RM_DMA_FLAG_PAGE_4K (1u << 8)
#define RM_DMA_FLAG_OFFSET_FIXED (1u << 15)

/* CARD_INFO entry (OGKM kernel-open/common/inc/nv-ioctl.h); the escape takes any multiple of it. */
typedef struct rm_card_info {
    uint8_t valid, pad0[3];
    uint32_t pci_domain;
    uint8_t pci_bus, pci_slot, pci_function, pad1;
    uint16_t vendor_id, device_id;
    uint32_t gpu_id;
    uint16_t interrupt_line, pad2;
    uint64_t reg_address, reg_size, fb_address, fb_size;
    uint32_t minor_number;
    uint8_t dev_name[10], pad3[2];
} rm_card_info;
RM_CHECK_OFF(rm_card_info, gpu_id, 0x10);
RM_CHECK_OFF(rm_card_info, reg_address, 0x18);
RM_CHECK_OFF(rm_card_info, minor_number, 0x38);
RM_CHECK_SIZE(rm_card_info, 0x48);
#define RM_CARD_INFO_ENTRIES 32u   /* what the stock drivers pass */

/* ---- allocation parameters ---------------------------------------------------------------------- */
typedef struct rm_device_alloc {         /* NV0080_ALLOC_PARAMETERS (class/cl0080.h) */
    uint32_t device_id, client_share, target_client, target_device, flags, pad0;
    uint64_t va_space_size, va_start_internal, va_limit_internal;
    uint32_t va_mode, pad1;              /* 0: optional multiple VA spaces */
} rm_device_alloc;
RM_CHECK_OFF(rm_device_alloc, va_space_size, 0x18);
RM_CHECK_OFF(rm_device_alloc, va_mode, 0x30);
RM_CHECK_SIZE(rm_device_alloc, 0x38);

typedef struct rm_subdevice_alloc {      /* NV2080_ALLOC_PARAMETERS (class/cl2080.h) */
    uint32_t subdevice_id;
} rm_subdevice_alloc;

typedef struct rm_memvirt_alloc {        /* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS (class/cl0070.h) */
    uint64_t offset, limit;
    uint32_t va_space, pad;              /* 0: the device's default VA space */
} rm_memvirt_alloc;
RM_CHECK_SIZE(rm_memvirt_alloc, 0x18);

typedef struct rm_vaspace_alloc {        /* NV_VASPACE_ALLOCATION_PARAMETERS (nvos.h) */
    uint32_t index, flags;
    uint64_t va_size, va_start_internal, va_limit_internal;
    uint32_t big_page_size, pad0;
    uint64_t va_base;
    uint32_t pasid, pad1;
} rm_vaspace_alloc;
RM_CHECK_OFF(rm_vaspace_alloc, big_page_size, 0x20);
RM_CHECK_OFF(rm_vaspace_alloc, va_base, 0x28);
RM_CHECK_SIZE(rm_vaspace_alloc, 0x38);
#define RM_VASPACE_FLAG_EXTERNALLY_OWNED (1u << 3)    /* UVM owns the page tables */
#define RM_VASPACE_FLAG_PAGE_FAULTING (1u << 6)
/* The VA range tinygrad and the probe gave FERMI_VASPACE_A (49-bit space minus RM's top reserve). */
#define RM_VASPACE_BASE 0x1000ull
#define RM_VASPACE_SIZE 0x1fffffb000000ull

typedef struct rm_memory_alloc {         /* NV_MEMORY_ALLOCATION_PARAMS (nvos.h) */
    uint32_t owner, type, flags, width, height;
    int32_t pitch;
    uint32_t attr, attr2, format, compr_covg, zcull_covg, pad0;
    uint64_t range_lo, range_hi, size, alignment, offset, limit, address;
    uint32_t ctag_offset, va_space, internal_flags, tag;
    int32_t numa_node;
    uint32_t pad1;
} rm_memory_alloc;
RM_CHECK_OFF(rm_memory_alloc, attr, 0x18);
RM_CHECK_OFF(rm_memory_alloc, size, 0x40);
RM_CHECK_OFF(rm_memory_alloc, address, 0x60);
RM_CHECK_OFF(rm_memory_alloc, va_space, 0x6c);
RM_CHECK_SIZE(rm_memory_alloc, 0x80);
/* NVOS32 fields (nvos.h): TYPE, FLAGS bits, ATTR LOCATION 26:25, PHYSICALITY 28:27, COHERENCY 31:29,
 * ATTR2 ZBC 1:0, GPU_CACHEABLE 3:2; format 6 is the generic PTE kind. */
#define RM_MEM_TYPE_IMAGE 0u
#define RM_MEM_TYPE_NOTIFIER 13u
#define RM_MEM_FLAG_IGNORE_BANK_PLACEMENT 0x00000001u
#define RM_MEM_FLAG_ALIGNMENT_FORCE 0x00000100u
#define RM_MEM_FLAG_HANDLE_PROVIDED 0x00004000u
#define RM_MEM_FLAG_MAP_NOT_REQUIRED 0x00008000u
#define RM_MEM_FLAG_PERSISTENT_VIDMEM 0x00010000u
#define RM_MEM_ATTR_LOCATION_PCI (1u << 25)
#define RM_MEM_ATTR_NONCONTIGUOUS (3u << 27)
#define RM_MEM_ATTR_COHERENCY_CACHED (1u << 29)   /* NVOS32_ATTR_COHERENCY 31:29: 0 uncached, 1 cached, 2 WC */
#define RM_MEM_ATTR2_NO_ZBC 1u
#define RM_MEM_ATTR2_GPU_CACHED (1u << 2)
#define RM_MEM_ATTR2_GPU_UNCACHED (2u << 2)
#define RM_MEM_FORMAT_GENERIC 6u

typedef struct rm_tsg_alloc {            /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS (nvos.h) */
    uint32_t error_notifier, ecc_error_notifier, va_space, engine_type;
    uint8_t vgpu_plugin, pad[3];
} rm_tsg_alloc;
RM_CHECK_SIZE(rm_tsg_alloc, 0x14);
#define RM_ENGINE_TYPE_GRAPHICS 1u       /* NV2080_ENGINE_TYPE_GRAPHICS (class/cl2080_notification.h) */

/* NVOS04 flags (NV_CHANNEL_ALLOC_PARAMS.flags; OGKM src/common/sdk/nvidia/inc/nvos.h) that place a channel
 * inside its TSG: GROUP_CHANNEL_RUNQUEUE 4:4 and GROUP_CHANNEL_THREAD 29:28. The replay passes only these
 * of the captured flags on. */
#define RM_CHANNEL_FLAGS_PLACEMENT ((1u << 4) | (3u << 28))

typedef struct rm_ctxshare_alloc {       /* NV_CTXSHARE_ALLOCATION_PARAMETERS (nvos.h) */
    uint32_t va_space, flags, subctx_id; /* flags SUBCONTEXT 1:0: 0 sync (VEID 0, 3D), 1 async */
} rm_ctxshare_alloc;
RM_CHECK_SIZE(rm_ctxshare_alloc, 0x0c);

typedef struct rm_memdesc {              /* NV_MEMORY_DESC_PARAMS (alloc/alloc_channel.h) */
    uint64_t base, size;
    uint32_t address_space, cache_attrib;
} rm_memdesc;
RM_CHECK_SIZE(rm_memdesc, 0x18);

typedef struct rm_channel_alloc {        /* NV_CHANNEL_ALLOC_PARAMS (alloc/alloc_channel.h) */
    uint32_t error_notifier, object_buffer;
    uint64_t gpfifo_va;
    uint32_t gpfifo_entries, flags, context_share, va_space;
    uint32_t userd_memory[8];
    uint64_t userd_offset[8];
    uint32_t engine_type, cid, subdevice_id, ecc_error_notifier;
    rm_memdesc instance_mem, userd_mem, ramfc_mem, mthdbuf_mem;
    uint32_t phys_channel_group, internal_flags;
    rm_memdesc error_notifier_mem, ecc_error_notifier_mem;
    uint32_t process_id, subprocess_id;
    uint32_t encrypt_iv[3], decrypt_iv[3], hmac_nonce[8];
    uint32_t tpc_config_id, pad;
} rm_channel_alloc;
RM_CHECK_OFF(rm_channel_alloc, gpfifo_entries, 0x10);
RM_CHECK_OFF(rm_channel_alloc, userd_memory, 0x20);
RM_CHECK_OFF(rm_channel_alloc, userd_offset, 0x40);
RM_CHECK_OFF(rm_channel_alloc, engine_type, 0x80);
RM_CHECK_OFF(rm_channel_alloc, instance_mem, 0x90);
RM_CHECK_OFF(rm_channel_alloc, phys_channel_group, 0xf0);
RM_CHECK_OFF(rm_channel_alloc, process_id, 0x128);
RM_CHECK_OFF(rm_channel_alloc, tpc_config_id, 0x168);
RM_CHECK_SIZE(rm_channel_alloc, 0x170);

/* ---- control parameters -------------------------------------------------------------------------- */
typedef struct rm_id_info_v2 {           /* NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS */
    uint32_t gpu_id, gpu_flags, device_instance, subdevice_instance, sli_status, board_id, gpu_instance;
    int32_t numa_id;
} rm_id_info_v2;
RM_CHECK_SIZE(rm_id_info_v2, 0x20);

#define RM_CLASSLIST_V2_MAX 200u
typedef struct rm_classlist_v2 {         /* NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS */
    uint32_t count;
    uint32_t classes[RM_CLASSLIST_V2_MAX];
} rm_classlist_v2;
RM_CHECK_SIZE(rm_classlist_v2, 0x324);

typedef struct rm_gid_info {             /* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS */
    uint32_t index, flags, length;
    uint8_t data[256];
} rm_gid_info;
RM_CHECK_SIZE(rm_gid_info, 0x10c);
#define RM_GID_FLAGS_BINARY 2u           /* FORMAT 1:0 = BINARY, TYPE SHA1 */

typedef struct rm_work_token {           /* NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS */
    uint32_t token;
} rm_work_token;

typedef struct rm_schedule {             /* NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS */
    uint8_t enable, skip_submit, skip_enable;
} rm_schedule;
RM_CHECK_SIZE(rm_schedule, 3);

/* ---- UVM parameter blocks (OGKM kernel-open/nvidia-uvm/uvm_ioctl.h) ------------------------------- */
typedef struct uvm_initialize_params {
    uint64_t flags;
    uint32_t status, pad;
} uvm_initialize_params;
RM_CHECK_SIZE(uvm_initialize_params, 0x10);

typedef struct uvm_mm_initialize_params {
    int32_t uvm_fd;
    uint32_t status;
} uvm_mm_initialize_params;
RM_CHECK_SIZE(uvm_mm_initialize_params, 8);

typedef struct uvm_register_gpu_params {
    uint8_t uuid[16];
    uint8_t numa_enabled, pad[3];
    int32_t numa_node, rm_ctrl_fd;
    uint32_t client, smc_part_ref, status;
} uvm_register_gpu_params;
RM_CHECK_OFF(uvm_register_gpu_params, rm_ctrl_fd, 0x18);
RM_CHECK_OFF(uvm_register_gpu_params, status, 0x24);
RM_CHECK_SIZE(uvm_register_gpu_params, 0x28);

typedef struct uvm_uuid_params {         /* UNREGISTER_GPU and UNREGISTER_GPU_VASPACE */
    uint8_t uuid[16];
    uint32_t status;
} uvm_uuid_params;
RM_CHECK_SIZE(uvm_uuid_params, 0x14);

typedef struct uvm_register_vaspace_params {
    uint8_t uuid[16];
    int32_t rm_ctrl_fd;
    uint32_t client, va_space, status;
} uvm_register_vaspace_params;
RM_CHECK_OFF(uvm_register_vaspace_params, status, 0x1c);
RM_CHECK_SIZE(uvm_register_vaspace_params, 0x20);

typedef struct uvm_register_channel_params {
    uint8_t uuid[16];
    int32_t rm_ctrl_fd;
    uint32_t client, channel, pad0;
    uint64_t base, length;
    uint32_t status, pad1;
} uvm_register_channel_params;
RM_CHECK_OFF(uvm_register_channel_params, base, 0x20);
RM_CHECK_OFF(uvm_register_channel_params, status, 0x30);
RM_CHECK_SIZE(uvm_register_channel_params, 0x38);

typedef struct uvm_unregister_channel_params {
    uint8_t uuid[16];
    uint32_t client, channel, status;
} uvm_unregister_channel_params;
RM_CHECK_SIZE(uvm_unregister_channel_params, 0x1c);

typedef struct uvm_range_params {        /* CREATE_EXTERNAL_RANGE and FREE */
    uint64_t base, length;
    uint32_t status, pad;
} uvm_range_params;
RM_CHECK_SIZE(uvm_range_params, 0x18);

typedef struct uvm_gpu_mapping {         /* UvmGpuMappingAttributes (nv_uvm_user_types.h) */
    uint8_t uuid[16];
    uint32_t mapping_type;               /* 1: read/write/atomic */
    uint32_t caching_type, format_type, element_bits, compression_type;
} uvm_gpu_mapping;
RM_CHECK_SIZE(uvm_gpu_mapping, 0x24);

#define UVM_MAX_GPUS_ABI 256u
typedef struct uvm_map_external_params {
    uint64_t base, length, offset;
    uvm_gpu_mapping per_gpu[UVM_MAX_GPUS_ABI];
    uint64_t gpu_count;
    int32_t rm_ctrl_fd;
    uint32_t client, memory, status;
} uvm_map_external_params;
RM_CHECK_OFF(uvm_map_external_params, gpu_count, 0x2418);
RM_CHECK_OFF(uvm_map_external_params, rm_ctrl_fd, 0x2420);
RM_CHECK_OFF(uvm_map_external_params, status, 0x242c);
RM_CHECK_SIZE(uvm_map_external_params, 0x2430);

/* NVOS47 (RM_UNMAP_MEMORY_DMA, escape 0x58, 0x30 bytes; layout from open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvos.h NVOS47_PARAMETERS). */
typedef struct rm_unmap_dma_params {
    uint32_t client, device, dma, memory;
    uint32_t flags, pad0;
    uint64_t dma_offset, size;
    uint32_t status, pad1;
} rm_unmap_dma_params;
RM_CHECK_OFF(rm_unmap_dma_params, dma_offset, 0x18);
RM_CHECK_OFF(rm_unmap_dma_params, status, 0x28);
RM_CHECK_SIZE(rm_unmap_dma_params, 0x30);
#define RM_ESC_UNMAP_MEMORY_DMA 0x58u


/* ---- hardware facts the submit path uses --------------------------------------------------------- */
/* USERD (DOC classes/host/clc86f.h, control area): GPGet is read-only, GPPut is ours. */
enum {
    USERD_PUT = 0x40, USERD_GET = 0x44, USERD_REF = 0x48, USERD_PUT_HI = 0x4c,
    USERD_GET_HI = 0x60, USERD_GP_GET = 0x88, USERD_GP_PUT = 0x8c,
};
#define USERD_SIZE 0x200u                /* 512 bytes, 512-byte aligned */
/* Usermode page (DOC classes/host/clc661.h / clc361.h): timer and doorbell. */
#define USERMODE_SIZE 0x10000u
#define USERMODE_TIME_0 0x80u
#define USERMODE_TIME_1 0x84u
#define USERMODE_DOORBELL 0x90u          /* NOTIFY_CHANNEL_PENDING: write the work-submit token */
/* Error notifier: 16-byte NvNotification records (nvos.h); index 0 = channel error (RC), 1 = the
 * work-submit token (OGKM src/common/sdk/nvidia/inc/class/clc36f.h NOTIFIERS_*). */
#define NOTIFIER_RECORD_SIZE 16u
#define NOTIFIER_INDEX_ERROR 0u
#define NOTIFIER_INDEX_TOKEN 1u

#endif
