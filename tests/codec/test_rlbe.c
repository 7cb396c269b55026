/*
 * Tests of RLBE (spec §10): hand-derived streams byte-exact (INT32 MIN/MAX/0/-1: one 32-bit segment,
 * Fibonacci `1011`, sign bits dropped and restored - the same bytes as the golden page start), FLOAT
 * and DOUBLE streams decoded with float/double accumulation, round trips of the integer types
 * (full-range random, small deltas, multi-block pages > 10000), truncation and garbage, and the
 * first page of the six golden RLBE files (decoded exactly; integer pages re-encoded byte-exact).
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "gorilla_golden.h"
#include "test.h"

static void test_hand_int32(void)
{
    const int32_t v[] = {INT32_MIN, INT32_MAX, 0, -1};
    const uint8_t e[] = {0x00, 0x00, 0x00, 0x04, 0x82, 0xc0, 0x00, 0x00, 0x00, 0x1f, 0xff,
                         0xff, 0xff, 0xc0, 0x00, 0x00, 0x00, 0x5f, 0xff, 0xff, 0xff, 0xc0};
    tsf_codec *c = xor_open_default();
    uint8_t b[128];
    size_t w = 0, used = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_RLBE, v, 4, b, sizeof b, &w, &err), &err);
    CHECK_EQ_INT(w, sizeof e);
    CHECK_MEM(b, e, sizeof e);
    int32_t out[4];
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, e, sizeof e, out, 4, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof e);
    CHECK_MEM(out, v, sizeof v);
    tsf_codec_close(c);
}

static void test_hand_floats(void)
{
    /* FLOAT words: bits(1.5), bits(0.25) (30-bit segment of 2), bits(-0.5) (32-bit, sign dropped) */
    const uint8_t f[] = {0x00, 0x00, 0x00, 0x03, 0x79, 0xff, 0x80, 0x00, 0x01,
                         0xf4, 0x00, 0x00, 0x04, 0x19, 0xf8, 0x00, 0x00, 0x00};
    tsf_codec *c = xor_open_default();
    float fo[3];
    size_t used = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, TSF_ENC_RLBE, f, sizeof f, fo, 3, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof f);
    CHECK(fo[0] == 1.5f && fo[1] == 1.75f && fo[2] == 1.25f);
    /* DOUBLE words bits(0.1), bits(0.2): accumulated in double, 0.1 + 0.2 != 0.3 */
    const uint8_t d[] = {0x00, 0x00, 0x00, 0x02, 0x7c, 0xff, 0xb9, 0x99, 0x99, 0x99, 0x99,
                         0x99, 0x9a, 0xff, 0x26, 0x66, 0x66, 0x66, 0x66, 0x66, 0x68};
    double dout[2];
    volatile double a = 0.1, b2 = 0.2;
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_RLBE, d, sizeof d, dout, 2, &used, &err), &err);
    CHECK(dout[0] == 0.1 && dout[1] == a + b2 && dout[1] != 0.3);
    /* FLOAT/DOUBLE RLBE writers are lossy in the reference: no encoder */
    CHECK(!tsf_codec_can_encode(TSF_FLOAT, TSF_ENC_RLBE));
    CHECK(tsf_codec_can_decode(TSF_DOUBLE, TSF_ENC_RLBE));
    tsf_codec_close(c);
}

static void test_roundtrip(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP};
    const size_t N = 25000;
    uint64_t *v = malloc(N * 8), seed = 23;
    for (size_t t = 0; t < 4; t++)
        for (int shape = 0; shape < 3; shape++) {
            int64_t walk = 0;
            for (size_t i = 0; i < N; i++) {
                uint64_t r = tsf_test_rand(&seed);
                walk += (int64_t)(r % 17) - 8;
                uint64_t x = shape == 0 ? r : shape == 1 ? (uint64_t)walk : (i % 50 < 25 ? 5 : r >> (r & 63));
                if (i < 6) {
                    const uint64_t e[] = {
                        0x8000000000000000ull, 0x7fffffffffffffffull, 0, ~0ull, 0x80000000u, 0x7fffffffu};
                    x = e[i];
                }
                if (t < 2) {
                    uint32_t u = (uint32_t)x;
                    memcpy((uint8_t *)v + 4 * i, &u, 4);
                } else {
                    v[i] = x;
                }
            }
            for (size_t n = 0; n <= 12; n++) xor_roundtrip(TSF_ENC_RLBE, types[t], v, n, 1);
            xor_roundtrip(TSF_ENC_RLBE, types[t], v, 1000, 0);
            xor_roundtrip(TSF_ENC_RLBE, types[t], v, 10000, 0);
            xor_roundtrip(TSF_ENC_RLBE, types[t], v, 10001, 0);
            xor_roundtrip(TSF_ENC_RLBE, types[t], v, N, 0);
        }
    free(v);
}

static void test_garbage(void)
{
    tsf_codec *c = xor_open_default();
    uint64_t seed = 29;
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    for (int it = 0; it < 4000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 80), n = (size_t)(tsf_test_rand(&seed) % 100);
        uint8_t *s = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) s[i] = (uint8_t)tsf_test_rand(&seed);
        if (len >= 4 && (it & 4)) { /* plausible counts reach the segment parser */
            s[0] = s[1] = 0;
            s[2] &= 0x27;
        }
        uint64_t out[100];
        tsf_status st = tsf_codec_decode(c, types[it & 3], TSF_ENC_RLBE, s, len, out, n, NULL, NULL);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(s);
    }
    /* count 0, count 10001, length code 0, run longer than the block, endless Fibonacci code */
    const uint8_t zero[] = {0, 0, 0, 0, 0x80};
    const uint8_t big[] = {0, 0, 0x27, 0x11, 0x80};
    const uint8_t lc0[] = {0, 0, 0, 1, 0x03, 0x00};
    const uint8_t longrun[] = {0, 0, 0, 2, 0x04, 0xd8, 0, 0, 0}; /* lc 1, run `0011` = 3 > 2 */
    const uint8_t endless[] = {0, 0, 0, 1, 0x04, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
    int32_t o[4];
    tsf_error err;
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, zero, sizeof zero, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, big, sizeof big, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, lc0, sizeof lc0, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, longrun, sizeof longrun, o, 2, NULL, &err),
                 TSF_ECORRUPT);
    CHECK(strstr(err.message, "run longer") != NULL);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_RLBE, endless, sizeof endless, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK(strstr(err.message, "without an end") != NULL);
    tsf_codec_close(c);
}

static void test_golden_first_pages(void)
{
    const char *files[] = {
        "tree_nonaligned_int32_rlbe_uncompressed.tsfile",
        "tree_nonaligned_int64_rlbe_uncompressed.tsfile",
        "tree_nonaligned_date_rlbe_uncompressed.tsfile",
        "tree_nonaligned_timestamp_rlbe_uncompressed.tsfile",
        "tree_nonaligned_float_rlbe_uncompressed.tsfile",
        "tree_nonaligned_double_rlbe_uncompressed.tsfile",
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
        if (r == 1) {
            CHECK_EQ_INT(g.encoding, TSF_ENC_RLBE);
            tsf_codec *c = xor_open_default();
            uint8_t *out = malloc(g.count * 8);
            size_t used = 0, w = 0;
            tsf_error err;
            CHECK_OK(tsf_codec_decode(c, g.type, TSF_ENC_RLBE, g.vals, g.vals_len, out, g.count, &used, &err),
                     &err);
            CHECK_EQ_INT(used, g.vals_len);
            size_t bad = 0;
            for (size_t i = 0; i < g.count; i++) bad += golden_bits(g.type, out, i) != g.expect[i];
            CHECK_EQ_INT(bad, 0);
            if (tsf_codec_can_encode(g.type, TSF_ENC_RLBE)) {
                size_t cap = tsf_codec_encode_bound(g.type, TSF_ENC_RLBE, g.count, 0);
                uint8_t *enc = malloc(cap);
                CHECK_OK(tsf_codec_encode(c, g.type, TSF_ENC_RLBE, out, g.count, enc, cap, &w, &err), &err);
                CHECK_EQ_INT(w, g.vals_len);
                if (w == g.vals_len) CHECK_MEM(enc, g.vals, w);
                free(enc);
            }
            free(out);
            tsf_codec_close(c);
        }
        golden_page_free(&g);
    }
}

int main(void)
{
    TSF_RUN(test_hand_int32);
    TSF_RUN(test_hand_floats);
    TSF_RUN(test_roundtrip);
    TSF_RUN(test_garbage);
    TSF_RUN(test_golden_first_pages);
    return tsf_test_finish();
}
