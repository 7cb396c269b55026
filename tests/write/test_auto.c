/*
 * test_auto.c - TSF_ENCODING_AUTO (src/write/auto.c): the precision check against Java's
 * FloatDecoder arithmetic, the encoding picked for crafted data (and that it is the smallest of the
 * candidates), and bit-exact round trips through our reader for data that looks decimal and then
 * is not (0.1 + 0.2, -0.0, NaN, infinities, huge values, subnormals, FLOAT values that wrap the
 * int range), non-aligned, aligned, table model, every type, with tsf_verify on the files; and
 * that no chunk AUTO writes is more than 2% larger than the best fixed lossless encoding of its rows
 * (bench/autobest.c) over the real series of tests/data/datasets and over regime changes, under
 * every compression.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autobest.h"
#include "test.h"
#include "write/auto.h"

#define T0 1700000000000LL

/* an in-memory output (bench/autobest.h) */
typedef ab_buf membuf;

/* ---- columns of test data ------------------------------------------------------------------ */

typedef struct col {
    const char *name;
    tsf_type type;
    tsf_encoding enc;
    void *vals;     /* n values in the C representation */
    uint8_t *valid; /* LSB-first; NULL = all present */
} col;

static int bit(const uint8_t *v, size_t i)
{
    return !v || ((v[i >> 3] >> (i & 7)) & 1);
}

/* Writes `n` rows of the columns to device `dev` (aligned or not) or table `table` (with one TAG
 * column "tag" = "x" ahead of the columns) in tablets of `tab` rows. */
typedef struct wspec {
    const char *dev; /* tree device, or NULL for the table "t" */
    int aligned;
    col *cols;
    size_t ncols, n, tab;
    uint32_t page_points;
    tsf_compression comp;
    size_t memory_budget;    /* 0 = default */
    int32_t float_precision; /* 0 = default */
} wspec;

static int write_spec(const wspec *s, membuf *out)
{
    tsf_error e = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    if (s->page_points) o.page_max_points = s->page_points;
    if (s->memory_budget) o.memory_budget = s->memory_budget;
    if (s->float_precision) o.float_precision = s->float_precision;
    tsf_write_callbacks cb = {sizeof cb, ab_buf_write, NULL, out};
    tsf_writer *w = NULL;
    out->n = 0;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
    if (!w) return 1;
    size_t k = s->ncols + (s->dev ? 0 : 1);
    tsf_column_schema *sc = calloc(k, sizeof *sc);
    size_t off = s->dev ? 0 : 1;
    if (!s->dev) sc[0] = (tsf_column_schema){"tag", TSF_STRING, TSF_ENC_PLAIN, s->comp, TSF_COLUMN_TAG};
    for (size_t i = 0; i < s->ncols; i++)
        sc[off + i] =
            (tsf_column_schema){s->cols[i].name, s->cols[i].type, s->cols[i].enc, s->comp, TSF_COLUMN_FIELD};
    const char *target = s->dev ? s->dev : "t";
    int bad = 0;
    if (!s->dev)
        CHECK_OK(tsf_writer_register_table(w, "t", sc, k, &e), &e);
    else if (s->aligned)
        CHECK_OK(tsf_writer_register_aligned(w, s->dev, sc, k, &e), &e);
    else
        for (size_t i = 0; i < k; i++) CHECK_OK(tsf_writer_register_series(w, s->dev, &sc[i], &e), &e);
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, target, NULL, 0, s->tab, &t, &e), &e);
    int64_t *times = malloc(s->tab * sizeof *times);
    tsf_bytes *tags = malloc(s->tab * sizeof *tags);
    uint8_t *vb = malloc(s->tab / 8 + 2);
    for (size_t r0 = 0; t && r0 < s->n && !bad; r0 += s->tab) {
        size_t m = s->n - r0 < s->tab ? s->n - r0 : s->tab;
        for (size_t r = 0; r < m; r++) {
            times[r] = T0 + (int64_t)(r0 + r) * 1000;
            tags[r] = (tsf_bytes){(const uint8_t *)"x", 1};
        }
        bad |= tsf_tablet_set_times(t, times, m, &e) != TSF_OK;
        if (!s->dev) bad |= tsf_tablet_set_column(t, 0, tags, NULL, m, &e) != TSF_OK;
        for (size_t i = 0; i < s->ncols; i++) {
            const col *c = &s->cols[i];
            const uint8_t *v = NULL;
            if (c->valid) {
                memset(vb, 0, m / 8 + 2);
                for (size_t r = 0; r < m; r++)
                    if (bit(c->valid, r0 + r)) vb[r >> 3] |= (uint8_t)(1u << (r & 7));
                v = vb;
            }
            bad |= tsf_tablet_set_column(t, off + i, (const uint8_t *)c->vals + r0 * tsf_type_width(c->type),
                                         v, m, &e) != TSF_OK;
        }
        if (!bad) bad |= tsf_writer_write_tablet(w, t, &e) != TSF_OK;
    }
    if (bad) fprintf(stderr, "write: %s\n", e.message);
    CHECK(!bad);
    tsf_tablet_free(t);
    free(times);
    free(tags);
    free(vb);
    free(sc);
    tsf_status st = tsf_writer_close(w, &e);
    CHECK_OK(st, &e);
    return bad || st;
}

static int cell_same(tsf_type t, const void *got, const void *want)
{
    if (t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB) {
        const tsf_bytes *a = got, *b = want;
        return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
    }
    if (t == TSF_BOOLEAN) return (*(const uint8_t *)got != 0) == (*(const uint8_t *)want != 0);
    /* every TsFile float encoding stores one canonical NaN (Java's floatToIntBits/doubleToLongBits) */
    if (t == TSF_DOUBLE && isnan(*(const double *)got) && isnan(*(const double *)want)) return 1;
    if (t == TSF_FLOAT && isnan(*(const float *)got) && isnan(*(const float *)want)) return 1;
    return !memcmp(got, want, tsf_type_width(t)); /* otherwise bit for bit: -0.0, subnormals, infinities */
}

/* Reads every column back and compares cell by cell; returns the number of differences. */
static size_t check_file(const membuf *f, const wspec *s)
{
    tsf_error e = {0};
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, f->p, f->n, NULL, &e), &e);
    if (!r) return 1;
    size_t diffs = 0;
    const char *dev = s->dev ? s->dev : "t.x";
    size_t di = 0;
    CHECK_OK(tsf_reader_find_device(r, dev, &di, &e), &e);
    for (size_t i = 0; i < s->ncols; i++) {
        const col *c = &s->cols[i];
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.devices = &di;
        o.ndevices = 1;
        o.columns = &c->name;
        o.ncolumns = 1;
        tsf_query *q = NULL;
        CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
        const tsf_batch *b;
        size_t next = 0, w = tsf_type_width(c->type);
        while (q && tsf_query_next(q, &b, &e) == TSF_OK && b) {
            const tsf_column_batch *cb = &b->columns[0];
            for (size_t k = 0; k < b->nrows; k++) {
                size_t row = (size_t)((b->times[k] - T0) / 1000);
                int present = cb->validity ? bit(cb->validity, k) : 1;
                if (cb->type == TSF_VECTOR) present = 0;
                while (next < row) diffs += bit(c->valid, next++); /* skipped rows must be null */
                if (row >= s->n || present != bit(c->valid, row) ||
                    (present && !cell_same(c->type, (const uint8_t *)cb->values + k * w,
                                           (const uint8_t *)c->vals + row * w))) {
                    if (diffs < 5)
                        fprintf(stderr, "  column %s row %zu differs (present %d) got %016llx want %016llx\n",
                                c->name, row, present,
                                present && w == 8
                                    ? *(unsigned long long *)((const uint8_t *)cb->values + k * w)
                                    : 0ULL,
                                w == 8 ? *(unsigned long long *)((const uint8_t *)c->vals + row * w) : 0ULL);
                    diffs++;
                }
                next = row + 1;
            }
        }
        if (e.code) fprintf(stderr, "  read: %s\n", e.message);
        CHECK_EQ_INT(e.code, TSF_OK);
        while (next < s->n) diffs += bit(c->valid, next++);
        tsf_query_close(q);
    }
    tsf_reader_close(r);
    return diffs;
}

/* Encoding of the first chunk and chunk count of a series. */
static void series_info(const membuf *f, const char *dev, const char *name, tsf_encoding *enc,
                        size_t *nchunks)
{
    tsf_error e = {0};
    tsf_reader *r = NULL;
    *enc = (tsf_encoding)-1;
    *nchunks = 0;
    CHECK_OK(tsf_reader_open_memory(&r, f->p, f->n, NULL, &e), &e);
    if (!r) return;
    size_t di = 0, j = 0;
    tsf_series_info si;
    CHECK_OK(tsf_reader_find_device(r, dev, &di, &e), &e);
    CHECK_OK(tsf_reader_find_series(r, di, name, &j, &e), &e);
    if (tsf_reader_series_pages(r, di, j, &si, &e) == TSF_OK) {
        *enc = si.encoding;
        *nchunks = si.nchunks;
    }
    tsf_reader_close(r);
}

/* tsf_verify on the bytes (written to a temporary file). */
static void verify_bytes(const membuf *f)
{
    char path[] = "/tmp/tsf_test_auto_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, f->p, f->n) == (ssize_t)f->n);
    close(fd);
    tsf_verify_report rep;
    memset(&rep, 0, sizeof rep);
    tsf_error e = {0};
    CHECK_OK(tsf_verify(path, NULL, NULL, &rep, &e), &e);
    CHECK_EQ_INT(rep.problems, 0);
    CHECK(rep.chunks > 0);
    unlink(path);
}

static int is_precision(tsf_encoding e)
{
    return e == TSF_ENC_TS_2DIFF || e == TSF_ENC_RLE;
}

/* ---- data ---------------------------------------------------------------------------------- */

static uint64_t g_rng = 12345;
static double urand(void)
{
    return (double)(tsf_test_rand(&g_rng) >> 11) / 9007199254740992.0;
}

static double *sensor_doubles(size_t n)
{
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = round((20 + 5 * sin((double)i / 300.0) + urand() - 0.5) * 100) / 100;
    return v;
}

static float *sensor_floats(size_t n)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(round((20 + 5 * sin((double)i / 300.0) + urand() - 0.5) * 100) / 100);
    return v;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_precision_check(void)
{
    double d[] = {23.45, -0.07, 1e6, 0.5, 100.0};
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_DOUBLE, d, 5, 2), 5);
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_DOUBLE, d, 5, 1), 0); /* 23.45 needs 2 digits */
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_DOUBLE, d + 2, 3, 0), 1);
    double bad[] = {0.1 + 0.2, -0.0, NAN, INFINITY, 1e300, 4.9e-324, 2.2250738585072014e-308 / 3};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int32_t p = 0; p <= 6; p++) CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_DOUBLE, &bad[i], 1, p), 0);
    float f[] = {23.45f, -0.07f, 1234.5f};
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_FLOAT, f, 3, 2), 3);
    float wrap[] = {3e7f}; /* 3e9 leaves the int range: Java keeps the low 32 bits */
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_FLOAT, wrap, 1, 2), 0);
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_FLOAT, wrap, 1, 0), 1);
    float fneg0[] = {-0.0f, NAN};
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_FLOAT, fneg0, 1, 2), 0);
    CHECK_EQ_INT(tsf_wauto_prec_first_bad(TSF_FLOAT, fneg0 + 1, 1, 2), 0);
    /* the check agrees with the codec: what passes decodes back exactly, what fails does not */
    tsf_codec_options co;
    tsf_codec_options_init(&co);
    co.float_precision = 2;
    tsf_codec *codec = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_codec_open(&codec, &co, &e), &e);
    double mix[] = {23.45, 0.1 + 0.2, -1.5, 1e300};
    uint8_t buf[256];
    size_t wrote = 0;
    CHECK_OK(tsf_codec_encode(codec, TSF_DOUBLE, TSF_ENC_TS_2DIFF, mix, 4, buf, sizeof buf, &wrote, &e), &e);
    double back[4];
    CHECK_OK(tsf_codec_decode(codec, TSF_DOUBLE, TSF_ENC_TS_2DIFF, buf, wrote, back, 4, NULL, &e), &e);
    for (size_t i = 0; i < 4; i++)
        CHECK_EQ_INT(memcmp(&back[i], &mix[i], 8) == 0,
                     tsf_wauto_prec_first_bad(TSF_DOUBLE, &mix[i], 1, 2) == 1);
    /* many values near decimals, ties and the int/long limits: the check says "survives" exactly
     * when the codec gives the bits back, at several precisions, DOUBLE and FLOAT */
    size_t disagree = 0;
    for (int32_t p = 0; p <= 4; p++) {
        co.float_precision = p;
        tsf_codec *cp = NULL;
        CHECK_OK(tsf_codec_open(&cp, &co, &e), &e);
        for (int k = 0; k < 20000 && cp; k++) {
            uint64_t r = tsf_test_rand(&g_rng);
            double dv = (double)(int64_t)(r % 2000001 - 1000000) / pow(10.0, (double)(r >> 60 & 3));
            switch (k % 5) {
            case 1: dv = nextafter(dv, r & 1 ? INFINITY : -INFINITY); break;
            case 2: dv = ((double)(int64_t)(r % 200001 - 100000) + 0.5) / pow(10.0, p); break; /* ties */
            case 3: dv = (double)(int64_t)(r >> 1) / pow(10.0, (double)(r % 23)); break;      /* big */
            case 4: dv = urand() * 100; break;
            }
            float fv = (float)dv;
            double db = 0;
            float fb = 0;
            size_t wr = 0;
            if (!tsf_codec_encode(cp, TSF_DOUBLE, TSF_ENC_TS_2DIFF, &dv, 1, buf, sizeof buf, &wr, NULL) &&
                !tsf_codec_decode(cp, TSF_DOUBLE, TSF_ENC_TS_2DIFF, buf, wr, &db, 1, NULL, NULL))
                disagree += (memcmp(&db, &dv, 8) == 0) != (tsf_wauto_prec_first_bad(TSF_DOUBLE, &dv, 1, p) == 1);
            if (!tsf_codec_encode(cp, TSF_FLOAT, TSF_ENC_RLE, &fv, 1, buf, sizeof buf, &wr, NULL) &&
                !tsf_codec_decode(cp, TSF_FLOAT, TSF_ENC_RLE, buf, wr, &fb, 1, NULL, NULL))
                disagree += (memcmp(&fb, &fv, 4) == 0) != (tsf_wauto_prec_first_bad(TSF_FLOAT, &fv, 1, p) == 1);
        }
        tsf_codec_close(cp);
    }
    CHECK_EQ_INT(disagree, 0);
    tsf_codec_close(codec);
    CHECK_EQ_INT(tsf_wauto_default(TSF_DOUBLE), TSF_ENC_GORILLA);
    CHECK_EQ_INT(tsf_wauto_default(TSF_INT32), TSF_ENC_TS_2DIFF);
    tsf_encoding pe;
    CHECK_OK(tsf_encoding_parse("auto", &pe), NULL);
    CHECK_EQ_INT(pe, TSF_ENCODING_AUTO);
    CHECK(!tsf_codec_can_encode(TSF_INT32, TSF_ENCODING_AUTO)); /* never an on-disk encoding */
}

#define NPICK 3000

/* Columns of crafted data and the encodings AUTO may pick for them. */
static void crafted(col *cols, tsf_encoding ok[][3])
{
    double *dec = sensor_doubles(NPICK);
    double *walk = malloc(NPICK * sizeof *walk);
    int64_t *cst = malloc(NPICK * sizeof *cst);
    int32_t *ctr = malloc(NPICK * sizeof *ctr);
    uint8_t *bo = malloc(NPICK);
    tsf_bytes *lowcard = malloc(NPICK * sizeof *lowcard);
    tsf_bytes *uniq = malloc(NPICK * sizeof *uniq);
    static const char *words[] = {"idle", "running", "stopped", "maintenance", "error"};
    static char ubuf[NPICK][24];
    double x = 0;
    for (size_t i = 0; i < NPICK; i++) {
        x += urand() - 0.5;
        walk[i] = x;
        cst[i] = 42;
        ctr[i] = (int32_t)(1000 + 3 * i);
        bo[i] = (i / 200) & 1;
        const char *wd = words[tsf_test_rand(&g_rng) % 5]; /* random order: LZ4 cannot find runs */
        lowcard[i] = (tsf_bytes){(const uint8_t *)wd, strlen(wd)};
        snprintf(ubuf[i], sizeof ubuf[i], "%016llx", (unsigned long long)tsf_test_rand(&g_rng));
        uniq[i] = (tsf_bytes){(const uint8_t *)ubuf[i], 16};
    }
    cols[0] = (col){"dec", TSF_DOUBLE, TSF_ENCODING_AUTO, dec, NULL};
    cols[1] = (col){"walk", TSF_DOUBLE, TSF_ENCODING_AUTO, walk, NULL};
    cols[2] = (col){"cst", TSF_INT64, TSF_ENCODING_AUTO, cst, NULL};
    cols[3] = (col){"ctr", TSF_INT32, TSF_ENCODING_AUTO, ctr, NULL};
    cols[4] = (col){"bo", TSF_BOOLEAN, TSF_ENCODING_AUTO, bo, NULL};
    cols[5] = (col){"lowcard", TSF_TEXT, TSF_ENCODING_AUTO, lowcard, NULL};
    cols[6] = (col){"uniq", TSF_STRING, TSF_ENCODING_AUTO, uniq, NULL};
    tsf_encoding exp[7][3] = {
        {TSF_ENC_TS_2DIFF, TSF_ENC_RLE, TSF_ENC_TS_2DIFF},  /* decimal: a precision encoding */
        {TSF_ENC_GORILLA, TSF_ENC_CHIMP, TSF_ENC_GORILLA},  /* not decimal: lossless float codec */
        {TSF_ENC_RLE, TSF_ENC_TS_2DIFF, TSF_ENC_RLE},       /* constant */
        {TSF_ENC_TS_2DIFF, TSF_ENC_RLBE, TSF_ENC_TS_2DIFF}, /* counter: constant deltas */
        {TSF_ENC_RLE, TSF_ENC_RLE, TSF_ENC_RLE},
        {TSF_ENC_DICTIONARY, TSF_ENC_DICTIONARY, TSF_ENC_DICTIONARY},
        {TSF_ENC_PLAIN, TSF_ENC_PLAIN, TSF_ENC_PLAIN},
    };
    memcpy(ok, exp, sizeof exp);
}

static void free_cols(col *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(cols[i].vals);
        free(cols[i].valid);
    }
}

static void test_picks_expected(void)
{
    col cols[7];
    tsf_encoding ok[7][3];
    crafted(cols, ok);
    membuf f = {0};
    wspec s = {"root.sg.d", 0, cols, 7, NPICK, 1000, 0, TSF_LZ4, 0, 0};
    CHECK(!write_spec(&s, &f));
    CHECK_EQ_INT(check_file(&f, &s), 0);
    for (size_t i = 0; i < 7; i++) {
        tsf_encoding e;
        size_t nch;
        series_info(&f, "root.sg.d", cols[i].name, &e, &nch);
        if (e != ok[i][0] && e != ok[i][1] && e != ok[i][2])
            fprintf(stderr, "  %s: AUTO picked %s\n", cols[i].name,
                    tsf_encoding_name(e) ? tsf_encoding_name(e) : "?");
        CHECK(e == ok[i][0] || e == ok[i][1] || e == ok[i][2]);
        CHECK_EQ_INT(nch, 1);
    }
    verify_bytes(&f);
    free(f.p);
    free_cols(cols, 7);
}

/* AUTO's file is no larger than the same series written with any encoding the writer stores (one
 * page, uncompressed, so the encoded value stream alone decides), and no larger than the Java
 * default under LZ4. */
static void test_smallest(void)
{
    col cols[7];
    tsf_encoding ok[7][3];
    crafted(cols, ok);
    membuf f = {0};
    for (size_t i = 0; i < 7; i++) {
        col one = cols[i];
        wspec s = {"root.sg.d", 0, &one, 1, NPICK, NPICK, NPICK, TSF_UNCOMPRESSED, 0, 0};
        CHECK(!write_spec(&s, &f));
        size_t auto_size = f.n;
        tsf_encoding picked;
        size_t nch;
        series_info(&f, "root.sg.d", one.name, &picked, &nch);
        for (int e = 0; e <= TSF_ENC_RLBE; e++) {
            if (!tsf_codec_can_encode(one.type, (tsf_encoding)e) || e == TSF_ENC_SPRINTZ ||
                e == TSF_ENC_GORILLA_V1)
                continue;
            int prec = one.type == TSF_DOUBLE && is_precision((tsf_encoding)e);
            if (prec && i != 0) continue;                              /* lossy for non-decimal data */
            if (one.type == TSF_DOUBLE && e == TSF_ENC_RLBE) continue; /* RLBE floats drift (spec §10) */
            one.enc = (tsf_encoding)e;
            s.float_precision = prec ? 2 : 0;
            CHECK(!write_spec(&s, &f));
            if (auto_size > f.n)
                fprintf(stderr, "  %s: AUTO %zu bytes > %s %zu bytes\n", one.name, auto_size,
                        tsf_encoding_name((tsf_encoding)e), f.n);
            CHECK(auto_size <= f.n);
        }
        /* Java default with LZ4 vs AUTO with LZ4 */
        one.enc = TSF_ENCODING_AUTO;
        s.comp = TSF_LZ4;
        s.float_precision = 0;
        CHECK(!write_spec(&s, &f));
        auto_size = f.n;
        one.enc = tsf_wauto_default(one.type);
        CHECK(!write_spec(&s, &f));
        CHECK(auto_size <= f.n);
    }
    free(f.p);
    free_cols(cols, 7);
}

/* 2-digit sensor readings (E4's sensor data) in an aligned device, uncompressed: AUTO stores them as
 * TS_2DIFF at precision 2 with wider blocks than Java's 128 deltas (codec/ts2diff_wide.c), so the
 * file is smaller than the same data with the fixed precision encoding by about the block headers
 * (24 bytes per 129 values = 1.5 bits of the ~10.4 per value), and every value comes back. */
static void test_sensor_wide_blocks(void)
{
    enum { NS = 30000, NCOLS = 3 };
    col cols[NCOLS];
    static const char *names[NCOLS] = {"s1", "s2", "s3"};
    for (size_t i = 0; i < NCOLS; i++)
        cols[i] = (col){names[i], TSF_DOUBLE, TSF_ENCODING_AUTO, sensor_doubles(NS), NULL};
    membuf f = {0};
    wspec s = {"root.sg.a", 1, cols, NCOLS, NS, 5000, 10000, TSF_UNCOMPRESSED, 0, 0};
    CHECK(!write_spec(&s, &f));
    CHECK_EQ_INT(check_file(&f, &s), 0);
    verify_bytes(&f);
    size_t auto_size = f.n;
    tsf_encoding e;
    size_t nch;
    series_info(&f, "root.sg.a", "s2", &e, &nch);
    CHECK_EQ_INT(e, TSF_ENC_TS_2DIFF);
    CHECK_EQ_INT(nch, 1);
    for (size_t i = 0; i < NCOLS; i++) cols[i].enc = TSF_ENC_TS_2DIFF;
    s.float_precision = 2;
    CHECK(!write_spec(&s, &f));
    CHECK_EQ_INT(check_file(&f, &s), 0);
    /* values + bitmap: ~10.4 bits per value with Java's blocks, ~9.0 with a block per page */
    if (!(auto_size * 100 < f.n * 90)) fprintf(stderr, "  AUTO %zu bytes, TS_2DIFF p2 %zu\n", auto_size, f.n);
    CHECK(auto_size * 100 < f.n * 90);
    free(f.p);
    free_cols(cols, NCOLS);
}

/* Decimal data, then values that do not survive a precision: every bit comes back, the chunk is
 * cut where the first such value appears, and the rest is lossless. */
static void adversarial_doubles(double *v, size_t n)
{
    double *base = sensor_doubles(n);
    memcpy(v, base, n * sizeof *v);
    free(base);
    v[350] = 0.1 + 0.2;
    v[351] = 12.34;
    v[500] = -0.0;
    v[600] = NAN;
    v[601] = -NAN;
    v[700] = 1e300;
    v[701] = -1e17;
    v[800] = 4.9e-324;                    /* smallest subnormal */
    v[801] = 2.2250738585072014e-308 / 7; /* another subnormal */
    v[900] = INFINITY;
    v[901] = -INFINITY;
    v[950] = 9.3e16; /* scaled value saturates the long */
}

static void test_adversarial_nonaligned(void)
{
    size_t n = 1000;
    double *d = malloc(n * sizeof *d);
    adversarial_doubles(d, n);
    float *f = sensor_floats(n);
    f[420] = 3e7f; /* wraps the int range at 2 digits */
    f[421] = -0.0f;
    f[430] = NAN;
    f[440] = 1.17549435e-38f / 3;     /* subnormal */
    double *late = sensor_doubles(n); /* decimal throughout: stays on the precision encoding */
    double *early = sensor_doubles(n);
    early[3] = 0.1 + 0.2; /* in the sample: no precision from the start */
    col cols[4] = {{"d", TSF_DOUBLE, TSF_ENCODING_AUTO, d, NULL},
                   {"f", TSF_FLOAT, TSF_ENCODING_AUTO, f, NULL},
                   {"late", TSF_DOUBLE, TSF_ENCODING_AUTO, late, NULL},
                   {"early", TSF_DOUBLE, TSF_ENCODING_AUTO, early, NULL}};
    membuf m = {0};
    /* pages of 100 points, tablets of 128 rows: seals happen inside appends */
    wspec s = {"root.sg.d", 0, cols, 4, n, 128, 100, TSF_SNAPPY, 0, 0};
    CHECK(!write_spec(&s, &m));
    CHECK_EQ_INT(check_file(&m, &s), 0);
    tsf_encoding e;
    size_t nch;
    series_info(&m, "root.sg.d", "d", &e, &nch);
    CHECK(is_precision(e));
    CHECK_EQ_INT(nch, 2); /* precision chunk (rows 0..299), then the lossless one */
    series_info(&m, "root.sg.d", "f", &e, &nch);
    CHECK(is_precision(e));
    CHECK_EQ_INT(nch, 2);
    series_info(&m, "root.sg.d", "late", &e, &nch);
    CHECK(is_precision(e));
    CHECK_EQ_INT(nch, 1);
    series_info(&m, "root.sg.d", "early", &e, &nch);
    CHECK(!is_precision(e));
    verify_bytes(&m);
    /* the same with a memory budget that flushes after every tablet */
    s.memory_budget = 1;
    CHECK(!write_spec(&s, &m));
    CHECK_EQ_INT(check_file(&m, &s), 0);
    verify_bytes(&m);
    free(m.p);
    free_cols(cols, 4);
}

static uint8_t *random_validity(size_t n, unsigned null_every)
{
    uint8_t *v = calloc(n / 8 + 1, 1);
    for (size_t i = 0; i < n; i++)
        if (tsf_test_rand(&g_rng) % null_every) v[i >> 3] |= (uint8_t)(1u << (i & 7));
    return v;
}

static void test_adversarial_aligned(void)
{
    size_t n = 1000;
    double *d = malloc(n * sizeof *d);
    adversarial_doubles(d, n);
    float *f = sensor_floats(n);
    int64_t *i64 = malloc(n * sizeof *i64);
    for (size_t i = 0; i < n; i++) i64[i] = (int64_t)(i * i);
    double *nul = sensor_doubles(n);
    uint8_t *none = calloc(n / 8 + 1, 1);
    for (size_t i = 0; i < 300; i++) none[i >> 3] |= (uint8_t)(1u << (i & 7)); /* only rows 0..299 */
    col cols[4] = {{"d", TSF_DOUBLE, TSF_ENCODING_AUTO, d, random_validity(n, 5)},
                   {"f", TSF_FLOAT, TSF_ENCODING_AUTO, f, random_validity(n, 3)},
                   {"i", TSF_INT64, TSF_ENCODING_AUTO, i64, NULL},
                   {"sparse", TSF_DOUBLE, TSF_ENCODING_AUTO, nul, none}};
    /* row 350 etc. must be present to trigger the cut */
    for (size_t r = 350; r < n; r += 50) cols[0].valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    membuf m = {0};
    wspec s = {"root.sg.a", 1, cols, 4, n, 128, 100, TSF_LZ4, 0, 0};
    for (int pass = 0; pass < 2; pass++) {
        s.memory_budget = pass ? 1 : 0;
        CHECK(!write_spec(&s, &m));
        CHECK_EQ_INT(check_file(&m, &s), 0);
        tsf_encoding e;
        size_t nch, nch_f;
        series_info(&m, "root.sg.a", "d", &e, &nch);
        CHECK(is_precision(e));
        series_info(&m, "root.sg.a", "f", &e, &nch_f);
        CHECK(is_precision(e));
        CHECK(nch >= 2);
        CHECK_EQ_INT(nch_f, nch); /* the cut ends the chunks of every column of the device */
        verify_bytes(&m);
    }
    free(m.p);
    free_cols(cols, 4);
}

/* Every type, with nulls, in a table and as non-aligned series: round trip and schema codes. */
static void test_all_types(void)
{
    size_t n = 2500;
    static const tsf_type types[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64,     TSF_FLOAT, TSF_DOUBLE,
                                     TSF_TEXT,    TSF_DATE,  TSF_TIMESTAMP, TSF_BLOB,  TSF_STRING};
    static const char *names[] = {"b", "i32", "i64", "f", "d", "txt", "dt", "ts", "blob", "str"};
    enum { NT = 10 };
    col cols[NT];
    static char sb[2500][12];
    for (size_t k = 0; k < NT; k++) {
        tsf_type t = types[k];
        uint8_t *v = calloc(n, tsf_type_width(t));
        for (size_t i = 0; i < n; i++) {
            uint64_t r = tsf_test_rand(&g_rng);
            switch (t) {
            case TSF_BOOLEAN:
                v[i] = r & 1;
                break;
            case TSF_INT32:
                ((int32_t *)v)[i] = (int32_t)r;
                break; /* full range */
            case TSF_DATE:
                ((int32_t *)v)[i] = 20240101 + (int32_t)(i % 28);
                break;
            case TSF_INT64:
                ((int64_t *)v)[i] = (int64_t)r;
                break;
            case TSF_TIMESTAMP:
                ((int64_t *)v)[i] = T0 + (int64_t)i * 7;
                break;
            case TSF_FLOAT:
                ((float *)v)[i] = i % 3 ? (float)(i % 1000) / 4 : (float)urand();
                break;
            case TSF_DOUBLE:
                memcpy(&((double *)v)[i], &r, 8);
                break; /* any bit pattern, NaNs included */
            default:
                snprintf(sb[i], sizeof sb[i], "v%zu", (i * 7919) % 97);
                ((tsf_bytes *)v)[i] = (tsf_bytes){(const uint8_t *)sb[i], strlen(sb[i])};
            }
        }
        cols[k] = (col){names[k], t, TSF_ENCODING_AUTO, v, random_validity(n, 4)};
    }
    membuf m = {0};
    wspec s = {NULL, 1, cols, NT, n, 700, 1000, TSF_ZSTD, 0, 0};
    CHECK(!write_spec(&s, &m));
    CHECK_EQ_INT(check_file(&m, &s), 0);
    verify_bytes(&m);
    /* the table schema stores a real encoding code, not AUTO */
    tsf_error e = {0};
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, m.p, m.n, NULL, &e), &e);
    size_t ti = 0;
    tsf_table_info info;
    if (r && tsf_reader_find_table(r, "t", &ti, &e) == TSF_OK &&
        tsf_reader_table(r, ti, &info, &e) == TSF_OK) {
        CHECK_EQ_INT(info.ncolumns, NT + 1);
        for (size_t k = 1; k < info.ncolumns; k++)
            CHECK_EQ_INT(info.columns[k].encoding, tsf_wauto_default(info.columns[k].type));
    } else {
        CHECK(0);
    }
    tsf_reader_close(r);
    /* non-aligned */
    s.dev = "root.sg.all";
    s.aligned = 0;
    CHECK(!write_spec(&s, &m));
    CHECK_EQ_INT(check_file(&m, &s), 0);
    verify_bytes(&m);
    free(m.p);
    free_cols(cols, NT);
}

/* AUTO is rejected nowhere it is legal and the error paths of registration stay. */
static void test_register(void)
{
    tsf_error e = {0};
    membuf m = {0};
    tsf_write_callbacks cb = {sizeof cb, ab_buf_write, NULL, &m};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, NULL, &e), &e);
    tsf_column_schema ok = {"s", TSF_BLOB, TSF_ENCODING_AUTO, TSF_LZ4, TSF_COLUMN_FIELD};
    CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &ok, &e), &e);
    tsf_column_schema bad = {"s2", TSF_INT32, TSF_ENC_DICTIONARY, TSF_LZ4, TSF_COLUMN_FIELD};
    CHECK_EQ_INT(tsf_writer_register_series(w, "root.sg.d", &bad, &e), TSF_EINVAL);
    /* a series registered but never written: the file is still valid */
    CHECK_OK(tsf_writer_close(w, &e), &e);
    free(m.p);
}


/* ---- AUTO against the best fixed encoding of each chunk (bench/autobest.c) ----------------- */

static const tsf_compression all_comps[] = {TSF_UNCOMPRESSED, TSF_SNAPPY, TSF_GZIP, TSF_LZ4, TSF_ZSTD, TSF_LZMA2};

/* Runs the per-chunk check of one series under every compression; returns the largest excess. */
static double check_bound(const ab_series *s, const tsf_writer_options *o, size_t *max_chunks)
{
    double worst = 0;
    for (size_t k = 0; k < sizeof all_comps / sizeof all_comps[0]; k++) {
        if (!tsf_compression_supported(all_comps[k])) continue; /* left out of this build */
        ab_result r;
        CHECK_EQ_INT(ab_check(s, all_comps[k], o, &r), 0);
        CHECK(r.lossless);
        if (r.worst > 0.02)
            fprintf(stderr, "  %s %s: chunk %zu of %zu is %.2f%% larger than %s\n", s->name,
                    tsf_compression_name(all_comps[k]), r.worst_chunk, r.nchunks, 100 * r.worst,
                    tsf_encoding_name(r.worst_best) ? tsf_encoding_name(r.worst_best) : "?");
        CHECK(r.worst <= 0.02);
        if (r.worst > worst) worst = r.worst;
        if (max_chunks && r.nchunks > *max_chunks) *max_chunks = r.nchunks;
    }
    return worst;
}

/* The real series of tests/data/datasets, in pages of 700 points and chunks cut by a small memory
 * budget too: every AUTO chunk is within 2% of the smallest fixed lossless encoding of its rows,
 * under every compression, and reads back bit for bit. */
static void test_real_series_bound(void)
{
    ab_series *ss = NULL;
    size_t ns = 0;
    CHECK_EQ_INT(ab_load_dir(TSF_TEST_DATA_DIR "/datasets", &ss, &ns), 0);
    CHECK(ns >= 3);
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 700;
    o.memory_budget = 64 << 10;
    double worst = 0;
    size_t chunks = 0;
    for (size_t i = 0; i < ns; i++) {
        double w = check_bound(&ss[i], &o, &chunks);
        if (w > worst) worst = w;
    }
    fprintf(stderr, "  %zu real series x 6 compressions: worst chunk %+.2f%%, up to %zu chunks\n", ns, 100 * worst,
            chunks);
    ab_free(ss, ns);
}

/* A series of n rows with the given values (all present), times 1 s apart. */
static ab_series make_series(const char *name, tsf_type t, void *vals, size_t n)
{
    ab_series s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    s.type = t;
    s.n = n;
    s.times = malloc(n * sizeof *s.times);
    s.vals = vals;
    s.valid = malloc(n / 8 + 1);
    memset(s.valid, 0xff, n / 8 + 1);
    s.present = n;
    for (size_t i = 0; i < n; i++) s.times[i] = T0 + (int64_t)i * 1000;
    return s;
}

enum { NREG = 14000 };

/* Regime changes in one DOUBLE series: a constant run, full-precision noise, integer-valued values,
 * a monotone counter, 2-digit decimals with NaN and infinities, runs of a few values (RLE), and
 * noisy doubles drawn from 16 values (PLAIN + a compressor finds the repeats, GORILLA cannot). */
static double *regime_doubles(void)
{
    double *v = malloc(NREG * sizeof *v), pool[16];
    for (size_t k = 0; k < 16; k++) pool[k] = urand() * 1e6;
    for (size_t i = 0; i < NREG; i++) {
        if (i < 2000)
            v[i] = 21.5;
        else if (i < 4000)
            v[i] = urand() * 100;
        else if (i < 6000)
            v[i] = (double)(1000 + (int)(tsf_test_rand(&g_rng) % 50));
        else if (i < 8000)
            v[i] = 1e6 + 3.0 * (double)i;
        else if (i < 9500)
            v[i] = i % 37 == 0 ? NAN : i % 101 == 0 ? (i & 1 ? INFINITY : -INFINITY)
                                                    : (double)(1200 + (int)(tsf_test_rand(&g_rng) % 400)) / 100;
        else if (i < 11500)
            v[i] = pool[(i / 50) % 4];
        else
            v[i] = pool[tsf_test_rand(&g_rng) % 16];
    }
    return v;
}

/* The same for INT64: constant, full-range random, a small random walk, a period-16 pattern, a counter. */
static int64_t *regime_ints(void)
{
    int64_t *v = malloc(NREG * sizeof *v), x = 0, pat[16];
    for (size_t k = 0; k < 16; k++) pat[k] = (int64_t)(tsf_test_rand(&g_rng) % 100000);
    for (size_t i = 0; i < NREG; i++) {
        if (i < 2000)
            v[i] = 7;
        else if (i < 4500)
            v[i] = (int64_t)tsf_test_rand(&g_rng);
        else if (i < 7000)
            v[i] = x += (int64_t)(tsf_test_rand(&g_rng) % 21) - 10;
        else if (i < 10000)
            v[i] = pat[i % 16];
        else if (i < 12000)
            v[i] = 1000000 + 5 * (int64_t)i;
        else
            v[i] = (int64_t)(tsf_test_rand(&g_rng) % 1000);
    }
    return v;
}

/* Regime changes: AUTO ends the chunk and decides again (more than one chunk), and no chunk is more
 * than 2% larger than the best fixed lossless encoding of its rows, under every compression. */
static void test_regimes_bound(void)
{
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 500;
    ab_series s[2] = {make_series("regime_doubles", TSF_DOUBLE, regime_doubles(), NREG),
                      make_series("regime_ints", TSF_INT64, regime_ints(), NREG)};
    for (size_t i = 0; i < 2; i++) {
        size_t chunks = 0;
        double w = check_bound(&s[i], &o, &chunks);
        fprintf(stderr, "  %s: worst chunk %+.2f%%, up to %zu chunks\n", s[i].name, 100 * w, chunks);
        CHECK(chunks > 1);
    }
    /* the same data in an aligned device: every value back, tsf_verify clean */
    col cols[2] = {{"d", TSF_DOUBLE, TSF_ENCODING_AUTO, s[0].vals, NULL},
                   {"i", TSF_INT64, TSF_ENCODING_AUTO, s[1].vals, NULL}};
    membuf f = {0};
    for (size_t k = 0; k < sizeof all_comps / sizeof all_comps[0]; k++) {
        if (!tsf_compression_supported(all_comps[k])) continue;
        wspec w = {"root.sg.reg", 1, cols, 2, NREG, 1000, 500, all_comps[k], 0, 0};
        CHECK(!write_spec(&w, &f));
        CHECK_EQ_INT(check_file(&f, &w), 0);
        verify_bytes(&f);
        tsf_encoding e;
        size_t nch;
        series_info(&f, "root.sg.reg", "d", &e, &nch);
        CHECK(nch > 1);
    }
    free(f.p);
    for (size_t i = 0; i < 2; i++) {
        free(s[i].times);
        free(s[i].vals);
        free(s[i].valid);
    }
}

int main(void)
{
    TSF_RUN(test_precision_check);
    TSF_RUN(test_picks_expected);
    TSF_RUN(test_smallest);
    TSF_RUN(test_sensor_wide_blocks);
    TSF_RUN(test_adversarial_nonaligned);
    TSF_RUN(test_adversarial_aligned);
    TSF_RUN(test_all_types);
    TSF_RUN(test_register);
    TSF_RUN(test_real_series_bound);
    TSF_RUN(test_regimes_bound);
    return tsf_test_finish();
}
