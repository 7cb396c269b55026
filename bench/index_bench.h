/*
 * index_bench.h - what the files of the index benchmark share: index.c (the E5 measurements and the
 * entry), index_data.c (data-set generators), index_baselines.{c,h} (the structures compared against),
 * index_pages.c (the tsfile_pages run): result rows and their output, and the generators.
 */
#ifndef TSF_BENCH_INDEX_BENCH_H
#define TSF_BENCH_INDEX_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Operations per timed batch (so the clock does not dominate). */
#define IXB_BATCH 16

/* One result row: p50/p90 per operation (ns), throughput, bytes per key in the file and in DRAM. */
typedef struct ixb_row {
    const char *dataset, *structure, *op, *mode;
    int threads;
    double p50, p90, mops, bpk_file, bpk_dram;
} ixb_row;

extern int ixb_json; /* --json: rows as JSON objects */

/* Prints a row; extra (JSON members, or NULL) is appended to the JSON object. */
void ixb_emit_x(const ixb_row *r, const char *extra);
void ixb_emit(const ixb_row *r);
/* A result row whose p50/p90 come from per-operation latencies (ns) over n samples. */
ixb_row ixb_lat_row(const char *dataset, const char *structure, const char *op, const char *mode,
                    const double *lat, size_t n, double mops, double bpk_file, double bpk_dram);

/* Sorts k[0..n) and drops duplicates; returns the count left. */
size_t ixb_sort_unique(uint64_t *k, size_t n);
/*
 * Generates about n sorted unique keys of a data set; *late receives the late arrivals of ts_late
 * (inserted after the load), *nlate their count. Returns the count of keys.
 */
size_t ixb_gen_dataset(const char *name, uint64_t *k, size_t n, uint64_t *late, size_t *nlate);

/* Data set tsfile_pages: point queries on a TsFile with and without its page-time index. */
void ixb_run_pages(size_t npoints, size_t nops);

#endif
