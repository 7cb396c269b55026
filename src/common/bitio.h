/*
 * bitio.h - MSB-first bit writer and reader, a 64-bit word at a time. Every TsFile bit packer
 * (TS_2DIFF, RLE bit-packing, GORILLA, CHIMP, SPRINTZ, RLBE) writes the first bit into 0x80 of the
 * first byte and multi-bit fields most significant bit first.
 *
 * Writer: bits accumulate in a 64-bit register and leave as 4-byte big-endian stores. It never
 * writes past `end`; an attempt sets `overflow` (encoders size dst with a bound, so this is a
 * programming error reported as TSF_ERANGE). Reader: refuses to read past the last byte and sets
 * `overrun` instead (decoders report TSF_ECORRUPT), returning zero bits.
 */
#ifndef TSF_BITIO_H
#define TSF_BITIO_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

typedef struct tsf_bitw {
    uint8_t *p;   /* next byte to write */
    uint8_t *end; /* one past the last writable byte */
    uint64_t acc; /* pending bits in the low `n` bits */
    unsigned n;   /* pending bit count, < 32 between calls */
    int overflow;
} tsf_bitw;

TSF_INLINE void tsf_bitw_init(tsf_bitw *w, uint8_t *dst, size_t cap)
{
    w->p = dst;
    w->end = dst + cap;
    w->acc = 0;
    w->n = 0;
    w->overflow = 0;
}

/* Appends the low k bits of v, k <= 32. */
TSF_INLINE void tsf_bitw_put32(tsf_bitw *w, uint64_t v, unsigned k)
{
    if (k == 0) return;
    w->acc = (w->acc << k) | (v & ((k == 64) ? ~0ull : ((1ull << k) - 1)));
    w->n += k;
    if (w->n >= 32) {
        w->n -= 32;
        if (TSF_LIKELY(w->end - w->p >= 4)) {
            tsf_store_be32(w->p, (uint32_t)(w->acc >> w->n));
            w->p += 4;
        } else {
            w->overflow = 1;
        }
    }
}

/* Appends the low k bits of v, k <= 64. */
TSF_INLINE void tsf_bitw_put(tsf_bitw *w, uint64_t v, unsigned k)
{
    if (k > 32) {
        tsf_bitw_put32(w, v >> 32, k - 32);
        tsf_bitw_put32(w, v & 0xffffffffu, 32);
    } else {
        tsf_bitw_put32(w, v, k);
    }
}

/* Bits written so far. */
TSF_INLINE size_t tsf_bitw_bits(const tsf_bitw *w, const uint8_t *start)
{
    return (size_t)(w->p - start) * 8 + w->n;
}

/* Flushes pending bits, zero-padding the last byte. Returns the end pointer. */
TSF_INLINE uint8_t *tsf_bitw_flush(tsf_bitw *w)
{
    while (w->n >= 8) {
        w->n -= 8;
        if (w->p < w->end) *w->p++ = (uint8_t)(w->acc >> w->n);
        else w->overflow = 1;
    }
    if (w->n > 0) {
        if (w->p < w->end) *w->p++ = (uint8_t)(w->acc << (8 - w->n));
        else w->overflow = 1;
        w->n = 0;
    }
    w->acc = 0;
    return w->p;
}

typedef struct tsf_bitr {
    const uint8_t *base;
    size_t len;    /* bytes */
    size_t pos;    /* bit position */
    int overrun;
} tsf_bitr;

TSF_INLINE void tsf_bitr_init(tsf_bitr *r, const uint8_t *src, size_t len)
{
    r->base = src;
    r->len = len;
    r->pos = 0;
    r->overrun = 0;
}

TSF_INLINE size_t tsf_bitr_bits_left(const tsf_bitr *r)
{
    return r->len * 8 - r->pos;
}

/* Peeks up to 57 bits starting at the current position (zero-filled past the end). */
TSF_INLINE uint64_t tsf_bitr_peek57(const tsf_bitr *r, unsigned k)
{
    size_t byte = r->pos >> 3;
    unsigned sh = (unsigned)(r->pos & 7);
    uint64_t word;
    if (TSF_LIKELY(byte + 8 <= r->len)) {
        word = tsf_load_be64(r->base + byte);
    } else {
        word = 0;
        for (size_t i = 0; i < 8; i++) word = (word << 8) | (byte + i < r->len ? r->base[byte + i] : 0);
    }
    return k == 0 ? 0 : (word << sh) >> (64 - k);
}

/* Reads k bits, k <= 57. Past the end: sets overrun and returns 0. */
TSF_INLINE uint64_t tsf_bitr_read57(tsf_bitr *r, unsigned k)
{
    if (TSF_UNLIKELY(r->pos + k > r->len * 8)) {
        r->overrun = 1;
        r->pos = r->len * 8;
        return 0;
    }
    uint64_t v = tsf_bitr_peek57(r, k);
    r->pos += k;
    return v;
}

/* Reads k bits, k <= 64. */
TSF_INLINE uint64_t tsf_bitr_read(tsf_bitr *r, unsigned k)
{
    if (k > 32) {
        uint64_t hi = tsf_bitr_read57(r, k - 32);
        return (hi << 32) | tsf_bitr_read57(r, 32);
    }
    return tsf_bitr_read57(r, k);
}

#endif
