/* main.c: `vgt <verb>`, a thin table of verbs in the manner of git's commands[].
 * Each part lists its verbs in its own verbs.def; the top-level CMakeLists.txt joins them into
 * vgt_verbs.def (in the build tree), so no part includes another's. Each verb's option table
 * (cmd_<verb>_spec) gives its usage, and here, in the hidden modes the build runs after linking, its man
 * page and the shell completions:
 *   vgt __options VERB     the verb's options, one a line
 *   vgt __man [VERB]       vgt-VERB.1 (vgt.1 without VERB) on stdout
 *   vgt __bash | __zsh     the completion script on stdout
 *   vgt __generate DIR     all of them under DIR/share/{man/man1,bash-completion/completions,zsh/site-functions} */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vgt/cli.h"
#include "vgt/outfile.h"

#define VGT_VERB(name, fn, summary) int fn(int argc, char **argv); extern const vgt_cli_spec fn##_spec;
#include "vgt_verbs.def"
#undef VGT_VERB

static const vgt_cli_verb verbs[] = {
#define VGT_VERB(name, fn, summary) {name, fn, summary, &fn##_spec},
#include "vgt_verbs.def"
#undef VGT_VERB
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

static int usage(FILE *f)
{
    fprintf(f, "usage: vgt <verb> [options]   (vgt <verb> --help for each verb)\n\n"
               "vgtrace records what an NVIDIA GPU driver submits, keeps it in .vgt traces,\n"
               "replays it and answers forensic questions about it.\n\nverbs:\n");
    for (size_t i = 0; i < NVERBS; i++) fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\nexit codes: 0 ok, 1 a problem was found, 2 usage or I/O error\n");
    return f == stdout ? VGT_EXIT_OK : VGT_EXIT_USAGE;
}

static const vgt_cli_verb *find(const char *name)
{
    for (size_t i = 0; i < NVERBS; i++)
        if (name && !strcmp(name, verbs[i].name)) return &verbs[i];
    return NULL;
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int bad = mkdir(path, 0777) && errno != EEXIST;
        *p = '/';
        if (bad) return -1;
    }
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

/* Writes one generated file: dir/sub/name, from what emit prints. */
static int write_one(const char *dir, const char *sub, const char *name, const vgt_cli_verb *v,
                     void (*emit)(FILE *, const vgt_cli_verb *))
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (mkdirs(path)) return vgt_cli_error("__generate", VGT_EXIT_USAGE, "cannot create %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "w");
    if (!f) return vgt_cli_error("__generate", VGT_EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
    emit(f, v);
    return fclose(f) ? vgt_cli_error("__generate", VGT_EXIT_USAGE, "cannot write %s", path) : 0;
}

static void emit_man(FILE *f, const vgt_cli_verb *v) { v ? vgt_cli_man_verb(f, v) : vgt_cli_man_main(f, verbs, NVERBS); }
static void emit_bash(FILE *f, const vgt_cli_verb *v) { vgt_cli_bash_completion(f, verbs, NVERBS); }
static void emit_zsh(FILE *f, const vgt_cli_verb *v) { vgt_cli_zsh_completion(f, verbs, NVERBS); }

static int generate(const char *dir)
{
    int rc = write_one(dir, "share/man/man1", "vgt.1", NULL, emit_man);
    for (size_t i = 0; i < NVERBS && !rc; i++) {
        char name[64];
        snprintf(name, sizeof name, "vgt-%s.1", verbs[i].name);
        rc = write_one(dir, "share/man/man1", name, &verbs[i], emit_man);
    }
    if (!rc) rc = write_one(dir, "share/bash-completion/completions", "vgt", NULL, emit_bash);
    if (!rc) rc = write_one(dir, "share/zsh/site-functions", "_vgt", NULL, emit_zsh);
    return rc;
}

static int hidden(int argc, char **argv)
{
    const char *mode = argv[1], *arg = argc > 2 ? argv[2] : NULL;
    const vgt_cli_verb *v = find(arg);
    if (!strcmp(mode, "__generate") && arg) return generate(arg);
    if (!strcmp(mode, "__bash")) vgt_cli_bash_completion(stdout, verbs, NVERBS);
    else if (!strcmp(mode, "__zsh")) vgt_cli_zsh_completion(stdout, verbs, NVERBS);
    else if (!strcmp(mode, "__man") && !arg) vgt_cli_man_main(stdout, verbs, NVERBS);
    else if (!strcmp(mode, "__man") && v) vgt_cli_man_verb(stdout, v);
    else if (!strcmp(mode, "__options") && v) vgt_cli_list_options(stdout, v->spec);
    else {
        fprintf(stderr, "vgt: '%s%s%s' is not a verb; see 'vgt --help'\n", mode, arg ? " " : "", arg ? arg : "");
        return VGT_EXIT_USAGE;
    }
    return VGT_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return vgt_cli_check_output(NULL, stdout, "standard output", usage(stdout));
    if (!strcmp(argv[1], "--version")) {
        printf("vgt %s\n", VGT_VERSION_STRING);
        return vgt_cli_check_output(NULL, stdout, "standard output", VGT_EXIT_OK);
    }
    if (!strcmp(argv[1], "verbs")) {   /* machine-readable list, used by the test that every verb answers --help */
        for (size_t i = 0; i < NVERBS; i++) printf("%s\n", verbs[i].name);
        return vgt_cli_check_output(NULL, stdout, "standard output", VGT_EXIT_OK);
    }
    if (!strncmp(argv[1], "__", 2)) return vgt_cli_check_output(NULL, stdout, "standard output", hidden(argc, argv));
    const vgt_cli_verb *v = find(argv[1]);
    if (!v) {
        fprintf(stderr, "vgt: '%s' is not a verb; see 'vgt --help'\n", argv[1]);
        return VGT_EXIT_USAGE;
    }
    vgt_outfile_cleanup_on_signals();   /* an interrupted verb leaves no temporary output behind */
    if (vgt_cli_fault_setup() != 0) return VGT_EXIT_USAGE;   /* tests only: cli/fault.c */
    int rc = v->fn(argc - 1, argv + 1);
    /* every verb at once: output that could not be written (full disk, closed pipe) is an error */
    return vgt_cli_check_output(v->name, stdout, "standard output", rc);
}
