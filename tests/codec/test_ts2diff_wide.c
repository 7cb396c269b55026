/*
 * Tests of the wide-block TS_2DIFF encoder (src/codec/ts2diff_wide.c): at Java's 128 deltas per block
 * it writes the same bytes as the standard encoder (same layout, spec §3.1); at other block sizes
 * every path of our decoder reads it back exactly (random full-range, small-delta, constant and
 * wrapping data, INT32 and INT64); the block headers carry the block size; and FLOAT/DOUBLE
 * precision streams (§3.3) with tsf_codec.ts2diff_block decode to the same values as with 128.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "codec/ts2diff_wide.h"
#include "codec_paths.h"
#include "common/bytes.h"
#include "test.h"

static uint64_t g_rng = 99;
static uint64_t rnd(void)
{
    g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return g_rng ^ (g_rng >> 29);
}

enum { N = 5000, KINDS = 5 };

/* kind 0 full range, 1 small deltas (sensor-like), 2 constant, 3 one outlier, 4 wrapping extremes */
static void fill(int kind, int64_t *v, size_t n)
{
    int64_t x = 2000;
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0:
            v[i] = (int64_t)rnd();
            break;
        case 1:
            x += (int64_t)(rnd() % 201) - 100;
            v[i] = x;
            break;
        case 2:
            v[i] = -7;
            break;
        case 3:
            v[i] = i == n / 2 ? INT64_MAX : (int64_t)(i * 3);
            break;
        default:
            v[i] = (i & 1) ? INT64_MIN : INT64_MAX;
            break;
        }
    }
}

/* Decodes `len` bytes with every path and compares with v (INT64 or INT32 view of it). */
static void decode_all(const uint8_t *buf, size_t len, const int64_t *v, size_t n, int is64)
{
    int64_t *o64 = malloc((n + 1) * 8);
    int32_t *o32 = malloc((n + 1) * 4);
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_path(PATHS[p]);
        tsf_error err;
        size_t used = 0, bad = 0;
        if (is64) {
            CHECK_OK(tsf_ts2diff_decode_i64(c, buf, len, o64, n, &used, &err), &err);
            for (size_t i = 0; i < n; i++) bad += o64[i] != v[i];
        } else {
            CHECK_OK(tsf_ts2diff_decode_i32(c, buf, len, o32, n, &used, &err), &err);
            for (size_t i = 0; i < n; i++) bad += o32[i] != (int32_t)v[i];
        }
        CHECK_EQ_INT(used, len);
        CHECK_EQ_INT(bad, 0);
        tsf_codec_close(c);
    }
    free(o64);
    free(o32);
}

static void test_java_block_same_bytes(void)
{
    int64_t *v = malloc(N * 8);
    int32_t *v32 = malloc(N * 4);
    size_t cap = tsf_ts2diff_bound_n(N, 1);
    uint8_t *a = malloc(cap), *b = malloc(cap);
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    for (int k = 0; k < KINDS; k++) {
        fill(k, v, N);
        for (size_t i = 0; i < N; i++) v32[i] = (int32_t)v[i];
        /* N = 38 * 129 + 98: full blocks and a partial one, no single-value block (whose minDelta
         * field is not defined by the format) */
        tsf_error err;
        size_t la = 0, lb;
        CHECK_OK(tsf_ts2diff_encode_i64(c, v, N, a, cap, &la, &err), &err);
        lb = tsf_ts2diff_wide_encode(v, N, 1, TSF_TS2DIFF_BLOCK_JAVA, b);
        CHECK_EQ_INT(lb, la);
        CHECK_MEM(b, a, la);
        CHECK_OK(tsf_ts2diff_encode_i32(c, v32, N, a, cap, &la, &err), &err);
        lb = tsf_ts2diff_wide_encode(v32, N, 0, TSF_TS2DIFF_BLOCK_JAVA, b);
        CHECK_EQ_INT(lb, la);
        CHECK_MEM(b, a, la);
    }
    tsf_codec_close(c);
    free(v);
    free(v32);
    free(a);
    free(b);
}

static void test_wide_roundtrip(void)
{
    static const uint32_t blocks[] = {1, 127, 129, 1000, 4999, 5000, TSF_TS2DIFF_BLOCK_MAX}; /* 1, 127: 128 */
    int64_t *v = malloc(N * 8);
    int32_t *v32 = malloc(N * 4);
    uint8_t *buf = malloc(tsf_ts2diff_bound_n(N, 1));
    for (int k = 0; k < KINDS; k++) {
        fill(k, v, N);
        for (size_t i = 0; i < N; i++) v32[i] = (int32_t)v[i];
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
            for (size_t n = 1; n <= N; n = n < 10 ? n + 1 : n * 3) {
                size_t len = tsf_ts2diff_wide_encode(v, n, 1, blocks[bi], buf);
                CHECK(len <= tsf_ts2diff_bound_n(n, 1));
                /* the first header holds min(block, n - 1) deltas */
                uint32_t bs = blocks[bi] < TSF_TS2DIFF_BLOCK_JAVA ? TSF_TS2DIFF_BLOCK_JAVA : blocks[bi];
                CHECK_EQ_INT(tsf_load_be32(buf), (n - 1 < bs ? n - 1 : bs));
                decode_all(buf, len, v, n, 1);
                len = tsf_ts2diff_wide_encode(v32, n, 0, blocks[bi], buf);
                CHECK(len <= tsf_ts2diff_bound_n(n, 0));
                decode_all(buf, len, v, n, 0);
            }
        }
    }
    free(v);
    free(v32);
    free(buf);
}

/* DOUBLE/FLOAT with a precision: ts2diff_block changes the stream (fewer headers) but not the values. */
static void test_precision_blocks(void)
{
    double *d = malloc(N * 8), *back = malloc(N * 8);
    float *f = malloc(N * 4), *fback = malloc(N * 4);
    for (size_t i = 0; i < N; i++) {
        d[i] = (double)(2000 + (int64_t)(rnd() % 201) - 100) / 100;
        f[i] = (float)d[i];
    }
    size_t cap = tsf_codec_encode_bound(TSF_DOUBLE, TSF_ENC_TS_2DIFF, N, 0);
    uint8_t *a = malloc(cap), *b = malloc(cap);
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    tsf_codec wide = *c;
    wide.ts2diff_block = 1024;
    tsf_error err;
    size_t la = 0, lb = 0, used = 0;
    CHECK_OK(tsf_codec_encode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, d, N, a, cap, &la, &err), &err);
    CHECK_OK(tsf_codec_encode(&wide, TSF_DOUBLE, TSF_ENC_TS_2DIFF, d, N, b, cap, &lb, &err), &err);
    /* blocks of 1 + 1024 values: 4 full ones and one of 899 deltas (39 blocks at Java's 128) */
    CHECK(lb + 30 * 24 < la);
    CHECK_EQ_INT(b[0], 2); /* uvarint(mpn) first */
    size_t pos = 1, nb = 0, nv = 0;
    while (pos + 24 <= lb) {
        uint32_t nd = tsf_load_be32(b + pos), w = tsf_load_be32(b + pos + 4);
        CHECK_EQ_INT(nd, nb < 4 ? 1024 : 899);
        CHECK(w <= 9); /* deltas within +-200 */
        nv += nd + 1;
        nb++;
        pos += 24 + ((size_t)nd * w + 7) / 8;
    }
    CHECK_EQ_INT(pos, lb);
    CHECK_EQ_INT(nb, 5);
    CHECK_EQ_INT(nv, N);
    CHECK_OK(tsf_codec_decode(c, TSF_DOUBLE, TSF_ENC_TS_2DIFF, b, lb, back, N, &used, &err), &err);
    CHECK_MEM(back, d, N * 8);
    CHECK_OK(tsf_codec_encode(&wide, TSF_FLOAT, TSF_ENC_TS_2DIFF, f, N, b, cap, &lb, &err), &err);
    CHECK_OK(tsf_codec_decode(c, TSF_FLOAT, TSF_ENC_TS_2DIFF, b, lb, fback, N, &used, &err), &err);
    CHECK_MEM(fback, f, N * 4);
    tsf_codec_close(c);
    free(d);
    free(back);
    free(f);
    free(fback);
    free(a);
    free(b);
}

int main(void)
{
    TSF_RUN(test_java_block_same_bytes);
    TSF_RUN(test_wide_roundtrip);
    TSF_RUN(test_precision_blocks);
    return tsf_test_finish();
}
