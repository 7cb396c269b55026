/*
 * stream.c - the Arrow C stream over a tsf_query, and the arrays of its batches.
 *
 * A batch of the query borrows the query's page buffers until the next call, while an Arrow array must stay
 * valid however long the consumer keeps it: each batch is therefore copied once into one block, 64-byte
 * aligned, that holds the struct array, its children, their buffer tables and every buffer. The block is
 * reference counted (the struct array and each child hold one reference), so the consumer may move children
 * out and release everything in any order, on any thread, before or after the stream.
 *
 * Per column: validity (LSB first, 1 = valid; no buffer when the column has no null), then the values:
 * fixed-width types copied as they are, BOOLEAN packed to bits, DATE converted from yyyyMMdd to days since
 * the epoch (a stored value that is no date fails the stream with TSF_ECORRUPT), TEXT/STRING/BLOB as int32
 * offsets + bytes, the device name and TAG values repeated per row. One pass per column; no allocation per
 * value or per row.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arrow_internal.h"

int tsf_arrow_date_days(int32_t v, int32_t *days)
{
    if (v < 10101 || v > 99991231) return -1; /* years 1..9999 */
    int32_t y = v / 10000, m = v / 100 % 100, d = v % 100;
    static const uint8_t MDAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > MDAYS[m - 1] + (m == 2 && leap)) return -1;
    /* count from 0000-03-01 in 400-year eras of 146,097 days; the year starts in March so that the leap
     * day is its last day; 1970-01-01 is day 719,468 */
    int32_t yy = y - (m <= 2), era = yy / 400, yoe = yy - era * 400;
    int32_t doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    int32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *days = era * 146097 + doe - 719468;
    return 0;
}

/* Per column and batch: what the block holds for it. */
typedef struct aplan {
    int64_t nulls;
    size_t valid_size, size1, size2; /* validity, values (or offsets), bytes */
    const uint8_t *rep;              /* AC_DEVICE / AC_TAG: the value repeated on every row */
    size_t rep_len;
    int all_null;
    const void *ref; /* zero copy: the values buffer, in the batch's owned decode buffers (size1 is then 0) */
} aplan;

/* A stream over one reader's query (r, q) or over a dataset's (ds, dq). */
typedef struct astream {
    tsf_allocator a;
    int has_a;
    tsf_reader *r;
    int own_reader;
    tsf_query *q;
    tsf_dataset *ds;
    int own_ds;
    tsf_dataset_query *dq;
    tsf_filter *where;
    acols cols;
    aplan *plan;
    /* zero copy (one reader, no filter, one thread): query batches of whole pages, each sliced into arrays
     * of `batch` rows */
    int zc;
    size_t batch;
    const tsf_batch *cur; /* the query batch being sliced: rows [pos, cur->nrows) are still to export */
    size_t pos;
    aowned *own; /* its decode buffers (the stream's reference), NULL when the query kept them */
    tsf_column_batch *view; /* a slice's columns (cols.nq), its validity bitmaps moved to bit 0 in vbits */
    uint8_t *vbits;
    size_t vstride;
    int status; /* errno of the failure (sticky), 0 */
    char msg[TSF_ERROR_MESSAGE_SIZE];
} astream;

static const tsf_allocator *A(const astream *s) { return s->has_a ? &s->a : NULL; }

static int errno_of(tsf_status st)
{
    switch (st) {
    case TSF_OK: return 0;
    case TSF_ENOMEM: return ENOMEM;
    case TSF_EINVAL: return EINVAL;
    case TSF_ENOTSUP: return ENOSYS;
    case TSF_ERANGE: return ERANGE;
    default: return EIO;
    }
}

static int fail(astream *s, tsf_status st, const tsf_error *e)
{
    snprintf(s->msg, sizeof s->msg, "%s", e->message[0] ? e->message : tsf_status_name(st));
    return s->status = errno_of(st);
}

/* ---- arrays ------------------------------------------------------------------------------- */

static void array_release(struct ArrowArray *x)
{
    if (!x || !x->release) return;
    for (int64_t i = 0; i < x->n_children; i++)
        if (x->children[i]->release) x->children[i]->release(x->children[i]);
    ablock *b = x->private_data;
    x->release = NULL;
    tsf_ar_block_unref(b);
}

static int64_t count_nulls(const uint8_t *valid, size_t n)
{
    size_t full = n / 8, set = 0, i = 0;
    for (; i + 8 <= full; i += 8) {
        uint64_t w;
        memcpy(&w, valid + i, 8);
        set += (size_t)__builtin_popcountll(w);
    }
    for (; i < full; i++) set += (size_t)__builtin_popcount(valid[i]);
    if (n % 8) set += (size_t)__builtin_popcount(valid[full] & ((1u << (n % 8)) - 1));
    return (int64_t)(n - set);
}

static int is_var(tsf_type t) { return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB; }

static size_t width_of(tsf_type t)
{
    switch (t) {
    case TSF_INT32:
    case TSF_FLOAT:
    case TSF_DATE: return 4;
    default: return 8;
    }
}

/* The name (AC_DEVICE) or the TAG value (AC_TAG: segment 1 + c->src of the id; data NULL = null) of device
 * dev of the stream's reader or dataset. */
static tsf_status device_value(const astream *s, size_t dev, const acol *c, tsf_bytes *out, tsf_error *err)
{
    const char *name;
    size_t nseg;
    tsf_status st;
    if (s->ds) {
        tsf_dataset_device_info di;
        if ((st = tsf_dataset_device(s->ds, dev, &di, err))) return st;
        name = di.name, nseg = di.nsegments;
    } else {
        tsf_device_info di;
        if ((st = tsf_reader_device(s->r, dev, &di, err))) return st;
        name = di.name, nseg = di.nsegments;
    }
    *out = (tsf_bytes){NULL, 0};
    if (c->kind == AC_DEVICE) {
        *out = (tsf_bytes){(const uint8_t *)name, strlen(name)};
        return TSF_OK;
    }
    if (1 + c->src >= nseg) return TSF_OK;
    return s->ds ? tsf_dataset_device_segment(s->ds, dev, 1 + c->src, out, err)
                 : tsf_reader_device_segment(s->r, dev, 1 + c->src, out, err);
}

/* Sizes of column i of batch b, whose device is dev (of the reader, or of the dataset). */
static tsf_status plan_column(astream *s, const tsf_batch *b, size_t dev, size_t i, aplan *p, tsf_error *err)
{
    const acol *c = &s->cols.cols[i];
    size_t n = b->nrows;
    memset(p, 0, sizeof *p);
    const tsf_column_batch *cb = NULL;
    if (c->kind == AC_DEVICE || c->kind == AC_TAG) {
        tsf_bytes v;
        tsf_status st = device_value(s, dev, c, &v, err);
        if (st) return st;
        p->rep = v.data;
        p->rep_len = v.len;
        p->all_null = v.data == NULL;
        if (p->rep_len && n > (size_t)INT32_MAX / p->rep_len)
            return tsf_err(err, TSF_ERANGE, "column %s: %zu rows of %zu bytes exceed the 2 GiB of a utf8 array",
                           c->name, n, p->rep_len);
        p->size1 = (n + 1) * 4;
        p->size2 = p->all_null ? 0 : n * p->rep_len;
    } else if (c->kind == AC_TIME) {
        p->size1 = n * 8;
    } else {
        cb = &b->columns[c->src];
        if (cb->type == TSF_VECTOR) {
            p->all_null = 1;
        } else if (cb->type != c->type) {
            return tsf_err(err, TSF_ECORRUPT, "column %s of device %zu is %s, the stream's column is %s", c->name,
                           b->device, tsf_type_name(cb->type), tsf_type_name(c->type));
        } else if (cb->validity) {
            p->nulls = count_nulls(cb->validity, n);
        }
        if (c->type == TSF_BOOLEAN) {
            p->size1 = (n + 7) / 8;
        } else if (is_var(c->type)) {
            p->size1 = (n + 1) * 4;
            if (!p->all_null) {
                const tsf_bytes *v = cb->values;
                size_t total = 0;
                for (size_t r = 0; r < n; r++) total += v[r].len;
                if (total > (size_t)INT32_MAX)
                    return tsf_err(err, TSF_ERANGE, "column %s: %zu bytes in one batch exceed the 2 GiB of a %s array",
                                   c->name, total, c->type == TSF_BLOB ? "binary" : "utf8");
                p->size2 = total;
            }
        } else {
            p->size1 = n * width_of(c->type);
        }
    }
    if (p->all_null) p->nulls = (int64_t)n;
    if (p->nulls) p->valid_size = (n + 7) / 8;
    return TSF_OK;
}

static void pack_bools(uint8_t *dst, const uint8_t *v, size_t n)
{
    size_t r = 0;
    for (; r + 8 <= n; r += 8)
        dst[r / 8] = (uint8_t)((v[r] != 0) | (v[r + 1] != 0) << 1 | (v[r + 2] != 0) << 2 | (v[r + 3] != 0) << 3 |
                               (v[r + 4] != 0) << 4 | (v[r + 5] != 0) << 5 | (v[r + 6] != 0) << 6 |
                               (v[r + 7] != 0) << 7);
    if (r < n) {
        uint8_t x = 0;
        for (size_t k = 0; r + k < n; k++) x |= (uint8_t)((v[r + k] != 0) << k);
        dst[r / 8] = x;
    }
}

/* Fills the buffers of column i (sizes from its plan; every buffer zeroed beyond what is written). */
static tsf_status fill_column(astream *s, const tsf_batch *b, size_t i, const aplan *p, uint8_t *valid, uint8_t *b1,
                              uint8_t *b2, tsf_error *err)
{
    const acol *c = &s->cols.cols[i];
    size_t n = b->nrows;
    const tsf_column_batch *cb = c->kind == AC_VALUE ? &b->columns[c->src] : NULL;
    if (valid) {
        if (p->all_null) {
            memset(valid, 0, p->valid_size);
        } else {
            memcpy(valid, cb->validity, p->valid_size);
            if (n % 8) valid[n / 8] &= (uint8_t)((1u << (n % 8)) - 1);
        }
    }
    if (p->ref) return TSF_OK; /* the values stay where the query decoded them */
    if (c->kind == AC_TIME) {
        memcpy(b1, b->times, n * 8);
        return TSF_OK;
    }
    if (c->kind == AC_DEVICE || c->kind == AC_TAG) {
        int32_t *off = (int32_t *)(void *)b1;
        size_t L = p->all_null ? 0 : p->rep_len;
        for (size_t r = 0; r <= n; r++) off[r] = (int32_t)(r * L);
        for (size_t r = 0; r < n && L; r++) memcpy(b2 + r * L, p->rep, L);
        return TSF_OK;
    }
    if (p->all_null) {
        memset(b1, 0, p->size1);
        return TSF_OK;
    }
    switch (c->type) {
    case TSF_BOOLEAN: pack_bools(b1, cb->values, n); break;
    case TSF_DATE: {
        const int32_t *v = cb->values;
        int32_t *d = (int32_t *)(void *)b1;
        const uint8_t *ok = cb->validity;
        for (size_t r = 0; r < n; r++) {
            d[r] = 0;
            if (ok && !(ok[r / 8] >> (r % 8) & 1)) continue;
            if (tsf_arrow_date_days(v[r], &d[r]))
                return tsf_err(err, TSF_ECORRUPT, "column %s of device %zu: DATE %d at time %lld is no yyyyMMdd date",
                               c->name, b->device, (int)v[r], (long long)b->times[r]);
        }
        break;
    }
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB: {
        const tsf_bytes *v = cb->values;
        int32_t *off = (int32_t *)(void *)b1;
        size_t pos = 0;
        for (size_t r = 0; r < n; r++) {
            off[r] = (int32_t)pos;
            if (v[r].len) memcpy(b2 + pos, v[r].data, v[r].len);
            pos += v[r].len;
        }
        off[n] = (int32_t)pos;
        break;
    }
    default: memcpy(b1, cb->values, p->size1); break;
    }
    return TSF_OK;
}

/* With the batch's decode buffers owned: the values buffer column i of batch b can point to instead of a
 * copy (time and fixed-width values with a row that is not null, aligned to their width), else NULL. */
static const void *zero_copy_ref(const astream *s, const tsf_batch *b, size_t i, const aplan *p)
{
    const acol *c = &s->cols.cols[i];
    const void *v;
    size_t w = 8;
    if (c->kind == AC_TIME) {
        v = b->times;
    } else if (c->kind != AC_VALUE || p->all_null || p->nulls == (int64_t)b->nrows) {
        return NULL; /* an all-null column's values may be the query's constant zeros */
    } else if (c->type == TSF_INT32 || c->type == TSF_INT64 || c->type == TSF_FLOAT || c->type == TSF_DOUBLE ||
               c->type == TSF_TIMESTAMP) {
        v = b->columns[c->src].values;
        w = width_of(c->type);
    } else {
        return NULL;
    }
    return (uintptr_t)v % w ? NULL : v;
}

/* Exports batch b (of device dev) as a new array at *out: copied into one block, except the values that
 * point into own (the batch's decode buffers; NULL = none). */
static tsf_status export_batch(astream *s, const tsf_batch *b, size_t dev, aowned *own, struct ArrowArray *out,
                               tsf_error *err)
{
    int refs = 0;
    size_t nc = s->cols.ncols, n = b->nrows;
    size_t head = tsf_ar_align64(sizeof(ablock)) +
                  tsf_ar_align64(nc * (sizeof(struct ArrowArray) + sizeof(struct ArrowArray *)) +
                                 (1 + 3 * nc) * sizeof(void *));
    size_t total = head;
    for (size_t i = 0; i < nc; i++) {
        tsf_status st = plan_column(s, b, dev, i, &s->plan[i], err);
        if (st) return st;
        if (own && (s->plan[i].ref = zero_copy_ref(s, b, i, &s->plan[i]))) {
            s->plan[i].size1 = 0;
            refs = 1;
        }
        total += tsf_ar_align64(s->plan[i].valid_size) + tsf_ar_align64(s->plan[i].size1) +
                 tsf_ar_align64(s->plan[i].size2);
    }
    ablock *blk = tsf_ar_block_new(A(s), total);
    if (!blk) return tsf_err(err, TSF_ENOMEM, "arrow: out of memory (a batch of %zu rows)", n);
    atomic_store(&blk->refs, 1 + nc);
    if (refs) {
        atomic_fetch_add_explicit(&own->refs, 1, memory_order_relaxed);
        blk->own = own;
    }
    uint8_t *base = (uint8_t *)blk;
    struct ArrowArray *kids = (struct ArrowArray *)(void *)(base + tsf_ar_align64(sizeof(ablock)));
    struct ArrowArray **kp = (struct ArrowArray **)(kids + nc);
    const void **bufs = (const void **)(kp + nc);
    uint8_t *cur = base + head;
    bufs[0] = NULL;
    const void **kb = bufs + 1;
    tsf_status st = TSF_OK;
    for (size_t i = 0; i < nc; i++) {
        const aplan *p = &s->plan[i];
        const acol *c = &s->cols.cols[i];
        uint8_t *valid = p->valid_size ? cur : NULL;
        cur += tsf_ar_align64(p->valid_size);
        uint8_t *b1 = cur;
        cur += tsf_ar_align64(p->size1);
        uint8_t *b2 = cur;
        cur += tsf_ar_align64(p->size2);
        int var = c->kind == AC_DEVICE || c->kind == AC_TAG || is_var(c->type);
        if (!st) st = fill_column(s, b, i, p, valid, b1, b2, err);
        kb[0] = valid;
        kb[1] = p->ref ? p->ref : b1;
        kb[2] = b2;
        kids[i] = (struct ArrowArray){
            .length = (int64_t)n,
            .null_count = p->nulls,
            .offset = 0,
            .n_buffers = var ? 3 : 2,
            .n_children = 0,
            .buffers = kb,
            .children = NULL,
            .dictionary = NULL,
            .release = array_release,
            .private_data = blk,
        };
        kp[i] = &kids[i];
        kb += 3;
    }
    if (st) {
        atomic_store(&blk->refs, 1);
        tsf_ar_block_unref(blk);
        return st;
    }
    *out = (struct ArrowArray){
        .length = (int64_t)n,
        .null_count = 0,
        .offset = 0,
        .n_buffers = 1,
        .n_children = (int64_t)nc,
        .buffers = bufs,
        .children = nc ? kp : NULL,
        .dictionary = NULL,
        .release = array_release,
        .private_data = blk,
    };
    return TSF_OK;
}

/* ---- the stream --------------------------------------------------------------------------- */

static int stream_get_schema(struct ArrowArrayStream *x, struct ArrowSchema *out)
{
    astream *s = x->private_data;
    tsf_error e = {0};
    tsf_status st = tsf_ar_schema(&s->cols, A(s), out, &e);
    if (!st) return 0;
    snprintf(s->msg, sizeof s->msg, "%s", e.message); /* not sticky: get_next still works */
    return errno_of(st);
}

void tsf_ar_owned_unref(aowned *w)
{
    if (!w || atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1) return;
    tsf_allocator a = w->a;
    tsf_batch_owned_free(w->o);
    tsf_free(w->has_a ? &a : NULL, w, sizeof *w);
}

/* Zero copy: the next slice of the current query batch (the next batch first when it is used up) as a
 * batch of at most s->batch rows in *slice, its columns in s->view; *slice = NULL at the end. */
static tsf_status next_slice(astream *s, tsf_batch *slice, const tsf_batch **out, tsf_error *err)
{
    *out = NULL;
    if (!s->cur || s->pos >= s->cur->nrows) {
        tsf_ar_owned_unref(s->own);
        s->own = NULL;
        s->cur = NULL;
        tsf_batch_owned *o;
        const tsf_batch *b;
        tsf_status st = tsf_query_next_owned(s->q, &b, &o, err);
        if (st || !b) return st;
        if (o) {
            if (!(s->own = tsf_alloc(A(s), sizeof *s->own))) {
                tsf_batch_owned_free(o);
                return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
            }
            atomic_init(&s->own->refs, 1);
            s->own->o = o;
            s->own->has_a = s->has_a;
            s->own->a = s->a;
        }
        s->cur = b;
        s->pos = 0;
    }
    const tsf_batch *b = s->cur;
    size_t r0 = s->pos, n = b->nrows - r0 < s->batch ? b->nrows - r0 : s->batch;
    for (size_t k = 0; k < b->ncolumns; k++) {
        const tsf_column_batch *c = &b->columns[k];
        tsf_column_batch *v = &s->view[k];
        *v = *c;
        size_t w = tsf_type_size(c->type);
        v->values = c->type == TSF_VECTOR ? c->values : (const uint8_t *)c->values + r0 * (w ? w : sizeof(tsf_bytes));
        if (!c->validity || r0 % 8 == 0) {
            v->validity = c->validity ? c->validity + r0 / 8 : NULL;
            continue;
        }
        /* bits [r0, r0 + n) to bit 0 of a scratch bitmap */
        uint8_t *d = s->vbits + k * s->vstride;
        const uint8_t *src = c->validity + r0 / 8;
        size_t sh = r0 % 8, nb = (n + 7) / 8, have = (b->nrows + 7) / 8 - r0 / 8;
        for (size_t j = 0; j < nb; j++)
            d[j] = (uint8_t)(src[j] >> sh | (j + 1 < have ? src[j + 1] << (8 - sh) : 0));
        v->validity = d;
    }
    *slice = (tsf_batch){b->device, n, b->times + r0, b->ncolumns, s->view};
    s->pos += n;
    *out = slice;
    return TSF_OK;
}

static int stream_get_next(struct ArrowArrayStream *x, struct ArrowArray *out)
{
    astream *s = x->private_data;
    if (s->status) return s->status;
    tsf_error e = {0};
    const tsf_batch *b = NULL;
    const tsf_dataset_batch *db = NULL;
    tsf_batch slice;
    tsf_status st = s->dq ? tsf_dataset_query_next(s->dq, &db, &e)
                    : s->zc ? next_slice(s, &slice, &b, &e)
                            : tsf_query_next(s->q, &b, &e);
    if (db) b = &db->rows;
    if (!st && !b) {
        memset(out, 0, sizeof *out); /* the end: a released array */
        return 0;
    }
    if (!st && (st = export_batch(s, b, db ? db->device : b->device, s->zc ? s->own : NULL, out, &e)) && db) {
        tsf_dataset_file_info fi; /* the dataset's own errors name the file; so do the stream's */
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", e.message);
        if (tsf_dataset_file(s->ds, db->file, &fi, NULL) == TSF_OK) tsf_err(&e, st, "%s: %s", fi.path, m);
    }
    return st ? fail(s, st, &e) : 0;
}

static const char *stream_last_error(struct ArrowArrayStream *x)
{
    astream *s = x->private_data;
    return s->msg[0] ? s->msg : NULL;
}

static void stream_free(astream *s)
{
    const tsf_allocator *a = A(s);
    tsf_allocator copy = s->a;
    if (s->has_a) a = &copy;
    tsf_ar_owned_unref(s->own);
    if (s->view) tsf_free(a, s->view, s->cols.cap * sizeof *s->view);
    if (s->vbits) tsf_free(a, s->vbits, s->cols.cap * s->vstride);
    tsf_query_close(s->q);
    tsf_dataset_query_close(s->dq);
    tsf_filter_free(s->where);
    if (s->own_reader) tsf_reader_close(s->r);
    if (s->own_ds) tsf_dataset_close(s->ds);
    if (s->plan) tsf_free(a, s->plan, s->cols.cap * sizeof *s->plan);
    tsf_ar_columns_free(&s->cols, a);
    tsf_free(a, s, sizeof *s);
}

static void stream_release(struct ArrowArrayStream *x)
{
    if (!x || !x->release) return;
    stream_free(x->private_data);
    x->release = NULL;
}

/* A copy of f the stream owns: formatted and parsed back (the text parses to the same filter). */
static tsf_status filter_copy(const tsf_filter *f, const tsf_allocator *a, tsf_filter **out, tsf_error *err)
{
    *out = NULL;
    if (!f) return TSF_OK;
    size_t len = tsf_filter_format(f, NULL, 0);
    char *text = tsf_alloc(a, len + 1);
    if (!text) return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
    tsf_filter_format(f, text, len + 1);
    tsf_status st = tsf_filter_parse(out, text, err);
    tsf_free(a, text, len + 1);
    return st;
}

/* Zero copy: rows per query batch (at least a page of the usual sizes; a larger page is sliced alike, its
 * batches then copied) */
enum { ZC_QUERY_BATCH = 1 << 15 };

/* A new stream's state with its checked options in *o (columns, query: not yet). */
static tsf_status stream_new(const tsf_arrow_options *opts, tsf_arrow_options *o, astream **out, tsf_error *err)
{
    tsf_status st = tsf_ar_options(opts, o, err);
    if (st) return st;
    astream *s = *out = tsf_calloc(o->allocator, 1, sizeof *s);
    if (!s) return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
    if (o->allocator) s->a = *o->allocator, s->has_a = 1;
    return TSF_OK;
}

/* Makes the stream's per-column plans and hands s over to *out. */
static tsf_status stream_start(astream *s, struct ArrowArrayStream *out, tsf_error *err)
{
    if (!(s->plan = tsf_calloc(A(s), s->cols.cap, sizeof *s->plan)))
        return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
    *out = (struct ArrowArrayStream){
        .get_schema = stream_get_schema,
        .get_next = stream_get_next,
        .get_last_error = stream_last_error,
        .release = stream_release,
        .private_data = s,
    };
    return TSF_OK;
}

static tsf_status open_stream(tsf_reader *r, int own, const tsf_arrow_options *opts, struct ArrowArrayStream *out,
                              tsf_error *err)
{
    tsf_arrow_options o;
    astream *s;
    tsf_status st = stream_new(opts, &o, &s, err);
    if (st) return st;
    s->r = r;
    if ((st = tsf_ar_columns(r, &o, A(s), &s->cols, err))) goto fail;
    tsf_query_options q;
    tsf_query_options_init(&q);
    if (o.query) memcpy(&q, o.query, o.query->struct_size);
    if ((st = filter_copy(q.where, A(s), &s->where, err))) goto fail;
    q.where = s->where;
    q.columns = s->cols.qnames;
    if (o.zero_copy && !q.where && q.threads <= 1) {
        /* whole pages from the query (a batch never spans pages), sliced here into batch_size rows: the
         * arrays are those of batch_size batches, and every page's buffers can be handed over */
        s->zc = 1;
        s->batch = q.batch_size ? q.batch_size : 4096;
        if (q.batch_size < ZC_QUERY_BATCH) q.batch_size = ZC_QUERY_BATCH;
        s->view = tsf_calloc(A(s), s->cols.cap, sizeof *s->view);
        if (s->batch % 8 && s->batch < ZC_QUERY_BATCH) { /* slices then start inside a validity byte */
            s->vstride = s->batch / 8 + 1;
            s->vbits = tsf_calloc(A(s), s->cols.cap, s->vstride);
        }
        if (!s->view || (s->vstride && !s->vbits)) {
            st = tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
            goto fail;
        }
    }
    q.ncolumns = s->cols.nq;
    if ((st = tsf_query_open(r, &q, &s->q, err)) || (st = stream_start(s, out, err))) goto fail;
    s->own_reader = own;
    return TSF_OK;
fail:
    stream_free(s);
    return st;
}

/* Reads and checks a dataset stream's options: the dataset query's (NULL = defaults) into *q. */
static tsf_status dataset_options(const tsf_dataset_query_options *in, const tsf_arrow_options *opts,
                                  tsf_dataset_query_options *q, tsf_error *err)
{
    tsf_dataset_query_options_init(q);
    if (in && in->struct_size != sizeof *q)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_query_options.struct_size %zu unknown", in->struct_size);
    if (in) *q = *in;
    if (opts && opts->struct_size >= offsetof(tsf_arrow_options, time_unit) && opts->query)
        return tsf_err(err, TSF_EINVAL, "a dataset stream takes its query as tsf_dataset_query_options: "
                       "tsf_arrow_options.query must be NULL");
    return TSF_OK;
}

static tsf_status open_dataset_stream(tsf_dataset *ds, int own, const tsf_dataset_query_options *qin,
                                      const tsf_arrow_options *opts, struct ArrowArrayStream *out, tsf_error *err)
{
    tsf_dataset_query_options q;
    tsf_arrow_options o;
    astream *s;
    tsf_status st = dataset_options(qin, opts, &q, err);
    if (st || (st = stream_new(opts, &o, &s, err))) return st;
    s->ds = ds;
    if ((st = tsf_ar_dataset_columns(ds, &q, &o, A(s), &s->cols, err))) goto fail;
    if ((st = filter_copy(q.where, A(s), &s->where, err))) goto fail;
    q.where = s->where;
    q.columns = s->cols.qnames;
    q.ncolumns = s->cols.nq;
    if ((st = tsf_dataset_query_open(ds, &q, &s->dq, err)) || (st = stream_start(s, out, err))) goto fail;
    s->own_ds = own;
    return TSF_OK;
fail:
    stream_free(s);
    return st;
}

tsf_status tsf_arrow_stream_open(tsf_reader *r, const tsf_arrow_options *opts, struct ArrowArrayStream *out,
                                 tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_arrow_stream_open: reader and out are required");
    return open_stream(r, 0, opts, out, err);
}

tsf_status tsf_arrow_stream_open_file(struct ArrowArrayStream *out, const char *path,
                                      const tsf_reader_options *reader_opts, const tsf_arrow_options *opts,
                                      tsf_error *err)
{
    if (!out || !path) return tsf_err(err, TSF_EINVAL, "tsf_arrow_stream_open_file: out and path are required");
    tsf_reader *r;
    tsf_status st = tsf_reader_open(&r, path, reader_opts, err);
    if (st) return st;
    if ((st = open_stream(r, 1, opts, out, err))) tsf_reader_close(r);
    return st;
}

tsf_status tsf_arrow_schema(tsf_reader *r, const tsf_arrow_options *opts, struct ArrowSchema *out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_arrow_schema: reader and out are required");
    tsf_arrow_options o;
    tsf_status st = tsf_ar_options(opts, &o, err);
    if (st) return st;
    acols c;
    if ((st = tsf_ar_columns(r, &o, o.allocator, &c, err))) return st;
    st = tsf_ar_schema(&c, o.allocator, out, err);
    tsf_ar_columns_free(&c, o.allocator);
    return st;
}

tsf_status tsf_arrow_dataset_stream_open(tsf_dataset *ds, const tsf_dataset_query_options *q,
                                         const tsf_arrow_options *opts, struct ArrowArrayStream *out, tsf_error *err)
{
    if (!ds || !out) return tsf_err(err, TSF_EINVAL, "tsf_arrow_dataset_stream_open: dataset and out are required");
    return open_dataset_stream(ds, 0, q, opts, out, err);
}

tsf_status tsf_arrow_dataset_stream_open_paths(struct ArrowArrayStream *out, const char *const *paths, size_t n,
                                               const tsf_dataset_options *ds_opts, const tsf_dataset_query_options *q,
                                               const tsf_arrow_options *opts, tsf_error *err)
{
    if (!out || !paths)
        return tsf_err(err, TSF_EINVAL, "tsf_arrow_dataset_stream_open_paths: out and paths are required");
    tsf_dataset *ds;
    tsf_status st = tsf_dataset_open(&ds, paths, n, ds_opts, err);
    if (st) return st;
    if ((st = open_dataset_stream(ds, 1, q, opts, out, err))) tsf_dataset_close(ds);
    return st;
}

tsf_status tsf_arrow_dataset_schema(tsf_dataset *ds, const tsf_dataset_query_options *qin,
                                    const tsf_arrow_options *opts, struct ArrowSchema *out, tsf_error *err)
{
    if (!ds || !out) return tsf_err(err, TSF_EINVAL, "tsf_arrow_dataset_schema: dataset and out are required");
    tsf_dataset_query_options q;
    tsf_arrow_options o;
    tsf_status st = dataset_options(qin, opts, &q, err);
    if (st || (st = tsf_ar_options(opts, &o, err))) return st;
    acols c;
    if ((st = tsf_ar_dataset_columns(ds, &q, &o, o.allocator, &c, err))) return st;
    st = tsf_ar_schema(&c, o.allocator, out, err);
    tsf_ar_columns_free(&c, o.allocator);
    return st;
}
