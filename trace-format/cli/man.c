/* man.c: man pages (roff, section 1) made from the verbs' option tables: vgt-VERB.1 and vgt.1.
 * The text follows the flow rules of usage.c: paragraphs are filled by the formatter, lines that start
 * with two spaces are kept as they are (.nf). */
#include <stdlib.h>
#include <string.h>

#include "cli_text.h"

/* roff text: a backslash is \e, a hyphen \- (so that options copy and search as typed), and a line
 * that would start with a control character gets \& in front. */
static void roff_text(FILE *f, const char *s, size_t n)
{
    if (n && (s[0] == '.' || s[0] == '\'')) fputs("\\&", f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\') fputs("\\e", f);
        else if (s[i] == '-') fputs("\\-", f);
        else fputc(s[i], f);
    }
}

static void roff_flow(FILE *f, const char *s)
{
    int verbatim = 0;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        int v = len >= 2 && s[0] == ' ' && s[1] == ' ';
        if (v && !verbatim) fputs(".nf\n", f);
        if (!v && verbatim) fputs(".fi\n", f);
        verbatim = v;
        if (!len) fputs(".PP\n", f);
        else {
            const char *t = s;
            size_t n = len;
            if (!v)
                while (n && *t == ' ') t++, n--;
            roff_text(f, t, n);
            fputc('\n', f);
        }
        s += len + (eol ? 1 : 0);
    }
    if (verbatim) fputs(".fi\n", f);
}

static void header(FILE *f, const char *name, const char *upper_name, const char *summary)
{
    fprintf(f, ".\\\" Generated from the option tables of `vgt` (vgt __man); do not edit.\n");
    fprintf(f, ".TH %s 1 \"\" \"vgt %s\" \"vgtrace manual\"\n.SH NAME\n", upper_name, VGT_VERSION_STRING);
    roff_text(f, name, strlen(name));
    fputs(" \\- ", f);
    roff_text(f, summary, strlen(summary));
    fputc('\n', f);
}

void vgt_cli_man_verb(FILE *f, const vgt_cli_verb *v)
{
    const vgt_cli_spec *s = v->spec;
    char name[64], upper[64];
    snprintf(name, sizeof name, "vgt-%s", v->name);
    for (size_t i = 0; i <= strlen(name); i++) upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    header(f, name, upper, v->summary);
    fputs(".SH SYNOPSIS\n", f);
    char *syn = NULL;
    size_t synlen = 0;
    FILE *m = open_memstream(&syn, &synlen);
    if (m) {
        vgt_cli_synopsis(m, s);
        fclose(m);
        size_t head = strlen("vgt ") + strlen(s->verb);   /* "vgt VERB" in bold, the rest as it is */
        fprintf(f, ".B vgt %s\n", s->verb);
        if (synlen > head) roff_text(f, syn + head + 1, synlen - head - 1);
        free(syn);
    }
    fputs("\n.SH DESCRIPTION\n", f);
    if (s->about) roff_flow(f, s->about);
    fputs(".SH OPTIONS\n", f);
    char help[2048], left[128];
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
        fputs(".TP\n", f);
        int n = vgt_cli_opt_left(o, left, sizeof left);
        const char *l = left;
        while (*l == ' ') l++, n--;
        roff_text(f, l, (size_t)n);
        fputc('\n', f);
        vgt_cli_opt_help(o, help, sizeof help);
        roff_flow(f, help);
    }
    fputs(".TP\n\\-h, \\-\\-help\nprint the usage and exit\n", f);
    if (s->notes) {
        fputs(".SH NOTES\n", f);
        roff_flow(f, s->notes);
    }
    fputs(".SH SEE ALSO\n.BR vgt (1)\n", f);
}

void vgt_cli_man_main(FILE *f, const vgt_cli_verb *verbs, size_t n)
{
    header(f, "vgt", "VGT", "record, replay and analyze NVIDIA GPU command streams");
    fputs(".SH SYNOPSIS\n.B vgt\n\\fIverb\\fR [options] [arguments]\n.br\n.B vgt \\-\\-help\n|\n.B \\-\\-version\n"
          ".SH DESCRIPTION\nvgtrace records what an NVIDIA GPU driver submits, keeps it in .vgt traces, replays it "
          "and answers forensic questions about it. Each verb answers \\-\\-help and has a page of its own.\n"
          ".SH VERBS\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, ".TP\n.BR vgt\\-%s (1)\n", verbs[i].name);
        roff_text(f, verbs[i].summary, strlen(verbs[i].summary));
        fputc('\n', f);
    }
    fputs(".SH EXIT STATUS\n0 ok, 1 a problem was found, 2 usage or I/O error (an unknown option, a missing or "
          "malformed value, a window outside the trace).\n.SH SEE ALSO\n", f);
    for (size_t i = 0; i < n; i++) fprintf(f, ".BR vgt\\-%s (1)%s\n", verbs[i].name, i + 1 < n ? "," : "");
}
