/*
 * headers.c - chunk headers (spec §5: marker, varstr measurementId, uvarint dataSize, data type,
 * compression, encoding), page headers (§6.1: uvarint uncompressedSize, uvarint compressedSize,
 * statistics only in multi-page chunks; a lone 0x00 is an empty aligned value page) and the page
 * bodies after decompression: non-aligned (§6.3, uvarint timeLen + time + values) and aligned
 * value pages (§6.4, i32 rowCount + MSB-first null bitmap + non-null values).
 */
#include "fmt_io.h"

static int data_type_known(uint8_t t)
{
    return tsf_fmt_stats_type_ok(t); /* 0..12 except 7 UNKNOWN, VECTOR included */
}

tsf_status tsf_fmt_parse_chunk_header(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_chunk_header *out,
                                      size_t *used, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    uint8_t m, t, c, e;
    if ((st = tsf_fmt_rd_u8(&r, "chunk header marker", &m, err))) return st;
    if (!tsf_fmt_is_chunk_marker(m))
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: 0x%02x is not a chunk marker",
                       (unsigned long long)base, m);
    if ((st = tsf_fmt_rd_varstr(&r, "chunk header measurementId", &out->measurement, err))) return st;
    if (out->measurement.is_null)
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: null measurementId",
                       (unsigned long long)base);
    if ((st = tsf_fmt_rd_uvarint(&r, "chunk header dataSize", &out->data_size, err))) return st;
    if (out->data_size > INT32_MAX)
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: dataSize %u exceeds INT32_MAX",
                       (unsigned long long)base, out->data_size);
    uint64_t at = fmt_rd_off(&r);
    if ((st = tsf_fmt_rd_u8(&r, "chunk header dataType", &t, err))) return st;
    if ((st = tsf_fmt_rd_u8(&r, "chunk header compressionType", &c, err))) return st;
    if ((st = tsf_fmt_rd_u8(&r, "chunk header encoding", &e, err))) return st;
    if (!data_type_known(t))
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: unknown data type %u",
                       (unsigned long long)at, t);
    if (c > TSF_LZMA2)
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: unknown compression %u",
                       (unsigned long long)(at + 1), c);
    if (e > 17)
        return tsf_err(err, TSF_ECORRUPT, "chunk header at offset %llu: unknown encoding %u",
                       (unsigned long long)(at + 2), e);
    out->marker = m;
    out->data_type = (tsf_type)t;
    out->compression = (tsf_compression)c;
    out->encoding = (tsf_encoding)e;
    out->header_len = r.pos;
    if (used) *used = r.pos;
    return TSF_OK;
}

tsf_status tsf_fmt_write_chunk_header(const tsf_fmt_chunk_header *in, uint8_t *dst, size_t cap,
                                      size_t *written, tsf_error *err)
{
    fmt_wr w = fmt_wr_make(dst, cap);
    tsf_status st;
    if (!tsf_fmt_is_chunk_marker(in->marker))
        return tsf_err(err, TSF_EINVAL, "chunk header: 0x%02x is not a chunk marker", in->marker);
    if (in->measurement.is_null) return tsf_err(err, TSF_EINVAL, "chunk header: null measurementId");
    if (in->data_size > INT32_MAX)
        return tsf_err(err, TSF_EINVAL, "chunk header: dataSize %u too large", in->data_size);
    fmt_wr_u8(&w, in->marker);
    if ((st = tsf_fmt_wr_varstr(&w, in->measurement.data, in->measurement.len, 0, err))) return st;
    fmt_wr_uvarint(&w, in->data_size);
    fmt_wr_u8(&w, (uint8_t)in->data_type);
    fmt_wr_u8(&w, (uint8_t)in->compression);
    fmt_wr_u8(&w, (uint8_t)in->encoding);
    return tsf_fmt_wr_finish(&w, "chunk header", written, err);
}

tsf_status tsf_fmt_parse_page_header(const uint8_t *p, size_t len, uint64_t base, tsf_type type,
                                     int with_stats, tsf_fmt_page_header *out, size_t *used, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    memset(out, 0, sizeof *out);
    if ((st = tsf_fmt_rd_uvarint(&r, "page header uncompressedSize", &out->uncompressed_size, err)))
        return st;
    if (out->uncompressed_size != 0) {
        if ((st = tsf_fmt_rd_uvarint(&r, "page header compressedSize", &out->compressed_size, err)))
            return st;
        if (out->uncompressed_size > INT32_MAX || out->compressed_size > INT32_MAX)
            return tsf_err(err, TSF_ECORRUPT, "page header at offset %llu: size %u/%u exceeds INT32_MAX",
                           (unsigned long long)base, out->uncompressed_size, out->compressed_size);
        if (with_stats) {
            size_t n;
            if ((st =
                     tsf_fmt_parse_stats(p + r.pos, len - r.pos, fmt_rd_off(&r), type, &out->stats, &n, err)))
                return st;
            out->has_stats = 1;
            r.pos += n;
        }
    }
    out->header_len = r.pos;
    if (used) *used = r.pos;
    return TSF_OK;
}

size_t tsf_fmt_page_header_size(uint32_t usize, uint32_t csize, size_t stats_len)
{
    if (!usize) return 1;
    return tsf_uvarint32_size(usize) + tsf_uvarint32_size(csize) + stats_len;
}

tsf_status tsf_fmt_write_page_header(const tsf_fmt_page_header *in, uint8_t *dst, size_t cap, size_t *written,
                                     tsf_error *err)
{
    fmt_wr w = fmt_wr_make(dst, cap);
    tsf_status st;
    if (in->uncompressed_size > INT32_MAX || in->compressed_size > INT32_MAX)
        return tsf_err(err, TSF_EINVAL, "page header: size %u/%u exceeds INT32_MAX", in->uncompressed_size,
                       in->compressed_size);
    fmt_wr_uvarint(&w, in->uncompressed_size);
    if (in->uncompressed_size != 0) {
        fmt_wr_uvarint(&w, in->compressed_size);
        if (in->has_stats && (st = tsf_fmt_wr_stats(&w, &in->stats, err))) return st;
    }
    return tsf_fmt_wr_finish(&w, "page header", written, err);
}

tsf_status tsf_fmt_parse_nonaligned_page(const uint8_t *p, size_t len, uint64_t base,
                                         tsf_fmt_nonaligned_page *out, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    uint32_t tl;
    tsf_status st = tsf_fmt_rd_uvarint(&r, "page body timeBytesLength", &tl, err);
    if (st) return st;
    if (tl > fmt_rd_left(&r))
        return tsf_err(err, TSF_ECORRUPT,
                       "page body at offset %llu: timeBytesLength %u exceeds the %zu bytes left",
                       (unsigned long long)base, tl, fmt_rd_left(&r));
    out->time = p + r.pos;
    out->time_len = tl;
    out->values = p + r.pos + tl;
    out->values_len = len - r.pos - tl;
    return TSF_OK;
}

tsf_status tsf_fmt_write_nonaligned_prefix(size_t time_len, uint8_t *dst, size_t cap, size_t *written,
                                           tsf_error *err)
{
    if (time_len > INT32_MAX)
        return tsf_err(err, TSF_EINVAL, "page body: time length %zu too large", time_len);
    fmt_wr w = fmt_wr_make(dst, cap);
    fmt_wr_uvarint(&w, (uint32_t)time_len);
    return tsf_fmt_wr_finish(&w, "page body prefix", written, err);
}

/* Set bits of a 64-bit word without a library call (the library is built without -mpopcnt). */
static inline uint32_t popcount64(uint64_t w)
{
    w = w - ((w >> 1) & 0x5555555555555555ull);
    w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((w * 0x0101010101010101ull) >> 56);
}

uint32_t tsf_fmt_bitmap_count(const uint8_t *bitmap, size_t n)
{
    uint32_t c = 0;
    size_t full = n >> 3, i = 0;
    for (; i + 8 <= full; i += 8) { /* eight bytes at a time; all-ones words (no nulls) short-cut */
        uint64_t w;
        memcpy(&w, bitmap + i, 8);
        c += w == ~0ull ? 64 : popcount64(w);
    }
    for (; i < full; i++) c += popcount64(bitmap[i]);
    if (n & 7) c += popcount64(bitmap[full] & (0xFFu << (8 - (n & 7))) & 0xFFu);
    return c;
}

tsf_status tsf_fmt_parse_value_page(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_value_page *out,
                                    tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    uint32_t rows;
    tsf_status st = tsf_fmt_rd_be32(&r, "value page rowCount", &rows, err);
    if (st) return st;
    if (rows > INT32_MAX)
        return tsf_err(err, TSF_ECORRUPT, "value page at offset %llu: negative rowCount %d",
                       (unsigned long long)base, (int)(int32_t)rows);
    size_t bl = ((size_t)rows + 7) / 8;
    if (bl > fmt_rd_left(&r))
        return tsf_err(err, TSF_ECORRUPT,
                       "value page at offset %llu: bitmap of %u rows exceeds the %zu bytes left",
                       (unsigned long long)base, rows, fmt_rd_left(&r));
    out->row_count = rows;
    out->bitmap = p + 4;
    out->bitmap_len = bl;
    out->present = tsf_fmt_bitmap_count(out->bitmap, rows);
    out->values = p + 4 + bl;
    out->values_len = len - 4 - bl;
    return TSF_OK;
}

tsf_status tsf_fmt_write_value_page_prefix(uint32_t row_count, const uint8_t *bitmap, uint8_t *dst,
                                           size_t cap, size_t *written, tsf_error *err)
{
    if (row_count > INT32_MAX)
        return tsf_err(err, TSF_EINVAL, "value page: rowCount %u too large", row_count);
    fmt_wr w = fmt_wr_make(dst, cap);
    fmt_wr_be32(&w, row_count);
    fmt_wr_bytes(&w, bitmap, ((size_t)row_count + 7) / 8);
    return tsf_fmt_wr_finish(&w, "value page prefix", written, err);
}
