/*
 * check.c - checked reads (check.h): the summary of a decoded page (count, times, min, max, first, last,
 * exact sums) compared with the statistics the page promises, by verify's rules (tsf_vs_stats_differ).
 *
 * min/max follow the writer's fold (tsf_wstats_update: start from the first value, replace on a strict < or
 * >; a NaN never replaces, a leading NaN stays): the kernels start every lane from the first value and take
 * MIN(x, m) = x < m ? x : m per lane, so the lanes' result is the fold's up to which of -0.0 / +0.0 wins a
 * tie, which tsf_vs_stats_differ compares as equal. Integer sums wrap in int64 (the accumulator type; INT32
 * sums cannot wrap in a page). Each SIMD kernel has the portable loop as its twin; the tests run every path.
 */
#include <stdio.h>
#include <string.h>

#include "../common/compiler.h"
#include "check.h"
#include "verify_scan.h"

#ifdef TSF_X86
#include <immintrin.h>
#endif

int tsf_rd_check_level(tsf_codec_path path)
{
#ifdef TSF_X86
    if (path == TSF_PATH_AVX512 && (tsf_cpu_features() & TSF_CPU_AVX512)) return 2;
    if ((path == TSF_PATH_AVX512 || path == TSF_PATH_AVX2) && (tsf_cpu_features() & TSF_CPU_AVX2)) return 1;
#else
    (void)path;
#endif
    return 0;
}

/* ---- kernels: ascending times (INT64 and DOUBLE folds: the codec's tsf_i64_summary, tsf_f64_fold) -- */

static size_t asc_portable(const int64_t *t, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (t[i] <= t[i - 1]) return i;
    return n;
}

#ifdef TSF_X86
/* First row i >= from whose time does not ascend (n if none), after a vector pass found `bad` or not. */
static size_t asc_finish(int bad, const int64_t *t, size_t from, size_t n)
{
    if (bad) return asc_portable(t, n);
    for (size_t i = from; i < n; i++)
        if (t[i] <= t[i - 1]) return i;
    return n;
}

TSF_TARGET("avx2") static size_t asc_avx2(const int64_t *t, size_t n)
{
    size_t i = 1;
    __m256i ok = _mm256_set1_epi64x(-1);
    for (; i + 4 <= n; i += 4) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(t + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(t + i - 1));
        ok = _mm256_and_si256(ok, _mm256_cmpgt_epi64(a, b));
    }
    return asc_finish(_mm256_movemask_epi8(ok) != -1, t, i, n);
}

TSF_TARGET("avx512f") static size_t asc_avx512(const int64_t *t, size_t n)
{
    size_t i = 1;
    __mmask8 bad = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i a = _mm512_loadu_si512((const void *)(t + i));
        __m512i b = _mm512_loadu_si512((const void *)(t + i - 1));
        bad |= _mm512_cmple_epi64_mask(a, b);
    }
    return asc_finish(bad != 0, t, i, n);
}
#endif

static size_t ascending(int level, const int64_t *t, size_t n)
{
#ifdef TSF_X86
    if (level == 2) return asc_avx512(t, n);
    if (level == 1) return asc_avx2(t, n);
#endif
    (void)level;
    return asc_portable(t, n);
}

/* The codec path whose fold kernels match a check level. */
static tsf_codec_path fold_path(int level)
{
    return level == 2 ? TSF_PATH_AVX512 : level == 1 ? TSF_PATH_AVX2 : TSF_PATH_SCALAR;
}

/* ---- checks ----------------------------------------------------------------------------------- */

int tsf_rd_checked_of(const tsf_reader *r, int opt)
{
    if (opt == -1) return r->checked;
    return opt == 0 || opt == 1 ? opt : -1;
}

int tsf_rd_check_times(int level, const tsf_fmt_stats *s, const int64_t *t, size_t n, const tsf_dec_summary *pre,
                   char *why, size_t cap)
{
    tsf_wstats w;
    tsf_wstats_init(&w, TSF_VECTOR);
    w.count = n;
    if (n) w.start = t[0], w.end = t[n - 1];
    if (tsf_vs_stats_differ(&w, s, 0, why, cap)) return 1;
    size_t i = pre && (pre->what & TSF_SUM_ASCENDING) ? pre->unordered : ascending(level, t, n);
    if (i < n) {
        snprintf(why, cap, "time %lld at row %zu is not above %lld", (long long)t[i], i, (long long)t[i - 1]);
        return 1;
    }
    return 0;
}

static int bytes_cmp(const tsf_bytes *a, const tsf_bytes *b)
{
    size_t m = a->len < b->len ? a->len : b->len;
    int c = m ? memcmp(a->data, b->data, m) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A borrowed view of bytes in a tsf_wstats (cap 0: nothing to free; tsf_vs_stats_differ only reads). */
static tsf_sbin view(const tsf_bytes *b)
{
    return (tsf_sbin){(uint8_t *)(uintptr_t)b->data, b->len, 0};
}

int tsf_rd_check_values(int level, tsf_type type, tsf_encoding enc, const tsf_fmt_stats *s, int64_t t0,
                    int64_t t1, const void *v, size_t n, const tsf_dec_summary *pre, char *why, size_t cap)
{
    tsf_wstats w;
    tsf_wstats_init(&w, type);
    unsigned what = tsf_vs_cmp_rule(type, enc);
    w.count = n;
    w.start = t0;
    w.end = t1;
    if (!n || !(what & VS_CMP_VALUES))
        return tsf_vs_stats_differ(&w, s, what & ~(unsigned)VS_CMP_VALUES, why, cap);
    switch (type) {
    case TSF_BOOLEAN: {
        const uint8_t *b = v;
        int64_t k = 0;
        for (size_t i = 0; i < n; i++) k += b[i] != 0;
        w.v.i.first = b[0] != 0, w.v.i.last = b[n - 1] != 0, w.v.i.sum = k;
        break;
    }
    case TSF_INT32:
    case TSF_DATE: {
        const int32_t *x = v;
        int32_t mn = x[0], mx = x[0];
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            mn = x[i] < mn ? x[i] : mn;
            mx = x[i] > mx ? x[i] : mx;
            sum += x[i];
        }
        w.v.i.min = mn, w.v.i.max = mx, w.v.i.first = x[0], w.v.i.last = x[n - 1], w.v.i.sum = sum;
        break;
    }
    case TSF_INT64:
    case TSF_TIMESTAMP: {
        const int64_t *x = v;
        tsf_dec_summary own;
        if (!pre || !(pre->what & TSF_SUM_VALUES)) {
            tsf_i64_summary(fold_path(level), x, n, &own);
            pre = &own;
        }
        w.v.l.min = pre->min, w.v.l.max = pre->max, w.v.l.first = x[0], w.v.l.last = x[n - 1];
        /* the int64 sum wraps where the writer's double rounds; within the bound both are the integer sum */
        if (tsf_vs_i64_sum_exact(pre->min, pre->max, n)) {
            w.v.l.sum = (double)(int64_t)pre->sum;
        } else {
            what &= ~(unsigned)VS_CMP_SUM;
        }
        break;
    }
    case TSF_FLOAT: {
        const float *x = v;
        float mn = x[0], mx = x[0];
        for (size_t i = 1; i < n; i++) {
            if (x[i] < mn) mn = x[i];
            if (x[i] > mx) mx = x[i];
        }
        w.v.f.min = mn, w.v.f.max = mx, w.v.f.first = x[0], w.v.f.last = x[n - 1];
        what &= ~(unsigned)VS_CMP_SUM;
        break;
    }
    case TSF_DOUBLE: {
        const double *x = v;
        if (pre && (pre->what & TSF_SUM_VALUES)) {
            w.v.d.min = pre->dmin, w.v.d.max = pre->dmax;
        } else {
            w.v.d.min = w.v.d.max = x[0];
            tsf_f64_fold(fold_path(level), x, n, &w.v.d.min, &w.v.d.max);
        }
        w.v.d.first = x[0], w.v.d.last = x[n - 1];
        what &= ~(unsigned)VS_CMP_SUM;
        break;
    }
    case TSF_TEXT:
    case TSF_STRING: {
        const tsf_bytes *x = v;
        w.first = view(&x[0]);
        w.last = view(&x[n - 1]);
        if (type == TSF_STRING) {
            size_t imin = 0, imax = 0;
            for (size_t i = 1; i < n; i++) {
                if (bytes_cmp(&x[i], &x[imin]) < 0) imin = i;
                if (bytes_cmp(&x[i], &x[imax]) > 0) imax = i;
            }
            w.min = view(&x[imin]);
            w.max = view(&x[imax]);
        }
        break;
    }
    default: /* BLOB: statistics hold counts and times only */
        break;
    }
    return tsf_vs_stats_differ(&w, s, what, why, cap);
}

int tsf_rd_check_range(const tsf_fmt_stats *s, char *why, size_t cap)
{
    if (s->count && s->start_time > s->end_time) {
        snprintf(why, cap, "%llu values but startTime %lld is after endTime %lld", (unsigned long long)s->count,
                 (long long)s->start_time, (long long)s->end_time);
        return 1;
    }
    return 0;
}

const tsf_fmt_stats *tsf_rd_page_stats(const tsf_fmt_chunk_header *h, const tsf_fmt_page_header *ph,
                                   const tsf_fmt_stats *cs)
{
    if (ph->has_stats) return &ph->stats;
    return tsf_fmt_chunk_multi_page(h->marker) ? NULL : cs;
}

tsf_status tsf_rd_check_range_at(int checked, const tsf_fmt_stats *s, const tsf_fmt_page_header *ph,
                                 uint64_t page_off, uint64_t chunk_off, tsf_error *err)
{
    char why[160];
    if (!checked || !tsf_rd_check_range(s, why, sizeof why)) return TSF_OK;
    if (ph) return tsf_rd_check_error(ph, page_off, chunk_off, why, err);
    return tsf_err(err, TSF_ECORRUPT, "ChunkMetadata of the chunk at %llu: %s", (unsigned long long)chunk_off, why);
}

tsf_status tsf_rd_check_error(const tsf_fmt_page_header *ph, uint64_t page_off, uint64_t chunk_off,
                          const char *why, tsf_error *err)
{
    if (ph->has_stats)
        return tsf_err(err, TSF_ECORRUPT, "page statistics at %llu: %s", (unsigned long long)page_off, why);
    return tsf_err(err, TSF_ECORRUPT,
                   "ChunkMetadata statistics of the chunk at %llu (its one page at %llu): %s",
                   (unsigned long long)chunk_off, (unsigned long long)page_off, why);
}
