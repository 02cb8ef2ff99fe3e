/* outfile.c: see include/vgt/outfile.h. */
#include "vgt/io.h"
#include "vgt/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".partial"
#define MAX_PENDING 16

/* ---- temporaries to remove if a signal ends the process ---- */

static char pending[MAX_PENDING][PATH_MAX];
static volatile sig_atomic_t pending_used[MAX_PENDING];

static int pending_add(const char *path)
{
    if (strlen(path) >= PATH_MAX) return -1;
    for (int i = 0; i < MAX_PENDING; i++) {
        if (pending_used[i]) continue;
        strcpy(pending[i], path);
        pending_used[i] = 1;   /* only once the name is complete: the handler may run at any time */
        return i;
    }
    return -1;   /* more outputs open at once than slots: that one is not removed on a signal */
}

static void pending_drop(int slot)
{
    if (slot >= 0 && slot < MAX_PENDING) pending_used[slot] = 0;
}

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending_used[i]) unlink(pending[i]);   /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);   /* delivered when the handler returns: the process ends as the signal says */
}

static const int cleanup_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

/* Held while a temporary is created and registered: a signal in between would leave it behind. */
static void block_cleanup_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_sigs / sizeof cleanup_sigs[0]; i++) sigaddset(&set, cleanup_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void vgt_outfile_cleanup_on_signals(void)
{
    const int *sigs = cleanup_sigs;
    for (size_t i = 0; i < sizeof cleanup_sigs / sizeof cleanup_sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;   /* ignored or handled */
        struct sigaction sa = {.sa_handler = on_fatal_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- the policy ---- */

vgt_out_kind vgt_out_classify(const char *path, char *why, size_t cap)
{
    char scratch[8];
    if (!why) why = scratch, cap = sizeof scratch;
    why[0] = '\0';
    if (!path || !*path) {
        snprintf(why, cap, "an empty path");
        return VGT_OUT_REFUSED;
    }
    if (!strcmp(path, "-")) return VGT_OUT_STDOUT;
    struct stat st, lst;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e == ENOENT && lstat(path, &lst) == 0) {
            snprintf(why, cap, "it is a symbolic link to nothing");
            return VGT_OUT_REFUSED;
        }
        if (e == ENOENT) return VGT_OUT_FILE;   /* absent (a missing directory is reported at creation) */
        snprintf(why, cap, "%s", strerror(e));
        return VGT_OUT_REFUSED;
    }
    if (S_ISREG(st.st_mode)) return VGT_OUT_FILE;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return VGT_OUT_STREAM;
    snprintf(why, cap, "it is %s", S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ? "a socket"
                                    : S_ISBLK(st.st_mode) ? "a block device" : "not a regular file");
    return VGT_OUT_REFUSED;
}

const char *vgt_outfile_name(const vgt_outfile *o)
{
    return o->kind == VGT_OUT_STDOUT ? "standard output" : o->path;
}

const char *vgt_outfile_write_path(const vgt_outfile *o)
{
    return o->tmp ? o->tmp : o->path;
}

/* The mode a new file would get (0666 less the umask), or the mode of the file it replaces. */
static mode_t new_mode(const char *target)
{
    struct stat st;
    if (stat(target, &st) == 0) return st.st_mode & 07777;
    mode_t m = umask(0);
    umask(m);
    return 0666 & ~m;
}

static vgt_status open_temporary(vgt_outfile *o, unsigned flags, vgt_error *err)
{
    struct stat lst;
    if (lstat(o->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        o->target = realpath(o->path, NULL);   /* replace the file the link names, keep the link */
        if (!o->target) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot write '%s': %s", o->path, strerror(errno));
    } else if (!(o->target = strdup(o->path))) {
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "cannot write '%s': out of memory", o->path);
    }
    size_t n = strlen(o->target) + sizeof ".XXXXXX" TMP_SUFFIX;
    if (!(o->tmp = malloc(n))) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "cannot write '%s': out of memory", o->path);
    snprintf(o->tmp, n, "%s.XXXXXX" TMP_SUFFIX, o->target);
    mode_t mode = new_mode(o->target);
    sigset_t old;
    block_cleanup_signals(&old);
    int fd = vgt_io()->mkstemp(o->tmp, (int)strlen(TMP_SUFFIX), O_CLOEXEC);
    int e = errno;
    if (fd >= 0) o->slot = pending_add(o->tmp);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot create '%s' (its temporary beside it): %s", o->path,
                        strerror(e));
    }
    if (fchmod(fd, mode) != 0) { /* best effort: the temporary keeps 0600 */ }
    if (flags & VGT_OUT_NO_FD) vgt_io()->close(fd), fd = -1;
    o->fd = fd;
    return VGT_OK;
}

vgt_status vgt_outfile_open(vgt_outfile *o, const char *path, unsigned flags, vgt_error *err)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    o->slot = -1;
    char why[256];
    int kind = vgt_out_classify(path, why, sizeof why);
    if (kind == VGT_OUT_REFUSED)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "cannot write '%s': %s", path ? path : "", why);
    if (kind != VGT_OUT_FILE && (flags & VGT_OUT_NEED_FILE))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "cannot write '%s': %s; this output must be a regular file",
                        path, kind == VGT_OUT_STDOUT ? "standard output is a stream" : "it is a device or a FIFO");
    if (kind == VGT_OUT_STDOUT && (flags & VGT_OUT_NO_STDOUT))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET,
                        "cannot write '-': standard output carries this command's report; name a file");
    o->kind = kind;
    if (kind == VGT_OUT_STDOUT) {
        o->fd = STDOUT_FILENO;
        return VGT_OK;
    }
    if (kind == VGT_OUT_STREAM || (flags & VGT_OUT_IN_PLACE)) {
        int of = kind == VGT_OUT_STREAM ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC;
        o->fd = vgt_io()->open(path, of | O_CLOEXEC, 0666);
        if (o->fd < 0) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot create '%s': %s", path, strerror(errno));
        return VGT_OK;
    }
    vgt_status rc = open_temporary(o, flags, err);
    if (rc != VGT_OK) {
        free(o->target);
        o->target = NULL;
    }
    return rc;
}

FILE *vgt_outfile_stdio(vgt_outfile *o, vgt_error *err)
{
    if (o->f) return o->f;
    if (o->kind == VGT_OUT_STDOUT) return o->f = stdout;
    if (o->fd < 0 || !(o->f = fdopen(o->fd, "w"))) {
        VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot write '%s': %s", o->path, o->fd < 0 ? "not open" : strerror(errno));
        return NULL;
    }
    return o->f;
}

/* Close what is open; the first failure (with errno) goes to *e when e is not 0 yet. */
static void close_all(vgt_outfile *o, int *e)
{
    if (o->f) {
        errno = 0;
        int bad = fflush(o->f) != 0;
        int fe = errno;
        if ((bad || ferror(o->f)) && !*e) *e = fe ? fe : EIO;
        if (o->f != stdout) {
            if (fclose(o->f) != 0 && !*e) *e = errno ? errno : EIO;
            o->fd = -1;
        }
        o->f = NULL;
    }
    if (o->fd >= 0 && o->fd != STDOUT_FILENO && vgt_io()->close(o->fd) != 0 && !*e) *e = errno;
    o->fd = -1;
}

static void release(vgt_outfile *o)
{
    pending_drop(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
}

vgt_status vgt_outfile_commit(vgt_outfile *o, vgt_error *err)
{
    int e = 0;
    close_all(o, &e);
    if (e) {
        if (o->tmp) vgt_io()->unlink(o->tmp);
        release(o);
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "writing '%s' failed: %s", vgt_outfile_name(o), strerror(e));
    }
    sigset_t old;
    block_cleanup_signals(&old);   /* renamed and unregistered together */
    int moved = !o->tmp || vgt_io()->rename(o->tmp, o->target) == 0;
    if (!moved) e = errno;
    else pending_drop(o->slot), o->slot = -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!moved) {
        vgt_io()->unlink(o->tmp);
        release(o);
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot put '%s' in place: %s", o->path, strerror(e));
    }
    release(o);
    return VGT_OK;
}

void vgt_outfile_discard(vgt_outfile *o)
{
    int e = 0;
    close_all(o, &e);
    if (o->tmp) vgt_io()->unlink(o->tmp);
    release(o);
}
