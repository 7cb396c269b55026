/*
 * filter.h - internal side of the value filters (tsf_filter_* in tsf.h): binding a filter to a device's
 * columns, batch evaluation with SQL three-valued logic, pruning by statistics, and the TS_2DIFF block
 * selection shared by query_scan.c and `tsf-bench filter`.
 */
#ifndef TSF_READ_FILTER_H
#define TSF_READ_FILTER_H

#include "../common/internal.h"
#include "../format/format.h"

struct tsf_reader;

/* The filter tree (immutable once built; filter_parse.c builds, parses and formats it). */
enum { FN_CMP = 0, FN_AND = 1, FN_OR = 2, FN_NOT = 3 };
/* What an FN_CMP leaf tests: `column op literal`, `column IS NULL`, `column IS NOT NULL`, or `time op i`
 * (the row's timestamp; column NULL, literal TSF_INT64). */
enum { FT_VALUE = 0, FT_NULL = 1, FT_NOT_NULL = 2, FT_TIME = 3 };

struct tsf_filter {
    int kind;
    int test;     /* FN_CMP: FT_* */
    tsf_cmp op;
    tsf_type lit; /* TSF_INT64, TSF_DOUBLE, TSF_BOOLEAN or TSF_STRING */
    char *column; /* NUL-terminated copy */
    int64_t i;
    double d;
    int b;
    uint8_t *s; /* string literal (slen bytes, NUL-terminated copy) */
    size_t slen;
    tsf_filter *l, *r;
};

/* Per-query state of a filter: bindings of its leaves for the current device, scratch bitmaps and the
 * compacted output buffers. Owned by one query. */
typedef struct tsf_rd_fstate tsf_rd_fstate;

/* Checks the filter against every device in devs (types, tag columns; TSF_EINVAL naming the column) and
 * prepares the state. batch_size bounds the rows of one evaluation. prune: 1 = statistics and tags may
 * skip chunks, pages and devices (tsf_query_options.filter_prune). */
tsf_status tsf_rd_filter_open(struct tsf_reader *r, const tsf_filter *f, const size_t *devs, size_t ndevs,
                          size_t batch_size, int prune, tsf_rd_fstate **out, tsf_error *err);
void tsf_rd_filter_close(tsf_rd_fstate *fs);

/* Distinct value-column names the filter reads (TAG columns of table devices excluded). */
size_t tsf_rd_filter_ncolumns(const tsf_rd_fstate *fs);
const char *tsf_rd_filter_column(const tsf_rd_fstate *fs, size_t i);

/* Binds the filter to device d, whose batch columns (visible and hidden) are named name(cols, 0..ncols).
 * Tag comparisons are decided here; *skip = 1 when no row of the device can pass (pruning on). */
tsf_status tsf_rd_filter_device(tsf_rd_fstate *fs, size_t d, const char *(*name)(const void *cols, size_t i),
                            const void *cols, size_t ncols, int *skip, tsf_error *err);

/* 0 when filter f cannot be TRUE for any row of a table device with columns cols[0, ncols) and device-id
 * segments segs[0, nsegs) (data NULL: a null segment): its TAG comparisons are decided on the tag values as
 * tsf_rd_filter_device decides them, every other comparison may be TRUE, FALSE or UNKNOWN. */
int tsf_rd_filter_tags_may_pass(const tsf_filter *f, const tsf_table_column *cols, size_t ncols,
                                const tsf_bytes *segs, size_t nsegs);

/* Narrows [*lo, *hi] to the times the filter's top-level AND chain of time terms allows (`time >= a and
 * time < b and ...`); other terms leave it. *lo > *hi when no time can pass. */
void tsf_rd_filter_time_bounds(const tsf_filter *f, int64_t *lo, int64_t *hi);

/* 1 if pruning is enabled and the filter reads batch column i (so its statistics can prune). */
int tsf_rd_filter_uses(const tsf_rd_fstate *fs, size_t col);

/* Pruning: what is known of each batch column over one unit (chunk or page). has = 0: nothing (any
 * value or null); all_null = 1: null in every row; else stats (tsf_fmt_stats of the unit), used only
 * when trusted. */
typedef struct tsf_rd_unit_col {
    tsf_fmt_stats stats;
    int has, trusted, all_null;
} tsf_rd_unit_col;
/* A zeroed array of ncols unit entries owned by fs (valid until the next call); NULL on ENOMEM. */
tsf_rd_unit_col *tsf_rd_filter_units(tsf_rd_fstate *fs, size_t ncols);
/* 0 only when the filter cannot be TRUE for any row of the unit (always 1 with pruning off). */
int tsf_rd_filter_may_match(const tsf_rd_fstate *fs, const tsf_rd_unit_col *cols, size_t ncols);

/* Evaluates the filter over batch b (all ncols columns) and compacts the rows where it is TRUE into
 * buffers of fs; b's times and first nvisible columns are replaced. *kept = rows left. */
tsf_status tsf_rd_filter_apply(tsf_rd_fstate *fs, tsf_batch *b, tsf_column_batch *cols, size_t ncols, size_t nvisible,
                           size_t *kept, tsf_error *err);

/* TS_2DIFF block selection for a time window [tmin, tmax] (blocks ascending). EXACT: block i holds
 * [first, bound); CONSERVATIVE: [first, bound_conservative]. *b0 = first block meeting the window (nb when
 * none), *b1 = the last; blocks b0..b1 are decoded. */
void tsf_rd_blocks_select(const tsf_ts2diff_block *b, size_t nb, int64_t tmin, int64_t tmax, int conservative,
                      size_t *b0, size_t *b1);

#endif
