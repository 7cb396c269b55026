/*
 * mutate.c - writes to the learned index: upsert, delete (tombstones), the per-leaf overflow log,
 * copy-on-write leaf rebuilds, sync (group commit) and compaction (learned-index.md sections 1.4, 4.3,
 * 4.5 "Crash consistency"; doc/index.md).
 *
 * Tiers, newest first: dynamic leaf blocks, the overflow log (newest chunk first, newest record first),
 * the sorted base of a sorted leaf. Commit points are 8-byte aligned words: a block's header word
 * (count + tombstone mask), a chunk's header word (count + tombstone mask), a leaf's overflow head, and
 * a leaf-table entry. Ordering rules, which make any subset of unsynced pages that reaches the disk
 * safe (page-cache crashes) as well as PM-style flushes:
 *   - a new chunk is persisted before the leaf's overflow head points to it;
 *   - records moved out of a full block are persisted in the log before the block is cleared;
 *   - a rebuilt leaf is persisted before its leaf-table entry is switched (the old leaf is never
 *     written again, so a crash before the switch keeps it whole).
 */
#include <stdlib.h>
#include <string.h>

#include "index_internal.h"

/* Appends one record to the leaf's overflow log (a new chunk when the newest is full). */
static tsf_status tsf_lix_ovf_append(tsf_index *ix, tsf_lix_leaf *L, uint64_t k, uint64_t v, int tomb, tsf_error *err)
{
    tsf_lix_chunk *c = L->w->nchunks ? &L->w->chunks[L->w->nchunks - 1] : NULL;
    uint8_t *p = c ? tsf_lix_at(ix, c->off) : NULL;
    uint64_t w = p ? ld64(p) : 0, cnt = w & 0xff;
    if (!c || cnt >= IX_CHUNK_SLOTS) {
        uint64_t off;
        tsf_status s = tsf_lix_alloc(ix, IX_CHUNK, &off, err);
        if (s != TSF_OK) return s;
        p = tsf_lix_at(ix, off);
        memset(p, 0, IX_CHUNK);
        st64(p + 16, k);
        st64(p + 24, v);
        st64(p + 8, c ? c->off : 0);
        st64(p, 1 | (uint64_t)(tomb != 0) << 8);
        tsf_pm_dirty(&ix->pm, off, IX_CHUNK);
        s = tsf_pm_persist(&ix->pm, off, IX_CHUNK, err); /* before the link */
        if (s != TSF_OK) return s;
        s = tsf_lix_chunk_push(ix, L, off, err);
        if (s != TSF_OK) return s;
        commit64(tsf_lix_at(ix, L->off + LF_O_OVF_HEAD), off);
        tsf_pm_dirty(&ix->pm, L->off + LF_O_OVF_HEAD, 8);
    } else {
        st64(p + 16 + cnt * 16, k);
        st64(p + 24 + cnt * 16, v);
        commit64(p, (w & ~UINT64_C(0xff)) + (cnt + 1) + ((uint64_t)(tomb != 0) << (8 + cnt)));
        IX_ST(&c->fp[cnt], tsf_lix_fp(k)); /* readers may be loading these (they re-check the version) */
        if (k < c->kmin) IX_ST(&c->kmin, k);
        if (k > c->kmax) IX_ST(&c->kmax, k);
        tsf_pm_dirty(&ix->pm, c->off, 16 + (cnt + 1) * 16);
    }
    L->w->ovf_records++;
    return TSF_OK;
}

/* Moves a full dynamic block into the overflow log in one batch, then empties it. */
static tsf_status tsf_lix_migrate(tsf_index *ix, tsf_lix_leaf *L, uint64_t b, tsf_error *err)
{
    uint8_t *blk = tsf_lix_block(ix, L, b);
    uint64_t w = ld64(blk), cnt = w & 0xff;
    uint32_t first = L->w->nchunks ? L->w->nchunks - 1 : 0;
    for (uint64_t s = 0; s < cnt; s++) {
        tsf_status st = tsf_lix_ovf_append(ix, L, ld64(blk + 16 + s * 16), ld64(blk + 24 + s * 16),
                                      (int)(w >> (8 + s) & 1), err);
        if (st != TSF_OK) return st;
    }
    for (uint32_t c = first; c < L->w->nchunks; c++) {
        tsf_status st = tsf_pm_persist(&ix->pm, L->w->chunks[c].off, IX_CHUNK, err);
        if (st != TSF_OK) return st;
    }
    tsf_status st = tsf_pm_persist(&ix->pm, L->off + LF_O_OVF_HEAD, 8, err);
    if (st != TSF_OK) return st;
    commit64(blk, 0);
    tsf_pm_dirty(&ix->pm, L->off + IX_BLOCK + b * IX_BLOCK, 8);
    IX_ST(&L->meta[b * IX_META_DYN + 15], 0);
    return TSF_OK;
}

/* Dynamic leaves: upsert (or tombstone) in the predicted block. */
static tsf_status tsf_lix_block_put(tsf_index *ix, tsf_lix_leaf *L, uint64_t k, uint64_t v, int tomb, tsf_error *err)
{
    uint64_t b = tsf_lix_model(k, L->origin, L->mul, L->nblocks);
    uint8_t *blk = tsf_lix_block(ix, L, b), *m = L->meta + b * IX_META_DYN;
    uint64_t boff = L->off + IX_BLOCK + b * IX_BLOCK;
    uint64_t w = ld64(blk), cnt = w & 0xff, tm = (w >> 8) & 0x7fff;
    if (!ix->dup || tomb) {
        for (uint64_t s = cnt; s-- > 0;) {
            if ((!ix->nometa && m[s] != tsf_lix_fp(k)) || ld64(blk + 16 + s * 16) != k) continue;
            if (tomb) {
                tm |= UINT64_C(1) << s;
            } else {
                st64(blk + 24 + s * 16, v);
                tm &= ~(UINT64_C(1) << s);
            }
            commit64(blk, cnt | tm << 8);
            tsf_pm_dirty(&ix->pm, boff, 32 + s * 16);
            return TSF_OK;
        }
    }
    if (cnt == IX_SLOTS) {
        tsf_status s = tsf_lix_migrate(ix, L, b, err);
        if (s != TSF_OK) return s;
        cnt = tm = 0;
    }
    st64(blk + 16 + cnt * 16, k);
    st64(blk + 24 + cnt * 16, v);
    tm |= (uint64_t)(tomb != 0) << cnt;
    commit64(blk, (cnt + 1) | tm << 8);
    IX_ST(&m[cnt], tsf_lix_fp(k));
    IX_ST(&m[15], (uint8_t)(cnt + 1));
    tsf_pm_dirty(&ix->pm, boff, 32 + cnt * 16);
    return TSF_OK;
}

/* Copy-on-write rebuild of one leaf: merged live pairs -> a new leaf -> switch the leaf-table entry. */
static tsf_status tsf_lix_leaf_rebuild(tsf_index *ix, uint64_t id, tsf_error *err)
{
    tsf_lix_leaf *L = &ix->leaves[id];
    const tsf_lix_view *v;
    tsf_status s = tsf_lix_leaf_view_locked(ix, L, &v, err);
    if (s != TSF_OK) return s;
    uint64_t bytes = tsf_lix_leaf_bytes(ix, v->k, v->n), off;
    s = tsf_lix_alloc(ix, bytes, &off, err);
    if (s != TSF_OK) return s;
    tsf_lix_leaf_write(ix, off, id, tsf_lix_leaf_lo(ix, L), tsf_lix_leaf_hi(ix, L), v->k, v->v, v->n);
    tsf_pm_dirty(&ix->pm, off, bytes);
    s = tsf_pm_persist(&ix->pm, off, bytes, err);
    if (s != TSF_OK) return s;
    commit64(tsf_lix_at(ix, ix->leaf_table + id * 8), off);
    tsf_pm_dirty(&ix->pm, ix->leaf_table + id * 8, 8);
    /* the old leaf (header, blocks, its initial chunks) and its log are dead space from now on */
    ix->pm.dead_bytes += ((uint64_t)L->nblocks + 1) * IX_BLOCK + (uint64_t)L->w->nchunks * IX_CHUNK;
    tsf_lix_leaf_drop(ix, L);      /* the old metadata and chunk list are retired (readers may hold them) */
    tsf_lix_leaf_load(ix, L, off); /* the view stays: the merged pairs are exactly the new leaf's content */
    ix->rebuilds++;
    return tsf_lix_leaf_ready_locked(ix, L, err);
}

static tsf_status tsf_lix_after_write(tsf_index *ix, uint64_t id, tsf_error *err)
{
    tsf_lix_leaf *L = &ix->leaves[id];
    tsf_lix_view *v = L->w->view;
    IX_STR(&L->w->view, NULL);
    tsf_lix_view_retire(ix, v);
    uint64_t cap = ix->mode == TSF_INDEX_SORTED ? L->nbase : (uint64_t)L->nblocks * IX_SLOTS;
    uint64_t limit = cap * ix->ovf_pct / 100;
    if (limit < 2 * IX_CHUNK_SLOTS) limit = 2 * IX_CHUNK_SLOTS;
    /*
     * Rebuild when the log grew by the share, or by 16 chunks (a long chain slows absent lookups) -- but
     * a rebuild rewrites the whole leaf, so the chain must also have grown by a quarter of the leaf's
     * bytes and by as many chunks as it had when built: the bytes rewritten (and left dead) stay within
     * a constant factor of the bytes appended. (With 16 chunks alone, a leaf whose keys do not follow
     * its line and spill at every rebuild was rewritten every ~50 inserts: 430 file bytes per key.)
     */
    uint64_t grown = L->w->nchunks - L->w->chunks_built;
    uint64_t cmin = 16;
    if (cmin < L->w->chunks_built) cmin = L->w->chunks_built;
    return L->w->ovf_records - L->w->ovf_built > limit || grown > cmin ? tsf_lix_leaf_rebuild(ix, id, err)
                                                                       : TSF_OK;
}

/*
 * Automatic compaction: once the space left dead by leaf rebuilds exceeds half the size of the tree built
 * last (and IX_AUTO_COMPACT_MIN), everything is rebuilt (tsf_index_compact), which re-partitions the keys --
 * inserted ones included -- so that leaves follow their lines again, and gives the space back: the file
 * stays within a constant factor of the live data under any insert workload.
 */
#define IX_AUTO_COMPACT_MIN (UINT64_C(8) << 20)

static int tsf_lix_wants_compaction(const tsf_index *ix)
{
    uint64_t tree = ix->region_end - ix->region_start;
    return ix->pm.dead_bytes >= IX_AUTO_COMPACT_MIN && ix->pm.dead_bytes > tree / 2;
}

static tsf_status tsf_lix_write(tsf_index *ix, uint64_t key, uint64_t val, int tomb, tsf_error *err)
{
    tsf_lix_unseal(ix); /* gets leave the sealed fast path before anything changes */
    uint64_t id = tsf_lix_route(ix, key);
    tsf_lix_leaf *L = &ix->leaves[id];
    /* Under the leaf lock (metadata/view builders) with an odd version (optimistic readers retry). */
    tsf_lix_leaf_lock(L);
    tsf_status s = tsf_lix_leaf_ready_locked(ix, L, err);
    if (s == TSF_OK) s = tsf_lix_leaf_own(ix, L, err);
    if (s == TSF_OK) {
        tsf_lix_ver_begin(L);
        s = ix->mode == TSF_INDEX_SORTED ? tsf_lix_ovf_append(ix, L, key, val, tomb, err)
                                         : tsf_lix_block_put(ix, L, key, val, tomb, err);
        if (s == TSF_OK) s = tsf_lix_after_write(ix, id, err);
        tsf_lix_ver_end(L);
    }
    tsf_lix_leaf_unlock(L);
    tsf_lix_reclaim(ix); /* replaced chunk lists, views and leaf metadata */
    if (s == TSF_OK && tsf_lix_wants_compaction(ix)) s = tsf_index_compact(ix, err);
    return s;
}

tsf_status tsf_index_insert(tsf_index *ix, uint64_t key, uint64_t val, tsf_error *err)
{
    if (!ix) return tsf_err(err, TSF_EINVAL, "index: NULL handle");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    return tsf_lix_write(ix, key, val, 0, err);
}

tsf_status tsf_index_delete(tsf_index *ix, uint64_t key, tsf_error *err)
{
    if (!ix) return tsf_err(err, TSF_EINVAL, "index: NULL handle");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    uint64_t v;
    tsf_status s = tsf_index_get(ix, key, &v, err);
    if (s != TSF_OK) return s;
    return tsf_lix_write(ix, key, 0, 1, err);
}

tsf_status tsf_index_sync(tsf_index *ix, tsf_error *err)
{
    if (!ix) return tsf_err(err, TSF_EINVAL, "index: NULL handle");
    if (ix->readonly) return TSF_OK;
    return tsf_lix_commit(ix, err);
}

typedef struct tsf_lix_collect {
    uint64_t *k, *v, n, cap;
    const tsf_allocator *a;
    int oom;
} tsf_lix_collect;

static int tsf_lix_collect_fn(uint64_t k, uint64_t v, void *arg)
{
    tsf_lix_collect *c = arg;
    if (c->n == c->cap) {
        uint64_t nc = c->cap ? c->cap * 2 : 1024;
        uint64_t *a = tsf_realloc(c->a, c->k, c->cap * 8, nc * 8);
        if (a) c->k = a;
        uint64_t *b = a ? tsf_realloc(c->a, c->v, c->cap * 8, nc * 8) : NULL;
        if (b) c->v = b;
        if (!a || !b) {
            c->oom = 1;
            return 1;
        }
        c->cap = nc;
    }
    c->k[c->n] = k;
    c->v[c->n] = v;
    c->n++;
    return 0;
}

tsf_status tsf_index_compact(tsf_index *ix, tsf_error *err)
{
    if (!ix) return tsf_err(err, TSF_EINVAL, "index: NULL handle");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    tsf_lix_collect c = {0};
    c.a = ix->alloc;
    tsf_status s = tsf_index_scan(ix, 0, UINT64_MAX, tsf_lix_collect_fn, &c, err);
    if (s == TSF_OK && c.oom) s = tsf_err(err, TSF_ENOMEM, "index: compaction buffer");
    if (s == TSF_OK) s = tsf_lix_build(ix, c.k, c.v, c.n, err);
    tsf_free(ix->alloc, c.k, c.cap * 8);
    tsf_free(ix->alloc, c.v, c.cap * 8);
    return s;
}
