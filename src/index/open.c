/*
 * open.c - the index file's lifecycle: superblocks (A/B, CRC-checked, the newer valid one wins),
 * validation of the node structure at open (the walk also serves the invariant check), recovery into
 * the DRAM directory, and open / close of a handle.
 */
#include <string.h>

#include "index_internal.h"

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
    ix->asym = tsf_lix_asym_register();
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
