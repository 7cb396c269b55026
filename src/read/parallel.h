/*
 * parallel.h - the parallel scan behind tsf_query_options.threads:
 * a query split into time-range tasks that worker threads decode ahead, handed out in task order.
 */
#ifndef TSF_READ_PARALLEL_H
#define TSF_READ_PARALLEL_H

#include "reader_internal.h"

typedef struct tsf_rd_par tsf_rd_par;

/* Plans the tasks of the query `o` (o->threads > 1) and starts the workers. */
tsf_status tsf_rd_par_open(tsf_reader *r, const tsf_query_options *o, tsf_rd_par **out, tsf_error *err);
/* Next batch in the order one thread yields them; *out = NULL at the end. */
tsf_status tsf_rd_par_next(tsf_rd_par *p, const tsf_batch **out, tsf_error *err);
/* Counters of the tasks consumed so far. */
void tsf_rd_par_stats(const tsf_rd_par *p, tsf_query_stats *out);
/* Ends the query (its workers finish their task and go back to the pool) and frees it; NULL is a no-op. */
void tsf_rd_par_close(tsf_rd_par *p);

/* query_batch.c, for the workers: makes batch b (just returned by tsf_query_next(q)) outlive q's next call by
 * moving the decode buffers it points into to taken[0..n) (room for 1 + 2 x columns) and giving q buffers
 * popped from spare (*nspare of them; empty ones when none are left). Pointers into q's constant buffers
 * (tsf_rd_query_consts: zeros, ones) are left for the caller to substitute. Returns n, or SIZE_MAX when b
 * cannot be detached: rows of its page are still to come, TEXT/STRING/BLOB values borrow page bytes, or
 * it points elsewhere (a filter's compacted rows); then copy it. */
size_t tsf_rd_query_detach(tsf_query *q, const tsf_batch *b, tsf_rd_buf *spare, size_t *nspare, tsf_rd_buf *taken);
void tsf_rd_query_consts(const tsf_query *q, tsf_rd_buf *zeros, tsf_rd_buf *ones);
/* query_batch.c, for the workers: points q (opened with threads 0 and a batch size >= batch) at device di of its
 * device list alone and the range [tmin, tmax], as if opened for them; its buffers and counters restart. */
void tsf_rd_query_retarget(tsf_query *q, size_t di, int64_t tmin, int64_t tmax, size_t batch);

#endif
