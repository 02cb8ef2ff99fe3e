/* cli_text.h: the text helpers that usage.c, man.c and complete.c share (inside vgt_cli only). */
#ifndef VGT_CLI_TEXT_H
#define VGT_CLI_TEXT_H

#include <stdio.h>

#include "vgt/cli.h"

void vgt_cli_flow(FILE *f, const char *s, int indent, int col);
int vgt_cli_opt_left(const vgt_cli_opt *o, char *buf, size_t cap);
void vgt_cli_opt_help(const vgt_cli_opt *o, char *buf, size_t cap);
void vgt_cli_synopsis(FILE *f, const vgt_cli_spec *s);

#endif
