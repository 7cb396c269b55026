/*
 * index.c - the PLTree-style learned index: two-phase build, open/recovery, exact routing and reads
 * (learned-index.md sections 1.3, 4.1-4.5; doc/index.md).
 *
 * Build: a shrinking-cone PLA (pla.c) of the keys gives the leaf boundaries (layout level 0); PLA of
 * those boundaries gives level 1, and so on until at most 7 remain (bottom-up). Then, top-down, every
 * node's integer model slot = min(f-1, ((key - origin) * mul) >> 64) *defines* its children's key
 * ranges; each child's model is fitted to the next-lower layout keys inside its range, and leaves take
 * the data keys inside theirs. Routing is therefore exact: internal nodes never search.
 * Reads: route (one 32 B slot per level), then the leaf. Sorted leaves search a window bounded by the
 * leaf model's measured error, after a DRAM bloom word per block rejects absent keys; dynamic leaves
 * compare one-byte DRAM fingerprints of the predicted block, then of the overflow log.
 */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "index_internal.h"
#include "pla.h"

uint64_t tsf_lix_mul_for(uint64_t f, uint64_t span)
{
    if (f <= 1) return 0;
    unsigned __int128 q = ((unsigned __int128)f << 64) / ((unsigned __int128)span + 1);
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static uint32_t tsf_lix_crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

/* ---- child ranges ---------------------------------------------------------------------------- */

/*
 * Range of slot i of a node (origin, mul, f) responsible for [lo, hi]: the keys the routing function
 * sends to i. slot(k) >= i  <=>  k >= origin + ceil(i * 2^64 / mul), for i >= 1. Empty -> lo=1, hi=0.
 */
static void tsf_lix_child_range(uint64_t origin, uint64_t mul, uint64_t f, uint64_t lo, uint64_t hi, uint64_t i,
                           uint64_t *clo, uint64_t *chi)
{
    unsigned __int128 lim = (unsigned __int128)UINT64_MAX - origin;
    uint64_t s = lo, e = hi;
    int empty = lo > hi;
    if (i > 0) {
        if (mul == 0) {
            empty = 1;
        } else {
            unsigned __int128 t = (((unsigned __int128)i << 64) + mul - 1) / mul;
            if (t > lim)
                empty = 1;
            else if (origin + (uint64_t)t > s)
                s = origin + (uint64_t)t;
        }
    }
    if (i + 1 < f && mul != 0) {
        unsigned __int128 t = (((unsigned __int128)(i + 1) << 64) + mul - 1) / mul;
        if (t <= lim) {
            uint64_t next = origin + (uint64_t)t; /* >= 1 since t >= 1 */
            if (next - 1 < e) e = next - 1;
        }
    }
    if (empty || s > e) {
        *clo = 1;
        *chi = 0;
    } else {
        *clo = s;
        *chi = e;
    }
}

/* ---- routing --------------------------------------------------------------------------------- */

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

uint64_t tsf_lix_route(const tsf_index *ix, uint64_t key)
{
    return tsf_lix_route_from(ix->pm.base, ix->root_off, ix->root_origin, ix->root_mul, ix->root_fanout, key,
                         (ix->flags & TSF_INDEX_LOCAL_SEARCH) != 0);
}

TSF_INLINE uint64_t tsf_lix_route_in(const tsf_index *ix, const tsf_lix_tree *t, uint64_t key)
{
    return tsf_lix_route_from(ix->pm.base, t->root_off, t->root_origin, t->root_mul, t->root_fanout, key,
                         (ix->flags & TSF_INDEX_LOCAL_SEARCH) != 0);
}

/* ---- concurrency: reader registration, reclamation, leaf seqlock ------------------------------ */

/*
 * Readers register in one of IX_RSLOTS counters (picked by stack address, so threads rarely share a
 * line), under the parity of tsf_rd_epoch, and re-check the epoch after registering. The writer retires
 * memory that readers may still hold (replaced leaf arrays, metadata, chunk lists, views, whole trees),
 * and reclaims it by flipping the epoch and waiting until no reader of the old parity is inside: every
 * such reader registered before the flip, and any later one cannot reach the retired memory.
 */
uint32_t tsf_lix_rd_enter(tsf_index *ix)
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

void tsf_lix_rd_exit(tsf_index *ix, uint32_t t)
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

/*
 * membarrier(2): the writer makes every running thread of the process execute a full barrier, so reader
 * handles need none. Registration is per process and idempotent (kernel state, nothing in this library).
 */
static int tsf_lix_membarrier(int cmd)
{
#if defined(__linux__) && defined(SYS_membarrier)
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
#else
    (void)cmd;
    return -1;
#endif
}
#define IX_MB_PRIVATE_EXPEDITED (1 << 3)
#define IX_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

/* Waits until every reader that registered before now has left. */
static void tsf_lix_synchronize(tsf_index *ix)
{
    uint64_t e = __atomic_load_n(&ix->tsf_rd_epoch, __ATOMIC_RELAXED);
    __atomic_store_n(&ix->tsf_rd_epoch, e + 1, __ATOMIC_SEQ_CST);
    if (ix->asym && tsf_lix_membarrier(IX_MB_PRIVATE_EXPEDITED) != 0) __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (uint32_t s = 0; s < IX_RSLOTS; s++)
        for (uint32_t spin = 0; __atomic_load_n(&ix->rd[s].n[e & 1], __ATOMIC_ACQUIRE) != 0; spin++) {
            if (spin < 64)
                tsf_lix_pause();
            else
                sched_yield();
        }
    /* Reader handles inside a lookup that started under an older epoch (a state from before the flip, or
       published late: then the barrier above guarantees it sees what the writer unlinked). */
    for (uint32_t s = 0; ix->rslots && s < IX_READERS; s++)
        for (uint32_t spin = 0;; spin++) {
            uint64_t st = __atomic_load_n(&ix->rslots[s].state, __ATOMIC_ACQUIRE);
            if (!(st & 1) || st >> 1 == e + 1) break;
            if (spin < 64)
                tsf_lix_pause();
            else
                sched_yield();
        }
}

void tsf_lix_retire(tsf_index *ix, void *p, uint64_t bytes)
{
    if (!p) return;
    if (ix->nret == ix->capret) {
        uint64_t nc = ix->capret ? ix->capret * 2 : 16;
        tsf_lix_retired *r = tsf_realloc(ix->alloc, ix->ret, ix->capret * sizeof *r, nc * sizeof *r);
        if (!r) { /* no room to defer: wait for the readers now */
            tsf_lix_synchronize(ix);
            tsf_free(ix->alloc, p, bytes);
            return;
        }
        ix->ret = r;
        ix->capret = nc;
    }
    ix->ret[ix->nret++] = (tsf_lix_retired){p, bytes};
}

void tsf_lix_reclaim(tsf_index *ix)
{
    if (ix->nret == 0) return;
    tsf_lix_synchronize(ix);
    for (uint64_t i = 0; i < ix->nret; i++) tsf_free(ix->alloc, ix->ret[i].p, ix->ret[i].bytes);
    ix->nret = 0;
}

void tsf_lix_view_retire(tsf_index *ix, tsf_lix_view *v)
{
    if (!v) return;
    tsf_lix_retire(ix, v->k, v->cap * 8);
    tsf_lix_retire(ix, v->v, v->cap * 8);
    tsf_lix_retire(ix, v, sizeof *v);
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

void tsf_lix_leaf_lock(tsf_lix_leaf *L)
{
    for (uint32_t spin = 0; __atomic_exchange_n(&L->lock, 1, __ATOMIC_ACQUIRE); spin++) {
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

/* ---- leaves: size, write, load --------------------------------------------------------------- */

static uint64_t tsf_lix_dyn_blocks(uint64_t n)
{
    return n * 2 / IX_SLOTS + 1; /* 50 % initial fill, as PLTree */
}

/* Dynamic leaf: records that do not fit their predicted block (they start in the overflow log). */
static uint64_t tsf_lix_dyn_spill(const uint64_t *keys, uint64_t n, uint64_t origin, uint64_t mul, uint64_t nb)
{
    uint64_t spill = 0, run = 0, prev = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = tsf_lix_model(keys[i], origin, mul, nb);
        run = b == prev ? run + 1 : 1;
        prev = b;
        if (run > IX_SLOTS) spill++;
    }
    return spill;
}

/*
 * Dynamic leaf plan: 50 % fill as PLTree, but twice the blocks when over 1/8 of the keys would spill
 * out of their predicted block (locally dense data); capped so DRAM metadata stays under 4.5 B/key.
 */
static void tsf_lix_dyn_plan(const uint64_t *keys, uint64_t n, uint64_t *nb, uint64_t *mul, uint64_t *spill)
{
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    *nb = tsf_lix_dyn_blocks(n);
    for (int t = 0;; t++) {
        *mul = tsf_lix_mul_for(*nb, span);
        *spill = n ? tsf_lix_dyn_spill(keys, n, keys[0], *mul, *nb) : 0;
        if (*spill * 8 <= n || t == 1 || *nb > UINT32_MAX / 4) break;
        *nb *= 2;
    }
}

uint64_t tsf_lix_leaf_bytes(const tsf_index *ix, const uint64_t *keys, uint64_t n)
{
    if (ix->mode == TSF_INDEX_SORTED) return IX_BLOCK + (n + IX_SLOTS - 1) / IX_SLOTS * IX_BLOCK;
    uint64_t nb, mul, spill;
    tsf_lix_dyn_plan(keys, n, &nb, &mul, &spill);
    return IX_BLOCK + nb * IX_BLOCK + (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS * IX_CHUNK;
}

void tsf_lix_leaf_write(tsf_index *ix, uint64_t off, uint64_t id, uint64_t lo, uint64_t hi, const uint64_t *keys,
                   const uint64_t *vals, uint64_t n)
{
    uint8_t *h = tsf_lix_at(ix, off);
    uint64_t origin = n ? keys[0] : (lo <= hi ? lo : 0);
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    uint64_t nb, mul, nbase = 0, errlo = 0, errhi = 0, ovf_head = 0;
    if (ix->mode == TSF_INDEX_SORTED) {
        nb = (n + IX_SLOTS - 1) / IX_SLOTS;
        mul = tsf_lix_mul_for(n, span);
        nbase = n;
        for (uint64_t b = 0; b < nb; b++) {
            uint8_t *blk = h + IX_BLOCK + b * IX_BLOCK;
            uint64_t cnt = n - b * IX_SLOTS < IX_SLOTS ? n - b * IX_SLOTS : IX_SLOTS;
            memset(blk, 0, IX_BLOCK);
            st64(blk, cnt);
            for (uint64_t s = 0; s < cnt; s++) {
                uint64_t i = b * IX_SLOTS + s;
                st64(blk + 16 + s * 16, keys[i]);
                st64(blk + 24 + s * 16, vals[i]);
                uint64_t p = tsf_lix_model(keys[i], origin, mul, n);
                if (p > i && p - i > errlo) errlo = p - i;
                if (i > p && i - p > errhi) errhi = i - p;
            }
        }
    } else {
        uint64_t spill;
        tsf_lix_dyn_plan(keys, n, &nb, &mul, &spill);
        uint64_t nchunks = (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS;
        uint8_t *chunks = h + IX_BLOCK + nb * IX_BLOCK;
        memset(h + IX_BLOCK, 0, nb * IX_BLOCK + nchunks * IX_CHUNK);
        uint64_t run = 0, prev = UINT64_MAX, r = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t b = tsf_lix_model(keys[i], origin, mul, nb);
            run = b == prev ? run + 1 : 1;
            prev = b;
            if (run <= IX_SLOTS) {
                uint8_t *blk = h + IX_BLOCK + b * IX_BLOCK;
                st64(blk + 16 + (run - 1) * 16, keys[i]);
                st64(blk + 24 + (run - 1) * 16, vals[i]);
                st64(blk, run);
            } else {
                uint8_t *c = chunks + r / IX_CHUNK_SLOTS * IX_CHUNK;
                uint64_t s = r % IX_CHUNK_SLOTS;
                st64(c + 16 + s * 16, keys[i]);
                st64(c + 24 + s * 16, vals[i]);
                st64(c, s + 1);
                r++;
            }
        }
        for (uint64_t c = 0; c < nchunks; c++) {
            uint64_t coff = off + IX_BLOCK + nb * IX_BLOCK + c * IX_CHUNK;
            st64(tsf_lix_at(ix, coff) + 8, c ? coff - IX_CHUNK : 0);
            ovf_head = coff;
        }
    }
    memset(h, 0, IX_BLOCK);
    st32(h + LF_O_MAGIC, LF_MAGIC);
    h[LF_O_MODE] = (uint8_t)ix->mode;
    st64(h + LF_O_ID, id);
    st64(h + LF_O_LO, lo);
    st64(h + LF_O_HI, hi);
    st64(h + LF_O_ORIGIN, origin);
    st64(h + LF_O_MUL, mul);
    st64(h + LF_O_NBASE, nbase);
    st32(h + LF_O_NBLOCKS, (uint32_t)nb);
    st32(h + LF_O_ERRLO, (uint32_t)(errlo > UINT32_MAX ? UINT32_MAX : errlo));
    st32(h + LF_O_ERRHI, (uint32_t)(errhi > UINT32_MAX ? UINT32_MAX : errhi));
    st32(h + LF_O_CRC, tsf_lix_crc(h, LF_O_CRC));
    st64(h + LF_O_OVF_HEAD, ovf_head);
}

void tsf_lix_leaf_load(tsf_index *ix, tsf_lix_leaf *L, uint64_t off)
{
    const uint8_t *h = tsf_lix_at(ix, off);
    uint32_t el = ld32(h + LF_O_ERRLO), eh = ld32(h + LF_O_ERRHI);
    IX_ST(&L->off, off);
    IX_ST(&L->origin, ld64(h + LF_O_ORIGIN));
    IX_ST(&L->mul, ld64(h + LF_O_MUL));
    IX_ST(&L->nbase, ld64(h + LF_O_NBASE));
    IX_ST(&L->nblocks, ld32(h + LF_O_NBLOCKS));
    IX_ST(&L->err_lo, (uint16_t)(el < IX_ERR_WIDE ? el : IX_ERR_WIDE));
    IX_ST(&L->err_hi, (uint16_t)(eh < IX_ERR_WIDE ? eh : IX_ERR_WIDE));
    IX_ST(&L->ready, 0);
    if (!L->w) IX_ST(&L->w, &ix->w0);
}

tsf_status tsf_lix_leaf_own(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err)
{
    if (L->w != &ix->w0) return TSF_OK;
    tsf_lix_leafw *w = tsf_calloc(ix->alloc, 1, sizeof *w);
    if (!w) return tsf_err(err, TSF_ENOMEM, "index: leaf overflow state");
    IX_STR(&L->w, w);
    return TSF_OK;
}

/*
 * One block-metadata arena for all leaves of a new tree (build or open): fewer allocations, and 2 MiB
 * pages where the kernel gives them (a lookup's metadata line then costs no TLB miss). The slots are
 * filled lazily (tsf_lix_leaf_ready_locked); on failure the leaves allocate their own, as rebuilt ones do.
 */
/* Start of the metadata slot of a leaf of nb blocks at or after byte at of an arena. */
static uint64_t tsf_lix_meta_slot(uint64_t at, uint64_t nb)
{
    return nb >= IX_SEP_FAN ? (at + 63) & ~(uint64_t)63 : tsf_lix_align8(at);
}

static void tsf_lix_meta_arena(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n, uint8_t **raw, uint64_t *bytes,
                          uint8_t **lo, uint64_t *len)
{
    const uint64_t huge = UINT64_C(2) << 20;
    uint64_t total = 0;
    *raw = *lo = NULL;
    *bytes = *len = 0;
    if (ix->nometa) return;
    /* Slots of leaves with >= 16 blocks start 64-byte aligned (tsf_lix_meta_slot), others 8-byte. */
    for (uint64_t i = 0; i < n; i++)
        if (leaves[i].nblocks)
            total = tsf_lix_meta_slot(total, leaves[i].nblocks) + tsf_lix_leaf_meta_bytes(ix, &leaves[i]);
    if (total == 0) return;
    total += IX_META_SLACK;
    uint64_t extra = total >= huge ? huge : 64, al = total >= huge ? huge : 64;
    uint8_t *r = tsf_calloc(ix->alloc, total + extra, 1);
    if (!r) return;
    uint8_t *a = (uint8_t *)(((uintptr_t)r + al - 1) & ~(uintptr_t)(al - 1));
#ifdef MADV_HUGEPAGE
    if (al == huge) madvise(a, total / huge * huge, MADV_HUGEPAGE); /* a hint; 4 KiB pages otherwise */
#endif
    for (uint64_t i = 0, at = 0; i < n; i++) {
        if (leaves[i].nblocks == 0) continue; /* (a slot at the arena's end would look foreign) */
        at = tsf_lix_meta_slot(at, leaves[i].nblocks);
        leaves[i].meta = a + at;
        at += tsf_lix_leaf_meta_bytes(ix, &leaves[i]);
    }
    *raw = r;
    *bytes = total + extra;
    *lo = a;
    *len = total;
}

static int tsf_lix_meta_in_arena(const tsf_index *ix, const uint8_t *m)
{
    return m && ix->marena_lo && m >= ix->marena_lo && m < ix->marena_lo + ix->marena_len;
}

/* Metadata of a leaf outside the arena: zeroed, 64-byte aligned; the allocation's start is kept in the
   8 bytes before the returned pointer (tsf_lix_meta_release gives it back). */
static uint8_t *tsf_lix_meta_alloc(tsf_index *ix, uint64_t mb)
{
    uint8_t *r = tsf_calloc(ix->alloc, mb + 72 + IX_META_SLACK, 1);
    if (!r) return NULL;
    uint8_t *m = (uint8_t *)(((uintptr_t)r + 8 + 63) & ~(uintptr_t)63);
    memcpy(m - 8, &r, sizeof r);
    return m;
}
static void tsf_lix_meta_release(tsf_index *ix, uint8_t *m, uint64_t mb, int retire)
{
    if (!m) return;
    uint8_t *r;
    memcpy(&r, m - 8, sizeof r);
    if (retire)
        tsf_lix_retire(ix, r, mb + 72 + IX_META_SLACK);
    else
        tsf_free(ix->alloc, r, mb + 72 + IX_META_SLACK);
}

/* Drops the block metadata and chunk list (retired for readers that may hold them, or freed at once). */
static void tsf_lix_leaf_drop_mode(tsf_index *ix, tsf_lix_leaf *L, int retire)
{
    uint64_t mb = tsf_lix_leaf_meta_bytes(ix, L);
    uint8_t *meta = L->meta;
    IX_ST(&L->meta, NULL);
    IX_ST(&L->ready, 0);
    if (!tsf_lix_meta_in_arena(ix, meta)) /* (arena slots are freed with the arena, once the tree is replaced) */
        tsf_lix_meta_release(ix, meta, mb, retire);
    if (!L->w || L->w == &ix->w0) return;
    tsf_lix_chunk *c = L->w->chunks;
    uint64_t cb = (uint64_t)L->w->cap_chunks * sizeof(tsf_lix_chunk);
    IX_ST(&L->w->nchunks, 0);
    IX_ST(&L->w->chunks, NULL);
    L->w->cap_chunks = 0;
    L->w->ovf_records = 0;
    if (retire)
        tsf_lix_retire(ix, c, cb);
    else
        tsf_free(ix->alloc, c, cb);
}

void tsf_lix_leaf_drop(tsf_index *ix, tsf_lix_leaf *L)
{
    tsf_lix_leaf_drop_mode(ix, L, 1);
}

/* Frees a leaf's DRAM state for good (no reader can reach it any more). */
static void tsf_lix_leaf_free(tsf_index *ix, tsf_lix_leaf *L)
{
    tsf_lix_leaf_drop_mode(ix, L, 0);
    if (!L->w || L->w == &ix->w0) return;
    tsf_lix_view *v = L->w->view;
    if (v) {
        tsf_free(ix->alloc, v->k, v->cap * 8);
        tsf_free(ix->alloc, v->v, v->cap * 8);
        tsf_free(ix->alloc, v, sizeof *v);
    }
    tsf_free(ix->alloc, L->w, sizeof *L->w);
    L->w = NULL;
}

/* Validates the header of leaf id at off against the range routing gives it. */
static tsf_status tsf_lix_leaf_check_header(tsf_index *ix, uint64_t id, uint64_t off, uint64_t lo, uint64_t hi,
                                       tsf_error *err)
{
    uint64_t size = ix->pm.size;
    if (off % IX_BLOCK != 0 || off < IX_REGION0 || off > size || size - off < IX_BLOCK)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf %llu offset %llu out of the file",
                       (unsigned long long)id, (unsigned long long)off);
    const uint8_t *h = tsf_lix_at(ix, off);
    if (ld32(h + LF_O_MAGIC) != LF_MAGIC || ld32(h + LF_O_CRC) != tsf_lix_crc(h, LF_O_CRC))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: bad magic or CRC",
                       (unsigned long long)off);
    uint64_t nb = ld32(h + LF_O_NBLOCKS), nbase = ld64(h + LF_O_NBASE);
    if (h[LF_O_MODE] != ix->mode || ld64(h + LF_O_ID) != id || ld64(h + LF_O_LO) != lo ||
        ld64(h + LF_O_HI) != hi)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: mode, id or range mismatch",
                       (unsigned long long)off);
    if (nb > (size - off) / IX_BLOCK - 1 ||
        (ix->mode == TSF_INDEX_SORTED && (nbase + IX_SLOTS - 1) / IX_SLOTS != nb) ||
        (ix->mode == TSF_INDEX_DYNAMIC && (nbase != 0 || nb == 0)))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: %llu blocks do not fit",
                       (unsigned long long)off, (unsigned long long)nb);
    return TSF_OK;
}

/* Separator of key k in a sorted leaf: monotone in k, (k - origin) >> shift saturated to 32 bits. */
static inline uint32_t tsf_lix_sep(uint64_t origin, uint32_t shift, uint64_t k)
{
    uint64_t q = (k > origin ? k - origin : 0) >> shift;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* The bucket of separator q in the radix table of a leaf (rsh != 0): its blocks [*lo, *hi] and the key's
   position interpolated in them (q beyond the last bucket: its end). */
static inline uint64_t tsf_lix_radix_bucket(const uint8_t *meta, uint64_t nb, uint32_t rsh, uint32_t q,
                                       uint64_t *lo, uint64_t *hi)
{
    uint32_t rs = rsh - 1u;
    uint64_t rn = tsf_lix_radix_n(nb), j = (uint64_t)q >> rs;
    const uint16_t *t = (const uint16_t *)(const void *)(meta + tsf_lix_radix_off_fast(nb));
    j = j < rn - 2 ? j : rn - 2;
    *lo = t[j];
    *hi = t[j + 1];
    uint64_t d = (uint64_t)q - (j << rs);
    d = d >> rs ? ((uint64_t)1 << rs) - 1 : d;
    return *lo * IX_SLOTS + (((*hi - *lo + 1) * IX_SLOTS * d) >> rs);
}
/*
 * Radix table of a sorted leaf (index_internal.h): narrows the candidate blocks [*b0, *b1] of a key with
 * separator q when they span more than two separator lines. Entry j is the last block whose separator is
 * below j << rsh, so every block from there to entry j + 1 keeps its place: the last block whose first key
 * is below (or at) the key lies in both windows, and ties of truncated separators never reach below
 * entry j (its separator is < q). Returns a guess of the key's position, interpolated in the bucket (osm:
 * its block is the answer about half the time: worth a prefetch), or UINT64_MAX when the window stays.
 */
static inline uint64_t tsf_lix_radix_window(const tsf_lix_leaf *L, uint32_t q, uint64_t *b0, uint64_t *b1)
{
    if (!L->rsh || *b1 - (*b0 & ~(uint64_t)(IX_SEP_FAN - 1)) < 2 * IX_SEP_FAN) return UINT64_MAX;
    uint64_t lo, hi, g = tsf_lix_radix_bucket(L->meta, L->nblocks, L->rsh, q, &lo, &hi);
    *b0 = lo > *b0 ? lo : *b0;
    *b1 = hi < *b1 ? hi : *b1;
    uint64_t gmin = *b0 * IX_SLOTS, gmax = *b1 * IX_SLOTS + IX_SLOTS - 1;
    return g < gmin ? gmin : g > gmax ? gmax : g;
}

/* ---- lazy DRAM metadata ---------------------------------------------------------------------- */

/* DRAM entry of the chunk at off: fingerprints and key range of its records. */
static void tsf_lix_chunk_fill(const tsf_index *ix, tsf_lix_chunk *c, uint64_t off)
{
    memset(c, 0, sizeof *c);
    c->off = off;
    const uint8_t *p = tsf_lix_at(ix, off);
    uint64_t cnt = ld64(p) & 0xff;
    c->kmin = UINT64_MAX;
    for (uint64_t s = 0; s < cnt; s++) {
        uint64_t k = ld64(p + 16 + s * 16);
        c->fp[s] = tsf_lix_fp(k);
        if (k < c->kmin) c->kmin = k;
        if (k > c->kmax) c->kmax = k;
    }
}

tsf_status tsf_lix_chunk_push(tsf_index *ix, tsf_lix_leaf *L, uint64_t off, tsf_error *err)
{
    tsf_status st = tsf_lix_leaf_own(ix, L, err);
    if (st != TSF_OK) return st;
    tsf_lix_leafw *w = L->w;
    if (w->nchunks == w->cap_chunks) {
        /* A new array, published before the count; readers may still walk the old one (retired). */
        uint32_t nc = w->cap_chunks ? w->cap_chunks * 2 : 4;
        tsf_lix_chunk *c = tsf_alloc(ix->alloc, (size_t)nc * sizeof(tsf_lix_chunk));
        if (!c) return tsf_err(err, TSF_ENOMEM, "index: overflow chunk list");
        if (w->nchunks) memcpy(c, w->chunks, (size_t)w->nchunks * sizeof(tsf_lix_chunk));
        tsf_lix_chunk *old = w->chunks;
        uint64_t ob = (uint64_t)w->cap_chunks * sizeof(tsf_lix_chunk);
        IX_STR(&w->chunks, c);
        w->cap_chunks = nc;
        tsf_lix_retire(ix, old, ob);
    }
    tsf_lix_chunk_fill(ix, &w->chunks[w->nchunks], off);
    IX_STR(&w->nchunks, w->nchunks + 1);
    return TSF_OK;
}

tsf_status tsf_lix_leaf_ready(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err)
{
    if (IX_LDA(&L->ready)) return TSF_OK;
    tsf_lix_leaf_lock(L);
    tsf_status s = tsf_lix_leaf_ready_locked(ix, L, err);
    tsf_lix_leaf_unlock(L);
    return s;
}

/* Validates the overflow chain of a leaf and lists its chunks oldest first (*out, *n, *cap). */
static tsf_status tsf_lix_chain_build(tsf_index *ix, const tsf_lix_leaf *L, tsf_lix_chunk **out, uint32_t *n, uint32_t *cap,
                                 uint64_t *nrec, tsf_error *err)
{
    uint64_t size = __atomic_load_n(&ix->pm.size, __ATOMIC_RELAXED);
    uint64_t off = ld64(tsf_lix_at(ix, L->off) + LF_O_OVF_HEAD), limit = size / IX_CHUNK + 1;
    tsf_lix_chunk *cl = NULL;
    uint32_t cn = 0, cc = 0;
    tsf_status st = TSF_OK;
    *nrec = 0;
    while (off != 0) {
        if (off % IX_BLOCK != 0 || off < IX_REGION0 || off > size || size - off < IX_CHUNK || limit-- == 0) {
            st = tsf_err(err, TSF_ECORRUPT, "index: overflow chunk offset %llu of leaf at byte %llu invalid",
                         (unsigned long long)off, (unsigned long long)L->off);
            break;
        }
        uint64_t w = ld64(tsf_lix_at(ix, off)), cnt = w & 0xff, tomb = w >> 8;
        if (cnt > IX_CHUNK_SLOTS || (tomb >> cnt) != 0) {
            st = tsf_err(err, TSF_ECORRUPT, "index: overflow chunk header at byte %llu is invalid",
                         (unsigned long long)off);
            break;
        }
        if (cn == cc) {
            uint32_t nc = cc ? cc * 2 : 4;
            tsf_lix_chunk *c =
                tsf_realloc(ix->alloc, cl, (size_t)cc * sizeof(tsf_lix_chunk), (size_t)nc * sizeof(tsf_lix_chunk));
            if (!c) {
                st = tsf_err(err, TSF_ENOMEM, "index: overflow chunk list");
                break;
            }
            cl = c;
            cc = nc;
        }
        tsf_lix_chunk_fill(ix, &cl[cn++], off);
        *nrec += cnt;
        off = ld64(tsf_lix_at(ix, off) + 8);
    }
    if (st != TSF_OK) {
        tsf_free(ix->alloc, cl, (size_t)cc * sizeof(tsf_lix_chunk));
        return st;
    }
    for (uint32_t i = 0, j = cn ? cn - 1 : 0; i < j; i++, j--) { /* newest first in the file */
        tsf_lix_chunk t = cl[i];
        cl[i] = cl[j];
        cl[j] = t;
    }
    *out = cl;
    *n = cn;
    *cap = cc;
    return TSF_OK;
}

tsf_status tsf_lix_leaf_ready_locked(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err)
{
    if (L->ready) return TSF_OK;
    int sorted = ix->mode == TSF_INDEX_SORTED, bump = !(L->ver & 1);
    uint64_t stride = IX_META_DYN, mb = tsf_lix_leaf_meta_bytes(ix, L), bo = tsf_lix_meta_bloom_off(L->nblocks);
    /* The arena slot given at load (zeroed; unused until ready), else an allocation of its own. */
    uint8_t *meta = L->meta;
    int own = meta == NULL;
    if (own) meta = tsf_lix_meta_alloc(ix, mb);
    if (!meta) return tsf_err(err, TSF_ENOMEM, "index: block metadata of %llu bytes", (unsigned long long)mb);
    uint64_t prev = 0, lo = tsf_lix_leaf_lo(ix, L), hi = tsf_lix_leaf_hi(ix, L);
    /* Separator scale: the leaf's key span (last base key - origin) >> shift fits 32 bits. */
    uint8_t shift = 0, rsh = 0;
    uint64_t last = 0;
    if (sorted && L->nbase > 0) {
        last = ld64(tsf_lix_block(ix, L, (L->nbase - 1) / IX_SLOTS) + 16 + (L->nbase - 1) % IX_SLOTS * 16);
        uint64_t span = last > L->origin ? last - L->origin : 0;
        while ((span >> shift) > UINT32_MAX) shift++;
    }
    tsf_status st = TSF_OK;
    for (uint64_t b = 0; b < L->nblocks && st == TSF_OK; b++) {
        const uint8_t *blk = tsf_lix_block(ix, L, b);
        uint64_t w = ld64(blk), cnt = w & 0xff, tomb = (w >> 8) & 0x7fff;
        int bad = (w >> 23) != 0 || cnt > IX_SLOTS || (tomb >> cnt) != 0;
        if (sorted) {
            uint64_t want = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS;
            bad |= cnt != want || tomb != 0;
        }
        if (bad) {
            st = tsf_err(err, TSF_ECORRUPT, "index: block header at byte %llu is invalid",
                         (unsigned long long)(blk - ix->pm.base));
            break;
        }
        uint8_t *m = meta + b * (sorted ? 4 : stride);
        uint64_t bloom = 0;
        for (uint64_t s = 0; s < cnt; s++) {
            uint64_t k = ld64(blk + 16 + s * 16);
            if (sorted) {
                if (k < prev || k < lo || k > hi) {
                    st = tsf_err(err, TSF_ECORRUPT, "index: sorted leaf key out of order at byte %llu",
                                 (unsigned long long)(blk + 16 + s * 16 - ix->pm.base));
                    break;
                }
                prev = k;
                bloom |= tsf_lix_bloom_bits(k);
                if (s == 0) mst32(m, tsf_lix_sep(L->origin, shift, k));
            } else {
                m[s] = tsf_lix_fp(k);
            }
        }
        if (sorted)
            mst64(meta + bo + b * 8, bloom);
        else
            m[15] = (uint8_t)cnt;
    }
    /* Upper separator levels: every 16th separator of the level below. */
    for (uint32_t l = 1, nl = sorted && st == TSF_OK ? tsf_lix_meta_levels(L->nblocks) : 0; l <= nl; l++) {
        const uint8_t *lo_ = (const uint8_t *)tsf_lix_seps(meta, L->nblocks, l - 1);
        uint8_t *up = (uint8_t *)(uintptr_t)tsf_lix_seps(meta, L->nblocks, l);
        uint64_t c = L->nblocks;
        for (uint32_t i = 1; i < l; i++) c = (c + IX_SEP_FAN - 1) / IX_SEP_FAN;
        for (uint64_t j = 0; j * IX_SEP_FAN < c; j++) mst32(up + j * 4, mld32(lo_ + j * IX_SEP_FAN * 4));
    }
    /* Radix table: rn - 1 buckets of 2^rsh separator values cover the last key's separator. */
    uint64_t rn = sorted && st == TSF_OK && L->nbase > 0 && tsf_lix_radix_on(L) ? tsf_lix_radix_n(L->nblocks) : 0;
    if (rn) {
        uint64_t maxq = tsf_lix_sep(L->origin, shift, last), c = 0;
        while ((maxq >> rsh) > rn - 2) rsh++;
        const uint32_t *s0 = tsf_lix_seps(meta, L->nblocks, 0);
        uint16_t *t = (uint16_t *)(void *)(meta + tsf_lix_meta_radix_off(L->nblocks));
        for (uint64_t j = 0; j + 1 < rn; j++) {
            while (c < L->nblocks && s0[c] < j << rsh) c++;
            t[j] = (uint16_t)(c ? c - 1 : 0);
        }
        t[rn - 1] = (uint16_t)(L->nblocks - 1);
        rsh++; /* stored + 1: 0 = no table */
    }
    tsf_lix_chunk *cl = NULL;
    uint32_t cn = 0, cc = 0;
    uint64_t nrec = 0;
    if (st == TSF_OK) st = tsf_lix_chain_build(ix, L, &cl, &cn, &cc, &nrec, err);
    if (st == TSF_OK && cn) {
        st = tsf_lix_leaf_own(ix, L, err);
        if (st != TSF_OK) tsf_free(ix->alloc, cl, (size_t)cc * sizeof(tsf_lix_chunk));
    }
    if (st != TSF_OK) {
        if (own) tsf_lix_meta_release(ix, meta, mb, 0);
        return st;
    }
    /* Publish: everything under an odd version (unless the caller, a writer, holds one already). */
    if (bump) tsf_lix_ver_begin(L);
    IX_STR(&L->meta, meta);
    IX_ST(&L->shift, shift);
    IX_ST(&L->rsh, rsh);
    if (L->w != &ix->w0) {
        tsf_lix_leafw *w = L->w;
        IX_STR(&w->chunks, cl);
        IX_ST(&w->nchunks, cn);
        w->cap_chunks = cc;
        w->ovf_records = w->ovf_built = nrec;
        w->chunks_built = cn;
    }
    IX_STR(&L->ready, 1); /* release: the sealed fast path reads meta/shift after an acquire of ready */
    if (bump) tsf_lix_ver_end(L);
    return TSF_OK;
}

/* ---- point lookups --------------------------------------------------------------------------- */

enum { IX_MISS = 0, IX_HIT = 1, IX_TOMB = 2 };

/* Bitmask of the first n fingerprints equal to fp (the writer may be changing them: atomic loads). */
static inline uint64_t tsf_lix_fp_mask(const uint8_t *fps, uint64_t n, uint8_t fp)
{
    uint64_t m = 0;
    for (uint64_t i = 0; i < n && i < 64; i++) m |= (uint64_t)(IX_LD(&fps[i]) == fp) << i;
    return m;
}

/* Searches a record array (block or chunk) newest first. */
static inline int tsf_lix_probe(const uint8_t *recs, uint64_t cand, uint64_t tombs, uint64_t key, uint64_t *val)
{
    while (cand) {
        int s = 63 - TSF_CLZ64(cand);
        cand &= ~(UINT64_C(1) << s);
        if (ld64(recs + (uint64_t)s * 16) == key) {
            if (tombs >> s & 1) return IX_TOMB;
            *val = ld64(recs + (uint64_t)s * 16 + 8);
            return IX_HIT;
        }
    }
    return IX_MISS;
}

static int tsf_lix_ovf_get(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t key, uint64_t *val)
{
    uint8_t fp = tsf_lix_fp(key);
    uint32_t n = IX_LDA(&L->w->nchunks);
    const tsf_lix_chunk *cs = IX_LDA(&L->w->chunks);
    for (uint32_t c = n; c-- > 0;) {
        if (key < IX_LD(&cs[c].kmin) || key > IX_LD(&cs[c].kmax)) continue;
        const uint8_t *p = tsf_lix_at(ix, IX_LD(&cs[c].off));
        uint64_t w = ld64(p), cnt = w & 0xff;
        if (cnt > IX_CHUNK_SLOTS) cnt = IX_CHUNK_SLOTS; /* torn read: the version check retries */
        uint64_t cand = ix->nometa ? (UINT64_C(1) << cnt) - 1 : tsf_lix_fp_mask(cs[c].fp, cnt, fp);
        int r = tsf_lix_probe(p + 16, cand, w >> 8, key, val);
        if (r != IX_MISS) return r;
    }
    return IX_MISS;
}

/* Key at position i of a sorted leaf's base. */
static inline uint64_t tsf_lix_base_key(const uint8_t *leaf, uint64_t i)
{
    return ld64(leaf + IX_BLOCK + i / IX_SLOTS * IX_BLOCK + 16 + i % IX_SLOTS * 16);
}

/* First position in [a, e) of the base whose key is >= x (or > x when strict); e if none. Branchless. */
static inline uint64_t tsf_lix_base_search(const uint8_t *leaf, uint64_t a, uint64_t e, uint64_t x, int strict)
{
    uint64_t n = e - a;
    if (n == 0) return a;
    while (n > 1) {
        uint64_t half = n / 2, k = tsf_lix_base_key(leaf, a + half);
        a = (strict ? k <= x : k < x) ? a + half : a;
        n -= half;
    }
    uint64_t k = tsf_lix_base_key(leaf, a);
    return a + (strict ? k <= x : k < x);
}

/* Window [a, e) that must hold the lower/upper bound of x in a sorted leaf (error-bounded model), from the
   leaf's fields; returns the model's position (callers guess its block). */
static inline uint64_t tsf_lix_window(uint64_t x, uint64_t origin, uint64_t mul, uint64_t nbase, uint64_t err_lo,
                                 uint64_t err_hi, uint64_t *a, uint64_t *e)
{
    uint64_t p = tsf_lix_model(x, origin, mul, nbase);
    uint64_t el = err_lo == IX_ERR_WIDE ? p : err_lo, eh = err_hi == IX_ERR_WIDE ? nbase : err_hi;
    *a = p > el ? p - el : 0;
    uint64_t end = p + eh + 1;
    *e = end < nbase ? end : nbase;
    return p;
}
static inline uint64_t tsf_lix_base_window(const tsf_lix_leaf *L, uint64_t x, uint64_t *a, uint64_t *e)
{
    return tsf_lix_window(x, L->origin, L->mul, L->nbase, L->err_lo, L->err_hi, a, e);
}

/*
 * Kernels of the sorted-leaf lookup, AVX2 and a portable twin (ix->simd, resolved once per handle):
 * tsf_lix_le16: bit i set when the 32-bit separator g[i] <= q (16 entries: one line in leaves of >= 16 blocks);
 * tsf_lix_eq_block: bit 2 + 2 i set when key slot i of the 256-byte block equals x (the block's qword
 * positions; the caller masks the used slots).
 */
static inline uint32_t tsf_lix_le16_scalar(const uint32_t *g, uint32_t q)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < 16; i++) m |= (uint32_t)(mld32((const uint8_t *)(g + i)) <= q) << i;
    return m;
}
static inline uint64_t tsf_lix_eq_block_scalar(const uint8_t *blk, uint64_t x)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < IX_SLOTS; i++) m |= (uint64_t)(ld64(blk + 16 + i * 16) == x) << (2 + 2 * i);
    return m;
}
#if defined(TSF_X86)
#include <immintrin.h>
TSF_TARGET("avx2") static uint32_t tsf_lix_le16_avx2(const uint32_t *g, uint32_t q)
{
    __m256i vq = _mm256_set1_epi32((int)q);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)g);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(g + 8));
    __m256i la = _mm256_cmpeq_epi32(_mm256_min_epu32(a, vq), a),
            lb = _mm256_cmpeq_epi32(_mm256_min_epu32(b, vq), b);
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(la)) |
           (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(lb)) << 8;
}
/* (Sorted base blocks are never written after their leaf is published: plain vector loads.) */
TSF_TARGET("avx2") static uint64_t tsf_lix_eq_block_avx2(const uint8_t *blk, uint64_t x)
{
    __m256i vx = _mm256_set1_epi64x((long long)x);
    uint64_t m = 0;
    for (uint32_t j = 0; j < IX_BLOCK / 32; j++) {
        __m256i v = _mm256_load_si256((const __m256i *)(const void *)(blk + j * 32));
        m |= (uint64_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, vx))) << (4 * j);
    }
    return m & UINT64_C(0x55555554);
}
#endif
static inline uint32_t tsf_lix_le16(const tsf_index *ix, const uint32_t *g, uint32_t q)
{
#if defined(TSF_X86)
    if (ix->simd) return tsf_lix_le16_avx2(g, q);
#endif
    (void)ix;
    return tsf_lix_le16_scalar(g, q);
}
static inline uint64_t tsf_lix_eq_block(const tsf_index *ix, const uint8_t *blk, uint64_t x)
{
#if defined(TSF_X86)
    if (ix->simd) return tsf_lix_eq_block_avx2(blk, x);
#endif
    (void)ix;
    return tsf_lix_eq_block_scalar(blk, x);
}

/*
 * Separator level search: the last index in [lo, hi] whose separator is <= q, else lo. [lo, hi] lies in
 * the aligned 16-entry group of lo and the next one (one or two cache lines; separators never decrease,
 * so the entries <= q are a prefix: the length of the run of ones ranks them).
 */
static inline uint64_t tsf_lix_lvl_pick(const tsf_index *ix, const uint32_t *a, uint64_t lo, uint64_t hi,
                                   uint32_t q)
{
    uint64_t g = lo & ~(uint64_t)(IX_SEP_FAN - 1);
    uint64_t m = tsf_lix_le16(ix, a + g, q);
    if (hi - g >= IX_SEP_FAN) m |= (uint64_t)tsf_lix_le16(ix, a + g + IX_SEP_FAN, q) << IX_SEP_FAN;
    /* entries lo+1..hi that are <= q: a run of ones from bit lo-g+1 (bsf: no popcount in baseline x86-64) */
    uint64_t run = ((m & ((UINT64_C(2) << (hi - g)) - 1)) >> (lo - g + 1));
    return lo + (uint64_t)TSF_CTZ64(~run);
}

/*
 * Once the candidate blocks [lo, hi] are known (level 0): their bloom words (the line after the
 * separators' is otherwise a second dependent miss for absent keys) and the block the model predicts
 * (position a + err_lo; often the one), fetched while the separators are read.
 */
static inline void tsf_lix_prefetch_guess(const tsf_index *ix, const tsf_lix_leaf *L, const uint8_t *m, uint64_t lo,
                                     uint64_t hi, uint64_t a)
{
    const uint8_t *bl = m + tsf_lix_meta_bloom_off(L->nblocks);
    for (uintptr_t p = (uintptr_t)(bl + lo * 8) & ~(uintptr_t)63, pe = (uintptr_t)(bl + hi * 8 + 8); p < pe;
         p += 64)
        __builtin_prefetch((const void *)p);
    uint64_t g = a + (uint64_t)L->err_lo < L->nbase ? a + L->err_lo : L->nbase - 1;
    const uint8_t *pb = tsf_lix_block(ix, L, g / IX_SLOTS);
    __builtin_prefetch(pb);
    __builtin_prefetch(pb + 64);
    __builtin_prefetch(pb + 128);
    __builtin_prefetch(pb + 192);
}

/*
 * Block of a sorted base holding the lower bound of x (its upper bound when strict): the last block of
 * the model's error window whose first key is < x (<= x), found in the DRAM separators: at the lowest
 * separator level where the window spans at most two lines, then one line per level below it (a
 * window of up to ~30 blocks costs one metadata line). Truncated separators equal to x's leave a few
 * candidates; their first keys in the file decide (rare).
 */
/* Blocks after b0 whose separator equals q (truncated) may start above x: their first keys decide. */
static inline uint64_t tsf_lix_sep_tie(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t i, uint64_t b0, uint32_t q,
                                  uint64_t x, int strict)
{
    const uint32_t *s0 = tsf_lix_seps(L->meta, L->nblocks, 0);
    while (TSF_UNLIKELY(i > b0 && s0[i] == q)) {
        uint64_t f = tsf_lix_base_key(tsf_lix_at(ix, L->off), i * IX_SLOTS);
        if (strict ? f <= x : f < x) break;
        i--;
    }
    return i;
}

/* The separator walk of tsf_lix_sep_block over the candidate blocks [b0, b1] of a key with separator q; pf:
   prefetch the level-0 candidates' bloom words and the block at position a (when not done yet). */
static inline uint64_t tsf_lix_sep_walk(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, uint64_t b0,
                                   uint64_t b1, uint32_t q, int strict, int pf, uint64_t a)
{
    const uint8_t *m = L->meta;
    uint64_t nb = L->nblocks;
    uint32_t l = 0;
    while ((b1 >> (4 * l)) - ((b0 >> (4 * l)) & ~(uint64_t)(IX_SEP_FAN - 1)) >= 2 * IX_SEP_FAN) l++;
    if (pf && l == 0) tsf_lix_prefetch_guess(ix, L, m, b0, b1, a);
    uint64_t i = tsf_lix_lvl_pick(ix, tsf_lix_seps(m, nb, l), b0 >> (4 * l), b1 >> (4 * l), q);
    while (l > 0) {
        l--;
        uint64_t lo = b0 >> (4 * l), hi = b1 >> (4 * l);
        lo = i * IX_SEP_FAN > lo ? i * IX_SEP_FAN : lo;
        hi = i * IX_SEP_FAN + IX_SEP_FAN - 1 < hi ? i * IX_SEP_FAN + IX_SEP_FAN - 1 : hi;
        if (pf && l == 0) tsf_lix_prefetch_guess(ix, L, m, lo, hi, a);
        i = tsf_lix_lvl_pick(ix, tsf_lix_seps(m, nb, l), lo, hi, q);
    }
    return tsf_lix_sep_tie(ix, L, i, b0, q, x, strict);
}

static inline uint64_t tsf_lix_sep_block(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, int strict)
{
    uint64_t a, e;
    tsf_lix_base_window(L, x, &a, &e);
    uint64_t b0 = a / IX_SLOTS, b1 = (e - 1) / IX_SLOTS;
    uint32_t q = tsf_lix_sep(L->origin, L->shift, x);
    tsf_lix_radix_window(L, q, &b0, &b1);
    return tsf_lix_sep_walk(ix, L, x, b0, b1, q, strict, 1, a);
}

/* Keys in the base block b that are < x (<= x when strict). */
static inline uint64_t tsf_lix_block_rank(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t b, uint64_t x,
                                     int strict)
{
    const uint8_t *blk = tsf_lix_block(ix, L, b) + 16;
    uint64_t cnt = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS, r = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t k = ld64(blk + i * 16);
        r += strict ? k <= x : k < x;
    }
    return r;
}

/* First position of a non-empty sorted base with key >= x (> x when strict); nbase if none. */
static inline uint64_t tsf_lix_base_pos(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, int strict)
{
    uint64_t a, e;
    if (ix->nometa) {
        tsf_lix_base_window(L, x, &a, &e);
        return tsf_lix_base_search(tsf_lix_at(ix, L->off), a, e, x, strict);
    }
    uint64_t b = tsf_lix_sep_block(ix, L, x, strict);
    return b * IX_SLOTS + tsf_lix_block_rank(ix, L, b, x, strict);
}

/* Unique keys in a non-empty sorted base with metadata: key, if present, is in the last block whose first
   key is <= key; its bloom word stops most absent keys before the block. */
TSF_INLINE int tsf_lix_sorted_get(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t key, uint64_t *val)
{
    uint64_t b = tsf_lix_sep_block(ix, L, key, 1), bits = tsf_lix_bloom_bits(key);
    if ((mld64(L->meta + tsf_lix_meta_bloom_off(L->nblocks) + b * 8) & bits) != bits) return IX_MISS;
    const uint8_t *blk = tsf_lix_block(ix, L, b);
    uint64_t cnt = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS;
    uint64_t hit = tsf_lix_eq_block(ix, blk, key) & ((UINT64_C(1) << (2 + 2 * cnt)) - 1);
    if (!hit) return IX_MISS;
    *val = ld64(blk + 8 + 8 * (uint64_t)TSF_CTZ64(hit));
    return IX_HIT;
}

/* Point lookup in one leaf; L is a reader's copy (tsf_lix_leaf_snap) or the writer's own entry. */
static int tsf_lix_leaf_get(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t key, uint64_t *val)
{
    if (ix->mode == TSF_INDEX_DYNAMIC) {
        uint64_t b = tsf_lix_model(key, L->origin, L->mul, L->nblocks);
        const uint8_t *blk = tsf_lix_block(ix, L, b);
        uint64_t cand;
        if (ix->nometa) {
            uint64_t c = ld64(blk) & 0xff;
            cand = (UINT64_C(1) << (c < IX_SLOTS ? c : IX_SLOTS)) - 1;
        } else {
            const uint8_t *m = L->meta + b * IX_META_DYN;
            uint8_t c = IX_LD(&m[15]);
            cand = tsf_lix_fp_mask(m, c < IX_SLOTS ? c : IX_SLOTS, tsf_lix_fp(key));
        }
        if (cand) {
            int r = tsf_lix_probe(blk + 16, cand, ld64(blk) >> 8, key, val);
            if (r != IX_MISS) return r;
        }
        return IX_LD(&L->w->nchunks) ? tsf_lix_ovf_get(ix, L, key, val) : IX_MISS;
    }
    if (IX_LD(&L->w->nchunks)) {
        int r = tsf_lix_ovf_get(ix, L, key, val);
        if (r != IX_MISS) return r;
    }
    if (L->nbase == 0) return IX_MISS;
    if (!ix->nometa && !ix->dup) return tsf_lix_sorted_get(ix, L, key, val);
    const uint8_t *leaf = tsf_lix_at(ix, L->off);
    uint64_t pos = tsf_lix_base_pos(ix, L, key, 0); /* the first of equal keys */
    if (pos < L->nbase && tsf_lix_base_key(leaf, pos) == key) {
        *val = ld64(leaf + IX_BLOCK + pos / IX_SLOTS * IX_BLOCK + 24 + pos % IX_SLOTS * 16);
        return IX_HIT;
    }
    return IX_MISS;
}

/*
 * Readers (get, lower bound, floor, scan) run concurrently with one writer: registered for the whole
 * call (nothing they can reach is freed meanwhile), on a consistent copy of the tree fields; a point
 * lookup works on a copy of its leaf entry and retries when the leaf's version changed meanwhile.
 */
/* The full protocol (tree and leaf snapshots, version checks, overflow log, lazy metadata). */
static TSF_NOINLINE tsf_status tsf_lix_get_slow(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t key, uint64_t *val,
                                           tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    tsf_status st;
    for (;;) {
        tsf_lix_tree t;
        tsf_lix_tree_snap(ix, &t);
        tsf_lix_leaf *L = &t.leaves[tsf_lix_route_in(ix, &t, key)], S;
        uint32_t v = tsf_lix_leaf_snap(L, &S);
        if (TSF_UNLIKELY(!S.ready)) {
            st = tsf_lix_leaf_ready(ix, L, err);
            if (st != TSF_OK) break;
            continue;
        }
        uint64_t out = 0;
        int r = tsf_lix_leaf_get(ix, &S, key, &out);
        if (!tsf_lix_leaf_valid(L, v)) continue;
        if (r == IX_HIT) *val = out;
        st = r == IX_HIT ? TSF_OK : TSF_ENOTFOUND;
        break;
    }
    tsf_lix_exit(ix, rs, rt);
    return st;
}

/* Fast path, a window over two separator lines (rare: wide leaves, crowded radix buckets): the level walk. */
static TSF_NOINLINE uint64_t tsf_lix_fast_wide(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, uint64_t b0,
                                          uint64_t b1, uint32_t q)
{
    tsf_lix_leaf S;
    tsf_lix_leaf_fields(L, &S);
    return tsf_lix_sep_walk(ix, &S, x, b0, b1, q, 1, 0, 0);
}
/* Fast path, truncated separators equal to the key's (rare): their first keys decide. */
static TSF_NOINLINE uint64_t tsf_lix_fast_tie(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, uint64_t b,
                                         uint64_t b0, uint32_t q)
{
    tsf_lix_leaf S;
    tsf_lix_leaf_fields(L, &S);
    return tsf_lix_sep_tie(ix, &S, b, b0, q, x, 1);
}

/* Kernels of the sealed fast path (fast_get.h), one set per path; see tsf_lix_le16 / tsf_lix_eq_block. */
static inline uint64_t tsf_lix_fg_seps_scalar(const uint32_t *s, int two, uint32_t q)
{
    uint64_t m = tsf_lix_le16_scalar(s, q);
    if (two) m |= (uint64_t)tsf_lix_le16_scalar(s + IX_SEP_FAN, q) << IX_SEP_FAN;
    return m;
}
#define IX_FG_NAME tsf_lix_fast_get_scalar
#define IX_FG_ATTR
#define IX_FG_SEPS(s, two, q) tsf_lix_fg_seps_scalar(s, two, q)
#define IX_FG_EQ(blk, x) tsf_lix_eq_block_scalar(blk, x)
#include "fast_get.h"
#undef IX_FG_NAME
#undef IX_FG_ATTR
#undef IX_FG_SEPS
#undef IX_FG_EQ
#if defined(TSF_X86)
TSF_TARGET("avx2") static inline uint64_t tsf_lix_fg_seps_avx2(const uint32_t *s, int two, uint32_t q)
{
    uint64_t m = tsf_lix_le16_avx2(s, q);
    if (two) m |= (uint64_t)tsf_lix_le16_avx2(s + IX_SEP_FAN, q) << IX_SEP_FAN;
    return m;
}
#define IX_FG_NAME tsf_lix_fast_get_avx2
#define IX_FG_ATTR TSF_TARGET("avx2")
#define IX_FG_SEPS(s, two, q) tsf_lix_fg_seps_avx2(s, two, q)
#define IX_FG_EQ(blk, x) tsf_lix_eq_block_avx2(blk, x)
#include "fast_get.h"
#undef IX_FG_NAME
#undef IX_FG_ATTR
#undef IX_FG_SEPS
#undef IX_FG_EQ
/* AVX-512: a 16-entry separator line and a 64-byte block line per compare (into mask registers). */
TSF_TARGET("avx512f,avx2") static inline uint64_t tsf_lix_fg_seps_avx512(const uint32_t *s, int two, uint32_t q)
{
    __m512i vq = _mm512_set1_epi32((int)q);
    uint64_t m = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)s), vq);
    if (two)
        m |= (uint64_t)_mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(s + IX_SEP_FAN)), vq)
             << IX_SEP_FAN;
    return m;
}
TSF_TARGET("avx512f,avx2") static inline uint64_t tsf_lix_fg_eq_avx512(const uint8_t *blk, uint64_t x)
{
    __m512i vx = _mm512_set1_epi64((long long)x);
    uint64_t m = 0;
    for (uint32_t j = 0; j < IX_BLOCK / 64; j++)
        m |= (uint64_t)_mm512_cmpeq_epi64_mask(_mm512_loadu_si512((const void *)(blk + j * 64)), vx)
             << (8 * j);
    return m & UINT64_C(0x55555554);
}
#define IX_FG_NAME tsf_lix_fast_get_avx512
#define IX_FG_ATTR TSF_TARGET("avx512f,avx2")
#define IX_FG_SEPS(s, two, q) tsf_lix_fg_seps_avx512(s, two, q)
#define IX_FG_EQ(blk, x) tsf_lix_fg_eq_avx512(blk, x)
#include "fast_get.h"
#undef IX_FG_NAME
#undef IX_FG_ATTR
#undef IX_FG_SEPS
#undef IX_FG_EQ
#endif

/* Point get: the sealed fast path on the handle's kernel path (fast_get.h), else the full protocol. */
TSF_INLINE tsf_status tsf_lix_get(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t key, uint64_t *val, tsf_error *err)
{
#if defined(TSF_X86)
    if (ix->simd == 2) return tsf_lix_fast_get_avx512(ix, rs, key, val, err);
    if (ix->simd) return tsf_lix_fast_get_avx2(ix, rs, key, val, err);
#endif
    return tsf_lix_fast_get_scalar(ix, rs, key, val, err);
}

/*
 * Batched point lookups: groups of up to IX_GROUP keys go through the sorted-leaf lookup in three
 * stages (route + snapshot + prefetch of the separators; block choice + prefetch of the block and its
 * bloom word; bloom check + key compare + version check), so that the DRAM misses of the group's keys
 * overlap instead of following each other. Keys the fast path does not cover (dynamic mode, duplicates,
 * no metadata, leaves with an overflow log or not yet ready, a version change meanwhile) take tsf_lix_get.
 */
#define IX_GROUP 16
static tsf_status tsf_lix_get_many(tsf_index *ix, tsf_lix_rdslot *rs, const uint64_t *keys, size_t n, uint64_t *vals,
                              uint8_t *found, tsf_error *err)
{
    int fast = ix->mode == TSF_INDEX_SORTED && !ix->nometa && !ix->dup;
    for (size_t g0 = 0; g0 < n; g0 += IX_GROUP) {
        size_t gn = n - g0 < IX_GROUP ? n - g0 : IX_GROUP;
        uint8_t slow[IX_GROUP];
        memset(slow, 1, sizeof slow);
        if (fast) {
            tsf_lix_leaf S[IX_GROUP], *L[IX_GROUP];
            uint32_t v[IX_GROUP];
            uint64_t b[IX_GROUP];
            uint32_t rt = tsf_lix_enter(ix, rs);
            tsf_lix_tree t;
            tsf_lix_tree_snap(ix, &t);
            /* Per key: window a, blocks [b0, b1], separator q, current level lv and range [lo, hi]. */
            uint64_t a[IX_GROUP], b0[IX_GROUP], b1[IX_GROUP], lo[IX_GROUP], hi[IX_GROUP];
            uint32_t q[IX_GROUP];
            int lv[IX_GROUP], pending = 0;
            for (size_t j = 0; j < gn; j++) {
                uint64_t x = keys[g0 + j], e;
                L[j] = &t.leaves[tsf_lix_route_in(ix, &t, x)];
                v[j] = tsf_lix_leaf_snap(L[j], &S[j]);
                slow[j] = !S[j].ready || S[j].nbase == 0 || IX_LD(&S[j].w->nchunks) != 0;
                if (slow[j]) continue;
                tsf_lix_base_window(&S[j], x, &a[j], &e);
                b0[j] = a[j] / IX_SLOTS;
                b1[j] = (e - 1) / IX_SLOTS;
                q[j] = tsf_lix_sep(S[j].origin, S[j].shift, x);
                tsf_lix_radix_window(&S[j], q[j], &b0[j], &b1[j]);
                int l = 0;
                while ((b1[j] >> (4 * l)) - ((b0[j] >> (4 * l)) & ~(uint64_t)(IX_SEP_FAN - 1)) >=
                       2 * IX_SEP_FAN)
                    l++;
                lv[j] = l;
                lo[j] = b0[j] >> (4 * l);
                hi[j] = b1[j] >> (4 * l);
                const uint32_t *sl = tsf_lix_seps(S[j].meta, S[j].nblocks, (uint32_t)l);
                __builtin_prefetch(sl + lo[j]);
                __builtin_prefetch(sl + hi[j]);
                if (l == 0) tsf_lix_prefetch_guess(ix, &S[j], S[j].meta, b0[j], b1[j], a[j]);
                pending++;
            }
            /* One separator level per pass for every key (the next line is prefetched for all keys
               before any waits on it), down to the block; then its lines and bloom word are requested. */
            while (pending > 0)
                for (size_t j = 0; j < gn; j++) {
                    if (slow[j] || lv[j] < 0) continue;
                    const tsf_lix_leaf *Sj = &S[j];
                    int l = lv[j];
                    uint64_t i =
                        tsf_lix_lvl_pick(ix, tsf_lix_seps(Sj->meta, Sj->nblocks, (uint32_t)l), lo[j], hi[j], q[j]);
                    if (l > 0) {
                        l = --lv[j];
                        uint64_t wl = b0[j] >> (4 * l), wh = b1[j] >> (4 * l);
                        lo[j] = i * IX_SEP_FAN > wl ? i * IX_SEP_FAN : wl;
                        hi[j] = i * IX_SEP_FAN + IX_SEP_FAN - 1 < wh ? i * IX_SEP_FAN + IX_SEP_FAN - 1 : wh;
                        __builtin_prefetch(tsf_lix_seps(Sj->meta, Sj->nblocks, (uint32_t)l) + lo[j]);
                        if (l == 0) tsf_lix_prefetch_guess(ix, Sj, Sj->meta, lo[j], hi[j], a[j]);
                        continue;
                    }
                    b[j] = tsf_lix_sep_tie(ix, Sj, i, b0[j], q[j], keys[g0 + j], 1);
                    lv[j] = -1;
                    pending--;
                    const uint8_t *blk = tsf_lix_block(ix, Sj, b[j]);
                    __builtin_prefetch(blk);
                    __builtin_prefetch(blk + 64);
                    __builtin_prefetch(blk + 128);
                    __builtin_prefetch(blk + 192);
                    __builtin_prefetch(Sj->meta + tsf_lix_meta_bloom_off(Sj->nblocks) + b[j] * 8);
                }
            for (size_t j = 0; j < gn; j++) {
                if (slow[j]) continue;
                uint64_t x = keys[g0 + j], bits = tsf_lix_bloom_bits(x), hit = 0, out = 0;
                const tsf_lix_leaf *Sj = &S[j];
                if ((mld64(Sj->meta + tsf_lix_meta_bloom_off(Sj->nblocks) + b[j] * 8) & bits) == bits) {
                    const uint8_t *blk = tsf_lix_block(ix, Sj, b[j]);
                    uint64_t cnt =
                        Sj->nbase - b[j] * IX_SLOTS < IX_SLOTS ? Sj->nbase - b[j] * IX_SLOTS : IX_SLOTS;
                    hit = tsf_lix_eq_block(ix, blk, x) & ((UINT64_C(1) << (2 + 2 * cnt)) - 1);
                    if (hit) out = ld64(blk + 8 + 8 * (uint64_t)TSF_CTZ64(hit));
                }
                if (!tsf_lix_leaf_valid(L[j], v[j])) continue; /* changed meanwhile: tsf_lix_get below */
                found[g0 + j] = hit != 0;
                if (hit) vals[g0 + j] = out;
                slow[j] = 2; /* done */
            }
            tsf_lix_exit(ix, rs, rt);
        }
        for (size_t j = 0; j < gn; j++) {
            if (slow[j] == 2) continue;
            uint64_t out = 0;
            tsf_status st = tsf_lix_get(ix, rs, keys[g0 + j], &out, err);
            if (st != TSF_OK && st != TSF_ENOTFOUND) return st;
            found[g0 + j] = st == TSF_OK;
            if (st == TSF_OK) vals[g0 + j] = out;
        }
    }
    return TSF_OK;
}

tsf_status tsf_index_get_many(tsf_index *ix, const uint64_t *keys, size_t n, uint64_t *vals, uint8_t *found,
                              tsf_error *err)
{
    if (!ix || (n && (!keys || !vals || !found)))
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_get_many");
    return tsf_lix_get_many(ix, NULL, keys, n, vals, found, err);
}

tsf_status tsf_index_get(tsf_index *ix, uint64_t key, uint64_t *val, tsf_error *err)
{
    if (!ix || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_get");
    return tsf_lix_get(ix, NULL, key, val, err);
}

/* ---- per-thread reader handles -------------------------------------------------------------- */

struct tsf_index_reader {
    tsf_index *ix;
    tsf_lix_rdslot *slot;
};

tsf_status tsf_index_reader_open(tsf_index *ix, tsf_index_reader **out, tsf_error *err)
{
    if (!ix || !out) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_open");
    *out = NULL;
    for (uint32_t s = 0; s < IX_READERS; s++) {
        uint32_t free_ = 0;
        if (__atomic_load_n(&ix->rslots[s].claimed, __ATOMIC_RELAXED) ||
            !__atomic_compare_exchange_n(&ix->rslots[s].claimed, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        tsf_index_reader *rd = tsf_alloc(ix->alloc, sizeof *rd);
        if (!rd) {
            __atomic_store_n(&ix->rslots[s].claimed, 0, __ATOMIC_RELEASE);
            return tsf_err(err, TSF_ENOMEM, "index: reader handle");
        }
        rd->ix = ix;
        rd->slot = &ix->rslots[s];
        *out = rd;
        return TSF_OK;
    }
    return tsf_err(err, TSF_ESTATE, "index: all %u reader handles are open", IX_READERS);
}

void tsf_index_reader_close(tsf_index_reader *rd)
{
    if (!rd) return;
    tsf_index *ix = rd->ix;
    __atomic_store_n(&rd->slot->claimed, 0, __ATOMIC_RELEASE);
    tsf_free(ix->alloc, rd, sizeof *rd);
}

tsf_status tsf_index_reader_get(tsf_index_reader *rd, uint64_t key, uint64_t *val, tsf_error *err)
{
    if (!rd || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_get");
    return tsf_lix_get(rd->ix, rd->slot, key, val, err);
}

tsf_status tsf_index_reader_get_many(tsf_index_reader *rd, const uint64_t *keys, size_t n, uint64_t *vals,
                                     uint8_t *found, tsf_error *err)
{
    if (!rd || (n && (!keys || !vals || !found)))
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_get_many");
    return tsf_lix_get_many(rd->ix, rd->slot, keys, n, vals, found, err);
}

/* ---- ordered access: leaf views -------------------------------------------------------------- */

typedef struct tsf_lix_rec {
    uint64_t k, v;
    uint64_t seq; /* bit 0: tombstone; higher bits: age */
} tsf_lix_rec;

static int tsf_lix_rec_cmp(const void *a, const void *b)
{
    const tsf_lix_rec *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int tsf_lix_view_push(tsf_index *ix, tsf_lix_view *w, uint64_t k, uint64_t v)
{
    if (w->n == w->cap) {
        uint64_t nc = w->cap ? w->cap * 2 : 64;
        uint64_t *a = tsf_realloc(ix->alloc, w->k, w->cap * 8, nc * 8);
        if (!a) return -1;
        w->k = a;
        uint64_t *b = tsf_realloc(ix->alloc, w->v, w->cap * 8, nc * 8);
        if (!b) {
            /* keep k and v the same size so that one free size fits both */
            uint64_t *c = tsf_realloc(ix->alloc, w->k, nc * 8, w->cap * 8);
            if (c) w->k = c;
            return -1;
        }
        w->v = b;
        w->cap = nc;
    }
    w->k[w->n] = k;
    w->v[w->n] = v;
    w->n++;
    return 0;
}

static void tsf_lix_view_free(tsf_index *ix, tsf_lix_view *v)
{
    if (!v) return;
    tsf_free(ix->alloc, v->k, v->cap * 8);
    tsf_free(ix->alloc, v->v, v->cap * 8);
    tsf_free(ix->alloc, v, sizeof *v);
}

tsf_status tsf_lix_leaf_view_locked(tsf_index *ix, tsf_lix_leaf *L, const tsf_lix_view **out, tsf_error *err)
{
    tsf_status s = tsf_lix_leaf_ready_locked(ix, L, err);
    if (s != TSF_OK) return s;
    if (L->w->view) {
        *out = L->w->view;
        return TSF_OK;
    }
    s = tsf_lix_leaf_own(ix, L, err);
    if (s != TSF_OK) return s;
    tsf_lix_view *vw = tsf_calloc(ix->alloc, 1, sizeof *vw);
    if (!vw) return tsf_err(err, TSF_ENOMEM, "index: leaf view");
    /* Newer-than-base records: chunks oldest to newest, then dynamic blocks (the newest tier). */
    uint64_t nr = L->w->ovf_records + (ix->mode == TSF_INDEX_DYNAMIC ? (uint64_t)L->nblocks * IX_SLOTS : 0);
    tsf_lix_rec *r = tsf_alloc(ix->alloc, (nr ? nr : 1) * sizeof(tsf_lix_rec));
    if (!r) {
        tsf_free(ix->alloc, vw, sizeof *vw);
        return tsf_err(err, TSF_ENOMEM, "index: leaf view of %llu records", (unsigned long long)nr);
    }
    uint64_t n = 0, age = 0;
    for (uint32_t c = 0; c < L->w->nchunks; c++) {
        const uint8_t *p = tsf_lix_at(ix, L->w->chunks[c].off);
        uint64_t w = ld64(p), cnt = w & 0xff;
        for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
            r[n] = (tsf_lix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
    }
    if (ix->mode == TSF_INDEX_DYNAMIC)
        for (uint64_t b = 0; b < L->nblocks; b++) {
            const uint8_t *p = tsf_lix_block(ix, L, b);
            uint64_t w = ld64(p), cnt = w & 0xff;
            for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
                r[n] =
                    (tsf_lix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
        }
    qsort(r, n, sizeof *r, tsf_lix_rec_cmp);
    const uint8_t *leaf = tsf_lix_at(ix, L->off);
    uint64_t i = 0, j = 0, nb = ix->mode == TSF_INDEX_SORTED ? L->nbase : 0;
    int oom = 0;
    while (!oom && (i < nb || j < n)) {
        uint64_t k = j >= n || (i < nb && tsf_lix_base_key(leaf, i) <= r[j].k) ? tsf_lix_base_key(leaf, i) : r[j].k;
        uint64_t i2 = i, j2 = j;
        while (i2 < nb && tsf_lix_base_key(leaf, i2) == k) i2++;
        while (j2 < n && r[j2].k == k) j2++;
        if (!ix->dup) {
            if (j2 > j) {
                if (!(r[j2 - 1].seq & 1)) oom = tsf_lix_view_push(ix, vw, k, r[j2 - 1].v);
            } else {
                oom = tsf_lix_view_push(
                    ix, vw, k,
                    ld64(leaf + IX_BLOCK + (i2 - 1) / IX_SLOTS * IX_BLOCK + 24 + (i2 - 1) % IX_SLOTS * 16));
            }
        } else {
            uint64_t t = j2; /* last tombstone */
            for (uint64_t q = j; q < j2; q++)
                if (r[q].seq & 1) t = q;
            if (t == j2)
                for (uint64_t q = i; q < i2 && !oom; q++)
                    oom = tsf_lix_view_push(
                        ix, vw, k, ld64(leaf + IX_BLOCK + q / IX_SLOTS * IX_BLOCK + 24 + q % IX_SLOTS * 16));
            for (uint64_t q = t == j2 ? j : t + 1; q < j2 && !oom; q++) oom = tsf_lix_view_push(ix, vw, k, r[q].v);
        }
        i = i2;
        j = j2;
    }
    tsf_free(ix->alloc, r, (nr ? nr : 1) * sizeof(tsf_lix_rec));
    if (oom) {
        tsf_lix_view_free(ix, vw);
        return tsf_err(err, TSF_ENOMEM, "index: leaf view");
    }
    IX_STR(&L->w->view, vw);
    *out = vw;
    return TSF_OK;
}

/* A leaf prepared for ordered access: its entry copy, and its view (NULL: read the sorted base). */
typedef struct tsf_lix_ord {
    tsf_lix_leaf S;
    const tsf_lix_view *v;
    uint64_t n;
} tsf_lix_ord;

static tsf_status tsf_lix_leaf_ordered(tsf_index *ix, tsf_lix_leaf *L, tsf_lix_ord *o, tsf_error *err)
{
    for (;;) {
        uint32_t ver = tsf_lix_leaf_snap(L, &o->S);
        if (!o->S.ready) {
            tsf_status s = tsf_lix_leaf_ready(ix, L, err);
            if (s != TSF_OK) return s;
            continue;
        }
        if (ix->mode == TSF_INDEX_SORTED && IX_LDA(&o->S.w->nchunks) == 0) {
            o->v = NULL; /* the sorted base never changes in place */
            o->n = o->S.nbase;
            if (tsf_lix_leaf_valid(L, ver)) return TSF_OK;
            continue;
        }
        const tsf_lix_view *v = IX_LDA(&o->S.w->view);
        if (!v) {
            tsf_lix_leaf_lock(L);
            tsf_status s = tsf_lix_leaf_view_locked(ix, L, &v, err);
            tsf_lix_leaf_unlock(L);
            if (s != TSF_OK) return s;
        }
        o->v = v;
        o->n = v->n;
        return TSF_OK;
    }
}

static inline uint64_t tsf_lix_vkey(const tsf_index *ix, const tsf_lix_ord *o, uint64_t i)
{
    return o->v ? o->v->k[i] : tsf_lix_base_key(tsf_lix_at(ix, o->S.off), i);
}
static inline uint64_t tsf_lix_vval(const tsf_index *ix, const tsf_lix_ord *o, uint64_t i)
{
    if (o->v) return o->v->v[i];
    return ld64(tsf_lix_at(ix, o->S.off) + IX_BLOCK + i / IX_SLOTS * IX_BLOCK + 24 + i % IX_SLOTS * 16);
}

/* First position in the leaf's ordered view with key >= x (> x when strict). */
static uint64_t tsf_lix_leaf_pos(const tsf_index *ix, const tsf_lix_ord *o, uint64_t x, int strict)
{
    if (!o->v) return o->n == 0 ? 0 : tsf_lix_base_pos(ix, &o->S, x, strict);
    uint64_t a = 0, len = o->n;
    while (len > 0) {
        uint64_t half = len / 2;
        uint64_t k = o->v->k[a + half];
        if (strict ? k <= x : k < x) {
            a += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return a;
}

static tsf_status tsf_lix_lower_bound(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t x, uint64_t *key, uint64_t *val,
                                 tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_ENOTFOUND;
    for (uint64_t id = tsf_lix_route_in(ix, &t, x), first = 1; id < t.n_leaves; id++, first = 0) {
        tsf_lix_ord o;
        tsf_status st = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (st != TSF_OK) {
            s = st;
            break;
        }
        uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, x, 0) : 0;
        if (p < o.n) {
            *key = tsf_lix_vkey(ix, &o, p);
            *val = tsf_lix_vval(ix, &o, p);
            s = TSF_OK;
            break;
        }
    }
    tsf_lix_exit(ix, rs, rt);
    return s;
}

tsf_status tsf_index_lower_bound(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_lower_bound");
    return tsf_lix_lower_bound(ix, NULL, x, key, val, err);
}

tsf_status tsf_index_reader_lower_bound(tsf_index_reader *rd, uint64_t x, uint64_t *key, uint64_t *val,
                                        tsf_error *err)
{
    if (!rd || !key || !val)
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_lower_bound");
    return tsf_lix_lower_bound(rd->ix, rd->slot, x, key, val, err);
}

static tsf_status tsf_lix_floor(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t x, uint64_t *key, uint64_t *val,
                           tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_ENOTFOUND;
    uint64_t id = tsf_lix_route_in(ix, &t, x);
    for (int first = 1;; first = 0) {
        tsf_lix_ord o;
        tsf_status st = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (st != TSF_OK) {
            s = st;
            break;
        }
        uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, x, 1) : o.n;
        if (p > 0) {
            *key = tsf_lix_vkey(ix, &o, p - 1);
            *val = tsf_lix_vval(ix, &o, p - 1);
            s = TSF_OK;
            break;
        }
        if (id == 0) break;
        id--;
    }
    tsf_lix_exit(ix, rs, rt);
    return s;
}

tsf_status tsf_index_floor(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_floor");
    return tsf_lix_floor(ix, NULL, x, key, val, err);
}

tsf_status tsf_index_reader_floor(tsf_index_reader *rd, uint64_t x, uint64_t *key, uint64_t *val,
                                  tsf_error *err)
{
    if (!rd || !key || !val)
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_floor");
    return tsf_lix_floor(rd->ix, rd->slot, x, key, val, err);
}

tsf_status tsf_index_scan(tsf_index *ix, uint64_t lo, uint64_t hi, tsf_index_visit fn, void *arg,
                          tsf_error *err)
{
    if (!ix || !fn) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_scan");
    if (lo > hi) return TSF_OK;
    uint32_t rt = tsf_lix_rd_enter(ix);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_OK;
    int stop = 0;
    for (uint64_t id = tsf_lix_route_in(ix, &t, lo), first = 1; !stop && id < t.n_leaves; id++, first = 0) {
        tsf_lix_ord o;
        s = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (s != TSF_OK) break;
        for (uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, lo, 0) : 0; p < o.n; p++) {
            uint64_t k = tsf_lix_vkey(ix, &o, p);
            if (k > hi || fn(k, tsf_lix_vval(ix, &o, p), arg)) {
                stop = 1;
                break;
            }
        }
    }
    tsf_lix_rd_exit(ix, rt);
    return s;
}

/* ---- build (bulk load, compaction) ----------------------------------------------------------- */

typedef struct tsf_lix_bnode {
    uint64_t origin, mul, lo, hi, off;
    uint64_t f;
} tsf_lix_bnode;

typedef struct tsf_lix_bleaf {
    uint64_t lo, hi, first, n, off;
} tsf_lix_bleaf;

/*
 * Keys of one layout segment at the leaf level at most: a leaf rebuild rewrites the whole leaf, so a
 * leaf of PLA's choice (73k keys at 10M uniform) made every 16-chunk rebuild cost ~1.2 MB; capped, a
 * rebuild writes ~70 KB (sorted) for the 752 records that triggered it, and the model fits better.
 */
#define IX_LEAF_LAYOUT_MAX 4096u

static uint64_t tsf_lix_align(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

tsf_status tsf_lix_alloc(tsf_index *ix, uint64_t bytes, uint64_t *off, tsf_error *err)
{
    bytes = tsf_lix_align(bytes, IX_BLOCK);
    uint64_t o = tsf_lix_align(ix->alloc_end, IX_BLOCK), end = o + bytes;
    if (end > ix->pm.size) {
        uint64_t grow = ix->pm.size / 8 > (UINT64_C(1) << 16) ? ix->pm.size / 8 : (UINT64_C(1) << 16);
        uint64_t want = tsf_lix_align(end > ix->pm.size + grow ? end : ix->pm.size + grow, PM_PAGE);
        tsf_status s = tsf_pm_grow(&ix->pm, want, err);
        if (s != TSF_OK) return s;
    }
    ix->alloc_end = end;
    *off = o;
    return TSF_OK;
}

/* Model of a node whose layout keys are k[0..c). */
static void tsf_lix_fit(tsf_lix_bnode *nd, const uint64_t *k, uint64_t c, uint64_t lo)
{
    nd->f = c ? c : 1;
    nd->origin = c ? k[0] : (lo == 1 && nd->hi == 0 ? 0 : lo);
    nd->mul = c > 1 ? tsf_lix_mul_for(c, k[c - 1] - k[0]) : 0;
}

/*
 * The leaf directory, zeroed, each 64-byte entry on its own cache line (an allocator's 16-byte alignment
 * would split every entry a lookup reads over two lines); the allocation's start is kept in the word before
 * it.
 */
static tsf_lix_leaf *tsf_lix_leaves_alloc(const tsf_allocator *A, uint64_t n)
{
    if (n > (SIZE_MAX - 128) / sizeof(tsf_lix_leaf)) return NULL;
    uint8_t *raw = tsf_calloc(A, 1, (n ? n : 1) * sizeof(tsf_lix_leaf) + 64);
    if (!raw) return NULL;
    uint8_t *a = (uint8_t *)(((uintptr_t)raw + 64) & ~(uintptr_t)63); /* >= 8 bytes after raw */
    memcpy(a - sizeof raw, &raw, sizeof raw);
    return (tsf_lix_leaf *)(void *)a;
}
static void tsf_lix_leaves_release(const tsf_allocator *A, tsf_lix_leaf *leaves, uint64_t n)
{
    uint8_t *raw;
    memcpy(&raw, (uint8_t *)leaves - sizeof raw, sizeof raw);
    tsf_free(A, raw, (n ? n : 1) * sizeof(tsf_lix_leaf) + 64);
}

static void tsf_lix_free_leaves(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n)
{
    if (!leaves) return;
    for (uint64_t i = 0; i < n; i++) tsf_lix_leaf_free(ix, &leaves[i]);
    tsf_lix_leaves_release(ix->alloc, leaves, n);
}

static void tsf_lix_seal(tsf_index *ix);

tsf_status tsf_lix_build(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, uint64_t n, tsf_error *err)
{
    static const uint64_t none[1] = {0};
    if (!n) keys = vals = none; /* an empty build may pass NULL; offsets from it must stay defined */
    const tsf_allocator *A = ix->alloc;
    for (uint64_t i = 1; i < n; i++)
        if (keys[i] < keys[i - 1] || (keys[i] == keys[i - 1] && !ix->dup))
            return tsf_err(err, TSF_EINVAL, "index: bulk load keys not sorted%s at position %llu",
                           ix->dup ? "" : " and unique", (unsigned long long)i);
    tsf_status st = TSF_OK;
    /* Phase 1, bottom-up layout: lay[0] = leaf boundaries, lay[h] = PLA of lay[h-1]. */
    uint64_t *lay[IX_MAX_HEIGHT] = {0}, cnt[IX_MAX_HEIGHT] = {0};
    size_t *starts = tsf_alloc(A, (n ? n : 1) * sizeof(size_t));
    tsf_lix_bnode *nodes[IX_MAX_HEIGHT] = {0};
    uint64_t nn[IX_MAX_HEIGHT] = {0};
    tsf_lix_bleaf *lv = NULL;
    uint64_t nlv = 0, H = 0;
    if (!starts) return tsf_err(err, TSF_ENOMEM, "index: layout");
    {
        const uint64_t *src = keys;
        uint64_t sn = n;
        uint32_t eps = ix->leaf_eps;
        for (;;) {
            uint64_t c = tsf_pla_segments_max(src, sn, eps, H == 0 ? IX_LEAF_LAYOUT_MAX : 0, starts);
            lay[H] = tsf_alloc(A, (c ? c : 1) * 8);
            if (!lay[H]) {
                st = tsf_err(err, TSF_ENOMEM, "index: layout level %llu", (unsigned long long)H);
                goto out;
            }
            for (uint64_t i = 0; i < c; i++) lay[H][i] = src[starts[i]];
            cnt[H++] = c;
            if (c <= IX_ROOT_MAX || H == IX_MAX_HEIGHT) break;
            src = lay[H - 1];
            sn = c;
            eps = ix->inner_eps;
        }
    }
    /* Phase 2, top-down: each node's model defines its children's ranges. */
    nodes[H - 1] = tsf_alloc(A, sizeof(tsf_lix_bnode));
    if (!nodes[H - 1]) {
        st = tsf_err(err, TSF_ENOMEM, "index: nodes");
        goto out;
    }
    nn[H - 1] = 1;
    nodes[H - 1][0].lo = 0;
    nodes[H - 1][0].hi = UINT64_MAX;
    tsf_lix_fit(&nodes[H - 1][0], lay[H - 1], cnt[H - 1], 0);
    for (uint64_t l = H; l-- > 0;) {
        uint64_t children = 0;
        for (uint64_t i = 0; i < nn[l]; i++) children += nodes[l][i].f;
        const uint64_t *ck = l > 0 ? lay[l - 1] : keys;
        uint64_t cn = l > 0 ? cnt[l - 1] : n, p = 0, ci = 0;
        if (l > 0) {
            nodes[l - 1] = tsf_alloc(A, children * sizeof(tsf_lix_bnode));
            nn[l - 1] = children;
        } else {
            lv = tsf_alloc(A, children * sizeof(tsf_lix_bleaf));
            nlv = children;
        }
        if ((l > 0 && !nodes[l - 1]) || (l == 0 && !lv)) {
            st = tsf_err(err, TSF_ENOMEM, "index: %llu children", (unsigned long long)children);
            goto out;
        }
        for (uint64_t i = 0; i < nn[l]; i++) {
            const tsf_lix_bnode *nd = &nodes[l][i];
            for (uint64_t s = 0; s < nd->f; s++, ci++) {
                uint64_t clo, chi, c = 0;
                tsf_lix_child_range(nd->origin, nd->mul, nd->f, nd->lo, nd->hi, s, &clo, &chi);
                if (clo <= chi)
                    while (p + c < cn && ck[p + c] <= chi) c++;
                if (l > 0) {
                    tsf_lix_bnode *ch = &nodes[l - 1][ci];
                    ch->lo = clo;
                    ch->hi = chi;
                    tsf_lix_fit(ch, ck + p, c, clo);
                } else {
                    lv[ci] = (tsf_lix_bleaf){clo, chi, p, c, 0};
                }
                p += c;
            }
        }
    }
    /* Sizes and offsets: nodes (root first, level by level), leaf table, leaves. */
    uint64_t total = 0;
    for (uint64_t l = H; l-- > 0;)
        for (uint64_t i = 0; i < nn[l]; i++) {
            nodes[l][i].off = total;
            total += tsf_lix_align(IX_NODE_HDR + nodes[l][i].f * IX_SLOT, 64);
        }
    total = tsf_lix_align(total, IX_BLOCK);
    uint64_t table_rel = total;
    total = tsf_lix_align(total + nlv * 8, IX_BLOCK);
    for (uint64_t i = 0; i < nlv; i++) {
        lv[i].off = total;
        total += tsf_lix_leaf_bytes(ix, keys + lv[i].first, lv[i].n);
    }
    /* Place the new region before the live one when it fits there (compaction ping-pong). */
    uint64_t start;
    int at_front = ix->region_start >= IX_REGION0 + total && ix->region_start > IX_REGION0;
    if (at_front) {
        start = IX_REGION0;
        if (ix->pm.size < start + total) {
            st = tsf_pm_grow(&ix->pm, tsf_lix_align(start + total, PM_PAGE), err);
            if (st != TSF_OK) goto out;
        }
    } else {
        st = tsf_lix_alloc(ix, total, &start, err);
        if (st != TSF_OK) goto out;
    }
    /* the kernel's first touch of a fresh file range runs in a helper thread ahead of the stores below */
    tsf_pm_prefault *pf = tsf_pm_prefault_start(&ix->pm, start, total);
    uint64_t nnodes = 0;
    for (uint64_t l = H; l-- > 0;)
        for (uint64_t i = 0, ci = 0; i < nn[l]; i++) {
            const tsf_lix_bnode *nd = &nodes[l][i];
            uint8_t *p = tsf_lix_at(ix, start + nd->off);
            memset(p, 0, tsf_lix_align(IX_NODE_HDR + nd->f * IX_SLOT, 64));
            st32(p + ND_O_MAGIC, ND_MAGIC);
            st32(p + ND_O_LEVEL, (uint32_t)l);
            st32(p + ND_O_FANOUT, (uint32_t)nd->f);
            st64(p + ND_O_LO, nd->lo);
            st64(p + ND_O_HI, nd->hi);
            for (uint64_t s = 0; s < nd->f; s++, ci++) {
                uint8_t *sl = p + IX_NODE_HDR + s * IX_SLOT;
                if (l > 0) {
                    const tsf_lix_bnode *ch = &nodes[l - 1][ci];
                    st64(sl + SL_O_ORIGIN, ch->origin);
                    st64(sl + SL_O_MUL, ch->mul);
                    st32(sl + SL_O_FANOUT, (uint32_t)ch->f);
                    st32(sl + SL_O_KIND, SL_NODE);
                    st64(sl + SL_O_CHILD, start + ch->off);
                } else {
                    st32(sl + SL_O_KIND, SL_LEAF);
                    st64(sl + SL_O_CHILD, ci);
                }
            }
            nnodes++;
        }
    for (uint64_t i = 0; i < nlv; i++) {
        st64(tsf_lix_at(ix, start + table_rel + i * 8), start + lv[i].off);
        tsf_lix_leaf_write(ix, start + lv[i].off, i, lv[i].lo, lv[i].hi, keys + lv[i].first, vals + lv[i].first,
                      lv[i].n);
    }
    tsf_pm_prefault_stop(pf);
    tsf_pm_dirty(&ix->pm, start, total);
    st = tsf_pm_persist(&ix->pm, start, total, err);
    if (st != TSF_OK) goto out;
    /* Switch the handle to the new region, then flip the superblock. */
    tsf_lix_leaf *nl = tsf_lix_leaves_alloc(A, nlv);
    if (!nl) {
        st = tsf_err(err, TSF_ENOMEM, "index: leaf directory");
        goto out;
    }
    for (uint64_t i = 0; i < nlv; i++) tsf_lix_leaf_load(ix, &nl[i], start + lv[i].off);
    uint8_t *araw, *alo;
    uint64_t abytes, alen;
    tsf_lix_meta_arena(ix, nl, nlv, &araw, &abytes, &alo, &alen);
    /* Readers copy the tree fields under the gen seqlock; the old tree is freed once none can hold it. */
    tsf_lix_unseal(ix);
    tsf_lix_leaf *old = ix->leaves;
    uint64_t oldn = ix->n_leaves;
    __atomic_store_n(&ix->gen, ix->gen + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    IX_ST(&ix->leaves, nl);
    IX_ST(&ix->n_leaves, nlv);
    IX_ST(&ix->root_fanout, (uint32_t)nodes[H - 1][0].f);
    IX_ST(&ix->root_off, start);
    IX_ST(&ix->root_origin, nodes[H - 1][0].origin);
    IX_ST(&ix->root_mul, nodes[H - 1][0].mul);
    __atomic_store_n(&ix->gen, ix->gen + 1, __ATOMIC_RELEASE);
    tsf_lix_synchronize(ix);
    tsf_lix_free_leaves(ix, old, oldn); /* with the old arena still registered: its slots are not freed */
    tsf_free(A, ix->marena, ix->marena_bytes);
    ix->marena = araw;
    ix->marena_bytes = abytes;
    ix->marena_lo = alo;
    ix->marena_len = alen;
    tsf_lix_reclaim(ix);
    ix->height = (uint32_t)H;
    ix->leaf_table = start + table_rel;
    ix->n_nodes = nnodes;
    ix->region_start = start;
    ix->region_end = start + total;
    ix->pm.dead_bytes = 0; /* what lies outside the new region is the compaction's to give back */
    st = tsf_lix_commit(ix, err);
    if (st == TSF_OK && at_front) {
        ix->alloc_end = ix->region_end;
        st = tsf_pm_shrink(&ix->pm, tsf_lix_align(ix->region_end, PM_PAGE), err);
    }
    if (st == TSF_OK) tsf_lix_seal(ix);
out:
    for (uint64_t l = 0; l < IX_MAX_HEIGHT; l++) {
        tsf_free(A, lay[l], (cnt[l] ? cnt[l] : 1) * 8);
        tsf_free(A, nodes[l], nn[l] * sizeof(tsf_lix_bnode));
    }
    tsf_free(A, lv, nlv * sizeof(tsf_lix_bleaf));
    tsf_free(A, starts, (n ? n : 1) * sizeof(size_t));
    return st;
}

tsf_status tsf_index_bulk_load(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, size_t n,
                               tsf_error *err)
{
    if (!ix || (n && (!keys || !vals))) return tsf_err(err, TSF_EINVAL, "index: NULL argument to bulk load");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    return tsf_lix_build(ix, keys, vals, n, err);
}

/* ---- sealed fast path ------------------------------------------------------------------------ */

/* After a build or open: publishes the immutable tree copy of the fast path (if on and the mode fits). */
/*
 * Routing table of the sealed fast path: the internal nodes in level order, root first, so that
 * a get routes through a few hot DRAM entries instead of reading a slot of every node on its path (the last
 * level's slots, 32 B per leaf, do not stay in cache: one dependent miss per get). Built from the nodes as
 * they are in the file (validated at open); 0 entries when a node's children are not all nodes or all
 * consecutive leaf ids (tsf_lix_build writes them so), the table would exceed cap entries, or memory is short:
 * the fast path then routes in the file.
 */
#define IX_RT_MAX 65536u
static uint64_t tsf_lix_rtable(const tsf_index *ix, tsf_lix_rnode *rt, uint64_t *off, uint64_t cap, uint32_t *height)
{
    if (cap == 0) return 0;
    rt[0] = (tsf_lix_rnode){ix->root_origin, ix->root_mul, ix->root_fanout, 0, 0};
    off[0] = ix->root_off;
    uint64_t lo = 0, hi = 1;
    for (uint32_t h = 1; h <= IX_MAX_HEIGHT; h++) {
        uint64_t next = hi;
        int leaves = -1;
        for (uint64_t c = lo; c < hi; c++) {
            const uint8_t *nd = tsf_lix_at(ix, off[c]);
            for (uint32_t s = 0; s < rt[c].f; s++) {
                const uint8_t *sl = nd + IX_NODE_HDR + (uint64_t)s * IX_SLOT;
                int leaf = ld32(sl + SL_O_KIND) == SL_LEAF;
                if (leaves < 0) leaves = leaf;
                if (leaf != leaves) return 0;
                uint64_t child = ld64(sl + SL_O_CHILD);
                if (leaf) {
                    if (s == 0) rt[c].first = child;
                    if (child != rt[c].first + s || child >= ix->n_leaves) return 0;
                } else {
                    if (next >= cap) return 0;
                    if (s == 0) rt[c].first = next;
                    rt[next] =
                        (tsf_lix_rnode){ld64(sl + SL_O_ORIGIN), ld64(sl + SL_O_MUL), ld32(sl + SL_O_FANOUT), 0, 0};
                    off[next++] = child;
                }
            }
        }
        if (leaves != 0) { /* (-1: a level of nodes without slots routes nowhere: no table) */
            *height = h;
            return leaves == 1 ? hi : 0;
        }
        lo = hi;
        hi = next;
    }
    return 0;
}

static void tsf_lix_seal(tsf_index *ix)
{
    if (!ix->fast_on || ix->fast || ix->mode != TSF_INDEX_SORTED || ix->nometa || ix->dup ||
        (ix->flags & TSF_INDEX_LOCAL_SEARCH))
        return;
    /* the table has one entry per internal node (all of them, when it can be built) */
    uint64_t cap = ix->n_nodes < IX_RT_MAX ? ix->n_nodes : IX_RT_MAX,
             bytes = sizeof(tsf_lix_tree) + cap * sizeof(tsf_lix_rnode);
    tsf_lix_tree *t = tsf_alloc(ix->alloc, bytes);
    if (!t) return; /* no fast path: every get takes the full protocol */
    *t = (tsf_lix_tree){ix->root_off, ix->root_origin, ix->root_mul, ix->gen, ix->root_fanout,
                   ix->leaves,   ix->n_leaves,    NULL,         0,       bytes};
    uint64_t *off = cap ? tsf_alloc(ix->alloc, cap * 8) : NULL;
    tsf_lix_rnode *rt = (tsf_lix_rnode *)(void *)(t + 1);
    uint32_t h = 0;
    if (off && tsf_lix_rtable(ix, rt, off, cap, &h)) {
        t->rt = rt;
        t->rt_h = h;
    }
    tsf_free(ix->alloc, off, cap * 8);
    IX_STR(&ix->fast, t);
}

void tsf_lix_unseal(tsf_index *ix)
{
    tsf_lix_tree *t = ix->fast;
    if (!t) return;
    IX_ST(&ix->fast, NULL);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* before any change a fast reader could see */
    tsf_lix_retire(ix, t, t->bytes);              /* fast readers may still hold it */
}

/* ---- superblocks ------------------------------------------------------------------------------ */

tsf_status tsf_lix_commit(tsf_index *ix, tsf_error *err)
{
    tsf_status s = tsf_pm_persist_all(&ix->pm, err);
    if (s != TSF_OK) return s;
    uint64_t epoch = ix->epoch + 1, off = (epoch & 1) * IX_SB;
    uint8_t *p = tsf_lix_at(ix, off);
    memset(p, 0, IX_SB);
    st64(p + SB_O_MAGIC, SB_MAGIC);
    st32(p + SB_O_VERSION, SB_VERSION);
    st32(p + SB_O_SIZE, IX_SB);
    st64(p + SB_O_EPOCH, epoch);
    st32(p + SB_O_MODE, ix->mode);
    st32(p + SB_O_FLAGS, ix->dup ? TSF_INDEX_ALLOW_DUPLICATES : 0);
    st32(p + SB_O_LEAF_EPS, ix->leaf_eps);
    st32(p + SB_O_INNER_EPS, ix->inner_eps);
    st32(p + SB_O_HEIGHT, ix->height);
    st32(p + SB_O_ROOT_FANOUT, ix->root_fanout);
    st64(p + SB_O_ROOT_OFF, ix->root_off);
    st64(p + SB_O_ROOT_ORIGIN, ix->root_origin);
    st64(p + SB_O_ROOT_MUL, ix->root_mul);
    st64(p + SB_O_LEAF_TABLE, ix->leaf_table);
    st64(p + SB_O_NLEAVES, ix->n_leaves);
    st64(p + SB_O_REGION_START, ix->region_start);
    st64(p + SB_O_REGION_END, ix->region_end);
    st64(p + SB_O_NNODES, ix->n_nodes);
    st32(p + SB_O_OVF_PCT, ix->ovf_pct);
    st32(p + SB_O_CRC, tsf_lix_crc(p, SB_O_CRC));
    tsf_pm_dirty(&ix->pm, off, IX_SB);
    s = tsf_pm_persist(&ix->pm, off, IX_SB, err);
    if (s == TSF_OK) ix->epoch = epoch;
    return s;
}

/* Reads the superblock at off into the handle if it is valid; returns its epoch (0 = invalid). */
static uint64_t tsf_lix_sb_epoch(const tsf_index *ix, uint64_t off)
{
    const uint8_t *p = tsf_lix_at(ix, off);
    if (ld64(p + SB_O_MAGIC) != SB_MAGIC || ld32(p + SB_O_VERSION) != SB_VERSION ||
        ld32(p + SB_O_CRC) != tsf_lix_crc(p, SB_O_CRC))
        return 0;
    return ld64(p + SB_O_EPOCH);
}

static tsf_status tsf_lix_sb_load(tsf_index *ix, uint64_t off, tsf_error *err)
{
    const uint8_t *p = tsf_lix_at(ix, off);
    uint64_t size = ix->pm.size;
    ix->epoch = ld64(p + SB_O_EPOCH);
    ix->mode = ld32(p + SB_O_MODE);
    ix->dup = (ld32(p + SB_O_FLAGS) & TSF_INDEX_ALLOW_DUPLICATES) != 0;
    ix->leaf_eps = ld32(p + SB_O_LEAF_EPS);
    ix->inner_eps = ld32(p + SB_O_INNER_EPS);
    ix->height = ld32(p + SB_O_HEIGHT);
    ix->root_fanout = ld32(p + SB_O_ROOT_FANOUT);
    ix->root_off = ld64(p + SB_O_ROOT_OFF);
    ix->root_origin = ld64(p + SB_O_ROOT_ORIGIN);
    ix->root_mul = ld64(p + SB_O_ROOT_MUL);
    ix->leaf_table = ld64(p + SB_O_LEAF_TABLE);
    ix->n_leaves = ld64(p + SB_O_NLEAVES);
    ix->region_start = ld64(p + SB_O_REGION_START);
    ix->region_end = ld64(p + SB_O_REGION_END);
    ix->n_nodes = ld64(p + SB_O_NNODES);
    ix->ovf_pct = ld32(p + SB_O_OVF_PCT);
    if (ix->mode > TSF_INDEX_DYNAMIC || ix->height == 0 || ix->height > IX_MAX_HEIGHT ||
        ix->root_fanout == 0 || ix->root_fanout > IX_ROOT_MAX || ix->n_leaves == 0 ||
        ix->n_leaves > size / IX_BLOCK || ix->leaf_table % 8 != 0 || ix->leaf_table < IX_REGION0 ||
        ix->leaf_table > size || (size - ix->leaf_table) / 8 < ix->n_leaves || ix->n_nodes == 0 ||
        ix->n_nodes > size / 64 || ix->region_start > ix->region_end || ix->region_end > size ||
        ix->leaf_eps == 0 || ix->inner_eps == 0)
        return tsf_err(err, TSF_ECORRUPT, "index: superblock at byte %llu has out-of-range fields",
                       (unsigned long long)off);
    return TSF_OK;
}

/* ---- node walk (open-time validation, check) ------------------------------------------------- */

typedef struct tsf_lix_walk {
    uint64_t leaf_next, visited;
    uint64_t *rng;
} tsf_lix_walk;

static tsf_status tsf_lix_walk_node(tsf_index *ix, tsf_lix_walk *w, uint64_t off, uint64_t f, uint64_t level,
                               uint64_t origin, uint64_t mul, uint64_t lo, uint64_t hi, tsf_error *err)
{
    uint64_t size = ix->pm.size;
    if (++w->visited > ix->n_nodes)
        return tsf_err(err, TSF_ECORRUPT, "index: more internal nodes reachable than the %llu recorded",
                       (unsigned long long)ix->n_nodes);
    if (off % 64 != 0 || off < IX_REGION0 || off > size || f == 0 || f > (size - off) / IX_SLOT ||
        (size - off - IX_NODE_HDR) / IX_SLOT < f)
        return tsf_err(err, TSF_ECORRUPT, "index: internal node offset %llu (fanout %llu) out of the file",
                       (unsigned long long)off, (unsigned long long)f);
    const uint8_t *p = tsf_lix_at(ix, off);
    if (ld32(p + ND_O_MAGIC) != ND_MAGIC || ld32(p + ND_O_LEVEL) != level || ld32(p + ND_O_FANOUT) != f ||
        ld64(p + ND_O_LO) != lo || ld64(p + ND_O_HI) != hi)
        return tsf_err(err, TSF_ECORRUPT,
                       "index: internal node at byte %llu: header does not match its parent",
                       (unsigned long long)off);
    for (uint64_t s = 0; s < f; s++) {
        const uint8_t *sl = p + IX_NODE_HDR + s * IX_SLOT;
        uint64_t clo, chi, child = ld64(sl + SL_O_CHILD);
        tsf_lix_child_range(origin, mul, f, lo, hi, s, &clo, &chi);
        uint32_t kind = ld32(sl + SL_O_KIND);
        if (kind != (level == 0 ? SL_LEAF : SL_NODE))
            return tsf_err(err, TSF_ECORRUPT,
                           "index: slot %llu of node at byte %llu has kind %u at level %llu",
                           (unsigned long long)s, (unsigned long long)off, kind, (unsigned long long)level);
        if (kind == SL_LEAF) {
            if (child != w->leaf_next || child >= ix->n_leaves)
                return tsf_err(err, TSF_ECORRUPT,
                               "index: slot %llu of node at byte %llu: leaf id %llu out of order",
                               (unsigned long long)s, (unsigned long long)off, (unsigned long long)child);
            w->leaf_next++;
            if (w->rng) {
                w->rng[child * 2] = clo;
                w->rng[child * 2 + 1] = chi;
            } else if (tsf_lix_leaf_lo(ix, &ix->leaves[child]) != clo ||
                       tsf_lix_leaf_hi(ix, &ix->leaves[child]) != chi) {
                return tsf_err(err, TSF_ECORRUPT, "index: leaf %llu range differs from its routing range",
                               (unsigned long long)child);
            }
        } else {
            tsf_status st = tsf_lix_walk_node(ix, w, child, ld32(sl + SL_O_FANOUT), level - 1,
                                         ld64(sl + SL_O_ORIGIN), ld64(sl + SL_O_MUL), clo, chi, err);
            if (st != TSF_OK) return st;
        }
    }
    return TSF_OK;
}

tsf_status tsf_lix_walk_nodes(tsf_index *ix, uint64_t *rng, tsf_error *err)
{
    tsf_lix_walk w = {0, 0, rng};
    tsf_status s = tsf_lix_walk_node(ix, &w, ix->root_off, ix->root_fanout, ix->height - 1, ix->root_origin,
                                ix->root_mul, 0, UINT64_MAX, err);
    if (s == TSF_OK && (w.leaf_next != ix->n_leaves || w.visited != ix->n_nodes))
        return tsf_err(err, TSF_ECORRUPT,
                       "index: %llu leaves and %llu nodes reachable, superblock says %llu/%llu",
                       (unsigned long long)w.leaf_next, (unsigned long long)w.visited,
                       (unsigned long long)ix->n_leaves, (unsigned long long)ix->n_nodes);
    return s;
}

/* ---- open / close ---------------------------------------------------------------------------- */

void tsf_index_options_init(tsf_index_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->struct_size = sizeof *opt;
    opt->mode = TSF_INDEX_SORTED;
    opt->durability = TSF_INDEX_DUR_MSYNC;
}

static tsf_status tsf_lix_recover(tsf_index *ix, tsf_error *err)
{
    if (ix->pm.size < IX_REGION0)
        return tsf_err(err, TSF_ECORRUPT, "index: file of %llu bytes is shorter than its superblocks",
                       (unsigned long long)ix->pm.size);
    uint64_t ea = tsf_lix_sb_epoch(ix, 0), eb = tsf_lix_sb_epoch(ix, IX_SB);
    if (ea == 0 && eb == 0) return tsf_err(err, TSF_ECORRUPT, "index: no valid superblock at byte 0 or 256");
    tsf_status s = tsf_lix_sb_load(ix, ea >= eb ? 0 : IX_SB, err);
    if (s != TSF_OK) return s;
    ix->leaves = tsf_lix_leaves_alloc(ix->alloc, ix->n_leaves);
    if (!ix->leaves)
        return tsf_err(err, TSF_ENOMEM, "index: leaf directory of %llu", (unsigned long long)ix->n_leaves);
    uint64_t *rng = tsf_alloc(ix->alloc, ix->n_leaves * 16);
    if (!rng) return tsf_err(err, TSF_ENOMEM, "index: leaf ranges of %llu", (unsigned long long)ix->n_leaves);
    s = tsf_lix_walk_nodes(ix, rng, err);
    for (uint64_t i = 0; s == TSF_OK && i < ix->n_leaves; i++) {
        uint64_t off = ld64(tsf_lix_at(ix, ix->leaf_table + i * 8));
        s = tsf_lix_leaf_check_header(ix, i, off, rng[i * 2], rng[i * 2 + 1], err);
        if (s == TSF_OK) tsf_lix_leaf_load(ix, &ix->leaves[i], off);
    }
    tsf_free(ix->alloc, rng, ix->n_leaves * 16);
    if (s == TSF_OK)
        tsf_lix_meta_arena(ix, ix->leaves, ix->n_leaves, &ix->marena, &ix->marena_bytes, &ix->marena_lo,
                      &ix->marena_len);
    ix->alloc_end = tsf_lix_align(ix->pm.size, IX_BLOCK);
    return s;
}

static int tsf_lix_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

tsf_status tsf_index_open(tsf_index **out, const char *path, const tsf_index_options *in, tsf_error *err)
{
    tsf_index_options o;
    const tsf_index_options *opt = &o;
    if (!out) return tsf_err(err, TSF_EINVAL, "index: NULL out");
    *out = NULL;
    tsf_index_options_init(&o);
    if (in) {
        /* the first version ends with alloc; later fields keep their defaults when the caller's struct lacks them */
        if (in->struct_size < offsetof(tsf_index_options, alloc) + sizeof(void *) || in->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_index_open: options.struct_size %zu is not a known version",
                           in->struct_size);
        memcpy(&o, in, in->struct_size);
    }
    if (o.mode > TSF_INDEX_DYNAMIC || o.durability > TSF_INDEX_DUR_SHADOW)
        return tsf_err(err, TSF_EINVAL, "tsf_index_open: mode %u or durability %u unknown", (unsigned)o.mode,
                       (unsigned)o.durability);
    const struct tsf_index_experimental *xo = o.experimental;
    tsf_index *ix = tsf_calloc(opt->alloc, 1, sizeof *ix);
    if (!ix) return tsf_err(err, TSF_ENOMEM, "index: handle");
    ix->rslots_raw = tsf_calloc(opt->alloc, IX_READERS + 1, sizeof(tsf_lix_rdslot));
    if (!ix->rslots_raw) {
        tsf_free(opt->alloc, ix, sizeof *ix);
        return tsf_err(err, TSF_ENOMEM, "index: reader slots");
    }
    ix->rslots = (tsf_lix_rdslot *)(((uintptr_t)ix->rslots_raw + 63) & ~(uintptr_t)63);
    ix->asym = tsf_lix_membarrier(IX_MB_REGISTER_PRIVATE_EXPEDITED) == 0;
    tsf_codec_path kp = tsf_path_resolve((tsf_codec_path)opt->path);
    ix->simd = kp == TSF_PATH_AVX512 ? 2 : kp == TSF_PATH_AVX2;
    ix->alloc = opt->alloc;
    ix->flags = opt->flags;
    ix->readonly = (opt->flags & TSF_INDEX_READONLY) != 0;
    ix->nometa = (opt->flags & TSF_INDEX_NO_BLOCK_META) != 0;
    ix->fast_on = !(opt->flags & TSF_INDEX_NO_FAST_PATH);
    tsf_status s = tsf_pm_open(&ix->pm, path, opt->durability, ix->readonly,
                           (opt->flags & TSF_INDEX_TRUNCATE) != 0, opt->alloc, err);
    if (s != TSF_OK) {
        tsf_free(opt->alloc, ix->rslots_raw, (IX_READERS + 1) * sizeof(tsf_lix_rdslot));
        tsf_free(opt->alloc, ix, sizeof *ix);
        return s;
    }
    if (xo) {
        ix->pm.persist_limit = xo->shadow_persist_limit;
        ix->pm.shadow_seed = xo->shadow_seed;
        ix->pm.grow_limit = xo->grow_limit;
    }
    int fresh = ix->pm.size < IX_REGION0 ? tsf_lix_all_zero(ix->pm.base, ix->pm.size)
                                         : tsf_lix_all_zero(ix->pm.base, IX_REGION0);
    if (fresh && !ix->readonly) {
        ix->mode = opt->mode;
        ix->dup = (opt->flags & TSF_INDEX_ALLOW_DUPLICATES) != 0;
        ix->leaf_eps = opt->leaf_eps ? opt->leaf_eps : (ix->mode == TSF_INDEX_SORTED ? 128 : 256);
        ix->inner_eps = opt->inner_eps ? opt->inner_eps : 256;
        ix->ovf_pct = opt->overflow_pct ? opt->overflow_pct : 25;
        s = tsf_pm_grow(&ix->pm, PM_PAGE, err);
        if (s == TSF_OK) {
            ix->alloc_end = IX_REGION0;
            s = tsf_lix_build(ix, NULL, NULL, 0, err);
        }
    } else {
        s = tsf_lix_recover(ix, err);
        if (s == TSF_OK && opt->overflow_pct) ix->ovf_pct = opt->overflow_pct;
        if (s == TSF_OK && ix->ovf_pct == 0) ix->ovf_pct = 25;
        if (s == TSF_OK) tsf_lix_seal(ix);
    }
    if (s != TSF_OK) {
        tsf_index_close(ix);
        return s;
    }
    *out = ix;
    return TSF_OK;
}

void tsf_index_close(tsf_index *ix)
{
    if (!ix) return;
    tsf_lix_free_leaves(ix, ix->leaves, ix->n_leaves);
    tsf_free(ix->alloc, ix->marena, ix->marena_bytes);
    tsf_lix_unseal(ix);
    tsf_lix_reclaim(ix);
    tsf_free(ix->alloc, ix->ret, ix->capret * sizeof *ix->ret);
    tsf_free(ix->alloc, ix->rslots_raw, (IX_READERS + 1) * sizeof(tsf_lix_rdslot));
    tsf_pm_close(&ix->pm);
    tsf_free(ix->alloc, ix, sizeof *ix);
}
