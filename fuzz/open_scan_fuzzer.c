/*
 * open_scan_fuzzer.c - libFuzzer harness for the reader (tsfile-container-format.md §2-§9): any bytes
 * are opened as a TsFile from memory, the index is loaded, every series' chunk and page headers are
 * walked, and everything is scanned through a query, plus a time-range query. Seeds: small files our
 * writer makes (fuzz/gen_open_scan_corpus.c). Oracles (a failure traps):
 *  - only TSF_OK, TSF_ECORRUPT and TSF_ENOTSUP come back, and every error carries a message;
 *  - batches hold 1..batch_size rows and a range query returns only rows inside its window;
 *  - tsf_query_collect of device 0's fixed-width series (pages decoded straight into small arrays that
 *    grow, up to 16384 rows) gives the times tsf_query_next gives for the same query.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsf.h"
#include "fuzz_entry.h"

#define OS_CHECK(cond)                                                                                       \
    do {                                                                                                     \
        if (!(cond)) __builtin_trap();                                                                       \
    } while (0)

static void check_status(tsf_status st, const tsf_error *e)
{
    OS_CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ENOTSUP);
    OS_CHECK(st == TSF_OK || e->message[0] != '\0');
}

static void scan(tsf_reader *r, int64_t lo, int64_t hi, size_t batch)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.time_min = lo;
    o.time_max = hi;
    o.batch_size = batch;
    tsf_query *q = NULL;
    tsf_error e = {0};
    const tsf_batch *b;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    while (st == TSF_OK && (st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        OS_CHECK(b->nrows >= 1 && b->nrows <= batch);
        for (size_t i = 0; i < b->nrows; i++) OS_CHECK(b->times[i] >= lo && b->times[i] <= hi);
    }
    check_status(st, &e);
    tsf_query_close(q);
}

#define CO_MAX_ROWS 16384
#define CO_MAX_COLS 4

/* The times of the query through tsf_query_next (up to CO_MAX_ROWS; *n = SIZE_MAX past that). */
static tsf_status next_times(tsf_reader *r, const tsf_query_options *o, int64_t *t, size_t *n, tsf_error *e)
{
    tsf_query *q = NULL;
    const tsf_batch *b;
    tsf_status st = tsf_query_open(r, o, &q, e);
    *n = 0;
    while (st == TSF_OK && (st = tsf_query_next(q, &b, e)) == TSF_OK && b) {
        if (b->nrows > CO_MAX_ROWS - *n) {
            *n = SIZE_MAX;
            break;
        }
        memcpy(t + *n, b->times, b->nrows * sizeof *t);
        *n += b->nrows;
    }
    tsf_query_close(q);
    return st;
}

static void collect(tsf_reader *r, const tsf_device_info *di, int64_t lo, int64_t hi)
{
    const char *names[CO_MAX_COLS];
    tsf_collect_column col[CO_MAX_COLS];
    size_t nc = 0;
    for (size_t j = 0; j < di->nseries && nc < CO_MAX_COLS; j++) {
        tsf_series_info si;
        tsf_error pe = {0};
        if (tsf_reader_series(r, 0, j, &si, &pe) || si.type == TSF_TEXT || si.type == TSF_STRING ||
            si.type == TSF_BLOB || !tsf_type_size(si.type))
            continue;
        names[nc] = si.measurement;
        memset(&col[nc], 0, sizeof col[nc]);
        col[nc].type = si.type;
        col[nc].first_null = SIZE_MAX;
        nc++;
    }
    if (!nc) return;
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = (size_t[]){0};
    o.ndevices = 1;
    o.columns = names;
    o.ncolumns = nc;
    o.time_min = lo;
    o.time_max = hi;
    int64_t *ref = malloc(CO_MAX_ROWS * sizeof *ref), *t = NULL;
    size_t nref = 0;
    tsf_error e = {0};
    tsf_status rs = ref ? next_times(r, &o, ref, &nref, &e) : TSF_ENOMEM;
    tsf_query *q = NULL;
    tsf_status st = tsf_query_open(r, &o, &q, &e);
    tsf_collect c;
    tsf_collect_init(&c);
    c.ncolumns = nc;
    c.columns = col;
    size_t cap = 16;
    while (st == TSF_OK && cap <= CO_MAX_ROWS) {
        int64_t *nt = realloc(t, cap * sizeof *t);
        if (!nt) break;
        t = nt;
        int ok = 1;
        for (size_t i = 0; i < nc && ok; i++) {
            void *v = realloc(col[i].values, cap * tsf_type_size(col[i].type));
            uint8_t *p = v ? realloc(col[i].present, cap) : NULL;
            if (v) col[i].values = v;
            if (p) col[i].present = p;
            ok = v && p;
        }
        if (!ok) break;
        c.cap = cap;
        c.times = t;
        st = tsf_query_collect(q, &c, &e);
        OS_CHECK(c.nrows <= cap);
        if (st || c.done) break;
        cap *= 2;
    }
    check_status(st, &e);
    if (st == TSF_OK && c.done && rs == TSF_OK && nref != SIZE_MAX)
        OS_CHECK(c.nrows == nref && (!nref || memcmp(t, ref, nref * sizeof *t) == 0));
    tsf_query_close(q);
    for (size_t i = 0; i < nc; i++) {
        free(col[i].values);
        free(col[i].present);
    }
    free(t);
    free(ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_status st = tsf_reader_open_memory(&r, data, size, NULL, &e);
    check_status(st, &e);
    if (st) return 0;
    st = tsf_reader_load_index(r, &e);
    check_status(st, &e);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (size_t d = 0; st == TSF_OK && d < tsf_reader_device_count(r); d++) {
        tsf_device_info di;
        OS_CHECK(tsf_reader_device(r, d, &di, &e) == TSF_OK);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            tsf_error pe = {0};
            tsf_status ps = tsf_reader_series_pages(r, d, j, &si, &pe);
            check_status(ps, &pe);
            if (d == 0 && j == 0 && si.stats.count > 0 && si.stats.end_time > si.stats.start_time) {
                uint64_t span = (uint64_t)si.stats.end_time - (uint64_t)si.stats.start_time; /* may exceed INT64_MAX */
                lo = si.stats.start_time + (int64_t)(span / 3);
                hi = lo + (int64_t)(span / 4); /* below end_time */
            }
            (void)tsf_reader_may_contain(r, di.name, si.measurement);
        }
    }
    if (st == TSF_OK) {
        scan(r, INT64_MIN, INT64_MAX, 4096);
        scan(r, lo, hi, 17);
        tsf_device_info di;
        if (tsf_reader_device_count(r) && tsf_reader_device(r, 0, &di, &e) == TSF_OK) {
            collect(r, &di, INT64_MIN, INT64_MAX);
            collect(r, &di, lo, hi);
        }
    }
    tsf_reader_close(r);
    return 0;
}
