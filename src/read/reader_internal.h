/*
 * reader_internal.h - private state of tsf_reader shared by the reader's files (reader.c: open,
 * I/O, index loading, metadata API; query*.c: batch scans; cursor.c: the row cursor).
 */
#ifndef TSF_READER_INTERNAL_H
#define TSF_READER_INTERNAL_H

#include <pthread.h>

#include "../common/internal.h"
#include "../format/format.h"
#include "../format/meta_index_parse.h"

/* A growable scratch buffer owned by one query (or by the reader during open/load). A fetch through it
 * is served from the window [woff, woff + wlen) at wp when it lies inside (a chunk read whole with one
 * read, see query_scan.c); wlen = 0: no window. */
typedef struct tsf_rd_buf {
    uint8_t *p;
    size_t cap;
    const uint8_t *wp;
    uint64_t woff;
    size_t wlen;
} tsf_rd_buf;

/* Ensures cap >= n; TSF_ENOMEM otherwise. */
tsf_status tsf_rd_buf_reserve(const tsf_allocator *a, tsf_rd_buf *b, size_t n, tsf_error *err);
void tsf_rd_buf_free(const tsf_allocator *a, tsf_rd_buf *b);

typedef struct tsf_rd_series {
    const char *name;  /* NUL-terminated copy */
    tsf_mip_tsm tsm;   /* borrows from the reader's index buffer */
    uint32_t nchunks;
} tsf_rd_series;

typedef struct tsf_rd_device {
    tsf_fmt_device_id id; /* borrows from the reader's buffers */
    const char *name;     /* toString() */
    size_t table;
    int aligned;
    tsf_rd_series time;       /* aligned: the "" time column */
    size_t series0, nseries;
} tsf_rd_device;

typedef struct tsf_rd_table {
    const char *name;
    tsf_table_column *columns;
    size_t ncolumns;
    size_t first_device, ndevices;
} tsf_rd_table;

enum { RD_SRC_MEMORY = 0, RD_SRC_FD = 1, RD_SRC_CALLBACKS = 2 };

struct tsf_reader {
    const tsf_allocator *a;
    int src;
    const uint8_t *mem;
    int fd;
    void *map;       /* tsf_reader_open: the mapped file (src is then RD_SRC_MEMORY), NULL if read by pread */
    struct tsf_rd_pdir **pdirs; /* page directories of chunks queries read in part (query_pdir.c; under lock) */
    size_t pdirs_cap, npdirs;
    void *qspare[8];        /* buffers of closed queries, kept for the next ones (query.c; under lock) */
    size_t nqspare;
    struct tsf_rd_pool *workers; /* threads of parallel queries, kept across queries (parallel.c) */
    int workers_busy;        /* a query holds `workers` (under lock) */
    size_t map_len;
    int use_pread;
    int checked; /* tsf_reader_options.checked: the default of its queries and aggregates (check.h) */
    tsf_read_callbacks cb;
    uint64_t size;
    int version;
    tsf_codec *codec;
    uint64_t meta_pos; /* TsFileMetadata */
    uint8_t *meta;     /* TsFileMetadata bytes (owned unless the source is memory) */
    size_t meta_len;
    tsf_mip_file_meta fm;
    uint8_t *bloom;    /* ceil(size/8) bytes, zero-padded copy */

    pthread_mutex_t lock; /* guards the one-time index load */
    int loaded;           /* 0 not yet, 1 done, -1 failed (load_err holds why) */
    struct tsf_rd_lastv *lastv; /* tsf_last_value: decoded BLOB last values by series, until close (under lock) */
    tsf_error load_err;
    uint8_t *index;       /* bytes [meta_offset, meta_pos) (owned unless memory) */
    size_t index_len;
    uint64_t index_base;
    char *pool;           /* all names, NUL-terminated */
    size_t pool_len, pool_cap;
    tsf_rd_table *tables;
    size_t ntables;
    tsf_rd_device *devices;
    size_t ndevices, devices_cap;
    tsf_rd_series *series;
    size_t nseries, series_cap;
    /* the reader's own page-time index (page_index.c, tsf_reader_options.page_index) */
    char *pix_path;             /* "<path>.tsfidx" (tsf_reader_open with the option), else NULL */
    int pix_tried;              /* 1: looked for (under lock) */
    struct tsf_page_index *pix; /* opened and made for this file, else NULL */
};

/* Frees r->pdirs (query_pdir.c). */
void tsf_rd_pdir_free(tsf_reader *r);
/* Frees r->qspare (query.c). */
void tsf_rd_query_spares_free(tsf_reader *r);

/* The column buffers of closed queries carried from one reader to the next (a dataset reads its files one
 * after another: new buffers for every file cost page faults that rival the decoding). */
typedef struct tsf_rd_spare {
    void *s;
    const tsf_allocator *a;
} tsf_rd_spare;
/* Takes one of r's spares into carry (freeing what carry held); call after the reader's last query closed. */
void tsf_rd_query_spare_carry(tsf_reader *r, tsf_rd_spare *carry);
/* Leaves carry's spare to r (a reader without one, with the same allocator; freed otherwise); carry is then
 * empty. */
void tsf_rd_query_spare_leave(tsf_reader *r, tsf_rd_spare *carry);
void tsf_rd_query_spare_drop(tsf_rd_spare *carry);
/* Moves up to max of r's spares into out; returns how many (a reader no query holds: its pool keeps them). */
size_t tsf_rd_query_spares_take(tsf_reader *r, tsf_rd_spare *out, size_t max);
/* Gives sp's spare to r when r has none and the same allocator (sp is then empty); returns 1 if given. */
int tsf_rd_query_spare_give(tsf_reader *r, tsf_rd_spare *sp);
/* Memory a kind of query keeps between its calls, banked in a reader pool (reader_pool.c; the dataset
 * aggregation's tables). kind: the address of the keeper's tag. take: the most recently banked item of that
 * kind, or NULL. give: 0 when banked (the pool calls drop(mem) when it is cleared or freed), -1 when the bank is
 * full or p is NULL (mem stays the caller's). */
void *tsf_rd_pool_keep_take(tsf_reader_pool *p, const void *kind);
int tsf_rd_pool_keep_give(tsf_reader_pool *p, const void *kind, void *mem, void (*drop)(void *mem));
/* Joins and frees r->workers (parallel.c). */
void tsf_rd_workers_free(tsf_reader *r);
/* Fetches [off, off+len) of the file: a pointer into memory or into buf after a read. */
tsf_status tsf_rd_fetch(const tsf_reader *r, uint64_t off, size_t len, tsf_rd_buf *buf, const uint8_t **out, tsf_error *err);
/* Loads the index once (thread-safe). */
tsf_status tsf_rd_ensure_index(tsf_reader *r, tsf_error *err);
/* Bytes of one value in the C representation of tsf.h. */
/* Bytes per cell of a batch column: tsf_type_size(), and sizeof(tsf_bytes) for a column the device lacks
 * (type TSF_VECTOR: all null, its values a run of zeros as wide as the widest cell). */
static inline size_t tsf_rd_cell_size(tsf_type t)
{
    size_t n = tsf_type_size(t);
    return n ? n : sizeof(tsf_bytes);
}
/* 1 if statistics of `type` encoded with `enc` cannot be trusted (lossy float forms). */
int tsf_rd_lossy(tsf_type type, tsf_encoding enc);

/* Chunk header at `off` (bounds: the data area). data_pos and data_end delimit its pages. */
tsf_status tsf_rd_read_chunk_header(const tsf_reader *r, uint64_t off, tsf_rd_buf *buf, tsf_fmt_chunk_header *h,
                                uint64_t *data_pos, uint64_t *data_end, uint64_t *fetched, tsf_error *err);
/* Page header at `pos` inside a chunk ending at `end`. */
tsf_status tsf_rd_read_page_header(const tsf_reader *r, uint64_t pos, uint64_t end, const tsf_fmt_chunk_header *h,
                               tsf_rd_buf *buf, tsf_fmt_page_header *ph, uint64_t *fetched, tsf_error *err);
/* page_index_dir.c: the `*.tsfile` names of folder dir in strcmp order (*out and each name malloc'ed; the
 * caller frees them); TSF_EIO when the folder cannot be opened. */
tsf_status tsf_rd_list_tsfiles(const char *dir, char ***out, size_t *n, tsf_error *err);
/* Frees r->lastv (last_value.c). */
void tsf_rd_lastv_free(tsf_reader *r);
/* Fetches the body of page ph (at body_off, chunk h) into body and decompresses it into plain (size capped
 * against the compressed size): *p / *len are the uncompressed bytes. Adds to *fetched and *decompressed. */
tsf_status tsf_rd_load_page(const tsf_reader *r, tsf_compressor *comp, const tsf_fmt_chunk_header *h,
                        const tsf_fmt_page_header *ph, uint64_t body_off, tsf_rd_buf *body, tsf_rd_buf *plain,
                        const uint8_t **p, size_t *len, uint64_t *fetched, uint64_t *decompressed, tsf_error *err);

#endif
