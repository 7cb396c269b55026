/*
 * zigzag_varint.h - arrays of zigzag varints, shared by PLAIN INT32/DATE (spec §2) and ZIGZAG
 * (spec §7). Decoding has a word-at-a-time fast path for runs of 1-byte values (|v| < 64), the
 * common case for small integers; longer varints take the byte loop.
 */
#ifndef TSF_ZIGZAG_VARINT_H
#define TSF_ZIGZAG_VARINT_H

#include "../common/bytes.h"

#define TSF_ZZ_HI_BITS 0x8080808080808080ull

/* Writes n values as zigzag varints (at most 5 bytes each); returns the bytes written. */
TSF_INLINE size_t tsf_zz_put_i32(uint8_t *dst, const int32_t *v, size_t n)
{
    uint8_t *p = dst;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = tsf_zigzag32(v[i]);
        if (TSF_LIKELY(u < 0x80))
            *p++ = (uint8_t)u;
        else
            p += tsf_put_uvarint32(p, u);
    }
    return (size_t)(p - dst);
}

/* 64-bit variant (at most 10 bytes each). */
TSF_INLINE size_t tsf_zz_put_i64(uint8_t *dst, const int64_t *v, size_t n)
{
    uint8_t *p = dst;
    for (size_t i = 0; i < n; i++) {
        uint64_t u = tsf_zigzag64(v[i]);
        if (TSF_LIKELY(u < 0x80))
            *p++ = (uint8_t)u;
        else
            p += tsf_put_uvarint64(p, u);
    }
    return (size_t)(p - dst);
}

/* Decodes 1-byte varints from the 8-byte little-endian word w while its bytes have no
 * continuation bit; returns how many (0..8, at most max). */
TSF_INLINE size_t tsf_zz_short_run(uint64_t w, size_t max)
{
    uint64_t hi = w & TSF_ZZ_HI_BITS;
    size_t k = hi ? (size_t)(TSF_CTZ64(hi) >> 3) : 8;
    return k < max ? k : max;
}

/*
 * Decodes n zigzag varints from src[0..len) into v. Returns 1 with *at = the bytes used, or 0
 * with *at = the byte offset of the first malformed or truncated varint.
 */
TSF_INLINE int tsf_zz_get_i32(const uint8_t *src, size_t len, int32_t *v, size_t n, size_t *at)
{
    size_t pos = 0, i = 0;
    while (i < n) {
        if (len - pos >= 8) {
            uint64_t w = tsf_load_le64(src + pos);
            size_t k = tsf_zz_short_run(w, n - i);
            for (size_t j = 0; j < k; j++) v[i + j] = tsf_unzigzag32((uint32_t)(w >> (8 * j)) & 0xff);
            i += k;
            pos += k;
            if (k == 8 || i == n) continue;
        }
        uint32_t u;
        size_t m = tsf_get_uvarint32(src + pos, len - pos, &u);
        if (TSF_UNLIKELY(m == 0)) {
            *at = pos;
            return 0;
        }
        v[i++] = tsf_unzigzag32(u);
        pos += m;
    }
    *at = pos;
    return 1;
}

/* 64-bit variant (varints of at most 10 bytes). */
TSF_INLINE int tsf_zz_get_i64(const uint8_t *src, size_t len, int64_t *v, size_t n, size_t *at)
{
    size_t pos = 0, i = 0;
    while (i < n) {
        if (len - pos >= 8) {
            uint64_t w = tsf_load_le64(src + pos);
            size_t k = tsf_zz_short_run(w, n - i);
            for (size_t j = 0; j < k; j++) v[i + j] = tsf_unzigzag64((w >> (8 * j)) & 0xff);
            i += k;
            pos += k;
            if (k == 8 || i == n) continue;
        }
        uint64_t u;
        size_t m = tsf_get_uvarint64(src + pos, len - pos, &u);
        if (TSF_UNLIKELY(m == 0)) {
            *at = pos;
            return 0;
        }
        v[i++] = tsf_unzigzag64(u);
        pos += m;
    }
    *at = pos;
    return 1;
}

#endif
