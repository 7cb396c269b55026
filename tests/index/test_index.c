/*
 * Differential tests of the learned index (src/index) against a sorted array / reference map: every key
 * generator, 1e3 to 1e6 keys, both leaf modes, gets of present and absent keys, lower bound, floor,
 * range scans, inserts, upserts, deletes, duplicates, compaction, empty index, single key, extreme keys,
 * and the full invariant check after each phase.
 */
#include <stdlib.h>
#include <unistd.h>

#include "common/internal.h"
#include "index/index_internal.h"
#include "index_ref.h"
#include "tsf_experimental.h"

static uint64_t val_of(uint64_t k)
{
    return k * 31 + 7;
}

/* Compares the whole index with ref (sorted keys a[0..n) and their values in m). */
static void diff_all(tsf_index *ix, const ref_map *m, uint64_t seed, size_t probes)
{
    size_t n;
    uint64_t *a = ref_sorted(m, &n);
    tsf_error err;
    uint64_t s = seed, k, v;
    CHECK_OK(tsf_index_check(ix, &err), &err);
    size_t step = n > 200000 ? n / 200000 : 1, bad = 0;
    for (size_t i = 0; i < n && bad < 5; i += step) {
        uint64_t want = 0;
        ref_get(m, a[i], &want);
        tsf_status st = tsf_index_get(ix, a[i], &v, &err);
        if (st != TSF_OK || v != want) {
            fprintf(stderr, "get(%llu): status %d value %llu want %llu\n", (unsigned long long)a[i], st,
                    (unsigned long long)v, (unsigned long long)want);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    for (size_t p = 0; p < probes && bad < 5; p++) {
        uint64_t r = tsf_test_rand(&s), x;
        switch (r % 5) {
        case 0:
            x = tsf_test_rand(&s);
            break;
        case 1:
            x = n ? a[r / 5 % n] : r;
            break;
        case 2:
            x = n ? a[r / 5 % n] + 1 : r;
            break;
        case 3:
            x = n ? a[r / 5 % n] - 1 : r;
            break;
        default:
            x = (r & 64) ? 0 : UINT64_MAX;
            break;
        }
        size_t i = ref_lb(a, n, x);
        int present = i < n && a[i] == x;
        tsf_status st = tsf_index_get(ix, x, &v, &err);
        if ((st == TSF_OK) != present) bad++;
        /* lower bound */
        st = tsf_index_lower_bound(ix, x, &k, &v, &err);
        uint64_t want = 0;
        if (i < n) {
            ref_get(m, a[i], &want);
            if (st != TSF_OK || k != a[i] || v != want) bad++;
        } else if (st != TSF_ENOTFOUND) {
            bad++;
        }
        /* floor: last <= x */
        size_t f = present ? i + 1 : i;
        st = tsf_index_floor(ix, x, &k, &v, &err);
        if (f > 0) {
            ref_get(m, a[f - 1], &want);
            if (st != TSF_OK || k != a[f - 1] || v != want) bad++;
        } else if (st != TSF_ENOTFOUND) {
            bad++;
        }
        /* a short scan from x */
        if (p % 16 == 0) {
            uint64_t kk[40], vv[40];
            scan_buf b = {kk, vv, 0, 40, 40};
            uint64_t hi = x + (r >> 3) % 10000000;
            if (hi < x) hi = UINT64_MAX;
            CHECK_OK(tsf_index_scan(ix, x, hi, scan_collect, &b, &err), &err);
            size_t e = i;
            while (e < n && a[e] <= hi && e - i < 40) e++;
            if (b.n != e - i) bad++;
            for (size_t q = 0; q < b.n && q < 40 && i + q < n; q++) {
                ref_get(m, a[i + q], &want);
                if (kk[q] != a[i + q] || vv[q] != want) bad++;
            }
        }
        if (bad) fprintf(stderr, "probe %llu failed\n", (unsigned long long)x);
    }
    CHECK_EQ_INT(bad, 0);
    /* full scan */
    scan_buf b = {malloc((n + 1) * 8), malloc((n + 1) * 8), 0, n + 1, 0};
    CHECK_OK(tsf_index_scan(ix, 0, UINT64_MAX, scan_collect, &b, &err), &err);
    CHECK_EQ_INT(b.n, n);
    if (b.n == n) CHECK_MEM(b.k, a, n * 8);
    free(b.k);
    free(b.v);
    free(a);
}

static tsf_index *open_mem(uint32_t mode, uint32_t flags)
{
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = mode;
    o.flags = flags;
    tsf_index *ix = NULL;
    tsf_error err;
    tsf_status s = tsf_index_open(&ix, NULL, &o, &err);
    CHECK_OK(s, &err);
    return ix;
}

/* Bulk load of every generator at several sizes, both modes, then the differential comparison. */
static void run_static(size_t n, int gens_mask)
{
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    for (int mode = 0; mode < 2; mode++)
        for (int g = 0; g < GEN_COUNT; g++) {
            if (!(gens_mask >> g & 1)) continue;
            size_t m = ref_gen(g, k, n, 1000 + g);
            for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
            tsf_index *ix = open_mem((uint32_t)mode, 0);
            if (!ix) continue;
            tsf_error err;
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
            ref_map r;
            ref_init(&r, m);
            for (size_t i = 0; i < m; i++) ref_put(&r, k[i], v[i]);
            int before = tsf_test_failures;
            diff_all(ix, &r, 7 + g, 20000);
            if (tsf_test_failures != before)
                fprintf(stderr, "  (generator %s, mode %d, n %zu)\n", GEN_NAMES[g], mode, m);
            tsf_index_stats st;
            CHECK_OK(tsf_index_stats_get(ix, &st), (tsf_error *)NULL);
            CHECK_EQ_INT(st.records, m);
            CHECK(st.height >= 1);
            if (mode == TSF_INDEX_SORTED && m >= 100000) CHECK(st.dram_bytes < m); /* <= 1 B/key */
            if (mode == TSF_INDEX_DYNAMIC && m >= 100000 && st.dram_bytes >= m * 9 / 2)
                fprintf(stderr, "dram %.2f B/key (%s)\n", (double)st.dram_bytes / m, GEN_NAMES[g]);
            /* the space target (<= 4.5 B/key dynamic) on smooth data; clustered data measures ~4.55
               at 1e5 keys (overflow chunk metadata), see doc/index.md */
            if (mode == TSF_INDEX_DYNAMIC && m >= 100000)
                CHECK(st.dram_bytes < (g == GEN_CLUSTERED ? m * 5 : m * 9 / 2));
            ref_free(&r);
            tsf_index_close(ix);
        }
    free(k);
    free(v);
}

static void test_static_1e3(void)
{
    run_static(1000, 0x3f);
}
static void test_static_1e5(void)
{
    run_static(100000, 0x3f);
}
static void test_static_1e6(void)
{
    run_static(1000000, (1 << GEN_UNIFORM) | (1 << GEN_CLUSTERED) | (1 << GEN_TIMESTAMPS));
}

/* Inserts, upserts and deletes after a bulk load, with compaction and the differential check. */
static void run_mutations(uint32_t mode, int gen, size_t n, size_t ops)
{
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    size_t m = ref_gen(gen, k, n, 77 + gen);
    size_t half = m / 2; /* even positions loaded, odd ones inserted later */
    uint64_t *lk = malloc((half + 1) * 8), *lv = malloc((half + 1) * 8);
    size_t ln = 0;
    for (size_t i = 0; i < m; i += 2) {
        lk[ln] = k[i];
        lv[ln++] = val_of(k[i]);
    }
    tsf_index *ix = open_mem(mode, 0);
    tsf_error err;
    ref_map r;
    ref_init(&r, m + ops);
    CHECK_OK(tsf_index_bulk_load(ix, lk, lv, ln, &err), &err);
    for (size_t i = 0; i < ln; i++) ref_put(&r, lk[i], lv[i]);
    uint64_t s = 99 + gen + mode;
    for (size_t o = 0; o < ops; o++) {
        uint64_t x = tsf_test_rand(&s), key = k[x % m], val = x >> 7;
        switch (x >> 60) {
        case 0:
        case 1:
        case 2: /* delete an existing or absent key */
        {
            uint64_t t;
            int had = ref_get(&r, key, &t);
            tsf_status st = tsf_index_delete(ix, key, &err);
            if (had)
                CHECK_OK(st, &err);
            else
                CHECK_EQ_INT(st, TSF_ENOTFOUND);
            ref_del(&r, key);
            break;
        }
        case 3: /* a brand-new random key */
            key = tsf_test_rand(&s);
            /* fall through */
        default:
            CHECK_OK(tsf_index_insert(ix, key, val, &err), &err);
            ref_put(&r, key, val);
            break;
        }
        if (tsf_test_failures) break;
        if (o == ops / 2) diff_all(ix, &r, o, 2000);
    }
    diff_all(ix, &r, 5, 10000);
    tsf_index_stats st;
    CHECK_OK(tsf_index_stats_get(ix, &st), (tsf_error *)NULL);
    CHECK(st.overflow_records > 0 || st.leaf_rebuilds > 0);
    CHECK_OK(tsf_index_compact(ix, &err), &err);
    CHECK_OK(tsf_index_stats_get(ix, &st), (tsf_error *)NULL);
    CHECK_EQ_INT(st.records, r.live);
    CHECK_EQ_INT(st.overflow_records, mode == TSF_INDEX_SORTED ? 0 : st.overflow_records);
    diff_all(ix, &r, 6, 10000);
    /* more writes after the compaction */
    for (size_t o = 0; o < ops / 4; o++) {
        uint64_t x = tsf_test_rand(&s);
        CHECK_OK(tsf_index_insert(ix, x, x ^ 1, &err), &err);
        ref_put(&r, x, x ^ 1);
    }
    diff_all(ix, &r, 8, 5000);
    ref_free(&r);
    tsf_index_close(ix);
    free(k);
    free(v);
    free(lk);
    free(lv);
}

static void test_mutations_sorted(void)
{
    for (int g = 0; g < GEN_COUNT; g++) run_mutations(TSF_INDEX_SORTED, g, 20000, 30000);
    run_mutations(TSF_INDEX_SORTED, GEN_UNIFORM, 200000, 200000);
}

static void test_mutations_dynamic(void)
{
    for (int g = 0; g < GEN_COUNT; g++) run_mutations(TSF_INDEX_DYNAMIC, g, 20000, 30000);
    run_mutations(TSF_INDEX_DYNAMIC, GEN_TIMESTAMPS, 200000, 200000);
}

/* The ablation without block metadata must answer exactly the same. */
static void test_no_block_meta(void)
{
    for (uint32_t mode = 0; mode < 2; mode++) {
        uint64_t *k = malloc(50000 * 8), *v = malloc(50000 * 8);
        size_t m = ref_gen(GEN_CLUSTERED, k, 50000, 3);
        for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
        tsf_index *ix = open_mem(mode, TSF_INDEX_NO_BLOCK_META);
        tsf_error err;
        CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
        ref_map r;
        ref_init(&r, m + 10000);
        for (size_t i = 0; i < m; i++) ref_put(&r, k[i], v[i]);
        uint64_t s = 1;
        for (int i = 0; i < 10000; i++) {
            uint64_t x = tsf_test_rand(&s) % (UINT64_C(1) << 62);
            CHECK_OK(tsf_index_insert(ix, x, i, &err), &err);
            ref_put(&r, x, (uint64_t)i);
        }
        diff_all(ix, &r, 11, 5000);
        ref_free(&r);
        tsf_index_close(ix);
        free(k);
        free(v);
    }
}

/* The local-search ablation (binary search over the children in internal nodes) routes identically. */
static void test_local_search(void)
{
    uint64_t *k = malloc(60000 * 8), *v = malloc(60000 * 8);
    for (uint32_t mode = 0; mode < 2; mode++)
        for (int g = 0; g < GEN_COUNT; g++) {
            size_t m = ref_gen(g, k, 60000, 50 + g);
            for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
            tsf_index *ix = open_mem(mode, TSF_INDEX_LOCAL_SEARCH);
            if (!ix) continue;
            tsf_error err;
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
            ref_map r;
            ref_init(&r, m);
            for (size_t i = 0; i < m; i++) ref_put(&r, k[i], v[i]);
            diff_all(ix, &r, 21 + g, 5000);
            ref_free(&r);
            tsf_index_close(ix);
        }
    free(k);
    free(v);
}

/*
 * Per-thread reader handles answer exactly as the plain calls (present and absent keys, lower bound,
 * floor; sorted base, overflow log, after a compaction), and at most 64 are open at a time.
 */
static void test_reader_handles(void)
{
    uint64_t *k = malloc(40000 * 8), *v = malloc(40000 * 8);
    for (uint32_t mode = 0; mode < 2; mode++) {
        size_t m = ref_gen(GEN_CLUSTERED, k, 40000, 70 + mode);
        for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
        tsf_index *ix = open_mem(mode, 0);
        if (!ix) continue;
        tsf_error err;
        CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
        tsf_index_reader *rd = NULL;
        CHECK_OK(tsf_index_reader_open(ix, &rd, &err), &err);
        uint64_t s = 5 + mode, mism = 0, found = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 3000; i++) { /* writes between rounds: the overflow log, then compaction */
                uint64_t x = tsf_test_rand(&s);
                if (round == 1) tsf_index_insert(ix, x, x ^ 5, &err);
                if (round == 1 && i % 3 == 0) tsf_index_delete(ix, k[x % m], &err);
            }
            if (round == 2) CHECK_OK(tsf_index_compact(ix, &err), &err);
            for (int i = 0; i < 20000; i++) {
                uint64_t x = tsf_test_rand(&s), q = i % 2 ? k[x % m] : x;
                uint64_t a = 0, b = 0, ka = 0, kb = 0;
                tsf_status sa = tsf_index_get(ix, q, &a, &err), sb = tsf_index_reader_get(rd, q, &b, &err);
                mism += sa != sb || a != b;
                found += sa == TSF_OK;
                sa = tsf_index_lower_bound(ix, q, &ka, &a, &err);
                sb = tsf_index_reader_lower_bound(rd, q, &kb, &b, &err);
                mism += sa != sb || ka != kb || a != b;
                sa = tsf_index_floor(ix, q, &ka, &a, &err);
                sb = tsf_index_reader_floor(rd, q, &kb, &b, &err);
                mism += sa != sb || ka != kb || a != b;
            }
        }
        CHECK_EQ_INT(mism, 0);
        CHECK(found > 20000); /* present keys were probed (not a test of absent keys only) */
        /* 64 handles at most; closing one frees its slot */
        tsf_index_reader *more[64];
        int opened = 0;
        while (opened < 64 && tsf_index_reader_open(ix, &more[opened], &err) == TSF_OK) opened++;
        CHECK_EQ_INT(opened, 63);
        tsf_index_reader *extra = NULL;
        CHECK_EQ_INT(tsf_index_reader_open(ix, &extra, &err), TSF_ESTATE);
        tsf_index_reader_close(rd);
        CHECK_OK(tsf_index_reader_open(ix, &rd, &err), &err);
        for (int i = 0; i < opened; i++) tsf_index_reader_close(more[i]);
        tsf_index_reader_close(rd);
        tsf_index_close(ix);
    }
    free(k);
    free(v);
}

/* Empty index, single key, inserts into an empty index, extreme keys 0 / 2^64-1 / INT64_MIN. */
static void test_edges(void)
{
    for (uint32_t mode = 0; mode < 2; mode++) {
        tsf_index *ix = open_mem(mode, 0);
        tsf_error err;
        uint64_t k, v;
        CHECK_EQ_INT(tsf_index_get(ix, 0, &v, &err), TSF_ENOTFOUND);
        CHECK_EQ_INT(tsf_index_lower_bound(ix, 0, &k, &v, &err), TSF_ENOTFOUND);
        CHECK_EQ_INT(tsf_index_floor(ix, UINT64_MAX, &k, &v, &err), TSF_ENOTFOUND);
        CHECK_EQ_INT(tsf_index_delete(ix, 5, &err), TSF_ENOTFOUND);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        uint64_t one = UINT64_MAX, onev = 0;
        CHECK_OK(tsf_index_bulk_load(ix, &one, &onev, 1, &err), &err);
        CHECK_OK(tsf_index_get(ix, UINT64_MAX, &v, &err), &err);
        CHECK(v == 0);
        CHECK_EQ_INT(tsf_index_get(ix, UINT64_MAX - 1, &v, &err), TSF_ENOTFOUND);
        CHECK_OK(tsf_index_floor(ix, UINT64_MAX - 1, &k, &v, &err) == TSF_ENOTFOUND ? TSF_OK : TSF_EINVAL,
                 &err);
        CHECK_OK(tsf_index_lower_bound(ix, 0, &k, &v, &err), &err);
        CHECK(k == UINT64_MAX);
        /* zero key and zero value are ordinary */
        CHECK_OK(tsf_index_insert(ix, 0, 0, &err), &err);
        CHECK_OK(tsf_index_get(ix, 0, &v, &err), &err);
        CHECK(v == 0);
        uint64_t t64 = tsf_index_key_from_i64(INT64_MIN); /* == 0: an upsert of the same key */
        CHECK(t64 == 0);
        CHECK_OK(tsf_index_insert(ix, t64, 12, &err), &err);
        CHECK_OK(tsf_index_get(ix, 0, &v, &err), &err);
        CHECK(v == 12);
        CHECK_OK(tsf_index_floor(ix, 1, &k, &v, &err), &err);
        CHECK(k == 0);
        CHECK(tsf_index_key_to_i64(t64) == INT64_MIN);
        CHECK(tsf_index_key_from_i64(-1) < tsf_index_key_from_i64(0));
        CHECK_OK(tsf_index_delete(ix, 0, &err), &err);
        CHECK_EQ_INT(tsf_index_get(ix, 0, &v, &err), TSF_ENOTFOUND);
        CHECK_OK(tsf_index_floor(ix, 1, &k, &v, &err) == TSF_ENOTFOUND ? TSF_OK : TSF_EINVAL, &err);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        /* an empty index grows by inserts alone (rebuilds of the single leaf) */
        CHECK_OK(tsf_index_bulk_load(ix, NULL, NULL, 0, &err), &err);
        ref_map r;
        ref_init(&r, 5000);
        uint64_t s = 5;
        for (int i = 0; i < 5000; i++) {
            uint64_t x = tsf_test_rand(&s);
            CHECK_OK(tsf_index_insert(ix, x, (uint64_t)i, &err), &err);
            ref_put(&r, x, (uint64_t)i);
        }
        diff_all(ix, &r, 3, 2000);
        ref_free(&r);
        /* unsorted input is refused */
        uint64_t bk[3] = {3, 2, 5}, bv[3] = {0, 0, 0};
        CHECK_EQ_INT(tsf_index_bulk_load(ix, bk, bv, 3, &err), TSF_EINVAL);
        tsf_index_close(ix);
    }
}

/* Duplicates: bulk load and inserts keep every copy in order; a delete removes them all. */
static void test_duplicates(void)
{
    for (uint32_t mode = 0; mode < 2; mode++) {
        tsf_index *ix = open_mem(mode, TSF_INDEX_ALLOW_DUPLICATES);
        tsf_error err;
        size_t n = 3000;
        uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
        for (size_t i = 0; i < n; i++) {
            k[i] = (i / 3) * 10; /* each key three times */
            v[i] = i;
        }
        CHECK_OK(tsf_index_bulk_load(ix, k, v, n, &err), &err);
        CHECK_OK(tsf_index_insert(ix, 50, 9999, &err), &err);
        uint64_t kk[8], vv[8];
        scan_buf b = {kk, vv, 0, 8, 0};
        CHECK_OK(tsf_index_scan(ix, 50, 50, scan_collect, &b, &err), &err);
        CHECK_EQ_INT(b.n, 4);
        CHECK(vv[0] == 15 && vv[1] == 16 && vv[2] == 17 && vv[3] == 9999);
        uint64_t val;
        CHECK_OK(tsf_index_get(ix, 50, &val, &err), &err);
        CHECK(val == 9999); /* the newest copy */
        CHECK_OK(tsf_index_delete(ix, 50, &err), &err);
        CHECK_EQ_INT(tsf_index_get(ix, 50, &val, &err), TSF_ENOTFOUND);
        b.n = 0;
        CHECK_OK(tsf_index_scan(ix, 40, 60, scan_collect, &b, &err), &err);
        CHECK_EQ_INT(b.n, 6);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        CHECK_OK(tsf_index_compact(ix, &err), &err);
        b.n = 0;
        CHECK_OK(tsf_index_scan(ix, 0, UINT64_MAX, scan_collect, &b, &err), &err);
        CHECK_EQ_INT(b.n, n - 3);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        /* without the flag, equal keys in a bulk load are refused */
        tsf_index *ix2 = open_mem(mode, 0);
        CHECK_EQ_INT(tsf_index_bulk_load(ix2, k, v, n, &err), TSF_EINVAL);
        tsf_index_close(ix2);
        free(k);
        free(v);
        tsf_index_close(ix);
    }
}

/*
 * Sorted-leaf lookups through each kernel path (portable, AVX2 and AVX-512, forced per handle by
 * tsf_index_options.path): clustered and lognormal keys give leaves whose model error windows span
 * hundreds of blocks (separator levels above level 0), uniform keys one-line windows. The probes of
 * diff_all hit block and group boundaries (present keys +- 1); the test also checks that some lookups
 * really went through the upper levels, and that clustered keys sit in leaves with a radix
 * table (uniform ones never: their windows are narrow).
 */
static void test_lookup_paths(void)
{
    size_t n = 300000;
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    const int gens[3] = {GEN_CLUSTERED, GEN_LOGNORMAL, GEN_UNIFORM};
    /* (AVX-512 degrades to AVX2 on machines without it) */
    const uint32_t paths[3] = {TSF_PATH_SCALAR, TSF_PATH_AVX2, TSF_PATH_AVX512};
    for (int p = 0; p < 3; p++)
        for (int gi = 0; gi < 3; gi++) {
            size_t m = ref_gen(gens[gi], k, n, 77 + (uint64_t)gi);
            for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
            tsf_index_options o;
            tsf_index_options_init(&o);
            o.path = paths[p];
            tsf_index *ix = NULL;
            tsf_error err;
            CHECK_OK(tsf_index_open(&ix, NULL, &o, &err), &err);
            if (!ix) continue;
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
            ref_map r;
            ref_init(&r, m);
            for (size_t i = 0; i < m; i++) ref_put(&r, k[i], v[i]);
            int before = tsf_test_failures;
            diff_all(ix, &r, 31 + (uint64_t)gi, 60000);
            /* keys whose window needs separator level >= 1 (the window spans more than two lines) */
            uint64_t wide = 0;
            for (uint64_t l = 0; l < ix->n_leaves; l++) {
                const tsf_lix_leaf *L = &ix->leaves[l];
                if (L->err_lo != IX_ERR_WIDE && L->err_hi != IX_ERR_WIDE &&
                    ((uint64_t)L->err_lo + L->err_hi) / IX_SLOTS + 2 > 2 * IX_SEP_FAN)
                    wide += L->nbase;
            }
            if (gens[gi] == GEN_CLUSTERED) CHECK(wide > m / 10);
            if (tsf_test_failures != before)
                fprintf(stderr, "  (generator %s, path %u, %llu keys in wide windows)\n", GEN_NAMES[gens[gi]],
                        paths[p], (unsigned long long)wide);
            tsf_index_stats st;
            CHECK_OK(tsf_index_stats_get(ix, &st), (tsf_error *)NULL);
            CHECK(st.dram_bytes < m); /* <= 1 B/key with the separator levels and radix tables */
            /* keys in leaves with a radix table (stats built every leaf's metadata) */
            uint64_t radix = 0;
            for (uint64_t l = 0; l < ix->n_leaves; l++)
                if (ix->leaves[l].rsh) radix += ix->leaves[l].nbase;
            if (gens[gi] == GEN_CLUSTERED) CHECK(radix > m / 10);
            if (gens[gi] == GEN_UNIFORM) CHECK_EQ_INT(radix, 0);
            if (p == 0)
                fprintf(stderr, "  %s: %.1f %% of the keys in leaves with a radix table\n",
                        GEN_NAMES[gens[gi]], 100.0 * (double)radix / (double)m);
            ref_free(&r);
            tsf_index_close(ix);
        }
    free(k);
    free(v);
}

/*
 * Batched gets (tsf_index_get_many, tsf_index_reader_get_many) give the single get's answers: present
 * and absent keys, both modes, both kernel paths, before and after inserts and deletes (leaves with an
 * overflow log take the single path), n not a multiple of the group size, n = 0.
 */
static void test_get_many(void)
{
    size_t n = 200000, q = 5000;
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8), *x = malloc(q * 8), *got = malloc(q * 8);
    uint8_t *found = malloc(q);
    for (int mode = 0; mode < 2; mode++)
        for (int p = 0; p < 2; p++) {
            size_t m = ref_gen(p ? GEN_CLUSTERED : GEN_UNIFORM, k, n, 5 + (uint64_t)mode);
            for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
            tsf_index_options o;
            tsf_index_options_init(&o);
            o.mode = (uint32_t)mode;
            o.path = p ? TSF_PATH_AVX2 : TSF_PATH_SCALAR;
            tsf_index *ix = NULL;
            tsf_error err;
            CHECK_OK(tsf_index_open(&ix, NULL, &o, &err), &err);
            if (!ix) continue;
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
            tsf_index_reader *rd = NULL;
            CHECK_OK(tsf_index_reader_open(ix, &rd, &err), &err);
            uint64_t s = 99 + (uint64_t)p;
            for (int round = 0; round < 2 && rd; round++) {
                if (round == 1) /* a few leaves get an overflow log: inserts, upserts, deletes */
                    for (size_t i = 0; i < 3000; i++) {
                        uint64_t r = tsf_test_rand(&s);
                        if (i % 3 == 2) {
                            tsf_status ds =
                                tsf_index_delete(ix, k[r % m], &err); /* (maybe deleted already) */
                            CHECK(ds == TSF_OK || ds == TSF_ENOTFOUND);
                        } else
                            CHECK_OK(tsf_index_insert(ix, i % 3 ? k[r % m] : r, r, &err), &err);
                    }
                for (size_t i = 0; i < q; i++) {
                    uint64_t r = tsf_test_rand(&s);
                    x[i] = r % 3 == 0 ? r : k[r / 3 % m] + (r % 3 == 2);
                }
                size_t nq = q - 7; /* not a multiple of the group size */
                memset(found, 7, q);
                CHECK_OK(tsf_index_reader_get_many(rd, x, nq, got, found, &err), &err);
                size_t bad = 0;
                for (size_t i = 0; i < nq; i++) {
                    uint64_t want = 0;
                    tsf_status st = tsf_index_get(ix, x[i], &want, &err);
                    if (found[i] != (st == TSF_OK) || (st == TSF_OK && got[i] != want)) bad++;
                }
                CHECK_EQ_INT(bad, 0);
                CHECK_EQ_INT(found[nq], 7); /* nothing written past n */
                memset(found, 7, q);
                CHECK_OK(tsf_index_get_many(ix, x, q, got, found, &err), &err);
                for (size_t i = 0; i < q; i++) {
                    uint64_t want = 0;
                    tsf_status st = tsf_index_get(ix, x[i], &want, &err);
                    if (found[i] != (st == TSF_OK) || (st == TSF_OK && got[i] != want)) bad++;
                }
                CHECK_EQ_INT(bad, 0);
                CHECK_OK(tsf_index_get_many(ix, x, 0, got, found, &err), &err);
                if (bad) fprintf(stderr, "  (mode %d, path %d, round %d)\n", mode, p, round);
            }
            tsf_index_reader_close(rd);
            tsf_index_close(ix);
        }
    free(k);
    free(v);
    free(x);
    free(got);
    free(found);
}

/*
 * DRAM layout the fast path relies on: the closed-form offset of the radix table equals the metadata
 * layout's for every leaf size that can have one; the leaf directory is 64-byte aligned (one line per
 * entry) after a build and after an open of the file; the sealed routing table is built at both; the
 * build of a file of several MiB prefaults its range from a helper thread (Linux), and every key of that
 * build reads back (tsf_index_check compares the file with the DRAM metadata).
 */
static void test_dram_layout(void)
{
    uint64_t bad = 0;
    for (uint64_t nb = 1; nb <= IX_RADIX_MAX; nb++)
        if (tsf_lix_radix_n(nb) && tsf_lix_radix_off_fast(nb) != tsf_lix_meta_radix_off(nb)) bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK(tsf_lix_radix_n(IX_RADIX_MAX) != 0 && tsf_lix_radix_n(IX_RADIX_MAX + 1) == 0);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsf_index_layout_%d.ix", (int)getpid());
    size_t n = 300000; /* a ~5 MB file: the build prefaults its range from a helper thread */
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    size_t m = ref_gen(GEN_CLUSTERED, k, n, 4);
    for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
    for (int reopen = 0; reopen < 2; reopen++) {
        tsf_index_options o;
        tsf_index_options_init(&o);
        o.flags = reopen ? 0 : TSF_INDEX_TRUNCATE;
        tsf_index *ix = NULL;
        tsf_error err;
        CHECK_OK(tsf_index_open(&ix, path, &o, &err), &err);
        if (!ix) break;
        if (!reopen) {
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
#if defined(__linux__)
            CHECK(ix->pm.prefaults == 1);
#endif
        }
        CHECK(ix->n_leaves > 1 && ((uintptr_t)ix->leaves & 63) == 0);
        CHECK(ix->fast != NULL && ix->fast->rt != NULL);
        size_t wrong = 0;
        for (size_t i = 0; i < m; i += 7) {
            uint64_t got = 0;
            if (tsf_index_get(ix, k[i], &got, &err) != TSF_OK || got != v[i]) wrong++;
        }
        CHECK_EQ_INT(wrong, 0);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        tsf_index_close(ix);
    }
    unlink(path);
    free(k);
    free(v);
}

/*
 * Sealed fast path of gets (no write since the last build or open): gets with it on and forced off
 * (TSF_INDEX_NO_FAST_PATH) answer exactly as the sorted array, for every generator and both kernel paths,
 * plain calls and reader handles; the path is really taken (ix->fast set after a load or reopen), ends at
 * the first write (answers then include the overflow log), and returns with a compaction.
 */
static size_t fast_diff(tsf_index *ix, tsf_index_reader *rd, const uint64_t *a, size_t n, uint64_t seed,
                        size_t probes, uint64_t extra, uint64_t extra_val)
{
    size_t bad = 0;
    uint64_t s = seed, v;
    tsf_error err;
    for (size_t p = 0; p < probes; p++) {
        uint64_t r = tsf_test_rand(&s), x;
        switch (r % 4) {
        case 0:
            x = r;
            break;
        case 1:
            x = n ? a[r / 4 % n] + 1 : r;
            break;
        default:
            x = n ? a[r / 4 % n] : r;
            break;
        }
        if (p == 0) x = extra;
        size_t i = ref_lb(a, n, x);
        int present = (i < n && a[i] == x) || x == extra;
        uint64_t want = x == extra ? extra_val : val_of(x);
        v = ~want;
        tsf_status st = rd ? tsf_index_reader_get(rd, x, &v, &err) : tsf_index_get(ix, x, &v, &err);
        if ((st == TSF_OK) != present || (present && v != want)) bad++;
        if (!present && v != ~want) bad++; /* an absent key leaves *val alone */
    }
    return bad;
}

static void test_fast_path(void)
{
    size_t n = 120000;
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    static const int gens[] = {GEN_UNIFORM,   GEN_CLUSTERED, GEN_TIMESTAMPS,
                               GEN_LOGNORMAL, GEN_EXTREMES,  GEN_DENSE};
    for (size_t gi = 0; gi < sizeof gens / sizeof gens[0]; gi++)
        for (int variant = 0; variant < 6; variant++) { /* fast on/off x scalar/AVX2/AVX-512 kernels */
            int off = variant & 1;
            static const uint32_t vpath[3] = {TSF_PATH_SCALAR, TSF_PATH_AVX2, TSF_PATH_AVX512};
            size_t m = ref_gen(gens[gi], k, n, 300 + gi);
            for (size_t i = 0; i < m; i++) v[i] = val_of(k[i]);
            tsf_index_options o;
            tsf_index_options_init(&o);
            o.flags = off ? TSF_INDEX_NO_FAST_PATH : 0;
            o.path = vpath[variant / 2];
            tsf_index *ix = NULL;
            tsf_error err;
            CHECK_OK(tsf_index_open(&ix, NULL, &o, &err), &err);
            if (!ix) continue;
            CHECK(off ? ix->fast == NULL : ix->fast != NULL); /* the empty index is sealed too */
            /* the kernels asked for, where the CPU has them */
            CHECK_EQ_INT(ix->simd, tsf_path_resolve((tsf_codec_path)o.path) == TSF_PATH_AVX512 ? 2
                                   : tsf_path_resolve((tsf_codec_path)o.path) == TSF_PATH_AVX2 ? 1
                                                                                               : 0);
            uint64_t got = 0;
            CHECK_EQ_INT(tsf_index_get(ix, 5, &got, &err), TSF_ENOTFOUND);
            CHECK_OK(tsf_index_bulk_load(ix, k, v, m, &err), &err);
            CHECK(off ? ix->fast == NULL : ix->fast != NULL);
            if (ix->fast) { /* the sealed routing table is there and routes as the nodes in the file do */
                CHECK(ix->fast->rt != NULL && ix->fast->rt_h == ix->height);
                size_t rbad = 0;
                uint64_t rs = 11 + gi;
                for (int i = 0; i < 20000 && ix->fast->rt; i++) {
                    uint64_t r = tsf_test_rand(&rs), x = i % 2 ? r : k[r % m] + (uint64_t)(i % 4 == 1);
                    if (tsf_lix_rt_route(ix->fast->rt, ix->fast->rt_h, x) != tsf_lix_route(ix, x)) rbad++;
                }
                CHECK_EQ_INT(rbad, 0);
            }
            tsf_index_reader *rd = NULL;
            CHECK_OK(tsf_index_reader_open(ix, &rd, &err), &err);
            /* sealed (twice: the first round readies the leaves through the full protocol) */
            size_t bad = fast_diff(ix, NULL, k, m, 1 + gi, 20000, k[0], val_of(k[0]));
            bad += fast_diff(ix, rd, k, m, 2 + gi, 20000, k[m - 1], val_of(k[m - 1]));
            /* an upsert of a present key and an insert of a new one: unsealed, both answered */
            uint64_t nk = k[m / 2] + 1 != k[m / 2 + 1] ? k[m / 2] + 1 : UINT64_MAX - 1;
            int new_key = ref_lb(k, m, nk) >= m || k[ref_lb(k, m, nk)] != nk;
            CHECK_OK(tsf_index_insert(ix, k[m / 3], 4242, &err), &err);
            CHECK(ix->fast == NULL);
            bad += fast_diff(ix, rd, k, m, 3 + gi, 1, k[m / 3], 4242);
            if (new_key) {
                CHECK_OK(tsf_index_insert(ix, nk, 77, &err), &err);
                bad += fast_diff(ix, NULL, k, m, 4 + gi, 5000, nk, 77);
            }
            CHECK_OK(tsf_index_insert(ix, k[m / 3], val_of(k[m / 3]), &err), &err);
            /* compaction rebuilds the tree: sealed again, the inserted key kept */
            CHECK_OK(tsf_index_compact(ix, &err), &err);
            CHECK(off ? ix->fast == NULL : ix->fast != NULL);
            bad += fast_diff(ix, rd, k, m, 5 + gi, 20000, new_key ? nk : k[1], new_key ? 77 : val_of(k[1]));
            if (bad) fprintf(stderr, "  (generator %s, variant %d)\n", GEN_NAMES[gens[gi]], variant);
            CHECK_EQ_INT(bad, 0);
            tsf_index_reader_close(rd);
            tsf_index_close(ix);
        }
    free(k);
    free(v);
}

/*
 * tsf_index_options.struct_size: a caller compiled against the first version (fields through alloc)
 * is accepted and its missing fields take their defaults (the bytes after its struct are never read:
 * here an experimental grow limit that would make the load fail); sizes below the first version or
 * above the current one are TSF_EINVAL.
 */
static void test_options_size(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsf_index_optsize_%d.ix", (int)getpid());
    uint64_t k[2000], v[2000];
    for (size_t i = 0; i < 2000; i++) k[i] = i * 3, v[i] = i;
    struct tsf_index_experimental x = {.grow_limit = 1}; /* any growth fails as on a full disk */
    tsf_index_options o;
    tsf_index_options_init(&o);
    CHECK_EQ_INT(o.struct_size, sizeof o);
    o.flags = TSF_INDEX_TRUNCATE;
    o.durability = TSF_INDEX_DUR_NONE;
    o.experimental = &x;
    const size_t first = offsetof(tsf_index_options, alloc) + sizeof(void *);
    for (int older = 0; older < 2; older++) {
        o.struct_size = older ? first : sizeof o;
        tsf_index *ix = NULL;
        tsf_error err;
        tsf_status st = tsf_index_open(&ix, path, &o, &err);
        if (st == TSF_OK) st = tsf_index_bulk_load(ix, k, v, 2000, &err);
        if (older) {
            CHECK_OK(st, &err);
            uint64_t got = 0;
            if (ix) CHECK_OK(tsf_index_get(ix, 2 * 3, &got, &err), &err);
            CHECK_EQ_INT(got, 2);
        } else {
            CHECK_EQ_INT(st, TSF_EIO); /* the current size reads the experimental settings */
        }
        tsf_index_close(ix);
    }
    const size_t bad[] = {0, sizeof(size_t), first - 1, sizeof o + 1, sizeof o + 64};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.struct_size = bad[i];
        tsf_index *ix = (tsf_index *)&o;
        tsf_error err = {0};
        CHECK_EQ_INT(tsf_index_open(&ix, path, &o, &err), TSF_EINVAL);
        CHECK(ix == NULL);
        CHECK(strstr(err.message, "struct_size") != NULL);
    }
    unlink(path);
}

/* Optional argument: run only the tests whose name contains it. */
#define RUN(fn)                                                                                              \
    if (argc < 2 || strstr(#fn, argv[1])) TSF_RUN(fn)

int main(int argc, char **argv)
{
    RUN(test_edges);
    RUN(test_options_size);
    RUN(test_duplicates);
    RUN(test_static_1e3);
    RUN(test_static_1e5);
    RUN(test_static_1e6);
    RUN(test_lookup_paths);
    RUN(test_get_many);
    RUN(test_dram_layout);
    RUN(test_fast_path);
    RUN(test_mutations_sorted);
    RUN(test_mutations_dynamic);
    RUN(test_no_block_meta);
    RUN(test_local_search);
    RUN(test_reader_handles);
    return tsf_test_finish();
}
