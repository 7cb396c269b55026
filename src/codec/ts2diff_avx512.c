/*
 * ts2diff_avx512.c - AVX-512 (F/BW/VL/DQ) kernels of TS_2DIFF (spec §3.1): 16 w-bit MSB-first
 * fields per 512-bit vector (four 128-bit quarters loaded from their byte offsets, vpshufb +
 * vpsllvd + vpsrld), fused with a log-step prefix sum (valignd/valignq against zero); 16 deltas
 * (= 2w bytes) per step. No VBMI is required, so every AVX-512 CPU the path resolver accepts runs
 * it. Wider fields (w > 25) use the width-specialised scalar loops; the encoder is the portable
 * block encoder compiled for AVX-512. Scalar twin: td_unpack32_w / td_encode_block32.
 */
#include "ts2diff_kern.h"

#if defined(TSF_X86)
#include <immintrin.h>

#include "ts2diff_simd.h"

/* Quarters at byte offsets 0, (4w)>>3, w, (12w)>>3 of the 16-field group. */
static inline __m512i td_load4(const uint8_t *p, size_t o1, size_t o2, size_t o3)
{
    __m512i z = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
    z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)(p + o1)), 1);
    z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)(p + o2)), 2);
    return _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)(p + o3)), 3);
}

static inline __m512i td_unpack16(const uint8_t *p, size_t o1, size_t o2, size_t o3, __m512i ctrl,
                                  __m512i shl, __m128i rs)
{
    __m512i x = _mm512_shuffle_epi8(td_load4(p, o1, o2, o3), ctrl);
    return _mm512_srl_epi32(_mm512_sllv_epi32(x, shl), rs);
}

static inline __m512i td_scan16(__m512i x)
{
    const __m512i z = _mm512_setzero_si512();
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 15));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 14));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 12));
    return _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 8));
}

/* Width 0: out[i] = out[0] + i * minDelta, 16 lanes per store, the tail masked; every value written. */
static size_t td_fill32_avx512(uint32_t mind, uint32_t *out, size_t m)
{
    const __m512i iota1 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i k16 = _mm512_set1_epi32((int)(16u * mind));
    __m512i v = _mm512_add_epi32(_mm512_set1_epi32((int)out[0]),
                                 _mm512_mullo_epi32(iota1, _mm512_set1_epi32((int)mind)));
    size_t i = 0;
    for (; i + 16 <= m; i += 16) {
        _mm512_storeu_si512((void *)(out + i + 1), v);
        v = _mm512_add_epi32(v, k16);
    }
    if (i < m) _mm512_mask_storeu_epi32(out + i + 1, (__mmask16)((1u << (m - i)) - 1), v);
    return m;
}

static size_t td_fill64_avx512(uint64_t mind, uint64_t *out, size_t m)
{
    const __m512i k8 = _mm512_set1_epi64((long long)(8u * mind));
    __m512i v = _mm512_add_epi64(
        _mm512_set1_epi64((long long)out[0]),
        _mm512_mullo_epi64(_mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8), _mm512_set1_epi64((long long)mind)));
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
        _mm512_storeu_si512((void *)(out + i + 1), v);
        v = _mm512_add_epi64(v, k8);
    }
    if (i < m) _mm512_mask_storeu_epi64(out + i + 1, (__mmask8)((1u << (m - i)) - 1), v);
    return m;
}

/*
 * The prefix sum runs on the unpacked d' alone (in 32-bit lanes: 16 fields of <= 25 bits cannot
 * overflow), and minDelta enters as the constant K[k] = (k+1)*minDelta: out[k] = carry + K[k] + P[k].
 * The carry advances by K[15] + P[15], one add per 16 values, so the loop-carried chain is short.
 */
size_t tsf_td_dec32_avx512(const uint8_t *d, size_t avail, unsigned w, uint32_t mind, uint32_t *out, size_t m)
{
    if (w == 0) return td_fill32_avx512(mind, out, m);
    if (w > TD_SIMD_MAXW) return td_unpack32_any(d, avail, w, mind, out, m);
    const __m512i ctrl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_CTRL[w]));
    const __m512i shl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_SHL[w]));
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m512i idx = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i k = _mm512_mullo_epi32(idx, _mm512_set1_epi32((int)mind));
    const __m512i k16 = _mm512_set1_epi32((int)(16u * mind));
    const __m512i last = _mm512_set1_epi32(15);
    const size_t o1 = (4 * w) >> 3, o2 = w, o3 = (12 * w) >> 3, need = o3 + 16;
    __m512i carry = _mm512_set1_epi32((int)out[0]);
    size_t i = 0;
    for (; i + 16 <= m && (i >> 3) * w + need <= avail; i += 16) {
        const uint8_t *p = d + (i >> 3) * w;
        __m512i ps = td_scan16(td_unpack16(p, o1, o2, o3, ctrl, shl, rs));
        _mm512_storeu_si512((void *)(out + i + 1), _mm512_add_epi32(_mm512_add_epi32(ps, k), carry));
        carry = _mm512_add_epi32(carry, _mm512_add_epi32(k16, _mm512_permutexvar_epi32(last, ps)));
    }
    return i;
}

/* ---- whole blocks of INT32, optionally with non-temporal stores ---------------------------------- */

/*
 * Output lines for the streaming stores: the decoder keeps `np` pending values (lanes 0..np-1 of a
 * register) that start a 64-byte output line. A new vector v of 16 values completes that line with
 * its first 16 - np lanes (TD_IDXA[np]: pending lanes, then v from lane 0) and leaves its last np
 * lanes pending (TD_IDXB[np]: v rotated down by 16 - np lanes).
 */
#define TD_IA(np, j) ((j) < (np) ? (j) : 16 + (j) - (np))
#define TD_IB(np, j) (((j) + 16 - (np)) & 15)
#define TD_IROW(F, np)                                                                                       \
    {                                                                                                        \
        F(np, 0), F(np, 1), F(np, 2), F(np, 3), F(np, 4), F(np, 5), F(np, 6), F(np, 7), F(np, 8), F(np, 9),  \
            F(np, 10), F(np, 11), F(np, 12), F(np, 13), F(np, 14), F(np, 15)                                 \
    }
#define TD_ITAB(F)                                                                                           \
    {                                                                                                        \
        TD_IROW(F, 0), TD_IROW(F, 1), TD_IROW(F, 2), TD_IROW(F, 3), TD_IROW(F, 4), TD_IROW(F, 5),            \
            TD_IROW(F, 6), TD_IROW(F, 7), TD_IROW(F, 8), TD_IROW(F, 9), TD_IROW(F, 10), TD_IROW(F, 11),      \
            TD_IROW(F, 12), TD_IROW(F, 13), TD_IROW(F, 14), TD_IROW(F, 15)                                   \
    }
static const uint32_t TD_IDXA[16][16] __attribute__((aligned(64))) = TD_ITAB(TD_IA);
static const uint32_t TD_IDXB[16][16] __attribute__((aligned(64))) = TD_ITAB(TD_IB);

/* Line writer state: lp = the 64-byte line being filled, own = lanes of that line we may write
 * (only the first line can start before the output; later lines are whole). */
typedef struct td_lines {
    uint32_t *lp;
    __m512i pend, ia, ib;
    unsigned np;
    __mmask16 own;
} td_lines;

static inline void td_line_put(td_lines *L, __m512i line)
{
    if (TSF_LIKELY(L->own == 0xffff)) {
        _mm512_stream_si512((void *)L->lp, line);
    } else {
        _mm512_mask_storeu_epi32(L->lp, L->own, line);
        L->own = 0xffff;
    }
    L->lp += 16;
}

static inline void td_line_vec(td_lines *L, __m512i v)
{
    td_line_put(L, _mm512_permutex2var_epi32(L->pend, L->ia, v));
    L->pend = _mm512_permutexvar_epi32(L->ib, v);
}

static inline void td_line_one(td_lines *L, uint32_t x)
{
    L->pend = _mm512_mask_set1_epi32(L->pend, (__mmask16)(1u << L->np), (int)x);
    if (++L->np == 16) {
        td_line_put(L, L->pend);
        L->np = 0;
    }
    L->ia = _mm512_load_si512((const void *)TD_IDXA[L->np]);
    L->ib = _mm512_load_si512((const void *)TD_IDXB[L->np]);
}

/*
 * Decodes whole blocks (n = 128 deltas, w <= 25, 16 readable bytes after the packed data) from
 * src[*pos..len) into out while at least 129 values are wanted; stops before any other block (the
 * caller decodes it, and reports it if it is corrupt). The 8 groups of 16 deltas are unrolled, so
 * a block costs one header parse and no bounds checks. nt: stores of whole 64-byte lines bypass the
 * caches (no read-for-ownership of the output); the partial lines at both ends use masked stores.
 */
TSF_INLINE size_t td_blocks32(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n, int nt)
{
    const __m512i iota1 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i last = _mm512_set1_epi32(15);
    size_t p = *pos, done = 0;
    td_lines L;
    L.np = (unsigned)(((uintptr_t)out >> 2) & 15);
    L.lp = out - L.np;
    L.own = (__mmask16)(0xffffu << L.np);
    L.pend = _mm512_setzero_si512();
    L.ia = _mm512_load_si512((const void *)TD_IDXA[L.np]);
    L.ib = _mm512_load_si512((const void *)TD_IDXB[L.np]);
    while (n - done >= TD_BLOCK_DELTAS + 1 && len - p >= TD_HDR32 + 16) {
        const uint8_t *h = src + p;
        uint32_t nd = tsf_load_be32(h), w = tsf_load_be32(h + 4);
        if (nd != TD_BLOCK_DELTAS || w > TD_SIMD_MAXW || len - p - TD_HDR32 - 16 < 16 * (size_t)w) break;
        uint32_t mind = tsf_load_be32(h + 8), first = tsf_load_be32(h + 12);
        const uint8_t *d = h + TD_HDR32;
        const __m512i ctrl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_CTRL[w]));
        const __m512i shl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_SHL[w]));
        const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
        const __m512i k = _mm512_mullo_epi32(iota1, _mm512_set1_epi32((int)mind));
        const size_t o1 = (4 * w) >> 3, o2 = w, o3 = (12 * w) >> 3, step = 2 * (size_t)w;
        __m512i carry = _mm512_set1_epi32((int)first);
        uint32_t *o = out + done;
        if (nt)
            td_line_one(&L, first);
        else
            o[0] = first;
#pragma GCC unroll 8
        for (unsigned g = 0; g < 8; g++, d += step) {
            __m512i ps = _mm512_add_epi32(td_scan16(td_unpack16(d, o1, o2, o3, ctrl, shl, rs)), k);
            __m512i v = _mm512_add_epi32(ps, carry);
            carry = _mm512_add_epi32(carry, _mm512_permutexvar_epi32(last, ps));
            if (nt)
                td_line_vec(&L, v);
            else
                _mm512_storeu_si512((void *)(o + 1 + 16 * g), v);
        }
        done += TD_BLOCK_DELTAS + 1;
        p += TD_HDR32 + 16 * (size_t)w;
    }
    if (nt) {
        if (L.np) _mm512_mask_storeu_epi32(L.lp, (__mmask16)(L.own & ((1u << L.np) - 1)), L.pend);
        _mm_sfence();
    }
    *pos = p;
    return done;
}

size_t tsf_td_blocks32_avx512(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n)
{
    return td_blocks32(src, len, pos, out, n, 0);
}

size_t tsf_td_blocks32_nt_avx512(const uint8_t *src, size_t len, size_t *pos, uint32_t *out, size_t n)
{
    return td_blocks32(src, len, pos, out, n, 1);
}

/*
 * td_dec64 with the fold of a run that stays within 2^TD_REL_BITS of the page's first value a->base
 * (rel32_fits): the values are computed as r = value - base in 32-bit lanes (exact there), folded into
 * a->rmn / rmx / 32-bit sums with one op each per 16 values, and widened to base + r for the store. The
 * same values as the 64-bit loop: base + r is the exact value, which the decoder's wrapping sums reach
 * too because no value leaves int64.
 */
static size_t td_dec64_rel32(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m,
                             td_acc *a)
{
    const __m512i ctrl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_CTRL[w]));
    const __m512i shl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_SHL[w]));
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m512i idx = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i k = _mm512_mullo_epi32(idx, _mm512_set1_epi32((int)(uint32_t)mind));
    const __m512i last = _mm512_set1_epi32(15);
    const __m512i base = _mm512_set1_epi64(a->base);
    const size_t o1 = (4 * w) >> 3, o2 = w, o3 = (12 * w) >> 3, need = o3 + 16;
    __m512i carry = _mm512_set1_epi32((int32_t)((uint64_t)out[0] - (uint64_t)a->base));
    __m512i mn = _mm512_loadu_si512((const void *)a->rmn), mx = _mm512_loadu_si512((const void *)a->rmx);
    __m512i s32 = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 16 <= m && (i >> 3) * w + need <= avail; i += 16) {
        const uint8_t *p = d + (i >> 3) * w;
        __m512i pk = _mm512_add_epi32(td_scan16(td_unpack16(p, o1, o2, o3, ctrl, shl, rs)), k);
        __m512i r = _mm512_add_epi32(pk, carry);
        mn = _mm512_min_epi32(mn, r);
        mx = _mm512_max_epi32(mx, r);
        s32 = _mm512_add_epi32(s32, r);
        __m512i lo = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(r)), base);
        __m512i hi = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(r, 1)), base);
        _mm512_storeu_si512((void *)(out + i + 1), lo);
        _mm512_storeu_si512((void *)(out + i + 9), hi);
        carry = _mm512_add_epi32(carry, _mm512_permutexvar_epi32(last, pk)); /* off the carry chain */
    }
    _mm512_storeu_si512((void *)a->rmn, mn);
    _mm512_storeu_si512((void *)a->rmx, mx);
    __m512i s64 = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(s32)),
                                   _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(s32, 1)));
    _mm512_storeu_si512((void *)a->s, _mm512_add_epi64(_mm512_loadu_si512((const void *)a->s), s64));
    a->ss += (uint64_t)i * (uint64_t)a->base; /* the base of each of the i values */
    return i;
}

/* Whether the m deltas after out[0] stay within 2^TD_REL_BITS of a->base: base is 2^28 inside int64 (so
 * out[0] - base is exact when small), m <= 128 (so a 32-bit lane sums at most 8 values), and
 * |out[0] - base| + m * max|delta| < 2^TD_REL_BITS, each delta lying in [minDelta, minDelta + 2^w - 1]. */
static int rel32_fits(const td_acc *a, unsigned w, uint64_t mind, const uint64_t *out, size_t m)
{
    const int64_t lim = INT64_C(1) << (TD_REL_BITS + 1);
    if (a->base < INT64_MIN + lim || a->base > INT64_MAX - lim || m > 128) return 0;
    int64_t md = (int64_t)mind, r0 = (int64_t)(out[0] - (uint64_t)a->base);
    if (md < -(INT64_C(1) << 26) || md > (INT64_C(1) << 26)) return 0;
    int64_t top = md + (int64_t)((UINT64_C(1) << w) - 1);
    uint64_t amd = (uint64_t)(md < 0 ? -md : md), atop = (uint64_t)(top < 0 ? -top : top);
    uint64_t big = amd > atop ? amd : atop, ar0 = r0 < 0 ? 0 - (uint64_t)r0 : (uint64_t)r0;
    return ar0 < (UINT64_C(1) << TD_REL_BITS) && ar0 + m * big < (UINT64_C(1) << TD_REL_BITS);
}

/* The 64-bit decode; with a, every value written is folded into a's lanes in registers as well. */
TSF_INLINE size_t td_dec64(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m,
                           td_acc *a)
{
    if (a && w != 0 && w <= TD_SIMD_MAXW && rel32_fits(a, w, mind, out, m))
        return td_dec64_rel32(d, avail, w, mind, out, m, a);
    if (w == 0 || w > TD_SIMD_MAXW) {
        size_t k = w == 0 ? td_fill64_avx512(mind, out, m) : td_unpack64_any(d, avail, w, mind, out, m);
        if (a) tsf_td_acc_avx512(a, (const int64_t *)out + 1, k);
        return k;
    }
    const __m512i ctrl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_CTRL[w]));
    const __m512i shl = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)TD_SHL[w]));
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m512i md = _mm512_set1_epi64((long long)mind);
    const __m512i klo = _mm512_mullo_epi64(_mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8), md);
    const __m512i khi = _mm512_mullo_epi64(_mm512_setr_epi64(9, 10, 11, 12, 13, 14, 15, 16), md);
    const __m512i k16 = _mm512_set1_epi64((long long)(16u * mind));
    const __m512i last = _mm512_set1_epi32(15);
    const __m512i lo32 = _mm512_set1_epi64(0xffffffffll);
    const size_t o1 = (4 * w) >> 3, o2 = w, o3 = (12 * w) >> 3, need = o3 + 16;
    __m512i carry = _mm512_set1_epi64((long long)out[0]);
    __m512i mn = _mm512_setzero_si512(), mx = mn, sm = mn;
    if (a) {
        mn = _mm512_loadu_si512((const void *)a->mn);
        mx = _mm512_loadu_si512((const void *)a->mx);
        sm = _mm512_loadu_si512((const void *)a->s);
    }
    size_t i = 0;
    for (; i + 16 <= m && (i >> 3) * w + need <= avail; i += 16) {
        const uint8_t *p = d + (i >> 3) * w;
        __m512i ps = td_scan16(td_unpack16(p, o1, o2, o3, ctrl, shl, rs));
        __m512i lo = _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(ps)), klo);
        __m512i hi = _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(ps, 1)), khi);
        lo = _mm512_add_epi64(lo, carry);
        hi = _mm512_add_epi64(hi, carry);
        _mm512_storeu_si512((void *)(out + i + 1), lo);
        _mm512_storeu_si512((void *)(out + i + 9), hi);
        if (a) {
            mn = _mm512_min_epi64(mn, _mm512_min_epi64(lo, hi));
            mx = _mm512_max_epi64(mx, _mm512_max_epi64(lo, hi));
            sm = _mm512_add_epi64(sm, _mm512_add_epi64(lo, hi));
        }
        __m512i step = _mm512_add_epi64(k16, _mm512_and_si512(_mm512_permutexvar_epi32(last, ps), lo32));
        carry = _mm512_add_epi64(carry, step);
    }
    if (a) {
        _mm512_storeu_si512((void *)a->mn, mn);
        _mm512_storeu_si512((void *)a->mx, mx);
        _mm512_storeu_si512((void *)a->s, sm);
    }
    return i;
}

size_t tsf_td_dec64_avx512(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m)
{
    return td_dec64(d, avail, w, mind, out, m, NULL);
}

size_t tsf_td_dec64_acc_avx512(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out,
                               size_t m, td_acc *a)
{
    return td_dec64(d, avail, w, mind, out, m, a);
}

/* Folds v[0..n) into a: 8 lanes of min, max and wrapping sum, the tail masked. */
void tsf_td_acc_avx512(td_acc *a, const int64_t *v, size_t n)
{
    __m512i mn = _mm512_loadu_si512((const void *)a->mn), mx = _mm512_loadu_si512((const void *)a->mx);
    __m512i sm = _mm512_loadu_si512((const void *)a->s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i x = _mm512_loadu_si512((const void *)(v + i));
        mn = _mm512_min_epi64(mn, x);
        mx = _mm512_max_epi64(mx, x);
        sm = _mm512_add_epi64(sm, x);
    }
    if (i < n) {
        __mmask8 k = (__mmask8)((1u << (n - i)) - 1);
        __m512i x = _mm512_maskz_loadu_epi64(k, v + i);
        mn = _mm512_mask_min_epi64(mn, k, mn, x);
        mx = _mm512_mask_max_epi64(mx, k, mx, x);
        sm = _mm512_add_epi64(sm, x); /* masked-off lanes load 0 */
    }
    _mm512_storeu_si512((void *)a->mn, mn);
    _mm512_storeu_si512((void *)a->mx, mx);
    _mm512_storeu_si512((void *)a->s, sm);
}

size_t tsf_td_enc32_avx512(const uint32_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block32(v, cnt, o);
}

size_t tsf_td_enc64_avx512(const uint64_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block64(v, cnt, o);
}

#endif
