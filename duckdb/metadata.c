/*
 * metadata.c - tsfile_metadata(paths) and tsfile_schema(paths): what the files hold, from their index and
 * chunk/page headers, as rows (doc/duckdb.md). Both take what read_tsfile takes (a file, directory or glob,
 * or a list of them) and build every row at bind time: the files' metadata, not their data.
 */
#include <stdlib.h>
#include <string.h>

#include "ext.h"

typedef struct mcol {
    const char *name;
    duckdb_type type; /* VARCHAR, BIGINT, DOUBLE or BOOLEAN */
} mcol;

typedef struct mval {
    int is_null;
    int64_t i;
    double d;
    char *s;
} mval;

typedef struct mtable {
    const mcol *cols;
    size_t ncols;
    mval *v; /* rows x ncols */
    size_t nrows, cap;
    int oom;
} mtable;

typedef struct mscan {
    size_t next;
} mscan;

static void mtable_free(void *p)
{
    mtable *t = p;
    if (!t) return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->v[i].s);
    free(t->v);
    free(t);
}

/* A new row, all null; NULL when out of memory (t->oom set). */
static mval *row_add(mtable *t)
{
    if (t->nrows == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        mval *p = realloc(t->v, nc * t->ncols * sizeof *p);
        if (!p) {
            t->oom = 1;
            return NULL;
        }
        t->v = p;
        t->cap = nc;
    }
    mval *r = t->v + t->nrows++ * t->ncols;
    for (size_t c = 0; c < t->ncols; c++) r[c] = (mval){1, 0, 0, NULL};
    return r;
}

static void put_s(mtable *t, mval *v, const char *s)
{
    if (!s) return;
    if (!(v->s = strdup(s))) t->oom = 1;
    v->is_null = v->s == NULL;
}

static void put_i(mval *v, int64_t i)
{
    v->is_null = 0;
    v->i = i;
}

static void put_d(mval *v, double d)
{
    v->is_null = 0;
    v->d = d;
}

/* Opens the dataset of the path argument (for its list of files); NULL with the bind error set. */
static tsf_dataset *open_files(duckdb_bind_info info, const char *fn)
{
    tsfx_paths paths;
    if (tsfx_get_paths(info, fn, &paths)) return NULL;
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    if (tsf_dataset_open(&ds, (const char *const *)paths.v, paths.n, NULL, &e)) tsfx_bind_error(info, fn, "%s", e.message);
    tsfx_paths_free(&paths);
    return ds;
}

static void publish(duckdb_bind_info info, const char *fn, mtable *t)
{
    if (t->oom) {
        tsfx_bind_error(info, fn, "out of memory");
        mtable_free(t);
        return;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        duckdb_logical_type lt = duckdb_create_logical_type(t->cols[c].type);
        duckdb_bind_add_result_column(info, t->cols[c].name, lt);
        duckdb_destroy_logical_type(&lt);
    }
    duckdb_bind_set_cardinality(info, t->nrows, true);
    duckdb_bind_set_bind_data(info, t, mtable_free);
}

static const mcol META_COLS[] = {
    {"file_name", DUCKDB_TYPE_VARCHAR},   {"device", DUCKDB_TYPE_VARCHAR},       {"measurement", DUCKDB_TYPE_VARCHAR},
    {"aligned", DUCKDB_TYPE_BOOLEAN},     {"type", DUCKDB_TYPE_VARCHAR},         {"encoding", DUCKDB_TYPE_VARCHAR},
    {"compression", DUCKDB_TYPE_VARCHAR}, {"chunks", DUCKDB_TYPE_BIGINT},        {"pages", DUCKDB_TYPE_BIGINT},
    {"count", DUCKDB_TYPE_BIGINT},        {"start_time", DUCKDB_TYPE_BIGINT},    {"end_time", DUCKDB_TYPE_BIGINT},
    {"min", DUCKDB_TYPE_DOUBLE},          {"max", DUCKDB_TYPE_DOUBLE},           {"sum", DUCKDB_TYPE_DOUBLE},
    {"disk_bytes", DUCKDB_TYPE_BIGINT},   {"compressed_bytes", DUCKDB_TYPE_BIGINT},
    {"uncompressed_bytes", DUCKDB_TYPE_BIGINT},
};

/* Rows of tsfile_metadata for the file of reader r: one per device x series (tsf_reader_series_pages). */
static tsf_status metadata_rows(mtable *t, const char *path, tsf_reader *r, tsf_error *e)
{
    size_t nd = tsf_reader_device_count(r);
    for (size_t d = 0; d < nd && !t->oom; d++) {
        tsf_device_info di;
        tsf_status st = tsf_reader_device(r, d, &di, e);
        for (size_t j = 0; !st && j < di.nseries && !t->oom; j++) {
            tsf_series_info si;
            if ((st = tsf_reader_series_pages(r, d, j, &si, e))) break;
            mval *v = row_add(t);
            if (!v) break;
            put_s(t, &v[0], path);
            put_s(t, &v[1], di.name);
            put_s(t, &v[2], si.measurement);
            put_i(&v[3], di.aligned != 0);
            put_s(t, &v[4], tsf_type_name(si.type));
            put_s(t, &v[5], tsf_encoding_name(si.encoding));
            put_s(t, &v[6], tsf_compression_name(si.compression));
            put_i(&v[7], (int64_t)si.nchunks);
            put_i(&v[8], (int64_t)si.npages);
            put_i(&v[9], (int64_t)si.stats.count);
            if (si.stats.count) {
                put_i(&v[10], si.stats.start_time);
                put_i(&v[11], si.stats.end_time);
            }
            if (si.stats.has_values) {
                put_d(&v[12], si.stats.min);
                put_d(&v[13], si.stats.max);
                put_d(&v[14], si.stats.sum);
            }
            put_i(&v[15], (int64_t)si.disk_bytes);
            put_i(&v[16], (int64_t)si.page_bytes);
            put_i(&v[17], (int64_t)si.page_bytes_raw);
        }
        if (st) return st;
    }
    return TSF_OK;
}

/* Binds fn: the rows `rows` makes from each file of the path argument, opened one after the other. */
static void files_bind(duckdb_bind_info info, const char *fn, const mcol *cols, size_t ncols,
                       tsf_status (*rows)(mtable *t, const char *path, tsf_reader *r, tsf_error *e))
{
    tsf_dataset *ds = open_files(info, fn);
    if (!ds) return;
    mtable *t = calloc(1, sizeof *t);
    tsf_error e = {0};
    if (!t) {
        tsfx_bind_error(info, fn, "out of memory");
        tsf_dataset_close(ds);
        return;
    }
    t->cols = cols;
    t->ncols = ncols;
    tsf_status st = TSF_OK;
    for (size_t f = 0; f < tsf_dataset_file_count(ds) && !t->oom && !st; f++) {
        tsf_dataset_file_info fi;
        tsf_reader *r = NULL;
        if (!(st = tsf_dataset_file(ds, f, &fi, &e)) && !(st = tsf_reader_open(&r, fi.path, NULL, &e)))
            st = rows(t, fi.path, r, &e);
        tsf_reader_close(r);
    }
    tsf_dataset_close(ds);
    if (st) {
        tsfx_bind_error(info, fn, "%s", e.message);
        mtable_free(t);
        return;
    }
    publish(info, fn, t);
}

static void metadata_bind(duckdb_bind_info info)
{
    files_bind(info, "tsfile_metadata", META_COLS, sizeof META_COLS / sizeof META_COLS[0], metadata_rows);
}

static const mcol SCHEMA_COLS[] = {
    {"file_name", DUCKDB_TYPE_VARCHAR},   {"table_name", DUCKDB_TYPE_VARCHAR}, {"device", DUCKDB_TYPE_VARCHAR},
    {"column_name", DUCKDB_TYPE_VARCHAR}, {"category", DUCKDB_TYPE_VARCHAR},   {"tsfile_type", DUCKDB_TYPE_VARCHAR},
    {"duckdb_type", DUCKDB_TYPE_VARCHAR},
};

static const char *category_name(tsf_column_category c)
{
    return c == TSF_COLUMN_TAG ? "TAG" : c == TSF_COLUMN_FIELD ? "FIELD" : "ATTRIBUTE";
}

static void schema_row(mtable *t, const char *file, const char *table, const char *device, const char *col,
                       const char *category, tsf_type type)
{
    mval *v = row_add(t);
    if (!v) return;
    put_s(t, &v[0], file);
    put_s(t, &v[1], table);
    put_s(t, &v[2], device);
    put_s(t, &v[3], col);
    put_s(t, &v[4], category);
    put_s(t, &v[5], tsf_type_name(type));
    put_s(t, &v[6], tsfx_duck_type_name(tsfx_duck_type(type)));
}

/* Rows of tsfile_schema for the file of reader r: one per table column (table model) or device x measurement
 * (tree model). */
static tsf_status schema_rows(mtable *t, const char *path, tsf_reader *r, tsf_error *e)
{
    size_t nt = tsf_reader_table_count(r);
    for (size_t k = 0; k < nt && !t->oom; k++) {
        tsf_table_info ti;
        tsf_status st = tsf_reader_table(r, k, &ti, e);
        if (st) return st;
        for (size_t c = 0; c < ti.ncolumns; c++)
            schema_row(t, path, ti.name, NULL, ti.columns[c].name, category_name(ti.columns[c].category),
                       ti.columns[c].type);
        for (size_t d = ti.first_device; !ti.ncolumns && d < ti.first_device + ti.ndevices; d++) {
            tsf_device_info di;
            if ((st = tsf_reader_device(r, d, &di, e))) return st;
            for (size_t j = 0; j < di.nseries; j++) {
                tsf_series_info si;
                if ((st = tsf_reader_series(r, d, j, &si, e))) return st;
                schema_row(t, path, ti.name, di.name, si.measurement, "MEASUREMENT", si.type);
            }
        }
    }
    return TSF_OK;
}

static void schema_bind(duckdb_bind_info info)
{
    files_bind(info, "tsfile_schema", SCHEMA_COLS, sizeof SCHEMA_COLS / sizeof SCHEMA_COLS[0], schema_rows);
}

static void mscan_init(duckdb_init_info info)
{
    mscan *s = calloc(1, sizeof *s);
    if (!s) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_init_data(info, s, free);
}

static void mscan_fn(duckdb_function_info info, duckdb_data_chunk out)
{
    const mtable *t = duckdb_function_get_bind_data(info);
    mscan *s = duckdb_function_get_init_data(info);
    idx_t cap = duckdb_vector_size(), n = 0;
    for (; n < cap && s->next < t->nrows; n++, s->next++) {
        const mval *row = t->v + s->next * t->ncols;
        for (size_t c = 0; c < t->ncols; c++) {
            duckdb_vector v = duckdb_data_chunk_get_vector(out, c);
            if (row[c].is_null) {
                duckdb_vector_ensure_validity_writable(v);
                duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), n);
                continue;
            }
            void *data = duckdb_vector_get_data(v);
            switch (t->cols[c].type) {
            case DUCKDB_TYPE_VARCHAR: duckdb_vector_assign_string_element(v, n, row[c].s); break;
            case DUCKDB_TYPE_BIGINT: ((int64_t *)data)[n] = row[c].i; break;
            case DUCKDB_TYPE_DOUBLE: ((double *)data)[n] = row[c].d; break;
            case DUCKDB_TYPE_BOOLEAN: ((bool *)data)[n] = row[c].i != 0; break;
            default: break;
            }
        }
    }
    duckdb_data_chunk_set_size(out, n);
}

static int register_one(duckdb_connection con, const char *name, duckdb_table_function_bind_t bind)
{
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, name);
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_table_function_add_parameter(f, any);
    duckdb_table_function_set_bind(f, bind);
    duckdb_table_function_set_init(f, mscan_init);
    duckdb_table_function_set_function(f, mscan_fn);
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_logical_type(&any);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}

static const mcol CACHE_COLS[] = {
    {"max_readers", DUCKDB_TYPE_BIGINT}, {"open", DUCKDB_TYPE_BIGINT},   {"kept", DUCKDB_TYPE_BIGINT},
    {"hits", DUCKDB_TYPE_BIGINT},        {"misses", DUCKDB_TYPE_BIGINT}, {"stale", DUCKDB_TYPE_BIGINT},
    {"racy", DUCKDB_TYPE_BIGINT},        {"evicted", DUCKDB_TYPE_BIGINT},
};

/* tsfile_reader_cache(max_readers := n, clear := true): sets the bound / closes the kept readers first, then
 * one row of the cache's counters. */
static void cache_bind(duckdb_bind_info info)
{
    static const char *fn = "tsfile_reader_cache";
    tsf_reader_pool *p = tsfx_cache_pool(duckdb_bind_get_extra_info(info));
    duckdb_value v = duckdb_bind_get_named_parameter(info, "max_readers");
    if (v && !duckdb_is_null_value(v)) {
        int64_t m = duckdb_get_int64(v);
        if (m < 0) {
            duckdb_destroy_value(&v);
            tsfx_bind_error(info, fn, "max_readers := %lld: 0 or more", (long long)m);
            return;
        }
        tsf_reader_pool_set_max(p, (size_t)m);
    }
    duckdb_destroy_value(&v);
    v = duckdb_bind_get_named_parameter(info, "clear");
    if (v && !duckdb_is_null_value(v) && duckdb_get_bool(v)) tsf_reader_pool_clear(p);
    duckdb_destroy_value(&v);
    tsf_reader_pool_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    tsf_error e = {0};
    mtable *t = calloc(1, sizeof *t);
    if (!t || tsf_reader_pool_get_stats(p, &st, &e)) {
        free(t);
        tsfx_bind_error(info, fn, "%s", t ? e.message : "out of memory");
        return;
    }
    t->cols = CACHE_COLS;
    t->ncols = sizeof CACHE_COLS / sizeof CACHE_COLS[0];
    mval *r = row_add(t);
    if (r) {
        const uint64_t n[] = {st.max_readers, st.open, st.kept, st.hits, st.misses, st.stale, st.racy, st.evicted};
        for (size_t c = 0; c < t->ncols; c++) put_i(&r[c], (int64_t)n[c]);
    }
    publish(info, fn, t);
}

static int register_cache(duckdb_connection con, tsfx_cache *cache)
{
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, "tsfile_reader_cache");
    duckdb_logical_type i64 = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    duckdb_table_function_add_named_parameter(f, "max_readers", i64);
    duckdb_table_function_add_named_parameter(f, "clear", boolean);
    tsfx_cache_ref(cache);
    duckdb_table_function_set_extra_info(f, cache, tsfx_cache_unref);
    duckdb_table_function_set_bind(f, cache_bind);
    duckdb_table_function_set_init(f, mscan_init);
    duckdb_table_function_set_function(f, mscan_fn);
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_logical_type(&i64);
    duckdb_destroy_logical_type(&boolean);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}

int tsfx_register_metadata(duckdb_connection con, tsfx_cache *cache)
{
    return register_one(con, "tsfile_metadata", metadata_bind) || register_one(con, "tsfile_schema", schema_bind) ||
           register_cache(con, cache);
}
