/*
 * fmt_io.c - the bounds-checked primitives of the container (spec §1: big-endian i32/i64, uvarint,
 * zig-zag varint-length varstr, i32-length binary) used by every format parser and writer.
 */
#include "fmt_io.h"

tsf_status tsf_fmt_truncated(const fmt_rd *r, const char *what, size_t need, tsf_error *err)
{
    return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: truncated (needs %zu bytes, %zu left)", what,
                   (unsigned long long)fmt_rd_off(r), need, fmt_rd_left(r));
}

tsf_status tsf_fmt_rd_u8(fmt_rd *r, const char *what, uint8_t *v, tsf_error *err)
{
    if (fmt_rd_left(r) < 1) return tsf_fmt_truncated(r, what, 1, err);
    *v = r->p[r->pos++];
    return TSF_OK;
}

tsf_status tsf_fmt_rd_be32(fmt_rd *r, const char *what, uint32_t *v, tsf_error *err)
{
    if (fmt_rd_left(r) < 4) return tsf_fmt_truncated(r, what, 4, err);
    *v = tsf_load_be32(r->p + r->pos);
    r->pos += 4;
    return TSF_OK;
}

tsf_status tsf_fmt_rd_be64(fmt_rd *r, const char *what, uint64_t *v, tsf_error *err)
{
    if (fmt_rd_left(r) < 8) return tsf_fmt_truncated(r, what, 8, err);
    *v = tsf_load_be64(r->p + r->pos);
    r->pos += 8;
    return TSF_OK;
}

tsf_status tsf_fmt_rd_uvarint(fmt_rd *r, const char *what, uint32_t *v, tsf_error *err)
{
    size_t n = tsf_get_uvarint32(r->p + r->pos, fmt_rd_left(r), v);
    if (n == 0)
        return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: truncated or over-long uvarint", what,
                       (unsigned long long)fmt_rd_off(r));
    r->pos += n;
    return TSF_OK;
}

tsf_status tsf_fmt_rd_varstr(fmt_rd *r, const char *what, tsf_fmt_str *s, tsf_error *err)
{
    uint64_t at = fmt_rd_off(r);
    uint32_t u = 0;
    tsf_status st = tsf_fmt_rd_uvarint(r, what, &u, err);
    if (st) return st;
    int32_t n = tsf_unzigzag32(u);
    if (n == -1) {
        s->data = NULL;
        s->len = 0;
        s->is_null = 1;
        return TSF_OK;
    }
    if (n < 0)
        return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: negative string length %d", what,
                       (unsigned long long)at, (int)n);
    if ((size_t)n > fmt_rd_left(r))
        return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: string length %d exceeds the %zu bytes left",
                       what, (unsigned long long)at, (int)n, fmt_rd_left(r));
    s->data = r->p + r->pos;
    s->len = (size_t)n;
    s->is_null = 0;
    r->pos += (size_t)n;
    return TSF_OK;
}

tsf_status tsf_fmt_rd_binary(fmt_rd *r, const char *what, tsf_bytes *b, tsf_error *err)
{
    uint64_t at = fmt_rd_off(r);
    uint32_t u = 0;
    tsf_status st = tsf_fmt_rd_be32(r, what, &u, err);
    if (st) return st;
    if (u > INT32_MAX)
        return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: negative binary length %d", what,
                       (unsigned long long)at, (int)(int32_t)u);
    if (u > fmt_rd_left(r))
        return tsf_err(err, TSF_ECORRUPT, "%s at offset %llu: binary length %u exceeds the %zu bytes left",
                       what, (unsigned long long)at, u, fmt_rd_left(r));
    b->data = r->p + r->pos;
    b->len = u;
    r->pos += u;
    return TSF_OK;
}

tsf_status tsf_fmt_wr_varstr(fmt_wr *w, const uint8_t *s, size_t len, int is_null, tsf_error *err)
{
    if (is_null) {
        fmt_wr_u8(w, 0x01); /* zig-zag of -1 */
        return TSF_OK;
    }
    if (len > INT32_MAX) return tsf_err(err, TSF_EINVAL, "varstr: length %zu exceeds INT32_MAX", len);
    fmt_wr_uvarint(w, tsf_zigzag32((int32_t)len));
    fmt_wr_bytes(w, s, len);
    return TSF_OK;
}

tsf_status tsf_fmt_wr_binary(fmt_wr *w, tsf_bytes b, tsf_error *err)
{
    if (b.len > INT32_MAX) return tsf_err(err, TSF_EINVAL, "binary: length %zu exceeds INT32_MAX", b.len);
    fmt_wr_be32(w, (uint32_t)b.len);
    fmt_wr_bytes(w, b.data, b.len);
    return TSF_OK;
}

tsf_status tsf_fmt_wr_finish(const fmt_wr *w, const char *what, size_t *written, tsf_error *err)
{
    if (w->overflow) {
        if (written) *written = w->pos; /* the size needed */
        return tsf_err(err, TSF_ERANGE, "%s: needs %zu bytes, buffer holds %zu", what, w->pos, w->cap);
    }
    if (written) *written = w->pos;
    return TSF_OK;
}
