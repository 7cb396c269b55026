/*
 * tsf_index.h - the PLTree-style learned index of tsfile-c (companion to tsf.h).
 *
 * An ordered map from uint64 keys to uint64 values kept in a memory-mapped file (or anonymous memory
 * when path is NULL). Internal nodes are flat, balanced and routed by integer linear models whose
 * ranges define their children exactly (no search inside internal nodes); leaves are arrays of 256-byte
 * blocks. Two leaf modes: SORTED (dense sorted leaves with a measured error bound, the default, for
 * sealed data) and DYNAMIC (model-placed unsorted blocks at 50 % fill, DRAM fingerprints, a per-leaf
 * overflow log and copy-on-write leaf rebuilds). See doc/index.md.
 *
 * Signed keys such as timestamps map order-preservingly with tsf_index_key_from_i64().
 * Thread safety: one writer and any number of readers may use one handle at the same time.
 *   Readers: tsf_index_get, tsf_index_lower_bound, tsf_index_floor, tsf_index_scan (optimistic: a
 *   lookup retries when the writer changed its leaf meanwhile; a scan sees each leaf as it was at one
 *   moment). Writer (one thread at a time): tsf_index_insert, tsf_index_delete, tsf_index_sync,
 *   tsf_index_compact, tsf_index_bulk_load. A scan visitor must not write to the index it scans.
 *   tsf_index_stats_get and tsf_index_check need the handle to themselves (no concurrent writer), as
 *   do tsf_index_open and tsf_index_close. Memory the writer replaces is freed only once no reader
 *   that started before can still hold it (the writer waits for such readers at the end of a call).
 */
#ifndef TSF_INDEX_H
#define TSF_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "tsf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsf_index tsf_index;

/** Leaf modes. */
typedef enum tsf_index_mode {
    TSF_INDEX_SORTED = 0,  /**< dense sorted leaves, bounded error; inserts go to the overflow log */
    TSF_INDEX_DYNAMIC = 1, /**< PLTree leaves: model-placed blocks, fingerprints, overflow log */
} tsf_index_mode;

/** Durability back-ends. */
typedef enum tsf_index_durability {
    TSF_INDEX_DUR_NONE = 0,   /**< no flushes (scratch and anonymous indexes) */
    TSF_INDEX_DUR_MSYNC = 1,  /**< page cache + msync(MS_SYNC) at persist points and group commit */
    TSF_INDEX_DUR_DAX = 2,    /**< MAP_SYNC mapping + cache-line flushes; TSF_ENOTSUP if unavailable */
    /* 3 is taken by a simulated-crash mode for tests (tsf_experimental.h) */
} tsf_index_durability;

enum {
    TSF_INDEX_ALLOW_DUPLICATES = 1u << 0, /**< insert never overwrites; equal keys coexist */
    TSF_INDEX_READONLY = 1u << 1,         /**< open an existing file for reading only */
    TSF_INDEX_TRUNCATE = 1u << 2,         /**< discard an existing file's contents */
    /* bits 3..5 are taken by switches for tests and benchmarks (tsf_experimental.h) */
};

struct tsf_index_experimental; /* tsf_experimental.h */

/** Options; initialise with tsf_index_options_init(). Ignored fields keep the file's values on reopen.
 *  struct_size follows the rule of tsf.h: any size from the first version (through `alloc`) up to
 *  sizeof(tsf_index_options) is accepted, missing fields take their defaults. */
typedef struct tsf_index_options {
    size_t struct_size;    /**< sizeof(tsf_index_options) */
    uint32_t mode;         /**< tsf_index_mode (new files only) */
    uint32_t durability;   /**< tsf_index_durability */
    uint32_t flags;        /**< TSF_INDEX_* flags */
    uint32_t leaf_eps;     /**< PLA error of the leaf partition (default 128 sorted, 256 dynamic) */
    uint32_t inner_eps;    /**< PLA error of the internal layout (default 256) */
    uint32_t overflow_pct; /**< dynamic: rebuild a leaf when overflow records exceed this % (default 25) */
    const tsf_allocator *alloc; /**< DRAM allocations (NULL = libc) */
    uint32_t path; /**< lookup kernels, a tsf_codec_path (TSF_PATH_AUTO: the best) */
    /** Settings outside the stable API (tsf_experimental.h); NULL = none. Read during tsf_index_open. */
    const struct tsf_index_experimental *experimental;
} tsf_index_options;

TSF_API void tsf_index_options_init(tsf_index_options *opt);

/**
 * Creates (if absent or TRUNCATE) or opens and recovers the index file at path; NULL path = anonymous
 * memory. Reopening reads the newest valid superblock; DRAM metadata is rebuilt lazily per leaf.
 * A malformed file gives TSF_ECORRUPT with the structure and byte offset. File space is reserved
 * (posix_fallocate) before the mapping uses it, so a full disk is TSF_EIO naming ENOSPC.
 */
TSF_API tsf_status tsf_index_open(tsf_index **out, const char *path, const tsf_index_options *opt,
                                  tsf_error *err);
/** Unmaps and frees. Does not sync. */
TSF_API void tsf_index_close(tsf_index *ix);

/**
 * Replaces the whole content with n pairs sorted by key (non-decreasing; equal keys need
 * TSF_INDEX_ALLOW_DUPLICATES). Durable when it returns (superblock flip).
 */
TSF_API tsf_status tsf_index_bulk_load(tsf_index *ix, const uint64_t *keys, const uint64_t *vals, size_t n,
                                       tsf_error *err);

/** Value of key (the newest one with duplicates); TSF_ENOTFOUND if absent. */
TSF_API tsf_status tsf_index_get(tsf_index *ix, uint64_t key, uint64_t *val, tsf_error *err);
/** First pair with key >= x; TSF_ENOTFOUND if none. */
TSF_API tsf_status tsf_index_lower_bound(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val,
                                         tsf_error *err);
/** Last pair with key <= x (time -> page); TSF_ENOTFOUND if none. */
TSF_API tsf_status tsf_index_floor(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err);

/** Upsert (or add a duplicate with TSF_INDEX_ALLOW_DUPLICATES). Durable after the next sync. */
TSF_API tsf_status tsf_index_insert(tsf_index *ix, uint64_t key, uint64_t val, tsf_error *err);
/** Deletes every pair with key (tombstone); TSF_ENOTFOUND if absent. */
TSF_API tsf_status tsf_index_delete(tsf_index *ix, uint64_t key, tsf_error *err);

/** Visitor of a scan: return nonzero to stop. */
typedef int (*tsf_index_visit)(uint64_t key, uint64_t val, void *arg);
/** Visits pairs with lo <= key <= hi in key order. */
TSF_API tsf_status tsf_index_scan(tsf_index *ix, uint64_t lo, uint64_t hi, tsf_index_visit fn, void *arg,
                                  tsf_error *err);

/** Group commit: every insert/delete before it survives a crash once it returns TSF_OK. */
TSF_API tsf_status tsf_index_sync(tsf_index *ix, tsf_error *err);
/** Merges every overflow log into rebuilt leaves and re-partitions (full rebuild); durable. */
TSF_API tsf_status tsf_index_compact(tsf_index *ix, tsf_error *err);

typedef struct tsf_index_stats {
    uint64_t records;          /**< stored records (= live pairs after a compact; counts superseded
                                    versions and tombstones until then) */
    uint32_t height;           /**< internal levels */
    uint32_t mode;             /**< tsf_index_mode */
    uint64_t leaves;           /**< leaves */
    uint64_t internal_nodes;   /**< internal nodes */
    uint64_t file_bytes;       /**< size of the index file */
    uint64_t dram_bytes;       /**< DRAM metadata: leaf directory, block fingerprints/filters, chunk lists */
    uint64_t cache_bytes;      /**< DRAM of cached merged leaf views (ordered reads of written leaves) */
    uint64_t overflow_records; /**< records in all overflow logs */
    uint32_t max_overflow_depth; /**< longest overflow chain (chunks) */
    uint64_t epoch;              /**< epoch of the current superblock */
    uint64_t leaf_rebuilds;      /**< copy-on-write leaf rebuilds done by this handle */
    uint64_t persist_ops;        /**< persist operations (flushes of written ranges) issued by this handle */
} tsf_index_stats;

/** Fills st; builds the DRAM metadata of every leaf first (so dram_bytes is the steady state). */
TSF_API tsf_status tsf_index_stats_get(tsf_index *ix, tsf_index_stats *st);

/** Full invariant check (routing exactness, ranges, ordering, counts, metadata): TSF_ECORRUPT naming the
 *  first violation. Walks the whole index. */
TSF_API tsf_status tsf_index_check(tsf_index *ix, tsf_error *err);

/**
 * Per-thread reader handle: the same lookups as tsf_index_get / lower_bound / floor, for one thread at a
 * time, without the atomic read-modify-writes on shared counters that the plain calls pay (each handle
 * has its own cache line; where membarrier(2) is available a lookup needs no fence either, the writer
 * issues it). At most 64 per index (TSF_ESTATE beyond); close them before tsf_index_close.
 */
typedef struct tsf_index_reader tsf_index_reader;
TSF_API tsf_status tsf_index_reader_open(tsf_index *ix, tsf_index_reader **out, tsf_error *err);
TSF_API void tsf_index_reader_close(tsf_index_reader *rd);
TSF_API tsf_status tsf_index_reader_get(tsf_index_reader *rd, uint64_t key, uint64_t *val, tsf_error *err);
/**
 * Batched point lookups (tsf_index_get_many / tsf_index_reader_get_many): for each i, found[i] = 1 and
 * vals[i] = the value of keys[i] when present, found[i] = 0 (vals[i] untouched) when not. Same answers as
 * n calls of the single get; the keys' memory accesses overlap (groups of 16). TSF_OK, or the first error.
 */
TSF_API tsf_status tsf_index_reader_get_many(tsf_index_reader *rd, const uint64_t *keys, size_t n,
                                             uint64_t *vals, uint8_t *found, tsf_error *err);
TSF_API tsf_status tsf_index_get_many(tsf_index *ix, const uint64_t *keys, size_t n, uint64_t *vals,
                                      uint8_t *found, tsf_error *err);
TSF_API tsf_status tsf_index_reader_lower_bound(tsf_index_reader *rd, uint64_t x, uint64_t *key,
                                                uint64_t *val, tsf_error *err);
TSF_API tsf_status tsf_index_reader_floor(tsf_index_reader *rd, uint64_t x, uint64_t *key, uint64_t *val,
                                          tsf_error *err);

/** Order-preserving map of signed keys (timestamps) to the index's unsigned keys, and back. */
static inline uint64_t tsf_index_key_from_i64(int64_t t)
{
    return (uint64_t)t ^ (UINT64_C(1) << 63);
}
static inline int64_t tsf_index_key_to_i64(uint64_t k)
{
    return (int64_t)(k ^ (UINT64_C(1) << 63));
}

#ifdef __cplusplus
}
#endif

#endif
