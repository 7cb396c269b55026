/*
 * leaf_meta.c - the DRAM state of leaves: the leaf directory, the block-metadata arena, block metadata
 * and chunk lists built lazily on a leaf's first touch (validating what they read), and dropping or
 * freeing that state when a leaf is rebuilt or the tree replaced.
 */
#include <string.h>
#include <sys/mman.h>

#include "index_internal.h"

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

void tsf_lix_meta_arena(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n, uint8_t **raw, uint64_t *bytes,
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

void tsf_lix_view_free(tsf_index *ix, tsf_lix_view *v)
{
    if (!v) return;
    tsf_free(ix->alloc, v->k, v->cap * 8);
    tsf_free(ix->alloc, v->v, v->cap * 8);
    tsf_free(ix->alloc, v, sizeof *v);
}

/* Frees a leaf's DRAM state for good (no reader can reach it any more). */
static void tsf_lix_leaf_free(tsf_index *ix, tsf_lix_leaf *L)
{
    tsf_lix_leaf_drop_mode(ix, L, 0);
    if (!L->w || L->w == &ix->w0) return;
    tsf_lix_view_free(ix, L->w->view);
    tsf_free(ix->alloc, L->w, sizeof *L->w);
    L->w = NULL;
}

/*
 * The leaf directory, zeroed, each 64-byte entry on its own cache line (an allocator's 16-byte alignment
 * would split every entry a lookup reads over two lines); the allocation's start is kept in the word before
 * it.
 */
tsf_lix_leaf *tsf_lix_leaves_alloc(const tsf_allocator *A, uint64_t n)
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

void tsf_lix_free_leaves(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n)
{
    if (!leaves) return;
    for (uint64_t i = 0; i < n; i++) tsf_lix_leaf_free(ix, &leaves[i]);
    tsf_lix_leaves_release(ix->alloc, leaves, n);
}

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
