/*
 * dataset_open.c - tsf-bench dataset-open: tsf_dataset_open of a directory of many small files without the
 * metadata cache, with a cold cache (the open that reads every file and writes the cache) and with a warm
 * one (every file's metadata from the cache, no file opened).
 *
 * usage: tsf-bench dataset-open [--files N] [--rows R] [--reps K] [--dir D] [--json]
 *
 * Data (generated once into D, default /tmp/tsf-bench-dsopen-<files>x<rows>, kept for later runs): N files
 * (1000) of table `t`, each 2 devices (TAG `device`) x R rows (100) at 1 s, FIELDs f0 INT64 (TS_2DIFF) and
 * f1, f2 DOUBLE (GORILLA), LZ4, W0 random walks seeded per file and device; every file's mtime is set to
 * 2020-09-13 (1600000000 s) so that none is too recent to be cached.
 *
 * Each repetition runs, in this order, with every file's and the cache's pages dropped before the open
 * (posix_fadvise DONTNEED after fdatasync; pages: dropped): none (no cache), warm (the cache of the previous
 * repetition's cold open); then, after an untimed open that brings the files' pages back (pages: warm): none,
 * cold (the cache file removed first: reads every file, writes the cache), warm (the cache of the cold
 * open). The stats of each open are checked (cold: every file read and the cache written; warm: every file
 * from the cache, nothing written).
 *
 * Rows (JSON: bench, files, mode, pages, p50, p90, unit, ratio): p50/p90 of the open (ms) over reps; ratio =
 * the p50 of `none` with the same pages / this p50 (the speed-up over no cache). A last row: the cache
 * file's size (mode cache-bytes, unit KiB), ratio = cache bytes / the files' bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define DO_T0 1600000000000LL
#define DO_MTIME 1600000000

typedef struct do_cfg {
    int files, reps, json;
    long long rows;
    char dir[512], cache[600];
} do_cfg;

static int gen_one(const do_cfg *c, int i)
{
    char path[600];
    snprintf(path, sizeof path, "%s/part-%04d.tsfile", c->dir, i);
    tsf_column_schema sc[4] = {{"device", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                               {"f0", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                               {"f1", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                               {"f2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    size_t n = (size_t)c->rows;
    int64_t *times = malloc(n * sizeof *times), *iv = malloc(n * sizeof *iv);
    double *dv = malloc(2 * n * sizeof *dv);
    tsf_bytes *tag = malloc(n * sizeof *tag);
    tsf_error err = {0};
    tsf_writer *w = NULL;
    tsf_tablet *t = NULL;
    int rc = -1;
    if (!times || !iv || !dv || !tag) goto out;
    if (tsf_writer_open(&w, path, NULL, &err) || tsf_writer_register_table(w, "t", sc, 4, &err)) goto fail;
    for (int d = 0; d < 2; d++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", d);
        uint64_t seed = 7919ull * (uint64_t)i + 31ull * (uint64_t)d;
        for (size_t r = 0; r < n; r++) {
            times[r] = DO_T0 + ((long long)i * c->rows + (long long)r) * 1000;
            tag[r] = (tsf_bytes){(const uint8_t *)name, strlen(name)};
        }
        bench_w0_int64(iv, n, seed);
        bench_w0_double(dv, n, seed + 1);
        bench_w0_double(dv + n, n, seed + 2);
        if (tsf_tablet_new(w, "t", NULL, 0, n, &t, &err) || tsf_tablet_set_times(t, times, n, &err) ||
            tsf_tablet_set_column(t, 0, tag, NULL, n, &err) ||
            tsf_tablet_set_column(t, 1, iv, NULL, n, &err) ||
            tsf_tablet_set_column(t, 2, dv, NULL, n, &err) ||
            tsf_tablet_set_column(t, 3, dv + n, NULL, n, &err) || tsf_writer_write_tablet(w, t, &err))
            goto fail;
        tsf_tablet_free(t);
        t = NULL;
    }
    tsf_status s = tsf_writer_close(w, &err);
    w = NULL;
    struct timespec ts[2] = {{DO_MTIME, 0}, {DO_MTIME, 0}};
    if (s || utimensat(AT_FDCWD, path, ts, 0)) goto fail;
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "tsf-bench dataset-open: %s: %s\n", path, err.message[0] ? err.message : strerror(errno));
    tsf_tablet_free(t);
    tsf_writer_abort(w);
out:
    free(times);
    free(iv);
    free(dv);
    free(tag);
    return rc;
}

/* The files of D, generated unless D/manifest says they are there (*made = 0). */
static int generate(const do_cfg *c, int *made)
{
    char path[600];
    snprintf(path, sizeof path, "%s/manifest", c->dir);
    FILE *m = fopen(path, "r");
    *made = 0;
    if (m) {
        int files = 0;
        long long rows = 0;
        int ok = fscanf(m, "files %d rows %lld", &files, &rows) == 2 && files == c->files && rows == c->rows;
        fclose(m);
        if (ok) return 0;
    }
    for (int i = 0; i < c->files; i++)
        if (gen_one(c, i)) return -1;
    m = fopen(path, "w");
    if (!m) return -1;
    fprintf(m, "files %d rows %lld\n", c->files, c->rows);
    fclose(m);
    *made = 1;
    return 0;
}

static void drop_pages(const do_cfg *c)
{
    char path[600];
    for (int i = 0; i < c->files; i++) {
        snprintf(path, sizeof path, "%s/part-%04d.tsfile", c->dir, i);
        bench_drop_file(path);
    }
    bench_drop_file(c->cache);
}

enum { M_NONE, M_COLD, M_WARM, M_NONE_DROPPED, M_WARM_DROPPED, M_N };
static const char *MODE[M_N] = {"none", "cold", "warm", "none", "warm"};

/* One open in mode m: its time (ms) into *ms; -1 when it fails or its stats are not the mode's. */
static int one_open(const do_cfg *c, int m, double *ms, uint64_t *bytes)
{
    if (m == M_COLD) unlink(c->cache);
    if (m >= M_NONE_DROPPED) drop_pages(c);
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.cache_path = m == M_NONE || m == M_NONE_DROPPED ? NULL : c->cache;
    const char *paths[1] = {c->dir};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    uint64_t t0 = bench_now_ns();
    tsf_status st = tsf_dataset_open(&ds, paths, 1, &o, &e);
    *ms = (double)(bench_now_ns() - t0) / 1e6;
    if (st) {
        fprintf(stderr, "tsf-bench dataset-open: %s\n", e.message);
        return -1;
    }
    tsf_dataset_open_stats os;
    memset(&os, 0, sizeof os);
    os.struct_size = sizeof os;
    int bad =
        tsf_dataset_get_open_stats(ds, &os, &e) != TSF_OK || tsf_dataset_file_count(ds) != (size_t)c->files;
    if (m == M_COLD) bad |= os.files_read != (size_t)c->files || !os.cache_written;
    if (m == M_WARM || m == M_WARM_DROPPED) bad |= os.files_cached != (size_t)c->files || os.cache_written;
    if (bad)
        fprintf(stderr, "tsf-bench dataset-open: %s open: %zu files cached, %zu read, written %d (%s%s)\n",
                MODE[m], os.files_cached, os.files_read, os.cache_written, os.cache_load.message,
                os.cache_save.message);
    for (size_t i = 0; bytes && i < tsf_dataset_file_count(ds); i++) {
        tsf_dataset_file_info fi;
        if (!tsf_dataset_file(ds, i, &fi, NULL)) *bytes += fi.size;
    }
    tsf_dataset_close(ds);
    return bad ? -1 : 0;
}

static void row(const do_cfg *c, const char *mode, const char *pages, double p50, double p90,
                const char *unit, double ratio)
{
    if (c->json)
        printf("{\"bench\":\"dataset-open\",\"files\":%d,\"mode\":\"%s\",\"pages\":\"%s\",\"p50\":%.4f,"
               "\"p90\":%.4f,"
               "\"unit\":\"%s\",\"ratio\":%.4f}\n",
               c->files, mode, pages, p50, p90, unit, ratio);
    else
        printf("%6d %-11s %-8s %10.3f %10.3f %-4s %8.2f\n", c->files, mode, pages, p50, p90, unit, ratio);
    fflush(stdout);
}

int bench_dataset_open(int argc, char **argv)
{
    do_cfg c;
    memset(&c, 0, sizeof c);
    c.files = (int)bench_opt_ll(argc, argv, "--files", 1000);
    c.rows = bench_opt_ll(argc, argv, "--rows", 100);
    c.reps = (int)bench_opt_ll(argc, argv, "--reps", 11);
    c.json = bench_flag(argc, argv, "--json");
    if (c.files < 1 || c.files > 100000 || c.rows < 1 || c.rows > 1000000 || c.reps < 1) {
        fprintf(stderr, "tsf-bench dataset-open: --files 1..100000, --rows 1..1000000, --reps >= 1\n");
        return 2;
    }
    if (bench_opt(argc, argv, "--dir"))
        snprintf(c.dir, sizeof c.dir, "%s", bench_opt(argc, argv, "--dir"));
    else
        snprintf(c.dir, sizeof c.dir, "/tmp/tsf-bench-dsopen-%dx%lld", c.files, c.rows);
    snprintf(c.cache, sizeof c.cache, "%s.cache", c.dir);
    if (mkdir(c.dir, 0755) && errno != EEXIST) {
        fprintf(stderr, "tsf-bench dataset-open: cannot create %s\n", c.dir);
        return 1;
    }
    int made = 0;
    uint64_t g0 = bench_now_ns();
    if (generate(&c, &made)) return 1;
    double gen_s = (double)(bench_now_ns() - g0) / 1e9;
    double *t = calloc((size_t)M_N * (size_t)c.reps, sizeof *t);
    uint64_t bytes = 0;
    if (!t) return 1;
    int rc = 1;
    double warmup;
    if (one_open(&c, M_COLD, &warmup, &bytes)) goto out;
    /* dropped pages first; then one untimed open brings the files' pages back for the warm-page modes */
    static const int order[M_N] = {M_NONE_DROPPED, M_WARM_DROPPED, M_NONE, M_COLD, M_WARM};
    for (int r = 0; r < c.reps; r++)
        for (int i = 0; i < M_N; i++) {
            int m = order[i];
            if (m == M_NONE && one_open(&c, M_NONE, &warmup, NULL)) goto out;
            if (one_open(&c, m, &t[m * c.reps + r], NULL)) goto out;
        }
    if (!c.json) {
        bench_print_machine(stdout);
        printf("dataset-open: %d files x 2 devices x %lld rows (%.1f KiB each), in %s (%s %.1f s), cache %s; "
               "reps %d\n",
               c.files, c.rows, (double)bytes / 1024.0 / c.files, c.dir, made ? "generated in" : "reused,",
               gen_s, c.cache, c.reps);
        printf("%6s %-11s %-8s %10s %10s %-4s %8s\n", "files", "mode", "pages", "p50", "p90", "unit",
               "ratio");
    }
    double base[2] = {bench_percentile(t + M_NONE * c.reps, (size_t)c.reps, 50),
                      bench_percentile(t + M_NONE_DROPPED * c.reps, (size_t)c.reps, 50)};
    for (int m = 0; m < M_N; m++) {
        int dropped = m >= M_NONE_DROPPED;
        double p50 = bench_percentile(t + m * c.reps, (size_t)c.reps, 50);
        double p90 = bench_percentile(t + m * c.reps, (size_t)c.reps, 90);
        row(&c, MODE[m], dropped ? "dropped" : "warm", p50, p90, "ms", base[dropped] / p50);
    }
    struct stat sb;
    if (stat(c.cache, &sb) == 0)
        row(&c, "cache-bytes", "-", (double)sb.st_size / 1024.0, (double)sb.st_size / 1024.0, "KiB",
            (double)sb.st_size / (double)bytes);
    rc = 0;
out:
    free(t);
    return rc;
}
