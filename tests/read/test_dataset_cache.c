/*
 * test_dataset_cache.c - the metadata cache of tsf_dataset_open (tsf_dataset_options.cache_path): a warm
 * open gives the same dataset as an open without cache (every accessor compared, a query's rows, and the
 * per-file series against each file's own reader), entries are invalidated by a rewrite of the same path,
 * a changed mtime and an in-place rewrite that restores the mtime (ctime), files added to and removed from
 * the dataset, racy (just written) files are not cached, type conflicts give the same error, and damaged,
 * truncated, foreign and hostile (valid checksum, bad counts) cache files are ignored and rebuilt, never
 * misread; an unwritable cache leaves the open successful and says why.
 * The reader pool (tsf_dataset_options.reader_pool, tsf_reader_pool_*): a dataset with a pool gives the same
 * dataset and rows, kept readers are handed out again while their file is unchanged, a file rewritten in place
 * (same size, mtime put back) or renamed over gets a new reader, at most max_readers stay kept, racy files are
 * not kept, and options are checked.
 *
 * Data: table-model files (TAGs region, site, rack with a null site in the middle of some device ids;
 * FIELDs v INT64, w DOUBLE with nulls) and tree-model files (a non-aligned and an aligned device), written
 * then aged (mtime an hour back) so the cache may record them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "test.h"

static char g_dir[64];

static const char *tmp_dir(void)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/tsf_dsc_XXXXXX");
        if (!mkdtemp(g_dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return g_dir;
}

static void path_of(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmp_dir(), name);
}

/* Sets the file's mtime to `ago` seconds before now (+ ns), so it is not racy. */
static int age(const char *path, long ago, long ns)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= ago;
    t[0].tv_nsec = ns;
    t[1] = t[0];
    return utimensat(AT_FDCWD, path, t, 0);
}

/* A table-model file: devices per `regions`, rows from t0; variant changes values (and, odd, the range). */
static int write_table(const char *path, int64_t t0, size_t rows, const char *regions, int variant)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open(&w, path, NULL, &e);
    tsf_column_schema cols[5] = {{"region", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"site", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"rack", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                 {"v", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                 {"w", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    if (!st) st = tsf_writer_register_table(w, "t", cols, 5, &e);
    for (const char *r = regions; *r && !st; r++) {
        char reg[3] = {'r', *r, 0}, site[3] = {'s', *r, 0};
        for (size_t i = 0; i < rows && !st; i++) {
            const char *names[5] = {"region", "site", "rack", "v", "w"};
            tsf_value v[5];
            memset(v, 0, sizeof v);
            v[0].v.bytes = (tsf_bytes){(const uint8_t *)reg, 2};
            v[1].v.bytes = (tsf_bytes){(const uint8_t *)site, 2};
            v[1].is_null = *r == '1'; /* a null segment inside the id */
            v[2].v.bytes = (tsf_bytes){(const uint8_t *)"k", 1};
            v[3].v.i64 = (int64_t)i * 3 + variant;
            v[4].v.d = (double)i / 7.0 + variant;
            v[4].is_null = i % 5 == 2;
            st = tsf_writer_write_row(w, "t", t0 + (int64_t)i * 10 + (variant & 1), names, v, 5, &e);
        }
    }
    if (!st)
        st = tsf_writer_close(w, &e);
    else
        tsf_writer_abort(w);
    if (st) fprintf(stderr, "write %s: %s\n", path, e.message);
    return st ? -1 : 0;
}

/* A tree-model file: root.sg.d0 (s1 of type t1, s2 DOUBLE) and root.sg.a0 aligned (x DOUBLE). */
static int write_tree(const char *path, int64_t t0, tsf_type t1)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open(&w, path, NULL, &e);
    tsf_column_schema s1 = {"s1", t1, TSF_ENC_PLAIN, TSF_SNAPPY, TSF_COLUMN_FIELD};
    tsf_column_schema s2 = {"s2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema x = {"x", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
    if (!st) st = tsf_writer_register_series(w, "root.sg.d0", &s1, &e);
    if (!st) st = tsf_writer_register_series(w, "root.sg.d0", &s2, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.sg.a0", &x, 1, &e);
    for (size_t i = 0; i < 60 && !st; i++) {
        const char *n[2] = {"s1", "s2"};
        tsf_value v[2];
        memset(v, 0, sizeof v);
        if (t1 == TSF_DOUBLE)
            v[0].v.d = (double)i;
        else
            v[0].v.i64 = (int64_t)i - 9;
        v[1].v.d = (double)i * 0.5;
        v[1].is_null = i % 3 == 1;
        st = tsf_writer_write_row(w, "root.sg.d0", t0 + (int64_t)i * 5, n, v, 2, &e);
        const char *xn = "x";
        tsf_value xv = {0};
        xv.v.d = (double)i;
        xv.is_null = i % 4 == 0;
        if (!st) st = tsf_writer_write_row(w, "root.sg.a0", t0 + (int64_t)i * 5 + 1, &xn, &xv, 1, &e);
    }
    if (!st)
        st = tsf_writer_close(w, &e);
    else
        tsf_writer_abort(w);
    if (st) fprintf(stderr, "write %s: %s\n", path, e.message);
    return st ? -1 : 0;
}

#define NFILES 6
static const char *const NAMES[NFILES] = {"a.tsfile", "b.tsfile", "c.tsfile",
                                          "d.tsfile", "e.tsfile", "f.tsfile"};
static char g_paths[NFILES][256];
static const char *g_pp[NFILES];

/* The six files of the main dataset: four table-model, two tree-model; aged. */
static int make_files(void)
{
    static int ready;
    if (ready) return ready > 0;
    ready = -1;
    for (size_t i = 0; i < NFILES; i++) {
        path_of(g_paths[i], sizeof g_paths[i], NAMES[i]);
        g_pp[i] = g_paths[i];
    }
    if (write_table(g_paths[0], 0, 40, "012", 0) || write_table(g_paths[1], 1000, 30, "13", 0) ||
        write_tree(g_paths[2], 0, TSF_INT64) || write_table(g_paths[3], 500, 50, "0", 0) ||
        write_tree(g_paths[4], 2000, TSF_INT64) || write_table(g_paths[5], 9000, 10, "2", 0))
        return 0;
    for (size_t i = 0; i < NFILES; i++)
        if (age(g_paths[i], 3600, 0)) return 0;
    ready = 1;
    return 1;
}

/* The files are there (a failed check otherwise). */
static int ready(void)
{
    int ok = make_files();
    CHECK(ok);
    return ok;
}

/* Opens paths with the cache (NULL: none) in mode; *st its status (NULL: must be TSF_OK); os its open stats. */
static tsf_dataset *open_st(const char *const *paths, size_t n, const char *cache, int mode,
                            tsf_dataset_open_stats *os, tsf_status *st)
{
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.cache_path = cache;
    o.cache_mode = mode;
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    tsf_status s = tsf_dataset_open(&ds, paths, n, &o, &e);
    if (st)
        *st = s;
    else
        CHECK_OK(s, &e);
    if (os) {
        memset(os, 0, sizeof *os);
        os->struct_size = sizeof *os;
        if (ds) CHECK_OK(tsf_dataset_get_open_stats(ds, os, &e), &e);
    }
    return ds;
}

static tsf_dataset *open_ds(const char *const *paths, size_t n, const char *cache, int mode,
                            tsf_dataset_open_stats *os)
{
    return open_st(paths, n, cache, mode, os, NULL);
}

#define SAME_STR(a, b) CHECK(((a) == NULL) == ((b) == NULL) && (!(a) || !strcmp((a), (b))))

/* Every accessor of a and b returns the same values. */
static void check_same(const tsf_dataset *a, const tsf_dataset *b)
{
    tsf_error e = {0};
    size_t nf = tsf_dataset_file_count(a), nt = tsf_dataset_table_count(a), nd = tsf_dataset_device_count(a);
    CHECK_EQ_INT(tsf_dataset_file_count(b), nf);
    CHECK_EQ_INT(tsf_dataset_table_count(b), nt);
    CHECK_EQ_INT(tsf_dataset_device_count(b), nd);
    if (tsf_dataset_file_count(b) != nf || tsf_dataset_table_count(b) != nt ||
        tsf_dataset_device_count(b) != nd)
        return;
    for (size_t f = 0; f < nf; f++) {
        tsf_dataset_file_info x, y;
        CHECK_OK(tsf_dataset_file(a, f, &x, &e), &e);
        CHECK_OK(tsf_dataset_file(b, f, &y, &e), &e);
        SAME_STR(x.path, y.path);
        CHECK_EQ_INT(x.size, y.size);
        CHECK_EQ_INT(x.time_min, y.time_min);
        CHECK_EQ_INT(x.time_max, y.time_max);
        CHECK_EQ_INT(x.points, y.points);
        CHECK_EQ_INT(x.ndevices, y.ndevices);
        for (size_t k = 0; k < x.ndevices; k++) {
            tsf_dataset_file_device_info u, v;
            CHECK_OK(tsf_dataset_file_device(a, f, k, &u, &e), &e);
            CHECK_OK(tsf_dataset_file_device(b, f, k, &v, &e), &e);
            CHECK(!memcmp(&u, &v, sizeof u));
        }
    }
    for (size_t t = 0; t < nt; t++) {
        tsf_table_info x, y;
        CHECK_OK(tsf_dataset_table(a, t, &x, &e), &e);
        CHECK_OK(tsf_dataset_table(b, t, &y, &e), &e);
        SAME_STR(x.name, y.name);
        CHECK_EQ_INT(x.ncolumns, y.ncolumns);
        CHECK_EQ_INT(x.first_device, y.first_device);
        CHECK_EQ_INT(x.ndevices, y.ndevices);
        for (size_t c = 0; c < x.ncolumns && c < y.ncolumns; c++) {
            SAME_STR(x.columns[c].name, y.columns[c].name);
            CHECK_EQ_INT(x.columns[c].type, y.columns[c].type);
            CHECK_EQ_INT(x.columns[c].encoding, y.columns[c].encoding);
            CHECK_EQ_INT(x.columns[c].compression, y.columns[c].compression);
            CHECK_EQ_INT(x.columns[c].category, y.columns[c].category);
        }
    }
    for (size_t d = 0; d < nd; d++) {
        tsf_dataset_device_info x, y;
        CHECK_OK(tsf_dataset_device(a, d, &x, &e), &e);
        CHECK_OK(tsf_dataset_device(b, d, &y, &e), &e);
        SAME_STR(x.name, y.name);
        CHECK_EQ_INT(x.table, y.table);
        CHECK_EQ_INT(x.aligned, y.aligned);
        CHECK_EQ_INT(x.nseries, y.nseries);
        CHECK_EQ_INT(x.time_min, y.time_min);
        CHECK_EQ_INT(x.time_max, y.time_max);
        CHECK_EQ_INT(x.nfiles, y.nfiles);
        CHECK_EQ_INT(x.nsegments, y.nsegments);
        size_t idx = 99;
        CHECK_OK(tsf_dataset_find_device(b, x.name, &idx, &e), &e);
        CHECK_EQ_INT(idx, d);
        for (size_t s = 0; s <= x.nsegments; s++) {
            tsf_bytes p = {0}, q = {0};
            tsf_status sa = tsf_dataset_device_segment(a, d, s, &p, NULL);
            tsf_status sb = tsf_dataset_device_segment(b, d, s, &q, NULL);
            CHECK_EQ_INT(sa, sb);
            CHECK((p.data == NULL) == (q.data == NULL));
            CHECK(p.len == q.len && (!p.len || !memcmp(p.data, q.data, p.len)));
        }
        for (size_t j = 0; j < x.nseries && j < y.nseries; j++) {
            tsf_dataset_series_info u, v;
            CHECK_OK(tsf_dataset_series(a, d, j, &u, &e), &e);
            CHECK_OK(tsf_dataset_series(b, d, j, &v, &e), &e);
            SAME_STR(u.measurement, v.measurement);
            CHECK_EQ_INT(u.type, v.type);
            CHECK_EQ_INT(u.time_min, v.time_min);
            CHECK_EQ_INT(u.time_max, v.time_max);
            CHECK_EQ_INT(u.count, v.count);
            CHECK_EQ_INT(u.nfiles, v.nfiles);
            for (size_t f = 0; f < nf; f++) {
                tsf_dataset_series_info p, q;
                memset(&p, 0, sizeof p);
                memset(&q, 0, sizeof q);
                tsf_status sa = tsf_dataset_file_series(a, f, d, j, &p, NULL);
                tsf_status sb = tsf_dataset_file_series(b, f, d, j, &q, NULL);
                CHECK_EQ_INT(sa, sb);
                CHECK_EQ_INT(p.time_min, q.time_min);
                CHECK_EQ_INT(p.time_max, q.time_max);
                CHECK_EQ_INT(p.count, q.count);
                CHECK_EQ_INT(p.type, q.type);
            }
        }
    }
}

/* The per-file metadata against each file's own reader (independent of how the dataset got it). */
static void check_files(const tsf_dataset *ds)
{
    tsf_error e = {0};
    for (size_t f = 0, nf = tsf_dataset_file_count(ds); f < nf; f++) {
        tsf_dataset_file_info fi;
        CHECK_OK(tsf_dataset_file(ds, f, &fi, &e), &e);
        struct stat sb;
        CHECK(stat(fi.path, &sb) == 0 && (uint64_t)sb.st_size == fi.size);
        tsf_reader *r = NULL;
        CHECK_OK(tsf_reader_open(&r, fi.path, NULL, &e), &e);
        if (!r) continue;
        CHECK_EQ_INT(tsf_reader_device_count(r), fi.ndevices);
        uint64_t points = 0;
        for (size_t d = 0; d < tsf_reader_device_count(r); d++) {
            tsf_device_info rd;
            CHECK_OK(tsf_reader_device(r, d, &rd, &e), &e);
            size_t dd = 0;
            CHECK_OK(tsf_dataset_find_device(ds, rd.name, &dd, &e), &e);
            tsf_dataset_device_info di;
            CHECK_OK(tsf_dataset_device(ds, dd, &di, &e), &e);
            for (size_t j = 0; j < rd.nseries; j++) {
                tsf_series_info si;
                CHECK_OK(tsf_reader_series(r, d, j, &si, &e), &e);
                size_t k = 0;
                tsf_dataset_series_info ds_si;
                while (k < di.nseries && !tsf_dataset_series(ds, dd, k, &ds_si, NULL) &&
                       strcmp(ds_si.measurement, si.measurement))
                    k++;
                CHECK(k < di.nseries);
                CHECK_OK(tsf_dataset_file_series(ds, f, dd, k, &ds_si, &e), &e);
                CHECK_EQ_INT(ds_si.type, si.type);
                CHECK_EQ_INT(ds_si.count, si.stats.count);
                if (si.stats.count) {
                    CHECK_EQ_INT(ds_si.time_min, si.stats.start_time);
                    CHECK_EQ_INT(ds_si.time_max, si.stats.end_time);
                }
                points += si.stats.count;
            }
        }
        CHECK_EQ_INT(points, fi.points);
        tsf_reader_close(r);
    }
}

/* A query's batches (file, dataset device, rows, first and last time) as a running hash. */
static uint64_t query_hash(tsf_dataset *ds)
{
    tsf_dataset_query *q = NULL;
    tsf_error e = {0};
    uint64_t h = 1469598103934665603ull;
    CHECK_OK(tsf_dataset_query_open(ds, NULL, &q, &e), &e);
    const tsf_dataset_batch *b;
    while (q && tsf_dataset_query_next(q, &b, &e) == TSF_OK && b) {
        uint64_t v[4] = {b->file, b->device, b->rows.nrows, b->rows.nrows ? (uint64_t)b->rows.times[0] : 0};
        for (int i = 0; i < 4; i++) h = (h ^ v[i]) * 1099511628211ull;
    }
    tsf_dataset_query_close(q);
    return h;
}

static void cache_path(char *buf, size_t cap, const char *name)
{
    path_of(buf, cap, name);
    unlink(buf);
}

static void test_warm_equals_uncached(void)
{
    if (!ready()) return;
    char c[256];
    cache_path(c, sizeof c, "main.cache");
    tsf_dataset_open_stats os;
    tsf_dataset *plain = open_ds(g_pp, NFILES, NULL, 0, &os);
    if (!plain) return;
    CHECK_EQ_INT(os.files_read, NFILES);
    CHECK_EQ_INT(os.files_cached, 0);
    CHECK_EQ_INT(os.cache_written, 0);
    check_files(plain);
    /* read-only on a missing cache: nothing written */
    tsf_dataset *ro = open_ds(g_pp, NFILES, c, TSF_DATASET_CACHE_READ_ONLY, &os);
    CHECK(access(c, F_OK) != 0);
    CHECK_EQ_INT(os.cache_written, 0);
    tsf_dataset_close(ro);
    /* cold: every file read, the cache written */
    tsf_dataset *cold = open_ds(g_pp, NFILES, c, 0, &os);
    CHECK_EQ_INT(os.files_read, NFILES);
    CHECK_EQ_INT(os.files_cached, 0);
    CHECK_EQ_INT(os.files_racy, 0);
    CHECK_EQ_INT(os.cache_loaded, 0);
    CHECK_EQ_INT(os.cache_load.code, TSF_OK);
    CHECK_EQ_INT(os.cache_written, 1);
    CHECK_EQ_INT(os.cache_save.code, TSF_OK);
    if (cold) check_same(plain, cold);
    tsf_dataset_close(cold);
    struct stat s0, s1;
    CHECK(stat(c, &s0) == 0);
    /* warm: no file read, nothing rewritten, the same dataset */
    tsf_dataset *warm = open_ds(g_pp, NFILES, c, 0, &os);
    CHECK_EQ_INT(os.files_read, 0);
    CHECK_EQ_INT(os.files_cached, NFILES);
    CHECK_EQ_INT(os.cache_loaded, 1);
    CHECK_EQ_INT(os.cache_written, 0);
    CHECK(stat(c, &s1) == 0 && s1.st_ino == s0.st_ino && s1.st_mtim.tv_nsec == s0.st_mtim.tv_nsec);
    if (warm) {
        check_same(plain, warm);
        check_files(warm);
        CHECK(query_hash(plain) == query_hash(warm));
    }
    tsf_dataset_close(warm);
    /* read-only on a warm cache uses it */
    ro = open_ds(g_pp, NFILES, c, TSF_DATASET_CACHE_READ_ONLY, &os);
    CHECK_EQ_INT(os.files_cached, NFILES);
    if (ro) check_same(plain, ro);
    tsf_dataset_close(ro);
    /* a directory of the same files (other path strings: other entries) */
    const char *dir[1] = {tmp_dir()};
    tsf_dataset *d1 = open_ds(dir, 1, c, 0, &os);
    CHECK_EQ_INT(os.files_cached, NFILES); /* "<dir>/a.tsfile" is the path the list gave too */
    tsf_dataset_close(d1);
    tsf_dataset_close(plain);
}

static void test_invalidation(void)
{
    if (!ready()) return;
    char c[256], p[256];
    cache_path(c, sizeof c, "inval.cache");
    path_of(p, sizeof p, "x.tsfile");
    const char *paths[3] = {g_paths[0], p, g_paths[2]};
    tsf_dataset_open_stats os;
    CHECK(write_table(p, 100, 20, "02", 0) == 0 && age(p, 3600, 0) == 0);
    tsf_dataset_close(open_ds(paths, 3, c, 0, &os));
    CHECK_EQ_INT(os.cache_written, 1);
    /* another content under the same path (another range): read again, the new metadata */
    CHECK(write_table(p, 100, 20, "02", 1) == 0 && age(p, 3500, 0) == 0);
    tsf_dataset *a = open_ds(paths, 3, c, 0, &os), *b = open_ds(paths, 3, NULL, 0, NULL);
    CHECK_EQ_INT(os.files_read, 1);
    CHECK_EQ_INT(os.files_cached, 2);
    CHECK_EQ_INT(os.cache_written, 1);
    if (a && b) check_same(a, b);
    tsf_dataset_file_info fi;
    if (a) {
        CHECK_OK(tsf_dataset_file(a, 1, &fi, NULL), NULL);
        CHECK_EQ_INT(fi.time_min, 101);
    }
    tsf_dataset_close(a);
    tsf_dataset_close(b);
    /* only the mtime changes: read again */
    CHECK(age(p, 3400, 5) == 0);
    tsf_dataset_close(open_ds(paths, 3, c, 0, &os));
    CHECK_EQ_INT(os.files_read, 1);
    tsf_dataset_close(open_ds(paths, 3, c, 0, &os));
    CHECK_EQ_INT(os.files_read, 0);
    /* rewritten in place with the same size, the old mtime put back: the ctime tells (after a pause longer
     * than the file system's timestamp tick) */
    struct timespec pause = {0, 30000000};
    nanosleep(&pause, NULL);
    struct stat before, after;
    CHECK(stat(p, &before) == 0);
    size_t len = 0;
    uint8_t *bytes = tsf_test_read_file(p, &len);
    int fd = open(p, O_WRONLY);
    CHECK(bytes && fd >= 0 && write(fd, bytes, len) == (ssize_t)len);
    if (fd >= 0) close(fd);
    free(bytes);
    struct timespec t[2] = {before.st_atim, before.st_mtim};
    CHECK(utimensat(AT_FDCWD, p, t, 0) == 0);
    CHECK(stat(p, &after) == 0 && after.st_ino == before.st_ino && after.st_size == before.st_size &&
          after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    tsf_dataset_close(open_ds(paths, 3, c, 0, &os));
    CHECK_EQ_INT(os.files_read, 1);
    CHECK_EQ_INT(os.files_cached, 2);
}

static void test_added_removed(void)
{
    if (!ready()) return;
    char c[256];
    cache_path(c, sizeof c, "set.cache");
    tsf_dataset_open_stats os;
    const char *abc[3] = {g_paths[0], g_paths[1], g_paths[2]}, *acd[3] = {g_paths[0], g_paths[2], g_paths[3]};
    tsf_dataset_close(open_ds(abc, 3, c, 0, &os));
    tsf_dataset *x = open_ds(acd, 3, c, 0, &os), *y = open_ds(acd, 3, NULL, 0, NULL);
    CHECK_EQ_INT(os.files_cached, 2);
    CHECK_EQ_INT(os.files_read, 1);
    CHECK_EQ_INT(os.cache_written, 1);
    if (x && y) check_same(x, y);
    tsf_dataset_close(x);
    tsf_dataset_close(y);
    tsf_dataset_close(open_ds(acd, 3, c, 0, &os));
    CHECK_EQ_INT(os.files_cached, 3);
    CHECK_EQ_INT(os.cache_written, 0);
    /* b dropped out when it left the dataset: read again; a, c, d drop out now */
    tsf_dataset_close(open_ds(&abc[1], 1, c, 0, &os));
    CHECK_EQ_INT(os.files_read, 1);
    CHECK_EQ_INT(os.cache_written, 1);
    tsf_dataset_close(open_ds(&abc[1], 1, c, 0, &os));
    CHECK_EQ_INT(os.files_cached, 1);
    CHECK_EQ_INT(os.cache_written, 0);
}

/* Files modified within the racy window (here: an mtime a minute ahead) are read every time until they are
 * older. */
static void test_racy(void)
{
    char c[256], p[256];
    cache_path(c, sizeof c, "racy.cache");
    path_of(p, sizeof p, "fresh.tsfile");
    CHECK(write_table(p, 0, 10, "0", 0) == 0 && age(p, -60, 0) == 0);
    const char *paths[1] = {p};
    tsf_dataset_open_stats os;
    for (int i = 0; i < 2; i++) {
        tsf_dataset_close(open_ds(paths, 1, c, 0, &os));
        CHECK_EQ_INT(os.files_read, 1);
        CHECK_EQ_INT(os.files_racy, 1);
    }
    CHECK(age(p, 10, 0) == 0);
    tsf_dataset_close(open_ds(paths, 1, c, 0, &os));
    CHECK_EQ_INT(os.files_racy, 0);
    CHECK_EQ_INT(os.cache_written, 1);
    tsf_dataset_close(open_ds(paths, 1, c, 0, &os));
    CHECK_EQ_INT(os.files_cached, 1);
}

/* The type-conflict error is the same whether the first file came from the cache or not. */
static void test_conflict(void)
{
    if (!ready()) return;
    char c[256], p[256];
    cache_path(c, sizeof c, "conflict.cache");
    path_of(p, sizeof p, "conflict.tsfile");
    CHECK(write_tree(p, 5000, TSF_DOUBLE) == 0 && age(p, 3600, 0) == 0);
    tsf_dataset_open_stats os;
    const char *ce[2] = {g_paths[2], g_paths[4]};
    tsf_dataset_close(open_ds(ce, 2, c, 0, &os));
    const char *orders[2][2] = {{g_paths[2], p}, {p, g_paths[2]}};
    for (int k = 0; k < 2; k++) {
        tsf_dataset_options o;
        tsf_dataset_options_init(&o);
        tsf_dataset *ds = NULL;
        tsf_error e1 = {0}, e2 = {0};
        CHECK(tsf_dataset_open(&ds, orders[k], 2, &o, &e1) == TSF_ECORRUPT);
        o.cache_path = c;
        CHECK(tsf_dataset_open(&ds, orders[k], 2, &o, &e2) == TSF_ECORRUPT);
        CHECK(ds == NULL);
        CHECK(!strcmp(e1.message, e2.message));
        CHECK(strstr(e2.message, "c.tsfile") && strstr(e2.message, "conflict.tsfile"));
    }
}

/* Writes bytes as the cache file. */
static void put_file(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

static void set_crc(uint8_t *b, size_t n)
{
    uint32_t crc = (uint32_t)crc32(0L, b, (uInt)(n - 4));
    for (int i = 0; i < 4; i++) b[n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
}

/* A damaged cache: the open succeeds with the same dataset, says why and (read-write) rebuilds it. */
static void check_damaged(const tsf_dataset *plain, const char *c, const uint8_t *b, size_t n,
                          tsf_status want)
{
    put_file(c, b, n);
    tsf_dataset_open_stats os;
    tsf_dataset *ds = open_ds(g_pp, NFILES, c, TSF_DATASET_CACHE_READ_ONLY, &os);
    CHECK_EQ_INT(os.cache_loaded, 0);
    CHECK_EQ_INT(os.cache_load.code, want);
    CHECK_EQ_INT(os.files_read, NFILES);
    if (ds) check_same(plain, ds);
    tsf_dataset_close(ds);
    ds = open_ds(g_pp, NFILES, c, 0, &os);
    CHECK_EQ_INT(os.cache_written, 1);
    tsf_dataset_close(ds);
    tsf_dataset_close(open_ds(g_pp, NFILES, c, 0, &os));
    CHECK_EQ_INT(os.files_cached, NFILES);
}

static void test_damaged(void)
{
    if (!ready()) return;
    char c[256];
    cache_path(c, sizeof c, "damaged.cache");
    tsf_dataset *plain = open_ds(g_pp, NFILES, NULL, 0, NULL);
    tsf_dataset_open_stats os;
    tsf_dataset_close(open_ds(g_pp, NFILES, c, 0, &os));
    size_t n = 0;
    uint8_t *good = tsf_test_read_file(c, &n);
    CHECK(good && n > 64);
    if (!plain || !good || n <= 64) {
        tsf_dataset_close(plain);
        free(good);
        return;
    }
    uint8_t *b = malloc(n);
    /* truncated anywhere */
    for (size_t k = 0; k < n; k += k < 64 ? 1 : 97) check_damaged(plain, c, good, k, TSF_ECORRUPT);
    /* any byte changed (checksum) */
    for (size_t k = 0; k < n; k += 13) {
        memcpy(b, good, n);
        b[k] ^= 0x5a;
        check_damaged(plain, c, b, n, TSF_ECORRUPT);
    }
    /* hostile with a valid checksum: four bytes at every offset made 0xff */
    size_t hostile[2] = {0, 0};
    for (size_t k = 32; k + 4 <= n - 4; k += k < 400 ? 1 : 7) {
        memcpy(b, good, n);
        b[k] = b[k + 1] = b[k + 2] = b[k + 3] = 0xff;
        set_crc(b, n);
        put_file(c, b, n);
        /* refused as a whole, or (a field the parser cannot check: a time, a count, a name, a column's
         * category) used as written, which may then make the files disagree (TSF_ECORRUPT); never a crash */
        tsf_status st;
        tsf_dataset *ds = open_st(g_pp, NFILES, c, TSF_DATASET_CACHE_READ_ONLY, &os, &st);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT);
        if (ds) {
            CHECK(os.cache_load.code == TSF_ECORRUPT || os.cache_loaded);
            hostile[os.cache_loaded]++;
        }
        tsf_dataset_close(ds);
    }
    CHECK(hostile[0] > 0 && hostile[1] > 0);
    fprintf(stderr, "  hostile caches: %zu refused, %zu used\n", hostile[0], hostile[1]);
    /* another version */
    memcpy(b, good, n);
    b[8] = 2;
    set_crc(b, n);
    check_damaged(plain, c, b, n, TSF_ECORRUPT);
    /* not a regular file */
    unlink(c);
    CHECK(mkdir(c, 0755) == 0);
    tsf_dataset *ds = open_ds(g_pp, NFILES, c, 0, &os);
    CHECK_EQ_INT(os.cache_load.code, TSF_EIO);
    CHECK_EQ_INT(os.cache_save.code, TSF_EIO);
    CHECK_EQ_INT(os.cache_written, 0);
    if (ds) check_same(plain, ds);
    tsf_dataset_close(ds);
    rmdir(c);
    free(b);
    free(good);
    tsf_dataset_close(plain);
}

/* A cache that cannot be written: the open succeeds and says why. */
static void test_unwritable(void)
{
    if (!ready()) return;
    char c[256];
    path_of(c, sizeof c, "no-such-dir/x.cache");
    tsf_dataset_open_stats os;
    tsf_dataset *ds = open_ds(g_pp, NFILES, c, 0, &os);
    CHECK(ds != NULL);
    CHECK_EQ_INT(os.cache_load.code, TSF_OK); /* missing */
    CHECK_EQ_INT(os.cache_save.code, TSF_EIO);
    CHECK(strstr(os.cache_save.message, "no-such-dir") != NULL);
    CHECK_EQ_INT(os.cache_written, 0);
    tsf_dataset_close(ds);
}

static int src_open(void *ctx, const char *path, tsf_read_callbacks *cb)
{
    (void)ctx;
    (void)path;
    (void)cb;
    return -1;
}

/* Options: the first published size still opens (no cache); a cache with a source, an unknown mode and a
 * wrong stats size are refused. */
static void test_options(void)
{
    if (!ready()) return;
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.struct_size = offsetof(tsf_dataset_options, cache_path);
    tsf_dataset *ds = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_dataset_open(&ds, g_pp, NFILES, &o, &e), &e);
    tsf_dataset_open_stats os;
    os.struct_size = sizeof os - 1;
    CHECK(tsf_dataset_get_open_stats(ds, &os, NULL) == TSF_EINVAL);
    tsf_dataset_close(ds);
    tsf_dataset_options_init(&o);
    o.cache_path = "x.cache";
    o.open_source = src_open;
    CHECK(tsf_dataset_open(&ds, g_pp, NFILES, &o, &e) == TSF_EINVAL);
    CHECK(strstr(e.message, "open_source") != NULL);
    tsf_dataset_options_init(&o);
    o.cache_path = "x.cache";
    o.cache_mode = 7;
    CHECK(tsf_dataset_open(&ds, g_pp, NFILES, &o, &e) == TSF_EINVAL);
}

/* Waits until every file of the main set was last changed (ctime) more than 2.2 s ago: the pool keeps no
 * reader of a file changed within 2 s of its open. */
static void settle(const char *const *paths, size_t n)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double wait = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (stat(paths[i], &sb)) continue;
        double w = (double)sb.st_ctim.tv_sec + sb.st_ctim.tv_nsec / 1e9 + 2.2 - ((double)now.tv_sec + now.tv_nsec / 1e9);
        if (w > wait) wait = w;
    }
    if (wait > 0) usleep((useconds_t)(wait * 1e6));
}

static tsf_reader_pool_stats pool_stats(tsf_reader_pool *p)
{
    tsf_reader_pool_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    CHECK_OK(tsf_reader_pool_get_stats(p, &st, NULL), NULL);
    return st;
}

static void test_reader_pool(void)
{
    if (!ready()) return;
    char x[256];
    path_of(x, sizeof x, "pool.tsfile");
    CHECK(write_table(x, 100, 20, "02", 0) == 0 && age(x, 3600, 0) == 0);
    settle(g_pp, NFILES);
    const char *one[1] = {x};
    settle(one, 1);
    tsf_reader_pool_options po;
    tsf_reader_pool_options_init(&po);
    CHECK_EQ_INT(po.max_readers, 16);
    po.max_readers = NFILES;
    tsf_reader_pool *p = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_pool_create(&p, &po, &e), &e);
    if (!p) return;
    /* a dataset through the pool: the same dataset and rows, the queries served by the readers the open kept */
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.reader_pool = p;
    tsf_dataset *plain = open_ds(g_pp, NFILES, NULL, 0, NULL), *pooled = NULL;
    CHECK_OK(tsf_dataset_open(&pooled, g_pp, NFILES, &o, &e), &e);
    if (plain && pooled) {
        check_same(plain, pooled);
        CHECK(query_hash(plain) == query_hash(pooled));
        CHECK(query_hash(plain) == query_hash(pooled));
    }
    tsf_reader_pool_stats st = pool_stats(p);
    CHECK_EQ_INT(st.kept, NFILES);
    CHECK_EQ_INT(st.misses, NFILES);
    CHECK(st.hits >= 2 * NFILES);
    CHECK_EQ_INT(st.racy, 0);
    CHECK_EQ_INT(st.evicted, 0);
    /* a smaller bound closes the least recently used */
    tsf_reader_pool_set_max(p, 2);
    st = pool_stats(p);
    CHECK_EQ_INT(st.kept, 2);
    CHECK_EQ_INT(st.open, 2);
    CHECK_EQ_INT(st.evicted, NFILES - 2);
    CHECK_EQ_INT(st.max_readers, 2);
    if (pooled) CHECK(query_hash(plain) == query_hash(pooled)); /* 6 files through 2 kept readers */
    CHECK(pool_stats(p).kept <= 2);
    tsf_dataset_close(pooled);
    tsf_dataset_close(plain);
    tsf_reader_pool_clear(p);
    CHECK_EQ_INT(pool_stats(p).open, 0);
    /* kept and shared while unchanged */
    tsf_reader *r1 = NULL, *r2 = NULL, *r3 = NULL;
    CHECK_OK(tsf_reader_pool_acquire(p, x, NULL, &r1, &e), &e);
    CHECK_OK(tsf_reader_pool_acquire(p, x, NULL, &r2, &e), &e);
    CHECK(r1 && r1 == r2);
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.checked = 0; /* other options: another reader */
    CHECK_OK(tsf_reader_pool_acquire(p, x, &ro, &r3, &e), &e);
    CHECK(r3 && r3 != r1);
    tsf_reader_pool_release(p, r3);
    tsf_reader_pool_release(p, r2);
    /* rewritten in place with the same size and the old mtime put back (only ctime differs): a new reader, while
     * the holder of the old one still reads it */
    struct stat before, after;
    CHECK(stat(x, &before) == 0);
    size_t len = 0;
    uint8_t *bytes = tsf_test_read_file(x, &len);
    int fd = open(x, O_WRONLY);
    CHECK(bytes && fd >= 0 && len == (size_t)before.st_size && write(fd, bytes, len) == (ssize_t)len);
    if (fd >= 0) close(fd);
    free(bytes);
    struct timespec t[2] = {before.st_atim, before.st_mtim};
    CHECK(utimensat(AT_FDCWD, x, t, 0) == 0);
    CHECK(stat(x, &after) == 0 && after.st_ino == before.st_ino && after.st_size == before.st_size &&
          after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    uint64_t stale0 = pool_stats(p).stale;
    CHECK_OK(tsf_reader_pool_acquire(p, x, NULL, &r2, &e), &e);
    CHECK(r2 && r2 != r1);
    st = pool_stats(p);
    CHECK_EQ_INT(st.stale, stale0 + 1);
    CHECK_EQ_INT(st.racy, 1); /* changed just now: used, not kept */
    tsf_series_info si;
    if (r2) CHECK_OK(tsf_reader_series(r2, 0, 0, &si, &e), &e); /* the old reader still answers */
    tsf_reader_pool_release(p, r2);
    tsf_reader_pool_release(p, r1);
    CHECK_EQ_INT(pool_stats(p).open, 1); /* r3 */
    /* renamed over (the reader kept 2 s after the change): another reader again */
    char y[256];
    path_of(y, sizeof y, "pool2.tsfile");
    CHECK(write_table(y, 100, 20, "02", 1) == 0);
    settle(one, 1);
    CHECK_OK(tsf_reader_pool_acquire(p, x, NULL, &r1, &e), &e);
    tsf_reader_pool_release(p, r1);
    st = pool_stats(p);
    CHECK(rename(y, x) == 0 && utimensat(AT_FDCWD, x, t, 0) == 0);
    CHECK_OK(tsf_reader_pool_acquire(p, x, NULL, &r2, &e), &e);
    CHECK_EQ_INT(pool_stats(p).stale, st.stale + 1);
    CHECK_EQ_INT(pool_stats(p).misses, st.misses + 1);
    int64_t tmin = 0;
    if (r2) {
        tsf_series_info s0;
        CHECK_OK(tsf_reader_series(r2, 0, 0, &s0, &e), &e);
        tmin = s0.stats.start_time;
    }
    CHECK_EQ_INT(tmin, 101); /* the new file's times (variant 1) */
    tsf_reader_pool_release(p, r2);
    tsf_reader_pool_set_max(p, 0);
    CHECK_EQ_INT(pool_stats(p).open, 0);
    /* errors */
    CHECK(tsf_reader_pool_acquire(p, "/nonexistent/x.tsfile", NULL, &r1, &e) != TSF_OK && r1 == NULL);
    po.struct_size = 4;
    tsf_reader_pool *q = NULL;
    CHECK(tsf_reader_pool_create(&q, &po, &e) == TSF_EINVAL && !q);
    o.open_source = src_open;
    tsf_dataset *ds = NULL;
    CHECK(tsf_dataset_open(&ds, g_pp, NFILES, &o, &e) == TSF_EINVAL);
    tsf_reader_pool_release(p, NULL);
    tsf_reader_pool_free(p);
    tsf_reader_pool_free(NULL);
    unlink(x);
}

int main(void)
{
    TSF_RUN(test_warm_equals_uncached);
    TSF_RUN(test_invalidation);
    TSF_RUN(test_added_removed);
    TSF_RUN(test_racy);
    TSF_RUN(test_conflict);
    TSF_RUN(test_damaged);
    TSF_RUN(test_unwritable);
    TSF_RUN(test_options);
    TSF_RUN(test_reader_pool);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir());
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmp_dir());
    return tsf_test_finish();
}
