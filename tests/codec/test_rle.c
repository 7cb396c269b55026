/*
 * Tests of src/codec/rle.c (spec §5): the §5.3 worked examples byte for byte, the §5.2 golden
 * observations reproduced by encoding the same shapes of data, the batch encoder against the
 * literal Java state machine (per-value path), every bit width, multiple packages, hostile input,
 * and the first page of the Java golden file tree_nonaligned_int32_rle_uncompressed.tsfile.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "test.h"

#define NPATHS 6

static tsf_codec *open_path(tsf_codec_path p)
{
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = p;
    tsf_codec *c = NULL;
    if (tsf_codec_open(&c, &o, NULL) != TSF_OK) return NULL;
    return c;
}

/* Encodes with every path, checks all give `want` (if non-NULL) and the same bytes, then decodes
 * the result with every path and compares with the input. Returns the encoded size. */
static size_t check_all_paths(tsf_type type, const void *vals, size_t n, const uint8_t *want, size_t want_len,
                              uint8_t *out)
{
    size_t esz = type == TSF_BOOLEAN ? 1 : (type == TSF_INT64 || type == TSF_TIMESTAMP) ? 8 : 4;
    size_t cap = tsf_codec_encode_bound(type, TSF_ENC_RLE, n, 0);
    uint8_t *buf = malloc(cap);
    uint8_t *dec = malloc(n * esz + 1);
    size_t first_len = 0;
    tsf_error err;
    for (int p = 1; p <= NPATHS; p++) {
        tsf_codec *c = open_path((tsf_codec_path)p);
        size_t w = 0;
        CHECK_OK(tsf_codec_encode(c, type, TSF_ENC_RLE, vals, n, buf, cap, &w, &err), &err);
        if (p == 1) {
            first_len = w;
            if (out) memcpy(out, buf, w);
        } else {
            CHECK_EQ_INT(w, first_len);
            if (out && w == first_len) CHECK_MEM(buf, out, w);
        }
        if (want) {
            CHECK_EQ_INT(w, want_len);
            if (w == want_len) CHECK_MEM(buf, want, w);
        }
        size_t used = 0, cnt = 0;
        CHECK_OK(tsf_codec_decode(c, type, TSF_ENC_RLE, buf, w, dec, n, &used, &err), &err);
        if (n) CHECK_EQ_INT(used, w); /* n == 0 reads nothing */
        if (type == TSF_BOOLEAN) {
            for (size_t i = 0; i < n; i++) CHECK_EQ_INT(dec[i], ((const uint8_t *)vals)[i] != 0);
        } else {
            CHECK_MEM(dec, vals, n * esz);
        }
        CHECK_OK(tsf_codec_count(type, TSF_ENC_RLE, buf, w, &cnt, &err), &err);
        CHECK_EQ_INT(cnt, n);
        tsf_codec_close(c);
    }
    free(buf);
    free(dec);
    return first_len;
}

static void test_worked_examples(void)
{
    /* §5.3: INT32 [1,2,3,4,5] (C++ output, identical to Java) */
    const int32_t a[] = {1, 2, 3, 4, 5};
    const uint8_t ea[] = {0x06, 0x03, 0x03, 0x05, 0x29, 0xca, 0x00};
    check_all_paths(TSF_INT32, a, 5, ea, sizeof ea, NULL);
    /* ten 5s: one repeat run, the buffered copies discarded */
    int32_t b[10];
    for (int i = 0; i < 10; i++) b[i] = 5;
    const uint8_t eb[] = {0x03, 0x03, 0x14, 0x05};
    check_all_paths(TSF_INT32, b, 10, eb, sizeof eb, NULL);
    /* BOOLEAN [true, false, true]; 7 also counts as true */
    const uint8_t c[] = {1, 0, 7};
    const uint8_t ec[] = {0x04, 0x01, 0x03, 0x03, 0xa0};
    check_all_paths(TSF_BOOLEAN, c, 3, ec, sizeof ec, NULL);
    /* ten copies of 0x0102: INT64 run value big-endian, INT32 little-endian */
    int64_t d[10];
    int32_t d32[10];
    for (int i = 0; i < 10; i++) d[i] = d32[i] = 0x0102;
    const uint8_t ed[] = {0x04, 0x09, 0x14, 0x01, 0x02};
    const uint8_t ed32[] = {0x04, 0x09, 0x14, 0x02, 0x01};
    check_all_paths(TSF_INT64, d, 10, ed, sizeof ed, NULL);
    check_all_paths(TSF_TIMESTAMP, d, 10, ed, sizeof ed, NULL);
    check_all_paths(TSF_INT32, d32, 10, ed32, sizeof ed32, NULL);
    check_all_paths(TSF_DATE, d32, 10, ed32, sizeof ed32, NULL);
    /* empty page: Java flushes a zero-length package */
    const uint8_t ee[] = {0x00};
    check_all_paths(TSF_INT32, a, 0, ee, 1, NULL);
    check_all_paths(TSF_INT64, d, 0, ee, 1, NULL);
    /* all zeros: minimum width 1 */
    const int32_t z[3] = {0, 0, 0};
    const uint8_t ez[] = {0x04, 0x01, 0x03, 0x03, 0x00};
    check_all_paths(TSF_INT32, z, 3, ez, sizeof ez, NULL);
}

/* Fills runs of the given lengths with the given values. */
static size_t make_runs(int64_t *v, const int *lens, const int64_t *vals, int k)
{
    size_t n = 0;
    for (int r = 0; r < k; r++)
        for (int i = 0; i < lens[r]; i++) v[n++] = vals[r];
    return n;
}

static void test_golden_observations(void)
{
    /* §5.2: runs of 8 x 7, 9 x 258, 15 x 0, ...: INT32 bw 9 gives 09 | 10 07 00 | 12 02 01 | 1e 00 00 */
    static const int lens[] = {8, 9, 15, 16, 17, 100, 7, 1, 3, 250, 24, 40};
    const int64_t vals[] = {7, 258, 0, 3, 4, 5, 6, 100, 8, 9, 10, 11};
    int64_t v64[600];
    int32_t v32[600];
    size_t n = make_runs(v64, lens, vals, 12);
    for (size_t i = 0; i < n; i++) v32[i] = (int32_t)v64[i];
    uint8_t out[4096];
    size_t w = check_all_paths(TSF_INT32, v32, n, NULL, 0, out);
    const uint8_t e32[] = {0x09, 0x10, 0x07, 0x00, 0x12, 0x02, 0x01, 0x1e, 0x00, 0x00};
    CHECK(w > 12);
    CHECK_MEM(out + 1, e32, sizeof e32);
    /* the run of 7 at a group boundary: 16 + 17 + 100 runs first, then bit-packed 7/1/3 */
    w = check_all_paths(TSF_INT64, v64, n, NULL, 0, out);
    const uint8_t e64[] = {0x09, 0x10, 0x00, 0x07, 0x12, 0x01, 0x02};
    CHECK_MEM(out + 1, e64, sizeof e64);

    /* bw 32 with negatives: -5 x 8, INT32_MIN x 9 */
    const int64_t nv[] = {-5, INT32_MIN, 2};
    const int nl[] = {8, 9, 3};
    n = make_runs(v64, nl, nv, 3);
    for (size_t i = 0; i < n; i++) v32[i] = (int32_t)v64[i];
    check_all_paths(TSF_INT32, v32, n, NULL, 0, out);
    const uint8_t en[] = {0x20, 0x10, 0xfb, 0xff, 0xff, 0xff, 0x12, 0x00, 0x00, 0x00, 0x80};
    CHECK_MEM(out + 1, en, sizeof en);
    /* INT64 bw 64: -5 and INT64_MIN big-endian */
    const int64_t nv64[] = {-5, INT64_MIN, 2};
    n = make_runs(v64, nl, nv64, 3);
    check_all_paths(TSF_INT64, v64, n, NULL, 0, out);
    const uint8_t en64[] = {0x40, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb,
                            0x12, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    CHECK_MEM(out + 1, en64, sizeof en64);
    /* INT32_MAX: bw 31, 4 value bytes LE */
    for (int i = 0; i < 8; i++) v32[i] = INT32_MAX;
    check_all_paths(TSF_INT32, v32, 8, NULL, 0, out);
    const uint8_t emax[] = {0x06, 0x1f, 0x10, 0xff, 0xff, 0xff, 0x7f};
    CHECK_MEM(out, emax, sizeof emax);
    /* BOOLEAN: 38 | 01 | 10 01 | 12 00 | 1e 01 (true x 8, false x 9, true x 15) */
    uint8_t bv[64];
    size_t bn = 0;
    for (int i = 0; i < 8; i++) bv[bn++] = 1;
    for (int i = 0; i < 9; i++) bv[bn++] = 0;
    for (int i = 0; i < 15; i++) bv[bn++] = 1;
    check_all_paths(TSF_BOOLEAN, bv, bn, NULL, 0, out);
    const uint8_t eb[] = {0x07, 0x01, 0x10, 0x01, 0x12, 0x00, 0x1e, 0x01};
    CHECK_MEM(out, eb, sizeof eb);
    /* DATE 20000101 x 8: bw 25, 4 value bytes little-endian */
    for (int i = 0; i < 8; i++) v32[i] = 20000101;
    check_all_paths(TSF_DATE, v32, 8, NULL, 0, out);
    const uint8_t ed[] = {0x06, 0x19, 0x10, 0x65, 0x2d, 0x31, 0x01};
    CHECK_MEM(out, ed, sizeof ed);
}

static void test_max_run_split(void)
{
    /* 4 leading values put the 33000-long run off a group boundary: one group, then runs of
     * 32767 (fe ff 03, value e8 03 = 1000 at bw 10) and 229 (ca 03) */
    size_t n = 4 + 33000 + 3;
    int32_t *v = malloc(n * sizeof *v);
    v[0] = 1, v[1] = 2, v[2] = 3, v[3] = 4;
    for (size_t i = 4; i < 4 + 33000; i++) v[i] = 1000;
    v[n - 3] = 5, v[n - 2] = 6, v[n - 1] = 7;
    uint8_t out[256];
    /* bytes from an independent model of Java's state machine; the spec's fragments are
     * fe ff 03 e8 03 (32767 x 1000) and the second run of 229 (ca 03) */
    const uint8_t e[] = {0x22, 0x0a, 0x03, 0x08, 0x00, 0x40, 0x20, 0x0c, 0x04, 0xfa, 0x3e, 0x8f,
                         0xa3, 0xe8, 0xfe, 0xff, 0x03, 0xe8, 0x03, 0xca, 0x03, 0xe8, 0x03, 0x03,
                         0x03, 0x01, 0x40, 0x60, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    check_all_paths(TSF_INT32, v, n, e, sizeof e, out);
    /* exactly 32767 then a different value: one run, then a 1-value group */
    for (size_t i = 0; i < 32767; i++) v[i] = 9;
    v[32767] = 1;
    const uint8_t e2[] = {0x0b, 0x04, 0xfe, 0xff, 0x03, 0x09, 0x03, 0x01, 0x10, 0x00, 0x00, 0x00};
    check_all_paths(TSF_INT32, v, 32768, e2, sizeof e2, out);
    /* 32768 equal values: the 32768th starts a new buffer after the split */
    v[32767] = 9;
    const uint8_t e3[] = {0x0b, 0x04, 0xfe, 0xff, 0x03, 0x09, 0x03, 0x01, 0x90, 0x00, 0x00, 0x00};
    check_all_paths(TSF_INT32, v, 32768, e3, sizeof e3, out);
    /* 32767 + 8 equal values: two repeat runs */
    for (size_t i = 0; i < 32775; i++) v[i] = 9;
    const uint8_t e4[] = {0x07, 0x04, 0xfe, 0xff, 0x03, 0x09, 0x10, 0x09};
    check_all_paths(TSF_INT32, v, 32775, e4, sizeof e4, out);
    free(v);
}

/* Random data with runs, varied widths: the batch encoder must equal the state machine. */
static void test_random_paths(void)
{
    uint64_t s = 12345;
    int64_t *v64 = malloc(70000 * sizeof *v64);
    int32_t *v32 = malloc(70000 * sizeof *v32);
    uint8_t *bv = malloc(70000);
    for (int iter = 0; iter < 60; iter++) {
        size_t n = (size_t)(tsf_test_rand(&s) % (iter < 50 ? 3000 : 70000));
        unsigned w = 1 + (unsigned)(tsf_test_rand(&s) % 64);
        size_t i = 0;
        while (i < n) {
            uint64_t r = tsf_test_rand(&s);
            size_t len = r % 4 == 0 ? (size_t)(tsf_test_rand(&s) % (iter >= 50 ? 40000 : 40)) : 1 + r % 9;
            uint64_t x = tsf_test_rand(&s) >> (64 - w);
            if (r % 7 == 0) x = 0;
            for (size_t k = 0; k < len && i < n; k++) {
                v64[i] = (int64_t)x;
                v32[i] = (int32_t)(x >> (w > 32 ? w - 32 : 0));
                bv[i] = (uint8_t)(x & 1);
                i++;
            }
        }
        check_all_paths(TSF_INT64, v64, n, NULL, 0, NULL);
        check_all_paths(TSF_INT32, v32, n, NULL, 0, NULL);
        check_all_paths(TSF_BOOLEAN, bv, n, NULL, 0, NULL);
    }
    free(v64);
    free(v32);
    free(bv);
}

/* Every width 1..64 (INT64) and 1..32 (INT32), group counts around the 63-group limit. */
static void test_every_width(void)
{
    uint64_t s = 99;
    static int64_t v64[1100];
    static int32_t v32[1100];
    const size_t ns[] = {1, 7, 8, 9, 503, 504, 505, 1100};
    for (unsigned w = 1; w <= 64; w++) {
        for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
            size_t n = ns[t];
            for (size_t i = 0; i < n; i++) {
                uint64_t x = tsf_test_rand(&s) >> (64 - w);
                if (i == 0) x |= 1ull << (w - 1); /* width exactly w */
                v64[i] = (int64_t)x;
                v32[i] = (int32_t)(uint32_t)x;
            }
            static uint8_t out[12000];
            check_all_paths(TSF_INT64, v64, n, NULL, 0, out);
            CHECK_EQ_INT(out[(out[0] & 0x80) ? 2 : 1], w); /* the width byte after uvarint(L) */
            if (w <= 32) check_all_paths(TSF_INT32, v32, n, NULL, 0, NULL);
        }
    }
}

static void test_multi_package_and_hand_made(void)
{
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    tsf_error err;
    /* two packages back to back, the first empty, as several flushes would write them */
    const uint8_t two[] = {0x00, 0x06, 0x03, 0x03, 0x05, 0x29, 0xca, 0x00, 0x03, 0x03, 0x14, 0x05};
    int32_t v[16];
    size_t used = 0, cnt = 0;
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, two, sizeof two, v, 15, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof two);
    const int32_t want[] = {1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
    CHECK_MEM(v, want, sizeof want);
    CHECK_OK(tsf_codec_count(TSF_INT32, TSF_ENC_RLE, two, sizeof two, &cnt, &err), &err);
    CHECK_EQ_INT(cnt, 15);
    /* fewer values than the stream holds: stops after the package that supplies the last one */
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, two, sizeof two, v, 3, &used, &err), &err);
    CHECK_EQ_INT(used, 8);
    CHECK_EQ_INT(v[2], 3);
    /* width 0 (older C++ writers, all zeros): a group and a run of no bytes each */
    const uint8_t w0[] = {0x05, 0x00, 0x03, 0x08, 0x10, 0x00};
    for (int i = 0; i < 16; i++) v[i] = -1;
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, w0, sizeof w0, v, 16, &used, &err), &err);
    for (int i = 0; i < 16; i++) CHECK_EQ_INT(v[i], 0);
    /* run value bytes above the width are kept, as Java's reader adds whole bytes */
    const uint8_t junk[] = {0x04, 0x09, 0x10, 0xff, 0xff};
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, junk, sizeof junk, v, 8, &used, &err), &err);
    CHECK_EQ_INT(v[7], 65535);
    /* a bp_run header longer than Java's 63 groups is still read as a uvarint */
    uint8_t big[5 + 64];
    big[0] = 4 + 64, big[1] = 1, big[2] = 0x81, big[3] = 0x01, big[4] = 8; /* (64 << 1) | 1 = 129 */
    for (int i = 0; i < 64; i++) big[5 + i] = (uint8_t)(i & 1 ? 0xff : 0x00);
    int32_t bigv[512];
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, big, sizeof big, bigv, 512, &used, &err), &err);
    CHECK_EQ_INT(bigv[0], 0);
    CHECK_EQ_INT(bigv[8], 1);
    CHECK_EQ_INT(bigv[511], 1);
    tsf_codec_close(c);
}

/* Every path must refuse the stream with a message naming `what` (a substring) and an offset. */
static void expect_corrupt(tsf_type t, const uint8_t *b, size_t len, size_t n, const char *what)
{
    static uint8_t out[8 * 4096];
    tsf_error err;
    for (int p = 1; p <= NPATHS; p++) {
        tsf_codec *c = open_path((tsf_codec_path)p);
        tsf_status s = tsf_codec_decode(c, t, TSF_ENC_RLE, b, len, out, n, NULL, &err);
        if (s != TSF_ECORRUPT) fprintf(stderr, "  case: %s\n", what);
        CHECK_EQ_INT(s, TSF_ECORRUPT);
        if (s == TSF_ECORRUPT)
            CHECK(strstr(err.message, "offset") != NULL && strstr(err.message, what) != NULL);
        if (s == TSF_ECORRUPT && !strstr(err.message, what)) fprintf(stderr, "  message: %s\n", err.message);
        tsf_codec_close(c);
    }
}

static void test_hostile(void)
{
    const uint8_t bw33[] = {0x03, 0x21, 0x10, 0x00};
    expect_corrupt(TSF_INT32, bw33, sizeof bw33, 8, "bit width 33");
    const uint8_t bw65[] = {0x03, 0x41, 0x10, 0x00};
    expect_corrupt(TSF_INT64, bw65, sizeof bw65, 8, "bit width 65");
    const uint8_t g0[] = {0x03, 0x01, 0x01, 0x08};
    expect_corrupt(TSF_INT32, g0, sizeof g0, 1, "0 groups");
    const uint8_t last0[] = {0x04, 0x01, 0x03, 0x00, 0xff};
    expect_corrupt(TSF_INT32, last0, sizeof last0, 1, "last-group count 0");
    const uint8_t last9[] = {0x04, 0x01, 0x03, 0x09, 0xff};
    expect_corrupt(TSF_INT32, last9, sizeof last9, 1, "last-group count 9");
    const uint8_t run0[] = {0x03, 0x01, 0x00, 0x01};
    expect_corrupt(TSF_INT32, run0, sizeof run0, 1, "repeat run of 0");
    const uint8_t big_l[] = {0x7f, 0x01, 0x10, 0x01};
    expect_corrupt(TSF_INT32, big_l, sizeof big_l, 8, "declares 127 bytes");
    const uint8_t groups_over[] = {0x04, 0x08, 0x05, 0x08, 0xff};
    expect_corrupt(TSF_INT32, groups_over, sizeof groups_over, 8, "runs past its package");
    const uint8_t short_vals[] = {0x03, 0x01, 0x10, 0x01};
    expect_corrupt(TSF_INT32, short_vals, sizeof short_vals, 9, "after 8 of 9 values");
    const uint8_t bad_varint[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_corrupt(TSF_INT64, bad_varint, sizeof bad_varint, 1, "package length varint");
    expect_corrupt(TSF_BOOLEAN, bad_varint, 0, 1, "after 0 of 1");

    /* truncation at every byte offset of real streams (both run kinds, all three kinds) */
    uint64_t s = 7;
    static int64_t v[2000];
    for (size_t i = 0; i < 2000; i++) v[i] = (i / 50) % 2 ? (int64_t)(tsf_test_rand(&s) % 1000) - 500 : 42;
    static int32_t v32[2000];
    static uint8_t vb[2000];
    for (size_t i = 0; i < 2000; i++) v32[i] = (int32_t)v[i], vb[i] = (uint8_t)(v[i] & 1);
    static uint8_t buf[40000];
    tsf_error err;
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    const tsf_type types[] = {TSF_INT64, TSF_INT32, TSF_BOOLEAN};
    const void *srcs[] = {v, v32, vb};
    for (int t = 0; t < 3; t++) {
        size_t w = 0;
        CHECK_OK(tsf_codec_encode(c, types[t], TSF_ENC_RLE, srcs[t], 2000, buf, sizeof buf, &w, &err), &err);
        for (size_t cut = 0; cut < w; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1); /* exact-size copy so ASan sees any over-read */
            memcpy(copy, buf, cut);
            static uint8_t out[2000 * 8];
            tsf_status st = tsf_codec_decode(c, types[t], TSF_ENC_RLE, copy, cut, out, 2000, NULL, NULL);
            CHECK_EQ_INT(st, TSF_ECORRUPT);
            size_t cnt;
            st = tsf_codec_count(types[t], TSF_ENC_RLE, copy, cut, &cnt, NULL);
            CHECK(st == TSF_ECORRUPT || (st == TSF_OK && cut == 0));
            free(copy);
        }
    }
    /* random garbage and random byte flips: OK or ECORRUPT, never out of bounds */
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = (size_t)(tsf_test_rand(&s) % 64);
        uint8_t *g = malloc(len ? len : 1);
        if (iter % 2) {
            for (size_t i = 0; i < len; i++) g[i] = (uint8_t)tsf_test_rand(&s);
        } else {
            size_t w = 0;
            tsf_codec_encode(c, TSF_INT64, TSF_ENC_RLE, v + iter % 1000, 60, buf, sizeof buf, &w, NULL);
            len = len < w ? len : w;
            memcpy(g, buf, len);
            if (len) g[tsf_test_rand(&s) % len] ^= (uint8_t)(1u << (tsf_test_rand(&s) % 8));
        }
        static uint8_t out[4096 * 8];
        for (int t = 0; t < 3; t++) {
            size_t n = (size_t)(tsf_test_rand(&s) % 4096);
            tsf_status st = tsf_codec_decode(c, types[t], TSF_ENC_RLE, g, len, out, n, NULL, NULL);
            CHECK(st == TSF_OK || st == TSF_ECORRUPT);
            size_t cnt;
            st = tsf_codec_count(types[t], TSF_ENC_RLE, g, len, &cnt, NULL);
            CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        }
        free(g);
    }
    tsf_codec_close(c);
}

static void test_undersized_dst(void)
{
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    int32_t v[5] = {1, 2, 3, 4, 5};
    uint8_t buf[256];
    size_t w = 99, need = tsf_rle_bound_n(5, 0);
    CHECK(need <= sizeof buf);
    tsf_error err;
    CHECK_EQ_INT(tsf_rle_encode_i32(c, v, 5, buf, need - 1, &w, &err), TSF_ERANGE);
    CHECK_EQ_INT(w, 0);
    CHECK_OK(tsf_rle_encode_i32(c, v, 5, buf, need, &w, &err), &err);
    CHECK_EQ_INT(w, 7);
    tsf_codec_close(c);
}

/* Reads uvarint at *pos of f (for the container walk below). */
static uint32_t uv(const uint8_t *f, size_t *pos)
{
    uint32_t v = 0;
    for (unsigned sh = 0;; sh += 7) {
        uint8_t b = f[(*pos)++];
        v |= (uint32_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) return v;
    }
}

/* First page of the Java golden INT32 RLE file against its CSV (container spec §4-§7). */
static void test_golden_first_page(void)
{
    const char *dir = tsf_test_data_dir();
    char path[1024];
    size_t flen = 0, clen = 0;
    snprintf(path, sizeof path, "%s/tsfile-java/tree_nonaligned_int32_rle_uncompressed.tsfile", dir);
    uint8_t *f = tsf_test_read_file(path, &flen);
    snprintf(path, sizeof path, "%s/tsfile-java/tree_nonaligned_int32_rle_uncompressed.tsfile.csv", dir);
    uint8_t *csv = tsf_test_read_file(path, &clen);
    if (!f || !csv) {
        CHECK(f && csv); /* tests/data is part of the checkout */
        free(f);
        free(csv);
        return;
    }
    /* head (7) | 00 + device id | chunk header 01 "s1" dataSize INT32 UNCOMPRESSED RLE */
    size_t pos = 7;
    CHECK_EQ_INT(f[pos++], 0x00);
    uint32_t segs = uv(f, &pos);
    for (uint32_t i = 0; i < segs; i++) {
        uint32_t l = uv(f, &pos);
        pos += l / 2;
    }
    CHECK_EQ_INT(f[pos++], 0x01);
    pos += uv(f, &pos) / 2; /* measurement id */
    uv(f, &pos);            /* dataSize */
    CHECK_EQ_INT(f[pos], TSF_INT32);
    CHECK_EQ_INT(f[pos + 1], TSF_UNCOMPRESSED);
    CHECK_EQ_INT(f[pos + 2], TSF_ENC_RLE);
    pos += 3;
    uint32_t usize = uv(f, &pos);
    uint32_t csize = uv(f, &pos);
    CHECK_EQ_INT(usize, csize);
    uint32_t count = uv(f, &pos);
    CHECK_EQ_INT(count, 1000);
    pos += 16 + 24; /* start/end time, INT32 statistics */
    size_t body = pos;
    uint32_t tlen = uv(f, &pos);
    pos += tlen;
    size_t vlen = body + usize - pos;
    const uint8_t head[] = {0xa5, 0x1f, 0x20, 0x7f, 0x08, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff};
    CHECK_MEM(f + pos, head, sizeof head); /* spec §5.2 golden page start */
    int32_t vals[1000];
    tsf_error err;
    for (int p = 1; p <= NPATHS; p++) {
        tsf_codec *c = open_path((tsf_codec_path)p);
        size_t used = 0, cnt = 0;
        CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLE, f + pos, vlen, vals, 1000, &used, &err), &err);
        CHECK_EQ_INT(used, vlen);
        CHECK_OK(tsf_codec_count(TSF_INT32, TSF_ENC_RLE, f + pos, vlen, &cnt, &err), &err);
        CHECK_EQ_INT(cnt, 1000);
        /* CSV rows: device,measurement,time,type,value; the first 1000 are page 0 */
        char *line = strchr((char *)csv, '\n') + 1;
        for (int i = 0; i < 1000 && line; i++) {
            char *comma = line;
            for (int k = 0; k < 4 && comma; k++) comma = strchr(comma, ',') + 1;
            CHECK_EQ_INT(vals[i], strtol(comma, NULL, 10));
            line = strchr(line, '\n');
            if (line) line++;
        }
        /* and re-encoding gives the Java bytes */
        uint8_t *re = malloc(tsf_rle_bound_n(1000, 0));
        size_t w = 0;
        CHECK_OK(
            tsf_codec_encode(c, TSF_INT32, TSF_ENC_RLE, vals, 1000, re, tsf_rle_bound_n(1000, 0), &w, &err),
            &err);
        CHECK_EQ_INT(w, vlen);
        if (w == vlen) CHECK_MEM(re, f + pos, vlen);
        free(re);
        tsf_codec_close(c);
    }
    free(f);
    free(csv);
}

int main(void)
{
    TSF_RUN(test_worked_examples);
    TSF_RUN(test_golden_observations);
    TSF_RUN(test_max_run_split);
    TSF_RUN(test_random_paths);
    TSF_RUN(test_every_width);
    TSF_RUN(test_multi_package_and_hand_made);
    TSF_RUN(test_hostile);
    TSF_RUN(test_undersized_dst);
    TSF_RUN(test_golden_first_page);
    return tsf_test_finish();
}
