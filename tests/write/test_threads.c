/*
 * The writer's worker pool (options.threads > 1, src/write/workers.c) and the borrowing bulk setter
 * (tsf_tablet_set_column_ref). With a small memory budget nearly every tablet ends in a flush,
 * whose chunk groups a worker writes while the next tablets are encoded: files written with 2 and
 * 4 threads must be byte-identical to one thread (non-aligned, aligned and table devices, nulls,
 * binary columns, registration and tsf_writer_flush between tablets), and the output must really
 * have come from a worker. A wide non-aligned device of fixed-width columns and the wide aligned
 * device leave the tail of each tablet to the workers after the write call returns (a pipe): the
 * test overwrites the borrowed arrays and frees the tablet as soon as the call returns, and the
 * bytes must still be one thread's. An output error on the worker reaches the caller as TSF_EIO; abort
 * keeps the same bytes as one thread. Borrowed columns give the bytes of copied ones and are never
 * written to (per-value setters and sort_tablets copy first).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"

enum { TAB = 3000, NTAB = 14, WIDE = 24, NWIDE = 22 };

/* membuf that records whether a write came from another thread, and can fail after `limit` bytes */
typedef struct sink {
    tsf_test_membuf m;
    pthread_t main;
    int foreign;   /* writes from a thread other than `main` */
    size_t limit;  /* 0 = no limit */
    int once;      /* fail one write only (later ones succeed: the writer itself must stop) */
    int slow;      /* writes from a worker take 1 ms: the output is still going on at the next calls */
} sink;

static int sink_write(void *ud, const void *data, size_t len)
{
    sink *k = ud;
    if (!pthread_equal(pthread_self(), k->main)) {
        k->foreign = 1;
        if (k->slow) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    if (k->limit && k->m.len + len > k->limit) {
        if (k->once) k->limit = 0;
        return 1;
    }
    return tsf_test_mem_write(&k->m, data, len);
}

static double dv(int k, size_t r)
{
    uint64_t st = (uint64_t)r * 31 + (uint64_t)k;
    return (double)(int64_t)(tsf_test_rand(&st) >> 44) / 64.0 + (double)r * 0.01;
}

typedef struct opts {
    unsigned threads;
    int ref;       /* tsf_tablet_set_column_ref for fixed-width columns */
    size_t budget;
    int ntab;      /* tablets to write (abort / error tests stop early) */
} opts;

static const char *const TREE = "root.sg.d1", *const ALIGNED = "root.sg.a1";

/* Writes the test file into k; returns the first failing status (0 = all fine, closed). */
static tsf_status write_file(sink *k, const opts *op, int do_abort, uint64_t *sizes)
{
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, sink_write, NULL, k};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.threads = op->threads;
    o.memory_budget = op->budget;
    o.page_max_points = 1000;
    tsf_writer *w = NULL;
    k->main = pthread_self();
    tsf_status s = tsf_writer_open_callbacks(&w, &cb, &o, &e);
    if (s) return s;
    tsf_column_schema tree[6] = {
        {"dbl", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
        {"i64", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD},
        {"flt", TSF_FLOAT, TSF_ENC_GORILLA, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD},
        {"txt", TSF_TEXT, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
        {"i32", TSF_INT32, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD},
        {"dbl2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
    };
    for (int i = 0; i < 6; i++) CHECK_OK(tsf_writer_register_series(w, TREE, &tree[i], &e), &e);
    tsf_column_schema al[4] = {
        {"a", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
        {"b", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
        {"c", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_ZSTD, TSF_COLUMN_FIELD},
        {"d", TSF_BOOLEAN, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD},
    };
    CHECK_OK(tsf_writer_register_aligned(w, ALIGNED, al, 4, &e), &e);
    /* a wide aligned device: its page batches (1000 rows x 24 columns) are appended by the pool */
    tsf_column_schema wide[WIDE];
    char wn[WIDE][8];
    for (int i = 0; i < WIDE; i++) {
        snprintf(wn[i], sizeof wn[i], "w%02d", i);
        wide[i] = (tsf_column_schema){wn[i], i % 3 ? TSF_DOUBLE : TSF_INT64, i % 3 ? TSF_ENC_GORILLA : TSF_ENC_TS_2DIFF,
                                      TSF_LZ4, TSF_COLUMN_FIELD};
    }
    CHECK_OK(tsf_writer_register_aligned(w, "root.sg.w", wide, WIDE, &e), &e);
    tsf_column_schema tb[3] = {
        {"tag", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_TAG},
        {"v", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
        {"n", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
    };
    CHECK_OK(tsf_writer_register_table(w, "t", tb, 3, &e), &e);
    /* a wide non-aligned device of fixed-width columns: the workers append its last columns after the
       write call has returned, from copies (the test overwrites the borrowed arrays at once) */
    tsf_column_schema nw[NWIDE];
    char nn[NWIDE][8];
    static const tsf_type nty[6] = {TSF_DOUBLE, TSF_INT64, TSF_FLOAT, TSF_INT32, TSF_BOOLEAN, TSF_TIMESTAMP};
    for (int i = 0; i < NWIDE; i++) {
        snprintf(nn[i], sizeof nn[i], "n%02d", i);
        tsf_type ty = nty[i % 6];
        nw[i] = (tsf_column_schema){nn[i], ty,
                                    ty == TSF_DOUBLE || ty == TSF_FLOAT ? TSF_ENC_GORILLA
                                    : ty == TSF_BOOLEAN                ? TSF_ENC_RLE
                                                                       : TSF_ENC_TS_2DIFF,
                                    i % 4 ? TSF_LZ4 : TSF_SNAPPY, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.n", &nw[i], &e), &e);
    }
    uint8_t *ncol[NWIDE];
    for (int i = 0; i < NWIDE; i++) ncol[i] = malloc(TAB * 8);
    int64_t *times = malloc(TAB * sizeof *times);
    double *d = malloc(TAB * sizeof *d), *d2 = malloc(TAB * sizeof *d2);
    int64_t *l = malloc(TAB * sizeof *l);
    float *f = malloc(TAB * sizeof *f);
    int32_t *i32 = malloc(TAB * sizeof *i32);
    uint8_t *bo = malloc(TAB);
    tsf_bytes *tx = malloc(TAB * sizeof *tx);
    char (*txt)[16] = malloc(TAB * sizeof *txt);
    uint8_t valid[TAB / 8 + 1];
    tsf_status (*set)(tsf_tablet *, size_t, const void *, const uint8_t *, size_t, tsf_error *) =
        op->ref ? tsf_tablet_set_column_ref : tsf_tablet_set_column;
    int late = 0; /* a series registered halfway */
    for (int ti = 0; ti < op->ntab && !s; ti++) {
        size_t r0 = (size_t)ti * TAB;
        for (size_t i = 0; i < TAB; i++) {
            size_t r = r0 + i;
            times[i] = 1000 + (int64_t)r * 10;
            d[i] = dv(0, r);
            d2[i] = dv(1, r);
            l[i] = (int64_t)(r * r % 1000003);
            f[i] = (float)dv(2, r);
            i32[i] = (int32_t)(r % 77) - 30;
            bo[i] = (uint8_t)(r % 3 == 0);
            snprintf(txt[i], sizeof txt[i], "v%zu", r % 500);
            tx[i] = (tsf_bytes){(const uint8_t *)txt[i], strlen(txt[i])};
        }
        memset(valid, 0, sizeof valid);
        for (size_t i = 0; i < TAB; i++)
            if ((i * 7 + (size_t)ti) % 5) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        /* non-aligned tree device (+ the late series) */
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w, TREE, NULL, 0, TAB, &t, &e), &e);
        CHECK_OK(tsf_tablet_set_times(t, times, TAB, &e), &e);
        CHECK_OK(set(t, 0, d, NULL, TAB, &e), &e);
        CHECK_OK(set(t, 1, l, NULL, TAB, &e), &e);
        CHECK_OK(set(t, 2, f, valid, TAB, &e), &e);
        CHECK_OK(set(t, 3, tx, ti % 2 ? valid : NULL, TAB, &e), &e);
        CHECK_OK(set(t, 4, i32, NULL, TAB, &e), &e);
        CHECK_OK(set(t, 5, d2, ti % 3 ? NULL : valid, TAB, &e), &e);
        for (int j = 0; late && j < 3; j++) CHECK_OK(set(t, 6 + (size_t)j, j == 1 ? (const void *)d : l, valid, TAB, &e), &e);
        s = tsf_writer_write_tablet(w, t, &e);
        tsf_tablet_free(t);
        /* aligned device */
        if (!s) {
            CHECK_OK(tsf_tablet_new(w, ALIGNED, NULL, 0, TAB, &t, &e), &e);
            CHECK_OK(tsf_tablet_set_times(t, times, TAB, &e), &e);
            CHECK_OK(set(t, 0, d2, NULL, TAB, &e), &e);
            CHECK_OK(set(t, 1, l, valid, TAB, &e), &e);
            CHECK_OK(set(t, 2, d, NULL, TAB, &e), &e);
            CHECK_OK(set(t, 3, bo, valid, TAB, &e), &e);
            s = tsf_writer_write_tablet(w, t, &e);
            tsf_tablet_free(t);
        }
        /* wide aligned device: nulls in every fifth column */
        if (!s) {
            CHECK_OK(tsf_tablet_new(w, "root.sg.w", NULL, 0, TAB, &t, &e), &e);
            CHECK_OK(tsf_tablet_set_times(t, times, TAB, &e), &e);
            for (size_t i = 0; i < WIDE; i++)
                CHECK_OK(set(t, i, i % 3 ? (const void *)(i % 2 ? d : d2) : (const void *)l, i % 5 == 4 ? valid : NULL,
                             TAB, &e),
                         &e);
            s = tsf_writer_write_tablet(w, t, &e);
            tsf_tablet_free(t);
        }
        /* table: two devices by tag, rows grouped */
        if (!s) {
            CHECK_OK(tsf_tablet_new(w, "t", NULL, 0, TAB, &t, &e), &e);
            tsf_bytes *tags = malloc(TAB * sizeof *tags);
            int64_t *tt = malloc(TAB * sizeof *tt);
            for (size_t i = 0; i < TAB; i++) {
                tags[i] = i < TAB / 2 ? (tsf_bytes){(const uint8_t *)"x", 1} : (tsf_bytes){(const uint8_t *)"y", 1};
                tt[i] = times[i % (TAB / 2)]; /* both halves: the same times */
            }
            CHECK_OK(tsf_tablet_set_times(t, tt, TAB, &e), &e);
            CHECK_OK(tsf_tablet_set_column(t, 0, tags, NULL, TAB, &e), &e);
            /* rows [0, TAB/2) and [TAB/2, TAB) of the table: each half strictly increasing */
            CHECK_OK(set(t, 1, d, valid, TAB, &e), &e);
            CHECK_OK(set(t, 2, l, NULL, TAB, &e), &e);
            s = tsf_writer_write_tablet(w, t, &e);
            tsf_tablet_free(t);
            free(tags);
            free(tt);
        }
        /* the wide non-aligned device: nulls in every third column, rows of every width */
        if (!s) {
            CHECK_OK(tsf_tablet_new(w, "root.sg.n", NULL, 0, TAB, &t, &e), &e);
            CHECK_OK(tsf_tablet_set_times(t, times, TAB, &e), &e);
            for (int i = 0; i < NWIDE; i++) {
                for (size_t r = 0; r < TAB; r++) {
                    size_t rr = (size_t)ti * TAB + r;
                    double v = dv(i, rr);
                    switch (nty[i % 6]) {
                    case TSF_DOUBLE: memcpy(ncol[i] + r * 8, &v, 8); break;
                    case TSF_FLOAT: ((float *)ncol[i])[r] = (float)v; break;
                    case TSF_INT32: ((int32_t *)ncol[i])[r] = (int32_t)(rr % 1000) * (i + 1); break;
                    case TSF_BOOLEAN: ncol[i][r] = (uint8_t)((rr / 7 + (size_t)i) % 3 == 0); break;
                    default: ((int64_t *)ncol[i])[r] = (int64_t)(rr * rr % 100003) + i; break;
                    }
                }
                CHECK_OK(set(t, (size_t)i, ncol[i], i % 3 == 2 ? valid : NULL, TAB, &e), &e);
            }
            s = tsf_writer_write_tablet(w, t, &e);
            tsf_tablet_free(t); /* its buffers go, and the caller's arrays change at once */
            for (int i = 0; i < NWIDE; i++) memset(ncol[i], 0xa5, TAB * 8);
            memset(valid, 0x5a, sizeof valid);
        }
        if (sizes) sizes[ti] = tsf_writer_bytes_written(w);
        if (!s && ti == NTAB / 2) {
            /* three series: the device's column array grows (moves) under a running output */
            tsf_column_schema ls[3] = {{"late", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD},
                                       {"late2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                       {"late3", TSF_INT64, TSF_ENC_RLE, TSF_SNAPPY, TSF_COLUMN_FIELD}};
            for (int j = 0; j < 3 && !s; j++) s = tsf_writer_register_series(w, TREE, &ls[j], &e);
            late = 1;
        }
        if (!s && ti == NTAB / 2 + 2) s = tsf_writer_flush(w, &e);
    }
    for (int i = 0; i < NWIDE; i++) free(ncol[i]);
    free(times);
    free(d);
    free(d2);
    free(l);
    free(f);
    free(i32);
    free(bo);
    free(tx);
    free(txt);
    if (do_abort || s) {
        if (!s) tsf_writer_abort(w);
        else {
            tsf_status c = tsf_writer_close(w, &e); /* still reports the failure, frees the writer */
            CHECK(c != TSF_OK);
        }
        return s;
    }
    return tsf_writer_close(w, &e);
}

static void same_bytes(size_t budget)
{
    opts one = {1, 0, budget, NTAB};
    sink ref = {0};
    uint64_t s1[NTAB] = {0}, sn[NTAB] = {0};
    CHECK_EQ_INT(write_file(&ref, &one, 0, s1), TSF_OK);
    CHECK(ref.m.len > 100000);
    CHECK(!ref.foreign);
    for (unsigned th = 2; th <= 4; th += 2) {
        for (int r = 0; r < 2; r++) {
            opts op = {th, r, budget, NTAB};
            sink k = {0};
            k.slow = r; /* registration, flush and close meet a running output (no bytes_written waits) */
            CHECK_EQ_INT(write_file(&k, &op, 0, r ? NULL : sn), TSF_OK);
            CHECK_EQ_INT(k.m.len, ref.m.len);
            if (k.m.len == ref.m.len) CHECK_MEM(k.m.p, ref.m.p, ref.m.len);
            CHECK(k.foreign); /* the chunk groups were written by a worker */
            CHECK_MEM(sn, s1, sizeof s1); /* bytes_written waits for the worker's output */
            free(k.m.p);
        }
    }
    /* one thread, borrowed columns: the same bytes */
    opts op = {1, 1, budget, NTAB};
    sink k = {0};
    CHECK_EQ_INT(write_file(&k, &op, 0, NULL), TSF_OK);
    CHECK(k.m.len == ref.m.len && !memcmp(k.m.p, ref.m.p, ref.m.len));
    free(k.m.p);
    /* the file is sound: every structure walked, every page decoded, every point counted */
    tsf_error e = {0};
    const char *path = "write_test_threads.tsfile";
    FILE *fp = fopen(path, "wb");
    CHECK(fp && fwrite(ref.m.p, 1, ref.m.len, fp) == ref.m.len);
    if (fp) fclose(fp);
    tsf_verify_report rep = {0};
    CHECK_OK(tsf_verify(path, NULL, NULL, &rep, &e), &e);
    CHECK_EQ_INT(rep.problems, 0);
    CHECK(rep.chunk_groups > (budget < (64 << 10) ? 3 * NTAB : NTAB)); /* many flushes */
    remove(path);
    free(ref.m.p);
}

/* 24 KiB: a flush after nearly every tablet (one device); 200 KiB: flushes of several devices */
static void test_same_bytes_with_threads(void)
{
    same_bytes(24 << 10);
    same_bytes(200 << 10);
}

/* A failing write callback on the worker: a later call reports TSF_EIO, nothing hangs. */
static void test_output_error(void)
{
    for (unsigned th = 1; th <= 4; th++) {
        opts op = {th, 0, 24 << 10, NTAB};
        sink k = {0};
        k.limit = 150000;
        k.once = th > 2; /* then close must fail because the writer stopped, not because writes do */
        tsf_status s = write_file(&k, &op, 0, NULL);
        CHECK_EQ_INT(s, TSF_EIO);
        CHECK(k.m.len <= 150000);
        free(k.m.p);
    }
}

/* Abort with a pending output: the bytes on the output equal one thread's. */
static void test_abort_same_bytes(void)
{
    opts one = {1, 0, 24 << 10, 5};
    sink a = {0};
    CHECK_EQ_INT(write_file(&a, &one, 1, NULL), TSF_OK);
    CHECK(a.m.len > 7);
    opts two = {2, 1, 24 << 10, 5};
    sink b = {0};
    CHECK_EQ_INT(write_file(&b, &two, 1, NULL), TSF_OK);
    CHECK(b.m.len == a.m.len && !memcmp(a.m.p, b.m.p, a.m.len));
    free(a.m.p);
    free(b.m.p);
}

/* Borrowed arrays are never written to and only read until the write. */
static void test_ref_semantics(void)
{
    enum { N = 4000 };
    tsf_error e = {0};
    double *a = malloc(N * sizeof *a), *keep = malloc(N * sizeof *keep);
    int64_t *times = malloc(N * sizeof *times);
    tsf_test_membuf m[2] = {{0}};
    for (int ref = 0; ref < 2; ref++) {
        tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &m[ref]};
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.sort_tablets = 1;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
        tsf_column_schema s[2] = {{"x", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                  {"y", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD}};
        CHECK_OK(tsf_writer_register_aligned(w, "root.r.d", s, 2, &e), &e);
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w, "root.r.d", NULL, 0, N, &t, &e), &e);
        for (int round = 0; round < 3; round++) {
            for (size_t i = 0; i < N; i++) {
                /* unsorted times (round 1): sort_tablets permutes the tablet, not the caller's array */
                size_t j = round == 1 ? N - 1 - i : i;
                times[i] = (int64_t)(round * N + j) * 5;
                a[i] = dv(round, i);
            }
            memcpy(keep, a, N * sizeof *a);
            CHECK_OK(tsf_tablet_set_times(t, times, N, &e), &e);
            tsf_status (*set)(tsf_tablet *, size_t, const void *, const uint8_t *, size_t, tsf_error *) =
                ref ? tsf_tablet_set_column_ref : tsf_tablet_set_column;
            CHECK_OK(set(t, 0, a, NULL, N, &e), &e);
            CHECK_OK(set(t, 1, a, NULL, N / 2, &e), &e); /* rows beyond N/2: null */
            if (round == 2) {
                CHECK_OK(tsf_tablet_set_double(t, 7, 0, -1.5, &e), &e); /* copies the borrowed column first */
                CHECK_OK(tsf_tablet_set_double(t, N - 1, 1, 2.5, &e), &e);
            }
            CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
            CHECK_MEM(a, keep, N * sizeof *a); /* never written to */
            for (size_t i = 0; i < N; i++) a[i] = -9; /* after the write: the file must not see this */
        }
        /* cells set beyond n stay: the borrowing setter copies then */
        CHECK_OK(tsf_tablet_set_times(t, times, N, &e), &e);
        for (size_t i = 0; i < N; i++) times[i] = (int64_t)(3 * N + i) * 5;
        CHECK_OK(tsf_tablet_set_times(t, times, N, &e), &e);
        CHECK_OK(tsf_tablet_set_double(t, N - 1, 0, 4.25, &e), &e);
        for (size_t i = 0; i < N; i++) a[i] = (double)i;
        CHECK_OK((ref ? tsf_tablet_set_column_ref : tsf_tablet_set_column)(t, 0, a, NULL, N / 2, &e), &e);
        for (size_t i = 0; i < N; i++) a[i] = -7; /* copied, so this is not seen */
        CHECK_OK(tsf_tablet_set_column(t, 1, times, NULL, 0, &e), &e);
        CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
        tsf_tablet_free(t);
        CHECK_OK(tsf_writer_close(w, &e), &e);
    }
    CHECK(m[0].len > 1000);
    CHECK(m[0].len == m[1].len && !memcmp(m[0].p, m[1].p, m[0].len));
    free(m[0].p);
    free(m[1].p);
    free(a);
    free(keep);
    free(times);
}

int main(void)
{
    TSF_RUN(test_same_bytes_with_threads);
    TSF_RUN(test_output_error);
    TSF_RUN(test_abort_same_bytes);
    TSF_RUN(test_ref_semantics);
    return tsf_test_finish();
}
