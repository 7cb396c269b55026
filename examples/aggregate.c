/*
 * aggregate.c - count, min, max and average of one series per time window, answered from the file's
 * statistics where a whole chunk or page lies in one window. Usage:
 * aggregate [FILE [DEVICE [MEASUREMENT [WINDOW_MS]]]]
 * (defaults: weather.tsfile, weather.north, temperature, one hour).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <tsf.h>

static int fail(const char *what, const tsf_error *err)
{
    fprintf(stderr, "%s: %s: %s\n", what, tsf_status_name(err->code), err->message);
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "weather.tsfile";
    const char *device = argc > 2 ? argv[2] : "weather.north";
    const char *measurement = argc > 3 ? argv[3] : "temperature";
    int64_t window = argc > 4 ? strtoll(argv[4], NULL, 10) : 3600000;
    tsf_error err = {0};
    tsf_reader *r = NULL;
    if (tsf_reader_open(&r, path, NULL, &err) != TSF_OK) return fail("open", &err);
    size_t d, s;
    if (tsf_reader_find_device(r, device, &d, &err) != TSF_OK ||
        tsf_reader_find_series(r, d, measurement, &s, &err) != TSF_OK) {
        tsf_reader_close(r);
        return fail("find", &err);
    }
    tsf_agg_options ao;
    tsf_agg_options_init(&ao);
    ao.window = window;
    tsf_agg_result *res = NULL;
    if (tsf_aggregate(r, d, s, &ao, &res, &err) != TSF_OK) {
        tsf_reader_close(r);
        return fail("aggregate", &err);
    }
    printf("%-15s %6s %10s %10s %10s\n", "window start", "count", "min", "max", "avg");
    for (size_t i = 0; i < tsf_agg_result_count(res); i++) {
        const tsf_agg_window *w = tsf_agg_result_window(res, i);
        printf("%-15" PRId64 " %6" PRIu64 " %10.3f %10.3f %10.3f\n", w->start, w->stats.count, w->stats.min,
               w->stats.max, w->stats.sum / (double)w->stats.count);
    }
    tsf_agg_info info;
    tsf_agg_result_info(res, &info);
    printf("%s.%s: %zu windows; points from statistics %" PRIu64 ", decoded %" PRIu64 "\n", device, measurement,
           tsf_agg_result_count(res), info.points_from_stats, info.points_decoded);
    tsf_agg_result_free(res);
    tsf_reader_close(r);
    return 0;
}
