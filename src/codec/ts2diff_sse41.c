/*
 * ts2diff_sse41.c - SSE4.1 kernels of TS_2DIFF (spec §3.1): unpack of w-bit MSB-first fields with
 * pshufb + pmulld (the variable shift SSE4.1 lacks) + psrld, fused with the prefix sum
 * (v_{i+1} = v_i + minDelta + d'_i), 8 deltas (= w bytes) per step; wider fields (w > 25) use the
 * width-specialised scalar loops. The encoder is the portable block encoder compiled for SSE4.1
 * (its delta/min/OR loops vectorise). Scalar twin: td_unpack32_w / td_encode_block32 in
 * ts2diff_kern.h.
 */
#include "ts2diff_kern.h"

#if defined(TSF_X86)
#include <immintrin.h>

#include "ts2diff_simd.h"

/* 4 fields starting at p with the given control/shift table row. */
static inline __m128i td_unpack4(const uint8_t *p, __m128i ctrl, __m128i mul, __m128i rs)
{
    __m128i x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), ctrl);
    return _mm_srl_epi32(_mm_mullo_epi32(x, mul), rs);
}

/* Inclusive prefix sum of 4 lanes plus the carry-in. */
static inline __m128i td_scan4(__m128i x, __m128i carry)
{
    x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
    x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
    return _mm_add_epi32(x, carry);
}

static inline __m128i td_mul_of(const uint32_t *shl)
{
    __m128i s = _mm_loadu_si128((const __m128i *)shl);
    /* 1 << s per lane, built with an integer add on the float exponent field */
    return _mm_cvttps_epi32(
        _mm_castsi128_ps(_mm_add_epi32(_mm_slli_epi32(s, 23), _mm_set1_epi32(0x3f800000))));
}

/* Width 0: out[i] = out[0] + i * minDelta, one 128-bit store per step, a serial tail; every value written. */
static size_t td_fill32_sse41(uint32_t mind, uint32_t *out, size_t m)
{
    const __m128i k4 = _mm_set1_epi32((int)(4u * mind));
    __m128i v = _mm_add_epi32(_mm_set1_epi32((int)out[0]),
                              _mm_mullo_epi32(_mm_setr_epi32(1, 2, 3, 4), _mm_set1_epi32((int)mind)));
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        _mm_storeu_si128((__m128i *)(out + i + 1), v);
        v = _mm_add_epi32(v, k4);
    }
    td_fill32(mind, out + i, m - i); /* the tail: the scalar twin */
    return m;
}

static size_t td_fill64_sse41(uint64_t mind, uint64_t *out, size_t m)
{
    const __m128i k2 = _mm_set1_epi64x((long long)(2u * mind));
    __m128i v = _mm_add_epi64(_mm_set1_epi64x((long long)out[0]),
                              _mm_set_epi64x((long long)(2u * mind), (long long)mind));
    size_t i = 0;
    for (; i + 2 <= m; i += 2) {
        _mm_storeu_si128((__m128i *)(out + i + 1), v);
        v = _mm_add_epi64(v, k2);
    }
    td_fill64(mind, out + i, m - i);
    return m;
}

/* Prefix sum of d' alone; out[k] = carry + (k+1)*minDelta + P[k]; carry += 8*minDelta + P[7]. */
size_t tsf_td_dec32_sse41(const uint8_t *d, size_t avail, unsigned w, uint32_t mind, uint32_t *out, size_t m)
{
    if (w == 0) return td_fill32_sse41(mind, out, m);
    if (w > TD_SIMD_MAXW) return td_unpack32_any(d, avail, w, mind, out, m);
    const __m128i c0 = _mm_load_si128((const __m128i *)TD_CTRL[w][0]);
    const __m128i c1 = _mm_load_si128((const __m128i *)TD_CTRL[w][1]);
    const __m128i m0 = td_mul_of(TD_SHL[w][0]), m1 = td_mul_of(TD_SHL[w][1]);
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m128i md = _mm_set1_epi32((int)mind);
    const __m128i ka = _mm_mullo_epi32(_mm_setr_epi32(1, 2, 3, 4), md);
    const __m128i kb = _mm_mullo_epi32(_mm_setr_epi32(5, 6, 7, 8), md);
    const __m128i k8 = _mm_set1_epi32((int)(8u * mind));
    const size_t o1 = (4 * w) >> 3, need = o1 + 16;
    __m128i carry = _mm_set1_epi32((int)out[0]);
    size_t i = 0;
    for (; i + 8 <= m && (i >> 3) * w + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * w;
        __m128i a = td_scan4(td_unpack4(p, c0, m0, rs), _mm_setzero_si128());
        __m128i b = td_scan4(td_unpack4(p + o1, c1, m1, rs), _mm_shuffle_epi32(a, 0xff));
        _mm_storeu_si128((__m128i *)(out + i + 1), _mm_add_epi32(_mm_add_epi32(a, ka), carry));
        _mm_storeu_si128((__m128i *)(out + i + 5), _mm_add_epi32(_mm_add_epi32(b, kb), carry));
        carry = _mm_add_epi32(carry, _mm_add_epi32(k8, _mm_shuffle_epi32(b, 0xff)));
    }
    return i;
}

size_t tsf_td_dec64_sse41(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m)
{
    if (w == 0) return td_fill64_sse41(mind, out, m);
    if (w > TD_SIMD_MAXW) return td_unpack64_any(d, avail, w, mind, out, m);
    const __m128i c0 = _mm_load_si128((const __m128i *)TD_CTRL[w][0]);
    const __m128i c1 = _mm_load_si128((const __m128i *)TD_CTRL[w][1]);
    const __m128i m0 = td_mul_of(TD_SHL[w][0]), m1 = td_mul_of(TD_SHL[w][1]);
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m128i k0 = _mm_set_epi64x((long long)(2 * mind), (long long)mind);
    const __m128i k2 = _mm_set1_epi64x((long long)(2 * mind)), k8 = _mm_set1_epi64x((long long)(8 * mind));
    const __m128i k1 = _mm_add_epi64(k0, k2), kk2 = _mm_add_epi64(k1, k2), k3 = _mm_add_epi64(kk2, k2);
    const size_t o1 = (4 * w) >> 3, need = o1 + 16;
    __m128i carry = _mm_set1_epi64x((long long)out[0]);
    size_t i = 0;
    for (; i + 8 <= m && (i >> 3) * w + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * w;
        __m128i a = td_scan4(td_unpack4(p, c0, m0, rs), _mm_setzero_si128());
        __m128i b = td_scan4(td_unpack4(p + o1, c1, m1, rs), _mm_shuffle_epi32(a, 0xff));
        __m128i v0 = _mm_add_epi64(_mm_cvtepu32_epi64(a), k0);
        __m128i v1 = _mm_add_epi64(_mm_cvtepu32_epi64(_mm_srli_si128(a, 8)), k1);
        __m128i v2 = _mm_add_epi64(_mm_cvtepu32_epi64(b), kk2);
        __m128i v3 = _mm_add_epi64(_mm_cvtepu32_epi64(_mm_srli_si128(b, 8)), k3);
        _mm_storeu_si128((__m128i *)(out + i + 1), _mm_add_epi64(v0, carry));
        _mm_storeu_si128((__m128i *)(out + i + 3), _mm_add_epi64(v1, carry));
        _mm_storeu_si128((__m128i *)(out + i + 5), _mm_add_epi64(v2, carry));
        _mm_storeu_si128((__m128i *)(out + i + 7), _mm_add_epi64(v3, carry));
        carry = _mm_add_epi64(carry, _mm_add_epi64(k8, _mm_cvtepu32_epi64(_mm_shuffle_epi32(b, 0xff))));
    }
    return i;
}

size_t tsf_td_enc32_sse41(const uint32_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block32(v, cnt, o);
}

size_t tsf_td_enc64_sse41(const uint64_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block64(v, cnt, o);
}

#endif
