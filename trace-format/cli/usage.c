/* usage.c: a verb's --help, made from its option table (vgt/cli.h).
 *
 * Text in the tables is flowed: the lines of a paragraph are joined and wrapped to the width of the
 * usage; an empty line ends a paragraph, and a line that starts with two spaces is kept as it is (an
 * example, a list). The man pages (man.c) read the same text with the same rules. */
#include "cli_text.h"

#include <string.h>

#define WIDTH 100

/* Prints s (flowed, see above) with every line indented by indent; the first line starts at column
 * col (already printed). */
void vgt_cli_flow(FILE *f, const char *s, int indent, int col)
{
    int fresh = 1;   /* nothing of the current paragraph printed yet */
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        if (len == 0 || (len >= 2 && s[0] == ' ' && s[1] == ' ')) {   /* paragraph end or a verbatim line */
            if (!fresh || col > indent) fputc('\n', f);
            if (len) fprintf(f, "%*s%.*s\n", indent, "", (int)len, s);
            else fputc('\n', f);
            col = 0;
            fresh = 1;
        } else {
            for (size_t i = 0; i < len;) {
                while (i < len && s[i] == ' ') i++;
                size_t w = i;
                while (w < len && s[w] != ' ') w++;
                if (w == i) break;
                int word = (int)(w - i);
                if (col < indent) col += fprintf(f, "%*s", indent - col, "");
                else if (!fresh && col + 1 + word > WIDTH) {
                    fprintf(f, "\n%*s", indent, "");
                    col = indent;
                } else if (!fresh) {
                    fputc(' ', f);
                    col++;
                }
                col += fprintf(f, "%.*s", word, s + i);
                fresh = 0;
                i = w;
            }
        }
        s += len + (eol ? 1 : 0);
    }
    if (!fresh) fputc('\n', f);
}

int vgt_cli_opt_left(const vgt_cli_opt *o, char *buf, size_t cap)
{
    int n = o->short_name ? snprintf(buf, cap, "-%c, --%s", o->short_name, o->name) : snprintf(buf, cap, "    --%s", o->name);
    if (o->kind != VGT_ARG_NONE && n < (int)cap)
        n += snprintf(buf + n, cap - (size_t)n, (o->flags & VGT_OPT_VALUE_OPTIONAL) ? "[=%s]" : " %s", o->arg ? o->arg : "VALUE");
    return n;
}

void vgt_cli_synopsis(FILE *f, const vgt_cli_spec *s)
{
    fprintf(f, "vgt %s", s->verb);
    if (s->args && *s->args) fprintf(f, " %s", s->args);
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++)
        if (!(o->flags & VGT_OPT_REQUIRED)) continue;
        else if (o->short_name) fprintf(f, " -%c %s", o->short_name, o->arg ? o->arg : "VALUE");
        else fprintf(f, " --%s %s", o->name, o->arg ? o->arg : "VALUE");
    if (!s->args || !strstr(s->args, "[options]")) fputs(" [options]", f);
}

/* The help of an option, with what the table says beyond it (alias, repetition, choices). */
void vgt_cli_opt_help(const vgt_cli_opt *o, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s", o->help ? o->help : "");
    if (o->kind == VGT_ARG_ENUM && o->choices && n < (int)cap && !strstr(buf, o->choices[0])) {
        n += snprintf(buf + n, cap - (size_t)n, " (one of:");
        for (int k = 0; o->choices[k] && n < (int)cap; k++) n += snprintf(buf + n, cap - (size_t)n, " %s", o->choices[k]);
        if (n < (int)cap) n += snprintf(buf + n, cap - (size_t)n, ")");
    }
    if ((o->flags & VGT_OPT_REPEAT) && n < (int)cap) n += snprintf(buf + n, cap - (size_t)n, "; may be repeated");
    if (o->alias && n < (int)cap) snprintf(buf + n, cap - (size_t)n, " (--%s, the former name, is still accepted)", o->alias);
}

void vgt_cli_usage(const vgt_cli_spec *s, FILE *f)
{
    fputs("usage: ", f);
    vgt_cli_synopsis(f, s);
    fputs("\n\n", f);
    if (s->about) {
        vgt_cli_flow(f, s->about, 0, 0);
        fputc('\n', f);
    }
    int colw = 0;
    char left[128];
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
        int n = vgt_cli_opt_left(o, left, sizeof left);
        if (n > colw && n <= 26) colw = n;
    }
    if (colw < 10) colw = 10;
    fputs("options:\n", f);
    char help[2048];
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
        int n = vgt_cli_opt_left(o, left, sizeof left);
        fprintf(f, "  %s", left);
        int col = 2 + n;
        if (n > colw) {   /* a long option and argument: its help starts on the next line */
            fputc('\n', f);
            col = 0;
        }
        vgt_cli_opt_help(o, help, sizeof help);
        fprintf(f, "%*s", col ? 2 + colw + 2 - col : 0, "");
        vgt_cli_flow(f, help, 2 + colw + 2, col ? 2 + colw + 2 : 0);
    }
    fprintf(f, "  -h, --help%*sthis help\n", colw - 10 + 2, "");
    if (s->notes) {
        fputc('\n', f);
        vgt_cli_flow(f, s->notes, 0, 0);
    }
}

void vgt_cli_list_options(FILE *f, const vgt_cli_spec *s)
{
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
        fprintf(f, "--%s", o->name);
        if (o->short_name) fprintf(f, " -%c", o->short_name);
        fputc('\n', f);
    }
}
