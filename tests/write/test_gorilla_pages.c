/*
 * Non-aligned GORILLA pages completed by a later tablet (column.c: the pending values and the
 * completing batch encoded as two spans, tsf_gorilla_encode_two, without copying the batch). Files
 * written with tablets of 10000 rows (each page straight from one tablet), 5000, 3000 and 1 row (the
 * completing batch is 5000, 1000 or 1 value) must be byte-identical, at GORILLA levels 0 and 1, on
 * the batch paths and against the per-value path (level 0: pending values copied, the reference
 * encoder), for DOUBLE and INT64 (two spans) next to FLOAT (one span) series, with 1 and 2 threads.
 */
#include <stdlib.h>

#include "test.h"
#include "tsf.h"

enum { ROWS = 47000, NCOL = 4 };

/* Walk data: DOUBLE s0, s1; INT64 s2; FLOAT s3. */
static void make_data(double *d0, double *d1, int64_t *i2, float *f3, int64_t *t)
{
    uint64_t s = 12345;
    double a = 0, b = 100;
    for (size_t r = 0; r < ROWS; r++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        a += (double)(s >> 11) / 9007199254740992.0 - 0.5;
        b += r % 7 == 0 ? 0 : (double)(s & 0xffff) / 65536.0 - 0.5; /* some repeats */
        d0[r] = a;
        d1[r] = b;
        i2[r] = (int64_t)(s >> 40) - (1 << 23);
        f3[r] = (float)a;
        t[r] = 1600000000000LL + (int64_t)r * 1000;
    }
}

static tsf_test_membuf write_file(int level, tsf_codec_path path, size_t tablet_rows, uint32_t threads,
                                  const void *const *cols, const int64_t *t)
{
    tsf_test_membuf m = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.gorilla_compact = level;
    o.path = path;
    o.threads = threads;
    o.memory_budget = (size_t)256 << 20; /* one chunk group: flushes do not depend on tablet size */
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &m};
    tsf_error err = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &err), &err);
    const char *names[NCOL] = {"s0", "s1", "s2", "s3"};
    const tsf_type types[NCOL] = {TSF_DOUBLE, TSF_DOUBLE, TSF_INT64, TSF_FLOAT};
    const size_t width[NCOL] = {8, 8, 8, 4};
    for (int k = 0; k < NCOL; k++) {
        tsf_column_schema c = {names[k], types[k], TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.g.d", &c, &err), &err);
    }
    tsf_tablet *tb = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.g.d", names, NCOL, tablet_rows, &tb, &err), &err);
    for (size_t r0 = 0; r0 < ROWS; r0 += tablet_rows) {
        size_t n = ROWS - r0 < tablet_rows ? ROWS - r0 : tablet_rows;
        CHECK_OK(tsf_tablet_set_times(tb, t + r0, n, &err), &err);
        for (int k = 0; k < NCOL; k++)
            CHECK_OK(tsf_tablet_set_column_ref(tb, (size_t)k, (const uint8_t *)cols[k] + r0 * width[k], NULL,
                                               n, &err),
                     &err);
        CHECK_OK(tsf_writer_write_tablet(w, tb, &err), &err);
    }
    tsf_tablet_free(tb);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    return m;
}

static void test_completed_pages(void)
{
    double *d0 = malloc(ROWS * 8), *d1 = malloc(ROWS * 8);
    int64_t *i2 = malloc(ROWS * 8), *t = malloc(ROWS * 8);
    float *f3 = malloc(ROWS * 4);
    make_data(d0, d1, i2, f3, t);
    const void *cols[NCOL] = {d0, d1, i2, f3};
    const size_t sizes[] = {5000, 3000, 1};
    const tsf_codec_path paths[] = {TSF_PATH_SCALAR, TSF_PATH_AUTO};
    for (int level = 0; level <= 1; level++) {
        /* reference: whole pages from 10000-row tablets; level 0 also on the per-value path */
        tsf_test_membuf ref = write_file(level, TSF_PATH_AUTO, 10000, 1, cols, t);
        CHECK(ref.len > ROWS * 4);
        if (level == 0) {
            tsf_test_membuf pv = write_file(0, TSF_PATH_PER_VALUE, 5000, 1, cols, t);
            CHECK_EQ_INT(pv.len, ref.len);
            if (pv.len == ref.len) CHECK_MEM(pv.p, ref.p, ref.len);
            free(pv.p);
        }
        for (size_t p = 0; p < 2; p++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                for (uint32_t th = 1; th <= 2; th++) { /* 2: columns encoded by the writer's workers */
                    tsf_test_membuf m = write_file(level, paths[p], sizes[s], th, cols, t);
                    CHECK_EQ_INT(m.len, ref.len);
                    if (m.len == ref.len) CHECK_MEM(m.p, ref.p, ref.len);
                    free(m.p);
                }
            }
        free(ref.p);
    }
    free(d0);
    free(d1);
    free(i2);
    free(t);
    free(f3);
}

int main(void)
{
    TSF_RUN(test_completed_pages);
    return tsf_test_finish();
}
