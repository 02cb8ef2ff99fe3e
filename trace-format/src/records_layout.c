/* records_layout.c: the payload layouts of docs/trace-format.md section 5, as data.
 *
 * Each row names the spec's field, its on-disk kind and the vgt_rec_* member it maps to. Fixed fields are
 * laid out back to back in row order (so the disk offset of a field is the sum of the widths before it);
 * blob rows come last, in the order the spec lists the blobs. tests/unit/test_format_layout.c checks that
 * the widths add up to each table's fixed size and that the offsets match the spec's. */
#include "records.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "le.h"

#define U32(s, f, m) {f, F_U32, 0, offsetof(s, m)}
#define X32(s, f, m) {f, F_X32, 0, offsetof(s, m)}
#define S32(s, f, m) {f, F_S32, 0, offsetof(s, m)}
#define U64(s, f, m) {f, F_U64, 0, offsetof(s, m)}
#define X64(s, f, m) {f, F_X64, 0, offsetof(s, m)}
#define RSV {"reserved", F_RSV, 0, 0}
#define BLOB(s, f, m, len) {f, F_BLOB, len, offsetof(s, m)}
#define TEXT(s, f, m, len) {f, F_TEXT, len, offsetof(s, m)}

#define S vgt_rec_session_start
static const rec_field f_session_start[] = {
    U64(S, "wall_ns", wall_ns), U32(S, "pid", pid), U32(S, "ppid", ppid),
    U32(S, "cmdline_length", cmdline_length), RSV, BLOB(S, "cmdline", cmdline, 3),
};
#undef S
#define S vgt_rec_session_end
static const rec_field f_session_end[] = {
    U64(S, "wall_ns", wall_ns), S32(S, "exit_status", exit_status), S32(S, "signal", signal),
    U32(S, "records_lost", records_lost), RSV,
};
#undef S
#define S vgt_rec_process_start
static const rec_field f_process_start[] = {
    U32(S, "pid", pid), U32(S, "ppid", ppid), U32(S, "exe_length", exe_length), RSV, TEXT(S, "exe", exe, 2),
};
#undef S
#define S vgt_rec_process_end
static const rec_field f_process_end[] = {
    U32(S, "pid", pid), S32(S, "exit_status", exit_status), S32(S, "signal", signal), RSV,
};
#undef S
#define S vgt_rec_rm_alloc
static const rec_field f_rm_alloc[] = {
    X32(S, "client", client), X32(S, "parent", parent), X32(S, "handle", handle), X32(S, "class", cls),
    X32(S, "status", status), U32(S, "params_length", params_length),
    BLOB(S, "params_in", params_in, 5), BLOB(S, "params_out", params_out, 5),
};
#undef S
#define S vgt_rec_rm_free
static const rec_field f_rm_free[] = {
    X32(S, "client", client), X32(S, "parent", parent), X32(S, "handle", handle), X32(S, "status", status),
};
#undef S
#define S vgt_rec_rm_control
static const rec_field f_rm_control[] = {
    X32(S, "client", client), X32(S, "object", object), X32(S, "cmd", cmd), X32(S, "status", status),
    X32(S, "flags", flags), U32(S, "params_length", params_length),
    BLOB(S, "params_in", params_in, 5), BLOB(S, "params_out", params_out, 5),
};
#undef S
#define S vgt_rec_mem_alloc
static const rec_field f_mem_alloc[] = {
    X32(S, "client", client), X32(S, "parent", parent), X32(S, "handle", handle), X32(S, "class", cls),
    U64(S, "size", size), X64(S, "cpu_address", cpu_address), X32(S, "flags", flags), X32(S, "attr", attr),
    X32(S, "attr2", attr2), U32(S, "aperture", aperture), X32(S, "status", status), RSV,
};
#undef S
#define S vgt_rec_gpu_map
static const rec_field f_gpu_map[] = {
    X32(S, "client", client), X32(S, "device", device), X32(S, "va_space", va_space), X32(S, "memory", memory),
    X64(S, "gpu_va", gpu_va), X64(S, "offset", offset), X64(S, "length", length), X32(S, "flags", flags),
    U32(S, "source", source), X32(S, "status", status), RSV,
};
#undef S
#define S vgt_rec_gpu_unmap
static const rec_field f_gpu_unmap[] = {
    X32(S, "client", client), X32(S, "device", device), X32(S, "va_space", va_space), X32(S, "memory", memory),
    X64(S, "gpu_va", gpu_va), X64(S, "length", length), U32(S, "source", source), X32(S, "status", status),
};
#undef S
#define S vgt_rec_cpu_map
static const rec_field f_cpu_map[] = {
    X32(S, "client", client), X32(S, "device", device), X32(S, "memory", memory), X32(S, "flags", flags),
    X64(S, "offset", offset), X64(S, "length", length), X64(S, "cpu_address", cpu_address),
    X32(S, "status", status), RSV,
};
#undef S
#define S vgt_rec_cpu_unmap
static const rec_field f_cpu_unmap[] = {
    X32(S, "client", client), X32(S, "device", device), X32(S, "memory", memory), RSV,
    X64(S, "cpu_address", cpu_address), X64(S, "length", length),
};
#undef S
#define S vgt_rec_ioctl
static const rec_field f_ioctl[] = {
    U32(S, "node", node), X32(S, "request", request), S32(S, "result", result),
    U32(S, "params_length", params_length), BLOB(S, "params_in", params_in, 3), BLOB(S, "params_out", params_out, 3),
};
#undef S
#define S vgt_rec_memory
static const rec_field f_memory[] = {
    X64(S, "gpu_va", gpu_va), U32(S, "length", length), U32(S, "reason", reason), X32(S, "memory", memory),
    X32(S, "flags", flags), BLOB(S, "data", data, 1),
};
#undef S
#define S vgt_rec_channel
static const rec_field f_channel[] = {
    X32(S, "client", client), X32(S, "parent", parent), X32(S, "handle", handle), X32(S, "class", cls),
    X64(S, "ring_va", ring_va), U32(S, "entries", entries), X32(S, "userd_memory", userd_memory),
    X64(S, "userd_offset", userd_offset), X64(S, "userd_gpu_va", userd_gpu_va), U32(S, "engine_type", engine_type),
    X32(S, "va_space", va_space), X32(S, "context_share", context_share), X32(S, "error_notifier", error_notifier),
    X32(S, "status", status), RSV,
};
#undef S
#define S vgt_rec_engine_object
static const rec_field f_engine_object[] = {
    X32(S, "client", client), X32(S, "channel", channel), X32(S, "handle", handle), X32(S, "class", cls),
    X32(S, "status", status), RSV,
};
#undef S
#define S vgt_rec_gpfifo_submit
static const rec_field f_gpfifo_submit[] = {
    X32(S, "client", client), X32(S, "channel", channel), X32(S, "token", token), X32(S, "flags", flags),
    U32(S, "gp_get_before", gp_get_before), U32(S, "gp_put_before", gp_put_before),
    U32(S, "gp_get_after", gp_get_after), U32(S, "gp_put_after", gp_put_after),
    U32(S, "entry_count", entry_count), U32(S, "segment_count", segment_count),
};
#undef S
#define S vgt_rec_work_submit_token
static const rec_field f_work_submit_token[] = {
    X32(S, "client", client), X32(S, "channel", channel), X32(S, "token", token), RSV,
};
#undef S
#define S vgt_rec_doorbell
static const rec_field f_doorbell[] = {
    X32(S, "token", token), X32(S, "channel", channel), X32(S, "offset", offset), X32(S, "flags", flags),
};
#undef S
#define S vgt_rec_channel_progress
static const rec_field f_channel_progress[] = {
    X32(S, "client", client), X32(S, "channel", channel), U32(S, "gp_get", gp_get), U32(S, "gp_put", gp_put),
    X32(S, "flags", flags), RSV,
};
#undef S
#define S vgt_rec_semaphore
static const rec_field f_semaphore[] = {
    X64(S, "gpu_va", gpu_va), X64(S, "value", value), U32(S, "size", size), X32(S, "flags", flags),
};
#undef S
#define S vgt_rec_channel_state
static const rec_field f_channel_state[] = {
    X32(S, "client", client), X32(S, "channel", channel), X32(S, "subdevice_mask", subdevice_mask),
    X32(S, "flags", flags), X64(S, "extended_base", extended_base),
    X32(S, "subch0_class", subch_class[0]), X32(S, "subch1_class", subch_class[1]),
    X32(S, "subch2_class", subch_class[2]), X32(S, "subch3_class", subch_class[3]),
    X32(S, "subch4_class", subch_class[4]), X32(S, "subch5_class", subch_class[5]),
    X32(S, "subch6_class", subch_class[6]), X32(S, "subch7_class", subch_class[7]),
    X32(S, "stored_subdevice_mask", stored_subdevice_mask), RSV,
};
#undef S
#define S vgt_rec_channel_methods
static const rec_field f_channel_methods[] = {
    X32(S, "client", client), X32(S, "channel", channel), X32(S, "flags", flags),
    U32(S, "writes_length", writes_length), BLOB(S, "writes", writes, 3),
};
#undef S
#define S vgt_rec_memory_cas
static const rec_field f_memory_cas[] = {
    X64(S, "gpu_va", gpu_va), U32(S, "length", length), U32(S, "reason", reason), X32(S, "memory", memory),
    X32(S, "flags", flags), U32(S, "op_count", op_count), U32(S, "patch_count", patch_count),
    U32(S, "literal_length", literal_length), RSV,
};
#undef S
#define S vgt_rec_cuda_module
static const rec_field f_cuda_module[] = {
    X64(S, "module", module), U32(S, "image_length", image_length), X32(S, "flags", flags),
    BLOB(S, "image", image, 1),
};
#undef S
#define S vgt_rec_cuda_launch
static const rec_field f_cuda_launch[] = {
    X64(S, "module", module), X64(S, "function", function), X64(S, "stream", stream),
    U32(S, "grid_x", grid[0]), U32(S, "grid_y", grid[1]), U32(S, "grid_z", grid[2]),
    U32(S, "block_x", block[0]), U32(S, "block_y", block[1]), U32(S, "block_z", block[2]),
    U32(S, "shared_bytes", shared_bytes), U32(S, "name_length", name_length),
    U32(S, "params_length", params_length), RSV, TEXT(S, "name", name, 10), BLOB(S, "params", params, 11),
};
#undef S
/* format 1.2: the common call head of the CUDA API records (vgt_cuda_call_head at member call) */
#define CALL(S) \
    U32(S, "api", call.api), S32(S, "result", call.result), U32(S, "thread", call.thread), X32(S, "flags", call.flags), \
    U64(S, "submits_before", call.submits_before), U64(S, "submits_after", call.submits_after)
#define S vgt_rec_cuda_image
static const rec_field f_cuda_image[] = {
    X64(S, "hash", hash), U32(S, "image_length", image_length), U32(S, "kind", kind), BLOB(S, "image", image, 1),
};
#undef S
#define S vgt_rec_cuda_image_ref
static const rec_field f_cuda_image_ref[] = {
    X64(S, "hash", hash), U64(S, "file_offset", file_offset), U64(S, "file_size", file_size),
    U32(S, "image_length", image_length), U32(S, "kind", kind), X32(S, "flags", flags),
    U32(S, "path_length", path_length), U32(S, "entries_length", entries_length), RSV,
    TEXT(S, "path", path, 6), BLOB(S, "entries", entries, 7),
};
#undef S
#define S vgt_rec_cuda_load
static const rec_field f_cuda_load[] = {
    CALL(S), X64(S, "handle", handle), X64(S, "image_hash", image_hash), U32(S, "path_length", path_length), RSV,
    TEXT(S, "path", path, 8),
};
#undef S
#define S vgt_rec_cuda_function
static const rec_field f_cuda_function[] = {
    CALL(S), X64(S, "function", function), X64(S, "owner", owner), U32(S, "name_length", name_length), RSV,
    TEXT(S, "name", name, 8),
};
#undef S
#define S vgt_rec_cuda_kernel
static const rec_field f_cuda_kernel[] = {
    CALL(S), X64(S, "function", function), X64(S, "stream", stream),
    U32(S, "grid_x", grid[0]), U32(S, "grid_y", grid[1]), U32(S, "grid_z", grid[2]),
    U32(S, "block_x", block[0]), U32(S, "block_y", block[1]), U32(S, "block_z", block[2]),
    U32(S, "shared_bytes", shared_bytes), U32(S, "params_length", params_length), X64(S, "graph_exec", graph_exec),
    U32(S, "node_index", node_index), U32(S, "layout_length", layout_length),
    BLOB(S, "params", params, 15), BLOB(S, "layout", layout, 18),
};
#undef S
#define S vgt_rec_cuda_memory
static const rec_field f_cuda_memory[] = {
    CALL(S), X64(S, "dst", dst), X64(S, "src", src), U64(S, "size", size), X64(S, "stream", stream),
    X64(S, "graph_exec", graph_exec), U32(S, "op", op), X32(S, "value", value), U32(S, "node_index", node_index),
    U32(S, "data_length", data_length), BLOB(S, "data", data, 14),
};
#undef S
#define S vgt_rec_cuda_call
static const rec_field f_cuda_call[] = {
    CALL(S), X64(S, "object", object), X64(S, "arg0", arg0), X64(S, "arg1", arg1),
};
#undef S
#undef CALL
#define S vgt_rec_marker
static const rec_field f_marker[] = { U32(S, "length", length), X32(S, "flags", flags), TEXT(S, "text", text, 0) };
#undef S
#define S vgt_rec_diagnostic
static const rec_field f_diagnostic[] = {
    U32(S, "severity", severity), U32(S, "code", code), U32(S, "length", length), RSV, TEXT(S, "text", text, 2),
};
#undef S

#define ROW(t, name, fixed, f, tail) {t, name, fixed, sizeof f / sizeof f[0], f, tail}
static const rec_layout layouts[] = {
    ROW(VGT_REC_SESSION_START, "SESSION_START", 24, f_session_start, 0),
    ROW(VGT_REC_SESSION_END, "SESSION_END", 24, f_session_end, 0),
    ROW(VGT_REC_PROCESS_START, "PROCESS_START", 16, f_process_start, 0),
    ROW(VGT_REC_PROCESS_END, "PROCESS_END", 16, f_process_end, 0),
    ROW(VGT_REC_RM_ALLOC, "RM_ALLOC", 24, f_rm_alloc, 0),
    ROW(VGT_REC_RM_FREE, "RM_FREE", 16, f_rm_free, 0),
    ROW(VGT_REC_RM_CONTROL, "RM_CONTROL", 24, f_rm_control, 0),
    ROW(VGT_REC_MEM_ALLOC, "MEM_ALLOC", 56, f_mem_alloc, 0),
    ROW(VGT_REC_GPU_MAP, "GPU_MAP", 56, f_gpu_map, 0),
    ROW(VGT_REC_GPU_UNMAP, "GPU_UNMAP", 40, f_gpu_unmap, 0),
    ROW(VGT_REC_CPU_MAP, "CPU_MAP", 48, f_cpu_map, 0),
    ROW(VGT_REC_CPU_UNMAP, "CPU_UNMAP", 32, f_cpu_unmap, 0),
    ROW(VGT_REC_IOCTL, "IOCTL", 16, f_ioctl, 0),
    ROW(VGT_REC_MEMORY, "MEMORY", 24, f_memory, 0),
    ROW(VGT_REC_CHANNEL, "CHANNEL", 72, f_channel, 0),
    ROW(VGT_REC_ENGINE_OBJECT, "ENGINE_OBJECT", 24, f_engine_object, 0),
    ROW(VGT_REC_GPFIFO_SUBMIT, "GPFIFO_SUBMIT", 40, f_gpfifo_submit, 1),
    ROW(VGT_REC_WORK_SUBMIT_TOKEN, "WORK_SUBMIT_TOKEN", 16, f_work_submit_token, 0),
    ROW(VGT_REC_DOORBELL, "DOORBELL", 16, f_doorbell, 0),
    ROW(VGT_REC_SEMAPHORE, "SEMAPHORE", 24, f_semaphore, 0),
    ROW(VGT_REC_CHANNEL_STATE, "CHANNEL_STATE", 64, f_channel_state, 0),   /* format 1.1 */
    ROW(VGT_REC_CHANNEL_METHODS, "CHANNEL_METHODS", 16, f_channel_methods, 0),   /* format 1.1 */
    ROW(VGT_REC_MEMORY_CAS, "MEMORY_CAS", 40, f_memory_cas, 0),   /* format 1.3 */
    ROW(VGT_REC_CHANNEL_PROGRESS, "CHANNEL_PROGRESS", 24, f_channel_progress, 0),   /* format 1.4 */
    ROW(VGT_REC_CUDA_MODULE, "CUDA_MODULE", 16, f_cuda_module, 0),
    ROW(VGT_REC_CUDA_LAUNCH, "CUDA_LAUNCH", 64, f_cuda_launch, 0),
    ROW(VGT_REC_CUDA_IMAGE, "CUDA_IMAGE", 16, f_cuda_image, 0),         /* format 1.2 */
    ROW(VGT_REC_CUDA_LOAD, "CUDA_LOAD", 56, f_cuda_load, 0),            /* format 1.2 */
    ROW(VGT_REC_CUDA_FUNCTION, "CUDA_FUNCTION", 56, f_cuda_function, 0),/* format 1.2 */
    ROW(VGT_REC_CUDA_KERNEL, "CUDA_KERNEL", 96, f_cuda_kernel, 0),      /* format 1.2 */
    ROW(VGT_REC_CUDA_MEMORY, "CUDA_MEMORY", 88, f_cuda_memory, 0),      /* format 1.2 */
    ROW(VGT_REC_CUDA_CALL, "CUDA_CALL", 56, f_cuda_call, 0),            /* format 1.2 */
    ROW(VGT_REC_CUDA_IMAGE_REF, "CUDA_IMAGE_REF", 48, f_cuda_image_ref, 0),   /* format 1.5 */
    ROW(VGT_REC_MARKER, "MARKER", 8, f_marker, 0),
    ROW(VGT_REC_DIAGNOSTIC, "DIAGNOSTIC", 16, f_diagnostic, 0),
};
#define NLAYOUTS (sizeof layouts / sizeof layouts[0])

const rec_layout *rec_layout_at(uint32_t i) { return i < NLAYOUTS ? &layouts[i] : NULL; }

const rec_layout *rec_layout_find(uint16_t type)
{
    for (uint32_t i = 0; i < NLAYOUTS; i++)
        if (layouts[i].type == type) return &layouts[i];
    return NULL;
}

const char *vgt_rec_type_name(uint16_t type)
{
    const rec_layout *l = rec_layout_find(type);
    return l ? l->name : NULL;
}

uint32_t vgt_rec_type_fixed_size(uint16_t type)
{
    const rec_layout *l = rec_layout_find(type);
    return l ? l->fixed : 0;
}

int vgt_rec_type_from_name(const char *name)
{
    if (!name || !*name) return -1;
    char *end = NULL;
    unsigned long v = strtoul(name, &end, 0);
    if (isdigit((unsigned char)name[0]) && end && !*end) return v >= 1 && v <= 0xFFFE ? (int)v : -1;
    for (uint32_t i = 0; i < NLAYOUTS; i++)
        if (!strcasecmp(layouts[i].name, name)) return layouts[i].type;
    return -1;
}

/* Struct members are uint32_t/int32_t or uint64_t, at the offsets the table gives. */
void rec_fixed_encode(const rec_layout *l, const void *p, uint8_t *out)
{
    const uint8_t *base = p;
    uint32_t off = 0;
    for (uint32_t i = 0; i < l->nfields; i++) {
        const rec_field *f = &l->fields[i];
        uint32_t w = rec_field_width(f->kind);
        if (f->kind == F_RSV) {
            le_put32(out + off, 0);
        } else if (w == 8) {
            uint64_t v;
            memcpy(&v, base + f->soff, 8);
            le_put64(out + off, v);
        } else if (w == 4) {
            uint32_t v;
            memcpy(&v, base + f->soff, 4);
            le_put32(out + off, v);
        }
        off += w;
    }
}

void rec_fixed_decode(const rec_layout *l, const uint8_t *in, void *p)
{
    uint8_t *base = p;
    uint32_t off = 0;
    for (uint32_t i = 0; i < l->nfields; i++) {
        const rec_field *f = &l->fields[i];
        uint32_t w = rec_field_width(f->kind);
        if (f->kind == F_RSV) {
            /* nothing: reserved */
        } else if (w == 8) {
            uint64_t v = le_get64(in + off);
            memcpy(base + f->soff, &v, 8);
        } else if (w == 4) {
            uint32_t v = le_get32(in + off);
            memcpy(base + f->soff, &v, 4);
        }
        off += w;
    }
}
