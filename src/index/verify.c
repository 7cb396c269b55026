/*
 * verify.c - statistics and the full invariant check of the learned index (doc/index.md "Invariants").
 * The check re-derives every node's and leaf's key range from the parent models, then checks that
 * every stored key lies in its leaf's range and routes back to that leaf (routing exactness), that
 * sorted bases are ordered within their measured error bound, that dynamic records sit in the block
 * their leaf model predicts, and that all DRAM metadata (fingerprints, bloom words, chunk lists)
 * equals what the file holds.
 */
#include <string.h>

#include "index_internal.h"

tsf_status tsf_index_stats_get(tsf_index *ix, tsf_index_stats *st)
{
    if (!ix || !st) return TSF_EINVAL;
    memset(st, 0, sizeof *st);
    st->height = ix->height;
    st->mode = ix->mode;
    st->leaves = ix->n_leaves;
    st->internal_nodes = ix->n_nodes;
    st->file_bytes = ix->pm.size;
    st->epoch = ix->epoch;
    st->leaf_rebuilds = ix->rebuilds;
    st->persist_ops = ix->pm.persists;
    uint64_t dram = sizeof *ix + ix->n_leaves * sizeof(tsf_lix_leaf) + ix->pm.dirty_words * 8;
    for (uint64_t i = 0; i < ix->n_leaves; i++) {
        tsf_lix_leaf *L = &ix->leaves[i];
        tsf_status s = tsf_lix_leaf_ready(ix, L, NULL);
        if (s != TSF_OK) return s;
        dram += tsf_lix_leaf_meta_bytes(ix, L);
        if (L->w != &ix->w0) dram += sizeof *L->w + (uint64_t)L->w->cap_chunks * sizeof(tsf_lix_chunk);
        if (L->w->view) st->cache_bytes += L->w->view->cap * 16 + sizeof(tsf_lix_view);
        st->overflow_records += L->w->ovf_records;
        if (L->w->nchunks > st->max_overflow_depth) st->max_overflow_depth = L->w->nchunks;
        st->records += L->w->ovf_records;
        if (ix->mode == TSF_INDEX_SORTED) {
            st->records += L->nbase;
        } else {
            for (uint64_t b = 0; b < L->nblocks; b++) st->records += L->meta[b * 16 + 15];
        }
    }
    st->dram_bytes = dram;
    return TSF_OK;
}

static tsf_status tsf_lix_check_key(tsf_index *ix, uint64_t id, uint64_t k, uint64_t off, tsf_error *err)
{
    const tsf_lix_leaf *L = &ix->leaves[id];
    if (k < tsf_lix_leaf_lo(ix, L) || k > tsf_lix_leaf_hi(ix, L))
        return tsf_err(err, TSF_ECORRUPT, "index check: key %llu at byte %llu outside leaf %llu range",
                       (unsigned long long)k, (unsigned long long)off, (unsigned long long)id);
    if (tsf_lix_route(ix, k) != id)
        return tsf_err(err, TSF_ECORRUPT, "index check: key %llu at byte %llu does not route to leaf %llu",
                       (unsigned long long)k, (unsigned long long)off, (unsigned long long)id);
    return TSF_OK;
}

static tsf_status tsf_lix_check_leaf(tsf_index *ix, uint64_t id, tsf_error *err)
{
    tsf_lix_leaf *L = &ix->leaves[id];
    tsf_status s = tsf_lix_leaf_ready(ix, L, err);
    if (s != TSF_OK) return s;
    if (ld64(tsf_lix_at(ix, ix->leaf_table + id * 8)) != L->off)
        return tsf_err(err, TSF_ECORRUPT, "index check: leaf table entry %llu differs from the directory",
                       (unsigned long long)id);
    int sorted = ix->mode == TSF_INDEX_SORTED;
    uint64_t ovf = 0;
    for (uint64_t b = 0; b < L->nblocks; b++) {
        const uint8_t *blk = tsf_lix_block(ix, L, b);
        uint64_t cnt = ld64(blk) & 0xff, bloom = 0;
        for (uint64_t s2 = 0; s2 < cnt; s2++) {
            uint64_t k = ld64(blk + 16 + s2 * 16), off = (uint64_t)(blk - ix->pm.base) + 16 + s2 * 16;
            s = tsf_lix_check_key(ix, id, k, off, err);
            if (s != TSF_OK) return s;
            if (sorted) {
                uint64_t i = b * IX_SLOTS + s2, p = tsf_lix_model(k, L->origin, L->mul, L->nbase);
                if ((L->err_lo != IX_ERR_WIDE && p > i && p - i > L->err_lo) ||
                    (L->err_hi != IX_ERR_WIDE && i > p && i - p > L->err_hi))
                    return tsf_err(err, TSF_ECORRUPT, "index check: key at byte %llu beyond the error bound",
                                   (unsigned long long)off);
                bloom |= tsf_lix_bloom_bits(k);
                uint64_t rel = k > L->origin ? k - L->origin : 0;
                if (s2 == 0 && tsf_lix_seps(L->meta, L->nblocks, 0)[b] !=
                                   ((rel >> L->shift) > UINT32_MAX ? UINT32_MAX : (rel >> L->shift)))
                    return tsf_err(err, TSF_ECORRUPT, "index check: stale separator of leaf %llu block %llu",
                                   (unsigned long long)id, (unsigned long long)b);
            } else {
                if (tsf_lix_model(k, L->origin, L->mul, L->nblocks) != b)
                    return tsf_err(err, TSF_ECORRUPT,
                                   "index check: key at byte %llu not in its predicted block",
                                   (unsigned long long)off);
                if (L->meta[b * 16 + s2] != tsf_lix_fp(k))
                    return tsf_err(err, TSF_ECORRUPT, "index check: stale fingerprint for byte %llu",
                                   (unsigned long long)off);
            }
        }
        if (sorted ? mld64(L->meta + tsf_lix_meta_bloom_off(L->nblocks) + b * 8) != bloom
                   : L->meta[b * IX_META_DYN + 15] != cnt)
            return tsf_err(err, TSF_ECORRUPT, "index check: stale block metadata of leaf %llu block %llu",
                           (unsigned long long)id, (unsigned long long)b);
    }
    /* Upper separator levels: entry j of level l is entry 16 j of level l - 1. */
    for (uint32_t l = 1, nl = sorted ? tsf_lix_meta_levels(L->nblocks) : 0; l <= nl; l++) {
        const uint32_t *dn = tsf_lix_seps(L->meta, L->nblocks, l - 1), *up = tsf_lix_seps(L->meta, L->nblocks, l);
        uint64_t c = L->nblocks;
        for (uint32_t i = 1; i < l; i++) c = (c + IX_SEP_FAN - 1) / IX_SEP_FAN;
        for (uint64_t j = 0; j * IX_SEP_FAN < c; j++)
            if (up[j] != dn[j * IX_SEP_FAN])
                return tsf_err(err, TSF_ECORRUPT, "index check: separator level %u of leaf %llu, entry %llu",
                               l, (unsigned long long)id, (unsigned long long)j);
    }
    /* Radix table: entry j = the last block whose separator is below j << rsh (0 if none), the last
       entry the last block, the buckets covering the last key's separator. */
    uint64_t rn = sorted && L->nbase && tsf_lix_radix_on(L) ? tsf_lix_radix_n(L->nblocks) : 0;
    if (!rn && sorted && L->rsh)
        return tsf_err(err, TSF_ECORRUPT, "index check: leaf %llu has a radix table it should not have",
                       (unsigned long long)id);
    if (rn) {
        const uint32_t *s0 = tsf_lix_seps(L->meta, L->nblocks, 0);
        const uint16_t *t = (const uint16_t *)(const void *)(L->meta + tsf_lix_meta_radix_off(L->nblocks));
        uint64_t last = ld64(tsf_lix_block(ix, L, L->nblocks - 1) + 16 + (L->nbase - 1) % IX_SLOTS * 16);
        uint64_t rel = last > L->origin ? last - L->origin : 0, maxq = rel >> L->shift;
        uint32_t rs = L->rsh - 1u;
        int bad = L->rsh == 0 || rs > 32 || (maxq >> rs) > rn - 2 || t[rn - 1] != L->nblocks - 1;
        for (uint64_t j = 0, c = 0; j + 1 < rn && !bad; j++) {
            while (c < L->nblocks && s0[c] < j << rs) c++;
            bad = t[j] != (c ? c - 1 : 0);
        }
        if (bad)
            return tsf_err(err, TSF_ECORRUPT, "index check: stale radix table of leaf %llu",
                           (unsigned long long)id);
    }
    uint64_t off = ld64(tsf_lix_at(ix, L->off) + LF_O_OVF_HEAD);
    for (uint32_t c = L->w->nchunks; c-- > 0;) {
        if (L->w->chunks[c].off != off)
            return tsf_err(err, TSF_ECORRUPT, "index check: overflow chain of leaf %llu differs from DRAM",
                           (unsigned long long)id);
        const uint8_t *p = tsf_lix_at(ix, off);
        uint64_t cnt = ld64(p) & 0xff;
        for (uint64_t r = 0; r < cnt; r++) {
            uint64_t k = ld64(p + 16 + r * 16);
            s = tsf_lix_check_key(ix, id, k, off + 16 + r * 16, err);
            if (s != TSF_OK) return s;
            if (L->w->chunks[c].fp[r] != tsf_lix_fp(k) || k < L->w->chunks[c].kmin || k > L->w->chunks[c].kmax)
                return tsf_err(err, TSF_ECORRUPT, "index check: stale overflow fingerprint at byte %llu",
                               (unsigned long long)(off + 16 + r * 16));
        }
        ovf += cnt;
        off = ld64(p + 8);
    }
    if (off != 0 || ovf != L->w->ovf_records)
        return tsf_err(err, TSF_ECORRUPT, "index check: overflow of leaf %llu: chain or count differs",
                       (unsigned long long)id);
    if (!sorted || L->w->nchunks) {
        const tsf_lix_view *v;
        tsf_lix_leaf_lock(L);
        s = tsf_lix_leaf_view_locked(ix, L, &v, err);
        tsf_lix_leaf_unlock(L);
        if (s != TSF_OK) return s;
        for (uint64_t i = 1; i < v->n; i++)
            if (v->k[i] < v->k[i - 1] || (v->k[i] == v->k[i - 1] && !ix->dup))
                return tsf_err(err, TSF_ECORRUPT, "index check: merged view of leaf %llu out of order",
                               (unsigned long long)id);
    }
    return TSF_OK;
}

tsf_status tsf_index_check(tsf_index *ix, tsf_error *err)
{
    if (!ix) return tsf_err(err, TSF_EINVAL, "index: NULL handle");
    tsf_status s = tsf_lix_walk_nodes(ix, NULL, err);
    if (s != TSF_OK) return s;
    uint64_t next = 0; /* the leaves' non-empty ranges tile [0, 2^64) in order */
    int done = 0;
    for (uint64_t id = 0; id < ix->n_leaves; id++) {
        const tsf_lix_leaf *L = &ix->leaves[id];
        uint64_t lo = tsf_lix_leaf_lo(ix, L), hi = tsf_lix_leaf_hi(ix, L);
        if (lo <= hi) {
            if (done || lo != next)
                return tsf_err(err, TSF_ECORRUPT,
                               "index check: leaf %llu range does not follow its predecessor",
                               (unsigned long long)id);
            if (hi == UINT64_MAX)
                done = 1;
            else
                next = hi + 1;
        }
        s = tsf_lix_check_leaf(ix, id, err);
        if (s != TSF_OK) return s;
    }
    if (!done) return tsf_err(err, TSF_ECORRUPT, "index check: leaf ranges do not cover the key space");
    return TSF_OK;
}
