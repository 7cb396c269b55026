/*
 * open_scan_fuzzer.c - libFuzzer harness for the reader (tsfile-container-format.md §2-§9): any bytes
 * are opened as a TsFile from memory, the index is loaded, every series' chunk and page headers are
 * walked, and everything is scanned through a query, plus a time-range query. Seeds: small files our
 * writer makes (fuzz/gen_open_scan_corpus.c). Oracles (a failure traps):
 *  - only TSF_OK, TSF_ECORRUPT and TSF_ENOTSUP come back, and every error carries a message;
 *  - batches hold 1..batch_size rows and a range query returns only rows inside its window.
 */
#include <stdint.h>
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
    }
    tsf_reader_close(r);
    return 0;
}
