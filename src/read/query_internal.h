/*
 * query_internal.h - the state of a tsf_query shared by the files of the batch iterator: query.c (the
 * query object and its iteration over devices), query_scan.c (a column's chunks and pages: pruning,
 * fetching, decoding), query_pdir.c (jumps into partly covered chunks) and query_batch.c (batches
 * assembled from decoded pages, and handed over to parallel workers).
 */
#ifndef TSF_READ_QUERY_INTERNAL_H
#define TSF_READ_QUERY_INTERNAL_H

#include "../codec/codec.h"
#include "filter.h"
#include "parallel.h"
#include "reader_internal.h"

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
    const int64_t *tpage; /* the decoded page: its times and values (in the buffers above, or in a collection) */
    const uint8_t *vpage;
    /* aligned value page */
    int null_page;
    const uint8_t *bitmap;
    size_t k, present;
    tsf_dec_summary tsum, vsum; /* checked reads: what decoding the page's times / values gathered */
    /* statistics answers (tsf_query.unit): this column's unit was taken from statistics, not to be read */
    int answered; /* aligned: the current value page */
    int grp;      /* aligned chunk group being opened: 0 no value chunk, 1 to open, 2 opened, 3 answered */
    uint64_t grp_off;
} qcol;

/*
 * Statistics answers (the dataset aggregation, dataset_agg.c): with a hook set, every whole chunk (page_off
 * 0, its ChunkMetadata statistics) and every page with statistics of a returned column that the scan would
 * read is offered first; TSF_RD_UNIT_TAKEN means the caller took its values from the statistics and the scan
 * skips it as if the column had no values there (an aligned time page or chunk group whose value columns are
 * all taken or absent is not read at all). enc is the chunk's encoding, or TSF_RD_ENC_UNKNOWN before its
 * header is read: TSF_RD_UNIT_NEED_ENC then asks for the offer again once it is. Set only on queries
 * without a value filter and without workers.
 */
enum { TSF_RD_UNIT_DECODE = 0, TSF_RD_UNIT_TAKEN = 1, TSF_RD_UNIT_NEED_ENC = 2 };
#define TSF_RD_ENC_UNKNOWN (-1)
typedef int (*tsf_rd_unit_fn)(void *ctx, size_t device, const char *column, tsf_type type, const tsf_fmt_stats *s,
                              int enc, uint64_t chunk_off, uint64_t page_off);

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
    tsf_collect *sink;   /* the collection being filled (tsf_query_collect; pages may decode into it) or NULL */
    const tsf_batch *pending; /* a batch that did not fit the collection: the next call's first */
    tsf_rd_unit_fn unit; /* statistics answers (above) or NULL */
    void *unit_ctx;
};

/* query.c: sets the statistics hook (ignored on a query with a value filter or workers: 0 returned). */
int tsf_rd_query_set_unit(tsf_query *q, tsf_rd_unit_fn fn, void *ctx);
/* query.c: the chunk and page (file offsets of the chunk header and of the page body) that column col of the
 * batch last returned comes from: a batch never spans pages. */
void tsf_rd_query_col_unit(const tsf_query *q, size_t col, uint64_t *chunk_off, uint64_t *page_off);

/* query_scan.c: loads the next ChunkMetadata of c's series into its lookahead (c->cm_have = 0 at the end). */
tsf_status tsf_rd_query_next_meta(tsf_query *q, qcol *c, tsf_error *err);
/* query_scan.c: decodes the next page of non-aligned column c with rows in the window (c->done at the end). */
tsf_status tsf_rd_query_na_page(tsf_query *q, qcol *c, tsf_error *err);
/* query_scan.c: the next time page of the aligned device with rows in the window, and the value pages
 * paired with it (q->tcol.done at the end). */
tsf_status tsf_rd_query_al_page(tsf_query *q, tsf_error *err);

/* query_pdir.c: in a chunk that starts before the window, jumps the driving column drv (and, aligned, the
 * nvals value columns in lockstep) to the first page that can reach tmin; the pages jumped over count as
 * skipped. Does nothing when neither the page-time index nor a page directory can tell. */
void tsf_rd_pdir_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals);

/* query_batch.c: emits up to one batch of the current aligned page into q->out / q->cb. */
tsf_status tsf_rd_query_al_emit(tsf_query *q, tsf_error *err);
/* query_batch.c: emits a batch of a non-aligned device, merging its columns by time; *got = 0 when a
 * column needs its next page first or every column has ended. */
tsf_status tsf_rd_query_na_emit(tsf_query *q, int *got, tsf_error *err);

#endif
