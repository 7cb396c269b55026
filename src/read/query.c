/*
 * query.c - the batch iterator's query object: options and their checks, the devices and columns a
 * query selects, the column buffers it keeps across queries of one reader, and tsf_query_next, which
 * walks the selected devices and returns the batches of each (tsfile-container-format.md §5-§8.5).
 *
 * For each selected device the requested columns are scanned chunk by chunk and page by page
 * (query_scan.c) and returned as column batches (times, values in the C representation of tsf.h,
 * validity bitmaps; query_batch.c). Aligned devices (§6.4): the time column drives and the value
 * columns follow it page by page. Non-aligned devices: each column is its own series; several columns
 * are merged by time (outer join). A batch never spans pages, so TEXT/STRING/BLOB values can borrow
 * from the page buffers until the next call. With a value filter, batches keep the rows where it is
 * TRUE (filter.c); with threads > 1 the workers of parallel.c yield the batches.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "page_index.h"
#include "query_internal.h"

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
    if (!(o.experimental && o.experimental->no_filter_prune)) /* with pruning off every row is evaluated */
        tsf_rd_filter_time_bounds(o.where, &o.time_min, &o.time_max);
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

int tsf_rd_query_set_unit(tsf_query *q, tsf_rd_unit_fn fn, void *ctx)
{
    if (q->fs || q->par) return 0;
    q->unit = fn;
    q->unit_ctx = ctx;
    return 1;
}

void tsf_rd_query_col_unit(const tsf_query *q, size_t col, uint64_t *chunk_off, uint64_t *page_off)
{
    const qcol *c = &q->cols[col];
    *chunk_off = c->chunk_off;
    *page_off = c->body_off;
}

void tsf_query_get_stats(const tsf_query *q, tsf_query_stats *out)
{
    if (q && q->par) tsf_rd_par_stats(q->par, out);
    else if (q) *out = q->st;
}

/* Frees the column buffers closed queries left to the reader. */
static void qspare_free(const tsf_allocator *a, tsf_rd_qspare *s)
{
    if (!s) return;
    col_free(a, &s->tcol);
    for (size_t k = 0; k < s->cap; k++) col_free(a, &s->cols[k]);
    tsf_free(a, s->cols, s->cap * sizeof *s->cols);
    tsf_free(a, s, sizeof *s);
}

void tsf_rd_query_spares_free(tsf_reader *r)
{
    for (size_t i = 0; i < r->nqspare; i++) qspare_free(r->a, r->qspare[i]);
    r->nqspare = 0;
}

size_t tsf_rd_query_spares_take(tsf_reader *r, tsf_rd_spare *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    while (n < max && r->nqspare) out[n++] = (tsf_rd_spare){r->qspare[--r->nqspare], r->a};
    pthread_mutex_unlock(&r->lock);
    return n;
}

int tsf_rd_query_spare_give(tsf_reader *r, tsf_rd_spare *sp)
{
    int given = 0;
    pthread_mutex_lock(&r->lock);
    if (sp->s && sp->a == r->a && r->nqspare == 0) {
        r->qspare[r->nqspare++] = sp->s;
        sp->s = NULL;
        given = 1;
    }
    pthread_mutex_unlock(&r->lock);
    return given;
}

void tsf_rd_query_spare_drop(tsf_rd_spare *carry)
{
    qspare_free(carry->a, carry->s);
    carry->s = NULL;
}

void tsf_rd_query_spare_carry(tsf_reader *r, tsf_rd_spare *carry)
{
    tsf_rd_query_spare_drop(carry);
    tsf_rd_query_spares_take(r, carry, 1);
}

void tsf_rd_query_spare_leave(tsf_reader *r, tsf_rd_spare *carry)
{
    if (!tsf_rd_query_spare_give(r, carry)) tsf_rd_query_spare_drop(carry);
}

/* ---- devices ------------------------------------------------------------------------------ */

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
            if ((st = tsf_rd_query_next_meta(q, &q->cols[slot], err))) return st;
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
        if ((st = tsf_rd_query_next_meta(q, &q->tcol, err))) return st;
    }
    *use = 1;
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
            if (q->tcol.pos >= q->tcol.n && !q->tcol.done && (st = tsf_rd_query_al_page(q, err))) return st;
            if (!q->tcol.done && q->tcol.pos < q->tcol.n) {
                if ((st = tsf_rd_query_al_emit(q, err))) return st;
                got = 1;
            }
        } else {
            /* a merge batch may stop early for a refill; loop until rows come or every column ends */
            for (;;) {
                if ((st = tsf_rd_query_na_emit(q, &got, err))) return st;
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
