/*
 * arrow_internal.h - the Arrow export layer (include/tsf_arrow.h) above the reader: the column list of a
 * stream (columns.c, from a reader's or a dataset's metadata and the query options), the exported schema
 * (columns.c) and the stream with its arrays (stream.c). This layer uses the reader and the dataset only
 * through their public API.
 */
#ifndef TSF_ARROW_INTERNAL_H
#define TSF_ARROW_INTERNAL_H

#include <stdatomic.h>

#include "../common/internal.h"
#include "tsf_arrow.h"

/* Where a column's values come from. */
typedef enum acol_kind {
    AC_TIME,   /* the batch's times */
    AC_DEVICE, /* tree model: the device's name */
    AC_TAG,    /* table model: segment 1 + src of the device id (the src-th TAG column) */
    AC_VALUE,  /* batch column src */
} acol_kind;

typedef struct acol {
    acol_kind kind;
    tsf_type type; /* value type (AC_TIME: TSF_TIMESTAMP; AC_DEVICE, AC_TAG: TSF_STRING) */
    size_t src;
    const char *name; /* in the column set's name pool */
} acol;

/* The columns of a stream and what its query reads. */
typedef struct acols {
    acol *cols;
    size_t ncols, cap;
    const char **qnames; /* the value columns' names, in batch order (the query's column list) */
    size_t nq;
    char *pool; /* names */
    size_t pool_size;
    tsf_arrow_time_unit unit;
} acols;

/* Reads and checks the options (NULL = defaults) into *o. */
tsf_status tsf_ar_options(const tsf_arrow_options *in, tsf_arrow_options *o, tsf_error *err);
/* Builds the column list of a stream over the devices the query selects. */
tsf_status tsf_ar_columns(tsf_reader *r, const tsf_arrow_options *o, const tsf_allocator *a, acols *out,
                          tsf_error *err);
/* The same over a dataset's union schema, for the devices the dataset query q selects. */
tsf_status tsf_ar_dataset_columns(const tsf_dataset *d, const tsf_dataset_query_options *q,
                                  const tsf_arrow_options *o, const tsf_allocator *a, acols *out, tsf_error *err);
void tsf_ar_columns_free(acols *c, const tsf_allocator *a);
/* Exports the schema of the columns into *out ("+s", one child per column); TSF_ENOMEM only. */
tsf_status tsf_ar_schema(const acols *c, const tsf_allocator *a, struct ArrowSchema *out, tsf_error *err);

/* Decode buffers a query handed over (tsf_query_next_owned), shared by the arrays that point into them and
 * by the stream while it slices their batch: freed with the last reference. */
typedef struct aowned {
    atomic_size_t refs;
    tsf_batch_owned *o;
    tsf_allocator a;
    int has_a;
} aowned;

void tsf_ar_owned_unref(aowned *w);

/* A block shared by an exported struct and its children: released when the last of them is (and then its
 * reference to `own`, the decode buffers some of its buffers point into, if any). The hook table is a
 * copy, so the caller's may go away. */
typedef struct ablock {
    atomic_size_t refs;
    tsf_allocator a;
    int has_a;
    void *raw;
    size_t raw_size;
    aowned *own;
} ablock;

/* Allocates size bytes whose start (the ablock) is 64-byte aligned, refs = 1; NULL on ENOMEM. */
ablock *tsf_ar_block_new(const tsf_allocator *a, size_t size);
/* Drops one reference; frees the block with the last. */
void tsf_ar_block_unref(ablock *b);

static inline size_t tsf_ar_align64(size_t n) { return (n + 63) & ~(size_t)63; }

#endif
