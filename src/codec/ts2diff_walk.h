/*
 * ts2diff_walk.h - TS_2DIFF block headers and block listings for time filtering (spec
 * tsfile-encodings.md §3.1, §14): the checked header parser shared with the decoder (ts2diff.c) and
 * the windowed walk the reader runs on a partly covered time page (ts2diff_walk.c).
 */
#ifndef TSF_TS2DIFF_WALK_H
#define TSF_TS2DIFF_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "tsf.h"

/* One parsed block header. */
typedef struct td_hdr {
    uint32_t nd;    /* deltas in the block */
    unsigned w;     /* bit width */
    uint64_t mind;  /* minDelta (sign-extended for INT32) */
    uint64_t first; /* first value (sign-extended for INT32) */
    size_t data;    /* offset of the packed data */
    size_t nbytes;  /* packed bytes = ceil(nd * w / 8) */
} td_hdr;

/* Parses and checks the block header at src[pos..len) (pos <= len); the whole block must fit.
 * TSF_ECORRUPT naming the offset otherwise. */
tsf_status tsf_td_header(const uint8_t *src, size_t len, size_t pos, int is64, td_hdr *h, tsf_error *err);

/* What tsf_td_window found. Blocks are numbered from 0 in stream order. */
typedef struct tsf_td_window {
    size_t nlisted;    /* blocks whose header was read */
    size_t b0, b1;     /* selected blocks [b0, b1]; b0 == nlisted when none */
    size_t off0, off1; /* stream bytes [off0, off1) of the selected blocks */
    size_t ord0;       /* value index (page row) of the first selected value */
    size_t ndec;       /* values in the selected blocks */
    size_t nvalues;    /* values in the listed blocks */
    int complete;      /* 1: the walk reached the stream's end, nvalues is the stream's count */
} tsf_td_window;

/*
 * Selects the blocks of a TS_2DIFF INT64 stream that can hold values in [tmin, tmax], reading block
 * headers only (the last block is decoded when its bound is needed). A block meets the window when its
 * first value is <= tmax and its bound reaches tmin: with conservative = 0 the exclusive exact bound
 * "next block's first value" (the last block: its last value + 1, saturated), with conservative = 1
 * the inclusive header bound first + n * (minDelta + 2^w - 1), saturated. The selection is the run from
 * the first to the last meeting block, as tsf_rd_blocks_select gives over tsf_ts2diff_blocks.
 * With to_end = 0 the walk stops at the first block whose first value exceeds tmax (its header gives the
 * previous block's bound; in an ascending stream no later block can meet), so a window early in a page
 * reads only the headers up to its end; to_end = 1 walks every block (nvalues = the stream's count).
 */
tsf_status tsf_td_window_select(const uint8_t *src, size_t len, int64_t tmin, int64_t tmax, int conservative,
                                int to_end, tsf_td_window *w, tsf_error *err);

#endif
