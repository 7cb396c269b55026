/*
 * aggregate_acc.c - accumulators of count, sum, min, max, first and last, and how units merge into the
 * result's windows.
 *
 * Sums follow how Java's statistics accumulate them, so that a statistics answer and a decoded answer
 * are bit-identical: a page sum starts from the page's first value and adds each value in time order
 * (INT32/DATE/BOOLEAN as int64, INT64/TIMESTAMP/FLOAT/DOUBLE as double); a chunk sum adds its page sums in
 * order; a window sum adds its chunk sums in order. A window boundary inside a page or chunk splits it into
 * parts that are summed the same way. Over a series' whole range this equals its TimeseriesMetadata sum.
 * min/max keep the first value and replace it only on a strict < / > (Java; NaN never replaces); first and
 * last are the values at the smallest and largest times.
 *
 * A unit (the statistics of a chunk or page, or a run of decoded values inside one window) becomes the
 * current chunk's part of its window; the part merges into the window when the chunk ends or the next unit
 * lies in another window. Windows are kept in time order.
 */
#include <string.h>

#include "aggregate_internal.h"

/* ---- accumulators ----------------------------------------------------------------------------- */

static int bytes_lt(tsf_bytes x, tsf_bytes y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.data, y.data, n) : 0;
    return c < 0 || (c == 0 && x.len < y.len);
}

tsf_status tsf_rd_acc_own_bytes(const tsf_allocator *al, acc *dst, int k, tsf_bytes v, tsf_error *err)
{
    if (v.len) {
        tsf_status st = tsf_rd_buf_reserve(al, &dst->own[k], v.len, err);
        if (st) return st;
        memcpy(dst->own[k].p, v.data, v.len);
    }
    dst->b[k].data = dst->own[k].p;
    dst->b[k].len = v.len;
    return TSF_OK;
}

static void acc_clear(acc *x)
{
    tsf_rd_buf own[4];
    memcpy(own, x->own, sizeof own);
    memset(x, 0, sizeof *x);
    memcpy(x->own, own, sizeof own);
}

void tsf_rd_acc_free(const tsf_allocator *al, acc *x)
{
    for (int k = 0; k < 4; k++) tsf_rd_buf_free(al, &x->own[k]);
}

/* Merges src into dst as Java merges statistics (dst empty: a copy). Bytes are copied into dst. */
static tsf_status acc_merge(const tsf_allocator *al, tsf_type type, acc *dst, const acc *src, tsf_error *err)
{
    if (!src->count) return TSF_OK;
    int init = dst->count == 0;
    int first = init || src->t0 < dst->t0, last = init || src->t1 >= dst->t1;
    dst->count += src->count;
    if (first) dst->t0 = src->t0;
    if (last) dst->t1 = src->t1;
    tsf_status st = TSF_OK;
    switch (type) {
    case TSF_BOOLEAN:
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        if (init || src->imin < dst->imin) dst->imin = src->imin;
        if (init || src->imax > dst->imax) dst->imax = src->imax;
        if (first) dst->ifirst = src->ifirst;
        if (last) dst->ilast = src->ilast;
        if (type == TSF_INT64 || type == TSF_TIMESTAMP)
            dst->dsum = init ? src->dsum : dst->dsum + src->dsum;
        else
            dst->isum = (int64_t)((uint64_t)dst->isum + (uint64_t)src->isum); /* hostile statistics wrap */
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        if (init || src->dmin < dst->dmin) dst->dmin = src->dmin;
        if (init || src->dmax > dst->dmax) dst->dmax = src->dmax;
        if (first) dst->dfirst = src->dfirst;
        if (last) dst->dlast = src->dlast;
        dst->dsum = init ? src->dsum : dst->dsum + src->dsum;
        break;
    default:
        if (first) dst->unk_first = src->unk_first;
        if (last) dst->unk_last = src->unk_last;
        if (first) st = tsf_rd_acc_own_bytes(al, dst, B_FIRST, src->b[B_FIRST], err);
        if (!st && last) st = tsf_rd_acc_own_bytes(al, dst, B_LAST, src->b[B_LAST], err);
        if (type == TSF_STRING) {
            if (!st && (init || bytes_lt(src->b[B_MIN], dst->b[B_MIN])))
                st = tsf_rd_acc_own_bytes(al, dst, B_MIN, src->b[B_MIN], err);
            if (!st && (init || bytes_lt(dst->b[B_MAX], src->b[B_MAX])))
                st = tsf_rd_acc_own_bytes(al, dst, B_MAX, src->b[B_MAX], err);
        }
    }
    return st;
}

void tsf_rd_acc_from_stats(acc *x, const tsf_fmt_stats *s)
{
    memset(x, 0, sizeof *x);
    x->count = s->count;
    x->t0 = s->start_time;
    x->t1 = s->end_time;
    switch (s->type) {
    case TSF_BOOLEAN:
        x->ifirst = s->v.b.first != 0;
        x->ilast = s->v.b.last != 0;
        x->isum = s->v.b.sum;
        x->imin = (uint64_t)s->v.b.sum < s->count ? 0 : 1;
        x->imax = s->v.b.sum > 0;
        break;
    case TSF_INT32:
    case TSF_DATE:
        x->imin = s->v.i32.min, x->imax = s->v.i32.max;
        x->ifirst = s->v.i32.first, x->ilast = s->v.i32.last;
        x->isum = s->v.i32.sum;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        x->imin = s->v.i64.min, x->imax = s->v.i64.max;
        x->ifirst = s->v.i64.first, x->ilast = s->v.i64.last;
        x->dsum = s->v.i64.sum;
        break;
    case TSF_FLOAT:
        x->dmin = s->v.f32.min, x->dmax = s->v.f32.max;
        x->dfirst = s->v.f32.first, x->dlast = s->v.f32.last;
        x->dsum = s->v.f32.sum;
        break;
    case TSF_DOUBLE:
        x->dmin = s->v.f64.min, x->dmax = s->v.f64.max;
        x->dfirst = s->v.f64.first, x->dlast = s->v.f64.last;
        x->dsum = s->v.f64.sum;
        break;
    case TSF_BLOB:
        x->unk_first = x->unk_last = 1;
        break; /* no values in BLOB statistics */
    default:
        x->b[B_FIRST] = s->v.bin.first;
        x->b[B_LAST] = s->v.bin.last;
        x->b[B_MIN] = s->v.bin.min;
        x->b[B_MAX] = s->v.bin.max;
    }
}

/* Integer run: min/max/first/last, sum as int64 (isum) or, with dsum_mode, as Java's double sum. */
#define RUN_INT(T)                                                                                           \
    do {                                                                                                     \
        const T *v = (const T *)vals;                                                                        \
        int64_t mn = v[0], mx = v[0], is = 0;                                                                \
        double ds = (double)v[0];                                                                            \
        for (size_t i = 0; i < n; i++) {                                                                     \
            int64_t y = v[i];                                                                                \
            if (y < mn) mn = y;                                                                              \
            if (y > mx) mx = y;                                                                              \
            is = (int64_t)((uint64_t)is + (uint64_t)y); /* used for INT32/DATE only; no UB for INT64 */      \
            if (i) ds += (double)y;                                                                          \
        }                                                                                                    \
        x->imin = mn, x->imax = mx, x->ifirst = v[0], x->ilast = v[n - 1], x->isum = is, x->dsum = ds;       \
    } while (0)

#define RUN_FLT(T)                                                                                           \
    do {                                                                                                     \
        const T *v = (const T *)vals;                                                                        \
        double mn = v[0], mx = v[0], s = v[0];                                                               \
        for (size_t i = 1; i < n; i++) {                                                                     \
            double y = v[i];                                                                                 \
            if (y < mn) mn = y;                                                                              \
            if (y > mx) mx = y;                                                                              \
            s += y;                                                                                          \
        }                                                                                                    \
        x->dmin = mn, x->dmax = mx, x->dfirst = v[0], x->dlast = v[n - 1], x->dsum = s;                      \
    } while (0)

/* Aggregates of n >= 1 decoded values (times t, ascending) as one unit, as Java's page statistics do. */
static void acc_run(acc *x, tsf_type type, const int64_t *t, const void *vals, size_t n)
{
    memset(x, 0, sizeof *x);
    x->count = n;
    x->t0 = t[0];
    x->t1 = t[n - 1];
    switch (type) {
    case TSF_BOOLEAN: {
        const uint8_t *v = vals;
        int64_t s = 0;
        for (size_t i = 0; i < n; i++) s += v[i] != 0;
        x->isum = s;
        x->ifirst = v[0] != 0, x->ilast = v[n - 1] != 0;
        x->imin = (uint64_t)s < n ? 0 : 1;
        x->imax = s > 0;
        break;
    }
    case TSF_INT32:
    case TSF_DATE:
        RUN_INT(int32_t);
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        RUN_INT(int64_t);
        break;
    case TSF_FLOAT:
        RUN_FLT(float);
        break;
    case TSF_DOUBLE:
        RUN_FLT(double);
        break;
    default: {
        const tsf_bytes *v = vals;
        x->b[B_FIRST] = v[0];
        x->b[B_LAST] = v[n - 1];
        if (type == TSF_STRING) {
            tsf_bytes mn = v[0], mx = v[0];
            for (size_t i = 1; i < n; i++) {
                if (bytes_lt(v[i], mn)) mn = v[i];
                if (bytes_lt(mx, v[i])) mx = v[i];
            }
            x->b[B_MIN] = mn, x->b[B_MAX] = mx;
        }
    }
    }
}

/* ---- result windows --------------------------------------------------------------------------- */

/* Merges a chunk part into its window (created in time order; found by binary search otherwise). */
static tsf_status win_merge(agg_ctx *c, int64_t start, int64_t last, const acc *part, tsf_error *err)
{
    tsf_agg_result *res = c->res;
    size_t lo = 0, hi = res->n;
    if (hi && res->w[hi - 1].start < start) {
        lo = hi;
    } else {
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (res->w[m].start < start)
                lo = m + 1;
            else
                hi = m;
        }
    }
    if (lo == res->n || res->w[lo].start != start) {
        if (res->n == res->cap) {
            size_t nc = res->cap ? res->cap * 2 : 16;
            agg_win *nw = tsf_realloc(c->a, res->w, res->cap * sizeof *nw, nc * sizeof *nw);
            if (!nw) return tsf_err(err, TSF_ENOMEM, "aggregate: out of memory");
            res->w = nw;
            res->cap = nc;
        }
        memmove(res->w + lo + 1, res->w + lo, (res->n - lo) * sizeof *res->w);
        memset(&res->w[lo], 0, sizeof res->w[lo]);
        res->w[lo].start = start;
        res->w[lo].last = last;
        res->n++;
    }
    return acc_merge(c->a, c->type, &res->w[lo].a, part, err);
}

tsf_status tsf_rd_agg_chunk_flush(agg_ctx *c, tsf_error *err)
{
    tsf_status st = TSF_OK;
    if (c->cp_open && c->cp.count) st = win_merge(c, c->cp_start, c->cp_last, &c->cp, err);
    acc_clear(&c->cp);
    c->cp_open = 0;
    return st;
}

/* Adds a page part (or a whole chunk's statistics) lying in the window of its first time. */
static tsf_status put_part(agg_ctx *c, const acc *part, tsf_error *err)
{
    int64_t s, l;
    win_of(c, part->t0, &s, &l);
    tsf_status st;
    if (c->cp_open && c->cp_start != s && (st = tsf_rd_agg_chunk_flush(c, err))) return st;
    c->cp_open = 1;
    c->cp_start = s;
    c->cp_last = l;
    return acc_merge(c->a, c->type, &c->cp, part, err);
}

tsf_status tsf_rd_agg_put_values(agg_ctx *c, const int64_t *t, const uint8_t *v, size_t n, tsf_error *err)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (t[m] < c->tmin)
            lo = m + 1;
        else
            hi = m;
    }
    size_t a = lo, z = n;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (t[m] <= c->tmax)
            a = m + 1;
        else
            z = m;
    }
    hi = a;
    c->res->info.points_decoded += hi - lo;
    for (size_t i = lo; i < hi;) {
        int64_t s, l;
        win_of(c, t[i], &s, &l);
        size_t j = i + 1;
        while (j < hi && t[j] <= l) j++;
        acc part;
        acc_run(&part, c->type, t + i, v + i * c->esz, j - i);
        tsf_status st = put_part(c, &part, err);
        if (st) return st;
        i = j;
    }
    return TSF_OK;
}

tsf_status tsf_rd_agg_from_stats(agg_ctx *c, const tsf_fmt_stats *s, int chunk, tsf_error *err)
{
    acc part;
    tsf_rd_acc_from_stats(&part, s);
    if (chunk)
        c->res->info.chunks_from_stats++;
    else
        c->res->info.pages_from_stats++;
    c->res->info.points_from_stats += s->count;
    return put_part(c, &part, err);
}

/* ---- as public statistics -------------------------------------------------------------------- */

void tsf_rd_acc_fill_stats(tsf_type type, const acc *x, tsf_stats *o)
{
    memset(o, 0, sizeof *o);
    o->type = type;
    o->count = x->count;
    o->start_time = x->t0;
    o->end_time = x->t1;
    o->trusted = 1;
    if (!x->count) return;
    switch (type) {
    case TSF_BOOLEAN:
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        o->has_values = 1;
        o->min_i = x->imin, o->max_i = x->imax, o->first_i = x->ifirst, o->last_i = x->ilast;
        o->min = (double)x->imin, o->max = (double)x->imax;
        o->first = (double)x->ifirst, o->last = (double)x->ilast;
        o->sum = type == TSF_INT64 || type == TSF_TIMESTAMP ? x->dsum : (double)x->isum;
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        o->has_values = 1;
        o->min = x->dmin, o->max = x->dmax, o->first = x->dfirst, o->last = x->dlast, o->sum = x->dsum;
        break;
    default:
        o->first_b = x->b[B_FIRST];
        o->last_b = x->b[B_LAST];
        if (type == TSF_STRING) {
            o->min_b = x->b[B_MIN];
            o->max_b = x->b[B_MAX];
        }
    }
}
