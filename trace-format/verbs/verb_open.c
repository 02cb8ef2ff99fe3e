/* verb_open.c: see verb_open.h. */
#include "verb_open.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vgt/cli.h"

int vgt_verb_open(const char *verb, const char *path, int streaming, vgt_reader **r)
{
    vgt_error e;
    vgt_reader_options o = {.streaming = streaming != VGT_VERB_OPEN_FILE, .verify_checksums = 1,
                            .follow = streaming == VGT_VERB_OPEN_FOLLOW};
    vgt_status rc = !strcmp(path, "-") ? vgt_reader_open_fd(r, STDIN_FILENO, 0, &o, &e)
                                       : vgt_reader_open_path(r, path, &o, &e);
    if (rc == VGT_OK) return VGT_EXIT_OK;
    if (!strcmp(path, "-")) vgt_error_prefix(&e, "standard input");
    return vgt_cli_report(verb, &e);
}
