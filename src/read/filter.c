/*
 * filter.c - value filters of queries (tsf.h "value filters").
 *
 * A filter is an immutable tree of comparisons `column op literal` joined by AND / OR / NOT, built by the
 * tsf_filter_* constructors or parsed from text, and written back with only the parentheses it needs.
 * Semantics are SQL's three-valued logic: a comparison with a null cell is UNKNOWN, and a query keeps a
 * row only where the whole filter is TRUE.
 *
 * Queries use it through filter.h: literals are converted to each device's column type once (integer
 * and floating values compare exactly), tag comparisons of table devices (§4.1: segment 1 + k is the
 * k-th TAG column) are decided once per device, batches are evaluated column by column into TRUE/FALSE
 * bitmaps (64 rows per word) and the kept rows compacted, and chunk/page statistics prune with an
 * abstract evaluation over {TRUE, FALSE, UNKNOWN}: a unit is skipped only when TRUE is impossible.
 * Kleene logic is monotone (a null never turns a non-TRUE result TRUE), so a leaf may be widened freely
 * and pruning one column's page of a non-aligned merge is safe.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "reader_internal.h"

enum { FN_CMP = 0, FN_AND = 1, FN_OR = 2, FN_NOT = 3 };

struct tsf_filter {
    int kind;
    tsf_cmp op;
    tsf_type lit; /* TSF_INT64, TSF_DOUBLE, TSF_BOOLEAN or TSF_STRING */
    char *column; /* NUL-terminated copy */
    int64_t i;
    double d;
    int b;
    uint8_t *s; /* string literal (slen bytes, NUL-terminated copy) */
    size_t slen;
    tsf_filter *l, *r;
};

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
    int depth;
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

static const char *const fp_keywords[] = {"and", "or", "not", "true", "false", "nan", "inf", "infinity"};

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

static tsf_status fp_next(fparser *p)
{
    const char *s = p->s;
    while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r') p->pos++;
    p->tpos = p->pos;
    unsigned char c = (unsigned char)s[p->pos];
    tsf_status st = TSF_OK;
    if (c == '\0') {
        p->tk = TK_END;
    } else if (c == '(' || c == ')') {
        p->tk = c == '(' ? TK_LP : TK_RP;
        p->pos++;
    } else if (c == '=' || c == '!' || c == '<' || c == '>') {
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
    } else if (c == '\'') {
        p->tk = TK_STR;
        st = fp_quoted(p, '\'', "string");
    } else if (c == '"') {
        p->tk = TK_IDENT;
        st = fp_quoted(p, '"', "quoted column name");
        if (!st && p->blen == 0)
            st = tsf_err(p->err, TSF_EINVAL, "filter: empty column name at offset %zu", p->tpos);
    } else if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+') {
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
            goto done;
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
    } else if (is_ident_start(c)) {
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
    } else {
        return tsf_err(p->err, TSF_EINVAL, "filter: unexpected character '%c' (0x%02x) at offset %zu",
                       c >= 0x20 && c < 0x7f ? c : '?', c, p->tpos);
    }
done:
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

/* primary := '(' or ')' | NOT primary | column op literal | literal op column */
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
        char *col = p->buf;
        size_t clen = p->blen, ccap = p->bcap;
        p->buf = NULL; /* keep the name; the literal lexes into a fresh buffer */
        p->bcap = p->blen = 0;
        if ((st = fp_next(p))) goto col_fail;
        if (p->tk != TK_OP) {
            st = fp_expected(p, "a comparison operator (= != <> < <= > >=)");
            goto col_fail;
        }
        tsf_cmp op = p->op;
        if ((st = fp_next(p))) goto col_fail;
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

tsf_status tsf_filter_parse(tsf_filter **out, const char *text, tsf_error *err)
{
    if (!out || !text) return tsf_err(err, TSF_EINVAL, "tsf_filter_parse: text and out are required");
    *out = NULL;
    fparser p;
    memset(&p, 0, sizeof p);
    p.s = text;
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
    } else {
        size_t n = strlen(f->column);
        int bare = is_ident_start((unsigned char)f->column[0]) && !is_keyword(f->column, n);
        for (size_t k = 0; k < n && bare; k++) bare = is_ident_char((unsigned char)f->column[k]);
        if (bare)
            put(o, f->column, n);
        else
            put_quoted(o, f->column, n, '"');
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

size_t tsf_filter_format(const tsf_filter *f, char *buf, size_t cap)
{
    fout o = {buf, buf ? cap : 0, 0};
    if (f) fmt_node(&o, f, 0);
    if (o.cap) o.buf[o.len < o.cap ? o.len : o.cap - 1] = '\0';
    return o.len;
}

/* ---- query side: binding ---------------------------------------------------------------------- */

enum { LM_COL = 0, LM_CONST = 1 };                     /* leaf binding for the current device */
enum { CK_I64, CK_F64, CK_F64I, CK_BYTES, CK_ALWAYS }; /* comparison kind after conversion */
enum { TV_T = 1, TV_F = 2, TV_U = 4, TV_ALL = 7 };     /* sets of truth values (pruning) */

typedef struct fnode {
    int kind;            /* FN_* */
    size_t a, b;         /* children (nodes are in post-order: children first) */
    const tsf_filter *f; /* FN_CMP */
    /* per-device binding of a leaf */
    int mode;
    int konst; /* LM_CONST: TV_T, TV_F or TV_U for every row */
    size_t bcol;
    tsf_type ctype;
    int ck;
    tsf_cmp op;
    int64_t k;
    double kd;
    int always; /* CK_ALWAYS: result for a non-null cell */
    const uint8_t *s;
    size_t slen;
} fnode;

struct rd_fstate {
    tsf_reader *r;
    const tsf_allocator *a;
    fnode *nodes;
    size_t nnodes;
    const char **names; /* distinct leaf columns (borrowed from the filter) */
    size_t nnames;
    int prune;
    int root_true;  /* current device: every row passes (tags decided it) */
    size_t words;   /* 64-row words of one batch */
    uint64_t *bits; /* per node: TRUE words then FALSE words */
    rd_buf times;
    rd_buf *vals, *valid; /* compacted visible columns */
    size_t nout;
    rd_unit_col *units; /* rd_filter_units */
    size_t nunits;
};

static size_t count_nodes(const tsf_filter *f)
{
    return f ? 1 + count_nodes(f->l) + count_nodes(f->r) : 0;
}

static size_t flatten(rd_fstate *fs, const tsf_filter *f)
{
    size_t a = 0, b = 0;
    if (f->l) a = flatten(fs, f->l);
    if (f->r) b = flatten(fs, f->r);
    fnode *n = &fs->nodes[fs->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = f->kind;
    n->a = a;
    n->b = b;
    n->f = f;
    if (f->kind == FN_CMP) {
        size_t i = 0;
        while (i < fs->nnames && strcmp(fs->names[i], f->column)) i++;
        if (i == fs->nnames) fs->names[fs->nnames++] = f->column;
    }
    return fs->nnodes++;
}

static int is_int_type(tsf_type t)
{
    return t == TSF_INT32 || t == TSF_INT64 || t == TSF_DATE || t == TSF_TIMESTAMP;
}

/* 'yyyy-mm-dd' -> yyyymmdd; -1 if malformed. */
static int64_t parse_date(const uint8_t *s, size_t n)
{
    if (n != 10 || s[4] != '-' || s[7] != '-') return -1;
    int64_t v = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i == 4 || i == 7) continue;
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    int mo = (int)(v / 100 % 100), d = (int)(v % 100);
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 ? v : -1;
}

static const char *lit_name(tsf_type lt)
{
    return lt == TSF_INT64     ? "an integer"
           : lt == TSF_DOUBLE  ? "a number"
           : lt == TSF_BOOLEAN ? "a boolean"
                               : "a string";
}

/* Converts leaf n's literal for a column of type t (exact int/double comparison). */
static tsf_status bind_cmp(fnode *n, tsf_type t, const char *where, tsf_error *err)
{
    const tsf_filter *f = n->f;
    n->ctype = t;
    n->op = f->op;
    n->mode = LM_COL;
    if (is_int_type(t) && t == TSF_DATE && f->lit == TSF_STRING) {
        int64_t v = parse_date(f->s, f->slen);
        if (v < 0)
            return tsf_err(err, TSF_EINVAL, "filter: column '%s'%s is DATE; '%s' is not yyyy-mm-dd",
                           f->column, where, (const char *)f->s);
        n->ck = CK_I64;
        n->k = v;
        return TSF_OK;
    }
    if (is_int_type(t) && f->lit == TSF_INT64) {
        n->ck = CK_I64;
        n->k = f->i;
        return TSF_OK;
    }
    if (is_int_type(t) && f->lit == TSF_DOUBLE) {
        double d = f->d;
        int gt_all = d >= 9223372036854775808.0, lt_all = d < -9223372036854775808.0;
        n->ck = CK_ALWAYS;
        if (isnan(d)) {
            n->always = n->op == TSF_CMP_NE;
        } else if (gt_all || lt_all) { /* literal beyond every int64: x < d for all x, or x > d for all x */
            int xlt = gt_all;
            switch (n->op) {
            case TSF_CMP_EQ:
                n->always = 0;
                break;
            case TSF_CMP_NE:
                n->always = 1;
                break;
            case TSF_CMP_LT:
            case TSF_CMP_LE:
                n->always = xlt;
                break;
            default:
                n->always = !xlt;
                break;
            }
        } else {
            double fl = floor(d), ce = ceil(d);
            int integral = fl == d;
            n->ck = CK_I64;
            switch (n->op) {
            case TSF_CMP_GT:
                n->k = (int64_t)fl;
                break; /* x > d  <=> x > floor(d) */
            case TSF_CMP_LE:
                n->k = (int64_t)fl;
                break; /* x <= d <=> x <= floor(d) */
            case TSF_CMP_GE:
                n->k = (int64_t)ce;
                break; /* x >= d <=> x >= ceil(d) */
            case TSF_CMP_LT:
                n->k = (int64_t)ce;
                break; /* x < d  <=> x < ceil(d) */
            default:
                if (integral) {
                    n->k = (int64_t)fl;
                } else {
                    n->ck = CK_ALWAYS;
                    n->always = n->op == TSF_CMP_NE;
                }
            }
        }
        return TSF_OK;
    }
    if ((t == TSF_FLOAT || t == TSF_DOUBLE) && (f->lit == TSF_DOUBLE || f->lit == TSF_INT64)) {
        if (f->lit == TSF_DOUBLE) {
            n->ck = CK_F64;
            n->kd = f->d;
        } else if (f->i >= -(INT64_C(1) << 53) && f->i <= (INT64_C(1) << 53)) {
            n->ck = CK_F64;
            n->kd = (double)f->i; /* exact */
        } else {
            n->ck = CK_F64I;
            n->k = f->i;
        }
        return TSF_OK;
    }
    if (t == TSF_BOOLEAN && f->lit == TSF_BOOLEAN) {
        n->ck = CK_I64;
        n->k = f->b;
        return TSF_OK;
    }
    if ((t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB) && f->lit == TSF_STRING) {
        n->ck = CK_BYTES;
        n->s = f->s;
        n->slen = f->slen;
        return TSF_OK;
    }
    return tsf_err(err, TSF_EINVAL, "filter: column '%s'%s is %s and cannot be compared with %s", f->column,
                   where, tsf_type_name(t) ? tsf_type_name(t) : "?", lit_name(f->lit));
}

static int bytes_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    int c = m ? memcmp(a, b, m) : 0;
    return c ? c : (na > nb) - (na < nb);
}

static int op_holds(tsf_cmp op, int c) /* c: sign of (x - k) */
{
    switch (op) {
    case TSF_CMP_EQ:
        return c == 0;
    case TSF_CMP_NE:
        return c != 0;
    case TSF_CMP_LT:
        return c < 0;
    case TSF_CMP_LE:
        return c <= 0;
    case TSF_CMP_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}

static const rd_series *dev_series(const tsf_reader *r, const rd_device *d, const char *name)
{
    for (size_t k = 0; k < d->nseries; k++)
        if (!strcmp(r->series[d->series0 + k].name, name)) return &r->series[d->series0 + k];
    return NULL;
}

/* Binds leaf n for device d. Table devices: TAG -> constant from the id segment, FIELD -> series (absent:
 * null), ATTRIBUTE -> null, unknown -> TSF_EINVAL. Tree devices: the series (absent: null). */
static tsf_status bind_leaf(rd_fstate *fs, fnode *n, size_t di, const char *(*name)(const void *, size_t),
                            const void *cols, size_t ncols, tsf_error *err)
{
    tsf_reader *r = fs->r;
    const rd_device *d = &r->devices[di];
    const rd_table *tb = &r->tables[d->table];
    const tsf_filter *f = n->f;
    char where[160];
    snprintf(where, sizeof where, " (device %s)", d->name);
    n->mode = LM_CONST;
    n->konst = TV_U;
    if (tb->ncolumns) {
        size_t tag = 0, i = 0;
        for (; i < tb->ncolumns; i++) {
            if (!strcmp(tb->columns[i].name, f->column)) break;
            tag += tb->columns[i].category == TSF_COLUMN_TAG;
        }
        if (i == tb->ncolumns)
            return tsf_err(err, TSF_EINVAL, "filter: column '%s' is not a column of table %s", f->column,
                           tb->name);
        if (tb->columns[i].category == TSF_COLUMN_TAG) {
            if (f->lit != TSF_STRING)
                return tsf_err(err, TSF_EINVAL,
                               "filter: column '%s' is a TAG (STRING) and cannot be compared with %s",
                               f->column, lit_name(f->lit));
            size_t seg = 1 + tag;
            if (seg >= d->id.nseg) return TSF_OK; /* trailing null tag: UNKNOWN */
            tsf_fmt_str sg = tsf_fmt_device_segment(&d->id, (uint32_t)seg);
            if (sg.is_null) return TSF_OK;
            n->konst = op_holds(f->op, bytes_cmp(sg.data, sg.len, f->s, f->slen)) ? TV_T : TV_F;
            return TSF_OK;
        }
        if (tb->columns[i].category != TSF_COLUMN_FIELD) return TSF_OK;
    }
    const rd_series *s = dev_series(r, d, f->column);
    if (!s) return TSF_OK;
    tsf_status st = bind_cmp(n, s->tsm.data_type, where, err);
    if (st) return st;
    for (size_t c = 0; c < ncols; c++)
        if (!strcmp(name(cols, c), f->column)) {
            n->bcol = c;
            return TSF_OK;
        }
    n->mode = LM_CONST; /* not among the batch columns (only in the open-time check) */
    n->konst = TV_U;
    return TSF_OK;
}

void rd_filter_close(rd_fstate *fs)
{
    if (!fs) return;
    const tsf_allocator *a = fs->a;
    for (size_t i = 0; i < fs->nout; i++) {
        rd_buf_free(a, &fs->vals[i]);
        rd_buf_free(a, &fs->valid[i]);
    }
    tsf_free(a, fs->vals, fs->nout * sizeof *fs->vals);
    tsf_free(a, fs->valid, fs->nout * sizeof *fs->valid);
    rd_buf_free(a, &fs->times);
    tsf_free(a, fs->units, fs->nunits * sizeof *fs->units);
    tsf_free(a, fs->bits, fs->nnodes * 2 * fs->words * sizeof(uint64_t));
    tsf_free(a, fs->names, fs->nnodes * sizeof *fs->names);
    tsf_free(a, fs->nodes, fs->nnodes * sizeof *fs->nodes);
    tsf_free(a, fs, sizeof *fs);
}

tsf_status rd_filter_open(tsf_reader *r, const tsf_filter *f, const size_t *devs, size_t ndevs,
                          size_t batch_size, int prune, rd_fstate **out, tsf_error *err)
{
    *out = NULL;
    rd_fstate *fs = tsf_calloc(r->a, 1, sizeof *fs);
    if (!fs) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->r = r;
    fs->a = r->a;
    size_t nn = count_nodes(f);
    fs->words = (batch_size + 63) / 64;
    fs->nodes = tsf_calloc(r->a, nn, sizeof *fs->nodes);
    fs->names = tsf_calloc(r->a, nn, sizeof *fs->names);
    fs->bits = tsf_calloc(r->a, nn * 2 * fs->words, sizeof(uint64_t));
    if (!fs->nodes || !fs->names || !fs->bits) {
        fs->nnodes = nn;
        rd_filter_close(fs);
        return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    }
    flatten(fs, f);
    fs->prune = prune;
    /* every device must accept the filter's literals */
    for (size_t i = 0; i < ndevs; i++)
        for (size_t k = 0; k < fs->nnodes; k++) {
            if (fs->nodes[k].kind != FN_CMP) continue;
            tsf_status st = bind_leaf(fs, &fs->nodes[k], devs[i], NULL, NULL, 0, err);
            if (st) {
                rd_filter_close(fs);
                return st;
            }
        }
    *out = fs;
    return TSF_OK;
}

size_t rd_filter_ncolumns(const rd_fstate *fs)
{
    return fs->nnames;
}

const char *rd_filter_column(const rd_fstate *fs, size_t i)
{
    return fs->names[i];
}

/* Possible truth values of node k given leaf sets in vals (abstract Kleene evaluation). */
static int tv_combine(int kind, int a, int b)
{
    static const int tv[3] = {TV_T, TV_F, TV_U};
    int out = 0;
    if (kind == FN_NOT) {
        for (int i = 0; i < 3; i++)
            if (a & tv[i]) out |= tv[i] == TV_T ? TV_F : tv[i] == TV_F ? TV_T : TV_U;
        return out;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (!(a & tv[i]) || !(b & tv[j])) continue;
            int x = tv[i], y = tv[j];
            if (kind == FN_AND)
                out |= (x == TV_F || y == TV_F) ? TV_F : (x == TV_T && y == TV_T) ? TV_T : TV_U;
            else
                out |= (x == TV_T || y == TV_T) ? TV_T : (x == TV_F && y == TV_F) ? TV_F : TV_U;
        }
    return out;
}

tsf_status rd_filter_device(rd_fstate *fs, size_t d, const char *(*name)(const void *cols, size_t i),
                            const void *cols, size_t ncols, int *skip, tsf_error *err)
{
    int set[64], *sets = set;
    *skip = 0;
    if (fs->nnodes > 64) {
        sets = tsf_calloc(fs->a, fs->nnodes, sizeof *sets);
        if (!sets) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    }
    tsf_status st = TSF_OK;
    for (size_t k = 0; k < fs->nnodes && !st; k++) {
        fnode *n = &fs->nodes[k];
        if (n->kind == FN_CMP) {
            st = bind_leaf(fs, n, d, name, cols, ncols, err);
            sets[k] = n->mode == LM_CONST  ? n->konst
                      : n->ck == CK_ALWAYS ? (n->always ? TV_T : TV_F) | TV_U
                                           : TV_ALL;
        } else {
            sets[k] = tv_combine(n->kind, sets[n->a], n->kind == FN_NOT ? 0 : sets[n->b]);
        }
    }
    if (!st) {
        int root = sets[fs->nnodes - 1];
        /* tags (and absent columns) can decide a device outright; with pruning off its rows are read and
         * evaluated instead (same result: the comparison the tests make) */
        *skip = fs->prune && !(root & TV_T);
        fs->root_true = root == TV_T;
    }
    if (sets != set) tsf_free(fs->a, sets, fs->nnodes * sizeof *sets);
    return st;
}

int rd_filter_uses(const rd_fstate *fs, size_t col)
{
    if (!fs->prune) return 0;
    for (size_t k = 0; k < fs->nnodes; k++)
        if (fs->nodes[k].kind == FN_CMP && fs->nodes[k].mode == LM_COL && fs->nodes[k].bcol == col) return 1;
    return 0;
}

/* ---- pruning by statistics ---------------------------------------------------------------------- */

/* Truth values a comparison can take for x in [lo, hi] (c_lo, c_hi: signs of lo - k and hi - k). */
static int range_tv(tsf_cmp op, int c_lo, int c_hi)
{
    int t = 0, f = 0;
    switch (op) {
    case TSF_CMP_EQ:
        t = c_lo <= 0 && c_hi >= 0, f = !(c_lo == 0 && c_hi == 0);
        break;
    case TSF_CMP_NE:
        t = !(c_lo == 0 && c_hi == 0), f = c_lo <= 0 && c_hi >= 0;
        break;
    case TSF_CMP_LT:
        t = c_lo < 0, f = c_hi >= 0;
        break;
    case TSF_CMP_LE:
        t = c_lo <= 0, f = c_hi > 0;
        break;
    case TSF_CMP_GT:
        t = c_hi > 0, f = c_lo <= 0;
        break;
    default:
        t = c_hi >= 0, f = c_lo < 0;
        break;
    }
    return (t ? TV_T : 0) | (f ? TV_F : 0) | TV_U;
}

#define SGN(a, b) (((a) > (b)) - ((a) < (b)))

static int leaf_tv(const fnode *n, const rd_unit_col *u)
{
    if (n->mode == LM_CONST) return n->konst;
    if (n->ck == CK_ALWAYS) return (n->always ? TV_T : TV_F) | TV_U;
    if (!u) return TV_ALL;
    if (u->all_null) return TV_U;
    const tsf_fmt_stats *s = &u->stats;
    if (!u->has || !u->trusted || s->type != n->ctype) return TV_ALL;
    if (s->count == 0) return TV_U;
    switch (n->ck) {
    case CK_I64: {
        int64_t lo, hi;
        if (n->ctype == TSF_BOOLEAN) {
            if (s->v.b.sum < 0 || (uint64_t)s->v.b.sum > s->count) return TV_ALL;
            lo = (uint64_t)s->v.b.sum == s->count;
            hi = s->v.b.sum > 0;
        } else if (n->ctype == TSF_INT32 || n->ctype == TSF_DATE) {
            lo = s->v.i32.min, hi = s->v.i32.max;
        } else {
            lo = s->v.i64.min, hi = s->v.i64.max;
        }
        if (lo > hi) return TV_ALL;
        return range_tv(n->op, SGN(lo, n->k), SGN(hi, n->k));
    }
    case CK_F64: {
        double lo = n->ctype == TSF_FLOAT ? s->v.f32.min : s->v.f64.min;
        double hi = n->ctype == TSF_FLOAT ? s->v.f32.max : s->v.f64.max;
        if (isnan(lo) || isnan(hi) || isnan(n->kd) || lo > hi) return TV_ALL;
        /* NaN cells are not in min/max: they make every comparison FALSE except != (TRUE) */
        int tv = range_tv(n->op, SGN(lo, n->kd), SGN(hi, n->kd)) | TV_F;
        return n->op == TSF_CMP_NE ? tv | TV_T : tv;
    }
    case CK_BYTES: {
        if (n->ctype != TSF_STRING) return TV_ALL; /* TEXT keeps no min/max; BLOB no statistics */
        const tsf_bytes *lo = &s->v.bin.min, *hi = &s->v.bin.max;
        if ((!lo->data && lo->len) || (!hi->data && hi->len) ||
            bytes_cmp(lo->data, lo->len, hi->data, hi->len) > 0)
            return TV_ALL;
        return range_tv(n->op, bytes_cmp(lo->data, lo->len, n->s, n->slen),
                        bytes_cmp(hi->data, hi->len, n->s, n->slen));
    }
    default:
        return TV_ALL;
    }
}

rd_unit_col *rd_filter_units(rd_fstate *fs, size_t ncols)
{
    if (ncols > fs->nunits) {
        rd_unit_col *u = tsf_realloc(fs->a, fs->units, fs->nunits * sizeof *u, ncols * sizeof *u);
        if (!u) return NULL;
        fs->units = u;
        fs->nunits = ncols;
    }
    memset(fs->units, 0, ncols * sizeof *fs->units);
    return fs->units;
}

int rd_filter_may_match(const rd_fstate *fs, const rd_unit_col *cols, size_t ncols)
{
    if (!fs->prune) return 1;
    int set[64], *sets = set;
    if (fs->nnodes > 64) {
        sets = tsf_calloc(fs->a, fs->nnodes, sizeof *sets);
        if (!sets) return 1;
    }
    for (size_t k = 0; k < fs->nnodes; k++) {
        const fnode *n = &fs->nodes[k];
        if (n->kind == FN_CMP)
            sets[k] = leaf_tv(n, n->mode == LM_COL && n->bcol < ncols ? &cols[n->bcol] : NULL);
        else
            sets[k] = tv_combine(n->kind, sets[n->a], n->kind == FN_NOT ? 0 : sets[n->b]);
    }
    int root = sets[fs->nnodes - 1];
    if (sets != set) tsf_free(fs->a, sets, fs->nnodes * sizeof *sets);
    return (root & TV_T) != 0;
}

/* ---- batch evaluation ------------------------------------------------------------------------- */

/* Validity word w (rows 64w..) of an LSB-first bitmap covering n rows. */
static uint64_t valid_word(const uint8_t *v, size_t w, size_t n)
{
    size_t r0 = w * 64, nb = (n - r0 + 7) / 8;
    if (nb > 8) nb = 8;
    uint64_t x = 0;
    for (size_t k = 0; k < nb; k++) x |= (uint64_t)v[w * 8 + k] << (8 * k);
    return x;
}

#define CMP_LOOP(TYPE, EXPR)                                                                                 \
    for (size_t w = 0; w < nw; w++) {                                                                        \
        size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;                                                   \
        const TYPE *x = (const TYPE *)vals + r0;                                                             \
        uint64_t bits = 0;                                                                                   \
        for (size_t j = 0; j < m; j++) bits |= (uint64_t)(EXPR) << j;                                        \
        T[w] = bits;                                                                                         \
    }

#define CMP_OPS(TYPE, K)                                                                                     \
    switch (op) {                                                                                            \
    case TSF_CMP_EQ:                                                                                         \
        CMP_LOOP(TYPE, x[j] == K) break;                                                                     \
    case TSF_CMP_NE:                                                                                         \
        CMP_LOOP(TYPE, x[j] != K) break;                                                                     \
    case TSF_CMP_LT:                                                                                         \
        CMP_LOOP(TYPE, x[j] < K) break;                                                                      \
    case TSF_CMP_LE:                                                                                         \
        CMP_LOOP(TYPE, x[j] <= K) break;                                                                     \
    case TSF_CMP_GT:                                                                                         \
        CMP_LOOP(TYPE, x[j] > K) break;                                                                      \
    default:                                                                                                 \
        CMP_LOOP(TYPE, x[j] >= K) break;                                                                     \
    }

/* Sign of x - k for a float x and an integer k, exactly; 2 when x is NaN. */
static int cmp_d_i(double x, int64_t k)
{
    if (isnan(x)) return 2;
    if (x >= 9223372036854775808.0) return 1;
    if (x < -9223372036854775808.0) return -1;
    int64_t xi = (int64_t)x; /* truncation: exact integer part */
    if (xi != k) return xi < k ? -1 : 1;
    double fr = x - (double)xi;
    return (fr > 0) - (fr < 0);
}

/* Leaf k: TRUE words in T, FALSE words in F. */
static void eval_leaf(const fnode *nd, const tsf_column_batch *col, size_t n, size_t nw, uint64_t *T,
                      uint64_t *F)
{
    if (nd->mode == LM_CONST || col->type == TSF_VECTOR) {
        int kv = nd->mode == LM_CONST ? nd->konst : TV_U;
        for (size_t w = 0; w < nw; w++) {
            size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
            uint64_t mask = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
            T[w] = kv == TV_T ? mask : 0;
            F[w] = kv == TV_F ? mask : 0;
        }
        return;
    }
    const void *vals = col->values;
    tsf_cmp op = nd->op;
    switch (nd->ck) {
    case CK_ALWAYS:
        for (size_t w = 0; w < nw; w++) T[w] = nd->always ? ~UINT64_C(0) : 0;
        break;
    case CK_I64: {
        int64_t k = nd->k;
        switch (nd->ctype) {
        case TSF_BOOLEAN:
            CMP_OPS(uint8_t, k) break;
        case TSF_INT32:
        case TSF_DATE:
            CMP_OPS(int32_t, k) break;
        default:
            CMP_OPS(int64_t, k) break;
        }
        break;
    }
    case CK_F64: {
        double k = nd->kd;
        if (nd->ctype == TSF_FLOAT) {
            CMP_OPS(float, k)
        } else {
            CMP_OPS(double, k)
        }
        break;
    }
    case CK_F64I:
        for (size_t w = 0; w < nw; w++) {
            size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;
            uint64_t bits = 0;
            for (size_t j = 0; j < m; j++) {
                double x =
                    nd->ctype == TSF_FLOAT ? ((const float *)vals)[r0 + j] : ((const double *)vals)[r0 + j];
                int c = cmp_d_i(x, nd->k);
                bits |= (uint64_t)(c == 2 ? op == TSF_CMP_NE : op_holds(op, c)) << j;
            }
            T[w] = bits;
        }
        break;
    default: /* CK_BYTES */
        for (size_t w = 0; w < nw; w++) {
            size_t r0 = w * 64, m = n - r0 < 64 ? n - r0 : 64;
            const tsf_bytes *x = (const tsf_bytes *)vals + r0;
            uint64_t bits = 0;
            for (size_t j = 0; j < m; j++)
                bits |= (uint64_t)op_holds(op, bytes_cmp(x[j].data, x[j].len, nd->s, nd->slen)) << j;
            T[w] = bits;
        }
    }
    for (size_t w = 0; w < nw; w++) {
        size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
        uint64_t mask = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
        uint64_t v = valid_word(col->validity, w, n) & mask;
        F[w] = ~T[w] & v;
        T[w] &= v;
    }
}

static tsf_status ensure_out(rd_fstate *fs, size_t nvisible, tsf_error *err)
{
    if (nvisible <= fs->nout) return TSF_OK;
    rd_buf *v = tsf_realloc(fs->a, fs->vals, fs->nout * sizeof *v, nvisible * sizeof *v);
    if (!v) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->vals = v;
    rd_buf *b = tsf_realloc(fs->a, fs->valid, fs->nout * sizeof *b, nvisible * sizeof *b);
    if (!b) return tsf_err(err, TSF_ENOMEM, "filter: out of memory");
    fs->valid = b;
    memset(fs->vals + fs->nout, 0, (nvisible - fs->nout) * sizeof *v);
    memset(fs->valid + fs->nout, 0, (nvisible - fs->nout) * sizeof *b);
    fs->nout = nvisible;
    return TSF_OK;
}

tsf_status rd_filter_apply(rd_fstate *fs, tsf_batch *b, tsf_column_batch *cols, size_t ncols, size_t nvisible,
                           size_t *kept, tsf_error *err)
{
    size_t n = b->nrows;
    *kept = n;
    if (fs->root_true || n == 0) return TSF_OK;
    size_t nw = (n + 63) / 64;
    if (nw > fs->words)
        return tsf_err(err, TSF_EINVAL, "filter: batch of %zu rows exceeds the query's batch size", n);
    for (size_t k = 0; k < fs->nnodes; k++) {
        const fnode *nd = &fs->nodes[k];
        uint64_t *T = fs->bits + 2 * k * fs->words, *F = T + fs->words;
        if (nd->kind == FN_CMP) {
            static const tsf_column_batch none = {NULL, TSF_VECTOR, NULL, NULL};
            eval_leaf(nd, nd->mode == LM_COL && nd->bcol < ncols ? &cols[nd->bcol] : &none, n, nw, T, F);
            continue;
        }
        const uint64_t *TA = fs->bits + 2 * nd->a * fs->words, *FA = TA + fs->words;
        const uint64_t *TB = fs->bits + 2 * nd->b * fs->words, *FB = TB + fs->words;
        if (nd->kind == FN_NOT) {
            for (size_t w = 0; w < nw; w++) T[w] = FA[w], F[w] = TA[w];
        } else if (nd->kind == FN_AND) {
            for (size_t w = 0; w < nw; w++) T[w] = TA[w] & TB[w], F[w] = FA[w] | FB[w];
        } else {
            for (size_t w = 0; w < nw; w++) T[w] = TA[w] | TB[w], F[w] = FA[w] & FB[w];
        }
    }
    const uint64_t *sel = fs->bits + 2 * (fs->nnodes - 1) * fs->words;
    size_t m = 0;
    for (size_t w = 0; w < nw; w++) m += (size_t)__builtin_popcountll(sel[w]);
    *kept = m;
    if (m == n || m == 0) return TSF_OK;
    /* compact times and the visible columns into fs's buffers */
    tsf_status st = rd_buf_reserve(fs->a, &fs->times, m * sizeof(int64_t), err);
    if (!st) st = ensure_out(fs, nvisible, err);
    if (st) return st;
    int64_t *to = (int64_t *)fs->times.p;
    size_t o = 0;
    for (size_t w = 0; w < nw; w++)
        for (uint64_t x = sel[w]; x; x &= x - 1) to[o++] = b->times[w * 64 + (size_t)__builtin_ctzll(x)];
    b->times = to;
    for (size_t i = 0; i < nvisible; i++) {
        tsf_column_batch *c = &cols[i];
        if (c->type == TSF_VECTOR) continue; /* all null: the shared zero buffers stay valid */
        size_t esz = rd_cell_size(c->type);
        if ((st = rd_buf_reserve(fs->a, &fs->vals[i], m * esz, err))) return st;
        if ((st = rd_buf_reserve(fs->a, &fs->valid[i], m / 8 + 1, err))) return st;
        const uint8_t *src = c->values, *sv = c->validity;
        uint8_t *dst = fs->vals[i].p, *dv = fs->valid[i].p;
        memset(dv, 0, m / 8 + 1);
        o = 0;
        for (size_t w = 0; w < nw; w++)
            for (uint64_t x = sel[w]; x; x &= x - 1, o++) {
                size_t r = w * 64 + (size_t)__builtin_ctzll(x);
                switch (esz) {
                case 1:
                    dst[o] = src[r];
                    break;
                case 4:
                    memcpy(dst + o * 4, src + r * 4, 4);
                    break;
                case 8:
                    memcpy(dst + o * 8, src + r * 8, 8);
                    break;
                default:
                    memcpy(dst + o * esz, src + r * esz, esz);
                }
                dv[o >> 3] |= (uint8_t)(((sv[r >> 3] >> (r & 7)) & 1u) << (o & 7));
            }
        c->values = dst;
        c->validity = dv;
    }
    b->nrows = m;
    return TSF_OK;
}

/* ---- TS_2DIFF block selection (query.c and tsf-bench filter) ------------------------------------- */

void rd_blocks_select(const tsf_ts2diff_block *b, size_t nb, int64_t tmin, int64_t tmax, int conservative,
                      size_t *b0, size_t *b1)
{
    *b0 = nb;
    *b1 = 0;
    for (size_t i = 0; i < nb; i++) {
        int meets =
            conservative ? b[i].bound_conservative >= tmin : (b[i].bound > tmin || b[i].bound == INT64_MAX);
        if (meets && b[i].first <= tmax) {
            if (*b0 == nb) *b0 = i;
            *b1 = i;
        }
    }
}
