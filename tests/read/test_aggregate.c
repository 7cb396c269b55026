/*
 * test_aggregate.c - tsf_aggregate and tsf_last_value. For every series of files our
 * writer makes (multi-page, multi-chunk, aligned with nulls, table model) and of every golden file:
 *   - the statistics path and force_decode give bit-identical windows;
 *   - both equal an independent reference computed here from the values of a plain query (windows by
 *     128-bit arithmetic; sums: integers exact, doubles within rounding of a flat accumulation);
 *   - over the whole range, the statistics path equals the series' TimeseriesMetadata statistics bit for
 *     bit (the Java writer's own statistics, for golden files) where they are trusted;
 *   - info counters show statistics were used; empty windows are omitted; ranges outside data are empty.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "../format/golden_csv.h"
#include "gen_file.h"
#include "test.h"

typedef struct pt {
    int64_t t;
    tsf_value v;
} pt;

typedef struct pts {
    pt *p;
    size_t n, cap;
} pts;

static void pts_free(pts *s, tsf_type type)
{
    if (type == TSF_TEXT || type == TSF_STRING || type == TSF_BLOB)
        for (size_t i = 0; i < s->n; i++) free((void *)s->p[i].v.v.bytes.data);
    free(s->p);
    memset(s, 0, sizeof *s);
}

/* Non-null points of one series through a plain query (the independent source of truth). */
static int load_points(tsf_reader *r, size_t dev, const char *name, pts *out)
{
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.devices = &dev;
    qo.ndevices = 1;
    qo.columns = &name;
    qo.ncolumns = 1;
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    tsf_status st = tsf_query_open(r, &qo, &q, &e);
    memset(out, 0, sizeof *out);
    while (!st && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        const tsf_column_batch *c = &b->columns[0];
        for (size_t i = 0; i < b->nrows; i++) {
            if (!((c->validity[i >> 3] >> (i & 7)) & 1)) continue;
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 256;
                out->p = realloc(out->p, out->cap * sizeof *out->p);
            }
            pt *p = &out->p[out->n++];
            memset(p, 0, sizeof *p);
            p->t = b->times[i];
            switch (c->type) {
            case TSF_BOOLEAN:
                p->v.v.b = ((const uint8_t *)c->values)[i];
                break;
            case TSF_INT32:
            case TSF_DATE:
                p->v.v.i32 = ((const int32_t *)c->values)[i];
                break;
            case TSF_INT64:
            case TSF_TIMESTAMP:
                p->v.v.i64 = ((const int64_t *)c->values)[i];
                break;
            case TSF_FLOAT:
                p->v.v.f = ((const float *)c->values)[i];
                break;
            case TSF_DOUBLE:
                p->v.v.d = ((const double *)c->values)[i];
                break;
            default: {
                tsf_bytes s = ((const tsf_bytes *)c->values)[i];
                uint8_t *d = malloc(s.len + 1);
                if (s.len) memcpy(d, s.data, s.len);
                p->v.v.bytes.data = d;
                p->v.v.bytes.len = s.len;
            }
            }
        }
    }
    tsf_query_close(q);
    if (st) fprintf(stderr, "query: %s %s\n", tsf_status_name(st), e.message);
    return st == TSF_OK ? 0 : -1;
}

/* ---- reference ------------------------------------------------------------------------------ */

typedef struct ref_win {
    int64_t start, end;
    uint64_t count;
    int64_t t0, t1;
    const pt *first, *last, *min, *max; /* min/max by Java's rule: the first, replaced on strict < / > */
    double sum, abs;                    /* flat double sum and sum of magnitudes (for the tolerance) */
    int64_t isum;
} ref_win;

static double num(tsf_type type, const tsf_value *v)
{
    switch (type) {
    case TSF_BOOLEAN:
        return v->v.b != 0;
    case TSF_INT32:
    case TSF_DATE:
        return v->v.i32;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return (double)v->v.i64;
    case TSF_FLOAT:
        return v->v.f;
    case TSF_DOUBLE:
        return v->v.d;
    default:
        return 0;
    }
}

static int64_t inum(tsf_type type, const tsf_value *v)
{
    switch (type) {
    case TSF_BOOLEAN:
        return v->v.b != 0;
    case TSF_INT32:
    case TSF_DATE:
        return v->v.i32;
    default:
        return v->v.i64;
    }
}

static int bless(tsf_bytes x, tsf_bytes y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.data, y.data, n) : 0;
    return c < 0 || (c == 0 && x.len < y.len);
}

/* a < b in the type's order (doubles: IEEE <, so NaN never compares less). */
static int less(tsf_type type, const tsf_value *a, const tsf_value *b)
{
    if (type == TSF_FLOAT || type == TSF_DOUBLE) return num(type, a) < num(type, b);
    if (type == TSF_STRING) return bless(a->v.bytes, b->v.bytes);
    return inum(type, a) < inum(type, b);
}

static int64_t clamp128(__int128 x)
{
    return x < INT64_MIN ? INT64_MIN : x > INT64_MAX ? INT64_MAX : (int64_t)x;
}

/* Windows of the points inside the range, computed flat from the values. */
static size_t reference(const pts *s, tsf_type type, const tsf_agg_options *o, ref_win **out)
{
    ref_win *w = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n; i++) {
        const pt *p = &s->p[i];
        if (p->t < o->time_min || p->t > o->time_max) continue;
        int64_t start, end;
        if (!o->window) {
            start = o->time_min;
            end = o->time_max == INT64_MAX ? INT64_MAX : o->time_max + 1;
        } else {
            __int128 d = (__int128)p->t - o->window_origin, k = d / o->window;
            if (d % o->window < 0) k--;
            start = clamp128(o->window_origin + k * o->window);
            end = clamp128(o->window_origin + (k + 1) * o->window);
        }
        if (!n || w[n - 1].start != start) {
            if (n == cap) w = realloc(w, (cap = cap ? cap * 2 : 16) * sizeof *w);
            memset(&w[n], 0, sizeof w[n]);
            w[n].start = start;
            w[n].end = end;
            w[n].t0 = p->t;
            w[n].first = w[n].min = w[n].max = p;
            n++;
        }
        ref_win *x = &w[n - 1];
        if (x->count) {
            if (less(type, &p->v, &x->min->v)) x->min = p;
            if (less(type, &x->max->v, &p->v)) x->max = p;
            x->sum += num(type, &p->v);
        } else {
            x->sum = num(type, &p->v);
        }
        x->abs += fabs(num(type, &p->v));
        if (type == TSF_BOOLEAN || type == TSF_INT32 || type == TSF_DATE) x->isum += inum(type, &p->v);
        x->count++;
        x->t1 = p->t;
        x->last = p;
    }
    *out = w;
    return n;
}

/* ---- comparisons ---------------------------------------------------------------------------- */

static int same_d(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int same_b(tsf_bytes a, tsf_bytes b)
{
    return a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
}

/* Bit-identical statistics (as far as the type defines them). */
static int same_stats(const tsf_stats *a, const tsf_stats *b)
{
    if (a->type != b->type || a->count != b->count || a->start_time != b->start_time ||
        a->end_time != b->end_time || a->has_values != b->has_values)
        return 0;
    if (!a->count) return 1;
    switch (a->type) {
    case TSF_TEXT:
    case TSF_BLOB:
        return same_b(a->first_b, b->first_b) && same_b(a->last_b, b->last_b);
    case TSF_STRING:
        return same_b(a->first_b, b->first_b) && same_b(a->last_b, b->last_b) && same_b(a->min_b, b->min_b) &&
               same_b(a->max_b, b->max_b);
    default:
        return same_d(a->min, b->min) && same_d(a->max, b->max) && same_d(a->first, b->first) &&
               same_d(a->last, b->last) && same_d(a->sum, b->sum) && a->min_i == b->min_i &&
               a->max_i == b->max_i && a->first_i == b->first_i && a->last_i == b->last_i;
    }
}

static int value_eq(tsf_type type, const tsf_stats *s, int which, const tsf_value *v)
{
    /* which: 0 first, 1 last, 2 min, 3 max */
    switch (type) {
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB: {
        tsf_bytes b = which == 0 ? s->first_b : which == 1 ? s->last_b : which == 2 ? s->min_b : s->max_b;
        return same_b(b, v->v.bytes);
    }
    case TSF_FLOAT:
    case TSF_DOUBLE: {
        double d = which == 0 ? s->first : which == 1 ? s->last : which == 2 ? s->min : s->max;
        return same_d(d, num(type, v));
    }
    default: {
        int64_t i = which == 0 ? s->first_i : which == 1 ? s->last_i : which == 2 ? s->min_i : s->max_i;
        return i == inum(type, v);
    }
    }
}

static int sum_ok(tsf_type type, const ref_win *x, double sum)
{
    if (type == TSF_BOOLEAN || type == TSF_INT32 || type == TSF_DATE) return sum == (double)x->isum;
    if (isnan(x->sum) || isinf(x->sum) || isnan(sum) || isinf(sum))
        return same_d(x->sum, sum) || isnan(x->abs);
    return fabs(sum - x->sum) <= 1e-9 * x->abs + 1e-300;
}

static int g_fail_budget = 20;
static tsf_agg_info g_all; /* over every case of a test (printed; test binaries are single-threaded) */

/* One option set on one series: stats path vs force_decode vs reference. Returns the statistics info. */
static void check_case(tsf_reader *r, size_t dev, size_t j, const char *what, const pts *s, tsf_type type,
                       const tsf_agg_options *o, tsf_agg_info *info)
{
    tsf_agg_result *a = NULL, *b = NULL;
    tsf_error e = {0};
    tsf_agg_options f = *o;
    f.force_decode = 1;
    tsf_status st = tsf_aggregate(r, dev, j, o, &a, &e);
    if (!st) st = tsf_aggregate(r, dev, j, &f, &b, &e);
    if (st) {
        fprintf(stderr, "%s: tsf_aggregate: %s %s\n", what, tsf_status_name(st), e.message);
        CHECK(0);
        goto out;
    }
    tsf_agg_result_info(a, info);
    g_all.chunks_from_stats += info->chunks_from_stats;
    g_all.pages_from_stats += info->pages_from_stats;
    g_all.pages_decoded += info->pages_decoded;
    tsf_agg_info fi;
    tsf_agg_result_info(b, &fi);
    CHECK(fi.chunks_from_stats == 0 && fi.pages_from_stats == 0 && fi.points_from_stats == 0);
    CHECK_EQ_INT(info->points_from_stats + info->points_decoded, fi.points_decoded);
    ref_win *w;
    size_t n = reference(s, type, o, &w);
    int bad = tsf_agg_result_count(a) != n || tsf_agg_result_count(b) != n;
    for (size_t i = 0; i < n && !bad; i++) {
        const tsf_agg_window *x = tsf_agg_result_window(a, i), *y = tsf_agg_result_window(b, i);
        const ref_win *z = &w[i];
        if (x->start != y->start || x->end != y->end || !same_stats(&x->stats, &y->stats)) {
            fprintf(stderr, "%s: window %zu: statistics path != decode path (sum %.17g vs %.17g)\n", what, i,
                    x->stats.sum, y->stats.sum);
            bad = 1;
            break;
        }
        int ok = x->start == z->start && x->end == z->end && x->stats.count == z->count &&
                 x->stats.start_time == z->t0 && x->stats.end_time == z->t1 &&
                 value_eq(type, &x->stats, 0, &z->first->v) && value_eq(type, &x->stats, 1, &z->last->v);
        if (ok && type != TSF_TEXT && type != TSF_BLOB)
            ok = value_eq(type, &x->stats, 2, &z->min->v) && value_eq(type, &x->stats, 3, &z->max->v);
        if (ok && type != TSF_TEXT && type != TSF_BLOB && type != TSF_STRING)
            ok = sum_ok(type, z, x->stats.sum);
        if (!ok) {
            fprintf(stderr,
                    "%s: window %zu [%lld,%lld) vs reference [%lld,%lld): count %llu/%llu times %lld..%lld / "
                    "%lld..%lld sum %.17g/%.17g\n",
                    what, i, (long long)x->start, (long long)x->end, (long long)z->start, (long long)z->end,
                    (unsigned long long)x->stats.count, (unsigned long long)z->count,
                    (long long)x->stats.start_time, (long long)x->stats.end_time, (long long)z->t0,
                    (long long)z->t1, x->stats.sum, z->sum);
            bad = 1;
        }
    }
    if (bad && tsf_agg_result_count(a) != n)
        fprintf(stderr, "%s: %zu windows (decode %zu), reference %zu\n", what, tsf_agg_result_count(a),
                tsf_agg_result_count(b), n);
    if (bad && g_fail_budget-- <= 0) bad = 0; /* keep the log short; the failure is counted once already */
    CHECK(!bad);
    free(w);
out:
    tsf_agg_result_free(a);
    tsf_agg_result_free(b);
}

/* Every option set on one series; returns the whole-range info. */
static void check_series(tsf_reader *r, size_t dev, size_t j, const char *file, tsf_agg_info *whole)
{
    tsf_series_info si;
    tsf_device_info di;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_series_pages(r, dev, j, &si, &e), &e);
    CHECK_OK(tsf_reader_device(r, dev, &di, &e), &e);
    char what[512];
    snprintf(what, sizeof what, "%s %s.%s", file, di.name, si.measurement);
    pts s;
    if (load_points(r, dev, si.measurement, &s)) {
        CHECK(0);
        return;
    }
    tsf_type type = si.type;
    int64_t lo = s.n ? s.p[0].t : 0, hi = s.n ? s.p[s.n - 1].t : 0;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    tsf_agg_options o;
    tsf_agg_info info;
    /* whole range: equals the series statistics where trusted */
    tsf_agg_options_init(&o);
    check_case(r, dev, j, what, &s, type, &o, whole);
    if (si.stats.trusted && type != TSF_BLOB && si.stats.count) {
        tsf_agg_result *a = NULL;
        CHECK_OK(tsf_aggregate(r, dev, j, &o, &a, &e), &e);
        CHECK_EQ_INT(tsf_agg_result_count(a), 1);
        tsf_stats ss = si.stats;
        if (type == TSF_BOOLEAN &&
            tsf_agg_result_count(a) == 1) { /* file statistics have no BOOLEAN min/max */
            const tsf_stats *x = &tsf_agg_result_window(a, 0)->stats;
            ss.min_i = x->min_i, ss.max_i = x->max_i, ss.min = x->min, ss.max = x->max;
        }
        if (tsf_agg_result_count(a) == 1 && !same_stats(&tsf_agg_result_window(a, 0)->stats, &ss)) {
            fprintf(stderr,
                    "%s: whole-range aggregate != TimeseriesMetadata statistics (sum %.17g vs %.17g)\n", what,
                    tsf_agg_result_window(a, 0)->stats.sum, si.stats.sum);
            CHECK(0);
        }
        tsf_agg_result_free(a);
    }
    /* last value */
    int64_t lt = 0;
    tsf_value lv;
    int found = -1;
    tsf_status st = tsf_last_value(r, dev, j, &lt, &lv, &found, &e);
    {
        CHECK_OK(st, &e);
        CHECK_EQ_INT(found, s.n > 0);
        if (s.n && found == 1) {
            CHECK(lt == hi);
            tsf_stats ls;
            memset(&ls, 0, sizeof ls);
            switch (type) {
            case TSF_FLOAT:
                ls.last = lv.v.f;
                break;
            case TSF_DOUBLE:
                ls.last = lv.v.d;
                break;
            case TSF_TEXT:
            case TSF_STRING:
            case TSF_BLOB:
                ls.last_b = lv.v.bytes;
                break;
            default:
                ls.last_i = inum(type, &lv);
            }
            if (type == TSF_BLOB) { /* a second call returns the value kept by the reader */
                tsf_value again;
                CHECK_OK(tsf_last_value(r, dev, j, &lt, &again, &found, &e), &e);
                CHECK(again.v.bytes.data == lv.v.bytes.data && again.v.bytes.len == lv.v.bytes.len);
            }
            if (!value_eq(type, &ls, 1, &s.p[s.n - 1].v)) {
                fprintf(stderr, "%s: tsf_last_value differs from the last point\n", what);
                CHECK(0);
            }
        }
    }
    if (s.n) {
        /* a middle range */
        tsf_agg_options_init(&o);
        o.time_min = lo + (int64_t)(span / 4);
        o.time_max = hi - (int64_t)(span / 3);
        check_case(r, dev, j, what, &s, type, &o, &info);
        /* windows not aligned to anything, about 7 over the data */
        tsf_agg_options_init(&o);
        o.window = (int64_t)(span / 7 + 3);
        o.window_origin = lo + 1;
        check_case(r, dev, j, what, &s, type, &o, &info);
        /* small windows (a few points each) inside a range: windows split pages */
        o.window = (int64_t)(span / (s.n / 3 + 1) + 1);
        o.window_origin = -5;
        o.time_min = lo + (int64_t)(span / 5);
        check_case(r, dev, j, what, &s, type, &o, &info);
        /* ranges outside the data: nothing */
        tsf_agg_options_init(&o);
        o.time_max = lo == INT64_MIN ? lo : lo - 1;
        if (lo != INT64_MIN) {
            check_case(r, dev, j, what, &s, type, &o, &info);
            CHECK(info.points_decoded == 0 && info.points_from_stats == 0);
        }
        o.time_min = hi == INT64_MAX ? hi : hi + 1;
        o.time_max = INT64_MAX;
        if (hi != INT64_MAX) check_case(r, dev, j, what, &s, type, &o, &info);
    }
    pts_free(&s, type);
}

static void check_reader(tsf_reader *r, const char *file, tsf_agg_info *total)
{
    memset(total, 0, sizeof *total);
    size_t nd = tsf_reader_device_count(r);
    for (size_t d = 0; d < nd; d++) {
        tsf_device_info di;
        tsf_error e = {0};
        CHECK_OK(tsf_reader_device(r, d, &di, &e), &e);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_agg_info w;
            check_series(r, d, j, file, &w);
            total->chunks_from_stats += w.chunks_from_stats;
            total->pages_from_stats += w.pages_from_stats;
            total->pages_decoded += w.pages_decoded;
        }
    }
}

/* ---- tests ---------------------------------------------------------------------------------- */

static gen_buf g_file;

static tsf_reader *open_gen(void)
{
    if (!g_file.p) {
        char why[256];
        if (gen_file(&g_file, 2000, 50, 600, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            return NULL;
        }
    }
    tsf_reader *r = NULL;
    tsf_error e = {0};
    if (tsf_reader_open_memory(&r, g_file.p, g_file.n, NULL, &e)) fprintf(stderr, "open: %s\n", e.message);
    return r;
}

static void test_writer_file_all_series(void)
{
    tsf_reader *r = open_gen();
    CHECK(r != NULL);
    if (!r) return;
    tsf_agg_info t;
    check_reader(r, "gen", &t);
    CHECK(t.chunks_from_stats > 0); /* whole-range queries of multi-chunk series */
    tsf_reader_close(r);
}

static void find(tsf_reader *r, const char *dev, const char *meas, size_t *d, size_t *j)
{
    tsf_error e = {0};
    CHECK_OK(tsf_reader_find_device(r, dev, d, &e), &e);
    CHECK_OK(tsf_reader_find_series(r, *d, meas, j, &e), &e);
}

/* Counters: whole chunks, whole pages and partly covered pages where the layout says. */
static void test_counters(void)
{
    tsf_reader *r = open_gen();
    CHECK(r != NULL);
    if (!r) return;
    size_t d, j;
    tsf_error e = {0};
    tsf_agg_result *a = NULL;
    tsf_agg_info in;
    /* d1.s1: t = 10 i, 50 points a page, 600 rows a chunk (4 chunks of 12 pages, the last 4 pages) */
    find(r, "root.sg1.d1", "s1", &d, &j);
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK_EQ_INT(in.chunks_from_stats, 4);
    CHECK_EQ_INT(in.pages_decoded, 0);
    CHECK_EQ_INT(in.points_from_stats, 2000);
    tsf_agg_result_free(a);
    /* a range cutting pages at both ends: two pages decoded, the rest from statistics */
    o.time_min = 1234;
    o.time_max = 15678;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK_EQ_INT(in.pages_decoded, 2);
    CHECK(in.chunks_from_stats >= 1 && in.pages_from_stats > 0);
    CHECK_EQ_INT(in.points_decoded + in.points_from_stats, (15670 - 1240) / 10 + 1);
    tsf_agg_result_free(a);
    /* windows on chunk boundaries (6000) -> chunks; on page boundaries (500) -> pages; none decoded */
    tsf_agg_options_init(&o);
    o.window = 6000;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK_EQ_INT(tsf_agg_result_count(a), 4);
    CHECK_EQ_INT(in.chunks_from_stats, 4);
    CHECK_EQ_INT(in.pages_decoded, 0);
    tsf_agg_result_free(a);
    o.window = 500;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK_EQ_INT(tsf_agg_result_count(a), 40);
    CHECK_EQ_INT(in.pages_from_stats, 40);
    CHECK_EQ_INT(in.pages_decoded, 0);
    if (tsf_agg_result_count(a) == 40) {
        const tsf_agg_window *w = tsf_agg_result_window(a, 7);
        CHECK(w->start == 3500 && w->end == 4000 && w->stats.count == 50);
        CHECK(w->stats.first_i == 350 * 350 - 7 && w->stats.last_i == 399 * 399 - 7);
    }
    tsf_agg_result_free(a);
    /* windows ending one before / at / one after page ends (pages span [500k, 500k + 490]) */
    {
        pts s;
        CHECK(load_points(r, d, "s1", &s) == 0);
        static const int64_t ws[] = {490, 491, 500, 510, 5990, 6000, 6010};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
            tsf_agg_options_init(&o);
            o.window = ws[i];
            check_case(r, d, j, "d1.s1 page-edge windows", &s, TSF_INT64, &o, &in);
            o.window_origin = -1;
            check_case(r, d, j, "d1.s1 page-edge windows", &s, TSF_INT64, &o, &in);
        }
        pts_free(&s, TSF_INT64);
    }
    /* windows splitting pages: every page decoded */
    o.window = 330;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK(in.pages_decoded > 0);
    tsf_agg_result_free(a);
    /* gaps: windows without points are omitted (s2 has a point every 30; windows of 10) */
    find(r, "root.sg1.d1", "s2", &d, &j);
    tsf_agg_options_init(&o);
    o.window = 10;
    o.time_max = 299;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    CHECK_EQ_INT(tsf_agg_result_count(a), 10);
    for (size_t i = 0; i < tsf_agg_result_count(a); i++) {
        const tsf_agg_window *w = tsf_agg_result_window(a, i);
        CHECK(w->start == (int64_t)i * 30 && w->stats.count == 1 && w->stats.sum == (double)i * 3 * 0.5);
    }
    tsf_agg_result_free(a);
    /* aligned column with nulls: statistics of value pages count only non-null values */
    find(r, "root.sg1.a1", "i64", &d, &j);
    tsf_agg_options_init(&o);
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK(in.chunks_from_stats > 0 && in.pages_decoded == 0);
    int64_t want = 0;
    for (size_t i = 0; i < 2000; i++) want += i % 8 != 1;
    CHECK(tsf_agg_result_count(a) == 1 && tsf_agg_result_window(a, 0)->stats.count == (uint64_t)want);
    tsf_agg_result_free(a);
    /* BLOB: statistics give counts; only the pages holding each window's first and last are decoded */
    find(r, "root.sg1.a1", "blob", &d, &j);
    tsf_agg_options_init(&o);
    o.window = 700; /* a1: t = 1000 + 7 i, pages of 50 rows (350 ms): two whole pages a window */
    o.window_origin = 1000;
    CHECK_OK(tsf_aggregate(r, d, j, &o, &a, &e), &e);
    tsf_agg_result_info(a, &in);
    CHECK_EQ_INT(tsf_agg_result_count(a), 20);
    CHECK(in.pages_from_stats == 40 && in.pages_decoded <= 2 * tsf_agg_result_count(a));
    for (size_t i = 0; i < tsf_agg_result_count(a); i++) {
        const tsf_agg_window *w = tsf_agg_result_window(a, i);
        char wtext[64];
        int64_t row = (w->stats.start_time - 1000) / 7;
        int len = snprintf(wtext, sizeof wtext, "blob-%lld", (long long)(row % 50));
        CHECK(w->stats.first_b.len == (size_t)len && !memcmp(w->stats.first_b.data, wtext, (size_t)len));
        row = (w->stats.end_time - 1000) / 7;
        len = snprintf(wtext, sizeof wtext, "blob-%lld", (long long)(row % 50));
        CHECK(w->stats.last_b.len == (size_t)len && !memcmp(w->stats.last_b.data, wtext, (size_t)len));
    }
    tsf_agg_result_free(a);
    /* bad arguments */
    o.window = -1;
    CHECK_EQ_INT(tsf_aggregate(r, d, j, &o, &a, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_aggregate(r, d, 99, NULL, &a, &e), TSF_EINVAL);
    tsf_reader_close(r);
}

/* Flipped bytes: every aggregate returns OK or an error with a message, never crashes (ASan/UBSan builds
 * check memory), and some flips are reported as corrupt. */
static void test_hostile(void)
{
    gen_buf small = {0};
    char why[300];
    CHECK(gen_file(&small, 300, 40, 150, why, sizeof why) == 0);
    uint8_t *copy = malloc(small.n);
    uint64_t seed = 7;
    size_t corrupt = 0, silent = 0;
    for (int k = 0; k < 600; k++) {
        memcpy(copy, small.p, small.n);
        size_t at = (size_t)(tsf_test_rand(&seed) % small.n);
        copy[at] ^= (uint8_t)(1 + tsf_test_rand(&seed) % 255);
        tsf_reader *r = NULL;
        tsf_error e = {0};
        if (tsf_reader_open_memory(&r, copy, small.n, NULL, &e) || tsf_reader_load_index(r, &e)) {
            tsf_reader_close(r);
            continue;
        }
        size_t nd = tsf_reader_device_count(r);
        for (size_t d = 0; d < nd; d++) {
            tsf_device_info di;
            if (tsf_reader_device(r, d, &di, &e)) continue;
            for (size_t j = 0; j < di.nseries; j++) {
                for (int mode = 0; mode < 3; mode++) {
                    tsf_agg_options o;
                    tsf_agg_options_init(&o);
                    o.force_decode = mode == 1;
                    o.window = mode == 2 ? 37 : 0;
                    tsf_agg_result *a = NULL;
                    e.message[0] = 0;
                    tsf_status st = tsf_aggregate(r, d, j, &o, &a, &e);
                    if (st == TSF_ECORRUPT) corrupt++;
                    if (st && (!e.message[0] || a)) silent++;
                    tsf_agg_result_free(a);
                }
                int64_t t;
                tsf_value v;
                int found;
                tsf_last_value(r, d, j, &t, &v, &found, &e);
            }
        }
        tsf_reader_close(r);
    }
    CHECK_EQ_INT(silent, 0);
    CHECK(corrupt > 10);
    free(copy);
    free(small.p);
}

static void test_golden(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/tsfile-java", data);
    size_t n = 0;
    char **names = gcsv_list_tsfiles(dir, &n);
    if (!names) {
        CHECK(names != NULL); /* tests/data is part of the checkout */
        return;
    }
    tsf_agg_info sum = {0};
    memset(&g_all, 0, sizeof g_all);
    for (size_t i = 0; i < n; i++) {
        char path[1600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        tsf_reader *r = NULL;
        tsf_error e = {0};
        CHECK_OK(tsf_reader_open(&r, path, NULL, &e), &e);
        if (r) {
            tsf_agg_info t;
            check_reader(r, names[i], &t);
            sum.chunks_from_stats += t.chunks_from_stats;
            sum.pages_from_stats += t.pages_from_stats;
            sum.pages_decoded += t.pages_decoded;
            tsf_reader_close(r);
        }
        free(names[i]);
    }
    free(names);
    printf("golden: %zu files; whole-range queries: %llu chunks and %llu pages from statistics, %llu pages "
           "decoded\n",
           n, (unsigned long long)sum.chunks_from_stats, (unsigned long long)sum.pages_from_stats,
           (unsigned long long)sum.pages_decoded);
    printf("golden, all cases: %llu chunks and %llu pages from statistics, %llu pages decoded\n",
           (unsigned long long)g_all.chunks_from_stats, (unsigned long long)g_all.pages_from_stats,
           (unsigned long long)g_all.pages_decoded);
    CHECK(n >= 87);
    CHECK(sum.chunks_from_stats > 0);
    CHECK(g_all.pages_from_stats > 0);
}

int main(void)
{
    TSF_RUN(test_counters);
    TSF_RUN(test_writer_file_all_series);
    TSF_RUN(test_hostile);
    TSF_RUN(test_golden);
    free(g_file.p);
    return tsf_test_finish();
}
