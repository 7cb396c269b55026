/*
 * dictionary.c - DICTIONARY (spec tsfile-encodings.md §6) for TEXT and STRING:
 * varint(entryCount), the entries in first-seen order (varint(len) + bytes), then one IntRLE
 * package (§5) of the per-value entry indices.
 *
 * Encoder: a small open-addressing hash table (linear probing, power-of-two size >= 2n),
 * allocated per call through the codec's allocator, maps each distinct string to its index.
 * Decoder: the entry table is allocated per call after checking the entry count against the
 * bytes left (every entry takes at least one byte); indices are checked against the count, and
 * the decoded tsf_bytes borrow from the source.
 */
#include <stdio.h>
#include <string.h>

#include "../common/bytes.h"
#include "codec.h"

static size_t dict_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)type;
    size_t rle = tsf_rle_bound_n(n, 0);
    if (n > SIZE_MAX / 8) return SIZE_MAX;
    size_t a = TSF_UVARINT32_MAX + n * TSF_UVARINT32_MAX;
    if (var_bytes > SIZE_MAX - a || rle > SIZE_MAX - a - var_bytes) return SIZE_MAX;
    return a + var_bytes + rle;
}

/* A 64-bit multiply-xorshift hash, 8 bytes at a time. */
static uint64_t dict_hash(const uint8_t *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)len;
    while (len >= 8) {
        h = (h ^ tsf_load_le64(p)) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t t = 0;
        for (size_t i = 0; i < len; i++) t |= (uint64_t)p[i] << (8 * i);
        h = (h ^ t) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static tsf_status dict_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                              size_t cap, size_t *written, tsf_error *err)
{
    const tsf_bytes *v = (const tsf_bytes *)values;
    size_t var_bytes = 0;
    *written = 0;
    if (n > (size_t)INT32_MAX)
        return tsf_err(err, TSF_ERANGE, "DICTIONARY %s encode: %zu values, over 2^31-1", tsf_type_name(type),
                       n);
    for (size_t i = 0; i < n; i++) {
        if (v[i].len > (size_t)INT32_MAX)
            return tsf_err(err, TSF_ERANGE, "DICTIONARY %s encode: value %zu is %zu bytes, over 2^31-1",
                           tsf_type_name(type), i, v[i].len);
        var_bytes += v[i].len;
    }
    size_t need = dict_bound(type, n, var_bytes);
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "DICTIONARY %s encode: dst holds %zu bytes, needs %zu",
                       tsf_type_name(type), cap, need);

    /* table slots (entry + 1, 0 = empty), entry -> first value, entry hashes, value indices */
    size_t slots = 16;
    while (slots < 2 * n) slots *= 2;
    size_t words = slots + 3 * n;
    uint32_t *mem = (uint32_t *)tsf_calloc(&c->alloc, words, sizeof(uint32_t));
    if (!mem) return tsf_err(err, TSF_ENOMEM, "DICTIONARY %s encode: out of memory", tsf_type_name(type));
    uint32_t *table = mem, *first = mem + slots, *hashes = first + n;
    int32_t *idx = (int32_t *)(hashes + n);
    uint32_t entries = 0;
    size_t mask = slots - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = dict_hash(v[i].data, v[i].len);
        size_t s = (size_t)h & mask;
        uint32_t e;
        for (;;) {
            if (table[s] == 0) {
                e = entries++;
                table[s] = e + 1;
                first[e] = (uint32_t)i;
                hashes[e] = (uint32_t)h;
                break;
            }
            e = table[s] - 1;
            const tsf_bytes *b = &v[first[e]];
            if (hashes[e] == (uint32_t)h && b->len == v[i].len &&
                (b->len == 0 || !memcmp(b->data, v[i].data, b->len)))
                break;
            s = (s + 1) & mask;
        }
        idx[i] = (int32_t)e;
    }

    uint8_t *p = dst;
    p += tsf_put_uvarint32(p, tsf_zigzag32((int32_t)entries));
    for (uint32_t e = 0; e < entries; e++) {
        const tsf_bytes *b = &v[first[e]];
        p += tsf_put_uvarint32(p, tsf_zigzag32((int32_t)b->len));
        if (b->len) memcpy(p, b->data, b->len);
        p += b->len;
    }
    size_t used = 0;
    tsf_status s = tsf_rle_encode_i32(c, idx, n, p, cap - (size_t)(p - dst), &used, err);
    tsf_free(&c->alloc, mem, words * sizeof(uint32_t));
    if (s != TSF_OK) return s;
    *written = (size_t)(p - dst) + used;
    return TSF_OK;
}

static tsf_status dict_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                              size_t n, size_t *consumed, tsf_error *err)
{
    tsf_bytes *out = (tsf_bytes *)values;
    const char *tn = tsf_type_name(type);
    uint32_t u = 0;
    *consumed = 0;
    size_t pos = tsf_get_uvarint32(src, len, &u);
    int32_t cnt = tsf_unzigzag32(u);
    if (pos == 0 || cnt < 0)
        return tsf_err(err, TSF_ECORRUPT, "DICTIONARY %s: bad entry count at byte offset 0", tn);
    if ((size_t)cnt > len - pos)
        return tsf_err(err, TSF_ECORRUPT,
                       "DICTIONARY %s: %d entries cannot fit the %zu bytes after byte offset %zu", tn,
                       (int)cnt, len - pos, pos);
    if (n > (SIZE_MAX - (size_t)cnt * sizeof(tsf_bytes)) / sizeof(int32_t))
        return tsf_err(err, TSF_ENOMEM, "DICTIONARY %s: %zu values are too many", tn, n);
    size_t bytes = (size_t)cnt * sizeof(tsf_bytes) + n * sizeof(int32_t);
    void *mem = tsf_alloc(&c->alloc, bytes);
    if (!mem) return tsf_err(err, TSF_ENOMEM, "DICTIONARY %s: out of memory", tn);
    tsf_bytes *ent = (tsf_bytes *)mem;
    int32_t *idx = (int32_t *)(ent + cnt);
    tsf_status s = TSF_OK;
    for (int32_t e = 0; e < cnt && s == TSF_OK; e++) {
        uint32_t lu = 0;
        size_t m = tsf_get_uvarint32(src + pos, len - pos, &lu);
        int32_t l = tsf_unzigzag32(lu);
        if (m == 0 || l < 0 || (size_t)l > len - pos - m) {
            s = tsf_err(err, TSF_ECORRUPT, "DICTIONARY %s: bad or truncated entry %d at byte offset %zu", tn,
                        (int)e, pos);
            break;
        }
        ent[e].data = src + pos + m;
        ent[e].len = (size_t)l;
        pos += m + (size_t)l;
    }
    size_t used = 0;
    if (s == TSF_OK && n > 0) {
        s = tsf_rle_decode_i32(c, src + pos, len - pos, idx, n, &used, err);
        if (s != TSF_OK && err) {
            char inner[TSF_ERROR_MESSAGE_SIZE];
            snprintf(inner, sizeof inner, "%s", err->message);
            s = tsf_err(err, s, "DICTIONARY %s: index stream at byte offset %zu: %s", tn, pos, inner);
        }
    }
    for (size_t i = 0; i < n && s == TSF_OK; i++) {
        uint32_t k = (uint32_t)idx[i];
        if (k >= (uint32_t)cnt) {
            s = tsf_err(err, TSF_ECORRUPT,
                        "DICTIONARY %s: value %zu has index %u, but only %d entries (index stream at byte "
                        "offset %zu)",
                        tn, i, k, (int)cnt, pos);
            break;
        }
        out[i] = ent[k];
    }
    tsf_free(&c->alloc, mem, bytes);
    if (s == TSF_OK) *consumed = pos + used;
    return s;
}

/* Skips the entries, then counts the index package(s). */
static tsf_status dict_count(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    uint32_t u = 0;
    *n = 0;
    size_t pos = tsf_get_uvarint32(src, len, &u);
    int32_t cnt = tsf_unzigzag32(u);
    if (pos == 0 || cnt < 0)
        return tsf_err(err, TSF_ECORRUPT, "DICTIONARY %s: bad entry count at byte offset 0",
                       tsf_type_name(type));
    for (int32_t e = 0; e < cnt; e++) {
        uint32_t lu = 0;
        size_t m = tsf_get_uvarint32(src + pos, len - pos, &lu);
        int32_t l = tsf_unzigzag32(lu);
        if (m == 0 || l < 0 || (size_t)l > len - pos - m)
            return tsf_err(err, TSF_ECORRUPT, "DICTIONARY %s: bad or truncated entry %d at byte offset %zu",
                           tsf_type_name(type), (int)e, pos);
        pos += m + (size_t)l;
    }
    return tsf_codec_count(TSF_INT32, TSF_ENC_RLE, src + pos, len - pos, n, err);
}

#define TSF_DICT_TYPES (TSF_TYPE_BIT(TSF_TEXT) | TSF_TYPE_BIT(TSF_STRING))

const tsf_codec_vt tsf_codec_dictionary = {
    .encoding = TSF_ENC_DICTIONARY,
    .encode_types = TSF_DICT_TYPES,
    .decode_types = TSF_DICT_TYPES,
    .bound = dict_bound,
    .encode = dict_encode,
    .decode = dict_decode,
    .count = dict_count,
};
