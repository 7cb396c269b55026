/*
 * cmd_stats.c - `tsf stats FILE [--series ...] [--from T] [--to T] [--window W] [--time-unit U] [--json]`:
 * count, min, max, first, last and sum per series (and per time window) through tsf_aggregate, which
 * answers whole chunks and pages from their statistics (container spec §7) and decodes only the rest;
 * the footer says how much was answered without decoding (tsf_agg_info). Exit 4 when nothing matched.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "stats.h"
#include "suggest.h"

static const char *HELP =
    "usage: tsf stats FILE [--series DEV.MEAS,...] [--from T] [--to T] [--window W] [--tz Z] [--format F]\n"
    "       tsf stats DATASET... [--group-by G] [--threads N] [--files-at-once K] [--cache FILE] [--from T] [--to T]\n"
    "                [--window W]\n"
    "Prints count, first and last time, min, max, first, last, sum and mean of each series, answered from\n"
    "chunk and page statistics where possible (only the other pages are decoded; the footer says how much).\n"
    "A DATASET is several files, a directory (its *.tsfile files) or a quoted pattern (\"data/*.tsfile\"),\n"
    "read as one (doc/dataset.md): whole chunks and pages from statistics too, values shown in each column's type.\n"
    "  --group-by G        datasets: device or series (one group per device: a row per series, the\n"
    "                      default), all (one group over every device: a row per column name), or\n"
    "                      comma-separated TAG column names (a row per distinct tuple of their values)\n"
    "  --threads N         datasets: files decoded at once (default 1)\n"
    "  --files-at-once K   datasets: files open with reads under way (default N)\n"
    "  --cache FILE        datasets: metadata cache of the files (made when missing, refreshed for changed\n"
    "                      files; doc/dataset.md)\n"
    "  --series LIST       comma-separated DEVICE.MEASUREMENT or DEVICE (all its series); default all\n"
    "  --from T, --to T    inclusive time range: an integer in the file's unit or ISO-8601 (UTC unless a\n"
    "                      zone is given, e.g. 2024-01-02T03:00:00Z)\n"
    "  --window W          one row per window: 500ms, 10s, 5m, 1h, 1d or an integer in the file's unit\n"
    "                      (windows start at multiples of W from midnight 1970-01-01 in --tz); calendar\n"
    "                      windows 1w (weeks from Monday), 1mo, 3mo, 1y (months and years of --tz's\n"
    "                      calendar); empty windows are left out\n"
    "  --tz Z              fixed zone of the windows' calendar: UTC (default), +08:00, -0530\n"
    "  --time-unit U       the file's time unit, s, ms (default), us or ns: governs --from/--to/--window\n"
    "  --time-format iso|number  how first_time, last_time and window starts print (default number)\n"
    "  --format text|csv|json    output layout (default text; --json = --format json); JSON times are\n"
    "                      always numbers in the file's unit\n"
    "  --decode            ignore statistics and decode every page (for comparison: the same numbers)\n"
    "  --no-check          trust the file: do not compare decoded pages with their statistics\n"
    "mean = sum / count (BOOLEAN: the share of true values; none for DATE). A standard deviation needs every value (the\n"
    "statistics hold no sum of squares), so stats does not print one. A dataset's progress goes to stderr\n"
    "when stderr is a terminal.\n"
    "exit codes: 0 ok, 1 usage (an unknown --series name, with the closest names), 2 damaged file,\n"
    "3 I/O error, 4 nothing matched\n";

/* One selected series. */
typedef struct sel {
    size_t dev, ser;
} sel;

/* A value of the statistics as text; which: 0 min, 1 max, 2 first, 3 last. JSON: numbers or strings. */
static void fmt_value(char *buf, size_t cap, const tsf_stats *s, int which, int json)
{
    if (!s->count) {
        snprintf(buf, cap, json ? "null" : "-");
        return;
    }
    switch (s->type) {
    case TSF_BOOLEAN: {
        int64_t v = which == 0 ? s->min_i : which == 1 ? s->max_i : which == 2 ? s->first_i : s->last_i;
        snprintf(buf, cap, "%s", v ? "true" : "false");
        return;
    }
    case TSF_INT32:
    case TSF_DATE:
    case TSF_INT64:
    case TSF_TIMESTAMP: {
        int64_t v = which == 0 ? s->min_i : which == 1 ? s->max_i : which == 2 ? s->first_i : s->last_i;
        snprintf(buf, cap, "%" PRId64, v);
        return;
    }
    case TSF_FLOAT:
    case TSF_DOUBLE: {
        double v = which == 0 ? s->min : which == 1 ? s->max : which == 2 ? s->first : s->last;
        if (json && !isfinite(v)) {
            snprintf(buf, cap, "\"%s\"", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
            return;
        }
        cli_fmt_real(buf, cap, v, s->type == TSF_FLOAT);
        return;
    }
    case TSF_TEXT:
    case TSF_STRING: {
        tsf_bytes b = which == 0 ? s->min_b : which == 1 ? s->max_b : which == 2 ? s->first_b : s->last_b;
        if (!b.data && (s->type == TSF_TEXT && which < 2)) {
            snprintf(buf, cap, json ? "null" : "-");
            return;
        }
        stats_fmt_text(buf, cap, b.data, b.len, json);
        return;
    }
    default: snprintf(buf, cap, json ? "null" : "-");
    }
}

void stats_fmt_text(char *buf, size_t cap, const uint8_t *data, size_t len, int json)
{
    size_t n = 0, lim = json ? cap - 8 : 40;
    buf[n++] = '"';
    for (size_t i = 0; i < len && n + 8 < cap; i++) {
        if (!json && i >= lim) {
            n += (size_t)snprintf(buf + n, cap - n, "...");
            break;
        }
        uint8_t c = data[i];
        if (c == '"' || c == '\\')
            n += (size_t)snprintf(buf + n, cap - n, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", c);
        else
            buf[n++] = (char)c;
    }
    snprintf(buf + n, cap - n, "\"");
}

static void fmt_sum(char *buf, size_t cap, const tsf_stats *s, int json)
{
    if (!s->count || !s->has_values) {
        snprintf(buf, cap, json ? "null" : "-");
        return;
    }
    if (json && !isfinite(s->sum)) {
        snprintf(buf, cap, "\"%s\"", isnan(s->sum) ? "NaN" : s->sum > 0 ? "Infinity" : "-Infinity");
        return;
    }
    cli_fmt_real(buf, cap, s->sum, 0);
}

/* Prints the devices and DEVICE.MEASUREMENT names closest to an unknown --series entry. */
static void suggest_series(tsf_reader *r, const char *tok)
{
    cli_suggest sg;
    cli_suggest_init(&sg, tok);
    char full[CLI_SUGGEST_LEN];
    for (size_t d = 0, nd = tsf_reader_device_count(r); d < nd; d++) {
        tsf_device_info di;
        if (tsf_reader_device(r, d, &di, NULL)) continue;
        cli_suggest_offer(&sg, di.name);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            if (tsf_reader_series(r, d, j, &si, NULL)) continue;
            if ((size_t)snprintf(full, sizeof full, "%s.%s", di.name, si.measurement) < sizeof full)
                cli_suggest_offer(&sg, full);
        }
    }
    cli_suggest_print(&sg, "stats");
}

/* Resolves --series into a list (all series when spec is NULL). Returns an exit code. */
#define MAX_NAME_PIECES 16 /* commas inside one --series name */

/* Adds the series that name (DEVICE or DEVICE.MEASUREMENT; NULL = every series) selects to v; returns how
 * many (-1 when out of memory). */
static long match_series(tsf_reader *r, const char *name, sel **v, size_t *n, size_t *cap)
{
    long found = 0;
    for (size_t d = 0, nd = tsf_reader_device_count(r); d < nd; d++) {
        tsf_device_info di;
        if (tsf_reader_device(r, d, &di, NULL)) continue;
        size_t dl = strlen(di.name);
        int whole = name && !strcmp(name, di.name);
        const char *meas = name && !whole && !strncmp(name, di.name, dl) && name[dl] == '.' ? name + dl + 1 : NULL;
        if (name && !whole && !meas) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            if (tsf_reader_series(r, d, j, &si, NULL)) continue;
            if (meas && strcmp(meas, si.measurement)) continue;
            if (!v) {
                found++;
                continue;
            }
            if (*n == *cap) {
                sel *p = realloc(*v, (*cap *= 2) * sizeof **v);
                if (!p) return -1;
                *v = p;
            }
            (*v)[*n].dev = d;
            (*v)[*n].ser = j;
            (*n)++;
            found++;
        }
    }
    return found;
}

/* --series: comma-separated names; a name may itself hold commas (a table device whose tag value has one):
 * at each point the longest run of comma-joined pieces (at most MAX_NAME_PIECES) that names something is taken. */
static int select_series(tsf_reader *r, const char *path, const char *spec, sel **out, size_t *nout)
{
    size_t n = 0, cap = 16, np = 0;
    sel *v = malloc(cap * sizeof *v);
    char *copy = spec ? strdup(spec) : NULL, *name = spec ? malloc(strlen(spec) + 1) : NULL;
    char **piece = spec ? calloc(strlen(spec) + 1, sizeof *piece) : NULL;
    int rc = v && (!spec || (copy && name && piece)) ? CLI_OK : CLI_IO;
    if (!rc && !spec && match_series(r, NULL, &v, &n, &cap) < 0) rc = CLI_IO;
    if (!rc && spec) {
        for (char *p = copy, *c; (c = strchr(p, ',')) || *p; p = c + 1) {
            piece[np++] = p;
            if (!c) break;
            *c = '\0';
        }
    }
    for (size_t i = 0; !rc && i < np;) {
        size_t j = np - i > MAX_NAME_PIECES ? i + MAX_NAME_PIECES : np;
        long got = 0;
        while (j > i) { /* pieces [i, j) joined */
            name[0] = '\0';
            for (size_t k = i; k < j; k++) {
                if (k > i) strcat(name, ",");
                strcat(name, piece[k]);
            }
            if ((got = match_series(r, name, NULL, NULL, NULL)) > 0) break;
            j--;
        }
        if (j == i) {
            if (*piece[i]) {
                cli_err("stats", "%s: no series or device \"%s\"", path, piece[i]);
                suggest_series(r, piece[i]);
                rc = CLI_USAGE;
            }
            i++;
            continue;
        }
        if (match_series(r, name, &v, &n, &cap) < 0) rc = CLI_IO;
        i = j;
    }
    free(copy);
    free(name);
    free(piece);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *nout = n;
    return CLI_OK;
}

typedef stats_opts opts;

/* --window: a fixed length (cli_parse_duration), Nw (weeks), Nmo (months) or Ny (years). 0 or -1. */
static int parse_window(opts *o, const char *w)
{
    size_t n = strlen(w);
    char num[24];
    int64_t k;
    const char *suffix = n > 2 && !strcmp(w + n - 2, "mo") ? "mo" : n > 1 && strchr("wy", w[n - 1]) ? w + n - 1 : NULL;
    if (!suffix) return cli_parse_duration(w, o->unit, &o->window);
    size_t digits = n - strlen(suffix);
    if (!digits || digits >= sizeof num) return -1;
    memcpy(num, w, digits);
    num[digits] = '\0';
    if (cli_parse_i64(num, &k) || k <= 0 || k > 12000) return -1;
    if (*suffix == 'm') o->months = (int)k;
    else if (*suffix == 'y') o->months = (int)k * 12;
    else {
        char days[32];
        snprintf(days, sizeof days, "%" PRId64 "d", k * 7);
        if (cli_parse_duration(days, o->unit, &o->window)) return -1;
        o->origin = 4 * 86400 * o->unit; /* 1970-01-05, the first Monday */
    }
    return 0;
}

static int parse_args(int argc, char **argv, opts *o)
{
    const char *from = NULL, *to = NULL, *window = NULL, *unit = "ms", *tz = NULL;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return -1;
        } else if (cli_is(&a, "--json"))
            o->format = FMT_JSON;
        else if (cli_is(&a, "--decode"))
            o->decode = 1;
        else if (cli_is(&a, "--no-check"))
            o->no_check = 1;
        else if (cli_value(&a, "--series"))
            o->series = a.val;
        else if (cli_value(&a, "--from"))
            from = a.val;
        else if (cli_value(&a, "--to"))
            to = a.val;
        else if (cli_value(&a, "--window"))
            window = a.val;
        else if (cli_value(&a, "--tz"))
            tz = a.val;
        else if (cli_value(&a, "--time-unit"))
            unit = a.val;
        else if (cli_value(&a, "--time-format")) {
            if (strcmp(a.val, "iso") && strcmp(a.val, "number")) {
                cli_err("stats", "--time-format: iso or number, not '%s'", a.val);
                return CLI_USAGE;
            }
            o->iso = !strcmp(a.val, "iso");
        } else if (cli_value(&a, "--format")) {
            if (!strcmp(a.val, "text")) o->format = FMT_TEXT;
            else if (!strcmp(a.val, "csv")) o->format = FMT_CSV;
            else if (!strcmp(a.val, "json")) o->format = FMT_JSON;
            else {
                cli_err("stats", "--format: text, csv or json, not '%s'", a.val);
                return CLI_USAGE;
            }
        } else if (cli_value(&a, "--group-by"))
            o->group_by = a.val;
        else if (cli_value(&a, "--cache"))
            o->cache = a.val;
        else if (cli_value(&a, "--threads") || cli_value(&a, "--files-at-once")) {
            uint64_t n;
            int thr = !strcmp(a.arg, "--threads") || !strncmp(a.arg, "--threads=", 10);
            if (!a.bad && (cli_parse_u64(a.val, &n) || n < 1 || n > 256)) {
                cli_err("stats", "%s: \"%s\" is not a count from 1 to 256", thr ? "--threads" : "--files-at-once", a.val);
                return CLI_USAGE;
            }
            if (thr) o->threads = (unsigned)n;
            else o->files_at_once = (unsigned)n;
        } else if (cli_positional(&a)) {
            if (o->npaths == MAX_STATS_PATHS) {
                cli_err("stats", "more than %d paths (name a directory or a pattern instead)", MAX_STATS_PATHS);
                return CLI_USAGE;
            }
            o->paths[o->npaths++] = a.arg;
            o->path = o->paths[0];
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, o->path)) return CLI_USAGE;
    if (cli_parse_time_unit(unit, &o->unit)) {
        cli_err("stats", "--time-unit: \"%s\" is not s, ms, us or ns", unit);
        return CLI_USAGE;
    }
    if (tz && csv_tz_parse(tz, &o->tz)) {
        cli_err("stats", "--tz: \"%s\" is not a fixed zone (UTC, +08:00, -0530)", tz);
        return CLI_USAGE;
    }
    o->from = INT64_MIN;
    o->to = INT64_MAX;
    if (from && cli_parse_time(from, o->unit, &o->from)) {
        cli_err("stats", "--from: \"%s\" is not a time (an integer or ISO-8601 such as 2024-01-02T03:04:05Z)", from);
        return CLI_USAGE;
    }
    if (to && cli_parse_time(to, o->unit, &o->to)) {
        cli_err("stats", "--to: \"%s\" is not a time (an integer or ISO-8601 such as 2024-01-02T03:04:05Z)", to);
        return CLI_USAGE;
    }
    if (o->from > o->to) {
        cli_err("stats", "--from is after --to");
        return CLI_USAGE;
    }
    if (window && parse_window(o, window)) {
        cli_err("stats", "--window: \"%s\" is not a positive duration in whole %s (500ms, 10s, 5m, 1h, 1d, an "
                "integer) or calendar windows (1w, 1mo, 3mo, 1y)", window, unit);
        return CLI_USAGE;
    }
    if (o->window > 0) { /* windows of local days: midnight in --tz */
        int64_t shift = (int64_t)o->tz * o->unit % o->window;
        o->origin = ((o->origin - shift) % o->window + o->window) % o->window;
    }
    return CLI_OK;
}

int stats_month_window(const opts *o, int64_t t, int64_t *start, int64_t *next)
{
    int64_t day = 86400 * o->unit, off = (int64_t)o->tz * o->unit, local, y, m, d;
    if (__builtin_add_overflow(t, off, &local)) return -1;
    int64_t days = local / day - (local % day < 0);
    cli_civil_from_days(days, &y, &m, &d);
    int64_t idx = (y - 1970) * 12 + (m - 1), k = o->months;
    idx = idx >= 0 ? idx / k * k : -((-idx + k - 1) / k) * k;
    int64_t y0 = 1970 + (idx >= 0 ? idx / 12 : -((-idx + 11) / 12)), m0 = idx - (y0 - 1970) * 12 + 1;
    int64_t idx1 = idx + k, y1 = 1970 + (idx1 >= 0 ? idx1 / 12 : -((-idx1 + 11) / 12)), m1 = idx1 - (y1 - 1970) * 12 + 1;
    int64_t s0, s1;
    if (__builtin_mul_overflow(cli_days_from_civil(y0, m0, 1), day, &s0) ||
        __builtin_mul_overflow(cli_days_from_civil(y1, m1, 1), day, &s1) || __builtin_sub_overflow(s0, off, start) ||
        __builtin_sub_overflow(s1, off, next))
        return -1;
    return 0;
}

/* A usage problem found while windowing: TSF_EINVAL with the message in e. */
static tsf_status window_error(tsf_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tsf_status window_error(tsf_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return e->code = TSF_EINVAL;
}

/* Output state: the text table, or CSV / JSON written as rows come. */
typedef struct out {
    const opts *o;
    cli_table t;
    uint64_t points;
    size_t nseries; /* JSON: series written */
    size_t nrows;   /* JSON: windows written in the current series */
} out;

static void put_time(const out *w, char *buf, size_t cap, int64_t t)
{
    if (w->o->iso) cli_format_time(buf, cap, t, w->o->unit);
    else snprintf(buf, cap, "%" PRId64, t);
}

/* A statistics value for CSV: raw text (quoted where CSV needs it) or a number; nothing for a null. */
static void csv_value(const tsf_stats *s, int which, const char *text)
{
    if (!s->count || !strcmp(text, "-")) return;
    if (s->type == TSF_TEXT || s->type == TSF_STRING) {
        tsf_bytes b = which == 0 ? s->min_b : which == 1 ? s->max_b : which == 2 ? s->first_b : s->last_b;
        if (b.data) csv_put_field(stdout, (const char *)b.data, b.len);
        return;
    }
    fputs(text, stdout);
}

static void mean_text(char *buf, size_t cap, const tsf_stats *s, int json)
{
    if (!s->count || !s->has_values || s->type == TSF_DATE) { /* the mean of yyyyMMdd numbers is no date */
        snprintf(buf, cap, json ? "null" : "-");
        return;
    }
    double m = s->sum / (double)s->count;
    if (json && !isfinite(m)) snprintf(buf, cap, "\"%s\"", isnan(m) ? "NaN" : m > 0 ? "Infinity" : "-Infinity");
    else cli_fmt_real(buf, cap, m, 0);
}

/* One window of one series (start/end: the window; one window over the range: the asked range). */
static void emit(out *w, const tsf_device_info *di, const tsf_series_info *si, int64_t start, int64_t end,
                 const tsf_stats *s)
{
    const opts *o = w->o;
    int json = o->format == FMT_JSON, win = o->window > 0 || o->months > 0;
    char v[6][256], t0[48], t1[48], ws[48];
    for (int x = 0; x < 4; x++) fmt_value(v[x], sizeof v[x], s, x, json);
    fmt_sum(v[4], sizeof v[4], s, json);
    mean_text(v[5], sizeof v[5], s, json);
    w->points += s->count;
    if (json) {
        printf("%s{\"start\": %" PRId64 ", \"end\": %" PRId64 ", \"count\": %" PRIu64, w->nrows++ ? ", " : "", start,
               end, s->count);
        if (s->count) printf(", \"first_time\": %" PRId64 ", \"last_time\": %" PRId64, s->start_time, s->end_time);
        printf(", \"min\": %s, \"max\": %s, \"first\": %s, \"last\": %s, \"sum\": %s, \"mean\": %s}", v[0], v[1], v[2],
               v[3], v[4], v[5]);
        return;
    }
    if (!s->count) return;
    put_time(w, t0, sizeof t0, s->start_time);
    put_time(w, t1, sizeof t1, s->end_time);
    put_time(w, ws, sizeof ws, start);
    if (o->format == FMT_CSV) {
        csv_put_field(stdout, di->name, strlen(di->name));
        putchar(',');
        csv_put_field(stdout, si->measurement, strlen(si->measurement));
        if (win) printf(",%s", ws);
        printf(",%" PRIu64 ",%s,%s", s->count, t0, t1);
        for (int x = 0; x < 6; x++) {
            putchar(',');
            if (x < 4) csv_value(s, x, v[x]);
            else if (strcmp(v[x], "-")) fputs(v[x], stdout);
        }
        putchar('\n');
        return;
    }
    cli_table_add(&w->t, "%s", di->name);
    cli_table_add(&w->t, "%s", si->measurement);
    if (win) cli_table_add(&w->t, "%s", ws);
    cli_table_add(&w->t, "%" PRIu64, s->count);
    cli_table_add(&w->t, "%s", t0);
    cli_table_add(&w->t, "%s", t1);
    for (int x = 0; x < 6; x++) cli_table_add(&w->t, "%s", v[x]);
}

static void add_info(tsf_agg_info *total, const tsf_agg_result *res)
{
    tsf_agg_info inf;
    tsf_agg_result_info(res, &inf);
    total->chunks_from_stats += inf.chunks_from_stats;
    total->pages_from_stats += inf.pages_from_stats;
    total->pages_decoded += inf.pages_decoded;
    total->points_from_stats += inf.points_from_stats;
    total->points_decoded += inf.points_decoded;
}

/* The windows of one series: one aggregate (fixed windows), or one per calendar window over the series' time
 * range from the index. */
static tsf_status series_windows(tsf_reader *r, const sel *sv, const tsf_device_info *di, const tsf_series_info *si,
                                 out *w, tsf_agg_info *total, tsf_error *e)
{
    const opts *o = w->o;
    tsf_agg_options ao;
    tsf_agg_options_init(&ao);
    ao.time_min = o->from;
    ao.time_max = o->to;
    ao.force_decode = o->decode;
    tsf_agg_result *res = NULL;
    tsf_status st;
    if (!o->months) {
        ao.window = o->window;
        ao.window_origin = o->origin;
        if ((st = tsf_aggregate(r, sv->dev, sv->ser, &ao, &res, e))) return st;
        add_info(total, res);
        for (size_t i = 0, nw = tsf_agg_result_count(res); i < nw; i++) {
            const tsf_agg_window *aw = tsf_agg_result_window(res, i);
            emit(w, di, si, aw->start, aw->end, &aw->stats);
        }
        tsf_agg_result_free(res);
        return TSF_OK;
    }
    int64_t lo = o->from > si->stats.start_time ? o->from : si->stats.start_time;
    int64_t hi = o->to < si->stats.end_time ? o->to : si->stats.end_time;
    if (!si->stats.count || lo > hi) return TSF_OK;
    /* one aggregate per calendar window: their number is bounded (28 days is the shortest month) */
    double span = ((double)hi - (double)lo) / (28.0 * 86400.0 * (double)o->unit * o->months);
    if (span > MAX_CALENDAR_WINDOWS)
        return window_error(e, "calendar windows: %s.%s spans more than %d windows of %d months",
                       di->name, si->measurement, MAX_CALENDAR_WINDOWS, o->months);
    int64_t start, next;
    if (stats_month_window(o, lo, &start, &next))
        return window_error(e, "calendar windows: time %" PRId64 " is outside the calendar", lo);
    for (;;) {
        ao.time_min = start > lo ? start : lo;
        ao.time_max = next - 1 < hi ? next - 1 : hi;
        if ((st = tsf_aggregate(r, sv->dev, sv->ser, &ao, &res, e))) return st;
        add_info(total, res);
        if (tsf_agg_result_count(res)) emit(w, di, si, start, next, &tsf_agg_result_window(res, 0)->stats);
        tsf_agg_result_free(res);
        if (next > hi) return TSF_OK;
        if (stats_month_window(o, next, &start, &next))
            return window_error(e, "calendar windows: times after %" PRId64 " are outside the calendar", start);
    }
}

int tsf_cmd_stats(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? CLI_OK : rc;
    if (o.group_by || cli_is_dataset(o.paths, o.npaths)) return stats_dataset(&o);
    tsf_reader *r;
    if ((rc = cli_open_reader_checked("stats", o.path, !o.no_check, &r))) return rc;
    sel *sv = NULL;
    size_t ns = 0;
    if ((rc = select_series(r, o.path, o.series, &sv, &ns))) {
        tsf_reader_close(r);
        return rc;
    }
    tsf_agg_info total = {0};
    out w = {.o = &o};
    int win = o.window > 0 || o.months > 0;
    cli_table_init(&w.t, win ? 12 : 11, win ? 0x3Cu : 0x1Cu);
    const char *h[] = {"device", "series", "window", "count", "first_time", "last_time", "min", "max", "first",
                       "last", "sum", "mean"};
    if (o.format == FMT_TEXT) {
        for (size_t i = 0; i < 12; i++)
            if (win || i != 2) cli_table_add(&w.t, "%s", h[i]);
    } else if (o.format == FMT_CSV) {
        for (size_t i = 0; i < 12; i++)
            if (win || i != 2) printf("%s%s", i ? "," : "", h[i]);
        putchar('\n');
    } else {
        fputs("{\"file\": ", stdout);
        cli_json_str(stdout, o.path);
        fputs(", \"series\": [", stdout);
    }
    for (size_t k = 0; k < ns && !rc; k++) {
        tsf_device_info di;
        tsf_series_info si;
        tsf_error e = {0};
        if (tsf_reader_device(r, sv[k].dev, &di, &e) || tsf_reader_series(r, sv[k].dev, sv[k].ser, &si, &e)) {
            cli_err_file("stats", o.path, e.message);
            rc = cli_exit_code(e.code);
            break;
        }
        if (o.format == FMT_JSON) {
            fputs(k ? ",\n    {\"device\": " : "\n    {\"device\": ", stdout);
            cli_json_str(stdout, di.name);
            fputs(", \"series\": ", stdout);
            cli_json_str(stdout, si.measurement);
            printf(", \"type\": \"%s\", \"windows\": [", tsf_type_name(si.type) ? tsf_type_name(si.type) : "?");
            w.nrows = 0;
        }
        if (series_windows(r, &sv[k], &di, &si, &w, &total, &e)) {
            if (o.format == FMT_JSON) fputs("]}", stdout);
            cli_err_file("stats", o.path, e.message);
            rc = cli_exit_code(e.code);
            break;
        }
        if (o.format == FMT_JSON) fputs("]}", stdout);
    }
    uint64_t points = w.points;
    if (!rc && o.format == FMT_JSON) {
        printf("%s], \"points\": %" PRIu64 ", \"from_statistics\": {\"chunks\": %" PRIu64 ", \"pages\": %" PRIu64
               ", \"points\": %" PRIu64 "}, \"decoded\": {\"pages\": %" PRIu64 ", \"points\": %" PRIu64 "}}\n",
               ns ? "\n  " : "", points, total.chunks_from_stats, total.pages_from_stats, total.points_from_stats,
               total.pages_decoded, total.points_decoded);
    } else if (!rc && o.format == FMT_TEXT) {
        if (points && cli_table_print(&w.t, stdout, "")) rc = CLI_IO;
        uint64_t all = total.points_from_stats + total.points_decoded;
        printf("%s%" PRIu64 " points in %zu series; from statistics: %" PRIu64 " chunks + %" PRIu64 " pages = %" PRIu64
               " points (%.1f%%); decoded: %" PRIu64 " pages, %" PRIu64 " points\n",
               points ? "\n" : "", points, ns, total.chunks_from_stats, total.pages_from_stats,
               total.points_from_stats, all ? 100.0 * (double)total.points_from_stats / (double)all : 0.0,
               total.pages_decoded, total.points_decoded);
    }
    cli_table_free(&w.t);
    free(sv);
    tsf_reader_close(r);
    if (fflush(stdout)) return CLI_IO;
    if (!rc && points == 0) {
        cli_err("stats", "%s: no point matched", o.path);
        rc = CLI_EMPTY;
    }
    return rc;
}
