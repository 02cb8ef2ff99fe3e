/* walk_filter.h: the filters of the verbs that walk a trace (decode, census, db, mme): `--submits A..B`
 * and `--channel H`, and how TRACE is read (`--follow`), declared once for every table, turned into vgt_walk_options, and the check after
 * the walk that the window named submissions the trace has. */
#ifndef VGT_WALK_FILTER_H
#define VGT_WALK_FILTER_H

#include "vgt/cli.h"
#include "vgt/walk.h"

typedef struct walk_filter {
    vgt_range submits;   /* VGT_RANGE_ALL when not given */
    uint64_t channel;
    int has_channel;
    int follow;          /* --follow: TRACE is still being written */
} walk_filter;

/* The three table entries; type is the verb's options struct, member its walk_filter. */
#define WALK_FILTER_OPTIONS(type, member, submits_help, channel_help)                                        \
    VGT_OPT_SUBMITS(type, member.submits, submits_help),                                                     \
    {"channel", 0, VGT_ARG_U64, "H", channel_help, .off = offsetof(type, member.channel), .max = UINT32_MAX}, \
    VGT_OPT_FOLLOW(type, member.follow)

/* After vgt_cli_parse: the filters into opt (given: which options the parser saw). */
void walk_filter_apply(const vgt_cli_spec *spec, const vgt_cli_args *given, walk_filter *f, vgt_walk_options *opt);
/* After a walk that ran to its end or past the window: VGT_EXIT_USAGE (reported) when --submits named
 * submissions the trace lacks, else 0. */
int walk_filter_check(const char *verb, const walk_filter *f, const vgt_walk_stats *st);

#endif
