/*
 * dataset.c - tsf-bench dataset: grouped aggregation over a dataset of many files (tsf_dataset_aggregate)
 * against the same scan with its batches discarded (the floor), by thread count, files in flight and source.
 *
 * usage: tsf-bench dataset [--files N] [--rows R] [--reps K] [--slow-reps K] [--dir D] [--queries LIST]
 *                          [--sources LIST] [--latency-ms MS] [--mbps MB] [--pread | --mmap] [--json]
 *
 * Data (generated once into D, default /tmp/tsf-bench-dataset-<files>x<rows>, kept for later runs): N files
 * (16) of table `ds`, each 10 devices (TAG `device`, d00..d09) x R rows (200,000) at 1 s, file i covering
 * the i-th consecutive time range, 8 FIELDs f0..f3 INT64 (TS_2DIFF) and f4..f7 DOUBLE (GORILLA), LZ4: the
 * writer's defaults; W0 random walks seeded per file, device and field. The same rows also as a tree-model
 * copy (aligned devices root.ds.d00..d09) in D/tree.
 *
 * Queries (windows of 1 h from time 0, by device, count / sum / min / max / mean of every field):
 *   Q1       every row of every file;
 *   Q2       the middle 10 % of the time range, devices d00..d02;
 *   Q3       where f0 > x, x the 99th percentile of a 1-in-16 sample of f0 (about 1 % of the rows);
 *   Q1-tree  Q1 on the tree-model copy;
 *   Q4       by device x 1-day windows over every row: whole pages and chunks answered from their statistics;
 *   Q4-decode  Q4 with force_decode (every value decoded).
 * Local files are read as the dataset reads them by default (tsf_reader_options.use_pread -1: pread); --pread
 * forces pread (use_pread 1), --mmap maps them (use_pread 0).
 * Sources: local-warm (page cache warm), local-cold (each file's pages dropped with posix_fadvise before each
 * repetition), remote-sim (read callbacks over pread that take 5 ms + len / 200 MB/s per request, each
 * request on its own: a store whose latency and per-request bandwidth bound a read).
 *
 * Rows (JSON: bench, query, path, threads, files_at_once, source, p50, p90, unit, ratio), p50/p90 over reps:
 *   scan   ms; ratio = the same query's scan at 1 thread, files_at_once 1, same source / this (speed-up)
 *   fold   ms; ratio = fold / scan at the same settings (the aggregation's cost over the floor)
 *   scan-cpu, fold-cpu  CPU time of the process (all threads) during the scan / the fold, ms; fold-cpu's
 *          ratio = fold-cpu / scan-cpu (less sensitive than wall time to other processes on the machine)
 *   fold-rate  M rows/s of the fold (a row: 8 fields); ratio = this / the 1-thread, files_at_once 1 fold's
 *   work   ms inside the aggregation's fold calls, summed over workers; ratio = work / fold
 *   busy-wN  share of the fold's wall time worker N was busy (file start to its last fold call); ratio =
 *          this share / the largest share
 *   vs-Q1  (Q2 only) Q1's fold / Q2's fold at the same settings, unit x
 *   vs-decode  (Q4 only) Q4-decode's fold / Q4's fold at the same settings, unit x
 *   from-stats  share of the values taken from statistics (Q4, Q4-decode); ratio 1
 *   peak-rss  MiB (getrusage; includes the generation when this run generated the files); ratio = / data MiB
 * local-warm runs threads 1 and 2 (files_at_once = threads) and files_at_once 2, 4, 8 at 1 thread; the
 * other sources files_at_once 1, 2, 4, 8 at 1 thread (fold rows only, --slow-reps repetitions, Q1 and Q2:
 * Q3 reads Q1's bytes).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define DS_DEVICES 10
#define DS_FIELDS 8
#define DS_T0 1600000000000LL
#define DS_HOUR 3600000LL
#define DS_DAY (24 * DS_HOUR)

typedef struct ds_cfg {
    int files, reps, slow_reps, json, use_pread;
    long long rows;
    char dir[512];
    const char *queries, *sources;
    double latency_ms, mbps;
    long long threshold; /* Q3's x */
    double data_mib;
} ds_cfg;

static const char *FIELDS[DS_FIELDS] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};

static void fail_msg(const char *what, const tsf_error *err)
{
    fprintf(stderr, "tsf-bench dataset: %s: %s\n", what, err->message);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Writes file i of the table (tree = 0) or tree-model copy; appends f0's 1-in-16 sample. */
static int gen_file(const ds_cfg *c, int tree, int i, long long *sample, size_t *ns)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s/part-%02d.tsfile", c->dir, tree ? "tree" : "table", i);
    tsf_column_schema sc[1 + DS_FIELDS];
    sc[0] = (tsf_column_schema){"device", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG};
    for (int f = 0; f < DS_FIELDS; f++)
        sc[1 + f] = (tsf_column_schema){FIELDS[f], f < 4 ? TSF_INT64 : TSF_DOUBLE,
                                        f < 4 ? TSF_ENC_TS_2DIFF : TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_error err = {0};
    tsf_writer *w = NULL;
    tsf_tablet *t = NULL;
    size_t per = (size_t)c->rows, cap = 8192;
    int64_t *times = malloc(per * sizeof *times);
    int64_t *iv = malloc(per * 4 * sizeof *iv);
    double *dv = malloc(per * 4 * sizeof *dv);
    tsf_bytes *tag = malloc(cap * sizeof *tag);
    int rc = -1;
    if (!times || !iv || !dv || !tag) goto out;
    if (tsf_writer_open(&w, path, NULL, &err)) goto fail;
    if (!tree && tsf_writer_register_table(w, "ds", sc, 1 + DS_FIELDS, &err)) goto fail;
    for (int d = 0; d < DS_DEVICES; d++) {
        char name[32];
        snprintf(name, sizeof name, tree ? "root.ds.d%02d" : "d%02d", d);
        if (tree && tsf_writer_register_aligned(w, name, sc + 1, DS_FIELDS, &err)) goto fail;
        if (tsf_tablet_new(w, tree ? name : "ds", NULL, 0, cap, &t, &err)) goto fail;
        for (size_t r = 0; r < cap; r++) tag[r] = (tsf_bytes){(const uint8_t *)name, strlen(name)};
        for (size_t r = 0; r < per; r++) times[r] = DS_T0 + ((long long)i * c->rows + (long long)r) * 1000;
        uint64_t seed = 1000003ull * (uint64_t)i + 101ull * (uint64_t)d;
        for (int f = 0; f < 4; f++) bench_w0_int64(iv + (size_t)f * per, per, seed + (uint64_t)f);
        for (int f = 0; f < 4; f++) bench_w0_double(dv + (size_t)f * per, per, seed + 4 + (uint64_t)f);
        if (sample)
            for (size_t r = 0; r < per; r += 16) sample[(*ns)++] = iv[r];
        for (size_t r0 = 0; r0 < per; r0 += cap) {
            size_t n = per - r0 < cap ? per - r0 : cap;
            size_t col = 0;
            if (tsf_tablet_set_times(t, times + r0, n, &err)) goto fail;
            if (!tree && tsf_tablet_set_column(t, col++, tag, NULL, n, &err)) goto fail;
            for (int f = 0; f < DS_FIELDS; f++) {
                const void *v = f < 4 ? (const void *)(iv + (size_t)f * per + r0)
                                      : (const void *)(dv + (size_t)(f - 4) * per + r0);
                if (tsf_tablet_set_column(t, col++, v, NULL, n, &err)) goto fail;
            }
            if (tsf_writer_write_tablet(w, t, &err)) goto fail;
        }
        tsf_tablet_free(t);
        t = NULL;
    }
    tsf_status s = tsf_writer_close(w, &err);
    w = NULL;
    if (s) goto fail;
    rc = 0;
    goto out;
fail:
    fail_msg(path, &err);
    tsf_tablet_free(t);
    tsf_writer_abort(w);
out:
    free(times);
    free(iv);
    free(dv);
    free(tag);
    return rc;
}

/* The files of D, generated unless D/manifest says they are there (*made = 0); sets c->threshold. */
static int generate(ds_cfg *c, int *made)
{
    *made = 0;
    char path[600];
    snprintf(path, sizeof path, "%s/manifest", c->dir);
    FILE *m = fopen(path, "r");
    if (m) {
        int files = 0;
        long long rows = 0, x = 0;
        int ok = fscanf(m, "files %d rows %lld threshold %lld", &files, &rows, &x) == 3 && files == c->files &&
                 rows == c->rows;
        fclose(m);
        if (ok) {
            c->threshold = x;
            return 0;
        }
    }
    for (const char *sub = ""; sub; sub = !*sub ? "/table" : !strcmp(sub, "/table") ? "/tree" : NULL) {
        snprintf(path, sizeof path, "%s%s", c->dir, sub);
        if (mkdir(path, 0755) && errno != EEXIST) {
            fprintf(stderr, "tsf-bench dataset: cannot create %s\n", path);
            return -1;
        }
    }
    size_t ns = 0;
    long long *sample = malloc(((size_t)c->rows / 16 + 1) * DS_DEVICES * (size_t)c->files * sizeof *sample);
    if (!sample) return -1;
    for (int i = 0; i < c->files; i++)
        if (gen_file(c, 0, i, sample, &ns) || gen_file(c, 1, i, NULL, NULL)) {
            free(sample);
            return -1;
        }
    qsort(sample, ns, sizeof *sample, cmp_ll);
    c->threshold = ns ? sample[(size_t)((double)ns * 0.99)] : 0;
    free(sample);
    snprintf(path, sizeof path, "%s/manifest", c->dir);
    m = fopen(path, "w");
    if (!m) return -1;
    fprintf(m, "files %d rows %lld threshold %lld\n", c->files, c->rows, c->threshold);
    fclose(m);
    *made = 1;
    return 0;
}

/* ---- sources ------------------------------------------------------------------------------- */

typedef struct sim_file {
    int fd;
    double latency_ns, ns_per_byte;
} sim_file;

static int sim_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    sim_file *f = ud;
    uint64_t t0 = bench_now_ns();
    size_t got = 0;
    while (got < len) {
        ssize_t k = pread(f->fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    uint64_t want = (uint64_t)(f->latency_ns + f->ns_per_byte * (double)len), el = bench_now_ns() - t0;
    if (el < want) {
        uint64_t d = want - el;
        struct timespec ts = {(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)};
        while (nanosleep(&ts, &ts) && errno == EINTR) {
        }
    }
    return 0;
}

static int sim_open(void *ctx, const char *path, tsf_read_callbacks *cb)
{
    const ds_cfg *c = ctx;
    sim_file *f = malloc(sizeof *f);
    struct stat st;
    if (!f) return -1;
    f->fd = open(path, O_RDONLY);
    if (f->fd < 0 || fstat(f->fd, &st)) {
        if (f->fd >= 0) close(f->fd);
        free(f);
        return -1;
    }
    f->latency_ns = c->latency_ms * 1e6;
    f->ns_per_byte = 1e9 / (c->mbps * 1e6);
    cb->struct_size = sizeof *cb;
    cb->pread = sim_pread;
    cb->size = (uint64_t)st.st_size;
    cb->ud = f;
    return 0;
}

static void sim_close(void *ctx, void *ud)
{
    (void)ctx;
    sim_file *f = ud;
    close(f->fd);
    free(f);
}

static void drop_cache(tsf_dataset *ds)
{
    for (size_t i = 0; i < tsf_dataset_file_count(ds); i++) {
        tsf_dataset_file_info fi;
        tsf_error e = {0};
        if (!tsf_dataset_file(ds, i, &fi, &e)) bench_drop_file(fi.path);
    }
}

/* ---- runs ---------------------------------------------------------------------------------- */

typedef struct scan_acc {
    uint64_t rows;
} scan_acc;

static void *scan_init(void *ctx)
{
    (void)ctx;
    return calloc(1, sizeof(scan_acc));
}

static int scan_fold(void *ctx, void *acc, const tsf_dataset_batch *b)
{
    (void)ctx;
    ((scan_acc *)acc)->rows += b->rows.nrows;
    return 0;
}

static int scan_merge(void *ctx, void *into, void *from)
{
    (void)ctx;
    ((scan_acc *)into)->rows += ((scan_acc *)from)->rows;
    return 0;
}

static void scan_free(void *ctx, void *acc)
{
    (void)ctx;
    free(acc);
}

typedef struct query_def {
    const char *name;
    int tree;
    tsf_dataset *ds;
    tsf_dataset_query_options o;
    tsf_dataset_agg_options ao;
    const char *devs[3];
    tsf_filter *where;
} query_def;

/* Times of one run setting (reps values each) and the fold's per-worker busy shares at its p50. */
typedef struct run_res {
    double *scan, *fold, *work, *scan_cpu, *fold_cpu;
    double busy[64];
    unsigned workers;
    uint64_t rows;
    int have_scan;
    double from_stats; /* share of the values taken from statistics (the last repetition) */
} run_res;

/* CPU time of the process (every thread), ms. */
static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static int run_one(const ds_cfg *c, query_def *q, const char *source, unsigned threads, unsigned k, int reps,
                   int do_scan, run_res *rr)
{
    tsf_error err = {0};
    q->o.threads = threads;
    q->o.files_at_once = k;
    int cold = !strcmp(source, "local-cold");
    rr->have_scan = do_scan;
    rr->workers = 0;
    for (int r = 0; r < reps; r++) {
        if (do_scan) {
            if (cold) drop_cache(q->ds);
            tsf_dataset_fold_callbacks cb = {sizeof cb, scan_init, scan_fold, scan_merge, scan_free, NULL};
            void *res = NULL;
            double c0 = cpu_ms();
            uint64_t t0 = bench_now_ns();
            if (tsf_dataset_fold(q->ds, &q->o, &cb, &res, NULL, &err)) {
                fail_msg("scan", &err);
                return -1;
            }
            rr->scan[r] = (double)(bench_now_ns() - t0) / 1e6;
            rr->scan_cpu[r] = cpu_ms() - c0;
            rr->rows = ((scan_acc *)res)->rows;
            scan_free(NULL, res);
        }
        if (cold) drop_cache(q->ds);
        tsf_dataset_agg_result *res = NULL;
        double c0 = cpu_ms();
        uint64_t t0 = bench_now_ns();
        if (tsf_dataset_aggregate(q->ds, &q->o, &q->ao, &res, &err)) {
            fail_msg("aggregate", &err);
            return -1;
        }
        uint64_t wall = bench_now_ns() - t0;
        rr->fold_cpu[r] = cpu_ms() - c0;
        rr->fold[r] = (double)wall / 1e6;
        tsf_dataset_agg_stats st;
        st.struct_size = sizeof st;
        if (tsf_dataset_agg_result_stats(res, &st, &err)) {
            fail_msg("aggregate stats", &err);
            tsf_dataset_agg_result_free(res);
            return -1;
        }
        rr->work[r] = (double)st.fold_ns / 1e6;
        uint64_t pts = st.points_from_stats + st.points_decoded;
        rr->from_stats = pts ? (double)st.points_from_stats / (double)pts : 0;
        if (!do_scan) rr->rows = st.values / DS_FIELDS;
        if (r == reps / 2) { /* the shares of the middle repetition */
            rr->workers = st.workers;
            for (unsigned w = 0; w < st.workers; w++) rr->busy[w] = (double)st.worker_busy_ns[w] / (double)wall;
        }
        tsf_dataset_agg_result_free(res);
    }
    return 0;
}

static void row(const ds_cfg *c, const char *query, const char *path, unsigned threads, unsigned k,
                const char *source, double p50, double p90, const char *unit, double ratio)
{
    if (c->json)
        printf("{\"bench\":\"dataset\",\"query\":\"%s\",\"path\":\"%s\",\"threads\":%u,\"files_at_once\":%u,"
               "\"source\":\"%s\",\"p50\":%.4f,\"p90\":%.4f,\"unit\":\"%s\",\"ratio\":%.4f}\n",
               query, path, threads, k, source, p50, p90, unit, ratio);
    else
        printf("%-8s %-10s %3u %3u %-11s %12.3f %12.3f %-8s %8.3f\n", query, path, threads, k, source, p50, p90,
               unit, ratio);
    fflush(stdout);
}

/* Runs one query over the settings of one source; q1_fold: Q1's fold p50 per setting (filled for Q1, read
 * for Q2), indexed by the setting's position; q4_fold the same for Q4-decode, read for Q4. */
static int run_query(const ds_cfg *c, query_def *q, const char *source, double *q1_fold, double *q4_fold)
{
    int slow = strcmp(source, "local-warm") != 0;
    int reps = slow ? c->slow_reps : c->reps;
    typedef struct setting {
        unsigned threads, k;
    } setting;
    setting set[6];
    int nset = 0;
    set[nset++] = (setting){1, 1};
    if (!slow) set[nset++] = (setting){2, 2};
    set[nset++] = (setting){1, 2};
    set[nset++] = (setting){1, 4};
    set[nset++] = (setting){1, 8};
    run_res rr;
    memset(&rr, 0, sizeof rr);
    rr.scan = calloc((size_t)reps, sizeof(double));
    rr.fold = calloc((size_t)reps, sizeof(double));
    rr.work = calloc((size_t)reps, sizeof(double));
    rr.scan_cpu = calloc((size_t)reps, sizeof(double));
    rr.fold_cpu = calloc((size_t)reps, sizeof(double));
    int rc = -1;
    if (!rr.scan || !rr.fold || !rr.work || !rr.scan_cpu || !rr.fold_cpu) goto out;
    if (!slow && run_one(c, q, source, 1, 1, 1, 1, &rr)) goto out; /* warm the cache and the allocator */
    double scan1 = 0, fold1 = 0;
    for (int s = 0; s < nset; s++) {
        unsigned th = set[s].threads, k = set[s].k;
        int do_scan = !slow;
        if (run_one(c, q, source, th, k, reps, do_scan, &rr)) goto out;
        double f50 = bench_percentile(rr.fold, (size_t)reps, 50), f90 = bench_percentile(rr.fold, (size_t)reps, 90);
        double rate = (double)rr.rows / (f50 / 1e3) / 1e6, rate90 = (double)rr.rows / (f90 / 1e3) / 1e6;
        if (s == 0) fold1 = f50;
        if (do_scan) {
            double s50 = bench_percentile(rr.scan, (size_t)reps, 50);
            if (s == 0) scan1 = s50;
            row(c, q->name, "scan", th, k, source, s50, bench_percentile(rr.scan, (size_t)reps, 90), "ms",
                scan1 / s50);
            row(c, q->name, "fold", th, k, source, f50, f90, "ms", f50 / s50);
            double sc = bench_percentile(rr.scan_cpu, (size_t)reps, 50), fc = bench_percentile(rr.fold_cpu, (size_t)reps, 50);
            row(c, q->name, "scan-cpu", th, k, source, sc, bench_percentile(rr.scan_cpu, (size_t)reps, 90), "ms", 1);
            row(c, q->name, "fold-cpu", th, k, source, fc, bench_percentile(rr.fold_cpu, (size_t)reps, 90), "ms",
                sc > 0 ? fc / sc : 0);
        } else {
            row(c, q->name, "fold", th, k, source, f50, f90, "ms", fold1 / f50);
        }
        row(c, q->name, "fold-rate", th, k, source, rate, rate90, "Mrows/s", fold1 / f50);
        double w50 = bench_percentile(rr.work, (size_t)reps, 50);
        row(c, q->name, "work", th, k, source, w50, bench_percentile(rr.work, (size_t)reps, 90), "ms", w50 / f50);
        double top = 0;
        for (unsigned w = 0; w < rr.workers; w++)
            if (rr.busy[w] > top) top = rr.busy[w];
        for (unsigned w = 0; w < rr.workers && th > 1; w++) {
            char name[16];
            snprintf(name, sizeof name, "busy-w%u", w);
            row(c, q->name, name, th, k, source, rr.busy[w], rr.busy[w], "share", top > 0 ? rr.busy[w] / top : 0);
        }
        if (q1_fold && !strcmp(q->name, "Q1")) q1_fold[s] = f50;
        if (q1_fold && !strcmp(q->name, "Q2") && q1_fold[s] > 0)
            row(c, q->name, "vs-Q1", th, k, source, q1_fold[s] / f50, q1_fold[s] / f90, "x", q1_fold[s] / f50);
        if (!strncmp(q->name, "Q4", 2))
            row(c, q->name, "from-stats", th, k, source, rr.from_stats, rr.from_stats, "share", 1);
        if (q4_fold && !strcmp(q->name, "Q4-decode")) q4_fold[s] = f50;
        if (q4_fold && !strcmp(q->name, "Q4") && q4_fold[s] > 0)
            row(c, q->name, "vs-decode", th, k, source, q4_fold[s] / f50, q4_fold[s] / f90, "x", q4_fold[s] / f50);
    }
    rc = 0;
out:
    free(rr.scan);
    free(rr.fold);
    free(rr.work);
    free(rr.scan_cpu);
    free(rr.fold_cpu);
    return rc;
}

static int has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static tsf_dataset *open_ds(const ds_cfg *c, const char *sub, int remote)
{
    char dir[600];
    tsf_error err = {0};
    snprintf(dir, sizeof dir, "%s/%s", c->dir, sub);
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.use_pread = c->use_pread; /* -1 / 0 / 1 */
    o.reader = &ro;
    const char *paths[64];
    char names[64][640];
    size_t n = 1;
    paths[0] = dir;
    if (remote) { /* named files: the source does not expand directories */
        o.open_source = sim_open;
        o.close_source = sim_close;
        o.source_ctx = (void *)c;
        n = 0;
        for (int i = 0; i < c->files && i < 64; i++) {
            snprintf(names[i], sizeof names[i], "%s/part-%02d.tsfile", dir, i);
            paths[n++] = names[i];
        }
    }
    tsf_dataset *ds = NULL;
    if (tsf_dataset_open(&ds, paths, n, &o, &err)) {
        fail_msg(dir, &err);
        return NULL;
    }
    return ds;
}

int bench_dataset(int argc, char **argv)
{
    ds_cfg c;
    memset(&c, 0, sizeof c);
    c.files = (int)bench_opt_ll(argc, argv, "--files", 16);
    c.rows = bench_opt_ll(argc, argv, "--rows", 200000);
    c.reps = (int)bench_opt_ll(argc, argv, "--reps", 5);
    c.slow_reps = (int)bench_opt_ll(argc, argv, "--slow-reps", 3);
    c.json = bench_flag(argc, argv, "--json");
    c.use_pread = bench_flag(argc, argv, "--pread") ? 1 : bench_flag(argc, argv, "--mmap") ? 0 : -1;
    c.latency_ms = (double)bench_opt_ll(argc, argv, "--latency-ms", 5);
    c.mbps = (double)bench_opt_ll(argc, argv, "--mbps", 200);
    c.queries = bench_opt(argc, argv, "--queries") ? bench_opt(argc, argv, "--queries") : "Q1,Q2,Q3,Q1-tree,Q4-decode,Q4";
    c.sources = bench_opt(argc, argv, "--sources") ? bench_opt(argc, argv, "--sources")
                                                   : "local-warm,local-cold,remote-sim";
    if (c.files < 1 || c.files > 64 || c.rows < 1 || c.reps < 1 || c.slow_reps < 1 || c.mbps <= 0) {
        fprintf(stderr, "tsf-bench dataset: --files 1..64, --rows, --reps, --slow-reps, --mbps > 0\n");
        return 2;
    }
    if (bench_opt(argc, argv, "--dir"))
        snprintf(c.dir, sizeof c.dir, "%s", bench_opt(argc, argv, "--dir"));
    else
        snprintf(c.dir, sizeof c.dir, "/tmp/tsf-bench-dataset-%dx%lld", c.files, c.rows);
    if (mkdir(c.dir, 0755) && errno != EEXIST) {
        fprintf(stderr, "tsf-bench dataset: cannot create %s\n", c.dir);
        return 1;
    }
    uint64_t g0 = bench_now_ns();
    int made = 0;
    if (generate(&c, &made)) return 1;
    double gen_s = (double)(bench_now_ns() - g0) / 1e9;
    int rc = 1;
    tsf_dataset *table = open_ds(&c, "table", 0), *tree = open_ds(&c, "tree", 0);
    tsf_dataset *remote = has(c.sources, "remote-sim") ? open_ds(&c, "table", 1) : NULL;
    if (!table || !tree || (has(c.sources, "remote-sim") && !remote)) goto out;
    for (size_t i = 0; i < tsf_dataset_file_count(table); i++) {
        tsf_dataset_file_info fi;
        tsf_error e = {0};
        if (!tsf_dataset_file(table, i, &fi, &e)) c.data_mib += (double)fi.size / 1048576.0;
    }
    if (!c.json) {
        bench_print_machine(stdout);
        printf("dataset: %d files x %d devices x %lld rows x %d fields (4 INT64 TS_2DIFF, 4 DOUBLE GORILLA, LZ4), "
               "%.1f MiB, in %s (%s %.1f s); Q3: f0 > %lld; reps %d (slow sources %d)\n",
               c.files, DS_DEVICES, c.rows, DS_FIELDS, c.data_mib, c.dir, made ? "generated in" : "reused,",
               gen_s, c.threshold, c.reps, c.slow_reps);
        printf("%-8s %-10s %3s %3s %-11s %12s %12s %-8s %8s\n", "query", "path", "thr", "k", "source", "p50",
               "p90", "unit", "ratio");
    }
    int64_t span = (int64_t)c.files * c.rows * 1000;
    char where[64];
    snprintf(where, sizeof where, "f0 > %lld", c.threshold);
    const char *srcs[3] = {"local-warm", "local-cold", "remote-sim"};
    for (int s = 0; s < 3; s++) {
        if (!has(c.sources, srcs[s])) continue;
        double q1_fold[8] = {0}, q4_fold[8] = {0};
        const char *names[6] = {"Q1", "Q2", "Q3", "Q1-tree", "Q4-decode", "Q4"};
        for (int qi = 0; qi < 6; qi++) {
            if (!has(c.queries, names[qi])) continue;
            if ((qi == 3 || qi == 2) && s) continue; /* the tree copy, and Q3 (Q1's bytes): warm only */
            query_def q;
            memset(&q, 0, sizeof q);
            q.name = names[qi];
            q.tree = qi == 3;
            q.ds = q.tree ? tree : s == 2 ? remote : table;
            tsf_dataset_query_options_init(&q.o);
            tsf_dataset_agg_options_init(&q.ao);
            q.ao.window = qi >= 4 ? DS_DAY : DS_HOUR;
            q.ao.force_decode = qi == 4;
            q.o.columns = FIELDS;
            q.o.ncolumns = DS_FIELDS;
            if (qi == 1) {
                q.o.time_min = DS_T0 + span / 100 * 45;
                q.o.time_max = DS_T0 + span / 100 * 55 - 1;
                for (size_t d = 0; d < 3; d++) {
                    tsf_dataset_device_info di;
                    tsf_error e = {0};
                    if (tsf_dataset_device(q.ds, d, &di, &e)) goto out;
                    q.devs[d] = di.name;
                }
                q.o.devices = q.devs;
                q.o.ndevices = 3;
            }
            if (qi == 2) {
                tsf_error e = {0};
                if (tsf_filter_parse(&q.where, where, &e)) {
                    fail_msg(where, &e);
                    goto out;
                }
                q.o.where = q.where;
            }
            int bad = run_query(&c, &q, srcs[s], q1_fold, q4_fold);
            tsf_filter_free(q.where);
            if (bad) goto out;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0;
    row(&c, "all", "peak-rss", 0, 0, made ? "with-generation" : "queries", rss, rss, "MiB", rss / c.data_mib);
    rc = 0;
out:
    tsf_dataset_close(table);
    tsf_dataset_close(tree);
    tsf_dataset_close(remote);
    return rc;
}
