/*
 * ts2diff_wide.h - TS_2DIFF blocks of more than Java's default 128 deltas (ts2diff_wide.c).
 */
#ifndef TSF_CODEC_TS2DIFF_WIDE_H
#define TSF_CODEC_TS2DIFF_WIDE_H

#include <stddef.h>
#include <stdint.h>

/* Deltas per block of the TS_2DIFF encoder: tsf_codec.ts2diff_block values up to this are Java's 128. */
#define TSF_TS2DIFF_BLOCK_JAVA 128
/* Largest block the encoder writes (a reader allocates one block of values: Java's
 * DeltaBinaryDecoder holds n + 1 longs per block). */
#define TSF_TS2DIFF_BLOCK_MAX 65536

/*
 * Encodes n INT64 (is64) or INT32 values as TS_2DIFF blocks of 1 + `block` values (the last one
 * shorter; `block` clamped to 128..TSF_TS2DIFF_BLOCK_MAX) into dst, which holds tsf_ts2diff_bound_n(n, is64)
 * bytes; returns the bytes written. Byte layout as §3.1 (n, w, minDelta, first, then the MSB-first packed
 * deltas); only n differs.
 */
size_t tsf_ts2diff_wide_encode(const void *values, size_t n, int is64, uint32_t block, uint8_t *dst);

#endif
