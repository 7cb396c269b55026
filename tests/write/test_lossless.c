/*
 * test_lossless.c - the writer never stores a value it cannot read back bit for bit
 * (doc/writer.md "Values that an encoding cannot store").
 *
 * The matrix: every type x every encoding the writer accepts for it (and AUTO) x every compression,
 * non-aligned and aligned, with adversarial values (integer extremes, NaN payloads, -0.0,
 * subnormals, infinities, long and empty strings, nulls). Each file is written through
 * include/tsf.h, then tsf_verify must find no problem and every value read back must equal what was
 * written, bit for bit (NaN: any NaN, the format stores one canonical NaN). A page an explicit
 * encoding cannot store is refused with TSF_EINVAL naming the series, the value and the encoding;
 * its values are then absent (aligned: null), and the rest of the file still reads back exactly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "test.h"
#include "write/writer.h"

#define T0 1700000000000LL
#define ROWS 2600
#define PAGE 700

static const tsf_type TYPES[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64, TSF_FLOAT,  TSF_DOUBLE, TSF_TEXT,
                                 TSF_TIMESTAMP, TSF_DATE, TSF_BLOB, TSF_STRING};
static const tsf_compression COMPS[] = {TSF_UNCOMPRESSED, TSF_SNAPPY, TSF_GZIP, TSF_LZ4, TSF_ZSTD, TSF_LZMA2};

static size_t width(tsf_type t)
{
    return tsf_type_width(t); /* binary: a tsf_bytes */
}

static int is_bin(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

/* ---- adversarial columns ------------------------------------------------------------------- */

static uint8_t g_long[70000]; /* a long binary value */

static uint32_t f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Value i of a column of type t: runs of extremes, special floats, random bits and smooth data. */
static void gen_value(tsf_type t, size_t i, uint64_t *rng, void *out)
{
    static const int32_t i32x[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1};
    static const int64_t i64x[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};
    static const uint32_t fx[] = {0x7fc00000u, 0x7fa00001u, 0xffc12345u, 0x80000000u, 0x00000001u, 0x007fffffu,
                                  0x7f800000u, 0xff800000u, 0x7f7fffffu, 0x3f800000u};
    static const uint64_t dx[] = {0x7ff8000000000000ull, 0x7ff0000000000001ull, 0xfff8dead0000beefull,
                                  0x8000000000000000ull, 0x0000000000000001ull, 0x000fffffffffffffull,
                                  0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7fefffffffffffffull,
                                  0x3ff0000000000000ull};
    uint64_t r = tsf_test_rand(rng);
    size_t phase = (i / 150) % 4; /* 0 extremes, 1 random bits, 2 smooth, 3 decimals / repeats */
    switch (t) {
    case TSF_BOOLEAN: *(uint8_t *)out = phase == 2 ? (uint8_t)((i / 7) & 1) : (uint8_t)(r & 1); break;
    case TSF_INT32: {
        int32_t v = phase == 0 ? i32x[r % 7] : phase == 1 ? (int32_t)(uint32_t)r
                                           : phase == 2 ? (int32_t)(i * 3) - 100 : (int32_t)(i / 10);
        memcpy(out, &v, 4);
        break;
    }
    case TSF_DATE: {
        static const int32_t dates[] = {10000101, 99991231, 19700101, 20240229, 20001231};
        int32_t v = phase == 2 ? 20200101 + (int32_t)(i % 28) : dates[r % 5];
        memcpy(out, &v, 4);
        break;
    }
    case TSF_INT64:
    case TSF_TIMESTAMP: {
        int64_t v = phase == 0 ? i64x[r % 7] : phase == 1 ? (int64_t)r
                                           : phase == 2 ? T0 + (int64_t)i * 1000 : (int64_t)(i / 10);
        memcpy(out, &v, 8);
        break;
    }
    case TSF_FLOAT: {
        uint32_t v = phase == 0 ? fx[r % 10] : phase == 1 ? (uint32_t)r
                                           : phase == 2 ? f32((float)(20 + sin((double)i / 50)))
                                                        : f32((float)((double)(i % 97) / 4));
        memcpy(out, &v, 4);
        break;
    }
    case TSF_DOUBLE: {
        double d = phase == 2 ? 20 + sin((double)i / 50) : (double)(i % 97) / 100;
        uint64_t v = phase == 0 ? dx[r % 10] : phase == 1 ? r : 0;
        if (phase >= 2) memcpy(&v, &d, 8);
        memcpy(out, &v, 8);
        break;
    }
    default: {
        tsf_bytes *b = out;
        size_t len = phase == 0 ? (r % 3 == 0 ? 0 : r % 3 == 1 ? sizeof g_long - (r >> 40) % 100 : 1)
                                : (size_t)(r % 17);
        size_t off = (size_t)((r >> 20) % (sizeof g_long - len + 1));
        if (phase == 3) off = (i % 5) * 3; /* repeats: a dictionary of five values */
        b->data = g_long + off;
        b->len = len;
        break;
    }
    }
}

typedef struct colv {
    tsf_type type;
    uint8_t *vals; /* ROWS values */
    uint8_t valid[(ROWS + 7) / 8];
} colv;

static void gen_column(colv *c, tsf_type t, uint64_t seed)
{
    c->type = t;
    c->vals = calloc(ROWS, width(t));
    uint64_t rng = seed;
    for (size_t i = 0; i < ROWS; i++) {
        gen_value(t, i, &rng, c->vals + i * width(t));
        int null = (i % 11 == 5) || (i >= 1200 && i < 1250);
        if (!null) c->valid[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
}

static int present(const uint8_t *v, size_t i)
{
    return (v[i >> 3] >> (i & 7)) & 1;
}

static int same_value(tsf_type t, const void *a, const void *b)
{
    if (is_bin(t)) {
        const tsf_bytes *x = a, *y = b;
        return x->len == y->len && (!x->len || !memcmp(x->data, y->data, x->len));
    }
    if (t == TSF_BOOLEAN) return (*(const uint8_t *)a != 0) == (*(const uint8_t *)b != 0);
    if (t == TSF_FLOAT && isnan(*(const float *)a) && isnan(*(const float *)b)) return 1;
    if (t == TSF_DOUBLE && isnan(*(const double *)a) && isnan(*(const double *)b)) return 1;
    return !memcmp(a, b, width(t));
}

/* ---- one file ------------------------------------------------------------------------------ */

typedef struct outcome {
    int refused;      /* calls that returned TSF_EINVAL */
    int bad_message;  /* a refusal whose message lacks the series, the encoding or "value" */
    int other_error;  /* any other failing status */
} outcome;

static void note_status(tsf_status s, const tsf_error *e, const char *series, tsf_encoding enc, outcome *o)
{
    if (s == TSF_OK) return;
    if (s != TSF_EINVAL) {
        fprintf(stderr, "  unexpected %s: %s\n", tsf_status_name(s), e->message);
        o->other_error++;
        return;
    }
    o->refused++;
    const char *en = tsf_encoding_name(enc);
    if (!strstr(e->message, series) || !en || !strstr(e->message, en) || !strstr(e->message, "value")) {
        fprintf(stderr, "  refusal message lacks series/encoding/value: %s\n", e->message);
        o->bad_message++;
    }
}

/* Writes column c (type, enc, comp) to a file at path as series "s" of root.sg.d (aligned or not);
 * returns the outcome of the calls. */
static outcome write_file(const char *path, const colv *c, tsf_encoding enc, tsf_compression comp, int aligned,
                          int threads)
{
    outcome o = {0, 0, 0};
    tsf_error e = {0};
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.page_max_points = PAGE;
    wo.memory_budget = 256 * 1024; /* several chunks per series */
    wo.threads = threads;
    tsf_writer *w = NULL;
    tsf_status s = tsf_writer_open(&w, path, &wo, &e);
    CHECK_OK(s, &e);
    if (s) {
        o.other_error++;
        return o;
    }
    tsf_column_schema sc[2] = {{"s", c->type, enc, comp, TSF_COLUMN_FIELD},
                               {"k", TSF_INT64, TSF_ENC_TS_2DIFF, comp, TSF_COLUMN_FIELD}};
    if (aligned)
        CHECK_OK(tsf_writer_register_aligned(w, "root.sg.d", sc, 2, &e), &e);
    else
        for (size_t i = 0; i < 2; i++) CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &sc[i], &e), &e);
    size_t tab = 333;
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.sg.d", NULL, 0, tab, &t, &e), &e);
    int64_t times[333], keys[333];
    uint8_t vb[(333 + 7) / 8 + 1];
    for (size_t r0 = 0; t && r0 < ROWS; r0 += tab) {
        size_t m = ROWS - r0 < tab ? ROWS - r0 : tab;
        memset(vb, 0, sizeof vb);
        for (size_t r = 0; r < m; r++) {
            times[r] = T0 + (int64_t)(r0 + r) * 1000;
            keys[r] = (int64_t)(r0 + r);
            if (present(c->valid, r0 + r)) vb[r >> 3] |= (uint8_t)(1u << (r & 7));
        }
        CHECK_OK(tsf_tablet_set_times(t, times, m, &e), &e);
        CHECK_OK(tsf_tablet_set_column(t, 0, c->vals + r0 * width(c->type), vb, m, &e), &e);
        CHECK_OK(tsf_tablet_set_column(t, 1, keys, NULL, m, &e), &e);
        s = tsf_writer_write_tablet(w, t, &e);
        note_status(s, &e, "root.sg.d.s", enc, &o);
        if (s) tsf_tablet_reset(t);
        if (r0 == 1332) note_status(tsf_writer_flush(w, &e), &e, "root.sg.d.s", enc, &o);
    }
    tsf_tablet_free(t);
    note_status(tsf_writer_close(w, &e), &e, "root.sg.d.s", enc, &o);
    return o;
}

/* Reads the file back: every present value must equal the input at its row; rows of the key column
 * must all be there. Returns the values of "s" read back; *diffs counts mismatches. */
static size_t read_back_dev(const char *path, const char *dev, const char *const *names, int ncols, const colv *c,
                            size_t *diffs)
{
    tsf_error e = {0};
    tsf_reader *r = NULL;
    size_t got = 0;
    *diffs = 0;
    CHECK_OK(tsf_reader_open(&r, path, NULL, &e), &e);
    if (!r) {
        (*diffs)++;
        return 0;
    }
    size_t di = 0;
    if (tsf_reader_find_device(r, dev, &di, &e) != TSF_OK) { /* nothing stored */
        tsf_reader_close(r);
        return 0;
    }
    for (int ci = 0; ci < ncols; ci++) {
        tsf_query_options qo;
        tsf_query_options_init(&qo);
        qo.devices = &di;
        qo.ndevices = 1;
        qo.columns = &names[ci];
        qo.ncolumns = 1;
        tsf_query *q = NULL;
        CHECK_OK(tsf_query_open(r, &qo, &q, &e), &e);
        const tsf_batch *b;
        size_t keys = 0;
        tsf_status qs = TSF_OK;
        while (q && (qs = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
            const tsf_column_batch *cb = &b->columns[0];
            for (size_t k = 0; k < b->nrows; k++) {
                size_t row = (size_t)((b->times[k] - T0) / 1000);
                int pr = cb->type != TSF_VECTOR && (!cb->validity || present(cb->validity, k));
                if (!pr) continue;
                if (ci == 1) {
                    if (((const int64_t *)cb->values)[k] != (int64_t)row) (*diffs)++;
                    keys++;
                    continue;
                }
                size_t wd = width(c->type);
                if (row >= ROWS || !present(c->valid, row) ||
                    !same_value(c->type, (const uint8_t *)cb->values + k * wd, c->vals + row * wd)) {
                    if (*diffs < 3) fprintf(stderr, "  row %zu differs\n", row);
                    (*diffs)++;
                }
                got++;
            }
        }
        if (qs) fprintf(stderr, "  query %s: %s\n", tsf_type_name(c->type), e.message);
        CHECK_EQ_INT(qs, TSF_OK);
        if (ci == 1) CHECK_EQ_INT(keys, ROWS);
        tsf_query_close(q);
    }
    tsf_reader_close(r);
    return got;
}

static size_t read_back(const char *path, const colv *c, size_t *diffs)
{
    static const char *const names[2] = {"s", "k"};
    return read_back_dev(path, "root.sg.d", names, 2, c, diffs);
}

static size_t read_back_col(const char *path, const colv *c, size_t *diffs)
{
    static const char *const names[1] = {"v"};
    return read_back_dev(path, "root.x.d", names, 1, c, diffs);
}

static size_t count_present(const colv *c)
{
    size_t n = 0;
    for (size_t i = 0; i < ROWS; i++) n += present(c->valid, i);
    return n;
}

static int verify_file(const char *path)
{
    tsf_verify_report rep;
    memset(&rep, 0, sizeof rep);
    tsf_error e = {0};
    tsf_status s = tsf_verify(path, NULL, NULL, &rep, &e);
    CHECK_OK(s, &e);
    CHECK_EQ_INT(rep.problems, 0);
    return s == TSF_OK && rep.problems == 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_matrix(void)
{
    for (size_t i = 0; i < sizeof g_long; i++) g_long[i] = (uint8_t)(i * 131 + (i >> 9));
    char path[] = "/tmp/tsf_test_lossless_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    size_t files = 0, refusals = 0;
    for (size_t ti = 0; ti < sizeof TYPES / sizeof TYPES[0]; ti++) {
        colv c;
        memset(&c, 0, sizeof c);
        gen_column(&c, TYPES[ti], 99 + ti);
        size_t want = count_present(&c);
        for (int ei = 0; ei <= 14; ei++) {
            tsf_encoding enc = ei == 14 ? TSF_ENCODING_AUTO : (tsf_encoding)ei;
            if (enc != TSF_ENCODING_AUTO && !tsf_codec_can_encode(TYPES[ti], enc)) continue;
            for (size_t ki = 0; ki < sizeof COMPS / sizeof COMPS[0]; ki++)
                for (int aligned = 0; aligned < 2; aligned++) {
                    int threads = (ki + aligned) % 3 == 0 ? 3 : 1;
                    outcome o = write_file(path, &c, enc, COMPS[ki], aligned, threads);
                    size_t diffs = 0, got = 0;
                    int ok = !o.other_error && !o.bad_message && verify_file(path);
                    if (ok) got = read_back(path, &c, &diffs);
                    /* a refusal drops values; without one, every value is there */
                    int fail = !ok || diffs || (!o.refused && got != want) || (o.refused && got == want) ||
                               (enc == TSF_ENCODING_AUTO && o.refused);
                    if (fail) {
                        fprintf(stderr, "FAIL %s %s %s %s: refused %d, %zu of %zu values back, %zu differ\n",
                                tsf_type_name(TYPES[ti]),
                                enc == TSF_ENCODING_AUTO ? "AUTO" : tsf_encoding_name(enc),
                                tsf_compression_name(COMPS[ki]), aligned ? "aligned" : "non-aligned", o.refused,
                                got, want, diffs);
                        tsf_test_failures++;
                    }
                    files++;
                    refusals += o.refused != 0;
                }
        }
        free(c.vals);
    }
    unlink(path);
    fprintf(stderr, "  %zu files, %zu with a refused page\n", files, refusals);
    CHECK(files > 500);
}

/* Writes n values of one non-aligned column (one page) and closes; returns the first failing status
 * with its message in *e, and the number of values read back in *back. */
static tsf_status write_one(tsf_type t, tsf_encoding enc, const void *vals, size_t n, tsf_error *e, size_t *back)
{
    char path[] = "/tmp/tsf_test_lossless1_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return TSF_EIO;
    close(fd);
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    tsf_writer *w = NULL;
    tsf_status s = tsf_writer_open(&w, path, &wo, e), s2;
    if (s) return s;
    tsf_column_schema sc = {"v", t, enc, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
    tsf_error e2 = {0};
    CHECK_OK(tsf_writer_register_series(w, "root.x.d", &sc, &e2), &e2);
    tsf_tablet *tb = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.x.d", NULL, 0, n, &tb, &e2), &e2);
    int64_t times[16];
    for (size_t i = 0; i < n; i++) times[i] = T0 + (int64_t)i * 1000;
    CHECK_OK(tsf_tablet_set_times(tb, times, n, &e2), &e2);
    CHECK_OK(tsf_tablet_set_column(tb, 0, vals, NULL, n, &e2), &e2);
    s = tsf_writer_write_tablet(w, tb, e);
    tsf_tablet_free(tb);
    s2 = tsf_writer_close(w, s ? &e2 : e);
    if (!s) s = s2;
    CHECK(verify_file(path));
    colv c = {t, (uint8_t *)vals, {0}};
    memset(c.valid, 0xff, sizeof c.valid);
    size_t diffs = 0;
    *back = read_back_col(path, &c, &diffs);
    CHECK_EQ_INT(diffs, 0);
    unlink(path);
    return s;
}

/* An INT32 SPRINTZ case: Java and the format overflow on these residuals. */
static void test_sprintz_extremes_refused(void)
{
    int32_t v[9] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1, 5, 6};
    tsf_error e = {0};
    size_t back = 99;
    tsf_status s = write_one(TSF_INT32, TSF_ENC_SPRINTZ, v, 9, &e, &back);
    CHECK_EQ_INT(s, TSF_EINVAL);
    fprintf(stderr, "  %s\n", e.message);
    CHECK(strstr(e.message, "root.x.d.v") != NULL);
    CHECK(strstr(e.message, "SPRINTZ") != NULL);
    CHECK(strstr(e.message, "value") != NULL);
    CHECK_EQ_INT(back, 0); /* the page is not stored */
    /* the same values in TS_2DIFF are stored and read back (write_one compares them) */
    CHECK_OK(write_one(TSF_INT32, TSF_ENC_TS_2DIFF, v, 9, &e, &back), &e);
    CHECK_EQ_INT(back, 9);
}

/* GORILLA_V1: the Java reader stops loading bytes after a NaN read through a 10/11 code. The
 * expected readings of [1, NaN, 21] are the Java reference's (1.0, NaN, NaN, FLOAT and DOUBLE). */
static void test_gorilla_v1_java_model(void)
{
    tsf_error e = {0};
    tsf_codec *cd = NULL;
    CHECK_OK(tsf_codec_open(&cd, NULL, &e), &e);
    if (!cd) return;
    uint8_t buf[256];
    for (int dbl = 0; dbl < 2; dbl++) {
        tsf_type t = dbl ? TSF_DOUBLE : TSF_FLOAT;
        float f[3] = {1.0f, NAN, 21.0f};
        double d[3] = {1.0, NAN, 21.0};
        const void *v = dbl ? (const void *)d : (const void *)f;
        size_t len = 0;
        CHECK_OK(tsf_codec_encode(cd, t, TSF_ENC_GORILLA_V1, v, 3, buf, sizeof buf, &len, &e), &e);
        uint64_t got = 0;
        CHECK_EQ_INT(tsf_gorilla_v1_java_misread(t, v, 3, buf, len, &got), 2);
        CHECK(dbl ? (got & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (got << 12)
                  : (got & 0x7f800000u) == 0x7f800000u && (got & 0x7fffffu)); /* read as NaN */
        /* a NaN first, last, or repeated through a 0 code is read right */
        float ok1[3] = {NAN, 1.0f, 21.0f}, ok2[3] = {1.0f, 21.0f, NAN};
        double ok3[3] = {NAN, NAN, 1.0};
        CHECK_OK(tsf_codec_encode(cd, TSF_FLOAT, TSF_ENC_GORILLA_V1, ok1, 3, buf, sizeof buf, &len, &e), &e);
        CHECK_EQ_INT(tsf_gorilla_v1_java_misread(TSF_FLOAT, ok1, 3, buf, len, NULL), 3);
        CHECK_OK(tsf_codec_encode(cd, TSF_FLOAT, TSF_ENC_GORILLA_V1, ok2, 3, buf, sizeof buf, &len, &e), &e);
        CHECK_EQ_INT(tsf_gorilla_v1_java_misread(TSF_FLOAT, ok2, 3, buf, len, NULL), 3);
        CHECK_OK(tsf_codec_encode(cd, TSF_DOUBLE, TSF_ENC_GORILLA_V1, ok3, 3, buf, sizeof buf, &len, &e), &e);
        CHECK_EQ_INT(tsf_gorilla_v1_java_misread(TSF_DOUBLE, ok3, 3, buf, len, NULL), 3);
        /* through the writer: refused, our reader would have read it right */
        size_t back = 99;
        tsf_status s = write_one(t, TSF_ENC_GORILLA_V1, v, 3, &e, &back);
        CHECK_EQ_INT(s, TSF_EINVAL);
        CHECK(strstr(e.message, "GORILLA_V1") != NULL && strstr(e.message, "Java") != NULL);
        CHECK_EQ_INT(back, 0);
        CHECK_OK(write_one(t, TSF_ENC_GORILLA_V1, dbl ? (const void *)ok3 : (const void *)ok1, 3, &e, &back), &e);
        CHECK_EQ_INT(back, 3);
    }
    tsf_codec_close(cd);
}

int main(void)
{
    TSF_RUN(test_sprintz_extremes_refused);
    TSF_RUN(test_gorilla_v1_java_model);
    TSF_RUN(test_matrix);
    return tsf_test_finish();
}
