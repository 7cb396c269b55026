/*
 * workers.c - the writer's worker pool (tsf_writer_options.threads > 1), started at open and stopped at close:
 * batches of column jobs shared by the calling thread and the workers, the pipes that let a tablet's last jobs
 * run on after the write call returns, and the output thread that writes the last flush's chunk groups while
 * the next tablets are encoded (design in workers.h). The bytes never depend on the thread count.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workers.h"

static wcol *job_col(const wjobs *j, size_t i)
{
    if (j->seal == 1) return !j->d->aligned ? &j->d->cols[i] : i == 0 ? &j->d->tcol : &j->d->cols[i - 1];
    return &j->d->cols[j->t->cols[i].idx];
}

static tsf_status job_run(wjobs *j, wctx *x, size_t i, tsf_error *err)
{
    tsf_writer *w = j->w;
    if (j->seal == 2) {
        size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < j->d->ncols ? lo + JOB_COLS : j->d->ncols;
        return tsf_wt_aligned_cols(w, x, j->t, j->d, j->feed, lo, hi, j->r, j->k, err);
    }
    if (j->seal) return tsf_wcol_seal_x(w, x, job_col(j, i), j->d->aligned ? j->d->rows : 0, err);
    size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < j->t->ncols ? lo + JOB_COLS : j->t->ncols;
    return tsf_wt_append_cols(w, x, j->t, j->d, lo, hi, j->g, 1, err);
}

static void *worker_main(void *arg)
{
    wworker *k = arg;
    wjobs *j = k->j;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n || atomic_load(&j->stop)) break;
        if (j->seal == 1 && job_col(j, i)->autoc) continue;
        tsf_status s = job_run(j, k->x, i, &k->err);
        if (s) {
            k->s = s;
            k->bad = i;
            atomic_store(&j->stop, 1);
            break;
        }
    }
    return NULL;
}

/* Claims the next job of a pipe, from the front (the caller) or the back (workers); SIZE_MAX: none left. */
static size_t pipe_claim(wpipe *q, int back)
{
    uint64_t r = atomic_load(&q->range);
    for (;;) {
        uint64_t lo = r & 0xffffffffu, hi = r >> 32;
        if (lo >= hi) return SIZE_MAX;
        uint64_t nr = back ? lo | (hi - 1) << 32 : (lo + 1) | hi << 32;
        if (atomic_compare_exchange_weak(&q->range, &r, nr)) return (size_t)(back ? hi - 1 : lo);
    }
}

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Pipe kind 1: copies the staged tablet columns (values, presence bits) into p->stage. */
static void pipe_copy(struct wpool *p)
{
    wpipe *q = &p->pipe;
    const tsf_tablet *t = q->t;
    uint8_t *o = p->stage;
    for (size_t i = q->c0; i < q->nc; i++) {
        size_t n = q->rows * t->cols[i].width;
        memcpy(o, t->vals[i], n);
        p->pv[i] = o;
        o += round8(n);
        const uint8_t *v = tsf_wt_valid_or_null(t, i, 0, q->rows);
        p->pb[i] = NULL;
        if (v) {
            memcpy(o, v, (q->rows + 7) / 8);
            p->pb[i] = o;
            o += round8((q->rows + 7) / 8);
        }
    }
}

/* Makes sure the staged copies exist: copies them unless a worker has, else waits (1: copied here). */
static int pipe_copied(struct wpool *p)
{
    wpipe *q = &p->pipe;
    int z = 0;
    if (atomic_load(&q->copied)) return 0;
    if (atomic_compare_exchange_strong(&q->copy_claim, &z, 1)) {
        pipe_copy(p);
        atomic_store(&q->copied, 1);
        return 1;
    }
    while (!atomic_load(&q->copied)) sched_yield(); /* a copy in progress: a few hundred microseconds */
    return 0;
}

static tsf_status pipe_job(tsf_writer *w, struct wpool *p, wctx *x, size_t i, tsf_error *err)
{
    wpipe *q = &p->pipe;
    wdevice *d = q->d;
    if (q->kind == 2) return tsf_wcol_seal_x(w, x, i == 0 ? &d->tcol : &d->cols[i - 1], q->rows, err);
    size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < q->nc ? lo + JOB_COLS : q->nc;
    const int64_t *times = d->dt + (q->g - d->dt_base); /* the tablet's times, kept until the join */
    return tsf_wt_append_run(w, x, p->pc + lo, p->pv + lo, p->pb + lo, hi - lo, times, q->rows, q->g, 0, err);
}

/* Runs pipe jobs claimed from one end; the failure of the lowest job is kept in k. */
static void pipe_run(tsf_writer *w, struct wpool *p, wworker *k, int back)
{
    size_t i;
    PROBE(uint64_t t0 = probe_ns());
    int did = pipe_copied(p);
    (void)did;
    PROBE(if (did && back) {
        atomic_fetch_add(&p->pr.w_copies, 1);
        atomic_fetch_add(&p->pr.t_w_copy, probe_ns() - t0);
    })
    while ((i = pipe_claim(&p->pipe, back)) != SIZE_MAX) {
        PROBE(if (back) atomic_fetch_add(&p->pr.w_pipe_jobs, 1); else p->pr.join_jobs++);
        PROBE(uint64_t tj = probe_ns(); int gap = back && !atomic_load(&p->pr.incall));
        tsf_error e;
        tsf_status s = pipe_job(w, p, k->x, i, &e);
        PROBE(if (gap) atomic_fetch_add(&p->pr.t_w_job_gap, probe_ns() - tj));
        if (s && i < k->bad) {
            k->s = s;
            k->bad = i;
            k->err = e;
        }
        if (back) atomic_fetch_add(&p->pipe.wdone, 1);
    }
}

/*
 * One piece of the pending output, from each column's `out` chunk set: piece j == 0 of device d is
 * the chunk-group header (and an aligned device's time chunk), piece j >= 1 the chunk of column
 * j - 1. Pieces are written one at a time in this order (wpool.obusy), so the bytes are those of
 * one thread; between pieces the output thread serves a posted pipe or batch first.
 */
static tsf_status out_piece(tsf_writer *w, wctx *x, wdevice *d, size_t j, tsf_error *err)
{
    if (j) return tsf_wcol_flush_chunk_k(w, x, &d->cols[j - 1], &d->cols[j - 1].out, d->aligned, err);
    x->ghead.len = 0;
    tsf_fmt_put_chunk_group_header(&x->ghead, d->segs, d->nsegs);
    if (x->ghead.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    tsf_status s = tsf_w_out(w, x->ghead.p, x->ghead.len, err);
    if (!s && d->aligned) s = tsf_wcol_flush_chunk_k(w, x, &d->tcol, &d->tcol.out, 0, err);
    return s;
}

static void *pool_main(void *arg)
{
    const wthr *a = arg;
    tsf_writer *w = a->w;
    struct wpool *p = w->pool;
    wworker *k = &p->ks[a->id + 1];
    uint64_t seen = 0, pseen = 0;
    PROBE(int slept = 0);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->pipe_on && p->pgen != pseen) { /* first: the caller may be waiting for the copy */
            pseen = p->pgen;
            p->pinside++;
            pthread_mutex_unlock(&p->mu);
            PROBE(uint64_t t0 = probe_ns(); atomic_fetch_add(&p->pr.t_w_wake, t0 - atomic_load(&p->pr.t_post));
                  atomic_fetch_add(&p->pr.w_wakes, 1);
                  if (slept) {
                      atomic_fetch_add(&p->pr.t_w_wake_slept, t0 - atomic_load(&p->pr.t_post));
                      atomic_fetch_add(&p->pr.w_wakes_slept, 1);
                  });
            pipe_run(w, p, k, 1);
            PROBE(atomic_fetch_add(&p->pr.t_w_pipe, probe_ns() - t0));
            PROBE(slept = 0);
            pthread_mutex_lock(&p->mu);
            if (--p->pinside == 0) pthread_cond_broadcast(&p->idle);
            continue;
        }
        /* output: after a pipe (its copy is due before the call returns), before a batch (the caller
           runs the jobs no worker takes: the serial output goes on meanwhile) */
        if (p->opending && !p->obusy) {
            p->obusy = 1;
            wdevice *d = p->olist[p->oi];
            size_t j = p->oj;
            int last = j + 1 > d->ncols && p->oi + 1 == p->on;
            pthread_mutex_unlock(&p->mu);
            tsf_error e = {0};
            PROBE(uint64_t t0 = probe_ns(); int gap = !atomic_load(&p->pr.incall));
            PROBE(slept = 0);
            tsf_status s = out_piece(w, k->x, d, j, &e);
            if (!s && last) s = tsf_w_out_flush(w, &e); /* the complete groups reach the OS now */
            PROBE(atomic_fetch_add(&p->pr.t_w_out, probe_ns() - t0));
            PROBE(if (gap) atomic_fetch_add(&p->pr.t_w_out_gap, probe_ns() - t0));
            if (s) w->failed = 1; /* a lost chunk group: only close/abort from now on */
            pthread_mutex_lock(&p->mu);
            p->obusy = 0;
            if (++p->oj > d->ncols) {
                p->oj = 0;
                p->oi++;
            }
            if (s || p->oi == p->on) {
                p->os = s;
                if (s) p->oerr = e;
                p->opending = 0;
                atomic_store(&p->outing, 0);
                pthread_cond_broadcast(&p->idle);
            }
            continue;
        }
        if (p->batch && p->bgen != seen) {
            seen = p->bgen;
            k->j = p->batch;
            p->inside++;
            pthread_mutex_unlock(&p->mu);
            PROBE(uint64_t t0 = probe_ns());
            worker_main(k);
            PROBE(atomic_fetch_add(&p->pr.t_w_batch, probe_ns() - t0));
            pthread_mutex_lock(&p->mu);
            if (--p->inside == 0) pthread_cond_broadcast(&p->idle);
            continue;
        }
        if (p->quit) break;
        PROBE(uint64_t t0 = probe_ns());
        pthread_cond_wait(&p->wake, &p->mu);
        PROBE(atomic_fetch_add(&p->pr.t_w_idle, probe_ns() - t0));
        PROBE(if (atomic_load(&p->pr.incall)) atomic_fetch_add(&p->pr.t_w_idle_incall, probe_ns() - t0));
        PROBE(slept = 1);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tsf_status tsf_w_pool_start(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = tsf_calloc(w->alloc, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
    if (pthread_mutex_init(&p->mu, NULL)) goto fail0;
    if (pthread_cond_init(&p->wake, NULL)) goto fail1;
    if (pthread_cond_init(&p->idle, NULL)) goto fail2;
    p->ks[0].x = &w->ctx;
    for (size_t i = 0; i < w->nwk; i++) p->ks[i + 1].x = &w->wk[i];
    w->pool = p;
    for (size_t i = 0; i < w->nwk; i++) { /* threads that fail to start leave their share to the others */
        p->ta[i] = (wthr){w, i};
        if (pthread_create(&p->th[p->nth], NULL, pool_main, &p->ta[i]) != 0) break;
        p->nth++;
    }
    return TSF_OK;
fail2:
    pthread_cond_destroy(&p->wake);
fail1:
    pthread_mutex_destroy(&p->mu);
fail0:
    tsf_free(w->alloc, p, sizeof *p);
    return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: cannot create the worker pool");
}

void tsf_w_pool_stop(tsf_writer *w)
{
    struct wpool *p = w->pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    while (p->opending || p->pinside) pthread_cond_wait(&p->idle, &p->mu);
    p->quit = 1;
    PROBE({
        wprobe *r = &p->pr;
        double ms = 1e-6;
        fprintf(stderr,
                "probe: pipes %llu (caller copies %llu, %llu while output ran; worker copies %llu) "
                "share avg %.2f "
                "(up %llu down %llu none %llu); flushes %llu (output late %llu)\n"
                "  caller ms: calls %.1f own %.1f copy %.1f copy-wait %.1f join-run %.1f (%llu jobs) "
                "join-wait %.1f "
                "flush %.1f (out-wait %.1f seal %.1f)\n"
                "  worker ms: idle %.1f output %.1f pipe %.1f (%llu jobs, copy %.1f) batch %.1f; "
                "started outside a call: output %.1f pipe jobs %.1f\n"
                "  worker: post to pipe entry %.1f ms (%llu pipes, avg %.1f us; from sleep %llu, avg %.1f us)\n",
                (unsigned long long)r->pipes, (unsigned long long)r->copy_caller,
                (unsigned long long)r->copy_caller_obusy, (unsigned long long)r->w_copies,
                r->pipes ? (double)r->share_sum / (double)r->pipes : 0.0, (unsigned long long)r->bal_up,
                (unsigned long long)r->bal_down, (unsigned long long)r->bal_none,
                (unsigned long long)r->flushes,
                (unsigned long long)r->starved, (double)r->t_call * ms,
                (double)r->t_own * ms, (double)r->t_copy_caller * ms, (double)r->t_copy_wait * ms,
                (double)r->t_join_run * ms, (unsigned long long)r->join_jobs, (double)r->t_join_wait * ms,
                (double)r->t_flush * ms, (double)r->t_outwait * ms, (double)r->t_seal * ms,
                (double)r->t_w_idle * ms, (double)r->t_w_out * ms, (double)r->t_w_pipe * ms,
                (unsigned long long)r->w_pipe_jobs, (double)r->t_w_copy * ms, (double)r->t_w_batch * ms,
                (double)r->t_w_out_gap * ms, (double)r->t_w_job_gap * ms, (double)r->t_w_wake * ms,
                (unsigned long long)r->w_wakes, r->w_wakes ? (double)r->t_w_wake / (double)r->w_wakes / 1e3 : 0.0,
                (unsigned long long)r->w_wakes_slept,
                r->w_wakes_slept ? (double)r->t_w_wake_slept / (double)r->w_wakes_slept / 1e3 : 0.0);
    })
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    if (p->olist) tsf_free(w->alloc, p->olist, p->ocap * sizeof *p->olist);
    if (p->pc) tsf_free(w->alloc, p->pc, p->pcap * sizeof *p->pc);
    if (p->pv) tsf_free(w->alloc, p->pv, p->pcap * sizeof *p->pv);
    if (p->pb) tsf_free(w->alloc, p->pb, p->pcap * sizeof *p->pb);
    if (p->stage) tsf_free(w->alloc, p->stage, p->scap);
    tsf_free(w->alloc, p, sizeof *p);
    w->pool = NULL;
}

tsf_status tsf_w_out_wait(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p) return TSF_OK;
    pthread_mutex_lock(&p->mu);
    while (p->opending) pthread_cond_wait(&p->idle, &p->mu);
    tsf_status s = p->os;
    if (s && err) *err = p->oerr;
    p->os = TSF_OK; /* reported once; w->failed stops the writer from now on */
    pthread_mutex_unlock(&p->mu);
    return s;
}

static void fold_ctx_mem(tsf_writer *w)
{
    int64_t m = (int64_t)w->mem + w->ctx.mem;
    w->mem = m > 0 ? (size_t)m : 0;
    w->ctx.mem = 0;
}

static void ks_reset(struct wpool *p)
{
    for (size_t k = 0; k <= p->nth; k++) {
        p->ks[k].bad = SIZE_MAX;
        p->ks[k].s = TSF_OK;
        p->ks[k].err.code = TSF_OK;
        p->ks[k].err.message[0] = 0;
    }
}

/* Folds the workers' buffered-bytes deltas in; returns the failure of the lowest item, if any. */
static tsf_status ks_collect(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    tsf_status s = TSF_OK;
    size_t bad = SIZE_MAX;
    for (size_t k = 0; k <= p->nth; k++) {
        if (k) {
            w->ctx.mem += p->ks[k].x->mem;
            p->ks[k].x->mem = 0;
        }
        if (p->ks[k].s && p->ks[k].bad < bad) {
            bad = p->ks[k].bad;
            s = p->ks[k].s;
            if (err) *err = p->ks[k].err;
        }
    }
    return s;
}

/* Joins the pipe: the caller runs the jobs no worker has started and waits for the workers inside. */
tsf_status tsf_w_pipe_join(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p || !p->pipe_on) return TSF_OK;
    PROBE(uint64_t t0 = probe_ns(); uint64_t j0 = p->pr.join_jobs);
    pipe_run(w, p, &p->ks[0], 0);
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_join_run += t1 - t0; p->pr.joins_helped += p->pr.join_jobs != j0);
    pthread_mutex_lock(&p->mu);
    while (p->pinside) pthread_cond_wait(&p->idle, &p->mu);
    p->pipe_on = 0;
    pthread_mutex_unlock(&p->mu);
    PROBE(p->pr.t_join_wait += probe_ns() - t1);
    tsf_status s = ks_collect(w, err);
    fold_ctx_mem(w);
    return s;
}

/*
 * Balances the next pipe of this kind when the caller has done its part: the workers get one job
 * less if some are still waiting or the last one still runs (the next call would wait for it), one
 * more if they have finished all of theirs and no output is pending; with an output pending the
 * share stays (the output fills the workers' spare time; flush_async shrinks the share when the
 * output is late). The caller and the workers thus finish together (as in a batch); what runs on
 * after the call is less than a job, not work that would only hide behind the application's own
 * time between calls. A worker that has not come since the post because it is inside an output
 * piece gives no measure.
 */
static void pipe_balance(struct wpool *p)
{
    uint64_t r = atomic_load(&p->pipe.range);
    size_t *sh = &p->share[p->pipe.kind - 1];
    int outp = atomic_load(&p->outing);
    if ((r >> 32) == p->pipe.hi0 && outp) { /* inside an output piece since the post: no measure */
        PROBE(p->pr.bal_none++);
    } else if ((r & 0xffffffffu) < (r >> 32) || atomic_load(&p->pipe.wdone) < p->pipe.hi0 - (r >> 32)) {
        /* jobs left, or the last one still running: the next call would wait for it */
        if (*sh > 1) (*sh)--;
        PROBE(p->pr.bal_down++);
    } else if (!outp) {
        (*sh)++; /* capped where it is used */
        PROBE(p->pr.bal_up++);
    } /* else: the output fills the workers' spare time (flush_async shrinks the share if it starves) */
}

/* Posts the pipe in p->pipe (range and copy flags set) to the workers. */
static void pipe_post(struct wpool *p)
{
    ks_reset(p);
    pthread_mutex_lock(&p->mu);
    PROBE(atomic_store(&p->pr.t_post, probe_ns()));
    p->pipe_on = 1;
    p->pgen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

/* May a tablet's tail run on after the call (a pipe)? Not with AUTO columns (their cuts write output). */
int tsf_w_pipe_ok(const tsf_writer *w, int big)
{
    return big && w->pool && w->pool->nth && !w->any_auto;
}

/* The workers' share of n jobs (at least one each side). */
static size_t pipe_share(struct wpool *p, int kind, size_t n)
{
    size_t sh = p->share[kind - 1] ? p->share[kind - 1] : n / 2;
    if (sh > n - 1) sh = n - 1;
    if (sh < 1) sh = 1;
    p->share[kind - 1] = sh;
    return sh;
}

/* The caller's share of a posted pipe is done: rebalance the next split; on the caller's failure wait
 * for the workers (their own errors are dropped: the caller's comes first, as on one thread). */
static tsf_status pipe_end(tsf_writer *w, struct wpool *p, tsf_status s)
{
    pipe_balance(p);
    if (s) {
        tsf_error e;
        (void)tsf_w_pipe_join(w, &e);
    }
    return s;
}

/*
 * A non-aligned tablet whose last columns go on in the workers after the call returns (kind 1):
 * the caller appends columns [0, c0) from the tablet, a worker copies [c0, ncols) and appends them.
 */
tsf_status tsf_w_pipe_append(tsf_writer *w, tsf_tablet *t, wdevice *d, uint64_t g, tsf_error *err)
{
    struct wpool *p = w->pool;
    size_t nj = (t->ncols + JOB_COLS - 1) / JOB_COLS;
    size_t j0 = nj - pipe_share(p, 1, nj), c0 = j0 * JOB_COLS;
    size_t need = 0;
    for (size_t i = c0; i < t->ncols; i++) need += round8(t->rows * t->cols[i].width) + round8((t->rows + 7) / 8);
    if (t->ncols > p->pcap) { /* contents are set at every post: fresh arrays */
        size_t nc = t->ncols;
        wcol **pc = tsf_alloc(w->alloc, nc * sizeof *pc);
        const void **pv = tsf_alloc(w->alloc, nc * sizeof *pv);
        const uint8_t **pb = tsf_alloc(w->alloc, nc * sizeof *pb);
        if (!pc || !pv || !pb) {
            if (pc) tsf_free(w->alloc, pc, nc * sizeof *pc);
            if (pv) tsf_free(w->alloc, pv, nc * sizeof *pv);
            if (pb) tsf_free(w->alloc, pb, nc * sizeof *pb);
            return tsf_err(err, TSF_ENOMEM, "writer: out of memory (pipeline)");
        }
        if (p->pc) tsf_free(w->alloc, p->pc, p->pcap * sizeof *p->pc);
        if (p->pv) tsf_free(w->alloc, p->pv, p->pcap * sizeof *p->pv);
        if (p->pb) tsf_free(w->alloc, p->pb, p->pcap * sizeof *p->pb);
        p->pc = pc;
        p->pv = pv;
        p->pb = pb;
        p->pcap = nc;
    }
    if (need > p->scap) {
        size_t nc = need + need / 4;
        uint8_t *ns = tsf_alloc(w->alloc, nc);
        if (!ns) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (pipeline)");
        if (p->stage) tsf_free(w->alloc, p->stage, p->scap);
        p->stage = ns;
        p->scap = nc;
    }
    for (size_t i = c0; i < t->ncols; i++) p->pc[i] = &d->cols[t->cols[i].idx];
    wpipe *q = &p->pipe;
    q->kind = 1;
    q->d = d;
    q->t = t;
    q->g = g;
    q->rows = t->rows;
    q->c0 = c0;
    q->nc = t->ncols;
    atomic_store(&q->range, (uint64_t)j0 | (uint64_t)nj << 32);
    q->hi0 = nj;
    atomic_store(&q->wdone, 0);
    atomic_store(&q->copy_claim, 0);
    atomic_store(&q->copied, 0);
    pipe_post(p);
    PROBE(p->pr.pipes++; p->pr.share_sum += nj - j0; uint64_t t0 = probe_ns());
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < c0 && !s; i += 64)
        s = tsf_wt_append_cols(w, &w->ctx, t, d, i, i + 64 < c0 ? i + 64 : c0, g, 0, err);
    fold_ctx_mem(w);
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_own += t1 - t0; int ob = atomic_load(&p->outing));
    int did = pipe_copied(p); /* the tablet may change once this call returns */
    (void)did;
    PROBE(if (did) {
        p->pr.copy_caller++;
        p->pr.copy_caller_obusy += ob != 0;
        p->pr.t_copy_caller += probe_ns() - t1;
    } else p->pr.t_copy_wait += probe_ns() - t1;)
    return pipe_end(w, p, s);
}

/* Seals an aligned device's pending pages, the last columns in the workers after the call returns (kind 2). */
tsf_status tsf_w_pipe_seal(tsf_writer *w, wdevice *d, tsf_error *err)
{
    struct wpool *p = w->pool;
    size_t n = 1 + d->ncols, j0 = n - pipe_share(p, 2, n);
    wpipe *q = &p->pipe;
    q->kind = 2;
    q->d = d;
    q->t = NULL;
    q->rows = d->rows;
    atomic_store(&q->range, (uint64_t)j0 | (uint64_t)n << 32);
    q->hi0 = n;
    atomic_store(&q->wdone, 0);
    atomic_store(&q->copy_claim, 1);
    atomic_store(&q->copied, 1);
    pipe_post(p);
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < j0 && !s; i++)
        s = tsf_wcol_seal_x(w, &w->ctx, i == 0 ? &d->tcol : &d->cols[i - 1], d->rows, err);
    fold_ctx_mem(w);
    d->rows = 0;
    return pipe_end(w, p, s);
}

/* Runs every job; on failure reports the failure of the lowest item (as one thread would). */
tsf_status tsf_w_jobs_run(tsf_writer *w, wjobs *j, tsf_error *err)
{
    struct wpool *p = w->pool;
    wworker *ks = p->ks;
    tsf_status s = tsf_w_pipe_join(w, err);
    if (s) return s;
    atomic_init(&j->next, 0);
    atomic_init(&j->stop, 0);
    ks_reset(p);
    for (size_t k = 0; k <= p->nth; k++) ks[k].j = j;
    if (p->nth) {
        pthread_mutex_lock(&p->mu);
        p->batch = j;
        p->bgen++;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    worker_main(&ks[0]);
    if (p->nth) { /* close the batch; wait for the workers inside */
        pthread_mutex_lock(&p->mu);
        p->batch = NULL;
        while (p->inside) pthread_cond_wait(&p->idle, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    s = ks_collect(w, err);
    /* AUTO columns on this thread, in column order */
    for (size_t i = 0; j->seal == 1 && i < j->n && !s; i++)
        if (job_col(j, i)->autoc) s = job_run(j, &w->ctx, i, err);
    for (size_t i = 0; j->seal == 0 && i < j->t->ncols && !s; i++) {
        tsf_tablet *t = j->t;
        wcol *c = &j->d->cols[t->cols[i].idx];
        if (c->autoc) s = tsf_wcol_append_x(w, &w->ctx, c, t->times, t->vals[i], tsf_wt_valid_or_null(t, i, 0, t->rows), 0,
                                            t->rows, j->g, err);
    }
    fold_ctx_mem(w);
    return s;
}

/*
 * Flush with an output thread: seals every dirty device's pending pages (while the previous output
 * may still run: the seals fill `ck`), waits for the previous output, swaps each column's chunk set
 * into wcol.out and lets a worker write the chunk groups (devices ascending) while the next tablets
 * are encoded into the other set. The buffered-bytes count drops at once; at most two sets of
 * chunk buffers exist.
 */
tsf_status tsf_w_flush_async(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    tsf_status s = TSF_OK;
    PROBE(uint64_t t0 = probe_ns(); p->pr.flushes++);
    /* the seals fill `ck` only: they run while the last output may still write `out` (the output
       thread, on the workers' side, is served before a batch, so the caller seals alone meanwhile) */
    size_t n = 0;
    for (size_t i = 0; i < w->ndevs && !s; i++)
        if (w->devs[i]->dirty) {
            n++;
            s = tsf_w_seal_device(w, w->devs[i], err);
        }
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_seal += t1 - t0);
    if (s) return s;
    if (atomic_load(&p->outing)) { /* the last output is not done: leave the workers more time for it */
        for (int k = 0; k < 2; k++) p->share[k] = p->share[k] > 2 ? p->share[k] - 2 : 1;
        PROBE(p->pr.starved++);
    }
    s = tsf_w_out_wait(w, err);
    PROBE(p->pr.t_outwait += probe_ns() - t1);
    if (s) return s;
    if (!n) return TSF_OK;
    if (n > p->ocap) {
        wdevice **nl = tsf_realloc(w->alloc, p->olist, p->ocap * sizeof *nl, n * sizeof *nl);
        if (!nl) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (flush)");
        p->olist = nl;
        p->ocap = n;
    }
    n = 0;
    for (size_t i = 0; i < w->ndevs; i++)
        if (w->devs[i]->dirty) p->olist[n++] = w->devs[i];
    qsort(p->olist, n, sizeof *p->olist, tsf_w_device_cmp);
    size_t freed = 0;
    for (size_t i = 0; i < n; i++) {
        wdevice *d = p->olist[i];
        for (size_t j = 0; j < d->ncols + (size_t)d->aligned; j++) {
            wcol *c = j < d->ncols ? &d->cols[j] : &d->tcol;
            wchunk k = c->out; /* emptied by the last output, capacity kept */
            c->out = c->ck;
            c->ck = k;
            freed += c->out.blen + c->out.pstats.len;
        }
        d->dirty = 0;
    }
    PROBE(p->pr.t_flush += probe_ns() - t0);
    w->mem -= freed < w->mem ? freed : w->mem;
    pthread_mutex_lock(&p->mu);
    p->on = n;
    p->oi = p->oj = 0;
    p->opending = 1;
    atomic_store(&p->outing, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    return TSF_OK;
}
