/*
 * test_dataset.c - datasets of several TsFiles (tsf_dataset_*): path expansion (directory, glob, list),
 * the schema union and the type-conflict error, per-file and per-series ranges, queries equal to the
 * per-file queries concatenated for every thread / files_at_once setting, files outside the query's time
 * range or tag selection never read after open (counted through a source's read callbacks), and folds whose
 * results are bit-identical across settings and equal to a row-by-row reference with the same rule (one
 * partial per file, merged in file order), the same for grouped aggregation (tsf_dataset_aggregate) field by
 * field.
 *
 * Data: a table-model directory (table t: TAG region, FIELDs f0 INT64, f1 DOUBLE with nulls), files with
 * consecutive time ranges, one overlapping another, one far outside the queried range, one holding only
 * region r9; and a tree-model directory (root.sg.d0 non-aligned s1 INT64 / s2 DOUBLE, s3 only in a later
 * file; root.sg.a0 aligned x DOUBLE).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char g_dir[64];

static const char *tmp_dir(void)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/tsf_ds_XXXXXX");
        if (!mkdtemp(g_dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return g_dir;
}

static void path_of(char *buf, size_t cap, const char *sub, const char *name)
{
    snprintf(buf, cap, "%s/%s%s%s", tmp_dir(), sub, name ? "/" : "", name ? name : "");
}

/* A double whose magnitude varies with k, so that sums depend on their order. */
static double val_d(size_t file, size_t dev, size_t i)
{
    size_t k = file * 100003 + dev * 7919 + i;
    return sin((double)k) * pow(10.0, (double)(k % 9) - 3.0);
}

typedef struct tfile {
    const char *name;
    int64_t t0;  /* first time */
    size_t rows; /* per device, one every 10 */
    const char *regions;
} tfile;

/* Table-model files: f0..f3 consecutive, f4 overlapping f1, f5 far outside, f6 only region r9. */
static const tfile TFILES[] = {
    {"a0.tsfile", 0, 300, "012"},    {"a1.tsfile", 3000, 300, "01"}, {"a2.tsfile", 6000, 250, "12"},
    {"a3.tsfile", 8500, 300, "012"}, {"a4.tsfile", 4000, 200, "0"},  {"a5.tsfile", 100000000, 50, "01"},
    {"a6.tsfile", 1000, 100, "9"},
};
#define NTFILES (sizeof TFILES / sizeof TFILES[0])

/* Closes a writer after rows were written with status st (aborts it on failure); 0 or -1 (message printed). */
static int finish_write(tsf_writer *w, tsf_status st, const char *path, tsf_error *e)
{
    if (st) {
        fprintf(stderr, "write %s: %s\n", path, e->message);
        tsf_writer_abort(w);
        return -1;
    }
    st = tsf_writer_close(w, e);
    if (st) fprintf(stderr, "close %s: %s\n", path, e->message);
    return st ? -1 : 0;
}

/* A writer on path that seals pages at `page` points. */
static tsf_status open_paged(tsf_writer **w, const char *path, uint32_t page, tsf_error *e)
{
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page;
    return tsf_writer_open(w, path, &o, e);
}

static int write_table_file(size_t fi, const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_paged(&w, path, 64, &e);
    tsf_column_schema cols[3] = {{"region", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"f0", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"f1", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "t", cols, 3, &e);
    const tfile *tf = &TFILES[fi];
    for (const char *r = tf->regions; *r && !st; r++) {
        char reg[3] = {'r', *r, 0};
        size_t dev = (size_t)(*r - '0');
        for (size_t i = 0; i < tf->rows && !st; i++) {
            const char *names[3] = {"region", "f0", "f1"};
            tsf_value v[3];
            memset(v, 0, sizeof v);
            v[0].v.bytes.data = (const uint8_t *)reg;
            v[0].v.bytes.len = 2;
            v[1].v.i64 = (int64_t)(i * i) - (int64_t)(dev * 1000) + (int64_t)fi;
            v[2].v.d = val_d(fi, dev, i);
            v[2].is_null = i % 7 == 3;
            if (i % 11 == 5) v[1].is_null = 1;
            st = tsf_writer_write_row(w, "t", tf->t0 + (int64_t)i * 10 + (int64_t)dev, names, v, 3, &e);
        }
        if (!st) st = tsf_writer_flush(w, &e);
    }
    return finish_write(w, st, path, &e);
}

/* Tree files: b0 (d0 s1,s2; a0 x), b1 (d0 s1,s2,s3), b2 (a0 x only). conflict: d0.s1 as DOUBLE. */
static int write_tree_file(int which, const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open(&w, path, NULL, &e);
    tsf_column_schema s1 = {"s1", which == 3 ? TSF_DOUBLE : TSF_INT64, TSF_ENC_PLAIN, TSF_SNAPPY,
                            TSF_COLUMN_FIELD};
    tsf_column_schema s2 = {"s2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema s3 = {"s3", TSF_INT32, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema x = {"x", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
    int has_d0 = which != 2, has_a0 = which != 1;
    if (!st && has_d0) st = tsf_writer_register_series(w, "root.sg.d0", &s1, &e);
    if (!st && has_d0 && which != 3) st = tsf_writer_register_series(w, "root.sg.d0", &s2, &e);
    if (!st && which == 1) st = tsf_writer_register_series(w, "root.sg.d0", &s3, &e);
    if (!st && has_a0) st = tsf_writer_register_aligned(w, "root.sg.a0", &x, 1, &e);
    int64_t t0 = which * 500;
    for (size_t i = 0; i < 120 && !st; i++) {
        int64_t t = t0 + (int64_t)i * 5;
        if (has_d0) {
            const char *n[3] = {"s1", "s2", "s3"};
            tsf_value v[3];
            memset(v, 0, sizeof v);
            if (which == 3)
                v[0].v.d = (double)i;
            else
                v[0].v.i64 = (int64_t)i * 3 - 50;
            v[1].v.d = val_d((size_t)which, 5, i);
            v[2].v.i32 = (int32_t)i;
            size_t k = which == 3 ? 1 : which == 1 ? 3 : 2;
            if (i % 4 == 1 && k > 1) v[1].is_null = 1;
            st = tsf_writer_write_row(w, "root.sg.d0", t, n, v, k, &e);
        }
        if (!st && has_a0) {
            const char *n = "x";
            tsf_value v = {0};
            v.v.d = val_d((size_t)which, 6, i);
            v.is_null = i % 5 == 2;
            st = tsf_writer_write_row(w, "root.sg.a0", t + 1, &n, &v, 1, &e);
        }
    }
    if (st) {
        fprintf(stderr, "write %s: %s\n", path, e.message);
        tsf_writer_abort(w);
        return -1;
    }
    return tsf_writer_close(w, &e) ? -1 : 0;
}

static int mkdir_p(const char *p)
{
    return mkdir(p, 0755) && access(p, F_OK) ? -1 : 0;
}

static int g_ready;

static int make_data(void)
{
    if (g_ready) return g_ready > 0;
    g_ready = -1;
    char p[256];
    path_of(p, sizeof p, "table", NULL);
    if (mkdir_p(p)) return 0;
    for (size_t f = 0; f < NTFILES; f++) {
        path_of(p, sizeof p, "table", TFILES[f].name);
        if (write_table_file(f, p)) return 0;
    }
    path_of(p, sizeof p, "tree", NULL);
    if (mkdir_p(p)) return 0;
    const char *tn[3] = {"b0.tsfile", "b1.tsfile", "b2.tsfile"};
    for (int i = 0; i < 3; i++) {
        path_of(p, sizeof p, "tree", tn[i]);
        if (write_tree_file(i, p)) return 0;
    }
    path_of(p, sizeof p, "conflict.tsfile", NULL);
    if (write_tree_file(3, p)) return 0;
    g_ready = 1;
    return 1;
}

/* ---- row streams: what a query returned, as bytes (file, device, time, cells) ---- */

typedef struct rbuf {
    uint8_t *p;
    size_t n, cap;
} rbuf;

static void rb_put(rbuf *b, const void *d, size_t len)
{
    if (b->n + len > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + len) c *= 2;
        uint8_t *g = realloc(b->p, c);
        if (!g) abort();
        b->p = g;
        b->cap = c;
    }
    if (len) memcpy(b->p + b->n, d, len);
    b->n += len;
}

static void rb_batch(rbuf *b, size_t file, const char *dev, const tsf_batch *bt)
{
    for (size_t r = 0; r < bt->nrows; r++) {
        rb_put(b, &file, sizeof file);
        rb_put(b, dev, strlen(dev) + 1);
        rb_put(b, &bt->times[r], 8);
        for (size_t c = 0; c < bt->ncolumns; c++) {
            const tsf_column_batch *cb = &bt->columns[c];
            uint8_t valid = cb->validity ? (cb->validity[r / 8] >> (r % 8)) & 1 : 1;
            rb_put(b, cb->name, strlen(cb->name) + 1);
            rb_put(b, &cb->type, sizeof cb->type);
            rb_put(b, &valid, 1);
            if (!valid || cb->type == TSF_VECTOR) continue;
            if (cb->type == TSF_TEXT || cb->type == TSF_STRING || cb->type == TSF_BLOB) {
                const tsf_bytes *v = &((const tsf_bytes *)cb->values)[r];
                rb_put(b, &v->len, sizeof v->len);
                rb_put(b, v->data, v->len);
            } else {
                size_t esz = tsf_type_size(cb->type);
                rb_put(b, (const uint8_t *)cb->values + r * esz, esz);
            }
        }
    }
}

typedef struct qspec {
    const char *table;
    const char *const *devices;
    size_t ndevices;
    const char *const *columns;
    size_t ncolumns;
    int64_t tmin, tmax;
    const char *where;
} qspec;

/* The rows of every file queried alone, in file order. */
static int reference_rows(tsf_dataset *ds, const qspec *s, tsf_filter *where, rbuf *out)
{
    tsf_error e = {0};
    for (size_t f = 0; f < tsf_dataset_file_count(ds); f++) {
        tsf_dataset_file_info fi;
        if (tsf_dataset_file(ds, f, &fi, &e)) return -1;
        tsf_reader *r = NULL;
        if (tsf_reader_open(&r, fi.path, NULL, &e)) return -1;
        size_t locals[8], nl = 0;
        for (size_t i = 0; i < s->ndevices; i++)
            if (!tsf_reader_find_device(r, s->devices[i], &locals[nl], NULL)) nl++;
        for (size_t i = 1; i < nl; i++) /* the file's device order */
            for (size_t j = i; j > 0 && locals[j - 1] > locals[j]; j--) {
                size_t t = locals[j];
                locals[j] = locals[j - 1];
                locals[j - 1] = t;
            }
        if (s->devices && !nl) {
            tsf_reader_close(r);
            continue;
        }
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.table = s->table;
        if (s->devices) o.devices = locals, o.ndevices = nl;
        o.columns = s->columns;
        o.ncolumns = s->ncolumns;
        o.time_min = s->tmin;
        o.time_max = s->tmax;
        o.batch_size = 50;
        o.where = where;
        tsf_query *q = NULL;
        tsf_status st = tsf_query_open(r, &o, &q, &e);
        for (const tsf_batch *b; !st;) {
            if ((st = tsf_query_next(q, &b, &e)) || !b) break;
            tsf_device_info di;
            if ((st = tsf_reader_device(r, b->device, &di, &e))) break;
            rb_batch(out, f, di.name, b);
        }
        tsf_query_close(q);
        tsf_reader_close(r);
        if (st) {
            fprintf(stderr, "reference: %s\n", e.message);
            return -1;
        }
    }
    return 0;
}

static void opts_of(const qspec *s, tsf_filter *where, unsigned threads, unsigned k,
                    tsf_dataset_query_options *o)
{
    tsf_dataset_query_options_init(o);
    o->table = s->table;
    o->devices = s->devices;
    o->ndevices = s->ndevices;
    o->columns = s->columns;
    o->ncolumns = s->ncolumns;
    o->time_min = s->tmin;
    o->time_max = s->tmax;
    o->batch_size = 50;
    o->where = where;
    o->threads = threads;
    o->files_at_once = k;
}

static const unsigned SETTINGS[][2] = {{1, 1}, {2, 0}, {1, 3}, {4, 8}, {2, 1}, {3, 2}};
#define NSETTINGS (sizeof SETTINGS / sizeof SETTINGS[0])

/* Every setting returns the reference's rows, batch by batch from the right file and device. */
static void check_query(tsf_dataset *ds, const qspec *s)
{
    tsf_error e = {0};
    tsf_filter *where = NULL;
    if (s->where) CHECK_OK(tsf_filter_parse(&where, s->where, &e), &e);
    rbuf ref = {0};
    CHECK(reference_rows(ds, s, where, &ref) == 0);
    for (size_t k = 0; k < NSETTINGS; k++) {
        tsf_dataset_query_options o;
        opts_of(s, where, SETTINGS[k][0], SETTINGS[k][1], &o);
        tsf_dataset_query *q = NULL;
        rbuf got = {0};
        CHECK_OK(tsf_dataset_query_open(ds, &o, &q, &e), &e);
        size_t last_file = 0;
        for (const tsf_dataset_batch *b; q;) {
            tsf_status st = tsf_dataset_query_next(q, &b, &e);
            CHECK_OK(st, &e);
            if (st || !b) break;
            tsf_dataset_device_info di;
            CHECK_OK(tsf_dataset_device(ds, b->device, &di, &e), &e);
            CHECK(!strcmp(di.name, b->device_name));
            CHECK(b->file >= last_file);
            last_file = b->file;
            rb_batch(&got, b->file, b->device_name, &b->rows);
        }
        tsf_dataset_query_stats qs;
        tsf_dataset_query_get_stats(q, &qs);
        CHECK_EQ_INT(qs.files_opened + qs.files_skipped, tsf_dataset_file_count(ds));
        tsf_dataset_query_close(q);
        if (got.n != ref.n || memcmp(got.p, ref.p, ref.n)) {
            size_t at = 0;
            while (at < got.n && at < ref.n && got.p[at] == ref.p[at]) at++;
            fprintf(
                stderr,
                "  query where=%s threads=%u files_at_once=%u: %zu bytes vs %zu, first difference at %zu\n",
                s->where ? s->where : "-", SETTINGS[k][0], SETTINGS[k][1], got.n, ref.n, at);
        }
        CHECK_EQ_INT(got.n, ref.n);
        CHECK(got.n == ref.n && !memcmp(got.p, ref.p, ref.n));
        free(got.p);
    }
    CHECK(ref.n > 0);
    free(ref.p);
    tsf_filter_free(where);
}

/* The dataset of directory sub of the test data (written on first use); NULL after a failed check. */
static tsf_dataset *open_dir(const char *sub)
{
    if (!make_data()) {
        CHECK(0);
        return NULL;
    }
    char p[256];
    path_of(p, sizeof p, sub, NULL);
    const char *paths[1] = {p};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    return ds;
}

static void test_query_table(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    const char *f1[1] = {"f1"};
    const char *devs[2] = {"t.r2", "t.r0"};
    const qspec specs[] = {
        {"t", NULL, 0, NULL, 0, INT64_MIN, INT64_MAX, NULL},
        {NULL, NULL, 0, f1, 1, 2000, 7000, NULL},
        {"t", NULL, 0, NULL, 0, INT64_MIN, INT64_MAX, "f1 > 0.5"},
        {"t", NULL, 0, NULL, 0, INT64_MIN, 5000, "region = 'r1' or region = 'r9'"},
        {NULL, devs, 2, NULL, 0, 0, 9000, NULL},
        {"t", NULL, 0, f1, 1, INT64_MIN, INT64_MAX, "region <> 'r0' and f0 > 1000"},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) check_query(ds, &specs[i]);
    tsf_dataset_close(ds);
}

static void test_query_tree(void)
{
    tsf_dataset *ds = open_dir("tree");
    if (!ds) return;
    const char *cols[2] = {"s3", "s2"};
    const qspec specs[] = {
        {NULL, NULL, 0, NULL, 0, INT64_MIN, INT64_MAX, NULL},
        {NULL, NULL, 0, cols, 2, 300, 800, NULL},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) check_query(ds, &specs[i]);
    tsf_dataset_close(ds);
}

static void test_schema_tree(void)
{
    tsf_dataset *ds = open_dir("tree");
    if (!ds) return;
    tsf_error e = {0};
    CHECK_EQ_INT(tsf_dataset_file_count(ds), 3);
    CHECK_EQ_INT(tsf_dataset_table_count(ds), 1);
    CHECK_EQ_INT(tsf_dataset_device_count(ds), 2);
    size_t d0 = 99, a0 = 99;
    CHECK_OK(tsf_dataset_find_device(ds, "root.sg.d0", &d0, &e), &e);
    CHECK_OK(tsf_dataset_find_device(ds, "root.sg.a0", &a0, &e), &e);
    CHECK(tsf_dataset_find_device(ds, "root.sg.zz", &d0, NULL) == TSF_ENOTFOUND);
    CHECK(a0 < d0); /* by name */
    tsf_dataset_device_info di;
    CHECK_OK(tsf_dataset_device(ds, d0, &di, &e), &e);
    CHECK_EQ_INT(di.nseries, 3);
    CHECK_EQ_INT(di.nfiles, 2);
    CHECK_EQ_INT(di.aligned, 0);
    CHECK_EQ_INT(di.time_min, 0);
    CHECK_EQ_INT(di.time_max, 500 + 119 * 5);
    const char *names[3] = {"s1", "s2", "s3"};
    const tsf_type types[3] = {TSF_INT64, TSF_DOUBLE, TSF_INT32};
    const uint64_t counts[3] = {240, 180, 120};
    const size_t nfiles[3] = {2, 2, 1};
    for (size_t j = 0; j < 3; j++) {
        tsf_dataset_series_info si;
        CHECK_OK(tsf_dataset_series(ds, d0, j, &si, &e), &e);
        CHECK(!strcmp(si.measurement, names[j]));
        CHECK_EQ_INT(si.type, types[j]);
        CHECK_EQ_INT(si.count, counts[j]);
        CHECK_EQ_INT(si.nfiles, nfiles[j]);
    }
    /* s3 only in b1; per file ranges */
    tsf_dataset_series_info si;
    CHECK(tsf_dataset_file_series(ds, 0, d0, 2, &si, NULL) == TSF_ENOTFOUND);
    CHECK_OK(tsf_dataset_file_series(ds, 1, d0, 2, &si, &e), &e);
    CHECK_EQ_INT(si.time_min, 500);
    CHECK_EQ_INT(si.time_max, 500 + 119 * 5);
    CHECK_EQ_INT(si.count, 120);
    /* its segments are the file's (a reader of the file that holds it) */
    tsf_dataset_file_info f1;
    CHECK_OK(tsf_dataset_file(ds, 1, &f1, &e), &e);
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, f1.path, NULL, &e), &e);
    size_t rd = 0;
    tsf_device_info rdi;
    if (r) {
        CHECK_OK(tsf_reader_find_device(r, "root.sg.d0", &rd, &e), &e);
        CHECK_OK(tsf_reader_device(r, rd, &rdi, &e), &e);
        CHECK_EQ_INT(di.nsegments, rdi.nsegments);
        for (size_t k = 0; k < di.nsegments && k < rdi.nsegments; k++) {
            tsf_bytes a, b;
            CHECK_OK(tsf_dataset_device_segment(ds, d0, k, &a, &e), &e);
            CHECK_OK(tsf_reader_device_segment(r, rd, k, &b, &e), &e);
            CHECK(a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len)));
        }
        tsf_reader_close(r);
    }
    CHECK(di.nsegments >= 2);
    tsf_bytes sg;
    CHECK(tsf_dataset_device_segment(ds, d0, di.nsegments, &sg, NULL) == TSF_ENOTFOUND);
    CHECK_OK(tsf_dataset_device(ds, a0, &di, &e), &e);
    CHECK_EQ_INT(di.aligned, 1);
    CHECK_EQ_INT(di.nfiles, 2);
    CHECK_EQ_INT(di.time_min, 1);
    CHECK_EQ_INT(di.time_max, 1000 + 119 * 5 + 1);
    CHECK_OK(tsf_dataset_series(ds, a0, 0, &si, &e), &e);
    CHECK_EQ_INT(si.count, 2 * (120 - 24));
    CHECK(tsf_dataset_file_series(ds, 1, a0, 0, &si, NULL) == TSF_ENOTFOUND);
    tsf_dataset_file_info fi;
    CHECK_OK(tsf_dataset_file(ds, 2, &fi, &e), &e);
    CHECK(strstr(fi.path, "/tree/b2.tsfile") != NULL);
    CHECK_EQ_INT(fi.ndevices, 1);
    CHECK_EQ_INT(fi.points, 120 - 24);
    CHECK_EQ_INT(fi.time_min, 1001);
    tsf_table_info ti;
    CHECK_OK(tsf_dataset_table(ds, 0, &ti, &e), &e);
    CHECK(!strcmp(ti.name, "root.sg"));
    CHECK_EQ_INT(ti.ncolumns, 0);
    CHECK_EQ_INT(ti.ndevices, 2);
    tsf_dataset_close(ds);
}

static void test_schema_table(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    tsf_error e = {0};
    CHECK_EQ_INT(tsf_dataset_file_count(ds), NTFILES);
    tsf_table_info ti;
    CHECK_OK(tsf_dataset_table(ds, 0, &ti, &e), &e);
    CHECK(!strcmp(ti.name, "t"));
    CHECK_EQ_INT(ti.ncolumns, 3);
    CHECK_EQ_INT(ti.ndevices, 4);
    CHECK(ti.ncolumns == 3 && ti.columns[0].category == TSF_COLUMN_TAG && ti.columns[2].type == TSF_DOUBLE);
    const char *devs[4] = {"t.r0", "t.r1", "t.r2", "t.r9"};
    for (size_t d = 0; d < 4; d++) {
        tsf_dataset_device_info di;
        CHECK_OK(tsf_dataset_device(ds, d, &di, &e), &e);
        CHECK(!strcmp(di.name, devs[d]));
        /* f1 count = the written rows without nulls, summed over the files */
        uint64_t want = 0;
        size_t nf = 0;
        for (size_t f = 0; f < NTFILES; f++) {
            if (!strchr(TFILES[f].regions, devs[d][3])) continue;
            nf++;
            for (size_t i = 0; i < TFILES[f].rows; i++) want += i % 7 != 3;
        }
        CHECK_EQ_INT(di.nfiles, nf);
        tsf_dataset_series_info si;
        CHECK_OK(tsf_dataset_series(ds, d, 1, &si, &e), &e);
        CHECK(!strcmp(si.measurement, "f1"));
        CHECK_EQ_INT(si.count, want);
    }
    tsf_dataset_file_info fi;
    CHECK_OK(tsf_dataset_file(ds, 5, &fi, &e), &e);
    CHECK_EQ_INT(fi.time_min, 100000000);
    CHECK_EQ_INT(fi.time_max, 100000000 + 49 * 10 + 1);
    tsf_dataset_close(ds);
}

/* tsf_dataset_file_device: each file's devices (its regions) in dataset order, with the reader index that
 * names the same device in a reader of the file, and the device's time range and points in that file. */
static void test_file_devices(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    tsf_error e = {0};
    for (size_t f = 0; f < NTFILES; f++) {
        const tfile *tf = &TFILES[f];
        tsf_dataset_file_info fi;
        CHECK_OK(tsf_dataset_file(ds, f, &fi, &e), &e);
        CHECK_EQ_INT(fi.ndevices, strlen(tf->regions));
        tsf_reader *r = NULL;
        CHECK_OK(tsf_reader_open(&r, fi.path, NULL, &e), &e);
        if (!r) continue;
        size_t prev = 0;
        for (size_t k = 0; k < fi.ndevices; k++) {
            tsf_dataset_file_device_info fd;
            CHECK_OK(tsf_dataset_file_device(ds, f, k, &fd, &e), &e);
            tsf_dataset_device_info di;
            CHECK_OK(tsf_dataset_device(ds, fd.device, &di, &e), &e);
            CHECK(k == 0 || fd.device > prev);
            prev = fd.device;
            tsf_device_info rdi;
            CHECK_OK(tsf_reader_device(r, fd.local, &rdi, &e), &e);
            CHECK(!strcmp(rdi.name, di.name));
            CHECK(strchr(tf->regions, di.name[3]) != NULL);
            int64_t dev = di.name[3] - '0';
            CHECK_EQ_INT(fd.time_min, tf->t0 + dev);
            CHECK_EQ_INT(fd.time_max, tf->t0 + (int64_t)(tf->rows - 1) * 10 + dev);
            uint64_t points = 0; /* f0 null when i % 11 == 5, f1 when i % 7 == 3 */
            for (size_t i = 0; i < tf->rows; i++) points += (i % 11 != 5) + (i % 7 != 3);
            CHECK_EQ_INT(fd.points, points);
            CHECK_EQ_INT(fd.nseries, 2);
        }
        tsf_dataset_file_device_info fd;
        CHECK(tsf_dataset_file_device(ds, f, fi.ndevices, &fd, NULL) == TSF_EINVAL);
        tsf_reader_close(r);
    }
    tsf_dataset_file_device_info fd;
    CHECK(tsf_dataset_file_device(ds, NTFILES, 0, &fd, NULL) == TSF_EINVAL);
    tsf_dataset_close(ds);
}

/* Files without data (the golden 81-byte files): a dataset of no device, whose query ends at once. */
static void test_empty_files(void)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%.900s/tsfile-java/empty_no_data.tsfile", tsf_test_data_dir());
    snprintf(b, sizeof b, "%.900s/tsfile-java/empty_registered_no_data.tsfile", tsf_test_data_dir());
    const char *paths[2] = {a, b};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 2, NULL, &e), &e);
    if (!ds) return;
    CHECK_EQ_INT(tsf_dataset_file_count(ds), 2);
    CHECK_EQ_INT(tsf_dataset_device_count(ds), 0);
    tsf_dataset_query *q = NULL;
    const tsf_dataset_batch *batch = NULL;
    CHECK_OK(tsf_dataset_query_open(ds, NULL, &q, &e), &e);
    if (q) CHECK_OK(tsf_dataset_query_next(q, &batch, &e), &e);
    CHECK(batch == NULL);
    tsf_dataset_query_close(q);
    tsf_dataset_close(ds);
}

static void test_type_conflict(void)
{
    if (!make_data()) {
        CHECK(0);
        return;
    }
    char a[256], b[256];
    path_of(a, sizeof a, "tree", "b0.tsfile");
    path_of(b, sizeof b, "conflict.tsfile", NULL);
    const char *paths[2] = {a, b};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK(tsf_dataset_open(&ds, paths, 2, NULL, &e) == TSF_ECORRUPT);
    CHECK(ds == NULL);
    CHECK(strstr(e.message, "b0.tsfile") && strstr(e.message, "conflict.tsfile"));
    CHECK(strstr(e.message, "root.sg.d0.s1") && strstr(e.message, "INT64") && strstr(e.message, "DOUBLE"));
    fprintf(stderr, "  conflict: %s\n", e.message);
}

typedef struct list_ctx {
    char p[16][256];
    size_t n;
    int stop; /* stop after the first file */
} list_ctx;

static int list_each(void *ctx, const char *path)
{
    list_ctx *c = ctx;
    if (c->n < 16) snprintf(c->p[c->n], sizeof c->p[0], "%s", path);
    c->n++;
    return c->stop;
}

static void test_paths(void)
{
    if (!make_data()) {
        CHECK(0);
        return;
    }
    char dir[256], pat[256], one[256], empty[256];
    path_of(dir, sizeof dir, "table", NULL);
    path_of(pat, sizeof pat, "table", "a[0-4]*.tsfile");
    path_of(one, sizeof one, "table", "a0.tsfile");
    path_of(empty, sizeof empty, "empty", NULL);
    tsf_error e = {0};
    tsf_dataset *ds = NULL;
    const char *p1[2] = {pat, dir};
    CHECK(tsf_dataset_open(&ds, p1, 2, NULL, &e) == TSF_EINVAL); /* a0..a4 twice */
    const char *p2[1] = {pat};
    CHECK_OK(tsf_dataset_open(&ds, p2, 1, NULL, &e), &e);
    CHECK_EQ_INT(tsf_dataset_file_count(ds), 5);
    for (size_t f = 0; f < tsf_dataset_file_count(ds); f++) {
        tsf_dataset_file_info fi;
        CHECK_OK(tsf_dataset_file(ds, f, &fi, &e), &e);
        CHECK(strstr(fi.path, TFILES[f].name) != NULL);
    }
    tsf_dataset_close(ds);
    CHECK(mkdir_p(empty) == 0);
    const char *p3[1] = {empty};
    CHECK(tsf_dataset_open(&ds, p3, 1, NULL, &e) == TSF_ENOTFOUND);
    const char *p4[1] = {"/nonexistent/x*.tsfile"};
    CHECK(tsf_dataset_open(&ds, p4, 1, NULL, &e) == TSF_ENOTFOUND);
    const char *p5[1] = {"/nonexistent/x.tsfile"};
    CHECK(tsf_dataset_open(&ds, p5, 1, NULL, &e) == TSF_EIO);
    CHECK(strstr(e.message, "/nonexistent/x.tsfile") != NULL);
    /* a damaged file: the error names it */
    char bad[256];
    path_of(bad, sizeof bad, "bad", NULL);
    CHECK(mkdir_p(bad) == 0);
    path_of(bad, sizeof bad, "bad", "zz.tsfile");
    FILE *fp = fopen(bad, "wb");
    CHECK(fp != NULL);
    if (fp) {
        for (int i = 0; i < 300; i++) fputc(i * 37, fp);
        fclose(fp);
    }
    const char *p6[2] = {one, bad};
    tsf_status st = tsf_dataset_open(&ds, p6, 2, NULL, &e);
    CHECK(st == TSF_ECORRUPT);
    CHECK(strstr(e.message, "zz.tsfile") != NULL);
    /* the list without opening: the damaged file is listed, in the order and with the errors of open */
    list_ctx lc = {{{0}}, 0, 0};
    CHECK_OK(tsf_dataset_list_files(p6, 2, list_each, &lc, &e), &e);
    CHECK_EQ_INT(lc.n, 2);
    CHECK(!strcmp(lc.p[0], one) && !strcmp(lc.p[1], bad));
    lc.n = 0;
    const char *p7[2] = {dir, pat};
    CHECK(tsf_dataset_list_files(p7, 2, list_each, &lc, &e) == TSF_EINVAL);
    lc.n = 0;
    CHECK_OK(tsf_dataset_list_files(p7, 1, list_each, &lc, &e), &e);
    CHECK_EQ_INT(lc.n, NTFILES);
    for (size_t f = 0; f < lc.n && f < NTFILES; f++) CHECK(strstr(lc.p[f], TFILES[f].name) != NULL);
    CHECK(tsf_dataset_list_files(p3, 1, list_each, &lc, &e) == TSF_ENOTFOUND);
    lc.n = 0;
    lc.stop = 1;
    CHECK(tsf_dataset_list_files(p7, 1, list_each, &lc, &e) == TSF_EIO);
    CHECK_EQ_INT(lc.n, 1);
}

/* ---- reads counted per file through a source ---- */

#define NSRC 16
typedef struct src_file {
    FILE *fp;
    int idx;
} src_file;
typedef struct src_ctx {
    const char *paths[NSRC];
    size_t n;
    unsigned long reads[NSRC];
    int opens[NSRC];
} src_ctx;
static src_ctx *g_src;

static int src_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    src_file *f = ud;
    __atomic_fetch_add(&g_src->reads[f->idx], 1, __ATOMIC_RELAXED);
    return pread(fileno(f->fp), buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

static int src_open(void *ctx, const char *path, tsf_read_callbacks *cb)
{
    src_ctx *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->paths[i], path)) {
            src_file *f = malloc(sizeof *f);
            if (!f || !(f->fp = fopen(path, "rb"))) return free(f), -1;
            f->idx = (int)i;
            fseek(f->fp, 0, SEEK_END);
            cb->size = (uint64_t)ftell(f->fp);
            cb->pread = src_pread;
            cb->ud = f;
            __atomic_fetch_add(&c->opens[i], 1, __ATOMIC_RELAXED);
            return 0;
        }
    return -1;
}

static void src_close(void *ctx, void *ud)
{
    src_ctx *c = ctx;
    src_file *f = ud;
    __atomic_fetch_sub(&c->opens[f->idx], 1, __ATOMIC_RELAXED);
    fclose(f->fp);
    free(f);
}

static void run_count(tsf_dataset *ds, tsf_dataset_query_options *o, tsf_dataset_query_stats *qs)
{
    tsf_error e = {0};
    tsf_dataset_query *q = NULL;
    CHECK_OK(tsf_dataset_query_open(ds, o, &q, &e), &e);
    for (const tsf_dataset_batch *b; q;) {
        tsf_status st = tsf_dataset_query_next(q, &b, &e);
        CHECK_OK(st, &e);
        if (st || !b) break;
    }
    tsf_dataset_query_get_stats(q, qs);
    tsf_dataset_query_close(q);
}

/* run_count with filter text `where` at threads / files_at_once setting k (SETTINGS) */
static void run_where(tsf_dataset *ds, size_t k, const char *where, tsf_dataset_query_stats *qs)
{
    tsf_error e = {0};
    tsf_filter *w = NULL;
    CHECK_OK(tsf_filter_parse(&w, where, &e), &e);
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.threads = SETTINGS[k][0];
    o.files_at_once = SETTINGS[k][1];
    o.where = w;
    run_count(ds, &o, qs);
    tsf_filter_free(w);
}

static void test_skip_files(void)
{
    if (!make_data()) {
        CHECK(0);
        return;
    }
    src_ctx c = {0};
    char paths[NTFILES][256];
    for (size_t f = 0; f < NTFILES; f++) {
        path_of(paths[f], sizeof paths[f], "table", TFILES[f].name);
        c.paths[f] = paths[f];
    }
    c.n = NTFILES;
    g_src = &c;
    tsf_dataset_options dopt;
    tsf_dataset_options_init(&dopt);
    dopt.open_source = src_open;
    dopt.close_source = src_close;
    dopt.source_ctx = &c;
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, c.paths, c.n, &dopt, &e), &e);
    if (!ds) return;
    for (size_t f = 0; f < NTFILES; f++) CHECK(c.reads[f] > 0 && c.opens[f] == 0);
    for (size_t k = 0; k < NSETTINGS; k++) {
        unsigned long before[NSRC];
        memcpy(before, c.reads, sizeof before);
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        o.threads = SETTINGS[k][0];
        o.files_at_once = SETTINGS[k][1];
        o.time_min = 0;
        o.time_max = 20000; /* a5 lies at 1e8 */
        tsf_dataset_query_stats qs;
        run_count(ds, &o, &qs);
        CHECK_EQ_INT(qs.files_skipped, 1);
        CHECK_EQ_INT(qs.files_opened, NTFILES - 1);
        CHECK(qs.query.rows > 0);
        for (size_t f = 0; f < NTFILES; f++) CHECK(f == 5 ? c.reads[f] == before[f] : c.reads[f] > before[f]);
        /* the same range as time terms of the filter skips the same file, with the same rows */
        uint64_t ranged_rows = qs.query.rows;
        memcpy(before, c.reads, sizeof before);
        run_where(ds, k, "time >= 0 and time <= 20000", &qs);
        CHECK_EQ_INT(qs.files_skipped, 1);
        CHECK_EQ_INT(qs.query.rows, ranged_rows);
        CHECK(c.reads[5] == before[5]);
        /* tag selection: only a6 holds r9 */
        memcpy(before, c.reads, sizeof before);
        run_where(ds, k, "region = 'r9' and f0 > -100000", &qs);
        CHECK_EQ_INT(qs.files_opened, 1);
        size_t want = 0; /* a6's rows where f0 is not null */
        for (size_t i = 0; i < TFILES[6].rows; i++) want += i % 11 != 5;
        CHECK_EQ_INT(qs.query.rows, want);
        for (size_t f = 0; f < NTFILES; f++) CHECK(f == 6 ? c.reads[f] > before[f] : c.reads[f] == before[f]);
    }
    for (size_t f = 0; f < NTFILES; f++) CHECK_EQ_INT(c.opens[f], 0);
    tsf_dataset_close(ds);
    g_src = NULL;
}

/* ---- folds ---- */

typedef struct acc {
    uint64_t count, icount;
    double sum, min, max;
    int64_t isum;
} acc;

static void *acc_init(void *ctx)
{
    acc *a = calloc(1, sizeof *a);
    if (a) a->min = INFINITY, a->max = -INFINITY;
    return a;
}

/* Column f1 (DOUBLE) and f0 (INT64) of a batch, row by row. */
static void acc_rows(acc *a, const tsf_batch *b)
{
    for (size_t c = 0; c < b->ncolumns; c++) {
        const tsf_column_batch *cb = &b->columns[c];
        for (size_t r = 0; r < b->nrows; r++) {
            if (cb->validity && !((cb->validity[r / 8] >> (r % 8)) & 1)) continue;
            if (!strcmp(cb->name, "f1")) {
                double v = ((const double *)cb->values)[r];
                a->count++;
                a->sum += v;
                if (v < a->min) a->min = v;
                if (v > a->max) a->max = v;
            } else if (!strcmp(cb->name, "f0")) {
                a->icount++;
                a->isum += ((const int64_t *)cb->values)[r];
            }
        }
    }
}

static int g_fail_after; /* fold fails on this call (0 = never) */
static int g_folds;

static int acc_fold(void *ctx, void *p, const tsf_dataset_batch *b)
{
    if (g_fail_after && __atomic_add_fetch(&g_folds, 1, __ATOMIC_RELAXED) == g_fail_after) return -1;
    acc_rows(p, &b->rows);
    return 0;
}

static void acc_merge_into(acc *a, const acc *b)
{
    a->count += b->count;
    a->icount += b->icount;
    a->sum += b->sum;
    a->isum += b->isum;
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
}

static int acc_merge(void *ctx, void *into, void *from)
{
    acc_merge_into(into, from);
    return 0;
}

static void acc_free(void *ctx, void *p)
{
    free(p);
}

/* The rule written out row by row: per file a partial from zero, merged in file order. */
static int fold_reference(tsf_dataset *ds, const qspec *s, tsf_filter *where, acc *out)
{
    tsf_error e = {0};
    acc *total = acc_init(NULL);
    for (size_t f = 0; f < tsf_dataset_file_count(ds); f++) {
        tsf_dataset_file_info fi;
        tsf_reader *r = NULL;
        if (tsf_dataset_file(ds, f, &fi, &e) || tsf_reader_open(&r, fi.path, NULL, &e)) return -1;
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.table = s->table;
        o.time_min = s->tmin;
        o.time_max = s->tmax;
        o.where = where;
        tsf_query *q = NULL;
        acc *part = acc_init(NULL);
        int any = 0;
        tsf_status st = tsf_query_open(r, &o, &q, &e);
        for (const tsf_batch *b; !st;) {
            if ((st = tsf_query_next(q, &b, &e)) || !b) break;
            acc_rows(part, b);
            any = 1;
        }
        tsf_query_close(q);
        tsf_reader_close(r);
        if (st) return -1;
        /* a file the dataset skips contributes no partial; one it opens does, even without rows */
        int opened = 0;
        for (size_t d = 0; d < tsf_dataset_device_count(ds); d++)
            for (size_t j = 0; j < 2; j++) {
                tsf_dataset_series_info si;
                if (tsf_dataset_file_series(ds, f, d, j, &si, NULL)) continue;
                opened |= si.time_min <= s->tmax && si.time_max >= s->tmin;
            }
        if (any || opened) acc_merge_into(total, part);
        free(part);
    }
    *out = *total;
    free(total);
    return 0;
}

static void test_fold(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    tsf_error e = {0};
    const qspec specs[] = {
        {"t", NULL, 0, NULL, 0, INT64_MIN, INT64_MAX, NULL},
        {"t", NULL, 0, NULL, 0, 2500, 9000, "f1 < 0.25"},
    };
    const unsigned threads[3] = {1, 2, 4}, ks[3] = {1, 2, 8};
    for (size_t i = 0; i < 2; i++) {
        tsf_filter *where = NULL;
        if (specs[i].where) CHECK_OK(tsf_filter_parse(&where, specs[i].where, &e), &e);
        acc ref;
        CHECK(fold_reference(ds, &specs[i], where, &ref) == 0);
        CHECK(ref.count > 100 && ref.icount > 100);
        if (i == 0) { /* the count the metadata gives */
            uint64_t n = 0;
            for (size_t d = 0; d < tsf_dataset_device_count(ds); d++) {
                tsf_dataset_series_info si;
                CHECK_OK(tsf_dataset_series(ds, d, 1, &si, &e), &e);
                n += si.count;
            }
            CHECK_EQ_INT(ref.count, n);
        }
        tsf_dataset_fold_callbacks cb = {sizeof cb, acc_init, acc_fold, acc_merge, acc_free, NULL};
        for (size_t t = 0; t < 3; t++)
            for (size_t k = 0; k < 3; k++) {
                tsf_dataset_query_options o;
                opts_of(&specs[i], where, threads[t], ks[k], &o);
                o.batch_size = 4096;
                void *res = NULL;
                tsf_dataset_query_stats qs;
                CHECK_OK(tsf_dataset_fold(ds, &o, &cb, &res, &qs, &e), &e);
                if (!res) continue;
                if (memcmp(res, &ref, sizeof ref))
                    fprintf(stderr, "  fold %zu threads=%u k=%u: sum %.17g vs %.17g, count %llu vs %llu\n", i,
                            threads[t], ks[k], ((acc *)res)->sum, ref.sum,
                            (unsigned long long)((acc *)res)->count, (unsigned long long)ref.count);
                CHECK(!memcmp(res, &ref, sizeof ref));
                CHECK_EQ_INT(qs.query.rows > 0, 1);
                free(res);
            }
        tsf_filter_free(where);
    }
    /* a failing fold callback ends the run with TSF_EIO on every setting */
    tsf_dataset_fold_callbacks cb = {sizeof cb, acc_init, acc_fold, acc_merge, acc_free, NULL};
    for (size_t t = 0; t < 3; t++) {
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        o.threads = threads[t];
        o.batch_size = 20;
        g_folds = 0;
        g_fail_after = 7;
        void *res = (void *)1;
        CHECK(tsf_dataset_fold(ds, &o, &cb, &res, NULL, &e) == TSF_EIO);
        CHECK(res == NULL);
        CHECK(strstr(e.message, "fold callback") != NULL);
        g_fail_after = 0;
    }
    tsf_dataset_close(ds);
}

/* A query closed before its end, with workers still holding batches. */
static void test_close_early(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    tsf_error e = {0};
    for (size_t k = 0; k < NSETTINGS; k++) {
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        o.threads = SETTINGS[k][0];
        o.files_at_once = SETTINGS[k][1];
        o.batch_size = 10;
        tsf_dataset_query *q = NULL;
        CHECK_OK(tsf_dataset_query_open(ds, &o, &q, &e), &e);
        const tsf_dataset_batch *b = NULL;
        for (int i = 0; i < 3 && q; i++) CHECK_OK(tsf_dataset_query_next(q, &b, &e), &e);
        CHECK(b != NULL);
        tsf_dataset_query_close(q);
    }
    const char *bad[1] = {"t.nope"};
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.devices = bad;
    o.ndevices = 1;
    tsf_dataset_query *q = NULL;
    CHECK(tsf_dataset_query_open(ds, &o, &q, &e) == TSF_ENOTFOUND);
    o.struct_size = 8;
    CHECK(tsf_dataset_query_open(ds, &o, &q, &e) == TSF_EINVAL);
    tsf_dataset_close(ds);
}

/* ---- grouped aggregation ---- */

typedef struct rslot {
    size_t dev;
    int64_t win;
    char col[16];
    uint64_t count;
    double sum, min, max, first, last;
    int64_t first_t, last_t;
    /* the sum rule (doc/dataset.md): the open page part of page pid and chunk part of chunk cid */
    uint64_t cid, pid;
    double psum, pmin, pmax, csum, cmin, cmax;
    int has, chas, phas;
} rslot;

typedef struct rset {
    rslot s[2048];
    size_t n, last;
} rset;

static rslot *rs_find(rset *rs, size_t dev, int64_t win, const char *col)
{
    rslot *l = rs->n ? &rs->s[rs->last] : NULL;
    if (l && l->dev == dev && l->win == win && !strcmp(l->col, col)) return l;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->s[i].dev == dev && rs->s[i].win == win && !strcmp(rs->s[i].col, col)) return &rs->s[rs->last = i];
    if (rs->n == 2048) abort();
    rs->last = rs->n;
    rslot *s = &rs->s[rs->n++];
    memset(s, 0, sizeof *s);
    s->dev = dev, s->win = win;
    snprintf(s->col, sizeof s->col, "%s", col);
    return s;
}

/* The chunk and page a test file's value comes from (the reference knows how each test file was written):
 * file index, dataset device name, time. Distinct keys within one file. */
typedef void (*unit_of_fn)(size_t file, const char *dev, int64_t t, uint64_t *chunk, uint64_t *page);

/* A part's merge (writer statistics): into nothing a copy, else sum += and min / max on a strict < / >. */
static void r_merge(int *has, double *sum, double *mn, double *mx, double s, double a, double b)
{
    if (!*has) {
        *sum = s, *mn = a, *mx = b, *has = 1;
        return;
    }
    *sum += s;
    if (a < *mn) *mn = a;
    if (b > *mx) *mx = b;
}

/* Closes the page part (into the chunk part) and, with chunk, the chunk part (into the file's aggregate). */
static void r_close(rslot *s, int chunk)
{
    if (s->phas) r_merge(&s->chas, &s->csum, &s->cmin, &s->cmax, s->psum, s->pmin, s->pmax);
    s->phas = 0;
    if (chunk && s->chas) r_merge(&s->has, &s->sum, &s->min, &s->max, s->csum, s->cmin, s->cmax);
    if (chunk) s->chas = 0;
}

/* One value (num: numeric, else counted only) of page pid of chunk cid at time t. */
static void r_value(rslot *s, uint64_t cid, uint64_t pid, int num, double v, int64_t t)
{
    if (s->cid != cid || s->pid != pid) {
        r_close(s, s->cid != cid);
        s->cid = cid, s->pid = pid;
    }
    if (!num) v = 0;
    if (!s->count) s->first = s->last = v, s->first_t = s->last_t = t;
    if (t < s->first_t) s->first_t = t, s->first = v;
    if (t >= s->last_t) s->last_t = t, s->last = v;
    s->count++;
    if (num) r_merge(&s->phas, &s->psum, &s->pmin, &s->pmax, v, v, v);
}

static double r_cell(const tsf_column_batch *cb, size_t i, int *num)
{
    *num = 1;
    switch (cb->type) {
    case TSF_BOOLEAN:
        return ((const uint8_t *)cb->values)[i];
    case TSF_INT32:
    case TSF_DATE:
        return ((const int32_t *)cb->values)[i];
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return (double)((const int64_t *)cb->values)[i];
    case TSF_FLOAT:
        return ((const float *)cb->values)[i];
    case TSF_DOUBLE:
        return ((const double *)cb->values)[i];
    default:
        *num = 0;
        return 0;
    }
}

/* Row by row into per-file slots by the sum rule (unit_of tells each value's chunk and page), merged into the
 * total in file order (the rule of tsf_dataset_fold). */
/* Tag tuples met by the reference (group_tags), interned: a group's number is its index here. */
static char g_tuples[64][96];
static size_t g_ntuples;

static size_t tuple_id(const char *t)
{
    for (size_t i = 0; i < g_ntuples; i++)
        if (!strcmp(g_tuples[i], t)) return i;
    if (g_ntuples == 64) abort();
    snprintf(g_tuples[g_ntuples], sizeof g_tuples[0], "%s", t);
    return g_ntuples++;
}

/* The batch's device's tuple of the tags' values ("-" null, "=value" else), from the file's device id: the
 * test's table declares its TAG columns as site, kind, so they are segments 1 and 2. */
static void batch_tuple(tsf_reader *r, const tsf_batch *b, const char *const *tags, size_t ntags, char *buf,
                        size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < ntags; k++) {
        tsf_bytes v = {NULL, 0};
        if (tsf_reader_device_segment(r, b->device, strcmp(tags[k], "site") ? 2 : 1, &v, NULL)) v.data = NULL;
        if (!v.data)
            n += (size_t)snprintf(buf + n, cap - n, "|-");
        else
            n += (size_t)snprintf(buf + n, cap - n, "|=%.*s", (int)v.len, (const char *)v.data);
    }
}

static int agg_reference_tags(tsf_dataset *ds, unit_of_fn unit_of, int by_device, const char *const *tags,
                              size_t ntags, int64_t window, int64_t tmin, int64_t tmax, tsf_filter *where,
                              rset *total)
{
    tsf_error e = {0};
    rset *part = malloc(sizeof *part);
    total->n = 0;
    for (size_t f = 0; part && f < tsf_dataset_file_count(ds); f++) {
        tsf_dataset_file_info fi;
        tsf_reader *r = NULL;
        if (tsf_dataset_file(ds, f, &fi, &e) || tsf_reader_open(&r, fi.path, NULL, &e)) return -1;
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.time_min = tmin;
        o.time_max = tmax;
        o.where = where;
        tsf_query *q = NULL;
        part->n = 0;
        tsf_status st = tsf_query_open(r, &o, &q, &e);
        for (const tsf_batch *b; !st;) {
            if ((st = tsf_query_next(q, &b, &e)) || !b) break;
            tsf_device_info di;
            size_t dev = 0;
            if ((st = tsf_reader_device(r, b->device, &di, &e)) ||
                (st = tsf_dataset_find_device(ds, di.name, &dev, &e)))
                break;
            for (size_t c = 0; c < b->ncolumns; c++) {
                const tsf_column_batch *cb = &b->columns[c];
                for (size_t i = 0; i < b->nrows; i++) {
                    if (cb->type == TSF_VECTOR || !((cb->validity[i / 8] >> (i % 8)) & 1)) continue;
                    int64_t t = b->times[i];
                    int num;
                    double v = r_cell(cb, i, &num);
                    uint64_t cid, pid;
                    unit_of(f, di.name, t, &cid, &pid);
                    int64_t w = window ? (t >= 0 ? t / window : -((-t + window - 1) / window)) : 0;
                    size_t grp = by_device ? dev : (size_t)-1;
                    if (ntags) {
                        char tb[96];
                        batch_tuple(r, b, tags, ntags, tb, sizeof tb);
                        grp = tuple_id(tb);
                    }
                    r_value(rs_find(part, grp, w, cb->name), cid, pid, num, v, t);
                }
            }
        }
        tsf_query_close(q);
        tsf_reader_close(r);
        if (st) return -1;
        for (size_t i = 0; i < part->n; i++) {
            rslot *p = &part->s[i];
            r_close(p, 1);
            rslot *s = rs_find(total, p->dev, p->win, p->col);
            if (!s->count) {
                *s = *p;
                continue;
            }
            s->count += p->count;
            if (p->has) r_merge(&s->has, &s->sum, &s->min, &s->max, p->sum, p->min, p->max);
            if (p->first_t < s->first_t) s->first_t = p->first_t, s->first = p->first;
            if (p->last_t >= s->last_t) s->last_t = p->last_t, s->last = p->last;
        }
    }
    free(part);
    return 0;
}

static int agg_reference(tsf_dataset *ds, unit_of_fn unit_of, int by_device, int64_t window, int64_t tmin,
                         int64_t tmax, tsf_filter *where, rset *total)
{
    return agg_reference_tags(ds, unit_of, by_device, NULL, 0, window, tmin, tmax, where, total);
}

/* The device's number: the last character of its name (the test files' devices end in a digit). */
static uint64_t dev_digit(const char *dev)
{
    size_t n = strlen(dev);
    return n ? (uint64_t)(dev[n - 1] - '0') : 0;
}

/* Table files (write_table_file): one chunk per device and file, pages of 64 rows, row i at t0 + 10 i + dev. */
static void table_unit(size_t file, const char *dev, int64_t t, uint64_t *chunk, uint64_t *page)
{
    uint64_t d = dev_digit(dev);
    *chunk = file * 100 + d + 1;
    *page = *chunk * 100000 + (uint64_t)((t - TFILES[file].t0 - (int64_t)d) / 10) / 64 + 1;
}

/* 1 when a result row holds the reference slot's aggregates, bit for bit. */
static int row_same(const rslot *s, const tsf_dataset_agg_row *row)
{
    double mean = s->count ? s->sum / (double)s->count : 0;
    return s->count == row->count && !memcmp(&s->sum, &row->sum, 8) && !memcmp(&s->min, &row->min, 8) &&
           !memcmp(&s->max, &row->max, 8) && !memcmp(&s->first, &row->first, 8) &&
           !memcmp(&s->last, &row->last, 8) && !memcmp(&mean, &row->mean, 8) && s->first_t == row->first_time &&
           s->last_t == row->last_time;
}

static void test_aggregate(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds) return;
    tsf_error e = {0};
    /* the same dataset through a reader pool, where each aggregation leaves its tables and runs to the next
     * one (of another shape, with more or fewer keys) */
    tsf_reader_pool *pool = NULL;
    CHECK_OK(tsf_reader_pool_create(&pool, NULL, &e), &e);
    char dir[256];
    path_of(dir, sizeof dir, "table", NULL);
    const char *dirs[1] = {dir};
    tsf_dataset_options pdo;
    tsf_dataset_options_init(&pdo);
    pdo.reader_pool = pool;
    tsf_dataset *pds = NULL;
    CHECK_OK(tsf_dataset_open(&pds, dirs, 1, &pdo, &e), &e);
    tsf_dataset *sets[2] = {ds, pds};
    rset *ref = malloc(sizeof *ref);
    const char *wheres[2] = {NULL, "f1 < 0.25 and region <> 'r2'"};
    const unsigned threads[3] = {1, 2, 4}, ks[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int shape = 0; ref && shape < 4; shape++) {
        int by_device = shape != 1;
        int64_t window = shape == 2 ? 0 : 1000;
        tsf_filter *where = NULL;
        if (wheres[shape == 3]) CHECK_OK(tsf_filter_parse(&where, wheres[shape == 3], &e), &e);
        CHECK(agg_reference(ds, table_unit, by_device, window, 0, 19999, where, ref) == 0);
        CHECK(ref->n > 3);
        for (size_t t = 0; t < 3; t++)
            for (size_t k = 0; k < 8 * 2; k++) {
                tsf_dataset *d = sets[k % 2];
                if (!d) continue;
                tsf_dataset_query_options o;
                tsf_dataset_query_options_init(&o);
                o.time_min = 0;
                o.time_max = 19999;
                o.where = where;
                o.threads = threads[t];
                o.files_at_once = ks[k / 2];
                tsf_dataset_agg_options ao;
                tsf_dataset_agg_options_init(&ao);
                ao.by_device = by_device;
                ao.window = window;
                tsf_dataset_agg_result *res = NULL;
                CHECK_OK(tsf_dataset_aggregate(d, &o, &ao, &res, &e), &e);
                CHECK_EQ_INT(tsf_dataset_agg_result_count(res), ref->n);
                size_t bad = 0;
                for (size_t i = 0; i < tsf_dataset_agg_result_count(res); i++) {
                    const tsf_dataset_agg_row *row = tsf_dataset_agg_result_row(res, i);
                    const tsf_dataset_agg_row *prev = i ? tsf_dataset_agg_result_row(res, i - 1) : NULL;
                    if (prev) /* by device, window, column */
                        CHECK(prev->device < row->device ||
                              (prev->device == row->device && (prev->window_start < row->window_start ||
                                                               (prev->window_start == row->window_start &&
                                                                strcmp(prev->column, row->column) < 0))));
                    rslot *s =
                        rs_find(ref, row->device, window ? row->window_start / window : 0, row->column);
                    int same = row_same(s, row) && (window || row->window_start == INT64_MIN);
                    if (!same && !bad++)
                        fprintf(stderr,
                                "  aggregate shape %d threads=%u k=%u pool %d row %zu (%s): sum %.17g vs %.17g\n",
                                shape, threads[t], ks[k / 2], (int)(k % 2), i, row->column, row->sum,
                                s->sum);
                }
                CHECK_EQ_INT(bad, 0);
                CHECK_EQ_INT(ref->n,
                             tsf_dataset_agg_result_count(res)); /* no row of the result was missing */
                /* timing: cells handed to the fold calls cover the counted values; one to W threads folded */
                tsf_dataset_agg_stats st;
                st.struct_size = sizeof st;
                CHECK_OK(tsf_dataset_agg_result_stats(res, &st, &e), &e);
                uint64_t counted = 0, busy = 0, in_fold = 0;
                for (size_t i = 0; i < ref->n; i++) counted += ref->s[i].count;
                for (unsigned w = 0; w < st.workers; w++) {
                    CHECK(st.worker_busy_ns[w] >= st.worker_fold_ns[w]);
                    busy += st.worker_busy_ns[w];
                    in_fold += st.worker_fold_ns[w];
                }
                CHECK(st.values + st.points_from_stats >= counted);
                CHECK_EQ_INT(st.points_from_stats + st.points_decoded, counted);
                CHECK(st.workers >= 1 && st.workers <= (threads[t] > ks[k / 2] ? threads[t] : ks[k / 2]));
                CHECK(in_fold == st.fold_ns && busy >= st.fold_ns);
                st.struct_size = 8;
                CHECK(tsf_dataset_agg_result_stats(res, &st, &e) == TSF_EINVAL);
                tsf_dataset_agg_result_free(res);
            }
        tsf_filter_free(where);
    }
    free(ref);
    tsf_dataset_agg_options ao;
    tsf_dataset_agg_options_init(&ao);
    ao.window = -5;
    tsf_dataset_agg_result *res = NULL;
    CHECK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e) == TSF_EINVAL);
    tsf_dataset_close(ds);
    tsf_dataset_close(pds);
    tsf_reader_pool_free(pool);
}

/* Files without nulls, so that runs go through the per-type kernels: i small INT64 (integer sums), h INT64
 * near +-2^60 in some windows (the row-by-row double sums), d and e1..e5 DOUBLE (four at a time through the
 * lane kernel, the last two alone; e5 holds a NaN and -0.0 now and then). 3 files x 2 devices x 3000 rows. */
#define KERNEL_PAGE 400
static int write_kernel_file(size_t fi, const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_paged(&w, path, KERNEL_PAGE, &e);
    tsf_column_schema cols[9] = {{"dev", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"i", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"h", TSF_INT64, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"d", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"e1", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"e2", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"e3", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"e4", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"e5", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "k", cols, 9, &e);
    for (size_t dev = 0; dev < 2 && !st; dev++) {
        char name[3] = {'k', (char)('0' + dev), 0};
        for (size_t i = 0; i < 3000 && !st; i++) {
            const char *names[9] = {"dev", "i", "h", "d", "e1", "e2", "e3", "e4", "e5"};
            tsf_value v[9];
            memset(v, 0, sizeof v);
            v[0].v.bytes.data = (const uint8_t *)name;
            v[0].v.bytes.len = 2;
            size_t k = fi * 3000 + i;
            v[1].v.i64 = (int64_t)(k * 37 % 1001) - 500;
            v[2].v.i64 = (k / 150) % 2 ? (int64_t)((k % 2 ? 1 : -1) * ((1ll << 60) + (long long)(k * 12345)))
                                       : (int64_t)k;
            v[3].v.d = val_d(fi, dev, i);
            for (size_t j = 1; j <= 5; j++) v[3 + j].v.d = val_d(fi, dev, i + 17 * j) * (double)(1 + j) - (double)j;
            if (i % 211 == 5) v[8].v.d = i % 2 ? -0.0 : NAN;
            st = tsf_writer_write_row(w, "k", (int64_t)k * 7 + (int64_t)dev, names, v, 9, &e);
        }
    }
    if (!st) st = tsf_writer_close(w, &e);
    else tsf_writer_abort(w);
    if (st) fprintf(stderr, "write %s: %s\n", path, e.message);
    return st ? -1 : 0;
}

/* Kernel files: one chunk per device and file, pages of KERNEL_PAGE rows, row i at 7 (3000 file + i) + dev. */
static void kernel_unit(size_t file, const char *dev, int64_t t, uint64_t *chunk, uint64_t *page)
{
    uint64_t d = dev_digit(dev);
    *chunk = file * 100 + d + 1;
    *page = *chunk * 100000 + ((uint64_t)(t - (int64_t)d) / 7 - file * 3000) / KERNEL_PAGE + 1;
}

static void test_aggregate_kernels(void)
{
    char dir[128], path[160];
    path_of(dir, sizeof dir, "kernels", NULL);
    CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST);
    for (size_t f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/c%zu.tsfile", dir, f);
        CHECK(write_kernel_file(f, path) == 0);
    }
    const char *paths[1] = {dir};
    tsf_error e = {0};
    tsf_dataset *ds = NULL;
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    rset *ref = malloc(sizeof *ref);
    CHECK(ref && agg_reference(ds, kernel_unit, 1, 1000, INT64_MIN, INT64_MAX, NULL, ref) == 0);
    tsf_dataset_close(ds);
    /* every kernel path of the integer summaries (a path the CPU lacks runs the best one below it) */
    const tsf_codec_path kpaths[4] = {TSF_PATH_SCALAR, TSF_PATH_AVX2, TSF_PATH_AVX512, TSF_PATH_AUTO};
    for (unsigned run = 0; ref && run < 8; run++) {
        unsigned t = 1 + run % 2;
        tsf_reader_options ro;
        tsf_reader_options_init(&ro);
        ro.path = kpaths[run / 2];
        tsf_dataset_options dso;
        tsf_dataset_options_init(&dso);
        dso.reader = &ro;
        ds = NULL;
        CHECK_OK(tsf_dataset_open(&ds, paths, 1, &dso, &e), &e);
        if (!ds) break;
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        o.threads = t;
        o.files_at_once = 2 * t - 1;
        tsf_dataset_agg_options ao;
        tsf_dataset_agg_options_init(&ao);
        ao.window = 1000;
        tsf_dataset_agg_result *res = NULL;
        CHECK_OK(tsf_dataset_aggregate(ds, &o, &ao, &res, &e), &e);
        CHECK_EQ_INT(tsf_dataset_agg_result_count(res), ref->n);
        size_t bad = 0;
        for (size_t i = 0; i < tsf_dataset_agg_result_count(res); i++) {
            const tsf_dataset_agg_row *row = tsf_dataset_agg_result_row(res, i);
            rslot *s = rs_find(ref, row->device, row->window_start / 1000, row->column);
            int same = row_same(s, row);
            if (!same && !bad++)
                fprintf(stderr, "  kernels %s threads=%u row %zu (%s, window %lld): sum %.17g vs %.17g\n",
                        tsf_codec_path_name(ro.path), t, i, row->column, (long long)row->window_start, row->sum,
                        s->sum);
        }
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(ref->n, tsf_dataset_agg_result_count(res));
        tsf_dataset_agg_result_free(res);
        tsf_dataset_close(ds);
    }
    free(ref);
}

/* Files of table "m" with TAG columns site and kind: devices (s0,k0), (s0,k1), (s1,k0), (s1,null) and, in the
 * last file only, (s2,k1), so grouping by site or kind merges devices and a null kind forms its own group. */
static int write_tags_file(size_t fi, const char *path)
{
    static const char *const DEVS[5][2] = {{"s0", "k0"}, {"s0", "k1"}, {"s1", "k0"}, {"s1", NULL}, {"s2", "k1"}};
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open(&w, path, NULL, &e);
    tsf_column_schema cols[4] = {{"site", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"kind", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"v", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"n", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "m", cols, 4, &e);
    for (size_t d = 0; d < (fi == 2 ? 5u : 4u) && !st; d++) {
        for (size_t i = 0; i < 150 && !st; i++) {
            const char *names[4] = {"site", "kind", "v", "n"};
            tsf_value v[4];
            memset(v, 0, sizeof v);
            for (int k = 0; k < 2; k++) {
                v[k].is_null = !DEVS[d][k];
                v[k].v.bytes.data = (const uint8_t *)DEVS[d][k];
                v[k].v.bytes.len = DEVS[d][k] ? 2 : 0;
            }
            v[2].v.d = val_d(fi, d, i);
            v[2].is_null = i % 5 == 1;
            v[3].v.i64 = (int64_t)(i * 3) - (int64_t)(d * 50) + (int64_t)fi;
            st = tsf_writer_write_row(w, "m", (int64_t)(fi * 1000 + i * 10 + d), names, v, 4, &e);
        }
        if (!st) st = tsf_writer_flush(w, &e);
    }
    return finish_write(w, st, path, &e);
}

/* Tags files: one single-page chunk per device and file, row i of device d at 1000 file + 10 i + d. */
static void tags_unit(size_t file, const char *dev, int64_t t, uint64_t *chunk, uint64_t *page)
{
    (void)dev;
    *chunk = *page = file * 100 + (uint64_t)(t - (int64_t)file * 1000) % 10 + 1;
}

static void test_aggregate_tags(void)
{
    char p[256];
    path_of(p, sizeof p, "tags", NULL);
    CHECK(mkdir_p(p) == 0);
    for (size_t f = 0; f < 3; f++) {
        char n[32], fp[256];
        snprintf(n, sizeof n, "g%zu.tsfile", f);
        path_of(fp, sizeof fp, "tags", n);
        CHECK(write_tags_file(f, fp) == 0);
    }
    const char *paths[1] = {p};
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    if (!ds) return;
    /* the device id's segments: the table, then the TAG values; a trailing null TAG is stripped from the id */
    CHECK_EQ_INT(tsf_dataset_device_count(ds), 5);
    for (size_t d = 0; d < tsf_dataset_device_count(ds); d++) {
        tsf_dataset_device_info di;
        tsf_bytes sg[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
        char name[64];
        CHECK_OK(tsf_dataset_device(ds, d, &di, &e), &e);
        for (size_t k = 0; k < 2; k++) CHECK_OK(tsf_dataset_device_segment(ds, d, k, &sg[k], &e), &e);
        tsf_status st3 = tsf_dataset_device_segment(ds, d, 2, &sg[2], &e);
        CHECK(st3 == TSF_OK ? sg[2].data != NULL : st3 == TSF_ENOTFOUND);
        snprintf(name, sizeof name, "%.*s.%.*s%s%.*s", (int)sg[0].len, (const char *)sg[0].data, (int)sg[1].len,
                 (const char *)sg[1].data, st3 ? "" : ".", st3 ? 0 : (int)sg[2].len, st3 ? "" : (const char *)sg[2].data);
        CHECK(!strcmp(name, di.name));
        CHECK(tsf_dataset_device_segment(ds, d, 3, &sg[0], &e) == TSF_ENOTFOUND);
    }
    rset *ref = malloc(sizeof *ref);
    static const char *const SITE[1] = {"site"}, *const KIND[1] = {"kind"}, *const BOTH[2] = {"kind", "site"};
    const char *const *shapes[3] = {SITE, KIND, BOTH};
    const size_t nshape[3] = {1, 1, 2};
    const unsigned threads[3] = {1, 2, 4};
    for (int shape = 0; ref && shape < 6; shape++) {
        const char *const *tags = shapes[shape % 3];
        size_t nt = nshape[shape % 3];
        int64_t window = shape < 3 ? 0 : 500;
        g_ntuples = 0;
        CHECK(agg_reference_tags(ds, tags_unit, 0, tags, nt, window, INT64_MIN, INT64_MAX, NULL, ref) == 0);
        CHECK(ref->n > 3);
        for (size_t t = 0; t < 3; t++)
            for (unsigned k = 1; k <= 8; k++) {
                tsf_dataset_query_options o;
                tsf_dataset_query_options_init(&o);
                o.threads = threads[t];
                o.files_at_once = k;
                tsf_dataset_agg_options ao;
                tsf_dataset_agg_options_init(&ao);
                ao.group_tags = tags;
                ao.ngroup_tags = nt;
                ao.window = window;
                tsf_dataset_agg_result *res = NULL;
                CHECK_OK(tsf_dataset_aggregate(ds, &o, &ao, &res, &e), &e);
                CHECK_EQ_INT(tsf_dataset_agg_result_count(res), ref->n);
                size_t bad = 0;
                char prev[96] = "";
                for (size_t i = 0; i < tsf_dataset_agg_result_count(res); i++) {
                    const tsf_dataset_agg_row *row = tsf_dataset_agg_result_row(res, i);
                    char tb[96];
                    size_t n = 0;
                    tb[0] = '\0';
                    for (size_t j = 0; j < nt; j++) {
                        tsf_bytes v = tsf_dataset_agg_result_tag(res, row->group, j);
                        n += (size_t)(v.data ? snprintf(tb + n, sizeof tb - n, "|=%.*s", (int)v.len, (const char *)v.data)
                                             : snprintf(tb + n, sizeof tb - n, "|-"));
                    }
                    /* groups ascend by tuple, null first ('-' < '=' in the reference's spelling) */
                    CHECK(strcmp(prev, tb) <= 0);
                    snprintf(prev, sizeof prev, "%s", tb);
                    CHECK(row->device == (size_t)-1);
                    size_t before = g_ntuples;
                    rslot *s = rs_find(ref, tuple_id(tb), window ? row->window_start / window : 0, row->column);
                    CHECK_EQ_INT(g_ntuples, before); /* a group the reference knows */
                    if (!(row_same(s, row) && (window || row->window_start == INT64_MIN)) && !bad++)
                        fprintf(stderr, "  tags shape %d threads=%u k=%u row %zu (%s %s): sum %.17g vs %.17g\n",
                                shape, threads[t], k, i, tb, row->column, row->sum, s->sum);
                }
                CHECK_EQ_INT(bad, 0);
                CHECK_EQ_INT(ref->n, tsf_dataset_agg_result_count(res));
                CHECK(tsf_dataset_agg_result_tag(res, 0, nt).data == NULL);
                tsf_dataset_agg_result_free(res);
            }
    }
    free(ref);
    const char *bad[1] = {"v"}; /* a FIELD, not a TAG */
    tsf_dataset_agg_options ao;
    tsf_dataset_agg_options_init(&ao);
    ao.group_tags = bad;
    ao.ngroup_tags = 1;
    tsf_dataset_agg_result *res = NULL;
    CHECK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e) == TSF_ENOTFOUND);
    CHECK(res == NULL);
    /* the first published size of the options (no group_tags) still works: one group per device */
    ao.struct_size = offsetof(tsf_dataset_agg_options, group_tags);
    CHECK_OK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e), &e);
    CHECK(res && tsf_dataset_agg_result_count(res) > 0 && tsf_dataset_agg_result_row(res, 0)->device == 0);
    tsf_dataset_agg_result_free(res);
    ao.struct_size = 12;
    CHECK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e) == TSF_EINVAL);
    tsf_dataset_close(ds);
}

/* ---- statistics answers ---- */

/* Files for the statistics path: per file (rows at 1000 file + i, i < STATS_ROWS) two devices, one chunk each,
 * pages of STATS_PAGE rows; table model (aligned, table "s", TAG dev) or tree model (root.s.d0 / d1,
 * non-aligned). Columns: d DOUBLE GORILLA (a NaN opening page 2 of d0 and one inside it, page 4 of d1 all -0.0,
 * -0.0 now and then), q DOUBLE TS_2DIFF (lossy: never from statistics), f FLOAT GORILLA, i INT32, b BOOLEAN, n
 * INT64 (table: nulls, and page 3 of d0 all null), h INT64 near the 2^53 bound (d0: 1000 x |v| just under it,
 * so whole chunks qualify; d1: pages of 128 x |v| just under it, odd pages just over). */
#define STATS_ROWS 1000
#define STATS_PAGE 128
static int write_stats_file(size_t fi, const char *path, int aligned)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_paged(&w, path, STATS_PAGE, &e);
    tsf_column_schema cols[8] = {{"dev", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"d", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"q", TSF_DOUBLE, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"f", TSF_FLOAT, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"i", TSF_INT32, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"b", TSF_BOOLEAN, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"n", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"h", TSF_INT64, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD}};
    const char *names[8] = {"dev", "d", "q", "f", "i", "b", "n", "h"};
    char dname[2][16] = {"root.s.d0", "root.s.d1"};
    if (aligned && !st) st = tsf_writer_register_table(w, "s", cols, 8, &e);
    for (size_t d = 0; !aligned && d < 2; d++)
        for (size_t c = 1; c < 8 && !st; c++) st = tsf_writer_register_series(w, dname[d], &cols[c], &e);
    for (size_t d = 0; d < 2 && !st; d++) {
        char tag[3] = {'d', (char)('0' + d), 0};
        for (size_t i = 0; i < STATS_ROWS && !st; i++) {
            tsf_value v[8];
            memset(v, 0, sizeof v);
            v[0].v.bytes.data = (const uint8_t *)tag;
            v[0].v.bytes.len = 2;
            size_t pg = i / STATS_PAGE;
            double x = val_d(fi, d, i) * 1000.0;
            if (i % 37 == 11) x = -0.0;
            if (d == 0 && (i == 2 * STATS_PAGE || i == 2 * STATS_PAGE + 40)) x = NAN;
            if (d == 1 && pg == 4) x = -0.0;
            v[1].v.d = x;
            v[2].v.d = (double)(int64_t)(val_d(fi, d, i + 5) * 1e4) / 100.0; /* what TS_2DIFF's 2 digits keep */
            v[3].v.f = (float)val_d(fi, d, i + 9);
            v[4].v.i32 = (int32_t)(i * i % 100003) - 50000 + (int32_t)fi;
            v[5].v.b = (i * 7 + fi) % 5 < 2;
            v[6].v.i64 = (int64_t)(i * 31 % 1000) - 300;
            v[6].is_null = aligned && (i % 13 == 4 || (d == 0 && pg == 3));
            int64_t base = d == 0 ? (int64_t)(9007199254740992ll / STATS_ROWS)
                                  : (int64_t)(9007199254740992ll / STATS_PAGE) - 1 + (pg % 2 ? 1000 : 0);
            v[7].v.i64 = (base - (int64_t)(i % 7) - (int64_t)fi) * (fi % 2 ? -1 : 1);
            int64_t t = (int64_t)(fi * 1000 + i);
            if (aligned) {
                st = tsf_writer_write_row(w, "s", t, names, v, 8, &e);
            } else { /* non-aligned series: a null is an absent point */
                const char *nn[7];
                tsf_value vv[7];
                size_t k = 0;
                for (size_t c = 1; c < 8; c++)
                    if (!v[c].is_null) nn[k] = names[c], vv[k++] = v[c];
                st = tsf_writer_write_row(w, dname[d], t, nn, vv, k, &e);
            }
        }
        if (!st) st = tsf_writer_flush(w, &e);
    }
    return finish_write(w, st, path, &e);
}

/* Stats files: one chunk per device and file, pages of STATS_PAGE rows (no nulls in the tree files, so a
 * series' point i is row i; in the table files a value page pairs with the time page of its rows). */
static void stats_unit(size_t file, const char *dev, int64_t t, uint64_t *chunk, uint64_t *page)
{
    uint64_t d = dev_digit(dev);
    *chunk = file * 100 + d + 1;
    *page = *chunk * 100000 + (uint64_t)(t - (int64_t)file * 1000) / STATS_PAGE + 1;
}

/* Runs an aggregation; 0 and *res, or -1 (printed). */
static int stats_run(tsf_dataset *ds, int by_device, int64_t window, int64_t tmin, int64_t tmax, tsf_filter *where,
                     unsigned threads, unsigned k, int force, tsf_dataset_agg_result **res, tsf_dataset_agg_stats *st)
{
    tsf_error e = {0};
    tsf_dataset_query_options o;
    tsf_dataset_query_options_init(&o);
    o.time_min = tmin;
    o.time_max = tmax;
    o.where = where;
    o.threads = threads;
    o.files_at_once = k;
    tsf_dataset_agg_options ao;
    tsf_dataset_agg_options_init(&ao);
    CHECK_EQ_INT(ao.force_decode, 0);
    ao.by_device = by_device;
    ao.window = window;
    ao.force_decode = force;
    *res = NULL;
    st->struct_size = sizeof *st;
    if (tsf_dataset_aggregate(ds, &o, &ao, res, &e) || tsf_dataset_agg_result_stats(*res, st, &e)) {
        fprintf(stderr, "  stats aggregate: %s\n", e.message);
        tsf_dataset_agg_result_free(*res);
        *res = NULL;
        return -1;
    }
    return 0;
}

/* Rows of res against the reference, bit for bit; the number of differing rows (the first printed). */
static size_t stats_diff(const rset *ref, const tsf_dataset_agg_result *res, int64_t window, const char *what)
{
    size_t bad = 0;
    if (tsf_dataset_agg_result_count(res) != ref->n && !bad++)
        fprintf(stderr, "  stats %s: %zu rows, the reference %zu\n", what, tsf_dataset_agg_result_count(res), ref->n);
    for (size_t i = 0; i < tsf_dataset_agg_result_count(res); i++) {
        const tsf_dataset_agg_row *row = tsf_dataset_agg_result_row(res, i);
        const rslot *s = NULL;
        int64_t w = window ? (row->window_start >= 0 ? row->window_start / window : -1) : 0;
        for (size_t j = 0; j < ref->n && !s; j++)
            if (ref->s[j].dev == row->device && ref->s[j].win == w && !strcmp(ref->s[j].col, row->column))
                s = &ref->s[j];
        if (s && row_same(s, row)) continue;
        if (!bad++)
            fprintf(stderr, "  stats %s row %zu (%s, window %lld): sum %.17g vs %.17g, min %g vs %g, count %llu\n",
                    what, i, row->column, (long long)row->window_start, row->sum, s ? s->sum : 0, row->min,
                    s ? s->min : 0, (unsigned long long)row->count);
    }
    return bad;
}

static void test_aggregate_stats(void)
{
    const unsigned threads[3] = {1, 2, 4};
    for (int aligned = 1; aligned >= 0; aligned--) {
        char dir[128], path[160];
        path_of(dir, sizeof dir, aligned ? "stats_table" : "stats_tree", NULL);
        CHECK(mkdir_p(dir) == 0);
        for (size_t f = 0; f < 4; f++) {
            snprintf(path, sizeof path, "%s/s%zu.tsfile", dir, f);
            CHECK(write_stats_file(f, path, aligned) == 0);
        }
        const char *paths[1] = {dir};
        tsf_error e = {0};
        tsf_dataset *ds = NULL;
        CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
        if (!ds) return;
        rset *ref = malloc(sizeof *ref);
        /* shapes: one window (whole chunks), windows of a chunk, windows cutting pages, a range cutting pages,
         * windows of a page (file 0's pages each whole in one, the -0.0 page among them; the other files' pages
         * cut in two), all
         * devices as one group, a value filter (no statistics) */
        const struct {
            int by_device;
            int64_t window, tmin, tmax;
            const char *where;
            int chunks, pages; /* units the statistics path must have taken */
        } shapes[7] = {{1, 0, INT64_MIN, INT64_MAX, NULL, 1, 1},   {1, 1000, INT64_MIN, INT64_MAX, NULL, 1, 1},
                       {1, 500, INT64_MIN, INT64_MAX, NULL, 0, 1}, {1, 300, 1050, 3700, NULL, 0, 1},
                       {1, 128, INT64_MIN, INT64_MAX, NULL, 0, 1}, {0, 1000, INT64_MIN, INT64_MAX, NULL, 1, 1},
                       {1, 1000, INT64_MIN, INT64_MAX, "n > 0", 0, 0}};
        for (int sh = 0; ref && sh < 7; sh++) {
            tsf_filter *where = NULL;
            if (shapes[sh].where) CHECK_OK(tsf_filter_parse(&where, shapes[sh].where, &e), &e);
            int64_t window = shapes[sh].window;
            CHECK(agg_reference(ds, stats_unit, shapes[sh].by_device, window, shapes[sh].tmin, shapes[sh].tmax, where,
                                ref) == 0);
            CHECK(ref->n > 10);
            uint64_t total = 0;
            for (size_t i = 0; i < ref->n; i++) total += ref->s[i].count;
            uint64_t forced_pages = 0;
            for (int force = 1; force >= 0; force--)
                for (size_t t = 0; t < 3; t++)
                    for (unsigned k = 1; k <= 8; k++) {
                        tsf_dataset_agg_result *res = NULL;
                        tsf_dataset_agg_stats st;
                        CHECK(stats_run(ds, shapes[sh].by_device, window, shapes[sh].tmin, shapes[sh].tmax, where,
                                        threads[t], k, force, &res, &st) == 0);
                        if (!res) continue;
                        char what[96];
                        snprintf(what, sizeof what, "%s shape %d force %d threads %u k %u",
                                 aligned ? "table" : "tree", sh, force, threads[t], k);
                        CHECK_EQ_INT(stats_diff(ref, res, window, what), 0);
                        CHECK_EQ_INT(st.points_from_stats + st.points_decoded, total);
                        if (force || !(shapes[sh].chunks | shapes[sh].pages)) {
                            CHECK(st.chunks_from_stats == 0 && st.pages_from_stats == 0 && st.points_from_stats == 0);
                            forced_pages = st.pages_decoded;
                        } else {
                            CHECK(st.points_from_stats > 0);
                            CHECK(shapes[sh].chunks ? st.chunks_from_stats > 0 : st.chunks_from_stats == 0);
                            CHECK(!shapes[sh].pages || st.pages_from_stats > 0);
                            CHECK(st.pages_decoded > 0 && st.pages_decoded < forced_pages);
                        }
                        tsf_dataset_agg_result_free(res);
                    }
            tsf_filter_free(where);
        }
        free(ref);
        /* the previous size of the stats (without the counters) and of the options (without force_decode) */
        tsf_dataset_agg_result *res = NULL;
        tsf_dataset_agg_options ao;
        tsf_dataset_agg_options_init(&ao);
        ao.struct_size = offsetof(tsf_dataset_agg_options, force_decode);
        CHECK_OK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e), &e);
        tsf_dataset_agg_stats st;
        memset(&st, 0xAB, sizeof st);
        st.struct_size = offsetof(tsf_dataset_agg_stats, chunks_from_stats);
        CHECK_OK(tsf_dataset_agg_result_stats(res, &st, &e), &e);
        CHECK(st.values > 0 && st.chunks_from_stats == 0xABABABABABABABABull); /* not written past its size */
        tsf_dataset_agg_result_free(res);
        tsf_dataset_close(ds);
    }
}

/* 1 when this process maps the file at path (/proc/self/maps names it), 0 when not, -1 when it cannot tell. */
static int mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[1024];
    size_t n = strlen(path);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        size_t k = strcspn(line, "\n");
        found = k >= n && !memcmp(line + k - n, path, n);
    }
    fclose(f);
    return found;
}

/* use_pread -1 (the default) chooses by use: a reader the caller opens maps its file, a dataset's readers for
 * one query read with pread; 0 maps them too. Seen in /proc/self/maps while a query is open. */
/* TEXT / STRING / BLOB min and max bytes: files of table "b" (tag dev x / y; txt STRING with empty strings,
 * bytes past 0x7f and prefixes of one another, nulls; bl BLOB; n INT32), 32-row pages. */
static void bytes_value(size_t f, size_t d, size_t i, int col, char *buf, size_t *len, int *null)
{
    unsigned h = (unsigned)((f * 131 + d * 71 + i * 37) % 97);
    *null = col == 0 ? i % 9 == 4 : i % 7 == 0;
    if (col == 0) {
        int n = i % 17 == 3 ? 0 : snprintf(buf, 16, "%c%u", 'a' + (char)(h % 26), h / (1 + (unsigned)(i % 3)));
        if (i % 11 == 2) buf[n++] = (char)0xff;
        *len = (size_t)n;
    } else {
        buf[0] = (char)h;
        buf[1] = (char)(255 - h);
        *len = i % 13 == 1 ? 0 : i % 5 == 2 ? 1 : 2;
    }
}

static int write_bytes_file(size_t f, const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_paged(&w, path, 32, &e);
    tsf_column_schema cols[4] = {{"dev", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"txt", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"bl", TSF_BLOB, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                 {"n", TSF_INT32, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "b", cols, 4, &e);
    for (size_t d = 0; d < 2 && !st; d++)
        for (size_t i = 0; i < 150 && !st; i++) {
            const char *names[4] = {"dev", "txt", "bl", "n"};
            char b1[20], b2[4];
            size_t l1, l2;
            int n1, n2;
            bytes_value(f, d, i, 0, b1, &l1, &n1);
            bytes_value(f, d, i, 1, b2, &l2, &n2);
            tsf_value v[4];
            memset(v, 0, sizeof v);
            v[0].v.bytes.data = (const uint8_t *)(d ? "y" : "x");
            v[0].v.bytes.len = 1;
            v[1].v.bytes.data = (const uint8_t *)b1;
            v[1].v.bytes.len = l1;
            v[1].is_null = n1;
            v[2].v.bytes.data = (const uint8_t *)b2;
            v[2].v.bytes.len = l2;
            v[2].is_null = n2;
            v[3].v.i32 = (int32_t)i;
            st = tsf_writer_write_row(w, "b", (int64_t)(f * 1000 + i * 5 + d), names, v, 4, &e);
        }
    return finish_write(w, st, path, &e);
}

typedef struct bref {
    int has;
    char min[20], max[20];
    size_t nmin, nmax;
} bref;

static int bcmp_(const char *x, size_t nx, const char *y, size_t ny)
{
    int c = memcmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

static void test_aggregate_bytes(void)
{
    char dir[128], path[160];
    path_of(dir, sizeof dir, "bytes", NULL);
    CHECK(mkdir_p(dir) == 0);
    for (size_t f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/b%zu.tsfile", dir, f);
        CHECK(write_bytes_file(f, path) == 0);
    }
    const char *paths[1] = {dir};
    tsf_error e = {0};
    tsf_dataset *ds = NULL;
    CHECK_OK(tsf_dataset_open(&ds, paths, 1, NULL, &e), &e);
    if (!ds) return;
    const char *tag[1] = {"dev"};
    const unsigned threads[3] = {1, 2, 4}, ks[3] = {1, 3, 8};
    for (int shape = 0; shape < 3; shape++) {
        int64_t window = shape == 0 ? 0 : 400;
        int by_tag = shape != 2;
        static bref ref[2][8][2]; /* group (x / y, or 0 for all), window, column */
        memset(ref, 0, sizeof ref);
        for (size_t f = 0; f < 3; f++)
            for (size_t d = 0; d < 2; d++)
                for (size_t i = 0; i < 150; i++)
                    for (int col = 0; col < 2; col++) {
                        char b[20];
                        size_t n;
                        int null;
                        bytes_value(f, d, i, col, b, &n, &null);
                        if (null) continue;
                        int64_t t = (int64_t)(f * 1000 + i * 5 + d);
                        bref *r = &ref[by_tag ? d : 0][window ? t / window : 0][col];
                        if (!r->has || bcmp_(b, n, r->min, r->nmin) < 0) memcpy(r->min, b, r->nmin = n);
                        if (!r->has || bcmp_(b, n, r->max, r->nmax) > 0) memcpy(r->max, b, r->nmax = n);
                        r->has = 1;
                    }
        for (size_t ti = 0; ti < 3; ti++)
            for (size_t ki = 0; ki < 3; ki++) {
                tsf_dataset_query_options o;
                tsf_dataset_query_options_init(&o);
                o.threads = threads[ti];
                o.files_at_once = ks[ki];
                tsf_dataset_agg_options ao;
                tsf_dataset_agg_options_init(&ao);
                ao.window = window;
                ao.by_device = 0;
                if (by_tag) {
                    ao.group_tags = tag;
                    ao.ngroup_tags = 1;
                }
                tsf_dataset_agg_result *res = NULL;
                CHECK_OK(tsf_dataset_aggregate(ds, &o, &ao, &res, &e), &e);
                size_t seen = 0, bad = 0;
                for (size_t i = 0; i < tsf_dataset_agg_result_count(res); i++) {
                    const tsf_dataset_agg_row *row = tsf_dataset_agg_result_row(res, i);
                    int col = !strcmp(row->column, "txt") ? 0 : !strcmp(row->column, "bl") ? 1 : -1;
                    if (col < 0) {
                        bad += row->min_bytes.data != NULL || row->max_bytes.data != NULL;
                        continue;
                    }
                    size_t g = 0;
                    if (by_tag) {
                        tsf_bytes tv = tsf_dataset_agg_result_tag(res, row->group, 0);
                        g = tv.len == 1 && tv.data[0] == 'y';
                    }
                    const bref *r = &ref[g][window ? row->window_start / window : 0][col];
                    seen++;
                    bad += !r->has || !row->min_bytes.data || !row->max_bytes.data ||
                           bcmp_((const char *)row->min_bytes.data, row->min_bytes.len, r->min, r->nmin) ||
                           bcmp_((const char *)row->max_bytes.data, row->max_bytes.len, r->max, r->nmax);
                }
                size_t want = 0;
                for (size_t g = 0; g < 2; g++)
                    for (size_t w = 0; w < 8; w++) want += ref[g][w][0].has + ref[g][w][1].has;
                CHECK_EQ_INT(seen, want);
                CHECK_EQ_INT(bad, 0);
                tsf_dataset_agg_result_free(res);
            }
    }
    tsf_dataset_close(ds);
}

static void test_reads_by_use(void)
{
    tsf_dataset *ds = open_dir("table");
    if (!ds || mapped("/proc/self/maps") < 0) { /* no /proc: nothing to see */
        tsf_dataset_close(ds);
        return;
    }
    tsf_error e = {0};
    tsf_dataset_file_info fi;
    CHECK_OK(tsf_dataset_file(ds, 0, &fi, &e), &e);
    char path[512];
    CHECK(realpath(fi.path, path) != NULL);
    CHECK_EQ_INT(mapped(path), 0);
    for (int explicit_map = 0; explicit_map < 2; explicit_map++) {
        tsf_dataset *d = ds;
        if (explicit_map) {
            tsf_reader_options ro;
            tsf_reader_options_init(&ro);
            CHECK_EQ_INT(ro.use_pread, -1);
            ro.use_pread = 0;
            tsf_dataset_options dso;
            tsf_dataset_options_init(&dso);
            dso.reader = &ro;
            const char *paths[1] = {fi.path};
            d = NULL;
            CHECK_OK(tsf_dataset_open(&d, paths, 1, &dso, &e), &e);
            if (!d) break;
        }
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        tsf_dataset_query *q = NULL;
        const tsf_dataset_batch *b = NULL;
        CHECK_OK(tsf_dataset_query_open(d, &o, &q, &e), &e);
        CHECK_OK(tsf_dataset_query_next(q, &b, &e), &e);
        CHECK(b != NULL && b->file == 0);
        CHECK_EQ_INT(mapped(path), explicit_map);
        tsf_dataset_query_close(q);
        CHECK_EQ_INT(mapped(path), 0);
        if (explicit_map) tsf_dataset_close(d);
    }
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, fi.path, NULL, &e), &e);
    CHECK_EQ_INT(mapped(path), 1);
    tsf_reader_close(r);
    tsf_dataset_close(ds);
}

/* ---- buffer reuse: decode buffers go from one file's query to the next, and stay with a pool's readers ---- */

#define REUSE_ROWS 20000

typedef struct count_alloc {
    size_t bytes; /* requested since the last reset (growth only, for realloc) */
} count_alloc;

static void *ca_alloc(void *ud, size_t n)
{
    ((count_alloc *)ud)->bytes += n;
    return malloc(n ? n : 1);
}

static void *ca_realloc(void *ud, void *p, size_t old, size_t n)
{
    if (n > old) ((count_alloc *)ud)->bytes += n - old;
    return realloc(p, n ? n : 1);
}

static void ca_free(void *ud, void *p, size_t n)
{
    (void)ud, (void)n;
    free(p);
}

static int write_reuse_file(const char *path)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = open_paged(&w, path, 10000, &e);
    tsf_column_schema cols[2] = {{"i", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"d", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_aligned(w, "root.sg.r", cols, 2, &e);
    for (size_t k = 0; k < REUSE_ROWS && !st; k++) {
        const char *names[2] = {"i", "d"};
        tsf_value v[2];
        memset(v, 0, sizeof v);
        v[0].v.i64 = (int64_t)(k * 7919 % 1000);
        v[1].v.d = val_d(0, 0, k);
        st = tsf_writer_write_row(w, "root.sg.r", (int64_t)k, names, v, 2, &e);
    }
    return finish_write(w, st, path, &e);
}

/* Bytes the allocator gave to one query reading every row of paths[0..n), or with aggregate to one
 * aggregation of them by device and 10 ms windows (the open not counted). */
static size_t use_bytes(const char *const *paths, size_t n, const tsf_dataset_options *dso, count_alloc *ca,
                        int aggregate)
{
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, paths, n, dso, &e), &e);
    if (!ds) return 0;
    ca->bytes = 0;
    size_t bytes = 0;
    if (aggregate) {
        tsf_dataset_agg_options ao;
        tsf_dataset_agg_options_init(&ao);
        ao.window = 10;
        tsf_dataset_agg_result *res = NULL;
        CHECK_OK(tsf_dataset_aggregate(ds, NULL, &ao, &res, &e), &e);
        bytes = ca->bytes;
        CHECK_EQ_INT(tsf_dataset_agg_result_count(res), 2 * n * ((REUSE_ROWS + 9) / 10));
        tsf_dataset_agg_result_free(res);
    } else {
        tsf_dataset_query_options o;
        tsf_dataset_query_options_init(&o);
        tsf_dataset_query *q = NULL;
        const tsf_dataset_batch *b = NULL;
        size_t rows = 0;
        CHECK_OK(tsf_dataset_query_open(ds, &o, &q, &e), &e);
        while (q && !tsf_dataset_query_next(q, &b, &e) && b) rows += b->rows.nrows;
        tsf_dataset_query_close(q);
        bytes = ca->bytes;
        CHECK_EQ_INT(rows, n * REUSE_ROWS);
    }
    tsf_dataset_close(ds);
    return bytes;
}

static void test_buffer_reuse(void)
{
    char p[4][512];
    const char *paths[4];
    char dir[512];
    path_of(dir, sizeof dir, "reuse", NULL);
    mkdir(dir, 0755);
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "r%d.tsfile", k);
        path_of(p[k], sizeof p[k], "reuse", name);
        CHECK(write_reuse_file(p[k]) == 0);
        paths[k] = p[k];
    }
    count_alloc ca = {0};
    tsf_allocator al = {ca_alloc, ca_realloc, ca_free, &ca};
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.allocator = &al;
    tsf_dataset_options dso;
    tsf_dataset_options_init(&dso);
    dso.reader = &ro;
    /* files after the first decode into the buffers the one before left: three more files cost less than
     * the first one's buffers */
    size_t one = use_bytes(paths, 1, &dso, &ca, 0), four = use_bytes(paths, 4, &dso, &ca, 0);
    CHECK(one > 0 && four > one);
    if (four - one >= one) fprintf(stderr, "buffer reuse: 1 file %zu bytes, 4 files %zu\n", one, four);
    CHECK(four - one < one);
    /* a pool's reader keeps its query's buffers: the same query again allocates a fraction (the pool keeps
     * no reader of a file changed in the last 2 s, so the files age first) */
    sleep(3);
    tsf_reader_pool *pool = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_pool_create(&pool, NULL, &e), &e);
    dso.reader_pool = pool;
    size_t first = use_bytes(paths, 1, &dso, &ca, 0), again = use_bytes(paths, 1, &dso, &ca, 0);
    if (again >= first / 4) fprintf(stderr, "pooled reader: first query %zu bytes, again %zu\n", first, again);
    CHECK(first > 0 && again < first / 4);
    tsf_reader_pool_free(pool);
    /* the buffers go to the pool, not to one reader: a new pool's readers of four files, each opened for the
     * first time, decode into the first one's buffers (three more files cost less than one file's buffers),
     * and so do the readers of a pool that keeps one reader (the others are closed and opened again) */
    static const size_t keeps[] = {16, 1};
    for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
        size_t keep = keeps[k];
        tsf_reader_pool_options po;
        tsf_reader_pool_options_init(&po);
        po.max_readers = keep;
        CHECK_OK(tsf_reader_pool_create(&pool, &po, &e), &e);
        dso.reader_pool = pool;
        size_t p1 = use_bytes(paths, 1, &dso, &ca, 0);
        tsf_reader_pool_clear(pool);
        size_t p4 = use_bytes(paths, 4, &dso, &ca, 0);
        if (p4 - p1 >= p1)
            fprintf(stderr, "pool of %zu readers: 1 file %zu bytes, 4 files %zu\n", keep, p1, p4);
        CHECK(p1 > 0 && p4 > p1 && p4 - p1 < p1);
        tsf_reader_pool_free(pool);
    }
    /* an aggregation leaves its tables and runs in the pool: the next one (a file of as many keys) allocates
     * a fraction of the first one's bytes */
    CHECK_OK(tsf_reader_pool_create(&pool, NULL, &e), &e);
    dso.reader_pool = pool;
    size_t a1 = use_bytes(paths, 1, &dso, &ca, 1), a2 = use_bytes(paths + 1, 1, &dso, &ca, 1);
    if (a2 >= a1 / 3) fprintf(stderr, "pooled aggregation: first %zu bytes, next %zu\n", a1, a2);
    CHECK(a1 > 0 && a2 < a1 / 3);
    tsf_reader_pool_free(pool);
}

int main(void)
{
    TSF_RUN(test_schema_tree);
    TSF_RUN(test_schema_table);
    TSF_RUN(test_file_devices);
    TSF_RUN(test_type_conflict);
    TSF_RUN(test_empty_files);
    TSF_RUN(test_paths);
    TSF_RUN(test_query_table);
    TSF_RUN(test_query_tree);
    TSF_RUN(test_skip_files);
    TSF_RUN(test_fold);
    TSF_RUN(test_close_early);
    TSF_RUN(test_aggregate);
    TSF_RUN(test_aggregate_kernels);
    TSF_RUN(test_aggregate_tags);
    TSF_RUN(test_aggregate_stats);
    TSF_RUN(test_aggregate_bytes);
    TSF_RUN(test_reads_by_use);
    TSF_RUN(test_buffer_reuse);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir());
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmp_dir());
    return tsf_test_finish();
}
