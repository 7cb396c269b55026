/*
 * write.c - E4 of ../shared/BENCHMARKS.md: the TsFile writer, column-wise (tablets) against the
 * same data written row by row (the ablation).
 *
 * usage: tsf-bench write [--case A|B] [--data walk|sensor] [--aligned] [--compression C]
 *                        [--encoding E] [--rows N] [--reps R] [--threads T] [--out FILE] [--json]
 *                        [--budget-mb M] [--lz4-probe 0|1] [--gorilla-compact 0|1|2] [--path column|row]
 *                        [--setter ref|copy] [--sink file|null] [--pregen] [--each]
 * Case A: 1 device x 100 DOUBLE measurements (case B: 1000), N rows (default 1,000,000) at regular
 * 1000 ms timestamps, tablets of 5000 rows, tree model (--aligned: one aligned device). Data is
 * generated per tablet outside the timed region (walk: v += uniform(-0.5, 0.5), seed 42 + column;
 * sensor: round((20 + 5 sin(i/1000) + uniform(-0.5, 0.5)) * 100) / 100). Timed: every write call
 * plus close (index, tail, rename); no fsync. Columns go in through tsf_tablet_set_column_ref (the
 * arrays live until the write, as an Arrow caller's do); --setter copy uses tsf_tablet_set_column.
 * --sink null writes through callbacks that drop the bytes (the file output's share of the time).
 * --pregen generates every tablet before the timed runs (rows x columns x 8 bytes of memory): the
 * write calls then run back to back, so work that a writer leaves running in its threads when a
 * call returns cannot hide behind the untimed generation of the next tablet.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"

#define TABLET_ROWS 5000

typedef struct wcfg {
    int ncols;
    long long rows;
    int sensor, aligned;
    tsf_encoding enc;
    int enc_default;
    tsf_compression comp;
    const char *out;
    int json;
    int threads;
    long long budget_mb; /* 0 = the writer's default */
    int lz4_probe;       /* writer option lz4_probe */
    int gorilla_compact; /* writer option gorilla_compact */
    int copy;            /* 1: tsf_tablet_set_column (copies), 0: tsf_tablet_set_column_ref */
    int null_sink;       /* 1: --sink null: write callbacks that only count bytes (no file, no kernel copy) */
    double *pre;         /* --pregen: tablet i column k at pre + (i * ncols + k) * TABLET_ROWS */
    int64_t *pre_t;      /* --pregen: tablet i times at pre_t + i * TABLET_ROWS */
} wcfg;

/* --sink null: the writer's output is counted and dropped, to see what the file output costs. */
static int null_write(void *ud, const void *data, size_t len)
{
    (void)data;
    *(uint64_t *)ud += len;
    return 0;
}

typedef struct gen {
    bench_rng *rng; /* one per column */
    double *state;
} gen;

static void gen_tablet(const wcfg *c, gen *g, long long row0, size_t n, int64_t *times, double **cols)
{
    for (size_t r = 0; r < n; r++) times[r] = 1600000000000LL + (row0 + (long long)r) * 1000;
    for (int k = 0; k < c->ncols; k++) {
        double *v = cols[k];
        for (size_t r = 0; r < n; r++) {
            double u = bench_rng_double(&g->rng[k], -0.5, 0.5);
            if (c->sensor) {
                double i = (double)(row0 + (long long)r);
                v[r] = round((20 + 5 * sin(i / 1000.0) + u) * 100) / 100;
            } else {
                g->state[k] += u;
                v[r] = g->state[k];
            }
        }
    }
}

static void gen_reset(const wcfg *c, gen *g)
{
    for (int k = 0; k < c->ncols; k++) {
        g->rng[k].s = 42 + (uint64_t)k;
        g->state[k] = 0;
    }
}

/* CPU time of the process (all threads): under load, wall time measures the other users too. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One timed run; returns seconds (negative on failure), the CPU seconds and the file size. */
static double run_once(const wcfg *c, gen *g, int row_path, int64_t *times, double **cols, uint64_t *bytes,
                       double *cpu)
{
    uint64_t c0 = cpu_ns(), ctimed = 0;
    tsf_error err = {0};
    tsf_writer *w = NULL;
    char **names = malloc((size_t)c->ncols * sizeof *names);
    tsf_column_schema *sc = malloc((size_t)c->ncols * sizeof *sc);
    for (int k = 0; k < c->ncols; k++) {
        names[k] = malloc(16);
        snprintf(names[k], 16, "s%04d", k);
        sc[k] = (tsf_column_schema){names[k], TSF_DOUBLE, c->enc, c->comp, TSF_COLUMN_FIELD};
    }
    const char *dev = "root.bench.d0";
    double secs = -1;
    tsf_value *vals = row_path ? calloc((size_t)c->ncols, sizeof *vals) : NULL;
    tsf_tablet *t = NULL;
    remove(c->out); /* freeing the previous run's file is not part of this write */
    uint64_t t0 = bench_now_ns(), timed = 0;
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.threads = (uint32_t)c->threads;
    o.lz4_probe = c->lz4_probe;
    o.gorilla_compact = c->gorilla_compact;
    if (c->budget_mb > 0) o.memory_budget = (size_t)c->budget_mb << 20;
    uint64_t sunk = 0;
    tsf_write_callbacks cb = {sizeof cb, null_write, NULL, &sunk};
    if (c->null_sink ? tsf_writer_open_callbacks(&w, &cb, &o, &err) : tsf_writer_open(&w, c->out, &o, &err))
        goto fail;
    if (c->aligned) {
        if (tsf_writer_register_aligned(w, dev, sc, (size_t)c->ncols, &err)) goto fail;
    } else {
        for (int k = 0; k < c->ncols; k++)
            if (tsf_writer_register_series(w, dev, &sc[k], &err)) goto fail;
    }
    if (!row_path && tsf_tablet_new(w, dev, NULL, 0, TABLET_ROWS, &t, &err)) goto fail;
    timed += bench_now_ns() - t0;
    ctimed += cpu_ns() - c0;
    gen_reset(c, g);
    for (long long r0 = 0; r0 < c->rows; r0 += TABLET_ROWS) {
        size_t n = (size_t)(c->rows - r0 < TABLET_ROWS ? c->rows - r0 : TABLET_ROWS);
        if (c->pre) { /* generated before the run */
            size_t ti = (size_t)(r0 / TABLET_ROWS);
            times = c->pre_t + ti * TABLET_ROWS;
            for (int k = 0; k < c->ncols; k++) cols[k] = c->pre + (ti * (size_t)c->ncols + (size_t)k) * TABLET_ROWS;
        } else {
            gen_tablet(c, g, r0, n, times, cols); /* not timed */
        }
        t0 = bench_now_ns();
        c0 = cpu_ns();
        if (!row_path) {
            if (tsf_tablet_set_times(t, times, n, &err)) goto fail;
            for (int k = 0; k < c->ncols; k++)
                if ((c->copy ? tsf_tablet_set_column : tsf_tablet_set_column_ref)(t, (size_t)k, cols[k], NULL, n, &err))
                    goto fail;
            if (tsf_writer_write_tablet(w, t, &err)) goto fail;
        } else {
            for (size_t r = 0; r < n; r++) {
                for (int k = 0; k < c->ncols; k++) vals[k].v.d = cols[k][r];
                if (tsf_writer_write_row(w, dev, times[r], NULL, vals, (size_t)c->ncols, &err)) goto fail;
            }
        }
        timed += bench_now_ns() - t0;
        ctimed += cpu_ns() - c0;
    }
    t0 = bench_now_ns();
    c0 = cpu_ns();
    tsf_tablet_free(t);
    t = NULL;
    *bytes = tsf_writer_bytes_written(w);
    tsf_status s = tsf_writer_close(w, &err);
    w = NULL;
    if (s) goto fail;
    if (c->null_sink) *bytes = sunk;
    timed += bench_now_ns() - t0;
    ctimed += cpu_ns() - c0;
    secs = (double)timed / 1e9;
    *cpu = (double)ctimed / 1e9;
    goto done;
fail:
    fprintf(stderr, "write bench: %s\n", err.message);
    tsf_tablet_free(t);
    tsf_writer_abort(w);
done:
    for (int k = 0; k < c->ncols; k++) free(names[k]);
    free(names);
    free(sc);
    free(vals);
    return secs;
}

int bench_write_case_file(const char *path, int ncols, long long rows, int sensor, int aligned, uint64_t *bytes)
{
    wcfg c = {.ncols = ncols, .rows = rows, .sensor = sensor, .aligned = aligned, .enc = TSF_ENC_GORILLA,
              .enc_default = 1, .comp = TSF_LZ4, .out = path, .lz4_probe = 1};
    gen g = {.rng = calloc((size_t)ncols, sizeof(bench_rng)), .state = calloc((size_t)ncols, sizeof(double))};
    int64_t *times = malloc(TABLET_ROWS * sizeof *times);
    double **cols = malloc((size_t)ncols * sizeof *cols);
    for (int k = 0; k < ncols; k++) cols[k] = malloc(TABLET_ROWS * sizeof(double));
    double cpu = 0;
    double s = run_once(&c, &g, 0, times, cols, bytes, &cpu);
    for (int k = 0; k < ncols; k++) free(cols[k]);
    free(cols);
    free(times);
    free(g.rng);
    free(g.state);
    return s < 0 ? -1 : 0;
}

int bench_write(int argc, char **argv)
{
    wcfg c = {0};
    const char *cs = bench_opt(argc, argv, "--case");
    c.ncols = cs && (cs[0] == 'B' || cs[0] == 'b') ? 1000 : 100;
    const char *data = bench_opt(argc, argv, "--data");
    c.sensor = data && strcmp(data, "sensor") == 0;
    c.aligned = bench_flag(argc, argv, "--aligned");
    c.rows = bench_opt_ll(argc, argv, "--rows", 1000000);
    int reps = (int)bench_opt_ll(argc, argv, "--reps", 3);
    int threads = (int)bench_opt_ll(argc, argv, "--threads", 1);
    c.json = bench_flag(argc, argv, "--json");
    c.out = bench_opt(argc, argv, "--out");
    if (!c.out) c.out = "/tmp/tsf-bench-write.tsfile";
    c.comp = TSF_LZ4;
    const char *comp = bench_opt(argc, argv, "--compression");
    if (comp && tsf_compression_parse(comp, &c.comp)) {
        fprintf(stderr, "write bench: unknown compression %s\n", comp);
        return 1;
    }
    c.enc = TSF_ENC_GORILLA; /* Java 2.x default for DOUBLE */
    c.enc_default = 1;
    const char *enc = bench_opt(argc, argv, "--encoding");
    if (enc && strcmp(enc, "default") != 0) {
        if (tsf_encoding_parse(enc, &c.enc)) { /* a TsFile name, or auto (TSF_ENCODING_AUTO) */
            fprintf(stderr, "write bench: unknown encoding %s\n", enc);
            return 1;
        }
        c.enc_default = 0;
    }
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "write bench: --threads %d: 1..64\n", threads);
        return 1;
    }
    c.threads = threads;
    c.budget_mb = bench_opt_ll(argc, argv, "--budget-mb", 0);
    c.lz4_probe = (int)bench_opt_ll(argc, argv, "--lz4-probe", 1);
    c.gorilla_compact = (int)bench_opt_ll(argc, argv, "--gorilla-compact", 1);
    const char *setter = bench_opt(argc, argv, "--setter");
    c.copy = setter && strcmp(setter, "copy") == 0;
    const char *sink = bench_opt(argc, argv, "--sink");
    c.null_sink = sink && strcmp(sink, "null") == 0;
    if (reps < 1) reps = 1;
    if (c.rows < 1) c.rows = 1;
    gen g;
    g.rng = calloc((size_t)c.ncols, sizeof *g.rng);
    g.state = calloc((size_t)c.ncols, sizeof *g.state);
    int64_t *times = malloc(TABLET_ROWS * sizeof *times);
    double **cols = malloc((size_t)c.ncols * sizeof *cols);
    for (int k = 0; k < c.ncols; k++) cols[k] = malloc(TABLET_ROWS * sizeof(double));
    double points = (double)c.rows * c.ncols;
    double **cols_own = cols; /* --pregen points cols[] into c.pre during the runs */
    if (bench_flag(argc, argv, "--pregen")) {
        size_t nt = (size_t)((c.rows + TABLET_ROWS - 1) / TABLET_ROWS);
        c.pre = malloc(nt * (size_t)c.ncols * TABLET_ROWS * sizeof *c.pre);
        c.pre_t = malloc(nt * TABLET_ROWS * sizeof *c.pre_t);
        cols = malloc((size_t)c.ncols * sizeof *cols);
        if (!c.pre || !c.pre_t || !cols) {
            fprintf(stderr, "write bench: --pregen: not enough memory for %lld rows\n", c.rows);
            return 1;
        }
        gen_reset(&c, &g);
        for (size_t i = 0; i < nt; i++) {
            long long r0 = (long long)i * TABLET_ROWS;
            size_t n = (size_t)(c.rows - r0 < TABLET_ROWS ? c.rows - r0 : TABLET_ROWS);
            gen_tablet(&c, &g, r0, n, times, cols_own);
            memcpy(c.pre_t + i * TABLET_ROWS, times, n * sizeof *times);
            for (int k = 0; k < c.ncols; k++)
                memcpy(c.pre + (i * (size_t)c.ncols + (size_t)k) * TABLET_ROWS, cols_own[k], n * sizeof(double));
        }
    }
    if (!c.json) {
        bench_print_machine(stdout);
        printf("E4 write: case %s (%d x %lld rows, %s), %s, %s, %s; tablets of %d rows (setter %s); %d threads; %d reps\n",
               c.ncols == 1000 ? "B" : "A", c.ncols, c.rows, c.aligned ? "aligned" : "non-aligned",
               c.sensor ? "sensor" : "walk", tsf_encoding_name(c.enc), tsf_compression_name(c.comp), TABLET_ROWS,
               c.copy ? "copy" : "ref", threads, reps);
        printf("%-7s %12s %12s %12s %14s %12s %14s\n", "path", "p50 ms", "p50 Mpts/s", "p90 Mpts/s", "file bytes",
               "bytes/point", "best cpu ms");
    }
    int rc = 0;
    const char *only = bench_opt(argc, argv, "--path"); /* column | row: run one path only */
    int each = bench_flag(argc, argv, "--each");         /* every run's time on stderr */
    for (int row_path = 0; row_path < 2; row_path++) {
        if (only && strcmp(only, row_path ? "row" : "column") != 0) continue;
        double *rate = malloc((size_t)reps * sizeof *rate), *ms = malloc((size_t)reps * sizeof *ms);
        uint64_t bytes = 0;
        double best_cpu = 0;
        for (int r = 0; r < reps; r++) {
            double cpu = 0;
            double s = run_once(&c, &g, row_path, times, cols, &bytes, &cpu);
            if (r == 0 || cpu < best_cpu) best_cpu = cpu;
            if (s < 0) {
                rc = 1;
                break;
            }
            rate[r] = points / s / 1e6;
            ms[r] = s * 1e3;
            if (each) fprintf(stderr, "  rep %d: %.1f ms, %.1f M points/s, cpu %.1f ms\n", r + 1, ms[r], rate[r], cpu * 1e3);
        }
        if (rc) {
            free(rate);
            free(ms);
            break;
        }
        struct stat st;
        if (!c.null_sink && stat(c.out, &st) == 0) bytes = (uint64_t)st.st_size;
        /* p90 of a rate = the rate 90% of runs reach: the 10th percentile */
        double p50 = bench_percentile(rate, (size_t)reps, 50), p90 = bench_percentile(rate, (size_t)reps, 10);
        double bpp = (double)bytes / points;
        if (c.json)
            printf("{\"bench\":\"write\",\"case\":\"%s\",\"data\":\"%s\",\"aligned\":%s,\"encoding\":\"%s\","
                   "\"compression\":\"%s\",\"threads\":%d,\"path\":\"%s\",\"p50\":%.3f,\"p90\":%.3f,"
                   "\"unit\":\"M points/s\",\"bytes_per_point\":%.4f,\"rows\":%lld,\"file_bytes\":%llu,"
                   "\"setter\":\"%s\",\"pregen\":%s}\n",
                   c.ncols == 1000 ? "B" : "A", c.sensor ? "sensor" : "walk", c.aligned ? "true" : "false",
                   c.enc_default ? "default" : c.enc == TSF_ENCODING_AUTO ? "auto" : tsf_encoding_name(c.enc),
                   tsf_compression_name(c.comp), threads,
                   row_path ? "row" : "column", p50, p90, bpp, c.rows, (unsigned long long)bytes,
                   c.copy ? "copy" : "ref", c.pre ? "true" : "false");
        else
            printf("%-7s %12.1f %12.1f %12.1f %14llu %12.3f %14.1f\n", row_path ? "row" : "column",
                   bench_percentile(ms, (size_t)reps, 50), p50, p90, (unsigned long long)bytes, bpp, best_cpu * 1e3);
        free(rate);
        free(ms);
    }
    if (cols != cols_own) free(cols);
    free(c.pre);
    free(c.pre_t);
    for (int k = 0; k < c.ncols; k++) free(cols_own[k]);
    free(cols_own);
    free(times);
    free(g.rng);
    free(g.state);
    return rc;
}
