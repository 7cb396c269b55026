/*
 * index_internal.h - the handle of the learned index and the helpers shared by its source files:
 * route.c (node models, child ranges), epoch.c (readers, reclamation, leaf lock), leaf.c (leaves in the
 * file), leaf_meta.c (their lazy DRAM state), lookup.c (point lookups), scan.c (ordered access),
 * build.c (bulk build), seal.c (sealed fast path), open.c (superblocks, node walk, open/close),
 * mutate.c (inserts, deletes, overflow log, leaf rebuilds), verify.c (invariant check and stats).
 * The readers' inline hot path is in lix_read.h and lix_search.h.
 */
#ifndef TSF_INDEX_INTERNAL_H
#define TSF_INDEX_INTERNAL_H

#include "layout.h"
#include "pmem.h"

/* DRAM metadata of one overflow chunk: its offset and one fingerprint per record. */
typedef struct tsf_lix_chunk {
    uint64_t off;
    uint64_t kmin, kmax; /* key range of its records: most chunks are skipped without their fps */
    uint8_t fp[IX_CHUNK_SLOTS + 1];
} tsf_lix_chunk;

/* Merged, sorted live pairs of a leaf for ordered reads; immutable once published (readers share it). */
typedef struct tsf_lix_view {
    uint64_t n, cap;
    uint64_t *k, *v;
} tsf_lix_view;

/*
 * Overflow and view state of a leaf; leaves never written or viewed share the handle's zeroed w0.
 * Readers load nchunks/chunks (acquire) and chunk entries with atomic loads; the writer changes them
 * under the leaf lock with an odd leaf version.
 */
typedef struct tsf_lix_leafw {
    uint32_t nchunks, cap_chunks;
    tsf_lix_chunk *chunks; /* oldest first; the newest is chunks[nchunks-1]; replaced, never realloc'd */
    uint64_t ovf_records;
    uint64_t ovf_built;    /* records in the log when the metadata was built (rebuild trigger base) */
    uint32_t chunks_built; /* chunks then */
    tsf_lix_view *view;         /* cached merged view or NULL (atomic pointer) */
} tsf_lix_leafw;

/*
 * DRAM directory entry of one leaf (rebuilt at open; block metadata built lazily on first touch). The
 * fields a point lookup reads, 64 bytes in all (DRAM budget: <= 1 B/key).
 * Concurrency: every change of the first line happens under `lock` with `ver` odd (seqlock); readers
 * copy it with atomic loads (tsf_lix_leaf_snap) and re-check `ver` after using the copy.
 */
typedef struct tsf_lix_leaf {
    uint64_t off;         /* leaf header in the file */
    uint64_t origin, mul; /* leaf model */
    uint64_t nbase;       /* sorted mode: keys in the dense sorted base */
    uint8_t *meta;        /* block metadata, IX_META_SORTED / IX_META_DYN bytes per block */
    tsf_lix_leafw *w;          /* overflow log and view: &ix->w0 (all zero, read-only) until written */
    uint32_t nblocks;
    uint16_t err_lo, err_hi; /* measured model error; IX_ERR_WIDE = larger (search the whole base) */
    uint32_t ver;            /* seqlock version: odd while the leaf changes */
    uint8_t ready;           /* block metadata and chunk list built */
    uint8_t shift;           /* sorted: separator = (first key of block - origin) >> shift */
    uint8_t lock;            /* spin lock of writers and metadata/view builders */
    uint8_t rsh;             /* sorted: 0 = no radix table, else bucket = separator >> (rsh - 1) */
} tsf_lix_leaf; /* the routing range [lo, hi] is in the leaf header (validated at open): tsf_lix_leaf_lo/hi */

#define IX_ERR_WIDE 0xffffu

/* Relaxed atomic access to words that a reader may load while the writer stores them. */
#define IX_LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define IX_ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define IX_LDA(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define IX_STR(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/*
 * Block metadata in DRAM. Sorted leaves: 12 B per block in arrays: the 32-bit separators (the block's
 * first key relative to the leaf origin, shifted right by L->shift so the leaf's span fits; they pick the
 * block holding a key among the model's error window without touching the file), then the 64-bit bloom
 * words (two bits per key; absent keys skip the block), then, for leaves of more than 32 blocks, upper
 * levels of separators (level l holds the separator of every 16^l-th block, until a level has <= 32
 * entries), so that a wide error window costs one 16-entry line per level instead of a binary search
 * (0.27 B per block). After the upper levels, leaves of 65..65535 blocks whose model window spans more than
 * two lines have a radix table (1 B per block, tsf_lix_radix_on): entry j (16 bits) is the last block
 * whose separator is below j << (L->rsh - 1) (0 if none), so the block of a key with separator q lies between
 * entries q >> (rsh - 1) and the next: where the leaf model is off (osm) that narrows a window of hundreds of
 * blocks to a few (tsf_lix_radix_window). The metadata of a leaf of >= 16 blocks starts 64-byte aligned (a
 * 16-entry group of separators is then one cache line); kernels read whole groups, so every metadata
 * allocation has IX_META_SLACK readable bytes after its end. Dynamic leaves: 16 B per block, 15 one-byte
 * fingerprints and the count.
 */
#define IX_META_SORTED 12u
#define IX_META_DYN 16u
#define IX_SEP_FAN 16u    /* separators per upper-level entry (one 64-byte line of 32-bit separators) */
#define IX_META_SLACK 64u /* readable bytes after any metadata (whole-group loads) */

static inline uint64_t tsf_lix_align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}
static inline uint64_t tsf_lix_align(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}
/* Byte offset of the bloom words in a sorted leaf's metadata of nb blocks. */
static inline uint64_t tsf_lix_meta_bloom_off(uint64_t nb)
{
    return tsf_lix_align8(nb * 4);
}
/* Entries of the radix table of a sorted leaf of nb blocks (the last one = nb - 1); 0 = no table. */
#define IX_RADIX_MAX 65535u
static inline uint64_t tsf_lix_radix_n(uint64_t nb)
{
    return nb > 4 * IX_SEP_FAN && nb <= IX_RADIX_MAX ? nb / 2 + 2 : 0;
}
/* Offset of separator level l >= 1 (entries: ceil(nb / 16^l)); level 0 is at offset 0. */
static inline uint64_t tsf_lix_meta_level_off(uint64_t nb, uint32_t l)
{
    uint64_t off = tsf_lix_meta_bloom_off(nb) + nb * 8, c = nb;
    for (uint32_t i = 1; i < l; i++) {
        c = (c + IX_SEP_FAN - 1) / IX_SEP_FAN;
        off += tsf_lix_align8(c * 4);
    }
    return off;
}
/* Levels above level 0 of a sorted leaf with nb blocks (until one has <= 32 entries). */
static inline uint32_t tsf_lix_meta_levels(uint64_t nb)
{
    uint32_t l = 0;
    for (uint64_t c = nb; c > 2 * IX_SEP_FAN; c = (c + IX_SEP_FAN - 1) / IX_SEP_FAN) l++;
    return l;
}
/* DRAM metadata bytes of a leaf of nb blocks (without the slack and the radix table). */
static inline uint64_t tsf_lix_meta_bytes(uint32_t mode, uint64_t nb)
{
    if (mode != 0 /* TSF_INDEX_SORTED */) return nb * IX_META_DYN;
    return tsf_lix_meta_level_off(nb, tsf_lix_meta_levels(nb) + 1);
}
/* Byte offset of the radix table of a sorted leaf (16-bit entries, 8-byte aligned): after the levels. */
static inline uint64_t tsf_lix_meta_radix_off(uint64_t nb)
{
    return tsf_lix_meta_bytes(0, nb);
}
/* tsf_lix_meta_radix_off without the level loops, for the leaves that can have a radix table (nb <= 65535: at
   most three upper levels, of ceil(nb / 16^l) entries while the level below has more than 32). */
static inline uint64_t tsf_lix_radix_off_fast(uint64_t nb)
{
    uint64_t off = tsf_lix_meta_bloom_off(nb) + nb * 8;
    off += nb > 2 * IX_SEP_FAN ? tsf_lix_align8((nb + 15) / 16 * 4) : 0;
    off += nb > 2 * IX_SEP_FAN * 16 ? tsf_lix_align8((nb + 255) / 256 * 4) : 0;
    off += nb > 2 * IX_SEP_FAN * 256 ? tsf_lix_align8((nb + 4095) / 4096 * 4) : 0;
    return off;
}
/* Whether a sorted leaf has a radix table: 65..65535 blocks and a model window over two lines wide. */
static inline int tsf_lix_radix_on(const tsf_lix_leaf *L)
{
    return tsf_lix_radix_n(L->nblocks) && (L->err_lo == IX_ERR_WIDE || L->err_hi == IX_ERR_WIDE ||
                                      ((uint64_t)L->err_lo + L->err_hi) / IX_SLOTS + 2 > 2 * IX_SEP_FAN);
}
/* Separators of level l (32-bit words; entry i of level l = separator of block i * 16^l). */
static inline const uint32_t *tsf_lix_seps(const uint8_t *meta, uint64_t nb, uint32_t l)
{
    return (const uint32_t *)(const void *)(meta + (l ? tsf_lix_meta_level_off(nb, l) : 0));
}

/* Separator of key k in a sorted leaf: monotone in k, (k - origin) >> shift saturated to 32 bits. */
static inline uint32_t tsf_lix_sep(uint64_t origin, uint32_t shift, uint64_t k)
{
    uint64_t q = (k > origin ? k - origin : 0) >> shift;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* Reader registration slots (one cache line each; a thread picks one by its stack address). */
#define IX_RSLOTS 32u
typedef struct tsf_lix_rslot {
    uint64_t n[2]; /* readers inside, by epoch parity */
    uint8_t pad[48];
} tsf_lix_rslot;

/*
 * Slot of a per-thread reader handle (tsf_index_reader), one cache line, written only by its owner:
 * state = (epoch << 1) | 1 while a lookup runs, 0 otherwise. No atomic read-modify-write per lookup;
 * with membarrier (ix->asym) not even a fence: the writer's synchronize issues the barrier for them.
 */
#define IX_READERS 64u
typedef struct tsf_lix_rdslot {
    uint64_t state;
    uint32_t claimed; /* taken by a reader handle (CAS at tsf_index_reader_open) */
    uint8_t pad[52];
} tsf_lix_rdslot;

/* Memory whose free waits until no reader that could still see it is inside (tsf_lix_reclaim). */
typedef struct tsf_lix_retired {
    void *p;
    uint64_t bytes;
} tsf_lix_retired;

struct tsf_index {
    pmem pm;
    const tsf_allocator *alloc;
    uint32_t mode, flags, leaf_eps, inner_eps, ovf_pct;
    int dup, nometa, readonly;
    uint64_t epoch;
    uint32_t height, root_fanout;
    uint64_t root_off, root_origin, root_mul;
    uint64_t leaf_table, n_leaves, n_nodes;
    uint64_t region_start, region_end, alloc_end;
    tsf_lix_leaf *leaves;
    /* Block metadata arena of the current tree (one allocation, 2 MiB aligned, MADV_HUGEPAGE): leaves
       loaded by a build or at open get their slot here (filled lazily); rebuilt leaves allocate their own. */
    uint8_t *marena, *marena_lo;
    uint64_t marena_bytes, marena_len;
    tsf_lix_leafw w0; /* the shared empty overflow/view state, never written */
    uint64_t rebuilds;
    /* Concurrency (one writer, many readers): gen is the seqlock of the tree fields above (root_*,
       leaves, n_leaves), rd/tsf_rd_epoch the reader registration, ret the memory waiting for reclamation. */
    uint64_t gen;
    uint64_t tsf_rd_epoch;
    tsf_lix_retired *ret;
    uint64_t nret, capret;
    tsf_lix_rdslot *rslots; /* IX_READERS slots, 64-byte aligned inside rslots_raw */
    void *rslots_raw;
    int asym; /* membarrier registered: reader handles publish their state without a fence */
    int simd; /* lookup kernels: 0 portable, 1 AVX2, 2 AVX-512 (resolved at open: tsf_index_options.path) */
    /* Sealed fast path of point gets: an immutable copy of the tree fields, published (release) by a build
       or open while no write has happened since and cleared by the writer before its first change (then
       retired); NULL when the index was written or the path is off (fast_on = 0: TSF_INDEX_NO_FAST_PATH,
       or a mode the fast path does not cover). */
    struct tsf_lix_tree *fast;
    int fast_on;
    tsf_lix_rslot rd[IX_RSLOTS];
};

/* Internal node in the sealed fast path's routing table: its model and the index of its first child (the
   next level's entry, or at the last level the first leaf id: tsf_lix_build numbers children consecutively). */
typedef struct tsf_lix_rnode {
    uint64_t origin, mul;
    uint32_t f, pad;
    uint64_t first;
} tsf_lix_rnode;

/* A consistent copy of the tree fields (readers; the sealed fast path's immutable copy, which also carries
   the routing table rt of rt_h levels, or NULL when the tree has no such form: then it routes in the file).
 */
typedef struct tsf_lix_tree {
    uint64_t root_off, root_origin, root_mul, gen;
    uint32_t root_fanout;
    tsf_lix_leaf *leaves;
    uint64_t n_leaves;
    const tsf_lix_rnode *rt;
    uint32_t rt_h;
    uint64_t bytes; /* of the sealed copy's allocation (with rt) */
} tsf_lix_tree;

/* 64x64 -> high 64 bits. */
static inline uint64_t tsf_lix_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}
/* Integer model: position of key in [0, f) for origin/mul (monotone in key). */
static inline uint64_t tsf_lix_model(uint64_t key, uint64_t origin, uint64_t mul, uint64_t f)
{
    uint64_t d = key > origin ? key - origin : 0;
    uint64_t i = tsf_lix_mulhi(d, mul);
    return i < f ? i : f - 1;
}
/* Routing in the sealed copy's table (tsf_lix_tree.rt): h levels of models, no node slot read; the leaf id. */
static inline uint64_t tsf_lix_rt_route(const tsf_lix_rnode *rt, uint32_t h, uint64_t key)
{
    uint64_t i = 0;
    for (uint32_t l = 0; l < h; l++) {
        const tsf_lix_rnode *nd = &rt[i];
        i = nd->first + tsf_lix_model(key, nd->origin, nd->mul, nd->f);
    }
    return i;
}
/* mul that spreads [first, first+span] over f positions. */
uint64_t tsf_lix_mul_for(uint64_t f, uint64_t span);
/* Key range [*clo, *chi] of slot i of a node (origin, mul, f) responsible for [lo, hi] (empty: 1, 0). */
void tsf_lix_child_range(uint64_t origin, uint64_t mul, uint64_t f, uint64_t lo, uint64_t hi, uint64_t i,
                         uint64_t *clo, uint64_t *chi);
/* CRC-32 of leaf headers and superblocks. */
uint32_t tsf_lix_crc(const uint8_t *p, size_t n);
/* One-byte fingerprint and bloom bit of a key. */
static inline uint64_t tsf_lix_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    return k ^ (k >> 33);
}
static inline uint8_t tsf_lix_fp(uint64_t k)
{
    return (uint8_t)(tsf_lix_hash(k) >> 56);
}
/* The two bloom bits of a key in a sorted block's 64-bit word. */
static inline uint64_t tsf_lix_bloom_bits(uint64_t k)
{
    uint64_t h = tsf_lix_hash(k);
    return (UINT64_C(1) << (h & 63)) | (UINT64_C(1) << (h >> 6 & 63));
}

static inline uint8_t *tsf_lix_at(const tsf_index *ix, uint64_t off)
{
    return ix->pm.base + off;
}
static inline uint8_t *tsf_lix_block(const tsf_index *ix, const tsf_lix_leaf *L, uint64_t b)
{
    return ix->pm.base + L->off + IX_BLOCK + b * IX_BLOCK;
}

static inline uint64_t tsf_lix_leaf_meta_bytes(const tsf_index *ix, const tsf_lix_leaf *L)
{
    int radix = ix->mode == 0 /* TSF_INDEX_SORTED */ && tsf_lix_radix_on(L);
    uint64_t rb = radix ? tsf_lix_align8(tsf_lix_radix_n(L->nblocks) * 2) : 0;
    return tsf_lix_meta_bytes(ix->mode, L->nblocks) + rb;
}

/* Routing range of a leaf, from its header. */
static inline uint64_t tsf_lix_leaf_lo(const tsf_index *ix, const tsf_lix_leaf *L)
{
    return ld64(ix->pm.base + L->off + LF_O_LO);
}
static inline uint64_t tsf_lix_leaf_hi(const tsf_index *ix, const tsf_lix_leaf *L)
{
    return ld64(ix->pm.base + L->off + LF_O_HI);
}

/* Routing: leaf id of key (exact, no search) in the handle's tree (writer; readers route in their copy). */
uint64_t tsf_lix_route(const tsf_index *ix, uint64_t key);

static inline void tsf_lix_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Leaf lock (writers, metadata and view builders) and the seqlock version around changes. */
void tsf_lix_leaf_lock(tsf_lix_leaf *L);
static inline void tsf_lix_leaf_unlock(tsf_lix_leaf *L)
{
    __atomic_store_n(&L->lock, 0, __ATOMIC_RELEASE);
}
static inline void tsf_lix_ver_begin(tsf_lix_leaf *L)
{
    __atomic_store_n(&L->ver, L->ver + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}
static inline void tsf_lix_ver_end(tsf_lix_leaf *L)
{
    __atomic_store_n(&L->ver, L->ver + 1, __ATOMIC_RELEASE);
}
/* (Reader side, lix_read.h: tsf_lix_leaf_snap copies a leaf entry consistently, tsf_lix_tree_snap the tree fields.) */
static inline int tsf_lix_leaf_valid(const tsf_lix_leaf *L, uint32_t v)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&L->ver, __ATOMIC_RELAXED) == v;
}
/* After a build or open: publishes the sealed fast path's immutable tree copy (if on and the mode fits);
   the writer, before its first change of the tree or a leaf, ends it (ix->fast). */
void tsf_lix_seal(tsf_index *ix);
void tsf_lix_unseal(tsf_index *ix);
/* Whether the tree fields are unchanged since a reader's copy of generation gen (tsf_lix_tree_snap). */
static inline int tsf_lix_tree_valid(const tsf_index *ix, uint64_t gen)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&ix->gen, __ATOMIC_RELAXED) == gen;
}
/* Registers the process for expedited membarrier (1: reader handles then publish without a fence). */
int tsf_lix_asym_register(void);
/* Waits until every reader that registered before now has left. */
void tsf_lix_synchronize(tsf_index *ix);
/* Reclamation of retired memory by the writer (reader registration: lix_read.h). */
void tsf_lix_retire(tsf_index *ix, void *p, uint64_t bytes);
void tsf_lix_reclaim(tsf_index *ix);
void tsf_lix_view_retire(tsf_index *ix, tsf_lix_view *v);
/* Frees a view no reader can reach. */
void tsf_lix_view_free(tsf_index *ix, tsf_lix_view *v);
/* Builds block metadata and the chunk list of a leaf, validating them (TSF_ECORRUPT on damage). */
tsf_status tsf_lix_leaf_ready(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err);
/* Appends DRAM metadata of the chunk at off (newest). */
tsf_status tsf_lix_chunk_push(tsf_index *ix, tsf_lix_leaf *L, uint64_t off, tsf_error *err);
/* Gives the leaf its own overflow/view state (before writing it). */
tsf_status tsf_lix_leaf_own(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err);
/* Drops the DRAM metadata of a leaf (after a rebuild or at close). */
void tsf_lix_leaf_drop(tsf_index *ix, tsf_lix_leaf *L);
/* Validates the header of leaf id at off against the range [lo, hi] routing gives it. */
tsf_status tsf_lix_leaf_check_header(tsf_index *ix, uint64_t id, uint64_t off, uint64_t lo, uint64_t hi,
                                     tsf_error *err);
/* The leaf directory of n entries (zeroed, 64-byte aligned entries), and freeing it with the leaves'
   DRAM state. */
tsf_lix_leaf *tsf_lix_leaves_alloc(const tsf_allocator *A, uint64_t n);
void tsf_lix_free_leaves(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n);
/* Block-metadata arena of a new tree: gives each leaf its slot; all outputs 0 when off or out of memory. */
void tsf_lix_meta_arena(tsf_index *ix, tsf_lix_leaf *leaves, uint64_t n, uint8_t **raw, uint64_t *bytes,
                        uint8_t **lo, uint64_t *len);
/* Loads the leaf fields from its header at off (validated at open or after writing). */
void tsf_lix_leaf_load(tsf_index *ix, tsf_lix_leaf *L, uint64_t off);
/* Same as tsf_lix_leaf_ready with the leaf lock held. */
tsf_status tsf_lix_leaf_ready_locked(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err);
/* Merged, sorted live pairs of a leaf (cached until the next write to the leaf); leaf lock held. */
tsf_status tsf_lix_leaf_view_locked(tsf_index *ix, tsf_lix_leaf *L, const tsf_lix_view **out, tsf_error *err);
/* Bytes a leaf with these sorted pairs takes, and writing it at off. */
uint64_t tsf_lix_leaf_bytes(const tsf_index *ix, const uint64_t *keys, uint64_t n);
void tsf_lix_leaf_write(tsf_index *ix, uint64_t off, uint64_t id, uint64_t lo, uint64_t hi, const uint64_t *keys,
                   const uint64_t *vals, uint64_t n);
/* Allocates bytes (256-aligned) at the end of the file. */
tsf_status tsf_lix_alloc(tsf_index *ix, uint64_t bytes, uint64_t *off, tsf_error *err);
/* Builds a whole new index from sorted pairs and commits it (bulk load, compaction). */
tsf_status tsf_lix_build(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, uint64_t n, tsf_error *err);
/* Writes and persists the next superblock. */
tsf_status tsf_lix_commit(tsf_index *ix, tsf_error *err);
/* Walks every internal node checking structure and exact child ranges; stores the leaf ranges in rng
   (2 words per leaf) when given, else compares them with the leaf headers. */
tsf_status tsf_lix_walk_nodes(tsf_index *ix, uint64_t *rng, tsf_error *err);

#endif
