/*
 * read.c - E2 of ../shared/BENCHMARKS.md: reading a table-model file through
 * the query API, and the case A read (the file `tsf-bench write --case A --data walk` makes).
 *
 * usage: tsf-bench read [--rows N] [--threads T] [--reps R] [--json] [--keep FILE] [--select F]
 *                       [--paths row,batch,simd] [--clock wall|cpu]
 *        tsf-bench read --case A [--rows N] [--threads T] [--reps R] [--json] [--clock wall|cpu]
 *        tsf-bench read [--case A] --check ab [...]
 * --keep FILE keeps (and reuses) the E2 file; --clock cpu times process CPU instead of wall time (for
 * noisy shared machines; with threads it sums the threads).
 * E2 file (built once into a temp file, not timed): table "e2", 10 devices (TAG dev), each an aligned
 * device with a time column and 8 INT64 fields f0..f7; N rows in all (default 20M); times from
 * 1,600,000,000,000 ms in 1000 ms steps plus jitter uniform in [-100, 100]; fields W0 random walks
 * (steps uniform in [-100, 100], seed 42 + 8*device + field); TS_2DIFF + SNAPPY (time column too);
 * pages of 10,000 points. Queries (warm cache): a time window centred in each device's range selecting
 * 1, 10, 50, 90 and 100% of its rows, all 8 fields, on the paths
 *   row   - tsf_cursor, every cell read through tsf_cursor_int64 and summed,
 *   batch - batches from a reader opened with TSF_PATH_SCALAR (portable batch decoders),
 *   simd  - batches from a reader on TSF_PATH_AUTO (the CPU's best kernels),
 * and `scan`, the floor: read the file, decompress and decode every page (data-area walk, no query
 * machinery), discard. A row is one timestamp with its 8 fields.
 * Case A: 1 device x 100 DOUBLE series (non-aligned, GORILLA + LZ4, N rows, default 1M): a full
 * scan summing every value, and a centred 1% time range.
 * --check ab: checked reads (tsf_query_options.checked) on against off on the same reader, alternating in
 * every rep (which one runs first alternates too): E2 simd at 100 % and 1 % (or --select F), case A full
 * scan in columns mode; p50/p90 of each and of the per-rep ratio on/off.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "format/format.h"

#define E2_DEVICES 10
#define E2_FIELDS 8
#define E2_TABLET 10000
#define T0 1600000000000LL

typedef struct rcfg {
    long long rows; /* E2: in all; case A: per series */
    int reps, threads, json;
    int cpu;           /* --clock cpu: process CPU time instead of wall time (noisy shared machines) */
    double only_sel;   /* --select F: only this selectivity (0 = all) */
    const char *paths; /* --paths row,batch,simd: only these (NULL = all) */
    int check_ab;      /* --check ab: checked reads on vs off, alternating */
} rcfg;

static uint64_t now_ns(const rcfg *c)
{
    if (!c->cpu) return bench_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Minor page faults of the process so far (all threads). */
static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

static void fail_msg(const char *what, const tsf_error *e)
{
    fprintf(stderr, "read bench: %s: %s\n", what, e->message);
}

/* ---- E2 file ------------------------------------------------------------------------------- */

int bench_e2_build(const char *path, long long rows)
{
    static const char *fields[E2_FIELDS] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
    tsf_column_schema sc[1 + E2_FIELDS];
    sc[0] = (tsf_column_schema){"dev", TSF_STRING, TSF_ENC_PLAIN, TSF_SNAPPY, TSF_COLUMN_TAG};
    for (int f = 0; f < E2_FIELDS; f++)
        sc[1 + f] = (tsf_column_schema){fields[f], TSF_INT64, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD};
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.page_max_points = 10000;
    wo.page_max_bytes = 1u << 24; /* pages end at 10,000 points, not at a byte estimate */
    wo.time_compression = TSF_SNAPPY;
    tsf_error err = {0};
    tsf_writer *w = NULL;
    tsf_tablet *t = NULL;
    size_t per = (size_t)(rows / E2_DEVICES);
    int64_t *times = malloc(per * sizeof *times);
    int64_t *vals = malloc(per * E2_FIELDS * sizeof *vals);
    tsf_bytes *tag = malloc(E2_TABLET * sizeof *tag);
    int rc = -1;
    if (!times || !vals || !tag) goto out;
    if (tsf_writer_open(&w, path, &wo, &err)) goto fail;
    if (tsf_writer_register_table(w, "e2", sc, 1 + E2_FIELDS, &err)) goto fail;
    if (tsf_tablet_new(w, "e2", NULL, 0, E2_TABLET, &t, &err)) goto fail;
    for (int d = 0; d < E2_DEVICES; d++) {
        char name[8];
        snprintf(name, sizeof name, "d%02d", d);
        for (size_t i = 0; i < E2_TABLET; i++) tag[i] = (tsf_bytes){(const uint8_t *)name, strlen(name)};
        bench_timestamps(times, per, 100, 7 + (uint64_t)d);
        for (int f = 0; f < E2_FIELDS; f++)
            bench_w0_int64(vals + (size_t)f * per, per, 42 + 8 * (uint64_t)d + f);
        for (size_t r0 = 0; r0 < per; r0 += E2_TABLET) {
            size_t n = per - r0 < E2_TABLET ? per - r0 : E2_TABLET;
            if (tsf_tablet_set_times(t, times + r0, n, &err)) goto fail;
            if (tsf_tablet_set_column(t, 0, tag, NULL, n, &err)) goto fail;
            for (int f = 0; f < E2_FIELDS; f++)
                if (tsf_tablet_set_column(t, 1 + (size_t)f, vals + (size_t)f * per + r0, NULL, n, &err))
                    goto fail;
            if (tsf_writer_write_tablet(w, t, &err)) goto fail;
        }
    }
    tsf_tablet_free(t);
    t = NULL;
    tsf_status s = tsf_writer_close(w, &err);
    w = NULL;
    if (s) goto fail;
    rc = 0;
    goto out;
fail:
    fail_msg("building the E2 file", &err);
    tsf_tablet_free(t);
    tsf_writer_abort(w);
out:
    free(times);
    free(vals);
    free(tag);
    return rc;
}

/* ---- the scan floor ------------------------------------------------------------------------ */

typedef struct scan_ctx {
    tsf_codec *codec;
    tsf_compressor *comp;
    uint8_t *file, *plain, *out;
    size_t file_cap, plain_cap, out_cap;
} scan_ctx;

static int grow(uint8_t **p, size_t *cap, size_t n)
{
    if (n <= *cap) return 0;
    uint8_t *q = realloc(*p, n);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Reads the file, decompresses and decodes every page; returns the rows of time (or non-aligned) pages. */
static long long scan_file(scan_ctx *s, const char *path, tsf_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    struct stat stt;
    long long rows = -1;
    if (fstat(fd, &stt) || grow(&s->file, &s->file_cap, (size_t)stt.st_size)) goto out;
    size_t len = (size_t)stt.st_size, got = 0;
    while (got < len) {
        ssize_t k = pread(fd, s->file + got, len - got, (off_t)got);
        if (k <= 0) goto out;
        got += (size_t)k;
    }
    tsf_walker w;
    tsf_walk_item it;
    if (tsf_walk_init(&w, s->file, len, err)) goto out;
    long long n_rows = 0;
    for (;;) {
        if (tsf_walk_next(&w, &it, err)) goto out;
        if (it.kind == TSF_WALK_END) break;
        if (it.kind != TSF_WALK_PAGE || it.page.uncompressed_size == 0) continue;
        const uint8_t *p = it.body;
        size_t plen = it.body_len;
        if (it.chunk.compression != TSF_UNCOMPRESSED) {
            if (grow(&s->plain, &s->plain_cap, it.page.uncompressed_size)) goto out;
            if (tsf_compressor_decompress(s->comp, it.chunk.compression, it.body, it.body_len, s->plain,
                                          it.page.uncompressed_size, err))
                goto out;
            p = s->plain;
            plen = it.page.uncompressed_size;
        }
        tsf_chunk_kind kind = tsf_fmt_chunk_kind(it.chunk.marker);
        tsf_type type = it.chunk.data_type;
        size_t n = 0;
        if (kind == TSF_CHUNK_VALUE) {
            tsf_fmt_value_page vp;
            if (tsf_fmt_parse_value_page(p, plen, it.body_offset, &vp, err)) goto out;
            p = vp.values;
            plen = vp.values_len;
            n = vp.present;
        } else {
            const uint8_t *tp = p;
            size_t tlen = plen;
            tsf_fmt_nonaligned_page np;
            if (kind == TSF_CHUNK_NONALIGNED) {
                if (tsf_fmt_parse_nonaligned_page(p, plen, it.body_offset, &np, err)) goto out;
                tp = np.time, tlen = np.time_len;
            }
            if (tsf_codec_count(TSF_INT64, TSF_ENC_TS_2DIFF, tp, tlen, &n, err)) goto out;
            n_rows += (long long)n;
            if (grow(&s->out, &s->out_cap, n * 8 + 8)) goto out;
            if (tsf_codec_decode(s->codec, TSF_INT64,
                                 kind == TSF_CHUNK_TIME ? it.chunk.encoding : TSF_ENC_TS_2DIFF, tp, tlen,
                                 s->out, n, NULL, err))
                goto out;
            if (kind == TSF_CHUNK_TIME) continue;
            p = np.values;
            plen = np.values_len;
            type = it.chunk.data_type;
        }
        if (grow(&s->out, &s->out_cap, n * 16 + 16)) goto out;
        if (n && tsf_codec_decode(s->codec, type, it.chunk.encoding, p, plen, s->out, n, NULL, err)) goto out;
    }
    rows = n_rows;
out:
    close(fd);
    return rows;
}

/* ---- query paths --------------------------------------------------------------------------- */

enum { P_ROW, P_BATCH, P_SIMD, P_SCAN };
static const char *PATH_NAMES[] = {"row", "batch", "simd", "scan"};

/* Runs one query; returns its rows (or -1) and folds the values read into *sum. */
static long long run_query(tsf_reader *r, int path, const tsf_query_options *o, int64_t *sum, tsf_error *err)
{
    long long rows = 0;
    int64_t acc = 0;
    if (path == P_ROW) {
        tsf_cursor *c;
        if (tsf_cursor_open(r, o, &c, err)) return -1;
        int has;
        for (;;) {
            if (tsf_cursor_next(c, &has, err)) {
                tsf_cursor_close(c);
                return -1;
            }
            if (!has) break;
            acc += tsf_cursor_time(c);
            size_t nc = tsf_cursor_column_count(c);
            for (size_t k = 0; k < nc; k++) {
                int64_t x;
                if (tsf_cursor_int64(c, k, &x)) acc += x;
            }
            rows++;
        }
        tsf_cursor_close(c);
    } else {
        tsf_query *q;
        if (tsf_query_open(r, o, &q, err)) return -1;
        const tsf_batch *b;
        for (;;) {
            if (tsf_query_next(q, &b, err)) {
                tsf_query_close(q);
                return -1;
            }
            if (!b) break;
            /* the consumer looks at the last row of each column (decoding is what is measured) */
            size_t last = b->nrows - 1;
            acc += b->times[last];
            for (size_t k = 0; k < b->ncolumns; k++) acc += ((const int64_t *)b->columns[k].values)[last];
            rows += (long long)b->nrows;
        }
        tsf_query_close(q);
    }
    *sum += acc;
    return rows;
}

static void print_row(const rcfg *c, double sel, int path, long long rows, double *rate, double *ms, int reps,
                      double scan_rate, double ms100)
{
    double p50 = bench_percentile(rate, (size_t)reps, 50), p90 = bench_percentile(rate, (size_t)reps, 10);
    double m50 = bench_percentile(ms, (size_t)reps, 50);
    if (c->json) {
        printf("{\"bench\":\"read\",\"selectivity\":%.2f,\"path\":\"%s\",\"threads\":%d,\"p50\":%.3f,\"p90\":"
               "%.3f,"
               "\"unit\":\"M rows/s\",\"rows\":%lld,\"p50_ms\":%.3f}\n",
               sel, PATH_NAMES[path], c->threads, p50, p90, rows, m50);
        return;
    }
    char frac[32] = "";
    if (ms100 > 0) snprintf(frac, sizeof frac, "1/%.0f", ms100 / m50);
    printf("%6.0f%% %-6s %12lld %10.2f %10.1f %10.1f %9.2fx %10s\n", sel * 100, PATH_NAMES[path], rows, m50,
           p50, p90, scan_rate > 0 && path != P_SCAN ? scan_rate / p50 : 1.0, frac);
}

/* ---- --check ab ---------------------------------------------------------------------------- */

typedef long long (*ab_fn)(void *ctx, int checked, tsf_error *err);

/* Runs fn with checked on and off, alternating, c->reps times each; prints p50/p90 of both and of the
 * per-rep ratio on/off. */
static int check_ab(const rcfg *c, const char *what, ab_fn fn, void *ctx)
{
    size_t n = (size_t)c->reps;
    double *ms[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))}, *ratio = malloc(n * sizeof(double));
    long long units = 0;
    int rc = 0;
    tsf_error err = {0};
    if (fn(ctx, 1, &err) < 0 || fn(ctx, 0, &err) < 0) { /* warm-up */
        fail_msg(what, &err);
        rc = 1;
    }
    for (size_t r = 0; r < n && !rc; r++) {
        for (int k = 0; k < 2; k++) {
            int on = (int)((r + (size_t)k) % 2 == 0);
            uint64_t t0 = now_ns(c);
            units = fn(ctx, on, &err);
            ms[on][r] = (double)(now_ns(c) - t0) / 1e6;
            if (units < 0) {
                fail_msg(what, &err);
                rc = 1;
                break;
            }
        }
        ratio[r] = ms[1][r] / ms[0][r];
    }
    if (!rc) {
        double a50 = bench_percentile(ms[1], n, 50), a90 = bench_percentile(ms[1], n, 90);
        double b50 = bench_percentile(ms[0], n, 50), b90 = bench_percentile(ms[0], n, 90);
        double r50 = bench_percentile(ratio, n, 50), r90 = bench_percentile(ratio, n, 90);
        if (c->json)
            printf("{\"bench\":\"read\",\"check_ab\":\"%s\",\"reps\":%d,\"on_p50_ms\":%.3f,\"on_p90_ms\":%.3f,"
                   "\"off_p50_ms\":%.3f,\"off_p90_ms\":%.3f,\"ratio_p50\":%.4f,\"ratio_p90\":%.4f}\n",
                   what, c->reps, a50, a90, b50, b90, r50, r90);
        else
            printf("%-22s %10.2f %10.2f %10.2f %10.2f %9.4f %9.4f %12lld\n", what, a50, a90, b50, b90, r50, r90,
                   units);
    }
    free(ms[0]);
    free(ms[1]);
    free(ratio);
    return rc;
}

static void check_ab_header(const rcfg *c)
{
    if (!c->json)
        printf("%-22s %10s %10s %10s %10s %9s %9s %12s\n", "query", "on p50 ms", "on p90 ms", "off p50 ms",
               "off p90 ms", "ratio p50", "ratio p90", "units");
}

typedef struct e2_ab {
    tsf_reader *r;
    tsf_query_options o;
} e2_ab;

static long long e2_ab_run(void *ctx, int checked, tsf_error *err)
{
    e2_ab *x = ctx;
    int64_t sum = 0;
    x->o.checked = checked;
    return run_query(x->r, P_SIMD, &x->o, &sum, err);
}

static int bench_e2(const rcfg *c, const char *keep)
{
    char tmp[256];
    if (keep) {
        snprintf(tmp, sizeof tmp, "%s", keep);
    } else {
        snprintf(tmp, sizeof tmp, "/tmp/tsf-bench-read-e2-%ld.tsfile", (long)getpid());
    }
    long long per = c->rows / E2_DEVICES;
    struct stat stt;
    int built = 0;
    if (!keep || stat(tmp, &stt) != 0) {
        if (bench_e2_build(tmp, c->rows)) return 1;
        built = 1;
    }
    (void)built;
    int rc = 1;
    tsf_error err = {0};
    tsf_reader *rd[2] = {NULL, NULL}; /* [0] scalar, [1] auto */
    scan_ctx sc = {0};
    double *rate = malloc((size_t)c->reps * sizeof *rate), *ms = malloc((size_t)c->reps * sizeof *ms);
    for (int k = 0; k < 2; k++) {
        tsf_reader_options ro;
        tsf_reader_options_init(&ro);
        ro.path = k ? TSF_PATH_AUTO : TSF_PATH_SCALAR;
        if (tsf_reader_open(&rd[k], tmp, &ro, &err) || tsf_reader_load_index(rd[k], &err)) {
            fail_msg("opening the E2 file", &err);
            goto out;
        }
    }
    if (tsf_codec_open(&sc.codec, NULL, &err) || tsf_compressor_open(&sc.comp, NULL, &err)) goto out;
    if (!c->json) {
        bench_print_machine(stdout);
        stat(tmp, &stt);
        printf("E2 read: table e2, %d devices x %lld rows x %d INT64 fields, TS_2DIFF + SNAPPY, 10,000-point "
               "pages, %lld bytes; %d threads; %d reps, warm cache\n",
               E2_DEVICES, per, E2_FIELDS, (long long)stt.st_size, c->threads, c->reps);
        printf("%7s %-6s %12s %10s %10s %10s %10s %10s\n", "select", "path", "rows", "p50 ms", "p50 Mr/s",
               "p90 Mr/s", "vs scan", "of 100%");
    }
    /* warm the page cache and the allocators */
    if (scan_file(&sc, tmp, &err) < 0) {
        fail_msg("scan", &err);
        goto out;
    }
    double scan_rate = 0;
    if (!c->paths || strstr(c->paths, "scan")) {
        long long rows = 0;
        for (int r = 0; r < c->reps; r++) {
            uint64_t t0 = now_ns(c);
            rows = scan_file(&sc, tmp, &err);
            double s = (double)(now_ns(c) - t0) / 1e9;
            if (rows < 0) {
                fail_msg("scan", &err);
                goto out;
            }
            rate[r] = (double)rows / s / 1e6;
            ms[r] = s * 1e3;
        }
        scan_rate = bench_percentile(rate, (size_t)c->reps, 50);
        print_row(c, 1.0, P_SCAN, rows, rate, ms, c->reps, 0, 0);
    }
    if (c->check_ab) {
        static const char *cols[E2_FIELDS] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
        static const double AB_SEL[] = {1.0, 0.01};
        check_ab_header(c);
        rc = 0;
        for (size_t si = 0; si < 2 && !rc; si++) {
            double f = c->only_sel > 0 ? c->only_sel : AB_SEL[si];
            if (c->only_sel > 0 && si) break;
            e2_ab x = {rd[1], {0}};
            tsf_query_options_init(&x.o);
            x.o.table = "e2";
            x.o.columns = cols;
            x.o.ncolumns = E2_FIELDS;
            x.o.threads = (unsigned)c->threads;
            if (f < 1.0) {
                long long k = (long long)(f * (double)per + 0.5), lo = (per - k) / 2;
                x.o.time_min = T0 + lo * 1000 - 500;
                x.o.time_max = T0 + (lo + k - 1) * 1000 + 500;
            }
            char what[64];
            snprintf(what, sizeof what, "E2 simd %g%%", f * 100);
            rc = check_ab(c, what, e2_ab_run, &x);
        }
        goto out;
    }
    static const double SEL[] = {1.0, 0.9, 0.5, 0.1, 0.01};
    double ms100[3] = {0, 0, 0};
    for (size_t si = 0; si < sizeof SEL / sizeof SEL[0]; si++) {
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.table = "e2";
        static const char *cols[E2_FIELDS] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
        o.columns = cols;
        o.ncolumns = E2_FIELDS;
        o.threads = (unsigned)c->threads;
        if (SEL[si] < 1.0) {
            long long k = (long long)(SEL[si] * (double)per + 0.5), lo = (per - k) / 2;
            o.time_min = T0 + lo * 1000 - 500;
            o.time_max = T0 + (lo + k - 1) * 1000 + 500;
        }
        if (c->only_sel > 0 && (SEL[si] < c->only_sel - 1e-9 || SEL[si] > c->only_sel + 1e-9)) continue;
        for (int path = P_ROW; path <= P_SIMD; path++) {
            if (c->paths && !strstr(c->paths, PATH_NAMES[path])) continue;
            long long rows = 0;
            int64_t sum = 0;
            for (int r = 0; r < c->reps; r++) {
                uint64_t t0 = now_ns(c);
                rows = run_query(rd[path == P_BATCH ? 0 : 1], path, &o, &sum, &err);
                double s = (double)(now_ns(c) - t0) / 1e9;
                if (rows < 0) {
                    fail_msg("query", &err);
                    goto out;
                }
                rate[r] = (double)rows / s / 1e6;
                ms[r] = s * 1e3;
            }
            if (SEL[si] == 1.0) ms100[path] = bench_percentile(ms, (size_t)c->reps, 50);
            print_row(c, SEL[si], path, rows, rate, ms, c->reps, scan_rate, SEL[si] < 1.0 ? ms100[path] : 0);
        }
    }
    rc = 0;
out:
    free(rate);
    free(ms);
    for (int k = 0; k < 2; k++) tsf_reader_close(rd[k]);
    tsf_codec_close(sc.codec);
    tsf_compressor_close(sc.comp);
    free(sc.file);
    free(sc.plain);
    free(sc.out);
    if (!keep) unlink(tmp);
    return rc;
}

/* ---- case A -------------------------------------------------------------------------------- */

/* Case A query; returns values summed (non-null cells). per_series = 0: one query over every series of the
 * device (rows merged by time, the row-oriented way); 1: one query per series (each column scanned on its
 * own, as a column store sums columns; a single-column batch is the decoded page, no merge). */
static long long case_a_query1(tsf_reader *r, const tsf_query_options *o, double *sum, tsf_error *err);
static long long case_a_series(tsf_reader *r, const tsf_query_options *o, size_t j0, size_t j1, double *sum,
                               tsf_error *err);
static long long case_a_columns_mt(tsf_reader *r, const tsf_query_options *o, int threads, double *sum,
                                   tsf_error *err);
static long long case_a_query(tsf_reader *r, const tsf_query_options *o, int per_series, double *sum,
                              tsf_error *err)
{
    if (!per_series) return case_a_query1(r, o, sum, err);
    if (o->threads > 1) return case_a_columns_mt(r, o, (int)o->threads, sum, err);
    tsf_device_info d;
    if (tsf_reader_device(r, 0, &d, err)) return -1;
    return case_a_series(r, o, 0, d.nseries, sum, err);
}

/* Sums series [j0, j1) of device 0, one single-column query each. */
static long long case_a_series(tsf_reader *r, const tsf_query_options *o, size_t j0, size_t j1, double *sum,
                               tsf_error *err)
{
    long long points = 0;
    for (size_t j = j0; j < j1; j++) {
        tsf_series_info si;
        if (tsf_reader_series(r, 0, j, &si, err)) return -1;
        tsf_query_options oj = *o;
        const char *name = si.measurement;
        oj.columns = &name;
        oj.ncolumns = 1;
        long long p = case_a_query1(r, &oj, sum, err);
        if (p < 0) return -1;
        points += p;
    }
    return points;
}

/* Columns mode on T threads: the threads share the reader (each query owns its state) and take the next
 * series from a shared counter (no static split: a thread the machine delays takes fewer); each series'
 * sum is kept and they are added in series order, so the total does not depend on the schedule. */
typedef struct case_a_shared {
    tsf_reader *r;
    tsf_query_options o;
    size_t nseries;
    _Atomic size_t next;
    double *sums;
    long long *points; /* per series; -1: failed */
} case_a_shared;

typedef struct {
    case_a_shared *sh;
    tsf_error err;
    int failed;
} case_a_job;

static void *case_a_worker(void *arg)
{
    case_a_job *jb = arg;
    case_a_shared *sh = jb->sh;
    for (;;) {
        size_t j = atomic_fetch_add(&sh->next, 1);
        if (j >= sh->nseries) break;
        double s = 0;
        sh->points[j] = case_a_series(sh->r, &sh->o, j, j + 1, &s, &jb->err);
        sh->sums[j] = s;
        if (sh->points[j] < 0) jb->failed = 1;
    }
    return NULL;
}

static long long case_a_columns_mt(tsf_reader *r, const tsf_query_options *o, int threads, double *sum,
                                   tsf_error *err)
{
    tsf_device_info d;
    if (tsf_reader_device(r, 0, &d, err)) return -1;
    case_a_job jobs[64];
    pthread_t tid[64];
    if (threads > 64) threads = 64;
    case_a_shared sh = {
        r, *o, d.nseries, 0, calloc(d.nseries + 1, sizeof(double)), calloc(d.nseries + 1, sizeof(long long))};
    sh.o.threads = 1;
    long long points = 0;
    int started = 1;
    if (!sh.sums || !sh.points) points = -1;
    for (int t = 0; t < threads && points == 0; t++) {
        jobs[t] = (case_a_job){&sh, {0}, 0};
        if (t > 0 && pthread_create(&tid[t], NULL, case_a_worker, &jobs[t]) == 0) started++;
    }
    if (points == 0) case_a_worker(&jobs[0]);
    for (int t = 1; t < started; t++) pthread_join(tid[t], NULL);
    for (int t = 0; t < started && points == 0; t++)
        if (jobs[t].failed) {
            *err = jobs[t].err;
            points = -1;
        }
    for (size_t j = 0; j < d.nseries && points >= 0; j++) {
        points += sh.points[j];
        *sum += sh.sums[j];
    }
    free(sh.sums);
    free(sh.points);
    return points;
}

static long long case_a_query1(tsf_reader *r, const tsf_query_options *o, double *sum, tsf_error *err)
{
    tsf_query *q;
    if (tsf_query_open(r, o, &q, err)) return -1;
    long long points = 0;
    double acc = 0;
    const tsf_batch *b;
    for (;;) {
        if (tsf_query_next(q, &b, err)) {
            tsf_query_close(q);
            return -1;
        }
        if (!b) break;
        for (size_t k = 0; k < b->ncolumns; k++) {
            const double *v = b->columns[k].values; /* null cells are zero */
            const uint8_t *valid = b->columns[k].validity;
            double s = 0;
            for (size_t i = 0; i < b->nrows; i++) s += v[i];
            acc += s;
            for (size_t i = 0; i < b->nrows / 8; i++) points += __builtin_popcount(valid[i]);
            for (size_t i = b->nrows & ~(size_t)7; i < b->nrows; i++)
                points += (valid[i >> 3] >> (i & 7)) & 1;
        }
    }
    tsf_query_close(q);
    *sum += acc;
    return points;
}

typedef struct case_ab {
    tsf_reader *r;
    int threads;
} case_ab;

static long long case_ab_run(void *ctx, int checked, tsf_error *err)
{
    case_ab *x = ctx;
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.threads = (unsigned)x->threads;
    o.checked = checked;
    double sum = 0;
    return case_a_query(x->r, &o, 1, &sum, err);
}

static int bench_case_a(const rcfg *c)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "/tmp/tsf-bench-read-a-%ld.tsfile", (long)getpid());
    uint64_t bytes = 0;
    if (bench_write_case_file(tmp, 100, c->rows, 0, 0, &bytes)) return 1;
    int rc = 1;
    tsf_error err = {0};
    tsf_reader *r = NULL;
    double *rate = malloc((size_t)c->reps * sizeof *rate), *ms = malloc((size_t)c->reps * sizeof *ms);
    if (tsf_reader_open(&r, tmp, NULL, &err) || tsf_reader_load_index(r, &err)) {
        fail_msg("opening the case A file", &err);
        goto out;
    }
    struct stat stt;
    stat(tmp, &stt);
    if (!c->json) {
        bench_print_machine(stdout);
        printf("read case A: 1 device x 100 DOUBLE series x %lld points, GORILLA + LZ4, non-aligned, %lld "
               "bytes; "
               "%d threads; %d reps, warm cache\n",
               c->rows, (long long)stt.st_size, c->threads, c->reps);
        printf("%-7s %-8s %12s %10s %10s %12s %18s %10s\n", "query", "mode", "points", "p50 ms", "p90 ms",
               "p50 Mpts/s", "sum", "faults/rep");
    }
    if (c->check_ab) {
        case_ab x = {r, c->threads};
        check_ab_header(c);
        rc = check_ab(c, "case A full columns", case_ab_run, &x);
        goto out;
    }
    for (int qq = 0; qq < 4; qq++) {
        int qi = qq & 1, per_series = qq < 2;
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.threads = (unsigned)c->threads;
        if (qi == 1) {
            long long k = c->rows / 100, lo = (c->rows - k) / 2;
            o.time_min = T0 + lo * 1000;
            o.time_max = T0 + (lo + k - 1) * 1000;
        }
        long long points = 0;
        double sum = 0;
        if (case_a_query(r, &o, per_series, &sum, &err) < 0) { /* warm-up */
            fail_msg("case A query", &err);
            goto out;
        }
        long f0 = minor_faults();
        for (int rep = 0; rep < c->reps; rep++) {
            sum = 0;
            uint64_t t0 = now_ns(c);
            points = case_a_query(r, &o, per_series, &sum, &err);
            double s = (double)(now_ns(c) - t0) / 1e9;
            if (points < 0) {
                fail_msg("case A query", &err);
                goto out;
            }
            ms[rep] = s * 1e3;
            rate[rep] = (double)points / s / 1e6;
        }
        double p50 = bench_percentile(ms, (size_t)c->reps, 50),
               p90 = bench_percentile(ms, (size_t)c->reps, 90);
        double mps = bench_percentile(rate, (size_t)c->reps, 50);
        const char *name = qi ? "range1" : "full", *mode = per_series ? "columns" : "rows";
        if (c->json)
            printf("{\"bench\":\"read\",\"case\":\"A\",\"query\":\"%s\",\"mode\":\"%s\",\"threads\":%d,"
                   "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"mpoints_per_s\":%.1f,\"points\":%lld}\n",
                   name, mode, c->threads, p50, p90, mps, points);
        else
            printf("%-7s %-8s %12lld %10.2f %10.2f %12.1f %18.6g %10ld\n", name, mode, points, p50, p90, mps,
                   sum, (minor_faults() - f0) / c->reps);
    }
    rc = 0;
out:
    free(rate);
    free(ms);
    tsf_reader_close(r);
    unlink(tmp);
    return rc;
}

int bench_read(int argc, char **argv)
{
    rcfg c = {0};
    const char *cs = bench_opt(argc, argv, "--case");
    int case_a = cs && (cs[0] == 'A' || cs[0] == 'a');
    if (cs && !case_a) {
        fprintf(stderr, "read bench: --case %s: only case A is defined\n", cs);
        return 1;
    }
    c.rows = bench_opt_ll(argc, argv, "--rows", case_a ? 1000000 : 20000000);
    c.reps = (int)bench_opt_ll(argc, argv, "--reps", case_a ? 5 : 3);
    c.threads = (int)bench_opt_ll(argc, argv, "--threads", 1);
    c.json = bench_flag(argc, argv, "--json");
    const char *clk = bench_opt(argc, argv, "--clock");
    c.cpu = clk && strcmp(clk, "cpu") == 0;
    const char *sel = bench_opt(argc, argv, "--select");
    c.only_sel = sel ? atof(sel) : 0;
    c.paths = bench_opt(argc, argv, "--paths");
    const char *ab = bench_opt(argc, argv, "--check");
    c.check_ab = ab && !strcmp(ab, "ab");
    if (c.reps < 1) c.reps = 1;
    if (c.threads < 1) c.threads = 1;
    if (c.rows < (case_a ? 100 : 10 * E2_DEVICES)) c.rows = case_a ? 100 : 10 * E2_DEVICES;
    return case_a ? bench_case_a(&c) : bench_e2(&c, bench_opt(argc, argv, "--keep"));
}
