/*
 * read.c - read_tsfile(paths, table_name :=, start_time :=, end_time :=, filter :=, parts :=): TsFiles as a DuckDB table through the
 * dataset API (doc/duckdb.md).
 *
 * Bind opens the dataset (metadata only) and fixes the columns: table model `time`, the TAG columns, the
 * FIELD columns; tree model `time`, `device`, then the union of the selected devices' measurements by name.
 * The global init turns DuckDB's projection into the query's column list and cuts the scan into units
 * (a run of devices x a slice of their time range); each DuckDB thread takes the next unit and runs one
 * dataset query for it on its own thread, copying batches into DuckDB's vectors.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ext.h"

#define FN "read_tsfile"
#define MAX_UNITS 64
#define MAX_PARTS 4096
#define POINTS_PER_UNIT (1u << 20)

typedef enum colkind { COL_TIME, COL_DEVICE, COL_TAG, COL_FIELD } colkind;

typedef struct rcol {
    const char *name; /* the DuckDB column: the measurement's name, or <measurement>_<type> (owned) */
    const char *meas; /* the series' name, borrowed from the dataset's schema */
    char *owned;
    colkind kind;
    size_t tag;       /* COL_TAG: k of the k-th TAG column (device id segment 1 + k) */
    duckdb_type dt;
    tsf_type tt;      /* COL_FIELD: the TsFile type (the first seen when several map to dt) */
} rcol;

typedef struct bind_data {
    tsf_dataset *ds;
    tsf_filter *where;
    int64_t tmin, tmax;
    rcol *cols;
    size_t ncols;
    size_t *devs; /* selected dataset devices, ascending */
    size_t ndevs;
    int table_model, all_aligned;
    size_t ntags;
    uint64_t points; /* values of the selected devices over the files (an upper bound of the work) */
    int64_t parts;   /* parts := (0: from points) */
} bind_data;

typedef struct unit {
    size_t dev0, ndev; /* bind_data.devs[dev0 .. dev0 + ndev) */
    int64_t lo, hi;
} unit;

typedef struct global_state {
    const bind_data *bd;
    idx_t nout;
    long *out_col;      /* output vector i: column of bind_data.cols, -1 = none (row id) */
    const char **qcols; /* the query's columns: the projected FIELD columns, then hidden ones */
    size_t nq;
    long *field_q;      /* per bind column: its index in qcols (COL_FIELD and projected), else -1 */
    const char **devnames;
    unit *units;
    size_t nunits;
    atomic_size_t next;
} global_state;

typedef struct local_state {
    tsf_dataset_query *q;
    const tsf_dataset_batch *b;
    size_t row;
} local_state;

static void bind_free(void *p)
{
    bind_data *bd = p;
    if (!bd) return;
    tsf_filter_free(bd->where);
    tsf_dataset_close(bd->ds);
    for (size_t c = 0; c < bd->ncols; c++) free(bd->cols[c].owned);
    free(bd->cols);
    free(bd->devs);
    free(bd);
}

static void global_free(void *p)
{
    global_state *g = p;
    if (!g) return;
    free(g->out_col);
    free(g->qcols);
    free(g->field_q);
    free(g->devnames);
    free(g->units);
    free(g);
}

static void local_free(void *p)
{
    local_state *l = p;
    if (!l) return;
    tsf_dataset_query_close(l->q);
    free(l);
}

/* A named parameter as an int64 (BIGINT or any integer DuckDB casts); 1 when given. */
static int named_i64(duckdb_bind_info info, const char *name, int64_t *out)
{
    duckdb_value v = duckdb_bind_get_named_parameter(info, name);
    if (!v) return 0;
    int given = !duckdb_is_null_value(v);
    if (given) *out = duckdb_get_int64(v);
    duckdb_destroy_value(&v);
    return given;
}

/* A named BOOLEAN parameter, def when not given (or NULL). */
static int named_bool(duckdb_bind_info info, const char *name, int def)
{
    duckdb_value v = duckdb_bind_get_named_parameter(info, name);
    if (!v) return def;
    int r = duckdb_is_null_value(v) ? def : duckdb_get_bool(v);
    duckdb_destroy_value(&v);
    return r;
}

/* A named VARCHAR parameter (malloc'd copy, NULL when not given). */
static char *named_str(duckdb_bind_info info, const char *name)
{
    duckdb_value v = duckdb_bind_get_named_parameter(info, name);
    if (!v) return NULL;
    char *r = NULL;
    if (!duckdb_is_null_value(v)) {
        char *s = duckdb_get_varchar(v);
        if (s) r = strdup(s);
        duckdb_free(s);
    }
    duckdb_destroy_value(&v);
    return r;
}

/* The DuckDB type that holds values of DuckDB types a and b without loss (INTEGER < BIGINT; INTEGER, FLOAT
 * < DOUBLE); INVALID when there is none. */
static duckdb_type common_type(duckdb_type a, duckdb_type b)
{
    if (a == b) return a;
    if ((a == DUCKDB_TYPE_INTEGER && b == DUCKDB_TYPE_BIGINT) || (b == DUCKDB_TYPE_INTEGER && a == DUCKDB_TYPE_BIGINT))
        return DUCKDB_TYPE_BIGINT;
    int fa = a == DUCKDB_TYPE_INTEGER || a == DUCKDB_TYPE_FLOAT || a == DUCKDB_TYPE_DOUBLE;
    int fb = b == DUCKDB_TYPE_INTEGER || b == DUCKDB_TYPE_FLOAT || b == DUCKDB_TYPE_DOUBLE;
    if (fa && fb) return DUCKDB_TYPE_DOUBLE;
    return DUCKDB_TYPE_INVALID;
}

static int add_col(bind_data *bd, size_t *cap, rcol c)
{
    if (bd->ncols == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        rcol *p = realloc(bd->cols, nc * sizeof *p);
        if (!p) return -1;
        bd->cols = p;
        *cap = nc;
    }
    bd->cols[bd->ncols++] = c;
    return 0;
}

static int cmp_col_name(const void *a, const void *b)
{
    return strcmp(((const rcol *)a)->name, ((const rcol *)b)->name);
}

/* Chooses the table (or the tree model over every device) and fills bd->devs; 0 or -1 with the error set. */
static int select_devices(duckdb_bind_info info, bind_data *bd, const char *table, tsf_table_info *ti)
{
    tsf_error e = {0};
    size_t nt = tsf_dataset_table_count(bd->ds), found = (size_t)-1, nmodel = 0;
    char names[512] = "";
    size_t nl = 0;
    for (size_t i = 0; i < nt; i++) {
        tsf_table_info t;
        if (tsf_dataset_table(bd->ds, i, &t, &e)) {
            tsfx_bind_error(info, FN, "%s", e.message);
            return -1;
        }
        if (table && !strcasecmp(t.name, table)) found = i;
        if (t.ncolumns) {
            nmodel++;
            if (nl < sizeof names - 1) {
                int w = snprintf(names + nl, sizeof names - nl, "%s'%s'", nl ? ", " : "", t.name);
                if (w > 0) nl += (size_t)w;
            }
        }
    }
    memset(ti, 0, sizeof *ti);
    size_t first = 0, count = tsf_dataset_device_count(bd->ds);
    if (table) {
        if (found == (size_t)-1) {
            tsfx_bind_error(info, FN, "no table '%s' in the files (tables with a schema: %s)", table,
                            nmodel ? names : "none");
            return -1;
        }
        tsf_dataset_table(bd->ds, found, ti, &e);
        first = ti->first_device;
        count = ti->ndevices;
        bd->table_model = ti->ncolumns > 0;
    } else if (nmodel == 1 && nt == 1) {
        tsf_dataset_table(bd->ds, 0, ti, &e);
        bd->table_model = 1;
    } else if (nmodel > 0) {
        tsfx_bind_error(info, FN, "the files hold %zu table%s (%s)%s: choose one with table_name := '...'", nmodel,
                        nmodel > 1 ? "s" : "", names, nmodel < nt ? " and tree-model devices" : "");
        return -1;
    }
    bd->devs = malloc((count ? count : 1) * sizeof *bd->devs);
    if (!bd->devs) {
        tsfx_bind_error(info, FN, "out of memory");
        return -1;
    }
    bd->all_aligned = 1;
    for (size_t d = 0; d < count; d++) {
        tsf_dataset_device_info di;
        tsf_dataset_device(bd->ds, first + d, &di, &e);
        bd->all_aligned &= di.aligned != 0;
        bd->devs[bd->ndevs++] = first + d;
    }
    return 0;
}

/* Columns of the tree model: time, device, then the measurements of the selected devices by name. A
 * measurement whose types across devices have no common DuckDB type (common_type) becomes one column per
 * type, named <measurement>_<type> (e.g. s1_bigint, s1_varchar); each device's values go to the column of
 * its type. */
static int tree_columns(duckdb_bind_info info, bind_data *bd, size_t *cap)
{
    tsf_error e = {0};
    size_t base = bd->ncols;
    for (size_t i = 0; i < bd->ndevs; i++) {
        tsf_dataset_device_info di;
        tsf_dataset_device(bd->ds, bd->devs[i], &di, &e);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (tsf_dataset_series(bd->ds, bd->devs[i], j, &si, &e)) {
                tsfx_bind_error(info, FN, "%s", e.message);
                return -1;
            }
            duckdb_type dt = tsfx_duck_type(si.type);
            size_t k = base;
            for (; k < bd->ncols; k++) {
                if (strcmp(bd->cols[k].meas, si.measurement)) continue;
                duckdb_type ct = common_type(bd->cols[k].dt, dt);
                if (ct != DUCKDB_TYPE_INVALID) {
                    bd->cols[k].dt = ct;
                    break;
                }
            }
            if (k == bd->ncols && add_col(bd, cap, (rcol){si.measurement, si.measurement, NULL, COL_FIELD, 0, dt, si.type})) {
                tsfx_bind_error(info, FN, "out of memory");
                return -1;
            }
        }
    }
    for (size_t k = base; k < bd->ncols; k++) {
        size_t same = 0;
        for (size_t m = base; m < bd->ncols; m++) same += !strcmp(bd->cols[m].meas, bd->cols[k].meas);
        if (same < 2) continue;
        const char *tn = tsfx_duck_type_name(bd->cols[k].dt);
        size_t n = strlen(bd->cols[k].meas) + strlen(tn) + 2;
        if (!(bd->cols[k].owned = malloc(n))) {
            tsfx_bind_error(info, FN, "out of memory");
            return -1;
        }
        snprintf(bd->cols[k].owned, n, "%s_%s", bd->cols[k].meas, tn);
        for (char *p = bd->cols[k].owned + strlen(bd->cols[k].meas); *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
        bd->cols[k].name = bd->cols[k].owned;
    }
    qsort(bd->cols + base, bd->ncols - base, sizeof *bd->cols, cmp_col_name);
    return 0;
}

/* bd->points: the values of the selected devices, each device's scaled by the share of its time range that
 * [tmin, tmax] covers (an estimate of the work; it sizes the units and the cardinality). */
static void count_points(bind_data *bd)
{
    double sum = 0;
    for (size_t i = 0; i < bd->ndevs; i++) {
        tsf_dataset_device_info di;
        if (tsf_dataset_device(bd->ds, bd->devs[i], &di, NULL) || di.time_min > di.time_max) continue;
        uint64_t n = 0;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (!tsf_dataset_series(bd->ds, bd->devs[i], j, &si, NULL)) n += si.count;
        }
        int64_t lo = di.time_min > bd->tmin ? di.time_min : bd->tmin, hi = di.time_max < bd->tmax ? di.time_max : bd->tmax;
        if (lo > hi) continue;
        double span = (double)((uint64_t)di.time_max - (uint64_t)di.time_min) + 1;
        sum += (double)n * (((double)((uint64_t)hi - (uint64_t)lo) + 1) / span);
    }
    bd->points = (uint64_t)sum;
}

static void read_bind(duckdb_bind_info info)
{
    tsfx_paths paths;
    if (tsfx_get_paths(info, FN, &paths)) return;
    bind_data *bd = calloc(1, sizeof *bd);
    char *table = named_str(info, "table_name"), *filter = named_str(info, "filter");
    tsf_error e = {0};
    size_t cap = 0;
    if (!bd) {
        tsfx_bind_error(info, FN, "out of memory");
        goto fail;
    }
    bd->tmin = INT64_MIN;
    bd->tmax = INT64_MAX;
    named_i64(info, "start_time", &bd->tmin);
    named_i64(info, "end_time", &bd->tmax);
    if (named_i64(info, "parts", &bd->parts) && (bd->parts < 1 || bd->parts > MAX_PARTS)) {
        tsfx_bind_error(info, FN, "parts := %lld: from 1 to %d", (long long)bd->parts, MAX_PARTS);
        goto fail;
    }
    tsf_dataset_options dso;
    tsf_dataset_options_init(&dso);
    if (named_bool(info, "reader_cache", 1)) dso.reader_pool = tsfx_cache_pool(duckdb_bind_get_extra_info(info));
    if (tsf_dataset_open(&bd->ds, (const char *const *)paths.v, paths.n, &dso, &e)) {
        tsfx_bind_error(info, FN, "%s", e.message);
        goto fail;
    }
    if (filter && tsf_filter_parse(&bd->where, filter, &e)) {
        tsfx_bind_error(info, FN, "filter: %s", e.message);
        goto fail;
    }
    tsf_table_info ti;
    if (select_devices(info, bd, table, &ti)) goto fail;
    if (add_col(bd, &cap, (rcol){"time", "time", NULL, COL_TIME, 0, DUCKDB_TYPE_BIGINT, TSF_INT64})) goto oom;
    if (bd->table_model) {
        for (size_t c = 0; c < ti.ncolumns; c++) {
            const tsf_table_column *tc = &ti.columns[c];
            if (tc->category == TSF_COLUMN_TAG) {
                if (add_col(bd, &cap, (rcol){tc->name, tc->name, NULL, COL_TAG, bd->ntags++, DUCKDB_TYPE_VARCHAR, tc->type})) goto oom;
            } else if (tc->category == TSF_COLUMN_FIELD) {
                duckdb_type dt = tsfx_duck_type(tc->type);
                if (dt == DUCKDB_TYPE_INVALID) {
                    tsfx_bind_error(info, FN, "column %s of table %s has type code %d", tc->name, ti.name, (int)tc->type);
                    goto fail;
                }
                if (add_col(bd, &cap, (rcol){tc->name, tc->name, NULL, COL_FIELD, 0, dt, tc->type})) goto oom;
            } /* ATTRIBUTE columns hold no values in TsFile */
        }
    } else {
        if (add_col(bd, &cap, (rcol){"device", "device", NULL, COL_DEVICE, 0, DUCKDB_TYPE_VARCHAR, TSF_STRING})) goto oom;
        if (tree_columns(info, bd, &cap)) goto fail;
    }
    count_points(bd);
    for (size_t c = 0; c < bd->ncols; c++) {
        duckdb_logical_type lt = duckdb_create_logical_type(bd->cols[c].dt);
        duckdb_bind_add_result_column(info, bd->cols[c].name, lt);
        duckdb_destroy_logical_type(&lt);
    }
    duckdb_bind_set_cardinality(info, bd->points, false);
    duckdb_bind_set_bind_data(info, bd, bind_free);
    bd = NULL;
    goto done;
oom:
    tsfx_bind_error(info, FN, "out of memory");
fail:
    bind_free(bd);
done:
    free(table);
    free(filter);
    tsfx_paths_free(&paths);
}

static long find_q(const global_state *g, const char *name)
{
    for (size_t i = 0; i < g->nq; i++)
        if (!strcmp(g->qcols[i], name)) return (long)i;
    return -1;
}

/* Adds a hidden query column (read for the row set, not returned) unless the query has it already. */
static void add_hidden(global_state *g, const char *name)
{
    if (find_q(g, name) < 0) g->qcols[g->nq++] = name;
}

/* The query columns: the projected FIELD columns, then what keeps the table's rows the same whatever the
 * projection: a non-aligned device's rows are the times of all its series, so all are read; an aligned
 * device's rows are its time column, returned with any one of its series, so one series it holds in each
 * file is added where the projection has none. */
static int plan_columns(global_state *g)
{
    const bind_data *bd = g->bd;
    size_t nfield = 0;
    for (size_t c = 0; c < bd->ncols; c++) nfield += bd->cols[c].kind == COL_FIELD;
    if (!(g->qcols = malloc((nfield ? nfield : 1) * sizeof *g->qcols))) return -1;
    for (idx_t i = 0; i < g->nout; i++) {
        long c = g->out_col[i];
        if (c >= 0 && bd->cols[c].kind == COL_FIELD) {
            long q = find_q(g, bd->cols[c].meas);
            if (q < 0) {
                q = (long)g->nq;
                g->qcols[g->nq++] = bd->cols[c].meas;
            }
            g->field_q[c] = q;
        }
    }
    if (!bd->all_aligned) {
        for (size_t c = 0; c < bd->ncols; c++)
            if (bd->cols[c].kind == COL_FIELD) add_hidden(g, bd->cols[c].meas);
        return 0;
    }
    size_t nfiles = tsf_dataset_file_count(bd->ds);
    for (size_t i = 0; i < bd->ndevs; i++) {
        size_t d = bd->devs[i];
        tsf_dataset_device_info di;
        tsf_dataset_device(bd->ds, d, &di, NULL);
        size_t have = 0;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            tsf_dataset_series(bd->ds, d, j, &si, NULL);
            have += find_q(g, si.measurement) >= 0;
        }
        if (have == di.nseries && have) continue; /* every series it has is read */
        for (size_t f = 0; f < nfiles; f++) {
            const char *first = NULL;
            int covered = 0;
            for (size_t j = 0; j < di.nseries && !covered; j++) {
                tsf_dataset_series_info si;
                if (tsf_dataset_file_series(bd->ds, f, d, j, &si, NULL)) continue;
                if (!first) first = si.measurement;
                covered = find_q(g, si.measurement) >= 0;
            }
            if (first && !covered) add_hidden(g, first);
        }
    }
    return 0;
}

/* Cuts the devices x their time range into parts := units, else about one per POINTS_PER_UNIT points of the
 * selected devices (at most MAX_UNITS). */
static int plan_units(global_state *g)
{
    const bind_data *bd = g->bd;
    uint64_t want = bd->points / POINTS_PER_UNIT;
    size_t nu = bd->parts ? (size_t)bd->parts : want < 1 ? 1 : want > MAX_UNITS ? MAX_UNITS : (size_t)want;
    size_t ngroups = bd->ndevs < nu ? bd->ndevs : nu;
    if (ngroups == 0) ngroups = 1;
    size_t per = (bd->ndevs + ngroups - 1) / ngroups, nslices = (nu + ngroups - 1) / ngroups;
    if (per == 0) per = 1;
    if (!(g->units = calloc(ngroups * nslices, sizeof *g->units))) return -1;
    for (size_t d0 = 0; d0 < bd->ndevs || (d0 == 0 && bd->ndevs == 0); d0 += per) {
        size_t nd = bd->ndevs - d0 < per ? bd->ndevs - d0 : per;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = d0; i < d0 + nd; i++) {
            tsf_dataset_device_info di;
            tsf_dataset_device(bd->ds, bd->devs[i], &di, NULL);
            if (di.time_min < lo) lo = di.time_min;
            if (di.time_max > hi) hi = di.time_max;
        }
        if (lo < bd->tmin) lo = bd->tmin;
        if (hi > bd->tmax) hi = bd->tmax;
        if (lo > hi) { /* nothing of these devices in the range: one empty unit keeps the code simple */
            lo = bd->tmin;
            hi = bd->tmax;
        }
        uint64_t span = (uint64_t)hi - (uint64_t)lo; /* exact in unsigned arithmetic */
        uint64_t step = span / nslices + 1;
        int64_t s = lo;
        for (size_t k = 0; k < nslices; k++) {
            unit *u = &g->units[g->nunits++];
            u->dev0 = d0;
            u->ndev = nd;
            u->lo = s;
            uint64_t left = (uint64_t)hi - (uint64_t)s;
            if (k + 1 == nslices || left < step) {
                u->hi = hi;
                break;
            }
            u->hi = (int64_t)((uint64_t)s + step - 1);
            s = (int64_t)((uint64_t)s + step);
        }
        if (bd->ndevs == 0) break;
    }
    return 0;
}

static void read_init(duckdb_init_info info)
{
    const bind_data *bd = duckdb_init_get_bind_data(info);
    global_state *g = calloc(1, sizeof *g);
    if (!g) goto oom;
    g->bd = bd;
    g->nout = duckdb_init_get_column_count(info);
    g->out_col = malloc((g->nout ? g->nout : 1) * sizeof *g->out_col);
    g->field_q = malloc(bd->ncols * sizeof *g->field_q);
    g->devnames = malloc((bd->ndevs ? bd->ndevs : 1) * sizeof *g->devnames);
    if (!g->out_col || !g->field_q || !g->devnames) goto oom;
    for (idx_t i = 0; i < g->nout; i++) {
        idx_t c = duckdb_init_get_column_index(info, i);
        g->out_col[i] = c < bd->ncols ? (long)c : -1;
    }
    for (size_t c = 0; c < bd->ncols; c++) g->field_q[c] = -1;
    for (size_t i = 0; i < bd->ndevs; i++) {
        tsf_dataset_device_info di;
        tsf_dataset_device(bd->ds, bd->devs[i], &di, NULL);
        g->devnames[i] = di.name;
    }
    if (plan_columns(g) || plan_units(g)) goto oom;
    atomic_init(&g->next, 0);
    duckdb_init_set_max_threads(info, g->nunits);
    duckdb_init_set_init_data(info, g, global_free);
    return;
oom:
    global_free(g);
    duckdb_init_set_error(info, FN ": out of memory");
}

static void read_local_init(duckdb_init_info info)
{
    local_state *l = calloc(1, sizeof *l);
    if (!l) {
        duckdb_init_set_error(info, FN ": out of memory");
        return;
    }
    duckdb_init_set_init_data(info, l, local_free);
}

/* 1 when s[0..n) is UTF-8 (DuckDB's VARCHAR holds UTF-8 only). */
static int utf8_ok(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        if (n - i <= k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += k + 1;
    }
    return 1;
}

static void set_null(duckdb_vector v, idx_t at, size_t n)
{
    duckdb_vector_ensure_validity_writable(v);
    uint64_t *val = duckdb_vector_get_validity(v);
    for (size_t i = 0; i < n; i++) duckdb_validity_set_row_invalid(val, at + i);
}

/* Copies rows [r0, r0 + n) of batch column col into vector v at `at`, converted to DuckDB type dt. */
static int copy_field(duckdb_function_info info, const tsf_dataset_batch *b, const tsf_column_batch *col,
                      duckdb_type dt, duckdb_vector v, idx_t at, size_t r0, size_t n)
{
    if (col->type == TSF_VECTOR || common_type(tsfx_duck_type(col->type), dt) != dt) {
        /* the device lacks this column, or its type is another column's (<measurement>_<type>) */
        set_null(v, at, n);
        return 0;
    }
    void *out = duckdb_vector_get_data(v);
    const uint8_t *valid = col->validity;
    size_t sz = tsf_type_size(col->type);
    switch (col->type) {
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB:
        for (size_t i = 0; i < n; i++) {
            size_t r = r0 + i;
            if (!((valid[r >> 3] >> (r & 7)) & 1)) continue;
            const tsf_bytes *s = (const tsf_bytes *)col->values + r;
            if (col->type != TSF_BLOB && !utf8_ok(s->data, s->len)) {
                tsfx_function_error(info, FN, "%s of device %s at time %lld holds bytes that are not UTF-8",
                                    col->name, b->device_name, (long long)b->rows.times[r]);
                return -1;
            }
            duckdb_vector_assign_string_element_len(v, at + i, (const char *)s->data, s->len);
        }
        break;
    case TSF_DATE:
        for (size_t i = 0; i < n; i++) {
            size_t r = r0 + i;
            if (!((valid[r >> 3] >> (r & 7)) & 1)) continue;
            int32_t days;
            if (tsf_arrow_date_days(((const int32_t *)col->values)[r], &days)) {
                tsfx_function_error(info, FN, "%s of device %s at time %lld: %d is not a date (yyyyMMdd)", col->name,
                                    b->device_name, (long long)b->rows.times[r], (int)((const int32_t *)col->values)[r]);
                return -1;
            }
            ((int32_t *)out)[at + i] = days;
        }
        break;
    default:
        if (tsfx_duck_type(col->type) == dt) {
            memcpy((uint8_t *)out + at * sz, (const uint8_t *)col->values + r0 * sz, n * sz);
        } else if (dt == DUCKDB_TYPE_BIGINT && col->type == TSF_INT32) {
            for (size_t i = 0; i < n; i++) ((int64_t *)out)[at + i] = ((const int32_t *)col->values)[r0 + i];
        } else if (dt == DUCKDB_TYPE_DOUBLE && col->type == TSF_INT32) {
            for (size_t i = 0; i < n; i++) ((double *)out)[at + i] = ((const int32_t *)col->values)[r0 + i];
        } else if (dt == DUCKDB_TYPE_DOUBLE && col->type == TSF_FLOAT) {
            for (size_t i = 0; i < n; i++) ((double *)out)[at + i] = ((const float *)col->values)[r0 + i];
        } else {
            tsfx_function_error(info, FN, "%s of device %s is %s, read as %s", col->name, b->device_name,
                                tsf_type_name(col->type), tsfx_duck_type_name(dt));
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t r = r0 + i;
        if (!((valid[r >> 3] >> (r & 7)) & 1)) set_null(v, at + i, 1);
    }
    return 0;
}

/* Copies rows [r0, r0 + n) of the current batch into the output chunk at row `at`. */
static int copy_rows(duckdb_function_info info, const global_state *g, const tsf_dataset_batch *b,
                     duckdb_data_chunk out, idx_t at, size_t r0, size_t n)
{
    const bind_data *bd = g->bd;
    for (idx_t i = 0; i < g->nout; i++) {
        duckdb_vector v = duckdb_data_chunk_get_vector(out, i);
        long c = g->out_col[i];
        if (c < 0) {
            set_null(v, at, n);
            continue;
        }
        const rcol *rc = &bd->cols[c];
        switch (rc->kind) {
        case COL_TIME:
            memcpy((int64_t *)duckdb_vector_get_data(v) + at, b->rows.times + r0, n * sizeof(int64_t));
            break;
        case COL_DEVICE: {
            size_t len = strlen(b->device_name);
            for (size_t k = 0; k < n; k++) duckdb_vector_assign_string_element_len(v, at + k, b->device_name, len);
            break;
        }
        case COL_TAG: {
            tsf_bytes tag;
            if (tsf_dataset_device_segment(bd->ds, b->device, 1 + rc->tag, &tag, NULL) || !tag.data) {
                set_null(v, at, n);
                break;
            }
            if (!utf8_ok(tag.data, tag.len)) {
                tsfx_function_error(info, FN, "tag %s of device %s is not UTF-8", rc->name, b->device_name);
                return -1;
            }
            for (size_t k = 0; k < n; k++)
                duckdb_vector_assign_string_element_len(v, at + k, (const char *)tag.data, tag.len);
            break;
        }
        case COL_FIELD: {
            long q = g->field_q[c];
            if (q < 0 || (size_t)q >= b->rows.ncolumns) {
                tsfx_function_error(info, FN, "batch of device %s lacks column %s", b->device_name, rc->name);
                return -1;
            }
            if (copy_field(info, b, &b->rows.columns[q], rc->dt, v, at, r0, n)) return -1;
            break;
        }
        }
    }
    return 0;
}

/* Opens the query of unit u on this thread. */
static tsf_status open_unit(const global_state *g, const unit *u, tsf_dataset_query **q, tsf_error *e)
{
    const bind_data *bd = g->bd;
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.devices = g->devnames + u->dev0;
    o.ndevices = u->ndev;
    o.columns = g->qcols;
    o.ncolumns = g->nq;
    o.time_min = u->lo;
    o.time_max = u->hi;
    o.where = bd->where;
    o.threads = 1;
    o.batch_size = duckdb_vector_size();
    return tsf_dataset_query_open(bd->ds, &o, q, e);
}

static void read_scan(duckdb_function_info info, duckdb_data_chunk out)
{
    global_state *g = duckdb_function_get_init_data(info);
    local_state *l = duckdb_function_get_local_init_data(info);
    idx_t cap = duckdb_vector_size(), fill = 0;
    tsf_error e = {0};
    while (fill < cap) {
        if (l->b && l->row < l->b->rows.nrows) {
            size_t n = l->b->rows.nrows - l->row;
            if (n > cap - fill) n = cap - fill;
            if (copy_rows(info, g, l->b, out, fill, l->row, n)) return;
            fill += n;
            l->row += n;
            continue;
        }
        l->b = NULL;
        if (l->q) {
            if (tsf_dataset_query_next(l->q, &l->b, &e)) {
                tsfx_function_error(info, FN, "%s", e.message);
                return;
            }
            l->row = 0;
            if (!l->b) {
                tsf_dataset_query_close(l->q);
                l->q = NULL;
            }
            continue;
        }
        size_t u = atomic_fetch_add(&g->next, 1);
        if (u >= g->nunits) break;
        if (g->units[u].ndev == 0) continue;
        if (open_unit(g, &g->units[u], &l->q, &e)) {
            tsfx_function_error(info, FN, "%s", e.message);
            return;
        }
    }
    duckdb_data_chunk_set_size(out, fill);
}

int tsfx_register_read(duckdb_connection con, tsfx_cache *cache)
{
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, FN);
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_logical_type str = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type i64 = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_table_function_add_parameter(f, any);
    duckdb_table_function_add_named_parameter(f, "table_name", str);
    duckdb_table_function_add_named_parameter(f, "filter", str);
    duckdb_table_function_add_named_parameter(f, "start_time", i64);
    duckdb_table_function_add_named_parameter(f, "end_time", i64);
    duckdb_table_function_add_named_parameter(f, "parts", i64);
    duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    duckdb_table_function_add_named_parameter(f, "reader_cache", boolean);
    duckdb_destroy_logical_type(&boolean);
    tsfx_cache_ref(cache);
    duckdb_table_function_set_extra_info(f, cache, tsfx_cache_unref);
    duckdb_table_function_set_bind(f, read_bind);
    duckdb_table_function_set_init(f, read_init);
    duckdb_table_function_set_local_init(f, read_local_init);
    duckdb_table_function_set_function(f, read_scan);
    duckdb_table_function_supports_projection_pushdown(f, true);
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_logical_type(&any);
    duckdb_destroy_logical_type(&str);
    duckdb_destroy_logical_type(&i64);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}
