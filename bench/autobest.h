/*
 * autobest.h - real series from CSV files, and the check of TSF_ENCODING_AUTO against the best
 * single lossless encoding of each chunk it wrote (shared by `tsf-bench compress` and
 * write_test_auto). Public API only, plus the data-area walker (format.h) to find the chunks.
 */
#ifndef TSF_BENCH_AUTOBEST_H
#define TSF_BENCH_AUTOBEST_H

#include <stddef.h>
#include <stdint.h>

#include "tsf.h"

/* One series: a value column of a CSV file "time,c1,...". */
typedef struct ab_series {
    char name[640];
    tsf_type type; /* TSF_DOUBLE or TSF_INT64 */
    size_t n;      /* rows */
    int64_t *times;
    void *vals;     /* double or int64_t */
    uint8_t *valid; /* LSB-first; empty CSV cells are null */
    size_t present; /* non-null points */
    double csv_bpp; /* CSV bytes / (rows x value columns) */
} ab_series;

/*
 * Loads every series of `dir`: the files its MANIFEST.md lists (with their types) when there is
 * one, else every *.csv and *.csv.gz below it (sorted by path; a column whose cells are all
 * integers is INT64, else DOUBLE). Appends to *out; 0 on success.
 */
int ab_load_dir(const char *dir, ab_series **out, size_t *nout);
void ab_free(ab_series *s, size_t n);

/* A growable output buffer for tsf_writer_open_callbacks. */
typedef struct ab_buf {
    uint8_t *p;
    size_t n, cap;
} ab_buf;
int ab_buf_write(void *ud, const void *data, size_t len);

/*
 * Writes rows [lo, hi) of s as the series root.ds.d.v (non-aligned) with encoding enc (or
 * TSF_ENCODING_AUTO) and compression comp, options `o` (float_precision etc.; NULL = defaults).
 * Returns the file bytes, 0 when the writer refused (or failed); *lossless = every present value
 * reads back bit for bit (any NaN as NaN); *picked / *nchunks: the first chunk's encoding and the
 * chunk count (may be NULL).
 */
size_t ab_write(const ab_series *s, size_t lo, size_t hi, tsf_encoding enc, tsf_compression comp,
                const tsf_writer_options *o, ab_buf *out, int *lossless, tsf_encoding *picked, size_t *nchunks);

/* The same without the read-back. */
size_t ab_write_only(const ab_series *s, size_t lo, size_t hi, tsf_encoding enc, tsf_compression comp,
                     const tsf_writer_options *o, ab_buf *out);

/* AUTO against the best fixed encoding, chunk by chunk. */
typedef struct ab_result {
    uint64_t auto_bytes; /* the AUTO chunks (headers + pages) */
    uint64_t best_bytes; /* per chunk the smallest lossless fixed encoding's chunk, summed */
    double worst;        /* largest AUTO chunk / best chunk - 1 */
    size_t nchunks;
    size_t worst_chunk;
    tsf_encoding worst_best; /* the best fixed encoding of the worst chunk */
    int lossless;            /* the AUTO file reads back bit for bit */
} ab_result;

/*
 * Writes s with AUTO (options o), then every chunk's rows once per encoding legal for the type
 * (FLOAT/DOUBLE TS_2DIFF and RLE at the smallest float_precision at which they keep the chunk's
 * values), each as a one-chunk file, and compares chunk bytes. 0 on success.
 */
int ab_check(const ab_series *s, tsf_compression comp, const tsf_writer_options *o, ab_result *r);

#endif
