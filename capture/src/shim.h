/* shim.h: internals of libvgt-capture.so, the LD_PRELOAD capture shim.
 *
 * Files, one job each:
 *   shim_libc.c     the real libc entry points (dlsym RTLD_NEXT), as an overridable table
 *   shim_init.c     start/stop: options from the environment, the writer, session records, problems
 *   shim_hooks.c    the interposed entry points (open*, close, dup*, ioctl, mmap*, munmap, sigaction, exit)
 *   shim_fds.c      which fd is which NVIDIA node; RM_MAP_MEMORY waiting for its mmap
 *   shim_objects.c  which RM classes are memory, channels, usermode pages (the registry's object flags)
 *   shim_rm.c       RM escapes (nvidiactl / nvidiaN) -> records and calls on the capture's registry
 *   shim_uvm.c      UVM ioctls -> records and GPU mappings in the registry
 *   shim_trap.c     usermode pages kept PROT_NONE, the SIGSEGV handler, doorbell store -> the capture
 *   shim_memtrack.c memory contents: initial, changed (write tracking, userfaultfd, or hashing), observed;
 *                   the capture's tracker (its hooks run inside the capture's calls)
 *   shim_copy.h     reading the program's ioctl parameters through length-checked copies
 *   shim_io.c       the shim's own write() calls: no SIGPIPE/SIGXFSZ for the program (-Wl,--wrap=write)
 *   shim_prof.c     VGT_CAPTURE_PROFILE: calls and time of each hook family, the capture's own share
 *
 * The shim keeps no table of objects, mappings, views or channels: the embedded capture (capture.h) is
 * the one registry, and every hook turns what it saw into one call on it. Locks, always taken in this
 * order: the capture's mutex (the registry and, through the tracker's hooks, shim_memtrack.c's state)
 * -> the writer's; the pending-map lock (shim_fds.c) is never held with another. No capture call
 * returns holding a lock. The shim never touches a trapped or write-protected page while inside the
 * capture, so the SIGSEGV handler (whose doorbell takes the capture's mutex) can never wait for its own
 * thread. The write-tracking fault path takes no lock at all.
 */
#ifndef VGT_CAPTURE_SHIM_H
#define VGT_CAPTURE_SHIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "vgt/capture.h"
#include "vgt/capture_trap.h"
#include "vgt/trace.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_FD_MAX 65536

/* ---- shim_libc.c ---- */
typedef struct shim_libc {
    int (*open)(const char *, int, ...);
    int (*open64)(const char *, int, ...);
    int (*openat)(int, const char *, int, ...);
    int (*openat64)(int, const char *, int, ...);
    int (*close)(int);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mmap64)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    int (*mprotect)(void *, size_t, int);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    __sighandler_t (*signal)(int, __sighandler_t);
    __sighandler_t (*sysv_signal)(int, __sighandler_t);
    __sighandler_t (*sigset)(int, __sighandler_t);
    void (*exit)(int) __attribute__((noreturn));
    void (*_exit)(int) __attribute__((noreturn));
    int (*fcntl)(int, int, ...);
    int (*fcntl64)(int, int, ...);           /* NULL before glibc 2.28 */
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
} shim_libc;
extern shim_libc g_libc;
void shim_libc_resolve(void);

/* ---- shim_init.c ---- */
enum shim_memory_mode { SHIM_MEM_CHANGED = 0, SHIM_MEM_ALL = 1, SHIM_MEM_NONE = 2 };
enum shim_track_mode { SHIM_TRACK_WRITE = 0, SHIM_TRACK_HASH = 1 };

typedef struct shim_state {
    int active;                  /* 1 once the writer is open in the captured process */
    int memory_mode, track_mode, crash_safe, live;
    vgt_writer *w;
    vgt_capture *cap;
    vgt_trap_engine *trap;
    int exit_status;             /* from the interposed exit(), -1 if unknown */
    uint32_t records_lost;
    uint64_t problems;
} shim_state;
extern shim_state g_shim;

/* A capture problem: one stderr line (first few only) and a DIAGNOSTIC record; never fatal. */
void shim_problem(uint32_t severity, vgt_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void shim_finish(int exit_status);
void shim_activate(void);   /* at the first NVIDIA open */
/* g_shim.cap on g_shim.w, with the shim's options and tracker (shim_activate; the in-process tests). */
vgt_status shim_open_capture(vgt_error *err);
/* 1 in a vfork child (or anything else sharing the shim's memory from another process): the state is
 * the parent's, so the hooks pass through without touching it (no records, no fd table changes, no
 * finish at _exit or exec). */
int shim_foreign(void);
/* This process's pid as the shim last saw it start (constructor, fork): no system call. Only for code
 * that runs when !shim_foreign() (in a vfork child it is the parent's). */
int shim_pid(void);
int shim_out_fd(void);
uint64_t shim_trap_doorbells(void);
/* The patcher's counters for the stats line: "patch=on sites_patched=N ...". */
void shim_trap_patch_stats(char *buf, size_t n);
uint64_t shim_mem_write_faults(void);
uint64_t shim_mem_pages_read(void);      /* pages copied out of tracked memory so far */
/* The live regions with the most write faults: "memory/KiB:faults/changed ..." (stats line). */
void shim_mem_top_regions(char *buf, size_t n);
/* 1 the first time key is seen (a small fixed table; later problems of the same kind stay quiet). */
int shim_first_time(uint64_t key);
/* Where the shim's time goes (printed with VGT_CAPTURE_STATS=1). */
typedef struct shim_time {
    _Atomic uint64_t initial_ns, submit_ns, observed_ns, ioctl_ns, memory_ns, memory_records, memory_bytes;
    /* The split of memory_ns and of the trap path (VGT_CAPTURE_STATS; bench/capture reads them): device
     * reads, mprotect calls, MEMORY record writes, userfaultfd collection, the write-fault handler, the
     * whole doorbell trap (decode + emulate + submission record), USERD reads; regions by kind. */
    _Atomic uint64_t read_ns, protect_ns, record_ns, wp_ns, fault_ns, trap_ns, patched_ns;
    _Atomic uint64_t uffd_regions, hashed_regions, zero_initial_bytes;
    /* Start-up and exit (VGT_CAPTURE_PROFILE): views registered, and the exit pass over every live view. */
    _Atomic uint64_t views_added, exit_pass_ns, exit_views;
} shim_time;
/* t0 = vgt_now_ns() earlier; adds the time since to a shim_time field. */
#define SHIM_TIME_ADD(field, t0) atomic_fetch_add(&g_shim_time.field, vgt_now_ns() - (t0))
extern shim_time g_shim_time;
/* ---- shim_prof.c: VGT_CAPTURE_PROFILE=1, where the capture's own time goes, by hook family ----
 * A span times one piece of the shim's work; its time is exclusive: spans nested in it (in the same
 * thread, a signal handler's included) are taken out of it and counted as their own family, so the
 * families add up to the capture's total. SHIM_PROF_REAL spans are the program's own calls made from
 * a hook (the real ioctl, mmap, CUDA entry point): not the capture's time. Off: one branch per hook. */
enum shim_prof_family {
    SHIM_PROF_OPEN, SHIM_PROF_CLOSE, SHIM_PROF_IOCTL_ALLOC, SHIM_PROF_IOCTL_CONTROL, SHIM_PROF_IOCTL_FREE,
    SHIM_PROF_IOCTL_MAP, SHIM_PROF_IOCTL_MEMORY, SHIM_PROF_IOCTL_OTHER, SHIM_PROF_IOCTL_UVM, SHIM_PROF_MMAP,
    SHIM_PROF_MUNMAP, SHIM_PROF_MREMAP, SHIM_PROF_TRAP, SHIM_PROF_PATCHED, SHIM_PROF_PATCH_INSTALL,
    SHIM_PROF_WRITE_FAULT, SHIM_PROF_CUDA, SHIM_PROF_CUDA_PROC, SHIM_PROF_DLSYM, SHIM_PROF_REGISTER,
    SHIM_PROF_SUBMIT, SHIM_PROF_ACTIVATE, SHIM_PROF_REAL, SHIM_PROF_FAMILIES
};
extern int g_shim_prof;            /* VGT_CAPTURE_PROFILE=1 (set by the constructor) */
typedef struct shim_span { uint64_t t0, inner0; } shim_span;
void shim_span_begin(shim_span *s);
void shim_span_end(shim_span *s, int family);
#define SHIM_SPAN(s) shim_span s = { 0, 0 }; if (g_shim_prof) shim_span_begin(&s)
#define SHIM_SPAN_END(s, family) do { if ((s).t0) shim_span_end(&(s), (family)); } while (0)
/* The hooks' line: "open_n=N open=MS ..." for every family with calls, then the total. */
void shim_prof_print(int pid, const char *tail, FILE *f);

/* Count a failed write (records_lost) and report it once. */
void shim_write_failed(const vgt_error *err);

/* shim_abi.c: what the ABI table does not know (recorded raw, listed at the end), and the driver check. */
enum { SHIM_UNKNOWN_ESCAPE = 0, SHIM_UNKNOWN_CONTROL = 1, SHIM_UNKNOWN_CLASS = 2, SHIM_UNKNOWN_UVM = 3 };
void shim_abi_unknown(int kind, uint32_t value);
void shim_abi_summary(void);                       /* one DIAGNOSTIC "unknown: ..." when anything was */
void shim_abi_check_driver(const char *version);   /* a warning DIAGNOSTIC unless the table was checked on it */
/* Write one record through the capture (vgt_capture_record: rec is the vgt_rec_* of type). */
void shim_record(uint16_t type, const void *rec);

/* ---- shim_fds.c ---- */
enum shim_node { SHIM_NODE_NONE = 0, SHIM_NODE_CTL = VGT_NODE_CTL, SHIM_NODE_GPU = VGT_NODE_GPU, SHIM_NODE_UVM = VGT_NODE_UVM };
typedef struct shim_pending_map {
    int valid;
    uint32_t client, device, memory, flags;
    uint64_t offset, length;
} shim_pending_map;
int shim_fd_node(int fd);
void shim_fd_opened(int fd, const char *path);
void shim_fd_dup(int oldfd, int newfd);
void shim_fd_closed(int fd);
void shim_fd_set_pending(int fd, const shim_pending_map *m);
int shim_fd_take_pending(int fd, shim_pending_map *m);
int shim_node_of_path(const char *path);
/* At load, before shim_init.c registers its own fork handlers: reads VGT_CAPTURE_CTL_PATH (one more path
 * treated as /dev/nvidiactl: an emulator's CUSE node; CPU tests) and registers the fork handlers that keep
 * the pending-map lock usable in a forked child. */
void shim_fds_init(void);

/* ---- shim_objects.c ---- */
int shim_class_is_usermode(uint32_t cls);
int shim_class_is_channel(uint32_t cls);
int shim_class_is_memory(uint32_t cls);
/* VGT_CAPTURE_OBJ_MEMORY / _CHANNEL / _USERMODE for an RM class. */
uint32_t shim_class_flags(uint32_t cls);

/* ---- shim_rm.c / shim_uvm.c ---- */
/* Handle one ioctl around the real call; returns the real call's result. */
int shim_rm_ioctl(int fd, int node, unsigned long request, void *arg);
int shim_uvm_ioctl(int fd, unsigned long request, void *arg);

/* ---- shim_trap.c ---- */
int shim_trap_install(void);
/* mmap of a usermode object: map the real page aside and hand the caller a PROT_NONE stand-in. */
void *shim_trap_map(void *addr, size_t len, int prot, int flags, int fd, off_t off);
/* munmap of a stand-in (returns 1 when handled). */
int shim_trap_unmap(void *addr, size_t len);
int shim_trap_owns(const void *addr);   /* 1: addr is the start of a stand-in */
/* mremap of a stand-in: move it (returns the new address, MAP_FAILED with errno, or NULL: not a stand-in). */
void *shim_trap_remap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr);
int shim_sigaction_hook(int sig, const struct sigaction *act, struct sigaction *old, int *handled);

/* ---- shim_memtrack.c (all but the fault path run inside the capture's calls, as its tracker) ---- */
/* The hooks the capture calls (vgt_capture_options.tracker): the functions below. */
const vgt_capture_tracker *shim_mem_tracker(void);
/* A channel's ring (GPU VA range) and USERD (CPU address) in tracked memory: never recorded as changed
 * memory (the submission records carry the ring's entries; a replay uses its own USERD). */
void shim_mem_channel_infra(uint64_t ring_va, uint64_t ring_bytes, uintptr_t userd_cpu, uint64_t userd_bytes);

/* ---- shim_pristine.c: first CPU mappings of fresh RM memory, write-protected until a view claims them */
void shim_pristine_add(uintptr_t cpu, uint64_t len);
int shim_pristine_claim(uintptr_t cpu, uint64_t len);   /* 1: nothing wrote it since its CPU mapping */
int shim_pristine_fault(uintptr_t addr);                 /* 1: a write fault the table handled */
void shim_pristine_drop(uintptr_t cpu, uint64_t len);
void shim_pristine_forget_all(void);

/* A view became readable (CPU map + GPU map): record its contents (initial) and start tracking it.
 * how: SHIM_VIEW_ZEROED, the view's bytes are known to be zero (fresh RM memory nothing wrote yet): no
 * initial read; SHIM_VIEW_OS_PAGES, the program's own pages (an OS descriptor): never mprotect them. */
enum { SHIM_VIEW_ZEROED = 1, SHIM_VIEW_OS_PAGES = 2 };
void shim_mem_view_added(uint64_t gpu_va, uint64_t length, void *cpu, uint32_t client, uint32_t memory, int how);
/* A view is about to go away: record what changed (observed) and stop tracking. */
void shim_mem_view_removing(uint64_t gpu_va, uint64_t length);
/* Before a submission: MEMORY records (reason changed) for what changed since the previous one, less
 * the bytes of the submission's own push-buffer segments (segs may be NULL). */
void shim_mem_before_submit(const vgt_segment *segs, uint32_t nseg);
/* At exit: observed contents of everything still mapped. */
void shim_mem_at_exit(void);
/* SIGSEGV on a write-tracked page: 1 when handled. Async-signal-safe, lock-free. */
int shim_mem_write_fault(void *addr);
/* Tunables: hot pages (0: none; at most 32), submissions a hot page stays quiet before it is protected
 * again, pages opened ahead of a sequential writer (0: none; at most 16). Defaults 32, 4, 0. */
void shim_mem_configure(uint32_t hot_pages, uint32_t quiet, uint32_t ahead);
/* In a forked child: stop tracking the parent's regions (made writable again), start empty. */
void shim_mem_forget_all(void);

#endif
