/*
 * lookup.c - point lookups: route (one 32 B slot per level, or the sealed copy's routing table), then
 * the leaf. Sorted leaves search a window bounded by the leaf model's measured error, after a DRAM bloom
 * word per block rejects absent keys; dynamic leaves compare one-byte DRAM fingerprints of the predicted
 * block, then of the overflow log. Also the batched lookup and the per-thread reader handles.
 */
#include <string.h>

#include "lix_read.h"
#include "lix_search.h"

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

static inline uint64_t tsf_lix_eq_block_scalar(const uint8_t *blk, uint64_t x)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < IX_SLOTS; i++) m |= (uint64_t)(ld64(blk + 16 + i * 16) == x) << (2 + 2 * i);
    return m;
}
#if defined(TSF_X86)
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
static inline uint64_t tsf_lix_eq_block(const tsf_index *ix, const uint8_t *blk, uint64_t x)
{
#if defined(TSF_X86)
    if (ix->simd) return tsf_lix_eq_block_avx2(blk, x);
#endif
    (void)ix;
    return tsf_lix_eq_block_scalar(blk, x);
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
