/*
 * parallel.c - the parallel scan behind tsf_query_options.threads (issue "Reader and queries" item 5).
 *
 * The query's time range is cut, per device, into consecutive tasks [tmin, b1-1], [b1, b2-1], ...,
 * [bn, tmax] at the start times of chunks and, in chunks larger than a task, of pages of the series that
 * drives the device (the time column; for a non-aligned device its first requested series), grouping
 * units until a task holds about PAR_TASK_VALUES values. Worker threads each take the next task and run
 * it as an ordinary single-thread query (own buffers, decompressor and state) into a slot of a ring of
 * threads + 1 slots; the caller takes the slots in task order, so batches come out in the same order as
 * with one thread.
 *
 * No copies where it can be helped: a worker's query reads whole pages per batch (its batch size is a
 * multiple of the caller's, >= PAR_BIG_BATCH) and, after each batch, hands the decode buffers the batch
 * points into over to the slot (rd_query_detach), taking recycled ones from a pool; the caller borrows
 * them, slicing each page batch into batch_size pieces, until it moves on to the next slot, which returns
 * them to the pool. Batches that cannot be detached (TEXT/STRING/BLOB values borrowing page bytes, a
 * filter's compacted rows, a page larger than the big batch) are copied into the slot's arena as before.
 * Cuts at page starts fall where a batch ends anyway (batches never span pages), and slicing a page batch
 * into batch_size pieces gives the one-thread pieces, so aligned and single-column queries without a
 * filter give batches identical to one thread's; a non-aligned device with several columns (or a filter)
 * yields the same rows, possibly cut into batches differently.
 * No global state: the workers live and die with the query.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"

#define PAR_TASK_VALUES (1u << 19) /* values (rows x columns) a task aims at */
#define PAR_BIG_BATCH 16384        /* at least this many rows per worker batch (whole pages) */
#define PAR_SPARE_BATCHES 4        /* pool buffers a worker takes per lock, in batches' worth */

typedef struct par_task {
    size_t device;
    int64_t tmin, tmax;
} par_task;

typedef struct pb_col { /* a column of a kept batch: detached data (vp/bp) or offsets into the slot's arena */
    const char *name;
    tsf_type type;
    const uint8_t *vp, *bp; /* NULL: copied, at voff/boff */
    size_t voff, boff;
} pb_col;

typedef struct pb_batch {
    size_t device, nrows, ncols, col0;
    const int64_t *tp; /* NULL: copied, at toff */
    size_t toff;
} pb_batch;

typedef struct par_slot {
    size_t task;
    int ready; /* filled for `task` (guarded by the mutex) */
    tsf_status status;
    tsf_error err;
    rd_buf data; /* arena: times, values, validity, TEXT/STRING/BLOB bytes */
    size_t used;
    rd_buf batches, cols; /* pb_batch[nbatches], pb_col[ncols] */
    size_t nbatches, ncols;
    rd_buf held; /* rd_buf[nheld]: decode buffers detached from the task's query */
    size_t nheld;
    rd_buf spare; /* rd_buf[nspare]: pool buffers the worker holds for the next detach */
    size_t nspare;
    tsf_query_stats st;
} par_slot;

struct rd_par {
    tsf_reader *r;
    const tsf_allocator *a;
    tsf_query_options o; /* sub-query template */
    par_task *tasks;
    size_t ntasks, tasks_cap;
    par_slot *slots;
    size_t nslots;
    pthread_t *th;
    size_t nth, th_cap;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_ready;
    size_t next_task; /* next task a worker takes */
    size_t cons;      /* task the caller consumes */
    int stop;
    rd_buf pool; /* rd_buf[npool]: recycled decode buffers (guarded by the mutex) */
    size_t npool;
    rd_buf zeros, ones; /* stand-ins for the tasks' constant buffers (they close before the caller reads) */
    /* caller side */
    par_slot *cur;
    size_t cur_batch, cur_row; /* batch of cur being handed out, and its first row not yet handed out */
    rd_buf vbits;              /* validity bitmaps of slices that start inside a byte */
    tsf_status failed;
    tsf_error failed_err;
    tsf_column_batch *cb;
    size_t cb_cap;
    tsf_batch out;
    tsf_query_stats st;
};

/* ---- planning ------------------------------------------------------------------------------ */

static tsf_status add_task(rd_par *p, size_t d, int64_t lo, int64_t hi, tsf_error *err)
{
    if (p->ntasks == p->tasks_cap) {
        size_t nc = p->tasks_cap ? p->tasks_cap * 2 : 64;
        par_task *t = tsf_realloc(p->a, p->tasks, p->tasks_cap * sizeof *t, nc * sizeof *t);
        if (!t) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        p->tasks = t;
        p->tasks_cap = nc;
    }
    p->tasks[p->ntasks++] = (par_task){d, lo, hi};
    return TSF_OK;
}

typedef struct cutter {
    rd_par *p;
    size_t device;
    int64_t last;         /* start of the open task */
    uint64_t acc, target; /* rows in the open task, rows per task */
} cutter;

/* A unit (chunk or page) of `count` rows starting at `start`: cut before it once the task is full. */
static tsf_status unit(cutter *c, int64_t start, uint64_t count, tsf_error *err)
{
    if (c->acc >= c->target && start > c->last && start <= c->p->o.time_max) {
        tsf_status st = add_task(c->p, c->device, c->last, start - 1, err);
        if (st) return st;
        c->last = start;
        c->acc = 0;
    }
    c->acc += count;
    return TSF_OK;
}

static const rd_series *driving_series(const tsf_reader *r, const rd_device *dev, const char *const *names,
                                       size_t nnames)
{
    if (dev->aligned) return &dev->time;
    if (!names) return dev->nseries ? &r->series[dev->series0] : NULL;
    for (size_t i = 0; i < nnames; i++)
        for (size_t k = 0; k < dev->nseries; k++)
            if (!strcmp(r->series[dev->series0 + k].name, names[i])) return &r->series[dev->series0 + k];
    return NULL;
}

/* Cuts device d into tasks. Damaged metadata only stops the cutting: the tasks' queries report it. */
static tsf_status plan_device(rd_par *p, size_t d, tsf_error *err)
{
    tsf_reader *r = p->r;
    const rd_device *dev = &r->devices[d];
    const tsf_query_options *o = &p->o;
    size_t ncols = o->columns ? o->ncolumns : dev->nseries;
    const rd_series *drv = driving_series(r, dev, o->columns, o->ncolumns);
    tsf_status st = TSF_OK;
    rd_buf hb = {0};
    size_t pos = 0;
    uint64_t off, rows = 0;
    tsf_fmt_stats cs;
    tsf_error e;
    /* tasks of about PAR_TASK_VALUES values, but at least 4 per thread where the device has the rows */
    while (drv && tsf_ixp_next_chunk_meta(&drv->tsm, &pos, &off, &cs, &e) == TSF_OK)
        if (cs.end_time >= o->time_min && cs.start_time <= o->time_max) rows += cs.count;
    pos = 0;
    cutter c = {p, d, o->time_min, 0, PAR_TASK_VALUES / (ncols + 1)};
    if (c.target > rows / (4 * (uint64_t)o->threads)) c.target = rows / (4 * (uint64_t)o->threads);
    if (c.target < o->batch_size) c.target = o->batch_size;
    while (drv && tsf_ixp_next_chunk_meta(&drv->tsm, &pos, &off, &cs, &e) == TSF_OK) {
        if (cs.end_time < o->time_min || cs.start_time > o->time_max || cs.start_time > cs.end_time) continue;
        tsf_fmt_chunk_header ch;
        uint64_t dpos, dend, fetched = 0;
        int paged = 0;
        /* a page start is a clean cut: batches end there (aligned value pages pair with the time pages;
         * other columns of a non-aligned device are merged by time, whatever the cut) */
        if (cs.count > c.target &&
            rd_read_chunk_header(r, off, &hb, &ch, &dpos, &dend, &fetched, &e) == TSF_OK &&
            tsf_fmt_chunk_multi_page(ch.marker)) {
            paged = 1;
            while (dpos < dend) {
                tsf_fmt_page_header ph;
                if (rd_read_page_header(r, dpos, dend, &ch, &hb, &ph, &fetched, &e) || !ph.has_stats) break;
                if (ph.stats.end_time >= o->time_min && ph.stats.start_time <= o->time_max &&
                    (st = unit(&c, ph.stats.start_time, ph.stats.count, err)))
                    goto out;
                dpos += ph.header_len + ph.compressed_size;
            }
        }
        if (!paged && (st = unit(&c, cs.start_time, cs.count, err))) goto out;
    }
    st = add_task(p, d, c.last, o->time_max, err);
out:
    rd_buf_free(p->a, &hb);
    return st;
}

/* ---- workers ------------------------------------------------------------------------------- */

static size_t arena_put(rd_par *p, par_slot *s, const void *src, size_t n, size_t align, tsf_error *err)
{
    size_t off = (s->used + align - 1) & ~(align - 1);
    if (rd_buf_reserve(p->a, &s->data, off + n + 1, err)) return SIZE_MAX;
    if (n && src) memcpy(s->data.p + off, src, n);
    s->used = off + n;
    return off;
}

static int var_type(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* Copies batch b into the slot (TEXT/STRING/BLOB payloads too: stored as arena offset + 1, 0 = NULL). */
static tsf_status copy_batch(rd_par *p, par_slot *s, const tsf_batch *b, tsf_error *err)
{
    size_t n = b->nrows;
    tsf_status st;
    if ((st = rd_buf_reserve(p->a, &s->batches, (s->nbatches + 1) * sizeof(pb_batch), err))) return st;
    if ((st = rd_buf_reserve(p->a, &s->cols, (s->ncols + b->ncolumns) * sizeof(pb_col), err))) return st;
    pb_batch *pb = (pb_batch *)s->batches.p + s->nbatches;
    pb->device = b->device;
    pb->nrows = n;
    pb->ncols = b->ncolumns;
    pb->col0 = s->ncols;
    pb->tp = NULL;
    if ((pb->toff = arena_put(p, s, b->times, n * sizeof(int64_t), 64, err)) == SIZE_MAX) return TSF_ENOMEM;
    for (size_t k = 0; k < b->ncolumns; k++) {
        const tsf_column_batch *cb = &b->columns[k];
        pb_col *pc = (pb_col *)s->cols.p + s->ncols + k;
        /* the task's query owns its copies of the requested names: point at the parent query's */
        pc->name = p->o.columns && k < p->o.ncolumns ? p->o.columns[k] : cb->name;
        pc->type = cb->type;
        pc->vp = pc->bp = NULL;
        size_t esz = rd_value_size(cb->type);
        if ((pc->boff = arena_put(p, s, cb->validity, (n + 7) / 8, 64, err)) == SIZE_MAX) return TSF_ENOMEM;
        if ((pc->voff = arena_put(p, s, cb->values, n * esz, 64, err)) == SIZE_MAX) return TSF_ENOMEM;
        if (!var_type(cb->type)) continue;
        const tsf_bytes *src = cb->values;
        for (size_t i = 0; i < n; i++) {
            size_t at = 0;
            if (src[i].data) {
                if ((at = arena_put(p, s, src[i].data, src[i].len, 1, err)) == SIZE_MAX) return TSF_ENOMEM;
                at++;
            }
            tsf_bytes *dst = (tsf_bytes *)(s->data.p + pc->voff) + i;
            dst->data = (const uint8_t *)(uintptr_t)at;
        }
    }
    s->ncols += b->ncolumns;
    s->nbatches++;
    return TSF_OK;
}

/* Room for n more rd_bufs in the array buffer `arr` holding `have`. */
static tsf_status bufs_reserve(rd_par *p, rd_buf *arr, size_t have, size_t n, tsf_error *err)
{
    return rd_buf_reserve(p->a, arr, (have + n) * sizeof(rd_buf), err);
}

/* A pointer into a task query's constant buffer `qb` moved to the same offset in ours (`mine`). */
static const uint8_t *subst(const void *ptr, const rd_buf *qb, const rd_buf *mine)
{
    const uint8_t *x = ptr;
    if (qb->p && x >= qb->p && x < qb->p + qb->cap) return mine->p + (x - qb->p);
    return x;
}

/* Keeps batch b of the task's query q in slot s: detached without copying where possible, else copied. */
static tsf_status keep_batch(rd_par *p, par_slot *s, tsf_query *q, const tsf_batch *b, tsf_error *err)
{
    size_t need = 1 + 2 * b->ncolumns;
    tsf_status st;
    if ((st = bufs_reserve(p, &s->held, s->nheld, need, err)) ||
        (st = bufs_reserve(p, &s->spare, 0, PAR_SPARE_BATCHES * need, err)) ||
        (st = rd_buf_reserve(p->a, &s->batches, (s->nbatches + 1) * sizeof(pb_batch), err)) ||
        (st = rd_buf_reserve(p->a, &s->cols, (s->ncols + b->ncolumns) * sizeof(pb_col), err)))
        return st;
    if (s->nspare < need) { /* top up the worker's spares from the pool, several batches' worth per lock */
        pthread_mutex_lock(&p->mu);
        while (s->nspare < PAR_SPARE_BATCHES * need && p->npool)
            ((rd_buf *)s->spare.p)[s->nspare++] = ((rd_buf *)p->pool.p)[--p->npool];
        pthread_mutex_unlock(&p->mu);
    }
    size_t n = rd_query_detach(q, b, (rd_buf *)s->spare.p, &s->nspare, (rd_buf *)s->held.p + s->nheld);
    if (n == SIZE_MAX) return copy_batch(p, s, b, err);
    s->nheld += n;
    rd_buf qz, qo;
    rd_query_consts(q, &qz, &qo);
    pb_batch *pb = (pb_batch *)s->batches.p + s->nbatches++;
    *pb = (pb_batch){b->device, b->nrows, b->ncolumns, s->ncols, b->times, 0};
    for (size_t k = 0; k < b->ncolumns; k++) {
        const tsf_column_batch *cb = &b->columns[k];
        pb_col *pc = (pb_col *)s->cols.p + s->ncols + k;
        pc->name = p->o.columns && k < p->o.ncolumns ? p->o.columns[k] : cb->name;
        pc->type = cb->type;
        pc->vp = subst(cb->values, &qz, &p->zeros);
        pc->bp = subst(subst(cb->validity, &qz, &p->zeros), &qo, &p->ones);
        pc->voff = pc->boff = 0;
    }
    s->ncols += b->ncolumns;
    return TSF_OK;
}

/* Gives n buffers back to the pool (caller holds the mutex). */
static void pool_put(rd_par *p, rd_buf *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (bufs_reserve(p, &p->pool, p->npool, 1, NULL)) {
            rd_buf_free(p->a, &bufs[i]);
            continue;
        }
        ((rd_buf *)p->pool.p)[p->npool++] = bufs[i];
    }
}

static void run_task(rd_par *p, par_slot *s, const par_task *t)
{
    s->used = s->nbatches = s->ncols = 0;
    memset(&s->st, 0, sizeof s->st);
    tsf_query_options o = p->o;
    o.table = NULL;
    o.devices = &t->device;
    o.ndevices = 1;
    o.time_min = t->tmin;
    o.time_max = t->tmax;
    o.threads = 0;
    /* whole pages per batch (then sliced by the caller) where the slices are the one-thread batches */
    const rd_device *dev = &p->r->devices[t->device];
    size_t ncols = o.columns ? o.ncolumns : dev->nseries;
    if (!o.where && (dev->aligned || ncols == 1))
        o.batch_size = ((PAR_BIG_BATCH - 1) / o.batch_size + 1) * o.batch_size;
    tsf_query *q = NULL;
    tsf_status st = tsf_query_open(p->r, &o, &q, &s->err);
    while (!st) {
        const tsf_batch *b;
        if ((st = tsf_query_next(q, &b, &s->err)) || !b) break;
        st = keep_batch(p, s, q, b, &s->err);
    }
    if (q) tsf_query_get_stats(q, &s->st);
    tsf_query_close(q);
    s->status = st;
}

static void *worker(void *arg)
{
    rd_par *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next_task < p->ntasks && p->next_task >= p->cons + p->nslots)
            pthread_cond_wait(&p->cv_work, &p->mu);
        if (p->stop || p->next_task >= p->ntasks) break;
        size_t t = p->next_task++;
        par_slot *s = &p->slots[t % p->nslots];
        pthread_mutex_unlock(&p->mu);
        run_task(p, s, &p->tasks[t]);
        pthread_mutex_lock(&p->mu);
        s->task = t;
        s->ready = 1;
        pthread_cond_broadcast(&p->cv_ready);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- the caller's side ----------------------------------------------------------------------- */

tsf_status rd_par_open(tsf_reader *r, const tsf_query_options *o, rd_par **out, tsf_error *err)
{
    *out = NULL;
    rd_par *p = tsf_calloc(r->a, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
    p->r = r;
    p->a = r->a;
    p->o = *o;
    tsf_status st = TSF_OK;
    if (pthread_mutex_init(&p->mu, NULL)) {
        tsf_free(p->a, p, sizeof *p);
        return tsf_err(err, TSF_ENOMEM, "parallel query: cannot create a mutex");
    }
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_ready, NULL);
    for (size_t i = 0; i < o->ndevices && !st; i++) st = plan_device(p, o->devices[i], err);
    if (st) goto fail;
    size_t big = o->batch_size > PAR_BIG_BATCH ? o->batch_size
                                               : ((PAR_BIG_BATCH - 1) / o->batch_size + 1) * o->batch_size;
    if ((st = rd_buf_reserve(p->a, &p->zeros, big * 16, err)) ||
        (st = rd_buf_reserve(p->a, &p->ones, big / 8 + 1, err)))
        goto fail;
    memset(p->zeros.p, 0, p->zeros.cap);
    memset(p->ones.p, 0xff, p->ones.cap);
    p->nth = o->threads > 64 ? 64 : o->threads;
    if (p->nth > p->ntasks) p->nth = p->ntasks;
    p->nslots = p->nth + 1;
    p->slots = tsf_calloc(p->a, p->nslots, sizeof *p->slots);
    p->th_cap = p->nth ? p->nth : 1;
    p->th = tsf_calloc(p->a, p->th_cap, sizeof *p->th);
    if (!p->slots || !p->th) {
        st = tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        goto fail;
    }
    size_t want = p->nth;
    p->nth = 0;
    while (p->nth < want && pthread_create(&p->th[p->nth], NULL, worker, p) == 0) p->nth++;
    if (want && !p->nth) {
        st = tsf_err(err, TSF_ENOMEM, "parallel query: cannot start a thread");
        goto fail;
    }
    *out = p;
    return TSF_OK;
fail:
    rd_par_close(p);
    return st;
}

/* Hands the consumed slot back to the workers, its detached buffers to the pool. */
static void release(rd_par *p)
{
    par_slot *s = p->cur;
    const tsf_query_stats *a = &s->st;
    p->st.chunks_read += a->chunks_read, p->st.chunks_skipped += a->chunks_skipped;
    p->st.pages_read += a->pages_read, p->st.pages_skipped += a->pages_skipped;
    p->st.blocks_read += a->blocks_read, p->st.blocks_skipped += a->blocks_skipped;
    p->st.bytes_read += a->bytes_read, p->st.bytes_decompressed += a->bytes_decompressed;
    p->st.rows += a->rows;
    pthread_mutex_lock(&p->mu);
    pool_put(p, (rd_buf *)s->held.p, s->nheld);
    s->nheld = 0;
    s->ready = 0;
    p->cons++;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    p->cur = NULL;
}

tsf_status rd_par_next(rd_par *p, const tsf_batch **out, tsf_error *err)
{
    *out = NULL;
    if (p->failed) {
        if (err) *err = p->failed_err;
        return p->failed;
    }
    for (;;) {
        if (p->cur && p->cur_batch < p->cur->nbatches) break;
        if (p->cur) release(p);
        if (p->cons >= p->ntasks) return TSF_OK;
        par_slot *s = &p->slots[p->cons % p->nslots];
        pthread_mutex_lock(&p->mu);
        while (!(s->ready && s->task == p->cons)) pthread_cond_wait(&p->cv_ready, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (s->status) {
            p->failed = s->status;
            p->failed_err = s->err;
            if (err) *err = s->err;
            return s->status;
        }
        p->cur = s;
        p->cur_batch = p->cur_row = 0;
        /* copied TEXT/STRING/BLOB cells: arena offset + 1 back to pointers, once per slot */
        uint8_t *base = s->data.p;
        for (size_t j = 0; j < s->nbatches; j++) {
            const pb_batch *pb = (const pb_batch *)s->batches.p + j;
            for (size_t k = 0; k < pb->ncols; k++) {
                const pb_col *pc = (const pb_col *)s->cols.p + pb->col0 + k;
                if (pc->vp || !var_type(pc->type)) continue;
                tsf_bytes *v = (tsf_bytes *)(base + pc->voff);
                for (size_t i = 0; i < pb->nrows; i++) {
                    uintptr_t at = (uintptr_t)v[i].data;
                    v[i].data = at ? base + (at - 1) : NULL;
                }
            }
        }
    }
    par_slot *s = p->cur;
    const pb_batch *pb = (const pb_batch *)s->batches.p + p->cur_batch;
    size_t r0 = p->cur_row, m = pb->nrows - r0;
    if (m > p->o.batch_size) m = p->o.batch_size;
    if (pb->ncols > p->cb_cap) {
        tsf_column_batch *cb = tsf_realloc(p->a, p->cb, p->cb_cap * sizeof *cb, pb->ncols * sizeof *cb);
        if (!cb) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        p->cb = cb;
        p->cb_cap = pb->ncols;
    }
    size_t vb = m / 8 + 1; /* bytes of one re-aligned validity bitmap */
    if ((r0 & 7) && rd_buf_reserve(p->a, &p->vbits, pb->ncols * vb, err)) return TSF_ENOMEM;
    uint8_t *base = s->data.p;
    for (size_t k = 0; k < pb->ncols; k++) {
        const pb_col *pc = (const pb_col *)s->cols.p + pb->col0 + k;
        const uint8_t *v = pc->vp ? pc->vp : base + pc->voff, *b = pc->bp ? pc->bp : base + pc->boff;
        if (r0 & 7) { /* a slice starting inside a byte: shift its bits down */
            uint8_t *d = p->vbits.p + k * vb;
            memset(d, 0, vb);
            for (size_t i = 0; i < m; i++)
                d[i >> 3] |= (uint8_t)(((b[(r0 + i) >> 3] >> ((r0 + i) & 7)) & 1) << (i & 7));
            b = d;
        } else {
            b += r0 >> 3;
        }
        p->cb[k] = (tsf_column_batch){pc->name, pc->type, v + r0 * rd_value_size(pc->type), b};
    }
    const int64_t *t = pb->tp ? pb->tp : (const int64_t *)(base + pb->toff);
    p->out = (tsf_batch){pb->device, m, t + r0, pb->ncols, p->cb};
    p->cur_row += m;
    if (p->cur_row >= pb->nrows) p->cur_batch++, p->cur_row = 0;
    *out = &p->out;
    return TSF_OK;
}

void rd_par_stats(const rd_par *p, tsf_query_stats *out)
{
    *out = p->st;
}

void rd_par_close(rd_par *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
    for (size_t i = 0; p->slots && i < p->nslots; i++) {
        par_slot *s = &p->slots[i];
        for (size_t j = 0; j < s->nheld; j++) rd_buf_free(p->a, (rd_buf *)s->held.p + j);
        for (size_t j = 0; j < s->nspare; j++) rd_buf_free(p->a, (rd_buf *)s->spare.p + j);
        rd_buf_free(p->a, &s->held);
        rd_buf_free(p->a, &s->spare);
        rd_buf_free(p->a, &p->slots[i].data);
        rd_buf_free(p->a, &p->slots[i].batches);
        rd_buf_free(p->a, &p->slots[i].cols);
    }
    for (size_t j = 0; j < p->npool; j++) rd_buf_free(p->a, (rd_buf *)p->pool.p + j);
    rd_buf_free(p->a, &p->pool);
    rd_buf_free(p->a, &p->zeros);
    rd_buf_free(p->a, &p->ones);
    rd_buf_free(p->a, &p->vbits);
    tsf_free(p->a, p->slots, p->nslots * sizeof *p->slots);
    tsf_free(p->a, p->th, p->th_cap * sizeof *p->th);
    tsf_free(p->a, p->tasks, p->tasks_cap * sizeof *p->tasks);
    tsf_free(p->a, p->cb, p->cb_cap * sizeof *p->cb);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_ready);
    pthread_mutex_destroy(&p->mu);
    tsf_free(p->a, p, sizeof *p);
}
