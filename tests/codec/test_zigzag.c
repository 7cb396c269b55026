/*
 * Tests of src/codec/zigzag.c (spec §7): the worked example and the golden page start byte for
 * byte, 10-byte INT64 varints, empty pages, several blocks per page, and hostile input.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "test.h"

static tsf_codec *codec_open(void)
{
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    return c;
}

static size_t encode(tsf_type t, const void *v, size_t n, uint8_t *buf, size_t cap)
{
    tsf_codec *c = codec_open();
    size_t w = 0;
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, t, TSF_ENC_ZIGZAG, v, n, buf, cap, &w, &err), &err);
    tsf_codec_close(c);
    return w;
}

static void test_worked_examples(void)
{
    uint8_t buf[256];
    const int32_t a[] = {1, -1, 300};
    const uint8_t ea[] = {0x04, 0x03, 0x02, 0x01, 0xd8, 0x04};
    size_t w = encode(TSF_INT32, a, 3, buf, sizeof buf);
    CHECK_EQ_INT(w, sizeof ea);
    CHECK_MEM(buf, ea, sizeof ea);
    w = encode(TSF_DATE, a, 3, buf, sizeof buf);
    CHECK_MEM(buf, ea, sizeof ea);
    /* golden page start (tree_nonaligned_int32_zigzag): MIN, MAX, 0, -1, 1 after the header */
    const int32_t g[] = {INT32_MIN, INT32_MAX, 0, -1, 1};
    const uint8_t eg[] = {0x0d, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xfe,
                          0xff, 0xff, 0xff, 0x0f, 0x00, 0x01, 0x02};
    w = encode(TSF_INT32, g, 5, buf, sizeof buf);
    CHECK_EQ_INT(w, sizeof eg);
    CHECK_MEM(buf, eg, sizeof eg);
    /* INT64: 10-byte varints */
    const int64_t l[] = {INT64_MIN, INT64_MAX, -2};
    const uint8_t el[] = {0x15, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                          0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x03};
    w = encode(TSF_INT64, l, 3, buf, sizeof buf);
    CHECK_EQ_INT(w, sizeof el);
    CHECK_MEM(buf, el, sizeof el);
    w = encode(TSF_TIMESTAMP, l, 3, buf, sizeof buf);
    CHECK_MEM(buf, el, sizeof el);
    /* an empty page writes nothing */
    CHECK_EQ_INT(encode(TSF_INT64, l, 0, buf, sizeof buf), 0);
}

static void test_roundtrip_and_blocks(void)
{
    uint64_t s = 11;
    enum { N = 5000 };
    static int32_t a[N], b[N];
    static int64_t la[N], lb[N];
    for (size_t i = 0; i < N; i++) {
        uint64_t r = tsf_test_rand(&s);
        a[i] = (int32_t)(r >> (r % 33 + 31));
        la[i] = (int64_t)(tsf_test_rand(&s) >> (r % 64));
    }
    a[7] = INT32_MIN, la[7] = INT64_MIN;
    tsf_codec *c = codec_open();
    tsf_error err;
    size_t cap = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_ZIGZAG, N, 0) * 2;
    uint8_t *buf = malloc(cap);
    /* two blocks back to back (as two flushes would write) decode as one page */
    size_t w1 = 0, w2 = 0, used = 0, cnt = 0;
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_ZIGZAG, a, 1000, buf, cap, &w1, &err), &err);
    CHECK_OK(
        tsf_codec_encode(c, TSF_INT32, TSF_ENC_ZIGZAG, a + 1000, N - 1000, buf + w1, cap - w1, &w2, &err),
        &err);
    uint8_t *exact = malloc(w1 + w2);
    memcpy(exact, buf, w1 + w2);
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, exact, w1 + w2, b, N, &used, &err), &err);
    CHECK_EQ_INT(used, w1 + w2);
    CHECK_MEM(b, a, sizeof a);
    CHECK_OK(tsf_codec_count(TSF_INT32, TSF_ENC_ZIGZAG, exact, w1 + w2, &cnt, &err), &err);
    CHECK_EQ_INT(cnt, N);
    /* fewer values than stored: stops at the end of the block that supplies the last one */
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, exact, w1 + w2, b, 10, &used, &err), &err);
    CHECK_EQ_INT(used, w1);
    /* truncation at every byte */
    for (size_t cut = 0; cut < w1 + w2; cut += 7) {
        uint8_t *t = malloc(cut + 1);
        memcpy(t, exact, cut);
        CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, t, cut, b, N, NULL, &err), TSF_ECORRUPT);
        free(t);
    }
    free(exact);
    size_t w = 0;
    CHECK_OK(tsf_codec_encode(c, TSF_INT64, TSF_ENC_ZIGZAG, la, N, buf, cap, &w, &err), &err);
    CHECK_OK(tsf_codec_decode(c, TSF_INT64, TSF_ENC_ZIGZAG, buf, w, lb, N, &used, &err), &err);
    CHECK_EQ_INT(used, w);
    CHECK_MEM(lb, la, sizeof la);
    for (size_t cut = 0; cut < w; cut += 1 + w / 500) {
        uint8_t *t = malloc(cut + 1);
        memcpy(t, buf, cut);
        CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT64, TSF_ENC_ZIGZAG, t, cut, lb, N, NULL, &err), TSF_ECORRUPT);
        free(t);
    }
    /* undersized dst */
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT64, TSF_ENC_ZIGZAG, la, 3, buf, 39, &w, &err), TSF_ERANGE);
    free(buf);
    tsf_codec_close(c);
}

static void test_hostile(void)
{
    tsf_codec *c = codec_open();
    tsf_error err;
    int32_t v[8];
    int64_t lv[8];
    size_t n;
    /* the block declares more bytes than remain */
    const uint8_t over[] = {0x05, 0x01, 0x02};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, over, 3, v, 1, NULL, &err), TSF_ECORRUPT);
    CHECK(strstr(err.message, "offset 0") != NULL);
    CHECK_EQ_INT(tsf_codec_count(TSF_INT32, TSF_ENC_ZIGZAG, over, 3, &n, &err), TSF_ECORRUPT);
    /* more values than bytes */
    const uint8_t many[] = {0x01, 0x05, 0x02};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, many, 3, v, 1, NULL, &err), TSF_ECORRUPT);
    /* varints do not fill the block exactly */
    const uint8_t slack[] = {0x03, 0x02, 0x02, 0x04, 0x00};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, slack, 5, v, 2, NULL, &err), TSF_ECORRUPT);
    /* a varint runs past its block */
    const uint8_t runs[] = {0x02, 0x02, 0x02, 0x80, 0x01};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, runs, 5, v, 2, NULL, &err), TSF_ECORRUPT);
    CHECK(strstr(err.message, "offset 3") != NULL);
    /* 6-byte varint for INT32, 11-byte for INT64 */
    const uint8_t long32[] = {0x06, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, long32, 8, v, 1, NULL, &err), TSF_ECORRUPT);
    uint8_t long64[13] = {0x0b, 0x01};
    for (int i = 2; i < 12; i++) long64[i] = 0x80;
    long64[12] = 0x01;
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT64, TSF_ENC_ZIGZAG, long64, 13, lv, 1, NULL, &err), TSF_ECORRUPT);
    /* not enough blocks for n */
    const uint8_t one[] = {0x01, 0x01, 0x02};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, one, 3, v, 2, NULL, &err), TSF_ECORRUPT);
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_ZIGZAG, one, 3, v, 1, NULL, &err), &err);
    CHECK_EQ_INT(v[0], 1);
    /* garbage */
    uint64_t s = 17;
    static int64_t out[300];
    for (int it = 0; it < 3000; it++) {
        size_t len = (size_t)(tsf_test_rand(&s) % 40);
        uint8_t *g = malloc(len + 1);
        for (size_t i = 0; i < len; i++) g[i] = (uint8_t)(tsf_test_rand(&s) >> (it % 2 ? 0 : 3));
        tsf_type t = it % 2 ? TSF_INT64 : TSF_INT32;
        tsf_status st = tsf_codec_decode(c, t, TSF_ENC_ZIGZAG, g, len, out, (size_t)(tsf_test_rand(&s) % 300),
                                         NULL, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        st = tsf_codec_count(t, TSF_ENC_ZIGZAG, g, len, &n, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(g);
    }
    tsf_codec_close(c);
}

int main(void)
{
    TSF_RUN(test_worked_examples);
    TSF_RUN(test_roundtrip_and_blocks);
    TSF_RUN(test_hostile);
    return tsf_test_finish();
}
