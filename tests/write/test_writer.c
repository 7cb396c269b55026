/*
 * Behaviour tests of the writer: empty files (spec §13a.1), <path>.tmp + rename and in-place
 * output, ordering errors that lose nothing already accepted, the sort option (stable, last
 * duplicate wins), chunk-group flushes under a memory budget (peak memory measured through the
 * allocator hooks), recovery of completed chunk groups from a killed writer's .tmp, the row API
 * producing the same bytes as tablets, round trips of all ten types (non-aligned, aligned with
 * nulls, table model) through the data-area walker and the codecs, the index tree with a small
 * fan-out (INTERNAL_MEASUREMENT and INTERNAL_DEVICE nodes) parsed back, the bloom filter against
 * the spec's worked example, and API misuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/format.h"
#include "format/meta_index.h"
#include "test.h"

typedef tsf_test_membuf membuf; /* tests/test.h */

static tsf_writer *open_mem(membuf *m, const tsf_writer_options *o)
{
    tsf_error err = {0};
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, m};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, o, &err), &err);
    return w;
}

static const tsf_column_schema S_I64 = {"s1", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};

/* Writes times[0..n) and values v[0..n) to series s1 of `dev` through one tablet. */
static tsf_status put(tsf_writer *w, const char *dev, const int64_t *times, const int64_t *v, size_t n,
                      tsf_error *err)
{
    tsf_tablet *t = NULL;
    tsf_status s = tsf_tablet_new(w, dev, NULL, 0, n, &t, err);
    if (s) return s;
    s = tsf_tablet_set_times(t, times, n, err);
    if (!s) s = tsf_tablet_set_column(t, 0, v, NULL, n, err);
    if (!s) s = tsf_writer_write_tablet(w, t, err);
    tsf_tablet_free(t);
    return s;
}

/* ---- a small reader of what we wrote (data area via the format walker) --------------------- */

typedef struct decoded {
    size_t groups, chunks, pages;
    int64_t times[4096];
    int64_t vals[4096];
    size_t n;
} decoded;

/* Decodes every INT64 non-aligned page of measurement `name`. */
static int decode_series(const uint8_t *f, size_t len, const char *name, decoded *d)
{
    memset(d, 0, sizeof *d);
    tsf_walker wk;
    tsf_walk_item it;
    tsf_error err = {0};
    tsf_codec *c = NULL;
    if (tsf_walk_init(&wk, f, len, &err) || tsf_codec_open(&c, NULL, &err)) return -1;
    int want = 0;
    while (!tsf_walk_next(&wk, &it, &err) && it.kind != TSF_WALK_END) {
        if (it.kind == TSF_WALK_CHUNK_GROUP) d->groups++;
        if (it.kind == TSF_WALK_CHUNK) {
            want = it.chunk.measurement.len == strlen(name) && !memcmp(it.chunk.measurement.data, name, strlen(name));
            d->chunks += want;
        }
        if (it.kind == TSF_WALK_PAGE && want) {
            d->pages++;
            uint8_t buf[65536];
            if (it.page.uncompressed_size > sizeof buf ||
                tsf_decompress(it.chunk.compression, it.body, it.body_len, buf, it.page.uncompressed_size, &err))
                return -1;
            tsf_fmt_nonaligned_page pg;
            size_t n = 0, used = 0;
            if (tsf_fmt_parse_nonaligned_page(buf, it.page.uncompressed_size, 0, &pg, &err) ||
                tsf_codec_count(TSF_INT64, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, &n, &err) || d->n + n > 4096 ||
                tsf_codec_decode(c, TSF_INT64, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, d->times + d->n, n, &used, &err) ||
                tsf_codec_decode(c, TSF_INT64, it.chunk.encoding, pg.values, pg.values_len, d->vals + d->n, n, &used, &err))
                return -1;
            d->n += n;
        }
    }
    tsf_codec_close(c);
    return 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* A single null anywhere in a tablet column (the validity scan checks 64, 8 and 1 rows at a time)
 * drops exactly that row. */
static void test_single_null_positions(void)
{
    static const size_t rows[] = {0, 5, 63, 64, 200, 255, 256, 290, 299};
    enum { N = 300 };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        membuf m = {0};
        tsf_error err = {0};
        tsf_writer *w = open_mem(&m, NULL);
        CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &S_I64, &err), &err);
        int64_t times[N], v[N];
        uint8_t valid[(N + 7) / 8];
        memset(valid, 0xff, sizeof valid);
        valid[rows[k] >> 3] &= (uint8_t) ~(1u << (rows[k] & 7));
        for (size_t i = 0; i < N; i++) times[i] = v[i] = (int64_t)i * 10;
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w, "root.sg.d", NULL, 0, N, &t, &err), &err);
        CHECK_OK(tsf_tablet_set_times(t, times, N, &err), &err);
        CHECK_OK(tsf_tablet_set_column(t, 0, v, valid, N, &err), &err);
        CHECK_OK(tsf_writer_write_tablet(w, t, &err), &err);
        tsf_tablet_free(t);
        CHECK_OK(tsf_writer_close(w, &err), &err);
        decoded *d = malloc(sizeof *d);
        CHECK_EQ_INT(decode_series(m.p, m.len, "s1", d), 0);
        CHECK_EQ_INT((int)d->n, N - 1);
        for (size_t i = 0, j = 0; i < N && j < d->n; i++) {
            if (i == rows[k]) continue;
            CHECK_EQ_INT((int)d->times[j], (int)i * 10);
            j++;
        }
        free(d);
        free(m.p);
    }
}

static void test_empty_files(void)
{
    /* spec §13a.1: an opened-and-closed writer is 81 bytes, with or without registered series */
    static const uint8_t expect_head[] = {'T', 's', 'F', 'i', 'l', 'e', 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 6};
    for (int reg = 0; reg < 2; reg++) {
        membuf m = {0};
        tsf_error err = {0};
        tsf_writer *w = open_mem(&m, NULL);
        if (reg) {
            tsf_column_schema c1 = {"c1", TSF_INT32, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
            CHECK_OK(tsf_writer_register_series(w, "root.sg1.d1", &S_I64, &err), &err);
            CHECK_OK(tsf_writer_register_aligned(w, "root.sg1.a1", &c1, 1, &err), &err);
        }
        CHECK_OK(tsf_writer_close(w, &err), &err);
        CHECK_EQ_INT(m.len, 81);
        if (m.len == 81) {
            CHECK_MEM(m.p, expect_head, sizeof expect_head);
            CHECK_EQ_INT(tsf_load_be32(m.p + 71), 63); /* metaSize */
            CHECK_MEM(m.p + 75, "TsFile", 6);
            char p[1024];
            snprintf(p, sizeof p, "%s/tsfile-java/%s", tsf_test_data_dir(),
                     reg ? "empty_registered_no_data.tsfile" : "empty_no_data.tsfile");
            size_t gl = 0;
            uint8_t *g = tsf_test_read_file(p, &gl);
            CHECK(g != NULL);
            if (g) {
                CHECK_EQ_INT(gl, 81);
                CHECK_MEM(m.p, g, 81);
            }
            free(g);
        }
        free(m.p);
    }
}

static void test_tmp_and_rename(void)
{
    char dir[] = "/tmp/tsf_writer_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], tmp[300];
    snprintf(path, sizeof path, "%s/a.tsfile", dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()); /* tsf_writer_temp_path */
    tsf_error err = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.fsync = 1;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, &o, &err), &err);
    CHECK_OK(tsf_writer_register_series(w, "root.sg1.d1", &S_I64, &err), &err);
    int64_t t[3] = {1, 2, 3}, v[3] = {7, 8, 9};
    CHECK_OK(put(w, "root.sg1.d1", t, v, 3, &err), &err);
    CHECK(tsf_writer_temp_path(w) && strcmp(tsf_writer_temp_path(w), tmp) == 0);
    CHECK(access(tmp, F_OK) == 0);
    CHECK(access(path, F_OK) != 0);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    CHECK(access(tmp, F_OK) != 0);
    size_t len;
    uint8_t *f = tsf_test_read_file(path, &len);
    CHECK(f && tsf_fmt_is_complete(f, len));
    decoded d;
    CHECK(f && decode_series(f, len, "s1", &d) == 0);
    CHECK_EQ_INT(d.n, 3);
    CHECK_EQ_INT(d.vals[2], 9);
    free(f);
    unlink(path);
    /* in place: no .tmp */
    o.in_place = 1;
    o.fsync = 0;
    CHECK_OK(tsf_writer_open(&w, path, &o, &err), &err);
    CHECK(tsf_writer_temp_path(w) == NULL);
    CHECK(access(path, F_OK) == 0);
    CHECK(access(tmp, F_OK) != 0);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    unlink(path);
    /* a missing folder is a clear I/O error */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.tsfile", dir);
    CHECK_EQ_INT(tsf_writer_open(&w, bad, NULL, &err), TSF_EIO);
    CHECK(strstr(err.message, "cannot create") != NULL);
    rmdir(dir);
}

static void test_order_errors_keep_data(void)
{
    membuf m = {0};
    tsf_error err = {0};
    tsf_writer *w = open_mem(&m, NULL);
    CHECK_OK(tsf_writer_register_series(w, "root.sg1.d1", &S_I64, &err), &err);
    int64_t t1[4] = {10, 20, 30, 40}, v1[4] = {1, 2, 3, 4};
    CHECK_OK(put(w, "root.sg1.d1", t1, v1, 4, &err), &err);
    /* overlaps the accepted data: rejected, naming device and row */
    int64_t t2[3] = {50, 40, 60}, v2[3] = {5, 6, 7};
    CHECK_EQ_INT(put(w, "root.sg1.d1", t2, v2, 3, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "root.sg1.d1") && strstr(err.message, "row 1"));
    int64_t t3[2] = {40, 45}, v3[2] = {5, 6};
    CHECK_EQ_INT(put(w, "root.sg1.d1", t3, v3, 2, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "row 0") && strstr(err.message, "last written time 40"));
    int64_t t4[2] = {41, 42}, v4[2] = {5, 6};
    CHECK_OK(put(w, "root.sg1.d1", t4, v4, 2, &err), &err);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    decoded d;
    CHECK(decode_series(m.p, m.len, "s1", &d) == 0);
    CHECK_EQ_INT(d.n, 6);
    const int64_t et[6] = {10, 20, 30, 40, 41, 42}, ev[6] = {1, 2, 3, 4, 5, 6};
    CHECK_MEM(d.times, et, sizeof et);
    CHECK_MEM(d.vals, ev, sizeof ev);
    free(m.p);

    /* aligned and table devices check the whole device */
    m = (membuf){0};
    w = open_mem(&m, NULL);
    tsf_column_schema cols[3] = {{"tag", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_TAG},
                                 {"v", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
                                 {"a", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_ATTRIBUTE}};
    CHECK_OK(tsf_writer_register_table(w, "T1", cols, 3, &err), &err);
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, "t1", NULL, 0, 4, &t, &err), &err);
    const char *tags[4] = {"x", "x", "y", "x"};
    int64_t tt[4] = {1, 2, 1, 2}, tv[4] = {1, 2, 3, 4};
    for (size_t r = 0; r < 4; r++) {
        CHECK_OK(tsf_tablet_set_time(t, r, tt[r], &err), &err);
        CHECK_OK(tsf_tablet_set_bytes(t, r, 0, tags[r], 1, &err), &err);
        CHECK_OK(tsf_tablet_set_int64(t, r, 1, tv[r], &err), &err);
    }
    /* device t1.x gets time 2 twice (rows 1 and 3) */
    CHECK_EQ_INT(tsf_writer_write_tablet(w, t, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "t1.x") && strstr(err.message, "row 3"));
    tsf_tablet_free(t);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    tsf_walker wk; /* nothing of the rejected tablet was written: no chunk group at all */
    tsf_walk_item it;
    CHECK_OK(tsf_walk_init(&wk, m.p, m.len, &err), &err);
    CHECK_OK(tsf_walk_next(&wk, &it, &err), &err);
    CHECK_EQ_INT(it.kind, TSF_WALK_END);
    CHECK_EQ_INT(it.offset, 7);
    free(m.p);
}

static void test_sort_option(void)
{
    membuf m = {0};
    tsf_error err = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.sort_tablets = 1;
    tsf_writer *w = open_mem(&m, &o);
    CHECK_OK(tsf_writer_register_series(w, "root.sg1.d1", &S_I64, &err), &err);
    int64_t t[6] = {3, 1, 2, 2, 5, 1}, v[6] = {30, 10, 20, 21, 50, 11};
    CHECK_OK(put(w, "root.sg1.d1", t, v, 6, &err), &err);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    decoded d;
    CHECK(decode_series(m.p, m.len, "s1", &d) == 0);
    CHECK_EQ_INT(d.n, 4);
    const int64_t et[4] = {1, 2, 3, 5}, ev[4] = {11, 21, 30, 50}; /* last duplicate wins */
    CHECK_MEM(d.times, et, sizeof et);
    CHECK_MEM(d.vals, ev, sizeof ev);
    free(m.p);
}

/* Allocator hooks that track the bytes live (peak) - the memory-budget test. */
typedef struct track {
    size_t live, peak;
} track;
static void *tr_alloc(void *ud, size_t n)
{
    track *t = ud;
    t->live += n;
    if (t->live > t->peak) t->peak = t->live;
    return malloc(n);
}
static void *tr_realloc(void *ud, void *p, size_t o, size_t n)
{
    track *t = ud;
    t->live += n - o;
    if (t->live > t->peak) t->peak = t->live;
    return realloc(p, n);
}
static void tr_free(void *ud, void *p, size_t n)
{
    track *t = ud;
    t->live -= n;
    free(p);
}

static int null_write(void *ud, const void *data, size_t len)
{
    (void)data;
    *(uint64_t *)ud += len;
    return 0;
}

static void test_memory_budget(void)
{
    /* 20 series x 400k points with a 2 MiB budget: memory stays bounded, data is all written */
    track tr = {0, 0};
    tsf_allocator a = {tr_alloc, tr_realloc, tr_free, &tr};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.memory_budget = 2u << 20;
    o.allocator = &a;
    uint64_t written = 0;
    tsf_write_callbacks cb = {sizeof cb, null_write, NULL, &written};
    tsf_error err = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &err), &err);
    enum { NS = 20, ROWS = 5000, BATCHES = 80 };
    const char *names[NS];
    char nb[NS][8];
    for (int i = 0; i < NS; i++) {
        snprintf(nb[i], sizeof nb[i], "m%02d", i);
        names[i] = nb[i];
        tsf_column_schema c = {nb[i], TSF_DOUBLE, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &c, &err), &err);
    }
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, "root.sg.d", names, NS, ROWS, &t, &err), &err);
    static int64_t times[ROWS];
    static double vals[ROWS];
    size_t peak_early = 0;
    for (int b = 0; b < BATCHES; b++) {
        for (int r = 0; r < ROWS; r++) {
            times[r] = (int64_t)b * ROWS + r;
            vals[r] = r * 0.5;
        }
        CHECK_OK(tsf_tablet_set_times(t, times, ROWS, &err), &err);
        for (int c = 0; c < NS; c++) CHECK_OK(tsf_tablet_set_column(t, (size_t)c, vals, NULL, ROWS, &err), &err);
        CHECK_OK(tsf_writer_write_tablet(w, t, &err), &err);
        if (b == 9) peak_early = tr.peak; /* several budget flushes have happened by now */
    }
    tsf_tablet_free(t);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    /* 8M points x 16 raw bytes = 128 MB went through; the writer holds at most the budget plus
       fixed buffers: one pending page per series (10000 x (8 + 8) bytes, capacity doubling), the
       tablet (ROWS x 8 x (NS + 1)), the output buffer (<= 2 MiB) and page scratch */
    size_t fixed = (size_t)NS * 10000 * 16 * 2 + (size_t)ROWS * 8 * (NS + 1) + (3u << 20);
    printf("  peak %zu bytes (after 10 tablets %zu; budget %zu + fixed %zu), wrote %llu bytes\n", tr.peak,
           peak_early, (size_t)o.memory_budget, fixed, (unsigned long long)written);
    CHECK(tr.peak < o.memory_budget + fixed);
    CHECK(tr.peak <= peak_early + peak_early / 10); /* bounded: no growth with the row count */
    CHECK(written > (uint64_t)NS * ROWS * BATCHES * 8);
    CHECK_EQ_INT(tr.live, 0); /* everything freed */
}

static void test_killed_writer_tmp(void)
{
    char dir[] = "/tmp/tsf_writer_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], tmp[300];
    snprintf(path, sizeof path, "%s/k.tsfile", dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    tsf_error err = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, NULL, &err), &err);
    CHECK_OK(tsf_writer_register_series(w, "root.sg1.d1", &S_I64, &err), &err);
    int64_t t[2] = {1, 2}, v[2] = {3, 4};
    CHECK_OK(put(w, "root.sg1.d1", t, v, 2, &err), &err);
    CHECK_OK(tsf_writer_flush(w, &err), &err);
    int64_t t2[2] = {5, 6};
    CHECK_OK(put(w, "root.sg1.d1", t2, v, 2, &err), &err);
    CHECK_OK(tsf_writer_flush(w, &err), &err);
    int64_t t3[2] = {7, 8};
    CHECK_OK(put(w, "root.sg1.d1", t3, v, 2, &err), &err); /* buffered only: lost */
    tsf_writer_abort(w);                                  /* as if killed */
    CHECK(access(path, F_OK) != 0);
    size_t len;
    uint8_t *f = tsf_test_read_file(tmp, &len);
    CHECK(f != NULL);
    if (f) {
        CHECK(!tsf_fmt_is_complete(f, len));
        tsf_walker wk;
        tsf_walk_item it;
        CHECK_OK(tsf_walk_init(&wk, f, len, &err), &err);
        size_t groups = 0, pages = 0;
        while (!tsf_walk_next(&wk, &it, &err) && it.kind != TSF_WALK_END) {
            groups += it.kind == TSF_WALK_CHUNK_GROUP;
            pages += it.kind == TSF_WALK_PAGE;
        }
        CHECK_EQ_INT(it.kind, TSF_WALK_END);
        CHECK(wk.truncated);
        CHECK_EQ_INT(groups, 2);
        CHECK_EQ_INT(pages, 2);
    }
    free(f);
    unlink(tmp);
    rmdir(dir);
}

static void test_row_api_same_bytes(void)
{
    tsf_column_schema cols[3] = {{"a", TSF_INT32, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"b", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"c", TSF_TEXT, TSF_ENC_PLAIN, TSF_SNAPPY, TSF_COLUMN_FIELD}};
    membuf m1 = {0}, m2 = {0};
    tsf_error err = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 64;
    for (int aligned = 0; aligned < 2; aligned++) {
        m1.len = m2.len = 0;
        tsf_writer *w1 = open_mem(&m1, &o), *w2 = open_mem(&m2, &o);
        for (int k = 0; k < 2; k++) {
            tsf_writer *w = k ? w2 : w1;
            if (aligned)
                CHECK_OK(tsf_writer_register_aligned(w, "root.x.dev", cols, 3, &err), &err);
            else
                for (int i = 0; i < 3; i++) CHECK_OK(tsf_writer_register_series(w, "root.x.dev", &cols[i], &err), &err);
        }
        enum { N = 300 };
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w1, "root.x.dev", NULL, 0, N, &t, &err), &err);
        char txt[32];
        for (int r = 0; r < N; r++) {
            int64_t time = 1000 + r * 7;
            snprintf(txt, sizeof txt, "v%d", r % 13);
            tsf_value vals[3];
            memset(vals, 0, sizeof vals);
            vals[0].v.i32 = r * 3;
            vals[1].v.d = r / 4.0;
            vals[2].v.bytes.data = (const uint8_t *)txt;
            vals[2].v.bytes.len = strlen(txt);
            vals[1].is_null = r % 5 == 2;
            CHECK_OK(tsf_tablet_set_time(t, (size_t)r, time, &err), &err);
            CHECK_OK(tsf_tablet_set_int32(t, (size_t)r, 0, vals[0].v.i32, &err), &err);
            if (!vals[1].is_null) CHECK_OK(tsf_tablet_set_double(t, (size_t)r, 1, vals[1].v.d, &err), &err);
            CHECK_OK(tsf_tablet_set_bytes(t, (size_t)r, 2, txt, strlen(txt), &err), &err);
            CHECK_OK(tsf_writer_write_row(w2, "root.x.dev", time, NULL, vals, 3, &err), &err);
        }
        CHECK_OK(tsf_writer_write_tablet(w1, t, &err), &err);
        tsf_tablet_free(t);
        CHECK_OK(tsf_writer_close(w1, &err), &err);
        CHECK_OK(tsf_writer_close(w2, &err), &err);
        CHECK_EQ_INT(m1.len, m2.len);
        if (m1.len == m2.len) CHECK_MEM(m1.p, m2.p, m1.len);
    }
    free(m1.p);
    free(m2.p);
}

/* ---- index tree parse-back ------------------------------------------------------------------ */

typedef struct ixcheck {
    const uint8_t *f;
    size_t len;
    uint64_t meta_offset, meta_pos;
    size_t tsm, nodes[4];
    int bad;
    char last_dev[256];
} ixcheck;

static size_t get_uv(const uint8_t *p, uint32_t *v)
{
    *v = 0;
    return tsf_get_uvarint32(p, 8, v);
}

static size_t get_varstr(const uint8_t *p, const uint8_t **s, size_t *len)
{
    uint32_t u;
    size_t n = get_uv(p, &u);
    int32_t l = tsf_unzigzag32(u);
    *s = p + n;
    *len = l < 0 ? 0 : (size_t)l;
    return n + *len;
}

static size_t skip_device(const uint8_t *p, char *text, size_t cap)
{
    uint32_t nseg;
    size_t o = get_uv(p, &nseg), tl = 0;
    for (uint32_t i = 0; i < nseg; i++) {
        const uint8_t *s;
        size_t l;
        o += get_varstr(p + o, &s, &l);
        if (i && tl + 1 < cap) text[tl++] = '.';
        if (tl + l < cap) {
            memcpy(text + tl, s, l);
            tl += l;
        }
    }
    text[tl < cap ? tl : cap - 1] = 0;
    return o;
}

/* Walks a node serialized at [start, end); checks child ranges tile it. */
static void walk_node(ixcheck *c, uint64_t start, uint64_t end, int depth)
{
    if (depth > 20 || start >= end || end > c->meta_pos + 1000000) {
        c->bad = 1;
        return;
    }
    const uint8_t *p = c->f + start;
    uint32_t n;
    size_t o = get_uv(p, &n);
    uint64_t off[1024];
    char keys[1024][64];
    if (n == 0 || n > 1024) {
        c->bad = 1;
        return;
    }
    /* a child range holds exactly one node, so its type is the range's last byte */
    size_t eo = o;
    uint8_t type = c->f[end - 1];
    if (type > 3) {
        c->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (type >= 2) {
            const uint8_t *s;
            size_t l;
            eo += get_varstr(p + eo, &s, &l);
            snprintf(keys[i], sizeof keys[i], "%.*s", (int)l, (const char *)s);
        } else {
            eo += skip_device(p + eo, keys[i], sizeof keys[i]);
        }
        off[i] = tsf_load_be64(p + eo);
        eo += 8;
        if (i && strcmp(keys[i - 1], keys[i]) >= 0 && type >= 2) c->bad = 1; /* sorted */
    }
    uint64_t nend = tsf_load_be64(p + eo);
    if (start + eo + 9 != end) c->bad = 1; /* the node fills its range exactly */
    c->nodes[type]++;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = off[i], b = i + 1 < n ? off[i + 1] : nend;
        if (a < c->meta_offset + 1 || b > c->meta_pos || a >= b) {
            c->bad = 1;
            return;
        }
        if (type == 3) { /* a run of TimeseriesMetadata */
            uint64_t q = a;
            int first = 1;
            while (q < b) {
                const uint8_t *t = c->f + q;
                size_t k = 1;
                const uint8_t *nm;
                size_t nl;
                k += get_varstr(t + k, &nm, &nl);
                if (first && (nl != strlen(keys[i]) || memcmp(nm, keys[i], nl))) c->bad = 1;
                first = 0;
                tsf_type dt = (tsf_type)t[k++];
                uint32_t listlen;
                k += get_uv(t + k, &listlen);
                tsf_fmt_stats st;
                size_t used = 0;
                tsf_error e;
                if (tsf_fmt_parse_stats(t + k, b - q - k, q + k, dt, &st, &used, &e)) {
                    c->bad = 1;
                    return;
                }
                q += k + used + listlen;
                c->tsm++;
            }
            if (q != b) c->bad = 1;
        } else {
            walk_node(c, a, b, depth + 1);
        }
    }
}

static void test_index_tree_small_degree(void)
{
    /* degree 4: 30 series per device -> LEAF_MEASUREMENT with 8 entries -> INTERNAL_MEASUREMENT;
       9 devices -> LEAF_DEVICE nodes under an INTERNAL_DEVICE root */
    membuf m = {0};
    tsf_error err = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.max_index_degree = 4;
    tsf_writer *w = open_mem(&m, &o);
    enum { ND = 9, NS = 30 };
    for (int d = 0; d < ND; d++) {
        char dev[32];
        snprintf(dev, sizeof dev, "root.sg.d%d", d);
        for (int s = NS - 1; s >= 0; s--) { /* registered in reverse: the index sorts */
            char nm[16];
            snprintf(nm, sizeof nm, "s%02d", s);
            tsf_column_schema c = {nm, TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
            CHECK_OK(tsf_writer_register_series(w, dev, &c, &err), &err);
        }
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w, dev, NULL, 0, 2, &t, &err), &err);
        int64_t tm[2] = {1, 2};
        CHECK_OK(tsf_tablet_set_times(t, tm, 2, &err), &err);
        for (int s = 0; s < NS; s++) CHECK_OK(tsf_tablet_set_column(t, (size_t)s, tm, NULL, 2, &err), &err);
        CHECK_OK(tsf_writer_write_tablet(w, t, &err), &err);
        tsf_tablet_free(t);
    }
    CHECK_OK(tsf_writer_close(w, &err), &err);
    /* TsFileMetadata: 1 table "root.sg" whose root is INTERNAL_DEVICE */
    uint32_t meta_size = tsf_load_be32(m.p + m.len - 10);
    uint64_t meta_pos = m.len - 10 - meta_size;
    const uint8_t *p = m.p + meta_pos;
    CHECK_EQ_INT(p[0], 1);
    CHECK_EQ_INT(p[1], 14); /* varstr "root.sg" */
    CHECK_MEM(p + 2, "root.sg", 7);
    /* parse the inline root node and walk everything below it */
    ixcheck c;
    memset(&c, 0, sizeof c);
    c.f = m.p;
    c.len = m.len;
    c.meta_pos = meta_pos;
    /* find metaOffset: the separator follows the data area; locate via the walker */
    tsf_walker wk;
    tsf_walk_item it;
    CHECK_OK(tsf_walk_init(&wk, m.p, m.len, &err), &err);
    while (!tsf_walk_next(&wk, &it, &err) && it.kind != TSF_WALK_END) {
    }
    c.meta_offset = it.offset;
    CHECK_EQ_INT(m.p[c.meta_offset], 0x02);
    /* the inline root: walk it as a node whose bytes start at p + 9 */
    uint32_t n;
    size_t k = 9 + get_uv(p + 9, &n);
    CHECK_EQ_INT(n, 3); /* 9 devices / 4 per leaf -> 3 LEAF_DEVICE nodes */
    char tmp[256];
    uint64_t offs[8];
    for (uint32_t i = 0; i < n && i < 8; i++) {
        k += skip_device(p + k, tmp, sizeof tmp);
        offs[i] = tsf_load_be64(p + k);
        k += 8;
    }
    uint64_t end = tsf_load_be64(p + k);
    CHECK_EQ_INT(p[k + 8], 0); /* INTERNAL_DEVICE */
    CHECK_EQ_INT(end, meta_pos);
    for (uint32_t i = 0; i < n && i < 8; i++) walk_node(&c, offs[i], i + 1 < n ? offs[i + 1] : end, 0);
    CHECK(!c.bad);
    CHECK_EQ_INT(c.tsm, ND * NS);
    CHECK_EQ_INT(c.nodes[1], 3);      /* LEAF_DEVICE */
    CHECK_EQ_INT(c.nodes[3], ND * 2); /* 30 series: 8 run entries -> 2 LEAF_MEASUREMENT per device */
    CHECK_EQ_INT(c.nodes[2], ND);     /* one INTERNAL_MEASUREMENT root per device */
    /* bloom filter: every series key is present */
    free(m.p);
}

static void test_bloom_spec_example(void)
{
    /* spec §13: d1.s1, d1.s2, d2.s1 -> 256 bits, k 5, these 32 bytes */
    static const uint8_t expect[32] = {0x04, 0, 0, 0, 0x04, 0, 0x20, 0, 0, 0, 0x80, 0, 0, 0x08, 0x01, 0,
                                       0x21, 0x40, 0, 0x08, 0x80, 0, 0, 0, 0, 0, 0x02, 0x04, 0, 0, 0x02, 0x20};
    tsf_bloom bf;
    CHECK_OK(tsf_bloom_init(&bf, 0.05, 3, NULL), NULL);
    CHECK_EQ_INT(bf.size, 256);
    CHECK_EQ_INT(bf.k, 5);
    const char *keys[3] = {"d1.s1", "d1.s2", "d2.s1"};
    for (int i = 0; i < 3; i++) tsf_bloom_add(&bf, (const uint8_t *)keys[i], strlen(keys[i]));
    CHECK_MEM(bf.bits, expect, 32);
    for (int i = 0; i < 3; i++) CHECK(tsf_bloom_may_contain(&bf, (const uint8_t *)keys[i], strlen(keys[i])));
    tsf_wbuf b;
    tsf_wbuf_init(&b, NULL);
    tsf_bloom_serialize(&bf, &b);
    CHECK_EQ_INT(b.len, 1 + 32 + 2 + 1);
    CHECK_EQ_INT(b.p[0], 32);
    CHECK_EQ_INT(b.p[33], 0x80);
    CHECK_EQ_INT(b.p[34], 0x02);
    CHECK_EQ_INT(b.p[35], 5);
    tsf_wbuf_free(&b);
    tsf_bloom_free(&bf);
    /* sizing: n = 53 -> 331 bits (spec §9) */
    CHECK_OK(tsf_bloom_init(&bf, 0.05, 53, NULL), NULL);
    CHECK_EQ_INT(bf.size, 331);
    tsf_bloom_free(&bf);
}

static void test_hashmap_order(void)
{
    /* spec §8.8: the Java writer stored table schemas "weather" before "power" */
    const char *keys[2] = {"power", "weather"};
    size_t order[2];
    tsf_java_hashmap_order(keys, 2, order);
    CHECK_EQ_INT(order[0], 1);
    CHECK_EQ_INT(order[1], 0);
}

static void test_api_errors(void)
{
    membuf m = {0};
    tsf_error err = {0};
    tsf_writer *w = open_mem(&m, NULL);
    tsf_column_schema bad = S_I64;
    CHECK_EQ_INT(tsf_writer_register_series(w, "sg1.d1", &S_I64, &err), TSF_EINVAL); /* no root */
    CHECK(strstr(err.message, "root") != NULL);
    CHECK_EQ_INT(tsf_writer_register_series(w, "root..d1", &S_I64, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "empty node") != NULL);
    bad.name = "a.b";
    CHECK_EQ_INT(tsf_writer_register_series(w, "root.sg.d1", &bad, &err), TSF_EINVAL);
    bad = S_I64;
    bad.type = TSF_TEXT;
    bad.encoding = TSF_ENC_GORILLA;
    CHECK_EQ_INT(tsf_writer_register_series(w, "root.sg.d1", &bad, &err), TSF_EINVAL);
    CHECK(strstr(err.message, "not legal") != NULL);
    bad = S_I64;
    bad.compression = TSF_LZO;
    CHECK_EQ_INT(tsf_writer_register_series(w, "root.sg.d1", &bad, &err), TSF_EINVAL);
    CHECK_OK(tsf_writer_register_series(w, "root.sg.d1", &S_I64, &err), &err);
    CHECK_EQ_INT(tsf_writer_register_series(w, "root.sg.d1", &S_I64, &err), TSF_EINVAL); /* duplicate */
    CHECK(strstr(err.message, "already registered") != NULL);
    CHECK_EQ_INT(tsf_writer_register_aligned(w, "root.sg.d1", &S_I64, 1, &err), TSF_EINVAL);
    tsf_tablet *t = NULL;
    CHECK_EQ_INT(tsf_tablet_new(w, "root.sg.nope", NULL, 0, 4, &t, &err), TSF_ENOTFOUND);
    CHECK(strstr(err.message, "root.sg.nope") != NULL);
    const char *cols[1] = {"zz"};
    CHECK_EQ_INT(tsf_tablet_new(w, "root.sg.d1", cols, 1, 4, &t, &err), TSF_ENOTFOUND);
    CHECK(strstr(err.message, "zz") != NULL);
    CHECK_OK(tsf_tablet_new(w, "root.sg.d1", NULL, 0, 4, &t, &err), &err);
    CHECK_EQ_INT(tsf_tablet_set_double(t, 0, 0, 1.5, &err), TSF_EINVAL); /* type mismatch */
    CHECK(strstr(err.message, "INT64") != NULL);
    CHECK_EQ_INT(tsf_tablet_set_int64(t, 4, 0, 1, &err), TSF_ERANGE);
    CHECK_EQ_INT(tsf_tablet_set_int64(t, 0, 1, 1, &err), TSF_EINVAL);
    int64_t tm[5] = {0};
    CHECK_EQ_INT(tsf_tablet_set_times(t, tm, 5, &err), TSF_ERANGE);
    tsf_tablet_free(t);
    tsf_column_schema tcols[2] = {{"tag", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_TAG},
                                  {"v", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD}};
    CHECK_EQ_INT(tsf_writer_register_table(w, "t", tcols, 2, &err), TSF_EINVAL); /* TAG must be STRING */
    tcols[0].type = TSF_STRING;
    CHECK_EQ_INT(tsf_writer_register_table(w, "root.t", tcols, 2, &err), TSF_EINVAL);
    CHECK_OK(tsf_writer_register_table(w, "t", tcols, 2, &err), &err);
    CHECK_EQ_INT(tsf_writer_register_table(w, "T", tcols, 2, &err), TSF_EINVAL); /* case-insensitive */
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.struct_size = 3;
    tsf_writer *w2 = NULL;
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &m};
    CHECK_EQ_INT(tsf_writer_open_callbacks(&w2, &cb, &o, &err), TSF_EINVAL);
    CHECK_OK(tsf_writer_close(w, &err), &err);
    CHECK_EQ_INT(tsf_writer_close(NULL, &err), TSF_EINVAL);
    free(m.p);
}

int main(void)
{
    TSF_RUN(test_empty_files);
    TSF_RUN(test_tmp_and_rename);
    TSF_RUN(test_order_errors_keep_data);
    TSF_RUN(test_sort_option);
    TSF_RUN(test_memory_budget);
    TSF_RUN(test_killed_writer_tmp);
    TSF_RUN(test_row_api_same_bytes);
    TSF_RUN(test_index_tree_small_degree);
    TSF_RUN(test_bloom_spec_example);
    TSF_RUN(test_hashmap_order);
    TSF_RUN(test_api_errors);
    TSF_RUN(test_single_null_positions);
    return tsf_test_finish();
}
