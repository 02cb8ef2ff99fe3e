/* progress.c: the one progress line of long verbs (vgt/cli.h, "progress").
 *
 * Shown only on a terminal: a pipe or a file on stderr gets nothing (logs stay clean), and --quiet turns
 * it off. It appears once the work has lasted VGT_PROGRESS_DELAY_MS (environment; default 500), so a
 * quick run prints nothing, is redrawn at most ten times a second with a carriage return, and is erased
 * (not left behind) when the work ends, so what the verb prints after it starts on a clean line. */
#include "vgt/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vgt/trace.h"

#define REDRAW_NS 100000000ull   /* 10 per second */
#define DEFAULT_DELAY_MS 500u

static uint64_t delay_ns(void)
{
    const char *e = getenv("VGT_PROGRESS_DELAY_MS");
    char *end;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : DEFAULT_DELAY_MS;
    if (e && *e && *end) v = DEFAULT_DELAY_MS;
    return (uint64_t)v * 1000000ull;
}

void vgt_progress_begin(vgt_progress *p, const char *verb, const char *unit, uint64_t total, int quiet)
{
    memset(p, 0, sizeof *p);
    p->verb = verb;
    p->unit = unit ? unit : "";
    p->total = total;
    p->on = !quiet && isatty(2);
    if (!p->on) return;
    p->t0 = vgt_now_ns();
    p->delay = delay_ns();
}

void vgt_progress_begin_file(vgt_progress *p, const char *verb, const char *path, int quiet)
{
    struct stat st;
    uint64_t total = path && strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    vgt_progress_begin(p, verb, NULL, total, quiet);
}

/* "12.3 MiB" for bytes (unit ""), "1234 records" otherwise. */
static void amount(char *buf, size_t cap, uint64_t v, const char *unit)
{
    if (*unit) { snprintf(buf, cap, "%" PRIu64 " %s", v, unit); return; }
    if (v < 10240) snprintf(buf, cap, "%" PRIu64 " B", v);
    else if (v < (10ull << 20)) snprintf(buf, cap, "%.1f KiB", v / 1024.0);
    else if (v < (10ull << 30)) snprintf(buf, cap, "%.1f MiB", v / 1048576.0);
    else snprintf(buf, cap, "%.1f GiB", v / 1073741824.0);
}

static void draw(vgt_progress *p, uint64_t now)
{
    char done[48], total[48], rate[64], left[48] = "";
    double secs = (double)(now - p->t0) / 1e9;
    double per_s = secs > 0 ? p->done / secs : 0;
    amount(done, sizeof done, p->done, p->unit);
    amount(rate, sizeof rate, (uint64_t)per_s, p->unit);
    char line[256];
    if (p->total && p->done <= p->total) {
        amount(total, sizeof total, p->total, p->unit);
        if (per_s > 0 && p->done < p->total) {
            uint64_t s = (uint64_t)((p->total - p->done) / per_s + 0.5);
            snprintf(left, sizeof left, ", %" PRIu64 ":%02" PRIu64 " left", s / 60, s % 60);
        }
        snprintf(line, sizeof line, "vgt %s: %s / %s (%u%%), %s/s%s", p->verb, done, total,
                 (unsigned)(p->done * 100 / p->total), rate, left);
    } else {
        snprintf(line, sizeof line, "vgt %s: %s, %s/s, %.0f s", p->verb, done, rate, secs);
    }
    /* \r, the line, then erase to the end of the line (a shorter line leaves no tail) */
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->shown = 1;
    p->last_draw = now;
}

void vgt_progress_set(vgt_progress *p, uint64_t done)
{
    p->done = done;
    if (!p->on) return;
    uint64_t now = vgt_now_ns();
    if (now - p->t0 < p->delay) return;
    if (now - p->last_draw < REDRAW_NS) return;
    draw(p, now);
}

void vgt_progress_add(vgt_progress *p, uint64_t n) { vgt_progress_set(p, p->done + n); }

void vgt_progress_end(vgt_progress *p)
{
    if (p->on && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->on = 0;
    p->shown = 0;
}

void vgt_progress_clear(vgt_progress *p)
{
    if (!p || !p->on || !p->shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = 0;
    p->last_draw = 0;   /* the next update draws it again at once */
}
