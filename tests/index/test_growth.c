/*
 * Space bound of the learned index under long insert workloads (doc/index.md "Overflow and space"):
 * clustered (osm-like) keys are bulk loaded, then random keys and keys next to loaded ones are inserted
 * in rounds. Leaves whose keys do not follow one line spill into their overflow logs and are rebuilt
 * copy-on-write again and again; the file must stay within a fixed number of bytes per live key after
 * every round (rebuild triggers amortised on the leaf's size, dead space reclaimed by automatic
 * compaction), also while the same keys are upserted over and over, and every key must still be found
 * with its latest value. Mutants: the old rebuild trigger (16 chunks) without automatic compaction fails
 * both modes (455 B/key sorted, over 400 dynamic); no automatic compaction alone fails the upsert rounds.
 */
#include "index_ref.h"

/* Bytes of file allowed per live key at any time (a bulk-loaded dynamic index takes ~35-80). */
#define GROWTH_BOUND 260.0

static void run_growth(uint32_t mode, size_t nload, size_t nins, size_t rounds, size_t fresh)
{
    uint64_t *k = malloc(nload * 8), *v = malloc(nload * 8);
    ref_map ref;
    ref_init(&ref, nload + nins * rounds);
    size_t n = ref_gen(GEN_CLUSTERED, k, nload, 11 + mode);
    for (size_t i = 0; i < n; i++) {
        v[i] = i * 7 + 1;
        ref_put(&ref, k[i], v[i]);
    }
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = mode;
    o.durability = TSF_INDEX_DUR_NONE;
    tsf_index *ix = NULL;
    tsf_error err;
    CHECK_OK(tsf_index_open(&ix, NULL, &o, &err), &err);
    if (!ix) goto out;
    CHECK_OK(tsf_index_bulk_load(ix, k, v, n, &err), &err);
    uint64_t s = 99 + mode;
    double worst = 0;
    for (size_t r = 0; r < rounds; r++) {
        for (size_t i = 0; i < nins; i++) {
            uint64_t x = tsf_test_rand(&s), key;
            /* the first `fresh` rounds: new keys, half uniform over the key space, half just after a
               loaded key (inside a cluster); then upserts of loaded keys (no new live key: only
               compaction gives their space back) */
            if (r >= fresh)
                key = k[x % n];
            else
                key = x & 1 ? tsf_test_rand(&s) : k[(x >> 1) % n] + 1 + (x >> 40) % 3;
            uint64_t val = r * nins + i;
            tsf_status st = tsf_index_insert(ix, key, val, &err);
            if (st != TSF_OK) {
                CHECK_OK(st, &err);
                goto done;
            }
            ref_put(&ref, key, val);
        }
        tsf_index_stats stt;
        CHECK_OK(tsf_index_stats_get(ix, &stt), &err);
        double bpk = (double)stt.file_bytes / (double)ref.live;
        if (bpk > worst) worst = bpk;
        if (bpk > GROWTH_BOUND) {
            fprintf(stderr, "  %s round %zu: %.0f file bytes per key (%llu bytes, %zu keys, %llu rebuilds)\n",
                    mode ? "dynamic" : "sorted", r, bpk, (unsigned long long)stt.file_bytes, ref.live,
                    (unsigned long long)stt.leaf_rebuilds);
            CHECK(bpk <= GROWTH_BOUND);
            goto done;
        }
    }
    printf("  %s: %zu keys loaded, %zu written: at most %.1f file bytes per key\n",
           mode ? "dynamic" : "sorted", n, nins * rounds, worst);
    /* every key with its latest value, a few absent keys, and the invariants */
    size_t bad = 0;
    for (size_t i = 0; i < ref.cap; i++) {
        if (ref.used[i] != 1) continue;
        uint64_t got = 0;
        if (tsf_index_get(ix, ref.k[i], &got, &err) != TSF_OK || got != ref.v[i]) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    for (size_t i = 0; i < 1000; i++) {
        uint64_t x = tsf_test_rand(&s), got;
        if (!ref_get(&ref, x, &got)) CHECK(tsf_index_get(ix, x, &got, &err) == TSF_ENOTFOUND);
    }
    CHECK_OK(tsf_index_check(ix, &err), &err);
done:
    tsf_index_close(ix);
out:
    ref_free(&ref);
    free(k);
    free(v);
}

static void test_dynamic_growth(void)
{
    run_growth(TSF_INDEX_DYNAMIC, 100000, 25000, 60, 12);
}

static void test_sorted_growth(void)
{
    run_growth(TSF_INDEX_SORTED, 100000, 25000, 60, 12);
}

int main(void)
{
    TSF_RUN(test_dynamic_growth);
    TSF_RUN(test_sorted_growth);
    return tsf_test_finish();
}
