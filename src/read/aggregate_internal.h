/*
 * aggregate_internal.h - the state of one aggregation shared by the files of tsf_aggregate: aggregate.c
 * (the public API and the result), aggregate_acc.c (accumulators, and how units merge into result
 * windows), aggregate_scan.c (a series' chunks and pages: statistics answers and decoded pages) and
 * last_value.c (tsf_last_value). Window arithmetic is inline here: the decoded-value loop splits by it.
 */
#ifndef TSF_READ_AGGREGATE_INTERNAL_H
#define TSF_READ_AGGREGATE_INTERNAL_H

#include "reader_internal.h"

/* Accumulated aggregates of one unit (page part, chunk part or window). */
typedef struct acc {
    uint64_t count;
    int64_t t0, t1;                          /* times of first and last */
    int64_t imin, imax, ifirst, ilast, isum; /* BOOLEAN, INT32, DATE (isum), INT64, TIMESTAMP */
    double dmin, dmax, dfirst, dlast, dsum;  /* FLOAT, DOUBLE; dsum also INT64/TIMESTAMP */
    tsf_bytes b[4];                          /* first, last, min, max (TEXT: first/last; STRING: all) */
    uint8_t unk_first, unk_last;             /* BLOB statistics: value at t0 / t1 still to be decoded */
    tsf_rd_buf own[4];                           /* owned copies of b[] (targets of merges only) */
} acc;

enum { B_FIRST = 0, B_LAST = 1, B_MIN = 2, B_MAX = 3 };

typedef struct agg_win {
    int64_t start, last; /* [start, last] inclusive */
    acc a;
} agg_win;

struct tsf_agg_result {
    const tsf_allocator *a;
    agg_win *w;
    size_t n, cap;
    tsf_agg_window *out; /* built at the end: nout entries */
    size_t nout;
    tsf_agg_info info;
};

typedef struct agg_ctx {
    tsf_reader *r;
    const tsf_allocator *a;
    tsf_compressor *comp;
    tsf_type type;
    size_t esz;
    int64_t tmin, tmax, w, origin;
    int force, lossy_type;
    int checked, level; /* decoded pages are compared with their statistics (check.h) */
    char why[160];
    tsf_agg_result *res;
    acc cp; /* the current chunk's part in window cp_start */
    int64_t cp_start, cp_last;
    int cp_open;
    tsf_rd_buf hdr, thdr, body, plain, tbody, tplain, times, vals, ptimes;
    uint64_t fetched, decompressed;
} agg_ctx;

/* Window of time t: [*start, *last], clamped to the int64 range (no overflow for any t, origin, w). */
static inline void win_of(const agg_ctx *c, int64_t t, int64_t *start, int64_t *last)
{
    if (!c->w) {
        *start = c->tmin;
        *last = c->tmax;
        return;
    }
    int64_t w = c->w, mt = t % w, mo = c->origin % w;
    if (mt < 0) mt += w;
    if (mo < 0) mo += w;
    int64_t m = mt - mo; /* (t - origin) mod w, in [0, w) */
    if (m < 0) m += w;
    *start = t >= INT64_MIN + m ? t - m : INT64_MIN;
    int64_t rest = w - 1 - m;
    *last = t <= INT64_MAX - rest ? t + rest : INT64_MAX;
}

/* 1 if [t0, t1] lies inside the range and inside one window. */
static inline int fits(const agg_ctx *c, int64_t t0, int64_t t1)
{
    if (t0 < c->tmin || t1 > c->tmax || t0 > t1) return 0;
    int64_t s, l;
    win_of(c, t0, &s, &l);
    return t1 <= l;
}

static inline int out_of_range(const agg_ctx *c, int64_t t0, int64_t t1)
{
    return t1 < c->tmin || t0 > c->tmax || t0 > t1;
}

/* ---- aggregate_acc.c: accumulators ---- */

/* dst->b[k] = a copy of v in dst->own[k]. */
tsf_status tsf_rd_acc_own_bytes(const tsf_allocator *al, acc *dst, int k, tsf_bytes v, tsf_error *err);
void tsf_rd_acc_free(const tsf_allocator *al, acc *x);
/* Statistics of a chunk or page as an accumulator (borrowing its bytes). BOOLEAN min/max follow from
 * the number of true values. */
void tsf_rd_acc_from_stats(acc *x, const tsf_fmt_stats *s);
/* The accumulator x of a series of type `type` as public statistics (borrowing its bytes). */
void tsf_rd_acc_fill_stats(tsf_type type, const acc *x, tsf_stats *o);

/* ---- aggregate_acc.c: units into result windows ---- */

/* Merges the current chunk's part into its window and starts a new part. */
tsf_status tsf_rd_agg_chunk_flush(agg_ctx *c, tsf_error *err);
/* Decoded values (times t ascending, values v): the rows in the range, split by window. */
tsf_status tsf_rd_agg_put_values(agg_ctx *c, const int64_t *t, const uint8_t *v, size_t n, tsf_error *err);
/* Statistics s of a whole chunk (chunk = 1) or page lying in one window and in the range. */
tsf_status tsf_rd_agg_from_stats(agg_ctx *c, const tsf_fmt_stats *s, int chunk, tsf_error *err);

/* ---- aggregate_scan.c: a series' chunks and pages ---- */

/* Non-aligned series s (§6.3 pages). */
tsf_status tsf_rd_agg_nonaligned(agg_ctx *c, const tsf_rd_series *s, tsf_error *err);
/* Aligned value column s of device d (§6.4). */
tsf_status tsf_rd_agg_aligned(agg_ctx *c, const tsf_rd_device *d, const tsf_rd_series *s, tsf_error *err);

#endif
