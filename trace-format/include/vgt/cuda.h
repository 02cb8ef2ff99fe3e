/* cuda.h: the CUDA driver API records of format 1.2 (docs/trace-format.md section 5, 0x0032-0x0037) as
 * tools use them: the numbers of the entry points, memory operations and image kinds with their names,
 * the call head every API record starts with, the rule that links an API call to the GPFIFO submissions
 * it caused, and a fold of a trace's CUDA records that counts them and checks their consistency.
 *
 * The numbers are part of the format (written by the capture, read by every tool): only ever add. */
#ifndef VGT_CUDA_H
#define VGT_CUDA_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The call head's api: which entry point was called. The versioned and per-thread-stream variants of
 * one entry point (cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds) share its number; the head's flags say
 * VGT_CUDA_CALL_PER_THREAD for the per-thread default stream variants. */
enum vgt_cuda_api {
    VGT_CUDA_INIT = 1,
    VGT_CUDA_MODULE_LOAD = 2,              /* cuModuleLoad (a file) */
    VGT_CUDA_MODULE_LOAD_DATA = 3,
    VGT_CUDA_MODULE_LOAD_DATA_EX = 4,
    VGT_CUDA_MODULE_LOAD_FAT_BINARY = 5,
    VGT_CUDA_LIBRARY_LOAD_DATA = 6,
    VGT_CUDA_LIBRARY_LOAD_FROM_FILE = 7,
    VGT_CUDA_MODULE_UNLOAD = 8,
    VGT_CUDA_LIBRARY_UNLOAD = 9,
    VGT_CUDA_MODULE_GET_FUNCTION = 10,
    VGT_CUDA_LIBRARY_GET_KERNEL = 11,
    VGT_CUDA_KERNEL_GET_FUNCTION = 12,
    VGT_CUDA_LAUNCH_KERNEL = 13,
    VGT_CUDA_LAUNCH_KERNEL_EX = 14,
    VGT_CUDA_LAUNCH_COOPERATIVE_KERNEL = 15,
    VGT_CUDA_GRAPH_LAUNCH = 16,
    VGT_CUDA_GRAPH_INSTANTIATE = 17,       /* also the api of the node records written at instantiation, and of
                                            * the CUDA_FUNCTION records of node functions never looked up */
    VGT_CUDA_GRAPH_EXEC_DESTROY = 18,
    VGT_CUDA_MEM_ALLOC = 19,
    VGT_CUDA_MEM_ALLOC_ASYNC = 20,
    VGT_CUDA_MEM_ALLOC_MANAGED = 21,
    VGT_CUDA_MEM_FREE = 22,
    VGT_CUDA_MEM_FREE_ASYNC = 23,
    VGT_CUDA_MEM_ALLOC_HOST = 24,
    VGT_CUDA_MEM_HOST_ALLOC = 25,
    VGT_CUDA_MEM_FREE_HOST = 26,
    VGT_CUDA_MEMCPY = 27,
    VGT_CUDA_MEMCPY_ASYNC = 28,
    VGT_CUDA_MEMCPY_HTOD = 29,
    VGT_CUDA_MEMCPY_HTOD_ASYNC = 30,
    VGT_CUDA_MEMCPY_DTOH = 31,
    VGT_CUDA_MEMCPY_DTOH_ASYNC = 32,
    VGT_CUDA_MEMCPY_DTOD = 33,
    VGT_CUDA_MEMCPY_DTOD_ASYNC = 34,
    VGT_CUDA_MEMSET_D8 = 35,
    VGT_CUDA_MEMSET_D8_ASYNC = 36,
    VGT_CUDA_MEMSET_D16 = 37,
    VGT_CUDA_MEMSET_D16_ASYNC = 38,
    VGT_CUDA_MEMSET_D32 = 39,
    VGT_CUDA_MEMSET_D32_ASYNC = 40,
    VGT_CUDA_STREAM_CREATE = 41,
    VGT_CUDA_STREAM_CREATE_WITH_PRIORITY = 42,
    VGT_CUDA_STREAM_DESTROY = 43,
    VGT_CUDA_STREAM_SYNCHRONIZE = 44,
    VGT_CUDA_STREAM_WAIT_EVENT = 45,
    VGT_CUDA_EVENT_CREATE = 46,
    VGT_CUDA_EVENT_RECORD = 47,
    VGT_CUDA_EVENT_SYNCHRONIZE = 48,
    VGT_CUDA_EVENT_DESTROY = 49,
    VGT_CUDA_CTX_SYNCHRONIZE = 50,
    VGT_CUDA_STREAM_BEGIN_CAPTURE = 51,
    VGT_CUDA_STREAM_END_CAPTURE = 52,
    VGT_CUDA_EVENT_RECORD_WITH_FLAGS = 53,
    VGT_CUDA_MODULE_GET_GLOBAL = 54,       /* a module global looked up: a CUDA_FUNCTION record (function: the
                                            * global's device address, owner: the module, name: the symbol) */
    VGT_CUDA_LIBRARY_GET_GLOBAL = 55,      /* the same for a library's global */
    VGT_CUDA_API_COUNT = 56                /* one past the largest number */
};

/* Call head flags common to every API record (bits 16..31; bits 0..15 belong to the record type). */
#define VGT_CUDA_CALL_PER_THREAD (1u << 16)   /* a _ptds/_ptsz variant: stream 0 is the per-thread stream */

/* CUDA_KERNEL flags (bits 0..15 of the call head's flags). */
#define VGT_CUDA_KERNEL_COOPERATIVE 1u        /* cuLaunchCooperativeKernel, or the attribute of cuLaunchKernelEx */
#define VGT_CUDA_KERNEL_GRAPH_NODE 2u         /* a kernel node of graph_exec, described at instantiation; it runs at
                                               * each CUDA_CALL cuGraphLaunch of graph_exec, not here */
#define VGT_CUDA_KERNEL_STREAM_CAPTURE 4u     /* launched into a stream being captured into a graph: not run here */
#define VGT_CUDA_KERNEL_PARAMS_UNKNOWN 8u     /* the parameter layout was not known: params is empty */
#define VGT_CUDA_KERNEL_ATTRS_DROPPED 16u     /* cuLaunchKernelEx attributes other than cooperative not recorded */

/* CUDA_MEMORY flags. */
#define VGT_CUDA_MEM_ASYNC 1u
#define VGT_CUDA_MEM_GRAPH_NODE 2u            /* a node of graph_exec (described at instantiation, or its host
                                               * data as of the cuGraphLaunch that follows) */
#define VGT_CUDA_MEM_STREAM_CAPTURE 4u        /* issued into a stream being captured: not run here */
#define VGT_CUDA_MEM_DATA_TRUNCATED 8u        /* data holds fewer bytes than size (the capture's limit) */
#define VGT_CUDA_MEM_DATA_LATER 16u           /* a device-to-host copy whose bytes a later DTOH_RESULT carries */

/* CUDA_MEMORY op. */
enum vgt_cuda_mem_op {
    VGT_CUDA_OP_ALLOC = 1,        /* dst = the device pointer, size */
    VGT_CUDA_OP_FREE = 2,         /* dst */
    VGT_CUDA_OP_HTOD = 3,         /* dst device, src host; data = the host bytes copied */
    VGT_CUDA_OP_DTOH = 4,         /* dst host, src device; data = the bytes that arrived (empty with DATA_LATER) */
    VGT_CUDA_OP_DTOD = 5,         /* dst, src device */
    VGT_CUDA_OP_MEMSET8 = 6,      /* dst, size in bytes, value */
    VGT_CUDA_OP_MEMSET16 = 7,
    VGT_CUDA_OP_MEMSET32 = 8,
    VGT_CUDA_OP_DTOH_RESULT = 9,  /* the bytes of an earlier DATA_LATER copy (dst host, src device, size), read at
                                   * the synchronization that made them valid */
    VGT_CUDA_OP_HOST_ALLOC = 10,  /* page-locked host memory: dst = the host pointer */
    VGT_CUDA_OP_HOST_FREE = 11,
    VGT_CUDA_OP_HTOH = 12,        /* a cuMemcpy between two host addresses */
    VGT_CUDA_OP_COUNT = 13
};

/* CUDA_IMAGE kind. */
enum vgt_cuda_image_kind { VGT_CUDA_IMAGE_UNKNOWN = 0, VGT_CUDA_IMAGE_FATBIN = 1, VGT_CUDA_IMAGE_CUBIN = 2,
                           VGT_CUDA_IMAGE_PTX = 3 };

const char *vgt_cuda_api_name(uint32_t api);      /* "cuLaunchKernel"; NULL when unknown */
const char *vgt_cuda_op_name(uint32_t op);        /* "htod"; NULL when unknown */
const char *vgt_cuda_image_kind_name(uint32_t kind);   /* "fatbin", "cubin", "ptx", "unknown" */
/* What an image's first bytes say it is (fatbin magic 0xBA55ED50 or the fatbin wrapper 0x466243B1, ELF,
 * else text: PTX). */
uint32_t vgt_cuda_image_kind_of(const void *image, uint64_t len);

/* ---- images referenced by file (CUDA_IMAGE_REF, format 1.5) ---- */
/* One entry of a fatbin, as CUDA_IMAGE_REF lists them (16 bytes on disk: u32 kind, u32 arch, u32 size,
 * u32 flags). kind: VGT_CUDA_IMAGE_CUBIN (an ELF), VGT_CUDA_IMAGE_PTX, or 0 (another kind of entry);
 * arch: the SM number (90 for sm_90); size: the entry's payload bytes in the fatbin (compressed when
 * flags has VGT_CUDA_FATBIN_COMPRESSED). */
#define VGT_CUDA_FATBIN_COMPRESSED 1u
typedef struct vgt_cuda_fatbin_entry { uint32_t kind, arch, size, flags; } vgt_cuda_fatbin_entry;
/* The entries of the fatbin at p (len bytes, starting with the fatbin magic 0xBA55ED50): at most max into
 * out (16 bytes each, little-endian) when out is not NULL; returns how many the fatbin has (0 when it is
 * not a fatbin or its entries run past len). */
uint32_t vgt_cuda_fatbin_entries(const void *p, uint64_t len, uint8_t *out, uint32_t max);
/* Entry i of a CUDA_IMAGE_REF's list (i < entries_length / 16). */
vgt_cuda_fatbin_entry vgt_cuda_image_ref_entry(const vgt_rec_cuda_image_ref *r, uint32_t i);
/* "sm_90 cubin 123456 B, sm_90 ptx 4567 B (compressed)": the entries as one line into buf (cut at n). */
void vgt_cuda_image_ref_entries_text(const vgt_rec_cuda_image_ref *r, char *buf, size_t n);
/* Read a referenced image from its file: the image_length bytes at file_offset of path, checked against
 * hash (xxh64). On VGT_OK, *bytes (when not NULL) is a malloc'd copy with one NUL byte after the image
 * (PTX text is then a C string). VGT_E_NOT_FOUND when the file cannot be opened, VGT_E_TRUNCATED when it
 * ends before the image does, VGT_E_CHECKSUM when the bytes there hash to something else; each message
 * names the image's hash, the path and the offset. */
vgt_status vgt_cuda_image_ref_load(const vgt_rec_cuda_image_ref *r, uint8_t **bytes, vgt_error *err);

/* 1 for the record types that start with the call head (0x0033-0x0037). */
int vgt_rec_is_cuda_api(uint16_t type);
/* The call head of such a record (VGT_E_FORMAT when the payload is shorter than 32 bytes). */
vgt_status vgt_cuda_decode_head(const vgt_record *r, vgt_cuda_call_head *h, vgt_error *err);

/* A trace cut out of a longer one numbers its submissions from the first it keeps: rewrite, in a copy of
 * such a record's payload (len >= 32), the call head's counters less dropped (the submissions before the
 * cut), never below 0. */
void vgt_cuda_rebase_head(uint8_t *payload, uint32_t len, uint64_t dropped);

/* ---- the link from an API call to the submissions it caused (docs/trace-format.md, "Linking") ----
 * Submissions are numbered 0, 1, ... in trace order (the n-th GPFIFO_SUBMIT record). A call whose
 * submits_after > submits_before is linked to [submits_before, submits_after): the doorbells rung while
 * it ran. A call that rang none (the driver queued its work) is linked, deferred, to the next
 * submission, submits_after, when the trace has one. */
typedef struct vgt_cuda_link {
    uint64_t first, count;       /* the linked submissions [first, first + count); count 0: none */
    int deferred;                /* 1: the work was queued, linked to the next submission */
} vgt_cuda_link;
void vgt_cuda_link_of(const vgt_cuda_call_head *h, uint64_t total_submits, vgt_cuda_link *out);
/* Whether a record's call puts work on the GPU (a launch run here, a graph launch, a copy or memset run
 * here): those must be linked to a submission. */
int vgt_cuda_does_work(const vgt_record *r, const vgt_cuda_call_head *h);

/* ---- a fold of a trace's CUDA records: counts and consistency ---- */
#define VGT_CUDA_SCAN_MAX_PROBLEMS 16u
typedef struct vgt_cuda_scan {
    uint64_t images, image_bytes;         /* CUDA_IMAGE and CUDA_IMAGE_REF records; bytes of both */
    uint64_t ref_images, ref_bytes;       /* of those, CUDA_IMAGE_REF: referenced by file, not stored */
    uint64_t loads, functions, launches, graph_nodes, graph_launches, memory_ops, calls;
    uint64_t legacy_modules, legacy_launches;   /* 1.0 CUDA_MODULE / CUDA_LAUNCH records */
    uint64_t work_calls, work_linked, work_deferred;
    uint64_t api_count[VGT_CUDA_API_COUNT];
    uint64_t problems;
    char problem[VGT_CUDA_SCAN_MAX_PROBLEMS][256];
    /* private: the records seen, to check references */
    uint64_t *img, nimg, capimg;          /* image hashes */
    uint64_t *fn, nfn, capfn;             /* function and kernel handles */
    struct vgt_cuda_scan_work *work;      /* work calls: seq and head, linked at the end */
    uint64_t nwork, capwork;
    uint64_t submits;                     /* GPFIFO_SUBMIT records seen */
} vgt_cuda_scan;

void vgt_cuda_scan_init(vgt_cuda_scan *s);
/* Fold one record (any type; GPFIFO_SUBMIT counts submissions). VGT_E_FORMAT for a malformed CUDA record. */
vgt_status vgt_cuda_scan_record(vgt_cuda_scan *s, const vgt_record *r, vgt_error *err);
/* At the end of the trace: link every work call and note those that link to no submission. */
void vgt_cuda_scan_finish(vgt_cuda_scan *s);
void vgt_cuda_scan_free(vgt_cuda_scan *s);
/* 1 when the trace holds any CUDA record. */
int vgt_cuda_scan_any(const vgt_cuda_scan *s);

#ifdef __cplusplus
}
#endif
#endif
