/* lane_cuda.c: lane 3, the captured CUDA driver API calls forwarded through the host's CUDA driver
 * (backend cuda, vgt_backend_cuda_ops). It replays the format 1.2 records in trace order, serially:
 *
 *   CUDA_IMAGE   kept; loaded (module_load) the first time a function of it is needed
 *   CUDA_IMAGE_REF the same, its bytes read from the file it names and checked against its hash (1.5);
 *                a file that is absent or changed is a refusal (VGT_E_IO), never another module
 *   CUDA_LOAD    captured module/library handle -> its image
 *   CUDA_FUNCTION captured function/kernel handle -> (image, name): resolved to a backend function on use;
 *                a module global (api cuModuleGetGlobal, cuLibraryGetGlobal): looked up in the replay's load
 *                of its module at once, and its captured address range mapped to the replay's
 *   CUDA_MEMORY  ALLOC: device memory at the captured address (lane_cuda_mem.c: reserve there, else
 *                elsewhere and relocated); HTOD: the captured bytes written; DTOH: read back and compared
 *                with the captured bytes (at once, or kept for the DTOH_RESULT of an asynchronous copy);
 *                DTOD, memsets: forwarded. Graph nodes are kept for their exec.
 *   CUDA_KERNEL  launched with the captured grid, block, shared memory and parameter buffer (pointer
 *                parameters relocated through the parameter layout where their range moved); graph
 *                nodes kept for their exec; launches into a stream being captured are not run
 *   CUDA_CALL    cuGraphLaunch: the exec's nodes run in node order, with the host bytes recorded for
 *                that launch
 *
 * Everything else (the RM-level records) is the captured driver's own work: the host driver makes its
 * own. A submission counts for lane 3 when a forwarded call is linked to it (vgt/cuda.h's link rule). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "lane_cuda.h"
#include "vgt/cuda.h"
#include "vgt/grow.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Room for one more item in arr (n held, cap allocated); 1 on success, 0 when out of memory. */
#define GROW(arr, n, cap) (vgt_grow(&(arr), &(cap), (n) + 1ull, 16) == 0)

static vgt_status nomem(vgt_error *err) { return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "lane cuda: out of memory"); }

static lane_cuda *state(vgt_replay *rp, vgt_error *err)
{
    if (rp->cuda) return rp->cuda;
    if (!rp->ops->cuda) {
        VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "lane cuda: backend %s forwards no CUDA calls", rp->ops->name);
        return NULL;
    }
    rp->cuda = calloc(1, sizeof *rp->cuda);
    if (!rp->cuda) nomem(err);
    return rp->cuda;
}

/* ---- images, modules, functions ---- */

static lc_image *image_find(lane_cuda *lc, uint64_t hash)
{
    for (uint32_t i = 0; i < lc->nimages; i++)
        if (lc->images[i].hash == hash) return &lc->images[i];
    return NULL;
}

static lc_handle *handle_find(lc_handle *v, uint32_t n, uint64_t h)
{
    for (uint32_t i = n; i-- > 0;)
        if (v[i].handle == h) return &v[i];
    return NULL;
}

/* Keep an image's bytes (len of them and a NUL after: PTX must end in one for the driver); owned: bytes was
 * malloc'd with len + 1 and is the lane's now. */
static vgt_status keep_image(lane_cuda *lc, uint64_t hash, uint8_t *bytes, uint64_t len, vgt_error *err)
{
    if (!GROW(lc->images, lc->nimages, lc->capimages)) {
        free(bytes);
        return nomem(err);
    }
    lc->images[lc->nimages++] = (lc_image){.hash = hash, .len = len, .bytes = bytes};
    return VGT_OK;
}

static vgt_status on_image(lane_cuda *lc, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_cuda_image im;
    VGT_TRY(vgt_decode_cuda_image(rec, &im, err));
    if (image_find(lc, im.hash)) return VGT_OK;
    uint8_t *b = malloc((size_t)im.image_length + 1);
    if (!b) return nomem(err);
    memcpy(b, im.image, im.image_length);
    b[im.image_length] = 0;
    return keep_image(lc, im.hash, b, im.image_length, err);
}

/* An image referenced by file (format 1.5): read from its file when the bytes there hash to the captured
 * hash. Anything else is a refusal (exit 2), never a module built from other bytes: the replay cannot run
 * the program's kernels without their code. */
static vgt_status on_image_ref(lane_cuda *lc, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_cuda_image_ref im;
    VGT_TRY(vgt_decode_cuda_image_ref(rec, &im, err));
    if (image_find(lc, im.hash)) return VGT_OK;
    uint8_t *b;
    vgt_error e;
    vgt_error_clear(&e);
    vgt_status rc = vgt_cuda_image_ref_load(&im, &b, &e);
    if (rc == VGT_E_NOMEM) return nomem(err);
    if (rc != VGT_OK)
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "lane cuda: CUDA_IMAGE_REF seq %llu: %s; the trace was recorded "
                        "with --cuda-images=ref or auto on a machine with that file: replay there, or record again "
                        "with --cuda-images=embed", (unsigned long long)rec->seq, e.msg);
    return keep_image(lc, im.hash, b, im.image_length, err);
}

static vgt_status add_handle(lc_handle **v, uint32_t *n, uint32_t *cap, lc_handle h, vgt_error *err)
{
    if (vgt_grow(v, cap, *n + 1ull, 16)) return nomem(err);
    (*v)[(*n)++] = h;
    return VGT_OK;
}

static vgt_status on_load(lane_cuda *lc, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_cuda_load l;
    VGT_TRY(vgt_decode_cuda_load(rec, &l, err));
    if (l.call.result != 0 || !l.handle) return VGT_OK;
    lc_handle h = {.handle = l.handle, .image = l.image_hash};
    return add_handle(&lc->loads, &lc->nloads, &lc->caploads, h, err);
}

static vgt_status on_global(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_function *f,
                            vgt_error *err);

static vgt_status on_function(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_cuda_function f;
    VGT_TRY(vgt_decode_cuda_function(rec, &f, err));
    if (f.call.result != 0 || !f.function) return VGT_OK;
    if (f.call.api == VGT_CUDA_MODULE_GET_GLOBAL || f.call.api == VGT_CUDA_LIBRARY_GET_GLOBAL)
        return on_global(rp, lc, rec, &f, err);
    lc_handle h = {.handle = f.function, .owner = f.owner};
    if (f.name_length && !(h.name = strndup(f.name, f.name_length))) return nomem(err);
    return add_handle(&lc->funcs, &lc->nfuncs, &lc->capfuncs, h, err);
}

/* The backend module of a load (its image loaded on first use: one module per image, which the functions and
 * the globals of the image share); NULL, and why, when it cannot be. what names the symbol wanted. */
static lc_image *module_of(vgt_replay *rp, lane_cuda *lc, const lc_handle *load, const char *what, char *why, size_t n)
{
    lc_image *im = image_find(lc, load->image);
    if (!im) {
        snprintf(why, n, "the image 0x%016llx of %s is not in the trace", (unsigned long long)load->image, what);
        return NULL;
    }
    vgt_error e;
    if (!im->loaded) {
        if (rp->ops->cuda->module_load(rp->be, im->bytes, im->len, &im->module, &e) != VGT_OK) {
            snprintf(why, n, "%s", e.msg);
            return NULL;
        }
        im->loaded = 1;
    }
    return im;
}

/* A module global looked up (cuModuleGetGlobal, cuLibraryGetGlobal): the same global of the replay's load of
 * the module lives elsewhere, so the captured [address, address+size) becomes a moved range: copies to it
 * (cudaMemcpyToSymbol) land on the replay's global, and pointer parameters into it are relocated. */
static vgt_status on_global(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_function *f,
                            vgt_error *err)
{
    char why[VGT_ERROR_MSG_MAX];
    char *name = f->name_length ? strndup(f->name, f->name_length) : NULL;
    if (f->name_length && !name) return nomem(err);
    lc_handle *load = handle_find(lc->loads, lc->nloads, f->owner);
    lc_image *im = NULL;
    if (!name) snprintf(why, sizeof why, "the global has no name");
    else if (!load) snprintf(why, sizeof why, "its module 0x%llx was not loaded in the trace", (unsigned long long)f->owner);
    else im = module_of(rp, lc, load, name, why, sizeof why);
    vgt_status rc = VGT_OK;
    if (im) {
        uint64_t rep = 0, size = 0;
        vgt_error e;
        if (!rp->ops->cuda->global) snprintf(why, sizeof why, "backend %s looks up no module globals", rp->ops->name);
        else if (rp->ops->cuda->global(rp->be, im->module, name, &rep, &size, &e) != VGT_OK) snprintf(why, sizeof why, "%s", e.msg);
        else {
            rc = lc_map_global(lc, f->function, size, rep, err);
            free(name);
            return rc;
        }
    }
    engine_warn(rp, "CUDA_FUNCTION seq %llu: module global %s at 0x%llx not found in the replay: %s; copies to it go to "
                "its captured address", (unsigned long long)rec->seq, name ? name : "(no name)",
                (unsigned long long)f->function, why);
    free(name);
    return rc;
}

/* The backend function for a captured function handle: its name and its owner chain up to a load. */
static int resolve_function(vgt_replay *rp, lane_cuda *lc, uint64_t fn, uint64_t *out, char *why, size_t n)
{
    lc_handle *f = handle_find(lc->funcs, lc->nfuncs, fn);
    if (!f) {
        snprintf(why, n, "function 0x%llx was never looked up in the trace", (unsigned long long)fn);
        return 0;
    }
    if (f->resolved) {
        *out = f->backend;
        return 1;
    }
    const char *name = f->name;
    uint64_t owner = f->owner;
    lc_handle *load = NULL;
    for (int i = 0; i < 4 && !load; i++) {
        load = handle_find(lc->loads, lc->nloads, owner);
        if (!load) {
            lc_handle *up = handle_find(lc->funcs, lc->nfuncs, owner);   /* a CUkernel: its library */
            if (!up) break;
            if (!name) name = up->name;
            owner = up->owner;
        }
    }
    if (!load || !name) {
        snprintf(why, n, "function 0x%llx (%s) belongs to no module or library loaded in the trace",
                 (unsigned long long)fn, name ? name : "no name");
        return 0;
    }
    lc_image *im = module_of(rp, lc, load, name, why, n);
    if (!im) return 0;
    vgt_error e;
    if (rp->ops->cuda->function(rp->be, im->module, name, &f->backend, &e) != VGT_OK) {
        snprintf(why, n, "%s", e.msg);
        return 0;
    }
    f->resolved = 1;
    *out = f->backend;
    return 1;
}

/* ---- launches ---- */

/* Whether the kernel of k can be run: its backend function in *fn; else why not, in why. */
static int kernel_ready(vgt_replay *rp, lane_cuda *lc, const vgt_rec_cuda_kernel *k, uint64_t *fn, char *why, size_t n)
{
    if (k->call.flags & VGT_CUDA_KERNEL_PARAMS_UNKNOWN) {
        snprintf(why, n, "its parameters were not captured (no layout)");
        return 0;
    }
    return resolve_function(rp, lc, k->function, fn, why, n);
}

/* Run k's kernel (backend function fn) with its parameters relocated. Not counted here: a launch counts
 * as one forwarded call, a graph's kernel node as part of its graph launch. */
static void run_kernel(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_kernel *k, uint64_t fn,
                       uint8_t *params)
{
    if (k->params_length) memcpy(params, k->params, k->params_length);
    rp->sum.cuda_params_relocated += lc_relocate_params(lc, params, k->params_length, k->layout, k->layout_length);
    vgt_error e;
    if (rp->ops->cuda->launch(rp->be, fn, k->grid, k->block, k->shared_bytes, params, k->params_length,
                              (k->call.flags & VGT_CUDA_KERNEL_COOPERATIVE) != 0, &e) != VGT_OK) {
        rp->sum.faults++;
        engine_warn(rp, "CUDA_KERNEL seq %llu (%ux%ux%u x %ux%ux%u): %s", (unsigned long long)rec->seq, k->grid[0],
                    k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], e.msg);
    }
}

static vgt_status launch(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_kernel *k, vgt_error *err)
{
    char why[VGT_ERROR_MSG_MAX];
    uint64_t fn;
    if (!kernel_ready(rp, lc, k, &fn, why, sizeof why)) {
        rp->sum.cuda_skipped++;
        engine_warn(rp, "CUDA_KERNEL seq %llu not replayed: %s", (unsigned long long)rec->seq, why);
        return VGT_OK;
    }
    uint8_t *params = malloc(k->params_length ? k->params_length : 1);
    if (!params) return nomem(err);
    run_kernel(rp, lc, rec, k, fn, params);
    free(params);
    rp->sum.cuda_forwarded++;
    return VGT_OK;
}

/* ---- graphs ---- */

static lc_graph *graph_find(lane_cuda *lc, uint64_t exec, int create)
{
    for (uint32_t i = 0; i < lc->ngraphs; i++)
        if (lc->graphs[i].exec == exec) return &lc->graphs[i];
    if (!create || !GROW(lc->graphs, lc->ngraphs, lc->capgraphs)) return NULL;
    lc_graph *g = &lc->graphs[lc->ngraphs++];
    memset(g, 0, sizeof *g);
    g->exec = exec;
    return g;
}

/* A node record kept whole (its bytes copied): replayed at each launch of its exec. */
static vgt_status keep_node(lane_cuda *lc, const vgt_record *rec, uint64_t exec, uint32_t index, vgt_error *err)
{
    lc_graph *g = graph_find(lc, exec, 1);
    if (!g || !GROW(g->nodes, g->nnodes, g->capnodes)) return nomem(err);
    lc_node *n = &g->nodes[g->nnodes];
    n->index = index;
    n->rec = *rec;
    if (!(n->payload = malloc(rec->length ? rec->length : 1))) return nomem(err);
    memcpy(n->payload, rec->payload, rec->length);
    n->rec.payload = n->payload;
    n->data = NULL;
    n->data_len = 0;
    g->nnodes++;
    return VGT_OK;
}

/* The host bytes of a host-to-device node for the launch that follows. */
static vgt_status keep_launch_data(lane_cuda *lc, const vgt_rec_cuda_memory *m, vgt_error *err)
{
    lc_graph *g = graph_find(lc, m->graph_exec, 0);
    for (uint32_t i = 0; g && i < g->nnodes; i++) {
        if (g->nodes[i].index != m->node_index) continue;
        free(g->nodes[i].data);
        g->nodes[i].data = malloc(m->data_length ? m->data_length : 1);
        if (!g->nodes[i].data) return nomem(err);
        memcpy(g->nodes[i].data, m->data, m->data_length);
        g->nodes[i].data_len = m->data_length;
        return VGT_OK;
    }
    return VGT_OK;
}

static int node_cmp(const void *a, const void *b)
{
    const lc_node *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Whether every kernel node of g can run: a graph runs whole or not at all (its nodes feed each other). */
static int graph_ready(vgt_replay *rp, lane_cuda *lc, lc_graph *g, char *why, size_t n, vgt_error *err, vgt_status *st)
{
    *st = VGT_OK;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        lc_node *node = &g->nodes[i];
        if (node->rec.type != VGT_REC_CUDA_KERNEL) continue;
        vgt_rec_cuda_kernel k;
        if ((*st = vgt_decode_cuda_kernel(&node->rec, &k, err)) != VGT_OK) return 0;
        uint64_t fn;
        char r[VGT_ERROR_MSG_MAX];
        if (!kernel_ready(rp, lc, &k, &fn, r, sizeof r)) {
            snprintf(why, n, "its kernel node %u (CUDA_KERNEL seq %llu) cannot run: %s", node->index,
                     (unsigned long long)node->rec.seq, r);
            return 0;
        }
    }
    return 1;
}

static vgt_status graph_launch(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, uint64_t exec, vgt_error *err)
{
    lc_graph *g = graph_find(lc, exec, 0);
    if (!g) {
        rp->sum.cuda_skipped++;
        rp->sum.cuda_graphs_not_run++;
        engine_warn(rp, "cuGraphLaunch seq %llu not replayed: graph exec 0x%llx has no nodes in the trace",
                    (unsigned long long)rec->seq, (unsigned long long)exec);
        return VGT_OK;
    }
    qsort(g->nodes, g->nnodes, sizeof *g->nodes, node_cmp);
    char why[2 * VGT_ERROR_MSG_MAX];
    vgt_status st;
    if (!graph_ready(rp, lc, g, why, sizeof why, err, &st)) {
        if (st != VGT_OK) return st;
        rp->sum.cuda_skipped++;
        rp->sum.cuda_graphs_not_run++;
        if (!g->not_run++)   /* once per graph: each of its launches counts */
            engine_warn(rp, "cuGraphLaunch seq %llu not replayed, nor any later launch of graph exec 0x%llx: %s",
                        (unsigned long long)rec->seq, (unsigned long long)exec, why);
        return VGT_OK;
    }
    rp->sum.cuda_forwarded++;   /* one forwarded call: the graph launch, whatever its nodes */
    for (uint32_t i = 0; i < g->nnodes; i++) {
        lc_node *n = &g->nodes[i];
        if (n->rec.type == VGT_REC_CUDA_KERNEL) {
            vgt_rec_cuda_kernel k;
            uint64_t fn;
            char r[VGT_ERROR_MSG_MAX];
            VGT_TRY(vgt_decode_cuda_kernel(&n->rec, &k, err));
            if (!kernel_ready(rp, lc, &k, &fn, r, sizeof r)) continue;   /* checked above */
            uint8_t *params = malloc(k.params_length ? k.params_length : 1);
            if (!params) return nomem(err);
            run_kernel(rp, lc, &n->rec, &k, fn, params);
            free(params);
        } else {
            vgt_rec_cuda_memory m;
            VGT_TRY(vgt_decode_cuda_memory(&n->rec, &m, err));
            if (m.op == VGT_CUDA_OP_HTOD) {
                if (!n->data) {
                    engine_warn(rp, "cuGraphLaunch seq %llu: node %u copies host bytes the trace does not hold for this "
                                "launch", (unsigned long long)rec->seq, n->index);
                    continue;
                }
                m.data = n->data;
                m.data_length = n->data_len;
            }
            VGT_TRY(lc_memory_op(rp, lc, &n->rec, &m, 1, err));
        }
    }
    return VGT_OK;
}

/* ---- the records ---- */

/* The submissions a forwarded call is linked to count for lane 3. */
static void cover(lane_cuda *lc, const vgt_cuda_call_head *h)
{
    if (h->submits_after > h->submits_before) lc_cover(lc, h->submits_before, h->submits_after - h->submits_before);
    else lc_cover(lc, h->submits_after, 1);
}

vgt_status lane_cuda_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    lane_cuda *lc = state(rp, err);
    if (!lc) return err ? err->code : VGT_E_UNSUPPORTED;
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) {
        lc->submits++;
        rp->sum.submissions++;
        return VGT_OK;
    }
    if (rec->type == VGT_REC_CUDA_IMAGE) return on_image(lc, rec, err);
    if (rec->type == VGT_REC_CUDA_IMAGE_REF) return on_image_ref(lc, rec, err);
    if (rec->type == VGT_REC_CUDA_MODULE || rec->type == VGT_REC_CUDA_LAUNCH) {
        if (!lc->legacy_warned++)
            engine_warn(rp, "the trace holds format 1.0 CUDA_MODULE/CUDA_LAUNCH records: lane cuda replays the 1.2 "
                        "records only");
        return VGT_OK;
    }
    if (!vgt_rec_is_cuda_api(rec->type)) return VGT_OK;
    if (!rp->t0_ns) rp->t0_ns = now_ns(), rp->first_ts = rec->ts;
    rp->last_ts = rec->ts;
    vgt_cuda_call_head h;
    VGT_TRY(vgt_cuda_decode_head(rec, &h, err));
    if (vgt_cuda_does_work(rec, &h)) cover(lc, &h);
    if (h.result != 0) return VGT_OK;   /* the captured call failed: nothing happened */
    switch (rec->type) {
    case VGT_REC_CUDA_LOAD: return on_load(lc, rec, err);
    case VGT_REC_CUDA_FUNCTION: return on_function(rp, lc, rec, err);
    case VGT_REC_CUDA_KERNEL: {
        vgt_rec_cuda_kernel k;
        VGT_TRY(vgt_decode_cuda_kernel(rec, &k, err));
        if (k.call.flags & VGT_CUDA_KERNEL_STREAM_CAPTURE) return VGT_OK;
        if (k.call.flags & VGT_CUDA_KERNEL_GRAPH_NODE) return keep_node(lc, rec, k.graph_exec, k.node_index, err);
        return launch(rp, lc, rec, &k, err);
    }
    case VGT_REC_CUDA_MEMORY: {
        vgt_rec_cuda_memory m;
        VGT_TRY(vgt_decode_cuda_memory(rec, &m, err));
        if (m.call.flags & VGT_CUDA_MEM_STREAM_CAPTURE) return VGT_OK;
        if (m.call.flags & VGT_CUDA_MEM_GRAPH_NODE) {
            if (h.api == VGT_CUDA_GRAPH_LAUNCH) return keep_launch_data(lc, &m, err);
            return keep_node(lc, rec, m.graph_exec, m.node_index, err);
        }
        return lc_memory_op(rp, lc, rec, &m, 0, err);
    }
    case VGT_REC_CUDA_CALL: {
        vgt_rec_cuda_call c;
        VGT_TRY(vgt_decode_cuda_call(rec, &c, err));
        if (h.api == VGT_CUDA_GRAPH_LAUNCH) return graph_launch(rp, lc, rec, c.object, err);
        return VGT_OK;
    }
    default: return VGT_OK;
    }
}

vgt_status lane_cuda_finish(vgt_replay *rp, vgt_error *err)
{
    lane_cuda *lc = state(rp, err);
    if (!lc) return err ? err->code : VGT_E_UNSUPPORTED;
    uint64_t covered = lc_covered(lc);
    rp->sum.lanes[VGT_LANE_CUDA] = covered;
    rp->sum.submissions_replayed = covered;
    rp->sum.cuda_ranges_kept = lc->ranges_kept;
    rp->sum.cuda_ranges_moved = lc->ranges_moved;
    if (lc->npending)
        engine_warn(rp, "%u device-to-host copies had no DTOH_RESULT in the trace: not compared", lc->npending);
    if (!rp->sum.cuda_forwarded && !rp->sum.cuda_skipped)
        engine_warn(rp, "the trace holds no CUDA calls to forward (captured before format 1.2, or not a CUDA program)");
    return VGT_OK;
}

void lane_cuda_close(vgt_replay *rp)
{
    lane_cuda *lc = rp->cuda;
    if (!lc) return;
    for (uint32_t i = 0; i < lc->nimages; i++) free(lc->images[i].bytes);
    for (uint32_t i = 0; i < lc->nfuncs; i++) free(lc->funcs[i].name);
    for (uint32_t i = 0; i < lc->ngraphs; i++) {
        for (uint32_t k = 0; k < lc->graphs[i].nnodes; k++) free(lc->graphs[i].nodes[k].payload), free(lc->graphs[i].nodes[k].data);
        free(lc->graphs[i].nodes);
    }
    for (uint32_t i = 0; i < lc->npending; i++) free(lc->pending[i].bytes);
    free(lc->images), free(lc->loads), free(lc->funcs), free(lc->graphs), free(lc->pending), free(lc->runs);
    free(lc->covered);
    free(lc);
    rp->cuda = NULL;
}
