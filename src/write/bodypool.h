/*
 * bodypool.h - the writer's pool of page-body memory (spec tsfile-container-format.md §6: a chunk is
 * its pages' bodies written one after the other; the writer gathers them by pointer at output, so a
 * column's bodies need not sit in one buffer).
 *
 * Why: a fresh 4 KiB page costs a fault (~13 us on the project's VMs), and a file's chunk buffers
 * touch a whole memory budget of fresh pages. The pool hands out page bodies from 2 MiB blocks that
 * the kernel may back with transparent huge pages (one fault per 2 MiB) and reuses a block as soon
 * as every page in it has been written out, instead of growing one buffer per column.
 *
 * Use: each encoding context allocates from its own current block (no lock): tsf_bpool_reserve
 * returns room for at least n bytes, tsf_bpool_commit marks the bytes up to `end` as one
 * allocation of that block. tsf_bpool_release (any thread) drops one allocation; a block whose
 * allocations are all released returns to the pool's free list once no context allocates from it.
 */
#ifndef TSF_WRITE_BODYPOOL_H
#define TSF_WRITE_BODYPOOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/internal.h"

typedef struct tsf_bblock {
    struct tsf_bblock *prev, *next; /* every block of the pool */
    struct tsf_bblock *nfree;       /* free list */
    uint8_t *base;                  /* usable bytes [base, base + size) */
    size_t size;
    void *raw; /* what was allocated (raw_size bytes) */
    size_t raw_size;
    size_t used;         /* bump offset; only the context whose current block this is changes it */
    _Atomic size_t live; /* committed allocations not yet released */
    int cur;             /* a context's current block (under the pool's mutex) */
    int mapped;          /* raw came from mmap, not from the allocator */
} tsf_bblock;

typedef struct tsf_bpool {
    const tsf_allocator *a;
    int map;      /* no allocator hooks: blocks are mapped by the pool, 2 MiB aligned, MADV_HUGEPAGE */
    size_t bsize; /* block size */
    pthread_mutex_t mu;
    int mu_ok;
    tsf_bblock *all, *free;
    size_t held;   /* bytes of the blocks now allocated */
    size_t peak;   /* most bytes ever held */
    size_t blocks; /* blocks ever created (tests: reuse instead of growth) */
} tsf_bpool;

#define TSF_BPOOL_BLOCK ((size_t)2 << 20)

tsf_status tsf_bpool_init(tsf_bpool *p, const tsf_allocator *a, tsf_error *err);
/* Frees every block (allocations still live included) and the pool's mutex. */
void tsf_bpool_free(tsf_bpool *p);
/* Room for n bytes in *cur (switches *cur to another block when the current one is short); NULL = out of memory. */
uint8_t *tsf_bpool_reserve(tsf_bpool *p, tsf_bblock **cur, size_t n);
/* Marks [next free byte of cur, end) as one allocation; returns its block (for tsf_bpool_release). */
static inline tsf_bblock *tsf_bpool_commit(tsf_bblock *cur, const uint8_t *end)
{
    cur->used = (size_t)(end - cur->base);
    atomic_fetch_add_explicit(&cur->live, 1, memory_order_relaxed);
    return cur;
}
void tsf_bpool_release(tsf_bpool *p, tsf_bblock *b);
/* A context stops allocating from *cur (its block becomes free once its allocations are released). */
void tsf_bpool_drop(tsf_bpool *p, tsf_bblock **cur);

#endif
