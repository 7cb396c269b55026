/*
 * ts2diff_kern.h - private block kernels of the TS_2DIFF codec (spec tsfile-encodings.md §3.1).
 *
 * A block is n deltas d'_i of w bits each, MSB-first, after a header (n, w, minDelta, first).
 * Decoding is v_{i+1} = v_i + minDelta + d'_i in wrapping arithmetic; encoding computes the deltas,
 * their signed minimum, the bit length of the OR of (delta - min), and packs.
 *
 * The inline functions below are the portable ("scalar") kernels. They are written with the width
 * as a compile-time constant (ts2diff.c and the ISA files instantiate them through a switch), so
 * the compiler turns each width into straight-line code: 8 deltas = w bytes, byte-aligned. The
 * ISA files (ts2diff_sse41.c, _avx2.c, _avx512.c) include this header too: the delta/min/OR loops
 * of the encoder are then vectorised by the compiler for that ISA, and the decode kernels there
 * use intrinsics for w <= 25 and fall back to these loops for wider deltas.
 *
 * Decode kernels share one contract:
 *   size_t k(const uint8_t *data, size_t avail, unsigned w, uintNN_t mind, uintNN_t *out, size_t m)
 * out[0] holds the block's first value; the kernel writes out[1..k] for the first k of the m
 * deltas and returns k (a multiple of its group size). It reads only data[0..avail). The caller
 * finishes deltas k..m-1 with the bounded bit reader. Width 0 (every delta is minDelta, e.g. regular
 * timestamps) reads no data: the kernel writes all m values, out[i] = out[0] + i * minDelta (wrapping),
 * and returns m.
 */
#ifndef TSF_TS2DIFF_KERN_H
#define TSF_TS2DIFF_KERN_H

#include "../common/bitio.h"
#include "../common/bytes.h"
#include "codec.h"

#define TD_HDR32 16u
#define TD_HDR64 24u
#define TD_BLOCK_DELTAS 128u /* Java deltaBlockSize: a block holds 1 + 128 values */

typedef size_t (*td_dec32_fn)(const uint8_t *data, size_t avail, unsigned w, uint32_t mind, uint32_t *out,
                              size_t m);
typedef size_t (*td_dec64_fn)(const uint8_t *data, size_t avail, unsigned w, uint64_t mind, uint64_t *out,
                              size_t m);
/* Encodes one block of cnt (1..129) values at o (header + packed data); returns bytes written. */
typedef size_t (*td_enc32_fn)(const uint32_t *v, size_t cnt, uint8_t *o);
typedef size_t (*td_enc64_fn)(const uint64_t *v, size_t cnt, uint8_t *o);

/* The ISA kernels (defined only on x86 builds with SIMD). */
size_t tsf_td_dec32_sse41(const uint8_t *, size_t, unsigned, uint32_t, uint32_t *, size_t);
size_t tsf_td_dec64_sse41(const uint8_t *, size_t, unsigned, uint64_t, uint64_t *, size_t);
size_t tsf_td_dec32_avx2(const uint8_t *, size_t, unsigned, uint32_t, uint32_t *, size_t);
size_t tsf_td_dec64_avx2(const uint8_t *, size_t, unsigned, uint64_t, uint64_t *, size_t);
size_t tsf_td_dec32_avx512(const uint8_t *, size_t, unsigned, uint32_t, uint32_t *, size_t);
size_t tsf_td_dec64_avx512(const uint8_t *, size_t, unsigned, uint64_t, uint64_t *, size_t);
/* Whole INT32 blocks on the AVX-512 path (ts2diff_avx512.c): decodes blocks of 129 values with
 * w <= 25 from src[*pos..len) into out[0..n) until another kind of block or fewer than 129 wanted
 * values; advances *pos, returns the values written. _nt: non-temporal stores for whole lines. */
typedef size_t (*td_blocks32_fn)(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n);
size_t tsf_td_blocks32_avx512(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n);
size_t tsf_td_blocks32_nt_avx512(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n);
size_t tsf_td_enc32_sse41(const uint32_t *, size_t, uint8_t *);
size_t tsf_td_enc64_sse41(const uint64_t *, size_t, uint8_t *);
size_t tsf_td_enc32_avx2(const uint32_t *, size_t, uint8_t *);
size_t tsf_td_enc64_avx2(const uint64_t *, size_t, uint8_t *);
size_t tsf_td_enc32_avx512(const uint32_t *, size_t, uint8_t *);
size_t tsf_td_enc64_avx512(const uint64_t *, size_t, uint8_t *);

/*
 * Running min / max / wrapping sum of decoded INT64 values (tsf_ts2diff_decode_i64_sum), kept in 8 lanes
 * so the vector kernels resume it from block to block, and in smn / smx / ss for the portable fold (kept
 * apart: a scalar store into a vector's lanes would stall the next vector load). Every lane starts from
 * the page's first value `base` (sums from 0). The AVX-512 kernel folds runs whose values lie within 2^27
 * of base in 32-bit lanes as value - base: rmn / rmx (start 0, i.e. base itself, a value of the page).
 * Everything is folded once at the end of a page.
 */
typedef struct td_acc {
    int64_t mn[8], mx[8];
    uint64_t s[8];
    int32_t rmn[16], rmx[16];
    int64_t base, smn, smx;
    uint64_t ss;
} td_acc;
#define TD_REL_BITS 27 /* |value - base| < 2^27 in the 32-bit fold; its sums of <= 8 per lane stay below 2^30 */
/* Folds v[0..n) into a. */
typedef void (*td_acc_fn)(td_acc *a, const int64_t *v, size_t n);
void tsf_td_acc_avx2(td_acc *a, const int64_t *v, size_t n);
void tsf_td_acc_avx512(td_acc *a, const int64_t *v, size_t n);
/* tsf_td_dec64_avx512 that also folds every value it writes into a. */
size_t tsf_td_dec64_acc_avx512(const uint8_t *, size_t, unsigned, uint64_t, uint64_t *, size_t, td_acc *a);

TSF_INLINE void td_acc_portable(td_acc *a, const int64_t *v, size_t n)
{
    int64_t mn = a->smn, mx = a->smx;
    uint64_t s = a->ss;
    for (size_t i = 0; i < n; i++) {
        int64_t y = v[i];
        mn = y < mn ? y : mn;
        mx = y > mx ? y : mx;
        s += (uint64_t)y;
    }
    a->smn = mn, a->smx = mx, a->ss = s;
}

/* X(1) ... X(32) and X(33) ... X(64): instantiate width-specialised code. */
#define TD_W8(X, b) X(b + 1) X(b + 2) X(b + 3) X(b + 4) X(b + 5) X(b + 6) X(b + 7) X(b + 8)
#define TD_WIDTHS32(X) TD_W8(X, 0) TD_W8(X, 8) TD_W8(X, 16) TD_W8(X, 24)
#define TD_WIDTHS64(X) TD_WIDTHS32(X) TD_W8(X, 32) TD_W8(X, 40) TD_W8(X, 48) TD_W8(X, 56)

/* ---- decode: width-specialised unpack fused with the prefix sum -------------------------------- */

/* 8 deltas (w bytes) per step; each step reads at most ((7w)>>3) + 8 bytes from its start. */
TSF_INLINE size_t td_unpack32_w(const uint8_t *d, size_t avail, unsigned W, uint32_t mind, uint32_t *out,
                                size_t m)
{
    uint32_t prev = out[0];
    size_t i = 0;
    size_t need = ((7 * W) >> 3) + 8;
    for (; i + 8 <= m && (i >> 3) * W + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * W;
#pragma GCC unroll 8
        for (unsigned k = 0; k < 8; k++) {
            unsigned bit = k * W;
            uint64_t word = tsf_load_be64(p + (bit >> 3));
            uint32_t v = (uint32_t)((word << (bit & 7)) >> (64 - W));
            prev += mind + v;
            out[i + k + 1] = prev;
        }
    }
    return i;
}

/* 64-bit deltas: a field can straddle 9 bytes (shift up to 7 + width up to 64). */
TSF_INLINE size_t td_unpack64_w(const uint8_t *d, size_t avail, unsigned W, uint64_t mind, uint64_t *out,
                                size_t m)
{
    uint64_t prev = out[0];
    size_t i = 0;
    size_t need = ((7 * W) >> 3) + 9;
    for (; i + 8 <= m && (i >> 3) * W + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * W;
#pragma GCC unroll 8
        for (unsigned k = 0; k < 8; k++) {
            unsigned bit = k * W, s = bit & 7;
            const uint8_t *q = p + (bit >> 3);
            uint64_t word = tsf_load_be64(q) << s;
            if (s + W > 64) word |= (uint64_t)q[8] >> (8 - s);
            uint64_t v = word >> (64 - W);
            prev += mind + v;
            out[i + k + 1] = prev;
        }
    }
    return i;
}

/* Width 0, scalar twin of the ISA fills: one running sum (the sums wrap like the decoder's). Kept a
 * single serial chain on purpose: GCC 12 -O3 miscompiled a four-sum version of this loop (SLP stored
 * lanes 0-1 also into lanes 2-3, commit 838015e), so the vector fills are written with intrinsics. */
TSF_INLINE size_t td_fill32(uint32_t mind, uint32_t *out, size_t m)
{
    uint32_t v = out[0];
    for (size_t i = 1; i <= m; i++) {
        v += mind;
        out[i] = v;
    }
    return m;
}
TSF_INLINE size_t td_fill64(uint64_t mind, uint64_t *out, size_t m)
{
    uint64_t v = out[0];
    for (size_t i = 1; i <= m; i++) {
        v += mind;
        out[i] = v;
    }
    return m;
}

#define TD_UNPACK32_CASE(W)                                                                                  \
    case W:                                                                                                  \
        return td_unpack32_w(d, avail, W, mind, out, m);
#define TD_UNPACK64_CASE(W)                                                                                  \
    case W:                                                                                                  \
        return td_unpack64_w(d, avail, W, mind, out, m);

/* Dispatch on the width once per block. */
TSF_INLINE size_t td_unpack32_any(const uint8_t *d, size_t avail, unsigned w, uint32_t mind, uint32_t *out,
                                  size_t m)
{
    switch (w) {
    case 0:
        return td_fill32(mind, out, m);
        TD_WIDTHS32(TD_UNPACK32_CASE)
    default:
        return 0;
    }
}
TSF_INLINE size_t td_unpack64_any(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out,
                                  size_t m)
{
    switch (w) {
    case 0:
        return td_fill64(mind, out, m);
        TD_WIDTHS64(TD_UNPACK64_CASE)
    default:
        return 0;
    }
}

/* ---- encode: deltas, min, width, pack ----------------------------------------------------------- */

/* Appends the low k bits of x (x < 2^k, k <= 32) to a 64-bit accumulator; full 32-bit words leave. */
#define TD_PUT(x, k)                                                                                         \
    do {                                                                                                     \
        acc = (acc << (k)) | (x);                                                                            \
        nb += (k);                                                                                           \
        if (nb >= 32) {                                                                                      \
            nb -= 32;                                                                                        \
            tsf_store_be32(o, (uint32_t)(acc >> nb));                                                        \
            o += 4;                                                                                          \
        }                                                                                                    \
    } while (0)

/* Packs 8 fields of W bits into exactly W bytes (every branch is static once W is a constant). */
TSF_INLINE void td_pack8_32(uint8_t *o, const uint32_t *d, unsigned W)
{
    uint64_t acc = 0;
    unsigned nb = 0;
#pragma GCC unroll 8
    for (unsigned k = 0; k < 8; k++) TD_PUT((uint64_t)d[k], W);
    while (nb >= 8) {
        nb -= 8;
        *o++ = (uint8_t)(acc >> nb);
    }
}

TSF_INLINE void td_pack8_64(uint8_t *o, const uint64_t *d, unsigned W)
{
    uint64_t acc = 0;
    unsigned nb = 0;
#pragma GCC unroll 8
    for (unsigned k = 0; k < 8; k++) {
        if (W > 32) {
            TD_PUT(d[k] >> 32, W - 32);
            TD_PUT(d[k] & 0xffffffffu, 32u);
        } else {
            TD_PUT(d[k], W);
        }
    }
    while (nb >= 8) {
        nb -= 8;
        *o++ = (uint8_t)(acc >> nb);
    }
}

/* Packs m fields: whole groups of 8 width-specialised, the rest through the bit writer. */
TSF_INLINE uint8_t *td_pack32_w(uint8_t *o, const uint32_t *d, size_t m, unsigned W)
{
    size_t i = 0;
    for (; i + 8 <= m; i += 8, o += W) td_pack8_32(o, d + i, W);
    if (i < m) {
        tsf_bitw bw;
        tsf_bitw_init(&bw, o, ((m - i) * W + 7) / 8);
        for (; i < m; i++) tsf_bitw_put32(&bw, d[i], W);
        o = tsf_bitw_flush(&bw);
    }
    return o;
}
TSF_INLINE uint8_t *td_pack64_w(uint8_t *o, const uint64_t *d, size_t m, unsigned W)
{
    size_t i = 0;
    for (; i + 8 <= m; i += 8, o += W) td_pack8_64(o, d + i, W);
    if (i < m) {
        tsf_bitw bw;
        tsf_bitw_init(&bw, o, ((m - i) * W + 7) / 8);
        for (; i < m; i++) tsf_bitw_put(&bw, d[i], W);
        o = tsf_bitw_flush(&bw);
    }
    return o;
}

#define TD_PACK32_CASE(W)                                                                                    \
    case W:                                                                                                  \
        return td_pack32_w(o, d, m, W);
#define TD_PACK64_CASE(W)                                                                                    \
    case W:                                                                                                  \
        return td_pack64_w(o, d, m, W);

TSF_INLINE uint8_t *td_pack32_any(uint8_t *o, const uint32_t *d, size_t m, unsigned w)
{
    switch (w) {
        TD_WIDTHS32(TD_PACK32_CASE)
    default:
        return o;
    }
}
TSF_INLINE uint8_t *td_pack64_any(uint8_t *o, const uint64_t *d, size_t m, unsigned w)
{
    switch (w) {
        TD_WIDTHS64(TD_PACK64_CASE)
    default:
        return o;
    }
}

/*
 * One block of cnt (1..129) values as Java's DeltaBinaryEncoder writes it: header n, w, minDelta,
 * first (big-endian), then the packed d'. A single-value block keeps Java's reset minDelta
 * (INT32_MAX), edge detail 1 of §3.1. The loops are branch-free so the compiler vectorises them.
 */
TSF_INLINE size_t td_encode_block32(const uint32_t *v, size_t cnt, uint8_t *o)
{
    uint32_t d[TD_BLOCK_DELTAS];
    size_t m = cnt - 1;
    int32_t mn = INT32_MAX;
    for (size_t i = 0; i < m; i++) {
        d[i] = v[i + 1] - v[i];
        int32_t s = (int32_t)d[i];
        mn = s < mn ? s : mn;
    }
    uint32_t orv = 0;
    for (size_t i = 0; i < m; i++) {
        d[i] -= (uint32_t)mn;
        orv |= d[i];
    }
    unsigned w = orv ? 32u - (unsigned)TSF_CLZ32(orv) : 0u;
    tsf_store_be32(o, (uint32_t)m);
    tsf_store_be32(o + 4, w);
    tsf_store_be32(o + 8, (uint32_t)mn);
    tsf_store_be32(o + 12, v[0]);
    return (size_t)(td_pack32_any(o + TD_HDR32, d, m, w) - o);
}

TSF_INLINE size_t td_encode_block64(const uint64_t *v, size_t cnt, uint8_t *o)
{
    uint64_t d[TD_BLOCK_DELTAS];
    size_t m = cnt - 1;
    int64_t mn = INT64_MAX;
    for (size_t i = 0; i < m; i++) {
        d[i] = v[i + 1] - v[i];
        int64_t s = (int64_t)d[i];
        mn = s < mn ? s : mn;
    }
    uint64_t orv = 0;
    for (size_t i = 0; i < m; i++) {
        d[i] -= (uint64_t)mn;
        orv |= d[i];
    }
    unsigned w = orv ? 64u - (unsigned)TSF_CLZ64(orv) : 0u;
    tsf_store_be32(o, (uint32_t)m);
    tsf_store_be32(o + 4, w);
    tsf_store_be64(o + 8, (uint64_t)mn);
    tsf_store_be64(o + 16, v[0]);
    return (size_t)(td_pack64_any(o + TD_HDR64, d, m, w) - o);
}

#endif
