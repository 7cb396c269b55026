/*
 * device_id.c - device identifiers (spec §4): the v4 StringArrayDeviceID (uvarint segment count +
 * varstr segments, null = 0x01, trailing nulls stripped on write, count 0 read as [""]) and the v3
 * PlainDeviceID (one varstr path), plus the chunk group header (0x00 + device id).
 */
#include "fmt_io.h"

tsf_status tsf_fmt_parse_device_id(const uint8_t *p, size_t len, uint64_t base, int version,
                                   tsf_fmt_device_id *out, size_t *used, tsf_error *err)
{
    static const uint8_t empty[1] = {0};
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    out->version = version;
    if (version == 3) {
        if ((st = tsf_fmt_rd_varstr(&r, "device id (v3 path)", &out->seg[0], err))) return st;
        if (out->seg[0].is_null)
            return tsf_err(err, TSF_ECORRUPT, "device id at offset %llu: null path",
                           (unsigned long long)base);
        out->nseg = 1;
    } else {
        uint32_t n;
        if ((st = tsf_fmt_rd_uvarint(&r, "device id segment count", &n, err))) return st;
        /* each segment takes at least one byte: reject counts the bytes cannot hold before looping */
        if (n > fmt_rd_left(&r))
            return tsf_err(err, TSF_ECORRUPT,
                           "device id at offset %llu: %u segments exceed the %zu bytes left",
                           (unsigned long long)base, n, fmt_rd_left(&r));
        for (uint32_t i = 0; i < n; i++) {
            tsf_fmt_str s;
            if ((st = tsf_fmt_rd_varstr(&r, "device id segment", &s, err))) return st;
            if (i < TSF_FMT_DEVICE_INLINE) out->seg[i] = s;
        }
        out->nseg = n;
        if (n == 0) { /* Java reads an empty id as the single segment "" */
            out->seg[0].data = empty;
            out->seg[0].len = 0;
            out->seg[0].is_null = 0;
            out->nseg = 1;
        }
    }
    out->raw = p;
    out->raw_len = r.pos;
    if (used) *used = r.pos;
    return TSF_OK;
}

tsf_fmt_str tsf_fmt_device_segment(const tsf_fmt_device_id *d, uint32_t i)
{
    tsf_fmt_str s = {NULL, 0, 1};
    if (i >= d->nseg) return s;
    if (i < TSF_FMT_DEVICE_INLINE) return d->seg[i];
    /* beyond the inline cache: re-walk the already validated bytes */
    fmt_rd r = fmt_rd_make(d->raw, d->raw_len, 0);
    uint32_t n;
    if (tsf_fmt_rd_uvarint(&r, "", &n, NULL)) return s;
    for (uint32_t k = 0; k <= i; k++)
        if (tsf_fmt_rd_varstr(&r, "", &s, NULL)) return s;
    return s;
}

tsf_status tsf_fmt_write_device_id(const tsf_fmt_str *segs, uint32_t nseg, int version, uint8_t *dst,
                                   size_t cap, size_t *written, tsf_error *err)
{
    fmt_wr w = fmt_wr_make(dst, cap);
    tsf_status st;
    if (version == 3) {
        if (nseg != 1 || segs[0].is_null)
            return tsf_err(err, TSF_EINVAL, "device id (v3): needs exactly one non-null path");
        if ((st = tsf_fmt_wr_varstr(&w, segs[0].data, segs[0].len, 0, err))) return st;
        return tsf_fmt_wr_finish(&w, "device id", written, err);
    }
    if (version != 4) return tsf_err(err, TSF_EINVAL, "device id: version %d is not 3 or 4", version);
    while (nseg > 0 && segs[nseg - 1].is_null) nseg--; /* formalize: drop trailing nulls */
    if (nseg == 0) return tsf_err(err, TSF_EINVAL, "device id: no non-null segment");
    fmt_wr_uvarint(&w, nseg);
    for (uint32_t i = 0; i < nseg; i++)
        if ((st = tsf_fmt_wr_varstr(&w, segs[i].data, segs[i].len, segs[i].is_null, err))) return st;
    return tsf_fmt_wr_finish(&w, "device id", written, err);
}

static void put_bytes(char *buf, size_t cap, size_t *n, const void *src, size_t len)
{
    for (size_t k = 0; k < len; k++, (*n)++)
        if (*n + 1 < cap) buf[*n] = ((const char *)src)[k];
}

size_t tsf_fmt_device_to_string(const tsf_fmt_device_id *d, char *buf, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < d->nseg; i++) {
        tsf_fmt_str s = tsf_fmt_device_segment(d, i);
        if (i > 0) put_bytes(buf, cap, &n, ".", 1);
        if (s.is_null)
            put_bytes(buf, cap, &n, "null", 4);
        else
            put_bytes(buf, cap, &n, s.data, s.len);
    }
    if (cap) buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

tsf_status tsf_fmt_parse_chunk_group_header(const uint8_t *p, size_t len, uint64_t base, int version,
                                            tsf_fmt_device_id *out, size_t *used, tsf_error *err)
{
    if (len < 1)
        return tsf_err(err, TSF_ECORRUPT, "chunk group header at offset %llu: truncated",
                       (unsigned long long)base);
    if (p[0] != TSF_MARKER_CHUNK_GROUP_HEADER)
        return tsf_err(err, TSF_ECORRUPT, "chunk group header at offset %llu: marker 0x%02x is not 0x00",
                       (unsigned long long)base, p[0]);
    size_t n;
    tsf_status st = tsf_fmt_parse_device_id(p + 1, len - 1, base + 1, version, out, &n, err);
    if (st) return st;
    if (used) *used = n + 1;
    return TSF_OK;
}

tsf_status tsf_fmt_write_chunk_group_header(const tsf_fmt_str *segs, uint32_t nseg, int version, uint8_t *dst,
                                            size_t cap, size_t *written, tsf_error *err)
{
    size_t n = 0;
    tsf_status st;
    if (cap >= 1) {
        dst[0] = TSF_MARKER_CHUNK_GROUP_HEADER;
        st = tsf_fmt_write_device_id(segs, nseg, version, dst + 1, cap - 1, &n, err);
    } else {
        st = tsf_fmt_write_device_id(segs, nseg, version, NULL, 0, &n, err);
        if (st == TSF_OK || st == TSF_ERANGE)
            st = tsf_err(err, TSF_ERANGE, "chunk group header: buffer holds 0 bytes");
    }
    if (written) *written = (st == TSF_OK || st == TSF_ERANGE) ? n + 1 : 0; /* ERANGE: the size needed */
    return st;
}
