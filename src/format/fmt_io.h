/*
 * fmt_io.h - bounds-checked field readers and bounded writers shared by the format module (private).
 * A reader failure reports TSF_ECORRUPT naming the field and its absolute file offset; a writer
 * never stores past its capacity and remembers the overflow, so sizing is a write with cap 0.
 */
#ifndef TSF_FMT_IO_H
#define TSF_FMT_IO_H

#include <string.h>

#include "../common/bytes.h"
#include "format.h"

typedef struct fmt_rd {
    const uint8_t *p;
    size_t len, pos;
    uint64_t base; /* file offset of p[0] */
} fmt_rd;

TSF_INLINE fmt_rd fmt_rd_make(const uint8_t *p, size_t len, uint64_t base)
{
    fmt_rd r = {p, len, 0, base};
    return r;
}
TSF_INLINE uint64_t fmt_rd_off(const fmt_rd *r)
{
    return r->base + r->pos;
}
TSF_INLINE size_t fmt_rd_left(const fmt_rd *r)
{
    return r->len - r->pos;
}

tsf_status tsf_fmt_truncated(const fmt_rd *r, const char *what, size_t need, tsf_error *err);
tsf_status tsf_fmt_rd_u8(fmt_rd *r, const char *what, uint8_t *v, tsf_error *err);
tsf_status tsf_fmt_rd_be32(fmt_rd *r, const char *what, uint32_t *v, tsf_error *err);
tsf_status tsf_fmt_rd_be64(fmt_rd *r, const char *what, uint64_t *v, tsf_error *err);
tsf_status tsf_fmt_rd_uvarint(fmt_rd *r, const char *what, uint32_t *v, tsf_error *err);
/* varstr: zig-zag varint length (-1 = null) then bytes, checked against what is left. */
tsf_status tsf_fmt_rd_varstr(fmt_rd *r, const char *what, tsf_fmt_str *s, tsf_error *err);
/* binary: i32 length (>= 0) then bytes. */
tsf_status tsf_fmt_rd_binary(fmt_rd *r, const char *what, tsf_bytes *b, tsf_error *err);

typedef struct fmt_wr {
    uint8_t *p;
    size_t cap, pos;
    int overflow;
} fmt_wr;

TSF_INLINE fmt_wr fmt_wr_make(uint8_t *p, size_t cap)
{
    fmt_wr w = {p, cap, 0, 0};
    return w;
}
TSF_INLINE void fmt_wr_bytes(fmt_wr *w, const void *src, size_t n)
{
    if (w->overflow || n > w->cap - w->pos) {
        w->overflow = 1;
        w->pos += n;
        return;
    }
    if (n) memcpy(w->p + w->pos, src, n);
    w->pos += n;
}
TSF_INLINE void fmt_wr_u8(fmt_wr *w, uint8_t v)
{
    fmt_wr_bytes(w, &v, 1);
}
TSF_INLINE void fmt_wr_be32(fmt_wr *w, uint32_t v)
{
    uint8_t b[4];
    tsf_store_be32(b, v);
    fmt_wr_bytes(w, b, 4);
}
TSF_INLINE void fmt_wr_be64(fmt_wr *w, uint64_t v)
{
    uint8_t b[8];
    tsf_store_be64(b, v);
    fmt_wr_bytes(w, b, 8);
}
TSF_INLINE void fmt_wr_uvarint(fmt_wr *w, uint32_t v)
{
    uint8_t b[TSF_UVARINT32_MAX];
    fmt_wr_bytes(w, b, tsf_put_uvarint32(b, v));
}
TSF_INLINE void fmt_wr_uvarint64(fmt_wr *w, uint64_t v)
{
    uint8_t b[10];
    fmt_wr_bytes(w, b, tsf_put_uvarint64(b, v));
}
/* varstr of a possibly-null string; TSF_EINVAL if longer than INT32_MAX. */
tsf_status tsf_fmt_wr_varstr(fmt_wr *w, const uint8_t *s, size_t len, int is_null, tsf_error *err);
tsf_status tsf_fmt_wr_binary(fmt_wr *w, tsf_bytes b, tsf_error *err);
/* Finishes a write: *written = bytes (on overflow: the bytes needed, and TSF_ERANGE naming `what`). */
tsf_status tsf_fmt_wr_finish(const fmt_wr *w, const char *what, size_t *written, tsf_error *err);
/* Statistics into an ongoing writer (statistics.c). */
tsf_status tsf_fmt_wr_stats(fmt_wr *w, const tsf_fmt_stats *in, tsf_error *err);

#endif
