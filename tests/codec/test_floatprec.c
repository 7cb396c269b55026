/*
 * Tests of the FLOAT/DOUBLE precision wrapper (src/codec/floatprec.c, spec §3.3/§3.4) over TS_2DIFF
 * and RLE: the §3.3 worked example byte-exact, Java rounding, k/100 and k/1e5 round trips on every
 * path, the documented overflow behaviour (checked against the Java golden overflow file), a
 * hand-built §3.4 overflow-layout stream, hostile input, and the Java golden pages (our encoder's
 * bytes must appear verbatim in the file, and decoding them must give the reader's CSV bits).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "common/bytes.h"
#include "test.h"

static const tsf_codec_path PATHS[] = {TSF_PATH_PER_VALUE, TSF_PATH_SCALAR, TSF_PATH_SSE41, TSF_PATH_AVX2,
                                       TSF_PATH_AVX512};
#define NPATHS (sizeof PATHS / sizeof PATHS[0])

static tsf_codec *open_codec(tsf_codec_path p, int32_t mpn)
{
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = p;
    o.float_precision = mpn;
    tsf_codec *c = NULL;
    if (tsf_codec_open(&c, &o, NULL) != TSF_OK) exit(1);
    return c;
}

static uint8_t *enc(tsf_codec *c, tsf_type t, tsf_encoding e, const void *v, size_t n, size_t *len)
{
    size_t cap = tsf_codec_encode_bound(t, e, n, 0);
    uint8_t *buf = malloc(cap + 1);
    tsf_error err;
    *len = 0;
    CHECK_OK(tsf_codec_encode(c, t, e, v, n, buf, cap, len, &err), &err);
    uint8_t *exact = malloc(*len ? *len : 1);
    memcpy(exact, buf, *len);
    free(buf);
    return exact;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static void test_java_round(void)
{
    CHECK(tsf_java_round(0.5) == 1);
    CHECK(tsf_java_round(-0.5) == 0);
    CHECK(tsf_java_round(2.5) == 3);
    CHECK(tsf_java_round(-2.5) == -2);
    CHECK(tsf_java_round(-2.51) == -3);
    CHECK(tsf_java_round(0.49999999999999994) == 0); /* floor(x + 0.5) would give 1 */
    CHECK(tsf_java_round(4503599627370497.0) == 4503599627370497LL);
    CHECK(tsf_java_round(-4503599627370497.0) == -4503599627370497LL);
    CHECK(tsf_java_round(NAN) == 0);
    CHECK(tsf_java_round(1e30) == INT64_MAX);
    CHECK(tsf_java_round(INFINITY) == INT64_MAX);
    CHECK(tsf_java_round(-1e30) == INT64_MIN);
    CHECK(tsf_java_round(-INFINITY) == INT64_MIN);
    CHECK(tsf_java_round(9223372036854775807.0) == INT64_MAX); /* = 2^63 as a double */
    CHECK(tsf_java_round(-9223372036854775808.0) == INT64_MIN);
    CHECK(tsf_java_round(9223372036854774784.0) == 9223372036854774784LL);
}

static void test_spec_example(void)
{
    const float v[] = {1.5f, 2.25f};
    const uint8_t e[] = {0x02, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x4b, 0, 0, 0, 0x96};
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_codec(PATHS[p], 2);
        size_t len;
        uint8_t *b = enc(c, TSF_FLOAT, TSF_ENC_TS_2DIFF, v, 2, &len);
        CHECK_EQ_INT(len, sizeof e);
        if (len == sizeof e) CHECK_MEM(b, e, sizeof e);
        float out[2];
        size_t used = 0, cnt = 0;
        tsf_error err;
        CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, TSF_ENC_TS_2DIFF, e, sizeof e, out, 2, &used, &err), &err);
        CHECK_MEM(out, v, sizeof v);
        CHECK_EQ_INT(used, sizeof e);
        CHECK_OK(tsf_codec_count(TSF_FLOAT, TSF_ENC_TS_2DIFF, e, sizeof e, &cnt, &err), &err);
        CHECK_EQ_INT(cnt, 2);
        free(b);
        tsf_codec_close(c);
    }
}

/* k/100 at mpn 2 and k/1e5 at mpn 5 come back bit-exact through TS_2DIFF and RLE on every path. */
static void test_roundtrip(void)
{
    const tsf_encoding encs[] = {TSF_ENC_TS_2DIFF, TSF_ENC_RLE};
    const int mpns[] = {2, 5};
    uint64_t seed = 7;
    size_t n = 1000;
    float *f = malloc(n * 4), *fo = malloc(n * 4);
    double *d = malloc(n * 8), *dout = malloc(n * 8);
    for (int mi = 0; mi < 2; mi++) {
        double scale = mpns[mi] == 2 ? 100.0 : 1e5;
        int64_t k = 0;
        for (size_t i = 0; i < n; i++) {
            k += (int64_t)(tsf_test_rand(&seed) % 2001) - 1000;
            f[i] = (float)((double)k / scale);
            d[i] = (double)k / scale;
        }
        for (size_t ei = 0; ei < 2; ei++) {
            for (size_t p = 0; p < NPATHS; p++) {
                tsf_codec *c = open_codec(PATHS[p], mpns[mi]);
                tsf_error err;
                size_t len;
                uint8_t *b = enc(c, TSF_FLOAT, encs[ei], f, n, &len);
                CHECK_EQ_INT(b[0], mpns[mi]);
                CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, encs[ei], b, len, fo, n, NULL, &err), &err);
                CHECK_MEM(fo, f, n * 4);
                free(b);
                b = enc(c, TSF_DOUBLE, encs[ei], d, n, &len);
                CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, encs[ei], b, len, dout, n, NULL, &err), &err);
                CHECK_MEM(dout, d, n * 8);
                size_t cnt = 0;
                CHECK_OK(tsf_codec_count(TSF_DOUBLE, encs[ei], b, len, &cnt, &err), &err);
                CHECK(cnt >= n);
                free(b);
                tsf_codec_close(c);
            }
        }
    }
    /* lossy by design: digits beyond mpn are rounded (Java ties towards +inf) */
    tsf_codec *c = open_codec(TSF_PATH_SCALAR, 2);
    const double in[] = {1.234, 1.235, -1.235, 0.005, -0.005};
    const double want[] = {1.23, 1.24, -1.24, 0.01, 0.0}; /* -1.235*100 = -123.50000000000001 */
    double out[5];
    size_t len;
    tsf_error err;
    uint8_t *b = enc(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, in, 5, &len);
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, b, len, out, 5, NULL, &err), &err);
    for (int i = 0; i < 5; i++) CHECK(out[i] == want[i]);
    free(b);
    /* mpn <= 0 scales by 1 and writes 0 */
    tsf_codec_close(c);
    c = open_codec(TSF_PATH_SCALAR, -3);
    b = enc(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, in, 5, &len);
    CHECK_EQ_INT(b[0], 0);
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, b, len, out, 5, NULL, &err), &err);
    CHECK(out[0] == 1.0 && out[2] == -1.0);
    free(b);
    const double ties[] = {-2.5, 2.5, -0.5};
    b = enc(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, ties, 3, &len);
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, b, len, out, 3, NULL, &err), &err);
    CHECK(out[0] == -2.0 && out[1] == 3.0 && dbits(out[2]) == 0); /* ties towards +inf, -0.5 -> +0 */
    free(b);
    tsf_codec_close(c);
    free(f);
    free(fo);
    free(d);
    free(dout);
}

/* §3.3 overflow behaviour of the a9f54614 writer (what the Java reader returns). */
static void test_overflow_behaviour(void)
{
    tsf_codec *c = open_codec(TSF_PATH_SCALAR, 2);
    const double din[] = {1e17,  9.3e16,    1e30, DBL_MAX, INFINITY, -1e17,
                          -1e30, -INFINITY, NAN,  -0.0,    4.9e-324};
    const double dmax = 9.223372036854776E16, dmin = -9.223372036854776E16;
    const double dwant[] = {dmax, dmax, dmax, dmax, dmax, dmin, dmin, dmin, 0.0, 0.0, 0.0};
    const float fin[] = {3e7f, 1e30f, FLT_MAX, INFINITY, -1e30f, -INFINITY, NAN};
    const float fwant[] = {-1.2949673E7f, -0.01f, -0.01f, -0.01f, 0.0f, 0.0f, 0.0f};
    for (size_t ei = 0; ei < 2; ei++) {
        tsf_encoding e = ei ? TSF_ENC_RLE : TSF_ENC_TS_2DIFF;
        tsf_error err;
        size_t len;
        double dout[11];
        uint8_t *b = enc(c, TSF_DOUBLE, e, din, 11, &len);
        CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, e, b, len, dout, 11, NULL, &err), &err);
        for (int i = 0; i < 11; i++) CHECK(dbits(dout[i]) == dbits(dwant[i]));
        free(b);
        float fout[7];
        b = enc(c, TSF_FLOAT, e, fin, 7, &len);
        CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, e, b, len, fout, 7, NULL, &err), &err);
        for (int i = 0; i < 7; i++) CHECK(fbits(fout[i]) == fbits(fwant[i]));
        free(b);
    }
    tsf_codec_close(c);
}

/* Builds a §3.4 stream: tag, count, scaled bitmap, [raw bitmap], mpn, inner stream of `iv`. */
static size_t build_overflow(uint8_t *dst, int raw, const uint8_t *sbm, const uint8_t *rbm, size_t count,
                             int is64, tsf_encoding inner, const void *iv, size_t n)
{
    size_t p = 0;
    p += tsf_put_uvarint32(dst + p, raw ? 0x7FFFFFFEu : 0x7FFFFFFFu);
    p += tsf_put_uvarint32(dst + p, (uint32_t)count);
    memcpy(dst + p, sbm, count / 8 + 1);
    p += count / 8 + 1;
    if (raw) {
        memcpy(dst + p, rbm, count / 8 + 1);
        p += count / 8 + 1;
    }
    p += tsf_put_uvarint32(dst + p, 2);
    tsf_codec *c = open_codec(TSF_PATH_SCALAR, 2);
    size_t w = 0;
    tsf_error err;
    if (inner == TSF_ENC_RLE)
        CHECK_OK(is64 ? tsf_rle_encode_i64(c, iv, n, dst + p, 4096, &w, &err)
                      : tsf_rle_encode_i32(c, iv, n, dst + p, 4096, &w, &err),
                 &err);
    else
        CHECK_OK(is64 ? tsf_ts2diff_encode_i64(c, iv, n, dst + p, 4096, &w, &err)
                      : tsf_ts2diff_encode_i32(c, iv, n, dst + p, 4096, &w, &err),
                 &err);
    tsf_codec_close(c);
    return p + w;
}

static void test_overflow_layout(void)
{
    /* 16 values (count % 8 == 0: bitmaps still have count/8 + 1 = 3 bytes). Pattern per i % 4:
     * 0 scaled (bit in scaled map), 1 unscaled round(v), 2 raw bits, 3 scaled. LSB-first bitmaps. */
    enum { N = 16 };
    uint8_t sbm[3] = {0}, rbm[3] = {0};
    int32_t i32[N];
    int64_t i64[N];
    float fw[N];
    double dw[N];
    for (int i = 0; i < N; i++) {
        switch (i % 4) {
        case 0:
        case 3:
            sbm[i / 8] |= (uint8_t)(1u << (i % 8));
            i32[i] = 150 + i;
            i64[i] = 150 + i;
            fw[i] = (float)((150 + i) / 100.0);
            dw[i] = (150 + i) / 100.0;
            break;
        case 1:
            i32[i] = 30000000 + i;
            i64[i] = 100000000000000000LL + i;
            fw[i] = (float)(30000000 + i);
            dw[i] = (double)(100000000000000000LL + i);
            break;
        default: {
            rbm[i / 8] |= (uint8_t)(1u << (i % 8));
            float f = i == 2 ? NAN : (i == 6 ? INFINITY : -1e30f);
            double d = i == 2 ? NAN : (i == 6 ? -INFINITY : 1e300);
            memcpy(&i32[i], &f, 4);
            memcpy(&i64[i], &d, 8);
            fw[i] = f;
            dw[i] = d;
        }
        }
    }
    const tsf_encoding encs[] = {TSF_ENC_TS_2DIFF, TSF_ENC_RLE};
    for (size_t ei = 0; ei < 2; ei++) {
        uint8_t buf[8192];
        for (size_t p = 0; p < NPATHS; p++) {
            size_t len = build_overflow(buf, 1, sbm, rbm, N, 0, encs[ei], i32, N);
            tsf_codec *c = open_codec(PATHS[p], 2);
            float fo[N];
            double dout[N];
            tsf_error err;
            size_t used = 0, cnt = 0;
            CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, encs[ei], buf, len, fo, N, &used, &err), &err);
            for (int i = 0; i < N; i++) CHECK_EQ_INT(fbits(fo[i]), fbits(fw[i]));
            CHECK_EQ_INT(used, len);
            CHECK_OK(tsf_codec_count(TSF_FLOAT, encs[ei], buf, len, &cnt, &err), &err);
            CHECK_EQ_INT(cnt, N);
            size_t dlen = build_overflow(buf, 1, sbm, rbm, N, 1, encs[ei], i64, N);
            CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, encs[ei], buf, dlen, dout, N, NULL, &err), &err);
            for (int i = 0; i < N; i++) CHECK(dbits(dout[i]) == dbits(dw[i]));
            /* 0x7FFFFFFF tag: no raw map, the raw slots read as unscaled integers */
            dlen = build_overflow(buf, 0, sbm, rbm, N, 1, encs[ei], i64, N);
            CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, encs[ei], buf, dlen, dout, N, NULL, &err), &err);
            CHECK(dout[0] == dw[0] && dout[1] == dw[1] && dout[2] == (double)i64[2]);
            /* more values requested than the header holds */
            CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, encs[ei], buf, dlen, dout, N + 1, NULL, &err),
                         TSF_ECORRUPT);
            /* truncated inside the bitmaps / the mpn */
            for (size_t cut = 1; cut < 12; cut++)
                CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, encs[ei], buf, cut, dout, N, NULL, &err),
                             TSF_ECORRUPT);
            tsf_codec_close(c);
        }
    }
}

static void test_hostile(void)
{
    tsf_codec *c = open_codec(TSF_PATH_AVX512, 2);
    const double v[] = {1.5, 2.25, 3.0, 4.75};
    size_t len;
    uint8_t *b = enc(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, v, 4, &len);
    for (size_t cut = 0; cut < len; cut++) {
        double out[4];
        tsf_error err;
        uint8_t *t = malloc(cut ? cut : 1);
        memcpy(t, b, cut);
        CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, t, cut, out, 4, NULL, &err),
                     TSF_ECORRUPT);
        CHECK(strstr(err.message, "TS_2DIFF") != NULL);
        free(t);
    }
    const uint8_t badvar[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    double out[4];
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, badvar, 6, out, 1, NULL, NULL),
                 TSF_ECORRUPT);
    /* huge count in an overflow header: bitmap length checked before use */
    const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, huge, sizeof huge, out, 1, NULL, NULL),
                 TSF_ECORRUPT);
    free(b);
    tsf_codec_close(c);
}

/* ---- golden files ---------------------------------------------------------------------------------- */

/* Reads the raw bits of the rows of `measurement` (all if NULL) from a golden CSV. */
static size_t load_bits(const char *path, const char *measurement, uint64_t *bits, size_t max)
{
    size_t len, n = 0;
    char *txt = (char *)tsf_test_read_file(path, &len);
    if (!txt) return 0;
    char *save = NULL;
    for (char *line = strtok_r(txt, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ','), *bar = strstr(line, "|0x");
        if (!c1 || !bar) continue;
        if (measurement &&
            (strncmp(c1 + 1, measurement, strlen(measurement)) != 0 || c1[1 + strlen(measurement)] != ','))
            continue;
        bits[n++] = strtoull(bar + 3, NULL, 16);
    }
    free(txt);
    return n;
}

static size_t find(const uint8_t *buf, size_t len, const uint8_t *pat, size_t plen)
{
    for (size_t i = 0; i + plen <= len; i++)
        if (memcmp(buf + i, pat, plen) == 0) return i;
    return (size_t)-1;
}

/* Encodes `vals` (n values of t) at mpn, expects the bytes verbatim in the file, decodes them from the
 * file and compares with `want` bits. Returns 1 if the page was found. */
static int golden_page(const uint8_t *file, size_t flen, tsf_type t, tsf_encoding e, int mpn,
                       const void *vals, const uint64_t *want, size_t n, const char *what)
{
    int ok = 0;
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_codec(PATHS[p], mpn);
        size_t len;
        uint8_t *b = enc(c, t, e, vals, n, &len);
        size_t at = find(file, flen, b, len);
        if (at == (size_t)-1) {
            fprintf(stderr, "%s: our %zu-byte %s stream (path %s) is not in the golden file\n", what, len,
                    tsf_encoding_name(e), tsf_codec_path_name(PATHS[p]));
            tsf_test_failures++;
        } else {
            ok = 1;
            uint8_t *out = malloc(n * 8);
            tsf_error err;
            size_t used = 0;
            CHECK_OK(tsf_codec_decode(c, t, e, file + at, flen - at, out, n, &used, &err), &err);
            CHECK_EQ_INT(used, len);
            for (size_t i = 0; i < n; i++) {
                uint64_t got = t == TSF_FLOAT ? fbits(((float *)out)[i]) : dbits(((double *)out)[i]);
                if (got != want[i]) {
                    fprintf(stderr, "%s value %zu: got %llx want %llx\n", what, i, (unsigned long long)got,
                            (unsigned long long)want[i]);
                    tsf_test_failures++;
                    break;
                }
            }
            free(out);
        }
        free(b);
        tsf_codec_close(c);
    }
    return ok;
}

static void test_golden_pages(void)
{
    const char *dir = tsf_test_data_dir();
    static const struct {
        const char *name;
        tsf_type t;
        tsf_encoding e;
        int mpn;
    } files[] = {
        {"tree_nonaligned_float_ts2diff_p2_uncompressed", TSF_FLOAT, TSF_ENC_TS_2DIFF, 2},
        {"tree_nonaligned_float_ts2diff_p5_uncompressed", TSF_FLOAT, TSF_ENC_TS_2DIFF, 5},
        {"tree_nonaligned_double_ts2diff_p2_uncompressed", TSF_DOUBLE, TSF_ENC_TS_2DIFF, 2},
        {"tree_nonaligned_double_ts2diff_p5_uncompressed", TSF_DOUBLE, TSF_ENC_TS_2DIFF, 5},
        {"tree_nonaligned_float_rle_p2_uncompressed", TSF_FLOAT, TSF_ENC_RLE, 2},
        {"tree_nonaligned_float_rle_p5_uncompressed", TSF_FLOAT, TSF_ENC_RLE, 5},
        {"tree_nonaligned_double_rle_p2_uncompressed", TSF_DOUBLE, TSF_ENC_RLE, 2},
        {"tree_nonaligned_double_rle_p5_uncompressed", TSF_DOUBLE, TSF_ENC_RLE, 5},
    };
    int found = 0;
    uint64_t *bits = malloc(3000 * 8);
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        char path[1024];
        size_t flen;
        snprintf(path, sizeof path, "%s/tsfile-java/%s.tsfile", dir, files[fi].name);
        uint8_t *file = tsf_test_read_file(path, &flen);
        if (!file) continue;
        snprintf(path, sizeof path, "%s/tsfile-java/%s.tsfile.csv", dir, files[fi].name);
        size_t n = load_bits(path, NULL, bits, 3000);
        CHECK_EQ_INT(n, 3000);
        /* three pages of 1000 points; the values are exactly representable, so input = output */
        for (size_t pg = 0; pg < 3 && n == 3000; pg++) {
            float f[1000];
            double d[1000];
            for (size_t i = 0; i < 1000; i++) {
                uint32_t u = (uint32_t)bits[pg * 1000 + i];
                memcpy(&f[i], &u, 4);
                memcpy(&d[i], &bits[pg * 1000 + i], 8);
            }
            found += golden_page(file, flen, files[fi].t, files[fi].e, files[fi].mpn,
                                 files[fi].t == TSF_FLOAT ? (void *)f : (void *)d, bits + pg * 1000, 1000,
                                 files[fi].name);
        }
        free(file);
    }
    /* the overflow file: encode the writer's input, find it, decode to the reader's output */
    char path[1024];
    size_t flen;
    const char *ov = "tree_nonaligned_float_double_precision_overflow_uncompressed.tsfile";
    snprintf(path, sizeof path, "%s/tsfile-java/%s", dir, ov);
    uint8_t *file = tsf_test_read_file(path, &flen);
    if (file) {
        static const struct {
            const char *m;
            tsf_type t;
            tsf_encoding e;
        } ms[] = {{"f_ts2diff", TSF_FLOAT, TSF_ENC_TS_2DIFF},
                  {"f_rle", TSF_FLOAT, TSF_ENC_RLE},
                  {"d_ts2diff", TSF_DOUBLE, TSF_ENC_TS_2DIFF},
                  {"d_rle", TSF_DOUBLE, TSF_ENC_RLE}};
        for (size_t k = 0; k < 4; k++) {
            uint64_t in[40], want[40];
            char p2[1100];
            snprintf(p2, sizeof p2, "%s.input.csv", path);
            size_t a = load_bits(p2, ms[k].m, in, 40);
            snprintf(p2, sizeof p2, "%s.csv", path);
            size_t b = load_bits(p2, ms[k].m, want, 40);
            CHECK_EQ_INT(a, 40);
            CHECK_EQ_INT(b, 40);
            float f[40];
            double d[40];
            for (int i = 0; i < 40; i++) {
                uint32_t u = (uint32_t)in[i];
                memcpy(&f[i], &u, 4);
                memcpy(&d[i], &in[i], 8);
            }
            found += golden_page(file, flen, ms[k].t, ms[k].e, 2,
                                 ms[k].t == TSF_FLOAT ? (void *)f : (void *)d, want, 40, ms[k].m);
        }
        free(file);
    }
    free(bits);
    CHECK(found > 0);
}

int main(void)
{
    TSF_RUN(test_java_round);
    TSF_RUN(test_spec_example);
    TSF_RUN(test_roundtrip);
    TSF_RUN(test_overflow_behaviour);
    TSF_RUN(test_overflow_layout);
    TSF_RUN(test_hostile);
    TSF_RUN(test_golden_pages);
    return tsf_test_finish();
}
