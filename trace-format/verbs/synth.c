/* synth.c: `vgt synth`: well-formed synthetic traces of a chosen shape, for tests and benchmarks.
 *
 * The trace is what a capture of a small compute program on an H200 would hold: a root client, device,
 * subdevice, usermode, VA space, TSG and context share; memory objects mapped at fixed GPU VAs; channels
 * of class 0xC86F with compute, copy, 3D and inline-to-memory engine objects and their work-submit tokens;
 * initial memory pages; then GPFIFO submissions whose push-buffer segments are valid method streams
 * (synth_pushbuf.c) with the memory they read recorded before them and what they write recorded after
 * them as "observed" MEMORY records, so that a replay can be checked.
 *
 * Invariants: the output depends only on the options (never on time, host or output path); the identity
 * says capture_mode=synthetic, so a synthetic trace never passes for a capture.
 *
 * Data pages are split by role so that engines never race on them within a submission:
 *   [0, P/2)     inputs: written by the "CPU" (MEMORY changed), read by copies
 *   [P/2, 3P/4)  inline-to-memory targets
 *   [3P/4, P)    copy-engine targets
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "vgt/cuda.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_abi.h"
#include "vgt/cli.h"
#include "vgt/trace.h"

enum synth_shape { SHAPE_PUSHBUF, SHAPE_MIXED, SHAPE_ALL_TYPES, SHAPE_TORCH, SHAPE_TRITON };
static const char *const shape_names[] = {"pushbuf", "mixed", "all-types", "torch", "triton"};

/* GPU VA layout (all below 2^40: a GPFIFO entry carries VA[39:0]) */
#define VA_RING 0x1000000000ull      /* + channel * 0x100000: ring at +0, USERD at +USERD_OFFSET */
#define RING_MEM_SIZE 0x10000ull
#define RING_ENTRIES 1024u
#define USERD_OFFSET 0x8000u
#define VA_PB 0x2000000000ull        /* + channel * 0x4000000: the channel's push-buffer pool */
#define PB_POOL_SIZE 0x400000ull
#define VA_DATA 0x4000000000ull
#define VA_QMD 0x5000000000ull
#define QMD_SLOTS 2048u
#define QMD_STRIDE 512u
#define VA_SEM 0x6000000000ull       /* + channel * 16: host release; + 0x800: copy; + 0x1000: QMD */
#define SEM_MEM_SIZE 0x10000ull
#define VA_CODE 0x7000000000ull
#define CODE_MEM_SIZE 0x1000ull
#define VA_SCRATCH 0x7800000000ull

#define PAGE 4096u
#define MAX_CHANNELS 64u
#define MAX_MEMORY_PAGES (1u << 20)  /* 4 GiB of data pages */
#define MAX_SEGMENTS 4u
#define SEGMENT_DWORDS (64u * 1024u / 4u)
#define MAX_OBSERVED 16u

#define CLIENT 0xC1D00001u
#define HANDLE_BASE 0x5C000001u
#define MAP_FLAGS_4K_FIXED (RM_DMA_FLAG_PAGE_4K | RM_DMA_FLAG_OFFSET_FIXED)

typedef struct synth_opts {
    const char *out;
    uint64_t submits;               /* UINT64_MAX: until `bytes` */
    uint64_t bytes;                 /* 0: by submits */
    uint64_t seed;
    uint32_t channels, memory_pages;
    int shape;
    vgt_writer_options wo;
} synth_opts;

typedef struct synth_channel {
    uint32_t handle, token, ring_mem, pb_mem, gp_put;
    uint64_t ring_va, pb_va, pb_cursor, sem_value, copy_value;
    int bound;
} synth_channel;

typedef struct observed {
    uint64_t va;
    uint32_t length;
} observed;

typedef struct synth {
    synth_opts o;
    vgt_writer *w;
    vgt_error *err;
    synth_rng rng;
    uint64_t ts, bytes, submit_no, launches;
    uint32_t next_handle, device, subdevice, vaspace, tsg, ctxshare;
    uint32_t data_mem, qmd_mem, sem_mem, code_mem, qmd_slot;
    synth_channel ch[MAX_CHANNELS];
    uint8_t *shadow;                /* data pages as the GPU sees them */
    uint8_t *scratch;               /* one segment's worth of bytes */
    uint8_t *wl_buf;                /* torch, triton: one tensor or kernel binary */
    vgt_pbw pb[MAX_SEGMENTS];
    observed obs[MAX_OBSERVED];
    uint32_t nobs;
} synth;

static uint64_t pad8(uint64_t n) { return (n + 7) & ~7ull; }

static uint64_t tick(synth *s)
{
    s->ts += 500 + synth_rng_below(&s->rng, 20000);
    return s->ts;
}

/* Record bytes (header + padded payload), the measure of --bytes. */
static void account(synth *s, uint16_t type, uint64_t blob_bytes)
{
    s->bytes += VGT_RECORD_HEADER_SIZE + pad8(vgt_rec_type_fixed_size(type) + blob_bytes);
}

static uint32_t new_handle(synth *s) { return s->next_handle++; }

/* ---- RM objects, memory and mappings ---- */

static vgt_status rm_alloc(synth *s, uint32_t parent, uint32_t cls, const void *params, uint32_t n, uint32_t *out)
{
    uint32_t h = cls == 0x41 ? CLIENT : new_handle(s);
    vgt_rec_rm_alloc a = {.client = CLIENT, .parent = parent, .handle = h, .cls = cls, .status = 0,
                          .params_length = n, .params_in = params, .params_out = params};
    account(s, VGT_REC_RM_ALLOC, 2 * pad8(n));
    *out = h;
    return vgt_write_rm_alloc(s->w, tick(s), &a, s->err);
}

static vgt_status rm_control(synth *s, uint32_t object, uint32_t cmd, const void *in, const void *out, uint32_t n)
{
    vgt_rec_rm_control c = {.client = CLIENT, .object = object, .cmd = cmd, .params_length = n,
                            .params_in = in, .params_out = out};
    account(s, VGT_REC_RM_CONTROL, 2 * pad8(n));
    return vgt_write_rm_control(s->w, tick(s), &c, s->err);
}

/* MEM_ALLOC + GPU_MAP (+ CPU_MAP for sysmem): a buffer at a fixed GPU VA, as RM_MAP_MEMORY_DMA would. */
static vgt_status mem_object(synth *s, uint32_t cls, uint64_t size, uint64_t va, uint32_t *out)
{
    int sysmem = cls == 0x3E;
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = s->device, .handle = new_handle(s), .cls = cls,
                           .size = size, .aperture = sysmem ? VGT_APERTURE_SYSMEM : VGT_APERTURE_VIDMEM};
    vgt_rec_gpu_map g = {.client = CLIENT, .device = s->device, .va_space = s->vaspace, .memory = m.handle,
                         .gpu_va = va, .length = size, .flags = MAP_FLAGS_4K_FIXED, .source = VGT_MAP_RM_DMA};
    *out = m.handle;
    account(s, VGT_REC_MEM_ALLOC, 0);
    account(s, VGT_REC_GPU_MAP, 0);
    VGT_TRY(vgt_write_mem_alloc(s->w, tick(s), &m, s->err));
    VGT_TRY(vgt_write_gpu_map(s->w, tick(s), &g, s->err));
    if (!sysmem) return VGT_OK;
    vgt_rec_cpu_map c = {.client = CLIENT, .device = s->device, .memory = m.handle, .length = size,
                         .cpu_address = 0x7F0000000000ull + (va >> 8)};
    account(s, VGT_REC_CPU_MAP, 0);
    return vgt_write_cpu_map(s->w, tick(s), &c, s->err);
}

static vgt_status memory(synth *s, uint64_t va, const uint8_t *data, uint32_t n, uint32_t reason, uint32_t mem)
{
    vgt_rec_memory m = {.gpu_va = va, .length = n, .reason = reason, .memory = mem, .data = data};
    account(s, VGT_REC_MEMORY, n);
    return vgt_write_memory(s->w, tick(s), &m, s->err);
}

static vgt_status rm_objects(synth *s)
{
    uint32_t h, dev_params[14] = {0, CLIENT}, sub_params[1] = {0};   /* NV0080 deviceId, hClientShare */
    VGT_TRY(rm_alloc(s, 0, 0x41, NULL, 0, &h));                       /* NV01_ROOT_CLIENT */
    VGT_TRY(rm_alloc(s, CLIENT, 0x80, dev_params, sizeof dev_params, &s->device));   /* NV01_DEVICE_0 */
    VGT_TRY(rm_alloc(s, s->device, RM_CLASS_SUBDEVICE, sub_params, sizeof sub_params, &s->subdevice)); /* NV20_SUBDEVICE_0 */
    VGT_TRY(rm_alloc(s, s->subdevice, RM_CLASS_HOPPER_USERMODE, NULL, 0, &h));
    VGT_TRY(rm_alloc(s, s->device, RM_CLASS_VASPACE, NULL, 0, &s->vaspace));    /* FERMI_VASPACE_A */
    VGT_TRY(rm_alloc(s, s->device, RM_CLASS_CHANNEL_GROUP, NULL, 0, &s->tsg)); /* KEPLER_CHANNEL_GROUP_A */
    uint32_t share[3] = {s->vaspace, 1, 0};                           /* hVASpace, SUBCONTEXT_ASYNC, subctxId */
    return rm_alloc(s, s->tsg, RM_CLASS_CONTEXT_SHARE, share, sizeof share, &s->ctxshare);   /* FERMI_CONTEXT_SHARE_A */
}

static vgt_status memory_objects(synth *s)
{
    VGT_TRY(mem_object(s, 0x40, (uint64_t)s->o.memory_pages * PAGE, VA_DATA, &s->data_mem));
    VGT_TRY(mem_object(s, 0x40, (uint64_t)QMD_SLOTS * QMD_STRIDE, VA_QMD, &s->qmd_mem));
    VGT_TRY(mem_object(s, 0x3E, SEM_MEM_SIZE, VA_SEM, &s->sem_mem));
    return mem_object(s, 0x40, CODE_MEM_SIZE, VA_CODE, &s->code_mem);
}

static vgt_status initial_memory(synth *s)
{
    /* torch, triton: the data is fresh memory (zero, not recorded), written by the program later */
    uint32_t recorded = s->o.shape == SHAPE_TORCH || s->o.shape == SHAPE_TRITON ? 0 : s->o.memory_pages;
    for (uint32_t p = 0; p < recorded; p++) {
        uint8_t *page = s->shadow + (uint64_t)p * PAGE;
        synth_fill_page(&s->rng, page, PAGE, p);
        VGT_TRY(memory(s, VA_DATA + (uint64_t)p * PAGE, page, PAGE, VGT_MEM_INITIAL, s->data_mem));
    }
    for (uint32_t off = 0; off < CODE_MEM_SIZE; off += PAGE) {   /* "SASS": noise */
        synth_fill_page(&s->rng, s->scratch, PAGE, 3);
        VGT_TRY(memory(s, VA_CODE + off, s->scratch, PAGE, VGT_MEM_INITIAL, s->code_mem));
    }
    memset(s->scratch, 0, PAGE);
    return memory(s, VA_SEM, s->scratch, PAGE, VGT_MEM_INITIAL, s->sem_mem);
}

static vgt_status channel(synth *s, uint32_t i)
{
    synth_channel *c = &s->ch[i];
    c->ring_va = VA_RING + (uint64_t)i * 0x100000;
    c->pb_va = VA_PB + (uint64_t)i * 0x4000000;
    VGT_TRY(mem_object(s, 0x3E, RING_MEM_SIZE, c->ring_va, &c->ring_mem));
    VGT_TRY(mem_object(s, 0x40, PB_POOL_SIZE, c->pb_va, &c->pb_mem));
    vgt_rec_channel r = {.client = CLIENT, .parent = s->tsg, .handle = new_handle(s), .cls = SYNTH_CLASS_CHANNEL,
                         .ring_va = c->ring_va, .entries = RING_ENTRIES, .userd_memory = c->ring_mem,
                         .userd_offset = USERD_OFFSET, .userd_gpu_va = c->ring_va + USERD_OFFSET,
                         .engine_type = 1, .va_space = s->vaspace, .context_share = s->ctxshare};
    c->handle = r.handle;
    account(s, VGT_REC_CHANNEL, 0);
    VGT_TRY(vgt_write_channel(s->w, tick(s), &r, s->err));
    static const uint32_t engines[] = {SYNTH_CLASS_COMPUTE, SYNTH_CLASS_COPY, SYNTH_CLASS_3D, SYNTH_CLASS_I2M};
    for (unsigned e = 0; e < sizeof engines / sizeof engines[0]; e++) {
        vgt_rec_engine_object o = {.client = CLIENT, .channel = c->handle, .handle = new_handle(s),
                                   .cls = engines[e]};
        account(s, VGT_REC_ENGINE_OBJECT, 0);
        VGT_TRY(vgt_write_engine_object(s->w, tick(s), &o, s->err));
    }
    c->token = (1u << 16) | (8u + i);   /* GH100 style (runlistId << 16) | chId; opaque to readers */
    uint8_t in[4] = {0}, out[4] = {(uint8_t)c->token, (uint8_t)(c->token >> 8), (uint8_t)(c->token >> 16), 0};
    VGT_TRY(rm_control(s, c->handle, RM_CTRL_CHAN_GET_WORK_TOKEN, in, out, 4));
    vgt_rec_work_submit_token t = {.client = CLIENT, .channel = c->handle, .token = c->token};
    account(s, VGT_REC_WORK_SUBMIT_TOKEN, 0);
    return vgt_write_work_submit_token(s->w, tick(s), &t, s->err);
}

/* ---- records that only the all-types shape carries ---- */

static vgt_status extras_start(synth *s)
{
    uint8_t params[16] = {0};
    vgt_rec_ioctl io = {.node = VGT_NODE_UVM, .request = (uint32_t)UVM_REQ_INITIALIZE, .params_length = 16,
                        .params_in = params, .params_out = params};
    account(s, VGT_REC_IOCTL, 32);
    VGT_TRY(vgt_write_ioctl(s->w, tick(s), &io, s->err));
    uint8_t classes[16] = {0xC0, 0xCB, 0, 0, 0xB5, 0xC8, 0, 0, 0x97, 0xCB, 0, 0, 0x40, 0xA1, 0, 0};
    VGT_TRY(rm_control(s, s->device, RM_CTRL_DEV_GET_CLASSLIST, classes, classes, sizeof classes));
    static const char exe[] = "/usr/bin/synthetic-child";
    vgt_rec_process_start ps = {.pid = 4243, .ppid = 4242, .exe = exe, .exe_length = sizeof exe - 1};
    account(s, VGT_REC_PROCESS_START, sizeof exe - 1);
    return vgt_write_process_start(s->w, tick(s), &ps, s->err);
}

/* Format 1.2: the CUDA driver API records, consistent with the trace (docs/trace-format.md "Linking"): the
 * launch and the copy are linked to the last submission, every other call to none. */
static vgt_status cuda_api_records(synth *s, const uint8_t *image, uint32_t n)
{
    uint64_t last = s->submit_no;   /* submissions written so far */
    vgt_cuda_call_head none = {.api = VGT_CUDA_MODULE_LOAD_DATA, .thread = 4242, .submits_before = last,
                               .submits_after = last};
    vgt_rec_cuda_image im = {.hash = 0x5eed5eed5eed5eedull, .image_length = n, .kind = VGT_CUDA_IMAGE_CUBIN, .image = image};
    account(s, VGT_REC_CUDA_IMAGE, n);
    VGT_TRY(vgt_write_cuda_image(s->w, tick(s), &im, s->err));
    /* format 1.5: an image named by its file (a library's fatbin of two entries), loaded by nothing here */
    static const char lib[] = "/usr/lib/libsynthetic_kernels.so";
    static const uint8_t entries[2 * VGT_CUDA_FATBIN_ENTRY_SIZE] = {
        2, 0, 0, 0, 90, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 1, 0, 0, 0,   /* sm_90 cubin, 1 MiB, compressed */
        3, 0, 0, 0, 90, 0, 0, 0, 0x00, 0x40, 0x00, 0x00, 0, 0, 0, 0};  /* sm_90 PTX, 16 KiB */
    vgt_rec_cuda_image_ref ref = {.hash = 0x5eed5eed00000002ull, .file_offset = 0x200000, .file_size = 0x800000,
                                  .image_length = 0x104100, .kind = VGT_CUDA_IMAGE_FATBIN, .path = lib,
                                  .path_length = sizeof lib - 1, .entries = entries, .entries_length = sizeof entries};
    account(s, VGT_REC_CUDA_IMAGE_REF, sizeof lib - 1 + sizeof entries);
    VGT_TRY(vgt_write_cuda_image_ref(s->w, tick(s), &ref, s->err));
    vgt_rec_cuda_load ld = {.call = none, .handle = 0x5555100000ull, .image_hash = im.hash};
    account(s, VGT_REC_CUDA_LOAD, 0);
    VGT_TRY(vgt_write_cuda_load(s->w, tick(s), &ld, s->err));
    static const char name[] = "_Z9synthetic_kernelPfS_i";
    vgt_rec_cuda_function fn = {.call = none, .function = 0x5555101000ull, .owner = ld.handle,
                                .name_length = sizeof name - 1, .name = name};
    fn.call.api = VGT_CUDA_MODULE_GET_FUNCTION;
    account(s, VGT_REC_CUDA_FUNCTION, sizeof name - 1);
    VGT_TRY(vgt_write_cuda_function(s->w, tick(s), &fn, s->err));
    vgt_rec_cuda_memory al = {.call = none, .dst = 0x7f0000200000ull, .size = 4096, .op = VGT_CUDA_OP_ALLOC};
    al.call.api = VGT_CUDA_MEM_ALLOC;
    account(s, VGT_REC_CUDA_MEMORY, 0);
    VGT_TRY(vgt_write_cuda_memory(s->w, tick(s), &al, s->err));
    uint8_t params[12] = {0x00, 0x00, 0x20, 0x00, 0x00, 0x7f, 0, 0, 0x00, 0x04, 0, 0};
    uint8_t layout[16] = {0, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0};
    vgt_rec_cuda_kernel k = {.call = none, .function = fn.function, .grid = {8, 1, 1}, .block = {128, 1, 1},
                             .params_length = sizeof params, .layout_length = sizeof layout, .params = params,
                             .layout = layout};
    k.call.api = VGT_CUDA_LAUNCH_KERNEL;
    if (last) k.call.submits_before = last - 1;
    account(s, VGT_REC_CUDA_KERNEL, pad8(sizeof params) + sizeof layout);
    VGT_TRY(vgt_write_cuda_kernel(s->w, tick(s), &k, s->err));
    vgt_rec_cuda_call sync = {.call = none};
    sync.call.api = VGT_CUDA_CTX_SYNCHRONIZE;
    account(s, VGT_REC_CUDA_CALL, 0);
    return vgt_write_cuda_call(s->w, tick(s), &sync, s->err);
}

static vgt_status extras_end(synth *s)
{
    uint8_t image[200];
    synth_fill_page(&s->rng, image, sizeof image, 3);
    vgt_rec_cuda_module m = {.module = 0x5555000000ull, .image_length = sizeof image, .image = image};
    account(s, VGT_REC_CUDA_MODULE, sizeof image);
    VGT_TRY(vgt_write_cuda_module(s->w, tick(s), &m, s->err));
    static const char name[] = "_Z9synthetic_kernelPfS_i";
    uint8_t params[20] = {0x00, 0x10, 0, 0, 0x40, 0, 0, 0, 0x00, 0x20, 0, 0, 0x40, 0, 0, 0, 0, 1, 0, 0};
    vgt_rec_cuda_launch l = {.module = m.module, .function = m.module + 0x1000, .stream = 0,
                             .grid = {64, 1, 1}, .block = {128, 1, 1}, .shared_bytes = 0,
                             .name_length = sizeof name - 1, .params_length = sizeof params, .name = name,
                             .params = params};
    account(s, VGT_REC_CUDA_LAUNCH, pad8(sizeof name - 1) + sizeof params);
    VGT_TRY(vgt_write_cuda_launch(s->w, tick(s), &l, s->err));
    VGT_TRY(cuda_api_records(s, image, sizeof image));
    static const char diag[] = "synthetic trace: no GPU was involved";
    vgt_rec_diagnostic d = {.severity = 0, .code = 0, .length = sizeof diag - 1, .text = diag};
    account(s, VGT_REC_DIAGNOSTIC, sizeof diag - 1);
    VGT_TRY(vgt_write_diagnostic(s->w, tick(s), &d, s->err));
    vgt_rec_process_end pe = {.pid = 4243, .exit_status = 0, .signal = 0};
    account(s, VGT_REC_PROCESS_END, 0);
    return vgt_write_process_end(s->w, tick(s), &pe, s->err);
}

/* Format 1.1's CHANNEL_STATE, stating the bindings each channel's first submission makes again with
 * SET_OBJECT (bind_subchannels), so that decoding the trace gives the same methods with or without it. */
static vgt_status channel_states(synth *s)
{
    for (uint32_t i = 0; i < s->o.channels; i++) {
        vgt_rec_channel_state cs = {.client = CLIENT, .channel = s->ch[i].handle, .subdevice_mask = 0xFFF,
                                    .stored_subdevice_mask = 0xFFF};
        cs.subch_class[SYNTH_SUBCH_3D] = SYNTH_CLASS_3D;
        cs.subch_class[SYNTH_SUBCH_COMPUTE] = SYNTH_CLASS_COMPUTE;
        cs.subch_class[SYNTH_SUBCH_I2M] = SYNTH_CLASS_I2M;
        cs.subch_class[SYNTH_SUBCH_COPY] = SYNTH_CLASS_COPY;
        account(s, VGT_REC_CHANNEL_STATE, 0);
        VGT_TRY(vgt_write_channel_state(s->w, tick(s), &cs, s->err));
        /* and a CHANNEL_METHODS restoring a value the channel already has at reset (MME shadow scratch 0
         * of the 3D class is 0), so replay and decode give the same results with or without it */
        uint8_t writes[VGT_CHANNEL_METHOD_SIZE];
        vgt_channel_method_put(writes, &(vgt_state_method){SYNTH_SUBCH_3D, NVCB97_SET_MME_SHADOW_SCRATCH(0), 0});
        vgt_rec_channel_methods cm = {CLIENT, s->ch[i].handle, 0, sizeof writes, writes};
        account(s, VGT_REC_CHANNEL_METHODS, sizeof writes);
        VGT_TRY(vgt_write_channel_methods(s->w, tick(s), &cm, s->err));
    }
    return VGT_OK;
}

/* A buffer that lives and dies mid-trace: slicing after it must leave it out. */
static vgt_status scratch_object(synth *s)
{
    uint32_t mem;
    VGT_TRY(mem_object(s, 0x3E, 2 * PAGE, VA_SCRATCH, &mem));
    synth_fill_page(&s->rng, s->scratch, PAGE, 1);
    VGT_TRY(memory(s, VA_SCRATCH, s->scratch, PAGE, VGT_MEM_CHANGED, mem));
    vgt_rec_cpu_unmap cu = {.client = CLIENT, .device = s->device, .memory = mem,
                            .cpu_address = 0x7F0000000000ull + (VA_SCRATCH >> 8), .length = 2 * PAGE};
    vgt_rec_gpu_unmap gu = {.client = CLIENT, .device = s->device, .va_space = s->vaspace, .memory = mem,
                            .gpu_va = VA_SCRATCH, .length = 2 * PAGE, .source = VGT_MAP_RM_DMA};
    vgt_rec_rm_free f = {.client = CLIENT, .parent = s->device, .handle = mem};
    account(s, VGT_REC_CPU_UNMAP, 0);
    account(s, VGT_REC_GPU_UNMAP, 0);
    account(s, VGT_REC_RM_FREE, 0);
    VGT_TRY(vgt_write_cpu_unmap(s->w, tick(s), &cu, s->err));
    VGT_TRY(vgt_write_gpu_unmap(s->w, tick(s), &gu, s->err));
    return vgt_write_rm_free(s->w, tick(s), &f, s->err);
}

/* ---- submissions ---- */

static uint64_t page_va(uint32_t p) { return VA_DATA + (uint64_t)p * PAGE; }

static void observe(synth *s, uint64_t va, uint32_t n)
{
    if (s->nobs < MAX_OBSERVED) s->obs[s->nobs++] = (observed){va, n};
}

static uint8_t *shadow_at(synth *s, uint64_t va) { return s->shadow + (va - VA_DATA); }

static void op_i2m(synth *s, vgt_pbw *pb, uint32_t max_bytes)
{
    uint32_t P = s->o.memory_pages, page = P / 2 + synth_rng_below(&s->rng, P / 4);
    uint32_t n = 4u * (16u + synth_rng_below(&s->rng, max_bytes / 4u - 15u));
    if (n > PAGE) n = PAGE;
    uint64_t va = page_va(page) + 4u * synth_rng_below(&s->rng, (PAGE - n) / 4u + 1u);
    synth_fill_page(&s->rng, s->scratch, n, synth_rng_below(&s->rng, 4));
    uint32_t subch = synth_rng_below(&s->rng, 2) ? SYNTH_SUBCH_I2M : SYNTH_SUBCH_COMPUTE;
    synth_pb_i2m(pb, subch, va, s->scratch, n, (int)synth_rng_below(&s->rng, 2));
    if (pb->overflow) return;
    memcpy(shadow_at(s, va), s->scratch, n);
    observe(s, va, n);
}

static void op_copy(synth *s, vgt_pbw *pb, synth_channel *c)
{
    uint32_t P = s->o.memory_pages;
    uint32_t src = synth_rng_below(&s->rng, P / 2), dst = 3 * P / 4 + synth_rng_below(&s->rng, P - 3 * P / 4);
    uint32_t n = 256u * (1u + synth_rng_below(&s->rng, PAGE / 256u));
    uint64_t sem = VA_SEM + 0x800 + 16u * (uint64_t)(c - s->ch);
    synth_pb_ce_copy(pb, page_va(src), page_va(dst), n, sem, (uint32_t)++c->copy_value);
    if (pb->overflow) return;
    memmove(shadow_at(s, page_va(dst)), shadow_at(s, page_va(src)), n);
    observe(s, page_va(dst), n);
}

static vgt_status op_compute(synth *s, vgt_pbw *pb, synth_channel *c)
{
    uint8_t qmd[SYNTH_QMD_BYTES];
    uint32_t grid[3] = {1 + synth_rng_below(&s->rng, 256), 1 + synth_rng_below(&s->rng, 4), 1};
    uint32_t block[3] = {32u << synth_rng_below(&s->rng, 5), 1, 1};
    uint64_t qva = VA_QMD + (uint64_t)s->qmd_slot * QMD_STRIDE;
    s->qmd_slot = (s->qmd_slot + 1) % QMD_SLOTS;
    synth_qmd_build(qmd, grid, block, VA_CODE + 0x100u * synth_rng_below(&s->rng, 16),
                    VA_SEM + 0x1000 + 16u * (uint64_t)(c - s->ch), (uint32_t)++s->launches);
    synth_pb_compute_launch(pb, qva);
    return memory(s, qva, qmd, SYNTH_QMD_BYTES, VGT_MEM_CHANGED, s->qmd_mem);   /* the QMD, written before */
}

/* The CPU writes an input page before the submission that may read it. */
static vgt_status changed_page(synth *s)
{
    uint32_t p = synth_rng_below(&s->rng, s->o.memory_pages / 2);
    synth_fill_page(&s->rng, shadow_at(s, page_va(p)), PAGE, synth_rng_below(&s->rng, 4));
    return memory(s, page_va(p), shadow_at(s, page_va(p)), PAGE, VGT_MEM_CHANGED, s->data_mem);
}

/* ---- torch and triton: the CPU's writes of a training loop or a Triton program, recorded as a capture
 * records them: per page, the changed byte range against what was recorded last (the shadow) ---- */

/* Write n bytes at data page offset `at` (below memory_pages / 2: the inputs) and record what changed. */
static vgt_status cpu_write(synth *s, uint64_t at, const uint8_t *bytes, uint32_t n)
{
    for (uint64_t o = at; o < at + n;) {
        uint64_t page_end = (o / PAGE + 1) * PAGE, end = page_end < at + n ? page_end : at + n;
        uint8_t *sh = s->shadow + o;
        const uint8_t *src = bytes + (o - at);
        uint32_t len = (uint32_t)(end - o), lo = 0, hi = len;
        while (lo < len && sh[lo] == src[lo]) lo++;
        while (hi > lo && sh[hi - 1] == src[hi - 1]) hi--;
        if (lo < hi) {
            lo &= ~3u;
            hi = (hi + 3) & ~3u;
            if (hi > len) hi = len;
            memcpy(sh + lo, src + lo, hi - lo);
            VGT_TRY(memory(s, VA_DATA + o + lo, sh + lo, hi - lo, VGT_MEM_CHANGED, s->data_mem));
        }
        o = end;
    }
    return VGT_OK;
}

/* Repeats further apart than a chunk holds (zstd compresses each chunk alone): the shapes' point. */
#define WL_TENSOR_PAGES 64u       /* 256 KiB: a weight tensor or a batch */
#define WL_TENSORS 12u            /* cycled: a tensor comes back every 12 steps (3 MiB later) */
#define WL_SLOTS 5u               /* pinned staging slots */
#define WL_KERNEL_PAGES 16u       /* 64 KiB kernel binaries, 40 of them */
#define WL_KERNELS 40u

/* The same tensors (weights, evaluation batches) or kernel binaries again and again: content that
 * depends on (seed, i) only. */
static void wl_tensor(synth *s, uint32_t i, uint8_t *out, uint32_t pages)
{
    synth_rng r;
    synth_rng_seed(&r, s->o.seed * 0x9e3779b97f4a7c15ull + i + 1);
    synth_fill_page(&r, out, pages * PAGE, 3);   /* noise: weights do not compress */
}

/* Kernel parameters: 1 KiB of pointers, sizes and strides, where a launch changes a few words. */
static vgt_status wl_params(synth *s, uint64_t at, uint32_t launch, uint32_t words)
{
    uint32_t p[256];
    for (uint32_t i = 0; i < 256; i++) p[i] = 0x1000u * i + 0x40;
    for (uint32_t k = 0; k < words; k++) p[(k * 97 + launch) % 256] = launch * 2654435761u + k;
    p[0] = launch;
    p[255] = launch ^ 0x5a5a5a5au;
    return cpu_write(s, at, (const uint8_t *)p, sizeof p);
}

static vgt_status workload_changes(synth *s)
{
    uint32_t n = (uint32_t)s->submit_no, P = s->o.memory_pages;
    uint64_t params = (uint64_t)(P / 2 - 1) * PAGE;
    if (s->o.shape == SHAPE_TORCH) {
        if (n % 8 == 0) {   /* a step: a tensor staged through the next slot of the pinned ring */
            wl_tensor(s, (n / 8) % WL_TENSORS, s->wl_buf, WL_TENSOR_PAGES);
            VGT_TRY(cpu_write(s, (uint64_t)((n / 8) % WL_SLOTS) * WL_TENSOR_PAGES * PAGE, s->wl_buf, WL_TENSOR_PAGES * PAGE));
        }
        return wl_params(s, params, n, 3);
    }
    if (n % 4 == 0) {   /* a kernel binary uploaded again (autotuning, a new stream) */
        wl_tensor(s, 1000 + (n / 4) % WL_KERNELS, s->wl_buf, WL_KERNEL_PAGES);
        VGT_TRY(cpu_write(s, (uint64_t)(n / 4 % 3) * WL_KERNEL_PAGES * PAGE, s->wl_buf, WL_KERNEL_PAGES * PAGE));
    }
    uint8_t fresh[256];   /* a small input that is new every time */
    synth_fill_page(&s->rng, fresh, sizeof fresh, 3);
    VGT_TRY(cpu_write(s, (uint64_t)(P / 2 - 2) * PAGE + 256u * (n % 16), fresh, sizeof fresh));
    return wl_params(s, params, n, 4);
}

static void bind_subchannels(vgt_pbw *pb)
{
    vgt_pbw_set_object(pb, SYNTH_SUBCH_3D, SYNTH_CLASS_3D);
    vgt_pbw_set_object(pb, SYNTH_SUBCH_COMPUTE, SYNTH_CLASS_COMPUTE);
    vgt_pbw_set_object(pb, SYNTH_SUBCH_I2M, SYNTH_CLASS_I2M);
    vgt_pbw_set_object(pb, SYNTH_SUBCH_COPY, SYNTH_CLASS_COPY);
}

/* Fill segment `pb` with work by shape; may write MEMORY records (inputs) before the submission. */
static vgt_status fill_segment(synth *s, synth_channel *c, vgt_pbw *pb)
{
    if (s->o.shape == SHAPE_PUSHBUF) {   /* bulk: large inline uploads, shaped like real push buffers */
        uint32_t ops = 1 + synth_rng_below(&s->rng, 4);
        for (uint32_t i = 0; i < ops; i++) {
            op_i2m(s, pb, PAGE);
            synth_pb_filler(pb, &s->rng);
        }
        return VGT_OK;
    }
    if (s->o.shape == SHAPE_TORCH || s->o.shape == SHAPE_TRITON) {   /* a launch or two: the work is in memory */
        uint32_t launches = 1 + synth_rng_below(&s->rng, 2);
        for (uint32_t i = 0; i < launches; i++) VGT_TRY(op_compute(s, pb, c));
        return VGT_OK;
    }
    uint32_t ops = 1 + synth_rng_below(&s->rng, 3);
    for (uint32_t i = 0; i < ops; i++) {
        switch (synth_rng_below(&s->rng, 4)) {
        case 0: op_i2m(s, pb, 512); break;
        case 1: op_copy(s, pb, c); break;
        case 2: VGT_TRY(op_compute(s, pb, c)); break;
        default: synth_pb_filler(pb, &s->rng); break;
        }
    }
    return VGT_OK;
}

/* Place the segments in the channel's push-buffer pool and build the GPFIFO_SUBMIT record. */
static vgt_status submit_record(synth *s, synth_channel *c, uint32_t nseg)
{
    vgt_segment seg[MAX_SEGMENTS];
    uint8_t entries[8 * MAX_SEGMENTS];
    uint64_t blob = 0;
    for (uint32_t i = 0; i < nseg; i++) {
        uint32_t bytes = 4u * s->pb[i].n;
        if (c->pb_cursor + bytes > PB_POOL_SIZE) c->pb_cursor = 0;   /* the pool is a ring */
        seg[i] = (vgt_segment){.gpu_va = c->pb_va + c->pb_cursor, .length = bytes,
                               .data = (const uint8_t *)s->pb[i].dw};
        c->pb_cursor = (c->pb_cursor + bytes + 255) & ~255ull;
        uint64_t e = synth_gp_entry(seg[i].gpu_va, s->pb[i].n);
        for (int b = 0; b < 8; b++) entries[8 * i + b] = (uint8_t)(e >> (8 * b));
        blob += 16 + pad8(bytes);
    }
    uint32_t put = (c->gp_put + nseg) % RING_ENTRIES;
    vgt_rec_gpfifo_submit r = {.client = CLIENT, .channel = c->handle, .token = c->token,
                               .gp_get_before = c->gp_put, .gp_put_before = c->gp_put, .gp_get_after = put,
                               .gp_put_after = put, .entry_count = nseg, .segment_count = nseg,
                               .entries = entries, .segments = seg};
    c->gp_put = put;
    account(s, VGT_REC_GPFIFO_SUBMIT, 8u * nseg + blob);
    return vgt_write_gpfifo_submit(s->w, tick(s), &r, s->err);
}

static vgt_status after_submit(synth *s, synth_channel *c)
{
    uint64_t sem = VA_SEM + 16u * (uint64_t)(c - s->ch);
    uint8_t v[8];
    for (int b = 0; b < 8; b++) v[b] = (uint8_t)(c->sem_value >> (8 * b));
    if (s->o.shape == SHAPE_ALL_TYPES) {
        vgt_rec_doorbell d = {.token = c->token, .channel = c->handle, .offset = 0x90};
        vgt_rec_semaphore sm = {.gpu_va = sem, .value = c->sem_value, .size = 8};
        /* the GPU fetched every entry: GP_GET at the last GP_PUT */
        vgt_rec_channel_progress pr = {.client = CLIENT, .channel = c->handle, .gp_get = c->gp_put,
                                       .gp_put = c->gp_put, .flags = VGT_PROGRESS_FLAG_END};
        account(s, VGT_REC_DOORBELL, 0);
        account(s, VGT_REC_SEMAPHORE, 0);
        account(s, VGT_REC_CHANNEL_PROGRESS, 0);
        VGT_TRY(vgt_write_doorbell(s->w, tick(s), &d, s->err));
        VGT_TRY(vgt_write_channel_progress(s->w, tick(s), &pr, s->err));
        VGT_TRY(vgt_write_semaphore(s->w, tick(s), &sm, s->err));
    }
    if (s->o.shape == SHAPE_PUSHBUF || s->o.shape == SHAPE_TORCH || s->o.shape == SHAPE_TRITON) return VGT_OK;
    VGT_TRY(memory(s, sem, v, 8, VGT_MEM_OBSERVED, s->sem_mem));
    for (uint32_t i = 0; i < s->nobs; i++)
        VGT_TRY(memory(s, s->obs[i].va, shadow_at(s, s->obs[i].va), s->obs[i].length, VGT_MEM_OBSERVED,
                       s->data_mem));
    return VGT_OK;
}

static vgt_status submission(synth *s)
{
    synth_channel *c = &s->ch[s->submit_no % s->o.channels];
    uint32_t nseg = 1 + synth_rng_below(&s->rng, s->o.shape == SHAPE_PUSHBUF ? 2 : 3);
    s->nobs = 0;
    if (s->o.shape == SHAPE_TORCH || s->o.shape == SHAPE_TRITON) VGT_TRY(workload_changes(s));
    else if (synth_rng_below(&s->rng, 2)) VGT_TRY(changed_page(s));
    for (uint32_t i = 0; i < nseg; i++) {
        vgt_pbw_reset(&s->pb[i]);
        if (i == 0 && !c->bound) bind_subchannels(&s->pb[i]);
        VGT_TRY(fill_segment(s, c, &s->pb[i]));
    }
    c->bound = 1;
    vgt_pbw_host_release(&s->pb[nseg - 1], VA_SEM + 16u * (uint64_t)(c - s->ch), ++c->sem_value, VGT_PBW_RELEASE_WFI | VGT_PBW_PAYLOAD_64);
    for (uint32_t i = 0; i < nseg; i++)
        if (s->pb[i].overflow)
            return VGT_FAIL(s->err, VGT_E_LIMIT, VGT_NO_OFFSET, "synth: segment over %u dwords", SEGMENT_DWORDS);
    VGT_TRY(submit_record(s, c, nseg));
    s->submit_no++;
    return after_submit(s, c);
}

/* ---- the whole trace ---- */

static vgt_status session(synth *s, int start)
{
    if (start) {
        static const char cmd[] = "synthetic-app\0--iterations\0" "100\0";
        vgt_rec_session_start st = {.wall_ns = 1767225600000000000ull, .pid = 4242, .ppid = 1,
                                    .cmdline = (const uint8_t *)cmd, .cmdline_length = sizeof cmd - 1};
        account(s, VGT_REC_SESSION_START, sizeof cmd - 1);
        return vgt_write_session_start(s->w, tick(s), &st, s->err);
    }
    vgt_rec_session_end e = {.wall_ns = 1767225600000000000ull + s->ts - 1000000000ull, .exit_status = 0};
    account(s, VGT_REC_SESSION_END, 0);
    return vgt_write_session_end(s->w, tick(s), &e, s->err);
}

static vgt_status marker(synth *s, const char *text)
{
    vgt_rec_marker m = {.length = (uint32_t)strlen(text), .text = text};
    account(s, VGT_REC_MARKER, m.length);
    return vgt_write_marker(s->w, tick(s), &m, s->err);
}

static int more_submissions(const synth *s)
{
    if (s->o.bytes) return s->bytes < s->o.bytes;
    return s->submit_no < s->o.submits;
}

static vgt_status generate(synth *s)
{
    char note[160];
    snprintf(note, sizeof note, "vgt synth: shape %s, seed %llu (synthetic, not a capture)",
             shape_names[s->o.shape], (unsigned long long)s->o.seed);
    VGT_TRY(session(s, 1));
    VGT_TRY(marker(s, note));
    VGT_TRY(rm_objects(s));
    if (s->o.shape == SHAPE_ALL_TYPES) VGT_TRY(extras_start(s));
    VGT_TRY(memory_objects(s));
    VGT_TRY(initial_memory(s));
    for (uint32_t i = 0; i < s->o.channels; i++) VGT_TRY(channel(s, i));
    if (s->o.shape == SHAPE_ALL_TYPES) VGT_TRY(channel_states(s));
    uint8_t sched[3] = {1, 0, 0};   /* bEnable, bSkipSubmit, bSkipEnable */
    VGT_TRY(rm_control(s, s->tsg, RM_CTRL_TSG_GPFIFO_SCHEDULE, sched, sched, sizeof sched));
    int scratch_done = s->o.shape == SHAPE_PUSHBUF;
    while (more_submissions(s)) {
        if (!scratch_done && s->submit_no >= (s->o.submits == UINT64_MAX ? 4 : s->o.submits / 3)) {
            VGT_TRY(scratch_object(s));
            scratch_done = 1;
        }
        VGT_TRY(submission(s));
    }
    if (!scratch_done) VGT_TRY(scratch_object(s));
    if (s->o.shape == SHAPE_ALL_TYPES) VGT_TRY(extras_end(s));
    return session(s, 0);
}

/* ---- command line ---- */

typedef struct synth_args {
    const char *out;
    int shape, stored, no_trailer, crash_safe, memory_cas;
    uint64_t submits, bytes, channels, memory_pages, seed, level, threads, chunk_size;
} synth_args;

static const char *const shape_choices[] = {"pushbuf", "mixed", "all-types", "torch", "triton", NULL};   /* shape_names */

static const vgt_cli_opt synth_options[] = {
    {"output", 'o', VGT_ARG_PATH, "OUT", "the trace to write; '-': standard output, as a stream (the summary then goes "
     "to stderr)", .off = offsetof(synth_args, out), .flags = VGT_OPT_REQUIRED},
    {"shape", 0, VGT_ARG_ENUM, "S", "pushbuf: bulk push buffers and memory pages (benchmarks); mixed (default): "
     "semaphores, I2M, copies, compute launches, observed memory; all-types: mixed plus every record type of the format; "
     "torch, triton: mixed with the changed memory of a PyTorch-style training loop (tensors staged through a ring "
     "of pinned buffers, kernel parameters changing in a few words) or a Triton-style one (many launches whose "
     "argument blocks change in a few words, kernel binaries uploaded again, small fresh inputs): for --memory-cas",
     .off = offsetof(synth_args, shape), .choices = shape_choices},
    {"submits", 0, VGT_ARG_U64, "N", "how many GPFIFO submissions to write (default 16; a count here, where the "
     "verbs that read a trace take a window A..B)", .off = offsetof(synth_args, submits)},
    {"bytes", 0, VGT_ARG_SIZE, "SIZE", "instead of --submits: write until the records total SIZE bytes (K, M, G)",
     .off = offsetof(synth_args, bytes), .min = 1},
    {"channels", 0, VGT_ARG_U64, "N", "channels (default 2)", .off = offsetof(synth_args, channels), .min = 1,
     .max = MAX_CHANNELS},
    {"memory-pages", 0, VGT_ARG_U64, "N", "4 KiB data pages (default 64)", .off = offsetof(synth_args, memory_pages),
     .min = 4, .max = MAX_MEMORY_PAGES},
    {"seed", 0, VGT_ARG_U64, "S", "random seed (default 1)", .off = offsetof(synth_args, seed)},
    {"level", 0, VGT_ARG_U64, "L", "zstd level (default 3)", .off = offsetof(synth_args, level), .max = 22},
    {"threads", 0, VGT_ARG_U64, "N", "zstd workers (default 0)", .off = offsetof(synth_args, threads), .max = 64},
    {"chunk-size", 0, VGT_ARG_SIZE, "BYTES", "bytes of records per chunk (default 2 MiB)",
     .off = offsetof(synth_args, chunk_size), .max = VGT_MAX_CHUNK_RECORDS_BYTES, .what = "chunk size"},
    {"stored", 0, VGT_ARG_NONE, NULL, "no compression", .off = offsetof(synth_args, stored)},
    {"memory-cas", 0, VGT_ARG_NONE, NULL, "write repeated memory contents as MEMORY_CAS (format 1.3): copies of "
     "earlier contents and word patches", .off = offsetof(synth_args, memory_cas)},
    {"no-trailer", 0, VGT_ARG_NONE, NULL, "leave out the index and footer (as a killed capture would)",
     .off = offsetof(synth_args, no_trailer)},
    {"crash-safe", 0, VGT_ARG_NONE, NULL, "the writer's crash-safe mode: a chunk closed at every submission",
     .off = offsetof(synth_args, crash_safe)},
    {0}};

const vgt_cli_spec cmd_synth_spec = {
    .verb = "synth", .args = "", .min_args = 0, .max_args = 0, .opts = synth_options,
    .about = "Write a well-formed synthetic trace (identity capture_mode=synthetic): RM objects, memory, channels of "
             "class 0xC86F with compute/copy/3D/I2M engines, memory pages, and GPFIFO submissions of valid method "
             "streams. The output depends only on the options. Compute launches use minimal QMDs and placeholder "
             "code (not SASS): replay them on sim, not on a GPU.",
};

/* -1 to go on with s->o set, else the exit code. */
static int parse_args(int argc, char **argv, synth_opts *o)
{
    synth_args a = {.shape = o->shape, .submits = o->submits, .channels = o->channels, .memory_pages = o->memory_pages,
                    .seed = o->seed, .level = (uint64_t)o->wo.zstd_level, .threads = (uint64_t)o->wo.zstd_threads,
                    .chunk_size = o->wo.chunk_target};
    vgt_cli_args pos;
    int rc = vgt_cli_parse(&cmd_synth_spec, argc, argv, &a, &pos);
    if (rc >= 0) return rc;
    o->out = a.out;
    o->shape = a.shape;
    o->submits = a.submits;
    o->bytes = a.bytes;
    o->channels = (uint32_t)a.channels;
    o->memory_pages = (uint32_t)a.memory_pages;
    o->seed = a.seed;
    o->wo.zstd_level = (int)a.level;
    o->wo.zstd_threads = (int)a.threads;
    o->wo.chunk_target = (uint32_t)a.chunk_size;
    if (a.stored) o->wo.codec = VGT_CODEC_STORED;
    if (a.no_trailer) o->wo.write_trailer = 0;
    if (a.crash_safe) o->wo.crash_safe = 1;
    if (a.memory_cas) o->wo.memory_cas = 1;
    if (o->bytes) o->submits = UINT64_MAX;
    return -1;
}

static void identity(const synth_opts *o, vgt_identity *id, uint32_t *n, char *cmd, size_t cmdsz, char *seed)
{
    snprintf(seed, 24, "%llu", (unsigned long long)o->seed);
    int k = snprintf(cmd, cmdsz, "vgt synth --shape %s --channels %u --memory-pages %u --seed %s",
                     shape_names[o->shape], o->channels, o->memory_pages, seed);
    if (o->bytes) snprintf(cmd + k, cmdsz - (size_t)k, " --bytes %llu", (unsigned long long)o->bytes);
    else snprintf(cmd + k, cmdsz - (size_t)k, " --submits %llu", (unsigned long long)o->submits);
    const vgt_identity ids[] = {
        {"producer", "vgt synth"}, {"producer_version", VGT_VERSION_STRING}, {"capture_mode", "synthetic"},
        {"chip", "GH100"}, {"architecture", "hopper"}, {"command_line", cmd}, {"memory_mode", "changed"},
        {"start_time_wall_ns", "1767225600000000000"}, {"start_time_monotonic_ns", "1000000000"},
        {"synth_shape", shape_names[o->shape]}, {"synth_seed", seed},
    };
    *n = sizeof ids / sizeof ids[0];
    memcpy(id, ids, sizeof ids);
    if (o->wo.crash_safe) id[(*n)++] = (vgt_identity){"crash_safe", "1"};
}

int cmd_synth(int argc, char **argv)
{
    synth *s = calloc(1, sizeof *s);
    if (!s) return vgt_cli_error("synth", VGT_EXIT_USAGE, "out of memory");
    s->o = (synth_opts){.submits = 16, .channels = 2, .memory_pages = 64, .seed = 1, .shape = SHAPE_MIXED,
                        .wo = vgt_writer_defaults()};
    int rc = parse_args(argc, argv, &s->o);
    if (rc >= 0) {
        free(s);
        return rc;
    }
    vgt_error err;
    vgt_error_clear(&err);
    s->err = &err;
    s->next_handle = HANDLE_BASE;
    s->ts = 1000000000ull;
    synth_rng_seed(&s->rng, s->o.seed);
    /* torch and triton need room for their staging slots below memory_pages / 2 */
    uint32_t need = s->o.shape == SHAPE_TORCH ? 2 * (WL_SLOTS * WL_TENSOR_PAGES + 2)
                    : s->o.shape == SHAPE_TRITON ? 2 * (3 * WL_KERNEL_PAGES + 2) : 0;
    if (s->o.memory_pages < need) s->o.memory_pages = need;
    s->shadow = calloc(s->o.memory_pages, PAGE);
    s->scratch = malloc(4u * SEGMENT_DWORDS);
    s->wl_buf = malloc((size_t)WL_TENSOR_PAGES * PAGE);
    for (uint32_t i = 0; i < MAX_SEGMENTS; i++)
        s->pb[i] = (vgt_pbw){.dw = malloc(4u * SEGMENT_DWORDS), .cap = SEGMENT_DWORDS};
    int ok = s->shadow && s->scratch && s->wl_buf;
    for (uint32_t i = 0; i < MAX_SEGMENTS; i++) ok = ok && s->pb[i].dw;

    vgt_identity id[16];   /* identity() gives at most 12 */
    uint32_t nid;
    char cmd[256], seed[24];
    identity(&s->o, id, &nid, cmd, sizeof cmd, seed);
    int to_stdout = !strcmp(s->o.out, "-");
    /* "-" is standard output; a file is written beside OUT and replaces it only once complete */
    vgt_status st = !ok ? VGT_FAIL(&err, VGT_E_NOMEM, VGT_NO_OFFSET, "synth: out of memory")
                        : vgt_writer_open_path(&s->w, s->o.out, &s->o.wo, id, nid, &err);
    if (st == VGT_OK) {
        st = generate(s);
        vgt_error cerr;
        if (st != VGT_OK) vgt_writer_discard(s->w);
        else if (vgt_writer_close(s->w, &cerr) != VGT_OK) st = cerr.code, err = cerr;
    }
    rc = st == VGT_OK ? VGT_EXIT_OK : vgt_cli_report("synth", &err);
    if (st == VGT_OK)
        fprintf(to_stdout ? stderr : stdout, "wrote %s: %llu submissions, %llu bytes of records (synthetic, shape %s)\n",
                to_stdout ? "standard output" : s->o.out,
               (unsigned long long)s->submit_no, (unsigned long long)s->bytes, shape_names[s->o.shape]);
    for (uint32_t i = 0; i < MAX_SEGMENTS; i++) free(s->pb[i].dw);
    free(s->shadow);
    free(s->scratch);
    free(s->wl_buf);
    free(s);
    return rc;
}
