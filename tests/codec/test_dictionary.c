/*
 * Tests of src/codec/dictionary.c (spec §6): the worked example byte for byte, the many-entries
 * golden shape (2500 entries, index width 12), round trips with empty, long and non-ASCII
 * strings, allocation through the hooks, and hostile input (huge entry counts rejected before
 * allocating, out-of-range indices, truncation at every byte).
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "test.h"

/* Counting allocator: tracks live bytes and the largest single request. */
typedef struct counter {
    size_t live, largest, calls;
} counter;

static void *c_alloc(void *ud, size_t n)
{
    counter *k = ud;
    k->live += n;
    k->calls++;
    if (n > k->largest) k->largest = n;
    return malloc(n);
}

static void c_free(void *ud, void *p, size_t n)
{
    counter *k = ud;
    k->live -= n;
    free(p);
}

static tsf_codec *codec_with(counter *k)
{
    static tsf_allocator a; /* copied by tsf_codec_open */
    a.alloc = c_alloc;
    a.free = c_free;
    a.realloc = NULL;
    a.ud = k;
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.allocator = &a;
    tsf_codec *c = NULL;
    tsf_codec_open(&c, &o, NULL);
    return c;
}

static tsf_bytes str(const char *s)
{
    tsf_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

static void test_worked_example(void)
{
    counter k = {0, 0, 0};
    tsf_codec *c = codec_with(&k);
    tsf_error err;
    tsf_bytes v[3] = {str("a"), str("b"), str("a")};
    uint8_t buf[128];
    size_t w = 0;
    CHECK_OK(tsf_codec_encode(c, TSF_TEXT, TSF_ENC_DICTIONARY, v, 3, buf, sizeof buf, &w, &err), &err);
    const uint8_t e[] = {0x04, 0x02, 0x61, 0x02, 0x62, 0x04, 0x01, 0x03, 0x03, 0x40};
    CHECK_EQ_INT(w, sizeof e);
    CHECK_MEM(buf, e, sizeof e);
    tsf_bytes out[3];
    size_t used = 0;
    CHECK_OK(tsf_codec_decode(c, TSF_STRING, TSF_ENC_DICTIONARY, e, sizeof e, out, 3, &used, &err), &err);
    CHECK_EQ_INT(used, sizeof e);
    CHECK(out[0].len == 1 && out[0].data == e + 2);
    CHECK(out[1].len == 1 && out[1].data == e + 4);
    CHECK(out[2].data == out[0].data);
    size_t n = 0;
    CHECK_OK(tsf_codec_count(TSF_TEXT, TSF_ENC_DICTIONARY, e, sizeof e, &n, &err), &err);
    CHECK_EQ_INT(n, 3);
    /* empty page: no entries, an empty index package */
    CHECK_OK(tsf_codec_encode(c, TSF_TEXT, TSF_ENC_DICTIONARY, v, 0, buf, sizeof buf, &w, &err), &err);
    CHECK_EQ_INT(w, 2);
    CHECK_EQ_INT(buf[0], 0);
    CHECK_EQ_INT(buf[1], 0);
    CHECK_EQ_INT(k.live, sizeof(tsf_codec)); /* only the codec itself */
    CHECK(k.calls > 0);
    tsf_codec_close(c);
}

static void test_many_distinct(void)
{
    /* golden shape: 6000 values, 2500 distinct -> varint(2500) = 88 27, index width 12 */
    enum { N = 6000, D = 2500 };
    static char pool[D][16];
    static tsf_bytes v[N], out[N];
    for (int i = 0; i < D; i++) snprintf(pool[i], sizeof pool[i], "v%d", i);
    for (int i = 0; i < N; i++) v[i] = str(pool[i < D ? i : (i * 7919) % D]);
    counter k = {0, 0, 0};
    tsf_codec *c = codec_with(&k);
    tsf_error err;
    size_t cap = tsf_codec_encode_bound(TSF_STRING, TSF_ENC_DICTIONARY, N, 16 * N);
    uint8_t *buf = malloc(cap);
    size_t w = 0, used = 0;
    CHECK_OK(tsf_codec_encode(c, TSF_STRING, TSF_ENC_DICTIONARY, v, N, buf, cap, &w, &err), &err);
    CHECK_EQ_INT(buf[0], 0x88);
    CHECK_EQ_INT(buf[1], 0x27);
    /* skip the map, then uvarint(L) and the width byte */
    size_t pos = 2;
    for (int e = 0; e < D; e++) pos += 1 + buf[pos] / 2;
    pos += (buf[pos] & 0x80) ? ((buf[pos + 1] & 0x80) ? 3 : 2) : 1;
    CHECK_EQ_INT(buf[pos], 12);
    uint8_t *exact = malloc(w);
    memcpy(exact, buf, w);
    CHECK_OK(tsf_codec_decode(c, TSF_STRING, TSF_ENC_DICTIONARY, exact, w, out, N, &used, &err), &err);
    CHECK_EQ_INT(used, w);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(out[i].len, v[i].len);
        if (out[i].len == v[i].len) CHECK_MEM(out[i].data, v[i].data, v[i].len);
    }
    /* truncation at every byte */
    for (size_t cut = 0; cut < w; cut += 1 + w / 400) {
        uint8_t *t = malloc(cut + 1);
        memcpy(t, exact, cut);
        CHECK_EQ_INT(tsf_codec_decode(c, TSF_STRING, TSF_ENC_DICTIONARY, t, cut, out, N, NULL, &err),
                     TSF_ECORRUPT);
        free(t);
    }
    CHECK_EQ_INT(k.live, sizeof(tsf_codec)); /* only the codec itself */
    free(exact);
    free(buf);
    tsf_codec_close(c);
}

static void test_edge_strings(void)
{
    static uint8_t longs[70000];
    for (size_t i = 0; i < sizeof longs; i++) longs[i] = (uint8_t)(i * 31 + 7);
    const char *utf = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"; /* non-ASCII bytes */
    tsf_bytes v[12] = {str(""),
                       str("a"),
                       str(""),
                       {longs, sizeof longs},
                       str(utf),
                       str("a"),
                       {longs, sizeof longs - 1},
                       str(utf),
                       {(const uint8_t *)"\0\0", 2},
                       {(const uint8_t *)"\0", 1},
                       str(""),
                       {longs, sizeof longs}};
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    tsf_error err;
    size_t var = 0;
    for (int i = 0; i < 12; i++) var += v[i].len;
    size_t cap = tsf_codec_encode_bound(TSF_TEXT, TSF_ENC_DICTIONARY, 12, var);
    uint8_t *buf = malloc(cap);
    size_t w = 0;
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_TEXT, TSF_ENC_DICTIONARY, v, 12, buf, cap - 1, &w, &err),
                 TSF_ERANGE);
    CHECK_OK(tsf_codec_encode(c, TSF_TEXT, TSF_ENC_DICTIONARY, v, 12, buf, cap, &w, &err), &err);
    CHECK_EQ_INT(buf[0], 2 * 7); /* 7 distinct entries */
    tsf_bytes out[12];
    CHECK_OK(tsf_codec_decode(c, TSF_TEXT, TSF_ENC_DICTIONARY, buf, w, out, 12, NULL, &err), &err);
    for (int i = 0; i < 12; i++) {
        CHECK_EQ_INT(out[i].len, v[i].len);
        if (out[i].len == v[i].len && v[i].len) CHECK_MEM(out[i].data, v[i].data, v[i].len);
    }
    free(buf);
    tsf_codec_close(c);
}

static void test_hostile(void)
{
    counter k = {0, 0, 0};
    tsf_codec *c = codec_with(&k);
    tsf_error err;
    tsf_bytes out[8];
    size_t n;
    /* 2^30 entries claimed in 5 bytes: refused before any allocation */
    const uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x00};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_TEXT, TSF_ENC_DICTIONARY, huge, sizeof huge, out, 1, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(k.calls, 1); /* tsf_codec_open only */
    CHECK(strstr(err.message, "offset") != NULL);
    /* negative entry count / entry length */
    const uint8_t neg[] = {0x01, 0x00};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_TEXT, TSF_ENC_DICTIONARY, neg, 2, out, 1, NULL, &err), TSF_ECORRUPT);
    const uint8_t negl[] = {0x02, 0x03, 0x61, 0x04, 0x01, 0x10, 0x00};
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_TEXT, TSF_ENC_DICTIONARY, negl, sizeof negl, out, 8, NULL, &err),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_codec_count(TSF_TEXT, TSF_ENC_DICTIONARY, negl, sizeof negl, &n, &err), TSF_ECORRUPT);
    /* index 1 with a single entry */
    const uint8_t badidx[] = {0x02, 0x02, 0x61, 0x03, 0x01, 0x10, 0x01};
    CHECK_EQ_INT(
        tsf_codec_decode(c, TSF_STRING, TSF_ENC_DICTIONARY, badidx, sizeof badidx, out, 8, NULL, &err),
        TSF_ECORRUPT);
    CHECK(strstr(err.message, "index 1") != NULL);
    /* a broken index package names the dictionary and the offset */
    const uint8_t badrle[] = {0x02, 0x02, 0x61, 0x03, 0x21, 0x10, 0x00};
    CHECK_EQ_INT(
        tsf_codec_decode(c, TSF_STRING, TSF_ENC_DICTIONARY, badrle, sizeof badrle, out, 8, NULL, &err),
        TSF_ECORRUPT);
    CHECK(strstr(err.message, "DICTIONARY") != NULL && strstr(err.message, "offset 3") != NULL);
    CHECK_EQ_INT(k.live, sizeof(tsf_codec)); /* only the codec itself */
    /* garbage */
    uint64_t s = 23;
    static tsf_bytes many[500];
    for (int it = 0; it < 3000; it++) {
        size_t len = (size_t)(tsf_test_rand(&s) % 40);
        uint8_t *g = malloc(len + 1);
        for (size_t i = 0; i < len; i++) g[i] = (uint8_t)(tsf_test_rand(&s) >> (it % 3 ? 0 : 4));
        tsf_status st = tsf_codec_decode(c, TSF_TEXT, TSF_ENC_DICTIONARY, g, len, many,
                                         (size_t)(tsf_test_rand(&s) % 500), NULL, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        CHECK(k.largest <= 40 * sizeof(tsf_bytes) + 500 * 4 + 64); /* bounded by input and n */
        st = tsf_codec_count(TSF_TEXT, TSF_ENC_DICTIONARY, g, len, &n, &err);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        free(g);
    }
    CHECK_EQ_INT(k.live, sizeof(tsf_codec)); /* only the codec itself */
    tsf_codec_close(c);
}

int main(void)
{
    TSF_RUN(test_worked_example);
    TSF_RUN(test_many_distinct);
    TSF_RUN(test_edge_strings);
    TSF_RUN(test_hostile);
    return tsf_test_finish();
}
