/*
 * parallel.c - the parallel scan behind tsf_query_options.threads.
 *
 * The query's time range is cut, per device, into consecutive tasks [tmin, b1-1], [b1, b2-1], ...,
 * [bn, tmax] at the start times of chunks and, in chunks larger than a task, of pages of the series that
 * drives the device (the time column; for a non-aligned device its first requested series), grouping
 * units until a task holds about PAR_TASK_VALUES values. threads - 1 worker threads and the caller each
 * take the next task and run it as an ordinary single-thread query (own buffers, decompressor and state)
 * into a slot of a ring of 2 x threads slots; the caller takes the slots in task order, so batches come out
 * in the same order as with one thread. The caller runs a task only when the slot it needs is not ready
 * (instead of sleeping), so `threads` threads decode and none waits while another drains the ring.
 *
 * No copies where it can be helped: a worker's query reads whole pages per batch (its batch size is a
 * multiple of the caller's, >= PAR_BIG_BATCH) and, after each batch, hands the decode buffers the batch
 * points into over to the slot (tsf_rd_query_detach), taking recycled ones from a pool; the caller borrows
 * them, slicing each page batch into batch_size pieces, until it moves on to the next slot, which returns
 * them to the pool. Batches that cannot be detached (TEXT/STRING/BLOB values borrowing page bytes, a
 * filter's compacted rows, a page larger than the big batch) are copied into the slot's arena as before.
 * Cuts at page starts fall where a batch ends anyway (batches never span pages), and slicing a page batch
 * into batch_size pieces gives the one-thread pieces, so aligned and single-column queries without a
 * filter give batches identical to one thread's; a non-aligned device with several columns (or a filter)
 * yields the same rows, possibly cut into batches differently.
 * Recycled buffers go back to the thread that filled them (par_bufs), so a thread decodes into lines its own
 * core wrote last. Tasks hold about 2^18 values: much smaller tasks cost each thread more per page when both
 * threads decode, larger ones gain nothing (bench/RESULTS.md, "Parallel scan").
 * The workers, the ring's slots, the recycled decode buffers and the constant buffers live in the reader
 * (tsf_rd_pool in tsf_reader.workers: created by the first threaded query, reused by the next ones, joined at
 * tsf_reader_close), so a query starts no thread and faults no page in once the reader is warm; a query
 * that finds the reader's pool busy (another thread's query holds it) makes a pool of its own, freed with
 * it. Each worker opens one query per parallel query (on the first task it takes) and points it at each
 * of its tasks in turn (tsf_rd_query_retarget), so a task costs no allocation. No process-global state.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"

/* Tuning knobs, overridable at compile time for experiments (doc/reader.md "Parallel scan") */
#ifndef PAR_TASK_VALUES
#define PAR_TASK_VALUES (1u << 18) /* values (rows x columns) a task aims at */
#endif
#ifndef PAR_SLOTS_PER_THREAD
#define PAR_SLOTS_PER_THREAD 2 /* ring slots per decoding thread */
#endif
#ifndef PAR_SPARE_BATCHES
#define PAR_SPARE_BATCHES 1 /* pool buffers a worker takes per lock, in batches' worth */
#endif
#define PAR_BIG_BATCH 16384 /* at least this many rows per worker batch (whole pages) */
#define PAR_MAX_THREADS 64

typedef struct par_task {
    size_t di; /* index into the query's device list */
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

/* A decoding thread's recycled decode buffers. A buffer goes back to the thread that filled it, so a thread
 * writes its pages into lines its own core touched last (not lines another core holds modified). */
typedef struct par_bufs {
    tsf_rd_buf pool; /* tsf_rd_buf[npool]: buffers the caller gave back (guarded by the pool's mutex) */
    size_t npool;
    tsf_rd_buf spare; /* tsf_rd_buf[nspare]: taken from pool for the next detaches (the owning thread's alone) */
    size_t nspare;
} par_bufs;

typedef struct par_slot {
    size_t task;
    int ready; /* filled for `task` (guarded by the pool's mutex) */
    tsf_status status;
    tsf_error err;
    tsf_rd_buf data; /* arena: times, values, validity, TEXT/STRING/BLOB bytes */
    size_t used;
    tsf_rd_buf batches, cols; /* pb_batch[nbatches], pb_col[ncols] */
    size_t nbatches, ncols;
    tsf_rd_buf held; /* tsf_rd_buf[nheld]: decode buffers detached from the task's query */
    size_t nheld;
    par_bufs *by; /* buffers of the thread that filled the slot: held ones go back there */
    tsf_query_stats st;
} par_slot;

typedef struct tsf_rd_pool tsf_rd_pool;

typedef struct par_worker {
    tsf_rd_pool *pl;
    size_t id;
    tsf_rd_par *job;  /* the parallel query this worker has joined (counted in its `active`), or NULL */
    tsf_query *q; /* its query for that job, opened on the first task it takes */
    par_bufs *bf; /* its recycled decode buffers (in the pool: they outlive the job) */
} par_worker;

/* Kept across queries (tsf_reader.workers): threads, slots, recycled buffers. Guarded by mu. */
struct tsf_rd_pool {
    tsf_reader *r;
    const tsf_allocator *a;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_ready, cv_left;
    pthread_t th[PAR_MAX_THREADS];
    par_worker w[PAR_MAX_THREADS];
    size_t nth;
    int stop;
    tsf_rd_par *job; /* the query being served, or NULL */
    par_slot *slots;
    size_t slots_cap;
    par_bufs bufs[PAR_MAX_THREADS + 1]; /* recycled decode buffers: worker i's at [i], the caller's last */
    tsf_rd_buf zeros, ones; /* stand-ins for the tasks' constant buffers (a batch outlives the task) */
};

struct tsf_rd_par {
    tsf_reader *r;
    const tsf_allocator *a;
    tsf_rd_pool *pl;
    int own_pool;        /* pl is this query's own (the reader's was busy) */
    tsf_query_options o; /* the query; o.devices/o.columns belong to the parent tsf_query */
    tsf_query_options wo; /* the workers' queries: no threads, whole-page batches */
    struct tsf_query_experimental wx; /* wo.experimental points here (the caller's is borrowed only during open) */
    size_t big;           /* worker batch size where slices give the one-thread batches */
    par_task *tasks;
    size_t ntasks, tasks_cap;
    /* guarded by pl->mu */
    size_t nw, nslots;    /* pool workers taking part (threads - 1: the caller is the other), ring slots */
    size_t next_task;     /* next task a worker takes */
    size_t cons;          /* task the caller consumes */
    size_t active;        /* workers that joined and have not left */
    int stop;
    /* caller side */
    par_worker self; /* the caller runs tasks too while the slot it waits for is not ready */
    par_slot *cur;
    size_t cur_batch, cur_row; /* batch of cur being handed out, and its first row not yet handed out */
    tsf_rd_buf vbits;              /* validity bitmaps of slices that start inside a byte */
    tsf_status failed;
    tsf_error failed_err;
    tsf_column_batch *cb;
    size_t cb_cap;
    tsf_batch out;
    tsf_query_stats st;
};

/* ---- planning ------------------------------------------------------------------------------ */

static tsf_status add_task(tsf_rd_par *p, size_t di, int64_t lo, int64_t hi, tsf_error *err)
{
    if (p->ntasks == p->tasks_cap) {
        size_t nc = p->tasks_cap ? p->tasks_cap * 2 : 64;
        par_task *t = tsf_realloc(p->a, p->tasks, p->tasks_cap * sizeof *t, nc * sizeof *t);
        if (!t) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        p->tasks = t;
        p->tasks_cap = nc;
    }
    p->tasks[p->ntasks++] = (par_task){di, lo, hi};
    return TSF_OK;
}

typedef struct cutter {
    tsf_rd_par *p;
    size_t di;
    int64_t last;         /* start of the open task */
    uint64_t acc, target; /* rows in the open task, rows per task */
} cutter;

/* A unit (chunk or page) of `count` rows starting at `start`: cut before it once the task is full. */
static tsf_status unit(cutter *c, int64_t start, uint64_t count, tsf_error *err)
{
    if (c->acc >= c->target && start > c->last && start <= c->p->o.time_max) {
        tsf_status st = add_task(c->p, c->di, c->last, start - 1, err);
        if (st) return st;
        c->last = start;
        c->acc = 0;
    }
    c->acc += count;
    return TSF_OK;
}

static const tsf_rd_series *driving_series(const tsf_reader *r, const tsf_rd_device *dev, const char *const *names,
                                       size_t nnames)
{
    if (dev->aligned) return &dev->time;
    if (!names) return dev->nseries ? &r->series[dev->series0] : NULL;
    for (size_t i = 0; i < nnames; i++)
        for (size_t k = 0; k < dev->nseries; k++)
            if (!strcmp(r->series[dev->series0 + k].name, names[i])) return &r->series[dev->series0 + k];
    return NULL;
}

/* Cuts device o.devices[di] into tasks. Damaged metadata only stops the cutting: the tasks' queries report
 * it. */
static tsf_status plan_device(tsf_rd_par *p, size_t di, tsf_error *err)
{
    tsf_reader *r = p->r;
    const tsf_rd_device *dev = &r->devices[p->o.devices[di]];
    const tsf_query_options *o = &p->o;
    size_t ncols = o->columns ? o->ncolumns : dev->nseries;
    const tsf_rd_series *drv = driving_series(r, dev, o->columns, o->ncolumns);
    tsf_status st = TSF_OK;
    tsf_rd_buf hb = {0};
    size_t pos = 0;
    uint64_t off, rows = 0;
    tsf_fmt_stats cs;
    tsf_error e;
    /* tasks of about PAR_TASK_VALUES values, but at least 4 per thread where the device has the rows */
    while (drv && tsf_mip_next_chunk_meta(&drv->tsm, &pos, &off, &cs, &e) == TSF_OK)
        if (cs.end_time >= o->time_min && cs.start_time <= o->time_max) rows += cs.count;
    pos = 0;
    cutter c = {p, di, o->time_min, 0, PAR_TASK_VALUES / (ncols + 1)};
    if (c.target > rows / (4 * (uint64_t)o->threads)) c.target = rows / (4 * (uint64_t)o->threads);
    if (c.target < o->batch_size) c.target = o->batch_size;
    while (drv && tsf_mip_next_chunk_meta(&drv->tsm, &pos, &off, &cs, &e) == TSF_OK) {
        if (cs.end_time < o->time_min || cs.start_time > o->time_max || cs.start_time > cs.end_time) continue;
        tsf_fmt_chunk_header ch;
        uint64_t dpos, dend, fetched = 0;
        int paged = 0;
        /* a page start is a clean cut: batches end there (aligned value pages pair with the time pages;
         * other columns of a non-aligned device are merged by time, whatever the cut) */
        if (cs.count > c.target &&
            tsf_rd_read_chunk_header(r, off, &hb, &ch, &dpos, &dend, &fetched, &e) == TSF_OK &&
            tsf_fmt_chunk_multi_page(ch.marker)) {
            paged = 1;
            while (dpos < dend) {
                tsf_fmt_page_header ph;
                if (tsf_rd_read_page_header(r, dpos, dend, &ch, &hb, &ph, &fetched, &e) || !ph.has_stats) break;
                if (ph.stats.end_time >= o->time_min && ph.stats.start_time <= o->time_max &&
                    (st = unit(&c, ph.stats.start_time, ph.stats.count, err)))
                    goto out;
                dpos += ph.header_len + ph.compressed_size;
            }
        }
        if (!paged && (st = unit(&c, cs.start_time, cs.count, err))) goto out;
    }
    st = add_task(p, di, c.last, o->time_max, err);
out:
    tsf_rd_buf_free(p->a, &hb);
    return st;
}

/* ---- workers ------------------------------------------------------------------------------- */

static size_t arena_put(tsf_rd_par *p, par_slot *s, const void *src, size_t n, size_t align, tsf_error *err)
{
    size_t off = (s->used + align - 1) & ~(align - 1);
    if (tsf_rd_buf_reserve(p->a, &s->data, off + n + 1, err)) return SIZE_MAX;
    if (n && src) memcpy(s->data.p + off, src, n);
    s->used = off + n;
    return off;
}

static int var_type(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* Copies batch b into the slot (TEXT/STRING/BLOB payloads too: stored as arena offset + 1, 0 = NULL). */
static tsf_status copy_batch(tsf_rd_par *p, par_slot *s, const tsf_batch *b, tsf_error *err)
{
    size_t n = b->nrows;
    tsf_status st;
    if ((st = tsf_rd_buf_reserve(p->a, &s->batches, (s->nbatches + 1) * sizeof(pb_batch), err))) return st;
    if ((st = tsf_rd_buf_reserve(p->a, &s->cols, (s->ncols + b->ncolumns) * sizeof(pb_col), err))) return st;
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
        size_t esz = tsf_rd_cell_size(cb->type);
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

/* Room for n more tsf_rd_bufs in the array buffer `arr` holding `have`. */
static tsf_status bufs_reserve(tsf_rd_par *p, tsf_rd_buf *arr, size_t have, size_t n, tsf_error *err)
{
    return tsf_rd_buf_reserve(p->a, arr, (have + n) * sizeof(tsf_rd_buf), err);
}

/* A pointer into a task query's constant buffer `qb` moved to the same offset in ours (`mine`). */
static const uint8_t *subst(const void *ptr, const tsf_rd_buf *qb, const tsf_rd_buf *mine)
{
    const uint8_t *x = ptr;
    if (qb->p && x >= qb->p && x < qb->p + qb->cap) return mine->p + (x - qb->p);
    return x;
}

/* Keeps batch b of the task's query q in slot s: detached without copying where possible, else copied. */
static tsf_status keep_batch(tsf_rd_par *p, par_slot *s, tsf_query *q, const tsf_batch *b, tsf_error *err)
{
    size_t need = 1 + 2 * b->ncolumns;
    tsf_status st;
    par_bufs *bf = s->by;
    if ((st = bufs_reserve(p, &s->held, s->nheld, need, err)) ||
        (st = bufs_reserve(p, &bf->spare, 0, PAR_SPARE_BATCHES * need, err)) ||
        (st = tsf_rd_buf_reserve(p->a, &s->batches, (s->nbatches + 1) * sizeof(pb_batch), err)) ||
        (st = tsf_rd_buf_reserve(p->a, &s->cols, (s->ncols + b->ncolumns) * sizeof(pb_col), err)))
        return st;
    if (bf->nspare < need) { /* top up the thread's spares from its pool, PAR_SPARE_BATCHES batches' worth */
        tsf_rd_pool *pl = p->pl;
        pthread_mutex_lock(&pl->mu);
        while (bf->nspare < PAR_SPARE_BATCHES * need && bf->npool)
            ((tsf_rd_buf *)bf->spare.p)[bf->nspare++] = ((tsf_rd_buf *)bf->pool.p)[--bf->npool];
        pthread_mutex_unlock(&pl->mu);
    }
    size_t n = tsf_rd_query_detach(q, b, (tsf_rd_buf *)bf->spare.p, &bf->nspare, (tsf_rd_buf *)s->held.p + s->nheld);
    if (n == SIZE_MAX) return copy_batch(p, s, b, err);
    s->nheld += n;
    tsf_rd_buf qz, qo;
    tsf_rd_query_consts(q, &qz, &qo);
    pb_batch *pb = (pb_batch *)s->batches.p + s->nbatches++;
    *pb = (pb_batch){b->device, b->nrows, b->ncolumns, s->ncols, b->times, 0};
    for (size_t k = 0; k < b->ncolumns; k++) {
        const tsf_column_batch *cb = &b->columns[k];
        pb_col *pc = (pb_col *)s->cols.p + s->ncols + k;
        pc->name = p->o.columns && k < p->o.ncolumns ? p->o.columns[k] : cb->name;
        pc->type = cb->type;
        pc->vp = subst(cb->values, &qz, &p->pl->zeros);
        pc->bp = subst(subst(cb->validity, &qz, &p->pl->zeros), &qo, &p->pl->ones);
        pc->voff = pc->boff = 0;
    }
    s->ncols += b->ncolumns;
    return TSF_OK;
}

/* Gives n buffers back to the pool of the thread that filled them (caller holds the mutex). */
static void pool_put(tsf_rd_pool *pl, par_bufs *bf, tsf_rd_buf *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (tsf_rd_buf_reserve(pl->a, &bf->pool, (bf->npool + 1) * sizeof(tsf_rd_buf), NULL)) {
            tsf_rd_buf_free(pl->a, &bufs[i]);
            continue;
        }
        ((tsf_rd_buf *)bf->pool.p)[bf->npool++] = bufs[i];
    }
}

/* Runs task t of p on worker w's query (opened on its first task) into slot s. */
static void run_task(par_worker *w, tsf_rd_par *p, par_slot *s, const par_task *t)
{
    s->used = s->nbatches = s->ncols = 0;
    s->by = w->bf;
    memset(&s->st, 0, sizeof s->st);
    tsf_status st = TSF_OK;
    if (!w->q) st = tsf_query_open(p->r, &p->wo, &w->q, &s->err);
    if (!st) {
        /* whole pages per batch (then sliced by the caller) where the slices are the one-thread batches */
        const tsf_rd_device *dev = &p->r->devices[p->o.devices[t->di]];
        size_t ncols = p->o.columns ? p->o.ncolumns : dev->nseries;
        size_t batch = !p->o.where && (dev->aligned || ncols == 1) ? p->big : p->o.batch_size;
        tsf_rd_query_retarget(w->q, t->di, t->tmin, t->tmax, batch);
        while (!st) {
            const tsf_batch *b;
            if ((st = tsf_query_next(w->q, &b, &s->err)) || !b) break;
            st = keep_batch(p, s, w->q, b, &s->err);
        }
        tsf_query_get_stats(w->q, &s->st);
    }
    s->status = st;
}

/* A task of p worker w may start now (pool mutex held). */
static int can_take(const tsf_rd_par *p, const par_worker *w)
{
    return p && !p->stop && w->id < p->nw && p->next_task < p->ntasks && p->next_task < p->cons + p->nslots;
}

static void *worker(void *arg)
{
    par_worker *w = arg;
    tsf_rd_pool *pl = w->pl;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        tsf_rd_par *j = w->job;
        if (j && (j->stop || j->next_task >= j->ntasks)) { /* nothing more for us: close our query, leave */
            tsf_query *q = w->q;
            w->q = NULL;
            w->job = NULL;
            pthread_mutex_unlock(&pl->mu);
            tsf_query_close(q);
            pthread_mutex_lock(&pl->mu);
            if (--j->active == 0) pthread_cond_broadcast(&pl->cv_left);
            continue;
        }
        if (pl->stop) break;
        tsf_rd_par *p = pl->job;
        if (!can_take(p, w)) {
            pthread_cond_wait(&pl->cv_work, &pl->mu);
            continue;
        }
        size_t t = p->next_task++;
        if (!j) {
            w->job = p;
            p->active++;
        }
        par_slot *s = &pl->slots[t % p->nslots];
        pthread_mutex_unlock(&pl->mu);
        run_task(w, p, s, &p->tasks[t]);
        pthread_mutex_lock(&pl->mu);
        s->task = t;
        s->ready = 1;
        pthread_cond_signal(&pl->cv_ready); /* only the query's caller waits there */
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* ---- the pool ------------------------------------------------------------------------------ */

static void slot_free(const tsf_allocator *a, par_slot *s)
{
    for (size_t j = 0; j < s->nheld; j++) tsf_rd_buf_free(a, (tsf_rd_buf *)s->held.p + j);
    tsf_rd_buf *bufs[] = {&s->held, &s->data, &s->batches, &s->cols};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tsf_rd_buf_free(a, bufs[i]);
}

/* Stops and joins the workers and frees the pool (no query may be using it). NULL is a no-op. */
static void pool_free(tsf_rd_pool *pl)
{
    if (!pl) return;
    pthread_mutex_lock(&pl->mu);
    pl->stop = 1;
    pthread_cond_broadcast(&pl->cv_work);
    pthread_mutex_unlock(&pl->mu);
    for (size_t i = 0; i < pl->nth; i++) pthread_join(pl->th[i], NULL);
    for (size_t i = 0; i < pl->slots_cap; i++) slot_free(pl->a, &pl->slots[i]);
    tsf_free(pl->a, pl->slots, pl->slots_cap * sizeof *pl->slots);
    for (size_t i = 0; i <= PAR_MAX_THREADS; i++) {
        par_bufs *bf = &pl->bufs[i];
        for (size_t j = 0; j < bf->npool; j++) tsf_rd_buf_free(pl->a, (tsf_rd_buf *)bf->pool.p + j);
        for (size_t j = 0; j < bf->nspare; j++) tsf_rd_buf_free(pl->a, (tsf_rd_buf *)bf->spare.p + j);
        tsf_rd_buf_free(pl->a, &bf->pool);
        tsf_rd_buf_free(pl->a, &bf->spare);
    }
    tsf_rd_buf_free(pl->a, &pl->zeros);
    tsf_rd_buf_free(pl->a, &pl->ones);
    pthread_cond_destroy(&pl->cv_work);
    pthread_cond_destroy(&pl->cv_ready);
    pthread_cond_destroy(&pl->cv_left);
    pthread_mutex_destroy(&pl->mu);
    tsf_free(pl->a, pl, sizeof *pl);
}

void tsf_rd_workers_free(tsf_reader *r)
{
    pool_free(r->workers);
    r->workers = NULL;
}

static tsf_rd_pool *pool_new(tsf_reader *r)
{
    tsf_rd_pool *pl = tsf_calloc(r->a, 1, sizeof *pl);
    if (!pl) return NULL;
    pl->r = r;
    pl->a = r->a;
    if (pthread_mutex_init(&pl->mu, NULL)) {
        tsf_free(pl->a, pl, sizeof *pl);
        return NULL;
    }
    pthread_cond_init(&pl->cv_work, NULL);
    pthread_cond_init(&pl->cv_ready, NULL);
    pthread_cond_init(&pl->cv_left, NULL);
    return pl;
}

/* Makes pl ready to serve p (no job running on it): threads, slots and constant buffers for p->big. */
static tsf_status pool_prepare(tsf_rd_pool *pl, tsf_rd_par *p, size_t want, tsf_error *err)
{
    tsf_status st;
    if ((st = tsf_rd_buf_reserve(pl->a, &pl->zeros, p->big * 16, err)) ||
        (st = tsf_rd_buf_reserve(pl->a, &pl->ones, p->big / 8 + 1, err)))
        return st;
    memset(pl->zeros.p, 0, pl->zeros.cap);
    memset(pl->ones.p, 0xff, pl->ones.cap);
    if (PAR_SLOTS_PER_THREAD * (want + 1) > pl->slots_cap) {
        size_t n = PAR_SLOTS_PER_THREAD * (want + 1);
        par_slot *ns = tsf_realloc(pl->a, pl->slots, pl->slots_cap * sizeof *ns, n * sizeof *ns);
        if (!ns) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        memset(ns + pl->slots_cap, 0, (n - pl->slots_cap) * sizeof *ns);
        pl->slots = ns;
        pl->slots_cap = n;
    }
    while (pl->nth < want) {
        par_worker *w = &pl->w[pl->nth];
        *w = (par_worker){pl, pl->nth, NULL, NULL, &pl->bufs[pl->nth]};
        if (pthread_create(&pl->th[pl->nth], NULL, worker, w)) break;
        pl->nth++;
    }
    if (!pl->nth) return tsf_err(err, TSF_ENOMEM, "parallel query: cannot start a thread");
    return TSF_OK;
}

/* ---- the caller's side ----------------------------------------------------------------------- */

static void tsf_rd_workers_release(tsf_reader *r);

tsf_status tsf_rd_par_open(tsf_reader *r, const tsf_query_options *o, tsf_rd_par **out, tsf_error *err)
{
    *out = NULL;
    tsf_rd_par *p = tsf_calloc(r->a, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
    p->r = r;
    p->a = r->a;
    p->o = *o;
    tsf_status st = TSF_OK;
    for (size_t i = 0; i < o->ndevices && !st; i++) st = plan_device(p, i, err);
    if (st) goto fail;
    p->big = o->batch_size > PAR_BIG_BATCH ? o->batch_size
                                           : ((PAR_BIG_BATCH - 1) / o->batch_size + 1) * o->batch_size;
    p->wo = *o;
    p->wo.threads = 0;
    if (o->experimental) {
        p->wx = *o->experimental;
        p->wo.experimental = &p->wx;
    }
    if (!o->where) p->wo.batch_size = p->big; /* a task's batch size is at most this (tsf_rd_query_retarget) */
    /* threads - 1 pool workers; the caller decodes too (below) */
    size_t want = (o->threads > PAR_MAX_THREADS ? PAR_MAX_THREADS : o->threads) - 1;
    if (want > p->ntasks) want = p->ntasks;
    if (!want) { /* nothing to read */
        *out = p;
        return TSF_OK;
    }
    /* the reader's pool unless another query holds it */
    pthread_mutex_lock(&r->lock);
    int mine = !r->workers_busy;
    if (mine) r->workers_busy = 1;
    pthread_mutex_unlock(&r->lock);
    if (mine && !r->workers) r->workers = pool_new(r);
    tsf_rd_pool *pl = mine ? r->workers : pool_new(r);
    if (!pl) {
        if (mine) tsf_rd_workers_release(r);
        st = tsf_err(err, TSF_ENOMEM, "parallel query: out of memory");
        goto fail;
    }
    p->pl = pl;
    p->own_pool = !mine;
    p->self.bf = &pl->bufs[PAR_MAX_THREADS];
    pthread_mutex_lock(&pl->mu);
    st = pool_prepare(pl, p, want, err);
    if (!st) {
        p->nw = pl->nth < want ? pl->nth : want;
        p->nslots = PAR_SLOTS_PER_THREAD * (p->nw + 1); /* tasks run up to nslots - 1 ahead of the one read */
        for (size_t i = 0; i < p->nslots; i++) pl->slots[i].ready = 0;
        pl->job = p;
        pthread_cond_broadcast(&pl->cv_work);
    }
    pthread_mutex_unlock(&pl->mu);
    if (st) goto fail;
    *out = p;
    return TSF_OK;
fail:
    tsf_rd_par_close(p);
    return st;
}

static void tsf_rd_workers_release(tsf_reader *r)
{
    pthread_mutex_lock(&r->lock);
    r->workers_busy = 0;
    pthread_mutex_unlock(&r->lock);
}

/* Hands the consumed slot back to the workers, its detached buffers to the pool. */
static void release(tsf_rd_par *p)
{
    par_slot *s = p->cur;
    tsf_rd_pool *pl = p->pl;
    const tsf_query_stats *a = &s->st;
    p->st.chunks_read += a->chunks_read, p->st.chunks_skipped += a->chunks_skipped;
    p->st.pages_read += a->pages_read, p->st.pages_skipped += a->pages_skipped;
    p->st.blocks_read += a->blocks_read, p->st.blocks_skipped += a->blocks_skipped;
    p->st.bytes_read += a->bytes_read, p->st.bytes_decompressed += a->bytes_decompressed;
    p->st.rows += a->rows;
    pthread_mutex_lock(&pl->mu);
    pool_put(pl, s->by, (tsf_rd_buf *)s->held.p, s->nheld);
    s->nheld = 0;
    s->ready = 0;
    p->cons++;
    pthread_cond_broadcast(&pl->cv_work);
    pthread_mutex_unlock(&pl->mu);
    p->cur = NULL;
}

tsf_status tsf_rd_par_next(tsf_rd_par *p, const tsf_batch **out, tsf_error *err)
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
        tsf_rd_pool *pl = p->pl;
        par_slot *s = &pl->slots[p->cons % p->nslots];
        pthread_mutex_lock(&pl->mu);
        while (!(s->ready && s->task == p->cons)) {
            if (p->next_task < p->ntasks && p->next_task < p->cons + p->nslots) {
                /* rather than wait, run the next task here (often the very one awaited) */
                size_t t = p->next_task++;
                par_slot *ts = &pl->slots[t % p->nslots];
                pthread_mutex_unlock(&pl->mu);
                run_task(&p->self, p, ts, &p->tasks[t]);
                pthread_mutex_lock(&pl->mu);
                ts->task = t;
                ts->ready = 1;
                continue;
            }
            pthread_cond_wait(&pl->cv_ready, &pl->mu);
        }
        pthread_mutex_unlock(&pl->mu);
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
    if ((r0 & 7) && tsf_rd_buf_reserve(p->a, &p->vbits, pb->ncols * vb, err)) return TSF_ENOMEM;
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
        p->cb[k] = (tsf_column_batch){pc->name, pc->type, v + r0 * tsf_rd_cell_size(pc->type), b};
    }
    const int64_t *t = pb->tp ? pb->tp : (const int64_t *)(base + pb->toff);
    p->out = (tsf_batch){pb->device, m, t + r0, pb->ncols, p->cb};
    p->cur_row += m;
    if (p->cur_row >= pb->nrows) p->cur_batch++, p->cur_row = 0;
    *out = &p->out;
    return TSF_OK;
}

void tsf_rd_par_stats(const tsf_rd_par *p, tsf_query_stats *out)
{
    *out = p->st;
}

void tsf_rd_par_close(tsf_rd_par *p)
{
    if (!p) return;
    tsf_rd_pool *pl = p->pl;
    if (pl) {
        /* stop the job, wait until every worker that joined it has closed its query and left */
        pthread_mutex_lock(&pl->mu);
        p->stop = 1;
        pthread_cond_broadcast(&pl->cv_work);
        while (p->active) pthread_cond_wait(&pl->cv_left, &pl->mu);
        for (size_t i = 0; i < p->nslots; i++) { /* tasks done but not consumed */
            par_slot *s = &pl->slots[i];
            if (s->nheld) pool_put(pl, s->by, (tsf_rd_buf *)s->held.p, s->nheld);
            s->nheld = 0;
            s->ready = 0;
        }
        if (pl->job == p) pl->job = NULL;
        pthread_mutex_unlock(&pl->mu);
        if (p->own_pool) pool_free(pl);
        else tsf_rd_workers_release(p->r);
    }
    tsf_query_close(p->self.q);
    tsf_rd_buf_free(p->a, &p->vbits);
    tsf_free(p->a, p->tasks, p->tasks_cap * sizeof *p->tasks);
    tsf_free(p->a, p->cb, p->cb_cap * sizeof *p->cb);
    tsf_free(p->a, p, sizeof *p);
}
