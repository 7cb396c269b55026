/*
 * test_parallel.c - tsf_query_options.threads (parallel.c): every query gives the same rows as with one
 * thread - aligned, non-aligned (one column and merged columns), table devices, all ten types and nulls,
 * time ranges, small and default batches - from memory, a mapped path, a pread path and callbacks.
 * Aligned and single-column queries must also give the same batches. Damaged files give the same
 * status as one thread; closing a query early stops its workers. The one-thread results themselves are
 * checked against the generator by test_reader.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "gen_file.h"
#include "test.h"

#define N_ROWS 3000

static gen_buf g_file;

static const gen_buf *file(void)
{
    if (!g_file.p) {
        char why[300];
        /* pages of 64 rows, a chunk every 700 rows: many chunks and pages, so many tasks */
        if (gen_file(&g_file, N_ROWS, 64, 700, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            exit(1);
        }
    }
    return &g_file;
}

/* A growable byte string: the canonical form of a query's output. */
typedef struct dump {
    uint8_t *p;
    size_t n, cap;
} dump;

static void put(dump *d, const void *src, size_t n)
{
    if (d->n + n > d->cap) {
        size_t c = d->cap ? d->cap * 2 : 4096;
        while (c < d->n + n) c *= 2;
        d->p = realloc(d->p, c);
        d->cap = c;
    }
    memcpy(d->p + d->n, src, n);
    d->n += n;
}

/* Appends one batch: with `shape`, its row count first (so batch boundaries must match too). */
static void dump_batch(dump *d, const tsf_batch *b, int shape)
{
    if (shape) put(d, &b->nrows, sizeof b->nrows);
    for (size_t i = 0; i < b->nrows; i++) {
        put(d, &b->device, sizeof b->device);
        put(d, &b->times[i], 8);
        for (size_t k = 0; k < b->ncolumns; k++) {
            const tsf_column_batch *c = &b->columns[k];
            uint8_t v = (c->validity[i >> 3] >> (i & 7)) & 1;
            put(d, c->name, strlen(c->name) + 1);
            put(d, &c->type, sizeof c->type);
            put(d, &v, 1);
            if (!v) continue;
            size_t esz = tsf_type_size(c->type);
            if (c->type != TSF_TEXT && c->type != TSF_STRING && c->type != TSF_BLOB) {
                put(d, (const uint8_t *)c->values + i * esz, esz);
            } else {
                tsf_bytes x = ((const tsf_bytes *)c->values)[i];
                put(d, &x.len, sizeof x.len);
                put(d, x.data, x.len);
            }
        }
    }
}

/* Runs a query; returns its status, the dump and the stats. */
static tsf_status run(tsf_reader *r, const tsf_query_options *o, int shape, dump *d, tsf_query_stats *qs)
{
    tsf_error e = {0};
    tsf_query *q = NULL;
    tsf_status st = tsf_query_open(r, o, &q, &e);
    const tsf_batch *b;
    while (!st && !(st = tsf_query_next(q, &b, &e)) && b) dump_batch(d, b, shape);
    if (q && qs) tsf_query_get_stats(q, qs);
    tsf_query_close(q);
    return st;
}

typedef struct qcase {
    const char *device; /* NULL: every device */
    const char *table;
    const char *cols[3];
    size_t ncols;
    int64_t lo, hi;
    int shape; /* batches must match too */
} qcase;

static const qcase CASES[] = {
    {NULL, NULL, {NULL}, 0, INT64_MIN, INT64_MAX, 0},
    {"root.sg1.a1", NULL, {NULL}, 0, INT64_MIN, INT64_MAX, 1},
    {"root.sg1.a1", NULL, {NULL}, 0, 5000, 14000, 1},
    {"root.sg1.a1", NULL, {"txt", "i64", "nope"}, 3, 1007, 20000, 1},
    {"root.sg1.d1", NULL, {"s1", "s2", "s3"}, 3, INT64_MIN, INT64_MAX, 0},
    {"root.sg1.d1", NULL, {"s3", "s2"}, 2, 7001, 23456, 0},
    {"root.sg1.d1", NULL, {"s2"}, 1, 100, 29000, 1},
    {NULL, "t1", {NULL}, 0, INT64_MIN, INT64_MAX, 1},
    {NULL, "t1", {"hum"}, 1, 2000, 2100, 1},
    {"root.sg1.a1", NULL, {NULL}, 0, 999999, 9999999, 1}, /* empty */
};

static void options_for(tsf_reader *r, const qcase *c, size_t *dev, size_t batch, tsf_query_options *o)
{
    tsf_error e = {0};
    tsf_query_options_init(o);
    if (c->device) {
        CHECK_OK(tsf_reader_find_device(r, c->device, dev, &e), &e);
        o->devices = dev;
        o->ndevices = 1;
    }
    o->table = c->table;
    if (c->ncols) {
        o->columns = c->cols;
        o->ncolumns = c->ncols;
    }
    o->time_min = c->lo;
    o->time_max = c->hi;
    o->batch_size = batch;
}

/* Every case, batch size and thread count against one thread on reader r. */
static void compare_all(tsf_reader *r)
{
    static const size_t BATCH[] = {4096, 37};
    static const unsigned THREADS[] = {2, 3, 8};
    for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
        for (size_t bi = 0; bi < 2; bi++) {
            size_t dev;
            tsf_query_options o;
            options_for(r, &CASES[ci], &dev, BATCH[bi], &o);
            dump ref = {0};
            tsf_query_stats rs;
            CHECK_EQ_INT(run(r, &o, CASES[ci].shape, &ref, &rs), TSF_OK);
            CHECK(ci == sizeof CASES / sizeof CASES[0] - 1 || rs.rows > 0);
            for (size_t ti = 0; ti < sizeof THREADS / sizeof THREADS[0]; ti++) {
                o.threads = THREADS[ti];
                dump got = {0};
                tsf_query_stats gs;
                CHECK_EQ_INT(run(r, &o, CASES[ci].shape, &got, &gs), TSF_OK);
                if (got.n != ref.n || (ref.n && memcmp(got.p, ref.p, ref.n) != 0))
                    fprintf(stderr, "case %zu batch %zu threads %u: output differs (%zu vs %zu bytes)\n", ci,
                            BATCH[bi], THREADS[ti], got.n, ref.n);
                CHECK(got.n == ref.n && (!ref.n || memcmp(got.p, ref.p, ref.n) == 0));
                CHECK(gs.rows == rs.rows);
                free(got.p);
            }
            free(ref.p);
        }
    }
}

static void test_memory(void)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, NULL, &e), &e);
    if (r) compare_all(r);
    tsf_reader_close(r);
}

static int cb_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    const gen_buf *b = ud;
    if (off > b->n || len > b->n - off) return -1;
    memcpy(buf, b->p + off, len);
    return 0;
}

static void test_callbacks(void)
{
    tsf_read_callbacks cb = {sizeof cb, cb_pread, file()->n, (void *)file()};
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_callbacks(&r, &cb, NULL, &e), &e);
    if (r) compare_all(r);
    tsf_reader_close(r);
}

/* A path, mapped (default) and read with pread (use_pread: the chunk-window I/O of query.c). */
static void test_path(void)
{
    char path[] = "/tmp/tsf_parallel_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, file()->p, file()->n) == (ssize_t)file()->n);
    close(fd);
    for (int pr = 0; pr < 2; pr++) {
        tsf_reader_options ro;
        tsf_reader_options_init(&ro);
        ro.use_pread = pr;
        tsf_reader *r = NULL;
        tsf_error e = {0};
        CHECK_OK(tsf_reader_open(&r, path, &ro, &e), &e);
        if (r) compare_all(r);
        tsf_reader_close(r);
    }
    unlink(path);
}

/* Checks the typed accessors of the cursor's current row against tsf_cursor_value; returns mismatches. */
static size_t check_accessors(const tsf_cursor *c)
{
    size_t bad = 0, nc = tsf_cursor_column_count(c);
    for (size_t k = 0; k <= nc; k++) { /* k == nc: out of range, absent */
        tsf_value v = {0};
        tsf_type ty = TSF_VECTOR;
        if (k < nc && tsf_cursor_value(c, k, &ty, &v, NULL)) bad++;
        int present = k < nc && !v.is_null;
        int64_t wi = 0, xi = -7;
        double wd = 0, xd = -7;
        int ki = 0, kd = 0; /* fitting type for tsf_cursor_int64 / tsf_cursor_double */
        switch (ty) {
        case TSF_BOOLEAN:
            ki = 1, wi = v.v.b;
            break;
        case TSF_INT32:
        case TSF_DATE:
            ki = kd = 1, wi = v.v.i32, wd = v.v.i32;
            break;
        case TSF_INT64:
        case TSF_TIMESTAMP:
            ki = kd = 1, wi = v.v.i64, wd = (double)v.v.i64;
            break;
        case TSF_FLOAT:
            kd = 1, wd = v.v.f;
            break;
        case TSF_DOUBLE:
            kd = 1, wd = v.v.d;
            break;
        default:
            break;
        }
        int gi = tsf_cursor_int64(c, k, &xi), gd = tsf_cursor_double(c, k, &xd);
        if (gi != (present && ki) || (gi && xi != wi)) bad++;
        if (gd != (present && kd) || (gd && memcmp(&xd, &wd, sizeof xd))) bad++;
    }
    return bad;
}

/* Pages larger than a worker's batch (40,000 rows in one page): the first batches of such a page are
 * copied, its last one handed over without copying; the output must not change. */
static void test_big_pages(void)
{
    gen_buf b = {0};
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, &b};
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.page_max_points = 40000;
    wo.page_max_bytes = 1u << 26;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &wo, &e), &e);
    CHECK_OK(gen_register(w, &e), &e);
    CHECK_OK(gen_rows(w, 0, 40000, &e), &e);
    CHECK_OK(tsf_writer_close(w, &e), &e);
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, b.p, b.n, NULL, &e), &e);
    if (r) {
        size_t dev = 0;
        tsf_series_info si;
        CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &dev, &e), &e);
        CHECK_OK(tsf_reader_series_pages(r, dev, 0, &si, &e), &e);
        CHECK(si.npages == 1); /* the case this test is about */
        compare_all(r);
    }
    tsf_reader_close(r);
    free(b.p);
}

/* The row cursor runs over a parallel query just the same; its typed accessors agree with
 * tsf_cursor_value on every cell of every type (one thread and four). */
static void test_cursor(void)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, NULL, &e), &e);
    if (!r) return;
    uint64_t sum[2] = {0, 0};
    size_t rows[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.threads = t ? 4 : 1;
        tsf_cursor *c = NULL;
        CHECK_OK(tsf_cursor_open(r, &o, &c, &e), &e);
        int has = 0;
        size_t bad = 0;
        while (c && tsf_cursor_next(c, &has, &e) == TSF_OK && has) {
            rows[t]++;
            sum[t] = sum[t] * 31 + (uint64_t)tsf_cursor_time(c) + tsf_cursor_device(c);
            bad += check_accessors(c);
        }
        CHECK_EQ_INT(e.code, TSF_OK);
        CHECK_EQ_INT(bad, 0);
        tsf_cursor_close(c);
    }
    CHECK(rows[0] > 0);
    CHECK(rows[0] == rows[1]);
    CHECK(sum[0] == sum[1]);
    tsf_reader_close(r);
}

/* Closing after one batch stops the workers (ASan/TSan: no leak, no race, no hang). */
static void test_early_close(void)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, NULL, &e), &e);
    if (!r) return;
    for (unsigned t = 2; t <= 6; t += 2) {
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.threads = t;
        o.batch_size = 16;
        tsf_query *q = NULL;
        CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
        const tsf_batch *b = NULL;
        CHECK_OK(tsf_query_next(q, &b, &e), &e);
        CHECK(b != NULL && b->nrows > 0);
        tsf_query_close(q);
    }
    tsf_reader_close(r);
}

/* Allocation counter for the reader's allocator hooks. */
typedef struct acount {
    pthread_mutex_t mu;
    size_t allocs;
} acount;

static void *ac_alloc(void *ud, size_t n)
{
    acount *c = ud;
    pthread_mutex_lock(&c->mu);
    c->allocs++;
    pthread_mutex_unlock(&c->mu);
    return malloc(n);
}

static void *ac_realloc(void *ud, void *p, size_t old, size_t n)
{
    acount *c = ud;
    (void)old;
    pthread_mutex_lock(&c->mu);
    c->allocs++;
    pthread_mutex_unlock(&c->mu);
    return realloc(p, n);
}

static void ac_free(void *ud, void *p, size_t n)
{
    (void)ud, (void)n;
    free(p);
}

/* The reader keeps the workers and their buffers: a repeated threaded query allocates a few times (its own
 * state and one query per thread), not per task or per batch, and gives the same rows. Numeric columns only
 * (a DICTIONARY page allocates in its decoder, with one thread too). */
static void test_pool_reuse(void)
{
    acount ac = {PTHREAD_MUTEX_INITIALIZER, 0};
    tsf_allocator al = {ac_alloc, ac_realloc, ac_free, &ac};
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.allocator = &al;
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, &ro, &e), &e);
    if (!r) return;
    static const char *cols[] = {"b", "d", "date", "f", "i32", "i64", "ts"};
    size_t dev;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.a1", &dev, &e), &e);
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.columns = cols;
    o.ncolumns = 7;
    o.batch_size = 16; /* many batches; tasks of six 64-row pages (at least 4 tasks per thread) */
    dump ref = {0};
    CHECK_EQ_INT(run(r, &o, 1, &ref, NULL), TSF_OK);
    size_t nbatches = ref.n ? (N_ROWS + 15) / 16 : 0;
    o.threads = 2;
    size_t per[12];
    for (int i = 0; i < 12; i++) {
        dump got = {0};
        size_t before = ac.allocs;
        CHECK_EQ_INT(run(r, &o, 1, &got, NULL), TSF_OK);
        per[i] = ac.allocs - before;
        CHECK(got.n == ref.n && memcmp(got.p, ref.p, ref.n) == 0);
        free(got.p);
    }
    /* the first threaded query builds the pool and its buffers; later ones allocate the query, its plan and
     * one query per thread (~15 each: names, state; their column buffers are recycled by the reader), plus
     * recycled buffers growing to a larger role; a query opened per task (8 tasks here) is far more */
    size_t least = SIZE_MAX;
    for (int i = 2; i < 12; i++) least = per[i] < least ? per[i] : least;
    if (least > 100) fprintf(stderr, "threaded query: >= %zu allocations (%zu batches)\n", least, nbatches);
    CHECK(least <= 100 && least < nbatches);
    CHECK(per[0] > least);
    /* decode buffers go back to the thread that filled them, so each thread's own recycled set serves it:
     * a typical query allocates no more than a quiet one (given to the wrong thread, the caller's pages
     * need new buffers every query: medians of 370-750 here) */
    size_t sorted[10];
    memcpy(sorted, per + 2, sizeof sorted);
    for (int i = 1; i < 10; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            size_t t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    if (sorted[5] > 150) fprintf(stderr, "threaded query: median %zu allocations\n", sorted[5]);
    CHECK(sorted[5] <= 150);
    tsf_reader_close(r);
    free(ref.p);
}

/* Several threads run threaded queries on one reader at once (one holds the reader's pool, the others make
 * their own) and a query opened while another is open: the same rows as one thread. */
typedef struct conc_arg {
    tsf_reader *r;
    const dump *refs; /* per case, batch 4096 */
    unsigned threads;
    int bad;
} conc_arg;

static void *conc_main(void *arg)
{
    conc_arg *c = arg;
    for (int rep = 0; rep < 3; rep++)
        for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
            size_t dev;
            tsf_query_options o;
            options_for(c->r, &CASES[ci], &dev, 4096, &o);
            o.threads = c->threads + (unsigned)(ci & 1);
            dump got = {0};
            if (run(c->r, &o, CASES[ci].shape, &got, NULL) != TSF_OK || got.n != c->refs[ci].n ||
                (got.n && memcmp(got.p, c->refs[ci].p, got.n) != 0))
                c->bad++;
            free(got.p);
        }
    return NULL;
}

static void test_concurrent(void)
{
    enum { NCASE = sizeof CASES / sizeof CASES[0] };
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open_memory(&r, file()->p, file()->n, NULL, &e), &e);
    if (!r) return;
    dump refs[NCASE];
    memset(refs, 0, sizeof refs);
    for (size_t ci = 0; ci < NCASE; ci++) {
        size_t dev;
        tsf_query_options o;
        options_for(r, &CASES[ci], &dev, 4096, &o);
        CHECK_EQ_INT(run(r, &o, CASES[ci].shape, &refs[ci], NULL), TSF_OK);
    }
    /* nested on one thread: A holds the pool while B runs on its own */
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.threads = 2;
    tsf_query *qa = NULL;
    CHECK_OK(tsf_query_open(r, &o, &qa, &e), &e);
    dump da = {0}, db = {0};
    const tsf_batch *b = NULL;
    CHECK_OK(tsf_query_next(qa, &b, &e), &e);
    if (b) dump_batch(&da, b, 0);
    o.threads = 3;
    CHECK_EQ_INT(run(r, &o, 0, &db, NULL), TSF_OK);
    while (qa && !tsf_query_next(qa, &b, &e) && b) dump_batch(&da, b, 0);
    tsf_query_close(qa);
    CHECK(da.n == refs[0].n && memcmp(da.p, refs[0].p, da.n) == 0);
    CHECK(db.n == refs[0].n && memcmp(db.p, refs[0].p, db.n) == 0);
    free(da.p);
    free(db.p);
    /* four threads at once */
    pthread_t th[4];
    conc_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (conc_arg){r, refs, 2 + (unsigned)(i % 2), 0};
        CHECK(pthread_create(&th[i], NULL, conc_main, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(args[i].bad, 0);
    }
    for (size_t ci = 0; ci < NCASE; ci++) free(refs[ci].p);
    tsf_reader_close(r);
}

/* Damaged copies: the same status as one thread; where both succeed, the same rows. Unchecked reads
 * (checked = 0) succeed on some copies; checked ones refuse more of them. */
static void damaged(int checked)
{
    uint64_t rng = 12345;
    size_t n = file()->n, same = 0, failed = 0;
    uint8_t *buf = malloc(n);
    for (int it = 0; it < 300; it++) {
        memcpy(buf, file()->p, n);
        for (int k = 0; k < 3; k++) buf[tsf_test_rand(&rng) % n] ^= (uint8_t)(1 + tsf_test_rand(&rng) % 255);
        tsf_reader *r = NULL;
        tsf_error e = {0};
        if (tsf_reader_open_memory(&r, buf, n, NULL, &e) != TSF_OK) continue;
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.checked = checked;
        dump a = {0}, b = {0};
        tsf_status s1 = run(r, &o, 0, &a, NULL);
        o.threads = 3;
        tsf_status s2 = run(r, &o, 0, &b, NULL);
        CHECK_EQ_INT(s2, s1);
        if (!s1 && !s2) {
            CHECK(a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0));
            same++;
        } else {
            failed++;
        }
        free(a.p);
        free(b.p);
        tsf_reader_close(r);
    }
    printf("  checked %d: %zu damaged copies read alike, %zu failed alike\n", checked, same, failed);
    CHECK(failed > 0);
    if (!checked) CHECK(same > 0);
    free(buf);
}

static void test_damaged(void)
{
    damaged(0);
    damaged(1);
}

int main(void)
{
    TSF_RUN(test_memory);
    TSF_RUN(test_callbacks);
    TSF_RUN(test_path);
    TSF_RUN(test_cursor);
    TSF_RUN(test_big_pages);
    TSF_RUN(test_early_close);
    TSF_RUN(test_pool_reuse);
    TSF_RUN(test_concurrent);
    TSF_RUN(test_damaged);
    free(g_file.p);
    return tsf_test_finish();
}
