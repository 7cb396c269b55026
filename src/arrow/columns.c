/*
 * columns.c - the columns of an Arrow stream, fixed when it opens: the time column, then
 *   table model (the selected devices share a table with a schema): the TAG columns (utf8, from the device
 *     id) and the FIELD columns, in schema order, or the columns named by the query in its order;
 *   tree model: the device (utf8, an option), then the union of the selected devices' series by name
 *     (ascending; a series a device lacks reads as null), or the series named by the query in its order.
 * A tree series whose type differs between devices is TSF_EINVAL: one Arrow column has one type.
 * The same rules over one reader's metadata or over a dataset's (the union of its files'), through a small
 * catalog of the four look-ups they need. Also the options and the schema export.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow_internal.h"

void tsf_arrow_options_init(tsf_arrow_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->time_unit = TSF_ARROW_MILLI;
    o->device_column = 1;
    o->zero_copy = 1;
}

tsf_status tsf_ar_options(const tsf_arrow_options *in, tsf_arrow_options *o, tsf_error *err)
{
    tsf_arrow_options_init(o);
    if (in) { /* this version's size, or the one before zero_copy (which then keeps its default) */
        if (in->struct_size != sizeof *o && in->struct_size != offsetof(tsf_arrow_options, zero_copy))
            return tsf_err(err, TSF_EINVAL, "tsf_arrow_options.struct_size %zu unknown", in->struct_size);
        memcpy(o, in, in->struct_size);
        o->struct_size = sizeof *o;
    }
    if (o->time_unit != TSF_ARROW_MILLI && o->time_unit != TSF_ARROW_MICRO && o->time_unit != TSF_ARROW_NANO)
        return tsf_err(err, TSF_EINVAL, "tsf_arrow_options.time_unit %d unknown", (int)o->time_unit);
    if (o->query && (o->query->struct_size < sizeof(size_t) || o->query->struct_size > sizeof(tsf_query_options)))
        return tsf_err(err, TSF_EINVAL, "tsf_query_options.struct_size %zu unknown", o->query->struct_size);
    return TSF_OK;
}

/* The selected devices: an explicit list, or the range [first, first + n). */
typedef struct devsel {
    const size_t *list;
    size_t first, n;
} devsel;

static size_t dev_at(const devsel *s, size_t i) { return s->list ? s->list[i] : s->first + i; }

typedef struct named {
    const char *name;
    tsf_type type;
} named;

static int named_cmp(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (int)a->type - (int)b->type;
}

/* The metadata the columns are built from: one reader's, or a dataset's. */
typedef struct acat {
    tsf_reader *r;
    const tsf_dataset *ds;
} acat;

static tsf_status cat_device(const acat *c, size_t d, size_t *nseries, size_t *table, tsf_error *err)
{
    tsf_status st;
    if (c->ds) {
        tsf_dataset_device_info di;
        if ((st = tsf_dataset_device(c->ds, d, &di, err))) return st;
        *nseries = di.nseries, *table = di.table;
    } else {
        tsf_device_info di;
        if ((st = tsf_reader_device(c->r, d, &di, err))) return st;
        *nseries = di.nseries, *table = di.table;
    }
    return TSF_OK;
}

static tsf_status cat_series(const acat *c, size_t d, size_t j, named *out, tsf_error *err)
{
    tsf_status st;
    if (c->ds) {
        tsf_dataset_series_info si;
        if ((st = tsf_dataset_series(c->ds, d, j, &si, err))) return st;
        *out = (named){si.measurement, si.type};
    } else {
        tsf_series_info si;
        if ((st = tsf_reader_series(c->r, d, j, &si, err))) return st;
        *out = (named){si.measurement, si.type};
    }
    return TSF_OK;
}

static tsf_status cat_table(const acat *c, size_t t, tsf_table_info *ti, tsf_error *err)
{
    return c->ds ? tsf_dataset_table(c->ds, t, ti, err) : tsf_reader_table(c->r, t, ti, err);
}

/* Series `name` of device d: *found = 0 when the device lacks it. */
static tsf_status cat_find_series(const acat *c, size_t d, const char *name, named *out, int *found, tsf_error *err)
{
    *found = 0;
    if (!c->ds) {
        size_t j;
        if (tsf_reader_find_series(c->r, d, name, &j, NULL) != TSF_OK) return TSF_OK;
        *found = 1;
        return cat_series(c, d, j, out, err);
    }
    size_t ns, t;
    tsf_status st = cat_device(c, d, &ns, &t, err);
    for (size_t j = 0; j < ns && !st; j++)
        if (!(st = cat_series(c, d, j, out, err)) && !strcmp(out->name, name)) return *found = 1, TSF_OK;
    return st;
}

/* Type of series `name` over the selected devices: *found = 0 when none has it; TSF_EINVAL when two differ. */
static tsf_status series_type(const acat *cat, const devsel *ds, const char *name, tsf_type *type, int *found,
                              tsf_error *err)
{
    *found = 0;
    for (size_t i = 0; i < ds->n; i++) {
        named si;
        int has;
        tsf_status st = cat_find_series(cat, dev_at(ds, i), name, &si, &has, err);
        if (st) return st;
        if (!has) continue;
        if (*found && si.type != *type)
            return tsf_err(err, TSF_EINVAL, "series %s is %s in one device and %s in another: one Arrow column has "
                           "one type (select the devices, or one device per stream)", name,
                           tsf_type_name(*type), tsf_type_name(si.type));
        *type = si.type;
        *found = 1;
    }
    return TSF_OK;
}

static tsf_status add_col(acols *c, size_t cap, acol_kind kind, tsf_type type, size_t src, const char *name,
                          tsf_error *err)
{
    if (c->ncols >= cap) return tsf_err(err, TSF_EINVAL, "arrow: too many columns");
    c->cols[c->ncols++] = (acol){kind, type, src, name};
    c->pool_size += strlen(name) + 1;
    return TSF_OK;
}

/* The columns a stream selects: explicit names (columns != NULL), or all of them. */
typedef struct asel {
    const char *const *columns;
    size_t ncolumns;
} asel;

static tsf_status table_columns(const tsf_table_info *ti, const asel *q, acols *c, size_t cap, tsf_error *err)
{
    tsf_status st = TSF_OK;
    if (!q->columns) {
        for (int pass = 0; pass < 2 && !st; pass++) {
            size_t ntag = 0;
            for (size_t k = 0; k < ti->ncolumns && !st; k++) {
                const tsf_table_column *tc = &ti->columns[k];
                if (tc->category == TSF_COLUMN_TAG) {
                    if (pass == 0) st = add_col(c, cap, AC_TAG, TSF_STRING, ntag, tc->name, err);
                    ntag++;
                } else if (tc->category == TSF_COLUMN_FIELD && pass == 1) {
                    st = add_col(c, cap, AC_VALUE, tc->type, c->nq, tc->name, err);
                    c->nq++;
                }
            }
        }
        return st;
    }
    for (size_t i = 0; i < q->ncolumns && !st; i++) {
        const char *name = q->columns[i];
        if (!name) return tsf_err(err, TSF_EINVAL, "tsf_query_options.columns[%zu] is NULL", i);
        size_t ntag = 0, k;
        for (k = 0; k < ti->ncolumns; k++) {
            if (!strcmp(ti->columns[k].name, name)) break;
            if (ti->columns[k].category == TSF_COLUMN_TAG) ntag++;
        }
        if (k == ti->ncolumns)
            return tsf_err(err, TSF_EINVAL, "column %s is not a column of table %s", name, ti->name);
        if (ti->columns[k].category == TSF_COLUMN_TAG) {
            st = add_col(c, cap, AC_TAG, TSF_STRING, ntag, name, err);
        } else { /* FIELD, or ATTRIBUTE (no stored values: the query reads it as null) */
            st = add_col(c, cap, AC_VALUE, ti->columns[k].type, c->nq, name, err);
            c->nq++;
        }
    }
    return st;
}

/* Series of the selected devices counted (*total), or listed into all[0, *total) when all is non-NULL. */
static tsf_status series_of(const acat *cat, const devsel *ds, named *all, size_t *total, tsf_error *err)
{
    size_t n = 0, cap = *total;
    for (size_t i = 0; i < ds->n; i++) {
        size_t d = dev_at(ds, i), ns, t;
        tsf_status st = cat_device(cat, d, &ns, &t, err);
        if (st) return st;
        if (!all) {
            n += ns;
            continue;
        }
        for (size_t j = 0; j < ns && n < cap; j++)
            if ((st = cat_series(cat, d, j, &all[n++], err))) return st;
    }
    *total = n;
    return TSF_OK;
}

static tsf_status tree_columns(const acat *cat, const devsel *ds, const asel *q, acols *c, size_t cap,
                               const tsf_allocator *a, tsf_error *err)
{
    tsf_status st = TSF_OK;
    if (q->columns) {
        for (size_t i = 0; i < q->ncolumns && !st; i++) {
            const char *name = q->columns[i];
            if (!name) return tsf_err(err, TSF_EINVAL, "tsf_query_options.columns[%zu] is NULL", i);
            tsf_type type = TSF_INT64;
            int found;
            if ((st = series_type(cat, ds, name, &type, &found, err))) return st;
            if (!found) return tsf_err(err, TSF_EINVAL, "series %s: no selected device has it", name);
            st = add_col(c, cap, AC_VALUE, type, c->nq, name, err);
            c->nq++;
        }
        return st;
    }
    size_t total = 0;
    if ((st = series_of(cat, ds, NULL, &total, err))) return st;
    named *all = tsf_calloc(a, total ? total : 1, sizeof *all);
    if (!all) return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
    size_t n = total;
    st = series_of(cat, ds, all, &n, err);
    if (!st) {
        qsort(all, n, sizeof *all, named_cmp);
        for (size_t i = 0; i < n && !st; i++) {
            if (i && !strcmp(all[i].name, all[i - 1].name)) {
                if (all[i].type != all[i - 1].type)
                    st = tsf_err(err, TSF_EINVAL, "series %s is %s in one device and %s in another: one Arrow "
                                 "column has one type (select the devices, or one device per stream)", all[i].name,
                                 tsf_type_name(all[i - 1].type), tsf_type_name(all[i].type));
                continue;
            }
            st = add_col(c, cap, AC_VALUE, all[i].type, c->nq, all[i].name, err);
            c->nq++;
        }
    }
    tsf_free(a, all, (total ? total : 1) * sizeof *all);
    return st;
}

static const char *format_of(const acols *c, tsf_type t)
{
    static const char *TS[] = {"tsm:UTC", "tsu:UTC", "tsn:UTC"};
    switch (t) {
    case TSF_BOOLEAN: return "b";
    case TSF_INT32: return "i";
    case TSF_INT64: return "l";
    case TSF_FLOAT: return "f";
    case TSF_DOUBLE: return "g";
    case TSF_TEXT:
    case TSF_STRING: return "u";
    case TSF_BLOB: return "z";
    case TSF_DATE: return "tdD";
    case TSF_TIMESTAMP: return TS[c->unit];
    default: return NULL;
    }
}

/* The columns over the selected devices ds of catalog cat: the model (a table schema shared by every selected
 * device, or the tree model when none has one; ti: the table a query named, else NULL), then the columns. */
static tsf_status build_columns(const acat *cat, const devsel *ds, const tsf_table_info *named_table, const asel *q,
                                const tsf_arrow_options *o, const tsf_allocator *a, acols *out, tsf_error *err)
{
    memset(out, 0, sizeof *out);
    out->unit = o->time_unit;
    tsf_status st = TSF_OK;
    tsf_table_info ti;
    int have_ti = named_table && named_table->ncolumns > 0;
    if (have_ti) ti = *named_table;
    if (!have_ti && ds->n) {
        size_t t0 = 0;
        int mixed = 0, schema = 0;
        for (size_t i = 0; i < ds->n; i++) {
            size_t ns, t;
            tsf_table_info t2;
            if ((st = cat_device(cat, dev_at(ds, i), &ns, &t, err)) || (st = cat_table(cat, t, &t2, err))) return st;
            if (i == 0) t0 = t;
            mixed |= t != t0;
            schema |= t2.ncolumns > 0;
        }
        if (schema && mixed)
            return tsf_err(err, TSF_EINVAL, "the selected devices belong to several tables: a stream reads one "
                           "table (set the query's table)");
        if (schema) {
            if ((st = cat_table(cat, t0, &ti, err))) return st;
            have_ti = 1;
        }
    }
    /* upper bound of the column count: time + device + the explicit columns, or every series/column */
    size_t cap = 0;
    if (q->columns) cap = q->ncolumns;
    else if (have_ti) cap = ti.ncolumns;
    else if ((st = series_of(cat, ds, NULL, &cap, err))) return st;
    out->cap = cap += 2;
    out->cols = tsf_calloc(a, cap, sizeof *out->cols);
    out->qnames = tsf_calloc(a, cap, sizeof *out->qnames);
    if (!out->cols || !out->qnames) {
        st = tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
        goto fail;
    }
    if ((st = add_col(out, cap, AC_TIME, TSF_TIMESTAMP, 0, o->time_name ? o->time_name : "time", err))) goto fail;
    if (have_ti) {
        st = table_columns(&ti, q, out, cap, err);
    } else {
        if (o->device_column && (st = add_col(out, cap, AC_DEVICE, TSF_STRING, 0, "device", err))) goto fail;
        st = tree_columns(cat, ds, q, out, cap, a, err);
    }
    if (st) goto fail;
    for (size_t i = 0; i < out->ncols; i++)
        if (!format_of(out, out->cols[i].type)) {
            st = tsf_err(err, TSF_ENOTSUP, "column %s: type %d has no Arrow form", out->cols[i].name,
                         (int)out->cols[i].type);
            goto fail;
        }
    /* names into one pool (the stream keeps them; the reader's and the caller's may go away) */
    if (!(out->pool = tsf_alloc(a, out->pool_size))) {
        st = tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
        goto fail;
    }
    char *p = out->pool;
    for (size_t i = 0; i < out->ncols; i++) {
        size_t n = strlen(out->cols[i].name) + 1;
        memcpy(p, out->cols[i].name, n);
        out->cols[i].name = p;
        if (out->cols[i].kind == AC_VALUE) out->qnames[out->cols[i].src] = p;
        p += n;
    }
    return TSF_OK;
fail:
    tsf_ar_columns_free(out, a);
    return st;
}

tsf_status tsf_ar_columns(tsf_reader *r, const tsf_arrow_options *o, const tsf_allocator *a, acols *out,
                          tsf_error *err)
{
    memset(out, 0, sizeof *out);
    tsf_query_options q;
    tsf_query_options_init(&q);
    if (o->query) memcpy(&q, o->query, o->query->struct_size);
    tsf_status st = tsf_reader_load_index(r, err);
    if (st) return st;
    size_t ndev = tsf_reader_device_count(r);
    devsel ds = {NULL, 0, ndev};
    tsf_table_info ti;
    int have_ti = 0;
    if (q.devices) {
        ds = (devsel){q.devices, 0, q.ndevices};
        for (size_t i = 0; i < ds.n; i++)
            if (ds.list[i] >= ndev)
                return tsf_err(err, TSF_EINVAL, "tsf_query_options.devices[%zu] = %zu, the file has %zu devices", i,
                               ds.list[i], ndev);
    } else if (q.table) {
        size_t t;
        if ((st = tsf_reader_find_table(r, q.table, &t, err)) || (st = tsf_reader_table(r, t, &ti, err))) return st;
        ds = (devsel){NULL, ti.first_device, ti.ndevices};
        have_ti = 1;
    }
    acat cat = {r, NULL};
    asel sel = {q.columns, q.ncolumns};
    return build_columns(&cat, &ds, have_ti ? &ti : NULL, &sel, o, a, out, err);
}

tsf_status tsf_ar_dataset_columns(const tsf_dataset *d, const tsf_dataset_query_options *q,
                                  const tsf_arrow_options *o, const tsf_allocator *a, acols *out, tsf_error *err)
{
    memset(out, 0, sizeof *out);
    devsel ds = {NULL, 0, tsf_dataset_device_count(d)};
    tsf_table_info ti = {0};
    int have_ti = 0;
    size_t *list = NULL;
    tsf_status st = TSF_OK;
    if (q->devices) { /* by name, as the dataset query resolves them */
        if (!(list = tsf_calloc(a, q->ndevices ? q->ndevices : 1, sizeof *list)))
            return tsf_err(err, TSF_ENOMEM, "arrow: out of memory");
        for (size_t i = 0; i < q->ndevices && !st; i++)
            if (!q->devices[i] || tsf_dataset_find_device(d, q->devices[i], &list[i], NULL) != TSF_OK)
                st = tsf_err(err, TSF_ENOTFOUND, "dataset query: no device %s",
                             q->devices[i] ? q->devices[i] : "(NULL)");
        ds = (devsel){list, 0, q->ndevices};
    } else if (q->table) {
        size_t t = 0, nt = tsf_dataset_table_count(d);
        for (; t < nt && !st; t++)
            if (!(st = tsf_dataset_table(d, t, &ti, err)) && !strcasecmp(ti.name, q->table)) break;
        if (!st && t == nt) st = tsf_err(err, TSF_ENOTFOUND, "dataset query: no table %s", q->table);
        ds = (devsel){NULL, ti.first_device, ti.ndevices};
        have_ti = 1;
    }
    acat cat = {NULL, d};
    asel sel = {q->columns, q->ncolumns};
    if (!st) st = build_columns(&cat, &ds, have_ti ? &ti : NULL, &sel, o, a, out, err);
    if (list) tsf_free(a, list, (q->ndevices ? q->ndevices : 1) * sizeof *list);
    return st;
}

void tsf_ar_columns_free(acols *c, const tsf_allocator *a)
{
    if (c->cols) tsf_free(a, c->cols, c->cap * sizeof *c->cols);
    if (c->qnames) tsf_free(a, c->qnames, c->cap * sizeof *c->qnames);
    if (c->pool) tsf_free(a, c->pool, c->pool_size);
    memset(c, 0, sizeof *c);
}

/* ---- shared blocks --------------------------------------------------------------------------- */

ablock *tsf_ar_block_new(const tsf_allocator *a, size_t size)
{
    size_t raw_size = size + 64;
    if (raw_size < size) return NULL;
    void *raw = tsf_alloc(a, raw_size);
    if (!raw) return NULL;
    ablock *b = (ablock *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    atomic_init(&b->refs, 1);
    b->has_a = a != NULL;
    if (a) b->a = *a;
    b->raw = raw;
    b->raw_size = raw_size;
    b->own = NULL;
    return b;
}

void tsf_ar_block_unref(ablock *b)
{
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
    tsf_allocator a = b->a;
    aowned *own = b->own;
    tsf_free(b->has_a ? &a : NULL, b->raw, b->raw_size);
    if (own) tsf_ar_owned_unref(own);
}

/* ---- the schema ------------------------------------------------------------------------------ */

static void schema_release(struct ArrowSchema *s)
{
    if (!s || !s->release) return;
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
    ablock *b = s->private_data;
    s->release = NULL;
    tsf_ar_block_unref(b);
}

tsf_status tsf_ar_schema(const acols *c, const tsf_allocator *a, struct ArrowSchema *out, tsf_error *err)
{
    size_t n = c->ncols;
    size_t head = tsf_ar_align64(sizeof(ablock));
    size_t size = head + n * (sizeof(struct ArrowSchema) + sizeof(struct ArrowSchema *)) + c->pool_size;
    ablock *b = tsf_ar_block_new(a, size);
    if (!b) return tsf_err(err, TSF_ENOMEM, "arrow: out of memory (schema)");
    atomic_store(&b->refs, 1 + n);
    struct ArrowSchema *kids = (struct ArrowSchema *)((char *)b + head);
    struct ArrowSchema **kp = (struct ArrowSchema **)(kids + n);
    char *names = (char *)(kp + n);
    memcpy(names, c->pool, c->pool_size);
    for (size_t i = 0; i < n; i++) {
        const acol *col = &c->cols[i];
        kids[i] = (struct ArrowSchema){
            .format = format_of(c, col->type),
            .name = names + (col->name - c->pool),
            .metadata = NULL,
            .flags = col->kind == AC_TIME || col->kind == AC_DEVICE ? 0 : ARROW_FLAG_NULLABLE,
            .n_children = 0,
            .children = NULL,
            .dictionary = NULL,
            .release = schema_release,
            .private_data = b,
        };
        kp[i] = &kids[i];
    }
    *out = (struct ArrowSchema){
        .format = "+s",
        .name = "",
        .metadata = NULL,
        .flags = 0,
        .n_children = (int64_t)n,
        .children = n ? kp : NULL,
        .dictionary = NULL,
        .release = schema_release,
        .private_data = b,
    };
    return TSF_OK;
}
