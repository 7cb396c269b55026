/*
 * page_index_build.c - the page-time index of one TsFile built after the fact from a reader: every series'
 * chunks (metadata index) and page headers (container format §6-§7; single-page chunks take the chunk's
 * statistics) go to the builder of src/format/page_index_file.c through a tsf_pix_src, the same builder the
 * writer uses at close (tsf_writer_options.page_index), so both give a file the same index bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "page_index_internal.h"

tsf_status tsf_pix_columns(tsf_reader *r, const tsf_allocator *a, size_t **col0, size_t *ncols, tsf_error *err)
{
    size_t nd = r->ndevices, n = 0;
    size_t *c = tsf_calloc(a, nd + 1, sizeof *c);
    if (!c) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    for (size_t d = 0; d < nd; d++) {
        c[d] = n;
        n += r->devices[d].nseries + (r->devices[d].aligned ? 1 : 0);
    }
    c[nd] = n;
    *col0 = c;
    *ncols = n;
    return TSF_OK;
}

tsf_status tsf_pix_reader_tail_crc(tsf_reader *r, uint64_t *out, tsf_error *err)
{
    size_t len = r->size < PIX_TAIL ? (size_t)r->size : PIX_TAIL;
    tsf_rd_buf b = {0};
    const uint8_t *p;
    tsf_status st = tsf_rd_fetch(r, r->size - len, len, &b, &p, err);
    if (st == TSF_OK) *out = tsf_pix_tail_crc(p, len);
    tsf_rd_buf_free(r->a, &b);
    return st;
}

char *tsf_pix_idx_name(const tsf_allocator *a, const char *tsfile, size_t *n)
{
    *n = strlen(tsfile);
    char *path = tsf_alloc(a, *n + 8);
    if (path) {
        memcpy(path, tsfile, *n);
        memcpy(path + *n, ".tsfidx", 8);
    }
    return path;
}

/* The chunks of one device of a file being read (tsf_pix_src). */
typedef struct rd_src {
    tsf_reader *r;
    const tsf_rd_device *d;
    const tsf_allocator *a; /* of the page buffers */
    tsf_rd_buf *buf;
} rd_src;

static tsf_status rd_next_chunk(void *ud, size_t j, size_t *pos, uint64_t *off, int64_t *start, int64_t *end,
                                tsf_error *err)
{
    const rd_src *s = ud;
    const tsf_rd_series *se = j == TSF_PIX_TIME ? &s->d->time : &s->r->series[s->d->series0 + j];
    tsf_fmt_stats cs;
    tsf_status st = tsf_mip_next_chunk_meta(&se->tsm, pos, off, &cs, err);
    if (st == TSF_OK) *start = cs.start_time, *end = cs.end_time;
    return st;
}

static tsf_status rd_pages(void *ud, uint64_t coff, int64_t start, int64_t end, int times, tsf_pix_bufs *w,
                           size_t *n, int *ok, tsf_error *err)
{
    const rd_src *s = ud;
    tsf_fmt_chunk_header h;
    uint64_t dp, de, fetched = 0;
    tsf_status st = tsf_rd_read_chunk_header(s->r, coff, s->buf, &h, &dp, &de, &fetched, err);
    if (st) return st;
    *n = 0;
    *ok = 1;
    int multi = tsf_fmt_chunk_multi_page(h.marker);
    while (dp < de) {
        tsf_fmt_page_header ph;
        if ((st = tsf_rd_read_page_header(s->r, dp, de, &h, s->buf, &ph, &fetched, err))) return st;
        if (times && multi && !ph.has_stats) *ok = 0;
        if (tsf_pix_bufs_set(s->a, w, *n, dp, times, ph.has_stats ? ph.stats.start_time : start,
                             ph.has_stats ? ph.stats.end_time : end))
            return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        (*n)++;
        dp += ph.header_len + ph.compressed_size;
    }
    return TSF_OK;
}

tsf_status tsf_pix_walk_device(tsf_pix_build *b, tsf_reader *r, size_t d, size_t col, tsf_rd_buf *buf,
                               tsf_pix_bufs *w, tsf_pix_bufs *v, tsf_error *err)
{
    const tsf_rd_device *dv = &r->devices[d];
    rd_src s = {r, dv, b->a, buf};
    tsf_pix_src src = {&s, rd_next_chunk, rd_pages, r->fm.meta_offset};
    if (dv->aligned) return tsf_pix_walk_aligned(b, &src, dv->nseries, col, w, v, err);
    tsf_status st = TSF_OK;
    for (size_t j = 0; j < dv->nseries && !st; j++) st = tsf_pix_walk_series(b, &src, j, col + j, w, err);
    return st;
}

tsf_status tsf_page_index_build(tsf_reader *r, const char *path, uint64_t *npages, tsf_error *err)
{
    if (!r || !path) return tsf_err(err, TSF_EINVAL, "tsf_page_index_build: reader and path are required");
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    tsf_pix_build b = {.a = r->a, .tw = 3};
    tsf_pix_bufs w = {0}, v = {0};
    tsf_rd_buf buf = {0};
    size_t *col0 = NULL, ncols = 0;
    uint64_t nlate = 0;
    if ((st = tsf_pix_columns(r, r->a, &col0, &ncols, err))) return st;
    for (size_t d = 0; d < r->ndevices && !st; d++) st = tsf_pix_walk_device(&b, r, d, col0[d], &buf, &w, &v, err);
    uint64_t hdr[PIX_H_COUNT] = {PIX_MAGIC, r->size, 0, 0, 0, 0, 0, r->ndevices};
    if (!st) st = tsf_pix_reader_tail_crc(r, &hdr[PIX_H_CRC], err);
    if (!st) st = tsf_pix_write(&b, path, ncols, hdr, NULL, 0, &nlate, err);
    if (!st && npages) *npages = b.np;
    tsf_pix_bufs_free(r->a, &w);
    tsf_pix_bufs_free(r->a, &v);
    tsf_rd_buf_free(r->a, &buf);
    tsf_pix_build_free(&b);
    tsf_free(r->a, col0, (r->ndevices + 1) * sizeof *col0);
    return st;
}

tsf_status tsf_page_index_build_file(const char *tsfile, const tsf_allocator *allocator, uint64_t *npages,
                                     tsf_error *err)
{
    if (!tsfile) return tsf_err(err, TSF_EINVAL, "tsf_page_index_build_file: tsfile is required");
    tsf_reader_options o;
    tsf_reader_options_init(&o);
    o.allocator = allocator;
    o.page_index = 0;
    tsf_reader *r;
    tsf_status st = tsf_reader_open(&r, tsfile, &o, err);
    if (st) return st;
    size_t n;
    char *path = tsf_pix_idx_name(r->a, tsfile, &n);
    st = path ? tsf_page_index_build(r, path, npages, err) : tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (path) tsf_free(r->a, path, n + 8);
    tsf_reader_close(r);
    return st;
}
