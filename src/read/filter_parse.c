/*
 * filter_parse.c - building value filters (tsf_filter_* constructors in tsf.h), parsing them from text and
 * formatting them back with only the parentheses they need (flat AND/OR chains, so any filter formats to
 * text the parser accepts again). The tree itself (struct tsf_filter) is in filter.h; filter.c binds it
 * to devices, evaluates it on batches and prunes with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "reader_internal.h"

/* ---- construction --------------------------------------------------------------------------- */

void tsf_filter_free(tsf_filter *f)
{
    if (!f) return;
    tsf_filter_free(f->l);
    tsf_filter_free(f->r);
    if (f->column) tsf_free(NULL, f->column, strlen(f->column) + 1);
    if (f->s) tsf_free(NULL, f->s, f->slen + 1);
    tsf_free(NULL, f, sizeof *f);
}

static tsf_status make_cmp(tsf_filter **out, const char *column, size_t clen, tsf_cmp op, tsf_type lt,
                           const tsf_value *v, tsf_error *err)
{
    *out = NULL;
    if ((unsigned)op > TSF_CMP_GE)
        return tsf_err(err, TSF_EINVAL, "filter: comparison operator %d unknown", op);
    if (lt != TSF_INT64 && lt != TSF_DOUBLE && lt != TSF_BOOLEAN && lt != TSF_STRING)
        return tsf_err(err, TSF_EINVAL, "filter: literal type %d is not INT64, DOUBLE, BOOLEAN or STRING",
                       lt);
    if (lt == TSF_STRING && v->v.bytes.len && !v->v.bytes.data)
        return tsf_err(err, TSF_EINVAL, "filter: string literal with NULL data");
    if (clen == 0) return tsf_err(err, TSF_EINVAL, "filter: empty column name");
    tsf_filter *f = tsf_calloc(NULL, 1, sizeof *f);
    if (!f) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    f->kind = FN_CMP;
    f->op = op;
    f->lit = lt;
    f->column = tsf_alloc(NULL, clen + 1);
    if (!f->column) goto oom;
    memcpy(f->column, column, clen);
    f->column[clen] = '\0';
    if (lt == TSF_INT64) f->i = v->v.i64;
    if (lt == TSF_DOUBLE) f->d = v->v.d;
    if (lt == TSF_BOOLEAN) f->b = v->v.b != 0;
    if (lt == TSF_STRING) {
        f->slen = v->v.bytes.len;
        if (!(f->s = tsf_alloc(NULL, f->slen + 1))) goto oom;
        if (f->slen) memcpy(f->s, v->v.bytes.data, f->slen);
        f->s[f->slen] = '\0';
    }
    *out = f;
    return TSF_OK;
oom:
    tsf_filter_free(f);
    return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
}

tsf_status tsf_filter_cmp(tsf_filter **out, const char *column, tsf_cmp op, tsf_type literal_type,
                          const tsf_value *value, tsf_error *err)
{
    if (!out || !column || !value)
        return tsf_err(err, TSF_EINVAL, "tsf_filter_cmp: out, column and value are required");
    return make_cmp(out, column, strlen(column), op, literal_type, value, err);
}

static tsf_status make_is_null(tsf_filter **out, const char *column, size_t clen, int not_null, tsf_error *err)
{
    tsf_value v;
    memset(&v, 0, sizeof v);
    tsf_status st = make_cmp(out, column, clen, TSF_CMP_EQ, TSF_INT64, &v, err);
    if (!st) (*out)->test = not_null ? FT_NOT_NULL : FT_NULL;
    return st;
}

tsf_status tsf_filter_is_null(tsf_filter **out, const char *column, int not_null, tsf_error *err)
{
    if (!out || !column) return tsf_err(err, TSF_EINVAL, "tsf_filter_is_null: out and column are required");
    return make_is_null(out, column, strlen(column), not_null, err);
}

tsf_status tsf_filter_time(tsf_filter **out, tsf_cmp op, int64_t t, tsf_error *err)
{
    if (!out) return tsf_err(err, TSF_EINVAL, "tsf_filter_time: out is required");
    *out = NULL;
    if ((unsigned)op > TSF_CMP_GE)
        return tsf_err(err, TSF_EINVAL, "filter: comparison operator %d unknown", op);
    tsf_filter *f = tsf_calloc(NULL, 1, sizeof *f);
    if (!f) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    f->kind = FN_CMP;
    f->test = FT_TIME;
    f->op = op;
    f->lit = TSF_INT64;
    f->i = t;
    *out = f;
    return TSF_OK;
}

static tsf_status make_node(tsf_filter **out, int kind, tsf_filter *a, tsf_filter *b, tsf_error *err)
{
    if (out) *out = NULL;
    if (!out || !a || (kind != FN_NOT && !b)) {
        tsf_filter_free(a);
        tsf_filter_free(b);
        return tsf_err(err, TSF_EINVAL, "tsf_filter_%s: out and operands are required",
                       kind == FN_AND  ? "and"
                       : kind == FN_OR ? "or"
                                       : "not");
    }
    tsf_filter *f = tsf_calloc(NULL, 1, sizeof *f);
    if (!f) {
        tsf_filter_free(a);
        tsf_filter_free(b);
        return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    }
    f->kind = kind;
    f->l = a;
    f->r = b;
    *out = f;
    return TSF_OK;
}

tsf_status tsf_filter_and(tsf_filter **out, tsf_filter *a, tsf_filter *b, tsf_error *err)
{
    return make_node(out, FN_AND, a, b, err);
}

tsf_status tsf_filter_or(tsf_filter **out, tsf_filter *a, tsf_filter *b, tsf_error *err)
{
    return make_node(out, FN_OR, a, b, err);
}

tsf_status tsf_filter_not(tsf_filter **out, tsf_filter *a, tsf_error *err)
{
    return make_node(out, FN_NOT, a, NULL, err);
}

/* ---- parser --------------------------------------------------------------------------------- */

enum { TK_END, TK_LP, TK_RP, TK_OP, TK_AND, TK_OR, TK_NOT, TK_IDENT, TK_INT, TK_DBL, TK_STR, TK_BOOL };

#define FP_MAX_DEPTH 200

typedef struct fparser {
    const char *s;
    size_t pos;  /* next byte to lex */
    int tk;      /* current token */
    size_t tpos; /* its offset */
    size_t tend; /* offset just past it */
    tsf_cmp op;
    int64_t i;
    double d;
    int b;
    char *buf; /* unescaped identifier/string of the current token */
    size_t blen, bcap;
    int quoted; /* TK_IDENT: written "double-quoted" (never a keyword, never the row time) */
    int depth;
    const tsf_filter_parse_options *o;
    tsf_error *err;
} fparser;

static int is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static int word_is(const char *s, size_t n, const char *kw)
{
    size_t k = strlen(kw);
    if (n != k) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != kw[i]) return 0;
    }
    return 1;
}

/* Words a column name is quoted to be read as: the operators and literals, and `time` (the row time). */
static const char *const fp_keywords[] = {"and", "or", "not", "true", "false", "nan", "inf", "infinity", "time"};

static int is_keyword(const char *s, size_t n)
{
    for (size_t k = 0; k < sizeof fp_keywords / sizeof fp_keywords[0]; k++)
        if (word_is(s, n, fp_keywords[k])) return 1;
    return 0;
}

static tsf_status fp_push(fparser *p, char c)
{
    if (p->blen + 1 >= p->bcap) {
        size_t nc = p->bcap ? p->bcap * 2 : 64;
        char *nb = tsf_realloc(NULL, p->buf, p->bcap, nc);
        if (!nb) return tsf_err(p->err, TSF_ENOMEM, "filter: out of memory");
        p->buf = nb;
        p->bcap = nc;
    }
    p->buf[p->blen++] = c;
    p->buf[p->blen] = '\0';
    return TSF_OK;
}

/* Reads a quoted token starting at p->pos (quote q, doubled to escape) into p->buf. */
static tsf_status fp_quoted(fparser *p, char q, const char *what)
{
    size_t start = p->pos++;
    p->blen = 0;
    tsf_status st = fp_push(p, '\0');
    if (st) return st;
    p->blen = 0;
    for (;;) {
        char c = p->s[p->pos];
        if (c == '\0')
            return tsf_err(p->err, TSF_EINVAL, "filter: unterminated %s starting at offset %zu", what, start);
        p->pos++;
        if (c == q) {
            if (p->s[p->pos] != q) return TSF_OK;
            p->pos++;
        }
        if ((st = fp_push(p, c))) return st;
    }
}

static const char *tk_name(int tk)
{
    static const char *const n[] = {"end of text", "'('",    "')'",    "comparison operator",
                                    "AND",         "OR",     "NOT",    "column name",
                                    "integer",     "number", "string", "boolean"};
    return n[tk];
}

/* A comparison operator at p->pos, its first character c ('=', '!', '<' or '>'). */
static tsf_status fp_operator(fparser *p, unsigned char c)
{
    const char *s = p->s;
    char c1 = s[p->pos + 1];
    p->tk = TK_OP;
    p->pos += 1;
    if (c == '=') {
        p->op = TSF_CMP_EQ;
        if (c1 == '=') p->pos++; /* "==" is accepted as "=" */
    } else if (c == '!') {
        if (c1 != '=')
            return tsf_err(p->err, TSF_EINVAL, "filter: '!' must be followed by '=' at offset %zu",
                           p->tpos);
        p->op = TSF_CMP_NE;
        p->pos++;
    } else if (c == '<') {
        p->op = c1 == '=' ? TSF_CMP_LE : c1 == '>' ? TSF_CMP_NE : TSF_CMP_LT;
        p->pos += c1 == '=' || c1 == '>';
    } else {
        p->op = c1 == '=' ? TSF_CMP_GE : TSF_CMP_GT;
        p->pos += c1 == '=';
    }
    return TSF_OK;
}

/* A number at p->pos, its first character c (a digit, '.' or a sign; after a sign also inf, infinity or
 * nan): an integer that fits in 64 bits, else a double. */
static tsf_status fp_number(fparser *p, unsigned char c)
{
    const char *s = p->s;
    size_t q = p->pos;
    int sign = c == '-' || c == '+';
    q += sign;
    if (sign && is_ident_start((unsigned char)s[q])) { /* -inf, +nan, ... */
        size_t e = q;
        while (is_ident_char((unsigned char)s[e])) e++;
        if (word_is(s + q, e - q, "inf") || word_is(s + q, e - q, "infinity")) {
            p->tk = TK_DBL;
            p->d = c == '-' ? -INFINITY : INFINITY;
        } else if (word_is(s + q, e - q, "nan")) {
            p->tk = TK_DBL;
            p->d = NAN;
        } else {
            return tsf_err(p->err, TSF_EINVAL, "filter: '%c' must start a number at offset %zu", c,
                           p->tpos);
        }
        p->pos = e;
        return TSF_OK;
    }
    size_t digits = 0;
    int is_dbl = 0;
    while (s[q] >= '0' && s[q] <= '9') q++, digits++;
    if (s[q] == '.') {
        is_dbl = 1;
        q++;
        while (s[q] >= '0' && s[q] <= '9') q++, digits++;
    }
    if (!digits) return tsf_err(p->err, TSF_EINVAL, "filter: malformed number at offset %zu", p->tpos);
    if (s[q] == 'e' || s[q] == 'E') {
        size_t e = q + 1, ed = 0;
        if (s[e] == '+' || s[e] == '-') e++;
        while (s[e] >= '0' && s[e] <= '9') e++, ed++;
        if (!ed) return tsf_err(p->err, TSF_EINVAL, "filter: malformed exponent at offset %zu", q);
        is_dbl = 1;
        q = e;
    }
    if (is_ident_char((unsigned char)s[q]))
        return tsf_err(p->err, TSF_EINVAL, "filter: malformed number at offset %zu", p->tpos);
    char tmp[512];
    size_t n = q - p->pos;
    if (n >= sizeof tmp)
        return tsf_err(p->err, TSF_EINVAL, "filter: number too long at offset %zu", p->tpos);
    memcpy(tmp, s + p->pos, n);
    tmp[n] = '\0';
    char *end;
    if (is_dbl) {
        p->tk = TK_DBL;
        p->d = strtod(tmp, &end);
    } else {
        /* digits only (after an optional sign): accumulate exactly, rejecting overflow */
        const char *t = tmp + sign;
        uint64_t mag = 0, lim = c == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (; *t; t++) {
            unsigned dgt = (unsigned)(*t - '0');
            if (mag > (lim - dgt) / 10)
                return tsf_err(
                    p->err, TSF_EINVAL,
                    "filter: integer at offset %zu does not fit in 64 bits (write it as %s.0 to "
                    "compare as a number)",
                    p->tpos, tmp);
            mag = mag * 10 + dgt;
        }
        p->tk = TK_INT;
        p->i = c == '-' ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    }
    p->pos = q;
    return TSF_OK;
}

/* A word at p->pos: a keyword (AND, OR, NOT, true, false, nan, inf, infinity; any case) or a column name. */
static tsf_status fp_word(fparser *p)
{
    const char *s = p->s;
    tsf_status st = TSF_OK;
    size_t e = p->pos;
    while (is_ident_char((unsigned char)s[e])) e++;
    const char *w = s + p->pos;
    size_t n = e - p->pos;
    if (word_is(w, n, "and"))
        p->tk = TK_AND;
    else if (word_is(w, n, "or"))
        p->tk = TK_OR;
    else if (word_is(w, n, "not"))
        p->tk = TK_NOT;
    else if (word_is(w, n, "true") || word_is(w, n, "false")) {
        p->tk = TK_BOOL;
        p->b = word_is(w, n, "true");
    } else if (word_is(w, n, "nan")) {
        p->tk = TK_DBL;
        p->d = NAN;
    } else if (word_is(w, n, "inf") || word_is(w, n, "infinity")) {
        p->tk = TK_DBL;
        p->d = INFINITY;
    } else {
        p->tk = TK_IDENT;
        p->blen = 0;
        for (size_t k = 0; k < n && !st; k++) st = fp_push(p, w[k]);
    }
    p->pos = e;
    return st;
}

/* The next token at p->pos: p->tk and its value, p->tpos and p->tend where it starts and ends. */
static tsf_status fp_next(fparser *p)
{
    const char *s = p->s;
    while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r') p->pos++;
    p->tpos = p->pos;
    p->quoted = 0;
    unsigned char c = (unsigned char)s[p->pos];
    tsf_status st = TSF_OK;
    if (c == '\0') {
        p->tk = TK_END;
    } else if (c == '(' || c == ')') {
        p->tk = c == '(' ? TK_LP : TK_RP;
        p->pos++;
    } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        if ((st = fp_operator(p, c))) return st;
    } else if (c == '\'') {
        p->tk = TK_STR;
        st = fp_quoted(p, '\'', "string");
    } else if (c == '"') {
        p->tk = TK_IDENT;
        p->quoted = 1;
        st = fp_quoted(p, '"', "quoted column name");
        if (!st && p->blen == 0)
            st = tsf_err(p->err, TSF_EINVAL, "filter: empty column name at offset %zu", p->tpos);
    } else if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+') {
        if ((st = fp_number(p, c))) return st;
    } else if (is_ident_start(c)) {
        st = fp_word(p);
    } else {
        return tsf_err(p->err, TSF_EINVAL, "filter: unexpected character '%c' (0x%02x) at offset %zu",
                       c >= 0x20 && c < 0x7f ? c : '?', c, p->tpos);
    }
    p->tend = p->pos;
    return st;
}

static tsf_status fp_expected(fparser *p, const char *what)
{
    return tsf_err(p->err, TSF_EINVAL, "filter: expected %s at offset %zu, found %s", what, p->tpos,
                   tk_name(p->tk));
}

static tsf_status fp_or(fparser *p, tsf_filter **out);

static int is_literal(int tk)
{
    return tk == TK_INT || tk == TK_DBL || tk == TK_STR || tk == TK_BOOL;
}

/* Current literal token as (type, value); strings borrow p->buf until the next token. */
static void fp_literal(const fparser *p, tsf_type *lt, tsf_value *v)
{
    memset(v, 0, sizeof *v);
    switch (p->tk) {
    case TK_INT:
        *lt = TSF_INT64, v->v.i64 = p->i;
        break;
    case TK_DBL:
        *lt = TSF_DOUBLE, v->v.d = p->d;
        break;
    case TK_BOOL:
        *lt = TSF_BOOLEAN, v->v.b = p->b;
        break;
    default:
        *lt = TSF_STRING;
        v->v.bytes.data = (const uint8_t *)p->buf;
        v->v.bytes.len = p->blen;
    }
}

static tsf_cmp flip(tsf_cmp op)
{
    switch (op) {
    case TSF_CMP_LT:
        return TSF_CMP_GT;
    case TSF_CMP_LE:
        return TSF_CMP_GE;
    case TSF_CMP_GT:
        return TSF_CMP_LT;
    case TSF_CMP_GE:
        return TSF_CMP_LE;
    default:
        return op;
    }
}

/* The current token is the bare word `word` (any case). */
static int fp_bare(const fparser *p, const char *word)
{
    return p->tk == TK_IDENT && !p->quoted && word_is(p->buf, p->blen, word);
}

/* `time op literal`, the literal a token of kind tk at offset pos (its value: v): an integer in the file's
 * unit, or a string the options' parse_time converts. */
static tsf_status fp_time_term(fparser *p, tsf_cmp op, int tk, const tsf_value *v, size_t pos, tsf_filter **out)
{
    int64_t t = v->v.i64;
    if (tk == TK_STR) {
        const char *s = (const char *)v->v.bytes.data;
        if (!p->o->parse_time)
            return tsf_err(p->err, TSF_EINVAL,
                           "filter: time at offset %zu compares with an integer in the file's time unit, not "
                           "'%s'",
                           pos, s);
        if (p->o->parse_time(p->o->parse_time_ctx, s, &t))
            return tsf_err(p->err, TSF_EINVAL, "filter: '%s' at offset %zu is not a time", s, pos);
    } else if (tk != TK_INT) {
        return tsf_err(p->err, TSF_EINVAL,
                       "filter: time at offset %zu compares with an integer in the file's time unit, not %s", pos,
                       tk_name(tk));
    }
    return tsf_filter_time(out, op, t, p->err);
}

/* After a column name (kept by the caller): `IS [NOT] NULL` when the current token is the bare word IS
 * (then *out is set), else nothing is consumed. */
static tsf_status fp_is_null(fparser *p, const char *col, size_t clen, int is_time, size_t cpos, tsf_filter **out)
{
    tsf_status st;
    if (!fp_bare(p, "is")) return TSF_OK;
    if ((st = fp_next(p))) return st;
    int not_null = p->tk == TK_NOT;
    if (not_null && (st = fp_next(p))) return st;
    if (!fp_bare(p, "null")) return fp_expected(p, not_null ? "NULL after IS NOT" : "NULL or NOT NULL after IS");
    if (is_time)
        return tsf_err(p->err, TSF_EINVAL, "filter: time at offset %zu is never null (a column named time is "
                       "written \"time\")", cpos);
    if ((st = make_is_null(out, col, clen, not_null, p->err))) return st;
    return fp_next(p);
}

/* primary := '(' or ')' | NOT primary | column op literal | literal op column | column IS [NOT] NULL,
 * where the bare word `time` as column is the row time */
static tsf_status fp_primary(fparser *p, tsf_filter **out)
{
    tsf_status st;
    *out = NULL;
    if (++p->depth > FP_MAX_DEPTH)
        return tsf_err(p->err, TSF_EINVAL, "filter: nested deeper than %d at offset %zu", FP_MAX_DEPTH,
                       p->tpos);
    if (p->tk == TK_NOT) {
        if ((st = fp_next(p))) return st;
        tsf_filter *a;
        if ((st = fp_primary(p, &a))) return st;
        p->depth--;
        return tsf_filter_not(out, a, p->err);
    }
    if (p->tk == TK_LP) {
        size_t open = p->tpos;
        if ((st = fp_next(p))) return st;
        if ((st = fp_or(p, out))) return st;
        if (p->tk != TK_RP) {
            tsf_filter_free(*out);
            *out = NULL;
            if (p->tk == TK_END)
                return tsf_err(p->err, TSF_EINVAL, "filter: '(' at offset %zu is never closed", open);
            return fp_expected(p, "')' or AND/OR");
        }
        p->depth--;
        if ((st = fp_next(p))) { /* a bad token after ')': nothing may leak to the caller */
            tsf_filter_free(*out);
            *out = NULL;
        }
        return st;
    }
    if (p->tk == TK_IDENT) {
        int is_time = fp_bare(p, "time");
        size_t cpos = p->tpos;
        char *col = p->buf;
        size_t clen = p->blen, ccap = p->bcap;
        p->buf = NULL; /* keep the name; the literal lexes into a fresh buffer */
        p->bcap = p->blen = 0;
        if ((st = fp_next(p))) goto col_fail;
        if ((st = fp_is_null(p, col, clen, is_time, cpos, out)) || *out) goto col_fail;
        if (p->tk != TK_OP) {
            st = fp_expected(p, "a comparison operator (= != <> < <= > >=) or IS [NOT] NULL");
            goto col_fail;
        }
        tsf_cmp op = p->op;
        if ((st = fp_next(p))) goto col_fail;
        if (is_time && is_literal(p->tk)) {
            tsf_type lt;
            tsf_value v;
            fp_literal(p, &lt, &v);
            st = fp_time_term(p, op, p->tk, &v, p->tpos, out);
            if (!st) st = fp_next(p);
            goto col_fail;
        }
        if (!is_literal(p->tk)) {
            st = p->tk == TK_IDENT
                     ? tsf_err(p->err, TSF_EINVAL,
                               "filter: column-to-column comparison at offset %zu is not supported "
                               "(the right side must be a literal)",
                               p->tpos)
                     : fp_expected(p, "a literal (number, 'string', true/false)");
            goto col_fail;
        }
        tsf_type lt;
        tsf_value v;
        fp_literal(p, &lt, &v);
        st = make_cmp(out, col, clen, op, lt, &v, p->err);
        if (!st) st = fp_next(p);
    col_fail:
        tsf_free(NULL, col, ccap);
        if (st) {
            tsf_filter_free(*out);
            *out = NULL;
        }
        p->depth--;
        return st;
    }
    if (is_literal(p->tk)) { /* literal op column: flipped */
        int tk = p->tk;
        size_t lpos = p->tpos;
        tsf_value v;
        tsf_type lt;
        char *sbuf = NULL;
        size_t scap = 0;
        fp_literal(p, &lt, &v);
        if (tk == TK_STR) { /* keep the string; the column lexes into a fresh buffer */
            sbuf = p->buf;
            scap = p->bcap;
            p->buf = NULL;
            p->bcap = p->blen = 0;
        }
        if ((st = fp_next(p))) goto lit_fail;
        if (p->tk != TK_OP) {
            st = fp_expected(p, "a comparison operator after the literal");
            goto lit_fail;
        }
        tsf_cmp op = flip(p->op);
        if ((st = fp_next(p))) goto lit_fail;
        if (p->tk != TK_IDENT) {
            st = fp_expected(p, "a column name");
            goto lit_fail;
        }
        if (fp_bare(p, "time"))
            st = fp_time_term(p, op, tk, &v, lpos, out);
        else
            st = make_cmp(out, p->buf, p->blen, op, lt, &v, p->err);
        if (!st) st = fp_next(p);
    lit_fail:
        if (sbuf) tsf_free(NULL, sbuf, scap);
        if (st) {
            tsf_filter_free(*out);
            *out = NULL;
        }
        p->depth--;
        return st;
    }
    return fp_expected(p, "a comparison, NOT or '('");
}

static tsf_status fp_and(fparser *p, tsf_filter **out)
{
    tsf_status st = fp_primary(p, out);
    while (!st && p->tk == TK_AND) {
        tsf_filter *b;
        if ((st = fp_next(p)) || (st = fp_primary(p, &b))) break;
        st = tsf_filter_and(out, *out, b, p->err);
    }
    if (st) {
        tsf_filter_free(*out);
        *out = NULL;
    }
    return st;
}

static tsf_status fp_or(fparser *p, tsf_filter **out)
{
    tsf_status st = fp_and(p, out);
    while (!st && p->tk == TK_OR) {
        tsf_filter *b;
        if ((st = fp_next(p)) || (st = fp_and(p, &b))) break;
        st = tsf_filter_or(out, *out, b, p->err);
    }
    if (st) {
        tsf_filter_free(*out);
        *out = NULL;
    }
    return st;
}

void tsf_filter_parse_options_init(tsf_filter_parse_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

tsf_status tsf_filter_parse(tsf_filter **out, const char *text, tsf_error *err)
{
    return tsf_filter_parse_with(out, text, NULL, err);
}

tsf_status tsf_filter_parse_with(tsf_filter **out, const char *text, const tsf_filter_parse_options *opts,
                                 tsf_error *err)
{
    if (!out || !text) return tsf_err(err, TSF_EINVAL, "tsf_filter_parse: text and out are required");
    *out = NULL;
    tsf_filter_parse_options o;
    tsf_filter_parse_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_filter_parse_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    fparser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.o = &o;
    p.err = err;
    tsf_status st = fp_next(&p);
    if (!st && p.tk == TK_END) st = tsf_err(err, TSF_EINVAL, "filter: empty expression");
    if (!st) st = fp_or(&p, out);
    if (!st && p.tk != TK_END) {
        st = p.tk == TK_RP ? tsf_err(err, TSF_EINVAL, "filter: unmatched ')' at offset %zu", p.tpos)
                           : fp_expected(&p, "AND, OR or the end");
        tsf_filter_free(*out);
        *out = NULL;
    }
    tsf_free(NULL, p.buf, p.bcap);
    return st;
}

/* ---- formatting ----------------------------------------------------------------------------- */

typedef struct fout {
    char *buf;
    size_t cap, len;
} fout;

static void put(fout *o, const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++, o->len++)
        if (o->len + 1 < o->cap) o->buf[o->len] = s[k];
}

static void puts_(fout *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_quoted(fout *o, const char *s, size_t n, char q)
{
    put(o, &q, 1);
    for (size_t k = 0; k < n; k++) {
        if (s[k] == q) put(o, &q, 1);
        put(o, s + k, 1);
    }
    put(o, &q, 1);
}

/* Shortest %.*g form that reads back to the same double, with a '.' or exponent so it lexes as one. */
static void put_double(fout *o, double d)
{
    char t[64];
    if (isnan(d)) {
        puts_(o, "nan");
        return;
    }
    if (isinf(d)) {
        puts_(o, d < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (strtod(t, NULL) == d) break;
    }
    if (!strpbrk(t, ".eE")) strcat(t, ".0");
    puts_(o, t);
}

/* Binding strength: OR < AND < NOT and comparisons (primaries). */
static int prec(const tsf_filter *f)
{
    return f->kind == FN_OR ? 1 : f->kind == FN_AND ? 2 : 3;
}

/* Writes only the parentheses the grammar needs: a chain of one operator stays flat (the parser builds
 * it left-deep, so a same-operator right operand is the only one that keeps them), an OR inside an AND
 * and an AND/OR under NOT are parenthesised. The text therefore never nests deeper than the text that
 * was parsed, and parses back to the same tree. */
static void fmt_node(fout *o, const tsf_filter *f, int paren)
{
    static const char *const ops[] = {" = ", " != ", " < ", " <= ", " > ", " >= "};
    if (paren) put(o, "(", 1);
    if (f->kind == FN_NOT) {
        puts_(o, "not ");
        fmt_node(o, f->l, prec(f->l) < 3);
    } else if (f->kind != FN_CMP) {
        fmt_node(o, f->l, prec(f->l) < prec(f));
        puts_(o, f->kind == FN_AND ? " and " : " or ");
        fmt_node(o, f->r, prec(f->r) <= prec(f));
    } else if (f->test == FT_TIME) {
        char t[64];
        snprintf(t, sizeof t, "time%s%lld", ops[f->op], (long long)f->i);
        puts_(o, t);
    } else {
        size_t n = strlen(f->column);
        int bare = is_ident_start((unsigned char)f->column[0]) && !is_keyword(f->column, n);
        for (size_t k = 0; k < n && bare; k++) bare = is_ident_char((unsigned char)f->column[k]);
        if (bare)
            put(o, f->column, n);
        else
            put_quoted(o, f->column, n, '"');
        if (f->test != FT_VALUE) {
            puts_(o, f->test == FT_NULL ? " is null" : " is not null");
            if (paren) put(o, ")", 1);
            return;
        }
        puts_(o, ops[f->op]);
        char t[32];
        switch (f->lit) {
        case TSF_INT64:
            snprintf(t, sizeof t, "%lld", (long long)f->i), puts_(o, t);
            break;
        case TSF_DOUBLE:
            put_double(o, f->d);
            break;
        case TSF_BOOLEAN:
            puts_(o, f->b ? "true" : "false");
            break;
        default:
            put_quoted(o, (const char *)f->s, f->slen, '\'');
            break;
        }
    }
    if (paren) put(o, ")", 1);
}

static size_t columns_of(const tsf_filter *f, const char **names, size_t cap, size_t n)
{
    if (f->kind != FN_CMP) {
        n = columns_of(f->l, names, cap, n);
        return f->r ? columns_of(f->r, names, cap, n) : n;
    }
    if (f->test == FT_TIME) return n;
    for (size_t i = 0; i < n && i < cap; i++)
        if (!strcmp(names[i], f->column)) return n;
    if (n < cap) names[n] = f->column; /* past the array every comparison counts: an upper bound */
    return n + 1;
}

size_t tsf_filter_columns(const tsf_filter *f, const char **names, size_t cap)
{
    return f ? columns_of(f, names, cap, 0) : 0;
}

size_t tsf_filter_format(const tsf_filter *f, char *buf, size_t cap)
{
    fout o = {buf, buf ? cap : 0, 0};
    if (f) fmt_node(&o, f, 0);
    if (o.cap) o.buf[o.len < o.cap ? o.len : o.cap - 1] = '\0';
    return o.len;
}
