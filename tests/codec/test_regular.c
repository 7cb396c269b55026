/*
 * Tests of REGULAR (spec §3.5, decode only): hand-built blocks (a regular INT32 block; an INT64 block
 * with a missing point, its bitmap traced from the reference encoder: values 1000, 2000, 4000, 5000 ->
 * minDelta 1000, 5 positions, BitSet {0,1,3,4} = 1b), several blocks in a page with the count cutting
 * the last one, truncation at every byte, and hostile headers.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "test.h"

static tsf_codec *open_default(void)
{
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    return c;
}

static const uint8_t REG32[] = {0x00, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0, 100};
static const uint8_t MISS64[] = {0x01, 0, 0, 0,    1,    0x1b, 0, 0, 0, 5, 0, 0,    0,
                                 0,    0, 0, 0x03, 0xe8, 0,    0, 0, 0, 0, 0, 0x03, 0xe8};

static void test_blocks(void)
{
    tsf_codec *c = open_default();
    int32_t o32[5];
    size_t used = 0;
    tsf_error err;
    CHECK(!tsf_codec_can_encode(TSF_INT32, TSF_ENC_REGULAR));
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, REG32, sizeof REG32, o32, 5, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof REG32);
    for (int k = 0; k < 5; k++) CHECK_EQ_INT(o32[k], 100 + 10 * k);
    CHECK_OK(tsf_codec_decode(c, TSF_DATE, TSF_ENC_REGULAR, REG32, sizeof REG32, o32, 5, &used, &err), &err);
    CHECK_EQ_INT(o32[4], 140);

    int64_t o64[4];
    CHECK_OK(tsf_codec_decode(c, TSF_INT64, TSF_ENC_REGULAR, MISS64, sizeof MISS64, o64, 4, &used, &err),
             &err);
    CHECK_EQ_INT(used, sizeof MISS64);
    CHECK_EQ_INT(o64[0], 1000);
    CHECK_EQ_INT(o64[1], 2000);
    CHECK_EQ_INT(o64[2], 4000);
    CHECK_EQ_INT(o64[3], 5000);

    /* two blocks: MISS64 then a regular block of 3; ask for 6 values (cuts the second block) */
    uint8_t two[sizeof MISS64 + 21];
    memcpy(two, MISS64, sizeof MISS64);
    const uint8_t b2[] = {0,    0,    0,    0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0x80, 0, 0, 0,    0,    0,    0,    0};
    memcpy(two + sizeof MISS64, b2, sizeof b2);
    int64_t o6[6];
    CHECK_OK(tsf_codec_decode(c, TSF_TIMESTAMP, TSF_ENC_REGULAR, two, sizeof two, o6, 6, &used, &err), &err);
    CHECK_EQ_INT(o6[3], 5000);
    CHECK(o6[4] == INT64_MIN);
    CHECK(o6[5] == INT64_MAX); /* INT64_MIN + (-1) wraps */
    CHECK_EQ_INT(used, sizeof two);

    /* every proper prefix is corrupt */
    for (size_t cut = 0; cut < sizeof two; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, two, cut);
        tsf_status s = tsf_codec_decode(c, TSF_INT64, TSF_ENC_REGULAR, p, cut, o6, 6, NULL, &err);
        CHECK_EQ_INT(s, TSF_ECORRUPT);
        if (s == TSF_ECORRUPT) CHECK(strstr(err.message, "REGULAR") && strstr(err.message, "offset"));
        free(p);
    }
    tsf_codec_close(c);
}

static void test_hostile(void)
{
    tsf_codec *c = open_default();
    int32_t o[8];
    tsf_error err;
    const uint8_t flag2[] = {0x02, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0, 100};
    const uint8_t neglen[] = {0x01, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0, 100};
    const uint8_t count0[] = {0x00, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 100};
    const uint8_t nobits[] = {0x01, 0, 0, 0, 1, 0x00, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0, 100};
    const uint8_t huge[] = {0x01, 0, 0, 0, 1, 0x00, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 10, 0, 0, 0, 100};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, flag2, sizeof flag2, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, neglen, sizeof neglen, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, count0, sizeof count0, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, nobits, sizeof nobits, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    /* 2^31-1 positions but a one-byte bitmap: bounded work, then "no value" */
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, huge, sizeof huge, o, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK(strstr(err.message, "no value") != NULL);
    /* a huge regular block feeds only the n values asked for */
    const uint8_t big[] = {0x00, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0};
    CHECK_OK(tsf_codec_decode(c, TSF_INT32, TSF_ENC_REGULAR, big, sizeof big, o, 8, NULL, &err), &err);
    CHECK_EQ_INT(o[7], 7);
    /* garbage never crashes */
    uint64_t seed = 31;
    for (int it = 0; it < 3000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 64), n = (size_t)(tsf_test_rand(&seed) % 64);
        uint8_t *s = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) s[i] = (uint8_t)tsf_test_rand(&seed);
        if (len) s[0] &= 1;
        int64_t out[64];
        tsf_status st = tsf_codec_decode(c, (it & 1) ? TSF_INT64 : TSF_INT32, TSF_ENC_REGULAR, s, len, out, n,
                                         NULL, NULL);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(s);
    }
    tsf_codec_close(c);
}

int main(void)
{
    TSF_RUN(test_blocks);
    TSF_RUN(test_hostile);
    return tsf_test_finish();
}
