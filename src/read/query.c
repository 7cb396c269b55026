/*
 * query.c - the batch iterator: for each selected device,
 * the requested columns are scanned chunk by chunk and page by page (tsfile-container-format.md
 * §5-§8.5) and returned as column batches (times, values in the C representation of tsf.h,
 * validity bitmaps).
 *
 * Pruning, with counters in tsf_query_stats: chunk statistics (ChunkMetadata) and page statistics
 * (multi-page chunks) against the time range, so a page body is fetched and decompressed only when
 * the page can match; inside a partly covered page with a TS_2DIFF time stream, only the blocks whose
 * exact range [first, next block's first) meets the window are decoded (tsf_td_window_select: headers
 * are read up to the first block after the window; the page's count comes from its statistics).
 *
 * Aligned devices (§6.4): the time chunk drives; the value chunk of each column in the same chunk
 * group is the first one after the time chunk and before the next time chunk; its pages pair with
 * the time pages by position. Non-aligned devices: each column is its own series; several columns
 * are merged by time (outer join). A batch never spans pages, so TEXT/STRING/BLOB values can borrow
 * from the page buffers until the next call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/ts2diff_walk.h"
#include "check.h"
#include "filter.h"
#include "page_index.h"
#include "parallel.h"
#include "reader_internal.h"

/* Largest decompressed page accepted: max(16 MiB, 4096 x the compressed size), at most 1 GiB. */
#define RD_PAGE_MIN_CAP (1u << 24)
#define RD_PAGE_MAX (1u << 30)

typedef struct qcol {
    const char *name;
    const tsf_rd_series *s; /* NULL: the device has no such column */
    tsf_type type;
    size_t esz;
    /* chunk metadata iteration (one entry of lookahead) */
    size_t cm_pos;
    int cm_have;
    uint64_t cm_off;
    tsf_fmt_stats cm_stats;
    /* open chunk */
    int in_chunk, chunk_partial;
    tsf_fmt_chunk_header ch;
    uint64_t dpos, dend, chunk_off;
    tsf_fmt_stats cs;       /* the open chunk's ChunkMetadata statistics (checked reads of single-page chunks) */
    tsf_fmt_page_header ph; /* current page header */
    uint64_t body_off;
    int done;
    /* buffers */
    tsf_rd_buf hdr, body, plain, vals, times, out_vals, out_valid;
    tsf_rd_buf chunk; /* a chunk's pages read whole (one read); hdr and body fetch through its window */
    /* decoded page: rows [pos, n) of t (non-aligned: values v parallel to t) */
    const int64_t *t;
    const uint8_t *v;
    size_t n, pos;
    /* aligned value page */
    int null_page;
    const uint8_t *bitmap;
    size_t k, present;
    tsf_dec_summary tsum, vsum; /* checked reads: what decoding the page's times / values gathered */
} qcol;

struct tsf_query {
    tsf_reader *r;
    const tsf_allocator *a;
    tsf_compressor *comp;
    int64_t tmin, tmax;
    size_t batch;
    char **names; /* requested columns (copies), NULL = all */
    size_t nnames;
    size_t *devs;
    size_t ndevs, di, dend; /* devices devs[di, dend) are still to scan */
    int dev_active;
    const tsf_rd_device *dev;
    qcol tcol;    /* aligned devices: the time column */
    qcol *cols;
    size_t ncols, cols_cap;
    size_t row_base; /* aligned: page row of tcol.t[0] */
    tsf_rd_buf times_out, zeros, ones;
    tsf_column_batch *cb;
    size_t cb_cap;
    tsf_batch out;
    tsf_query_stats st;
    tsf_rd_par *par; /* threads > 1: the workers (parallel.c) yield the batches */
    tsf_rd_fstate *fs;       /* value filter (NULL: none) */
    size_t nvis;         /* returned columns: cols[0, nvis); the rest are read only for the filter */
    int block_bound;     /* TSF_BLOCK_BOUND_* */
    tsf_page_index *pix; /* page-time index of the reader's file (page_index.c) or NULL */
    int checked;         /* decoded pages are compared with their statistics (check.h) */
    int level;           /* kernel level of those checks (tsf_rd_check_level) */
};

void tsf_query_options_init(tsf_query_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->time_min = INT64_MIN;
    o->time_max = INT64_MAX;
    o->batch_size = 4096;
    o->use_page_index = 1;
    o->checked = -1;
}

static void col_free(const tsf_allocator *a, qcol *c)
{
    tsf_rd_buf *bufs[] = {&c->hdr,   &c->body,     &c->plain,     &c->vals,
                      &c->times, &c->out_vals, &c->out_valid, &c->chunk};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tsf_rd_buf_free(a, bufs[i]);
}

/* Resets a column's scan state for a new series, keeping its buffers. */
static void col_reset(qcol *c, const char *name, const tsf_rd_series *s)
{
    tsf_rd_buf keep[8] = {c->hdr, c->body, c->plain, c->vals, c->times, c->out_vals, c->out_valid, c->chunk};
    memset(c, 0, sizeof *c);
    c->hdr = keep[0], c->body = keep[1], c->plain = keep[2], c->vals = keep[3];
    c->times = keep[4], c->out_vals = keep[5], c->out_valid = keep[6], c->chunk = keep[7];
    c->name = name;
    c->s = s;
    c->type = s ? s->tsm.data_type : TSF_VECTOR;
    c->esz = s ? tsf_rd_cell_size(c->type) : 1;
    c->done = s == NULL;
}

/*
 * Closed queries leave their column buffers to the reader (at most 8 sets) and new queries start from
 * them: a query's buffers are sized by its pages, and allocating them afresh for every short query
 * costs page faults that outweigh the decoding of a narrow time range.
 */
typedef struct tsf_rd_qspare {
    qcol *cols;
    size_t cap;
    qcol tcol;
} tsf_rd_qspare;

static void qspare_put(tsf_query *q)
{
    tsf_reader *r = q->r;
    if (!q->cols_cap) return;
    tsf_rd_qspare *s = tsf_alloc(q->a, sizeof *s);
    if (!s) return;
    pthread_mutex_lock(&r->lock);
    if (r->nqspare < sizeof r->qspare / sizeof r->qspare[0]) {
        *s = (tsf_rd_qspare){q->cols, q->cols_cap, q->tcol};
        r->qspare[r->nqspare++] = s;
        q->cols = NULL;
        q->cols_cap = 0;
        memset(&q->tcol, 0, sizeof q->tcol);
        s = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    tsf_free(q->a, s, sizeof *s);
}

static void qspare_take(tsf_query *q)
{
    tsf_reader *r = q->r;
    tsf_rd_qspare *s = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->nqspare) s = r->qspare[--r->nqspare];
    pthread_mutex_unlock(&r->lock);
    if (!s) return;
    q->cols = s->cols;
    q->cols_cap = s->cap;
    q->tcol = s->tcol;
    for (size_t i = 0; i < q->cols_cap; i++) q->cols[i].hdr.wlen = q->cols[i].body.wlen = 0;
    q->tcol.hdr.wlen = q->tcol.body.wlen = 0;
    tsf_free(q->a, s, sizeof *s);
}

void tsf_query_close(tsf_query *q)
{
    if (!q) return;
    tsf_rd_par_close(q->par);
    qspare_put(q);
    const tsf_allocator *a = q->a;
    col_free(a, &q->tcol);
    for (size_t i = 0; i < q->cols_cap; i++) col_free(a, &q->cols[i]);
    tsf_free(a, q->cols, q->cols_cap * sizeof *q->cols);
    for (size_t i = 0; i < q->nnames; i++) tsf_free(a, q->names[i], strlen(q->names[i]) + 1);
    tsf_free(a, q->names, q->nnames * sizeof *q->names);
    tsf_free(a, q->devs, q->ndevs * sizeof *q->devs);
    tsf_rd_buf_free(a, &q->times_out);
    tsf_rd_buf_free(a, &q->zeros);
    tsf_rd_buf_free(a, &q->ones);
    tsf_free(a, q->cb, q->cb_cap * sizeof *q->cb);
    tsf_rd_filter_close(q->fs);
    tsf_compressor_close(q->comp);
    tsf_free(a, q, sizeof *q);
}

tsf_status tsf_query_open(tsf_reader *r, const tsf_query_options *opts, tsf_query **out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_query_open: reader and out are required");
    *out = NULL;
    tsf_query_options o;
    tsf_query_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_query_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    if (o.batch_size == 0) o.batch_size = 4096;
    if (o.batch_size > (1u << 24)) return tsf_err(err, TSF_EINVAL, "batch_size %zu too large", o.batch_size);
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    tsf_query *q = tsf_calloc(r->a, 1, sizeof *q);
    if (!q) return tsf_err(err, TSF_ENOMEM, "query: out of memory");
    q->r = r;
    q->a = r->a;
    qspare_take(q);
    q->tmin = o.time_min;
    q->tmax = o.time_max;
    q->batch = o.batch_size;
    if ((st = tsf_compressor_open(&q->comp, r->a, err))) goto fail;
    /* devices */
    size_t first = 0, count = r->ndevices;
    if (o.devices) {
        count = o.ndevices;
    } else if (o.table) {
        size_t ti;
        if ((st = tsf_reader_find_table(r, o.table, &ti, err))) goto fail;
        first = r->tables[ti].first_device;
        count = r->tables[ti].ndevices;
    }
    q->devs = tsf_calloc(r->a, count ? count : 1, sizeof *q->devs);
    if (!q->devs) goto oom;
    q->ndevs = q->dend = count;
    for (size_t i = 0; i < count; i++) {
        size_t d = o.devices ? o.devices[i] : first + i;
        if (d >= r->ndevices) {
            st = tsf_err(err, TSF_EINVAL, "tsf_query_open: device index %zu, the file has %zu", d, r->ndevices);
            goto fail;
        }
        q->devs[i] = d;
    }
    /* columns */
    if (o.columns) {
        q->names = tsf_calloc(r->a, o.ncolumns ? o.ncolumns : 1, sizeof *q->names);
        if (!q->names) goto oom;
        q->nnames = o.ncolumns;
        for (size_t i = 0; i < o.ncolumns; i++) {
            if (!o.columns[i]) {
                st = tsf_err(err, TSF_EINVAL, "tsf_query_open: column %zu is NULL", i);
                goto fail;
            }
            size_t n = strlen(o.columns[i]) + 1;
            if (!(q->names[i] = tsf_alloc(r->a, n))) goto oom;
            memcpy(q->names[i], o.columns[i], n);
        }
    }
    int block_bound = o.experimental ? o.experimental->block_bound : TSF_BLOCK_BOUND_EXACT;
    int filter_prune = !(o.experimental && o.experimental->no_filter_prune);
    if (block_bound != TSF_BLOCK_BOUND_EXACT && block_bound != TSF_BLOCK_BOUND_CONSERVATIVE) {
        st = tsf_err(err, TSF_EINVAL, "tsf_query_open: block_bound %d unknown", block_bound);
        goto fail;
    }
    q->block_bound = block_bound;
    if ((q->checked = tsf_rd_checked_of(r, o.checked)) < 0) {
        st = tsf_err(err, TSF_EINVAL, "tsf_query_open: checked %d: -1, 0 or 1", o.checked);
        goto fail;
    }
    q->level = tsf_rd_check_level(tsf_codec_get_path(r->codec));
    if (o.page_index && tsf_rd_page_index_reader(o.page_index) == r) q->pix = o.page_index;
    else if (!o.page_index && o.use_page_index && o.time_min != INT64_MIN) q->pix = tsf_rd_pix_get(r);
    if (o.where && (st = tsf_rd_filter_open(r, o.where, q->devs, q->ndevs, q->batch, filter_prune, &q->fs, err))) goto fail;
    if ((st = tsf_rd_buf_reserve(r->a, &q->zeros, q->batch * 16, err))) goto fail;
    if ((st = tsf_rd_buf_reserve(r->a, &q->ones, q->batch / 8 + 1, err))) goto fail;
    memset(q->zeros.p, 0, q->zeros.cap);
    memset(q->ones.p, 0xff, q->ones.cap);
    if (o.threads > 1) {
        tsf_query_options po = o;
        po.table = NULL;
        po.devices = q->devs;
        po.ndevices = q->ndevs;
        po.columns = (const char *const *)q->names;
        po.ncolumns = q->nnames;
        po.batch_size = q->batch;
        if ((st = tsf_rd_par_open(r, &po, &q->par, err))) goto fail;
    }
    *out = q;
    return TSF_OK;
oom:
    st = tsf_err(err, TSF_ENOMEM, "query: out of memory");
fail:
    tsf_query_close(q);
    return st;
}

void tsf_query_get_stats(const tsf_query *q, tsf_query_stats *out)
{
    if (q && q->par) tsf_rd_par_stats(q->par, out);
    else if (q) *out = q->st;
}

/* ---- chunk and page access ---------------------------------------------------------------- */

static int out_of_range(const tsf_query *q, int64_t start, int64_t end)
{
    return end < q->tmin || start > q->tmax || start > end;
}

static int inside(const tsf_query *q, int64_t start, int64_t end)
{
    return start >= q->tmin && end <= q->tmax;
}

/* Loads the next ChunkMetadata of the column's series into the lookahead. */
static tsf_status cm_next(tsf_query *q, qcol *c, tsf_error *err)
{
    tsf_error e;
    tsf_status st = tsf_mip_next_chunk_meta(&c->s->tsm, &c->cm_pos, &c->cm_off, &c->cm_stats, &e);
    c->cm_have = st == TSF_OK;
    if (st == TSF_OK || st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

static tsf_status open_chunk(tsf_query *q, qcol *c, uint64_t off, tsf_chunk_kind want, tsf_type type, tsf_error *err)
{
    c->hdr.wlen = c->body.wlen = 0;
    tsf_status st = tsf_rd_read_chunk_header(q->r, off, &c->hdr, &c->ch, &c->dpos, &c->dend, &q->st.bytes_read, err);
    if (st) return st;
    tsf_chunk_kind k = tsf_fmt_chunk_kind(c->ch.marker);
    if (k != want)
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: marker 0x%02x is not the %s chunk the index lists",
                       (unsigned long long)off, c->ch.marker,
                       want == TSF_CHUNK_TIME ? "time" : want == TSF_CHUNK_VALUE ? "value" : "non-aligned");
    if (c->ch.data_type != type)
        return tsf_err(err, type == TSF_VECTOR ? TSF_ECORRUPT : TSF_ENOTSUP,
                       "chunk at %llu: data type %s but the series is %s (type changes are not supported yet)",
                       (unsigned long long)off, tsf_type_name(c->ch.data_type) ? tsf_type_name(c->ch.data_type) : "?",
                       tsf_type_name(type) ? tsf_type_name(type) : "?");
    c->chunk_off = off;
    c->in_chunk = 1;
    q->st.chunks_read++;
    return TSF_OK;
}

/*
 * I/O granularity (file and callback sources; memory needs no copy): a chunk whose pages will all be
 * wanted (it lies inside the query window) or that is small is read whole with one read; page headers
 * and bodies are then served from memory. In a partly covered large chunk, pages are read through a
 * RD_READ_AHEAD window from the page header on, so a run of small pages costs one read, not two per
 * page, while pruned pages far from the window are never fetched.
 */
#define RD_WHOLE_CHUNK_SMALL (64u << 10)
#define RD_READ_AHEAD (64u << 10)
static tsf_status read_window(tsf_query *q, qcol *c, uint64_t len, tsf_error *err)
{
    const uint8_t *p;
    tsf_status st = tsf_rd_fetch(q->r, c->dpos, (size_t)len, &c->chunk, &p, err);
    if (st) return st;
    c->hdr.wp = c->body.wp = p;
    c->hdr.woff = c->body.woff = c->dpos;
    c->hdr.wlen = c->body.wlen = (size_t)len;
    return TSF_OK;
}

static tsf_status read_whole_chunk(tsf_query *q, qcol *c, int partial, tsf_error *err)
{
    if (q->r->src == RD_SRC_MEMORY || c->dend <= c->dpos) return TSF_OK;
    uint64_t len = c->dend - c->dpos;
    if (partial && len > RD_WHOLE_CHUNK_SMALL) return TSF_OK;
    return read_window(q, c, len, err);
}

/* ---- page directories ------------------------------------------------------------------------ */

/*
 * Reaching the pages of a partly covered chunk means walking its page headers one by one (TsFile has
 * no page index), a chain of dependent loads that dominates narrow queries on large chunks. The first
 * query that reads a chunk in part records where each page starts and its time range; later queries
 * (from any thread) jump to the first page that can match by binary search. Directories live in the
 * reader (under its lock) until it closes; a chunk with a page without statistics gets none.
 */
typedef struct tsf_rd_pdir_page {
    uint64_t hdr; /* offset of the page header */
    int64_t end;  /* the page's end time */
} tsf_rd_pdir_page;

typedef struct tsf_rd_pdir {
    uint64_t chunk_off;
    size_t npages;
    tsf_rd_pdir_page *pg;
} tsf_rd_pdir;

static void pdir_destroy(const tsf_allocator *a, tsf_rd_pdir *d)
{
    if (!d) return;
    tsf_free(a, d->pg, d->npages * sizeof *d->pg);
    tsf_free(a, d, sizeof *d);
}

void tsf_rd_pdir_free(tsf_reader *r)
{
    for (size_t i = 0; i < r->nqspare; i++) {
        tsf_rd_qspare *s = r->qspare[i];
        col_free(r->a, &s->tcol);
        for (size_t k = 0; k < s->cap; k++) col_free(r->a, &s->cols[k]);
        tsf_free(r->a, s->cols, s->cap * sizeof *s->cols);
        tsf_free(r->a, s, sizeof *s);
    }
    r->nqspare = 0;
    for (size_t i = 0; i < r->pdirs_cap; i++) pdir_destroy(r->a, r->pdirs[i]);
    tsf_free(r->a, r->pdirs, r->pdirs_cap * sizeof *r->pdirs);
    r->pdirs = NULL;
    r->pdirs_cap = r->npdirs = 0;
}

static size_t pdir_slot(const tsf_reader *r, uint64_t off)
{
    size_t i = (size_t)((off * 0x9E3779B97F4A7C15ull) >> 20) & (r->pdirs_cap - 1);
    while (r->pdirs[i] && r->pdirs[i]->chunk_off != off) i = (i + 1) & (r->pdirs_cap - 1);
    return i;
}

/* Puts nd into the reader's table (or frees it if there is no room or another query was first). */
static const tsf_rd_pdir *pdir_insert(tsf_reader *r, const tsf_allocator *a, tsf_rd_pdir *nd)
{
    const tsf_rd_pdir *d = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->npdirs * 2 + 2 > r->pdirs_cap) {
        size_t ncap = r->pdirs_cap ? r->pdirs_cap * 2 : 64;
        tsf_rd_pdir **t = tsf_calloc(a, ncap, sizeof *t);
        if (t) {
            tsf_rd_pdir **old = r->pdirs;
            size_t ocap = r->pdirs_cap;
            r->pdirs = t;
            r->pdirs_cap = ncap;
            for (size_t i = 0; i < ocap; i++)
                if (old[i]) r->pdirs[pdir_slot(r, old[i]->chunk_off)] = old[i];
            tsf_free(a, old, ocap * sizeof *old);
        }
    }
    if (r->npdirs * 2 + 2 <= r->pdirs_cap) {
        size_t i = pdir_slot(r, nd->chunk_off);
        if (!r->pdirs[i]) {
            r->pdirs[i] = nd;
            r->npdirs++;
            nd = NULL;
        }
        d = r->pdirs[i];
    }
    pthread_mutex_unlock(&r->lock);
    pdir_destroy(a, nd);
    return d;
}

/* Directory of c's open chunk: looked up, or built by walking its headers once. NULL if none (a damaged
 * header is then reported when the query walks to it). */
static const tsf_rd_pdir *pdir_get(tsf_query *q, qcol *c)
{
    tsf_reader *r = q->r;
    const tsf_rd_pdir *d = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->pdirs_cap) d = r->pdirs[pdir_slot(r, c->chunk_off)];
    pthread_mutex_unlock(&r->lock);
    if (d) return d;
    size_t n = 0, cap = 64;
    tsf_rd_pdir *nd = tsf_calloc(q->a, 1, sizeof *nd);
    tsf_rd_pdir_page *pg = tsf_alloc(q->a, cap * sizeof *pg);
    uint64_t pos = c->dpos, fetched = 0;
    int ok = nd && pg;
    while (ok && pos < c->dend) {
        tsf_fmt_page_header ph;
        tsf_error e;
        if (tsf_rd_read_page_header(r, pos, c->dend, &c->ch, &c->hdr, &ph, &fetched, &e) || !ph.has_stats) {
            ok = 0;
            break;
        }
        if (n == cap) {
            tsf_rd_pdir_page *g = tsf_realloc(q->a, pg, cap * sizeof *pg, 2 * cap * sizeof *pg);
            if (!g) {
                ok = 0;
                break;
            }
            pg = g;
            cap *= 2;
        }
        pg[n].hdr = pos;
        pg[n].end = ph.stats.end_time;
        n++;
        pos += ph.header_len + ph.compressed_size;
    }
    tsf_rd_pdir_page *fit = ok && n ? tsf_realloc(q->a, pg, cap * sizeof *pg, n * sizeof *pg) : NULL;
    if (!fit) {
        tsf_free(q->a, pg, cap * sizeof *pg);
        tsf_free(q->a, nd, sizeof *nd);
        return NULL;
    }
    nd->chunk_off = c->chunk_off;
    nd->npages = n;
    nd->pg = fit;
    return pdir_insert(r, q->a, nd);
}

/*
 * In a chunk that starts before the window, jumps the driving column (and, aligned, every value column
 * in lockstep) to the first page ending at or after tmin; the pages jumped over count as skipped.
 */
static int pix_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals);
static void pdir_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals)
{
    if (!tsf_fmt_chunk_multi_page(drv->ch.marker) || drv->dpos >= drv->dend || nvals > 64) return;
    if (q->pix && pix_jump(q, drv, vals, nvals)) return;
    const tsf_rd_pdir *d = pdir_get(q, drv);
    if (!d) return;
    size_t a = 0, z = d->npages;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (d->pg[m].end < q->tmin) a = m + 1; else z = m;
    }
    if (a == d->npages) a = d->npages - 1; /* the walk checks the last page (and the chunk's end) */
    if (a == 0) return;
    const tsf_rd_pdir *vd[64];
    for (size_t i = 0; i < nvals; i++) {
        vd[i] = NULL;
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        vd[i] = pdir_get(q, &vals[i]);
        if (!vd[i] || vd[i]->npages != d->npages) return; /* a mismatch is reported by the walk */
    }
    drv->dpos = d->pg[a].hdr;
    q->st.pages_skipped += a;
    for (size_t i = 0; i < nvals; i++) {
        if (!vd[i]) continue;
        vals[i].dpos = vd[i]->pg[a].hdr;
        q->st.pages_skipped += a;
    }
}

/*
 * The same jump from the page-time index (page_index.c): the page holding tmin (last start <= tmin) of the
 * driving column, when the index places it in this chunk, it is in order (every earlier page of the column
 * ends before it starts) and its header there has that start time, and the value pages paired with it.
 * 0: not usable here (pdir instead).
 */
static int pix_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals)
{
    size_t dev = (size_t)(q->dev - q->r->devices);
    size_t sj = vals ? TSF_PAGE_INDEX_TIME : (size_t)(drv->s - q->r->series) - q->dev->series0;
    tsf_page_loc loc, vl[64];
    if (tsf_page_index_lookup(q->pix, dev, sj, q->tmin, &loc, NULL) || loc.late ||
        loc.chunk_offset != drv->chunk_off || loc.page_offset < drv->dpos || loc.page_offset >= drv->dend)
        return 0;
    tsf_fmt_page_header ph; /* a damaged index must not skip rows: the page there starts where it says */
    uint64_t fetched = 0;
    if (tsf_rd_read_page_header(q->r, loc.page_offset, drv->dend, &drv->ch, &drv->hdr, &ph, &fetched, NULL) ||
        !ph.has_stats || ph.stats.start_time != loc.start_time)
        return 0;
    for (size_t i = 0; i < nvals; i++) {
        vl[i].page = loc.page;
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        size_t j = (size_t)(vals[i].s - q->r->series) - q->dev->series0;
        if (tsf_page_index_lookup(q->pix, dev, j, q->tmin, &vl[i], NULL) || vl[i].page != loc.page ||
            vl[i].chunk_offset != vals[i].chunk_off || vl[i].page_offset < vals[i].dpos ||
            vl[i].page_offset >= vals[i].dend)
            return 0;
    }
    drv->dpos = loc.page_offset;
    q->st.pages_skipped += loc.page;
    for (size_t i = 0; i < nvals; i++) {
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        vals[i].dpos = vl[i].page_offset;
        q->st.pages_skipped += loc.page;
    }
    return 1;
}

static tsf_status next_page_header(tsf_query *q, qcol *c, tsf_error *err)
{
    if (q->r->src != RD_SRC_MEMORY && c->dpos < c->dend &&
        (!c->hdr.wlen || c->dpos < c->hdr.woff || c->dpos - c->hdr.woff + 96 > c->hdr.wlen)) {
        uint64_t len = c->dend - c->dpos;
        tsf_status st = read_window(q, c, len < RD_READ_AHEAD ? len : RD_READ_AHEAD, err);
        if (st) return st;
    }
    tsf_status st = tsf_rd_read_page_header(q->r, c->dpos, c->dend, &c->ch, &c->hdr, &c->ph, &q->st.bytes_read, err);
    if (st) return st;
    c->body_off = c->dpos + c->ph.header_len;
    c->dpos = c->body_off + c->ph.compressed_size;
    return TSF_OK;
}

tsf_status tsf_rd_load_page(const tsf_reader *r, tsf_compressor *comp, const tsf_fmt_chunk_header *h,
                        const tsf_fmt_page_header *ph, uint64_t body_off, tsf_rd_buf *body, tsf_rd_buf *plain,
                        const uint8_t **p, size_t *len, uint64_t *fetched, uint64_t *decompressed, tsf_error *err)
{
    const uint8_t *raw;
    tsf_status st = tsf_rd_fetch(r, body_off, ph->compressed_size, body, &raw, err);
    if (st) return st;
    *fetched += ph->compressed_size;
    if (h->compression == TSF_UNCOMPRESSED) {
        *p = raw;
        *len = ph->compressed_size;
        return TSF_OK;
    }
    uint64_t cap = (uint64_t)ph->compressed_size * 4096;
    if (cap < RD_PAGE_MIN_CAP) cap = RD_PAGE_MIN_CAP;
    if (cap > RD_PAGE_MAX) cap = RD_PAGE_MAX;
    if (ph->uncompressed_size > cap)
        return tsf_err(err, TSF_ECORRUPT, "page at %llu: uncompressedSize %u implausible for %u compressed bytes",
                       (unsigned long long)body_off, ph->uncompressed_size, ph->compressed_size);
    if ((st = tsf_rd_buf_reserve(r->a, plain, ph->uncompressed_size ? ph->uncompressed_size : 1, err))) return st;
    st = tsf_compressor_decompress(comp, h->compression, raw, ph->compressed_size, plain->p, ph->uncompressed_size,
                                   err);
    if (st) {
        if (err && st == TSF_ECORRUPT) {
            char m[TSF_ERROR_MESSAGE_SIZE];
            snprintf(m, sizeof m, "%s", err->message);
            tsf_err(err, st, "page body at %llu (%s): %s", (unsigned long long)body_off,
                    tsf_compression_name(h->compression) ? tsf_compression_name(h->compression) : "?", m);
        }
        return st;
    }
    *decompressed += ph->uncompressed_size;
    *p = plain->p;
    *len = ph->uncompressed_size;
    return TSF_OK;
}

/* Fetches and decompresses the current page body of c: *p / *len (uncompressed). */
static tsf_status load_body(tsf_query *q, qcol *c, const uint8_t **p, size_t *len, tsf_error *err)
{
    return tsf_rd_load_page(q->r, q->comp, &c->ch, &c->ph, c->body_off, &c->body, &c->plain, p, len, &q->st.bytes_read,
                        &q->st.bytes_decompressed, err);
}

/* Upper bound of values a stream of len bytes may claim (guards allocations). */
static int implausible(size_t n, size_t len)
{
    return n > len * 8 + 64;
}

/*
 * Decodes the timestamps of a page that can matter: all of them, or with a partly covered TS_2DIFF
 * page only the blocks that meet the window. Sets c->t / c->n to the decoded rows in the window,
 * *row0 to the page row of c->t[0] and *total to the page's row count.
 */
static tsf_status decode_times(tsf_query *q, qcol *c, tsf_encoding enc, const uint8_t *p, size_t len, int partial,
                               size_t *row0, size_t *total, tsf_error *err)
{
    c->tsum.what = 0;
    tsf_status st;
    size_t ord0 = 0, ndec = 0, tot = 0;
    const uint8_t *src = p;
    size_t srclen = len;
    if (partial && enc == TSF_ENC_TS_2DIFF) {
        /* With the page's count from its statistics the walk stops past the window's end; without them
         * it walks every header to count the values. */
        tsf_td_window w;
        int known = c->ph.has_stats;
        int conservative = q->block_bound == TSF_BLOCK_BOUND_CONSERVATIVE;
        if ((st = tsf_td_window_select(p, len, q->tmin, q->tmax, conservative, !known, &w, err))) return st;
        tot = w.complete ? w.nvalues : (size_t)c->ph.stats.count;
        if (implausible(tot, len))
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                           (unsigned long long)c->body_off, tot, len);
        if (tot < w.nvalues)
            return tsf_err(err, TSF_ECORRUPT, "time page at %llu: statistics count %zu, stream >= %zu values",
                           (unsigned long long)c->body_off, tot, w.nvalues);
        size_t nsel = w.b0 < w.nlisted ? w.b1 - w.b0 + 1 : 0;
        q->st.blocks_read += nsel;
        q->st.blocks_skipped += w.nlisted - nsel; /* blocks past the walk's stop are not even listed */
        if (nsel) {
            ord0 = w.ord0;
            ndec = w.ndec;
            src = p + w.off0;
            srclen = w.off1 - w.off0;
        }
    } else {
        st = tsf_codec_count(TSF_INT64, enc, p, len, &tot, err);
        if (st == TSF_ENOTSUP && c->ph.has_stats && tsf_codec_can_decode(TSF_INT64, enc)) {
            tot = c->ph.stats.count;
            st = TSF_OK;
        }
        if (st) return st;
        if (implausible(tot, len))
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                           (unsigned long long)c->body_off, tot, len);
        ndec = tot;
    }
    if ((st = tsf_rd_buf_reserve(q->a, &c->times, (ndec ? ndec : 1) * sizeof(int64_t), err))) return st;
    int64_t *t = (int64_t *)c->times.p;
    if (ndec && q->checked && enc == TSF_ENC_TS_2DIFF && ndec == tot) {
        st = tsf_ts2diff_decode_i64_sum(q->r->codec, src, srclen, t, ndec, TSF_SUM_ASCENDING, &c->tsum, NULL, err);
        if (st) return st;
    } else if (ndec) {
        st = tsf_codec_decode(q->r->codec, TSF_INT64, enc, src, srclen, t, ndec, NULL, err);
        if (st) return st;
    }
    /* rows inside [tmin, tmax] (timestamps ascend) */
    size_t lo = 0, hi = ndec;
    if (q->tmin != INT64_MIN) {
        size_t a = 0, z = ndec;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            if (t[m] < q->tmin) a = m + 1; else z = m;
        }
        lo = a;
    }
    if (q->tmax != INT64_MAX) {
        size_t a = lo, z = ndec;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            if (t[m] <= q->tmax) a = m + 1; else z = m;
        }
        hi = a;
    }
    c->t = t + lo;
    c->n = hi - lo;
    c->pos = 0;
    *row0 = ord0 + lo;
    *total = tot;
    return TSF_OK;
}

/* Decodes n values of the column's type into c->vals. */
static tsf_status decode_values(tsf_query *q, qcol *c, const uint8_t *p, size_t len, size_t n, tsf_error *err)
{
    tsf_status st = tsf_rd_buf_reserve(q->a, &c->vals, (n ? n : 1) * c->esz, err);
    c->vsum.what = 0;
    if (st) return st;
    if (!n) return TSF_OK;
    if (q->checked && c->ch.encoding == TSF_ENC_TS_2DIFF && (c->type == TSF_INT64 || c->type == TSF_TIMESTAMP))
        st = tsf_ts2diff_decode_i64_sum(q->r->codec, p, len, (int64_t *)c->vals.p, n, TSF_SUM_VALUES, &c->vsum, NULL,
                                        err);
    else if (q->checked && c->ch.encoding == TSF_ENC_GORILLA && c->type == TSF_DOUBLE)
        st = tsf_gorilla_decode_f64_sum(q->r->codec, p, len, (double *)c->vals.p, n, &c->vsum, NULL, err);
    else
        st = tsf_codec_decode(q->r->codec, c->type, c->ch.encoding, p, len, c->vals.p, n, NULL, err);
    if (st && err && st == TSF_ECORRUPT) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", err->message);
        tsf_err(err, st, "values of page at %llu (%s %s): %s", (unsigned long long)c->body_off,
                tsf_type_name(c->type) ? tsf_type_name(c->type) : "?",
                tsf_encoding_name(c->ch.encoding) ? tsf_encoding_name(c->ch.encoding) : "?", m);
    }
    return st;
}

/* ---- pruning by value statistics (filter.c decides; these gather what each unit knows) -------- */

/* Non-aligned column c over one chunk or page with statistics s. Pruning one column of a merge is safe:
 * its rows cannot be TRUE, and rows of other columns at those times only lose a value (null keeps a
 * non-TRUE filter non-TRUE). */
static int na_may_match(tsf_query *q, const qcol *c, const tsf_fmt_stats *s, int trusted)
{
    size_t i = (size_t)(c - q->cols);
    if (!tsf_rd_filter_uses(q->fs, i)) return 1;
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    u[i].stats = *s;
    u[i].has = 1;
    u[i].trusted = trusted;
    return tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* Aligned chunk group of the time chunk at off (next: the following time chunk): the value chunks of the
 * filter's columns, peeked from the index without consuming them (encoding unknown yet: FLOAT/DOUBLE
 * statistics are not trusted here). A column without a value chunk in the group is null in every row. */
static int al_chunk_may_match(tsf_query *q, uint64_t off, uint64_t next)
{
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    int any = 0;
    for (size_t i = 0; i < q->ncols; i++) {
        const qcol *c = &q->cols[i];
        if (!c->s || !tsf_rd_filter_uses(q->fs, i)) continue;
        size_t pos = c->cm_pos;
        int have = c->cm_have;
        uint64_t coff = c->cm_off;
        tsf_fmt_stats cs = c->cm_stats;
        while (have && coff < off) {
            tsf_error e;
            tsf_status st = tsf_mip_next_chunk_meta(&c->s->tsm, &pos, &coff, &cs, &e);
            if (st && st != TSF_ENOTFOUND) return 1; /* the scan itself reports it */
            have = st == TSF_OK;
        }
        any = 1;
        if (have && coff < next) {
            u[i].stats = cs;
            u[i].has = 1;
            u[i].trusted = c->type != TSF_FLOAT && c->type != TSF_DOUBLE;
        } else {
            u[i].all_null = 1;
        }
    }
    return !any || tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* Aligned page: the value pages paired with the current time page (same rows). */
static int al_page_may_match(tsf_query *q)
{
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    for (size_t i = 0; i < q->ncols; i++) {
        const qcol *c = &q->cols[i];
        if (!tsf_rd_filter_uses(q->fs, i)) continue;
        if (!c->in_chunk || c->ph.uncompressed_size == 0) {
            u[i].all_null = 1;
        } else if (c->ph.has_stats) {
            u[i].stats = c->ph.stats;
            u[i].has = 1;
            u[i].trusted = !tsf_rd_lossy(c->type, c->ch.encoding);
        }
    }
    return tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* ---- checked reads (check.h) ------------------------------------------------------------------ */

/* Statistics of a chunk (ChunkMetadata at off) or of c's current page header that describe no data. */
static tsf_status check_range(const tsf_query *q, const tsf_fmt_stats *s, const qcol *c, uint64_t off,
                              tsf_error *err)
{
    char why[160];
    if (!q->checked || !tsf_rd_check_range(s, why, sizeof why)) return TSF_OK;
    if (c) return tsf_rd_check_error(&c->ph, c->body_off - c->ph.header_len, c->chunk_off, why, err);
    return tsf_err(err, TSF_ECORRUPT, "ChunkMetadata of the chunk at %llu: %s", (unsigned long long)off, why);
}

/* The n timestamps t of c's current page, decoded whole, against its statistics. */
static tsf_status check_times(const tsf_query *q, const qcol *c, const int64_t *t, size_t n, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = tsf_rd_page_stats(&c->ch, &c->ph, &c->cs);
    if (!s || !tsf_rd_check_times(q->level, s, t, n, &c->tsum, why, sizeof why)) return TSF_OK;
    return tsf_rd_check_error(&c->ph, c->body_off - c->ph.header_len, c->chunk_off, why, err);
}

/* The n values decoded from c's current page (rows' first and last times t0, t1) against its statistics. */
static tsf_status check_values(const tsf_query *q, const qcol *c, int64_t t0, int64_t t1, size_t n, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = tsf_rd_page_stats(&c->ch, &c->ph, &c->cs);
    if (!s || !tsf_rd_check_values(q->level, c->type, c->ch.encoding, s, t0, t1, c->vals.p, n, &c->vsum, why,
                                 sizeof why))
        return TSF_OK;
    return tsf_rd_check_error(&c->ph, c->body_off - c->ph.header_len, c->chunk_off, why, err);
}

/* ---- non-aligned columns ------------------------------------------------------------------ */

/* Decodes the next page of a non-aligned column with rows in the window (c->done at the end). */
static tsf_status na_next_page(tsf_query *q, qcol *c, tsf_error *err)
{
    tsf_status st;
    for (;;) {
        if (!c->in_chunk) {
            if (!c->cm_have) {
                c->done = 1;
                c->n = c->pos = 0;
                return TSF_OK;
            }
            uint64_t off = c->cm_off;
            tsf_fmt_stats cs = c->cm_stats;
            if ((st = cm_next(q, c, err)) || (st = check_range(q, &cs, NULL, off, err))) return st;
            if (out_of_range(q, cs.start_time, cs.end_time)) {
                q->st.chunks_skipped++;
                continue;
            }
            if (q->fs && !na_may_match(q, c, &cs, c->type != TSF_FLOAT && c->type != TSF_DOUBLE)) {
                q->st.chunks_skipped++; /* its values cannot make the filter TRUE */
                continue;
            }
            if ((st = open_chunk(q, c, off, TSF_CHUNK_NONALIGNED, c->type, err))) return st;
            c->cs = cs;
            c->chunk_partial = !inside(q, cs.start_time, cs.end_time);
            if ((st = read_whole_chunk(q, c, c->chunk_partial, err))) return st;
            if (cs.start_time < q->tmin) pdir_jump(q, c, NULL, 0);
        }
        if (c->dpos >= c->dend) {
            c->in_chunk = 0;
            continue;
        }
        if ((st = next_page_header(q, c, err))) return st;
        int partial = c->chunk_partial;
        if (c->ph.has_stats) {
            if ((st = check_range(q, &c->ph.stats, c, 0, err))) return st;
            if (out_of_range(q, c->ph.stats.start_time, c->ph.stats.end_time)) {
                q->st.pages_skipped++;
                if (c->ph.stats.start_time > q->tmax) c->dpos = c->dend; /* pages ascend: leave the chunk */
                continue;
            }
            partial = !inside(q, c->ph.stats.start_time, c->ph.stats.end_time);
        }
        if (q->fs && c->ph.has_stats && !na_may_match(q, c, &c->ph.stats, !tsf_rd_lossy(c->type, c->ch.encoding))) {
            q->st.pages_skipped++;
            continue;
        }
        q->st.pages_read++;
        if (c->ph.uncompressed_size == 0) continue;
        const uint8_t *p;
        size_t len, row0, total;
        if ((st = load_body(q, c, &p, &len, err))) return st;
        tsf_fmt_nonaligned_page pg;
        if ((st = tsf_fmt_parse_nonaligned_page(p, len, c->body_off, &pg, err))) return st;
        /* a checked page is decoded whole: its statistics describe all of it */
        if ((st = decode_times(q, c, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, partial && !q->checked, &row0, &total,
                               err)))
            return st;
        const int64_t *pt = (const int64_t *)c->times.p;
        if (q->checked && (st = check_times(q, c, pt, total, err))) return st;
        if (c->n == 0) continue;
        if ((st = decode_values(q, c, pg.values, pg.values_len, total, err))) return st;
        if (q->checked && (st = check_values(q, c, pt[0], pt[total - 1], total, err))) return st;
        c->v = c->vals.p + row0 * c->esz;
        return TSF_OK;
    }
}

/* ---- aligned devices ---------------------------------------------------------------------- */

/* Next time page with rows in the window, and the matching value pages of every column. */
static tsf_status al_next_page(tsf_query *q, tsf_error *err)
{
    qcol *tc = &q->tcol;
    tsf_status st;
    for (;;) {
        if (!tc->in_chunk) {
            if (!tc->cm_have) {
                tc->done = 1;
                return TSF_OK;
            }
            uint64_t off = tc->cm_off;
            tsf_fmt_stats cs = tc->cm_stats;
            if ((st = cm_next(q, tc, err)) || (st = check_range(q, &cs, NULL, off, err))) return st;
            uint64_t next = tc->cm_have ? tc->cm_off : q->r->fm.meta_offset;
            if (next <= off)
                return tsf_err(err, TSF_ECORRUPT, "time column of %s: chunk offsets not ascending (%llu then %llu)",
                               q->dev->name, (unsigned long long)off, (unsigned long long)next);
            if (out_of_range(q, cs.start_time, cs.end_time)) {
                q->st.chunks_skipped++;
                continue;
            }
            if (q->fs && !al_chunk_may_match(q, off, next)) {
                q->st.chunks_skipped++; /* its value chunks' statistics rule the filter out */
                continue;
            }
            if ((st = open_chunk(q, tc, off, TSF_CHUNK_TIME, TSF_VECTOR, err))) return st;
            tc->cs = cs;
            tc->chunk_partial = !inside(q, cs.start_time, cs.end_time);
            if ((st = read_whole_chunk(q, tc, tc->chunk_partial, err))) return st;
            for (size_t i = 0; i < q->ncols; i++) {
                qcol *c = &q->cols[i];
                c->in_chunk = 0;
                if (!c->s) continue;
                while (c->cm_have && c->cm_off < off) {
                    q->st.chunks_skipped++;
                    if ((st = cm_next(q, c, err))) return st;
                }
                if (c->cm_have && c->cm_off < next) {
                    uint64_t coff = c->cm_off;
                    tsf_fmt_stats vcs = c->cm_stats;
                    if ((st = cm_next(q, c, err))) return st;
                    if ((st = open_chunk(q, c, coff, TSF_CHUNK_VALUE, c->type, err))) return st;
                    c->cs = vcs;
                    if ((st = read_whole_chunk(q, c, tc->chunk_partial, err))) return st;
                    if (c->dpos == c->dend) c->in_chunk = 0; /* dataSize 0: null in every row */
                }
            }
            if (cs.start_time < q->tmin) pdir_jump(q, tc, q->cols, q->ncols);
        }
        if (tc->dpos >= tc->dend) {
            tc->in_chunk = 0;
            for (size_t i = 0; i < q->ncols; i++)
                if (q->cols[i].in_chunk && q->cols[i].dpos < q->cols[i].dend)
                    return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: more pages than its time chunk at %llu",
                                   (unsigned long long)q->cols[i].chunk_off, (unsigned long long)tc->chunk_off);
            continue;
        }
        if ((st = next_page_header(q, tc, err))) return st;
        for (size_t i = 0; i < q->ncols; i++) {
            qcol *c = &q->cols[i];
            if (!c->in_chunk) continue;
            if (c->dpos >= c->dend)
                return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: fewer pages than its time chunk at %llu",
                               (unsigned long long)c->chunk_off, (unsigned long long)tc->chunk_off);
            if ((st = next_page_header(q, c, err))) return st;
            if (c->ph.has_stats && (st = check_range(q, &c->ph.stats, c, 0, err))) return st;
        }
        int partial = tc->chunk_partial;
        if (tc->ph.has_stats) {
            if ((st = check_range(q, &tc->ph.stats, tc, 0, err))) return st;
            if (out_of_range(q, tc->ph.stats.start_time, tc->ph.stats.end_time)) {
                q->st.pages_skipped++;
                for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
                if (tc->ph.stats.start_time > q->tmax) { /* pages ascend: none after this one matches */
                    tc->dpos = tc->dend;
                    for (size_t i = 0; i < q->ncols; i++)
                        if (q->cols[i].in_chunk) q->cols[i].dpos = q->cols[i].dend;
                }
                continue;
            }
            partial = !inside(q, tc->ph.stats.start_time, tc->ph.stats.end_time);
        }
        if (q->fs && tc->ph.has_stats && !al_page_may_match(q)) {
            q->st.pages_skipped++;
            for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
            continue;
        }
        const uint8_t *p;
        size_t len, row0, total;
        q->st.pages_read++;
        if ((st = load_body(q, tc, &p, &len, err))) return st;
        if ((st = decode_times(q, tc, tc->ch.encoding, p, len, partial && !q->checked, &row0, &total, err)))
            return st;
        const int64_t *pt = (const int64_t *)tc->times.p; /* the whole page when checked */
        if (q->checked && (st = check_times(q, tc, pt, total, err))) return st;
        if (tc->n == 0) {
            for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
            continue;
        }
        q->row_base = row0;
        for (size_t i = 0; i < q->ncols; i++) {
            qcol *c = &q->cols[i];
            c->null_page = 1;
            if (!c->in_chunk || c->ph.uncompressed_size == 0) continue;
            q->st.pages_read++;
            if ((st = load_body(q, c, &p, &len, err))) return st;
            tsf_fmt_value_page vp;
            if ((st = tsf_fmt_parse_value_page(p, len, c->body_off, &vp, err))) return st;
            if (vp.row_count != total)
                return tsf_err(err, TSF_ECORRUPT, "value page at %llu: %u rows but its time page at %llu has %zu",
                               (unsigned long long)c->body_off, vp.row_count, (unsigned long long)tc->body_off, total);
            if ((st = decode_values(q, c, vp.values, vp.values_len, vp.present, err))) return st;
            if (q->checked) {
                size_t r0 = 0, r1 = total; /* the first and last present rows */
                while (r0 < total && !tsf_fmt_bitmap_get(vp.bitmap, r0)) r0++;
                while (r1 > r0 && !tsf_fmt_bitmap_get(vp.bitmap, r1 - 1)) r1--;
                int64_t t0 = r0 < total ? pt[r0] : 0, t1 = r1 > r0 ? pt[r1 - 1] : 0;
                if ((st = check_values(q, c, t0, t1, vp.present, err))) return st;
            }
            c->null_page = 0;
            c->bitmap = vp.bitmap;
            c->present = vp.present;
            c->k = tsf_fmt_bitmap_count(vp.bitmap, row0);
        }
        return TSF_OK;
    }
}

/* ---- devices and batches ------------------------------------------------------------------ */

static const tsf_rd_series *find_series(const tsf_reader *r, const tsf_rd_device *d, const char *name)
{
    for (size_t k = 0; k < d->nseries; k++)
        if (!strcmp(r->series[d->series0 + k].name, name)) return &r->series[d->series0 + k];
    return NULL;
}

static const char *qcol_name(const void *cols, size_t i)
{
    return ((const qcol *)cols)[i].name;
}

/* Sets up the columns of device q->devs[q->di]; *use = 0 if it has none of them (or the filter's tag
 * comparisons rule it out). */
static tsf_status start_device(tsf_query *q, int *use, tsf_error *err)
{
    const tsf_reader *r = q->r;
    const tsf_rd_device *d = &r->devices[q->devs[q->di]];
    size_t nv = q->names ? q->nnames : d->nseries, n = nv + (q->fs ? tsf_rd_filter_ncolumns(q->fs) : 0);
    tsf_status st;
    *use = 0;
    if (n > q->cols_cap) {
        qcol *nc = tsf_realloc(q->a, q->cols, q->cols_cap * sizeof *nc, n * sizeof *nc);
        if (!nc) return tsf_err(err, TSF_ENOMEM, "query: out of memory");
        memset(nc + q->cols_cap, 0, (n - q->cols_cap) * sizeof *nc);
        q->cols = nc;
        q->cols_cap = n;
    }
    if (n > q->cb_cap) {
        tsf_column_batch *cb = tsf_realloc(q->a, q->cb, q->cb_cap * sizeof *cb, n * sizeof *cb);
        if (!cb) return tsf_err(err, TSF_ENOMEM, "query: out of memory");
        q->cb = cb;
        q->cb_cap = n;
    }
    q->dev = d;
    q->ncols = q->nvis = nv;
    size_t present = 0;
    for (size_t i = 0; i < n; i++) {
        const tsf_rd_series *s;
        const char *name;
        if (i < nv) {
            s = q->names ? find_series(r, d, q->names[i]) : &r->series[d->series0 + i];
            name = q->names ? q->names[i] : s->name;
        } else { /* a filter column not among the returned ones: read, evaluated, not returned */
            name = tsf_rd_filter_column(q->fs, i - nv);
            size_t k = 0;
            while (k < q->ncols && strcmp(q->cols[k].name, name)) k++;
            if (k < q->ncols || !(s = find_series(r, d, name))) continue;
        }
        size_t slot = i < nv ? i : q->ncols++;
        col_reset(&q->cols[slot], name, s);
        if (s) {
            present++;
            if ((st = cm_next(q, &q->cols[slot], err))) return st;
        }
    }
    if (!present) return TSF_OK;
    if (q->fs) {
        int skip;
        if ((st = tsf_rd_filter_device(q->fs, q->devs[q->di], qcol_name, q->cols, q->ncols, &skip, err))) return st;
        if (skip) return TSF_OK;
    }
    if (d->aligned) {
        col_reset(&q->tcol, "", &d->time);
        if ((st = cm_next(q, &q->tcol, err))) return st;
    }
    *use = 1;
    return TSF_OK;
}

static void set_column(tsf_query *q, size_t i, const void *vals, const uint8_t *valid)
{
    q->cb[i].name = q->cols[i].name;
    q->cb[i].type = q->cols[i].type;
    q->cb[i].values = vals;
    q->cb[i].validity = valid;
}

/* Emits up to one batch of the current aligned page. */
static tsf_status al_emit(tsf_query *q, tsf_error *err)
{
    qcol *tc = &q->tcol;
    size_t m = tc->n - tc->pos;
    if (m > q->batch) m = q->batch;
    size_t r0 = q->row_base + tc->pos;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->null_page) {
            set_column(q, i, q->zeros.p, q->zeros.p);
            continue;
        }
        uint32_t have = tsf_fmt_bitmap_count(c->bitmap, r0 + m) - (uint32_t)c->k;
        if (have == m) { /* no nulls here: the decoded values are the batch */
            set_column(q, i, c->vals.p + c->k * c->esz, q->ones.p);
            c->k += m;
            continue;
        }
        tsf_status st = tsf_rd_buf_reserve(q->a, &c->out_vals, m * c->esz, err);
        if (!st) st = tsf_rd_buf_reserve(q->a, &c->out_valid, m / 8 + 1, err);
        if (st) return st;
        uint8_t *ov = c->out_vals.p, *vb = c->out_valid.p;
        memset(vb, 0, m / 8 + 1);
        const uint8_t *src = c->vals.p;
        size_t esz = c->esz, k = c->k;
        for (size_t j = 0; j < m; j++) {
            if (tsf_fmt_bitmap_get(c->bitmap, r0 + j) && k < c->present) {
                memcpy(ov + j * esz, src + k * esz, esz);
                vb[j >> 3] |= (uint8_t)(1u << (j & 7));
                k++;
            } else {
                memset(ov + j * esz, 0, esz);
            }
        }
        c->k = k;
        set_column(q, i, ov, vb);
    }
    q->out.times = tc->t + tc->pos;
    q->out.nrows = m;
    tc->pos += m;
    return TSF_OK;
}

/* Emits a batch of a non-aligned device (merging several columns by time). *got = 0 when done. */
static tsf_status na_emit(tsf_query *q, int *got, tsf_error *err)
{
    tsf_status st;
    *got = 0;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (!c->done && c->pos >= c->n && (st = na_next_page(q, c, err))) return st;
    }
    if (q->ncols == 1) {
        qcol *c = &q->cols[0];
        if (c->done) return TSF_OK;
        size_t m = c->n - c->pos;
        if (m > q->batch) m = q->batch;
        set_column(q, 0, c->v + c->pos * c->esz, q->ones.p);
        q->out.times = c->t + c->pos;
        q->out.nrows = m;
        c->pos += m;
        *got = m > 0;
        return TSF_OK;
    }
    if ((st = tsf_rd_buf_reserve(q->a, &q->times_out, q->batch * sizeof(int64_t), err))) return st;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->done) continue;
        if ((st = tsf_rd_buf_reserve(q->a, &c->out_vals, q->batch * c->esz, err))) return st;
        if ((st = tsf_rd_buf_reserve(q->a, &c->out_valid, q->batch / 8 + 1, err))) return st;
        memset(c->out_valid.p, 0, q->batch / 8 + 1);
    }
    int64_t *to = (int64_t *)q->times_out.p;
    size_t m = 0;
    while (m < q->batch) {
        int any = 0, refill = 0;
        int64_t t = INT64_MAX;
        for (size_t i = 0; i < q->ncols; i++) {
            const qcol *c = &q->cols[i];
            if (c->done) continue;
            if (c->pos >= c->n) {
                refill = 1;
                break;
            }
            if (!any || c->t[c->pos] < t) t = c->t[c->pos];
            any = 1;
        }
        if (refill || !any) break;
        for (size_t i = 0; i < q->ncols; i++) {
            qcol *c = &q->cols[i];
            if (c->done) continue;
            if (c->t[c->pos] == t) {
                memcpy(c->out_vals.p + m * c->esz, c->v + c->pos * c->esz, c->esz);
                c->out_valid.p[m >> 3] |= (uint8_t)(1u << (m & 7));
                c->pos++;
            } else {
                memset(c->out_vals.p + m * c->esz, 0, c->esz);
            }
        }
        to[m++] = t;
    }
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->done) /* done before this batch (absent or exhausted): all null */
            set_column(q, i, q->zeros.p, q->zeros.p);
        else
            set_column(q, i, c->out_vals.p, c->out_valid.p);
    }
    q->out.times = to;
    q->out.nrows = m;
    *got = m > 0;
    return TSF_OK;
}

tsf_status tsf_query_next(tsf_query *q, const tsf_batch **out, tsf_error *err)
{
    if (!q || !out) return tsf_err(err, TSF_EINVAL, "tsf_query_next: query and out are required");
    *out = NULL;
    if (q->par) return tsf_rd_par_next(q->par, out, err);
    tsf_status st;
    while (q->di < q->dend) {
        if (!q->dev_active) {
            int use;
            if ((st = start_device(q, &use, err))) return st;
            if (!use) {
                q->di++;
                continue;
            }
            q->dev_active = 1;
        }
        int got = 0;
        if (q->dev->aligned) {
            if (q->tcol.pos >= q->tcol.n && !q->tcol.done && (st = al_next_page(q, err))) return st;
            if (!q->tcol.done && q->tcol.pos < q->tcol.n) {
                if ((st = al_emit(q, err))) return st;
                got = 1;
            }
        } else {
            /* a merge batch may stop early for a refill; loop until rows come or every column ends */
            for (;;) {
                if ((st = na_emit(q, &got, err))) return st;
                if (got) break;
                int live = 0;
                for (size_t i = 0; i < q->ncols; i++) live |= !q->cols[i].done;
                if (!live) break;
            }
        }
        if (got && q->fs) { /* keep the rows where the filter is TRUE; a batch left empty is not returned */
            size_t kept;
            if ((st = tsf_rd_filter_apply(q->fs, &q->out, q->cb, q->ncols, q->nvis, &kept, err))) return st;
            if (!kept) continue;
        }
        if (got) {
            q->out.device = q->devs[q->di];
            q->out.ncolumns = q->nvis;
            q->out.columns = q->cb;
            q->st.rows += q->out.nrows;
            *out = &q->out;
            return TSF_OK;
        }
        q->dev_active = 0;
        q->di++;
    }
    return TSF_OK;
}

/* ---- parallel scan support (parallel.c) ---------------------------------------------------- */

typedef struct dt_ref {
    tsf_rd_buf *buf;
    int page; /* a decoded page buffer: only detachable once its page is used up */
    const qcol *c;
} dt_ref;

/* The decode buffer of q holding ptr (NULL: none). */
static dt_ref dt_owner(tsf_query *q, const void *ptr)
{
    const uint8_t *x = ptr;
#define DT_IN(b) ((b).p && x >= (b).p && x < (b).p + (b).cap)
    if (q->dev && q->dev->aligned && DT_IN(q->tcol.times)) return (dt_ref){&q->tcol.times, 1, &q->tcol};
    if (DT_IN(q->times_out)) return (dt_ref){&q->times_out, 0, NULL};
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        const qcol *pc = q->dev->aligned ? &q->tcol : c; /* whose page position tells "used up" */
        if (DT_IN(c->vals)) return (dt_ref){&c->vals, 1, pc};
        if (DT_IN(c->times)) return (dt_ref){&c->times, 1, pc};
        if (DT_IN(c->out_vals)) return (dt_ref){&c->out_vals, 0, NULL};
        if (DT_IN(c->out_valid)) return (dt_ref){&c->out_valid, 0, NULL};
    }
#undef DT_IN
    return (dt_ref){NULL, 0, NULL};
}

void tsf_rd_query_retarget(tsf_query *q, size_t di, int64_t tmin, int64_t tmax, size_t batch)
{
    q->di = di;
    q->dend = di + 1;
    q->dev_active = 0;
    q->tmin = tmin;
    q->tmax = tmax;
    q->batch = batch;
    memset(&q->st, 0, sizeof q->st);
}

void tsf_rd_query_consts(const tsf_query *q, tsf_rd_buf *zeros, tsf_rd_buf *ones)
{
    *zeros = q->zeros;
    *ones = q->ones;
}

size_t tsf_rd_query_detach(tsf_query *q, const tsf_batch *b, tsf_rd_buf *spare, size_t *nspare, tsf_rd_buf *taken)
{
    size_t n = 0;
    tsf_rd_buf *own[1 + 2 * 64];
    size_t nptr = 1 + 2 * b->ncolumns;
    if (b->ncolumns > 64) return SIZE_MAX;
    for (size_t k = 0; k < nptr; k++) {
        const void *ptr = k == 0
                              ? (const void *)b->times
                              : (k & 1 ? b->columns[(k - 1) / 2].values : b->columns[(k - 1) / 2].validity);
        if (k && (k & 1)) {
            tsf_type t = b->columns[(k - 1) / 2].type;
            if (t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB) return SIZE_MAX; /* borrows page bytes */
        }
        const uint8_t *x = ptr;
        if ((x >= q->zeros.p && x < q->zeros.p + q->zeros.cap) ||
            (x >= q->ones.p && x < q->ones.p + q->ones.cap))
            continue; /* constant for the query's life: the caller substitutes its own */
        dt_ref o = dt_owner(q, ptr);
        if (!o.buf || (o.page && o.c->pos < o.c->n)) return SIZE_MAX;
        size_t j = 0;
        while (j < n && own[j] != o.buf) j++;
        if (j == n) own[n++] = o.buf;
    }
    for (size_t j = 0; j < n; j++) {
        taken[j] = *own[j];
        /* a spare at least as large as the buffer it replaces (it serves the same role next), else the last:
         * recycled buffers then keep their sizes instead of growing again and again */
        size_t k = 0;
        while (k < *nspare && spare[k].cap < taken[j].cap) k++;
        if (k == *nspare) k = *nspare - 1;
        if (*nspare) {
            *own[j] = spare[k];
            spare[k] = spare[--*nspare];
        } else {
            *own[j] = (tsf_rd_buf){0};
        }
    }
    return n;
}
