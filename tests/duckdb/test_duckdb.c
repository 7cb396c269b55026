/*
 * test_duckdb.c - the DuckDB extension (duckdb/, doc/duckdb.md) through libduckdb.so: a database opened with
 * allow_unsigned_extensions LOADs build/tsfile.duckdb_extension, then
 *  - every golden file of tests/data (tsfile-java, tsfile-cpp) read with read_tsfile (each table of a
 *    table-model file) equals its expected CSV, value for value (raw bits of floats), for several part counts
 *    (parts :=) and thread counts;
 *  - projections, start/end and filter := give the rows of the library's own query of the same file (the
 *    table's rows: every column, the time range), projected; count(*) equals the library's row count;
 *  - a dataset of several files (list and glob) equals the files read one by one;
 *  - COPY ... TO Parquet and back gives every value back;
 *  - damaged files (a file cut short, a flipped byte, every prefix of a small file) give a DuckDB error that
 *    carries the library's message, never a crash;
 *  - tsfile_metadata and tsfile_schema agree with the reader's metadata;
 *  - the reader cache (tsfile_reader_cache) gives the answers of reader_cache := false, on 2 threads and from
 *    two connections at once, stays within its bound over more files than it keeps, and never serves a file
 *    rewritten under its path (renamed over, or rewritten in place with the same size and mtime).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/golden_csv.h"
#include <duckdb.h>
#include "test.h"

static duckdb_database g_db;
static duckdb_connection g_con;

static int open_db(void)
{
    duckdb_config cfg;
    char *err = NULL;
    if (duckdb_create_config(&cfg) != DuckDBSuccess) return -1;
    duckdb_set_config(cfg, "allow_unsigned_extensions", "true");
    duckdb_state st = duckdb_open_ext(NULL, &g_db, cfg, &err);
    duckdb_destroy_config(&cfg);
    if (st != DuckDBSuccess) {
        fprintf(stderr, "duckdb_open_ext: %s\n", err ? err : "?");
        duckdb_free(err);
        return -1;
    }
    if (duckdb_connect(g_db, &g_con) != DuckDBSuccess) return -1;
    duckdb_result r;
    char sql[1200];
    snprintf(sql, sizeof sql, "LOAD '%s'", TSF_DUCKDB_EXTENSION);
    if (duckdb_query(g_con, sql, &r) != DuckDBSuccess) {
        fprintf(stderr, "%s: %s\n", sql, duckdb_result_error(&r));
        duckdb_destroy_result(&r);
        return -1;
    }
    duckdb_destroy_result(&r);
    return 0;
}

/* Runs sql; 0 with *r to destroy, or -1 (error printed unless quiet, *r destroyed, the message in err). */
static int query(const char *sql, duckdb_result *r, char *err, size_t errcap, int quiet)
{
    if (duckdb_query(g_con, sql, r) == DuckDBSuccess) return 0;
    const char *m = duckdb_result_error(r);
    if (!quiet) fprintf(stderr, "query failed: %.300s\n  %s\n", sql, m ? m : "?");
    if (err) snprintf(err, errcap, "%s", m ? m : "");
    duckdb_destroy_result(r);
    return -1;
}

static int exec(const char *sql)
{
    duckdb_result r;
    if (query(sql, &r, NULL, 0, 0)) return -1;
    duckdb_destroy_result(&r);
    return 0;
}

static int64_t scalar_i64(const char *sql)
{
    duckdb_result r;
    if (query(sql, &r, NULL, 0, 0)) return -1;
    int64_t v = duckdb_value_int64(&r, 0, 0);
    duckdb_destroy_result(&r);
    return v;
}

/* ---- a result as strings ---- */

/* days since 1970-01-01 -> yyyyMMdd (the civil calendar, eras of 400 years) */
static int32_t days_to_yyyymmdd(int32_t days)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    return (int32_t)(y * 10000 + m * 100 + d);
}

/* Cell (col, row) of a chunk in the TsFile C representation of `type` (golden_csv.h's gcsv_format renders it);
 * 0 when null. bytes borrow from the chunk. */
static int cell(duckdb_data_chunk ch, idx_t col, idx_t row, duckdb_type dt, tsf_type type, void *out)
{
    duckdb_vector v = duckdb_data_chunk_get_vector(ch, col);
    uint64_t *valid = duckdb_vector_get_validity(v);
    if (valid && !duckdb_validity_row_is_valid(valid, row)) return 0;
    void *data = duckdb_vector_get_data(v);
    switch (dt) {
    case DUCKDB_TYPE_BOOLEAN: *(uint8_t *)out = ((bool *)data)[row]; break;
    case DUCKDB_TYPE_INTEGER:
        if (type == TSF_INT32) *(int32_t *)out = ((int32_t *)data)[row];
        else if (type == TSF_INT64) *(int64_t *)out = ((int32_t *)data)[row];
        else *(double *)out = ((int32_t *)data)[row];
        break;
    case DUCKDB_TYPE_DATE: *(int32_t *)out = days_to_yyyymmdd(((int32_t *)data)[row]); break;
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP: *(int64_t *)out = ((int64_t *)data)[row]; break;
    case DUCKDB_TYPE_FLOAT:
        if (type == TSF_DOUBLE) *(double *)out = ((float *)data)[row];
        else *(float *)out = ((float *)data)[row];
        break;
    case DUCKDB_TYPE_DOUBLE: *(double *)out = ((double *)data)[row]; break;
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB: {
        duckdb_string_t *s = (duckdb_string_t *)data + row;
        tsf_bytes *b = out;
        b->len = duckdb_string_t_length(*s);
        b->data = (const uint8_t *)duckdb_string_t_data(s);
        break;
    }
    default: return -1;
    }
    return 1;
}

/* The TsFile type gcsv_format renders a DuckDB column of type dt as, when the files' type is not known. */
static tsf_type plain_type(duckdb_type dt)
{
    switch (dt) {
    case DUCKDB_TYPE_BOOLEAN: return TSF_BOOLEAN;
    case DUCKDB_TYPE_INTEGER: return TSF_INT32;
    case DUCKDB_TYPE_FLOAT: return TSF_FLOAT;
    case DUCKDB_TYPE_DOUBLE: return TSF_DOUBLE;
    case DUCKDB_TYPE_VARCHAR: return TSF_STRING;
    case DUCKDB_TYPE_BLOB: return TSF_BLOB;
    case DUCKDB_TYPE_DATE: return TSF_DATE;
    default: return TSF_INT64;
    }
}

/* Every row of a result as one string (cells rendered by gcsv_format with raw float bits, NULL as \N,
 * separated by \x1f) into t's pool (rows[].val), then sorted: results compare as multisets of rows. */
static int result_rows(duckdb_result *r, gcsv *t)
{
    idx_t nc = duckdb_column_count(r);
    gcsv_buf fmt = {0}, line = {0};
    duckdb_data_chunk ch;
    while ((ch = duckdb_fetch_chunk(*r)) != NULL) {
        idx_t n = duckdb_data_chunk_get_size(ch);
        for (idx_t i = 0; i < n; i++) {
            line.len = 0;
            gcsv_put(&line, "", 0);
            for (idx_t c = 0; c < nc; c++) {
                duckdb_type dt = duckdb_column_type(r, c);
                union {
                    int64_t i;
                    double d;
                    tsf_bytes b;
                } v;
                tsf_type tt = plain_type(dt);
                int k = cell(ch, c, i, dt, tt, &v);
                if (k < 0) {
                    duckdb_destroy_data_chunk(&ch);
                    free(fmt.p);
                    free(line.p);
                    return -1;
                }
                if (k) gcsv_format(&fmt, tt, &v, 0, 1);
                gcsv_put(&line, k ? fmt.p : "\\N", k ? fmt.len : 2);
                gcsv_put(&line, "\x1f", 1);
            }
            gcsv_row *row = gcsv_add(t);
            memset(row, 0, sizeof *row);
            row->val = gcsv_str(t, line.p, line.len);
        }
        duckdb_destroy_data_chunk(&ch);
    }
    free(fmt.p);
    free(line.p);
    return 0;
}

static const char *g_sort_pool;
static int cmp_val(const void *a, const void *b)
{
    return strcmp(g_sort_pool + ((const gcsv_row *)a)->val, g_sort_pool + ((const gcsv_row *)b)->val);
}

static void sort_vals(gcsv *t)
{
    g_sort_pool = t->pool;
    if (t->n) qsort(t->rows, t->n, sizeof *t->rows, cmp_val);
}

/* 0 when both hold the same rows; else -1 and the first difference printed under `what`. */
static int same_rows(gcsv *a, gcsv *b, const char *what)
{
    sort_vals(a);
    sort_vals(b);
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(gcsv_s(a, a->rows[i].val), gcsv_s(b, b->rows[i].val))) {
            fprintf(stderr, "%s: row %zu differs:\n  %.300s\n  %.300s\n", what, i, gcsv_s(a, a->rows[i].val),
                    gcsv_s(b, b->rows[i].val));
            return -1;
        }
    }
    if (a->n != b->n) {
        fprintf(stderr, "%s: %zu rows vs %zu\n", what, a->n, b->n);
        return -1;
    }
    return 0;
}

/* The rows of sql as sorted strings; -1 when the query fails. */
static int sql_rows(const char *sql, gcsv *t)
{
    duckdb_result r;
    if (query(sql, &r, NULL, 0, 0)) return -1;
    int rc = result_rows(&r, t);
    duckdb_destroy_result(&r);
    return rc;
}

/* ---- golden files ---- */

/* A table-model device's key: its tag values (segments 1..; a dropped trailing tag is null). */
static void tag_key(gcsv_buf *k, const tsf_bytes *tags, size_t ntags)
{
    k->len = 0;
    gcsv_put(k, "", 0);
    for (size_t i = 0; i < ntags; i++) {
        if (!tags[i].data) {
            gcsv_put(k, "\x01", 1);
        } else {
            gcsv_put(k, "\x02", 1);
            gcsv_put(k, (const char *)tags[i].data, tags[i].len);
            gcsv_put(k, "\x03", 1);
        }
    }
}

/* The DuckDB type read_tsfile gives a TsFile type (doc/duckdb.md) and whether a column of DuckDB type dt
 * holds values of TsFile type t (INTEGER in BIGINT; INTEGER and FLOAT in DOUBLE). */
static duckdb_type duck_of(tsf_type t)
{
    static const duckdb_type map[] = {
        [TSF_BOOLEAN] = DUCKDB_TYPE_BOOLEAN, [TSF_INT32] = DUCKDB_TYPE_INTEGER, [TSF_INT64] = DUCKDB_TYPE_BIGINT,
        [TSF_FLOAT] = DUCKDB_TYPE_FLOAT,     [TSF_DOUBLE] = DUCKDB_TYPE_DOUBLE, [TSF_TEXT] = DUCKDB_TYPE_VARCHAR,
        [TSF_TIMESTAMP] = DUCKDB_TYPE_BIGINT, [TSF_DATE] = DUCKDB_TYPE_DATE,    [TSF_BLOB] = DUCKDB_TYPE_BLOB,
        [TSF_STRING] = DUCKDB_TYPE_VARCHAR};
    return (size_t)t < sizeof map / sizeof map[0] ? map[t] : DUCKDB_TYPE_INVALID;
}

static int holds(duckdb_type dt, tsf_type t)
{
    duckdb_type d = duck_of(t);
    return d == dt || (dt == DUCKDB_TYPE_BIGINT && d == DUCKDB_TYPE_INTEGER) ||
           (dt == DUCKDB_TYPE_DOUBLE && (d == DUCKDB_TYPE_INTEGER || d == DUCKDB_TYPE_FLOAT));
}

/* The series of device dev that tree-model column `col` (of DuckDB type dt) shows: the measurement of that
 * name, or, for a measurement split by type, <measurement>_<type>. 0 with *si and meas, or -1. */
static int series_of_column(tsf_reader *r, size_t dev, const char *col, duckdb_type dt, char *meas, size_t cap,
                            tsf_series_info *si)
{
    size_t j;
    snprintf(meas, cap, "%s", col);
    if (!tsf_reader_find_series(r, dev, meas, &j, NULL) && !tsf_reader_series(r, dev, j, si, NULL))
        return holds(dt, si->type) ? 0 : -1;
    char *us = strrchr(meas, '_');
    if (!us) return -1;
    *us = '\0';
    if (tsf_reader_find_series(r, dev, meas, &j, NULL) || tsf_reader_series(r, dev, j, si, NULL)) return -1;
    return holds(dt, si->type) ? 0 : -1;
}

/* Adds the golden rows (device, measurement, time, type, value) of one read_tsfile result. r: the reader of
 * the same file, for each device's series types and a table device's name from its tags. */
static int golden_from_result(duckdb_result *res, tsf_reader *r, const tsf_table_info *ti, int java, gcsv *out)
{
    idx_t nc = duckdb_column_count(res);
    size_t ntags = 0;
    if (ti)
        for (size_t c = 0; c < ti->ncolumns; c++) ntags += ti->columns[c].category == TSF_COLUMN_TAG;
    idx_t first_value = ti ? 1 + ntags : 2;
    gcsv keys = {0}; /* table model: val = tag key, dev = reader device index */
    gcsv_buf key = {0}, fmt = {0};
    if (ti) {
        for (size_t d = ti->first_device; d < ti->first_device + ti->ndevices; d++) {
            tsf_device_info di;
            tsf_reader_device(r, d, &di, NULL);
            tsf_bytes tags[64] = {{0}};
            for (size_t k = 0; k < ntags && k < 64; k++)
                if (1 + k < di.nsegments) tsf_reader_device_segment(r, d, 1 + k, &tags[k], NULL);
            tag_key(&key, tags, ntags);
            gcsv_row *row = gcsv_add(&keys);
            row->val = gcsv_str(&keys, key.p, key.len);
            row->dev = d;
        }
    }
    int rc = 0;
    duckdb_data_chunk ch;
    while (!rc && (ch = duckdb_fetch_chunk(*res)) != NULL) {
        idx_t n = duckdb_data_chunk_get_size(ch);
        for (idx_t i = 0; i < n && !rc; i++) {
            int64_t time = 0;
            cell(ch, 0, i, DUCKDB_TYPE_BIGINT, TSF_INT64, &time);
            size_t dev = (size_t)-1;
            if (ti) {
                tsf_bytes tags[64] = {{0}};
                for (size_t k = 0; k < ntags && k < 64; k++)
                    if (!cell(ch, 1 + k, i, DUCKDB_TYPE_VARCHAR, TSF_STRING, &tags[k])) tags[k].data = NULL;
                tag_key(&key, tags, ntags);
                for (size_t k = 0; k < keys.n; k++)
                    if (!strcmp(gcsv_s(&keys, keys.rows[k].val), key.p)) dev = keys.rows[k].dev;
            } else {
                tsf_bytes name = {0};
                cell(ch, 1, i, DUCKDB_TYPE_VARCHAR, TSF_STRING, &name);
                char buf[1024];
                snprintf(buf, sizeof buf, "%.*s", (int)name.len, (const char *)name.data);
                if (tsf_reader_find_device(r, buf, &dev, NULL)) dev = (size_t)-1;
            }
            if (dev == (size_t)-1) {
                fprintf(stderr, "a row names no device of the file\n");
                rc = -1;
                break;
            }
            tsf_device_info di;
            tsf_reader_device(r, dev, &di, NULL);
            for (idx_t c = first_value; c < nc; c++) {
                const char *col = duckdb_column_name(res, c);
                char meas[512];
                tsf_series_info si;
                if (series_of_column(r, dev, col, duckdb_column_type(res, c), meas, sizeof meas, &si)) {
                    /* a measurement of another device (tree model) or a column without chunks here: null */
                    union {
                        int64_t i;
                        tsf_bytes b;
                    } v;
                    if (cell(ch, c, i, duckdb_column_type(res, c), TSF_INT64, &v)) {
                        fprintf(stderr, "device %s has no series for column %s but a value\n", di.name, col);
                        rc = -1;
                    }
                    continue;
                }
                union {
                    int64_t i;
                    double d;
                    tsf_bytes b;
                } v;
                int k = cell(ch, c, i, duckdb_column_type(res, c), si.type, &v);
                if (k < 0) rc = -1;
                if (k <= 0) continue;
                gcsv_format(&fmt, si.type, &v, 0, java);
                gcsv_row *row = gcsv_add(out);
                const char *tn = tsf_type_name(si.type);
                row->dev = gcsv_str(out, di.name, strlen(di.name));
                row->meas = gcsv_str(out, meas, strlen(meas));
                row->time = time;
                row->type = gcsv_str(out, java ? tn : "", java ? strlen(tn) : 0);
                row->val = gcsv_str(out, fmt.p, fmt.len);
            }
        }
        duckdb_destroy_data_chunk(&ch);
    }
    gcsv_free(&keys);
    free(key.p);
    free(fmt.p);
    return rc;
}

/* Reads path through read_tsfile (each table-model table apart) into golden rows; extra: named parameters. */
static int golden_read(const char *path, int java, const char *extra, gcsv *out)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    if (tsf_reader_open(&r, path, NULL, &e)) {
        fprintf(stderr, "%s: %s\n", path, e.message);
        return -1;
    }
    int rc = 0, tree_done = 0;
    size_t nt = tsf_reader_table_count(r);
    for (size_t t = 0; t < nt && !rc; t++) {
        tsf_table_info ti;
        tsf_reader_table(r, t, &ti, NULL);
        if (!ti.ncolumns && tree_done) continue;
        char sql[2048];
        if (ti.ncolumns)
            snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s', table_name := '%s'%s)", path, ti.name, extra);
        else
            snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s'%s)", path, extra);
        tree_done |= !ti.ncolumns;
        duckdb_result res;
        if (query(sql, &res, NULL, 0, 0)) {
            rc = -1;
            break;
        }
        rc = golden_from_result(&res, r, ti.ncolumns ? &ti : NULL, java, out);
        duckdb_destroy_result(&res);
    }
    if (nt == 0) { /* a file without devices: still a table of no rows */
        char sql[2048];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM read_tsfile('%s'%s)", path, extra);
        if (scalar_i64(sql) != 0) rc = -1;
    }
    tsf_reader_close(r);
    return rc;
}

static int golden_compare(gcsv *got, gcsv *want, char *why, size_t cap)
{
    gcsv_sort(got);
    size_t n = got->n < want->n ? got->n : want->n;
    for (size_t i = 0; i < n; i++) {
        const gcsv_row *x = &got->rows[i], *y = &want->rows[i];
        if (x->time == y->time && !strcmp(gcsv_s(got, x->dev), gcsv_s(want, y->dev)) &&
            !strcmp(gcsv_s(got, x->meas), gcsv_s(want, y->meas)) && !strcmp(gcsv_s(got, x->type), gcsv_s(want, y->type)) &&
            !strcmp(gcsv_s(got, x->val), gcsv_s(want, y->val)))
            continue;
        snprintf(why, cap, "row %zu: expected %s,%s,%" PRId64 ",%s,%.60s got %s,%s,%" PRId64 ",%s,%.60s", i,
                 gcsv_s(want, y->dev), gcsv_s(want, y->meas), y->time, gcsv_s(want, y->type), gcsv_s(want, y->val),
                 gcsv_s(got, x->dev), gcsv_s(got, x->meas), x->time, gcsv_s(got, x->type), gcsv_s(got, x->val));
        return -1;
    }
    if (got->n != want->n) {
        snprintf(why, cap, "%zu values read, %zu expected", got->n, want->n);
        return -1;
    }
    return 0;
}

static size_t golden_dir(const char *sub, int java)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/%s", tsf_test_data_dir(), sub);
    size_t n = 0;
    char **names = gcsv_list_tsfiles(dir, &n);
    CHECK(names != NULL);
    static const char *const extras[] = {"", ", parts := 7", ", parts := 64"};
    for (size_t i = 0; names && i < n; i++) {
        char path[1200], csv[1300], why[700] = "";
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(csv, sizeof csv, "%s.csv", path);
        if (!java) snprintf(csv, sizeof csv, "%s/%.*s.csv", dir, (int)(strlen(names[i]) - 7), names[i]);
        if (access(csv, R_OK)) snprintf(csv, sizeof csv, "%s.csv.gz", path);
        gcsv want = {0};
        int fail = gcsv_load(&want, csv, java, why, sizeof why) != 0;
        gcsv_sort(&want);
        /* threads 1 for the first setting, 4 for the others */
        for (size_t x = 0; x < 3 && !fail; x++) {
            exec(x == 0 ? "SET threads = 1" : "SET threads = 4");
            gcsv got = {0};
            if (golden_read(path, java, extras[x], &got)) {
                snprintf(why, sizeof why, "read_tsfile failed%s", extras[x]);
                fail = 1;
            } else if (golden_compare(&got, &want, why, sizeof why)) {
                fail = 1;
            }
            gcsv_free(&got);
        }
        if (fail) {
            printf("  FAIL %s: %s\n", names[i], why);
            tsf_test_failures++;
        }
        gcsv_free(&want);
        free(names[i]);
    }
    free(names);
    exec("RESET threads");
    return n;
}

static void test_golden(void)
{
    size_t n = golden_dir("tsfile-java", 1);
    CHECK(n >= 87);
    CHECK_EQ_INT(golden_dir("tsfile-cpp", 0), 1);
    printf("golden: %zu tsfile-java files + tsfile-cpp read through read_tsfile\n", n);
}

/* ---- projections, time ranges and filters against the library's query ---- */

static const char *java_file(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%.900s/tsfile-java/%s", tsf_test_data_dir(), name);
    return buf;
}

/* The library's rows of path (table: a table-model table, or NULL for every tree device) for [tmin, tmax] and
 * filter (NULL = none), every column queried, rendered as result_rows renders `cols` of read_tsfile: "time",
 * "device", a TAG column (tag k = segment 1 + k) or a series name. */
typedef struct pcol {
    const char *name;
    int tag;          /* TAG number, -1 otherwise */
    const char *meas; /* a measurement split by type (<meas>_<type>): its name, and the DuckDB type held */
    duckdb_type dt;
} pcol;

static int library_rows(const char *path, const char *table, int64_t tmin, int64_t tmax, const char *filter,
                        const pcol *cols, size_t ncols, gcsv *out)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_filter *f = NULL;
    if (tsf_reader_open(&r, path, NULL, &e) || (filter && tsf_filter_parse(&f, filter, &e))) {
        fprintf(stderr, "%s\n", e.message);
        tsf_reader_close(r);
        return -1;
    }
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.table = table;
    o.time_min = tmin;
    o.time_max = tmax;
    o.where = f;
    tsf_query *q = NULL;
    const tsf_batch *b;
    gcsv_buf fmt = {0}, line = {0};
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    while (!st && !(st = tsf_query_next(q, &b, &e)) && b) {
        tsf_device_info di;
        tsf_reader_device(r, b->device, &di, NULL);
        for (size_t i = 0; i < b->nrows; i++) {
            line.len = 0;
            gcsv_put(&line, "", 0);
            for (size_t c = 0; c < ncols; c++) {
                int have = 0;
                if (!strcmp(cols[c].name, "time")) {
                    gcsv_format(&fmt, TSF_INT64, &b->times[i], 0, 1);
                    have = 1;
                } else if (!strcmp(cols[c].name, "device")) {
                    tsf_bytes s = {(const uint8_t *)di.name, strlen(di.name)};
                    gcsv_format(&fmt, TSF_STRING, &s, 0, 1);
                    have = 1;
                } else if (cols[c].tag >= 0) {
                    tsf_bytes s = {0};
                    if ((size_t)cols[c].tag + 1 < di.nsegments)
                        tsf_reader_device_segment(r, b->device, (size_t)cols[c].tag + 1, &s, NULL);
                    if (s.data) gcsv_format(&fmt, TSF_STRING, &s, 0, 1);
                    have = s.data != NULL;
                } else {
                    for (size_t k = 0; k < b->ncolumns; k++) {
                        const tsf_column_batch *cb = &b->columns[k];
                        if (strcmp(cb->name, cols[c].meas ? cols[c].meas : cols[c].name) || cb->type == TSF_VECTOR) continue;
                        if (cols[c].meas && !holds(cols[c].dt, cb->type)) continue;
                        if (!((cb->validity[i >> 3] >> (i & 7)) & 1)) break;
                        tsf_type t = cb->type == TSF_TEXT ? TSF_STRING : cb->type;
                        if (t == TSF_TIMESTAMP) t = TSF_INT64;
                        gcsv_format(&fmt, t, cb->values, i, 1);
                        have = 1;
                    }
                }
                gcsv_put(&line, have ? fmt.p : "\\N", have ? fmt.len : 2);
                gcsv_put(&line, "\x1f", 1);
            }
            gcsv_row *row = gcsv_add(out);
            memset(row, 0, sizeof *row);
            row->val = gcsv_str(out, line.p, line.len);
        }
    }
    if (st) fprintf(stderr, "library query: %s\n", e.message);
    tsf_query_close(q);
    tsf_filter_free(f);
    tsf_reader_close(r);
    free(fmt.p);
    free(line.p);
    return st ? -1 : 0;
}

/* One case: SELECT <cols> FROM read_tsfile(path, table, start, end, filter) vs the library, at parts 1 and 5. */
static void projection_case(const char *path, const char *table, const pcol *cols, size_t ncols, int64_t tmin,
                            int64_t tmax, const char *filter)
{
    char sel[1024] = "", sql[4096], args[1024] = "";
    size_t sl = 0, al = 0;
    for (size_t c = 0; c < ncols; c++)
        sl += (size_t)snprintf(sel + sl, sizeof sel - sl, "%s\"%s\"", c ? ", " : "", cols[c].name);
    if (table) al += (size_t)snprintf(args + al, sizeof args - al, ", table_name := '%s'", table);
    if (tmin != INT64_MIN) al += (size_t)snprintf(args + al, sizeof args - al, ", start_time := %" PRId64, tmin);
    if (tmax != INT64_MAX) al += (size_t)snprintf(args + al, sizeof args - al, ", end_time := %" PRId64, tmax);
    if (filter) { /* the library's text inside an SQL string literal: quotes doubled */
        al += (size_t)snprintf(args + al, sizeof args - al, ", filter := '");
        for (const char *f = filter; *f && al + 4 < sizeof args; f++) {
            if (*f == '\'') args[al++] = '\'';
            args[al++] = *f;
        }
        al += (size_t)snprintf(args + al, sizeof args - al, "'");
    }
    gcsv want = {0};
    CHECK(library_rows(path, table, tmin, tmax, filter, cols, ncols, &want) == 0);
    if (!want.n) fprintf(stderr, "no rows: %s%s\n", path, args);
    CHECK(want.n > 0); /* every case selects rows */
    for (int parts = 1; parts <= 5; parts += 4) {
        gcsv got = {0};
        snprintf(sql, sizeof sql, "SELECT %s FROM read_tsfile('%s'%s, parts := %d)", sel, path, args, parts);
        CHECK(sql_rows(sql, &got) == 0);
        if (same_rows(&got, &want, sql)) tsf_test_failures++;
        /* count(*) over the same arguments: the rows do not depend on the projection */
        snprintf(sql, sizeof sql, "SELECT count(*) FROM read_tsfile('%s'%s, parts := %d)", path, args, parts);
        CHECK_EQ_INT(scalar_i64(sql), want.n);
        gcsv_free(&got);
    }
    gcsv_free(&want);
}

/* The time at fraction f of the time range of path's first device (INT64_MIN / INT64_MAX for f < 0 / f > 1). */
static int64_t at(const char *path, double f)
{
    if (f < 0) return INT64_MIN;
    if (f > 1) return INT64_MAX;
    tsf_dataset *ds = NULL;
    const char *paths[1] = {path};
    tsf_dataset_device_info fi = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, NULL), NULL);
    if (ds) CHECK_OK(tsf_dataset_device(ds, 0, &fi, NULL), NULL);
    tsf_dataset_close(ds);
    return fi.time_min + (int64_t)(f * (double)(fi.time_max - fi.time_min));
}

/* A file whose non-aligned device has series at different times (s1 every 2, s2 every 3, s3 only from 500 on),
 * beside an aligned device with nulls: a projection must not change the rows. */
static int write_nonaligned(const char *path)
{
    tsf_writer *w = NULL;
    tsf_error e = {0};
    tsf_status st = tsf_writer_open(&w, path, NULL, &e);
    const tsf_column_schema s1 = {"s1", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD};
    const tsf_column_schema s2 = {"s2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    const tsf_column_schema s3 = {"s3", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
    const tsf_column_schema al[2] = {{"a", TSF_INT32, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
                                     {"s1", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_series(w, "root.sg.d0", &s1, &e);
    if (!st) st = tsf_writer_register_series(w, "root.sg.d0", &s2, &e);
    if (!st) st = tsf_writer_register_series(w, "root.sg.d0", &s3, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.sg.d1", al, 2, &e);
    for (int64_t t = 0; t < 1000 && !st; t++) {
        const char *cols[3];
        tsf_value v[3];
        size_t n = 0;
        if (t % 2 == 0) cols[n] = "s1", v[n++] = (tsf_value){.v.i64 = t * 7};
        if (t % 3 == 0) cols[n] = "s2", v[n++] = (tsf_value){.v.d = (double)t / 8};
        if (t >= 500 && t % 5 == 0) cols[n] = "s3", v[n].v.bytes = (tsf_bytes){(const uint8_t *)"x", 1}, v[n++].is_null = 0;
        if (n) st = tsf_writer_write_row(w, "root.sg.d0", t, cols, v, n, &e);
        tsf_value a[2] = {{.is_null = t % 4 == 1, .v.i32 = (int32_t)t},
                          {.is_null = t % 3 != 0, .v.bytes = {(const uint8_t *)"yz", 1 + (size_t)(t % 2)}}};
        if (!st && t % 2) st = tsf_writer_write_row(w, "root.sg.d1", t, NULL, a, 2, &e);
    }
    if (w) {
        tsf_status cs = tsf_writer_close(w, &e);
        if (!st) st = cs;
    }
    if (st) fprintf(stderr, "write %s: %s\n", path, e.message);
    return st ? -1 : 0;
}

static void test_projection(void)
{
    char p[1024];
    exec("SET threads = 4");
    snprintf(p, sizeof p, "/tmp/tsf_duckdb_na_%d.tsfile", (int)getpid());
    CHECK(write_nonaligned(p) == 0);
    /* s1 is INT64 in root.sg.d0 and STRING in root.sg.d1: two columns */
    const pcol n1[] = {{"time", -1, NULL, DUCKDB_TYPE_INVALID}, {"device", -1, NULL, DUCKDB_TYPE_INVALID}, {"s1_bigint", -1, "s1", DUCKDB_TYPE_BIGINT}};
    const pcol n2[] = {{"s3", -1, NULL, DUCKDB_TYPE_INVALID}};
    const pcol n3[] = {{"device", -1, NULL, DUCKDB_TYPE_INVALID}, {"a", -1, NULL, DUCKDB_TYPE_INVALID}};
    const pcol n4[] = {{"time", -1, NULL, DUCKDB_TYPE_INVALID}, {"s1_varchar", -1, "s1", DUCKDB_TYPE_VARCHAR}, {"s2", -1, NULL, DUCKDB_TYPE_INVALID}};
    projection_case(p, NULL, n1, 3, INT64_MIN, INT64_MAX, NULL);
    projection_case(p, NULL, n2, 1, 100, 700, NULL);
    projection_case(p, NULL, n3, 2, INT64_MIN, INT64_MAX, NULL);
    projection_case(p, NULL, n4, 3, 10, 990, "s2 > 3");
    unlink(p);
    /* non-aligned devices where series have different times (every third value of d2 is null) */
    java_file(p, sizeof p, "tree_nonaligned_mixed_gzip.tsfile");
    const pcol m1[] = {{"time", -1, NULL, DUCKDB_TYPE_INVALID}, {"device", -1, NULL, DUCKDB_TYPE_INVALID}, {"s_int32", -1, NULL, DUCKDB_TYPE_INVALID}};
    const pcol m2[] = {{"s_double", -1, NULL, DUCKDB_TYPE_INVALID}, {"time", -1, NULL, DUCKDB_TYPE_INVALID}};
    const pcol m3[] = {{"device", -1, NULL, DUCKDB_TYPE_INVALID}};
    projection_case(p, NULL, m1, 3, INT64_MIN, INT64_MAX, NULL);
    projection_case(p, NULL, m2, 2, at(p, 0.2), at(p, 0.7), NULL);
    projection_case(p, NULL, m3, 1, INT64_MIN, at(p, 0.5), NULL);
    projection_case(p, NULL, m1, 3, INT64_MIN, INT64_MAX, "s_int64 > 0");
    /* aligned with nulls */
    java_file(p, sizeof p, "tree_aligned_alltypes_nulls_snappy.tsfile");
    const pcol a1[] = {{"time", -1, NULL, DUCKDB_TYPE_INVALID}, {"c_float", -1, NULL, DUCKDB_TYPE_INVALID}, {"c_text", -1, NULL, DUCKDB_TYPE_INVALID}};
    const pcol a2[] = {{"c_date", -1, NULL, DUCKDB_TYPE_INVALID}, {"c_timestamp", -1, NULL, DUCKDB_TYPE_INVALID}, {"c_blob", -1, NULL, DUCKDB_TYPE_INVALID}, {"c_boolean", -1, NULL, DUCKDB_TYPE_INVALID}};
    projection_case(p, NULL, a1, 3, INT64_MIN, INT64_MAX, NULL);
    projection_case(p, NULL, a2, 4, at(p, 0.1), at(p, 0.6), NULL);
    /* many chunks, many devices */
    java_file(p, sizeof p, "tree_aligned_multichunk_100k_zstd.tsfile");
    const pcol c1[] = {{"time", -1, NULL, DUCKDB_TYPE_INVALID}, {"device", -1, NULL, DUCKDB_TYPE_INVALID}};
    projection_case(p, NULL, c1, 2, at(p, 0.3), at(p, 0.35), NULL);
    java_file(p, sizeof p, "tree_many_devices_2000.tsfile");
    projection_case(p, NULL, c1, 2, INT64_MIN, INT64_MAX, NULL);
    /* table model: tags (nulls among them) and fields */
    java_file(p, sizeof p, "table_null_tags_uncompressed.tsfile");
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, p, NULL, NULL), NULL);
    if (r) {
        tsf_table_info ti;
        CHECK_OK(tsf_reader_table(r, 0, &ti, NULL), NULL);
        pcol tc[8];
        size_t n = 0, tag = 0;
        const char *field = NULL;
        tc[n++] = (pcol){"time", -1, NULL, DUCKDB_TYPE_INVALID};
        for (size_t c = 0; c < ti.ncolumns && n < 7; c++) {
            if (ti.columns[c].category == TSF_COLUMN_TAG) tc[n++] = (pcol){ti.columns[c].name, (int)tag++, NULL, DUCKDB_TYPE_INVALID};
            else if (ti.columns[c].category == TSF_COLUMN_FIELD && !field) field = ti.columns[c].name;
        }
        if (field) tc[n++] = (pcol){field, -1, NULL, DUCKDB_TYPE_INVALID};
        projection_case(p, ti.name, tc, n, INT64_MIN, INT64_MAX, NULL);
        projection_case(p, ti.name, tc + 1, 1, INT64_MIN, INT64_MAX, NULL); /* one TAG column alone */
        /* TAG equality through filter := (the library drops the other devices unread) */
        tsf_bytes tv = {0};
        for (size_t d = ti.first_device; d < ti.first_device + ti.ndevices && !tv.data; d++)
            tsf_reader_device_segment(r, d, 1, &tv, NULL);
        char flt[300];
        if (tv.data && tc[1].tag == 0) {
            snprintf(flt, sizeof flt, "%s = '%.*s'", tc[1].name, (int)tv.len, (const char *)tv.data);
            projection_case(p, ti.name, tc, n, INT64_MIN, INT64_MAX, flt);
        } else {
            CHECK(0); /* the file has a non-null first tag */
        }
        tsf_reader_close(r);
    }
    exec("RESET threads");
}

/* ---- several files ---- */

static void test_dataset(void)
{
    char a[1024], b[1024], sql[4096];
    java_file(a, sizeof a, "tree_nonaligned_mixed_gzip.tsfile");
    java_file(b, sizeof b, "tree_nonaligned_mixed_lz4.tsfile");
    gcsv one = {0}, two = {0}, list = {0}, glob = {0};
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", a);
    CHECK(sql_rows(sql, &one) == 0);
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", b);
    CHECK(sql_rows(sql, &one) == 0);
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile(['%s', '%s'], parts := 6)", a, b);
    CHECK(sql_rows(sql, &list) == 0);
    if (same_rows(&list, &one, "list of two files")) tsf_test_failures++;
    /* a glob over the mixed_* family */
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%.900s/tsfile-java/tree_nonaligned_mixed_*.tsfile')",
             tsf_test_data_dir());
    CHECK(sql_rows(sql, &glob) == 0);
    CHECK_EQ_INT(glob.n, 3 * one.n); /* six files of the same rows (one.n holds two) */
    (void)two;
    gcsv_free(&one);
    gcsv_free(&two);
    gcsv_free(&list);
    gcsv_free(&glob);
}

/* ---- Parquet round trip ---- */

static void test_parquet(void)
{
    static const char *const files[] = {"tree_aligned_alltypes_nulls_snappy.tsfile", "tree_nonaligned_mixed_zstd.tsfile",
                                        "tree_negative_time_alltypes_lowlevel_lz4.tsfile"};
    char pq[64];
    snprintf(pq, sizeof pq, "/tmp/tsf_duckdb_%d.parquet", (int)getpid());
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[1024], sql[4096];
        java_file(p, sizeof p, files[i]);
        snprintf(sql, sizeof sql, "COPY (SELECT * FROM read_tsfile('%s')) TO '%s' (FORMAT parquet)", p, pq);
        CHECK(exec(sql) == 0);
        gcsv src = {0}, back = {0};
        snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", p);
        CHECK(sql_rows(sql, &src) == 0);
        snprintf(sql, sizeof sql, "SELECT * FROM read_parquet('%s')", pq);
        CHECK(sql_rows(sql, &back) == 0);
        CHECK(src.n > 0);
        if (same_rows(&back, &src, files[i])) tsf_test_failures++;
        gcsv_free(&src);
        gcsv_free(&back);
    }
    unlink(pq);
}

/* ---- damaged files ---- */

static void expect_error(const char *sql, const char *lib_message)
{
    duckdb_result r;
    char err[2048] = "";
    CHECK(query(sql, &r, err, sizeof err, 1) != 0);
    if (!strstr(err, lib_message)) {
        fprintf(stderr, "error of %.200s:\n  %s\nlacks the library's message:\n  %s\n", sql, err, lib_message);
        tsf_test_failures++;
    }
}

static void test_damaged(void)
{
    char p[1024], sql[2048];
    /* cut inside a chunk: the dataset cannot open it */
    snprintf(p, sizeof p, "%.900s/tsfile-java/corrupt/cut_mid_chunk.tsfile", tsf_test_data_dir());
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    const char *paths[1] = {p};
    CHECK(tsf_dataset_open(&ds, paths, 1, NULL, &e) != TSF_OK);
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", p);
    expect_error(sql, e.message);
    snprintf(sql, sizeof sql, "SELECT * FROM tsfile_metadata('%s')", p);
    expect_error(sql, e.message);
    /* a flipped byte in a page header: opens, the query fails on the data */
    snprintf(p, sizeof p, "%.900s/tsfile-java/corrupt/flipped_byte_page_header.tsfile", tsf_test_data_dir());
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    tsf_dataset_query *q = NULL;
    const tsf_dataset_batch *b;
    tsf_status st = ds ? tsf_dataset_query_open(ds, NULL, &q, &e) : TSF_EINVAL;
    while (!st && !(st = tsf_dataset_query_next(q, &b, &e)) && b) {
    }
    CHECK(st != TSF_OK);
    tsf_dataset_query_close(q);
    tsf_dataset_close(ds);
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", p);
    expect_error(sql, e.message);
    /* every prefix of a small file (cut at 1/64 steps): an error or rows, never a crash */
    char src[1024], cut[64];
    java_file(src, sizeof src, "tree_aligned_alltypes_gzip.tsfile");
    snprintf(cut, sizeof cut, "/tmp/tsf_duckdb_cut_%d.tsfile", (int)getpid());
    size_t len = 0;
    uint8_t *bytes = tsf_test_read_file(src, &len);
    CHECK(bytes != NULL);
    size_t errors = 0;
    for (size_t k = 0; bytes && k < 64; k++) {
        size_t n = len * k / 64;
        FILE *f = fopen(cut, "wb");
        if (!f) break;
        fwrite(bytes, 1, n, f);
        fclose(f);
        duckdb_result r;
        snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", cut);
        if (query(sql, &r, NULL, 0, 1) == 0) duckdb_destroy_result(&r);
        else errors++;
    }
    CHECK_EQ_INT(errors, 64); /* no prefix has the tail */
    free(bytes);
    unlink(cut);
}

/* ---- tsfile_metadata, tsfile_schema ---- */

static void test_metadata(void)
{
    char p[1024], sql[2048];
    java_file(p, sizeof p, "tree_nonaligned_mixed_snappy.tsfile");
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, p, NULL, NULL), NULL);
    if (!r) return;
    uint64_t nseries = 0, points = 0;
    for (size_t d = 0; d < tsf_reader_device_count(r); d++) {
        tsf_device_info di;
        tsf_reader_device(r, d, &di, NULL);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            tsf_reader_series(r, d, j, &si, NULL);
            nseries++;
            points += si.stats.count;
        }
    }
    tsf_reader_close(r);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tsfile_metadata('%s')", p);
    CHECK_EQ_INT(scalar_i64(sql), nseries);
    snprintf(sql, sizeof sql, "SELECT sum(count)::BIGINT FROM tsfile_metadata('%s')", p);
    CHECK_EQ_INT(scalar_i64(sql), points);
    /* the values read_tsfile returns: every non-null cell */
    snprintf(sql, sizeof sql, "SELECT count(COLUMNS(* EXCLUDE (time, device))) FROM read_tsfile('%s')", p);
    duckdb_result res;
    if (query(sql, &res, NULL, 0, 0) == 0) {
        int64_t sum = 0;
        for (idx_t c = 0; c < duckdb_column_count(&res); c++) sum += duckdb_value_int64(&res, c, 0);
        CHECK_EQ_INT(sum, points);
        duckdb_destroy_result(&res);
    }
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tsfile_schema('%s') WHERE category = 'MEASUREMENT'", p);
    CHECK_EQ_INT(scalar_i64(sql), nseries);
    /* a table file: one row per schema column, the TAG columns as read_tsfile's VARCHAR columns */
    java_file(p, sizeof p, "table_two_tables_nulls_lz4.tsfile");
    CHECK_OK(tsf_reader_open(&r, p, NULL, NULL), NULL);
    if (!r) return;
    size_t ncols = 0, ntags = 0;
    for (size_t t = 0; t < tsf_reader_table_count(r); t++) {
        tsf_table_info ti;
        tsf_reader_table(r, t, &ti, NULL);
        ncols += ti.ncolumns;
        for (size_t c = 0; c < ti.ncolumns; c++) ntags += ti.columns[c].category == TSF_COLUMN_TAG;
    }
    tsf_reader_close(r);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tsfile_schema('%s')", p);
    CHECK_EQ_INT(scalar_i64(sql), ncols);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tsfile_schema('%s') WHERE category = 'TAG' AND duckdb_type = 'VARCHAR'", p);
    CHECK_EQ_INT(scalar_i64(sql), ntags);
    /* without table := a file of two tables is refused, naming them */
    snprintf(sql, sizeof sql, "SELECT * FROM read_tsfile('%s')", p);
    expect_error(sql, "table_name :=");
}

/* ---- the README's example ---- */

/* Runs every statement of the ```sql block under README.md's "## DuckDB" (the LOAD is done already; paths
 * are relative to the source tree), and the time conversions doc/duckdb.md names. */
/* ---- writing: DuckDB's CSV output read by tsf import (doc/duckdb.md, "Writing TsFiles from DuckDB") ---- */

/* A table of every type but BLOB (CSV has no bytes) goes out with COPY ... TO CSV, in again with the
 * documented tsf import command, and reads back through read_tsfile with the same rows. */
static void test_write_via_import(void)
{
#ifdef TSF_CLI
    char src[1024], csv[96], out[96], sql[4096], cmd[4096];
    java_file(src, sizeof src, "table_two_tables_nulls_lz4.tsfile");
    snprintf(csv, sizeof csv, "/tmp/tsf_duckdb_w_%d.csv", (int)getpid());
    snprintf(out, sizeof out, "/tmp/tsf_duckdb_w_%d.tsfile", (int)getpid());
    const char *cols = "time, region, station, f_boolean, f_int32, f_int64, f_float, f_double, f_text, f_string, "
                       "f_date, f_timestamp";
    snprintf(sql, sizeof sql, "COPY (SELECT %s FROM read_tsfile('%s', table_name := 'weather')) TO '%s' (HEADER)",
             cols, src, csv);
    CHECK(exec(sql) == 0);
    snprintf(cmd, sizeof cmd,
             "'%s' import '%s' -o '%s' --force --table weather --tags region,station --input-unit raw --null-values '' "
             "--schema "
             "f_boolean=BOOLEAN,f_int32=INT32,f_int64=INT64,f_float=FLOAT,f_double=DOUBLE,f_text=TEXT,"
             "f_string=STRING,f_date=DATE,f_timestamp=TIMESTAMP > /dev/null",
             TSF_CLI, csv, out);
    CHECK_EQ_INT(system(cmd), 0);
    gcsv a = {0}, b = {0};
    snprintf(sql, sizeof sql, "SELECT %s FROM read_tsfile('%s', table_name := 'weather')", cols, src);
    CHECK(sql_rows(sql, &a) == 0);
    snprintf(sql, sizeof sql, "SELECT %s FROM read_tsfile('%s', table_name := 'weather')", cols, out);
    CHECK(sql_rows(sql, &b) == 0);
    CHECK(a.n > 0);
    if (same_rows(&b, &a, "table written through tsf import")) tsf_test_failures++;
    gcsv_free(&a);
    gcsv_free(&b);
    unlink(csv);
    unlink(out);
#else
    fprintf(stderr, "test_write_via_import: built without the tsf tool (TSF_BUILD_CLI=OFF); not run\n");
#endif
}

static void test_readme(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/README.md", TSF_SOURCE_DIR);
    size_t len = 0;
    char *text = (char *)tsf_test_read_file(path, &len);
    CHECK(text != NULL);
    if (!text) return;
    text[len - 1] = '\0';
    char *sec = strstr(text, "\n## DuckDB\n");
    char *blk = sec ? strstr(sec, "```sql\n") : NULL;
    char *end = blk ? strstr(blk + 7, "```") : NULL;
    CHECK(end != NULL);
    size_t nstmt = 0;
    if (end) {
        *end = '\0';
        char *stmt = blk + 7;
        for (char *semi; (semi = strchr(stmt, ';')) != NULL; stmt = semi + 1) {
            *semi = '\0';
            char sql[4096];
            size_t o = 0;
            const char *p = stmt;
            while (*p == '\n' || *p == ' ') p++;
            while (!strncmp(p, "--", 2)) { /* a comment line */
                p = strchr(p, '\n');
                if (!p) break;
                p++;
            }
            if (!p || !strncmp(p, "LOAD ", 5)) continue;
            for (; *p && o + 1100 < sizeof sql; p++) {
                if (!strncmp(p, "'tests/data/", 12)) {
                    o += (size_t)snprintf(sql + o, sizeof sql - o, "'%s/tests/data/", TSF_SOURCE_DIR);
                    p += 11;
                } else {
                    sql[o++] = *p;
                }
            }
            sql[o] = '\0';
            gcsv rows = {0};
            CHECK(sql_rows(sql, &rows) == 0);
            CHECK(rows.n > 0);
            if (nstmt == 0) CHECK_EQ_INT(rows.n, 2); /* two devices */
            gcsv_free(&rows);
            nstmt++;
        }
    }
    CHECK_EQ_INT(nstmt, 2);
    free(text);
    CHECK_EQ_INT(scalar_i64("SELECT epoch_ms(86400000::BIGINT) = TIMESTAMP '1970-01-02' AND "
                            "make_timestamp(86400000000::BIGINT) = TIMESTAMP '1970-01-02' AND "
                            "make_timestamp_ns(86400000000000::BIGINT) = TIMESTAMP_NS '1970-01-02'"),
                 1);
}

/* ---- the reader cache ---- */

/* ndev aligned devices root.c.d<k> x nrows rows at times t0 + i of INT64 f0..f3 = i * mult + k + j, PLAIN and
 * uncompressed (the file's size depends on ndev, nrows and page_points only), pages of page_points rows. */
static int write_plain(const char *path, int ndev, int nrows, int64_t mult, uint32_t page_points, int64_t t0)
{
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page_points;
    o.time_compression = TSF_UNCOMPRESSED;
    tsf_writer *w = NULL;
    tsf_error e = {0};
    tsf_status st = tsf_writer_open(&w, path, &o, &e);
    const tsf_column_schema cs[4] = {{"f0", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                     {"f1", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                     {"f2", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                     {"f3", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD}};
    char dev[32];
    for (int k = 0; k < ndev && !st; k++) {
        snprintf(dev, sizeof dev, "root.c.d%d", k);
        st = tsf_writer_register_aligned(w, dev, cs, 4, &e);
    }
    for (int k = 0; k < ndev && !st; k++) {
        snprintf(dev, sizeof dev, "root.c.d%d", k);
        for (int64_t i = 0; i < nrows && !st; i++) {
            tsf_value v[4];
            for (int j = 0; j < 4; j++) v[j] = (tsf_value){.v.i64 = i * mult + k + j};
            st = tsf_writer_write_row(w, dev, t0 + i, NULL, v, 4, &e);
        }
    }
    if (w) {
        tsf_status c = tsf_writer_close(w, &e);
        if (!st) st = c;
    }
    if (st) fprintf(stderr, "write %s: %s\n", path, e.message);
    return st ? -1 : 0;
}

/* Sets path's mtime to when (seconds since the epoch). */
static int set_mtime(const char *path, time_t when)
{
    struct timespec ts[2] = {{when, 0}, {when, 0}};
    return utimensat(AT_FDCWD, path, ts, 0);
}

/* The first row of sql as text ("a|b|...|"), "" when the query fails. */
static void first_row(duckdb_connection con, const char *sql, char *out, size_t cap)
{
    duckdb_result r;
    out[0] = '\0';
    if (duckdb_query(con, sql, &r) != DuckDBSuccess) {
        fprintf(stderr, "query failed: %.300s\n  %s\n", sql, duckdb_result_error(&r));
        duckdb_destroy_result(&r);
        return;
    }
    size_t o = 0;
    for (idx_t c = 0; c < duckdb_column_count(&r) && o < cap; c++) {
        char *v = duckdb_value_varchar(&r, c, 0);
        o += (size_t)snprintf(out + o, cap - o, "%s|", v ? v : "NULL");
        duckdb_free(v);
    }
    duckdb_destroy_result(&r);
}

/* The counter col of tsfile_reader_cache(). */
static int64_t cache_stat(const char *col)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT %s FROM tsfile_reader_cache()", col);
    return scalar_i64(sql);
}

#define RC_AGG "count(*), sum(f0)::BIGINT, min(f1), max(f2), sum(f3)::BIGINT"

typedef struct rc_thread {
    const char *sql, *want;
    int bad;
} rc_thread;

/* One connection of its own running sql 10 times; bad counts answers other than want. */
static void *rc_worker(void *arg)
{
    rc_thread *t = arg;
    duckdb_connection con;
    if (duckdb_connect(g_db, &con) != DuckDBSuccess) {
        t->bad = 1;
        return NULL;
    }
    char got[512];
    for (int i = 0; i < 10; i++) {
        first_row(con, t->sql, got, sizeof got);
        if (strcmp(got, t->want)) t->bad++;
    }
    duckdb_disconnect(&con);
    return NULL;
}

/* After path changed: the cached query answers as an uncached one, which differs from the answer before (old),
 * and the cache dropped a stale reader (its stale counter was stale0). */
static void follows_new(const char *path, const char *old, int64_t stale0)
{
    char sql[512], off[512], on[512];
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s', reader_cache := false)", path);
    first_row(g_con, sql, off, sizeof off);
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s')", path);
    first_row(g_con, sql, on, sizeof on);
    CHECK(off[0] && strcmp(off, old) != 0 && strcmp(on, off) == 0);
    CHECK(cache_stat("stale") > stale0);
}

static void test_reader_cache(void)
{
    char f1[256], f2[256], src[256], dir[256], p[320], sql[1024], off[512], on[512], old[512];
    int pid = (int)getpid();
    snprintf(f1, sizeof f1, "/tmp/tsf_duckdb_rc1_%d.tsfile", pid);
    snprintf(f2, sizeof f2, "/tmp/tsf_duckdb_rc2_%d.tsfile", pid);
    snprintf(src, sizeof src, "/tmp/tsf_duckdb_rc3_%d.tsfile", pid);
    snprintf(dir, sizeof dir, "/tmp/tsf_duckdb_rcdir_%d", pid);
    CHECK(mkdir(dir, 0700) == 0);
    time_t past = time(NULL) - 1000;
    /* a cached reader is one whose file was last changed more than 2 s before its open: the files are written,
     * dated back, and left alone for that long */
    CHECK(write_plain(f1, 3, 3000, 3, 100, 0) == 0 && set_mtime(f1, past) == 0);
    CHECK(write_plain(f2, 3, 3000, 3, 100, 0) == 0 && set_mtime(f2, past) == 0);
    CHECK(write_plain(src, 3, 3000, 7, 100, 100000) == 0);
    for (int i = 0; i < 40; i++) {
        snprintf(p, sizeof p, "%s/f%02d.tsfile", dir, i);
        CHECK(write_plain(p, 1, 50 + i, 1 + i, 20, 0) == 0 && set_mtime(p, past) == 0);
    }
    struct stat a, b;
    CHECK(stat(f1, &a) == 0 && stat(src, &b) == 0 && a.st_size == b.st_size);
    usleep(2300000);
    exec("SELECT * FROM tsfile_reader_cache(clear := true)");
    int64_t hits0 = cache_stat("hits"), racy0 = cache_stat("racy");

    /* the same answers with and without the cache, first (readers opened) and later (readers kept) queries */
    static const char *const qs[] = {
        "SELECT " RC_AGG " FROM read_tsfile('%s'%s)",
        "SELECT " RC_AGG " FROM read_tsfile('%s', start_time := 1234, end_time := 1299%s)",
        "SELECT * FROM read_tsfile('%s', start_time := 2000, end_time := 2100%s)",
        "SELECT device, f2 FROM read_tsfile('%s', filter := 'f1 > 7000', parts := 5%s)",
    };
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        gcsv want = {0};
        snprintf(sql, sizeof sql, qs[i], f1, ", reader_cache := false");
        CHECK(sql_rows(sql, &want) == 0);
        CHECK(want.n > 0);
        for (int rep = 0; rep < 2; rep++) {
            gcsv got = {0};
            snprintf(sql, sizeof sql, qs[i], f1, "");
            CHECK(sql_rows(sql, &got) == 0);
            if (same_rows(&got, &want, sql)) tsf_test_failures++;
            gcsv_free(&got);
        }
        gcsv_free(&want);
    }
    CHECK(cache_stat("hits") > hits0);
    CHECK_EQ_INT(cache_stat("racy"), racy0); /* the files were old enough to be kept */

    /* 2 threads on 8 parts of one kept reader, and two connections at once */
    exec("SET threads = 2");
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s', start_time := 100, end_time := 2900, "
             "parts := 8, reader_cache := false)", f1);
    first_row(g_con, sql, off, sizeof off);
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s', start_time := 100, end_time := 2900, "
             "parts := 8)", f1);
    for (int rep = 0; rep < 3; rep++) {
        first_row(g_con, sql, on, sizeof on);
        CHECK(off[0] && strcmp(on, off) == 0);
    }
    rc_thread th[2] = {{sql, off, 0}, {sql, off, 0}};
    pthread_t tid[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&tid[i], NULL, rc_worker, &th[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(tid[i], NULL);
    CHECK_EQ_INT(th[0].bad + th[1].bad, 0);
    exec("RESET threads");

    /* more files than the cache keeps */
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s/*.tsfile', reader_cache := false)", dir);
    first_row(g_con, sql, off, sizeof off);
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s/*.tsfile')", dir);
    int64_t max = cache_stat("max_readers"), ev0 = cache_stat("evicted");
    CHECK(max > 0 && max < 40);
    for (int rep = 0; rep < 2; rep++) {
        first_row(g_con, sql, on, sizeof on);
        CHECK(off[0] && strcmp(on, off) == 0);
        CHECK(cache_stat("kept") <= max);
    }
    CHECK(cache_stat("evicted") >= ev0 + 40 - max);
    CHECK_EQ_INT(scalar_i64("SELECT max_readers FROM tsfile_reader_cache(max_readers := 4)"), 4);
    first_row(g_con, sql, on, sizeof on);
    CHECK(strcmp(on, off) == 0);
    CHECK(cache_stat("kept") <= 4 && cache_stat("open") <= 4);
    CHECK_EQ_INT(scalar_i64("SELECT kept + open FROM tsfile_reader_cache(clear := true)"), 0);
    snprintf(sql, sizeof sql, "SELECT max_readers FROM tsfile_reader_cache(max_readers := %lld)", (long long)max);
    CHECK_EQ_INT(scalar_i64(sql), max);

    /* a file replaced under its path (a new file renamed over it, dated back to the same mtime) */
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s')", f2);
    first_row(g_con, sql, old, sizeof old);
    first_row(g_con, sql, on, sizeof on);
    CHECK(old[0] && strcmp(on, old) == 0);
    int64_t stale0 = cache_stat("stale");
    CHECK(write_plain(f2, 3, 3000, 5, 100, 0) == 0 && set_mtime(f2, past) == 0);
    follows_new(f2, old, stale0);

    /* a file rewritten in place: same inode, same size, the old mtime put back (only ctime tells); its times
     * moved by 100,000, so a reader with the old index would plan the old range and find no row */
    snprintf(sql, sizeof sql, "SELECT " RC_AGG " FROM read_tsfile('%s')", f1);
    first_row(g_con, sql, old, sizeof old);
    stale0 = cache_stat("stale");
    FILE *in = fopen(src, "rb");
    int fd = open(f1, O_WRONLY);
    CHECK(in && fd >= 0);
    if (in && fd >= 0) {
        char buf[65536];
        size_t n;
        off_t at = 0;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
            CHECK(pwrite(fd, buf, n, at) == (ssize_t)n);
            at += (off_t)n;
        }
    }
    if (in) fclose(in);
    if (fd >= 0) close(fd);
    CHECK(set_mtime(f1, past) == 0);
    struct stat c;
    CHECK(stat(f1, &c) == 0 && c.st_ino == a.st_ino && c.st_size == a.st_size && c.st_mtime == a.st_mtime);
    follows_new(f1, old, stale0);

    unlink(f1);
    unlink(f2);
    unlink(src);
    for (int i = 0; i < 40; i++) {
        snprintf(p, sizeof p, "%s/f%02d.tsfile", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    if (open_db()) {
        fprintf(stderr, "cannot open DuckDB and load %s\n", TSF_DUCKDB_EXTENSION);
        return 1;
    }
    TSF_RUN(test_golden);
    TSF_RUN(test_projection);
    TSF_RUN(test_dataset);
    TSF_RUN(test_parquet);
    TSF_RUN(test_damaged);
    TSF_RUN(test_metadata);
    TSF_RUN(test_readme);
    TSF_RUN(test_write_via_import);
    TSF_RUN(test_reader_cache);
    duckdb_disconnect(&g_con);
    duckdb_close(&g_db);
    return tsf_test_finish();
}
