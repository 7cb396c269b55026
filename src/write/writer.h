/*
 * writer.h - internal structures of the TsFile writer (spec tsfile-container-format.md §4-§8,
 * §17, §20): devices and their columns, the page/chunk buffers of each column, the output sink.
 */
#ifndef TSF_WRITE_WRITER_H
#define TSF_WRITE_WRITER_H

#include "../codec/codec.h"
#include "../format/meta_index.h"
#include "bodypool.h"
#include "../format/stats.h"

struct wdevice;

/*
 * Per-thread encoding context: scratch buffers, a compressor handle, the last time column encoded
 * (non-aligned series of one device that share a page's rows share its TS_2DIFF bytes) and the
 * change of buffered bytes. The writer owns one for the calling thread and one per extra thread.
 */
typedef struct wctx {
    tsf_wbuf scratch, scratch2;
    tsf_compressor *cz;
    const struct wdevice *tdev; /* time cache key: device, first device row, row count */
    uint64_t tg0;
    size_t tn;
    tsf_wbuf tenc; /* cached TS_2DIFF bytes */
    tsf_wbuf plz, plzsrc; /* LZ4 block of the last page prefix (lz4lit.h) and that prefix */
    size_t plz_seq, plz_lit;
    tsf_wbuf lz4s; /* LZ4 state + output of the incompressibility probe */
    const struct tsf_wstats *pre; /* statistics of the next batch, computed ahead (tsf_wcol_append_group) */
    int64_t mem;   /* buffered-bytes delta, added to w->mem by the calling thread */
    tsf_wbuf ghead; /* chunk-group header being written (output) */
    tsf_bblock *body; /* current block of the page-body pool (w->bodies) */
    tsf_bblock *pend; /* pool block of pending-page arrays (kept until close) */
    struct tsf_wauto_scratch *autos; /* AUTO trial buffers (auto.c) */
} wctx;

/* A sealed page of the chunk being built. */
typedef struct wpage {
    const uint8_t *body; /* in the page-body pool (bodypool.h) */
    tsf_bblock *blk;     /* its block; NULL for an empty page */
    uint32_t usize;    /* uncompressed body size; 0 = empty aligned value page */
    uint32_t csize;    /* stored body size */
    size_t stats_off;  /* serialized page statistics in wcol.pstats */
    size_t stats_len;
} wpage;

/* The pages of a chunk: body bytes, page statistics, page table, chunk statistics. */
typedef struct wchunk {
    size_t blen; /* body bytes counted in w->mem */
    tsf_wbuf pstats;
    wpage *pages;
    size_t npages, pcap;
    size_t nonempty_pages;
    tsf_wstats cstat;
} wchunk;

/* One column: a non-aligned series, an aligned value column, or an aligned time column. */
typedef struct wcol {
    char *name;
    size_t name_len;
    tsf_type type; /* TSF_VECTOR for a time column */
    tsf_encoding enc;
    tsf_compression comp;
    uint8_t mask; /* 0, 0x80 time, 0x40 value */
    uint8_t autoc;       /* TSF_ENCODING_AUTO state (auto.h); 0 = the encoding is fixed */
    uint8_t lz4_lit;     /* lz4_probe: the last measured page gained < 0.5% from LZ4 match search */
    uint16_t lz4_wait;   /* lz4_probe: pages until the next measured page */
    int32_t auto_prec;   /* AUTO: max_point_number when autoc == TSF_AUTO_PRECISION */
    struct tsf_wauto *au; /* AUTO: the chunk's candidates and totals (auto.c) */
    uint8_t refused_now; /* the page being sealed was refused (exact.c): its values are dropped */
    char *refusal;       /* the first refused page's message, until a call reports it (tsf_w_refusal) */
    size_t width; /* C width of one value (tsf_bytes for binary) */
    struct wdevice *dev;

    /* pending page: non-null values (and their times when non-aligned) */
    uint8_t *vals;
    size_t nvals, vcap;
    int64_t *times;   /* non-aligned only */
    size_t tcap;
    tsf_wbuf arena;   /* binary payloads of the pending page */
    size_t *boff;     /* offsets of binary payloads in arena (vals holds tsf_bytes with len) */
    uint8_t *bitmap;  /* aligned value: MSB-first presence bits of the pending page rows */
    size_t bmcap;
    uint8_t vpool, tpool; /* vals / times live in the body pool (x->pend): not freed one by one */
    size_t prow;      /* aligned value: rows of the pending page */
    size_t est;       /* estimated encoded bytes of the pending page */
    size_t pmem;      /* buffered bytes counted for the pending page */
    int dense;        /* non-aligned: pending times = device rows [g0, g0 + nvals) of dev->dt */
    uint64_t g0;
    tsf_wstats pstat; /* statistics of the pending page */

    /* the chunk being built (`ck` names the same fields as one struct: swapped with `out`) */
    union {
        struct {
            size_t blen;
            tsf_wbuf pstats;
            wpage *pages;
            size_t npages, pcap;
            size_t nonempty_pages;
            tsf_wstats cstat;
        };
        wchunk ck;
    };
    /* threads > 1: the chunk handed to the output thread at the last flush (written there) */
    wchunk out;

    /* across the file */
    tsf_wbuf cmeta; /* ChunkMetadata entries: i64 offset + statistics */
    uint32_t nchunks;
    tsf_wstats sstat;
    int64_t last_time; /* non-aligned: last written time */
    int has_time;
} wcol;

/* Where a binary value's arena offset points; with only empty values there is no arena, and the
 * offsets (all 0) point at a static empty string instead of offsetting a null pointer. */
static inline const uint8_t *tsf_wcol_arena_at(const wcol *c, size_t off)
{
    return c->arena.p ? c->arena.p + off : (const uint8_t *)"";
}

typedef struct wdevice {
    tsf_mi_seg *segs;
    size_t nsegs;
    char *path;      /* toString(): segments joined by '.' */
    size_t path_len;
    size_t path_cap;
    int aligned;
    int table;       /* index in w->tables, or -1 */
    wcol *cols;      /* registration order (table: FIELD columns in schema order) */
    size_t ncols, ccap;
    wcol tcol;       /* aligned: the time column */
    size_t rows;     /* aligned: rows of the pending page */
    int64_t last_time;
    int has_time;
    int dirty;       /* has data in the current chunk group */
    int64_t check_time; /* validation scratch */
    int check_has;
    uint64_t check_epoch;
    /* non-aligned: times of the device rows [dt_base, dt_base + dt_len), shared by dense columns */
    int64_t *dt;
    size_t dt_len, dt_cap;
    uint64_t dt_base;
} wdevice;

typedef struct wtable {
    char *name;
    tsf_mi_column *cols; /* names owned */
    size_t ncols;
    size_t *tag_idx, ntags;
    size_t *field_idx, nfields;
} wtable;

struct tsf_writer {
    tsf_allocator alloc_copy;
    const tsf_allocator *alloc;
    tsf_writer_options opt;
    tsf_codec *codec;

    /* output */
    int fd;
    char *path, *tmp_path; /* tmp_path: the temporary (common/tmpfile.h), tmp_cap bytes; NULL in place */
    size_t tmp_cap;
    tsf_write_callbacks cb;
    int use_cb;
    tsf_wbuf out;
    uint64_t flushed; /* bytes handed to the OS / callback */
    uint64_t last_flush_ms; /* CLOCK_MONOTONIC of the last automatic flush or open (flush_interval_ms) */
    _Atomic int failed; /* an output error happened: only close/abort are allowed (set by the output thread) */
    int closed;

    wdevice **devs;
    size_t ndevs, dcap;
    /* open-addressing map: device path -> index in devs */
    size_t *map;
    size_t mapcap;

    wtable *tables;
    size_t ntables, tcap;

    size_t mem;        /* buffered bytes (pending pages + chunk buffers) */
    uint64_t epoch;    /* validation epoch */

    tsf_wbuf scratch, scratch2; /* page assembly / compression */
    tsf_bpool bodies;           /* page bodies of every chunk set */
    wctx ctx;                   /* encoding context of the calling thread */
    wctx *wk;                   /* opt.threads - 1 more */
    size_t nwk;
    struct wpool *pool;         /* threads > 1: the workers (workers.c), started at open */
    int any_auto;               /* an AUTO column exists (its chunk cuts write output: no output thread) */
    _Atomic int refusals;       /* a column holds a refusal message (set by any thread) */
    struct tsf_wpix *pix;       /* opt.page_index with a path: the chunks and pages written (writer_pix.c) */
    tsf_tablet *row_tablet;     /* cached for the row API */
    char *row_target;
};

/* output */
tsf_status tsf_w_out(tsf_writer *w, const void *p, size_t n, tsf_error *err);
typedef struct tsf_w_piece {
    const void *p;
    size_t n;
} tsf_w_piece;
/* Writes the pieces in order; large runs go to the file in gathered writes without a copy. */
tsf_status tsf_w_outv(tsf_writer *w, const tsf_w_piece *v, size_t n, tsf_error *err);
uint64_t tsf_w_pos(const tsf_writer *w);
/* Hands the buffered output to the OS / callback now (completed chunk groups then survive a kill). */
tsf_status tsf_w_out_flush(tsf_writer *w, tsf_error *err);

/* columns (column.c) */
/* TSF_EINVAL naming the refused pages' series, value and encoding when a page was refused since the
 * last report (their messages are then cleared), else TSF_OK. Calling thread, no job in flight. */
tsf_status tsf_w_refusal(tsf_writer *w, tsf_error *err);
tsf_status tsf_wcol_init(tsf_writer *w, wcol *c, const char *name, size_t len, tsf_type type, tsf_encoding enc,
                         tsf_compression comp, uint8_t mask, tsf_error *err);
void tsf_wcol_free(tsf_writer *w, wcol *c);
size_t tsf_type_width(tsf_type t);
/*
 * Appends rows [0, k) of a tablet column: `times` and `vals` point at the batch's first row,
 * `valid` (NULL = all present) is the tablet's LSB-first bitmap with the batch starting at bit
 * vbit0. Non-aligned columns keep only present values and seal full pages themselves; aligned
 * value columns also record the presence bits (the device seals pages by rows).
 */
tsf_status tsf_wcol_append(tsf_writer *w, wcol *c, const int64_t *times, const void *vals, const uint8_t *valid,
                           size_t vbit0, size_t k, tsf_error *err);
/*
 * The same in an encoding context; `g` is the device row of times[0] when `times` are the device's
 * shared rows (dev->dt holds them), UINT64_MAX otherwise.
 */
tsf_status tsf_wcol_append_x(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, const void *vals,
                             const uint8_t *valid, size_t vbit0, size_t k, uint64_t g, tsf_error *err);
/*
 * Columns cs[0..m) (non-aligned, or aligned value columns of one device) of a tablet, all rows
 * present (no validity), rows [0, k): the same as m tsf_wcol_append_x calls, but the statistics of
 * four columns of one numeric type are computed together (tsf_wstats_update4), page segment by
 * page segment (aligned: k rows never cross the device's page).
 */
tsf_status tsf_wcol_append_group(tsf_writer *w, wctx *x, wcol *const *cs, const void *const *vals, size_t m,
                                 const int64_t *times, size_t k, uint64_t g, tsf_error *err);
/* Seals the pending page (rows = aligned page rows, 0 for non-aligned). */
tsf_status tsf_wcol_seal(tsf_writer *w, wcol *c, size_t rows, tsf_error *err);
tsf_status tsf_wcol_seal_x(tsf_writer *w, wctx *x, wcol *c, size_t rows, tsf_error *err);
/* Copies a dense column's pending times out of dev->dt into its own buffer. */
tsf_status tsf_wcol_own_times(tsf_writer *w, wctx *x, wcol *c, tsf_error *err);
/* Encoding contexts (writer.c). */
tsf_status tsf_wctx_init(tsf_writer *w, wctx *x, tsf_error *err);
void tsf_wctx_free(wctx *x);
/* Writes the chunk (header + pages) and records its metadata; `force` writes a 0-byte chunk. */
tsf_status tsf_wcol_flush_chunk(tsf_writer *w, wcol *c, int force, tsf_error *err);
/* Has the pending page reached the byte limit? */
int tsf_wcol_full(const tsf_writer *w, const wcol *c);

/* Writes a chunk set `k` of column c (its `ck`, or its `out` on the output thread, context x). */
tsf_status tsf_wcol_flush_chunk_k(tsf_writer *w, wctx *x, wcol *c, wchunk *k, int force, tsf_error *err);
void tsf_wchunk_init(tsf_writer *w, wchunk *k, tsf_type type);
void tsf_wchunk_free(tsf_writer *w, wchunk *k);

/* write path (tablet_write.c) */
/* Writes every chunk group now (after the output thread's pending one). */
tsf_status tsf_w_flush_all(tsf_writer *w, tsf_error *err);
/* Joins the tail of the last tablet that the workers run after its write call returned, then does that
 * tablet's memory budget check; every writer call that reads or changes columns starts here. */
tsf_status tsf_w_settle(tsf_writer *w, tsf_error *err);
tsf_status tsf_w_seal_device(tsf_writer *w, wdevice *d, tsf_error *err);
/* qsort order of wdevice pointers: tsf_mi_device_cmp, the order of chunk groups and of the metadata index. */
int tsf_w_device_cmp(const void *a, const void *b);
/* Milliseconds of CLOCK_MONOTONIC (the flush interval's clock; writer.c). */
uint64_t tsf_w_now_ms(void);

/* worker pool (workers.c; threads > 1): started at open, stopped (after the pending output) on close/abort */
tsf_status tsf_w_pool_start(tsf_writer *w, tsf_error *err);
void tsf_w_pool_stop(tsf_writer *w);
/* Waits for the chunk groups the output thread is writing; returns its error, if any. */
tsf_status tsf_w_out_wait(tsf_writer *w, tsf_error *err);

/* page-time index at close (writer_pix.c; opt.page_index, a writer with a path) */
tsf_status tsf_wpix_init(tsf_writer *w, tsf_error *err);
void tsf_wpix_free(tsf_writer *w);
/* Records chunk k of column c just written at off: its hlen-byte header, then np pages (their statistics are
 * still in k). Output order: one thread at a time. */
tsf_status tsf_wpix_chunk(tsf_writer *w, const wcol *c, const wchunk *k, uint64_t off, size_t hlen, size_t np,
                          tsf_error *err);
/* Writes <path>.tsfidx of the finished (closed, renamed) file; data_end: where the metadata starts. */
tsf_status tsf_wpix_write(tsf_writer *w, uint64_t data_end, tsf_error *err);

/* devices (writer.c) */
wdevice *tsf_w_find_device(tsf_writer *w, const tsf_mi_seg *segs, size_t nsegs, size_t *hash_out);
tsf_status tsf_w_add_device(tsf_writer *w, const tsf_mi_seg *segs, size_t nsegs, int aligned, int table,
                            wdevice **out, tsf_error *err);
tsf_status tsf_w_split_path(tsf_writer *w, const char *path, tsf_mi_seg *segs, size_t *nsegs, char *buf,
                            tsf_error *err);
int tsf_w_table_index(const tsf_writer *w, const char *name);

#define TSF_W_MAX_SEGS 64

#endif
