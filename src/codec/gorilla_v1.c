/*
 * gorilla_v1.c - GORILLA_V1 (encoding code 6, legacy FLOAT/DOUBLE Gorilla), spec §4.4.
 *
 * Layout: the first value's floatToIntBits / doubleToLongBits, LITTLE-endian (4 or 8 bytes); then an
 * MSB-first bit stream per value: `0` same bits; `10` the bits W-1-lz .. tz of the xor, where lz and
 * tz are the leading/trailing zeros of the previous VALUE (not of a stored xor window); `11` nlz(xor)
 * in 5/6 bits, the full meaningful length in 6/7 bits, then those bits. The page ends with NaN
 * encoded as a value and the last partial byte zero-padded (no extra byte when aligned).
 *
 * Like the reference's encoder, this one writes floatToIntBits / doubleToLongBits, so NaN payloads
 * become the canonical NaN. The decoder is count-driven (NaN values inside a page are data) and
 * requires the closing NaN after the n values. Legacy and read-mostly, so it runs one value at a time
 * on the checked bit reader/writer on every path.
 */
#include <string.h>

#include "../common/bitio.h"
#include "codec.h"

static unsigned v1_width(tsf_type type)
{
    return type == TSF_FLOAT ? 32 : 64;
}

static unsigned nlz(uint64_t v, unsigned W)
{
    return v ? (unsigned)TSF_CLZ64(v) - (64 - W) : W;
}
static unsigned ntz(uint64_t v, unsigned W)
{
    return v ? (unsigned)TSF_CTZ64(v) : W;
}

/* floatToIntBits / doubleToLongBits: raw bits with every NaN made canonical */
static uint64_t canon_bits(const void *values, size_t i, unsigned W)
{
    if (W == 32) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)values + 4 * i, 4);
        if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) u = 0x7fc00000u;
        return u;
    }
    uint64_t u;
    memcpy(&u, (const uint8_t *)values + 8 * i, 8);
    if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull))
        u = 0x7ff8000000000000ull;
    return u;
}

static int is_nan_bits(uint64_t u, unsigned W)
{
    if (W == 32) return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
    return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
}

static size_t v1_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    unsigned W = v1_width(type);
    size_t per = W == 32 ? 2 + 5 + 6 + 32 : 2 + 6 + 7 + 64;
    return W / 8 + (per * n + 7) / 8 + 4; /* n-1 values + the NaN, + room for the 32-bit writer */
}

static tsf_status v1_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                            size_t cap, size_t *written, tsf_error *err)
{
    (void)c;
    const unsigned W = v1_width(type), fl = W == 32 ? 5 : 6, fn = W == 32 ? 6 : 7;
    const uint64_t nan = W == 32 ? 0x7fc00000u : 0x7ff8000000000000ull;
    size_t need = v1_bound(type, n, 0);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "GORILLA_V1 encode: dst capacity %zu < bound %zu", cap, need);
    uint64_t prev = n ? canon_bits(values, 0, W) : nan;
    if (W == 32)
        tsf_store_le32(dst, (uint32_t)prev);
    else
        tsf_store_le64(dst, prev);
    tsf_bitw w;
    tsf_bitw_init(&w, dst + W / 8, cap - W / 8);
    for (size_t i = 1; i <= n; i++) {
        uint64_t v = i < n ? canon_bits(values, i, W) : nan;
        uint64_t x = v ^ prev;
        if (x == 0) {
            tsf_bitw_put32(&w, 0, 1);
        } else {
            unsigned xl = nlz(x, W), xt = ntz(x, W), pl = nlz(prev, W), pt = ntz(prev, W);
            if (xl >= pl && xt >= pt) {
                tsf_bitw_put32(&w, 2, 2);
                tsf_bitw_put(&w, x >> pt, W - pl - pt);
            } else {
                unsigned len = W - xl - xt;
                tsf_bitw_put32(&w, 3, 2);
                tsf_bitw_put32(&w, xl, fl);
                tsf_bitw_put32(&w, len, fn);
                tsf_bitw_put(&w, x >> xt, len);
            }
        }
        prev = v;
    }
    uint8_t *end = tsf_bitw_flush(&w);
    if (w.overflow) return tsf_err(err, TSF_ERANGE, "GORILLA_V1 encode: dst overflow");
    *written = (size_t)(end - dst);
    return TSF_OK;
}

/* One value after the first; -1 on truncation or an impossible window. */
static int v1_next(tsf_bitr *r, uint64_t *prev, unsigned W)
{
    const unsigned fl = W == 32 ? 5 : 6, fn = W == 32 ? 6 : 7;
    if (!tsf_bitr_read57(r, 1)) return r->overrun ? -1 : 0;
    if (!tsf_bitr_read57(r, 1)) {
        unsigned pl = nlz(*prev, W), pt = ntz(*prev, W);
        if (pl + pt < W) *prev ^= tsf_bitr_read(r, W - pl - pt) << pt; /* previous 0: no bits */
    } else {
        unsigned lz = (unsigned)tsf_bitr_read57(r, fl), len = (unsigned)tsf_bitr_read57(r, fn);
        if (len == 0 || lz + len > W) return -1;
        *prev ^= tsf_bitr_read(r, len) << (W - lz - len);
    }
    return r->overrun ? -1 : 0;
}

static tsf_status v1_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                            size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    const unsigned W = v1_width(type), B = W / 8;
    *consumed = 0;
    if (n == 0 && len == 0) return TSF_OK;
    if (len < B) return tsf_err(err, TSF_ECORRUPT, "GORILLA_V1: truncated first value at byte offset 0");
    uint64_t prev = W == 32 ? tsf_load_le32(src) : tsf_load_le64(src);
    tsf_bitr r;
    tsf_bitr_init(&r, src + B, len - B);
    for (size_t i = 0; i <= n; i++) {
        if (i > 0) {
            size_t at = r.pos;
            if (v1_next(&r, &prev, W) != 0)
                return tsf_err(err, TSF_ECORRUPT, "GORILLA_V1: %s at value %zu, byte offset %zu",
                               r.overrun ? "truncated stream" : "invalid leading/length fields", i,
                               B + (at >> 3));
        }
        if (i == n) break;
        if (W == 32) {
            uint32_t u = (uint32_t)prev;
            memcpy((uint8_t *)values + 4 * i, &u, 4);
        } else {
            memcpy((uint8_t *)values + 8 * i, &prev, 8);
        }
    }
    if (!is_nan_bits(prev, W))
        return tsf_err(err, TSF_ECORRUPT, "GORILLA_V1: no closing NaN after %zu values (byte offset %zu)", n,
                       B + (r.pos >> 3));
    *consumed = B + (r.pos + 7) / 8;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_gorilla_v1 = {
    .encoding = TSF_ENC_GORILLA_V1,
    .encode_types = TSF_TYPES_FLOATS,
    .decode_types = TSF_TYPES_FLOATS,
    .bound = v1_bound,
    .encode = v1_encode,
    .decode = v1_decode,
    .count = NULL,
};

/* ---- what the Java reference reader returns ---------------------------------------------------
 *
 * The reference decoder (GorillaDecoderV1 and its Single/DoublePrecision subclasses) reads one value
 * ahead and sets its end flag as soon as a value read through a `10` or `11` code is NaN. From then
 * on its bit reader no longer loads the next byte when the current one is used up: it keeps
 * shifting the old byte by a negative count, which Java takes mod 32 (24 zero bits, then the old
 * byte's bits again, and so on). So a NaN that is not the page's last value and differs from the
 * value before it (a `0` code does not set the flag) makes every later value whose bits lie past
 * that byte come back wrong. The model below is that reader, bit for bit; the writer uses it to
 * refuse GORILLA_V1 pages the reference would misread.
 */
typedef struct jv1 {
    const uint8_t *src;
    size_t len, pos;
    int32_t buf, left; /* the Java int byte buffer (-1 = EOF) and the bits left in it */
    int end, dead;     /* isEnd; an IOException was thrown (every later value reads as NaN) */
} jv1;

static void jv1_fill(jv1 *j)
{
    if (j->pos < j->len) {
        j->buf = j->src[j->pos++];
        j->left = 8;
    } else {
        j->buf = -1;
        j->left = -1;
    }
}

static unsigned jv1_bit(jv1 *j)
{
    if (j->left == 0 && !j->end) jv1_fill(j);
    if (j->buf == -1) {
        j->dead = 1;
        return 0;
    }
    j->left--;
    return (unsigned)(j->buf >> ((unsigned)j->left & 31)) & 1;
}

static uint64_t jv1_bits(jv1 *j, unsigned k)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < k && !j->dead; i++) v = v << 1 | jv1_bit(j);
    return v;
}

/* getNextValue: the value after *prev (unchanged when the reader throws). */
static void jv1_next(jv1 *j, uint64_t *prev, unsigned W)
{
    const unsigned fl = W == 32 ? 5 : 6, fn = W == 32 ? 6 : 7;
    uint64_t mask = W == 32 ? 0xffffffffull : ~0ull;
    if (!jv1_bit(j) || j->dead) return;
    unsigned c2 = jv1_bit(j);
    if (j->dead) return;
    uint64_t v;
    if (!c2) {
        int cnt = (int)W - (int)nlz(*prev, W) - (int)ntz(*prev, W);
        uint64_t x = cnt > 0 ? jv1_bits(j, (unsigned)cnt) << ntz(*prev, W) : 0;
        v = (*prev ^ x) & mask;
    } else {
        unsigned lz = (unsigned)jv1_bits(j, fl), len = (unsigned)jv1_bits(j, fn);
        uint64_t x = jv1_bits(j, len);
        unsigned sh = (W - lz - len) & (W - 1); /* Java shifts mod the width */
        v = (*prev ^ (x << sh)) & mask;
    }
    if (j->dead) return;
    *prev = v;
    if (is_nan_bits(v, W)) j->end = 1;
}

size_t tsf_gorilla_v1_java_misread(tsf_type type, const void *values, size_t n, const uint8_t *src, size_t len,
                                   uint64_t *java_bits)
{
    const unsigned W = v1_width(type), B = W / 8;
    const uint64_t nan = W == 32 ? 0x7fc00000u : 0x7ff8000000000000ull;
    size_t i = 1;
    for (; i < n && !is_nan_bits(canon_bits(values, i, W), W); i++) {}
    if (i >= n) return n; /* no NaN after the first value: the flag is set only by the closing NaN */
    if (len < B) return 0;
    jv1 j = {src, len, B, 0, 0, 0, 0};
    uint64_t prev = W == 32 ? tsf_load_le32(src) : tsf_load_le64(src);
    jv1_fill(&j);
    for (i = 0; i < n; i++) {
        uint64_t got = prev;
        jv1_next(&j, &prev, W); /* the read ahead */
        if (j.dead) got = nan;
        uint64_t want = canon_bits(values, i, W);
        if (got != want && !(is_nan_bits(got, W) && is_nan_bits(want, W))) {
            if (java_bits) *java_bits = got;
            return i;
        }
    }
    return n;
}
