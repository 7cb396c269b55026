/*
 * arrow.c - the Arrow C stream export (include/tsf_arrow.h) against the plain query it wraps.
 *
 * usage: tsf-bench arrow [--rows N] [--threads T] [--reps R] [--select F] [--keep FILE] [--clock wall|cpu]
 *                        [--copy] [--json]
 * The E2 file of `tsf-bench read` (table "e2", 10 devices x 8 INT64 fields, TS_2DIFF + SNAPPY, 10,000-point
 * pages, N rows, default 20M), one reader on TSF_PATH_AUTO, warm cache. Each rep runs both, in alternating
 * order: `simd` - tsf_query over all 8 fields (the consumer reads the last row of every column of each
 * batch, as `tsf-bench read` does); `arrow` - tsf_arrow_stream_open with the same query options, every
 * array read the same way (time + 8 fields) and released. Whole range and a centred 1 % window (--select F
 * for only F). p50/p90 of the time of each; the per-rep ratio simd / arrow (1 = the Arrow layer costs
 * nothing; the target is >= 0.9) at its p50 and, as ratio_p90, its 10th percentile (the slow tail).
 * --clock cpu times process CPU instead of wall time (for loaded machines; with threads it sums them).
 * --copy exports with tsf_arrow_options.zero_copy = 0 (every batch copied into the array's block); the
 * default hands the query's decode buffers over where it can.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "tsf_arrow.h"

#define A_DEVICES 10
#define A_T0 1600000000000LL

static const char *COLS[8] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};

static uint64_t clock_ns(int cpu)
{
    if (!cpu) return bench_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long long run_simd(tsf_reader *r, const tsf_query_options *o, int copy, int64_t *sum, tsf_error *e)
{
    (void)copy;
    tsf_query *q;
    if (tsf_query_open(r, o, &q, e)) return -1;
    long long rows = 0;
    const tsf_batch *b;
    for (;;) {
        if (tsf_query_next(q, &b, e)) {
            rows = -1;
            break;
        }
        if (!b) break;
        size_t last = b->nrows - 1;
        *sum += b->times[last];
        for (size_t k = 0; k < b->ncolumns; k++) *sum += ((const int64_t *)b->columns[k].values)[last];
        rows += (long long)b->nrows;
    }
    tsf_query_close(q);
    return rows;
}

static long long run_arrow(tsf_reader *r, const tsf_query_options *o, int copy, int64_t *sum, tsf_error *e)
{
    tsf_arrow_options ao;
    tsf_arrow_options_init(&ao);
    ao.query = o;
    ao.zero_copy = !copy;
    struct ArrowArrayStream st;
    if (tsf_arrow_stream_open(r, &ao, &st, e)) return -1;
    long long rows = 0;
    struct ArrowArray a;
    for (;;) {
        if (st.get_next(&st, &a)) {
            snprintf(e->message, sizeof e->message, "%s", st.get_last_error(&st));
            rows = -1;
            break;
        }
        if (!a.release) break;
        int64_t last = a.length - 1;
        for (int64_t k = 0; k < a.n_children; k++) *sum += ((const int64_t *)a.children[k]->buffers[1])[last];
        rows += a.length;
        a.release(&a);
    }
    st.release(&st);
    return rows;
}

int bench_arrow(int argc, char **argv)
{
    long long nrows = bench_opt_ll(argc, argv, "--rows", 20000000);
    int reps = (int)bench_opt_ll(argc, argv, "--reps", 11), threads = (int)bench_opt_ll(argc, argv, "--threads", 1);
    int json = bench_flag(argc, argv, "--json"), copy = bench_flag(argc, argv, "--copy");
    const char *clk = bench_opt(argc, argv, "--clock");
    int cpu = clk && !strcmp(clk, "cpu");
    const char *keep = bench_opt(argc, argv, "--keep"), *sel_s = bench_opt(argc, argv, "--select");
    if (reps < 1 || nrows < A_DEVICES * 100) {
        fprintf(stderr, "arrow bench: --reps >= 1 and --rows >= 1000\n");
        return 1;
    }
    char path[256];
    snprintf(path, sizeof path, "%s", keep ? keep : "");
    if (!keep) snprintf(path, sizeof path, "/tmp/tsf-bench-arrow-e2-%ld.tsfile", (long)getpid());
    struct stat stt;
    if ((!keep || stat(path, &stt) != 0) && bench_e2_build(path, nrows)) return 1;
    tsf_reader *r = NULL;
    tsf_error e = {0};
    int rc = 1;
    double *ms[2] = {malloc((size_t)reps * sizeof(double)), malloc((size_t)reps * sizeof(double))};
    double *ratio = malloc((size_t)reps * sizeof(double));
    if (tsf_reader_open(&r, path, NULL, &e) || tsf_reader_load_index(r, &e)) {
        fprintf(stderr, "arrow bench: %s\n", e.message);
        goto out;
    }
    if (!json) {
        bench_print_machine(stdout);
        printf("E2 file: %lld rows (10 devices x 8 INT64, TS_2DIFF + SNAPPY); %d threads; %d reps, warm cache, %s "
               "time; arrow %s\n", nrows, threads, reps, cpu ? "CPU" : "wall", copy ? "copying" : "zero copy");
        printf("%-12s %10s %10s %10s %10s %10s %10s\n", "query", "simd p50", "simd p90", "arrow p50", "arrow p90",
               "ratio p50", "ratio p90");
    }
    double sels[2] = {1.0, 0.01};
    int nsel = 2;
    if (sel_s) sels[0] = atof(sel_s), nsel = 1;
    long long per = nrows / A_DEVICES;
    for (int si = 0; si < nsel; si++) {
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.table = "e2";
        o.columns = COLS;
        o.ncolumns = 8;
        o.threads = (unsigned)threads;
        if (sels[si] < 1.0) {
            long long k = (long long)(sels[si] * (double)per + 0.5), lo = (per - k) / 2;
            o.time_min = A_T0 + lo * 1000 - 500;
            o.time_max = A_T0 + (lo + k - 1) * 1000 + 500;
        }
        int64_t sum[2] = {0, 0};
        long long rows[2] = {0, 0};
        for (int k = 0; k < 2; k++) /* warm up both */
            if ((k ? run_arrow : run_simd)(r, &o, copy, &sum[k], &e) < 0) goto fail;
        for (int rep = 0; rep < reps; rep++) {
            for (int j = 0; j < 2; j++) {
                int k = (rep + j) % 2; /* which one runs first alternates */
                uint64_t t0 = clock_ns(cpu);
                rows[k] = (k ? run_arrow : run_simd)(r, &o, copy, &sum[k], &e);
                ms[k][rep] = (double)(clock_ns(cpu) - t0) / 1e6;
                if (rows[k] < 0) goto fail;
            }
            ratio[rep] = ms[0][rep] / ms[1][rep];
        }
        if (rows[0] != rows[1] || sum[0] != sum[1]) {
            fprintf(stderr, "arrow bench: the stream read %lld rows (sum %lld), the query %lld (sum %lld)\n", rows[1],
                    (long long)sum[1], rows[0], (long long)sum[0]);
            goto out;
        }
        double p[6] = {bench_percentile(ms[0], (size_t)reps, 50), bench_percentile(ms[0], (size_t)reps, 90),
                       bench_percentile(ms[1], (size_t)reps, 50), bench_percentile(ms[1], (size_t)reps, 90),
                       bench_percentile(ratio, (size_t)reps, 50), bench_percentile(ratio, (size_t)reps, 10)};
        char q[32];
        snprintf(q, sizeof q, "E2 %g%%", sels[si] * 100);
        if (json) {
            printf("{\"bench\":\"arrow\",\"query\":\"%s\",\"path\":\"simd\",\"threads\":%d,\"p50\":%.3f,\"p90\":%.3f,"
                   "\"unit\":\"ms\",\"clock\":\"%s\",\"rows\":%lld}\n",
                   q, threads, p[0], p[1], cpu ? "cpu" : "wall", rows[0]);
            printf("{\"bench\":\"arrow\",\"query\":\"%s\",\"path\":\"arrow\",\"threads\":%d,\"p50\":%.3f,\"p90\":%.3f,"
                   "\"unit\":\"ms\",\"clock\":\"%s\",\"rows\":%lld,\"ratio\":%.4f,\"ratio_p90\":%.4f,"
                   "\"zero_copy\":%d}\n",
                   q, threads, p[2], p[3], cpu ? "cpu" : "wall", rows[1], p[4], p[5], !copy);
        } else {
            printf("%-12s %10.2f %10.2f %10.2f %10.2f %10.3f %10.3f\n", q, p[0], p[1], p[2], p[3], p[4], p[5]);
        }
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "arrow bench: %s\n", e.message);
out:
    tsf_reader_close(r);
    if (!keep) unlink(path);
    free(ms[0]);
    free(ms[1]);
    free(ratio);
    return rc;
}
