/*
 * Tests of src/compress (spec: tsfile-encodings.md §13, container §5.2/§6.2): round trips of every
 * codec, the exact on-disk framing of each, exact-size decompression, hostile input, the reusable
 * handle with allocator hooks, and the first page of the Java golden files in every compression.
 */
#include <stdlib.h>

#include <zlib.h>

#include "test.h"

static const tsf_compression CODECS[] = {TSF_UNCOMPRESSED, TSF_SNAPPY, TSF_GZIP,
                                         TSF_LZ4,          TSF_ZSTD,   TSF_LZMA2};
#define NCODECS (sizeof CODECS / sizeof CODECS[0])

static uint8_t *make_input(int kind, size_t n, uint64_t seed)
{
    uint8_t *b = malloc(n ? n : 1);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0:
            b[i] = (uint8_t)tsf_test_rand(&s);
            break; /* random */
        case 1:
            b[i] = (uint8_t)("timeseries"[i % 10] + (i / 4096) % 3);
            break; /* highly compressible */
        default:   /* mixed: runs, counters, noise */
            b[i] = (i / 1000) % 3 == 0 ? (uint8_t)tsf_test_rand(&s) : (uint8_t)(i / 7);
            break;
        }
    }
    return b;
}

/* Compresses with the context-free call or a handle; returns the malloc'd stream. */
static uint8_t *pack(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n, size_t *len)
{
    tsf_error err = {0};
    size_t cap = tsf_compress_bound(c, n);
    uint8_t *dst = malloc(cap ? cap : 1);
    *len = 0;
    tsf_status s = h ? tsf_compressor_compress(h, c, src, n, dst, cap, len, &err)
                     : tsf_compress(c, src, n, dst, cap, len, &err);
    CHECK_OK(s, &err);
    CHECK(*len <= cap);
    return dst;
}

static void roundtrip(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n)
{
    tsf_error err = {0};
    size_t len;
    uint8_t *z = pack(h, c, src, n, &len);
    uint8_t *out = malloc(n + 1);
    out[n] = 0xA5; /* canary */
    tsf_status s =
        h ? tsf_compressor_decompress(h, c, z, len, out, n, &err) : tsf_decompress(c, z, len, out, n, &err);
    CHECK_OK(s, &err);
    if (s == TSF_OK) CHECK_MEM(out, src, n);
    CHECK_EQ_INT(out[n], 0xA5);
    if (s != TSF_OK) fprintf(stderr, "  codec %s, n=%zu\n", tsf_compression_name(c), n);
    free(out);
    free(z);
}

static void test_supported_and_bound(void)
{
    for (size_t i = 0; i < NCODECS; i++) {
        CHECK(tsf_compression_supported(CODECS[i]));
        CHECK(tsf_compress_bound(CODECS[i], 0) >= 1 || CODECS[i] == TSF_UNCOMPRESSED);
        CHECK(tsf_compress_bound(CODECS[i], 1 << 20) >= 1 << 20);
    }
    CHECK(!tsf_compression_supported(TSF_LZO));
    CHECK(!tsf_compression_supported((tsf_compression)4));
    CHECK(!tsf_compression_supported((tsf_compression)42));
    CHECK_EQ_INT(tsf_compress_bound(TSF_LZO, 10), 0);
    CHECK_EQ_INT(tsf_compress_bound(TSF_GZIP, SIZE_MAX), 0);
    uint8_t b[4] = {1, 2, 3, 4}, o[64];
    size_t w = 99;
    tsf_error err = {0};
    CHECK_EQ_INT(tsf_compress(TSF_LZO, b, 4, o, sizeof o, &w, &err), TSF_ENOTSUP);
    CHECK(strstr(err.message, "LZO") != NULL);
    CHECK_EQ_INT(tsf_decompress((tsf_compression)5, b, 4, o, 4, &err), TSF_ENOTSUP);
    CHECK_EQ_INT(tsf_compress(TSF_LZ4, b, 4, o, sizeof o, NULL, &err), TSF_EINVAL);
}

static void test_roundtrip_all(void)
{
    static const size_t sizes[] = {0, 1, 2, 13, 1000, 65536, 1 << 20};
    tsf_compressor *h = NULL;
    tsf_error err = {0};
    CHECK_OK(tsf_compressor_open(&h, NULL, &err), &err);
    for (size_t ci = 0; ci < NCODECS; ci++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int kind = 0; kind < 3; kind++) {
                size_t n = sizes[si];
                if (n == (1u << 20) && kind == 0 && CODECS[ci] == TSF_LZMA2)
                    continue; /* slow, adds nothing */
                uint8_t *src = make_input(kind, n, 77 + n);
                roundtrip(NULL, CODECS[ci], src, n);
                roundtrip(h, CODECS[ci], src, n);
                free(src);
            }
    tsf_compressor_close(h);
}

/* Compression must actually compress: 1 MiB of a repeating pattern shrinks by far. */
static void test_ratio(void)
{
    size_t n = 1 << 20;
    uint8_t *src = make_input(1, n, 1);
    for (size_t ci = 1; ci < NCODECS; ci++) {
        size_t len;
        uint8_t *z = pack(NULL, CODECS[ci], src, n, &len);
        if (len >= n / 20) fprintf(stderr, "  %s: %zu bytes\n", tsf_compression_name(CODECS[ci]), len);
        CHECK(len < n / 20);
        free(z);
    }
    free(src);
}

static void test_wrong_dst_len(void)
{
    size_t n = 3000;
    uint8_t *src = make_input(2, n, 5);
    for (size_t ci = 0; ci < NCODECS; ci++) {
        tsf_compression c = CODECS[ci];
        size_t len;
        uint8_t *z = pack(NULL, c, src, n, &len);
        size_t wrong[] = {0, 1, n - 1, n + 1, 2 * n};
        for (size_t k = 0; k < sizeof wrong / sizeof wrong[0]; k++) {
            size_t dl = wrong[k];
            uint8_t *out = malloc(dl + 64);
            memset(out + dl, 0xA5, 64);
            tsf_error err = {0};
            tsf_status s = tsf_decompress(c, z, len, out, dl, &err);
            CHECK_EQ_INT(s, TSF_ECORRUPT);
            CHECK_EQ_INT(err.code, TSF_ECORRUPT);
            CHECK(strstr(err.message, tsf_compression_name(c)) != NULL);
            for (int g = 0; g < 64; g++) CHECK_EQ_INT(out[dl + g], 0xA5);
            free(out);
        }
        free(z);
    }
    free(src);
}

static void test_truncated_and_garbage(void)
{
    size_t n = 5000;
    uint8_t *src = make_input(2, n, 9);
    uint8_t *out = malloc(n);
    for (size_t ci = 1; ci < NCODECS; ci++) {
        tsf_compression c = CODECS[ci];
        size_t len;
        uint8_t *z = pack(NULL, c, src, n, &len);
        size_t cuts[] = {0, 1, 4, len / 2, len - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            tsf_error err = {0};
            CHECK_EQ_INT(tsf_decompress(c, z, cuts[k], out, n, &err), TSF_ECORRUPT);
            CHECK(strstr(err.message, tsf_compression_name(c)) != NULL);
        }
        /* garbage */
        uint64_t s = 1234 + ci;
        uint8_t garbage[512];
        for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (uint8_t)tsf_test_rand(&s);
        tsf_error err = {0};
        CHECK_EQ_INT(tsf_decompress(c, garbage, sizeof garbage, out, n, &err), TSF_ECORRUPT);
        CHECK(err.message[0] != 0);
        /* CRC-protected containers must notice a flipped payload byte */
        if (c == TSF_GZIP || c == TSF_LZMA2) {
            z[len / 2] ^= 0x10;
            CHECK_EQ_INT(tsf_decompress(c, z, len, out, n, &err), TSF_ECORRUPT);
        }
        free(z);
    }
    uint8_t two[2] = {1, 2};
    CHECK_EQ_INT(tsf_decompress(TSF_UNCOMPRESSED, two, 2, out, 3, NULL), TSF_ECORRUPT);
    free(out);
    free(src);
}

/* Random and mutated streams with random claimed sizes: never a crash, only OK or ECORRUPT. */
static void test_hostile(void)
{
    uint64_t s = 99;
    uint8_t *out = malloc(8192);
    for (size_t ci = 1; ci < NCODECS; ci++) {
        tsf_compression c = CODECS[ci];
        size_t n = 2048;
        uint8_t *src = make_input(2, n, 3);
        size_t len;
        uint8_t *z = pack(NULL, c, src, n, &len);
        int ok = 0, bad = 0;
        for (int it = 0; it < 300; it++) {
            uint8_t *m = malloc(len);
            memcpy(m, z, len);
            int flips = 1 + (int)(tsf_test_rand(&s) % 4);
            for (int f = 0; f < flips; f++)
                m[tsf_test_rand(&s) % len] ^= (uint8_t)(1 + tsf_test_rand(&s) % 255);
            size_t ml = len - (size_t)(tsf_test_rand(&s) % 3 == 0 ? tsf_test_rand(&s) % len : 0);
            size_t dl = tsf_test_rand(&s) % 2 ? n : (size_t)(tsf_test_rand(&s) % 8192);
            tsf_status st = tsf_decompress(c, m, ml, out, dl, NULL);
            CHECK(st == TSF_OK || st == TSF_ECORRUPT);
            if (st == TSF_OK)
                ok++;
            else
                bad++;
            free(m);
        }
        CHECK(bad > 0);
        free(z);
        free(src);
    }
    free(out);
}

static size_t read_uvarint(const uint8_t *b, size_t len, size_t *pos)
{
    size_t v = 0;
    for (int shift = 0; *pos < len && shift < 35; shift += 7) {
        uint8_t x = b[(*pos)++];
        v |= (size_t)(x & 0x7f) << shift;
        if (!(x & 0x80)) break;
    }
    return v;
}

static void test_framing(void)
{
    tsf_error err = {0};
    size_t n = 4000, len;
    uint8_t *src = make_input(2, n, 11);

    /* GZIP: a complete member with the header Java writes, CRC32 and ISIZE trailer (RFC 1952) */
    uint8_t *z = pack(NULL, TSF_GZIP, src, n, &len);
    const uint8_t gz_head[10] = {0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff};
    CHECK_MEM(z, gz_head, 10);
    uLong crc = crc32(0L, src, (uInt)n);
    CHECK_EQ_INT(z[len - 8] | z[len - 7] << 8 | z[len - 6] << 16 | (uint32_t)z[len - 5] << 24, crc);
    CHECK_EQ_INT(z[len - 4] | z[len - 3] << 8 | z[len - 2] << 16 | (uint32_t)z[len - 1] << 24, n);
    free(z);

    /* ZSTD: magic, then a frame header whose content size field is present and equals n */
    z = pack(NULL, TSF_ZSTD, src, n, &len);
    const uint8_t zmagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    CHECK_MEM(z, zmagic, 4);
    uint8_t fhd = z[4];
    int fcs_flag = fhd >> 6, single = (fhd >> 5) & 1, did = fhd & 3;
    size_t p = 5 + (single ? 0 : 1) + (did == 0 ? 0 : did == 1 ? 1 : did == 2 ? 2 : 4);
    CHECK(fcs_flag != 0 || single); /* content size present */
    uint64_t fcs = 0;
    if (fcs_flag == 0)
        fcs = z[p];
    else if (fcs_flag == 1)
        fcs = (uint64_t)(z[p] | z[p + 1] << 8) + 256;
    else if (fcs_flag == 2)
        fcs = (uint64_t)z[p] | z[p + 1] << 8 | z[p + 2] << 16 | (uint64_t)z[p + 3] << 24;
    CHECK_EQ_INT(fcs, n);
    CHECK_EQ_INT(fhd & 4, 0); /* no checksum flag, as ZSTD_compress writes */
    free(z);

    /* LZMA2: .xz stream header, CRC64 check type (4) in header and footer flags, footer magic "YZ" */
    z = pack(NULL, TSF_LZMA2, src, n, &len);
    const uint8_t xz_head[8] = {0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04};
    CHECK_MEM(z, xz_head, 8);
    CHECK_EQ_INT(z[len - 4], 0x00);
    CHECK_EQ_INT(z[len - 3], 0x04);
    CHECK_EQ_INT(z[len - 2], 0x59);
    CHECK_EQ_INT(z[len - 1], 0x5a);
    CHECK_EQ_INT(z[12], 0x02); /* block header: size byte, then flags 0 (one filter) */
    free(z);

    /* SNAPPY: the preamble is the varint uncompressed length, no framing around it */
    z = pack(NULL, TSF_SNAPPY, src, n, &len);
    size_t pos = 0;
    CHECK_EQ_INT(read_uvarint(z, len, &pos), n);
    CHECK_EQ_INT(pos, 2);
    free(z);
    const uint8_t abc_snappy[] = {0x03, 0x08, 'a', 'b', 'c'};
    z = pack(NULL, TSF_SNAPPY, (const uint8_t *)"abc", 3, &len);
    CHECK_EQ_INT(len, sizeof abc_snappy);
    CHECK_MEM(z, abc_snappy, sizeof abc_snappy);
    free(z);

    /* LZ4: a raw block (no frame magic 04 22 4d 18, no size prefix): "abc" is token 0x30 + literals */
    const uint8_t abc_lz4[] = {0x30, 'a', 'b', 'c'};
    z = pack(NULL, TSF_LZ4, (const uint8_t *)"abc", 3, &len);
    CHECK_EQ_INT(len, sizeof abc_lz4);
    CHECK_MEM(z, abc_lz4, sizeof abc_lz4);
    free(z);

    /* compressing into a too small buffer is TSF_ERANGE for every codec */
    for (size_t ci = 0; ci < NCODECS; ci++) {
        uint8_t small[8];
        size_t w = 0;
        tsf_status s = tsf_compress(CODECS[ci], src, n, small, sizeof small, &w, &err);
        CHECK_EQ_INT(s, TSF_ERANGE);
    }
    free(src);
}

/* Java's readers accept concatenated gzip members (and ignore non-gzip trailing bytes) and
 * concatenated .xz streams with stream padding; so do we. zstd frames concatenate by format. */
static void test_concatenated(void)
{
    size_t na = 700, nb = 1300, la, lb;
    uint8_t *a = make_input(2, na, 1), *b = make_input(0, nb, 2);
    uint8_t *ab = malloc(na + nb);
    memcpy(ab, a, na);
    memcpy(ab + na, b, nb);
    uint8_t *out = malloc(na + nb);
    tsf_compression cs[] = {TSF_GZIP, TSF_LZMA2, TSF_ZSTD};
    for (size_t k = 0; k < 3; k++) {
        uint8_t *za = pack(NULL, cs[k], a, na, &la), *zb = pack(NULL, cs[k], b, nb, &lb);
        uint8_t *cat = malloc(la + lb + 8);
        memcpy(cat, za, la);
        size_t cl = la;
        if (cs[k] == TSF_LZMA2) {
            memset(cat + cl, 0, 4); /* stream padding */
            cl += 4;
        }
        memcpy(cat + cl, zb, lb);
        cl += lb;
        tsf_error err = {0};
        CHECK_OK(tsf_decompress(cs[k], cat, cl, out, na + nb, &err), &err);
        CHECK_MEM(out, ab, na + nb);
        /* the first member/stream alone is shorter than the claimed size */
        CHECK_EQ_INT(tsf_decompress(cs[k], cat, la, out, na + nb, &err), TSF_ECORRUPT);
        if (cs[k] == TSF_GZIP) {
            memcpy(cat + la, "xyz", 3); /* non-gzip trailing bytes are ignored, as GZIPInputStream does */
            CHECK_OK(tsf_decompress(cs[k], cat, la + 3, out, na, &err), &err);
            CHECK_MEM(out, a, na);
        }
        free(cat);
        free(za);
        free(zb);
    }
    free(out);
    free(ab);
    free(a);
    free(b);
}

/* Counting allocator: the handle routes zlib and liblzma allocations through the hooks. */
static long live_allocs, total_allocs;
static void *count_alloc(void *ud, size_t size)
{
    (void)ud;
    live_allocs++;
    total_allocs++;
    return malloc(size);
}
static void count_free(void *ud, void *p, size_t size)
{
    (void)ud;
    (void)size;
    live_allocs--;
    free(p);
}

static void test_handle_allocator(void)
{
    tsf_allocator a = {count_alloc, NULL, count_free, NULL};
    tsf_compressor *h = NULL;
    tsf_error err = {0};
    live_allocs = total_allocs = 0;
    CHECK_OK(tsf_compressor_open(&h, &a, &err), &err);
    uint8_t *src = make_input(2, 20000, 4);
    for (int round = 0; round < 2; round++)
        for (size_t ci = 0; ci < NCODECS; ci++) roundtrip(h, CODECS[ci], src, 20000 - 1000 * (size_t)round);
    long after_gzip_xz = total_allocs;
    CHECK(after_gzip_xz > 3); /* handle + zlib + liblzma state */
    /* errors leave the handle usable */
    uint8_t junk[100] = {0x1f, 0x8b, 8};
    uint8_t out[100];
    for (size_t ci = 1; ci < NCODECS; ci++)
        CHECK_EQ_INT(tsf_compressor_decompress(h, CODECS[ci], junk, 100, out, 100, &err), TSF_ECORRUPT);
    roundtrip(h, TSF_GZIP, src, 5000);
    roundtrip(h, TSF_LZMA2, src, 5000);
    tsf_compressor_close(h);
    CHECK_EQ_INT(live_allocs, 0);
    CHECK_EQ_INT(tsf_compressor_decompress(NULL, TSF_GZIP, junk, 100, out, 100, &err), TSF_EINVAL);
    free(src);
}

/* ---- golden files: the first page of root.sg1.d1.s_bool in every compression --------------------- */

/* Locates the first page body of the file: head (7), chunk group header 0x00 + device id (§4.1), chunk
 * header (§5), page header (§6.1) with BOOLEAN statistics when the chunk has several pages (§7). */
static int first_page(const uint8_t *f, size_t len, int *comp, const uint8_t **body, size_t *clen,
                      size_t *ulen)
{
    size_t p = 7;
    if (len < 32 || memcmp(f, "TsFile", 6) != 0 || f[6] != 4 || f[p++] != 0x00) return 0;
    size_t segs = read_uvarint(f, len, &p);
    for (size_t i = 0; i < segs; i++) {
        size_t zz = read_uvarint(f, len, &p);
        if (zz & 1) continue; /* null segment */
        p += zz >> 1;
    }
    if (p >= len) return 0;
    uint8_t marker = f[p++];
    size_t mlen = read_uvarint(f, len, &p) >> 1;
    if (p + mlen > len || mlen != 6 || memcmp(f + p, "s_bool", 6) != 0) return 0;
    p += mlen;
    read_uvarint(f, len, &p); /* dataSize */
    if (p + 3 > len || f[p] != TSF_BOOLEAN) return 0;
    *comp = f[p + 1];
    p += 3;
    *ulen = read_uvarint(f, len, &p);
    *clen = read_uvarint(f, len, &p);
    if ((marker & 0x3f) == 0x01) {
        read_uvarint(f, len, &p); /* count */
        p += 16 + 10;             /* start/end time; first, last, sum */
    }
    if (p + *clen > len) return 0;
    *body = f + p;
    return 1;
}

static void test_golden_first_pages(void)
{
    const char *dir = tsf_test_data_dir();
    static const char *names[] = {"uncompressed", "snappy", "gzip", "lz4", "zstd", "lzma2"};
    static const tsf_compression want[] = {TSF_UNCOMPRESSED, TSF_SNAPPY, TSF_GZIP,
                                           TSF_LZ4,          TSF_ZSTD,   TSF_LZMA2};
    uint8_t ref[164], page[164];
    int have_ref = 0, found = 0;
    tsf_compressor *h = NULL;
    CHECK_OK(tsf_compressor_open(&h, NULL, NULL), (tsf_error *)NULL);
    for (size_t i = 0; i < 6; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tsfile-java/tree_nonaligned_mixed_%s.tsfile", dir, names[i]);
        size_t len;
        uint8_t *f = tsf_test_read_file(path, &len);
        if (!f) continue;
        found++;
        int comp = -1;
        const uint8_t *body = NULL;
        size_t clen = 0, ulen = 0;
        CHECK(first_page(f, len, &comp, &body, &clen, &ulen));
        CHECK_EQ_INT(comp, want[i]);
        CHECK_EQ_INT(ulen, 164);
        if (comp != (int)want[i] || ulen != 164 || !body) {
            free(f);
            continue;
        }
        tsf_error err = {0};
        CHECK_OK(tsf_decompress(want[i], body, clen, page, 164, &err), &err);
        uint8_t again[164];
        CHECK_OK(tsf_compressor_decompress(h, want[i], body, clen, again, 164, &err), &err);
        CHECK_MEM(again, page, 164);
        if (want[i] == TSF_GZIP) { /* same header bytes as the JDK writer */
            size_t zl;
            uint8_t *ours = pack(NULL, TSF_GZIP, page, 164, &zl);
            CHECK_MEM(ours, body, 10);
            free(ours);
        }
        if (!have_ref) {
            memcpy(ref, page, 164);
            have_ref = 1;
        } else {
            if (memcmp(page, ref, 164) != 0) fprintf(stderr, "  %s differs from %s\n", names[i], names[0]);
            CHECK_MEM(page, ref, 164);
        }
        CHECK_EQ_INT(tsf_decompress(want[i], body, clen, again, 163, NULL), TSF_ECORRUPT);
        free(f);
    }
    tsf_compressor_close(h);
    CHECK_EQ_INT(found, 6);
}

int main(void)
{
    TSF_RUN(test_supported_and_bound);
    TSF_RUN(test_roundtrip_all);
    TSF_RUN(test_ratio);
    TSF_RUN(test_wrong_dst_len);
    TSF_RUN(test_truncated_and_garbage);
    TSF_RUN(test_hostile);
    TSF_RUN(test_framing);
    TSF_RUN(test_concatenated);
    TSF_RUN(test_handle_allocator);
    TSF_RUN(test_golden_first_pages);
    return tsf_test_finish();
}
