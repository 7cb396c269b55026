/*
 * plain.c - PLAIN (spec tsfile-encodings.md §2): values concatenated with no header and no count.
 * BOOLEAN one byte (any non-zero byte reads as true); INT32/DATE signed zigzag varints;
 * INT64/TIMESTAMP 8 bytes big-endian; FLOAT/DOUBLE big-endian IEEE bits, NaN canonicalised on
 * write as Java's floatToIntBits/doubleToLongBits do (decode returns the stored bits);
 * TEXT/STRING/BLOB varint(len) + bytes, decoded tsf_bytes borrowing from the source.
 * Fixed-width decode is a branch-free byte-swapping copy the compiler vectorises; INT32 varints
 * take a fast path for runs of 1-byte values (zigzag_varint.h).
 */
#include <string.h>

#include "../common/bytes.h"
#include "codec.h"
#include "zigzag_varint.h"

static size_t sat_mul(size_t a, size_t b)
{
    return (b != 0 && a > SIZE_MAX / b) ? SIZE_MAX : a * b;
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Bytes per value of a fixed-width type; 0 for varint and byte-string types. */
static size_t plain_width(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN:
        return 1;
    case TSF_FLOAT:
        return 4;
    case TSF_INT64:
    case TSF_TIMESTAMP:
    case TSF_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

static int is_binary(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

static size_t plain_bound(tsf_type type, size_t n, size_t var_bytes)
{
    if (type == TSF_INT32 || type == TSF_DATE) return sat_mul(n, TSF_UVARINT32_MAX);
    if (is_binary(type)) return sat_add(sat_mul(n, TSF_UVARINT32_MAX), var_bytes);
    return sat_mul(n, plain_width(type));
}

/* Big-endian store of n 8-byte (resp. 4-byte) host values: a byte-swapping copy. */
static void store_be64_array(uint8_t *dst, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) tsf_store_be64(dst + 8 * i, v[i]);
}

static void load_be64_array(const uint8_t *src, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u = tsf_load_be64(src + 8 * i);
        memcpy(out + 8 * i, &u, 8);
    }
}

static void load_be32_array(const uint8_t *src, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = tsf_load_be32(src + 4 * i);
        memcpy(out + 4 * i, &u, 4);
    }
}

static tsf_status plain_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                               size_t cap, size_t *written, tsf_error *err)
{
    (void)c;
    size_t var_bytes = 0;
    if (is_binary(type)) {
        const tsf_bytes *b = (const tsf_bytes *)values;
        for (size_t i = 0; i < n; i++) {
            if (b[i].len > (size_t)INT32_MAX)
                return tsf_err(err, TSF_ERANGE,
                               "PLAIN %s encode: value %zu is %zu bytes, over the 2^31-1 limit",
                               tsf_type_name(type), i, b[i].len);
            var_bytes += b[i].len;
        }
    }
    size_t need = plain_bound(type, n, var_bytes);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "PLAIN %s encode: dst holds %zu bytes, needs %zu",
                       tsf_type_name(type), cap, need);
    uint8_t *p = dst;
    switch (type) {
    case TSF_BOOLEAN: {
        const uint8_t *v = (const uint8_t *)values;
        for (size_t i = 0; i < n; i++) p[i] = v[i] != 0;
        p += n;
        break;
    }
    case TSF_INT32:
    case TSF_DATE:
        p += tsf_zz_put_i32(p, (const int32_t *)values, n);
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        store_be64_array(p, (const uint64_t *)values, n);
        p += 8 * n;
        break;
    case TSF_FLOAT: {
        const uint8_t *v = (const uint8_t *)values;
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, v + 4 * i, 4);
            if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u; /* floatToIntBits: one NaN */
            tsf_store_be32(p + 4 * i, u);
        }
        p += 4 * n;
        break;
    }
    case TSF_DOUBLE: {
        const uint8_t *v = (const uint8_t *)values;
        for (size_t i = 0; i < n; i++) {
            uint64_t u;
            memcpy(&u, v + 8 * i, 8);
            if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) u = 0x7ff8000000000000ull;
            tsf_store_be64(p + 8 * i, u);
        }
        p += 8 * n;
        break;
    }
    default: { /* TEXT, STRING, BLOB */
        const tsf_bytes *b = (const tsf_bytes *)values;
        for (size_t i = 0; i < n; i++) {
            p += tsf_put_uvarint32(p, tsf_zigzag32((int32_t)b[i].len));
            if (b[i].len) memcpy(p, b[i].data, b[i].len);
            p += b[i].len;
        }
        break;
    }
    }
    *written = (size_t)(p - dst);
    return TSF_OK;
}

static tsf_status short_input(tsf_error *err, tsf_type type, size_t n, size_t width, size_t len)
{
    return tsf_err(err, TSF_ECORRUPT,
                   "PLAIN %s: %zu values need %zu bytes but the stream ends at byte offset %zu",
                   tsf_type_name(type), n, n * width, len);
}

/* Decodes n byte strings varint(len) + bytes; each borrows from src. */
static tsf_status decode_binary(tsf_type type, const uint8_t *src, size_t len, tsf_bytes *out, size_t n,
                                size_t *consumed, tsf_error *err)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        size_t m = tsf_get_uvarint32(src + pos, len - pos, &u);
        if (m == 0)
            return tsf_err(err, TSF_ECORRUPT,
                           "PLAIN %s: bad or truncated length varint of value %zu at byte offset %zu",
                           tsf_type_name(type), i, pos);
        int32_t l = tsf_unzigzag32(u);
        if (l < 0)
            return tsf_err(err, TSF_ECORRUPT, "PLAIN %s: negative length %d of value %zu at byte offset %zu",
                           tsf_type_name(type), (int)l, i, pos);
        pos += m;
        if ((size_t)l > len - pos)
            return tsf_err(err, TSF_ECORRUPT,
                           "PLAIN %s: value %zu of %d bytes at byte offset %zu runs past the end (%zu bytes)",
                           tsf_type_name(type), i, (int)l, pos, len);
        out[i].data = src + pos;
        out[i].len = (size_t)l;
        pos += (size_t)l;
    }
    *consumed = pos;
    return TSF_OK;
}

static tsf_status plain_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                               void *values, size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    *consumed = 0;
    if (is_binary(type)) return decode_binary(type, src, len, (tsf_bytes *)values, n, consumed, err);
    if (type == TSF_INT32 || type == TSF_DATE) {
        size_t at;
        if (!tsf_zz_get_i32(src, len, (int32_t *)values, n, &at))
            return tsf_err(err, TSF_ECORRUPT, "PLAIN %s: bad or truncated varint at byte offset %zu",
                           tsf_type_name(type), at);
        *consumed = at;
        return TSF_OK;
    }
    size_t w = plain_width(type);
    if (n > len / w) return short_input(err, type, n, w, len);
    uint8_t *out = (uint8_t *)values;
    if (w == 1) {
        for (size_t i = 0; i < n; i++) out[i] = src[i] != 0;
    } else if (w == 4) {
        load_be32_array(src, out, n);
    } else {
        load_be64_array(src, out, n);
    }
    *consumed = n * w;
    return TSF_OK;
}

static tsf_status plain_count(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    *n = 0;
    if (type == TSF_INT32 || type == TSF_DATE) {
        /* every varint ends with one byte below 0x80; none is longer than 5 bytes */
        size_t cnt = 0, run = 0;
        for (size_t i = 0; i < len; i++) {
            if (src[i] & 0x80) {
                if (++run == TSF_UVARINT32_MAX)
                    return tsf_err(err, TSF_ECORRUPT,
                                   "PLAIN %s: varint longer than 5 bytes at byte offset %zu",
                                   tsf_type_name(type), i + 1 - run);
            } else {
                cnt++;
                run = 0;
            }
        }
        if (run)
            return tsf_err(err, TSF_ECORRUPT, "PLAIN %s: truncated varint at byte offset %zu",
                           tsf_type_name(type), len - run);
        *n = cnt;
        return TSF_OK;
    }
    if (is_binary(type)) {
        size_t pos = 0, cnt = 0;
        while (pos < len) {
            uint32_t u = 0;
            size_t m = tsf_get_uvarint32(src + pos, len - pos, &u);
            int32_t l = tsf_unzigzag32(u);
            if (m == 0 || l < 0 || (size_t)l > len - pos - m)
                return tsf_err(err, TSF_ECORRUPT, "PLAIN %s: bad length of value %zu at byte offset %zu",
                               tsf_type_name(type), cnt, pos);
            pos += m + (size_t)l;
            cnt++;
        }
        *n = cnt;
        return TSF_OK;
    }
    size_t w = plain_width(type);
    if (len % w != 0)
        return tsf_err(err, TSF_ECORRUPT, "PLAIN %s: stream length %zu is not a multiple of %zu",
                       tsf_type_name(type), len, w);
    *n = len / w;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_plain = {
    .encoding = TSF_ENC_PLAIN,
    .encode_types = TSF_TYPES_ALL,
    .decode_types = TSF_TYPES_ALL,
    .bound = plain_bound,
    .encode = plain_encode,
    .decode = plain_decode,
    .count = plain_count,
};
