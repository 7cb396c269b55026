/*
 * gorilla.c - GORILLA (encoding code 8, the reference's "V2" Gorilla XOR codec), spec §4.1-§4.3.
 *
 * One MSB-first bit stream per page: the first value raw (32 or 64 bits), then per value a control
 * code `0` (same value), `10` (xor fits the stored leading/trailing window) or `11` (new window:
 * lz in 5/6 bits, len-1 in 5/6 bits, then the meaningful bits). The page ends with the end marker
 * encoded as a value and ALWAYS one flush byte (an extra 0x00 when the bits end on a byte).
 * INT32/DATE and FLOAT (raw bits) use the 32-bit variant, INT64/TIMESTAMP and DOUBLE the 64-bit one.
 *
 * Two implementations that agree bit for bit:
 *  - TSF_PATH_PER_VALUE: a value-at-a-time iterator / encoder over the checked bit reader and writer
 *    (the reference's shape, kept as the baseline for the benchmark and as the safe tail);
 *  - the batch paths: a decoder whose general loop has no data-dependent branch (conditional moves
 *    over a 128-bit window; only while 16 bytes remain, the iterator finishes the page), with
 *    faster loops for runs of `10` and of repeats, and an encoder with a 64-bit accumulator that
 *    stores 8 bytes per field (dst is sized by the bound); 64-bit values take enc64_fast (one test
 *    per value that reuses the window), which also encodes a page given as two spans for the writer
 *    (tsf_gorilla_encode_two).
 * The AVX2/AVX-512 paths run the same batch kernels compiled for BMI1/BMI2/LZCNT.
 *
 * The decoder is count-driven: values equal to the end marker are real data. After the n values
 * it requires the encoded end marker and the flush byte (so a truncated stream is TSF_ECORRUPT).
 */
#include <string.h>

#include "codec.h"
#include "gorilla_core.h"

/* ---- value access (raw bits of the caller's array) -------------------------------------------- */

TSF_INLINE uint64_t ld_bits(const void *values, size_t i, unsigned W)
{
    if (W == 32) {
        uint32_t v;
        memcpy(&v, (const uint8_t *)values + i * 4, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, (const uint8_t *)values + i * 8, 8);
    return v;
}

TSF_INLINE void st_bits(void *values, size_t i, uint64_t v, unsigned W)
{
    if (W == 32) {
        uint32_t u = (uint32_t)v;
        memcpy((uint8_t *)values + i * 4, &u, 4);
    } else {
        memcpy((uint8_t *)values + i * 8, &v, 8);
    }
}

static unsigned width_of(tsf_type type)
{
    return (TSF_TYPE_BIT(type) & (TSF_TYPES_INT32 | TSF_TYPE_BIT(TSF_FLOAT))) ? 32 : 64;
}

uint64_t tsf_gorilla_marker(tsf_type type)
{
    switch (type) {
    case TSF_FLOAT:
        return 0x7fc00000u;
    case TSF_DOUBLE:
        return 0x7ff8000000000000ull;
    case TSF_INT32:
    case TSF_DATE:
        return 0x80000000u;
    default:
        return 0x8000000000000000ull;
    }
}

/* ---- per-value encoder (checked bit writer) --------------------------------------------------- */

void tsf_gorilla_enc_init(tsf_gorilla_enc *e, unsigned W, uint8_t *dst, size_t cap)
{
    tsf_bitw_init(&e->w, dst, cap);
    e->W = W;
    e->first = 1;
    e->prev = 0;
    e->lz = 65; /* "infinite": the first non-zero xor always opens a window */
    e->tz = 0;
}

void tsf_gorilla_enc_put(tsf_gorilla_enc *e, uint64_t v)
{
    const unsigned W = e->W, fb = W == 32 ? 5 : 6;
    if (e->first) {
        tsf_bitw_put(&e->w, v, W);
        e->prev = v;
        e->first = 0;
        return;
    }
    uint64_t x = e->prev ^ v;
    e->prev = v;
    if (x == 0) {
        tsf_bitw_put32(&e->w, 0, 1);
        return;
    }
    unsigned lz = (unsigned)TSF_CLZ64(x) - (64 - W), tz = (unsigned)TSF_CTZ64(x);
    if (lz >= e->lz && tz >= e->tz) {
        tsf_bitw_put32(&e->w, 2, 2);
        tsf_bitw_put(&e->w, x >> e->tz, W - e->lz - e->tz);
    } else {
        unsigned len = W - lz - tz;
        tsf_bitw_put32(&e->w, 3, 2);
        tsf_bitw_put32(&e->w, lz, fb);
        tsf_bitw_put32(&e->w, len - 1, fb);
        tsf_bitw_put(&e->w, x >> tz, len);
        e->lz = lz;
        e->tz = tz;
    }
}

size_t tsf_gorilla_enc_finish(tsf_gorilla_enc *e, uint64_t marker, uint8_t *start)
{
    tsf_gorilla_enc_put(e, marker);
    size_t bits = tsf_bitw_bits(&e->w, start);
    tsf_bitw_put32(&e->w, 0, 8 - (unsigned)(bits & 7)); /* always one flush byte */
    return (size_t)(tsf_bitw_flush(&e->w) - start);
}

/* ---- per-value decoder (checked bit reader) --------------------------------------------------- */

void tsf_gorilla_iter_init(tsf_gorilla_iter *it, unsigned W, const uint8_t *src, size_t len)
{
    tsf_bitr_init(&it->r, src, len);
    it->W = W;
    it->started = 0;
    it->prev = 0;
    it->lz = 64; /* no window yet: a `10` before any `11` is corrupt */
    it->len = 1;
}

int tsf_gorilla_iter_next(tsf_gorilla_iter *it, uint64_t *out)
{
    const unsigned W = it->W, fb = W == 32 ? 5 : 6;
    if (!it->started) {
        it->prev = tsf_bitr_read(&it->r, W);
        it->started = 1;
    } else if (tsf_bitr_read57(&it->r, 1)) {
        if (tsf_bitr_read57(&it->r, 1)) {
            unsigned lz = (unsigned)tsf_bitr_read57(&it->r, fb);
            unsigned len = (unsigned)tsf_bitr_read57(&it->r, fb) + 1;
            if (lz + len > W) return -1;
            it->lz = lz;
            it->len = len;
        } else if (it->lz + it->len > W) {
            return -1;
        }
        uint64_t bits = tsf_bitr_read(&it->r, it->len);
        it->prev ^= bits << (W - it->lz - it->len);
    }
    if (it->r.overrun) return -1;
    *out = it->prev;
    return 0;
}

/* ---- batch encoder ---------------------------------------------------------------------------- */

/* Pending bits sit left-aligned in acc (n < 8 between puts); every put stores 8 bytes. */
typedef struct fastw {
    uint8_t *p;
    uint64_t acc;
    unsigned n;
} fastw;

/* Appends the low k bits of v (v < 2^k), 1 <= k <= 56. */
TSF_INLINE void fw_put(fastw *w, uint64_t v, unsigned k)
{
    w->acc |= v << (64 - w->n - k);
    w->n += k;
    tsf_store_be64(w->p, w->acc);
    w->p += w->n >> 3;
    w->acc <<= (w->n & 56);
    w->n &= 7;
}

/* Appends k <= 64 bits. */
TSF_INLINE void fw_put_wide(fastw *w, uint64_t v, unsigned k)
{
    if (TSF_UNLIKELY(k > 56)) {
        fw_put(w, v >> 32, k - 32);
        fw_put(w, v & 0xffffffffu, 32);
    } else {
        fw_put(w, v, k);
    }
}

TSF_INLINE size_t enc_batch(const void *values, size_t n, uint64_t marker, uint8_t *dst, unsigned W,
                            int compact)
{
    const unsigned fb = W == 32 ? 5 : 6;
    fastw w = {dst, 0, 0};
    uint64_t prev = n ? ld_bits(values, 0, W) : marker;
    fw_put_wide(&w, prev, W);
    unsigned slz = 65, stz = 0;
    for (size_t i = 1; i <= n; i++) {
        uint64_t v = i < n ? ld_bits(values, i, W) : marker;
        uint64_t x = prev ^ v;
        prev = v;
        /* x | 1 and x | 2^(W-1) keep clz/ctz of a non-zero x and make them defined for 0 */
        unsigned lz = (unsigned)TSF_CLZ64(x | 1) - (64 - W);
        unsigned tz = (unsigned)TSF_CTZ64(x | (1ull << (W - 1)));
        unsigned len = W - lz - tz;
        /* compact (level 1): reuse only when it is not dearer than a new window */
        int reuse = lz >= slz && tz >= stz && (!compact || W - slz - stz <= 2 * fb + len),
            keep = reuse || x == 0;
        uint64_t hdr = reuse ? 2u : ((uint64_t)3 << (2 * fb)) | (lz << fb) | (len - 1);
        unsigned hlen = reuse ? 2u : 2 + 2 * fb;
        unsigned sh = reuse ? stz : tz;
        unsigned plen = reuse ? W - slz - stz : len;
        slz = keep ? slz : lz;
        stz = keep ? stz : tz;
        if (x == 0) {
            hdr = 0;
            hlen = 1;
            plen = 0;
            sh = 0;
        }
        uint64_t pay = x >> sh;
        if (W == 32 || hlen + plen <= 56) {
            fw_put(&w, (hdr << plen) | pay, hlen + plen);
        } else {
            fw_put(&w, hdr, hlen);
            fw_put_wide(&w, pay, plen);
        }
    }
    /* flush: the partial byte, or an extra 0x00 when aligned */
    fw_put(&w, 0, 8 - w.n);
    return (size_t)(w.p - dst);
}

/* ---- 64-bit batch encoder, levels 0 and 1 ------------------------------------------------------ */

/*
 * The same bits as enc_batch(W = 64), in fewer instructions. The common value (its xor fits the stored
 * window, and at level 1 reusing it is not dearer than a new window) takes one test: no bit of the xor
 * outside the window, and at level 1 lz + tz <= thr = slz + stz + 12 (reuse iff W - slz - stz <=
 * 2 * 6 + len); at level 0 a non-zero xor. A repeat's xor has lz + tz = 128 (lzcnt/tzcnt) or 126
 * (clz/ctz of x | 1 and x | 2^63), so it never passes at level 1. `10` and the window's width are
 * precomputed (hdr2, rk); windows up to 54 bits wide make one <= 56-bit put, wider ones two.
 * Everything else (repeats, new windows, the end marker) goes through enc_one, enc_batch's rule for
 * one value, after which the window's constants are recomputed.
 */
TSF_INLINE void enc_one(fastw *w, uint64_t x, unsigned *slz, unsigned *stz, int compact)
{
    if (x == 0) {
        fw_put(w, 0, 1);
        return;
    }
    unsigned lz = (unsigned)TSF_CLZ64(x), tz = (unsigned)TSF_CTZ64(x), len = 64 - lz - tz;
    if (lz >= *slz && tz >= *stz && (!compact || 64 - *slz - *stz <= 12 + len)) {
        unsigned plen = 64 - *slz - *stz;
        if (plen <= 54) {
            fw_put(w, ((uint64_t)2 << plen) | (x >> *stz), 2 + plen);
        } else {
            fw_put(w, 2, 2);
            fw_put_wide(w, x >> *stz, plen);
        }
        return;
    }
    uint64_t hdr = ((uint64_t)3 << 12) | (lz << 6) | (len - 1);
    if (len <= 42) {
        fw_put(w, (hdr << len) | (x >> tz), 14 + len);
    } else {
        fw_put(w, hdr, 14);
        fw_put_wide(w, x >> tz, len);
    }
    *slz = lz;
    *stz = tz;
}

/* lzcnt / tzcnt, 64 for 0 (bmi = 1: the x86 BMI paths); else clz(x | 1) / ctz(x | 2^63), 63 for 0. */
TSF_INLINE uint64_t gor_lz(uint64_t x, int bmi)
{
    uint64_t r;
#if defined(TSF_X86) && (defined(__GNUC__) || defined(__clang__))
    if (bmi) {
        __asm__("lzcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
        return r;
    }
#endif
    (void)bmi;
    r = (uint64_t)TSF_CLZ64(x | 1);
    return r;
}

TSF_INLINE uint64_t gor_tz(uint64_t x, int bmi)
{
    uint64_t r;
#if defined(TSF_X86) && (defined(__GNUC__) || defined(__clang__))
    if (bmi) {
        __asm__("tzcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
        return r;
    }
#endif
    (void)bmi;
    r = (uint64_t)TSF_CTZ64(x | (1ull << 63));
    return r;
}

/* The values are a[0..na) followed by b[0..nb) (the writer's pending half page and the tablet's rows). */
TSF_INLINE size_t enc64_fast(const void *a, size_t na, const void *b, size_t nb2, uint64_t marker,
                             uint8_t *dst, int compact, int bmi)
{
    fastw w = {dst, 0, 0};
    const void *first = na ? a : b;
    uint64_t prev = na + nb2 ? ld_bits(first, 0, 64) : marker;
    fw_put_wide(&w, prev, 64);
    unsigned slz = 65, stz = 0;
    /* the stored window as the fast path uses it: outside = the bits outside it (all ones: none yet) */
    uint64_t outside = ~0ull, hdr2 = 0, thr = 0, rk = 0, sh = 0;
    uint8_t *p = w.p;
    uint64_t acc = w.acc, nb = w.n;
    for (int s = 0; s < 2; s++) {
        const size_t cnt = s ? nb2 : na;
        if (!cnt) continue;
        const uint8_t *src = (const uint8_t *)(s ? b : a), *end = src + cnt * 8;
        for (const uint8_t *q = src == first ? src + 8 : src; q < end; q += 8) {
            uint64_t v;
            memcpy(&v, q, 8);
            uint64_t x = prev ^ v;
            prev = v;
            int fast = (x & outside) == 0;
            if (compact) { /* level 1: also not dearer than a new window (a repeat's lz + tz is > thr) */
                fast &= gor_lz(x, bmi) + gor_tz(x, bmi) <= thr;
            } else {
                fast &= x != 0;
            }
            if (TSF_LIKELY(fast)) {
                if (TSF_LIKELY(rk <= 56)) { /* fw_put of `10` + payload; 64 - t as a shift count mod 64 */
                    uint64_t t = nb + rk;
                    acc |= (hdr2 | (x >> sh)) << ((0 - t) & 63);
                    tsf_store_be64(p, acc);
                    p += t >> 3;
                    acc <<= t & 56;
                    nb = t & 7;
                    continue;
                }
                w.p = p; /* a window wider than 54 bits: `10`, then the payload in two puts */
                w.acc = acc;
                w.n = (unsigned)nb;
                fw_put(&w, 2, 2);
                fw_put_wide(&w, x >> sh, (unsigned)rk - 2);
            } else {
                w.p = p;
                w.acc = acc;
                w.n = (unsigned)nb;
                enc_one(&w, x, &slz, &stz, compact);
            }
            p = w.p;
            acc = w.acc;
            nb = w.n;
            unsigned slen = 64 - slz - stz; /* wraps when slz = 65 (no window yet) */
            outside = slen < 64 ? ~(((1ull << slen) - 1) << stz) : slen == 64 ? 0 : ~0ull;
            thr = slz + stz + 12;
            hdr2 = (uint64_t)2 << (slen & 63);
            rk = 2 + (uint64_t)slen;
            sh = stz;
        }
    }
    w.p = p;
    w.acc = acc;
    w.n = (unsigned)nb;
    if (na + nb2) enc_one(&w, prev ^ marker, &slz, &stz, compact);
    fw_put(&w, 0, 8 - w.n); /* flush: the partial byte, or an extra 0x00 when aligned */
    return (size_t)(w.p - dst);
}

/* ---- compact encoder (tsf_codec_options.gorilla_compact) ----------------------------------------- */

/*
 * The spec's encoder reuses the stored window whenever the xor fits it and otherwise opens exactly the
 * xor's window; the decoder reads any choice (`10` with any window that holds the xor, `11` with any
 * lz/len that holds it). Level 1 picks, per value, the cheaper of the two (a `10` costs 2 + the stored
 * width, a `11` costs 2 + 2*fb + its width): one more condition in the batch encoder (enc_batch).
 * Level 2 (enc_lookahead) prices each choice over the next GOR_LOOK values
 * too (each costs 1 bit if it repeats, 2 + width if it fits the window, else a new exact window) and
 * also tries windows 1..3 bits wider at the top and with no trailing zeros; the cheapest wins. The
 * W0 walk (pages of 10,000 doubles) goes from 53.8 bits per value to 50.6 (level 1) and 49.6 (level 2).
 */
#define GOR_LOOK 4

typedef struct gor_next {
    unsigned lz, tz, miss; /* miss: cost of a new exact window */
    int zero;
} gor_next;

TSF_INLINE unsigned look_cost(const gor_next *g, size_t h, unsigned L, unsigned T, unsigned W)
{
    unsigned c = 0, wd = W - L - T;
    for (size_t k = 0; k < h; k++) {
        unsigned fit = g[k].zero ? 1 : 2 + wd; /* a repeat fits any window */
        c += ((g[k].lz >= L) & (g[k].tz >= T)) ? fit : g[k].miss;
    }
    return c;
}

static size_t enc_lookahead(const void *values, size_t n, uint64_t marker, uint8_t *dst, unsigned W)
{
    const unsigned fb = W == 32 ? 5 : 6, hn = 2 + 2 * fb;
    fastw w = {dst, 0, 0};
    uint64_t prev = n ? ld_bits(values, 0, W) : marker;
    fw_put_wide(&w, prev, W);
    unsigned slz = 65, stz = 0; /* no window yet: nothing fits */
    for (size_t i = 1; i <= n; i++) {
        uint64_t v = i < n ? ld_bits(values, i, W) : marker;
        uint64_t x = prev ^ v;
        prev = v;
        if (x == 0) {
            fw_put(&w, 0, 1);
            continue;
        }
        unsigned lz = (unsigned)TSF_CLZ64(x) - (64 - W), tz = (unsigned)TSF_CTZ64(x);
        int fits = lz >= slz && tz >= stz;
        unsigned L = lz, T = tz;
        gor_next g[GOR_LOOK];
        size_t h = 0;
        for (uint64_t pv = v; h < GOR_LOOK && i + 1 + h <= n; h++) {
            uint64_t nv = i + 1 + h < n ? ld_bits(values, i + 1 + h, W) : marker, nx = pv ^ nv;
            pv = nv;
            g[h].zero = nx == 0;
            g[h].lz = (unsigned)TSF_CLZ64(nx | 1) - (64 - W);
            g[h].tz = (unsigned)TSF_CTZ64(nx | (1ull << (W - 1)));
            g[h].miss = hn + W - g[h].lz - g[h].tz;
            if (nx == 0) g[h].lz = g[h].tz = 0, g[h].miss = 1;
        }
        unsigned best = hn + W - lz - tz + look_cost(g, h, lz, tz, W);
        for (unsigned a = 0; a <= 3 && a <= lz; a++)
            for (unsigned t = tz;; t = 0) {
                if ((a || t != tz) && lz - a + t < W) {
                    unsigned c = hn + W - (lz - a) - t + look_cost(g, h, lz - a, t, W);
                    if (c < best) {
                        best = c;
                        L = lz - a;
                        T = t;
                    }
                }
                if (t == 0) break;
            }
        int reuse = fits && 2 + W - slz - stz + look_cost(g, h, slz, stz, W) <= best;
        uint64_t hdr;
        unsigned hlen, plen, sh;
        if (reuse) {
            hdr = 2;
            hlen = 2;
            plen = W - slz - stz;
            sh = stz;
        } else {
            plen = W - L - T;
            hdr = ((uint64_t)3 << (2 * fb)) | (L << fb) | (plen - 1);
            hlen = hn;
            sh = T;
            slz = L;
            stz = T;
        }
        fw_put(&w, hdr, hlen);
        fw_put_wide(&w, x >> sh, plen);
    }
    fw_put(&w, 0, 8 - w.n); /* flush: the partial byte, or an extra 0x00 when aligned */
    return (size_t)(w.p - dst);
}

/* ---- batch decoder ---------------------------------------------------------------------------- */

/*
 * 64-bit batch decoder. Decoding is a serial chain (each value's position depends on the previous
 * header), and on `mixed` data the three control codes come in random order, so the general loop has
 * no data-dependent branch: all three outcomes are computed and the right one picked with conditional
 * moves. It keeps a 128-bit window (two big-endian loads at the value's byte) and cuts the next
 * header out of it with a funnel shift, so the loads stay off the chain. The loop is bound by ALU
 * throughput, so the representation saves operations: the stored window is (q = -len, tz), shifts
 * use counts mod 64 (x86 shifts do that for free), so the xor is (payload >> q) << tz, a new window
 * is q = ~field, tz = sum ^ 63 (sum = lz + len - 1; 64 and up when lz + len > 64, i.e. invalid), and
 * the next header is at t - q.
 *
 * Predictable streams take faster loops: after a chunk of GOR_CHUNK values that moved exactly
 * chunk * (2 + len) bits (all `10`, as the W0 walk, 99.8% `10`), a loop that only handles `10` runs
 * until another code appears (one mispredicted branch), with one load per value when the window is
 * at most 55 bits wide; after a chunk that moved one bit per value (all `0`), runs of repeats are
 * counted 50 at a time with one clz. A wrong guess only costs time: those loops check every code.
 *
 * Invalid windows set bits 6..63 of `errv`; the caller then reruns the checked iterator to name the
 * offset. Loads stay inside src: values are decoded in runs of at most (bytes left - 16) / 10 (a
 * value moves at most 78 bits = 10 bytes past its byte); the iterator finishes the page.
 */
#define GOR_CHUNK 16

/*
 * Conditional moves: a branch here would mispredict on mixed data, and compilers turn plain ?: into
 * branches, so on x86-64 they are spelled out (baseline instructions); elsewhere mask arithmetic.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GOR_CMOV 1
#endif

/* If c == -1 (control code `11`, from (int64_t)w >> 62): *a = na, *b = nb, *d = nd. */
TSF_INLINE void sel3_new(int64_t c, uint64_t na, uint64_t *a, uint64_t nb, uint64_t *b, uint64_t nd,
                         uint64_t *d)
{
#ifdef GOR_CMOV
    __asm__("cmp $-1, %[c]\n\tcmove %[na], %[a]\n\tcmove %[nb], %[b]\n\tcmove %[nd], %[d]"
            : [a] "+r"(*a), [b] "+r"(*b), [d] "+r"(*d)
            : [c] "r"(c), [na] "r"(na), [nb] "r"(nb), [nd] "r"(nd)
            : "cc");
#else
    uint64_t m = 0 - (uint64_t)(c == -1);
    *a ^= (*a ^ na) & m;
    *b ^= (*b ^ nb) & m;
    *d ^= (*d ^ nd) & m;
#endif
}

/* If the top bit of w is set (`10` or `11`): *a = na, *b = nb. */
TSF_INLINE void sel2_neg(uint64_t w, uint64_t na, uint64_t *a, uint64_t nb, uint64_t *b)
{
#ifdef GOR_CMOV
    __asm__("test %[w], %[w]\n\tcmovs %[na], %[a]\n\tcmovs %[nb], %[b]"
            : [a] "+r"(*a), [b] "+r"(*b)
            : [w] "r"(w), [na] "r"(na), [nb] "r"(nb)
            : "cc");
#else
    uint64_t m = 0 - (w >> 63);
    *a ^= (*a ^ na) & m;
    *b ^= (*b ^ nb) & m;
#endif
}

/* o > 63 ? a : b */
TSF_INLINE uint64_t sel_gt63(uint64_t o, uint64_t a, uint64_t b)
{
#ifdef GOR_CMOV
    __asm__("cmp $63, %[o]\n\tcmova %[a], %[b]" : [b] "+r"(b) : [o] "r"(o), [a] "r"(a) : "cc");
    return b;
#else
    return b ^ ((a ^ b) & (0 - (uint64_t)(o > 63)));
#endif
}

/* Rotate right by a constant (one rorx with BMI2). */
TSF_INLINE uint64_t rotr64(uint64_t x, unsigned r)
{
    return (x >> r) | (x << (64 - r));
}

/* The 64 bits at bit sh (0..7) of the big-endian pair hi:lo. */
TSF_INLINE uint64_t win_at(uint64_t hi, uint64_t lo, unsigned sh)
{
    return (hi << sh) | ((lo >> 1) >> (63 - sh));
}

TSF_INLINE size_t dec_batch64(tsf_gorilla_iter *it, void *values, size_t i, size_t n, int *bad)
{
    const uint8_t *base = it->r.base;
    const size_t len = it->r.len;
    if (len < 16 || i >= n) return i;
    const size_t limit = (len - 16) * 8; /* last bit position whose 16-byte window is inside src */
    size_t pos = it->r.pos;
    uint64_t prev = it->prev;
    int have = it->lz + it->len <= 64;
    if (!have) { /* no window yet: only `0` (repeat) or `11` may come */
        while (i < n && pos <= limit) {
            unsigned b2 = (unsigned)((tsf_load_be64(base + (pos >> 3)) << (pos & 7)) >> 62);
            if (b2 >= 2) {
                *bad |= b2 == 2;
                break;
            }
            st_bits(values, i++, prev, 64);
            pos++;
        }
        if (*bad || i == n || pos > limit) {
            it->r.pos = pos;
            return i;
        }
    }
    uint64_t q = have ? 0 - (uint64_t)it->len : 0, stz = have ? 64 - it->lz - it->len : 0;
    uint64_t errv = 0;
    const uint8_t *p = base + (pos >> 3);
    const uint8_t *const end16 = base + len - 16; /* the last byte a 16-byte window may start at */
    uint64_t sh = pos & 7;
    uint64_t hi = tsf_load_be64(p), lo = tsf_load_be64(p + 8);
    uint64_t w = win_at(hi, lo, (unsigned)sh);
    for (;;) {
        size_t k = (size_t)(end16 - p) / 10; /* values whose next windows stay inside src */
        if (k > n - i) k = n - i;
        if (k == 0) break;
        if (k > GOR_CHUNK) k = GOR_CHUNK;
        have = 1; /* the first value decoded here opens a window if none existed */
        const size_t bit0 = (size_t)(p - base) * 8 + sh;
        for (size_t e = i + k; i < e; i++) {
            uint64_t field = rotr64(w, 50) & 63, sum = (rotr64(w, 56) & 63) + field;
            uint64_t t = sh + 2; /* payload bit in the window: sh + 2 (`10`) or sh + 14 (`11`) */
            sel3_new((int64_t)w >> 62, ~field, &q, sum ^ 63, &stz, sh + 14, &t);
            errv |= stz;
            uint64_t pay = (hi << t) | (lo >> ((0 - t) & 63));
            uint64_t x = (pay >> (q & 63)) << (stz & 63), o = sh + 1;
            sel2_neg(w, t - q, &o, prev ^ x, &prev); /* o: next header bit in the window, 1..85 */
            st_bits(values, i, prev, 64);
            uint64_t wa = (hi << (o & 63)) | (lo >> ((0 - o) & 63)), wb = lo << (o & 63);
            w = sel_gt63(o, wb, wa);
            p += o >> 3;
            sh = o & 7;
            hi = tsf_load_be64(p);
            lo = tsf_load_be64(p + 8);
        }
        if (errv >> 6) break; /* an invalid window: the caller reruns the checked iterator */
        const size_t moved = (size_t)(p - base) * 8 + sh - bit0;
        const uint64_t adv = 2 - q; /* 2 + len: the bits of a `10` */
        if (moved == k * adv) {     /* all `10` (or a rare mix of the same length): the `10` loop */
            size_t m = (size_t)(end16 - p) / 10;
            if (m > n - i) m = n - i;
            size_t e = i + m;
            if (adv <= 57) { /* header + payload inside one 64-bit load at any sh */
                for (; i < e; i++) {
                    uint64_t u = tsf_load_be64(p) << sh;
                    if ((u >> 62) != 2) break;
                    prev ^= ((u << 2) >> (q & 63)) << stz;
                    st_bits(values, i, prev, 64);
                    uint64_t o = sh + adv;
                    p += o >> 3;
                    sh = o & 7;
                }
            } else {
                for (; i < e; i++) {
                    uint64_t a = tsf_load_be64(p), b = tsf_load_be64(p + 8);
                    if (((a << sh) >> 62) != 2) break;
                    uint64_t pay = (a << (sh + 2)) | (b >> (62 - sh));
                    prev ^= (pay >> (q & 63)) << stz;
                    st_bits(values, i, prev, 64);
                    uint64_t o = sh + adv;
                    p += o >> 3;
                    sh = o & 7;
                }
            }
            hi = tsf_load_be64(p);
            lo = tsf_load_be64(p + 8);
            w = win_at(hi, lo, (unsigned)sh);
        } else if (moved == k) {
            /* all `0`: runs of repeats, 50 per clz; a run moves at most 57 bits, so the reload
               stays inside src */
            while (i < n && end16 - p >= 7) {
                uint64_t run = (uint64_t)TSF_CLZ64(win_at(hi, lo, (unsigned)sh) | (1ull << 13)); /* 0..50 */
                if (run > n - i) run = n - i;
                for (size_t e = i + run; i < e; i++) st_bits(values, i, prev, 64);
                uint64_t o = sh + run;
                p += o >> 3;
                sh = o & 7;
                hi = tsf_load_be64(p);
                lo = tsf_load_be64(p + 8);
                if (run < 50) break;
            }
            w = win_at(hi, lo, (unsigned)sh);
        }
    }
    pos = (size_t)(p - base) * 8 + sh;
    it->r.pos = pos;
    it->prev = prev;
    if (have) {
        it->len = (unsigned)(0 - q);
        it->lz = 64 - it->len - (unsigned)stz;
    }
    *bad |= (errv >> 6) != 0;
    return i;
}

/* 32-bit batch decoder: one load per value holds a whole code (57 valid bits >= 2 + 5 + 5 + 32); the
   control code selects with conditional moves, as in the 64-bit loop. */
TSF_INLINE size_t dec_batch32(tsf_gorilla_iter *it, void *values, size_t i, size_t n, int *bad)
{
    const uint8_t *base = it->r.base;
    const size_t len = it->r.len;
    if (len < 8) return i;
    const size_t last = len - 8;
    size_t pos = it->r.pos;
    uint64_t prev = (uint32_t)it->prev, slz = it->lz, slen = it->len, err = 0;
    for (; i < n && (pos >> 3) <= last; i++) {
        uint64_t w = tsf_load_be64(base + (pos >> 3)) << (pos & 7), hdr = 2;
        sel3_new((int64_t)w >> 62, rotr64(w, 57) & 31, &slz, (rotr64(w, 52) & 31) + 1, &slen, 12, &hdr);
        uint64_t pay = (w << hdr) >> 32;
        uint64_t x = (pay >> (slz & 31)) & ((uint64_t)0xffffffffu << ((32 - slz - slen) & 31));
        err |= ((slz + slen + 31) >> 6) & (w >> 63); /* lz + len > 32 on a `10` or `11` */
        uint64_t adv = 1;
        sel2_neg(w, hdr + slen, &adv, prev ^ x, &prev);
        pos += adv;
        st_bits(values, i, prev, 32);
    }
    it->r.pos = pos;
    it->prev = prev;
    it->lz = (unsigned)slz;
    it->len = (unsigned)slen;
    *bad |= (int)err;
    return i;
}

static size_t enc64_scalar2(const void *v, size_t n, const void *v2, size_t n2, uint64_t m, uint8_t *d,
                            int cmp)
{
    return cmp ? enc64_fast(v, n, v2, n2, m, d, 1, 0) : enc64_fast(v, n, v2, n2, m, d, 0, 0);
}
static size_t enc64_scalar(const void *v, size_t n, uint64_t m, uint8_t *d, int cmp)
{
    return enc64_scalar2(v, n, NULL, 0, m, d, cmp);
}
/* The previous batch kernel: TSF_PATH_PER_VALUE at level 1 (tests compare it with enc64_fast). */
static size_t enc64_batch(const void *v, size_t n, uint64_t m, uint8_t *d)
{
    return enc_batch(v, n, m, d, 64, 1);
}
static size_t enc32_scalar(const void *v, size_t n, uint64_t m, uint8_t *d, int cmp)
{
    return cmp ? enc_batch(v, n, m, d, 32, 1) : enc_batch(v, n, m, d, 32, 0);
}
static size_t dec64_scalar(tsf_gorilla_iter *it, void *v, size_t i, size_t n, int *bad)
{
    return dec_batch64(it, v, i, n, bad);
}
static size_t dec32_scalar(tsf_gorilla_iter *it, void *v, size_t i, size_t n, int *bad)
{
    return dec_batch32(it, v, i, n, bad);
}
#if defined(TSF_X86)
#define TSF_GOR_BMI TSF_TARGET("bmi,bmi2,lzcnt,movbe")
TSF_GOR_BMI static size_t enc64_bmi2(const void *v, size_t n, const void *v2, size_t n2, uint64_t m,
                                     uint8_t *d, int cmp)
{
    return cmp ? enc64_fast(v, n, v2, n2, m, d, 1, 1) : enc64_fast(v, n, v2, n2, m, d, 0, 1);
}
static size_t enc64_bmi(const void *v, size_t n, uint64_t m, uint8_t *d, int cmp)
{
    return enc64_bmi2(v, n, NULL, 0, m, d, cmp);
}
TSF_GOR_BMI static size_t enc32_bmi(const void *v, size_t n, uint64_t m, uint8_t *d, int cmp)
{
    return cmp ? enc_batch(v, n, m, d, 32, 1) : enc_batch(v, n, m, d, 32, 0);
}
TSF_GOR_BMI static size_t dec64_bmi(tsf_gorilla_iter *it, void *v, size_t i, size_t n, int *bad)
{
    return dec_batch64(it, v, i, n, bad);
}
TSF_GOR_BMI static size_t dec32_bmi(tsf_gorilla_iter *it, void *v, size_t i, size_t n, int *bad)
{
    return dec_batch32(it, v, i, n, bad);
}
#endif

#if defined(TSF_X86)
/* BMI twins for the AVX2 / AVX-512 paths (every AVX2 CPU has BMI1/BMI2/LZCNT). */
static int use_bmi(const tsf_codec *c)
{
    return c->path == TSF_PATH_AVX2 || c->path == TSF_PATH_AVX512;
}
#endif

/* ---- vtable entry points ---------------------------------------------------------------------- */

size_t tsf_gorilla_bound_n(size_t n, unsigned W)
{
    /* first value + n xors (n-1 values and the marker) of at most 2+2*fb+W bits + flush byte,
       plus 8 bytes of slack for the batch writer's 8-byte stores */
    size_t per = W == 32 ? 44 : 78;
    return (W + per * n + 8 + 7) / 8 + 8;
}

static size_t gorilla_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    return tsf_gorilla_bound_n(n, width_of(type));
}

/* Encodes one page stream; compact: the gorilla_compact level (0 for the reference's bytes). */
static tsf_status enc_stream(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                             size_t cap, size_t *written, tsf_error *err, int compact)
{
    const unsigned W = width_of(type);
    const uint64_t marker = tsf_gorilla_marker(type);
    size_t need = tsf_gorilla_bound_n(n, W);
    *written = 0;
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "GORILLA encode: dst capacity %zu < bound %zu for %zu values", cap,
                       need, n);
    if (compact >= 2) { /* one implementation for every path */
        *written = enc_lookahead(values, n, marker, dst, W);
        return TSF_OK;
    }
    if (!compact && c->path == TSF_PATH_PER_VALUE) { /* level 1 runs the batch kernels on every path */
        tsf_gorilla_enc e;
        tsf_gorilla_enc_init(&e, W, dst, cap);
        for (size_t i = 0; i < n; i++) tsf_gorilla_enc_put(&e, ld_bits(values, i, W));
        size_t out = tsf_gorilla_enc_finish(&e, marker, dst);
        if (e.w.overflow) return tsf_err(err, TSF_ERANGE, "GORILLA encode: dst overflow");
        *written = out;
        return TSF_OK;
    }
    if (c->path == TSF_PATH_PER_VALUE && W == 64) { /* level 1: the previous batch kernel, scalar */
        *written = enc64_batch(values, n, marker, dst);
        return TSF_OK;
    }
#if defined(TSF_X86)
    if (use_bmi(c)) {
        *written =
            W == 32 ? enc32_bmi(values, n, marker, dst, compact) : enc64_bmi(values, n, marker, dst, compact);
        return TSF_OK;
    }
#endif
    *written = W == 32 ? enc32_scalar(values, n, marker, dst, compact)
                       : enc64_scalar(values, n, marker, dst, compact);
    return TSF_OK;
}

tsf_status tsf_gorilla_encode_bits(const tsf_codec *c, tsf_type type, const void *values, size_t n,
                                   uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    return enc_stream(c, type, values, n, dst, cap, written, err, 0);
}

int tsf_gorilla_two_spans(const tsf_codec *c, tsf_type type)
{
    return width_of(type) == 64 && c->gorilla_compact <= 1 &&
           (c->gorilla_compact || c->path != TSF_PATH_PER_VALUE);
}

tsf_status tsf_gorilla_encode_two(const tsf_codec *c, tsf_type type, const void *a, size_t na, const void *b,
                                  size_t nb, uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    size_t need = tsf_gorilla_bound_n(na + nb, 64);
    *written = 0;
    if (!tsf_gorilla_two_spans(c, type))
        return tsf_err(err, TSF_EINVAL,
                       "GORILLA encode: two spans need a 64-bit type at level 0/1 (batch path)");
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "GORILLA encode: dst capacity %zu < bound %zu for %zu values", cap,
                       need, na + nb);
    const uint64_t marker = tsf_gorilla_marker(type);
    const int compact = c->gorilla_compact;
#if defined(TSF_X86)
    if (use_bmi(c)) {
        *written = enc64_bmi2(a, na, b, nb, marker, dst, compact);
        return TSF_OK;
    }
#endif
    *written = enc64_scalar2(a, na, b, nb, marker, dst, compact);
    return TSF_OK;
}

static tsf_status gorilla_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n,
                                 uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    return enc_stream(c, type, values, n, dst, cap, written, err, c->gorilla_compact);
}

static tsf_status corrupt_at(tsf_error *err, const tsf_gorilla_iter *it, size_t i, const char *what)
{
    return tsf_err(err, TSF_ECORRUPT, "GORILLA: %s at value %zu, byte offset %zu", what, i, it->r.pos >> 3);
}

/* Runs the iterator over values [i, n) and then checks the end marker and the flush byte. */
static tsf_status dec_tail(tsf_gorilla_iter *it, tsf_type type, void *values, size_t i, size_t n,
                           size_t *consumed, tsf_error *err)
{
    const unsigned W = it->W;
    uint64_t v;
    for (; i < n; i++) {
        size_t at = it->r.pos;
        if (tsf_gorilla_iter_next(it, &v) != 0) {
            it->r.pos = at;
            return corrupt_at(err, it, i,
                              it->r.overrun ? "truncated stream" : "invalid leading/length window");
        }
        st_bits(values, i, v, W);
    }
    size_t at = it->r.pos;
    if (tsf_gorilla_iter_next(it, &v) != 0) {
        it->r.pos = at;
        return corrupt_at(err, it, n, "missing end marker");
    }
    if (v != tsf_gorilla_marker(type)) {
        it->r.pos = at;
        return corrupt_at(err, it, n, "value after the last one is not the end marker");
    }
    size_t used = (it->r.pos >> 3) + 1; /* the flush byte is always present */
    if (used > it->r.len) return corrupt_at(err, it, n, "missing flush byte");
    *consumed = used;
    return TSF_OK;
}

tsf_status tsf_gorilla_decode_bits(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                   void *values, size_t n, size_t *consumed, tsf_error *err)
{
    const unsigned W = width_of(type);
    tsf_gorilla_iter it;
    *consumed = 0;
    if (n == 0 && len == 0) return TSF_OK;
    tsf_gorilla_iter_init(&it, W, src, len);
    if (n == 0) return dec_tail(&it, type, values, 0, 0, consumed, err); /* marker-only stream */
    uint64_t v;
    if (tsf_gorilla_iter_next(&it, &v) != 0)
        return tsf_err(err, TSF_ECORRUPT, "GORILLA: truncated first value at byte offset 0 (%zu bytes)", len);
    st_bits(values, 0, v, W);
    size_t i = 1;
    if (c->path != TSF_PATH_PER_VALUE) {
        tsf_gorilla_iter save = it;
        int bad = 0;
#if defined(TSF_X86)
        if (use_bmi(c))
            i = W == 32 ? dec32_bmi(&it, values, i, n, &bad) : dec64_bmi(&it, values, i, n, &bad);
        else
#endif
            i = W == 32 ? dec32_scalar(&it, values, i, n, &bad) : dec64_scalar(&it, values, i, n, &bad);
        if (bad) { /* rerun the checked iterator from the start of the batch to name the offset */
            it = save;
            i = 1;
        }
    }
    return dec_tail(&it, type, values, i, n, consumed, err);
}

/* Values per batch call of tsf_gorilla_decode_f64_sum: 32 KB, folded while they are in L1. */
#define GOR_FOLD_CHUNK 4096

tsf_status tsf_gorilla_decode_f64_sum(const tsf_codec *c, const uint8_t *src, size_t len, double *v, size_t n,
                                      tsf_dec_summary *s, size_t *consumed, tsf_error *err)
{
    memset(s, 0, sizeof *s);
    s->unordered = n;
    size_t used = 0;
    tsf_gorilla_iter it;
    tsf_status st;
    if (consumed) *consumed = 0;
    if (n == 0 || c->path == TSF_PATH_PER_VALUE) {
        st = tsf_gorilla_decode_bits(c, TSF_DOUBLE, src, len, v, n, &used, err);
    } else {
        tsf_gorilla_iter_init(&it, 64, src, len);
        uint64_t b;
        if (tsf_gorilla_iter_next(&it, &b) != 0)
            return tsf_err(err, TSF_ECORRUPT, "GORILLA: truncated first value at byte offset 0 (%zu bytes)", len);
        st_bits(v, 0, b, 64);
        s->dmin = s->dmax = v[0];
        size_t i = 1;
        tsf_gorilla_iter save = it;
        int bad = 0;
        while (i < n && !bad) {
            size_t e = n - i > GOR_FOLD_CHUNK ? i + GOR_FOLD_CHUNK : n, i0 = i;
#if defined(TSF_X86)
            if (use_bmi(c))
                i = dec64_bmi(&it, v, i, e, &bad);
            else
#endif
                i = dec64_scalar(&it, v, i, e, &bad);
            tsf_f64_fold(c->path, v + i0, i - i0, &s->dmin, &s->dmax);
            if (i < e) break; /* the batch stopped early: the iterator finishes */
        }
        if (bad) { /* rerun the checked iterator from the start to name the offset */
            it = save;
            i = 1;
            s->dmin = s->dmax = v[0];
        }
        size_t i0 = i;
        st = dec_tail(&it, TSF_DOUBLE, v, i, n, &used, err);
        if (!st) tsf_f64_fold(c->path, v + i0, n - i0, &s->dmin, &s->dmax);
        s->what = TSF_SUM_VALUES;
        if (consumed) *consumed = used;
        return st;
    }
    if (st) return st;
    if (n) {
        s->dmin = s->dmax = v[0];
        tsf_f64_fold(c->path, v, n, &s->dmin, &s->dmax);
    }
    s->what = TSF_SUM_VALUES;
    if (consumed) *consumed = used;
    return TSF_OK;
}

static tsf_status gorilla_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                 void *values, size_t n, size_t *consumed, tsf_error *err)
{
    return tsf_gorilla_decode_bits(c, type, src, len, values, n, consumed, err);
}

const tsf_codec_vt tsf_codec_gorilla = {
    .encoding = TSF_ENC_GORILLA,
    .encode_types = TSF_TYPES_NUMERIC,
    .decode_types = TSF_TYPES_NUMERIC,
    .bound = gorilla_bound,
    .encode = gorilla_encode,
    .decode = gorilla_decode,
    .count = NULL,
};
