/*
 * Tests of the public codec API (src/codec/codec.c) over the whole (type x encoding) table of
 * spec §1: illegal pairs give TSF_ENOTSUP, NULL arguments TSF_EINVAL, a too small dst
 * TSF_ERANGE; every legal pair that has an encoder round-trips empty, short, 128/129/130-value
 * and edge inputs on every implementation path. Pairs whose codec has not landed yet
 * (tsf_codec_can_encode == 0) are skipped and covered automatically once they land.
 * Last, every uncompressed non-aligned page of the Java golden files written with PLAIN, RLE,
 * ZIGZAG or DICTIONARY is decoded and re-encoded, which must give the Java bytes back.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "common/bytes.h"
#include "test.h"

#define NTYPES 12
#define NENCS 16

/* spec §1: the pairs Java can write or read */
static int legal(tsf_type t, tsf_encoding e)
{
    const int ints = t == TSF_INT32 || t == TSF_DATE || t == TSF_INT64 || t == TSF_TIMESTAMP;
    const int floats = t == TSF_FLOAT || t == TSF_DOUBLE;
    const int bin = t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
    if (!(ints || floats || bin || t == TSF_BOOLEAN)) return 0;
    switch (e) {
    case TSF_ENC_PLAIN:
        return 1;
    case TSF_ENC_DICTIONARY:
        return t == TSF_TEXT || t == TSF_STRING;
    case TSF_ENC_RLE:
        return ints || floats || t == TSF_BOOLEAN;
    case TSF_ENC_TS_2DIFF:
        return ints || floats;
    case TSF_ENC_GORILLA_V1:
        return floats;
    case TSF_ENC_REGULAR:
        return ints;
    case TSF_ENC_GORILLA:
    case TSF_ENC_CHIMP:
    case TSF_ENC_SPRINTZ:
    case TSF_ENC_RLBE:
        return ints || floats;
    case TSF_ENC_ZIGZAG:
        return ints;
    default:
        return 0; /* DIFF, BITMAP, FREQ, unknown */
    }
}

/* The encodings this suite's owner implements: they must be fully wired. */
static int mine(tsf_encoding e)
{
    return e == TSF_ENC_PLAIN || e == TSF_ENC_RLE || e == TSF_ENC_ZIGZAG || e == TSF_ENC_DICTIONARY;
}

static void test_table(void)
{
    tsf_codec *c = NULL;
    tsf_error err;
    CHECK_OK(tsf_codec_open(&c, NULL, &err), &err);
    const int types[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 200, -1};
    uint8_t buf[64] = {0}, out[64];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (int e = -1; e < NENCS; e++) {
            tsf_type t = (tsf_type)types[ti];
            tsf_encoding en = (tsf_encoding)e;
            size_t w = 0, n = 0;
            if (!legal(t, en)) {
                CHECK_EQ_INT(tsf_codec_can_encode(t, en), 0);
                CHECK_EQ_INT(tsf_codec_can_decode(t, en), 0);
                CHECK_EQ_INT(tsf_codec_encode_bound(t, en, 10, 0), 0);
                CHECK_EQ_INT(tsf_codec_encode(c, t, en, buf, 1, out, sizeof out, &w, &err), TSF_ENOTSUP);
                CHECK_EQ_INT(tsf_codec_decode(c, t, en, buf, sizeof buf, out, 1, NULL, &err), TSF_ENOTSUP);
                CHECK_EQ_INT(tsf_codec_count(t, en, buf, sizeof buf, &n, &err), TSF_ENOTSUP);
                continue;
            }
            if (mine(en)) {
                CHECK_EQ_INT(tsf_codec_can_encode(t, en), 1);
                CHECK_EQ_INT(tsf_codec_can_decode(t, en), 1);
                if (!((t == TSF_FLOAT || t == TSF_DOUBLE) && en == TSF_ENC_RLE)) /* bound from floatprec */
                    CHECK(tsf_codec_encode_bound(t, en, 10, 0) > 0);
            }
            if (tsf_codec_can_encode(t, en)) CHECK_EQ_INT(tsf_codec_can_decode(t, en), 1);
        }
    }
    tsf_codec_close(c);
}

static void test_null_args(void)
{
    tsf_codec *c = NULL;
    tsf_error err;
    CHECK_EQ_INT(tsf_codec_open(NULL, NULL, &err), TSF_EINVAL);
    CHECK_OK(tsf_codec_open(&c, NULL, &err), &err);
    int32_t v[2] = {1, 2};
    uint8_t buf[64];
    size_t w = 0, n = 0;
    CHECK_EQ_INT(tsf_codec_encode(NULL, TSF_INT32, TSF_ENC_PLAIN, v, 2, buf, 64, &w, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT32, TSF_ENC_PLAIN, NULL, 2, buf, 64, &w, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT32, TSF_ENC_PLAIN, v, 2, NULL, 64, &w, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_encode(c, TSF_INT32, TSF_ENC_PLAIN, v, 2, buf, 64, NULL, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_decode(NULL, TSF_INT32, TSF_ENC_PLAIN, buf, 2, v, 2, NULL, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_PLAIN, NULL, 2, v, 2, NULL, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_decode(c, TSF_INT32, TSF_ENC_PLAIN, buf, 2, NULL, 2, NULL, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_count(TSF_INT32, TSF_ENC_PLAIN, buf, 2, NULL, &err), TSF_EINVAL);
    CHECK_EQ_INT(tsf_codec_count(TSF_INT32, TSF_ENC_PLAIN, NULL, 2, &n, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "NULL") != NULL);
    /* n == 0 with NULL buffers is fine */
    CHECK_OK(tsf_codec_encode(c, TSF_INT32, TSF_ENC_PLAIN, NULL, 0, NULL, 0, &w, &err), &err);
    CHECK_EQ_INT(w, 0);
    tsf_codec_close(c);
    tsf_codec_close(NULL);
}

/* ---- round trips ----------------------------------------------------------------------------- */

enum { PROFILE_EDGE, PROFILE_TAME, PROFILE_PREC, PROFILE_LOSSY };

static int profile(tsf_type t, tsf_encoding e)
{
    int fl = t == TSF_FLOAT || t == TSF_DOUBLE;
    if (fl && (e == TSF_ENC_TS_2DIFF || e == TSF_ENC_RLE)) return PROFILE_PREC; /* spec §3.3 */
    if (fl && (e == TSF_ENC_SPRINTZ || e == TSF_ENC_RLBE)) return PROFILE_LOSSY; /* lossy in Java (§9, §10) */
    if (e == TSF_ENC_SPRINTZ) return PROFILE_TAME; /* Java round-trips small ranges only */
    return PROFILE_EDGE;
}

static uint8_t text_pool[4096];

/* n values of type t for the profile; edge values first, then smooth runs and random noise. */
static void gen(tsf_type t, int prof, size_t n, void *out, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tsf_test_rand(&s);
        int64_t smooth = (int64_t)(i / 3) * 7 - 300 + (int64_t)(r % 5);
        int64_t k = prof == PROFILE_EDGE && r % 4 == 0 ? (int64_t)(r >> 40) - (1 << 23) : smooth;
        switch (t) {
        case TSF_BOOLEAN:
            ((uint8_t *)out)[i] = (uint8_t)((i / 5 + (r % 3 == 0)) & 1);
            break;
        case TSF_INT32:
        case TSF_DATE: {
            static const int32_t edge[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1};
            int32_t v = (int32_t)k;
            if (prof == PROFILE_EDGE && i < 7) v = edge[i];
            if (prof == PROFILE_EDGE && r % 11 == 0) v = (int32_t)r;
            ((int32_t *)out)[i] = v;
            break;
        }
        case TSF_INT64:
        case TSF_TIMESTAMP: {
            static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
            int64_t v = k * 1000003;
            if (prof == PROFILE_EDGE && i < 7) v = edge[i];
            if (prof == PROFILE_EDGE && r % 11 == 0) v = (int64_t)r;
            ((int64_t *)out)[i] = v;
            break;
        }
        case TSF_FLOAT: {
            float v = (float)((double)k / 100.0);
            if (prof == PROFILE_EDGE) {
                const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 3.4028235e38f, 1e-45f, 0.0f};
                if (i < 7) v = edge[i];
                if (r % 13 == 0) {
                    uint32_t b = (uint32_t)r;
                    if ((b & 0x7fffffffu) > 0x7f800000u) b = 0x7fc00000u; /* Java's one NaN */
                    memcpy(&v, &b, 4);
                }
            }
            ((float *)out)[i] = v;
            break;
        }
        case TSF_DOUBLE: {
            double v = (double)k / 100.0;
            if (prof == PROFILE_EDGE) {
                const double edge[] = {NAN, INFINITY, -INFINITY, -0.0, 1.7976931348623157e308, 5e-324, 0.0};
                if (i < 7) v = edge[i];
                if (r % 13 == 0) {
                    uint64_t b = r;
                    if ((b & ~(1ull << 63)) > 0x7ff0000000000000ull) b = 0x7ff8000000000000ull;
                    memcpy(&v, &b, 8);
                }
            }
            ((double *)out)[i] = v;
            break;
        }
        default: { /* byte strings: empty, long, non-ASCII, repeats */
            tsf_bytes *b = (tsf_bytes *)out;
            size_t off = (size_t)(r % 64), len = (size_t)((r >> 8) % 24);
            if (i % 9 == 0) len = 0;
            if (i % 17 == 3) off = 100, len = 3000;
            if (i % 5 == 1) off = 3200, len = 9; /* a repeated value */
            b[i].data = text_pool + off;
            b[i].len = len;
            break;
        }
        }
    }
}

/* Expected decoded value i under the profile; returns 0 if it is not compared. */
static int same(tsf_type t, int prof, const void *in, const void *out, size_t i, int32_t prec)
{
    double scale = prec > 0 ? pow(10.0, prec) : 1.0;
    switch (t) {
    case TSF_BOOLEAN:
        return ((const uint8_t *)out)[i] == (((const uint8_t *)in)[i] != 0);
    case TSF_FLOAT: {
        float want = ((const float *)in)[i];
        if (prof == PROFILE_LOSSY) return 1;
        if (prof == PROFILE_PREC)
            want = (float)((double)(int32_t)tsf_java_round((double)want * scale) / scale);
        return !memcmp(&want, (const float *)out + i, 4);
    }
    case TSF_DOUBLE: {
        double want = ((const double *)in)[i];
        if (prof == PROFILE_LOSSY) return 1;
        if (prof == PROFILE_PREC) want = (double)tsf_java_round(want * scale) / scale;
        return !memcmp(&want, (const double *)out + i, 8);
    }
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB: {
        const tsf_bytes *a = (const tsf_bytes *)in + i, *b = (const tsf_bytes *)out + i;
        return a->len == b->len && (a->len == 0 || !memcmp(a->data, b->data, a->len));
    }
    default:
        return !memcmp((const uint8_t *)in + i * tsf_type_size(t), (const uint8_t *)out + i * tsf_type_size(t),
                       tsf_type_size(t));
    }
}

static void roundtrip(tsf_codec *c, tsf_type t, tsf_encoding e, size_t n, uint64_t seed, int *skipped)
{
    int prof = profile(t, e);
    size_t es = tsf_type_size(t);
    void *in = malloc(n * es + 1), *out = malloc(n * es + 1);
    gen(t, prof, n, in, seed);
    size_t var = 0;
    if (es == sizeof(tsf_bytes))
        for (size_t i = 0; i < n; i++) var += ((tsf_bytes *)in)[i].len;
    size_t bound = tsf_codec_encode_bound(t, e, n, var);
    uint8_t *buf = malloc(bound + 1);
    size_t w = 0, used = 0, cnt = 0;
    tsf_error err;
    tsf_status s = tsf_codec_encode(c, t, e, in, n, buf, bound, &w, &err);
    if (s == TSF_ENOTSUP && (t == TSF_FLOAT || t == TSF_DOUBLE)) {
        *skipped = 1; /* the precision wrapper behind RLE has not landed yet */
        goto done;
    }
    if (s != TSF_OK)
        fprintf(stderr, "  %s/%s n=%zu path=%s\n", tsf_type_name(t), tsf_encoding_name(e), n,
                tsf_codec_path_name(tsf_codec_get_path(c)));
    CHECK_OK(s, &err);
    CHECK(w <= bound);
    if (s != TSF_OK) goto done;
    uint8_t *exact = malloc(w + 1);
    memcpy(exact, buf, w);
    s = tsf_codec_decode(c, t, e, exact, w, out, n, &used, &err);
    CHECK_OK(s, &err);
    if (s == TSF_OK) {
        if (n) CHECK_EQ_INT(used, w);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += !same(t, prof, in, out, i, 2);
        if (bad)
            fprintf(stderr, "  %s/%s n=%zu path=%s: %zu values differ\n", tsf_type_name(t),
                    tsf_encoding_name(e), n, tsf_codec_path_name(tsf_codec_get_path(c)), bad);
        CHECK_EQ_INT(bad, 0);
    }
    s = tsf_codec_count(t, e, exact, w, &cnt, &err);
    CHECK(s == TSF_OK || s == TSF_ENOTSUP);
    if (s == TSF_OK) CHECK_EQ_INT(cnt, n);
    /* a dst smaller than the output (or than the bound, for this suite's codecs) is refused */
    if (n > 0 && w > 0) {
        size_t w2 = 0;
        CHECK_EQ_INT(tsf_codec_encode(c, t, e, in, n, buf, w - 1, &w2, &err), TSF_ERANGE);
        if (mine(e)) CHECK_EQ_INT(tsf_codec_encode(c, t, e, in, n, buf, bound - 1, &w2, &err), TSF_ERANGE);
    }
    free(exact);
done:
    free(buf);
    free(in);
    free(out);
}

static void test_roundtrips(void)
{
    for (size_t i = 0; i < sizeof text_pool; i++) text_pool[i] = (uint8_t)(i % 7 == 0 ? 0xc3 : 'a' + i % 26);
    const size_t sizes[] = {0, 1, 2, 7, 8, 9, 128, 129, 130, 1000};
    int skipped_prec = 0, covered = 0;
    for (int p = TSF_PATH_PER_VALUE; p <= TSF_PATH_NEON; p++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.path = (tsf_codec_path)p;
        tsf_codec *c = NULL;
        tsf_error err;
        CHECK_OK(tsf_codec_open(&c, &o, &err), &err);
        for (int t = 0; t < NTYPES; t++) {
            for (int e = 0; e < NENCS; e++) {
                if (!legal((tsf_type)t, (tsf_encoding)e) ||
                    !tsf_codec_can_encode((tsf_type)t, (tsf_encoding)e))
                    continue;
                covered++;
                for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
                    roundtrip(c, (tsf_type)t, (tsf_encoding)e, sizes[k],
                              1000u * (unsigned)t + (unsigned)e + k, &skipped_prec);
            }
        }
        tsf_codec_close(c);
    }
    fprintf(stderr, "  (type, encoding, path) combinations round-tripped: %d\n", covered);
    CHECK(covered >= 6 * (10 + 2 + 5 + 4)); /* at least PLAIN, DICTIONARY, RLE (ints/bool), ZIGZAG */
    if (skipped_prec) fprintf(stderr, "  note: FLOAT/DOUBLE RLE skipped (precision wrapper not built yet)\n");
}

/* ---- golden pages -------------------------------------------------------------------------- */

static uint32_t uv(const uint8_t *f, size_t len, size_t *pos, int *bad)
{
    uint32_t v = 0;
    for (unsigned sh = 0; sh < 35; sh += 7) {
        if (*pos >= len) break;
        uint8_t b = f[(*pos)++];
        v |= (uint32_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) return v;
    }
    *bad = 1;
    return 0;
}

static size_t be32(const uint8_t *p)
{
    return ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
}

/* Bytes of a page header's statistics after the count (container spec §7). */
static size_t stats_size(int type, const uint8_t *p)
{
    size_t n = 16, k = 0;
    switch (type) {
    case TSF_BOOLEAN:
        return n + 10;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_FLOAT:
        return n + 24;
    case TSF_INT64:
    case TSF_TIMESTAMP:
    case TSF_DOUBLE:
        return n + 40;
    case TSF_TEXT:
        k = 2;
        break;
    case TSF_STRING:
        k = 4;
        break;
    default:
        return n;
    }
    for (size_t i = 0; i < k; i++) n += 4 + be32(p + n);
    return n;
}

typedef struct golden_stats {
    int pages[NENCS];
} golden_stats;

/* Decodes and re-encodes one page's value stream; the bytes must come back unchanged. */
static void golden_page(tsf_codec *c, const char *file, int type, int enc, const uint8_t *v, size_t vlen,
                        long stat_count, golden_stats *gs)
{
    tsf_error err;
    size_t n = 0;
    CHECK_OK(tsf_codec_count((tsf_type)type, (tsf_encoding)enc, v, vlen, &n, &err), &err);
    if (stat_count >= 0 && (long)n != stat_count)
        fprintf(stderr, "  %s: count %zu vs %ld\n", file, n, stat_count);
    if (stat_count >= 0) CHECK_EQ_INT(n, stat_count);
    size_t es = tsf_type_size((tsf_type)type), used = 0, var = 0, w = 0;
    void *vals = malloc(n * es + 1);
    tsf_status s = tsf_codec_decode(c, (tsf_type)type, (tsf_encoding)enc, v, vlen, vals, n, &used, &err);
    CHECK_OK(s, &err);
    if (s == TSF_OK) {
        CHECK_EQ_INT(used, vlen);
        if (es == sizeof(tsf_bytes))
            for (size_t i = 0; i < n; i++) var += ((tsf_bytes *)vals)[i].len;
        size_t cap = tsf_codec_encode_bound((tsf_type)type, (tsf_encoding)enc, n, var);
        uint8_t *re = malloc(cap + 1);
        CHECK_OK(tsf_codec_encode(c, (tsf_type)type, (tsf_encoding)enc, vals, n, re, cap, &w, &err), &err);
        if (w != vlen || memcmp(re, v, vlen))
            fprintf(stderr, "  %s: %s %s page re-encodes differently (%zu vs %zu bytes)\n", file,
                    tsf_type_name((tsf_type)type), tsf_encoding_name((tsf_encoding)enc), w, vlen);
        CHECK_EQ_INT(w, vlen);
        if (w == vlen) CHECK_MEM(re, v, vlen);
        free(re);
        gs->pages[enc]++;
    }
    free(vals);
}

/* Walks a TsFile's data area (container spec §3-§6) and checks the pages this suite owns. */
static void golden_file(tsf_codec *c, const char *name, const uint8_t *f, size_t len, golden_stats *gs)
{
    size_t pos = 7;
    int bad = 0;
    while (pos < len && !bad) {
        uint8_t m = f[pos++];
        if (m == 0x02) break;
        if (m == 0x00) { /* chunk group header: device id segments */
            uint32_t segs = uv(f, len, &pos, &bad);
            for (uint32_t i = 0; i < segs && !bad; i++) {
                int32_t l = tsf_unzigzag32(uv(f, len, &pos, &bad));
                if (l > 0) pos += (size_t)l;
            }
            continue;
        }
        if (m == 0x04) {
            pos += 16;
            continue;
        }
        if ((m & 0x3f) != 1 && (m & 0x3f) != 5) {
            fprintf(stderr, "  %s: unknown marker %02x at %zu\n", name, m, pos - 1);
            CHECK(0);
            return;
        }
        pos += uv(f, len, &pos, &bad) / 2; /* measurement id */
        size_t size = uv(f, len, &pos, &bad);
        if (bad || pos + 3 + size > len) break;
        int type = f[pos], comp = f[pos + 1], enc = f[pos + 2];
        pos += 3;
        size_t end = pos + size;
        int wanted = (m & 0xc0) == 0 && comp == TSF_UNCOMPRESSED && mine((tsf_encoding)enc) &&
                     !(enc == TSF_ENC_RLE && (type == TSF_FLOAT || type == TSF_DOUBLE));
        while (wanted && pos < end && !bad) {
            size_t usize = uv(f, len, &pos, &bad);
            if (usize == 0) continue;
            size_t csize = uv(f, len, &pos, &bad);
            long count = -1;
            if ((m & 0x3f) == 1) {
                count = (long)uv(f, len, &pos, &bad);
                pos += stats_size(type, f + pos);
            }
            size_t body = pos, tpos = pos;
            size_t tlen = uv(f, len, &tpos, &bad);
            tpos += tlen;
            if (bad || csize != usize || tpos > body + usize) break;
            golden_page(c, name, type, enc, f + tpos, body + usize - tpos, count, gs);
            pos = body + csize;
        }
        pos = end;
    }
    CHECK(!bad);
}

static void test_golden_reencode(void)
{
    const char *dir = tsf_test_data_dir();
    char path[2048];
    snprintf(path, sizeof path, "%s/tsfile-java", dir);
    DIR *d = opendir(path);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    golden_stats gs;
    memset(&gs, 0, sizeof gs);
    struct dirent *de;
    for (int p = TSF_PATH_PER_VALUE; p <= TSF_PATH_SCALAR; p++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.path = (tsf_codec_path)p;
        tsf_codec *c = NULL;
        tsf_codec_open(&c, &o, NULL);
        rewinddir(d);
        while ((de = readdir(d)) != NULL) {
            size_t l = strlen(de->d_name);
            if (l < 8 || strcmp(de->d_name + l - 7, ".tsfile") != 0) continue;
            snprintf(path, sizeof path, "%s/tsfile-java/%s", dir, de->d_name);
            size_t flen = 0;
            uint8_t *f = tsf_test_read_file(path, &flen);
            if (!f) continue;
            if (flen > 13 && !memcmp(f, "TsFile", 6)) golden_file(c, de->d_name, f, flen, &gs);
            free(f);
        }
        tsf_codec_close(c);
    }
    closedir(d);
    fprintf(stderr, "  golden pages re-encoded: PLAIN %d, RLE %d, ZIGZAG %d, DICTIONARY %d\n", gs.pages[0],
            gs.pages[2], gs.pages[9], gs.pages[1]);
    CHECK(gs.pages[TSF_ENC_PLAIN] > 30);
    CHECK(gs.pages[TSF_ENC_RLE] > 15);
    CHECK(gs.pages[TSF_ENC_ZIGZAG] >= 12);
    CHECK(gs.pages[TSF_ENC_DICTIONARY] >= 6);
}

int main(void)
{
    TSF_RUN(test_table);
    TSF_RUN(test_null_args);
    TSF_RUN(test_roundtrips);
    TSF_RUN(test_golden_reencode);
    return tsf_test_finish();
}
