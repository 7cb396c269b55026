/*
 * index_pages.c - data set tsfile_pages of the index benchmark: point queries on a TsFile with and
 * without its page-time index (tsf_page_index_*): the index's build and lookups, then queries on a cold
 * (fresh reader per query) and a warm reader, of a non-aligned and an aligned device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"
#include "index_bench.h"
#include "tsf.h"
#include "tsf_index.h"

/* Writes npoints rows of root.b.d1.s (INT64, non-aligned) and root.b.a1 (aligned, 2 DOUBLE columns) at
 * 1 s steps with the writer's defaults (pages of 10000 points, chunks flushed by the memory budget). */
static int pages_file(const char *path, size_t npoints)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    tsf_column_schema s = {"s", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_LZ4, TSF_COLUMN_FIELD};
    tsf_column_schema a[2] = {{"x", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                              {"y", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
    size_t cap = 100000;
    int64_t *t = malloc(cap * 8), *iv = malloc(cap * 8);
    double *dv = malloc(cap * 8);
    tsf_tablet *td = NULL, *ta = NULL;
    tsf_status st = tsf_writer_open(&w, path, &o, &e);
    if (!st) st = tsf_writer_register_series(w, "root.b.d1", &s, &e);
    if (!st) st = tsf_writer_register_aligned(w, "root.b.a1", a, 2, &e);
    if (!st) st = tsf_tablet_new(w, "root.b.d1", NULL, 0, cap, &td, &e);
    if (!st) st = tsf_tablet_new(w, "root.b.a1", NULL, 0, cap, &ta, &e);
    bench_rng r = {5};
    double x = 0;
    for (size_t i0 = 0; i0 < npoints && !st; i0 += cap) {
        size_t m = npoints - i0 < cap ? npoints - i0 : cap;
        for (size_t i = 0; i < m; i++) {
            t[i] = INT64_C(1700000000000) + (int64_t)(i0 + i) * 1000;
            x += bench_rng_double(&r, -1, 1);
            iv[i] = (int64_t)(x * 100);
            dv[i] = x;
        }
        tsf_tablet_reset(td);
        tsf_tablet_reset(ta);
        st = tsf_tablet_set_times(td, t, m, &e);
        if (!st) st = tsf_tablet_set_column(td, 0, iv, NULL, m, &e);
        if (!st) st = tsf_writer_write_tablet(w, td, &e);
        if (!st) st = tsf_tablet_set_times(ta, t, m, &e);
        if (!st) st = tsf_tablet_set_column(ta, 0, dv, NULL, m, &e);
        if (!st) st = tsf_tablet_set_column(ta, 1, dv, NULL, m, &e);
        if (!st) st = tsf_writer_write_tablet(w, ta, &e);
    }
    tsf_tablet_free(td);
    tsf_tablet_free(ta);
    if (!st)
        st = tsf_writer_close(w, &e);
    else
        tsf_writer_abort(w);
    free(t);
    free(iv);
    free(dv);
    if (st) fprintf(stderr, "tsfile_pages: writer: %s\n", e.message);
    return st ? -1 : 0;
}

/* One point query (time_min = time_max = t) of one device; returns rows. */
static uint64_t point_query(tsf_reader *r, tsf_page_index *pix, size_t dev, int64_t t)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.time_min = o.time_max = t;
    o.page_index = pix;
    tsf_query *q = NULL;
    const tsf_batch *b;
    uint64_t rows = 0;
    if (tsf_query_open(r, &o, &q, NULL) == TSF_OK)
        while (tsf_query_next(q, &b, NULL) == TSF_OK && b) rows += b->nrows;
    tsf_query_close(q);
    return rows;
}

void ixb_run_pages(size_t npoints, size_t nops)
{
    char path[64], ipath[80];
    snprintf(path, sizeof path, "/tmp/tsf_bench_pages_%d.tsfile", (int)getpid());
    snprintf(ipath, sizeof ipath, "%s.tsfidx", path);
    if (pages_file(path, npoints)) return;
    tsf_reader *r = NULL;
    tsf_page_index *pix = NULL;
    tsf_error e = {0};
    uint64_t np = 0, nl = 0, t0 = bench_now_ns();
    if (tsf_reader_open(&r, path, NULL, &e) || tsf_page_index_build(r, ipath, &np, &e) ||
        tsf_page_index_open(r, ipath, &pix, &e)) {
        fprintf(stderr, "tsfile_pages: %s\n", e.message);
        goto out;
    }
    double secs = (double)(bench_now_ns() - t0) * 1e-9;
    tsf_page_index_info(pix, &np, &nl);
    FILE *f = fopen(ipath, "rb");
    double ibytes = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        ibytes = (double)ftell(f);
        fclose(f);
    }
    size_t d1, a1;
    tsf_reader_find_device(r, "root.b.d1", &d1, NULL);
    tsf_reader_find_device(r, "root.b.a1", &a1, NULL);
    if (ixb_json)
        printf("{\"bench\":\"index\",\"dataset\":\"tsfile_pages\",\"points\":%zu,\"pages\":%llu}\n", npoints,
               (unsigned long long)np);
    else
        printf("# tsfile_pages: %zu points per device, %llu pages indexed (build incl. reader open %.3f s)\n",
               npoints, (unsigned long long)np, secs);
    ixb_row br = {"tsfile_pages",  "page_index",    "bulk_load",      "-",         1,
                  secs * 1e9 / np, secs * 1e9 / np, np / secs * 1e-6, ibytes / np, 0};
    ixb_emit(&br);
    /* probes: random times inside the data */
    size_t nq = nops < 4000 ? nops : 4000, nb = nq / IXB_BATCH;
    int64_t *probe = malloc(nq * 8);
    bench_rng rg = {11};
    for (size_t i = 0; i < nq; i++)
        probe[i] =
            INT64_C(1700000000000) + (int64_t)(bench_rng_next(&rg) % npoints) * 1000 + 500 * (int64_t)(i & 1);
    double *lat = malloc((nb + 1) * sizeof *lat);
    uint64_t rows = 0;
    /* raw lookups */
    for (size_t b = 0; b < nb; b++) {
        uint64_t a = bench_now_ns();
        for (size_t i = 0; i < IXB_BATCH; i++) {
            tsf_page_loc loc;
            if (tsf_page_index_lookup(pix, d1, 0, probe[b * IXB_BATCH + i], &loc, NULL) == TSF_OK)
                rows += loc.page;
        }
        lat[b] = (double)(bench_now_ns() - a) / IXB_BATCH;
    }
    ixb_row lr = ixb_lat_row("tsfile_pages", "page_index", "get", "-", lat, nb, 0, ibytes / np, 0);
    lr.mops = 1e3 / lr.p50;
    ixb_emit(&lr);
    /* point queries: cold = a fresh reader (metadata loaded, no page directories cached) per query, warm =
     * one reader for all (page directories cached after the first query of a chunk) */
    for (int warm = 0; warm < 2; warm++)
        for (int with = 0; with < 2; with++)
            for (int dv = 0; dv < 2; dv++) {
                size_t dev = dv ? a1 : d1;
                size_t n = warm ? nq : nq / 4;
                double *ql = malloc((n + 1) * sizeof *ql);
                tsf_reader *qr = r;
                tsf_page_index *qp = with ? pix : NULL;
                for (size_t i = 0; i < n; i++) {
                    if (!warm) {
                        qr = NULL;
                        qp = NULL;
                        if (tsf_reader_open(&qr, path, NULL, NULL) || tsf_reader_load_index(qr, NULL)) break;
                        if (with && tsf_page_index_open(qr, ipath, &qp, NULL)) break;
                    }
                    uint64_t a = bench_now_ns();
                    rows += point_query(qr, qp, dev, probe[i]);
                    ql[i] = (double)(bench_now_ns() - a);
                    if (!warm) {
                        tsf_page_index_close(qp);
                        tsf_reader_close(qr);
                    }
                }
                ixb_row qrw = ixb_lat_row("tsfile_pages", with ? "query_index" : "query_metadata", "get",
                                          warm ? "warm" : "cold", ql, n, 0, ibytes / np, 0);
                qrw.mops = 1e3 / qrw.p50;
                qrw.dataset = dv ? "tsfile_pages_aligned" : "tsfile_pages";
                ixb_emit(&qrw);
                free(ql);
            }
    if (rows == 42) fprintf(stderr, " ");
    free(lat);
    free(probe);
out:
    tsf_page_index_close(pix);
    tsf_reader_close(r);
    unlink(path);
    unlink(ipath);
}
