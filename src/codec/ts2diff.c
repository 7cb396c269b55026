/*
 * ts2diff.c - TS_2DIFF (code 4), second-order delta with block bit-packing (spec
 * tsfile-encodings.md §3.1-§3.2), the FLOAT/DOUBLE entry through the precision wrapper (§3.3/§3.4,
 * floatprec.c); the block listings for time filtering (§14) are in ts2diff_walk.c.
 *
 * Byte-exact with Java's DeltaBinaryEncoder: blocks of 1 + 128 values, header n, w, minDelta,
 * first (big-endian), w = bit length of the largest (delta - minDelta) read unsigned (32/64 on a
 * wrapped range), MSB-first packing, zero padding, and minDelta = INT32_MAX/INT64_MAX for a
 * single-value block. Decoders ignore minDelta when n = 0, ignore padding bits and never read past
 * hdr + ceil(n*w/8).
 *
 * Paths (c->path, resolved once per codec): PER_VALUE is an iterator that yields one value per call
 * and an encoder that appends one value at a time (the shape of the reference, the benchmark's
 * baseline); SCALAR decodes a block straight into the output with width-specialised unpack fused
 * with the prefix sum; SSE4.1/AVX2/AVX-512 use the kernels of ts2diff_<isa>.c. All paths produce the
 * same bytes and values.
 */
#include <string.h>

#include "ts2diff_kern.h"
#include "ts2diff_walk.h"

/* ---- block header ------------------------------------------------------------------------------- */

tsf_status tsf_td_header(const uint8_t *src, size_t len, size_t pos, int is64, td_hdr *h, tsf_error *err)
{
    size_t hdr = is64 ? TD_HDR64 : TD_HDR32;
    if (len - pos < hdr)
        return tsf_err(err, TSF_ECORRUPT,
                       "TS_2DIFF: truncated block header at offset %zu (%zu bytes left, header is %zu)", pos,
                       len - pos, hdr);
    int32_t nd = (int32_t)tsf_load_be32(src + pos);
    int32_t w = (int32_t)tsf_load_be32(src + pos + 4);
    if (nd < 0)
        return tsf_err(err, TSF_ECORRUPT, "TS_2DIFF: negative delta count %d in block header at offset %zu",
                       (int)nd, pos);
    if (w < 0 || w > (is64 ? 64 : 32))
        return tsf_err(err, TSF_ECORRUPT, "TS_2DIFF: bit width %d out of range 0..%d at offset %zu", (int)w,
                       is64 ? 64 : 32, pos + 4);
    h->nd = (uint32_t)nd;
    h->w = (unsigned)w;
    if (is64) {
        h->mind = tsf_load_be64(src + pos + 8);
        h->first = tsf_load_be64(src + pos + 16);
    } else {
        h->mind = (uint64_t)(int64_t)(int32_t)tsf_load_be32(src + pos + 8);
        h->first = (uint64_t)(int64_t)(int32_t)tsf_load_be32(src + pos + 12);
    }
    h->data = pos + hdr;
    uint64_t nbytes = ((uint64_t)h->nd * h->w + 7) / 8;
    if (nbytes > len - h->data)
        return tsf_err(err, TSF_ECORRUPT,
                       "TS_2DIFF: block at offset %zu (n %u, w %u) needs %llu data bytes, only %zu left", pos,
                       (unsigned)h->nd, h->w, (unsigned long long)nbytes, len - h->data);
    h->nbytes = (size_t)nbytes;
    return TSF_OK;
}

/* ---- kernels per path ----------------------------------------------------------------------------- */

static size_t dec32_scalar(const uint8_t *d, size_t avail, unsigned w, uint32_t mind, uint32_t *out, size_t m)
{
    return td_unpack32_any(d, avail, w, mind, out, m);
}
static size_t dec64_scalar(const uint8_t *d, size_t avail, unsigned w, uint64_t mind, uint64_t *out, size_t m)
{
    return td_unpack64_any(d, avail, w, mind, out, m);
}
static size_t enc32_scalar(const uint32_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block32(v, cnt, o);
}
static size_t enc64_scalar(const uint64_t *v, size_t cnt, uint8_t *o)
{
    return td_encode_block64(v, cnt, o);
}

typedef struct td_kernels {
    td_dec32_fn dec32;
    td_dec64_fn dec64;
    td_enc32_fn enc32;
    td_enc64_fn enc64;
} td_kernels;

static td_kernels td_pick(tsf_codec_path p)
{
    td_kernels k = {dec32_scalar, dec64_scalar, enc32_scalar, enc64_scalar};
#ifdef TSF_X86
    switch (p) {
    case TSF_PATH_SSE41:
        k = (td_kernels){tsf_td_dec32_sse41, tsf_td_dec64_sse41, tsf_td_enc32_sse41, tsf_td_enc64_sse41};
        break;
    case TSF_PATH_AVX2:
        k = (td_kernels){tsf_td_dec32_avx2, tsf_td_dec64_avx2, tsf_td_enc32_avx2, tsf_td_enc64_avx2};
        break;
    case TSF_PATH_AVX512:
        k = (td_kernels){tsf_td_dec32_avx512, tsf_td_dec64_avx512, tsf_td_enc32_avx512, tsf_td_enc64_avx512};
        break;
    default:
        break;
    }
#else
    (void)p;
#endif
    return k;
}

/* ---- bounds ---------------------------------------------------------------------------------------- */

size_t tsf_ts2diff_bound_n(size_t n, int is64)
{
    size_t blocks = (n + TD_BLOCK_DELTAS) / (TD_BLOCK_DELTAS + 1);
    return blocks * (is64 ? TD_HDR64 : TD_HDR32) + n * (is64 ? 8u : 4u);
}

static size_t ts2diff_bound(tsf_type type, size_t n, size_t var_bytes)
{
    (void)var_bytes;
    switch (type) {
    case TSF_INT32:
    case TSF_DATE:
        return tsf_ts2diff_bound_n(n, 0);
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return tsf_ts2diff_bound_n(n, 1);
    case TSF_FLOAT:
    case TSF_DOUBLE:
        return tsf_floatprec_bound(TSF_ENC_TS_2DIFF, type, n);
    default:
        return 0;
    }
}

/* ---- per-value encoder (the reference's shape: one value appended at a time) ------------------------ */

typedef struct td_penc {
    uint8_t *o;
    int is64;
    int idx; /* deltas buffered; -1 = block empty */
    uint64_t first, prev, mind;
    uint64_t delta[TD_BLOCK_DELTAS];
} td_penc;

static void td_penc_flush(td_penc *e)
{
    if (e->idx < 0) return;
    unsigned w = 0, bits = e->is64 ? 64u : 32u;
    uint64_t mask = e->is64 ? ~0ull : 0xffffffffull;
    for (int i = 0; i < e->idx; i++) {
        uint64_t d = (e->delta[i] - e->mind) & mask;
        unsigned wi = d ? bits - (unsigned)(e->is64 ? TSF_CLZ64(d) : TSF_CLZ32((uint32_t)d)) : 0u;
        if (wi > w) w = wi;
    }
    uint8_t *o = e->o;
    tsf_store_be32(o, (uint32_t)e->idx);
    tsf_store_be32(o + 4, w);
    if (e->is64) {
        tsf_store_be64(o + 8, e->mind);
        tsf_store_be64(o + 16, e->first);
        o += TD_HDR64;
    } else {
        tsf_store_be32(o + 8, (uint32_t)e->mind);
        tsf_store_be32(o + 12, (uint32_t)e->first);
        o += TD_HDR32;
    }
    tsf_bitw bw;
    tsf_bitw_init(&bw, o, ((size_t)e->idx * w + 7) / 8);
    for (int i = 0; i < e->idx; i++) tsf_bitw_put(&bw, (e->delta[i] - e->mind) & mask, w);
    e->o = tsf_bitw_flush(&bw);
    e->idx = -1;
}

static void td_penc_add(td_penc *e, uint64_t v)
{
    if (e->idx < 0) {
        e->first = e->prev = v;
        e->mind = e->is64 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
        e->idx = 0;
        return;
    }
    uint64_t d = v - e->prev;
    if (e->is64) {
        if ((int64_t)d < (int64_t)e->mind) e->mind = d;
    } else {
        d &= 0xffffffffu;
        if ((int32_t)(uint32_t)d < (int32_t)(uint32_t)e->mind) e->mind = d;
    }
    e->delta[e->idx++] = d;
    e->prev = v;
    if (e->idx == (int)TD_BLOCK_DELTAS) td_penc_flush(e);
}

/* ---- per-value decoder: an iterator yielding one value per call ------------------------------------ */

typedef struct td_iter {
    const uint8_t *src;
    size_t len, pos; /* pos = next block header */
    int is64;
    td_hdr h;
    uint32_t left; /* deltas left in the current block */
    tsf_bitr br;
    uint64_t prev;
} td_iter;

static tsf_status td_iter_next(td_iter *it, uint64_t *out, tsf_error *err)
{
    if (it->left == 0) {
        tsf_status s = tsf_td_header(it->src, it->len, it->pos, it->is64, &it->h, err);
        if (s != TSF_OK) return s;
        tsf_bitr_init(&it->br, it->src + it->h.data, it->h.nbytes);
        it->pos = it->h.data + it->h.nbytes;
        it->left = it->h.nd;
        it->prev = it->h.first;
        *out = it->prev;
        return TSF_OK;
    }
    it->prev += it->h.mind + tsf_bitr_read(&it->br, it->h.w);
    it->left--;
    *out = it->prev;
    return TSF_OK;
}

/* ---- batch encode -------------------------------------------------------------------------------- */

static tsf_status td_encode(const tsf_codec *c, const void *values, size_t n, int is64, uint8_t *dst,
                            size_t cap, size_t *written, tsf_error *err)
{
    size_t need = tsf_ts2diff_bound_n(n, is64);
    *written = 0;
    if (cap < need)
        return tsf_err(err, TSF_ERANGE, "TS_2DIFF encode: dst holds %zu bytes, bound is %zu", cap, need);
    if (c->path == TSF_PATH_PER_VALUE) {
        td_penc e;
        e.o = dst;
        e.is64 = is64;
        e.idx = -1;
        if (is64) {
            const int64_t *v = (const int64_t *)values;
            for (size_t i = 0; i < n; i++) td_penc_add(&e, (uint64_t)v[i]);
        } else {
            const int32_t *v = (const int32_t *)values;
            for (size_t i = 0; i < n; i++) td_penc_add(&e, (uint32_t)v[i]);
        }
        td_penc_flush(&e);
        *written = (size_t)(e.o - dst);
        return TSF_OK;
    }
    td_kernels k = td_pick(c->path);
    uint8_t *o = dst;
    for (size_t i = 0; i < n; i += TD_BLOCK_DELTAS + 1) {
        size_t cnt = n - i < TD_BLOCK_DELTAS + 1 ? n - i : TD_BLOCK_DELTAS + 1;
        if (is64)
            o += k.enc64((const uint64_t *)values + i, cnt, o);
        else
            o += k.enc32((const uint32_t *)values + i, cnt, o);
    }
    *written = (size_t)(o - dst);
    return TSF_OK;
}

tsf_status tsf_ts2diff_encode_i32(const tsf_codec *c, const int32_t *v, size_t n, uint8_t *dst, size_t cap,
                                  size_t *written, tsf_error *err)
{
    return td_encode(c, v, n, 0, dst, cap, written, err);
}

tsf_status tsf_ts2diff_encode_i64(const tsf_codec *c, const int64_t *v, size_t n, uint8_t *dst, size_t cap,
                                  size_t *written, tsf_error *err)
{
    return td_encode(c, v, n, 1, dst, cap, written, err);
}

/* ---- batch decode -------------------------------------------------------------------------------- */

/* Deltas k..m-1 of a block through the bounded bit reader (tails and the last bytes of a stream). */
static void td_tail(const td_hdr *h, const uint8_t *src, uint64_t *o64, uint32_t *o32, size_t k, size_t m)
{
    tsf_bitr br;
    tsf_bitr_init(&br, src + h->data, h->nbytes);
    br.pos = k * h->w;
    if (o64) {
        for (size_t i = k; i < m; i++) o64[i + 1] = o64[i] + h->mind + tsf_bitr_read(&br, h->w);
    } else {
        uint32_t md = (uint32_t)h->mind;
        for (size_t i = k; i < m; i++) o32[i + 1] = o32[i] + md + (uint32_t)tsf_bitr_read57(&br, h->w);
    }
}

/* Decodes the first `take` values of the block h into o (take <= n + 1). */
static void td_block(const td_kernels *k, const td_hdr *h, const uint8_t *src, size_t len, void *out,
                     size_t take, int is64)
{
    size_t m = take - 1, kd = 0;
    const uint8_t *data = src + h->data;
    size_t avail = len - h->data;
    if (is64) {
        uint64_t *o = (uint64_t *)out;
        o[0] = h->first;
        if (m) kd = k->dec64(data, avail, h->w, h->mind, o, m); /* w = 0 too: the kernels fill it */
        if (kd < m) td_tail(h, src, o, NULL, kd, m);
    } else {
        uint32_t *o = (uint32_t *)out;
        uint32_t first = (uint32_t)h->first, md = (uint32_t)h->mind;
        o[0] = first;
        if (m) kd = k->dec32(data, avail, h->w, md, o, m);
        if (kd < m) td_tail(h, src, NULL, o, kd, m);
    }
}

static tsf_status td_decode(const tsf_codec *c, const uint8_t *src, size_t len, void *values, size_t n,
                            int is64, size_t *consumed, tsf_error *err)
{
    size_t pos = 0, done = 0;
    if (consumed) *consumed = 0;
    if (c->path == TSF_PATH_PER_VALUE) {
        td_iter it;
        memset(&it, 0, sizeof it);
        it.src = src;
        it.len = len;
        it.is64 = is64;
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            tsf_status s = td_iter_next(&it, &v, err);
            if (s != TSF_OK) return s;
            if (is64)
                ((uint64_t *)values)[i] = v;
            else
                ((uint32_t *)values)[i] = (uint32_t)v;
        }
        /* Like the batch path, the stream position is the end of the last block touched. */
        if (consumed) *consumed = n ? it.pos : 0;
        return TSF_OK;
    }
    td_kernels k = td_pick(c->path);
    td_blocks32_fn blocks = NULL;
#ifdef TSF_X86
    /* INT32 on AVX-512: runs of whole blocks in one call (streaming stores if asked) */
    if (!is64 && c->path == TSF_PATH_AVX512 && ((uintptr_t)values & 3) == 0)
        blocks = c->nt_stores > 0 ? tsf_td_blocks32_nt_avx512 : tsf_td_blocks32_avx512;
#endif
    while (done < n) {
        if (blocks) {
            done += blocks(src, len, &pos, (uint32_t *)values + done, n - done);
            if (done == n) break;
        }
        td_hdr h = {0};
        tsf_status s = tsf_td_header(src, len, pos, is64, &h, err);
        if (s != TSF_OK) return s;
        size_t cnt = (size_t)h.nd + 1;
        size_t take = cnt < n - done ? cnt : n - done;
        td_block(&k, &h, src, len, (uint8_t *)values + done * (is64 ? 8u : 4u), take, is64);
        pos = h.data + h.nbytes;
        done += take;
    }
    if (consumed) *consumed = pos;
    return TSF_OK;
}

tsf_status tsf_ts2diff_decode_i32(const tsf_codec *c, const uint8_t *src, size_t len, int32_t *v, size_t n,
                                  size_t *consumed, tsf_error *err)
{
    return td_decode(c, src, len, v, n, 0, consumed, err);
}

tsf_status tsf_ts2diff_decode_i64(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                                  size_t *consumed, tsf_error *err)
{
    return td_decode(c, src, len, v, n, 1, consumed, err);
}

/* ---- decode with a summary (tsf_ts2diff_decode_i64_sum) ---------------------------------------------- */

static void acc_portable(td_acc *a, const int64_t *v, size_t n)
{
    td_acc_portable(a, v, n);
}

static td_acc_fn td_acc_pick(tsf_codec_path p)
{
#ifdef TSF_X86
    if (p == TSF_PATH_AVX512) return tsf_td_acc_avx512;
    if (p == TSF_PATH_AVX2) return tsf_td_acc_avx2;
#else
    (void)p;
#endif
    return acc_portable;
}

/* Whether the values of block h strictly ascend without wrapping, from its header alone: every delta
 * (minDelta + d', d' < 2^w) lies in [1, big] with big <= 2^32, and first + nd * big <= INT64_MAX. */
static int td_header_ascends(const td_hdr *h)
{
    if (h->nd == 0) return 1;
    int64_t md = (int64_t)h->mind;
    if (md <= 0 || md > INT32_MAX || h->w > 31) return 0;
    uint64_t big = (uint64_t)md + ((UINT64_C(1) << h->w) - 1);
    uint64_t room = (uint64_t)INT64_MAX - h->first; /* INT64_MAX - first, exact in [0, 2^64) */
    return (uint64_t)h->nd * big <= room;
}

/* First row j in [from, n) of v with v[j] <= v[j-1] (from >= 1); n if none. */
static size_t td_unordered(const int64_t *v, size_t from, size_t n)
{
    for (size_t j = from; j < n; j++)
        if (v[j] <= v[j - 1]) return j;
    return n;
}

static void td_acc_init(td_acc *a, int64_t first)
{
    memset(a, 0, sizeof *a);
    a->base = a->smn = a->smx = first;
    for (int k = 0; k < 8; k++) a->mn[k] = a->mx[k] = first;
}

static void td_acc_result(const td_acc *a, tsf_dec_summary *s)
{
    s->min = a->smn, s->max = a->smx, s->sum = a->ss;
    for (int k = 0; k < 8; k++) {
        s->min = a->mn[k] < s->min ? a->mn[k] : s->min;
        s->max = a->mx[k] > s->max ? a->mx[k] : s->max;
        s->sum += a->s[k];
    }
    for (int k = 0; k < 16; k++) { /* base + r: the kernel folded only runs where this cannot wrap */
        int64_t lo = a->base + a->rmn[k], hi = a->base + a->rmx[k];
        s->min = lo < s->min ? lo : s->min;
        s->max = hi > s->max ? hi : s->max;
    }
}

void tsf_i64_summary(tsf_codec_path p, const int64_t *v, size_t n, tsf_dec_summary *s)
{
    td_acc a;
    td_acc_init(&a, v[0]);
    td_acc_pick(p)(&a, v, n);
    memset(s, 0, sizeof *s);
    td_acc_result(&a, s);
    s->what = TSF_SUM_VALUES;
    s->unordered = n;
}

tsf_status tsf_ts2diff_decode_i64_sum(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                                      unsigned what, tsf_dec_summary *s, size_t *consumed, tsf_error *err)
{
    memset(s, 0, sizeof *s);
    s->unordered = n;
    td_acc a;
    if (c->path == TSF_PATH_PER_VALUE || n == 0) { /* the reference-shaped path: decode, then one fold */
        tsf_status st = td_decode(c, src, len, v, n, 1, consumed, err);
        if (st || n == 0) return st;
        td_acc_init(&a, v[0]);
        td_acc_portable(&a, v, n);
        td_acc_result(&a, s);
        if (what & TSF_SUM_ASCENDING) s->unordered = td_unordered(v, 1, n);
        s->what = what;
        return TSF_OK;
    }
    if (consumed) *consumed = 0;
    td_kernels k = td_pick(c->path);
    td_acc_fn fold = td_acc_pick(c->path);
    int vals = (what & TSF_SUM_VALUES) != 0, asc = (what & TSF_SUM_ASCENDING) != 0;
    size_t pos = 0, done = 0;
    while (done < n) {
        td_hdr h = {0};
        tsf_status st = tsf_td_header(src, len, pos, 1, &h, err);
        if (st != TSF_OK) return st;
        size_t cnt = (size_t)h.nd + 1;
        size_t take = cnt < n - done ? cnt : n - done;
        int64_t *o = v + done;
        if (vals) {
            if (done == 0) td_acc_init(&a, (int64_t)h.first);
            size_t m = take - 1, kd = 0;
            o[0] = (int64_t)h.first;
            td_acc_portable(&a, o, 1);
            if (m) {
#ifdef TSF_X86
                if (c->path == TSF_PATH_AVX512)
                    kd = tsf_td_dec64_acc_avx512(src + h.data, len - h.data, h.w, h.mind, (uint64_t *)o, m, &a);
                else
#endif
                {
                    kd = k.dec64(src + h.data, len - h.data, h.w, h.mind, (uint64_t *)o, m);
                    fold(&a, o + 1, kd);
                }
            }
            if (kd < m) {
                td_tail(&h, src, (uint64_t *)o, NULL, kd, m);
                fold(&a, o + 1 + kd, m - kd);
            }
        } else {
            td_block(&k, &h, src, len, o, take, 1);
        }
        if (asc && s->unordered == n) {
            if (done && o[0] <= o[-1])
                s->unordered = done;
            else if (!td_header_ascends(&h) && (s->unordered = td_unordered(v, done + 1, done + take)) == done + take)
                s->unordered = n;
        }
        pos = h.data + h.nbytes;
        done += take;
    }
    if (vals) td_acc_result(&a, s);
    s->what = what;
    if (consumed) *consumed = pos;
    return TSF_OK;
}

/* ---- count: walk the block headers ---------------------------------------------------------------- */

static tsf_status td_count(int is64, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    size_t pos = 0, total = 0;
    *n = 0;
    while (pos < len) {
        td_hdr h = {0};
        tsf_status s = tsf_td_header(src, len, pos, is64, &h, err);
        if (s != TSF_OK) return s;
        total += (size_t)h.nd + 1;
        pos = h.data + h.nbytes;
    }
    *n = total;
    return TSF_OK;
}

/* ---- vtable entry points ---------------------------------------------------------------------------- */

static int is64_type(tsf_type t)
{
    return t == TSF_INT64 || t == TSF_TIMESTAMP;
}

static tsf_status ts2diff_encode(const tsf_codec *c, tsf_type type, const void *values, size_t n,
                                 uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (type == TSF_FLOAT || type == TSF_DOUBLE)
        return tsf_floatprec_encode(c, TSF_ENC_TS_2DIFF, type, values, n, dst, cap, written, err);
    return td_encode(c, values, n, is64_type(type), dst, cap, written, err);
}

static tsf_status ts2diff_decode(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                 void *values, size_t n, size_t *consumed, tsf_error *err)
{
    if (type == TSF_FLOAT || type == TSF_DOUBLE)
        return tsf_floatprec_decode(c, TSF_ENC_TS_2DIFF, type, src, len, values, n, consumed, err);
    return td_decode(c, src, len, values, n, is64_type(type), consumed, err);
}

static tsf_status ts2diff_count(tsf_type type, const uint8_t *src, size_t len, size_t *n, tsf_error *err)
{
    if (type == TSF_FLOAT || type == TSF_DOUBLE)
        return tsf_floatprec_count(TSF_ENC_TS_2DIFF, type, src, len, n, err);
    return td_count(is64_type(type), src, len, n, err);
}

const tsf_codec_vt tsf_codec_ts2diff = {
    .encoding = TSF_ENC_TS_2DIFF,
    .encode_types = TSF_TYPES_NUMERIC,
    .decode_types = TSF_TYPES_NUMERIC,
    .bound = ts2diff_bound,
    .encode = ts2diff_encode,
    .decode = ts2diff_decode,
    .count = ts2diff_count,
};
