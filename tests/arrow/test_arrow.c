/*
 * test_arrow.c - the Arrow C stream export (include/tsf_arrow.h, src/arrow/): a consumer that checks every
 * producer rule of the C data and C stream interfaces (structures fully filled, n_buffers per format, lengths,
 * offsets 0, offsets monotonic, null counts equal to the validity bitmaps, 64-byte aligned buffers, arrays
 * and schemas released independently of the stream and of each other, end of stream = released array,
 * get_last_error after a failure), and content: every cell of every stream equals the row cursor of the
 * same query (tsf_cursor, the plain reader) on golden files (tree and table model) and on files written
 * here with every type, nulls, null tags and devices that lack series.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read/gen_file.h"
#include "test.h"
#include "tsf_arrow.h"

/* ---- the consumer's structural checks ----------------------------------------------------------- */

static int64_t buffers_for(const char *fmt)
{
    if (!strcmp(fmt, "u") || !strcmp(fmt, "z")) return 3;
    return 2;
}

static int fmt_width(const char *fmt)
{
    if (!strcmp(fmt, "i") || !strcmp(fmt, "f") || !strcmp(fmt, "tdD")) return 4;
    if (!strcmp(fmt, "l") || !strcmp(fmt, "g") || !strncmp(fmt, "ts", 2)) return 8;
    return 0;
}

static void check_schema(const struct ArrowSchema *s)
{
    CHECK(s->release != NULL);
    CHECK(s->format && !strcmp(s->format, "+s"));
    CHECK(s->name != NULL);
    CHECK(s->dictionary == NULL);
    CHECK(s->n_children >= 1);
    CHECK(s->children != NULL);
    for (int64_t i = 0; i < s->n_children; i++) {
        const struct ArrowSchema *c = s->children[i];
        CHECK(c->release != NULL);
        CHECK(c->format != NULL);
        CHECK(c->name != NULL && c->name[0]);
        CHECK(c->n_children == 0);
        CHECK(c->dictionary == NULL);
        const char *f = c->format;
        CHECK(!strcmp(f, "b") || !strcmp(f, "i") || !strcmp(f, "l") || !strcmp(f, "f") || !strcmp(f, "g") ||
              !strcmp(f, "u") || !strcmp(f, "z") || !strcmp(f, "tdD") || !strcmp(f, "tsm:UTC") ||
              !strcmp(f, "tsu:UTC") || !strcmp(f, "tsn:UTC"));
    }
    CHECK(!strncmp(s->children[0]->format, "ts", 2));
    CHECK(!(s->children[0]->flags & ARROW_FLAG_NULLABLE));
}

static int64_t bitmap_nulls(const uint8_t *v, int64_t n)
{
    int64_t nulls = 0;
    for (int64_t r = 0; r < n; r++) nulls += !(v[r / 8] >> (r % 8) & 1);
    return nulls;
}

static int aligned64(const void *p) { return ((uintptr_t)p & 63) == 0; }

/* Every rule of one array against its schema. */
static void check_array(const struct ArrowSchema *s, const struct ArrowArray *a)
{
    CHECK(a->release != NULL);
    CHECK(a->length > 0);
    CHECK_EQ_INT(a->offset, 0);
    CHECK_EQ_INT(a->null_count, 0);
    CHECK_EQ_INT(a->n_buffers, 1);
    CHECK(a->buffers != NULL && a->buffers[0] == NULL);
    CHECK_EQ_INT(a->n_children, s->n_children);
    CHECK(a->dictionary == NULL);
    for (int64_t i = 0; i < a->n_children && i < s->n_children; i++) {
        const struct ArrowArray *c = a->children[i];
        const char *f = s->children[i]->format;
        CHECK(c->release != NULL);
        CHECK_EQ_INT(c->length, a->length);
        CHECK_EQ_INT(c->offset, 0);
        CHECK_EQ_INT(c->n_children, 0);
        CHECK(c->dictionary == NULL);
        CHECK_EQ_INT(c->n_buffers, buffers_for(f));
        /* buffers of the array's block: 64-byte aligned; fixed-width values may point into the query's decode
         * buffers (zero copy): aligned to their width */
        for (int64_t k = 0; k < c->n_buffers; k++)
            if (c->buffers[k])
                CHECK(k == 1 && fmt_width(f) ? (uintptr_t)c->buffers[k] % (uintptr_t)fmt_width(f) == 0
                                             : aligned64(c->buffers[k]));
        CHECK(c->buffers[1] != NULL);
        if (c->buffers[0]) {
            CHECK_EQ_INT(c->null_count, bitmap_nulls(c->buffers[0], c->length));
        } else {
            CHECK_EQ_INT(c->null_count, 0);
        }
        if (!(s->children[i]->flags & ARROW_FLAG_NULLABLE)) CHECK_EQ_INT(c->null_count, 0);
        if (c->n_buffers == 3) {
            const int32_t *off = c->buffers[1];
            CHECK_EQ_INT(off[0], 0);
            for (int64_t r = 0; r < c->length; r++) CHECK(off[r] <= off[r + 1]);
            if (off[c->length] > 0) CHECK(c->buffers[2] != NULL);
        }
    }
}

/* ---- reading cells ---------------------------------------------------------------------------- */

static int cell_valid(const struct ArrowArray *c, int64_t r)
{
    const uint8_t *v = c->buffers[0];
    return !v || (v[r / 8] >> (r % 8) & 1);
}

static int64_t child_index(const struct ArrowSchema *s, const char *name)
{
    for (int64_t i = 0; i < s->n_children; i++)
        if (!strcmp(s->children[i]->name, name)) return i;
    return -1;
}

/* Days since the epoch of yyyyMMdd by the C library (an independent reference). */
static int64_t ref_days(int32_t v)
{
    struct tm tm = {0};
    tm.tm_year = v / 10000 - 1900;
    tm.tm_mon = v / 100 % 100 - 1;
    tm.tm_mday = v % 100;
    return (int64_t)(timegm(&tm) / 86400);
}

/* Compares Arrow cell (c, r) of format f with the cursor's cell. */
static int cell_equal(const char *f, const struct ArrowArray *c, int64_t r, tsf_type type, const tsf_value *v)
{
    int valid = cell_valid(c, r);
    if (v->is_null) return !valid;
    if (!valid) return 0;
    if (!strcmp(f, "b")) return (((const uint8_t *)c->buffers[1])[r / 8] >> (r % 8) & 1) == (v->v.b != 0);
    if (!strcmp(f, "tdD")) return ((const int32_t *)c->buffers[1])[r] == ref_days(v->v.i32);
    if (!strcmp(f, "u") || !strcmp(f, "z")) {
        const int32_t *off = c->buffers[1];
        size_t len = (size_t)(off[r + 1] - off[r]);
        return len == v->v.bytes.len && (!len || !memcmp((const uint8_t *)c->buffers[2] + off[r], v->v.bytes.data, len));
    }
    int w = fmt_width(f);
    const uint8_t *p = (const uint8_t *)c->buffers[1] + (size_t)r * (size_t)w;
    switch (type) {
    case TSF_INT32: return w == 4 && !memcmp(p, &v->v.i32, 4);
    case TSF_FLOAT: return w == 4 && !memcmp(p, &v->v.f, 4);
    case TSF_DOUBLE: return w == 8 && !memcmp(p, &v->v.d, 8);
    default: return w == 8 && !memcmp(p, &v->v.i64, 8);
    }
}

/* ---- a stream against a reference of the same rows ------------------------------------------- */

/* One row of the reference (the cursor, or a dataset query's batch): its time, its device's name, table and
 * id segments, and its cells by name. */
typedef struct ref_row {
    int64_t time;
    const char *device;
    const tsf_table_info *ti;
    int (*segment)(const struct ref_row *x, size_t s, tsf_bytes *out); /* 0 and out->data set: present */
    size_t ncells;
    const char *(*cell_name)(const struct ref_row *x, size_t k);
    void (*cell)(const struct ref_row *x, size_t k, tsf_type *type, tsf_value *v);
    void *src;  /* the cursor, or the dataset batch */
    void *home; /* the reader, or the dataset */
    size_t dev, r;
} ref_row;

/* Mismatches between row `row` of array arr and the reference row x: time, then the device (tree) or TAG
 * columns (table), then the value columns by name; the schema's columns x lacks must be null. explicit: the
 * query named its columns (a cell of x the stream lacks is then no mismatch). seen: n_children bytes. */
static int compare_row(const struct ArrowSchema *sch, const struct ArrowArray *arr, int64_t row, int tree,
                       int explicit, const ref_row *x, char *seen)
{
    int mism = 0;
    memset(seen, 0, (size_t)sch->n_children);
    seen[0] = 1;
    if (((const int64_t *)arr->children[0]->buffers[1])[row] != x->time) mism++;
    for (int64_t i = 1; i < sch->n_children; i++) {
        const char *name = sch->children[i]->name;
        tsf_value v = {0};
        if (i == 1 && tree) {
            v.v.bytes = (tsf_bytes){(const uint8_t *)x->device, strlen(x->device)};
        } else if (!tree) { /* a TAG column: the device id segment 1 + k */
            size_t k = 0, j;
            for (j = 0; j < x->ti->ncolumns; j++) {
                if (!strcmp(x->ti->columns[j].name, name)) break;
                if (x->ti->columns[j].category == TSF_COLUMN_TAG) k++;
            }
            if (j == x->ti->ncolumns || x->ti->columns[j].category != TSF_COLUMN_TAG) continue;
            tsf_bytes seg = {NULL, 0};
            v.is_null = x->segment(x, 1 + k, &seg) || !seg.data;
            v.v.bytes = seg;
        } else {
            continue;
        }
        seen[i] = 1;
        if (!cell_equal("u", arr->children[i], row, TSF_STRING, &v)) mism++;
    }
    for (size_t k = 0; k < x->ncells; k++) {
        const char *name = x->cell_name(x, k);
        int64_t i = child_index(sch, name);
        if (i < 0) {
            if (!explicit) mism++; /* a column of the device the stream lacks */
            continue;
        }
        if (seen[i]) continue; /* a TAG: the plain query reads its name as a series the device lacks */
        seen[i] = 1;
        tsf_type type;
        tsf_value v;
        x->cell(x, k, &type, &v);
        if (type == TSF_VECTOR) v.is_null = 1;
        if (!cell_equal(sch->children[i]->format, arr->children[i], row, type, &v)) {
            if (mism < 5) fprintf(stderr, "cell %s differs at time %lld\n", name, (long long)x->time);
            mism++;
        }
    }
    /* the union's columns this device lacks read as null */
    for (int64_t i = 1; i < sch->n_children; i++)
        if (!seen[i] && cell_valid(arr->children[i], row)) mism++;
    return mism;
}

/* Row *row of the stream's current array *arr, the next array fetched (and checked) when it is used up;
 * 0 when there is such a row. */
static int stream_row(struct ArrowArrayStream *st, const struct ArrowSchema *sch, struct ArrowArray *arr,
                      int64_t *row)
{
    while (!arr->release || *row >= arr->length) {
        if (arr->release) arr->release(arr);
        int rc = st->get_next(st, arr);
        CHECK_EQ_INT(rc, 0);
        if (rc || !arr->release) {
            CHECK(!"the stream ended before the reference");
            return -1;
        }
        check_array(sch, arr);
        *row = 0;
    }
    return 0;
}

/* The schema of the stream and the one of the schema call (alone) name the same columns; alone released. */
static void check_schemas(const struct ArrowSchema *sch, struct ArrowSchema *alone)
{
    check_schema(sch);
    CHECK_EQ_INT(alone->n_children, sch->n_children);
    for (int64_t i = 0; i < alone->n_children && i < sch->n_children; i++) {
        CHECK(!strcmp(alone->children[i]->name, sch->children[i]->name));
        CHECK(!strcmp(alone->children[i]->format, sch->children[i]->format));
    }
    alone->release(alone);
    CHECK(alone->release == NULL);
}

/* After the reference's last row: the rest of the stream holds no rows, the end is a released array and
 * stays the end, no error; then the stream and its schema are released. */
static void finish_stream(struct ArrowArrayStream *st, struct ArrowSchema *sch, struct ArrowArray *arr, int64_t row)
{
    if (arr->release && row < arr->length) CHECK(!"the stream has rows the reference lacks");
    for (int guard = 0; guard < 1000; guard++) {
        if (arr->release) arr->release(arr);
        CHECK_EQ_INT(st->get_next(st, arr), 0);
        if (!arr->release) break;
        CHECK(!"a batch after the reference's end");
    }
    CHECK(arr->release == NULL);
    CHECK_EQ_INT(st->get_next(st, arr), 0);
    CHECK(arr->release == NULL);
    CHECK(st->get_last_error(st) == NULL);
    sch->release(sch);
    CHECK(sch->release == NULL);
    st->release(st);
    CHECK(st->release == NULL);
}

/* ---- the stream against the cursor ------------------------------------------------------------ */

typedef struct cmp_opts {
    const tsf_query_options *q;
    int device_column; /* -1: the default */
    tsf_arrow_time_unit unit;
} cmp_opts;

static int cursor_segment(const ref_row *x, size_t s, tsf_bytes *out)
{
    tsf_device_info di;
    if (tsf_reader_device(x->home, x->dev, &di, NULL) || s >= di.nsegments) return -1;
    return tsf_reader_device_segment(x->home, x->dev, s, out, NULL) == TSF_OK ? 0 : -1;
}

static const char *cursor_cell_name(const ref_row *x, size_t k) { return tsf_cursor_column_name(x->src, k); }

static void cursor_cell(const ref_row *x, size_t k, tsf_type *type, tsf_value *v)
{
    tsf_error e = {0};
    CHECK_OK(tsf_cursor_value(x->src, k, type, v, &e), &e);
}

/* Reads the whole stream and the cursor of the same query; every cell must match. Returns the rows. */
static long long compare_stream(tsf_reader *r, const cmp_opts *co)
{
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.query = co->q;
    o.time_unit = co->unit;
    if (co->device_column >= 0) o.device_column = co->device_column;
    struct ArrowArrayStream st;
    struct ArrowSchema sch, alone;
    tsf_error e = {0};
    tsf_status s = tsf_arrow_stream_open(r, &o, &st, &e);
    CHECK_OK(s, &e);
    if (s) return -1;
    CHECK_EQ_INT(st.get_schema(&st, &sch), 0);
    static const char *UNITS[] = {"tsm:UTC", "tsu:UTC", "tsn:UTC"};
    CHECK(!strcmp(sch.children[0]->format, UNITS[co->unit]));
    CHECK_OK(tsf_arrow_schema(r, &o, &alone, &e), &e); /* the schema alone names the same columns */
    check_schemas(&sch, &alone);
    int tree = sch.n_children > 1 && !strcmp(sch.children[1]->name, "device") && co->device_column != 0;
    tsf_cursor *cur;
    CHECK_OK(tsf_cursor_open(r, co->q, &cur, &e), &e);
    struct ArrowArray arr = {0};
    int64_t row = 0;
    long long rows = 0;
    int mism = 0;
    char *seen = calloc((size_t)sch.n_children, 1);
    for (;;) {
        int has = 0;
        CHECK_OK(tsf_cursor_next(cur, &has, &e), &e);
        if (!has || stream_row(&st, &sch, &arr, &row)) break;
        tsf_device_info di;
        tsf_table_info ti = {0};
        size_t dev = tsf_cursor_device(cur);
        CHECK_OK(tsf_reader_device(r, dev, &di, &e), &e);
        if (!tree) CHECK_OK(tsf_reader_table(r, di.table, &ti, &e), &e);
        ref_row x = {tsf_cursor_time(cur), di.name, &ti, cursor_segment, tsf_cursor_column_count(cur),
                     cursor_cell_name, cursor_cell, cur, r, dev, 0};
        mism += compare_row(&sch, &arr, row, tree, co->q && co->q->columns, &x, seen);
        row++;
        rows++;
    }
    CHECK_EQ_INT(mism, 0);
    free(seen);
    tsf_cursor_close(cur);
    finish_stream(&st, &sch, &arr, row);
    return rows;
}

/* ---- files ------------------------------------------------------------------------------------ */

static tsf_reader *open_mem(const gen_buf *b)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, b->p, b->n, NULL, &e), &e);
    return r;
}

/* Table "every": TAGs city, site (site null on one device), one FIELD per type; row i of device d at
 * time 100 * i + d; field j null when (i + d) % (j + 2) == 1. bad_date: DATE of row 5 is 20230230. */
#define EV_FIELDS 10
static const tsf_column_schema EVERY[2 + EV_FIELDS] = {
    {"city", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
    {"site", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
    {"b", TSF_BOOLEAN, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD},
    {"i32", TSF_INT32, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
    {"i64", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD},
    {"f", TSF_FLOAT, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
    {"d", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_ZSTD, TSF_COLUMN_FIELD},
    {"txt", TSF_TEXT, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
    {"str", TSF_STRING, TSF_ENC_DICTIONARY, TSF_LZ4, TSF_COLUMN_FIELD},
    {"blob", TSF_BLOB, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
    {"date", TSF_DATE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
    {"ts", TSF_TIMESTAMP, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
};

/* Table "every" with the TAGs and the FIELDs whose bit is set in fields (bit j: EVERY[2 + j]), times shifted
 * by t0. */
static int write_every_x(gen_buf *out, size_t rows, int bad_date, unsigned fields, int64_t t0)
{
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.page_max_points = 1000;
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, out};
    tsf_writer *w = NULL;
    tsf_tablet *t = NULL;
    tsf_error e = {0};
    tsf_column_schema sch[2 + EV_FIELDS];
    size_t src[2 + EV_FIELDS], ncols = 0; /* column k of the tablet is EVERY[src[k]] */
    for (size_t col = 0; col < 2 + EV_FIELDS; col++)
        if (col < 2 || (fields >> (col - 2) & 1)) sch[ncols] = EVERY[col], src[ncols++] = col;
    if (tsf_writer_open_callbacks(&w, &cb, &wo, &e) || tsf_writer_register_table(w, "every", sch, ncols, &e) ||
        tsf_tablet_new(w, "every", NULL, 0, rows, &t, &e))
        goto fail;
    static const char *CITY[3] = {"oslo", "lima", "x"};
    for (size_t d = 0; d < 3; d++) {
        for (size_t i = 0; i < rows; i++) {
            char buf[64];
            if (tsf_tablet_set_time(t, i, t0 + (int64_t)(100 * i + d), &e) ||
                tsf_tablet_set_bytes(t, i, 0, CITY[d], strlen(CITY[d]), &e))
                goto fail;
            if (d != 1 && tsf_tablet_set_bytes(t, i, 1, "s-1", 3, &e)) goto fail;
            for (size_t k = 2; k < ncols; k++) {
                size_t col = src[k], j = col - 2;
                if ((i + d) % (j + 2) == 1) continue;
                tsf_status s = TSF_OK;
                switch (EVERY[col].type) {
                case TSF_BOOLEAN: s = tsf_tablet_set_bool(t, i, k, (int)((i * 7 + d) % 3 == 0), &e); break;
                case TSF_INT32: s = tsf_tablet_set_int32(t, i, k, (int32_t)(i * 37) - 1000 * (int32_t)d, &e); break;
                case TSF_INT64: s = tsf_tablet_set_int64(t, i, k, (int64_t)i * -1234567891LL + (int64_t)d, &e); break;
                case TSF_FLOAT: s = tsf_tablet_set_float(t, i, k, (float)i * 0.25f - (float)d, &e); break;
                case TSF_DOUBLE: s = tsf_tablet_set_double(t, i, k, (double)i / 3.0 + (double)d, &e); break;
                case TSF_DATE: {
                    int32_t y = 1900 + (int32_t)(i * 13 % 200), m = 1 + (int32_t)(i % 12), dd = 1 + (int32_t)(i % 28);
                    if (i % 97 == 3) m = 2, dd = 29, y = 2000; /* a leap day */
                    int32_t v = y * 10000 + m * 100 + dd;
                    if (bad_date && i == 5) v = 20230230;
                    s = tsf_tablet_set_int32(t, i, k, v, &e);
                    break;
                }
                case TSF_TIMESTAMP: s = tsf_tablet_set_int64(t, i, k, 1700000000000LL + (int64_t)i, &e); break;
                default: {
                    int n = snprintf(buf, sizeof buf, "%s%zu", EVERY[col].name, i % 17);
                    if (i % 11 == 4) n = 0; /* empty values */
                    s = tsf_tablet_set_bytes(t, i, k, buf, (size_t)n, &e);
                }
                }
                if (s) goto fail;
            }
        }
        if (tsf_writer_write_tablet(w, t, &e)) goto fail;
    }
    tsf_tablet_free(t);
    if (tsf_writer_close(w, &e)) {
        fprintf(stderr, "close: %s\n", e.message);
        return -1;
    }
    return 0;
fail:
    fprintf(stderr, "write_every: %s\n", e.message);
    tsf_tablet_free(t);
    tsf_writer_abort(w);
    return -1;
}

static int write_every(gen_buf *out, size_t rows, int bad_date)
{
    return write_every_x(out, rows, bad_date, (1u << EV_FIELDS) - 1, 0);
}

/* write_every into *b, opened from memory (NULL on failure). */
static tsf_reader *open_every(gen_buf *b, size_t rows, int bad_date)
{
    memset(b, 0, sizeof *b);
    CHECK(write_every(b, rows, bad_date) == 0);
    return open_mem(b);
}

/* Opens a stream of query q (default Arrow options) on r; 0 on success. */
static int open_query_stream(tsf_reader *r, const tsf_query_options *q, struct ArrowArrayStream *st)
{
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.query = q;
    tsf_error e = {0};
    tsf_status s = tsf_arrow_stream_open(r, &o, st, &e);
    CHECK_OK(s, &e);
    return s ? -1 : 0;
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_date_days(void)
{
    int32_t days;
    CHECK(tsf_arrow_date_days(19700101, &days) == 0 && days == 0);
    CHECK(tsf_arrow_date_days(19691231, &days) == 0 && days == -1);
    CHECK(tsf_arrow_date_days(20000229, &days) == 0 && days == 11016);
    /* every day of years 1..9999 is the day after the one before; walked with a calendar of its own */
    static const int MD[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int32_t prev = 0;
    long long bad = 0, n = 0;
    for (int y = 1; y <= 9999; y++)
        for (int m = 1; m <= 12; m++) {
            int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            int nd = MD[m - 1] + (m == 2 && leap);
            for (int d = 1; d <= nd; d++) {
                int32_t v = y * 10000 + m * 100 + d;
                if (tsf_arrow_date_days(v, &days) || (n && days != prev + 1)) bad++;
                prev = days;
                n++;
            }
            /* the day after the month's last is no date */
            if (tsf_arrow_date_days(y * 10000 + m * 100 + nd + 1, &days) == 0) bad++;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(n, 3652059);
    CHECK(tsf_arrow_date_days(19000229, &days) == -1);
    CHECK(tsf_arrow_date_days(20231301, &days) == -1);
    CHECK(tsf_arrow_date_days(20230100, &days) == -1);
    CHECK(tsf_arrow_date_days(0, &days) == -1);
    CHECK(tsf_arrow_date_days(-20230101, &days) == -1);
    CHECK(tsf_arrow_date_days(100000101, &days) == -1);
    CHECK_EQ_INT(ref_days(20240315), (tsf_arrow_date_days(20240315, &days), days));
}

/* The file of gen_file.h: tree devices d1 (non-aligned) and a1 (aligned, every type), table t1. */
static void test_gen_file(void)
{
    gen_buf b = {0};
    char why[600];
    CHECK(gen_file(&b, 3000, 400, 1000, why, sizeof why) == 0);
    tsf_reader *r = open_mem(&b);
    if (!r) return;
    tsf_error e = {0};
    size_t d1, a1;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &d1, &e), &e);
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &a1, &e), &e);
    size_t devs[2] = {d1, a1};
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.devices = devs;
    q.ndevices = 2;
    static const size_t BATCH[] = {4096, 7, 1};
    for (size_t k = 0; k < 3; k++) {
        q.batch_size = BATCH[k];
        for (int unit = 0; unit < 3; unit++) {
            cmp_opts co = {&q, -1, (tsf_arrow_time_unit)unit};
            CHECK(compare_stream(r, &co) > 3000);
        }
    }
    q.batch_size = 0;
    /* one device per stream, without the device column */
    for (size_t i = 0; i < 2; i++) {
        q.devices = &devs[i];
        q.ndevices = 1;
        cmp_opts co = {&q, 0, TSF_ARROW_MILLI};
        CHECK_EQ_INT(compare_stream(r, &co), 3000);
    }
    /* chosen columns, a time range, a filter, threads */
    q.devices = devs;
    q.ndevices = 2;
    static const char *COLS[] = {"txt", "s1", "b", "date"};
    q.columns = COLS;
    q.ncolumns = 4;
    q.time_min = 500;
    q.time_max = 9000;
    tsf_filter *f;
    CHECK_OK(tsf_filter_parse(&f, "s1 > 100 or i32 < 0", &e), &e);
    q.where = f;
    q.threads = 3;
    cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
    CHECK(compare_stream(r, &co) > 0);
    tsf_filter_free(f);
    /* the table */
    tsf_query_options_init(&q);
    q.table = "t1";
    CHECK(compare_stream(r, &co) > 0);
    /* every device of this file: tree devices and a table do not make one stream */
    struct ArrowArrayStream st;
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) == TSF_EINVAL);
    CHECK(strstr(e.message, "table") != NULL);
    tsf_reader_close(r);
    free(b.p);
}

static void test_every_type(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 2500, 0);
    if (!r) return;
    tsf_query_options q;
    tsf_query_options_init(&q);
    cmp_opts co = {&q, -1, TSF_ARROW_NANO};
    CHECK_EQ_INT(compare_stream(r, &co), 7500);
    q.batch_size = 13;
    CHECK_EQ_INT(compare_stream(r, &co), 7500);
    co.q = NULL;
    CHECK_EQ_INT(compare_stream(r, &co), 7500);
    /* the schema: time, the TAGs, then the FIELDs in schema order */
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    struct ArrowSchema s;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_schema(r, &o, &s, &e), &e);
    static const char *WANT[2 + 2 + EV_FIELDS][2] = {
        {"time", "tsm:UTC"}, {"city", "u"}, {"site", "u"}, {"b", "b"},        {"i32", "i"},        {"i64", "l"},
        {"f", "f"},          {"d", "g"},    {"txt", "u"},  {"str", "u"},      {"blob", "z"},       {"date", "tdD"},
        {"ts", "tsm:UTC"},
    };
    CHECK_EQ_INT(s.n_children, 13);
    for (int64_t i = 0; i < s.n_children && i < 13; i++) {
        CHECK(!strcmp(s.children[i]->name, WANT[i][0]));
        CHECK(!strcmp(s.children[i]->format, WANT[i][1]));
    }
    s.release(&s);
    /* TAG columns chosen by name, mixed with fields */
    static const char *COLS[] = {"ts", "site", "b", "city"};
    tsf_query_options_init(&q);
    q.columns = COLS;
    q.ncolumns = 4;
    co.q = &q;
    CHECK_EQ_INT(compare_stream(r, &co), 7500);
    tsf_reader_close(r);
    free(b.p);
}

/* FNV-1a over the value buffer of every child of a (child k replaced by alt when alt is non-NULL). */
static uint64_t array_hash(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t k,
                           const struct ArrowArray *alt)
{
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < a->n_children; i++) {
        const struct ArrowArray *c = alt && i == k ? alt : a->children[i];
        const char *f = s->children[i]->format;
        const uint8_t *v = c->buffers[1];
        size_t bytes = !strcmp(f, "b")      ? (size_t)(c->length + 7) / 8
                       : c->n_buffers == 3 ? (size_t)(c->length + 1) * 4
                                           : (size_t)c->length * (size_t)fmt_width(f);
        for (size_t j = 0; j < bytes; j++) h = (h ^ v[j]) * 1099511628211ull;
    }
    return h;
}

/* Arrays outlive the stream and the reader; children moved out outlive their parent; any release order. */
static void test_release_orders(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 3000, 0);
    if (!r) return;
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.batch_size = 500;
    struct ArrowArrayStream st;
    if (open_query_stream(r, &q, &st)) return;
    struct ArrowSchema s1, s2;
    CHECK_EQ_INT(st.get_schema(&st, &s1), 0);
    CHECK_EQ_INT(st.get_schema(&st, &s2), 0);
    enum { MAXA = 64 };
    struct ArrowArray arr[MAXA];
    uint64_t sum[MAXA];
    int n = 0;
    for (; n < MAXA; n++) {
        CHECK_EQ_INT(st.get_next(&st, &arr[n]), 0);
        if (!arr[n].release) break;
        check_array(&s1, &arr[n]);
        sum[n] = array_hash(&s1, &arr[n], -1, NULL); /* compared after the stream and the reader are gone */
    }
    CHECK_EQ_INT(n, 18); /* 3 devices x 3000 rows in pages of 1000, batches of 500 */
    /* the schema of get_schema is independent of the stream; one copy released before the stream */
    s2.release(&s2);
    st.release(&st);
    CHECK(st.release == NULL);
    tsf_reader_close(r);
    free(b.p);
    check_schema(&s1);
    /* move a child out of every other array, release the parent, then the child */
    struct ArrowArray moved[MAXA];
    for (int i = 0; i < n; i += 2) {
        moved[i] = *arr[i].children[3];
        arr[i].children[3]->release = NULL;
    }
    for (int i = 0; i < n; i++) CHECK(array_hash(&s1, &arr[i], 3, i % 2 == 0 ? &moved[i] : NULL) == sum[i]);
    for (int i = n - 1; i >= 0; i--) { /* newest first */
        arr[i].release(&arr[i]);
        CHECK(arr[i].release == NULL);
    }
    for (int i = 0; i < n; i += 2) {
        CHECK(moved[i].release != NULL);
        CHECK_EQ_INT(moved[i].length, 500);
        moved[i].release(&moved[i]);
        CHECK(moved[i].release == NULL);
    }
    /* a schema child moved out, the parent released first */
    struct ArrowSchema kid = *s1.children[1];
    s1.children[1]->release = NULL;
    s1.release(&s1);
    CHECK(!strcmp(kid.name, "city"));
    kid.release(&kid);
}

/* No rows at all: the schema is there, the first get_next is the end. */
static void test_empty(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 100, 0);
    if (!r) return;
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.time_min = 1000000;
    cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
    CHECK_EQ_INT(compare_stream(r, &co), 0);
    tsf_filter *f;
    tsf_error e = {0};
    CHECK_OK(tsf_filter_parse(&f, "i32 > 1000000", &e), &e);
    tsf_query_options_init(&q);
    q.where = f;
    CHECK_EQ_INT(compare_stream(r, &co), 0);
    tsf_filter_free(f);
    tsf_reader_close(r);
    free(b.p);
    /* golden files without data */
    static const char *EMPTY[] = {"empty_no_data.tsfile", "empty_registered_no_data.tsfile"};
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tsfile-java/%s", tsf_test_data_dir(), EMPTY[i]);
        struct ArrowArrayStream st;
        CHECK_OK(tsf_arrow_stream_open_file(&st, path, NULL, NULL, &e), &e);
        if (!st.release) continue;
        struct ArrowSchema s;
        CHECK_EQ_INT(st.get_schema(&st, &s), 0);
        check_schema(&s);
        struct ArrowArray a;
        CHECK_EQ_INT(st.get_next(&st, &a), 0);
        CHECK(a.release == NULL);
        st.release(&st);
        s.release(&s);
    }
}

/* A stored DATE that is no date fails the stream: errno, get_last_error, and the failure stays. */
static void test_failing_stream(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 50, 1);
    if (!r) return;
    struct ArrowArrayStream st;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_stream_open(r, NULL, &st, &e), &e);
    CHECK(st.get_last_error(&st) == NULL);
    struct ArrowArray a = {0};
    int rc = st.get_next(&st, &a);
    CHECK_EQ_INT(rc, EIO);
    CHECK(a.release == NULL);
    const char *msg = st.get_last_error(&st);
    CHECK(msg && strstr(msg, "20230230") && strstr(msg, "date"));
    CHECK_EQ_INT(st.get_next(&st, &a), EIO);
    CHECK(st.get_last_error(&st) != NULL);
    struct ArrowSchema s; /* the schema still comes */
    CHECK_EQ_INT(st.get_schema(&st, &s), 0);
    s.release(&s);
    st.release(&st);
    /* without the date column the same file streams */
    static const char *COLS[] = {"i64", "txt"};
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.columns = COLS;
    q.ncolumns = 2;
    cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
    CHECK_EQ_INT(compare_stream(r, &co), 150);
    tsf_reader_close(r);
    free(b.p);
}

/* Errors at open: nothing filled, a message naming what is wrong. */
static void test_open_errors(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 10, 0);
    if (!r) return;
    tsf_error e = {0};
    struct ArrowArrayStream st = {0};
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    tsf_query_options q;
    tsf_query_options_init(&q);
    static const char *BAD[] = {"i64", "nope"};
    q.columns = BAD;
    q.ncolumns = 2;
    o.query = &q;
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) == TSF_EINVAL && strstr(e.message, "nope"));
    CHECK(st.release == NULL);
    tsf_query_options_init(&q);
    q.table = "nosuch";
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) != TSF_OK);
    tsf_filter *f;
    CHECK_OK(tsf_filter_parse(&f, "b > 'x'", &e), &e);
    tsf_query_options_init(&q);
    q.where = f;
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) == TSF_EINVAL);
    tsf_filter_free(f);
    o.query = NULL;
    o.time_unit = (tsf_arrow_time_unit)7;
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) == TSF_EINVAL && strstr(e.message, "time_unit"));
    tsf_arrow_options_init(&o);
    o.struct_size = 8;
    CHECK(tsf_arrow_stream_open(r, &o, &st, &e) == TSF_EINVAL && strstr(e.message, "struct_size"));
    CHECK(st.release == NULL);
    CHECK(tsf_arrow_stream_open_file(&st, "/nonexistent/x.tsfile", NULL, NULL, &e) != TSF_OK);
    tsf_reader_close(r);
    free(b.p);

    /* a tree series with two types in two devices: one column cannot hold both */
    gen_buf t = {0};
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, &t};
    tsf_writer *w;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, NULL, &e), &e);
    tsf_column_schema x1 = {"x", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
    tsf_column_schema x2 = {"x", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
    CHECK_OK(tsf_writer_register_series(w, "root.a.d1", &x1, &e), &e);
    CHECK_OK(tsf_writer_register_series(w, "root.a.d2", &x2, &e), &e);
    tsf_value v = {0};
    v.v.i64 = 5;
    CHECK_OK(tsf_writer_write_row(w, "root.a.d1", 1, NULL, &v, 1, &e), &e);
    v.v.d = 2.5;
    CHECK_OK(tsf_writer_write_row(w, "root.a.d2", 1, NULL, &v, 1, &e), &e);
    CHECK_OK(tsf_writer_close(w, &e), &e);
    r = open_mem(&t);
    if (r) {
        CHECK(tsf_arrow_stream_open(r, NULL, &st, &e) == TSF_EINVAL && strstr(e.message, "series x"));
        /* one device per stream reads */
        for (size_t d = 0; d < 2; d++) {
            tsf_query_options_init(&q);
            q.devices = &d;
            q.ndevices = 1;
            cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
            CHECK_EQ_INT(compare_stream(r, &co), 1);
        }
        tsf_reader_close(r);
    }
    free(t.p);
}

/* The custom allocator serves the stream and every exported buffer; all of it is given back. */
typedef struct counting {
    long long live, calls, bytes;
} counting;
static void *c_alloc(void *ud, size_t n)
{
    counting *c = ud;
    c->live++, c->calls++;
    c->bytes += (long long)n;
    return malloc(n);
}
static void *c_realloc(void *ud, void *p, size_t o, size_t n)
{
    counting *c = ud;
    (void)o;
    if (!p) c->live++;
    c->calls++;
    return realloc(p, n);
}
static void c_free(void *ud, void *p, size_t n)
{
    counting *c = ud;
    (void)n;
    if (p) c->live--;
    free(p);
}

static void test_allocator(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 1200, 0);
    if (!r) return;
    counting cnt = {0, 0, 0};
    tsf_allocator al = {c_alloc, c_realloc, c_free, &cnt};
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.allocator = &al;
    struct ArrowArrayStream st;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_stream_open(r, &o, &st, &e), &e);
    struct ArrowArray a[16];
    int n = 0;
    while (n < 16 && st.get_next(&st, &a[n]) == 0 && a[n].release) n++;
    CHECK_EQ_INT(n, 6); /* 3 devices x 1200 rows: pages of 1000 -> batches 1000 + 200 */
    CHECK(cnt.calls >= n);
    st.release(&st);
    for (int i = 0; i < n; i++) a[i].release(&a[i]);
    CHECK_EQ_INT(cnt.live, 0);
    tsf_reader_close(r);
    free(b.p);
}

/* Children moved out and released on other threads while the parents are released on this one: the
 * shared block's reference count is the only synchronisation (run under TSan in CI). */
enum { REL_THREADS = 4, REL_ARRAYS = 8 };
typedef struct rel_job {
    struct ArrowArray kids[REL_ARRAYS];
    int n;
    long long sum;
} rel_job;

static void *release_kids(void *arg)
{
    rel_job *j = arg;
    for (int i = 0; i < j->n; i++) {
        const int64_t *v = j->kids[i].buffers[1];
        j->sum += v[j->kids[i].length - 1];
        j->kids[i].release(&j->kids[i]);
    }
    return NULL;
}

static void test_threaded_release(void)
{
    gen_buf b;
    tsf_reader *r = open_every(&b, 3000, 0);
    if (!r) return;
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.batch_size = 400;
    static const char *COLS[] = {"i64", "i64", "i64", "i64", "ts"};
    q.columns = COLS;
    q.ncolumns = 5;
    struct ArrowArrayStream st;
    if (open_query_stream(r, &q, &st)) return;
    rel_job jobs[REL_THREADS];
    memset(jobs, 0, sizeof jobs);
    struct ArrowArray arr[REL_ARRAYS];
    long long want = 0;
    int n = 0;
    for (; n < REL_ARRAYS; n++) {
        CHECK_EQ_INT(st.get_next(&st, &arr[n]), 0);
        if (!arr[n].release) break;
        for (int t = 0; t < REL_THREADS; t++) { /* child 1 + t (the 4 i64 columns) to thread t */
            jobs[t].kids[jobs[t].n++] = *arr[n].children[1 + t];
            arr[n].children[1 + t]->release = NULL;
            want += ((const int64_t *)jobs[t].kids[jobs[t].n - 1].buffers[1])[arr[n].length - 1];
        }
    }
    CHECK_EQ_INT(n, REL_ARRAYS);
    st.release(&st);
    pthread_t th[REL_THREADS];
    for (int t = 0; t < REL_THREADS; t++) CHECK(pthread_create(&th[t], NULL, release_kids, &jobs[t]) == 0);
    for (int i = 0; i < n; i++) arr[i].release(&arr[i]);
    long long got = 0;
    for (int t = 0; t < REL_THREADS; t++) {
        pthread_join(th[t], NULL);
        got += jobs[t].sum;
    }
    CHECK_EQ_INT(got, want);
    tsf_reader_close(r);
    free(b.p);
}

/* Every golden file of tsfile-java: each table of the file as one stream, equal to the cursor. */
static void test_golden(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tsfile-java", tsf_test_data_dir());
    long long total = 0, nsplit = 0;
    DIR *dh = opendir(dir);
    CHECK(dh != NULL);
    struct dirent *de;
    int nfiles = 0;
    while (dh && (de = readdir(dh))) {
        size_t len = strlen(de->d_name);
        if (len < 7 || strcmp(de->d_name + len - 7, ".tsfile")) continue;
        const char *FILE_NAME = de->d_name;
        nfiles++;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, FILE_NAME);
        tsf_reader *r;
        tsf_error e = {0};
        CHECK_OK(tsf_reader_open(&r, path, NULL, &e), &e);
        if (!r) continue;
        size_t nt = tsf_reader_table_count(r);
        for (size_t t = 0; t < nt; t++) {
            tsf_table_info ti;
            CHECK_OK(tsf_reader_table(r, t, &ti, &e), &e);
            tsf_query_options q;
            tsf_query_options_init(&q);
            q.table = ti.name;
            cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
            tsf_arrow_options o;
            tsf_arrow_options_init(&o);
            o.query = &q;
            struct ArrowSchema s;
            if (tsf_arrow_schema(r, &o, &s, &e) == TSF_OK) {
                s.release(&s);
                long long rows = compare_stream(r, &co);
                if (rows < 0) fprintf(stderr, "%s table %s failed\n", FILE_NAME, ti.name);
                total += rows;
                continue;
            }
            /* a series with different types in two devices: one stream per device */
            CHECK(strstr(e.message, "one Arrow column has one type") != NULL);
            for (size_t d = ti.first_device; d < ti.first_device + ti.ndevices; d++) {
                q.table = NULL;
                q.devices = &d;
                q.ndevices = 1;
                co.device_column = 0;
                total += compare_stream(r, &co);
                nsplit++;
            }
        }
        tsf_reader_close(r);
    }
    if (dh) closedir(dh);
    printf("golden: %d files, %lld rows, %lld devices streamed alone\n", nfiles, total, nsplit);
    CHECK(nfiles >= 80);
    CHECK(total > 10000);
    CHECK(nsplit > 0);
}

/* ---- zero copy ---------------------------------------------------------------------------------- */

typedef struct alist {
    struct ArrowArray *a;
    size_t n, cap;
} alist;

/* Every array of a stream of query q on r (zero_copy as given, the counting allocator cnt) into *l; the
 * schema into *sch. 0 on success. */
static int collect(tsf_reader *r, const tsf_query_options *q, int zero_copy, counting *cnt, struct ArrowSchema *sch,
                   alist *l)
{
    tsf_allocator al = {c_alloc, c_realloc, c_free, cnt};
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.query = q;
    o.zero_copy = zero_copy;
    o.allocator = &al;
    struct ArrowArrayStream st;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_stream_open(r, &o, &st, &e), &e);
    if (!st.release) return -1;
    CHECK_EQ_INT(st.get_schema(&st, sch), 0);
    memset(l, 0, sizeof *l);
    for (;;) {
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 64;
            l->a = realloc(l->a, l->cap * sizeof *l->a);
        }
        int rc = st.get_next(&st, &l->a[l->n]);
        CHECK_EQ_INT(rc, 0);
        if (rc || !l->a[l->n].release) break;
        check_array(sch, &l->a[l->n]);
        l->n++;
    }
    st.release(&st);
    return 0;
}

/* Differences between two arrays of one schema: lengths, null counts, bitmaps, every value byte. */
static int array_diff(const struct ArrowSchema *s, const struct ArrowArray *a, const struct ArrowArray *b)
{
    int d = 0;
    if (a->length != b->length || a->n_children != b->n_children) return 1;
    size_t n = (size_t)a->length;
    for (int64_t i = 0; i < a->n_children; i++) {
        const struct ArrowArray *x = a->children[i], *y = b->children[i];
        const char *f = s->children[i]->format;
        d += x->null_count != y->null_count || !x->buffers[0] != !y->buffers[0];
        if (x->buffers[0] && y->buffers[0]) d += memcmp(x->buffers[0], y->buffers[0], (n + 7) / 8) != 0;
        size_t bytes = !strcmp(f, "b") ? (n + 7) / 8 : x->n_buffers == 3 ? (n + 1) * 4 : n * (size_t)fmt_width(f);
        d += memcmp(x->buffers[1], y->buffers[1], bytes) != 0;
        if (x->n_buffers == 3) {
            size_t len = (size_t)((const int32_t *)x->buffers[1])[n];
            d += len && memcmp(x->buffers[2], y->buffers[2], len) != 0;
        }
    }
    return d;
}

/* Zero copy (the default) gives the arrays of the copy path, byte for byte and batch for batch, with far
 * fewer bytes allocated; its arrays outlive the stream, the reader and the file's bytes. */
static void test_zero_copy(void)
{
    gen_buf eb, gb = {0};
    char why[600];
    tsf_reader *re = open_every(&eb, 3000, 0);
    CHECK(gen_file(&gb, 3000, 400, 1000, why, sizeof why) == 0);
    tsf_reader *rg = open_mem(&gb);
    if (!re || !rg) return;
    tsf_error e = {0};
    size_t d1, a1;
    CHECK_OK(tsf_reader_find_device(rg, "root.sg1.d1", &d1, &e), &e);
    CHECK_OK(tsf_reader_find_device(rg, "root.sg1.a1", &a1, &e), &e);
    static const char *EV[] = {"i32", "i64", "f", "d", "ts", "b", "date"};
    static const char *S1[] = {"s1"}, *S12[] = {"s1", "s2"}, *A1[] = {"i64", "d", "ts", "i32", "f"};
    struct {
        tsf_reader *r;
        const size_t *dev;
        const char *const *cols;
        size_t ncols;
        int fixed; /* only fixed-width columns: most bytes are not copied */
    } CASES[] = {
        {re, NULL, EV, 7, 1},  /* aligned table devices, nulls, BOOLEAN and DATE converted */
        {rg, &d1, S1, 1, 1},   /* a non-aligned series: its decoded page */
        {rg, &d1, S12, 2, 1},  /* two merged by time */
        {rg, &a1, A1, 5, 1},   /* an aligned tree device */
        {re, NULL, NULL, 0, 0} /* TEXT/STRING/BLOB columns: copied */
    };
    static const size_t BATCH[] = {4096, 1000, 500, 7, 1};
    long long checked = 0;
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++)
        for (size_t k = 0; k < sizeof BATCH / sizeof BATCH[0]; k++) {
            tsf_query_options q;
            tsf_query_options_init(&q);
            q.devices = CASES[c].dev;
            q.ndevices = CASES[c].dev ? 1 : 0;
            q.columns = CASES[c].cols;
            q.ncolumns = CASES[c].ncols;
            q.batch_size = BATCH[k];
            cmp_opts co = {&q, -1, TSF_ARROW_MILLI};
            CHECK(compare_stream(CASES[c].r, &co) >= 3000);
            counting cz = {0, 0, 0}, cc = {0, 0, 0};
            struct ArrowSchema sz, sc;
            alist lz, lc;
            if (collect(CASES[c].r, &q, 1, &cz, &sz, &lz) || collect(CASES[c].r, &q, 0, &cc, &sc, &lc)) continue;
            CHECK_EQ_INT(lz.n, lc.n);
            int diff = 0;
            for (size_t i = 0; i < lz.n && i < lc.n; i++) diff += array_diff(&sz, &lz.a[i], &lc.a[i]);
            CHECK_EQ_INT(diff, 0);
            /* at least the time column of every row is not copied */
            long long rows = 0;
            for (size_t i = 0; i < lz.n; i++) rows += lz.a[i].length;
            if (CASES[c].fixed) CHECK(cc.bytes - cz.bytes >= 8 * rows);
            /* released in turns, newest first, the zero-copy ones' children moved out first */
            for (size_t i = lz.n; i-- > 0;) {
                struct ArrowArray kid = *lz.a[i].children[0];
                lz.a[i].children[0]->release = NULL;
                lz.a[i].release(&lz.a[i]);
                lc.a[i].release(&lc.a[i]);
                kid.release(&kid);
            }
            checked += (long long)lz.n;
            free(lz.a);
            free(lc.a);
            sz.release(&sz);
            sc.release(&sc);
            CHECK_EQ_INT(cz.live, 0);
            CHECK_EQ_INT(cc.live, 0);
        }
    /* arrays that outlive the stream, the reader and the bytes of the file */
    tsf_query_options q;
    tsf_query_options_init(&q);
    q.columns = EV;
    q.ncolumns = 7;
    q.batch_size = 700;
    counting cz = {0, 0, 0}, cc = {0, 0, 0};
    struct ArrowSchema sz, sc;
    alist lz = {0}, lc = {0};
    CHECK(collect(re, &q, 1, &cz, &sz, &lz) == 0 && collect(re, &q, 0, &cc, &sc, &lc) == 0);
    tsf_reader_close(re);
    tsf_reader_close(rg);
    memset(eb.p, 0xa5, eb.n);
    free(eb.p);
    free(gb.p);
    CHECK_EQ_INT(lz.n, lc.n);
    CHECK(lz.n > 12);
    int diff = 0;
    for (size_t i = 0; i < lz.n && i < lc.n; i++) diff += array_diff(&sz, &lz.a[i], &lc.a[i]);
    CHECK_EQ_INT(diff, 0);
    for (size_t i = 0; i < lz.n; i++) lz.a[i].release(&lz.a[i]);
    for (size_t i = 0; i < lc.n; i++) lc.a[i].release(&lc.a[i]);
    free(lz.a);
    free(lc.a);
    sz.release(&sz);
    sc.release(&sc);
    CHECK_EQ_INT(cz.live, 0);
    printf("zero copy: %lld arrays compared\n", checked);
}

/* ---- datasets: many files as one stream ------------------------------------------------------- */

static char g_tmp[64];

/* Writes b to <tmp>/<sub>/<name> (the folders made as needed); frees b. 0 on success. */
static int save(gen_buf *b, const char *sub, const char *name, char *path, size_t cap)
{
    if (!g_tmp[0]) {
        snprintf(g_tmp, sizeof g_tmp, "/tmp/tsf_arrow_XXXXXX");
        if (!mkdtemp(g_tmp)) return -1;
    }
    snprintf(path, cap, "%s/%s", g_tmp, sub);
    mkdir(path, 0755);
    snprintf(path, cap, "%s/%s/%s", g_tmp, sub, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b->p, 1, b->n, f) == b->n;
    if (f && fclose(f)) ok = 0;
    free(b->p);
    memset(b, 0, sizeof *b);
    return ok ? 0 : -1;
}

/* Table-model dataset "tab": every field, then a file with a few fields (b, i64, txt, date), then every field
 * again at later times; each file with 3 devices (one with a null TAG). */
static int make_table_dataset(void)
{
    static int done;
    if (done) return done > 0 ? 0 : -1;
    done = -1;
    gen_buf b = {0};
    char path[256];
    if (write_every_x(&b, 1300, 0, (1u << EV_FIELDS) - 1, 0) || save(&b, "tab", "f0.tsfile", path, sizeof path) ||
        write_every_x(&b, 700, 0, 1u << 0 | 1u << 2 | 1u << 5 | 1u << 8, 500000) ||
        save(&b, "tab", "f1.tsfile", path, sizeof path) ||
        write_every_x(&b, 900, 0, (1u << EV_FIELDS) - 1, 1000000) || save(&b, "tab", "f2.tsfile", path, sizeof path))
        return -1;
    done = 1;
    return 0;
}

/* Tree-model dataset "tree": two files of gen_file.h (root.sg1.d1 non-aligned, root.sg1.a1 aligned with every
 * type, and table t1), then root.a.d1 with x INT64 and y DOUBLE, then root.a.d1 with x and z TEXT and
 * root.a.d2 with y (series the other file lacks; nulls). */
static int write_xyz(gen_buf *b, int which, size_t rows)
{
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, b};
    tsf_writer *w;
    tsf_error e = {0};
    if (tsf_writer_open_callbacks(&w, &cb, NULL, &e)) return -1;
    tsf_column_schema x = {"x", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
    tsf_column_schema y = {"y", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema z = {"z", TSF_TEXT, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_status st = tsf_writer_register_series(w, "root.a.d1", &x, &e);
    if (!st) st = tsf_writer_register_series(w, "root.a.d1", which ? &z : &y, &e);
    if (!st && which) st = tsf_writer_register_series(w, "root.a.d2", &y, &e);
    char buf[32];
    for (size_t i = 0; i < rows && !st; i++) {
        int64_t t = 5000 * which + 3 * (int64_t)i;
        tsf_value v[2] = {{0}, {0}};
        v[0].v.i64 = (int64_t)i * 11 - 7;
        v[0].is_null = i % 4 == 2;
        if (which) {
            int n = snprintf(buf, sizeof buf, "z%zu", i % 9);
            v[1].v.bytes = (tsf_bytes){(const uint8_t *)buf, (size_t)n};
            v[1].is_null = i % 5 == 0;
        } else {
            v[1].v.d = (double)i * 0.5;
        }
        st = tsf_writer_write_row(w, "root.a.d1", t, NULL, v, 2, &e);
        if (!st && which && i % 2) {
            v[0] = (tsf_value){0};
            v[0].v.d = -(double)i;
            st = tsf_writer_write_row(w, "root.a.d2", t, NULL, v, 1, &e);
        }
    }
    if (st) {
        fprintf(stderr, "write_xyz: %s\n", e.message);
        tsf_writer_abort(w);
        return -1;
    }
    return tsf_writer_close(w, &e) ? -1 : 0;
}

static int make_tree_dataset(void)
{
    static int done;
    if (done) return done > 0 ? 0 : -1;
    done = -1;
    gen_buf b = {0};
    char path[256], why[600];
    if (gen_file(&b, 1500, 300, 700, why, sizeof why) || save(&b, "tree", "g0.tsfile", path, sizeof path) ||
        gen_file(&b, 800, 200, 0, why, sizeof why) || save(&b, "tree", "g1.tsfile", path, sizeof path) ||
        write_xyz(&b, 0, 1200) || save(&b, "tree", "h0.tsfile", path, sizeof path) || write_xyz(&b, 1, 900) ||
        save(&b, "tree", "h1.tsfile", path, sizeof path))
        return -1;
    done = 1;
    return 0;
}

static tsf_dataset *open_ds(const char *sub)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_tmp, sub);
    const char *paths[1] = {path};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    return ds;
}

/* Cell r of a batch column as the cursor gives cells. */
static tsf_value batch_cell(const tsf_column_batch *c, size_t r)
{
    tsf_value v = {0};
    v.is_null = c->type == TSF_VECTOR || (c->validity && !(c->validity[r / 8] >> (r % 8) & 1));
    if (v.is_null) return v;
    switch (c->type) {
    case TSF_BOOLEAN: v.v.b = ((const uint8_t *)c->values)[r]; break;
    case TSF_INT32:
    case TSF_DATE: v.v.i32 = ((const int32_t *)c->values)[r]; break;
    case TSF_FLOAT: v.v.f = ((const float *)c->values)[r]; break;
    case TSF_DOUBLE: v.v.d = ((const double *)c->values)[r]; break;
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB: v.v.bytes = ((const tsf_bytes *)c->values)[r]; break;
    default: v.v.i64 = ((const int64_t *)c->values)[r]; break;
    }
    return v;
}

static int ds_segment(const ref_row *x, size_t s, tsf_bytes *out)
{
    return tsf_dataset_device_segment(x->home, x->dev, s, out, NULL) == TSF_OK ? 0 : -1;
}

static const char *ds_cell_name(const ref_row *x, size_t k)
{
    return ((const tsf_dataset_batch *)x->src)->rows.columns[k].name;
}

static void ds_cell(const ref_row *x, size_t k, tsf_type *type, tsf_value *v)
{
    const tsf_column_batch *c = &((const tsf_dataset_batch *)x->src)->rows.columns[k];
    *type = c->type;
    *v = batch_cell(c, x->r);
}

/* Reads the whole dataset stream of query q (threads, files_at_once from it) and the one-thread dataset
 * query of the same options (its own columns: q's, or every series of each device); every row and cell must
 * match, a column the batch lacks being null. Returns the rows (-1 when the stream does not open). */
static long long compare_ds_stream(tsf_dataset *ds, const tsf_dataset_query_options *q, int device_column,
                                   tsf_arrow_time_unit unit)
{
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.time_unit = unit;
    if (device_column >= 0) o.device_column = device_column;
    struct ArrowArrayStream st;
    struct ArrowSchema sch, alone;
    tsf_error e = {0};
    tsf_status s = tsf_arrow_dataset_stream_open(ds, q, &o, &st, &e);
    CHECK_OK(s, &e);
    if (s) return -1;
    CHECK_EQ_INT(st.get_schema(&st, &sch), 0);
    CHECK_OK(tsf_arrow_dataset_schema(ds, q, &o, &alone, &e), &e);
    check_schemas(&sch, &alone);
    int tree = sch.n_children > 1 && !strcmp(sch.children[1]->name, "device") && device_column != 0;
    tsf_dataset_query_options rq;
    tsf_dataset_query_options_init(&rq);
    if (q) rq = *q;
    rq.threads = 1;
    rq.files_at_once = 1;
    tsf_dataset_query *dq;
    CHECK_OK(tsf_dataset_query_open(ds, &rq, &dq, &e), &e);
    struct ArrowArray arr = {0};
    int64_t row = 0;
    long long rows = 0;
    int mism = 0, ended = 0;
    char *seen = calloc((size_t)sch.n_children, 1);
    for (const tsf_dataset_batch *db; !ended;) {
        CHECK_OK(tsf_dataset_query_next(dq, &db, &e), &e);
        if (!db) break;
        tsf_dataset_device_info di;
        tsf_table_info ti = {0};
        CHECK_OK(tsf_dataset_device(ds, db->device, &di, &e), &e);
        CHECK_OK(tsf_dataset_table(ds, di.table, &ti, &e), &e);
        for (size_t r = 0; r < db->rows.nrows; r++) {
            if ((ended = stream_row(&st, &sch, &arr, &row) != 0)) break;
            ref_row x = {db->rows.times[r], di.name, &ti, ds_segment, db->rows.ncolumns, ds_cell_name, ds_cell,
                         (void *)db, ds, db->device, r};
            mism += compare_row(&sch, &arr, row, tree, q && q->columns, &x, seen);
            row++;
            rows++;
        }
    }
    CHECK_EQ_INT(mism, 0);
    free(seen);
    tsf_dataset_query_close(dq);
    finish_stream(&st, &sch, &arr, row);
    return rows;
}

/* threads x files_at_once settings of a dataset query (the order does not depend on them) */
static const unsigned DS_SETTINGS[][2] = {{1, 1}, {2, 0}, {1, 3}, {4, 8}};

static void test_dataset_table(void)
{
    if (make_table_dataset()) {
        CHECK(!"table dataset written");
        return;
    }
    tsf_dataset *ds = open_ds("tab");
    if (!ds) return;
    long long all = 3 * (1300 + 700 + 900);
    tsf_dataset_query_options q;
    for (size_t k = 0; k < sizeof DS_SETTINGS / sizeof DS_SETTINGS[0]; k++) {
        tsf_dataset_query_options_init(&q);
        q.threads = DS_SETTINGS[k][0];
        q.files_at_once = DS_SETTINGS[k][1];
        CHECK_EQ_INT(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI), all);
        q.batch_size = 77;
        CHECK_EQ_INT(compare_ds_stream(ds, &q, -1, TSF_ARROW_MICRO), all);
    }
    CHECK_EQ_INT(compare_ds_stream(ds, NULL, -1, TSF_ARROW_NANO), all);
    /* the schema: time, TAGs, the union of the FIELDs in the order the files introduce them */
    struct ArrowSchema s;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_dataset_schema(ds, NULL, NULL, &s, &e), &e);
    CHECK_EQ_INT(s.n_children, 13);
    CHECK(s.n_children == 13 && !strcmp(s.children[1]->name, "city") && !strcmp(s.children[3]->name, "b") &&
          !strcmp(s.children[11]->name, "date") && !strcmp(s.children[11]->format, "tdD"));
    s.release(&s);
    /* chosen columns (TAGs mixed with fields, one the middle file lacks), a range over two files, a filter
     * with a TAG comparison, threads */
    static const char *COLS[] = {"ts", "site", "b", "city", "d"};
    tsf_filter *f;
    CHECK_OK(tsf_filter_parse(&f, "city <> 'lima' and (i64 < 0 or b = true)", &e), &e);
    for (size_t k = 0; k < sizeof DS_SETTINGS / sizeof DS_SETTINGS[0]; k++) {
        tsf_dataset_query_options_init(&q);
        q.columns = COLS;
        q.ncolumns = 5;
        q.time_min = 100000;
        q.time_max = 1050000;
        q.where = f;
        q.threads = DS_SETTINGS[k][0];
        q.files_at_once = DS_SETTINGS[k][1];
        CHECK(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI) > 100);
        /* devices by name */
        static const char *DEVS[] = {"every.x.s-1", "every.lima"};
        tsf_dataset_query_options_init(&q);
        q.devices = DEVS;
        q.ndevices = 2;
        q.threads = DS_SETTINGS[k][0];
        CHECK_EQ_INT(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI), 2 * (1300 + 700 + 900));
    }
    tsf_filter_free(f);
    /* empty: a range between the files' */
    tsf_dataset_query_options_init(&q);
    q.time_min = 400000;
    q.time_max = 499999;
    CHECK_EQ_INT(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI), 0);
    tsf_dataset_close(ds);
}

static void test_dataset_tree(void)
{
    if (make_tree_dataset()) {
        CHECK(!"tree dataset written");
        return;
    }
    tsf_dataset *ds = open_ds("tree");
    if (!ds) return;
    static const char *DEVS[] = {"root.sg1.d1", "root.sg1.a1", "root.a.d1", "root.a.d2"};
    tsf_dataset_query_options q;
    for (size_t k = 0; k < sizeof DS_SETTINGS / sizeof DS_SETTINGS[0]; k++) {
        tsf_dataset_query_options_init(&q);
        q.devices = DEVS;
        q.ndevices = 4;
        q.threads = DS_SETTINGS[k][0];
        q.files_at_once = DS_SETTINGS[k][1];
        CHECK(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI) > 3 * (1500 + 800));
        q.batch_size = 5;
        CHECK(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI) > 3 * (1500 + 800));
    }
    /* the union of the series: a1's, d1's, x, y, z */
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    struct ArrowSchema s;
    tsf_error e = {0};
    tsf_dataset_query_options_init(&q);
    q.devices = DEVS;
    q.ndevices = 4;
    CHECK_OK(tsf_arrow_dataset_schema(ds, &q, &o, &s, &e), &e);
    CHECK_EQ_INT(s.n_children, 2 + GEN_A1_COLS + 3 + 3);
    CHECK(child_index(&s, "z") > 0 && child_index(&s, "s3") > 0 && child_index(&s, "device") == 1);
    s.release(&s);
    /* one device without the device column; chosen columns; a filter */
    static const char *ONE[] = {"root.a.d1"};
    static const char *COLS[] = {"z", "y", "x"};
    tsf_filter *f;
    CHECK_OK(tsf_filter_parse(&f, "x > 100", &e), &e);
    tsf_dataset_query_options_init(&q);
    q.devices = ONE;
    q.ndevices = 1;
    CHECK(compare_ds_stream(ds, &q, 0, TSF_ARROW_MILLI) > 2000); /* rows with x and z both null are not written */
    q.columns = COLS;
    q.ncolumns = 3;
    q.where = f;
    q.threads = 2;
    CHECK(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI) > 100);
    tsf_filter_free(f);
    /* the table of the gen_file files as its own stream */
    tsf_dataset_query_options_init(&q);
    q.table = "t1";
    q.threads = 3;
    CHECK(compare_ds_stream(ds, &q, -1, TSF_ARROW_MILLI) > 0);
    /* every device: tree devices and a table are not one stream */
    struct ArrowArrayStream st = {0};
    CHECK(tsf_arrow_dataset_stream_open(ds, NULL, NULL, &st, &e) == TSF_EINVAL && strstr(e.message, "table"));
    CHECK(st.release == NULL);
    tsf_dataset_close(ds);
}

/* Arrays outlive the stream and the dataset; open errors; the owning open; the allocator. */
static void test_dataset_lifetimes(void)
{
    if (make_table_dataset()) return;
    tsf_dataset *ds = open_ds("tab");
    if (!ds) return;
    counting cnt = {0, 0, 0};
    tsf_allocator al = {c_alloc, c_realloc, c_free, &cnt};
    tsf_arrow_options o;
    tsf_arrow_options_init(&o);
    o.allocator = &al;
    tsf_dataset_query_options q;
    tsf_dataset_query_options_init(&q);
    q.threads = 2;
    q.batch_size = 600;
    struct ArrowArrayStream st;
    tsf_error e = {0};
    CHECK_OK(tsf_arrow_dataset_stream_open(ds, &q, &o, &st, &e), &e);
    struct ArrowSchema sch;
    CHECK_EQ_INT(st.get_schema(&st, &sch), 0);
    enum { MAXA = 64 };
    struct ArrowArray arr[MAXA];
    uint64_t sum[MAXA];
    int n = 0;
    for (; n < MAXA; n++) {
        CHECK_EQ_INT(st.get_next(&st, &arr[n]), 0);
        if (!arr[n].release) break;
        sum[n] = array_hash(&sch, &arr[n], -1, NULL);
    }
    CHECK(n > 9 && n < MAXA);
    st.release(&st);
    tsf_dataset_close(ds);
    for (int i = n - 1; i >= 0; i--) {
        CHECK(array_hash(&sch, &arr[i], -1, NULL) == sum[i]);
        arr[i].release(&arr[i]);
    }
    sch.release(&sch);
    CHECK_EQ_INT(cnt.live, 0);

    /* the stream that opens and owns its dataset */
    char dir[256];
    snprintf(dir, sizeof dir, "%s/tab", g_tmp);
    const char *paths[1] = {dir};
    CHECK_OK(tsf_arrow_dataset_stream_open_paths(&st, paths, 1, NULL, NULL, NULL, &e), &e);
    long long rows = 0;
    struct ArrowArray a;
    while (st.release && st.get_next(&st, &a) == 0 && a.release) {
        rows += a.length;
        a.release(&a);
    }
    CHECK_EQ_INT(rows, 3 * (1300 + 700 + 900));
    if (st.release) st.release(&st);

    /* errors at open: nothing filled */
    ds = open_ds("tab");
    if (!ds) return;
    memset(&st, 0, sizeof st);
    static const char *BAD[] = {"i64", "nope"};
    tsf_dataset_query_options_init(&q);
    q.columns = BAD;
    q.ncolumns = 2;
    CHECK(tsf_arrow_dataset_stream_open(ds, &q, NULL, &st, &e) == TSF_EINVAL && strstr(e.message, "nope"));
    static const char *NODEV[] = {"every.nowhere"};
    tsf_dataset_query_options_init(&q);
    q.devices = NODEV;
    q.ndevices = 1;
    CHECK(tsf_arrow_dataset_stream_open(ds, &q, NULL, &st, &e) == TSF_ENOTFOUND && strstr(e.message, "nowhere"));
    tsf_dataset_query_options_init(&q);
    q.table = "nosuch";
    CHECK(tsf_arrow_dataset_stream_open(ds, &q, NULL, &st, &e) == TSF_ENOTFOUND);
    tsf_query_options one;
    tsf_query_options_init(&one);
    tsf_arrow_options_init(&o);
    o.query = &one;
    CHECK(tsf_arrow_dataset_stream_open(ds, NULL, &o, &st, &e) == TSF_EINVAL && strstr(e.message, "query"));
    tsf_dataset_query_options_init(&q);
    q.struct_size = 8;
    CHECK(tsf_arrow_dataset_stream_open(ds, &q, NULL, &st, &e) == TSF_EINVAL && strstr(e.message, "struct_size"));
    CHECK(st.release == NULL);
    tsf_dataset_close(ds);
}

/* A file failing while the stream runs: the earlier files' rows, then the error naming the file, sticky. */
static void test_dataset_failing(void)
{
    gen_buf b = {0};
    char good[256], bad[256], gone[256];
    if (write_every_x(&b, 300, 0, (1u << EV_FIELDS) - 1, 0) || save(&b, "bad", "a.tsfile", good, sizeof good) ||
        write_every_x(&b, 300, 1, (1u << EV_FIELDS) - 1, 100000) || save(&b, "bad", "b.tsfile", bad, sizeof bad) ||
        write_every_x(&b, 300, 0, (1u << EV_FIELDS) - 1, 200000) || save(&b, "bad", "c.tsfile", gone, sizeof gone)) {
        CHECK(!"files written");
        return;
    }
    tsf_dataset *ds = open_ds("bad");
    if (!ds) return;
    for (size_t k = 0; k < sizeof DS_SETTINGS / sizeof DS_SETTINGS[0]; k++) {
        tsf_dataset_query_options q;
        tsf_dataset_query_options_init(&q);
        q.threads = DS_SETTINGS[k][0];
        q.files_at_once = DS_SETTINGS[k][1];
        struct ArrowArrayStream st;
        tsf_error e = {0};
        CHECK_OK(tsf_arrow_dataset_stream_open(ds, &q, NULL, &st, &e), &e);
        long long rows = 0;
        int rc;
        struct ArrowArray a;
        while ((rc = st.get_next(&st, &a)) == 0 && a.release) {
            rows += a.length;
            a.release(&a);
        }
        CHECK_EQ_INT(rc, EIO);
        CHECK(rows >= 900 && rows < 1800); /* the first file, and the bad one's batches before its bad date */
        const char *msg = st.get_last_error(&st);
        CHECK(msg && strstr(msg, bad) && strstr(msg, "20230230"));
        CHECK_EQ_INT(st.get_next(&st, &a), EIO);
        st.release(&st);
    }
    tsf_dataset_close(ds);
    /* a file gone after the dataset opened: its error names it */
    const char *paths[2] = {good, gone};
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 2, NULL, &e), &e);
    if (!ds) return;
    unlink(gone);
    struct ArrowArrayStream st;
    CHECK_OK(tsf_arrow_dataset_stream_open(ds, NULL, NULL, &st, &e), &e);
    long long rows = 0;
    int rc;
    struct ArrowArray a;
    while ((rc = st.get_next(&st, &a)) == 0 && a.release) {
        rows += a.length;
        a.release(&a);
    }
    CHECK(rc != 0);
    CHECK_EQ_INT(rows, 900);
    CHECK(st.get_last_error(&st) && strstr(st.get_last_error(&st), gone));
    st.release(&st);
    tsf_dataset_close(ds);
    unlink(good);
    unlink(bad);
}

/* Removes the files the dataset tests wrote. */
static void remove_tmp(void)
{
    if (!g_tmp[0]) return;
    static const char *FILES[] = {"tab/f0.tsfile", "tab/f1.tsfile", "tab/f2.tsfile", "tree/g0.tsfile",
                                  "tree/g1.tsfile", "tree/h0.tsfile", "tree/h1.tsfile", "tab", "tree", "bad", ""};
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", g_tmp, FILES[i]);
        if (remove(p) && errno != ENOENT) fprintf(stderr, "cannot remove %s\n", p);
    }
}

int main(void)
{
    TSF_RUN(test_date_days);
    TSF_RUN(test_gen_file);
    TSF_RUN(test_every_type);
    TSF_RUN(test_release_orders);
    TSF_RUN(test_empty);
    TSF_RUN(test_failing_stream);
    TSF_RUN(test_open_errors);
    TSF_RUN(test_allocator);
    TSF_RUN(test_threaded_release);
    TSF_RUN(test_golden);
    TSF_RUN(test_zero_copy);
    TSF_RUN(test_dataset_table);
    TSF_RUN(test_dataset_tree);
    TSF_RUN(test_dataset_lifetimes);
    TSF_RUN(test_dataset_failing);
    remove_tmp();
    return tsf_test_finish();
}
