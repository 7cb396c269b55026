/*
 * tablet.c - tablets (column batches) of the writer (spec tsfile-container-format.md §4.1a, §20): creation for a
 * tree device or a table, the column and cell setters (borrowed or copied columns, binary values in an arena),
 * and the stable sort of sort_tablets (last duplicate wins). Writing them is tablet_write.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tablet.h"

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


/* NULL when rows [a, b) are all present (the fast path), else the bitmap. */
const uint8_t *tsf_wt_valid_or_null(const tsf_tablet *t, size_t col, size_t a, size_t b)
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
size_t tsf_wt_row_segs(const tsf_tablet *t, const wtable *tb, size_t r, tsf_mi_seg *segs)
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

int tsf_wt_same_tags(const tsf_tablet *t, size_t a, size_t b)
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
tsf_status tsf_wt_sort(tsf_tablet *t, tsf_error *err)
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


/* Every column fixed-width (binary values point into the tablet's arena: not staged). */
int tsf_wt_fixed_width(const tsf_tablet *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (is_bin(t->cols[i].type)) return 0;
    return 1;
}

