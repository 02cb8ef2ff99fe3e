/* main.c: `vgt <verb>`, a thin table of verbs in the manner of git's commands[].
 * Each part lists its verbs in its own verbs.def; the verbs live with the part they belong to. */
#include <stdio.h>
#include <string.h>

#include "vgt/cli.h"
#include "vgt/outfile.h"

#define VGT_VERB(name, fn, summary) int fn(int argc, char **argv);
#include "../../trace-format/verbs.def"
#include "../../analyze/verbs.def"
#include "../../capture/verbs.def"
#include "../../replay/verbs.def"
#undef VGT_VERB

struct verb {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
};

static const struct verb verbs[] = {
#define VGT_VERB(name, fn, summary) {name, fn, summary},
#include "../../trace-format/verbs.def"
#include "../../analyze/verbs.def"
#include "../../capture/verbs.def"
#include "../../replay/verbs.def"
#undef VGT_VERB
};

static int usage(FILE *f)
{
    fprintf(f, "usage: vgt <verb> [options]   (vgt <verb> --help for each verb)\n\n"
               "vgtrace records what an NVIDIA GPU driver submits, keeps it in .vgt traces,\n"
               "replays it and answers forensic questions about it.\n\nverbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\nexit codes: 0 ok, 1 a problem was found, 2 usage or I/O error\n");
    return f == stdout ? VGT_EXIT_OK : VGT_EXIT_USAGE;
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
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) printf("%s\n", verbs[i].name);
        return vgt_cli_check_output(NULL, stdout, "standard output", VGT_EXIT_OK);
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(argv[1], verbs[i].name)) continue;
        vgt_outfile_cleanup_on_signals();   /* an interrupted verb leaves no temporary output behind */
        int rc = verbs[i].fn(argc - 1, argv + 1);
        /* every verb at once: output that could not be written (full disk, closed pipe) is an error */
        return vgt_cli_check_output(verbs[i].name, stdout, "standard output", rc);
    }
    fprintf(stderr, "vgt: '%s' is not a verb; see 'vgt --help'\n", argv[1]);
    return VGT_EXIT_USAGE;
}
