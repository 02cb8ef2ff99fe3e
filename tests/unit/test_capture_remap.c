/* test_capture_remap.c: the shim's mremap and fcntl(F_DUPFD*) hooks, in process, on the CPU.
 *
 * The whole shim is built into this test (one translation unit), so the test's own calls to mremap and
 * fcntl go through the shim's hooks exactly as a captured program's would. A memfd plays GPU memory:
 * mapped for the GPU (a GPU map) and for the CPU (a CPU map), it is a view, tracked by write-protection.
 * Checks: moving the CPU mapping with mremap records CPU_UNMAP, CPU_MAP at the new address and the
 * contents there (initial), and writes at the new address are still tracked (changed); a usermode
 * stand-in moved with mremap keeps trapping, and its loads still read the real page; F_DUPFD and
 * F_DUPFD_CLOEXEC duplicates of an NVIDIA fd are NVIDIA fds. */
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

#define VA 0x7800000000ull
#define MEM 0xcafe0040u
#define NP 4

static void *reserve(size_t len)   /* an address range to move a mapping to */
{
    void *p = g_libc.mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void test_mremap_view(uint8_t **old_out, uint8_t **new_out)
{
    int fd = memfd_create("gpu", 0);
    CHECK(fd >= 0 && ftruncate(fd, NP * 4096) == 0, "memfd");
    uint8_t *a = mmap(NULL, NP * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memset(a, 0x11, NP * 4096);
    vgt_error err;
    vgt_rec_gpu_map g = { .client = 1, .device = 2, .va_space = 3, .memory = MEM, .length = NP * 4096, .gpu_va = VA,
                          .source = VGT_MAP_RM_DMA };
    vgt_rec_cpu_map m = { .client = 1, .device = 2, .memory = MEM, .length = NP * 4096, .cpu_address = (uintptr_t)a };
    CHECK_STATUS(vgt_capture_gpu_map(g_shim.cap, &g, &err), VGT_OK, &err, "GPU mapping");
    CHECK_STATUS(vgt_capture_cpu_map(g_shim.cap, &m, 1, &err), VGT_OK, &err, "CPU mapping");   /* -> view, initial contents */
    a[0] = 0x22;                           /* tracked: one fault */
    CHECK(shim_mem_write_faults() == 1, "%llu faults before the move", (unsigned long long)shim_mem_write_faults());

    uint8_t *target = reserve(NP * 4096);
    uint8_t *b = mremap(a, NP * 4096, NP * 4096, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    CHECK(b == target, "mremap returned %p, expected %p (%s)", (void *)b, (void *)target, strerror(errno));
    CHECK(b[0] == 0x22 && b[4096] == 0x11, "contents did not move");
    uint64_t f0 = shim_mem_write_faults();
    b[4096 + 5] = 0x33;                    /* the moved mapping is tracked again */
    CHECK_EQ_U64(shim_mem_write_faults(), f0 + 1, "a write at the new address was not tracked");
    shim_mem_before_submit(NULL, 0);
    *old_out = a;
    *new_out = b;

    /* mremap of memory the shim does not know passes straight through, recording nothing. */
    uint8_t *anon = g_libc.mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    anon[0] = 9;
    uint8_t *grown = mremap(anon, 4096, 8192, MREMAP_MAYMOVE);
    CHECK(grown != MAP_FAILED && grown[0] == 9, "plain mremap broken");
}

static void test_mremap_trap(void)
{
    int fd = memfd_create("usermode", 0);
    CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "memfd");
    uint8_t *real = g_libc.mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    *(volatile uint32_t *)(real + 0x80) = 0x12345678;   /* the "timer" the program reads */
    volatile uint32_t *fake = shim_trap_map(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(fake != MAP_FAILED && (void *)fake != (void *)real, "no stand-in");
    CHECK(fake[0x80 / 4] == 0x12345678, "trapped load before the move: 0x%x", fake[0x80 / 4]);
    uint8_t *target = reserve(4096);
    volatile uint32_t *moved = mremap((void *)fake, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    CHECK((void *)moved == (void *)target, "stand-in not moved (%s)", strerror(errno));
    *(volatile uint32_t *)(real + 0x80) = 0x9abcdef0;
    CHECK(moved[0x80 / 4] == 0x9abcdef0, "load through the moved stand-in: 0x%x", moved[0x80 / 4]);
    CHECK(mremap((void *)moved, 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED && errno == EINVAL,
          "a usermode page was resized");
}

static void test_fcntl_dup(void)
{
    int fd = g_libc.open("/dev/null", O_RDWR);
    shim_fd_opened(fd, "/dev/nvidiactl");
    int d1 = fcntl(fd, F_DUPFD, 300), d2 = fcntl(fd, F_DUPFD_CLOEXEC, 310);
    CHECK(d1 >= 300 && shim_fd_node(d1) == SHIM_NODE_CTL, "F_DUPFD: fd %d node %d", d1, shim_fd_node(d1));
    CHECK(d2 >= 310 && shim_fd_node(d2) == SHIM_NODE_CTL, "F_DUPFD_CLOEXEC: fd %d node %d", d2, shim_fd_node(d2));
    CHECK((fcntl(d2, F_GETFD) & FD_CLOEXEC) && !(fcntl(d1, F_GETFD) & FD_CLOEXEC), "close-on-exec flags wrong");
    int plain = g_libc.open("/dev/null", O_RDONLY);
    int d3 = fcntl(plain, F_DUPFD, 320);
    CHECK(d3 >= 320 && shim_fd_node(d3) == SHIM_NODE_NONE, "a plain fd's duplicate became NVIDIA");
    close(d1); close(d2); close(d3); close(plain); close(fd);
}

int main(void)
{
    shim_libc_resolve();
    char path[] = "/tmp/test_capture_remap_XXXXXX";
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

    uint8_t *a, *b;
    test_mremap_view(&a, &b);
    test_mremap_trap();
    test_fcntl_dup();
    shim_finish(0);

    /* The records, in order: the view's initial contents, what differed when it went away (observed),
     * CPU_UNMAP of the old address, CPU_MAP of the new, the contents there, the page written after. */
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    vgt_record rec;
    int step = 0;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        vgt_rec_memory m;
        vgt_rec_cpu_map cm;
        vgt_rec_cpu_unmap cu;
        if (rec.type == VGT_REC_MEMORY && vgt_decode_memory(&rec, &m, &err) == VGT_OK) {
            if (step == 0) { CHECK(m.reason == VGT_MEM_INITIAL && m.gpu_va == VA && m.length == NP * 4096, "first"); step = 1; }
            else if (step == 1) { CHECK(m.reason == VGT_MEM_OBSERVED && m.gpu_va == VA && m.data[0] == 0x22, "observed"); step = 2; }
            else if (step == 4) {
                CHECK(m.reason == VGT_MEM_INITIAL && m.gpu_va == VA && m.length == NP * 4096 && m.data[0] == 0x22,
                      "initial at the new address: reason %u va 0x%llx len %u", m.reason, (unsigned long long)m.gpu_va, m.length);
                step = 5;
            } else if (step == 5) {
                CHECK(m.reason == VGT_MEM_CHANGED && m.gpu_va == VA + 4096 && m.data[5] == 0x33,
                      "changed after the move: reason %u va 0x%llx", m.reason, (unsigned long long)m.gpu_va);
                step = 6;
            }
        } else if (rec.type == VGT_REC_CPU_UNMAP && vgt_decode_cpu_unmap(&rec, &cu, &err) == VGT_OK) {
            CHECK(step == 2 && cu.cpu_address == (uintptr_t)a && cu.memory == MEM, "CPU_UNMAP at step %d", step);
            step = 3;
        } else if (rec.type == VGT_REC_CPU_MAP && vgt_decode_cpu_map(&rec, &cm, &err) == VGT_OK && cm.memory == MEM &&
                   step > 0) {   /* (the first is the setup's own mapping) */
            CHECK(step == 3 && cm.cpu_address == (uintptr_t)b && cm.length == NP * 4096 && cm.client == 1 && cm.device == 2,
                  "CPU_MAP at step %d: 0x%llx", step, (unsigned long long)cm.cpu_address);
            step = 4;
        }
    }
    CHECK(step == 6, "stopped at step %d of 6", step);
    vgt_reader_close(r);
    unlink(path);
    return check_finish("test_capture_remap");
}
