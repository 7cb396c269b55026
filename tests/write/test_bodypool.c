/*
 * The writer's page-body pool (src/write/bodypool.c): allocations from a context's current block
 * do not overlap and keep their bytes until released; a block whose allocations are all released
 * is reused (a writer that flushes chunk group after chunk group creates no new blocks), with and
 * without allocator hooks; an allocation larger than a block gets a block of its own that is
 * freed when released; allocations released by another thread while the owner keeps allocating
 * (the writer's output thread) come back to the pool; everything is freed with the pool.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "write/bodypool.h"

typedef struct track {
    size_t live, bytes;
} track;

static void *tr_alloc(void *ud, size_t n)
{
    track *t = ud;
    t->live++;
    t->bytes += n;
    return malloc(n);
}
static void *tr_realloc(void *ud, void *p, size_t o, size_t n)
{
    track *t = ud;
    t->bytes += n - o;
    return realloc(p, n);
}
static void tr_free(void *ud, void *p, size_t n)
{
    track *t = ud;
    t->live--;
    t->bytes -= n;
    free(p);
}

/* Fills an allocation with a pattern of (seed, index). */
static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed * 31 + i * 7);
}
static int same(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed * 31 + i * 7)) return 0;
    return 1;
}

enum { NPAGE = 120 };

/* Chunk groups of pages of 60-100 KB (as GORILLA pages of 10,000 doubles): fill, check, release all. */
static void cycles(const tsf_allocator *a)
{
    tsf_bpool p;
    tsf_error err = {0};
    CHECK_OK(tsf_bpool_init(&p, a, &err), &err);
    tsf_bblock *cur = NULL;
    const uint8_t *body[NPAGE];
    size_t len[NPAGE];
    tsf_bblock *blk[NPAGE];
    size_t after_first = 0;
    for (unsigned cyc = 0; cyc < 20; cyc++) {
        for (unsigned i = 0; i < NPAGE; i++) {
            size_t bound = 100000, n = 60000 + (size_t)((i * 7919u + cyc * 104729u) % 40000);
            uint8_t *d = tsf_bpool_reserve(&p, &cur, bound);
            CHECK(d != NULL);
            if (!d) return;
            fill(d, n, cyc * NPAGE + i);
            body[i] = d;
            len[i] = n;
            blk[i] = tsf_bpool_commit(cur, d + n);
        }
        /* no two allocations overlap: every pattern intact */
        int ok = 1;
        for (unsigned i = 0; i < NPAGE; i++) ok &= same(body[i], len[i], cyc * NPAGE + i);
        CHECK(ok);
        for (unsigned i = 0; i < NPAGE; i++) tsf_bpool_release(&p, blk[i]);
        if (cyc == 0) after_first = p.blocks;
    }
    /* 120 pages of <= 100 KB: 6 blocks of 2 MiB; later chunk groups reuse them */
    CHECK(after_first <= 7);
    CHECK_EQ_INT(p.blocks, after_first);
    CHECK(p.peak <= after_first * TSF_BPOOL_BLOCK);
    tsf_bpool_drop(&p, &cur);
    CHECK(cur == NULL);
    tsf_bpool_free(&p);
    CHECK_EQ_INT(p.held, 0);
}

static void test_reuse_mapped(void) { cycles(NULL); }

static void test_reuse_hooks(void)
{
    track tr = {0, 0};
    tsf_allocator a = {tr_alloc, tr_realloc, tr_free, &tr};
    cycles(&a);
    CHECK_EQ_INT(tr.live, 0);
    CHECK_EQ_INT(tr.bytes, 0);
}

/* An allocation larger than a block: a block of its own, freed on release. */
static void test_oversize(void)
{
    track tr = {0, 0};
    tsf_allocator a = {tr_alloc, tr_realloc, tr_free, &tr};
    tsf_bpool p;
    tsf_error err = {0};
    CHECK_OK(tsf_bpool_init(&p, &a, &err), &err);
    tsf_bblock *cur = NULL;
    uint8_t *d = tsf_bpool_reserve(&p, &cur, 1000);
    CHECK(d != NULL);
    tsf_bblock *small = tsf_bpool_commit(cur, d + 1000);
    size_t big = TSF_BPOOL_BLOCK * 2 + 5;
    uint8_t *e = tsf_bpool_reserve(&p, &cur, big);
    CHECK(e != NULL);
    if (!e) return;
    fill(e, big, 3);
    tsf_bblock *bb = tsf_bpool_commit(cur, e + big);
    CHECK(bb != small);
    CHECK(bb->size >= big);
    CHECK_EQ_INT(p.held, TSF_BPOOL_BLOCK + bb->size);
    /* an allocation that does not fit in the big block's rest leaves it: released, it is freed */
    uint8_t *f = tsf_bpool_reserve(&p, &cur, TSF_BPOOL_BLOCK);
    CHECK(f != NULL);
    CHECK(same(e, big, 3));
    tsf_bpool_release(&p, bb);
    CHECK_EQ_INT(p.held, 2 * TSF_BPOOL_BLOCK); /* the first block (still live) + the new current one */
    tsf_bpool_release(&p, small);
    tsf_bpool_free(&p);
    CHECK_EQ_INT(tr.live, 0);
}

/* The owner allocates while another thread releases (the writer's output thread). */
typedef struct relq {
    pthread_mutex_t mu;
    tsf_bblock *q[64];
    size_t head, tail;
    int done;
    tsf_bpool *p;
} relq;

static void *releaser(void *arg)
{
    relq *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        tsf_bblock *b = r->head != r->tail ? r->q[r->head++ % 64] : NULL;
        int done = r->done && !b;
        pthread_mutex_unlock(&r->mu);
        if (b) tsf_bpool_release(r->p, b);
        if (done) return NULL;
    }
}

static void test_release_other_thread(void)
{
    tsf_bpool p;
    tsf_error err = {0};
    CHECK_OK(tsf_bpool_init(&p, NULL, &err), &err);
    relq r = {.head = 0, .tail = 0, .done = 0, .p = &p};
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, releaser, &r) == 0);
    tsf_bblock *cur = NULL;
    int ok = 1;
    for (unsigned i = 0; i < 20000; i++) {
        uint8_t *d = tsf_bpool_reserve(&p, &cur, 70000);
        if (!d) {
            ok = 0;
            break;
        }
        fill(d, 256, i);
        tsf_bblock *b = tsf_bpool_commit(cur, d + 65000);
        for (;;) { /* at most 64 pages in flight */
            pthread_mutex_lock(&r.mu);
            int room = r.tail - r.head < 64;
            if (room) r.q[r.tail++ % 64] = b;
            pthread_mutex_unlock(&r.mu);
            if (room) break;
        }
    }
    pthread_mutex_lock(&r.mu);
    r.done = 1;
    pthread_mutex_unlock(&r.mu);
    pthread_join(th, NULL);
    CHECK(ok);
    /* 64 pages of 65 KB in flight: a few blocks, not one per 32 pages */
    CHECK(p.blocks <= 6);
    tsf_bpool_drop(&p, &cur);
    tsf_bpool_free(&p);
    pthread_mutex_destroy(&r.mu);
}

int main(void)
{
    TSF_RUN(test_reuse_mapped);
    TSF_RUN(test_reuse_hooks);
    TSF_RUN(test_oversize);
    TSF_RUN(test_release_other_thread);
    return tsf_test_finish();
}
