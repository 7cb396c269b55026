/*
 * query_batch.c - batches from decoded pages: the rows of an aligned page sliced into batches (value
 * columns expanded from their present values by the page's bitmaps), the columns of a non-aligned
 * device merged by time (outer join: a column without a value at a time is null there), and, for the
 * parallel workers (parallel.c) and for tsf_query_next_owned, a returned batch's buffers detached from the
 * query so that it outlives the query's next call.
 *
 * A batch points into the query's buffers and never spans pages: with no nulls the decoded values are
 * the batch; a column the device lacks points at a run of zeros with a validity of zeros.
 */
#include <string.h>

#include "query_internal.h"

static void set_column(tsf_query *q, size_t i, const void *vals, const uint8_t *valid)
{
    q->cb[i].name = q->cols[i].name;
    q->cb[i].type = q->cols[i].type;
    q->cb[i].values = vals;
    q->cb[i].validity = valid;
}

tsf_status tsf_rd_query_al_emit(tsf_query *q, tsf_error *err)
{
    qcol *tc = &q->tcol;
    size_t m = tc->n - tc->pos;
    if (m > q->batch) m = q->batch;
    size_t r0 = q->row_base + tc->pos;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->null_page) {
            set_column(q, i, q->zeros.p, q->zeros.p);
            continue;
        }
        uint32_t have = tsf_fmt_bitmap_count(c->bitmap, r0 + m) - (uint32_t)c->k;
        if (have == m) { /* no nulls here: the decoded values are the batch */
            set_column(q, i, c->vpage + c->k * c->esz, q->ones.p);
            c->k += m;
            continue;
        }
        tsf_status st = tsf_rd_buf_reserve(q->a, &c->out_vals, m * c->esz, err);
        if (!st) st = tsf_rd_buf_reserve(q->a, &c->out_valid, m / 8 + 1, err);
        if (st) return st;
        uint8_t *ov = c->out_vals.p, *vb = c->out_valid.p;
        memset(vb, 0, m / 8 + 1);
        const uint8_t *src = c->vpage;
        size_t esz = c->esz, k = c->k;
        for (size_t j = 0; j < m; j++) {
            if (tsf_fmt_bitmap_get(c->bitmap, r0 + j) && k < c->present) {
                memcpy(ov + j * esz, src + k * esz, esz);
                vb[j >> 3] |= (uint8_t)(1u << (j & 7));
                k++;
            } else {
                memset(ov + j * esz, 0, esz);
            }
        }
        c->k = k;
        set_column(q, i, ov, vb);
    }
    q->out.times = tc->t + tc->pos;
    q->out.nrows = m;
    tc->pos += m;
    return TSF_OK;
}

tsf_status tsf_rd_query_na_emit(tsf_query *q, int *got, tsf_error *err)
{
    tsf_status st;
    *got = 0;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (!c->done && c->pos >= c->n && (st = tsf_rd_query_na_page(q, c, err))) return st;
    }
    if (q->ncols == 1) {
        qcol *c = &q->cols[0];
        if (c->done) return TSF_OK;
        size_t m = c->n - c->pos;
        if (m > q->batch) m = q->batch;
        set_column(q, 0, c->v + c->pos * c->esz, q->ones.p);
        q->out.times = c->t + c->pos;
        q->out.nrows = m;
        c->pos += m;
        *got = m > 0;
        return TSF_OK;
    }
    if ((st = tsf_rd_buf_reserve(q->a, &q->times_out, q->batch * sizeof(int64_t), err))) return st;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->done) continue;
        if ((st = tsf_rd_buf_reserve(q->a, &c->out_vals, q->batch * c->esz, err))) return st;
        if ((st = tsf_rd_buf_reserve(q->a, &c->out_valid, q->batch / 8 + 1, err))) return st;
        memset(c->out_valid.p, 0, q->batch / 8 + 1);
    }
    int64_t *to = (int64_t *)q->times_out.p;
    size_t m = 0;
    while (m < q->batch) {
        int any = 0, refill = 0;
        int64_t t = INT64_MAX;
        for (size_t i = 0; i < q->ncols; i++) {
            const qcol *c = &q->cols[i];
            if (c->done) continue;
            if (c->pos >= c->n) {
                refill = 1;
                break;
            }
            if (!any || c->t[c->pos] < t) t = c->t[c->pos];
            any = 1;
        }
        if (refill || !any) break;
        for (size_t i = 0; i < q->ncols; i++) {
            qcol *c = &q->cols[i];
            if (c->done) continue;
            if (c->t[c->pos] == t) {
                memcpy(c->out_vals.p + m * c->esz, c->v + c->pos * c->esz, c->esz);
                c->out_valid.p[m >> 3] |= (uint8_t)(1u << (m & 7));
                c->pos++;
            } else {
                memset(c->out_vals.p + m * c->esz, 0, c->esz);
            }
        }
        to[m++] = t;
    }
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->done) /* done before this batch (absent or exhausted): all null */
            set_column(q, i, q->zeros.p, q->zeros.p);
        else
            set_column(q, i, c->out_vals.p, c->out_valid.p);
    }
    q->out.times = to;
    q->out.nrows = m;
    *got = m > 0;
    return TSF_OK;
}

typedef struct dt_ref {
    tsf_rd_buf *buf;
    int page; /* a decoded page buffer: only detachable once its page is used up */
    const qcol *c;
} dt_ref;

/* The decode buffer of q holding ptr (NULL: none). */
static dt_ref dt_owner(tsf_query *q, const void *ptr)
{
    const uint8_t *x = ptr;
#define DT_IN(b) ((b).p && x >= (b).p && x < (b).p + (b).cap)
    if (q->dev && q->dev->aligned && DT_IN(q->tcol.times)) return (dt_ref){&q->tcol.times, 1, &q->tcol};
    if (DT_IN(q->times_out)) return (dt_ref){&q->times_out, 0, NULL};
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        const qcol *pc = q->dev->aligned ? &q->tcol : c; /* whose page position tells "used up" */
        if (DT_IN(c->vals)) return (dt_ref){&c->vals, 1, pc};
        if (DT_IN(c->times)) return (dt_ref){&c->times, 1, pc};
        if (DT_IN(c->out_vals)) return (dt_ref){&c->out_vals, 0, NULL};
        if (DT_IN(c->out_valid)) return (dt_ref){&c->out_valid, 0, NULL};
    }
#undef DT_IN
    return (dt_ref){NULL, 0, NULL};
}

void tsf_rd_query_retarget(tsf_query *q, size_t di, int64_t tmin, int64_t tmax, size_t batch)
{
    q->di = di;
    q->dend = di + 1;
    q->dev_active = 0;
    q->tmin = tmin;
    q->tmax = tmax;
    q->batch = batch;
    memset(&q->st, 0, sizeof q->st);
}

void tsf_rd_query_consts(const tsf_query *q, tsf_rd_buf *zeros, tsf_rd_buf *ones)
{
    *zeros = q->zeros;
    *ones = q->ones;
}

size_t tsf_rd_query_detach(tsf_query *q, const tsf_batch *b, tsf_rd_buf *spare, size_t *nspare, tsf_rd_buf *taken)
{
    size_t n = 0;
    tsf_rd_buf *own[1 + 2 * 64];
    size_t nptr = 1 + 2 * b->ncolumns;
    if (b->ncolumns > 64) return SIZE_MAX;
    for (size_t k = 0; k < nptr; k++) {
        const void *ptr = k == 0
                              ? (const void *)b->times
                              : (k & 1 ? b->columns[(k - 1) / 2].values : b->columns[(k - 1) / 2].validity);
        if (k && (k & 1)) {
            tsf_type t = b->columns[(k - 1) / 2].type;
            if (t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB) return SIZE_MAX; /* borrows page bytes */
        }
        const uint8_t *x = ptr;
        if ((x >= q->zeros.p && x < q->zeros.p + q->zeros.cap) ||
            (x >= q->ones.p && x < q->ones.p + q->ones.cap))
            continue; /* constant for the query's life: the caller substitutes its own */
        dt_ref o = dt_owner(q, ptr);
        if (!o.buf || (o.page && o.c->pos < o.c->n)) return SIZE_MAX;
        size_t j = 0;
        while (j < n && own[j] != o.buf) j++;
        if (j == n) own[n++] = o.buf;
    }
    for (size_t j = 0; j < n; j++) {
        taken[j] = *own[j];
        /* a spare at least as large as the buffer it replaces (it serves the same role next), else the last:
         * recycled buffers then keep their sizes instead of growing again and again */
        size_t k = 0;
        while (k < *nspare && spare[k].cap < taken[j].cap) k++;
        if (k == *nspare) k = *nspare - 1;
        if (*nspare) {
            *own[j] = spare[k];
            spare[k] = spare[--*nspare];
        } else {
            *own[j] = (tsf_rd_buf){0};
        }
    }
    return n;
}

/* ---- batches handed over (tsf_query_next_owned) ------------------------------------------------ */

struct tsf_batch_owned {
    tsf_allocator a; /* a copy: the reader's may go away first */
    int has_a;
    size_t n, cap;
    tsf_rd_buf bufs[]; /* [cap] */
};

tsf_status tsf_query_next_owned(tsf_query *q, const tsf_batch **out, tsf_batch_owned **owned, tsf_error *err)
{
    if (!owned) return tsf_err(err, TSF_EINVAL, "tsf_query_next_owned: owned is required");
    *owned = NULL;
    tsf_status st = tsf_query_next(q, out, err);
    if (st || !*out || q->par || q->fs || (*out)->ncolumns > 64) return st;
    size_t cap = 1 + 2 * (*out)->ncolumns;
    tsf_batch_owned *o = tsf_alloc(q->a, sizeof *o + cap * sizeof(tsf_rd_buf));
    if (!o) return TSF_OK; /* not taken: the caller copies, as for any batch that cannot be */
    size_t nspare = 0;
    size_t n = tsf_rd_query_detach(q, *out, NULL, &nspare, o->bufs);
    if (n == SIZE_MAX) {
        tsf_free(q->a, o, sizeof *o + cap * sizeof(tsf_rd_buf));
        return TSF_OK;
    }
    o->has_a = q->a != NULL;
    if (q->a) o->a = *q->a;
    o->n = n;
    o->cap = cap;
    *owned = o;
    return TSF_OK;
}

void tsf_batch_owned_free(tsf_batch_owned *o)
{
    if (!o) return;
    tsf_allocator a = o->a;
    const tsf_allocator *ap = o->has_a ? &a : NULL;
    for (size_t i = 0; i < o->n; i++) tsf_rd_buf_free(ap, &o->bufs[i]);
    tsf_free(ap, o, sizeof *o + o->cap * sizeof(tsf_rd_buf));
}

/* ---- rows gathered into the caller's arrays (tsf_query_collect) --------------------------------- */

/* Every column of b has its array's type (or is absent from b's device). */
static tsf_status collect_types(const tsf_collect *c, const tsf_batch *b, tsf_error *err)
{
    for (size_t i = 0; i < c->ncolumns; i++) {
        tsf_type t = b->columns[i].type, want = c->columns[i].type;
        if (t != want && t != TSF_VECTOR)
            return tsf_err(err, TSF_ENOTSUP, "tsf_query_collect: column %s is %s in device %zu, its array holds %s",
                           b->columns[i].name, tsf_type_name(t) ? tsf_type_name(t) : "?", b->device,
                           tsf_type_name(want) ? tsf_type_name(want) : "?");
    }
    return TSF_OK;
}

/* Appends batch b at row c->nrows (it fits; its types checked). Values a page decoded straight into the arrays are already in
 * place, or lie further on in them (a page cut by the time range): memmove. */
static void collect_put(tsf_collect *c, const tsf_batch *b)
{
    size_t n = b->nrows, at = c->nrows;
    if (b->times != c->times + at) {
        memmove(c->times + at, b->times, n * sizeof(int64_t));
        c->cells_copied += n;
    } else {
        c->cells_in_place += n;
    }
    if (n && b->times[0] < c->time_min) c->time_min = b->times[0]; /* a batch's times ascend */
    if (n && b->times[n - 1] > c->time_max) c->time_max = b->times[n - 1];
    if (c->devices) {
        int32_t code = c->device_codes ? c->device_codes[b->device] : (int32_t)b->device;
        if (c->device_width == 1) {
            memset((int8_t *)c->devices + at, (int8_t)code, n);
        } else if (c->device_width == 2) {
            int16_t *d = (int16_t *)c->devices + at;
            for (size_t j = 0; j < n; j++) d[j] = (int16_t)code;
        } else {
            int32_t *d = (int32_t *)c->devices + at;
            for (size_t j = 0; j < n; j++) d[j] = code;
        }
    }
    for (size_t i = 0; i < c->ncolumns; i++) {
        const tsf_column_batch *cb = &b->columns[i];
        tsf_collect_column *k = &c->columns[i];
        size_t esz = tsf_rd_cell_size(k->type);
        uint8_t *dst = (uint8_t *)k->values + at * esz;
        const uint8_t *v = cb->validity;
        if (cb->type == TSF_VECTOR) { /* the device has no such column */
            memset(dst, 0, n * esz);
            v = NULL;
            c->cells_copied += n;
        } else if (cb->values != dst) {
            memmove(dst, cb->values, n * esz);
            c->cells_copied += n;
        } else {
            c->cells_in_place += n;
        }
        size_t full = 0; /* leading rows all present */
        if (v) {
            while (full + 8 <= n && v[full >> 3] == 0xFF) full += 8;
            while (full < n && (v[full >> 3] >> (full & 7) & 1)) full++;
        }
        if (full == n) {
            if (k->first_null != SIZE_MAX) memset(k->present + at, 1, n);
            continue;
        }
        if (k->first_null == SIZE_MAX) k->first_null = at;
        memset(k->present + at, 1, full);
        for (size_t j = full; j < n; j++) {
            int on = v && (v[j >> 3] >> (j & 7) & 1);
            k->present[at + j] = (uint8_t)on;
            if (!on) memset(dst + j * esz, 0, esz);
        }
    }
    c->nrows = at + n;
}

void tsf_collect_init(tsf_collect *c)
{
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    c->time_min = INT64_MAX;
    c->time_max = INT64_MIN;
}

tsf_status tsf_query_collect(tsf_query *q, tsf_collect *c, tsf_error *err)
{
    if (!q || !c || c->struct_size < sizeof *c || !c->times || (c->ncolumns && !c->columns) || c->nrows > c->cap)
        return tsf_err(err, TSF_EINVAL, "tsf_query_collect: query, a tsf_collect with struct_size set, times, "
                       "columns and nrows <= cap are required");
    if (c->device_width != 0 && c->device_width != 1 && c->device_width != 2 && c->device_width != 4)
        return tsf_err(err, TSF_EINVAL, "tsf_query_collect: device_width %u is not 1, 2 or 4", c->device_width);
    if (!q->names || c->ncolumns != q->nnames)
        return tsf_err(err, TSF_EINVAL, "tsf_query_collect: the query must name its columns (%zu), one array each "
                       "(%zu given)", q->nnames, c->ncolumns);
    for (size_t i = 0; i < c->ncolumns; i++) {
        tsf_type t = c->columns[i].type;
        if (t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB || t == TSF_VECTOR || !tsf_type_name(t))
            return tsf_err(err, TSF_ENOTSUP, "tsf_query_collect: column %zu: type %d has no fixed-width array", i,
                           (int)t);
        if (!c->columns[i].values || !c->columns[i].present)
            return tsf_err(err, TSF_EINVAL, "tsf_query_collect: column %zu: values and present are required", i);
    }
    tsf_status st = TSF_OK;
    c->done = 0;
    q->sink = q->par ? NULL : c; /* parallel workers decode into their own buffers */
    for (;;) {
        const tsf_batch *b = q->pending;
        q->pending = NULL;
        if (!b && (st = tsf_query_next(q, &b, err))) break;
        if (!b) {
            c->done = 1;
            break;
        }
        if ((st = collect_types(c, b, err))) break;
        if (b->nrows > c->cap - c->nrows) {
            q->pending = b;
            break;
        }
        collect_put(c, b);
    }
    q->sink = NULL;
    return st;
}
