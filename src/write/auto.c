/*
 * auto.c - TSF_ENCODING_AUTO (doc/writer.md "AUTO encoding").
 *
 * A column registered with AUTO holds the Java default encoding of its type as a placeholder until
 * its first non-empty page is sealed. That page is the sample: it is encoded with every candidate
 * encoding legal for the type (and readable by the Java reader, spec tsfile-encodings.md §1) and
 * compressed with the column's compression; the smallest wins (ties: the earlier candidate, the
 * Java default first). The winner is decoded once and compared bit for bit with the sample.
 *
 * FLOAT/DOUBLE may also use TS_2DIFF or RLE with a decimal precision (§3.3): the page stream starts
 * with uvarint(max_point_number) and holds round(v * 10^mpn), so the precision is recorded per page
 * and every reader finds it there. It is a candidate only at the smallest mpn at which every sample
 * value decodes back to the same bits as Java's FloatDecoder computes them ((float)(int / 10^mpn),
 * long / 10^mpn). Every later page is checked the same way before it is encoded; a page that would
 * lose a bit ends the chunk: the pages built so far are written as a chunk group of their own (for
 * an aligned device, the time chunk and all value chunks together so they stay paired) and the
 * column decides again among the lossless candidates, with that page as the sample.
 */
#include <math.h>
#include <string.h>

#include "../codec/ts2diff_wide.h"
#include "../common/bytes.h"
#include "auto.h"

tsf_encoding tsf_wauto_default(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN:
        return TSF_ENC_RLE;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return TSF_ENC_TS_2DIFF;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        return TSF_ENC_GORILLA;
    default:
        return TSF_ENC_PLAIN;
    }
}

void tsf_wauto_init(wcol *c)
{
    c->autoc = TSF_AUTO_UNDECIDED;
    c->auto_noprec = 0;
    c->auto_prec = 0;
    c->enc = tsf_wauto_default(c->type);
}

static int is_binary(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* The factor exactly as floatprec.c and Java compute it: 10^mpn, 1 for mpn <= 0. */
static double prec_factor(int32_t digits)
{
    return digits <= 0 ? 1.0 : pow(10.0, (double)digits);
}

/* Java's Math.round, inline for |x| < 2^52 (the page check runs on every value of a precision
 * column): x - trunc(x) is exact there, so floor(x) + (x - floor(x) >= 0.5) is too. Elsewhere
 * (integral values, infinities, NaN) tsf_java_round. */
static inline int64_t jround(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) return tsf_java_round(x);
    int64_t r = (int64_t)x;
    double fr = x - (double)r;
    if (fr < 0) {
        r--;
        fr += 1.0;
    }
    return r + (fr >= 0.5);
}

size_t tsf_wauto_prec_first_bad(tsf_type t, const void *vals, size_t n, int32_t digits)
{
    double f = prec_factor(digits);
    if (t == TSF_DOUBLE) {
        const double *v = (const double *)vals;
        for (size_t i = 0; i < n; i++) {
            double back = (double)jround(v[i] * f) / f;
            uint64_t a, b;
            memcpy(&a, &v[i], 8);
            memcpy(&b, &back, 8);
            if (a != b) return i;
        }
        return n;
    }
    if (t == TSF_FLOAT) {
        const float *v = (const float *)vals;
        for (size_t i = 0; i < n; i++) {
            int32_t r = (int32_t)(uint32_t)(uint64_t)jround((double)v[i] * f); /* low 32 bits */
            float back = (float)((double)r / f);
            uint32_t a, b;
            memcpy(&a, &v[i], 4);
            memcpy(&b, &back, 4);
            if (a != b) return i;
        }
        return n;
    }
    return 0;
}

/* c->auto_prec of a precision column: the digits in the low byte, the TS_2DIFF block size (deltas per
 * block, tsf_codec.ts2diff_block; 0 = Java's 128) above. */
static int32_t prec_digits(const wcol *c)
{
    return c->auto_prec & 0xff;
}

static int32_t prec_block(const wcol *c)
{
    return c->auto_prec >> 8;
}

const tsf_codec *tsf_wauto_codec(const tsf_writer *w, const wcol *c, tsf_codec *tmp)
{
    if (c->autoc != TSF_AUTO_PRECISION) return w->codec;
    *tmp = *w->codec;
    tmp->float_precision = prec_digits(c);
    tmp->ts2diff_block = prec_block(c);
    return tmp;
}

void tsf_wauto_schema(tsf_ix_column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].encoding == (uint8_t)TSF_ENCODING_AUTO)
            cols[i].encoding = (uint8_t)tsf_wauto_default((tsf_type)cols[i].data_type);
}

/* ---- the decision ------------------------------------------------------------------------- */

#define MAX_CAND 12

typedef struct cand {
    tsf_encoding enc;
    int32_t prec;  /* < 0: no precision (lossless encoding) */
    int32_t block; /* TS_2DIFF with a precision: deltas per block (0 = Java's 128) */
} cand;

/* Wider TS_2DIFF blocks tried for precision columns (codec/ts2diff_wide.c): a block header costs
 * 24 bytes (DOUBLE) per 129 values at Java's size, so 8-bit deltas (2-digit sensor readings) take
 * 9.5 bits per value instead of 8.2 (1024) or 8.0 (a block per page). The sample page decides. */
static const int32_t wide_blocks[] = {1024, TSF_TS2DIFF_BLOCK_MAX};

/* Candidates in preference order (the Java default first). SPRINTZ is left out: it does not round
 * trip full-range integers nor floats in Java (§9); RLBE floats drift (§10); GORILLA_V1 is legacy. */
static size_t candidates(tsf_type t, cand *out)
{
    static const tsf_encoding ints[] = {TSF_ENC_TS_2DIFF, TSF_ENC_RLE,  TSF_ENC_ZIGZAG, TSF_ENC_GORILLA,
                                        TSF_ENC_CHIMP,    TSF_ENC_RLBE, TSF_ENC_PLAIN};
    static const tsf_encoding floats[] = {TSF_ENC_GORILLA, TSF_ENC_CHIMP, TSF_ENC_PLAIN};
    static const tsf_encoding bools[] = {TSF_ENC_RLE, TSF_ENC_PLAIN};
    static const tsf_encoding texts[] = {TSF_ENC_PLAIN, TSF_ENC_DICTIONARY};
    static const tsf_encoding blobs[] = {TSF_ENC_PLAIN};
    const tsf_encoding *l;
    size_t n;
    switch (t) {
    case TSF_BOOLEAN:
        l = bools, n = 2;
        break;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        l = ints, n = sizeof ints / sizeof ints[0];
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        l = floats, n = 3;
        break;
    case TSF_TEXT:
    case TSF_STRING:
        l = texts, n = 2;
        break;
    default:
        l = blobs, n = 1;
        break;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (tsf_codec_can_encode(t, l[i])) out[k++] = (cand){l[i], -1, 0};
    return k;
}

/* Smallest digits at which every value survives the precision stream, or -1. */
static int32_t smallest_precision(tsf_type t, const void *vals, size_t n)
{
    int32_t maxd = t == TSF_FLOAT ? 9 : 18; /* beyond, the scaled values leave the int/long range */
    for (int32_t d = 0; d <= maxd; d++)
        if (tsf_wauto_prec_first_bad(t, vals, n, d) == n) return d;
    return -1;
}

/* Trial buffers of one decision (a decision is rare: once per column and chunk cut). */
typedef struct tbufs {
    tsf_wbuf pre;      /* the page body ahead of the values (times, or rows + bitmap) */
    tsf_wbuf enc, cmp; /* body with a candidate's values at enc.p + pre.len; compressed */
} tbufs;

/* Builds the page body as the writer will (§6): so that a compressor sees what it will really
 * compress, the trial page carries the non-aligned times (uvarint length + TS_2DIFF) or the aligned
 * row count and presence bitmap ahead of the values. */
static tsf_status page_prefix(tsf_writer *w, const wcol *c, const int64_t *times, size_t rows, tbufs *b,
                              tsf_error *err)
{
    b->pre.len = 0;
    if (c->mask == 0 && times) {
        size_t tb = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_TS_2DIFF, c->nvals, 0), wrote = 0;
        uint8_t *d = tsf_wbuf_reserve(&b->pre, TSF_UVARINT32_MAX + tb);
        if (!d) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
        tsf_status s = tsf_codec_encode(w->codec, TSF_INT64, TSF_ENC_TS_2DIFF, times, c->nvals,
                                        d + TSF_UVARINT32_MAX, tb, &wrote, err);
        if (s) return s;
        size_t h = tsf_put_uvarint32(d, (uint32_t)wrote);
        memmove(d + h, d + TSF_UVARINT32_MAX, wrote);
        b->pre.len = h + wrote;
    } else if (c->mask == 0x40 && c->bitmap && rows) {
        uint8_t *d = tsf_wbuf_reserve(&b->pre, 4 + (rows + 7) / 8);
        if (!d) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
        tsf_store_be32(d, (uint32_t)rows);
        memcpy(d + 4, c->bitmap, (rows + 7) / 8);
        b->pre.len = 4 + (rows + 7) / 8;
    }
    return TSF_OK;
}

/* Encodes the page with one candidate into b->enc (after the prefix) and compresses it into b->cmp;
 * *size = the stored bytes, *raw = the value stream's bytes. TSF_ENOTSUP when the codec refuses. */
static tsf_status trial(tsf_writer *w, const wcol *c, const cand *k, tbufs *b, size_t *size, size_t *raw,
                        tsf_error *err)
{
    tsf_codec tmp = *w->codec;
    tmp.float_precision = k->prec;
    tmp.ts2diff_block = k->block;
    size_t n = c->nvals, var = is_binary(c->type) ? c->arena.len : 0;
    size_t bound = tsf_codec_encode_bound(c->type, k->enc, n, var);
    if (!bound) return TSF_ENOTSUP;
    b->enc.len = 0;
    uint8_t *d = tsf_wbuf_reserve(&b->enc, b->pre.len + bound);
    if (!d) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
    memcpy(d, b->pre.p, b->pre.len);
    tsf_status s = tsf_codec_encode(&tmp, c->type, k->enc, c->vals, n, d + b->pre.len, bound, raw, err);
    if (s) return s;
    size_t body = b->pre.len + *raw;
    if (c->comp == TSF_UNCOMPRESSED) {
        *size = body;
        return TSF_OK;
    }
    size_t cb = tsf_compress_bound(c->comp, body);
    if (!cb)
        return tsf_err(err, TSF_ENOTSUP, "writer: compression %s unsupported (%s)",
                       tsf_compression_name(c->comp), c->name);
    b->cmp.len = 0;
    uint8_t *cd = tsf_wbuf_reserve(&b->cmp, cb);
    if (!cd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
    return tsf_compress(c->comp, d, body, cd, cb, size, err);
}

/* Decodes the stream in b->enc and compares it with the page bit for bit (fixed-width types). */
static tsf_status verify(tsf_writer *w, const wcol *c, const cand *k, const tbufs *b, size_t raw, int *same,
                         tsf_error *err)
{
    *same = 1;
    if (is_binary(c->type)) return TSF_OK; /* PLAIN and DICTIONARY keep the bytes */
    size_t bytes = c->nvals * c->width;
    void *back = tsf_alloc(w->alloc, bytes);
    if (!back) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
    tsf_error e2 = {0};
    size_t used = 0;
    tsf_status s =
        tsf_codec_decode(w->codec, c->type, k->enc, b->enc.p + b->pre.len, raw, back, c->nvals, &used, &e2);
    *same = s == TSF_OK;
    for (size_t i = 0; *same && i < c->nvals; i++) {
        const uint8_t *a = (const uint8_t *)back + i * c->width, *v = (const uint8_t *)c->vals + i * c->width;
        /* every TsFile float encoding stores one canonical NaN, as Java's floatToIntBits does */
        if (c->type == TSF_DOUBLE && isnan(*(const double *)a) && isnan(*(const double *)v)) continue;
        if (c->type == TSF_FLOAT && isnan(*(const float *)a) && isnan(*(const float *)v)) continue;
        if (c->type == TSF_BOOLEAN ? (*a != 0) != (*v != 0) : memcmp(a, v, c->width) != 0) *same = 0;
    }
    tsf_free(w->alloc, back, bytes);
    return s == TSF_ENOMEM ? tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name)
                           : TSF_OK;
}

/* A candidate replaces the Java default only when it makes the sample page at least 1/DEFAULT_EDGE
 * smaller: the sample is one page, and a near tie on it can turn into a loss over the series. */
#define DEFAULT_EDGE 25

static tsf_status decide_with(tsf_writer *w, wcol *c, const int64_t *times, size_t rows, tbufs *b,
                              tsf_error *err)
{
    tsf_status s0 = page_prefix(w, c, times, rows, b, err);
    if (s0) return s0;
    cand cs[MAX_CAND];
    size_t nc = candidates(c->type, cs);
    if ((c->type == TSF_FLOAT || c->type == TSF_DOUBLE) && !c->auto_noprec) {
        int32_t d = smallest_precision(c->type, c->vals, c->nvals);
        if (d >= 0) {
            cs[nc++] = (cand){TSF_ENC_TS_2DIFF, d, 0};
            for (size_t i = 0; i < sizeof wide_blocks / sizeof wide_blocks[0]; i++)
                cs[nc++] = (cand){TSF_ENC_TS_2DIFF, d, wide_blocks[i]};
            cs[nc++] = (cand){TSF_ENC_RLE, d, 0};
        }
    }
    size_t sizes[MAX_CAND];
    for (size_t i = 0; i < nc; i++) {
        size_t raw;
        tsf_status s = trial(w, c, &cs[i], b, &sizes[i], &raw, err);
        if (s == TSF_ENOTSUP)
            sizes[i] = SIZE_MAX;
        else if (s)
            return s;
    }
    for (;;) { /* the smallest that decodes back exactly (a safety net; all candidates are lossless) */
        size_t best = SIZE_MAX, bi = 0;
        for (size_t i = 0; i < nc; i++)
            if (sizes[i] < best) best = sizes[i], bi = i;
        if (bi && sizes[0] != SIZE_MAX && best > sizes[0] - sizes[0] / DEFAULT_EDGE) bi = 0; /* the default */
        if (best == SIZE_MAX) { /* nothing verified: PLAIN is lossless for every type */
            c->enc = TSF_ENC_PLAIN;
            c->autoc = TSF_AUTO_DECIDED;
            return TSF_OK;
        }
        size_t raw, sz;
        int same;
        tsf_status s = trial(w, c, &cs[bi], b, &sz, &raw, err);
        if (!s) s = verify(w, c, &cs[bi], b, raw, &same, err);
        if (s) return s;
        if (same) {
            c->enc = cs[bi].enc;
            c->autoc = cs[bi].prec >= 0 ? TSF_AUTO_PRECISION : TSF_AUTO_DECIDED;
            c->auto_prec = cs[bi].prec >= 0 ? cs[bi].prec | cs[bi].block << 8 : 0;
            return TSF_OK;
        }
        sizes[bi] = SIZE_MAX;
    }
}

static tsf_status decide(tsf_writer *w, wcol *c, const int64_t *times, size_t rows, tsf_error *err)
{
    tbufs b;
    tsf_wbuf_init(&b.pre, w->alloc);
    tsf_wbuf_init(&b.enc, w->alloc);
    tsf_wbuf_init(&b.cmp, w->alloc);
    tsf_status s = decide_with(w, c, times, rows, &b, err);
    tsf_wbuf_free(&b.pre);
    tsf_wbuf_free(&b.enc);
    tsf_wbuf_free(&b.cmp);
    return s;
}

/* ---- ending a precision chunk ------------------------------------------------------------- */

/* Writes a chunk-group header for d (0x00 marker + device id, §4.1). */
static tsf_status group_header(tsf_writer *w, const wdevice *d, tsf_error *err)
{
    tsf_wbuf hb;
    tsf_wbuf_init(&hb, w->alloc);
    tsf_wbuf_u8(&hb, 0x00);
    tsf_ix_put_device(&hb, d->segs, d->nsegs);
    tsf_status s =
        hb.oom ? tsf_err(err, TSF_ENOMEM, "writer: out of memory") : tsf_w_out(w, hb.p, hb.len, err);
    tsf_wbuf_free(&hb);
    return s;
}

static wdevice *device_of(tsf_writer *w, const wcol *c)
{
    for (size_t i = 0; i < w->ndevs; i++)
        for (size_t j = 0; j < w->devs[i]->ncols; j++)
            if (&w->devs[i]->cols[j] == c) return w->devs[i];
    return NULL;
}

static int page_survives(const wcol *c)
{
    return tsf_wauto_prec_first_bad(c->type, c->vals, c->nvals, prec_digits(c)) == c->nvals;
}

tsf_status tsf_wauto_seal(tsf_writer *w, wcol *c, const int64_t *times, size_t rows, tsf_error *err)
{
    tsf_status s;
    if (c->autoc == TSF_AUTO_PRECISION && c->mask == 0 && !page_survives(c)) {
        /* non-aligned: the chunk built so far becomes a chunk group of its own */
        if (c->npages) {
            wdevice *d = device_of(w, c);
            if (!d) return tsf_err(err, TSF_EINVAL, "writer: AUTO column %s has no device", c->name);
            if ((s = group_header(w, d, err))) return s;
            if ((s = tsf_wcol_flush_chunk(w, c, 0, err))) return s;
        }
        c->autoc = TSF_AUTO_UNDECIDED;
        c->auto_noprec = 1;
    }
    if (c->autoc == TSF_AUTO_UNDECIDED) return decide(w, c, times, rows, err);
    return TSF_OK;
}

tsf_status tsf_wauto_seal_device(tsf_writer *w, wdevice *d, tsf_error *err)
{
    int cut = 0;
    for (size_t j = 0; j < d->ncols; j++) {
        wcol *c = &d->cols[j];
        if (c->autoc == TSF_AUTO_PRECISION && c->nvals && !page_survives(c)) {
            c->autoc = TSF_AUTO_UNDECIDED; /* decided again when this page is sealed */
            c->auto_noprec = 1;
            cut = 1;
        }
    }
    if (!cut || !d->tcol.npages) return TSF_OK;
    tsf_status s = group_header(w, d, err);
    if (!s) s = tsf_wcol_flush_chunk(w, &d->tcol, 0, err);
    for (size_t j = 0; j < d->ncols && !s; j++) s = tsf_wcol_flush_chunk(w, &d->cols[j], 1, err);
    return s;
}
