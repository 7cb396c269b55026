/*
 * Tests of TS_2DIFF (src/codec/ts2diff.c + kernels): the §3.2 worked examples byte-exact, round
 * trips on random and edge data for INT32/DATE/INT64/TIMESTAMP, every path (per_value, scalar,
 * sse41, avx2, avx512) against the scalar path, hostile input, count, the §14 block walk, and the
 * first page of the Java golden file tree_nonaligned_int64_ts2diff_uncompressed.tsfile.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "codec_paths.h"
#include "common/bytes.h"
#include "test.h"
#include "tsf_experimental.h"

static int is64(tsf_type t)
{
    return t == TSF_INT64 || t == TSF_TIMESTAMP;
}

/* Encodes with codec c, checks the bound, returns a malloc'd exact-size copy (for ASan). */
static uint8_t *enc(tsf_codec *c, tsf_type t, const void *v, size_t n, size_t *len)
{
    size_t cap = tsf_codec_encode_bound(t, TSF_ENC_TS_2DIFF, n, 0);
    uint8_t *buf = malloc(cap + 1);
    tsf_error err;
    *len = 0;
    CHECK_OK(tsf_codec_encode(c, t, TSF_ENC_TS_2DIFF, v, n, buf, cap, len, &err), &err);
    CHECK(*len <= cap);
    uint8_t *exact = malloc(*len ? *len : 1);
    memcpy(exact, buf, *len);
    free(buf);
    return exact;
}

static void check_bytes_all_paths(tsf_type t, const void *v, size_t n, const uint8_t *expect, size_t elen)
{
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_path(PATHS[p]);
        size_t len;
        uint8_t *b = enc(c, t, v, n, &len);
        CHECK_EQ_INT(len, elen);
        if (len == elen) CHECK_MEM(b, expect, elen);
        /* and back */
        size_t w = is64(t) ? 8 : 4, used = 0;
        uint8_t *out = malloc(n * w);
        tsf_error err;
        CHECK_OK(tsf_codec_decode(c, t, TSF_ENC_TS_2DIFF, expect, elen, out, n, &used, &err), &err);
        CHECK_MEM(out, v, n * w);
        CHECK_EQ_INT(used, elen);
        size_t cnt = 0;
        CHECK_OK(tsf_codec_count(t, TSF_ENC_TS_2DIFF, expect, elen, &cnt, &err), &err);
        CHECK_EQ_INT(cnt, n);
        free(out);
        free(b);
        tsf_codec_close(c);
    }
}

static void test_spec_examples(void)
{
    const int64_t a64[] = {1000, 1010, 1020, 1035};
    const uint8_t e64[] = {0, 0, 0,    3, 0, 0, 0, 3, 0, 0, 0,    0,    0,
                           0, 0, 0x0a, 0, 0, 0, 0, 0, 0, 3, 0xe8, 0x02, 0x80};
    check_bytes_all_paths(TSF_INT64, a64, 4, e64, sizeof e64);
    check_bytes_all_paths(TSF_TIMESTAMP, a64, 4, e64, sizeof e64);
    const int32_t a32[] = {1000, 1010, 1020, 1035};
    const uint8_t e32[] = {0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0x0a, 0, 0, 3, 0xe8, 0x02, 0x80};
    check_bytes_all_paths(TSF_INT32, a32, 4, e32, sizeof e32);
    check_bytes_all_paths(TSF_DATE, a32, 4, e32, sizeof e32);
    const int32_t b32[] = {7, 5, 6, 3, 9};
    const uint8_t f32[] = {0, 0, 0, 4, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 7, 0x14, 0x09};
    check_bytes_all_paths(TSF_INT32, b32, 5, f32, sizeof f32);
    /* 130 regular timestamps: block0 n=128 w=0; block1 n=0 with Java's minDelta Long.MAX_VALUE */
    int64_t ts[130];
    for (int i = 0; i < 130; i++) ts[i] = 1700000000000LL + 1000LL * i;
    const uint8_t e130[48] = {0,    0,    0,    0x80, 0, 0, 0,    0,    0,    0,    0,    0,
                              0,    0,    0x03, 0xe8, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0,
                              0,    0,    0,    0,    0, 0, 0,    0,    0x7f, 0xff, 0xff, 0xff,
                              0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0x8b, 0xcf, 0xe7, 0x5f, 0xe8};
    check_bytes_all_paths(TSF_INT64, ts, 130, e130, sizeof e130);
    /* the C++ form (minDelta 1000 in the n=0 block) decodes the same: minDelta is ignored */
    uint8_t cpp[48];
    memcpy(cpp, e130, 48);
    memcpy(cpp + 32, e130 + 8, 8);
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_path(PATHS[p]);
        int64_t out[130];
        tsf_error err;
        CHECK_OK(tsf_codec_decode(c, TSF_INT64, TSF_ENC_TS_2DIFF, cpp, 48, out, 130, NULL, &err), &err);
        CHECK_MEM(out, ts, sizeof ts);
        tsf_codec_close(c);
    }
    /* single value: n=0 block with minDelta INT32_MAX */
    const int32_t one = -5;
    const uint8_t eone[] = {0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb};
    check_bytes_all_paths(TSF_INT32, &one, 1, eone, sizeof eone);
}

/* Random data of several shapes; `shape` picks the generator. */
static void gen(tsf_type t, void *out, size_t n, int shape, uint64_t *seed)
{
    int64_t *o64 = (int64_t *)out;
    int32_t *o32 = (int32_t *)out;
    int64_t x = (int64_t)(tsf_test_rand(seed) % 1000000);
    unsigned bits = is64(t) ? 64 : 32;
    unsigned w = (unsigned)(tsf_test_rand(seed) % (bits + 1)); /* delta width for shape 3 */
    int64_t base = (int64_t)tsf_test_rand(seed);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tsf_test_rand(seed);
        switch (shape) {
        case 0:
            x += (int64_t)(r % 201) - 100;
            break; /* W0-like walk */
        case 1:
            x = (int64_t)r;
            break; /* full range */
        case 2:
            x = (i & 1) ? (is64(t) ? INT64_MAX : INT32_MAX) : (is64(t) ? INT64_MIN : INT32_MIN);
            break;
        case 3: { /* deltas of exactly w bits above base */
            uint64_t mask = w == 64 ? ~0ull : ((1ull << w) - 1);
            uint64_t d = (i % 37 == 5) ? mask : (r & mask);
            x = (int64_t)((uint64_t)x + (uint64_t)base + d);
            break;
        }
        case 4:
            x = 1600000000000LL + 1000LL * (int64_t)i + (int64_t)(r % 21) - 10;
            break; /* jittered time */
        default:
            x = 42;
            break; /* constant */
        }
        if (is64(t))
            o64[i] = x;
        else
            o32[i] = (int32_t)(uint32_t)(uint64_t)x;
    }
}

static const size_t SIZES[] = {0, 1, 2, 3, 8, 15, 16, 17, 128, 129, 130, 145, 258, 259, 1000, 10000};

static void test_roundtrip_all_paths(void)
{
    const tsf_type types[] = {TSF_INT32, TSF_DATE, TSF_INT64, TSF_TIMESTAMP};
    uint64_t seed = 12345;
    tsf_codec *cs[NPATHS];
    for (size_t p = 0; p < NPATHS; p++) cs[p] = open_path(PATHS[p]);
    for (size_t ti = 0; ti < 4; ti++) {
        tsf_type t = types[ti];
        size_t w = is64(t) ? 8 : 4;
        for (size_t si = 0; si < sizeof SIZES / sizeof SIZES[0]; si++) {
            for (int shape = 0; shape <= 5; shape++) {
                int reps = shape == 3 ? 12 : 1;
                for (int rep = 0; rep < reps; rep++) {
                    size_t n = SIZES[si];
                    uint8_t *v = malloc(n * w + 1), *out = malloc(n * w + 1);
                    gen(t, v, n, shape, &seed);
                    size_t rlen;
                    uint8_t *ref = enc(cs[1], t, v, n, &rlen); /* scalar = reference */
                    for (size_t p = 0; p < NPATHS; p++) {
                        size_t len;
                        uint8_t *b = enc(cs[p], t, v, n, &len);
                        CHECK_EQ_INT(len, rlen);
                        if (len == rlen) CHECK_MEM(b, ref, len);
                        free(b);
                        tsf_error err;
                        size_t used = 0;
                        memset(out, 0xa5, n * w);
                        CHECK_OK(tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, ref, rlen, out, n, &used, &err),
                                 &err);
                        CHECK_EQ_INT(used, rlen);
                        if (memcmp(out, v, n * w) != 0) {
                            fprintf(stderr, "path %s type %d n %zu shape %d mismatch\n",
                                    tsf_codec_path_name(PATHS[p]), (int)t, n, shape);
                            tsf_test_failures++;
                        }
                        /* a shorter count-driven request yields the prefix */
                        if (n > 3) {
                            size_t k = n / 2 + 1;
                            CHECK_OK(
                                tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, ref, rlen, out, k, NULL, &err),
                                &err);
                            CHECK_MEM(out, v, k * w);
                        }
                    }
                    size_t cnt = 99;
                    tsf_error err;
                    CHECK_OK(tsf_codec_count(t, TSF_ENC_TS_2DIFF, ref, rlen, &cnt, &err), &err);
                    CHECK_EQ_INT(cnt, n);
                    free(ref);
                    free(v);
                    free(out);
                }
            }
        }
    }
    for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(cs[p]);
}

/* Appends a hand-made width-0 block (header only: nd deltas all equal to mind) to b; returns the new end. */
static uint8_t *w0_block(uint8_t *b, int is64b, uint32_t nd, uint64_t mind, uint64_t first)
{
    tsf_store_be32(b, nd);
    tsf_store_be32(b + 4, 0);
    if (is64b) {
        tsf_store_be64(b + 8, mind);
        tsf_store_be64(b + 16, first);
        return b + 24;
    }
    tsf_store_be32(b + 8, (uint32_t)mind);
    tsf_store_be32(b + 12, (uint32_t)first);
    return b + 16;
}

/*
 * Width-0 blocks (every delta = minDelta): the kernels fill out[i] = first + i * minDelta. A stream of
 * blocks of every delta count 0..40 and Java/wide sizes, minDelta positive, negative, 0 and wrapping,
 * decoded on every path at 8 output offsets (guard words after the request), whole and as every prefix
 * of a 128- and a 1024-delta block, and a stream mixing width-0 and packed blocks; the reference is the
 * multiply, not a running sum. (The four-sum fill of 838015e wrote lanes 0-1 into lanes 2-3: fails.)
 */
static void test_width0_fill(void)
{
    static const uint32_t nds[] = {0,  1,  2,  3,   4,   5,   6,   7,   8,   9,    10,  11, 12,
                                   13, 14, 15, 16,  17,  18,  19,  20,  23,  24,   25,  31, 32,
                                   33, 39, 40, 127, 128, 128, 128, 129, 255, 1024, 1500};
    static const uint64_t minds[] = {1000,
                                     ~0ull,
                                     0,
                                     0x7fffffffffffffffull,
                                     0x8000000000000000ull,
                                     0x0123456789abcdefull,
                                     0xfffffffffff00000ull,
                                     3};
    const size_t nnd = sizeof nds / sizeof nds[0], nmd = sizeof minds / sizeof minds[0];
    tsf_codec *cs[NPATHS];
    for (size_t p = 0; p < NPATHS; p++) cs[p] = open_path(PATHS[p]);
    uint64_t seed = 777;
    for (int is64b = 0; is64b <= 1; is64b++) {
        tsf_type t = is64b ? TSF_INT64 : TSF_INT32;
        size_t vw = is64b ? 8 : 4, total = 0;
        for (size_t i = 0; i < nnd; i++) total += (size_t)nds[i] + 1;
        uint8_t *stream = malloc(nnd * 24), *e = stream;
        uint64_t *ref = malloc(total * 8);
        size_t r = 0;
        for (size_t i = 0; i < nnd; i++) { /* the reference by multiplication, in the type's width */
            uint64_t mind = minds[(i * 5 + (size_t)is64b) % nmd];
            uint64_t first = (i % 3 == 0) ? (uint64_t) - (int64_t)(i * 977) : tsf_test_rand(&seed);
            e = w0_block(e, is64b, nds[i], mind, first);
            for (uint32_t k = 0; k <= nds[i]; k++) {
                uint64_t v = first + (uint64_t)k * mind;
                ref[r++] = is64b ? v : (uint64_t)(uint32_t)v;
            }
        }
        size_t len = (size_t)(e - stream);
        uint8_t *exact = malloc(len);
        memcpy(exact, stream, len);
        uint8_t *refb = malloc(total * vw); /* the reference in the decoder's layout */
        for (size_t i = 0; i < total; i++) {
            if (is64b)
                memcpy(refb + i * 8, &ref[i], 8);
            else {
                uint32_t x = (uint32_t)ref[i];
                memcpy(refb + i * 4, &x, 4);
            }
        }
        uint8_t *buf = malloc((total + 16) * vw + 64);
        for (size_t p = 0; p < NPATHS; p++) {
            for (size_t off = 0; off < 8; off++) { /* output offsets in vw units: every lane of a line */
                uint8_t *out = buf + off * vw;
                memset(buf, 0xa5, (total + 16) * vw + 64);
                tsf_error err;
                size_t used = 0;
                CHECK_OK(tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, exact, len, out, total, &used, &err),
                         &err);
                CHECK_EQ_INT(used, len);
                if (memcmp(out, refb, total * vw) != 0) {
                    size_t k = 0;
                    while (memcmp(out + k * vw, refb + k * vw, vw) == 0) k++;
                    fprintf(stderr, "width 0: path %s %s offset %zu: first wrong value %zu of %zu\n",
                            tsf_codec_path_name(PATHS[p]), is64b ? "int64" : "int32", off, k, total);
                    tsf_test_failures++;
                }
                for (size_t g = 0; g < 8 * vw; g++) CHECK(out[total * vw + g] == 0xa5); /* nothing past */
                for (size_t g = 0; g < off * vw; g++) CHECK(buf[g] == 0xa5);            /* nor before */
            }
            /* every prefix of the 128-delta and the 1024-delta block (every m = take - 1, all tails) */
            size_t start = 0;
            for (size_t i = 0; i < nnd; i++) {
                size_t cnt = (size_t)nds[i] + 1;
                if (nds[i] == 128 || nds[i] == 1024) {
                    size_t bo = (size_t)(i * (is64b ? 24 : 16));
                    for (size_t take = 1; take <= cnt; take++) {
                        memset(buf, 0xa5, (take + 8) * vw);
                        tsf_error err;
                        CHECK_OK(tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, exact + bo, len - bo, buf, take,
                                                  NULL, &err),
                                 &err);
                        CHECK_MEM(buf, refb + start * vw, take * vw);
                        for (size_t g = 0; g < 8 * vw; g++) CHECK(buf[take * vw + g] == 0xa5);
                    }
                }
                start += cnt;
            }
        }
        /* width-0 blocks between packed ones (the position after a header-only block), encoder-made */
        size_t n = 129 * 12;
        uint8_t *v = malloc(n * vw), *dec = malloc(n * vw);
        int64_t x = 5;
        for (size_t i = 0; i < n; i++) {
            size_t b = i / 129;
            uint64_t step = (b % 3 == 0) ? (uint64_t)(b + 1) * 1000 : (b % 3 == 1) ? minds[b % nmd] : 0;
            if (b % 3 == 2) step = tsf_test_rand(&seed) % 4096; /* packed block */
            x = (int64_t)((uint64_t)x + step);
            if (is64b)
                memcpy(v + i * 8, &x, 8);
            else {
                int32_t y = (int32_t)(uint32_t)(uint64_t)x;
                memcpy(v + i * 4, &y, 4);
            }
        }
        size_t mlen;
        uint8_t *mixed = enc(cs[1], t, v, n, &mlen);
        CHECK(mlen < n * vw); /* the constant blocks are header-only */
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_error err;
            memset(dec, 0xa5, n * vw);
            CHECK_OK(tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, mixed, mlen, dec, n, NULL, &err), &err);
            CHECK_MEM(dec, v, n * vw);
        }
        free(mixed);
        free(v);
        free(dec);
        free(buf);
        free(refb);
        free(exact);
        free(ref);
        free(stream);
    }
    for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(cs[p]);
}

/* Every width 0..32 / 0..64 appears as a block header. */
static void test_widths_exercised(void)
{
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    for (int b64 = 0; b64 < 2; b64++) {
        unsigned maxw = b64 ? 64 : 32;
        for (unsigned w = 0; w <= maxw; w++) {
            int64_t v64[300];
            int32_t v32[300];
            uint64_t x = 77;
            for (int i = 0; i < 300; i++) {
                /* deltas b, b + 0/1 and b + 2^w - 1 with b = -2^(w-1): the span is exactly w bits */
                uint64_t b = w == 0 ? 5 : 0 - (1ull << (w - 1));
                uint64_t d =
                    b + (w == 0 ? 0 : (i % 3 == 0 ? (w == 64 ? ~0ull : (1ull << w) - 1) : (uint64_t)i % 2));
                x += d;
                v64[i] = (int64_t)x;
                v32[i] = (int32_t)(uint32_t)x;
            }
            size_t len;
            uint8_t *b = enc(c, b64 ? TSF_INT64 : TSF_INT32, b64 ? (void *)v64 : (void *)v32, 300, &len);
            CHECK_EQ_INT(tsf_load_be32(b + 4), w);
            free(b);
        }
    }
    tsf_codec_close(c);
}

/* Large outputs (millions of values, > 8 MiB) into a destination aligned only to its element type
 * (not to any vector width): same values. */
static void test_large_outputs(void)
{
    uint64_t seed = 5;
    for (int t64 = 0; t64 < 2; t64++) {
        tsf_type t = t64 ? TSF_INT64 : TSF_INT32;
        size_t n = t64 ? 1100003 : 2200007, w = t64 ? 8 : 4;
        uint8_t *v = malloc(n * w), *out = malloc(n * w + 8);
        gen(t, v, n, 0, &seed);
        ((uint8_t *)v)[w * 777] ^= 0x40; /* one wide block among narrow ones */
        tsf_codec *sc = open_path(TSF_PATH_SCALAR);
        size_t len;
        uint8_t *ref = enc(sc, t, v, n, &len);
        for (size_t p = 1; p < NPATHS; p++) {
            tsf_codec *c = open_path(PATHS[p]);
            tsf_error err;
            size_t used = 0;
            memset(out, 0, n * w + 8);
            /* element-aligned but not vector-aligned destination: out + w (malloc gives 16) */
            CHECK_OK(tsf_codec_decode(c, t, TSF_ENC_TS_2DIFF, ref, len, out + w, n, &used, &err), &err);
            CHECK_EQ_INT(used, len);
            CHECK_MEM(out + w, v, n * w);
            tsf_codec_close(c);
        }
        tsf_codec_close(sc);
        free(ref);
        free(v);
        free(out);
    }
}

/* An INT32 stream whose blocks mix what the AVX-512 whole-block loop takes (128 deltas of w <= 25)
 * with what it leaves to the per-block loop (w 26..32, short blocks where streams are concatenated,
 * the end of the stream); *nv receives the value count. */
static uint8_t *mixed_blocks_stream(int32_t **vals, size_t *nv, size_t *len)
{
    static const unsigned WS[] = {8, 8, 0, 1, 5, 7, 8, 9, 13, 16, 17, 24, 25, 26, 31, 32, 8,  8, 3, 25,
                                  8, 8, 8, 8, 8, 8, 8, 8, 8,  8,  8,  8,  8,  8,  8,  8,  12, 8, 8, 8};
    const size_t nb = sizeof WS / sizeof WS[0], tail1 = 50, tail2 = 3 * 129 + 7;
    size_t n1 = nb * 129, n = n1 + tail1 + tail2;
    int32_t *v = malloc(n * 4);
    uint64_t seed = 99;
    uint32_t x = 123456;
    for (size_t b = 0; b < nb; b++) {
        unsigned w = WS[b];
        uint32_t mask = w == 32 ? 0xffffffffu : (1u << w) - 1, base = (uint32_t)tsf_test_rand(&seed);
        for (size_t i = 0; i < 129; i++) {
            /* delta i of the block (i >= 1) is base + r, r spanning exactly w bits */
            uint32_t r = i == 1 ? 0 : i == 2 ? mask : (uint32_t)tsf_test_rand(&seed) & mask;
            if (i) x += base + r;
            v[b * 129 + i] = (int32_t)x;
        }
    }
    for (size_t i = n1; i < n; i++) v[i] = (int32_t)(x += (uint32_t)(tsf_test_rand(&seed) % 300));
    tsf_codec *sc = open_path(TSF_PATH_SCALAR);
    size_t l1, l2, l3;
    uint8_t *a = enc(sc, TSF_INT32, v, n1, &l1), *b = enc(sc, TSF_INT32, v + n1, tail1, &l2),
            *c = enc(sc, TSF_INT32, v + n1 + tail1, tail2, &l3);
    tsf_codec_close(sc);
    uint8_t *s = malloc(l1 + l2 + l3);
    memcpy(s, a, l1);
    memcpy(s + l1, b, l2);
    memcpy(s + l1 + l2, c, l3);
    free(a);
    free(b);
    free(c);
    *vals = v;
    *nv = n;
    *len = l1 + l2 + l3;
    return s;
}

/*
 * The AVX-512 whole-block INT32 loop, with ordinary and with streaming stores (experimental nt_stores 1 / 0;
 * the scalar path is the twin): the mixed stream into an output at each of the 16 int32 offsets of
 * a 64-byte line, for value counts that end anywhere, on every byte cut of the stream (the values
 * of the blocks the cut holds, then the whole count: the same status as the scalar path); guard
 * words around the output stay untouched.
 */
static void test_whole_blocks(void)
{
    int32_t *v;
    size_t n, len;
    uint8_t *s = mixed_blocks_stream(&v, &n, &len);
    /* block ends, and the values before each */
    size_t ends[64], before[64], nblk = 0;
    for (size_t pos = 0, cnt = 0; pos < len && nblk < 64; nblk++) {
        size_t nd = tsf_load_be32(s + pos), w = tsf_load_be32(s + pos + 4);
        pos += 16 + (nd * w + 7) / 8;
        cnt += nd + 1;
        ends[nblk] = pos;
        before[nblk] = cnt;
    }
    CHECK_EQ_INT(before[nblk - 1], n);
    tsf_codec *cs[4] = {open_path(TSF_PATH_SCALAR), open_path(TSF_PATH_AVX2), NULL, NULL};
    for (int k = 0; k < 2; k++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.path = TSF_PATH_AVX512;
        struct tsf_codec_experimental x = {.nt_stores = k};
        o.experimental = &x;
        CHECK_OK(tsf_codec_open(&cs[2 + k], &o, NULL), NULL);
    }
    int32_t *buf = aligned_alloc(64, ((n + 64) * 4 + 63) & ~(size_t)63);
    const int32_t guard = 0x5a5a5a5a;
    tsf_error err;
    /* every offset in a line, several counts */
    const size_t counts[] = {n, n - 1, n - 130, 129, 128, 130, 258, 1000, 1001, 129 * 13, 129 * 13 + 1};
    for (size_t ci = 0; ci < 4; ci++) {
        for (size_t off = 0; off < 16; off++) {
            for (size_t q = 0; q < sizeof counts / sizeof counts[0]; q++) {
                size_t m = counts[q];
                for (size_t i = 0; i < n + 64; i++) buf[i] = guard;
                int32_t *out = buf + 16 + off;
                CHECK_OK(tsf_codec_decode(cs[ci], TSF_INT32, TSF_ENC_TS_2DIFF, s, len, out, m, NULL, &err),
                         &err);
                CHECK_MEM(out, v, m * 4);
                for (size_t i = 0; i < 16 + off; i++) CHECK(buf[i] == guard);
                for (size_t i = 16 + off + m; i < n + 64; i++) CHECK(buf[i] == guard);
                if (tsf_test_failures) break;
            }
        }
    }
    /* every cut: complete blocks decode on every path, the whole count fails as on the scalar path */
    int32_t *ref = malloc(n * 4), *got = malloc((n + 1) * 4);
    for (size_t cut = 0; cut <= len && !tsf_test_failures; cut++) {
        uint8_t *c = malloc(cut ? cut : 1);
        memcpy(c, s, cut);
        size_t whole = 0;
        for (size_t b = 0; b < nblk && ends[b] <= cut; b++) whole = before[b];
        tsf_status rs = tsf_codec_decode(cs[0], TSF_INT32, TSF_ENC_TS_2DIFF, c, cut, ref, n, NULL, &err);
        for (size_t ci = 1; ci < 4; ci++) {
            CHECK_OK(
                tsf_codec_decode(cs[ci], TSF_INT32, TSF_ENC_TS_2DIFF, c, cut, got + 1, whole, NULL, &err),
                &err);
            CHECK_MEM(got + 1, v, whole * 4);
            tsf_status st = tsf_codec_decode(cs[ci], TSF_INT32, TSF_ENC_TS_2DIFF, c, cut, got, n, NULL, &err);
            CHECK_EQ_INT(st, rs);
            if (st == TSF_OK) CHECK_MEM(got, v, n * 4);
        }
        free(c);
    }
    for (size_t ci = 0; ci < 4; ci++) tsf_codec_close(cs[ci]);
    free(ref);
    free(got);
    free(buf);
    free(v);
    free(s);
}

static int has(const char *msg, const char *s)
{
    return strstr(msg, s) != NULL;
}

static void test_hostile(void)
{
    tsf_codec *cs[NPATHS];
    for (size_t p = 0; p < NPATHS; p++) cs[p] = open_path(PATHS[p]);
    /* truncations of a valid 3-block INT64 stream and a 3-block INT32 stream */
    uint64_t seed = 99;
    for (int t64 = 0; t64 < 2; t64++) {
        tsf_type t = t64 ? TSF_INT64 : TSF_INT32;
        size_t n = 300, w = t64 ? 8 : 4;
        uint8_t *v = malloc(n * w), *out = malloc(n * w);
        gen(t, v, n, 0, &seed);
        size_t len;
        uint8_t *ref = enc(cs[1], t, v, n, &len);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *tr = malloc(cut ? cut : 1);
            memcpy(tr, ref, cut);
            for (size_t p = 0; p < NPATHS; p++) {
                tsf_error err;
                err.message[0] = 0;
                tsf_status s = tsf_codec_decode(cs[p], t, TSF_ENC_TS_2DIFF, tr, cut, out, n, NULL, &err);
                CHECK_EQ_INT(s, TSF_ECORRUPT);
                CHECK(has(err.message, "TS_2DIFF") && has(err.message, "offset"));
            }
            size_t cnt;
            tsf_error err;
            tsf_status s = tsf_codec_count(t, TSF_ENC_TS_2DIFF, tr, cut, &cnt, &err);
            CHECK(s == TSF_ECORRUPT || (s == TSF_OK && cnt < n)); /* a cut on a block boundary is valid */
            free(tr);
        }
        free(ref);
        free(v);
        free(out);
    }
    /* negative n, too-wide w, and data that the header claims but the buffer lacks */
    uint8_t h[24] = {0};
    int32_t o32[4];
    int64_t o64[4];
    tsf_error err;
    tsf_store_be32(h, 0x80000000u);
    for (size_t p = 0; p < NPATHS; p++) {
        CHECK_EQ_INT(tsf_codec_decode(cs[p], TSF_INT32, TSF_ENC_TS_2DIFF, h, 16, o32, 2, NULL, &err),
                     TSF_ECORRUPT);
        CHECK(has(err.message, "negative"));
    }
    tsf_store_be32(h, 1);
    tsf_store_be32(h + 4, 33);
    for (size_t p = 0; p < NPATHS; p++) {
        CHECK_EQ_INT(tsf_codec_decode(cs[p], TSF_INT32, TSF_ENC_TS_2DIFF, h, 16, o32, 2, NULL, &err),
                     TSF_ECORRUPT);
        CHECK(has(err.message, "width 33") && has(err.message, "offset 4"));
    }
    tsf_store_be32(h + 4, 65);
    for (size_t p = 0; p < NPATHS; p++)
        CHECK_EQ_INT(tsf_codec_decode(cs[p], TSF_INT64, TSF_ENC_TS_2DIFF, h, 24, o64, 2, NULL, &err),
                     TSF_ECORRUPT);
    tsf_store_be32(h, 0x7fffffff);
    tsf_store_be32(h + 4, 64);
    for (size_t p = 0; p < NPATHS; p++)
        CHECK_EQ_INT(tsf_codec_decode(cs[p], TSF_INT64, TSF_ENC_TS_2DIFF, h, 24, o64, 4, NULL, &err),
                     TSF_ECORRUPT);
    size_t cnt;
    CHECK_EQ_INT(tsf_codec_count(TSF_INT64, TSF_ENC_TS_2DIFF, h, 24, &cnt, &err), TSF_ECORRUPT);
    /* garbage: must return (either way) without touching memory outside the buffers (ASan) */
    for (int it = 0; it < 3000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 80);
        uint8_t *g = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) g[i] = (uint8_t)tsf_test_rand(&seed);
        if (len >= 8 && (it & 1)) { /* plausible headers */
            tsf_store_be32(g, (uint32_t)(tsf_test_rand(&seed) % 200));
            tsf_store_be32(g + 4, (uint32_t)(tsf_test_rand(&seed) % 66));
        }
        int64_t out[300];
        for (size_t p = 0; p < NPATHS; p++) {
            tsf_status s = tsf_codec_decode(cs[p], (it & 2) ? TSF_INT64 : TSF_INT32, TSF_ENC_TS_2DIFF, g, len,
                                            out, 1 + it % 150, NULL, &err);
            CHECK(s == TSF_OK || s == TSF_ECORRUPT);
        }
        tsf_ts2diff_block blk[8];
        size_t nb;
        tsf_status s = tsf_ts2diff_blocks(g, len, blk, 8, &nb, &err);
        CHECK(s == TSF_OK || s == TSF_ECORRUPT);
        free(g);
    }
    for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(cs[p]);
}

static void test_encode_small_dst(void)
{
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    int32_t v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t buf[64];
    size_t w;
    tsf_error err;
    size_t bound = tsf_codec_encode_bound(TSF_INT32, TSF_ENC_TS_2DIFF, 10, 0);
    CHECK_EQ_INT(bound, 16 + 40);
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT32, TSF_ENC_TS_2DIFF, v, 10, buf, bound - 1, &w, &err),
                 TSF_ERANGE);
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_TS_2DIFF, v, 10, buf, bound, &w, &err), &err);
    CHECK_EQ_INT(w, 16); /* w = 0: header only */
    tsf_codec_close(c);
}

static void test_blocks_spec_example(void)
{
    int64_t ts[130];
    for (int i = 0; i < 130; i++) ts[i] = 1700000000000LL + 1000LL * i;
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    size_t len;
    uint8_t *b = enc(c, TSF_INT64, ts, 130, &len);
    tsf_ts2diff_block blk[4];
    size_t nb = 0;
    tsf_error err;
    CHECK_OK(tsf_ts2diff_blocks(b, len, NULL, 0, &nb, &err), &err);
    CHECK_EQ_INT(nb, 2);
    CHECK_OK(tsf_ts2diff_blocks(b, len, blk, 4, &nb, &err), &err);
    CHECK_EQ_INT(blk[0].offset, 0);
    CHECK_EQ_INT(blk[0].count, 129);
    CHECK_EQ_INT(blk[0].width, 0);
    CHECK_EQ_INT(blk[0].min_delta, 1000);
    CHECK_EQ_INT(blk[0].first, 1700000000000LL);
    CHECK_EQ_INT(blk[0].bound, 1700000129000LL);
    CHECK_EQ_INT(blk[0].bound_conservative, 1700000128000LL); /* w = 0: exact last */
    CHECK_EQ_INT(blk[0].ordinal, 0);
    CHECK_EQ_INT(blk[1].offset, 24);
    CHECK_EQ_INT(blk[1].count, 1);
    CHECK_EQ_INT(blk[1].first, 1700000129000LL);
    CHECK_EQ_INT(blk[1].bound, 1700000129001LL);
    CHECK_EQ_INT(blk[1].ordinal, 129);
    free(b);
    tsf_codec_close(c);
}

static void test_blocks_random(void)
{
    uint64_t seed = 4242;
    tsf_codec *c = open_path(TSF_PATH_SCALAR);
    for (int it = 0; it < 40; it++) {
        size_t n = 1 + (size_t)(tsf_test_rand(&seed) % 3000);
        int64_t *t = malloc(n * 8);
        int64_t jitter = (int64_t)(tsf_test_rand(&seed) % 400);
        for (size_t i = 0; i < n; i++)
            t[i] = 1600000000000LL + 1000LL * (int64_t)i +
                   (jitter ? (int64_t)(tsf_test_rand(&seed) % (uint64_t)(2 * jitter + 1)) - jitter : 0);
        if (it == 0) t[n - 1] = INT64_MAX; /* last-block bound saturates */
        size_t len;
        uint8_t *b = enc(c, TSF_INT64, t, n, &len);
        size_t nb = 0;
        tsf_error err;
        CHECK_OK(tsf_ts2diff_blocks(b, len, NULL, 0, &nb, &err), &err);
        CHECK_EQ_INT(nb, (n + 128) / 129);
        tsf_ts2diff_block *blk = malloc(nb * sizeof *blk);
        CHECK_OK(tsf_ts2diff_blocks(b, len, blk, nb, &nb, &err), &err);
        for (size_t k = 0; k < nb; k++) {
            size_t o = blk[k].ordinal;
            CHECK_EQ_INT(o, k * 129);
            CHECK(blk[k].first == t[o]);
            int64_t last = t[o + blk[k].count - 1];
            if (k + 1 < nb)
                CHECK(blk[k].bound == t[o + blk[k].count]);
            else
                CHECK(blk[k].bound == (last == INT64_MAX ? INT64_MAX : last + 1));
            CHECK(blk[k].bound_conservative >= last);
            for (uint32_t i = 0; i < blk[k].count; i++)
                CHECK(t[o + i] >= blk[k].first && t[o + i] <= blk[k].bound_conservative);
        }
        /* a smaller cap fills the prefix and still reports the total */
        if (nb > 1) {
            tsf_ts2diff_block one;
            size_t tot;
            CHECK_OK(tsf_ts2diff_blocks(b, len, &one, 1, &tot, &err), &err);
            CHECK_EQ_INT(tot, nb);
            CHECK(one.bound == blk[0].bound && one.first == blk[0].first);
        }
        free(blk);
        free(b);
        free(t);
    }
    tsf_codec_close(c);
}

/* Finds `pat` in buf; returns its offset or (size_t)-1. */
static size_t find(const uint8_t *buf, size_t len, const uint8_t *pat, size_t plen)
{
    for (size_t i = 0; i + plen <= len; i++)
        if (memcmp(buf + i, pat, plen) == 0) return i;
    return (size_t)-1;
}

static void test_golden_int64_page(void)
{
    const char *dir = tsf_test_data_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/tsfile-java/tree_nonaligned_int64_ts2diff_uncompressed.tsfile",
             dir);
    size_t flen;
    uint8_t *file = tsf_test_read_file(path, &flen);
    if (!file) {
        CHECK(file != NULL); /* tests/data is part of the checkout */
        return;
    }
    /* page body = uvarint(564) b4 04, the time stream, the value stream (spec §3.2) */
    const uint8_t pat[] = {0xb4, 0x04, 0, 0,    0,    0x80, 0, 0, 0, 3, 0, 0,    0,
                           0,    0,    0, 0x03, 0xe2, 0,    0, 0, 0, 0, 0, 0x03, 0xe8};
    size_t at = find(file, flen, pat, sizeof pat);
    CHECK(at != (size_t)-1);
    if (at == (size_t)-1) {
        free(file);
        return;
    }
    const uint8_t *ts = file + at + 2;
    int64_t t[1000], expect[1000];
    for (int i = 0; i < 1000; i++) expect[i] = 1000 + 1000LL * i + i % 7;
    for (size_t p = 0; p < NPATHS; p++) {
        tsf_codec *c = open_path(PATHS[p]);
        size_t used = 0;
        tsf_error err;
        CHECK_OK(tsf_codec_decode(c, TSF_INT64, TSF_ENC_TS_2DIFF, ts, 564, t, 1000, &used, &err), &err);
        CHECK_EQ_INT(used, 564);
        CHECK_MEM(t, expect, sizeof t);
        /* re-encoding reproduces Java's bytes */
        size_t len;
        uint8_t *b = enc(c, TSF_INT64, expect, 1000, &len);
        CHECK_EQ_INT(len, 564);
        if (len == 564) CHECK_MEM(b, ts, 564);
        free(b);
        /* the value stream starts with the w = 64 block of the edge values */
        int64_t v[1000];
        size_t vlen = flen - (at + 2 + 564);
        CHECK_OK(tsf_codec_decode(c, TSF_INT64, TSF_ENC_TS_2DIFF, ts + 564, vlen, v, 1000, &used, &err),
                 &err);
        CHECK(v[0] == INT64_MIN && v[1] == INT64_MAX && v[2] == 0 && v[3] == -1);
        uint8_t *vb = enc(c, TSF_INT64, v, 1000, &len);
        CHECK_EQ_INT(len, used);
        if (len == used) CHECK_MEM(vb, ts + 564, len);
        free(vb);
        tsf_codec_close(c);
    }
    free(file);
}

/* Naive summary of v[0..n): min, max, wrapping sum, first row not above the one before. */
static void naive_summary(const int64_t *v, size_t n, tsf_dec_summary *s)
{
    s->min = s->max = n ? v[0] : 0;
    s->sum = 0;
    s->unordered = n;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < s->min) s->min = v[i];
        if (v[i] > s->max) s->max = v[i];
        s->sum += (uint64_t)v[i];
        if (i && v[i] <= v[i - 1] && s->unordered == n) s->unordered = i;
    }
}

/*
 * tsf_ts2diff_decode_i64_sum on every path: the same values and consumed as the plain decode, and min, max,
 * sum and the first unordered row equal to a naive fold, for the generator's shapes (walks the kernels fold
 * in registers, full-range and extreme values that they leave to the wide fold, every delta width), times
 * that ascend (header proofs), times with one value lowered (the block that holds it fails its proof),
 * times that climb past INT64_MAX and wrap, near the int64 ends, runs that leave and stay within the
 * 32-bit fold's reach, and a count cut inside a block.
 */
static void test_summary_all_paths(void)
{
    uint64_t seed = 777;
    tsf_codec *cs[NPATHS];
    for (size_t p = 0; p < NPATHS; p++) cs[p] = open_path(PATHS[p]);
    const size_t sizes[] = {1, 2, 16, 17, 129, 130, 1000, 10000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int shape = 0; shape <= 11; shape++) {
            int reps = shape == 3 ? 16 : 2;
            for (int rep = 0; rep < reps; rep++) {
                size_t n = sizes[si];
                int64_t *v = malloc(n * 8), *out = malloc(n * 8), *ref = malloc(n * 8);
                if (shape <= 5) {
                    gen(TSF_INT64, v, n, shape, &seed);
                } else {
                    gen(TSF_INT64, v, n, 4, &seed); /* ascending times */
                    if (shape == 6 && n > 2) v[1 + tsf_test_rand(&seed) % (n - 1)] -= 5000; /* one out of order */
                    if (shape == 7) /* climbs past INT64_MAX halfway: the decoder wraps */
                        for (size_t i = 0; i < n; i++)
                            v[i] = (int64_t)((uint64_t)INT64_MAX - 1000 * (uint64_t)(n / 2) + 1000 * (uint64_t)i);
                    if (shape == 8) /* a small walk just below INT64_MAX */
                        for (size_t i = 0; i < n; i++) v[i] = INT64_MAX - 200000 + (v[i] % 1000);
                    if (shape == 9) /* a small walk just above INT64_MIN */
                        for (size_t i = 0; i < n; i++) v[i] = INT64_MIN + 1000 + (v[i] % 1000);
                    if (shape == 10) /* steps of 2^24..2^25: values leave 2^31 of the first one */
                        for (size_t i = 1; i < n; i++)
                            v[i] = v[i - 1] + (INT64_C(1) << 24) + (int64_t)(tsf_test_rand(&seed) % (1u << 24));
                    if (shape == 11) /* a walk of steps up to 2^20 */
                        for (size_t i = 1; i < n; i++)
                            v[i] = v[i - 1] + (int64_t)(tsf_test_rand(&seed) % (1u << 21)) - (INT64_C(1) << 20);
                }
                size_t len, used = 0, rused = 0;
                uint8_t *b = enc(cs[1], TSF_INT64, v, n, &len);
                tsf_error err;
                for (size_t cut = 0; cut < 2; cut++) {
                    size_t k = cut ? n / 2 + 1 : n;
                    if (cut && k >= n) continue;
                    CHECK_OK(tsf_codec_decode(cs[1], TSF_INT64, TSF_ENC_TS_2DIFF, b, len, ref, k, &rused, &err), &err);
                    tsf_dec_summary want;
                    naive_summary(ref, k, &want);
                    for (size_t p = 0; p < NPATHS; p++) {
                        for (unsigned what = 1; what <= 3; what++) {
                            tsf_dec_summary got;
                            memset(out, 0x5a, n * 8);
                            CHECK_OK(tsf_ts2diff_decode_i64_sum(cs[p], b, len, out, k, what, &got, &used, &err), &err);
                            CHECK_EQ_INT(used, rused);
                            CHECK_MEM(out, ref, k * 8);
                            int bad = got.what != what;
                            if (what & TSF_SUM_VALUES)
                                bad |= got.min != want.min || got.max != want.max || got.sum != want.sum;
                            if (what & TSF_SUM_ASCENDING) bad |= got.unordered != want.unordered;
                            if (bad) {
                                fprintf(stderr,
                                        "summary: path %s n %zu k %zu shape %d what %u: min %lld/%lld max %lld/%lld "
                                        "sum %llu/%llu unordered %zu/%zu\n",
                                        tsf_codec_path_name(PATHS[p]), n, k, shape, what, (long long)got.min,
                                        (long long)want.min, (long long)got.max, (long long)want.max,
                                        (unsigned long long)got.sum, (unsigned long long)want.sum, got.unordered,
                                        want.unordered);
                                tsf_test_failures++;
                            }
                        }
                    }
                }
                free(b);
                free(v);
                free(out);
                free(ref);
            }
        }
    }
    for (size_t p = 0; p < NPATHS; p++) tsf_codec_close(cs[p]);
}

int main(void)
{
    TSF_RUN(test_spec_examples);
    TSF_RUN(test_roundtrip_all_paths);
    TSF_RUN(test_width0_fill);
    TSF_RUN(test_widths_exercised);
    TSF_RUN(test_large_outputs);
    TSF_RUN(test_whole_blocks);
    TSF_RUN(test_hostile);
    TSF_RUN(test_encode_small_dst);
    TSF_RUN(test_blocks_spec_example);
    TSF_RUN(test_blocks_random);
    TSF_RUN(test_golden_int64_page);
    TSF_RUN(test_summary_all_paths);
    return tsf_test_finish();
}
