/*
 * Concurrency of the learned index (doc/index.md "Concurrency"): one writer thread
 * (inserts, upserts, deletes, compactions) and several reader threads on one handle, both leaf modes.
 * Every reader checks that each key acknowledged before its lookup started (a base key never deleted,
 * or a new key whose insert had returned) is found by get, lower bound, floor, scan and the batched
 * get with its value;
 * afterwards the whole index is compared with the reference. One reader uses the plain calls, the other
 * a per-thread reader handle (tsf_index_reader). Run under ThreadSanitizer in CI.
 */
#include <pthread.h>
#include <stdlib.h>

#include "index_ref.h"

#if defined(__SANITIZE_THREAD__)
#define IX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IX_TSAN 1
#endif
#endif
#ifdef IX_TSAN /* ThreadSanitizer runs ~20x slower: fewer operations, the same interleavings */
enum { NBASE = 6000, NNEW = 1500, NREADERS = 2, COMPACT_EVERY = 500 };
#else
enum { NBASE = 20000, NNEW = 6000, NREADERS = 2, COMPACT_EVERY = 2000 };
#endif

static uint64_t val_of(uint64_t k)
{
    return k * 31 + 7;
}

typedef struct shared {
    tsf_index *ix;
    const uint64_t *base;  /* sorted, even keys; those with i % 4 == 3 get deleted */
    const uint64_t *fresh; /* odd keys inserted by the writer in this order */
    uint64_t published;    /* fresh keys acknowledged so far (atomic) */
    int done;              /* writer finished (atomic) */
    int writer_errors;
} shared;

typedef struct reader {
    shared *sh;
    uint64_t seed, lookups, errors;
    int printed;
    int handle; /* use a per-thread reader handle (tsf_index_reader) for get, lower bound and floor */
} reader;

static int first_key(uint64_t k, uint64_t v, void *arg)
{
    uint64_t *out = arg;
    out[0] = k;
    out[1] = v;
    out[2]++;
    return 1;
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    shared *sh = r->sh;
    tsf_index_reader *h = NULL;
    if (r->handle && tsf_index_reader_open(sh->ix, &h, NULL) != TSF_OK) r->errors++;
    while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) || r->lookups < 2000) {
        uint64_t p = __atomic_load_n(&sh->published, __ATOMIC_ACQUIRE), x = tsf_test_rand(&r->seed);
        uint64_t k;
        if ((x & 1) && p > 0) {
            k = sh->fresh[x / 2 % p];
        } else {
            size_t i = x / 2 % NBASE;
            if (i % 4 == 3) i--; /* deleted at some point: not checked */
            k = sh->base[i];
        }
        uint64_t v = 0, kk = 0, sv[3] = {0, 0, 0};
        tsf_error err;
        tsf_status st;
        switch (x >> 40 & 15) { /* mostly point lookups: ordered reads of written leaves merge a view */
        default:
            st = h ? tsf_index_reader_get(h, k, &v, &err) : tsf_index_get(sh->ix, k, &v, &err);
            if (st != TSF_OK || v != val_of(k)) r->errors++;
            break;
        case 2:
            if (h)
                st = (x >> 42 & 1) ? tsf_index_reader_lower_bound(h, k, &kk, &v, &err)
                                   : tsf_index_reader_floor(h, k, &kk, &v, &err);
            else
                st = (x >> 42 & 1) ? tsf_index_lower_bound(sh->ix, k, &kk, &v, &err)
                                   : tsf_index_floor(sh->ix, k, &kk, &v, &err);
            if (st != TSF_OK || kk != k || v != val_of(k)) r->errors++;
            break;
        case 3:
            st = tsf_index_scan(sh->ix, k, k, first_key, sv, &err);
            if (st != TSF_OK || sv[2] != 1 || sv[0] != k || sv[1] != val_of(k)) r->errors++;
            break;
        case 4: { /* a batch of 16 (the batched lookup's three stages on leaves the writer changes) */
            uint64_t ks[16], vs[16];
            uint8_t fd[16];
            for (int j = 0; j < 16; j++) {
                uint64_t y = tsf_test_rand(&r->seed);
                size_t i = y / 2 % NBASE;
                if (i % 4 == 3) i--;
                ks[j] = (y & 1) && p > 0 ? sh->fresh[y / 2 % p] : sh->base[i];
            }
            st = h ? tsf_index_reader_get_many(h, ks, 16, vs, fd, &err)
                   : tsf_index_get_many(sh->ix, ks, 16, vs, fd, &err);
            for (int j = 0; j < 16; j++)
                if (st != TSF_OK || !fd[j] || vs[j] != val_of(ks[j])) r->errors++, k = ks[j], v = vs[j];
            break;
        }
        }
        if (r->errors == 1 && !r->printed) {
            fprintf(stderr, "reader: key %llu op %llu status %d value %llu\n", (unsigned long long)k,
                    (unsigned long long)(x >> 40 & 15), st, (unsigned long long)v);
            r->printed = 1;
        }
        r->lookups++;
    }
    tsf_index_reader_close(h);
    return NULL;
}

static void *writer_main(void *arg)
{
    shared *sh = arg;
    tsf_error err;
    size_t del = 3;
    for (size_t i = 0; i < NNEW; i++) {
        if (tsf_index_insert(sh->ix, sh->fresh[i], val_of(sh->fresh[i]), &err) != TSF_OK) sh->writer_errors++;
        __atomic_store_n(&sh->published, i + 1, __ATOMIC_RELEASE);
        /* upsert a base key with the same value, delete one of the deletable ones */
        size_t j = (i * 7919) % NBASE;
        uint64_t b = sh->base[j % 4 == 3 ? j - 1 : j]; /* never a deletable key (no resurrection) */
        if (tsf_index_insert(sh->ix, b, val_of(b), &err) != TSF_OK) sh->writer_errors++;
        if (i % 3 == 0 && del < NBASE) {
            tsf_status st = tsf_index_delete(sh->ix, sh->base[del], &err);
            if (st != TSF_OK && st != TSF_ENOTFOUND) sh->writer_errors++;
            del += 4;
        }
        if (i % COMPACT_EVERY == COMPACT_EVERY - 1 && tsf_index_compact(sh->ix, &err) != TSF_OK)
            sh->writer_errors++;
    }
    __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void run(uint32_t mode)
{
    uint64_t *base = malloc(NBASE * 8), *vals = malloc(NBASE * 8), *fresh = malloc(NNEW * 8), s = 99 + mode;
    size_t nb = 0;
    while (nb < NBASE) { /* distinct even keys, sorted */
        for (size_t i = nb; i < NBASE; i++) base[i] = tsf_test_rand(&s) & ~UINT64_C(1);
        nb = ref_sort_unique(base, NBASE);
    }
    for (size_t i = 0; i < NBASE; i++) vals[i] = val_of(base[i]);
    for (size_t i = 0; i < NNEW; i++) fresh[i] = tsf_test_rand(&s) | 1; /* odd: never a base key */
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = mode;
    tsf_index *ix = NULL;
    tsf_error err;
    CHECK_OK(tsf_index_open(&ix, NULL, &o, &err), &err);
    if (!ix) return;
    CHECK_OK(tsf_index_bulk_load(ix, base, vals, NBASE, &err), &err);
    shared sh = {ix, base, fresh, 0, 0, 0};
    reader rd[NREADERS];
    pthread_t th[NREADERS + 1];
    for (int t = 0; t < NREADERS; t++) {
        rd[t] = (reader){&sh, 1000 + (uint64_t)t, 0, 0, 0, t % 2}; /* one plain reader, one with a handle */
        pthread_create(&th[t], NULL, reader_main, &rd[t]);
    }
    pthread_create(&th[NREADERS], NULL, writer_main, &sh);
    uint64_t lookups = 0;
    for (int t = 0; t <= NREADERS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < NREADERS; t++) {
        CHECK_EQ_INT(rd[t].errors, 0);
        lookups += rd[t].lookups;
    }
    CHECK_EQ_INT(sh.writer_errors, 0);
    CHECK(lookups >= NREADERS * 2000);
    fprintf(stderr, "  %llu lookups by %d readers during the writes\n", (unsigned long long)lookups,
            NREADERS);
    /* the final content: base minus the deleted keys, plus every fresh key */
    CHECK_OK(tsf_index_check(ix, &err), &err);
    size_t bad = 0;
    uint64_t v;
    for (size_t i = 0; i < NBASE; i++) {
        int deleted = i % 4 == 3 && i < 3 + 4 * ((NNEW + 2) / 3);
        tsf_status st = tsf_index_get(ix, base[i], &v, &err);
        if (deleted ? st != TSF_ENOTFOUND : (st != TSF_OK || v != vals[i])) bad++;
    }
    for (size_t i = 0; i < NNEW; i++)
        if (tsf_index_get(ix, fresh[i], &v, &err) != TSF_OK || v != val_of(fresh[i])) bad++;
    CHECK_EQ_INT(bad, 0);
    tsf_index_close(ix);
    free(base);
    free(vals);
    free(fresh);
}

static void test_concurrent_sorted(void)
{
    run(TSF_INDEX_SORTED);
}

static void test_concurrent_dynamic(void)
{
    run(TSF_INDEX_DYNAMIC);
}

int main(void)
{
    TSF_RUN(test_concurrent_sorted);
    TSF_RUN(test_concurrent_dynamic);
    return tsf_test_finish();
}
