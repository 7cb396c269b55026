/*
 * lz4lit.h - LZ4 blocks made of an LZ4-compressed prefix followed by literal value bytes (writer
 * option lz4_probe); see lz4lit.c.
 */
#ifndef TSF_WRITE_LZ4LIT_H
#define TSF_WRITE_LZ4LIT_H

#include "../format/meta_index.h"

/* Value streams shorter than this always go through LZ4 (two 2 KiB probe samples). */
#define TSF_LZ4LIT_MIN 4096
/* A column's first such page, and every 16th after, goes through LZ4 whole; it decides whether the
 * next pages try literals (LZ4 saved < 0.5% on it) or plain LZ4. */
#define TSF_LZ4LIT_RECHECK 16

/* Splits a well-formed LZ4 block z[0..zlen) into its sequences before the last one (seq_len
 * bytes) and the literal count of the last (literal-only) sequence. -1 if z is not such a block. */
int tsf_lz4lit_split(const uint8_t *z, size_t zlen, size_t *seq_len, size_t *lit);
/* Bytes before the values of the combined block, at most (vmax value bytes) and exactly. */
size_t tsf_lz4lit_head_max(size_t seq_len, size_t lit, size_t vmax);
size_t tsf_lz4lit_head_size(size_t seq_len, size_t lit, size_t vlen);
/* Writes the head (tsf_lz4lit_head_size bytes): z's sequences, the last token with lit + vlen
 * literals, and the prefix's last `lit` bytes; the vlen value bytes must follow it. */
void tsf_lz4lit_put_head(uint8_t *dst, const uint8_t *z, size_t seq_len, const uint8_t *prefix, size_t plen,
                         size_t lit, size_t vlen);
/* 1 when samples of v[0..n) show LZ4 would not shrink it (n below 4 KiB: 0). tmp: a buffer kept
 * for this use only (it holds an LZ4 state between calls). */
int tsf_lz4lit_incompressible(const uint8_t *v, size_t n, tsf_wbuf *tmp);

#endif
