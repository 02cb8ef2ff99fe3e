/* shim_init.c: start and stop of the capture inside the program, and how problems are reported.
 *
 * Environment (set by `vgt record`, see capture/README.md):
 *   VGT_CAPTURE_FD=N      write a record stream (stored chunks, no trailer) to fd N; vgt record reads it,
 *                         compresses it and finishes the trace with SESSION_END and the index
 *   VGT_CAPTURE_FD_INO=I  the pipe's inode: a reused fd number that is not that pipe is never written
 *   VGT_CAPTURE_OUT=PATH  or write a complete trace file directly (when preloaded by hand)
 *   VGT_CAPTURE_CLAIM=N   a memfd (8 bytes) shared by every process of the captured program: the first
 *                         process to open an NVIDIA node writes its pid there and owns the main stream
 *   VGT_CAPTURE_CHILD_BASE=PATH  where other processes write their own trace: PATH without .vgt, then
 *                         .<pid>.vgt (a fork child using the GPU, a program exec'd later); unset: they
 *                         pass through uncaptured, with one line on stderr
 *   VGT_CAPTURE_CTL_PATH=PATH  one more path treated as /dev/nvidiactl (an emulator's node; CPU tests)
 *   VGT_CAPTURE_MEMORY=changed|all|none, VGT_CAPTURE_TRACK=write|hash, VGT_CAPTURE_CRASH_SAFE=1,
 *   VGT_CAPTURE_LIVE=1 (the stream to vgt record closes a chunk at every submission: a live consumer),
 *   VGT_CAPTURE_LEVEL=N (zstd level of VGT_CAPTURE_OUT)
 *   VGT_CAPTURE_HOT_PAGES=N, VGT_CAPTURE_HOT_QUIET=N, VGT_CAPTURE_READAHEAD=N: write-tracking tunables
 *                         (shim_memtrack.c; defaults 32, 4, 0), measured by bench/capture/run.sh
 * Without VGT_CAPTURE_FD or VGT_CAPTURE_OUT the shim passes everything through untouched.
 *
 * Processes (capture/README.md "Children"): one trace per process that uses the GPU. The first one owns
 * the main output; any other (forked, or exec'd by a wrapper after the owner) starts its own complete
 * trace, OUT.<pid>.vgt, at its own first NVIDIA open, with SESSION_START naming its parent. A forked
 * child forgets everything inherited from its parent (objects, maps, tracked memory): RM objects belong
 * to the parent's clients, and CUDA, Vulkan and GL all start over in a child. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"
#include "vgt/capture_patch.h"
#include "vgt/nv_facts.h"

shim_state g_shim = { .exit_status = -1 };

/* The CUDA layer (cuda_state.c), weak: the CPU tests that build the RM shim's files alone lack it. */
void cu_state_finish(void) __attribute__((weak));

static int out_fd = -1;             /* the stream's fd (moved high, close-on-exec) */
/* The stream's fd moved high by the constructor, and its pipe's inode: see move_stream_early. */
static int early_fd = -1;
static ino_t early_ino;
static int standalone;              /* VGT_CAPTURE_OUT: this process writes the whole trace */
static _Atomic int finished;
static _Atomic unsigned stderr_lines;

#define STDERR_LINES_MAX 20u

int shim_out_fd(void) { return out_fd; }

shim_time g_shim_time;

#define SEEN_SLOTS 1024u
static _Atomic uint64_t seen[SEEN_SLOTS];

int shim_first_time(uint64_t key)
{
    key |= 1ull << 63;   /* never 0, the empty slot */
    for (uint32_t i = 0, h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 54); i < SEEN_SLOTS; i++, h = (h + 1) % SEEN_SLOTS) {
        uint64_t cur = atomic_load(&seen[h]);
        if (cur == key) return 0;
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&seen[h], &expected, key)) return 1;
            if (expected == key) return 0;
        }
    }
    return 0;   /* table full: stay quiet */
}

void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    __atomic_add_fetch(&g_shim.problems, 1, __ATOMIC_RELAXED);
    if (atomic_fetch_add(&stderr_lines, 1) < STDERR_LINES_MAX) {
        char line[600];
        int n = snprintf(line, sizeof line, "vgt-capture: %s\n", msg);
        if (n > 0) { ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1); (void)w; }
    }
    if (!g_shim.active || !g_shim.cap) return;
    vgt_error err;
    if (vgt_capture_diagnostic(g_shim.cap, severity, code, msg, &err) != VGT_OK)
        __atomic_add_fetch(&g_shim.records_lost, 1, __ATOMIC_RELAXED);
}

void shim_record(uint16_t type, const void *rec)
{
    vgt_error err;
    if (vgt_capture_record(g_shim.cap, type, rec, &err) != VGT_OK) shim_write_failed(&err);
}

void shim_write_failed(const vgt_error *err)
{
    if (__atomic_fetch_add(&g_shim.records_lost, 1, __ATOMIC_RELAXED) == 0) {
        char line[600];
        int n = snprintf(line, sizeof line, "vgt-capture: cannot write the trace (%s); the program goes on\n", err->msg);
        if (n > 0) { ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1); (void)w; }
    }
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static void read_options(void)
{
    const char *m = getenv("VGT_CAPTURE_MEMORY");
    g_shim.memory_mode = !m || strcmp(m, "changed") == 0 ? SHIM_MEM_CHANGED : strcmp(m, "all") == 0 ? SHIM_MEM_ALL
                       : strcmp(m, "none") == 0 ? SHIM_MEM_NONE : SHIM_MEM_CHANGED;
    const char *t = getenv("VGT_CAPTURE_TRACK");
    g_shim.track_mode = t && strcmp(t, "hash") == 0 ? SHIM_TRACK_HASH : SHIM_TRACK_WRITE;
    g_shim.crash_safe = env_int("VGT_CAPTURE_CRASH_SAFE", 0);
    g_shim.live = env_int("VGT_CAPTURE_LIVE", 0);
    shim_mem_configure((uint32_t)env_int("VGT_CAPTURE_HOT_PAGES", 32), (uint32_t)env_int("VGT_CAPTURE_HOT_QUIET", 4),
                       (uint32_t)env_int("VGT_CAPTURE_READAHEAD", 0));
}

static const char *memory_mode_name(void)
{
    return g_shim.memory_mode == SHIM_MEM_ALL ? "all" : g_shim.memory_mode == SHIM_MEM_NONE ? "none" : "changed";
}

/* The program's own command line, from /proc/self/cmdline (NUL-separated). */
static uint32_t read_cmdline(char *buf, uint32_t n)
{
    int fd = g_libc.open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, buf, n);
    g_libc.close(fd);
    return got > 0 ? (uint32_t)got : 0;
}

static vgt_writer_stats wstats;     /* VGT_CAPTURE_PROFILE: the writer's time (the hooks line) */

static vgt_status open_writer(const char *path, int fd, int child, vgt_error *err)
{
    vgt_writer_options o = vgt_writer_defaults();
    o.crash_safe = g_shim.crash_safe;
    if (g_shim_prof) o.stats = &wstats;
    if (fd >= 0) {
        /* Move the stream out of the program's way (it may close or reuse low fds): the constructor's copy
         * when it is still this pipe, else now. */
        struct stat st;
        int high = early_fd >= 0 && fstat(early_fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == early_ino
                       ? early_fd : g_libc.fcntl(fd, F_DUPFD_CLOEXEC, 900);
        if (high < 0) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "VGT_CAPTURE_FD=%d: %s", fd, strerror(errno));
        early_fd = -1;
        g_libc.close(fd);
        out_fd = high;
        o.codec = VGT_CODEC_STORED;   /* vgt record compresses, in its own process */
        o.write_trailer = 0;
        o.chunk_target = 1u << 20;
        o.live = g_shim.live;         /* a chunk per submission: vgt record hands it on at once */
        vgt_identity id[] = { { "producer", "libvgt-capture" }, { "capture_mode", "preload" },
                              { "memory_mode", memory_mode_name() } };
        return vgt_writer_open_fd(&g_shim.w, out_fd, 0, &o, id, 3, err);
    }
    standalone = 1;
    o.zstd_level = env_int("VGT_CAPTURE_LEVEL", 3);
    o.placement = VGT_PLACE_IN_PLACE;   /* the program may be killed at any time: keep what was written */
    char cmd[4096];
    uint32_t n = read_cmdline(cmd, sizeof cmd - 1);
    char *argv[64];
    int argc = 0;
    for (uint32_t i = 0; i < n && argc < 63; i += (uint32_t)strlen(cmd + i) + 1) argv[argc++] = cmd + i;
    argv[argc] = NULL;
    static vgt_capture_identity ident;
    vgt_capture_identity_collect(&ident, "libvgt-capture", "preload", memory_mode_name(), g_shim.crash_safe, argc, argv);
    if (child) vgt_capture_identity_set(&ident, "capture_mode", "preload, child process");
    VGT_TRY(vgt_writer_open_path(&g_shim.w, path, &o, ident.entries, ident.count, err));
    vgt_rec_session_start s = { .wall_ns = vgt_wall_ns(), .pid = (uint32_t)getpid(), .ppid = (uint32_t)getppid(),
                                .cmdline = (const uint8_t *)cmd, .cmdline_length = n };
    return vgt_write_session_start(g_shim.w, vgt_now_ns(), &s, err);
}

static void write_process_start(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    vgt_rec_process_start p = { .pid = (uint32_t)getpid(), .ppid = (uint32_t)getppid(), .exe = exe,
                                .exe_length = n > 0 ? (uint32_t)n : 0 };
    shim_record(VGT_REC_PROCESS_START, &p);
}

static int armed;                    /* this process may capture; starts at its first NVIDIA open */
/* VGT_CAPTURE_PROFILE=1: where the capture's own start-up and exit time goes, printed at exit (monotonic
 * ns): the constructor, the start at the first NVIDIA open, and the parts of the finish. */
static struct { int on; uint64_t load, ctor_ns, activate_at, activate_ns; } prof;
static pid_t owner_pid;              /* the process this memory belongs to (a vfork child shares it) */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int32_t *claim;       /* VGT_CAPTURE_CLAIM, mapped shared: pid of the main output's owner */
static char child_base[4096];        /* VGT_CAPTURE_CHILD_BASE, or empty */

int shim_foreign(void) { return owner_pid != 0 && getpid() != owner_pid; }

int shim_pid(void) { return owner_pid ? (int)owner_pid : (int)getpid(); }

/* Everything inherited from the parent is the parent's: drop it (nothing is freed or flushed: the
 * parent's writer still holds the parent's unwritten records, which must never reach its stream twice;
 * the parent's capture, its registry, is left as it is and never used again). fork() itself waited
 * until no thread was inside the capture (its own fork handlers, capture/embed/capture_session.c), so
 * the tracker's state below is whole. */
static void after_fork_child(void)
{
    int was_active = g_shim.active;
    g_shim.active = 0;
    owner_pid = getpid();
    prof.load = vgt_now_ns();        /* the child's own profile starts here */
    prof.ctor_ns = prof.activate_at = prof.activate_ns = 0;
    pthread_mutex_init(&start_mu, NULL);
    if (out_fd >= 0) g_libc.close(out_fd);   /* the parent's stream: not ours, and its reader waits for EOF */
    out_fd = -1;
    g_shim.w = NULL;
    g_shim.cap = NULL;
    g_shim.exit_status = -1;
    g_shim.records_lost = 0;
    g_shim.problems = 0;
    standalone = 0;
    atomic_store(&finished, 0);
    if (was_active) shim_mem_forget_all();
    armed = claim != NULL || getenv("VGT_CAPTURE_OUT") != NULL;
}


static int fd_is_stream(int fd);

/* The first process to get here owns the main output. */
static int claim_main(void)
{
    if (!claim) return 1;   /* no claim shared (a shim preloaded by an older vgt): behave as before */
    int32_t expected = 0;
    return atomic_compare_exchange_strong(claim, &expected, (int32_t)getpid());
}

/* OUT.<pid>.vgt from the child base (OUT.vgt without .vgt), never over an existing file (a second image
 * of the same pid gets .<pid>-2.vgt). */
static int child_path(char *out, size_t n)
{
    if (!child_base[0]) return -1;
    for (int k = 1; k < 100; k++) {
        int w = k == 1 ? snprintf(out, n, "%s.%d.vgt", child_base, (int)getpid())
                       : snprintf(out, n, "%s.%d-%d.vgt", child_base, (int)getpid(), k);
        if (w < 0 || (size_t)w >= n) return -1;
        if (access(out, F_OK) != 0) return 0;
    }
    return -1;
}

/* Which output this process writes: main (the fd of vgt record, or VGT_CAPTURE_OUT) or its own file. */
static vgt_status open_output(vgt_error *err)
{
    const char *out = getenv("VGT_CAPTURE_OUT");
    int fd = env_int("VGT_CAPTURE_FD", -1);
    if (claim_main()) {
        if (fd_is_stream(fd)) return open_writer(NULL, fd, 0, err);
        if (out && *out) return open_writer(out, -1, 0, err);
    }
    char path[4200];
    if (child_path(path, sizeof path) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "process %d is not the first to use the GPU and no "
                        "child output is set (vgt record -o -): not captured", (int)getpid());
    return open_writer(path, -1, 1, err);
}

vgt_status shim_open_capture(vgt_error *err)
{
    /* Views point at GPU memory mapped to the CPU; memory contents come from shim_memtrack.c. */
    vgt_capture_options o = { .device_views = 1, .tracker = shim_mem_tracker() };
    return vgt_capture_open(&g_shim.cap, g_shim.w, &o, err);
}

/* Start capturing: the trap engine, the writer, the SIGSEGV handler. Runs at the first open of an NVIDIA
 * device node, not at load: wrapper scripts exec several programs in one process, and only the one that
 * talks to the GPU should own the stream (the fd becomes close-on-exec once it is in use). */
void shim_activate(void)
{
    if (!armed || g_shim.active || shim_foreign()) return;
    SHIM_SPAN(span);
    pthread_mutex_lock(&start_mu);
    if (armed && !g_shim.active) {
        uint64_t t0 = vgt_now_ns();
        armed = 0;   /* one attempt; also stops recursion from the identity probe's own open */
        vgt_error err;
        if ((!g_shim.trap && vgt_trap_engine_new(&g_shim.trap, &err) != VGT_OK) || open_output(&err) != VGT_OK ||
            shim_open_capture(&err) != VGT_OK) {
            char line[600];
            int n = snprintf(line, sizeof line, "vgt-capture: capture disabled: %s\n", err.msg);
            if (n > 0) { ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1); (void)w; }
        } else {
            if (shim_trap_install() != 0) shim_problem(2, VGT_E_IO, "cannot install the SIGSEGV handler: %s", strerror(errno));
            g_shim.active = 1;
            write_process_start();
            char ver[64] = "";
            vgt_nv_running_driver(ver, sizeof ver);
            shim_abi_check_driver(ver);
        }
        prof.activate_at = t0;
        prof.activate_ns = vgt_now_ns() - t0;
    }
    pthread_mutex_unlock(&start_mu);
    SHIM_SPAN_END(span, SHIM_PROF_ACTIVATE);
}

/* The inherited number may have been closed and reused by the program (a daemon closing every fd, then
 * opening files): never map or write an fd that is not ours. */
static int fd_is_claim(int fd)
{
    char link[64], target[128];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    return strncmp(target, "/memfd:vgt-capture-claim", 24) == 0;
}

/* The stream: vgt record names the pipe's inode (VGT_CAPTURE_FD_INO); without it, any pipe. */
static int fd_is_stream(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return 0;
    const char *ino = getenv("VGT_CAPTURE_FD_INO");
    return !ino || !*ino || strtoull(ino, NULL, 10) == (unsigned long long)st.st_ino;
}

/* The claim word: vgt record's memfd, or (preloaded by hand) a new one that this process's descendants
 * inherit through the environment. The child base: vgt record's, or VGT_CAPTURE_OUT's. */
static void map_claim(void)
{
    const char *base = getenv("VGT_CAPTURE_CHILD_BASE");
    const char *out = getenv("VGT_CAPTURE_OUT");
    if (!base && out && *out) base = out;
    if (base && *base && strlen(base) < sizeof child_base) {
        strcpy(child_base, base);
        size_t n = strlen(child_base);
        if (n > 4 && strcmp(child_base + n - 4, ".vgt") == 0) child_base[n - 4] = 0;
    }
    int fd = env_int("VGT_CAPTURE_CLAIM", -1);
    if (fd < 0 || !fd_is_claim(fd)) {
        fd = memfd_create("vgt-capture-claim", 0);
        if (fd < 0 || ftruncate(fd, 8) != 0) return;
        char v[16];
        snprintf(v, sizeof v, "%d", fd);
        setenv("VGT_CAPTURE_CLAIM", v, 1);
    }
    void *p = g_libc.mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) claim = p;
}

/* The stream's fd goes high (fd 900 and up, out of the program's way) at the first NVIDIA open; the fd
 * table grows to hold it, and a process that already has several threads then waits for an RCU grace
 * period (the kernel's expand_fdtable: 10 to 25 ms measured on a 2-core VM, on the way of the program's
 * first open). Done here, while the process has one thread, it costs a system call; the process that
 * activates takes this copy (open_writer checks it is still the same pipe). Close-on-exec, like the
 * original it shadows, which the program's children inherit as before. */
static void move_stream_early(void)
{
    int fd = env_int("VGT_CAPTURE_FD", -1);
    struct stat st;
    if (!fd_is_stream(fd) || fstat(fd, &st) != 0) return;
    early_fd = g_libc.fcntl(fd, F_DUPFD_CLOEXEC, 900);
    early_ino = st.st_ino;
}

__attribute__((constructor(101))) static void shim_start(void)
{
    uint64_t t0 = vgt_now_ns();
    shim_libc_resolve();
    if (!getenv("VGT_CAPTURE_FD") && !getenv("VGT_CAPTURE_OUT")) return;
    prof.on = env_int("VGT_CAPTURE_PROFILE", 0) > 0;
    g_shim_prof = prof.on;
    prof.load = t0;
    owner_pid = getpid();
    read_options();
    /* While the program has one thread: the patcher's registration is then a flag, not a grace period. */
    const char *patch = getenv("VGT_CAPTURE_PATCH");
    if (!(patch && !strcmp(patch, "0"))) vgt_patcher_prepare();
    shim_fds_init();
    map_claim();
    move_stream_early();
    pthread_atfork(NULL, NULL, after_fork_child);
    armed = 1;
    prof.ctor_ns = vgt_now_ns() - t0;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* One line on stderr: the phases of the capture's own start-up and exit, in ms, and the program's time
 * between (from the constructor to the finish). */
static void print_profile(uint64_t fin_at, uint64_t cuda_abi_ns, uint64_t capture_finish_ns, uint64_t end_ns,
                          uint64_t close_ns)
{
    fprintf(stderr, "vgt-capture: profile pid=%d ms ctor=%.2f activate=%.2f (at %.1f) views=%llu register=%.2f "
            "submits=%llu submit=%.2f lifetime=%.1f finish: cuda+abi=%.2f capture_finish=%.2f (exit_pass=%.2f over %llu "
            "views) end_records=%.2f writer_close=%.2f total_finish=%.2f\n", (int)getpid(), ms(prof.ctor_ns),
            ms(prof.activate_ns), prof.activate_at ? ms(prof.activate_at - prof.load) : 0.0,
            (unsigned long long)atomic_load(&g_shim_time.views_added), ms(atomic_load(&g_shim_time.initial_ns)),
            (unsigned long long)vgt_capture_get_stats(g_shim.cap).submits, ms(atomic_load(&g_shim_time.submit_ns)),
            ms(fin_at - prof.load), ms(cuda_abi_ns), ms(capture_finish_ns), ms(atomic_load(&g_shim_time.exit_pass_ns)),
            (unsigned long long)atomic_load(&g_shim_time.exit_views), ms(end_ns), ms(close_ns),
            ms(cuda_abi_ns + capture_finish_ns + end_ns + close_ns));
}

/* Finish once: observed memory (the tracker's finish, inside the capture), PROCESS_END (and SESSION_END
 * when standalone), close the writer. Once vgt_capture_finish has returned the capture records nothing
 * more, whatever other threads still call, so the records below are the last and the writer can go. */
void shim_finish(int exit_status)
{
    static _Atomic int said;
    if (prof.on && !g_shim.active && !prof.activate_at && !shim_foreign() && !atomic_exchange(&said, 1))
        /* a process that loaded the shim and never captured (a wrapper, a helper): what it cost */
        fprintf(stderr, "vgt-capture: process pid=%d uncaptured ms ctor=%.2f lifetime=%.1f\n", (int)getpid(),
                ms(prof.ctor_ns), ms(vgt_now_ns() - prof.load));
    if (!g_shim.active || shim_foreign() || atomic_exchange(&finished, 1)) return;
    uint64_t t0 = vgt_now_ns();
    if (cu_state_finish) cu_state_finish();   /* the CUDA layer's last word, while records can be written */
    shim_abi_summary();   /* while the capture still records */
    uint64_t t1 = vgt_now_ns();
    vgt_capture_finish(g_shim.cap);
    uint64_t t2 = vgt_now_ns();
    vgt_error err;
    vgt_rec_process_end pe = { .pid = (uint32_t)getpid(), .exit_status = exit_status };
    if (vgt_write_process_end(g_shim.w, vgt_now_ns(), &pe, &err) != VGT_OK) shim_write_failed(&err);
    if (standalone) {
        vgt_rec_session_end se = { .wall_ns = vgt_wall_ns(), .exit_status = exit_status, .records_lost = g_shim.records_lost };
        if (vgt_write_session_end(g_shim.w, vgt_now_ns(), &se, &err) != VGT_OK) shim_write_failed(&err);
    }
    if (getenv("VGT_CAPTURE_STATS")) {
        vgt_capture_stats cs = vgt_capture_get_stats(g_shim.cap);
        fprintf(stderr, "vgt-capture: stats pid=%d doorbells=%llu submits=%llu entries=%llu segment_bytes=%llu "
                "memory_records=%llu memory_bytes=%llu write_faults=%llu pages_read=%llu unknown_tokens=%llu read_failures=%llu "
                "problems=%llu records_lost=%u time_ms initial=%.1f submit=%.1f (memory %.1f) observed=%.1f ioctl=%.1f "
                "shim_memory_records=%llu shim_memory_bytes=%llu\n", (int)getpid(), (unsigned long long)shim_trap_doorbells(),
                (unsigned long long)cs.submits, (unsigned long long)cs.entries, (unsigned long long)cs.segment_bytes,
                (unsigned long long)cs.memory_records, (unsigned long long)cs.memory_bytes,
                (unsigned long long)shim_mem_write_faults(), (unsigned long long)shim_mem_pages_read(),
                (unsigned long long)cs.unknown_tokens,
                (unsigned long long)cs.read_failures, (unsigned long long)g_shim.problems, g_shim.records_lost,
                atomic_load(&g_shim_time.initial_ns) / 1e6, atomic_load(&g_shim_time.submit_ns) / 1e6,
                atomic_load(&g_shim_time.memory_ns) / 1e6, atomic_load(&g_shim_time.observed_ns) / 1e6,
                atomic_load(&g_shim_time.ioctl_ns) / 1e6, (unsigned long long)atomic_load(&g_shim_time.memory_records),
                (unsigned long long)atomic_load(&g_shim_time.memory_bytes));
        fprintf(stderr, "vgt-capture: split_ms trap=%.1f userd=%.1f read=%.1f protect=%.1f record=%.1f wp=%.1f fault=%.1f "
                "regions uffd=%llu hashed=%llu zero_initial_bytes=%llu\n", atomic_load(&g_shim_time.trap_ns) / 1e6,
                cs.userd_ns / 1e6, atomic_load(&g_shim_time.read_ns) / 1e6,
                atomic_load(&g_shim_time.protect_ns) / 1e6, atomic_load(&g_shim_time.record_ns) / 1e6,
                atomic_load(&g_shim_time.wp_ns) / 1e6, atomic_load(&g_shim_time.fault_ns) / 1e6,
                (unsigned long long)atomic_load(&g_shim_time.uffd_regions),
                (unsigned long long)atomic_load(&g_shim_time.hashed_regions),
                (unsigned long long)atomic_load(&g_shim_time.zero_initial_bytes));
        char patch[400];
        shim_trap_patch_stats(patch, sizeof patch);
        fprintf(stderr, "vgt-capture: doorbell sites: %s patched_ms=%.1f\n", patch, atomic_load(&g_shim_time.patched_ns) / 1e6);
        char top[600];
        shim_mem_top_regions(top, sizeof top);
        fprintf(stderr, "vgt-capture: faulting regions (memory/size:faults/changed records): %s\n", top[0] ? top : "none");
    }
    g_shim.active = 0;
    vgt_writer *w = g_shim.w;
    uint64_t t3 = vgt_now_ns();
    if (vgt_writer_close(w, &err) != VGT_OK) shim_write_failed(&err);
    if (prof.on) {
        print_profile(t0, t1 - t0, t2 - t1, t3 - t2, vgt_now_ns() - t3);
        char tail[400];
        snprintf(tail, sizeof tail, " writer_chunks=%llu writer_mb=%.2f writer_write=%.2f writer_compress=%.2f "
                 "writer_sync=%.2f", (unsigned long long)wstats.chunks, (double)wstats.stored_bytes / 1e6,
                 ms(wstats.write_ns), ms(wstats.compress_ns), ms(wstats.sync_ns + wstats.trailer_ns + wstats.commit_ns));
        shim_prof_print((int)getpid(), tail, stderr);
    }
}

__attribute__((destructor(101))) static void shim_stop(void)
{
    shim_finish(g_shim.exit_status);
}
