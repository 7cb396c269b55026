/*
 * aggregate_scan.c - one series of an aggregation, chunk by chunk and page by page: a unit lying whole in
 * one window and in the range is answered from its statistics (ChunkMetadata statistics, §8.2, for whole
 * chunks; page header statistics, §6.1, for whole pages of multi-page chunks); only the other pages are
 * fetched, decompressed and decoded. Lossy FLOAT/DOUBLE encodings (TS_2DIFF, RLE, SPRINTZ, RLBE:
 * statistics describe the writer's input, not what decodes) and BLOB (statistics hold no values) are
 * always decoded. Checked reads (check.h) compare statistics and decoded pages.
 *
 * Aligned value columns (§6.4): value statistics describe only non-null values, so their time range is
 * that of the values; a page that must be decoded pairs with the time page at the same position of the
 * time chunk of its chunk group (the last time chunk before the value chunk).
 */
#include <string.h>

#include "aggregate_internal.h"
#include "check.h"

/* Decodes a whole time stream into c->times; *n its values. `fallback`: count when the stream has none. */
static tsf_status decode_times(agg_ctx *c, tsf_encoding enc, const uint8_t *p, size_t len, uint64_t fallback,
                               uint64_t at, size_t *n, tsf_error *err)
{
    size_t cnt = 0;
    tsf_status st = tsf_codec_count(TSF_INT64, enc, p, len, &cnt, err);
    if (st == TSF_ENOTSUP && tsf_codec_can_decode(TSF_INT64, enc)) {
        cnt = (size_t)fallback;
        st = TSF_OK;
    }
    if (st) return st;
    if (cnt > len * 8 + 64)
        return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: %zu values claimed in %zu bytes",
                       (unsigned long long)at, cnt, len);
    if ((st = tsf_rd_buf_reserve(c->a, &c->times, (cnt ? cnt : 1) * sizeof(int64_t), err))) return st;
    if (cnt && (st = tsf_codec_decode(c->r->codec, TSF_INT64, enc, p, len, c->times.p, cnt, NULL, err)))
        return st;
    for (size_t i = 1; i < cnt; i++)
        if (((const int64_t *)c->times.p)[i] <= ((const int64_t *)c->times.p)[i - 1])
            return tsf_err(err, TSF_ECORRUPT, "time stream at %llu: timestamps not ascending at value %zu",
                           (unsigned long long)at, i);
    *n = cnt;
    return TSF_OK;
}

static tsf_status decode_vals(agg_ctx *c, tsf_encoding enc, const uint8_t *p, size_t len, size_t n,
                              uint64_t at, tsf_error *err)
{
    tsf_status st = tsf_rd_buf_reserve(c->a, &c->vals, (n ? n : 1) * c->esz, err);
    if (st || !n) return st;
    st = tsf_codec_decode(c->r->codec, c->type, enc, p, len, c->vals.p, n, NULL, err);
    if (st == TSF_ECORRUPT && err) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        memcpy(m, err->message, sizeof m);
        tsf_err(err, st, "values of page at %llu (%s): %s", (unsigned long long)at,
                tsf_encoding_name(enc) ? tsf_encoding_name(enc) : "?", m);
    }
    return st;
}

/* One open chunk: its header and the position of its next page. */
typedef struct agg_chunk {
    tsf_fmt_chunk_header h;
    uint64_t off, pos, end;
    tsf_fmt_page_header ph;
    uint64_t body;
} agg_chunk;

/* Checked reads: statistics of a chunk (ChunkMetadata at off), a page (k's current page) or the series that
 * describe no data (values but startTime > endTime) are damaged, not a unit to skip. */
static tsf_status agg_check_range(const agg_ctx *c, const tsf_fmt_stats *s, const agg_chunk *k, uint64_t off,
                                  tsf_error *err)
{
    if (!k) return tsf_rd_check_range_at(c->checked, s, NULL, 0, off, err);
    return tsf_rd_check_range_at(c->checked, s, &k->ph, k->body - k->ph.header_len, k->off, err);
}

/* Checked reads: the decoded page of k (n times t; values c->vals, nv of them, at rows whose first and last
 * times are t0, t1) against its statistics (cs: the chunk's ChunkMetadata, for a single-page chunk). Pass
 * t = NULL to check values only, vals = 0 for times only. */
static tsf_status agg_check_page(const agg_ctx *c, const agg_chunk *k, const tsf_fmt_stats *cs, const int64_t *t,
                                 size_t n, int vals, int64_t t0, int64_t t1, size_t nv, tsf_error *err)
{
    char why[200];
    const tsf_fmt_stats *s = c->checked ? tsf_rd_page_stats(&k->h, &k->ph, cs) : NULL;
    if (!s) return TSF_OK;
    if ((t && tsf_rd_check_times(c->level, s, t, n, NULL, why, sizeof why)) ||
        (vals && tsf_rd_check_values(c->level, c->type, k->h.encoding, s, t0, t1, c->vals.p, nv, NULL, why, sizeof why)))
        return tsf_rd_check_error(&k->ph, k->body - k->ph.header_len, k->off, why, err);
    return TSF_OK;
}

static tsf_status chunk_open(agg_ctx *c, agg_chunk *k, tsf_rd_buf *hb, uint64_t off, tsf_chunk_kind want,
                             tsf_type type, tsf_error *err)
{
    tsf_status st = tsf_rd_read_chunk_header(c->r, off, hb, &k->h, &k->pos, &k->end, &c->fetched, err);
    if (st) return st;
    k->off = off;
    if (tsf_fmt_chunk_kind(k->h.marker) != want || k->h.data_type != type)
        return tsf_err(err, TSF_ECORRUPT,
                       "chunk at %llu: marker 0x%02x / type %d is not the chunk the index lists",
                       (unsigned long long)off, k->h.marker, (int)k->h.data_type);
    return TSF_OK;
}

static tsf_status page_next(agg_ctx *c, agg_chunk *k, tsf_rd_buf *hb, tsf_error *err)
{
    tsf_status st = tsf_rd_read_page_header(c->r, k->pos, k->end, &k->h, hb, &k->ph, &c->fetched, err);
    if (st) return st;
    k->body = k->pos + k->ph.header_len;
    k->pos = k->body + k->ph.compressed_size;
    return TSF_OK;
}

/* A usable statistics answer: trusted, wanted, and covering a whole window part. */
static int stats_usable(const agg_ctx *c, const tsf_fmt_stats *s, tsf_encoding enc)
{
    return !c->force && !tsf_rd_lossy(c->type, enc) && fits(c, s->start_time, s->end_time);
}

tsf_status tsf_rd_agg_nonaligned(agg_ctx *c, const tsf_rd_series *s, tsf_error *err)
{
    size_t pos = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    tsf_status st;
    tsf_error e;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &off, &cs, &e)) == TSF_OK) {
        if ((st = agg_check_range(c, &cs, NULL, off, err))) return st;
        if (!cs.count || out_of_range(c, cs.start_time, cs.end_time)) continue;
        /* a FLOAT/DOUBLE chunk's encoding (trust) is in its header; other types need no I/O here */
        int may_stats = !c->force && fits(c, cs.start_time, cs.end_time);
        if (may_stats && !c->lossy_type) {
            if ((st = tsf_rd_agg_from_stats(c, &cs, 1, err)) || (st = tsf_rd_agg_chunk_flush(c, err))) return st;
            continue;
        }
        agg_chunk k;
        if ((st = chunk_open(c, &k, &c->hdr, off, TSF_CHUNK_NONALIGNED, c->type, err))) return st;
        if (may_stats && !tsf_rd_lossy(c->type, k.h.encoding)) {
            if ((st = tsf_rd_agg_from_stats(c, &cs, 1, err)) || (st = tsf_rd_agg_chunk_flush(c, err))) return st;
            continue;
        }
        while (k.pos < k.end) {
            if ((st = page_next(c, &k, &c->hdr, err))) return st;
            if (k.ph.has_stats) {
                if ((st = agg_check_range(c, &k.ph.stats, &k, 0, err))) return st;
                /* checked: a page whose statistics count nothing is decoded to confirm it */
                if ((!k.ph.stats.count && !c->checked) ||
                    out_of_range(c, k.ph.stats.start_time, k.ph.stats.end_time))
                    continue;
                if (stats_usable(c, &k.ph.stats, k.h.encoding)) {
                    if ((st = tsf_rd_agg_from_stats(c, &k.ph.stats, 0, err))) return st;
                    continue;
                }
            }
            if (k.ph.uncompressed_size == 0) continue;
            const uint8_t *p;
            size_t len, n;
            if ((st = tsf_rd_load_page(c->r, c->comp, &k.h, &k.ph, k.body, &c->body, &c->plain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            tsf_fmt_nonaligned_page pg;
            if ((st = tsf_fmt_parse_nonaligned_page(p, len, k.body, &pg, err))) return st;
            uint64_t fb = k.ph.has_stats ? k.ph.stats.count : cs.count;
            if ((st = decode_times(c, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, fb, k.body, &n, err)))
                return st;
            if ((st = decode_vals(c, k.h.encoding, pg.values, pg.values_len, n, k.body, err))) return st;
            const int64_t *t = (const int64_t *)c->times.p;
            if (n && (st = agg_check_page(c, &k, &cs, t, n, 1, t[0], t[n - 1], n, err))) return st;
            c->res->info.pages_decoded++;
            if ((st = tsf_rd_agg_put_values(c, (const int64_t *)c->times.p, c->vals.p, n, err))) return st;
        }
        if ((st = tsf_rd_agg_chunk_flush(c, err))) return st;
    }
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    return TSF_OK;
}

/* Time chunk metadata walk: the last time chunk before a value chunk offset. */
typedef struct time_walk {
    const tsf_rd_series *s;
    size_t pos;
    int have, next_have;
    uint64_t off, next_off;
    tsf_fmt_stats stats, next_stats;
} time_walk;

static tsf_status tw_step(time_walk *tw, tsf_error *err)
{
    tsf_error e;
    tsf_status st = tsf_mip_next_chunk_meta(&tw->s->tsm, &tw->pos, &tw->next_off, &tw->next_stats, &e);
    tw->next_have = st == TSF_OK;
    if (st == TSF_OK || st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

static tsf_status tw_seek(time_walk *tw, uint64_t voff, tsf_error *err)
{
    tsf_status st;
    while (tw->next_have && tw->next_off < voff) {
        tw->have = 1;
        tw->off = tw->next_off;
        tw->stats = tw->next_stats;
        if ((st = tw_step(tw, err))) return st;
    }
    if (!tw->have || tw->off >= voff)
        return tsf_err(err, TSF_ECORRUPT, "value chunk at %llu: no time chunk before it",
                       (unsigned long long)voff);
    return TSF_OK;
}

tsf_status tsf_rd_agg_aligned(agg_ctx *c, const tsf_rd_device *d, const tsf_rd_series *s, tsf_error *err)
{
    time_walk tw = {0};
    tw.s = &d->time;
    size_t pos = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    tsf_error e;
    tsf_status st = tw_step(&tw, err);
    if (st) return st;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &off, &cs, &e)) == TSF_OK) {
        if ((st = tw_seek(&tw, off, err)) || (st = agg_check_range(c, &cs, NULL, off, err))) return st;
        if (!cs.count || out_of_range(c, cs.start_time, cs.end_time)) continue;
        int may_stats = !c->force && fits(c, cs.start_time, cs.end_time);
        if (may_stats && !c->lossy_type) {
            if ((st = tsf_rd_agg_from_stats(c, &cs, 1, err)) || (st = tsf_rd_agg_chunk_flush(c, err))) return st;
            continue;
        }
        agg_chunk vk, tk;
        if ((st = chunk_open(c, &vk, &c->hdr, off, TSF_CHUNK_VALUE, c->type, err))) return st;
        if (may_stats && !tsf_rd_lossy(c->type, vk.h.encoding)) {
            if ((st = tsf_rd_agg_from_stats(c, &cs, 1, err)) || (st = tsf_rd_agg_chunk_flush(c, err))) return st;
            continue;
        }
        if (vk.pos == vk.end) continue; /* dataSize 0: all null */
        if ((st = chunk_open(c, &tk, &c->thdr, tw.off, TSF_CHUNK_TIME, TSF_VECTOR, err))) return st;
        while (vk.pos < vk.end) {
            if (tk.pos >= tk.end)
                return tsf_err(err, TSF_ECORRUPT,
                               "value chunk at %llu: more pages than its time chunk at %llu",
                               (unsigned long long)vk.off, (unsigned long long)tk.off);
            if ((st = page_next(c, &vk, &c->hdr, err)) || (st = page_next(c, &tk, &c->thdr, err))) return st;
            if (vk.ph.uncompressed_size == 0) continue; /* empty page: all null */
            if (vk.ph.has_stats) {
                if ((st = agg_check_range(c, &vk.ph.stats, &vk, 0, err))) return st;
                if ((!vk.ph.stats.count && !c->checked) ||
                    out_of_range(c, vk.ph.stats.start_time, vk.ph.stats.end_time))
                    continue;
                if (stats_usable(c, &vk.ph.stats, vk.h.encoding)) {
                    if ((st = tsf_rd_agg_from_stats(c, &vk.ph.stats, 0, err))) return st;
                    continue;
                }
            }
            const uint8_t *p;
            size_t len, n;
            if ((st = tsf_rd_load_page(c->r, c->comp, &tk.h, &tk.ph, tk.body, &c->tbody, &c->tplain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            uint64_t fb = tk.ph.has_stats ? tk.ph.stats.count : tw.stats.count;
            if ((st = decode_times(c, tk.h.encoding, p, len, fb, tk.body, &n, err))) return st;
            if ((st = agg_check_page(c, &tk, &tw.stats, (const int64_t *)c->times.p, n, 0, 0, 0, 0, err))) return st;
            if ((st = tsf_rd_load_page(c->r, c->comp, &vk.h, &vk.ph, vk.body, &c->body, &c->plain, &p, &len,
                                   &c->fetched, &c->decompressed, err)))
                return st;
            tsf_fmt_value_page vp;
            if ((st = tsf_fmt_parse_value_page(p, len, vk.body, &vp, err))) return st;
            if (vp.row_count != n)
                return tsf_err(err, TSF_ECORRUPT,
                               "value page at %llu: %u rows but its time page at %llu has %zu",
                               (unsigned long long)vk.body, vp.row_count, (unsigned long long)tk.body, n);
            if ((st = decode_vals(c, vk.h.encoding, vp.values, vp.values_len, vp.present, vk.body, err)))
                return st;
            /* times of the present rows */
            if ((st = tsf_rd_buf_reserve(c->a, &c->ptimes, (vp.present ? vp.present : 1) * sizeof(int64_t), err)))
                return st;
            const int64_t *t = (const int64_t *)c->times.p;
            int64_t *pt = (int64_t *)c->ptimes.p;
            size_t m = 0;
            for (size_t i = 0; i < n && m < vp.present; i++)
                if (tsf_fmt_bitmap_get(vp.bitmap, i)) pt[m++] = t[i];
            if ((st = agg_check_page(c, &vk, &cs, NULL, 0, 1, m ? pt[0] : 0, m ? pt[m - 1] : 0, vp.present, err)))
                return st;
            c->res->info.pages_decoded++;
            if ((st = tsf_rd_agg_put_values(c, pt, c->vals.p, m, err))) return st;
        }
        if ((st = tsf_rd_agg_chunk_flush(c, err))) return st;
    }
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    return TSF_OK;
}
