/*
 * codec.h - the internal interface of the value encodings (spec: ../shared/spec/tsfile-encodings.md).
 *
 * Each encoding lives in its own file and exports one tsf_codec_vt. codec.c dispatches on
 * (encoding, type) once per page; inside, each codec switches on the type once per call and then
 * runs a loop specialised for it. Values use the C representation documented in tsf.h
 * (BOOLEAN uint8_t, INT32/DATE int32_t, INT64/TIMESTAMP int64_t, FLOAT float, DOUBLE double,
 * TEXT/STRING/BLOB tsf_bytes borrowing from the source buffer).
 *
 * Contracts every codec keeps:
 *  - encode writes only dst[0..cap) and fails with TSF_ERANGE if cap < bound(type, n, var_bytes);
 *  - decode is count-driven (n values, as the page reader knows the count), reads only
 *    src[0..len), and on truncated/garbage input returns TSF_ECORRUPT with a message naming the
 *    encoding and the byte offset; it never allocates from an unchecked length.
 */
#ifndef TSF_CODEC_H
#define TSF_CODEC_H

#include "../common/internal.h"

struct tsf_codec {
    tsf_codec_path path;     /* resolved, never AUTO */
    int32_t float_precision; /* max_point_number for FLOAT/DOUBLE TS_2DIFF and RLE */
    int32_t gorilla_compact; /* GORILLA window choice: 0 reference, 1 by cost, 2 by cost with lookahead */
    int32_t ts2diff_block;   /* FLOAT/DOUBLE TS_2DIFF with a precision: deltas per block (<= 128: 128) */
    int32_t nt_stores;       /* 1 non-temporal stores where a kernel has them, else -1 (options.nt_stores) */
    tsf_allocator alloc;     /* copy of the hooks (all NULL = libc) */
};

#define TSF_TYPE_BIT(t) (1u << (unsigned)(t))
#define TSF_TYPES_INT32 (TSF_TYPE_BIT(TSF_INT32) | TSF_TYPE_BIT(TSF_DATE))
#define TSF_TYPES_INT64 (TSF_TYPE_BIT(TSF_INT64) | TSF_TYPE_BIT(TSF_TIMESTAMP))
#define TSF_TYPES_INTS (TSF_TYPES_INT32 | TSF_TYPES_INT64)
#define TSF_TYPES_FLOATS (TSF_TYPE_BIT(TSF_FLOAT) | TSF_TYPE_BIT(TSF_DOUBLE))
#define TSF_TYPES_NUMERIC (TSF_TYPES_INTS | TSF_TYPES_FLOATS)
#define TSF_TYPES_BINARY (TSF_TYPE_BIT(TSF_TEXT) | TSF_TYPE_BIT(TSF_STRING) | TSF_TYPE_BIT(TSF_BLOB))
#define TSF_TYPES_ALL (TSF_TYPE_BIT(TSF_BOOLEAN) | TSF_TYPES_NUMERIC | TSF_TYPES_BINARY)

typedef size_t (*tsf_bound_fn)(tsf_type type, size_t n, size_t var_bytes);
typedef tsf_status (*tsf_encode_fn)(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                                    size_t cap, size_t *written, tsf_error *err);
typedef tsf_status (*tsf_decode_fn)(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                    void *values, size_t n, size_t *consumed, tsf_error *err);
typedef tsf_status (*tsf_count_fn)(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err);

typedef struct tsf_codec_vt {
    tsf_encoding encoding;
    uint32_t encode_types; /* TSF_TYPE_BIT mask; 0 = decode-only encoding */
    uint32_t decode_types;
    tsf_bound_fn bound;    /* NULL iff encode_types == 0 */
    tsf_encode_fn encode;
    tsf_decode_fn decode;
    tsf_count_fn count;    /* NULL if the stream has no implicit count */
} tsf_codec_vt;

extern const tsf_codec_vt tsf_codec_plain;      /* plain.c */
extern const tsf_codec_vt tsf_codec_dictionary; /* dictionary.c */
extern const tsf_codec_vt tsf_codec_rle;        /* rle.c */
extern const tsf_codec_vt tsf_codec_ts2diff;    /* ts2diff.c */
extern const tsf_codec_vt tsf_codec_gorilla_v1; /* gorilla_v1.c */
extern const tsf_codec_vt tsf_codec_regular;    /* regular.c */
extern const tsf_codec_vt tsf_codec_gorilla;    /* gorilla.c */
extern const tsf_codec_vt tsf_codec_zigzag;     /* zigzag.c */
extern const tsf_codec_vt tsf_codec_chimp;      /* chimp.c */
extern const tsf_codec_vt tsf_codec_sprintz;    /* sprintz.c */
extern const tsf_codec_vt tsf_codec_rlbe;       /* rlbe.c */

/* Integer cores shared with the FLOAT/DOUBLE precision wrapper (floatprec.c) and DICTIONARY. */
tsf_status tsf_ts2diff_encode_i32(const tsf_codec *c, const int32_t *v, size_t n, uint8_t *dst, size_t cap,
                                  size_t *written, tsf_error *err);
tsf_status tsf_ts2diff_encode_i64(const tsf_codec *c, const int64_t *v, size_t n, uint8_t *dst, size_t cap,
                                  size_t *written, tsf_error *err);
tsf_status tsf_ts2diff_decode_i32(const tsf_codec *c, const uint8_t *src, size_t len, int32_t *v, size_t n,
                                  size_t *consumed, tsf_error *err);
tsf_status tsf_ts2diff_decode_i64(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                                  size_t *consumed, tsf_error *err);
size_t tsf_ts2diff_bound_n(size_t n, int is64);

/*
 * TS_2DIFF INT64/TIMESTAMP decode that also gathers a summary of the values, block by block while each
 * block is in L1 (checked reads compare it with a page's statistics): TSF_SUM_VALUES min, max and the
 * wrapping sum; TSF_SUM_ASCENDING the first row whose value is not above the one before (n when they
 * strictly ascend). A block's header alone proves a run ascending when minDelta > 0 and its largest
 * delta cannot overflow; other blocks are compared value by value. Kernels per path: the AVX-512 path
 * fuses min/max/sum into its unpack loop (w <= 25), the other widths and paths fold each decoded block
 * (AVX-512, AVX2, portable). Same values and consumed as tsf_ts2diff_decode_i64.
 */
enum { TSF_SUM_VALUES = 1, TSF_SUM_ASCENDING = 2 };
typedef struct tsf_dec_summary {
    unsigned what;     /* the TSF_SUM_* gathered (0: none, the caller folds the values itself) */
    int64_t min, max;  /* TSF_SUM_VALUES, n >= 1 */
    uint64_t sum;      /* TSF_SUM_VALUES: sum of the values mod 2^64 */
    double dmin, dmax; /* TSF_SUM_VALUES of DOUBLE values (GORILLA) */
    size_t unordered;  /* TSF_SUM_ASCENDING */
} tsf_dec_summary;
/* Min / max of DOUBLE values v[0..n) folded into *mn / *mx (both start at the first value) as the writer
 * folds them, with the kernels of path p (fold.c). */
void tsf_f64_fold(tsf_codec_path p, const double *v, size_t n, double *mn, double *mx);
/* GORILLA DOUBLE decode that also folds min / max (s->dmin, s->dmax; TSF_SUM_VALUES) chunk by chunk while
 * each chunk is in L1. Same values and consumed as the plain decode. */
tsf_status tsf_gorilla_decode_f64_sum(const tsf_codec *c, const uint8_t *src, size_t len, double *v, size_t n,
                                      tsf_dec_summary *s, size_t *consumed, tsf_error *err);
/* The same summary (TSF_SUM_VALUES) of v[0..n), n >= 1, already decoded: the fold kernels of path p. */
void tsf_i64_summary(tsf_codec_path p, const int64_t *v, size_t n, tsf_dec_summary *s);
tsf_status tsf_ts2diff_decode_i64_sum(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                                      unsigned what, tsf_dec_summary *s, size_t *consumed, tsf_error *err);

tsf_status tsf_rle_encode_i32(const tsf_codec *c, const int32_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err);
tsf_status tsf_rle_encode_i64(const tsf_codec *c, const int64_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err);
tsf_status tsf_rle_decode_i32(const tsf_codec *c, const uint8_t *src, size_t len, int32_t *v, size_t n,
                              size_t *consumed, tsf_error *err);
tsf_status tsf_rle_decode_i64(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                              size_t *consumed, tsf_error *err);
size_t tsf_rle_bound_n(size_t n, int is64);

/*
 * FLOAT/DOUBLE through TS_2DIFF or RLE with a decimal precision (spec §3.3, §3.4): encode writes the
 * original layout (uvarint(mpn) + integer stream) at c->float_precision; decode reads the original
 * layout and the newer overflow layout. `inner` is TSF_ENC_TS_2DIFF or TSF_ENC_RLE.
 */
tsf_status tsf_floatprec_encode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const void *values,
                                size_t n, uint8_t *dst, size_t cap, size_t *written, tsf_error *err);
tsf_status tsf_floatprec_decode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const uint8_t *src,
                                size_t len, void *values, size_t n, size_t *consumed, tsf_error *err);
size_t tsf_floatprec_bound(tsf_encoding inner, tsf_type type, size_t n);
tsf_status tsf_floatprec_count(tsf_encoding inner, tsf_type type, const uint8_t *src, size_t len, size_t *n,
                               tsf_error *err);

/* Precision scaling exactly as Java does it (Math.round = floor(x + 0.5), saturating). */
int64_t tsf_java_round(double x);

/* Index of the first of the n FLOAT/DOUBLE values that the Java reference reader gets wrong when it
 * reads the GORILLA_V1 stream [src, src + len) that encodes them (gorilla_v1.c), or n; *java_bits
 * = the bits it reads there. */
size_t tsf_gorilla_v1_java_misread(tsf_type type, const void *values, size_t n, const uint8_t *src, size_t len,
                                   uint64_t *java_bits);

#endif
