/*
 * index_data.c - the key sets of the index benchmark: uniform, normal, lognormal, and stand-ins of osm,
 * fb, genome and planet, and time-series timestamps (regular, jittered, gappy, bursty, late arrivals),
 * sorted and unique.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "index_bench.h"
#include "tsf_index.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* LSD radix sort, 16-bit digits (the generators at 1e8 keys: qsort alone took ~15 s); 0 = no memory. */
static int radix_sort(uint64_t *k, size_t n)
{
    uint64_t *t = malloc(n * 8);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!t || !cnt) {
        free(t);
        free(cnt);
        return 0;
    }
    uint64_t *a = k, *b = t;
    for (int d = 0; d < 64; d += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[a[i] >> d & 0xffff]++;
        size_t sum = 0;
        for (size_t j = 0; j < 65536; j++) {
            size_t c = cnt[j];
            cnt[j] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) b[cnt[a[i] >> d & 0xffff]++] = a[i];
        uint64_t *x = a;
        a = b;
        b = x;
    }
    free(t); /* four passes: the result is back in k */
    free(cnt);
    return 1;
}

size_t ixb_sort_unique(uint64_t *k, size_t n)
{
    if (n < (1u << 16) || !radix_sort(k, n)) qsort(k, n, 8, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || k[i] != k[m - 1]) k[m++] = k[i];
    return m;
}

static double gauss(bench_rng *r)
{
    double u1 = bench_rng_double(r, 1e-300, 1.0), u2 = bench_rng_double(r, 0.0, 1.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint64_t clamp_key(double x)
{
    return x <= 0 ? 0 : x >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)x;
}

/* 3-bit-per-level Hilbert-like interleave of 30-bit x/y (Z-order is enough for the clustering shape). */
static uint64_t zorder(uint32_t x, uint32_t y)
{
    uint64_t z = 0;
    for (int b = 29; b >= 0; b--) z = z << 2 | ((uint64_t)(x >> b & 1) << 1) | (y >> b & 1);
    return z;
}

/* Stand-ins of the data sets follow learned-index.md section 3.2. */
size_t ixb_gen_dataset(const char *name, uint64_t *k, size_t n, uint64_t *late, size_t *nlate)
{
    bench_rng r = {42};
    *nlate = 0;
    if (!strcmp(name, "uniform")) {
        for (size_t i = 0; i < n; i++) k[i] = bench_rng_next(&r);
    } else if (!strcmp(name, "normal") || !strcmp(name, "lognormal")) {
        int logn = name[0] == 'l';
        double *x = malloc(n * sizeof *x), lo = 1e300, hi = -1e300;
        for (size_t i = 0; i < n; i++) {
            x[i] = logn ? exp(2.0 * gauss(&r)) : gauss(&r);
            if (x[i] < lo) lo = x[i];
            if (x[i] > hi) hi = x[i];
        }
        for (size_t i = 0; i < n; i++) k[i] = clamp_key((x[i] - lo) / (hi - lo) * 9.223372036854775807e18);
        free(x);
    } else if (!strcmp(name, "osm")) { /* Gaussian city clusters with Zipf weights, Z-order cell ids */
        enum { C = 150 };
        double cx[C], cy[C], sg[C], w[C], tot = 0;
        for (int c = 0; c < C; c++) {
            cx[c] = bench_rng_double(&r, 0, 1);
            cy[c] = bench_rng_double(&r, 0, 1);
            sg[c] = bench_rng_double(&r, 0.0003, 0.015);
            tot += w[c] = 1.0 / (c + 1);
        }
        for (size_t i = 0; i < n; i++) {
            double px, py;
            if (bench_rng_next(&r) % 10 == 0) {
                px = bench_rng_double(&r, 0, 1);
                py = bench_rng_double(&r, 0, 1);
            } else {
                double u = bench_rng_double(&r, 0, tot);
                int c = 0;
                while (c < C - 1 && (u -= w[c]) > 0) c++;
                px = cx[c] + sg[c] * gauss(&r);
                py = cy[c] + sg[c] * gauss(&r);
            }
            px = px < 0 ? 0 : px >= 1 ? 0.999999999 : px;
            py = py < 0 ? 0 : py >= 1 ? 0.999999999 : py;
            uint64_t face = bench_rng_next(&r) % 6;
            k[i] = face << 61 | zorder((uint32_t)(px * 1073741824.0), (uint32_t)(py * 1073741824.0)) << 1 | 1;
        }
    } else if (!strcmp(name, "fb")) { /* monotone walk, batch-allocated runs, 5 outliers near 2^64 */
        uint64_t x = 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t u = bench_rng_next(&r);
            if (u % 100 < 3)
                x += 1 + u % 3; /* inside an allocation batch */
            else if (u % 1000 == 999)
                x += (u >> 20) % 50000000; /* a large jump */
            else
                x += 1 + (uint64_t)(-log(bench_rng_double(&r, 1e-12, 1)) * 5000.0);
            k[i] = x;
        }
        for (size_t i = 0; i < 5 && i < n; i++) k[n - 1 - i] = UINT64_MAX - i * (UINT64_MAX / 9);
    } else if (!strcmp(name, "genome")) { /* heavy-tailed gaps with regime switches */
        uint64_t x = 2490000;
        double scale = 1000;
        for (size_t i = 0; i < n; i++) {
            if (bench_rng_next(&r) % 100000 == 0) scale = exp(bench_rng_double(&r, 3, 9));
            double u = bench_rng_double(&r, 1e-9, 1);
            double gap = scale * (bench_rng_next(&r) % 2 ? pow(u, -1.0 / 1.2) : exp(gauss(&r)));
            x += 1 + (uint64_t)(gap > 1e9 ? 1e9 : gap);
            k[i] = x;
        }
    } else if (!strcmp(name, "planet")) { /* front-loaded ids in [1, 9.2e9] */
        for (size_t i = 0; i < n; i++) {
            double u = bench_rng_double(&r, 0, 1);
            k[i] = 1 + (uint64_t)(9.2e9 * (bench_rng_next(&r) % 5 ? u * u * u : u));
        }
    } else { /* time series (ms), learned-index.md section 3.3 presets */
        int64_t t = INT64_C(1600000000000);
        int jitter = !strcmp(name, "ts_jittered"), gappy = !strcmp(name, "ts_gappy");
        int bursty = !strcmp(name, "ts_bursty"), islate = !strcmp(name, "ts_late");
        size_t burst = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t step = 1000;
            if (gappy && bench_rng_next(&r) % 86400 == 0) step += (int64_t)(exp(gauss(&r)) * 3600000.0);
            if (bursty) {
                if (burst == 0 && bench_rng_next(&r) % 10000 == 0) burst = 1 + bench_rng_next(&r) % 2000;
                if (burst) {
                    step = 100;
                    burst--;
                }
            }
            int64_t j = jitter ? (int64_t)(gauss(&r) * 200.0) : bench_rng_int(&r, -10, 10);
            if (j <= -step) j = -step + 1;
            t += step;
            k[i] = tsf_index_key_from_i64(t + j);
            if (islate && bench_rng_next(&r) % 20 == 0) { /* 5 % arrive late: indexed after the load */
                late[(*nlate)++] = k[i];
                k[i] = 0;
                i--;
                n--;
            }
        }
    }
    size_t m = ixb_sort_unique(k, n);
    if (*nlate) *nlate = ixb_sort_unique(late, *nlate);
    return m;
}
