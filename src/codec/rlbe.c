/*
 * rlbe.c - RLBE (encoding code 13): run-length over the bit lengths of deltas, spec §10.
 *
 *   block   := count:32  segment+  (zero padding to a byte; every block starts on a byte)
 *   segment := lengthCode (6 bits for 32-bit types, 7 for 64-bit)  runLength (Fibonacci code)
 *              runLength words of lengthCode bits, MSB-first
 * Words are the first value of the block, then deltas v_i - v_{i-1} (wrapping). The Fibonacci code
 * has bit j (j = 1, 2, ...) for F(j) = 1, 2, 3, 5, ... and ends at the first `11`. Full-width words
 * (lengthCode = W) are written with their top bit 0 (the reference's `(v & (1 << k)) > 0` test is
 * false for the sign bit); the reader subtracts 2^(W-1), restoring it.
 *
 * FLOAT/DOUBLE (as the reference writer of the golden files): the words are the IEEE bits of
 * floating-point differences and the reader accumulates intBitsToFloat / longBitsToDouble of the
 * words in float / double arithmetic, which is lossy; this decoder reproduces the reader exactly.
 * Encoding is offered for the integer types only (byte-exact with the reference's IntRLBE/LongRLBE,
 * blocks of at most 10000 values).
 *
 * Count-driven decode; hostile input (count 0 or > 10000, lengthCode 0 or > W, a run longer than the
 * rest of its block, an endless Fibonacci code, truncation) -> TSF_ECORRUPT with the byte offset.
 */
#include <string.h>

#include "../common/bitio.h"
#include "codec.h"

enum { RLBE_BLOCK = 10000 };

typedef struct rlbe_kind {
    unsigned W;   /* 32 or 64 */
    unsigned lcb; /* bits of the length code */
    int is_float;
} rlbe_kind;

static rlbe_kind kind_of(tsf_type t)
{
    rlbe_kind k;
    k.W = (TSF_TYPE_BIT(t) & (TSF_TYPES_INT32 | TSF_TYPE_BIT(TSF_FLOAT))) ? 32 : 64;
    k.lcb = k.W == 32 ? 6 : 7;
    k.is_float = (TSF_TYPE_BIT(t) & TSF_TYPES_FLOATS) != 0;
    return k;
}

static tsf_status corrupt(tsf_error *err, const tsf_bitr *r, const char *what)
{
    return tsf_err(err, TSF_ECORRUPT, "RLBE: %s at byte offset %zu", what, r->pos >> 3);
}

/* Accumulates one word into the running value (integer wrap, or float/double addition). */
TSF_INLINE uint64_t accumulate(uint64_t acc, uint64_t word, rlbe_kind k)
{
    if (!k.is_float) return k.W == 32 ? (uint32_t)((uint32_t)acc + (uint32_t)word) : acc + word;
    if (k.W == 32) {
        float a, b;
        uint32_t ua = (uint32_t)acc, ub = (uint32_t)word;
        memcpy(&a, &ua, 4);
        memcpy(&b, &ub, 4);
        a = a + b;
        memcpy(&ua, &a, 4);
        return ua;
    }
    double a, b;
    memcpy(&a, &acc, 8);
    memcpy(&b, &word, 8);
    a = a + b;
    memcpy(&acc, &a, 8);
    return acc;
}

static tsf_status rlbe_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                              size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    const rlbe_kind k = kind_of(type);
    tsf_bitr r;
    tsf_bitr_init(&r, src, len);
    size_t i = 0;
    *consumed = 0;
    while (i < n) {
        r.pos = (r.pos + 7) & ~(size_t)7; /* blocks start on a byte */
        uint32_t count = (uint32_t)tsf_bitr_read57(&r, 32);
        if (r.overrun) return corrupt(err, &r, "truncated block header");
        if (count == 0 || count > RLBE_BLOCK) return corrupt(err, &r, "block count out of range (1..10000)");
        uint64_t v = 0;
        uint32_t done = 0;
        while (done < count) {
            unsigned lc = (unsigned)tsf_bitr_read57(&r, k.lcb);
            if (r.overrun) return corrupt(err, &r, "truncated segment header");
            if (lc == 0 || lc > k.W) return corrupt(err, &r, "length code out of range");
            /* Fibonacci-coded run length: bit j counts F(j); the first `11` ends it */
            uint64_t f1 = 1, f2 = 1; /* F(j-1), F(j-2) with F(0) = F(1) = 1 as the reference */
            uint64_t run = 0;
            unsigned now = (unsigned)tsf_bitr_read57(&r, 1), next = (unsigned)tsf_bitr_read57(&r, 1);
            for (unsigned j = 1;; j++) {
                uint64_t fj = j == 1 ? 1 : f1 + f2;
                if (j > 1) {
                    f2 = f1;
                    f1 = fj;
                }
                if (r.overrun) return corrupt(err, &r, "truncated Fibonacci run length");
                if (now) {
                    run += fj;
                    if (run > count - done) return corrupt(err, &r, "run longer than its block");
                }
                if (now && next) break;
                if (j > 40) return corrupt(err, &r, "Fibonacci run length without an end");
                now = next;
                next = (unsigned)tsf_bitr_read57(&r, 1);
            }
            for (uint64_t t = 0; t < run; t++) {
                uint64_t word = tsf_bitr_read(&r, lc);
                if (r.overrun) return corrupt(err, &r, "truncated words");
                if (lc == k.W) word -= 1ull << (k.W - 1); /* restore the sign bit the writer drops */
                if (k.W == 32) word = (uint32_t)word;
                v = done == 0 ? word : accumulate(v, word, k);
                if (i < n) {
                    if (k.W == 32) {
                        uint32_t u = (uint32_t)v;
                        memcpy((uint8_t *)values + 4 * i, &u, 4);
                    } else {
                        memcpy((uint8_t *)values + 8 * i, &v, 8);
                    }
                    i++;
                }
                done++;
            }
        }
    }
    *consumed = (r.pos + 7) >> 3;
    return TSF_OK;
}

/* ---- encoder (integer types) ------------------------------------------------------------------ */

static unsigned bitlen(uint64_t v, unsigned W)
{
    if (W == 32) v = (uint32_t)v;
    return v ? 64 - (unsigned)TSF_CLZ64(v) : 1;
}

static size_t rlbe_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    const rlbe_kind k = kind_of(type);
    /* per block: count + padding; per value at worst its own segment: lengthCode + a Fibonacci code
       of a run of 1 (`11`) + W bits */
    size_t blocks = n / RLBE_BLOCK + 1;
    return blocks * 5 + (n * (k.lcb + 2 + k.W) + 7) / 8 + 8;
}

/* Writes the Fibonacci code of run >= 1 (Zeckendorf, F(1) first) and the closing `1`. */
static void put_fib(tsf_bitw *w, uint32_t run)
{
    uint32_t fib[32];
    unsigned m = 1;
    fib[0] = 1;
    fib[1] = 1;
    while (fib[m] <= run) {
        m++;
        fib[m] = fib[m - 1] + fib[m - 2];
    }
    uint32_t code = 0; /* bit j-1 set for F(j) */
    for (unsigned j = m - 1; run > 0 && j >= 1; j--)
        if (fib[j] <= run) {
            code |= 1u << (j - 1);
            run -= fib[j];
        }
    unsigned top = 32 - (unsigned)TSF_CLZ32(code);
    for (unsigned j = 0; j < top; j++) tsf_bitw_put32(w, (code >> j) & 1, 1);
    tsf_bitw_put32(w, 1, 1);
}

/* Word t of the block starting at b0: the value itself for t = 0, else the wrapped delta. */
static uint64_t word_at(const void *values, size_t b0, size_t t, unsigned W)
{
    if (W == 32) {
        const uint32_t *v = (const uint32_t *)values + b0;
        return t == 0 ? v[0] : (uint32_t)(v[t] - v[t - 1]);
    }
    const uint64_t *v = (const uint64_t *)values + b0;
    return t == 0 ? v[0] : v[t] - v[t - 1];
}

static tsf_status rlbe_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                              size_t cap, size_t *written, tsf_error *err)
{
    (void)c;
    const rlbe_kind k = kind_of(type);
    const unsigned W = k.W;
    size_t need = rlbe_bound(type, n, 0);
    if (cap < need) return tsf_err(err, TSF_ERANGE, "RLBE encode: dst capacity %zu < bound %zu", cap, need);
    tsf_bitw w;
    tsf_bitw_init(&w, dst, cap);
    for (size_t b0 = 0; b0 < n; b0 += RLBE_BLOCK) {
        size_t cnt = n - b0 < RLBE_BLOCK ? n - b0 : RLBE_BLOCK;
        tsf_bitw_put32(&w, (uint32_t)cnt, 32);
        for (size_t i = 0, j; i < cnt; i = j) {
            /* a segment: the longest run of words with the same bit length */
            unsigned lc = bitlen(word_at(values, b0, i, W), W);
            for (j = i + 1; j < cnt && bitlen(word_at(values, b0, j, W), W) == lc; j++) continue;
            tsf_bitw_put32(&w, lc, k.lcb);
            put_fib(&w, (uint32_t)(j - i));
            for (size_t t = i; t < j; t++) {
                uint64_t word = word_at(values, b0, t, W);
                if (lc == W) word &= ~(1ull << (W - 1)); /* the reference never writes the sign bit */
                tsf_bitw_put(&w, word, lc);
            }
        }
        tsf_bitw_flush(&w); /* zero-pad the block to a byte */
    }
    if (w.overflow) return tsf_err(err, TSF_ERANGE, "RLBE encode: dst overflow");
    *written = (size_t)(w.p - dst);
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_rlbe = {
    .encoding = TSF_ENC_RLBE,
    .encode_types = TSF_TYPES_INTS,
    .decode_types = TSF_TYPES_NUMERIC,
    .bound = rlbe_bound,
    .encode = rlbe_encode,
    .decode = rlbe_decode,
    .count = NULL,
};
