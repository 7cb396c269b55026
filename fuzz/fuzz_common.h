/*
 * fuzz_common.h - shared pieces of the libFuzzer harnesses (doc/fuzzing.md). Each *_fuzzer.c is a
 * one-line LLVMFuzzerTestOneInput calling one of the harness bodies below; ctest replays the committed
 * corpora through fuzz/standalone_driver.c, libFuzzer mutates them when built with clang.
 *
 * Input layouts (fuzz/gen_corpus.c writes seeds in exactly these layouts):
 *   decode_<enc>:     [type selector u8][value count u16 LE, mod 4097][encoded stream ...]
 *   roundtrip_<enc>:  [type selector u8][values ...] fixed-width types: raw little-endian values
 *                     (count = bytes / width, at most 4096); TEXT/STRING/BLOB: [len u8][bytes]...
 *   decompress:       [codec selector u8][claimed size u32 LE, mod 1 MiB + 1][compressed bytes ...]
 *   compress_roundtrip: [codec selector u8][bytes to compress ...]
 * The type selector indexes the types the encoding can decode (resp. encode), in FZ_TYPES order;
 * while an encoding has no implementation, every type is tried and TSF_ENOTSUP must come back.
 *
 * Oracles (a failure calls __builtin_trap(), which both libFuzzer and the replay driver report):
 *  - decode: every implementation path (per_value, scalar, sse41, avx2, avx512, neon as the CPU
 *    allows) returns the same status, the same consumed count and the same values, bit for bit;
 *    statuses other than OK / ECORRUPT / ENOTSUP are bugs; borrowed byte strings lie inside src.
 *  - round trip: encode succeeds into tsf_codec_encode_bound bytes, every path writes identical
 *    bytes, decoding gives back the values (lossy forms: see fz_roundtrip_harness).
 * The static tables of open codec handles below are harness state, not library state.
 */
#ifndef TSF_FUZZ_COMMON_H
#define TSF_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsf.h"

#include "fuzz_entry.h"

#define FZ_MAX_VALUES 4096
#define FZ_MAX_DECOMPRESSED (1u << 20)

#define FZ_CHECK(cond)                                                                                       \
    do {                                                                                                     \
        if (!(cond)) __builtin_trap();                                                                       \
    } while (0)

/* ---- a tiny data producer ------------------------------------------------------------------------- */

typedef struct fz_reader {
    const uint8_t *p;
    size_t n;
} fz_reader;

static inline uint8_t fz_u8(fz_reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static inline uint32_t fz_u16(fz_reader *r)
{
    uint32_t lo = fz_u8(r);
    return lo | (uint32_t)fz_u8(r) << 8;
}

static inline uint32_t fz_u32(fz_reader *r)
{
    uint32_t lo = fz_u16(r);
    return lo | fz_u16(r) << 16;
}

/* ---- types ---------------------------------------------------------------------------------------- */

static const tsf_type FZ_TYPES[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64,     TSF_FLOAT, TSF_DOUBLE,
                                    TSF_TEXT,    TSF_DATE,  TSF_TIMESTAMP, TSF_BLOB,  TSF_STRING};
#define FZ_NTYPES (sizeof FZ_TYPES / sizeof FZ_TYPES[0])

static inline int fz_is_binary(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* The types `enc` can decode (encode != 0: encode) in FZ_TYPES order; returns how many. */
static inline size_t fz_types_of(tsf_encoding enc, int encode, tsf_type *out)
{
    size_t k = 0;
    for (size_t i = 0; i < FZ_NTYPES; i++)
        if (encode ? tsf_codec_can_encode(FZ_TYPES[i], enc) : tsf_codec_can_decode(FZ_TYPES[i], enc))
            out[k++] = FZ_TYPES[i];
    return k;
}

/* Maps a selector byte to a type: among the legal ones, or any type while there are none. */
static inline tsf_type fz_pick_type(tsf_encoding enc, int encode, uint8_t sel, int *legal)
{
    tsf_type list[FZ_NTYPES];
    size_t k = fz_types_of(enc, encode, list);
    *legal = k > 0;
    return k ? list[sel % k] : FZ_TYPES[sel % FZ_NTYPES];
}

/* ---- codec handles, one per distinct implementation path ------------------------------------------ */

typedef struct fz_codecs {
    tsf_codec *c[8];
    size_t n;
} fz_codecs;

static inline const fz_codecs *fz_get_codecs(void)
{
    static fz_codecs set;
    static int ready;
    if (ready) return &set;
    static const tsf_codec_path paths[] = {TSF_PATH_PER_VALUE, TSF_PATH_SCALAR, TSF_PATH_SSE41,
                                           TSF_PATH_AVX2,      TSF_PATH_AVX512, TSF_PATH_NEON};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.path = paths[i];
        tsf_codec *c = NULL;
        FZ_CHECK(tsf_codec_open(&c, &o, NULL) == TSF_OK);
        int dup = 0;
        for (size_t j = 0; j < set.n; j++) dup |= tsf_codec_get_path(set.c[j]) == tsf_codec_get_path(c);
        if (dup)
            tsf_codec_close(c);
        else
            set.c[set.n++] = c;
    }
    ready = 1;
    return &set;
}

/* ---- value comparison ----------------------------------------------------------------------------- */

/* Bit-exact equality; nan_eq: additionally any NaN equals any NaN (Java canonicalises NaN bits). */
static inline int fz_values_equal(tsf_type t, const void *a, const void *b, size_t n, int nan_eq)
{
    if (fz_is_binary(t)) {
        const tsf_bytes *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].data, y[i].data, x[i].len) != 0)) return 0;
        return 1;
    }
    if (!nan_eq || (t != TSF_FLOAT && t != TSF_DOUBLE)) return memcmp(a, b, n * tsf_type_size(t)) == 0;
    for (size_t i = 0; i < n; i++) {
        if (t == TSF_FLOAT) {
            float x = ((const float *)a)[i], y = ((const float *)b)[i];
            if (isnan(x) && isnan(y)) continue;
            if (memcmp(&x, &y, sizeof x) != 0) return 0;
        } else {
            double x = ((const double *)a)[i], y = ((const double *)b)[i];
            if (isnan(x) && isnan(y)) continue;
            if (memcmp(&x, &y, sizeof x) != 0) return 0;
        }
    }
    return 1;
}

/* Borrowed byte strings must point into src[0..len). */
static inline void fz_check_borrowed(tsf_type t, const void *values, size_t n, const uint8_t *src, size_t len)
{
    if (!fz_is_binary(t)) return;
    const tsf_bytes *v = values;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].len) continue;
        FZ_CHECK(v[i].data >= src && v[i].len <= len && v[i].data <= src + (len - v[i].len));
    }
}

static inline int fz_status_ok_for_decode(tsf_status s)
{
    return s == TSF_OK || s == TSF_ECORRUPT || s == TSF_ENOTSUP || s == TSF_ENOMEM;
}

/* Decodes src with every path; traps unless all agree. Returns the common status. `out0` (n values)
 * receives path 0's values when non-NULL. */
static inline tsf_status fz_decode_all_paths(tsf_type t, tsf_encoding enc, const uint8_t *src, size_t len,
                                             size_t n, void *out0, size_t *consumed0)
{
    const fz_codecs *cs = fz_get_codecs();
    size_t w = tsf_type_size(t);
    void *first = calloc(n ? n : 1, w), *other = calloc(n ? n : 1, w);
    FZ_CHECK(first && other);
    tsf_status s0 = TSF_OK;
    size_t used0 = 0;
    for (size_t i = 0; i < cs->n; i++) {
        tsf_error err;
        size_t used = 0;
        void *dst = i == 0 ? first : other;
        memset(dst, 0, (n ? n : 1) * w);
        tsf_status s = tsf_codec_decode(cs->c[i], t, enc, src, len, dst, n, &used, &err);
        FZ_CHECK(fz_status_ok_for_decode(s));
        if (s == TSF_ECORRUPT) FZ_CHECK(err.code == TSF_ECORRUPT && err.message[0] != '\0');
        if (s == TSF_OK) {
            FZ_CHECK(used <= len);
            fz_check_borrowed(t, dst, n, src, len);
        }
        if (i == 0) {
            s0 = s;
            used0 = used;
            continue;
        }
        FZ_CHECK(s == s0);
        if (s == TSF_OK) {
            FZ_CHECK(used == used0);
            FZ_CHECK(fz_values_equal(t, first, dst, n, 0));
        }
    }
    if (out0 && s0 == TSF_OK && n) memcpy(out0, first, n * w);
    if (consumed0) *consumed0 = used0;
    free(first);
    free(other);
    return s0;
}

/* ---- harness bodies ------------------------------------------------------------------------------- */

static inline int fz_decode_harness(tsf_encoding enc, const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    int legal;
    tsf_type t = fz_pick_type(enc, 0, fz_u8(&r), &legal);
    size_t n = fz_u16(&r) % (FZ_MAX_VALUES + 1);
    /* an exact-size copy so that any over-read is caught by ASan */
    uint8_t *src = malloc(r.n ? r.n : 1);
    FZ_CHECK(src);
    if (r.n) memcpy(src, r.p, r.n);
    tsf_status s = fz_decode_all_paths(t, enc, src, r.n, n, NULL, NULL);
    if (!legal) FZ_CHECK(s == TSF_ENOTSUP);

    /* the value counter and the TS_2DIFF block walk parse the same streams */
    size_t cnt = 0;
    tsf_status cs = tsf_codec_count(t, enc, src, r.n, &cnt, NULL);
    FZ_CHECK(fz_status_ok_for_decode(cs));
    if (enc == TSF_ENC_TS_2DIFF && (t == TSF_INT64 || t == TSF_TIMESTAMP)) {
        tsf_ts2diff_block blocks[64];
        size_t nb = 0;
        tsf_status bs = tsf_ts2diff_blocks(src, r.n, blocks, 64, &nb, NULL);
        FZ_CHECK(fz_status_ok_for_decode(bs));
        if (bs == TSF_OK)
            for (size_t i = 0; i < nb && i < 64; i++) FZ_CHECK(blocks[i].offset < r.n || r.n == 0);
    }
    free(src);
    return 0;
}

/* Builds values of type t from the remaining input. Returns the count; *payload gets var bytes. */
static inline size_t fz_make_values(tsf_type t, fz_reader *r, void *values, size_t *payload)
{
    size_t n = 0;
    *payload = 0;
    if (fz_is_binary(t)) {
        tsf_bytes *v = values;
        while (r->n && n < FZ_MAX_VALUES) {
            size_t len = fz_u8(r);
            if (len > r->n) len = r->n;
            v[n].data = r->p;
            v[n].len = len;
            r->p += len;
            r->n -= len;
            *payload += len;
            n++;
        }
        return n;
    }
    size_t w = tsf_type_size(t);
    n = r->n / w;
    if (n > FZ_MAX_VALUES) n = FZ_MAX_VALUES;
    memcpy(values, r->p, n * w);
    if (t == TSF_BOOLEAN)
        for (size_t i = 0; i < n; i++) ((uint8_t *)values)[i] &= 1;
    r->p += n * w;
    r->n -= n * w;
    return n;
}

/* Encodes with every path (identical bytes required); returns the malloc'd stream of path 0. */
static inline uint8_t *fz_encode_all_paths(tsf_type t, tsf_encoding enc, const void *values, size_t n,
                                           size_t payload, size_t *written)
{
    const fz_codecs *cs = fz_get_codecs();
    size_t cap = tsf_codec_encode_bound(t, enc, n, payload);
    FZ_CHECK(cap > 0 || n == 0);
    uint8_t *first = malloc(cap ? cap : 1), *other = malloc(cap ? cap : 1);
    FZ_CHECK(first && other);
    size_t w0 = 0;
    for (size_t i = 0; i < cs->n; i++) {
        size_t w = 0;
        tsf_error err;
        tsf_status s = tsf_codec_encode(cs->c[i], t, enc, values, n, i == 0 ? first : other, cap, &w, &err);
        FZ_CHECK(s == TSF_OK);
        FZ_CHECK(w <= cap);
        if (i == 0)
            w0 = w;
        else
            FZ_CHECK(w == w0 && memcmp(first, other, w) == 0);
    }
    free(other);
    *written = w0;
    return first;
}

/*
 * Precision forms store k = round(v * 10^p) (p = 2, the default float_precision) and decode k / 10^p.
 * Re-encoding a decoded value must give the same k, and so the same value, as long as k is small
 * enough for v * 10^p to be exact within a quarter unit: |k| < 2^50 (DOUBLE) resp. 2^20 (FLOAT).
 * Beyond that, Java's own arithmetic double-rounds (a decoded 1e15-scale value can move by one unit
 * on re-encoding), so larger and non-finite values are not compared.
 */
static inline void fz_check_rounding_stable(tsf_type t, const void *a, const void *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = t == TSF_FLOAT ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = t == TSF_FLOAT ? ((const float *)b)[i] : ((const double *)b)[i];
        double limit = t == TSF_FLOAT ? 1048576.0 : 1125899906842624.0;
        if (!isfinite(x) || fabs(x) * 100.0 >= limit) continue;
        FZ_CHECK(memcmp(&x, &y, sizeof x) == 0);
    }
}

/*
 * Round trip. Exact (NaN-insensitive for floats) unless the encoding is lossy by definition:
 *  - FLOAT/DOUBLE through TS_2DIFF or RLE keep float_precision decimals: a second round trip of the
 *    decoded values must reproduce them (fz_check_rounding_stable);
 *  - SPRINTZ (all types) and RLBE FLOAT/DOUBLE are lossy in the Java reference itself (spec §9, §10):
 *    only determinism, successful decoding and path agreement are required.
 */
static inline int fz_roundtrip_harness(tsf_encoding enc, const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    int legal;
    tsf_type t = fz_pick_type(enc, 1, fz_u8(&r), &legal);
    if (!legal) {
        /* no encoder yet: encoding must refuse cleanly */
        const fz_codecs *cs = fz_get_codecs();
        uint8_t dst[16];
        size_t w = 0;
        int64_t v[1] = {0};
        FZ_CHECK(tsf_codec_encode(cs->c[0], t, enc, v, 0, dst, sizeof dst, &w, NULL) == TSF_ENOTSUP);
        return 0;
    }
    size_t wid = tsf_type_size(t), payload;
    void *values = calloc(FZ_MAX_VALUES, wid);
    void *back = calloc(FZ_MAX_VALUES, wid);
    FZ_CHECK(values && back);
    size_t n = fz_make_values(t, &r, values, &payload);

    size_t len = 0, used = 0;
    uint8_t *enc1 = fz_encode_all_paths(t, enc, values, n, payload, &len);
    uint8_t *copy = malloc(len ? len : 1); /* exact-size buffer for ASan */
    FZ_CHECK(copy);
    if (len) memcpy(copy, enc1, len);
    FZ_CHECK(fz_decode_all_paths(t, enc, copy, len, n, back, &used) == TSF_OK);

    int is_float = t == TSF_FLOAT || t == TSF_DOUBLE;
    int precision_form = is_float && (enc == TSF_ENC_TS_2DIFF || enc == TSF_ENC_RLE);
    int lossy = enc == TSF_ENC_SPRINTZ || (enc == TSF_ENC_RLBE && is_float);
    if (precision_form) {
        size_t len2 = 0;
        uint8_t *enc2 = fz_encode_all_paths(t, enc, back, n, 0, &len2);
        void *back2 = calloc(FZ_MAX_VALUES, wid);
        FZ_CHECK(back2);
        FZ_CHECK(fz_decode_all_paths(t, enc, enc2, len2, n, back2, NULL) == TSF_OK);
        fz_check_rounding_stable(t, back, back2, n);
        free(back2);
        free(enc2);
    } else if (!lossy) {
        FZ_CHECK(fz_values_equal(t, values, back, n, 1));
    }
    free(copy);
    free(enc1);
    free(values);
    free(back);
    return 0;
}

static const tsf_compression FZ_CODECS[] = {TSF_UNCOMPRESSED, TSF_SNAPPY, TSF_GZIP,
                                            TSF_LZ4,          TSF_ZSTD,   TSF_LZMA2};
#define FZ_NCODECS (sizeof FZ_CODECS / sizeof FZ_CODECS[0])

/* selector 0..5 picks a codec, 6 and 7 pick unsupported codes (LZO, 42) */
static inline tsf_compression fz_pick_codec(uint8_t sel)
{
    sel %= FZ_NCODECS + 2;
    if (sel < FZ_NCODECS) return FZ_CODECS[sel];
    return sel == FZ_NCODECS ? TSF_LZO : (tsf_compression)42;
}

static inline tsf_compressor *fz_get_compressor(void)
{
    static tsf_compressor *h;
    if (!h) FZ_CHECK(tsf_compressor_open(&h, NULL, NULL) == TSF_OK);
    return h;
}

#endif
