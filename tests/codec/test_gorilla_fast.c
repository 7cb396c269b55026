/*
 * Differential test of the 64-bit GORILLA batch encoder (enc64_fast in gorilla.c, the SCALAR and
 * AVX2/AVX-512 paths) against the encoders it replaced: at level 0 the per-value encoder
 * (TSF_PATH_PER_VALUE, the reference's shape), at level 1 the previous batch kernel (enc_batch, which
 * TSF_PATH_PER_VALUE keeps running). Every path must give the same bytes for: random walks, mixed
 * control codes, NaN/inf/-0.0/denormals, constant runs, xors whose windows sit around the fast path's
 * 54-bit limit and the 56-bit single-put limit, and every length 0..80 plus whole pages; the streams
 * must decode back to the input.
 */
#include <math.h>
#include <stdlib.h>

#include "codec/gorilla_core.h"
#include "codec_paths.h"
#include "test.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s)
{
    return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* xor with exactly `len` meaningful bits ending `tz` bits above the bottom (len >= 1, tz + len <= 64) */
static uint64_t window_xor(unsigned tz, unsigned len, uint64_t *s)
{
    uint64_t mid = len > 2 ? (rnd(s) & ((len == 64 ? 0 : 1ull << (len - 2)) - 1)) << 1 : 0;
    uint64_t top = 1ull << (len - 1);
    return (top | mid | 1) << tz;
}

/*
 * Shapes: 0 walk (DOUBLE steps in [-0.5, 0.5]), 1 mixed (repeats, small and large changes), 2 special
 * doubles, 3 constant with rare changes, 4 windows around the 54/56-bit limits (INT64 bits), 5 random
 * 64-bit values (wide windows), 6 walk with runs of repeats.
 */
static void fill(uint64_t *v, size_t n, int shape, uint64_t *s)
{
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, 1e-310, -1e-310, 1e308, -1e308, 3.5, 3.5};
    double st = 0;
    uint64_t prev = rnd(s);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(s);
        switch (shape) {
        case 0:
            st += unit(s) - 0.5;
            v[i] = dbits(st);
            break;
        case 1:
            if (r % 3 == 0)
                v[i] = prev;
            else if (r % 3 == 1)
                v[i] = prev ^ ((r >> 8) & 0xffff) << (r >> 58);
            else
                v[i] = rnd(s);
            prev = v[i];
            break;
        case 2:
            if (r % 5 == 0)
                v[i] = dbits(NAN);
            else if (r % 5 == 1)
                v[i] = dbits(r & 32 ? INFINITY : -INFINITY);
            else if (r % 5 == 2)
                v[i] = 0x7ff0000000000001ull | (r >> 20); /* NaN payloads */
            else
                v[i] = dbits(specials[(r >> 8) % 10]);
            break;
        case 3:
            v[i] = r % 97 == 0 ? rnd(s) : (i ? v[i - 1] : 42);
            break;
        case 4: {
            static const unsigned lens[] = {1,  2,  12, 13, 40, 42, 43, 44, 52,
                                            53, 54, 55, 56, 57, 58, 62, 63, 64};
            unsigned len = lens[(r >> 3) % (sizeof lens / sizeof lens[0])];
            unsigned tz = len == 64 ? 0 : (unsigned)((r >> 16) % (65 - len));
            prev ^= (r & 7) == 0 ? 0 : window_xor(tz, len, s);
            v[i] = prev;
            break;
        }
        case 5:
            v[i] = r;
            break;
        default:
            if (r % 4) st += unit(s) - 0.5;
            v[i] = dbits(st);
            break;
        }
    }
}

/* A codec forced to path p at GORILLA level `level` (the option's field, set after opening). */
static tsf_codec *open_codec(tsf_codec_path p, int level)
{
    tsf_codec *c = open_path(p);
    c->gorilla_compact = level;
    return c;
}

/* Encodes v[0..n) on every path (enc[0] = PER_VALUE): the same bytes, which decode back. */
static void compare(tsf_codec *const *enc, tsf_codec *dec, tsf_type type, const uint64_t *v, size_t n,
                    uint8_t *ref, uint8_t *buf, uint64_t *back)
{
    size_t cap = tsf_codec_encode_bound(type, TSF_ENC_GORILLA, n, 0), rw = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(enc[0], type, TSF_ENC_GORILLA, v, n, ref, cap, &rw, &err), &err);
    for (size_t p = 1; p < NPATHS; p++) {
        size_t w = 0, used = 0;
        CHECK_OK(tsf_codec_encode(enc[p], type, TSF_ENC_GORILLA, v, n, buf, cap, &w, &err), &err);
        CHECK_EQ_INT(w, rw);
        if (w == rw) CHECK_MEM(buf, ref, w);
        memset(back, 0x5a, n * 8);
        CHECK_OK(tsf_codec_decode(dec, type, TSF_ENC_GORILLA, buf, w, back, n, &used, &err), &err);
        CHECK_EQ_INT(used, w);
        CHECK_MEM(back, v, n * 8);
    }
}

static void test_differential(void)
{
    const size_t nmax = 10000;
    uint64_t *v = malloc(nmax * 8), *back = malloc(nmax * 8), seed = 2026;
    size_t cap = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_GORILLA, nmax, 0);
    uint8_t *ref = malloc(cap), *buf = malloc(cap);
    tsf_codec *dec = open_codec(TSF_PATH_SCALAR, 0);
    for (int level = 0; level <= 1; level++) {
        tsf_codec *enc[NPATHS];
        for (size_t p = 0; p < NPATHS; p++) enc[p] = open_codec(PATHS[p], level);
        for (int shape = 0; shape < 7; shape++) {
            tsf_type type = shape == 4 || shape == 5 ? TSF_INT64 : TSF_DOUBLE;
            for (size_t n = 0; n <= 80; n++) {
                fill(v, n, shape, &seed);
                compare(enc, dec, type, v, n, ref, buf, back);
            }
            for (int rep = 0; rep < 3; rep++) {
                fill(v, nmax, shape, &seed);
                compare(enc, dec, type, v, nmax, ref, buf, back);
                compare(enc, dec, type, v, 5000 + (size_t)rep, ref, buf, back);
            }
        }
        for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(enc[p]);
    }
    tsf_codec_close(dec);
    free(v);
    free(back);
    free(ref);
    free(buf);
}

/* The walk at level 1 must keep its size (the bytes above prove identity; this pins the rule). */
static void test_walk_bits(void)
{
    const size_t n = 10000;
    uint64_t *v = malloc(n * 8), seed = 7;
    fill(v, n, 0, &seed);
    size_t cap = tsf_codec_encode_bound(TSF_DOUBLE, TSF_ENC_GORILLA, n, 0), w0 = 0, w1 = 0;
    uint8_t *buf = malloc(cap);
    tsf_codec *c0 = open_codec(TSF_PATH_AUTO, 0), *c1 = open_codec(TSF_PATH_AUTO, 1);
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c0, TSF_DOUBLE, TSF_ENC_GORILLA, v, n, buf, cap, &w0, &err), &err);
    CHECK_OK(tsf_codec_encode(c1, TSF_DOUBLE, TSF_ENC_GORILLA, v, n, buf, cap, &w1, &err), &err);
    CHECK(w1 < w0);         /* level 1 is smaller on the walk */
    CHECK(w1 * 8 < n * 56); /* and well under 56 bits per value */
    tsf_codec_close(c0);
    tsf_codec_close(c1);
    free(v);
    free(buf);
}

/* tsf_gorilla_encode_two: a[0..k) + b[0..n-k) gives the bytes of the whole array, at every split. */
static void test_two_spans(void)
{
    const size_t sizes[] = {0, 1, 2, 3, 9, 100, 10000};
    uint64_t *v = malloc(10000 * 8), seed = 99;
    size_t cap = tsf_codec_encode_bound(TSF_DOUBLE, TSF_ENC_GORILLA, 10000, 0);
    uint8_t *ref = malloc(cap), *buf = malloc(cap);
    tsf_error err;
    for (int level = 0; level <= 1; level++)
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_codec *c = open_codec(PATHS[p], level);
            if (!tsf_gorilla_two_spans(c, TSF_DOUBLE)) {
                CHECK(level == 0 && PATHS[p] == TSF_PATH_PER_VALUE);
                CHECK_EQ_INT(tsf_gorilla_encode_two(c, TSF_DOUBLE, v, 0, v, 0, buf, cap, &cap, &err),
                             TSF_EINVAL);
                cap = tsf_codec_encode_bound(TSF_DOUBLE, TSF_ENC_GORILLA, 10000, 0);
                tsf_codec_close(c);
                continue;
            }
            CHECK(!tsf_gorilla_two_spans(c, TSF_FLOAT));
            for (int shape = 0; shape < 7; shape++)
                for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                    size_t n = sizes[s], rw = 0;
                    fill(v, n, shape, &seed);
                    CHECK_OK(tsf_codec_encode(c, TSF_DOUBLE, TSF_ENC_GORILLA, v, n, ref, cap, &rw, &err),
                             &err);
                    const size_t cuts[] = {0, 1, n / 2, n > 0 ? n - 1 : 0, n};
                    for (size_t k = 0; k < 5; k++) {
                        size_t cut = cuts[k] > n ? n : cuts[k], w = 0;
                        /* the second span in another buffer: a copy of the tail */
                        uint64_t *tail = malloc((n - cut) * 8 + 8);
                        memcpy(tail, v + cut, (n - cut) * 8);
                        CHECK_OK(
                            tsf_gorilla_encode_two(c, TSF_DOUBLE, v, cut, tail, n - cut, buf, cap, &w, &err),
                            &err);
                        CHECK_EQ_INT(w, rw);
                        if (w == rw) CHECK_MEM(buf, ref, w);
                        free(tail);
                    }
                }
            size_t w = 0;
            CHECK_EQ_INT(tsf_gorilla_encode_two(c, TSF_DOUBLE, v, 5, v, 5, buf, 8, &w, &err), TSF_ERANGE);
            tsf_codec_close(c);
        }
    free(v);
    free(ref);
    free(buf);
}

int main(void)
{
    TSF_RUN(test_differential);
    TSF_RUN(test_two_spans);
    TSF_RUN(test_walk_bits);
    return tsf_test_finish();
}
