/*
 * build.c - the two-phase build of a whole tree from sorted pairs (bulk load, compaction).
 * A shrinking-cone PLA (pla.c) of the keys gives the leaf boundaries (layout level 0); PLA of those
 * boundaries gives level 1, and so on until at most 7 remain (bottom-up). Then, top-down, every node's
 * integer model slot = min(f-1, ((key - origin) * mul) >> 64) *defines* its children's key ranges; each
 * child's model is fitted to the next-lower layout keys inside its range, and leaves take the data keys
 * inside theirs. Routing is therefore exact: internal nodes never search. The new region is written,
 * persisted, and committed by a superblock flip.
 */
#include <string.h>

#include "index_internal.h"
#include "pla.h"

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

/* The plan of a build: the layout levels (lay[0] = leaf boundaries), the internal nodes of every level
   (the root alone at level h - 1), the leaves, and their places in the new region. */
typedef struct tsf_lix_plan {
    uint64_t *lay[IX_MAX_HEIGHT], cnt[IX_MAX_HEIGHT];
    tsf_lix_bnode *nodes[IX_MAX_HEIGHT];
    uint64_t nn[IX_MAX_HEIGHT];
    tsf_lix_bleaf *lv;
    uint64_t nlv, h;
    uint64_t total, table_rel; /* bytes of the region; offset of the leaf table in it */
} tsf_lix_plan;

static void tsf_lix_plan_free(const tsf_allocator *A, tsf_lix_plan *pl)
{
    for (uint64_t l = 0; l < IX_MAX_HEIGHT; l++) {
        tsf_free(A, pl->lay[l], (pl->cnt[l] ? pl->cnt[l] : 1) * 8);
        tsf_free(A, pl->nodes[l], pl->nn[l] * sizeof(tsf_lix_bnode));
    }
    tsf_free(A, pl->lv, pl->nlv * sizeof(tsf_lix_bleaf));
}

/* Phase 1, bottom-up layout: lay[0] = leaf boundaries, lay[h] = PLA of lay[h-1]. */
static tsf_status tsf_lix_layout(tsf_index *ix, tsf_lix_plan *pl, const uint64_t *keys, uint64_t n,
                                 tsf_error *err)
{
    const tsf_allocator *A = ix->alloc;
    size_t *starts = tsf_alloc(A, (n ? n : 1) * sizeof(size_t));
    if (!starts) return tsf_err(err, TSF_ENOMEM, "index: layout");
    const uint64_t *src = keys;
    uint64_t sn = n;
    uint32_t eps = ix->leaf_eps;
    tsf_status st = TSF_OK;
    for (;;) {
        uint64_t c = tsf_pla_segments_max(src, sn, eps, pl->h == 0 ? IX_LEAF_LAYOUT_MAX : 0, starts);
        uint64_t *lay = tsf_alloc(A, (c ? c : 1) * 8);
        if (!lay) {
            st = tsf_err(err, TSF_ENOMEM, "index: layout level %llu", (unsigned long long)pl->h);
            break;
        }
        for (uint64_t i = 0; i < c; i++) lay[i] = src[starts[i]];
        pl->lay[pl->h] = lay;
        pl->cnt[pl->h++] = c;
        if (c <= IX_ROOT_MAX || pl->h == IX_MAX_HEIGHT) break;
        src = lay;
        sn = c;
        eps = ix->inner_eps;
    }
    tsf_free(A, starts, (n ? n : 1) * sizeof(size_t));
    return st;
}

/* Phase 2, top-down: each node's model defines its children's ranges; a child's model is fitted to the
   layout keys below it inside its range, and a leaf takes the data keys inside its range. */
static tsf_status tsf_lix_plan_nodes(tsf_index *ix, tsf_lix_plan *pl, const uint64_t *keys, uint64_t n,
                                     tsf_error *err)
{
    const tsf_allocator *A = ix->alloc;
    uint64_t H = pl->h;
    tsf_lix_bnode **nodes = pl->nodes;
    uint64_t *nn = pl->nn;
    nodes[H - 1] = tsf_alloc(A, sizeof(tsf_lix_bnode));
    if (!nodes[H - 1]) return tsf_err(err, TSF_ENOMEM, "index: nodes");
    nn[H - 1] = 1;
    nodes[H - 1][0].lo = 0;
    nodes[H - 1][0].hi = UINT64_MAX;
    tsf_lix_fit(&nodes[H - 1][0], pl->lay[H - 1], pl->cnt[H - 1], 0);
    for (uint64_t l = H; l-- > 0;) {
        uint64_t children = 0;
        for (uint64_t i = 0; i < nn[l]; i++) children += nodes[l][i].f;
        const uint64_t *ck = l > 0 ? pl->lay[l - 1] : keys;
        uint64_t cn = l > 0 ? pl->cnt[l - 1] : n, p = 0, ci = 0;
        if (l > 0) {
            nodes[l - 1] = tsf_alloc(A, children * sizeof(tsf_lix_bnode));
            nn[l - 1] = children;
        } else {
            pl->lv = tsf_alloc(A, children * sizeof(tsf_lix_bleaf));
            pl->nlv = children;
        }
        if ((l > 0 && !nodes[l - 1]) || (l == 0 && !pl->lv))
            return tsf_err(err, TSF_ENOMEM, "index: %llu children", (unsigned long long)children);
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
                    pl->lv[ci] = (tsf_lix_bleaf){clo, chi, p, c, 0};
                }
                p += c;
            }
        }
    }
    return TSF_OK;
}

/* Sizes and offsets in the region: nodes (root first, level by level), leaf table, leaves. */
static void tsf_lix_place(const tsf_index *ix, tsf_lix_plan *pl, const uint64_t *keys)
{
    uint64_t total = 0;
    for (uint64_t l = pl->h; l-- > 0;)
        for (uint64_t i = 0; i < pl->nn[l]; i++) {
            pl->nodes[l][i].off = total;
            total += tsf_lix_align(IX_NODE_HDR + pl->nodes[l][i].f * IX_SLOT, 64);
        }
    total = tsf_lix_align(total, IX_BLOCK);
    pl->table_rel = total;
    total = tsf_lix_align(total + pl->nlv * 8, IX_BLOCK);
    for (uint64_t i = 0; i < pl->nlv; i++) {
        pl->lv[i].off = total;
        total += tsf_lix_leaf_bytes(ix, keys + pl->lv[i].first, pl->lv[i].n);
    }
    pl->total = total;
}

/* Writes the planned nodes, leaf table and leaves into the region at start; returns the node count. */
static uint64_t tsf_lix_write_region(tsf_index *ix, const tsf_lix_plan *pl, uint64_t start, const uint64_t *keys,
                                     const uint64_t *vals)
{
    /* the kernel's first touch of a fresh file range runs in a helper thread ahead of the stores below */
    tsf_pm_prefault *pf = tsf_pm_prefault_start(&ix->pm, start, pl->total);
    uint64_t nnodes = 0;
    for (uint64_t l = pl->h; l-- > 0;)
        for (uint64_t i = 0, ci = 0; i < pl->nn[l]; i++) {
            const tsf_lix_bnode *nd = &pl->nodes[l][i];
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
                    const tsf_lix_bnode *ch = &pl->nodes[l - 1][ci];
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
    for (uint64_t i = 0; i < pl->nlv; i++) {
        const tsf_lix_bleaf *lf = &pl->lv[i];
        st64(tsf_lix_at(ix, start + pl->table_rel + i * 8), start + lf->off);
        tsf_lix_leaf_write(ix, start + lf->off, i, lf->lo, lf->hi, keys + lf->first, vals + lf->first, lf->n);
    }
    tsf_pm_prefault_stop(pf);
    return nnodes;
}

/* Switches the handle to the tree written (and persisted) at start: a new leaf directory and metadata
   arena. Readers copy the tree fields under the gen seqlock; the old tree is freed once none can hold it. */
static tsf_status tsf_lix_install(tsf_index *ix, const tsf_lix_plan *pl, uint64_t start, uint64_t nnodes,
                                  tsf_error *err)
{
    const tsf_allocator *A = ix->alloc;
    const tsf_lix_bnode *root = &pl->nodes[pl->h - 1][0];
    uint64_t nlv = pl->nlv;
    tsf_lix_leaf *nl = tsf_lix_leaves_alloc(A, nlv);
    if (!nl) return tsf_err(err, TSF_ENOMEM, "index: leaf directory");
    for (uint64_t i = 0; i < nlv; i++) tsf_lix_leaf_load(ix, &nl[i], start + pl->lv[i].off);
    uint8_t *araw, *alo;
    uint64_t abytes, alen;
    tsf_lix_meta_arena(ix, nl, nlv, &araw, &abytes, &alo, &alen);
    tsf_lix_unseal(ix);
    tsf_lix_leaf *old = ix->leaves;
    uint64_t oldn = ix->n_leaves;
    __atomic_store_n(&ix->gen, ix->gen + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    IX_ST(&ix->leaves, nl);
    IX_ST(&ix->n_leaves, nlv);
    IX_ST(&ix->root_fanout, (uint32_t)root->f);
    IX_ST(&ix->root_off, start);
    IX_ST(&ix->root_origin, root->origin);
    IX_ST(&ix->root_mul, root->mul);
    __atomic_store_n(&ix->gen, ix->gen + 1, __ATOMIC_RELEASE);
    tsf_lix_synchronize(ix);
    tsf_lix_free_leaves(ix, old, oldn); /* with the old arena still registered: its slots are not freed */
    tsf_free(A, ix->marena, ix->marena_bytes);
    ix->marena = araw;
    ix->marena_bytes = abytes;
    ix->marena_lo = alo;
    ix->marena_len = alen;
    tsf_lix_reclaim(ix);
    ix->height = (uint32_t)pl->h;
    ix->leaf_table = start + pl->table_rel;
    ix->n_nodes = nnodes;
    ix->region_start = start;
    ix->region_end = start + pl->total;
    ix->pm.dead_bytes = 0; /* what lies outside the new region is the compaction's to give back */
    return TSF_OK;
}

tsf_status tsf_lix_build(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, uint64_t n, tsf_error *err)
{
    static const uint64_t none[1] = {0};
    if (!n) keys = vals = none; /* an empty build may pass NULL; offsets from it must stay defined */
    for (uint64_t i = 1; i < n; i++)
        if (keys[i] < keys[i - 1] || (keys[i] == keys[i - 1] && !ix->dup))
            return tsf_err(err, TSF_EINVAL, "index: bulk load keys not sorted%s at position %llu",
                           ix->dup ? "" : " and unique", (unsigned long long)i);
    tsf_lix_plan pl;
    memset(&pl, 0, sizeof pl);
    tsf_status st = tsf_lix_layout(ix, &pl, keys, n, err);
    if (st == TSF_OK) st = tsf_lix_plan_nodes(ix, &pl, keys, n, err);
    if (st != TSF_OK) goto out;
    tsf_lix_place(ix, &pl, keys);
    /* Place the new region before the live one when it fits there (compaction ping-pong). */
    uint64_t start, total = pl.total;
    int at_front = ix->region_start >= IX_REGION0 + total && ix->region_start > IX_REGION0;
    if (at_front) {
        start = IX_REGION0;
        if (ix->pm.size < start + total) st = tsf_pm_grow(&ix->pm, tsf_lix_align(start + total, PM_PAGE), err);
    } else {
        st = tsf_lix_alloc(ix, total, &start, err);
    }
    if (st != TSF_OK) goto out;
    uint64_t nnodes = tsf_lix_write_region(ix, &pl, start, keys, vals);
    tsf_pm_dirty(&ix->pm, start, total);
    st = tsf_pm_persist(&ix->pm, start, total, err);
    if (st == TSF_OK) st = tsf_lix_install(ix, &pl, start, nnodes, err);
    if (st == TSF_OK) st = tsf_lix_commit(ix, err); /* the superblock flip */
    if (st == TSF_OK && at_front) {
        ix->alloc_end = ix->region_end;
        st = tsf_pm_shrink(&ix->pm, tsf_lix_align(ix->region_end, PM_PAGE), err);
    }
    if (st == TSF_OK) tsf_lix_seal(ix);
out:
    tsf_lix_plan_free(ix->alloc, &pl);
    return st;
}

tsf_status tsf_index_bulk_load(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, size_t n,
                               tsf_error *err)
{
    if (!ix || (n && (!keys || !vals))) return tsf_err(err, TSF_EINVAL, "index: NULL argument to bulk load");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    return tsf_lix_build(ix, keys, vals, n, err);
}
