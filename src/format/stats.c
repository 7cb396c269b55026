/*
 * stats.c - writer statistics (spec tsfile-container-format.md §7). One pass per batch; Java's
 * comparison semantics are kept: min/max with < and > (a NaN first value stays min/max), sums in
 * the Java accumulator type (INT32/DATE/BOOLEAN int64, INT64/TIMESTAMP/FLOAT/DOUBLE double) added
 * value by value within a page and page sum by page sum when merging.
 */
#include <string.h>

#include "../common/bytes.h"
#include "../common/compiler.h"
#include "format.h"
#include "stats.h"

#ifdef TSF_X86
#include <emmintrin.h>
#endif

void tsf_wstats_init(tsf_wstats *s, tsf_type type)
{
    memset(s, 0, sizeof *s);
    s->type = type;
    s->start = INT64_MAX;
    s->end = INT64_MIN;
}

void tsf_wstats_reset(tsf_wstats *s)
{
    tsf_sbin f = s->first, l = s->last, mi = s->min, ma = s->max;
    tsf_type t = s->type;
    int oom = s->oom;
    memset(s, 0, sizeof *s);
    s->type = t;
    s->start = INT64_MAX;
    s->end = INT64_MIN;
    s->oom = oom;
    f.len = l.len = mi.len = ma.len = 0;
    s->first = f;
    s->last = l;
    s->min = mi;
    s->max = ma;
}

static void sbin_free(tsf_sbin *b, const tsf_allocator *a)
{
    if (b->p) tsf_free(a, b->p, b->cap);
    memset(b, 0, sizeof *b);
}

void tsf_wstats_free(tsf_wstats *s, const tsf_allocator *a)
{
    sbin_free(&s->first, a);
    sbin_free(&s->last, a);
    sbin_free(&s->min, a);
    sbin_free(&s->max, a);
}

static int sbin_set(tsf_sbin *b, const uint8_t *p, size_t n, const tsf_allocator *a)
{
    if (n > b->cap) {
        size_t nc = n < 16 ? 16 : n;
        uint8_t *np = tsf_alloc(a, nc);
        if (!np) return -1;
        if (b->p) tsf_free(a, b->p, b->cap);
        b->p = np;
        b->cap = nc;
    }
    if (n) memcpy(b->p, p, n);
    b->len = n;
    return 0;
}

static int bin_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return na < nb ? -1 : na > nb;
}

#define NUM_UPDATE(F, T, SUMT)                                                                      \
    do {                                                                                            \
        const T *v = (const T *)values;                                                             \
        size_t i = 0;                                                                               \
        if (s->count == 0) {                                                                        \
            s->v.F.min = s->v.F.max = s->v.F.first = v[0];                                          \
            s->v.F.sum = (SUMT)v[0];                                                                \
            i = 1;                                                                                  \
        }                                                                                           \
        T mn = s->v.F.min, mx = s->v.F.max;                                                         \
        SUMT sum = s->v.F.sum;                                                                      \
        for (; i < n; i++) {                                                                        \
            if (v[i] < mn) mn = v[i];                                                               \
            if (v[i] > mx) mx = v[i];                                                               \
            sum += (SUMT)v[i];                                                                      \
        }                                                                                           \
        s->v.F.min = mn;                                                                            \
        s->v.F.max = mx;                                                                            \
        s->v.F.sum = sum;                                                                           \
        s->v.F.last = v[n - 1];                                                                     \
    } while (0)

void tsf_wstats_update_time(tsf_wstats *s, int64_t t0, int64_t t1, size_t n)
{
    if (!n) return;
    if (s->count == 0) s->start = t0;
    s->end = t1;
    s->count += n;
}

void tsf_wstats_update(tsf_wstats *s, int64_t t0, int64_t t1, const void *values, size_t n,
                       const tsf_allocator *a)
{
    if (!n) return;
    switch (s->type) {
    case TSF_BOOLEAN: {
        const uint8_t *v = values;
        if (s->count == 0) s->v.i.first = v[0] != 0;
        int64_t sum = s->v.i.sum;
        for (size_t i = 0; i < n; i++) sum += v[i] != 0;
        s->v.i.sum = sum;
        s->v.i.last = v[n - 1] != 0;
        break;
    }
    case TSF_INT32:
    case TSF_DATE: NUM_UPDATE(i, int32_t, int64_t); break;
    case TSF_INT64:
    case TSF_TIMESTAMP: NUM_UPDATE(l, int64_t, double); break;
    case TSF_FLOAT: NUM_UPDATE(f, float, double); break;
    case TSF_DOUBLE: NUM_UPDATE(d, double, double); break;
    case TSF_TEXT:
    case TSF_STRING: {
        const tsf_bytes *v = values;
        int bad = 0;
        if (s->count == 0) bad |= sbin_set(&s->first, v[0].data, v[0].len, a);
        bad |= sbin_set(&s->last, v[n - 1].data, v[n - 1].len, a);
        if (s->type == TSF_STRING) {
            size_t imin = 0, imax = 0;
            for (size_t i = 1; i < n; i++) {
                if (bin_cmp(v[i].data, v[i].len, v[imin].data, v[imin].len) < 0) imin = i;
                if (bin_cmp(v[i].data, v[i].len, v[imax].data, v[imax].len) > 0) imax = i;
            }
            if (s->count == 0 || bin_cmp(v[imin].data, v[imin].len, s->min.p, s->min.len) < 0)
                bad |= sbin_set(&s->min, v[imin].data, v[imin].len, a);
            if (s->count == 0 || bin_cmp(v[imax].data, v[imax].len, s->max.p, s->max.len) > 0)
                bad |= sbin_set(&s->max, v[imax].data, v[imax].len, a);
        }
        if (bad) s->oom = 1;
        break;
    }
    default: break; /* BLOB: prefix only */
    }
    if (s->count == 0) s->start = t0;
    s->end = t1;
    s->count += n;
}

/* Four columns of one numeric type at once: each sum is a chain of dependent additions (latency
 * bound); four independent chains run side by side. Per column the same operations in the same
 * order as NUM_UPDATE, so the results are bit-identical. */
#define NUM_UPDATE4(F, T, SUMT)                                                                     \
    do {                                                                                            \
        const T *a0 = (const T *)values[0], *a1 = (const T *)values[1];                             \
        const T *a2 = (const T *)values[2], *a3 = (const T *)values[3];                             \
        for (int k = 0; k < 4; k++) {                                                               \
            const T v0 = ((const T *)values[k])[0];                                                 \
            if (s[k]->count == 0) {                                                                 \
                s[k]->v.F.min = s[k]->v.F.max = s[k]->v.F.first = v0;                               \
                s[k]->v.F.sum = (SUMT)v0;                                                           \
            } else {                                                                                \
                if (v0 < s[k]->v.F.min) s[k]->v.F.min = v0;                                         \
                if (v0 > s[k]->v.F.max) s[k]->v.F.max = v0;                                         \
                s[k]->v.F.sum += (SUMT)v0;                                                          \
            }                                                                                       \
        }                                                                                           \
        T mn0 = s[0]->v.F.min, mx0 = s[0]->v.F.max, mn1 = s[1]->v.F.min, mx1 = s[1]->v.F.max;       \
        T mn2 = s[2]->v.F.min, mx2 = s[2]->v.F.max, mn3 = s[3]->v.F.min, mx3 = s[3]->v.F.max;       \
        SUMT sm0 = s[0]->v.F.sum, sm1 = s[1]->v.F.sum, sm2 = s[2]->v.F.sum, sm3 = s[3]->v.F.sum;    \
        for (size_t i = 1; i < n; i++) {                                                            \
            T b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i];                                       \
            if (b0 < mn0) mn0 = b0;                                                                 \
            if (b0 > mx0) mx0 = b0;                                                                 \
            sm0 += (SUMT)b0;                                                                        \
            if (b1 < mn1) mn1 = b1;                                                                 \
            if (b1 > mx1) mx1 = b1;                                                                 \
            sm1 += (SUMT)b1;                                                                        \
            if (b2 < mn2) mn2 = b2;                                                                 \
            if (b2 > mx2) mx2 = b2;                                                                 \
            sm2 += (SUMT)b2;                                                                        \
            if (b3 < mn3) mn3 = b3;                                                                 \
            if (b3 > mx3) mx3 = b3;                                                                 \
            sm3 += (SUMT)b3;                                                                        \
        }                                                                                           \
        s[0]->v.F.min = mn0, s[0]->v.F.max = mx0, s[0]->v.F.sum = sm0, s[0]->v.F.last = a0[n - 1];  \
        s[1]->v.F.min = mn1, s[1]->v.F.max = mx1, s[1]->v.F.sum = sm1, s[1]->v.F.last = a1[n - 1];  \
        s[2]->v.F.min = mn2, s[2]->v.F.max = mx2, s[2]->v.F.sum = sm2, s[2]->v.F.last = a2[n - 1];  \
        s[3]->v.F.min = mn3, s[3]->v.F.max = mx3, s[3]->v.F.sum = sm3, s[3]->v.F.last = a3[n - 1];  \
    } while (0)

#ifdef TSF_X86
/*
 * DOUBLE twin of NUM_UPDATE4 in SSE2 (baseline x86-64): columns 0|1 and 2|3 packed in two lanes.
 * MINPD(b, mn) = b < mn ? b : mn and MAXPD(b, mx) = b > mx ? b : mx per lane (NaN and signed
 * zeros included), ADDPD(sum, b) = sum + b: the scalar loop's operations in the same order, so the
 * results are bit-identical; 3 instructions per value instead of 9 (register pressure spilled one
 * scalar sum to the stack: a store-load chain).
 */
static void update4_d_sse2(tsf_wstats *const *s, const double *const *a, size_t n)
{
    __m128d mn01 = _mm_set_pd(s[1]->v.d.min, s[0]->v.d.min), mn23 = _mm_set_pd(s[3]->v.d.min, s[2]->v.d.min);
    __m128d mx01 = _mm_set_pd(s[1]->v.d.max, s[0]->v.d.max), mx23 = _mm_set_pd(s[3]->v.d.max, s[2]->v.d.max);
    __m128d sm01 = _mm_set_pd(s[1]->v.d.sum, s[0]->v.d.sum), sm23 = _mm_set_pd(s[3]->v.d.sum, s[2]->v.d.sum);
    const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    for (size_t i = 1; i < n; i++) {
        __m128d b01 = _mm_loadh_pd(_mm_load_sd(a0 + i), a1 + i);
        __m128d b23 = _mm_loadh_pd(_mm_load_sd(a2 + i), a3 + i);
        mn01 = _mm_min_pd(b01, mn01);
        mx01 = _mm_max_pd(b01, mx01);
        sm01 = _mm_add_pd(sm01, b01);
        mn23 = _mm_min_pd(b23, mn23);
        mx23 = _mm_max_pd(b23, mx23);
        sm23 = _mm_add_pd(sm23, b23);
    }
    double mn[4], mx[4], sm[4];
    _mm_storeu_pd(mn, mn01), _mm_storeu_pd(mn + 2, mn23);
    _mm_storeu_pd(mx, mx01), _mm_storeu_pd(mx + 2, mx23);
    _mm_storeu_pd(sm, sm01), _mm_storeu_pd(sm + 2, sm23);
    for (int k = 0; k < 4; k++) {
        s[k]->v.d.min = mn[k];
        s[k]->v.d.max = mx[k];
        s[k]->v.d.sum = sm[k];
        s[k]->v.d.last = a[k][n - 1];
    }
}
#endif

int tsf_wstats_update4(tsf_wstats *const *s, int64_t t0, int64_t t1, const void *const *values, size_t n, int simd)
{
    tsf_type t = s[0]->type;
    for (int k = 1; k < 4; k++)
        if (s[k]->type != t) return -1;
    if (!n) return 0;
    switch (t) {
    case TSF_INT32:
    case TSF_DATE: NUM_UPDATE4(i, int32_t, int64_t); break;
    case TSF_INT64:
    case TSF_TIMESTAMP: NUM_UPDATE4(l, int64_t, double); break;
    case TSF_FLOAT: NUM_UPDATE4(f, float, double); break;
    case TSF_DOUBLE:
#ifdef TSF_X86
        if (simd) {
            for (int k = 0; k < 4; k++) { /* the first value of each column as NUM_UPDATE4 takes it */
                const double v0 = ((const double *)values[k])[0];
                if (s[k]->count == 0) {
                    s[k]->v.d.min = s[k]->v.d.max = s[k]->v.d.first = s[k]->v.d.sum = v0;
                } else {
                    if (v0 < s[k]->v.d.min) s[k]->v.d.min = v0;
                    if (v0 > s[k]->v.d.max) s[k]->v.d.max = v0;
                    s[k]->v.d.sum += v0;
                }
            }
            update4_d_sse2(s, (const double *const *)values, n);
            break;
        }
#endif
        NUM_UPDATE4(d, double, double);
        break;
    default: return -1;
    }
    (void)simd;
    for (int k = 0; k < 4; k++) {
        if (s[k]->count == 0) s[k]->start = t0;
        s[k]->end = t1;
        s[k]->count += n;
    }
    return 0;
}

#define NUM_MERGE(F)                                                                                \
    do {                                                                                            \
        if (dst->count == 0) {                                                                      \
            dst->v.F.min = src->v.F.min;                                                            \
            dst->v.F.max = src->v.F.max;                                                            \
            dst->v.F.first = src->v.F.first;                                                        \
            dst->v.F.sum = src->v.F.sum;                                                            \
        } else {                                                                                    \
            if (src->v.F.min < dst->v.F.min) dst->v.F.min = src->v.F.min;                           \
            if (src->v.F.max > dst->v.F.max) dst->v.F.max = src->v.F.max;                           \
            dst->v.F.sum += src->v.F.sum;                                                           \
        }                                                                                           \
        dst->v.F.last = src->v.F.last;                                                              \
    } while (0)

void tsf_wstats_merge(tsf_wstats *dst, const tsf_wstats *src, const tsf_allocator *a)
{
    if (src->count == 0) return;
    switch (dst->type) {
    case TSF_BOOLEAN:
        if (dst->count == 0) dst->v.i.first = src->v.i.first;
        dst->v.i.last = src->v.i.last;
        dst->v.i.sum += src->v.i.sum;
        break;
    case TSF_INT32:
    case TSF_DATE: NUM_MERGE(i); break;
    case TSF_INT64:
    case TSF_TIMESTAMP: NUM_MERGE(l); break;
    case TSF_FLOAT: NUM_MERGE(f); break;
    case TSF_DOUBLE: NUM_MERGE(d); break;
    case TSF_TEXT:
    case TSF_STRING: {
        int bad = 0;
        if (dst->count == 0) bad |= sbin_set(&dst->first, src->first.p, src->first.len, a);
        bad |= sbin_set(&dst->last, src->last.p, src->last.len, a);
        if (dst->type == TSF_STRING) {
            if (dst->count == 0 || bin_cmp(src->min.p, src->min.len, dst->min.p, dst->min.len) < 0)
                bad |= sbin_set(&dst->min, src->min.p, src->min.len, a);
            if (dst->count == 0 || bin_cmp(src->max.p, src->max.len, dst->max.p, dst->max.len) > 0)
                bad |= sbin_set(&dst->max, src->max.p, src->max.len, a);
        }
        if (bad) dst->oom = 1;
        break;
    }
    default: break;
    }
    if (dst->count == 0) dst->start = src->start;
    dst->end = src->end;
    dst->count += src->count;
}

/* The writer's statistics in the form the format's one statistics serialiser takes. */
static void to_fmt(const tsf_wstats *s, tsf_fmt_stats *f)
{
    tsf_fmt_stats_init(f, s->type);
    f->count = s->count;
    f->start_time = s->start;
    f->end_time = s->end;
    switch (s->type) {
    case TSF_BOOLEAN:
        f->v.b.first = (uint8_t)s->v.i.first;
        f->v.b.last = (uint8_t)s->v.i.last;
        f->v.b.sum = s->v.i.sum;
        break;
    case TSF_INT32:
    case TSF_DATE:
        f->v.i32.min = s->v.i.min;
        f->v.i32.max = s->v.i.max;
        f->v.i32.first = s->v.i.first;
        f->v.i32.last = s->v.i.last;
        f->v.i32.sum = s->v.i.sum;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        f->v.i64.min = s->v.l.min;
        f->v.i64.max = s->v.l.max;
        f->v.i64.first = s->v.l.first;
        f->v.i64.last = s->v.l.last;
        f->v.i64.sum = s->v.l.sum;
        break;
    case TSF_FLOAT:
        f->v.f32.min = s->v.f.min;
        f->v.f32.max = s->v.f.max;
        f->v.f32.first = s->v.f.first;
        f->v.f32.last = s->v.f.last;
        f->v.f32.sum = s->v.f.sum;
        break;
    case TSF_DOUBLE:
        f->v.f64.min = s->v.d.min;
        f->v.f64.max = s->v.d.max;
        f->v.f64.first = s->v.d.first;
        f->v.f64.last = s->v.d.last;
        f->v.f64.sum = s->v.d.sum;
        break;
    case TSF_TEXT:
    case TSF_STRING:
        f->v.bin.first = (tsf_bytes){s->first.p, s->first.len};
        f->v.bin.last = (tsf_bytes){s->last.p, s->last.len};
        f->v.bin.min = (tsf_bytes){s->min.p, s->min.len};
        f->v.bin.max = (tsf_bytes){s->max.p, s->max.len};
        break;
    default: break; /* BLOB, VECTOR: the common prefix only */
    }
}

void tsf_wstats_serialize(const tsf_wstats *s, tsf_wbuf *b)
{
    tsf_fmt_stats f;
    size_t n, w;
    to_fmt(s, &f);
    n = tsf_fmt_stats_size(&f);
    uint8_t *d = tsf_wbuf_reserve(b, n);
    if (d && tsf_fmt_write_stats(&f, d, n, &w, NULL) == TSF_OK) b->len += w;
}

void tsf_fmt_put_chunk_meta(tsf_wbuf *b, uint64_t chunk_offset, const tsf_wstats *s)
{
    tsf_wbuf_be64(b, chunk_offset);
    tsf_wstats_serialize(s, b);
}
