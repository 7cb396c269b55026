/*
 * index_ref.h - helpers of the learned-index tests: deterministic key generators (the shapes of the
 * benchmark's data sets, small) and a reference map (open addressing) to diff the index against.
 */
#ifndef TSF_TEST_INDEX_REF_H
#define TSF_TEST_INDEX_REF_H

#include <math.h>
#include <stdlib.h>

#include "test.h"
#include "tsf_index.h"

static inline int ref_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts and removes duplicates; returns the new count. */
static inline size_t ref_sort_unique(uint64_t *k, size_t n)
{
    qsort(k, n, 8, ref_cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || k[i] != k[m - 1]) k[m++] = k[i];
    return m;
}

enum { GEN_UNIFORM, GEN_DENSE, GEN_CLUSTERED, GEN_TIMESTAMPS, GEN_LOGNORMAL, GEN_EXTREMES, GEN_COUNT };
static const char *const GEN_NAMES[GEN_COUNT] = {"uniform",    "dense",     "clustered",
                                                 "timestamps", "lognormal", "extremes"};

/* Fills k with about n sorted unique keys of a shape; returns the count. */
static inline size_t ref_gen(int gen, uint64_t *k, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    switch (gen) {
    case GEN_UNIFORM:
        for (size_t i = 0; i < n; i++) k[i] = tsf_test_rand(&s);
        break;
    case GEN_DENSE:
        for (size_t i = 0; i < n; i++) k[i] = 42 + i;
        break;
    case GEN_CLUSTERED: /* osm-like: a few hundred dense clusters with Zipf-ish sizes */
        for (size_t i = 0; i < n; i++) {
            uint64_t c = tsf_test_rand(&s) % 256;
            c = c * c / 256; /* skew towards small cluster ids */
            uint64_t centre = (c * UINT64_C(0x9E3779B97F4A7C15)) >> 2;
            k[i] = centre + (tsf_test_rand(&s) >> (24 + c % 16));
        }
        break;
    case GEN_TIMESTAMPS: { /* 1 s period, jitter, occasional gaps and bursts, as signed ms */
        int64_t t = INT64_C(1600000000000);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = tsf_test_rand(&s);
            if (r % 1000 == 0) t += (int64_t)(r >> 40) % 86400000; /* gap */
            t += (r % 100 < 2) ? 100 : 1000 + (int64_t)((r >> 8) % 201) - 100;
            k[i] = tsf_index_key_from_i64(t);
        }
        break;
    }
    case GEN_LOGNORMAL:
        for (size_t i = 0; i < n; i++) {
            double u1 = ((tsf_test_rand(&s) >> 11) + 1) * (1.0 / 9007199254740993.0);
            double u2 = (tsf_test_rand(&s) >> 11) * (1.0 / 9007199254740992.0);
            double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
            double x = exp(2.0 * z) * 1e9;
            k[i] = x >= 1.8e19 ? UINT64_MAX - (tsf_test_rand(&s) & 0xffff) : (uint64_t)x;
        }
        break;
    default: /* extremes: 0, 2^64-1, INT64_MIN/MAX images, and random keys around them */
        for (size_t i = 0; i < n; i++) {
            uint64_t r = tsf_test_rand(&s);
            switch (i % 4) {
            case 0:
                k[i] = r % 1000;
                break;
            case 1:
                k[i] = UINT64_MAX - r % 1000;
                break;
            case 2:
                k[i] = tsf_index_key_from_i64(INT64_MIN) + r % 1000;
                break;
            default:
                k[i] = r;
                break;
            }
        }
        if (n >= 4) {
            k[0] = 0;
            k[1] = UINT64_MAX;
            k[2] = tsf_index_key_from_i64(INT64_MIN);
            k[3] = tsf_index_key_from_i64(INT64_MAX);
        }
        break;
    }
    return ref_sort_unique(k, n);
}

/* Reference map: open addressing over uint64 keys (no reserved key: an occupancy byte). */
typedef struct ref_map {
    uint64_t *k, *v;
    uint8_t *used; /* 0 empty, 1 live, 2 deleted */
    size_t cap, live;
} ref_map;

static inline void ref_init(ref_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < n * 2 + 16) m->cap *= 2;
    m->k = calloc(m->cap, 8);
    m->v = calloc(m->cap, 8);
    m->used = calloc(m->cap, 1);
    m->live = 0;
}
static inline void ref_free(ref_map *m)
{
    free(m->k);
    free(m->v);
    free(m->used);
}
static inline size_t ref_slot(const ref_map *m, uint64_t k)
{
    uint64_t h = k * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->used[i] && m->k[i] != k) i = (i + 1) & (m->cap - 1);
    return i;
}
static inline void ref_put(ref_map *m, uint64_t k, uint64_t v)
{
    size_t i = ref_slot(m, k);
    if (m->used[i] != 1) m->live++;
    m->used[i] = 1;
    m->k[i] = k;
    m->v[i] = v;
}
static inline int ref_get(const ref_map *m, uint64_t k, uint64_t *v)
{
    size_t i = ref_slot(m, k);
    if (m->used[i] != 1) return 0;
    *v = m->v[i];
    return 1;
}
static inline void ref_del(ref_map *m, uint64_t k)
{
    size_t i = ref_slot(m, k);
    if (m->used[i] == 1) {
        m->used[i] = 2;
        m->live--;
    }
}
/* Live keys sorted into a new array (caller frees); *n receives the count. */
static inline uint64_t *ref_sorted(const ref_map *m, size_t *n)
{
    uint64_t *a = malloc((m->live ? m->live : 1) * 8);
    size_t j = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i] == 1) a[j++] = m->k[i];
    qsort(a, j, 8, ref_cmp_u64);
    *n = j;
    return a;
}

/* Index of the first element >= x in sorted a[0..n). */
static inline size_t ref_lb(const uint64_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct scan_buf {
    uint64_t *k, *v;
    size_t n, cap, stop_after;
} scan_buf;

static inline int scan_collect(uint64_t k, uint64_t v, void *arg)
{
    scan_buf *b = arg;
    if (b->n < b->cap) {
        b->k[b->n] = k;
        b->v[b->n] = v;
    }
    b->n++;
    return b->stop_after && b->n >= b->stop_after;
}

#endif
