/*
 * query_scan.c - one column of a query, chunk by chunk and page by page (tsfile-container-format.md
 * §6-§8.5): which chunks and pages can hold rows of the query, fetching and decompressing those, and
 * decoding their times and values.
 *
 * Pruning, with counters in tsf_query_stats: chunk statistics (ChunkMetadata) and page statistics
 * (multi-page chunks) against the time range, so a page body is fetched and decompressed only when
 * the page can match; with a value filter, the same statistics against the filter (filter.c decides).
 * Inside a partly covered page with a TS_2DIFF time stream, only the blocks whose exact range
 * [first, next block's first) meets the window are decoded (tsf_td_window_select: headers are read up
 * to the first block after the window; the page's count comes from its statistics). A chunk that
 * starts before the window is entered at the first page that can match (query_pdir.c).
 *
 * Aligned devices (§6.4): the time chunk drives; the value chunk of each column in the same chunk
 * group is the first one after the time chunk and before the next time chunk; its pages pair with
 * the time pages by position. Checked reads (check.h) compare each decoded page with its statistics.
 */
#include <stdio.h>
#include <string.h>

#include "../codec/ts2diff_walk.h"
#include "check.h"
#include "query_internal.h"

/* Largest decompressed page accepted: max(16 MiB, 4096 x the compressed size), at most 1 GiB. */
#define RD_PAGE_MIN_CAP (1u << 24)
#define RD_PAGE_MAX (1u << 30)

/* ---- chunk and page access ---------------------------------------------------------------- */

static int out_of_range(const tsf_query *q, int64_t start, int64_t end)
{
    return end < q->tmin || start > q->tmax || start > end;
}

static int inside(const tsf_query *q, int64_t start, int64_t end)
{
    return start >= q->tmin && end <= q->tmax;
}

tsf_status tsf_rd_query_next_meta(tsf_query *q, qcol *c, tsf_error *err)
{
    tsf_error e;
    tsf_status st = tsf_mip_next_chunk_meta(&c->s->tsm, &c->cm_pos, &c->cm_off, &c->cm_stats, &e);
    c->cm_have = st == TSF_OK;
    if (st == TSF_OK || st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

static tsf_status open_chunk(tsf_query *q, qcol *c, uint64_t off, tsf_chunk_kind want, tsf_type type, tsf_error *err)
{
    c->hdr.wlen = c->body.wlen = 0;
    tsf_status st = tsf_rd_read_chunk_header(q->r, off, &c->hdr, &c->ch, &c->dpos, &c->dend, &q->st.bytes_read, err);
    if (st) return st;
    tsf_chunk_kind k = tsf_fmt_chunk_kind(c->ch.marker);
    if (k != want)
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: marker 0x%02x is not the %s chunk the index lists",
                       (unsigned long long)off, c->ch.marker,
                       want == TSF_CHUNK_TIME ? "time" : want == TSF_CHUNK_VALUE ? "value" : "non-aligned");
    if (c->ch.data_type != type)
        return tsf_err(err, type == TSF_VECTOR ? TSF_ECORRUPT : TSF_ENOTSUP,
                       "chunk at %llu: data type %s but the series is %s (type changes are not supported yet)",
                       (unsigned long long)off, tsf_type_name(c->ch.data_type) ? tsf_type_name(c->ch.data_type) : "?",
                       tsf_type_name(type) ? tsf_type_name(type) : "?");
    c->chunk_off = off;
    c->in_chunk = 1;
    q->st.chunks_read++;
    return TSF_OK;
}

/*
 * I/O granularity (file and callback sources; memory needs no copy): a chunk whose pages will all be
 * wanted (it lies inside the query window) or that is small is read whole with one read; page headers
 * and bodies are then served from memory. In a partly covered large chunk, pages are read through a
 * RD_READ_AHEAD window from the page header on, so a run of small pages costs one read, not two per
 * page, while pruned pages far from the window are never fetched.
 */
#define RD_WHOLE_CHUNK_SMALL (64u << 10)
#define RD_READ_AHEAD (64u << 10)
static tsf_status read_window(tsf_query *q, qcol *c, uint64_t len, tsf_error *err)
{
    const uint8_t *p;
    tsf_status st = tsf_rd_fetch(q->r, c->dpos, (size_t)len, &c->chunk, &p, err);
    if (st) return st;
    c->hdr.wp = c->body.wp = p;
    c->hdr.woff = c->body.woff = c->dpos;
    c->hdr.wlen = c->body.wlen = (size_t)len;
    return TSF_OK;
}

static tsf_status read_whole_chunk(tsf_query *q, qcol *c, int partial, tsf_error *err)
{
    if (q->r->src == RD_SRC_MEMORY || c->dend <= c->dpos) return TSF_OK;
    uint64_t len = c->dend - c->dpos;
    if (partial && len > RD_WHOLE_CHUNK_SMALL) return TSF_OK;
    return read_window(q, c, len, err);
}

static tsf_status next_page_header(tsf_query *q, qcol *c, tsf_error *err)
{
    if (q->r->src != RD_SRC_MEMORY && c->dpos < c->dend &&
        (!c->hdr.wlen || c->dpos < c->hdr.woff || c->dpos - c->hdr.woff + 96 > c->hdr.wlen)) {
        uint64_t len = c->dend - c->dpos;
        tsf_status st = read_window(q, c, len < RD_READ_AHEAD ? len : RD_READ_AHEAD, err);
        if (st) return st;
    }
    tsf_status st = tsf_rd_read_page_header(q->r, c->dpos, c->dend, &c->ch, &c->hdr, &c->ph, &q->st.bytes_read, err);
    if (st) return st;
    c->body_off = c->dpos + c->ph.header_len;
    c->dpos = c->body_off + c->ph.compressed_size;
    return TSF_OK;
}

tsf_status tsf_rd_load_page(const tsf_reader *r, tsf_compressor *comp, const tsf_fmt_chunk_header *h,
                        const tsf_fmt_page_header *ph, uint64_t body_off, tsf_rd_buf *body, tsf_rd_buf *plain,
                        const uint8_t **p, size_t *len, uint64_t *fetched, uint64_t *decompressed, tsf_error *err)
{
    const uint8_t *raw;
    tsf_status st = tsf_rd_fetch(r, body_off, ph->compressed_size, body, &raw, err);
    if (st) return st;
    *fetched += ph->compressed_size;
    if (h->compression == TSF_UNCOMPRESSED) {
        *p = raw;
        *len = ph->compressed_size;
        return TSF_OK;
    }
    uint64_t cap = (uint64_t)ph->compressed_size * 4096;
    if (cap < RD_PAGE_MIN_CAP) cap = RD_PAGE_MIN_CAP;
    if (cap > RD_PAGE_MAX) cap = RD_PAGE_MAX;
    if (ph->uncompressed_size > cap)
        return tsf_err(err, TSF_ECORRUPT, "page at %llu: uncompressedSize %u implausible for %u compressed bytes",
                       (unsigned long long)body_off, ph->uncompressed_size, ph->compressed_size);
    if ((st = tsf_rd_buf_reserve(r->a, plain, ph->uncompressed_size ? ph->uncompressed_size : 1, err))) return st;
    st = tsf_compressor_decompress(comp, h->compression, raw, ph->compressed_size, plain->p, ph->uncompressed_size,
                                   err);
    if (st) {
        if (err && st == TSF_ECORRUPT) {
            char m[TSF_ERROR_MESSAGE_SIZE];
            snprintf(m, sizeof m, "%s", err->message);
            tsf_err(err, st, "page body at %llu (%s): %s", (unsigned long long)body_off,
                    tsf_compression_name(h->compression) ? tsf_compression_name(h->compression) : "?", m);
        }
        return st;
    }
    *decompressed += ph->uncompressed_size;
    *p = plain->p;
    *len = ph->uncompressed_size;
    return TSF_OK;
}

/* Fetches and decompresses the current page body of c: *p / *len (uncompressed). */
static tsf_status load_body(tsf_query *q, qcol *c, const uint8_t **p, size_t *len, tsf_error *err)
{
    return tsf_rd_load_page(q->r, q->comp, &c->ch, &c->ph, c->body_off, &c->body, &c->plain, p, len, &q->st.bytes_read,
                        &q->st.bytes_decompressed, err);
}

/* Upper bound of values a stream of len bytes may claim (guards allocations). */
static int implausible(size_t n, size_t len)
{
    return n > len * 8 + 64;
}

/* Where n values decoded from c's current page go (its times, or its values) when the query is filling a
 * collection (tsf_query_collect) that takes each of them as one row from its next row on: into the
 * collection's array at that row; NULL: into c's own buffer. A filter compacts rows and the columns of a
 * non-aligned device merge, so neither decodes there. */
static void *sink_target(const tsf_query *q, const qcol *c, int times, size_t n)
{
    tsf_collect *k = q->sink;
    if (!k || q->fs || !n || n > k->cap - k->nrows) return NULL;
    if (!q->dev->aligned && q->ncols != 1) return NULL;
    if (times) return q->dev->aligned && c != &q->tcol ? NULL : k->times + k->nrows;
    if (c == &q->tcol) return NULL;
    size_t i = (size_t)(c - q->cols);
    if (i >= q->nvis || i >= k->ncolumns || k->columns[i].type != c->type) return NULL;
    return (uint8_t *)k->columns[i].values + k->nrows * c->esz;
}

/*
 * Decodes the timestamps of a page that can matter: all of them, or with a partly covered TS_2DIFF
 * page only the blocks that meet the window. Sets c->t / c->n to the decoded rows in the window,
 * *row0 to the page row of c->t[0] and *total to the page's row count.
 */
static tsf_status decode_times(tsf_query *q, qcol *c, tsf_encoding enc, const uint8_t *p, size_t len, int partial,
                               size_t *row0, size_t *total, tsf_error *err)
{
    c->tsum.what = 0;
    tsf_status st;
    size_t ord0 = 0, ndec = 0, tot = 0;
    const uint8_t *src = p;
    size_t srclen = len;
    if (partial && enc == TSF_ENC_TS_2DIFF) {
        /* With the page's count from its statistics the walk stops past the window's end; without them
         * it walks every header to count the values. */
        tsf_td_window w;
        int known = c->ph.has_stats;
        int conservative = q->block_bound == TSF_BLOCK_BOUND_CONSERVATIVE;
        if ((st = tsf_td_window_select(p, len, q->tmin, q->tmax, conservative, !known, &w, err))) return st;
        tot = w.complete ? w.nvalues : (size_t)c->ph.stats.count;
        if (implausible(tot, len))
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                           (unsigned long long)c->body_off, tot, len);
        if (tot < w.nvalues)
            return tsf_err(err, TSF_ECORRUPT, "time page at %llu: statistics count %zu, stream >= %zu values",
                           (unsigned long long)c->body_off, tot, w.nvalues);
        size_t nsel = w.b0 < w.nlisted ? w.b1 - w.b0 + 1 : 0;
        q->st.blocks_read += nsel;
        q->st.blocks_skipped += w.nlisted - nsel; /* blocks past the walk's stop are not even listed */
        if (nsel) {
            ord0 = w.ord0;
            ndec = w.ndec;
            src = p + w.off0;
            srclen = w.off1 - w.off0;
        }
    } else {
        st = tsf_codec_count(TSF_INT64, enc, p, len, &tot, err);
        if (st == TSF_ENOTSUP && c->ph.has_stats && tsf_codec_can_decode(TSF_INT64, enc)) {
            tot = c->ph.stats.count;
            st = TSF_OK;
        }
        if (st) return st;
        if (implausible(tot, len))
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                           (unsigned long long)c->body_off, tot, len);
        ndec = tot;
    }
    int64_t *t = sink_target(q, c, 1, ndec);
    if (!t) {
        if ((st = tsf_rd_buf_reserve(q->a, &c->times, (ndec ? ndec : 1) * sizeof(int64_t), err))) return st;
        t = (int64_t *)c->times.p;
    }
    c->tpage = t;
    if (ndec && q->checked && enc == TSF_ENC_TS_2DIFF && ndec == tot) {
        st = tsf_ts2diff_decode_i64_sum(q->r->codec, src, srclen, t, ndec, TSF_SUM_ASCENDING, &c->tsum, NULL, err);
        if (st) return st;
    } else if (ndec) {
        st = tsf_codec_decode(q->r->codec, TSF_INT64, enc, src, srclen, t, ndec, NULL, err);
        if (st) return st;
    }
    /* rows inside [tmin, tmax] (timestamps ascend) */
    size_t lo = 0, hi = ndec;
    if (q->tmin != INT64_MIN) {
        size_t a = 0, z = ndec;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            if (t[m] < q->tmin) a = m + 1; else z = m;
        }
        lo = a;
    }
    if (q->tmax != INT64_MAX) {
        size_t a = lo, z = ndec;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            if (t[m] <= q->tmax) a = m + 1; else z = m;
        }
        hi = a;
    }
    c->t = t + lo;
    c->n = hi - lo;
    c->pos = 0;
    *row0 = ord0 + lo;
    *total = tot;
    return TSF_OK;
}

/* Decodes n values of the column's type into c->vals, or straight into the collection being filled when
 * they are the page's rows one to one (whole: no nulls) and it takes them (sink_target). */
static tsf_status decode_values(tsf_query *q, qcol *c, const uint8_t *p, size_t len, size_t n, int whole,
                                tsf_error *err)
{
    tsf_status st = TSF_OK;
    uint8_t *out = whole ? sink_target(q, c, 0, n) : NULL;
    if (!out) {
        st = tsf_rd_buf_reserve(q->a, &c->vals, (n ? n : 1) * c->esz, err);
        out = c->vals.p;
    }
    c->vpage = out;
    c->vsum.what = 0;
    if (st) return st;
    if (!n) return TSF_OK;
    if (q->checked && c->ch.encoding == TSF_ENC_TS_2DIFF && (c->type == TSF_INT64 || c->type == TSF_TIMESTAMP))
        st = tsf_ts2diff_decode_i64_sum(q->r->codec, p, len, (int64_t *)out, n, TSF_SUM_VALUES, &c->vsum, NULL, err);
    else if (q->checked && c->ch.encoding == TSF_ENC_GORILLA && c->type == TSF_DOUBLE)
        st = tsf_gorilla_decode_f64_sum(q->r->codec, p, len, (double *)out, n, &c->vsum, NULL, err);
    else
        st = tsf_codec_decode(q->r->codec, c->type, c->ch.encoding, p, len, out, n, NULL, err);
    if (st && err && st == TSF_ECORRUPT) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", err->message);
        tsf_err(err, st, "values of page at %llu (%s %s): %s", (unsigned long long)c->body_off,
                tsf_type_name(c->type) ? tsf_type_name(c->type) : "?",
                tsf_encoding_name(c->ch.encoding) ? tsf_encoding_name(c->ch.encoding) : "?", m);
    }
    return st;
}

/* ---- pruning by value statistics (filter.c decides; these gather what each unit knows) -------- */

/* Non-aligned column c over one chunk or page with statistics s. Pruning one column of a merge is safe:
 * its rows cannot be TRUE, and rows of other columns at those times only lose a value (null keeps a
 * non-TRUE filter non-TRUE). */
static int na_may_match(tsf_query *q, const qcol *c, const tsf_fmt_stats *s, int trusted)
{
    size_t i = (size_t)(c - q->cols);
    if (!tsf_rd_filter_uses(q->fs, i)) return 1;
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    u[i].stats = *s;
    u[i].has = 1;
    u[i].trusted = trusted;
    return tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* Aligned chunk group of the time chunk at off (next: the following time chunk): the value chunks of the
 * filter's columns, peeked from the index without consuming them (encoding unknown yet: FLOAT/DOUBLE
 * statistics are not trusted here). A column without a value chunk in the group is null in every row. */
static int al_chunk_may_match(tsf_query *q, uint64_t off, uint64_t next)
{
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    int any = 0;
    for (size_t i = 0; i < q->ncols; i++) {
        const qcol *c = &q->cols[i];
        if (!c->s || !tsf_rd_filter_uses(q->fs, i)) continue;
        size_t pos = c->cm_pos;
        int have = c->cm_have;
        uint64_t coff = c->cm_off;
        tsf_fmt_stats cs = c->cm_stats;
        while (have && coff < off) {
            tsf_error e;
            tsf_status st = tsf_mip_next_chunk_meta(&c->s->tsm, &pos, &coff, &cs, &e);
            if (st && st != TSF_ENOTFOUND) return 1; /* the scan itself reports it */
            have = st == TSF_OK;
        }
        any = 1;
        if (have && coff < next) {
            u[i].stats = cs;
            u[i].has = 1;
            u[i].trusted = c->type != TSF_FLOAT && c->type != TSF_DOUBLE;
        } else {
            u[i].all_null = 1;
        }
    }
    return !any || tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* Aligned page: the value pages paired with the current time page (same rows). */
static int al_page_may_match(tsf_query *q)
{
    tsf_rd_unit_col *u = tsf_rd_filter_units(q->fs, q->ncols);
    if (!u) return 1;
    for (size_t i = 0; i < q->ncols; i++) {
        const qcol *c = &q->cols[i];
        if (!tsf_rd_filter_uses(q->fs, i)) continue;
        if (!c->in_chunk || c->ph.uncompressed_size == 0) {
            u[i].all_null = 1;
        } else if (c->ph.has_stats) {
            u[i].stats = c->ph.stats;
            u[i].has = 1;
            u[i].trusted = !tsf_rd_lossy(c->type, c->ch.encoding);
        }
    }
    return tsf_rd_filter_may_match(q->fs, u, q->ncols);
}

/* ---- checked reads (check.h) ------------------------------------------------------------------ */

/* Statistics of a chunk (ChunkMetadata at off) or of c's current page header that describe no data. */
static tsf_status check_range(const tsf_query *q, const tsf_fmt_stats *s, const qcol *c, uint64_t off,
                              tsf_error *err)
{
    if (!c) return tsf_rd_check_range_at(q->checked, s, NULL, 0, off, err);
    return tsf_rd_check_range_at(q->checked, s, &c->ph, c->body_off - c->ph.header_len, c->chunk_off, err);
}

/* The n timestamps t of c's current page, decoded whole, against its statistics. */
static tsf_status check_times(const tsf_query *q, const qcol *c, const int64_t *t, size_t n, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = tsf_rd_page_stats(&c->ch, &c->ph, &c->cs);
    if (!s || !tsf_rd_check_times(q->level, s, t, n, &c->tsum, why, sizeof why)) return TSF_OK;
    return tsf_rd_check_error(&c->ph, c->body_off - c->ph.header_len, c->chunk_off, why, err);
}

/* The n values decoded from c's current page (rows' first and last times t0, t1) against its statistics. */
static tsf_status check_values(const tsf_query *q, const qcol *c, int64_t t0, int64_t t1, size_t n, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = tsf_rd_page_stats(&c->ch, &c->ph, &c->cs);
    if (!s || !tsf_rd_check_values(q->level, c->type, c->ch.encoding, s, t0, t1, c->vpage, n, &c->vsum, why,
                                 sizeof why))
        return TSF_OK;
    return tsf_rd_check_error(&c->ph, c->body_off - c->ph.header_len, c->chunk_off, why, err);
}

/* ---- non-aligned columns ------------------------------------------------------------------ */

/* Offers a unit of column c to the statistics hook (query_internal.h): its statistics s, the chunk at
 * chunk_off, the page whose body is at page_off (0: the whole chunk). */
static int offer(tsf_query *q, const qcol *c, const tsf_fmt_stats *s, int enc, uint64_t chunk_off, uint64_t page_off)
{
    return q->unit(q->unit_ctx, q->devs[q->di], c->name, c->type, s, enc, chunk_off, page_off);
}

tsf_status tsf_rd_query_na_page(tsf_query *q, qcol *c, tsf_error *err)
{
    tsf_status st;
    for (;;) {
        if (!c->in_chunk) {
            if (!c->cm_have) {
                c->done = 1;
                c->n = c->pos = 0;
                return TSF_OK;
            }
            uint64_t off = c->cm_off;
            tsf_fmt_stats cs = c->cm_stats;
            if ((st = tsf_rd_query_next_meta(q, c, err)) || (st = check_range(q, &cs, NULL, off, err))) return st;
            if (out_of_range(q, cs.start_time, cs.end_time)) {
                q->st.chunks_skipped++;
                continue;
            }
            if (q->fs && !na_may_match(q, c, &cs, c->type != TSF_FLOAT && c->type != TSF_DOUBLE)) {
                q->st.chunks_skipped++; /* its values cannot make the filter TRUE */
                continue;
            }
            int opened = 0;
            if (q->unit) {
                int took = offer(q, c, &cs, TSF_RD_ENC_UNKNOWN, off, 0);
                if (took == TSF_RD_UNIT_NEED_ENC) {
                    if ((st = open_chunk(q, c, off, TSF_CHUNK_NONALIGNED, c->type, err))) return st;
                    opened = 1;
                    took = offer(q, c, &cs, c->ch.encoding, off, 0);
                }
                if (took == TSF_RD_UNIT_TAKEN) {
                    c->in_chunk = 0;
                    continue;
                }
            }
            if (!opened && (st = open_chunk(q, c, off, TSF_CHUNK_NONALIGNED, c->type, err))) return st;
            c->cs = cs;
            c->chunk_partial = !inside(q, cs.start_time, cs.end_time);
            if ((st = read_whole_chunk(q, c, c->chunk_partial, err))) return st;
            if (cs.start_time < q->tmin) tsf_rd_pdir_jump(q, c, NULL, 0);
        }
        if (c->dpos >= c->dend) {
            c->in_chunk = 0;
            continue;
        }
        if ((st = next_page_header(q, c, err))) return st;
        int partial = c->chunk_partial;
        if (c->ph.has_stats) {
            if ((st = check_range(q, &c->ph.stats, c, 0, err))) return st;
            if (out_of_range(q, c->ph.stats.start_time, c->ph.stats.end_time)) {
                q->st.pages_skipped++;
                if (c->ph.stats.start_time > q->tmax) c->dpos = c->dend; /* pages ascend: leave the chunk */
                continue;
            }
            partial = !inside(q, c->ph.stats.start_time, c->ph.stats.end_time);
        }
        if (q->fs && c->ph.has_stats && !na_may_match(q, c, &c->ph.stats, !tsf_rd_lossy(c->type, c->ch.encoding))) {
            q->st.pages_skipped++;
            continue;
        }
        if (q->unit && c->ph.has_stats &&
            offer(q, c, &c->ph.stats, c->ch.encoding, c->chunk_off, c->body_off) == TSF_RD_UNIT_TAKEN)
            continue;
        q->st.pages_read++;
        if (c->ph.uncompressed_size == 0) continue;
        const uint8_t *p;
        size_t len, row0, total;
        if ((st = load_body(q, c, &p, &len, err))) return st;
        tsf_fmt_nonaligned_page pg;
        if ((st = tsf_fmt_parse_nonaligned_page(p, len, c->body_off, &pg, err))) return st;
        /* a checked page is decoded whole: its statistics describe all of it */
        if ((st = decode_times(q, c, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, partial && !q->checked, &row0, &total,
                               err)))
            return st;
        const int64_t *pt = c->tpage;
        if (q->checked && (st = check_times(q, c, pt, total, err))) return st;
        if (c->n == 0) continue;
        if ((st = decode_values(q, c, pg.values, pg.values_len, total, 1, err))) return st;
        if (q->checked && (st = check_values(q, c, pt[0], pt[total - 1], total, err))) return st;
        c->v = c->vpage + row0 * c->esz;
        return TSF_OK;
    }
}

/* ---- aligned devices ---------------------------------------------------------------------- */

/* Opens the time chunk at off (ChunkMetadata statistics cs; next: the offset of the following time chunk)
 * and the value chunk of every column in its chunk group: the first one after off and before next. */
static tsf_status al_open_group(tsf_query *q, uint64_t off, uint64_t next, const tsf_fmt_stats *cs, tsf_error *err)
{
    qcol *tc = &q->tcol;
    tsf_status st;
    int live = 0; /* a value chunk to read */
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        c->in_chunk = 0;
        c->grp = 0;
        if (!c->s) continue;
        while (c->cm_have && c->cm_off < off) {
            q->st.chunks_skipped++;
            if ((st = tsf_rd_query_next_meta(q, c, err))) return st;
        }
        if (!c->cm_have || c->cm_off >= next) continue;
        c->grp_off = c->cm_off;
        c->cs = c->cm_stats;
        c->grp = 1;
        if ((st = tsf_rd_query_next_meta(q, c, err))) return st;
        if (q->unit) {
            if ((st = check_range(q, &c->cs, NULL, c->grp_off, err))) return st;
            int took = offer(q, c, &c->cs, TSF_RD_ENC_UNKNOWN, c->grp_off, 0);
            if (took == TSF_RD_UNIT_NEED_ENC) {
                tsf_fmt_stats vcs = c->cs;
                if ((st = open_chunk(q, c, c->grp_off, TSF_CHUNK_VALUE, c->type, err))) return st;
                c->cs = vcs;
                c->in_chunk = 0;
                c->grp = 2;
                took = offer(q, c, &c->cs, c->ch.encoding, c->grp_off, 0);
            }
            if (took == TSF_RD_UNIT_TAKEN) c->grp = 3;
        }
        live |= c->grp != 3;
    }
    tc->in_chunk = 0;
    if (q->unit && !live) { /* every value column taken from statistics or absent: the group is not read */
        q->st.chunks_skipped++;
        return TSF_OK;
    }
    if ((st = open_chunk(q, tc, off, TSF_CHUNK_TIME, TSF_VECTOR, err))) return st;
    tc->cs = *cs;
    tc->chunk_partial = !inside(q, cs->start_time, cs->end_time);
    if ((st = read_whole_chunk(q, tc, tc->chunk_partial, err))) return st;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        if (c->grp != 1 && c->grp != 2) continue;
        tsf_fmt_stats vcs = c->cs;
        if (c->grp == 1 && (st = open_chunk(q, c, c->grp_off, TSF_CHUNK_VALUE, c->type, err))) return st;
        c->in_chunk = 1;
        c->cs = vcs;
        if ((st = read_whole_chunk(q, c, tc->chunk_partial, err))) return st;
        if (c->dpos == c->dend) c->in_chunk = 0; /* dataSize 0: null in every row */
    }
    if (cs->start_time < q->tmin) tsf_rd_pdir_jump(q, tc, q->cols, q->ncols);
    return TSF_OK;
}

/* Decodes the value pages paired with the time page just decoded: total rows, times pt (the whole page
 * when checked), row0 the page row of the first row in the window. A column without a page here is null. */
static tsf_status al_value_pages(tsf_query *q, size_t row0, size_t total, const int64_t *pt, tsf_error *err)
{
    const qcol *tc = &q->tcol;
    const uint8_t *p;
    size_t len;
    tsf_status st;
    for (size_t i = 0; i < q->ncols; i++) {
        qcol *c = &q->cols[i];
        c->null_page = 1;
        if (!c->in_chunk || c->ph.uncompressed_size == 0 || c->answered) continue;
        q->st.pages_read++;
        if ((st = load_body(q, c, &p, &len, err))) return st;
        tsf_fmt_value_page vp;
        if ((st = tsf_fmt_parse_value_page(p, len, c->body_off, &vp, err))) return st;
        if (vp.row_count != total)
            return tsf_err(err, TSF_ECORRUPT, "value page at %llu: %u rows but its time page at %llu has %zu",
                           (unsigned long long)c->body_off, vp.row_count, (unsigned long long)tc->body_off, total);
        if ((st = decode_values(q, c, vp.values, vp.values_len, vp.present, vp.present == total, err))) return st;
        if (q->checked) {
            size_t r0 = 0, r1 = total; /* the first and last present rows */
            while (r0 < total && !tsf_fmt_bitmap_get(vp.bitmap, r0)) r0++;
            while (r1 > r0 && !tsf_fmt_bitmap_get(vp.bitmap, r1 - 1)) r1--;
            int64_t t0 = r0 < total ? pt[r0] : 0, t1 = r1 > r0 ? pt[r1 - 1] : 0;
            if ((st = check_values(q, c, t0, t1, vp.present, err))) return st;
        }
        c->null_page = 0;
        c->bitmap = vp.bitmap;
        c->present = vp.present;
        c->k = tsf_fmt_bitmap_count(vp.bitmap, row0);
    }
    return TSF_OK;
}

tsf_status tsf_rd_query_al_page(tsf_query *q, tsf_error *err)
{
    qcol *tc = &q->tcol;
    tsf_status st;
    for (;;) {
        if (!tc->in_chunk) {
            if (!tc->cm_have) {
                tc->done = 1;
                return TSF_OK;
            }
            uint64_t off = tc->cm_off;
            tsf_fmt_stats cs = tc->cm_stats;
            if ((st = tsf_rd_query_next_meta(q, tc, err)) || (st = check_range(q, &cs, NULL, off, err))) return st;
            uint64_t next = tc->cm_have ? tc->cm_off : q->r->fm.meta_offset;
            if (next <= off)
                return tsf_err(err, TSF_ECORRUPT, "time column of %s: chunk offsets not ascending (%llu then %llu)",
                               q->dev->name, (unsigned long long)off, (unsigned long long)next);
            if (out_of_range(q, cs.start_time, cs.end_time)) {
                q->st.chunks_skipped++;
                continue;
            }
            if (q->fs && !al_chunk_may_match(q, off, next)) {
                q->st.chunks_skipped++; /* its value chunks' statistics rule the filter out */
                continue;
            }
            if ((st = al_open_group(q, off, next, &cs, err))) return st;
            if (!tc->in_chunk) continue; /* answered from statistics */
        }
        if (tc->dpos >= tc->dend) {
            tc->in_chunk = 0;
            for (size_t i = 0; i < q->ncols; i++)
                if (q->cols[i].in_chunk && q->cols[i].dpos < q->cols[i].dend)
                    return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: more pages than its time chunk at %llu",
                                   (unsigned long long)q->cols[i].chunk_off, (unsigned long long)tc->chunk_off);
            continue;
        }
        if ((st = next_page_header(q, tc, err))) return st;
        for (size_t i = 0; i < q->ncols; i++) {
            qcol *c = &q->cols[i];
            if (!c->in_chunk) continue;
            if (c->dpos >= c->dend)
                return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: fewer pages than its time chunk at %llu",
                               (unsigned long long)c->chunk_off, (unsigned long long)tc->chunk_off);
            if ((st = next_page_header(q, c, err))) return st;
            if (c->ph.has_stats && (st = check_range(q, &c->ph.stats, c, 0, err))) return st;
        }
        int partial = tc->chunk_partial;
        if (tc->ph.has_stats) {
            if ((st = check_range(q, &tc->ph.stats, tc, 0, err))) return st;
            if (out_of_range(q, tc->ph.stats.start_time, tc->ph.stats.end_time)) {
                q->st.pages_skipped++;
                for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
                if (tc->ph.stats.start_time > q->tmax) { /* pages ascend: none after this one matches */
                    tc->dpos = tc->dend;
                    for (size_t i = 0; i < q->ncols; i++)
                        if (q->cols[i].in_chunk) q->cols[i].dpos = q->cols[i].dend;
                }
                continue;
            }
            partial = !inside(q, tc->ph.stats.start_time, tc->ph.stats.end_time);
        }
        if (q->fs && tc->ph.has_stats && !al_page_may_match(q)) {
            q->st.pages_skipped++;
            for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
            continue;
        }
        if (q->unit) { /* value pages answered from their statistics are not read; none left: nor the time page */
            int live = 0;
            for (size_t i = 0; i < q->ncols; i++) {
                qcol *c = &q->cols[i];
                c->answered = 0;
                if (!c->in_chunk || c->ph.uncompressed_size == 0) continue;
                if (c->ph.has_stats &&
                    offer(q, c, &c->ph.stats, c->ch.encoding, c->chunk_off, c->body_off) == TSF_RD_UNIT_TAKEN)
                    c->answered = 1;
                else
                    live = 1;
            }
            if (!live) {
                q->st.pages_skipped++;
                continue;
            }
        }
        const uint8_t *p;
        size_t len, row0, total;
        q->st.pages_read++;
        if ((st = load_body(q, tc, &p, &len, err))) return st;
        if ((st = decode_times(q, tc, tc->ch.encoding, p, len, partial && !q->checked, &row0, &total, err)))
            return st;
        const int64_t *pt = tc->tpage; /* the whole page when checked */
        if (q->checked && (st = check_times(q, tc, pt, total, err))) return st;
        if (tc->n == 0) {
            for (size_t i = 0; i < q->ncols; i++) q->st.pages_skipped += q->cols[i].in_chunk;
            continue;
        }
        q->row_base = row0;
        return al_value_pages(q, row0, total, pt, err);
    }
}
