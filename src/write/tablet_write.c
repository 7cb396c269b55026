/*
 * tablet_write.c - the write path of the writer (spec tsfile-container-format.md §4.1a, §6.4, §10.1, §20):
 * validation of the whole tablet before anything is buffered (strictly increasing times per series / aligned
 * device / table device), page-sized column batches for non-aligned series, lockstep row batches for aligned and
 * table devices, chunk-group flushes when the memory budget is reached, and the row API on top of a one-row
 * tablet. With threads > 1 the column work goes to the worker pool (workers.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auto.h"
#include "workers.h"


/*
 * Appends n columns (at most 64) of one batch of rows: cs[i] gets vals[i] with presence valid[i]
 * (NULL = every row present); runs of columns without nulls go through tsf_wcol_append_group.
 * skip_auto leaves AUTO columns out.
 */
tsf_status tsf_wt_append_run(tsf_writer *w, wctx *x, wcol *const *cs_in, const void *const *vals,
                             const uint8_t *const *valid, size_t n, const int64_t *times, size_t rows, uint64_t g,
                             int skip_auto, tsf_error *err)
{
    wcol *cs[64];
    const void *vs[64];
    size_t m = 0;
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < n && !s; i++) {
        wcol *c = cs_in[i];
        if (skip_auto && c->autoc) continue;
        if (!valid[i]) {
            cs[m] = c;
            vs[m++] = vals[i];
            continue;
        }
        s = tsf_wcol_append_group(w, x, cs, vs, m, times, rows, g, err);
        m = 0;
        if (!s) s = tsf_wcol_append_x(w, x, c, times, vals[i], valid[i], 0, rows, g, err);
    }
    if (!s) s = tsf_wcol_append_group(w, x, cs, vs, m, times, rows, g, err);
    return s;
}

/* Appends tablet columns [lo, hi) (at most 64) of a non-aligned tree tablet. */
tsf_status tsf_wt_append_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, size_t lo, size_t hi, uint64_t g,
                              int skip_auto, tsf_error *err)
{
    wcol *cs[64];
    const void *vs[64];
    const uint8_t *vb[64];
    for (size_t i = lo; i < hi; i++) {
        cs[i - lo] = &d->cols[t->cols[i].idx];
        vs[i - lo] = t->vals[i];
        vb[i - lo] = tsf_wt_valid_or_null(t, i, 0, t->rows);
    }
    return tsf_wt_append_run(w, x, cs, vs, vb, hi - lo, t->times, t->rows, g, skip_auto, err);
}

/* ---- write path --------------------------------------------------------------------------- */

tsf_status tsf_w_seal_device(tsf_writer *w, wdevice *d, tsf_error *err)
{
    tsf_status s;
    if (!d->aligned) {
        if (w->pool && w->pool->nth && d->ncols > 1) { /* pending pages at a flush: in parallel */
            wjobs j = {.w = w, .d = d, .seal = 1, .n = d->ncols};
            return tsf_w_jobs_run(w, &j, err);
        }
        for (size_t i = 0; i < d->ncols; i++)
            if ((s = tsf_wcol_seal(w, &d->cols[i], 0, err))) return s;
        return TSF_OK;
    }
    if (!d->rows) return TSF_OK;
    if ((s = tsf_wauto_seal_device(w, d, err))) return s; /* AUTO pages first: they may end the chunks */
    if (w->pool && d->ncols) {
        wjobs j = {.w = w, .d = d, .seal = 1, .n = 1 + d->ncols};
        if ((s = tsf_w_jobs_run(w, &j, err))) return s;
    } else {
        if ((s = tsf_wcol_seal(w, &d->tcol, d->rows, err))) return s;
        for (size_t i = 0; i < d->ncols; i++)
            if ((s = tsf_wcol_seal(w, &d->cols[i], d->rows, err))) return s;
    }
    d->rows = 0;
    return TSF_OK;
}

int tsf_w_device_cmp(const void *a, const void *b)
{
    const wdevice *x = *(wdevice *const *)a, *y = *(wdevice *const *)b;
    return tsf_mi_device_cmp(x->segs, x->nsegs, y->segs, y->nsegs);
}

/* Writes one chunk group per device with data, devices ascending (as Java's TreeMap). */
tsf_status tsf_w_flush_all(tsf_writer *w, tsf_error *err)
{
    tsf_status s = tsf_w_out_wait(w, err); /* the output thread's groups come first */
    if (s) return s;
    size_t n = 0;
    for (size_t i = 0; i < w->ndevs; i++) n += w->devs[i]->dirty;
    if (!n) return TSF_OK;
    wdevice **list = tsf_alloc(w->alloc, n * sizeof *list);
    if (!list) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (flush)");
    n = 0;
    for (size_t i = 0; i < w->ndevs; i++)
        if (w->devs[i]->dirty) list[n++] = w->devs[i];
    qsort(list, n, sizeof *list, tsf_w_device_cmp);
    tsf_wbuf hb;
    tsf_wbuf_init(&hb, w->alloc);
    for (size_t i = 0; i < n && !s; i++) {
        wdevice *d = list[i];
        if ((s = tsf_w_seal_device(w, d, err))) break;
        hb.len = 0;
        tsf_fmt_put_chunk_group_header(&hb, d->segs, d->nsegs);
        if (hb.oom) {
            s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
            break;
        }
        if ((s = tsf_w_out(w, hb.p, hb.len, err))) break;
        if (d->aligned) {
            if ((s = tsf_wcol_flush_chunk(w, &d->tcol, 0, err))) break;
            for (size_t j = 0; j < d->ncols && !s; j++) s = tsf_wcol_flush_chunk(w, &d->cols[j], 1, err);
        } else {
            for (size_t j = 0; j < d->ncols && !s; j++) s = tsf_wcol_flush_chunk(w, &d->cols[j], 0, err);
        }
        d->dirty = 0;
    }
    tsf_wbuf_free(&hb);
    tsf_free(w->alloc, list, n * sizeof *list);
    return s;
}

/*
 * The chunk groups are written once the buffered bytes reach the memory budget, or flush_interval_ms
 * after the last such flush; either way they reach the OS now (the output thread does that after its
 * last piece), so a crash loses only what came after.
 */
static tsf_status budget_flush(tsf_writer *w, tsf_error *err)
{
    uint64_t now = 0;
    if (w->mem < w->opt.memory_budget) {
        if (!w->opt.flush_interval_ms) return TSF_OK;
        now = tsf_w_now_ms();
        if (now - w->last_flush_ms < w->opt.flush_interval_ms) return TSF_OK;
    }
    if (w->opt.flush_interval_ms) w->last_flush_ms = now ? now : tsf_w_now_ms();
    /* AUTO chunk cuts write output from the calling thread: no output thread then */
    int async = w->pool && w->pool->nth && !w->any_auto;
    if (async) return tsf_w_flush_async(w, err);
    tsf_status s = tsf_w_flush_all(w, err);
    return s ? s : tsf_w_out_flush(w, err);
}

tsf_status tsf_w_settle(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p) return TSF_OK;
    tsf_status s = tsf_w_pipe_join(w, err);
    if (p->budget_due) {
        p->budget_due = 0;
        if (!s) s = budget_flush(w, err);
    }
    return s;
}

tsf_status tsf_writer_flush(tsf_writer *w, tsf_error *err)
{
    if (!w) return tsf_err(err, TSF_EINVAL, "tsf_writer_flush: writer is NULL");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_flush: writer is closed");
    if (w->failed) return tsf_err(err, TSF_EIO, "tsf_writer_flush: an earlier output error stopped this writer");
    tsf_status s = tsf_w_settle(w, err);
    if (!s) s = tsf_w_flush_all(w, err);
    if (!s) s = tsf_w_out_flush(w, err); /* hand the completed chunk groups to the OS */
    return s ? s : tsf_w_refusal(w, err);
}

static tsf_status check_increasing(const tsf_tablet *t, size_t a, size_t b, const char *dev, tsf_error *err)
{
    for (size_t r = a + 1; r < b; r++)
        if (t->times[r] <= t->times[r - 1])
            return tsf_err(err, TSF_EINVAL,
                           "writer: device %s: row %zu time %lld is not after row %zu time %lld (timestamps must "
                           "strictly increase; see sort_tablets)",
                           dev, r, (long long)t->times[r], r - 1, (long long)t->times[r - 1]);
    return TSF_OK;
}

/*
 * Appends tablet rows [r, r + k) to device columns [lo, hi) of an aligned device (feed: the tablet
 * column of each, SIZE_MAX = absent: null rows); runs of columns without nulls share statistics
 * passes (tsf_wcol_append_group). Columns touch only their own state: jobs of the pool.
 */
tsf_status tsf_wt_aligned_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, const size_t *feed, size_t lo,
                               size_t hi, size_t r, size_t k, tsf_error *err)
{
    wcol *cs[64]; /* a run of columns without nulls: statistics four at a time */
    const void *vs[64];
    size_t m = 0;
    tsf_status s = TSF_OK;
    for (size_t j = lo; j < hi && !s; j++) {
        size_t tc = feed[j];
        wcol *c = &d->cols[j];
        const uint8_t *v = tc == SIZE_MAX ? NULL : tsf_wt_valid_or_null(t, tc, r, r + k);
        if (tc != SIZE_MAX && !v) {
            cs[m] = c;
            vs[m++] = t->vals[tc] + r * c->width;
            if (m < 64 && j + 1 < hi) continue;
        }
        s = tsf_wcol_append_group(w, x, cs, vs, m, t->times + r, k, UINT64_MAX, err);
        m = 0;
        if (!s && tc == SIZE_MAX) s = tsf_wcol_append_x(w, x, c, t->times + r, NULL, NULL, 0, k, UINT64_MAX, err);
        else if (!s && v)
            s = tsf_wcol_append_x(w, x, c, t->times + r, t->vals[tc] + r * c->width, v, r, k, UINT64_MAX, err);
    }
    return s;
}

/* Appends rows [a, b) of the tablet to an aligned device in page-sized row batches. */
static tsf_status write_aligned(tsf_writer *w, tsf_tablet *t, wdevice *d, size_t a, size_t b, tsf_error *err)
{
    tsf_status s = TSF_OK;
    size_t maxp = w->opt.page_max_points;
    size_t r = a;
    /* tablet column feeding each device column (SIZE_MAX: absent from the tablet) */
    size_t feed_small[256];
    size_t *feed = d->ncols <= 256 ? feed_small : tsf_alloc(w->alloc, d->ncols * sizeof *feed);
    if (!feed) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    for (size_t j = 0; j < d->ncols; j++) feed[j] = SIZE_MAX;
    for (size_t i = t->ncols; i-- > 0;) /* the first tablet column of a field wins, as before */
        if (t->cols[i].category == TSF_COLUMN_FIELD && t->cols[i].field < d->ncols) feed[t->cols[i].field] = i;
    while (r < b) {
        if ((s = tsf_w_pipe_join(w, err))) goto done; /* the seal of this device's last page may still run */
        size_t k = maxp - d->rows;
        if (k > b - r) k = b - r;
        if ((s = tsf_wcol_append(w, &d->tcol, t->times + r, t->times + r, NULL, 0, k, err))) goto done;
        int full = 0;
        if (w->pool && w->pool->nth && d->ncols > JOB_COLS && (uint64_t)k * d->ncols >= PAR_MIN_CELLS) {
            wjobs j = {.w = w, .t = t, .d = d, .seal = 2, .n = (d->ncols + JOB_COLS - 1) / JOB_COLS, .r = r, .k = k,
                       .feed = feed};
            s = tsf_w_jobs_run(w, &j, err);
        } else {
            s = tsf_wt_aligned_cols(w, &w->ctx, t, d, feed, 0, d->ncols, r, k, err);
            int64_t mm = (int64_t)w->mem + w->ctx.mem;
            w->mem = mm > 0 ? (size_t)mm : 0;
            w->ctx.mem = 0;
        }
        if (s) goto done;
        for (size_t j = 0; j < d->ncols; j++) full |= tsf_wcol_full(w, &d->cols[j]);
        d->rows += k;
        r += k;
        if (d->rows >= maxp || full) {
            /* the seals read only the pending pages: they may run on after the call */
            s = tsf_w_pipe_ok(w, d->ncols >= 2 * JOB_COLS && d->rows * (d->ncols + 1) >= PAR_MIN_CELLS) ? tsf_w_pipe_seal(w, d, err)
                                                                                                  : tsf_w_seal_device(w, d, err);
            if (s) goto done;
        }
    }
    d->last_time = t->times[b - 1];
    d->has_time = 1;
    d->dirty = 1;
done:
    if (feed != feed_small) tsf_free(w->alloc, feed, d->ncols * sizeof *feed);
    return s;
}

typedef struct run {
    size_t a, b;
    wdevice *d;
} run;

static tsf_status write_table(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    const wtable *tb = &w->tables[t->table];
    tsf_mi_seg segs[1 + 256];
    tsf_mi_seg *sp = tb->ntags <= 256 ? segs : tsf_alloc(w->alloc, (1 + tb->ntags) * sizeof *sp);
    if (!sp) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    size_t nruns = 0;
    for (size_t r = 0; r < t->rows; r++)
        if (r == 0 || !tsf_wt_same_tags(t, r - 1, r)) nruns++;
    run *runs = tsf_alloc(w->alloc, nruns * sizeof *runs);
    tsf_status s = TSF_OK;
    if (!runs) {
        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
        goto done;
    }
    /* pass 1: devices and validation (nothing is buffered yet) */
    uint64_t epoch = ++w->epoch;
    size_t ri = 0;
    for (size_t r = 0; r < t->rows && !s; ri++) {
        size_t e = r + 1;
        while (e < t->rows && tsf_wt_same_tags(t, e - 1, e)) e++;
        size_t ns = tsf_wt_row_segs(t, tb, r, sp);
        wdevice *d = tsf_w_find_device(w, sp, ns, NULL);
        if (!d) {
            if ((s = tsf_w_add_device(w, sp, ns, 1, t->table, &d, err))) break;
            for (size_t f = 0; f < tb->nfields && !s; f++) {
                const tsf_mi_column *col = &tb->cols[tb->field_idx[f]];
                if (d->ncols == d->ccap) {
                    size_t nc = d->ccap ? d->ccap * 2 : 4;
                    wcol *ncols = tsf_realloc(w->alloc, d->cols, d->ccap * sizeof *ncols, nc * sizeof *ncols);
                    if (!ncols) {
                        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
                        break;
                    }
                    d->cols = ncols;
                    d->ccap = nc;
                }
                s = tsf_wcol_init(w, &d->cols[d->ncols], col->name, strlen(col->name), (tsf_type)col->data_type,
                                  (tsf_encoding)col->encoding, (tsf_compression)col->compression, 0x40, err);
                if (!s) d->cols[d->ncols++].dev = d;
            }
            if (s) break;
        }
        if (d->check_epoch != epoch) {
            d->check_epoch = epoch;
            d->check_has = d->has_time;
            d->check_time = d->last_time;
        }
        if ((s = check_increasing(t, r, e, d->path, err))) break;
        if (d->check_has && t->times[r] <= d->check_time) {
            s = tsf_err(err, TSF_EINVAL, "writer: device %s: row %zu time %lld is not after the last written time %lld",
                        d->path, r, (long long)t->times[r], (long long)d->check_time);
            break;
        }
        d->check_has = 1;
        d->check_time = t->times[e - 1];
        runs[ri].a = r;
        runs[ri].b = e;
        runs[ri].d = d;
        r = e;
    }
    /* pass 2: append */
    for (size_t i = 0; i < nruns && !s; i++) s = write_aligned(w, t, runs[i].d, runs[i].a, runs[i].b, err);
done:
    if (runs) tsf_free(w->alloc, runs, nruns * sizeof *runs);
    if (sp != segs) tsf_free(w->alloc, sp, (1 + tb->ntags) * sizeof *sp);
    return s;
}

/*
 * Appends a tablet's times to a non-aligned device's shared rows (dev->dt) and sets *g to the
 * device row of its first row. Rows before the oldest pending dense page are dropped; a dense page
 * that would pin more than 4 pages of rows gets its own copy of its times first.
 */
static tsf_status shared_times(tsf_writer *w, wdevice *d, const int64_t *times, size_t n, uint64_t *g,
                               tsf_error *err)
{
    tsf_status s;
    uint64_t end = d->dt_base + d->dt_len, lo = end;
    uint64_t keep = 4 * (uint64_t)w->opt.page_max_points;
    for (size_t i = 0; i < d->ncols; i++) {
        wcol *c = &d->cols[i];
        if (!c->dense || !c->nvals) continue;
        if (end - c->g0 > keep) {
            if ((s = tsf_wcol_own_times(w, &w->ctx, c, err))) return s;
        } else if (c->g0 < lo) {
            lo = c->g0;
        }
    }
    size_t drop = (size_t)(lo - d->dt_base);
    if (drop) {
        memmove(d->dt, d->dt + drop, (d->dt_len - drop) * sizeof *d->dt);
        d->dt_len -= drop;
        d->dt_base = lo;
    }
    if (d->dt_len + n > d->dt_cap) {
        size_t nc = d->dt_cap ? d->dt_cap : 1024;
        while (nc < d->dt_len + n) nc *= 2;
        int64_t *nd = tsf_realloc(w->alloc, d->dt, d->dt_cap * sizeof *nd, nc * sizeof *nd);
        if (!nd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (times of %s)", d->path);
        d->dt = nd;
        d->dt_cap = nc;
    }
    memcpy(d->dt + d->dt_len, times, n * sizeof *times);
    *g = d->dt_base + d->dt_len;
    d->dt_len += n;
    return TSF_OK;
}

static tsf_status write_tree(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    wdevice *d = t->dev;
    size_t n = t->rows;
    tsf_status s = check_increasing(t, 0, n, d->path, err);
    if (s) return s;
    if (d->aligned) {
        if (d->has_time && t->times[0] <= d->last_time)
            return tsf_err(err, TSF_EINVAL, "writer: device %s: row 0 time %lld is not after the last written time %lld",
                           d->path, (long long)t->times[0], (long long)d->last_time);
        return write_aligned(w, t, d, 0, n, err);
    }
    /* non-aligned: each series checks its own first present row */
    for (size_t i = 0; i < t->ncols; i++) {
        wcol *c = &d->cols[t->cols[i].idx];
        if (!c->has_time) continue;
        size_t r = 0;
        while (r < n && !vbit(t->valid[i], r)) r++;
        if (r < n && t->times[r] <= c->last_time)
            return tsf_err(err, TSF_EINVAL,
                           "writer: device %s: row %zu time %lld is not after the last written time %lld of series %s",
                           d->path, r, (long long)t->times[r], (long long)c->last_time, c->name);
    }
    uint64_t g = 0;
    if ((s = shared_times(w, d, t->times, n, &g, err))) return s;
    if (tsf_w_pipe_ok(w, t->ncols > JOB_COLS && (uint64_t)n * t->ncols >= PAR_MIN_CELLS) && tsf_wt_fixed_width(t)) {
        if ((s = tsf_w_pipe_append(w, t, d, g, err))) return s;
    } else if (w->pool && w->pool->nth && t->ncols > 1 && (uint64_t)n * t->ncols >= PAR_MIN_CELLS) {
        wjobs j = {.w = w, .t = t, .d = d, .g = g, .n = (t->ncols + JOB_COLS - 1) / JOB_COLS};
        if ((s = tsf_w_jobs_run(w, &j, err))) return s;
    } else {
        for (size_t i = 0; i < t->ncols && !s; i += 64)
            s = tsf_wt_append_cols(w, &w->ctx, t, d, i, i + 64 < t->ncols ? i + 64 : t->ncols, g, 0, err);
        int64_t m = (int64_t)w->mem + w->ctx.mem;
        w->mem = m > 0 ? (size_t)m : 0;
        w->ctx.mem = 0;
        if (s) return s;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        wcol *c = &d->cols[t->cols[i].idx];
        const uint8_t *v = tsf_wt_valid_or_null(t, i, 0, n);
        size_t r = n;
        while (r > 0 && v && !vbit(v, r - 1)) r--;
        if (r > 0) {
            c->last_time = t->times[r - 1];
            c->has_time = 1;
            d->dirty = 1;
        }
    }
    return TSF_OK;
}

tsf_status tsf_writer_write_tablet(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    if (!w || !t) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_tablet: NULL argument");
    if (t->w != w) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_tablet: tablet belongs to another writer");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_write_tablet: writer is closed");
    if (w->failed) return tsf_err(err, TSF_EIO, "tsf_writer_write_tablet: an earlier output error stopped this writer");
    PROBE(uint64_t tc0 = probe_ns(); if (w->pool) atomic_store(&w->pool->pr.incall, 1));
    tsf_status s = tsf_w_settle(w, err);
    if (s) return s;
    PROBE(struct wpool *pp = w->pool);
    if (t->rows) {
        if (w->opt.sort_tablets && (s = tsf_wt_sort(t, err))) return s;
        s = t->table >= 0 ? write_table(w, t, err) : write_tree(w, t, err);
        if (s) return s;
        if (w->pool && w->pool->pipe_on) w->pool->budget_due = 1; /* checked when the tail has run */
        else if ((s = budget_flush(w, err))) return s;
    }
    PROBE(if (pp) {
        pp->pr.t_call += probe_ns() - tc0;
        atomic_store(&pp->pr.incall, 0);
    })
    tsf_tablet_reset(t);
    /* a refused page (exact.c): reported now, or with a tablet tail still running, by the next call */
    return w->pool && w->pool->pipe_on ? TSF_OK : tsf_w_refusal(w, err);
}

/* ---- row API ------------------------------------------------------------------------------ */

tsf_status tsf_writer_write_row(tsf_writer *w, const char *target, int64_t time, const char *const *columns,
                                const tsf_value *values, size_t n, tsf_error *err)
{
    if (!w || !target || (!values && n)) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_row: NULL argument");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_write_row: writer is closed");
    tsf_status s;
    tsf_tablet *t = w->row_tablet;
    int reuse = t && w->row_target && strcmp(w->row_target, target) == 0 && t->ncols == n;
    if (reuse && columns) { /* same column list? */
        const wtable *tb = t->table >= 0 ? &w->tables[t->table] : NULL;
        for (size_t i = 0; i < n && reuse; i++) {
            const char *nm = tb ? tb->cols[t->cols[i].idx].name : t->dev->cols[t->cols[i].idx].name;
            reuse = columns[i] && strcasecmp(nm, columns[i]) == 0;
        }
    }
    if (!reuse) {
        if (t) tsf_tablet_free(t);
        w->row_tablet = NULL;
        if (w->row_target) tsf_free(w->alloc, w->row_target, strlen(w->row_target) + 1);
        w->row_target = NULL;
        if ((s = tsf_tablet_new(w, target, columns, n, 1, &t, err))) return s;
        if (t->ncols != n) {
            tsf_tablet_free(t);
            return tsf_err(err, TSF_EINVAL, "tsf_writer_write_row: %zu values for %zu columns", n, t->ncols);
        }
        size_t len = strlen(target);
        w->row_target = tsf_alloc(w->alloc, len + 1);
        if (!w->row_target) {
            tsf_tablet_free(t);
            return tsf_err(err, TSF_ENOMEM, "tsf_writer_write_row: out of memory");
        }
        memcpy(w->row_target, target, len + 1);
        w->row_tablet = t;
    }
    tsf_tablet_reset(t);
    if ((s = tsf_tablet_set_time(t, 0, time, err))) return s;
    for (size_t i = 0; i < n; i++) {
        const tsf_value *v = &values[i];
        if (v->is_null) continue;
        switch (t->cols[i].type) {
        case TSF_BOOLEAN: s = tsf_tablet_set_bool(t, 0, i, v->v.b, err); break;
        case TSF_INT32:
        case TSF_DATE: s = tsf_tablet_set_int32(t, 0, i, v->v.i32, err); break;
        case TSF_INT64:
        case TSF_TIMESTAMP: s = tsf_tablet_set_int64(t, 0, i, v->v.i64, err); break;
        case TSF_FLOAT: s = tsf_tablet_set_float(t, 0, i, v->v.f, err); break;
        case TSF_DOUBLE: s = tsf_tablet_set_double(t, 0, i, v->v.d, err); break;
        default: s = tsf_tablet_set_bytes(t, 0, i, v->v.bytes.data, v->v.bytes.len, err); break;
        }
        if (s) return s;
    }
    return tsf_writer_write_tablet(w, t, err);
}
