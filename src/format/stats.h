/*
 * stats.h - page, chunk and series statistics (spec tsfile-container-format.md §7): accumulated per page
 * in the same pass that buffers the values, merged page -> chunk -> series exactly as Java merges
 * them (so double sums round identically), and serialized for page headers, chunk metadata and
 * TimeseriesMetadata. Binary first/last/min/max are owned copies (tablet memory is borrowed).
 */
#ifndef TSF_FORMAT_STATS_H
#define TSF_FORMAT_STATS_H

#include "meta_index.h"

typedef struct tsf_sbin {
    uint8_t *p;
    size_t len, cap;
} tsf_sbin;

typedef struct tsf_wstats {
    tsf_type type; /* TSF_VECTOR for the aligned time column */
    uint64_t count;
    int64_t start, end;
    union {
        struct { int64_t min, max, first, last; double sum; } l;   /* INT64, TIMESTAMP */
        struct { int32_t min, max, first, last; int64_t sum; } i;  /* INT32, DATE, BOOLEAN(first/last/sum) */
        struct { double min, max, first, last, sum; } d;           /* DOUBLE */
        struct { float min, max, first, last; double sum; } f;     /* FLOAT */
    } v;
    tsf_sbin first, last, min, max; /* TEXT (first/last), STRING (all four) */
    int oom;
} tsf_wstats;

void tsf_wstats_init(tsf_wstats *s, tsf_type type);
void tsf_wstats_reset(tsf_wstats *s);
void tsf_wstats_free(tsf_wstats *s, const tsf_allocator *a);
/* Adds n > 0 values (type's C representation) whose first and last timestamps are t0, t1. */
void tsf_wstats_update(tsf_wstats *s, int64_t t0, int64_t t1, const void *values, size_t n,
                       const tsf_allocator *a);
/* tsf_wstats_update of four statistics of one numeric type (INT32/DATE/INT64/TIMESTAMP/FLOAT/DOUBLE)
 * over n values each, interleaved: bit-identical results, about 4x the speed of four calls (the
 * sums are latency-bound chains). -1 (nothing done) for other or mixed types. simd: DOUBLE through
 * its SSE2 twin (x86; 0 = the portable loop, TSF_PATH_SCALAR). */
int tsf_wstats_update4(tsf_wstats *const *s, int64_t t0, int64_t t1, const void *const *values, size_t n,
                       int simd);
/* Time-only update (aligned time column). */
void tsf_wstats_update_time(tsf_wstats *s, int64_t t0, int64_t t1, size_t n);
/* Java Statistics.mergeStatistics: `src` covers later times than `dst`. */
void tsf_wstats_merge(tsf_wstats *dst, const tsf_wstats *src, const tsf_allocator *a);
void tsf_wstats_serialize(const tsf_wstats *s, tsf_wbuf *b);
/* A ChunkMetadata entry's body (§9): the chunk's offset (big-endian i64), then its statistics. */
void tsf_fmt_put_chunk_meta(tsf_wbuf *b, uint64_t chunk_offset, const tsf_wstats *s);

#endif
