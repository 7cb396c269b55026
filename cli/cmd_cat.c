/*
 * cmd_cat.c - `tsf cat FILE` and `tsf head FILE [-n N]`: print the rows of a file, or of a dataset (several
 *  files, a directory, a pattern: tsf_dataset_query, the same layouts except golden and --order time).
 *
 *  --format csv (default): wide; a `time` column, then (several devices) a `device` column or (one
 *    table-model table) its TAG columns, then one column per measurement; empty cells for nulls; one
 *    block of rows per device, in index order. FLOAT/DOUBLE print as the shortest decimal that reads
 *    back to the same bits, TEXT/STRING RFC-4180 quoted when needed ("" = empty string), BLOB 0x hex,
 *    DATE yyyy-MM-dd. `tsf import` reads this layout back.
 *  --format jsonl: one JSON object per row, same cells (NaN/Infinity as strings, null cells as null).
 *  --format golden: every non-null value in the layout of the golden CSVs (testdata/tsfile-java/
 *    README.md): device,measurement,time,type,value; rows ordered by device string, measurement,
 *    time; FLOAT/DOUBLE with "|0x<bits>"; TEXT/STRING always quoted with \\ and \uXXXX escapes; BLOB
 *    base64. ../shared/tools/golden-check compares it with the Java reference's CSVs.
 * Options: --columns a,b  --from T --to T (numbers in --time-unit, default ms, or ISO-8601)
 *  --where EXPR (tsf_filter_parse)  --limit N  --time-format iso  --time-unit U.
 * Exit 4 when no row matched (csv, jsonl; the golden dump of an empty file exits 0).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "suggest.h"

typedef struct cat_opts {
    const char *cmd;
    const char *format;
    const char *path;
    char *colbuf;
    const char **cols; /* --columns, NULL = all */
    size_t ncols;
    int64_t tmin, tmax;
    int64_t per_second;
    const char *where;
    const char *cache; /* --cache: the dataset's metadata cache file */
    uint64_t limit; /* UINT64_MAX = none */
    int iso;
    int by_time; /* --order time: rows of every device merged by time */
    tsf_filter *filter;
    uint64_t rows; /* printed */
} cat_opts;

/* ---- golden layout ---------------------------------------------------------------------------- */

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

static void put_real(FILE *f, double x, int is_float)
{
    char buf[64];
    csv_format_real(buf, sizeof buf, x, is_float);
    fputs(buf, f);
}

static void put_golden_value(FILE *f, tsf_type t, const void *vals, size_t i)
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

static void init_query(const cat_opts *c, tsf_query_options *o)
{
    tsf_query_options_init(o);
    o->time_min = c->tmin;
    o->time_max = c->tmax;
    o->where = c->filter;
}

/* Prints one series (a one-column query) as golden rows. */
static int cat_series(cat_opts *c, tsf_reader *r, size_t dev, const char *dname, const char *meas, FILE *f)
{
    tsf_query_options o;
    init_query(c, &o);
    o.devices = &dev;
    o.ndevices = 1;
    o.columns = &meas;
    o.ncolumns = 1;
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    while (st == TSF_OK && c->rows < c->limit && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        const tsf_column_batch *cb = &b->columns[0];
        const char *tname = tsf_type_name(cb->type);
        for (size_t i = 0; i < b->nrows && c->rows < c->limit; i++) {
            if (!((cb->validity[i >> 3] >> (i & 7)) & 1)) continue;
            put_field(f, dname);
            fputc(',', f);
            put_field(f, meas);
            fprintf(f, ",%" PRId64 ",%s,", b->times[i], tname ? tname : "?");
            put_golden_value(f, cb->type, cb->values, i);
            fputc('\n', f);
            c->rows++;
        }
    }
    tsf_query_close(q);
    if (st) {
        cli_err(c->cmd, "%s: %s.%s: %s", c->path, dname, meas, e.message);
        return cli_exit_code(st);
    }
    return 0;
}

static int wanted(const cat_opts *c, const char *name)
{
    if (!c->cols) return 1;
    for (size_t i = 0; i < c->ncols; i++)
        if (!strcmp(c->cols[i], name)) return 1;
    return 0;
}

static int cat_golden(cat_opts *c, tsf_reader *r, FILE *f)
{
    tsf_error e = {0};
    size_t nd = tsf_reader_device_count(r);
    dev_ref *devs = calloc(nd ? nd : 1, sizeof *devs);
    if (!devs) return CLI_IO;
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
                cli_err(c->cmd, "%s: %s", c->path, e.message);
                rc = cli_exit_code(e.code);
                break;
            }
            if (wanted(c, si.measurement)) rc = cat_series(c, r, devs[i].index, di.name, si.measurement, f);
        }
    }
    free(devs);
    return rc;
}

/* ---- wide layout (csv, jsonl) ----------------------------------------------------------------- */

static void put_hex(FILE *f, tsf_bytes b)
{
    static const char H[] = "0123456789abcdef";
    fputs("0x", f);
    for (size_t i = 0; i < b.len; i++) {
        fputc(H[b.data[i] >> 4], f);
        fputc(H[b.data[i] & 15], f);
    }
}

/* One cell in the csv (json = 0) or jsonl (json = 1) layout; the caller handles nulls. */
static void put_cell(FILE *f, tsf_type t, const void *vals, size_t i, int json)
{
    switch (t) {
    case TSF_FLOAT:
    case TSF_DOUBLE: {
        double x = t == TSF_FLOAT ? ((const float *)vals)[i] : ((const double *)vals)[i];
        char buf[64];
        csv_format_real(buf, sizeof buf, x, t == TSF_FLOAT);
        if (json && !isfinite(x))
            fprintf(f, "\"%s\"", buf);
        else
            fputs(buf, f);
        break;
    }
    case TSF_TEXT:
    case TSF_STRING: {
        tsf_bytes b = ((const tsf_bytes *)vals)[i];
        if (json)
            cli_json_bytes(f, b.data, b.len);
        else
            csv_put_field(f, (const char *)b.data, b.len);
        break;
    }
    case TSF_BLOB:
        if (json) fputc('"', f);
        put_hex(f, ((const tsf_bytes *)vals)[i]);
        if (json) fputc('"', f);
        break;
    case TSF_DATE:
        if (json) fputc('"', f);
        put_date(f, ((const int32_t *)vals)[i]);
        if (json) fputc('"', f);
        break;
    default: put_golden_value(f, t, vals, i); break;
    }
}

static void put_time(const cat_opts *c, FILE *f, int64_t t)
{
    if (c->iso) {
        char buf[64];
        cli_format_time(buf, sizeof buf, t, c->per_second);
        fprintf(f, c->format[0] == 'j' ? "\"%s\"" : "%s", buf);
    } else {
        fprintf(f, "%" PRId64, t);
    }
}

#define MAX_CAT_PATHS 1024
#define MAX_CAT_TAGS 64 /* TAG columns of the table layout (more: the device column instead) */

typedef struct wide {
    const char **names; /* value columns */
    size_t n;
    const tsf_table_column **tags; /* table layout: the TAG columns of the one table */
    size_t ntags;
    int device_col; /* several devices (tree layout) */
} wide;

static int add_name(wide *w, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->names[i], name)) return 0;
    const char **p = realloc(w->names, (w->n + 1) * sizeof *p);
    if (!p) return -1;
    w->names = p;
    w->names[w->n++] = name;
    return 0;
}

/* Prints the names of the file closest to an unknown column: every series, and with tables every column of
 * its tables (TAG columns included). */
static void suggest_columns(tsf_reader *r, const char *unknown, int tables, const char *cmd)
{
    cli_suggest sg;
    cli_suggest_init(&sg, unknown);
    for (size_t d = 0, nd = tsf_reader_device_count(r); d < nd; d++) {
        tsf_device_info di;
        if (tsf_reader_device(r, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            if (!tsf_reader_series(r, d, j, &si, NULL)) cli_suggest_offer(&sg, si.measurement);
        }
    }
    for (size_t t = 0, nt = tables ? tsf_reader_table_count(r) : 0; t < nt; t++) {
        tsf_table_info ti;
        if (tsf_reader_table(r, t, &ti, NULL)) continue;
        for (size_t k = 0; k < ti.ncolumns; k++) cli_suggest_offer(&sg, ti.columns[k].name);
    }
    cli_suggest_print(&sg, cmd);
}

/* A column the file has: a series of some device, or a column (TAG or FIELD) of one of its tables. */
static int file_has_column(tsf_reader *r, const char *name)
{
    size_t j;
    for (size_t d = 0, nd = tsf_reader_device_count(r); d < nd; d++)
        if (tsf_reader_find_series(r, d, name, &j, NULL) == TSF_OK) return 1;
    for (size_t t = 0, nt = tsf_reader_table_count(r); t < nt; t++) {
        tsf_table_info ti;
        if (tsf_reader_table(r, t, &ti, NULL)) continue;
        for (size_t i = 0; i < ti.ncolumns; i++)
            if (!strcmp(ti.columns[i].name, name)) return 1;
    }
    return 0;
}

/* --where's time literals ('2024-01-31T12:00:00Z' or a number) as --from/--to read them. */
static int where_time(void *ctx, const char *text, int64_t *out)
{
    return cli_parse_time(text, *(const int64_t *)ctx, out);
}

/* Every column --where names is one the file has: else a usage error with the closest names, before any
 * output. */
static int check_where_columns(const cat_opts *c, tsf_reader *r)
{
    const char *names[64];
    size_t n = tsf_filter_columns(c->filter, names, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (file_has_column(r, names[i])) continue;
        cli_err(c->cmd, "%s: --where: no column named '%s'%s", c->path, names[i],
                strcmp(names[i], "time") ? "" : " (the bare word time is the row's time)");
        suggest_columns(r, names[i], 1, c->cmd);
        return CLI_USAGE;
    }
    return 0;
}

/* Chooses the header: the value columns (--columns, or every measurement in index order), tags. */
static int plan_wide(cat_opts *c, tsf_reader *r, wide *w)
{
    tsf_error e = {0};
    size_t nd = tsf_reader_device_count(r), nt = tsf_reader_table_count(r);
    tsf_table_info ti = {0};
    int table = 0;
    for (size_t t = 0; t < nt; t++) {
        tsf_table_info x;
        if (tsf_reader_table(r, t, &x, &e)) break;
        if (!x.ndevices) continue;
        if (table || !x.ncolumns) {
            table = -1;
            break;
        }
        table = 1;
        ti = x;
    }
    size_t ntag = 0;
    for (size_t i = 0; table == 1 && i < ti.ncolumns; i++) ntag += ti.columns[i].category == TSF_COLUMN_TAG;
    if (table == 1 && ti.ndevices == nd && ntag <= MAX_CAT_TAGS) {
        w->tags = calloc(ti.ncolumns, sizeof *w->tags);
        if (!w->tags) return CLI_IO;
        for (size_t i = 0; i < ti.ncolumns; i++) {
            if (ti.columns[i].category == TSF_COLUMN_TAG)
                w->tags[w->ntags++] = &ti.columns[i];
            else if (ti.columns[i].category == TSF_COLUMN_FIELD && !c->cols && add_name(w, ti.columns[i].name))
                return CLI_IO;
        }
    } else {
        w->device_col = nd > 1;
    }
    if (c->cols) {
        for (size_t i = 0; i < c->ncols; i++) {
            int found = 0;
            for (size_t d = 0; d < nd && !found; d++) {
                size_t j;
                found = tsf_reader_find_series(r, d, c->cols[i], &j, NULL) == TSF_OK;
            }
            if (!found) {
                cli_err(c->cmd, "%s: no column named '%s'", c->path, c->cols[i]);
                suggest_columns(r, c->cols[i], 0, c->cmd);
                return CLI_USAGE;
            }
            if (add_name(w, c->cols[i])) return CLI_IO;
        }
    } else if (!w->tags) {
        for (size_t d = 0; d < nd; d++) {
            tsf_device_info di;
            if (tsf_reader_device(r, d, &di, &e)) goto bad;
            for (size_t j = 0; j < di.nseries; j++) {
                tsf_series_info si;
                if (tsf_reader_series(r, d, j, &si, &e)) goto bad;
                if (add_name(w, si.measurement)) return CLI_IO;
            }
        }
    }
    return 0;
bad:
    cli_err(c->cmd, "%s: %s", c->path, e.message);
    return cli_exit_code(e.code);
}

static void put_key(FILE *f, const char *name, int *first)
{
    if (!*first) fputc(',', f);
    *first = 0;
    cli_json_str(f, name);
    fputc(':', f);
}

/* Row i of b: dname is the device column's cell (w->device_col), tags[0..w->ntags) the TAG cells (data NULL:
 * null). */
static void put_row_of(cat_opts *c, const wide *w, const char *dname, const tsf_bytes *tags, const tsf_batch *b,
                       size_t i, FILE *f)
{
    int json = c->format[0] == 'j';
    int first = 1;
    if (json) {
        fputc('{', f);
        put_key(f, "time", &first);
        put_time(c, f, b->times[i]);
        if (w->device_col) {
            put_key(f, "device", &first);
            cli_json_str(f, dname);
        }
    } else {
        put_time(c, f, b->times[i]);
        if (w->device_col) {
            fputc(',', f);
            csv_put_field(f, dname, strlen(dname));
        }
    }
    for (size_t t = 0; t < w->ntags; t++) {
        if (json) {
            put_key(f, w->tags[t]->name, &first);
            if (tags[t].data)
                cli_json_bytes(f, tags[t].data, tags[t].len);
            else
                fputs("null", f);
        } else {
            fputc(',', f);
            if (tags[t].data) csv_put_field(f, (const char *)tags[t].data, tags[t].len);
        }
    }
    for (size_t k = 0; k < b->ncolumns; k++) {
        const tsf_column_batch *cb = &b->columns[k];
        int present = cb->type != TSF_VECTOR && ((cb->validity[i >> 3] >> (i & 7)) & 1);
        if (json) {
            put_key(f, w->names[k], &first);
            if (present)
                put_cell(f, cb->type, cb->values, i, 1);
            else
                fputs("null", f);
        } else {
            fputc(',', f);
            if (present) put_cell(f, cb->type, cb->values, i, 0);
        }
    }
    fputs(json ? "}\n" : "\n", f);
}

static void put_row(cat_opts *c, tsf_reader *r, const wide *w, const tsf_batch *b, size_t i, FILE *f)
{
    tsf_device_info di = {0};
    tsf_bytes tags[MAX_CAT_TAGS];
    if (w->device_col) tsf_reader_device(r, b->device, &di, NULL);
    for (size_t t = 0; t < w->ntags; t++)
        if (tsf_reader_device_segment(r, b->device, t + 1, &tags[t], NULL)) tags[t].data = NULL;
    put_row_of(c, w, di.name, tags, b, i, f);
}

/* --order time: one query per device, merged by (time, device) through a binary heap of their current rows. */
typedef struct mstream {
    tsf_query *q;
    const tsf_batch *b;
    size_t i;
    size_t dev;
} mstream;

static int ms_before(const mstream *a, const mstream *b)
{
    int64_t ta = a->b->times[a->i], tb = b->b->times[b->i];
    return ta < tb || (ta == tb && a->dev < b->dev);
}

/* The stream's next row (its next non-empty batch when the batch is done); s->b = NULL at its end. */
static tsf_status ms_next(mstream *s, tsf_error *e)
{
    if (s->b && ++s->i < s->b->nrows) return TSF_OK;
    s->i = 0;
    tsf_status st;
    do st = tsf_query_next(s->q, &s->b, e);
    while (st == TSF_OK && s->b && !s->b->nrows);
    return st;
}

static void heap_down(mstream **h, size_t n, size_t k)
{
    for (;;) {
        size_t m = k, l = 2 * k + 1, r = l + 1;
        if (l < n && ms_before(h[l], h[m])) m = l;
        if (r < n && ms_before(h[r], h[m])) m = r;
        if (m == k) return;
        mstream *t = h[k];
        h[k] = h[m];
        h[m] = t;
        k = m;
    }
}

static tsf_status cat_merged(cat_opts *c, tsf_reader *r, const wide *w, const tsf_query_options *base, FILE *f,
                             tsf_error *e)
{
    size_t nd = tsf_reader_device_count(r), n = 0;
    mstream *s = calloc(nd ? nd : 1, sizeof *s);
    mstream **h = calloc(nd ? nd : 1, sizeof *h);
    size_t *devs = calloc(nd ? nd : 1, sizeof *devs);
    tsf_status st = TSF_OK;
    if (!s || !h || !devs) {
        snprintf(e->message, sizeof e->message, "out of memory");
        st = e->code = TSF_ENOMEM;
        goto done;
    }
    for (size_t d = 0; d < nd && !st; d++) {
        tsf_query_options o = *base;
        devs[d] = d;
        o.devices = &devs[d];
        o.ndevices = 1;
        o.batch_size = 1024; /* one batch per device is held at a time */
        s[d].dev = d;
        if ((st = tsf_query_open(r, &o, &s[d].q, e)) || (st = ms_next(&s[d], e))) break;
        if (s[d].b) h[n++] = &s[d];
    }
    for (size_t k = n; k-- > 0;) heap_down(h, n, k);
    while (!st && n && c->rows < c->limit) {
        mstream *m = h[0];
        put_row(c, r, w, m->b, m->i, f);
        c->rows++;
        if ((st = ms_next(m, e))) break;
        if (!m->b) h[0] = h[--n];
        heap_down(h, n, 0);
    }
done:
    for (size_t d = 0; s && d < nd; d++) tsf_query_close(s[d].q);
    free(s);
    free(h);
    free(devs);
    return st;
}

/* The CSV header line (nothing for jsonl). */
static void put_header(const cat_opts *c, const wide *w, FILE *f)
{
    if (c->format[0] != 'c') return;
    fputs("time", f);
    if (w->device_col) fputs(",device", f);
    for (size_t t = 0; t < w->ntags; t++) {
        fputc(',', f);
        csv_put_field(f, w->tags[t]->name, strlen(w->tags[t]->name));
    }
    for (size_t k = 0; k < w->n; k++) {
        fputc(',', f);
        csv_put_field(f, w->names[k], strlen(w->names[k]));
    }
    fputc('\n', f);
}

static int cat_wide(cat_opts *c, tsf_reader *r, FILE *f)
{
    wide w = {0};
    int rc = plan_wide(c, r, &w);
    if (rc) goto done;
    put_header(c, &w, f);
    if (!w.n) goto done;
    tsf_query_options o;
    init_query(c, &o);
    o.columns = w.names;
    o.ncolumns = w.n;
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    tsf_status st = TSF_OK;
    if (c->by_time) {
        st = cat_merged(c, r, &w, &o, f, &e);
    } else {
        st = tsf_query_open(r, &o, &q, &e);
        while (st == TSF_OK && c->rows < c->limit && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b)
            for (size_t i = 0; i < b->nrows && c->rows < c->limit; i++, c->rows++) put_row(c, r, &w, b, i, f);
        tsf_query_close(q);
    }
    if (st) {
        cli_err(c->cmd, "%s: %s", c->path, e.message);
        rc = cli_exit_code(st);
    }
done:
    free(w.names);
    free(w.tags);
    return rc;
}

/* ---- datasets --------------------------------------------------------------------------------- */

/* A column the dataset has: a series of some device, or a column of one of its tables. */
static int dataset_has_column(tsf_dataset *ds, const char *name)
{
    for (size_t d = 0, nd = tsf_dataset_device_count(ds); d < nd; d++) {
        tsf_dataset_device_info di;
        if (tsf_dataset_device(ds, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (!tsf_dataset_series(ds, d, j, &si, NULL) && !strcmp(si.measurement, name)) return 1;
        }
    }
    for (size_t t = 0, nt = tsf_dataset_table_count(ds); t < nt; t++) {
        tsf_table_info ti;
        if (tsf_dataset_table(ds, t, &ti, NULL)) continue;
        for (size_t i = 0; i < ti.ncolumns; i++)
            if (!strcmp(ti.columns[i].name, name)) return 1;
    }
    return 0;
}

/* The layout of a dataset, as plan_wide's for one file: one table holding every device -> its TAG and FIELD
 * columns; else a device column (several devices) and every series name in device order. */
static int plan_dataset(cat_opts *c, tsf_dataset *ds, wide *w)
{
    size_t nd = tsf_dataset_device_count(ds), nt = tsf_dataset_table_count(ds), ntag = 0;
    tsf_table_info ti = {0};
    int table = 0;
    for (size_t t = 0; t < nt; t++) {
        tsf_table_info x;
        if (tsf_dataset_table(ds, t, &x, NULL) || !x.ndevices) continue;
        table = table || !x.ncolumns ? -1 : 1;
        ti = x;
    }
    for (size_t i = 0; table == 1 && i < ti.ncolumns; i++) ntag += ti.columns[i].category == TSF_COLUMN_TAG;
    if (table == 1 && ti.ndevices == nd && ntag <= MAX_CAT_TAGS) {
        if (!(w->tags = calloc(ti.ncolumns, sizeof *w->tags))) return CLI_IO;
        for (size_t i = 0; i < ti.ncolumns; i++) {
            if (ti.columns[i].category == TSF_COLUMN_TAG)
                w->tags[w->ntags++] = &ti.columns[i];
            else if (ti.columns[i].category == TSF_COLUMN_FIELD && !c->cols && add_name(w, ti.columns[i].name))
                return CLI_IO;
        }
    } else
        w->device_col = nd > 1;
    for (size_t i = 0; c->cols && i < c->ncols; i++) {
        if (!dataset_has_column(ds, c->cols[i])) {
            cli_err(c->cmd, "%s: no column named '%s'", c->path, c->cols[i]);
            return CLI_USAGE;
        }
        if (add_name(w, c->cols[i])) return CLI_IO;
    }
    for (size_t d = 0; !c->cols && !w->tags && d < nd; d++) {
        tsf_dataset_device_info di;
        if (tsf_dataset_device(ds, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (!tsf_dataset_series(ds, d, j, &si, NULL) && add_name(w, si.measurement)) return CLI_IO;
        }
    }
    const char *names[64];
    size_t n = c->filter ? tsf_filter_columns(c->filter, names, 64) : 0;
    for (size_t i = 0; i < n && i < 64; i++)
        if (!dataset_has_column(ds, names[i])) {
            cli_err(c->cmd, "%s: --where: no column named '%s'", c->path, names[i]);
            return CLI_USAGE;
        }
    return 0;
}

/* cat / head over a dataset: the rows of its files in file order, then each file's device order. */
static int cat_dataset(cat_opts *c, const char *const *paths, size_t npaths, unsigned threads, unsigned k,
                       int checked, FILE *f)
{
    tsf_dataset *ds = NULL;
    wide w = {0};
    int rc = cli_open_dataset(c->cmd, paths, npaths, c->cache, &ds);
    if (!rc) rc = plan_dataset(c, ds, &w);
    if (!rc) put_header(c, &w, f);
    if (rc || !w.n) goto done;
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.columns = w.names;
    o.ncolumns = w.n;
    o.time_min = c->tmin;
    o.time_max = c->tmax;
    o.where = c->filter;
    o.threads = threads;
    o.files_at_once = k;
    o.checked = checked;
    tsf_dataset_query *q = NULL;
    tsf_error e = {0};
    const tsf_dataset_batch *b;
    tsf_status st = tsf_dataset_query_open(ds, &o, &q, &e);
    while (st == TSF_OK && c->rows < c->limit && (st = tsf_dataset_query_next(q, &b, &e)) == TSF_OK && b) {
        tsf_bytes tags[MAX_CAT_TAGS];
        for (size_t t = 0; t < w.ntags; t++)
            if (tsf_dataset_device_segment(ds, b->device, t + 1, &tags[t], NULL)) tags[t].data = NULL;
        for (size_t i = 0; i < b->rows.nrows && c->rows < c->limit; i++, c->rows++)
            put_row_of(c, &w, b->device_name, tags, &b->rows, i, f);
    }
    tsf_dataset_query_close(q);
    if (st) {
        cli_err_file(c->cmd, c->path, e.message);
        rc = cli_exit_code(st);
    }
done:
    free(w.names);
    free(w.tags);
    tsf_dataset_close(ds);
    return rc;
}

/* ---- options ---------------------------------------------------------------------------------- */

static void usage(FILE *f, const char *cmd)
{
    int head = !strcmp(cmd, "head");
    fprintf(f,
            "usage: tsf %s FILE|DIR|PATTERN... [options]\n"
            "Several files, a directory (its *.tsfile files) or a quoted pattern (\"data/*.tsfile\") are read\n"
            "as one dataset: the rows of each file in file order (doc/dataset.md).\n"
            "%s"
            "  --format csv|jsonl|golden  output layout (default csv: time, device or tags, one column per\n"
            "                             measurement; golden: device,measurement,time,type,value)\n"
            "  --columns a,b,...          only these measurements\n"
            "  --from T, --to T           inclusive time range: a number in the file's unit or ISO-8601\n"
            "  --where EXPR               value filter, e.g. \"temp > 3.5 and status = 'ok'\"; also\n"
            "                             col IS NULL, col IS NOT NULL, time >= '2024-01-31T12:00:00Z'\n"
            "                             (the bare word time is the row's time: a number or ISO-8601)\n"
            "  --limit N                  at most N rows%s\n"
            "  --order device|time        rows device by device (default), or every device's rows merged by\n"
            "                             time (equal times in device order); csv and jsonl\n"
            "  --time-format iso|number   how times print (default number)\n"
            "  --time-unit s|ms|us|ns     the file's time unit (default ms): --from/--to, iso times\n"
            "  --no-check                 trust the file: do not compare decoded pages with their statistics\n"
            "  --threads N                datasets: files decoded at once (default 1)\n"
            "  --files-at-once K          datasets: files open with reads under way (default N)\n"
            "  --cache FILE               datasets: metadata cache of the files (made when missing, refreshed\n"
            "                             for changed files; doc/dataset.md)\n"
            "exit codes: 0 ok, 1 usage, 2 damaged file, 3 I/O error, 4 nothing matched\n",
            cmd, head ? "  -n N                       the first N rows (default 10)\n" : "",
            head ? " (same as -n)" : "");
}

static int split_columns(cat_opts *c, const char *list)
{
    free(c->colbuf);
    free(c->cols);
    c->colbuf = strdup(list);
    c->cols = calloc(strlen(list) + 1, sizeof *c->cols);
    c->ncols = 0;
    if (!c->colbuf || !c->cols) return -1;
    for (char *p = strtok(c->colbuf, ","); p; p = strtok(NULL, ","))
        if (*p) c->cols[c->ncols++] = p;
    return c->ncols ? 0 : -1;
}

static int run(int argc, char **argv, int head)
{
    cat_opts c = {0};
    c.cmd = head ? "head" : "cat";
    c.format = "csv";
    c.per_second = 1000;
    c.tmin = INT64_MIN;
    c.tmax = INT64_MAX;
    c.limit = head ? 10 : UINT64_MAX;
    const char *from = NULL, *to = NULL;
    const char *paths[MAX_CAT_PATHS];
    size_t npaths = 0;
    unsigned threads = 0, files_at_once = 0;
    int checked = 1;
    cli_args a;
    cli_args_init(&a, argc, argv);
    int rc = CLI_USAGE;
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            usage(stdout, c.cmd);
            rc = CLI_OK;
            goto out;
        } else if (cli_value(&a, "--format|-f")) {
            c.format = a.val;
        } else if (cli_is(&a, "--no-check")) {
            checked = 0;
        } else if (cli_value(&a, "--columns|-c")) {
            if (!a.bad && split_columns(&c, a.val)) {
                cli_err(c.cmd, "--columns: give a comma-separated list of names");
                goto out;
            }
        } else if (cli_value(&a, "--from")) {
            from = a.val;
        } else if (cli_value(&a, "--to")) {
            to = a.val;
        } else if (cli_value(&a, "--cache")) {
            c.cache = a.val;
        } else if (cli_value(&a, "--where")) {
            c.where = a.val;
        } else if (cli_value(&a, "--order")) {
            if (a.bad) break;
            if (strcmp(a.val, "time") && strcmp(a.val, "device")) {
                cli_err(c.cmd, "--order: device or time, not '%s'", a.val);
                goto out;
            }
            c.by_time = !strcmp(a.val, "time");
        } else if (cli_value(&a, head ? "--limit|-n" : "--limit")) {
            if (!a.bad && cli_parse_u64(a.val, &c.limit)) {
                cli_err(c.cmd, "%s: not a row count: '%s'", a.arg, a.val);
                goto out;
            }
        } else if (cli_value(&a, "--time-format")) {
            if (a.bad) break;
            if (strcmp(a.val, "iso") && strcmp(a.val, "number")) {
                cli_err(c.cmd, "--time-format: iso or number, not '%s'", a.val);
                goto out;
            }
            c.iso = !strcmp(a.val, "iso");
        } else if (cli_value(&a, "--time-unit")) {
            if (!a.bad && cli_parse_time_unit(a.val, &c.per_second)) {
                cli_err(c.cmd, "--time-unit: s, ms, us or ns, not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--threads") || cli_value(&a, "--files-at-once")) {
            uint64_t n;
            int thr = !strncmp(a.arg, "--threads", 9);
            if (!a.bad && (cli_parse_u64(a.val, &n) || n < 1 || n > 256)) {
                cli_err(c.cmd, "%s: not a count from 1 to 256: '%s'", thr ? "--threads" : "--files-at-once", a.val);
                goto out;
            }
            *(thr ? &threads : &files_at_once) = (unsigned)n;
        } else if (cli_positional(&a)) {
            if (npaths == MAX_CAT_PATHS) {
                cli_err(c.cmd, "more than %d paths (name a directory or a pattern instead)", MAX_CAT_PATHS);
                goto out;
            }
            paths[npaths++] = a.arg;
            c.path = paths[0];
        } else {
            cli_unknown(&a);
            goto out;
        }
    }
    if (a.bad) goto out;
    if (!c.path) {
        usage(stderr, c.cmd);
        goto out;
    }
    if (strcmp(c.format, "csv") && strcmp(c.format, "jsonl") && strcmp(c.format, "golden")) {
        cli_err(c.cmd, "--format: csv, jsonl or golden, not '%s'", c.format);
        goto out;
    }
    if (c.by_time && !strcmp(c.format, "golden")) {
        cli_err(c.cmd, "--order time: the golden layout is ordered by device and measurement");
        goto out;
    }
    if ((from && cli_parse_time(from, c.per_second, &c.tmin)) || (to && cli_parse_time(to, c.per_second, &c.tmax))) {
        cli_err(c.cmd, "--from/--to: not a time (a number in %s or ISO-8601 such as 2024-01-31T12:00:00Z): '%s'",
                c.per_second == 1 ? "s" : c.per_second == 1000 ? "ms" : c.per_second == 1000000 ? "us" : "ns",
                from && cli_parse_time(from, c.per_second, &c.tmin) ? from : to);
        goto out;
    }
    if (c.where) {
        tsf_error e = {0};
        tsf_filter_parse_options po;
        tsf_filter_parse_options_init(&po);
        po.parse_time = where_time;
        po.parse_time_ctx = &c.per_second;
        if (tsf_filter_parse_with(&c.filter, c.where, &po, &e)) {
            cli_err(c.cmd, "--where: %s", e.message);
            goto out;
        }
    }
    static char obuf[1 << 16];
    if (cli_is_dataset(paths, npaths)) {
        if (c.format[0] == 'g' || c.by_time) {
            cli_err(c.cmd, "%s: one file only", c.by_time ? "--order time" : "--format golden");
            rc = CLI_USAGE;
            goto out;
        }
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
        rc = cat_dataset(&c, paths, npaths, threads, files_at_once, checked, stdout);
        if (fflush(stdout) != 0 && !rc) {
            cli_err(c.cmd, "writing the output failed");
            rc = CLI_IO;
        }
        if (!rc && c.rows == 0) rc = CLI_EMPTY;
        goto out;
    }
    tsf_reader *r = NULL;
    if ((rc = cli_open_reader_checked(c.cmd, c.path, checked, &r))) goto out;
    if (c.filter && (rc = check_where_columns(&c, r))) {
        tsf_reader_close(r);
        goto out;
    }
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    rc = c.format[0] == 'g' ? cat_golden(&c, r, stdout) : cat_wide(&c, r, stdout);
    if (fflush(stdout) != 0 && !rc) {
        cli_err(c.cmd, "writing the output failed");
        rc = CLI_IO;
    }
    tsf_reader_close(r);
    if (!rc && c.rows == 0 && c.format[0] != 'g') rc = CLI_EMPTY; /* golden: a dump, empty files exit 0 */
out:
    tsf_filter_free(c.filter);
    free(c.colbuf);
    free(c.cols);
    return rc;
}

int tsf_cmd_cat(int argc, char **argv)
{
    return run(argc, argv, 0);
}

int tsf_cmd_head(int argc, char **argv)
{
    return run(argc, argv, 1);
}
