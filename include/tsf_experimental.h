/*
 * tsf_experimental.h - settings of tsfile-c outside its stable API.
 *
 * What is declared here exists for tests, benchmarks and comparisons of implementation choices:
 * switches that turn an optimisation off to measure or cross-check it, and hooks that simulate
 * failures (a crash, a full disk). Nothing here is covered by the compatibility promise of tsf.h and
 * tsf_index.h: names, values and layouts may change in any release, so a program that uses them must
 * be compiled against the headers of the library it runs with.
 *
 * The stable option structs reach these settings through a member `experimental`, a pointer to the
 * matching struct below (NULL = none), read only during the call the options are passed to. A
 * zero-filled struct means the defaults, as NULL does.
 */
#ifndef TSF_EXPERIMENTAL_H
#define TSF_EXPERIMENTAL_H

#include <stdint.h>

#include "tsf.h"
#include "tsf_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- codecs (tsf_codec_options.experimental) ---------------------------------------------- */

struct tsf_codec_experimental {
    /* Non-temporal (cache-bypassing) stores in TS_2DIFF INT32 decoding on the AVX-512 path:
     * > 0 = on; otherwise off (default). The decoded values are the same either way. */
    int32_t nt_stores;
};

/* ---- queries (tsf_query_options.experimental) --------------------------------------------- */

/** How a TS_2DIFF time block's upper bound is taken when a query skips blocks inside a page.
 *  EXACT (default) uses the next block's first value (tsf_ts2diff_block.bound); CONSERVATIVE uses
 *  the bound computable from the block header alone (tsf_ts2diff_block.bound_conservative). Both
 *  return the same rows; CONSERVATIVE may decode more blocks. */
enum { TSF_BLOCK_BOUND_EXACT = 0, TSF_BLOCK_BOUND_CONSERVATIVE = 1 };

struct tsf_query_experimental {
    int block_bound;     /* TSF_BLOCK_BOUND_EXACT (0) or TSF_BLOCK_BOUND_CONSERVATIVE; else TSF_EINVAL */
    int no_filter_prune; /* 1: chunks, pages and table devices are not skipped by what statistics or tags
                          * show about `where`: every row is read and tested (the same rows); 0 (default):
                          * they are */
};

/* ---- learned index (tsf_index_options) ---------------------------------------------------- */

/** Durability for crash tests (tsf_index_options.durability): written pages stay in a private
 *  shadow until a persist point copies them to the file; tsf_index_close without a sync then loses
 *  them, as a power cut would. */
#define TSF_INDEX_DUR_SHADOW 3u

/** Flags (tsf_index_options.flags) that turn parts of the index off, to measure them. */
enum {
    TSF_INDEX_NO_BLOCK_META = 1u << 3, /**< no DRAM fingerprints/filters per block: every block is read */
    TSF_INDEX_LOCAL_SEARCH = 1u << 4,  /**< internal nodes route by a binary search over their children's
                                            first keys instead of their linear models */
    TSF_INDEX_NO_FAST_PATH = 1u << 5,  /**< gets always take the full protocol, not the sealed-index
                                            fast path */
};

struct tsf_index_experimental {
    uint64_t shadow_seed;          /* TSF_INDEX_DUR_SHADOW: nonzero = at close each unsynced dirty page
                                    * survives with probability 1/2 (seeded), as a partial writeback */
    uint64_t shadow_persist_limit; /* TSF_INDEX_DUR_SHADOW: nonzero = persist operations after this many
                                    * are dropped (a crash at that point) */
    uint64_t grow_limit;           /* nonzero: growing the file beyond this many bytes fails as on a full
                                    * disk (TSF_EIO naming ENOSPC) */
};

#ifdef __cplusplus
}
#endif

#endif /* TSF_EXPERIMENTAL_H */
