/*
 * write_table.c - writes a table-model TsFile: table "weather" with the tag column "station" and
 * the fields "temperature" (DOUBLE) and "humidity" (FLOAT), 3 stations x 1440 minutes, one tablet
 * per station, a page per hour (so hourly aggregates come from page statistics).
 * Usage: write_table [OUT.tsfile]   (default weather.tsfile)
 */
#include <stdio.h>
#include <tsf.h>

#define ROWS 1440 /* one day of minutes */

static int fail(const char *what, const tsf_error *err)
{
    fprintf(stderr, "%s: %s: %s\n", what, tsf_status_name(err->code), err->message);
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "weather.tsfile";
    static const char *stations[] = {"north", "south", "west"};
    const tsf_column_schema cols[] = {
        {"station", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
        {"temperature", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
        {"humidity", TSF_FLOAT, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
    };
    tsf_writer_options opts;
    tsf_writer_options_init(&opts);
    opts.page_max_points = 60;
    tsf_error err = {0};
    tsf_writer *w = NULL;
    if (tsf_writer_open(&w, path, &opts, &err) != TSF_OK) return fail("open", &err);
    if (tsf_writer_register_table(w, "weather", cols, 3, &err) != TSF_OK) {
        tsf_writer_abort(w);
        return fail("register", &err);
    }
    tsf_tablet *t = NULL;
    if (tsf_tablet_new(w, "weather", NULL, 0, ROWS, &t, &err) != TSF_OK) {
        tsf_writer_abort(w);
        return fail("tablet", &err);
    }
    const int64_t t0 = 1704067200000; /* 2024-01-01T00:00:00Z in milliseconds */
    for (size_t s = 0; s < 3; s++) {
        for (size_t i = 0; i < ROWS; i++) {
            double temp = 10.0 + (double)s + (double)(i % 360) / 60.0;
            float hum = 40.0f + (float)((i * 7 + s) % 30);
            if (tsf_tablet_set_time(t, i, t0 + (int64_t)i * 60000, &err) != TSF_OK ||
                tsf_tablet_set_bytes(t, i, 0, stations[s], 5, &err) != TSF_OK ||
                tsf_tablet_set_double(t, i, 1, temp, &err) != TSF_OK ||
                (i % 10 != 9 && tsf_tablet_set_float(t, i, 2, hum, &err) != TSF_OK)) { /* every 10th: null */
                tsf_tablet_free(t);
                tsf_writer_abort(w);
                return fail("tablet value", &err);
            }
        }
        if (tsf_writer_write_tablet(w, t, &err) != TSF_OK) { /* writes the rows and resets the tablet */
            tsf_tablet_free(t);
            tsf_writer_abort(w);
            return fail("write", &err);
        }
    }
    tsf_tablet_free(t);
    if (tsf_writer_close(w, &err) != TSF_OK) return fail("close", &err);
    printf("wrote %s: table weather, 3 devices x %d rows\n", path, ROWS);
    return 0;
}
