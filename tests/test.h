/*
 * test.h - a minimal test harness. A test file defines test functions and a main that calls
 * TSF_RUN(fn) for each, then returns tsf_test_finish(). Failures print file:line and the values;
 * the summary line is "N passed, N failed" (ctest reads the exit code). A whole file can skip
 * (exit 77, counted as skipped by ctest) when every test in it skipped; CI counts that as a failure.
 */
#ifndef TSF_TEST_H
#define TSF_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tsf.h"

extern int tsf_test_failures;     /* failed checks in the current test */
extern int tsf_test_passed, tsf_test_failed, tsf_test_skipped;

void tsf_test_run(const char *name, void (*fn)(void));
int tsf_test_finish(void);
/* Marks the current test skipped with a reason (e.g. an opt-in test that was not asked for). */
void tsf_test_skip(const char *why);

#define TSF_RUN(fn) tsf_test_run(#fn, fn)

#define CHECK(cond)                                                                                  \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);                 \
            tsf_test_failures++;                                                                     \
        }                                                                                            \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                           \
    do {                                                                                             \
        long long _a = (long long)(a), _b = (long long)(b);                                          \
        if (_a != _b) {                                                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, _a, \
                    _b);                                                                             \
            tsf_test_failures++;                                                                     \
        }                                                                                            \
    } while (0)

/* Checks a tsf_status is TSF_OK, printing the error message otherwise. */
#define CHECK_OK(expr, errp)                                                                         \
    do {                                                                                             \
        tsf_status _s = (expr);                                                                      \
        const tsf_error *_ep = (errp); /* a variable: no -Waddress for CHECK_OK(x, &e) */            \
        if (_s != TSF_OK) {                                                                          \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #expr, tsf_status_name(_s), \
                    _ep ? _ep->message : "");                                                        \
            tsf_test_failures++;                                                                     \
        }                                                                                            \
    } while (0)

#define CHECK_MEM(a, b, n)                                                                           \
    do {                                                                                             \
        if (memcmp((a), (b), (n)) != 0) {                                                            \
            fprintf(stderr, "%s:%d: memory %s != %s over %zu bytes\n", __FILE__, __LINE__, #a, #b,   \
                    (size_t)(n));                                                                    \
            tsf_test_hexdiff((const uint8_t *)(a), (const uint8_t *)(b), (n));                       \
            tsf_test_failures++;                                                                     \
        }                                                                                            \
    } while (0)

void tsf_test_hexdiff(const uint8_t *a, const uint8_t *b, size_t n);

/* Deterministic PRNG for tests (splitmix64). */
uint64_t tsf_test_rand(uint64_t *state);

/* The reference files shipped with the sources (tests/data, described in tests/data/README.md):
   "<dir>/tsfile-java/...", "<dir>/tsfile-cpp/...", "<dir>/datasets/...". */
const char *tsf_test_data_dir(void);
/* Reads a whole file; caller frees. NULL on failure. */
uint8_t *tsf_test_read_file(const char *path, size_t *len);

/* A growable in-memory output for tsf_writer_open_callbacks: `write` is tsf_test_mem_write, `ud` a
 * zeroed tsf_test_membuf (free p when done). */
typedef struct tsf_test_membuf {
    uint8_t *p;
    size_t len, cap;
} tsf_test_membuf;
int tsf_test_mem_write(void *ud, const void *data, size_t len);

#endif
