/*
 * filter.c - E3 of ../shared/BENCHMARKS.md: time filtering inside one TS_2DIFF page.
 *
 * One page = one TS_2DIFF INT64 stream of N blocks x 129 timestamps (the Java block: a header value
 * plus 128 packed deltas), written by our encoder, deltas 1000 ms + uniform integer in [0, 2^bw - 1],
 * bw = 0, 4, 8, 12. A query for the centred 10% of the page's time span runs exactly what the reader
 * runs on a partly covered page with statistics (query.c decode_times): select the blocks that can meet
 * the window while walking the headers, stopping at the first block after it (tsf_td_window_select),
 * decode them as one run, and binary-search the window's rows. --listing full runs the earlier path
 * instead (list every block with tsf_ts2diff_blocks, then tsf_rd_blocks_select), for comparison. The conservative
 * bound takes a block's bound from its header (first + n * (min_delta + 2^width - 1)); the exact one from the next block's first
 * value. Reported per plan: skip_rate (blocks skipped / blocks wholly outside the window; blocks after
 * the walk's stop count as skipped), phantom_blocks (decoded blocks with no value in the window) and
 * p50/p90 latency over --runs runs (default 1000).
 *
 * usage: tsf-bench filter [--blocks N] [--runs R] [--listing window|full] [--json]
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "codec/ts2diff_walk.h"
#include "read/filter.h"

typedef struct e3_out {
    size_t skipped, decoded, phantom, rows;
} e3_out;

/* One query as the reader runs it on a page with statistics (query.c decode_times): select the blocks,
 * decode them as one run, binary-search the window. t is caller-provided scratch (no allocation per
 * run); nb is the page's block count (blocks past the walk's stop are skipped unseen). */
static int e3_query(const tsf_codec *codec, const uint8_t *src, size_t len, size_t nb, int64_t tmin,
                    int64_t tmax, int conservative, tsf_ts2diff_block *full, int64_t *t, int count, e3_out *o)
{
    tsf_td_window w;
    tsf_error e;
    if (full) { /* --listing full: every header listed, then selected */
        size_t n = 0;
        if (tsf_ts2diff_blocks(src, len, full, nb, &n, &e) || n != nb) {
            fprintf(stderr, "filter: block listing failed\n");
            return -1;
        }
        memset(&w, 0, sizeof w);
        w.nlisted = nb;
        tsf_rd_blocks_select(full, nb, tmin, tmax, conservative, &w.b0, &w.b1);
        if (w.b0 < nb) {
            w.off0 = full[w.b0].offset;
            w.off1 = w.b1 + 1 < nb ? full[w.b1 + 1].offset : len;
            w.ord0 = full[w.b0].ordinal;
            w.ndec = full[w.b1].ordinal + full[w.b1].count - w.ord0;
        }
    } else if (tsf_td_window_select(src, len, tmin, tmax, conservative, 0, &w, &e)) {
        fprintf(stderr, "filter: block walk: %s\n", e.message);
        return -1;
    }
    memset(o, 0, sizeof *o);
    if (w.b0 == w.nlisted) {
        o->skipped = nb;
        return 0;
    }
    size_t ndec = w.ndec;
    if (tsf_codec_decode(codec, TSF_INT64, TSF_ENC_TS_2DIFF, src + w.off0, w.off1 - w.off0, t, ndec, NULL,
                         &e)) {
        fprintf(stderr, "filter: decode: %s\n", e.message);
        return -1;
    }
    size_t lo = 0, hi = ndec;
    while (lo < hi) { /* first row >= tmin */
        size_t m = lo + (hi - lo) / 2;
        if (t[m] < tmin)
            lo = m + 1;
        else
            hi = m;
    }
    size_t a = lo;
    hi = ndec;
    while (lo < hi) { /* first row > tmax */
        size_t m = lo + (hi - lo) / 2;
        if (t[m] <= tmax)
            lo = m + 1;
        else
            hi = m;
    }
    o->rows = lo - a;
    o->decoded = w.b1 - w.b0 + 1;
    o->skipped = nb - o->decoded;
    /* phantom: decoded blocks none of whose values lies in the window (counted outside the timed runs; the
     * stream's blocks hold 129 values but the last) */
    for (size_t r = 0; r < ndec && count; r += 129) {
        int any = 0;
        for (size_t k = r; k < r + 129 && k < ndec && !any; k++) any = t[k] >= tmin && t[k] <= tmax;
        o->phantom += !any;
    }
    return 0;
}

int bench_filter(int argc, char **argv)
{
    long long nblocks = bench_opt_ll(argc, argv, "--blocks", 10000);
    long long runs = bench_opt_ll(argc, argv, "--runs", 1000);
    int json = bench_flag(argc, argv, "--json");
    const char *listing = bench_opt(argc, argv, "--listing");
    if (!listing) listing = "window";
    int listing_full = !strcmp(listing, "full");
    if (!listing_full && strcmp(listing, "window")) {
        fprintf(stderr, "filter: --listing must be window or full\n");
        return 1;
    }
    if (nblocks < 1 || nblocks > 10000000 || runs < 1) {
        fprintf(stderr, "filter: --blocks must be in [1, 1e7], --runs >= 1\n");
        return 1;
    }
    size_t n = (size_t)nblocks * 129;
    int64_t *ts = malloc(n * sizeof *ts), *t = malloc(n * sizeof *t);
    size_t cap = tsf_codec_encode_bound(TSF_INT64, TSF_ENC_TS_2DIFF, n, 0);
    uint8_t *buf = malloc(cap);
    tsf_ts2diff_block *blocks = malloc(((size_t)nblocks + 1) * sizeof *blocks);
    double *lat = malloc((size_t)runs * sizeof *lat);
    tsf_codec *codec = NULL;
    tsf_error e;
    int rc = 1;
    if (!ts || !t || !buf || !blocks || !lat || tsf_codec_open(&codec, NULL, &e)) {
        fprintf(stderr, "filter: setup failed\n");
        goto out;
    }
    if (!json) {
        bench_print_machine(stdout);
        printf("E3: one TS_2DIFF page of %lld blocks x 129 timestamps, centred 10%% window, %lld runs, path "
               "%s, listing %s\n",
               nblocks, runs, tsf_codec_path_name(tsf_codec_get_path(codec)), listing);
        printf("%-8s %-18s %9s %8s %8s %9s %9s %8s\n", "bw", "plan", "skipped", "outside", "skip", "phantom",
               "p50_ms", "p90_ms");
    }
    static const int widths[] = {0, 4, 8, 12};
    for (int wi = 0; wi < 4; wi++) {
        int bw = widths[wi];
        bench_rng rng = {42 + (uint64_t)bw};
        ts[0] = 1600000000000LL;
        for (size_t i = 1; i < n; i++)
            ts[i] = ts[i - 1] + 1000 + bench_rng_int(&rng, 0, ((int64_t)1 << bw) - 1);
        size_t len = 0;
        if (tsf_codec_encode(codec, TSF_INT64, TSF_ENC_TS_2DIFF, ts, n, buf, cap, &len, &e)) {
            fprintf(stderr, "filter: encode: %s\n", e.message);
            goto out;
        }
        size_t nb = 0;
        if (tsf_ts2diff_blocks(buf, len, NULL, 0, &nb, &e) || nb != (size_t)nblocks) {
            fprintf(stderr, "filter: expected %lld blocks, the stream has %zu\n", nblocks, nb);
            goto out;
        }
        int64_t span = ts[n - 1] - ts[0];
        int64_t tmin = ts[0] + span * 45 / 100, tmax = tmin + span / 10;
        size_t outside = 0, inside_rows = 0; /* ground truth from the values */
        for (size_t b = 0; b < nb; b++) outside += ts[b * 129 + 128] < tmin || ts[b * 129] > tmax;
        for (size_t i = 0; i < n; i++) inside_rows += ts[i] >= tmin && ts[i] <= tmax;
        for (int plan = 0; plan < 2; plan++) {
            int conservative = plan == 0;
            e3_out o;
            if (e3_query(codec, buf, len, nb, tmin, tmax, conservative, listing_full ? blocks : NULL, t, 1,
                         &o))
                goto out;
            if (o.rows != inside_rows) {
                fprintf(stderr, "filter: plan %c returned %zu rows, %zu are in the window\n", "AC"[plan],
                        o.rows, inside_rows);
                goto out;
            }
            for (long long r = 0; r < runs; r++) {
                uint64_t t0 = bench_now_ns();
                e3_out x;
                e3_query(codec, buf, len, nb, tmin, tmax, conservative, listing_full ? blocks : NULL, t, 0,
                         &x);
                lat[r] = (double)(bench_now_ns() - t0) * 1e-6;
            }
            double p50 = bench_percentile(lat, (size_t)runs, 50),
                   p90 = bench_percentile(lat, (size_t)runs, 90);
            double skip_rate = outside ? (double)o.skipped / (double)outside : 1.0;
            if (json)
                printf("{\"bench\":\"filter\",\"bit_width\":%d,\"plan\":\"%c\",\"skip_rate\":%.4f,"
                       "\"phantom_blocks\":%zu,\"p50_ms\":%.4f,\"p90_ms\":%.4f}\n",
                       bw, "AC"[plan], skip_rate, o.phantom, p50, p90);
            else
                printf("%-8d %-18s %9zu %8zu %8.4f %9zu %9.4f %9.4f\n", bw,
                       conservative ? "A (conservative)" : "C (exact)", o.skipped, outside, skip_rate,
                       o.phantom, p50, p90);
        }
    }
    rc = 0;
out:
    tsf_codec_close(codec);
    free(ts);
    free(t);
    free(buf);
    free(blocks);
    free(lat);
    return rc;
}
