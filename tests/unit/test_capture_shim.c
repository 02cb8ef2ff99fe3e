/* test_capture_shim.c: the whole LD_PRELOAD shim driven through its real entry points on the CPU, from
 * the ioctls to trapped doorbell stores, and the records it writes compared one by one.
 *
 * The shim is built into this test (one translation unit, as in test_capture_remap.c), so the test's own
 * ioctl, mmap and munmap calls go through the shim's hooks. The kernel driver is replaced by a fake RM
 * (g_libc.ioctl): every escape succeeds as passed, GET_WORK_SUBMIT_TOKEN answers a token. GPU memory is
 * a memfd, mapped for the "GPU" by RM_MAP_MEMORY_DMA and for the CPU by RM_MAP_MEMORY + mmap; the
 * usermode page is another memfd, trapped by the shim. The program writes GPFIFO entries, push buffers,
 * data and GP_PUT into the CPU mapping and stores the work-submit token at +0x90 of the usermode page:
 *
 *   store --SIGSEGV--> trap handler --> registry: token -> channel -> USERD GP_PUT -> changed memory
 *         --> GPFIFO_SUBMIT (entries, segments)
 *
 * Part 1, one thread: the record sequence (type, and the payload's hash; CPU addresses left out) must be
 * exactly the expected one (GPFIFO_SUBMIT carries the GP_GET read from the fake USERD), so a change to how the shim is built never changes what it records for the
 * same ioctl and doorbell sequence. Part 2: two threads, each with its own channel, ring doorbells at
 * once: every submission is recorded once, in order per channel, with its own push buffer (none lost,
 * none duplicated), within a bounded time (no deadlock between the trap handler and the other paths). */
#include "../../capture/src/shim_libc.c"
#include "../../capture/src/shim_init.c"
#include "../../capture/src/shim_fds.c"
#include "../../capture/src/shim_objects.c"
#include "../../capture/src/shim_memtrack.c"
#include "../../capture/src/shim_pristine.c"
#include "../../capture/src/shim_prof.c"
#include "../../capture/src/shim_trap.c"
#include "../../capture/src/shim_rm.c"
#include "../../capture/src/shim_uvm.c"
#include "../../capture/src/shim_hooks.c"
#include "../../capture/src/shim_abi.c"
#include "check.h"

#define RM_REQ(nr, size) ((3ul << 30) | ((unsigned long)(size) << 16) | (0x46ul << 8) | (nr))
#define CLIENT 1u
#define DEVICE 2u
#define MEM_BYTES 0x10000u
#define VA(k) (0x1000000000ull + (uint64_t)(k) * 0x100000ull)   /* GPU VA of memory k */
#define RING_OFF 0x0u
#define PB_OFF 0x4000u
#define USERD_OFF 0x8000u
#define DATA_OFF 0xC000u
#define TOKEN(ch) (0xa0000u | (ch))

static int ctl_fd;

/* A memfd at a fixed fd number: RM_MAP_MEMORY names it in its (recorded) parameters. */
static int fixed_memfd(size_t size)
{
    static int next = 600;
    int fd = memfd_create("gpu-memory", 0);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "memfd");
    int fixed = g_libc.dup2(fd, next++);
    g_libc.close(fd);
    shim_fd_opened(fixed, "/dev/nvidia0");
    return fixed;
}

static void put32(uint8_t *p, uint32_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, uint32_t off, uint64_t v) { memcpy(p + off, &v, 8); }

/* The fake RM: the parameters stay as passed (status 0); GET_WORK_SUBMIT_TOKEN gets its token. */
static int fake_ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    uint8_t *arg = va_arg(ap, uint8_t *);
    va_end(ap);
    (void)fd;
    if ((request & 0xff) == 0x2A && shim_rd32(arg, 8) == 0xc36f0108u) {
        uint8_t *params = (uint8_t *)(uintptr_t)shim_rd64(arg, 0x10);
        put32(params, 0, TOKEN(shim_rd32(arg, 4)));
    }
    return 0;
}

static void rm_alloc(uint32_t parent, uint32_t handle, uint32_t cls, void *params, uint32_t plen)
{
    uint8_t a[0x30] = { 0 };   /* NVOS64 */
    put32(a, 0, CLIENT);
    put32(a, 4, parent);
    put32(a, 8, handle);
    put32(a, 0xc, cls);
    put64(a, 0x10, (uint64_t)(uintptr_t)params);
    put32(a, 0x20, plen);
    CHECK(ioctl(ctl_fd, RM_REQ(0x2B, sizeof a), a) == 0, "RM_ALLOC 0x%x", handle);
}

static void fake_gpu_map(uint32_t handle, uint64_t va)
{
    uint8_t d[0x40] = { 0 };   /* NVOS46 */
    put32(d, 0, CLIENT);
    put32(d, 4, DEVICE);
    put32(d, 8, 4);
    put32(d, 0xc, handle);
    put64(d, 0x18, MEM_BYTES);
    put64(d, 0x30, va);
    CHECK(ioctl(ctl_fd, RM_REQ(0x57, sizeof d), d) == 0, "MAP_MEMORY_DMA");
}

static uint8_t *fake_cpu_map(uint32_t handle)
{
    int fd = fixed_memfd(MEM_BYTES);
    uint8_t m[0x38] = { 0 };   /* NVOS33 + fd */
    put32(m, 0, CLIENT);
    put32(m, 4, DEVICE);
    put32(m, 8, handle);
    put64(m, 0x18, MEM_BYTES);
    put32(m, 0x30, (uint32_t)fd);
    CHECK(ioctl(ctl_fd, RM_REQ(0x4E, sizeof m), m) == 0, "MAP_MEMORY");
    uint8_t *cpu = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(cpu != MAP_FAILED, "mmap of memory 0x%x", handle);
    return cpu;
}

static void sysmem(uint32_t handle)
{
    uint8_t p[0x80] = { 0 };
    put32(p, 8, 0x8);
    put64(p, 0x40, MEM_BYTES);
    rm_alloc(DEVICE, handle, 0x3e, p, sizeof p);
}

/* A sysmem memory object of MEM_BYTES, mapped at VA(k) for the GPU and then for the CPU (a fresh view:
 * not read). Returns the CPU mapping. */
static uint8_t *memory(uint32_t handle, unsigned k)
{
    sysmem(handle);
    fake_gpu_map(handle, VA(k));
    return fake_cpu_map(handle);
}

/* A channel whose ring, push buffers and USERD are in memory k; its token; an engine object. */
static void channel(uint32_t handle, unsigned k, uint32_t mem_handle)
{
    uint8_t p[0x170] = { 0 };   /* NV_CHANNEL_ALLOC_PARAMS */
    put64(p, 8, VA(k) + RING_OFF);
    put32(p, 0x10, 64);
    put32(p, 0x20, mem_handle);
    put64(p, 0x40, USERD_OFF);
    rm_alloc(3, handle, 0xc86f, p, 0);   /* paramsSize 0, as the drivers pass it */
    rm_alloc(handle, handle + 1, 0xcbc0, NULL, 0);
    uint32_t token = 0;
    uint8_t c[0x20] = { 0 };   /* NVOS54 */
    put32(c, 0, CLIENT);
    put32(c, 4, handle);
    put32(c, 8, 0xc36f0108u);
    put64(c, 0x10, (uint64_t)(uintptr_t)&token);
    put32(c, 0x18, 4);
    CHECK(ioctl(ctl_fd, RM_REQ(0x2A, sizeof c), c) == 0 && token == TOKEN(handle), "token 0x%x", token);
}

/* The usermode object and its page, trapped by the shim. */
static volatile uint32_t *usermode(void)
{
    rm_alloc(DEVICE, 0x300, 0xc661, NULL, 0);
    int fd = fixed_memfd(4096);
    uint8_t m[0x38] = { 0 };
    put32(m, 0, CLIENT);
    put32(m, 4, DEVICE);
    put32(m, 8, 0x300);
    put64(m, 0x18, 4096);
    put32(m, 0x30, (uint32_t)fd);
    CHECK(ioctl(ctl_fd, RM_REQ(0x4E, sizeof m), m) == 0, "MAP_MEMORY usermode");
    volatile uint32_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(page != MAP_FAILED, "mmap usermode");
    return page;
}

/* GPFIFO entry: VA[31:2] in word 0, VA[39:32] in word 1 bits 7:0, LEVEL bit 9, LENGTH (dwords) 30:10. */
static void put_entry(uint8_t *mem, uint32_t i, uint64_t va, uint32_t dwords, int sub)
{
    uint32_t w[2] = { (uint32_t)va & ~3u, ((uint32_t)(va >> 32) & 0xffu) | (uint32_t)(sub ? 1 : 0) << 9 | dwords << 10 };
    memcpy(mem + RING_OFF + 8u * (i % 64), w, 8);
}

static void set_gp_put(uint8_t *mem, uint32_t put) { *(volatile uint32_t *)(mem + USERD_OFF + 0x8c) = put; }

/* ---- part 1: one thread, the whole sequence ---- */
static void part1(volatile uint32_t *um)
{
    uint8_t *mem = memory(0x100, 0);
    channel(0x200, 0, 0x100);
    for (uint32_t i = 0; i < 16; i++) mem[PB_OFF + i] = (uint8_t)(0x10 + i);
    memset(mem + DATA_OFF + 0x20, 0x5c, 8);                  /* data the submission reads: changed */
    put_entry(mem, 0, VA(0) + PB_OFF, 4, 0);
    set_gp_put(mem, 1);
    um[0x90 / 4] = TOKEN(0x200);                             /* doorbell 1: one entry */
    for (uint32_t i = 0; i < 8; i++) mem[PB_OFF + 0x100 + i] = (uint8_t)(0x40 + i);
    put_entry(mem, 1, VA(0) + PB_OFF + 0x100, 2, 1);         /* a subroutine */
    put_entry(mem, 2, VA(0) + PB_OFF, 4, 0);                 /* the first push buffer again */
    mem[DATA_OFF + 0x21] = 0x77;
    set_gp_put(mem, 3);
    um[0x90 / 4] = TOKEN(0x200);                             /* doorbell 2: two entries */
    um[0x90 / 4] = 0x5555;                                   /* no channel has this token */
    uint32_t timer = um[0x80 / 4];                           /* a load: nothing recorded */
    (void)timer;
    uint8_t f[0x10] = { 0 };                                 /* NVOS00: free the channel */
    put32(f, 0, CLIENT);
    put32(f, 4, 3);
    put32(f, 8, 0x200);
    CHECK(ioctl(ctl_fd, RM_REQ(0x29, sizeof f), f) == 0, "RM_FREE");
    um[0x90 / 4] = TOKEN(0x200);                             /* its token is gone with it */
    /* CUDA's order: the CPU mapping first, kept pristine until the GPU mapping comes; written in between,
     * so its view is read whole. A second GPU mapping of the same memory: a second view of the same
     * pages, read too. */
    sysmem(0x140);
    uint8_t *m2 = fake_cpu_map(0x140);
    m2[0x10] = 1;
    fake_gpu_map(0x140, VA(4));
    fake_gpu_map(0x140, VA(5));
    mem[DATA_OFF + 0x800] = 0x99;                            /* written, then unmapped: observed */
    munmap(mem, MEM_BYTES);
    m2[0x2000] = 2;                                          /* both views see it when they go */
    munmap(m2, MEM_BYTES);
}

/* ---- part 2: two threads ringing doorbells at once, each on its own channel ---- */
#define ROUNDS 300
typedef struct worker { uint32_t channel; uint8_t *mem; volatile uint32_t *um; } worker;

static void *ring_loop(void *arg)
{
    worker *w = arg;
    for (uint32_t k = 0; k < ROUNDS; k++) {
        uint8_t *pb = w->mem + PB_OFF + 16u * (k % 64);
        uint32_t tag[4] = { w->channel, k, ~k, 0x600d };
        memcpy(pb, tag, sizeof tag);
        put_entry(w->mem, k, VA(w->channel == 0x400 ? 1 : 2) + PB_OFF + 16u * (k % 64), 4, 0);
        set_gp_put(w->mem, (k + 1) % 64);
        w->um[0x90 / 4] = TOKEN(w->channel);
    }
    return NULL;
}

static void part2(volatile uint32_t *um)
{
    worker w[2] = { { 0x400, memory(0x110, 1), um }, { 0x500, memory(0x120, 2), um } };
    channel(0x400, 1, 0x110);
    channel(0x500, 2, 0x120);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, ring_loop, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

/* Part 1's records: type and payload length, and XXH3 of the payload (CPU_MAP / CPU_UNMAP: of the
 * payload without the CPU address, which differs from run to run). */
typedef struct sig { uint16_t type; uint32_t length; uint64_t hash; } sig;
static const sig WANT[] = {
#include "test_capture_shim.expected"
};

static sig signature(const vgt_record *r)
{
    sig s = { r->type, r->length, XXH3_64bits(r->payload, r->length) };
    vgt_error err;
    if (r->type == VGT_REC_CPU_MAP) {
        vgt_rec_cpu_map m;
        if (vgt_decode_cpu_map(r, &m, &err) == VGT_OK) { m.cpu_address = 0; s.hash = XXH3_64bits(&m, sizeof m); }
    } else if (r->type == VGT_REC_CPU_UNMAP) {
        vgt_rec_cpu_unmap m;
        if (vgt_decode_cpu_unmap(r, &m, &err) == VGT_OK) { m.cpu_address = 0; s.hash = XXH3_64bits(&m, sizeof m); }
    }
    return s;
}

/* Part 2's submissions: per channel, ROUNDS of them with gp_put k+1 and the push buffer tagged k. */
static void check_part2(const vgt_record *r, uint32_t next[2])
{
    vgt_rec_gpfifo_submit s;
    vgt_segment seg[4];
    vgt_error err;
    if (vgt_decode_gpfifo_submit(r, &s, seg, 4, &err) != VGT_OK) { CHECK(0, "decode: %s", err.msg); return; }
    int i = s.channel == 0x400 ? 0 : s.channel == 0x500 ? 1 : -1;
    static int failures;
    if (i < 0 || failures > 5) return;
    uint32_t k = next[i]++;
    uint32_t tag[4] = { 0 };
    if (s.segment_count == 1 && seg[0].length == 16) memcpy(tag, seg[0].data, 16);
    int ok = s.token == TOKEN(s.channel) && s.entry_count == 1 && s.gp_put_before == k % 64 &&
             s.gp_put_after == (k + 1) % 64 && tag[0] == s.channel && tag[1] == k && tag[2] == ~k;
    failures += !ok;
    CHECK(ok,
          "channel 0x%x submission %u: %u entries, put %u..%u, push buffer of submission %u", s.channel, k,
          s.entry_count, s.gp_put_before, s.gp_put_after, tag[1]);
}

int main(int argc, char **argv)
{
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;   /* prints part 1's signatures */
    alarm(60);                                                  /* a deadlock fails the test */
    shim_libc_resolve();
    g_libc.ioctl = fake_ioctl;
    char path[] = "/tmp/test_capture_shim_XXXXXX";
    close(mkstemp(path));
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    if (vgt_writer_open_path(&g_shim.w, path, &o, NULL, 0, &err) != VGT_OK ||
        shim_open_capture(&err) != VGT_OK ||
        vgt_trap_engine_new(&g_shim.trap, &err) != VGT_OK) {
        fprintf(stderr, "FAIL setup: %s\n", err.msg);
        return 1;
    }
    g_shim.memory_mode = SHIM_MEM_CHANGED;
    g_shim.track_mode = SHIM_TRACK_WRITE;
    wp_tried = 1;                          /* the write-protect path, as for device mappings */
    CHECK_EQ_U64(shim_trap_install(), 0, "SIGSEGV handler");
    g_shim.active = 1;
    ctl_fd = g_libc.open("/dev/null", O_RDWR);
    shim_fd_opened(ctl_fd, "/dev/nvidiactl");

    volatile uint32_t *um = usermode();
    part1(um);
    vgt_rec_marker mark = { .text = "part 2", .length = 6 };
    CHECK_STATUS(vgt_write_marker(g_shim.w, vgt_now_ns(), &mark, &err), VGT_OK, &err, "marker");
    part2(um);
    shim_finish(0);

    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    vgt_record rec;
    size_t n = 0, nwant = sizeof WANT / sizeof WANT[0];
    int in_part2 = 0;
    uint32_t next[2] = { 0, 0 };
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        if (rec.type == VGT_REC_MARKER) { in_part2 = 1; continue; }
        if (in_part2) {
            if (rec.type == VGT_REC_GPFIFO_SUBMIT) check_part2(&rec, next);
            CHECK(rec.type != VGT_REC_DOORBELL && rec.type != VGT_REC_DIAGNOSTIC, "part 2 wrote record type 0x%x", rec.type);
            continue;
        }
        sig s = signature(&rec);
        if (print) printf("    { 0x%04x, %u, 0x%016llxull },\n", s.type, s.length, (unsigned long long)s.hash);
        else if (n < nwant)
            CHECK(s.type == WANT[n].type && s.length == WANT[n].length && s.hash == WANT[n].hash,
                  "record %zu: type 0x%04x length %u hash 0x%016llx, expected type 0x%04x length %u hash 0x%016llx", n,
                  s.type, s.length, (unsigned long long)s.hash, WANT[n].type, WANT[n].length,
                  (unsigned long long)WANT[n].hash);
        n++;
    }
    vgt_reader_close(r);
    if (print) return 0;
    CHECK(n == nwant, "part 1 wrote %zu records, expected %zu", n, nwant);
    CHECK(next[0] == ROUNDS && next[1] == ROUNDS, "part 2: %u and %u submissions, expected %u each", next[0], next[1], ROUNDS);
    /* The same records whether the doorbell sites were patched (the default) or trapped every time
     * (VGT_CAPTURE_PATCH=0, a second ctest entry): part 2's site is patched after its first trap. */
    char ps[400];
    unsigned long long calls = 0;
    shim_trap_patch_stats(ps, sizeof ps);
    const char *c = strstr(ps, "patched_calls=");
    if (c) calls = strtoull(c + 14, NULL, 10);
    const char *env = getenv("VGT_CAPTURE_PATCH");
    if (env && !strcmp(env, "0")) CHECK(calls == 0, "patching is off, yet: %s", ps);
    else CHECK(calls >= 2 * ROUNDS - 2, "part 2's doorbell stores did not go through the patched site: %s", ps);
    unlink(path);
    return check_finish("test_capture_shim");
}
