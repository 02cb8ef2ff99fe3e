/* record.c: `vgt record [-o OUT.vgt|-] [options] -- CMD ARGS...`
 *
 * Runs CMD with libvgt-capture.so preloaded. The shim streams records (stored chunks, no trailer) into
 * a pipe; this process relays them into the output trace, compressing them here (off the program's
 * threads), and finishes the trace with SESSION_END (the program's exit status or signal) and the index.
 * If the program is killed, everything the shim had flushed is kept and the trace still closes cleanly.
 *
 *   fork --child--> env VGT_CAPTURE_FD/CLAIM/CHILD_BASE/MEMORY/..., LD_PRELOAD=libvgt-capture.so, exec CMD
 *        --parent--> SESSION_START; relay(pipe -> writer); waitpid; SESSION_END; close (index + footer)
 *
 * Processes: the first process of CMD's tree to open an NVIDIA node owns this trace (VGT_CAPTURE_CLAIM,
 * a shared word); any other that uses the GPU writes OUT.<pid>.vgt itself (capture/src/shim_init.c).
 * Failures: the exit status is always CMD's. An output that cannot be created stops before CMD runs
 * (status 2). A write that fails later (full disk, file size limit) is reported once on stderr; the
 * trace keeps every chunk written before it (the writer cuts a partial chunk off), the pipe keeps being
 * drained so CMD never blocks, and CMD's status is still returned.
 */
#include <errno.h>
#include <inttypes.h>
#include <glob.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_live.h"
#include "vgt/capture.h"
#include "vgt/cli.h"
#include "vgt/io.h"
#include "vgt/trace.h"

typedef struct rec_opts {
    const char *out, *memory, *track, *cuda_images;
    int crash_safe, memory_mode, track_mode, quiet, no_memory_cas, cuda_images_mode;
    uint64_t level, image_embed_max;
    char **cmd;
    int ncmd;
    /* live */
    int live, live_policy;       /* live_policy: 0 block, 1 spill */
    int replay;                  /* --replay given */
    const char *replay_backend;  /* --replay=BACKEND, or NULL: the replay chooses */
    int check;
    const char *latency;
} rec_opts;

static const char *const memory_modes[] = {"changed", "all", "none", NULL};
static const char *const track_modes[] = {"write", "hash", NULL};
static const char *const cuda_image_modes[] = {"auto", "embed", "ref", NULL};
static const char *const live_policies[] = {"block", "spill", NULL};

static int opt_replay(void *opts, const char *v)
{
    rec_opts *o = opts;
    if (v && strcmp(v, "sim") && strcmp(v, "gpu") && strcmp(v, "cuda"))
        return vgt_cli_error("record", VGT_EXIT_USAGE, "--replay=%s: not a backend (sim, gpu, cuda)", v);
    o->replay = 1;
    o->replay_backend = v;
    return 0;
}

static const vgt_cli_opt record_options[] = {
    {"output", 'o', VGT_ARG_PATH, "OUT.vgt", "output (default: CMD's name + .vgt); '-' writes the trace to stdout for "
     "live use, and CMD's own stdout then goes to stderr", .off = offsetof(rec_opts, out)},
    {"crash-safe", 0, VGT_ARG_NONE, NULL, "flush the trace at every submission: a killed program leaves a trace "
     "readable up to its last complete submission", .off = offsetof(rec_opts, crash_safe)},
    {"no-memory-cas", 0, VGT_ARG_NONE, NULL, "write memory contents as plain MEMORY records (readers of format 1.2 "
     "and older can read the trace); by default contents seen before are written as copies of them (MEMORY_CAS, "
     "format 1.3)",
     .off = offsetof(rec_opts, no_memory_cas)},
    {"memory", 0, VGT_ARG_ENUM, "MODE", "changed (default): memory when mapped and the pages changed before each "
     "submission; all: every mapped page before each submission; none: no memory contents",
     .off = offsetof(rec_opts, memory_mode), .choices = memory_modes},
    {"track", 0, VGT_ARG_ENUM, "HOW", "how changed pages are found: write (default; write-protect, one fault per page "
     "per submission) or hash (XXH3 of every page at every submission)", .off = offsetof(rec_opts, track_mode),
     .choices = track_modes},
    {"cuda-images", 0, VGT_ARG_ENUM, "HOW", "how the CUDA module images a launch needs are kept: auto (default: "
     "images up to 1 MiB stored in the trace, larger ones that lie in a file mapped into the program, such as a "
     "shared library's fatbins, named by path, offset and hash), embed (every image stored) or ref (every image "
     "found in a file named by it). Images in no file (built at run time) are always stored. A trace with "
     "referenced images replays with --lane cuda only where those files are, unchanged",
     .off = offsetof(rec_opts, cuda_images_mode), .choices = cuda_image_modes},
    {"cuda-image-embed-max", 0, VGT_ARG_SIZE, "BYTES", "with --cuda-images=auto: the largest image stored in the trace "
     "(default 1M); larger ones that lie in a file are referenced. A lower value keeps traces of programs with big "
     "libraries (PyTorch's fatbins) small", .off = offsetof(rec_opts, image_embed_max), .min = 0, .max = 1ull << 32},
    {"level", 0, VGT_ARG_U64, "N", "zstd level of the output (default 3)", .off = offsetof(rec_opts, level), .min = 1,
     .max = 22},
    {"quiet", 'q', VGT_ARG_NONE, NULL, "no progress line on a terminal once CMD has exited (while the rest of its "
     "records are written). Live (--live, --replay, -o -) there is none: the consumer's counters have the terminal",
     .off = offsetof(rec_opts, quiet)},
    {"live", 0, VGT_ARG_NONE, NULL, "hand each submission to the output as it happens: the capture and vgt record "
     "close a chunk at every submission, so a consumer (vgt replay --live -, vgt dump --follow) gets it at once. On by "
     "default when the output is '-', a FIFO or a device, and with --replay", .off = offsetof(rec_opts, live)},
    {"live-policy", 0, VGT_ARG_ENUM, "P", "live, when the consumer is slower than the program: block (default: the "
     "program waits; at most the pipes' buffers and one chunk are held in memory) or spill (the program never waits "
     "for the consumer: what it has not taken yet waits in a file on disk, and a DIAGNOSTIC record in the trace says "
     "how far it fell behind). Nothing is ever dropped", .off = offsetof(rec_opts, live_policy), .choices = live_policies},
    {"replay", 0, VGT_ARG_STRING, "BACKEND", "replay the program's submissions live while it runs, on BACKEND (gpu, "
     "the same GPU the program uses; sim; default: gpu when usable, else sim): the trace goes into a `vgt replay --live "
     "-` started here (its report on stderr; with -o the trace is not also written: use -o - and tee for both). The "
     "program's own results are unchanged. Counters per channel on stderr when it is a terminal",
     .apply = opt_replay, .flags = VGT_OPT_VALUE_OPTIONAL},
    {"check", 0, VGT_ARG_NONE, NULL, "with --replay: the replay checks what it produced against what the capture "
     "observed (vgt replay --check)", .off = offsetof(rec_opts, check)},
    {"latency", 0, VGT_ARG_PATH, "FILE", "with --replay: the latency of each submission from the doorbell the capture "
     "trapped to the replayed doorbell (vgt replay --latency FILE); FILE.relay says when this process read each "
     "submission from the capture and when it had handed it on to the replay", .off = offsetof(rec_opts, latency)},
    {0}};

const vgt_cli_spec cmd_record_spec = {
    .verb = "record", .args = "[options] [--] CMD [ARGS...]", .min_args = 1, .max_args = -1, .opts = record_options,
    .flags = VGT_CLI_ARGS_END_OPTIONS,
    .about = "Run CMD with the capture shim (libvgt-capture.so) preloaded and write what it submits to the GPU (RM "
             "objects, channels, GPFIFO entries with their push buffers, memory) to a .vgt trace. The options end at "
             "CMD (or at --): what follows is CMD's.\n\n"
             "The shim is found next to vgt (../lib/libvgt-capture.so) or through VGT_CAPTURE_LIB.\n\n"
             "Processes: the first process of CMD (or of its children) to open an NVIDIA device node is recorded "
             "into OUT; any other process that uses the GPU (a forked child, a program exec'd later) writes its own "
             "complete trace OUT.<pid>.vgt (with -o -, such processes are not captured). Processes that never open "
             "an NVIDIA node leave nothing.",
    .notes = "Exit status: CMD's own (128+N when a signal N ended it), also when writing the trace failed midway "
             "(full disk: reported on stderr, the records written before are kept); 2 when vgt cannot start (usage, "
             "missing capture library, output that cannot be created: CMD is not run). With --replay: CMD's status "
             "when it is not 0, else the replay's (1 when a check failed, a fault, a channel never finished).",
};

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t child_exited;   /* SIGCHLD seen: the relay then shows its progress */
static volatile uint64_t child_exit_ns;      /* when (monotonic), for the profile line */

static void on_sigchld(int sig)
{
    (void)sig;
    if (!child_exited) child_exit_ns = vgt_now_ns();   /* clock_gettime: async-signal-safe */
    child_exited = 1;
}

/* VGT_CAPTURE_PROFILE=1: where vgt record's own time goes, one line on stderr at the end (ms): setup (start
 * to fork: options, the output opened), child (fork to CMD's exit), after_exit (CMD's exit to the end: what
 * a short program waits for beyond itself), of which drain (CMD's exit to the end of the stream: records
 * still in the pipe, relayed and compressed) and close (SESSION_END, the last chunk, index, footer, the
 * file put in place); and over the whole run the writer's parts (vgt_writer_stats). */
typedef struct rec_prof { uint64_t start, fork, eof, waited, closed; vgt_writer_stats ws; } rec_prof;

static double span_ms(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) / 1e6 : 0.0; }

static void print_record_profile(const rec_prof *p, pid_t pid)
{
    uint64_t end = vgt_now_ns(), exit_at = child_exit_ns ? child_exit_ns : p->waited;
    const vgt_writer_stats *s = &p->ws;
    fprintf(stderr, "vgt record: profile pid=%d ms setup=%.2f child=%.2f after_exit=%.2f drain=%.2f close=%.2f "
            "compress=%.2f write=%.2f cas=%.2f trailer=%.2f commit=%.2f sync=%.2f chunks=%llu in_mb=%.2f out_mb=%.2f "
            "total=%.2f\n", (int)pid, span_ms(p->start, p->fork), span_ms(p->fork, exit_at), span_ms(exit_at, end),
            span_ms(exit_at, p->eof), span_ms(p->waited, p->closed), s->compress_ns / 1e6, s->write_ns / 1e6,
            s->cas_ns / 1e6, s->trailer_ns / 1e6, s->commit_ns / 1e6, s->sync_ns / 1e6, (unsigned long long)s->chunks,
            s->records_bytes / 1e6, s->stored_bytes / 1e6, span_ms(p->start, end));
}

static void forward_signal(int sig)
{
    if (child_pid > 0) kill(child_pid, sig);
}

static int parse(int argc, char **argv, rec_opts *o)
{
    *o = (rec_opts){ .level = 3, .image_embed_max = 1ull << 20 };
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_record_spec, argc, argv, o, &a);
    if (rc >= 0) return rc;
    o->memory = memory_modes[o->memory_mode];
    o->track = track_modes[o->track_mode];
    o->cuda_images = cuda_image_modes[o->cuda_images_mode];
    if ((o->check || o->latency) && !o->replay)
        return vgt_cli_error("record", VGT_EXIT_USAGE, "--%s is for --replay", o->check ? "check" : "latency");
    if (o->replay && o->out)
        return vgt_cli_error("record", VGT_EXIT_USAGE, "--replay takes the trace: -o is not written with it (record "
                             "with -o - and tee it into vgt replay --live - to keep both)");
    o->cmd = a.rest;
    o->ncmd = a.nrest;
    return -1;
}

/* The shim: $VGT_CAPTURE_LIB, else ../lib/libvgt-capture.so next to this executable. */
static int find_shim(char *path, size_t n)
{
    const char *env = getenv("VGT_CAPTURE_LIB");
    if (env && *env) {
        snprintf(path, n, "%s", env);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = 0;
    snprintf(path, n, "%s/../lib/libvgt-capture.so", dirname(exe));
    char real[PATH_MAX];
    if (realpath(path, real)) snprintf(path, n, "%s", real);
    return access(path, R_OK) == 0 ? 0 : -1;
}

static void setenv_int(const char *k, long v)
{
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    setenv(k, b, 1);
}

static void setenv_u64(const char *k, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    setenv(k, b, 1);
}

static void exec_child(const rec_opts *o, const char *shim, int wfd, int claim_fd, const char *child_base)
{
    int to_stdout = child_base == NULL && !o->replay;   /* --replay: the trace goes to a pipe, stdout stays CMD's */
    setenv_int("VGT_CAPTURE_FD", wfd);
    struct stat st;
    if (fstat(wfd, &st) == 0) setenv_int("VGT_CAPTURE_FD_INO", (long)st.st_ino);   /* the shim checks it is this pipe */
    unsetenv("VGT_CAPTURE_PID");
    if (claim_fd >= 0) setenv_int("VGT_CAPTURE_CLAIM", claim_fd);
    else unsetenv("VGT_CAPTURE_CLAIM");
    if (child_base) setenv("VGT_CAPTURE_CHILD_BASE", child_base, 1);
    else unsetenv("VGT_CAPTURE_CHILD_BASE");
    setenv("VGT_CAPTURE_MEMORY", o->memory, 1);
    setenv("VGT_CAPTURE_TRACK", o->track, 1);
    setenv("VGT_CAPTURE_CUDA_IMAGES", o->cuda_images, 1);
    setenv_u64("VGT_CAPTURE_CUDA_IMAGE_EMBED_MAX", o->image_embed_max);
    setenv("VGT_CAPTURE_CRASH_SAFE", o->crash_safe ? "1" : "0", 1);
    setenv("VGT_CAPTURE_LIVE", o->live ? "1" : "0", 1);
    unsetenv("VGT_CAPTURE_OUT");
    const char *pre = getenv("LD_PRELOAD");
    char buf[PATH_MAX * 2];
    snprintf(buf, sizeof buf, "%s%s%s", shim, pre && *pre ? ":" : "", pre && *pre ? pre : "");
    setenv("LD_PRELOAD", buf, 1);
    if (to_stdout) dup2(2, 1);   /* the trace owns stdout */
    execvp(o->cmd[0], o->cmd);
    fprintf(stderr, "vgt record: cannot run '%s': %s\n", o->cmd[0], strerror(errno));
    _exit(127);
}

/* OUT without its .vgt, made absolute (CMD's processes may change directory). */
static int base_of(const char *out, char *base, size_t n)
{
    char cwd[PATH_MAX];
    int w = out[0] == '/' || !getcwd(cwd, sizeof cwd) ? snprintf(base, n, "%s", out) : snprintf(base, n, "%s/%s", cwd, out);
    if (w < 0 || (size_t)w >= n) return -1;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".vgt")) base[len - 4] = 0;
    return 0;
}

/* Name the traces other processes wrote (BASE.<pid>.vgt), so the user knows they exist. */
static void list_child_traces(const char *base, time_t since)
{
    char pat[PATH_MAX + 16];
    snprintf(pat, sizeof pat, "%s.[0-9]*.vgt", base);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) return;
    struct stat st;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (stat(g.gl_pathv[i], &st) == 0 && st.st_mtime >= since) fprintf(stderr, "vgt record: another process's trace: %s\n", g.gl_pathv[i]);
    globfree(&g);
}

static void diag(vgt_writer *w, uint32_t severity, vgt_status code, const char *text)
{
    vgt_rec_diagnostic d = { .severity = severity, .code = (uint32_t)code, .length = (uint32_t)strlen(text), .text = text };
    vgt_error err;
    vgt_write_diagnostic(w, vgt_now_ns(), &d, &err);
}

/* --replay --latency FILE: when the relay read each submission from the capture (its chunk's arrival)
 * and when it had handed it on to the replay, for the latency breakdown: FILE.relay, one line per
 * submission "capture_ts relay_read_ns relay_written_ns" (CLOCK_MONOTONIC ns), written at the end so that
 * nothing is written on the way of a submission. */
#define RELAY_TIMES_MAX (16u << 20)
typedef struct relay_times {
    uint64_t (*t)[3];
    uint64_t n, cap;
} relay_times;

static void relay_time(relay_times *rt, uint64_t capture_ts, uint64_t read_ns)
{
    if (rt->n == rt->cap) {
        uint64_t nc = rt->cap ? rt->cap * 2 : 4096;
        void *q = nc <= RELAY_TIMES_MAX ? realloc(rt->t, nc * sizeof *rt->t) : NULL;
        if (!q) return;
        rt->t = q;
        rt->cap = nc;
    }
    rt->t[rt->n][0] = capture_ts, rt->t[rt->n][1] = read_ns, rt->t[rt->n][2] = vgt_now_ns();
    rt->n++;
}

static void relay_times_write(relay_times *rt, const char *latency)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.relay", latency);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "vgt record: cannot write %s: %s\n", path, strerror(errno));
    } else {
        fprintf(f, "# capture_ts\trelay_read_ns\trelay_written_ns\n");
        for (uint64_t i = 0; i < rt->n; i++)
            fprintf(f, "%llu\t%llu\t%llu\n", (unsigned long long)rt->t[i][0], (unsigned long long)rt->t[i][1],
                    (unsigned long long)rt->t[i][2]);
        if (fclose(f) != 0) fprintf(stderr, "vgt record: writing %s: %s\n", path, strerror(errno));
    }
    free(rt->t);
}

/* Copy every record of the shim's stream into w. Returns records relayed; problems become DIAGNOSTICs.
 * Once CMD has exited (its terminal is free), what is still to be written is shown as progress.
 * Live, each submission and each setup record (vgt_writer_live_hands_on) is handed on at once (and the spill
 * forwarder told). */
static uint64_t relay(int rfd, vgt_writer *w, int crash_safe, live_spill *spill, uint32_t *lost, vgt_progress *progress,
                      relay_times *times)
{
    vgt_reader *r;
    vgt_error err;
    vgt_reader_options ro = { .streaming = 1, .verify_checksums = 1 };
    if (vgt_reader_open_fd(&r, rfd, 0, &ro, &err) != VGT_OK) {
        /* The shim starts at the program's first open of an NVIDIA device node: no stream means no such
         * open (or a program that cannot preload: static, setuid). Not an error of the capture. */
        char msg[700];
        if (err.code == VGT_E_IO)   /* the stream was there, reading it failed */
            snprintf(msg, sizeof msg, "reading the capture stream failed: %s; no GPU activity recorded", err.msg);
        else
            snprintf(msg, sizeof msg, "the program opened no NVIDIA device node, or could not load the capture "
                     "library (a static or setuid program?): no GPU activity recorded (%s)", err.msg);
        diag(w, 0, err.code, msg);
        fprintf(stderr, "vgt record: %s\n", msg);
        return 0;
    }
    uint64_t n = 0;
    vgt_record rec;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        if (vgt_write_record(w, rec.type, rec.flags, rec.ts, rec.payload, rec.length, NULL, &err) != VGT_OK) {
            fprintf(stderr, "vgt record: cannot write the trace after %llu records: %s; the program goes on "
                    "uncaptured\n", (unsigned long long)n, err.msg);
            (*lost)++;
            break;
        }
        if (crash_safe && rec.type == VGT_REC_GPFIFO_SUBMIT) vgt_writer_flush(w, 0, NULL);
        if (spill && vgt_writer_live_hands_on(rec.type)) live_spill_flushed(spill);   /* the spill writer handed it on */
        if (times && rec.type == VGT_REC_GPFIFO_SUBMIT) relay_time(times, rec.ts, vgt_reader_chunk_read_ns(r));
        n++;
        if (child_exited) vgt_progress_set(progress, n);
    }
    if (rc != VGT_E_EOF && rc != VGT_OK) {
        char msg[700];
        snprintf(msg, sizeof msg, "the capture stream ended early after %llu records (%s); records after the "
                 "last complete chunk are lost", (unsigned long long)n, err.msg);
        diag(w, 1, err.code, msg);
        fprintf(stderr, "vgt record: %s\n", msg);   /* in the trace and here: the user sees it at once */
    }
    /* Drain what is left (a stream that ended inside a chunk) so the writer side never blocks. */
    char sink[65536];
    while (vgt_io()->read(rfd, sink, sizeof sink) > 0) { }
    vgt_reader_close(r);
    return n;
}

int cmd_record(int argc, char **argv)
{
    rec_prof prof = { .start = vgt_now_ns() };
    const char *pe = getenv("VGT_CAPTURE_PROFILE");
    int profile = pe && atoi(pe) > 0;
    rec_opts o;
    int prc = parse(argc, argv, &o);
    if (prc >= 0) return prc;
    char shim[PATH_MAX];
    if (find_shim(shim, sizeof shim) != 0)
        return vgt_cli_error("record", VGT_EXIT_USAGE, "cannot find libvgt-capture.so ('%s'); set VGT_CAPTURE_LIB", shim);
    int to_stdout = o.out && !strcmp(o.out, "-");
    struct stat ost;
    int stream_out = to_stdout || (o.out && stat(o.out, &ost) == 0 && (S_ISFIFO(ost.st_mode) || S_ISCHR(ost.st_mode)));
    o.live = o.live || stream_out || o.replay;   /* a consumer is reading as we write */
    time_t started = time(NULL);
    struct sigaction ign = { .sa_handler = SIG_IGN }, xfsz;
    sigaction(SIGXFSZ, &ign, &xfsz);   /* a file size limit is a write error (EFBIG) here, not a kill */
    char defout[PATH_MAX];
    if (!o.out && !o.replay) {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", o.cmd[0]);
        snprintf(defout, sizeof defout, "%s.vgt", basename(tmp));
        o.out = defout;
    }
    static vgt_capture_identity ident;
    vgt_capture_identity_collect(&ident, "vgt record", "preload", o.memory, o.crash_safe, o.ncmd, o.cmd);
    vgt_writer_options wo = vgt_writer_defaults();
    wo.zstd_level = (int)o.level;
    wo.crash_safe = o.crash_safe;   /* crash-safe: written straight into OUT, readable there after a crash */
    wo.placement = VGT_PLACE_KEEP_PREFIX;   /* else beside OUT, put in place at the end even after a failed write */
    wo.memory_cas = !o.no_memory_cas;   /* contents seen before (staged tensors, kernel binaries, parameters) as copies */
    wo.live = o.live;               /* a chunk per submission: the consumer gets each one at once */
    if (profile) wo.stats = &prof.ws;
    vgt_writer *w, *out;
    vgt_error err;
    pid_t replay_pid = -1;
    vgt_status rc;
    if (o.replay) {   /* the trace goes to a live replay: stored chunks (a local pipe; no time on zstd) */
        int rfd = live_replay_spawn(o.replay_backend, o.check, o.latency, &replay_pid);
        if (rfd < 0) return vgt_cli_error("record", VGT_EXIT_USAGE, "cannot start the replay: %s", strerror(errno));
        wo.codec = VGT_CODEC_STORED;
        rc = vgt_writer_open_fd(&out, rfd, 1, &wo, ident.entries, ident.count, &err);
        to_stdout = 1;   /* like -o -: one stream, other processes of CMD are not captured */
    } else {
        rc = to_stdout ? vgt_writer_open_fd(&out, 1, 0, &wo, ident.entries, ident.count, &err)
                       : vgt_writer_open_path(&out, o.out, &wo, ident.entries, ident.count, &err);
    }
    if (rc != VGT_OK) return vgt_cli_report("record", &err);
    live_spill spill, *sp = NULL;
    w = out;
    if (o.live && o.live_policy == 1) {   /* spill: the relay writes to disk, a thread forwards to the consumer */
        if (live_spill_open(&spill, out, &wo, ident.entries, ident.count, &w, &err) != VGT_OK ||
            live_spill_start(&spill, &err) != VGT_OK) {
            vgt_writer_discard(out);
            return vgt_cli_report("record", &err);
        }
        sp = &spill;
    }
    char child_base[PATH_MAX];
    if (!to_stdout && base_of(o.out, child_base, sizeof child_base) != 0)
        return vgt_cli_error("record", VGT_EXIT_USAGE, "output path '%s' is too long", o.out);
    int claim_fd = memfd_create("vgt-capture-claim", 0);   /* not close-on-exec: CMD's processes share it */
    if (claim_fd >= 0 && ftruncate(claim_fd, 8) != 0) { close(claim_fd); claim_fd = -1; }
    int pfd[2];
    if (pipe(pfd) != 0) return vgt_cli_error("record", VGT_EXIT_USAGE, "pipe: %s", strerror(errno));
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20);   /* fewer round trips for the shim's 1 MiB chunks (best effort) */
    fflush(NULL);
    prof.fork = vgt_now_ns();
    pid_t pid = fork();
    if (pid < 0) return vgt_cli_error("record", VGT_EXIT_USAGE, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(pfd[0]);
        sigaction(SIGXFSZ, &xfsz, NULL);   /* CMD gets the disposition vgt record was given */
        exec_child(&o, shim, pfd[1], claim_fd, to_stdout ? NULL : child_base);
    }
    close(pfd[1]);
    if (claim_fd >= 0) close(claim_fd);
    child_pid = pid;
    signal(SIGINT, forward_signal);
    signal(SIGTERM, forward_signal);
    signal(SIGQUIT, forward_signal);
    signal(SIGHUP, forward_signal);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction chld = { .sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
    sigaction(SIGCHLD, &chld, NULL);
    /* SESSION_START: the program's command line, each argument followed by a NUL. */
    size_t clen = 0;
    for (int i = 0; i < o.ncmd; i++) clen += strlen(o.cmd[i]) + 1;
    char *cl = malloc(clen ? clen : 1);
    size_t at = 0;
    for (int i = 0; cl && i < o.ncmd; i++) { size_t l = strlen(o.cmd[i]) + 1; memcpy(cl + at, o.cmd[i], l); at += l; }
    vgt_rec_session_start ss = { .wall_ns = vgt_wall_ns(), .pid = (uint32_t)pid, .ppid = (uint32_t)getpid(),
                                 .cmdline = (const uint8_t *)cl, .cmdline_length = cl ? (uint32_t)clen : 0 };
    uint32_t lost = 0;
    if (vgt_write_session_start(w, vgt_now_ns(), &ss, &err) != VGT_OK) lost++;
    free(cl);
    /* one line owner on the terminal: live, the consumer (the --replay child's per-channel counters, or a
     * `vgt replay --live` reading our stdout) draws there, and what is left to relay after CMD exits is at
     * most the pipes' contents, so the live counters replace the progress line */
    vgt_progress progress;
    vgt_progress_begin(&progress, "record", "records", 0, o.quiet || o.live);
    /* the stream ended: CMD is gone (or closed it); what is left is closing the trace */
    relay_times times = {0};
    vgt_progress_set(&progress, relay(pfd[0], w, o.crash_safe, sp, &lost, &progress, o.latency ? &times : NULL));
    prof.eof = vgt_now_ns();
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    prof.waited = vgt_now_ns();
    vgt_rec_session_end se = { .wall_ns = vgt_wall_ns(), .exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                               .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0, .records_lost = lost };
    if (vgt_write_session_end(w, vgt_now_ns(), &se, &err) != VGT_OK && !lost)
        fprintf(stderr, "vgt record: writing SESSION_END: %s\n", err.msg);
    vgt_status close_rc = vgt_writer_close(w, &err);
    prof.closed = vgt_now_ns();
    vgt_progress_end(&progress);
    if (close_rc != VGT_OK && !lost)
        fprintf(stderr, "vgt record: closing the trace: %s\n", err.msg);
    if (sp) {
        if (live_spill_finish(sp, &err) != VGT_OK && !lost) fprintf(stderr, "vgt record: the live stream: %s\n", err.msg);
        fprintf(stderr, "vgt record: live policy spill: the consumer fell behind by up to %llu bytes (kept on disk, "
                "nothing lost)\n", (unsigned long long)sp->peak_bytes);
    }
    if (!to_stdout) list_child_traces(child_base, started);
    if (o.latency) relay_times_write(&times, o.latency);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (profile) print_record_profile(&prof, pid);
    if (replay_pid > 0) {   /* the replay finishes once it has read the trace's end */
        int rs = 0;
        while (waitpid(replay_pid, &rs, 0) < 0 && errno == EINTR) { }
        int rcode = WIFEXITED(rs) ? WEXITSTATUS(rs) : 128 + WTERMSIG(rs);
        if (code == 0) code = rcode;
    }
    return code;
}
