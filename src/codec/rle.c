/*
 * rle.c - RLE / bit-packing hybrid (spec tsfile-encodings.md §5) for BOOLEAN (true -> 1),
 * INT32/DATE and INT64/TIMESTAMP, plus the integer cores DICTIONARY, the FLOAT/DOUBLE precision
 * wrapper (floatprec.c, to which the FLOAT/DOUBLE entries delegate) and SPRINTZ call.
 *
 * Encoder: byte-exact with Java's RleEncoder state machine (§5.2). The batch path uses an
 * equivalent formulation: runs can only start at a group boundary, so at each boundary either the
 * next 8 values are all equal (a repeat run, extended up to 32767) or they form a bit-packed group.
 * The per-value path is the literal state machine; the tests check both give identical bytes.
 * One package per call: uvarint(L) body, body = bitWidth run*. INT32 run values are little-endian
 * over ceil(bw/8) bytes, INT64 run values big-endian (Java's BytesUtils.longToBytes).
 *
 * Decoder: count-driven over any number of packages, both run kinds, widths 0..32 (INT32) or
 * 0..64 (INT64); 0 is accepted because older C++ writers emit it for all-zero data. A group of
 * 8 values of width w is exactly w bytes, MSB-first; the batch path unpacks whole groups with a
 * 64-bit load per value, specialised per width, the per-value path goes through the bit reader.
 */
#include <string.h>

#include "../common/bitio.h"
#include "../common/bytes.h"
#include "codec.h"

enum { RLE_MIN_RUN = 8, RLE_MAX_RUN = 32767, RLE_MAX_GROUPS = 63 };

/* Value kinds: the C representation of the values and the run value byte order. */
enum { K_BOOL, K_I32, K_I64 };

static const char *kind_name(int kind)
{
    return kind == K_BOOL ? "BOOLEAN" : kind == K_I32 ? "INT32" : "INT64";
}

size_t tsf_rle_bound_n(size_t n, int is64)
{
    /* uvarint(L) + bitWidth, then per started unit of 8 values at most one group of w bytes plus
     * a 2-byte bp_run header (a repeat run costs at most 3 + 8 bytes) */
    size_t unit = is64 ? 66 : 34;
    size_t units = n / 8 + 2;
    if (units > (SIZE_MAX - 6) / unit) return SIZE_MAX;
    return 6 + units * unit;
}

/* ---- encoder ------------------------------------------------------------------------------- */

TSF_INLINE uint64_t get_u(const void *v, int kind, size_t i)
{
    if (kind == K_BOOL) return ((const uint8_t *)v)[i] != 0;
    if (kind == K_I32) return (uint32_t)((const int32_t *)v)[i];
    return (uint64_t)((const int64_t *)v)[i];
}

typedef struct rle_out {
    uint8_t *p;       /* next body byte */
    unsigned w;       /* bit width */
    int be_value;     /* repeat-run value big-endian (INT64) rather than little-endian */
    uint8_t *run_hdr; /* the 2 header bytes of the open bp_run, NULL if none */
    unsigned groups;  /* groups in the open bp_run */
} rle_out;

/* Packs 8 values of width w (1..64), MSB-first, into exactly w bytes. */
static void pack8(const uint64_t *u, unsigned w, uint8_t *out)
{
    uint64_t acc = 0;
    unsigned bits = 0;
    for (int k = 0; k < 8; k++) {
        if (w > 32) {
            acc = (acc << (w - 32)) | (u[k] >> 32);
            bits += w - 32;
            while (bits >= 8) *out++ = (uint8_t)(acc >> (bits -= 8));
            acc = (acc << 32) | (u[k] & 0xffffffffu);
            bits += 32;
        } else {
            acc = (acc << w) | u[k];
            bits += w;
        }
        while (bits >= 8) *out++ = (uint8_t)(acc >> (bits -= 8));
    }
}

/* Ends the open bp_run: header (groups << 1) | 1 and the valid count of its last group. */
static void bp_end(rle_out *o, unsigned last)
{
    if (!o->run_hdr) return;
    o->run_hdr[0] = (uint8_t)((o->groups << 1) | 1);
    o->run_hdr[1] = (uint8_t)last;
    o->run_hdr = NULL;
    o->groups = 0;
}

/* Appends a group to the open bp_run (a full run of 63 groups is ended first). */
static void bp_group(rle_out *o, const uint64_t *g)
{
    if (o->run_hdr && o->groups >= RLE_MAX_GROUPS) bp_end(o, 8);
    if (!o->run_hdr) {
        o->run_hdr = o->p;
        o->p += 2;
    }
    pack8(g, o->w, o->p);
    o->p += o->w;
    o->groups++;
}

static void rle_run(rle_out *o, uint32_t count, uint64_t x)
{
    bp_end(o, 8);
    o->p += tsf_put_uvarint32(o->p, count << 1);
    unsigned nb = (o->w + 7) / 8;
    for (unsigned b = 0; b < nb; b++)
        *o->p++ = (uint8_t)(o->be_value ? x >> (8 * (nb - 1 - b)) : x >> (8 * b));
}

/* Flushes a partial group of k (1..7) values, zero-filled, and ends the bp_run with k. */
static void tail_group(rle_out *o, uint64_t *g, size_t k)
{
    for (size_t j = k; j < 8; j++) g[j] = 0;
    bp_group(o, g);
    bp_end(o, (unsigned)k);
}

/* Batch formulation of §5.2 (see the file comment). */
TSF_INLINE void enc_batch(rle_out *o, const void *v, int kind, size_t n)
{
    uint64_t g[8];
    size_t i = 0;
    while (n - i >= 8) {
        uint64_t x = get_u(v, kind, i);
        uint64_t diff = 0;
        for (int k = 1; k < 8; k++) diff |= get_u(v, kind, i + k) ^ x;
        if (diff == 0) {
            size_t lim = n - i > RLE_MAX_RUN ? i + RLE_MAX_RUN : n;
            size_t j = i + 8;
            while (j < lim && get_u(v, kind, j) == x) j++;
            rle_run(o, (uint32_t)(j - i), x);
            i = j;
        } else {
            for (int k = 0; k < 8; k++) g[k] = get_u(v, kind, i + k);
            bp_group(o, g);
            i += 8;
        }
    }
    if (n > i) {
        for (size_t k = 0; k < n - i; k++) g[k] = get_u(v, kind, i + k);
        tail_group(o, g, n - i);
    } else {
        bp_end(o, 8);
    }
}

/* The literal Java state machine, one value at a time (TSF_PATH_PER_VALUE). */
static void enc_per_value(rle_out *o, const void *v, int kind, size_t n)
{
    uint64_t pre = 0, buf[8];
    uint32_t repeat = 0;
    size_t nbuf = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = get_u(v, kind, i);
        if (x == pre) {
            repeat++;
            if (repeat >= RLE_MIN_RUN && repeat <= RLE_MAX_RUN) continue;
            if (repeat == RLE_MAX_RUN + 1) {
                rle_run(o, RLE_MAX_RUN, pre);
                nbuf = 0;
                repeat = 1;
            }
        } else {
            if (repeat >= RLE_MIN_RUN) {
                rle_run(o, repeat, pre);
                nbuf = 0;
            }
            repeat = 1;
            pre = x;
        }
        buf[nbuf++] = x;
        if (nbuf == 8) {
            bp_group(o, buf);
            nbuf = 0;
            repeat = 0;
        }
    }
    if (repeat >= RLE_MIN_RUN)
        rle_run(o, repeat, pre);
    else if (nbuf > 0)
        tail_group(o, buf, nbuf);
    else
        bp_end(o, 8);
}

TSF_INLINE tsf_status rle_encode_kind(const tsf_codec *c, const void *v, int kind, size_t n, uint8_t *dst,
                                      size_t cap, size_t *written, tsf_error *err)
{
    size_t need = tsf_rle_bound_n(n, kind == K_I64);
    *written = 0;
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "RLE %s encode: dst holds %zu bytes, needs %zu", kind_name(kind), cap,
                       need);
    if (n == 0) { /* Java flushes an empty encoder as a zero-length package */
        dst[0] = 0;
        *written = 1;
        return TSF_OK;
    }
    uint64_t all = 0;
    for (size_t i = 0; i < n; i++) all |= get_u(v, kind, i);
    unsigned w = all ? 64 - (unsigned)TSF_CLZ64(all) : 1;
    uint8_t *body = dst + TSF_UVARINT32_MAX;
    body[0] = (uint8_t)w;
    rle_out o = {.p = body + 1, .w = w, .be_value = kind == K_I64, .run_hdr = NULL, .groups = 0};
    if (c->path == TSF_PATH_PER_VALUE)
        enc_per_value(&o, v, kind, n);
    else
        enc_batch(&o, v, kind, n);
    size_t blen = (size_t)(o.p - body);
    if (blen > (size_t)INT32_MAX)
        return tsf_err(err, TSF_ERANGE, "RLE %s encode: %zu values make a %zu-byte package, over 2^31-1",
                       kind_name(kind), n, blen);
    uint8_t hdr[TSF_UVARINT32_MAX];
    size_t h = tsf_put_uvarint32(hdr, (uint32_t)blen);
    memmove(dst + h, body, blen);
    memcpy(dst, hdr, h);
    *written = h + blen;
    return TSF_OK;
}

static tsf_status rle_encode_bool(const tsf_codec *c, const uint8_t *v, size_t n, uint8_t *dst, size_t cap,
                                  size_t *written, tsf_error *err)
{
    return rle_encode_kind(c, v, K_BOOL, n, dst, cap, written, err);
}

tsf_status tsf_rle_encode_i32(const tsf_codec *c, const int32_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err)
{
    return rle_encode_kind(c, v, K_I32, n, dst, cap, written, err);
}

tsf_status tsf_rle_encode_i64(const tsf_codec *c, const int64_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err)
{
    return rle_encode_kind(c, v, K_I64, n, dst, cap, written, err);
}

/* ---- decoder ------------------------------------------------------------------------------- */

/* Value k (0..7) of a group of width w (1..32) at p; needs p[0 .. w+8) readable. */
TSF_INLINE uint32_t unpack_one32(const uint8_t *p, unsigned w, unsigned k)
{
    unsigned bit = k * w;
    uint64_t word = tsf_load_be64(p + (bit >> 3));
    return (uint32_t)((word << (bit & 7)) >> (64 - w));
}

/* Value k of a group of width w (1..64) at p; needs p[0 .. w+9) readable. */
TSF_INLINE uint64_t unpack_one64(const uint8_t *p, unsigned w, unsigned k)
{
    unsigned bit = k * w, sh = bit & 7;
    const uint8_t *q = p + (bit >> 3);
    uint64_t word = tsf_load_be64(q) << sh;
    if (sh) word |= q[8] >> (8 - sh);
    return word >> (64 - w);
}

/* Unpacks `groups` whole groups of width w (1..32) into o; p has groups*w + 8 readable bytes. */
static void unpack_groups32(const uint8_t *p, unsigned w, size_t groups, uint32_t *o)
{
    switch (w) {
#define TSF_UNPACK_W(W)                                                                                      \
    case W:                                                                                                  \
        for (size_t g = 0; g < groups; g++, p += W, o += 8)                                                  \
            for (unsigned k = 0; k < 8; k++) o[k] = unpack_one32(p, W, k);                                   \
        break;
        TSF_UNPACK_W(1)
        TSF_UNPACK_W(2) TSF_UNPACK_W(3) TSF_UNPACK_W(4) TSF_UNPACK_W(5) TSF_UNPACK_W(6) TSF_UNPACK_W(7)
            TSF_UNPACK_W(8) TSF_UNPACK_W(9) TSF_UNPACK_W(10) TSF_UNPACK_W(11) TSF_UNPACK_W(12)
                TSF_UNPACK_W(13) TSF_UNPACK_W(14) TSF_UNPACK_W(15) TSF_UNPACK_W(16) TSF_UNPACK_W(17)
                    TSF_UNPACK_W(18) TSF_UNPACK_W(19) TSF_UNPACK_W(20) TSF_UNPACK_W(21) TSF_UNPACK_W(22)
                        TSF_UNPACK_W(23) TSF_UNPACK_W(24) TSF_UNPACK_W(25) TSF_UNPACK_W(26) TSF_UNPACK_W(27)
                            TSF_UNPACK_W(28) TSF_UNPACK_W(29) TSF_UNPACK_W(30) TSF_UNPACK_W(31)
                                TSF_UNPACK_W(32)
#undef TSF_UNPACK_W
                                    default : break;
    }
}

static void unpack_groups64(const uint8_t *p, unsigned w, size_t groups, uint64_t *o)
{
    for (size_t g = 0; g < groups; g++, p += w, o += 8)
        for (unsigned k = 0; k < 8; k++) o[k] = unpack_one64(p, w, k);
}

/* One group (any width 0..64) through a zero-padded copy: for the last bytes of the input. */
static void unpack_group_copy(const uint8_t *p, unsigned w, uint64_t *o)
{
    uint8_t buf[64 + 16] = {0};
    if (w == 0) {
        for (int k = 0; k < 8; k++) o[k] = 0;
        return;
    }
    memcpy(buf, p, w);
    for (unsigned k = 0; k < 8; k++) o[k] = unpack_one64(buf, w, k);
}

TSF_INLINE void put_value(void *out, int kind, size_t i, uint64_t x)
{
    if (kind == K_BOOL)
        ((uint8_t *)out)[i] = x != 0;
    else if (kind == K_I32)
        ((int32_t *)out)[i] = (int32_t)(uint32_t)x;
    else
        ((int64_t *)out)[i] = (int64_t)x;
}

/*
 * Writes `take` values of a bp_run (groups of width w at p, all present in the input, which ends
 * at `end`) to out[i ..]. Whole groups far enough from the end go through the width-specialised
 * unpackers straight into the output; the rest through a padded copy.
 */
static void unpack_run(const tsf_codec *c, int kind, unsigned w, const uint8_t *p, const uint8_t *end,
                       void *out, size_t i, size_t take)
{
    size_t g = 0, done = 0, safe = 0;
    if (c->path != TSF_PATH_PER_VALUE && w > 0) {
        size_t avail = (size_t)(end - p);
        safe = avail >= 16 ? (avail - 16) / w : 0; /* groups with 16 readable bytes beyond */
        if (safe > take / 8) safe = take / 8;
    }
    if (kind == K_I32) {
        unpack_groups32(p, w, safe, (uint32_t *)((int32_t *)out + i));
    } else if (kind == K_I64) {
        unpack_groups64(p, w, safe, (uint64_t *)((int64_t *)out + i));
    } else {
        /* BOOLEAN: 32 groups at a time into 32-bit scratch, then narrowed to 0/1 bytes */
        uint32_t tmp[256];
        uint8_t *o = (uint8_t *)out + i;
        while (g < safe) {
            size_t k = safe - g < 32 ? safe - g : 32;
            unpack_groups32(p + g * w, w, k, tmp);
            for (size_t j = 0; j < k * 8; j++) o[g * 8 + j] = tmp[j] != 0;
            g += k;
        }
    }
    g = safe;
    done = safe * 8;
    if (c->path == TSF_PATH_PER_VALUE) {
        /* scalar twin: one value at a time through the MSB-first bit reader */
        tsf_bitr r;
        tsf_bitr_init(&r, p, (size_t)(end - p));
        for (; done < take; done++) put_value(out, kind, i + done, tsf_bitr_read(&r, w));
        return;
    }
    for (; done < take; g++) {
        uint64_t tmp[8];
        unpack_group_copy(p + g * w, w, tmp);
        for (unsigned k = 0; k < 8 && done < take; k++, done++) put_value(out, kind, i + done, tmp[k]);
    }
}

TSF_INLINE void fill_run(void *out, int kind, size_t i, size_t take, uint64_t x)
{
    if (kind == K_BOOL) {
        memset((uint8_t *)out + i, x != 0, take);
    } else if (kind == K_I32) {
        int32_t *o = (int32_t *)out + i;
        for (size_t k = 0; k < take; k++) o[k] = (int32_t)(uint32_t)x;
    } else {
        int64_t *o = (int64_t *)out + i;
        for (size_t k = 0; k < take; k++) o[k] = (int64_t)x;
    }
}

/* One parsed run header. */
typedef struct rle_run_hdr {
    int bp;          /* bit-packed run */
    size_t count;    /* values it holds */
    size_t data;     /* offset of its value bytes */
    size_t data_len; /* bytes of value data */
} rle_run_hdr;

/* Parses the run at src[pos..end) of a package of width w. */
static tsf_status parse_run(int kind, const uint8_t *src, size_t pos, size_t end, unsigned w, rle_run_hdr *r,
                            tsf_error *err)
{
    uint32_t h;
    size_t m = tsf_get_uvarint32(src + pos, end - pos, &h);
    if (m == 0)
        return tsf_err(err, TSF_ECORRUPT, "RLE %s: bad run header varint at byte offset %zu", kind_name(kind),
                       pos);
    if ((h & 1) == 0) {
        r->bp = 0;
        r->count = h >> 1;
        r->data = pos + m;
        r->data_len = (w + 7) / 8;
        if (r->count == 0)
            return tsf_err(err, TSF_ECORRUPT, "RLE %s: repeat run of 0 values at byte offset %zu",
                           kind_name(kind), pos);
        if (r->data_len > end - r->data)
            return tsf_err(err, TSF_ECORRUPT, "RLE %s: repeat run value at byte offset %zu is truncated",
                           kind_name(kind), r->data);
        return TSF_OK;
    }
    size_t groups = h >> 1;
    if (groups == 0)
        return tsf_err(err, TSF_ECORRUPT, "RLE %s: bit-packed run of 0 groups at byte offset %zu",
                       kind_name(kind), pos);
    if (pos + m >= end)
        return tsf_err(err, TSF_ECORRUPT,
                       "RLE %s: bit-packed run at byte offset %zu lacks its last-group count",
                       kind_name(kind), pos);
    unsigned last = src[pos + m];
    if (last < 1 || last > 8)
        return tsf_err(err, TSF_ECORRUPT, "RLE %s: last-group count %u at byte offset %zu (must be 1..8)",
                       kind_name(kind), last, pos + m);
    r->bp = 1;
    r->count = (groups - 1) * 8 + last;
    r->data = pos + m + 1;
    r->data_len = groups * w;
    if (r->data_len > end - r->data)
        return tsf_err(
            err, TSF_ECORRUPT,
            "RLE %s: bit-packed run of %zu groups x %u bytes at byte offset %zu runs past its package "
            "(ends at %zu)",
            kind_name(kind), groups, w, pos, end);
    return TSF_OK;
}

/* Parses a package header at src[pos..len): *body = first body byte, *end = one past the body. */
static tsf_status parse_package(int kind, const uint8_t *src, size_t len, size_t pos, size_t *body,
                                size_t *end, unsigned *w, tsf_error *err)
{
    uint32_t l;
    size_t m = tsf_get_uvarint32(src + pos, len - pos, &l);
    if (m == 0)
        return tsf_err(err, TSF_ECORRUPT, "RLE %s: bad package length varint at byte offset %zu",
                       kind_name(kind), pos);
    if (l > len - pos - m)
        return tsf_err(err, TSF_ECORRUPT,
                       "RLE %s: package at byte offset %zu declares %u bytes, only %zu remain",
                       kind_name(kind), pos, l, len - pos - m);
    *body = pos + m;
    *end = pos + m + l;
    *w = 0;
    if (l == 0) return TSF_OK;
    *w = src[*body];
    unsigned maxw = kind == K_I64 ? 64 : 32;
    if (*w > maxw)
        return tsf_err(err, TSF_ECORRUPT, "RLE %s: bit width %u at byte offset %zu (max %u)", kind_name(kind),
                       *w, *body, maxw);
    (*body)++;
    return TSF_OK;
}

TSF_INLINE tsf_status rle_decode_kind(const tsf_codec *c, int kind, const uint8_t *src, size_t len, void *out,
                                      size_t n, size_t *consumed, tsf_error *err)
{
    size_t pos = 0, i = 0;
    *consumed = 0;
    while (i < n) {
        if (pos >= len)
            return tsf_err(err, TSF_ECORRUPT,
                           "RLE %s: stream ends at byte offset %zu after %zu of %zu values", kind_name(kind),
                           pos, i, n);
        size_t end;
        unsigned w;
        tsf_status s = parse_package(kind, src, len, pos, &pos, &end, &w, err);
        if (s != TSF_OK) return s;
        while (pos < end && i < n) {
            rle_run_hdr r = {0, 0, 0, 0};
            s = parse_run(kind, src, pos, end, w, &r, err);
            if (s != TSF_OK) return s;
            size_t take = r.count < n - i ? r.count : n - i;
            if (r.bp) {
                unpack_run(c, kind, w, src + r.data, src + len, out, i, take);
            } else {
                uint64_t x = 0;
                const uint8_t *q = src + r.data;
                for (size_t b = 0; b < r.data_len; b++)
                    x = kind == K_I64 ? (x << 8) | q[b] : x | ((uint64_t)q[b] << (8 * b));
                fill_run(out, kind, i, take, x);
            }
            i += take;
            pos = r.data + r.data_len;
        }
        pos = end;
    }
    *consumed = pos;
    return TSF_OK;
}

tsf_status tsf_rle_decode_i32(const tsf_codec *c, const uint8_t *src, size_t len, int32_t *v, size_t n,
                              size_t *consumed, tsf_error *err)
{
    size_t used = 0;
    tsf_status s = rle_decode_kind(c, K_I32, src, len, v, n, &used, err);
    if (consumed) *consumed = used;
    return s;
}

tsf_status tsf_rle_decode_i64(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                              size_t *consumed, tsf_error *err)
{
    size_t used = 0;
    tsf_status s = rle_decode_kind(c, K_I64, src, len, v, n, &used, err);
    if (consumed) *consumed = used;
    return s;
}

static tsf_status rle_decode_bool(const tsf_codec *c, const uint8_t *src, size_t len, uint8_t *v, size_t n,
                                  size_t *consumed, tsf_error *err)
{
    return rle_decode_kind(c, K_BOOL, src, len, v, n, consumed, err);
}

/* Sums the values of every package in the stream. */
static tsf_status rle_count_kind(int kind, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    size_t pos = 0, total = 0;
    *n = 0;
    while (pos < len) {
        size_t end;
        unsigned w;
        tsf_status s = parse_package(kind, src, len, pos, &pos, &end, &w, err);
        if (s != TSF_OK) return s;
        while (pos < end) {
            rle_run_hdr r = {0, 0, 0, 0};
            s = parse_run(kind, src, pos, end, w, &r, err);
            if (s != TSF_OK) return s;
            if (r.count > SIZE_MAX - total)
                return tsf_err(err, TSF_ECORRUPT, "RLE %s: value count overflows at byte offset %zu",
                               kind_name(kind), pos);
            total += r.count;
            pos = r.data + r.data_len;
        }
    }
    *n = total;
    return TSF_OK;
}

/* ---- the vtable ------------------------------------------------------------------------------ */

static int is_float(tsf_type t)
{
    return t == TSF_FLOAT || t == TSF_DOUBLE;
}

static int kind_of(tsf_type t)
{
    if (t == TSF_BOOLEAN) return K_BOOL;
    if (t == TSF_INT32 || t == TSF_DATE) return K_I32;
    return K_I64;
}

static size_t rle_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    if (is_float(type)) return tsf_floatprec_bound(TSF_ENC_RLE, type, n);
    return tsf_rle_bound_n(n, kind_of(type) == K_I64);
}

static tsf_status rle_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n, uint8_t *dst,
                             size_t cap, size_t *written, tsf_error *err)
{
    if (is_float(type)) return tsf_floatprec_encode(c, TSF_ENC_RLE, type, values, n, dst, cap, written, err);
    switch (kind_of(type)) {
    case K_BOOL:
        return rle_encode_bool(c, (const uint8_t *)values, n, dst, cap, written, err);
    case K_I32:
        return tsf_rle_encode_i32(c, (const int32_t *)values, n, dst, cap, written, err);
    default:
        return tsf_rle_encode_i64(c, (const int64_t *)values, n, dst, cap, written, err);
    }
}

static tsf_status rle_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len, void *values,
                             size_t n, size_t *consumed, tsf_error *err)
{
    if (is_float(type)) return tsf_floatprec_decode(c, TSF_ENC_RLE, type, src, len, values, n, consumed, err);
    switch (kind_of(type)) {
    case K_BOOL:
        return rle_decode_bool(c, src, len, (uint8_t *)values, n, consumed, err);
    case K_I32:
        return tsf_rle_decode_i32(c, src, len, (int32_t *)values, n, consumed, err);
    default:
        return tsf_rle_decode_i64(c, src, len, (int64_t *)values, n, consumed, err);
    }
}

static tsf_status rle_count(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    if (is_float(type)) return tsf_floatprec_count(TSF_ENC_RLE, type, src, len, n, err);
    return rle_count_kind(kind_of(type), src, len, n, err);
}

#define TSF_RLE_TYPES (TSF_TYPE_BIT(TSF_BOOLEAN) | TSF_TYPES_NUMERIC)

const tsf_codec_vt tsf_codec_rle = {
    .encoding = TSF_ENC_RLE,
    .encode_types = TSF_RLE_TYPES,
    .decode_types = TSF_RLE_TYPES,
    .bound = rle_bound,
    .encode = rle_encode,
    .decode = rle_decode,
    .count = rle_count,
};
