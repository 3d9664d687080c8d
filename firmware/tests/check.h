/*
 * check.h - the smallest possible unit-test harness for firmware/tests.
 *
 * Each test file is one executable: test functions use CHECK / CHECK_EQ,
 * which report file:line and count failures without aborting, and main()
 * ends with `return check_report(argv0);` (non-zero if anything failed).
 */
#ifndef MOTE_TESTS_CHECK_H
#define MOTE_TESTS_CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                         \
    do {                                                                    \
        check_count++;                                                      \
        if (!(cond)) {                                                      \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                   \
    } while (0)

/* Integer equality, printing both sides on failure. */
#define CHECK_EQ(actual, expected)                                          \
    do {                                                                    \
        long long check_a_ = (long long)(actual);                           \
        long long check_e_ = (long long)(expected);                         \
        check_count++;                                                      \
        if (check_a_ != check_e_) {                                         \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, expected %s == %lld\n", \
                    __FILE__, __LINE__, #actual, check_a_, #expected, check_e_); \
        }                                                                   \
    } while (0)

/* Byte-array equality. */
#define CHECK_BYTES(actual, expected, n)                                    \
    do {                                                                    \
        const unsigned char *check_pa_ = (const unsigned char *)(actual);   \
        const unsigned char *check_pe_ = (const unsigned char *)(expected); \
        unsigned long check_n_ = (unsigned long)(n), check_i_;              \
        check_count++;                                                      \
        for (check_i_ = 0; check_i_ < check_n_; check_i_++) {               \
            if (check_pa_[check_i_] != check_pe_[check_i_]) {               \
                check_failures++;                                           \
                fprintf(stderr, "%s:%d: CHECK_BYTES failed at byte %lu: 0x%02x, expected 0x%02x\n", \
                        __FILE__, __LINE__, check_i_, check_pa_[check_i_], check_pe_[check_i_]); \
                break;                                                      \
            }                                                               \
        }                                                                   \
    } while (0)

static int check_report(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures != 0;
}

#endif /* MOTE_TESTS_CHECK_H */
