/*
 * cursor.c - the row cursor: a thin layer over the batch iterator of query.c that walks the rows
 * of each batch and hands out one cell at a time as a tsf_value (issue "Reader and queries" item 2).
 */
#include <string.h>

#include "reader_internal.h"

struct tsf_cursor {
    const tsf_allocator *a;
    tsf_query *q;
    const tsf_batch *b;
    size_t row;
};

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

tsf_status tsf_cursor_next(tsf_cursor *c, int *has_row, tsf_error *err)
{
    if (!c || !has_row) return tsf_err(err, TSF_EINVAL, "tsf_cursor_next: cursor and has_row are required");
    if (c->b && c->row + 1 < c->b->nrows) {
        c->row++;
        *has_row = 1;
        return TSF_OK;
    }
    tsf_status st = tsf_query_next(c->q, &c->b, err);
    c->row = 0;
    *has_row = st == TSF_OK && c->b != NULL;
    return st;
}

int64_t tsf_cursor_time(const tsf_cursor *c)
{
    return c && c->b ? c->b->times[c->row] : 0;
}

size_t tsf_cursor_device(const tsf_cursor *c)
{
    return c && c->b ? c->b->device : 0;
}

size_t tsf_cursor_column_count(const tsf_cursor *c)
{
    return c && c->b ? c->b->ncolumns : 0;
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

/* Typed accessors: no tsf_value to clear, no error path; a null or unfitting cell reads as absent. */
int tsf_cursor_int64(const tsf_cursor *c, size_t col, int64_t *out)
{
    if (!c || !c->b || col >= c->b->ncolumns) return 0;
    const tsf_column_batch *cb = &c->b->columns[col];
    size_t r = c->row;
    if (!((cb->validity[r >> 3] >> (r & 7)) & 1)) return 0;
    switch (cb->type) {
    case TSF_INT64:
    case TSF_TIMESTAMP:
        *out = ((const int64_t *)cb->values)[r];
        return 1;
    case TSF_INT32:
    case TSF_DATE:
        *out = ((const int32_t *)cb->values)[r];
        return 1;
    case TSF_BOOLEAN:
        *out = ((const uint8_t *)cb->values)[r] != 0;
        return 1;
    default:
        return 0;
    }
}

int tsf_cursor_double(const tsf_cursor *c, size_t col, double *out)
{
    if (!c || !c->b || col >= c->b->ncolumns) return 0;
    const tsf_column_batch *cb = &c->b->columns[col];
    size_t r = c->row;
    if (!((cb->validity[r >> 3] >> (r & 7)) & 1)) return 0;
    switch (cb->type) {
    case TSF_DOUBLE:
        *out = ((const double *)cb->values)[r];
        return 1;
    case TSF_FLOAT:
        *out = ((const float *)cb->values)[r];
        return 1;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        *out = (double)((const int64_t *)cb->values)[r];
        return 1;
    case TSF_INT32:
    case TSF_DATE:
        *out = ((const int32_t *)cb->values)[r];
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
    tsf_free(c->a, c, sizeof *c);
}
