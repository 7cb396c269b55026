/*
 * verify.c - tsf_verify and the data-area scan it shares with tsf_recover.
 *
 * The scan (verify_scan.h) walks the data area with the format walker (tsfile-container-format.md
 * §4-§6), decompresses and decodes every page (§6.3 non-aligned bodies, §6.4 aligned time and value
 * bodies), checks timestamps ascend, counts agree (value page rowCount = its time page's rows, as many
 * value pages as time pages) and page statistics (§7) equal those recomputed from the decoded values
 * (sums within rounding; only count and times for the lossy float encodings). A damaged page marks its
 * chunk bad and the walk goes on; a damaged page header skips to the end of its chunk (the chunk header
 * gave its size); anything else stops the walk there.
 *
 * tsf_verify adds the index checks through the reader (tail, metaSize, TsFileMetadata, the index tree
 * as the reader loads it): every TimeseriesMetadata lists chunks that exist at those offsets with the
 * right measurement, device, kind and type, whose recomputed statistics equal the ChunkMetadata ones,
 * merged equal to the series statistics; every chunk is listed; the bloom filter holds every series.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/meta_index.h"
#include "verify_scan.h"

/* Largest decompressed page accepted: max(16 MiB, 4096 x the compressed size), at most 1 GiB (as query.c). */
#define VS_PAGE_MIN_CAP (1u << 24)
#define VS_PAGE_MAX (1u << 30)

/* ---- file mapping --------------------------------------------------------------------------- */

tsf_status tsf_vs_map_file(const char *path, const uint8_t **data, size_t *len, tsf_error *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tsf_err(err, TSF_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return tsf_err(err, TSF_EIO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return tsf_err(err, TSF_EIO, "%s is not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return tsf_err(err, TSF_ERANGE, "%s: too large to map", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return TSF_OK;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return tsf_err(err, TSF_EIO, "cannot map %s: %s", path, strerror(e));
    *data = p;
    *len = (size_t)sb.st_size;
    return TSF_OK;
}

void tsf_vs_unmap_file(const uint8_t *data, size_t len)
{
    if (data && len) munmap((void *)data, len);
}

/* ---- problems and statistics ---------------------------------------------------------------- */

static void tsf_vs_report(tsf_vs_scan *s, uint64_t off, int warning, const char *fmt, va_list ap)
{
    char msg[TSF_ERROR_MESSAGE_SIZE * 2];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (warning)
        s->nwarnings++;
    else
        s->nproblems++;
    if (s->problem) s->problem(s->ctx, off, msg, warning);
}

void tsf_vs_problem(tsf_vs_scan *s, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tsf_vs_report(s, off, 0, fmt, ap);
    va_end(ap);
}

void tsf_vs_warning(tsf_vs_scan *s, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tsf_vs_report(s, off, 1, fmt, ap);
    va_end(ap);
}

static int f64_same(double a, double b)
{
    return a == b || (a != a && b != b);
}

static int sum_close(double a, double b)
{
    if (f64_same(a, b)) return 1;
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
}

/* Double-accumulated sums: bit for bit when the caller knows its sum is exact, else within rounding. */
static int sum_same(double a, double b, unsigned what)
{
    return what & VS_CMP_SUM_EXACT ? f64_same(a, b) : sum_close(a, b);
}

static int bin_same(const tsf_sbin *w, const tsf_bytes *f)
{
    return w->len == f->len && (!w->len || !memcmp(w->p, f->data, w->len));
}

#define DIFF(cond, ...)                                                                                      \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            snprintf(why, cap, __VA_ARGS__);                                                                 \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int tsf_vs_stats_differ(const tsf_wstats *w, const tsf_fmt_stats *f, unsigned what, char *why, size_t cap)
{
    int values = (what & VS_CMP_VALUES) != 0, sums = (what & VS_CMP_SUM) != 0;
    DIFF(w->count != f->count, "count %llu but %llu values decoded", (unsigned long long)f->count,
         (unsigned long long)w->count);
    if (!w->count) return 0;
    DIFF(w->start != f->start_time, "startTime %lld but the first time is %lld", (long long)f->start_time,
         (long long)w->start);
    DIFF(w->end != f->end_time, "endTime %lld but the last time is %lld", (long long)f->end_time,
         (long long)w->end);
    if (!values) return 0;
    switch (w->type) {
    case TSF_BOOLEAN:
        DIFF(w->v.i.first != (f->v.b.first != 0) || w->v.i.last != (f->v.b.last != 0), "first/last differ");
        DIFF(sums && w->v.i.sum != f->v.b.sum, "sum %lld but the values sum to %lld", (long long)f->v.b.sum,
             (long long)w->v.i.sum);
        break;
    case TSF_INT32:
    case TSF_DATE:
        DIFF(w->v.i.min != f->v.i32.min || w->v.i.max != f->v.i32.max,
             "min/max %d/%d but the values give %d/%d", f->v.i32.min, f->v.i32.max, w->v.i.min, w->v.i.max);
        DIFF(w->v.i.first != f->v.i32.first || w->v.i.last != f->v.i32.last, "first/last differ");
        DIFF(sums && w->v.i.sum != f->v.i32.sum, "sum %lld but the values sum to %lld", (long long)f->v.i32.sum,
             (long long)w->v.i.sum);
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        DIFF(w->v.l.min != f->v.i64.min || w->v.l.max != f->v.i64.max,
             "min/max %lld/%lld but the values give %lld/%lld", (long long)f->v.i64.min,
             (long long)f->v.i64.max, (long long)w->v.l.min, (long long)w->v.l.max);
        DIFF(w->v.l.first != f->v.i64.first || w->v.l.last != f->v.i64.last, "first/last differ");
        DIFF(sums && !sum_same(w->v.l.sum, f->v.i64.sum,
                               what | (tsf_vs_i64_sum_exact(w->v.l.min, w->v.l.max, w->count) ? VS_CMP_SUM_EXACT : 0u)),
             "sum %.17g but the values sum to %.17g", f->v.i64.sum, w->v.l.sum);
        break;
    case TSF_FLOAT:
        DIFF(!f64_same(w->v.f.min, f->v.f32.min) || !f64_same(w->v.f.max, f->v.f32.max),
             "min/max %.9g/%.9g but the values give %.9g/%.9g", f->v.f32.min, f->v.f32.max, w->v.f.min,
             w->v.f.max);
        DIFF(!f64_same(w->v.f.first, f->v.f32.first) || !f64_same(w->v.f.last, f->v.f32.last),
             "first/last differ");
        DIFF(sums && !sum_same(w->v.f.sum, f->v.f32.sum, what), "sum %.17g but the values sum to %.17g", f->v.f32.sum,
             w->v.f.sum);
        break;
    case TSF_DOUBLE:
        DIFF(!f64_same(w->v.d.min, f->v.f64.min) || !f64_same(w->v.d.max, f->v.f64.max),
             "min/max %.17g/%.17g but the values give %.17g/%.17g", f->v.f64.min, f->v.f64.max, w->v.d.min,
             w->v.d.max);
        DIFF(!f64_same(w->v.d.first, f->v.f64.first) || !f64_same(w->v.d.last, f->v.f64.last),
             "first/last differ");
        DIFF(sums && !sum_same(w->v.d.sum, f->v.f64.sum, what), "sum %.17g but the values sum to %.17g", f->v.f64.sum,
             w->v.d.sum);
        break;
    case TSF_TEXT:
        DIFF(!bin_same(&w->first, &f->v.bin.first) || !bin_same(&w->last, &f->v.bin.last),
             "first/last differ");
        break;
    case TSF_STRING:
        DIFF(!bin_same(&w->first, &f->v.bin.first) || !bin_same(&w->last, &f->v.bin.last),
             "first/last differ");
        DIFF(!bin_same(&w->min, &f->v.bin.min) || !bin_same(&w->max, &f->v.bin.max), "min/max differ");
        break;
    default:
        break;
    }
    return 0;
}

#undef DIFF

/* ---- the scan ------------------------------------------------------------------------------- */

tsf_status tsf_vs_scan_init(tsf_vs_scan *s, const uint8_t *file, size_t len, tsf_vs_problem_fn fn, void *ctx,
                        tsf_error *err)
{
    memset(s, 0, sizeof *s);
    s->file = file;
    s->len = len;
    s->problem = fn;
    s->ctx = ctx;
    s->tchunk = s->cur = -1;
    tsf_wbuf_init(&s->pstats, s->a);
    tsf_status st = tsf_codec_open(&s->codec, NULL, err);
    if (!st) st = tsf_compressor_open(&s->comp, NULL, err);
    return st;
}

void tsf_vs_scan_free(tsf_vs_scan *s)
{
    for (size_t i = 0; i < s->nchunks; i++) tsf_wstats_free(&s->chunks[i].stats, s->a);
    tsf_free(s->a, s->chunks, s->ccap * sizeof *s->chunks);
    tsf_free(s->a, s->groups, s->gcap * sizeof *s->groups);
    tsf_rd_buf *bufs[] = {&s->plain, &s->vals, &s->times, &s->ctimes, &s->tpages};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tsf_rd_buf_free(s->a, bufs[i]);
    tsf_wstats_free(&s->pstat, s->a);
    tsf_wbuf_free(&s->pstats);
    tsf_codec_close(s->codec);
    tsf_compressor_close(s->comp);
    memset(s, 0, sizeof *s);
}

static tsf_status oom(tsf_error *err)
{
    return tsf_err(err, TSF_ENOMEM, "verify: out of memory");
}

/* Decompressed body of the page `it` (the file bytes when UNCOMPRESSED). */
static tsf_status page_body(tsf_vs_scan *s, const tsf_walk_item *it, const uint8_t **p, size_t *n, tsf_error *err)
{
    const tsf_fmt_page_header *ph = &it->page;
    tsf_compression c = it->chunk.compression;
    if (c == TSF_UNCOMPRESSED) {
        *p = it->body;
        *n = it->body_len;
        return TSF_OK;
    }
    if (!tsf_compression_supported(c))
        return tsf_err(err, TSF_ENOTSUP, "page body at %llu: compression %d is not supported",
                       (unsigned long long)it->body_offset, (int)c);
    uint64_t cap = (uint64_t)ph->compressed_size * 4096;
    if (cap < VS_PAGE_MIN_CAP) cap = VS_PAGE_MIN_CAP;
    if (cap > VS_PAGE_MAX) cap = VS_PAGE_MAX;
    if (ph->uncompressed_size > cap)
        return tsf_err(err, TSF_ECORRUPT,
                       "page at %llu: uncompressedSize %u implausible for %u compressed bytes",
                       (unsigned long long)it->offset, ph->uncompressed_size, ph->compressed_size);
    tsf_status st = tsf_rd_buf_reserve(s->a, &s->plain, ph->uncompressed_size ? ph->uncompressed_size : 1, err);
    if (st) return st;
    st =
        tsf_compressor_decompress(s->comp, c, it->body, it->body_len, s->plain.p, ph->uncompressed_size, err);
    if (st && err && st == TSF_ECORRUPT) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", err->message);
        tsf_err(err, st, "page body at %llu (%s): %s", (unsigned long long)it->body_offset,
                tsf_compression_name(c) ? tsf_compression_name(c) : "?", m);
    }
    *p = s->plain.p;
    *n = ph->uncompressed_size;
    return st;
}

/* Decodes a time stream into s->times; timestamps must strictly ascend. */
static tsf_status decode_times(tsf_vs_scan *s, const tsf_walk_item *it, tsf_encoding enc, const uint8_t *p,
                               size_t len, size_t *n, tsf_error *err)
{
    size_t cnt = 0;
    tsf_status st = tsf_codec_count(TSF_INT64, enc, p, len, &cnt, err);
    if (st == TSF_ENOTSUP && it->page.has_stats && tsf_codec_can_decode(TSF_INT64, enc)) {
        cnt = it->page.stats.count;
        st = TSF_OK;
    }
    if (st) return st;
    if (cnt > len * 8 + 64)
        return tsf_err(err, TSF_ECORRUPT, "time stream of page at %llu: %zu values claimed in %zu bytes",
                       (unsigned long long)it->offset, cnt, len);
    if ((st = tsf_rd_buf_reserve(s->a, &s->times, (cnt ? cnt : 1) * sizeof(int64_t), err))) return st;
    int64_t *t = (int64_t *)s->times.p;
    if (cnt && (st = tsf_codec_decode(s->codec, TSF_INT64, enc, p, len, t, cnt, NULL, err))) return st;
    for (size_t i = 1; i < cnt; i++)
        if (t[i] <= t[i - 1])
            return tsf_err(err, TSF_ECORRUPT,
                           "time stream of page at %llu: time %lld at row %zu is not above %lld",
                           (unsigned long long)it->offset, (long long)t[i], i, (long long)t[i - 1]);
    *n = cnt;
    return TSF_OK;
}

static tsf_status decode_values(tsf_vs_scan *s, const tsf_walk_item *it, const uint8_t *p, size_t len, size_t n,
                                tsf_error *err)
{
    size_t esz = tsf_type_size(it->chunk.data_type);
    if (!esz)
        return tsf_err(err, TSF_ENOTSUP, "chunk at %llu: data type %d has no values",
                       (unsigned long long)it->chunk_offset, (int)it->chunk.data_type);
    /* n is bounded by the time stream (or a value page's rowCount, equal to its time page's rows) */
    tsf_status st = tsf_rd_buf_reserve(s->a, &s->vals, (n ? n : 1) * esz, err);
    if (st || !n) return st;
    st = tsf_codec_decode(s->codec, it->chunk.data_type, it->chunk.encoding, p, len, s->vals.p, n, NULL, err);
    if (st && err && st != TSF_ENOMEM) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", err->message);
        const char *tn = tsf_type_name(it->chunk.data_type), *en = tsf_encoding_name(it->chunk.encoding);
        tsf_err(err, st, "values of page at %llu (%s %s): %s", (unsigned long long)it->offset, tn ? tn : "?",
                en ? en : "?", m);
    }
    return st;
}

/* With s->restat (recover): 1 when a chunk whose value statistics alone disagree with its decoded values
 * is kept as decoded. Only for SPRINTZ, which does not return every integer written (extreme values
 * overflow, in the reference too): a writer that computed the statistics from its input leaves them
 * disagreeing with what every reader decodes, and the reference's recovery keeps those values. Elsewhere
 * such a disagreement marks damage (a changed byte that still decodes) and the chunk is dropped. */
static int restat_ok(const tsf_vs_scan *s, const tsf_vs_chunk *c)
{
    return s->restat && c->h.encoding == TSF_ENC_SPRINTZ;
}

/* Compares the page header statistics (if any) with s->pstat, then merges s->pstat into the chunk. With
 * restat_ok, a page whose count and times agree but whose value statistics do not is accepted and its
 * recomputed statistics are saved for the rewrite. */
static tsf_status page_stats(tsf_vs_scan *s, const tsf_walk_item *it, tsf_vs_chunk *c, tsf_error *err)
{
    char why[200];
    if (it->page.has_stats && it->page.uncompressed_size) {
        if (tsf_vs_stats_differ(&s->pstat, &it->page.stats, 0, why, sizeof why) ||
            (!restat_ok(s, c) && tsf_vs_stats_differ(&s->pstat, &it->page.stats, tsf_vs_cmp_rule(c->h.data_type, c->h.encoding), why,
                                                 sizeof why)))
            return tsf_err(err, TSF_ECORRUPT, "page statistics at %llu: %s", (unsigned long long)it->offset, why);
        if (s->restat) {
            if (!tsf_rd_lossy(c->h.data_type, c->h.encoding) && tsf_vs_stats_differ(&s->pstat, &it->page.stats, VS_CMP_VALUES | VS_CMP_SUM, why, sizeof why))
                c->restat = 1;
            size_t at = s->pstats.len;
            tsf_wbuf_be32(&s->pstats, 0);
            tsf_wstats_serialize(&s->pstat, &s->pstats);
            if (s->pstats.oom) return oom(err);
            uint32_t n = (uint32_t)(s->pstats.len - at - 4);
            for (int k = 0; k < 4; k++) s->pstats.p[at + (size_t)k] = (uint8_t)(n >> (24 - 8 * k));
        }
    }
    tsf_wstats_merge(&c->stats, &s->pstat, s->a);
    if (c->stats.oom || s->pstat.oom) return oom(err);
    return TSF_OK;
}

/* Decodes and checks one page of chunk c. */
static tsf_status check_page(tsf_vs_scan *s, const tsf_walk_item *it, tsf_vs_chunk *c, tsf_error *err)
{
    tsf_status st;
    const uint8_t *p;
    size_t len, n = 0;
    tsf_wstats_reset(&s->pstat);
    s->pstat.type = c->h.data_type;
    if (it->page.has_stats) c->claimed += it->page.stats.count;
    if (c->kind == TSF_CHUNK_VALUE) {
        if (c->npages >= s->ntpages)
            return tsf_err(err, TSF_ECORRUPT, "value page at %llu: page %u but its time chunk has %zu pages",
                           (unsigned long long)it->offset, c->npages, s->ntpages);
        const size_t *tp = (const size_t *)s->tpages.p + 2 * c->npages;
        const int64_t *t = (const int64_t *)s->ctimes.p + tp[0];
        size_t rows = tp[1];
        if (it->page.uncompressed_size == 0) return TSF_OK; /* empty page: every row null */
        if ((st = page_body(s, it, &p, &len, err))) return st;
        tsf_fmt_value_page vp;
        if ((st = tsf_fmt_parse_value_page(p, len, it->body_offset, &vp, err))) return st;
        if (vp.row_count != rows)
            return tsf_err(err, TSF_ECORRUPT,
                           "value page at %llu: rowCount %u but its time page has %zu rows",
                           (unsigned long long)it->offset, vp.row_count, rows);
        if ((st = decode_values(s, it, vp.values, vp.values_len, vp.present, err))) return st;
        if (vp.present) {
            size_t r0 = 0, r1 = rows - 1;
            while (!tsf_fmt_bitmap_get(vp.bitmap, r0)) r0++;
            while (!tsf_fmt_bitmap_get(vp.bitmap, r1)) r1--;
            tsf_wstats_update(&s->pstat, t[r0], t[r1], s->vals.p, vp.present, s->a);
        }
        n = vp.present;
    } else {
        if (it->page.uncompressed_size == 0) {
            if (c->kind == TSF_CHUNK_TIME)
                return tsf_err(err, TSF_ECORRUPT, "time page at %llu: empty", (unsigned long long)it->offset);
            return page_stats(s, it, c, err);
        }
        if ((st = page_body(s, it, &p, &len, err))) return st;
        if (c->kind == TSF_CHUNK_TIME) {
            if ((st = decode_times(s, it, c->h.encoding, p, len, &n, err))) return st;
            const int64_t *t = (const int64_t *)s->times.p;
            if (s->nctimes && n && t[0] <= ((const int64_t *)s->ctimes.p)[s->nctimes - 1])
                return tsf_err(err, TSF_ECORRUPT,
                               "time page at %llu: time %lld is not above the previous page's",
                               (unsigned long long)it->offset, (long long)t[0]);
            if ((st = tsf_rd_buf_reserve(s->a, &s->ctimes, (s->nctimes + n + 1) * sizeof(int64_t), err)) ||
                (st = tsf_rd_buf_reserve(s->a, &s->tpages, (s->ntpages + 1) * 2 * sizeof(size_t), err)))
                return st;
            memcpy((int64_t *)s->ctimes.p + s->nctimes, t, n * sizeof(int64_t));
            size_t *tp = (size_t *)s->tpages.p + 2 * s->ntpages;
            tp[0] = s->nctimes;
            tp[1] = n;
            s->nctimes += n;
            s->ntpages++;
            if (n) tsf_wstats_update_time(&s->pstat, t[0], t[n - 1], n);
        } else {
            tsf_fmt_nonaligned_page pg;
            if ((st = tsf_fmt_parse_nonaligned_page(p, len, it->body_offset, &pg, err))) return st;
            if ((st = decode_times(s, it, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, &n, err))) return st;
            const int64_t *t = (const int64_t *)s->times.p;
            if (c->stats.count && n && t[0] <= c->stats.end)
                return tsf_err(err, TSF_ECORRUPT, "page at %llu: time %lld is not above the previous page's",
                               (unsigned long long)it->offset, (long long)t[0]);
            if ((st = decode_values(s, it, pg.values, pg.values_len, n, err))) return st;
            if (n) tsf_wstats_update(&s->pstat, t[0], t[n - 1], s->vals.p, n, s->a);
        }
    }
    if (!it->page.has_stats) c->claimed += n;
    c->points += n;
    return page_stats(s, it, c, err);
}

/* Closes the chunk whose pages were walked: page-count checks. */
static void end_chunk(tsf_vs_scan *s)
{
    if (s->cur < 0) return;
    tsf_vs_chunk *c = &s->chunks[s->cur];
    s->cur = -1;
    if (!c->ok || !c->restat) s->pstats.len = c->pstats_off; /* kept only for chunks to rewrite */
    if (!c->ok) return;
    if (!tsf_fmt_chunk_multi_page(c->h.marker) && c->npages > 1) {
        tsf_vs_problem(s, c->offset, "chunk at %llu: marker 0x%02x announces one page but it holds %u",
                   (unsigned long long)c->offset, c->h.marker, c->npages);
        c->ok = 0;
    } else if (c->kind == TSF_CHUNK_VALUE && c->h.data_size && c->npages != s->ntpages) {
        tsf_vs_problem(s, c->offset, "value chunk at %llu: %u pages but its time chunk has %zu",
                   (unsigned long long)c->offset, c->npages, s->ntpages);
        c->ok = 0;
    }
    if (c->kind != TSF_CHUNK_TIME) {
        s->points += c->points;
    }
}

static tsf_status begin_chunk(tsf_vs_scan *s, const tsf_walk_item *it, tsf_error *err)
{
    if (s->nchunks == s->ccap) {
        size_t nc = s->ccap ? s->ccap * 2 : 64;
        tsf_vs_chunk *p = tsf_realloc(s->a, s->chunks, s->ccap * sizeof *p, nc * sizeof *p);
        if (!p) return oom(err);
        s->chunks = p;
        s->ccap = nc;
    }
    tsf_vs_chunk *c = &s->chunks[s->nchunks];
    memset(c, 0, sizeof *c);
    c->group = s->ngroups - 1;
    c->offset = it->offset;
    c->h = it->chunk;
    c->end = it->offset + it->chunk.header_len + it->chunk.data_size;
    c->kind = tsf_fmt_chunk_kind(it->chunk.marker);
    c->ok = 1;
    c->pstats_off = s->pstats.len;
    tsf_wstats_init(&c->stats, it->chunk.data_type);
    s->cur = (long)s->nchunks++;
    s->groups[s->ngroups - 1].nchunks++;
    if (c->kind == TSF_CHUNK_TIME) {
        if (it->chunk.data_type != TSF_VECTOR) {
            tsf_vs_problem(s, c->offset, "time chunk at %llu: data type %d, not VECTOR",
                       (unsigned long long)c->offset, (int)it->chunk.data_type);
            c->ok = 0;
        }
        s->tchunk = s->cur;
        s->nctimes = s->ntpages = 0;
    } else if (c->kind == TSF_CHUNK_VALUE) {
        if (s->tchunk < 0) {
            tsf_vs_problem(s, c->offset, "value chunk at %llu: no time chunk before it in its chunk group",
                       (unsigned long long)c->offset);
            c->ok = 0;
        } else if (!s->chunks[s->tchunk].ok) {
            c->ok = 0; /* its time chunk is damaged (reported there) */
        }
    }
    if (c->ok && (it->chunk.data_type == TSF_VECTOR) != (c->kind == TSF_CHUNK_TIME)) {
        tsf_vs_problem(s, c->offset, "chunk at %llu: data type %d does not fit marker 0x%02x",
                   (unsigned long long)c->offset, (int)it->chunk.data_type, it->chunk.marker);
        c->ok = 0;
    }
    if (c->ok && c->kind != TSF_CHUNK_TIME && it->chunk.measurement.len == 0) {
        /* readers take a device's first series named "" for its time column */
        tsf_vs_problem(s, c->offset, "chunk at %llu: empty measurement name outside a time chunk",
                   (unsigned long long)c->offset);
        c->ok = 0;
    }
    if (c->ok && c->kind != TSF_CHUNK_TIME && !tsf_type_size(it->chunk.data_type)) {
        tsf_vs_problem(s, c->offset, "chunk at %llu: data type %d is not supported",
                   (unsigned long long)c->offset, (int)it->chunk.data_type);
        c->ok = 0;
    }
    return TSF_OK;
}

static tsf_status begin_group(tsf_vs_scan *s, const tsf_walk_item *it, uint64_t hdr_end, tsf_error *err)
{
    if (s->ngroups == s->gcap) {
        size_t nc = s->gcap ? s->gcap * 2 : 16;
        tsf_vs_group *p = tsf_realloc(s->a, s->groups, s->gcap * sizeof *p, nc * sizeof *p);
        if (!p) return oom(err);
        s->groups = p;
        s->gcap = nc;
    }
    tsf_vs_group *g = &s->groups[s->ngroups++];
    g->offset = it->offset;
    g->hdr_end = hdr_end;
    g->dev = it->device;
    g->chunk0 = s->nchunks;
    g->nchunks = 0;
    s->tchunk = -1;
    s->nctimes = s->ntpages = 0;
    return TSF_OK;
}

tsf_status tsf_vs_scan_run(tsf_vs_scan *s, size_t limit, tsf_error *err)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    if (limit > s->len) limit = s->len;
    tsf_status st = tsf_walk_init(&w, s->file, limit, &e);
    if (st) {
        tsf_vs_problem(s, 0, "%s", e.message);
        s->stopped = 1;
        return st == TSF_ENOMEM ? st : TSF_OK;
    }
    s->version = w.version;
    for (;;) {
        st = tsf_walk_next(&w, &it, &e);
        if (st == TSF_ENOMEM) return tsf_err(err, st, "%s", e.message);
        if (st) {
            uint64_t at = w.pos;
            if (s->cur >= 0) { /* a page header failed: the chunk header gave the chunk's end */
                tsf_vs_chunk *c = &s->chunks[s->cur];
                tsf_vs_problem(s, at, "%s", e.message);
                c->ok = 0;
                uint64_t next = c->end;
                s->cur = -1;
                if (next > at && next <= limit) {
                    tsf_walk_init_at(&w, s->file, limit, s->version, next);
                    continue;
                }
            } else {
                /* a chunk header whose pages run past the bytes: a torn chunk of a crashed file */
                tsf_fmt_chunk_header h;
                size_t used;
                if (at < limit && tsf_fmt_is_chunk_marker(s->file[at]) && s->ngroups &&
                    tsf_fmt_parse_chunk_header(s->file + at, limit - at, at, &h, &used, NULL) == TSF_OK &&
                    h.data_size > limit - at - used) {
                    char dn[512];
                    s->torn_chunks++;
                    tsf_fmt_device_to_string(&s->groups[s->ngroups - 1].dev, dn, sizeof dn);
                    tsf_vs_problem(s, at,
                               "chunk at %llu (%s.%.*s): its %u bytes of pages run past the end of the data (%zu): "
                               "the file ends inside its chunk group",
                               (unsigned long long)at, dn, (int)h.measurement.len, (const char *)h.measurement.data,
                               h.data_size, limit);
                } else {
                    tsf_vs_problem(s, at, "%s", e.message);
                }
            }
            s->stopped = 1;
            s->end = at;
            return TSF_OK;
        }
        switch (it.kind) {
        case TSF_WALK_CHUNK_GROUP:
            end_chunk(s);
            if ((st = begin_group(s, &it, w.pos, err))) return st;
            break;
        case TSF_WALK_CHUNK:
            end_chunk(s);
            if ((st = begin_chunk(s, &it, err))) return st;
            if (it.chunk.data_size == 0) end_chunk(s);
            break;
        case TSF_WALK_PAGE: {
            tsf_vs_chunk *c = &s->chunks[s->cur];
            s->pages++;
            if (c->ok) {
                st = check_page(s, &it, c, &e);
                if (st == TSF_ENOMEM) return tsf_err(err, st, "%s", e.message);
                if (st) {
                    tsf_vs_problem(s, it.offset, "%s", e.message);
                    c->ok = 0;
                }
            } else if (it.page.has_stats) {
                c->claimed += it.page.stats.count;
            }
            c->npages++;
            if (!w.in_chunk) end_chunk(s);
            break;
        }
        case TSF_WALK_OP_INDEX:
            end_chunk(s);
            break;
        case TSF_WALK_END:
            end_chunk(s);
            s->end = it.offset;
            s->separator = !w.truncated;
            return TSF_OK;
        }
    }
}

/* ---- tsf_verify ----------------------------------------------------------------------------- */

typedef struct vf_ctx {
    void (*fn)(void *ctx, const tsf_problem *p);
    void *ctx;
} vf_ctx;

static void vf_forward(void *ctx, uint64_t off, const char *msg, int warning)
{
    vf_ctx *v = ctx;
    tsf_problem p = {off, msg, warning};
    if (v->fn) v->fn(v->ctx, &p);
}

static long find_chunk(const tsf_vs_scan *s, uint64_t off)
{
    size_t lo = 0, hi = s->nchunks;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (s->chunks[m].offset < off)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < s->nchunks && s->chunks[lo].offset == off ? (long)lo : -1;
}

/* Bloom probe with the key built from the device's segment bytes (names may hold NUL bytes). */
static int bloom_has(const tsf_reader *r, const tsf_rd_device *d, const tsf_rd_series *se, const tsf_allocator *a)
{
    if (!r->bloom) return 1;
    tsf_wbuf key;
    tsf_wbuf_init(&key, a);
    for (uint32_t i = 0; i < d->id.nseg; i++) {
        tsf_fmt_str sg = tsf_fmt_device_segment(&d->id, i);
        if (i) tsf_wbuf_u8(&key, '.');
        if (sg.is_null)
            tsf_wbuf_put(&key, "null", 4);
        else
            tsf_wbuf_put(&key, sg.data, sg.len);
    }
    tsf_wbuf_u8(&key, '.');
    tsf_wbuf_put(&key, se->tsm.measurement.data, se->tsm.measurement.len);
    tsf_bloom bf = {r->fm.bloom_size, r->fm.bloom_k, r->bloom, r->a};
    int hit = key.oom || tsf_bloom_may_contain(&bf, key.p, key.len);
    tsf_wbuf_free(&key);
    return hit;
}

/* Checks one series of the index against the chunks the scan found. */
static tsf_status check_series(tsf_vs_scan *s, tsf_reader *r, const tsf_rd_device *d, const tsf_rd_series *se,
                               tsf_chunk_kind kind, tsf_error *err)
{
    char why[200], dn[512];
    size_t pos = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    tsf_error e;
    tsf_wstats sum;
    tsf_wstats_init(&sum, se->tsm.data_type);
    int all_ok = 1;
    uint64_t prev = 0;
    tsf_status st;
    const char *mname = se->name;
    while ((st = tsf_mip_next_chunk_meta(&se->tsm, &pos, &off, &cs, &e)) == TSF_OK) {
        if (off <= prev && prev) {
            tsf_vs_problem(s, se->tsm.chunks_base,
                       "TimeseriesMetadata of %s.%s: chunk offsets not ascending (%llu after %llu)", d->name,
                       mname, (unsigned long long)off, (unsigned long long)prev);
        }
        prev = off;
        long ci = find_chunk(s, off);
        if (ci < 0) {
            all_ok = 0;
            if (!s->stopped || off < s->end)
                tsf_vs_problem(s, off, "TimeseriesMetadata of %s.%s lists a chunk at %llu: no chunk header there",
                           d->name, mname, (unsigned long long)off);
            continue;
        }
        tsf_vs_chunk *c = &s->chunks[ci];
        c->listed = 1;
        const tsf_vs_group *g = &s->groups[c->group];
        tsf_fmt_device_to_string(&g->dev, dn, sizeof dn);
        const tsf_fmt_str *m = &se->tsm.measurement; /* bytes: a name may hold a NUL */
        if (c->h.measurement.len != m->len || (m->len && memcmp(c->h.measurement.data, m->data, m->len)) ||
            strcmp(dn, d->name) || c->kind != kind || c->h.data_type != se->tsm.data_type) {
            tsf_vs_problem(
                s, off,
                "TimeseriesMetadata of %s.%s lists the chunk at %llu, which is %.*s of %s (%s, type %d)",
                d->name, mname, (unsigned long long)off, (int)c->h.measurement.len,
                (const char *)c->h.measurement.data, dn,
                c->kind == TSF_CHUNK_TIME    ? "time"
                : c->kind == TSF_CHUNK_VALUE ? "value"
                                             : "non-aligned",
                (int)c->h.data_type);
            all_ok = 0;
            continue;
        }
        if (!c->ok) {
            all_ok = 0;
            continue;
        }
        if (tsf_vs_stats_differ(&c->stats, &cs, tsf_vs_cmp_rule(c->h.data_type, c->h.encoding), why, sizeof why)) {
            tsf_vs_problem(s, off, "ChunkMetadata of %s.%s (chunk at %llu): %s", d->name, mname,
                       (unsigned long long)off, why);
            /* data and metadata disagree: recover drops it (but see restat_ok) */
            if (!restat_ok(s, c) || tsf_vs_stats_differ(&c->stats, &cs, 0, why, sizeof why)) c->ok = 0;
            all_ok = 0;
            continue;
        }
        if (tsf_rd_lossy(c->h.data_type, c->h.encoding)) all_ok = 0; /* series values not comparable */
        tsf_wstats_merge(&sum, &c->stats, s->a);
    }
    if (st != TSF_ENOTFOUND) tsf_vs_problem(s, se->tsm.chunks_base, "%s", e.message);
    if (sum.oom) {
        tsf_wstats_free(&sum, s->a);
        return oom(err);
    }
    if (all_ok && st == TSF_ENOTFOUND && tsf_vs_stats_differ(&sum, &se->tsm.stats, VS_CMP_VALUES | VS_CMP_SUM, why, sizeof why))
        tsf_vs_problem(s, se->tsm.chunks_base, "TimeseriesMetadata of %s.%s: statistics %s", d->name, mname, why);
    else if (!all_ok && sum.count > se->tsm.stats.count)
        tsf_vs_problem(s, se->tsm.chunks_base,
                   "TimeseriesMetadata of %s.%s: count %llu below the %llu values decoded", d->name, mname,
                   (unsigned long long)se->tsm.stats.count, (unsigned long long)sum.count);
    tsf_wstats_free(&sum, s->a);
    uint8_t role = kind == TSF_CHUNK_TIME ? 0x80 : kind == TSF_CHUNK_VALUE ? 0x40 : 0;
    uint8_t want = (uint8_t)(role | (se->nchunks > 1 ? 1 : 0));
    if (se->tsm.meta_type != want)
        tsf_vs_warning(s, se->tsm.chunks_base,
                   "TimeseriesMetadata of %s.%s: type byte 0x%02x where the writer puts 0x%02x (%s column, %zu "
                   "chunk%s); read as the reference reads it (only its low six bits count)",
                   d->name, mname, se->tsm.meta_type, want,
                   kind == TSF_CHUNK_TIME    ? "time"
                   : kind == TSF_CHUNK_VALUE ? "value"
                                             : "non-aligned",
                   (size_t)se->nchunks, se->nchunks == 1 ? "" : "s");
    if (!bloom_has(r, d, se, s->a))
        tsf_vs_problem(s, r->meta_pos, "bloom filter: series %s.%s is missing", d->name, mname);
    return TSF_OK;
}

/* Chunk group of the chunk at off (SIZE_MAX: no chunk there). */
static size_t group_at(const tsf_vs_scan *s, uint64_t off)
{
    long ci = find_chunk(s, off);
    return ci < 0 ? SIZE_MAX : s->chunks[ci].group;
}

/* The reference pairs an aligned device's chunks by position: the i-th ChunkMetadata of every value
 * column goes with the i-th of the time column (a value column with fewer throws, extra ones are never
 * read). So each value column must list exactly one chunk per time chunk, each in that time chunk's
 * chunk group (an all-null column as an empty chunk). */
static tsf_status check_aligned_steps(tsf_vs_scan *s, const tsf_reader *r, const tsf_rd_device *d, tsf_error *err)
{
    size_t nt = d->time.nchunks;
    size_t *tg = tsf_alloc(s->a, (nt ? nt : 1) * sizeof *tg);
    if (!tg) return oom(err);
    size_t pos = 0, n = 0;
    uint64_t off;
    tsf_fmt_stats cs;
    while (n < nt && tsf_mip_next_chunk_meta(&d->time.tsm, &pos, &off, &cs, NULL) == TSF_OK) tg[n++] = group_at(s, off);
    for (size_t j = 0; j < d->nseries; j++) {
        const tsf_rd_series *se = &r->series[d->series0 + j];
        size_t i = 0;
        pos = 0;
        while (i < n && tsf_mip_next_chunk_meta(&se->tsm, &pos, &off, &cs, NULL) == TSF_OK) {
            size_t g = group_at(s, off);
            if (g != tg[i] && g != SIZE_MAX && tg[i] != SIZE_MAX) {
                tsf_vs_problem(s, off,
                           "aligned device %s: value column %s lists its chunk %zu at %llu in the chunk group at "
                           "%llu, but time chunk %zu is in the one at %llu (readers pair them by position)",
                           d->name, se->name, i, (unsigned long long)off,
                           (unsigned long long)s->groups[g].offset, i,
                           (unsigned long long)s->groups[tg[i]].offset);
                break;
            }
            i++;
        }
        if (se->nchunks != nt)
            tsf_vs_problem(s, se->tsm.chunks_base,
                       "aligned device %s: value column %s lists %u chunks but the time column %zu (readers pair "
                       "them by position; the reference fails on fewer and never reads extra ones)",
                       d->name, se->name, se->nchunks, nt);
    }
    tsf_free(s->a, tg, (nt ? nt : 1) * sizeof *tg);
    return TSF_OK;
}

tsf_status tsf_vs_check_index(tsf_vs_scan *s, tsf_reader *r, tsf_error *err)
{
    tsf_error e;
    tsf_status st = tsf_rd_ensure_index(r, &e);
    if (st == TSF_ENOMEM) return tsf_err(err, st, "%s", e.message);
    if (st) {
        tsf_vs_problem(s, r->fm.meta_offset, "index: %s", e.message);
        return TSF_OK;
    }
    if (s->separator && s->end != r->fm.meta_offset)
        tsf_vs_problem(s, s->end, "separator at %llu but TsFileMetadata says metaOffset %llu",
                   (unsigned long long)s->end, (unsigned long long)r->fm.meta_offset);
    for (size_t i = 0; i < r->ndevices; i++) {
        const tsf_rd_device *d = &r->devices[i];
        if (d->aligned && (st = check_series(s, r, d, &d->time, TSF_CHUNK_TIME, err))) return st;
        for (size_t j = 0; j < d->nseries; j++) {
            st = check_series(s, r, d, &r->series[d->series0 + j],
                              d->aligned ? TSF_CHUNK_VALUE : TSF_CHUNK_NONALIGNED, err);
            if (st) return st;
        }
        if (d->aligned && (st = check_aligned_steps(s, r, d, err))) return st;
    }
    for (size_t i = 0; i < s->nchunks; i++) {
        const tsf_vs_chunk *c = &s->chunks[i];
        if (!c->listed)
            tsf_vs_problem(s, c->offset, "chunk at %llu (%.*s) is not listed in the index",
                       (unsigned long long)c->offset, (int)c->h.measurement.len,
                       (const char *)c->h.measurement.data);
    }
    return TSF_OK;
}

tsf_status tsf_verify(const char *path, void (*on_problem)(void *ctx, const tsf_problem *p), void *ctx,
                      tsf_verify_report *report, tsf_error *err)
{
    if (!path) return tsf_err(err, TSF_EINVAL, "tsf_verify: path is required");
    if (report) memset(report, 0, sizeof *report);
    const uint8_t *file;
    size_t len;
    tsf_status st = tsf_vs_map_file(path, &file, &len, err);
    if (st) return st;
    vf_ctx vc = {on_problem, ctx};
    tsf_vs_scan s;
    tsf_reader *r = NULL;
    if ((st = tsf_vs_scan_init(&s, file, len, vf_forward, &vc, err))) goto out;
    size_t limit = len;
    tsf_error e;
    int head_ok = 0;
    if (tsf_fmt_parse_head(file, len, &(int){0}, &e) != TSF_OK) {
        tsf_vs_problem(&s, 0, "head: %s", e.message);
    } else {
        head_ok = 1;
        if (!tsf_fmt_is_complete(file, len)) {
            tsf_vs_problem(
                &s, len,
                "no tail at %zu: the file is incomplete (a crashed writer?); recovery can repair it", len);
        } else {
            st = tsf_reader_open_memory(&r, file, len, NULL, &e);
            if (st == TSF_ENOMEM) {
                tsf_err(err, st, "%s", e.message);
                goto out;
            }
            if (st) {
                r = NULL;
                tsf_vs_problem(&s, len - TSF_FMT_TAIL_LEN, "tail/TsFileMetadata: %s", e.message);
            } else if (r->fm.meta_offset < len) {
                limit = (size_t)r->fm.meta_offset + 1;
            }
        }
    }
    if (head_ok && (st = tsf_vs_scan_run(&s, limit, err))) goto out;
    if (head_ok && !s.separator && !s.stopped && r)
        tsf_vs_problem(&s, s.end, "data area ends at %llu without a separator", (unsigned long long)s.end);
    if (r && (st = tsf_vs_check_index(&s, r, err))) goto out;
    if (report) {
        report->chunk_groups = s.ngroups;
        report->chunks = s.nchunks;
        report->pages = s.pages;
        report->points = s.points;
        report->problems = s.nproblems;
        report->warnings = s.nwarnings;
    }
    st = s.nproblems
             ? tsf_err(err, TSF_ECORRUPT, "%s: %llu problem(s) found", path, (unsigned long long)s.nproblems)
             : TSF_OK;
out:
    tsf_reader_close(r);
    tsf_vs_scan_free(&s);
    tsf_vs_unmap_file(file, len);
    return st;
}
