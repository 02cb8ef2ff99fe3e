/* test_cli_opt.c: the option-table parser of the CLI (vgt/cli.h): both spellings of a value, short
 * options, "--", positional arguments, each kind's checks and bounds, required options, aliases, and a
 * verb whose first positional argument ends its options. Errors go to stderr (expected here). */
#include <string.h>

#include "check.h"
#include "vgt/cli.h"

typedef struct opts {
    int flag, level, mode;
    const char *out;
    uint64_t count, size;
    vgt_range win;
    int napplied;
} opts;

static int count_apply(void *o, const char *v)
{
    (void)v;
    ((opts *)o)->napplied++;
    return 0;
}

static const char *const modes[] = {"fast", "slow", NULL};

static const vgt_cli_opt table[] = {
    {"flag", 'f', VGT_ARG_NONE, NULL, "a flag", .off = offsetof(opts, flag)},
    {"output", 'o', VGT_ARG_PATH, "OUT", "where", .off = offsetof(opts, out)},
    {"count", 0, VGT_ARG_U64, "N", "how many", .off = offsetof(opts, count), .min = 1, .max = 10},
    {"level", 0, VGT_ARG_INT, "L", "a level", .off = offsetof(opts, level), .min = -5, .max = 5},
    {"size", 0, VGT_ARG_SIZE, "BYTES", "bytes", .off = offsetof(opts, size), .max = 1u << 20},
    {"mode", 0, VGT_ARG_ENUM, "M", "a mode", .off = offsetof(opts, mode), .choices = modes},
    VGT_OPT_SUBMITS(opts, win, "a window"),
    {"add", 0, VGT_ARG_STRING, "X", "collected", .apply = count_apply, .flags = VGT_OPT_REPEAT},
    {0}};

static const vgt_cli_spec spec = {.verb = "t", .args = "IN [OUT]", .min_args = 1, .max_args = 2, .opts = table};

static int parse(opts *o, vgt_cli_args *a, int argc, const char **argv)
{
    memset(o, 0, sizeof *o);
    o->win = VGT_RANGE_ALL;
    return vgt_cli_parse(&spec, argc, (char **)argv, o, a);
}

#define ARGV(...) (const char *[]){"t", __VA_ARGS__}, (int)(sizeof((const char *[]){"t", __VA_ARGS__}) / sizeof(char *))

static int run(opts *o, vgt_cli_args *a, const char **argv, int argc) { return parse(o, a, argc, argv); }

static void test_forms(void)
{
    opts o;
    vgt_cli_args a;
    CHECK_EQ_U64(run(&o, &a, ARGV("--count", "3", "in", "--size=64K", "-o", "x", "--mode=slow", "--level", "-4")), (uint64_t)-1,
                 "a good command line goes on");
    CHECK(o.count == 3 && o.size == 65536 && o.out && !strcmp(o.out, "x") && o.mode == 1 && o.level == -4, "values");
    CHECK(a.npos == 1 && !strcmp(a.pos[0], "in"), "one positional");
    CHECK(vgt_cli_given(&spec, &a, "count") && !vgt_cli_given(&spec, &a, "flag"), "given");

    CHECK_EQ_U64(run(&o, &a, ARGV("-oy", "-f", "--submit", "2..5", "in", "out")), (uint64_t)-1, "short attached, alias");
    CHECK(!strcmp(o.out, "y") && o.flag && o.win.first == 2 && o.win.last == 5 && a.npos == 2, "short and alias values");
    CHECK(vgt_cli_given(&spec, &a, "submits"), "the alias counts as the option");

    CHECK_EQ_U64(run(&o, &a, ARGV("--", "-f", "--count")), (uint64_t)-1, "after --, options are arguments");
    CHECK(!o.flag && a.npos == 2 && !strcmp(a.pos[0], "-f"), "-- ends the options");
    CHECK_EQ_U64(run(&o, &a, ARGV("-", "--add", "a", "--add=b")), (uint64_t)-1, "'-' is an argument; repeats");
    CHECK(a.npos == 1 && !strcmp(a.pos[0], "-") && o.napplied == 2, "apply ran twice");
}

static void test_errors(void)
{
    opts o;
    vgt_cli_args a;
    const int usage = VGT_EXIT_USAGE;
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--nope")), usage, "unknown long option");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "-x")), usage, "unknown short option");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--count")), usage, "missing value");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--flag=1")), usage, "a flag with a value");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--count", "0")), usage, "below the minimum");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--count", "11")), usage, "above the maximum");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--level", "6")), usage, "int above the maximum");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--size", "2M")), usage, "size above the maximum");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--mode", "medium")), usage, "not a choice");
    CHECK_EQ_U64(run(&o, &a, ARGV("in", "--submits", "5..2")), usage, "a reversed range");
    CHECK_EQ_U64(run(&o, &a, ARGV("a", "b", "c")), usage, "too many arguments");
    CHECK_EQ_U64(run(&o, &a, ARGV("--flag")), usage, "too few arguments");
}

static const vgt_cli_opt run_table[] = {
    {"output", 'o', VGT_ARG_PATH, "OUT", "where", .off = offsetof(opts, out), .flags = VGT_OPT_REQUIRED},
    {0}};
static const vgt_cli_spec run_spec = {.verb = "r", .args = "CMD [ARGS...]", .min_args = 1, .max_args = -1,
                                      .opts = run_table, .flags = VGT_CLI_ARGS_END_OPTIONS};

static void test_command_verb(void)
{
    opts o = {0};
    vgt_cli_args a;
    const char *argv[] = {"r", "-o", "x", "prog", "-o", "--help"};
    CHECK_EQ_U64(vgt_cli_parse(&run_spec, 6, (char **)argv, &o, &a), (uint64_t)-1, "the command's options are its own");
    CHECK(a.nrest == 3 && !strcmp(a.rest[0], "prog") && !strcmp(a.rest[2], "--help"), "rest");
    const char *missing[] = {"r", "prog"};
    CHECK_EQ_U64(vgt_cli_parse(&run_spec, 2, (char **)missing, &o, &a), VGT_EXIT_USAGE, "a required option");
}

static void test_window(void)
{
    vgt_range w = {15, 25}, all = VGT_RANGE_ALL, open = {19, UINT64_MAX}, in = {0, 19};
    CHECK_EQ_U64(vgt_cli_window_check("t", "--submits", &w, 20, "submissions"), VGT_EXIT_USAGE, "past the end");
    CHECK_EQ_U64(vgt_cli_window_check("t", "--submits", &all, 0, "submissions"), 0, "everything, even of nothing");
    CHECK_EQ_U64(vgt_cli_window_check("t", "--submits", &open, 20, "submissions"), 0, "open to the end");
    CHECK_EQ_U64(vgt_cli_window_check("t", "--submits", &in, 20, "submissions"), 0, "exactly the trace");
    open.first = 20;
    CHECK_EQ_U64(vgt_cli_window_check("t", "--submits", &open, 20, "submissions"), VGT_EXIT_USAGE, "starts past it");
    char buf[32];
    CHECK(!strcmp(vgt_range_format(&w, buf, sizeof buf), "15..25"), "format %s", buf);
}

int main(void)
{
    test_forms();
    test_errors();
    test_command_verb();
    test_window();
    return check_finish("test_cli_opt");
}
