/*
 * Tests of SPRINTZ (spec §9): a group hand-derived from the §9 golden bytes (seed -5000, eight
 * residuals 3 through the fire predictor) byte-exact both ways, round trips of tame data (ints in a
 * small range, positive slowly varying floats) for all six types and sizes 0..10000 (tails of 1..8),
 * truncation at every byte and garbage (TSF_ECORRUPT, no crash), and the first page of the six golden
 * SPRINTZ files: decoded exactly as the Java reader, and re-encoded byte-exact from the writer's input.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "gorilla_golden.h"
#include "test.h"

static void test_hand_group(void)
{
    /* residual code 5 -> +3; fire keeps predicting the previous value for this group (alpha*3 >> 8 = 0) */
    int32_t v[9];
    for (int k = 0; k < 9; k++) v[k] = -5000 + 3 * k;
    const uint8_t e[] = {0x03, 0xf8, 0xd8, 0xff, 0xff, 0x0f, 0xb6, 0xdb, 0x6d};
    tsf_codec *c = xor_open_default();
    uint8_t b[128];
    size_t w = 0, used = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_SPRINTZ, v, 9, b, sizeof b, &w, &err), &err);
    CHECK_EQ_INT(w, sizeof e);
    CHECK_MEM(b, e, sizeof e);
    int32_t out[9];
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_SPRINTZ, e, sizeof e, out, 9, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof e);
    CHECK_MEM(out, v, sizeof v);
    /* a count below the group size cuts the group */
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_SPRINTZ, e, sizeof e, out, 4, &used, &err), &err);
    CHECK_MEM(out, v, 4 * sizeof v[0]);
    tsf_codec_close(c);
}

static void test_roundtrip(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP, TSF_FLOAT, TSF_DOUBLE};
    uint64_t *v = malloc(10000 * 8);
    uint64_t seed = 17;
    for (size_t t = 0; t < 6; t++) {
        for (int shape = 0; shape < 3; shape++) {
            double walk = 1.5;
            int64_t iw = 0;
            for (size_t i = 0; i < 10000; i++) {
                uint64_t r = tsf_test_rand(&seed);
                walk += ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 1e-3;
                if (walk < 1.0 || walk >= 2.0) walk = 1.5;
                iw = shape == 0 ? iw + (int64_t)(r % 201) - 100 : shape == 1 ? (int64_t)(r % 1000) - 500 : 7;
                if (types[t] == TSF_FLOAT) {
                    float f = shape == 2 ? 1.25f : (float)walk;
                    memcpy((uint8_t *)v + 4 * i, &f, 4);
                } else if (types[t] == TSF_DOUBLE) {
                    double d = shape == 2 ? 1.25 : walk;
                    memcpy(&v[i], &d, 8);
                } else if (xor_esize(types[t]) == 4) {
                    int32_t x = (int32_t)iw;
                    memcpy((uint8_t *)v + 4 * i, &x, 4);
                } else {
                    int64_t x = iw * 1000003;
                    memcpy(&v[i], &x, 8);
                }
            }
            for (size_t n = 0; n <= 30; n++) xor_roundtrip(TSF_ENC_SPRINTZ, types[t], v, n, n <= 20);
            xor_roundtrip(TSF_ENC_SPRINTZ, types[t], v, 1000, 0);
            xor_roundtrip(TSF_ENC_SPRINTZ, types[t], v, 10000, 0);
        }
    }
    free(v);
}

static void test_garbage(void)
{
    tsf_codec *c = xor_open_default();
    uint64_t seed = 19;
    const tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_FLOAT, TSF_DOUBLE};
    for (int it = 0; it < 4000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 80), n = (size_t)(tsf_test_rand(&seed) % 100);
        uint8_t *s = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) s[i] = (uint8_t)tsf_test_rand(&seed);
        if (len && (it & 4)) s[0] &= 0x7f; /* more groups */
        uint64_t out[100];
        tsf_status st = tsf_codec_decode(c, types[it & 3], TSF_ENC_SPRINTZ, s, len, out, n, NULL, NULL);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(s);
    }
    /* bit width above the type width, and an empty tail */
    const uint8_t wide[] = {33, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                            0,  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int32_t o[9];
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_SPRINTZ, wide, sizeof wide, o, 9, NULL, NULL),
                 TSF_ECORRUPT);
    const uint8_t empty_tail[] = {0x80, 0, 0};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_SPRINTZ, empty_tail, 3, o, 1, NULL, NULL),
                 TSF_ECORRUPT);
    tsf_codec_close(c);
}

static void test_golden_first_pages(void)
{
    const char *files[] = {
        "tree_nonaligned_int32_sprintz_uncompressed.tsfile",
        "tree_nonaligned_int64_sprintz_uncompressed.tsfile",
        "tree_nonaligned_date_sprintz_uncompressed.tsfile",
        "tree_nonaligned_timestamp_sprintz_uncompressed.tsfile",
        "tree_nonaligned_float_sprintz_uncompressed.tsfile",
        "tree_nonaligned_double_sprintz_uncompressed.tsfile",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        golden_page g, in;
        int r = golden_page_load(files[f], &g);
        if (r == 0) {
            CHECK(r != 0); /* tests/data is part of the checkout */
            golden_page_free(&g);
            return;
        }
        CHECK_EQ_INT(r, 1);
        /* the writer's input: .input.csv for the lossy FLOAT/DOUBLE files, else the values read back */
        int lossy = g.type == TSF_FLOAT || g.type == TSF_DOUBLE;
        int ri = golden_page_load_ex(files[f], lossy ? ".input.csv" : ".csv", &in);
        CHECK_EQ_INT(ri, 1);
        if (r == 1 && ri == 1) {
            CHECK_EQ_INT(g.encoding, TSF_ENC_SPRINTZ);
            tsf_codec *c = xor_open_default();
            uint8_t *out = malloc(g.count * 8);
            size_t used = 0, w = 0;
            tsf_error err;
            CHECK_OK(
                tsf_codec_decode(c, g.type, TSF_ENC_SPRINTZ, g.vals, g.vals_len, out, g.count, &used, &err),
                &err);
            CHECK_EQ_INT(used, g.vals_len);
            size_t bad = 0;
            for (size_t i = 0; i < g.count; i++) bad += golden_bits(g.type, out, i) != g.expect[i];
            CHECK_EQ_INT(bad, 0);
            /* re-encode the writer's input */
            size_t es = xor_esize(g.type);
            for (size_t i = 0; i < g.count; i++) {
                uint32_t u = (uint32_t)in.expect[i];
                if (es == 4)
                    memcpy(out + 4 * i, &u, 4);
                else
                    memcpy(out + 8 * i, &in.expect[i], 8);
            }
            size_t cap = tsf_codec_encode_bound(g.type, TSF_ENC_SPRINTZ, g.count, 0);
            uint8_t *enc = malloc(cap);
            CHECK_OK(tsf_codec_encode(c, g.type, TSF_ENC_SPRINTZ, out, g.count, enc, cap, &w, &err), &err);
            CHECK_EQ_INT(w, g.vals_len);
            if (w == g.vals_len) CHECK_MEM(enc, g.vals, w);
            free(enc);
            free(out);
            tsf_codec_close(c);
        }
        golden_page_free(&g);
        golden_page_free(&in);
    }
}

int main(void)
{
    TSF_RUN(test_hand_group);
    TSF_RUN(test_roundtrip);
    TSF_RUN(test_garbage);
    TSF_RUN(test_golden_first_pages);
    return tsf_test_finish();
}
