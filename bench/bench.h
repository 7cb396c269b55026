/*
 * bench.h - shared pieces of tsf-bench: timing, percentiles, the seeded data generators of
 * ../shared/BENCHMARKS.md, and table/JSON output. Each experiment is one file with one entry
 * point registered in main.c.
 */
#ifndef TSF_BENCH_H
#define TSF_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tsf.h"

/* Experiments: argv[0] is the experiment name; return a process exit code. */
int bench_codec(int argc, char **argv);
int bench_write(int argc, char **argv); /* write.c: E4 */
/* write.c: writes the E4 file (GORILLA + LZ4 DOUBLE columns, walk or sensor data) as `tsf-bench write` does. */
int bench_write_case_file(const char *path, int ncols, long long rows, int sensor, int aligned, uint64_t *bytes);
int bench_read(int argc, char **argv); /* read.c: E2 and case A reads */
/* read.c: writes the E2 file (table "e2", 10 devices x 8 INT64 fields f0..f7, TS_2DIFF + SNAPPY) of rows rows. */
int bench_e2_build(const char *path, long long rows);
int bench_arrow(int argc, char **argv); /* arrow.c: the E2 file as an Arrow C stream vs the simd query */
int bench_index(int argc, char **argv);
int bench_compress(int argc, char **argv); /* compress.c: AUTO vs Java defaults on ../shared/datasets */
int bench_filter(int argc, char **argv); /* filter.c: E3 */
int bench_dataset(int argc, char **argv); /* dataset.c: grouped aggregation over a dataset */
int bench_dataset_open(int argc, char **argv); /* dataset_open.c: tsf_dataset_open with and without the cache */

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);

/* p-th percentile (0..100) of x[0..n) by nearest rank on a sorted copy. */
double bench_percentile(const double *x, size_t n, double p);

/* splitmix64, the generator every data definition uses (reproducible across languages). */
typedef struct bench_rng {
    uint64_t s;
} bench_rng;
uint64_t bench_rng_next(bench_rng *r);
/* Uniform integer in [lo, hi]. */
int64_t bench_rng_int(bench_rng *r, int64_t lo, int64_t hi);
/* Uniform double in [lo, hi). */
double bench_rng_double(bench_rng *r, double lo, double hi);

/* W0 random walks (seed 42): integer steps in [-100, 100]; FLOAT steps in [-5, 5]; DOUBLE [-0.5, 0.5]. */
void bench_w0_int32(int32_t *v, size_t n, uint64_t seed);
void bench_w0_int64(int64_t *v, size_t n, uint64_t seed);
void bench_w0_float(float *v, size_t n, uint64_t seed);
void bench_w0_double(double *v, size_t n, uint64_t seed);
/* Timestamps from 1,600,000,000,000 ms: step 1000 plus jitter uniform in [-jitter, jitter]. */
void bench_timestamps(int64_t *t, size_t n, int64_t jitter, uint64_t seed);

/* Parses "--name value" style options: returns the value after `name`, or NULL. */
const char *bench_opt(int argc, char **argv, const char *name);
int bench_flag(int argc, char **argv, const char *name);
/* Reads an integer option with a default; accepts suffixes k/K, m/M. */
long long bench_opt_ll(int argc, char **argv, const char *name, long long def);

/* Reads and discards a large buffer so earlier data leaves the caches. */
void bench_flush_caches(void);
/* Drops the file's pages from the page cache (written back first, then posix_fadvise DONTNEED). */
void bench_drop_file(const char *path);

/* A short description of the machine for the table header ("AMD EPYC ..., 2 cpus"). */
void bench_print_machine(FILE *out);

#endif
