/*
 * cmd_import.c - `tsf import CSV... -o FILE`: CSV to TsFile, streaming through writer tablets
 * (bulk column setters), memory bounded by one tablet per target plus the type-inference window.
 *
 * Layouts: wide (a time column and value columns; tree model: one aligned device per CSV, --device or
 * root.<file stem>; table model: --table NAME --tags a,b, one device per tag combination) and long
 * (header device,measurement,time,value in any order: one non-aligned tree series per pair).
 * Time: the column named time/timestamp/ts/datetime/date_time, else the first whose values are times (or
 * --time-column; none -> the row number, from 0; no time column at all is a usage error);
 * integer text in s/ms/us/ns detected by magnitude of the first value (>= 1e8; smaller values are taken
 * as they are, in the file's unit) or --input-unit; ISO-8601 text (UTC unless it names a zone or --tz);
 * converted exactly to --time-unit (default ms), else the row is bad.
 * Types: --schema col=TYPE, else inferred from the first --infer-rows (10000) rows: BOOLEAN (true/false),
 * INT64 (integers), DOUBLE (other numbers, NaN, Infinity), STRING (anything else); a column with no value
 * in the window is DOUBLE. Inference picks the widest type of each family, so later rows fit unless they
 * change family; such a row is a bad value naming file, line and column (use --schema or a larger window).
 * Exactness: a value the column's type cannot hold exactly (an integer out of range, a decimal whose
 * nearest double/float prints back to other digits, an overflow to infinity or underflow to zero, text cut
 * by a NUL byte) is a bad value; inference makes a column with such numbers STRING and notes it.
 * Cells: an empty unquoted cell is a null; "" (quoted) is an empty string.
 * Order: times must increase per device (per series for long CSVs); a row that does not is rejected with
 * its line, unless --sort (then every row is held in memory, sorted by time, the last duplicate wins).
 * Bad rows: the first one stops the import and nothing is written (the writer's temporary is removed), unless
 * --skip-bad, which skips and counts them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "import.h"
#include "outfile.h"

#define MAX_REPORTED_SKIPS 10

typedef struct col {
    const char *name;
    size_t field;
    tsf_type type;
    int given;
    inference inf;
} col;

/* ---- one CSV file ------------------------------------------------------------------------------- */

enum { TU_AUTO = -1, TU_RAW = 0, TU_ISO = -2 }; /* else units per second */

typedef struct file_ctx {
    int longfmt;
    size_t nfields;
    char **header;
    long tcol; /* -1: row numbers */
    int time_by_content; /* no column is named as a time and no --time-column: find one by its values */
    int64_t in_unit; /* TU_*, or per second */
    col *cols;
    size_t ncols;
    size_t ntags;
    size_t li_dev, li_meas, li_time, li_val; /* long layout */
    sink *sink; /* wide */
    uint64_t rowno;
    tsf_value *cells;
} file_ctx;

static int bad_row(imp *m, const rec *r, const char *column, const char *text, const char *why)
{
    char where[200];
    if (column)
        snprintf(where, sizeof where, ", column '%.60s': '%.60s' is", column, text ? text : "");
    else
        snprintf(where, sizeof where, ":");
    m->skipped++;
    if (m->o->skip_bad) {
        if (m->skipped <= MAX_REPORTED_SKIPS && !m->o->quiet)
            cli_err("import", "%s: line %" PRIu64 "%s %s (skipped)", m->path, r->line, where, why);
        return 0;
    }
    return imp_fail(m, CLI_DAMAGED, "%s: line %" PRIu64 "%s %s (nothing written; --skip-bad skips such rows)", m->path,
                r->line, where, why);
}

/* The time of a record in the file's unit; returns NULL or a reason. */
static const char *parse_time(imp *m, file_ctx *f, const rec *r, int64_t *t)
{
    if (f->tcol < 0) {
        *t = (int64_t)f->rowno;
        return NULL;
    }
    const char *s = r->text + r->off[f->tcol];
    if (imp_has_nul(r, (size_t)f->tcol)) return "cut by a NUL byte";
    if (f->in_unit == TU_AUTO) { /* decide from the first time value */
        int64_t v;
        if (csv_time_is_iso(s))
            f->in_unit = TU_ISO;
        else if (!csv_parse_i64(s, &v)) {
            uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
            f->in_unit = a < 100000000ull            ? TU_RAW
                         : a < 100000000000ull       ? 1
                         : a < 100000000000000ull    ? 1000
                         : a < 100000000000000000ull ? 1000000
                                                     : 1000000000;
        } else {
            return "not a time (an integer or ISO-8601 text)";
        }
    }
    if (f->in_unit == TU_ISO) {
        int rc = csv_time_parse_iso(s, m->o->tz, m->o->per_second, t);
        if (rc == -3) return "finer than the file's time unit (see --time-unit)";
        if (rc) return "not an ISO-8601 time";
        return NULL;
    }
    int64_t v;
    if (csv_parse_i64(s, &v)) return "not an integer time";
    if (f->in_unit == TU_RAW) {
        *t = v;
        return NULL;
    }
    int rc = csv_time_convert(v, f->in_unit, m->o->per_second, t);
    if (rc == -1) return "out of range in the file's time unit";
    if (rc == -2) return "finer than the file's time unit (see --time-unit)";
    return NULL;
}

/* Order check for streaming imports. */
static int check_order(imp *m, const rec *r, int64_t t, int64_t *last, uint64_t *last_line, int *has,
                       const char *what)
{
    if (m->o->sort) return 0;
    if (*has && t <= *last) {
        char why[512];
        snprintf(why, sizeof why, "time %" PRId64 " is not after %" PRId64 " (line %" PRIu64 ") of %s; --sort sorts",
                 t, *last, *last_line, what);
        return bad_row(m, r, NULL, NULL, why) ? -1 : 1;
    }
    *last = t;
    *last_line = r->line;
    *has = 1;
    return 0;
}

static void progress(imp *m, const csv_reader *cr, uint64_t total)
{
    time_t now = time(NULL);
    if (now == m->progress_at) return;
    m->progress_at = now;
    fprintf(stderr, "\rimport %s: %3d%% %" PRIu64 " MB, %" PRIu64 " rows", m->path,
            (int)(total ? cr->bytes * 100 / total : 0), cr->bytes >> 20, m->rows);
}

static sink *long_sink(imp *m, file_ctx *f, const char *dev, const char *meas)
{
    size_t dl = strlen(dev), ml = strlen(meas);
    int prefix = !(dl >= 4 && !strncmp(dev, "root", 4) && (dl == 4 || dev[4] == '.'));
    char *key = malloc(dl + ml + 8);
    if (!key) return NULL;
    snprintf(key, dl + ml + 8, "%s%s\n%s", prefix ? "root." : "", dev, meas);
    int created;
    hentry *h = imp_hmap_get(&m->series, key, 1, &created);
    if (!h) {
        free(key);
        return NULL;
    }
    if (!created) {
        free(key);
        return m->sinks[h->sink];
    }
    *strchr(key, '\n') = 0;
    sink *s = imp_sink_new(key, 1);
    key[strlen(key)] = '\n';
    sink **ns = s ? realloc(m->sinks, (m->nsinks + 1) * sizeof *ns) : NULL;
    if (!ns) {
        imp_sink_free(s);
        free(key);
        return NULL;
    }
    m->sinks = ns;
    s->key = key;
    s->names[0] = strdup(meas);
    h->sink = m->nsinks;
    m->sinks[m->nsinks++] = s;
    (void)f;
    return s->names[0] ? s : NULL;
}

/* Registers a long-CSV series once its type is known. */
static int long_register(imp *m, sink *s)
{
    tsf_type t;
    int g = imp_given_type(m, s->names[0], &t);
    if (g < 0) return m->failed;
    if (!g) {
        t = imp_inferred(&s->inf);
        char name[300];
        snprintf(name, sizeof name, "%s.%s", s->target, s->names[0]);
        imp_inferred_note(m, name, &s->inf);
    }
    s->types[0] = t;
    if (imp_column_codec(m, s->names[0], t, &s->encs[0], &s->comps[0])) return m->failed;
    tsf_column_schema cs = {s->names[0], t, s->encs[0], s->comps[0], TSF_COLUMN_FIELD};
    tsf_error e = {0};
    if (tsf_writer_register_series(m->w, s->target, &cs, &e))
        return imp_fail(m, CLI_USAGE, "%s: series %s.%s: %s", m->path, s->target, s->names[0], e.message);
    s->registered = 1;
    return 0;
}

static int process(imp *m, file_ctx *f, rec *r)
{
    if (imp_blank_record(r)) return 0;
    if (r->n != f->nfields) {
        char why[96];
        snprintf(why, sizeof why, "%zu fields, the header has %zu", r->n, f->nfields);
        return bad_row(m, r, NULL, NULL, why);
    }
    int64_t t;
    const char *why = parse_time(m, f, r, &t);
    if (why)
        return bad_row(m, r, f->header[f->tcol], r->text + r->off[f->tcol], why);
    if (f->longfmt) {
        const char *dev = r->text + r->off[f->li_dev], *meas = r->text + r->off[f->li_meas];
        if (!*dev || !*meas) return bad_row(m, r, NULL, NULL, "empty device or measurement");
        if (imp_has_nul(r, f->li_dev) || imp_has_nul(r, f->li_meas))
            return bad_row(m, r, NULL, NULL, "a NUL byte in the device or measurement");
        sink *s = long_sink(m, f, dev, meas);
        if (!s) return imp_oom(m);
        char *vs = r->text + r->off[f->li_val];
        if (!s->registered) {
            imp_infer(&s->inf, vs, r->len[f->li_val], r->q[f->li_val], r->line);
            if (long_register(m, s)) return m->failed;
        }
        tsf_value v;
        if ((why = imp_parse_cell(m, s->types[0], vs, r->len[f->li_val], r->q[f->li_val], &v)))
            return bad_row(m, r, f->header[f->li_val], vs, why);
        if (v.is_null) return 0; /* a long row without a value adds nothing */
        char what[300];
        snprintf(what, sizeof what, "series %s.%s", s->target, s->names[0]);
        int o = check_order(m, r, t, &s->last_time, &s->last_line, &s->has_last, what);
        if (o) return o < 0 ? m->failed : 0;
        if (imp_sink_add(s, t, r->line, &v)) return imp_oom(m);
        m->rows++;
        if (!m->o->sort && s->n == TABLET_ROWS) return imp_sink_flush(m, s);
        return 0;
    }
    for (size_t i = 0; i < f->ncols; i++) {
        col *c = &f->cols[i];
        char *s = r->text + r->off[c->field];
        if ((why = imp_parse_cell(m, c->type, s, r->len[c->field], r->q[c->field], &f->cells[i])))
            return bad_row(m, r, c->name, s, why);
    }
    sink *s = f->sink;
    int o;
    if (f->ntags) { /* table model: order per tag combination */
        char key[4096];
        size_t k = 0;
        for (size_t i = 0; i < f->ntags && k < sizeof key - 2; i++) {
            const tsf_value *v = &f->cells[i];
            if (v->is_null)
                key[k++] = '\x1e';
            else {
                size_t n = v->v.bytes.len < sizeof key - 2 - k ? v->v.bytes.len : sizeof key - 2 - k;
                memcpy(key + k, v->v.bytes.data, n);
                k += n;
            }
            key[k++] = '\x1f';
        }
        key[k] = 0;
        hentry *h = m->o->sort ? NULL : imp_hmap_get(&m->order, key, 1, NULL);
        if (!m->o->sort && !h) return imp_oom(m);
        int has = h && h->line != 0;
        o = h ? check_order(m, r, t, &h->time, &h->line, &has, "its tag combination") : 0;
    } else {
        o = check_order(m, r, t, &s->last_time, &s->last_line, &s->has_last, s->target);
    }
    if (o) return o < 0 ? m->failed : 0;
    if (imp_sink_add(s, t, r->line, f->cells)) return imp_oom(m);
    m->rows++;
    if (!m->o->sort && s->n == TABLET_ROWS) return imp_sink_flush(m, s);
    return 0;
}

static int is_time_name(const char *s)
{
    static const char *const N[] = {"time", "timestamp", "ts", "datetime", "date_time"};
    for (size_t i = 0; i < sizeof N / sizeof N[0]; i++)
        if (!strcasecmp(s, N[i])) return 1;
    return 0;
}

static char *default_device(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (!strcmp(path, "-")) b = "stdin";
    size_t n = strlen(b);
    const char *dot = strrchr(b, '.');
    if (dot && dot != b) n = (size_t)(dot - b);
    char *d = malloc(n + 6);
    if (!d) return NULL;
    memcpy(d, "root.", 5);
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        d[5 + i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ? c : '_';
    }
    d[5 + n] = 0;
    return d;
}

/* Finds a registered wide target with the same columns (several CSVs into one device or table). */
static sink *find_target(imp *m, const char *target)
{
    for (size_t i = 0; i < m->nsinks; i++)
        if (!m->sinks[i]->key && !strcasecmp(m->sinks[i]->target, target)) return m->sinks[i];
    return NULL;
}

/* Sets up the wide target of this file: registers the device or table (types known). */
static int wide_target(imp *m, file_ctx *f)
{
    const imp_opts *o = m->o;
    char *target = o->table ? strdup(o->table) : o->device ? strdup(o->device) : default_device(m->path);
    if (!target) return imp_oom(m);
    sink *s = find_target(m, target);
    if (s) {
        int same = s->ncols == f->ncols;
        for (size_t i = 0; same && i < f->ncols; i++)
            same = !strcasecmp(s->names[i], f->cols[i].name) && s->types[i] == f->cols[i].type;
        free(target);
        if (!same)
            return imp_fail(m, CLI_USAGE, "%s: its columns or types differ from those of an earlier CSV for %s", m->path,
                        s->target);
        f->sink = s;
        return 0;
    }
    s = imp_sink_new(target, f->ncols);
    free(target);
    sink **ns = s ? realloc(m->sinks, (m->nsinks + 1) * sizeof *ns) : NULL;
    if (!ns) {
        imp_sink_free(s);
        return imp_oom(m);
    }
    m->sinks = ns;
    m->sinks[m->nsinks++] = s;
    f->sink = s;
    s->ntags = f->ntags;
    tsf_column_schema *cs = calloc(f->ncols, sizeof *cs);
    if (!cs) return imp_oom(m);
    for (size_t i = 0; i < f->ncols; i++) {
        if (!(s->names[i] = strdup(f->cols[i].name))) {
            free(cs);
            return imp_oom(m);
        }
        s->types[i] = f->cols[i].type;
        if (i >= f->ntags && imp_column_codec(m, s->names[i], s->types[i], &s->encs[i], &s->comps[i])) {
            free(cs);
            return m->failed;
        }
        if (i < f->ntags) {
            s->encs[i] = TSF_ENC_PLAIN;
            s->comps[i] = TSF_LZ4;
        }
        cs[i] = (tsf_column_schema){s->names[i], s->types[i], s->encs[i], s->comps[i],
                                    i < f->ntags ? TSF_COLUMN_TAG : TSF_COLUMN_FIELD};
    }
    tsf_error e = {0};
    tsf_status st = o->table ? tsf_writer_register_table(m->w, s->target, cs, f->ncols, &e)
                             : tsf_writer_register_aligned(m->w, s->target, cs, f->ncols, &e);
    free(cs);
    if (st) return imp_fail(m, CLI_USAGE, "%s: %s", m->path, e.message);
    s->registered = 1;
    return 0;
}

/* Reads the header, decides layout, time column and the columns. */
static int setup_columns(imp *m, file_ctx *f, const rec *h)
{
    const imp_opts *o = m->o;
    f->nfields = h->n;
    f->header = calloc(h->n, sizeof *f->header);
    if (!f->header) return imp_oom(m);
    for (size_t i = 0; i < h->n; i++) {
        const char *s = h->text + h->off[i];
        if (imp_has_nul(h, i)) return imp_fail(m, CLI_DAMAGED, "%s: the name of column %zu holds a NUL byte", m->path, i + 1);
        while (*s == ' ') s++;
        if (!(f->header[i] = strdup(s))) return imp_oom(m);
        size_t n = strlen(f->header[i]);
        while (n && f->header[i][n - 1] == ' ') f->header[i][--n] = 0;
    }
    /* long layout */
    long d = -1, me = -1, t = -1, v = -1, ty = -1;
    for (size_t i = 0; i < h->n; i++) {
        const char *s = f->header[i];
        if (!strcasecmp(s, "device")) d = (long)i;
        else if (!strcasecmp(s, "measurement")) me = (long)i;
        else if (is_time_name(s)) t = (long)i;
        else if (!strcasecmp(s, "value")) v = (long)i;
        else if (!strcasecmp(s, "type")) ty = (long)i;
    }
    if (h->n == 5 && d >= 0 && me >= 0 && t >= 0 && v >= 0 && ty >= 0 && !o->time_col)
        return imp_fail(m, CLI_USAGE, "%s: this is the layout of tsf cat --format golden (device,measurement,time,"
                                      "type,value), made to compare files, not to import: import what tsf cat "
                                      "--format csv prints, or drop the type column for a long CSV", m->path);
    if (h->n == 4 && d >= 0 && me >= 0 && t >= 0 && v >= 0 && !o->time_col) {
        if (o->table || o->device)
            return imp_fail(m, CLI_USAGE, "%s: a long CSV (device,measurement,time,value) imports into the tree "
                                      "model; --table/--device do not apply", m->path);
        f->longfmt = 1;
        f->li_dev = (size_t)d;
        f->li_meas = (size_t)me;
        f->li_time = (size_t)t;
        f->li_val = (size_t)v;
        f->tcol = t;
        return 0;
    }
    /* wide: time column */
    f->tcol = -1;
    if (o->time_col && strcmp(o->time_col, "none")) {
        for (size_t i = 0; i < h->n && f->tcol < 0; i++)
            if (!strcmp(f->header[i], o->time_col)) f->tcol = (long)i;
        if (f->tcol < 0) return imp_fail(m, CLI_USAGE, "%s: no column named '%s' (--time-column)", m->path, o->time_col);
    } else if (!o->time_col) {
        for (size_t i = 0; i < h->n && f->tcol < 0; i++)
            if (is_time_name(f->header[i])) f->tcol = (long)i;
        f->time_by_content = f->tcol < 0;
    }
    f->cols = calloc(h->n, sizeof *f->cols);
    f->cells = calloc(h->n, sizeof *f->cells);
    if (!f->cols || !f->cells) return imp_oom(m);
    /* tags first (table model), then the value columns in CSV order */
    if (o->tags) {
        char *dup = strdup(o->tags);
        if (!dup) return imp_oom(m);
        for (char *p = strtok(dup, ","); p; p = strtok(NULL, ",")) {
            size_t i = 0;
            while (i < h->n && strcmp(f->header[i], p)) i++;
            if (i == h->n || (long)i == f->tcol) {
                imp_fail(m, CLI_USAGE, "%s: no column named '%s' for --tags", m->path, p);
                free(dup);
                return m->failed;
            }
            f->cols[f->ncols++] = (col){f->header[i], i, TSF_STRING, 1, {0}};
        }
        free(dup);
        f->ntags = f->ncols;
    }
    for (size_t i = 0; i < h->n; i++) {
        if ((long)i == f->tcol) continue;
        int tag = 0;
        for (size_t k = 0; k < f->ntags; k++) tag |= f->cols[k].field == i;
        if (tag) continue;
        if (!f->header[i][0]) return imp_fail(m, CLI_USAGE, "%s: column %zu has no name in the header", m->path, i + 1);
        col *c = &f->cols[f->ncols++];
        c->name = f->header[i];
        c->field = i;
        int g = imp_given_type(m, c->name, &c->type);
        if (g < 0) return m->failed;
        c->given = g;
    }
    if (f->ncols == f->ntags) return imp_fail(m, CLI_USAGE, "%s: no value column", m->path);
    return 0;
}

/* A cell that reads as a point in time: ISO-8601 text, or an integer of at least 10^9 (epoch seconds from
   2001 on, or milli-, micro-, nanoseconds). */
static int looks_like_time(const imp_opts *o, const char *s)
{
    int64_t t;
    if (csv_time_is_iso(s)) return csv_time_parse_iso(s, o->tz, 1000, &t) == 0;
    return csv_parse_i64(s, &t) == 0 && t >= 1000000000;
}

/* Without a column named as a time: the first value column (not a tag, no --schema type) whose every
   non-empty cell of the inference window looks like a time becomes the time column (noted on stderr);
   with none, the import stops (--time-column none numbers the rows). */
static int time_column_by_content(imp *m, file_ctx *f, const rec *win, size_t nwin)
{
    for (size_t k = f->ntags; k < f->ncols; k++) {
        const col *c = &f->cols[k];
        size_t seen = 0, ok = 1;
        for (size_t r = 0; r < nwin && ok; r++) {
            if (win[r].n != f->nfields || !win[r].len[c->field]) continue;
            seen++;
            ok = !win[r].q[c->field] && looks_like_time(m->o, win[r].text + win[r].off[c->field]);
        }
        if (c->given || !seen || !ok) continue;
        f->tcol = (long)c->field;
        if (!m->o->quiet)
            fprintf(stderr, "tsf import: %s: time column '%s' (its values are times; --time-column sets it)\n",
                    m->path, c->name);
        memmove(&f->cols[k], &f->cols[k + 1], (f->ncols - k - 1) * sizeof *f->cols);
        f->ncols--;
        if (f->ncols == f->ntags) return imp_fail(m, CLI_USAGE, "%s: no value column", m->path);
        return 0;
    }
    return imp_fail(m, CLI_USAGE,
                    "%s: no time column: none is named time, timestamp, ts, datetime or date_time, and no column "
                    "holds times; give --time-column NAME, or --time-column none to number the rows",
                    m->path);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* --flush-interval: every interval the rows held in the sinks go to the writer, which writes them as
   complete chunk groups (a killed import then loses at most the last interval; tsf recover keeps the
   rest). --sort holds every row until the end. */
static int periodic_flush(imp *m)
{
    if (m->o->sort || !m->o->flush_ms) return 0;
    uint64_t now = now_ms();
    if (now - m->flushed_at < m->o->flush_ms) return 0;
    m->flushed_at = now;
    for (size_t i = 0; i < m->nsinks; i++) {
        int rc = m->sinks[i]->registered ? imp_sink_flush(m, m->sinks[i]) : 0;
        if (rc) return rc;
    }
    tsf_error e = {0};
    if (tsf_writer_flush(m->w, &e)) return imp_fail(m, CLI_IO, "%s", e.message);
    return 0;
}

static int import_file(imp *m, const char *path)
{
    const imp_opts *o = m->o;
    csv_reader cr;
    m->path = path;
    if (csv_open(&cr, path)) return imp_fail(m, CLI_IO, "%s: cannot open: %s", path, strerror(errno));
    cr.delim = o->delim ? o->delim : csv_detect_delim(&cr);
    if (!o->delim && cr.delim != ',' && !o->quiet)
        fprintf(stderr, "tsf import: %s: fields separated by %s (detected; --delimiter sets it)\n", path,
                cr.delim == '\t' ? "tabs" : cr.delim == ';' ? "';'" : "'|'");
    struct stat sb;
    uint64_t total = !strcmp(path, "-") || stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
    int show = o->progress && total > (32u << 20);
    file_ctx f = {0};
    f.in_unit = TU_AUTO;
    if (o->input_unit) {
        if (!strcmp(o->input_unit, "iso"))
            f.in_unit = TU_ISO;
        else if (!strcmp(o->input_unit, "raw"))
            f.in_unit = TU_RAW;
        else
            cli_parse_time_unit(o->input_unit, &f.in_unit);
    }
    rec *win = NULL;
    size_t nwin = 0;
    int rc = 0, got;
    char msg[256];
    rec hv;
    if ((got = csv_next(&cr, msg, sizeof msg)) <= 0) {
        rc = got < 0 ? imp_fail(m, CLI_DAMAGED, "%s", msg) : imp_fail(m, CLI_DAMAGED, "%s: empty (no header line)", path);
        goto done;
    }
    if (cr.nfields == 1 && strchr(cr.rec, '\t') && !cr.quoted[0]) { /* a tab-separated header */
        rc = imp_fail(m, CLI_USAGE,
                      "%s: the header has tabs but no '%c'; give --delimiter tab, or leave --delimiter out to detect it",
                      path, cr.delim);
        goto done;
    }
    if (o->unescape) imp_rec_unescape(&cr);
    imp_rec_view(&cr, &hv);
    if ((rc = setup_columns(m, &f, &hv))) goto done;
    /* the inference window */
    win = calloc(o->infer_rows ? o->infer_rows : 1, sizeof *win);
    if (!win) {
        rc = imp_oom(m);
        goto done;
    }
    while (nwin < o->infer_rows && (got = csv_next(&cr, msg, sizeof msg)) > 0) {
        rec v;
        if (o->unescape) imp_rec_unescape(&cr);
        imp_rec_nulls(o, &cr);
        imp_rec_view(&cr, &v);
        if (imp_blank_record(&v)) continue;
        if (imp_rec_copy(&v, &win[nwin])) {
            imp_rec_free(&win[nwin]);
            rc = imp_oom(m);
            goto done;
        }
        nwin++;
        if (v.n != f.nfields) continue;
        if (f.longfmt) {
            if (imp_has_nul(&v, f.li_dev) || imp_has_nul(&v, f.li_meas)) continue; /* a bad row, reported later */
            sink *s = long_sink(m, &f, v.text + v.off[f.li_dev], v.text + v.off[f.li_meas]);
            if (!s) {
                rc = imp_oom(m);
                goto done;
            }
            if (!s->registered) imp_infer(&s->inf, v.text + v.off[f.li_val], v.len[f.li_val], v.q[f.li_val], v.line);
        } else {
            for (size_t i = f.ntags; i < f.ncols; i++)
                if (!f.cols[i].given)
                    imp_infer(&f.cols[i].inf, v.text + v.off[f.cols[i].field], v.len[f.cols[i].field],
                          v.q[f.cols[i].field], v.line);
        }
    }
    if (got < 0) {
        rc = imp_fail(m, CLI_DAMAGED, "%s", msg);
        goto done;
    }
    if (!f.longfmt && f.time_by_content && (rc = time_column_by_content(m, &f, win, nwin))) goto done;
    if (!f.longfmt) {
        for (size_t i = f.ntags; i < f.ncols; i++)
            if (!f.cols[i].given) {
                f.cols[i].type = imp_inferred(&f.cols[i].inf);
                imp_inferred_note(m, f.cols[i].name, &f.cols[i].inf);
            }
        if ((rc = wide_target(m, &f))) goto done;
    } else {
        for (size_t i = 0; i < m->nsinks; i++)
            if (m->sinks[i]->key && !m->sinks[i]->registered && (rc = long_register(m, m->sinks[i]))) goto done;
    }
    for (size_t i = 0; i < nwin && !rc; i++, f.rowno++) rc = process(m, &f, &win[i]);
    while (!rc && (got = csv_next(&cr, msg, sizeof msg)) > 0) {
        rec v;
        if (o->unescape) imp_rec_unescape(&cr);
        imp_rec_nulls(o, &cr);
        imp_rec_view(&cr, &v);
        if (imp_blank_record(&v)) continue;
        rc = process(m, &f, &v);
        f.rowno++;
        if (show && (f.rowno & 0xffff) == 0) progress(m, &cr, total);
        if (!rc && (f.rowno & 0xfff) == 0) rc = periodic_flush(m);
    }
    if (!rc && got < 0) rc = imp_fail(m, CLI_DAMAGED, "%s", msg);
    if (show) fputc('\n', stderr);
    m->csv_bytes += cr.bytes;
done:
    for (size_t i = 0; i < nwin; i++) imp_rec_free(&win[i]);
    free(win);
    for (size_t i = 0; i < f.nfields && f.header; i++) free(f.header[i]);
    free(f.header);
    free(f.cols);
    free(f.cells);
    csv_close(&cr);
    return rc ? rc : m->failed;
}

/* ---- command ------------------------------------------------------------------------------------ */

/* ---- --partition: the imported file split by time into DIR ---------------------------------- */

/* DIR for the partitions: created when missing; an existing non-empty one only with --force, which removes
 * its part-*.tsfile files (so no earlier partition stays in the dataset). Returns an exit code. */
static int prepare_dir(const char *dir, int force)
{
    struct stat sb;
    if (stat(dir, &sb)) {
        if (mkdir(dir, 0777) == 0) return 0;
        cli_err("import", "%s: cannot create the directory: %s", dir, strerror(errno));
        return CLI_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_err("import", "%s exists and is no directory (--partition writes a directory)", dir);
        return CLI_USAGE;
    }
    DIR *d = opendir(dir);
    if (!d) {
        cli_err("import", "%s: cannot read the directory: %s", dir, strerror(errno));
        return CLI_IO;
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(e->d_name);
        if (!force) {
            cli_err("import", "%s is not empty (use -f to replace its partitions)", dir);
            rc = CLI_USAGE;
        } else if (!strncmp(e->d_name, "part-", 5) && n > 12 && !strcmp(e->d_name + n - 7, ".tsfile")) {
            char p[4096];
            if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < sizeof p && unlink(p)) {
                cli_err("import", "%s: cannot remove: %s", p, strerror(errno));
                rc = CLI_IO;
            }
        }
    }
    closedir(d);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every row time of the file (one per device row), sorted. */
static int all_times(tsf_reader *r, const char *path, int64_t **out, size_t *n)
{
    size_t cap = 1024;
    int64_t *v = malloc(cap * sizeof *v);
    tsf_query *q = NULL;
    tsf_error e = {0};
    *n = 0;
    if (!v) return CLI_IO;
    tsf_status st = tsf_query_open(r, NULL, &q, &e);
    for (const tsf_batch *b; !st && !(st = tsf_query_next(q, &b, &e)) && b;) {
        if (*n + b->nrows > cap) {
            while (*n + b->nrows > cap) cap *= 2;
            int64_t *p = realloc(v, cap * sizeof *p);
            if (!p) {
                free(v);
                tsf_query_close(q);
                return CLI_IO;
            }
            v = p;
        }
        memcpy(v + *n, b->times, b->nrows * sizeof *v);
        *n += b->nrows;
    }
    tsf_query_close(q);
    if (st) {
        free(v);
        cli_err_file("import", path, e.message);
        return cli_exit_code(st);
    }
    if (*n) qsort(v, *n, sizeof *v, cmp_i64);
    *out = v;
    return 0;
}

/* Start of the UTC day or hour of t (file unit per_second). */
static int64_t part_floor(int64_t t, int64_t len)
{
    return t >= 0 ? t - t % len : t - ((t % len) + len) % len;
}

/* Splits the imported file `path` into DIR: one file per partition, in time order. */
static int write_partitions(imp *m, const char *path, const char *dir, tsf_writer_options *wo)
{
    const imp_opts *o = m->o;
    tsf_reader *r = NULL;
    int rc = cli_open_reader("import", path, &r);
    int64_t *t = NULL;
    size_t n = 0, nparts = 0;
    uint64_t rows = 0, points = 0, bytes = 0;
    char first[64] = "", last[64] = "";
    if (!rc) rc = all_times(r, path, &t, &n);
    int64_t len = o->partition == IMP_PART_DAY ? 86400 * o->per_second : 3600 * o->per_second;
    for (size_t i = 0; !rc && i < n;) {
        int64_t lo = t[i], hi;
        size_t j = i;
        if (o->partition == IMP_PART_ROWS) {
            j = i + o->part_rows < n ? i + (size_t)o->part_rows : n;
            while (j < n && t[j] == t[j - 1]) j++; /* rows of one time stay in one partition */
            hi = t[j - 1];
        } else {
            lo = part_floor(t[i], len);
            hi = lo + (len - 1);
            while (j < n && t[j] <= hi) j++;
        }
        char name[64], p[4096];
        if (o->partition == IMP_PART_ROWS)
            snprintf(name, sizeof name, "part-%06zu.tsfile", nparts + 1);
        else {
            int64_t y, mo, d, day = 86400 * o->per_second;
            int64_t days = part_floor(lo, day) / day;
            cli_civil_from_days(days, &y, &mo, &d);
            if (o->partition == IMP_PART_DAY)
                snprintf(name, sizeof name, "part-%04" PRId64 "%02" PRId64 "%02" PRId64 ".tsfile", y, mo, d);
            else
                snprintf(name, sizeof name, "part-%04" PRId64 "%02" PRId64 "%02" PRId64 "T%02" PRId64 ".tsfile", y, mo,
                         d, (lo - part_floor(lo, day)) / (3600 * o->per_second));
        }
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p) {
            cli_err("import", "%s: the directory name is too long", dir);
            rc = CLI_USAGE;
            break;
        }
        uint64_t pr = 0, pp = 0;
        if ((rc = cli_copy_range("import", r, path, p, lo, hi, wo, &pr, &pp))) break;
        struct stat sb;
        bytes += stat(p, &sb) ? 0 : (uint64_t)sb.st_size;
        rows += pr;
        points += pp;
        snprintf(nparts++ ? last : first, sizeof first, "%s", name);
        i = j;
    }
    free(t);
    tsf_reader_close(r);
    if (!rc && !o->quiet) {
        printf("%s: %" PRIu64 " rows, %" PRIu64 " values in %zu partition%s (%s%s%s); %" PRIu64
               " bytes (CSV %" PRIu64 " bytes, ratio %.2f)\n",
               dir, rows, points, nparts, nparts == 1 ? "" : "s", first, nparts > 1 ? " .. " : "", last, bytes,
               m->csv_bytes, m->csv_bytes ? (double)bytes / (double)m->csv_bytes : 0.0);
        if (m->skipped) printf("skipped %" PRIu64 " bad rows\n", m->skipped);
    }
    return rc;
}

static void usage(FILE *f)
{
    fputs("usage: tsf import CSV... -o FILE [options]      (CSV '-' = stdin)\n"
          "       tsf import CSV... --partition day|hour|rows=N -o DIR [options]\n"
          "  layouts: wide (a time column + value columns) or long (device,measurement,time,value)\n"
          "  --device PATH            tree model: the device of a wide CSV (default root.<file name>)\n"
          "  --table NAME --tags a,b  table model: TAG columns a,b; the other columns are FIELDs\n"
          "  --null-values A,B,...    unquoted cells with this text are null like empty ones (default\n"
          "                           NA,N/A,null,NULL,None; \"\" = only empty cells; NaN stays a number)\n"
          "  --delimiter C|tab        field separator (default: detected from the header: , ; tab |)\n"
          "  --time-column NAME|none  the time column (default: time/timestamp/ts/datetime/date_time, else\n"
          "                           the first column whose values are times; none = row number)\n"
          "  --input-unit s|ms|us|ns|iso|raw  unit of the CSV's times (default: detected)\n"
          "  --time-unit s|ms|us|ns   the file's time unit (default ms)\n"
          "  --tz +HH:MM|UTC          zone of ISO times without one (default UTC)\n"
          "  --schema col=TYPE,...    column types (BOOLEAN INT32 INT64 FLOAT DOUBLE TEXT STRING DATE\n"
          "                           TIMESTAMP BLOB); others inferred from the first --infer-rows rows\n"
          "  --infer-rows N           rows used for type inference (default 10000)\n"
          "  --encoding ENC|col=ENC   default and per-column encoding (AUTO, the default: the smallest\n"
          "                           lossless per chunk; PLAIN, RLE, TS_2DIFF, GORILLA, CHIMP, SPRINTZ,\n"
          "                           RLBE, ZIGZAG, DICTIONARY, ...)\n"
          "  --compression C|col=C    UNCOMPRESSED, SNAPPY, GZIP, LZ4 (default), ZSTD, LZMA2\n"
          "  --page-points N          points per page (default 10000)\n"
          "  --sort                   sort rows by time (holds the data in memory); default: out-of-order\n"
          "                           rows are errors naming the line\n"
          "  --duplicates keep-last|keep-first|error  with --sort, rows of one device with equal times: keep\n"
          "                           the last (default) or first, counted in the summary, or fail\n"
          "  --skip-bad               skip (and count) bad rows instead of stopping\n"
          "  --page-index             also write the page-time index FILE.tsfidx (see tsf index)\n"
          "  --unescape               read tsf cat's escapes (\\xHH bytes, \\\\ backslashes) back to bytes\n"
          "  --flush-interval MS      write the rows read so far as complete chunk groups at least every\n"
          "                           MS milliseconds (default 1000; 0 = at the end): a killed import\n"
          "                           loses at most the last interval (tsf recover FILE.<pid>.tmp)\n"
          "  --partition day|hour|rows=N  -o names a directory: one TsFile per UTC day or hour of the rows'\n"
          "                           times (part-YYYYMMDD.tsfile, part-YYYYMMDDTHH.tsfile), or per N rows in\n"
          "                           time order (part-000001.tsfile, ...; equal times stay together); read\n"
          "                           them back as a dataset (tsf cat DIR, tsf stats DIR)\n"
          "  -f, --force              replace FILE when it exists (default: refuse); with --partition, use a\n"
          "                           non-empty DIR, replacing its part-*.tsfile files\n"
          "  -q, --quiet              no summary, no progress bar\n"
          "exit codes: 0 ok, 1 usage, 2 bad input (nothing written), 3 I/O error\n",
          f);
}

int tsf_cmd_import(int argc, char **argv)
{
    imp_opts o = {0};
    imp m = {0};
    m.o = &o;
    o.per_second = 1000;
    imp_parse_nulls(&o, CSV_DEFAULT_NULLS);
    o.infer_rows = 10000;
    o.flush_ms = 1000;
    o.progress = isatty(2);
    o.files = calloc((size_t)argc + 1, sizeof *o.files);
    int rc = CLI_USAGE;
    if (!o.files) return CLI_IO;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            usage(stdout);
            rc = CLI_OK;
            goto out;
        } else if (cli_value(&a, "-o|--output")) {
            o.out = a.val;
        } else if (cli_value(&a, "--table")) {
            o.table = a.val;
        } else if (cli_value(&a, "--tags")) {
            o.tags = a.val;
        } else if (cli_value(&a, "--device")) {
            o.device = a.val;
        } else if (cli_value(&a, "--null-values")) {
            if (!a.bad && imp_parse_nulls(&o, a.val)) {
                cli_err("import", "--null-values: at most 16 texts in 255 bytes");
                goto out;
            }
        } else if (cli_value(&a, "--delimiter")) {
            if (a.bad) break;
            if (!strcmp(a.val, "tab") || !strcmp(a.val, "\\t"))
                o.delim = '\t';
            else if (strlen(a.val) == 1 && a.val[0] != '"' && a.val[0] != '\n' && a.val[0] != '\r')
                o.delim = a.val[0];
            else {
                cli_err("import", "--delimiter: one character or 'tab', not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--time-column")) {
            o.time_col = a.val;
        } else if (cli_value(&a, "--input-unit")) {
            int64_t ps;
            if (a.bad) break;
            if (strcmp(a.val, "iso") && strcmp(a.val, "raw") && cli_parse_time_unit(a.val, &ps)) {
                cli_err("import", "--input-unit: s, ms, us, ns, iso or raw, not '%s'", a.val);
                goto out;
            }
            o.input_unit = a.val;
        } else if (cli_value(&a, "--time-unit")) {
            if (!a.bad && cli_parse_time_unit(a.val, &o.per_second)) {
                cli_err("import", "--time-unit: s, ms, us or ns, not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--tz")) {
            if (!a.bad && csv_tz_parse(a.val, &o.tz)) {
                cli_err("import", "--tz: a fixed offset such as +08:00, -0530 or UTC, not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--schema")) {
            if (!a.bad && csv_kv_add(&o.schema, a.val)) goto out;
        } else if (cli_value(&a, "--encoding")) {
            if (!a.bad && csv_kv_add(&o.enc, a.val)) goto out;
        } else if (cli_value(&a, "--compression")) {
            if (!a.bad && csv_kv_add(&o.comp, a.val)) goto out;
        } else if (cli_value(&a, "--infer-rows")) {
            if (!a.bad && (cli_parse_u64(a.val, &o.infer_rows) || !o.infer_rows || o.infer_rows > 100000000)) {
                cli_err("import", "--infer-rows: a row count from 1 to 100000000, not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--page-points")) {
            if (!a.bad && (cli_parse_u64(a.val, &o.page_points) || !o.page_points || o.page_points > 100000000)) {
                cli_err("import", "--page-points: a point count, not '%s'", a.val);
                goto out;
            }
        } else if (cli_is(&a, "--sort")) {
            o.sort = 1;
        } else if (cli_is(&a, "-f|--force")) {
            o.force = 1;
        } else if (cli_value(&a, "--partition")) {
            if (a.bad) goto out;
            if (!strcmp(a.val, "day")) o.partition = IMP_PART_DAY;
            else if (!strcmp(a.val, "hour")) o.partition = IMP_PART_HOUR;
            else if (!strncmp(a.val, "rows=", 5) && !cli_parse_u64(a.val + 5, &o.part_rows) && o.part_rows > 0)
                o.partition = IMP_PART_ROWS;
            else {
                cli_err("import", "--partition: day, hour or rows=N (N > 0), not '%s'", a.val);
                goto out;
            }
        } else if (cli_value(&a, "--duplicates")) {
            if (a.bad) break;
            if (!strcmp(a.val, "keep-last"))
                o.dup_policy = IMP_DUP_LAST;
            else if (!strcmp(a.val, "keep-first"))
                o.dup_policy = IMP_DUP_FIRST;
            else if (!strcmp(a.val, "error"))
                o.dup_policy = IMP_DUP_ERROR;
            else {
                cli_err("import", "--duplicates: keep-last, keep-first or error, not '%s'", a.val);
                goto out;
            }
        } else if (cli_is(&a, "--skip-bad")) {
            o.skip_bad = 1;
        } else if (cli_is(&a, "--page-index")) {
            o.page_index = 1;
        } else if (cli_is(&a, "--unescape")) {
            o.unescape = 1;
        } else if (cli_value(&a, "--flush-interval")) {
            if (!a.bad && (cli_parse_u64(a.val, &o.flush_ms) || o.flush_ms > 86400000)) {
                cli_err("import", "--flush-interval: milliseconds from 0 to 86400000, not '%s'", a.val);
                goto out;
            }
        } else if (cli_is(&a, "-q|--quiet")) {
            o.quiet = 1;
            o.progress = 0;
        } else if (cli_positional(&a)) {
            o.files[o.nfiles++] = a.arg;
        } else {
            cli_unknown(&a);
            goto out;
        }
    }
    if (a.bad) goto out;
    if (!o.nfiles || !o.out) {
        cli_err("import", "give CSV files and -o FILE (see tsf import --help)");
        goto out;
    }
    if (o.tags && !o.table) {
        cli_err("import", "--tags needs --table");
        goto out;
    }
    if (o.table && o.device) {
        cli_err("import", "--table (table model) and --device (tree model) exclude each other");
        goto out;
    }
    /* check encodings/compressions/types early (usage errors before reading) */
    if (csv_codec_lists_valid("import", &o.enc, &o.comp)) goto out;
    for (size_t i = 0; i < o.schema.n; i++) {
        tsf_type t;
        if (!o.schema.e[i].key || tsf_type_parse(o.schema.e[i].val, &t) || t == TSF_VECTOR) {
            cli_err("import", "--schema: give col=TYPE with a TsFile type, not '%s'", o.schema.e[i].val);
            goto out;
        }
    }
    char tmp_out[4096];
    const char *dir = NULL;
    if (o.partition) { /* import into DIR/.import.partial, then split it into DIR's partitions */
        dir = o.out;
        if ((rc = prepare_dir(dir, o.force))) goto out;
        if ((size_t)snprintf(tmp_out, sizeof tmp_out, "%s/.import.partial", dir) >= sizeof tmp_out) {
            cli_err("import", "%s: the directory name is too long", dir);
            rc = CLI_USAGE;
            goto out;
        }
        o.out = tmp_out;
        unlink(tmp_out);
    } else if ((rc = cli_out_refuse_existing("import", o.out, o.force)))
        goto out;
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    if (o.page_points) wo.page_max_points = (uint32_t)o.page_points;
    wo.page_index = o.page_index;
    wo.flush_interval_ms = (uint32_t)o.flush_ms;
    if ((rc = cli_writer_open("import", o.out, &wo, &m.w))) goto out;
    m.flushed_at = now_ms();
    rc = 0;
    for (size_t i = 0; i < o.nfiles && !rc; i++) rc = import_file(&m, o.files[i]);
    for (size_t i = 0; i < m.nsinks && !rc; i++) {
        sink *s = m.sinks[i];
        if (!s->registered) continue;
        rc = o.sort ? imp_sink_sort_write(&m, s, s->ntags) : imp_sink_flush(&m, s);
    }
    if (!rc && m.rows == 0) rc = imp_fail(&m, CLI_DAMAGED, "no data rows in the input; nothing written");
    for (size_t i = 0; i < m.nsinks; i++) { /* tablets belong to the writer: free them first */
        tsf_tablet_free(m.sinks[i]->tab);
        m.sinks[i]->tab = NULL;
    }
    if (rc) {
        cli_writer_discard(m.w);
        goto out;
    }
    if ((rc = cli_writer_close("import", m.w, o.out))) goto out;
    if (dir) {
        rc = write_partitions(&m, o.out, dir, &wo);
        unlink(o.out);
        goto out;
    }
    if (!o.quiet) {
        struct stat sb;
        uint64_t size = stat(o.out, &sb) ? 0 : (uint64_t)sb.st_size;
        size_t nseries = 0; /* as tsf info counts them: every device's series */
        tsf_reader *rd = NULL;
        if (tsf_reader_open(&rd, o.out, NULL, NULL) == TSF_OK) {
            for (size_t d = 0, nd = tsf_reader_device_count(rd); d < nd; d++) {
                tsf_device_info di;
                if (tsf_reader_device(rd, d, &di, NULL) == TSF_OK) nseries += di.nseries;
            }
            tsf_reader_close(rd);
        }
        printf("%s: %" PRIu64 " rows, %zu series, %" PRIu64 " values; %" PRIu64 " bytes (CSV %" PRIu64
               " bytes, ratio %.2f)\n",
               o.out, m.rows, nseries, m.values, size, m.csv_bytes, m.csv_bytes ? (double)size / (double)m.csv_bytes : 0.0);
        if (m.skipped) printf("skipped %" PRIu64 " bad rows\n", m.skipped);
        if (m.dup_rows)
            printf("dropped %" PRIu64 " rows whose device and time another row has (e.g. time %" PRId64 "), kept the %s"
                   " (--duplicates)\n",
                   m.dup_rows, m.dup_time, o.dup_policy == IMP_DUP_FIRST ? "first" : "last");
    }
out:
    for (size_t i = 0; i < m.nsinks; i++) imp_sink_free(m.sinks[i]);
    free(m.sinks);
    imp_hmap_free(&m.order);
    imp_hmap_free(&m.series);
    csv_kv_free(&o.schema);
    csv_kv_free(&o.enc);
    csv_kv_free(&o.comp);
    free(o.files);
    return rc;
}
