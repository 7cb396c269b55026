/*
 * Tests of GORILLA (spec §4.1-§4.3): the §4.3 worked examples byte-exact on every path, round trips
 * of edge values and random data for all six types, per-value vs batch agreement (bytes and values),
 * truncation at every byte and garbage input (TSF_ECORRUPT, no crash), and the first page of the
 * golden GORILLA files. Then GORILLA_V1 (spec §4.4): a hand-derived example byte-exact, round trips
 * (NaN payloads come back canonical, as the reference's floatToIntBits writer does), truncation and
 * garbage, the `10` case after a zero value (no bits), and the golden GORILLA_V1 first pages.
 */
#include <math.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "gorilla_golden.h"
#include "test.h"

#include "codec_paths.h"

static size_t esize(tsf_type t)
{
    return (t == TSF_INT32 || t == TSF_DATE || t == TSF_FLOAT) ? 4 : 8;
}

/* Encodes on every path (all must give `expect` if non-NULL, else the same bytes) and decodes back. */
static void check_stream(tsf_type type, const void *values, size_t n, const uint8_t *expect, size_t elen)
{
    size_t cap = tsf_codec_encode_bound(type, TSF_ENC_GORILLA, n, 0);
    CHECK(cap > 0);
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    void *back = malloc(n * 8 + 8);
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_path(PATHS[p]);
        uint8_t *buf = malloc(cap);
        size_t w = 0, used = 0;
        tsf_error err;
        CHECK_OK(tsf_codec_encode(c, type, TSF_ENC_GORILLA, values, n, buf, cap, &w, &err), &err);
        if (expect) {
            CHECK_EQ_INT(w, elen);
            if (w == elen) CHECK_MEM(buf, expect, elen);
        }
        if (!ref) {
            ref = buf;
            ref_len = w;
        } else {
            CHECK_EQ_INT(w, ref_len);
            if (w == ref_len) CHECK_MEM(buf, ref, w);
        }
        /* decode on every path, from every path's bytes (they are identical) */
        memset(back, 0xa5, n * 8 + 8);
        CHECK_OK(tsf_codec_decode(c, type, TSF_ENC_GORILLA, buf, w, back, n, &used, &err), &err);
        CHECK_EQ_INT(used, w);
        CHECK_MEM(back, values, n * esize(type));
        if (buf != ref) free(buf);
        tsf_codec_close(c);
    }
    free(ref);
    free(back);
}

static void test_worked_examples(void)
{
    /* spec §4.3 */
    const int32_t i32[] = {1, 1, 2, 3};
    const uint8_t e_i32[] = {0x00, 0x00, 0x00, 0x01, 0x7e, 0x0f, 0x38, 0x3f, 0x00, 0x00, 0x00, 0x06};
    check_stream(TSF_INT32, i32, 4, e_i32, sizeof e_i32);
    check_stream(TSF_DATE, i32, 4, e_i32, sizeof e_i32);
    const int64_t i64[] = {1, 1, 2, 3};
    const uint8_t e_i64[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x7f, 0x03, 0xce,
                             0x07, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x60};
    check_stream(TSF_INT64, i64, 4, e_i64, sizeof e_i64);
    check_stream(TSF_TIMESTAMP, i64, 4, e_i64, sizeof e_i64);
    const float f[] = {1.0f, 1.0f, 1.5f, 2.0f};
    const uint8_t e_f[] = {0x3f, 0x80, 0x00, 0x00, 0x69, 0x07, 0x0a, 0x3f, 0xf3, 0xfc};
    check_stream(TSF_FLOAT, f, 4, e_f, sizeof e_f);
    const double d[] = {1.0, 1.0, 1.5, 2.0};
    const uint8_t e_d[] = {0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                           0x66, 0x01, 0xc1, 0x2f, 0xff, 0xe7, 0xff, 0x00};
    check_stream(TSF_DOUBLE, d, 4, e_d, sizeof e_d);
}

static double dbits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static float fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_edge_values(void)
{
    const double d[] = {dbits(0x7ff8000000000000ull),
                        INFINITY,
                        -INFINITY,
                        -0.0,
                        0.0,
                        dbits(1),
                        dbits(0x7ff4000000000123ull),
                        dbits(0xfff8000000000001ull),
                        1e308,
                        -1e-308,
                        dbits(0x7ff8000000000000ull),
                        1.0,
                        dbits(0x000fffffffffffffull),
                        dbits(0x8000000000000001ull),
                        0.0,
                        0.0};
    size_t nd = sizeof d / sizeof d[0];
    for (size_t n = 0; n <= nd; n++) check_stream(TSF_DOUBLE, d, n, NULL, 0);
    const float f[] = {fbits(0x7fc00000u),
                       INFINITY,
                       -INFINITY,
                       -0.0f,
                       0.0f,
                       fbits(1),
                       fbits(0x7fa00001u),
                       fbits(0xffc00001u),
                       3.4e38f,
                       -1e-38f,
                       fbits(0x7fc00000u),
                       1.0f,
                       fbits(0x007fffffu)};
    size_t nf = sizeof f / sizeof f[0];
    for (size_t n = 0; n <= nf; n++) check_stream(TSF_FLOAT, f, n, NULL, 0);
    const int32_t i[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN, INT32_MIN, 0, INT32_MAX, -2, 7};
    size_t ni = sizeof i / sizeof i[0];
    for (size_t n = 0; n <= ni; n++) {
        check_stream(TSF_INT32, i, n, NULL, 0);
        check_stream(TSF_DATE, i, n, NULL, 0);
    }
    const int64_t l[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN, INT64_MIN, 0, INT64_MAX, -2, 7};
    size_t nl = sizeof l / sizeof l[0];
    for (size_t n = 0; n <= nl; n++) {
        check_stream(TSF_INT64, l, n, NULL, 0);
        check_stream(TSF_TIMESTAMP, l, n, NULL, 0);
    }
}

/* Random data of several shapes: random bits, slow walks, repeats, and mixed windows. */
static void fill(tsf_type type, void *v, size_t n, int shape, uint64_t *seed)
{
    double walk = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tsf_test_rand(seed), bits;
        switch (shape) {
        case 0:
            bits = r;
            break;
        case 1:
            walk += (double)(r >> 11) / 9007199254740992.0 - 0.5;
            if (type == TSF_DOUBLE)
                memcpy(&bits, &walk, 8);
            else if (type == TSF_FLOAT) {
                float f = (float)walk;
                uint32_t u;
                memcpy(&u, &f, 4);
                bits = u;
            } else
                bits = (uint64_t)(int64_t)(walk * 1000);
            break;
        case 2:
            bits = (r & 3) ? prev : r >> (r & 63);
            break;
        default: { /* same / within the window / new window, 1/3 each */
            unsigned k = (unsigned)(r % 3);
            uint64_t q = tsf_test_rand(seed);
            bits = k == 0 ? prev : k == 1 ? prev ^ ((q & 0xffff) << 20) : prev ^ (q >> (q & 31));
        }
        }
        prev = bits;
        if (esize(type) == 4) {
            uint32_t u = (uint32_t)bits;
            memcpy((uint8_t *)v + 4 * i, &u, 4);
        } else {
            memcpy((uint8_t *)v + 8 * i, &bits, 8);
        }
    }
}

static void test_random_roundtrip(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP, TSF_FLOAT, TSF_DOUBLE};
    const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 10000};
    uint64_t seed = 42;
    void *v = malloc(10000 * 8);
    for (size_t t = 0; t < 6; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int shape = 0; shape < 4; shape++) {
                fill(types[t], v, sizes[s], shape, &seed);
                check_stream(types[t], v, sizes[s], NULL, 0);
            }
    free(v);
}

/* Every proper prefix of a valid stream (and of the worked examples) is rejected. */
static void test_truncation(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    uint64_t seed = 7;
    double v[64];
    for (size_t t = 0; t < 4; t++) {
        fill(types[t], v, 40, 3, &seed);
        uint8_t buf[1024];
        size_t w;
        tsf_codec *c = open_path(TSF_PATH_SCALAR);
        tsf_error e0;
        CHECK_OK(tsf_codec_encode(c, types[t], TSF_ENC_GORILLA, v, 40, buf, sizeof buf, &w, &e0), &e0);
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_codec *d = open_path(PATHS[p]);
            for (size_t cut = 0; cut < w; cut++) {
                uint8_t *copy = malloc(cut ? cut : 1); /* exact-size heap copy: ASan sees any over-read */
                memcpy(copy, buf, cut);
                double out[64];
                tsf_error err;
                tsf_status s = tsf_codec_decode(d, types[t], TSF_ENC_GORILLA, copy, cut, out, 40, NULL, &err);
                CHECK_EQ_INT(s, TSF_ECORRUPT);
                if (s == TSF_ECORRUPT) CHECK(strstr(err.message, "GORILLA") && strstr(err.message, "offset"));
                free(copy);
            }
            tsf_codec_close(d);
        }
        tsf_codec_close(c);
    }
}

/* Garbage never crashes, never reads outside src, and batch and per-value agree on the verdict. */
static void test_garbage(void)
{
    uint64_t seed = 99;
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    tsf_codec *pv = open_path(TSF_PATH_PER_VALUE), *sc = open_path(TSF_PATH_SCALAR);
    tsf_codec *best = open_path(TSF_PATH_AUTO);
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 96);
        uint8_t *src = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) src[i] = (uint8_t)tsf_test_rand(&seed);
        tsf_type t = types[iter & 3];
        size_t n = (size_t)(tsf_test_rand(&seed) % 200);
        uint64_t a[200], b[200], d[200];
        size_t ua = 0, ub = 0, ud = 0;
        tsf_status sa = tsf_codec_decode(pv, t, TSF_ENC_GORILLA, src, len, a, n, &ua, NULL);
        tsf_status sb = tsf_codec_decode(sc, t, TSF_ENC_GORILLA, src, len, b, n, &ub, NULL);
        tsf_status sd = tsf_codec_decode(best, t, TSF_ENC_GORILLA, src, len, d, n, &ud, NULL);
        CHECK(sa == TSF_OK || sa == TSF_ECORRUPT);
        CHECK_EQ_INT(sa, sb);
        CHECK_EQ_INT(sa, sd);
        if (sa == TSF_OK && sb == TSF_OK && sd == TSF_OK) {
            CHECK_MEM(a, b, n * esize(t));
            CHECK_MEM(a, d, n * esize(t));
            CHECK_EQ_INT(ua, ub);
        }
        free(src);
    }
    tsf_codec_close(pv);
    tsf_codec_close(sc);
    tsf_codec_close(best);
}

/* Bit flips in long valid streams: the batch paths give exactly the per-value path's verdict and values. */
static void test_mutations(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    tsf_codec *pv = open_path(TSF_PATH_PER_VALUE), *sc = open_path(TSF_PATH_SCALAR),
              *au = open_path(TSF_PATH_AUTO);
    uint64_t seed = 123;
    const size_t n = 3000;
    uint64_t *v = malloc(n * 8), *a = malloc(n * 8), *b = malloc(n * 8), *d = malloc(n * 8);
    for (int it = 0; it < 400; it++) {
        tsf_type t = types[it & 3];
        fill(t, v, n, (it >> 2) & 3, &seed);
        size_t cap = tsf_codec_encode_bound(t, TSF_ENC_GORILLA, n, 0), w = 0;
        uint8_t *buf = malloc(cap);
        tsf_error err;
        CHECK_OK(tsf_codec_encode(sc, t, TSF_ENC_GORILLA, v, n, buf, cap, &w, &err), &err);
        int flips = 1 + (int)(tsf_test_rand(&seed) % 3);
        for (int f = 0; f < flips; f++) {
            size_t bit = (size_t)(tsf_test_rand(&seed) % (w * 8));
            buf[bit >> 3] ^= (uint8_t)(0x80 >> (bit & 7));
        }
        size_t ua = 0, ub = 0, ud = 0;
        tsf_status sa = tsf_codec_decode(pv, t, TSF_ENC_GORILLA, buf, w, a, n, &ua, NULL);
        tsf_status sb = tsf_codec_decode(sc, t, TSF_ENC_GORILLA, buf, w, b, n, &ub, NULL);
        tsf_status sd = tsf_codec_decode(au, t, TSF_ENC_GORILLA, buf, w, d, n, &ud, NULL);
        CHECK(sa == TSF_OK || sa == TSF_ECORRUPT);
        CHECK_EQ_INT(sa, sb);
        CHECK_EQ_INT(sa, sd);
        if (sa == TSF_OK && sb == TSF_OK && sd == TSF_OK) {
            CHECK_MEM(a, b, n * esize(t));
            CHECK_MEM(a, d, n * esize(t));
            CHECK_EQ_INT(ua, ub);
            CHECK_EQ_INT(ua, ud);
        }
        free(buf);
    }
    free(v);
    free(a);
    free(b);
    free(d);
    tsf_codec_close(pv);
    tsf_codec_close(sc);
    tsf_codec_close(au);
}

/*
 * The batch decoder's loops: the branch-free general loop, the `10`-only loop (one load per value up
 * to a 55-bit window, two loads above: widths around that edge), and the repeat runs (runs longer
 * than one clz covers). Long streams decode identically on every path; every cut of them is corrupt
 * on every path (exact-size heap copies, so ASan sees any over-read).
 */
static void batch_stream(uint64_t *v, size_t n, int shape, unsigned width, uint64_t *seed)
{
    uint64_t prev = 0x4059000000000000ull; /* 100.0 */
    /* shape 0: xors filling a window of `width` bits (tz 1, or 0 at 64), so `10` carries `width`
       bits; a 1-bit window every 97 values (the next full xor opens `width` again), a repeat every 89 */
    const unsigned tzb = width == 64 ? 0 : 1, lzb = 64 - width - tzb;
    const uint64_t mask = (width >= 64 ? ~0ull : ((1ull << width) - 1)) << tzb;
    unsigned kind = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tsf_test_rand(seed), q = tsf_test_rand(seed);
        if (shape == 0) {
            uint64_t x = (q & mask) | (1ull << tzb) | (1ull << (63 - lzb));
            if (width < 64 && i % 97 == 50) x = 1;
            if (i % 89 == 7) x = 0;
            prev ^= x;
        } else if (shape == 1) { /* runs of repeats (mean length 300), then a new value */
            if (r % 301 == 0) prev ^= q >> (q & 31) | 1;
        } else { /* segments of 40 values of one kind: repeats, xors at bits 20..39, new windows */
            if (i % 40 == 0) kind = (unsigned)(r % 3);
            if (kind == 1)
                prev ^= ((q & 0xfffff) | 1) << 20;
            else if (kind == 2)
                prev ^= q >> (q & 15);
        }
        v[i] = prev;
    }
}

static void test_batch_loops(void)
{
    static const tsf_codec_path paths[] = {TSF_PATH_SCALAR, TSF_PATH_AVX2, TSF_PATH_AVX512};
    tsf_codec *pv = open_path(TSF_PATH_PER_VALUE);
    uint64_t seed = 2024;
    const size_t n = 20000;
    uint64_t *v = malloc(n * 8), *a = malloc(n * 8), *b = malloc(n * 8);
    for (int shape = 0; shape < 3; shape++)
        for (unsigned width = 50; width <= 64; width += shape == 0 ? 1 : 64) {
            batch_stream(v, n, shape, width, &seed);
            const tsf_type t = shape == 1 ? TSF_INT64 : TSF_DOUBLE;
            size_t cap = tsf_codec_encode_bound(t, TSF_ENC_GORILLA, n, 0), w = 0, used = 0;
            uint8_t *buf = malloc(cap);
            tsf_error err;
            CHECK_OK(tsf_codec_encode(pv, t, TSF_ENC_GORILLA, v, n, buf, cap, &w, &err), &err);
            CHECK_OK(tsf_codec_decode(pv, t, TSF_ENC_GORILLA, buf, w, a, n, &used, &err), &err);
            CHECK_MEM(a, v, n * 8);
            for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
                tsf_codec *c = open_path(paths[p]);
                memset(b, 0x5a, n * 8);
                CHECK_OK(tsf_codec_decode(c, t, TSF_ENC_GORILLA, buf, w, b, n, &used, &err), &err);
                CHECK_EQ_INT(used, w);
                CHECK_MEM(b, v, n * 8);
                for (int cut = 0; cut < 6; cut++) {
                    size_t keep = cut < 3 ? w - 1 - (size_t)cut * 7 : (size_t)(tsf_test_rand(&seed) % w);
                    uint8_t *copy = malloc(keep ? keep : 1);
                    memcpy(copy, buf, keep);
                    CHECK_EQ_INT(tsf_codec_decode(c, t, TSF_ENC_GORILLA, copy, keep, b, n, NULL, &err),
                                 TSF_ECORRUPT);
                    free(copy);
                }
                tsf_codec_close(c);
            }
            free(buf);
        }
    free(v);
    free(a);
    free(b);
    tsf_codec_close(pv);
}

/* ---- compact encoder (tsf_codec_options.gorilla_compact) ---------------------------------------- */

static tsf_codec *open_compact(tsf_codec_path p, int level)
{
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = p;
    o.gorilla_compact = level;
    tsf_codec *c = NULL;
    tsf_error err;
    CHECK_OK(tsf_codec_open(&c, &o, &err), &err);
    return c;
}

/* MSB-first bit appender for hand-built expected streams. */
typedef struct hbits {
    uint8_t b[64];
    size_t n;
} hbits;

static void hput(hbits *h, uint64_t v, unsigned k)
{
    for (unsigned i = k; i-- > 0; h->n++)
        if ((v >> i) & 1) h->b[h->n >> 3] |= (uint8_t)(0x80 >> (h->n & 7));
}

/*
 * INT64 [0, -1, -2]: the xors are all ones (a 64-bit window), 1 and, for the end marker, 62 bits at
 * 1..62. The reference reuses the 64-bit window twice (66 bits each); level 1 opens a 1-bit window
 * (15 bits) and then a 62-bit one (76 bits): exact bytes derived by hand.
 */
static void test_compact_example(void)
{
    const int64_t v[3] = {0, -1, -2};
    hbits h;
    memset(&h, 0, sizeof h);
    hput(&h, 0, 64);                                 /* first value */
    hput(&h, 3, 2), hput(&h, 0, 6), hput(&h, 63, 6); /* `11` lz 0 len 64 */
    hput(&h, ~0ull, 64);                             /* ... the 64 bits */
    hput(&h, 3, 2), hput(&h, 63, 6), hput(&h, 0, 6); /* `11` lz 63 len 1 */
    hput(&h, 1, 1);                                  /* ... the bit */
    hput(&h, 3, 2), hput(&h, 1, 6), hput(&h, 61, 6); /* marker: `11` lz 1 len 62 */
    hput(&h, (1ull << 62) - 1, 62);                  /* ... 62 ones */
    size_t want = h.n / 8 + 1;                       /* padding, or the extra flush byte */
    CHECK_EQ_INT(h.n, 233);
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_compact(PATHS[p], 1), *ref = open_path(PATHS[p]);
        uint8_t buf[128], rbuf[128];
        size_t w = 0, rw = 0, used = 0;
        tsf_error err;
        CHECK_OK(tsf_codec_encode(c, TSF_INT64, TSF_ENC_GORILLA, v, 3, buf, sizeof buf, &w, &err), &err);
        CHECK_EQ_INT(w, want);
        if (w == want) CHECK_MEM(buf, h.b, want);
        CHECK_OK(tsf_codec_encode(ref, TSF_INT64, TSF_ENC_GORILLA, v, 3, rbuf, sizeof rbuf, &rw, &err), &err);
        CHECK_EQ_INT(rw, (64 + 78 + 66 + 66) / 8 + 1); /* the reference rule is unchanged */
        int64_t back[3];
        CHECK_OK(tsf_codec_decode(ref, TSF_INT64, TSF_ENC_GORILLA, buf, w, back, 3, &used, &err), &err);
        CHECK_EQ_INT(used, w);
        CHECK_MEM(back, v, sizeof v);
        tsf_codec_close(c);
        tsf_codec_close(ref);
    }
    /* an unknown level is refused */
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.gorilla_compact = 3;
    tsf_codec *bad = NULL;
    tsf_error err;
    CHECK_EQ_INT(tsf_codec_open(&bad, &o, &err), TSF_EINVAL);
}

/*
 * Levels 1 and 2 on every type and generator: the streams decode with the decoder (every path, the
 * decoder knows nothing of the option) to the input, consume exactly what was written, are the same
 * on every path, and over the generators are smaller than the reference's.
 */
static void test_compact_roundtrip(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP, TSF_FLOAT, TSF_DOUBLE};
    const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 10000};
    const size_t nmax = 10000;
    uint64_t seed = 77;
    uint64_t *v = malloc(nmax * 8), *back = malloc(nmax * 8);
    size_t total[3] = {0, 0, 0};
    for (int level = 1; level <= 2; level++) {
        tsf_codec *enc[NPATHS], *dec[NPATHS], *ref = open_path(TSF_PATH_SCALAR);
        for (size_t p = 0; p < NPATHS; p++) {
            enc[p] = open_compact(PATHS[p], level);
            dec[p] = open_path(PATHS[p]);
        }
        for (size_t t = 0; t < 6; t++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int shape = 0; shape < 7; shape++) {
                    size_t n = sizes[s];
                    if (shape < 4)
                        fill(types[t], v, n, shape, &seed);
                    else if (esize(types[t]) == 8)
                        batch_stream(v, n, shape - 4, 52, &seed);
                    else
                        continue;
                    size_t cap = tsf_codec_encode_bound(types[t], TSF_ENC_GORILLA, n, 0), w0 = 0, rw = 0;
                    uint8_t *first = malloc(cap), *buf = malloc(cap);
                    tsf_error err;
                    CHECK_OK(tsf_codec_encode(ref, types[t], TSF_ENC_GORILLA, v, n, buf, cap, &rw, &err),
                             &err);
                    if (level == 1) total[0] += rw;
                    for (size_t p = 0; p < NPATHS; p++) {
                        size_t w = 0, used = 0;
                        CHECK_OK(
                            tsf_codec_encode(enc[p], types[t], TSF_ENC_GORILLA, v, n, buf, cap, &w, &err),
                            &err);
                        if (p == 0) {
                            memcpy(first, buf, w);
                            w0 = w;
                            total[level] += w;
                        } else {
                            CHECK_EQ_INT(w, w0);
                            if (w == w0) CHECK_MEM(buf, first, w);
                        }
                        for (size_t d = 0; d < NPATHS; d++) {
                            memset(back, 0x5a, n * 8);
                            CHECK_OK(tsf_codec_decode(dec[d], types[t], TSF_ENC_GORILLA, buf, w, back, n,
                                                      &used, &err),
                                     &err);
                            CHECK_EQ_INT(used, w);
                            CHECK_MEM(back, v, n * esize(types[t]));
                        }
                    }
                    free(first);
                    free(buf);
                }
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_codec_close(enc[p]);
            tsf_codec_close(dec[p]);
        }
        tsf_codec_close(ref);
    }
    CHECK(total[1] < total[0]);
    CHECK(total[2] < total[0]);
    free(v);
    free(back);
}

/* A `10` before any `11`, and a window with lz + len > W, are corrupt. */
static void test_invalid_windows(void)
{
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    uint8_t s[32] = {0, 0, 0, 1, 0x80}; /* INT32 first 1, then `10` with no window */
    int32_t out[2];
    tsf_error err;
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_GORILLA, s, sizeof s, out, 2, NULL, &err),
                 TSF_ECORRUPT);
    /* `11` lz 31, len-1 = 1 (len 2): 31 + 2 > 32 */
    uint8_t s2[32] = {0, 0, 0, 1, 0xfe, 0x10};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_GORILLA, s2, sizeof s2, out, 2, NULL, &err),
                 TSF_ECORRUPT);
    tsf_codec *p = open_path(TSF_PATH_PER_VALUE);
    tsf_error e32;
    CHECK_EQ_INT(tsf_codec_decode(p, TSF_INT32, TSF_ENC_GORILLA, s2, sizeof s2, out, 2, NULL, &e32),
                 TSF_ECORRUPT);
    /* the batch kernel flags it too (lz + len = 33), so both name the same value and offset */
    CHECK(strstr(e32.message, "invalid") != NULL);
    CHECK(strcmp(e32.message, err.message) == 0);
    /* DOUBLE: first 0, then `11` lz 63 len 2 (65 > 64), then repeats: long enough for the batch
       kernel, which must report exactly what the checked iterator reports */
    uint8_t s3[256] = {0};
    s3[8] = 0xff; /* 11 111111 */
    s3[9] = 0x07; /* 000001 11 */
    double o3[100];
    tsf_error e_pv, e_b;
    CHECK_EQ_INT(tsf_codec_decode(p, TSF_DOUBLE, TSF_ENC_GORILLA, s3, sizeof s3, o3, 100, NULL, &e_pv),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_GORILLA, s3, sizeof s3, o3, 100, NULL, &e_b),
                 TSF_ECORRUPT);
    CHECK(strstr(e_pv.message, "invalid") != NULL);
    CHECK(strcmp(e_pv.message, e_b.message) == 0);
    /* the same with a `10` before any `11` after a run of repeats */
    memset(s3, 0, sizeof s3);
    s3[20] = 0x80; /* bit 160 - 64 = 96 repeats, then `10` */
    CHECK_EQ_INT(tsf_codec_decode(p, TSF_DOUBLE, TSF_ENC_GORILLA, s3, sizeof s3, o3, 100, NULL, &e_pv),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_GORILLA, s3, sizeof s3, o3, 100, NULL, &e_b),
                 TSF_ECORRUPT);
    CHECK(strcmp(e_pv.message, e_b.message) == 0);
    /* a wrong end marker: encode [5], then break the marker's bits */
    uint8_t b[64];
    size_t w;
    int32_t five = 5;
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_GORILLA, &five, 1, b, sizeof b, &w, &err), &err);
    b[w - 2] ^= 0x10;
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_GORILLA, b, w, out, 1, NULL, &err), TSF_ECORRUPT);
    /* too small a destination */
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT32, TSF_ENC_GORILLA, &five, 1, b, 4, &w, &err), TSF_ERANGE);
    tsf_codec_close(c);
    tsf_codec_close(p);
}

static void test_golden_first_pages(void)
{
    const char *files[] = {
        "tree_nonaligned_double_gorilla_uncompressed.tsfile",
        "tree_nonaligned_float_gorilla_uncompressed.tsfile",
        "tree_nonaligned_int32_gorilla_uncompressed.tsfile",
        "tree_nonaligned_int64_gorilla_uncompressed.tsfile",
        "tree_nonaligned_date_gorilla_uncompressed.tsfile",
        "tree_nonaligned_timestamp_gorilla_uncompressed.tsfile",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        golden_page g;
        int r = golden_page_load(files[f], &g);
        if (r == 0) {
            CHECK(r != 0); /* tests/data is part of the checkout */
            golden_page_free(&g);
            return;
        }
        CHECK_EQ_INT(r, 1);
        if (r != 1) {
            golden_page_free(&g);
            continue;
        }
        CHECK_EQ_INT(g.encoding, TSF_ENC_GORILLA);
        void *out = malloc(g.count * 8);
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_codec *c = open_path(PATHS[p]);
            size_t used = 0;
            tsf_error err;
            CHECK_OK(
                tsf_codec_decode(c, g.type, TSF_ENC_GORILLA, g.vals, g.vals_len, out, g.count, &used, &err),
                &err);
            CHECK_EQ_INT(used, g.vals_len); /* marker + flush byte end the page exactly */
            size_t bad = 0;
            for (size_t i = 0; i < g.count; i++) bad += golden_bits(g.type, out, i) != g.expect[i];
            CHECK_EQ_INT(bad, 0);
            /* re-encoding the decoded values reproduces the Java bytes */
            size_t cap = tsf_codec_encode_bound(g.type, TSF_ENC_GORILLA, g.count, 0), w = 0;
            uint8_t *enc = malloc(cap);
            CHECK_OK(tsf_codec_encode(c, g.type, TSF_ENC_GORILLA, out, g.count, enc, cap, &w, &err), &err);
            CHECK_EQ_INT(w, g.vals_len);
            if (w == g.vals_len) CHECK_MEM(enc, g.vals, w);
            free(enc);
            tsf_codec_close(c);
        }
        free(out);
        golden_page_free(&g);
    }
}

/* ---- GORILLA_V1 ---------------------------------------------------------------------------- */

static tsf_codec *v1_open_default(void)
{
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    return c;
}

static void test_v1_hand_example(void)
{
    /* FLOAT [1.0, 1.0, 1.5]: LE first value; `0`; `11` lz 9 len 1 `1`; NaN: `11` lz 1 len 1 `1` */
    const float f[] = {1.0f, 1.0f, 1.5f};
    const uint8_t e[] = {0x00, 0x00, 0x80, 0x3f, 0x69, 0x07, 0x84, 0x18};
    tsf_codec *c = v1_open_default();
    uint8_t b[64];
    size_t w = 0, used = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, TSF_FLOAT, TSF_ENC_GORILLA_V1, f, 3, b, sizeof b, &w, &err), &err);
    CHECK_EQ_INT(w, sizeof e);
    CHECK_MEM(b, e, sizeof e);
    float out[3];
    CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, TSF_ENC_GORILLA_V1, e, sizeof e, out, 3, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof e);
    CHECK_MEM(out, f, sizeof f);
    tsf_codec_close(c);
}

static void v1_roundtrip(tsf_type t, const void *v, size_t n, const void *expect)
{
    tsf_codec *c = v1_open_default();
    size_t cap = tsf_codec_encode_bound(t, TSF_ENC_GORILLA_V1, n, 0), w = 0, used = 0;
    uint8_t *b = malloc(cap);
    void *out = malloc(n * 8 + 8);
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, t, TSF_ENC_GORILLA_V1, v, n, b, cap, &w, &err), &err);
    CHECK_OK(tsf_codec_decode(c, t, TSF_ENC_GORILLA_V1, b, w, out, n, &used, &err), &err);
    CHECK_EQ_INT(used, w);
    CHECK_MEM(out, expect, n * (t == TSF_FLOAT ? 4 : 8));
    /* every proper prefix is corrupt */
    for (size_t cut = n ? 0 : 1; cut < w; cut++) { /* n = 0 with no bytes is a valid empty page */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b, cut);
        tsf_status st = tsf_codec_decode(c, t, TSF_ENC_GORILLA_V1, p, cut, out, n, NULL, &err);
        CHECK_EQ_INT(st, TSF_ECORRUPT);
        free(p);
    }
    free(b);
    free(out);
    tsf_codec_close(c);
}

static void test_v1_roundtrip(void)
{
    uint64_t d[300], de[300];
    uint64_t seed = 5;
    double walk = 0;
    for (size_t i = 0; i < 300; i++) {
        uint64_t r = tsf_test_rand(&seed);
        if (i < 12) {
            const uint64_t edge[] = {0x7ff8000000000000ull,
                                     0x7ff0000000000000ull,
                                     0xfff0000000000000ull,
                                     0x8000000000000000ull,
                                     0,
                                     1,
                                     0x7ff4000000000123ull,
                                     0,
                                     0,
                                     0x3ff0000000000000ull,
                                     0x000fffffffffffffull,
                                     0xfff8000000000001ull};
            d[i] = edge[i];
        } else if (i % 3 == 0) {
            d[i] = r;
        } else {
            walk += (double)(r >> 11) / 9007199254740992.0 - 0.5;
            memcpy(&d[i], &walk, 8);
        }
        de[i] = ((d[i] & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (d[i] & 0xfffffffffffffull))
                    ? 0x7ff8000000000000ull
                    : d[i];
    }
    for (size_t n = 0; n <= 20; n++) v1_roundtrip(TSF_DOUBLE, d, n, de);
    v1_roundtrip(TSF_DOUBLE, d, 300, de);
    uint32_t f[300], fe[300];
    for (size_t i = 0; i < 300; i++) {
        f[i] = (uint32_t)(d[i] >> 32);
        fe[i] = ((f[i] & 0x7f800000u) == 0x7f800000u && (f[i] & 0x7fffffu)) ? 0x7fc00000u : f[i];
    }
    for (size_t n = 0; n <= 20; n++) v1_roundtrip(TSF_FLOAT, f, n, fe);
    v1_roundtrip(TSF_FLOAT, f, 300, fe);
}

static void test_v1_zero_then_10(void)
{
    /* DOUBLE first 0.0 (LE), then `10`: the previous value has no window, so no bits follow;
       then `0`, then the NaN via `11` lz 1 len 12 (0x7ff8 >> 51 ...). Decoded: 0, 0, 0. */
    uint8_t s[16] = {0};
    /* bits: 10 | 0 | 11 000001 0001100 111111111111 (lz 1, len 12 = 0xfff, tz 51) */
    const char *bits = "10"
                       "0"
                       "11"
                       "000001"
                       "0001100"
                       "111111111111";
    size_t nb = strlen(bits);
    for (size_t i = 0; i < nb; i++)
        if (bits[i] == '1') s[8 + i / 8] |= (uint8_t)(0x80 >> (i % 8));
    double out[3];
    size_t used = 0;
    tsf_error err;
    tsf_codec *c = v1_open_default();
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_GORILLA_V1, s, 8 + (nb + 7) / 8, out, 3, &used, &err),
             &err);
    CHECK_EQ_INT(used, 8 + (nb + 7) / 8);
    CHECK(out[0] == 0.0 && out[1] == 0.0 && out[2] == 0.0);
    /* the same stream with one value too many has no closing NaN */
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_GORILLA_V1, s, 8 + (nb + 7) / 8, out, 2, NULL, &err),
                 TSF_ECORRUPT);
    tsf_codec_close(c);
}

static void test_v1_garbage(void)
{
    tsf_codec *c = v1_open_default();
    uint64_t seed = 3;
    for (int it = 0; it < 3000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 64), n = (size_t)(tsf_test_rand(&seed) % 100);
        uint8_t *s = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) s[i] = (uint8_t)tsf_test_rand(&seed);
        double out[100];
        tsf_status st = tsf_codec_decode(c, (it & 1) ? TSF_FLOAT : TSF_DOUBLE, TSF_ENC_GORILLA_V1, s, len,
                                         out, n, NULL, NULL);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(s);
    }
    tsf_codec_close(c);
}

static void test_v1_golden_first_pages(void)
{
    const char *files[] = {"tree_nonaligned_double_gorillav1_uncompressed.tsfile",
                           "tree_nonaligned_float_gorillav1_uncompressed.tsfile"};
    for (size_t f = 0; f < 2; f++) {
        golden_page g;
        int r = golden_page_load(files[f], &g);
        if (r == 0) {
            CHECK(r != 0); /* tests/data is part of the checkout */
            golden_page_free(&g);
            return;
        }
        CHECK_EQ_INT(r, 1);
        if (r == 1) {
            CHECK_EQ_INT(g.encoding, TSF_ENC_GORILLA_V1);
            tsf_codec *c = v1_open_default();
            void *out = malloc(g.count * 8);
            size_t used = 0, w = 0;
            tsf_error err;
            CHECK_OK(tsf_codec_decode(c, g.type, TSF_ENC_GORILLA_V1, g.vals, g.vals_len, out, g.count, &used,
                                      &err),
                     &err);
            CHECK_EQ_INT(used, g.vals_len);
            size_t bad = 0;
            for (size_t i = 0; i < g.count; i++) bad += golden_bits(g.type, out, i) != g.expect[i];
            CHECK_EQ_INT(bad, 0);
            size_t cap = tsf_codec_encode_bound(g.type, TSF_ENC_GORILLA_V1, g.count, 0);
            uint8_t *enc = malloc(cap);
            CHECK_OK(tsf_codec_encode(c, g.type, TSF_ENC_GORILLA_V1, out, g.count, enc, cap, &w, &err), &err);
            CHECK_EQ_INT(w, g.vals_len);
            if (w == g.vals_len) CHECK_MEM(enc, g.vals, w);
            free(enc);
            free(out);
            tsf_codec_close(c);
        }
        golden_page_free(&g);
    }
}

/* Equal as the checked reads compare min / max: NaN equals NaN, -0.0 equals +0.0. */
static int same_double(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/*
 * tsf_gorilla_decode_f64_sum on every path: the status, values and consumed of the plain decode, and min /
 * max equal to the writer's fold (from the first value: a NaN never replaces, a leading NaN stays), for
 * random bits (NaNs inside), walks, repeats and window changes, a leading NaN, sizes across the fold's
 * chunks, and copies with flipped bits (corrupt or other values, the same on every path).
 */
static void test_f64_summary(void)
{
    const size_t sizes[] = {1, 2, 17, 4096, 4097, 10000};
    uint64_t seed = 4242;
    double *v = malloc(10000 * 8), *a = malloc(10000 * 8), *b = malloc(10000 * 8);
    tsf_codec *cs[NPATHS];
    for (size_t p = 0; p < NPATHS; p++) cs[p] = open_path(PATHS[p]);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int shape = 0; shape < 5; shape++) {
            for (int flip = 0; flip < 3; flip++) {
                size_t n = sizes[si];
                fill(TSF_DOUBLE, v, n, shape & 3, &seed);
                if (shape == 4) v[0] = NAN;
                size_t cap = tsf_codec_encode_bound(TSF_DOUBLE, TSF_ENC_GORILLA, n, 0), w = 0;
                uint8_t *buf = malloc(cap);
                tsf_error err;
                CHECK_OK(tsf_codec_encode(cs[1], TSF_DOUBLE, TSF_ENC_GORILLA, v, n, buf, cap, &w, &err), &err);
                if (flip) {
                    size_t bit = (size_t)(tsf_test_rand(&seed) % (w * 8));
                    buf[bit >> 3] ^= (uint8_t)(0x80 >> (bit & 7));
                }
                size_t ua = 0;
                tsf_status sa = tsf_codec_decode(cs[1], TSF_DOUBLE, TSF_ENC_GORILLA, buf, w, a, n, &ua, NULL);
                double mn = a[0], mx = a[0];
                for (size_t i = 0; sa == TSF_OK && i < n; i++) {
                    if (a[i] < mn) mn = a[i];
                    if (a[i] > mx) mx = a[i];
                }
                for (size_t p = 0; p < NPATHS; p++) {
                    tsf_dec_summary sm;
                    size_t ub = 0;
                    tsf_status sb = tsf_gorilla_decode_f64_sum(cs[p], buf, w, b, n, &sm, &ub, NULL);
                    CHECK_EQ_INT(sb, sa);
                    if (sa != TSF_OK || sb != TSF_OK) continue;
                    CHECK_EQ_INT(ub, ua);
                    CHECK_MEM(b, a, n * 8);
                    CHECK_EQ_INT(sm.what, TSF_SUM_VALUES);
                    if (!same_double(sm.dmin, mn) || !same_double(sm.dmax, mx)) {
                        fprintf(stderr, "f64 summary: path %s n %zu shape %d flip %d: min %g/%g max %g/%g\n",
                                tsf_codec_path_name(PATHS[p]), n, shape, flip, sm.dmin, mn, sm.dmax, mx);
                        tsf_test_failures++;
                    }
                }
                free(buf);
            }
        }
    }
    for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(cs[p]);
    free(v);
    free(a);
    free(b);
}

int main(void)
{
    TSF_RUN(test_worked_examples);
    TSF_RUN(test_f64_summary);
    TSF_RUN(test_edge_values);
    TSF_RUN(test_random_roundtrip);
    TSF_RUN(test_truncation);
    TSF_RUN(test_garbage);
    TSF_RUN(test_mutations);
    TSF_RUN(test_batch_loops);
    TSF_RUN(test_compact_example);
    TSF_RUN(test_compact_roundtrip);
    TSF_RUN(test_invalid_windows);
    TSF_RUN(test_golden_first_pages);
    TSF_RUN(test_v1_hand_example);
    TSF_RUN(test_v1_roundtrip);
    TSF_RUN(test_v1_zero_then_10);
    TSF_RUN(test_v1_garbage);
    TSF_RUN(test_v1_golden_first_pages);
    return tsf_test_finish();
}
