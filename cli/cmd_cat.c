/*
 * cmd_cat.c - `tsf cat [--format golden] FILE`: prints every non-null value of a file in the layout
 * of the golden CSVs (testdata/tsfile-java/README.md): header device,measurement,time,type,value;
 * rows ordered by device string, measurement, time; FLOAT/DOUBLE as a decimal that reads back to
 * the same bits plus "|0x<bits>" (NaN, Infinity, -Infinity); TEXT/STRING double-quoted with `"`
 * doubled, backslash as \\ and control characters as \uXXXX; BLOB base64; DATE yyyy-MM-dd.
 * Each series is read through the reader API with a one-column query.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct dev_ref {
    const char *name;
    size_t index;
} dev_ref;

static int cmp_dev(const void *a, const void *b)
{
    return strcmp(((const dev_ref *)a)->name, ((const dev_ref *)b)->name);
}

/* RFC-4180 quoting of device and measurement fields, only when needed. */
static void put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_text(FILE *f, tsf_bytes b)
{
    fputc('"', f);
    for (size_t i = 0; i < b.len; i++) {
        uint8_t c = b.data[i];
        if (c == '"')
            fputs("\"\"", f);
        else if (c == '\\')
            fputs("\\\\", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_base64(FILE *f, tsf_bytes b)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < b.len; i += 3) {
        uint32_t v = (uint32_t)b.data[i] << 16;
        if (i + 1 < b.len) v |= (uint32_t)b.data[i + 1] << 8;
        if (i + 2 < b.len) v |= b.data[i + 2];
        fputc(A[(v >> 18) & 63], f);
        fputc(A[(v >> 12) & 63], f);
        fputc(i + 1 < b.len ? A[(v >> 6) & 63] : '=', f);
        fputc(i + 2 < b.len ? A[v & 63] : '=', f);
    }
}

/* Java LocalDate.toString of an int yyyyMMdd (years beyond 9999 get a sign). */
static void put_date(FILE *f, int32_t v)
{
    int64_t a = v < 0 ? -(int64_t)v : v;
    int64_t y = a / 10000, m = (a / 100) % 100, d = a % 100;
    if (v < 0)
        fprintf(f, "-%04" PRId64 "-%02" PRId64 "-%02" PRId64, y, m, d);
    else if (y > 9999)
        fprintf(f, "+%" PRId64 "-%02" PRId64 "-%02" PRId64, y, m, d);
    else
        fprintf(f, "%04" PRId64 "-%02" PRId64 "-%02" PRId64, y, m, d);
}

/* Shortest %.Ng (N <= 17) that reads back to the same value; Java's names for the specials. */
static void put_real(FILE *f, double x, int is_float)
{
    if (isnan(x)) {
        fputs("NaN", f);
        return;
    }
    if (isinf(x)) {
        fputs(x > 0 ? "Infinity" : "-Infinity", f);
        return;
    }
    char buf[64];
    for (int p = is_float ? 6 : 15; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, x);
        if (is_float ? (strtof(buf, NULL) == (float)x) : (strtod(buf, NULL) == x)) break;
    }
    if (x == 0 && signbit(x)) snprintf(buf, sizeof buf, "-0.0");
    fputs(buf, f);
}

static void put_value(FILE *f, tsf_type t, const void *vals, size_t i)
{
    switch (t) {
    case TSF_BOOLEAN: fputs(((const uint8_t *)vals)[i] ? "true" : "false", f); break;
    case TSF_INT32: fprintf(f, "%" PRId32, ((const int32_t *)vals)[i]); break;
    case TSF_DATE: put_date(f, ((const int32_t *)vals)[i]); break;
    case TSF_INT64:
    case TSF_TIMESTAMP: fprintf(f, "%" PRId64, ((const int64_t *)vals)[i]); break;
    case TSF_FLOAT: {
        float x = ((const float *)vals)[i];
        uint32_t u;
        memcpy(&u, &x, 4);
        put_real(f, x, 1);
        fprintf(f, "|0x%08" PRIx32, u);
        break;
    }
    case TSF_DOUBLE: {
        double x = ((const double *)vals)[i];
        uint64_t u;
        memcpy(&u, &x, 8);
        put_real(f, x, 0);
        fprintf(f, "|0x%016" PRIx64, u);
        break;
    }
    case TSF_TEXT:
    case TSF_STRING: put_text(f, ((const tsf_bytes *)vals)[i]); break;
    case TSF_BLOB: put_base64(f, ((const tsf_bytes *)vals)[i]); break;
    default: break;
    }
}

/* Prints one series (a one-column query) as golden rows. */
static int cat_series(tsf_reader *r, size_t dev, const char *dname, const char *meas, FILE *f)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.columns = &meas;
    o.ncolumns = 1;
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    while (st == TSF_OK && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        const tsf_column_batch *c = &b->columns[0];
        const char *tname = tsf_type_name(c->type);
        for (size_t i = 0; i < b->nrows; i++) {
            if (!((c->validity[i >> 3] >> (i & 7)) & 1)) continue;
            put_field(f, dname);
            fputc(',', f);
            put_field(f, meas);
            fprintf(f, ",%" PRId64 ",%s,", b->times[i], tname ? tname : "?");
            put_value(f, c->type, c->values, i);
            fputc('\n', f);
        }
    }
    tsf_query_close(q);
    if (st) {
        fprintf(stderr, "tsf cat: %s.%s: %s: %s\n", dname, meas, tsf_status_name(st), e.message);
        return 1;
    }
    return 0;
}

static int cat_golden(tsf_reader *r, FILE *f)
{
    tsf_error e = {0};
    if (tsf_reader_load_index(r, &e)) {
        fprintf(stderr, "tsf cat: %s: %s\n", tsf_status_name(e.code), e.message);
        return 1;
    }
    size_t nd = tsf_reader_device_count(r);
    dev_ref *devs = calloc(nd ? nd : 1, sizeof *devs);
    if (!devs) return 1;
    for (size_t i = 0; i < nd; i++) {
        tsf_device_info di;
        tsf_reader_device(r, i, &di, NULL);
        devs[i].name = di.name;
        devs[i].index = i;
    }
    qsort(devs, nd, sizeof *devs, cmp_dev);
    fputs("device,measurement,time,type,value\n", f);
    int rc = 0;
    for (size_t i = 0; i < nd && !rc; i++) {
        tsf_device_info di;
        tsf_reader_device(r, devs[i].index, &di, NULL);
        for (size_t j = 0; j < di.nseries && !rc; j++) {
            tsf_series_info si;
            if (tsf_reader_series(r, devs[i].index, j, &si, &e)) {
                fprintf(stderr, "tsf cat: %s: %s\n", tsf_status_name(e.code), e.message);
                rc = 1;
                break;
            }
            rc = cat_series(r, devs[i].index, di.name, si.measurement, f);
        }
    }
    free(devs);
    return rc;
}

int tsf_cmd_cat(int argc, char **argv)
{
    const char *format = "golden", *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc)
            format = argv[++i];
        else if (!strncmp(argv[i], "--format=", 9))
            format = argv[i] + 9;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "tsf cat: unknown option %s\n", argv[i]);
            return 2;
        } else if (!path)
            path = argv[i];
        else {
            fprintf(stderr, "tsf cat: one FILE expected\n");
            return 2;
        }
    }
    if (!path || strcmp(format, "golden") != 0) {
        fprintf(stderr, "usage: tsf cat [--format golden] FILE\n");
        return 2;
    }
    tsf_reader *r = NULL;
    tsf_error e = {0};
    if (tsf_reader_open(&r, path, NULL, &e)) {
        fprintf(stderr, "tsf cat: %s: %s: %s\n", path, tsf_status_name(e.code), e.message);
        return 1;
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    int rc = cat_golden(r, stdout);
    if (fflush(stdout) != 0) rc = 1;
    tsf_reader_close(r);
    return rc;
}
