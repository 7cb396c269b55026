/*
 * query_range.c - reads the rows of one hour from every device of a TsFile and prints the first few
 * of each device with the query's counters. Usage: query_range [FILE] [FROM_MS [TO_MS]]
 * (defaults: weather.tsfile, the hour from 2024-01-01T06:00:00Z).
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

static void print_cell(const tsf_column_batch *c, size_t row)
{
    if (!(c->validity[row / 8] >> (row % 8) & 1)) {
        printf(" %s=null", c->name);
        return;
    }
    switch (c->type) {
    case TSF_DOUBLE: printf(" %s=%.3f", c->name, ((const double *)c->values)[row]); break;
    case TSF_FLOAT: printf(" %s=%.3f", c->name, (double)((const float *)c->values)[row]); break;
    case TSF_INT32: case TSF_DATE: printf(" %s=%" PRId32, c->name, ((const int32_t *)c->values)[row]); break;
    case TSF_INT64: case TSF_TIMESTAMP: printf(" %s=%" PRId64, c->name, ((const int64_t *)c->values)[row]); break;
    case TSF_BOOLEAN: printf(" %s=%d", c->name, ((const uint8_t *)c->values)[row]); break;
    default: {
        const tsf_bytes *b = &((const tsf_bytes *)c->values)[row];
        printf(" %s=%.*s", c->name, (int)b->len, (const char *)b->data);
    }
    }
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "weather.tsfile";
    int64_t from = argc > 2 ? strtoll(argv[2], NULL, 10) : 1704067200000 + 6 * 3600000;
    int64_t to = argc > 3 ? strtoll(argv[3], NULL, 10) : from + 3600000 - 1;
    tsf_error err = {0};
    tsf_reader *r = NULL;
    if (tsf_reader_open(&r, path, NULL, &err) != TSF_OK) return fail("open", &err);

    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.time_min = from; /* inclusive range */
    qo.time_max = to;
    tsf_query *q = NULL;
    if (tsf_query_open(r, &qo, &q, &err) != TSF_OK) {
        tsf_reader_close(r);
        return fail("query", &err);
    }
    size_t shown_device = (size_t)-1, shown = 0;
    const tsf_batch *b;
    tsf_status st;
    while ((st = tsf_query_next(q, &b, &err)) == TSF_OK && b) {
        if (b->device != shown_device) { /* batches of one device come in time order */
            tsf_device_info di;
            if (tsf_reader_device(r, b->device, &di, &err) != TSF_OK) break;
            printf("%s\n", di.name);
            shown_device = b->device;
            shown = 0;
        }
        for (size_t i = 0; i < b->nrows && shown < 3; i++, shown++) {
            printf("  %" PRId64, b->times[i]);
            for (size_t c = 0; c < b->ncolumns; c++) print_cell(&b->columns[c], i);
            printf("\n");
        }
    }
    if (st != TSF_OK) {
        tsf_query_close(q);
        tsf_reader_close(r);
        return fail("next", &err);
    }
    tsf_query_stats qs;
    tsf_query_get_stats(q, &qs);
    printf("%" PRIu64 " rows in [%" PRId64 ", %" PRId64 "]; pages read %" PRIu64 ", skipped %" PRIu64 "\n",
           qs.rows, from, to, qs.pages_read, qs.pages_skipped);
    tsf_query_close(q);
    tsf_reader_close(r);
    return 0;
}
