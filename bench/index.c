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
 * This file holds the measurements and the entry; the data sets are in index_data.c, the baselines in
 * index_baselines.{c,h}, tsfile_pages in index_pages.c.
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
#include "index_baselines.h"
#include "index_bench.h"

static const char *const DATASETS[] = {"uniform",     "normal",   "lognormal", "osm",
                                       "fb",          "genome",   "planet",    "ts_regular",
                                       "ts_jittered", "ts_gappy", "ts_bursty", "ts_late"};
#define NDATASETS (sizeof DATASETS / sizeof DATASETS[0])

/* ---- measurement ----------------------------------------------------------------------------- */

int ixb_json;
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

void ixb_emit_x(const ixb_row *r, const char *extra)
{
    if (ixb_json)
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
void ixb_emit(const ixb_row *r)
{
    ixb_emit_x(r, NULL);
}

ixb_row ixb_lat_row(const char *dataset, const char *structure, const char *op, const char *mode,
                    const double *lat, size_t n, double mops, double bpk_file, double bpk_dram)
{
    ixb_row r = {
        dataset, structure, op,      mode, 1, bench_percentile(lat, n, 50), bench_percentile(lat, n, 90),
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
    int op; /* 0 get, 1 lower bound, 2 route, 3 get_batch (IXB_BATCH keys per call) */
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
 * op 3 (get_batch): the IXB_BATCH keys of a batch in one call: tsf_index_reader_get_many for the PLTree;
 * for binary search the same batch searched interleaved (one step of all 16 searches at a time, so their
 * misses overlap too: the fair baseline for a batched API).
 */
static uint64_t do_batch(ctx *c, const uint64_t *x)
{
    uint64_t vals[IXB_BATCH], sink = 0;
    uint8_t found[IXB_BATCH];
    if (c->s == S_PLTREE) {
        tsf_index_reader_get_many(c->rd, x, IXB_BATCH, vals, found, NULL);
        for (size_t i = 0; i < IXB_BATCH; i++) sink += found[i] ? vals[i] : 1;
        return sink;
    }
    const uint64_t *base[IXB_BATCH];
    for (size_t i = 0; i < IXB_BATCH; i++) base[i] = c->keys;
    for (size_t len = c->n; len > 1; len -= len / 2) {
        size_t half = len / 2;
        for (size_t i = 0; i < IXB_BATCH; i++) base[i] = base[i][half] < x[i] ? base[i] + half : base[i];
    }
    for (size_t i = 0; i < IXB_BATCH; i++) {
        size_t p = (size_t)(base[i] - c->keys) + (*base[i] < x[i]);
        sink += p < c->n && c->keys[p] == x[i] ? c->vals[p] : 1;
    }
    return sink;
}

static void *run_ctx(void *arg)
{
    ctx *c = arg;
    size_t nb = c->nprobes / IXB_BATCH;
    /* PLTree lookups go through a per-thread reader handle (no shared-counter RMW per lookup) */
    if (c->s == S_PLTREE && tsf_index_reader_open(c->ix, &c->rd, NULL) != TSF_OK) return NULL;
    uint64_t sink = 0, t0 = bench_now_ns();
    for (size_t b = 0; b < nb; b++) {
        uint64_t a = bench_now_ns();
        if (c->op == 3)
            sink += do_batch(c, c->probes + b * IXB_BATCH);
        else
            for (size_t i = 0; i < IXB_BATCH; i++) sink += do_op(c, c->probes[b * IXB_BATCH + i]);
        if (c->lat) c->lat[b] = (double)(bench_now_ns() - a) / IXB_BATCH;
    }
    c->secs = (double)(bench_now_ns() - t0) * 1e-9;
    c->sink = sink;
    tsf_index_reader_close(c->rd);
    c->rd = NULL;
    return NULL;
}

static void measure(ixb_row *r, ctx *base, int threads)
{
    if (!want(r->structure, r->mode, r->op)) return;
    size_t nb = base->nprobes / IXB_BATCH;
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
    double ops = (double)nb * IXB_BATCH / cs[0].secs;
    for (int t = 1; t < threads; t++) {
        pthread_join(th[t], NULL);
        ops += (double)nb * IXB_BATCH / cs[t].secs;
    }
    for (int t = 1; t < threads; t++) free(rot[t]);
    r->threads = threads;
    r->p50 = bench_percentile(lat, nb, 50);
    r->p90 = bench_percentile(lat, nb, 90);
    r->mops = ops * 1e-6;
    if (cs[0].sink == 42) fprintf(stderr, " ");
    free(lat);
    ixb_emit(r);
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

static void measure_vs(ixb_row *r, ctx *pl, ctx *bs)
{
    if (!want(r->structure, r->mode, r->op) || pl->nprobes < VS_CHUNK) return;
    if (tsf_index_reader_open(pl->ix, &pl->rd, NULL) != TSF_OK) return;
    double t[VS_ROUNDS], ratio[VS_ROUNDS];
    uint64_t sink = 0;
    for (int rd = 0; rd < VS_ROUNDS; rd++) {
        const uint64_t *x = pl->probes + (size_t)rd * 7919 * IXB_BATCH % (pl->nprobes - VS_CHUNK + 1);
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
    ixb_emit_x(r, extra);
    if (!ixb_json)
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
/* Self-check of the pltree_btoverflow B+-tree (untimed): every insert found, a full scan ascends;
   scratch holds n keys. */
static void dbt_selfcheck(const dbt *ovf, const uint64_t *ins, size_t n, uint64_t *scratch)
{
    size_t bad = 0, got = 0;
    uint64_t vv, pk[100], pv[100], from = 0;
    for (size_t i = 0; i < n; i++) bad += !dbt_get(ovf, ins[i], &vv);
    for (size_t m; (m = dbt_scan(ovf, from, pk, pv, 100)) > 0; from = pk[m - 1] + 1) {
        for (size_t j = 1; j < m; j++) bad += pk[j] <= pk[j - 1];
        got += m;
        if (pk[m - 1] == UINT64_MAX) break;
    }
    memcpy(scratch, ins, n * 8);
    if (bad || got != ixb_sort_unique(scratch, n))
        fprintf(stderr, "pltree_btoverflow: B+-tree self-check failed (%zu, %zu keys)\n", bad, got);
}

/* One 100-key scan from x through the PLTree, merged with the next 100 of the B+-tree ovf when given
   (the B+-tree wins equal keys); returns a checksum of the pairs. */
static uint64_t ovf_scan(tsf_index *ix, const dbt *ovf, uint64_t x)
{
    uint64_t sum = 0;
    merge_ctx m;
    m.n = 0;
    tsf_index_scan(ix, x, UINT64_MAX, collect_fn, &m, NULL);
    if (ovf) {
        uint64_t bk[100], bv[100];
        size_t nbk = dbt_scan(ovf, x, bk, bv, 100), i = 0, j = 0, o2 = 0;
        while (o2 < 100 && (i < m.n || j < nbk)) {
            if (j < nbk && (i >= m.n || bk[j] <= m.k[i])) {
                if (i < m.n && bk[j] == m.k[i]) i++;
                sum += bk[j] ^ bv[j], j++;
            } else {
                sum += m.k[i] ^ m.v[i], i++;
            }
            o2++;
        }
    } else {
        for (size_t q = 0; q < m.n; q++) sum += m.k[q] ^ m.v[q];
    }
    return sum;
}

static void run_overflow(const char *name, const uint64_t *k, const uint64_t *v, size_t n,
                         const uint64_t *ins, size_t ni, const uint64_t *present, const uint64_t *lbp,
                         size_t nops, const char *path)
{
    if (ni > nops) ni = nops;
    size_t nb = ni / IXB_BATCH;
    if (!nb) return;
    uint64_t *mixed = malloc(nops * 8), *absent = malloc(nops * 8), *sorted_ins = malloc(ni * 8);
    memcpy(sorted_ins, ins, ni * 8);
    size_t nsi = ixb_sort_unique(sorted_ins, ni);
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
    double *lat = malloc((nops / IXB_BATCH + 1) * sizeof *lat);
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
            for (size_t i = 0; i < IXB_BATCH; i++) {
                if (bt)
                    dbt_insert(&ovf, ins[b * IXB_BATCH + i], i);
                else
                    tsf_index_insert(ix, ins[b * IXB_BATCH + i], i, NULL);
            }
            lat[b] = (double)(bench_now_ns() - a) / IXB_BATCH;
        }
        double ss = (double)(bench_now_ns() - s0) * 1e-9;
        if (bt) /* (sorted_ins is free again: the absent probes are drawn already) */
            dbt_selfcheck(&ovf, ins, nb * IXB_BATCH, sorted_ins);
        tsf_index_stats st;
        tsf_index_stats_get(ix, &st);
        double bf = (double)(st.file_bytes + (bt ? ovf.nn * sizeof(dnode) : 0)) / n;
        double bd = (double)(st.dram_bytes + (bt ? ovf.nn * sizeof(dnode) : 0)) / n;
        ixb_row ir = ixb_lat_row(name, sname, "insert", mname, lat, nb, nb * IXB_BATCH / ss * 1e-6, bf, bd);
        if (want(sname, mname, "insert")) ixb_emit(&ir);
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
            sum += ovf_scan(ix, bt ? &ovf : NULL, lbp[i]);
            sl[i] = (double)(bench_now_ns() - a);
        }
        double sd = (double)(bench_now_ns() - t0) * 1e-9;
        ixb_row sr = ixb_lat_row(name, sname, "scan", mname, sl, ns, ns * 100 / sd * 1e-6, bf, bd);
        if (want(sname, mname, "scan")) ixb_emit(&sr);
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

/* A data set and its probes: present keys, absent keys (random, not in the set), lower-bound probes. */
typedef struct dset {
    const char *name;
    uint64_t *k, *v, *late;
    size_t n, nlate, nops;
    uint64_t *present, *absent, *lbp;
    int threads;
} dset;

/* Inserts after the load: the late points of ts_late, else fresh random keys (at most 1M, --ops). */
static size_t dset_inserts(const dset *d, uint64_t **ins)
{
    size_t n = d->n;
    *ins = d->nlate ? d->late : d->absent;
    return d->nlate ? d->nlate : (n / 10 < 1000000 ? n / 10 : 1000000);
}

/* Range scans of 100 keys from the lower-bound probes. */
static void pltree_scan(const dset *d, tsf_index *ix, const char *sname, const char *mname, double bf,
                        double bd)
{
    const char *name = d->name;
    size_t ns = d->nops / 10 < 100000 ? d->nops / 10 : 100000;
    double *lat = malloc(ns * sizeof *lat);
    scan_ctx sc = {0, 0};
    uint64_t s0 = bench_now_ns();
    for (size_t i = 0; i < ns; i++) {
        uint64_t a = bench_now_ns();
        sc.n = 0;
        tsf_index_scan(ix, d->lbp[i], UINT64_MAX, scan_fn, &sc, NULL);
        lat[i] = (double)(bench_now_ns() - a);
    }
    double ss = (double)(bench_now_ns() - s0) * 1e-9;
    ixb_row sr = ixb_lat_row(name, sname, "scan", mname, lat, ns, ns * 100 / ss * 1e-6, bf, bd);
    ixb_emit(&sr);
    free(lat);
}

/* Insert latency after the load, in batches of IXB_BATCH (dset_inserts' keys, at most --ops). */
static void pltree_insert(const dset *d, tsf_index *ix, const char *sname, const char *mname)
{
    const char *name = d->name;
    size_t n = d->n;
    uint64_t *ins;
    size_t ni = dset_inserts(d, &ins);
    if (ni > d->nops) ni = d->nops;
    size_t nb = ni / IXB_BATCH;
    double *lat = malloc((nb ? nb : 1) * sizeof *lat);
    uint64_t s0 = bench_now_ns();
    for (size_t b = 0; b < nb; b++) {
        uint64_t a = bench_now_ns();
        for (size_t i = 0; i < IXB_BATCH; i++) tsf_index_insert(ix, ins[b * IXB_BATCH + i], i, NULL);
        lat[b] = (double)(bench_now_ns() - a) / IXB_BATCH;
    }
    double ss = (double)(bench_now_ns() - s0) * 1e-9;
    tsf_index_stats st;
    tsf_index_stats_get(ix, &st);
    ixb_row ir = ixb_lat_row(name, sname, "insert", mname, lat, nb, nb * IXB_BATCH / ss * 1e-6,
                             (double)st.file_bytes / n, (double)st.dram_bytes / n);
    ixb_emit(&ir);
    free(lat);
}

/* Recovery: sync, close, reopen (lazy DRAM metadata), then one get. */
static void pltree_recover(const dset *d, tsf_index *ix, tsf_index_options *o, const char *path,
                           const char *sname, const char *mname, double bf, double bd)
{
    const char *name = d->name;
    tsf_index_sync(ix, NULL);
    tsf_index_close(ix);
    o->flags &= ~(uint32_t)TSF_INDEX_TRUNCATE;
    uint64_t t0 = bench_now_ns();
    if (tsf_index_open(&ix, path, o, NULL) == TSF_OK) {
        uint64_t vv;
        tsf_index_get(ix, d->present[0], &vv, NULL);
        double us = (double)(bench_now_ns() - t0);
        ixb_row rr = {name, sname, "recover", mname, 1, us, us, 1e3 / us, bf, bd};
        ixb_emit(&rr);
        tsf_index_close(ix);
    }
}

/*
 * The PLTree rows of one mode (0 sorted, 1 dynamic) and variant (0 pltree, 1 pltree_nometa, 2
 * pltree_local) in the index file at path; -1 when the index does not open.
 */
static int run_pltree(const dset *d, int mode, int var, const char *path)
{
    const char *name = d->name;
    uint64_t *k = d->k, *v = d->v, *present = d->present, *absent = d->absent, *lbp = d->lbp;
    size_t n = d->n, nops = d->nops;
    int threads = d->threads;
    int nometa = var == 1, local = var == 2;
    const char *mname = mode ? "dynamic" : "sorted";
    const char *sname = nometa ? "pltree_nometa" : local ? "pltree_local" : "pltree";
    static const char *const all_ops[] = {
        "bulk_load", "get",       "get_absent",       "route",         "lower_bound", "scan", "insert",
        "recover",   "get_batch", "get_absent_batch", "get_vs_binary", NULL};
    static const char *const abl_ops[] = {"get", "get_absent", "route", NULL};
    if (!want_any(sname, mname, var ? abl_ops : all_ops)) return 0;
    char what[64];
    snprintf(what, sizeof what, "%s (%s)", sname, mname);
    if (!fits(name, what, (double)n * pltree_bytes_per_key(mode))) return 0;
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = (uint32_t)mode;
    o.durability = TSF_INDEX_DUR_NONE;
    o.flags =
        TSF_INDEX_TRUNCATE | (nometa ? TSF_INDEX_NO_BLOCK_META : 0) | (local ? TSF_INDEX_LOCAL_SEARCH : 0);
    tsf_index *ix;
    tsf_error err;
    if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) {
        fprintf(stderr, "index open: %s\n", err.message);
        return -1;
    }
    /* bulk load, --reps times into a fresh file (the pltree rows; once for the ablations) */
    int nrep = var ? 1 : reps;
    double bl[64];
    for (int rp = 0; rp < nrep; rp++) {
        if (rp) {
            tsf_index_close(ix);
            if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) {
                fprintf(stderr, "index open: %s\n", err.message);
                return -1;
            }
        }
        uint64_t t0 = bench_now_ns();
        if (tsf_index_bulk_load(ix, k, v, n, &err) != TSF_OK) fprintf(stderr, "bulk: %s\n", err.message);
        bl[rp] = (double)(bench_now_ns() - t0) / n;
    }
    tsf_index_stats st;
    tsf_index_stats_get(ix, &st);
    double bf = (double)st.file_bytes / n, bd = (double)st.dram_bytes / n;
    if (!ixb_json && nrep > 1) {
        printf("# %s %s bulk_load ns/key per rep:", name, mname);
        for (int rp = 0; rp < nrep; rp++) printf(" %.1f", bl[rp]);
        printf("\n");
    }
    double b50 = bench_percentile(bl, (size_t)nrep, 50), b90 = bench_percentile(bl, (size_t)nrep, 90);
    ixb_row rw = {name, sname, "bulk_load", mname, 1, b50, b90, 1e3 / b50, bf, bd};
    if (!var && want(sname, mname, "bulk_load")) ixb_emit(&rw);
    ctx c = {S_PLTREE, ix, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
    rw.op = "get";
    measure(&rw, &c, 1);
    if (threads > 1) measure(&rw, &c, threads);
    if (!var) { /* the ratio to binary search in one time window */
        ctx bs = {S_BINARY, NULL, k, v, n, NULL, present, nops, 0, NULL, 0, 0, NULL, NULL};
        ixb_row vr = rw;
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
        return 0;
    }
    c.probes = present;
    c.op = 2;
    rw.op = "route";
    measure(&rw, &c, 1);
    c.probes = lbp;
    c.op = 1;
    rw.op = "lower_bound";
    measure(&rw, &c, 1);
    if (want(sname, mname, "scan")) pltree_scan(d, ix, sname, mname, bf, bd);
    if (want(sname, mname, "insert")) pltree_insert(d, ix, sname, mname);
    if (want(sname, mname, "recover"))
        pltree_recover(d, ix, &o, path, sname, mname, bf, bd);
    else
        tsf_index_close(ix);
    return 0;
}

/* The baselines' rows: binary search, interpolation search, the static B+-tree. */
static void run_baselines(const dset *d)
{
    const char *name = d->name;
    uint64_t *k = d->k, *v = d->v, *present = d->present, *absent = d->absent, *lbp = d->lbp;
    size_t n = d->n, nops = d->nops;
    int threads = d->threads;
    ixb_row rw = {name, "binary_search", "get", "-", 1, 0, 0, 0, 8, 8};
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
    if (!want_any("btree", "-", bt_ops) || !fits(name, "btree", (double)n * 20.0)) return;
    btree bt;
    uint64_t t0 = bench_now_ns();
    bt_build(&bt, k, v, n);
    double secs = (double)(bench_now_ns() - t0) * 1e-9;
    double bpk = (double)(bt.nleaf + bt.ninner) * 256 / n;
    ixb_row br = {name,           "btree",        "bulk_load",     "-", 1,
                  secs * 1e9 / n, secs * 1e9 / n, n / secs * 1e-6, bpk, bpk};
    if (want("btree", "-", "bulk_load")) ixb_emit(&br);
    c = (ctx){S_BTREE, NULL, k, v, n, &bt, present, nops, 0, NULL, 0, 0, NULL, NULL};
    br.op = "get";
    measure(&br, &c, 1);
    c.probes = absent;
    br.op = "get_absent";
    measure(&br, &c, 1);
    free(bt.inner);
    free(bt.leaf);
}

static void run_dataset(const char *name, size_t nkeys, size_t nops, int threads)
{
    if (!fits(name, "the data set (keys, values, probes)", nkeys * 24.0 + nops * 40.0)) return;
    dset d = {name,   malloc(nkeys * 8), malloc(nkeys * 8), malloc(nkeys * 8), 0, 0, nops, NULL, NULL, NULL,
              threads};
    uint64_t *k = d.k;
    size_t n = d.n = ixb_gen_dataset(name, k, nkeys, d.late, &d.nlate);
    for (size_t i = 0; i < n; i++) d.v[i] = i;
    size_t s32 = tsf_pla_segments(k, n, 32, NULL), s256 = tsf_pla_segments(k, n, 256, NULL);
    size_t s4096 = tsf_pla_segments(k, n, 4096, NULL);
    if (ixb_json)
        printf("{\"bench\":\"index\",\"dataset\":\"%s\",\"hardness\":{\"n\":%zu,\"min\":%llu,\"max\":%llu,"
               "\"pla32\":%zu,\"pla256\":%zu,\"pla4096\":%zu}}\n",
               name, n, (unsigned long long)k[0], (unsigned long long)k[n - 1], s32, s256, s4096);
    else
        printf("# %s: n=%zu min=%llu max=%llu PLA-32=%zu PLA-256=%zu PLA-4096=%zu\n", name, n,
               (unsigned long long)k[0], (unsigned long long)k[n - 1], s32, s256, s4096);
    /* probes: present keys, absent keys (random, not in the set), lower-bound probes */
    uint64_t *present = d.present = malloc(nops * 8), *absent = d.absent = malloc(nops * 8),
             *lbp = d.lbp = malloc(nops * 8);
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
        for (int var = 0; var < 3; var++) /* pltree, the ablations pltree_nometa and pltree_local */
            if (run_pltree(&d, mode, var, path) != 0) return;
    unlink(path);
    uint64_t *ins;
    size_t ni = dset_inserts(&d, &ins);
    run_overflow(name, k, d.v, n, ins, ni, present, lbp, nops, path);
    run_baselines(&d);
    free(present);
    free(absent);
    free(lbp);
    free(k);
    free(d.v);
    free(d.late);
}

int bench_index(int argc, char **argv)
{
    size_t nkeys = (size_t)bench_opt_ll(argc, argv, "--keys", 1000000);
    size_t nops = (size_t)bench_opt_ll(argc, argv, "--ops", 1000000);
    int threads = (int)bench_opt_ll(argc, argv, "--threads", 1);
    const char *ds = bench_opt(argc, argv, "--dataset");
    ixb_json = bench_flag(argc, argv, "--json");
    reps = (int)bench_opt_ll(argc, argv, "--reps", 1);
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    only = bench_opt(argc, argv, "--only");
    if (nkeys < 16) nkeys = 16;
    if (nops < IXB_BATCH) nops = IXB_BATCH;
    if (!ixb_json) {
        bench_print_machine(stdout);
        printf("%-12s %-18s %-8s %-12s %2s %9s %9s %9s %8s %8s\n", "dataset", "structure", "mode", "op", "th",
               "p50_ns", "p90_ns", "mops", "B/k file", "B/k dram");
    }
    if (ds && !strcmp(ds, "tsfile_pages")) {
        ixb_run_pages(nkeys, nops);
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
