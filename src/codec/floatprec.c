/*
 * floatprec.c - FLOAT/DOUBLE through TS_2DIFF or RLE with a decimal precision (spec
 * tsfile-encodings.md §3.3 original layout, §3.4 newer "overflow" layout), shared by ts2diff.c and
 * rle.c.
 *
 * Encode writes the original layout of the a9f54614 Java writer: uvarint(mpn) and then an INT32
 * (FLOAT) or INT64 (DOUBLE) stream of the inner encoding holding round(v * 10^mpn), where mpn =
 * c->float_precision (<= 0 means 0, factor 1). Rounding is Java's Math.round (ties towards +inf,
 * saturating at the long range, NaN -> 0), and FLOAT keeps the low 32 bits of that long.
 *
 * THIS IS LOSSY BY DESIGN, exactly as in Java: digits beyond mpn are rounded away; values whose
 * scaled form leaves the long range saturate (DOUBLE 1e30 reads back as Long.MAX/100); FLOAT values
 * wrap through the low 32 bits (3e7 at mpn 2 reads back as -1.2949673E7); NaN reads back as 0.
 * Callers who need exact round trips must pick another encoding.
 *
 * Decode accepts both the original layout and the §3.4 layout (tag uvarint 0x7FFFFFFF/0x7FFFFFFE,
 * value count, LSB-first bitmaps of count/8+1 bytes for "scaled" and, with 0x7FFFFFFE, "raw bits",
 * then the original stream). The integers are decoded in place into the caller's array (int32 and
 * float, int64 and double have the same size) and then converted, so decode never allocates.
 */
#include <math.h>
#include <string.h>

#include "../common/bytes.h"
#include "codec.h"
#include "ts2diff_wide.h"

#define FP_TAG_SCALED 0x7FFFFFFFu /* overflow layout without raw-bits values */
#define FP_TAG_RAW 0x7FFFFFFEu    /* overflow layout with a raw-bits bitmap */

int64_t tsf_java_round(double x)
{
    /* Java Math.round: the long closest to x, ties towards +inf; NaN -> 0; saturates. Computed as
     * floor(x) + (x - floor(x) >= 0.5), which is exact (the fraction of a double is representable),
     * unlike floor(x + 0.5) whose addition can round (0.49999999999999994, odd values >= 2^52). */
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    double f = floor(x);
    int64_t r = (int64_t)f;
    if (x - f >= 0.5) r++;
    return r;
}

static double fp_factor(int32_t mpn)
{
    return mpn <= 0 ? 1.0 : pow(10.0, (double)mpn);
}

static const char *fp_name(tsf_encoding inner)
{
    return inner == TSF_ENC_RLE ? "RLE" : "TS_2DIFF";
}

size_t tsf_floatprec_bound(tsf_encoding inner, tsf_type type, size_t n)
{
    int is64 = type == TSF_DOUBLE;
    if (type != TSF_FLOAT && type != TSF_DOUBLE) return 0;
    size_t body = inner == TSF_ENC_RLE ? tsf_rle_bound_n(n, is64) : tsf_ts2diff_bound_n(n, is64);
    return TSF_UVARINT32_MAX + body;
}

tsf_status tsf_floatprec_encode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const void *values,
                                size_t n, uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    int is64 = type == TSF_DOUBLE;
    *written = 0;
    if ((type != TSF_FLOAT && type != TSF_DOUBLE) || (inner != TSF_ENC_TS_2DIFF && inner != TSF_ENC_RLE))
        return tsf_err(err, TSF_ENOTSUP, "float precision encode: unsupported type/encoding");
    size_t need = tsf_floatprec_bound(inner, type, n);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "%s %s encode: dst holds %zu bytes, bound is %zu", fp_name(inner),
                       is64 ? "DOUBLE" : "FLOAT", cap, need);
    if (n == 0) return TSF_OK; /* Java writes nothing for a stream without values */
    int32_t mpn = c->float_precision > 0 ? c->float_precision : 0;
    double f = fp_factor(mpn);
    size_t hdr = tsf_put_uvarint32(dst, (uint32_t)mpn);
    size_t isz = is64 ? 8 : 4;
    void *tmp = tsf_alloc(&c->alloc, n * isz); /* one scratch array per page */
    if (!tmp) return tsf_err(err, TSF_ENOMEM, "%s float precision encode: out of memory", fp_name(inner));
    if (is64) {
        const double *v = (const double *)values;
        int64_t *t = (int64_t *)tmp;
        for (size_t i = 0; i < n; i++) t[i] = tsf_java_round(v[i] * f);
    } else {
        const float *v = (const float *)values;
        int32_t *t = (int32_t *)tmp;
        for (size_t i = 0; i < n; i++) t[i] = (int32_t)(uint32_t)(uint64_t)tsf_java_round((double)v[i] * f);
    }
    size_t body = 0;
    tsf_status s;
    if (inner == TSF_ENC_RLE)
        s = is64 ? tsf_rle_encode_i64(c, (const int64_t *)tmp, n, dst + hdr, cap - hdr, &body, err)
                 : tsf_rle_encode_i32(c, (const int32_t *)tmp, n, dst + hdr, cap - hdr, &body, err);
    else if (c->ts2diff_block > TSF_TS2DIFF_BLOCK_JAVA) /* wider blocks (AUTO): fewer headers */
        body = tsf_ts2diff_wide_encode(tmp, n, is64, (uint32_t)c->ts2diff_block, dst + hdr), s = TSF_OK;
    else
        s = is64 ? tsf_ts2diff_encode_i64(c, (const int64_t *)tmp, n, dst + hdr, cap - hdr, &body, err)
                 : tsf_ts2diff_encode_i32(c, (const int32_t *)tmp, n, dst + hdr, cap - hdr, &body, err);
    tsf_free(&c->alloc, tmp, n * isz);
    if (s == TSF_OK) *written = hdr + body;
    return s;
}

/* The layout in front of the integer stream. */
typedef struct fp_head {
    size_t pos; /* offset of the integer stream */
    int32_t mpn;
    int overflow;          /* §3.4 layout */
    uint64_t count;        /* §3.4: values in the page */
    const uint8_t *scaled; /* §3.4 bitmaps (LSB-first), raw may be NULL */
    const uint8_t *raw;
} fp_head;

static tsf_status fp_parse(tsf_encoding inner, tsf_type type, const uint8_t *src, size_t len, fp_head *h,
                           tsf_error *err)
{
    const char *en = fp_name(inner), *tn = type == TSF_DOUBLE ? "DOUBLE" : "FLOAT";
    uint32_t u;
    size_t k = tsf_get_uvarint32(src, len, &u);
    memset(h, 0, sizeof *h);
    if (!k) return tsf_err(err, TSF_ECORRUPT, "%s %s: bad max_point_number uvarint at offset 0", en, tn);
    h->pos = k;
    if (u == FP_TAG_SCALED || u == FP_TAG_RAW) {
        uint32_t cnt;
        h->overflow = 1;
        k = tsf_get_uvarint32(src + h->pos, len - h->pos, &cnt);
        if (!k)
            return tsf_err(err, TSF_ECORRUPT, "%s %s: bad value count uvarint at offset %zu", en, tn, h->pos);
        h->pos += k;
        h->count = cnt;
        size_t bm = (size_t)cnt / 8 + 1, nbm = u == FP_TAG_RAW ? 2 : 1;
        if (len - h->pos < bm * nbm)
            return tsf_err(err, TSF_ECORRUPT,
                           "%s %s: truncated overflow bitmaps at offset %zu (%zu bytes needed)", en, tn,
                           h->pos, bm * nbm);
        h->scaled = src + h->pos;
        h->pos += bm;
        if (u == FP_TAG_RAW) {
            h->raw = src + h->pos;
            h->pos += bm;
        }
        k = tsf_get_uvarint32(src + h->pos, len - h->pos, &u);
        if (!k)
            return tsf_err(err, TSF_ECORRUPT, "%s %s: bad max_point_number uvarint at offset %zu", en, tn,
                           h->pos);
        h->pos += k;
    }
    h->mpn = (int32_t)u; /* Java reads an int: huge values are negative, i.e. factor 1 */
    return TSF_OK;
}

static int fp_bit(const uint8_t *bm, size_t i)
{
    return (bm[i >> 3] >> (i & 7)) & 1;
}

tsf_status tsf_floatprec_decode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const uint8_t *src,
                                size_t len, void *values, size_t n, size_t *consumed, tsf_error *err)
{
    int is64 = type == TSF_DOUBLE;
    if (consumed) *consumed = 0;
    if ((type != TSF_FLOAT && type != TSF_DOUBLE) || (inner != TSF_ENC_TS_2DIFF && inner != TSF_ENC_RLE))
        return tsf_err(err, TSF_ENOTSUP, "float precision decode: unsupported type/encoding");
    if (n == 0) return TSF_OK;
    fp_head h;
    tsf_status s = fp_parse(inner, type, src, len, &h, err);
    if (s != TSF_OK) return s;
    if (h.overflow && n > h.count)
        return tsf_err(err, TSF_ECORRUPT,
                       "%s %s: overflow header at offset 0 holds %llu values, %zu requested", fp_name(inner),
                       is64 ? "DOUBLE" : "FLOAT", (unsigned long long)h.count, n);
    size_t used = 0;
    const uint8_t *body = src + h.pos;
    size_t blen = len - h.pos;
    if (inner == TSF_ENC_RLE)
        s = is64 ? tsf_rle_decode_i64(c, body, blen, (int64_t *)values, n, &used, err)
                 : tsf_rle_decode_i32(c, body, blen, (int32_t *)values, n, &used, err);
    else
        s = is64 ? tsf_ts2diff_decode_i64(c, body, blen, (int64_t *)values, n, &used, err)
                 : tsf_ts2diff_decode_i32(c, body, blen, (int32_t *)values, n, &used, err);
    if (s != TSF_OK) return s;
    double f = fp_factor(h.mpn);
    if (is64) {
        int64_t *iv = (int64_t *)values;
        double *dv = (double *)values;
        if (!h.overflow) {
            for (size_t i = 0; i < n; i++) dv[i] = (double)iv[i] / f;
        } else {
            for (size_t i = 0; i < n; i++) {
                int64_t x = iv[i];
                if (h.raw && fp_bit(h.raw, i))
                    memcpy(&dv[i], &x, 8);
                else
                    dv[i] = (double)x / (fp_bit(h.scaled, i) ? f : 1.0);
            }
        }
    } else {
        int32_t *iv = (int32_t *)values;
        float *fv = (float *)values;
        if (!h.overflow) {
            for (size_t i = 0; i < n; i++) fv[i] = (float)((double)iv[i] / f);
        } else {
            for (size_t i = 0; i < n; i++) {
                int32_t x = iv[i];
                if (h.raw && fp_bit(h.raw, i))
                    memcpy(&fv[i], &x, 4);
                else
                    fv[i] = (float)((double)x / (fp_bit(h.scaled, i) ? f : 1.0));
            }
        }
    }
    if (consumed) *consumed = h.pos + used;
    return TSF_OK;
}

tsf_status tsf_floatprec_count(tsf_encoding inner, tsf_type type, const uint8_t *src, size_t len, size_t *n,
                               tsf_error *err)
{
    *n = 0;
    if (len == 0) return TSF_OK;
    fp_head h;
    tsf_status s = fp_parse(inner, type, src, len, &h, err);
    if (s != TSF_OK) return s;
    if (h.overflow) {
        *n = (size_t)h.count;
        return TSF_OK;
    }
    tsf_type it = type == TSF_DOUBLE ? TSF_INT64 : TSF_INT32;
    const tsf_codec_vt *vt = inner == TSF_ENC_RLE ? &tsf_codec_rle : &tsf_codec_ts2diff;
    if (!vt->count)
        return tsf_err(err, TSF_ENOTSUP, "count: %s streams carry no value count", fp_name(inner));
    return vt->count(it, src + h.pos, len - h.pos, n, err);
}
