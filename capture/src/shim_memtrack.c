/* shim_memtrack.c: the contents of CPU-visible GPU memory, so a replay can give the GPU what it saw.
 *
 * Each memory view of the capture's registry (capture/embed/capture_maps.c) is a region here: this file
 * is the capture's tracker (shim_mem_tracker, at the end), its hooks called inside the capture's calls,
 * under its mutex, which is what serialises everything here but the write-fault path. Records (docs/trace-format.md MEMORY reasons):
 *   initial   the whole region when it becomes a view;
 *   changed   before each submission, the pages that changed since the previous one;
 *   observed  when a view goes away and at exit, the pages that differ from what was last recorded
 *             (what the GPU wrote: results, semaphores), so replays can be checked.
 * Change detection, chosen by VGT_CAPTURE_TRACK (capture/README.md has the measurements):
 *   write  (default) the region is write-protected after it is recorded; the first CPU write to a page
 *          faults once, the handler marks the page and makes it writable again (like gfxreconstruct's
 *          page_guard). Only the CPU's writes are seen, which is what a replay must supply.
 *   hash   every page is hashed (XXH3-64) at every submission and compared with the last recorded hash.
 * Ordinary memory (the program's own pages pinned as OS descriptors, class 0x71) is tracked with
 * userfaultfd's asynchronous write-protect instead (capture_wp.c): mprotect would turn the program's
 * system calls that write there into EFAULTs; without userfaultfd it is hashed.
 * A changed page is compared with a shadow of what was last recorded and only the changed byte range is
 * written. A page dirtied at two submissions in a row becomes "hot": it stays writable and is compared
 * at every submission (no fault, no mprotect) until it has been quiet for HOT_QUIET submissions.
 * Optional read-ahead: a fault on a page whose predecessor is dirty opens the next pages too.
 * The write-fault path is lock-free but for a spin lock around the dirty-page queue, which no thread
 * holds while it could fault. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

#include "shim.h"
#include "vgt/devcopy.h"

#define PAGE 4096u
#define MAX_REGIONS 4096
#define DQ_MAX 65536u
#define GRAVE 256u

typedef struct region {
    _Atomic uintptr_t cpu;        /* 0: free slot */
    uint64_t len, gpu_va;
    uint32_t client, memory, npages;
    int hashed;                   /* 1: detect by hashing (--track=hash, or nothing else works) */
    int uffd;                     /* 1: tracked by userfaultfd async write-protect (ordinary memory) */
    _Atomic uint8_t *dirty;       /* write mode, per page: 0 protected, 1 dirty (queued), 2 hot (writable) */
    uint64_t *hash;               /* per page: hash of the contents last recorded */
    uint8_t *shadow;              /* the bytes last recorded, for pages with shadow_ok (lazy, virtual) */
    uint8_t *shadow_ok;
    uint32_t *last_dirty;         /* drain number at which the page was last found dirty */
    _Atomic uint32_t faults;      /* write faults taken (stats) */
    uint32_t changed;             /* changed records written (stats) */
} region;

static region regions[MAX_REGIONS];
static _Atomic int region_hw;                   /* slots [0, region_hw) may be in use */
static uint64_t dq[DQ_MAX];                     /* (region << 32) | page, pages made dirty since the last drain */
static uint64_t dq_copy[DQ_MAX];
static uint32_t dq_n;
static int dq_overflow;
static atomic_flag dq_lock = ATOMIC_FLAG_INIT;
static _Atomic uintptr_t grave_lo[GRAVE], grave_hi[GRAVE];
static _Atomic uint32_t grave_n;
static __thread int grave_retry;
static _Atomic uint64_t write_faults;
static uint32_t drain_no;                       /* submissions drained so far */
#define HOT_MAX 32u
#define HOT_QUIET 4u
#define READAHEAD_MAX 16u
/* Tunables (shim_mem_configure; VGT_CAPTURE_HOT_PAGES, _HOT_QUIET, _READAHEAD), for measuring on the
 * device which trade of faults against reads of uncached memory is cheaper there. */
static uint32_t hot_limit = HOT_MAX, hot_quiet = HOT_QUIET, read_ahead;
typedef struct hot_page { uint32_t region, page, quiet; } hot_page;
static hot_page hot[HOT_MAX];
static uint32_t hot_n;

uint64_t shim_mem_write_faults(void) { return atomic_load(&write_faults); }

void shim_mem_configure(uint32_t hot_pages, uint32_t quiet, uint32_t ahead)
{
    hot_limit = hot_pages < HOT_MAX ? hot_pages : HOT_MAX;
    hot_quiet = quiet ? quiet : 1;
    read_ahead = ahead < READAHEAD_MAX ? ahead : READAHEAD_MAX;
}

static void *meta_alloc(size_t n)
{
    void *p = g_libc.mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static vgt_capture_wp *wp;       /* userfaultfd tracker, opened at the first region */
static int wp_tried;

static int wp_ready(void)
{
    if (!wp_tried) {
        wp_tried = 1;
        vgt_error err;
        if (vgt_capture_wp_open(&wp, &err) != VGT_OK) wp = NULL;
    }
    return wp != NULL;
}

#define STAGE_PAGES 256u          /* 1 MiB: device memory is read once into this cached buffer */
static uint8_t *stage;

static int stage_ready(void)
{
    if (!stage) stage = meta_alloc((size_t)STAGE_PAGES * PAGE);
    return stage != NULL;
}

static uint64_t run_bytes(const region *r, uint32_t first, uint32_t count)
{
    uint64_t off = (uint64_t)first * PAGE, n = (uint64_t)count * PAGE;
    return off + n > r->len ? r->len - off : n;
}

static void write_record(const vgt_rec_memory *m)
{
    uint64_t t0 = vgt_now_ns();
    vgt_error err;
    if (vgt_write_memory(g_shim.w, t0, m, &err) != VGT_OK) shim_write_failed(&err);
    atomic_fetch_add(&g_shim_time.memory_records, 1);
    atomic_fetch_add(&g_shim_time.memory_bytes, m->length);
    SHIM_TIME_ADD(record_ns, t0);
}

/* mprotect, timed (VGT_CAPTURE_STATS): the drain's system calls are a large part of its cost. */
static void protect(uintptr_t addr, uint64_t len, int prot)
{
    uint64_t t0 = vgt_now_ns();
    g_libc.mprotect((void *)addr, (size_t)len, prot);
    SHIM_TIME_ADD(protect_ns, t0);
}

/* Pages [first, first+count) (count <= STAGE_PAGES) are in stage at page at: one MEMORY record. */
static void write_staged_at(const region *r, uint32_t first, uint32_t count, uint32_t reason, uint32_t at)
{
    vgt_rec_memory m = { .gpu_va = r->gpu_va + (uint64_t)first * PAGE, .length = (uint32_t)run_bytes(r, first, count),
                         .reason = reason, .memory = r->memory, .data = stage + (uint64_t)at * PAGE };
    write_record(&m);
}

static void write_staged(const region *r, uint32_t first, uint32_t count, uint32_t reason)
{
    write_staged_at(r, first, count, reason, 0);
}

static _Atomic uint64_t pages_read;             /* pages copied out of tracked memory (stats, bench) */
uint64_t shim_mem_pages_read(void) { return atomic_load(&pages_read); }

static void stage_in(const region *r, uint32_t first, uint32_t count)
{
    uint64_t t0 = vgt_now_ns();
    atomic_fetch_add(&pages_read, count);
    vgt_copy_from_device(stage, (const uint8_t *)atomic_load(&((region *)r)->cpu) + (uint64_t)first * PAGE,
                            run_bytes(r, first, count));
    SHIM_TIME_ADD(read_ns, t0);
}

static uint64_t staged_hash(const region *r, uint32_t first, uint32_t i)
{
    uint64_t off = (uint64_t)(first + i) * PAGE, n = r->len - off < PAGE ? r->len - off : PAGE;
    return XXH3_64bits(stage + (uint64_t)i * PAGE, n);
}

static const uint8_t zero_page[PAGE];

static int all_zero(const uint8_t *p, uint64_t n) { return memcmp(p, zero_page, n) == 0; }

/* The region's shadow (the bytes last recorded) and its per-page validity, allocated at first need as
 * fresh anonymous memory: zero until written. 0 when there is no memory for them. */
static int shadow_ready(region *r)
{
    if (!r->shadow) r->shadow = meta_alloc(r->len);
    if (r->shadow && !r->shadow_ok) r->shadow_ok = meta_alloc(r->npages);
    return r->shadow && r->shadow_ok;
}

/* The initial read of a region: its zero pages get a (zero) shadow at once, so that the first change is
 * recorded as the changed bytes, not as a whole page. */
static void seed_zero_shadow(region *r, uint32_t first, uint32_t n)
{
    if (!shadow_ready(r)) return;
    for (uint32_t i = 0; i < n; i++)
        if (all_zero(stage + (uint64_t)i * PAGE, run_bytes(r, first + i, 1))) r->shadow_ok[first + i] = 1;
}

/* Read, hash and record pages [first, first+count) in stage-sized pieces. */
static void record_run(region *r, uint32_t first, uint32_t count, uint32_t reason)
{
    if (!stage_ready()) return;
    int seed = reason == VGT_MEM_INITIAL;   /* a region's first read: its shadow is still zero */
    for (uint32_t done = 0; done < count;) {
        uint32_t n = count - done < STAGE_PAGES ? count - done : STAGE_PAGES;
        stage_in(r, first + done, n);
        if (seed) seed_zero_shadow(r, first + done, n);
        for (uint32_t i = 0; i < n; i++) r->hash[first + done + i] = staged_hash(r, first + done, i);
        write_staged(r, first + done, n, reason);
        done += n;
    }
}

/* ---- channel infrastructure: bytes the submission records carry or a replay never uses ----
 * A channel's GPFIFO ring is in every GPFIFO_SUBMIT record (its new entries), and its USERD (GP_PUT and
 * friends) is the captured channel's own: a replay drives its own ring and USERD. CUDA keeps both in
 * tracked memory and writes them at every launch (the corpus's many_launches: an 8-byte ring entry and
 * 80 bytes of USERD per submission). Ring pages wholly inside the ring are not tracked at all; other
 * infrastructure bytes are left out of the changed records (their shadow follows the memory). */
#define SKIP_MAX 256u
#define PAGE_IGNORED 3            /* dirty[] state: never protected, read or recorded */
typedef struct skip_range { uint32_t region; uint64_t lo, hi; } skip_range;   /* byte offsets in the region */
static skip_range skips[SKIP_MAX];
static uint32_t nskips;

static region *region_of_va(uint64_t va)
{
    int hw = atomic_load(&region_hw);
    for (int i = 0; i < hw; i++)
        if (atomic_load(&regions[i].cpu) && va >= regions[i].gpu_va && va - regions[i].gpu_va < regions[i].len)
            return &regions[i];
    return NULL;
}

static void skip_add(region *r, uint64_t lo, uint64_t hi)
{
    if (nskips < SKIP_MAX) skips[nskips++] = (skip_range){ (uint32_t)(r - regions), lo, hi };
}

static void ignore_page(region *r, uint32_t p)
{
    if (!r->dirty) return;
    atomic_store(&r->dirty[p], PAGE_IGNORED);
    protect(atomic_load(&r->cpu) + (uint64_t)p * PAGE, PAGE, PROT_READ | PROT_WRITE);
}

static region *find_region(uintptr_t a);

void shim_mem_channel_infra(uint64_t ring_va, uint64_t ring_bytes, uintptr_t userd_cpu, uint64_t userd_bytes)
{
    if (g_shim.memory_mode != SHIM_MEM_CHANGED) return;
    region *r = ring_bytes ? region_of_va(ring_va) : NULL;
    if (r) {
        uint64_t lo = ring_va - r->gpu_va, hi = lo + ring_bytes > r->len ? r->len : lo + ring_bytes;
        for (uint64_t p = (lo + PAGE - 1) / PAGE; (p + 1) * PAGE <= hi; p++) ignore_page(r, (uint32_t)p);
        skip_add(r, lo, hi);   /* the partial pages at either end */
    }
    region *u = userd_bytes ? find_region(userd_cpu) : NULL;
    if (u) skip_add(u, userd_cpu - atomic_load(&u->cpu), userd_cpu - atomic_load(&u->cpu) + userd_bytes);
}

/* The push-buffer segments of the submission being recorded (shim_mem_before_submit): their bytes are in
 * its GPFIFO_SUBMIT record, which a replay writes to memory before running it, so the changed records
 * leave them out. */
static const vgt_segment *cur_segs;
static uint32_t ncur_segs;

/* Bytes [lo, hi) of page p (offsets in the page) are carried elsewhere: make them compare equal to the
 * shadow. 1 when some of them had changed. */
static int skip_bytes(const region *r, uint32_t p, uint64_t lo, uint64_t hi)
{
    uint64_t off = (uint64_t)p * PAGE;
    int changed = memcmp(r->shadow + off + lo, stage + lo, hi - lo) != 0;
    memcpy(r->shadow + off + lo, stage + lo, hi - lo);
    return changed;
}

/* Make the bytes of page p that are never recorded compare equal to its shadow: channel infrastructure
 * and the current submission's segments. Returns 1 when some of them had changed: the page is still in
 * use (GP_PUT written, a push buffer filled at every submission), so it must stay hot rather than fault
 * again and again. */
static int skip_known(const region *r, uint32_t p, uint64_t n)
{
    uint64_t off = (uint64_t)p * PAGE, va = r->gpu_va + off;
    int changed = 0;
    for (uint32_t i = 0; i < nskips; i++) {
        if (skips[i].region != (uint32_t)(r - regions) || skips[i].hi <= off || skips[i].lo >= off + n) continue;
        changed |= skip_bytes(r, p, skips[i].lo > off ? skips[i].lo - off : 0,
                              skips[i].hi < off + n ? skips[i].hi - off : n);
    }
    for (uint32_t i = 0; i < ncur_segs; i++) {
        uint64_t s = cur_segs[i].gpu_va, e = s + cur_segs[i].length;
        if (e <= va || s >= va + n) continue;
        changed |= skip_bytes(r, p, s > va ? s - va : 0, e < va + n ? e - va : n);
    }
    return changed;
}

/* One changed page: read it once, compare it with its shadow, record the changed byte range (the whole
 * page when there is no shadow yet), update shadow and hash. Returns 1 when the page changed (a record
 * was written, or only infrastructure bytes changed). */
static int record_changed_page(region *r, uint32_t p)
{
    if (!stage_ready()) return 0;
    uint64_t n = run_bytes(r, p, 1), off = (uint64_t)p * PAGE;
    shadow_ready(r);   /* without one, the whole page is recorded */
    stage_in(r, p, 1);
    uint64_t lo = 0, hi = n;
    if (r->shadow && r->shadow_ok && !r->shadow_ok[p] && XXH3_64bits(stage, n) == r->hash[p]) {
        /* No shadow yet, but the page still hashes as last recorded (opened by read-ahead and not
         * written, or rewritten with the same bytes): nothing changed; keep it as the shadow. */
        memcpy(r->shadow + off, stage, n);
        r->shadow_ok[p] = 1;
        return 0;
    }
    if (r->shadow && r->shadow_ok && r->shadow_ok[p]) {
        int infra = skip_known(r, p, n);
        const uint8_t *old = r->shadow + off;
        if (memcmp(stage, old, n) == 0) {   /* the common case of a hot page: one vector compare */
            if (infra) r->hash[p] = XXH3_64bits(stage, n);   /* as recorded, for the exit pass */
            return infra;
        }
        while (lo + 64 <= n && memcmp(stage + lo, old + lo, 64) == 0) lo += 64;
        while (lo < n && stage[lo] == old[lo]) lo++;
        while (hi >= lo + 64 && memcmp(stage + hi - 64, old + hi - 64, 64) == 0) hi -= 64;
        while (hi > lo && stage[hi - 1] == old[hi - 1]) hi--;
        lo &= ~7ull;
        hi = (hi + 7) & ~7ull;
        if (hi > n) hi = n;
    }
    vgt_rec_memory m = { .gpu_va = r->gpu_va + off + lo, .length = (uint32_t)(hi - lo), .reason = VGT_MEM_CHANGED,
                         .memory = r->memory, .data = stage + lo };
    write_record(&m);
    if (r->shadow && r->shadow_ok) {
        memcpy(r->shadow + off, stage, n);
        r->shadow_ok[p] = 1;
    }
    r->hash[p] = XXH3_64bits(stage, n);
    r->changed++;
    return 1;
}

/* Hash every page; record runs of pages whose hash differs from the last recorded one. */
static void record_hash_changes(region *r, uint32_t reason)
{
    if (!stage_ready()) return;
    for (uint32_t base = 0; base < r->npages; base += STAGE_PAGES) {
        uint32_t n = r->npages - base < STAGE_PAGES ? r->npages - base : STAGE_PAGES;
        stage_in(r, base, n);
        uint32_t run = 0, start = 0;
        for (uint32_t i = 0; i <= n; i++) {
            int changed = 0;
            if (i < n) {
                uint64_t h = staged_hash(r, base, i);
                int ignored = r->dirty && atomic_load(&r->dirty[base + i]) == PAGE_IGNORED;   /* a ring page */
                changed = h != r->hash[base + i] && !ignored;
                r->hash[base + i] = h;
            }
            if (changed && run++ == 0) start = i;
            if (!changed && run) {
                /* The run is in stage at [start, start+run): recorded from where it lies. The piece is
                 * read once: at exit (the observed pass over every view, read through the BAR) a piece
                 * with k changed runs used to be read k + 1 times. */
                write_staged_at(r, base + start, run, reason, start);
                run = 0;
            }
        }
    }
}

static void view_added(uint64_t gpu_va, uint64_t length, void *cpu, uint32_t client, uint32_t memory, int zeroed,
                       int os_pages);

void shim_mem_view_added(uint64_t gpu_va, uint64_t length, void *cpu, uint32_t client, uint32_t memory, int how)
{
    if (g_shim.memory_mode == SHIM_MEM_NONE || !g_shim.active) return;
    SHIM_SPAN(span);
    uint64_t t0 = vgt_now_ns();
    view_added(gpu_va, length, cpu, client, memory, (how & SHIM_VIEW_ZEROED) && g_shim.memory_mode == SHIM_MEM_CHANGED,
               how & SHIM_VIEW_OS_PAGES);
    atomic_fetch_add(&g_shim_time.initial_ns, vgt_now_ns() - t0);
    atomic_fetch_add(&g_shim_time.views_added, 1);
    SHIM_SPAN_END(span, SHIM_PROF_REGISTER);
}

/* A view of fresh RM memory starts from a zero shadow instead of an initial read, so later changes are
 * recorded against zero. Its first page is read to confirm the premise; if that is not zero the view is
 * read whole as usual (and the premise reported once). Returns 0 when the initial read is still due. */
static int start_zeroed(region *r)
{
    if (!stage_ready() || !shadow_ready(r)) return 0;
    stage_in(r, 0, 1);
    if (!all_zero(stage, run_bytes(r, 0, 1))) {
        if (shim_first_time(0x4000000000ull))
            shim_problem(1, VGT_E_FORMAT, "memory 0x%x at VA 0x%llx: freshly allocated memory is not zero; views are "
                         "read whole from now on (reported once)", r->memory, (unsigned long long)r->gpu_va);
        return 0;
    }
    uint64_t zero_hash = XXH3_64bits(zero_page, PAGE);
    for (uint32_t p = 0; p < r->npages; p++) {
        r->shadow_ok[p] = 1;
        r->hash[p] = zero_hash;   /* the last page may be partial: its hash only matters with no shadow */
    }
    atomic_fetch_add(&g_shim_time.zero_initial_bytes, r->len);
    return 1;
}

static void view_added(uint64_t gpu_va, uint64_t length, void *cpu, uint32_t client, uint32_t memory, int zeroed,
                       int os_pages)
{
    int slot = -1;
    for (int i = 0; i < MAX_REGIONS && slot < 0; i++) if (!atomic_load(&regions[i].cpu)) slot = i;
    if (slot < 0) { shim_problem(1, VGT_E_LIMIT, "more than %d memory regions: 0x%llx not tracked", MAX_REGIONS,
                                 (unsigned long long)gpu_va); return; }
    region *r = &regions[slot];
    r->len = length;
    r->gpu_va = gpu_va;
    r->client = client;
    r->memory = memory;
    r->npages = (uint32_t)((length + PAGE - 1) / PAGE);
    r->hashed = g_shim.track_mode == SHIM_TRACK_HASH || ((uintptr_t)cpu & (PAGE - 1));
    r->uffd = 0;
    /* Ordinary memory (the program's own pages, OS descriptors) goes to userfaultfd: mprotect would turn
     * the program's system calls that write into it into EFAULTs. Device mappings fall back to mprotect. */
    if (!r->hashed && g_shim.memory_mode == SHIM_MEM_CHANGED && wp_ready()) {
        vgt_error err;
        r->uffd = vgt_capture_wp_add(wp, cpu, length, &err) == VGT_OK;
        if (!r->uffd && os_pages) r->hashed = 1;   /* never mprotect the program's own pages */
    }
    r->hash = meta_alloc((size_t)r->npages * 8);
    r->last_dirty = meta_alloc((size_t)r->npages * 4);
    r->shadow = NULL;
    r->shadow_ok = NULL;
    atomic_store(&r->faults, 0);
    r->changed = 0;
    r->dirty = r->hashed || r->uffd ? NULL : meta_alloc(r->npages);
    if (!r->hash || !r->last_dirty || (!r->hashed && !r->uffd && !r->dirty)) { shim_problem(1, VGT_E_NOMEM, "no memory to track 0x%llx", (unsigned long long)gpu_va); return; }
    /* Publish, protect, then copy: a write racing with this lands before the copy or faults after it. */
    atomic_store_explicit(&r->cpu, (uintptr_t)cpu, memory_order_release);
    int hw = atomic_load(&region_hw);
    while (slot >= hw && !atomic_compare_exchange_weak(&region_hw, &hw, slot + 1)) { }
    if (!r->hashed && !r->uffd && g_shim.memory_mode == SHIM_MEM_CHANGED && g_libc.mprotect(cpu, length, PROT_READ) != 0)
        r->hashed = 1;   /* this mapping cannot be write-protected: fall back to hashing it */
    if (r->uffd) atomic_fetch_add(&g_shim_time.uffd_regions, 1);
    if (r->hashed) atomic_fetch_add(&g_shim_time.hashed_regions, 1);
    static int zero_premise_failed;
    if (!zeroed && !r->hashed && !r->uffd && g_shim.memory_mode == SHIM_MEM_CHANGED)
        zeroed = shim_pristine_claim((uintptr_t)cpu, length);   /* now that this region sees every write */
    if (zeroed && !r->hashed && !zero_premise_failed) {
        if (start_zeroed(r)) return;
        zero_premise_failed = 1;
    }
    record_run(r, 0, r->npages, VGT_MEM_INITIAL);
}

static region *find_region(uintptr_t a)
{
    int hw = atomic_load_explicit(&region_hw, memory_order_acquire);
    for (int i = 0; i < hw; i++) {
        uintptr_t c = atomic_load_explicit(&regions[i].cpu, memory_order_acquire);
        if (c && a >= c && a - c < regions[i].len) return &regions[i];
    }
    return NULL;
}

static void enqueue(region *r, uint32_t p)
{
    while (atomic_flag_test_and_set_explicit(&dq_lock, memory_order_acquire)) { }
    if (dq_n < DQ_MAX) dq[dq_n++] = (uint64_t)(r - regions) << 32 | p;
    else dq_overflow = 1;
    atomic_flag_clear_explicit(&dq_lock, memory_order_release);
}

static int write_fault(void *addr);

int shim_mem_write_fault(void *addr)
{
    SHIM_SPAN(span);
    uint64_t t0 = vgt_now_ns();
    int handled = write_fault(addr);
    SHIM_TIME_ADD(fault_ns, t0);
    if (handled) SHIM_SPAN_END(span, SHIM_PROF_WRITE_FAULT);
    return handled;
}

static int write_fault(void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    region *r = find_region(a);
    if (!r && shim_pristine_fault(a)) return 1;
    if (!r || r->hashed || !r->dirty) {
        /* A region removed while this thread was faulting: it is writable again, retry once. */
        uint32_t n = atomic_load(&grave_n);
        for (uint32_t i = 0; i < n && i < GRAVE; i++)
            if (a >= atomic_load(&grave_lo[i]) && a < atomic_load(&grave_hi[i]) && grave_retry++ < 1) return 1;
        return 0;
    }
    grave_retry = 0;
    uint32_t p = (uint32_t)((a - atomic_load(&r->cpu)) / PAGE);
    atomic_fetch_add(&write_faults, 1);
    atomic_fetch_add_explicit(&r->faults, 1, memory_order_relaxed);
    uint8_t expected = 0;   /* 1 already queued; 2 hot (writable: a fault here is a leftover of a race) */
    if (atomic_compare_exchange_strong(&r->dirty[p], &expected, 1)) enqueue(r, p);
    /* Read-ahead: the previous page is dirty too, so the program is streaming through the region (a
     * push buffer, a ring): open the next pages now, queued as dirty, to save their faults. */
    uint32_t last = p;
    if (read_ahead && p > 0 && atomic_load(&r->dirty[p - 1]) != 0)
        for (uint32_t q = p + 1; q <= p + read_ahead && q < r->npages; q++) {
            uint8_t clean = 0;
            if (!atomic_compare_exchange_strong(&r->dirty[q], &clean, 1)) break;
            enqueue(r, q);
            last = q;
        }
    g_libc.mprotect((void *)(atomic_load(&r->cpu) + (uint64_t)p * PAGE), (size_t)(last - p + 1) * PAGE,
                    PROT_READ | PROT_WRITE);
    return 1;
}


static void hot_add(region *r, uint32_t p)
{
    hot[hot_n++] = (hot_page){ (uint32_t)(r - regions), p, 0 };
}

/* Hot pages: compare each with its shadow; one quiet for HOT_QUIET submissions is protected again. Order
 * when demoting: mark clean, protect, then read, so no write between the last read and the protection
 * is lost (a write after the protection faults and is queued as usual). */
static void scan_hot(void)
{
    for (uint32_t i = 0; i < hot_n;) {
        region *r = &regions[hot[i].region];
        uint32_t p = hot[i].page;
        uintptr_t cpu = atomic_load(&r->cpu);
        if (!cpu || !r->dirty || p >= r->npages || atomic_load(&r->dirty[p]) == PAGE_IGNORED) {
            hot[i] = hot[--hot_n];
            continue;
        }
        if (r->last_dirty[p] == drain_no) { i++; continue; }   /* just promoted and recorded */
        if (hot[i].quiet + 1 >= hot_quiet) {
            atomic_store(&r->dirty[p], 0);
            protect(cpu + (uint64_t)p * PAGE, PAGE, PROT_READ);
            record_changed_page(r, p);
            hot[i] = hot[--hot_n];
            continue;
        }
        if (record_changed_page(r, p)) { hot[i].quiet = 0; r->last_dirty[p] = drain_no; }
        else hot[i].quiet++;
        i++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define PROMOTED (1ull << 63)   /* flag on a dq_copy entry: the page became hot, it stays writable */

/* Protect the pages of list[0, n) that are not PROMOTED, one mprotect per run of consecutive pages of
 * one region (the list is sorted): a submission that dirtied a ring page and three push-buffer pages in
 * a row pays for two system calls, not four. */
static void protect_runs(const uint64_t *list, uint32_t n)
{
    for (uint32_t i = 0; i < n;) {
        if (list[i] & PROMOTED) { i++; continue; }
        uint32_t j = i + 1;
        while (j < n && !(list[j] & PROMOTED) && list[j] == list[j - 1] + 1 && list[j] >> 32 == list[i] >> 32) j++;
        region *r = &regions[list[i] >> 32];
        uintptr_t cpu = atomic_load(&r->cpu);
        protect(cpu + (uint64_t)(uint32_t)list[i] * PAGE, (uint64_t)(j - i) * PAGE, PROT_READ);
        i = j;
    }
}

/* Write mode: record the dirty pages (reason changed). In three passes over the sorted queue: mark each
 * page clean (or hot), protect the clean ones in runs, then read and record them all. A write before
 * the protection lands before the read; a write after it faults and is seen at the next submission. A
 * page dirty at two submissions in a row is promoted to hot instead of being protected again. */
static void drain_dirty(void)
{
    drain_no++;
    while (atomic_flag_test_and_set_explicit(&dq_lock, memory_order_acquire)) { }
    uint32_t n = dq_n;
    int overflow = dq_overflow;
    memcpy(dq_copy, dq, n * sizeof dq[0]);
    dq_n = 0;
    dq_overflow = 0;
    atomic_flag_clear_explicit(&dq_lock, memory_order_release);
    if (overflow) {   /* too many pages for the queue: every dirty byte is still set, walk them all */
        n = 0;
        int hw = atomic_load(&region_hw);
        for (int i = 0; i < hw; i++)
            if (atomic_load(&regions[i].cpu) && regions[i].dirty)
                for (uint32_t p = 0; p < regions[i].npages; p++)
                    if (atomic_load(&regions[i].dirty[p]) == 1 && n < DQ_MAX) dq_copy[n++] = (uint64_t)i << 32 | p;
    }
    if (n > 1) qsort(dq_copy, n, sizeof dq_copy[0], cmp_u64);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i && dq_copy[i] == dq_copy[i - 1]) continue;
        region *r = &regions[dq_copy[i] >> 32];
        uint32_t p = (uint32_t)dq_copy[i];
        uintptr_t cpu = atomic_load(&r->cpu);
        if (!cpu || !r->dirty || p >= r->npages || atomic_load(&r->dirty[p]) != 1) continue;
        int promote = r->last_dirty[p] != 0 && r->last_dirty[p] + 1 == drain_no && hot_n < hot_limit;
        if (promote) hot_add(r, p);
        atomic_store(&r->dirty[p], promote ? 2 : 0);
        dq_copy[m++] = dq_copy[i] | (promote ? PROMOTED : 0);
    }
    protect_runs(dq_copy, m);
    for (uint32_t i = 0; i < m; i++) {
        region *r = &regions[(dq_copy[i] & ~PROMOTED) >> 32];
        uint32_t p = (uint32_t)dq_copy[i];
        record_changed_page(r, p);
        r->last_dirty[p] = drain_no;
    }
    scan_hot();
}

static void on_written(void *ctx, void *addr, uint64_t len)
{
    region *r = ctx;
    uint64_t off = (uint64_t)((uintptr_t)addr - atomic_load(&r->cpu));
    uint32_t first = (uint32_t)(off / PAGE), count = (uint32_t)((len + PAGE - 1) / PAGE);
    for (uint32_t p = first; p < first + count && p < r->npages; p++) record_changed_page(r, p);
}

void shim_mem_before_submit(const vgt_segment *segs, uint32_t nseg)
{
    if (g_shim.memory_mode == SHIM_MEM_NONE) return;
    uint64_t t0 = vgt_now_ns();
    cur_segs = segs;
    ncur_segs = segs ? nseg : 0;
    if (g_shim.memory_mode == SHIM_MEM_CHANGED) drain_dirty();
    int hw = atomic_load(&region_hw);
    for (int i = 0; i < hw; i++) {
        region *r = &regions[i];
        if (!atomic_load(&r->cpu)) continue;
        if (g_shim.memory_mode == SHIM_MEM_ALL) record_run(r, 0, r->npages, VGT_MEM_CHANGED);
        else if (r->hashed) record_hash_changes(r, VGT_MEM_CHANGED);
        else if (r->uffd) {
            vgt_error err;
            uint64_t t1 = vgt_now_ns();
            vgt_status wrc = vgt_capture_wp_collect(wp, (void *)atomic_load(&r->cpu), r->len, on_written, r, &err);
            SHIM_TIME_ADD(wp_ns, t1);
            if (wrc != VGT_OK) {
                shim_problem(1, err.code, "%s: hashing this region from now on", err.msg);
                r->uffd = 0;
                r->hashed = 1;
            }
        }
    }
    cur_segs = NULL;
    ncur_segs = 0;
    atomic_fetch_add(&g_shim_time.memory_ns, vgt_now_ns() - t0);
}

static void release(region *r)
{
    for (uint32_t i = 0; i < hot_n;)   /* its hot pages go with it (the slot may be reused) */
        if (hot[i].region == (uint32_t)(r - regions)) hot[i] = hot[--hot_n];
        else i++;
    for (uint32_t i = 0; i < nskips;)   /* and its infrastructure ranges */
        if (skips[i].region == (uint32_t)(r - regions)) skips[i] = skips[--nskips];
        else i++;
    uintptr_t cpu = atomic_load(&r->cpu);
    if (r->uffd) vgt_capture_wp_remove(wp, (void *)cpu, r->len);
    else if (!r->hashed) g_libc.mprotect((void *)cpu, r->len, PROT_READ | PROT_WRITE);
    uint32_t g = atomic_fetch_add(&grave_n, 1) % GRAVE;
    atomic_store(&grave_lo[g], cpu);
    atomic_store(&grave_hi[g], cpu + r->len);
    atomic_store(&r->cpu, 0);
    if (r->dirty) g_libc.munmap((void *)r->dirty, r->npages);
    if (r->hash) g_libc.munmap(r->hash, (size_t)r->npages * 8);
    if (r->last_dirty) g_libc.munmap(r->last_dirty, (size_t)r->npages * 4);
    if (r->shadow) g_libc.munmap(r->shadow, r->len);
    if (r->shadow_ok) g_libc.munmap(r->shadow_ok, r->npages);
    r->dirty = NULL;
    r->hash = NULL;
    r->last_dirty = NULL;
    r->shadow = r->shadow_ok = NULL;
}

void shim_mem_view_removing(uint64_t gpu_va, uint64_t length)
{
    uint64_t t0 = vgt_now_ns();
    int hw = atomic_load(&region_hw);
    for (int i = 0; i < hw; i++) {
        region *r = &regions[i];
        if (!atomic_load(&r->cpu) || r->gpu_va >= gpu_va + length || gpu_va >= r->gpu_va + r->len) continue;
        record_hash_changes(r, VGT_MEM_OBSERVED);
        release(r);
    }
    atomic_fetch_add(&g_shim_time.observed_ns, vgt_now_ns() - t0);
}

void shim_mem_at_exit(void)
{
    if (g_shim.memory_mode == SHIM_MEM_NONE) return;
    uint64_t t0 = vgt_now_ns();
    int hw = atomic_load(&region_hw);
    for (int i = 0; i < hw; i++)
        if (atomic_load(&regions[i].cpu)) {
            record_hash_changes(&regions[i], VGT_MEM_OBSERVED);
            atomic_fetch_add(&g_shim_time.exit_views, 1);
        }
    SHIM_TIME_ADD(exit_pass_ns, t0);
}

/* A forked child: the parent's regions are not the child's to record. Those write-protected here are
 * made writable again (the child's writes must not fault into a table that no longer knows them). */
void shim_mem_forget_all(void)
{
    int hw = atomic_load(&region_hw);
    for (int i = 0; i < hw; i++) {
        region *r = &regions[i];
        uintptr_t cpu = atomic_load(&r->cpu);
        if (cpu && !r->hashed && !r->uffd) g_libc.mprotect((void *)cpu, r->len, PROT_READ | PROT_WRITE);
        atomic_store(&r->cpu, 0);
    }
    atomic_store(&region_hw, 0);
    atomic_flag_clear(&dq_lock);
    dq_n = 0;
    dq_overflow = 0;
    hot_n = 0;
    nskips = 0;
    wp = NULL;          /* the parent's userfaultfd; a child that captures opens its own */
    shim_pristine_forget_all();
    wp_tried = 0;
}

/* Stats: the live regions that took the most write faults, "memory/KiB:faults/changed" each, so a device
 * run shows which memory the program dirties at every submission. */
void shim_mem_top_regions(char *buf, size_t n)
{
    int used[8], nused = 0;
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < 8; k++) {
        int best = -1;
        int hw = atomic_load(&region_hw);
        for (int i = 0; i < hw; i++) {
            int taken = 0;
            for (int j = 0; j < nused; j++) taken |= used[j] == i;
            if (taken || !atomic_load(&regions[i].cpu) || !atomic_load(&regions[i].faults)) continue;
            if (best < 0 || atomic_load(&regions[i].faults) > atomic_load(&regions[best].faults)) best = i;
        }
        if (best < 0) break;
        used[nused++] = best;
        const region *r = &regions[best];
        int w = snprintf(buf + at, n - at, "%s0x%x/%lluKiB:%u/%u", k ? " " : "", r->memory,
                         (unsigned long long)(r->len >> 10), (unsigned)atomic_load(&((region *)r)->faults), r->changed);
        if (w < 0 || (size_t)w >= n - at) break;
        at += (size_t)w;
    }
}

/* ---- the capture's tracker: its hooks in the terms of the functions above ---- */
static void on_view_added(void *ctx, const vgt_capture_view *v, uint32_t cls, int zeroed)
{
    (void)ctx;
    shim_mem_view_added(v->gpu_va, v->length, (void *)(uintptr_t)v->host, v->client, v->memory,
                        (zeroed ? SHIM_VIEW_ZEROED : 0) | (cls == 0x71 ? SHIM_VIEW_OS_PAGES : 0));
}

static void on_view_removing(void *ctx, const vgt_capture_view *v)
{
    (void)ctx;
    shim_mem_view_removing(v->gpu_va, v->length);
}

static void on_fresh_cpu_map(void *ctx, uint64_t cpu, uint64_t length)
{
    (void)ctx;
    if (g_shim.memory_mode == SHIM_MEM_CHANGED) shim_pristine_add(cpu, length);
}

static void on_cpu_unmapping(void *ctx, uint64_t cpu, uint64_t length)
{
    (void)ctx;
    shim_pristine_drop(cpu, length);
}

static void on_channel_infra(void *ctx, uint64_t ring_va, uint64_t ring_bytes, const void *userd, uint64_t userd_bytes)
{
    (void)ctx;
    shim_mem_channel_infra(ring_va, ring_bytes, (uintptr_t)userd, userd_bytes);
}

static void on_before_submit(void *ctx, const vgt_segment *segs, uint32_t nseg)
{
    (void)ctx;
    shim_mem_before_submit(segs, nseg);
}

static void on_finish(void *ctx)
{
    (void)ctx;
    shim_mem_at_exit();
}

const vgt_capture_tracker *shim_mem_tracker(void)
{
    static const vgt_capture_tracker t = {
        .view_added = on_view_added, .view_removing = on_view_removing, .fresh_cpu_map = on_fresh_cpu_map,
        .cpu_unmapping = on_cpu_unmapping, .channel_infra = on_channel_infra, .before_submit = on_before_submit,
        .finish = on_finish,
    };
    return &t;
}
