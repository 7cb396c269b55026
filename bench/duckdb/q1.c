/*
 * duckdb_q1.c - tsf-bench dataset's Q1 (by device x 1 h window: count / sum / min / max / mean of f0..f7 over
 * every row) in tsfile-c and in DuckDB over the same rows, as Parquet files and as a native table, timed in
 * one run with one thread count. Built and run by bench/duckdb/compare.sh against libduckdb.so's C API
 * (not part of tsf-bench, which never links DuckDB).
 *
 * usage: duckdb-q1 DIR THREADS REPS [--json]
 *   DIR: a folder `tsf-bench dataset` generated (DIR/table/part-NN.tsfile). The rows are copied once, through
 *   tsf_dataset_query, into the DuckDB database DIR/duckdb/q1.duckdb (table t: part, device, time, f0..f7)
 *   and written from it as DIR/duckdb/parquet/part-NN.parquet (one file per TsFile, DuckDB's defaults);
 *   both are kept for later runs. Repetitions alternate tsfile-c, DuckDB native, DuckDB Parquet, page cache
 *   warm. Every engine's groups are checked against tsfile-c's: the same keys and counts, min and max equal,
 *   sums within 1e-9 relative (DuckDB adds in another order; its INT64 sums are exact).
 * Rows (JSON as tsf-bench dataset): path tsfile-c | duckdb-native | duckdb-parquet, p50/p90 ms,
 * ratio = that engine's p50 / tsfile-c's p50 (above 1: tsfile-c is faster).
 */
#define _POSIX_C_SOURCE 200809L
#include <duckdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tsf.h"

#define HOUR 3600000LL
#define NF 8

static const char *FIELDS[NF] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *x, int n, double p)
{
    double s[256];
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_d);
    int r = (int)(p / 100.0 * n + 0.999999);
    return s[(r < 1 ? 1 : r > n ? n : r) - 1];
}

static int sql(duckdb_connection con, const char *q)
{
    duckdb_result res;
    if (duckdb_query(con, q, &res) == DuckDBError) {
        fprintf(stderr, "duckdb-q1: %s: %s\n", q, duckdb_result_error(&res));
        duckdb_destroy_result(&res);
        return -1;
    }
    duckdb_destroy_result(&res);
    return 0;
}

/* Copies every row of the dataset into table t through the appender, a chunk of duckdb_vector_size() rows at
 * a time. */
static int load(tsf_dataset *ds, duckdb_connection con)
{
    if (sql(con, "CREATE TABLE t (part INTEGER, device VARCHAR, time BIGINT, f0 BIGINT, f1 BIGINT, f2 BIGINT, "
                 "f3 BIGINT, f4 DOUBLE, f5 DOUBLE, f6 DOUBLE, f7 DOUBLE)"))
        return -1;
    duckdb_appender app;
    if (duckdb_appender_create(con, NULL, "t", &app) == DuckDBError) return -1;
    duckdb_logical_type types[11];
    types[0] = duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    types[1] = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    for (int i = 2; i < 11; i++) types[i] = duckdb_create_logical_type(i < 7 ? DUCKDB_TYPE_BIGINT : DUCKDB_TYPE_DOUBLE);
    duckdb_data_chunk ch = duckdb_create_data_chunk(types, 11);
    idx_t cap = duckdb_vector_size();
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.columns = FIELDS;
    o.ncolumns = NF;
    o.batch_size = (size_t)cap;
    tsf_dataset_query *q = NULL;
    tsf_error err = {0};
    int rc = -1;
    if (tsf_dataset_query_open(ds, &o, &q, &err)) goto out;
    for (const tsf_dataset_batch *b;;) {
        if (tsf_dataset_query_next(q, &b, &err)) goto out;
        if (!b) break;
        size_t n = b->rows.nrows;
        duckdb_data_chunk_reset(ch);
        int32_t *part = duckdb_vector_get_data(duckdb_data_chunk_get_vector(ch, 0));
        duckdb_vector dev = duckdb_data_chunk_get_vector(ch, 1);
        const char *name = strrchr(b->device_name, '.') ? strrchr(b->device_name, '.') + 1 : b->device_name;
        for (size_t r = 0; r < n; r++) {
            part[r] = (int32_t)b->file;
            duckdb_vector_assign_string_element(dev, r, name);
        }
        memcpy(duckdb_vector_get_data(duckdb_data_chunk_get_vector(ch, 2)), b->rows.times, n * 8);
        for (size_t c = 0; c < NF; c++) {
            const tsf_column_batch *cb = &b->rows.columns[c];
            if (cb->validity) /* the generated files have no null */
                for (size_t r = 0; r < n; r++)
                    if (!((cb->validity[r / 8] >> (r % 8)) & 1)) goto out;
            memcpy(duckdb_vector_get_data(duckdb_data_chunk_get_vector(ch, 3 + c)), cb->values, n * 8);
        }
        duckdb_data_chunk_set_size(ch, n);
        if (duckdb_append_data_chunk(app, ch) == DuckDBError) {
            fprintf(stderr, "duckdb-q1: append: %s\n", duckdb_appender_error(app));
            goto out;
        }
    }
    rc = duckdb_appender_close(app) == DuckDBError ? -1 : 0;
out:
    if (err.code) fprintf(stderr, "duckdb-q1: %s\n", err.message);
    tsf_dataset_query_close(q);
    duckdb_appender_destroy(&app);
    duckdb_destroy_data_chunk(&ch);
    for (int i = 0; i < 11; i++) duckdb_destroy_logical_type(&types[i]);
    return rc;
}

/* One group of Q1: device, window, per field count / sum / min / max / mean. */
typedef struct grp {
    char dev[16];
    int64_t win;
    double v[NF][5];
} grp;

static int grp_cmp(const void *x, const void *y)
{
    const grp *a = x, *b = y;
    int c = strcmp(a->dev, b->dev);
    return c ? c : (a->win > b->win) - (a->win < b->win);
}

static int run_tsf(tsf_dataset *ds, unsigned threads, grp **out, size_t *n)
{
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.columns = FIELDS;
    o.ncolumns = NF;
    o.threads = threads;
    o.files_at_once = threads;
    tsf_dataset_agg_options ao;
    tsf_dataset_agg_options_init(&ao);
    ao.window = HOUR;
    tsf_dataset_agg_result *res = NULL;
    tsf_error err = {0};
    if (tsf_dataset_aggregate(ds, &o, &ao, &res, &err)) {
        fprintf(stderr, "duckdb-q1: aggregate: %s\n", err.message);
        return -1;
    }
    if (out) {
        size_t m = tsf_dataset_agg_result_count(res) / NF;
        grp *g = calloc(m + 1, sizeof *g);
        for (size_t i = 0; g && i < m * NF; i++) {
            const tsf_dataset_agg_row *r = tsf_dataset_agg_result_row(res, i);
            tsf_dataset_device_info di;
            if (tsf_dataset_device(ds, r->device, &di, &err)) break;
            const char *name = strrchr(di.name, '.') ? strrchr(di.name, '.') + 1 : di.name;
            grp *x = &g[i / NF];
            snprintf(x->dev, sizeof x->dev, "%s", name);
            x->win = r->window_start / HOUR;
            int f = r->column[1] - '0';
            x->v[f][0] = (double)r->count, x->v[f][1] = r->sum, x->v[f][2] = r->min, x->v[f][3] = r->max;
            x->v[f][4] = r->mean;
        }
        *out = g;
        *n = m;
    }
    tsf_dataset_agg_result_free(res);
    return 0;
}

static int run_duck(duckdb_connection con, const char *from, grp **out, size_t *n)
{
    char q[4096];
    int k = snprintf(q, sizeof q, "SELECT device, time // %lld AS w", HOUR);
    for (int f = 0; f < NF; f++)
        k += snprintf(q + k, sizeof q - (size_t)k, ", count(f%d), sum(f%d), min(f%d), max(f%d), avg(f%d)", f, f, f,
                      f, f);
    snprintf(q + k, sizeof q - (size_t)k, " FROM %s GROUP BY ALL ORDER BY device, w", from);
    duckdb_result res;
    if (duckdb_query(con, q, &res) == DuckDBError) {
        fprintf(stderr, "duckdb-q1: %s\n", duckdb_result_error(&res));
        duckdb_destroy_result(&res);
        return -1;
    }
    if (out) {
        size_t m = (size_t)duckdb_row_count(&res);
        grp *g = calloc(m + 1, sizeof *g);
        for (size_t i = 0; g && i < m; i++) {
            char *d = duckdb_value_varchar(&res, 0, i);
            snprintf(g[i].dev, sizeof g[i].dev, "%s", d);
            duckdb_free(d);
            g[i].win = duckdb_value_int64(&res, 1, i);
            for (int f = 0; f < NF; f++)
                for (int a = 0; a < 5; a++) g[i].v[f][a] = duckdb_value_double(&res, (idx_t)(2 + 5 * f + a), i);
        }
        *out = g;
        *n = m;
    }
    duckdb_destroy_result(&res);
    return 0;
}

/* 0 when b's groups are a's: keys, counts, min and max equal, sums and means within 1e-9 relative. */
static int same(const char *what, grp *a, size_t na, grp *b, size_t nb)
{
    qsort(a, na, sizeof *a, grp_cmp);
    qsort(b, nb, sizeof *b, grp_cmp);
    if (na != nb) {
        fprintf(stderr, "duckdb-q1: %s: %zu groups vs tsfile-c's %zu\n", what, nb, na);
        return -1;
    }
    for (size_t i = 0; i < na; i++) {
        if (grp_cmp(&a[i], &b[i])) goto bad;
        for (int f = 0; f < NF; f++)
            for (int k = 0; k < 5; k++) {
                double x = a[i].v[f][k], y = b[i].v[f][k];
                double tol = (k == 1 || k == 4) ? 1e-9 * fmax(1.0, fabs(x)) : 0;
                if (fabs(x - y) > tol) {
                    fprintf(stderr, "duckdb-q1: %s: group %s/%lld f%d aggregate %d: %.17g vs tsfile-c %.17g\n",
                            what, a[i].dev, (long long)a[i].win, f, k, y, x);
                    return -1;
                }
            }
    }
    return 0;
bad:
    fprintf(stderr, "duckdb-q1: %s: groups differ from tsfile-c's\n", what);
    return -1;
}

static void row(int json, const char *path, unsigned threads, double p50, double p90, double ratio)
{
    if (json)
        printf("{\"bench\":\"dataset\",\"query\":\"Q1\",\"path\":\"%s\",\"threads\":%u,\"files_at_once\":%u,"
               "\"source\":\"local-warm\",\"p50\":%.4f,\"p90\":%.4f,\"unit\":\"ms\",\"ratio\":%.4f}\n",
               path, threads, threads, p50, p90, ratio);
    else
        printf("Q1 %-15s threads %u  p50 %10.3f ms  p90 %10.3f ms  vs tsfile-c %.3f\n", path, threads, p50, p90,
               ratio);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: duckdb-q1 DIR THREADS REPS [--json]\n");
        return 2;
    }
    const char *dir = argv[1];
    unsigned threads = (unsigned)atoi(argv[2]);
    int reps = atoi(argv[3]), json = argc > 4 && !strcmp(argv[4], "--json");
    if (threads < 1 || reps < 1 || reps > 256) return 2;
    char path[1024], db[1100], pq[1100];
    snprintf(path, sizeof path, "%s/table", dir);
    const char *paths[1] = {path};
    tsf_dataset *ds = NULL;
    tsf_error err = {0};
    if (tsf_dataset_open(&ds, paths, 1, NULL, &err)) {
        fprintf(stderr, "duckdb-q1: %s\n", err.message);
        return 1;
    }
    snprintf(db, sizeof db, "%s/duckdb", dir);
    mkdir(db, 0755);
    snprintf(pq, sizeof pq, "%s/duckdb/parquet", dir);
    struct stat st;
    int fresh = stat(pq, &st) != 0;
    snprintf(db, sizeof db, "%s/duckdb/q1.duckdb", dir);
    if (fresh) remove(db);
    duckdb_database d;
    duckdb_connection con;
    if (duckdb_open(db, &d) == DuckDBError || duckdb_connect(d, &con) == DuckDBError) return 1;
    char q[2400];
    if (fresh) {
        double t0 = now_ms();
        if (load(ds, con)) return 1;
        mkdir(pq, 0755);
        for (size_t i = 0; i < tsf_dataset_file_count(ds); i++) {
            snprintf(q, sizeof q,
                     "COPY (SELECT device, time, f0, f1, f2, f3, f4, f5, f6, f7 FROM t WHERE part = %zu ORDER BY "
                     "device, time) TO '%s/part-%02zu.parquet' (FORMAT parquet)",
                     i, pq, i);
            if (sql(con, q)) return 1;
        }
        if (sql(con, "CHECKPOINT")) return 1;
        fprintf(stderr, "duckdb-q1: loaded the rows into %s and %s in %.1f s\n", db, pq, (now_ms() - t0) / 1e3);
    }
    snprintf(q, sizeof q, "SET threads = %u", threads);
    if (sql(con, q)) return 1;
    char from_pq[1200];
    snprintf(from_pq, sizeof from_pq, "read_parquet('%s/*.parquet')", pq);
    /* results checked once (warms every engine's cache too) */
    grp *ref = NULL, *g = NULL;
    size_t nref = 0, ng = 0;
    if (run_tsf(ds, threads, &ref, &nref) || !ref) return 1;
    if (run_duck(con, "t", &g, &ng) || same("duckdb-native", ref, nref, g, ng)) return 1;
    free(g);
    if (run_duck(con, from_pq, &g, &ng) || same("duckdb-parquet", ref, nref, g, ng)) return 1;
    free(g);
    free(ref);
    double ms[3][256];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        if (run_tsf(ds, threads, NULL, NULL)) return 1;
        double t1 = now_ms();
        if (run_duck(con, "t", NULL, NULL)) return 1;
        double t2 = now_ms();
        if (run_duck(con, from_pq, NULL, NULL)) return 1;
        double t3 = now_ms();
        ms[0][r] = t1 - t0, ms[1][r] = t2 - t1, ms[2][r] = t3 - t2;
    }
    const char *names[3] = {"tsfile-c", "duckdb-native", "duckdb-parquet"};
    double base = pct(ms[0], reps, 50);
    for (int e = 0; e < 3; e++)
        row(json, names[e], threads, pct(ms[e], reps, 50), pct(ms[e], reps, 90), pct(ms[e], reps, 50) / base);
    duckdb_disconnect(&con);
    duckdb_close(&d);
    tsf_dataset_close(ds);
    return 0;
}
