/*
 * regular.c - REGULAR (encoding code 7), legacy and read-only, spec §3.5.
 *
 * A page is a sequence of blocks (the reference writer's blocks hold up to 128 values):
 *   isMissingPoint  1 byte (0 or 1)
 *   [if 1: bitmapLen int32 BE, then java.util.BitSet.toByteArray() bytes: bit k = byte k/8, bit k%8]
 *   count           int32 BE (values, or the expanded number of positions when points are missing)
 *   minDelta        int32 / int64 BE
 *   first           int32 / int64 BE
 * Block values are first + k*minDelta (wrapping) for every position k < count, or, when points are
 * missing, for every k < count whose bitmap bit is set (bits past the bitmap are clear).
 *
 * Count-driven: decoding stops after n values; a block yielding more values than needed is cut.
 * Hostile input: flag other than 0/1, negative lengths/counts, a block yielding no value,
 * truncation -> TSF_ECORRUPT. Work per block is bounded by the bytes it occupies and by n.
 */
#include <string.h>

#include "../common/bytes.h"
#include "codec.h"

static tsf_status reg_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                             size_t n, size_t *consumed, tsf_error *err)
{
    (void)c;
    const int is64 = (TSF_TYPE_BIT(type) & TSF_TYPES_INT64) != 0;
    const size_t vw = is64 ? 8 : 4;
    size_t pos = 0, i = 0;
    *consumed = 0;
    while (i < n) {
        size_t at = pos;
        if (len - pos < 1) return tsf_err(err, TSF_ECORRUPT, "REGULAR: stream ends at byte offset %zu", pos);
        uint8_t missing = src[pos++];
        if (missing > 1)
            return tsf_err(err, TSF_ECORRUPT, "REGULAR: missing-point flag %u at byte offset %zu", missing,
                           at);
        const uint8_t *bitmap = NULL;
        size_t nbits = 0;
        if (missing) {
            if (len - pos < 4)
                return tsf_err(err, TSF_ECORRUPT, "REGULAR: truncated bitmap length at byte offset %zu", pos);
            int32_t bl = (int32_t)tsf_load_be32(src + pos);
            pos += 4;
            if (bl < 0 || (size_t)bl > len - pos)
                return tsf_err(err, TSF_ECORRUPT, "REGULAR: bitmap length %d at byte offset %zu", bl,
                               pos - 4);
            bitmap = src + pos;
            nbits = (size_t)bl * 8;
            pos += (size_t)bl;
        }
        if (len - pos < 4 + 2 * vw)
            return tsf_err(err, TSF_ECORRUPT, "REGULAR: truncated block header at byte offset %zu", pos);
        int32_t cnt = (int32_t)tsf_load_be32(src + pos);
        uint64_t md =
            is64 ? tsf_load_be64(src + pos + 4) : (uint64_t)(int64_t)(int32_t)tsf_load_be32(src + pos + 4);
        uint64_t v =
            is64 ? tsf_load_be64(src + pos + 12) : (uint64_t)(int64_t)(int32_t)tsf_load_be32(src + pos + 8);
        if (cnt <= 0)
            return tsf_err(err, TSF_ECORRUPT, "REGULAR: block count %d at byte offset %zu", cnt, pos);
        pos += 4 + 2 * vw;
        size_t positions = (size_t)cnt, got = 0;
        if (missing && positions > nbits) positions = nbits; /* bits past the bitmap are clear */
        for (size_t k = 0; k < positions && i < n; k++, v += md) {
            if (missing && !((bitmap[k >> 3] >> (k & 7)) & 1)) continue;
            if (is64)
                memcpy((uint8_t *)values + vw * i, &v, 8);
            else {
                uint32_t u = (uint32_t)v;
                memcpy((uint8_t *)values + vw * i, &u, 4);
            }
            i++;
            got++;
        }
        if (got == 0)
            return tsf_err(err, TSF_ECORRUPT, "REGULAR: block at byte offset %zu holds no value", at);
    }
    *consumed = pos;
    return TSF_OK;
}

const tsf_codec_vt tsf_codec_regular = {
    .encoding = TSF_ENC_REGULAR,
    .encode_types = 0,
    .decode_types = TSF_TYPES_INTS,
    .bound = NULL,
    .encode = NULL,
    .decode = reg_decode,
    .count = NULL,
};
