/*
 * check.h - checked reads: a page that a query or an aggregate decodes anyway is compared with the
 * statistics its header promises (for a single-page chunk, its ChunkMetadata; tsfile-container-format.md
 * §7), with the rules tsf_verify applies (verify_scan.h: tsf_vs_stats_differ, tsf_vs_cmp_rule), so a damaged page
 * is TSF_ECORRUPT instead of wrong values. The summary of the decoded values is taken over the decoded
 * buffer while it is in cache (min/max/sum kernels per codec path: portable, AVX2, AVX-512); sums are
 * compared only where they are exact: integer sums (INT32/DATE/BOOLEAN), INT64/TIMESTAMP sums whose double
 * accumulation cannot round (n x max|v| <= 2^53); FLOAT/DOUBLE sums are not compared.
 */
#ifndef TSF_READ_CHECK_H
#define TSF_READ_CHECK_H

#include "../codec/codec.h"
#include "reader_internal.h"

/* Kernel level of a codec path: 0 portable, 1 AVX2, 2 AVX-512. */
int tsf_rd_check_level(tsf_codec_path path);

/* The reader's `checked` setting applied to an option value (-1: the reader's, 0 off, 1 on); -1 for a value
 * that is none of these. */
int tsf_rd_checked_of(const tsf_reader *r, int opt);

/* Times of one page: n decoded timestamps against count, startTime and endTime of s, and strictly
 * ascending. pre: what the decoder gathered (tsf_ts2diff_decode_i64_sum; NULL or what = 0: nothing, the
 * check folds t itself). 0 when they agree; else 1 and why[0..cap) describes the first difference. */
int tsf_rd_check_times(int level, const tsf_fmt_stats *s, const int64_t *t, size_t n, const tsf_dec_summary *pre,
                   char *why, size_t cap);

/* Values of one page: n >= 0 decoded values of `type` (C representation of tsf.h) whose rows' first and last
 * times are t0, t1, against s; `enc` is the page's encoding (lossy FLOAT/DOUBLE forms: count and times only);
 * pre as for tsf_rd_check_times (INT64/TIMESTAMP min, max, sum). 0 when they agree; else 1 and why. */
int tsf_rd_check_values(int level, tsf_type type, tsf_encoding enc, const tsf_fmt_stats *s, int64_t t0,
                    int64_t t1, const void *v, size_t n, const tsf_dec_summary *pre, char *why, size_t cap);

/* Statistics of a page header or ChunkMetadata that cannot describe any data: values present but
 * startTime > endTime. 0 when plausible; else 1 and why. */
int tsf_rd_check_range(const tsf_fmt_stats *s, char *why, size_t cap);

/* The statistics that promise what a decoded page holds: its header's, or for the one page of a single-page
 * chunk (header h) the chunk's ChunkMetadata statistics cs (may be NULL: unknown); NULL when neither. */
const tsf_fmt_stats *tsf_rd_page_stats(const tsf_fmt_chunk_header *h, const tsf_fmt_page_header *ph,
                                   const tsf_fmt_stats *cs);
/* Checked reads (checked != 0): TSF_ECORRUPT when statistics s describe no data (tsf_rd_check_range): those of
 * the page whose header ph is at page_off in the chunk at chunk_off, or, with ph NULL, the ChunkMetadata of the
 * chunk at chunk_off. TSF_OK otherwise. */
tsf_status tsf_rd_check_range_at(int checked, const tsf_fmt_stats *s, const tsf_fmt_page_header *ph,
                                 uint64_t page_off, uint64_t chunk_off, tsf_error *err);
/* TSF_ECORRUPT for the page whose header is at page_off (chunk at chunk_off) and whose statistics
 * (tsf_rd_page_stats) disagree with its values as `why` says. */
tsf_status tsf_rd_check_error(const tsf_fmt_page_header *ph, uint64_t page_off, uint64_t chunk_off,
                          const char *why, tsf_error *err);

#endif
