/* corpus.c: `vgt corpus check DIR` and `vgt corpus bless DIR`: the regression corpus.
 *
 * For every corpus trace (listed by DIR/manifest.txt, else named in DIR/manifest.json, else every
 * DIR/NAME.vgt in name order):
 *  1. replay on sim with --check: every sim-producible check must pass, no fault, no channel left
 *     blocked, and the coverage (observed bytes compared, see vgt_replay_summary) must reach the floor
 *     stored in DIR/goldens/<name>.coverage (the value `vgt replay --min-coverage` takes; bless writes
 *     the fraction the trace reaches, compared/observed, so a check that stops comparing fails);
 *  2. `vgt decode TRACE`, `vgt census TRACE --json` and `vgt db TRACE -o X` (a summary of X: its schema
 *     and the row count of each table) are compared with the goldens stored beside the traces:
 *     DIR/goldens/<name>.decode.digest.zst, <name>.census.json.zst, <name>.db.sql.
 *     The decode golden is a digest: one line per submission (its header line, its line count and the
 *     XXH64 of its lines), so a 10,000-submission trace keeps a small golden in git and a difference
 *     still names the first submission that decodes differently (`vgt decode --submits N` shows it).
 * A trace may name checks that must fail, in the hand-written DIR/goldens/<name>.mismatches (never written
 * by bless): one `record SEQ` a line, with '#' comments saying why. A derived trace whose change removes
 * work the recording observed (corpus/derive) gets one: each listed record must mismatch, and no other.
 * `bless` writes the goldens from the current build. `check` exits 1 on any difference, printing a diff
 * summary (the first differing lines), 2 when the corpus cannot be read.
 * The verbs are run as child processes of this same executable (/proc/self/exe), so a crash in one
 * is reported as a difference, not lost. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "vgt/cli.h"
#include "vgt/outfile.h"
#include "vgt/replay.h"
#include "vgt/trace.h"

extern char **environ;

#define MAX_TRACES 4096
#define MAX_OUTPUT (512u << 20)      /* bytes of one verb's output we keep */
#define MAX_DIFF_LINES 5
#define ZSTD_GOLDEN_LEVEL 19   /* goldens live in git: size over speed */

typedef struct corpus_args {
    int verbose, quiet;
} corpus_args;

static const vgt_cli_opt corpus_options[] = {
    {"verbose", 0, VGT_ARG_NONE, NULL, "print every report of the replays (not only mismatches and faults)",
     .off = offsetof(corpus_args, verbose)},
    VGT_OPT_QUIET(corpus_args, quiet),
    {0}};

static const char *const corpus_actions[] = {"check", "bless", NULL};

const vgt_cli_spec cmd_corpus_spec = {
    .verb = "corpus", .args = "check|bless DIR", .min_args = 2, .max_args = 2, .opts = corpus_options,
    .first_words = corpus_actions,
    .about = "The regression corpus: DIR holds traces and DIR/goldens/ their expected outputs. The traces are those "
             "DIR/manifest.txt lists (one path per line, '#' comments), else the .vgt files named in "
             "DIR/manifest.json, else every .vgt file in DIR.\n"
             "  check  replay each trace on sim with --check (every sim-producible check must pass, and the\n"
             "         coverage, observed bytes compared as `vgt replay --check` defines them, must reach the\n"
             "         floor in <name>.coverage: a --min-coverage value; the checks of the records a\n"
             "         hand-written <name>.mismatches lists, `record SEQ` a line, must fail instead), then\n"
             "         compare `vgt decode`,\n"
             "         `vgt census --json` and a summary of `vgt db` with the goldens <name>.decode.digest.zst,\n"
             "         <name>.census.json.zst, <name>.db.sql; print a diff summary\n"
             "  bless  write the goldens from this build (after the same replay); <name>.coverage gets the\n"
             "         coverage each trace reaches now, as the exact fraction compared/observed",
    .notes = "exit: 0 all equal, 1 a replay problem or a difference, 2 usage or I/O error",
};

typedef struct buf {
    char *p;
    size_t n;
} buf;

/* ---- files ---- */

static int read_file(const char *path, buf *b, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    struct stat st;
    if (fstat(fileno(f), &st) || (uint64_t)st.st_size > max) {
        fclose(f);
        errno = EFBIG;
        return -1;
    }
    b->p = malloc((size_t)st.st_size + 1);
    b->n = b->p ? fread(b->p, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!b->p) return -1;
    b->p[b->n] = '\0';
    return 0;
}

/* A golden is written beside its path and renamed over it once complete: an interrupted bless never
 * leaves a truncated golden. -1 with errno on failure. */
static int write_file(const char *path, const void *p, size_t n)
{
    vgt_outfile of;
    vgt_error err;
    if (vgt_outfile_open(&of, path, VGT_OUT_NEED_FILE, &err) != VGT_OK) return errno = EINVAL, -1;
    FILE *f = vgt_outfile_stdio(&of, &err);
    if (!f || fwrite(p, 1, n, f) != n) {
        int e = errno;
        vgt_outfile_discard(&of);
        return errno = e ? e : EIO, -1;
    }
    if (vgt_outfile_commit(&of, &err) != VGT_OK) return errno = EIO, -1;
    return 0;
}

/* ---- running a verb of this executable ---- */

/* Run `vgt args...` in directory cwd with stdout into *out; returns the exit status (or -1 if it could
 * not run). Running in the corpus directory keeps paths that the verbs print relative, so goldens do not
 * depend on where the corpus is checked out. */
static int run_verb(const char *cwd, char *const args[], buf *out, char *err_line, size_t err_cap)
{
    char out_path[] = "/tmp/vgt-corpus-XXXXXX", err_path[] = "/tmp/vgt-corpus-XXXXXX";
    int ofd = mkstemp(out_path), efd = mkstemp(err_path), status = -1;
    memset(out, 0, sizeof *out);
    err_line[0] = '\0';
    if (ofd < 0 || efd < 0) goto done;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, ofd, 1);
    posix_spawn_file_actions_adddup2(&fa, efd, 2);
    posix_spawn_file_actions_addchdir_np(&fa, cwd);
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ) == 0 && waitpid(pid, &status, 0) == pid)
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    posix_spawn_file_actions_destroy(&fa);
    if (read_file(out_path, out, MAX_OUTPUT)) status = status < 0 ? -1 : 125;
    buf e = {0};
    if (!read_file(err_path, &e, 1u << 20) && e.n) {
        char *nl = strchr(e.p, '\n');
        if (nl) *nl = '\0';
        snprintf(err_line, err_cap, "%s", e.p);
    }
    free(e.p);
done:
    if (ofd >= 0) close(ofd), unlink(out_path);
    if (efd >= 0) close(efd), unlink(err_path);
    return status;
}

/* ---- the db summary: schema and row counts ---- */

static int db_summary(const char *path, buf *out)
{
    sqlite3 *db = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f || sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        if (f) fclose(f);
        free(text);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master WHERE sql NOT NULL ORDER BY type, name", -1, &st, NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        fprintf(f, "%s;\n", (const char *)sqlite3_column_text(st, 2));
        if (strcmp(type, "table")) continue;
        char q[512];
        sqlite3_stmt *c = NULL;
        snprintf(q, sizeof q, "SELECT COUNT(*) FROM \"%s\"", name);
        if (sqlite3_prepare_v2(db, q, -1, &c, NULL) == SQLITE_OK && sqlite3_step(c) == SQLITE_ROW)
            fprintf(f, "-- rows in %s: %lld\n", name, (long long)sqlite3_column_int64(c, 0));
        sqlite3_finalize(c);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    fclose(f);
    out->p = text;
    out->n = len;
    return 0;
}

/* ---- comparing ---- */

static const char *line_at(const buf *b, size_t *pos, size_t *len)
{
    if (*pos >= b->n) return NULL;
    const char *s = b->p + *pos, *nl = memchr(s, '\n', b->n - *pos);
    *len = nl ? (size_t)(nl - s) : b->n - *pos;
    *pos += *len + (nl ? 1 : 0);
    return s;
}

/* Print the first differing lines; returns the number of lines that differ (0 = equal). */
static uint64_t diff_summary(const char *what, const buf *golden, const buf *now)
{
    if (golden->n == now->n && !memcmp(golden->p, now->p, now->n)) return 0;
    size_t pg = 0, pn = 0, lg = 0, ln = 0;
    uint64_t line = 0, differing = 0, shown = 0;
    for (;;) {
        const char *g = line_at(golden, &pg, &lg), *n = line_at(now, &pn, &ln);
        if (!g && !n) break;
        line++;
        if (g && n && lg == ln && !memcmp(g, n, lg)) continue;
        differing++;
        if (shown++ >= MAX_DIFF_LINES) continue;
        printf("    %s line %llu:\n      golden: %.*s\n      now:    %.*s\n", what, (unsigned long long)line,
               g ? (int)(lg > 160 ? 160 : lg) : 9, g ? g : "(missing)", n ? (int)(ln > 160 ? 160 : ln) : 9,
               n ? n : "(missing)");
    }
    printf("    %s: %llu line(s) differ (golden %zu bytes, now %zu bytes)\n", what, (unsigned long long)differing,
           golden->n, now->n);
    return differing ? differing : 1;
}

/* JSON goldens are stored one member per line so that a difference names the member: a re-layout of
 * the verb's JSON that changes no value inside strings. */
static int json_lines(const buf *in, buf *out)
{
    FILE *f = open_memstream(&out->p, &out->n);
    if (!f) return -1;
    int in_str = 0, esc = 0, depth = 0;
    for (size_t i = 0; i < in->n; i++) {
        char ch = in->p[i];
        if (in_str) {
            fputc(ch, f);
            if (esc) esc = 0;
            else if (ch == '\\') esc = 1;
            else if (ch == '"') in_str = 0;
            continue;
        }
        if (ch == '\n' || ch == '\r') continue;
        if (ch == '}' || ch == ']') fprintf(f, "\n%*s", 2 * (depth > 0 ? --depth : 0), "");
        fputc(ch, f);
        if (ch == '"') in_str = 1;
        else if (ch == '{' || ch == '[') fprintf(f, "\n%*s", 2 * ++depth, "");
        else if (ch == ',') fprintf(f, "\n%*s", 2 * depth, "");
    }
    fputc('\n', f);
    return fclose(f);
}

/* The decode digest: the lines before the first submission (objects, channels) as they are, then per
 * submission its "submit ..." header line followed by " | lines N xxh64 H" over the lines it printed. */
static void digest_group(FILE *f, const char *hdr, size_t hdr_len, uint64_t lines, XXH64_state_t *h)
{
    fprintf(f, "%.*s | lines %llu xxh64 %016llx\n", (int)hdr_len, hdr, (unsigned long long)lines,
            (unsigned long long)XXH64_digest(h));
}

static int decode_digest(const buf *in, buf *out)
{
    FILE *f = open_memstream(&out->p, &out->n);
    XXH64_state_t *h = XXH64_createState();
    if (!f || !h) {
        if (f) fclose(f);
        XXH64_freeState(h);
        return -1;
    }
    const char *hdr = NULL;
    size_t hdr_len = 0, pos = 0, len;
    uint64_t lines = 0;
    const char *line;
    while ((line = line_at(in, &pos, &len))) {
        if (len > 7 && !memcmp(line, "submit ", 7)) {
            if (hdr) digest_group(f, hdr, hdr_len, lines, h);
            hdr = line, hdr_len = len, lines = 0;
            XXH64_reset(h, 0);
        } else if (hdr) {
            XXH64_update(h, line, len + 1);   /* with its newline: lines split differently hash differently */
            lines++;
        } else {
            fprintf(f, "%.*s\n", (int)len, line);
        }
    }
    if (hdr) digest_group(f, hdr, hdr_len, lines, h);
    XXH64_freeState(h);
    return fclose(f);
}

static int zstd_pack(const buf *in, buf *out)
{
    size_t cap = ZSTD_compressBound(in->n);
    out->p = malloc(cap);
    if (!out->p) return -1;
    out->n = ZSTD_compress(out->p, cap, in->p, in->n, ZSTD_GOLDEN_LEVEL);
    return ZSTD_isError(out->n) ? -1 : 0;
}

static int zstd_unpack(const buf *in, buf *out)
{
    unsigned long long n = ZSTD_getFrameContentSize(in->p, in->n);
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > MAX_OUTPUT) return -1;
    out->p = malloc(n + 1);
    if (!out->p) return -1;
    out->n = ZSTD_decompress(out->p, n, in->p, in->n);
    return ZSTD_isError(out->n) ? -1 : 0;
}

/* ---- one trace ---- */

#define MAX_EXPECTED 64

typedef struct corpus {
    const char *dir;
    int bless, verbose;
    char goldens[4096];
    uint64_t traces, problems, differences;
    /* the trace being replayed: the records its <name>.mismatches lists, and which of them mismatched */
    uint64_t expected[MAX_EXPECTED];
    uint8_t expected_seen[MAX_EXPECTED];
    uint32_t nexpected;
} corpus;

static int expected_index(const corpus *c, uint64_t seq)
{
    for (uint32_t i = 0; i < c->nexpected; i++)
        if (c->expected[i] == seq) return (int)i;
    return -1;
}

static void count_report(void *ctx, const vgt_replay_report *r)
{
    corpus *c = ctx;
    int e = r->kind == VGT_RPT_MISMATCH ? expected_index(c, r->record_seq) : -1;
    if (e >= 0) c->expected_seen[e] = 1;
    if (r->kind == VGT_RPT_MISMATCH || (r->kind == VGT_RPT_EVENT && r->event_kind == VGT_BEV_FAULT) ||
        (c->verbose && r->kind != VGT_RPT_SUBMIT_CHECKS))
        printf("    %s%s\n", e >= 0 ? "(expected) " : "", r->msg);
}

/* The coverage floor: the first line of <name>.coverage that is not empty or a '#' comment, a value of
 * `vgt replay --min-coverage`. 0 ok, -1 unreadable (errno), -2 malformed. */
static int read_floor(const char *path, vgt_coverage_min *m)
{
    buf b = {0};
    if (read_file(path, &b, 1u << 16)) return -1;
    size_t pos = 0, len;
    const char *line;
    int rc = -2;
    while ((line = line_at(&b, &pos, &len))) {
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
        if (!len || line[0] == '#') continue;
        char v[64];
        if (len < sizeof v) {
            memcpy(v, line, len);
            v[len] = '\0';
            if (!vgt_coverage_parse(v, m)) rc = 0;
        }
        break;
    }
    free(b.p);
    return rc;
}

/* Check the coverage against the floor, or (bless) store it as the floor. 0 ok, 1 below the floor or
 * no usable floor, 2 cannot write. */
static int coverage_floor(corpus *c, const char *name, const vgt_replay_summary *s)
{
    char path[8192], pct[48];
    snprintf(path, sizeof path, "%s/%s.coverage", c->goldens, name);
    vgt_coverage_pct(s->observed_bytes_compared, s->observed_bytes, pct, sizeof pct);
    printf("  coverage: %llu of %llu observed bytes compared (%s%%)", (unsigned long long)s->observed_bytes_compared,
           (unsigned long long)s->observed_bytes, pct);
    if (c->bless) {
        char text[256];
        int n = snprintf(text, sizeof text,
                         "# the share of this trace's observed bytes that replay on sim with --check compares\n"
                         "# (compared/observed, a value of `vgt replay --min-coverage`): `vgt corpus check` fails below it\n"
                         "%llu/%llu\n",
                         (unsigned long long)s->observed_bytes_compared, (unsigned long long)s->observed_bytes);
        if (!s->observed_bytes) n = snprintf(text, sizeof text, "# nothing observed after a replayed submission\n0\n");
        if (write_file(path, text, (size_t)n)) {
            printf("\n  coverage: cannot write %s: %s\n", path, strerror(errno));
            return 2;
        }
        printf("; floor blessed\n");
        return 0;
    }
    vgt_coverage_min m;
    int rc = read_floor(path, &m);
    if (rc == -1) {
        printf("\n  coverage: no golden %s (%s); run `vgt corpus bless`\n", path, strerror(errno));
        return 1;
    }
    if (rc == -2) {
        printf("\n  coverage: golden %s holds no --min-coverage value (PCT or N/D)\n", path);
        return 1;
    }
    char floor[64];
    vgt_coverage_min_text(&m, floor, sizeof floor);
    if (vgt_coverage_met(s->observed_bytes_compared, s->observed_bytes, &m)) {
        printf("; floor %s\n", floor);
        return 0;
    }
    printf("\n    COVERAGE BELOW FLOOR: %s%% (%llu/%llu) < %s (%s)\n", pct, (unsigned long long)s->observed_bytes_compared,
           (unsigned long long)s->observed_bytes, floor, path);
    return 1;
}

/* <name>.mismatches, when there is one: `record SEQ` lines, '#' comments. 0 ok (or no file), 1 malformed. */
static int read_expected(corpus *c, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s.mismatches", c->goldens, name);
    c->nexpected = 0;
    memset(c->expected_seen, 0, sizeof c->expected_seen);
    buf b = {0};
    if (read_file(path, &b, 1u << 16)) return 0;
    size_t pos = 0, len;
    const char *line;
    int rc = 0;
    while ((line = line_at(&b, &pos, &len))) {
        char v[64];
        unsigned long long seq;
        char tail;
        if (!len || line[0] == '#') continue;
        if (len >= sizeof v || c->nexpected == MAX_EXPECTED) { rc = 1; break; }
        memcpy(v, line, len);
        v[len] = '\0';
        if (sscanf(v, "record %llu %c", &seq, &tail) != 1) { rc = 1; break; }
        c->expected[c->nexpected++] = seq;
    }
    free(b.p);
    if (rc) printf("  %s: a line is not `record SEQ` (or more than %u lines)\n", path, MAX_EXPECTED);
    return rc;
}

/* The checks that failed are exactly the expected ones: 0, else 1 (said why). */
static int expected_failures(const corpus *c, const char *name, const vgt_replay_summary *s)
{
    uint64_t seen = 0;
    int bad = 0;
    for (uint32_t i = 0; i < c->nexpected; i++) {
        if (c->expected_seen[i]) { seen++; continue; }
        printf("    EXPECTED MISMATCH DID NOT OCCUR: record %llu (%s.mismatches)\n", (unsigned long long)c->expected[i], name);
        bad = 1;
    }
    return bad || s->checks_failed != seen;
}

/* Replay with checks and the coverage floor: 0 ok, 1 a problem, 2 a floor that cannot be written. */
static int replay_checked(corpus *c, const char *path, const char *name)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.check = 1;
    o.report = count_report;
    o.report_ctx = c;
    vgt_error err;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    int bad = 1;
    if (read_expected(c, name)) return 1;
    if (vgt_reader_open_path(&r, path, NULL, &err) == VGT_OK && vgt_replay_open(&rp, &o, &err) == VGT_OK &&
        vgt_replay_run(rp, r, &err) == VGT_OK) {
        vgt_status rc = vgt_replay_finish(rp, &err);
        const vgt_replay_summary *s = vgt_replay_summary_get(rp);
        /* the failed checks are judged against the expected ones; every other failure as it is */
        vgt_replay_summary rest = *s;
        rest.checks_failed = 0;
        bad = rc != VGT_OK || vgt_replay_summary_failed(&rest) || expected_failures(c, name, s);
        printf("  replay on sim: %llu submissions, %llu checks passed, %llu failed, %llu not comparable, %llu faults%s\n",
               (unsigned long long)s->submissions_replayed, (unsigned long long)s->checks_passed,
               (unsigned long long)s->checks_failed, (unsigned long long)s->checks_skipped,
               (unsigned long long)s->ctr.faults, rc != VGT_OK ? "; channels never finished" : "");
        if (rc != VGT_OK) printf("    %s\n", err.msg);
        int cov = coverage_floor(c, name, s);
        if (cov) bad = cov;
    } else {
        printf("  replay on sim: %s\n", err.msg);
    }
    vgt_replay_close(rp);
    vgt_reader_close(r);
    return bad;
}

/* Produce one output (decode, census, db) and compare it with / store it as its golden. */
static int one_output(corpus *c, const char *rel, const char *name, const char *what, const char *suffix)
{
    char golden[8192], dbpath[] = "/tmp/vgt-corpus-db-XXXXXX", err_line[512];
    snprintf(golden, sizeof golden, "%s/%s.%s", c->goldens, name, suffix);
    buf now = {0}, raw = {0}, g = {0}, gz = {0};
    int status, bad = 0;
    if (!strcmp(what, "db")) {
        int fd = mkstemp(dbpath);
        if (fd >= 0) close(fd), unlink(dbpath);
        char *args[] = {"vgt", "db", (char *)rel, "-o", dbpath, NULL};
        status = run_verb(c->dir, args, &raw, err_line, sizeof err_line);
        if (status == 0 && db_summary(dbpath, &now)) status = 124;
        unlink(dbpath);
    } else {
        char *dec[] = {"vgt", "decode", (char *)rel, NULL}, *cen[] = {"vgt", "census", (char *)rel, "--json", NULL};
        status = run_verb(c->dir, !strcmp(what, "decode") ? dec : cen, &raw, err_line, sizeof err_line);
        if (status == 0 && !strcmp(what, "census")) {
            if (json_lines(&raw, &now)) status = 124;
        } else if (status == 0) {
            if (decode_digest(&raw, &now)) status = 124;
        } else {
            now = raw;
            raw = (buf){0};
        }
    }
    if (status != 0) {
        printf("  %s: `vgt %s` exited %d: %s\n", what, what, status, err_line[0] ? err_line : "(no message)");
        bad = 1;
    } else if (c->bless) {
        buf out = now;
        int packed = strstr(suffix, ".zst") ? zstd_pack(&now, &gz) : 0;
        if (packed == 0 && strstr(suffix, ".zst")) out = gz;
        if (packed || write_file(golden, out.p, out.n)) {
            printf("  %s: cannot write %s: %s\n", what, golden, strerror(errno));
            bad = 2;
        }
    } else if (read_file(golden, &g, MAX_OUTPUT)) {
        printf("  %s: no golden %s (%s); run `vgt corpus bless`\n", what, golden, strerror(errno));
        bad = 1;
    } else {
        buf cmp = g;
        if (strstr(suffix, ".zst") && zstd_unpack(&g, &gz)) {
            printf("  %s: golden %s is not a valid zstd frame\n", what, golden);
            bad = 1;
        } else {
            if (strstr(suffix, ".zst")) cmp = gz;
            if (diff_summary(what, &cmp, &now)) bad = 1;
        }
    }
    free(now.p), free(raw.p), free(g.p), free(gz.p);
    return bad;
}

static int one_trace(corpus *c, const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", c->dir, rel);
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    char name[1024];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && !strcmp(dot, ".vgt")) *dot = '\0';
    printf("%s:\n", path);
    c->traces++;
    int replay_bad = replay_checked(c, path, name), outputs_bad = 0;
    if (replay_bad == 2) return 2;
    if (replay_bad) c->problems++;
    static const char *const what[3] = {"decode", "census", "db"}, *const suffix[3] = {"decode.digest.zst", "census.json.zst", "db.sql"};
    for (int i = 0; i < 3; i++) {
        int r = one_output(c, rel, name, what[i], suffix[i]);
        if (r == 2) return 2;
        if (r) c->differences++, outputs_bad = 1;
    }
    int bad = replay_bad || outputs_bad;
    if (!bad) printf("  %s\n", c->bless ? "blessed" : "same");
    else printf("  %s%s%s\n", replay_bad ? "REPLAY PROBLEMS" : "", replay_bad && outputs_bad ? ", " : "",
                outputs_bad ? (c->bless ? "OUTPUTS NOT PRODUCED" : "OUTPUTS DIFFERENT") : "");
    return bad;
}

/* ---- the list of traces ---- */

static int add_trace(char **v, uint32_t *n, const char *name, size_t len)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strlen(v[i]) == len && !memcmp(v[i], name, len)) return 0;   /* listed twice */
    if (*n == MAX_TRACES || !(v[*n] = strndup(name, len))) return -1;
    (*n)++;
    return 0;
}

/* manifest.txt: one trace path per line, '#' comments. */
static int from_manifest_txt(FILE *f, char **v, uint32_t *n)
{
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *s = line + strspn(line, " \t");
        if (*s && *s != '#' && add_trace(v, n, s, strlen(s))) return -1;
    }
    return 0;
}

/* manifest.json (the capture's, with workload metadata): every string value that names a .vgt file,
 * in order. The strings are found lexically; escapes inside them are not expected in file names. */
static int from_manifest_json(FILE *f, char **v, uint32_t *n)
{
    buf b = {0};
    if (fseek(f, 0, SEEK_END) || ftell(f) < 0 || ftell(f) > (16l << 20)) return -1;
    b.n = (size_t)ftell(f);
    rewind(f);
    if (!(b.p = malloc(b.n + 1)) || fread(b.p, 1, b.n, f) != b.n) {
        free(b.p);
        return -1;
    }
    b.p[b.n] = '\0';
    int rc = 0;
    for (char *q = b.p; rc == 0 && (q = strchr(q, '"'));) {
        char *end = strchr(q + 1, '"');
        if (!end) break;
        const char *name = q + 1, *slash = memrchr(name, '/', (size_t)(end - name));
        if (slash) name = slash + 1;   /* the traces live in DIR, whatever path the manifest gives */
        size_t len = (size_t)(end - name);
        if (len > 4 && !memcmp(end - 4, ".vgt", 4)) rc = add_trace(v, n, name, len);
        q = end + 1;
    }
    free(b.p);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The corpus: DIR/manifest.txt, else DIR/manifest.json, else every DIR/NAME.vgt in name order. */
static int list_traces(const char *dir, char ***out, uint32_t *n)
{
    char path[4096];
    char **v = calloc(MAX_TRACES, sizeof *v);
    if (!v) return -1;
    *n = 0;
    int rc = 0, found = 0;
    static const char *const manifests[2] = {"manifest.txt", "manifest.json"};
    for (int i = 0; i < 2 && !found; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, manifests[i]);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        found = 1;
        rc = i == 0 ? from_manifest_txt(f, v, n) : from_manifest_json(f, v, n);
        fclose(f);
    }
    if (!found) {
        DIR *d = opendir(dir);
        if (!d) {
            free(v);
            return -1;
        }
        for (struct dirent *e; rc == 0 && (e = readdir(d));) {
            size_t l = strlen(e->d_name);
            if (l >= 5 && !strcmp(e->d_name + l - 4, ".vgt")) rc = add_trace(v, n, e->d_name, l);
        }
        closedir(d);
        qsort(v, *n, sizeof *v, cmp_str);
    }
    *out = v;
    return rc;
}

int cmd_corpus(int argc, char **argv)
{
    corpus_args ca = {0};
    vgt_cli_args a;
    int prc = vgt_cli_parse(&cmd_corpus_spec, argc, argv, &ca, &a);
    if (prc >= 0) return prc;
    if (strcmp(a.pos[0], "check") && strcmp(a.pos[0], "bless"))
        return vgt_cli_error("corpus", VGT_EXIT_USAGE, "expected `check DIR` or `bless DIR`; see --help");
    corpus c = {.dir = a.pos[1], .bless = !strcmp(a.pos[0], "bless"), .verbose = ca.verbose};
    snprintf(c.goldens, sizeof c.goldens, "%s/goldens", c.dir);
    if (c.bless && mkdir(c.goldens, 0777) && errno != EEXIST)
        return vgt_cli_error("corpus", VGT_EXIT_USAGE, "cannot create %s: %s", c.goldens, strerror(errno));
    char **traces;
    uint32_t n;
    if (list_traces(c.dir, &traces, &n))
        return vgt_cli_error("corpus", VGT_EXIT_USAGE, "cannot read corpus %s: %s", c.dir, strerror(errno));
    if (!n) {
        free(traces);
        return vgt_cli_error("corpus", VGT_EXIT_USAGE, "no traces in %s (no manifest.txt, no *.vgt)", c.dir);
    }
    int rc = VGT_EXIT_OK;
    vgt_progress p;   /* traces done, between the traces' reports */
    vgt_progress_begin(&p, "corpus", "traces", n, ca.quiet);
    for (uint32_t i = 0; i < n; i++) {
        vgt_progress_clear(&p);
        int r = one_trace(&c, traces[i]);
        fflush(stdout);
        vgt_progress_set(&p, i + 1u);
        if (r == 2) rc = VGT_EXIT_USAGE;
        else if (r && rc == VGT_EXIT_OK) rc = VGT_EXIT_PROBLEM;
        free(traces[i]);
    }
    free(traces);
    vgt_progress_end(&p);
    printf("corpus %s: %llu trace(s), %llu with replay problems, %llu output(s) %s\n", c.dir,
           (unsigned long long)c.traces, (unsigned long long)c.problems, (unsigned long long)c.differences,
           c.bless ? "not produced (the rest blessed)" : "different");
    return rc;
}
