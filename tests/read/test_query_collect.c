/*
 * test_query_collect.c - tsf_query_collect gathers exactly the rows tsf_query_next returns (times, devices,
 * values with zero at nulls, presence) into the caller's arrays: table and tree devices, aligned and
 * non-aligned (one column, decoded in place; merged columns, copied), nulls and absent columns, time ranges
 * cutting pages, small batches, arrays too small (grown between calls, as a caller does), filters, two
 * threads. Pages that can be decoded in place are (cells_in_place); the arrays are sized exactly, so a
 * decode that writes past its rows shows under ASan. Misuse and a type mismatch are errors.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#define NDEV 3
#define NROWS 1000

static char g_dir[] = "/tmp/tsf_collect_XXXXXX";
static char g_table[256], g_tree[256];

/* A writer sealing pages at 100 rows. */
static tsf_status open_writer(const char *path, tsf_writer **w, tsf_error *e)
{
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 100;
    return tsf_writer_open(w, path, &o, e);
}

/* Closes a writer after rows were written with status st (aborts it on failure); 0 or -1. */
static int close_writer(tsf_writer *w, tsf_status st, const char *path, tsf_error *e)
{
    if (!st) return tsf_writer_close(w, e) ? -1 : 0;
    fprintf(stderr, "write %s: %s\n", path, e->message);
    tsf_writer_abort(w);
    return -1;
}

/* table t: tag dev; a INT64 and b DOUBLE without nulls, c INT32 with nulls, d BOOLEAN null in dev 2's rows
 * (no value chunk there: absent). Pages of 100 rows. */
static int write_table(const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_writer(path, &w, &e);
    tsf_column_schema cols[5] = {{"dev", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"a", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"b", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"c", TSF_INT32, TSF_ENC_RLE, TSF_SNAPPY, TSF_COLUMN_FIELD},
                                 {"d", TSF_BOOLEAN, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "t", cols, 5, &e);
    for (int dev = 0; dev < NDEV && !st; dev++) {
        char tag[4] = {'d', (char)('0' + dev), 0};
        for (size_t i = 0; i < NROWS && !st; i++) {
            const char *names[5] = {"dev", "a", "b", "c", "d"};
            tsf_value v[5];
            memset(v, 0, sizeof v);
            v[0].v.bytes.data = (const uint8_t *)tag;
            v[0].v.bytes.len = 2;
            v[1].v.i64 = (int64_t)(i * i) * (dev + 1) - 4000;
            v[2].v.d = (double)i * 0.25 - dev;
            v[3].v.i32 = (int32_t)i * 3 - dev;
            v[3].is_null = i % 13 == 5;
            v[4].v.b = (i / 3 + (size_t)dev) % 2;
            v[4].is_null = dev == 2;
            st = tsf_writer_write_row(w, "t", 1000 + (int64_t)i * 10 + dev, names, v, 5, &e);
        }
    }
    return close_writer(w, st, path, &e);
}

/* tree: root.g.d0 non-aligned s1 INT64 (every row), s2 DOUBLE (odd rows); root.g.a0 aligned s1 INT64. */
static int write_tree(const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_writer(path, &w, &e);
    tsf_column_schema s1 = {"s1", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema s2 = {"s2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    if (!st) st = tsf_writer_register_series(w, "root.g.d0", &s1, &e);
    if (!st) st = tsf_writer_register_series(w, "root.g.d0", &s2, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.g.a0", &s1, 1, &e);
    for (size_t i = 0; i < NROWS && !st; i++) {
        const char *n[2] = {"s1", "s2"};
        tsf_value v[2];
        memset(v, 0, sizeof v);
        v[0].v.i64 = (int64_t)i * 7 - 300;
        v[1].v.d = (double)i / 3;
        st = tsf_writer_write_row(w, "root.g.d0", (int64_t)i * 5, n, v, i % 2 ? 2 : 1, &e);
        if (!st) st = tsf_writer_write_row(w, "root.g.a0", (int64_t)i * 5 + 1, n, v, 1, &e);
    }
    return close_writer(w, st, path, &e);
}

/* Rows gathered column-wise: the reference (from tsf_query_next) and tsf_query_collect's arrays. */
typedef struct rows {
    size_t n, cap, ncols;
    int64_t *t;
    int32_t *dev;
    tsf_collect_column col[4];
} rows;

static void rows_init(rows *r, size_t cap, size_t ncols, const tsf_type *types)
{
    memset(r, 0, sizeof *r);
    r->cap = cap;
    r->ncols = ncols;
    r->t = malloc(cap * sizeof *r->t);
    r->dev = malloc(cap * sizeof *r->dev);
    for (size_t i = 0; i < ncols; i++) {
        r->col[i].type = types[i];
        r->col[i].values = malloc(cap * tsf_type_size(types[i]));
        r->col[i].present = malloc(cap);
        r->col[i].first_null = SIZE_MAX;
    }
}

/* The caller's growth between calls: the arrays to cap rows, rows [0, n) kept. */
static void rows_grow(rows *r, size_t cap)
{
    r->t = realloc(r->t, cap * sizeof *r->t);
    r->dev = realloc(r->dev, cap * sizeof *r->dev);
    for (size_t i = 0; i < r->ncols; i++) {
        r->col[i].values = realloc(r->col[i].values, cap * tsf_type_size(r->col[i].type));
        r->col[i].present = realloc(r->col[i].present, cap);
    }
    r->cap = cap;
}

static void rows_free(rows *r)
{
    free(r->t);
    free(r->dev);
    for (size_t i = 0; i < r->ncols; i++) {
        free(r->col[i].values);
        free(r->col[i].present);
    }
}

/* The reference: every batch of tsf_query_next appended by hand (present filled for every row). */
static tsf_status reference(tsf_reader *rd, const tsf_query_options *o, rows *r)
{
    tsf_error e = {0};
    tsf_query *q = NULL;
    tsf_status st = tsf_query_open(rd, o, &q, &e);
    const tsf_batch *b;
    while (!st && !(st = tsf_query_next(q, &b, &e)) && b) {
        if (r->n + b->nrows > r->cap) rows_grow(r, 2 * (r->n + b->nrows));
        for (size_t j = 0; j < b->nrows; j++) {
            r->t[r->n + j] = b->times[j];
            r->dev[r->n + j] = (int32_t)b->device;
            for (size_t i = 0; i < r->ncols; i++) {
                const tsf_column_batch *cb = &b->columns[i];
                size_t esz = tsf_type_size(r->col[i].type);
                uint8_t *dst = (uint8_t *)r->col[i].values + (r->n + j) * esz;
                int on = cb->type != TSF_VECTOR && (cb->validity[j >> 3] >> (j & 7) & 1);
                r->col[i].present[r->n + j] = (uint8_t)on;
                if (on)
                    memcpy(dst, (const uint8_t *)cb->values + j * esz, esz);
                else
                    memset(dst, 0, esz);
            }
        }
        r->n += b->nrows;
    }
    tsf_query_close(q);
    return st;
}

/* tsf_query_collect into arrays of `cap` rows, grown (doubled) whenever they fill. */
static tsf_status collect(tsf_reader *rd, const tsf_query_options *o, rows *r, size_t cap, unsigned width,
                          tsf_collect *out)
{
    tsf_error e = {0};
    tsf_query *q = NULL;
    tsf_status st = tsf_query_open(rd, o, &q, &e);
    tsf_collect c;
    tsf_collect_init(&c);
    int32_t codes[4] = {7, -3, 1000, 5}; /* the devices' codes, stored in `width` bytes */
    c.device_codes = width == 4 ? NULL : codes;
    c.device_width = width;
    if (cap != r->cap) rows_grow(r, cap);
    while (!st) {
        c.cap = r->cap;
        c.times = r->t;
        c.devices = r->dev;
        c.ncolumns = r->ncols;
        c.columns = r->col;
        st = tsf_query_collect(q, &c, &e);
        r->n = c.nrows;
        if (st || c.done) break;
        rows_grow(r, r->cap * 2 + 1);
    }
    if (st) fprintf(stderr, "collect: %s\n", e.message);
    tsf_query_close(q);
    for (size_t i = 0; i < r->ncols; i++) /* what the caller does: rows before the first null are present */
        if (r->col[i].first_null != SIZE_MAX) memset(r->col[i].present, 1, r->col[i].first_null);
    *out = c;
    return st;
}

static int rows_equal(const rows *a, const rows *b, int any_null[4])
{
    if (a->n != b->n) {
        fprintf(stderr, "rows %zu vs %zu\n", a->n, b->n);
        return 0;
    }
    if (a->n && (memcmp(a->t, b->t, a->n * sizeof *a->t) || memcmp(a->dev, b->dev, a->n * sizeof *a->dev)))
        return 0;
    for (size_t i = 0; i < a->ncols; i++) {
        size_t esz = tsf_type_size(a->col[i].type);
        if (a->n && memcmp(a->col[i].values, b->col[i].values, a->n * esz)) {
            fprintf(stderr, "values of column %zu differ\n", i);
            return 0;
        }
        any_null[i] = a->n && memchr(a->col[i].present, 0, a->n) != NULL;
        if (b->col[i].first_null == SIZE_MAX) { /* never written: every row must be present */
            if (any_null[i]) return 0;
        } else if (memcmp(a->col[i].present, b->col[i].present, a->n)) {
            fprintf(stderr, "presence of column %zu differs\n", i);
            return 0;
        }
    }
    return 1;
}

typedef struct ccase {
    int tree;
    const char *cols[4];
    size_t ncols;
    tsf_type types[4];
    int64_t lo, hi;
    size_t batch;
    const char *where;
    unsigned threads;
} ccase;

static const ccase CASES[] = {
    {0, {"a", "b", "c", "d"}, 4, {TSF_INT64, TSF_DOUBLE, TSF_INT32, TSF_BOOLEAN}, INT64_MIN, INT64_MAX, 0, NULL, 1},
    {0, {"b", "a"}, 2, {TSF_DOUBLE, TSF_INT64}, 1555, 8333, 0, NULL, 1},
    {0, {"a", "c", "d"}, 3, {TSF_INT64, TSF_INT32, TSF_BOOLEAN}, INT64_MIN, INT64_MAX, 37, NULL, 1},
    {0, {"a", "b"}, 2, {TSF_INT64, TSF_DOUBLE}, 2000, INT64_MAX, 0, "a > 100000", 1},
    {0, {"a", "b", "c", "d"}, 4, {TSF_INT64, TSF_DOUBLE, TSF_INT32, TSF_BOOLEAN}, 1200, 9000, 0, NULL, 2},
    {0, {"zz", "a"}, 2, {TSF_INT32, TSF_INT64}, INT64_MIN, INT64_MAX, 0, NULL, 1},
    {1, {"s1"}, 1, {TSF_INT64}, INT64_MIN, INT64_MAX, 0, NULL, 1},
    {1, {"s1"}, 1, {TSF_INT64}, 777, 3333, 41, NULL, 1},
    {1, {"s1", "s2"}, 2, {TSF_INT64, TSF_DOUBLE}, INT64_MIN, INT64_MAX, 0, NULL, 1},
    {1, {"s2", "s1"}, 2, {TSF_DOUBLE, TSF_INT64}, 100, 4000, 64, NULL, 2},
};

static void test_cases(void)
{
    for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
        const ccase *k = &CASES[ci];
        tsf_reader *rd = NULL;
        tsf_error e = {0};
        CHECK_OK(tsf_reader_open(&rd, k->tree ? g_tree : g_table, NULL, &e), &e);
        tsf_filter *f = NULL;
        if (k->where) CHECK_OK(tsf_filter_parse(&f, k->where, &e), &e);
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.columns = k->cols;
        o.ncolumns = k->ncols;
        o.time_min = k->lo;
        o.time_max = k->hi;
        if (k->batch) o.batch_size = k->batch;
        o.where = f;
        o.threads = k->threads;
        rows ref;
        rows_init(&ref, 16, k->ncols, k->types);
        CHECK_OK(reference(rd, &o, &ref), &e);
        CHECK(ref.n > 0);
        /* arrays of exactly the rows, of too few rows (grown on the way), of one row */
        size_t caps[3] = {ref.n, ref.n / 3 + 1, 1};
        for (int m = 0; m < 3; m++) {
            rows got;
            rows_init(&got, caps[m], k->ncols, k->types);
            tsf_collect c;
            unsigned width = m == 0 ? 4 : m == 1 ? 2 : 1;
            CHECK_OK(collect(rd, &o, &got, caps[m], width, &c), &e);
            if (width != 4) { /* the codes of the devices, then back to device indexes for the comparison */
                int32_t codes[4] = {7, -3, 1000, 5};
                int32_t *idx = malloc(got.n * sizeof *idx + 1);
                for (size_t j = 0; j < got.n; j++) {
                    int32_t want = codes[ref.dev[j]];
                    int32_t have = width == 2 ? ((int16_t *)got.dev)[j] : ((int8_t *)got.dev)[j];
                    CHECK(have == (width == 2 ? (int16_t)want : (int8_t)want));
                    idx[j] = ref.dev[j];
                }
                memcpy(got.dev, idx, got.n * sizeof *idx);
                free(idx);
            }
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (size_t j = 0; j < ref.n; j++) {
                if (ref.t[j] < lo) lo = ref.t[j];
                if (ref.t[j] > hi) hi = ref.t[j];
            }
            CHECK(c.time_min == lo && c.time_max == hi);
            int any_null[4] = {0};
            if (!rows_equal(&ref, &got, any_null)) {
                fprintf(stderr, "case %zu, arrays of %zu rows: collected rows differ from tsf_query_next's\n", ci,
                        caps[m]);
                CHECK(0);
            }
            CHECK(c.cells_in_place + c.cells_copied == ref.n * (1 + k->ncols));
            /* whole pages of a column without nulls go in place when the arrays have room, with one thread
             * and no filter: here at least one cell of most rows (the times) */
            int in_place = m == 0 && k->threads == 1 && !k->where;
            if (in_place && k->lo == INT64_MIN) CHECK(c.cells_in_place >= ref.n);
            if (in_place && k->lo != INT64_MIN) CHECK(c.cells_in_place > 0);
            if (k->where || k->threads > 1) CHECK(c.cells_in_place == 0);
            rows_free(&got);
        }
        rows_free(&ref);
        tsf_filter_free(f);
        tsf_reader_close(rd);
    }
}

static void test_errors(void)
{
    tsf_reader *rd = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open(&rd, g_table, NULL, &e), &e);
    tsf_query_options o;
    tsf_query_options_init(&o);
    tsf_query *q = NULL;
    int64_t t[8];
    double v[8];
    uint8_t p[8];
    tsf_collect_column col = {TSF_DOUBLE, v, p, SIZE_MAX};
    tsf_collect c;
    tsf_collect_init(&c);
    c.cap = 8;
    c.times = t;
    c.ncolumns = 1;
    c.columns = &col;
    /* columns not named */
    CHECK_OK(tsf_query_open(rd, &o, &q, &e), &e);
    CHECK_EQ_INT(tsf_query_collect(q, &c, &e), TSF_EINVAL);
    tsf_query_close(q);
    /* a: INT64 into a DOUBLE array */
    const char *names[1] = {"a"};
    o.columns = names;
    o.ncolumns = 1;
    CHECK_OK(tsf_query_open(rd, &o, &q, &e), &e);
    CHECK_EQ_INT(tsf_query_collect(q, &c, &e), TSF_ENOTSUP);
    CHECK(strstr(e.message, "INT64") != NULL);
    /* no fixed width */
    col.type = TSF_STRING;
    CHECK_EQ_INT(tsf_query_collect(q, &c, &e), TSF_ENOTSUP);
    col.type = TSF_INT64;
    c.struct_size = 8;
    CHECK_EQ_INT(tsf_query_collect(q, &c, &e), TSF_EINVAL);
    c.struct_size = sizeof c;
    c.nrows = 9;
    CHECK_EQ_INT(tsf_query_collect(q, &c, &e), TSF_EINVAL);
    tsf_query_close(q);
    tsf_reader_close(rd);
}

int main(void)
{
    if (!mkdtemp(g_dir)) return 1;
    snprintf(g_table, sizeof g_table, "%s/table.tsfile", g_dir);
    snprintf(g_tree, sizeof g_tree, "%s/tree.tsfile", g_dir);
    if (write_table(g_table) || write_tree(g_tree)) return 1;
    TSF_RUN(test_cases);
    TSF_RUN(test_errors);
    unlink(g_table);
    unlink(g_tree);
    rmdir(g_dir);
    return tsf_test_finish();
}
