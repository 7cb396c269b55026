/*
 * csv.c - CSV for the `tsf` tool: a streaming RFC-4180 reader (quoted fields with doubled
 * quotes and embedded line breaks, CRLF, a UTF-8 BOM; memory bounded by the longest record), strict
 * value parsers, float printing that reads back to the same bits, and ISO-8601 time text. TsFile
 * stores no time unit; the CLI's unit (default ms) decides what the int64 times mean.
 */
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CSV_BUF (1 << 16)

int csv_open(csv_reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->delim = ',';
    if (!strcmp(path, "-"))
        r->f = stdin;
    else if (!(r->f = fopen(path, "rb")))
        return -1;
    struct stat sb;
    if (r->f != stdin && fstat(fileno(r->f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(r->f);
        r->f = NULL;
        errno = EISDIR; /* "Is a directory" in the caller's "cannot open" message */
        return -1;
    }
    r->in = malloc(CSV_BUF);
    r->rec_cap = 256;
    r->rec = malloc(r->rec_cap);
    r->fcap = 16;
    r->off = malloc(r->fcap * sizeof *r->off);
    r->len = malloc(r->fcap * sizeof *r->len);
    r->quoted = malloc(r->fcap);
    r->next_line = 1;
    if (!r->in || !r->rec || !r->off || !r->len || !r->quoted) {
        csv_close(r);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void csv_close(csv_reader *r)
{
    if (r->f && r->f != stdin) fclose(r->f);
    free(r->in);
    free(r->rec);
    free(r->off);
    free(r->len);
    free(r->quoted);
    memset(r, 0, sizeof *r);
}

char csv_detect_delim(csv_reader *r)
{
    if (r->in_pos == r->in_len && !r->eof) {
        r->in_len = fread(r->in, 1, CSV_BUF, r->f);
        r->in_pos = 0;
    }
    static const char cand[] = {',', ';', '\t', '|'};
    size_t count[sizeof cand] = {0};
    int quoted = 0;
    for (size_t i = r->in_pos; i < r->in_len && (quoted || (r->in[i] != '\n' && r->in[i] != '\r')); i++) {
        if (r->in[i] == '"') quoted = !quoted;
        if (quoted) continue;
        for (size_t k = 0; k < sizeof cand; k++) count[k] += r->in[i] == cand[k];
    }
    size_t best = 0;
    for (size_t k = 1; k < sizeof cand; k++)
        if (count[k] > count[best]) best = k;
    return cand[best];
}

/* Next input byte, or -1 at end (-2 on a read error). */
static int getb(csv_reader *r)
{
    if (r->in_pos == r->in_len) {
        if (r->eof) return -1;
        r->in_len = fread(r->in, 1, CSV_BUF, r->f);
        r->in_pos = 0;
        if (r->in_len == 0) {
            r->eof = 1;
            return ferror(r->f) ? -2 : -1;
        }
    }
    r->bytes++;
    return (unsigned char)r->in[r->in_pos++];
}

static int peekb(csv_reader *r)
{
    if (r->in_pos == r->in_len) {
        int c = getb(r);
        if (c < 0) return c;
        r->in_pos--;
        r->bytes--;
    }
    return (unsigned char)r->in[r->in_pos];
}

static int put(csv_reader *r, size_t *n, char c)
{
    if (*n + 1 >= r->rec_cap) {
        size_t nc = r->rec_cap * 2;
        char *p = realloc(r->rec, nc);
        if (!p) return -1;
        r->rec = p;
        r->rec_cap = nc;
    }
    r->rec[(*n)++] = c;
    return 0;
}

static int end_field(csv_reader *r, size_t *n, size_t start, int quoted)
{
    if (r->nfields == r->fcap) {
        size_t nc = r->fcap * 2;
        size_t *o = realloc(r->off, nc * sizeof *o);
        if (o) r->off = o;
        size_t *l = realloc(r->len, nc * sizeof *l);
        if (l) r->len = l;
        uint8_t *q = realloc(r->quoted, nc);
        if (q) r->quoted = q;
        if (!o || !l || !q) return -1;
        r->fcap = nc;
    }
    r->off[r->nfields] = start;
    r->len[r->nfields] = *n - start;
    r->quoted[r->nfields] = (uint8_t)quoted;
    r->nfields++;
    return put(r, n, '\0');
}

int csv_next(csv_reader *r, char *msg, size_t msgcap)
{
    size_t n = 0;
    r->nfields = 0;
    r->line = r->next_line;
    int c = getb(r);
    if (r->bytes == 1 && c == 0xEF && peekb(r) == 0xBB) { /* UTF-8 byte order mark */
        getb(r);
        if (getb(r) != 0xBF) {
            snprintf(msg, msgcap, "%s: line 1: invalid byte order mark", r->path);
            return -1;
        }
        c = getb(r);
    }
    if (c == -1) return 0;
    for (;;) {
        size_t start = n;
        int quoted = 0;
        if (c == '"') {
            quoted = 1;
            for (;;) {
                c = getb(r);
                if (c < 0) {
                    snprintf(msg, msgcap, "%s: line %" PRIu64 ": unterminated quoted field", r->path, r->line);
                    return -1;
                }
                if (c == '"') {
                    if (peekb(r) == '"') {
                        getb(r);
                    } else {
                        c = getb(r);
                        break;
                    }
                } else if (c == '\n') {
                    r->next_line++;
                }
                if (put(r, &n, (char)c)) goto oom;
            }
            /* text after the closing quote up to the delimiter is kept (lenient) */
            while (c >= 0 && c != r->delim && c != '\n' && c != '\r') {
                if (put(r, &n, (char)c)) goto oom;
                c = getb(r);
            }
        } else {
            while (c >= 0 && c != r->delim && c != '\n' && c != '\r') {
                if (put(r, &n, (char)c)) goto oom;
                c = getb(r);
            }
        }
        if (end_field(r, &n, start, quoted)) goto oom;
        if (c == r->delim) {
            c = getb(r);
            continue;
        }
        if (c == '\r' && peekb(r) == '\n') getb(r);
        if (c == -2) {
            snprintf(msg, msgcap, "%s: line %" PRIu64 ": read error", r->path, r->line);
            return -1;
        }
        r->next_line++;
        return 1;
    }
oom:
    snprintf(msg, msgcap, "%s: line %" PRIu64 ": out of memory (record too long)", r->path, r->line);
    return -1;
}

/* ---- values --------------------------------------------------------------------------------- */

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

static int rest_blank(const char *s)
{
    return *skip_blank(s) == '\0';
}

int csv_is_blank(const char *s)
{
    return rest_blank(s);
}

int csv_parse_i64(const char *s, int64_t *out)
{
    s = skip_blank(s);
    int neg = 0;
    if (*s == '+' || *s == '-') neg = *s++ == '-';
    if (!isdigit((unsigned char)*s)) return -1;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (!rest_blank(s)) return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* The number of the decimal text p..q (digits, one point, an exponent already checked) as significant
 * digits without leading and trailing zeros (at most cap of them; *n = their count, which may exceed cap)
 * and the decimal exponent of the first one. */
static void sig_digits(const char *p, char *dg, size_t cap, size_t *n, long *exp10)
{
    size_t k = 0, last = 0; /* last: count up to the last non-zero digit */
    long e = 0, pos = 0;     /* pos: exponent of the next integer-part digit, counted from the point */
    int lead = 1;
    const char *q = p;
    for (const char *t = p; isdigit((unsigned char)*t); t++) pos++;
    for (; *q && *q != 'e' && *q != 'E' && *q != ' ' && *q != '\t'; q++) {
        if (*q == '.') continue;
        pos--;
        if (lead && *q == '0') continue;
        if (lead) e = pos;
        lead = 0;
        if (k < cap) dg[k] = *q;
        k++;
        if (*q != '0') last = k;
    }
    if (*q == 'e' || *q == 'E') {
        long x = strtol(q + 1, NULL, 10); /* saturates at LONG_MAX/MIN: far beyond any double */
        e = x > 100000 ? 100000 : x < -100000 ? -100000 : x + e;
    }
    *n = last;
    *exp10 = e;
}

int csv_parse_real(const char *s, int is_float, double *out)
{
    s = skip_blank(s);
    const char *p = *s == '+' || *s == '-' ? s + 1 : s;
    if (!strcasecmp(p, "nan")) {
        *out = *s == '-' ? -NAN : NAN;
        return 0;
    }
    if (!strcasecmp(p, "infinity") || !strcasecmp(p, "inf")) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    /* decimal only: digits, one point, an exponent (no hex floats, no "nan(...)") */
    const char *q = p;
    int digits = 0;
    while (isdigit((unsigned char)*q)) q++, digits++;
    if (*q == '.') {
        q++;
        while (isdigit((unsigned char)*q)) q++, digits++;
    }
    if (!digits) return -1;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!isdigit((unsigned char)*q)) return -1;
        while (isdigit((unsigned char)*q)) q++;
    }
    if (!rest_blank(q)) return -1;
    double x = is_float ? (double)strtof(s, NULL) : strtod(s, NULL);
    char dg[800];
    size_t n;
    long e10;
    sig_digits(p, dg, sizeof dg, &n, &e10);
    *out = x;
    if (n == 0) return 0; /* zero, with its sign */
    if (isinf(x)) return -2;
    if (x == 0) return -2; /* a non-zero number below the smallest subnormal */
    /* Up to 6 (FLOAT) / 15 (DOUBLE) significant digits always survive the round trip in the normal range. */
    if (n <= (is_float ? 6u : 15u) && fabs(x) >= (is_float ? (double)FLT_MIN : DBL_MIN)) return 0;
    /* Otherwise the value must print back to the same digits at the text's precision: %.17g output of
     * any double is accepted, 9007199254740993 (2^53 + 1) is not. A binary value has at most 767
     * significant decimal digits, so longer texts cannot match. */
    if (n > sizeof dg - 40) return -3;
    char buf[900];
    snprintf(buf, sizeof buf, "%.*e", (int)n - 1, fabs(x));
    const char *b = buf;
    for (size_t k = 0; k < n; k++, b++) {
        if (*b == '.') b++;
        if (*b != dg[k]) return -3;
    }
    if (*b == '.') b++;
    if (*b != 'e' || strtol(b + 1, NULL, 10) != e10) return -3;
    return 0;
}

int csv_parse_bool(const char *s, int *out)
{
    s = skip_blank(s);
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n == 4 && !strncasecmp(s, "true", 4)) {
        *out = 1;
        return 0;
    }
    if (n == 5 && !strncasecmp(s, "false", 5)) {
        *out = 0;
        return 0;
    }
    return -1;
}

static int days_in_month(int64_t y, int m)
{
    static const int D[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return D[m - 1];
}

/* Reads exactly n digits. */
static int digits(const char **s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i])) return -1;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

static int parse_ymd(const char **s, int *y, int *m, int *d)
{
    if (digits(s, 4, y) || **s != '-') return -1;
    (*s)++;
    if (digits(s, 2, m) || **s != '-') return -1;
    (*s)++;
    if (digits(s, 2, d)) return -1;
    if (*m < 1 || *m > 12 || *d < 1 || *d > days_in_month(*y, *m)) return -1;
    return 0;
}

int csv_parse_date(const char *s, int32_t *out)
{
    int y, m, d;
    s = skip_blank(s);
    if (parse_ymd(&s, &y, &m, &d) || !rest_blank(s)) return -1;
    *out = y * 10000 + m * 100 + d;
    return 0;
}

void csv_format_real(char *buf, size_t cap, double x, int is_float)
{
    if (isnan(x)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, cap, "%s", x > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int p = is_float ? 6 : 15; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (is_float ? (strtof(buf, NULL) == (float)x) : (strtod(buf, NULL) == x)) break;
    }
    if (x == 0 && signbit(x)) snprintf(buf, cap, "-0.0");
}

size_t csv_utf8_len(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    if (c < 0x80) return 1;
    size_t k;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2, cp = c & 0x1Fu, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
        k = 3, cp = c & 0x0Fu, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4, cp = c & 0x07u, min = 0x10000;
    else
        return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

size_t csv_unsafe_len(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    if (c < 0x20) return c == '\t' || c == '\n' || c == '\r' ? 0 : 1;
    if (c == 0x7F) return 1;
    if (c < 0x80) return 0;
    size_t k = csv_utf8_len(p, n);
    if (!k) return 1;                           /* a byte of no valid UTF-8 sequence */
    return c == 0xC2 && p[1] <= 0x9F ? 2 : 0; /* U+0080-U+009F: C1 controls (CSI, OSC, ...) */
}

/* Bytes [i, i + esc) are written as \xHH; a backslash is doubled where the next bytes would otherwise
 * read as an escape. */
static int backslash_doubled(const uint8_t *p, size_t n, size_t i)
{
    if (i + 1 >= n) return 0;
    if (p[i + 1] == '\\' || csv_unsafe_len(p + i + 1, n - i - 1)) return 1;
    return p[i + 1] == 'x' && i + 3 < n && isxdigit(p[i + 2]) && isxdigit(p[i + 3]);
}

int csv_is_default_null(const char *s, size_t len)
{
    if (len > CSV_DEFAULT_NULLS_MAXLEN) return 0; /* most fields: no scan of the list */
    for (const char *t = CSV_DEFAULT_NULLS;;) {
        const char *e = strchr(t, ',');
        size_t n = e ? (size_t)(e - t) : strlen(t);
        if (n == len && !memcmp(s, t, n)) return 1;
        if (!e) return 0;
        t = e + 1;
    }
}

void csv_put_field(FILE *f, const char *s, size_t len)
{
    static const char H[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)s;
    int q = len == 0 || s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t' ||
            csv_is_default_null(s, len);
    for (size_t i = 0; i < len && !q; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') q = 1;
    if (q) fputc('"', f);
    for (size_t i = 0; i < len;) {
        size_t k = csv_unsafe_len(p + i, len - i);
        for (size_t e = 0; e < k; e++, i++) {
            char x[4] = {'\\', 'x', H[p[i] >> 4], H[p[i] & 15]};
            fwrite(x, 1, 4, f);
        }
        if (k) continue;
        if (p[i] >= 0x80) { /* a well-formed UTF-8 sequence, whole */
            k = csv_utf8_len(p + i, len - i);
            fwrite(p + i, 1, k, f);
            i += k;
            continue;
        }
        if (p[i] == '"' && q) fputc('"', f);
        if (p[i] == '\\' && backslash_doubled(p, len, i)) fputc('\\', f);
        fputc(p[i++], f);
    }
    if (q) fputc('"', f);
}

size_t csv_unescape(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\\') {
            s[o++] = '\\';
            i += 2;
        } else if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && isxdigit((unsigned char)s[i + 2]) &&
                   isxdigit((unsigned char)s[i + 3])) {
            char h[3] = {s[i + 2], s[i + 3], 0};
            s[o++] = (char)strtol(h, NULL, 16);
            i += 4;
        } else {
            s[o++] = s[i++];
        }
    }
    if (o < len) s[o] = '\0';
    return o;
}

/* ---- per-column option lists ------------------------------------------------------------------ */

int csv_kv_add(csv_kvlist *l, const char *spec)
{
    char *dup = strdup(spec), *save = NULL;
    if (!dup) return -1;
    for (char *p = strtok_r(dup, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        csv_kv *ne = realloc(l->e, (l->n + 1) * sizeof *ne);
        if (!ne) {
            free(dup);
            return -1;
        }
        l->e = ne;
        char *eq = strrchr(p, '=');
        if (!eq) eq = strrchr(p, ':');
        if (eq) *eq = 0;
        l->e[l->n].key = eq ? strdup(p) : NULL;
        l->e[l->n].val = strdup(eq ? eq + 1 : p);
        l->n++;
    }
    free(dup);
    return 0;
}

void csv_kv_free(csv_kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].key);
        free(l->e[i].val);
    }
    free(l->e);
    l->e = NULL;
    l->n = 0;
}

const char *csv_kv_lookup(const csv_kvlist *l, const char *name, int *per_column)
{
    const char *def = NULL;
    if (per_column) *per_column = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->e[i].key) {
            def = l->e[i].val;
        } else if (name && l->e[i].val && !strcmp(l->e[i].key, name)) {
            if (per_column) *per_column = 1;
            return l->e[i].val;
        }
    }
    return def;
}

tsf_encoding csv_default_encoding(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN: return TSF_ENC_RLE;
    case TSF_INT32:
    case TSF_INT64:
    case TSF_DATE:
    case TSF_TIMESTAMP: return TSF_ENC_TS_2DIFF;
    case TSF_FLOAT:
    case TSF_DOUBLE: return TSF_ENC_GORILLA;
    default: return TSF_ENC_PLAIN;
    }
}

int csv_column_codec(const csv_kvlist *enc, const csv_kvlist *comp, const char *name, tsf_type type,
                     tsf_encoding *e, tsf_compression *c, char *msg, size_t msgcap)
{
    int per_col;
    const char *s = csv_kv_lookup(enc, name, &per_col);
    if (s) {
        tsf_encoding x;
        if (tsf_encoding_parse(s, &x)) {
            snprintf(msg, msgcap, "--encoding: unknown encoding '%s'", s);
            return -1;
        }
        if (x == TSF_ENCODING_AUTO || tsf_codec_can_encode(type, x)) {
            *e = x;
        } else if (per_col) {
            snprintf(msg, msgcap, "--encoding: %s cannot encode %s column '%s'", tsf_encoding_name(x),
                     tsf_type_name(type), name);
            return -1;
        }
    }
    s = csv_kv_lookup(comp, name, NULL);
    if (s && (tsf_compression_parse(s, c) || !tsf_compression_supported(*c))) {
        snprintf(msg, msgcap, "--compression: unknown or unsupported compression '%s'", s);
        return -1;
    }
    return 0;
}

int csv_codec_lists_valid(const char *cmd, const csv_kvlist *enc, const csv_kvlist *comp)
{
    for (size_t i = 0; i < enc->n; i++) {
        tsf_encoding x;
        if (tsf_encoding_parse(enc->e[i].val, &x)) {
            cli_err(cmd, "--encoding: unknown encoding '%s'", enc->e[i].val);
            return -1;
        }
    }
    for (size_t i = 0; i < comp->n; i++) {
        tsf_compression x;
        if (tsf_compression_parse(comp->e[i].val, &x) || !tsf_compression_supported(x)) {
            cli_err(cmd, "--compression: unknown or unsupported compression '%s'", comp->e[i].val);
            return -1;
        }
    }
    return 0;
}

/* ---- time ----------------------------------------------------------------------------------- */

int csv_time_convert(int64_t v, int64_t from_ps, int64_t to_ps, int64_t *out)
{
    if (from_ps == to_ps) {
        *out = v;
        return 0;
    }
    if (to_ps > from_ps) {
        int64_t k = to_ps / from_ps;
        if (v > INT64_MAX / k || v < INT64_MIN / k) return -1;
        *out = v * k;
        return 0;
    }
    int64_t k = from_ps / to_ps;
    if (v % k) return -2;
    *out = v / k;
    return 0;
}

int csv_tz_parse(const char *s, int32_t *offset_s)
{
    if (!strcasecmp(s, "UTC") || !strcasecmp(s, "Z") || !strcasecmp(s, "GMT")) {
        *offset_s = 0;
        return 0;
    }
    if (!strncasecmp(s, "UTC", 3)) s += 3;
    if (*s != '+' && *s != '-') return -1;
    int neg = *s++ == '-';
    int h = 0, m = 0, nd = 0;
    while (isdigit((unsigned char)*s) && nd < 2) h = h * 10 + (*s++ - '0'), nd++;
    if (!nd) return -1;
    if (*s == ':') s++;
    if (*s) {
        if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]) || s[2]) return -1;
        m = (s[0] - '0') * 10 + (s[1] - '0');
    }
    if (h > 18 || m > 59) return -1;
    *offset_s = (neg ? -1 : 1) * (h * 3600 + m * 60);
    return 0;
}

int csv_time_is_iso(const char *s)
{
    s = skip_blank(s);
    for (int i = 0; i < 4; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return s[4] == '-';
}

int csv_time_parse_iso(const char *s, int32_t tz_offset_s, int64_t per_second, int64_t *out)
{
    char buf[64];
    s = skip_blank(s);
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n < 10 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *q = buf;
    int y, m, d;
    if (parse_ymd(&q, &y, &m, &d)) return -1;
    if (buf[n - 1] == 'z') buf[n - 1] = 'Z';
    /* a fraction finer than the unit must be zeros (no silent truncation) */
    const char *dot = strpbrk(buf + 10, ".,");
    if (dot) {
        int keep = per_second == 1 ? 0 : per_second == 1000 ? 3 : per_second == 1000000 ? 6 : 9;
        const char *p = dot + 1;
        for (int i = 0; isdigit((unsigned char)p[i]); i++)
            if (i >= keep && p[i] != '0') return -3;
    }
    int64_t v;
    if (cli_parse_time(buf, per_second, &v)) return -1;
    if (!strpbrk(buf + 10, "Z+-") && tz_offset_s) { /* no zone in the text: --tz applies */
        int64_t off;
        if (__builtin_mul_overflow((int64_t)tz_offset_s, per_second, &off) || __builtin_sub_overflow(v, off, &v))
            return -2;
    }
    *out = v;
    return 0;
}
