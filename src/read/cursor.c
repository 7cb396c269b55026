/*
 * cursor.c - the row cursor: a thin layer over the batch iterator of query.c that walks the rows
 * of each batch and hands out one cell at a time as a tsf_value.
 *
 * Per-row cost matters (`tsf-bench read`, row path): at each new batch the cursor caches, per column, the values and
 * validity pointers and a small kind code, so tsf_cursor_next is a compare and an increment within a batch
 * and the typed accessors are one bounds check, one validity bit and one load.
 */
#include <string.h>

#include "../common/compiler.h"
#include "reader_internal.h"

enum { CK_OTHER, CK_I64, CK_I32, CK_BOOL, CK_F64, CK_F32 };

typedef struct cur_col {
    const uint8_t *vals, *valid;
    int kind;
} cur_col;

struct tsf_cursor {
    const tsf_allocator *a;
    tsf_query *q;
    const tsf_batch *b;
    size_t row, nrows; /* current row of b and its row count (0 without a batch) */
    const int64_t *times;
    size_t ncols; /* columns of b (0 without a batch) */
    cur_col *cols;
    size_t cols_cap;
};

static int col_kind(tsf_type t)
{
    switch (t) {
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return CK_I64;
    case TSF_INT32:
    case TSF_DATE:
        return CK_I32;
    case TSF_BOOLEAN:
        return CK_BOOL;
    case TSF_DOUBLE:
        return CK_F64;
    case TSF_FLOAT:
        return CK_F32;
    default:
        return CK_OTHER;
    }
}

tsf_status tsf_cursor_open(tsf_reader *r, const tsf_query_options *opts, tsf_cursor **out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_cursor_open: reader and out are required");
    *out = NULL;
    tsf_cursor *c = tsf_calloc(r->a, 1, sizeof *c);
    if (!c) return tsf_err(err, TSF_ENOMEM, "cursor: out of memory");
    c->a = r->a;
    tsf_status st = tsf_query_open(r, opts, &c->q, err);
    if (st) {
        tsf_free(c->a, c, sizeof *c);
        return st;
    }
    *out = c;
    return TSF_OK;
}

/* Takes the next batch and caches its column views. */
static tsf_status refill(tsf_cursor *c, int *has_row, tsf_error *err)
{
    c->row = c->nrows = c->ncols = 0;
    tsf_status st;
    do /* a batch has rows; an empty one would not be a row */
        st = tsf_query_next(c->q, &c->b, err);
    while (!st && c->b && c->b->nrows == 0);
    if (st || !c->b) {
        c->b = NULL;
        *has_row = 0;
        return st;
    }
    const tsf_batch *b = c->b;
    if (b->ncolumns > c->cols_cap) {
        cur_col *n = tsf_realloc(c->a, c->cols, c->cols_cap * sizeof *n, b->ncolumns * sizeof *n);
        if (!n) {
            c->b = NULL;
            *has_row = 0;
            return tsf_err(err, TSF_ENOMEM, "cursor: out of memory");
        }
        c->cols = n;
        c->cols_cap = b->ncolumns;
    }
    for (size_t k = 0; k < b->ncolumns; k++)
        c->cols[k] = (cur_col){b->columns[k].values, b->columns[k].validity, col_kind(b->columns[k].type)};
    c->ncols = b->ncolumns;
    c->nrows = b->nrows;
    c->times = b->times;
    *has_row = 1;
    return TSF_OK;
}

tsf_status tsf_cursor_next(tsf_cursor *c, int *has_row, tsf_error *err)
{
    if (TSF_UNLIKELY(!c || !has_row))
        return tsf_err(err, TSF_EINVAL, "tsf_cursor_next: cursor and has_row are required");
    if (TSF_LIKELY(c->row + 1 < c->nrows)) {
        c->row++;
        *has_row = 1;
        return TSF_OK;
    }
    return refill(c, has_row, err);
}

int64_t tsf_cursor_time(const tsf_cursor *c)
{
    return c && c->nrows ? c->times[c->row] : 0;
}

size_t tsf_cursor_device(const tsf_cursor *c)
{
    return c && c->b ? c->b->device : 0;
}

size_t tsf_cursor_column_count(const tsf_cursor *c)
{
    return c ? c->ncols : 0;
}

const char *tsf_cursor_column_name(const tsf_cursor *c, size_t col)
{
    if (!c || !c->b || col >= c->b->ncolumns) return NULL;
    return c->b->columns[col].name;
}

tsf_status tsf_cursor_value(const tsf_cursor *c, size_t col, tsf_type *type, tsf_value *v, tsf_error *err)
{
    if (!c || !c->b || !v) return tsf_err(err, TSF_ESTATE, "tsf_cursor_value: no current row");
    if (col >= c->b->ncolumns)
        return tsf_err(err, TSF_EINVAL, "column %zu: the row has %zu", col, c->b->ncolumns);
    const tsf_column_batch *cb = &c->b->columns[col];
    size_t r = c->row;
    memset(v, 0, sizeof *v);
    if (type) *type = cb->type;
    v->is_null = !((cb->validity[r >> 3] >> (r & 7)) & 1);
    if (v->is_null) return TSF_OK;
    switch (cb->type) {
    case TSF_BOOLEAN:
        v->v.b = ((const uint8_t *)cb->values)[r] != 0;
        break;
    case TSF_INT32:
    case TSF_DATE:
        v->v.i32 = ((const int32_t *)cb->values)[r];
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        v->v.i64 = ((const int64_t *)cb->values)[r];
        break;
    case TSF_FLOAT:
        v->v.f = ((const float *)cb->values)[r];
        break;
    case TSF_DOUBLE:
        v->v.d = ((const double *)cb->values)[r];
        break;
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB:
        v->v.bytes = ((const tsf_bytes *)cb->values)[r];
        break;
    default:
        v->is_null = 1;
        break;
    }
    return TSF_OK;
}

TSF_INLINE int cell_valid(const cur_col *k, size_t r)
{
    return (k->valid[r >> 3] >> (r & 7)) & 1;
}

/* Typed accessors: no tsf_value to clear, no error path; a null or unfitting cell reads as absent. */
int tsf_cursor_int64(const tsf_cursor *c, size_t col, int64_t *out)
{
    if (TSF_UNLIKELY(!c || col >= c->ncols)) return 0;
    const cur_col *k = &c->cols[col];
    size_t r = c->row;
    if (!cell_valid(k, r)) return 0;
    if (TSF_LIKELY(k->kind == CK_I64)) {
        *out = ((const int64_t *)k->vals)[r];
        return 1;
    }
    if (k->kind == CK_I32) {
        *out = ((const int32_t *)k->vals)[r];
        return 1;
    }
    if (k->kind == CK_BOOL) {
        *out = k->vals[r] != 0;
        return 1;
    }
    return 0;
}

int tsf_cursor_double(const tsf_cursor *c, size_t col, double *out)
{
    if (TSF_UNLIKELY(!c || col >= c->ncols)) return 0;
    const cur_col *k = &c->cols[col];
    size_t r = c->row;
    if (!cell_valid(k, r)) return 0;
    switch (k->kind) {
    case CK_F64:
        *out = ((const double *)k->vals)[r];
        return 1;
    case CK_F32:
        *out = ((const float *)k->vals)[r];
        return 1;
    case CK_I64:
        *out = (double)((const int64_t *)k->vals)[r];
        return 1;
    case CK_I32:
        *out = ((const int32_t *)k->vals)[r];
        return 1;
    default:
        return 0;
    }
}

void tsf_cursor_get_stats(const tsf_cursor *c, tsf_query_stats *out)
{
    if (c) tsf_query_get_stats(c->q, out);
}

void tsf_cursor_close(tsf_cursor *c)
{
    if (!c) return;
    tsf_query_close(c->q);
    tsf_free(c->a, c->cols, c->cols_cap * sizeof *c->cols);
    tsf_free(c->a, c, sizeof *c);
}
