/*
 * tsf_arrow.h - queries of tsfile-c as Arrow C Stream (struct ArrowArrayStream) of record batches.
 *
 * The structs below are the ABI of the Arrow C data interface and C stream interface, declared under the
 * standard ARROW_C_DATA_INTERFACE / ARROW_C_STREAM_INTERFACE guards: a program that includes Arrow's own
 * header (or nanoarrow's) first uses those definitions, which are the same, and links with this library.
 *
 * A stream yields one struct array (format "+s") per batch of the underlying tsf_query (tsf_dataset_query for
 * a dataset): the time column, then (tree model) the device, or (table model) the TAG columns, then the value
 * columns. Every array owns its buffers (one 64-byte aligned allocation per batch, shared by the array and its
 * children through a reference count, and with zero_copy the decode buffers its fixed-width columns point
 * into, also reference counted): arrays, their children and schemas may be released in any order, before
 * or after the stream, from any thread. See doc/arrow.md for the types, the layout and the lifetimes.
 */
#ifndef TSF_ARROW_H
#define TSF_ARROW_H

#include <stdint.h>

#include "tsf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the Arrow C data interface (ABI-stable definitions) ---------------------------------- */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---- export of queries ------------------------------------------------------------------- */

/** Unit of the time column and of TIMESTAMP columns. TsFile does not record it; the values are passed
 *  through unchanged and only labelled ("tsm:UTC", "tsu:UTC", "tsn:UTC"). */
typedef enum tsf_arrow_time_unit {
    TSF_ARROW_MILLI = 0, /* default */
    TSF_ARROW_MICRO = 1,
    TSF_ARROW_NANO = 2,
} tsf_arrow_time_unit;

typedef struct tsf_arrow_options {
    size_t struct_size;              /* sizeof(tsf_arrow_options) */
    /* The query: devices (explicit, a table, or all), columns, time range, batch size, filter, threads
     * (NULL = defaults: every device, every column, all times). Read during the call: the stream keeps its
     * own copies of the names and of the filter, so nothing it points to needs to outlive the call except
     * query->page_index (borrowed by the query, as in tsf_query_open). */
    const tsf_query_options *query;
    tsf_arrow_time_unit time_unit;   /* TSF_ARROW_MILLI */
    int device_column;               /* tree model: 1 (default) = a "device" column (utf8) after the time;
                                      * 0 = none (one stream per device: set query->devices to one device) */
    const char *time_name;           /* name of the time column; NULL = "time" (copied) */
    /* Allocator of the stream's state and of every exported buffer and schema (NULL = malloc). The hook
     * table is copied; its functions and ud must stay usable until the last array and schema is released. */
    const tsf_allocator *allocator;
    /* 1 (default): where the query can hand a batch's decode buffers over (tsf_query_next_owned: a query
     * without filter and threads, no TEXT/STRING/BLOB column), the time column and the fixed-width value
     * columns (INT32, INT64, FLOAT, DOUBLE, TIMESTAMP) point into them instead of being copied (aligned to
     * their element width, not to 64 bytes); the stream reads whole pages and slices them into arrays of
     * batch_size rows, so the arrays are the same as with 0. 0: every batch copied into its own block. */
    int zero_copy;
} tsf_arrow_options;

/** Fills the defaults. */
TSF_API void tsf_arrow_options_init(tsf_arrow_options *o);

/**
 * Exports a query of r as an Arrow stream in *out (the caller's struct; release it with out->release).
 * The columns are fixed here: every error a query's options can cause (unknown table or column, a filter
 * that does not bind, types of a tree series that differ between devices) is returned now, and a stream
 * is only filled on TSF_OK. r is borrowed: it must stay open until the stream is released (arrays and
 * schemas already exported do not need it).
 */
TSF_API tsf_status tsf_arrow_stream_open(tsf_reader *r, const tsf_arrow_options *opts, struct ArrowArrayStream *out,
                                         tsf_error *err);

/** tsf_arrow_stream_open on a reader it opens at path (reader_opts may be NULL) and owns: the stream's
 *  release closes it. For bindings that hand the stream on (Python's __arrow_c_stream__, a DuckDB scan). */
TSF_API tsf_status tsf_arrow_stream_open_file(struct ArrowArrayStream *out, const char *path,
                                              const tsf_reader_options *reader_opts, const tsf_arrow_options *opts,
                                              tsf_error *err);

/** The schema a stream with these options would have ("+s" with one child per column), without opening a
 *  query. The caller releases it with out->release. */
TSF_API tsf_status tsf_arrow_schema(tsf_reader *r, const tsf_arrow_options *opts, struct ArrowSchema *out,
                                    tsf_error *err);

/* ---- export of dataset queries (many files as one, tsf.h "datasets") ------------------------ */

/**
 * Exports a query of dataset ds as an Arrow stream in *out: q is the dataset query (NULL = every device,
 * every column, all times; threads and files_at_once as in tsf_dataset_query_open), opts the Arrow options
 * (NULL = defaults; opts->query must be NULL). The columns are those of the dataset's union schema (table
 * model: time, the table's TAG and FIELD columns; tree model: time, device, the union of the selected
 * devices' series), a column a file lacks reading as null; the rows are the dataset query's, in its order
 * (file order, then each file's device order, then time), whatever threads and files_at_once are. Open
 * errors are returned now; an error of a file while the stream runs fails get_next, get_last_error naming
 * the file. ds is borrowed: it must stay open until the stream is released.
 */
TSF_API tsf_status tsf_arrow_dataset_stream_open(tsf_dataset *ds, const tsf_dataset_query_options *q,
                                                 const tsf_arrow_options *opts, struct ArrowArrayStream *out,
                                                 tsf_error *err);

/** tsf_arrow_dataset_stream_open on a dataset it opens from paths[0..n) (as tsf_dataset_open; ds_opts may be
 *  NULL) and owns: the stream's release closes it. */
TSF_API tsf_status tsf_arrow_dataset_stream_open_paths(struct ArrowArrayStream *out, const char *const *paths,
                                                       size_t n, const tsf_dataset_options *ds_opts,
                                                       const tsf_dataset_query_options *q,
                                                       const tsf_arrow_options *opts, tsf_error *err);

/** The schema of such a stream, without opening a query. The caller releases it with out->release. */
TSF_API tsf_status tsf_arrow_dataset_schema(tsf_dataset *ds, const tsf_dataset_query_options *q,
                                            const tsf_arrow_options *opts, struct ArrowSchema *out, tsf_error *err);

/** Days since 1970-01-01 of a TsFile DATE value (yyyyMMdd, proleptic Gregorian calendar, years 1..9999),
 *  by arithmetic alone (no time zone, no C library calendar). Returns 0 and sets *days for a valid date,
 *  -1 for a value that is no date (month 13, February 30, ...). */
TSF_API int tsf_arrow_date_days(int32_t yyyymmdd, int32_t *days);

#ifdef __cplusplus
}
#endif
#endif /* TSF_ARROW_H */
