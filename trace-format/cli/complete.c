/* complete.c: bash and zsh completion scripts made from the verbs' option tables. After an option that
 * takes a value they offer its choices (an enum), file names (a path) or nothing (a number, a range);
 * otherwise the verb's options when the word starts with '-', else the first argument's words
 * (corpus: check, bless) or file names. */
#include <string.h>

#include "cli_text.h"

static void bash_words(FILE *f, const vgt_cli_spec *s)
{
    for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
        fprintf(f, "--%s ", o->name);
        if (o->short_name) fprintf(f, "-%c ", o->short_name);
    }
    fputs("--help -h", f);
}

static void bash_option_names(FILE *f, const vgt_cli_opt *o)
{
    fprintf(f, "--%s", o->name);
    if (o->short_name) fprintf(f, "|-%c", o->short_name);
    if (o->alias) fprintf(f, "|--%s", o->alias);
}

void vgt_cli_bash_completion(FILE *f, const vgt_cli_verb *verbs, size_t n)
{
    fputs("# bash completion for vgt, generated from the verbs' option tables (vgt __bash); do not edit.\n"
          "_vgt() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    COMPREPLY=()\n"
          "    if (( COMP_CWORD == 1 )); then\n"
          "        COMPREPLY=( $(compgen -W \"",
          f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%s ", verbs[i].name);
    fputs("--help --version\" -- \"$cur\") )\n"
          "        return 0\n"
          "    fi\n"
          "    local words=\"\" first=\"\"\n"
          "    case ${COMP_WORDS[1]} in\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const vgt_cli_spec *s = verbs[i].spec;
        fprintf(f, "    %s)\n        case $prev in\n", verbs[i].name);
        for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
            if (o->kind == VGT_ARG_NONE) continue;
            fputs("            ", f);
            bash_option_names(f, o);
            if (o->kind == VGT_ARG_ENUM) {
                fputs(") COMPREPLY=( $(compgen -W \"", f);
                for (int k = 0; o->choices[k]; k++) fprintf(f, "%s%s", k ? " " : "", o->choices[k]);
                fputs("\" -- \"$cur\") ); return 0 ;;\n", f);
            } else if (o->kind == VGT_ARG_PATH) {
                fputs(") COMPREPLY=( $(compgen -f -- \"$cur\") ); return 0 ;;\n", f);
            } else {
                fputs(") return 0 ;;\n", f);
            }
        }
        fputs("        esac\n        words=\"", f);
        bash_words(f, s);
        fputs("\"\n", f);
        if (s->first_words) {
            fputs("        first=\"", f);
            for (int k = 0; s->first_words[k]; k++) fprintf(f, "%s%s", k ? " " : "", s->first_words[k]);
            fputs("\"\n", f);
        }
        fputs("        ;;\n", f);
    }
    fputs("    *) return 0 ;;\n"
          "    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=( $(compgen -W \"$words\" -- \"$cur\") )\n"
          "    elif [[ -n $first && $COMP_CWORD == 2 ]]; then\n"
          "        COMPREPLY=( $(compgen -W \"$first\" -- \"$cur\") )\n"
          "    else\n"
          "        COMPREPLY=( $(compgen -f -- \"$cur\") )\n"
          "    fi\n"
          "    return 0\n"
          "}\n"
          "complete -o filenames -F _vgt vgt\n",
          f);
}

/* zsh: descriptions go inside [...] of an _arguments spec: the first sentence of the help, without the
 * characters that spec syntax gives a meaning. */
static void zsh_desc(FILE *f, const char *help)
{
    int n = 0;
    for (const char *p = help ? help : ""; *p && n < 70; p++, n++) {
        if (*p == ';' || *p == '(' || *p == '\n' || (*p == '.' && p[1] == ' ')) break;
        if (strchr("[]:'\\`$\"", *p)) continue;
        fputc(*p, f);
    }
}

static void zsh_action(FILE *f, const vgt_cli_opt *o)
{
    if (o->kind == VGT_ARG_NONE) return;
    fprintf(f, (o->flags & VGT_OPT_VALUE_OPTIONAL) ? "::%s:" : ":%s:", o->arg ? o->arg : "value");
    if (o->kind == VGT_ARG_PATH) fputs("_files", f);
    else if (o->kind == VGT_ARG_ENUM) {
        fputs("(", f);
        for (int k = 0; o->choices[k]; k++) fprintf(f, "%s%s", k ? " " : "", o->choices[k]);
        fputs(")", f);
    } else fputs(" ", f);
}

void vgt_cli_zsh_completion(FILE *f, const vgt_cli_verb *verbs, size_t n)
{
    fputs("#compdef vgt\n# zsh completion for vgt, generated from the verbs' option tables (vgt __zsh); do not edit.\n"
          "_vgt() {\n"
          "    local -a verbs\n"
          "    verbs=(\n",
          f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "        '%s:", verbs[i].name);
        zsh_desc(f, verbs[i].summary);
        fputs("'\n", f);
    }
    fputs("    )\n"
          "    if (( CURRENT == 2 )); then\n"
          "        _describe -t verbs 'vgt verb' verbs\n"
          "        return\n"
          "    fi\n"
          "    local verb=$words[2]\n"
          "    shift words\n"
          "    (( CURRENT-- ))\n"
          "    case $verb in\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const vgt_cli_spec *s = verbs[i].spec;
        fprintf(f, "    %s)\n        _arguments -s -S \\\n", verbs[i].name);
        for (const vgt_cli_opt *o = s->opts; o && o->name; o++) {
            const char *rep = (o->flags & VGT_OPT_REPEAT) ? "*" : "";
            if (o->short_name) {
                fprintf(f, "            '%s-%c[", rep, o->short_name);
                zsh_desc(f, o->help);
                fputs("]", f);
                zsh_action(f, o);
                fputs("' \\\n", f);
            }
            /* zsh: "--opt=-" takes its value only after '=' (an optional value, VGT_OPT_VALUE_OPTIONAL) */
            fprintf(f, "            '%s--%s%s[", rep, o->name, o->kind == VGT_ARG_NONE ? "" :
                    (o->flags & VGT_OPT_VALUE_OPTIONAL) ? "=-" : "=");
            zsh_desc(f, o->help);
            fputs("]", f);
            zsh_action(f, o);
            fputs("' \\\n", f);
        }
        fputs("            '(- *)'{-h,--help}'[print the usage]' \\\n", f);
        if (s->first_words) {
            fputs("            '1:argument:(", f);
            for (int k = 0; s->first_words[k]; k++) fprintf(f, "%s%s", k ? " " : "", s->first_words[k]);
            fputs(")' \\\n", f);
        }
        if (s->flags & VGT_CLI_ARGS_END_OPTIONS) fputs("            '*::command:_normal'\n        ;;\n", f);
        else fputs("            '*:file:_files'\n        ;;\n", f);
    }
    fputs("    esac\n}\n_vgt \"$@\"\n", f);
}
