/* cuda_cap.h: the capture's second interposition layer, the CUDA driver API (libcuda), beside the RM
 * layer of shim.h and writing into the same trace (docs/trace-format.md section 5, 0x0032-0x0037).
 *
 * Files, one job each:
 *   cuda_hook.c   the table of wrapped entry points; how a caller reaches a wrapper: the exported symbol
 *                 (LD_PRELOAD), dlsym(handle, name) on libcuda, and cuGetProcAddress / _v2 (the way the
 *                 CUDA runtime finds the driver API): the address the driver returns is matched against
 *                 the exported addresses of the entry points we wrap, and our wrapper is returned instead
 *   cuda_state.c  what the layer remembers between calls: device allocations (a copy's direction), the
 *                 owner chain function -> module -> image (images written at first use), parameter
 *                 layouts, streams being captured into graphs, graphs' copy nodes, asynchronous
 *                 device-to-host copies waiting for a synchronization
 *   cuda_proc.c   cuGetProcAddress and cuGetProcAddress_v2
 *   cuda_image.c  the size and kind of a module image given only its address (fatbin, ELF cubin, PTX)
 *   cuda_launch.c the module, function, launch and graph wrappers
 *   cuda_nodefn.c a graph kernel node's function the program never looked up: its owner, at instantiation
 *   cuda_mem.c    the memory, stream, event and synchronization wrappers
 *
 * Every wrapper calls the real entry point and returns its result unchanged: the capture is transparent.
 * It records only when the capture is active in this process and the call is not made from inside another
 * wrapped call (libcuda calling its own entry points). Each record's call head carries the number of
 * GPFIFO_SUBMIT records written before and after the real call (vgt_capture_submits): the link.
 * Locks: the layer's own mutex (cuda_state.c) guards its tables and is never held across a real call or
 * a record write. */
#ifndef VGT_CAPTURE_CUDA_CAP_H
#define VGT_CAPTURE_CUDA_CAP_H

#include <stdint.h>

#include "shim.h"
#include "vgt/cuda.h"
#include "vgt/cuda_abi.h"

/* ---- cuda_hook.c ---- */
/* The real entry point behind a wrapper: resolved on first use (the next definition after the shim, else
 * libcuda.so.1 if loaded), or set by the dlsym / cuGetProcAddress hooks from what the driver returned. */
void *cu_real(void **slot, const char *name);
#define CU_REAL(sym) ((__typeof__(&sym))cu_real(&cu_real_##sym, #sym))
/* What cuGetProcAddress answered for symbol: our wrapper when p is an exported entry point we wrap. */
void *cu_proc_hook(const char *symbol, void *p);
/* An entry point of libcuda we call but do not wrap (cuFuncGetParamInfo, graph queries); NULL if absent. */
void *cu_lib_sym(const char *name);

/* ---- a call being recorded ---- */
typedef struct cu_call {
    int rec;                      /* 1: record this call */
    vgt_cuda_call_head head;
    shim_span span, real;         /* VGT_CAPTURE_PROFILE: the whole wrapper, and its real call */
} cu_call;
/* At the wrapper's return (CU_CALL's cleanup): the wrapper's own time to the profile. */
void cu_call_done(cu_call *c);
#define CU_CALL(c) cu_call c __attribute__((cleanup(cu_call_done)))
/* Before the real call: whether to record (capture active, not nested), the submission count. */
void cu_begin(cu_call *c, uint32_t api, uint32_t flags);
/* After it: the result and the submission count now; leaves the nesting level. */
void cu_end(cu_call *c, CUresult r);
void cu_write(uint16_t type, const void *rec);
uint64_t cu_data_max(void);       /* VGT_CAPTURE_CUDA_DATA_MAX: bytes of one copy's data kept (16 MiB) */

/* ---- cuda_image.c ---- */
/* Bytes of the image at p (follows a fatbin wrapper to its fatbin: *data then points there); 0 if unknown. */
uint64_t cu_image_size(const void *p, const void **data, uint32_t *kind);

/* ---- cuda_state.c ---- */
void cu_state_lock(void);
void cu_state_unlock(void);
/* Images: remember one by hash, written when a launch first needs it (cu_image_for_function): embedded
 * (CUDA_IMAGE), or named by the file that holds it (CUDA_IMAGE_REF) as --cuda-images says. Returns the
 * hash (0 when unknown). copy: the caller's bytes may not outlive the call (keep a copy). path: the file
 * the image is (cuModuleLoad), or NULL. */
uint64_t cu_image_note(const void *image, uint64_t size, uint32_t kind, int copy, const char *path);
/* Owners: handle -> (owner handle, image hash, name), of a kind: a module or library load, a CUfunction,
 * a CUkernel (cuLibraryGetKernel). */
enum { CU_OWNER_LOAD = 0, CU_OWNER_FUNCTION = 1, CU_OWNER_KERNEL = 2 };
void cu_owner_set(uint64_t handle, uint64_t owner, uint64_t image_hash, const char *name, int kind);
const char *cu_owner_name(uint64_t handle);     /* valid until the handle is forgotten */
int cu_owner_kind(uint64_t handle);             /* CU_OWNER_*; -1: a handle never seen */
/* The handles of kind named name (any name: NULL), newest first: at most max into out; returns how many. */
uint32_t cu_owner_list(int kind, const char *name, uint64_t *out, uint32_t max);
/* Before a launch of function: write its module's image if not written yet. */
void cu_image_for_function(uint64_t function);
/* The parameter layout of a function: n parameters, offsets and sizes (8 bytes per parameter: u32
 * offset, u32 size); *bytes the buffer size. 0 when unknown. */
int cu_layout(CUfunction f, const uint8_t **layout, uint32_t *n, uint32_t *bytes);
/* Device allocations. */
void cu_alloc_add(uint64_t base, uint64_t size);
void cu_alloc_remove(uint64_t base);
int cu_is_device(uint64_t addr);
/* Streams being captured into graphs. */
void cu_capture_begin(uint64_t stream);
void cu_capture_end(uint64_t stream);
int cu_capturing(uint64_t stream);
/* Asynchronous device-to-host copies: recorded at the synchronization that makes them valid. */
void cu_pending_dtoh(uint64_t host, uint64_t dev, uint64_t size, uint64_t stream);
void cu_event_recorded(uint64_t event, uint64_t stream);
/* After a synchronization of stream (any: ~0ull; an event: its stream): DTOH_RESULT records. */
void cu_flush_dtoh(const cu_call *c, uint64_t stream, int any);
uint64_t cu_event_stream(uint64_t event);
/* Graph execs: the copy nodes whose host side matters at each launch. */
void cu_graph_copy_node(uint64_t exec, uint32_t node, uint32_t op, uint64_t dst, uint64_t src, uint64_t size);
/* At cuGraphLaunch, before the real call: the host bytes of its host-to-device copy nodes (records), and
 * its device-to-host copy nodes made pending on stream. */
void cu_graph_before_launch(uint64_t exec, uint64_t stream, const cu_call *c);
void cu_graph_forget(uint64_t exec);
/* At the end of the capture: a note of what was never synchronized. */
void cu_state_finish(void);

/* ---- cuda_nodefn.c ---- */
/* A graph kernel node's function (func, and the node's CUkernel kern where the driver gave one) that the
 * program never looked up: find what owns it and write its CUDA_FUNCTION record (api cuGraphInstantiate,
 * c's call head) before the node's record, so that a replay can load it. */
void cu_node_function(const cu_call *c, uint64_t func, uint64_t kern);

/* ---- cuda_launch.c ---- */
/* Pack kernelParams / extra into the parameter buffer (malloc'd, *len) by the function's layout. */
int cu_pack_params(CUfunction f, void **params, void **extra, uint8_t **buf, uint32_t *len, const uint8_t **layout,
                   uint32_t *layout_len);

#endif
