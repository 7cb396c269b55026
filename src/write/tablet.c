/*
 * tablet.c - tablets (column batches) and the write path of the writer (spec
 * tsfile-container-format.md §4.1a, §6.4, §10.1, §20): validation of the whole tablet before
 * anything is buffered (strictly increasing times per series / aligned device / table device),
 * the optional stable sort (last duplicate wins), page-sized column batches for non-aligned
 * series, lockstep row batches for aligned and table devices, chunk-group flushes when the
 * memory budget is reached, and the row API on top of a one-row tablet.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auto.h"
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

static int is_bin(tsf_type t) { return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB; }

static void arena_free(tsf_tablet *t)
{
    arena_block *b = t->arena;
    while (b) {
        arena_block *n = b->next;
        tsf_free(t->w->alloc, b, sizeof *b + b->cap);
        b = n;
    }
    t->arena = NULL;
}

static void *arena_alloc(tsf_tablet *t, size_t n)
{
    arena_block *b = t->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = tsf_alloc(t->w->alloc, sizeof *b + cap);
        if (!b) return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = t->arena;
        t->arena = b;
    }
    void *p = (uint8_t *)(b + 1) + b->used;
    b->used += n;
    return p;
}

void tsf_tablet_free(tsf_tablet *t)
{
    if (!t) return;
    const tsf_allocator *a = t->w->alloc;
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->own && t->own[i]) tsf_free(a, t->own[i], t->cap * t->cols[i].width);
        if (t->valid && t->valid[i]) tsf_free(a, t->valid[i], (t->cap + 7) / 8);
    }
    if (t->vals) tsf_free(a, t->vals, t->ncols * sizeof *t->vals);
    if (t->own) tsf_free(a, t->own, t->ncols * sizeof *t->own);
    if (t->refn) tsf_free(a, t->refn, t->ncols * sizeof *t->refn);
    if (t->valid) tsf_free(a, t->valid, t->ncols * sizeof *t->valid);
    if (t->cols) tsf_free(a, t->cols, t->ncols * sizeof *t->cols);
    if (t->times) tsf_free(a, t->times, t->cap * sizeof *t->times);
    if (t->perm) tsf_free(a, t->perm, t->cap * 2 * sizeof *t->perm);
    arena_free(t);
    tsf_free(a, t, sizeof *t);
}

void tsf_tablet_reset(tsf_tablet *t)
{
    if (!t) return;
    size_t used = (t->rows + 7) / 8;
    for (size_t i = 0; i < t->ncols; i++) {
        memset(t->valid[i], 0, used);
        t->vals[i] = t->own[i]; /* borrowed arrays are released */
    }
    t->rows = 0;
    arena_free(t);
}

size_t tsf_tablet_rows(const tsf_tablet *t) { return t ? t->rows : 0; }

static tsf_status find_tree_col(wdevice *d, const char *name, size_t *idx)
{
    for (size_t i = 0; i < d->ncols; i++)
        if (strcmp(d->cols[i].name, name) == 0) {
            *idx = i;
            return TSF_OK;
        }
    return TSF_ENOTFOUND;
}

tsf_status tsf_tablet_new(tsf_writer *w, const char *target, const char *const *columns, size_t ncols,
                          size_t capacity, tsf_tablet **out, tsf_error *err)
{
    if (!w || !target || !out) return tsf_err(err, TSF_EINVAL, "tsf_tablet_new: NULL argument");
    *out = NULL;
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_tablet_new: writer is closed");
    if (capacity == 0 || capacity > ((size_t)1 << 32))
        return tsf_err(err, TSF_EINVAL, "tsf_tablet_new: capacity %zu out of range", capacity);
    tsf_tablet *t = tsf_calloc(w->alloc, 1, sizeof *t);
    if (!t) return tsf_err(err, TSF_ENOMEM, "tsf_tablet_new: out of memory");
    t->w = w;
    t->table = -1;
    t->cap = capacity;
    tsf_status s = TSF_OK;
    int ti = strncmp(target, "root", 4) == 0 && (target[4] == '.' || !target[4]) ? -1 : tsf_w_table_index(w, target);
    if (ti < 0) {
        size_t n = strlen(target);
        char *buf = tsf_alloc(w->alloc, n + 1);
        tsf_mi_seg segs[TSF_W_MAX_SEGS + 3];
        size_t ns;
        if (!buf) {
            tsf_free(w->alloc, t, sizeof *t);
            return tsf_err(err, TSF_ENOMEM, "tsf_tablet_new: out of memory");
        }
        s = tsf_w_split_path(w, target, segs, &ns, buf, err);
        if (!s) {
            t->dev = tsf_w_find_device(w, segs, ns, NULL);
            if (!t->dev || t->dev->table >= 0)
                s = tsf_err(err, TSF_ENOTFOUND, "tsf_tablet_new: unknown device or table '%s'", target);
        }
        tsf_free(w->alloc, buf, n + 1);
        if (s) {
            tsf_free(w->alloc, t, sizeof *t);
            return s;
        }
    }
    t->table = ti;
    const wtable *tb = ti >= 0 ? &w->tables[ti] : NULL;
    if (!columns) ncols = tb ? tb->ntags + tb->nfields : t->dev->ncols;
    if (ncols == 0) {
        tsf_free(w->alloc, t, sizeof *t);
        return tsf_err(err, TSF_EINVAL, "tsf_tablet_new: no columns for '%s'", target);
    }
    t->ncols = ncols;
    t->cols = tsf_calloc(w->alloc, ncols, sizeof *t->cols);
    t->vals = tsf_calloc(w->alloc, ncols, sizeof *t->vals);
    t->own = tsf_calloc(w->alloc, ncols, sizeof *t->own);
    t->refn = tsf_calloc(w->alloc, ncols, sizeof *t->refn);
    t->valid = tsf_calloc(w->alloc, ncols, sizeof *t->valid);
    t->times = tsf_alloc(w->alloc, capacity * sizeof *t->times);
    if (!t->cols || !t->vals || !t->own || !t->refn || !t->valid || !t->times) goto oom;
    for (size_t i = 0; i < ncols; i++) {
        tcol *c = &t->cols[i];
        if (tb) {
            size_t ci = 0;
            if (!columns) {
                ci = i < tb->ntags ? tb->tag_idx[i] : tb->field_idx[i - tb->ntags];
            } else {
                if (!columns[i]) goto bad_null;
                for (ci = 0; ci < tb->ncols; ci++)
                    if (strcasecmp(tb->cols[ci].name, columns[i]) == 0) break;
                if (ci == tb->ncols) {
                    s = tsf_err(err, TSF_ENOTFOUND, "tsf_tablet_new: table '%s' has no column '%s'", tb->name,
                                columns[i]);
                    goto fail;
                }
            }
            c->idx = ci;
            c->type = (tsf_type)tb->cols[ci].data_type;
            c->category = tb->cols[ci].category;
            for (size_t f = 0; f < tb->nfields; f++)
                if (tb->field_idx[f] == ci) c->field = f;
        } else {
            size_t ci = i;
            if (columns) {
                if (!columns[i]) goto bad_null;
                if (find_tree_col(t->dev, columns[i], &ci)) {
                    s = tsf_err(err, TSF_ENOTFOUND, "tsf_tablet_new: unknown series %s.%s", t->dev->path, columns[i]);
                    goto fail;
                }
            }
            c->idx = ci;
            c->type = t->dev->cols[ci].type;
            c->category = TSF_COLUMN_FIELD;
            c->field = ci;
        }
        for (size_t j = 0; j < i; j++)
            if (t->cols[j].idx == c->idx) {
                s = tsf_err(err, TSF_EINVAL, "tsf_tablet_new: column %zu repeats column %zu", i, j);
                goto fail;
            }
        c->width = tsf_type_width(c->type);
        t->own[i] = t->vals[i] = tsf_alloc(w->alloc, capacity * c->width);
        t->valid[i] = tsf_calloc(w->alloc, (capacity + 7) / 8, 1);
        if (!t->own[i] || !t->valid[i]) goto oom;
    }
    *out = t;
    return TSF_OK;
bad_null:
    s = tsf_err(err, TSF_EINVAL, "tsf_tablet_new: column name is NULL");
    goto fail;
oom:
    s = tsf_err(err, TSF_ENOMEM, "tsf_tablet_new: out of memory");
fail:
    tsf_tablet_free(t);
    return s;
}

/* ---- setters ------------------------------------------------------------------------------ */

tsf_status tsf_tablet_set_times(tsf_tablet *t, const int64_t *times, size_t n, tsf_error *err)
{
    if (!t || (!times && n)) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_times: NULL argument");
    if (n > t->cap) return tsf_err(err, TSF_ERANGE, "tsf_tablet_set_times: %zu rows exceed capacity %zu", n, t->cap);
    memcpy(t->times, times, n * sizeof *times);
    if (n < t->rows)
        for (size_t i = 0; i < t->ncols; i++) /* rows beyond n become unset */
            for (size_t r = n; r < t->rows; r++) t->valid[i][r >> 3] &= (uint8_t) ~(1u << (r & 7));
    t->rows = n;
    return TSF_OK;
}

static void set_valid_range(uint8_t *v, size_t n)
{
    memset(v, 0xff, n / 8);
    if (n & 7) v[n / 8] |= (uint8_t)((1u << (n & 7)) - 1);
}

/* Presence of rows [0, n) of a column from an LSB-first bitmap (NULL = all present). */
static void set_validity(tsf_tablet *t, size_t col, const uint8_t *validity, size_t n)
{
    if (validity) {
        memcpy(t->valid[col], validity, (n + 7) / 8);
        if (n & 7) t->valid[col][n / 8] &= (uint8_t)((1u << (n & 7)) - 1);
    } else {
        set_valid_range(t->valid[col], n);
    }
}

/* A borrowed column becomes the tablet's own copy (before a cell of it changes). */
static void own_column(tsf_tablet *t, size_t col)
{
    if (t->vals[col] == t->own[col]) return;
    memcpy(t->own[col], t->vals[col], t->refn[col] * t->cols[col].width);
    t->vals[col] = t->own[col];
}

tsf_status tsf_tablet_set_column_ref(tsf_tablet *t, size_t col, const void *values, const uint8_t *validity,
                                     size_t n, tsf_error *err)
{
    if (!t || (!values && n)) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_column_ref: NULL argument");
    if (col >= t->ncols) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_column_ref: column %zu out of range", col);
    tsf_type ty = t->cols[col].type;
    if (!n || ty == TSF_BOOLEAN || is_bin(ty)) /* normalised / descriptors: the copying setter */
        return tsf_tablet_set_column(t, col, values, validity, n, err);
    if (n > t->cap)
        return tsf_err(err, TSF_ERANGE, "tsf_tablet_set_column_ref: %zu rows exceed capacity %zu", n, t->cap);
    for (size_t r = n; r < t->rows; r++) /* cells set beyond n live in the tablet's buffer: copy */
        if ((t->valid[col][r >> 3] >> (r & 7)) & 1) return tsf_tablet_set_column(t, col, values, validity, n, err);
    /* the writer only reads vals; own_column() copies before any cell is changed */
    t->vals[col] = (uint8_t *)(uintptr_t)values;
    t->refn[col] = n;
    set_validity(t, col, validity, n);
    return TSF_OK;
}

tsf_status tsf_tablet_set_column(tsf_tablet *t, size_t col, const void *values, const uint8_t *validity, size_t n,
                                 tsf_error *err)
{
    if (!t || (!values && n)) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_column: NULL argument");
    if (col >= t->ncols) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_column: column %zu out of range", col);
    if (n > t->cap) return tsf_err(err, TSF_ERANGE, "tsf_tablet_set_column: %zu rows exceed capacity %zu", n, t->cap);
    tcol *c = &t->cols[col];
    t->vals[col] = t->own[col];
    memcpy(t->vals[col], values, n * c->width);
    if (c->type == TSF_BOOLEAN) /* normalise to 0/1 */
        for (size_t i = 0; i < n; i++) t->vals[col][i] = t->vals[col][i] != 0;
    set_validity(t, col, validity, n);
    return TSF_OK;
}

tsf_status tsf_tablet_set_time(tsf_tablet *t, size_t row, int64_t time, tsf_error *err)
{
    if (!t) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_time: tablet is NULL");
    if (row >= t->cap) return tsf_err(err, TSF_ERANGE, "tsf_tablet_set_time: row %zu out of capacity %zu", row, t->cap);
    t->times[row] = time;
    if (row >= t->rows) t->rows = row + 1;
    return TSF_OK;
}

static tsf_status cell(tsf_tablet *t, size_t row, size_t col, tsf_type want, const char *fn, tsf_error *err)
{
    if (!t) return tsf_err(err, TSF_EINVAL, "%s: tablet is NULL", fn);
    if (col >= t->ncols) return tsf_err(err, TSF_EINVAL, "%s: column %zu out of range", fn, col);
    if (row >= t->cap) return tsf_err(err, TSF_ERANGE, "%s: row %zu out of capacity %zu", fn, row, t->cap);
    tsf_type ty = t->cols[col].type;
    int ok = ty == want || (want == TSF_INT32 && ty == TSF_DATE) || (want == TSF_INT64 && ty == TSF_TIMESTAMP) ||
             (want == TSF_TEXT && is_bin(ty));
    if (!ok)
        return tsf_err(err, TSF_EINVAL, "%s: column %zu is %s, not %s", fn, col, tsf_type_name(ty),
                       want == TSF_TEXT ? "TEXT/STRING/BLOB" : tsf_type_name(want));
    own_column(t, col);
    t->valid[col][row >> 3] |= (uint8_t)(1u << (row & 7));
    if (row >= t->rows) t->rows = row + 1;
    return TSF_OK;
}

#define SETTER(NAME, CT, TY, EXPR)                                                                  \
    tsf_status NAME(tsf_tablet *t, size_t row, size_t col, CT v, tsf_error *err)                    \
    {                                                                                               \
        tsf_status s = cell(t, row, col, TY, #NAME, err);                                           \
        if (s) return s;                                                                            \
        EXPR;                                                                                       \
        return TSF_OK;                                                                              \
    }

SETTER(tsf_tablet_set_bool, int, TSF_BOOLEAN, t->vals[col][row] = v != 0)
SETTER(tsf_tablet_set_int32, int32_t, TSF_INT32, memcpy(t->vals[col] + row * 4, &v, 4))
SETTER(tsf_tablet_set_int64, int64_t, TSF_INT64, memcpy(t->vals[col] + row * 8, &v, 8))
SETTER(tsf_tablet_set_float, float, TSF_FLOAT, memcpy(t->vals[col] + row * 4, &v, 4))
SETTER(tsf_tablet_set_double, double, TSF_DOUBLE, memcpy(t->vals[col] + row * 8, &v, 8))

tsf_status tsf_tablet_set_bytes(tsf_tablet *t, size_t row, size_t col, const void *data, size_t len, tsf_error *err)
{
    if (!data && len) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_bytes: data is NULL");
    tsf_status s = cell(t, row, col, TSF_TEXT, "tsf_tablet_set_bytes", err);
    if (s) return s;
    void *copy = len ? arena_alloc(t, len) : NULL;
    if (len && !copy) {
        t->valid[col][row >> 3] &= (uint8_t) ~(1u << (row & 7));
        return tsf_err(err, TSF_ENOMEM, "tsf_tablet_set_bytes: out of memory");
    }
    if (len) memcpy(copy, data, len);
    tsf_bytes b = {copy, len};
    memcpy(t->vals[col] + row * sizeof b, &b, sizeof b);
    return TSF_OK;
}

tsf_status tsf_tablet_set_null(tsf_tablet *t, size_t row, size_t col, tsf_error *err)
{
    if (!t) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_null: tablet is NULL");
    if (col >= t->ncols) return tsf_err(err, TSF_EINVAL, "tsf_tablet_set_null: column %zu out of range", col);
    if (row >= t->cap) return tsf_err(err, TSF_ERANGE, "tsf_tablet_set_null: row %zu out of capacity", row);
    t->valid[col][row >> 3] &= (uint8_t) ~(1u << (row & 7));
    if (row >= t->rows) t->rows = row + 1;
    return TSF_OK;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static inline int vbit(const uint8_t *v, size_t i) { return (v[i >> 3] >> (i & 7)) & 1; }

/* NULL when rows [a, b) are all present (the fast path), else the bitmap. */
static const uint8_t *valid_or_null(const tsf_tablet *t, size_t col, size_t a, size_t b)
{
    const uint8_t *v = t->valid[col];
    size_t i = a;
    while (i < b && (i & 7)) {
        if (!vbit(v, i)) return v;
        i++;
    }
    while (i + 64 <= b) { /* 8 bytes at a time */
        uint64_t x;
        memcpy(&x, v + (i >> 3), 8);
        if (x != UINT64_MAX) return v;
        i += 64;
    }
    while (i + 8 <= b) {
        if (v[i >> 3] != 0xff) return v;
        i += 8;
    }
    for (; i < b; i++)
        if (!vbit(v, i)) return v;
    return NULL;
}

/* Table device of row r: [table, tags...] with trailing nulls stripped. */
static size_t row_segs(const tsf_tablet *t, const wtable *tb, size_t r, tsf_mi_seg *segs)
{
    segs[0].data = tb->name;
    segs[0].len = strlen(tb->name);
    for (size_t k = 0; k < tb->ntags; k++) {
        segs[1 + k].data = NULL;
        segs[1 + k].len = 0;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        const tcol *c = &t->cols[i];
        if (c->category != TSF_COLUMN_TAG || !vbit(t->valid[i], r)) continue;
        size_t k = 0;
        while (tb->tag_idx[k] != c->idx) k++;
        tsf_bytes b;
        memcpy(&b, t->vals[i] + r * sizeof b, sizeof b);
        segs[1 + k].data = b.data ? (const char *)b.data : "";
        segs[1 + k].len = b.len;
    }
    size_t n = 1 + tb->ntags;
    while (n > 1 && !segs[n - 1].data) n--;
    return n;
}

static int same_tags(const tsf_tablet *t, size_t a, size_t b)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->cols[i].category != TSF_COLUMN_TAG) continue;
        int va = vbit(t->valid[i], a), vb = vbit(t->valid[i], b);
        if (va != vb) return 0;
        if (!va) continue;
        tsf_bytes x, y;
        memcpy(&x, t->vals[i] + a * sizeof x, sizeof x);
        memcpy(&y, t->vals[i] + b * sizeof y, sizeof y);
        if (x.len != y.len || (x.len && memcmp(x.data, y.data, x.len))) return 0;
    }
    return 1;
}

static int tag_cmp(const tsf_tablet *t, size_t a, size_t b)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->cols[i].category != TSF_COLUMN_TAG) continue;
        int va = vbit(t->valid[i], a), vb = vbit(t->valid[i], b);
        if (va != vb) return va ? 1 : -1;
        if (!va) continue;
        tsf_bytes x, y;
        memcpy(&x, t->vals[i] + a * sizeof x, sizeof x);
        memcpy(&y, t->vals[i] + b * sizeof y, sizeof y);
        int c = tsf_mi_str_cmp((const char *)x.data, x.len, (const char *)y.data, y.len);
        if (c) return c;
    }
    return 0;
}

static int row_cmp(const tsf_tablet *t, size_t a, size_t b)
{
    if (t->table >= 0) {
        int c = tag_cmp(t, a, b);
        if (c) return c;
    }
    return t->times[a] < t->times[b] ? -1 : t->times[a] > t->times[b];
}

/* Stable sort by (tags, time), then keep the last of equal keys; permutes the tablet in place. */
static tsf_status sort_tablet(tsf_tablet *t, tsf_error *err)
{
    size_t n = t->rows;
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++) sorted = row_cmp(t, i - 1, i) < 0;
    if (sorted) return TSF_OK;
    if (!t->perm) {
        t->perm = tsf_alloc(t->w->alloc, t->cap * 2 * sizeof *t->perm);
        if (!t->perm) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (sort)");
    }
    size_t *a = t->perm, *b = t->perm + t->cap;
    for (size_t i = 0; i < n; i++) a[i] = i;
    for (size_t width = 1; width < n; width *= 2) { /* bottom-up merge sort: stable */
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) b[k++] = row_cmp(t, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid) b[k++] = a[i++];
            while (j < hi) b[k++] = a[j++];
        }
        size_t *tmp = a;
        a = b;
        b = tmp;
    }
    size_t m = 0; /* dedupe: last of equal keys wins */
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && row_cmp(t, a[i], a[i + 1]) == 0) continue;
        a[m++] = a[i];
    }
    /* apply the permutation through a scratch copy of each column */
    size_t maxw = 8;
    for (size_t c = 0; c < t->ncols; c++)
        if (t->cols[c].width > maxw) maxw = t->cols[c].width;
    uint8_t *tmp = tsf_alloc(t->w->alloc, n * maxw + (n + 7) / 8);
    if (!tmp) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (sort)");
    int64_t *tt = (int64_t *)tmp;
    for (size_t i = 0; i < m; i++) tt[i] = t->times[a[i]];
    memcpy(t->times, tt, m * 8);
    for (size_t c = 0; c < t->ncols; c++) {
        size_t wd = t->cols[c].width;
        uint8_t *bm = tmp + n * maxw;
        memset(bm, 0, (n + 7) / 8);
        for (size_t i = 0; i < m; i++) {
            memcpy(tmp + i * wd, t->vals[c] + a[i] * wd, wd);
            if (vbit(t->valid[c], a[i])) bm[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        memcpy(t->own[c], tmp, m * wd); /* a borrowed column is not written to */
        t->vals[c] = t->own[c];
        memcpy(t->valid[c], bm, (n + 7) / 8);
    }
    tsf_free(t->w->alloc, tmp, n * maxw + (n + 7) / 8);
    t->rows = m;
    return TSF_OK;
}

/* ---- parallel column work (options.threads) ----------------------------------------------- */

/*
 * One batch of independent column jobs: the non-aligned columns of a tree tablet (append, which
 * seals full pages), the columns of an aligned page (seal) or the pending pages of a non-aligned
 * device at a flush (seal). The calling thread and the pool's workers take the next job through an
 * atomic counter and work in their own wctx; columns touch only their own state, so the bytes do
 * not depend on the thread count. AUTO columns stay on the calling thread (they may write output).
 *
 * The pool (threads - 1 workers) lives from open to close: no thread start per tablet. A worker
 * also writes the chunk groups of the last flush (the chunks swapped into wcol.out) while the
 * columns fill their other chunk buffers (wcol.ck): output overlaps encoding, and the file's bytes
 * stay in the same order (one flush's groups are written before the next flush swaps again). The
 * output goes in pieces (a group header, a chunk: out_piece), one at a time; between two pieces a
 * worker serves a posted pipe first, so the output fills the time the pipes leave it.
 */
typedef struct wjobs {
    tsf_writer *w;
    tsf_tablet *t;
    wdevice *d;
    int seal;   /* 0: append tablet columns; 1: seal the device's pending pages; 2: aligned rows */
    uint64_t g; /* device row of the tablet's first row (append) */
    size_t n;   /* items: append jobs, or device columns (+ 1: the aligned time column) to seal */
    size_t r, k;          /* aligned rows: tablet rows [r, r + k) */
    const size_t *feed;   /* aligned rows: tablet column of each device column */
    atomic_size_t next;
    atomic_int stop;
} wjobs;

typedef struct wworker {
    wjobs *j;
    wctx *x;
    size_t bad; /* first failed item, SIZE_MAX if none */
    tsf_status s;
    tsf_error err;
} wworker;

static wcol *job_col(const wjobs *j, size_t i)
{
    if (j->seal == 1) return !j->d->aligned ? &j->d->cols[i] : i == 0 ? &j->d->tcol : &j->d->cols[i - 1];
    return &j->d->cols[j->t->cols[i].idx];
}

/*
 * A pipe: the last jobs of a tablet (jobs [lo, hi) of `range`), run by the workers after the write
 * call has returned, so that the calling thread goes back to the application instead of waiting
 * for the slower thread. Kind 1: non-aligned appends from copies of the tablet columns (a borrowed
 * column is valid only until the call returns; one thread copies them while the caller encodes its
 * own columns, and the call returns once they are copied); kind 2: the page seals of an aligned
 * device (they read only the pending pages). The next call into the writer joins it first (the
 * caller takes the jobs not started yet), so the state and the bytes are those of one thread.
 */
typedef struct wpipe {
    int kind;             /* 1: append staged columns; 2: seal an aligned device's pages */
    wdevice *d;
    tsf_tablet *t;        /* kind 1: the tablet, read by the copy only */
    uint64_t g;           /* kind 1: device row of the tablet's first row */
    size_t rows;          /* kind 1: tablet rows; kind 2: page rows */
    size_t c0, nc;        /* kind 1: tablet columns [c0, nc) are staged (job i: columns i * JOB_COLS...) */
    _Atomic uint64_t range; /* unclaimed jobs: lo | hi << 32; the caller takes lo, the workers hi - 1 */
    uint64_t hi0;           /* hi when posted */
    atomic_size_t wdone;    /* jobs the workers have finished */
    atomic_int copy_claim, copied;
} wpipe;

/*
 * Probe of the two-thread pipeline, compiled in only with -DTSF_W_PROBE (bench/debug builds): where
 * the calling thread and the workers spend their time; printed to stderr when the pool stops.
 */
#ifdef TSF_W_PROBE
#include <stdio.h>
#include <time.h>
typedef struct wprobe {
    uint64_t pipes, copy_caller, copy_caller_obusy, join_jobs, joins_helped, flushes, share_sum;
    uint64_t bal_up, bal_down, bal_none, starved;
    uint64_t t_copy_caller, t_copy_wait, t_own, t_join_run, t_join_wait, t_flush, t_outwait, t_seal, t_call;
    _Atomic uint64_t w_pipe_jobs, w_copies, t_w_idle, t_w_out, t_w_pipe, t_w_batch, t_w_copy;
    _Atomic uint64_t t_w_out_gap, t_w_job_gap; /* started while the caller was outside the writer */
    atomic_int incall;
    _Atomic uint64_t t_post, t_w_wake, t_w_idle_incall, w_wakes, t_w_wake_slept, w_wakes_slept;
} wprobe;
static uint64_t probe_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define PROBE(x) x
#else
#define PROBE(x)
#endif

typedef struct wthr {
    tsf_writer *w;
    size_t id; /* worker i uses ks[i + 1] and w->wk[i] */
} wthr;

struct wpool {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* workers: a batch or an output was posted, or quit */
    pthread_cond_t idle; /* calling thread: the batch's workers left, or the output finished */
    pthread_t th[63];
    wthr ta[63];
    size_t nth;
    wworker ks[64]; /* ks[0]: the calling thread */
    wjobs *batch;   /* open batch (NULL: none) and its generation */
    uint64_t bgen;
    size_t inside;  /* workers inside the open batch */
    wdevice **olist; /* devices of the pending output, ascending */
    size_t on, ocap;
    size_t oi, oj;   /* the next output piece: device olist[oi], piece oj (out_piece) */
    int opending, obusy, quit;
    atomic_int outing; /* = opending, read without the lock by pipe_balance */
    tsf_status os; /* the output's result, reported by tsf_w_out_wait */
    tsf_error oerr;
    /* the tail of a tablet left to the workers when the write call returns (see pipe_post) */
    wpipe pipe;
    int pipe_on;       /* posted, not yet joined */
    uint64_t pgen;     /* generation of the posted pipe */
    size_t pinside;    /* workers inside the pipe */
    size_t share[2];   /* the workers' jobs per pipe kind (0 = not measured yet), adapted at each join */
    int budget_due;    /* the memory budget check of the tablet whose tail ran on is still to do */
    wcol **pc;         /* pipe kind 1: device column of each tablet column, its staged values/presence */
    const void **pv;
    const uint8_t **pb;
    size_t pcap;
    uint8_t *stage;    /* pipe kind 1: the staged copies */
    size_t scap;
    PROBE(wprobe pr;)
};

/* Columns per append job: four of one type share a statistics pass (tsf_wcol_append_group). */
#define JOB_COLS 4
/* below this many cells a tablet is encoded on the calling thread: starting threads for a few rows (the
   row-by-row path) costs far more than the work; the output bytes are the same either way */
#define PAR_MIN_CELLS 16384

/*
 * Appends n columns (at most 64) of one batch of rows: cs[i] gets vals[i] with presence valid[i]
 * (NULL = every row present); runs of columns without nulls go through tsf_wcol_append_group.
 * skip_auto leaves AUTO columns out.
 */
static tsf_status append_run(tsf_writer *w, wctx *x, wcol *const *cs_in, const void *const *vals,
                             const uint8_t *const *valid, size_t n, const int64_t *times, size_t rows, uint64_t g,
                             int skip_auto, tsf_error *err)
{
    wcol *cs[64];
    const void *vs[64];
    size_t m = 0;
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < n && !s; i++) {
        wcol *c = cs_in[i];
        if (skip_auto && c->autoc) continue;
        if (!valid[i]) {
            cs[m] = c;
            vs[m++] = vals[i];
            continue;
        }
        s = tsf_wcol_append_group(w, x, cs, vs, m, times, rows, g, err);
        m = 0;
        if (!s) s = tsf_wcol_append_x(w, x, c, times, vals[i], valid[i], 0, rows, g, err);
    }
    if (!s) s = tsf_wcol_append_group(w, x, cs, vs, m, times, rows, g, err);
    return s;
}

/* Appends tablet columns [lo, hi) (at most 64) of a non-aligned tree tablet. */
static tsf_status append_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, size_t lo, size_t hi, uint64_t g,
                              int skip_auto, tsf_error *err)
{
    wcol *cs[64];
    const void *vs[64];
    const uint8_t *vb[64];
    for (size_t i = lo; i < hi; i++) {
        cs[i - lo] = &d->cols[t->cols[i].idx];
        vs[i - lo] = t->vals[i];
        vb[i - lo] = valid_or_null(t, i, 0, t->rows);
    }
    return append_run(w, x, cs, vs, vb, hi - lo, t->times, t->rows, g, skip_auto, err);
}

static tsf_status aligned_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, const size_t *feed, size_t lo,
                               size_t hi, size_t r, size_t k, tsf_error *err);

static tsf_status job_run(wjobs *j, wctx *x, size_t i, tsf_error *err)
{
    tsf_writer *w = j->w;
    if (j->seal == 2) {
        size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < j->d->ncols ? lo + JOB_COLS : j->d->ncols;
        return aligned_cols(w, x, j->t, j->d, j->feed, lo, hi, j->r, j->k, err);
    }
    if (j->seal) return tsf_wcol_seal_x(w, x, job_col(j, i), j->d->aligned ? j->d->rows : 0, err);
    size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < j->t->ncols ? lo + JOB_COLS : j->t->ncols;
    return append_cols(w, x, j->t, j->d, lo, hi, j->g, 1, err);
}

static void *worker_main(void *arg)
{
    wworker *k = arg;
    wjobs *j = k->j;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n || atomic_load(&j->stop)) break;
        if (j->seal == 1 && job_col(j, i)->autoc) continue;
        tsf_status s = job_run(j, k->x, i, &k->err);
        if (s) {
            k->s = s;
            k->bad = i;
            atomic_store(&j->stop, 1);
            break;
        }
    }
    return NULL;
}

/* Claims the next job of a pipe, from the front (the caller) or the back (workers); SIZE_MAX: none left. */
static size_t pipe_claim(wpipe *q, int back)
{
    uint64_t r = atomic_load(&q->range);
    for (;;) {
        uint64_t lo = r & 0xffffffffu, hi = r >> 32;
        if (lo >= hi) return SIZE_MAX;
        uint64_t nr = back ? lo | (hi - 1) << 32 : (lo + 1) | hi << 32;
        if (atomic_compare_exchange_weak(&q->range, &r, nr)) return (size_t)(back ? hi - 1 : lo);
    }
}

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Pipe kind 1: copies the staged tablet columns (values, presence bits) into p->stage. */
static void pipe_copy(struct wpool *p)
{
    wpipe *q = &p->pipe;
    const tsf_tablet *t = q->t;
    uint8_t *o = p->stage;
    for (size_t i = q->c0; i < q->nc; i++) {
        size_t n = q->rows * t->cols[i].width;
        memcpy(o, t->vals[i], n);
        p->pv[i] = o;
        o += round8(n);
        const uint8_t *v = valid_or_null(t, i, 0, q->rows);
        p->pb[i] = NULL;
        if (v) {
            memcpy(o, v, (q->rows + 7) / 8);
            p->pb[i] = o;
            o += round8((q->rows + 7) / 8);
        }
    }
}

/* Makes sure the staged copies exist: copies them unless a worker has, else waits (1: copied here). */
static int pipe_copied(struct wpool *p)
{
    wpipe *q = &p->pipe;
    int z = 0;
    if (atomic_load(&q->copied)) return 0;
    if (atomic_compare_exchange_strong(&q->copy_claim, &z, 1)) {
        pipe_copy(p);
        atomic_store(&q->copied, 1);
        return 1;
    }
    while (!atomic_load(&q->copied)) sched_yield(); /* a copy in progress: a few hundred microseconds */
    return 0;
}

static tsf_status pipe_job(tsf_writer *w, struct wpool *p, wctx *x, size_t i, tsf_error *err)
{
    wpipe *q = &p->pipe;
    wdevice *d = q->d;
    if (q->kind == 2) return tsf_wcol_seal_x(w, x, i == 0 ? &d->tcol : &d->cols[i - 1], q->rows, err);
    size_t lo = i * JOB_COLS, hi = lo + JOB_COLS < q->nc ? lo + JOB_COLS : q->nc;
    const int64_t *times = d->dt + (q->g - d->dt_base); /* the tablet's times, kept until the join */
    return append_run(w, x, p->pc + lo, p->pv + lo, p->pb + lo, hi - lo, times, q->rows, q->g, 0, err);
}

/* Runs pipe jobs claimed from one end; the failure of the lowest job is kept in k. */
static void pipe_run(tsf_writer *w, struct wpool *p, wworker *k, int back)
{
    size_t i;
    PROBE(uint64_t t0 = probe_ns());
    int did = pipe_copied(p);
    (void)did;
    PROBE(if (did && back) {
        atomic_fetch_add(&p->pr.w_copies, 1);
        atomic_fetch_add(&p->pr.t_w_copy, probe_ns() - t0);
    })
    while ((i = pipe_claim(&p->pipe, back)) != SIZE_MAX) {
        PROBE(if (back) atomic_fetch_add(&p->pr.w_pipe_jobs, 1); else p->pr.join_jobs++);
        PROBE(uint64_t tj = probe_ns(); int gap = back && !atomic_load(&p->pr.incall));
        tsf_error e;
        tsf_status s = pipe_job(w, p, k->x, i, &e);
        PROBE(if (gap) atomic_fetch_add(&p->pr.t_w_job_gap, probe_ns() - tj));
        if (s && i < k->bad) {
            k->s = s;
            k->bad = i;
            k->err = e;
        }
        if (back) atomic_fetch_add(&p->pipe.wdone, 1);
    }
}

/*
 * One piece of the pending output, from each column's `out` chunk set: piece j == 0 of device d is
 * the chunk-group header (and an aligned device's time chunk), piece j >= 1 the chunk of column
 * j - 1. Pieces are written one at a time in this order (wpool.obusy), so the bytes are those of
 * one thread; between pieces the output thread serves a posted pipe or batch first.
 */
static tsf_status out_piece(tsf_writer *w, wctx *x, wdevice *d, size_t j, tsf_error *err)
{
    if (j) return tsf_wcol_flush_chunk_k(w, x, &d->cols[j - 1], &d->cols[j - 1].out, d->aligned, err);
    x->ghead.len = 0;
    tsf_wbuf_u8(&x->ghead, 0x00);
    tsf_mi_put_device(&x->ghead, d->segs, d->nsegs);
    if (x->ghead.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    tsf_status s = tsf_w_out(w, x->ghead.p, x->ghead.len, err);
    if (!s && d->aligned) s = tsf_wcol_flush_chunk_k(w, x, &d->tcol, &d->tcol.out, 0, err);
    return s;
}

static void *pool_main(void *arg)
{
    const wthr *a = arg;
    tsf_writer *w = a->w;
    struct wpool *p = w->pool;
    wworker *k = &p->ks[a->id + 1];
    uint64_t seen = 0, pseen = 0;
    PROBE(int slept = 0);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->pipe_on && p->pgen != pseen) { /* first: the caller may be waiting for the copy */
            pseen = p->pgen;
            p->pinside++;
            pthread_mutex_unlock(&p->mu);
            PROBE(uint64_t t0 = probe_ns(); atomic_fetch_add(&p->pr.t_w_wake, t0 - atomic_load(&p->pr.t_post));
                  atomic_fetch_add(&p->pr.w_wakes, 1);
                  if (slept) {
                      atomic_fetch_add(&p->pr.t_w_wake_slept, t0 - atomic_load(&p->pr.t_post));
                      atomic_fetch_add(&p->pr.w_wakes_slept, 1);
                  });
            pipe_run(w, p, k, 1);
            PROBE(atomic_fetch_add(&p->pr.t_w_pipe, probe_ns() - t0));
            PROBE(slept = 0);
            pthread_mutex_lock(&p->mu);
            if (--p->pinside == 0) pthread_cond_broadcast(&p->idle);
            continue;
        }
        /* output: after a pipe (its copy is due before the call returns), before a batch (the caller
           runs the jobs no worker takes: the serial output goes on meanwhile) */
        if (p->opending && !p->obusy) {
            p->obusy = 1;
            wdevice *d = p->olist[p->oi];
            size_t j = p->oj;
            int last = j + 1 > d->ncols && p->oi + 1 == p->on;
            pthread_mutex_unlock(&p->mu);
            tsf_error e = {0};
            PROBE(uint64_t t0 = probe_ns(); int gap = !atomic_load(&p->pr.incall));
            PROBE(slept = 0);
            tsf_status s = out_piece(w, k->x, d, j, &e);
            if (!s && last) s = tsf_w_out_flush(w, &e); /* the complete groups reach the OS now */
            PROBE(atomic_fetch_add(&p->pr.t_w_out, probe_ns() - t0));
            PROBE(if (gap) atomic_fetch_add(&p->pr.t_w_out_gap, probe_ns() - t0));
            if (s) w->failed = 1; /* a lost chunk group: only close/abort from now on */
            pthread_mutex_lock(&p->mu);
            p->obusy = 0;
            if (++p->oj > d->ncols) {
                p->oj = 0;
                p->oi++;
            }
            if (s || p->oi == p->on) {
                p->os = s;
                if (s) p->oerr = e;
                p->opending = 0;
                atomic_store(&p->outing, 0);
                pthread_cond_broadcast(&p->idle);
            }
            continue;
        }
        if (p->batch && p->bgen != seen) {
            seen = p->bgen;
            k->j = p->batch;
            p->inside++;
            pthread_mutex_unlock(&p->mu);
            PROBE(uint64_t t0 = probe_ns());
            worker_main(k);
            PROBE(atomic_fetch_add(&p->pr.t_w_batch, probe_ns() - t0));
            pthread_mutex_lock(&p->mu);
            if (--p->inside == 0) pthread_cond_broadcast(&p->idle);
            continue;
        }
        if (p->quit) break;
        PROBE(uint64_t t0 = probe_ns());
        pthread_cond_wait(&p->wake, &p->mu);
        PROBE(atomic_fetch_add(&p->pr.t_w_idle, probe_ns() - t0));
        PROBE(if (atomic_load(&p->pr.incall)) atomic_fetch_add(&p->pr.t_w_idle_incall, probe_ns() - t0));
        PROBE(slept = 1);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tsf_status tsf_w_pool_start(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = tsf_calloc(w->alloc, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
    if (pthread_mutex_init(&p->mu, NULL)) goto fail0;
    if (pthread_cond_init(&p->wake, NULL)) goto fail1;
    if (pthread_cond_init(&p->idle, NULL)) goto fail2;
    p->ks[0].x = &w->ctx;
    for (size_t i = 0; i < w->nwk; i++) p->ks[i + 1].x = &w->wk[i];
    w->pool = p;
    for (size_t i = 0; i < w->nwk; i++) { /* threads that fail to start leave their share to the others */
        p->ta[i] = (wthr){w, i};
        if (pthread_create(&p->th[p->nth], NULL, pool_main, &p->ta[i]) != 0) break;
        p->nth++;
    }
    return TSF_OK;
fail2:
    pthread_cond_destroy(&p->wake);
fail1:
    pthread_mutex_destroy(&p->mu);
fail0:
    tsf_free(w->alloc, p, sizeof *p);
    return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: cannot create the worker pool");
}

void tsf_w_pool_stop(tsf_writer *w)
{
    struct wpool *p = w->pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    while (p->opending || p->pinside) pthread_cond_wait(&p->idle, &p->mu);
    p->quit = 1;
    PROBE({
        wprobe *r = &p->pr;
        double ms = 1e-6;
        fprintf(stderr,
                "probe: pipes %llu (caller copies %llu, %llu while output ran; worker copies %llu) "
                "share avg %.2f "
                "(up %llu down %llu none %llu); flushes %llu (output late %llu)\n"
                "  caller ms: calls %.1f own %.1f copy %.1f copy-wait %.1f join-run %.1f (%llu jobs) "
                "join-wait %.1f "
                "flush %.1f (out-wait %.1f seal %.1f)\n"
                "  worker ms: idle %.1f output %.1f pipe %.1f (%llu jobs, copy %.1f) batch %.1f; "
                "started outside a call: output %.1f pipe jobs %.1f\n"
                "  worker: post to pipe entry %.1f ms (%llu pipes, avg %.1f us; from sleep %llu, avg %.1f us)\n",
                (unsigned long long)r->pipes, (unsigned long long)r->copy_caller,
                (unsigned long long)r->copy_caller_obusy, (unsigned long long)r->w_copies,
                r->pipes ? (double)r->share_sum / (double)r->pipes : 0.0, (unsigned long long)r->bal_up,
                (unsigned long long)r->bal_down, (unsigned long long)r->bal_none,
                (unsigned long long)r->flushes,
                (unsigned long long)r->starved, (double)r->t_call * ms,
                (double)r->t_own * ms, (double)r->t_copy_caller * ms, (double)r->t_copy_wait * ms,
                (double)r->t_join_run * ms, (unsigned long long)r->join_jobs, (double)r->t_join_wait * ms,
                (double)r->t_flush * ms, (double)r->t_outwait * ms, (double)r->t_seal * ms,
                (double)r->t_w_idle * ms, (double)r->t_w_out * ms, (double)r->t_w_pipe * ms,
                (unsigned long long)r->w_pipe_jobs, (double)r->t_w_copy * ms, (double)r->t_w_batch * ms,
                (double)r->t_w_out_gap * ms, (double)r->t_w_job_gap * ms, (double)r->t_w_wake * ms,
                (unsigned long long)r->w_wakes, r->w_wakes ? (double)r->t_w_wake / (double)r->w_wakes / 1e3 : 0.0,
                (unsigned long long)r->w_wakes_slept,
                r->w_wakes_slept ? (double)r->t_w_wake_slept / (double)r->w_wakes_slept / 1e3 : 0.0);
    })
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    if (p->olist) tsf_free(w->alloc, p->olist, p->ocap * sizeof *p->olist);
    if (p->pc) tsf_free(w->alloc, p->pc, p->pcap * sizeof *p->pc);
    if (p->pv) tsf_free(w->alloc, p->pv, p->pcap * sizeof *p->pv);
    if (p->pb) tsf_free(w->alloc, p->pb, p->pcap * sizeof *p->pb);
    if (p->stage) tsf_free(w->alloc, p->stage, p->scap);
    tsf_free(w->alloc, p, sizeof *p);
    w->pool = NULL;
}

tsf_status tsf_w_out_wait(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p) return TSF_OK;
    pthread_mutex_lock(&p->mu);
    while (p->opending) pthread_cond_wait(&p->idle, &p->mu);
    tsf_status s = p->os;
    if (s && err) *err = p->oerr;
    p->os = TSF_OK; /* reported once; w->failed stops the writer from now on */
    pthread_mutex_unlock(&p->mu);
    return s;
}

static void fold_ctx_mem(tsf_writer *w)
{
    int64_t m = (int64_t)w->mem + w->ctx.mem;
    w->mem = m > 0 ? (size_t)m : 0;
    w->ctx.mem = 0;
}

static void ks_reset(struct wpool *p)
{
    for (size_t k = 0; k <= p->nth; k++) {
        p->ks[k].bad = SIZE_MAX;
        p->ks[k].s = TSF_OK;
        p->ks[k].err.code = TSF_OK;
        p->ks[k].err.message[0] = 0;
    }
}

/* Folds the workers' buffered-bytes deltas in; returns the failure of the lowest item, if any. */
static tsf_status ks_collect(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    tsf_status s = TSF_OK;
    size_t bad = SIZE_MAX;
    for (size_t k = 0; k <= p->nth; k++) {
        if (k) {
            w->ctx.mem += p->ks[k].x->mem;
            p->ks[k].x->mem = 0;
        }
        if (p->ks[k].s && p->ks[k].bad < bad) {
            bad = p->ks[k].bad;
            s = p->ks[k].s;
            if (err) *err = p->ks[k].err;
        }
    }
    return s;
}

/* Joins the pipe: the caller runs the jobs no worker has started and waits for the workers inside. */
static tsf_status pipe_join(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p || !p->pipe_on) return TSF_OK;
    PROBE(uint64_t t0 = probe_ns(); uint64_t j0 = p->pr.join_jobs);
    pipe_run(w, p, &p->ks[0], 0);
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_join_run += t1 - t0; p->pr.joins_helped += p->pr.join_jobs != j0);
    pthread_mutex_lock(&p->mu);
    while (p->pinside) pthread_cond_wait(&p->idle, &p->mu);
    p->pipe_on = 0;
    pthread_mutex_unlock(&p->mu);
    PROBE(p->pr.t_join_wait += probe_ns() - t1);
    tsf_status s = ks_collect(w, err);
    fold_ctx_mem(w);
    return s;
}

/*
 * Balances the next pipe of this kind when the caller has done its part: the workers get one job
 * less if some are still waiting or the last one still runs (the next call would wait for it), one
 * more if they have finished all of theirs and no output is pending; with an output pending the
 * share stays (the output fills the workers' spare time; flush_async shrinks the share when the
 * output is late). The caller and the workers thus finish together (as in a batch); what runs on
 * after the call is less than a job, not work that would only hide behind the application's own
 * time between calls. A worker that has not come since the post because it is inside an output
 * piece gives no measure.
 */
static void pipe_balance(struct wpool *p)
{
    uint64_t r = atomic_load(&p->pipe.range);
    size_t *sh = &p->share[p->pipe.kind - 1];
    int outp = atomic_load(&p->outing);
    if ((r >> 32) == p->pipe.hi0 && outp) { /* inside an output piece since the post: no measure */
        PROBE(p->pr.bal_none++);
    } else if ((r & 0xffffffffu) < (r >> 32) || atomic_load(&p->pipe.wdone) < p->pipe.hi0 - (r >> 32)) {
        /* jobs left, or the last one still running: the next call would wait for it */
        if (*sh > 1) (*sh)--;
        PROBE(p->pr.bal_down++);
    } else if (!outp) {
        (*sh)++; /* capped where it is used */
        PROBE(p->pr.bal_up++);
    } /* else: the output fills the workers' spare time (flush_async shrinks the share if it starves) */
}

/* Posts the pipe in p->pipe (range and copy flags set) to the workers. */
static void pipe_post(struct wpool *p)
{
    ks_reset(p);
    pthread_mutex_lock(&p->mu);
    PROBE(atomic_store(&p->pr.t_post, probe_ns()));
    p->pipe_on = 1;
    p->pgen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

/* May a tablet's tail run on after the call (a pipe)? Not with AUTO columns (their cuts write output). */
static int pipe_ok(const tsf_writer *w, int big)
{
    return big && w->pool && w->pool->nth && !w->any_auto;
}

/* Every column fixed-width (binary values point into the tablet's arena: not staged). */
static int fixed_width(const tsf_tablet *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (is_bin(t->cols[i].type)) return 0;
    return 1;
}

/* The workers' share of n jobs (at least one each side). */
static size_t pipe_share(struct wpool *p, int kind, size_t n)
{
    size_t sh = p->share[kind - 1] ? p->share[kind - 1] : n / 2;
    if (sh > n - 1) sh = n - 1;
    if (sh < 1) sh = 1;
    p->share[kind - 1] = sh;
    return sh;
}

/* The caller's share of a posted pipe is done: rebalance the next split; on the caller's failure wait
 * for the workers (their own errors are dropped: the caller's comes first, as on one thread). */
static tsf_status pipe_end(tsf_writer *w, struct wpool *p, tsf_status s)
{
    pipe_balance(p);
    if (s) {
        tsf_error e;
        (void)pipe_join(w, &e);
    }
    return s;
}

/*
 * A non-aligned tablet whose last columns go on in the workers after the call returns (kind 1):
 * the caller appends columns [0, c0) from the tablet, a worker copies [c0, ncols) and appends them.
 */
static tsf_status pipe_append(tsf_writer *w, tsf_tablet *t, wdevice *d, uint64_t g, tsf_error *err)
{
    struct wpool *p = w->pool;
    size_t nj = (t->ncols + JOB_COLS - 1) / JOB_COLS;
    size_t j0 = nj - pipe_share(p, 1, nj), c0 = j0 * JOB_COLS;
    size_t need = 0;
    for (size_t i = c0; i < t->ncols; i++) need += round8(t->rows * t->cols[i].width) + round8((t->rows + 7) / 8);
    if (t->ncols > p->pcap) { /* contents are set at every post: fresh arrays */
        size_t nc = t->ncols;
        wcol **pc = tsf_alloc(w->alloc, nc * sizeof *pc);
        const void **pv = tsf_alloc(w->alloc, nc * sizeof *pv);
        const uint8_t **pb = tsf_alloc(w->alloc, nc * sizeof *pb);
        if (!pc || !pv || !pb) {
            if (pc) tsf_free(w->alloc, pc, nc * sizeof *pc);
            if (pv) tsf_free(w->alloc, pv, nc * sizeof *pv);
            if (pb) tsf_free(w->alloc, pb, nc * sizeof *pb);
            return tsf_err(err, TSF_ENOMEM, "writer: out of memory (pipeline)");
        }
        if (p->pc) tsf_free(w->alloc, p->pc, p->pcap * sizeof *p->pc);
        if (p->pv) tsf_free(w->alloc, p->pv, p->pcap * sizeof *p->pv);
        if (p->pb) tsf_free(w->alloc, p->pb, p->pcap * sizeof *p->pb);
        p->pc = pc;
        p->pv = pv;
        p->pb = pb;
        p->pcap = nc;
    }
    if (need > p->scap) {
        size_t nc = need + need / 4;
        uint8_t *ns = tsf_alloc(w->alloc, nc);
        if (!ns) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (pipeline)");
        if (p->stage) tsf_free(w->alloc, p->stage, p->scap);
        p->stage = ns;
        p->scap = nc;
    }
    for (size_t i = c0; i < t->ncols; i++) p->pc[i] = &d->cols[t->cols[i].idx];
    wpipe *q = &p->pipe;
    q->kind = 1;
    q->d = d;
    q->t = t;
    q->g = g;
    q->rows = t->rows;
    q->c0 = c0;
    q->nc = t->ncols;
    atomic_store(&q->range, (uint64_t)j0 | (uint64_t)nj << 32);
    q->hi0 = nj;
    atomic_store(&q->wdone, 0);
    atomic_store(&q->copy_claim, 0);
    atomic_store(&q->copied, 0);
    pipe_post(p);
    PROBE(p->pr.pipes++; p->pr.share_sum += nj - j0; uint64_t t0 = probe_ns());
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < c0 && !s; i += 64)
        s = append_cols(w, &w->ctx, t, d, i, i + 64 < c0 ? i + 64 : c0, g, 0, err);
    fold_ctx_mem(w);
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_own += t1 - t0; int ob = atomic_load(&p->outing));
    int did = pipe_copied(p); /* the tablet may change once this call returns */
    (void)did;
    PROBE(if (did) {
        p->pr.copy_caller++;
        p->pr.copy_caller_obusy += ob != 0;
        p->pr.t_copy_caller += probe_ns() - t1;
    } else p->pr.t_copy_wait += probe_ns() - t1;)
    return pipe_end(w, p, s);
}

/* Seals an aligned device's pending pages, the last columns in the workers after the call returns (kind 2). */
static tsf_status pipe_seal(tsf_writer *w, wdevice *d, tsf_error *err)
{
    struct wpool *p = w->pool;
    size_t n = 1 + d->ncols, j0 = n - pipe_share(p, 2, n);
    wpipe *q = &p->pipe;
    q->kind = 2;
    q->d = d;
    q->t = NULL;
    q->rows = d->rows;
    atomic_store(&q->range, (uint64_t)j0 | (uint64_t)n << 32);
    q->hi0 = n;
    atomic_store(&q->wdone, 0);
    atomic_store(&q->copy_claim, 1);
    atomic_store(&q->copied, 1);
    pipe_post(p);
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < j0 && !s; i++)
        s = tsf_wcol_seal_x(w, &w->ctx, i == 0 ? &d->tcol : &d->cols[i - 1], d->rows, err);
    fold_ctx_mem(w);
    d->rows = 0;
    return pipe_end(w, p, s);
}

/* Runs every job; on failure reports the failure of the lowest item (as one thread would). */
static tsf_status jobs_run(tsf_writer *w, wjobs *j, tsf_error *err)
{
    struct wpool *p = w->pool;
    wworker *ks = p->ks;
    tsf_status s = pipe_join(w, err);
    if (s) return s;
    atomic_init(&j->next, 0);
    atomic_init(&j->stop, 0);
    ks_reset(p);
    for (size_t k = 0; k <= p->nth; k++) ks[k].j = j;
    if (p->nth) {
        pthread_mutex_lock(&p->mu);
        p->batch = j;
        p->bgen++;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    worker_main(&ks[0]);
    if (p->nth) { /* close the batch; wait for the workers inside */
        pthread_mutex_lock(&p->mu);
        p->batch = NULL;
        while (p->inside) pthread_cond_wait(&p->idle, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    s = ks_collect(w, err);
    /* AUTO columns on this thread, in column order */
    for (size_t i = 0; j->seal == 1 && i < j->n && !s; i++)
        if (job_col(j, i)->autoc) s = job_run(j, &w->ctx, i, err);
    for (size_t i = 0; j->seal == 0 && i < j->t->ncols && !s; i++) {
        tsf_tablet *t = j->t;
        wcol *c = &j->d->cols[t->cols[i].idx];
        if (c->autoc) s = tsf_wcol_append_x(w, &w->ctx, c, t->times, t->vals[i], valid_or_null(t, i, 0, t->rows), 0,
                                            t->rows, j->g, err);
    }
    fold_ctx_mem(w);
    return s;
}

/* ---- write path --------------------------------------------------------------------------- */

tsf_status tsf_w_seal_device(tsf_writer *w, wdevice *d, tsf_error *err)
{
    tsf_status s;
    if (!d->aligned) {
        if (w->pool && w->pool->nth && d->ncols > 1) { /* pending pages at a flush: in parallel */
            wjobs j = {.w = w, .d = d, .seal = 1, .n = d->ncols};
            return jobs_run(w, &j, err);
        }
        for (size_t i = 0; i < d->ncols; i++)
            if ((s = tsf_wcol_seal(w, &d->cols[i], 0, err))) return s;
        return TSF_OK;
    }
    if (!d->rows) return TSF_OK;
    if ((s = tsf_wauto_seal_device(w, d, err))) return s; /* AUTO pages first: they may end the chunks */
    if (w->pool && d->ncols) {
        wjobs j = {.w = w, .d = d, .seal = 1, .n = 1 + d->ncols};
        if ((s = jobs_run(w, &j, err))) return s;
    } else {
        if ((s = tsf_wcol_seal(w, &d->tcol, d->rows, err))) return s;
        for (size_t i = 0; i < d->ncols; i++)
            if ((s = tsf_wcol_seal(w, &d->cols[i], d->rows, err))) return s;
    }
    d->rows = 0;
    return TSF_OK;
}

static int cmp_dev(const void *a, const void *b)
{
    const wdevice *x = *(wdevice *const *)a, *y = *(wdevice *const *)b;
    return tsf_mi_device_cmp(x->segs, x->nsegs, y->segs, y->nsegs);
}

/*
 * Flush with an output thread: seals every dirty device's pending pages (while the previous output
 * may still run: the seals fill `ck`), waits for the previous output, swaps each column's chunk set
 * into wcol.out and lets a worker write the chunk groups (devices ascending) while the next tablets
 * are encoded into the other set. The buffered-bytes count drops at once; at most two sets of
 * chunk buffers exist.
 */
static tsf_status flush_async(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    tsf_status s = TSF_OK;
    PROBE(uint64_t t0 = probe_ns(); p->pr.flushes++);
    /* the seals fill `ck` only: they run while the last output may still write `out` (the output
       thread, on the workers' side, is served before a batch, so the caller seals alone meanwhile) */
    size_t n = 0;
    for (size_t i = 0; i < w->ndevs && !s; i++)
        if (w->devs[i]->dirty) {
            n++;
            s = tsf_w_seal_device(w, w->devs[i], err);
        }
    PROBE(uint64_t t1 = probe_ns(); p->pr.t_seal += t1 - t0);
    if (s) return s;
    if (atomic_load(&p->outing)) { /* the last output is not done: leave the workers more time for it */
        for (int k = 0; k < 2; k++) p->share[k] = p->share[k] > 2 ? p->share[k] - 2 : 1;
        PROBE(p->pr.starved++);
    }
    s = tsf_w_out_wait(w, err);
    PROBE(p->pr.t_outwait += probe_ns() - t1);
    if (s) return s;
    if (!n) return TSF_OK;
    if (n > p->ocap) {
        wdevice **nl = tsf_realloc(w->alloc, p->olist, p->ocap * sizeof *nl, n * sizeof *nl);
        if (!nl) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (flush)");
        p->olist = nl;
        p->ocap = n;
    }
    n = 0;
    for (size_t i = 0; i < w->ndevs; i++)
        if (w->devs[i]->dirty) p->olist[n++] = w->devs[i];
    qsort(p->olist, n, sizeof *p->olist, cmp_dev);
    size_t freed = 0;
    for (size_t i = 0; i < n; i++) {
        wdevice *d = p->olist[i];
        for (size_t j = 0; j < d->ncols + (size_t)d->aligned; j++) {
            wcol *c = j < d->ncols ? &d->cols[j] : &d->tcol;
            wchunk k = c->out; /* emptied by the last output, capacity kept */
            c->out = c->ck;
            c->ck = k;
            freed += c->out.blen + c->out.pstats.len;
        }
        d->dirty = 0;
    }
    PROBE(p->pr.t_flush += probe_ns() - t0);
    w->mem -= freed < w->mem ? freed : w->mem;
    pthread_mutex_lock(&p->mu);
    p->on = n;
    p->oi = p->oj = 0;
    p->opending = 1;
    atomic_store(&p->outing, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    return TSF_OK;
}

/* Writes one chunk group per device with data, devices ascending (as Java's TreeMap). */
tsf_status tsf_w_flush_all(tsf_writer *w, tsf_error *err)
{
    tsf_status s = tsf_w_out_wait(w, err); /* the output thread's groups come first */
    if (s) return s;
    size_t n = 0;
    for (size_t i = 0; i < w->ndevs; i++) n += w->devs[i]->dirty;
    if (!n) return TSF_OK;
    wdevice **list = tsf_alloc(w->alloc, n * sizeof *list);
    if (!list) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (flush)");
    n = 0;
    for (size_t i = 0; i < w->ndevs; i++)
        if (w->devs[i]->dirty) list[n++] = w->devs[i];
    qsort(list, n, sizeof *list, cmp_dev);
    tsf_wbuf hb;
    tsf_wbuf_init(&hb, w->alloc);
    for (size_t i = 0; i < n && !s; i++) {
        wdevice *d = list[i];
        if ((s = tsf_w_seal_device(w, d, err))) break;
        hb.len = 0;
        tsf_wbuf_u8(&hb, 0x00);
        tsf_mi_put_device(&hb, d->segs, d->nsegs);
        if (hb.oom) {
            s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
            break;
        }
        if ((s = tsf_w_out(w, hb.p, hb.len, err))) break;
        if (d->aligned) {
            if ((s = tsf_wcol_flush_chunk(w, &d->tcol, 0, err))) break;
            for (size_t j = 0; j < d->ncols && !s; j++) s = tsf_wcol_flush_chunk(w, &d->cols[j], 1, err);
        } else {
            for (size_t j = 0; j < d->ncols && !s; j++) s = tsf_wcol_flush_chunk(w, &d->cols[j], 0, err);
        }
        d->dirty = 0;
    }
    tsf_wbuf_free(&hb);
    tsf_free(w->alloc, list, n * sizeof *list);
    return s;
}

/*
 * The chunk groups are written once the buffered bytes reach the memory budget, or flush_interval_ms
 * after the last such flush; either way they reach the OS now (the output thread does that after its
 * last piece), so a crash loses only what came after.
 */
static tsf_status budget_flush(tsf_writer *w, tsf_error *err)
{
    uint64_t now = 0;
    if (w->mem < w->opt.memory_budget) {
        if (!w->opt.flush_interval_ms) return TSF_OK;
        now = tsf_w_now_ms();
        if (now - w->last_flush_ms < w->opt.flush_interval_ms) return TSF_OK;
    }
    if (w->opt.flush_interval_ms) w->last_flush_ms = now ? now : tsf_w_now_ms();
    /* AUTO chunk cuts write output from the calling thread: no output thread then */
    int async = w->pool && w->pool->nth && !w->any_auto;
    if (async) return flush_async(w, err);
    tsf_status s = tsf_w_flush_all(w, err);
    return s ? s : tsf_w_out_flush(w, err);
}

tsf_status tsf_w_settle(tsf_writer *w, tsf_error *err)
{
    struct wpool *p = w->pool;
    if (!p) return TSF_OK;
    tsf_status s = pipe_join(w, err);
    if (p->budget_due) {
        p->budget_due = 0;
        if (!s) s = budget_flush(w, err);
    }
    return s;
}

tsf_status tsf_writer_flush(tsf_writer *w, tsf_error *err)
{
    if (!w) return tsf_err(err, TSF_EINVAL, "tsf_writer_flush: writer is NULL");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_flush: writer is closed");
    if (w->failed) return tsf_err(err, TSF_EIO, "tsf_writer_flush: an earlier output error stopped this writer");
    tsf_status s = tsf_w_settle(w, err);
    if (!s) s = tsf_w_flush_all(w, err);
    if (!s) s = tsf_w_out_flush(w, err); /* hand the completed chunk groups to the OS */
    return s ? s : tsf_w_refusal(w, err);
}

static tsf_status check_increasing(const tsf_tablet *t, size_t a, size_t b, const char *dev, tsf_error *err)
{
    for (size_t r = a + 1; r < b; r++)
        if (t->times[r] <= t->times[r - 1])
            return tsf_err(err, TSF_EINVAL,
                           "writer: device %s: row %zu time %lld is not after row %zu time %lld (timestamps must "
                           "strictly increase; see sort_tablets)",
                           dev, r, (long long)t->times[r], r - 1, (long long)t->times[r - 1]);
    return TSF_OK;
}

/*
 * Appends tablet rows [r, r + k) to device columns [lo, hi) of an aligned device (feed: the tablet
 * column of each, SIZE_MAX = absent: null rows); runs of columns without nulls share statistics
 * passes (tsf_wcol_append_group). Columns touch only their own state: jobs of the pool.
 */
static tsf_status aligned_cols(tsf_writer *w, wctx *x, tsf_tablet *t, wdevice *d, const size_t *feed, size_t lo,
                               size_t hi, size_t r, size_t k, tsf_error *err)
{
    wcol *cs[64]; /* a run of columns without nulls: statistics four at a time */
    const void *vs[64];
    size_t m = 0;
    tsf_status s = TSF_OK;
    for (size_t j = lo; j < hi && !s; j++) {
        size_t tc = feed[j];
        wcol *c = &d->cols[j];
        const uint8_t *v = tc == SIZE_MAX ? NULL : valid_or_null(t, tc, r, r + k);
        if (tc != SIZE_MAX && !v) {
            cs[m] = c;
            vs[m++] = t->vals[tc] + r * c->width;
            if (m < 64 && j + 1 < hi) continue;
        }
        s = tsf_wcol_append_group(w, x, cs, vs, m, t->times + r, k, UINT64_MAX, err);
        m = 0;
        if (!s && tc == SIZE_MAX) s = tsf_wcol_append_x(w, x, c, t->times + r, NULL, NULL, 0, k, UINT64_MAX, err);
        else if (!s && v)
            s = tsf_wcol_append_x(w, x, c, t->times + r, t->vals[tc] + r * c->width, v, r, k, UINT64_MAX, err);
    }
    return s;
}

/* Appends rows [a, b) of the tablet to an aligned device in page-sized row batches. */
static tsf_status write_aligned(tsf_writer *w, tsf_tablet *t, wdevice *d, size_t a, size_t b, tsf_error *err)
{
    tsf_status s = TSF_OK;
    size_t maxp = w->opt.page_max_points;
    size_t r = a;
    /* tablet column feeding each device column (SIZE_MAX: absent from the tablet) */
    size_t feed_small[256];
    size_t *feed = d->ncols <= 256 ? feed_small : tsf_alloc(w->alloc, d->ncols * sizeof *feed);
    if (!feed) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    for (size_t j = 0; j < d->ncols; j++) feed[j] = SIZE_MAX;
    for (size_t i = t->ncols; i-- > 0;) /* the first tablet column of a field wins, as before */
        if (t->cols[i].category == TSF_COLUMN_FIELD && t->cols[i].field < d->ncols) feed[t->cols[i].field] = i;
    while (r < b) {
        if ((s = pipe_join(w, err))) goto done; /* the seal of this device's last page may still run */
        size_t k = maxp - d->rows;
        if (k > b - r) k = b - r;
        if ((s = tsf_wcol_append(w, &d->tcol, t->times + r, t->times + r, NULL, 0, k, err))) goto done;
        int full = 0;
        if (w->pool && w->pool->nth && d->ncols > JOB_COLS && (uint64_t)k * d->ncols >= PAR_MIN_CELLS) {
            wjobs j = {.w = w, .t = t, .d = d, .seal = 2, .n = (d->ncols + JOB_COLS - 1) / JOB_COLS, .r = r, .k = k,
                       .feed = feed};
            s = jobs_run(w, &j, err);
        } else {
            s = aligned_cols(w, &w->ctx, t, d, feed, 0, d->ncols, r, k, err);
            int64_t mm = (int64_t)w->mem + w->ctx.mem;
            w->mem = mm > 0 ? (size_t)mm : 0;
            w->ctx.mem = 0;
        }
        if (s) goto done;
        for (size_t j = 0; j < d->ncols; j++) full |= tsf_wcol_full(w, &d->cols[j]);
        d->rows += k;
        r += k;
        if (d->rows >= maxp || full) {
            /* the seals read only the pending pages: they may run on after the call */
            s = pipe_ok(w, d->ncols >= 2 * JOB_COLS && d->rows * (d->ncols + 1) >= PAR_MIN_CELLS) ? pipe_seal(w, d, err)
                                                                                                  : tsf_w_seal_device(w, d, err);
            if (s) goto done;
        }
    }
    d->last_time = t->times[b - 1];
    d->has_time = 1;
    d->dirty = 1;
done:
    if (feed != feed_small) tsf_free(w->alloc, feed, d->ncols * sizeof *feed);
    return s;
}

typedef struct run {
    size_t a, b;
    wdevice *d;
} run;

static tsf_status write_table(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    const wtable *tb = &w->tables[t->table];
    tsf_mi_seg segs[1 + 256];
    tsf_mi_seg *sp = tb->ntags <= 256 ? segs : tsf_alloc(w->alloc, (1 + tb->ntags) * sizeof *sp);
    if (!sp) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    size_t nruns = 0;
    for (size_t r = 0; r < t->rows; r++)
        if (r == 0 || !same_tags(t, r - 1, r)) nruns++;
    run *runs = tsf_alloc(w->alloc, nruns * sizeof *runs);
    tsf_status s = TSF_OK;
    if (!runs) {
        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
        goto done;
    }
    /* pass 1: devices and validation (nothing is buffered yet) */
    uint64_t epoch = ++w->epoch;
    size_t ri = 0;
    for (size_t r = 0; r < t->rows && !s; ri++) {
        size_t e = r + 1;
        while (e < t->rows && same_tags(t, e - 1, e)) e++;
        size_t ns = row_segs(t, tb, r, sp);
        wdevice *d = tsf_w_find_device(w, sp, ns, NULL);
        if (!d) {
            if ((s = tsf_w_add_device(w, sp, ns, 1, t->table, &d, err))) break;
            for (size_t f = 0; f < tb->nfields && !s; f++) {
                const tsf_mi_column *col = &tb->cols[tb->field_idx[f]];
                if (d->ncols == d->ccap) {
                    size_t nc = d->ccap ? d->ccap * 2 : 4;
                    wcol *ncols = tsf_realloc(w->alloc, d->cols, d->ccap * sizeof *ncols, nc * sizeof *ncols);
                    if (!ncols) {
                        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory");
                        break;
                    }
                    d->cols = ncols;
                    d->ccap = nc;
                }
                s = tsf_wcol_init(w, &d->cols[d->ncols], col->name, strlen(col->name), (tsf_type)col->data_type,
                                  (tsf_encoding)col->encoding, (tsf_compression)col->compression, 0x40, err);
                if (!s) d->cols[d->ncols++].dev = d;
            }
            if (s) break;
        }
        if (d->check_epoch != epoch) {
            d->check_epoch = epoch;
            d->check_has = d->has_time;
            d->check_time = d->last_time;
        }
        if ((s = check_increasing(t, r, e, d->path, err))) break;
        if (d->check_has && t->times[r] <= d->check_time) {
            s = tsf_err(err, TSF_EINVAL, "writer: device %s: row %zu time %lld is not after the last written time %lld",
                        d->path, r, (long long)t->times[r], (long long)d->check_time);
            break;
        }
        d->check_has = 1;
        d->check_time = t->times[e - 1];
        runs[ri].a = r;
        runs[ri].b = e;
        runs[ri].d = d;
        r = e;
    }
    /* pass 2: append */
    for (size_t i = 0; i < nruns && !s; i++) s = write_aligned(w, t, runs[i].d, runs[i].a, runs[i].b, err);
done:
    if (runs) tsf_free(w->alloc, runs, nruns * sizeof *runs);
    if (sp != segs) tsf_free(w->alloc, sp, (1 + tb->ntags) * sizeof *sp);
    return s;
}

/*
 * Appends a tablet's times to a non-aligned device's shared rows (dev->dt) and sets *g to the
 * device row of its first row. Rows before the oldest pending dense page are dropped; a dense page
 * that would pin more than 4 pages of rows gets its own copy of its times first.
 */
static tsf_status shared_times(tsf_writer *w, wdevice *d, const int64_t *times, size_t n, uint64_t *g,
                               tsf_error *err)
{
    tsf_status s;
    uint64_t end = d->dt_base + d->dt_len, lo = end;
    uint64_t keep = 4 * (uint64_t)w->opt.page_max_points;
    for (size_t i = 0; i < d->ncols; i++) {
        wcol *c = &d->cols[i];
        if (!c->dense || !c->nvals) continue;
        if (end - c->g0 > keep) {
            if ((s = tsf_wcol_own_times(w, &w->ctx, c, err))) return s;
        } else if (c->g0 < lo) {
            lo = c->g0;
        }
    }
    size_t drop = (size_t)(lo - d->dt_base);
    if (drop) {
        memmove(d->dt, d->dt + drop, (d->dt_len - drop) * sizeof *d->dt);
        d->dt_len -= drop;
        d->dt_base = lo;
    }
    if (d->dt_len + n > d->dt_cap) {
        size_t nc = d->dt_cap ? d->dt_cap : 1024;
        while (nc < d->dt_len + n) nc *= 2;
        int64_t *nd = tsf_realloc(w->alloc, d->dt, d->dt_cap * sizeof *nd, nc * sizeof *nd);
        if (!nd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (times of %s)", d->path);
        d->dt = nd;
        d->dt_cap = nc;
    }
    memcpy(d->dt + d->dt_len, times, n * sizeof *times);
    *g = d->dt_base + d->dt_len;
    d->dt_len += n;
    return TSF_OK;
}

static tsf_status write_tree(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    wdevice *d = t->dev;
    size_t n = t->rows;
    tsf_status s = check_increasing(t, 0, n, d->path, err);
    if (s) return s;
    if (d->aligned) {
        if (d->has_time && t->times[0] <= d->last_time)
            return tsf_err(err, TSF_EINVAL, "writer: device %s: row 0 time %lld is not after the last written time %lld",
                           d->path, (long long)t->times[0], (long long)d->last_time);
        return write_aligned(w, t, d, 0, n, err);
    }
    /* non-aligned: each series checks its own first present row */
    for (size_t i = 0; i < t->ncols; i++) {
        wcol *c = &d->cols[t->cols[i].idx];
        if (!c->has_time) continue;
        size_t r = 0;
        while (r < n && !vbit(t->valid[i], r)) r++;
        if (r < n && t->times[r] <= c->last_time)
            return tsf_err(err, TSF_EINVAL,
                           "writer: device %s: row %zu time %lld is not after the last written time %lld of series %s",
                           d->path, r, (long long)t->times[r], (long long)c->last_time, c->name);
    }
    uint64_t g = 0;
    if ((s = shared_times(w, d, t->times, n, &g, err))) return s;
    if (pipe_ok(w, t->ncols > JOB_COLS && (uint64_t)n * t->ncols >= PAR_MIN_CELLS) && fixed_width(t)) {
        if ((s = pipe_append(w, t, d, g, err))) return s;
    } else if (w->pool && w->pool->nth && t->ncols > 1 && (uint64_t)n * t->ncols >= PAR_MIN_CELLS) {
        wjobs j = {.w = w, .t = t, .d = d, .g = g, .n = (t->ncols + JOB_COLS - 1) / JOB_COLS};
        if ((s = jobs_run(w, &j, err))) return s;
    } else {
        for (size_t i = 0; i < t->ncols && !s; i += 64)
            s = append_cols(w, &w->ctx, t, d, i, i + 64 < t->ncols ? i + 64 : t->ncols, g, 0, err);
        int64_t m = (int64_t)w->mem + w->ctx.mem;
        w->mem = m > 0 ? (size_t)m : 0;
        w->ctx.mem = 0;
        if (s) return s;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        wcol *c = &d->cols[t->cols[i].idx];
        const uint8_t *v = valid_or_null(t, i, 0, n);
        size_t r = n;
        while (r > 0 && v && !vbit(v, r - 1)) r--;
        if (r > 0) {
            c->last_time = t->times[r - 1];
            c->has_time = 1;
            d->dirty = 1;
        }
    }
    return TSF_OK;
}

tsf_status tsf_writer_write_tablet(tsf_writer *w, tsf_tablet *t, tsf_error *err)
{
    if (!w || !t) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_tablet: NULL argument");
    if (t->w != w) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_tablet: tablet belongs to another writer");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_write_tablet: writer is closed");
    if (w->failed) return tsf_err(err, TSF_EIO, "tsf_writer_write_tablet: an earlier output error stopped this writer");
    PROBE(uint64_t tc0 = probe_ns(); if (w->pool) atomic_store(&w->pool->pr.incall, 1));
    tsf_status s = tsf_w_settle(w, err);
    if (s) return s;
    PROBE(struct wpool *pp = w->pool);
    if (t->rows) {
        if (w->opt.sort_tablets && (s = sort_tablet(t, err))) return s;
        s = t->table >= 0 ? write_table(w, t, err) : write_tree(w, t, err);
        if (s) return s;
        if (w->pool && w->pool->pipe_on) w->pool->budget_due = 1; /* checked when the tail has run */
        else if ((s = budget_flush(w, err))) return s;
    }
    PROBE(if (pp) {
        pp->pr.t_call += probe_ns() - tc0;
        atomic_store(&pp->pr.incall, 0);
    })
    tsf_tablet_reset(t);
    /* a refused page (exact.c): reported now, or with a tablet tail still running, by the next call */
    return w->pool && w->pool->pipe_on ? TSF_OK : tsf_w_refusal(w, err);
}

/* ---- row API ------------------------------------------------------------------------------ */

tsf_status tsf_writer_write_row(tsf_writer *w, const char *target, int64_t time, const char *const *columns,
                                const tsf_value *values, size_t n, tsf_error *err)
{
    if (!w || !target || (!values && n)) return tsf_err(err, TSF_EINVAL, "tsf_writer_write_row: NULL argument");
    if (w->closed) return tsf_err(err, TSF_ESTATE, "tsf_writer_write_row: writer is closed");
    tsf_status s;
    tsf_tablet *t = w->row_tablet;
    int reuse = t && w->row_target && strcmp(w->row_target, target) == 0 && t->ncols == n;
    if (reuse && columns) { /* same column list? */
        const wtable *tb = t->table >= 0 ? &w->tables[t->table] : NULL;
        for (size_t i = 0; i < n && reuse; i++) {
            const char *nm = tb ? tb->cols[t->cols[i].idx].name : t->dev->cols[t->cols[i].idx].name;
            reuse = columns[i] && strcasecmp(nm, columns[i]) == 0;
        }
    }
    if (!reuse) {
        if (t) tsf_tablet_free(t);
        w->row_tablet = NULL;
        if (w->row_target) tsf_free(w->alloc, w->row_target, strlen(w->row_target) + 1);
        w->row_target = NULL;
        if ((s = tsf_tablet_new(w, target, columns, n, 1, &t, err))) return s;
        if (t->ncols != n) {
            tsf_tablet_free(t);
            return tsf_err(err, TSF_EINVAL, "tsf_writer_write_row: %zu values for %zu columns", n, t->ncols);
        }
        size_t len = strlen(target);
        w->row_target = tsf_alloc(w->alloc, len + 1);
        if (!w->row_target) {
            tsf_tablet_free(t);
            return tsf_err(err, TSF_ENOMEM, "tsf_writer_write_row: out of memory");
        }
        memcpy(w->row_target, target, len + 1);
        w->row_tablet = t;
    }
    tsf_tablet_reset(t);
    if ((s = tsf_tablet_set_time(t, 0, time, err))) return s;
    for (size_t i = 0; i < n; i++) {
        const tsf_value *v = &values[i];
        if (v->is_null) continue;
        switch (t->cols[i].type) {
        case TSF_BOOLEAN: s = tsf_tablet_set_bool(t, 0, i, v->v.b, err); break;
        case TSF_INT32:
        case TSF_DATE: s = tsf_tablet_set_int32(t, 0, i, v->v.i32, err); break;
        case TSF_INT64:
        case TSF_TIMESTAMP: s = tsf_tablet_set_int64(t, 0, i, v->v.i64, err); break;
        case TSF_FLOAT: s = tsf_tablet_set_float(t, 0, i, v->v.f, err); break;
        case TSF_DOUBLE: s = tsf_tablet_set_double(t, 0, i, v->v.d, err); break;
        default: s = tsf_tablet_set_bytes(t, 0, i, v->v.bytes.data, v->v.bytes.len, err); break;
        }
        if (s) return s;
    }
    return tsf_writer_write_tablet(w, t, err);
}
