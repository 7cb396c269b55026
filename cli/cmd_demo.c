/*
 * cmd_demo.c - `tsf demo [--rows N] [-o FILE]`: a newcomer's first minute. Generates sensor
 * data (4 machines as aligned tree devices, 5 sensors each: temperature, vibration, pressure as DOUBLE,
 * humidity as FLOAT with ~2% nulls, running as BOOLEAN; one row a second with +-200 ms jitter and a 15
 * minute outage at 40%), writes it through tablets, then reads it back: a one-hour time window, a value
 * filter (tsf_filter_parse) over every machine (pages of 1000 points), an aggregate per hour (tsf_aggregate, window 3600000 ms,
 * answered from statistics where it can) and a full scan; prints throughput and the file size next to
 * the raw size (8-byte time + value bytes per point). --no-timing prints "-" for times (for tests).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "csv.h"
#include "outfile.h"

#define NDEV 4
#define NSENS 5
#define CHUNK 8192
#define T0 1704067200000LL /* 2024-01-01T00:00:00Z in ms */

static const char *const SENSORS[NSENS] = {"temperature", "humidity", "vibration", "pressure", "running"};
static const tsf_type TYPES[NSENS] = {TSF_DOUBLE, TSF_FLOAT, TSF_DOUBLE, TSF_DOUBLE, TSF_BOOLEAN};

typedef struct demo {
    int timing;
    const char *path;
} demo;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Rounds to the sensor's resolution (0.01), as a real sensor reports. */
static double q2(double x)
{
    return round(x * 100.0) / 100.0;
}

static void line(const demo *d, const char *what, double secs, uint64_t n, const char *unit)
{
    if (d->timing)
        printf("  %-34s %8.3f s  %8.1f M %s/s\n", what, secs, secs > 0 ? (double)n / secs / 1e6 : 0.0, unit);
    else
        printf("  %-34s -\n", what);
}

static int werr(const char *path, const tsf_error *e)
{
    cli_err("demo", "%s: %s", path, e->message);
    return e->code == TSF_EIO ? CLI_IO : CLI_DAMAGED;
}

static int write_file(const demo *d, uint64_t rows, uint64_t *points, uint64_t *raw)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.page_max_points = 1000; /* pages of ~17 minutes: most lie inside one hour, so the hourly aggregate
                                * answers them from page statistics */
    int orc = cli_writer_open("demo", d->path, &wo, &w);
    if (orc) return orc;
    tsf_column_schema cs[NSENS];
    for (int k = 0; k < NSENS; k++)
        cs[k] = (tsf_column_schema){SENSORS[k], TYPES[k], csv_default_encoding(TYPES[k]), TSF_LZ4, TSF_COLUMN_FIELD};
    int64_t *times = malloc(CHUNK * sizeof *times);
    double *temp = malloc(CHUNK * sizeof *temp), *vib = malloc(CHUNK * sizeof *vib), *pres = malloc(CHUNK * 8);
    float *hum = malloc(CHUNK * sizeof *hum);
    uint8_t *run = malloc(CHUNK), *hvalid = malloc(CHUNK / 8);
    tsf_tablet *t = NULL;
    int rc = CLI_IO;
    if (!times || !temp || !vib || !pres || !hum || !run || !hvalid) goto done;
    *points = *raw = 0;
    for (int dev = 0; dev < NDEV && rc == CLI_IO; dev++) {
        char name[64];
        snprintf(name, sizeof name, "root.demo.plant1.machine%d", dev + 1);
        if (tsf_writer_register_aligned(w, name, cs, NSENS, &e) ||
            tsf_tablet_new(w, name, NULL, 0, CHUNK, &t, &e)) {
            rc = werr(d->path, &e);
            break;
        }
        uint64_t seed = 42 + (uint64_t)dev;
        int64_t tm = T0 + dev * 137;
        double base = 60 + 5 * dev, drift = 0, p = 1013.25;
        int running = 1;
        for (uint64_t r = 0; r < rows;) {
            size_t n = rows - r < CHUNK ? (size_t)(rows - r) : CHUNK;
            memset(hvalid, 0xff, CHUNK / 8);
            for (size_t i = 0; i < n; i++, r++) {
                tm += 1000 + (int64_t)(unif(&seed) * 400) - 200;
                if (r == rows * 2 / 5) tm += 15 * 60 * 1000; /* an outage */
                times[i] = tm;
                double hour = (double)(tm - T0) / 3600000.0;
                drift += (unif(&seed) - 0.5) * 0.05;
                if (unif(&seed) < 0.0005) running = !running;
                double load = running ? 1.0 : 0.2;
                temp[i] = q2(base + 8 * sin(hour * 2 * M_PI / 24) * load + drift + (unif(&seed) - 0.5) * 0.4);
                hum[i] = (float)q2(45 + 10 * cos(hour * 2 * M_PI / 24) + (unif(&seed) - 0.5) * 2);
                if (unif(&seed) < 0.02) hvalid[i >> 3] &= (uint8_t) ~(1u << (i & 7));
                vib[i] = q2(running ? 2.5 + unif(&seed) * unif(&seed) * 3 : unif(&seed) * 0.1);
                p += (unif(&seed) - 0.5) * 0.1;
                pres[i] = q2(p);
                run[i] = (uint8_t)running;
            }
            if (tsf_tablet_set_times(t, times, n, &e) || tsf_tablet_set_column(t, 0, temp, NULL, n, &e) ||
                tsf_tablet_set_column(t, 1, hum, hvalid, n, &e) || tsf_tablet_set_column(t, 2, vib, NULL, n, &e) ||
                tsf_tablet_set_column(t, 3, pres, NULL, n, &e) || tsf_tablet_set_column(t, 4, run, NULL, n, &e) ||
                tsf_writer_write_tablet(w, t, &e)) {
                rc = werr(d->path, &e);
                break;
            }
            for (size_t i = 0; i < n; i++) *points += 4 + ((hvalid[i >> 3] >> (i & 7)) & 1);
        }
        tsf_tablet_free(t);
        t = NULL;
    }
    if (rc == CLI_IO) {
        rc = cli_writer_close("demo", w, d->path);
        w = NULL;
    }
    /* raw: an 8-byte time and the value per point */
    *raw = *points * 8 + (uint64_t)NDEV * rows * (8 + 8 + 8 + 1) + (*points - (uint64_t)NDEV * rows * 4) * 4;
done:
    cli_writer_discard(w);
    tsf_tablet_free(t);
    free(times);
    free(temp);
    free(vib);
    free(pres);
    free(hum);
    free(run);
    free(hvalid);
    return rc;
}

/* Runs a query, counting rows; prints the first `show` rows of temperature/humidity. */
static int run_query(tsf_reader *r, const tsf_query_options *o, int show, uint64_t *rows, tsf_query_stats *qs)
{
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    int shown = 0;
    *rows = 0;
    tsf_status st = tsf_query_open(r, o, &q, &e);
    while (st == TSF_OK && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        for (size_t i = 0; i < b->nrows && shown < show; i++, shown++) {
            char ts[64], v[2][40];
            tsf_device_info di;
            tsf_reader_device(r, b->device, &di, NULL);
            cli_format_time(ts, sizeof ts, b->times[i], 1000);
            for (int k = 0; k < 2; k++) {
                const tsf_column_batch *c = &b->columns[k];
                if ((c->validity[i >> 3] >> (i & 7)) & 1)
                    csv_format_real(v[k], sizeof v[k],
                                    c->type == TSF_FLOAT ? ((const float *)c->values)[i] : ((const double *)c->values)[i],
                                    c->type == TSF_FLOAT);
                else
                    strcpy(v[k], "null");
            }
            printf("    %s  %-26s %s=%s %s=%s\n", ts, di.name, b->columns[0].name, v[0], b->columns[1].name, v[1]);
        }
        *rows += b->nrows;
    }
    if (qs && q) tsf_query_get_stats(q, qs);
    tsf_query_close(q);
    if (st) {
        cli_err("demo", "query: %s", e.message);
        return cli_exit_code(st);
    }
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: tsf demo [--rows N] [-o FILE] [--no-timing]\n"
          "  writes sample sensor data (4 machines x 5 sensors, N rows each, default 250000) to FILE\n"
          "  (default demo.tsfile), queries a time window and a value filter, aggregates per hour,\n"
          "  and prints throughput and sizes; --no-timing prints '-' for times\n",
          f);
}

int tsf_cmd_demo(int argc, char **argv)
{
    demo d = {1, "demo.tsfile"};
    uint64_t rows = 250000;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (cli_value(&a, "--rows|-n")) {
            if (!a.bad && (cli_parse_u64(a.val, &rows) || rows < 10 || rows > 100000000)) {
                cli_err("demo", "--rows: a row count from 10 to 100000000, not '%s'", a.val);
                return CLI_USAGE;
            }
        } else if (cli_value(&a, "-o|--output")) {
            d.path = a.val;
        } else if (cli_is(&a, "--no-timing")) {
            d.timing = 0;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.bad) return CLI_USAGE;
    uint64_t points = 0, raw = 0;
    printf("tsf demo: %d machines x %d sensors x %" PRIu64 " rows (1 Hz, jittered, a 15 min outage, ~2%% null "
           "humidity)\n",
           NDEV, NSENS, rows);
    double t0 = now_s();
    int rc = write_file(&d, rows, &points, &raw);
    if (rc) return rc;
    double tw = now_s() - t0;
    struct stat sb;
    uint64_t size = stat(d.path, &sb) ? 0 : (uint64_t)sb.st_size;
    printf("1. write %s: %" PRIu64 " points\n", d.path, points);
    line(&d, "write", tw, points, "points");
    printf("  file %" PRIu64 " bytes, raw %" PRIu64 " bytes (8-byte time + value): %.1fx smaller\n", size, raw,
           size ? (double)raw / (double)size : 0.0);

    tsf_reader *r = NULL;
    if ((rc = cli_open_reader("demo", d.path, &r))) return rc;
    const char *cols[] = {"temperature", "humidity"};
    tsf_query_options o;
    uint64_t n;
    tsf_query_stats qs;

    /* 2. a time window on one machine */
    size_t dev0 = 0;
    tsf_query_options_init(&o);
    o.devices = &dev0;
    o.ndevices = 1;
    o.columns = cols;
    o.ncolumns = 2;
    o.time_min = T0 + 3600000LL;
    o.time_max = T0 + 2 * 3600000LL - 1;
    printf("2. time window 01:00-02:00 on machine1 (first rows):\n");
    t0 = now_s();
    if ((rc = run_query(r, &o, 3, &n, &qs))) goto out;
    printf("  %" PRIu64 " rows; pages read %" PRIu64 ", skipped %" PRIu64 " by statistics\n", n, qs.pages_read,
           qs.pages_skipped);
    line(&d, "window query", now_s() - t0, n, "rows");

    /* 3. a value filter over every machine */
    const char *expr = "vibration > 5 and humidity < 50";
    tsf_filter *flt = NULL;
    tsf_error e = {0};
    if (tsf_filter_parse(&flt, expr, &e)) {
        cli_err("demo", "filter: %s", e.message);
        rc = CLI_IO;
        goto out;
    }
    tsf_query_options_init(&o);
    o.columns = cols;
    o.ncolumns = 2;
    o.where = flt;
    printf("3. value filter \"%s\", every machine (first rows):\n", expr);
    t0 = now_s();
    rc = run_query(r, &o, 3, &n, &qs);
    tsf_filter_free(flt);
    if (rc) goto out;
    printf("  %" PRIu64 " rows; pages read %" PRIu64 ", skipped %" PRIu64 "\n", n, qs.pages_read, qs.pages_skipped);
    line(&d, "filter query", now_s() - t0, n, "rows");

    /* 4. an aggregate per hour */
    size_t temp_series;
    if (tsf_reader_find_series(r, 0, "temperature", &temp_series, &e)) {
        cli_err("demo", "%s: %s", d.path, e.message);
        rc = CLI_DAMAGED;
        goto out;
    }
    tsf_agg_options ao;
    tsf_agg_options_init(&ao);
    ao.window = 3600000;
    ao.window_origin = T0;
    tsf_agg_result *res = NULL;
    t0 = now_s();
    if (tsf_aggregate(r, 0, temp_series, &ao, &res, &e)) {
        cli_err("demo", "aggregate: %s", e.message);
        rc = cli_exit_code(e.code);
        goto out;
    }
    double ta = now_s() - t0;
    size_t nw = tsf_agg_result_count(res);
    tsf_agg_info ai;
    tsf_agg_result_info(res, &ai);
    printf("4. machine1 temperature per hour (%zu windows; first 4 and the outage):\n", nw);
    printf("    %-24s %6s %8s %8s %8s\n", "hour", "count", "min", "max", "avg");
    for (size_t i = 0; i < nw; i++) {
        const tsf_agg_window *w = tsf_agg_result_window(res, i);
        int outage = w->stats.count < 3000 && i + 1 < nw && i > 0;
        if (i >= 4 && !outage) continue;
        char ts[64];
        cli_format_time(ts, sizeof ts, w->start, 1000);
        printf("    %-24s %6" PRIu64 " %8.2f %8.2f %8.2f\n", ts, w->stats.count, w->stats.min, w->stats.max,
               w->stats.count ? w->stats.sum / (double)w->stats.count : 0.0);
    }
    printf("  points from statistics %" PRIu64 ", decoded %" PRIu64 " (pages from statistics %" PRIu64
           ", decoded %" PRIu64 ")\n",
           ai.points_from_stats, ai.points_decoded, ai.pages_from_stats, ai.pages_decoded);
    line(&d, "aggregate", ta, ai.points_from_stats + ai.points_decoded, "points");
    tsf_agg_result_free(res);

    /* 5. a full scan */
    tsf_query_options_init(&o);
    t0 = now_s();
    if ((rc = run_query(r, &o, 0, &n, &qs))) goto out;
    printf("5. full scan: %" PRIu64 " rows, %" PRIu64 " bytes decompressed\n", n, qs.bytes_decompressed);
    line(&d, "scan", now_s() - t0, points, "points");
    printf("next: tsf info %s | tsf stats %s --window 1h | tsf cat %s --where \"vibration > 5\"\n", d.path, d.path,
           d.path);
out:
    tsf_reader_close(r);
    return rc;
}
