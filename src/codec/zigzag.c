/*
 * zigzag.c - ZIGZAG (spec tsfile-encodings.md §7) for INT32/DATE and INT64/TIMESTAMP: one block
 * per page, uvarint(byteLen) uvarint(count) then count zigzag varints (up to 5 resp. 10 bytes).
 * An empty page writes nothing. The decoder reads blocks while it still needs values; a block's
 * varints must fill exactly its declared byte length.
 */
#include <string.h>

#include "../common/bytes.h"
#include "codec.h"
#include "zigzag_varint.h"

static int is64_type(tsf_type t)
{
    return t == TSF_INT64 || t == TSF_TIMESTAMP;
}

static size_t zigzag_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    size_t per = is64_type(type) ? TSF_UVARINT64_MAX : TSF_UVARINT32_MAX;
    if (n > (SIZE_MAX - 2 * TSF_UVARINT32_MAX) / per) return SIZE_MAX;
    return 2 * TSF_UVARINT32_MAX + n * per;
}

static tsf_status zigzag_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                                size_t cap, size_t *written, tsf_error *err)
{
    (void)c;
    *written = 0;
    size_t need = zigzag_bound(type, n, 0);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "ZIGZAG %s encode: dst holds %zu bytes, needs %zu",
                       tsf_type_name(type), cap, need);
    if (n == 0) return TSF_OK;
    if (n > (size_t)INT32_MAX)
        return tsf_err(err, TSF_ERANGE, "ZIGZAG %s encode: %zu values do not fit one block (max 2^31-1)",
                       tsf_type_name(type), n);
    uint8_t *body = dst + 2 * TSF_UVARINT32_MAX;
    size_t blen = is64_type(type) ? tsf_zz_put_i64(body, (const int64_t *)values, n)
                                  : tsf_zz_put_i32(body, (const int32_t *)values, n);
    if (blen > (size_t)INT32_MAX)
        return tsf_err(err, TSF_ERANGE, "ZIGZAG %s encode: block of %zu bytes is over 2^31-1",
                       tsf_type_name(type), blen);
    uint8_t hdr[2 * TSF_UVARINT32_MAX];
    size_t h = tsf_put_uvarint32(hdr, (uint32_t)blen);
    h += tsf_put_uvarint32(hdr + h, (uint32_t)n);
    memmove(dst + h, body, blen);
    memcpy(dst, hdr, h);
    *written = h + blen;
    return TSF_OK;
}

/* Reads a block header at src[pos..len): *cnt values in src[*body .. *body + *blen). */
static tsf_status block_header(tsf_type type, const uint8_t *src, size_t len, size_t pos, size_t *body,
                               uint32_t *blen, uint32_t *cnt, tsf_error *err)
{
    size_t m1 = tsf_get_uvarint32(src + pos, len - pos, blen);
    size_t m2 = m1 ? tsf_get_uvarint32(src + pos + m1, len - pos - m1, cnt) : 0;
    if (m2 == 0)
        return tsf_err(err, TSF_ECORRUPT, "ZIGZAG %s: bad or truncated block header at byte offset %zu",
                       tsf_type_name(type), pos);
    *body = pos + m1 + m2;
    if (*blen > len - *body)
        return tsf_err(err, TSF_ECORRUPT,
                       "ZIGZAG %s: block at byte offset %zu declares %u bytes, only %zu remain",
                       tsf_type_name(type), pos, *blen, len - *body);
    if (*blen < *cnt)
        return tsf_err(err, TSF_ECORRUPT,
                       "ZIGZAG %s: block at byte offset %zu declares %u values in %u bytes",
                       tsf_type_name(type), pos, *cnt, *blen);
    return TSF_OK;
}

static tsf_status zigzag_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                void *values, size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    size_t pos = 0, i = 0;
    int is64 = is64_type(type);
    *consumed = 0;
    while (i < n) {
        if (pos >= len)
            return tsf_err(err, TSF_ECORRUPT,
                           "ZIGZAG %s: stream ends at byte offset %zu after %zu of %zu values",
                           tsf_type_name(type), pos, i, n);
        size_t body, used;
        uint32_t blen, cnt;
        tsf_status s = block_header(type, src, len, pos, &body, &blen, &cnt, err);
        if (s != TSF_OK) return s;
        size_t take = cnt < n - i ? cnt : n - i;
        int ok = is64 ? tsf_zz_get_i64(src + body, blen, (int64_t *)values + i, take, &used)
                      : tsf_zz_get_i32(src + body, blen, (int32_t *)values + i, take, &used);
        if (!ok)
            return tsf_err(err, TSF_ECORRUPT, "ZIGZAG %s: bad or truncated varint at byte offset %zu",
                           tsf_type_name(type), body + used);
        if (take == cnt && used != blen)
            return tsf_err(err, TSF_ECORRUPT,
                           "ZIGZAG %s: block at byte offset %zu holds %u bytes but its %u values use %zu",
                           tsf_type_name(type), pos, blen, cnt, used);
        i += take;
        pos = body + blen;
    }
    *consumed = pos;
    return TSF_OK;
}

static tsf_status zigzag_count(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    size_t pos = 0, total = 0;
    *n = 0;
    while (pos < len) {
        size_t body;
        uint32_t blen, cnt;
        tsf_status s = block_header(type, src, len, pos, &body, &blen, &cnt, err);
        if (s != TSF_OK) return s;
        total += cnt;
        pos = body + blen;
    }
    *n = total;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_zigzag = {
    .encoding = TSF_ENC_ZIGZAG,
    .encode_types = TSF_TYPES_INTS,
    .decode_types = TSF_TYPES_INTS,
    .bound = zigzag_bound,
    .encode = zigzag_encode,
    .decode = zigzag_decode,
    .count = zigzag_count,
};
