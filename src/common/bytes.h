/*
 * bytes.h - the one place that loads and stores multi-byte fields. TsFile (Java) is big-endian;
 * a few fields are little-endian (INT32 RLE run values, the GORILLA_V1 first value). All accesses
 * go through memcpy so they are alignment-safe; compilers turn them into single moves + bswap.
 * Varints: uvarint = unsigned LEB128 of a 32-bit value (at most 5 bytes); varint = zigzag + uvarint.
 */
#ifndef TSF_BYTES_H
#define TSF_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"

TSF_INLINE uint16_t tsf_bswap16(uint16_t v) { return (uint16_t)((v >> 8) | (v << 8)); }
TSF_INLINE uint32_t tsf_bswap32(uint32_t v) { return __builtin_bswap32(v); }
TSF_INLINE uint64_t tsf_bswap64(uint64_t v) { return __builtin_bswap64(v); }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TSF_BIG_ENDIAN_HOST 1
#endif

TSF_INLINE uint32_t tsf_load_be32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#ifdef TSF_BIG_ENDIAN_HOST
    return v;
#else
    return tsf_bswap32(v);
#endif
}
TSF_INLINE uint64_t tsf_load_be64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#ifdef TSF_BIG_ENDIAN_HOST
    return v;
#else
    return tsf_bswap64(v);
#endif
}
TSF_INLINE uint16_t tsf_load_be16(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint16_t)((b[0] << 8) | b[1]);
}
TSF_INLINE uint32_t tsf_load_le32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#ifdef TSF_BIG_ENDIAN_HOST
    return tsf_bswap32(v);
#else
    return v;
#endif
}
TSF_INLINE uint64_t tsf_load_le64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#ifdef TSF_BIG_ENDIAN_HOST
    return tsf_bswap64(v);
#else
    return v;
#endif
}
TSF_INLINE void tsf_store_be32(void *p, uint32_t v)
{
#ifndef TSF_BIG_ENDIAN_HOST
    v = tsf_bswap32(v);
#endif
    memcpy(p, &v, 4);
}
TSF_INLINE void tsf_store_be64(void *p, uint64_t v)
{
#ifndef TSF_BIG_ENDIAN_HOST
    v = tsf_bswap64(v);
#endif
    memcpy(p, &v, 8);
}
TSF_INLINE void tsf_store_be16(void *p, uint16_t v)
{
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}
TSF_INLINE void tsf_store_le32(void *p, uint32_t v)
{
#ifdef TSF_BIG_ENDIAN_HOST
    v = tsf_bswap32(v);
#endif
    memcpy(p, &v, 4);
}
TSF_INLINE void tsf_store_le64(void *p, uint64_t v)
{
#ifdef TSF_BIG_ENDIAN_HOST
    v = tsf_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* Zigzag maps signed to unsigned so small magnitudes stay small. */
TSF_INLINE uint32_t tsf_zigzag32(int32_t v) { return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31); }
TSF_INLINE int32_t tsf_unzigzag32(uint32_t u) { return (int32_t)((u >> 1) ^ (0u - (u & 1))); }
TSF_INLINE uint64_t tsf_zigzag64(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
TSF_INLINE int64_t tsf_unzigzag64(uint64_t u) { return (int64_t)((u >> 1) ^ (0ull - (u & 1))); }

#define TSF_UVARINT32_MAX 5
#define TSF_UVARINT64_MAX 10

/* Writes an unsigned LEB128; returns bytes written (dst needs TSF_UVARINT32_MAX / 64_MAX). */
TSF_INLINE size_t tsf_put_uvarint32(uint8_t *dst, uint32_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        dst[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[i++] = (uint8_t)v;
    return i;
}
TSF_INLINE size_t tsf_put_uvarint64(uint8_t *dst, uint64_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        dst[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[i++] = (uint8_t)v;
    return i;
}
TSF_INLINE size_t tsf_uvarint32_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

/*
 * Reads an unsigned LEB128 of at most 32 bits from p[0..len). Returns bytes used, or 0 if the
 * input is truncated or longer than 5 bytes (the caller reports TSF_ECORRUPT). Bits above 32 in
 * the fifth byte are dropped, as Java's int arithmetic does.
 */
TSF_INLINE size_t tsf_get_uvarint32(const uint8_t *p, size_t len, uint32_t *out)
{
    uint32_t v = 0;
    for (size_t i = 0; i < len && i < TSF_UVARINT32_MAX; i++) {
        v |= (uint32_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}
/* 64-bit LEB128 (ZIGZAG INT64 values), at most 10 bytes; 0 on error. */
TSF_INLINE size_t tsf_get_uvarint64(const uint8_t *p, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len && i < TSF_UVARINT64_MAX; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

#endif
