/*
 * ts2diff_avx2.c - AVX2 kernels of TS_2DIFF (spec §3.1): 8 w-bit MSB-first fields per 256-bit
 * vector (two 128-bit halves loaded from their own byte offsets, vpshufb + vpsllvd + vpsrld), fused
 * with the prefix sum; 8 deltas (= w bytes) per step. Wider fields (w > 25) use the
 * width-specialised scalar loops; the encoder is the portable block encoder compiled for AVX2.
 * Scalar twin: td_unpack32_w / td_encode_block32 in ts2diff_kern.h.
 */
#include "ts2diff_kern.h"

#if defined(TSF_X86)
#include <immintrin.h>

#include "ts2diff_simd.h"

static inline __m256i td_load2(const uint8_t *p, size_t o1)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                   _mm_loadu_si128((const __m128i *)(p + o1)), 1);
}

/* Inclusive prefix sum of 8 int32 lanes. */
static inline __m256i td_scan8(__m256i x)
{
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
    __m256i t = _mm256_shuffle_epi32(x, 0xff); /* each half's last lane */
    t = _mm256_permute2x128_si256(t, t, 0x08); /* low half 0, high half = low's last */
    return _mm256_add_epi32(x, t);
}

/* Width 0: out[i] = out[0] + i * minDelta, 8 lanes per store, a serial tail; every value written. */
static size_t td_fill32_avx2(uint32_t mind, uint32_t *out, size_t m)
{
    const __m256i k8 = _mm256_set1_epi32((int)(8u * mind));
    __m256i v = _mm256_add_epi32(
        _mm256_set1_epi32((int)out[0]),
        _mm256_mullo_epi32(_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8), _mm256_set1_epi32((int)mind)));
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
        _mm256_storeu_si256((__m256i *)(out + i + 1), v);
        v = _mm256_add_epi32(v, k8);
    }
    td_fill32(mind, out + i, m - i); /* the tail: the scalar twin */
    return m;
}

static size_t td_fill64_avx2(uint64_t mind, uint64_t *out, size_t m)
{
    const __m256i k4 = _mm256_set1_epi64x((long long)(4u * mind));
    __m256i v = _mm256_add_epi64(_mm256_set1_epi64x((long long)out[0]),
                                 _mm256_setr_epi64x((long long)mind, (long long)(2u * mind),
                                                    (long long)(3u * mind), (long long)(4u * mind)));
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        _mm256_storeu_si256((__m256i *)(out + i + 1), v);
        v = _mm256_add_epi64(v, k4);
    }
    td_fill64(mind, out + i, m - i);
    return m;
}

/* Prefix sum of d' alone; out[k] = carry + (k+1)*minDelta + P[k]; carry += 8*minDelta + P[7]. */
size_t tsf_td_dec32_avx2(const uint8_t *d, size_t avail, unsigned w, uint32_t mind, uint32_t *out, size_t m)
{
    if (w == 0) return td_fill32_avx2(mind, out, m);
    if (w > TD_SIMD_MAXW) return td_unpack32_any(d, avail, w, mind, out, m);
    const __m256i ctrl = _mm256_loadu_si256((const __m256i *)TD_CTRL[w]);
    const __m256i shl = _mm256_loadu_si256((const __m256i *)TD_SHL[w]);
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m256i k =
        _mm256_mullo_epi32(_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8), _mm256_set1_epi32((int)mind));
    const __m256i k8 = _mm256_set1_epi32((int)(8u * mind));
    const __m256i last = _mm256_set1_epi32(7);
    const size_t o1 = (4 * w) >> 3, need = o1 + 16;
    __m256i carry = _mm256_set1_epi32((int)out[0]);
    size_t i = 0;
    for (; i + 8 <= m && (i >> 3) * w + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * w;
        __m256i x = _mm256_shuffle_epi8(td_load2(p, o1), ctrl);
        __m256i ps = td_scan8(_mm256_srl_epi32(_mm256_sllv_epi32(x, shl), rs));
        _mm256_storeu_si256((__m256i *)(out + i + 1), _mm256_add_epi32(_mm256_add_epi32(ps, k), carry));
        carry = _mm256_add_epi32(carry, _mm256_add_epi32(k8, _mm256_permutevar8x32_epi32(ps, last)));
    }
    return i;
}

size_t tsf_td_dec64_avx2(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m)
{
    if (w == 0) return td_fill64_avx2(mind, out, m);
    if (w > TD_SIMD_MAXW) return td_unpack64_any(d, avail, w, mind, out, m);
    const __m256i ctrl = _mm256_loadu_si256((const __m256i *)TD_CTRL[w]);
    const __m256i shl = _mm256_loadu_si256((const __m256i *)TD_SHL[w]);
    const __m128i rs = _mm_cvtsi32_si128((int)(32 - w));
    const __m256i klo = _mm256_setr_epi64x((long long)mind, (long long)(2 * mind), (long long)(3 * mind),
                                           (long long)(4 * mind));
    const __m256i khi = _mm256_add_epi64(klo, _mm256_set1_epi64x((long long)(4 * mind)));
    const __m256i k8 = _mm256_set1_epi64x((long long)(8 * mind));
    const __m256i last = _mm256_set1_epi32(7);
    const __m256i lo32 = _mm256_set1_epi64x(0xffffffffll);
    const size_t o1 = (4 * w) >> 3, need = o1 + 16;
    __m256i carry = _mm256_set1_epi64x((long long)out[0]);
    size_t i = 0;
    for (; i + 8 <= m && (i >> 3) * w + need <= avail; i += 8) {
        const uint8_t *p = d + (i >> 3) * w;
        __m256i x = _mm256_shuffle_epi8(td_load2(p, o1), ctrl);
        __m256i ps = td_scan8(_mm256_srl_epi32(_mm256_sllv_epi32(x, shl), rs));
        __m256i lo = _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(ps)), klo);
        __m256i hi = _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(ps, 1)), khi);
        _mm256_storeu_si256((__m256i *)(out + i + 1), _mm256_add_epi64(lo, carry));
        _mm256_storeu_si256((__m256i *)(out + i + 5), _mm256_add_epi64(hi, carry));
        __m256i step = _mm256_add_epi64(k8, _mm256_and_si256(_mm256_permutevar8x32_epi32(ps, last), lo32));
        carry = _mm256_add_epi64(carry, step);
    }
    return i;
}

/* Folds v[0..n) into a: lanes 0-3 and 4-7 of min, max (compare and blend) and wrapping sum; portable tail. */
void tsf_td_acc_avx2(td_acc *a, const int64_t *v, size_t n)
{
    __m256i mn0 = _mm256_loadu_si256((const __m256i *)a->mn), mn1 = _mm256_loadu_si256((const __m256i *)(a->mn + 4));
    __m256i mx0 = _mm256_loadu_si256((const __m256i *)a->mx), mx1 = _mm256_loadu_si256((const __m256i *)(a->mx + 4));
    __m256i s0 = _mm256_loadu_si256((const __m256i *)a->s), s1 = _mm256_loadu_si256((const __m256i *)(a->s + 4));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(v + i));
        __m256i y = _mm256_loadu_si256((const __m256i *)(v + i + 4));
        mn0 = _mm256_blendv_epi8(mn0, x, _mm256_cmpgt_epi64(mn0, x));
        mx0 = _mm256_blendv_epi8(mx0, x, _mm256_cmpgt_epi64(x, mx0));
        mn1 = _mm256_blendv_epi8(mn1, y, _mm256_cmpgt_epi64(mn1, y));
        mx1 = _mm256_blendv_epi8(mx1, y, _mm256_cmpgt_epi64(y, mx1));
        s0 = _mm256_add_epi64(s0, x);
        s1 = _mm256_add_epi64(s1, y);
    }
    _mm256_storeu_si256((__m256i *)a->mn, mn0);
    _mm256_storeu_si256((__m256i *)(a->mn + 4), mn1);
    _mm256_storeu_si256((__m256i *)a->mx, mx0);
    _mm256_storeu_si256((__m256i *)(a->mx + 4), mx1);
    _mm256_storeu_si256((__m256i *)a->s, s0);
    _mm256_storeu_si256((__m256i *)(a->s + 4), s1);
    td_acc_portable(a, v + i, n - i);
}

size_t tsf_td_enc32_avx2(const uint32_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block32(v, cnt, o);
}

size_t tsf_td_enc64_avx2(const uint64_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block64(v, cnt, o);
}

#endif
