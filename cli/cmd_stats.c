/*
 * cmd_stats.c - `tsf stats FILE [--series ...] [--from T] [--to T] [--window W] [--time-unit U] [--json]`:
 * count, min, max, first, last and sum per series (and per time window) through tsf_aggregate, which
 * answers whole chunks and pages from their statistics (container spec §7) and decodes only the rest;
 * the footer says how much was answered without decoding (tsf_agg_info). Exit 4 when nothing matched.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"

static const char *HELP =
    "usage: tsf stats FILE [--series DEV.MEAS,...] [--from T] [--to T] [--window W] [--time-unit U] [--json]\n"
    "Prints count, first and last time, min, max, first, last and sum of each series, answered from chunk\n"
    "and page statistics where possible (only the other pages are decoded; the footer says how much).\n"
    "  --series LIST     comma-separated DEVICE.MEASUREMENT or DEVICE (all its series); default all\n"
    "  --from T, --to T  inclusive time range: an integer in the file's unit or ISO-8601 (UTC unless a\n"
    "                    zone is given, e.g. 2024-01-02T03:00:00Z)\n"
    "  --window W        one row per window of W: 500ms, 10s, 5m, 1h, 1d, or an integer in the file's unit;\n"
    "                    windows start at multiples of W from time 0; empty windows are left out\n"
    "  --time-unit U     the file's time unit, s, ms (default), us or ns: governs --from/--to/--window\n"
    "  --decode          ignore statistics and decode every page (for comparison)\n"
    "  --no-check        trust the file: do not compare decoded pages with their statistics\n"
    "  --json            one JSON object instead of text\n"
    "Exit code 1 for an unknown --series name (with the closest names), 4 when no point matched.\n";

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
        /* quoted, escaped, at most 40 bytes shown in text mode */
        size_t n = 0, lim = json ? cap - 8 : 40;
        buf[n++] = '"';
        for (size_t i = 0; i < b.len && n + 8 < cap; i++) {
            if (!json && i >= lim) {
                n += (size_t)snprintf(buf + n, cap - n, "...");
                break;
            }
            uint8_t c = b.data[i];
            if (c == '"' || c == '\\')
                n += (size_t)snprintf(buf + n, cap - n, "\\%c", c);
            else if (c < 0x20 || c == 0x7f)
                n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", c);
            else
                buf[n++] = (char)c;
        }
        snprintf(buf + n, cap - n, "\"");
        return;
    }
    default: snprintf(buf, cap, json ? "null" : "-");
    }
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
static int select_series(tsf_reader *r, const char *path, const char *spec, sel **out, size_t *nout)
{
    size_t nd = tsf_reader_device_count(r), n = 0, cap = 16;
    sel *v = malloc(cap * sizeof *v);
    char *copy = spec ? strdup(spec) : NULL;
    int rc = v && (!spec || copy) ? CLI_OK : CLI_IO;
    char *save = NULL;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; !rc && (copy ? tok != NULL : n == 0);
         tok = copy ? strtok_r(NULL, ",", &save) : NULL) {
        int found = 0;
        for (size_t d = 0; d < nd && !rc; d++) {
            tsf_device_info di;
            if (tsf_reader_device(r, d, &di, NULL)) continue;
            size_t dl = strlen(di.name);
            int whole = tok && !strcmp(tok, di.name);
            const char *meas = tok && !whole && !strncmp(tok, di.name, dl) && tok[dl] == '.' ? tok + dl + 1 : NULL;
            if (tok && !whole && !meas) continue;
            for (size_t j = 0; j < di.nseries && !rc; j++) {
                tsf_series_info si;
                if (tsf_reader_series(r, d, j, &si, NULL)) continue;
                if (meas && strcmp(meas, si.measurement)) continue;
                if (n == cap) {
                    sel *p = realloc(v, (cap *= 2) * sizeof *v);
                    if (!p) {
                        rc = CLI_IO;
                        break;
                    }
                    v = p;
                }
                v[n].dev = d;
                v[n].ser = j;
                n++;
                found = 1;
            }
        }
        if (!copy) break;
        if (!found && !rc) {
            cli_err("stats", "%s: no series or device \"%s\"", path, tok);
            suggest_series(r, tok);
            rc = CLI_USAGE;
        }
    }
    free(copy);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *nout = n;
    return CLI_OK;
}

typedef struct opts {
    const char *path, *series;
    int64_t from, to, window, unit;
    int json, decode, no_check;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    const char *from = NULL, *to = NULL, *window = NULL, *unit = "ms";
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return -1;
        } else if (cli_is(&a, "--json"))
            o->json = 1;
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
        else if (cli_value(&a, "--time-unit"))
            unit = a.val;
        else if (cli_positional(&a)) {
            if (cli_one_file(&a, &o->path)) return CLI_USAGE;
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, o->path)) return CLI_USAGE;
    if (cli_parse_time_unit(unit, &o->unit)) {
        cli_err("stats", "--time-unit: \"%s\" is not s, ms, us or ns", unit);
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
    if (window && cli_parse_duration(window, o->unit, &o->window)) {
        cli_err("stats", "--window: \"%s\" is not a positive duration in whole %s (500ms, 10s, 5m, 1h, 1d or an "
                "integer)", window, unit);
        return CLI_USAGE;
    }
    return CLI_OK;
}

int tsf_cmd_stats(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? CLI_OK : rc;
    tsf_reader *r;
    if ((rc = cli_open_reader_checked("stats", o.path, !o.no_check, &r))) return rc;
    sel *sv = NULL;
    size_t ns = 0;
    if ((rc = select_series(r, o.path, o.series, &sv, &ns))) {
        tsf_reader_close(r);
        return rc;
    }
    tsf_agg_options ao;
    tsf_agg_options_init(&ao);
    ao.time_min = o.from;
    ao.time_max = o.to;
    ao.window = o.window;
    ao.force_decode = o.decode;
    tsf_agg_info total = {0};
    uint64_t points = 0;
    cli_table t;
    int win = o.window > 0;
    cli_table_init(&t, win ? 11 : 10, win ? 0x3Cu : 0x1Cu);
    const char *h[] = {"device", "series", "window", "count", "first_time", "last_time", "min", "max", "first",
                       "last", "sum"};
    for (size_t i = 0; i < 11; i++)
        if (win || i != 2) cli_table_add(&t, "%s", h[i]);
    if (o.json) {
        fputs("{\"file\": ", stdout);
        cli_json_str(stdout, o.path);
        fputs(", \"series\": [", stdout);
    }
    for (size_t k = 0; k < ns && !rc; k++) {
        tsf_device_info di;
        tsf_series_info si;
        tsf_error e = {0};
        tsf_agg_result *res = NULL;
        if (tsf_reader_device(r, sv[k].dev, &di, &e) || tsf_reader_series(r, sv[k].dev, sv[k].ser, &si, &e) ||
            tsf_aggregate(r, sv[k].dev, sv[k].ser, &ao, &res, &e)) {
            cli_err_file("stats", o.path, e.message);
            rc = cli_exit_code(e.code);
            break;
        }
        tsf_agg_info inf;
        tsf_agg_result_info(res, &inf);
        total.chunks_from_stats += inf.chunks_from_stats;
        total.pages_from_stats += inf.pages_from_stats;
        total.pages_decoded += inf.pages_decoded;
        total.points_from_stats += inf.points_from_stats;
        total.points_decoded += inf.points_decoded;
        size_t nw = tsf_agg_result_count(res);
        if (o.json) {
            fputs(k ? ",\n    {\"device\": " : "\n    {\"device\": ", stdout);
            cli_json_str(stdout, di.name);
            fputs(", \"series\": ", stdout);
            cli_json_str(stdout, si.measurement);
            printf(", \"type\": \"%s\", \"windows\": [", tsf_type_name(si.type) ? tsf_type_name(si.type) : "?");
        }
        for (size_t i = 0; i < nw; i++) {
            const tsf_agg_window *w = tsf_agg_result_window(res, i);
            const tsf_stats *s = &w->stats;
            char v[5][256];
            for (int x = 0; x < 4; x++) fmt_value(v[x], sizeof v[x], s, x, o.json);
            fmt_sum(v[4], sizeof v[4], s, o.json);
            points += s->count;
            if (o.json) {
                printf("%s{\"start\": %" PRId64 ", \"end\": %" PRId64 ", \"count\": %" PRIu64, i ? ", " : "",
                       w->start, w->end, s->count);
                if (s->count)
                    printf(", \"first_time\": %" PRId64 ", \"last_time\": %" PRId64, s->start_time, s->end_time);
                printf(", \"min\": %s, \"max\": %s, \"first\": %s, \"last\": %s, \"sum\": %s}", v[0], v[1], v[2],
                       v[3], v[4]);
                continue;
            }
            if (!s->count) continue;
            cli_table_add(&t, "%s", di.name);
            cli_table_add(&t, "%s", si.measurement);
            if (win) cli_table_add(&t, "%" PRId64, w->start);
            cli_table_add(&t, "%" PRIu64, s->count);
            cli_table_add(&t, "%" PRId64, s->start_time);
            cli_table_add(&t, "%" PRId64, s->end_time);
            for (int x = 0; x < 5; x++) cli_table_add(&t, "%s", v[x]);
        }
        if (o.json) fputs("]}", stdout);
        tsf_agg_result_free(res);
    }
    if (!rc && o.json) {
        printf("%s], \"points\": %" PRIu64 ", \"from_statistics\": {\"chunks\": %" PRIu64 ", \"pages\": %" PRIu64
               ", \"points\": %" PRIu64 "}, \"decoded\": {\"pages\": %" PRIu64 ", \"points\": %" PRIu64 "}}\n",
               ns ? "\n  " : "", points, total.chunks_from_stats, total.pages_from_stats, total.points_from_stats,
               total.pages_decoded, total.points_decoded);
    } else if (!rc) {
        if (points && cli_table_print(&t, stdout, "")) rc = CLI_IO;
        uint64_t all = total.points_from_stats + total.points_decoded;
        printf("%s%" PRIu64 " points in %zu series; from statistics: %" PRIu64 " chunks + %" PRIu64 " pages = %" PRIu64
               " points (%.1f%%); decoded: %" PRIu64 " pages, %" PRIu64 " points\n",
               points ? "\n" : "", points, ns, total.chunks_from_stats, total.pages_from_stats,
               total.points_from_stats, all ? 100.0 * (double)total.points_from_stats / (double)all : 0.0,
               total.pages_decoded, total.points_decoded);
    }
    cli_table_free(&t);
    free(sv);
    tsf_reader_close(r);
    if (fflush(stdout)) return CLI_IO;
    if (!rc && points == 0) {
        cli_err("stats", "%s: no point matched", o.path);
        rc = CLI_EMPTY;
    }
    return rc;
}
