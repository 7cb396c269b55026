/*
 * aggregate.c - count, sum, min, max, first, last of one series over a time range and optional windows
 * answered from statistics (tsfile-container-format.md §7) where a
 * whole unit lies in one window and in the range: ChunkMetadata statistics (§8.2) for whole chunks, page
 * header statistics (§6.1) for whole pages of multi-page chunks; only the other pages are decoded. Lossy
 * FLOAT/DOUBLE encodings (TS_2DIFF, RLE, SPRINTZ, RLBE: statistics describe the writer's input, not what
 * decodes) and BLOB (statistics hold no values) are always decoded.
 *
 * Sums follow how Java's statistics accumulate them, so that a statistics answer and a decoded answer
 * are bit-identical: a page sum starts from the page's first value and adds each value in time order
 * (INT32/DATE/BOOLEAN as int64, INT64/TIMESTAMP/FLOAT/DOUBLE as double); a chunk sum adds its page sums in
 * order; a window sum adds its chunk sums in order. A window boundary inside a page or chunk splits it into
 * parts that are summed the same way. Over a series' whole range this equals its TimeseriesMetadata sum.
 * min/max keep the first value and replace it only on a strict < / > (Java; NaN never replaces); first and
 * last are the values at the smallest and largest times.
 *
 * Aligned value columns (§6.4): value statistics describe only non-null values, so their time range is
 * that of the values; a page that must be decoded pairs with the time page at the same position of the
 * time chunk of its chunk group (the last time chunk before the value chunk).
 */
#include <string.h>

#include "check.h"
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

void tsf_agg_options_init(tsf_agg_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->time_min = INT64_MIN;
    o->time_max = INT64_MAX;
    o->checked = -1;
}

/* ---- windows ---------------------------------------------------------------------------------- */

/* Window of time t: [*start, *last], clamped to the int64 range (no overflow for any t, origin, w). */
static void win_of(const agg_ctx *c, int64_t t, int64_t *start, int64_t *last)
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
static int fits(const agg_ctx *c, int64_t t0, int64_t t1)
{
    if (t0 < c->tmin || t1 > c->tmax || t0 > t1) return 0;
    int64_t s, l;
    win_of(c, t0, &s, &l);
    return t1 <= l;
}

static int out_of_range(const agg_ctx *c, int64_t t0, int64_t t1)
{
    return t1 < c->tmin || t0 > c->tmax || t0 > t1;
}

/* ---- accumulators ----------------------------------------------------------------------------- */

static int bytes_lt(tsf_bytes x, tsf_bytes y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.data, y.data, n) : 0;
    return c < 0 || (c == 0 && x.len < y.len);
}

/* dst->b[k] = a copy of v in dst->own[k]. */
static tsf_status own_bytes(const tsf_allocator *al, acc *dst, int k, tsf_bytes v, tsf_error *err)
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

static void acc_free(const tsf_allocator *al, acc *x)
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
        if (first) st = own_bytes(al, dst, B_FIRST, src->b[B_FIRST], err);
        if (!st && last) st = own_bytes(al, dst, B_LAST, src->b[B_LAST], err);
        if (type == TSF_STRING) {
            if (!st && (init || bytes_lt(src->b[B_MIN], dst->b[B_MIN])))
                st = own_bytes(al, dst, B_MIN, src->b[B_MIN], err);
            if (!st && (init || bytes_lt(dst->b[B_MAX], src->b[B_MAX])))
                st = own_bytes(al, dst, B_MAX, src->b[B_MAX], err);
        }
    }
    return st;
}

/* Statistics of a chunk or page as an accumulator (borrowing its bytes). BOOLEAN min/max follow from
 * the number of true values. */
static void acc_from_stats(acc *x, const tsf_fmt_stats *s)
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

static tsf_status chunk_flush(agg_ctx *c, tsf_error *err)
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
    if (c->cp_open && c->cp_start != s && (st = chunk_flush(c, err))) return st;
    c->cp_open = 1;
    c->cp_start = s;
    c->cp_last = l;
    return acc_merge(c->a, c->type, &c->cp, part, err);
}

/* Decoded values (times t ascending, values v): the rows in the range, split by window. */
static tsf_status put_values(agg_ctx *c, const int64_t *t, const uint8_t *v, size_t n, tsf_error *err)
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

static tsf_status from_stats(agg_ctx *c, const tsf_fmt_stats *s, int chunk, tsf_error *err)
{
    acc part;
    acc_from_stats(&part, s);
    if (chunk)
        c->res->info.chunks_from_stats++;
    else
        c->res->info.pages_from_stats++;
    c->res->info.points_from_stats += s->count;
    return put_part(c, &part, err);
}

/* ---- decoding --------------------------------------------------------------------------------- */

/* Decodes a whole time stream into c->times; *n its values. `fallback`: count when the stream has none. */
static tsf_status decode_times(agg_ctx *c, tsf_encoding enc, const uint8_t *p, size_t len, uint64_t fallback,
                               uint64_t at, size_t *n, tsf_error *err)
{
    size_t cnt = 0;
    tsf_status st = tsf_codec_count(TSF_INT64, enc, p, len, &cnt, err);
    if (st == TSF_ENOTSUP && tsf_codec_can_decode(TSF_INT64, enc)) {
        cnt = (size_t)fallback;
        st = TSF_OK;
    }
    if (st) return st;
    if (cnt > len * 8 + 64)
        return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                       (unsigned long long)at, cnt, len);
    if ((st = tsf_rd_buf_reserve(c->a, &c->times, (cnt ? cnt : 1) * sizeof(int64_t), err))) return st;
    if (cnt && (st = tsf_codec_decode(c->r->codec, TSF_INT64, enc, p, len, c->times.p, cnt, NULL, err)))
        return st;
    for (size_t i = 1; i < cnt; i++)
        if (((const int64_t *)c->times.p)[i] <= ((const int64_t *)c->times.p)[i - 1])
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: timestamps not ascending at value %zu",
                           (unsigned long long)at, i);
    *n = cnt;
    return TSF_OK;
}

static tsf_status decode_vals(agg_ctx *c, tsf_encoding enc, const uint8_t *p, size_t len, size_t n,
                              uint64_t at, tsf_error *err)
{
    tsf_status st = tsf_rd_buf_reserve(c->a, &c->vals, (n ? n : 1) * c->esz, err);
    if (st || !n) return st;
    st = tsf_codec_decode(c->r->codec, c->type, enc, p, len, c->vals.p, n, NULL, err);
    if (st == TSF_ECORRUPT && err) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        memcpy(m, err->message, sizeof m);
        tsf_err(err, st, "values of page at %llu (%s): %s", (unsigned long long)at,
                tsf_encoding_name(enc) ? tsf_encoding_name(enc) : "?", m);
    }
    return st;
}

/* One open chunk: its header and the position of its next page. */
typedef struct agg_chunk {
    tsf_fmt_chunk_header h;
    uint64_t off, pos, end;
    tsf_fmt_page_header ph;
    uint64_t body;
} agg_chunk;

/* Checked reads: statistics of a chunk (ChunkMetadata at off), a page (k's current page) or the series that
 * describe no data (values but startTime > endTime) are damaged, not a unit to skip. */
static tsf_status agg_check_range(const agg_ctx *c, const tsf_fmt_stats *s, const agg_chunk *k, uint64_t off,
                                  tsf_error *err)
{
    char why[160];
    if (!c->checked || !tsf_rd_check_range(s, why, sizeof why)) return TSF_OK;
    if (k) return tsf_rd_check_error(&k->ph, k->body - k->ph.header_len, k->off, why, err);
    return tsf_err(err, TSF_ECORRUPT, "ChunkMetadata of the chunk at %llu: %s", (unsigned long long)off, why);
}

/* Checked reads: the decoded page of k (n times t; values c->vals, nv of them, at rows whose first and last
 * times are t0, t1) against its statistics (cs: the chunk's ChunkMetadata, for a single-page chunk). Pass
 * t = NULL to check values only, vals = 0 for times only. */
static tsf_status agg_check_page(const agg_ctx *c, const agg_chunk *k, const tsf_fmt_stats *cs, const int64_t *t,
                                 size_t n, int vals, int64_t t0, int64_t t1, size_t nv, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = c->checked ? tsf_rd_page_stats(&k->h, &k->ph, cs) : NULL;
    if (!s) return TSF_OK;
    if ((t && tsf_rd_check_times(c->level, s, t, n, NULL, why, sizeof why)) ||
        (vals && tsf_rd_check_values(c->level, c->type, k->h.encoding, s, t0, t1, c->vals.p, nv, NULL, why, sizeof why)))
        return tsf_rd_check_error(&k->ph, k->body - k->ph.header_len, k->off, why, err);
    return TSF_OK;
}

static tsf_status chunk_open(agg_ctx *c, agg_chunk *k, tsf_rd_buf *hb, uint64_t off, tsf_chunk_kind want,
                             tsf_type type, tsf_error *err)
{
    tsf_status st = tsf_rd_read_chunk_header(c->r, off, hb, &k->h, &k->pos, &k->end, &c->fetched, err);
    if (st) return st;
    k->off = off;
    if (tsf_fmt_chunk_kind(k->h.marker) != want || k->h.data_type != type)
        return tsf_err(err, TSF_ECORRUPT,
                       "chunk at %llu: marker 0x%02x / type %d is not the chunk the index lists",
                       (unsigned long long)off, k->h.marker, (int)k->h.data_type);
    return TSF_OK;
}

static tsf_status page_next(agg_ctx *c, agg_chunk *k, tsf_rd_buf *hb, tsf_error *err)
{
    tsf_status st = tsf_rd_read_page_header(c->r, k->pos, k->end, &k->h, hb, &k->ph, &c->fetched, err);
    if (st) return st;
    k->body = k->pos + k->ph.header_len;
    k->pos = k->body + k->ph.compressed_size;
    return TSF_OK;
}

/* A usable statistics answer: trusted, wanted, and covering a whole window part. */
static int stats_usable(const agg_ctx *c, const tsf_fmt_stats *s, tsf_encoding enc)
{
    return !c->force && !tsf_rd_lossy(c->type, enc) && fits(c, s->start_time, s->end_time);
}

/* Non-aligned series (§6.3 pages). */
static tsf_status agg_nonaligned(agg_ctx *c, const tsf_rd_series *s, tsf_error *err)
{
    size_t pos = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    tsf_status st;
    tsf_error e;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &off, &cs, &e)) == TSF_OK) {
        if ((st = agg_check_range(c, &cs, NULL, off, err))) return st;
        if (!cs.count || out_of_range(c, cs.start_time, cs.end_time)) continue;
        /* a FLOAT/DOUBLE chunk's encoding (trust) is in its header; other types need no I/O here */
        int may_stats = !c->force && fits(c, cs.start_time, cs.end_time);
        if (may_stats && !c->lossy_type) {
            if ((st = from_stats(c, &cs, 1, err)) || (st = chunk_flush(c, err))) return st;
            continue;
        }
        agg_chunk k;
        if ((st = chunk_open(c, &k, &c->hdr, off, TSF_CHUNK_NONALIGNED, c->type, err))) return st;
        if (may_stats && !tsf_rd_lossy(c->type, k.h.encoding)) {
            if ((st = from_stats(c, &cs, 1, err)) || (st = chunk_flush(c, err))) return st;
            continue;
        }
        while (k.pos < k.end) {
            if ((st = page_next(c, &k, &c->hdr, err))) return st;
            if (k.ph.has_stats) {
                if ((st = agg_check_range(c, &k.ph.stats, &k, 0, err))) return st;
                /* checked: a page whose statistics count nothing is decoded to confirm it */
                if ((!k.ph.stats.count && !c->checked) ||
                    out_of_range(c, k.ph.stats.start_time, k.ph.stats.end_time))
                    continue;
                if (stats_usable(c, &k.ph.stats, k.h.encoding)) {
                    if ((st = from_stats(c, &k.ph.stats, 0, err))) return st;
                    continue;
                }
            }
            if (k.ph.uncompressed_size == 0) continue;
            const uint8_t *p;
            size_t len, n;
            if ((st = tsf_rd_load_page(c->r, c->comp, &k.h, &k.ph, k.body, &c->body, &c->plain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            tsf_fmt_nonaligned_page pg;
            if ((st = tsf_fmt_parse_nonaligned_page(p, len, k.body, &pg, err))) return st;
            uint64_t fb = k.ph.has_stats ? k.ph.stats.count : cs.count;
            if ((st = decode_times(c, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, fb, k.body, &n, err)))
                return st;
            if ((st = decode_vals(c, k.h.encoding, pg.values, pg.values_len, n, k.body, err))) return st;
            const int64_t *t = (const int64_t *)c->times.p;
            if (n && (st = agg_check_page(c, &k, &cs, t, n, 1, t[0], t[n - 1], n, err))) return st;
            c->res->info.pages_decoded++;
            if ((st = put_values(c, (const int64_t *)c->times.p, c->vals.p, n, err))) return st;
        }
        if ((st = chunk_flush(c, err))) return st;
    }
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    return TSF_OK;
}

/* Time chunk metadata walk: the last time chunk before a value chunk offset. */
typedef struct time_walk {
    const tsf_rd_series *s;
    size_t pos;
    int have, next_have;
    uint64_t off, next_off;
    tsf_fmt_stats stats, next_stats;
} time_walk;

static tsf_status tw_step(time_walk *tw, tsf_error *err)
{
    tsf_error e;
    tsf_status st = tsf_mip_next_chunk_meta(&tw->s->tsm, &tw->pos, &tw->next_off, &tw->next_stats, &e);
    tw->next_have = st == TSF_OK;
    if (st == TSF_OK || st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

static tsf_status tw_seek(time_walk *tw, uint64_t voff, tsf_error *err)
{
    tsf_status st;
    while (tw->next_have && tw->next_off < voff) {
        tw->have = 1;
        tw->off = tw->next_off;
        tw->stats = tw->next_stats;
        if ((st = tw_step(tw, err))) return st;
    }
    if (!tw->have || tw->off >= voff)
        return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: no time chunk before it",
                       (unsigned long long)voff);
    return TSF_OK;
}

/* Aligned value column (§6.4). */
static tsf_status agg_aligned(agg_ctx *c, const tsf_rd_device *d, const tsf_rd_series *s, tsf_error *err)
{
    time_walk tw = {0};
    tw.s = &d->time;
    size_t pos = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    tsf_error e;
    tsf_status st = tw_step(&tw, err);
    if (st) return st;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &off, &cs, &e)) == TSF_OK) {
        if ((st = tw_seek(&tw, off, err)) || (st = agg_check_range(c, &cs, NULL, off, err))) return st;
        if (!cs.count || out_of_range(c, cs.start_time, cs.end_time)) continue;
        int may_stats = !c->force && fits(c, cs.start_time, cs.end_time);
        if (may_stats && !c->lossy_type) {
            if ((st = from_stats(c, &cs, 1, err)) || (st = chunk_flush(c, err))) return st;
            continue;
        }
        agg_chunk vk, tk;
        if ((st = chunk_open(c, &vk, &c->hdr, off, TSF_CHUNK_VALUE, c->type, err))) return st;
        if (may_stats && !tsf_rd_lossy(c->type, vk.h.encoding)) {
            if ((st = from_stats(c, &cs, 1, err)) || (st = chunk_flush(c, err))) return st;
            continue;
        }
        if (vk.pos == vk.end) continue; /* dataSize 0: all null */
        if ((st = chunk_open(c, &tk, &c->thdr, tw.off, TSF_CHUNK_TIME, TSF_VECTOR, err))) return st;
        while (vk.pos < vk.end) {
            if (tk.pos >= tk.end)
                return tsf_err(err, TSF_ECORRUPT,
                               "value chunk at %llu: more pages than its time chunk at %llu",
                               (unsigned long long)vk.off, (unsigned long long)tk.off);
            if ((st = page_next(c, &vk, &c->hdr, err)) || (st = page_next(c, &tk, &c->thdr, err))) return st;
            if (vk.ph.uncompressed_size == 0) continue; /* empty page: all null */
            if (vk.ph.has_stats) {
                if ((st = agg_check_range(c, &vk.ph.stats, &vk, 0, err))) return st;
                if ((!vk.ph.stats.count && !c->checked) ||
                    out_of_range(c, vk.ph.stats.start_time, vk.ph.stats.end_time))
                    continue;
                if (stats_usable(c, &vk.ph.stats, vk.h.encoding)) {
                    if ((st = from_stats(c, &vk.ph.stats, 0, err))) return st;
                    continue;
                }
            }
            const uint8_t *p;
            size_t len, n;
            if ((st = tsf_rd_load_page(c->r, c->comp, &tk.h, &tk.ph, tk.body, &c->tbody, &c->tplain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            uint64_t fb = tk.ph.has_stats ? tk.ph.stats.count : tw.stats.count;
            if ((st = decode_times(c, tk.h.encoding, p, len, fb, tk.body, &n, err))) return st;
            if ((st = agg_check_page(c, &tk, &tw.stats, (const int64_t *)c->times.p, n, 0, 0, 0, 0, err))) return st;
            if ((st = tsf_rd_load_page(c->r, c->comp, &vk.h, &vk.ph, vk.body, &c->body, &c->plain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            tsf_fmt_value_page vp;
            if ((st = tsf_fmt_parse_value_page(p, len, vk.body, &vp, err))) return st;
            if (vp.row_count != n)
                return tsf_err(err, TSF_ECORRUPT,
                               "value page at %llu: %u rows but its time page at %llu has %zu",
                               (unsigned long long)vk.body, vp.row_count, (unsigned long long)tk.body, n);
            if ((st = decode_vals(c, vk.h.encoding, vp.values, vp.values_len, vp.present, vk.body, err)))
                return st;
            /* times of the present rows */
            if ((st = tsf_rd_buf_reserve(c->a, &c->ptimes, (vp.present ? vp.present : 1) * sizeof(int64_t), err)))
                return st;
            const int64_t *t = (const int64_t *)c->times.p;
            int64_t *pt = (int64_t *)c->ptimes.p;
            size_t m = 0;
            for (size_t i = 0; i < n && m < vp.present; i++)
                if (tsf_fmt_bitmap_get(vp.bitmap, i)) pt[m++] = t[i];
            if ((st = agg_check_page(c, &vk, &cs, NULL, 0, 1, m ? pt[0] : 0, m ? pt[m - 1] : 0, vp.present, err)))
                return st;
            c->res->info.pages_decoded++;
            if ((st = put_values(c, pt, c->vals.p, m, err))) return st;
        }
        if ((st = chunk_flush(c, err))) return st;
    }
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    return TSF_OK;
}

/* ---- public API ------------------------------------------------------------------------------- */

static void fill_stats(tsf_type type, const acc *x, tsf_stats *o)
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

void tsf_agg_result_free(tsf_agg_result *res)
{
    if (!res) return;
    for (size_t i = 0; i < res->n; i++) acc_free(res->a, &res->w[i].a);
    tsf_free(res->a, res->w, res->cap * sizeof *res->w);
    tsf_free(res->a, res->out, res->nout * sizeof *res->out);
    tsf_free(res->a, res, sizeof *res);
}

size_t tsf_agg_result_count(const tsf_agg_result *res)
{
    return res ? res->n : 0;
}

const tsf_agg_window *tsf_agg_result_window(const tsf_agg_result *res, size_t i)
{
    return res && i < res->n ? &res->out[i] : NULL;
}

void tsf_agg_result_info(const tsf_agg_result *res, tsf_agg_info *out)
{
    if (!out) return;
    if (res)
        *out = res->info;
    else
        memset(out, 0, sizeof *out);
}

static void ctx_free(agg_ctx *c)
{
    tsf_rd_buf *bufs[] = {&c->hdr,    &c->thdr,  &c->body, &c->plain, &c->tbody,
                      &c->tplain, &c->times, &c->vals, &c->ptimes};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tsf_rd_buf_free(c->a, bufs[i]);
    acc_free(c->a, &c->cp);
    tsf_compressor_close(c->comp);
}

/* BLOB statistics give count and times only: the value at time t of a window answered from them is
 * decoded afterwards, from the page(s) holding t alone. */
static tsf_status blob_at(tsf_reader *r, size_t device, size_t series, int64_t t, int checked, acc *x, int k,
                          tsf_agg_info *info, tsf_error *err)
{
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.checked = checked;
    o.time_min = o.time_max = t;
    o.force_decode = 1;
    tsf_agg_result *one;
    tsf_status st = tsf_aggregate(r, device, series, &o, &one, err);
    if (st) return st;
    info->pages_decoded += one->info.pages_decoded;
    if (one->n != 1)
        st = tsf_err(err, TSF_ECORRUPT,
                     "BLOB series %zu of device %zu: statistics list a point at time %lld, no page "
                     "holds it",
                     series, device, (long long)t);
    else
        st = own_bytes(r->a, x, k, k == B_FIRST ? one->out[0].stats.first_b : one->out[0].stats.last_b, err);
    if (k == B_FIRST)
        x->unk_first = 0;
    else
        x->unk_last = 0;
    tsf_agg_result_free(one);
    return st;
}

tsf_status tsf_aggregate(tsf_reader *r, size_t device, size_t series, const tsf_agg_options *opts,
                         tsf_agg_result **out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_aggregate: reader and out are required");
    *out = NULL;
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_agg_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    if (o.window < 0) return tsf_err(err, TSF_EINVAL, "tsf_aggregate: window %lld < 0", (long long)o.window);
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    if (device >= r->ndevices || series >= r->devices[device].nseries)
        return tsf_err(err, TSF_EINVAL, "tsf_aggregate: series %zu of device %zu does not exist", series,
                       device);
    const tsf_rd_device *d = &r->devices[device];
    const tsf_rd_series *s = &r->series[d->series0 + series];
    agg_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.a = r->a;
    c.type = s->tsm.data_type;
    c.esz = tsf_rd_cell_size(c.type);
    c.tmin = o.time_min;
    c.tmax = o.time_max;
    c.w = o.window;
    c.origin = o.window_origin;
    c.force = o.force_decode;
    c.lossy_type = c.type == TSF_FLOAT || c.type == TSF_DOUBLE;
    if ((c.checked = tsf_rd_checked_of(r, o.checked)) < 0)
        return tsf_err(err, TSF_EINVAL, "tsf_aggregate: checked %d: -1, 0 or 1", o.checked);
    c.level = tsf_rd_check_level(tsf_codec_get_path(r->codec));
    if (!tsf_fmt_stats_type_ok(c.type) || c.type == TSF_VECTOR)
        return tsf_err(err, TSF_ENOTSUP, "tsf_aggregate: series %s has type %d", s->name, (int)c.type);
    tsf_agg_result *res = tsf_calloc(r->a, 1, sizeof *res);
    if (!res) return tsf_err(err, TSF_ENOMEM, "aggregate: out of memory");
    res->a = r->a;
    c.res = res;
    if ((st = tsf_compressor_open(&c.comp, r->a, err))) goto fail;
    if (c.checked && tsf_rd_check_range(&s->tsm.stats, c.why, sizeof c.why)) {
        st = tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata of %s.%s: %s", d->name, s->name, c.why);
        goto fail;
    }
    if (o.time_min <= o.time_max && !out_of_range(&c, s->tsm.stats.start_time, s->tsm.stats.end_time)) {
        st = d->aligned ? agg_aligned(&c, d, s, err) : agg_nonaligned(&c, s, err);
        if (st) goto fail;
    }
    if ((st = chunk_flush(&c, err))) goto fail;
    for (size_t i = 0; i < res->n && !st; i++) {
        acc *x = &res->w[i].a;
        if (x->unk_first) st = blob_at(r, device, series, x->t0, c.checked, x, B_FIRST, &res->info, err);
        if (!st && x->unk_last) st = blob_at(r, device, series, x->t1, c.checked, x, B_LAST, &res->info, err);
    }
    if (st) goto fail;
    res->out = tsf_calloc(r->a, res->n ? res->n : 1, sizeof *res->out);
    res->nout = res->n ? res->n : 1;
    if (!res->out) {
        res->nout = 0;
        st = tsf_err(err, TSF_ENOMEM, "aggregate: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < res->n; i++) {
        res->out[i].start = res->w[i].start;
        res->out[i].end = res->w[i].last == INT64_MAX ? INT64_MAX : res->w[i].last + 1;
        fill_stats(c.type, &res->w[i].a, &res->out[i].stats);
    }
    ctx_free(&c);
    *out = res;
    return TSF_OK;
fail:
    ctx_free(&c);
    tsf_agg_result_free(res);
    return st;
}

/* Encoding of the series' last chunk (its trust). */
static tsf_status last_chunk_encoding(tsf_reader *r, const tsf_rd_device *d, const tsf_rd_series *s,
                                      tsf_encoding *enc, tsf_error *err)
{
    size_t pos = 0;
    uint64_t off = 0, o;
    tsf_fmt_stats cs;
    tsf_status st;
    tsf_error e;
    int any = 0;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &o, &cs, &e)) == TSF_OK)
        if (cs.count) off = o, any = 1;
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    if (!any)
        return tsf_err(err, TSF_ECORRUPT, "series %s: statistics count points but no chunk has any", s->name);
    tsf_rd_buf b = {0};
    tsf_fmt_chunk_header h;
    uint64_t dp, de, fetched = 0;
    st = tsf_rd_read_chunk_header(r, off, &b, &h, &dp, &de, &fetched, err);
    tsf_rd_buf_free(r->a, &b);
    if (st) return st;
    if (tsf_fmt_chunk_kind(h.marker) != (d->aligned ? TSF_CHUNK_VALUE : TSF_CHUNK_NONALIGNED))
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: marker 0x%02x is not the chunk the index lists",
                       (unsigned long long)off, h.marker);
    *enc = h.encoding;
    return TSF_OK;
}

static void set_value(tsf_type type, const tsf_stats *s, tsf_value *v)
{
    switch (type) {
    case TSF_BOOLEAN:
        v->v.b = (int)s->last_i;
        break;
    case TSF_INT32:
    case TSF_DATE:
        v->v.i32 = (int32_t)s->last_i;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        v->v.i64 = s->last_i;
        break;
    case TSF_FLOAT:
        v->v.f = (float)s->last;
        break;
    case TSF_DOUBLE:
        v->v.d = s->last;
        break;
    default:
        v->v.bytes = s->last_b;
    }
}

/* Decoded BLOB last values, one per series of the reader, kept until it closes (the API returns borrowed
 * bytes). Filled under r->lock; a value once set never changes. */
struct tsf_rd_lastv {
    uint8_t *p;
    size_t len;
    int set;
};

void tsf_rd_lastv_free(tsf_reader *r)
{
    if (!r->lastv) return;
    for (size_t i = 0; i < r->nseries; i++)
        if (r->lastv[i].set) tsf_free(r->a, r->lastv[i].p, r->lastv[i].len ? r->lastv[i].len : 1);
    tsf_free(r->a, r->lastv, r->nseries * sizeof *r->lastv);
    r->lastv = NULL;
}

static tsf_status last_blob(tsf_reader *r, size_t device, size_t series, int64_t t, tsf_value *value,
                            tsf_error *err)
{
    size_t gi = r->devices[device].series0 + series;
    int have = 0;
    pthread_mutex_lock(&r->lock);
    if (r->lastv && r->lastv[gi].set) {
        value->v.bytes.data = r->lastv[gi].p;
        value->v.bytes.len = r->lastv[gi].len;
        have = 1;
    }
    pthread_mutex_unlock(&r->lock);
    if (have) return TSF_OK;
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.time_min = o.time_max = t;
    o.force_decode = 1;
    tsf_agg_result *res;
    tsf_status st = tsf_aggregate(r, device, series, &o, &res, err);
    if (st) return st;
    if (res->n != 1) {
        tsf_agg_result_free(res);
        return tsf_err(err, TSF_ECORRUPT,
                       "BLOB series %zu of device %zu: statistics end at time %lld, no page holds it", series,
                       device, (long long)t);
    }
    tsf_bytes b = res->out[0].stats.last_b;
    pthread_mutex_lock(&r->lock);
    if (!r->lastv) r->lastv = tsf_calloc(r->a, r->nseries, sizeof *r->lastv);
    if (!r->lastv) {
        st = tsf_err(err, TSF_ENOMEM, "tsf_last_value: out of memory");
    } else if (!r->lastv[gi].set) {
        uint8_t *p = tsf_alloc(r->a, b.len ? b.len : 1);
        if (!p) {
            st = tsf_err(err, TSF_ENOMEM, "tsf_last_value: out of memory");
        } else {
            if (b.len) memcpy(p, b.data, b.len);
            r->lastv[gi].p = p;
            r->lastv[gi].len = b.len;
            r->lastv[gi].set = 1;
        }
    }
    if (!st) {
        value->v.bytes.data = r->lastv[gi].p;
        value->v.bytes.len = r->lastv[gi].len;
    }
    pthread_mutex_unlock(&r->lock);
    tsf_agg_result_free(res);
    return st;
}

tsf_status tsf_last_value(tsf_reader *r, size_t device, size_t series, int64_t *time, tsf_value *value,
                          int *found, tsf_error *err)
{
    if (!r || !time || !value || !found)
        return tsf_err(err, TSF_EINVAL, "tsf_last_value: reader, time, value and found are required");
    *found = 0;
    memset(value, 0, sizeof *value);
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    if (device >= r->ndevices || series >= r->devices[device].nseries)
        return tsf_err(err, TSF_EINVAL, "tsf_last_value: series %zu of device %zu does not exist", series,
                       device);
    const tsf_rd_device *d = &r->devices[device];
    const tsf_rd_series *s = &r->series[d->series0 + series];
    const tsf_fmt_stats *ss = &s->tsm.stats;
    tsf_type type = s->tsm.data_type;
    if (!ss->count) return TSF_OK;
    if (type == TSF_BLOB) { /* statistics hold no BLOB value: decode the page holding the end time */
        if ((st = last_blob(r, device, series, ss->end_time, value, err))) return st;
        *time = ss->end_time;
        *found = 1;
        return TSF_OK;
    }
    int trusted = 1;
    if (type == TSF_FLOAT || type == TSF_DOUBLE) {
        tsf_encoding enc = TSF_ENC_PLAIN;
        if ((st = last_chunk_encoding(r, d, s, &enc, err))) return st;
        trusted = !tsf_rd_lossy(type, enc);
    }
    tsf_stats out;
    if (trusted) {
        acc x;
        acc_from_stats(&x, ss);
        fill_stats(type, &x, &out);
        *time = ss->end_time;
        set_value(type, &out, value);
        *found = 1;
        return TSF_OK;
    }
    /* lossy FLOAT/DOUBLE: decode the page(s) holding the last time */
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.time_min = o.time_max = ss->end_time;
    o.force_decode = 1;
    tsf_agg_result *res;
    if ((st = tsf_aggregate(r, device, series, &o, &res, err))) return st;
    if (res->n) {
        *time = res->out[0].stats.end_time;
        set_value(type, &res->out[0].stats, value);
        *found = 1;
    }
    tsf_agg_result_free(res);
    return TSF_OK;
}
