/*
 * test_reader.c - the reader on files our writer makes (gen_file.h; no shared data needed): full
 * scans of non-aligned (merged columns), aligned (all ten types, nulls) and table devices; time
 * ranges with chunk/page/TS_2DIFF-block pruning and its counters; the row cursor; the metadata API
 * (tables, devices, series, statistics, bloom filter); concurrent queries on one reader; hostile
 * input (every truncation, random byte flips, a loop in the index); and the corrupt/ golden files.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gen_file.h"
#include "test.h"

#define N_ROWS 6000

static gen_buf g_file;

static const gen_buf *file(void)
{
    if (!g_file.p) {
        char why[300];
        if (gen_file(&g_file, N_ROWS, 1000, 3000, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            exit(1);
        }
    }
    return &g_file;
}

static tsf_reader *open_mem(void)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, NULL, &e), &e);
    return r;
}

static int cell_eq(tsf_type t, const tsf_column_batch *c, size_t i, const tsf_value *v)
{
    switch (t) {
    case TSF_BOOLEAN: return ((const uint8_t *)c->values)[i] == (v->v.b != 0);
    case TSF_INT32:
    case TSF_DATE: return ((const int32_t *)c->values)[i] == v->v.i32;
    case TSF_INT64:
    case TSF_TIMESTAMP: return ((const int64_t *)c->values)[i] == v->v.i64;
    case TSF_FLOAT: return ((const float *)c->values)[i] == v->v.f;
    case TSF_DOUBLE: return ((const double *)c->values)[i] == v->v.d;
    default: {
        tsf_bytes b = ((const tsf_bytes *)c->values)[i];
        return b.len == v->v.bytes.len && !memcmp(b.data, v->v.bytes.data, b.len);
    }
    }
}

static int valid(const tsf_column_batch *c, size_t i)
{
    return (c->validity[i >> 3] >> (i & 7)) & 1;
}

/* Scans device `dev` ("root.sg1.d1" or "root.sg1.a1") over [lo, hi] and checks every cell. */
static void scan_device(tsf_reader *r, const char *dev, int64_t lo, int64_t hi, size_t batch, tsf_query_stats *qs)
{
    tsf_error e = {0};
    size_t di = 0;
    CHECK_OK(tsf_reader_find_device(r, dev, &di, &e), &e);
    int aligned = strstr(dev, "a1") != NULL;
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &di;
    o.ndevices = 1;
    o.time_min = lo;
    o.time_max = hi;
    o.batch_size = batch;
    tsf_query *q = NULL;
    CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
    if (!q) return;
    const tsf_batch *b;
    size_t next = 0, bad = 0, rows = 0; /* next generator row expected */
    char tmp[64];
    while (tsf_query_next(q, &b, &e) == TSF_OK && b) {
        CHECK(b->nrows > 0 && b->nrows <= batch);
        CHECK_EQ_INT(b->ncolumns, aligned ? GEN_A1_COLS : 3);
        for (size_t i = 0; i < b->nrows; i++, rows++) {
            int64_t t = b->times[i];
            /* the row this time belongs to */
            while (next < N_ROWS && (aligned ? gen_a1_time(next) : gen_d1_time(next)) < t) next++;
            if (next >= N_ROWS || (aligned ? gen_a1_time(next) : gen_d1_time(next)) != t || t < lo || t > hi) {
                bad++;
                continue;
            }
            for (size_t c = 0; c < b->ncolumns; c++) {
                tsf_value v;
                int present = gen_expect(aligned, c, next, &v, tmp, sizeof tmp);
                if (present != valid(&b->columns[c], i) || (present && !cell_eq(b->columns[c].type, &b->columns[c], i, &v)))
                    bad++;
            }
            next++;
        }
    }
    CHECK_EQ_INT(e.code, TSF_OK);
    CHECK_EQ_INT(bad, 0);
    /* every generator row inside the window was returned */
    size_t want = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        int64_t t = aligned ? gen_a1_time(i) : gen_d1_time(i);
        want += t >= lo && t <= hi;
    }
    CHECK_EQ_INT(rows, want);
    tsf_query_get_stats(q, qs);
    CHECK_EQ_INT(qs->rows, want);
    tsf_query_close(q);
}

static void test_full_scan(void)
{
    tsf_reader *r = open_mem();
    tsf_query_stats qs;
    scan_device(r, "root.sg1.d1", INT64_MIN, INT64_MAX, 4096, &qs);
    CHECK(qs.chunks_skipped == 0 && qs.pages_skipped == 0);
    scan_device(r, "root.sg1.a1", INT64_MIN, INT64_MAX, 4096, &qs);
    scan_device(r, "root.sg1.a1", INT64_MIN, INT64_MAX, 7, &qs);
    scan_device(r, "root.sg1.d1", INT64_MIN, INT64_MAX, 13, &qs);
    tsf_reader_close(r);
}

/* Time windows with checked reads off (TS_2DIFF blocks of a partly covered page are pruned) and on (such
 * a page is decoded whole to be compared with its statistics: no block is skipped, the same rows). */
static void time_ranges(int checked)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.checked = checked;
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, &ro, &e), &e);
    if (!r) return;
    tsf_query_stats full, qs;
    scan_device(r, "root.sg1.a1", INT64_MIN, INT64_MAX, 4096, &full);
    /* windows: empty, before, after, single point, block edges, partial chunks */
    const int64_t w[][2] = {{5, 4},        {INT64_MIN, 999}, {50000, INT64_MAX}, {1000 + 7 * 2500, 1000 + 7 * 2500},
                            {1000 + 7 * 128, 1000 + 7 * 129}, {20000, 21000}, {1000 + 7 * 2999, 1000 + 7 * 3001},
                            {0, 1000 + 7 * 1000}};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        scan_device(r, "root.sg1.a1", w[k][0], w[k][1], 4096, &qs);
        scan_device(r, "root.sg1.d1", w[k][0] / 2, w[k][1] / 2, 100, &qs);
    }
    /* a narrow window in the middle: pruning at every level */
    scan_device(r, "root.sg1.a1", 20000, 20100, 4096, &qs);
    CHECK(qs.chunks_skipped > 0);
    CHECK(qs.pages_skipped > 0);
    if (checked) {
        CHECK_EQ_INT(qs.blocks_skipped + qs.blocks_read, 0);
    } else {
        CHECK(qs.blocks_skipped > 0);
        CHECK(qs.blocks_read >= 1 && qs.blocks_read <= 2);
    }
    printf("  full scan: %llu bytes read, %llu decompressed; window: %llu read, %llu decompressed\n",
           (unsigned long long)full.bytes_read, (unsigned long long)full.bytes_decompressed,
           (unsigned long long)qs.bytes_read, (unsigned long long)qs.bytes_decompressed);
    CHECK(qs.bytes_read * 4 < full.bytes_read);
    CHECK(qs.bytes_decompressed * 4 < full.bytes_decompressed);
    CHECK(qs.pages_read < full.pages_read);
    tsf_query_stats qn;
    scan_device(r, "root.sg1.d1", 20000, 20100, 4096, &qn);
    CHECK(qn.chunks_skipped > 0 && qn.pages_skipped > 0 && (checked ? qn.blocks_skipped == 0 : qn.blocks_skipped > 0));
    tsf_reader_close(r);
}

static void test_time_ranges(void)
{
    time_ranges(0);
    time_ranges(1);
}

static void test_table_and_cursor(void)
{
    tsf_reader *r = open_mem();
    tsf_error e = {0};
    size_t ti = 0;
    CHECK_OK(tsf_reader_find_table(r, "T1", &ti, &e), &e);
    tsf_table_info tinfo;
    CHECK_OK(tsf_reader_table(r, ti, &tinfo, &e), &e);
    CHECK_EQ_INT(tinfo.ncolumns, 3);
    CHECK_EQ_INT(tinfo.ndevices, 2);
    CHECK(tinfo.ncolumns == 3 && !strcmp(tinfo.columns[0].name, "region") && tinfo.columns[0].category == TSF_COLUMN_TAG);
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.table = "t1";
    const char *cols[] = {"hum", "nosuch", "temp"};
    o.columns = cols;
    o.ncolumns = 3;
    o.batch_size = 333;
    tsf_cursor *c = NULL;
    CHECK_OK(tsf_cursor_open(r, &o, &c, &e), &e);
    CHECK(tsf_cursor_column_name(c, 0) == NULL); /* no current row yet */
    int has = 0;
    size_t rows[2] = {0, 0}, bad = 0;
    while (tsf_cursor_next(c, &has, &e) == TSF_OK && has) {
        /* the columns as requested, named, in the requested order */
        if (tsf_cursor_column_count(c) != 3 || tsf_cursor_column_name(c, 3)) bad++;
        for (size_t k = 0; k < 3; k++) {
            const char *nm = tsf_cursor_column_name(c, k);
            if (!nm || strcmp(nm, cols[k])) bad++;
        }
        tsf_device_info di;
        tsf_reader_device(r, tsf_cursor_device(c), &di, NULL);
        int south = strcmp(di.name, "t1.south") == 0;
        if (!south && strcmp(di.name, "t1.north")) bad++;
        int64_t t = tsf_cursor_time(c);
        size_t i = (size_t)((t - south) / 3);
        tsf_value v;
        tsf_type ty;
        CHECK_OK(tsf_cursor_value(c, 0, &ty, &v, &e), &e);
        if (ty != TSF_INT32 || v.is_null != (i % 4 == 3) || (!v.is_null && v.v.i32 != (int32_t)(i % 17))) bad++;
        CHECK_OK(tsf_cursor_value(c, 1, &ty, &v, &e), &e);
        if (!v.is_null) bad++;
        CHECK_OK(tsf_cursor_value(c, 2, &ty, &v, &e), &e);
        if (ty != TSF_FLOAT || v.is_null || v.v.f != (float)i + (float)south) bad++;
        /* typed accessors agree with tsf_cursor_value */
        int64_t x = -1;
        double d = -1;
        int has0 = tsf_cursor_int64(c, 0, &x);
        if (has0 != (i % 4 != 3) || (has0 && x != (int64_t)(i % 17))) bad++;
        if (tsf_cursor_int64(c, 1, &x) || tsf_cursor_double(c, 1, &d) || tsf_cursor_int64(c, 2, &x)) bad++;
        if (!tsf_cursor_double(c, 2, &d) || d != (double)((float)i + (float)south)) bad++;
        if (tsf_cursor_double(c, 3, &d)) bad++;
        rows[south]++;
    }
    CHECK_EQ_INT(e.code, TSF_OK);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(rows[0], N_ROWS);
    CHECK_EQ_INT(rows[1], N_ROWS);
    CHECK(tsf_cursor_column_name(c, 0) == NULL); /* past the end */
    tsf_cursor_close(c);
    /* columns NULL: every series of the device, named, in series order (tsf_reader_series) */
    o.columns = NULL;
    o.ncolumns = 0;
    CHECK_OK(tsf_cursor_open(r, &o, &c, &e), &e);
    size_t checked = 0;
    while (tsf_cursor_next(c, &has, &e) == TSF_OK && has && checked < 2 * N_ROWS) {
        tsf_device_info di;
        CHECK_OK(tsf_reader_device(r, tsf_cursor_device(c), &di, &e), &e);
        if (tsf_cursor_column_count(c) != di.nseries || di.nseries < 2) bad++;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            CHECK_OK(tsf_reader_series(r, tsf_cursor_device(c), j, &si, &e), &e);
            const char *nm = tsf_cursor_column_name(c, j);
            if (!nm || strcmp(nm, si.measurement)) bad++;
        }
        checked++;
    }
    CHECK_EQ_INT(checked, 2 * N_ROWS);
    CHECK_EQ_INT(bad, 0);
    tsf_cursor_close(c);
    tsf_reader_close(r);
}

static void test_metadata(void)
{
    tsf_reader *r = open_mem();
    tsf_error e = {0};
    CHECK_EQ_INT(tsf_reader_version(r), 4);
    CHECK_EQ_INT(tsf_reader_device_count(r), 4);
    size_t a1 = 0, d1 = 0, j = 0;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &a1, &e), &e);
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &d1, &e), &e);
    CHECK_EQ_INT(tsf_reader_find_device(r, "root.sg1.zz", &j, NULL), TSF_ENOTFOUND);
    tsf_device_info di;
    CHECK_OK(tsf_reader_device(r, a1, &di, &e), &e);
    CHECK(di.aligned && di.nseries == GEN_A1_COLS);
    CHECK_OK(tsf_reader_device(r, d1, &di, &e), &e);
    CHECK(!di.aligned && di.nseries == 3 && di.nsegments == 2);
    tsf_bytes seg;
    CHECK_OK(tsf_reader_device_segment(r, d1, 0, &seg, &e), &e);
    CHECK(seg.len == 8 && !memcmp(seg.data, "root.sg1", 8));
    for (size_t c = 0; c < GEN_A1_COLS; c++) {
        tsf_series_info si;
        CHECK_OK(tsf_reader_series_pages(r, a1, c, &si, &e), &e);
        CHECK(!strcmp(si.measurement, GEN_A1[c].name));
        CHECK_EQ_INT(si.type, GEN_A1[c].type);
        CHECK_EQ_INT(si.encoding, GEN_A1[c].encoding);
        CHECK_EQ_INT(si.compression, TSF_GZIP);
        CHECK_EQ_INT(si.nchunks, 2);
        CHECK_EQ_INT(si.npages, 6);
        uint64_t enc = 0, comp = 0; /* both chunks: the series' one encoding and GZIP */
        CHECK_OK(tsf_reader_series_codecs(r, a1, c, &enc, &comp, &e), &e);
        CHECK(enc == UINT64_C(1) << GEN_A1[c].encoding && comp == UINT64_C(1) << TSF_GZIP);
        size_t cnt = 0, first = N_ROWS, last = 0;
        char tmp[64];
        tsf_value v;
        for (size_t i = 0; i < N_ROWS; i++)
            if (gen_expect(1, c, i, &v, tmp, sizeof tmp)) {
                cnt++;
                if (first == N_ROWS) first = i;
                last = i;
            }
        CHECK_EQ_INT(si.stats.count, cnt);
        CHECK_EQ_INT(si.stats.start_time, gen_a1_time(first));
        CHECK_EQ_INT(si.stats.end_time, gen_a1_time(last));
        CHECK(si.stats.trusted);
    }
    uint64_t none = 0;
    CHECK_EQ_INT(tsf_reader_series_codecs(r, a1, GEN_A1_COLS, &none, NULL, NULL), TSF_EINVAL);
    tsf_series_info si;
    CHECK_OK(tsf_reader_find_series(r, d1, "s1", &j, &e), &e);
    CHECK_OK(tsf_reader_series(r, d1, j, &si, &e), &e);
    CHECK(si.stats.has_values && si.stats.min_i == -7 && si.stats.max_i == (int64_t)(N_ROWS - 1) * (N_ROWS - 1) - 7);
    CHECK(si.stats.first_i == -7);
    /* bloom filter: every series may be there; most absent names are rejected */
    CHECK(tsf_reader_may_contain(r, "root.sg1.d1", "s1"));
    CHECK(tsf_reader_may_contain(r, "root.sg1.a1", "txt"));
    CHECK(tsf_reader_may_contain(r, "t1.north", "temp"));
    int rejected = 0;
    for (int k = 0; k < 200; k++) {
        char m[32];
        snprintf(m, sizeof m, "absent%d", k);
        rejected += !tsf_reader_may_contain(r, "root.sg1.d1", m);
    }
    CHECK(rejected >= 170);
    tsf_reader_close(r);
}

static void *thread_scan(void *arg)
{
    tsf_reader *r = arg;
    tsf_query *q = NULL;
    const tsf_batch *b;
    size_t rows = 0;
    int64_t sum = 0;
    if (tsf_query_open(r, NULL, &q, NULL)) return (void *)(intptr_t)-1;
    while (tsf_query_next(q, &b, NULL) == TSF_OK && b) {
        rows += b->nrows;
        for (size_t i = 0; i < b->nrows; i++) sum += b->times[i];
    }
    tsf_query_close(q);
    return (void *)(intptr_t)(rows ^ (size_t)sum);
}

static void test_threads(void)
{
    /* a path-opened reader, index loaded lazily by whichever thread comes first */
    char path[] = "/tmp/tsf_reader_threads_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    fwrite(file()->p, 1, file()->n, f);
    fclose(f);
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open(&r, path, NULL, &e), &e);
    intptr_t want = (intptr_t)thread_scan(r);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_scan, r);
    for (int i = 0; i < 4; i++) {
        void *res;
        pthread_join(th[i], &res);
        CHECK_EQ_INT((intptr_t)res, want);
    }
    CHECK(want != -1);
    tsf_reader_close(r);
    remove(path);
}

/* Opens and fully scans bytes; returns the status (never crashes; errors carry a message). */
static tsf_status open_scan(const uint8_t *p, size_t n, char *msg, size_t cap)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_status st = tsf_reader_open_memory(&r, p, n, NULL, &e);
    if (!st) st = tsf_reader_load_index(r, &e);
    for (size_t d = 0; !st && d < tsf_reader_device_count(r); d++) {
        tsf_device_info di;
        tsf_reader_device(r, d, &di, NULL);
        for (size_t j = 0; !st && j < di.nseries; j++) {
            tsf_series_info si;
            st = tsf_reader_series_pages(r, d, j, &si, &e);
        }
    }
    tsf_query *q = NULL;
    if (!st) st = tsf_query_open(r, NULL, &q, &e);
    const tsf_batch *b;
    while (!st && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
    }
    tsf_query_close(q);
    tsf_reader_close(r);
    if (msg) snprintf(msg, cap, "%s", e.message);
    if (st && !e.message[0]) return (tsf_status)99; /* an error without a message */
    return st;
}

static void test_hostile(void)
{
    gen_buf small = {0};
    char why[300];
    CHECK(gen_file(&small, 400, 100, 200, why, sizeof why) == 0);
    CHECK_EQ_INT(open_scan(small.p, small.n, why, sizeof why), TSF_OK);
    uint8_t *copy = malloc(small.n);
    /* every truncation fails cleanly */
    size_t bad = 0;
    for (size_t cut = 0; cut < small.n; cut += 1 + cut / 64) {
        memcpy(copy, small.p, cut);
        tsf_status st = open_scan(copy, cut, why, sizeof why);
        if (st != TSF_ECORRUPT) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* random byte flips: OK or a clear error, never a crash (ASan/UBSan builds check the rest) */
    uint64_t seed = 42;
    size_t errors = 0;
    for (int k = 0; k < 3000; k++) {
        memcpy(copy, small.p, small.n);
        size_t at = (size_t)(tsf_test_rand(&seed) % small.n);
        copy[at] ^= (uint8_t)(1 + tsf_test_rand(&seed) % 255);
        tsf_status st = open_scan(copy, small.n, why, sizeof why);
        if (st == (tsf_status)99) bad++;
        errors += st != TSF_OK;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(errors > 100);
    free(copy);
    free(small.p);
}

static void test_corrupt_dir(void)
{
    const char *data = tsf_test_data_dir();
    static const struct {
        const char *name;
        const char *needle; /* part of the message */
    } cases[] = {
        {"cut_mid_chunk.tsfile", "incomplete"},
        {"tail_metadata_missing.tsfile", "incomplete"},
        {"flipped_byte_page_header.tsfile", "page"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1200], msg[300];
        snprintf(path, sizeof path, "%.1000s/tsfile-java/corrupt/%s", data, cases[i].name);
        size_t n = 0;
        uint8_t *p = tsf_test_read_file(path, &n);
        if (!p) {
            CHECK(p != NULL); /* tests/data is part of the checkout */
            return;
        }
        tsf_status st = open_scan(p, n, msg, sizeof msg);
        printf("  %s: %s %s\n", cases[i].name, tsf_status_name(st), msg);
        CHECK_EQ_INT(st, TSF_ECORRUPT);
        CHECK(strstr(msg, cases[i].needle) != NULL);
        CHECK(strstr(msg, "offset") != NULL || strstr(msg, " at ") != NULL);
        free(p);
    }
}

int main(void)
{
    TSF_RUN(test_full_scan);
    TSF_RUN(test_time_ranges);
    TSF_RUN(test_table_and_cursor);
    TSF_RUN(test_metadata);
    TSF_RUN(test_threads);
    TSF_RUN(test_hostile);
    TSF_RUN(test_corrupt_dir);
    free(g_file.p);
    return tsf_test_finish();
}
