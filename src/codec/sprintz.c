/*
 * sprintz.c - SPRINTZ (encoding code 12), spec §9: groups of 9 values predicted with the "fire"
 * learner, plus a tail of the last 1..8 values.
 *
 *   group := bitWidth:u8 (< 0x80)  seed  8 mapped residuals, bitWidth bits each, MSB-first
 *            seed: INT32/DATE uvarint of the raw int; INT64/TIMESTAMP 8 bytes BE; FLOAT/DOUBLE 4/8
 *            bytes BE IEEE bits
 *   tail  := (k | 0x80):u8 then k values: one IntRLE/LongRLE package (ints, §5) or a GORILLA stream
 *            (floats, §4, with its end marker and flush byte)
 *
 * The predictor is reset at every group; `acc` is a Java int in both widths (LongFire narrows it),
 * and all arithmetic wraps as Java's does. Residual mapping e <= 0 -> -2e, e > 0 -> 2e-1 (Java int /
 * long, overflowing for large residuals, which makes the format lossy in Java); the decoder inverts it
 * with x even -> (-x)/2, x odd -> (x+1)/2 (truncating division), exactly as the reference reader.
 * FLOAT/DOUBLE predict on floatToIntBits/doubleToLongBits of the seed (canonical NaN) and return
 * the seed's raw bits as value 0. The encoder mirrors the reference writer byte for byte.
 *
 * Count-driven: the reader decodes exactly n values; a group whose 9 values exceed n is decoded and
 * cut. Hostile input: bit widths above the type width, truncated seeds/packs/tails -> TSF_ECORRUPT.
 */
#include <string.h>

#include "../common/bitio.h"
#include "codec.h"
#include "gorilla_core.h"

enum { GROUP = 8 }; /* residuals per group (Block_size) */

typedef struct sp_kind {
    unsigned W; /* 32 or 64 */
    int is_float;
} sp_kind;

static sp_kind kind_of(tsf_type t)
{
    sp_kind k;
    k.W = (TSF_TYPE_BIT(t) & (TSF_TYPES_INT32 | TSF_TYPE_BIT(TSF_FLOAT))) ? 32 : 64;
    k.is_float = (TSF_TYPE_BIT(t) & TSF_TYPES_FLOATS) != 0;
    return k;
}

/* ---- the "fire" predictor (IntFire: shift 2, bw 8; LongFire: shift 3, bw 16) ------------------ */

typedef struct fire {
    int32_t acc;    /* a Java int in both variants */
    uint64_t delta; /* int (32-bit, sign-extended) or long, as two's complement bits */
} fire;

TSF_INLINE uint64_t fire_predict(const fire *f, uint64_t prev, unsigned W)
{
    if (W == 32) {
        int32_t alpha = f->acc >> 2;
        int32_t diff = (int32_t)((uint32_t)alpha * (uint32_t)f->delta) >> 8;
        return (uint32_t)((uint32_t)prev + (uint32_t)diff);
    }
    int64_t alpha = (int64_t)(f->acc >> 3);
    int64_t diff = (int64_t)((uint64_t)alpha * f->delta) >> 16;
    return prev + (uint64_t)diff;
}

TSF_INLINE void fire_train(fire *f, uint64_t prev, uint64_t val, uint64_t err, unsigned W)
{
    int positive = W == 32 ? (int32_t)(uint32_t)err > 0 : (int64_t)err > 0;
    uint64_t gradient = positive ? 0 - f->delta : f->delta;
    f->acc = (int32_t)(uint32_t)((uint64_t)(int64_t)f->acc - gradient); /* narrowed to int */
    f->delta = W == 32 ? (uint32_t)((uint32_t)val - (uint32_t)prev) : val - prev;
}

/* Inverse residual mapping in Java int/long arithmetic (truncating division). */
TSF_INLINE uint64_t unmap(uint64_t x, unsigned W)
{
    if (W == 32) {
        int32_t r = (x & 1) ? (int32_t)((uint32_t)x + 1u) / 2 : (int32_t)(0u - (uint32_t)x) / 2;
        return (uint32_t)r;
    }
    int64_t r = (x & 1) ? (int64_t)(x + 1) / 2 : (int64_t)(0 - x) / 2;
    return (uint64_t)r;
}

TSF_INLINE uint64_t map_residual(uint64_t e, unsigned W)
{
    if (W == 32) {
        int32_t s = (int32_t)(uint32_t)e;
        return s <= 0 ? (uint32_t)(0u - 2u * (uint32_t)s) : (uint32_t)(2u * (uint32_t)s - 1u);
    }
    return (int64_t)e <= 0 ? 0 - 2 * e : 2 * e - 1;
}

static uint64_t canon(uint64_t bits, sp_kind k)
{
    if (!k.is_float) return bits;
    if (k.W == 32) return ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu)) ? 0x7fc00000u : bits;
    return ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (bits & 0xfffffffffffffull))
               ? 0x7ff8000000000000ull
               : bits;
}

static uint64_t ld(const void *v, size_t i, unsigned W)
{
    if (W == 32) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)v + 4 * i, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, (const uint8_t *)v + 8 * i, 8);
    return u;
}

static void st(void *v, size_t i, uint64_t x, unsigned W)
{
    if (W == 32) {
        uint32_t u = (uint32_t)x;
        memcpy((uint8_t *)v + 4 * i, &u, 4);
    } else {
        memcpy((uint8_t *)v + 8 * i, &x, 8);
    }
}

static tsf_type tail_type(tsf_type t, sp_kind k)
{
    if (k.is_float) return t;
    return k.W == 32 ? TSF_INT32 : TSF_INT64;
}

/* ---- decoder ---------------------------------------------------------------------------------- */

static tsf_status sp_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                            size_t n, size_t *consumed, tsf_error *err)
{
    const sp_kind k = kind_of(type);
    const unsigned W = k.W;
    size_t pos = 0, i = 0;
    *consumed = 0;
    while (i < n) {
        if (pos >= len)
            return tsf_err(err, TSF_ECORRUPT,
                           "SPRINTZ: stream ends at byte offset %zu after %zu of %zu values", pos, i, n);
        size_t at = pos;
        unsigned b = src[pos++];
        if (b & 0x80) { /* tail */
            size_t cnt = b & 0x7f;
            if (cnt == 0) return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: empty tail at byte offset %zu", at);
            uint64_t tmp[127];
            size_t used = 0;
            tsf_status s;
            if (k.is_float)
                s = tsf_gorilla_decode_bits(c, type, src + pos, len - pos, tmp, cnt, &used, err);
            else if (W == 32)
                s = tsf_rle_decode_i32(c, src + pos, len - pos, (int32_t *)tmp, cnt, &used, err);
            else
                s = tsf_rle_decode_i64(c, src + pos, len - pos, (int64_t *)tmp, cnt, &used, err);
            if (s != TSF_OK) {
                char inner[TSF_ERROR_MESSAGE_SIZE] = "corrupt";
                if (err) memcpy(inner, err->message, sizeof inner);
                inner[sizeof inner - 1] = 0;
                return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: tail of %zu values at byte offset %zu: %.160s",
                               cnt, at, inner);
            }
            size_t take = cnt < n - i ? cnt : n - i;
            memcpy((uint8_t *)values + i * (W / 8), tmp, take * (W / 8));
            i += take;
            pos += used;
            continue;
        }
        unsigned bw = b;
        if (bw > W)
            return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: bit width %u > %u at byte offset %zu", bw, W, at);
        uint64_t seed;
        if (W == 32 && !k.is_float) {
            uint32_t u;
            size_t l = tsf_get_uvarint32(src + pos, len - pos, &u);
            if (!l) return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: bad seed varint at byte offset %zu", pos);
            seed = u;
            pos += l;
        } else {
            if (len - pos < W / 8)
                return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: truncated seed at byte offset %zu", pos);
            seed = W == 32 ? tsf_load_be32(src + pos) : tsf_load_be64(src + pos);
            pos += W / 8;
        }
        if (len - pos < bw)
            return tsf_err(err, TSF_ECORRUPT, "SPRINTZ: truncated packed residuals at byte offset %zu", pos);
        tsf_bitr r;
        tsf_bitr_init(&r, src + pos, bw);
        pos += bw;
        st(values, i++, seed, W);
        fire f = {0, 0};
        uint64_t prev = canon(seed, k);
        for (unsigned j = 0; j < GROUP; j++) {
            uint64_t e = unmap(bw ? tsf_bitr_read(&r, bw) : 0, W);
            uint64_t v = fire_predict(&f, prev, W) + e;
            if (W == 32) v = (uint32_t)v;
            fire_train(&f, prev, v, e, W);
            if (i < n) st(values, i++, v, W);
            prev = v;
        }
    }
    *consumed = pos;
    return TSF_OK;
}

/* ---- encoder ---------------------------------------------------------------------------------- */

static size_t sp_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    const sp_kind k = kind_of(type);
    size_t groups = n / (GROUP + 1), tail = n % (GROUP + 1);
    size_t gsize = 1 + (k.W == 32 && !k.is_float ? 5 : k.W / 8) + k.W; /* bw, seed, 8 x W bits */
    size_t tsize = k.is_float ? tsf_gorilla_bound_n(tail, k.W) : tsf_rle_bound_n(tail, k.W == 64);
    return groups * gsize + 1 + tsize;
}

static tsf_status sp_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                            size_t cap, size_t *written, tsf_error *err)
{
    const sp_kind k = kind_of(type);
    const unsigned W = k.W;
    size_t need = sp_bound(type, n, 0);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "SPRINTZ encode: dst capacity %zu < bound %zu", cap, need);
    size_t pos = 0, i = 0;
    for (; n - i >= GROUP + 1; i += GROUP + 1) {
        uint64_t seed = ld(values, i, W), res[GROUP], prev = canon(seed, k);
        unsigned bw = 1;
        fire f = {0, 0};
        for (unsigned j = 0; j < GROUP; j++) {
            uint64_t v = canon(ld(values, i + 1 + j, W), k);
            uint64_t e = v - fire_predict(&f, prev, W);
            if (W == 32) e = (uint32_t)e;
            fire_train(&f, prev, v, e, W);
            res[j] = map_residual(e, W);
            unsigned l = res[j] ? 64 - (unsigned)TSF_CLZ64(res[j]) : 0;
            if (l > bw) bw = l;
            prev = v;
        }
        dst[pos++] = (uint8_t)bw;
        if (W == 32 && !k.is_float)
            pos += tsf_put_uvarint32(dst + pos, (uint32_t)seed);
        else if (W == 32) {
            tsf_store_be32(dst + pos, (uint32_t)seed);
            pos += 4;
        } else {
            tsf_store_be64(dst + pos, seed);
            pos += 8;
        }
        tsf_bitw w;
        tsf_bitw_init(&w, dst + pos, bw);
        for (unsigned j = 0; j < GROUP; j++) tsf_bitw_put(&w, res[j], bw);
        tsf_bitw_flush(&w);
        pos += bw;
    }
    if (i < n) {
        size_t cnt = n - i, used = 0;
        dst[pos++] = (uint8_t)(0x80 | cnt);
        const void *tv = (const uint8_t *)values + i * (W / 8);
        tsf_status s;
        if (k.is_float)
            s = tsf_gorilla_encode_bits(c, tail_type(type, k), tv, cnt, dst + pos, cap - pos, &used, err);
        else if (W == 32)
            s = tsf_rle_encode_i32(c, (const int32_t *)tv, cnt, dst + pos, cap - pos, &used, err);
        else
            s = tsf_rle_encode_i64(c, (const int64_t *)tv, cnt, dst + pos, cap - pos, &used, err);
        if (s != TSF_OK) return s;
        pos += used;
    }
    *written = pos;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_sprintz = {
    .encoding = TSF_ENC_SPRINTZ,
    .encode_types = TSF_TYPES_NUMERIC,
    .decode_types = TSF_TYPES_NUMERIC,
    .bound = sp_bound,
    .encode = sp_encode,
    .decode = sp_decode,
    .count = NULL,
};
