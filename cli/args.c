/*
 * args.c - option iteration, exit codes, error printing and value parsing shared by the `tsf`
 * subcommands (exit codes 0/1/2/3/4; --time-unit governs --from/--to/--window).
 */
#include "args.h"
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_args_init(cli_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = 0;
    a->cmd = argc > 0 ? argv[0] : "?";
}

int cli_next(cli_args *a)
{
    if (a->bad) return 0;
    a->i++;
    if (a->i >= a->argc) return 0;
    a->arg = a->argv[a->i];
    a->val = NULL;
    if (!a->only_pos && !strcmp(a->arg, "--")) {
        a->only_pos = 1;
        return cli_next(a);
    }
    return 1;
}

/* Length of the option name in arg (up to '=' for long options). */
static size_t opt_len(const char *arg)
{
    if (arg[0] == '-' && arg[1] == '-') {
        const char *eq = strchr(arg, '=');
        return eq ? (size_t)(eq - arg) : strlen(arg);
    }
    return strlen(arg);
}

/* Whether arg's name (first n bytes) is one of the '|'-separated names. */
static int name_in(const char *arg, size_t n, const char *names)
{
    for (const char *p = names; *p;) {
        const char *e = strchr(p, '|');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(arg, p, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int cli_is(const cli_args *a, const char *names)
{
    if (a->only_pos || a->arg[0] != '-') return 0;
    return name_in(a->arg, strlen(a->arg), names);
}

int cli_value(cli_args *a, const char *names)
{
    if (a->only_pos || a->arg[0] != '-' || !a->arg[1]) return 0;
    size_t n = opt_len(a->arg);
    if (!name_in(a->arg, n, names)) return 0;
    if (a->arg[n] == '=') {
        a->val = a->arg + n + 1;
        return 1;
    }
    if (a->i + 1 >= a->argc) {
        cli_err(a->cmd, "option %s needs a value (see tsf %s --help)", a->arg, a->cmd);
        a->bad = 1;
        return 1;
    }
    a->val = a->argv[++a->i];
    return 1;
}

int cli_positional(const cli_args *a)
{
    return a->only_pos || a->arg[0] != '-' || !a->arg[1];
}

int cli_unknown(cli_args *a)
{
    cli_err(a->cmd, "unknown option %s (see tsf %s --help)", a->arg, a->cmd);
    a->bad = 1;
    return CLI_USAGE;
}

int cli_one_file(cli_args *a, const char **path)
{
    if (!*path) {
        *path = a->arg;
        return CLI_OK;
    }
    cli_err(a->cmd, "one FILE expected, got also %s", a->arg);
    return CLI_USAGE;
}

int cli_file_given(const cli_args *a, const char *path)
{
    if (a->bad) return CLI_USAGE;
    if (path) return CLI_OK;
    cli_err(a->cmd, "FILE missing (see tsf %s --help)", a->cmd);
    return CLI_USAGE;
}

void cli_err(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tsf %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_err_file(const char *cmd, const char *path, const char *msg)
{
    if (strstr(msg, path))
        cli_err(cmd, "%s", msg);
    else
        cli_err(cmd, "%s: %s", path, msg);
}

int cli_exit_code(tsf_status st)
{
    switch (st) {
    case TSF_OK:
        return CLI_OK;
    case TSF_ECORRUPT:
    case TSF_ENOTSUP:
        return CLI_DAMAGED;
    case TSF_EINVAL:
        return CLI_USAGE;
    default:
        return CLI_IO;
    }
}

int cli_open_reader(const char *cmd, const char *path, tsf_reader **out)
{
    return cli_open_reader_checked(cmd, path, 1, out);
}

int cli_open_reader_checked(const char *cmd, const char *path, int checked, tsf_reader **out)
{
    tsf_error e = {0};
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_err(cmd, "%s: cannot open: %s", path, strerror(errno));
        return CLI_IO;
    }
    fclose(f);
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.checked = checked;
    tsf_status st = tsf_reader_open(out, path, &ro, &e);
    if (st == TSF_OK) st = tsf_reader_load_index(*out, &e);
    if (st != TSF_OK) {
        cli_err_file(cmd, path, e.message[0] ? e.message : tsf_status_name(st));
        tsf_reader_close(*out);
        *out = NULL;
        return st == TSF_EINVAL ? CLI_DAMAGED : cli_exit_code(st);
    }
    return CLI_OK;
}

int cli_is_dataset(const char *const *paths, size_t n)
{
    struct stat sb;
    if (n != 1) return n > 1;
    if (!stat(paths[0], &sb)) return S_ISDIR(sb.st_mode);
    return strpbrk(paths[0], "*?[") != NULL;
}

int cli_open_dataset(const char *cmd, const char *const *paths, size_t n, const char *cache, tsf_dataset **out)
{
    tsf_error e = {0};
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.cache_path = cache;
    tsf_status st = tsf_dataset_open(out, paths, n, &o, &e);
    if (!st) {
        tsf_dataset_open_stats os;
        memset(&os, 0, sizeof os);
        os.struct_size = sizeof os;
        if (cache && !tsf_dataset_get_open_stats(*out, &os, NULL)) {
            if (os.cache_load.code) cli_err(cmd, "cache %s ignored: %s", cache, os.cache_load.message);
            if (os.cache_save.code) cli_err(cmd, "cache %s not written: %s", cache, os.cache_save.message);
        }
        return CLI_OK;
    }
    cli_err_file(cmd, paths[0], e.message[0] ? e.message : tsf_status_name(st));
    return cli_exit_code(st);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_i64(const char *s, int64_t *out)
{
    if (!s ||
        !(isdigit((unsigned char)s[0]) || ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_time_unit(const char *s, int64_t *per_second)
{
    static const struct {
        const char *n;
        int64_t v;
    } U[] = {{"s", 1}, {"ms", 1000}, {"us", 1000000}, {"ns", 1000000000}};
    for (size_t i = 0; i < 4; i++)
        if (s && !strcmp(s, U[i].n)) {
            *per_second = U[i].v;
            return 0;
        }
    return -1;
}

int64_t cli_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void cli_civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* Reads exactly n digits at *p. */
static int digits(const char **p, int n, int64_t *out)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

static int mul_add(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    int64_t t;
    if (__builtin_mul_overflow(a, b, &t) || __builtin_add_overflow(t, c, &t)) return -1;
    *out = t;
    return 0;
}

int cli_parse_time(const char *s, int64_t per_second, int64_t *out)
{
    if (!s || !*s) return -1;
    if (cli_parse_i64(s, out) == 0) return 0;
    const char *p = s;
    int64_t y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, frac_scale = 1;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d)) return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31) return -1;
    if (*p == 'T' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi)) return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec)) return -1;
            if (*p == '.' || *p == ',') {
                p++;
                int nd = 0;
                while (isdigit((unsigned char)*p)) {
                    if (nd < 9) {
                        frac = frac * 10 + (*p - '0');
                        frac_scale *= 10;
                    }
                    nd++;
                    p++;
                }
                if (!nd) return -1;
            }
        }
        if (h > 23 || mi > 59 || sec > 60) return -1;
    }
    int64_t off = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (digits(&p, 2, &oh)) return -1;
        if (*p == ':') p++;
        if (*p && digits(&p, 2, &om)) return -1;
        off = sign * (oh * 3600 + om * 60);
    }
    if (*p) return -1;
    int64_t secs = cli_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    /* fraction in the unit, truncated */
    int64_t sub =
        frac_scale >= per_second ? frac / (frac_scale / per_second) : frac * (per_second / frac_scale);
    return mul_add(secs, per_second, sub, out);
}

int cli_parse_duration(const char *s, int64_t per_second, int64_t *out)
{
    if (!s || !isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno || n == 0 || n > INT64_MAX) return -1;
    if (!*end) {
        *out = (int64_t)n;
        return 0;
    }
    /* unit length in nanoseconds */
    static const struct {
        const char *n;
        int64_t ns;
    } U[] = {{"ns", 1},
             {"us", 1000},
             {"ms", 1000000},
             {"s", 1000000000},
             {"m", 60000000000LL},
             {"h", 3600000000000LL},
             {"d", 86400000000000LL}};
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        if (strcmp(end, U[i].n)) continue;
        int64_t unit_ns = 1000000000 / per_second; /* length of one file unit in ns */
        int64_t v;
        if (U[i].ns >= unit_ns) {
            if (mul_add((int64_t)n, U[i].ns / unit_ns, 0, &v)) return -1;
        } else {
            int64_t per = unit_ns / U[i].ns; /* input units per file unit */
            if ((int64_t)n % per) return -1;
            v = (int64_t)n / per;
        }
        *out = v;
        return 0;
    }
    return -1;
}

void cli_format_time(char *buf, size_t cap, int64_t t, int64_t per_second)
{
    int64_t secs = t / per_second, sub = t % per_second;
    if (sub < 0) {
        sub += per_second;
        secs--;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t y, m, d;
    cli_civil_from_days(days, &y, &m, &d);
    int n =
        snprintf(buf, cap, "%04" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02" PRId64 ":%02" PRId64 ":%02" PRId64,
                 y, m, d, rem / 3600, rem / 60 % 60, rem % 60);
    if (n < 0 || (size_t)n >= cap) return;
    int w = per_second == 1000 ? 3 : per_second == 1000000 ? 6 : per_second == 1000000000 ? 9 : 0;
    if (w)
        snprintf(buf + n, cap - (size_t)n, ".%0*" PRId64 "Z", w, sub);
    else
        snprintf(buf + n, cap - (size_t)n, "Z");
}

void cli_json_bytes(FILE *f, const uint8_t *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t k = c < 0x80 ? 1 : csv_utf8_len(p + i, n - i);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else if (!k) /* not UTF-8: the byte as a lone low surrogate U+DC80-U+DCFF (PEP 383) */
            fprintf(f, "\\udc%02x", c);
        else if (c == 0xC2 && p[i + 1] <= 0x9F) /* C1 control */
            fprintf(f, "\\u%04x", p[i + 1]);
        else
            fwrite(p + i, 1, k, f);
        i += k ? k : 1;
    }
    fputc('"', f);
}

void cli_json_str(FILE *f, const char *s)
{
    if (!s)
        fputs("null", f);
    else
        cli_json_bytes(f, (const uint8_t *)s, strlen(s));
}

void cli_json_num(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputs("null", f);
        return;
    }
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    fputs(buf, f);
}

void cli_table_init(cli_table *t, size_t ncols, unsigned right)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->right = right;
}

void cli_table_add(cli_table *t, const char *fmt, ...)
{
    if (t->oom) return;
    if (t->ncells == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 64;
        char **p = realloc(t->cells, c * sizeof *p);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->cells = p;
        t->cap = c;
    }
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    if (!s) {
        t->oom = 1;
        return;
    }
    t->cells[t->ncells++] = s;
}

/* Width of a cell in characters (UTF-8 code points; each counts as one column). */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void pad(FILE *f, size_t n)
{
    while (n--) fputc(' ', f);
}

int cli_table_print(const cli_table *t, FILE *f, const char *indent)
{
    if (t->oom) return -1;
    size_t w[32] = {0}, nc = t->ncols < 32 ? t->ncols : 32;
    for (size_t i = 0; i < t->ncells; i++) {
        size_t l = text_width(t->cells[i]);
        if (i % t->ncols < nc && l > w[i % t->ncols]) w[i % t->ncols] = l;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols, l = text_width(t->cells[i]);
        if (c == 0) fputs(indent, f);
        int last = c + 1 == t->ncols || i + 1 == t->ncells;
        size_t width = c < nc ? w[c] : 0, fill = width > l ? width - l : 0;
        if (c < nc && (t->right >> c) & 1) pad(f, fill);
        fputs(t->cells[i], f);
        if (!last && !(c < nc && (t->right >> c) & 1)) pad(f, fill);
        fputs(last ? "\n" : "  ", f);
    }
    return 0;
}

void cli_table_free(cli_table *t)
{
    for (size_t i = 0; i < t->ncells; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void cli_fmt_real(char *buf, size_t cap, double x, int is_float)
{
    if (isnan(x)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, cap, x > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (x == floor(x) && fabs(x) < 1e17) {
        snprintf(buf, cap, (x == 0 && signbit(x)) ? "-0" : "%.0f", x);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (is_float ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
    }
}
