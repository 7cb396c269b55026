/*
 * auto.c - TSF_ENCODING_AUTO (doc/writer.md "AUTO encoding").
 *
 * Each chunk of an AUTO column has one encoding, chosen on its first page: every candidate (each
 * encoding the writer accepts for the type, FLOAT/DOUBLE TS_2DIFF/RLE with the smallest decimal
 * precision the page has) is encoded and compressed as the page would be stored, and the smallest
 * that reads back wins. On later pages the chunk's encoding is stored and every rival encoding that
 * could get ahead of it is tried as well; each rival keeps a total of the bytes of the pages it was
 * tried on (a lower bound of its size over the chunk). When the chunk's encoding would end up more
 * than 1/64 above a rival's total, or cannot store the page, the chunk ends before the page (it is
 * written at once: non-aligned, as a chunk group of its own; aligned, with the device's time and
 * value chunks) and the page starts the next chunk. So every chunk is within 1/64 of the best single
 * encoding that keeps all its values, under the column's compression.
 *
 * FLOAT/DOUBLE TS_2DIFF or RLE with a decimal precision (§3.3): the page stream starts with
 * uvarint(max_point_number) and holds round(v * 10^mpn), so the precision is recorded per page. A
 * page survives mpn when each value decodes back to the same bits as Java's FloatDecoder computes
 * them ((float)(int / 10^mpn), long / 10^mpn); every page of a precision chunk is checked so.
 */
#include <math.h>
#include <string.h>

#include "../codec/ts2diff_wide.h"
#include "../common/bytes.h"
#include "../format/format.h"
#include "auto.h"
#include "exact.h"

tsf_encoding tsf_wauto_default(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN:
        return TSF_ENC_RLE;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return TSF_ENC_TS_2DIFF;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        return TSF_ENC_GORILLA;
    default:
        return TSF_ENC_PLAIN;
    }
}

void tsf_wauto_init(wcol *c)
{
    c->autoc = TSF_AUTO_UNDECIDED;
    c->auto_prec = 0;
    c->enc = tsf_wauto_default(c->type);
}

static int is_binary(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* The factor exactly as floatprec.c and Java compute it: 10^mpn, 1 for mpn <= 0. */
static double prec_factor(int32_t digits)
{
    return digits <= 0 ? 1.0 : pow(10.0, (double)digits);
}

/* Java's Math.round, inline for |x| < 2^52 (the page check runs on every value of a precision
 * column): x - trunc(x) is exact there, so floor(x) + (x - floor(x) >= 0.5) is too. Elsewhere
 * (integral values, infinities, NaN) tsf_java_round. */
static inline int64_t jround(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) return tsf_java_round(x);
    int64_t r = (int64_t)x;
    double fr = x - (double)r;
    if (fr < 0) {
        r--;
        fr += 1.0;
    }
    return r + (fr >= 0.5);
}

size_t tsf_wauto_prec_first_bad(tsf_type t, const void *vals, size_t n, int32_t digits)
{
    double f = prec_factor(digits);
    if (t == TSF_DOUBLE) {
        const double *v = (const double *)vals;
        for (size_t i = 0; i < n; i++) {
            double back = (double)jround(v[i] * f) / f;
            uint64_t a, b;
            memcpy(&a, &v[i], 8);
            memcpy(&b, &back, 8);
            if (a != b) return i;
        }
        return n;
    }
    if (t == TSF_FLOAT) {
        const float *v = (const float *)vals;
        for (size_t i = 0; i < n; i++) {
            int32_t r = (int32_t)(uint32_t)(uint64_t)jround((double)v[i] * f); /* low 32 bits */
            float back = (float)((double)r / f);
            uint32_t a, b;
            memcpy(&a, &v[i], 4);
            memcpy(&b, &back, 4);
            if (a != b) return i;
        }
        return n;
    }
    return 0;
}

/* c->auto_prec of a precision column: the digits in the low byte, the TS_2DIFF block size (deltas per
 * block, tsf_codec.ts2diff_block; 0 = Java's 128) above. */
static int32_t prec_digits(const wcol *c)
{
    return c->auto_prec & 0xff;
}

static int32_t prec_block(const wcol *c)
{
    return c->auto_prec >> 8;
}

const tsf_codec *tsf_wauto_codec(const tsf_writer *w, const wcol *c, tsf_codec *tmp)
{
    if (c->autoc != TSF_AUTO_PRECISION) return w->codec;
    *tmp = *w->codec;
    tmp->float_precision = prec_digits(c);
    tmp->ts2diff_block = prec_block(c);
    return tmp;
}

void tsf_wauto_schema(tsf_mi_column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].encoding == (uint8_t)TSF_ENCODING_AUTO)
            cols[i].encoding = (uint8_t)tsf_wauto_default((tsf_type)cols[i].data_type);
}

/* ---- candidates ------------------------------------------------------------------------- */

#define MAX_CAND 12

typedef struct cand {
    tsf_encoding enc;
    int32_t prec;  /* < 0: no precision (lossless encoding) */
    int32_t block; /* TS_2DIFF with a precision: deltas per block (0 = Java's 128) */
    int rival;     /* an encoding a column can be given: the chunk's encoding is kept within reach of it */
} cand;

/* Wider TS_2DIFF blocks tried for precision columns (codec/ts2diff_wide.c): a block header costs
 * 24 bytes (DOUBLE) per 129 values at Java's size, so 8-bit deltas (2-digit sensor readings) take
 * 9.5 bits per value instead of 8.2 (1024) or 8.0 (a block per page). */
static const int32_t wide_blocks[] = {1024, TSF_TS2DIFF_BLOCK_MAX};

/* Every encoding the writer accepts for the type, in preference order (ties: the earlier; the Java
 * default first). Those that can lose values (SPRINTZ, RLBE, GORILLA_V1: exact.c) take part page by
 * page where they keep every value; FLOAT/DOUBLE TS_2DIFF/RLE only with a precision (below). */
static size_t candidates(tsf_type t, cand *out)
{
    static const tsf_encoding ints[] = {TSF_ENC_TS_2DIFF, TSF_ENC_RLE,  TSF_ENC_ZIGZAG,  TSF_ENC_GORILLA,
                                        TSF_ENC_CHIMP,    TSF_ENC_RLBE, TSF_ENC_SPRINTZ, TSF_ENC_PLAIN};
    static const tsf_encoding floats[] = {TSF_ENC_GORILLA, TSF_ENC_CHIMP,   TSF_ENC_PLAIN,
                                          TSF_ENC_SPRINTZ, TSF_ENC_RLBE,    TSF_ENC_GORILLA_V1};
    static const tsf_encoding bools[] = {TSF_ENC_RLE, TSF_ENC_PLAIN};
    static const tsf_encoding texts[] = {TSF_ENC_PLAIN, TSF_ENC_DICTIONARY};
    static const tsf_encoding blobs[] = {TSF_ENC_PLAIN};
    const tsf_encoding *l;
    size_t n;
    switch (t) {
    case TSF_BOOLEAN:
        l = bools, n = sizeof bools / sizeof bools[0];
        break;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP:
        l = ints, n = sizeof ints / sizeof ints[0];
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        l = floats, n = sizeof floats / sizeof floats[0];
        break;
    case TSF_TEXT:
    case TSF_STRING:
        l = texts, n = sizeof texts / sizeof texts[0];
        break;
    default:
        l = blobs, n = 1;
        break;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (tsf_codec_can_encode(t, l[i])) out[k++] = (cand){l[i], -1, 0, 1};
    return k;
}

/* Smallest digits at which every value survives the precision stream, or -1. */
static int32_t smallest_precision(tsf_type t, const void *vals, size_t n)
{
    int32_t maxd = t == TSF_FLOAT ? 9 : 18; /* beyond, the scaled values leave the int/long range */
    for (int32_t d = 0; d <= maxd; d++)
        if (tsf_wauto_prec_first_bad(t, vals, n, d) == n) return d;
    return -1;
}

/* ---- per-column state --------------------------------------------------------------------- */

/* One encoded page: body = prefix + values in enc, compressed in cmp (unused when uncompressed). */
typedef struct slot {
    tsf_wbuf enc, cmp;
    size_t raw;   /* bytes of the value stream */
    size_t usize; /* body bytes before compression */
    size_t csize; /* stored body bytes */
} slot;

/*
 * The chunk being built: for every candidate, the bytes its pages would take (page header sizes +
 * stored bodies), counted over the pages on which it was tried (a lower bound of its true total:
 * an untried page counts 0); `out` = it lost a value on a page of the chunk.
 */
struct tsf_wauto {
    cand cs[MAX_CAND];
    size_t nc;
    int32_t digits; /* precision of the chunk's precision candidates; -1: none */
    uint64_t tot[MAX_CAND];
    uint8_t out[MAX_CAND];
    int cur; /* the chunk's candidate; -1 before its first page */
    /* the page being sealed */
    uint64_t psize[MAX_CAND]; /* stored bytes with each candidate; UINT64_MAX: not tried */
    int ready;                /* prepared by tsf_wauto_seal_device */
    const uint8_t *body;      /* the page as stored, committed to the body pool (block blk) */
    tsf_bblock *blk;
    size_t usize, csize;
    struct tsf_wauto_scratch *S; /* the calling context's buffers, during a call */
    uint64_t trials, pages;      /* counters (tests) */
};

/* Buffers of one encoding context, shared by its AUTO columns (wctx.autos). */
typedef struct tsf_wauto_scratch {
    const tsf_allocator *alloc;
    tsf_wbuf pre;    /* the body ahead of the values (times, or rows + bitmap) */
    slot tr, kc, kb; /* a trial; the chunk candidate's page; the best page so far */
    int kb_at;       /* candidate in kb, or -1 */
} tsf_wauto_scratch;

/* The chunk candidate may be at most 1/SLACK larger than any other over the chunk (below 2%). */
#define SLACK 64

static void slot_init(slot *s, const tsf_allocator *a)
{
    memset(s, 0, sizeof *s);
    tsf_wbuf_init(&s->enc, a);
    tsf_wbuf_init(&s->cmp, a);
}

static void slot_free(slot *s)
{
    tsf_wbuf_free(&s->enc);
    tsf_wbuf_free(&s->cmp);
}

static void slot_swap(slot *a, slot *b)
{
    slot t = *a;
    *a = *b;
    *b = t;
}

void tsf_wauto_free(tsf_writer *w, wcol *c)
{
    if (!c->au) return;
    tsf_free(w->alloc, c->au, sizeof *c->au);
    c->au = NULL;
}

void tsf_wauto_ctx_free(wctx *x)
{
    tsf_wauto_scratch *S = x->autos;
    if (!S) return;
    tsf_wbuf_free(&S->pre);
    slot_free(&S->tr);
    slot_free(&S->kc);
    slot_free(&S->kb);
    tsf_free(S->alloc, S, sizeof *S);
    x->autos = NULL;
}

void tsf_wauto_counters(const wcol *c, uint64_t *pages, uint64_t *trials)
{
    *pages = c->au ? c->au->pages : 0;
    *trials = c->au ? c->au->trials : 0;
}

static tsf_status oom(const wcol *c, tsf_error *err)
{
    return tsf_err(err, TSF_ENOMEM, "writer: out of memory (AUTO encoding of %s)", c->name);
}

static tsf_status state(tsf_writer *w, wctx *x, wcol *c, tsf_error *err)
{
    if (!x->autos) {
        tsf_wauto_scratch *S = tsf_alloc(w->alloc, sizeof *S);
        if (!S) return oom(c, err);
        memset(S, 0, sizeof *S);
        S->alloc = w->alloc;
        tsf_wbuf_init(&S->pre, w->alloc);
        slot_init(&S->tr, w->alloc);
        slot_init(&S->kc, w->alloc);
        slot_init(&S->kb, w->alloc);
        x->autos = S;
    }
    if (!c->au) {
        tsf_wauto *a = tsf_alloc(w->alloc, sizeof *a);
        if (!a) return oom(c, err);
        memset(a, 0, sizeof *a);
        a->cur = -1;
        c->au = a;
    }
    c->au->S = x->autos;
    return TSF_OK;
}

/* Builds the page body ahead of the values as the writer does (§6): non-aligned, uvarint length +
 * TS_2DIFF times; aligned, the row count and presence bitmap. */
static tsf_status page_prefix(tsf_writer *w, const wcol *c, const int64_t *times, size_t rows, tsf_wbuf *pre,
                              tsf_error *err)
{
    pre->len = 0;
    if (c->mask == 0 && times) {
        size_t tb = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_TS_2DIFF, c->nvals, 0), wrote = 0;
        uint8_t *d = tsf_wbuf_reserve(pre, TSF_UVARINT32_MAX + tb);
        if (!d) return oom(c, err);
        tsf_status s = tsf_codec_encode(w->codec, TSF_INT64, TSF_ENC_TS_2DIFF, times, c->nvals,
                                        d + TSF_UVARINT32_MAX, tb, &wrote, err);
        if (s) return s;
        size_t h = 0;
        if ((s = tsf_fmt_write_nonaligned_prefix(wrote, d, TSF_UVARINT32_MAX, &h, err))) return s;
        memmove(d + h, d + TSF_UVARINT32_MAX, wrote);
        pre->len = h + wrote;
    } else if (c->mask == 0x40 && c->bitmap && rows) {
        size_t cap = 4 + (rows + 7) / 8;
        uint8_t *d = tsf_wbuf_reserve(pre, cap);
        if (!d) return oom(c, err);
        tsf_status s = tsf_fmt_write_value_page_prefix((uint32_t)rows, c->bitmap, d, cap, &pre->len, err);
        if (s) return s;
    }
    return TSF_OK;
}

static tsf_codec cand_codec(const tsf_writer *w, const cand *k)
{
    tsf_codec tmp = *w->codec;
    if (k->prec >= 0) {
        tmp.float_precision = k->prec;
        tmp.ts2diff_block = k->block;
    }
    return tmp;
}

/*
 * Encodes the page with candidate k into a->S->tr and compresses it as the writer stores it (the
 * context's compressor). With `check`, *lost = 1 when the page does not read back in an encoding
 * exact.c checks (precision candidates are checked before). TSF_ENOTSUP when the codec refuses.
 */
static tsf_status trial(tsf_writer *w, wctx *x, wcol *c, const cand *k, int check, int *lost, tsf_error *err)
{
    tsf_wauto *a = c->au;
    slot *t = &a->S->tr;
    tsf_codec tmp = cand_codec(w, k);
    size_t n = c->nvals, var = is_binary(c->type) ? c->arena.len : 0;
    size_t bound = tsf_codec_encode_bound(c->type, k->enc, n, var);
    *lost = 0;
    a->trials++;
    if (!bound) return TSF_ENOTSUP;
    t->enc.len = 0;
    uint8_t *d = tsf_wbuf_reserve(&t->enc, a->S->pre.len + bound);
    if (!d) return oom(c, err);
    memcpy(d, a->S->pre.p, a->S->pre.len);
    tsf_status s = tsf_codec_encode(&tmp, c->type, k->enc, c->vals, n, d + a->S->pre.len, bound, &t->raw, err);
    if (s) return s;
    if (check && k->prec < 0 && tsf_wexact_needed(c->type, k->enc)) {
        char why[400];
        if ((s = tsf_wexact_check(&tmp, w->alloc, c->type, k->enc, c->vals, n, d + a->S->pre.len, t->raw, NULL, why,
                                  sizeof why, err)))
            return s;
        if (why[0]) {
            *lost = 1;
            return TSF_OK;
        }
    }
    t->usize = a->S->pre.len + t->raw;
    t->enc.len = t->usize;
    if (c->comp == TSF_UNCOMPRESSED) {
        t->csize = t->usize;
        return TSF_OK;
    }
    size_t cb = tsf_compress_bound(c->comp, t->usize);
    if (!cb)
        return tsf_err(err, TSF_ENOTSUP, "writer: compression %s unsupported (%s)", tsf_compression_name(c->comp),
                       c->name);
    t->cmp.len = 0;
    uint8_t *cd = tsf_wbuf_reserve(&t->cmp, cb);
    if (!cd) return oom(c, err);
    return tsf_compressor_compress(x->cz, c->comp, d, t->usize, cd, cb, &t->csize, err);
}

/* Stored bytes of the trial page: page header sizes + body. */
static uint64_t stored(const slot *t)
{
    return tsf_fmt_page_header_size((uint32_t)t->usize, (uint32_t)t->csize, 0) + t->csize;
}

/* Tries candidate i on the page (check: as trial): a->psize[i], or a->out[i] when it loses a value
 * or is refused. The page goes to kc (the chunk's candidate) or, when it is the smallest so far, to kb. */
static tsf_status try_cand(tsf_writer *w, wctx *x, wcol *c, size_t i, int check, tsf_error *err)
{
    tsf_wauto *a = c->au;
    int lost = 0;
    tsf_status s = trial(w, x, c, &a->cs[i], check, &lost, err);
    if (s == TSF_ENOTSUP || lost) {
        a->out[i] = 1;
        a->psize[i] = UINT64_MAX;
        return TSF_OK;
    }
    if (s) return s;
    a->psize[i] = stored(&a->S->tr);
    if ((int)i == a->cur) {
        slot_swap(&a->S->tr, &a->S->kc);
    } else if (a->S->kb_at < 0 || a->psize[i] < a->psize[a->S->kb_at]) {
        slot_swap(&a->S->tr, &a->S->kb);
        a->S->kb_at = (int)i;
    }
    return TSF_OK;
}

/* 1 when candidate i's values may be lost on some page (they are checked only where it matters). */
static int lossy_kind(const tsf_wauto *a, const wcol *c, size_t i)
{
    return a->cs[i].prec < 0 && tsf_wexact_needed(c->type, a->cs[i].enc);
}

/* Decodes the stream of slot t (candidate k) and compares it with the page bit for bit. */
static tsf_status verify(tsf_writer *w, const wcol *c, const cand *k, const slot *t, size_t pre, int *same,
                         tsf_error *err)
{
    *same = 1;
    if (is_binary(c->type)) return TSF_OK; /* PLAIN and DICTIONARY keep the bytes */
    size_t bytes = c->nvals * c->width;
    void *back = tsf_alloc(w->alloc, bytes);
    if (!back) return oom(c, err);
    tsf_codec tmp = cand_codec(w, k);
    tsf_error e2 = {0};
    size_t used = 0;
    tsf_status s = tsf_codec_decode(&tmp, c->type, k->enc, t->enc.p + pre, t->raw, back, c->nvals, &used, &e2);
    *same = s == TSF_OK;
    for (size_t i = 0; *same && i < c->nvals; i++) {
        const uint8_t *g = (const uint8_t *)back + i * c->width, *v = (const uint8_t *)c->vals + i * c->width;
        /* every TsFile float encoding stores one canonical NaN, as Java's floatToIntBits does */
        if (c->type == TSF_DOUBLE && isnan(*(const double *)g) && isnan(*(const double *)v)) continue;
        if (c->type == TSF_FLOAT && isnan(*(const float *)g) && isnan(*(const float *)v)) continue;
        if (c->type == TSF_BOOLEAN ? (*g != 0) != (*v != 0) : memcmp(g, v, c->width) != 0) *same = 0;
    }
    tsf_free(w->alloc, back, bytes);
    return s == TSF_ENOMEM ? oom(c, err) : TSF_OK;
}

static void set_encoding(wcol *c, const cand *k)
{
    c->enc = k->enc;
    c->autoc = k->prec >= 0 ? TSF_AUTO_PRECISION : TSF_AUTO_DECIDED;
    c->auto_prec = k->prec >= 0 ? k->prec | k->block << 8 : 0;
}

/*
 * The page starts a chunk: the candidates (precision ones at the smallest digits this page needs)
 * are all tried on it and the smallest that reads back wins; the totals start from this page.
 */
static tsf_status start_chunk(tsf_writer *w, wctx *x, wcol *c, tsf_error *err)
{
    tsf_wauto *a = c->au;
    a->nc = candidates(c->type, a->cs);
    a->digits = -1;
    if (c->type == TSF_FLOAT || c->type == TSF_DOUBLE) {
        a->digits = smallest_precision(c->type, c->vals, c->nvals);
        if (a->digits >= 0) {
            a->cs[a->nc++] = (cand){TSF_ENC_TS_2DIFF, a->digits, 0, 1};
            for (size_t i = 0; i < sizeof wide_blocks / sizeof wide_blocks[0]; i++)
                a->cs[a->nc++] = (cand){TSF_ENC_TS_2DIFF, a->digits, wide_blocks[i], 0};
            a->cs[a->nc++] = (cand){TSF_ENC_RLE, a->digits, 0, 1};
        }
    }
    a->cur = -1;
    a->S->kb_at = -1;
    for (size_t i = 0; i < a->nc; i++) {
        a->out[i] = 0;
        a->tot[i] = 0;
        a->psize[i] = UINT64_MAX;
    }
    tsf_status s;
    for (size_t i = 0; i < a->nc; i++)
        if ((s = try_cand(w, x, c, i, 0, err))) return s;
    for (;;) {
        if (a->S->kb_at < 0) return tsf_err(err, TSF_EINVAL, "writer: AUTO found no encoding for %s", c->name);
        size_t bi = (size_t)a->S->kb_at;
        int same = 1;
        if (lossy_kind(a, c, bi)) { /* the exact check (it models the Java reader where that differs) */
            char why[400];
            tsf_codec tmp = cand_codec(w, &a->cs[bi]);
            if ((s = tsf_wexact_check(&tmp, w->alloc, c->type, a->cs[bi].enc, c->vals, c->nvals,
                                      a->S->kb.enc.p + a->S->pre.len, a->S->kb.raw, NULL, why, sizeof why, err)))
                return s;
            same = !why[0];
        } else if ((s = verify(w, c, &a->cs[bi], &a->S->kb, a->S->pre.len, &same, err))) {
            return s;
        }
        if (same) break;
        /* a safety net (every candidate reads back): the next smallest, tried again */
        a->out[bi] = 1;
        a->psize[bi] = UINT64_MAX;
        a->S->kb_at = -1;
        for (size_t i = 0; i < a->nc; i++)
            if (!a->out[i] && a->psize[i] != UINT64_MAX && (a->S->kb_at < 0 || a->psize[i] < a->psize[a->S->kb_at]))
                a->S->kb_at = (int)i;
        if (a->S->kb_at >= 0) {
            size_t j = (size_t)a->S->kb_at;
            a->S->kb_at = -1;
            if ((s = try_cand(w, x, c, j, 0, err))) return s;
        }
    }
    a->cur = a->S->kb_at;
    slot_swap(&a->S->kb, &a->S->kc);
    a->S->kb_at = -1;
    for (size_t i = 0; i < a->nc; i++)
        if (!a->out[i]) a->tot[i] = a->psize[i];
    set_encoding(c, &a->cs[a->cur]);
    return TSF_OK;
}

/*
 * The page continues the chunk: it is encoded with the chunk's candidate, and with each other
 * candidate unless even a free page of that candidate (0 bytes) would keep the chunk's candidate
 * within 1/SLACK of it. *cut = 1 when the chunk must end before this page: the chunk's candidate
 * cannot store the page, more digits would make a precision candidate lossless for the chunk, or
 * the chunk's candidate would fall more than 1/SLACK behind another one. Totals move only when
 * the page is kept.
 */
static tsf_status continue_chunk(tsf_writer *w, wctx *x, wcol *c, int *cut, tsf_error *err)
{
    tsf_wauto *a = c->au;
    tsf_status s;
    *cut = 0;
    for (size_t i = 0; i < a->nc; i++) a->psize[i] = UINT64_MAX;
    a->S->kb_at = -1;
    if (a->digits >= 0) {
        int prec_in = 0;
        for (size_t i = 0; i < a->nc; i++) prec_in |= a->cs[i].prec >= 0 && !a->out[i];
        if (prec_in && tsf_wauto_prec_first_bad(c->type, c->vals, c->nvals, a->digits) != c->nvals) {
            int32_t d = smallest_precision(c->type, c->vals, c->nvals);
            if (d > a->digits) *cut = 1; /* at d the chunk so far may be exact too: start again at d */
            for (size_t i = 0; i < a->nc; i++)
                if (a->cs[i].prec >= 0) a->out[i] = 1;
        }
    }
    size_t e = (size_t)a->cur;
    if (*cut || a->out[e]) {
        *cut = 1;
        return TSF_OK;
    }
    if ((s = try_cand(w, x, c, e, 1, err))) return s;
    if (a->out[e]) {
        *cut = 1;
        return TSF_OK;
    }
    uint64_t te = a->tot[e] + a->psize[e];
    for (size_t i = 0; i < a->nc; i++) {
        if (i == e || a->out[i] || !a->cs[i].rival) continue;
        if (te * SLACK > a->tot[i] * (SLACK + 1) && (s = try_cand(w, x, c, i, 0, err))) return s;
        uint64_t lb = a->tot[i] + (a->psize[i] == UINT64_MAX ? 0 : a->psize[i]); /* i's bytes at least */
        if (a->out[i] || te * SLACK <= lb * (SLACK + 1)) continue;
        /* i is ahead by more than 1/SLACK. An encoding that can lose values is checked on this page
           first (a page it loses is not a page it can store: it is out for the chunk). */
        if (lossy_kind(a, c, i) && (s = try_cand(w, x, c, i, 1, err))) return s;
        if (!a->out[i]) *cut = 1;
    }
    if (*cut) return TSF_OK;
    for (size_t i = 0; i < a->nc; i++)
        if (!a->out[i] && a->psize[i] != UINT64_MAX) a->tot[i] += a->psize[i];
    return TSF_OK;
}

/* Makes the page ready for trials: the column's state, the values' bytes of a binary page (the
 * arena may have moved since they were appended) and the body ahead of the values. */
static tsf_status load_page(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, size_t rows, tsf_error *err)
{
    tsf_status s;
    if ((s = state(w, x, c, err))) return s;
    if (is_binary(c->type)) {
        tsf_bytes *b = (tsf_bytes *)c->vals;
        for (size_t i = 0; i < c->nvals; i++) b[i].data = tsf_wcol_arena_at(c, c->boff[i]);
    }
    return page_prefix(w, c, times, rows, &c->au->S->pre, err);
}

/* Prepares the page: starts or continues the chunk; *cut as continue_chunk (then nothing moved). */
static tsf_status prepare(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, size_t rows, int *cut,
                          tsf_error *err)
{
    tsf_status s;
    *cut = 0;
    if ((s = load_page(w, x, c, times, rows, err))) return s;
    c->au->pages++;
    if (c->nonempty_pages == 0 || c->au->cur < 0) return start_chunk(w, x, c, err);
    return continue_chunk(w, x, c, cut, err);
}

/* Copies the chunk candidate's page (kc) into the body pool, as the column's next page. */
static tsf_status commit_body(tsf_writer *w, wctx *x, wcol *c, tsf_error *err)
{
    tsf_wauto *a = c->au;
    const slot *k = &a->S->kc;
    const uint8_t *b = c->comp == TSF_UNCOMPRESSED ? k->enc.p : k->cmp.p;
    uint8_t *d = tsf_bpool_reserve(&w->bodies, &x->body, k->csize ? k->csize : 1);
    if (!d) return oom(c, err);
    memcpy(d, b, k->csize);
    a->blk = tsf_bpool_commit(x->body, d + k->csize);
    a->body = d;
    a->usize = k->usize;
    a->csize = k->csize;
    return TSF_OK;
}

void tsf_wauto_body(const wcol *c, const uint8_t **body, tsf_bblock **blk, size_t *usize, size_t *csize)
{
    *body = c->au->body;
    *blk = c->au->blk;
    *usize = c->au->usize;
    *csize = c->au->csize;
}

/* ---- ending a chunk early ----------------------------------------------------------------- */

/* Writes a chunk-group header for d (0x00 marker + device id, §4.1). */
static tsf_status group_header(tsf_writer *w, const wdevice *d, tsf_error *err)
{
    tsf_wbuf hb;
    tsf_wbuf_init(&hb, w->alloc);
    tsf_fmt_put_chunk_group_header(&hb, d->segs, d->nsegs);
    tsf_status s =
        hb.oom ? tsf_err(err, TSF_ENOMEM, "writer: out of memory") : tsf_w_out(w, hb.p, hb.len, err);
    tsf_wbuf_free(&hb);
    return s;
}

static wdevice *device_of(tsf_writer *w, const wcol *c)
{
    for (size_t i = 0; i < w->ndevs; i++)
        for (size_t j = 0; j < w->devs[i]->ncols; j++)
            if (&w->devs[i]->cols[j] == c) return w->devs[i];
    return NULL;
}

/* Writes column c's chunk so far as a chunk group of its own (non-aligned). */
static tsf_status cut_column(tsf_writer *w, wcol *c, tsf_error *err)
{
    wdevice *d = device_of(w, c);
    if (!d) return tsf_err(err, TSF_EINVAL, "writer: AUTO column %s has no device", c->name);
    tsf_status s = group_header(w, d, err);
    return s ? s : tsf_wcol_flush_chunk(w, c, 0, err);
}

tsf_status tsf_wauto_seal(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, size_t rows, tsf_error *err)
{
    if (c->au && c->au->ready) { /* aligned: prepared with the device (tsf_wauto_seal_device) */
        c->au->ready = 0;
        return TSF_OK;
    }
    int cut = 0;
    tsf_status s = prepare(w, x, c, times, rows, &cut, err);
    if (!s && cut && !(s = cut_column(w, c, err))) s = start_chunk(w, x, c, err);
    return s ? s : commit_body(w, x, c, err);
}

tsf_status tsf_wauto_seal_device(tsf_writer *w, wdevice *d, tsf_error *err)
{
    tsf_status s;
    int cut = 0;
    for (size_t j = 0; j < d->ncols; j++) {
        wcol *c = &d->cols[j];
        if (!c->autoc || !c->nvals) continue;
        int cj = 0;
        if ((s = prepare(w, &w->ctx, c, NULL, d->rows, &cj, err))) return s;
        if (!cj && (s = commit_body(w, &w->ctx, c, err))) return s;
        c->au->ready = !cj;
        cut |= cj;
    }
    if (!cut) return TSF_OK;
    /* the device's chunks so far become one chunk group (time and value chunks stay paired); every
       AUTO column then starts its chunk with this page */
    for (size_t j = 0; j < d->ncols; j++) {
        wcol *c = &d->cols[j];
        if (c->au && c->au->ready) tsf_bpool_release(&w->bodies, c->au->blk);
    }
    if ((s = group_header(w, d, err))) return s;
    if ((s = tsf_wcol_flush_chunk(w, &d->tcol, 0, err))) return s;
    for (size_t j = 0; j < d->ncols; j++)
        if ((s = tsf_wcol_flush_chunk(w, &d->cols[j], 1, err))) return s;
    for (size_t j = 0; j < d->ncols; j++) {
        wcol *c = &d->cols[j];
        if (!c->autoc || !c->nvals) continue;
        if ((s = load_page(w, &w->ctx, c, NULL, d->rows, err)) || (s = start_chunk(w, &w->ctx, c, err)) ||
            (s = commit_body(w, &w->ctx, c, err)))
            return s;
        c->au->ready = 1;
    }
    return TSF_OK;
}
