/*
 * workers.h - the writer's worker pool (workers.c, tsf_writer_options.threads > 1): its state, and what the
 * write path (tablet_write.c) asks of it.
 */
#ifndef TSF_WRITE_WORKERS_H
#define TSF_WRITE_WORKERS_H

#include <pthread.h>
#include <stdatomic.h>

#include "tablet.h"

/*
 * One batch of independent column jobs: the non-aligned columns of a tree tablet (append, which
 * seals full pages), the columns of an aligned page (seal) or the pending pages of a non-aligned
 * device at a flush (seal). The calling thread and the pool's workers take the next job through an
 * atomic counter and work in their own wctx; columns touch only their own state, so the bytes do
 * not depend on the thread count. AUTO columns stay on the calling thread (they may write output).
 *
 * The pool (threads - 1 workers) lives from open to close: no thread start per tablet. A worker
 * also writes the chunk groups of the last flush (the chunks swapped into wcol.out) while the
 * columns fill their other chunk buffers (wcol.ck): output overlaps encoding, and the file's bytes
 * stay in the same order (one flush's groups are written before the next flush swaps again). The
 * output goes in pieces (a group header, a chunk: out_piece), one at a time; between two pieces a
 * worker serves a posted pipe first, so the output fills the time the pipes leave it.
 */
typedef struct wjobs {
    tsf_writer *w;
    tsf_tablet *t;
    wdevice *d;
    int seal;   /* 0: append tablet columns; 1: seal the device's pending pages; 2: aligned rows */
    uint64_t g; /* device row of the tablet's first row (append) */
    size_t n;   /* items: append jobs, or device columns (+ 1: the aligned time column) to seal */
    size_t r, k;          /* aligned rows: tablet rows [r, r + k) */
    const size_t *feed;   /* aligned rows: tablet column of each device column */
    atomic_size_t next;
    atomic_int stop;
} wjobs;

typedef struct wworker {
    wjobs *j;
    wctx *x;
    size_t bad; /* first failed item, SIZE_MAX if none */
    tsf_status s;
    tsf_error err;
} wworker;

/*
 * A pipe: the last jobs of a tablet (jobs [lo, hi) of `range`), run by the workers after the write
 * call has returned, so that the calling thread goes back to the application instead of waiting
 * for the slower thread. Kind 1: non-aligned appends from copies of the tablet columns (a borrowed
 * column is valid only until the call returns; one thread copies them while the caller encodes its
 * own columns, and the call returns once they are copied); kind 2: the page seals of an aligned
 * device (they read only the pending pages). The next call into the writer joins it first (the
 * caller takes the jobs not started yet), so the state and the bytes are those of one thread.
 */
typedef struct wpipe {
    int kind;             /* 1: append staged columns; 2: seal an aligned device's pages */
    wdevice *d;
    tsf_tablet *t;        /* kind 1: the tablet, read by the copy only */
    uint64_t g;           /* kind 1: device row of the tablet's first row */
    size_t rows;          /* kind 1: tablet rows; kind 2: page rows */
    size_t c0, nc;        /* kind 1: tablet columns [c0, nc) are staged (job i: columns i * JOB_COLS...) */
    _Atomic uint64_t range; /* unclaimed jobs: lo | hi << 32; the caller takes lo, the workers hi - 1 */
    uint64_t hi0;           /* hi when posted */
    atomic_size_t wdone;    /* jobs the workers have finished */
    atomic_int copy_claim, copied;
} wpipe;

/*
 * Probe of the two-thread pipeline, compiled in only with -DTSF_W_PROBE (bench/debug builds): where
 * the calling thread and the workers spend their time; printed to stderr when the pool stops.
 */
#ifdef TSF_W_PROBE
#include <stdio.h>
#include <time.h>
typedef struct wprobe {
    uint64_t pipes, copy_caller, copy_caller_obusy, join_jobs, joins_helped, flushes, share_sum;
    uint64_t bal_up, bal_down, bal_none, starved;
    uint64_t t_copy_caller, t_copy_wait, t_own, t_join_run, t_join_wait, t_flush, t_outwait, t_seal, t_call;
    _Atomic uint64_t w_pipe_jobs, w_copies, t_w_idle, t_w_out, t_w_pipe, t_w_batch, t_w_copy;
    _Atomic uint64_t t_w_out_gap, t_w_job_gap; /* started while the caller was outside the writer */
    atomic_int incall;
    _Atomic uint64_t t_post, t_w_wake, t_w_idle_incall, w_wakes, t_w_wake_slept, w_wakes_slept;
} wprobe;
static inline uint64_t probe_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define PROBE(x) x
#else
#define PROBE(x)
#endif

typedef struct wthr {
    tsf_writer *w;
    size_t id; /* worker i uses ks[i + 1] and w->wk[i] */
} wthr;

struct wpool {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* workers: a batch or an output was posted, or quit */
    pthread_cond_t idle; /* calling thread: the batch's workers left, or the output finished */
    pthread_t th[63];
    wthr ta[63];
    size_t nth;
    wworker ks[64]; /* ks[0]: the calling thread */
    wjobs *batch;   /* open batch (NULL: none) and its generation */
    uint64_t bgen;
    size_t inside;  /* workers inside the open batch */
    wdevice **olist; /* devices of the pending output, ascending */
    size_t on, ocap;
    size_t oi, oj;   /* the next output piece: device olist[oi], piece oj (out_piece) */
    int opending, obusy, quit;
    atomic_int outing; /* = opending, read without the lock by pipe_balance */
    tsf_status os; /* the output's result, reported by tsf_w_out_wait */
    tsf_error oerr;
    /* the tail of a tablet left to the workers when the write call returns (see pipe_post) */
    wpipe pipe;
    int pipe_on;       /* posted, not yet joined */
    uint64_t pgen;     /* generation of the posted pipe */
    size_t pinside;    /* workers inside the pipe */
    size_t share[2];   /* the workers' jobs per pipe kind (0 = not measured yet), adapted at each join */
    int budget_due;    /* the memory budget check of the tablet whose tail ran on is still to do */
    wcol **pc;         /* pipe kind 1: device column of each tablet column, its staged values/presence */
    const void **pv;
    const uint8_t **pb;
    size_t pcap;
    uint8_t *stage;    /* pipe kind 1: the staged copies */
    size_t scap;
    PROBE(wprobe pr;)
};

/* Columns per append job: four of one type share a statistics pass (tsf_wcol_append_group). */
#define JOB_COLS 4
/* below this many cells a tablet is encoded on the calling thread: starting threads for a few rows (the
   row-by-row path) costs far more than the work; the output bytes are the same either way */
#define PAR_MIN_CELLS 16384

/* Runs every job of a batch on the calling thread and the workers; on failure reports the failure of the lowest
 * item (as one thread would). */
tsf_status tsf_w_jobs_run(tsf_writer *w, wjobs *j, tsf_error *err);
/* Joins the pipe: the caller runs the jobs no worker has started and waits for the workers inside. */
tsf_status tsf_w_pipe_join(tsf_writer *w, tsf_error *err);
/* May a tablet's tail run on after the call (a pipe)? Not with AUTO columns (their cuts write output). */
int tsf_w_pipe_ok(const tsf_writer *w, int big);
/* A non-aligned tablet whose last columns go on in the workers after the call returns (pipe kind 1). */
tsf_status tsf_w_pipe_append(tsf_writer *w, tsf_tablet *t, wdevice *d, uint64_t g, tsf_error *err);
/* Seals an aligned device's pending pages, the last columns in the workers after the call returns (kind 2). */
tsf_status tsf_w_pipe_seal(tsf_writer *w, wdevice *d, tsf_error *err);
/* Flush with an output thread: the chunk groups are written by a worker while the next tablets are encoded. */
tsf_status tsf_w_flush_async(tsf_writer *w, tsf_error *err);

#endif
