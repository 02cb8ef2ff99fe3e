/* walk_filter.c: see walk_filter.h. */
#include "walk_filter.h"

void walk_filter_apply(const vgt_cli_spec *spec, const vgt_cli_args *given, walk_filter *f, vgt_walk_options *opt)
{
    f->has_channel = vgt_cli_given(spec, given, "channel");
    opt->submit_first = f->submits.first;
    opt->submit_last = f->submits.last;
    opt->has_channel = f->has_channel;
    opt->channel = (uint32_t)f->channel;
    opt->follow = f->follow;
}

int walk_filter_check(const char *verb, const walk_filter *f, const vgt_walk_stats *st)
{
    return vgt_cli_window_check(verb, "--submits", &f->submits, st->submits, "submissions");
}
