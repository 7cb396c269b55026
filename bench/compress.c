/*
 * compress.c - `tsf-bench compress`: every series of a real-data collection (--data DIR, else
 * ../shared/datasets with its MANIFEST.md, else the repository's tests/data/datasets) written as a
 * one-series TsFile with the Java defaults (GORILLA for DOUBLE, TS_2DIFF for integers), with
 * TSF_ENCODING_AUTO, and with each legal encoding, all with one compression (LZ4 unless
 * --compression). Reports file bytes per point per series and in total next to the CSV's bytes per
 * point (an explicit encoding that would lose a value is refused by the writer: 'r'); per series
 * AUTO's chunks against the best fixed lossless encoding of each chunk (autobest.c); and the write
 * speed of AUTO and GORILLA over all series, --reps rounds (p50, p90).
 *
 * usage: tsf-bench compress [--data DIR] [--compression C] [--lz4-probe 0|1] [--reps N]
 *                          [--page-points N] [--budget-kb K] [--json]
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "autobest.h"
#include "bench.h"

static const char *find_dir(int argc, char **argv)
{
    static char buf[1024];
    /* --data, $TSF_SHARED_DIR/datasets, ../shared/datasets seen from the repo or a build folder, else
       the repository's own tests/data/datasets */
    const char *d = bench_opt(argc, argv, "--data");
    if (d) return d;
    const char *env = getenv("TSF_SHARED_DIR");
    const char *cand[] = {"../shared/datasets",   "../../shared/datasets", "../../../shared/datasets",
                          "tests/data/datasets", "../tests/data/datasets", "../../tests/data/datasets"};
    struct stat st;
    if (env) {
        snprintf(buf, sizeof buf, "%s/datasets", env);
        if (stat(buf, &st) == 0) return buf;
    }
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
        if (stat(cand[i], &st) == 0) return cand[i];
    return NULL;
}

/* Writes one series (with the Java defaults' GORILLA windows, lz4_probe as given); returns the file
 * size, 0 when the writer refused it. */
static int g_lz4_probe = 1;      /* writer option lz4_probe (--lz4-probe 0|1); set once before any write */
static long long g_page_points;  /* --page-points (0: the default) */
static long long g_budget_kb;    /* --budget-kb (0: the default) */

static void bench_options(tsf_writer_options *wo)
{
    tsf_writer_options_init(wo);
    wo->lz4_probe = g_lz4_probe;
    if (g_page_points > 0) wo->page_max_points = (uint32_t)g_page_points;
    if (g_budget_kb > 0) wo->memory_budget = (size_t)g_budget_kb << 10;
    wo->gorilla_compact = 0; /* the Java defaults' bytes (GORILLA windows as Java picks them) */
}

static size_t write_series(const ab_series *s, tsf_encoding enc, tsf_compression comp, ab_buf *out, int *lossless,
                           tsf_encoding *picked, size_t *nchunks)
{
    tsf_writer_options wo;
    bench_options(&wo);
    return ab_write(s, 0, s->n, enc, comp, &wo, out, lossless, picked, nchunks);
}

/* Write speed of AUTO and GORILLA over every series: `reps` rounds, the two alternating in each; MB/s of
 * input (8-byte time + 8-byte value per point) per round, p50 and p90 of the rounds. */
static void write_speed(const ab_series *ss, size_t ns, tsf_compression comp, int reps, double mbs[2][2])
{
    double *r[2] = {calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double))};
    ab_buf out = {0};
    tsf_writer_options wo;
    bench_options(&wo);
    double bytes = 0;
    for (size_t i = 0; i < ns; i++) bytes += 16.0 * (double)ss[i].present;
    for (int k = 0; k < reps && r[0] && r[1]; k++) {
        uint64_t ns_[2] = {0, 0};
        for (size_t i = 0; i < ns; i++)
            for (int j = 0; j < 2; j++) {
                int which = (k + j) & 1; /* alternate which goes first */
                uint64_t t0 = bench_now_ns();
                ab_write_only(&ss[i], 0, ss[i].n, which ? TSF_ENC_GORILLA : TSF_ENCODING_AUTO, comp, &wo, &out);
                ns_[which] += bench_now_ns() - t0;
            }
        for (int j = 0; j < 2; j++) r[j][k] = bytes / 1e6 / ((double)ns_[j] / 1e9);
    }
    for (int j = 0; j < 2; j++) {
        mbs[j][0] = r[j] ? bench_percentile(r[j], (size_t)reps, 50) : 0;
        mbs[j][1] = r[j] ? bench_percentile(r[j], (size_t)reps, 90) : 0;
        free(r[j]);
    }
    free(out.p);
}

#define NCFG (2 + TSF_ENC_RLBE + 1)

static void print_enc_header(void)
{
    for (int e = 0; e <= TSF_ENC_RLBE; e++)
        if (tsf_encoding_name((tsf_encoding)e) &&
            (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) || tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e)))
            printf(" %9.9s", tsf_encoding_name((tsf_encoding)e));
}

int bench_compress(int argc, char **argv)
{
    int json = bench_flag(argc, argv, "--json");
    g_lz4_probe = (int)bench_opt_ll(argc, argv, "--lz4-probe", 1);
    int reps = (int)bench_opt_ll(argc, argv, "--reps", 5);
    g_page_points = bench_opt_ll(argc, argv, "--page-points", 0);
    g_budget_kb = bench_opt_ll(argc, argv, "--budget-kb", 0);
    if (reps < 1) reps = 1;
    tsf_compression comp = TSF_LZ4;
    const char *cs = bench_opt(argc, argv, "--compression");
    if (cs && tsf_compression_parse(cs, &comp)) {
        fprintf(stderr, "compress bench: unknown compression %s\n", cs);
        return 1;
    }
    const char *dir = find_dir(argc, argv);
    if (!dir) {
        fprintf(stderr, "compress bench: no datasets folder found (use --data DIR)\n");
        return 1;
    }
    ab_series *ss = NULL;
    size_t ns = 0;
    if (ab_load_dir(dir, &ss, &ns) || ns == 0) {
        fprintf(stderr, "compress bench: no series loaded from %s\n", dir);
        ab_free(ss, ns);
        return 1;
    }
    /* configurations: 0 = Java default, 1 = AUTO, 2 + e = encoding e */
    double tot_bytes[NCFG] = {0}, tot_pts[NCFG] = {0}, tot_csv = 0, all_pts = 0;
    double tot_auto_chunks = 0, tot_best = 0, worst_all = 0;
    size_t over2 = 0, tot_chunks = 0;
    int tot_lossy[NCFG] = {0}, tot_all[NCFG];
    for (int k = 0; k < NCFG; k++) tot_all[k] = 1;
    size_t auto_worse = 0;
    ab_buf out = {0};
    if (!json) {
        bench_print_machine(stdout);
        printf("compress: %zu series from %s, %s; bytes/point of the whole file ('*' = does not read back "
               "bit for bit, '-' = illegal, 'r' = refused: the writer does not store a value it would lose)\n",
               ns, dir, tsf_compression_name(comp));
        printf("%-58s %5s %6s %7s %7s %-9s", "series", "type", "csv", "default", "auto", "picked");
        print_enc_header();
        printf("  %6s %8s\n", "chunks", "vs best");
    }
    int rc = 0;
    tsf_writer_options wo;
    bench_options(&wo);
    for (size_t i = 0; i < ns && !rc; i++) {
        ab_series *s = &ss[i];
        double pts = (double)(s->present ? s->present : 1);
        double bpp[NCFG];
        int ok[NCFG];
        tsf_encoding picked = (tsf_encoding)-1;
        for (int k = 0; k < NCFG; k++) {
            bpp[k] = -1;
            ok[k] = 0;
            tsf_encoding enc = k == 0   ? (s->type == TSF_DOUBLE ? TSF_ENC_GORILLA : TSF_ENC_TS_2DIFF)
                               : k == 1 ? TSF_ENCODING_AUTO
                                        : (tsf_encoding)(k - 2);
            if (k >= 2 && !tsf_codec_can_encode(s->type, enc)) {
                tot_all[k] = 0;
                continue;
            }
            tsf_encoding pk = enc;
            size_t nc = 0;
            size_t bytes = write_series(s, enc, comp, &out, &ok[k], &pk, &nc);
            if (!bytes) { /* refused: an explicit encoding that would lose a value */
                if (k < 2) rc = 1;
                bpp[k] = -2;
                tot_all[k] = 0;
                continue;
            }
            if (k == 1) picked = pk;
            bpp[k] = (double)bytes / pts;
            tot_bytes[k] += (double)bytes;
            tot_pts[k] += pts;
            tot_lossy[k] += !ok[k];
            if (json) {
                printf("{\"bench\":\"compress\",\"series\":\"%s\",\"type\":\"%s\",\"encoding\":\"%s\","
                       "\"compression\":\"%s\",\"bytes_per_point\":%.4f,\"csv_bytes_per_point\":%.4f,"
                       "\"lossless\":%s,\"points\":%zu,\"file_bytes\":%zu",
                       s->name, tsf_type_name(s->type),
                       k == 0   ? "default"
                       : k == 1 ? "auto"
                                : tsf_encoding_name(enc),
                       tsf_compression_name(comp), bpp[k], s->csv_bpp, ok[k] ? "true" : "false", s->present,
                       bytes);
                if (k == 1)
                    printf(",\"picked\":\"%s\",\"chunks\":%zu", tsf_encoding_name(pk) ? tsf_encoding_name(pk) : "?",
                           nc);
                printf("}\n");
            }
        }
        if (rc) break;
        ab_result ar;
        if (ab_check(s, comp, &wo, &ar)) {
            fprintf(stderr, "compress bench: %s: the per-chunk check failed\n", s->name);
            rc = 1;
            break;
        }
        tot_auto_chunks += (double)ar.auto_bytes;
        tot_best += (double)ar.best_bytes;
        tot_chunks += ar.nchunks;
        if (ar.worst > worst_all) worst_all = ar.worst;
        if (ar.worst > 0.02) over2++;
        if (json)
            printf("{\"bench\":\"compress\",\"series\":\"%s\",\"encoding\":\"auto_vs_best\",\"compression\":\"%s\","
                   "\"auto_bytes\":%llu,\"best_fixed_bytes\":%llu,\"auto_over_best\":%.5f,\"chunks\":%zu,"
                   "\"worst_chunk_best\":\"%s\"}\n",
                   s->name, tsf_compression_name(comp), (unsigned long long)ar.auto_bytes,
                   (unsigned long long)ar.best_bytes, ar.worst, ar.nchunks,
                   tsf_encoding_name(ar.worst_best) ? tsf_encoding_name(ar.worst_best) : "?");
        if (bpp[1] > bpp[0]) auto_worse++;
        if (!ok[1]) fprintf(stderr, "compress bench: %s: AUTO did not read back bit for bit\n", s->name);
        tot_csv += s->csv_bpp * pts;
        all_pts += pts;
        if (!json) {
            const char *nm = s->name;
            size_t l = strlen(nm);
            printf("%-58s %5s %6.2f %6.3f%s %6.3f%s %-9s", l > 58 ? nm + l - 58 : nm,
                   s->type == TSF_DOUBLE ? "dbl" : "int", s->csv_bpp, bpp[0], ok[0] ? " " : "*", bpp[1],
                   ok[1] ? " " : "*", tsf_encoding_name(picked) ? tsf_encoding_name(picked) : "?");
            for (int e = 0; e <= TSF_ENC_RLBE; e++)
                if (tsf_encoding_name((tsf_encoding)e) && (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) ||
                                                           tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e))) {
                    if (bpp[2 + e] == -1)
                        printf(" %9s", "-");
                    else if (bpp[2 + e] == -2)
                        printf(" %9s", "r");
                    else
                        printf(" %8.3f%s", bpp[2 + e], ok[2 + e] ? " " : "*");
                }
            printf("  %6zu %+7.2f%%\n", ar.nchunks, 100.0 * ar.worst);
        }
    }
    double mbs[2][2] = {{0, 0}, {0, 0}}; /* [AUTO, GORILLA][p50, p90] */
    if (!rc) write_speed(ss, ns, comp, reps, mbs);
    double over_total = tot_best > 0 ? tot_auto_chunks / tot_best - 1.0 : 0;
    if (!rc) {
        if (json) {
            for (int k = 0; k < NCFG; k++) {
                if (!tot_pts[k]) continue;
                printf("{\"bench\":\"compress\",\"series\":\"TOTAL%s\",\"encoding\":\"%s\",\"compression\":\"%s\","
                       "\"bytes_per_point\":%.4f,\"csv_bytes_per_point\":%.4f,\"lossless\":%s,\"points\":%.0f",
                       tot_all[k] ? "" : " (series where legal and stored)",
                       k == 0   ? "default"
                       : k == 1 ? "auto"
                                : tsf_encoding_name((tsf_encoding)(k - 2)),
                       tsf_compression_name(comp), tot_bytes[k] / tot_pts[k], tot_csv / all_pts,
                       tot_lossy[k] ? "false" : "true", tot_pts[k]);
                if (k == 1)
                    printf(",\"auto_larger_than_default\":%zu,\"auto_bytes\":%.0f,\"best_fixed_bytes\":%.0f,"
                           "\"auto_over_best\":%.5f,\"auto_over_best_worst_chunk\":%.5f,\"series_over_2pct\":%zu,"
                           "\"chunks\":%zu,\"auto_write_mb_s\":%.1f,\"auto_write_mb_s_p90\":%.1f,"
                           "\"gorilla_write_mb_s\":%.1f,\"gorilla_write_mb_s_p90\":%.1f,\"reps\":%d",
                           auto_worse, tot_auto_chunks, tot_best, over_total, worst_all, over2, tot_chunks,
                           mbs[0][0], mbs[0][1], mbs[1][0], mbs[1][1], reps);
                printf("}\n");
            }
        } else {
            printf("%-58s %5s %6.2f %6.3f%s %6.3f%s %-9s", "TOTAL (bytes / points)", "", tot_csv / all_pts,
                   tot_bytes[0] / tot_pts[0], tot_lossy[0] ? "*" : " ", tot_bytes[1] / tot_pts[1],
                   tot_lossy[1] ? "*" : " ", "");
            for (int e = 0; e <= TSF_ENC_RLBE; e++)
                if (tsf_encoding_name((tsf_encoding)e) && (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) ||
                                                           tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e))) {
                    if (!tot_pts[2 + e])
                        printf(" %9s", "-");
                    else
                        printf(" %8.3f%s", tot_bytes[2 + e] / tot_pts[2 + e], tot_lossy[2 + e] ? "*" : " ");
                }
            printf("  %6zu %+7.2f%%\n", tot_chunks, 100.0 * over_total);
            printf("(an encoding's total covers the series where it is legal and stored)\n");
            printf("AUTO larger than the Java default on %zu of %zu series; AUTO lossy on %d series\n", auto_worse, ns,
                   tot_lossy[1]);
            printf("AUTO chunks vs the best fixed lossless encoding of each chunk: %.0f vs %.0f bytes (%+.2f%%); "
                   "worst chunk %+.2f%%; series with a chunk over 2%%: %zu\n",
                   tot_auto_chunks, tot_best, 100.0 * over_total, 100.0 * worst_all, over2);
            printf("write speed, MB/s of input (16 B/point), p50 / p90 of %d rounds: AUTO %.1f / %.1f, GORILLA %.1f / "
                   "%.1f\n",
                   reps, mbs[0][0], mbs[0][1], mbs[1][0], mbs[1][1]);
        }
    }
    ab_free(ss, ns);
    free(out.p);
    return rc;
}
