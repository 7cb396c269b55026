/*
 * chimp.c - CHIMP (encoding code 11), Chimp128 as the reference writes it, spec §8.
 *
 * One MSB-first bit stream per page: the first value raw (32/64 bits), then per value one of
 *   `00` ring index                         same as the ring slot (storedLZ := W+1)
 *   `01` index, lead(3), sig(5|6), bits      xor with a ring slot whose xor has > THRESHOLD trailing
 *                                            zeros (storedLZ := W+1)
 *   `10` W-lz bits                           xor with the previous value, rounded lz as stored
 *   `11` lead(3), W-lz bits                  xor with the previous value, new rounded lz
 * The ring holds the last P values (64 for 32-bit, 128 for 64-bit); the encoder finds a candidate
 * through a hash of the low THRESHOLD+1 bits (`indices`, which starts all-zero, so unseen keys point
 * at the first value while fewer than P values were written - reproduced exactly). The page ends
 * with the end marker encoded as a value and always one flush byte, as GORILLA.
 *
 * Values are raw bits (FLOAT/DOUBLE through floatToRawIntBits/doubleToRawLongBits). The decoder is
 * count-driven (marker values are data) and requires the marker and flush byte after n values. Both
 * directions run one value at a time on the checked bit reader/writer (CHIMP has no speed target).
 */
#include <string.h>

#include "../common/bitio.h"
#include "codec.h"

static const uint8_t LEAD[8] = {0, 8, 12, 16, 18, 20, 22, 24};

typedef struct chimp_params {
    unsigned W;      /* value width */
    unsigned logp;   /* log2 of the ring size */
    unsigned thr;    /* THRESHOLD on trailing zeros */
    unsigned sigb;   /* significant-bit count field width */
    uint64_t marker; /* end marker bits */
} chimp_params;

static chimp_params params_of(tsf_type type)
{
    chimp_params p;
    int is32 = (TSF_TYPE_BIT(type) & (TSF_TYPES_INT32 | TSF_TYPE_BIT(TSF_FLOAT))) != 0;
    p.W = is32 ? 32 : 64;
    p.logp = is32 ? 6 : 7;
    p.thr = is32 ? 11 : 13;
    p.sigb = is32 ? 5 : 6;
    switch (type) {
    case TSF_FLOAT:
        p.marker = 0x7fc00000u;
        break;
    case TSF_DOUBLE:
        p.marker = 0x7ff8000000000000ull;
        break;
    default:
        p.marker = is32 ? 0x80000000u : 0x8000000000000000ull;
    }
    return p;
}

/* Leading zeros rounded down to one of LEAD[], and its 3-bit code. */
static unsigned round_lead(unsigned lz, unsigned *code)
{
    unsigned k = 0;
    while (k < 7 && LEAD[k + 1] <= lz) k++;
    *code = k;
    return LEAD[k];
}

static uint64_t ld(const void *values, size_t i, unsigned W)
{
    if (W == 32) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)values + 4 * i, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, (const uint8_t *)values + 8 * i, 8);
    return u;
}

static size_t chimp_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    chimp_params p = params_of(type);
    /* worst case per value: `11` + 3 + W bits, or `01` + index + 3 + sig + W - THRESHOLD bits */
    size_t per = 2 + p.logp + 3 + p.sigb + p.W;
    return (p.W + per * n + 8 + 7) / 8 + 4;
}

static tsf_status chimp_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                               size_t cap, size_t *written, tsf_error *err)
{
    const chimp_params p = params_of(type);
    const unsigned P = 1u << p.logp;
    const uint64_t mask = (1ull << (p.thr + 1)) - 1;
    size_t need = chimp_bound(type, n, 0);
    if (cap < need) return tsf_err(err, TSF_ERANGE, "CHIMP encode: dst capacity %zu < bound %zu", cap, need);
    /* indices: 2^(THRESHOLD+1) ints (8 KiB / 32 KiB) - allocated once per page */
    size_t nidx = (size_t)mask + 1;
    uint32_t *indices = tsf_calloc(&c->alloc, nidx, sizeof *indices);
    if (!indices) return tsf_err(err, TSF_ENOMEM, "CHIMP encode: out of memory");
    uint64_t ring[128] = {0};
    tsf_bitw w;
    tsf_bitw_init(&w, dst, cap);
    uint64_t first = n ? ld(values, 0, p.W) : p.marker;
    tsf_bitw_put(&w, first, p.W);
    ring[0] = first;
    indices[first & mask] = 0;
    uint32_t index = 0;
    unsigned slz = 0xffff; /* Integer.MAX_VALUE */
    for (size_t i = 1; i <= n; i++) {
        uint64_t v = i < n ? ld(values, i, p.W) : p.marker;
        size_t key = (size_t)(v & mask);
        uint32_t cand = indices[key];
        unsigned prev_slot = index % P, slot = prev_slot, tz = 0;
        uint64_t x;
        if (index - cand < P) {
            uint64_t t = v ^ ring[cand % P];
            tz = t ? (unsigned)TSF_CTZ64(t) : p.W;
            if (tz > p.thr) {
                slot = cand % P;
                x = t;
            } else {
                x = ring[prev_slot] ^ v;
            }
        } else {
            x = ring[prev_slot] ^ v;
        }
        if (x == 0) {
            tsf_bitw_put32(&w, slot, 2 + p.logp);
            slz = p.W + 1;
        } else {
            unsigned code, lz = round_lead((unsigned)TSF_CLZ64(x) - (64 - p.W), &code);
            if (tz > p.thr) {
                unsigned sig = p.W - lz - tz;
                uint64_t hdr = ((uint64_t)1 << (p.logp + 3 + p.sigb)) | ((uint64_t)slot << (3 + p.sigb)) |
                               ((uint64_t)code << p.sigb) | sig;
                tsf_bitw_put32(&w, hdr, 2 + p.logp + 3 + p.sigb);
                tsf_bitw_put(&w, x >> tz, sig);
                slz = p.W + 1;
            } else if (lz == slz) {
                tsf_bitw_put32(&w, 2, 2);
                tsf_bitw_put(&w, x, p.W - lz);
            } else {
                slz = lz;
                tsf_bitw_put32(&w, 24 + code, 5);
                tsf_bitw_put(&w, x, p.W - lz);
            }
        }
        ring[(index + 1) % P] = v;
        index++;
        indices[key] = index;
    }
    size_t bits = tsf_bitw_bits(&w, dst);
    tsf_bitw_put32(&w, 0, 8 - (unsigned)(bits & 7)); /* always one flush byte */
    uint8_t *end = tsf_bitw_flush(&w);
    tsf_free(&c->alloc, indices, nidx * sizeof *indices);
    if (w.overflow) return tsf_err(err, TSF_ERANGE, "CHIMP encode: dst overflow");
    *written = (size_t)(end - dst);
    return TSF_OK;
}

/* Decodes one value after the first into *v; -1 on truncation or inconsistent fields. */
static int chimp_next(tsf_bitr *r, const chimp_params *p, uint64_t *ring, unsigned *cur, unsigned *slz,
                      uint64_t *v)
{
    const unsigned P = 1u << p->logp;
    unsigned ctrl = (unsigned)tsf_bitr_read57(r, 2);
    uint64_t x = *v;
    switch (ctrl) {
    case 3:
        *slz = LEAD[tsf_bitr_read57(r, 3)];
        x ^= tsf_bitr_read(r, p->W - *slz);
        break;
    case 2:
        if (*slz >= p->W) return -1; /* no leading-zero count stored yet */
        x ^= tsf_bitr_read(r, p->W - *slz);
        break;
    case 1: {
        unsigned idx = (unsigned)tsf_bitr_read57(r, p->logp);
        unsigned lz = LEAD[tsf_bitr_read57(r, 3)];
        unsigned sig = (unsigned)tsf_bitr_read57(r, p->sigb);
        if (sig == 0) sig = p->W;
        if (lz + sig > p->W) return -1;
        *slz = lz;
        x = ring[idx] ^ (tsf_bitr_read(r, sig) << (p->W - sig - lz));
        break;
    }
    default:
        x = ring[tsf_bitr_read57(r, p->logp) & (P - 1)];
    }
    if (r->overrun) return -1;
    *cur = (*cur + 1) & (P - 1);
    ring[*cur] = x;
    *v = x;
    return 0;
}

static tsf_status chimp_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                               void *values, size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    const chimp_params p = params_of(type);
    *consumed = 0;
    if (n == 0 && len == 0) return TSF_OK;
    tsf_bitr r;
    tsf_bitr_init(&r, src, len);
    uint64_t ring[128] = {0}, v = tsf_bitr_read(&r, p.W);
    if (r.overrun) return tsf_err(err, TSF_ECORRUPT, "CHIMP: truncated first value at byte offset 0");
    unsigned cur = 0, slz = 0xffff;
    ring[0] = v;
    for (size_t i = 0;; i++) {
        if (i == n) break;
        if (i > 0) {
            size_t at = r.pos;
            if (chimp_next(&r, &p, ring, &cur, &slz, &v) != 0)
                return tsf_err(err, TSF_ECORRUPT, "CHIMP: %s at value %zu, byte offset %zu",
                               r.overrun ? "truncated stream" : "invalid leading/length fields", i, at >> 3);
        }
        if (p.W == 32) {
            uint32_t u = (uint32_t)v;
            memcpy((uint8_t *)values + 4 * i, &u, 4);
        } else {
            memcpy((uint8_t *)values + 8 * i, &v, 8);
        }
    }
    size_t at = r.pos;
    if (n > 0 && chimp_next(&r, &p, ring, &cur, &slz, &v) != 0)
        return tsf_err(err, TSF_ECORRUPT, "CHIMP: missing end marker after %zu values, byte offset %zu", n,
                       at >> 3);
    if (v != p.marker)
        return tsf_err(err, TSF_ECORRUPT,
                       "CHIMP: value after the last one is not the end marker (byte offset %zu)", at >> 3);
    size_t used = (r.pos >> 3) + 1;
    if (used > len) return tsf_err(err, TSF_ECORRUPT, "CHIMP: missing flush byte at byte offset %zu", len);
    *consumed = used;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_chimp = {
    .encoding = TSF_ENC_CHIMP,
    .encode_types = TSF_TYPES_NUMERIC,
    .decode_types = TSF_TYPES_NUMERIC,
    .bound = chimp_bound,
    .encode = chimp_encode,
    .decode = chimp_decode,
    .count = NULL,
};
