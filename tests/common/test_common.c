/* Tests of src/common: byte order, varints, zigzag, the bit writer/reader, path resolution, names. */
#include <stdlib.h>

#include "common/bitio.h"
#include "common/bytes.h"
#include "common/internal.h"
#include "test.h"

static void test_be_le(void)
{
    uint8_t b[8];
    tsf_store_be32(b, 0x01020304u);
    const uint8_t e32[4] = {1, 2, 3, 4};
    CHECK_MEM(b, e32, 4);
    CHECK_EQ_INT(tsf_load_be32(b), 0x01020304);
    CHECK_EQ_INT(tsf_load_le32(b), 0x04030201);
    tsf_store_be64(b, 0x0102030405060708ull);
    CHECK(tsf_load_be64(b) == 0x0102030405060708ull);
    CHECK_EQ_INT(b[0], 1);
    CHECK_EQ_INT(b[7], 8);
    tsf_store_le64(b, 0x0102030405060708ull);
    CHECK_EQ_INT(b[0], 8);
}

static void test_varint(void)
{
    /* spec §2 worked example: INT32 1, 300, 0 -> 02 d8 04 00 as zigzag varints */
    uint8_t b[16];
    size_t n = 0;
    n += tsf_put_uvarint32(b + n, tsf_zigzag32(1));
    n += tsf_put_uvarint32(b + n, tsf_zigzag32(300));
    n += tsf_put_uvarint32(b + n, tsf_zigzag32(0));
    const uint8_t e[] = {0x02, 0xd8, 0x04, 0x00};
    CHECK_EQ_INT(n, 4);
    CHECK_MEM(b, e, 4);
    /* -1 -> 01, -300 -> d7 04 */
    CHECK_EQ_INT(tsf_put_uvarint32(b, tsf_zigzag32(-300)), 2);
    CHECK_EQ_INT(b[0], 0xd7);
    CHECK_EQ_INT(b[1], 0x04);
    uint32_t u;
    CHECK_EQ_INT(tsf_get_uvarint32(b, 2, &u), 2);
    CHECK_EQ_INT(tsf_unzigzag32(u), -300);
    /* truncated and over-long varints are rejected */
    const uint8_t trunc[] = {0x80, 0x80};
    CHECK_EQ_INT(tsf_get_uvarint32(trunc, 2, &u), 0);
    const uint8_t toolong[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    CHECK_EQ_INT(tsf_get_uvarint32(toolong, 6, &u), 0);
    CHECK_EQ_INT(tsf_put_uvarint32(b, 0xffffffffu), 5);
    CHECK_EQ_INT(tsf_get_uvarint32(b, 5, &u), 5);
    CHECK(u == 0xffffffffu);
    uint64_t u64;
    CHECK_EQ_INT(tsf_put_uvarint64(b, ~0ull), 10);
    CHECK_EQ_INT(tsf_get_uvarint64(b, 10, &u64), 10);
    CHECK(u64 == ~0ull);
    CHECK(tsf_unzigzag64(tsf_zigzag64(INT64_MIN)) == INT64_MIN);
    CHECK(tsf_zigzag32(INT32_MIN) == 0xffffffffu);
}

static void test_bitio_roundtrip(void)
{
    uint64_t st = 7;
    enum { N = 5000 };
    unsigned widths[N];
    uint64_t vals[N];
    size_t total = 0;
    for (int i = 0; i < N; i++) {
        widths[i] = (unsigned)(tsf_test_rand(&st) % 65);
        uint64_t v = tsf_test_rand(&st);
        vals[i] = widths[i] == 64 ? v : (widths[i] ? v & ((1ull << widths[i]) - 1) : 0);
        total += widths[i];
    }
    size_t cap = total / 8 + 8;
    uint8_t *buf = malloc(cap);
    tsf_bitw w;
    tsf_bitw_init(&w, buf, cap);
    for (int i = 0; i < N; i++) tsf_bitw_put(&w, vals[i], widths[i]);
    uint8_t *end = tsf_bitw_flush(&w);
    CHECK(!w.overflow);
    CHECK_EQ_INT((size_t)(end - buf), (total + 7) / 8);
    tsf_bitr r;
    tsf_bitr_init(&r, buf, (size_t)(end - buf));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += tsf_bitr_read(&r, widths[i]) != vals[i];
    CHECK_EQ_INT(bad, 0);
    CHECK(!r.overrun);
    (void)tsf_bitr_read(&r, 9);
    CHECK(r.overrun);
    free(buf);
}

static void test_bitio_msb_first(void)
{
    uint8_t buf[4] = {0};
    tsf_bitw w;
    tsf_bitw_init(&w, buf, sizeof buf);
    tsf_bitw_put(&w, 1, 1);
    tsf_bitw_put(&w, 0, 1);
    tsf_bitw_put(&w, 5, 3); /* 1 0 101 -> 1010 1000 = 0xa8 */
    uint8_t *end = tsf_bitw_flush(&w);
    CHECK_EQ_INT(end - buf, 1);
    CHECK_EQ_INT(buf[0], 0xa8);
    /* overflow is reported, never written past cap */
    uint8_t small[2] = {0, 0};
    tsf_bitw_init(&w, small, 1);
    tsf_bitw_put(&w, 0xffffffffu, 32);
    tsf_bitw_flush(&w);
    CHECK(w.overflow);
    CHECK_EQ_INT(small[1], 0);
}

static void test_path_resolve(void)
{
    CHECK(tsf_path_resolve(TSF_PATH_SCALAR) == TSF_PATH_SCALAR);
    CHECK(tsf_path_resolve(TSF_PATH_PER_VALUE) == TSF_PATH_PER_VALUE);
    tsf_codec_path p = tsf_path_resolve(TSF_PATH_AVX512);
    CHECK(p != TSF_PATH_AUTO);
    unsigned f = tsf_cpu_features();
    if (!(f & TSF_CPU_AVX512)) CHECK(p != TSF_PATH_AVX512);
    CHECK(tsf_path_resolve(TSF_PATH_AUTO) != TSF_PATH_AUTO);
    /* NEON has no kernels: never chosen, and a request for it runs the scalar path */
    CHECK(tsf_path_resolve(TSF_PATH_AUTO) != TSF_PATH_NEON);
    CHECK(tsf_path_resolve(TSF_PATH_NEON) == TSF_PATH_SCALAR);
    tsf_codec *c = NULL;
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = TSF_PATH_NEON;
    CHECK_OK(tsf_codec_open(&c, &o, NULL), NULL);
    CHECK(c && tsf_codec_get_path(c) == TSF_PATH_SCALAR);
    tsf_codec_close(c);
}

/* tsf_type_size: the size of each type's C representation as tsf.h lists it. */
static void test_type_size(void)
{
    CHECK_EQ_INT(tsf_type_size(TSF_BOOLEAN), sizeof(uint8_t));
    CHECK_EQ_INT(tsf_type_size(TSF_INT32), sizeof(int32_t));
    CHECK_EQ_INT(tsf_type_size(TSF_DATE), sizeof(int32_t));
    CHECK_EQ_INT(tsf_type_size(TSF_FLOAT), sizeof(float));
    CHECK_EQ_INT(tsf_type_size(TSF_INT64), sizeof(int64_t));
    CHECK_EQ_INT(tsf_type_size(TSF_TIMESTAMP), sizeof(int64_t));
    CHECK_EQ_INT(tsf_type_size(TSF_DOUBLE), sizeof(double));
    CHECK_EQ_INT(tsf_type_size(TSF_TEXT), sizeof(tsf_bytes));
    CHECK_EQ_INT(tsf_type_size(TSF_STRING), sizeof(tsf_bytes));
    CHECK_EQ_INT(tsf_type_size(TSF_BLOB), sizeof(tsf_bytes));
    CHECK_EQ_INT(tsf_type_size(TSF_VECTOR), 0); /* no values */
    CHECK_EQ_INT(tsf_type_size((tsf_type)7), 0); /* unknown codes */
    CHECK_EQ_INT(tsf_type_size((tsf_type)12), 0);
    CHECK_EQ_INT(tsf_type_size((tsf_type)-1), 0);
    /* every type that has values round-trips through a codec with arrays of that size */
    tsf_codec *c = NULL;
    CHECK_OK(tsf_codec_open(&c, NULL, NULL), NULL);
    for (int t = 0; t <= TSF_STRING && c; t++) {
        size_t es = tsf_type_size((tsf_type)t);
        if (!tsf_codec_can_encode((tsf_type)t, TSF_ENC_PLAIN)) {
            CHECK(es == 0 || t == TSF_VECTOR);
            continue;
        }
        CHECK(es > 0);
        uint8_t in[4 * 16], out[4 * 16 + 1], buf[256];
        memset(in, 0, sizeof in);
        for (size_t i = 0; i < 4; i++) {
            if (es == sizeof(tsf_bytes)) {
                tsf_bytes b = {(const uint8_t *)"abc", i};
                memcpy(in + i * es, &b, sizeof b);
            } else {
                in[i * es] = (uint8_t)(i & (t == TSF_BOOLEAN ? 1 : 0x7f));
            }
        }
        memset(out, 0xee, sizeof out);
        size_t w = 0, used = 0;
        CHECK_OK(tsf_codec_encode(c, (tsf_type)t, TSF_ENC_PLAIN, in, 4, buf, sizeof buf, &w, NULL), NULL);
        CHECK_OK(tsf_codec_decode(c, (tsf_type)t, TSF_ENC_PLAIN, buf, w, out, 4, &used, NULL), NULL);
        CHECK_EQ_INT(out[4 * es], 0xee); /* the decoder wrote exactly 4 values of es bytes */
        if (es != sizeof(tsf_bytes)) CHECK(memcmp(in, out, 4 * es) == 0);
    }
    tsf_codec_close(c);
}

static void test_names(void)
{
    tsf_type t;
    tsf_encoding e;
    tsf_compression c;
    CHECK_EQ_INT(tsf_type_parse("timestamp", &t), TSF_OK);
    CHECK_EQ_INT(t, TSF_TIMESTAMP);
    CHECK_EQ_INT(tsf_encoding_parse("ts_2diff", &e), TSF_OK);
    CHECK_EQ_INT(e, TSF_ENC_TS_2DIFF);
    CHECK_EQ_INT(tsf_compression_parse("LZ4", &c), TSF_OK);
    CHECK_EQ_INT(c, 7);
    CHECK_EQ_INT(tsf_type_parse("nope", &t), TSF_EINVAL);
    CHECK(strcmp(tsf_status_name(TSF_ECORRUPT), "TSF_ECORRUPT") == 0);
    CHECK(tsf_version_number() == TSF_VERSION_NUMBER);
}

int main(void)
{
    TSF_RUN(test_be_le);
    TSF_RUN(test_varint);
    TSF_RUN(test_bitio_roundtrip);
    TSF_RUN(test_bitio_msb_first);
    TSF_RUN(test_path_resolve);
    TSF_RUN(test_names);
    TSF_RUN(test_type_size);
    return tsf_test_finish();
}
