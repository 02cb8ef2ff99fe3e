/* devmodel.c: a reference device model: the host side of a guest's GPU, recording what it sees.
 *
 * A device model (a hypervisor module, QEMU, a vfio-user server) sees the guest's physical memory, the
 * objects and channels the guest's driver asks it to create, and doorbell writes carrying a channel's new
 * GP_PUT. It does not see the guest CPU write memory (a dirty log tells it which pages changed). This
 * program plays that part over a recorded guest: guest memory is an image file (system memory, and
 * optionally a video-memory image), guest activity is an event file, and everything it records goes
 * through the freestanding encoder (capture/freestanding/vgt_fenc.h) as an uncompressed record stream
 * for `vgt ingest`. At each doorbell it
 *   - records MEMORY for every mapped page the guest wrote since the last doorbell (VA -> physical through
 *     the page-table walker, analyze/include/vgt/mmu.h, then the dirty log);
 *   - reads the new GPFIFO entries out of the ring and the push buffer of each entry, all through the
 *     walker from the channel's page directory, and records one GPFIFO_SUBMIT.
 *
 * usage: devmodel --sysmem RAM.img [--vidmem VRAM.img] --events EVENTS.bin -o STREAM|- [--chip NAME]
 *
 * Event file: a sequence of events, each `u32 kind, u32 length, u64 ts` then `length` bytes (all
 * little-endian); kinds and payloads are the enum below. It is what a test (tests/py/test_devmodel.py)
 * rebuilds from a corpus trace; a real device model gets the same facts from its traps and RPCs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vgt/mmu.h"
#include "vgt/pushbuf.h"
#include "vgt_fenc.h"

enum ev_kind {
    EV_WRITE = 1,       /* u32 aperture (enum vgt_mmu_aperture), u32 0, u64 pa, bytes: the guest CPU wrote memory */
    EV_OBJECT = 2,      /* u32 client, parent, handle, class: an RM object */
    EV_FREE = 3,        /* u32 client, parent, handle, 0 */
    EV_VASPACE = 4,     /* u32 handle, u32 root aperture, u64 root, u32 mmu format id, u32 big page shift */
    EV_CHANNEL = 5,     /* u32 client, parent, handle, class, u64 ring_va, u32 entries, engine_type, va_space, 0 */
    EV_ENGINE = 6,      /* u32 client, channel, handle, class */
    EV_MAP = 7,         /* u32 client, device, va_space, memory, u64 gpu_va, u64 length */
    EV_UNMAP = 8,       /* same payload as EV_MAP */
    EV_DOORBELL = 9,    /* u32 client, channel, gp_put, gp_get + 1 (GP_GET the model read from the channel's
                         * USERD before the doorbell; 0: not read) */
    EV_COMPLETION = 10, /* u64 gpu_va, u64 value, u32 size, u32 0: a semaphore the guest's work released */
    EV_MARKER = 11,     /* text */
};

#define PAGE 4096u
#define MAX_VAS 16
#define MAX_CHANNELS 256
#define MAX_MAPS 65536

struct mem {
    uint8_t *b;
    uint64_t size;
    uint8_t *dirty;      /* one byte per 4 KiB page: written since the last doorbell */
};

struct vas {
    uint32_t handle;
    vgt_mmu_walk walk;
};

struct channel {
    uint32_t client, handle, va_space;
    uint64_t ring_va;
    uint32_t entries, gp_put;
    uint64_t ext_base;   /* SET_PB_SEGMENT_EXTENDED_BASE */
};

struct map {
    uint32_t client, va_space;
    uint64_t va, length;
};

static struct mem sysmem, vidmem;
static struct vas vases[MAX_VAS];
static int nvas;
static struct channel channels[MAX_CHANNELS];
static int nchannels;
static struct map maps[MAX_MAPS];
static int nmaps;
static vgt_fenc enc;
static int out_fd;
static uint64_t lost_reads, last_ts;

static uint32_t g32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t g64(const uint8_t *p) { return g32(p) | (uint64_t)g32(p + 4) << 32; }

static struct mem *mem_of(int aperture)
{
    return aperture == VGT_MMU_VIDMEM ? &vidmem
         : aperture == VGT_MMU_SYS_COHERENT || aperture == VGT_MMU_SYS_NONCOHERENT ? &sysmem : NULL;
}

/* The walker's physical reads: straight out of the guest's memory. */
static int phys_read(void *ctx, int aperture, uint64_t pa, void *dst, uint32_t len)
{
    (void)ctx;
    struct mem *m = mem_of(aperture);
    if (!m || pa > m->size || len > m->size - pa) return -1;
    memcpy(dst, m->b + pa, len);
    return 0;
}

/* Reads len bytes of GPU VA through the page tables; returns how many could be read (stops at the first
 * page that does not translate). */
static uint32_t va_read(const vgt_mmu_walk *w, uint64_t va, uint8_t *dst, uint32_t len)
{
    uint32_t done = 0;
    while (done < len) {
        vgt_mmu_result r;
        if (vgt_mmu_translate(w, va + done, &r) != VGT_MMU_OK) {
            if (getenv("DEVMODEL_DEBUG"))   /* which walk failed, and where */
                fprintf(stderr, "devmodel: va 0x%llx: %s at level %u (entry 0x%llx read at 0x%llx)\n",
                        (unsigned long long)(va + done), vgt_mmu_fault_name(r.fault), r.level,
                        (unsigned long long)r.pte, (unsigned long long)r.entry_pa);
            break;
        }
        uint64_t in_page = r.page_size - ((va + done) & (r.page_size - 1));
        uint32_t n = len - done < in_page ? len - done : (uint32_t)in_page;
        if (phys_read(NULL, r.aperture, r.pa, dst + done, n)) break;
        done += n;
    }
    return done;
}

static int sink_fd(void *ctx, const vgt_fenc_part *parts, uint32_t nparts, uint32_t offset, uint32_t total)
{
    (void)ctx, (void)offset, (void)total;
    for (uint32_t i = 0; i < nparts; i++) {
        const uint8_t *p = parts[i].p;
        static const uint8_t zero[4096];
        uint32_t n = parts[i].n;
        while (n) {
            ssize_t k = write(out_fd, p ? p : zero, p ? n : (n < sizeof zero ? n : sizeof zero));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                perror("devmodel: writing the stream");
                exit(2);
            }
            if (p) p += k;
            n -= (uint32_t)k;
        }
    }
    return 0;
}

static int load(struct mem *m, const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) return perror(path), -1;
    m->size = (uint64_t)st.st_size;
    m->b = malloc(m->size ? m->size : 1);
    m->dirty = calloc(m->size / PAGE + 1, 1);
    if (!m->b || !m->dirty) return fprintf(stderr, "devmodel: %s: out of memory\n", path), -1;
    for (uint64_t got = 0; got < m->size;) {
        ssize_t k = pread(fd, m->b + got, m->size - got, (off_t)got);
        if (k <= 0) return perror(path), -1;
        got += (uint64_t)k;
    }
    close(fd);
    return 0;
}

static struct vas *vas_find(uint32_t handle)
{
    for (int i = 0; i < nvas; i++)
        if (vases[i].handle == handle) return &vases[i];
    return nvas ? &vases[0] : NULL;   /* 0 or unknown: the first VA space (a guest with one) */
}

static struct channel *channel_find(uint32_t client, uint32_t handle)
{
    for (int i = 0; i < nchannels; i++)
        if (channels[i].client == client && channels[i].handle == handle) return &channels[i];
    return NULL;
}

/* MEMORY records for the mapped pages the guest wrote since the last doorbell, runs of VA pages joined;
 * then the dirty log is cleared. */
static void record_dirty(uint64_t ts)
{
    static uint8_t buf[1u << 20];
    for (int i = 0; i < nmaps; i++) {
        struct vas *v = vas_find(maps[i].va_space);
        if (!v) continue;
        uint64_t run_va = 0;
        uint32_t run = 0;
        for (uint64_t va = maps[i].va & ~(uint64_t)(PAGE - 1); va < maps[i].va + maps[i].length; va += PAGE) {
            vgt_mmu_result r;
            int dirty = 0;
            if (vgt_mmu_translate(&v->walk, va, &r) == VGT_MMU_OK) {
                struct mem *m = mem_of(r.aperture);
                dirty = m && r.pa < m->size && m->dirty[r.pa / PAGE];
            }
            if (dirty && run < sizeof buf && va == run_va + run) {
                run += va_read(&v->walk, va, buf + run, PAGE);
                continue;
            }
            if (run) vgt_fenc_memory(&enc, ts, run_va, buf, run, VGT_MEM_CHANGED, 0, 0);
            run = 0;
            if (dirty) run_va = va, run = va_read(&v->walk, va, buf, PAGE);
        }
        if (run) vgt_fenc_memory(&enc, ts, run_va, buf, run, VGT_MEM_CHANGED, 0, 0);
    }
    memset(sysmem.dirty, 0, sysmem.size / PAGE + 1);
    if (vidmem.dirty) memset(vidmem.dirty, 0, vidmem.size / PAGE + 1);
}

#define MAX_ENTRIES 65536
#define MAX_SEGS 4096

static void doorbell(uint64_t ts, uint32_t client, uint32_t handle, uint32_t gp_put, uint32_t gp_get)
{
    struct channel *c = channel_find(client, handle);
    struct vas *v = c ? vas_find(c->va_space) : NULL;
    if (!c || !v || !c->entries) {
        fprintf(stderr, "devmodel: doorbell for unknown channel 0x%x\n", handle);
        vgt_fenc_diagnostic(&enc, ts, 1, 10, "doorbell for an unknown channel", 31);
        return;
    }
    record_dirty(ts);
    static uint64_t entries[MAX_ENTRIES];
    static vgt_frec_segment segs[MAX_SEGS];
    static uint8_t *data[MAX_SEGS];
    uint32_t n = (gp_put + c->entries - c->gp_put) % c->entries, nseg = 0, flags = 0;
    if (n > MAX_ENTRIES) n = MAX_ENTRIES;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = (c->gp_put + i) % c->entries;
        uint8_t b[8] = {0};
        if (va_read(&v->walk, c->ring_va + 8ull * slot, b, 8) != 8) lost_reads++;
        entries[i] = g64(b);
        vgt_gp_entry e;
        vgt_gp_entry_decode(entries[i], &e);
        if (e.is_control) {
            if (e.opcode == 4) c->ext_base = (uint64_t)e.operand << 40;   /* SET_PB_SEGMENT_EXTENDED_BASE */
            continue;
        }
        uint64_t va = e.va + c->ext_base;
        uint32_t len = e.length * 4;
        uint32_t level = e.level ? 1u : 0u;
        int seen = 0;
        for (uint32_t k = 0; k < nseg && !seen; k++)
            seen = segs[k].gpu_va == va && segs[k].length >= len && (segs[k].flags & 1) == level;
        if (seen || nseg == MAX_SEGS) continue;
        data[nseg] = realloc(data[nseg], len ? len : 1);
        uint32_t got = va_read(&v->walk, va, data[nseg], len);
        segs[nseg] = (vgt_frec_segment){va, got, level | (got < len ? 2u : 0u), data[nseg]};
        if (got < len) flags |= 1, lost_reads++;
        nseg++;
    }
    vgt_frec_submit s = {client, handle, 0, flags, gp_get, c->gp_put, VGT_GP_NOT_READ, gp_put, n, nseg};
    vgt_fenc_submit(&enc, ts, &s, entries, segs);
    c->gp_put = gp_put;
}

static int run_events(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return perror(path), -1;
    uint8_t h[16];
    uint8_t *p = NULL;
    size_t cap = 0;
    while (fread(h, 1, 16, f) == 16) {
        uint32_t kind = g32(h), len = g32(h + 4);
        uint64_t ts = g64(h + 8);
        last_ts = ts;
        if (len + 8u > cap) {
            p = realloc(p, len + 8u);
            cap = len + 8u;
        }
        memset(p, 0, 8);
        if (len && fread(p, 1, len, f) != len) return fprintf(stderr, "devmodel: %s: truncated event\n", path), -1;
        switch (kind) {
        case EV_WRITE: {
            struct mem *m = mem_of((int)g32(p));
            uint64_t pa = g64(p + 8), n = len - 16;
            if (!m || pa > m->size || n > m->size - pa) {
                fprintf(stderr, "devmodel: a guest write at 0x%llx outside memory\n", (unsigned long long)pa);
                return -1;
            }
            memcpy(m->b + pa, p + 16, n);
            for (uint64_t q = pa / PAGE; q <= (pa + n - (n ? 1 : 0)) / PAGE; q++) m->dirty[q] = 1;
            break;
        }
        case EV_OBJECT: {
            vgt_frec_object o = {g32(p), g32(p + 4), g32(p + 8), g32(p + 12), 0, 0, NULL, NULL};
            vgt_fenc_object(&enc, ts, &o);
            break;
        }
        case EV_FREE: {
            vgt_frec_free x = {g32(p), g32(p + 4), g32(p + 8), 0};
            vgt_fenc_free(&enc, ts, &x);
            break;
        }
        case EV_VASPACE:
            if (nvas == MAX_VAS) break;
            vases[nvas].handle = g32(p);
            vases[nvas].walk = (vgt_mmu_walk){vgt_mmu_format_get((int)g32(p + 16)), g64(p + 8), (int)g32(p + 4),
                                              g32(p + 20), phys_read, NULL};
            if (!vases[nvas].walk.fmt) return fprintf(stderr, "devmodel: unknown MMU format %u\n", g32(p + 16)), -1;
            nvas++;
            break;
        case EV_CHANNEL: {
            if (nchannels == MAX_CHANNELS) break;
            struct channel *c = &channels[nchannels++];
            *c = (struct channel){g32(p), g32(p + 8), g32(p + 32), g64(p + 16), g32(p + 24), 0, 0};
            vgt_frec_channel ch = {g32(p), g32(p + 4), g32(p + 8), g32(p + 12), g64(p + 16), g32(p + 24), 0, 0, 0,
                                   g32(p + 28), g32(p + 32), 0, 0, 0};
            vgt_fenc_channel(&enc, ts, &ch);
            break;
        }
        case EV_ENGINE: {
            vgt_frec_engine_object o = {g32(p), g32(p + 4), g32(p + 8), g32(p + 12), 0};
            vgt_fenc_engine_object(&enc, ts, &o);
            break;
        }
        case EV_MAP:
        case EV_UNMAP: {
            uint64_t va = g64(p + 16), length = g64(p + 24);
            if (kind == EV_MAP) {
                vgt_frec_map m = {g32(p), g32(p + 4), g32(p + 8), g32(p + 12), va, 0, length, 0, 3, 0};
                vgt_fenc_map(&enc, ts, &m);
                if (nmaps < MAX_MAPS) maps[nmaps++] = (struct map){g32(p), g32(p + 8), va, length};
            } else {
                vgt_frec_unmap m = {g32(p), g32(p + 4), g32(p + 8), g32(p + 12), va, length, 3, 0};
                vgt_fenc_unmap(&enc, ts, &m);
                for (int i = 0; i < nmaps; i++)
                    if (maps[i].va == va) maps[i] = maps[--nmaps], i--;
            }
            break;
        }
        case EV_DOORBELL:
            doorbell(ts, g32(p), g32(p + 4), g32(p + 8), g32(p + 12) ? g32(p + 12) - 1 : VGT_GP_NOT_READ);
            break;
        case EV_COMPLETION:
            vgt_fenc_semaphore(&enc, ts, g64(p), g64(p + 8), g32(p + 16), 0);
            break;
        case EV_MARKER:
            vgt_fenc_marker(&enc, ts, (const char *)p, len);
            break;
        default:
            fprintf(stderr, "devmodel: unknown event kind %u\n", kind);
            return -1;
        }
    }
    free(p);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *sys = NULL, *vid = NULL, *events = NULL, *out = NULL, *chip = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sysmem")) sys = argv[i + 1];
        else if (!strcmp(argv[i], "--vidmem")) vid = argv[i + 1];
        else if (!strcmp(argv[i], "--events")) events = argv[i + 1];
        else if (!strcmp(argv[i], "-o")) out = argv[i + 1];
        else if (!strcmp(argv[i], "--chip")) chip = argv[i + 1];
        else return fprintf(stderr, "devmodel: unknown option %s\n", argv[i]), 2;
    }
    if (!sys || !events || !out) {
        fprintf(stderr, "usage: devmodel --sysmem RAM.img [--vidmem VRAM.img] --events EVENTS.bin -o STREAM|- "
                        "[--chip NAME]\n");
        return 2;
    }
    if (load(&sysmem, sys) || (vid && load(&vidmem, vid))) return 2;
    out_fd = strcmp(out, "-") ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
    if (out_fd < 0) return perror(out), 2;
    vgt_fenc_init(&enc, sink_fd, NULL);
    vgt_fenc_identity ident[4] = {{"producer", "devmodel (vgtrace example)"}, {"capture_mode", "embedded"}};
    uint32_t nident = 2;
    if (chip) ident[nident++] = (vgt_fenc_identity){"chip", chip};
    vgt_fenc_begin(&enc, ident, nident);
    int rc = run_events(events);
    vgt_fenc_end(&enc, last_ts);
    if (out_fd != 1) close(out_fd);
    if (lost_reads) fprintf(stderr, "devmodel: %llu reads through the page tables failed\n", (unsigned long long)lost_reads);
    return rc ? 2 : lost_reads ? 1 : 0;
}
