/*
 * Column groups of the non-aligned tablet path (tsf_wcol_append_group): four columns of one numeric
 * type without nulls get their page statistics from one interleaved pass (tsf_wstats_update4).
 * A file written with whole tablets must be byte-identical to the same rows written one column per
 * tablet (no groups), for every numeric type, NaN / -0.0 / +0.0 values where the comparison order
 * matters, pages cut inside tablets, columns with nulls in some tablets (their pending pages then
 * differ in length, so groups fall back), and 1 or 3 threads, with the portable statistics loop
 * (TSF_PATH_SCALAR) and its SIMD twin. Aligned devices: series statistics equal those computed in
 * the test page by page.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef tsf_test_membuf membuf;

enum { NC = 11, ROWS = 9300, TAB = 3700, PAGE = 1000 };

static const tsf_type TYPES[NC] = {TSF_DOUBLE, TSF_DOUBLE, TSF_DOUBLE, TSF_DOUBLE, TSF_DOUBLE, TSF_INT64,
                                   TSF_INT64,  TSF_INT64,  TSF_INT64,  TSF_FLOAT,  TSF_INT32};

static double dval(int k, size_t r)
{
    uint64_t h = (r + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)k * 0xBF58476D1CE4E5B9ull;
    if (r % 1000 == 0 && k == 1) return NAN;             /* first value of a page: min/max stay NaN */
    if (r % 97 == 5) return r % 1000 < 500 ? -0.0 : 0.0; /* first zero of a page -0, last +0 */
    double d = (double)(int64_t)(h >> 40) / 1024.0 - 8000.0;
    if (k == 2) return r % 1000 == 500 ? NAN : fabs(d); /* min is a signed zero: the first one wins */
    return d;
}

/* Column 3 has nulls in the second tablet only (then its pending page is shorter than those of 0-2). */
static int present(int k, size_t r)
{
    return !(k == 3 && r >= TAB && r < 2 * TAB && r % 3 == 0);
}

static void fill(int k, size_t r0, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        double d = dval(k, r0 + i);
        switch (TYPES[k]) {
        case TSF_DOUBLE:
            ((double *)out)[i] = d;
            break;
        case TSF_FLOAT:
            ((float *)out)[i] = (float)d;
            break;
        case TSF_INT64:
            ((int64_t *)out)[i] = isnan(d) ? 7 : (int64_t)(d * 1000);
            break;
        default:
            ((int32_t *)out)[i] = isnan(d) ? 7 : (int32_t)d;
            break;
        }
    }
}

static void write_file(membuf *m, int per_column, int threads, int aligned, tsf_codec_path path)
{
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, m};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = PAGE;
    o.threads = (uint32_t)threads;
    o.path = path; /* SCALAR: the portable statistics loop; AUTO: its SIMD twin where there is one */
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
    char names[NC][8];
    tsf_column_schema schema[NC];
    for (int k = 0; k < NC; k++) {
        names[k][0] = 'c';
        names[k][1] = (char)('a' + k);
        names[k][2] = 0;
        tsf_encoding enc =
            TYPES[k] == TSF_DOUBLE || TYPES[k] == TSF_FLOAT ? TSF_ENC_GORILLA : TSF_ENC_TS_2DIFF;
        tsf_column_schema s = {names[k], TYPES[k], enc, TSF_LZ4, TSF_COLUMN_FIELD};
        if (!aligned) CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &s, &e), &e);
        schema[k] = s;
    }
    if (aligned) CHECK_OK(tsf_writer_register_aligned(w, "root.sg.d", schema, NC, &e), &e);
    int64_t *times = malloc(TAB * sizeof *times);
    uint8_t *vals = malloc(TAB * 8), valid[TAB / 8 + 1];
    for (size_t r0 = 0; r0 < ROWS; r0 += TAB) {
        size_t n = ROWS - r0 < TAB ? ROWS - r0 : TAB;
        for (size_t i = 0; i < n; i++) times[i] = 5000 + (int64_t)(r0 + i) * 3;
        tsf_tablet *t = NULL;
        if (!per_column) CHECK_OK(tsf_tablet_new(w, "root.sg.d", NULL, 0, TAB, &t, &e), &e);
        if (t) CHECK_OK(tsf_tablet_set_times(t, times, n, &e), &e);
        for (int k = 0; k < NC; k++) {
            const char *one = names[k];
            if (per_column) {
                CHECK_OK(tsf_tablet_new(w, "root.sg.d", &one, 1, TAB, &t, &e), &e);
                CHECK_OK(tsf_tablet_set_times(t, times, n, &e), &e);
            }
            memset(valid, 0, sizeof valid);
            for (size_t i = 0; i < n; i++)
                if (present(k, r0 + i)) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
            fill(k, r0, n, vals);
            CHECK_OK(tsf_tablet_set_column(t, per_column ? 0 : (size_t)k, vals, valid, n, &e), &e);
            if (per_column) {
                CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
                tsf_tablet_free(t);
                t = NULL;
            }
        }
        if (!per_column) {
            CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
            tsf_tablet_free(t);
        }
    }
    free(times);
    free(vals);
    CHECK_OK(tsf_writer_close(w, &e), &e);
}

static void test_groups_same_bytes(void)
{
    membuf single = {0};
    write_file(&single, 1, 1, 0, TSF_PATH_SCALAR);
    CHECK(single.len > 1000);
    for (int threads = 1; threads <= 3; threads += 2)
        for (int scalar = 0; scalar < 2; scalar++) {
            membuf whole = {0};
            write_file(&whole, 0, threads, 0, scalar ? TSF_PATH_SCALAR : TSF_PATH_AUTO);
            CHECK(whole.len == single.len && !memcmp(whole.p, single.p, single.len));
            free(whole.p);
        }
    free(single.p);
}

/* Java Statistics order: min/max by < and >, sum value by value in a page, page sums merged. */
typedef struct dstat {
    uint64_t n;
    double min, max, first, last, sum;
} dstat;

static void dstat_merge(dstat *dst, const dstat *src)
{
    if (!src->n) return;
    if (!dst->n) {
        *dst = *src;
        return;
    }
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    dst->sum += src->sum;
    dst->last = src->last;
    dst->n += src->n;
}

/* Aligned device: the series statistics of the DOUBLE columns (0-3 share a pass, 4 alone) equal
 * those computed here page by page (pages of PAGE rows). */
static void test_aligned_group_stats(void)
{
    for (int run = 0; run < 4; run++) {
        int threads = 1 + (run & 1);
        membuf m = {0};
        write_file(&m, 0, threads, 1, run & 2 ? TSF_PATH_SCALAR : TSF_PATH_AUTO);
        tsf_error e = {0};
        tsf_reader *r = NULL;
        CHECK_OK(tsf_reader_open_memory(&r, m.p, m.len, NULL, &e), &e);
        size_t di = 0;
        CHECK_OK(tsf_reader_find_device(r, "root.sg.d", &di, &e), &e);
        for (int k = 0; k < 5 && r; k++) {
            dstat series = {0};
            for (size_t p0 = 0; p0 < ROWS; p0 += PAGE) {
                dstat pg = {0};
                for (size_t i = p0; i < p0 + PAGE && i < ROWS; i++) {
                    if (!present(k, i)) continue;
                    double v = dval(k, i);
                    if (!pg.n) {
                        pg.min = pg.max = pg.first = pg.sum = v;
                    } else {
                        if (v < pg.min) pg.min = v;
                        if (v > pg.max) pg.max = v;
                        pg.sum += v;
                    }
                    pg.last = v;
                    pg.n++;
                }
                dstat_merge(&series, &pg);
            }
            char name[3] = {'c', (char)('a' + k), 0};
            size_t j = 0;
            tsf_series_info si;
            CHECK_OK(tsf_reader_find_series(r, di, name, &j, &e), &e);
            CHECK_OK(tsf_reader_series(r, di, j, &si, &e), &e);
            CHECK(si.stats.count == series.n);
            CHECK_MEM(&si.stats.min, &series.min, 8);
            CHECK_MEM(&si.stats.max, &series.max, 8);
            CHECK_MEM(&si.stats.first, &series.first, 8);
            CHECK_MEM(&si.stats.last, &series.last, 8);
            CHECK_MEM(&si.stats.sum, &series.sum, 8);
        }
        tsf_reader_close(r);
        free(m.p);
    }
}

int main(void)
{
    TSF_RUN(test_groups_same_bytes);
    TSF_RUN(test_aligned_group_stats);
    return tsf_test_finish();
}
