/* check.h: the assertion scaffolding every C unit test shares (header-only; each test is one
 * executable, so the counter below is per test).
 *
 *   CHECK(cond, fmt, ...)          on false: "file:line: check failed: cond: message", counted
 *   CHECK_EQ_U64(got, want, fmt, ...)  both evaluated once, compared as uint64_t; prints both numbers
 *   CHECK_STATUS(expr, want, err, fmt, ...)  a vgt_status against the expected one; prints both names
 *                                  and, when expr failed, the message in *err
 *   check_finish("test_name")      main's last line: reports the count, returns 0 or 1 (the exit status)
 *
 * A failed check never stops the test: every check runs and all failures are printed, so one run shows
 * everything that broke. Setup that cannot go on (a file that cannot be created) still returns from main
 * directly. */
#ifndef VGT_TEST_CHECK_H
#define VGT_TEST_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"

static int check_failures;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) check_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);  \
    } while (0)

#define CHECK_EQ_U64(got, want, ...)                                                      \
    do {                                                                                  \
        uint64_t check_got_ = (uint64_t)(got), check_want_ = (uint64_t)(want);            \
        if (check_got_ != check_want_) {                                                  \
            check_fail_at(__FILE__, __LINE__, #got " == " #want, __VA_ARGS__);            \
            check_numbers(check_got_, check_want_);                                       \
        }                                                                                 \
    } while (0)

#define CHECK_STATUS(expr, want, err, ...)                                                \
    do {                                                                                  \
        vgt_status check_rc_ = (expr), check_want_ = (want);                              \
        if (check_rc_ != check_want_) {                                                   \
            check_fail_at(__FILE__, __LINE__, #expr " == " #want, __VA_ARGS__);           \
            check_statuses(check_rc_, check_want_, (err)->msg);                           \
        }                                                                                 \
    } while (0)

__attribute__((format(printf, 4, 5))) static inline void check_fail_at(const char *file, int line,
                                                                       const char *cond, const char *fmt, ...)
{
    va_list ap;
    check_failures++;
    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static inline void check_numbers(uint64_t got, uint64_t want)
{
    fprintf(stderr, "    got %llu (0x%llx), expected %llu (0x%llx)\n", (unsigned long long)got,
            (unsigned long long)got, (unsigned long long)want, (unsigned long long)want);
}

/* A call that succeeded has not filled its vgt_error: its message is printed only for a failure. */
static inline void check_statuses(vgt_status got, vgt_status want, const char *msg)
{
    fprintf(stderr, "    got %s, expected %s%s%s\n", vgt_status_name(got), vgt_status_name(want),
            got == VGT_OK ? "" : ": ", got == VGT_OK ? "" : msg);
}

static inline int check_finish(const char *name)
{
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
