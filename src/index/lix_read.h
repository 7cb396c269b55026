/*
 * lix_read.h - the reader side of the learned index, shared by point lookups (lookup.c), ordered access
 * (scan.c) and writer-side routing (route.c): registration around one read call, consistent copies of
 * the tree fields and of a leaf entry (seqlocks), and routing through the internal nodes in the file.
 * Everything here is inline: it is the hot path of every lookup.
 */
#ifndef TSF_INDEX_LIX_READ_H
#define TSF_INDEX_LIX_READ_H

#include <sched.h>

#include "index_internal.h"

/* A per-thread reader handle: the index and the registration slot it claimed. */
struct tsf_index_reader {
    tsf_index *ix;
    tsf_lix_rdslot *slot;
};

/*
 * Readers register in one of IX_RSLOTS counters (picked by stack address, so threads rarely share a
 * line), under the parity of tsf_rd_epoch, and re-check the epoch after registering. The writer retires
 * memory that readers may still hold (replaced leaf arrays, metadata, chunk lists, views, whole trees),
 * and reclaims it by flipping the epoch and waiting until no reader of the old parity is inside: every
 * such reader registered before the flip, and any later one cannot reach the retired memory.
 */
static inline uint32_t tsf_lix_rd_enter(tsf_index *ix)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uint32_t slot = (uint32_t)(((uint64_t)(sp >> 12) * UINT64_C(0x9E3779B97F4A7C15)) >> 59) % IX_RSLOTS;
    for (;;) {
        uint64_t e = __atomic_load_n(&ix->tsf_rd_epoch, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&ix->rd[slot].n[e & 1], 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&ix->tsf_rd_epoch, __ATOMIC_SEQ_CST) == e) return slot << 1 | (uint32_t)(e & 1);
        __atomic_fetch_sub(&ix->rd[slot].n[e & 1], 1, __ATOMIC_RELEASE);
    }
}

static inline void tsf_lix_rd_exit(tsf_index *ix, uint32_t t)
{
    __atomic_fetch_sub(&ix->rd[t >> 1].n[t & 1], 1, __ATOMIC_RELEASE);
}

/* Reader handles: publish / clear the slot state around one lookup (see tsf_lix_rdslot). */
static inline void tsf_lix_slot_enter(tsf_index *ix, tsf_lix_rdslot *r)
{
    uint64_t e = __atomic_load_n(&ix->tsf_rd_epoch, __ATOMIC_ACQUIRE);
    if (ix->asym) {
        __atomic_store_n(&r->state, e << 1 | 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the writer's membarrier orders it with our loads */
    } else {
        __atomic_store_n(&r->state, e << 1 | 1, __ATOMIC_SEQ_CST);
    }
}
static inline void tsf_lix_slot_exit(tsf_lix_rdslot *r)
{
    __atomic_store_n(&r->state, 0, __ATOMIC_RELEASE);
}

/* Registration of one read call: through the caller's reader handle (rs) or a shared counter. */
static inline uint32_t tsf_lix_enter(tsf_index *ix, tsf_lix_rdslot *rs)
{
    if (rs) {
        tsf_lix_slot_enter(ix, rs);
        return 0;
    }
    return tsf_lix_rd_enter(ix);
}
static inline void tsf_lix_exit(tsf_index *ix, tsf_lix_rdslot *rs, uint32_t t)
{
    if (rs)
        tsf_lix_slot_exit(rs);
    else
        tsf_lix_rd_exit(ix, t);
}

TSF_INLINE void tsf_lix_tree_snap(tsf_index *ix, tsf_lix_tree *t)
{
    for (uint32_t spin = 0;; spin++) {
        uint64_t g = __atomic_load_n(&ix->gen, __ATOMIC_ACQUIRE);
        if (!(g & 1)) {
            t->root_off = IX_LD(&ix->root_off);
            t->root_origin = IX_LD(&ix->root_origin);
            t->root_mul = IX_LD(&ix->root_mul);
            t->root_fanout = IX_LD(&ix->root_fanout);
            t->leaves = IX_LD(&ix->leaves);
            t->n_leaves = IX_LD(&ix->n_leaves);
            t->gen = g;
            if (tsf_lix_tree_valid(ix, g)) return;
        }
        if (spin < 64)
            tsf_lix_pause();
        else
            sched_yield();
    }
}

/* The fields of a leaf entry a sorted lookup reads (no version check: tsf_lix_leaf_snap wraps it in one; the
   sealed fast path's rare cases call it directly). */
static inline void tsf_lix_leaf_fields(const tsf_lix_leaf *L, tsf_lix_leaf *S)
{
    S->off = IX_LD(&L->off);
    S->origin = IX_LD(&L->origin);
    S->mul = IX_LD(&L->mul);
    S->nbase = IX_LD(&L->nbase);
    S->meta = IX_LDA(&L->meta); /* acquire: the metadata was written before it was published */
    S->nblocks = IX_LD(&L->nblocks);
    S->err_lo = IX_LD(&L->err_lo);
    S->err_hi = IX_LD(&L->err_hi);
    S->shift = IX_LD(&L->shift);
    S->rsh = IX_LD(&L->rsh);
}

TSF_INLINE uint32_t tsf_lix_leaf_snap(const tsf_lix_leaf *L, tsf_lix_leaf *S)
{
    for (uint32_t spin = 0;; spin++) {
        uint32_t v = __atomic_load_n(&L->ver, __ATOMIC_ACQUIRE);
        if (!(v & 1)) {
            tsf_lix_leaf_fields(L, S);
            S->w = IX_LDA(&L->w); /* acquire: the state behind it was written before it was published */
            S->ready = IX_LD(&L->ready);
            if (tsf_lix_leaf_valid(L, v)) return v;
        }
        if (spin < 64)
            tsf_lix_pause();
        else
            sched_yield();
    }
}

/*
 * Ablation TSF_INDEX_LOCAL_SEARCH (benchmarks only): the slot found by a binary search over the children's
 * first keys (origin + ceil(s * 2^64 / mul), computed per probe) instead of one model evaluation; the
 * same slot, so results are identical.
 */
static uint64_t tsf_lix_slot_search(uint64_t key, uint64_t origin, uint64_t mul, uint64_t f)
{
    uint64_t a = 0, n = f; /* largest s with s == 0 or key >= start(s) */
    while (n > 1) {
        uint64_t half = n / 2, s = a + half;
        int ge = 0;
        if (mul != 0 && key >= origin) {
            unsigned __int128 t = (((unsigned __int128)s << 64) + mul - 1) / mul;
            ge = t <= (unsigned __int128)(key - origin);
        }
        a = ge ? s : a;
        n -= half;
    }
    return a;
}

TSF_INLINE uint64_t tsf_lix_route_from(const uint8_t *base, uint64_t off, uint64_t origin, uint64_t mul,
                                  uint64_t f, uint64_t key, int local)
{
    for (;;) {
        uint64_t i =
            TSF_UNLIKELY(local) ? tsf_lix_slot_search(key, origin, mul, f) : tsf_lix_model(key, origin, mul, f);
        const uint8_t *s = base + off + IX_NODE_HDR + i * IX_SLOT;
        uint64_t child = ld64(s + SL_O_CHILD);
        if (ld32(s + SL_O_KIND) == SL_LEAF) return child;
        origin = ld64(s + SL_O_ORIGIN);
        mul = ld64(s + SL_O_MUL);
        f = ld32(s + SL_O_FANOUT);
        off = child;
    }
}

TSF_INLINE uint64_t tsf_lix_route_in(const tsf_index *ix, const tsf_lix_tree *t, uint64_t key)
{
    return tsf_lix_route_from(ix->pm.base, t->root_off, t->root_origin, t->root_mul, t->root_fanout, key,
                         (ix->flags & TSF_INDEX_LOCAL_SEARCH) != 0);
}

#endif
