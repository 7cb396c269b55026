/*
 * stats_dataset.c - `tsf stats` over a dataset (several files, a directory, patterns): one
 * tsf_dataset_aggregate per run (fixed windows) or per calendar window (1mo, 1y: the aggregate of each
 * window's time range), grouped by device, by the values of TAG columns or over every device, printed as a
 * text table, CSV or JSON. Values come from the library as doubles and print in the column's type.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "stats.h"

#define MAX_GROUP_TAGS 16

/* One output row: a library row and its window start (calendar windows: the window's, not the library's). */
typedef struct drow {
    const tsf_dataset_agg_row *r;
    int64_t start;
} drow;

typedef struct dstate {
    const stats_opts *o;
    tsf_dataset *ds;
    const char *tags[MAX_GROUP_TAGS];
    size_t ntags;
    int by_device;
    tsf_dataset_agg_result **res; /* kept until printed: rows point into them */
    size_t nres;
    drow *rows;
    size_t nrows, cap;
    int progress;
} dstate;

/* The type a column name has in the dataset (the first series or table column of that name). */
static tsf_type column_type(tsf_dataset *ds, size_t device, const char *name)
{
    size_t d0 = device == (size_t)-1 ? 0 : device, d1 = device == (size_t)-1 ? tsf_dataset_device_count(ds) : device + 1;
    for (size_t d = d0; d < d1; d++) {
        tsf_dataset_device_info di;
        if (tsf_dataset_device(ds, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (!tsf_dataset_series(ds, d, j, &si, NULL) && !strcmp(si.measurement, name)) return si.type;
        }
    }
    for (size_t t = 0, nt = tsf_dataset_table_count(ds); t < nt; t++) {
        tsf_table_info ti;
        if (tsf_dataset_table(ds, t, &ti, NULL)) continue;
        for (size_t c = 0; c < ti.ncolumns; c++)
            if (!strcmp(ti.columns[c].name, name)) return ti.columns[c].type;
    }
    return TSF_STRING;
}

static int is_int(tsf_type t)
{
    return t == TSF_INT32 || t == TSF_DATE || t == TSF_INT64 || t == TSF_TIMESTAMP;
}

/* A value of the row in the column's type; which: 0 min, 1 max, 2 first, 3 last, 4 sum, 5 mean. Text "-" /
 * JSON null when there is none (TEXT, STRING: min and max only; BLOB: count only; DATE has no mean). */
static void fmt_dvalue(char *buf, size_t cap, tsf_type t, const tsf_dataset_agg_row *r, int which, int json)
{
    if ((t == TSF_TEXT || t == TSF_STRING) && which < 2 && r->count) {
        tsf_bytes b = which ? r->max_bytes : r->min_bytes;
        if (b.data) {
            stats_fmt_text(buf, cap, b.data, b.len, json);
            return;
        }
    }
    double v = which == 0 ? r->min : which == 1 ? r->max : which == 2 ? r->first : which == 3 ? r->last
             : which == 4 ? r->sum : r->mean;
    int numeric = t == TSF_BOOLEAN || is_int(t) || t == TSF_FLOAT || t == TSF_DOUBLE;
    if (!r->count || !numeric || (which == 5 && t == TSF_DATE)) {
        snprintf(buf, cap, json ? "null" : "-");
        return;
    }
    if (which < 4 && t == TSF_BOOLEAN) {
        snprintf(buf, cap, "%s", v != 0 ? "true" : "false");
        return;
    }
    if (which < 4 && is_int(t) && fabs(v) < 9.2e18) {
        snprintf(buf, cap, "%" PRId64, (int64_t)v);
        return;
    }
    if (json && !isfinite(v)) {
        snprintf(buf, cap, "\"%s\"", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    cli_fmt_real(buf, cap, v, which < 4 && t == TSF_FLOAT);
}

static int add_row(dstate *s, const tsf_dataset_agg_row *r, int64_t start)
{
    if (s->nrows == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        drow *p = realloc(s->rows, nc * sizeof *p);
        if (!p) return -1;
        s->rows = p;
        s->cap = nc;
    }
    s->rows[s->nrows++] = (drow){r, start};
    return 0;
}

/* One aggregate over [lo, hi]; its rows are added with window start `start` (INT64_MIN: the library's). */
static tsf_status run_one(dstate *s, int64_t lo, int64_t hi, int64_t start, tsf_error *e)
{
    const stats_opts *o = s->o;
    tsf_dataset_query_options q;
    tsf_dataset_query_options_init(&q);
    q.time_min = lo;
    q.time_max = hi;
    q.threads = o->threads;
    q.files_at_once = o->files_at_once;
    q.checked = !o->no_check;
    tsf_dataset_agg_options ao;
    tsf_dataset_agg_options_init(&ao);
    ao.by_device = s->by_device;
    ao.group_tags = s->ntags ? s->tags : NULL;
    ao.ngroup_tags = s->ntags;
    ao.force_decode = o->decode;
    if (!o->months) {
        ao.window = o->window;
        ao.window_origin = o->origin;
    }
    tsf_dataset_agg_result *res = NULL;
    tsf_status st = tsf_dataset_aggregate(s->ds, &q, &ao, &res, e);
    if (st) return st;
    tsf_dataset_agg_result **p = realloc(s->res, (s->nres + 1) * sizeof *p);
    if (!p) {
        tsf_dataset_agg_result_free(res);
        e->code = TSF_ENOMEM;
        snprintf(e->message, sizeof e->message, "out of memory");
        return TSF_ENOMEM;
    }
    s->res = p;
    s->res[s->nres++] = res;
    for (size_t i = 0, n = tsf_dataset_agg_result_count(res); i < n; i++) {
        const tsf_dataset_agg_row *r = tsf_dataset_agg_result_row(res, i);
        if (add_row(s, r, start == INT64_MIN ? r->window_start : start)) {
            e->code = TSF_ENOMEM;
            snprintf(e->message, sizeof e->message, "out of memory");
            return TSF_ENOMEM;
        }
    }
    return TSF_OK;
}

/* Rows as one-file stats prints them: by group, column, then window. */
static int drow_cmp(const void *x, const void *y)
{
    const drow *a = x, *b = y;
    if (a->r->group != b->r->group) return a->r->group < b->r->group ? -1 : 1;
    int c = strcmp(a->r->column, b->r->column);
    if (c) return c;
    return (a->start > b->start) - (a->start < b->start);
}

/* The dataset's time range within --from / --to (lo > hi: no point). */
static void time_range(const dstate *s, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (size_t f = 0, n = tsf_dataset_file_count(s->ds); f < n; f++) {
        tsf_dataset_file_info fi;
        if (tsf_dataset_file(s->ds, f, &fi, NULL) || fi.time_min > fi.time_max) continue;
        if (fi.time_min < *lo) *lo = fi.time_min;
        if (fi.time_max > *hi) *hi = fi.time_max;
    }
    if (s->o->from > *lo) *lo = s->o->from;
    if (s->o->to < *hi) *hi = s->o->to;
}

/* All rows: one aggregate, or one per calendar window over the dataset's range. */
static tsf_status run_all(dstate *s, tsf_error *e)
{
    const stats_opts *o = s->o;
    if (s->progress) fprintf(stderr, "tsf stats: %zu files...", tsf_dataset_file_count(s->ds));
    tsf_status st = TSF_OK;
    if (!o->months) st = run_one(s, o->from, o->to, INT64_MIN, e);
    else {
        int64_t lo, hi, start = 0, next = 0;
        time_range(s, &lo, &hi);
        double span = lo <= hi ? ((double)hi - (double)lo) / (28.0 * 86400.0 * (double)o->unit * o->months) : 0;
        if (span > MAX_CALENDAR_WINDOWS) {
            snprintf(e->message, sizeof e->message, "calendar windows: the dataset spans more than %d windows of %d months",
                     MAX_CALENDAR_WINDOWS, o->months);
            st = e->code = TSF_EINVAL;
        } else if (lo <= hi && stats_month_window(o, lo, &start, &next)) {
            snprintf(e->message, sizeof e->message, "calendar windows: time %" PRId64 " is outside the calendar", lo);
            st = e->code = TSF_EINVAL;
        }
        for (size_t k = 0; !st && lo <= hi; k++) {
            if (s->progress) fprintf(stderr, "\rtsf stats: %zu files, calendar window %zu...", tsf_dataset_file_count(s->ds), k + 1);
            st = run_one(s, start > lo ? start : lo, next - 1 < hi ? next - 1 : hi, start, e);
            if (st || next > hi) break;
            if (stats_month_window(o, next, &start, &next)) {
                snprintf(e->message, sizeof e->message, "calendar windows: times after %" PRId64 " are outside the calendar", start);
                st = e->code = TSF_EINVAL;
            }
        }
    }
    if (s->progress) fputs("\r\033[K", stderr);
    if (!st && s->nrows) qsort(s->rows, s->nrows, sizeof *s->rows, drow_cmp);
    return st;
}

/* The group's label cells: the device name, or each TAG value (null: "-" text, empty CSV, null JSON). */
static void put_group(const dstate *s, const tsf_dataset_agg_row *r, cli_table *t, int fmt)
{
    if (s->by_device && !s->ntags) {
        tsf_dataset_device_info di;
        const char *name = tsf_dataset_device(s->ds, r->device, &di, NULL) ? "?" : di.name;
        if (fmt == FMT_TEXT) cli_table_add(t, "%s", name);
        else if (fmt == FMT_CSV) {
            csv_put_field(stdout, name, strlen(name));
            putchar(',');
        } else {
            fputs("\"device\": ", stdout);
            cli_json_str(stdout, name);
            fputs(", ", stdout);
        }
        return;
    }
    if (fmt == FMT_JSON && s->ntags) fputs("\"group\": {", stdout);
    const tsf_dataset_agg_result *res = s->res[0];
    for (size_t k = 0; k < s->ntags; k++) {
        tsf_bytes v = tsf_dataset_agg_result_tag(res, r->group, k);
        if (fmt == FMT_TEXT) {
            if (v.data) cli_table_add(t, "%.*s", (int)v.len, (const char *)v.data);
            else cli_table_add(t, "-");
        } else if (fmt == FMT_CSV) {
            if (v.data) csv_put_field(stdout, (const char *)v.data, v.len);
            putchar(',');
        } else {
            cli_json_str(stdout, s->tags[k]);
            fputs(": ", stdout);
            if (v.data) cli_json_bytes(stdout, v.data, v.len);
            else fputs("null", stdout);
            fputs(k + 1 < s->ntags ? ", " : "}, ", stdout);
        }
    }
}

static void put_time(const stats_opts *o, char *buf, size_t cap, int64_t t)
{
    if (o->iso) cli_format_time(buf, cap, t, o->unit);
    else snprintf(buf, cap, "%" PRId64, t);
}

/* Prints the rows; returns the exit code. */
static int print_all(dstate *s)
{
    const stats_opts *o = s->o;
    int win = o->window > 0 || o->months > 0, dev = s->by_device && !s->ntags;
    size_t ng = dev ? 1 : s->ntags, ncols = ng + 10 + (size_t)win;
    cli_table t;
    /* right-aligned: the window, count, first_time, last_time (after the group cells and the column) */
    unsigned right = (0x7u << (ng + 1 + (size_t)win)) | (win ? 1u << (ng + 1) : 0u);
    cli_table_init(&t, ncols, right);
    const char *h[] = {"window", "count", "first_time", "last_time", "min", "max", "first", "last", "sum", "mean"};
    const char *colname = dev ? "series" : "column";
    uint64_t points = 0;
    if (o->format == FMT_TEXT) {
        if (dev) cli_table_add(&t, "device");
        for (size_t k = 0; !dev && k < s->ntags; k++) cli_table_add(&t, "%s", s->tags[k]);
        cli_table_add(&t, "%s", colname);
        for (size_t i = win ? 0 : 1; i < 10; i++) cli_table_add(&t, "%s", h[i]);
    } else if (o->format == FMT_CSV) {
        if (dev) fputs("device,", stdout);
        for (size_t k = 0; !dev && k < s->ntags; k++) {
            csv_put_field(stdout, s->tags[k], strlen(s->tags[k]));
            putchar(',');
        }
        fputs(colname, stdout);
        for (size_t i = win ? 0 : 1; i < 10; i++) printf(",%s", h[i]);
        putchar('\n');
    } else {
        fputs("{\"files\": [", stdout);
        for (size_t f = 0, n = tsf_dataset_file_count(s->ds); f < n; f++) {
            tsf_dataset_file_info fi;
            if (tsf_dataset_file(s->ds, f, &fi, NULL)) continue;
            if (f) fputs(", ", stdout);
            cli_json_str(stdout, fi.path);
        }
        fputs("], \"group_by\": ", stdout);
        cli_json_str(stdout, s->ntags ? "tags" : dev ? "device" : "all");
        fputs(", \"rows\": [", stdout);
    }
    for (size_t i = 0; i < s->nrows; i++) {
        const tsf_dataset_agg_row *r = s->rows[i].r;
        tsf_type ty = column_type(s->ds, dev ? r->device : (size_t)-1, r->column);
        int json = o->format == FMT_JSON;
        char v[6][256], t0[48], t1[48], ws[48];
        for (int x = 0; x < 6; x++) fmt_dvalue(v[x], sizeof v[x], ty, r, x, json);
        put_time(o, t0, sizeof t0, r->first_time);
        put_time(o, t1, sizeof t1, r->last_time);
        put_time(o, ws, sizeof ws, s->rows[i].start);
        points += r->count;
        if (json) {
            fputs(i ? ",\n    {" : "\n    {", stdout);
            put_group(s, r, NULL, FMT_JSON);
            fputs("\"column\": ", stdout);
            cli_json_str(stdout, r->column);
            if (win) printf(", \"start\": %" PRId64, s->rows[i].start);
            printf(", \"count\": %" PRIu64 ", \"first_time\": %" PRId64 ", \"last_time\": %" PRId64
                   ", \"min\": %s, \"max\": %s, \"first\": %s, \"last\": %s, \"sum\": %s, \"mean\": %s}",
                   r->count, r->first_time, r->last_time, v[0], v[1], v[2], v[3], v[4], v[5]);
        } else if (o->format == FMT_CSV) {
            put_group(s, r, NULL, FMT_CSV);
            csv_put_field(stdout, r->column, strlen(r->column));
            if (win) printf(",%s", ws);
            printf(",%" PRIu64 ",%s,%s", r->count, t0, t1);
            for (int x = 0; x < 6; x++) {
                tsf_bytes b = x == 0 ? r->min_bytes : r->max_bytes;
                putchar(',');
                if (x < 2 && (ty == TSF_TEXT || ty == TSF_STRING) && b.data) /* raw text, quoted where CSV needs */
                    csv_put_field(stdout, (const char *)b.data, b.len);
                else
                    fputs(strcmp(v[x], "-") ? v[x] : "", stdout);
            }
            putchar('\n');
        } else {
            put_group(s, r, &t, FMT_TEXT);
            cli_table_add(&t, "%s", r->column);
            if (win) cli_table_add(&t, "%s", ws);
            cli_table_add(&t, "%" PRIu64, r->count);
            cli_table_add(&t, "%s", t0);
            cli_table_add(&t, "%s", t1);
            for (int x = 0; x < 6; x++) cli_table_add(&t, "%s", v[x]);
        }
    }
    int rc = CLI_OK;
    size_t nf = tsf_dataset_file_count(s->ds);
    if (o->format == FMT_JSON)
        printf("%s], \"points\": %" PRIu64 "}\n", s->nrows ? "\n  " : "", points);
    else if (o->format == FMT_TEXT) {
        if (points && cli_table_print(&t, stdout, "")) rc = CLI_IO;
        printf("%s%" PRIu64 " points in %zu rows from %zu file%s\n", points ? "\n" : "", points, s->nrows, nf,
               nf == 1 ? "" : "s");
    }
    cli_table_free(&t);
    if (fflush(stdout)) return CLI_IO;
    if (!rc && !points) {
        cli_err("stats", "%s: no point matched", o->path);
        rc = CLI_EMPTY;
    }
    return rc;
}

/* --group-by: device or series (one group per device), all (one group), or comma-separated TAG names. */
static int parse_group(dstate *s, char *buf)
{
    const char *g = s->o->group_by;
    s->by_device = 1;
    if (!g || !strcmp(g, "device") || !strcmp(g, "series")) return 0;
    if (!strcmp(g, "all")) {
        s->by_device = 0;
        return 0;
    }
    for (char *p = buf, *c; p; p = c) {
        if ((c = strchr(p, ','))) *c++ = '\0';
        if (!*p) continue;
        if (s->ntags == MAX_GROUP_TAGS) {
            cli_err("stats", "--group-by: at most %d TAG columns", MAX_GROUP_TAGS);
            return CLI_USAGE;
        }
        s->tags[s->ntags++] = p;
    }
    if (!s->ntags) {
        cli_err("stats", "--group-by: device, series, all or TAG column names, not \"%s\"", g);
        return CLI_USAGE;
    }
    return 0;
}

int stats_dataset(const stats_opts *o)
{
    if (o->series) {
        cli_err("stats", "--series selects series of one file; a dataset takes --group-by");
        return CLI_USAGE;
    }
    dstate s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.progress = isatty(2);
    char *gb = o->group_by ? strdup(o->group_by) : NULL;
    int rc = o->group_by && !gb ? CLI_IO : parse_group(&s, gb);
    tsf_error e = {0};
    tsf_status st;
    if (!rc) rc = cli_open_dataset("stats", o->paths, o->npaths, o->cache, &s.ds);
    if (!rc && (st = run_all(&s, &e))) {
        if (s.progress) fputs("\r\033[K", stderr);
        if (st == TSF_ENOTFOUND && s.ntags)
            cli_err("stats", "--group-by: %s", e.message);
        else
            cli_err_file("stats", o->path, e.message);
        rc = st == TSF_ENOTFOUND && s.ntags ? CLI_USAGE : cli_exit_code(st);
    }
    if (!rc) rc = print_all(&s);
    for (size_t i = 0; i < s.nres; i++) tsf_dataset_agg_result_free(s.res[i]);
    free(s.res);
    free(s.rows);
    tsf_dataset_close(s.ds);
    free(gb);
    return rc;
}
