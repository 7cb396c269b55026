/*
 * bodypool.c - the writer's pool of page-body memory (see bodypool.h; spec
 * tsfile-container-format.md §6: the page bodies of a chunk are gathered by pointer at output).
 * Blocks of 2 MiB: with no allocator hooks they are mapped by the pool, 2 MiB aligned and advised
 * MADV_HUGEPAGE (one fault per block where transparent huge pages are enabled for madvise), with
 * hooks they come from the hooks. Blocks are reused once their pages are written, so a writer
 * touches fresh memory only while its first memory budget fills.
 */
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "bodypool.h"

#define HUGE ((size_t)2 << 20)

/* AddressSanitizer checks the bounds of allocations, not of mapped blocks: under it, blocks come
   from malloc and the pending-page arrays stay the writer's own allocations (column.c). */
#if defined(__SANITIZE_ADDRESS__)
#define BP_NOMAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BP_NOMAP 1
#endif
#endif

tsf_status tsf_bpool_init(tsf_bpool *p, const tsf_allocator *a, tsf_error *err)
{
    memset(p, 0, sizeof *p);
    p->a = a;
#if defined(__linux__) && defined(MAP_ANONYMOUS) && !defined(BP_NOMAP)
    p->map = a == NULL;
#endif
    p->bsize = TSF_BPOOL_BLOCK;
    if (pthread_mutex_init(&p->mu, NULL)) return tsf_err(err, TSF_ENOMEM, "writer: cannot create a mutex");
    p->mu_ok = 1;
    return TSF_OK;
}

/* A block of at least n usable bytes (a multiple of the block size); NULL = out of memory. */
static tsf_bblock *block_new(tsf_bpool *p, size_t n)
{
    size_t size = n <= p->bsize ? p->bsize : (n + HUGE - 1) / HUGE * HUGE;
    if (size < n) return NULL; /* overflow */
    tsf_bblock *b = tsf_calloc(p->a, 1, sizeof *b);
    if (!b) return NULL;
    b->size = size;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (p->map) {
        /* map size + 2 MiB, keep the 2 MiB aligned part */
        size_t raw = size + HUGE;
        uint8_t *r = mmap(NULL, raw, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r == MAP_FAILED) {
            tsf_free(p->a, b, sizeof *b);
            return NULL;
        }
        uint8_t *al = (uint8_t *)(((uintptr_t)r + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
        if (al > r) munmap(r, (size_t)(al - r));
        if ((size_t)(al - r) < HUGE) munmap(al + size, HUGE - (size_t)(al - r));
#ifdef MADV_HUGEPAGE
        madvise(al, size, MADV_HUGEPAGE); /* a hint: 4 KiB pages where huge pages are off */
#endif
        b->raw = b->base = al;
        b->raw_size = size;
        b->mapped = 1;
    }
#endif
    if (!b->mapped) {
        b->raw = b->base = tsf_alloc(p->a, size);
        if (!b->raw) {
            tsf_free(p->a, b, sizeof *b);
            return NULL;
        }
        b->raw_size = size;
    }
    b->next = p->all;
    if (p->all) p->all->prev = b;
    p->all = b;
    p->held += size;
    if (p->held > p->peak) p->peak = p->held;
    p->blocks++;
    return b;
}

static void block_destroy(tsf_bpool *p, tsf_bblock *b)
{
    if (b->prev) b->prev->next = b->next;
    else p->all = b->next;
    if (b->next) b->next->prev = b->prev;
    p->held -= b->size;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (b->mapped) munmap(b->raw, b->raw_size);
#endif
    if (!b->mapped) tsf_free(p->a, b->raw, b->raw_size);
    tsf_free(p->a, b, sizeof *b);
}

/* Under the mutex: a block with no allocation and no context: kept for reuse (oversize ones freed). */
static void block_idle(tsf_bpool *p, tsf_bblock *b)
{
    if (b->size != p->bsize) {
        block_destroy(p, b);
        return;
    }
    b->used = 0;
    b->nfree = p->free;
    p->free = b;
}

void tsf_bpool_free(tsf_bpool *p)
{
    while (p->all) block_destroy(p, p->all);
    p->free = NULL;
    if (p->mu_ok) pthread_mutex_destroy(&p->mu);
    p->mu_ok = 0;
}

uint8_t *tsf_bpool_reserve(tsf_bpool *p, tsf_bblock **cur, size_t n)
{
    tsf_bblock *b = *cur;
    if (b) {
        /* every allocation of the block is written out: start it over (its memory is faulted in) */
        if (b->used && atomic_load_explicit(&b->live, memory_order_acquire) == 0) b->used = 0;
        if (b->size - b->used >= n) return b->base + b->used;
    }
    pthread_mutex_lock(&p->mu);
    if (b) {
        b->cur = 0;
        if (atomic_load_explicit(&b->live, memory_order_acquire) == 0) block_idle(p, b);
    }
    *cur = NULL;
    if (n <= p->bsize && p->free) {
        b = p->free;
        p->free = b->nfree;
    } else {
        b = block_new(p, n);
    }
    if (b) {
        b->cur = 1;
        b->used = 0;
        *cur = b;
    }
    pthread_mutex_unlock(&p->mu);
    return b ? b->base : NULL;
}

void tsf_bpool_release(tsf_bpool *p, tsf_bblock *b)
{
    pthread_mutex_lock(&p->mu);
    if (atomic_fetch_sub_explicit(&b->live, 1, memory_order_acq_rel) == 1 && !b->cur) block_idle(p, b);
    pthread_mutex_unlock(&p->mu);
}

void tsf_bpool_drop(tsf_bpool *p, tsf_bblock **cur)
{
    tsf_bblock *b = *cur;
    if (!b) return;
    pthread_mutex_lock(&p->mu);
    b->cur = 0;
    if (atomic_load_explicit(&b->live, memory_order_acquire) == 0) block_idle(p, b);
    pthread_mutex_unlock(&p->mu);
    *cur = NULL;
}
