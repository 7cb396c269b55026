/*
 * index.c - E5 of ../shared/BENCHMARKS.md: the PLTree-style learned index (src/index) against
 * branchless binary search, interpolation search and a B+-tree with 256-byte nodes, on the data sets
 * of the design note (uniform, normal, lognormal, osm, fb, genome, planet stand-ins and time-series
 * timestamps), with their hardness (PLA segment counts). Latencies are measured per batch of 16
 * operations (so the clock does not dominate) and reported as p50/p90 of the per-operation time.
 * Ablations: pltree_nometa (no DRAM block metadata), pltree_local (binary search inside internal nodes:
 * TSF_INDEX_LOCAL_SEARCH, a binary search over the children's first keys in every internal node),
 * pltree_btoverflow (sorted PLTree whose inserts go to a B+-tree of 256-byte nodes instead of the overflow
 * log; compared after the same inserts with the log's rows, modes "sorted+log" / "dynamic+log").
 * Row get_vs_binary: the ratio to binary search per round, PLTree and binary search timed on
 * the same probes one right after the other (extra JSON keys baseline, ratio_p10/p50/p90, rounds).
 * Data set `tsfile_pages` (not in `all`): point queries on a TsFile with and without its page-time index.
 *
 * usage: tsf-bench index [--keys N] [--dataset NAME|all|tsfile_pages] [--threads T] [--ops N] [--reps R]
 *                        [--only LIST] [--json]
 * --reps R: the PLTree bulk_load rows load R times (a fresh file each time; p50/p90 over the loads).
 * --only LIST: comma-separated op, structure and mode names (bulk_load,get,route,binary_search,sorted...);
 * a row runs when it matches every category named. Rows whose structures would not fit in memory (the
 * estimate against MemAvailable, at most 12 GiB) are skipped with a line saying why (e.g. --keys 100000000).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "index/index_internal.h"
#include "tsf.h"
#include "index/pla.h"
#include "tsf_index.h"
#include "tsf_experimental.h"

#define BATCH 16

static const char *const DATASETS[] = {"uniform",     "normal",   "lognormal", "osm",
                                       "fb",          "genome",   "planet",    "ts_regular",
                                       "ts_jittered", "ts_gappy", "ts_bursty", "ts_late"};
#define NDATASETS (sizeof DATASETS / sizeof DATASETS[0])

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

static size_t sort_unique(uint64_t *k, size_t n)
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

/*
 * Generates about n sorted unique keys of a data set; *late receives the late arrivals of ts_late
 * (inserted after the load), *nlate their count. Stand-ins follow learned-index.md section 3.2.
 */
static size_t gen_dataset(const char *name, uint64_t *k, size_t n, uint64_t *late, size_t *nlate)
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
    size_t m = sort_unique(k, n);
    if (*nlate) *nlate = sort_unique(late, *nlate);
    return m;
}

/* ---- baselines ------------------------------------------------------------------------------- */

static inline size_t bs_lower(const uint64_t *a, size_t n, uint64_t x)
{
    const uint64_t *base = a;
    if (n == 0) return 0;
    while (n > 1) {
        size_t half = n / 2;
        base = base[half] < x ? base + half : base;
        n -= half;
    }
    return (size_t)(base - a) + (*base < x);
}

static inline size_t interp_lower(const uint64_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n; /* the answer lies in [lo, hi] */
    for (int it = 0; it < 16 && hi - lo > 16; it++) {
        uint64_t kl = a[lo], kh = a[hi - 1];
        if (x <= kl) return lo;
        if (x > kh) return hi;
        size_t p = lo + (size_t)((double)(x - kl) / (double)(kh - kl) * (double)(hi - 1 - lo));
        if (p >= hi) p = hi - 1;
        if (a[p] < x)
            lo = p + 1;
        else
            hi = p;
    }
    return lo + bs_lower(a + lo, hi - lo, x);
}

/* Static B+-tree, 256-byte nodes: inner = 16 keys + 16 child ids; leaves = 16 keys then 16 values. */
typedef struct btree {
    uint64_t *inner; /* nodes of 32 words: keys[16] (max key of each child), children[16] */
    uint64_t *leaf;  /* nodes of 32 words: keys[16], vals[16]; unused keys = UINT64_MAX */
    size_t ninner, nleaf, root, height;
} btree;

static void bt_build(btree *t, const uint64_t *k, const uint64_t *v, size_t n)
{
    t->nleaf = (n + 15) / 16;
    if (t->nleaf == 0) t->nleaf = 1;
    t->leaf = aligned_alloc(256, t->nleaf * 256);
    for (size_t l = 0; l < t->nleaf; l++)
        for (size_t s = 0; s < 16; s++) {
            size_t i = l * 16 + s;
            t->leaf[l * 32 + s] = i < n ? k[i] : UINT64_MAX;
            t->leaf[l * 32 + 16 + s] = i < n ? v[i] : 0;
        }
    size_t cap = t->nleaf, total = 0;
    for (size_t c = cap; c > 1; c = (c + 15) / 16) total += (c + 15) / 16;
    t->inner = aligned_alloc(256, (total ? total : 1) * 256);
    /* level 0 children are leaves (ids), higher levels inner ids */
    size_t count = t->nleaf, first = 0, h = 0, at = 0;
    uint64_t *maxk = malloc(count * 8);
    for (size_t l = 0; l < count; l++)
        maxk[l] = t->leaf[l * 32 + 15] != UINT64_MAX ? t->leaf[l * 32 + 15] : UINT64_MAX;
    while (count > 1) {
        size_t parents = (count + 15) / 16;
        uint64_t *pk = malloc(parents * 8);
        for (size_t p = 0; p < parents; p++) {
            uint64_t *nd = t->inner + (at + p) * 32;
            for (size_t s = 0; s < 16; s++) {
                size_t c = p * 16 + s;
                nd[s] = c < count ? maxk[c] : UINT64_MAX;
                nd[16 + s] = c < count ? first + c : first + count - 1;
            }
            pk[p] = maxk[p * 16 + 15 < count ? p * 16 + 15 : count - 1];
        }
        free(maxk);
        maxk = pk;
        first = at;
        at += parents;
        count = parents;
        h++;
    }
    free(maxk);
    t->ninner = at;
    t->root = at ? at - 1 : 0;
    t->height = h;
}

/* Position (leaf*16+slot) of the first key >= x. */
static inline size_t bt_lower(const btree *t, uint64_t x, const uint64_t **leafp)
{
    size_t node = t->root;
    for (size_t h = t->height; h > 0; h--) {
        const uint64_t *nd = t->inner + node * 32;
        size_t s = 0;
        for (int i = 0; i < 15; i++) s += nd[i] < x;
        node = nd[16 + s];
    }
    const uint64_t *lf = t->leaf + node * 32;
    size_t s = 0;
    for (int i = 0; i < 16; i++) s += lf[i] < x;
    *leafp = lf;
    return s;
}

/* Dynamic B+-tree (the pltree_btoverflow ablation's overflow): 256-byte nodes, leaves 15 pairs + next,
 * inner nodes 16 children (15 separators = the first key of children 1..); all leaves at one depth. */
typedef union dnode {
    struct {
        uint64_t key[15], val[15];
        uint32_t n, next, pad[2];
    } l;
    struct {
        uint64_t key[15];
        uint32_t child[16], n, pad[15];
    } in;
} dnode;

typedef struct dbt {
    dnode *nd;
    size_t nn, cap;
    uint32_t root;
    int height; /* inner levels */
} dbt;

static uint32_t dbt_new(dbt *t)
{
    if (t->nn == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        dnode *q = aligned_alloc(256, nc * sizeof *q);
        if (t->nn) memcpy(q, t->nd, t->nn * sizeof *q);
        free(t->nd);
        t->nd = q;
        t->cap = nc;
    }
    memset(&t->nd[t->nn], 0, sizeof *t->nd);
    return (uint32_t)t->nn++;
}

static void dbt_init(dbt *t)
{
    memset(t, 0, sizeof *t);
    t->root = dbt_new(t);
    t->nd[t->root].l.next = UINT32_MAX;
}

static inline uint32_t dbt_leaf(const dbt *t, uint64_t x)
{
    uint32_t node = t->root;
    for (int h = t->height; h > 0; h--) {
        const dnode *d = &t->nd[node];
        uint32_t s = 0;
        for (uint32_t i = 0; i + 1 < d->in.n; i++) s += d->in.key[i] <= x;
        node = d->in.child[s];
    }
    return node;
}

static inline int dbt_get(const dbt *t, uint64_t x, uint64_t *v)
{
    const dnode *d = &t->nd[dbt_leaf(t, x)];
    for (uint32_t i = 0; i < d->l.n; i++)
        if (d->l.key[i] == x) {
            *v = d->l.val[i];
            return 1;
        }
    return 0;
}

/* Inserts below node at depth h; on a split returns 1 with the new right sibling and its first key. */
static int dbt_ins(dbt *t, uint32_t node, int h, uint64_t k, uint64_t v, uint64_t *sep, uint32_t *right)
{
    if (h == 0) {
        dnode *d = &t->nd[node];
        uint32_t p = 0;
        while (p < d->l.n && d->l.key[p] < k) p++;
        if (p < d->l.n && d->l.key[p] == k) {
            d->l.val[p] = v;
            return 0;
        }
        uint64_t kk[16], vv[16];
        memcpy(kk, d->l.key, p * 8);
        memcpy(vv, d->l.val, p * 8);
        kk[p] = k, vv[p] = v;
        memcpy(kk + p + 1, d->l.key + p, (d->l.n - p) * 8);
        memcpy(vv + p + 1, d->l.val + p, (d->l.n - p) * 8);
        uint32_t n = d->l.n + 1;
        if (n <= 15) {
            memcpy(d->l.key, kk, n * 8);
            memcpy(d->l.val, vv, n * 8);
            d->l.n = n;
            return 0;
        }
        uint32_t r = dbt_new(t);
        d = &t->nd[node];
        dnode *e = &t->nd[r];
        memcpy(d->l.key, kk, 8 * 8), memcpy(d->l.val, vv, 8 * 8), d->l.n = 8;
        memcpy(e->l.key, kk + 8, 8 * 8), memcpy(e->l.val, vv + 8, 8 * 8), e->l.n = 8;
        e->l.next = d->l.next;
        d->l.next = r;
        *sep = kk[8], *right = r;
        return 1;
    }
    dnode *d = &t->nd[node];
    uint32_t s = 0;
    for (uint32_t i = 0; i + 1 < d->in.n; i++) s += d->in.key[i] <= k;
    uint64_t cs;
    uint32_t cr;
    if (!dbt_ins(t, d->in.child[s], h - 1, k, v, &cs, &cr)) return 0;
    d = &t->nd[node];
    uint64_t kk[16];
    uint32_t cc[17], n = d->in.n;
    memcpy(kk, d->in.key, s * 8), memcpy(cc, d->in.child, (s + 1) * 4);
    kk[s] = cs, cc[s + 1] = cr;
    memcpy(kk + s + 1, d->in.key + s, (n - 1 - s) * 8),
        memcpy(cc + s + 2, d->in.child + s + 1, (n - 1 - s) * 4);
    n++;
    if (n <= 16) {
        memcpy(d->in.key, kk, (n - 1) * 8), memcpy(d->in.child, cc, n * 4), d->in.n = n;
        return 0;
    }
    uint32_t r = dbt_new(t); /* 17 children: 9 left, 8 right, key 8 goes up */
    d = &t->nd[node];
    dnode *e = &t->nd[r];
    memcpy(d->in.key, kk, 8 * 8), memcpy(d->in.child, cc, 9 * 4), d->in.n = 9;
    memcpy(e->in.key, kk + 9, 7 * 8), memcpy(e->in.child, cc + 9, 8 * 4), e->in.n = 8;
    *sep = kk[8], *right = r;
    return 1;
}

static void dbt_insert(dbt *t, uint64_t k, uint64_t v)
{
    uint64_t sep;
    uint32_t r;
    if (!dbt_ins(t, t->root, t->height, k, v, &sep, &r)) return;
    uint32_t nr = dbt_new(t);
    t->nd[nr].in.key[0] = sep;
    t->nd[nr].in.child[0] = t->root;
    t->nd[nr].in.child[1] = r;
    t->nd[nr].in.n = 2;
    t->root = nr;
    t->height++;
}

/* Up to max pairs with key >= x in order. */
static size_t dbt_scan(const dbt *t, uint64_t x, uint64_t *k, uint64_t *v, size_t max)
{
    uint32_t node = dbt_leaf(t, x);
    size_t n = 0;
    while (node != UINT32_MAX && n < max) {
        const dnode *d = &t->nd[node];
        for (uint32_t i = 0; i < d->l.n && n < max; i++)
            if (d->l.key[i] >= x) k[n] = d->l.key[i], v[n++] = d->l.val[i];
        node = d->l.next;
    }
    return n;
}

/* ---- measurement ----------------------------------------------------------------------------- */

typedef struct row {
    const char *dataset, *structure, *op, *mode;
    int threads;
    double p50, p90, mops, bpk_file, bpk_dram;
} row;

static int json;
static int reps = 1;
static const char *only; /* --only LIST */

static int in_list(const char *list, const char *name, size_t len)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !strncmp(p, name, len)) return 1;
        p += l + (e != NULL);
    }
    return 0;
}

/* Whether --only selects a row: for each category (op, structure, mode) that LIST names, the row's own. */
static int want(const char *structure, const char *mode, const char *op)
{
    static const char *const cats[3][12] = {
        {"bulk_load", "get", "get_absent", "route", "lower_bound", "scan", "insert", "recover", "get_batch",
         "get_absent_batch", "get_vs_binary", NULL},
        {"pltree", "pltree_nometa", "pltree_local", "pltree_btoverflow", "binary_search", "interpolation",
         "btree", NULL},
        {"sorted", "dynamic", "sorted+log", "dynamic+log", "sorted+bt", NULL}};
    if (!only) return 1;
    const char *val[3] = {op, structure, mode};
    for (int c = 0; c < 3; c++) {
        int named = 0;
        for (int i = 0; cats[c][i]; i++) named |= in_list(only, cats[c][i], strlen(cats[c][i]));
        if (!named) continue;
        if (c == 2 && !strcmp(mode, "-")) continue; /* baselines have no mode */
        if (!in_list(only, val[c], strlen(val[c]))) return 0;
    }
    return 1;
}

/* Whether --only selects any of the ops of a structure/mode (NULL-terminated list). */
static int want_any(const char *structure, const char *mode, const char *const *ops)
{
    for (; *ops; ops++)
        if (want(structure, mode, *ops)) return 1;
    return 0;
}

/*
 * Whether a structure of about `bytes` (file + DRAM + build temporaries) fits: MemAvailable less 1 GiB,
 * at most 12 GiB. Prints why not (so --keys 100000000 skips rows instead of swapping or OOM).
 */
static int fits(const char *dataset, const char *what, double bytes)
{
    double avail = 0, gib = 1073741824.0;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "MemAvailable:", 13)) avail = atof(line + 13) * 1024.0;
    if (f) fclose(f);
    if (!f || avail == 0) return 1; /* unknown: run */
    double limit = avail - gib < 12 * gib ? avail - gib : 12 * gib;
    if (bytes <= limit) return 1;
    printf("# %s: skipping %s: needs ~%.1f GiB, %.1f GiB available (limit %.1f GiB)\n", dataset, what,
           bytes / gib, avail / gib, limit / gib);
    fflush(stdout);
    return 0;
}

/* Memory estimate per key of a PLTree (file + DRAM + build temporaries), after measured 10M-key rows. */
static double pltree_bytes_per_key(int dynamic)
{
    return dynamic ? 64.0 : 28.0;
}

/* One result row; extra (JSON members, or NULL) is appended to the JSON object. */
static void emit_x(const row *r, const char *extra)
{
    if (json)
        printf("{\"bench\":\"index\",\"dataset\":\"%s\",\"structure\":\"%s\",\"mode\":\"%s\",\"op\":\"%s\","
               "\"threads\":%d,\"p50_ns\":%.1f,\"p90_ns\":%.1f,\"mops\":%.3f,\"bytes_per_key_file\":%.2f,"
               "\"bytes_per_key_dram\":%.3f%s%s}\n",
               r->dataset, r->structure, r->mode, r->op, r->threads, r->p50, r->p90, r->mops, r->bpk_file,
               r->bpk_dram, extra ? "," : "", extra ? extra : "");
    else
        printf("%-12s %-18s %-8s %-12s %2d %9.1f %9.1f %9.3f %8.2f %8.3f\n", r->dataset, r->structure,
               r->mode, r->op, r->threads, r->p50, r->p90, r->mops, r->bpk_file, r->bpk_dram);
    fflush(stdout);
}
static void emit(const row *r)
{
    emit_x(r, NULL);
}

/* A result row whose p50/p90 come from per-operation latencies (ns) over n samples. */
static row lat_row(const char *dataset, const char *structure, const char *op, const char *mode,
                   const double *lat, size_t n, double mops, double bpk_file, double bpk_dram)
{
    row r = {dataset, structure, op,      mode, 1, bench_percentile(lat, n, 50), bench_percentile(lat, n, 90),
             mops,    bpk_file,  bpk_dram};
    return r;
}

typedef enum { S_PLTREE, S_BINARY, S_INTERP, S_BTREE, S_BTOVF } sid;

typedef struct ctx {
    sid s;
    tsf_index *ix;
    const uint64_t *keys, *vals;
    size_t n;
    const btree *bt;
    const uint64_t *probes;
    size_t nprobes;
    int op; /* 0 get, 1 lower bound, 2 route, 3 get_batch (BATCH keys per call) */
    double *lat;
    uint64_t sink;
    double secs;
    const dbt *ovf;       /* S_BTOVF: the B+-tree checked before the PLTree */
    tsf_index_reader *rd; /* S_PLTREE: the thread's reader handle (opened in run_ctx) */
} ctx;

static uint64_t do_op(ctx *c, uint64_t x)
{
    uint64_t k = 0, v = 0;
    switch (c->s) {
    case S_BTOVF:
        if (dbt_get(c->ovf, x, &v)) return v;
        return tsf_index_get(c->ix, x, &v, NULL) == TSF_OK ? v : 1;
    case S_PLTREE:
        if (c->op == 2) return tsf_lix_route(c->ix, x);
        if (c->op == 0) return tsf_index_reader_get(c->rd, x, &v, NULL) == TSF_OK ? v : 1;
        return tsf_index_reader_lower_bound(c->rd, x, &k, &v, NULL) == TSF_OK ? k : 1;
    case S_BINARY:
    case S_INTERP: {
        size_t p = c->s == S_BINARY ? bs_lower(c->keys, c->n, x) : interp_lower(c->keys, c->n, x);
        if (p >= c->n) return 1;
        if (c->op == 0) return c->keys[p] == x ? c->vals[p] : 1;
        return c->keys[p];
    }
    default: {
        const uint64_t *lf;
        size_t s = bt_lower(c->bt, x, &lf);
        if (s >= 16) return 1; /* (next leaf for lower bound: rare, ignored in timing) */
        if (c->op == 0) return lf[s] == x ? lf[16 + s] : 1;
        return lf[s];
    }
    }
}

/*
 * op 3 (get_batch): the BATCH keys of a batch in one call: tsf_index_reader_get_many for the PLTree;
 * for binary search the same batch searched interleaved (one step of all 16 searches at a time, so their
 * misses overlap too: the fair baseline for a batched API).
 */
static uint64_t do_batch(ctx *c, const uint64_t *x)
{
    uint64_t vals[BATCH], sink = 0;
    uint8_t found[BATCH];
    if (c->s == S_PLTREE) {
        tsf_index_reader_get_many(c->rd, x, BATCH, vals, found, NULL);
        for (size_t i = 0; i < BATCH; i++) sink += found[i] ? vals[i] : 1;
        return sink;
    }
    const uint64_t *base[BATCH];
    for (size_t i = 0; i < BATCH; i++) base[i] = c->keys;
    for (size_t len = c->n; len > 1; len -= len / 2) {
        size_t half = len / 2;
        for (size_t i = 0; i < BATCH; i++) base[i] = base[i][half] < x[i] ? base[i] + half : base[i];
    }
    for (size_t i = 0; i < BATCH; i++) {
        size_t p = (size_t)(base[i] - c->keys) + (*base[i] < x[i]);
        sink += p < c->n && c->keys[p] == x[i] ? c->vals[p] : 1;
    }
    return sink;
}

static void *run_ctx(void *arg)
{
    ctx *c = arg;
    size_t nb = c->nprobes / BATCH;
    /* PLTree lookups go through a per-thread reader handle (no shared-counter RMW per lookup) */
    if (c->s == S_PLTREE && tsf_index_reader_open(c->ix, &c->rd, NULL) != TSF_OK) return NULL;
    uint64_t sink = 0, t0 = bench_now_ns();
    for (size_t b = 0; b < nb; b++) {
        uint64_t a = bench_now_ns();
        if (c->op == 3)
            sink += do_batch(c, c->probes + b * BATCH);
        else
            for (size_t i = 0; i < BATCH; i++) sink += do_op(c, c->probes[b * BATCH + i]);
        if (c->lat) c->lat[b] = (double)(bench_now_ns() - a) / BATCH;
    }
    c->secs = (double)(bench_now_ns() - t0) * 1e-9;
    c->sink = sink;
    tsf_index_reader_close(c->rd);
    c->rd = NULL;
    return NULL;
}

static void measure(row *r, ctx *base, int threads)
{
    if (!want(r->structure, r->mode, r->op)) return;
    size_t nb = base->nprobes / BATCH;
    double *lat = malloc((nb ? nb : 1) * sizeof *lat);
    ctx cs[64];
    pthread_t th[64];
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    uint64_t *rot[64] = {NULL};
    for (int t = 0; t < threads; t++) {
        cs[t] = *base;
        cs[t].lat = t == 0 ? lat : NULL;
        /* Thread t probes the same keys rotated by t/threads of the list: threads sharing one order
           would find each other's lines in the shared L3 (two threads measured 2.2x one, superlinear). */
        size_t sh = base->nprobes / (size_t)threads * (size_t)t;
        if (t > 0 && (rot[t] = malloc(base->nprobes * 8)) != NULL) {
            memcpy(rot[t], base->probes + sh, (base->nprobes - sh) * 8);
            memcpy(rot[t] + (base->nprobes - sh), base->probes, sh * 8);
            cs[t].probes = rot[t];
        }
    }
    for (int t = 1; t < threads; t++) pthread_create(&th[t], NULL, run_ctx, &cs[t]);
    run_ctx(&cs[0]);
    double ops = (double)nb * BATCH / cs[0].secs;
    for (int t = 1; t < threads; t++) {
        pthread_join(th[t], NULL);
        ops += (double)nb * BATCH / cs[t].secs;
    }
    for (int t = 1; t < threads; t++) free(rot[t]);
    r->threads = threads;
    r->p50 = bench_percentile(lat, nb, 50);
    r->p90 = bench_percentile(lat, nb, 90);
    r->mops = ops * 1e-6;
    if (cs[0].sink == 42) fprintf(stderr, " ");
    free(lat);
    emit(r);
}

/*
 * get_vs_binary: the ratio to binary search taken in one time window. A shared machine's speed can drift
 * between minutes, so the
 * separate get rows' ratio swings with it. Here each round times a chunk of present probes through the
 * PLTree (reader handle) and the same chunk through branchless binary search, one right after the other
 * (the order alternates by round), each after a warm-up of its own structure; a chunk is timed whole
 * (throughput of independent gets, no clock reads inside). The row gives p50/p90 of the PLTree's ns per
 * get over the rounds, and ratio_p10/p50/p90 of (binary search time / PLTree time) per round.
 */
#define VS_ROUNDS 21
#define VS_CHUNK 16384
#define VS_WARM 4096
static double tsf_vs_chunk(ctx *c, const uint64_t *x, size_t n, uint64_t *sink)
{
    for (size_t i = 0; i < VS_WARM && i < n; i++) *sink += do_op(c, x[(i * 7919) % n]);
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < n; i++) *sink += do_op(c, x[i]);
    return (double)(bench_now_ns() - t0) / (double)n;
}

static void measure_vs(row *r, ctx *pl, ctx *bs)
{
    if (!want(r->structure, r->mode, r->op) || pl->nprobes < VS_CHUNK) return;
    if (tsf_index_reader_open(pl->ix, &pl->rd, NULL) != TSF_OK) return;
    double t[VS_ROUNDS], ratio[VS_ROUNDS];
    uint64_t sink = 0;
    for (int rd = 0; rd < VS_ROUNDS; rd++) {
        const uint64_t *x = pl->probes + (size_t)rd * 7919 * BATCH % (pl->nprobes - VS_CHUNK + 1);
        double a, b;
        if (rd & 1) {
            b = tsf_vs_chunk(bs, x, VS_CHUNK, &sink);
            a = tsf_vs_chunk(pl, x, VS_CHUNK, &sink);
        } else {
            a = tsf_vs_chunk(pl, x, VS_CHUNK, &sink);
            b = tsf_vs_chunk(bs, x, VS_CHUNK, &sink);
        }
        t[rd] = a;
        ratio[rd] = b / a;
    }
    tsf_index_reader_close(pl->rd);
    pl->rd = NULL;
    r->threads = 1;
    r->p50 = bench_percentile(t, VS_ROUNDS, 50);
    r->p90 = bench_percentile(t, VS_ROUNDS, 90);
    r->mops = 1e3 / r->p50;
    double q10 = bench_percentile(ratio, VS_ROUNDS, 10), q50 = bench_percentile(ratio, VS_ROUNDS, 50),
           q90 = bench_percentile(ratio, VS_ROUNDS, 90);
    if (sink == 42) fprintf(stderr, " ");
    char extra[160];
    snprintf(extra, sizeof extra,
             "\"baseline\":\"binary_search\",\"ratio_p10\":%.2f,\"ratio_p50\":%.2f,\"ratio_p90\":%.2f,"
             "\"rounds\":%d",
             q10, q50, q90, VS_ROUNDS);
    emit_x(r, extra);
    if (!json)
        printf("# %s %s %s: binary search / pltree per round (%d rounds of %d gets): p10 %.2fx p50 %.2fx p90 "
               "%.2fx\n",
               r->dataset, r->structure, r->op, VS_ROUNDS, VS_CHUNK, q10, q50, q90);
    fflush(stdout);
}

typedef struct scan_ctx {
    uint64_t n, sum;
} scan_ctx;

static int scan_fn(uint64_t k, uint64_t v, void *arg)
{
    scan_ctx *s = arg;
    s->sum += k ^ v;
    return ++s->n >= 100;
}

typedef struct merge_ctx {
    uint64_t k[100], v[100];
    size_t n;
} merge_ctx;

static int collect_fn(uint64_t k, uint64_t v, void *arg)
{
    merge_ctx *m = arg;
    m->k[m->n] = k, m->v[m->n] = v;
    return ++m->n >= 100;
}

/*
 * After ni inserts into a bulk-loaded index: gets (half inserted keys, half loaded ones), absent gets and
 * 100-key scans, for the overflow log (pltree, sorted and dynamic) and for pltree_btoverflow (a sorted
 * PLTree whose inserts go to a dynamic B+-tree with 256-byte nodes, checked first by gets; scans merge both).
 */
static void run_overflow(const char *name, const uint64_t *k, const uint64_t *v, size_t n,
                         const uint64_t *ins, size_t ni, const uint64_t *present, const uint64_t *lbp,
                         size_t nops, const char *path)
{
    if (ni > nops) ni = nops;
    size_t nb = ni / BATCH;
    if (!nb) return;
    uint64_t *mixed = malloc(nops * 8), *absent = malloc(nops * 8), *sorted_ins = malloc(ni * 8);
    memcpy(sorted_ins, ins, ni * 8);
    size_t nsi = sort_unique(sorted_ins, ni);
    bench_rng r = {99};
    for (size_t i = 0; i < nops; i++) {
        mixed[i] = i & 1 ? ins[bench_rng_next(&r) % ni] : present[i];
        uint64_t x;
        for (;;) { /* absent from both the loaded and the inserted keys */
            x = bench_rng_next(&r);
            size_t p = bs_lower(k, n, x), q = bs_lower(sorted_ins, nsi, x);
            if ((p >= n || k[p] != x) && (q >= nsi || sorted_ins[q] != x)) break;
        }
        absent[i] = x;
    }
    double *lat = malloc((nops / BATCH + 1) * sizeof *lat);
    for (int s = 0; s < 3; s++) {
        int bt = s == 2;
        const char *sname = bt ? "pltree_btoverflow" : "pltree";
        const char *mname = s == 0 ? "sorted+log" : s == 1 ? "dynamic+log" : "sorted+bt";
        static const char *const ovf_ops[] = {"insert", "get", "get_absent", "scan", NULL};
        if (!want_any(sname, mname, ovf_ops)) continue;
        char what[96];
        snprintf(what, sizeof what, "%s (%s) after %zu inserts", sname, mname, ni);
        /* the loaded tree, plus the overflow (log chunks, rebuilt leaves or B+-tree) of the inserts */
        if (!fits(name, what, (double)n * pltree_bytes_per_key(s == 1) + (double)ni * 600.0)) continue;
        tsf_index_options o;
        tsf_index_options_init(&o);
        o.mode = s == 1 ? TSF_INDEX_DYNAMIC : TSF_INDEX_SORTED;
        o.durability = TSF_INDEX_DUR_NONE;
        o.flags = TSF_INDEX_TRUNCATE;
        tsf_index *ix;
        tsf_error err;
        if (tsf_index_open(&ix, path, &o, &err) != TSF_OK ||
            tsf_index_bulk_load(ix, k, v, n, &err) != TSF_OK) {
            fprintf(stderr, "index: %s\n", err.message);
            break;
        }
        dbt ovf;
        dbt_init(&ovf);
        uint64_t s0 = bench_now_ns();
        for (size_t b = 0; b < nb; b++) {
            uint64_t a = bench_now_ns();
            for (size_t i = 0; i < BATCH; i++) {
                if (bt)
                    dbt_insert(&ovf, ins[b * BATCH + i], i);
                else
                    tsf_index_insert(ix, ins[b * BATCH + i], i, NULL);
            }
            lat[b] = (double)(bench_now_ns() - a) / BATCH;
        }
        double ss = (double)(bench_now_ns() - s0) * 1e-9;
        if (bt) { /* self-check of the B+-tree (untimed): every insert found, a full scan ascends */
            size_t bad = 0, got = 0;
            uint64_t vv, pk[100], pv[100], from = 0;
            for (size_t i = 0; i < nb * BATCH; i++) bad += !dbt_get(&ovf, ins[i], &vv);
            for (size_t m; (m = dbt_scan(&ovf, from, pk, pv, 100)) > 0; from = pk[m - 1] + 1) {
                for (size_t j = 1; j < m; j++) bad += pk[j] <= pk[j - 1];
                got += m;
                if (pk[m - 1] == UINT64_MAX) break;
            }
            memcpy(sorted_ins, ins, nb * BATCH * 8); /* (the absent probes are drawn already) */
            if (bad || got != sort_unique(sorted_ins, nb * BATCH))
                fprintf(stderr, "pltree_btoverflow: B+-tree self-check failed (%zu, %zu keys)\n", bad, got);
        }
        tsf_index_stats st;
        tsf_index_stats_get(ix, &st);
        double bf = (double)(st.file_bytes + (bt ? ovf.nn * sizeof(dnode) : 0)) / n;
        double bd = (double)(st.dram_bytes + (bt ? ovf.nn * sizeof(dnode) : 0)) / n;
        row ir = lat_row(name, sname, "insert", mname, lat, nb, nb * BATCH / ss * 1e-6, bf, bd);
        if (want(sname, mname, "insert")) emit(&ir);
        ctx c = {bt ? S_BTOVF : S_PLTREE, ix, k, v, n, NULL, mixed, nops, 0, NULL, 0, 0, &ovf, NULL};
        ir.op = "get";
        measure(&ir, &c, 1);
        c.probes = absent;
        ir.op = "get_absent";
        measure(&ir, &c, 1);
        /* 100-key scans */
        size_t ns = nops / 10 < 100000 ? nops / 10 : 100000;
        double *sl = malloc((ns ? ns : 1) * sizeof *sl);
        uint64_t sum = 0, t0 = bench_now_ns();
        for (size_t i = 0; i < ns; i++) {
            uint64_t a = bench_now_ns();
            merge_ctx m;
            m.n = 0;
            tsf_index_scan(ix, lbp[i], UINT64_MAX, collect_fn, &m, NULL);
            if (bt) { /* merge with the B+-tree's next 100 (the B+-tree wins equal keys) */
                uint64_t bk[100], bv[100];
                size_t nbk = dbt_scan(&ovf, lbp[i], bk, bv, 100), x = 0, y = 0, o2 = 0;
                while (o2 < 100 && (x < m.n || y < nbk)) {
                    if (y < nbk && (x >= m.n || bk[y] <= m.k[x])) {
                        if (x < m.n && bk[y] == m.k[x]) x++;
                        sum += bk[y] ^ bv[y], y++;
                    } else {
                        sum += m.k[x] ^ m.v[x], x++;
                    }
                    o2++;
                }
            } else {
                for (size_t j = 0; j < m.n; j++) sum += m.k[j] ^ m.v[j];
            }
            sl[i] = (double)(bench_now_ns() - a);
        }
        double sd = (double)(bench_now_ns() - t0) * 1e-9;
        row sr = lat_row(name, sname, "scan", mname, sl, ns, ns * 100 / sd * 1e-6, bf, bd);
        if (want(sname, mname, "scan")) emit(&sr);
        if (sum == 42) fprintf(stderr, " ");
        free(sl);
        free(ovf.nd);
        tsf_index_close(ix);
    }
    unlink(path);
    free(lat);
    free(mixed);
    free(absent);
    free(sorted_ins);
}

static void run_dataset(const char *name, size_t nkeys, size_t nops, int threads)
{
    if (!fits(name, "the data set (keys, values, probes)", nkeys * 24.0 + nops * 40.0)) return;
    uint64_t *k = malloc(nkeys * 8), *v = malloc(nkeys * 8), *late = malloc(nkeys * 8);
    size_t nlate, n = gen_dataset(name, k, nkeys, late, &nlate);
    for (size_t i = 0; i < n; i++) v[i] = i;
    size_t s32 = tsf_pla_segments(k, n, 32, NULL), s256 = tsf_pla_segments(k, n, 256, NULL);
    size_t s4096 = tsf_pla_segments(k, n, 4096, NULL);
    if (json)
        printf("{\"bench\":\"index\",\"dataset\":\"%s\",\"hardness\":{\"n\":%zu,\"min\":%llu,\"max\":%llu,"
               "\"pla32\":%zu,\"pla256\":%zu,\"pla4096\":%zu}}\n",
               name, n, (unsigned long long)k[0], (unsigned long long)k[n - 1], s32, s256, s4096);
    else
        printf("# %s: n=%zu min=%llu max=%llu PLA-32=%zu PLA-256=%zu PLA-4096=%zu\n", name, n,
               (unsigned long long)k[0], (unsigned long long)k[n - 1], s32, s256, s4096);
    /* probes: present keys, absent keys (random, not in the set), lower-bound probes */
    uint64_t *present = malloc(nops * 8), *absent = malloc(nops * 8), *lbp = malloc(nops * 8);
    bench_rng r = {7};
    for (size_t i = 0; i < nops; i++) {
        present[i] = k[bench_rng_next(&r) % n];
        uint64_t x;
        do {
            size_t j = bench_rng_next(&r) % n;
            x = bench_rng_next(&r) & 1 ? k[j] + 1 + bench_rng_next(&r) % 3 : bench_rng_next(&r);
            size_t p = bs_lower(k, n, x);
            if (p >= n || k[p] != x) break;
        } while (1);
        absent[i] = x;
        lbp[i] = bench_rng_next(&r) & 1 ? present[i] + 1 : absent[i];
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsf_bench_index_%d.ix", (int)getpid());
    for (int mode = 0; mode < 2; mode++)
        for (int var = 0; var < 3; var++) { /* pltree, the ablations pltree_nometa and pltree_local */
            int nometa = var == 1, local = var == 2;
            const char *mname = mode ? "dynamic" : "sorted";
            const char *sname = nometa ? "pltree_nometa" : local ? "pltree_local" : "pltree";
            static const char *const all_ops[] = {
                "bulk_load",     "get",    "get_absent", "route",     "lower_bound",
                "scan",          "insert", "recover",    "get_batch", "get_absent_batch",
                "get_vs_binary", NULL};
            static const char *const abl_ops[] = {"get", "get_absent", "route", NULL};
            if (!want_any(sname, mname, var ? abl_ops : all_ops)) continue;
            char what[64];
            snprintf(what, sizeof what, "%s (%s)", sname, mname);
            if (!fits(name, what, (double)n * pltree_bytes_per_key(mode))) continue;
            tsf_index_options o;
            tsf_index_options_init(&o);
            o.mode = (uint32_t)mode;
            o.durability = TSF_INDEX_DUR_NONE;
            o.flags = TSF_INDEX_TRUNCATE | (nometa ? TSF_INDEX_NO_BLOCK_META : 0) |
                      (local ? TSF_INDEX_LOCAL_SEARCH : 0);
            tsf_index *ix;
            tsf_error err;
            if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) {
                fprintf(stderr, "index open: %s\n", err.message);
                return;
            }
            /* bulk load, --reps times into a fresh file (the pltree rows; once for the ablations) */
            int nrep = var ? 1 : reps;
            double bl[64];
            uint64_t t0;
            for (int rp = 0; rp < nrep; rp++) {
                if (rp) {
                    tsf_index_close(ix);
                    if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) {
                        fprintf(stderr, "index open: %s\n", err.message);
                        return;
                    }
                }
                t0 = bench_now_ns();
                if (tsf_index_bulk_load(ix, k, v, n, &err) != TSF_OK)
                    fprintf(stderr, "bulk: %s\n", err.message);
                bl[rp] = (double)(bench_now_ns() - t0) / n;
            }
            tsf_index_stats st;
            tsf_index_stats_get(ix, &st);
            double bf = (double)st.file_bytes / n, bd = (double)st.dram_bytes / n;
            if (!json && nrep > 1) {
                printf("# %s %s bulk_load ns/key per rep:", name, mname);
                for (int rp = 0; rp < nrep; rp++) printf(" %.1f", bl[rp]);
                printf("\n");
            }
            double b50 = bench_percentile(bl, (size_t)nrep, 50), b90 = bench_percentile(bl, (size_t)nrep, 90);
            row rw = {name, sname, "bulk_load", mname, 1, b50, b90, 1e3 / b50, bf, bd};
            if (!var && want(sname, mname, "bulk_load")) emit(&rw);
            ctx c = {S_PLTREE, ix, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
            rw.op = "get";
            measure(&rw, &c, 1);
            if (threads > 1) measure(&rw, &c, threads);
            if (!var) { /* the ratio to binary search in one time window */
                ctx bs = {S_BINARY, NULL, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
                row vr = rw;
                vr.op = "get_vs_binary";
                measure_vs(&vr, &c, &bs);
            }
            if (!var) { /* tsf_index_reader_get_many, 16 keys per call */
                c.op = 3;
                rw.op = "get_batch";
                measure(&rw, &c, 1);
                if (threads > 1) measure(&rw, &c, threads);
                c.probes = absent;
                rw.op = "get_absent_batch";
                measure(&rw, &c, 1);
                c.op = 0;
            }
            c.probes = absent;
            rw.op = "get_absent";
            measure(&rw, &c, 1);
            if (var) {
                if (local) {
                    c.probes = present;
                    c.op = 2;
                    rw.op = "route";
                    measure(&rw, &c, 1);
                }
                tsf_index_close(ix);
                continue;
            }
            c.probes = present;
            c.op = 2;
            rw.op = "route";
            measure(&rw, &c, 1);
            c.probes = lbp;
            c.op = 1;
            rw.op = "lower_bound";
            measure(&rw, &c, 1);
            /* range scans of 100 keys */
            if (want(sname, mname, "scan")) {
                size_t ns = nops / 10 < 100000 ? nops / 10 : 100000;
                double *lat = malloc(ns * sizeof *lat);
                scan_ctx sc = {0, 0};
                uint64_t s0 = bench_now_ns();
                for (size_t i = 0; i < ns; i++) {
                    uint64_t a = bench_now_ns();
                    sc.n = 0;
                    tsf_index_scan(ix, lbp[i], UINT64_MAX, scan_fn, &sc, NULL);
                    lat[i] = (double)(bench_now_ns() - a);
                }
                double ss = (double)(bench_now_ns() - s0) * 1e-9;
                row sr = lat_row(name, sname, "scan", mname, lat, ns, ns * 100 / ss * 1e-6, bf, bd);
                emit(&sr);
                free(lat);
            }
            /* inserts after the load: late points for ts_late, else fresh random keys */
            if (want(sname, mname, "insert")) {
                size_t ni = nlate ? nlate : (n / 10 < 1000000 ? n / 10 : 1000000);
                uint64_t *ins = nlate ? late : absent;
                if (ni > nops) ni = nops;
                size_t nb = ni / BATCH;
                double *lat = malloc((nb ? nb : 1) * sizeof *lat);
                uint64_t s0 = bench_now_ns();
                for (size_t b = 0; b < nb; b++) {
                    uint64_t a = bench_now_ns();
                    for (size_t i = 0; i < BATCH; i++) tsf_index_insert(ix, ins[b * BATCH + i], i, NULL);
                    lat[b] = (double)(bench_now_ns() - a) / BATCH;
                }
                double ss = (double)(bench_now_ns() - s0) * 1e-9;
                tsf_index_stats_get(ix, &st);
                row ir = lat_row(name, sname, "insert", mname, lat, nb, nb * BATCH / ss * 1e-6,
                                 (double)st.file_bytes / n, (double)st.dram_bytes / n);
                emit(&ir);
                free(lat);
            }
            /* recovery: reopen (lazy DRAM metadata), then one get */
            if (!want(sname, mname, "recover")) {
                tsf_index_close(ix);
                continue;
            }
            tsf_index_sync(ix, NULL);
            tsf_index_close(ix);
            o.flags &= ~(uint32_t)TSF_INDEX_TRUNCATE;
            t0 = bench_now_ns();
            if (tsf_index_open(&ix, path, &o, &err) == TSF_OK) {
                uint64_t vv;
                tsf_index_get(ix, present[0], &vv, NULL);
                double us = (double)(bench_now_ns() - t0);
                row rr = {name, sname, "recover", mname, 1, us, us, 1e3 / us, bf, bd};
                emit(&rr);
                tsf_index_close(ix);
            }
        }
    unlink(path);
    run_overflow(name, k, v, n, nlate ? late : absent, nlate ? nlate : (n / 10 < 1000000 ? n / 10 : 1000000),
                 present, lbp, nops, path);
    /* baselines */
    {
        row rw = {name, "binary_search", "get", "-", 1, 0, 0, 0, 8, 8};
        ctx c = {S_BINARY, NULL, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
        measure(&rw, &c, 1);
        if (threads > 1) measure(&rw, &c, threads);
        c.op = 3; /* 16 searches interleaved */
        rw.op = "get_batch";
        measure(&rw, &c, 1);
        if (threads > 1) measure(&rw, &c, threads);
        c.op = 0;
        c.probes = absent;
        rw.op = "get_absent";
        measure(&rw, &c, 1);
        c.probes = lbp;
        c.op = 1;
        rw.op = "lower_bound";
        measure(&rw, &c, 1);
        c = (ctx){S_INTERP, NULL, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
        rw.structure = "interpolation";
        rw.op = "get";
        measure(&rw, &c, 1);
        c.probes = absent;
        rw.op = "get_absent";
        measure(&rw, &c, 1);
        static const char *const bt_ops[] = {"bulk_load", "get", "get_absent", NULL};
        if (!want_any("btree", "-", bt_ops) || !fits(name, "btree", (double)n * 20.0)) goto done;
        btree bt;
        uint64_t t0 = bench_now_ns();
        bt_build(&bt, k, v, n);
        double secs = (double)(bench_now_ns() - t0) * 1e-9;
        double bpk = (double)(bt.nleaf + bt.ninner) * 256 / n;
        row br = {name,           "btree",        "bulk_load",     "-", 1,
                  secs * 1e9 / n, secs * 1e9 / n, n / secs * 1e-6, bpk, bpk};
        if (want("btree", "-", "bulk_load")) emit(&br);
        c = (ctx){S_BTREE, NULL, k, v, n, &bt, present, nops, 0, NULL, 0, 0, NULL, NULL};
        br.op = "get";
        measure(&br, &c, 1);
        c.probes = absent;
        br.op = "get_absent";
        measure(&br, &c, 1);
        free(bt.inner);
        free(bt.leaf);
    }
done:
    free(present);
    free(absent);
    free(lbp);
    free(k);
    free(v);
    free(late);
}

/* ---- tsfile_pages: point queries with and without the page-time index ---------------------------- */

/* Writes npoints rows of root.b.d1.s (INT64, non-aligned) and root.b.a1 (aligned, 2 DOUBLE columns) at
 * 1 s steps with the writer's defaults (pages of 10000 points, chunks flushed by the memory budget). */
static int pages_file(const char *path, size_t npoints)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    tsf_column_schema s = {"s", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema a[2] = {{"x", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                              {"y", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    size_t cap = 100000;
    int64_t *t = malloc(cap * 8), *iv = malloc(cap * 8);
    double *dv = malloc(cap * 8);
    tsf_tablet *td = NULL, *ta = NULL;
    tsf_status st = tsf_writer_open(&w, path, &o, &e);
    if (!st) st = tsf_writer_register_series(w, "root.b.d1", &s, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.b.a1", a, 2, &e);
    if (!st) st = tsf_tablet_new(w, "root.b.d1", NULL, 0, cap, &td, &e);
    if (!st) st = tsf_tablet_new(w, "root.b.a1", NULL, 0, cap, &ta, &e);
    bench_rng r = {5};
    double x = 0;
    for (size_t i0 = 0; i0 < npoints && !st; i0 += cap) {
        size_t m = npoints - i0 < cap ? npoints - i0 : cap;
        for (size_t i = 0; i < m; i++) {
            t[i] = INT64_C(1700000000000) + (int64_t)(i0 + i) * 1000;
            x += bench_rng_double(&r, -1, 1);
            iv[i] = (int64_t)(x * 100);
            dv[i] = x;
        }
        tsf_tablet_reset(td);
        tsf_tablet_reset(ta);
        st = tsf_tablet_set_times(td, t, m, &e);
        if (!st) st = tsf_tablet_set_column(td, 0, iv, NULL, m, &e);
        if (!st) st = tsf_writer_write_tablet(w, td, &e);
        if (!st) st = tsf_tablet_set_times(ta, t, m, &e);
        if (!st) st = tsf_tablet_set_column(ta, 0, dv, NULL, m, &e);
        if (!st) st = tsf_tablet_set_column(ta, 1, dv, NULL, m, &e);
        if (!st) st = tsf_writer_write_tablet(w, ta, &e);
    }
    tsf_tablet_free(td);
    tsf_tablet_free(ta);
    if (!st)
        st = tsf_writer_close(w, &e);
    else
        tsf_writer_abort(w);
    free(t);
    free(iv);
    free(dv);
    if (st) fprintf(stderr, "tsfile_pages: writer: %s\n", e.message);
    return st ? -1 : 0;
}

/* One point query (time_min = time_max = t) of one device; returns rows. */
static uint64_t point_query(tsf_reader *r, tsf_page_index *pix, size_t dev, int64_t t)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.time_min = o.time_max = t;
    o.page_index = pix;
    tsf_query *q = NULL;
    const tsf_batch *b;
    uint64_t rows = 0;
    if (tsf_query_open(r, &o, &q, NULL) == TSF_OK)
        while (tsf_query_next(q, &b, NULL) == TSF_OK && b) rows += b->nrows;
    tsf_query_close(q);
    return rows;
}

static void run_pages(size_t npoints, size_t nops)
{
    char path[64], ipath[80];
    snprintf(path, sizeof path, "/tmp/tsf_bench_pages_%d.tsfile", (int)getpid());
    snprintf(ipath, sizeof ipath, "%s.tsfidx", path);
    if (pages_file(path, npoints)) return;
    tsf_reader *r = NULL;
    tsf_page_index *pix = NULL;
    tsf_error e = {0};
    uint64_t np = 0, nl = 0, t0 = bench_now_ns();
    if (tsf_reader_open(&r, path, NULL, &e) || tsf_page_index_build(r, ipath, &np, &e) ||
        tsf_page_index_open(r, ipath, &pix, &e)) {
        fprintf(stderr, "tsfile_pages: %s\n", e.message);
        goto out;
    }
    double secs = (double)(bench_now_ns() - t0) * 1e-9;
    tsf_page_index_info(pix, &np, &nl);
    FILE *f = fopen(ipath, "rb");
    double ibytes = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        ibytes = (double)ftell(f);
        fclose(f);
    }
    size_t d1, a1;
    tsf_reader_find_device(r, "root.b.d1", &d1, NULL);
    tsf_reader_find_device(r, "root.b.a1", &a1, NULL);
    if (json)
        printf("{\"bench\":\"index\",\"dataset\":\"tsfile_pages\",\"points\":%zu,\"pages\":%llu}\n", npoints,
               (unsigned long long)np);
    else
        printf("# tsfile_pages: %zu points per device, %llu pages indexed (build incl. reader open %.3f s)\n",
               npoints, (unsigned long long)np, secs);
    row br = {"tsfile_pages",  "page_index",    "bulk_load",      "-",         1,
              secs * 1e9 / np, secs * 1e9 / np, np / secs * 1e-6, ibytes / np, 0};
    emit(&br);
    /* probes: random times inside the data */
    size_t nq = nops < 4000 ? nops : 4000, nb = nq / BATCH;
    int64_t *probe = malloc(nq * 8);
    bench_rng rg = {11};
    for (size_t i = 0; i < nq; i++)
        probe[i] =
            INT64_C(1700000000000) + (int64_t)(bench_rng_next(&rg) % npoints) * 1000 + 500 * (int64_t)(i & 1);
    double *lat = malloc((nb + 1) * sizeof *lat);
    uint64_t rows = 0;
    /* raw lookups */
    for (size_t b = 0; b < nb; b++) {
        uint64_t a = bench_now_ns();
        for (size_t i = 0; i < BATCH; i++) {
            tsf_page_loc loc;
            if (tsf_page_index_lookup(pix, d1, 0, probe[b * BATCH + i], &loc, NULL) == TSF_OK)
                rows += loc.page;
        }
        lat[b] = (double)(bench_now_ns() - a) / BATCH;
    }
    row lr = lat_row("tsfile_pages", "page_index", "get", "-", lat, nb, 0, ibytes / np, 0);
    lr.mops = 1e3 / lr.p50;
    emit(&lr);
    /* point queries: cold = a fresh reader (metadata loaded, no page directories cached) per query, warm =
     * one reader for all (page directories cached after the first query of a chunk) */
    for (int warm = 0; warm < 2; warm++)
        for (int with = 0; with < 2; with++)
            for (int dv = 0; dv < 2; dv++) {
                size_t dev = dv ? a1 : d1;
                size_t n = warm ? nq : nq / 4;
                double *ql = malloc((n + 1) * sizeof *ql);
                tsf_reader *qr = r;
                tsf_page_index *qp = with ? pix : NULL;
                for (size_t i = 0; i < n; i++) {
                    if (!warm) {
                        qr = NULL;
                        qp = NULL;
                        if (tsf_reader_open(&qr, path, NULL, NULL) || tsf_reader_load_index(qr, NULL)) break;
                        if (with && tsf_page_index_open(qr, ipath, &qp, NULL)) break;
                    }
                    uint64_t a = bench_now_ns();
                    rows += point_query(qr, qp, dev, probe[i]);
                    ql[i] = (double)(bench_now_ns() - a);
                    if (!warm) {
                        tsf_page_index_close(qp);
                        tsf_reader_close(qr);
                    }
                }
                row qrw = lat_row("tsfile_pages", with ? "query_index" : "query_metadata", "get",
                                  warm ? "warm" : "cold", ql, n, 0, ibytes / np, 0);
                qrw.mops = 1e3 / qrw.p50;
                qrw.dataset = dv ? "tsfile_pages_aligned" : "tsfile_pages";
                emit(&qrw);
                free(ql);
            }
    if (rows == 42) fprintf(stderr, " ");
    free(lat);
    free(probe);
out:
    tsf_page_index_close(pix);
    tsf_reader_close(r);
    unlink(path);
    unlink(ipath);
}

int bench_index(int argc, char **argv)
{
    size_t nkeys = (size_t)bench_opt_ll(argc, argv, "--keys", 1000000);
    size_t nops = (size_t)bench_opt_ll(argc, argv, "--ops", 1000000);
    int threads = (int)bench_opt_ll(argc, argv, "--threads", 1);
    const char *ds = bench_opt(argc, argv, "--dataset");
    json = bench_flag(argc, argv, "--json");
    reps = (int)bench_opt_ll(argc, argv, "--reps", 1);
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    only = bench_opt(argc, argv, "--only");
    if (nkeys < 16) nkeys = 16;
    if (nops < BATCH) nops = BATCH;
    if (!json) {
        bench_print_machine(stdout);
        printf("%-12s %-18s %-8s %-12s %2s %9s %9s %9s %8s %8s\n", "dataset", "structure", "mode", "op", "th",
               "p50_ns", "p90_ns", "mops", "B/k file", "B/k dram");
    }
    if (ds && !strcmp(ds, "tsfile_pages")) {
        run_pages(nkeys, nops);
        return 0;
    }
    int found = 0;
    for (size_t i = 0; i < NDATASETS; i++)
        if (!ds || !strcmp(ds, "all") || !strcmp(ds, DATASETS[i])) {
            run_dataset(DATASETS[i], nkeys, nops, threads);
            found = 1;
        }
    if (!found) {
        fprintf(stderr, "tsf-bench index: unknown dataset '%s'\n", ds);
        return 1;
    }
    return 0;
}
