/*
 * index_internal.h - the handle of the learned index and the helpers shared by its source files
 * (index.c: build, open, recovery, lookups; mutate.c: inserts, deletes, overflow log, leaf rebuilds;
 * verify.c: invariant check and stats).
 */
#ifndef TSF_INDEX_INTERNAL_H
#define TSF_INDEX_INTERNAL_H

#include "index/layout.h"
#include "index/pmem.h"

/* DRAM metadata of one overflow chunk: its offset and one fingerprint per record. */
typedef struct ix_chunk {
    uint64_t off;
    uint64_t kmin, kmax; /* key range of its records: most chunks are skipped without their fps */
    uint8_t fp[IX_CHUNK_SLOTS + 1];
} ix_chunk;

/* Overflow and view state of a leaf; leaves never written or viewed share the handle's zeroed w0. */
typedef struct ix_leafw {
    uint32_t nchunks, cap_chunks;
    ix_chunk *chunks;        /* oldest first; the newest is chunks[nchunks-1] */
    uint64_t ovf_records;
    uint64_t ovf_built;      /* records in the log when the metadata was built (rebuild trigger base) */
    uint32_t chunks_built;   /* chunks then */
    uint8_t view_ok;         /* vk/vv hold the merged sorted live pairs */
    uint64_t *vk, *vv, vn, vcap;
} ix_leafw;

/*
 * DRAM directory entry of one leaf (rebuilt at open; block metadata built lazily on first touch). The
 * fields a point lookup reads fill the first cache line; 80 bytes in all (DRAM budget: <= 1 B/key).
 */
typedef struct ix_leaf {
    uint64_t off;            /* leaf header in the file */
    uint64_t origin, mul;    /* leaf model */
    uint64_t nbase;          /* sorted mode: keys in the dense sorted base */
    uint8_t *meta;           /* block metadata, IX_META_SORTED / IX_META_DYN bytes per block */
    ix_leafw *w;             /* overflow log and view: &ix->w0 (all zero, read-only) until written */
    uint32_t nblocks, err_lo, err_hi;
    uint8_t ready;           /* block metadata and chunk list built */
    uint8_t shift;           /* sorted: separator = (first key of block - origin) >> shift */
    uint64_t lo, hi;         /* routing range (fixed by the parent's model) */
} ix_leaf;

/*
 * Block metadata in DRAM. Sorted leaves: 12 B per block, a 32-bit separator (the block's first key
 * relative to the leaf origin, shifted right by L->shift so the leaf's span fits; it picks the block
 * holding a key among the model's error window without touching the file) and a 64-bit bloom word (two
 * bits per key; absent keys skip the block). Dynamic leaves: 16 B per block, 15 one-byte fingerprints
 * and the count.
 */
#define IX_META_SORTED 12u
#define IX_META_DYN 16u

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
    ix_leaf *leaves;
    ix_leafw w0; /* the shared empty overflow/view state, never written */
    uint64_t rebuilds;
};

/* 64x64 -> high 64 bits. */
static inline uint64_t ix_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}
/* Integer model: position of key in [0, f) for origin/mul (monotone in key). */
static inline uint64_t ix_model(uint64_t key, uint64_t origin, uint64_t mul, uint64_t f)
{
    uint64_t d = key > origin ? key - origin : 0;
    uint64_t i = ix_mulhi(d, mul);
    return i < f ? i : f - 1;
}
/* mul that spreads [first, first+span] over f positions. */
uint64_t ix_mul_for(uint64_t f, uint64_t span);
/* One-byte fingerprint and bloom bit of a key. */
static inline uint64_t ix_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    return k ^ (k >> 33);
}
static inline uint8_t ix_fp(uint64_t k)
{
    return (uint8_t)(ix_hash(k) >> 56);
}
/* The two bloom bits of a key in a sorted block's 64-bit word. */
static inline uint64_t ix_bloom_bits(uint64_t k)
{
    uint64_t h = ix_hash(k);
    return (UINT64_C(1) << (h & 63)) | (UINT64_C(1) << (h >> 6 & 63));
}

static inline uint8_t *ix_at(const tsf_index *ix, uint64_t off)
{
    return ix->pm.base + off;
}
static inline uint8_t *ix_block(const tsf_index *ix, const ix_leaf *L, uint64_t b)
{
    return ix->pm.base + L->off + IX_BLOCK + b * IX_BLOCK;
}

static inline uint64_t ix_meta_stride(const tsf_index *ix)
{
    return ix->mode == TSF_INDEX_SORTED ? IX_META_SORTED : IX_META_DYN;
}

/* Routing: leaf id of key (exact, no search). */
uint64_t ix_route(const tsf_index *ix, uint64_t key);
/* Builds block metadata and the chunk list of a leaf, validating them (TSF_ECORRUPT on damage). */
tsf_status ix_leaf_ready(tsf_index *ix, ix_leaf *L, tsf_error *err);
/* Appends DRAM metadata of the chunk at off (newest). */
tsf_status ix_chunk_push(tsf_index *ix, ix_leaf *L, uint64_t off, tsf_error *err);
/* Gives the leaf its own overflow/view state (before writing it). */
tsf_status ix_leaf_own(tsf_index *ix, ix_leaf *L, tsf_error *err);
/* Drops the DRAM metadata of a leaf (after a rebuild or at close). */
void ix_leaf_drop(tsf_index *ix, ix_leaf *L);
/* Loads the leaf fields from its header at off (validated at open or after writing). */
void ix_leaf_load(tsf_index *ix, ix_leaf *L, uint64_t off);
/* Merged, sorted live pairs of a leaf (cached until the next write to the leaf). */
tsf_status ix_leaf_view(tsf_index *ix, ix_leaf *L, tsf_error *err);
/* Bytes a leaf with these sorted pairs takes, and writing it at off. */
uint64_t ix_leaf_bytes(const tsf_index *ix, const uint64_t *keys, uint64_t n);
void ix_leaf_write(tsf_index *ix, uint64_t off, uint64_t id, uint64_t lo, uint64_t hi, const uint64_t *keys,
                   const uint64_t *vals, uint64_t n);
/* Allocates bytes (256-aligned) at the end of the file. */
tsf_status ix_alloc(tsf_index *ix, uint64_t bytes, uint64_t *off, tsf_error *err);
/* Builds a whole new index from sorted pairs and commits it (bulk load, compaction). */
tsf_status ix_build(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, uint64_t n, tsf_error *err);
/* Writes and persists the next superblock. */
tsf_status ix_commit(tsf_index *ix, tsf_error *err);
/* Walks every internal node checking structure and exact child ranges; fills leaf ranges if asked. */
tsf_status ix_walk_nodes(tsf_index *ix, int fill_leaves, tsf_error *err);

#endif
