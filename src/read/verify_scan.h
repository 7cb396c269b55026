/*
 * verify_scan.h - the data-area scan shared by tsf_verify (verify.c) and tsf_recover (recover.c):
 * walks every chunk group, chunk and page of a file held in memory (tsfile-container-format.md
 * §4-§7), decompresses and decodes every page, checks page statistics against the decoded values
 * and aligned value pages against their time pages, and records per chunk whether it is wholly
 * present and sound, with statistics recomputed from its values (as the writer computes them).
 */
#ifndef TSF_READ_VERIFY_SCAN_H
#define TSF_READ_VERIFY_SCAN_H

#include "../format/stats.h"
#include "reader_internal.h"

typedef struct tsf_vs_chunk {
    size_t group;           /* index of its chunk group */
    uint64_t offset, end;   /* chunk header .. end of its pages */
    tsf_fmt_chunk_header h; /* measurement borrows from the file */
    tsf_chunk_kind kind;
    uint32_t npages;
    uint64_t points;  /* values decoded (aligned time chunk: rows) */
    uint64_t claimed; /* values the page headers claim (page statistics), else the decoded ones */
    int ok;           /* wholly present, every page decoded, consistent */
    int listed;       /* verify: referenced by the index */
    int restat;       /* recover: page value statistics disagree with the decoded values (kept, rewritten) */
    size_t pstats_off; /* recover: its pages' recomputed statistics in tsf_vs_scan.pstats (restat chunks) */
    uint64_t new_off; /* recover: offset in the output */
    size_t dev;       /* recover: device number */
    tsf_wstats stats; /* recomputed from the decoded values (page stats merged as the writer does) */
} tsf_vs_chunk;

typedef struct tsf_vs_group {
    uint64_t offset, hdr_end; /* the 0x00 marker .. end of the device id */
    tsf_fmt_device_id dev;    /* borrows from the file */
    size_t chunk0, nchunks;
} tsf_vs_group;

typedef void (*tsf_vs_problem_fn)(void *ctx, uint64_t offset, const char *msg, int warning);

typedef struct tsf_vs_scan {
    const tsf_allocator *a;
    const uint8_t *file;
    size_t len;
    int version;
    tsf_vs_problem_fn problem; /* may be NULL */
    int restat;            /* recover: keep SPRINTZ chunks whose value statistics alone disagree (verify.c restat_ok) */
    tsf_wbuf pstats;       /* restat: per page with statistics, u32 length + the recomputed serialization */
    void *ctx;
    uint64_t nproblems;
    uint64_t nwarnings;
    tsf_vs_group *groups;
    size_t ngroups, gcap;
    tsf_vs_chunk *chunks;
    size_t nchunks, ccap;
    uint64_t pages, points;
    uint64_t end;         /* where the data area ended: the separator, or where the walk stopped */
    int separator;        /* the walk reached a 0x02 separator */
    int stopped;          /* the walk stopped at a structure it could not pass */
    uint64_t torn_chunks; /* chunk headers whose pages run past the end of the bytes */
    /* scratch */
    tsf_codec *codec;
    tsf_compressor *comp;
    tsf_rd_buf plain, vals, times, ctimes, tpages;
    size_t nctimes, ntpages;
    long tchunk; /* the current group's time chunk (-1: none) */
    long cur;    /* the chunk whose pages are being walked (-1: none) */
    tsf_wstats pstat;
} tsf_vs_scan;

/* Opens a file read-only into memory (mmap). An empty file maps to (NULL, 0). */
tsf_status tsf_vs_map_file(const char *path, const uint8_t **data, size_t *len, tsf_error *err);
void tsf_vs_unmap_file(const uint8_t *data, size_t len);

tsf_status tsf_vs_scan_init(tsf_vs_scan *s, const uint8_t *file, size_t len, tsf_vs_problem_fn fn, void *ctx,
                        tsf_error *err);
/* Walks the data area of file[0..limit) (limit = len, or metaOffset + 1 when the tail is known).
 * Problems go to the callback; the return is TSF_OK unless memory ran out or the head is unusable. */
tsf_status tsf_vs_scan_run(tsf_vs_scan *s, size_t limit, tsf_error *err);
void tsf_vs_scan_free(tsf_vs_scan *s);
/* After a scan of a complete file: checks the index against the chunks (problems to the callback) and
 * marks chunks whose ChunkMetadata statistics disagree with their decoded values as not ok. */
tsf_status tsf_vs_check_index(tsf_vs_scan *s, tsf_reader *r, tsf_error *err);
/* Reports a problem (formatted) through the scan's callback and counts it. */
void tsf_vs_problem(tsf_vs_scan *s, uint64_t off, const char *fmt, ...) TSF_PRINTF(3, 4);
/* Reports an inconsistency the readers tolerate (the data reads the same) and counts it as a warning. */
void tsf_vs_warning(tsf_vs_scan *s, uint64_t off, const char *fmt, ...) TSF_PRINTF(3, 4);
/* What tsf_vs_stats_differ compares besides count, startTime and endTime (always compared). */
enum {
    VS_CMP_VALUES = 1,   /* min, max, first, last (bit for bit; NaN equals NaN) */
    VS_CMP_SUM = 2,      /* sums: integer sums exactly, double-accumulated ones within rounding (1e-9 relative),
                          * INT64/TIMESTAMP ones bit for bit where tsf_vs_i64_sum_exact holds */
    VS_CMP_SUM_EXACT = 4 /* with VS_CMP_SUM: double-accumulated sums bit for bit too (the caller's is exact) */
};
/* The writer sums INT64 values in double: with n values, each |v| <= 2^53 / n, no partial sum rounds, so the
 * stored sum is the integer sum and any other bit pattern is damage. */
static inline int tsf_vs_i64_sum_exact(int64_t min, int64_t max, uint64_t n)
{
    uint64_t amn = min < 0 ? 0 - (uint64_t)min : (uint64_t)min;
    uint64_t amx = max < 0 ? 0 - (uint64_t)max : (uint64_t)max;
    uint64_t big = amn > amx ? amn : amx;
    return n && big <= (UINT64_C(1) << 53) / n;
}
/* 0 if statistics f agree with the recomputed w (what: VS_CMP_* flags); else describes the first
 * difference in why[0..cap). */
int tsf_vs_stats_differ(const tsf_wstats *w, const tsf_fmt_stats *f, unsigned what, char *why, size_t cap);
/* verify's rule for a page or chunk of this type and encoding: values and sums, or (lossy FLOAT/DOUBLE
 * encodings, whose statistics describe the writer's input) count and times only. */
static inline unsigned tsf_vs_cmp_rule(tsf_type type, tsf_encoding enc)
{
    return tsf_rd_lossy(type, enc) ? 0u : (unsigned)(VS_CMP_VALUES | VS_CMP_SUM);
}

#endif
