/*
 * lix_search.h - search in a sorted leaf's base, shared by point lookups (lookup.c) and ordered access
 * (scan.c): the model's error window, the radix table, and the walk over the DRAM separator levels that
 * picks the block holding a key (portable and AVX2 compare kernels, ix->simd). All inline: the hot path.
 */
#ifndef TSF_INDEX_LIX_SEARCH_H
#define TSF_INDEX_LIX_SEARCH_H

#include "index_internal.h"

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
#if defined(TSF_X86)
#include <immintrin.h>
TSF_TARGET("avx2") static inline uint32_t tsf_lix_le16_avx2(const uint32_t *g, uint32_t q)
{
    __m256i vq = _mm256_set1_epi32((int)q);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)g);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(g + 8));
    __m256i la = _mm256_cmpeq_epi32(_mm256_min_epu32(a, vq), a),
            lb = _mm256_cmpeq_epi32(_mm256_min_epu32(b, vq), b);
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(la)) |
           (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(lb)) << 8;
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
TSF_INLINE uint64_t tsf_lix_base_pos(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t x, int strict)
{
    uint64_t a, e;
    if (ix->nometa) {
        tsf_lix_base_window(L, x, &a, &e);
        return tsf_lix_base_search(tsf_lix_at(ix, L->off), a, e, x, strict);
    }
    uint64_t b = tsf_lix_sep_block(ix, L, x, strict);
    return b * IX_SLOTS + tsf_lix_block_rank(ix, L, b, x, strict);
}

#endif
