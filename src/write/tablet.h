/*
 * tablet.h - the tablet (a batch of rows by column) inside the writer: what tablet.c (the tablet object:
 * creation, setters, sorting), tablet_write.c (the write path) and workers.c (the worker pool) share.
 */
#ifndef TSF_WRITE_TABLET_H
#define TSF_WRITE_TABLET_H

#include "writer.h"

typedef struct tcol {
    size_t idx;      /* tree: index in dev->cols; table: index in table columns */
    tsf_type type;
    size_t width;
    int category;    /* table: TAG/FIELD/ATTRIBUTE; tree: FIELD */
    size_t field;    /* table FIELD: index in device cols */
} tcol;

typedef struct arena_block {
    struct arena_block *next;
    size_t cap, used;
} arena_block;

struct tsf_tablet {
    tsf_writer *w;
    wdevice *dev; /* tree target */
    int table;    /* table target, or -1 */
    size_t ncols;
    tcol *cols;
    size_t cap, rows;
    int64_t *times;
    uint8_t **vals;  /* values of each column: own[i], or the caller's array (tsf_tablet_set_column_ref) */
    uint8_t **own;   /* the tablet's buffers (capacity rows) */
    size_t *refn;    /* rows of a borrowed array */
    uint8_t **valid; /* LSB-first presence bits */
    arena_block *arena;
    /* sort / table scratch */
    size_t *perm;
};

/* Bit i of an LSB-first presence bitmap. */
static inline int vbit(const uint8_t *v, size_t i) { return (v[i >> 3] >> (i & 7)) & 1; }

/* ---- tablet.c ---- */

/* Presence bits of column col when rows [a, b) have a null, NULL when all of them are present. */
const uint8_t *tsf_wt_valid_or_null(const tsf_tablet *t, size_t col, size_t a, size_t b);
/* Device id segments of table row r (the table name, then its tag values; trailing nulls stripped): count. */
size_t tsf_wt_row_segs(const tsf_tablet *t, const wtable *tb, size_t r, tsf_mi_seg *segs);
/* Rows a and b of a table tablet have the same tags (same device). */
int tsf_wt_same_tags(const tsf_tablet *t, size_t a, size_t b);
/* The stable sort of tsf_writer_options.sort_tablets (by device, then time; the last duplicate wins). */
tsf_status tsf_wt_sort(tsf_tablet *t, tsf_error *err);
/* Every column fixed-width (binary values point into the tablet's arena: not staged). */
int tsf_wt_fixed_width(const tsf_tablet *t);

/* ---- tablet_write.c ---- */

/* Appends n columns (at most 64) of one batch of rows: cs[i] gets vals[i] with presence valid[i] (NULL = every
 * row present); runs of columns without nulls go through tsf_wcol_append_group. skip_auto leaves AUTO columns out. */
tsf_status tsf_wt_append_run(tsf_writer *w, wctx *x, wcol *const *cs_in, const void *const *vals,
                             const uint8_t *const *valid, size_t n, const int64_t *times, size_t rows, uint64_t g,
                             int skip_auto, tsf_error *err);
/* Appends tablet columns [lo, hi) (at most 64) of a non-aligned tree tablet. */
tsf_status tsf_wt_append_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, size_t lo, size_t hi, uint64_t g,
                              int skip_auto, tsf_error *err);
/* Appends tablet rows [r, r + k) to device columns [lo, hi) of an aligned device (feed: the tablet column of
 * each, SIZE_MAX = absent: null rows). Columns touch only their own state: jobs of the pool. */
tsf_status tsf_wt_aligned_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, const size_t *feed, size_t lo,
                               size_t hi, size_t r, size_t k, tsf_error *err);

#endif
