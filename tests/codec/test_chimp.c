/*
 * Tests of CHIMP (spec §8): the §8 derived example byte-exact, round trips of edge and random values
 * (including the end-marker values as data and ring hits far apart) for all six types, truncation at
 * every byte and garbage (TSF_ECORRUPT, no crash), and the first page of the six golden CHIMP files,
 * decoded and re-encoded byte-exact.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "gorilla_golden.h"
#include "test.h"

static void test_derived_example(void)
{
    const int32_t v[] = {1, 1};
    const uint8_t e[] = {0x00, 0x00, 0x00, 0x01, 0x00, 0xc4, 0x00, 0x00, 0x00, 0x08};
    tsf_codec *c = xor_open_default();
    uint8_t b[64];
    size_t w = 0, used = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_CHIMP, v, 2, b, sizeof b, &w, &err), &err);
    CHECK_EQ_INT(w, sizeof e);
    CHECK_MEM(b, e, sizeof e);
    int32_t out[2];
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_CHIMP, e, sizeof e, out, 2, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof e);
    CHECK_MEM(out, v, sizeof v);
    tsf_codec_close(c);
}

static void test_roundtrip(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP, TSF_FLOAT, TSF_DOUBLE};
    uint64_t *v = malloc(10000 * 8);
    uint64_t seed = 11;
    for (size_t t = 0; t < 6; t++) {
        const int is32 = xor_esize(types[t]) == 4;
        for (int shape = 0; shape < 4; shape++) {
            double walk = 0;
            for (size_t i = 0; i < 10000; i++) {
                uint64_t r = tsf_test_rand(&seed), x;
                if (i < 8) { /* edge values, markers included */
                    const uint64_t e64[] = {
                        0x8000000000000000ull, 0x7fffffffffffffffull, 0, ~0ull,
                        0x7ff8000000000000ull, 0x7ff0000000000000ull, 1, 0x8000000000000000ull};
                    const uint64_t e32[] = {0x80000000u, 0x7fffffffu, 0, 0xffffffffu,
                                            0x7fc00000u, 0x7f800000u, 1, 0x80000000u};
                    x = is32 ? e32[i] : e64[i];
                } else if (shape == 0) {
                    x = r;
                } else if (shape == 1) { /* repeats of a few values spread over the ring */
                    x = (r % 5) * 0x1000100010001ull;
                } else if (shape == 2) {
                    walk += (double)(r >> 11) / 9007199254740992.0 - 0.5;
                    float f = (float)walk;
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    if (is32)
                        x = u;
                    else
                        memcpy(&x, &walk, 8);
                } else { /* values sharing low bits: ring candidates with many trailing zeros */
                    x = ((r & 7) << 20) ^ (i % 3 ? 0x123456789ull : 0);
                }
                if (is32) {
                    uint32_t u = (uint32_t)x;
                    memcpy((uint8_t *)v + 4 * i, &u, 4);
                } else {
                    v[i] = x;
                }
            }
            const size_t sizes[] = {0, 1, 2, 3, 9, 200, 1000, 10000};
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                xor_roundtrip(TSF_ENC_CHIMP, types[t], v, sizes[s], sizes[s] <= 200);
        }
    }
    free(v);
}

static void test_garbage(void)
{
    tsf_codec *c = xor_open_default();
    uint64_t seed = 13;
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    for (int it = 0; it < 4000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 80), n = (size_t)(tsf_test_rand(&seed) % 100);
        uint8_t *s = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) s[i] = (uint8_t)tsf_test_rand(&seed);
        uint64_t out[100];
        tsf_status st = tsf_codec_decode(c, types[it & 3], TSF_ENC_CHIMP, s, len, out, n, NULL, NULL);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(s);
    }
    /* `10` before any leading-zero count was stored is corrupt */
    const uint8_t bad[] = {0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0};
    int32_t o[2];
    tsf_error err;
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_CHIMP, bad, sizeof bad, o, 2, NULL, &err),
                 TSF_ECORRUPT);
    CHECK(strstr(err.message, "invalid") != NULL);
    tsf_codec_close(c);
}

static void test_golden_first_pages(void)
{
    const char *files[] = {
        "tree_nonaligned_int32_chimp_uncompressed.tsfile",
        "tree_nonaligned_int64_chimp_uncompressed.tsfile",
        "tree_nonaligned_date_chimp_uncompressed.tsfile",
        "tree_nonaligned_timestamp_chimp_uncompressed.tsfile",
        "tree_nonaligned_float_chimp_uncompressed.tsfile",
        "tree_nonaligned_double_chimp_uncompressed.tsfile",
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
            CHECK_EQ_INT(g.encoding, TSF_ENC_CHIMP);
            tsf_codec *c = xor_open_default();
            void *out = malloc(g.count * 8);
            size_t used = 0, w = 0;
            tsf_error err;
            CHECK_OK(
                tsf_codec_decode(c, g.type, TSF_ENC_CHIMP, g.vals, g.vals_len, out, g.count, &used, &err),
                &err);
            CHECK_EQ_INT(used, g.vals_len);
            size_t bad = 0;
            for (size_t i = 0; i < g.count; i++) bad += golden_bits(g.type, out, i) != g.expect[i];
            CHECK_EQ_INT(bad, 0);
            size_t cap = tsf_codec_encode_bound(g.type, TSF_ENC_CHIMP, g.count, 0);
            uint8_t *enc = malloc(cap);
            CHECK_OK(tsf_codec_encode(c, g.type, TSF_ENC_CHIMP, out, g.count, enc, cap, &w, &err), &err);
            CHECK_EQ_INT(w, g.vals_len);
            if (w == g.vals_len) CHECK_MEM(enc, g.vals, w);
            free(enc);
            free(out);
            tsf_codec_close(c);
        }
        golden_page_free(&g);
    }
}

int main(void)
{
    TSF_RUN(test_derived_example);
    TSF_RUN(test_roundtrip);
    TSF_RUN(test_garbage);
    TSF_RUN(test_golden_first_pages);
    return tsf_test_finish();
}
