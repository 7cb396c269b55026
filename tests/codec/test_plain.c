/*
 * Tests of src/codec/plain.c (spec §2): the worked examples byte for byte, Java's NaN
 * canonicalisation on write, round trips of every type over the varint fast path boundaries,
 * count(), and hostile input (truncation at every byte, bad varints and lengths).
 */
#include <math.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "test.h"

static tsf_codec *codec_open(void)
{
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    return c;
}

static void expect_bytes(tsf_type t, const void *v, size_t n, const uint8_t *want, size_t want_len)
{
    tsf_codec *c = codec_open();
    uint8_t buf[256];
    size_t w = 0;
    tsf_error err;
    CHECK(tsf_codec_encode_bound(t, TSF_ENC_PLAIN, n, 16) <= sizeof buf);
    CHECK_OK(tsf_codec_encode(c, t, TSF_ENC_PLAIN, v, n, buf, sizeof buf, &w, &err), &err);
    CHECK_EQ_INT(w, want_len);
    if (w == want_len) CHECK_MEM(buf, want, w);
    tsf_codec_close(c);
}

static void test_worked_examples(void)
{
    const int32_t i32[] = {1, 300, 0};
    const uint8_t e1[] = {0x02, 0xd8, 0x04, 0x00};
    expect_bytes(TSF_INT32, i32, 3, e1, sizeof e1);
    expect_bytes(TSF_DATE, i32, 3, e1, sizeof e1);
    const int64_t i64 = 1000;
    const uint8_t e2[] = {0, 0, 0, 0, 0, 0, 0x03, 0xe8};
    expect_bytes(TSF_INT64, &i64, 1, e2, 8);
    expect_bytes(TSF_TIMESTAMP, &i64, 1, e2, 8);
    const double d = 1.5;
    const uint8_t e3[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    expect_bytes(TSF_DOUBLE, &d, 1, e3, 8);
    const float f = 1.5f;
    const uint8_t e4[] = {0x3f, 0xc0, 0, 0};
    expect_bytes(TSF_FLOAT, &f, 1, e4, 4);
    const uint8_t t = 1;
    expect_bytes(TSF_BOOLEAN, &t, 1, &t, 1);
    const int32_t m1 = -1, m300 = -300;
    const uint8_t e5[] = {0x01}, e6[] = {0xd7, 0x04};
    expect_bytes(TSF_INT32, &m1, 1, e5, 1);
    expect_bytes(TSF_INT32, &m300, 1, e6, 2);
    const tsf_bytes ab = {(const uint8_t *)"ab", 2};
    const uint8_t e7[] = {0x04, 0x61, 0x62};
    expect_bytes(TSF_TEXT, &ab, 1, e7, 3);
    expect_bytes(TSF_STRING, &ab, 1, e7, 3);
    expect_bytes(TSF_BLOB, &ab, 1, e7, 3);
    /* a non-zero BOOLEAN is written as 01; INT32 extremes take 5 bytes */
    const uint8_t b7 = 7;
    expect_bytes(TSF_BOOLEAN, &b7, 1, &t, 1);
    const int32_t ext[] = {INT32_MIN, INT32_MAX};
    const uint8_t e8[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0xfe, 0xff, 0xff, 0xff, 0x0f};
    expect_bytes(TSF_INT32, ext, 2, e8, sizeof e8);
    /* empty page: nothing */
    expect_bytes(TSF_INT64, &i64, 0, e2, 0);
}

static void test_nan(void)
{
    /* write: floatToIntBits / doubleToLongBits canonicalise every NaN; read: bits as stored */
    uint32_t fb[] = {0x7f800001u, 0xffc00001u, 0x7fc00000u, 0x7f800000u, 0x80000000u};
    float fv[5];
    memcpy(fv, fb, sizeof fv);
    const uint8_t ef[] = {0x7f, 0xc0, 0,    0,    0x7f, 0xc0, 0,    0, 0x7f, 0xc0,
                          0,    0,    0x7f, 0x80, 0,    0,    0x80, 0, 0,    0};
    expect_bytes(TSF_FLOAT, fv, 5, ef, sizeof ef);
    uint64_t db[] = {0x7ff0000000000001ull, 0xfff8000000000000ull, 0xfff0000000000000ull};
    double dv[3];
    memcpy(dv, db, sizeof dv);
    const uint8_t ed[] = {0x7f, 0xf8, 0, 0, 0,    0,    0, 0, 0x7f, 0xf8, 0, 0,
                          0,    0,    0, 0, 0xff, 0xf0, 0, 0, 0,    0,    0, 0};
    expect_bytes(TSF_DOUBLE, dv, 3, ed, sizeof ed);

    tsf_codec *c = codec_open();
    tsf_error err;
    const uint8_t stored[] = {0x7f, 0x80, 0x00, 0x01};
    float out;
    CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, TSF_ENC_PLAIN, stored, 4, &out, 1, NULL, &err), &err);
    uint32_t bits;
    memcpy(&bits, &out, 4);
    CHECK_EQ_INT(bits, 0x7f800001u);
    CHECK(isnan(out));
    /* BOOLEAN: any non-zero byte reads as true */
    const uint8_t bools[] = {0, 1, 2, 0xff};
    uint8_t bo[4];
    CHECK_OK(tsf_codec_decode(c, TSF_BOOLEAN, TSF_ENC_PLAIN, bools, 4, bo, 4, NULL, &err), &err);
    const uint8_t want[] = {0, 1, 1, 1};
    CHECK_MEM(bo, want, 4);
    tsf_codec_close(c);
}

/* Round trip through an exact-size copy (so ASan sees any over-read); checks count() too. */
static void roundtrip(tsf_type t, const void *v, size_t n)
{
    tsf_codec *c = codec_open();
    tsf_error err;
    size_t var = 0;
    if (tsf_type_size(t) == sizeof(tsf_bytes))
        for (size_t i = 0; i < n; i++) var += ((const tsf_bytes *)v)[i].len;
    size_t cap = tsf_codec_encode_bound(t, TSF_ENC_PLAIN, n, var);
    uint8_t *buf = malloc(cap + 1), *out = malloc(n * tsf_type_size(t) + 1);
    size_t w = 0, used = 0, cnt = 0;
    CHECK_OK(tsf_codec_encode(c, t, TSF_ENC_PLAIN, v, n, buf, cap, &w, &err), &err);
    uint8_t *exact = malloc(w + 1);
    memcpy(exact, buf, w);
    CHECK_OK(tsf_codec_decode(c, t, TSF_ENC_PLAIN, exact, w, out, n, &used, &err), &err);
    CHECK_EQ_INT(used, w);
    CHECK_OK(tsf_codec_count(t, TSF_ENC_PLAIN, exact, w, &cnt, &err), &err);
    CHECK_EQ_INT(cnt, n);
    if (tsf_type_size(t) == sizeof(tsf_bytes)) {
        const tsf_bytes *a = (const tsf_bytes *)v, *b = (const tsf_bytes *)out;
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ_INT(b[i].len, a[i].len);
            if (b[i].len == a[i].len && a[i].len) CHECK_MEM(b[i].data, a[i].data, a[i].len);
            CHECK(b[i].data >= exact && b[i].data + b[i].len <= exact + w); /* borrowed from src */
        }
    } else if (t != TSF_BOOLEAN) {
        CHECK_MEM(out, v, n * tsf_type_size(t));
    }
    /* truncation anywhere makes n values impossible */
    for (size_t cut = 0; cut < w; cut += 1 + w / 300) {
        uint8_t *tr = malloc(cut + 1);
        memcpy(tr, buf, cut);
        CHECK_EQ_INT(tsf_codec_decode(c, t, TSF_ENC_PLAIN, tr, cut, out, n, NULL, &err), TSF_ECORRUPT);
        free(tr);
    }
    free(exact);
    free(buf);
    free(out);
    tsf_codec_close(c);
}

static void test_roundtrips(void)
{
    uint64_t s = 5;
    enum { N = 3000 };
    static int32_t i32[N];
    static int64_t i64[N];
    static float f32[N];
    static double f64[N];
    static uint8_t bo[N];
    static tsf_bytes bs[N];
    static uint8_t pool[N * 40];
    for (size_t n = 0; n < 40; n++) {
        /* small values only, then one multi-byte value at each position: the 1-byte fast path
         * must hand over to the slow path at every offset within its 8-byte window */
        for (size_t i = 0; i < n; i++) i32[i] = (int32_t)(i % 100) - 50;
        roundtrip(TSF_INT32, i32, n);
        for (size_t k = 0; k < n; k++) {
            int32_t keep = i32[k];
            i32[k] = k % 2 ? INT32_MIN : 1000;
            roundtrip(TSF_INT32, i32, n);
            i32[k] = keep;
        }
    }
    for (size_t i = 0; i < N; i++) {
        uint64_t r = tsf_test_rand(&s);
        i32[i] = (int32_t)(r >> (r % 33 + 31));
        i64[i] = (int64_t)(tsf_test_rand(&s) >> (r % 64));
        uint32_t fb = (uint32_t)tsf_test_rand(&s);
        if ((fb & 0x7fffffffu) > 0x7f800000u) fb = 0x7fc00000u; /* canonical NaN survives */
        memcpy(&f32[i], &fb, 4);
        uint64_t db = tsf_test_rand(&s);
        if ((db & ~(1ull << 63)) > 0x7ff0000000000000ull) db = 0x7ff8000000000000ull;
        memcpy(&f64[i], &db, 8);
        bo[i] = (uint8_t)(r & 1);
        size_t len = r % 5 == 0 ? 0 : (size_t)(r % 40);
        for (size_t k = 0; k < len; k++) pool[i * 40 + k] = (uint8_t)tsf_test_rand(&s);
        bs[i].data = pool + i * 40;
        bs[i].len = len;
    }
    i32[0] = INT32_MIN, i32[1] = INT32_MAX, i64[0] = INT64_MIN, i64[1] = INT64_MAX;
    roundtrip(TSF_INT32, i32, N);
    roundtrip(TSF_DATE, i32, N);
    roundtrip(TSF_INT64, i64, N);
    roundtrip(TSF_TIMESTAMP, i64, N);
    roundtrip(TSF_FLOAT, f32, N);
    roundtrip(TSF_DOUBLE, f64, N);
    roundtrip(TSF_BOOLEAN, bo, N);
    roundtrip(TSF_TEXT, bs, N);
    roundtrip(TSF_STRING, bs, N);
    roundtrip(TSF_BLOB, bs, N);
    /* a long string: 2-byte length varint */
    static uint8_t big[100000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7);
    tsf_bytes one = {big, sizeof big};
    roundtrip(TSF_BLOB, &one, 1);
}

static void test_count_and_hostile(void)
{
    tsf_codec *c = codec_open();
    tsf_error err;
    size_t n = 0;
    const uint8_t seven[7] = {0};
    CHECK_EQ_INT(tsf_codec_count(TSF_INT64, TSF_ENC_PLAIN, seven, 7, &n, &err), TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_count(TSF_FLOAT, TSF_ENC_PLAIN, seven, 7, &n, &err), TSF_ECORRUPT);
    CHECK_OK(tsf_codec_count(TSF_BOOLEAN, TSF_ENC_PLAIN, seven, 7, &n, &err), &err);
    CHECK_EQ_INT(n, 7);
    const uint8_t v[] = {0x02, 0xd8, 0x04, 0x00, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_OK(tsf_codec_count(TSF_INT32, TSF_ENC_PLAIN, v, sizeof v, &n, &err), &err);
    CHECK_EQ_INT(n, 4);
    const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_EQ_INT(tsf_codec_count(TSF_INT32, TSF_ENC_PLAIN, six, 6, &n, &err), TSF_ECORRUPT);
    CHECK(strstr(err.message, "offset 0") != NULL);
    int32_t o32[4];
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_PLAIN, six, 6, o32, 1, NULL, &err), TSF_ECORRUPT);
    const uint8_t trunc[] = {0x02, 0x80};
    CHECK_EQ_INT(tsf_codec_count(TSF_INT32, TSF_ENC_PLAIN, trunc, 2, &n, &err), TSF_ECORRUPT);
    CHECK(strstr(err.message, "offset 1") != NULL);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_PLAIN, trunc, 2, o32, 2, NULL, &err), TSF_ECORRUPT);
    /* byte strings: negative length, length past the end */
    tsf_bytes ob[2];
    const uint8_t neg[] = {0x01, 0x61};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_TEXT, TSF_ENC_PLAIN, neg, 2, ob, 1, NULL, &err), TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_count(TSF_TEXT, TSF_ENC_PLAIN, neg, 2, &n, &err), TSF_ECORRUPT);
    const uint8_t past[] = {0x06, 0x61, 0x62};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_STRING, TSF_ENC_PLAIN, past, 3, ob, 1, NULL, &err), TSF_ECORRUPT);
    CHECK(strstr(err.message, "offset") != NULL);
    CHECK_EQ_INT(tsf_codec_count(TSF_STRING, TSF_ENC_PLAIN, past, 3, &n, &err), TSF_ECORRUPT);
    const uint8_t two[] = {0x04, 0x61, 0x62, 0x00};
    CHECK_OK(tsf_codec_count(TSF_BLOB, TSF_ENC_PLAIN, two, 4, &n, &err), &err);
    CHECK_EQ_INT(n, 2);
    /* random garbage: OK or ECORRUPT, never out of bounds */
    uint64_t s = 3;
    const tsf_type types[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE, TSF_TEXT, TSF_BLOB};
    static uint8_t out[64 * 16];
    for (int it = 0; it < 2000; it++) {
        size_t len = (size_t)(tsf_test_rand(&s) % 48);
        uint8_t *g = malloc(len + 1);
        for (size_t i = 0; i < len; i++) g[i] = (uint8_t)tsf_test_rand(&s);
        tsf_type t = types[it % 7];
        size_t want = (size_t)(tsf_test_rand(&s) % 64);
        tsf_status st = tsf_codec_decode(c, t, TSF_ENC_PLAIN, g, len, out, want, NULL, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        st = tsf_codec_count(t, TSF_ENC_PLAIN, g, len, &n, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(g);
    }
    /* undersized dst */
    int64_t x[2] = {1, 2};
    uint8_t buf[16];
    size_t w = 5;
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT64, TSF_ENC_PLAIN, x, 2, buf, 15, &w, &err), TSF_ERANGE);
    CHECK_EQ_INT(w, 0);
    tsf_codec_close(c);
}

int main(void)
{
    TSF_RUN(test_worked_examples);
    TSF_RUN(test_nan);
    TSF_RUN(test_roundtrips);
    TSF_RUN(test_count_and_hostile);
    return tsf_test_finish();
}
