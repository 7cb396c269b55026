/*
 * filter.c - value filters of queries (tsf.h "value filters").
 *
 * A filter is an immutable tree of comparisons `column op literal` joined by AND / OR / NOT, built by the
 * tsf_filter_* constructors or parsed from text, and written back with only the parentheses it needs.
 * Semantics are SQL's three-valued logic: a comparison with a null cell is UNKNOWN, and a query keeps a
 * row only where the whole filter is TRUE.
 *
 * This file is the query side (filter_parse.c builds, parses and formats the tree). Queries use it
 * through filter.h: literals are converted to each device's column type once (integer
 * and floating values compare exactly), tag comparisons of table devices (§4.1: segment 1 + k is the
 * k-th TAG column) are decided once per device, batches are evaluated column by column into TRUE/FALSE
 * bitmaps (64 rows per word) and the kept rows compacted, and chunk/page statistics prune with an
 * abstract evaluation over {TRUE, FALSE, UNKNOWN}: a unit is skipped only when TRUE is impossible.
 * A leaf's set may be widened freely. Pruning one column's page of a non-aligned merge turns that
 * column's cells at those times into nulls, so the set of each leaf on that column covers a null cell
 * too: comparisons always include UNKNOWN, and IS [NOT] NULL tests are {TRUE, FALSE} unless the unit is
 * known to be all null. `time` terms are TRUE or FALSE per row; their top-level AND chain also narrows
 * the query's time range (tsf_rd_filter_time_bounds), which prunes by the chunks' and pages' times.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "reader_internal.h"

/* ---- query side: binding ---------------------------------------------------------------------- */

enum { LM_COL = 0, LM_CONST = 1, LM_TIME = 2 };                /* leaf binding for the current device */
enum { CK_I64, CK_F64, CK_F64I, CK_BYTES, CK_ALWAYS, CK_NULL }; /* comparison kind after conversion */
enum { TV_T = 1, TV_F = 2, TV_U = 4, TV_ALL = 7 };     /* sets of truth values (pruning) */

typedef struct fnode {
    int kind;            /* FN_* */
    size_t a, b;         /* children (nodes are in post-order: children first) */
    const tsf_filter *f; /* FN_CMP */
    /* per-device binding of a leaf */
    int mode;
    int konst; /* LM_CONST: TV_T, TV_F or TV_U for every row */
    size_t bcol;
    tsf_type ctype;
    int ck;
    tsf_cmp op;
    int64_t k;
    double kd;
    int always; /* CK_ALWAYS: result for a non-null cell */
    const uint8_t *s;
    size_t slen;
} fnode;

struct tsf_rd_fstate {
    tsf_reader *r;
    const tsf_allocator *a;
    fnode *nodes;
    size_t nnodes;
    const char **names; /* distinct leaf columns (borrowed from the filter) */
    size_t nnames;
    int prune;
    int root_true;  /* current device: every row passes (tags decided it) */
    size_t words;   /* 64-row words of one batch */
    uint64_t *bits; /* per node: TRUE words then FALSE words */
    tsf_rd_buf times;
    tsf_rd_buf *vals, *valid; /* compacted visible columns */
    size_t nout;
    tsf_rd_unit_col *units; /* tsf_rd_filter_units */
    size_t nunits;
};

static size_t count_nodes(const tsf_filter *f)
{
    return f ? 1 + count_nodes(f->l) + count_nodes(f->r) : 0;
}

static size_t flatten(tsf_rd_fstate *fs, const tsf_filter *f)
{
    size_t a = 0, b = 0;
    if (f->l) a = flatten(fs, f->l);
    if (f->r) b = flatten(fs, f->r);
    fnode *n = &fs->nodes[fs->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = f->kind;
    n->a = a;
    n->b = b;
    n->f = f;
    if (f->kind == FN_CMP && f->test != FT_TIME) {
        size_t i = 0;
        while (i < fs->nnames && strcmp(fs->names[i], f->column)) i++;
        if (i == fs->nnames) fs->names[fs->nnames++] = f->column;
    }
    return fs->nnodes++;
}

static int is_int_type(tsf_type t)
{
    return t == TSF_INT32 || t == TSF_INT64 || t == TSF_DATE || t == TSF_TIMESTAMP;
}

/* 'yyyy-mm-dd' -> yyyymmdd; -1 if malformed. */
static int64_t parse_date(const uint8_t *s, size_t n)
{
    if (n != 10 || s[4] != '-' || s[7] != '-') return -1;
    int64_t v = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i == 4 || i == 7) continue;
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    int mo = (int)(v / 100 % 100), d = (int)(v % 100);
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 ? v : -1;
}

static const char *lit_name(tsf_type lt)
{
    return lt == TSF_INT64     ? "an integer"
           : lt == TSF_DOUBLE  ? "a number"
           : lt == TSF_BOOLEAN ? "a boolean"
                               : "a string";
}

/* Converts leaf n's literal for a column of type t (exact int/double comparison). */
static tsf_status bind_cmp(fnode *n, tsf_type t, const char *where, tsf_error *err)
{
    const tsf_filter *f = n->f;
    n->ctype = t;
    n->op = f->op;
    n->mode = LM_COL;
    if (is_int_type(t) && t == TSF_DATE && f->lit == TSF_STRING) {
        int64_t v = parse_date(f->s, f->slen);
        if (v < 0)
            return tsf_err(err, TSF_EINVAL, "filter: column '%s'%s is DATE; '%s' is not yyyy-mm-dd",
                           f->column, where, (const char *)f->s);
        n->ck = CK_I64;
        n->k = v;
        return TSF_OK;
    }
    if (is_int_type(t) && f->lit == TSF_INT64) {
        n->ck = CK_I64;
        n->k = f->i;
        return TSF_OK;
    }
    if (is_int_type(t) && f->lit == TSF_DOUBLE) {
        double d = f->d;
        int gt_all = d >= 9223372036854775808.0, lt_all = d < -9223372036854775808.0;
        n->ck = CK_ALWAYS;
        if (isnan(d)) {
            n->always = n->op == TSF_CMP_NE;
        } else if (gt_all || lt_all) { /* literal beyond every int64: x < d for all x, or x > d for all x */
            int xlt = gt_all;
            switch (n->op) {
            case TSF_CMP_EQ:
                n->always = 0;
                break;
            case TSF_CMP_NE:
                n->always = 1;
                break;
            case TSF_CMP_LT:
            case TSF_CMP_LE:
                n->always = xlt;
                break;
            default:
                n->always = !xlt;
                break;
            }
        } else {
            double fl = floor(d), ce = ceil(d);
            int integral = fl == d;
            n->ck = CK_I64;
            switch (n->op) {
            case TSF_CMP_GT:
                n->k = (int64_t)fl;
                break; /* x > d  <=> x > floor(d) */
            case TSF_CMP_LE:
                n->k = (int64_t)fl;
                break; /* x <= d <=> x <= floor(d) */
            case TSF_CMP_GE:
                n->k = (int64_t)ce;
                break; /* x >= d <=> x >= ceil(d) */
            case TSF_CMP_LT:
                n->k = (int64_t)ce;
                break; /* x < d  <=> x < ceil(d) */
            default:
                if (integral) {
                    n->k = (int64_t)fl;
                } else {
                    n->ck = CK_ALWAYS;
                    n->always = n->op == TSF_CMP_NE;
                }
            }
        }
        return TSF_OK;
    }
    if ((t == TSF_FLOAT || t == TSF_DOUBLE) && (f->lit == TSF_DOUBLE || f->lit == TSF_INT64)) {
        if (f->lit == TSF_DOUBLE) {
            n->ck = CK_F64;
            n->kd = f->d;
        } else if (f->i >= -(INT64_C(1) << 53) && f->i <= (INT64_C(1) << 53)) {
            n->ck = CK_F64;
            n->kd = (double)f->i; /* exact */
        } else {
            n->ck = CK_F64I;
            n->k = f->i;
        }
        return TSF_OK;
    }
    if (t == TSF_BOOLEAN && f->lit == TSF_BOOLEAN) {
        n->ck = CK_I64;
        n->k = f->b;
        return TSF_OK;
    }
    if ((t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB) && f->lit == TSF_STRING) {
        n->ck = CK_BYTES;
        n->s = f->s;
        n->slen = f->slen;
        return TSF_OK;
    }
    return tsf_err(err, TSF_EINVAL, "filter: column '%s'%s is %s and cannot be compared with %s", f->column,
                   where, tsf_type_name(t) ? tsf_type_name(t) : "?", lit_name(f->lit));
}

static int bytes_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    int c = m ? memcmp(a, b, m) : 0;
    return c ? c : (na > nb) - (na < nb);
}

static int op_holds(tsf_cmp op, int c) /* c: sign of (x - k) */
{
    switch (op) {
    case TSF_CMP_EQ:
        return c == 0;
    case TSF_CMP_NE:
        return c != 0;
    case TSF_CMP_LT:
        return c < 0;
    case TSF_CMP_LE:
        return c <= 0;
    case TSF_CMP_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}

static const tsf_rd_series *dev_series(const tsf_reader *r, const tsf_rd_device *d, const char *name)
{
    for (size_t k = 0; k < d->nseries; k++)
        if (!strcmp(r->series[d->series0 + k].name, name)) return &r->series[d->series0 + k];
    return NULL;
}

/* Binds leaf n for device d. Table devices: TAG -> constant from the id segment, FIELD -> series (absent:
 * null), ATTRIBUTE -> null, unknown -> TSF_EINVAL. Tree devices: the series (absent: null). A null cell
 * binds as the constant UNKNOWN (bind_leaf turns it into IS [NOT] NULL's answer). */
static tsf_status bind_source(tsf_rd_fstate *fs, fnode *n, size_t di, const char *(*name)(const void *, size_t),
                            const void *cols, size_t ncols, tsf_error *err)
{
    tsf_reader *r = fs->r;
    const tsf_rd_device *d = &r->devices[di];
    const tsf_rd_table *tb = &r->tables[d->table];
    const tsf_filter *f = n->f;
    char where[160];
    snprintf(where, sizeof where, " (device %s)", d->name);
    n->mode = LM_CONST;
    n->konst = TV_U;
    if (f->test == FT_TIME) {
        n->mode = LM_TIME;
        n->op = f->op;
        n->k = f->i;
        return TSF_OK;
    }
    if (tb->ncolumns) {
        size_t tag = 0, i = 0;
        for (; i < tb->ncolumns; i++) {
            if (!strcmp(tb->columns[i].name, f->column)) break;
            tag += tb->columns[i].category == TSF_COLUMN_TAG;
        }
        if (i == tb->ncolumns)
            return tsf_err(err, TSF_EINVAL, "filter: column '%s' is not a column of table %s", f->column,
                           tb->name);
        if (tb->columns[i].category == TSF_COLUMN_TAG) {
            if (f->test != FT_VALUE) {
                size_t seg = 1 + tag;
                int null = seg >= d->id.nseg || tsf_fmt_device_segment(&d->id, (uint32_t)seg).is_null;
                n->konst = null == (f->test == FT_NULL) ? TV_T : TV_F;
                return TSF_OK;
            }
            if (f->lit != TSF_STRING)
                return tsf_err(err, TSF_EINVAL,
                               "filter: column '%s' is a TAG (STRING) and cannot be compared with %s",
                               f->column, lit_name(f->lit));
            size_t seg = 1 + tag;
            if (seg >= d->id.nseg) return TSF_OK; /* trailing null tag: UNKNOWN */
            tsf_fmt_str sg = tsf_fmt_device_segment(&d->id, (uint32_t)seg);
            if (sg.is_null) return TSF_OK;
            n->konst = op_holds(f->op, bytes_cmp(sg.data, sg.len, f->s, f->slen)) ? TV_T : TV_F;
            return TSF_OK;
        }
        if (tb->columns[i].category != TSF_COLUMN_FIELD) return TSF_OK;
    }
    const tsf_rd_series *s = dev_series(r, d, f->column);
    if (!s) return TSF_OK;
    if (f->test != FT_VALUE) {
        n->mode = LM_COL;
        n->ck = CK_NULL;
        n->ctype = s->tsm.data_type;
    } else {
        tsf_status st = bind_cmp(n, s->tsm.data_type, where, err);
        if (st) return st;
    }
    for (size_t c = 0; c < ncols; c++)
        if (!strcmp(name(cols, c), f->column)) {
            n->bcol = c;
            return TSF_OK;
        }
    n->mode = LM_CONST; /* not among the batch columns (only in the open-time check) */
    n->konst = TV_U;
    return TSF_OK;
}

static tsf_status bind_leaf(tsf_rd_fstate *fs, fnode *n, size_t di, const char *(*name)(const void *, size_t),
                            const void *cols, size_t ncols, tsf_error *err)
{
    tsf_status st = bind_source(fs, n, di, name, cols, ncols, err);
    int test = n->f->test;
    if (!st && (test == FT_NULL || test == FT_NOT_NULL) && n->mode == LM_CONST && n->konst == TV_U)
        n->konst = test == FT_NULL ? TV_T : TV_F;
    return st;
}

void tsf_rd_filter_close(tsf_rd_fstate *fs)
{
    if (!fs) return;
    const tsf_allocator *a = fs->a;
    for (size_t i = 0; i < fs->nout; i++) {
        tsf_rd_buf_free(a, &fs->vals[i]);
        tsf_rd_buf_free(a, &fs->valid[i]);
    }
    tsf_free(a, fs->vals, fs->nout * sizeof *fs->vals);
    tsf_free(a, fs->valid, fs->nout * sizeof *fs->valid);
    tsf_rd_buf_free(a, &fs->times);
    tsf_free(a, fs->units, fs->nunits * sizeof *fs->units);
    tsf_free(a, fs->bits, fs->nnodes * 2 * fs->words * sizeof(uint64_t));
    tsf_free(a, fs->names, fs->nnodes * sizeof *fs->names);
    tsf_free(a, fs->nodes, fs->nnodes * sizeof *fs->nodes);
    tsf_free(a, fs, sizeof *fs);
}

tsf_status tsf_rd_filter_open(tsf_reader *r, const tsf_filter *f, const size_t *devs, size_t ndevs,
                          size_t batch_size, int prune, tsf_rd_fstate **out, tsf_error *err)
{
    *out = NULL;
    tsf_rd_fstate *fs = tsf_calloc(r->a, 1, sizeof *fs);
    if (!fs) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->r = r;
    fs->a = r->a;
    size_t nn = count_nodes(f);
    fs->words = (batch_size + 63) / 64;
    fs->nodes = tsf_calloc(r->a, nn, sizeof *fs->nodes);
    fs->names = tsf_calloc(r->a, nn, sizeof *fs->names);
    fs->bits = tsf_calloc(r->a, nn * 2 * fs->words, sizeof(uint64_t));
    if (!fs->nodes || !fs->names || !fs->bits) {
        fs->nnodes = nn;
        tsf_rd_filter_close(fs);
        return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    }
    flatten(fs, f);
    fs->prune = prune;
    /* every device must accept the filter's literals */
    for (size_t i = 0; i < ndevs; i++)
        for (size_t k = 0; k < fs->nnodes; k++) {
            if (fs->nodes[k].kind != FN_CMP) continue;
            tsf_status st = bind_leaf(fs, &fs->nodes[k], devs[i], NULL, NULL, 0, err);
            if (st) {
                tsf_rd_filter_close(fs);
                return st;
            }
        }
    *out = fs;
    return TSF_OK;
}

size_t tsf_rd_filter_ncolumns(const tsf_rd_fstate *fs)
{
    return fs->nnames;
}

const char *tsf_rd_filter_column(const tsf_rd_fstate *fs, size_t i)
{
    return fs->names[i];
}

/* Possible truth values of node k given leaf sets in vals (abstract Kleene evaluation). */
static int tv_combine(int kind, int a, int b)
{
    static const int tv[3] = {TV_T, TV_F, TV_U};
    int out = 0;
    if (kind == FN_NOT) {
        for (int i = 0; i < 3; i++)
            if (a & tv[i]) out |= tv[i] == TV_T ? TV_F : tv[i] == TV_F ? TV_T : TV_U;
        return out;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (!(a & tv[i]) || !(b & tv[j])) continue;
            int x = tv[i], y = tv[j];
            if (kind == FN_AND)
                out |= (x == TV_F || y == TV_F) ? TV_F : (x == TV_T && y == TV_T) ? TV_T : TV_U;
            else
                out |= (x == TV_T || y == TV_T) ? TV_T : (x == TV_F && y == TV_F) ? TV_F : TV_U;
        }
    return out;
}

/* The truth values filter f may take for rows of a table device with columns cols and device-id segments
 * segs: TAG comparisons decided by the tag values (as bind_leaf decides them), the others any. */
static int tag_outcomes(const tsf_filter *f, const tsf_table_column *cols, size_t ncols,
                        const tsf_bytes *segs, size_t nsegs)
{
    if (f->kind != FN_CMP) {
        int a = tag_outcomes(f->l, cols, ncols, segs, nsegs);
        return tv_combine(f->kind, a, f->kind == FN_NOT ? 0 : tag_outcomes(f->r, cols, ncols, segs, nsegs));
    }
    if (f->test == FT_TIME) return TV_T | TV_F;
    size_t tag = 0, i = 0;
    for (; i < ncols && strcmp(cols[i].name, f->column); i++) tag += cols[i].category == TSF_COLUMN_TAG;
    if (i == ncols || cols[i].category != TSF_COLUMN_TAG || (f->test == FT_VALUE && f->lit != TSF_STRING))
        return TV_ALL;
    size_t seg = 1 + tag;
    int null = seg >= nsegs || !segs[seg].data;
    if (f->test != FT_VALUE) return null == (f->test == FT_NULL) ? TV_T : TV_F;
    if (null) return TV_U;
    return op_holds(f->op, bytes_cmp(segs[seg].data, segs[seg].len, f->s, f->slen)) ? TV_T : TV_F;
}

int tsf_rd_filter_tags_may_pass(const tsf_filter *f, const tsf_table_column *cols, size_t ncols,
                                const tsf_bytes *segs, size_t nsegs)
{
    return (tag_outcomes(f, cols, ncols, segs, nsegs) & TV_T) != 0;
}

tsf_status tsf_rd_filter_device(tsf_rd_fstate *fs, size_t d, const char *(*name)(const void *cols, size_t i),
                            const void *cols, size_t ncols, int *skip, tsf_error *err)
{
    int set[64], *sets = set;
    *skip = 0;
    if (fs->nnodes > 64) {
        sets = tsf_calloc(fs->a, fs->nnodes, sizeof *sets);
        if (!sets) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    }
    tsf_status st = TSF_OK;
    for (size_t k = 0; k < fs->nnodes && !st; k++) {
        fnode *n = &fs->nodes[k];
        if (n->kind == FN_CMP) {
            st = bind_leaf(fs, n, d, name, cols, ncols, err);
            sets[k] = n->mode == LM_CONST  ? n->konst
                      : n->ck == CK_ALWAYS ? (n->always ? TV_T : TV_F) | TV_U
                                           : TV_ALL;
        } else {
            sets[k] = tv_combine(n->kind, sets[n->a], n->kind == FN_NOT ? 0 : sets[n->b]);
        }
    }
    if (!st) {
        int root = sets[fs->nnodes - 1];
        /* tags (and absent columns) can decide a device outright; with pruning off its rows are read and
         * evaluated instead (same result: the comparison the tests make) */
        *skip = fs->prune && !(root & TV_T);
        fs->root_true = root == TV_T;
    }
    if (sets != set) tsf_free(fs->a, sets, fs->nnodes * sizeof *sets);
    return st;
}

int tsf_rd_filter_uses(const tsf_rd_fstate *fs, size_t col)
{
    if (!fs->prune) return 0;
    for (size_t k = 0; k < fs->nnodes; k++)
        if (fs->nodes[k].kind == FN_CMP && fs->nodes[k].mode == LM_COL && fs->nodes[k].bcol == col) return 1;
    return 0;
}

/* ---- pruning by statistics ---------------------------------------------------------------------- */

/* Truth values a comparison can take for x in [lo, hi] (c_lo, c_hi: signs of lo - k and hi - k). */
static int range_tv(tsf_cmp op, int c_lo, int c_hi)
{
    int t = 0, f = 0;
    switch (op) {
    case TSF_CMP_EQ:
        t = c_lo <= 0 && c_hi >= 0, f = !(c_lo == 0 && c_hi == 0);
        break;
    case TSF_CMP_NE:
        t = !(c_lo == 0 && c_hi == 0), f = c_lo <= 0 && c_hi >= 0;
        break;
    case TSF_CMP_LT:
        t = c_lo < 0, f = c_hi >= 0;
        break;
    case TSF_CMP_LE:
        t = c_lo <= 0, f = c_hi > 0;
        break;
    case TSF_CMP_GT:
        t = c_hi > 0, f = c_lo <= 0;
        break;
    default:
        t = c_hi >= 0, f = c_lo < 0;
        break;
    }
    return (t ? TV_T : 0) | (f ? TV_F : 0) | TV_U;
}

#define SGN(a, b) (((a) > (b)) - ((a) < (b)))

static int leaf_tv(const fnode *n, const tsf_rd_unit_col *u)
{
    if (n->mode == LM_CONST) return n->konst;
    if (n->mode == LM_TIME) return TV_T | TV_F;
    if (n->ck == CK_NULL) {
        if (u && u->all_null) return n->f->test == FT_NULL ? TV_T : TV_F;
        return TV_T | TV_F;
    }
    if (n->ck == CK_ALWAYS) return (n->always ? TV_T : TV_F) | TV_U;
    if (!u) return TV_ALL;
    if (u->all_null) return TV_U;
    const tsf_fmt_stats *s = &u->stats;
    if (!u->has || !u->trusted || s->type != n->ctype) return TV_ALL;
    if (s->count == 0) return TV_U;
    switch (n->ck) {
    case CK_I64: {
        int64_t lo, hi;
        if (n->ctype == TSF_BOOLEAN) {
            if (s->v.b.sum < 0 || (uint64_t)s->v.b.sum > s->count) return TV_ALL;
            lo = (uint64_t)s->v.b.sum == s->count;
            hi = s->v.b.sum > 0;
        } else if (n->ctype == TSF_INT32 || n->ctype == TSF_DATE) {
            lo = s->v.i32.min, hi = s->v.i32.max;
        } else {
            lo = s->v.i64.min, hi = s->v.i64.max;
        }
        if (lo > hi) return TV_ALL;
        return range_tv(n->op, SGN(lo, n->k), SGN(hi, n->k));
    }
    case CK_F64: {
        double lo = n->ctype == TSF_FLOAT ? s->v.f32.min : s->v.f64.min;
        double hi = n->ctype == TSF_FLOAT ? s->v.f32.max : s->v.f64.max;
        if (isnan(lo) || isnan(hi) || isnan(n->kd) || lo > hi) return TV_ALL;
        /* NaN cells are not in min/max: they make every comparison FALSE except != (TRUE) */
        int tv = range_tv(n->op, SGN(lo, n->kd), SGN(hi, n->kd)) | TV_F;
        return n->op == TSF_CMP_NE ? tv | TV_T : tv;
    }
    case CK_BYTES: {
        if (n->ctype != TSF_STRING) return TV_ALL; /* TEXT keeps no min/max; BLOB no statistics */
        const tsf_bytes *lo = &s->v.bin.min, *hi = &s->v.bin.max;
        if ((!lo->data && lo->len) || (!hi->data && hi->len) ||
            bytes_cmp(lo->data, lo->len, hi->data, hi->len) > 0)
            return TV_ALL;
        return range_tv(n->op, bytes_cmp(lo->data, lo->len, n->s, n->slen),
                        bytes_cmp(hi->data, hi->len, n->s, n->slen));
    }
    default:
        return TV_ALL;
    }
}

tsf_rd_unit_col *tsf_rd_filter_units(tsf_rd_fstate *fs, size_t ncols)
{
    if (ncols > fs->nunits) {
        tsf_rd_unit_col *u = tsf_realloc(fs->a, fs->units, fs->nunits * sizeof *u, ncols * sizeof *u);
        if (!u) return NULL;
        fs->units = u;
        fs->nunits = ncols;
    }
    memset(fs->units, 0, ncols * sizeof *fs->units);
    return fs->units;
}

int tsf_rd_filter_may_match(const tsf_rd_fstate *fs, const tsf_rd_unit_col *cols, size_t ncols)
{
    if (!fs->prune) return 1;
    int set[64], *sets = set;
    if (fs->nnodes > 64) {
        sets = tsf_calloc(fs->a, fs->nnodes, sizeof *sets);
        if (!sets) return 1;
    }
    for (size_t k = 0; k < fs->nnodes; k++) {
        const fnode *n = &fs->nodes[k];
        if (n->kind == FN_CMP)
            sets[k] = leaf_tv(n, n->mode == LM_COL && n->bcol < ncols ? &cols[n->bcol] : NULL);
        else
            sets[k] = tv_combine(n->kind, sets[n->a], n->kind == FN_NOT ? 0 : sets[n->b]);
    }
    int root = sets[fs->nnodes - 1];
    if (sets != set) tsf_free(fs->a, sets, fs->nnodes * sizeof *sets);
    return (root & TV_T) != 0;
}

/* ---- batch evaluation ------------------------------------------------------------------------- */

/* Validity word w (rows 64w..) of an LSB-first bitmap covering n rows. */
static uint64_t valid_word(const uint8_t *v, size_t w, size_t n)
{
    size_t r0 = w * 64, nb = (n - r0 + 7) / 8;
    if (nb > 8) nb = 8;
    uint64_t x = 0;
    for (size_t k = 0; k < nb; k++) x |= (uint64_t)v[w * 8 + k] << (8 * k);
    return x;
}

#define CMP_LOOP(TYPE, EXPR)                                                                                 \
    for (size_t w = 0; w < nw; w++) {                                                                        \
        size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;                                                   \
        const TYPE *x = (const TYPE *)vals + r0;                                                             \
        uint64_t bits = 0;                                                                                   \
        for (size_t j = 0; j < m; j++) bits |= (uint64_t)(EXPR) << j;                                        \
        T[w] = bits;                                                                                         \
    }

#define CMP_OPS(TYPE, K)                                                                                     \
    switch (op) {                                                                                            \
    case TSF_CMP_EQ:                                                                                         \
        CMP_LOOP(TYPE, x[j] == K) break;                                                                     \
    case TSF_CMP_NE:                                                                                         \
        CMP_LOOP(TYPE, x[j] != K) break;                                                                     \
    case TSF_CMP_LT:                                                                                         \
        CMP_LOOP(TYPE, x[j] < K) break;                                                                      \
    case TSF_CMP_LE:                                                                                         \
        CMP_LOOP(TYPE, x[j] <= K) break;                                                                     \
    case TSF_CMP_GT:                                                                                         \
        CMP_LOOP(TYPE, x[j] > K) break;                                                                      \
    default:                                                                                                 \
        CMP_LOOP(TYPE, x[j] >= K) break;                                                                     \
    }

/* Sign of x - k for a float x and an integer k, exactly; 2 when x is NaN. */
static int cmp_d_i(double x, int64_t k)
{
    if (isnan(x)) return 2;
    if (x >= 9223372036854775808.0) return 1;
    if (x < -9223372036854775808.0) return -1;
    int64_t xi = (int64_t)x; /* truncation: exact integer part */
    if (xi != k) return xi < k ? -1 : 1;
    double fr = x - (double)xi;
    return (fr > 0) - (fr < 0);
}

/* Leaf k over rows with these times: TRUE words in T, FALSE words in F. */
static void eval_leaf(const fnode *nd, const tsf_column_batch *col, const int64_t *times, size_t n, size_t nw,
                      uint64_t *T, uint64_t *F)
{
    if (nd->mode == LM_TIME || (nd->mode == LM_COL && nd->ck == CK_NULL)) { /* TRUE or FALSE in every row */
        if (nd->mode == LM_TIME) {
            const void *vals = times;
            tsf_cmp op = nd->op;
            int64_t k = nd->k;
            CMP_OPS(int64_t, k)
        }
        for (size_t w = 0; w < nw; w++) {
            size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
            uint64_t mask = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
            if (nd->mode == LM_COL) /* IS NOT NULL: the validity; a VECTOR column is all null */
                T[w] = col->type != TSF_VECTOR ? valid_word(col->validity, w, n) & mask : 0;
            if (nd->mode == LM_COL && nd->f->test == FT_NULL) T[w] = ~T[w] & mask;
            F[w] = ~T[w] & mask;
        }
        return;
    }
    if (nd->mode == LM_CONST || col->type == TSF_VECTOR) {
        int kv = nd->mode == LM_CONST ? nd->konst : TV_U;
        for (size_t w = 0; w < nw; w++) {
            size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
            uint64_t mask = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
            T[w] = kv == TV_T ? mask : 0;
            F[w] = kv == TV_F ? mask : 0;
        }
        return;
    }
    const void *vals = col->values;
    tsf_cmp op = nd->op;
    switch (nd->ck) {
    case CK_ALWAYS:
        for (size_t w = 0; w < nw; w++) T[w] = nd->always ? ~UINT64_C(0) : 0;
        break;
    case CK_I64: {
        int64_t k = nd->k;
        switch (nd->ctype) {
        case TSF_BOOLEAN:
            CMP_OPS(uint8_t, k) break;
        case TSF_INT32:
        case TSF_DATE:
            CMP_OPS(int32_t, k) break;
        default:
            CMP_OPS(int64_t, k) break;
        }
        break;
    }
    case CK_F64: {
        double k = nd->kd;
        if (nd->ctype == TSF_FLOAT) {
            CMP_OPS(float, k)
        } else {
            CMP_OPS(double, k)
        }
        break;
    }
    case CK_F64I:
        for (size_t w = 0; w < nw; w++) {
            size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;
            uint64_t bits = 0;
            for (size_t j = 0; j < m; j++) {
                double x =
                    nd->ctype == TSF_FLOAT ? ((const float *)vals)[r0 + j] : ((const double *)vals)[r0 + j];
                int c = cmp_d_i(x, nd->k);
                bits |= (uint64_t)(c == 2 ? op == TSF_CMP_NE : op_holds(op, c)) << j;
            }
            T[w] = bits;
        }
        break;
    default: /* CK_BYTES */
        for (size_t w = 0; w < nw; w++) {
            size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;
            const tsf_bytes *x = (const tsf_bytes *)vals + r0;
            uint64_t bits = 0;
            for (size_t j = 0; j < m; j++)
                bits |= (uint64_t)op_holds(op, bytes_cmp(x[j].data, x[j].len, nd->s, nd->slen)) << j;
            T[w] = bits;
        }
    }
    for (size_t w = 0; w < nw; w++) {
        size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
        uint64_t mask = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
        uint64_t v = valid_word(col->validity, w, n) & mask;
        F[w] = ~T[w] & v;
        T[w] &= v;
    }
}

static tsf_status ensure_out(tsf_rd_fstate *fs, size_t nvisible, tsf_error *err)
{
    if (nvisible <= fs->nout) return TSF_OK;
    tsf_rd_buf *v = tsf_realloc(fs->a, fs->vals, fs->nout * sizeof *v, nvisible * sizeof *v);
    if (!v) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->vals = v;
    tsf_rd_buf *b = tsf_realloc(fs->a, fs->valid, fs->nout * sizeof *b, nvisible * sizeof *b);
    if (!b) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->valid = b;
    memset(fs->vals + fs->nout, 0, (nvisible - fs->nout) * sizeof *v);
    memset(fs->valid + fs->nout, 0, (nvisible - fs->nout) * sizeof *b);
    fs->nout = nvisible;
    return TSF_OK;
}

tsf_status tsf_rd_filter_apply(tsf_rd_fstate *fs, tsf_batch *b, tsf_column_batch *cols, size_t ncols, size_t nvisible,
                           size_t *kept, tsf_error *err)
{
    size_t n = b->nrows;
    *kept = n;
    if (fs->root_true || n == 0) return TSF_OK;
    size_t nw = (n + 63) / 64;
    if (nw > fs->words)
        return tsf_err(err, TSF_EINVAL, "filter: batch of %zu rows exceeds the query's batch size", n);
    for (size_t k = 0; k < fs->nnodes; k++) {
        const fnode *nd = &fs->nodes[k];
        uint64_t *T = fs->bits + 2 * k * fs->words, *F = T + fs->words;
        if (nd->kind == FN_CMP) {
            static const tsf_column_batch none = {NULL, TSF_VECTOR, NULL, NULL};
            eval_leaf(nd, nd->mode == LM_COL && nd->bcol < ncols ? &cols[nd->bcol] : &none, b->times, n, nw, T, F);
            continue;
        }
        const uint64_t *TA = fs->bits + 2 * nd->a * fs->words, *FA = TA + fs->words;
        const uint64_t *TB = fs->bits + 2 * nd->b * fs->words, *FB = TB + fs->words;
        if (nd->kind == FN_NOT) {
            for (size_t w = 0; w < nw; w++) T[w] = FA[w], F[w] = TA[w];
        } else if (nd->kind == FN_AND) {
            for (size_t w = 0; w < nw; w++) T[w] = TA[w] & TB[w], F[w] = FA[w] | FB[w];
        } else {
            for (size_t w = 0; w < nw; w++) T[w] = TA[w] | TB[w], F[w] = FA[w] & FB[w];
        }
    }
    const uint64_t *sel = fs->bits + 2 * (fs->nnodes - 1) * fs->words;
    size_t m = 0;
    for (size_t w = 0; w < nw; w++) m += (size_t)__builtin_popcountll(sel[w]);
    *kept = m;
    if (m == n || m == 0) return TSF_OK;
    /* compact times and the visible columns into fs's buffers */
    tsf_status st = tsf_rd_buf_reserve(fs->a, &fs->times, m * sizeof(int64_t), err);
    if (!st) st = ensure_out(fs, nvisible, err);
    if (st) return st;
    int64_t *to = (int64_t *)fs->times.p;
    size_t o = 0;
    for (size_t w = 0; w < nw; w++)
        for (uint64_t x = sel[w]; x; x &= x - 1) to[o++] = b->times[w * 64 + (size_t)__builtin_ctzll(x)];
    b->times = to;
    for (size_t i = 0; i < nvisible; i++) {
        tsf_column_batch *c = &cols[i];
        if (c->type == TSF_VECTOR) continue; /* all null: the shared zero buffers stay valid */
        size_t esz = tsf_rd_cell_size(c->type);
        if ((st = tsf_rd_buf_reserve(fs->a, &fs->vals[i], m * esz, err))) return st;
        if ((st = tsf_rd_buf_reserve(fs->a, &fs->valid[i], m / 8 + 1, err))) return st;
        const uint8_t *src = c->values, *sv = c->validity;
        uint8_t *dst = fs->vals[i].p, *dv = fs->valid[i].p;
        memset(dv, 0, m / 8 + 1);
        o = 0;
        for (size_t w = 0; w < nw; w++)
            for (uint64_t x = sel[w]; x; x &= x - 1, o++) {
                size_t r = w * 64 + (size_t)__builtin_ctzll(x);
                switch (esz) {
                case 1:
                    dst[o] = src[r];
                    break;
                case 4:
                    memcpy(dst + o * 4, src + r * 4, 4);
                    break;
                case 8:
                    memcpy(dst + o * 8, src + r * 8, 8);
                    break;
                default:
                    memcpy(dst + o * esz, src + r * esz, esz);
                }
                dv[o >> 3] |= (uint8_t)(((sv[r >> 3] >> (r & 7)) & 1u) << (o & 7));
            }
        c->values = dst;
        c->validity = dv;
    }
    b->nrows = m;
    return TSF_OK;
}

void tsf_rd_filter_time_bounds(const tsf_filter *f, int64_t *lo, int64_t *hi)
{
    if (!f) return;
    if (f->kind == FN_AND) {
        tsf_rd_filter_time_bounds(f->l, lo, hi);
        tsf_rd_filter_time_bounds(f->r, lo, hi);
        return;
    }
    if (f->kind != FN_CMP || f->test != FT_TIME) return;
    int64_t a = INT64_MIN, b = INT64_MAX, k = f->i;
    switch (f->op) {
    case TSF_CMP_EQ:
        a = b = k;
        break;
    case TSF_CMP_LT:
        if (k == INT64_MIN) a = INT64_MAX, b = INT64_MIN; /* nothing is earlier */
        else b = k - 1;
        break;
    case TSF_CMP_LE:
        b = k;
        break;
    case TSF_CMP_GT:
        if (k == INT64_MAX) a = INT64_MAX, b = INT64_MIN;
        else a = k + 1;
        break;
    case TSF_CMP_GE:
        a = k;
        break;
    default:
        return;
    }
    if (a > *lo) *lo = a;
    if (b < *hi) *hi = b;
}

/* ---- TS_2DIFF block selection (query_scan.c and tsf-bench filter) -------------------------------- */

void tsf_rd_blocks_select(const tsf_ts2diff_block *b, size_t nb, int64_t tmin, int64_t tmax, int conservative,
                      size_t *b0, size_t *b1)
{
    *b0 = nb;
    *b1 = 0;
    for (size_t i = 0; i < nb; i++) {
        int meets =
            conservative ? b[i].bound_conservative >= tmin : (b[i].bound > tmin || b[i].bound == INT64_MAX);
        if (meets && b[i].first <= tmax) {
            if (*b0 == nb) *b0 = i;
            *b1 = i;
        }
    }
}
