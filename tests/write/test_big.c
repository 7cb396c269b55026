/*
 * Large-volume writer tests: memory stays under the budget while 100M points go through
 * (peak measured through the allocator hooks; 10M points under sanitizers, where 100M would take
 * minutes on two cores), and a file over 4 GiB written and read back past the 4 GiB mark (64-bit
 * offsets in chunk metadata and index). The big file runs only when TSF_TEST_BIG=1 is set, the
 * folder has room (statvfs) and the build is not sanitized; otherwise that test is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* Allocator hooks that track the bytes held and their peak. */
typedef struct track {
    size_t cur, peak;
} track;

static void *tr_alloc(void *ud, size_t n)
{
    track *t = ud;
    void *p = malloc(n);
    if (p) {
        t->cur += n;
        if (t->cur > t->peak) t->peak = t->cur;
    }
    return p;
}

static void *tr_realloc(void *ud, void *p, size_t old, size_t n)
{
    track *t = ud;
    void *q = realloc(p, n);
    if (q) {
        t->cur += n - old;
        if (t->cur > t->peak) t->peak = t->cur;
    }
    return q;
}

static void tr_free(void *ud, void *p, size_t n)
{
    track *t = ud;
    t->cur -= n;
    free(p);
}

static int count_write(void *ud, const void *data, size_t len)
{
    (void)data;
    *(uint64_t *)ud += len;
    return 0;
}

enum { NS = 100, TROWS = 5000 };

static void test_memory_100m_points(void)
{
    /* case A of the E4 benchmark: 100 DOUBLE series (GORILLA, LZ4) x 1M rows, default options */
    const size_t rows = SANITIZED ? 100000 : 1000000;
    track tr = {0, 0};
    tsf_allocator a = {tr_alloc, tr_realloc, tr_free, &tr};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.allocator = &a;
    uint64_t written = 0;
    tsf_write_callbacks cb = {sizeof cb, count_write, NULL, &written};
    tsf_error err = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &err), &err);
    static char nb[NS][8];
    for (int i = 0; i < NS; i++) {
        snprintf(nb[i], sizeof nb[i], "s%02d", i);
        tsf_column_schema c = {nb[i], TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.big.d0", &c, &err), &err);
    }
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.big.d0", NULL, 0, TROWS, &t, &err), &err);
    static int64_t times[TROWS];
    static double vals[TROWS], state[NS];
    uint64_t rng = 42;
    size_t peak_tenth = 0;
    for (size_t r0 = 0; r0 < rows; r0 += TROWS) {
        for (size_t r = 0; r < TROWS; r++) times[r] = 1600000000000LL + (int64_t)(r0 + r) * 1000;
        CHECK_OK(tsf_tablet_set_times(t, times, TROWS, &err), &err);
        for (int k = 0; k < NS; k++) {
            for (size_t r = 0; r < TROWS; r++) { /* random walk */
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                state[k] += (double)(rng >> 11) / 9007199254740992.0 - 0.5;
                vals[r] = state[k];
            }
            CHECK_OK(tsf_tablet_set_column(t, (size_t)k, vals, NULL, TROWS, &err), &err);
        }
        CHECK_OK(tsf_writer_write_tablet(w, t, &err), &err);
        if (r0 + TROWS == rows / 10 * 6) peak_tenth = tr.peak; /* after several budget flushes */
    }
    tsf_tablet_free(t);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    CHECK_EQ_INT(tr.cur, 0); /* everything freed */
    /* The budget bounds the buffered chunk data; chunk buffers grow by doubling and are kept for
       the next chunk group (no fresh pages per flush), so they may hold up to twice their data.
       Beyond that the writer holds: a pending page per series (10000 values, capacity doubling to
       16384 x 8 bytes), the tablet (5000 x 8 x 101), shared times, output buffer (<= 2 MiB), page
       scratch and chunk buffer slack (one page bound per series). */
    size_t fixed = (size_t)NS * 16384 * 8 + (size_t)TROWS * 8 * (NS + 1) + 40000 * 8 + (4u << 20) +
                   (size_t)NS * 90000;
    printf("  %zu points: peak %zu bytes (after 60%% %zu; 2 x budget %zu + fixed %zu), file %llu bytes\n",
           rows * NS, tr.peak, peak_tenth, o.memory_budget, fixed, (unsigned long long)written);
    CHECK(tr.peak < 2 * o.memory_budget + fixed);
    CHECK(tr.peak <= peak_tenth + peak_tenth / 10); /* no growth with the row count */
    CHECK(written > (uint64_t)rows * NS * 6);       /* GORILLA on a random walk: ~7 bytes a point */
}

static void test_file_over_4gib(void)
{
    const char *big = getenv("TSF_TEST_BIG");
    if (!big || strcmp(big, "1") != 0) {
        tsf_test_skip("set TSF_TEST_BIG=1 to write a 4.5 GB file (about a minute)");
        return;
    }
    if (SANITIZED) {
        tsf_test_skip("sanitized build: the 4.5 GB file would take too long");
        return;
    }
    struct statvfs vf;
    if (statvfs(".", &vf) != 0 || (unsigned long long)vf.f_bavail * vf.f_frsize < (6ULL << 30)) {
        tsf_test_skip("less than 6 GiB free here");
        return;
    }
    const char *path = "write_test_big.tsfile";
    enum { BS = 8, BROWS = 100000 };
    const size_t rows = 72000000; /* 8 series x 72M rows of PLAIN INT64: 4.6 GB of values */
    tsf_error err = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, NULL, &err), &err);
    static char nb[BS][8];
    for (int i = 0; i < BS; i++) {
        snprintf(nb[i], sizeof nb[i], "v%d", i);
        tsf_column_schema c = {nb[i], TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.big.d1", &c, &err), &err);
    }
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.big.d1", NULL, 0, BROWS, &t, &err), &err);
    static int64_t times[BROWS], vals[BROWS];
    for (size_t r0 = 0; r0 < rows; r0 += BROWS) {
        for (size_t r = 0; r < BROWS; r++) times[r] = vals[r] = (int64_t)(r0 + r);
        CHECK_OK(tsf_tablet_set_times(t, times, BROWS, &err), &err);
        for (int k = 0; k < BS; k++) {
            if (k) /* each series its own values: v_k = row * (k + 1) */
                for (size_t r = 0; r < BROWS; r++) vals[r] = (int64_t)(r0 + r) * (k + 1);
            CHECK_OK(tsf_tablet_set_column(t, (size_t)k, vals, NULL, BROWS, &err), &err);
            if (k)
                for (size_t r = 0; r < BROWS; r++) vals[r] = (int64_t)(r0 + r);
        }
        CHECK_OK(tsf_writer_write_tablet(w, t, &err), &err);
    }
    tsf_tablet_free(t);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size > (4ULL << 30));
    /* read back: the last rows (stored past 4 GiB) and the series statistics */
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, path, NULL, &err), &err);
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.time_min = (int64_t)rows - 3000;
    tsf_query *q = NULL;
    CHECK_OK(tsf_query_open(r, &qo, &q, &err), &err);
    size_t n = 0, bad = 0;
    const tsf_batch *b;
    while (q && tsf_query_next(q, &b, &err) == TSF_OK && b) {
        for (size_t i = 0; i < b->nrows; i++, n++) {
            if (b->times[i] != qo.time_min + (int64_t)n) bad++;
            for (size_t k = 0; k < b->ncolumns; k++)
                if (((const int64_t *)b->columns[k].values)[i] != b->times[i] * (int64_t)(k + 1)) bad++;
        }
    }
    CHECK_EQ_INT(n, 3000);
    CHECK_EQ_INT(bad, 0);
    tsf_query_close(q);
    int64_t lt = 0;
    tsf_value lv;
    int found = 0;
    CHECK_OK(tsf_last_value(r, 0, BS - 1, &lt, &lv, &found, &err), &err);
    CHECK(found && lt == (int64_t)rows - 1 && lv.v.i64 == lt * BS);
    tsf_reader_close(r);
    printf("  %llu bytes written and read back past 4 GiB\n", (unsigned long long)st.st_size);
    remove(path);
}

int main(void)
{
    TSF_RUN(test_memory_100m_points);
    TSF_RUN(test_file_over_4gib);
    return tsf_test_finish();
}
