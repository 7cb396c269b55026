/*
 * column.c - the column path of the writer: buffering a page of one column, its statistics in the
 * same pass, sealing pages (spec tsfile-container-format.md §6: non-aligned body = uvarint timeLen
 * + TS_2DIFF times + values; aligned time body = times; aligned value body = i32 rows + MSB-first
 * bitmap + non-null values; an all-null value page is the 1-byte header 0x00), compressing them,
 * and writing whole chunks (§5 header, §6.1 page headers with statistics iff more than one page)
 * while recording ChunkMetadata (§8.2).
 */
#include <stdio.h>
#include <string.h>

#include "../common/bytes.h"
#include "../format/format.h"
#include "../codec/gorilla_core.h"
#include "auto.h"
#include "exact.h"
#include "lz4lit.h"
#include "writer.h"

size_t tsf_type_width(tsf_type t)
{
    return t == TSF_VECTOR ? sizeof(int64_t) : tsf_type_size(t);
}

static int is_binary(tsf_type t) { return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB; }

tsf_status tsf_wcol_init(tsf_writer *w, wcol *c, const char *name, size_t len, tsf_type type, tsf_encoding enc,
                         tsf_compression comp, uint8_t mask, tsf_error *err)
{
    memset(c, 0, sizeof *c);
    c->name = tsf_alloc(w->alloc, len + 1);
    if (!c->name) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    memcpy(c->name, name, len);
    c->name[len] = 0;
    c->name_len = len;
    c->type = type;
    c->enc = enc;
    c->comp = comp;
    c->mask = mask;
    c->width = tsf_type_width(type);
    if (enc == TSF_ENCODING_AUTO) tsf_wauto_init(c);
    tsf_wbuf_init(&c->arena, w->alloc);
    tsf_wbuf_init(&c->pstats, w->alloc);
    tsf_wbuf_init(&c->cmeta, w->alloc);
    tsf_wstats_init(&c->pstat, type);
    tsf_wstats_init(&c->cstat, type);
    tsf_wstats_init(&c->sstat, type);
    tsf_wchunk_init(w, &c->out, type);
    if (enc == TSF_ENCODING_AUTO) w->any_auto = 1;
    return TSF_OK;
}

void tsf_wchunk_init(tsf_writer *w, wchunk *k, tsf_type type)
{
    memset(k, 0, sizeof *k);
    tsf_wbuf_init(&k->pstats, w->alloc);
    tsf_wstats_init(&k->cstat, type);
}

void tsf_wchunk_free(tsf_writer *w, wchunk *k)
{
    /* page bodies: the pool frees its blocks at close */
    if (k->pages) tsf_free(w->alloc, k->pages, k->pcap * sizeof(wpage));
    tsf_wbuf_free(&k->pstats);
    tsf_wstats_free(&k->cstat, w->alloc);
    memset(k, 0, sizeof *k);
}

void tsf_wcol_free(tsf_writer *w, wcol *c)
{
    const tsf_allocator *a = w->alloc;
    if (c->name) tsf_free(a, c->name, c->name_len + 1);
    if (c->refusal) tsf_free(a, c->refusal, strlen(c->refusal) + 1);
    tsf_wauto_free(w, c);
    if (c->vals && !c->vpool) tsf_free(a, c->vals, c->vcap * c->width);
    if (c->times && !c->tpool) tsf_free(a, c->times, c->tcap * sizeof(int64_t));
    if (c->boff) tsf_free(a, c->boff, c->vcap * sizeof(size_t));
    if (c->bitmap) tsf_free(a, c->bitmap, c->bmcap);
    tsf_wbuf_free(&c->arena);
    tsf_wchunk_free(w, &c->ck);
    tsf_wchunk_free(w, &c->out);
    tsf_wbuf_free(&c->cmeta);
    tsf_wstats_free(&c->pstat, a);
    tsf_wstats_free(&c->sstat, a);
    memset(c, 0, sizeof *c);
}

static int plain_like(const wcol *c)
{
    return c->enc == TSF_ENC_PLAIN || c->enc == TSF_ENC_DICTIONARY;
}

/*
 * Byte limit of a page, as Java applies it: the estimate is first checked once a page holds
 * MIN_CHECK (1500) points, so pages of fewer points are never cut by size; a hard limit of
 * 16 x page_max_bytes bounds pages of huge binary values.
 */
#define MIN_CHECK 1500

static int over_limit(const tsf_writer *w, size_t nvals, size_t est)
{
    size_t lim = w->opt.page_max_bytes;
    size_t hard = lim > SIZE_MAX / 16 ? SIZE_MAX : lim * 16;
    return (nvals >= MIN_CHECK && est >= lim) || est >= hard;
}

int tsf_wcol_full(const tsf_writer *w, const wcol *c)
{
    return over_limit(w, c->nvals, c->est);
}

/*
 * Grows a pending array from `old` to `nb` bytes. A first array of a whole page (>= 16 KiB) comes
 * from the context's pending-array block of the body pool when the pool maps huge pages (no
 * allocator hooks): one fault per 2 MiB instead of one per 4 KiB; such memory is kept until close.
 */
static void *grow_arr(tsf_writer *w, wctx *x, void *p, size_t old, size_t nb, int whole, uint8_t *pooled)
{
    if (!p && whole && nb >= 16384 && w->bodies.map) {
        uint8_t *d = tsf_bpool_reserve(&w->bodies, &x->pend, nb + 63);
        if (!d) return NULL;
        d = (uint8_t *)(((uintptr_t)d + 63) & ~(uintptr_t)63);
        tsf_bpool_commit(x->pend, d + nb);
        *pooled = 1;
        return d;
    }
    if (*pooled) { /* grown past a page: leave the pooled array (freed with the pool) */
        void *q = tsf_alloc(w->alloc, nb);
        if (!q) return NULL;
        memcpy(q, p, old);
        *pooled = 0;
        return q;
    }
    return tsf_realloc(w->alloc, p, old, nb);
}

/* Grows the pending arrays to hold `need` values (at most one page). */
static tsf_status reserve_vals(tsf_writer *w, wctx *x, wcol *c, size_t need, int with_times, tsf_error *err)
{
    if (need <= c->vcap && (!with_times || need <= c->tcap)) return TSF_OK;
    size_t nc = c->vcap ? c->vcap : 64, maxp = w->opt.page_max_points;
    /* a first batch of at least 1/8 page: the whole page at once (each growth step would copy the
       values into fresh memory, and a fresh page costs a fault: ~13 us on this VM) */
    if (!c->vcap && need >= maxp / 8 && maxp <= 65536) nc = maxp;
    while (nc < need) nc *= 2;
    if (nc > maxp && need <= maxp) nc = maxp;
    if (nc > c->vcap) {
        uint8_t *nv = is_binary(c->type) ? tsf_realloc(w->alloc, c->vals, c->vcap * c->width, nc * c->width)
                                         : grow_arr(w, x, c->vals, c->vcap * c->width, nc * c->width, nc == maxp,
                                                    &c->vpool);
        if (!nv) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
        c->vals = nv;
        if (is_binary(c->type)) {
            size_t *nb = tsf_realloc(w->alloc, c->boff, c->vcap * sizeof(size_t), nc * sizeof(size_t));
            if (!nb) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
            c->boff = nb;
        }
        c->vcap = nc;
    }
    if (with_times && nc > c->tcap) {
        int64_t *nt = grow_arr(w, x, c->times, c->tcap * sizeof(int64_t), nc * sizeof(int64_t), nc == maxp, &c->tpool);
        if (!nt) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
        c->times = nt;
        c->tcap = nc;
    }
    return TSF_OK;
}

static inline int bit_lsb(const uint8_t *v, size_t i) { return (v[i >> 3] >> (i & 7)) & 1; }

/* Copies values [from, from+n) of a tablet column into the pending page at nvals. */
static tsf_status copy_vals(wctx *x, wcol *c, const void *vals, size_t from, size_t n, tsf_error *err)
{
    if (!is_binary(c->type)) {
        memcpy(c->vals + c->nvals * c->width, (const uint8_t *)vals + from * c->width, n * c->width);
        if (plain_like(c)) c->est += n * c->width;
        c->pmem += n * c->width;
        x->mem += (int64_t)(n * c->width);
        return TSF_OK;
    }
    const tsf_bytes *src = (const tsf_bytes *)vals + from;
    tsf_bytes *dst = (tsf_bytes *)c->vals + c->nvals;
    size_t before = c->arena.len;
    for (size_t i = 0; i < n; i++) {
        c->boff[c->nvals + i] = c->arena.len;
        tsf_wbuf_put(&c->arena, src[i].data, src[i].len);
        dst[i].data = NULL;
        dst[i].len = src[i].len;
    }
    if (c->arena.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (values of %s)", c->name);
    if (c->mask == 0x40) /* aligned: the same estimate as the non-aligned path computes */
        for (size_t i = 0; i < n; i++)
            c->est += c->enc == TSF_ENC_DICTIONARY ? src[i].len / 4 + 1 : src[i].len + 4;
    /* non-aligned binary: the caller counts while choosing the batch */
    size_t add = c->arena.len - before + n * sizeof(tsf_bytes);
    c->pmem += add;
    x->mem += (int64_t)add;
    return TSF_OK;
}

tsf_status tsf_wcol_own_times(tsf_writer *w, wctx *x, wcol *c, tsf_error *err)
{
    if (!c->dense) return TSF_OK;
    size_t n = c->nvals;
    tsf_status s = reserve_vals(w, x, c, n ? n : 1, 1, err);
    if (s) return s;
    if (n) memcpy(c->times, c->dev->dt + (c->g0 - c->dev->dt_base), n * sizeof(int64_t));
    c->dense = 0;
    c->pmem += n * sizeof(int64_t);
    x->mem += (int64_t)(n * sizeof(int64_t));
    return TSF_OK;
}

static tsf_status seal_page(tsf_writer *w, wctx *x, wcol *c, size_t rows, const void *vals, const int64_t *times,
                            size_t n, const void *vals2, size_t n2, tsf_error *err);
static tsf_status seal_x2(tsf_writer *w, wctx *x, wcol *c, size_t rows, const void *vals2, size_t n2,
                          tsf_error *err);
static tsf_status drop_refused(tsf_writer *w, wctx *x, wcol *c, tsf_status s, tsf_error *err);

/* Folds a context's buffered-bytes delta into the writer's count (calling thread only). */
static void fold_mem(tsf_writer *w, wctx *x)
{
    int64_t m = (int64_t)w->mem + x->mem;
    w->mem = m > 0 ? (size_t)m : 0;
    x->mem = 0;
}

tsf_status tsf_wcol_append(tsf_writer *w, wcol *c, const int64_t *times, const void *vals, const uint8_t *valid,
                           size_t vbit0, size_t k, tsf_error *err)
{
    tsf_status s = tsf_wcol_append_x(w, &w->ctx, c, times, vals, valid, vbit0, k, UINT64_MAX, err);
    fold_mem(w, &w->ctx);
    return s;
}

/* Statistics of a non-aligned batch: computed ahead by tsf_wcol_append_group, or here. */
static void batch_stats(tsf_writer *w, wctx *x, wcol *c, int64_t t0, int64_t t1, const void *v, size_t n)
{
    if (x->pre) {
        c->pstat = *x->pre;
        x->pre = NULL;
        return;
    }
    tsf_wstats_update(&c->pstat, t0, t1, v, n, w->alloc);
}

static int group_ok(const wcol *c, tsf_type t)
{
    return (c->mask == 0 || c->mask == 0x40) && c->type == t && !c->autoc && !plain_like(c) &&
           (t == TSF_INT32 || t == TSF_DATE || t == TSF_INT64 || t == TSF_TIMESTAMP || t == TSF_FLOAT ||
            t == TSF_DOUBLE);
}

tsf_status tsf_wcol_append_group(tsf_writer *w, wctx *x, wcol *const *cs, const void *const *vals, size_t m,
                                 const int64_t *times, size_t k, uint64_t g, tsf_error *err)
{
    tsf_status s;
    size_t maxp = w->opt.page_max_points, j = 0;
    while (j < m) {
        wcol *const *q = cs + j;
        /* four columns of one type with equal pending pages: one page segmentation for all four */
        int four = j + 4 <= m && k > 0;
        for (size_t a = 0; four && a < 4; a++) /* aligned: the device keeps the pages in step */
            four = group_ok(q[a], q[0]->type) && q[a]->mask == q[0]->mask &&
                   (q[0]->mask || q[a]->nvals == q[0]->nvals);
        if (!four) {
            if ((s = tsf_wcol_append_x(w, x, cs[j], times, vals[j], NULL, 0, k, g, err))) return s;
            j++;
            continue;
        }
        size_t wd = q[0]->width, off = 0;
        while (off < k) {
            size_t seg = maxp - q[0]->nvals; /* rows until the pages are full */
            if (seg > k - off || q[0]->mask) seg = k - off;
            tsf_wstats pre[4];
            tsf_wstats *ps[4] = {&pre[0], &pre[1], &pre[2], &pre[3]};
            const void *pv[4];
            for (size_t a = 0; a < 4; a++) {
                pre[a] = q[a]->pstat; /* numeric: no owned bytes */
                pv[a] = (const uint8_t *)vals[j + a] + off * wd;
            }
            tsf_wstats_update4(ps, times[off], times[off + seg - 1], pv, seg, w->codec->path != TSF_PATH_SCALAR);
            for (size_t a = 0; a < 4; a++) {
                x->pre = &pre[a];
                s = tsf_wcol_append_x(w, x, q[a], times + off, pv[a], NULL, 0, seg,
                                      g == UINT64_MAX ? g : g + off, err);
                x->pre = NULL;
                if (s) return s;
            }
            off += seg;
        }
        j += 4;
    }
    return TSF_OK;
}

/* Points binary value descriptors at their arena copies. */
static void fix_binary(wcol *c)
{
    if (!is_binary(c->type)) return;
    tsf_bytes *b = (tsf_bytes *)c->vals;
    for (size_t i = 0; i < c->nvals; i++) b[i].data = tsf_wcol_arena_at(c, c->boff[i]);
}

tsf_status tsf_wcol_append_x(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, const void *vals,
                             const uint8_t *valid, size_t vbit0, size_t k, uint64_t g, tsf_error *err)
{
    tsf_status s;
    size_t maxp = w->opt.page_max_points;
    if (c->mask == 0x80) { /* aligned time column: the values are the times */
        if ((s = reserve_vals(w, x, c, c->nvals + k, 0, err))) return s;
        memcpy(c->vals + c->nvals * 8, times, k * 8);
        tsf_wstats_update_time(&c->pstat, times[0], times[k - 1], k);
        c->nvals += k;
        c->pmem += k * 8;
        x->mem += (int64_t)(k * 8);
        return TSF_OK;
    }
    if (c->mask == 0x40) { /* aligned value column: presence bits + present values */
        size_t rows = c->prow + k;
        size_t bmneed = (rows + 7) / 8;
        if (bmneed > c->bmcap) {
            size_t nc = c->bmcap ? c->bmcap : 64;
            while (nc < bmneed) nc *= 2;
            uint8_t *nb = tsf_realloc(w->alloc, c->bitmap, c->bmcap, nc);
            if (!nb) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (bitmap of %s)", c->name);
            memset(nb + c->bmcap, 0, nc - c->bmcap);
            c->bitmap = nb;
            c->bmcap = nc;
        }
        if (!vals) { /* column absent from the tablet: k null rows */
            c->prow = rows;
            return TSF_OK;
        }
        if ((s = reserve_vals(w, x, c, c->nvals + k, 0, err))) return s;
        size_t start = c->nvals;
        int64_t t0 = 0, t1 = 0;
        if (!valid) {
            size_t r = c->prow, e = c->prow + k;
            while (r < e && (r & 7)) {
                c->bitmap[r >> 3] |= (uint8_t)(0x80u >> (r & 7));
                r++;
            }
            if (e - r >= 8) memset(c->bitmap + (r >> 3), 0xff, (e - r) >> 3);
            for (r += (e - r) & ~(size_t)7; r < e; r++) c->bitmap[r >> 3] |= (uint8_t)(0x80u >> (r & 7));
            if ((s = copy_vals(x, c, vals, 0, k, err))) return s;
            c->nvals += k;
            t0 = times[0];
            t1 = times[k - 1];
        } else {
            size_t i = 0;
            while (i < k) {
                while (i < k && !bit_lsb(valid, vbit0 + i)) i++;
                size_t j = i;
                while (j < k && bit_lsb(valid, vbit0 + j)) j++;
                if (j == i) break;
                for (size_t r = i; r < j; r++) c->bitmap[(c->prow + r) >> 3] |= (uint8_t)(0x80u >> ((c->prow + r) & 7));
                if ((s = copy_vals(x, c, vals, i, j - i, err))) return s;
                if (c->nvals == start) t0 = times[i];
                t1 = times[j - 1];
                c->nvals += j - i;
                i = j;
            }
        }
        c->prow = rows;
        if (c->nvals > start && x->pre && !valid) { /* computed ahead (tsf_wcol_append_group) */
            c->pstat = *x->pre;
            x->pre = NULL;
        } else if (c->nvals > start) {
            const void *pv = c->vals + start * c->width;
            if (is_binary(c->type)) {
                /* statistics read the tablet's bytes: rebuild pointers into the arena */
                tsf_bytes *b = (tsf_bytes *)c->vals;
                for (size_t i = start; i < c->nvals; i++) b[i].data = tsf_wcol_arena_at(c, c->boff[i]);
            }
            tsf_wstats_update(&c->pstat, t0, t1, pv, c->nvals - start, w->alloc);
            if (c->pstat.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
        }
        return TSF_OK;
    }
    /* non-aligned: present values with their times; seal when the page is full */
    size_t i = 0;
    while (i < k) {
        if (valid) {
            while (i < k && !bit_lsb(valid, vbit0 + i)) i++;
            if (i == k) break;
        }
        size_t j = i;
        size_t room = maxp - c->nvals;
        if (valid) {
            while (j < k && j - i < room && bit_lsb(valid, vbit0 + j)) j++;
        } else {
            j = k - i < room ? k : i + room;
        }
        size_t n = j - i;
        if (is_binary(c->type)) { /* stop at the value that crosses the byte limit */
            const tsf_bytes *bv = (const tsf_bytes *)vals;
            size_t est = c->est;
            size_t m = 0;
            while (m < n) {
                /* DICTIONARY pages hold each distinct value once: count a quarter of the bytes */
                est += c->enc == TSF_ENC_DICTIONARY ? bv[i + m].len / 4 + 1 : bv[i + m].len + 4;
                m++;
                if (over_limit(w, c->nvals + m, est)) break;
            }
            n = m;
            j = i + n;
            c->est = est;
        } else if (plain_like(c)) { /* est = nvals * width: the first count that is over */
            size_t lim = w->opt.page_max_bytes, wd = c->width;
            size_t hard = lim > SIZE_MAX / 16 ? SIZE_MAX : lim * 16;
            size_t p1 = (lim + wd - 1) / wd, p2 = hard / wd + (hard % wd != 0);
            if (p1 < MIN_CHECK) p1 = MIN_CHECK;
            size_t trig = p1 < p2 ? p1 : p2;
            if (c->nvals + n > trig && trig > c->nvals) {
                n = trig - c->nvals;
                j = i + n;
            }
        }
        /* times: dense pages read them from the device's shared rows (no copy) */
        uint64_t gb = g == UINT64_MAX ? UINT64_MAX : g + i;
        if (c->nvals == 0) {
            c->dense = gb != UINT64_MAX;
            c->g0 = gb;
        } else if (c->dense && (gb == UINT64_MAX || c->g0 + c->nvals != gb)) {
            if ((s = tsf_wcol_own_times(w, x, c, err))) return s;
        }
        const uint8_t *src = (const uint8_t *)vals + i * c->width;
        if (c->nvals == 0 && n == maxp && !is_binary(c->type) && !c->autoc) {
            /* the batch is a whole page: encode it straight from the tablet */
            batch_stats(w, x, c, times[i], times[j - 1], src, n);
            if (c->pstat.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
            s = seal_page(w, x, c, 0, src, times + i, n, NULL, 0, err);
            if ((s = drop_refused(w, x, c, s, err))) return s;
            c->est = 0;
            i = j;
            continue;
        }
        if (c->nvals && c->nvals + n == maxp && c->dense && !c->autoc && c->enc == TSF_ENC_GORILLA &&
            tsf_gorilla_two_spans(w->codec, c->type)) {
            /* the batch completes the page: encoded after the pending values, straight from the tablet */
            batch_stats(w, x, c, times[i], times[j - 1], src, n);
            if ((s = seal_x2(w, x, c, 0, src, n, err))) return s;
            i = j;
            continue;
        }
        if ((s = reserve_vals(w, x, c, c->nvals + n, !c->dense, err))) return s;
        size_t start = c->nvals;
        if (!c->dense) {
            memcpy(c->times + start, times + i, n * sizeof(int64_t));
            c->pmem += n * sizeof(int64_t);
            x->mem += (int64_t)(n * sizeof(int64_t));
        }
        if ((s = copy_vals(x, c, vals, i, n, err))) return s;
        c->nvals += n;
        const void *pv = is_binary(c->type) ? (const void *)((const tsf_bytes *)vals + i) : (const void *)src;
        batch_stats(w, x, c, times[i], times[j - 1], pv, n);
        if (c->pstat.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
        if (c->nvals >= maxp || tsf_wcol_full(w, c))
            if ((s = tsf_wcol_seal_x(w, x, c, 0, err))) return s;
        i = j;
    }
    return TSF_OK;
}



/* Records a page whose body is [body, body + csize), committed to block blk (NULL: empty page). */
static tsf_status add_page(tsf_writer *w, wctx *x, wcol *c, const uint8_t *body, tsf_bblock *blk, size_t usize,
                           size_t csize, tsf_error *err)
{
    if (c->npages == c->pcap) {
        size_t nc = c->pcap ? c->pcap * 2 : 8;
        wpage *np = tsf_realloc(w->alloc, c->pages, c->pcap * sizeof *np, nc * sizeof *np);
        if (!np) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (pages of %s)", c->name);
        c->pages = np;
        c->pcap = nc;
    }
    if (usize > UINT32_MAX / 2 || csize > UINT32_MAX / 2)
        return tsf_err(err, TSF_ERANGE, "writer: page of %s is too large (%zu bytes)", c->name, usize);
    wpage *p = &c->pages[c->npages++];
    p->body = body;
    p->blk = blk;
    p->usize = (uint32_t)usize;
    p->csize = (uint32_t)csize;
    p->stats_off = c->pstats.len;
    if (usize) {
        tsf_wstats_serialize(&c->pstat, &c->pstats);
        c->nonempty_pages++;
    }
    p->stats_len = c->pstats.len - p->stats_off;
    if (c->pstats.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
    tsf_wstats_merge(&c->cstat, &c->pstat, w->alloc);
    if (c->cstat.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
    tsf_wstats_reset(&c->pstat);
    x->mem += (int64_t)(csize + p->stats_len);
    return TSF_OK;
}

/*
 * TS_2DIFF bytes of a non-aligned page's times. A dense page is keyed by (device, first device
 * row, count): the series of a device that share those rows share the bytes, encoded once.
 */
static tsf_status encode_times(tsf_writer *w, wctx *x, const wcol *c, const int64_t *times, size_t n, int dense,
                               tsf_error *err)
{
    if (dense && x->tdev == c->dev && x->tg0 == c->g0 && x->tn == n) return TSF_OK;
    size_t tbound = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_TS_2DIFF, n, 0);
    x->tdev = NULL;
    x->tenc.len = 0;
    uint8_t *t = tsf_wbuf_reserve(&x->tenc, tbound);
    if (!t) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
    size_t wrote = 0;
    tsf_status s = tsf_codec_encode(w->codec, TSF_INT64, TSF_ENC_TS_2DIFF, times, n, t, tbound, &wrote, err);
    if (s) return s;
    x->tenc.len = wrote;
    if (dense) {
        x->tdev = c->dev;
        x->tg0 = c->g0;
        x->tn = n;
    }
    return TSF_OK;
}

/* The page's values: vals[0..n - n2) then vals2[0..n2) (two spans: GORILLA on 64 bits only). */
static tsf_status encode_vals(const tsf_codec *codec, tsf_type vt, const wcol *c, const void *vals, size_t n,
                              const void *vals2, size_t n2, uint8_t *dst, size_t cap, size_t *wrote, tsf_error *err)
{
    if (n2) return tsf_gorilla_encode_two(codec, vt, vals, n - n2, vals2, n2, dst, cap, wrote, err);
    return tsf_codec_encode(codec, vt, c->enc, vals, n, dst, cap, wrote, err);
}

/*
 * An explicit encoding that could lose a value (exact.c): checks the page's n values against their
 * stream [enc, enc + len). A page that would not read back is refused: the column keeps the first
 * such message for the next report (tsf_w_refusal), c->refused_now tells seal_x2 to drop the page.
 */
static tsf_status check_exact(tsf_writer *w, wcol *c, const tsf_codec *codec, tsf_type vt, const void *vals,
                              size_t n, const uint8_t *enc, size_t len, const int64_t *times, tsf_error *err)
{
    char why[400];
    tsf_status s = tsf_wexact_check(codec, w->alloc, vt, c->enc, vals, n, enc, len, times, why, sizeof why, err);
    if (s || !why[0]) return s;
    c->refused_now = 1;
    if (!c->refusal) {
        char msg[480];
        int k = snprintf(msg, sizeof msg, "%s; the page of %zu values is not stored", why, n);
        size_t m = k < 0 ? 0 : (size_t)k >= sizeof msg ? sizeof msg - 1 : (size_t)k;
        c->refusal = tsf_alloc(w->alloc, m + 1);
        if (c->refusal) {
            memcpy(c->refusal, msg, m);
            c->refusal[m] = 0;
        }
    }
    w->refusals = 1;
    return tsf_err(err, TSF_EINVAL, "writer: %s: %s", c->name, why);
}

/* After seal_page: a page refused by check_exact is dropped (TSF_OK; aligned, its rows become null). */
static tsf_status drop_refused(tsf_writer *w, wctx *x, wcol *c, tsf_status s, tsf_error *err)
{
    if (!s || !c->refused_now) return s;
    c->refused_now = 0;
    tsf_wstats_reset(&c->pstat);
    return c->mask == 0x40 ? add_page(w, x, c, NULL, NULL, 0, 0, err) : TSF_OK;
}

tsf_status tsf_w_refusal(tsf_writer *w, tsf_error *err)
{
    if (!w->refusals) return TSF_OK;
    w->refusals = 0;
    const wdevice *fd = NULL;
    wcol *first = NULL;
    size_t more = 0;
    for (size_t i = 0; i < w->ndevs; i++)
        for (size_t j = 0; j < w->devs[i]->ncols; j++) {
            wcol *c = &w->devs[i]->cols[j];
            if (!c->refusal) continue;
            if (!first) {
                first = c;
                fd = w->devs[i];
            } else {
                more++;
                tsf_free(w->alloc, c->refusal, strlen(c->refusal) + 1);
                c->refusal = NULL;
            }
        }
    if (!first) return tsf_err(err, TSF_EINVAL, "writer: a page was refused (out of memory for its message)");
    tsf_status s = tsf_err(err, TSF_EINVAL, "writer: series %s.%s: %s%s", fd->path, first->name, first->refusal,
                           more ? " (pages of other series were refused too)" : "");
    tsf_free(w->alloc, first->refusal, strlen(first->refusal) + 1);
    first->refusal = NULL;
    return s;
}

/* Encodes, compresses and appends one page of n values (`times`: non-aligned only); the last n2 values
   are vals2[0..n2) (see encode_vals). */
static tsf_status seal_page(tsf_writer *w, wctx *x, wcol *c, size_t rows, const void *vals, const int64_t *times,
                            size_t n, const void *vals2, size_t n2, tsf_error *err)
{
    tsf_status s;
    tsf_codec ctmp;
    const tsf_codec *codec = tsf_wauto_codec(w, c, &ctmp); /* AUTO: its precision */
    tsf_type vt = c->mask == 0x80 ? TSF_INT64 : c->type;
    size_t var = c->mask == 0x80 ? 0 : (is_binary(c->type) ? c->arena.len : 0);
    size_t vbound = tsf_codec_encode_bound(vt, c->enc, n, var);
    if (!vbound)
        return tsf_err(err, TSF_ENOTSUP, "writer: encoding %s unsupported for %s", tsf_encoding_name(c->enc), c->name);
    if (c->mask == 0 && (s = encode_times(w, x, c, times, n, c->dense, err))) return s;
    size_t bmlen = c->mask == 0x40 ? (rows + 7) / 8 : 0;
    size_t ubound = (c->mask == 0 ? TSF_UVARINT32_MAX + x->tenc.len : 0) + (c->mask == 0x40 ? 4 + bmlen : 0) + vbound;
    int direct = c->comp == TSF_UNCOMPRESSED; /* the page is encoded straight into the body pool */
    int exact = !c->autoc && c->mask != 0x80 && !n2 && tsf_wexact_needed(vt, c->enc);
    if (!direct) x->scratch.len = 0;
    uint8_t *d0 = direct ? tsf_bpool_reserve(&w->bodies, &x->body, ubound) : tsf_wbuf_reserve(&x->scratch, ubound);
    if (!d0) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
    size_t u = 0, wrote = 0;
    if (c->mask == 0) {
        if ((s = tsf_fmt_write_nonaligned_prefix(x->tenc.len, d0, ubound, &u, err))) return s;
        memcpy(d0 + u, x->tenc.p, x->tenc.len);
        u += x->tenc.len;
    } else if (c->mask == 0x40) {
        if ((s = tsf_fmt_write_value_page_prefix((uint32_t)rows, c->bitmap, d0, ubound, &u, err))) return s;
    }
    int lit = !direct && c->comp == TSF_LZ4 && w->opt.lz4_probe && vbound >= TSF_LZ4LIT_MIN;
    size_t lit_size = 0; /* > 0: this page measures LZ4 against literals for the next pages */
    if (lit && !c->lz4_lit && c->lz4_wait) { /* LZ4 found matches on a recent page: plain LZ4 */
        c->lz4_wait--;
        lit = 0;
    }
    if (lit) {
        /* values straight into the chunk, stored as literals when a probe finds them incompressible */
        /* the prefix (shared times, an all-present bitmap) repeats from column to column: LZ4 it once */
        int hit = x->plz.len && x->plzsrc.len == u && (u == 0 || !memcmp(x->plzsrc.p, d0, u));
        if (!hit) {
            size_t zb = tsf_compress_bound(TSF_LZ4, u), zl = 0;
            x->plz.len = x->plzsrc.len = 0;
            uint8_t *z = tsf_wbuf_reserve(&x->plz, zb);
            if (!z) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
            if ((s = tsf_compress(TSF_LZ4, d0, u, z, zb, &zl, err))) return s;
            if (tsf_lz4lit_split(z, zl, &x->plz_seq, &x->plz_lit))
                return tsf_err(err, TSF_EINVAL, "writer: unexpected LZ4 block layout (page of %s)", c->name);
            tsf_wbuf_put(&x->plzsrc, d0, u);
            if (x->plzsrc.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
            x->plz.len = zl;
        }
        size_t hmax = tsf_lz4lit_head_max(x->plz_seq, x->plz_lit, vbound);
        uint8_t *cd = tsf_bpool_reserve(&w->bodies, &x->body, hmax + vbound);
        if (!cd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
        uint8_t *vp = cd + hmax;
        if ((s = encode_vals(codec, vt, c, vals, n, vals2, n2, vp, vbound, &wrote, err))) return s;
        if (exact && (s = check_exact(w, c, codec, vt, vals, n, vp, wrote, times, err))) return s;
        if (!c->lz4_wait) { /* every TSF_LZ4LIT_RECHECK pages: LZ4 the whole page, compare */
            lit_size = tsf_lz4lit_head_size(x->plz_seq, x->plz_lit, wrote) + wrote;
            c->lz4_wait = TSF_LZ4LIT_RECHECK;
        } else if (c->lz4_wait--, tsf_lz4lit_incompressible(vp, wrote, &x->lz4s)) {
            size_t h = tsf_lz4lit_head_size(x->plz_seq, x->plz_lit, wrote);
            tsf_lz4lit_put_head(vp - h, x->plz.p, x->plz_seq, d0, u, x->plz_lit, wrote);
            c->blen += hmax + wrote; /* the bytes before the head are unused (counted as before the pool) */
            tsf_bblock *blk = tsf_bpool_commit(x->body, vp + wrote);
            return add_page(w, x, c, vp - h, blk, u + wrote, h + wrote, err);
        }
        memcpy(d0 + u, vp, wrote); /* compressible after all: the usual path */
    } else if ((s = encode_vals(codec, vt, c, vals, n, vals2, n2, d0 + u, vbound, &wrote, err)) ||
               (exact && (s = check_exact(w, c, codec, vt, vals, n, d0 + u, wrote, times, err)))) {
        return s;
    }
    u += wrote;
    size_t csize = u;
    if (!direct) {
        size_t cb = tsf_compress_bound(c->comp, u);
        if (!cb)
            return tsf_err(err, TSF_ENOTSUP, "writer: compression %s unsupported (%s)", tsf_compression_name(c->comp),
                           c->name);
        uint8_t *cd = tsf_bpool_reserve(&w->bodies, &x->body, cb);
        if (!cd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page of %s)", c->name);
        if ((s = tsf_compressor_compress(x->cz, c->comp, x->scratch.p, u, cd, cb, &csize, err))) return s;
        if (lit_size) c->lz4_lit = csize + csize / 200 >= lit_size; /* LZ4 saved < 0.5%: literals next */
        d0 = cd;
    }
    c->blen += csize;
    tsf_bblock *blk = tsf_bpool_commit(x->body, d0 + csize);
    return add_page(w, x, c, d0, blk, u, csize, err);
}

/* Appends the page an AUTO column prepared (tsf_wauto_body). */
static tsf_status put_body(tsf_writer *w, wctx *x, wcol *c, tsf_error *err)
{
    const uint8_t *b;
    tsf_bblock *blk;
    size_t usize, csize;
    tsf_wauto_body(c, &b, &blk, &usize, &csize);
    c->blen += csize;
    return add_page(w, x, c, b, blk, usize, csize, err);
}

tsf_status tsf_wcol_seal(tsf_writer *w, wcol *c, size_t rows, tsf_error *err)
{
    tsf_status s = tsf_wcol_seal_x(w, &w->ctx, c, rows, err);
    fold_mem(w, &w->ctx);
    return s;
}

tsf_status tsf_wcol_seal_x(tsf_writer *w, wctx *x, wcol *c, size_t rows, tsf_error *err)
{
    return seal_x2(w, x, c, rows, NULL, 0, err);
}

/* Seals the pending page followed by vals2[0..n2) (non-aligned dense GORILLA pages; else n2 = 0). */
static tsf_status seal_x2(tsf_writer *w, wctx *x, wcol *c, size_t rows, const void *vals2, size_t n2,
                          tsf_error *err)
{
    tsf_status s;
    size_t n = c->nvals;
    if (c->mask == 0x40) {
        if (rows == 0) return TSF_OK;
        if (n == 0) { /* all rows null: empty page */
            if ((s = add_page(w, x, c, NULL, NULL, 0, 0, err))) return s;
            goto reset;
        }
    } else if (n == 0) {
        return TSF_OK;
    }
    fix_binary(c);
    {
        const int64_t *times = c->mask != 0 ? NULL : c->dense ? c->dev->dt + (c->g0 - c->dev->dt_base) : c->times;
        if (c->autoc) { /* AUTO: the page as its decision encoded and compressed it */
            if ((s = tsf_wauto_seal(w, x, c, times, rows, err))) return s;
            s = put_body(w, x, c, err);
        } else {
            s = seal_page(w, x, c, rows, c->vals, times, n + n2, vals2, n2, err);
        }
        if ((s = drop_refused(w, x, c, s, err))) return s;
    }
reset:
    x->mem -= (int64_t)c->pmem;
    c->pmem = 0;
    c->nvals = 0;
    c->arena.len = 0;
    c->est = 0;
    c->dense = 0;
    if (c->mask == 0x40) {
        memset(c->bitmap, 0, (c->prow + 7) / 8 < c->bmcap ? (c->prow + 7) / 8 : c->bmcap);
        c->prow = 0;
    }
    return TSF_OK;
}

tsf_status tsf_wcol_flush_chunk(tsf_writer *w, wcol *c, int force, tsf_error *err)
{
    size_t freed = c->blen + c->pstats.len;
    tsf_status s = tsf_wcol_flush_chunk_k(w, &w->ctx, c, &c->ck, force, err);
    if (!s) w->mem -= freed < w->mem ? freed : w->mem;
    return s;
}

/*
 * Writes chunk set k of column c: header, then every page (header bytes, statistics, body) in one
 * gathered output; records ChunkMetadata and the series statistics and empties k. Touches no
 * state of the pages being built (the output thread writes c->out while c->ck fills).
 */
tsf_status tsf_wcol_flush_chunk_k(tsf_writer *w, wctx *x, wcol *c, wchunk *k, int force, tsf_error *err)
{
    tsf_status s;
    if (k->npages == 0 && !force) return TSF_OK;
    int multi = k->npages > 1;
    int empty = k->nonempty_pages == 0;
    uint64_t data = 0;
    if (!empty)
        for (size_t i = 0; i < k->npages; i++) {
            const wpage *p = &k->pages[i];
            data += tsf_fmt_page_header_size(p->usize, p->csize, multi ? p->stats_len : 0);
            if (p->usize) data += p->csize;
        }
    if (data > INT32_MAX) return tsf_err(err, TSF_ERANGE, "writer: chunk of %s exceeds 2 GiB", c->name);
    uint8_t marker = (uint8_t)(((multi && !empty) ? 0x01 : 0x05) | c->mask);
    uint64_t off = tsf_w_pos(w);
    /* header (tsf_fmt_write_chunk_header), then every page: header bytes, statistics, body */
    tsf_fmt_chunk_header ch = {.marker = marker,
                               .measurement = {(const uint8_t *)c->name, c->name_len, 0},
                               .data_size = (uint32_t)data,
                               .data_type = c->type,
                               .compression = c->comp,
                               .encoding = c->enc};
    size_t np = empty ? 0 : k->npages;
    tsf_wbuf *hb = &x->scratch2, *vb = &x->scratch;
    hb->len = vb->len = 0;
    size_t hcap = 16 + 2 * (size_t)TSF_UVARINT32_MAX + c->name_len + np * 2 * TSF_UVARINT32_MAX;
    uint8_t *hp = tsf_wbuf_reserve(hb, hcap);
    tsf_w_piece *v = (tsf_w_piece *)(void *)tsf_wbuf_reserve(vb, (1 + 3 * np) * sizeof(tsf_w_piece));
    if (!hp || !v) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    size_t h = 0, nv = 0;
    if ((s = tsf_fmt_write_chunk_header(&ch, hp, hcap, &h, err))) return s;
    size_t hlen = h;
    v[nv++] = (tsf_w_piece){hp, h};
    for (size_t i = 0; i < np; i++) {
        const wpage *p = &k->pages[i];
        size_t h0 = h, hl = 0;
        tsf_fmt_page_header ph = {.uncompressed_size = p->usize, .compressed_size = p->csize}; /* sizes only */
        if ((s = tsf_fmt_write_page_header(&ph, hp + h, hcap - h, &hl, err))) return s;
        h += hl;
        v[nv++] = (tsf_w_piece){hp + h0, h - h0};
        if (!p->usize) continue;
        if (multi) v[nv++] = (tsf_w_piece){k->pstats.p + p->stats_off, p->stats_len};
        v[nv++] = (tsf_w_piece){p->body, p->csize};
    }
    if ((s = tsf_w_outv(w, v, nv, err))) return s;
    /* ChunkMetadata: offset + chunk statistics (used when the series has several chunks) */
    tsf_fmt_put_chunk_meta(&c->cmeta, off, &k->cstat);
    if (c->cmeta.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (chunk metadata)");
    c->nchunks++;
    tsf_wstats_merge(&c->sstat, &k->cstat, w->alloc);
    if (c->sstat.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (statistics)");
    if (w->pix && (s = tsf_wpix_chunk(w, c, k, off, hlen, np, err))) return s; /* writer_pix.c */
    tsf_wstats_reset(&k->cstat);
    for (size_t i = 0; i < k->npages; i++) /* the bodies are written: their memory goes back to the pool */
        if (k->pages[i].blk) tsf_bpool_release(&w->bodies, k->pages[i].blk);
    k->blen = 0;
    k->pstats.len = 0;
    k->npages = 0;
    k->nonempty_pages = 0;
    return TSF_OK;
}
