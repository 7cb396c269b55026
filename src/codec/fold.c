/*
 * fold.c - min / max of decoded DOUBLE values, folded into running values (tsf_f64_fold): the GORILLA
 * decoder folds each chunk it decodes while the chunk is in L1, checked reads fold pages of the other
 * encodings. The writer's fold (tsf_wstats_update) is y < m ? y : m from the first value on: a NaN never
 * replaces, a leading NaN stays; the vector kernels keep that per lane (MINPD / MAXPD return the second
 * operand when either is NaN) and fold the lanes the same way, so they agree with it up to which of
 * -0.0 / +0.0 wins a tie. Portable twin: f64_portable; the tests run every path.
 */
#include "../common/compiler.h"
#include "codec.h"

#ifdef TSF_X86
#include <immintrin.h>
#endif

static void f64_portable(const double *v, size_t n, double *mn, double *mx)
{
    double a = *mn, b = *mx;
    for (size_t i = 0; i < n; i++) {
        double y = v[i];
        if (y < a) a = y;
        if (y > b) b = y;
    }
    *mn = a, *mx = b;
}

#ifdef TSF_X86
/* The kernels' last step: the lanes folded into *mn / *mx as the portable loop folds values, then v[i, n). */
static void f64_finish(const double *m, const double *x, int lanes, const double *v, size_t i, size_t n,
                       double *mn, double *mx)
{
    double a = *mn, b = *mx;
    for (int k = 0; k < lanes; k++) {
        if (m[k] < a) a = m[k];
        if (x[k] > b) b = x[k];
    }
    *mn = a, *mx = b;
    f64_portable(v + i, n - i, mn, mx);
}

TSF_TARGET("avx2") static void f64_avx2(const double *v, size_t n, double *mn, double *mx)
{
    __m256d a0 = _mm256_set1_pd(*mn), b0 = _mm256_set1_pd(*mx), a1 = a0, b1 = b0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d x = _mm256_loadu_pd(v + i), y = _mm256_loadu_pd(v + i + 4);
        a0 = _mm256_min_pd(x, a0); /* x < a0 ? x : a0 */
        b0 = _mm256_max_pd(x, b0);
        a1 = _mm256_min_pd(y, a1);
        b1 = _mm256_max_pd(y, b1);
    }
    double m[4], x[4];
    _mm256_storeu_pd(m, _mm256_min_pd(a1, a0));
    _mm256_storeu_pd(x, _mm256_max_pd(b1, b0));
    f64_finish(m, x, 4, v, i, n, mn, mx);
}

TSF_TARGET("avx512f") static void f64_avx512(const double *v, size_t n, double *mn, double *mx)
{
    __m512d a0 = _mm512_set1_pd(*mn), b0 = _mm512_set1_pd(*mx), a1 = a0, b1 = b0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d x = _mm512_loadu_pd(v + i), y = _mm512_loadu_pd(v + i + 8);
        a0 = _mm512_min_pd(x, a0); /* x < a0 ? x : a0 */
        b0 = _mm512_max_pd(x, b0);
        a1 = _mm512_min_pd(y, a1);
        b1 = _mm512_max_pd(y, b1);
    }
    double m[8], x[8];
    _mm512_storeu_pd(m, _mm512_min_pd(a1, a0));
    _mm512_storeu_pd(x, _mm512_max_pd(b1, b0));
    f64_finish(m, x, 8, v, i, n, mn, mx);
}
#endif

void tsf_f64_fold(tsf_codec_path p, const double *v, size_t n, double *mn, double *mx)
{
#ifdef TSF_X86
    if (p == TSF_PATH_AVX512) {
        f64_avx512(v, n, mn, mx);
        return;
    }
    if (p == TSF_PATH_AVX2) {
        f64_avx2(v, n, mn, mx);
        return;
    }
#endif
    (void)p;
    f64_portable(v, n, mn, mx);
}
