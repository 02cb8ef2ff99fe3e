/* opt.c: the one option parser of every verb (vgt/cli.h): a table in, the verb's options struct out. */
#include "vgt/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const vgt_cli_opt *find_long(const vgt_cli_spec *s, const char *name, size_t n)
{
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++)
        if ((strlen(o->name) == n && !strncmp(o->name, name, n)) ||
            (o->alias && strlen(o->alias) == n && !strncmp(o->alias, name, n)))
            return o;
    return NULL;
}

static const vgt_cli_opt *find_short(const vgt_cli_spec *s, char c)
{
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++)
        if (o->short_name && o->short_name == c) return o;
    return NULL;
}

static const char *noun(const vgt_cli_opt *o)
{
    if (o->what) return o->what;
    switch (o->kind) {
    case VGT_ARG_U64: case VGT_ARG_INT: return "number";
    case VGT_ARG_SIZE: return "size";
    case VGT_ARG_RANGE: return "range";
    default: return "value";
    }
}

static int bad(const vgt_cli_spec *s, const vgt_cli_opt *o, const char *v, const char *expect)
{
    return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "bad %s '%s' for --%s (%s)", noun(o), v, o->name, expect);
}

static int parse_int(const char *s, int64_t *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int bounds_text(const vgt_cli_opt *o, char *buf, size_t cap)
{
    if (o->kind == VGT_ARG_INT) return snprintf(buf, cap, "%lld..%lld", (long long)o->min, (long long)(int64_t)o->max);
    if (o->max) return snprintf(buf, cap, "%llu..%llu", (unsigned long long)o->min, (unsigned long long)o->max);
    return snprintf(buf, cap, "at least %llu", (unsigned long long)o->min);
}

/* Checks v against the option's kind and stores it (or hands it to apply). */
static int store(const vgt_cli_spec *s, const vgt_cli_opt *o, const char *v, void *opts)
{
    char *t = (char *)opts + o->off;
    char expect[96];
    uint64_t u;
    int64_t i;
    switch (o->kind) {
    case VGT_ARG_NONE:
        if (!o->apply) *(int *)t = 1;
        break;
    case VGT_ARG_STRING: case VGT_ARG_PATH:
        if (!o->apply) *(const char **)t = v;
        break;
    case VGT_ARG_U64: case VGT_ARG_SIZE:
        bounds_text(o, expect, sizeof expect);
        if ((o->kind == VGT_ARG_U64 ? vgt_parse_u64(v, &u) : vgt_parse_size(v, &u)) || u < (uint64_t)o->min ||
            (o->max && u > o->max))
            return bad(s, o, v, expect);
        if (!o->apply) *(uint64_t *)t = u;
        break;
    case VGT_ARG_INT:
        bounds_text(o, expect, sizeof expect);
        if (parse_int(v, &i) || i < o->min || i > (int64_t)o->max) return bad(s, o, v, expect);
        if (!o->apply) *(int *)t = (int)i;
        break;
    case VGT_ARG_RANGE: {
        vgt_range r;
        if (vgt_parse_range(v, &r)) return bad(s, o, v, "N, A..B, A.. or ..B, with A <= B");
        if (!o->apply) *(vgt_range *)t = r;
        break;
    }
    case VGT_ARG_ENUM: {
        int k = 0;
        while (o->choices[k] && strcmp(o->choices[k], v)) k++;
        if (!o->choices[k]) {
            char list[256] = "";
            size_t n = 0;
            for (int j = 0; o->choices[j] && n < sizeof list; j++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", j ? (o->choices[j + 1] ? ", " : " or ") : "",
                                      o->choices[j]);
            return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "--%s '%s' is not %s", o->name, v, list);
        }
        if (!o->apply) *(int *)t = k;
        break;
    }
    }
    return o->apply ? o->apply(opts, v) : 0;
}

static int is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

static int positional(const vgt_cli_spec *s, vgt_cli_args *args, const char *a)
{
    if (s->max_args >= 0 && args->npos >= s->max_args)
        return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "unexpected argument '%s' (usage: vgt %s %s)", a, s->verb,
                             s->args ? s->args : "");
    if (args->npos < VGT_CLI_MAX_ARGS) args->pos[args->npos] = a;
    args->npos++;
    return 0;
}

int vgt_cli_parse(const vgt_cli_spec *s, int argc, char **argv, void *opts, vgt_cli_args *args)
{
    memset(args, 0, sizeof *args);
    /* -h/--help wins over everything else before "--" (or before the command of a verb that runs one),
     * so that a wrong option next to it still shows the usage */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--") || ((s->flags & VGT_CLI_ARGS_END_OPTIONS) && argv[i][0] != '-')) break;
        if (is_help(argv[i])) {
            vgt_cli_usage(s, stdout);
            return VGT_EXIT_OK;
        }
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1]) {   /* "-" alone is standard input or output */
            if (s->flags & VGT_CLI_ARGS_END_OPTIONS) break;
            if ((rc = positional(s, args, a))) return rc;
            continue;
        }
        const vgt_cli_opt *o;
        const char *v = NULL;
        char shown[80];
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            o = find_long(s, a + 2, n);
            snprintf(shown, sizeof shown, "--%.*s", (int)n, a + 2);
            if (o && eq) {
                if (o->kind == VGT_ARG_NONE)
                    return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "%s takes no value ('%s')", shown, a);
                v = eq + 1;
            }
        } else {
            o = find_short(s, a[1]);
            snprintf(shown, sizeof shown, "-%c", a[1]);
            if (o && a[2]) {
                if (o->kind == VGT_ARG_NONE) o = NULL;   /* "-qx": no bundling */
                else v = a + 2;
            }
        }
        if (!o) return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "unknown option '%s' (see vgt %s --help)", a, s->verb);
        if (o->kind != VGT_ARG_NONE && !v && (o->flags & VGT_OPT_VALUE_OPTIONAL) && o->apply) {
            if ((rc = o->apply(opts, NULL))) return rc;   /* `--opt` alone: the option's default */
            if (o - s->opts < 64) args->given |= 1ull << (o - s->opts);
            continue;
        }
        if (o->kind != VGT_ARG_NONE && !v) {
            if (i + 1 >= argc)
                return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "%s needs a value (%s)", shown, o->arg ? o->arg : "see --help");
            v = argv[++i];
        }
        if ((rc = store(s, o, v, opts))) return rc;
        if (o - s->opts < 64) args->given |= 1ull << (o - s->opts);   /* a verb has far fewer options */
    }
    if (s->flags & VGT_CLI_ARGS_END_OPTIONS) {   /* the command and its arguments, untouched */
        args->rest = argv + i;
        args->nrest = argc - i;
        for (int k = 0; k < args->nrest && k < VGT_CLI_MAX_ARGS; k++) args->pos[k] = args->rest[k];
        args->npos = args->nrest;
    } else {
        for (; i < argc; i++) {
            int rc = positional(s, args, argv[i]);
            if (rc) return rc;
        }
    }
    if (args->npos < s->min_args)
        return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "missing arguments: vgt %s %s (see vgt %s --help)", s->verb,
                             s->args ? s->args : "", s->verb);
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++)
        if ((o->flags & VGT_OPT_REQUIRED) && !vgt_cli_given(s, args, o->name))
            return vgt_cli_error(s->verb, VGT_EXIT_USAGE, "--%s %s is required (see vgt %s --help)", o->name,
                                 o->arg ? o->arg : "", s->verb);
    return -1;
}

int vgt_cli_given(const vgt_cli_spec *s, const vgt_cli_args *args, const char *name)
{
    const vgt_cli_opt *o = find_long(s, name, strlen(name));
    return o && o - s->opts < 64 && (args->given >> (o - s->opts) & 1);
}

int vgt_cli_window_check(const char *verb, const char *option, const vgt_range *w, uint64_t n, const char *noun_text)
{
    if (w->first == 0 && w->last == UINT64_MAX) return 0;
    if (w->first < n && (w->last == UINT64_MAX || w->last < n)) return 0;
    char text[64];
    vgt_range_format(w, text, sizeof text);
    if (!n) return vgt_cli_error(verb, VGT_EXIT_USAGE, "%s %s is outside the trace: it has no %s", option, text, noun_text);
    return vgt_cli_error(verb, VGT_EXIT_USAGE, "%s %s is outside the trace: it has %llu %s (0..%llu)", option, text,
                         (unsigned long long)n, noun_text, (unsigned long long)(n - 1));
}
