/*
 * dataset_query.c - queries and folds over a dataset's files (doc/dataset.md).
 *
 * Planning, from the metadata the dataset holds: the selected devices (a table, names, and the TAG
 * comparisons of the filter decided on each table device's tag values), then per file the selected devices
 * whose time range meets the query's. A file with none is never opened again; the others are read in file
 * order by one tsf_query each (the file's selected devices, in the file's device order).
 *
 * Threads: threads = 1 and files_at_once = 1 run everything on the caller's thread. Otherwise
 * max(threads, files_at_once) workers each take the next file (file order) and run its query to the end:
 * a query copies the batches into a bounded queue per file that tsf_dataset_query_next drains in file
 * order; a fold folds them into the file's own accumulator on that worker. A worker takes file f only
 * when f < front + window (front: the first file not yet drained, resp. merged), which bounds what is open
 * and buffered. With more workers than threads, a worker decodes only while it holds one of `threads`
 * tokens and gives its token up for the duration of every read (its reader then reads through callbacks
 * that do so) and while it waits for queue space, so files_at_once reads are under way while `threads`
 * files decode. Fold accumulators are merged into the result in file order as soon as every earlier file
 * is merged: the result depends only on the files, never on the thread count or timing. The error of the
 * first failing file (file order) is the one reported.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dataset_internal.h"
#include "filter.h"
#include "query_internal.h"

enum { DQ_QUEUE_MAX = 16, DQ_MAX_WORKERS = 256 };

/* One file to read: its index and the reader indexes of its selected devices (ascending), with their
 * dataset devices. */
typedef struct dq_plan {
    size_t file;
    size_t *locals, *devs;
    size_t n;
} dq_plan;

/* A batch copied out of a worker's query (its arrays follow in the same allocation). */
typedef struct dq_item {
    struct dq_item *next;
    size_t bytes;
    tsf_dataset_batch b;
} dq_item;

/* Per planned file: queued batches, state, counters, accumulator. */
typedef struct dq_slot {
    dq_item *head, *tail;
    size_t n;
    int done;
    tsf_status st;
    tsf_error err;
    tsf_query_stats qs;
    void *acc;
} dq_slot;

typedef struct dq_engine dq_engine;

/* A worker's reads through callbacks that give up its decode token while they wait. */
typedef struct dq_wrap {
    dq_engine *e;
    tsf_read_callbacks base, cb;
} dq_wrap;

struct tsf_dataset_query {
    tsf_dataset *ds;
    tsf_dataset_query_options o;
    dq_plan *plan;
    size_t nplan;
    tsf_dataset_query_stats st;
    /* the caller's thread alone */
    size_t cur;
    tsf_reader *r;
    tsf_query *q;
    tsf_ds_src src;
    tsf_dataset_batch out;
    /* workers */
    dq_engine *e;
    dq_item *held; /* the batch last returned */
    tsf_rd_spare carry; /* the caller's thread: buffers handed from file to file */
    const tsf_rd_ds_fold_ext *ext; /* the aggregation's fold (tsf_rd_ds_fold) or NULL */
};

/* A file's statistics hook (tsf_rd_ds_fold_ext.unit): its plan entry and accumulator. */
typedef struct dq_unit {
    const tsf_dataset_query *q;
    const dq_plan *p;
    const tsf_dataset_fold_callbacks *cb;
    void *acc;
} dq_unit;

struct dq_engine {
    tsf_dataset_query *dq;
    const tsf_dataset_fold_callbacks *fold; /* NULL: a query */
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_front, cv_tok;
    pthread_t th[DQ_MAX_WORKERS];
    size_t nth;
    size_t next, front, window;
    size_t limit;    /* files from here on are not started: one before them failed */
    int stop;        /* the query is being closed */
    unsigned tokens; /* free decode tokens */
    int use_tokens;
    dq_slot *slots;
    void *result;       /* fold: the accumulator merged into */
    tsf_status fold_st; /* fold: first failure in file order */
    tsf_error fold_err;
};

void tsf_dataset_query_options_init(tsf_dataset_query_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->time_min = INT64_MIN;
    o->time_max = INT64_MAX;
    o->batch_size = 4096;
    o->checked = -1;
}

/* ---- planning ---- */

static void plan_free(tsf_dataset_query *q)
{
    for (size_t i = 0; i < q->nplan; i++) {
        tsf_free(q->ds->a, q->plan[i].locals, q->plan[i].n * sizeof(size_t));
        tsf_free(q->ds->a, q->plan[i].devs, q->plan[i].n * sizeof(size_t));
    }
    tsf_free(q->ds->a, q->plan, q->ds->nfiles * sizeof *q->plan);
    q->plan = NULL;
    q->nplan = 0;
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static tsf_status plan_make(tsf_dataset_query *q, tsf_error *err)
{
    tsf_dataset *ds = q->ds;
    const tsf_dataset_query_options *o = &q->o;
    uint8_t *sel = tsf_calloc(ds->a, ds->ndevs + 1, 1);
    size_t *tmp = tsf_calloc(ds->a, 2 * ds->ndevs + 2, sizeof *tmp);
    q->plan = tsf_calloc(ds->a, ds->nfiles + 1, sizeof *q->plan);
    tsf_status st = TSF_OK;
    if (!sel || !tmp || !q->plan) {
        st = tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
        goto done;
    }
    if (o->devices) {
        for (size_t i = 0; i < o->ndevices; i++) {
            size_t d = o->devices[i] ? tsf_rd_ds_find(ds, o->devices[i]) : (size_t)-1;
            if (d == (size_t)-1) {
                st = tsf_err(err, TSF_ENOTFOUND, "dataset query: no device %s",
                             o->devices[i] ? o->devices[i] : "(NULL)");
                goto done;
            }
            sel[d] = 1;
        }
    } else if (o->table) {
        size_t t = 0;
        while (t < ds->ntables && strcasecmp(ds->tables[t].name, o->table)) t++;
        if (t == ds->ntables) {
            st = tsf_err(err, TSF_ENOTFOUND, "dataset query: no table %s", o->table);
            goto done;
        }
        memset(sel + ds->tables[t].first_device, 1, ds->tables[t].ndevices);
    } else {
        memset(sel, 1, ds->ndevs);
    }
    for (size_t d = 0; o->where && d < ds->ndevs; d++) {
        const tsf_ds_table *t = &ds->tables[ds->devs[d].table];
        if (sel[d] && t->ncols &&
            !tsf_rd_filter_tags_may_pass(o->where, t->cols, t->ncols, ds->devs[d].segs, ds->devs[d].nsegs))
            sel[d] = 0;
    }
    int64_t tlo = o->time_min, thi = o->time_max;
    tsf_rd_filter_time_bounds(o->where, &tlo, &thi);
    for (size_t f = 0; f < ds->nfiles; f++) {
        const tsf_ds_file *fl = &ds->files[f];
        size_t n = 0;
        for (size_t i = 0; i < fl->ndevs; i++) {
            const tsf_ds_fdev *fd = &fl->devs[i];
            if (!sel[fd->dev] || fd->tmin > fd->tmax || fd->tmin > thi || fd->tmax < tlo) continue;
            tmp[n++] = fd->local;
        }
        if (!n) {
            q->st.files_skipped++;
            continue;
        }
        qsort(tmp, n, sizeof *tmp, size_cmp);
        dq_plan *p = &q->plan[q->nplan];
        p->file = f;
        p->locals = tsf_alloc(ds->a, n * sizeof(size_t));
        p->devs = tsf_alloc(ds->a, n * sizeof(size_t));
        if (!p->locals || !p->devs) {
            tsf_free(ds->a, p->locals, n * sizeof(size_t));
            tsf_free(ds->a, p->devs, n * sizeof(size_t));
            st = tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
            goto done;
        }
        p->n = n;
        q->nplan++;
        memcpy(p->locals, tmp, n * sizeof *tmp);
        for (size_t i = 0; i < fl->ndevs; i++) {
            size_t *at = bsearch(&fl->devs[i].local, p->locals, n, sizeof *p->locals, size_cmp);
            if (at) p->devs[at - p->locals] = fl->devs[i].dev;
        }
    }
done:
    tsf_free(ds->a, sel, ds->ndevs + 1);
    tsf_free(ds->a, tmp, (2 * ds->ndevs + 2) * sizeof *tmp);
    return st;
}

/* ---- one file ---- */

static const tsf_read_callbacks *wrap_cb(void *wctx, const tsf_read_callbacks *base);

static int unit_hook(void *ctx, size_t device, const char *column, tsf_type type, const tsf_fmt_stats *s, int enc,
                     uint64_t chunk_off, uint64_t page_off)
{
    const dq_unit *u = ctx;
    const size_t *at = bsearch(&device, u->p->locals, u->p->n, sizeof *u->p->locals, size_cmp);
    if (!at) return TSF_RD_UNIT_DECODE;
    return u->q->ext->unit(u->cb->ctx, u->acc, u->p->devs[at - u->p->locals], column, type, s, enc, chunk_off,
                           page_off);
}

/* Batch b of a file into its accumulator. */
static int fold_one(const tsf_dataset_query *q, const tsf_dataset_fold_callbacks *cb, void *acc,
                    const tsf_dataset_batch *b, const tsf_query *qq)
{
    return q->ext && q->ext->fold_q ? q->ext->fold_q(cb->ctx, acc, b, qq) : cb->fold(cb->ctx, acc, b);
}

/* Opens plan entry p's reader and query (u: the file's statistics hook of a fold, or NULL) with the buffers
 * the previous file's query left in carry. */
static tsf_status file_open(tsf_dataset_query *q, const dq_plan *p, dq_wrap *w, tsf_ds_src *src,
                            tsf_reader **r, tsf_query **qq, dq_unit *u, tsf_rd_spare *carry, tsf_error *err)
{
    const char *path = q->ds->files[p->file].path;
    *qq = NULL;
    tsf_status st = tsf_rd_ds_open_file(q->ds, path, &q->ds->ropts, w ? wrap_cb : NULL, w, src, r, err);
    if (!st) {
        tsf_rd_query_spare_leave(*r, carry);
        tsf_query_options qo;
        tsf_query_options_init(&qo);
        qo.devices = p->locals;
        qo.ndevices = p->n;
        qo.columns = q->o.columns;
        qo.ncolumns = q->o.ncolumns;
        qo.time_min = q->o.time_min;
        qo.time_max = q->o.time_max;
        qo.batch_size = q->o.batch_size;
        qo.where = q->o.where;
        qo.checked = q->o.checked;
        st = tsf_query_open(*r, &qo, qq, err);
        if (!st && u && q->ext && q->ext->unit && !q->o.where) tsf_rd_query_set_unit(*qq, unit_hook, u);
    }
    return tsf_rd_ds_name_file(st, path, err);
}

/* Closes a file's query and reader, keeping the query's buffers in carry for the next file; a reader of the
 * dataset's pool keeps them instead (the next query of that file takes them). */
static void file_close(tsf_dataset_query *q, tsf_ds_src *src, tsf_reader *r, tsf_query *qq,
                       tsf_query_stats *qs, tsf_rd_spare *carry)
{
    if (qq && qs) tsf_query_get_stats(qq, qs);
    tsf_query_close(qq);
    if (r && !src->pooled) tsf_rd_query_spare_carry(r, carry);
    if (r) tsf_rd_ds_close_file(q->ds, src, r);
}

/* The dataset batch of reader batch b of plan entry p. */
static void batch_of(tsf_dataset_query *q, const dq_plan *p, const tsf_batch *b, tsf_dataset_batch *out)
{
    const size_t *at = bsearch(&b->device, p->locals, p->n, sizeof *p->locals, size_cmp);
    size_t d = at ? p->devs[at - p->locals] : 0;
    out->file = p->file;
    out->device = d;
    out->device_name = q->ds->devs[d].name;
    out->rows = *b;
}

static void stats_add(tsf_query_stats *a, const tsf_query_stats *b)
{
    a->chunks_read += b->chunks_read, a->chunks_skipped += b->chunks_skipped;
    a->pages_read += b->pages_read, a->pages_skipped += b->pages_skipped;
    a->blocks_read += b->blocks_read, a->blocks_skipped += b->blocks_skipped;
    a->bytes_read += b->bytes_read, a->bytes_decompressed += b->bytes_decompressed;
    a->rows += b->rows;
}

/* ---- workers ---- */

static void token_get(dq_engine *e)
{
    if (!e->use_tokens) return;
    pthread_mutex_lock(&e->mu);
    while (!e->tokens) pthread_cond_wait(&e->cv_tok, &e->mu);
    e->tokens--;
    pthread_mutex_unlock(&e->mu);
}

static void token_put_locked(dq_engine *e)
{
    if (!e->use_tokens) return;
    e->tokens++;
    pthread_cond_signal(&e->cv_tok);
}

static void token_put(dq_engine *e)
{
    if (!e->use_tokens) return;
    pthread_mutex_lock(&e->mu);
    token_put_locked(e);
    pthread_mutex_unlock(&e->mu);
}

static int wrap_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    dq_wrap *w = ud;
    token_put(w->e);
    int rc = w->base.pread(w->base.ud, buf, len, off);
    token_get(w->e);
    return rc;
}

static const tsf_read_callbacks *wrap_cb(void *wctx, const tsf_read_callbacks *base)
{
    dq_wrap *w = wctx;
    w->base = *base;
    w->cb = (tsf_read_callbacks){sizeof w->cb, wrap_pread, base->size, w};
    return &w->cb;
}

static int is_bytes(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* Copies batch b into one allocation: header, columns, times, then per column values and validity (16-byte
 * aligned), then column names and TEXT/STRING/BLOB bytes filled from the end. */
static dq_item *item_copy(const tsf_allocator *a, const tsf_dataset_batch *b)
{
    size_t nr = b->rows.nrows, nc = b->rows.ncolumns, vb = (nr + 7) / 8;
    size_t bytes = sizeof(dq_item) + nc * sizeof(tsf_column_batch) + nr * sizeof(int64_t);
    bytes = (bytes + 15) & ~(size_t)15;
    for (size_t c = 0; c < nc; c++) {
        const tsf_column_batch *cb = &b->rows.columns[c];
        size_t esz = tsf_rd_cell_size(cb->type);
        bytes += ((nr * esz + 15) & ~(size_t)15) + ((vb + 15) & ~(size_t)15) + strlen(cb->name) + 1;
        if (is_bytes(cb->type))
            for (size_t i = 0; i < nr; i++) bytes += ((const tsf_bytes *)cb->values)[i].len;
    }
    dq_item *it = tsf_alloc(a, bytes);
    if (!it) return NULL;
    it->next = NULL;
    it->bytes = bytes;
    it->b = *b;
    uint8_t *p = (uint8_t *)(it + 1);
    tsf_column_batch *cols = (tsf_column_batch *)p;
    p += nc * sizeof *cols;
    int64_t *times = (int64_t *)p;
    if (nr) memcpy(times, b->rows.times, nr * sizeof *times);
    p = (uint8_t *)it + ((sizeof(dq_item) + nc * sizeof *cols + nr * sizeof(int64_t) + 15) & ~(size_t)15);
    uint8_t *end = (uint8_t *)it + bytes;
    for (size_t c = 0; c < nc; c++) {
        const tsf_column_batch *cb = &b->rows.columns[c];
        size_t esz = tsf_rd_cell_size(cb->type);
        cols[c] = *cb;
        size_t nl =
            strlen(cb->name) + 1; /* names belong to the file's reader, closed before the batch is read */
        end -= nl;
        memcpy(end, cb->name, nl);
        cols[c].name = (const char *)end;
        uint8_t *v = p;
        if (nr) memcpy(v, cb->values, nr * esz);
        p += (nr * esz + 15) & ~(size_t)15;
        cols[c].values = v;
        if (cb->validity) {
            memcpy(p, cb->validity, vb);
            cols[c].validity = p;
        }
        p += (vb + 15) & ~(size_t)15;
        if (is_bytes(cb->type)) {
            tsf_bytes *bv = (tsf_bytes *)v;
            for (size_t i = 0; i < nr; i++) {
                if (bv[i].len) memcpy(end - bv[i].len, bv[i].data, bv[i].len);
                end -= bv[i].len;
                bv[i].data = bv[i].len ? end : bv[i].data;
            }
        }
    }
    it->b.rows.times = times;
    it->b.rows.columns = cols;
    return it;
}

static void item_free(const tsf_allocator *a, dq_item *it)
{
    if (it) tsf_free(a, it, it->bytes);
}

/* Hands batch b of slot s to the consumer (query) or folds it (fold). Called holding a token. */
static tsf_status deliver(dq_engine *e, size_t f, const tsf_dataset_batch *b, const tsf_query *qq, tsf_error *err)
{
    tsf_dataset_query *q = e->dq;
    dq_slot *s = &e->slots[f];
    if (e->fold) {
        if (fold_one(q, e->fold, s->acc, b, qq))
            return tsf_err(err, TSF_EIO, "dataset fold: the fold callback failed on %s",
                           q->ds->files[b->file].path);
        return TSF_OK;
    }
    dq_item *it = item_copy(q->ds->a, b);
    if (!it) return tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
    pthread_mutex_lock(&e->mu);
    if (s->n >= DQ_QUEUE_MAX) {
        token_put_locked(e);
        while (s->n >= DQ_QUEUE_MAX && !e->stop) pthread_cond_wait(&e->cv_work, &e->mu);
        while (e->use_tokens && !e->tokens) pthread_cond_wait(&e->cv_tok, &e->mu);
        if (e->use_tokens) e->tokens--;
    }
    if (e->stop) {
        pthread_mutex_unlock(&e->mu);
        item_free(q->ds->a, it);
        return TSF_ESTATE; /* closed early: nobody reads on */
    }
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    s->n++;
    pthread_cond_broadcast(&e->cv_front);
    pthread_mutex_unlock(&e->mu);
    return TSF_OK;
}

static tsf_status run_file(dq_engine *e, size_t f, dq_wrap *w, tsf_rd_spare *carry, tsf_error *err)
{
    tsf_dataset_query *q = e->dq;
    const dq_plan *p = &q->plan[f];
    tsf_ds_src src;
    tsf_reader *r = NULL;
    tsf_query *qq = NULL;
    tsf_status st = TSF_OK;
    if (e->fold && !(e->slots[f].acc = e->fold->init(e->fold->ctx)))
        return tsf_err(err, TSF_ENOMEM, "dataset fold: init returned NULL");
    dq_unit u = {q, p, e->fold, e->slots[f].acc};
    st = file_open(q, p, w, &src, &r, &qq, e->fold ? &u : NULL, carry, err);
    for (const tsf_batch *b; !st;) {
        st = tsf_query_next(qq, &b, err);
        if (st || !b) break;
        tsf_dataset_batch db;
        batch_of(q, p, b, &db);
        st = deliver(e, f, &db, qq, err);
    }
    tsf_rd_ds_name_file(st == TSF_ESTATE ? TSF_OK : st, q->ds->files[p->file].path, err);
    file_close(q, &src, r, qq, &e->slots[f].qs, carry);
    return st;
}

/* Merges finished accumulators in file order (holding mu). */
static void merge_front(dq_engine *e)
{
    const tsf_dataset_fold_callbacks *cb = e->fold;
    while (e->front < e->dq->nplan && e->slots[e->front].done) {
        dq_slot *s = &e->slots[e->front];
        if (!e->fold_st && s->st) {
            e->fold_st = s->st;
            e->fold_err = s->err;
        }
        if (!e->fold_st && cb->merge(cb->ctx, e->result, s->acc)) {
            e->fold_st = tsf_err(&e->fold_err, TSF_EIO, "dataset fold: the merge callback failed on %s",
                                 e->dq->ds->files[e->dq->plan[e->front].file].path);
        }
        if (s->acc) cb->free(cb->ctx, s->acc);
        s->acc = NULL;
        e->front++;
    }
}

static void *worker(void *arg)
{
    dq_engine *e = arg;
    dq_wrap w = {e, {0}, {0}};
    tsf_rd_spare carry = {0};
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->stop && e->next < e->limit && e->next >= e->front + e->window)
            pthread_cond_wait(&e->cv_work, &e->mu);
        if (e->stop || e->next >= e->limit) break;
        size_t f = e->next++;
        pthread_mutex_unlock(&e->mu);
        token_get(e);
        tsf_error err = {0};
        tsf_status st = run_file(e, f, e->use_tokens ? &w : NULL, &carry, &err);
        pthread_mutex_lock(&e->mu);
        token_put_locked(e);
        dq_slot *s = &e->slots[f];
        s->done = 1;
        s->st = st;
        s->err = err;
        if (st && f < e->limit) e->limit = f; /* the files before f were all taken and finish */
        if (e->fold) merge_front(e);
        pthread_cond_broadcast(&e->cv_front);
        pthread_cond_broadcast(&e->cv_work);
    }
    pthread_mutex_unlock(&e->mu);
    tsf_rd_query_spare_drop(&carry);
    return NULL;
}

static void engine_free(dq_engine *e)
{
    tsf_dataset_query *q = e->dq;
    pthread_mutex_lock(&e->mu);
    e->stop = 1;
    pthread_cond_broadcast(&e->cv_work);
    pthread_cond_broadcast(&e->cv_tok);
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < e->nth; i++) pthread_join(e->th[i], NULL);
    for (size_t f = 0; f < q->nplan; f++) {
        dq_slot *s = &e->slots[f];
        stats_add(&q->st.query, &s->qs);
        q->st.files_opened += s->done;
        for (dq_item *it = s->head, *nx; it; it = nx) nx = it->next, item_free(q->ds->a, it);
        if (s->acc) e->fold->free(e->fold->ctx, s->acc);
    }
    tsf_free(q->ds->a, e->slots, (q->nplan + 1) * sizeof *e->slots);
    pthread_cond_destroy(&e->cv_work);
    pthread_cond_destroy(&e->cv_front);
    pthread_cond_destroy(&e->cv_tok);
    pthread_mutex_destroy(&e->mu);
    tsf_free(q->ds->a, e, sizeof *e);
}

static tsf_status engine_start(tsf_dataset_query *q, const tsf_dataset_fold_callbacks *fold, void *result,
                               tsf_error *err)
{
    unsigned th = q->o.threads ? q->o.threads : 1, k = q->o.files_at_once ? q->o.files_at_once : th;
    if (k < th) k = th;
    dq_engine *e = tsf_calloc(q->ds->a, 1, sizeof *e);
    if (!e) return tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
    if (!(e->slots = tsf_calloc(q->ds->a, q->nplan + 1, sizeof *e->slots))) {
        tsf_free(q->ds->a, e, sizeof *e);
        return tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
    }
    e->dq = q;
    e->fold = fold;
    e->result = result;
    e->window = fold ? 2 * (size_t)k : k;
    e->limit = q->nplan;
    e->tokens = th;
    e->use_tokens = k > th;
    if (pthread_mutex_init(&e->mu, NULL) || pthread_cond_init(&e->cv_work, NULL) ||
        pthread_cond_init(&e->cv_front, NULL) || pthread_cond_init(&e->cv_tok, NULL)) {
        tsf_free(q->ds->a, e->slots, (q->nplan + 1) * sizeof *e->slots);
        tsf_free(q->ds->a, e, sizeof *e);
        return tsf_err(err, TSF_ENOMEM, "dataset query: cannot create a lock");
    }
    q->e = e;
    size_t want = k < DQ_MAX_WORKERS ? k : DQ_MAX_WORKERS;
    if (want > q->nplan) want = q->nplan;
    for (; e->nth < want; e->nth++)
        if (pthread_create(&e->th[e->nth], NULL, worker, e)) break;
    if (!e->nth && q->nplan) return tsf_err(err, TSF_ENOMEM, "dataset query: cannot start a thread");
    return TSF_OK;
}

/* ---- the query API ---- */

static tsf_status query_make(tsf_dataset *ds, const tsf_dataset_query_options *opts, tsf_dataset_query **out,
                             tsf_error *err)
{
    if (!ds || !out) return tsf_err(err, TSF_EINVAL, "dataset query: dataset and out are required");
    tsf_dataset_query *q = tsf_calloc(ds->a, 1, sizeof *q);
    if (!q) return tsf_err(err, TSF_ENOMEM, "dataset query: out of memory");
    q->ds = ds;
    tsf_dataset_query_options_init(&q->o);
    tsf_status st = TSF_OK;
    if (opts) {
        if (opts->struct_size != sizeof q->o)
            st = tsf_err(err, TSF_EINVAL, "tsf_dataset_query_options.struct_size %zu unknown",
                         opts->struct_size);
        else
            q->o = *opts;
    }
    if (!st && q->o.time_min > q->o.time_max)
        st = tsf_err(err, TSF_EINVAL, "dataset query: time_min %lld > time_max %lld",
                     (long long)q->o.time_min, (long long)q->o.time_max);
    if (!st && !q->o.batch_size) st = tsf_err(err, TSF_EINVAL, "dataset query: batch_size is 0");
    if (!st) st = plan_make(q, err);
    if (st) {
        plan_free(q);
        tsf_free(ds->a, q, sizeof *q);
        return st;
    }
    q->src.fd = -1;
    *out = q;
    return TSF_OK;
}

static int single_thread(const tsf_dataset_query_options *o)
{
    return o->threads <= 1 && o->files_at_once <= 1;
}

tsf_status tsf_dataset_query_open(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                                  tsf_dataset_query **out, tsf_error *err)
{
    tsf_status st = query_make(ds, opts, out, err);
    if (st || single_thread(&(*out)->o)) return st;
    st = engine_start(*out, NULL, NULL, err);
    if (st) {
        tsf_dataset_query_close(*out);
        *out = NULL;
    }
    return st;
}

static tsf_status next_single(tsf_dataset_query *q, const tsf_dataset_batch **out, tsf_error *err)
{
    while (q->cur < q->nplan) {
        const dq_plan *p = &q->plan[q->cur];
        tsf_status st = TSF_OK;
        if (!q->q) {
            q->st.files_opened++;
            st = file_open(q, p, NULL, &q->src, &q->r, &q->q, NULL, &q->carry, err);
        }
        const tsf_batch *b = NULL;
        if (!st) st = tsf_rd_ds_name_file(tsf_query_next(q->q, &b, err), q->ds->files[p->file].path, err);
        if (st || !b) {
            tsf_query_stats qs = {0};
            file_close(q, &q->src, q->r, q->q, &qs, &q->carry);
            stats_add(&q->st.query, &qs);
            q->r = NULL;
            q->q = NULL;
            q->cur++;
            if (st) return st;
            continue;
        }
        batch_of(q, p, b, &q->out);
        *out = &q->out;
        return TSF_OK;
    }
    *out = NULL;
    return TSF_OK;
}

tsf_status tsf_dataset_query_next(tsf_dataset_query *q, const tsf_dataset_batch **out, tsf_error *err)
{
    if (!q || !out) return tsf_err(err, TSF_EINVAL, "tsf_dataset_query_next: query and out are required");
    *out = NULL;
    dq_engine *e = q->e;
    if (!e) return next_single(q, out, err);
    item_free(q->ds->a, q->held);
    q->held = NULL;
    pthread_mutex_lock(&e->mu);
    tsf_status st = TSF_OK;
    while (e->front < q->nplan) {
        dq_slot *s = &e->slots[e->front];
        if (s->head) {
            q->held = s->head;
            if (!(s->head = s->head->next)) s->tail = NULL;
            s->n--;
            *out = &q->held->b;
            pthread_cond_broadcast(&e->cv_work);
            break;
        }
        if (s->done) {
            if (s->st) {
                st = s->st;
                if (err) *err = s->err;
                break;
            }
            e->front++;
            pthread_cond_broadcast(&e->cv_work);
            continue;
        }
        pthread_cond_wait(&e->cv_front, &e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return st;
}

void tsf_dataset_query_get_stats(const tsf_dataset_query *q, tsf_dataset_query_stats *out)
{
    if (!q || !out) return;
    *out = q->st;
    if (!q->e) return;
    dq_engine *e = q->e;
    pthread_mutex_lock(&e->mu);
    for (size_t f = 0; f < q->nplan; f++)
        if (e->slots[f].done) {
            out->files_opened++;
            stats_add(&out->query, &e->slots[f].qs);
        }
    pthread_mutex_unlock(&e->mu);
}

void tsf_dataset_query_close(tsf_dataset_query *q)
{
    if (!q) return;
    if (q->e) engine_free(q->e);
    item_free(q->ds->a, q->held);
    file_close(q, &q->src, q->r, q->q, NULL, &q->carry);
    tsf_rd_query_spare_drop(&q->carry);
    plan_free(q);
    tsf_free(q->ds->a, q, sizeof *q);
}

/* ---- folds ---- */

tsf_status tsf_dataset_fold(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                            const tsf_dataset_fold_callbacks *cb, void **result,
                            tsf_dataset_query_stats *stats, tsf_error *err)
{
    return tsf_rd_ds_fold(ds, opts, cb, NULL, result, stats, err);
}

tsf_status tsf_rd_ds_fold(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                          const tsf_dataset_fold_callbacks *cb, const tsf_rd_ds_fold_ext *ext, void **result,
                          tsf_dataset_query_stats *stats, tsf_error *err)
{
    if (!cb || !result || cb->struct_size != sizeof *cb || !cb->init || !cb->fold || !cb->merge || !cb->free)
        return tsf_err(err, TSF_EINVAL,
                       "tsf_dataset_fold: result and callbacks (init, fold, merge, free) required");
    *result = NULL;
    tsf_dataset_query *q = NULL;
    tsf_status st = query_make(ds, opts, &q, err);
    if (st) return st;
    q->ext = ext;
    void *res = cb->init(cb->ctx);
    if (!res) {
        tsf_dataset_query_close(q);
        return tsf_err(err, TSF_ENOMEM, "dataset fold: init returned NULL");
    }
    if (single_thread(&q->o)) {
        /* the same per-file accumulators and merge order as with workers */
        for (size_t f = 0; f < q->nplan && !st; f++) {
            void *acc = cb->init(cb->ctx);
            if (!acc) {
                st = tsf_err(err, TSF_ENOMEM, "dataset fold: init returned NULL");
                break;
            }
            tsf_ds_src src;
            tsf_reader *r = NULL;
            tsf_query *qq = NULL;
            q->st.files_opened++;
            dq_unit u = {q, &q->plan[f], cb, acc};
            st = file_open(q, &q->plan[f], NULL, &src, &r, &qq, &u, &q->carry, err);
            for (const tsf_batch *b; !st;) {
                st = tsf_rd_ds_name_file(tsf_query_next(qq, &b, err), ds->files[q->plan[f].file].path, err);
                if (st || !b) break;
                tsf_dataset_batch db;
                batch_of(q, &q->plan[f], b, &db);
                if (fold_one(q, cb, acc, &db, qq))
                    st = tsf_err(err, TSF_EIO, "dataset fold: the fold callback failed on %s",
                                 ds->files[db.file].path);
            }
            tsf_query_stats qs = {0};
            file_close(q, &src, r, qq, &qs, &q->carry);
            stats_add(&q->st.query, &qs);
            if (!st && cb->merge(cb->ctx, res, acc))
                st = tsf_err(err, TSF_EIO, "dataset fold: the merge callback failed on %s",
                             ds->files[q->plan[f].file].path);
            cb->free(cb->ctx, acc);
        }
    } else {
        st = engine_start(q, cb, res, err);
        if (!st) {
            dq_engine *e = q->e;
            pthread_mutex_lock(&e->mu);
            while (e->front < q->nplan && !e->fold_st) pthread_cond_wait(&e->cv_front, &e->mu);
            st = e->fold_st;
            if (st && err) *err = e->fold_err;
            pthread_mutex_unlock(&e->mu);
        }
    }
    if (stats) tsf_dataset_query_get_stats(q, stats);
    tsf_dataset_query_close(q);
    if (st) {
        cb->free(cb->ctx, res);
        return st;
    }
    *result = res;
    return TSF_OK;
}
