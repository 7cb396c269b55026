/*
 * import_cells.c - what `tsf import` does with one CSV record: cells parsed into values of a column's type,
 * type inference over the first rows, the null texts, --unescape, and record copies (held header windows).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "import.h"

/* ---- parsing cells ------------------------------------------------------------------------------ */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parses field text into *v for `type`. Returns NULL or a reason. BLOB hex decodes in place. */
const char *imp_parse_cell(imp *m, tsf_type type, char *s, size_t len, int quoted, tsf_value *v)
{
    memset(v, 0, sizeof *v);
    if (!quoted && csv_is_blank(s)) {
        v->is_null = 1;
        return NULL;
    }
    if (!imp_is_bytes(type) && strlen(s) != len) return "cut by a NUL byte";
    int64_t i;
    double d;
    int r;
    switch (type) {
    case TSF_BOOLEAN:
        if (csv_parse_bool(s, &v->v.b)) return "not a BOOLEAN (true/false)";
        return NULL;
    case TSF_INT32:
        if (csv_parse_i64(s, &i)) return "not an INT32";
        if (i < INT32_MIN || i > INT32_MAX) return "out of the INT32 range";
        v->v.i32 = (int32_t)i;
        return NULL;
    case TSF_TIMESTAMP:
        if (csv_time_is_iso(s)) {
            if (csv_time_parse_iso(s, m->o->tz, m->o->per_second, &v->v.i64)) return "not a TIMESTAMP";
            return NULL;
        }
        /* fall through */
    case TSF_INT64:
        if (csv_parse_i64(s, &v->v.i64)) return "not an INT64";
        return NULL;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        r = csv_parse_real(s, type == TSF_FLOAT, &d);
        if (r == -1) return type == TSF_FLOAT ? "not a FLOAT" : "not a DOUBLE";
        if (r == -2) return type == TSF_FLOAT ? "out of the FLOAT range" : "out of the DOUBLE range";
        if (r == -3) return type == TSF_FLOAT ? "not exact as a FLOAT (more digits than it holds)"
                                              : "not exact as a DOUBLE (more digits than it holds)";
        if (type == TSF_FLOAT)
            v->v.f = (float)d;
        else
            v->v.d = d;
        return NULL;
    case TSF_DATE:
        if (csv_parse_date(s, &v->v.i32)) return "not a DATE (yyyy-MM-dd)";
        return NULL;
    case TSF_BLOB: {
        if (len < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || len % 2) return "not a BLOB (0x hex)";
        size_t n = (len - 2) / 2;
        for (size_t k = 0; k < n; k++) {
            int hi = hexval(s[2 + 2 * k]), lo = hexval(s[3 + 2 * k]);
            if (hi < 0 || lo < 0) return "not a BLOB (0x hex)";
            s[k] = (char)(hi << 4 | lo);
        }
        v->v.bytes.data = (const uint8_t *)s;
        v->v.bytes.len = n;
        return NULL;
    }
    default:
        v->v.bytes.data = (const uint8_t *)s;
        v->v.bytes.len = len;
        return NULL;
    }
}

/* Type inference of one value: clears the types that cannot hold it. A number that neither INT64 nor
 * DOUBLE holds exactly (99999999999999999999999, 1e999) makes the column STRING; the first such value
 * is remembered for a note. */
void imp_infer(inference *f, const char *s, size_t len, int quoted, uint64_t line)
{
    if (!quoted && csv_is_blank(s)) return;
    if (!f->seen) f->seen = f->b = f->in = f->num = f->lex = 1;
    f->values++;
    if (strlen(s) != len) { /* a NUL byte: only text holds it */
        f->b = f->in = f->num = f->lex = 0;
        if (!f->words++) {
            f->word_line = line;
            snprintf(f->word, sizeof f->word, "(text with a NUL byte)");
        }
        return;
    }
    int x;
    int64_t i;
    double d;
    if (f->b && csv_parse_bool(s, &x)) f->b = 0;
    if (f->in && csv_parse_i64(s, &i)) f->in = 0;
    int r = csv_parse_real(s, 0, &d);
    if (r) f->num = 0;
    if (r == -1) {
        f->lex = 0;
        if (!f->words++) {
            f->word_line = line;
            snprintf(f->word, sizeof f->word, "%.40s%s", s, strlen(s) > 40 ? "..." : "");
        }
    }
    if (r < -1 && !f->inexact_line) {
        f->inexact_line = line;
        snprintf(f->inexact, sizeof f->inexact, "%.40s%s", s, strlen(s) > 40 ? "..." : "");
    }
}

tsf_type imp_inferred(const inference *f)
{
    if (!f->seen) return TSF_DOUBLE;
    if (f->b) return TSF_BOOLEAN;
    if (f->in) return TSF_INT64;
    if (f->num) return TSF_DOUBLE;
    return TSF_STRING;
}

/* Says why a column of numbers became STRING (stderr, unless --quiet). */
void imp_inferred_note(const imp *m, const char *column, const inference *f)
{
    if (m->o->quiet || imp_inferred(f) != TSF_STRING) return;
    if (!f->lex && f->words && f->words * 20 <= f->values) { /* a few cells (at most 5%) kept it from a number */
        cli_err("import", "%s: column '%.60s' is STRING because %" PRIu64 " of its %" PRIu64 " values are not numbers "
                          "(the first: '%s', line %" PRIu64 "); --null-values lists texts that mean null, --schema "
                          "col=TYPE chooses a type",
                m->path, column, f->words, f->values, f->word, f->word_line);
        return;
    }
    if (!f->lex || !f->inexact_line) return;
    cli_err("import", "%s: column '%.60s' is STRING: '%s' (line %" PRIu64 ") is a number that neither INT64 nor "
                      "DOUBLE holds exactly (--schema col=TYPE chooses a type)",
            m->path, column, f->inexact, f->inexact_line);
}

/* Encoding and compression of a column from --encoding / --compression (AUTO and LZ4 otherwise). */
int imp_column_codec(imp *m, const char *name, tsf_type type, tsf_encoding *enc, tsf_compression *comp)
{
    char msg[256];
    *enc = TSF_ENCODING_AUTO;
    *comp = TSF_LZ4;
    if (csv_column_codec(&m->o->enc, &m->o->comp, name, type, enc, comp, msg, sizeof msg))
        return imp_fail(m, CLI_USAGE, "%s", msg);
    return 0;
}

int imp_given_type(imp *m, const char *name, tsf_type *t)
{
    const char *s = csv_kv_lookup(&m->o->schema, name, NULL);
    if (!s) return 0;
    if (tsf_type_parse(s, t) || *t == TSF_VECTOR) return -imp_fail(m, CLI_USAGE, "--schema: unknown type '%s'", s);
    return 1;
}

/* ---- records ---------------------------------------------------------------------------------- */

/* --unescape: reverses tsf cat's escapes (\xHH, a doubled backslash) in every field, in place. */
void imp_rec_unescape(csv_reader *r)
{
    for (size_t i = 0; i < r->nfields; i++) r->len[i] = csv_unescape(r->rec + r->off[i], r->len[i]);
}

/* --null-values: an unquoted cell that is one of the null texts becomes empty (a null, as a blank cell). */
void imp_rec_nulls(const imp_opts *o, csv_reader *r)
{
    for (size_t i = 0; i < r->nfields; i++) {
        if (r->quoted[i] || !r->len[i]) continue;
        char *s = r->rec + r->off[i];
        for (size_t k = 0; k < o->nnull; k++)
            if (r->len[i] == o->null_len[k] && !memcmp(s, o->null_tok[k], r->len[i])) {
                s[0] = '\0';
                r->len[i] = 0;
                break;
            }
    }
}

/* Splits a comma-separated --null-values list into o's tokens (empty tokens are dropped: blank cells are
   null anyway). Returns 0, or -1 when the list is too long. */
int imp_parse_nulls(imp_opts *o, const char *list)
{
    if (strlen(list) >= sizeof o->null_buf) return -1;
    strcpy(o->null_buf, list);
    o->nnull = 0;
    for (char *p = o->null_buf; *p;) {
        char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) {
            if (o->nnull == sizeof o->null_tok / sizeof o->null_tok[0]) return -1;
            o->null_tok[o->nnull] = p;
            o->null_len[o->nnull++] = n;
        }
        if (!e) break;
        *e = '\0';
        p = e + 1;
    }
    return 0;
}

void imp_rec_view(const csv_reader *r, rec *v)
{
    v->text = r->rec;
    v->off = r->off;
    v->len = r->len;
    v->q = r->quoted;
    v->n = r->nfields;
    v->line = r->line;
}

int imp_rec_copy(const rec *src, rec *dst)
{
    size_t bytes = src->n ? src->off[src->n - 1] + src->len[src->n - 1] + 1 : 1;
    dst->text = malloc(bytes);
    dst->off = malloc((src->n + 1) * sizeof *dst->off);
    dst->len = malloc((src->n + 1) * sizeof *dst->len);
    dst->q = malloc(src->n + 1);
    if (!dst->text || !dst->off || !dst->len || !dst->q) return -1;
    memcpy(dst->text, src->text, bytes);
    memcpy(dst->off, src->off, src->n * sizeof *dst->off);
    memcpy(dst->len, src->len, src->n * sizeof *dst->len);
    memcpy(dst->q, src->q, src->n);
    dst->n = src->n;
    dst->line = src->line;
    return 0;
}

void imp_rec_free(rec *r)
{
    free(r->text);
    free(r->off);
    free(r->len);
    free(r->q);
}

int imp_blank_record(const rec *r)
{
    return r->n == 1 && r->len[0] == 0 && !r->q[0];
}

/* Field i holds a NUL byte (text that C strings would cut there). */
int imp_has_nul(const rec *r, size_t i)
{
    return strlen(r->text + r->off[i]) != r->len[i];
}
