/*
 * filter.c - E3 of ../shared/BENCHMARKS.md: time filtering inside one TS_2DIFF page.
 *
 * One page = one TS_2DIFF INT64 stream of N blocks x 129 timestamps (the Java block: a header value
 * plus 128 packed deltas), written by our encoder, deltas 1000 ms + uniform integer in [0, 2^bw - 1],
 * bw = 0, 4, 8, 12. A query for the centred 10% of the page's time span runs exactly what the reader
 * runs on a partly covered page (query.c decode_times): list the blocks (tsf_ts2diff_blocks), select
 * those that can meet the window (rd_blocks_select, shared with query.c), decode them as one run, and
 * binary-search the window's rows. Plan A bounds a block by its header (first + n * (min_delta +
 * 2^width - 1)); Plan C by the next block's first value. Reported per plan: skip_rate (blocks skipped /
 * blocks wholly outside the window), phantom_blocks (decoded blocks with no value in the window) and
 * p50/p90 latency over --runs runs (default 1000).
 *
 * usage: tsf-bench filter [--blocks N] [--runs R] [--json]
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "read/filter.h"

typedef struct e3_out {
    size_t skipped, decoded, phantom, rows;
} e3_out;

/* One query as the reader runs it; blocks/t are caller-provided scratch (no allocation per run). */
static int e3_query(const tsf_codec *codec, const uint8_t *src, size_t len, int64_t tmin, int64_t tmax,
                    int conservative, tsf_ts2diff_block *blocks, size_t cap, int64_t *t, int count, e3_out *o)
{
    size_t nb = 0, b0, b1;
    tsf_error e;
    if (tsf_ts2diff_blocks(src, len, blocks, cap, &nb, &e) || nb > cap) {
        fprintf(stderr, "filter: block walk: %s\n", e.message);
        return -1;
    }
    rd_blocks_select(blocks, nb, tmin, tmax, conservative, &b0, &b1);
    memset(o, 0, sizeof *o);
    if (b0 == nb) {
        o->skipped = nb;
        return 0;
    }
    size_t ndec = 0;
    for (size_t i = b0; i <= b1; i++) ndec += blocks[i].count;
    size_t end = b1 + 1 < nb ? blocks[b1 + 1].offset : len;
    if (tsf_codec_decode(codec, TSF_INT64, TSF_ENC_TS_2DIFF, src + blocks[b0].offset, end - blocks[b0].offset,
                         t, ndec, NULL, &e)) {
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
    o->decoded = b1 - b0 + 1;
    o->skipped = nb - o->decoded;
    /* phantom: decoded blocks none of whose values lies in the window (counted outside the timed runs) */
    size_t r = 0;
    for (size_t i = b0; i <= b1 && count; i++) {
        int any = 0;
        for (size_t k = 0; k < blocks[i].count && !any; k++) any = t[r + k] >= tmin && t[r + k] <= tmax;
        o->phantom += !any;
        r += blocks[i].count;
    }
    return 0;
}

int bench_filter(int argc, char **argv)
{
    long long nblocks = bench_opt_ll(argc, argv, "--blocks", 10000);
    long long runs = bench_opt_ll(argc, argv, "--runs", 1000);
    int json = bench_flag(argc, argv, "--json");
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
               "%s\n",
               nblocks, runs, tsf_codec_path_name(tsf_codec_get_path(codec)));
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
            if (e3_query(codec, buf, len, tmin, tmax, conservative, blocks, nb, t, 1, &o)) goto out;
            if (o.rows != inside_rows) {
                fprintf(stderr, "filter: plan %c returned %zu rows, %zu are in the window\n", "AC"[plan],
                        o.rows, inside_rows);
                goto out;
            }
            for (long long r = 0; r < runs; r++) {
                uint64_t t0 = bench_now_ns();
                e3_out x;
                e3_query(codec, buf, len, tmin, tmax, conservative, blocks, nb, t, 0, &x);
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
