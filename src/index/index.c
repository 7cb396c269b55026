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
#include <zlib.h>

#include "index/index_internal.h"
#include "index/pla.h"

uint64_t ix_mul_for(uint64_t f, uint64_t span)
{
    if (f <= 1) return 0;
    unsigned __int128 q = ((unsigned __int128)f << 64) / ((unsigned __int128)span + 1);
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static uint32_t ix_crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

/* ---- child ranges ---------------------------------------------------------------------------- */

/*
 * Range of slot i of a node (origin, mul, f) responsible for [lo, hi]: the keys the routing function
 * sends to i. slot(k) >= i  <=>  k >= origin + ceil(i * 2^64 / mul), for i >= 1. Empty -> lo=1, hi=0.
 */
static void ix_child_range(uint64_t origin, uint64_t mul, uint64_t f, uint64_t lo, uint64_t hi, uint64_t i,
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
            if (t > lim) empty = 1;
            else if (origin + (uint64_t)t > s) s = origin + (uint64_t)t;
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

uint64_t ix_route(const tsf_index *ix, uint64_t key)
{
    const uint8_t *base = ix->pm.base;
    uint64_t off = ix->root_off, origin = ix->root_origin, mul = ix->root_mul, f = ix->root_fanout;
    for (;;) {
        uint64_t i = ix_model(key, origin, mul, f);
        const uint8_t *s = base + off + IX_NODE_HDR + i * IX_SLOT;
        uint64_t child = ld64(s + SL_O_CHILD);
        if (ld32(s + SL_O_KIND) == SL_LEAF) return child;
        origin = ld64(s + SL_O_ORIGIN);
        mul = ld64(s + SL_O_MUL);
        f = ld32(s + SL_O_FANOUT);
        off = child;
    }
}

/* ---- leaves: size, write, load --------------------------------------------------------------- */

static uint64_t ix_dyn_blocks(uint64_t n)
{
    return n * 2 / IX_SLOTS + 1; /* 50 % initial fill, as PLTree */
}

/* Dynamic leaf: records that do not fit their predicted block (they start in the overflow log). */
static uint64_t ix_dyn_spill(const uint64_t *keys, uint64_t n, uint64_t origin, uint64_t mul, uint64_t nb)
{
    uint64_t spill = 0, run = 0, prev = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = ix_model(keys[i], origin, mul, nb);
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
static void ix_dyn_plan(const uint64_t *keys, uint64_t n, uint64_t *nb, uint64_t *mul, uint64_t *spill)
{
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    *nb = ix_dyn_blocks(n);
    for (int t = 0;; t++) {
        *mul = ix_mul_for(*nb, span);
        *spill = n ? ix_dyn_spill(keys, n, keys[0], *mul, *nb) : 0;
        if (*spill * 8 <= n || t == 1 || *nb > UINT32_MAX / 4) break;
        *nb *= 2;
    }
}

uint64_t ix_leaf_bytes(const tsf_index *ix, const uint64_t *keys, uint64_t n)
{
    if (ix->mode == TSF_INDEX_SORTED) return IX_BLOCK + (n + IX_SLOTS - 1) / IX_SLOTS * IX_BLOCK;
    uint64_t nb, mul, spill;
    ix_dyn_plan(keys, n, &nb, &mul, &spill);
    return IX_BLOCK + nb * IX_BLOCK + (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS * IX_CHUNK;
}

void ix_leaf_write(tsf_index *ix, uint64_t off, uint64_t id, uint64_t lo, uint64_t hi, const uint64_t *keys,
                   const uint64_t *vals, uint64_t n)
{
    uint8_t *h = ix_at(ix, off);
    uint64_t origin = n ? keys[0] : (lo <= hi ? lo : 0);
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    uint64_t nb, mul, nbase = 0, errlo = 0, errhi = 0, ovf_head = 0;
    if (ix->mode == TSF_INDEX_SORTED) {
        nb = (n + IX_SLOTS - 1) / IX_SLOTS;
        mul = ix_mul_for(n, span);
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
                uint64_t p = ix_model(keys[i], origin, mul, n);
                if (p > i && p - i > errlo) errlo = p - i;
                if (i > p && i - p > errhi) errhi = i - p;
            }
        }
    } else {
        uint64_t spill;
        ix_dyn_plan(keys, n, &nb, &mul, &spill);
        uint64_t nchunks = (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS;
        uint8_t *chunks = h + IX_BLOCK + nb * IX_BLOCK;
        memset(h + IX_BLOCK, 0, nb * IX_BLOCK + nchunks * IX_CHUNK);
        uint64_t run = 0, prev = UINT64_MAX, r = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t b = ix_model(keys[i], origin, mul, nb);
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
            st64(ix_at(ix, coff) + 8, c ? coff - IX_CHUNK : 0);
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
    st32(h + LF_O_CRC, ix_crc(h, LF_O_CRC));
    st64(h + LF_O_OVF_HEAD, ovf_head);
}

void ix_leaf_load(tsf_index *ix, ix_leaf *L, uint64_t off)
{
    const uint8_t *h = ix_at(ix, off);
    L->off = off;
    L->lo = ld64(h + LF_O_LO);
    L->hi = ld64(h + LF_O_HI);
    L->origin = ld64(h + LF_O_ORIGIN);
    L->mul = ld64(h + LF_O_MUL);
    L->nbase = ld64(h + LF_O_NBASE);
    L->nblocks = ld32(h + LF_O_NBLOCKS);
    L->err_lo = ld32(h + LF_O_ERRLO);
    L->err_hi = ld32(h + LF_O_ERRHI);
    L->ready = 0;
    if (!L->w) L->w = &ix->w0;
    else if (L->w != &ix->w0) L->w->view_ok = 0;
}

tsf_status ix_leaf_own(tsf_index *ix, ix_leaf *L, tsf_error *err)
{
    if (L->w != &ix->w0) return TSF_OK;
    ix_leafw *w = tsf_calloc(ix->alloc, 1, sizeof *w);
    if (!w) return tsf_err(err, TSF_ENOMEM, "index: leaf overflow state");
    L->w = w;
    return TSF_OK;
}

void ix_leaf_drop(tsf_index *ix, ix_leaf *L)
{
    uint64_t mb = (uint64_t)L->nblocks * ix_meta_stride(ix);
    tsf_free(ix->alloc, L->meta, mb ? mb : 1);
    L->meta = NULL;
    L->ready = 0;
    if (!L->w || L->w == &ix->w0) return;
    tsf_free(ix->alloc, L->w->chunks, (size_t)L->w->cap_chunks * sizeof(ix_chunk));
    L->w->chunks = NULL;
    L->w->nchunks = L->w->cap_chunks = 0;
    L->w->ovf_records = 0;
}

static void ix_view_free(tsf_index *ix, ix_leaf *L)
{
    if (!L->w || L->w == &ix->w0) return;
    tsf_free(ix->alloc, L->w->vk, L->w->vcap * 8);
    tsf_free(ix->alloc, L->w->vv, L->w->vcap * 8);
    L->w->vk = L->w->vv = NULL;
    L->w->vn = L->w->vcap = 0;
    L->w->view_ok = 0;
}

/* Validates the header of leaf id at off against the range routing gives it. */
static tsf_status ix_leaf_check_header(tsf_index *ix, uint64_t id, uint64_t off, uint64_t lo, uint64_t hi,
                                       tsf_error *err)
{
    uint64_t size = ix->pm.size;
    if (off % IX_BLOCK != 0 || off < IX_REGION0 || off > size || size - off < IX_BLOCK)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf %llu offset %llu out of the file", (unsigned long long)id,
                       (unsigned long long)off);
    const uint8_t *h = ix_at(ix, off);
    if (ld32(h + LF_O_MAGIC) != LF_MAGIC || ld32(h + LF_O_CRC) != ix_crc(h, LF_O_CRC))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: bad magic or CRC",
                       (unsigned long long)off);
    uint64_t nb = ld32(h + LF_O_NBLOCKS), nbase = ld64(h + LF_O_NBASE);
    if (h[LF_O_MODE] != ix->mode || ld64(h + LF_O_ID) != id || ld64(h + LF_O_LO) != lo ||
        ld64(h + LF_O_HI) != hi)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: mode, id or range mismatch",
                       (unsigned long long)off);
    if (nb > (size - off) / IX_BLOCK - 1 || (ix->mode == TSF_INDEX_SORTED && (nbase + IX_SLOTS - 1) / IX_SLOTS != nb) ||
        (ix->mode == TSF_INDEX_DYNAMIC && (nbase != 0 || nb == 0)))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: %llu blocks do not fit",
                       (unsigned long long)off, (unsigned long long)nb);
    return TSF_OK;
}

/* Separator of key k in a sorted leaf: monotone in k, (k - origin) >> shift saturated to 32 bits. */
static inline uint32_t ix_sep(const ix_leaf *L, uint64_t k)
{
    uint64_t q = (k > L->origin ? k - L->origin : 0) >> L->shift;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* ---- lazy DRAM metadata ---------------------------------------------------------------------- */

tsf_status ix_chunk_push(tsf_index *ix, ix_leaf *L, uint64_t off, tsf_error *err)
{
    tsf_status st = ix_leaf_own(ix, L, err);
    if (st != TSF_OK) return st;
    if (L->w->nchunks == L->w->cap_chunks) {
        uint32_t nc = L->w->cap_chunks ? L->w->cap_chunks * 2 : 4;
        ix_chunk *c = tsf_realloc(ix->alloc, L->w->chunks, (size_t)L->w->cap_chunks * sizeof(ix_chunk),
                                  (size_t)nc * sizeof(ix_chunk));
        if (!c) return tsf_err(err, TSF_ENOMEM, "index: overflow chunk list");
        L->w->chunks = c;
        L->w->cap_chunks = nc;
    }
    ix_chunk *c = &L->w->chunks[L->w->nchunks++];
    memset(c, 0, sizeof *c);
    c->off = off;
    const uint8_t *p = ix_at(ix, off);
    uint64_t cnt = ld64(p) & 0xff;
    c->kmin = UINT64_MAX;
    for (uint64_t s = 0; s < cnt; s++) {
        uint64_t k = ld64(p + 16 + s * 16);
        c->fp[s] = ix_fp(k);
        if (k < c->kmin) c->kmin = k;
        if (k > c->kmax) c->kmax = k;
    }
    return TSF_OK;
}

tsf_status ix_leaf_ready(tsf_index *ix, ix_leaf *L, tsf_error *err)
{
    if (L->ready) return TSF_OK;
    int sorted = ix->mode == TSF_INDEX_SORTED;
    uint64_t stride = ix_meta_stride(ix), mb = (uint64_t)L->nblocks * stride;
    L->meta = tsf_calloc(ix->alloc, mb ? mb : 1, 1);
    if (!L->meta) return tsf_err(err, TSF_ENOMEM, "index: block metadata of %llu bytes", (unsigned long long)mb);
    uint64_t prev = 0;
    /* Separator scale: the leaf's key span (last base key - origin) >> shift fits 32 bits. */
    L->shift = 0;
    if (sorted && L->nbase > 0) {
        uint64_t last = ld64(ix_block(ix, L, (L->nbase - 1) / IX_SLOTS) + 16 + (L->nbase - 1) % IX_SLOTS * 16);
        uint64_t span = last > L->origin ? last - L->origin : 0;
        while ((span >> L->shift) > UINT32_MAX) L->shift++;
    }
    for (uint64_t b = 0; b < L->nblocks; b++) {
        const uint8_t *blk = ix_block(ix, L, b);
        uint64_t w = ld64(blk), cnt = w & 0xff, tomb = (w >> 8) & 0x7fff;
        int bad = (w >> 23) != 0 || cnt > IX_SLOTS || (tomb >> cnt) != 0;
        if (sorted) {
            uint64_t want = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS;
            bad |= cnt != want || tomb != 0;
        }
        if (bad) {
            ix_leaf_drop(ix, L);
            return tsf_err(err, TSF_ECORRUPT, "index: block header at byte %llu is invalid",
                           (unsigned long long)(blk - ix->pm.base));
        }
        uint8_t *m = L->meta + b * stride;
        uint64_t bloom = 0;
        for (uint64_t s = 0; s < cnt; s++) {
            uint64_t k = ld64(blk + 16 + s * 16);
            if (sorted) {
                if (k < prev || k < L->lo || k > L->hi) {
                    ix_leaf_drop(ix, L);
                    return tsf_err(err, TSF_ECORRUPT, "index: sorted leaf key out of order at byte %llu",
                                   (unsigned long long)(blk + 16 + s * 16 - ix->pm.base));
                }
                prev = k;
                bloom |= ix_bloom_bits(k);
                if (s == 0) st32(m, ix_sep(L, k));
            } else {
                m[s] = ix_fp(k);
            }
        }
        if (sorted) st64(m + 4, bloom);
        else m[15] = (uint8_t)cnt;
    }
    /* Overflow chain, newest first in the file; kept oldest first in DRAM. */
    uint64_t off = ld64(ix_at(ix, L->off) + LF_O_OVF_HEAD), limit = ix->pm.size / IX_CHUNK + 1, nrec = 0;
    while (off != 0) {
        if (off % IX_BLOCK != 0 || off < IX_REGION0 || off > ix->pm.size || ix->pm.size - off < IX_CHUNK ||
            limit-- == 0) {
            ix_leaf_drop(ix, L);
            return tsf_err(err, TSF_ECORRUPT, "index: overflow chunk offset %llu of leaf at byte %llu invalid",
                           (unsigned long long)off, (unsigned long long)L->off);
        }
        uint64_t w = ld64(ix_at(ix, off)), cnt = w & 0xff, tomb = w >> 8;
        if (cnt > IX_CHUNK_SLOTS || (tomb >> cnt) != 0) {
            ix_leaf_drop(ix, L);
            return tsf_err(err, TSF_ECORRUPT, "index: overflow chunk header at byte %llu is invalid",
                           (unsigned long long)off);
        }
        tsf_status s = ix_chunk_push(ix, L, off, err);
        if (s != TSF_OK) {
            ix_leaf_drop(ix, L);
            return s;
        }
        nrec += cnt;
        off = ld64(ix_at(ix, off) + 8);
    }
    for (uint32_t i = 0, j = L->w->nchunks ? L->w->nchunks - 1 : 0; i < j; i++, j--) {
        ix_chunk t = L->w->chunks[i];
        L->w->chunks[i] = L->w->chunks[j];
        L->w->chunks[j] = t;
    }
    if (L->w != &ix->w0) {
        L->w->ovf_records = L->w->ovf_built = nrec;
        L->w->chunks_built = L->w->nchunks;
    }
    L->ready = 1;
    return TSF_OK;
}

/* ---- point lookups --------------------------------------------------------------------------- */

enum { IX_MISS = 0, IX_HIT = 1, IX_TOMB = 2 };

/* Bitmask of the first n fingerprints equal to fp. */
static inline uint64_t ix_fp_mask(const uint8_t *fps, uint64_t n, uint8_t fp)
{
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++) m |= (uint64_t)(fps[i] == fp) << i;
    return m;
}

/* Searches a record array (block or chunk) newest first. */
static inline int ix_probe(const uint8_t *recs, uint64_t cand, uint64_t tombs, uint64_t key, uint64_t *val)
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

static int ix_ovf_get(const tsf_index *ix, const ix_leaf *L, uint64_t key, uint64_t *val)
{
    uint8_t fp = ix_fp(key);
    for (uint32_t c = L->w->nchunks; c-- > 0;) {
        if (key < L->w->chunks[c].kmin || key > L->w->chunks[c].kmax) continue;
        const uint8_t *p = ix_at(ix, L->w->chunks[c].off);
        uint64_t w = ld64(p), cnt = w & 0xff;
        uint64_t cand = ix->nometa ? (UINT64_C(1) << cnt) - 1 : ix_fp_mask(L->w->chunks[c].fp, cnt, fp);
        int r = ix_probe(p + 16, cand, w >> 8, key, val);
        if (r != IX_MISS) return r;
    }
    return IX_MISS;
}

/* Key at position i of a sorted leaf's base. */
static inline uint64_t ix_base_key(const uint8_t *leaf, uint64_t i)
{
    return ld64(leaf + IX_BLOCK + i / IX_SLOTS * IX_BLOCK + 16 + i % IX_SLOTS * 16);
}

/* First position in [a, e) of the base whose key is >= x (or > x when strict); e if none. Branchless. */
static inline uint64_t ix_base_search(const uint8_t *leaf, uint64_t a, uint64_t e, uint64_t x, int strict)
{
    uint64_t n = e - a;
    if (n == 0) return a;
    while (n > 1) {
        uint64_t half = n / 2, k = ix_base_key(leaf, a + half);
        a = (strict ? k <= x : k < x) ? a + half : a;
        n -= half;
    }
    uint64_t k = ix_base_key(leaf, a);
    return a + (strict ? k <= x : k < x);
}

/* Window [a, e) that must hold the lower/upper bound of x in a sorted leaf (error-bounded model). */
static inline void ix_base_window(const ix_leaf *L, uint64_t x, uint64_t *a, uint64_t *e)
{
    uint64_t p = ix_model(x, L->origin, L->mul, L->nbase);
    *a = p > L->err_lo ? p - L->err_lo : 0;
    uint64_t end = p + (uint64_t)L->err_hi + 1;
    *e = end < L->nbase ? end : L->nbase;
}

/* Blocks in [from, from+n) whose separator is < q (*lt) and <= q (*le); separators never decrease. */
static inline void ix_sep_counts(const uint8_t *m, uint64_t from, uint64_t n, uint32_t q, uint64_t *lt,
                                 uint64_t *le)
{
    if (n <= 16) {
        uint64_t a = 0, b = 0;
        for (const uint8_t *p = m + from * IX_META_SORTED, *e = p + n * IX_META_SORTED; p < e; p += IX_META_SORTED) {
            uint32_t sp = ld32(p);
            a += sp < q;
            b += sp <= q;
        }
        *lt = a;
        *le = b;
        return;
    }
    for (int strict = 0; strict < 2; strict++) {
        uint64_t a = from, len = n;
        while (len > 0) {
            uint64_t half = len / 2;
            uint32_t sp = ld32(m + (a + half) * IX_META_SORTED);
            if (strict ? sp <= q : sp < q) {
                a += half + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        *(strict ? le : lt) = a - from;
    }
}

/*
 * Block of a sorted base holding the lower bound of x (its upper bound when strict): the last block of
 * the model's error window whose first key is < x (<= x), found in the DRAM separators. Truncated
 * separators equal to x's leave a few candidates; their first keys in the file decide (rare).
 */
static inline uint64_t ix_sep_block(const tsf_index *ix, const ix_leaf *L, uint64_t x, int strict)
{
    uint64_t a, e;
    ix_base_window(L, x, &a, &e);
    uint64_t b0 = a / IX_SLOTS, nb = (e - 1) / IX_SLOTS - b0;
    /* The model's block is usually the one: fetch it while the separators are read. */
    const uint8_t *pb = ix_block(ix, L, (a + (uint64_t)L->err_lo < L->nbase ? a + L->err_lo : L->nbase - 1) / IX_SLOTS);
    __builtin_prefetch(pb);
    __builtin_prefetch(pb + 64);
    __builtin_prefetch(pb + 128);
    __builtin_prefetch(pb + 192);
    uint32_t q = ix_sep(L, x);
    uint64_t lo, hi;
    ix_sep_counts(L->meta, b0 + 1, nb, q, &lo, &hi);
    lo += b0;
    hi += b0;
    if (TSF_UNLIKELY(hi > lo)) {
        const uint8_t *leaf = ix_at(ix, L->off);
        for (; hi > lo; hi--) {
            uint64_t f = ix_base_key(leaf, hi * IX_SLOTS);
            if (strict ? f <= x : f < x) break;
        }
    }
    return hi;
}

/* Keys in the base block b that are < x (<= x when strict). */
static inline uint64_t ix_block_rank(const tsf_index *ix, const ix_leaf *L, uint64_t b, uint64_t x, int strict)
{
    const uint8_t *blk = ix_block(ix, L, b) + 16;
    uint64_t cnt = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS, r = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t k = ld64(blk + i * 16);
        r += strict ? k <= x : k < x;
    }
    return r;
}

/* First position of a non-empty sorted base with key >= x (> x when strict); nbase if none. */
static inline uint64_t ix_base_pos(const tsf_index *ix, const ix_leaf *L, uint64_t x, int strict)
{
    uint64_t a, e;
    if (ix->nometa) {
        ix_base_window(L, x, &a, &e);
        return ix_base_search(ix_at(ix, L->off), a, e, x, strict);
    }
    uint64_t b = ix_sep_block(ix, L, x, strict);
    return b * IX_SLOTS + ix_block_rank(ix, L, b, x, strict);
}

static int ix_leaf_get(tsf_index *ix, ix_leaf *L, uint64_t key, uint64_t *val)
{
    if (ix->mode == TSF_INDEX_DYNAMIC) {
        uint64_t b = ix_model(key, L->origin, L->mul, L->nblocks);
        const uint8_t *blk = ix_block(ix, L, b);
        uint64_t cand;
        if (ix->nometa) {
            cand = (UINT64_C(1) << (ld64(blk) & 0xff)) - 1;
        } else {
            const uint8_t *m = L->meta + b * 16;
            cand = ix_fp_mask(m, m[15], ix_fp(key));
        }
        if (cand) {
            int r = ix_probe(blk + 16, cand, ld64(blk) >> 8, key, val);
            if (r != IX_MISS) return r;
        }
        return L->w->nchunks ? ix_ovf_get(ix, L, key, val) : IX_MISS;
    }
    if (L->w->nchunks) {
        int r = ix_ovf_get(ix, L, key, val);
        if (r != IX_MISS) return r;
    }
    if (L->nbase == 0) return IX_MISS;
    if (!ix->nometa && !ix->dup) {
        /* Unique keys: key, if present, is in the last block whose first key is <= key. */
        uint64_t b = ix_sep_block(ix, L, key, 1), bits = ix_bloom_bits(key);
        if ((ld64(L->meta + b * IX_META_SORTED + 4) & bits) != bits) return IX_MISS;
        const uint8_t *blk = ix_block(ix, L, b) + 16;
        uint64_t cnt = L->nbase - b * IX_SLOTS < IX_SLOTS ? L->nbase - b * IX_SLOTS : IX_SLOTS;
        for (uint64_t i = 0; i < cnt; i++)
            if (ld64(blk + i * 16) == key) {
                *val = ld64(blk + i * 16 + 8);
                return IX_HIT;
            }
        return IX_MISS;
    }
    const uint8_t *leaf = ix_at(ix, L->off);
    uint64_t pos = ix_base_pos(ix, L, key, 0); /* the first of equal keys */
    if (pos < L->nbase && ix_base_key(leaf, pos) == key) {
        *val = ld64(leaf + IX_BLOCK + pos / IX_SLOTS * IX_BLOCK + 24 + pos % IX_SLOTS * 16);
        return IX_HIT;
    }
    return IX_MISS;
}

tsf_status tsf_index_get(tsf_index *ix, uint64_t key, uint64_t *val, tsf_error *err)
{
    if (!ix || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_get");
    ix_leaf *L = &ix->leaves[ix_route(ix, key)];
    if (TSF_UNLIKELY(!L->ready)) {
        tsf_status s = ix_leaf_ready(ix, L, err);
        if (s != TSF_OK) return s;
    }
    return ix_leaf_get(ix, L, key, val) == IX_HIT ? TSF_OK : TSF_ENOTFOUND;
}

/* ---- ordered access: leaf views -------------------------------------------------------------- */

typedef struct ix_rec {
    uint64_t k, v;
    uint64_t seq; /* bit 0: tombstone; higher bits: age */
} ix_rec;

static int ix_rec_cmp(const void *a, const void *b)
{
    const ix_rec *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ix_view_push(tsf_index *ix, ix_leaf *L, uint64_t k, uint64_t v)
{
    if (L->w->vn == L->w->vcap) {
        uint64_t nc = L->w->vcap ? L->w->vcap * 2 : 64;
        uint64_t *a = tsf_realloc(ix->alloc, L->w->vk, L->w->vcap * 8, nc * 8);
        if (!a) return -1;
        L->w->vk = a;
        uint64_t *b = tsf_realloc(ix->alloc, L->w->vv, L->w->vcap * 8, nc * 8);
        if (!b) return -1;
        L->w->vv = b;
        L->w->vcap = nc;
    }
    L->w->vk[L->w->vn] = k;
    L->w->vv[L->w->vn] = v;
    L->w->vn++;
    return 0;
}

/* Is the leaf read straight from the file (sorted base, no overflow)? */
static inline int ix_direct(const tsf_index *ix, const ix_leaf *L)
{
    return ix->mode == TSF_INDEX_SORTED && L->w->nchunks == 0;
}

tsf_status ix_leaf_view(tsf_index *ix, ix_leaf *L, tsf_error *err)
{
    tsf_status s = ix_leaf_ready(ix, L, err);
    if (s != TSF_OK || L->w->view_ok) return s;
    s = ix_leaf_own(ix, L, err);
    if (s != TSF_OK) return s;
    /* Newer-than-base records: chunks oldest to newest, then dynamic blocks (the newest tier). */
    uint64_t nr = L->w->ovf_records + (ix->mode == TSF_INDEX_DYNAMIC ? (uint64_t)L->nblocks * IX_SLOTS : 0);
    ix_rec *r = tsf_alloc(ix->alloc, (nr ? nr : 1) * sizeof(ix_rec));
    if (!r) return tsf_err(err, TSF_ENOMEM, "index: leaf view of %llu records", (unsigned long long)nr);
    uint64_t n = 0, age = 0;
    for (uint32_t c = 0; c < L->w->nchunks; c++) {
        const uint8_t *p = ix_at(ix, L->w->chunks[c].off);
        uint64_t w = ld64(p), cnt = w & 0xff;
        for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
            r[n] = (ix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
    }
    if (ix->mode == TSF_INDEX_DYNAMIC)
        for (uint64_t b = 0; b < L->nblocks; b++) {
            const uint8_t *p = ix_block(ix, L, b);
            uint64_t w = ld64(p), cnt = w & 0xff;
            for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
                r[n] = (ix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
        }
    qsort(r, n, sizeof *r, ix_rec_cmp);
    L->w->vn = 0;
    const uint8_t *leaf = ix_at(ix, L->off);
    uint64_t i = 0, j = 0, nb = ix->mode == TSF_INDEX_SORTED ? L->nbase : 0;
    int oom = 0;
    while (!oom && (i < nb || j < n)) {
        uint64_t k = j >= n || (i < nb && ix_base_key(leaf, i) <= r[j].k) ? ix_base_key(leaf, i) : r[j].k;
        uint64_t i2 = i, j2 = j;
        while (i2 < nb && ix_base_key(leaf, i2) == k) i2++;
        while (j2 < n && r[j2].k == k) j2++;
        if (!ix->dup) {
            if (j2 > j) {
                if (!(r[j2 - 1].seq & 1)) oom = ix_view_push(ix, L, k, r[j2 - 1].v);
            } else {
                oom = ix_view_push(ix, L, k, ld64(leaf + IX_BLOCK + (i2 - 1) / IX_SLOTS * IX_BLOCK + 24 +
                                                  (i2 - 1) % IX_SLOTS * 16));
            }
        } else {
            uint64_t t = j2; /* last tombstone */
            for (uint64_t q = j; q < j2; q++)
                if (r[q].seq & 1) t = q;
            if (t == j2)
                for (uint64_t q = i; q < i2 && !oom; q++)
                    oom = ix_view_push(ix, L, k, ld64(leaf + IX_BLOCK + q / IX_SLOTS * IX_BLOCK + 24 +
                                                      q % IX_SLOTS * 16));
            for (uint64_t q = t == j2 ? j : t + 1; q < j2 && !oom; q++) oom = ix_view_push(ix, L, k, r[q].v);
        }
        i = i2;
        j = j2;
    }
    tsf_free(ix->alloc, r, (nr ? nr : 1) * sizeof(ix_rec));
    if (oom) {
        ix_view_free(ix, L);
        return tsf_err(err, TSF_ENOMEM, "index: leaf view");
    }
    L->w->view_ok = 1;
    return TSF_OK;
}

/* Prepares a leaf for ordered access; returns its live count in *n. */
static tsf_status ix_leaf_ordered(tsf_index *ix, ix_leaf *L, uint64_t *n, tsf_error *err)
{
    tsf_status s = ix_leaf_ready(ix, L, err);
    if (s != TSF_OK) return s;
    if (ix_direct(ix, L)) {
        *n = L->nbase;
        return TSF_OK;
    }
    s = ix_leaf_view(ix, L, err);
    *n = L->w->vn;
    return s;
}

static inline uint64_t ix_vkey(const tsf_index *ix, const ix_leaf *L, uint64_t i)
{
    return ix_direct(ix, L) ? ix_base_key(ix_at(ix, L->off), i) : L->w->vk[i];
}
static inline uint64_t ix_vval(const tsf_index *ix, const ix_leaf *L, uint64_t i)
{
    if (!ix_direct(ix, L)) return L->w->vv[i];
    return ld64(ix_at(ix, L->off) + IX_BLOCK + i / IX_SLOTS * IX_BLOCK + 24 + i % IX_SLOTS * 16);
}

/* First position in the leaf's ordered view with key >= x (> x when strict). */
static uint64_t ix_leaf_pos(const tsf_index *ix, const ix_leaf *L, uint64_t n, uint64_t x, int strict)
{
    if (ix_direct(ix, L)) return n == 0 ? 0 : ix_base_pos(ix, L, x, strict);
    uint64_t a = 0, len = n;
    while (len > 0) {
        uint64_t half = len / 2;
        uint64_t k = L->w->vk[a + half];
        if (strict ? k <= x : k < x) {
            a += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return a;
}

tsf_status tsf_index_lower_bound(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_lower_bound");
    for (uint64_t id = ix_route(ix, x), first = 1; id < ix->n_leaves; id++, first = 0) {
        ix_leaf *L = &ix->leaves[id];
        uint64_t n;
        tsf_status s = ix_leaf_ordered(ix, L, &n, err);
        if (s != TSF_OK) return s;
        uint64_t p = first ? ix_leaf_pos(ix, L, n, x, 0) : 0;
        if (p < n) {
            *key = ix_vkey(ix, L, p);
            *val = ix_vval(ix, L, p);
            return TSF_OK;
        }
    }
    return TSF_ENOTFOUND;
}

tsf_status tsf_index_floor(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_floor");
    uint64_t id = ix_route(ix, x);
    for (int first = 1;; first = 0) {
        ix_leaf *L = &ix->leaves[id];
        uint64_t n;
        tsf_status s = ix_leaf_ordered(ix, L, &n, err);
        if (s != TSF_OK) return s;
        uint64_t p = first ? ix_leaf_pos(ix, L, n, x, 1) : n;
        if (p > 0) {
            *key = ix_vkey(ix, L, p - 1);
            *val = ix_vval(ix, L, p - 1);
            return TSF_OK;
        }
        if (id == 0) return TSF_ENOTFOUND;
        id--;
    }
}

tsf_status tsf_index_scan(tsf_index *ix, uint64_t lo, uint64_t hi, tsf_index_visit fn, void *arg,
                          tsf_error *err)
{
    if (!ix || !fn) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_scan");
    if (lo > hi) return TSF_OK;
    for (uint64_t id = ix_route(ix, lo), first = 1; id < ix->n_leaves; id++, first = 0) {
        ix_leaf *L = &ix->leaves[id];
        uint64_t n;
        tsf_status s = ix_leaf_ordered(ix, L, &n, err);
        if (s != TSF_OK) return s;
        for (uint64_t p = first ? ix_leaf_pos(ix, L, n, lo, 0) : 0; p < n; p++) {
            uint64_t k = ix_vkey(ix, L, p);
            if (k > hi) return TSF_OK;
            if (fn(k, ix_vval(ix, L, p), arg)) return TSF_OK;
        }
    }
    return TSF_OK;
}

/* ---- build (bulk load, compaction) ----------------------------------------------------------- */

typedef struct ix_bnode {
    uint64_t origin, mul, lo, hi, off;
    uint64_t f;
} ix_bnode;

typedef struct ix_bleaf {
    uint64_t lo, hi, first, n, off;
} ix_bleaf;

static uint64_t ix_align(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

tsf_status ix_alloc(tsf_index *ix, uint64_t bytes, uint64_t *off, tsf_error *err)
{
    bytes = ix_align(bytes, IX_BLOCK);
    uint64_t o = ix_align(ix->alloc_end, IX_BLOCK), end = o + bytes;
    if (end > ix->pm.size) {
        uint64_t grow = ix->pm.size / 8 > (UINT64_C(1) << 16) ? ix->pm.size / 8 : (UINT64_C(1) << 16);
        uint64_t want = ix_align(end > ix->pm.size + grow ? end : ix->pm.size + grow, PM_PAGE);
        tsf_status s = pm_grow(&ix->pm, want, err);
        if (s != TSF_OK) return s;
    }
    ix->alloc_end = end;
    *off = o;
    return TSF_OK;
}

/* Model of a node whose layout keys are k[0..c). */
static void ix_fit(ix_bnode *nd, const uint64_t *k, uint64_t c, uint64_t lo)
{
    nd->f = c ? c : 1;
    nd->origin = c ? k[0] : (lo == 1 && nd->hi == 0 ? 0 : lo);
    nd->mul = c > 1 ? ix_mul_for(c, k[c - 1] - k[0]) : 0;
}

static void ix_free_leaves(tsf_index *ix)
{
    if (!ix->leaves) return;
    for (uint64_t i = 0; i < ix->n_leaves; i++) {
        ix_leaf *L = &ix->leaves[i];
        ix_leaf_drop(ix, L);
        ix_view_free(ix, L);
        if (L->w && L->w != &ix->w0) tsf_free(ix->alloc, L->w, sizeof *L->w);
    }
    tsf_free(ix->alloc, ix->leaves, ix->n_leaves * sizeof(ix_leaf));
    ix->leaves = NULL;
}

tsf_status ix_build(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, uint64_t n, tsf_error *err)
{
    const tsf_allocator *A = ix->alloc;
    for (uint64_t i = 1; i < n; i++)
        if (keys[i] < keys[i - 1] || (keys[i] == keys[i - 1] && !ix->dup))
            return tsf_err(err, TSF_EINVAL, "index: bulk load keys not sorted%s at position %llu",
                           ix->dup ? "" : " and unique", (unsigned long long)i);
    tsf_status st = TSF_OK;
    /* Phase 1, bottom-up layout: lay[0] = leaf boundaries, lay[h] = PLA of lay[h-1]. */
    uint64_t *lay[IX_MAX_HEIGHT] = {0}, cnt[IX_MAX_HEIGHT] = {0};
    size_t *starts = tsf_alloc(A, (n ? n : 1) * sizeof(size_t));
    ix_bnode *nodes[IX_MAX_HEIGHT] = {0};
    uint64_t nn[IX_MAX_HEIGHT] = {0};
    ix_bleaf *lv = NULL;
    uint64_t nlv = 0, H = 0;
    if (!starts) return tsf_err(err, TSF_ENOMEM, "index: layout");
    {
        const uint64_t *src = keys;
        uint64_t sn = n;
        uint32_t eps = ix->leaf_eps;
        for (;;) {
            uint64_t c = tsf_pla_segments(src, sn, eps, starts);
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
    nodes[H - 1] = tsf_alloc(A, sizeof(ix_bnode));
    if (!nodes[H - 1]) {
        st = tsf_err(err, TSF_ENOMEM, "index: nodes");
        goto out;
    }
    nn[H - 1] = 1;
    nodes[H - 1][0].lo = 0;
    nodes[H - 1][0].hi = UINT64_MAX;
    ix_fit(&nodes[H - 1][0], lay[H - 1], cnt[H - 1], 0);
    for (uint64_t l = H; l-- > 0;) {
        uint64_t children = 0;
        for (uint64_t i = 0; i < nn[l]; i++) children += nodes[l][i].f;
        const uint64_t *ck = l > 0 ? lay[l - 1] : keys;
        uint64_t cn = l > 0 ? cnt[l - 1] : n, p = 0, ci = 0;
        if (l > 0) {
            nodes[l - 1] = tsf_alloc(A, children * sizeof(ix_bnode));
            nn[l - 1] = children;
        } else {
            lv = tsf_alloc(A, children * sizeof(ix_bleaf));
            nlv = children;
        }
        if ((l > 0 && !nodes[l - 1]) || (l == 0 && !lv)) {
            st = tsf_err(err, TSF_ENOMEM, "index: %llu children", (unsigned long long)children);
            goto out;
        }
        for (uint64_t i = 0; i < nn[l]; i++) {
            const ix_bnode *nd = &nodes[l][i];
            for (uint64_t s = 0; s < nd->f; s++, ci++) {
                uint64_t clo, chi, c = 0;
                ix_child_range(nd->origin, nd->mul, nd->f, nd->lo, nd->hi, s, &clo, &chi);
                if (clo <= chi)
                    while (p + c < cn && ck[p + c] <= chi) c++;
                if (l > 0) {
                    ix_bnode *ch = &nodes[l - 1][ci];
                    ch->lo = clo;
                    ch->hi = chi;
                    ix_fit(ch, ck + p, c, clo);
                } else {
                    lv[ci] = (ix_bleaf){clo, chi, p, c, 0};
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
            total += ix_align(IX_NODE_HDR + nodes[l][i].f * IX_SLOT, 64);
        }
    total = ix_align(total, IX_BLOCK);
    uint64_t table_rel = total;
    total = ix_align(total + nlv * 8, IX_BLOCK);
    for (uint64_t i = 0; i < nlv; i++) {
        lv[i].off = total;
        total += ix_leaf_bytes(ix, keys + lv[i].first, lv[i].n);
    }
    /* Place the new region before the live one when it fits there (compaction ping-pong). */
    uint64_t start;
    int at_front = ix->region_start >= IX_REGION0 + total && ix->region_start > IX_REGION0;
    if (at_front) {
        start = IX_REGION0;
        if (ix->pm.size < start + total) {
            st = pm_grow(&ix->pm, ix_align(start + total, PM_PAGE), err);
            if (st != TSF_OK) goto out;
        }
    } else {
        st = ix_alloc(ix, total, &start, err);
        if (st != TSF_OK) goto out;
    }
    uint64_t nnodes = 0;
    for (uint64_t l = H; l-- > 0;)
        for (uint64_t i = 0, ci = 0; i < nn[l]; i++) {
            const ix_bnode *nd = &nodes[l][i];
            uint8_t *p = ix_at(ix, start + nd->off);
            memset(p, 0, ix_align(IX_NODE_HDR + nd->f * IX_SLOT, 64));
            st32(p + ND_O_MAGIC, ND_MAGIC);
            st32(p + ND_O_LEVEL, (uint32_t)l);
            st32(p + ND_O_FANOUT, (uint32_t)nd->f);
            st64(p + ND_O_LO, nd->lo);
            st64(p + ND_O_HI, nd->hi);
            for (uint64_t s = 0; s < nd->f; s++, ci++) {
                uint8_t *sl = p + IX_NODE_HDR + s * IX_SLOT;
                if (l > 0) {
                    const ix_bnode *ch = &nodes[l - 1][ci];
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
        st64(ix_at(ix, start + table_rel + i * 8), start + lv[i].off);
        ix_leaf_write(ix, start + lv[i].off, i, lv[i].lo, lv[i].hi, keys + lv[i].first, vals + lv[i].first,
                      lv[i].n);
    }
    pm_dirty(&ix->pm, start, total);
    st = pm_persist(&ix->pm, start, total, err);
    if (st != TSF_OK) goto out;
    /* Switch the handle to the new region, then flip the superblock. */
    ix_leaf *nl = tsf_calloc(A, nlv, sizeof(ix_leaf));
    if (!nl) {
        st = tsf_err(err, TSF_ENOMEM, "index: leaf directory");
        goto out;
    }
    ix_free_leaves(ix);
    ix->leaves = nl;
    ix->n_leaves = nlv;
    for (uint64_t i = 0; i < nlv; i++) ix_leaf_load(ix, &nl[i], start + lv[i].off);
    ix->height = (uint32_t)H;
    ix->root_fanout = (uint32_t)nodes[H - 1][0].f;
    ix->root_off = start;
    ix->root_origin = nodes[H - 1][0].origin;
    ix->root_mul = nodes[H - 1][0].mul;
    ix->leaf_table = start + table_rel;
    ix->n_nodes = nnodes;
    ix->region_start = start;
    ix->region_end = start + total;
    st = ix_commit(ix, err);
    if (st == TSF_OK && at_front) {
        ix->alloc_end = ix->region_end;
        st = pm_shrink(&ix->pm, ix_align(ix->region_end, PM_PAGE), err);
    }
out:
    for (uint64_t l = 0; l < IX_MAX_HEIGHT; l++) {
        tsf_free(A, lay[l], (cnt[l] ? cnt[l] : 1) * 8);
        tsf_free(A, nodes[l], nn[l] * sizeof(ix_bnode));
    }
    tsf_free(A, lv, nlv * sizeof(ix_bleaf));
    tsf_free(A, starts, (n ? n : 1) * sizeof(size_t));
    return st;
}

tsf_status tsf_index_bulk_load(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, size_t n,
                               tsf_error *err)
{
    if (!ix || (n && (!keys || !vals))) return tsf_err(err, TSF_EINVAL, "index: NULL argument to bulk load");
    if (ix->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle");
    return ix_build(ix, keys, vals, n, err);
}

/* ---- superblocks ------------------------------------------------------------------------------ */

tsf_status ix_commit(tsf_index *ix, tsf_error *err)
{
    tsf_status s = pm_persist_all(&ix->pm, err);
    if (s != TSF_OK) return s;
    uint64_t epoch = ix->epoch + 1, off = (epoch & 1) * IX_SB;
    uint8_t *p = ix_at(ix, off);
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
    st32(p + SB_O_CRC, ix_crc(p, SB_O_CRC));
    pm_dirty(&ix->pm, off, IX_SB);
    s = pm_persist(&ix->pm, off, IX_SB, err);
    if (s == TSF_OK) ix->epoch = epoch;
    return s;
}

/* Reads the superblock at off into the handle if it is valid; returns its epoch (0 = invalid). */
static uint64_t ix_sb_epoch(const tsf_index *ix, uint64_t off)
{
    const uint8_t *p = ix_at(ix, off);
    if (ld64(p + SB_O_MAGIC) != SB_MAGIC || ld32(p + SB_O_VERSION) != SB_VERSION ||
        ld32(p + SB_O_CRC) != ix_crc(p, SB_O_CRC))
        return 0;
    return ld64(p + SB_O_EPOCH);
}

static tsf_status ix_sb_load(tsf_index *ix, uint64_t off, tsf_error *err)
{
    const uint8_t *p = ix_at(ix, off);
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
    if (ix->mode > TSF_INDEX_DYNAMIC || ix->height == 0 || ix->height > IX_MAX_HEIGHT || ix->root_fanout == 0 ||
        ix->root_fanout > IX_ROOT_MAX || ix->n_leaves == 0 || ix->n_leaves > size / IX_BLOCK ||
        ix->leaf_table % 8 != 0 || ix->leaf_table < IX_REGION0 || ix->leaf_table > size ||
        (size - ix->leaf_table) / 8 < ix->n_leaves || ix->n_nodes == 0 || ix->n_nodes > size / 64 ||
        ix->region_start > ix->region_end || ix->region_end > size || ix->leaf_eps == 0 || ix->inner_eps == 0)
        return tsf_err(err, TSF_ECORRUPT, "index: superblock at byte %llu has out-of-range fields",
                       (unsigned long long)off);
    return TSF_OK;
}

/* ---- node walk (open-time validation, check) ------------------------------------------------- */

typedef struct ix_walk {
    uint64_t leaf_next, visited;
    int fill;
} ix_walk;

static tsf_status ix_walk_node(tsf_index *ix, ix_walk *w, uint64_t off, uint64_t f, uint64_t level,
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
    const uint8_t *p = ix_at(ix, off);
    if (ld32(p + ND_O_MAGIC) != ND_MAGIC || ld32(p + ND_O_LEVEL) != level || ld32(p + ND_O_FANOUT) != f ||
        ld64(p + ND_O_LO) != lo || ld64(p + ND_O_HI) != hi)
        return tsf_err(err, TSF_ECORRUPT, "index: internal node at byte %llu: header does not match its parent",
                       (unsigned long long)off);
    for (uint64_t s = 0; s < f; s++) {
        const uint8_t *sl = p + IX_NODE_HDR + s * IX_SLOT;
        uint64_t clo, chi, child = ld64(sl + SL_O_CHILD);
        ix_child_range(origin, mul, f, lo, hi, s, &clo, &chi);
        uint32_t kind = ld32(sl + SL_O_KIND);
        if (kind != (level == 0 ? SL_LEAF : SL_NODE))
            return tsf_err(err, TSF_ECORRUPT, "index: slot %llu of node at byte %llu has kind %u at level %llu",
                           (unsigned long long)s, (unsigned long long)off, kind, (unsigned long long)level);
        if (kind == SL_LEAF) {
            if (child != w->leaf_next || child >= ix->n_leaves)
                return tsf_err(err, TSF_ECORRUPT, "index: slot %llu of node at byte %llu: leaf id %llu out of order",
                               (unsigned long long)s, (unsigned long long)off, (unsigned long long)child);
            w->leaf_next++;
            if (w->fill) {
                ix->leaves[child].lo = clo;
                ix->leaves[child].hi = chi;
            } else if (ix->leaves[child].lo != clo || ix->leaves[child].hi != chi) {
                return tsf_err(err, TSF_ECORRUPT, "index: leaf %llu range differs from its routing range",
                               (unsigned long long)child);
            }
        } else {
            tsf_status st = ix_walk_node(ix, w, child, ld32(sl + SL_O_FANOUT), level - 1, ld64(sl + SL_O_ORIGIN),
                                         ld64(sl + SL_O_MUL), clo, chi, err);
            if (st != TSF_OK) return st;
        }
    }
    return TSF_OK;
}

tsf_status ix_walk_nodes(tsf_index *ix, int fill_leaves, tsf_error *err)
{
    ix_walk w = {0, 0, fill_leaves};
    tsf_status s = ix_walk_node(ix, &w, ix->root_off, ix->root_fanout, ix->height - 1, ix->root_origin,
                                ix->root_mul, 0, UINT64_MAX, err);
    if (s == TSF_OK && (w.leaf_next != ix->n_leaves || w.visited != ix->n_nodes))
        return tsf_err(err, TSF_ECORRUPT, "index: %llu leaves and %llu nodes reachable, superblock says %llu/%llu",
                       (unsigned long long)w.leaf_next, (unsigned long long)w.visited,
                       (unsigned long long)ix->n_leaves, (unsigned long long)ix->n_nodes);
    return s;
}

/* ---- open / close ---------------------------------------------------------------------------- */

void tsf_index_options_init(tsf_index_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->mode = TSF_INDEX_SORTED;
    opt->durability = TSF_INDEX_DUR_MSYNC;
}

static tsf_status ix_recover(tsf_index *ix, tsf_error *err)
{
    if (ix->pm.size < IX_REGION0)
        return tsf_err(err, TSF_ECORRUPT, "index: file of %llu bytes is shorter than its superblocks",
                       (unsigned long long)ix->pm.size);
    uint64_t ea = ix_sb_epoch(ix, 0), eb = ix_sb_epoch(ix, IX_SB);
    if (ea == 0 && eb == 0) return tsf_err(err, TSF_ECORRUPT, "index: no valid superblock at byte 0 or 256");
    tsf_status s = ix_sb_load(ix, ea >= eb ? 0 : IX_SB, err);
    if (s != TSF_OK) return s;
    ix->leaves = tsf_calloc(ix->alloc, ix->n_leaves, sizeof(ix_leaf));
    if (!ix->leaves) return tsf_err(err, TSF_ENOMEM, "index: leaf directory of %llu", (unsigned long long)ix->n_leaves);
    s = ix_walk_nodes(ix, 1, err);
    for (uint64_t i = 0; s == TSF_OK && i < ix->n_leaves; i++) {
        uint64_t off = ld64(ix_at(ix, ix->leaf_table + i * 8));
        s = ix_leaf_check_header(ix, i, off, ix->leaves[i].lo, ix->leaves[i].hi, err);
        if (s == TSF_OK) ix_leaf_load(ix, &ix->leaves[i], off);
    }
    ix->alloc_end = ix_align(ix->pm.size, IX_BLOCK);
    return s;
}

static int ix_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

tsf_status tsf_index_open(const char *path, const tsf_index_options *opt, tsf_index **out, tsf_error *err)
{
    tsf_index_options def;
    if (!out) return tsf_err(err, TSF_EINVAL, "index: NULL out");
    *out = NULL;
    if (!opt) {
        tsf_index_options_init(&def);
        opt = &def;
    }
    if (opt->size < sizeof *opt || opt->mode > TSF_INDEX_DYNAMIC || opt->durability > TSF_INDEX_DUR_SHADOW)
        return tsf_err(err, TSF_EINVAL, "index: bad options (size, mode or durability)");
    tsf_index *ix = tsf_calloc(opt->alloc, 1, sizeof *ix);
    if (!ix) return tsf_err(err, TSF_ENOMEM, "index: handle");
    ix->alloc = opt->alloc;
    ix->flags = opt->flags;
    ix->readonly = (opt->flags & TSF_INDEX_READONLY) != 0;
    ix->nometa = (opt->flags & TSF_INDEX_NO_BLOCK_META) != 0;
    tsf_status s = pm_open(&ix->pm, path, opt->durability, ix->readonly,
                           (opt->flags & TSF_INDEX_TRUNCATE) != 0, opt->alloc, err);
    if (s != TSF_OK) {
        tsf_free(opt->alloc, ix, sizeof *ix);
        return s;
    }
    ix->pm.persist_limit = opt->shadow_persist_limit;
    ix->pm.shadow_seed = opt->shadow_seed;
    int fresh = ix->pm.size < IX_REGION0 ? ix_all_zero(ix->pm.base, ix->pm.size)
                                         : ix_all_zero(ix->pm.base, IX_REGION0);
    if (fresh && !ix->readonly) {
        ix->mode = opt->mode;
        ix->dup = (opt->flags & TSF_INDEX_ALLOW_DUPLICATES) != 0;
        ix->leaf_eps = opt->leaf_eps ? opt->leaf_eps : (ix->mode == TSF_INDEX_SORTED ? 32 : 256);
        ix->inner_eps = opt->inner_eps ? opt->inner_eps : 256;
        ix->ovf_pct = opt->overflow_pct ? opt->overflow_pct : 25;
        s = pm_grow(&ix->pm, PM_PAGE, err);
        if (s == TSF_OK) {
            ix->alloc_end = IX_REGION0;
            s = ix_build(ix, NULL, NULL, 0, err);
        }
    } else {
        s = ix_recover(ix, err);
        if (s == TSF_OK && opt->overflow_pct) ix->ovf_pct = opt->overflow_pct;
        if (s == TSF_OK && ix->ovf_pct == 0) ix->ovf_pct = 25;
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
    ix_free_leaves(ix);
    pm_close(&ix->pm);
    tsf_free(ix->alloc, ix, sizeof *ix);
}
