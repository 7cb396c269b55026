/*
 * dataset_internal.h - the state of a tsf_dataset shared by dataset.c (open: path expansion, the schema
 * union, per-file and per-series ranges, accessors) and dataset_query.c (queries and folds over the files).
 * Everything here is built at open and read-only afterwards.
 */
#ifndef TSF_READ_DATASET_INTERNAL_H
#define TSF_READ_DATASET_INTERNAL_H

#include "reader_internal.h"

/* A series of a file's device: its measurement (index in the dataset device's series) and range. */
typedef struct tsf_ds_fser {
    size_t ser;
    int64_t tmin, tmax;
    uint64_t count;
} tsf_ds_fser;

/* A device of a file: dataset device, index in the file's reader, range (aligned: the time column), and
 * its series sers[ser0, ser0 + nser) of the file. */
typedef struct tsf_ds_fdev {
    size_t dev, local;
    int64_t tmin, tmax;
    size_t ser0, nser;
} tsf_ds_fdev;

typedef struct tsf_ds_file {
    const char *path;
    uint64_t size;
    int64_t tmin, tmax;
    uint64_t points;
    tsf_ds_fdev *devs; /* ascending by dataset device (= the reader's order, see dataset.c) */
    size_t ndevs;
    tsf_ds_fser *sers;
    size_t nsers;
} tsf_ds_file;

typedef struct tsf_ds_series {
    const char *name;
    tsf_type type;
    int64_t tmin, tmax;
    uint64_t count;
    size_t nfiles, first_file;
} tsf_ds_series;

typedef struct tsf_ds_device {
    const char *name;
    size_t table;
    int aligned;
    int64_t tmin, tmax;
    size_t nfiles, first_file;
    tsf_ds_series *sers; /* ascending by name */
    size_t nser, sercap;
    tsf_bytes *segs; /* segments of the device id (data NULL = null segment) */
    size_t nsegs;
} tsf_ds_device;

typedef struct tsf_ds_table {
    const char *name;
    tsf_table_column *cols;
    size_t ncols, colcap;
    size_t *col_file; /* per column: the file that introduced it */
    size_t first_device, ndevices;
} tsf_ds_table;

/* What the dataset takes from one file (tsf_dataset_open merges it): read from the file's index
 * (dataset.c) or from a metadata cache entry (dataset_cache.c). Strings are NUL-terminated and borrowed
 * from the reader or the cache buffer. */
typedef struct tsf_ds_sum_table {
    const char *name;
    const tsf_table_column *cols;
    size_t ncols;
} tsf_ds_sum_table;

typedef struct tsf_ds_sum_dev {
    const char *name;
    size_t table; /* index in the file's tables */
    int aligned;
    uint64_t tcount; /* aligned: the time column's statistics */
    int64_t tmin, tmax;
    const tsf_fmt_str *segs; /* the device id's segments */
    size_t nsegs;
    size_t ser0, nser; /* its series sers[ser0, ser0 + nser) */
} tsf_ds_sum_dev;

typedef struct tsf_ds_sum_ser {
    const char *name;
    tsf_type type;
    uint64_t count;
    int64_t tmin, tmax;
} tsf_ds_sum_ser;

typedef struct tsf_ds_sum {
    uint64_t size;
    const tsf_ds_sum_table *tables;
    size_t ntables;
    const tsf_ds_sum_dev *devs;
    size_t ndevs;
    const tsf_ds_sum_ser *sers;
    size_t nsers;
} tsf_ds_sum;

/* A file's identity: an entry is used only while all of it matches the file system's. */
typedef struct tsf_ds_ident {
    uint64_t size, ino, dev;
    int64_t mtime_s, ctime_s;
    uint32_t mtime_ns, ctime_ns;
} tsf_ds_ident;

typedef struct tsf_ds_cache tsf_ds_cache;

/* Loads the cache file at path, taking the wall clock (racy entries, see dataset_cache.c): a missing file is
 * an empty cache, a damaged or unreadable one too (why in st->cache_load). Fails only on TSF_ENOMEM
 * (*out then still to be freed). */
tsf_status tsf_rd_dsc_load(tsf_ds_cache **out, const tsf_allocator *a, const char *path,
                           tsf_dataset_open_stats *st, tsf_error *err);
/* The summary of path when its entry's identity equals id: 1 (filled; valid until the next lookup or
 * free), 0 (no such entry), or a status < 0. */
int tsf_rd_dsc_lookup(tsf_ds_cache *c, const char *path, const tsf_ds_ident *id, tsf_ds_sum *out, tsf_error *err);
/* Records the summary read from the file as path's entry: 0, 1 when the identity is racy (modified within
 * the granularity window: left out), -1 when it could not (out of memory: the cache is then not saved). */
int tsf_rd_dsc_record(tsf_ds_cache *c, const char *path, const tsf_ds_ident *id, const tsf_ds_sum *s);
/* Writes the cache (the entries looked up or recorded since load) when it changed; errors go to st. */
void tsf_rd_dsc_save(tsf_ds_cache *c, const char *path, tsf_dataset_open_stats *st);
void tsf_rd_dsc_free(tsf_ds_cache *c);
/* Parses a cache image (the fuzz harness): TSF_OK with the number of entries, or TSF_ECORRUPT. With
 * fix_crc the checksum is recomputed first (in place) so the structure behind it is reached. */
tsf_status tsf_rd_dsc_check_image(const tsf_allocator *a, uint8_t *img, size_t len, int fix_crc, size_t *entries,
                                  tsf_error *err);

struct tsf_dataset {
    const tsf_allocator *a;
    tsf_reader_options ropts;
    int (*open_source)(void *ctx, const char *path, tsf_read_callbacks *cb);
    void (*close_source)(void *ctx, void *ud);
    void *source_ctx;
    tsf_reader_pool *pool; /* tsf_dataset_options.reader_pool (borrowed), or NULL */
    struct tsf_ds_arena *arena; /* names and paths */
    tsf_ds_file *files;
    size_t nfiles, filecap;
    tsf_ds_table *tables;
    size_t ntables, tablecap;
    tsf_ds_device *devs;
    size_t ndevs, devcap;
    size_t *hash; /* open addressing over device names: index + 1, 0 = empty */
    size_t hcap;
    tsf_dataset_open_stats ostats;
};

/* Where a file's bytes come from while a reader reads it. */
typedef struct tsf_ds_src {
    tsf_read_callbacks cb; /* a user source's callbacks, or pread on fd */
    int fd;                /* the file system's file read through cb (-1: none) */
    int user;              /* 1: cb came from open_source (close_source is owed) */
    int pooled;            /* 1: the reader came from the dataset's reader pool (released, not closed) */
} tsf_ds_src;

/* Opens a reader on path: through the dataset's source when it has one, else the dataset's reader pool when
 * it has one and there is no wrap, else the file system. With wrap,
 * the reader reads through wrap(wctx, &src->cb) instead (a file of the file system then through pread
 * callbacks); the callbacks it returns must stay valid until tsf_rd_ds_close_file. */
tsf_status tsf_rd_ds_open_file(const tsf_dataset *ds, const char *path, const tsf_reader_options *ro,
                               const tsf_read_callbacks *(*wrap)(void *wctx, const tsf_read_callbacks *base),
                               void *wctx, tsf_ds_src *src, tsf_reader **r, tsf_error *err);
void tsf_rd_ds_close_file(const tsf_dataset *ds, tsf_ds_src *src, tsf_reader *r);
/* Device index by name (hash), or (size_t)-1. */
size_t tsf_rd_ds_find(const tsf_dataset *ds, const char *name);
/* Prefixes err's message with the file's path. */
tsf_status tsf_rd_ds_name_file(tsf_status st, const char *path, tsf_error *err);

/*
 * The fold of the dataset aggregation (dataset_agg.c): tsf_dataset_fold whose fold callback also gets the
 * file's query, to ask which chunk and page each batch column comes from (tsf_rd_query_col_unit), and, when
 * unit is set and the query has no value filter, whose files' queries offer every whole chunk and page to
 * unit before reading it (the statistics answers of query_internal.h), with the file's accumulator and the
 * dataset device. Both run on the thread that folds the file.
 */
typedef struct tsf_rd_ds_fold_ext {
    int (*fold_q)(void *ctx, void *acc, const tsf_dataset_batch *b, const tsf_query *q);
    int (*unit)(void *ctx, void *acc, size_t device, const char *column, tsf_type type, const tsf_fmt_stats *s,
                int enc, uint64_t chunk_off, uint64_t page_off);
} tsf_rd_ds_fold_ext;

tsf_status tsf_rd_ds_fold(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                          const tsf_dataset_fold_callbacks *cb, const tsf_rd_ds_fold_ext *ext, void **result,
                          tsf_dataset_query_stats *stats, tsf_error *err);

#endif
