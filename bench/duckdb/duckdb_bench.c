/*
 * duckdb_bench.c - tsf-duckdb-bench: read_tsfile against DuckDB's Parquet reader and a native DuckDB table on
 * the E2 file of `tsf-bench read` (table e2: 10 devices x N/10 rows x 8 INT64 fields f0..f7, TS_2DIFF +
 * SNAPPY, 10,000-point pages), in one DuckDB process with the same thread count for all.
 *
 * usage: tsf-duckdb-bench [--rows N] [--threads T] [--reps R] [--keep FILE] [--page-index] [--parts P] [--json]
 *
 * Setup (not timed): the E2 file (built, or reused with --keep), then COPY (SELECT * FROM read_tsfile(E2)) TO a
 * Parquet file (DuckDB's defaults: snappy, row groups of 122,880 rows) and CREATE TABLE native AS the same;
 * then a wait until the E2 file was last changed more than 2.5 s ago (the reader cache keeps no reader of a file
 * changed within 2 s of its open).
 * Queries: `full` = count(*), and sum / min / max over the 8 fields, of every row; `range1` = the same over a
 * centred time window holding 1 % of the rows (read_tsfile: start_time / end_time; Parquet and native: WHERE
 * time BETWEEN, which DuckDB pushes into both). Sources:
 *   native          the DuckDB table
 *   parquet         read_parquet, parquet_metadata_cache off (DuckDB's default)
 *   parquet_mdc     read_parquet with SET parquet_metadata_cache = true (the file's footer kept between queries)
 *   tsfile          read_tsfile with its reader cache (the default; the readers kept by earlier queries)
 *   tsfile_first    read_tsfile, the reader cache emptied before each query (tsfile_reader_cache(clear := true),
 *                   not timed): a first query, whose units still share one reader
 *   tsfile_nocache  read_tsfile(..., reader_cache := false): every unit opens its own reader
 * Each rep runs the sources in a rotating order; every source's answer must equal the native one. Per query and
 * source: p50 / p90 of wall milliseconds, the p50 of the per-rep ratio to native (source / native) and of the
 * per-rep speed-up over Parquet (parquet / source). --page-index builds the E2 file's page-time index
 * (FILE.tsfidx, tsf_page_index_build_file) first, which the readers of read_tsfile then use; without it the
 * index is removed, so each run states which it measured. --parts P passes parts := P to read_tsfile (default:
 * the extension's own unit count).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <duckdb.h>

#include "../bench.h"

#include <time.h>

#define NSRC 6
enum { S_NATIVE, S_PARQUET, S_PARQUET_MDC, S_TSFILE, S_TSFILE_FIRST, S_TSFILE_NOCACHE };
static const char *const SRC[NSRC] = {"native", "parquet", "parquet_mdc", "tsfile", "tsfile_first", "tsfile_nocache"};

static duckdb_connection g_con;
static long long g_parts; /* --parts: parts := of read_tsfile, 0 = not given */

static int run(const char *sql, char *answer, size_t cap)
{
    duckdb_result r;
    if (duckdb_query(g_con, sql, &r) != DuckDBSuccess) {
        fprintf(stderr, "duckdb bench: %s\n  %s\n", sql, duckdb_result_error(&r));
        duckdb_destroy_result(&r);
        return -1;
    }
    if (answer) { /* the first row as text */
        size_t o = 0;
        answer[0] = '\0';
        for (idx_t c = 0; c < duckdb_column_count(&r) && o < cap; c++) {
            char *v = duckdb_value_varchar(&r, c, 0);
            o += (size_t)snprintf(answer + o, cap - o, "%s|", v ? v : "NULL");
            duckdb_free(v);
        }
    }
    duckdb_destroy_result(&r);
    return 0;
}

/* The query of source s over [lo, hi] (or everything when lo > hi). */
static void query_of(char *sql, size_t cap, int s, const char *e2, const char *pq, int64_t lo, int64_t hi)
{
    static const char *agg = "count(*), sum(f0), min(f1), max(f2), sum(f3), min(f4), max(f5), sum(f6), max(f7)";
    int range = lo <= hi;
    char where[128] = "", args[128] = "";
    if (range) {
        snprintf(where, sizeof where, " WHERE time BETWEEN %" PRId64 " AND %" PRId64, lo, hi);
        snprintf(args, sizeof args, ", start_time := %" PRId64 ", end_time := %" PRId64, lo, hi);
    }
    if (s == S_NATIVE)
        snprintf(sql, cap, "SELECT %s FROM native%s", agg, where);
    else if (s == S_PARQUET || s == S_PARQUET_MDC)
        snprintf(sql, cap, "SELECT %s FROM read_parquet('%s')%s", agg, pq, where);
    else {
        char parts[48] = "";
        if (g_parts > 0) snprintf(parts, sizeof parts, ", parts := %lld", g_parts);
        snprintf(sql, cap, "SELECT %s FROM read_tsfile('%s'%s%s%s)", agg, e2, args, parts,
                 s == S_TSFILE_NOCACHE ? ", reader_cache := false" : "");
    }
}

/* Untimed statements around source s's query. */
static int before(int s)
{
    if (s == S_PARQUET_MDC) return run("SET parquet_metadata_cache = true", NULL, 0);
    if (s == S_TSFILE_FIRST) return run("SELECT * FROM tsfile_reader_cache(clear := true)", NULL, 0);
    return 0;
}

static int after(int s)
{
    return s == S_PARQUET_MDC ? run("RESET parquet_metadata_cache", NULL, 0) : 0;
}

/* Waits until path was last changed (mtime, ctime) more than 2.5 s ago. */
static void wait_settled(const char *path)
{
    struct stat st;
    struct timespec now;
    if (stat(path, &st) || clock_gettime(CLOCK_REALTIME, &now)) return;
    double last = (double)st.st_ctim.tv_sec + st.st_ctim.tv_nsec / 1e9;
    double m = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
    if (m > last) last = m;
    double wait = last + 2.5 - ((double)now.tv_sec + now.tv_nsec / 1e9);
    if (wait > 0) usleep((useconds_t)(wait * 1e6));
}

int main(int argc, char **argv)
{
    long long rows = bench_opt_ll(argc, argv, "--rows", 20000000);
    int threads = (int)bench_opt_ll(argc, argv, "--threads", 2), reps = (int)bench_opt_ll(argc, argv, "--reps", 7);
    int json = bench_flag(argc, argv, "--json");
    g_parts = bench_opt_ll(argc, argv, "--parts", 0);
    const char *keep = bench_opt(argc, argv, "--keep");
    char e2[512], pq[600], sql[2048];
    if (keep)
        snprintf(e2, sizeof e2, "%s", keep);
    else
        snprintf(e2, sizeof e2, "/tmp/tsf_duckdb_bench_%d.tsfile", (int)getpid());
    snprintf(pq, sizeof pq, "%s.parquet", e2);
    struct stat st;
    if (stat(e2, &st) && bench_e2_build(e2, rows)) return 1;
    if (stat(e2, &st)) return 1;
    int page_index = bench_flag(argc, argv, "--page-index");
    char idx[700];
    snprintf(idx, sizeof idx, "%s.tsfidx", e2);
    tsf_error te = {0};
    if (page_index && tsf_page_index_build_file(e2, NULL, NULL, &te)) {
        fprintf(stderr, "duckdb bench: page index: %s\n", te.message);
        return 1;
    }
    if (!page_index) unlink(idx);

    duckdb_database db;
    duckdb_config cfg;
    char *err = NULL;
    duckdb_create_config(&cfg);
    duckdb_set_config(cfg, "allow_unsigned_extensions", "true");
    if (duckdb_open_ext(NULL, &db, cfg, &err) != DuckDBSuccess || duckdb_connect(db, &g_con) != DuckDBSuccess) {
        fprintf(stderr, "duckdb bench: %s\n", err ? err : "cannot open DuckDB");
        return 1;
    }
    duckdb_destroy_config(&cfg);
    snprintf(sql, sizeof sql, "LOAD '%s'", TSF_DUCKDB_EXTENSION);
    if (run(sql, NULL, 0)) return 1;
    snprintf(sql, sizeof sql, "SET threads = %d", threads);
    if (run(sql, NULL, 0)) return 1;
    snprintf(sql, sizeof sql, "COPY (SELECT * FROM read_tsfile('%s')) TO '%s' (FORMAT parquet)", e2, pq);
    if (run(sql, NULL, 0)) return 1;
    snprintf(sql, sizeof sql, "CREATE TABLE native AS SELECT * FROM read_tsfile('%s')", e2);
    if (run(sql, NULL, 0)) return 1;
    char ans[512];
    snprintf(sql, sizeof sql, "SELECT count(*), min(time), max(time) FROM native");
    duckdb_result r;
    if (duckdb_query(g_con, sql, &r) != DuckDBSuccess) return 1;
    int64_t n = duckdb_value_int64(&r, 0, 0), tmin = duckdb_value_int64(&r, 1, 0), tmax = duckdb_value_int64(&r, 2, 0);
    duckdb_destroy_result(&r);
    struct stat pst;
    stat(pq, &pst);
    int64_t mid = tmin + (tmax - tmin) / 2, half = (tmax - tmin) / 200;
    wait_settled(e2);
    if (!json)
        printf("E2: %" PRId64 " rows, %lld bytes%s; Parquet %lld bytes; threads %d, reps %d, parts %lld\n", n,
               (long long)st.st_size, page_index ? " + page-time index" : "", (long long)pst.st_size, threads, reps,
               g_parts);

    static const char *const QN[2] = {"full", "range1"};
    double *ms = calloc((size_t)reps * NSRC, sizeof *ms), *ratio = calloc((size_t)reps * NSRC, sizeof *ratio);
    double *vspq = calloc((size_t)reps * NSRC, sizeof *vspq);
    int rc = 0;
    for (int q = 0; q < 2 && !rc; q++) {
        int64_t lo = q ? mid - half : 1, hi = q ? mid + half : 0;
        char want[512] = "";
        query_of(sql, sizeof sql, S_NATIVE, e2, pq, lo, hi);
        if (run(sql, want, sizeof want)) rc = 1; /* warm-up, and the reference answer */
        for (int s = 1; s < NSRC && !rc; s++) {
            query_of(sql, sizeof sql, s, e2, pq, lo, hi);
            if (before(s) || run(sql, ans, sizeof ans) || after(s)) rc = 1; /* warm-up */
        }
        for (int k = 0; k < reps && !rc; k++) {
            for (int j = 0; j < NSRC && !rc; j++) {
                int s = (j + k) % NSRC;
                query_of(sql, sizeof sql, s, e2, pq, lo, hi);
                if (before(s)) rc = 1;
                uint64_t t0 = bench_now_ns();
                if (!rc && run(sql, ans, sizeof ans)) rc = 1;
                ms[k * NSRC + s] = (double)(bench_now_ns() - t0) / 1e6;
                if (!rc && after(s)) rc = 1;
                if (!rc && strcmp(ans, want)) {
                    fprintf(stderr, "duckdb bench: %s answers %s, native %s\n", SRC[s], ans, want);
                    rc = 1;
                }
            }
            for (int s = 0; s < NSRC; s++) {
                ratio[k * NSRC + s] = ms[k * NSRC + s] / ms[k * NSRC];
                vspq[k * NSRC + s] = ms[k * NSRC + S_PARQUET] / ms[k * NSRC + s];
            }
        }
        for (int s = 0; s < NSRC && !rc; s++) {
            double col[256], rcol[256], pcol[256];
            int m = reps < 256 ? reps : 256;
            for (int k = 0; k < m; k++) col[k] = ms[k * NSRC + s], rcol[k] = ratio[k * NSRC + s], pcol[k] = vspq[k * NSRC + s];
            double p50 = bench_percentile(col, (size_t)m, 50), p90 = bench_percentile(col, (size_t)m, 90);
            double r50 = bench_percentile(rcol, (size_t)m, 50), v50 = bench_percentile(pcol, (size_t)m, 50);
            if (json)
                printf("{\"bench\":\"duckdb\",\"query\":\"%s\",\"source\":\"%s\",\"rows\":%" PRId64 ",\"threads\":%d,"
                       "\"page_index\":%d,\"parts\":%lld,\"reps\":%d,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"ratio_to_native_p50\":%.3f,"
                       "\"speedup_over_parquet_p50\":%.3f}\n",
                       QN[q], SRC[s], n, threads, page_index, g_parts, reps, p50, p90, r50, v50);
            else
                printf("%-7s %-15s p50 %9.2f ms  p90 %9.2f ms  x native %6.2f  parquet / this %6.2f\n", QN[q], SRC[s],
                       p50, p90, r50, v50);
        }
    }
    if (!rc) { /* what the reader cache did over the run */
        duckdb_result cr;
        if (duckdb_query(g_con, "SELECT hits, misses, stale, racy, evicted FROM tsfile_reader_cache()", &cr) ==
            DuckDBSuccess) {
            if (json)
                printf("{\"bench\":\"duckdb_reader_cache\",\"hits\":%" PRId64 ",\"misses\":%" PRId64
                       ",\"stale\":%" PRId64 ",\"racy\":%" PRId64 ",\"evicted\":%" PRId64 "}\n",
                       duckdb_value_int64(&cr, 0, 0), duckdb_value_int64(&cr, 1, 0), duckdb_value_int64(&cr, 2, 0),
                       duckdb_value_int64(&cr, 3, 0), duckdb_value_int64(&cr, 4, 0));
            else
                printf("reader cache: hits %" PRId64 ", misses %" PRId64 ", stale %" PRId64 ", racy %" PRId64
                       ", evicted %" PRId64 "\n",
                       duckdb_value_int64(&cr, 0, 0), duckdb_value_int64(&cr, 1, 0), duckdb_value_int64(&cr, 2, 0),
                       duckdb_value_int64(&cr, 3, 0), duckdb_value_int64(&cr, 4, 0));
        }
        duckdb_destroy_result(&cr);
    }
    free(vspq);
    free(ms);
    free(ratio);
    duckdb_disconnect(&g_con);
    duckdb_close(&db);
    unlink(pq);
    if (!keep) {
        unlink(e2);
        unlink(idx);
    }
    return rc;
}
