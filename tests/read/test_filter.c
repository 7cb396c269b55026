/*
 * test_filter.c - value filters (tsf.h "value filters"): the parser (accepted forms, errors naming the
 * offset), format/parse round trips, the constructors; filtered queries against an independent
 * reference evaluator over writer-made files (tree aligned and non-aligned, table model with tags),
 * seeded random filters over random data with nulls, pruning counters, pruning on/off equality, and the
 * conservative TS_2DIFF block bound.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen_file.h"
#include "test.h"
#include "tsf_experimental.h"

static char *fmt(const tsf_filter *f)
{
    static char buf[4096];
    size_t n = tsf_filter_format(f, buf, sizeof buf);
    CHECK(n < sizeof buf);
    return buf;
}

/* parse(text) must succeed and format as `want`; and parse(want) formats as want again. */
static void parse_as(const char *text, const char *want)
{
    tsf_filter *f = NULL;
    tsf_error e;
    CHECK_OK(tsf_filter_parse(&f, text, &e), &e);
    if (!f) {
        fprintf(stderr, "  text: %s\n", text);
        return;
    }
    char got[4096];
    snprintf(got, sizeof got, "%s", fmt(f));
    if (strcmp(got, want)) {
        fprintf(stderr, "  parse(%s)\n  got  %s\n  want %s\n", text, got, want);
        tsf_test_failures++;
    }
    tsf_filter *g = NULL;
    CHECK_OK(tsf_filter_parse(&g, got, &e), &e);
    if (g && strcmp(fmt(g), got)) {
        fprintf(stderr, "  round trip of %s gave %s\n", got, fmt(g));
        tsf_test_failures++;
    }
    tsf_filter_free(f);
    tsf_filter_free(g);
}

static void test_parse_forms(void)
{
    parse_as("a > 1", "a > 1");
    parse_as("temp > 3.5 and (status = 'ok' or not humidity <= 20)",
             "temp > 3.5 and (status = 'ok' or not humidity <= 20)");
    parse_as("a=1 AND b<>2 Or c!=3", "a = 1 and b != 2 or c != 3");
    parse_as("a == 1", "a = 1");
    parse_as("a < -5 and b >= +7 and c <= -0.25", "a < -5 and b >= 7 and c <= -0.25");
    parse_as("5 < a", "a > 5");
    parse_as("'x' >= s", "s <= 'x'");
    parse_as("true = flag", "flag = true");
    parse_as("flag = FALSE", "flag = false");
    parse_as("s = 'it''s'", "s = 'it''s'");
    parse_as("s = ''", "s = ''");
    parse_as("\"my col\" = 1", "\"my col\" = 1");
    parse_as("\"a\"\"b\" = 1", "\"a\"\"b\" = 1");
    parse_as("\"and\" = 1", "\"and\" = 1");
    parse_as("\"1x\" = 1", "\"1x\" = 1");
    parse_as("root.sg.d1.s_1$ > 1", "root.sg.d1.s_1$ > 1");
    parse_as("x > 1e3", "x > 1e+03");
    parse_as("x > 1234.5e1", "x > 12345.0");
    parse_as("x > 1.5E-3", "x > 0.0015");
    parse_as("x > .5", "x > 0.5");
    parse_as("x > 5.", "x > 5.0");
    parse_as("x > 0.1", "x > 0.1");
    parse_as("x != nan and y < -inf or z > Infinity", "x != nan and y < -inf or z > inf");
    parse_as("x > 9223372036854775807 and y < -9223372036854775808",
             "x > 9223372036854775807 and y < -9223372036854775808");
    parse_as("not not a = 1", "not not a = 1");
    parse_as("not (a = 1 or b = 2) and c = 3", "not (a = 1 or b = 2) and c = 3");
    parse_as("a=1 or b=2 and c=3", "a = 1 or b = 2 and c = 3");
    parse_as("((((a = 1))))", "a = 1");
    parse_as("(a = 1 or b = 2) and c = 3", "(a = 1 or b = 2) and c = 3");
    parse_as("a = 1 and (b = 2 and c = 3)", "a = 1 and (b = 2 and c = 3)"); /* right-nested: kept */
    parse_as("a = 1 or (b = 2 or c = 3) or d = 4", "a = 1 or (b = 2 or c = 3) or d = 4");
    parse_as("((a = 1 and b = 2)) and c = 3", "a = 1 and b = 2 and c = 3");
    parse_as("not (not (a = 1))", "not not a = 1");
    parse_as("\t a\n>\r1 ", "a > 1");
    parse_as("\xe6\xb8\xa9\xe5\xba\xa6 > 1", "\xe6\xb8\xa9\xe5\xba\xa6 > 1"); /* UTF-8 name */
    parse_as("s = '\xe6\x97\xa5'", "s = '\xe6\x97\xa5'");
    /* IS [NOT] NULL and the row time */
    parse_as("x IS NULL", "x is null");
    parse_as("x is not NULL and not y Is Null", "x is not null and not y is null");
    parse_as("\"my col\" is null or a = 1", "\"my col\" is null or a = 1");
    parse_as("\"is\" is null", "is is null");
    parse_as("time >= 5 and TIME < -7", "time >= 5 and time < -7");
    parse_as("5 < Time", "time > 5");
    parse_as("\"time\" > 5 and time > 5", "\"time\" > 5 and time > 5");
    parse_as("not (time = 3 or x is null)", "not (time = 3 or x is null)");
}

static int parse_time_cb(void *ctx, const char *text, int64_t *out)
{
    (void)ctx;
    if (strcmp(text, "noon")) return 1;
    *out = 43200000;
    return 0;
}

/* tsf_filter_parse_with: string literals of time terms go through parse_time. */
static void test_parse_time_strings(void)
{
    tsf_filter_parse_options o;
    tsf_filter_parse_options_init(&o);
    o.parse_time = parse_time_cb;
    tsf_filter *f = NULL;
    tsf_error e;
    CHECK_OK(tsf_filter_parse_with(&f, "time >= 'noon' and 'noon' > time and s = 'noon'", &o, &e), &e);
    CHECK(f && !strcmp(fmt(f), "time >= 43200000 and time < 43200000 and s = 'noon'"));
    tsf_filter_free(f);
    f = (tsf_filter *)1;
    CHECK_EQ_INT(tsf_filter_parse_with(&f, "time > 'midnight'", &o, &e), TSF_EINVAL);
    CHECK(f == NULL && strstr(e.message, "'midnight' at offset 7 is not a time"));
    o.struct_size = 3;
    CHECK_EQ_INT(tsf_filter_parse_with(&f, "a = 1", &o, &e), TSF_EINVAL);
}

/* parse must fail with TSF_EINVAL and a message containing `want`. */
static void parse_fails(const char *text, const char *want)
{
    tsf_filter *f = (tsf_filter *)1;
    tsf_error e;
    memset(&e, 0, sizeof e);
    tsf_status st = tsf_filter_parse(&f, text, &e);
    CHECK_EQ_INT(st, TSF_EINVAL);
    CHECK(f == NULL);
    if (!strstr(e.message, want)) {
        fprintf(stderr, "  parse(%s): message '%s' lacks '%s'\n", text, e.message, want);
        tsf_test_failures++;
    }
}

static void test_parse_errors(void)
{
    parse_fails("", "empty expression");
    parse_fails("   ", "empty expression");
    parse_fails("a", "comparison operator (= != <> < <= > >=) or IS [NOT] NULL at offset 1");
    parse_fails("a >", "literal (number, 'string', true/false) at offset 3");
    parse_fails("a > b", "column-to-column comparison at offset 4");
    parse_fails("a > 1 b", "expected AND, OR or the end at offset 6");
    parse_fails("a > 1 and", "at offset 9, found end of text");
    parse_fails("(a > 1", "'(' at offset 0 is never closed");
    parse_fails("a > 1)", "unmatched ')' at offset 5");
    parse_fails("a > 'abc", "unterminated string starting at offset 4");
    parse_fails("\"abc > 1", "unterminated quoted column name starting at offset 0");
    parse_fails("\"\" > 1", "empty column name at offset 0");
    parse_fails("a ! 1", "'!' must be followed by '=' at offset 2");
    parse_fails("a > 1.2.3", "malformed number at offset 4");
    parse_fails("a > 12abc", "malformed number at offset 4");
    parse_fails("a > 1e", "malformed exponent at offset 5");
    parse_fails("a > -", "malformed number at offset 4");
    parse_fails("a > -x", "'-' must start a number at offset 4");
    parse_fails("a > 9223372036854775808", "does not fit in 64 bits");
    parse_fails("a > -9223372036854775809", "does not fit in 64 bits");
    parse_fails("a # 1", "unexpected character '#' (0x23) at offset 2");
    parse_fails("1 > 2", "column name at offset 4");
    parse_fails("and a > 1", "comparison, NOT or '(' at offset 0");
    parse_fails("a > 1 or or b > 1", "at offset 9");
    parse_fails("not", "at offset 3");
    parse_fails("()", "at offset 1");
    parse_fails("a > true > 1", "at offset 9");
    parse_fails("a is", "NULL or NOT NULL after IS at offset 4");
    parse_fails("a is not 5", "NULL after IS NOT at offset 9");
    parse_fails("a is \"null\"", "NULL or NOT NULL after IS at offset 5");
    parse_fails("a is null is null", "AND, OR or the end at offset 10");
    parse_fails("time is null", "time at offset 0 is never null");
    parse_fails("time > 1.5", "time at offset 7 compares with an integer in the file's time unit, not number");
    parse_fails("time > '2024-01-01'", "compares with an integer in the file's time unit, not '2024-01-01'");
    parse_fails("'x' < time", "compares with an integer in the file's time unit, not 'x'");
    parse_fails("time > x", "column-to-column comparison at offset 7");
    /* nesting is bounded (no stack exhaustion on hostile text) */
    char deep[2000];
    memset(deep, '(', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    parse_fails(deep, "nested deeper than");
    char nots[4001];
    for (int i = 0; i < 1000; i++) memcpy(nots + 4 * i, "not ", 4);
    nots[4000] = '\0';
    parse_fails(nots, "nested deeper than");
    /* an error after a parenthesised operand of NOT frees what was built (ASan leak check) */
    parse_fails("not not (a = 1 or b = 2) #nd c = 3", "unexpected character '#' (0x23) at offset 25");
    parse_fails("not (a = 1) 'x", "unterminated string starting at offset 12");
}

/* parse(text), then format -> parse -> format must be a fixed point equal to `want` (NULL: don't care);
 * returns the formatted length. */
static size_t round_trips(const char *text, const char *want)
{
    tsf_filter *f = NULL, *g = NULL;
    tsf_error e;
    CHECK_OK(tsf_filter_parse(&f, text, &e), &e);
    if (!f) return 0;
    size_t n = tsf_filter_format(f, NULL, 0);
    char *a = malloc(n + 1), *b = malloc(n + 1);
    CHECK(a && b);
    tsf_filter_format(f, a, n + 1);
    if (want && strcmp(a, want)) {
        fprintf(stderr, "  formatted %.200s\n  want      %.200s\n", a, want);
        tsf_test_failures++;
    }
    CHECK_OK(tsf_filter_parse(&g, a, &e), &e);
    if (g) {
        CHECK_EQ_INT(tsf_filter_format(g, b, n + 1), n);
        CHECK(!strcmp(a, b));
    }
    tsf_filter_free(f);
    tsf_filter_free(g);
    free(a);
    free(b);
    return n;
}

/* Long chains and nesting up to the parser's limit format to text that parses back: chains of one
 * operator are written flat, and no parenthesis is added that the parsed text did not need. */
/* tsf_filter_columns: distinct names in text order; a short array gets an upper bound to retry with. */
static void test_filter_columns(void)
{
    tsf_filter *f = NULL;
    tsf_error e;
    CHECK_OK(tsf_filter_parse(&f, "b > 1 and (a = 2 or not b < 3) and \"c d\" = 'x' and a != 4", &e), &e);
    const char *names[8];
    size_t n = tsf_filter_columns(f, names, 8);
    CHECK_EQ_INT(n, 3);
    CHECK(!strcmp(names[0], "b") && !strcmp(names[1], "a") && !strcmp(names[2], "c d"));
    const char *one[1];
    size_t m = tsf_filter_columns(f, one, 1);
    CHECK(m > 1);
    CHECK(!strcmp(one[0], "b"));
    const char **big = malloc(m * sizeof *big);
    CHECK(big != NULL);
    CHECK_EQ_INT(tsf_filter_columns(f, big, m), 3);
    free(big);
    CHECK_EQ_INT(tsf_filter_columns(NULL, names, 8), 0);
    tsf_filter_free(f);
    /* time terms name no column; IS NULL names its column */
    CHECK_OK(tsf_filter_parse(&f, "time > 3 and (z is null or time < 9) and \"time\" = 1", &e), &e);
    n = tsf_filter_columns(f, names, 8);
    CHECK_EQ_INT(n, 2);
    CHECK(n == 2 && !strcmp(names[0], "z") && !strcmp(names[1], "time"));
    tsf_filter_free(f);
}

static void test_format_depth(void)
{
    enum { TERMS = 1000 };
    static char text[TERMS * 16];
    for (int op = 0; op < 2; op++) { /* a = 0 and a = 1 and ...; the same with or */
        size_t l = 0;
        for (int i = 0; i < TERMS; i++)
            l += (size_t)snprintf(text + l, sizeof text - l, "%sa = %d", i ? (op ? " or " : " and ") : "", i);
        round_trips(text, text);
    }
    /* the same chain built with the constructors (left-deep, as the parser builds it) */
    tsf_error e;
    tsf_filter *x = NULL;
    for (int i = 0; i < TERMS; i++) {
        tsf_value v;
        memset(&v, 0, sizeof v);
        v.v.i64 = i;
        tsf_filter *c;
        CHECK_OK(tsf_filter_cmp(&c, "a", TSF_CMP_EQ, TSF_INT64, &v, &e), &e);
        if (!x)
            x = c;
        else
            CHECK_OK(tsf_filter_and(&x, x, c, &e), &e);
    }
    size_t n = tsf_filter_format(x, text, sizeof text);
    CHECK(n < sizeof text);
    round_trips(text, text);
    tsf_filter_free(x);
    /* 199 NOTs, 199 parentheses, and 99 alternations of AND and OR: each at the parser's depth limit */
    size_t l = 0;
    for (int i = 0; i < 199; i++) l += (size_t)snprintf(text + l, sizeof text - l, "not ");
    snprintf(text + l, sizeof text - l, "a = 1");
    round_trips(text, text);
    l = 0;
    for (int i = 0; i < 199; i++) text[l++] = '(';
    l += (size_t)snprintf(text + l, sizeof text - l, "a = 1");
    for (int i = 0; i < 199; i++) text[l++] = ')';
    text[l] = '\0';
    round_trips(text, "a = 1");
    l = 0;
    for (int i = 0; i < 199; i++)
        l += (size_t)snprintf(text + l, sizeof text - l, "a = %d %s (", i, i & 1 ? "or" : "and");
    l += (size_t)snprintf(text + l, sizeof text - l, "c = 1");
    for (int i = 0; i < 199; i++) text[l++] = ')';
    text[l] = '\0';
    round_trips(text, NULL); /* an AND inside an OR loses its (redundant) parentheses */
}

static void test_constructors(void)
{
    tsf_error e;
    tsf_value v;
    memset(&v, 0, sizeof v);
    tsf_filter *a, *b, *c, *d, *x;
    v.v.i64 = -42;
    CHECK_OK(tsf_filter_cmp(&a, "i", TSF_CMP_LE, TSF_INT64, &v, &e), &e);
    v.v.d = 0.1;
    CHECK_OK(tsf_filter_cmp(&b, "my col", TSF_CMP_GT, TSF_DOUBLE, &v, &e), &e);
    v.v.bytes.data = (const uint8_t *)"q'x";
    v.v.bytes.len = 3;
    CHECK_OK(tsf_filter_cmp(&c, "s", TSF_CMP_NE, TSF_STRING, &v, &e), &e);
    v.v.b = 7;
    CHECK_OK(tsf_filter_cmp(&d, "not", TSF_CMP_EQ, TSF_BOOLEAN, &v, &e), &e);
    CHECK_OK(tsf_filter_and(&a, a, b, &e), &e);
    CHECK_OK(tsf_filter_not(&c, c, &e), &e);
    CHECK_OK(tsf_filter_or(&c, c, d, &e), &e);
    CHECK_OK(tsf_filter_and(&x, a, c, &e), &e);
    const char *want = "i <= -42 and \"my col\" > 0.1 and (not s != 'q''x' or \"not\" = true)";
    CHECK(!strcmp(fmt(x), want));
    /* format: needed length, truncation keeps a terminated prefix */
    size_t need = tsf_filter_format(x, NULL, 0);
    CHECK_EQ_INT(need, strlen(want));
    char small[10];
    CHECK_EQ_INT(tsf_filter_format(x, small, sizeof small), strlen(want));
    CHECK(!memcmp(small, want, 9) && small[9] == '\0');
    tsf_filter_free(x);
    /* misuse */
    CHECK_EQ_INT(tsf_filter_cmp(&a, "i", (tsf_cmp)99, TSF_INT64, &v, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_filter_cmp(&a, "i", TSF_CMP_EQ, TSF_FLOAT, &v, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_filter_cmp(&a, "", TSF_CMP_EQ, TSF_INT64, &v, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_filter_cmp(&a, NULL, TSF_CMP_EQ, TSF_INT64, &v, &e), TSF_EINVAL);
    v.v.i64 = 1;
    CHECK_OK(tsf_filter_cmp(&a, "i", TSF_CMP_EQ, TSF_INT64, &v, &e), &e);
    CHECK_EQ_INT(tsf_filter_and(&b, a, NULL, &e), TSF_EINVAL); /* takes ownership of a: no leak (ASan) */
    CHECK(b == NULL);
    CHECK_EQ_INT(tsf_filter_not(&b, NULL, &e), TSF_EINVAL);
    tsf_filter_free(NULL);
    /* IS [NOT] NULL and time terms */
    CHECK_OK(tsf_filter_is_null(&a, "and", 0, &e), &e);
    CHECK_OK(tsf_filter_is_null(&b, "v", 1, &e), &e);
    CHECK_OK(tsf_filter_time(&c, TSF_CMP_GE, INT64_MIN, &e), &e);
    CHECK_OK(tsf_filter_or(&a, a, b, &e), &e);
    CHECK_OK(tsf_filter_and(&x, c, a, &e), &e);
    CHECK(!strcmp(fmt(x), "time >= -9223372036854775808 and (\"and\" is null or v is not null)"));
    tsf_filter_free(x);
    CHECK_EQ_INT(tsf_filter_is_null(&a, "", 0, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_filter_is_null(&a, NULL, 0, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_filter_time(&a, (tsf_cmp)6, 0, &e), TSF_EINVAL);
}

/* Random doubles and integers survive cmp -> format -> parse bit for bit. */
static void test_literal_round_trip(void)
{
    uint64_t seed = 7;
    tsf_error e;
    for (int k = 0; k < 3000; k++) {
        uint64_t r = tsf_test_rand(&seed);
        tsf_value v;
        memset(&v, 0, sizeof v);
        tsf_type lt = (k & 1) ? TSF_DOUBLE : TSF_INT64;
        if (lt == TSF_DOUBLE) {
            if (k % 6 == 1) {
                double d = (double)(int64_t)r / 1e6;
                v.v.d = d;
            } else {
                memcpy(&v.v.d, &r, 8);
            }
        } else {
            v.v.i64 = (int64_t)r >> (k % 64);
        }
        tsf_filter *f, *g = NULL;
        CHECK_OK(tsf_filter_cmp(&f, "x", TSF_CMP_EQ, lt, &v, &e), &e);
        char text[256];
        tsf_filter_format(f, text, sizeof text);
        CHECK_OK(tsf_filter_parse(&g, text, &e), &e);
        if (!g) {
            fprintf(stderr, "  text %s\n", text);
            tsf_filter_free(f);
            continue;
        }
        char again[256];
        tsf_filter_format(g, again, sizeof again);
        CHECK(!strcmp(text, again));
        /* the parsed literal is the same value: compare the formatted forms of a bit-exact re-cmp */
        if (lt == TSF_DOUBLE && !isnan(v.v.d)) {
            double back = strtod(strchr(text, '=') + 2, NULL);
            if (strstr(text, "inf")) back = strstr(text, "-inf") ? -INFINITY : INFINITY;
            CHECK(memcmp(&back, &v.v.d, 8) == 0);
        }
        tsf_filter_free(f);
        tsf_filter_free(g);
    }
}

/* ---- filtered queries against an independent reference ------------------------------------------ */

/* A test-side filter tree: evaluated here with its own code, sent to the library as text. */
typedef struct tnode {
    int kind; /* 0 cmp, 1 and, 2 or, 3 not */
    int test; /* kind 0: 0 `col op literal`, 1 `col IS NULL`, 2 `col IS NOT NULL`, 3 `time op i` */
    int a, b;
    char col[36];
    tsf_cmp op;
    tsf_type lt; /* TSF_INT64, TSF_DOUBLE, TSF_BOOLEAN, TSF_STRING */
    int64_t i;
    double d;
    char s[40];
} tnode;

typedef struct tfilter {
    tnode n[64];
    int nn, root;
} tfilter;

static void tf_text(const tfilter *f, int k, char *out, size_t cap)
{
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
    const tnode *n = &f->n[k];
    size_t l = strlen(out);
    if (n->kind == 0 && n->test == 3) { /* the keyword in any case */
        snprintf(out + l, cap - l, "%s %s %lld", n->i & 1 ? "TIME" : "time", ops[n->op], (long long)n->i);
        return;
    }
    if (n->kind == 0) {
        char lit[64];
        if (n->lt == TSF_INT64)
            snprintf(lit, sizeof lit, "%lld", (long long)n->i);
        else if (n->lt == TSF_BOOLEAN)
            snprintf(lit, sizeof lit, "%s", n->i ? "TRUE" : "false");
        else if (n->lt == TSF_STRING) {
            size_t o = 0;
            lit[o++] = '\'';
            for (const char *c = n->s; *c; c++) {
                if (*c == '\'') lit[o++] = '\'';
                lit[o++] = *c;
            }
            lit[o++] = '\'';
            lit[o] = '\0';
        } else if (isnan(n->d))
            snprintf(lit, sizeof lit, "NaN");
        else {
            snprintf(lit, sizeof lit, "%.17g", n->d);
            if (!strpbrk(lit, ".e")) strcat(lit, ".0");
        }
        char col[80];
        size_t o = 0;
        col[o++] = '"';
        for (const char *c = n->col; *c; c++) {
            if (*c == '"') col[o++] = '"';
            col[o++] = *c;
        }
        col[o++] = '"';
        col[o] = '\0';
        if (n->test)
            snprintf(out + l, cap - l, "%s %s", col, n->test == 1 ? "IS NULL" : "is Not null");
        else
            snprintf(out + l, cap - l, "%s %s %s", col, ops[n->op], lit);
        return;
    }
    if (n->kind == 3) {
        snprintf(out + l, cap - l, "NOT (");
        tf_text(f, n->a, out, cap);
        strncat(out, ")", cap - strlen(out) - 1);
        return;
    }
    strncat(out, "(", cap - strlen(out) - 1);
    tf_text(f, n->a, out, cap);
    strncat(out, n->kind == 1 ? ") and (" : ") OR (", cap - strlen(out) - 1);
    tf_text(f, n->b, out, cap);
    strncat(out, ")", cap - strlen(out) - 1);
}

/* One cell: null, or its value widened (ints to i64, floats to d, bytes). */
typedef struct tcell {
    int null;
    tsf_type type;
    int64_t i;
    double d;
    const uint8_t *s;
    size_t n;
} tcell;

static tcell batch_cell(const tsf_batch *b, size_t c, size_t r)
{
    tcell x;
    memset(&x, 0, sizeof x);
    const tsf_column_batch *col = &b->columns[c];
    x.type = col->type;
    x.null = col->type == TSF_VECTOR || !((col->validity[r >> 3] >> (r & 7)) & 1);
    if (x.null) return x;
    switch (col->type) {
    case TSF_BOOLEAN:
        x.i = ((const uint8_t *)col->values)[r];
        break;
    case TSF_INT32:
    case TSF_DATE:
        x.i = ((const int32_t *)col->values)[r];
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        x.i = ((const int64_t *)col->values)[r];
        break;
    case TSF_FLOAT:
        x.d = ((const float *)col->values)[r];
        break;
    case TSF_DOUBLE:
        x.d = ((const double *)col->values)[r];
        break;
    default:
        x.s = ((const tsf_bytes *)col->values)[r].data;
        x.n = ((const tsf_bytes *)col->values)[r].len;
    }
    return x;
}

/* Whether op holds when the left side compares to the right as c (-1, 0, 1). */
static int ref_op(tsf_cmp op, int c)
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

/* Reference comparison: 0 FALSE, 1 TRUE, 2 UNKNOWN. Integers and floats compare exactly through long
 * double (64-bit mantissa on x86, 113 on AArch64: every int64 and double is exact). */
static int ref_cmp(const tcell *x, const tnode *n)
{
    if (x->null) return 2;
    int c;
    int isf = x->type == TSF_FLOAT || x->type == TSF_DOUBLE;
    if (n->lt == TSF_STRING) {
        size_t m = x->n < strlen(n->s) ? x->n : strlen(n->s);
        c = m ? memcmp(x->s, n->s, m) : 0;
        if (!c) c = (x->n > strlen(n->s)) - (x->n < strlen(n->s));
    } else {
        long double a = isf ? (long double)x->d : (long double)x->i;
        long double b = n->lt == TSF_DOUBLE ? (long double)n->d : (long double)n->i;
        if (isnan(a) || isnan(b)) return n->op == TSF_CMP_NE;
        c = (a > b) - (a < b);
    }
    return ref_op(n->op, c);
}

typedef struct tcols {
    const tsf_batch *b;
    const char *const *names; /* names of b's columns */
    size_t n;
    tsf_reader *r; /* tag lookup for table devices */
} tcols;

/* Segment of TAG column `name` of device dev's table (1 + its TAG ordinal); -1 when not a TAG. */
static int tag_segment(tsf_reader *r, size_t dev, const char *name)
{
    tsf_device_info di;
    tsf_table_info ti;
    if (tsf_reader_device(r, dev, &di, NULL) || tsf_reader_table(r, di.table, &ti, NULL)) return -1;
    int k = 0;
    for (size_t c = 0; c < ti.ncolumns; c++) {
        if (ti.columns[c].category != TSF_COLUMN_TAG) continue;
        if (!strcmp(ti.columns[c].name, name)) return 1 + k;
        k++;
    }
    return -1;
}

static int is_tag_name(tsf_reader *r, const char *name)
{
    for (size_t t = 0; t < tsf_reader_table_count(r); t++) {
        tsf_table_info ti;
        if (tsf_reader_table(r, t, &ti, NULL)) continue;
        for (size_t c = 0; c < ti.ncolumns; c++)
            if (ti.columns[c].category == TSF_COLUMN_TAG && !strcmp(ti.columns[c].name, name)) return 1;
    }
    return 0;
}

static int ref_eval(const tfilter *f, int k, const tcols *cx, size_t row)
{
    const tnode *n = &f->n[k];
    if (n->kind == 0 && n->test == 3) {
        int64_t t = cx->b->times[row];
        return ref_op(n->op, (t > n->i) - (t < n->i));
    }
    if (n->kind == 0) {
        tcell x;
        memset(&x, 0, sizeof x);
        x.null = 1;
        int seg = tag_segment(cx->r, cx->b->device, n->col);
        if (seg >= 0) {
            tsf_bytes sg;
            tsf_device_info di;
            tsf_reader_device(cx->r, cx->b->device, &di, NULL);
            if ((size_t)seg < di.nsegments &&
                !tsf_reader_device_segment(cx->r, cx->b->device, (size_t)seg, &sg, NULL) && sg.data) {
                x.null = 0;
                x.type = TSF_STRING;
                x.s = sg.data;
                x.n = sg.len;
            }
        } else {
            for (size_t c = 0; c < cx->n; c++)
                if (!strcmp(cx->names[c], n->col)) x = batch_cell(cx->b, c, row);
        }
        if (n->test) return x.null == (n->test == 1);
        return ref_cmp(&x, n);
    }
    int a = ref_eval(f, n->a, cx, row);
    if (n->kind == 3) return a == 2 ? 2 : !a;
    int b = ref_eval(f, n->b, cx, row);
    if (n->kind == 1) return (a == 0 || b == 0) ? 0 : (a == 1 && b == 1) ? 1 : 2;
    return (a == 1 || b == 1) ? 1 : (a == 0 && b == 0) ? 0 : 2;
}

/* Appends the visible cells of row r as text (exact bits) to a growing string. */
typedef struct tstr {
    char *p;
    size_t n, cap;
} tstr;

static void ts_add(tstr *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = '\0';
}

static void row_text(tstr *t, const tsf_batch *b, size_t nvis, size_t r)
{
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%zu@%lld:", b->device, (long long)b->times[r]);
    ts_add(t, tmp, strlen(tmp));
    for (size_t c = 0; c < nvis; c++) {
        tcell x = batch_cell(b, c, r);
        if (x.null)
            snprintf(tmp, sizeof tmp, " -");
        else if (x.type == TSF_FLOAT || x.type == TSF_DOUBLE)
            snprintf(tmp, sizeof tmp, " %a", x.d);
        else if (x.s || x.type == TSF_TEXT || x.type == TSF_STRING || x.type == TSF_BLOB) {
            ts_add(t, " '", 2);
            ts_add(t, (const char *)x.s, x.n);
            snprintf(tmp, sizeof tmp, "'");
        } else
            snprintf(tmp, sizeof tmp, " %lld", (long long)x.i);
        ts_add(t, tmp, strlen(tmp));
    }
    ts_add(t, "\n", 1);
}

typedef struct tquery {
    const char *table;
    size_t dev; /* when table is NULL */
    const char *cols[16];
    size_t ncols;
    int64_t tmin, tmax;
    size_t batch;
    int bound;
    int no_prune; /* experimental no_filter_prune */
} tquery;

/* Runs the query with `where` (NULL = none) and returns its rows as text; *stats filled. */
static int run_query(tsf_reader *r, const tquery *tq, const char *const *cols, size_t ncols,
                     const tsf_filter *where, tstr *out, tsf_query_stats *stats, const tfilter *ref,
                     size_t nvis)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.table = tq->table;
    o.devices = tq->table ? NULL : &tq->dev;
    o.ndevices = tq->table ? 0 : 1;
    o.columns = cols;
    o.ncolumns = ncols;
    o.time_min = tq->tmin;
    o.time_max = tq->tmax;
    o.batch_size = tq->batch;
    o.where = where;
    struct tsf_query_experimental x = {.block_bound = tq->bound, .no_filter_prune = tq->no_prune};
    o.experimental = &x;
    o.threads = tq->batch == 4096 && tq->bound ? 2 : 0; /* the parallel scan filters the same way */
    tsf_query *q = NULL;
    tsf_error e;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    CHECK_OK(st, &e);
    if (st) return -1;
    const tsf_batch *b;
    for (;;) {
        st = tsf_query_next(q, &b, &e);
        CHECK_OK(st, &e);
        if (st || !b) break;
        if (where) CHECK(b->nrows > 0); /* batches left empty by the filter are not returned */
        CHECK_EQ_INT(b->ncolumns, ncols);
        tcols cx = {b, cols, ncols, r};
        for (size_t k = 0; k < b->nrows; k++)
            if (!ref || ref_eval(ref, ref->root, &cx, k) == 1) row_text(out, b, nvis, k);
    }
    tsf_query_get_stats(q, stats);
    tsf_query_close(q);
    return st ? -1 : 0;
}

/* Filtered query == reference-filtered unfiltered query (with the filter's columns added), with pruning
 * on and off. Returns the pruned query's stats. */
static void check_filter(tsf_reader *r, const tquery *tq, const tfilter *tf, tsf_query_stats *pruned,
                         tsf_query_stats *all)
{
    char text[4096] = "";
    tf_text(tf, tf->root, text, sizeof text);
    tsf_filter *f = NULL;
    tsf_error e;
    CHECK_OK(tsf_filter_parse(&f, text, &e), &e);
    if (!f) {
        fprintf(stderr, "  filter: %s\n", text);
        return;
    }
    const char *wide[64];
    size_t nw = 0;
    for (size_t k = 0; k < tq->ncols; k++) wide[nw++] = tq->cols[k];
    for (int k = 0; k < tf->nn; k++) {
        if (tf->n[k].kind || tf->n[k].test == 3 || is_tag_name(r, tf->n[k].col)) continue;
        size_t j = 0;
        while (j < nw && strcmp(wide[j], tf->n[k].col)) j++;
        if (j == nw) wide[nw++] = tf->n[k].col;
    }
    tstr want = {0}, got = {0}, got2 = {0};
    tsf_query_stats s0, s1, s2;
    run_query(r, tq, wide, nw, NULL, &want, &s0, tf, tq->ncols);
    run_query(r, tq, tq->cols, tq->ncols, f, &got, &s1, NULL, tq->ncols);
    tquery full = *tq;
    full.no_prune = 1;
    run_query(r, &full, full.cols, full.ncols, f, &got2, &s2, NULL, full.ncols);
    const char *w = want.p ? want.p : "", *g = got.p ? got.p : "", *g2 = got2.p ? got2.p : "";
    if (strcmp(w, g) || strcmp(w, g2)) {
        fprintf(stderr, "  filter %s (table %s dev %zu, %lld..%lld): %zu/%zu/%zu bytes of rows differ\n",
                text, tq->table ? tq->table : "-", tq->dev, (long long)tq->tmin, (long long)tq->tmax, want.n,
                got.n, got2.n);
        size_t k = 0;
        while (w[k] && w[k] == g[k]) k++;
        fprintf(stderr, "  first difference near: want '%.80s' got '%.80s'\n", w + k, g + k);
        tsf_test_failures++;
    }
    CHECK(s1.rows == s2.rows);
    CHECK(s1.pages_read <= s2.pages_read); /* pruning never reads more */
    CHECK(s1.chunks_read <= s2.chunks_read);
    CHECK(s1.bytes_read <= s2.bytes_read);
    if (pruned) *pruned = s1;
    if (all) *all = s2;
    free(want.p);
    free(got.p);
    free(got2.p);
    tsf_filter_free(f);
}

/* A random-data file: aligned root.r.al (every type, random nulls, random-walk values so statistics
 * prune, NaN in f, lossy d2 with untrusted statistics), non-aligned root.r.na (three series at random
 * rows), jittered times (deltas 1000 + [0, 255]) so TS_2DIFF blocks have width 8. */
#define RF_COLS 10
static const tsf_column_schema RF_AL[RF_COLS] = {
    {"b", TSF_BOOLEAN, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD},
    {"i32", TSF_INT32, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD},
    {"i64", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"f", TSF_FLOAT, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
    {"d", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_ZSTD, TSF_COLUMN_FIELD},
    {"d2", TSF_DOUBLE, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
    {"s", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
    {"t", TSF_TEXT, TSF_ENC_DICTIONARY, TSF_LZ4, TSF_COLUMN_FIELD},
    {"dt", TSF_DATE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
    {"ts", TSF_TIMESTAMP, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
};
static const tsf_column_schema RF_NA[3] = {
    {"x", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD},
    {"y", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
    {"z", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD}};
#define RF_ROWS 3000

static int rf_make(gen_buf *out, uint64_t seed, uint32_t page_points)
{
    tsf_error e;
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, out};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page_points;
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open_callbacks(&w, &cb, &o, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.r.al", RF_AL, RF_COLS, &e);
    for (int k = 0; k < 3 && !st; k++) st = tsf_writer_register_series(w, "root.r.na", &RF_NA[k], &e);
    int64_t t = 0, walk = 0;
    double dw = 0;
    for (size_t i = 0; i < RF_ROWS && !st; i++) {
        t += 1000 + (int64_t)(tsf_test_rand(&seed) % 256);
        walk += (int64_t)(tsf_test_rand(&seed) % 21) - 10;
        dw += (double)((int64_t)(tsf_test_rand(&seed) % 2001) - 1000) / 64.0;
        const char *names[RF_COLS];
        tsf_value v[RF_COLS];
        char sb[2][32];
        memset(v, 0, sizeof v);
        for (int c = 0; c < RF_COLS; c++) {
            names[c] = RF_AL[c].name;
            v[c].is_null = tsf_test_rand(&seed) % 5 == 0;
        }
        v[0].v.b = (walk / 7) & 1;
        v[1].v.i32 = (int32_t)(walk * 3);
        v[2].v.i64 = walk * 1000003 + (int64_t)(tsf_test_rand(&seed) % 3);
        v[3].v.f = (float)dw;
        if (tsf_test_rand(&seed) % 97 == 0) v[3].v.f = NAN;
        v[4].v.d = dw * 3.0;
        v[5].v.d = (double)walk / 4.0;
        snprintf(sb[0], sizeof sb[0], "k%04lld", (long long)(walk + 500));
        v[6].v.bytes.data = (const uint8_t *)sb[0];
        v[6].v.bytes.len = strlen(sb[0]);
        snprintf(sb[1], sizeof sb[1], "%c%d", 'a' + (int)(i % 7), (int)(walk % 5));
        v[7].v.bytes.data = (const uint8_t *)sb[1];
        v[7].v.bytes.len = strlen(sb[1]);
        v[8].v.i32 = 20240101 + (int32_t)((walk + 1000) % 28);
        v[9].v.i64 = t / 2 + walk;
        st = tsf_writer_write_row(w, "root.r.al", t, names, v, RF_COLS, &e);
        for (int k = 0; k < 3 && !st; k++) {
            if (tsf_test_rand(&seed) % 3 == 0) continue;
            tsf_value x;
            char zb[16];
            memset(&x, 0, sizeof x);
            if (k == 0) x.v.i64 = walk;
            if (k == 1) x.v.d = dw;
            if (k == 2) {
                snprintf(zb, sizeof zb, "z%03d", (int)((walk % 100 + 100) % 100));
                x.v.bytes.data = (const uint8_t *)zb;
                x.v.bytes.len = strlen(zb);
            }
            st = tsf_writer_write_row(w, "root.r.na", t + k, &RF_NA[k].name, &x, 1, &e);
        }
        if (!st && (i + 1) % 1000 == 0) st = tsf_writer_flush(w, &e);
    }
    if (st) {
        fprintf(stderr, "writer: %s\n", e.message);
        tsf_writer_abort(w);
        return -1;
    }
    if (tsf_writer_close(w, &e)) {
        fprintf(stderr, "writer close: %s\n", e.message);
        return -1;
    }
    return 0;
}

typedef struct tcol {
    const char *name;
    tsf_type type;
} tcol;

/* A random literal for a column of type t, drawn near the data's ranges so comparisons go both ways. */
static void rand_leaf(tnode *n, const tcol *c, uint64_t *seed)
{
    uint64_t r = tsf_test_rand(seed);
    memset(n, 0, sizeof *n);
    snprintf(n->col, sizeof n->col, "%s", c->name);
    n->op = (tsf_cmp)(r % 6);
    r >>= 3;
    uint64_t t = tsf_test_rand(seed);
    if (t % 9 == 0) { /* IS [NOT] NULL */
        n->test = 1 + (int)((t >> 8) & 1);
        return;
    }
    if (t % 9 == 1) { /* time op i: times run from ~1000 to ~RF_ROWS * 1128 */
        n->test = 3;
        n->i = (int64_t)((t >> 8) % (RF_ROWS * 1200));
        return;
    }
    int64_t small = (int64_t)(r % 201) - 100;
    r >>= 8;
    switch (c->type) {
    case TSF_BOOLEAN:
        n->lt = TSF_BOOLEAN, n->i = r & 1;
        break;
    case TSF_INT32:
    case TSF_INT64:
    case TSF_TIMESTAMP:
    case TSF_DATE: {
        int64_t base = c->type == TSF_INT64       ? small * 1000003
                       : c->type == TSF_DATE      ? 20240101 + small % 28
                       : c->type == TSF_TIMESTAMP ? small * 20000 + 1500000
                                                  : small * 3;
        if (r % 4 == 0) {
            n->lt = TSF_DOUBLE;
            n->d = (double)base + ((r >> 2) % 2 ? 0.5 : 0.0);
        } else {
            n->lt = TSF_INT64;
            n->i = base + (int64_t)((r >> 2) % 3) - 1;
        }
        break;
    }
    case TSF_FLOAT:
    case TSF_DOUBLE:
        if (r % 5 == 0) {
            n->lt = TSF_INT64;
            n->i = small;
        } else if (r % 37 == 1) {
            n->lt = TSF_DOUBLE;
            n->d = NAN;
        } else {
            n->lt = TSF_DOUBLE;
            n->d = (double)small + (double)((r >> 3) % 64) / 64.0;
        }
        break;
    default:
        n->lt = TSF_STRING;
        if (!strcmp(c->name, "region"))
            snprintf(n->s, sizeof n->s, "%s", r % 3 ? (r % 3 == 1 ? "north" : "south") : "east");
        else if (c->name[0] == 's')
            snprintf(n->s, sizeof n->s, "k%04d", (int)(small + 500));
        else if (c->name[0] == 'z')
            snprintf(n->s, sizeof n->s, "z%03d", (int)(small + 100) / 2);
        else
            snprintf(n->s, sizeof n->s, "%c%d", 'a' + (int)(r % 7), (int)(small % 5));
    }
}

static int rand_tree(tfilter *f, const tcol *cols, size_t ncols, uint64_t *seed, int depth)
{
    uint64_t r = tsf_test_rand(seed);
    int k = f->nn++;
    tnode *n = &f->n[k];
    if (depth >= 3 || r % 3 == 0 || f->nn > 50) {
        rand_leaf(n, &cols[(r >> 8) % ncols], seed);
        return k;
    }
    int kind = 1 + (int)((r >> 2) % 3);
    int a = rand_tree(f, cols, ncols, seed, depth + 1);
    int b = kind == 3 ? 0 : rand_tree(f, cols, ncols, seed, depth + 1);
    n = &f->n[k];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->a = a;
    n->b = b;
    return k;
}

static void test_random_filters(void)
{
    gen_buf fb = {0};
    if (rf_make(&fb, 42, 100)) {
        tsf_test_failures++;
        return;
    }
    tsf_reader *r = NULL;
    tsf_error e;
    CHECK_OK(tsf_reader_open_memory(&r, fb.p, fb.n, NULL, &e), &e);
    if (!r) return;
    size_t al, na;
    CHECK_OK(tsf_reader_find_device(r, "root.r.al", &al, &e), &e);
    CHECK_OK(tsf_reader_find_device(r, "root.r.na", &na, &e), &e);
    tcol alc[RF_COLS], nac[3];
    for (int c = 0; c < RF_COLS; c++) alc[c] = (tcol){RF_AL[c].name, RF_AL[c].type};
    for (int c = 0; c < 3; c++) nac[c] = (tcol){RF_NA[c].name, RF_NA[c].type};
    uint64_t seed = 1234;
    uint64_t skipped = 0;
    for (int it = 0; it < 400; it++) {
        int aligned = it % 3 != 2;
        tquery tq;
        memset(&tq, 0, sizeof tq);
        tq.dev = aligned ? al : na;
        const tcol *cols = aligned ? alc : nac;
        size_t nc = aligned ? RF_COLS : 3;
        /* returned columns: a random non-empty subset (so filter columns are often hidden) */
        uint64_t x = tsf_test_rand(&seed);
        for (size_t c = 0; c < nc; c++)
            if ((x >> c) & 1) tq.cols[tq.ncols++] = cols[c].name;
        if (!tq.ncols) tq.cols[tq.ncols++] = cols[x % nc].name;
        tq.tmin = x % 4 == 0 ? (int64_t)((x >> 20) % 2000000) : INT64_MIN;
        tq.tmax = x % 5 == 0 ? tq.tmin + (int64_t)((x >> 30) % 1500000) : INT64_MAX;
        if (tq.tmax < tq.tmin) tq.tmax = INT64_MAX;
        tq.batch = (x >> 40) % 3 == 0 ? 37 : 4096;
        tq.bound = (int)((x >> 44) & 1);
        tfilter tf;
        memset(&tf, 0, sizeof tf);
        tf.root = rand_tree(&tf, cols, nc, &seed, 0);
        tsf_query_stats s;
        check_filter(r, &tq, &tf, &s, NULL);
        skipped += s.pages_skipped + s.chunks_skipped;
        if (tsf_test_failures) break;
    }
    CHECK(skipped > 0);
    tsf_reader_close(r);
    free(fb.p);
}

/* Fixed cases on the writer-made gen_file: counters move where statistics allow, tags prune devices,
 * results equal the reference. */
static void one(tfilter *f, const char *col, tsf_cmp op, tsf_type lt, int64_t i, double d, const char *s)
{
    tnode *n = &f->n[f->nn];
    memset(n, 0, sizeof *n);
    snprintf(n->col, sizeof n->col, "%s", col);
    n->op = op;
    n->lt = lt;
    n->i = i;
    n->d = d;
    if (s) snprintf(n->s, sizeof n->s, "%s", s);
    f->root = f->nn++;
}

static void test_pruning_counters(void)
{
    gen_buf fb = {0};
    char why[600];
    if (gen_file(&fb, 2000, 50, 500, why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        tsf_test_failures++;
        return;
    }
    tsf_reader *r = NULL;
    tsf_error e;
    CHECK_OK(tsf_reader_open_memory(&r, fb.p, fb.n, NULL, &e), &e);
    if (!r) return;
    size_t d1, a1;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &d1, &e), &e);
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &a1, &e), &e);
    tsf_query_stats p, all;
    /* non-aligned: s1 = i*i - 7 ascends; s1 < 10000 keeps rows 0..100 (2 of 40 pages of s1) */
    tquery tq;
    memset(&tq, 0, sizeof tq);
    tq.dev = d1;
    tq.cols[0] = "s1", tq.cols[1] = "s3", tq.ncols = 2;
    tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
    tfilter f;
    memset(&f, 0, sizeof f);
    one(&f, "s1", TSF_CMP_LT, TSF_INT64, 10000, 0, NULL);
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.chunks_skipped >= 3); /* 4 chunks of s1, 3 wholly above */
    CHECK(p.pages_skipped >= 7);
    CHECK_EQ_INT(all.pages_skipped + all.chunks_skipped, 0);
    CHECK(p.rows > 0 && p.rows == all.rows);
    /* aligned: i64 = i*1000003 - 77 ascends; i64 >= 1990 * 1000003 keeps the last ~10 rows */
    memset(&f, 0, sizeof f);
    one(&f, "i64", TSF_CMP_GE, TSF_DOUBLE, 0, 1990.0 * 1000003, NULL);
    tq.dev = a1;
    tq.cols[0] = "str", tq.cols[1] = "d", tq.ncols = 2;
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.chunks_skipped >= 3);
    CHECK(p.pages_skipped >= 9 * 3); /* 9 skipped time pages of the last chunk, each with 2 + 1 value pages */
    CHECK(p.bytes_read < all.bytes_read / 2);
    /* NOT (i64 < X) prunes the same way; NOT (i64 >= X) the other way */
    f.n[1] = f.n[0];
    f.n[1].op = TSF_CMP_LT;
    f.n[0].kind = 3, f.n[0].a = 1, f.nn = 2, f.root = 0;
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.chunks_skipped >= 3);
    /* an OR with an unprunable side prunes nothing; AND with it still prunes */
    memset(&f, 0, sizeof f);
    one(&f, "i64", TSF_CMP_GT, TSF_INT64, 1990LL * 1000003, 0, NULL);
    one(&f, "b", TSF_CMP_EQ, TSF_BOOLEAN, 1, 0, NULL);
    f.n[2].kind = 2, f.n[2].a = 0, f.n[2].b = 1, f.nn = 3, f.root = 2;
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.chunks_skipped, 0);
    f.n[2].kind = 1;
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.chunks_skipped >= 3);
    /* table model: region = 'south' reads only the south device */
    memset(&tq, 0, sizeof tq);
    tq.table = "t1";
    tq.cols[0] = "temp", tq.cols[1] = "hum", tq.ncols = 2;
    tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
    memset(&f, 0, sizeof f);
    one(&f, "region", TSF_CMP_EQ, TSF_STRING, 0, 0, "south");
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.rows == 2000);
    CHECK(p.chunks_read * 2 <= all.chunks_read + 1);
    /* region = 'south' and hum < 3 (nulls in hum) */
    one(&f, "hum", TSF_CMP_LT, TSF_INT64, 3, 0, NULL);
    f.n[2].kind = 1, f.n[2].a = 0, f.n[2].b = 1, f.nn = 3, f.root = 2;
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.rows > 0 && p.rows < 2000);
    /* a tag that matches nothing: no device is read at all */
    memset(&f, 0, sizeof f);
    one(&f, "region", TSF_CMP_GT, TSF_STRING, 0, 0, "zzz");
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.rows, 0);
    CHECK_EQ_INT(p.chunks_read, 0);
    CHECK_EQ_INT(p.bytes_read, 0);
    /* random filters over the whole gen_file too (tree aligned/non-aligned, table with tags) */
    tcol a1c[GEN_A1_COLS];
    for (int c = 0; c < GEN_A1_COLS; c++) a1c[c] = (tcol){GEN_A1[c].name, GEN_A1[c].type};
    tcol t1c[3] = {{"region", TSF_STRING}, {"temp", TSF_FLOAT}, {"hum", TSF_INT32}};
    tcol d1c[3] = {{"s1", TSF_INT64}, {"s2", TSF_DOUBLE}, {"s3", TSF_TEXT}};
    uint64_t seed = 99;
    for (int it = 0; it < 150 && !tsf_test_failures; it++) {
        memset(&tq, 0, sizeof tq);
        tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = it % 2 ? 100 : 4096;
        const tcol *cols;
        size_t nc;
        if (it % 3 == 0) {
            tq.dev = a1, cols = a1c, nc = GEN_A1_COLS;
            tq.cols[0] = "txt", tq.cols[1] = "i32", tq.ncols = 2;
        } else if (it % 3 == 1) {
            tq.table = "t1", cols = t1c, nc = 3;
            tq.cols[0] = "hum", tq.ncols = 1;
        } else {
            tq.dev = d1, cols = d1c, nc = 3;
            tq.cols[0] = "s2", tq.ncols = 1;
        }
        memset(&f, 0, sizeof f);
        f.root = rand_tree(&f, cols, nc, &seed, 0);
        check_filter(r, &tq, &f, NULL, NULL);
    }
    tsf_reader_close(r);
    free(fb.p);
}

/* gen_file's file of n rows (pages of 50 points, a flush every flush rows) open from memory in fb; NULL
 * after a counted failure. */
static tsf_reader *open_gen(gen_buf *fb, size_t n, size_t flush)
{
    char why[600];
    if (gen_file(fb, n, 50, flush, why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        tsf_test_failures++;
        return NULL;
    }
    tsf_reader *r = NULL;
    tsf_error e;
    CHECK_OK(tsf_reader_open_memory(&r, fb->p, fb->n, NULL, &e), &e);
    return r;
}

/* A top-level AND chain of time terms narrows the query's time range: the same rows and the same pages
 * read as that range given as time_min/time_max; a time term under OR narrows nothing. */
static void test_time_term_pruning(void)
{
    gen_buf fb = {0};
    tsf_reader *r = open_gen(&fb, 2000, 500);
    tsf_error e;
    if (!r) return;
    size_t a1;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &a1, &e), &e);
    tquery tq;
    memset(&tq, 0, sizeof tq);
    tq.dev = a1;
    tq.cols[0] = "str", tq.cols[1] = "d", tq.ncols = 2;
    tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
    /* times of rows 700 and 900 */
    int64_t t700 = 0, t900 = 0;
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &a1;
    o.ndevices = 1;
    tsf_query *q = NULL;
    CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
    const tsf_batch *b;
    size_t row = 0;
    while (q && !tsf_query_next(q, &b, &e) && b)
        for (size_t i = 0; i < b->nrows; i++, row++) {
            if (row == 700) t700 = b->times[i];
            if (row == 900) t900 = b->times[i];
        }
    tsf_query_close(q);
    CHECK(t900 > t700);
    tfilter f;
    memset(&f, 0, sizeof f);
    f.n[0].test = 3, f.n[0].op = TSF_CMP_GE, f.n[0].i = t700;
    f.n[1].test = 3, f.n[1].op = TSF_CMP_LT, f.n[1].i = t900;
    f.n[2].test = 2;
    snprintf(f.n[2].col, sizeof f.n[2].col, "d");
    f.n[3].kind = 1, f.n[3].a = 0, f.n[3].b = 1;
    f.n[4].kind = 1, f.n[4].a = 3, f.n[4].b = 2;
    f.nn = 5, f.root = 4;
    tsf_query_stats p, all, ranged;
    check_filter(r, &tq, &f, &p, &all);
    tquery rq = tq;
    rq.tmin = t700, rq.tmax = t900 - 1;
    tstr rows = {0};
    const char *cols[] = {"str", "d"};
    run_query(r, &rq, cols, 2, NULL, &rows, &ranged, NULL, 2);
    CHECK(p.rows > 0 && p.rows <= ranged.rows);
    CHECK_EQ_INT(p.pages_read, ranged.pages_read);
    CHECK(p.pages_read < all.pages_read || all.pages_read == 0);
    /* under OR: no narrowing (every page read), the same rows as the reference */
    f.n[4].kind = 2;
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.pages_read > ranged.pages_read);
    /* contradictory bounds: nothing read */
    f.n[1].op = TSF_CMP_LT, f.n[1].i = t700;
    f.n[4].kind = 1;
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.rows, 0);
    CHECK_EQ_INT(p.pages_read, 0);
    free(rows.p);
    tsf_reader_close(r);
    free(fb.p);
}

/* IS [NOT] NULL on what holds no value: a series the device lacks is null in every row (its rows pass IS
 * NULL without reading the series; IS NOT NULL skips the device unread), and a TAG is decided per device. */
static void test_null_tests(void)
{
    gen_buf fb = {0};
    tsf_reader *r = open_gen(&fb, 500, 100);
    tsf_error e;
    if (!r) return;
    tquery tq;
    memset(&tq, 0, sizeof tq);
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &tq.dev, &e), &e);
    tq.cols[0] = "s1", tq.ncols = 1;
    tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
    tfilter f;
    memset(&f, 0, sizeof f);
    f.n[0].test = 1; /* "str" IS NULL: a column of root.sg1.a1 only */
    snprintf(f.n[0].col, sizeof f.n[0].col, "str");
    f.nn = 1;
    tsf_query_stats p, all;
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.rows, 500);
    f.n[0].test = 2;
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.rows, 0);
    CHECK_EQ_INT(p.pages_read, 0);
    /* TAG region: set on both devices of t1 */
    memset(&tq, 0, sizeof tq);
    tq.table = "t1";
    tq.cols[0] = "temp", tq.ncols = 1;
    tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
    snprintf(f.n[0].col, sizeof f.n[0].col, "region");
    check_filter(r, &tq, &f, &p, &all);
    CHECK(p.rows > 0);
    f.n[0].test = 1;
    check_filter(r, &tq, &f, &p, &all);
    CHECK_EQ_INT(p.rows, 0);
    CHECK_EQ_INT(p.pages_read, 0);
    tsf_reader_close(r);
    free(fb.p);
}

static void test_filter_errors(void)
{
    gen_buf fb = {0};
    char why[600];
    if (gen_file(&fb, 100, 50, 0, why, sizeof why)) {
        tsf_test_failures++;
        return;
    }
    tsf_reader *r = NULL;
    tsf_error e;
    CHECK_OK(tsf_reader_open_memory(&r, fb.p, fb.n, NULL, &e), &e);
    if (!r) return;
    static const struct {
        const char *table, *where, *msg;
    } cases[] = {
        {NULL, "i64 = 'abc'",
         "column 'i64' (device root.sg1.a1) is INT64 and cannot be compared with a string"},
        {NULL, "s3 > 1", "column 's3' (device root.sg1.d1) is TEXT and cannot be compared with an integer"},
        {NULL, "b = 1", "column 'b' (device root.sg1.a1) is BOOLEAN"},
        {NULL, "d = true", "column 'd' (device root.sg1.a1) is DOUBLE and cannot be compared with a boolean"},
        {NULL, "date = '2024-13-01'", "is DATE; '2024-13-01' is not yyyy-mm-dd"},
        {"t1", "region = 5", "column 'region' is a TAG (STRING) and cannot be compared with an integer"},
        {"t1", "nosuch > 1", "column 'nosuch' is not a column of table t1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tsf_filter *f = NULL;
        CHECK_OK(tsf_filter_parse(&f, cases[k].where, &e), &e);
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.table = cases[k].table;
        o.where = f;
        tsf_query *q = NULL;
        memset(&e, 0, sizeof e);
        CHECK_EQ_INT(tsf_query_open(r, &o, &q, &e), TSF_EINVAL);
        CHECK(q == NULL);
        if (!strstr(e.message, cases[k].msg)) {
            fprintf(stderr, "  %s: '%s' lacks '%s'\n", cases[k].where, e.message, cases[k].msg);
            tsf_test_failures++;
        }
        tsf_filter_free(f);
    }
    /* DATE against 'yyyy-mm-dd' works; an absent tree column is null (no row is TRUE) */
    size_t a1;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &a1, &e), &e);
    const char *cases2[] = {"date = '2024-01-05'", "nosuch > 1 or not nosuch > 1"};
    size_t want[] = {0, 0};
    for (size_t i = 0; i < 100; i++) { /* date = 20240101 + i % 28, null when i % 5 == 1 */
        want[0] += i % 28 == 4 && i % 5 != 1;
    }
    for (int k = 0; k < 2; k++) {
        tsf_filter *f = NULL;
        CHECK_OK(tsf_filter_parse(&f, cases2[k], &e), &e);
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.devices = &a1;
        o.ndevices = 1;
        o.where = f;
        tsf_query *q = NULL;
        CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
        const tsf_batch *b;
        size_t rows = 0;
        while (q && !tsf_query_next(q, &b, &e) && b) rows += b->nrows;
        CHECK_EQ_INT(rows, want[k]);
        tsf_query_close(q);
        tsf_filter_free(f);
    }
    tsf_query_options o;
    tsf_query_options_init(&o);
    struct tsf_query_experimental x = {.block_bound = 7};
    o.experimental = &x;
    tsf_query *q = NULL;
    CHECK_EQ_INT(tsf_query_open(r, &o, &q, &e), TSF_EINVAL);
    tsf_reader_close(r);
    free(fb.p);
}

/* Conservative and exact TS_2DIFF block bounds give the same rows; on jittered times the conservative
 * bound decodes at least as many blocks. */
static void test_block_bound(void)
{
    gen_buf fb = {0};
    if (rf_make(&fb, 5, 1000)) {
        tsf_test_failures++;
        return;
    }
    tsf_reader *r = NULL;
    tsf_error e;
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.checked = 0; /* a checked query decodes a partly covered page whole: no blocks to skip */
    CHECK_OK(tsf_reader_open_memory(&r, fb.p, fb.n, &ro, &e), &e);
    if (!r) return;
    size_t al;
    CHECK_OK(tsf_reader_find_device(r, "root.r.al", &al, &e), &e);
    uint64_t seed = 3;
    uint64_t read_a = 0, read_c = 0, skipped_c = 0;
    for (int it = 0; it < 60; it++) {
        tquery tq;
        memset(&tq, 0, sizeof tq);
        tq.dev = al;
        tq.cols[0] = "i64", tq.cols[1] = "s", tq.ncols = 2;
        tq.tmin = (int64_t)(tsf_test_rand(&seed) % 3400000);
        tq.tmax = tq.tmin + (int64_t)(tsf_test_rand(&seed) % 200000);
        tq.batch = 4096;
        tstr a = {0}, c = {0};
        tsf_query_stats sa, sc;
        tq.bound = TSF_BLOCK_BOUND_CONSERVATIVE;
        run_query(r, &tq, tq.cols, tq.ncols, NULL, &a, &sa, NULL, 2);
        tq.bound = TSF_BLOCK_BOUND_EXACT;
        run_query(r, &tq, tq.cols, tq.ncols, NULL, &c, &sc, NULL, 2);
        CHECK(a.n == c.n && (!a.n || !strcmp(a.p, c.p)));
        CHECK_EQ_INT(sa.rows, sc.rows);
        CHECK_EQ_INT(sa.blocks_read + sa.blocks_skipped, sc.blocks_read + sc.blocks_skipped);
        read_a += sa.blocks_read;
        read_c += sc.blocks_read;
        skipped_c += sc.blocks_skipped;
        free(a.p);
        free(c.p);
    }
    CHECK(skipped_c > 0);
    CHECK(read_a > read_c);
    tsf_reader_close(r);
    free(fb.p);
}

/* Random filters over every golden file of the Java reference (tests/data): each
 * table (table model, tags included) or the first devices of each tree table, literals drawn from the
 * data itself, filtered rows == the reference evaluator over the unfiltered rows, pruning on and off.
 * Covers Java-written statistics, lossy float encodings (untrusted statistics) and null tags. */
#define GS_MAX 24
typedef struct gsample {
    tcol c;
    char name[36];
    int n;
    tcell v[GS_MAX];
    char s[GS_MAX][40];
} gsample;

static void gs_leaf(tnode *n, const gsample *g, uint64_t *seed)
{
    uint64_t r = tsf_test_rand(seed);
    memset(n, 0, sizeof *n);
    snprintf(n->col, sizeof n->col, "%s", g->name);
    n->op = (tsf_cmp)(r % 6);
    r >>= 3;
    const tcell *x = g->n ? &g->v[r % (uint64_t)g->n] : NULL;
    const char *xs = g->n ? g->s[r % (uint64_t)g->n] : "a";
    r >>= 5;
    if (r % 7 == 0) { /* IS [NOT] NULL: columns with nulls, TAGs, absent series */
        n->test = 1 + (int)((r >> 3) & 1);
        return;
    }
    switch (g->c.type) {
    case TSF_BOOLEAN:
        n->lt = TSF_BOOLEAN, n->i = x ? x->i : 1;
        break;
    case TSF_INT32:
    case TSF_INT64:
    case TSF_DATE:
    case TSF_TIMESTAMP:
        if (r % 4 == 0)
            n->lt = TSF_DOUBLE, n->d = (double)(x ? x->i : 0) + 0.5;
        else
            n->lt = TSF_INT64,
            n->i = (int64_t)((uint64_t)(x ? x->i : 0) + r % 3 - 1); /* wraps at the int64 ends */
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        if (r % 5 == 0)
            n->lt = TSF_INT64, n->i = x ? (int64_t)fmax(fmin(x->d, 1e15), -1e15) : 0;
        else
            n->lt = TSF_DOUBLE, n->d = x ? x->d : 0.5;
        break;
    default:
        n->lt = TSF_STRING, snprintf(n->s, sizeof n->s, "%s", xs);
    }
}

static int gs_tree(tfilter *f, const gsample *g, size_t ng, uint64_t *seed, int depth)
{
    uint64_t r = tsf_test_rand(seed);
    int k = f->nn++;
    if (depth >= 2 || r % 3 == 0) {
        gs_leaf(&f->n[k], &g[(r >> 8) % ng], seed);
        return k;
    }
    int kind = 1 + (int)((r >> 2) % 3);
    int a = gs_tree(f, g, ng, seed, depth + 1);
    int b = kind == 3 ? 0 : gs_tree(f, g, ng, seed, depth + 1);
    memset(&f->n[k], 0, sizeof f->n[k]);
    f->n[k].kind = kind, f->n[k].a = a, f->n[k].b = b;
    return k;
}

static void gs_add(gsample *g, const tcell *x)
{
    if (x->null || g->n >= GS_MAX) return;
    g->v[g->n] = *x;
    size_t m = x->n < 36 ? x->n : 36, o = 0;
    for (size_t k = 0; k < m; k++) g->s[g->n][o++] = x->s[k] < 0x20 || x->s[k] >= 0x80 ? 'x' : (char)x->s[k];
    g->s[g->n][o] = '\0';
    g->n++;
}

static void golden_one(tsf_reader *r, tquery *tq, gsample *g, size_t ng, uint64_t *seed)
{
    /* sample literals from the data (every 7th non-null cell, at most GS_MAX per column) */
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.table = tq->table;
    o.devices = tq->table ? NULL : &tq->dev;
    o.ndevices = tq->table ? 0 : 1;
    o.columns = tq->cols;
    o.ncolumns = tq->ncols;
    tsf_query *q = NULL;
    tsf_error e;
    if (tsf_query_open(r, &o, &q, &e)) return;
    const tsf_batch *b;
    size_t row = 0;
    while (!tsf_query_next(q, &b, &e) && b)
        for (size_t i = 0; i < b->nrows; i++, row++)
            if (row % 7 == 0)
                for (size_t c = 0; c < tq->ncols; c++) {
                    tcell x = batch_cell(b, c, i);
                    for (size_t k = 0; k < ng; k++)
                        if (!strcmp(g[k].name, tq->cols[c])) gs_add(&g[k], &x);
                }
    tsf_query_close(q);
    for (int it = 0; it < 6 && !tsf_test_failures; it++) {
        tfilter f;
        memset(&f, 0, sizeof f);
        f.root = gs_tree(&f, g, ng, seed, 0);
        tq->bound = it & 1;
        tq->batch = it % 3 ? 4096 : 50;
        check_filter(r, tq, &f, NULL, NULL);
    }
}

static void test_golden_filters(void)
{
    const char *root = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tsfile-java", root);
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    struct dirent *de;
    uint64_t seed = 77;
    int files = 0;
    while ((de = readdir(d)) && !tsf_test_failures) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".tsfile")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len;
        uint8_t *data = tsf_test_read_file(path, &len);
        tsf_reader *r = NULL;
        tsf_error e;
        if (!data || tsf_reader_open_memory(&r, data, len, NULL, &e) || tsf_reader_load_index(r, &e)) {
            tsf_reader_close(r);
            free(data);
            continue;
        }
        files++;
        for (size_t t = 0; t < tsf_reader_table_count(r); t++) {
            tsf_table_info ti;
            if (tsf_reader_table(r, t, &ti, &e) || !ti.ndevices) continue;
            gsample g[16];
            size_t ng = 0;
            tquery tq;
            memset(&tq, 0, sizeof tq);
            tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
            memset(g, 0, sizeof g);
            if (ti.ncolumns) { /* table model: fields returned, tags filtered on */
                tq.table = ti.name;
                for (size_t c = 0; c < ti.ncolumns && ng < 16; c++) {
                    snprintf(g[ng].name, sizeof g[ng].name, "%s", ti.columns[c].name);
                    g[ng].c.name = g[ng].name;
                    g[ng].c.type = ti.columns[c].category == TSF_COLUMN_TAG ? TSF_STRING : ti.columns[c].type;
                    if (ti.columns[c].category == TSF_COLUMN_FIELD && tq.ncols < 16)
                        tq.cols[tq.ncols++] = g[ng].name;
                    if (ti.columns[c].category == TSF_COLUMN_TAG)
                        for (size_t k = 0; k < ti.ndevices; k++) {
                            int seg = tag_segment(r, ti.first_device + k, g[ng].name);
                            tsf_device_info di;
                            tsf_bytes sg;
                            tsf_reader_device(r, ti.first_device + k, &di, NULL);
                            if (seg < 0 || (size_t)seg >= di.nsegments ||
                                tsf_reader_device_segment(r, ti.first_device + k, (size_t)seg, &sg, NULL) ||
                                !sg.data)
                                continue;
                            tcell x = {0, TSF_STRING, 0, 0, sg.data, sg.len};
                            gs_add(&g[ng], &x);
                        }
                    if (ti.columns[c].category == TSF_COLUMN_TAG ||
                        ti.columns[c].category == TSF_COLUMN_FIELD)
                        ng++;
                }
                if (!tq.ncols) continue;
                golden_one(r, &tq, g, ng, &seed);
                continue;
            }
            for (size_t k = 0; k < ti.ndevices && k < 3; k++) { /* tree: a few devices each */
                tsf_device_info di;
                if (tsf_reader_device(r, ti.first_device + k, &di, &e)) continue;
                memset(&tq, 0, sizeof tq);
                tq.dev = ti.first_device + k;
                tq.tmin = INT64_MIN, tq.tmax = INT64_MAX, tq.batch = 4096;
                memset(g, 0, sizeof g);
                ng = 0;
                for (size_t j = 0; j < di.nseries && ng < 16; j++) {
                    tsf_series_info si;
                    if (tsf_reader_series(r, tq.dev, j, &si, &e)) continue;
                    snprintf(g[ng].name, sizeof g[ng].name, "%s", si.measurement);
                    g[ng].c.name = g[ng].name;
                    g[ng].c.type = si.type;
                    tq.cols[tq.ncols++] = g[ng].name;
                    ng++;
                }
                if (ng) golden_one(r, &tq, g, ng, &seed);
            }
        }
        tsf_reader_close(r);
        free(data);
    }
    closedir(d);
    CHECK(files > 50);
}

int main(void)
{
    TSF_RUN(test_parse_forms);
    TSF_RUN(test_parse_errors);
    TSF_RUN(test_parse_time_strings);
    TSF_RUN(test_format_depth);
    TSF_RUN(test_filter_columns);
    TSF_RUN(test_constructors);
    TSF_RUN(test_literal_round_trip);
    TSF_RUN(test_filter_errors);
    TSF_RUN(test_pruning_counters);
    TSF_RUN(test_time_term_pruning);
    TSF_RUN(test_null_tests);
    TSF_RUN(test_random_filters);
    TSF_RUN(test_block_bound);
    TSF_RUN(test_golden_filters);
    return tsf_test_finish();
}
