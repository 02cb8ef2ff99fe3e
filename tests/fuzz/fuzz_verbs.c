/* fuzz_verbs.c: libFuzzer target running the verbs themselves, with the CLI's own default limits, on a
 * hostile trace: the walker with CHANNEL_STATE and CHANNEL_METHODS (decode --expand-macros, census, mme),
 * db export, slice and repack round trips, verify --salvage, the replay's store census read back by
 * census --stores, and render targets written as PNG; with bit 4 of byte 0, the verbs that follow draws,
 * launches and the rows of a trace instead of the first three (draws --json: pipeline state and the shader
 * program headers read from trace memory; launches --json; timeline).
 *
 * Byte 0 picks the verb (low 3 bits, and bit 4) the rest IS a trace (bit 3 clear: parsed by the reader,
 * as a user's file would be) or hostile content wrapped in a valid trace (bit 3 set: fuzz_common.h's
 * fz_wrap: objects, two channels, mappings, then GPFIFO_SUBMIT / CHANNEL_STATE / CHANNEL_METHODS / MEMORY
 * records cut from the input). Round trips check what they promise: a slice verifies and repacks to the
 * same records; a salvage verifies. Standard output goes to /dev/null; run it with -close_fd_mask=2 to
 * silence the verbs' messages (crash reports then go too). */
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

int cmd_decode(int, char **);
int cmd_census(int, char **);
int cmd_mme(int, char **);
int cmd_db(int, char **);
int cmd_slice(int, char **);
int cmd_repack(int, char **);
int cmd_verify(int, char **);
int cmd_replay(int, char **);
int cmd_draws(int, char **);
int cmd_launches(int, char **);
int cmd_timeline(int, char **);

static char dir[64];

static int run(int (*fn)(int, char **), const char *a0, ...)
{
    char *argv[16] = {(char *)a0};
    int argc = 1;
    va_list ap;
    va_start(ap, a0);
    for (const char *s; argc < 15 && (s = va_arg(ap, const char *));) argv[argc++] = (char *)s;
    va_end(ap);
    argv[argc] = NULL;
    return fn(argc, argv);
}

static uint64_t records(const char *path)
{
    vgt_reader *r;
    vgt_error e;
    uint64_t n = 0;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) return UINT64_MAX;
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) n++;
    vgt_reader_close(r);
    return e.code == VGT_E_EOF ? n : UINT64_MAX;
}

static void clean(void)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
}

/* the directory itself too: fork mode starts a process per job, each with its own directory */
static void remove_dir(void)
{
    clean();
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_verbs.%d", (int)getpid());
        mkdir(dir, 0700);
        atexit(remove_dir);
        if (!freopen("/dev/null", "w", stdout)) abort();   /* stderr stays: the sanitizers and libFuzzer report there */
    }
    if (size < 1 || size > (1u << 20)) return 0;
    int fd = memfd_create("fuzz_verbs", 0);
    if (fd < 0) return 0;
    if (data[0] & 8) fz_wrap(data + 1, size - 1, fd);
    else if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) return close(fd), 0;
    char in[64], out[128], out2[128], side[128];
    fz_path(fd, in, sizeof in);
    snprintf(out, sizeof out, "%s/out.vgt", dir);
    snprintf(out2, sizeof out2, "%s/out2.vgt", dir);
    switch (data[0] & 7) {
    case 0:
        if (data[0] & 16) run(cmd_draws, "draws", in, "--json", NULL);
        else run(cmd_decode, "decode", in, "--expand-macros", NULL);
        break;
    case 1:
        if (data[0] & 16) run(cmd_launches, "launches", in, "--json", NULL);
        else run(cmd_census, "census", in, "--json", NULL);
        break;
    case 2:
        snprintf(side, sizeof side, "%s/timeline.json", dir);
        if (data[0] & 16) run(cmd_timeline, "timeline", in, "-o", side, "--quiet", NULL);
        else run(cmd_mme, "mme", in, "--calls", "--expand", NULL);
        break;
    case 3:
        snprintf(side, sizeof side, "%s/out.db", dir);
        run(cmd_db, "db", in, "-o", side, NULL);
        break;
    case 4:
        if (run(cmd_slice, "slice", in, out, "--submits", data[0] & 16 ? "1.." : "0..", NULL) == 0) {
            uint64_t n = records(out);
            if (n == UINT64_MAX) abort();   /* a slice that succeeded is a valid trace */
            if (run(cmd_repack, "repack", out, out2, "--chunk-size", "4096", NULL) != 0 || records(out2) != n) abort();
        }
        break;
    case 5:
        /* a salvage that wrote something wrote a valid trace ("nothing to salvage" writes nothing) */
        if (run(cmd_verify, "verify", in, "--salvage", out, NULL) <= 1 && access(out, F_OK) == 0 &&
            records(out) == UINT64_MAX)
            abort();
        break;
    case 6:
        snprintf(side, sizeof side, "%s/census.jsonl", dir);
        if (run(cmd_replay, "replay", in, "--backend", "sim", "--census", "--census-json", side, NULL) <= 1)
            run(cmd_census, "census", in, "--stores", side, NULL);   /* the store census read back */
        break;
    default:
        snprintf(side, sizeof side, "0:%s/rt.png", dir);
        run(cmd_replay, "replay", in, "--backend", "sim", "--list-rt", "--dump-rt", side, NULL);
        break;
    }
    clean();
    close(fd);
    return 0;
}
