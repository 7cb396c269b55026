/*
 * test_checked.c - checked reads (src/read/check.c): damaged copies of files (one bit flipped in a page
 * header or a page body, every k-th byte of the pages, deterministic) read through queries (one thread and
 * the parallel scan, whole range and a middle range) and aggregates (every page decoded) with checked on
 * either fail or return exactly what the undamaged file holds, unless the damage is invisible to the
 * statistics (tsf_verify's data-area scan, the independent oracle, finds nothing but sum differences). The
 * same reads with checked off return wrong values silently for some copies, so the test has teeth.
 * Files: one written here (every numeric type, aligned and not, multi-page and single-page chunks,
 * UNCOMPRESSED so body flips reach the decoders) and Java golden files (tests/data).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "read/check.h"
#include "read/verify_scan.h"
#include "test.h"

/* ---- a growable dump of everything a read returned ---------------------------------------------- */

typedef struct dump {
    uint8_t *p;
    size_t n, cap;
} dump;

static void put(dump *d, const void *src, size_t n)
{
    if (!n) return; /* an empty value may come with a NULL pointer */
    if (d->n + n > d->cap) {
        size_t c = d->cap ? d->cap * 2 : 4096;
        while (c < d->n + n) c *= 2;
        d->p = realloc(d->p, c);
        d->cap = c;
    }
    memcpy(d->p + d->n, src, n);
    d->n += n;
}

static int same(const dump *a, const dump *b)
{
    return a->n == b->n && (!a->n || !memcmp(a->p, b->p, a->n));
}

/* Rows of a batch, one row at a time (batches of different thread counts may be cut differently). */
static void put_batch(dump *d, const tsf_batch *b)
{
    for (size_t i = 0; i < b->nrows; i++) {
        put(d, &b->device, sizeof b->device);
        put(d, &b->times[i], sizeof b->times[i]);
        for (size_t k = 0; k < b->ncolumns; k++) {
            const tsf_column_batch *c = &b->columns[k];
            uint8_t valid = (uint8_t)((c->validity[i >> 3] >> (i & 7)) & 1);
            put(d, &valid, 1);
            if (!valid || c->type == TSF_VECTOR) continue;
            size_t esz = c->type == TSF_TEXT || c->type == TSF_STRING || c->type == TSF_BLOB
                             ? 0
                             : tsf_type_size(c->type);
            if (esz) {
                put(d, (const uint8_t *)c->values + i * esz, esz);
            } else {
                const tsf_bytes *v = (const tsf_bytes *)c->values + i;
                put(d, &v->len, sizeof v->len);
                put(d, v->data, v->len);
            }
        }
    }
}

static tsf_status query_all(tsf_reader *r, int checked, unsigned threads, int64_t lo, int64_t hi, dump *d)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.checked = checked;
    o.threads = threads;
    o.time_min = lo;
    o.time_max = hi;
    tsf_query *q = NULL;
    tsf_error e;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    const tsf_batch *b;
    while (!st && !(st = tsf_query_next(q, &b, &e)) && b) put_batch(d, b);
    tsf_query_close(q);
    return st;
}

static void put_stats(dump *d, const tsf_stats *s)
{
    put(d, &s->count, sizeof s->count);
    put(d, &s->start_time, sizeof s->start_time);
    put(d, &s->end_time, sizeof s->end_time);
    double dv[5] = {s->min, s->max, s->first, s->last, s->sum};
    int64_t iv[4] = {s->min_i, s->max_i, s->first_i, s->last_i};
    put(d, dv, sizeof dv);
    put(d, iv, sizeof iv);
    const tsf_bytes *bv[4] = {&s->first_b, &s->last_b, &s->min_b, &s->max_b};
    for (int k = 0; k < 4; k++) {
        put(d, &bv[k]->len, sizeof bv[k]->len);
        put(d, bv[k]->data, bv[k]->len);
    }
}

/* Every series aggregated with every page decoded, in windows of `window` (0: one). */
static tsf_status agg_all(tsf_reader *r, int checked, int64_t window, dump *d)
{
    tsf_error e;
    for (size_t dev = 0; dev < tsf_reader_device_count(r); dev++) {
        tsf_device_info di;
        tsf_status st = tsf_reader_device(r, dev, &di, &e);
        if (st) return st;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_agg_options o;
            tsf_agg_options_init(&o);
            o.checked = checked;
            o.force_decode = 1;
            o.window = window;
            tsf_agg_result *res = NULL;
            if ((st = tsf_aggregate(r, dev, j, &o, &res, &e))) return st;
            for (size_t i = 0; i < tsf_agg_result_count(res); i++)
                put_stats(d, &tsf_agg_result_window(res, i)->stats);
            tsf_agg_result_free(res);
        }
    }
    return TSF_OK;
}

/* ---- the oracle: problems tsf_verify's data-area scan finds (sum differences left out) ----------- */

static void count_problem(void *ctx, uint64_t off, const char *msg, int warning)
{
    (void)off;
    if (!warning && !strstr(msg, " sum ")) ++*(size_t *)ctx;
}

static size_t visible_damage(const uint8_t *p, size_t n)
{
    size_t k = 0;
    tsf_vs_scan s;
    tsf_error e;
    if (tsf_vs_scan_init(&s, p, n, count_problem, &k, &e) == TSF_OK) tsf_vs_scan_run(&s, n, &e);
    tsf_vs_scan_free(&s);
    return k;
}

/* ---- mutants ------------------------------------------------------------------------------------ */

enum { R_FULL, R_PAR, R_RANGE, R_AGG, R_AGGW, NREADS };
static const char *const READ_NAME[NREADS] = {"query", "parallel query", "range query", "aggregate",
                                              "windowed aggregate"};

typedef struct campaign {
    size_t mutants, header_flips, visible;
    size_t silent_unchecked; /* unchecked read: different values, no error, damage visible */
    size_t refused;          /* checked reads that failed */
    size_t undetectable;     /* checked read: different values, oracle finds nothing */
    size_t escaped;          /* checked read: different values, no error, damage visible (must stay 0) */
} campaign;

static tsf_status do_read(tsf_reader *r, int what, int checked, int64_t lo, int64_t hi, int64_t win, dump *d)
{
    switch (what) {
    case R_FULL:
        return query_all(r, checked, 0, INT64_MIN, INT64_MAX, d);
    case R_PAR:
        return query_all(r, checked, 3, INT64_MIN, INT64_MAX, d);
    case R_RANGE:
        return query_all(r, checked, 0, lo, hi, d);
    case R_AGG:
        return agg_all(r, checked, 0, d);
    default:
        return agg_all(r, checked, win, d);
    }
}

/* Page header and body ranges of a file, from the format walker. */
typedef struct span {
    uint64_t lo, hi;
    int header;
} span;

static size_t page_spans(const uint8_t *p, size_t n, span *out, size_t cap)
{
    tsf_walker w;
    tsf_walk_item it;
    size_t k = 0;
    if (tsf_walk_init(&w, p, n, NULL)) return 0;
    while (k + 2 <= cap && tsf_walk_next(&w, &it, NULL) == TSF_OK && it.kind != TSF_WALK_END) {
        if (it.kind != TSF_WALK_PAGE) continue;
        out[k++] = (span){it.offset, it.body_offset, 1};
        out[k++] = (span){it.body_offset, it.body_offset + it.body_len, 0};
    }
    return k;
}

/* Flips bit (i % 8) of every `stride`-th page byte of file f (an undamaged file) and reads each copy. */
static void run_campaign(const char *name, const uint8_t *f, size_t n, size_t stride, int64_t lo, int64_t hi,
                         int64_t win, tsf_codec_path path, campaign *c)
{
    tsf_reader *r = NULL;
    tsf_error e;
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.path = path;
    CHECK_OK(tsf_reader_open_memory(&r, f, n, &ro, &e), &e);
    if (!r) return;
    dump ref[NREADS];
    memset(ref, 0, sizeof ref);
    for (int k = 0; k < NREADS; k++) CHECK_OK(do_read(r, k, 1, lo, hi, win, &ref[k]), NULL);
    tsf_reader_close(r);
    CHECK_EQ_INT(visible_damage(f, n), 0);
    static span sp[1 << 16];
    size_t ns = page_spans(f, n, sp, sizeof sp / sizeof sp[0]);
    CHECK(ns > 0);
    uint8_t *m = malloc(n);
    size_t at = 0;
    for (size_t s = 0; s < ns; s++) {
        for (uint64_t b = sp[s].lo > at ? sp[s].lo : at; b < sp[s].hi; b += stride, at = b) {
            memcpy(m, f, n);
            m[b] ^= (uint8_t)(1u << (b % 8));
            c->mutants++;
            c->header_flips += sp[s].header;
            size_t vis = visible_damage(m, n);
            c->visible += vis > 0;
            if (tsf_reader_open_memory(&r, m, n, &ro, &e)) continue;
            /* a header flip may move a page out of a range on purpose: pruning trusts statistics */
            for (int k = 0; k < NREADS; k++) {
                if (k == R_RANGE && sp[s].header) continue;
                dump d = {0}, u = {0};
                tsf_status st = do_read(r, k, 1, lo, hi, win, &d);
                if (st) {
                    c->refused++;
                } else if (!same(&d, &ref[k])) {
                    if (vis) {
                        c->escaped++;
                        fprintf(stderr, "  %s: byte %llu bit %llu: a checked %s returned other values\n",
                                name, (unsigned long long)b, (unsigned long long)(b % 8), READ_NAME[k]);
                    } else {
                        c->undetectable++;
                    }
                }
                if (vis && k == R_FULL && do_read(r, k, 0, lo, hi, win, &u) == TSF_OK && !same(&u, &ref[k]))
                    c->silent_unchecked++;
                free(d.p);
                free(u.p);
            }
            tsf_reader_close(r);
        }
    }
    free(m);
    for (int k = 0; k < NREADS; k++) free(ref[k].p);
}

static void report(const char *name, const campaign *c)
{
    printf("  %s: %zu copies (%zu header flips), %zu visibly damaged; unchecked query wrong without an "
           "error: %zu; "
           "checked reads refused: %zu, wrong with the damage invisible: %zu, wrong though visible: %zu\n",
           name, c->mutants, c->header_flips, c->visible, c->silent_unchecked, c->refused, c->undetectable,
           c->escaped);
}

/* ---- a file of our writer, UNCOMPRESSED ---------------------------------------------------------- */

enum { GEN_ROWS = 600 };

static const tsf_column_schema COLS[] = {
    {"i64", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"i32", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"dbl", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"flt", TSF_FLOAT, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"bool", TSF_BOOLEAN, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"str", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"few", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD}, /* single-page chunks */
};
enum { NCOLS = sizeof COLS / sizeof COLS[0] };

static int cell(size_t col, size_t i, tsf_value *v, char *tmp)
{
    memset(v, 0, sizeof *v);
    int64_t w = (int64_t)((i * 7919u) % 1000) - 500 + (int64_t)i * 3;
    switch (col) {
    case 0:
        v->v.i64 = w * 1000003;
        return 1;
    case 1:
        v->v.i32 = (int32_t)w;
        return i % 7 != 3;
    case 2:
        v->v.d = (double)w / 8.0;
        return 1;
    case 3:
        v->v.f = (float)w / 4.0f;
        return i % 5 != 2;
    case 4:
        v->v.b = (int)(i % 3 == 0);
        return 1;
    case 5:
        snprintf(tmp, 32, "s%03lld", (long long)(w % 997));
        v->v.bytes.data = (const uint8_t *)tmp;
        v->v.bytes.len = strlen(tmp);
        return i % 4 != 1;
    default:
        v->v.i64 = w;
        return i % 60 == 0;
    }
}

/* A writer into mb with pages of at most `points` points. */
static tsf_status open_writer(tsf_test_membuf *mb, uint32_t points, tsf_writer **w, tsf_error *e)
{
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, mb};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = points;
    return tsf_writer_open_callbacks(w, &cb, &o, e);
}

/* Closes w after writing went as st says; 1 on any failure. */
static int finish_writer(tsf_writer *w, tsf_status st, tsf_error *e)
{
    if (!st)
        st = tsf_writer_close(w, e);
    else
        tsf_writer_abort(w);
    if (st) fprintf(stderr, "writer: %s\n", e->message);
    return st != TSF_OK;
}

static int write_file(tsf_test_membuf *mb)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_writer(mb, 50, &w, &e);
    for (size_t k = 0; k < NCOLS && !st; k++) st = tsf_writer_register_series(w, "root.c.n", &COLS[k], &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.c.a", COLS, NCOLS, &e);
    for (size_t i = 0; i < GEN_ROWS && !st; i++) {
        const char *names[NCOLS];
        tsf_value vals[NCOLS];
        char tmp[NCOLS][32];
        size_t k = 0;
        for (size_t c = 0; c < NCOLS; c++)
            if (cell(c, i, &vals[k], tmp[k])) names[k++] = COLS[c].name;
        st = tsf_writer_write_row(w, "root.c.n", (int64_t)i * 10, names, vals, k, &e);
        for (size_t c = 0; c < NCOLS && !st; c++) {
            names[c] = COLS[c].name;
            vals[c].is_null = !cell(c, i, &vals[c], tmp[c]);
        }
        if (!st) st = tsf_writer_write_row(w, "root.c.a", 5 + (int64_t)i * 10, names, vals, NCOLS, &e);
        if (!st && i % 300 == 299) st = tsf_writer_flush(w, &e);
    }
    return finish_writer(w, st, &e);
}

static void test_writer_file_mutants(void)
{
    tsf_test_membuf mb = {0};
    if (write_file(&mb)) {
        tsf_test_failures++;
        return;
    }
    campaign c = {0};
    run_campaign("writer file", mb.p, mb.len, 13, 1234, 4321, 700, TSF_PATH_AUTO, &c);
    report("writer file", &c);
    CHECK_EQ_INT(c.escaped, 0);
    CHECK(c.silent_unchecked > 0); /* without the check, damage reads as values */
    CHECK(c.refused > 0);
    free(mb.p);
}

static void test_golden_mutants(void)
{
    const char *dir = tsf_test_data_dir();
    static const struct {
        const char *name;
        size_t stride;
    } files[] = {
        {"tree_nonaligned_mixed_uncompressed.tsfile", 487},
        {"tree_nonaligned_int64_ts2diff_uncompressed.tsfile", 97},
        {"tree_nonaligned_double_gorilla_uncompressed.tsfile", 101},
        {"tree_nonaligned_int32_rle_uncompressed.tsfile", 59},
        {"tree_nonaligned_float_plain_uncompressed.tsfile", 61},
        {"tree_nonaligned_string_plain_uncompressed.tsfile", 379},
        {"table_null_tags_uncompressed.tsfile", 5},
        {"tree_aligned_empty_value_pages_lz4.tsfile", 7},
    };
    campaign all = {0};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tsfile-java/%s", dir, files[i].name);
        size_t n = 0;
        uint8_t *f = tsf_test_read_file(path, &n);
        CHECK(f != NULL);
        if (!f) continue;
        campaign c = {0};
        /* a range through the middle of each file's times: pages cut at both ends */
        tsf_reader *r = NULL;
        tsf_error e;
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        if (tsf_reader_open_memory(&r, f, n, NULL, &e) == TSF_OK && tsf_reader_device_count(r)) {
            tsf_series_info si;
            if (tsf_reader_series(r, 0, 0, &si, &e) == TSF_OK && si.stats.count) {
                int64_t width = si.stats.end_time - si.stats.start_time;
                lo = si.stats.start_time + width / 3;
                hi = si.stats.end_time - width / 3;
            }
        }
        tsf_reader_close(r);
        run_campaign(files[i].name, f, n, files[i].stride, lo, hi, 1000, TSF_PATH_AUTO, &c);
        report(files[i].name, &c);
        all.silent_unchecked += c.silent_unchecked;
        all.escaped += c.escaped;
        all.refused += c.refused;
        free(f);
    }
    CHECK_EQ_INT(all.escaped, 0);
    CHECK(all.silent_unchecked > 0);
    CHECK(all.refused > 0);
}

/*
 * Pages that the TS_2DIFF decoder summarises as it decodes (tsf_ts2diff_decode_i64_sum): INT64 walks in
 * pages of 1000 points (8 blocks), small steps (the AVX-512 kernel folds them in 32-bit lanes) and steps of
 * 2^23 (its 64-bit loop), non-aligned and aligned, UNCOMPRESSED; damaged copies read on the scalar, AVX2
 * and AVX-512 paths either fail or return the undamaged values.
 */
enum { FUSED_ROWS = 3000 };
static const tsf_column_schema FCOLS[] = {
    {"walk", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"wide", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
};

static int write_fused_file(tsf_test_membuf *mb)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_writer(mb, 1000, &w, &e);
    for (size_t k = 0; k < 2 && !st; k++) st = tsf_writer_register_series(w, "root.f.n", &FCOLS[k], &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.f.a", FCOLS, 2, &e);
    uint64_t seed = 99;
    int64_t x = 5000, y = INT64_C(1) << 40;
    for (size_t i = 0; i < FUSED_ROWS && !st; i++) {
        x += (int64_t)(tsf_test_rand(&seed) % 201) - 100;
        y += (int64_t)(tsf_test_rand(&seed) % (UINT64_C(1) << 24)) - (INT64_C(1) << 23);
        const char *names[2] = {"walk", "wide"};
        tsf_value vals[2];
        memset(vals, 0, sizeof vals);
        vals[0].v.i64 = x;
        vals[1].v.i64 = y;
        st = tsf_writer_write_row(w, "root.f.n", (int64_t)i * 10, names, vals, 2, &e);
        if (!st) st = tsf_writer_write_row(w, "root.f.a", (int64_t)i * 10 + 3, names, vals, 2, &e);
    }
    return finish_writer(w, st, &e);
}

static void test_fused_pages(void)
{
    tsf_test_membuf mb = {0};
    if (write_fused_file(&mb)) {
        tsf_test_failures++;
        return;
    }
    const tsf_codec_path paths[] = {TSF_PATH_SCALAR, TSF_PATH_AVX2, TSF_PATH_AVX512};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        campaign c = {0};
        run_campaign("fused pages", mb.p, mb.len, 211, 7777, 22222, 900, paths[i], &c);
        report(tsf_codec_path_name(paths[i]), &c);
        CHECK_EQ_INT(c.escaped, 0);
        CHECK(c.refused > 0);
        CHECK(c.silent_unchecked > 0);
    }
    free(mb.p);
}

/* ---- the kernels: every path gives the portable loop's answer ----------------------------------- */

static void test_kernel_paths(void)
{
    uint64_t rng = 99;
    static int64_t v[1000];
    static double d[1000];
    for (int rep = 0; rep < 200; rep++) {
        size_t n = 1 + tsf_test_rand(&rng) % 1000;
        for (size_t i = 0; i < n; i++) {
            v[i] = (int64_t)(tsf_test_rand(&rng) >> (tsf_test_rand(&rng) % 64));
            if (rep % 2) v[i] = -v[i];
            d[i] = (double)(int64_t)(tsf_test_rand(&rng) % 2001 - 1000) / 3.0;
            if (rep % 5 == 1 && i % 97 == 5) d[i] = (double)NAN;
        }
        if (rep % 7 == 3) d[0] = (double)NAN; /* a leading NaN stays min and max */
        if (rep % 11 == 4) v[n - 1] = INT64_MIN;
        /* statistics of the values, as the writer computes them */
        tsf_fmt_stats si = {0}, sd = {0};
        si.type = TSF_INT64, sd.type = TSF_DOUBLE;
        si.count = sd.count = (uint32_t)n;
        si.start_time = sd.start_time = 1, si.end_time = sd.end_time = 2;
        si.v.i64.min = si.v.i64.max = si.v.i64.first = v[0];
        si.v.i64.last = v[n - 1];
        double s = (double)v[0];
        sd.v.f64.min = sd.v.f64.max = sd.v.f64.first = d[0];
        sd.v.f64.last = d[n - 1];
        for (size_t i = 1; i < n; i++) {
            if (v[i] < si.v.i64.min) si.v.i64.min = v[i];
            if (v[i] > si.v.i64.max) si.v.i64.max = v[i];
            s += (double)v[i];
            if (d[i] < sd.v.f64.min) sd.v.f64.min = d[i];
            if (d[i] > sd.v.f64.max) sd.v.f64.max = d[i];
        }
        si.v.i64.sum = s;
        char why[200];
        for (int level = 0; level <= tsf_rd_check_level(TSF_PATH_AVX512); level++) {
            CHECK_EQ_INT(tsf_rd_check_values(level, TSF_INT64, TSF_ENC_PLAIN, &si, 1, 2, v, n, NULL, why, sizeof why),
                         0);
            CHECK_EQ_INT(tsf_rd_check_values(level, TSF_DOUBLE, TSF_ENC_PLAIN, &sd, 1, 2, d, n, NULL, why, sizeof why),
                         0);
            /* one value out of place: a different min or max is found on every path */
            size_t k = tsf_test_rand(&rng) % n;
            int64_t keep = v[k];
            v[k] = si.v.i64.max == INT64_MAX ? INT64_MIN : si.v.i64.max + 1;
            if (v[k] == INT64_MIN && si.v.i64.min == INT64_MIN) v[k] = keep;
            if (v[k] != keep)
                CHECK_EQ_INT(
                    tsf_rd_check_values(level, TSF_INT64, TSF_ENC_PLAIN, &si, 1, 2, v, n, NULL, why, sizeof why), 1);
            v[k] = keep;
            /* times: ascending passes, one step back is found */
            static int64_t t[1000];
            for (size_t i = 0; i < n; i++) t[i] = (int64_t)i * 3 - 7;
            tsf_fmt_stats st = {0};
            st.type = TSF_VECTOR, st.count = (uint32_t)n, st.start_time = t[0], st.end_time = t[n - 1];
            CHECK_EQ_INT(tsf_rd_check_times(level, &st, t, n, NULL, why, sizeof why), 0);
            if (n > 2) {
                size_t j = 1 + tsf_test_rand(&rng) % (n - 2);
                t[j] = t[j - 1];
                CHECK_EQ_INT(tsf_rd_check_times(level, &st, t, n, NULL, why, sizeof why), 1);
            }
        }
    }
}

/* An exact INT64 sum is compared bit for bit; a sum the writer's doubles may have rounded is not compared. */
static void test_int64_sum_rule(void)
{
    int64_t v[3] = {5, -2, 9};
    tsf_fmt_stats s = {0};
    s.type = TSF_INT64, s.count = 3, s.start_time = 1, s.end_time = 3;
    s.v.i64.min = -2, s.v.i64.max = 9, s.v.i64.first = 5, s.v.i64.last = 9, s.v.i64.sum = 12;
    char why[200];
    CHECK_EQ_INT(tsf_rd_check_values(0, TSF_INT64, TSF_ENC_PLAIN, &s, 1, 3, v, 3, NULL, why, sizeof why), 0);
    s.v.i64.sum = 12.000000000001; /* inside verify's rounding tolerance, but this sum is exact */
    CHECK_EQ_INT(tsf_rd_check_values(0, TSF_INT64, TSF_ENC_PLAIN, &s, 1, 3, v, 3, NULL, why, sizeof why), 1);
    CHECK(strstr(why, "sum") != NULL);
    int64_t big[2] = {INT64_C(1) << 62, 1};
    s.v.i64.min = 1, s.v.i64.max = big[0], s.v.i64.first = big[0], s.v.i64.last = 1, s.count = 2;
    s.v.i64.sum = 0; /* cannot be checked: the writer's double sum rounds */
    CHECK_EQ_INT(tsf_rd_check_values(0, TSF_INT64, TSF_ENC_PLAIN, &s, 1, 3, big, 2, NULL, why, sizeof why), 0);
}

/* The reader's default and the per-call overrides. */
static void test_options(void)
{
    tsf_test_membuf mb = {0};
    if (write_file(&mb)) {
        tsf_test_failures++;
        return;
    }
    /* damage the first value of the first page body of root.c.n's i64 series: its statistics disagree */
    span sp[4];
    CHECK_EQ_INT(page_spans(mb.p, mb.len, sp, 4), 4);
    uint8_t *m = malloc(mb.len);
    memcpy(m, mb.p, mb.len);
    tsf_walker w;
    tsf_walk_item it;
    size_t flips = 0;
    tsf_walk_init(&w, mb.p, mb.len, NULL);
    while (tsf_walk_next(&w, &it, NULL) == TSF_OK && it.kind != TSF_WALK_END && !flips)
        if (it.kind == TSF_WALK_PAGE && it.chunk.data_type == TSF_INT64) {
            m[it.body_offset + it.body_len - 1] ^= 0x10; /* the last value's low bits */
            flips++;
        }
    CHECK_EQ_INT(flips, 1);
    tsf_error e;
    for (int rd = 0; rd <= 1; rd++) {
        tsf_reader_options ro;
        tsf_reader_options_init(&ro);
        CHECK_EQ_INT(ro.checked, 1);
        ro.checked = rd;
        tsf_reader *r = NULL;
        CHECK_OK(tsf_reader_open_memory(&r, m, mb.len, &ro, &e), &e);
        if (!r) continue;
        for (int q = -1; q <= 1; q++) {
            dump d = {0};
            int on = q < 0 ? rd : q;
            tsf_status st = query_all(r, q, 0, INT64_MIN, INT64_MAX, &d);
            CHECK_EQ_INT(st, on ? TSF_ECORRUPT : TSF_OK);
            free(d.p);
            d = (dump){0};
            CHECK_EQ_INT(agg_all(r, q, 0, &d), on ? TSF_ECORRUPT : TSF_OK);
            free(d.p);
        }
        tsf_query_options qo;
        tsf_query_options_init(&qo);
        CHECK_EQ_INT(qo.checked, -1);
        qo.checked = 2;
        tsf_query *q = NULL;
        CHECK_EQ_INT(tsf_query_open(r, &qo, &q, &e), TSF_EINVAL);
        tsf_reader_close(r);
    }
    /* the error names the page and what differs */
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, m, mb.len, NULL, &e), &e);
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    tsf_query *q = NULL;
    CHECK_OK(tsf_query_open(r, &qo, &q, &e), &e);
    const tsf_batch *b;
    tsf_status st;
    while (!(st = tsf_query_next(q, &b, &e)) && b) {
    }
    CHECK_EQ_INT(st, TSF_ECORRUPT);
    printf("  %s\n", e.message);
    CHECK(strstr(e.message, "page statistics at ") != NULL ||
          strstr(e.message, "ChunkMetadata statistics") != NULL);
    tsf_query_close(q);
    tsf_reader_close(r);
    free(m);
    free(mb.p);
}

int main(void)
{
    TSF_RUN(test_fused_pages);
    TSF_RUN(test_kernel_paths);
    TSF_RUN(test_int64_sum_rule);
    TSF_RUN(test_options);
    TSF_RUN(test_writer_file_mutants);
    TSF_RUN(test_golden_mutants);
    return tsf_test_finish();
}
