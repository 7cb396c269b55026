/*
 * markers.c - file head and tail (spec §2), marker byte rules (§3) and the 0x04 operation-index
 * record. The head is "TsFile" + version (3 = IoTDB 1.x layout, 4 = TsFile 2.x); the tail is
 * i32 metaSize + "TsFile".
 */
#include "fmt_io.h"

int tsf_fmt_is_chunk_marker(uint8_t m)
{
    uint8_t base = m & 0x3F, mask = m & 0xC0;
    return (base == TSF_MARKER_CHUNK_HEADER || base == TSF_MARKER_ONLY_ONE_PAGE_CHUNK_HEADER) && mask != 0xC0;
}

tsf_chunk_kind tsf_fmt_chunk_kind(uint8_t m)
{
    if (m & TSF_MARKER_TIME_MASK) return TSF_CHUNK_TIME;
    if (m & TSF_MARKER_VALUE_MASK) return TSF_CHUNK_VALUE;
    return TSF_CHUNK_NONALIGNED;
}

int tsf_fmt_chunk_multi_page(uint8_t m)
{
    return (m & 0x3F) == TSF_MARKER_CHUNK_HEADER;
}

uint8_t tsf_fmt_chunk_marker(tsf_chunk_kind kind, uint64_t pages)
{
    uint8_t base = pages <= 1 ? TSF_MARKER_ONLY_ONE_PAGE_CHUNK_HEADER : TSF_MARKER_CHUNK_HEADER;
    if (kind == TSF_CHUNK_TIME) return (uint8_t)(base | TSF_MARKER_TIME_MASK);
    if (kind == TSF_CHUNK_VALUE) return (uint8_t)(base | TSF_MARKER_VALUE_MASK);
    return base;
}

tsf_status tsf_fmt_parse_head(const uint8_t *p, size_t len, int *version, tsf_error *err)
{
    if (len < TSF_FMT_HEAD_LEN)
        return tsf_err(err, TSF_ECORRUPT, "file head at offset 0: truncated (%zu of 7 bytes)", len);
    if (memcmp(p, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN) != 0)
        return tsf_err(err, TSF_ECORRUPT, "file head at offset 0: magic is not \"TsFile\"");
    uint8_t v = p[6];
    if (v == 3 || v == 4) {
        if (version) *version = v;
        return TSF_OK;
    }
    if (v == '0') /* "TsFile000002": the 12-byte magic of v1/v2 */
        return tsf_err(err, TSF_ENOTSUP,
                       "file head at offset 6: pre-v3 format (\"TsFile0000..\") is not supported");
    if (v > 4 && v < 0x20)
        return tsf_err(err, TSF_ENOTSUP, "file head at offset 6: format version %u is newer than 4", v);
    return tsf_err(err, TSF_ECORRUPT, "file head at offset 6: invalid version byte 0x%02x", v);
}

tsf_status tsf_fmt_write_head(int version, uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (version != 3 && version != 4)
        return tsf_err(err, TSF_EINVAL, "file head: version %d is not 3 or 4", version);
    fmt_wr w = fmt_wr_make(dst, cap);
    fmt_wr_bytes(&w, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN);
    fmt_wr_u8(&w, (uint8_t)version);
    return tsf_fmt_wr_finish(&w, "file head", written, err);
}

int tsf_fmt_is_complete(const uint8_t *p, size_t len)
{
    return len >= TSF_FMT_MIN_COMPLETE && memcmp(p, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN) == 0 &&
           memcmp(p + len - TSF_FMT_MAGIC_LEN, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN) == 0;
}

tsf_status tsf_fmt_parse_tail(const uint8_t *p, size_t len, uint64_t file_size, tsf_fmt_tail *out,
                              tsf_error *err)
{
    if (file_size < TSF_FMT_MIN_COMPLETE || len < TSF_FMT_TAIL_LEN || len > file_size)
        return tsf_err(err, TSF_ECORRUPT, "file tail: file of %llu bytes is too short to be complete",
                       (unsigned long long)file_size);
    const uint8_t *t = p + len - TSF_FMT_TAIL_LEN;
    uint64_t at = file_size - TSF_FMT_TAIL_LEN;
    if (memcmp(t + 4, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN) != 0)
        return tsf_err(err, TSF_ECORRUPT,
                       "file tail at offset %llu: magic \"TsFile\" missing (incomplete file)",
                       (unsigned long long)(at + 4));
    uint32_t ms = tsf_load_be32(t);
    /* TsFileMetadata lies between the separator (>= offset 7) and metaSize: [8, size-10). */
    if (ms > INT32_MAX || at < TSF_FMT_HEAD_LEN + 1 || (uint64_t)ms > at - (TSF_FMT_HEAD_LEN + 1))
        return tsf_err(err, TSF_ECORRUPT,
                       "file tail at offset %llu: metaSize %u does not fit in a %llu-byte file",
                       (unsigned long long)at, ms, (unsigned long long)file_size);
    out->meta_size = ms;
    out->meta_pos = at - ms;
    return TSF_OK;
}

tsf_status tsf_fmt_write_tail(uint32_t meta_size, uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (meta_size > INT32_MAX)
        return tsf_err(err, TSF_EINVAL, "file tail: metaSize %u exceeds INT32_MAX", meta_size);
    fmt_wr w = fmt_wr_make(dst, cap);
    fmt_wr_be32(&w, meta_size);
    fmt_wr_bytes(&w, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN);
    return tsf_fmt_wr_finish(&w, "file tail", written, err);
}

tsf_status tsf_fmt_parse_op_index(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_op_index *out,
                                  size_t *used, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    uint8_t m;
    uint64_t a, b;
    tsf_status st = tsf_fmt_rd_u8(&r, "operation index marker", &m, err);
    if (st) return st;
    if (m != TSF_MARKER_OPERATION_INDEX_RANGE)
        return tsf_err(err, TSF_ECORRUPT, "operation index at offset %llu: marker 0x%02x is not 0x04",
                       (unsigned long long)base, m);
    if ((st = tsf_fmt_rd_be64(&r, "operation index minPlanIndex", &a, err))) return st;
    if ((st = tsf_fmt_rd_be64(&r, "operation index maxPlanIndex", &b, err))) return st;
    out->min_plan_index = (int64_t)a;
    out->max_plan_index = (int64_t)b;
    if (used) *used = r.pos;
    return TSF_OK;
}

tsf_status tsf_fmt_write_op_index(const tsf_fmt_op_index *in, uint8_t *dst, size_t cap, size_t *written,
                                  tsf_error *err)
{
    fmt_wr w = fmt_wr_make(dst, cap);
    fmt_wr_u8(&w, TSF_MARKER_OPERATION_INDEX_RANGE);
    fmt_wr_be64(&w, (uint64_t)in->min_plan_index);
    fmt_wr_be64(&w, (uint64_t)in->max_plan_index);
    return tsf_fmt_wr_finish(&w, "operation index", written, err);
}
