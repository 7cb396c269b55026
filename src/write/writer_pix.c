/*
 * writer_pix.c - the page-time index a file writer leaves at close (tsf_writer_options.page_index:
 * `<path>.tsfidx`, doc/reader.md "Page-time index"). Every chunk written records its offset, statistics'
 * start and end, and its pages' header offsets and start/end times (tsf_wpix_chunk, from the page table and
 * page statistics the writer holds when it writes the chunk); at close the devices and series are put in the
 * order a reader numbers them (the metadata index order: devices by tsf_mi_device_cmp, series by name) and
 * handed to the builder of src/format/page_index_file.c, which the reader side uses too: the bytes equal
 * those of tsf_page_index_build_file on the finished file, without reading it back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bytes.h"
#include "../format/format.h"
#include "../format/page_index_file.h"
#include "writer.h"

typedef struct wpix_chunk {
    const wcol *c;
    uint64_t off;
    int64_t start, end; /* chunk statistics */
    size_t p0, np;      /* pages [p0, p0 + np) of tsf_wpix's page arrays */
} wpix_chunk;

/* One page written: header offset, and start and end (statistics when the header holds them). */
typedef struct wpix_page {
    uint64_t h;
    int64_t s, e;
    int hs; /* 1 = the page header holds statistics */
} wpix_page;

struct tsf_wpix {
    wpix_chunk *ck; /* in file order */
    size_t nck, ckcap;
    wpix_page *pg;
    size_t npg, pgcap;
};

tsf_status tsf_wpix_init(tsf_writer *w, tsf_error *err)
{
    if (!(w->pix = tsf_calloc(w->alloc, 1, sizeof *w->pix)))
        return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
    return TSF_OK;
}

void tsf_wpix_free(tsf_writer *w)
{
    struct tsf_wpix *p = w->pix;
    if (!p) return;
    tsf_free(w->alloc, p->ck, p->ckcap * sizeof *p->ck);
    tsf_free(w->alloc, p->pg, p->pgcap * sizeof *p->pg);
    tsf_free(w->alloc, p, sizeof *p);
    w->pix = NULL;
}

tsf_status tsf_wpix_chunk(tsf_writer *w, const wcol *c, const wchunk *k, uint64_t off, size_t hlen, size_t np,
                          tsf_error *err)
{
    struct tsf_wpix *p = w->pix;
    int multi = k->npages > 1;
    if (tsf_pix_grow(w->alloc, (void **)&p->ck, &p->ckcap, p->nck + 1, sizeof *p->ck) ||
        tsf_pix_grow(w->alloc, (void **)&p->pg, &p->pgcap, p->npg + np, sizeof *p->pg))
        return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page index)");
    p->ck[p->nck++] = (wpix_chunk){c, off, k->cstat.start, k->cstat.end, p->npg, np};
    uint64_t pos = off + hlen;
    for (size_t i = 0; i < np; i++) {
        const wpage *pg = &k->pages[i];
        wpix_page *q = &p->pg[p->npg++];
        *q = (wpix_page){pos, k->cstat.start, k->cstat.end, multi && pg->usize};
        pos += tsf_fmt_page_header_size(pg->usize, pg->csize, multi ? pg->stats_len : 0);
        if (!pg->usize) continue;
        pos += pg->csize;
        if (!q->hs) continue;
        tsf_fmt_stats st;
        size_t used;
        tsf_status s = tsf_fmt_parse_stats(k->pstats.p + pg->stats_off, pg->stats_len, 0, c->type, &st, &used, err);
        if (s) return s;
        q->s = st.start_time;
        q->e = st.end_time;
    }
    return TSF_OK;
}

/* One device being walked: its columns' chunk runs (reader order; time: the aligned time column). */
typedef struct wsrc {
    const struct tsf_wpix *p;
    const tsf_allocator *a;
    const wpix_chunk *const *run; /* chunks sorted by column, then offset */
    const size_t *r0, *rn;        /* per column of the device: first chunk in run, count */
    size_t t0, tn;                /* the time column's */
} wsrc;

static tsf_status w_next_chunk(void *ud, size_t j, size_t *pos, uint64_t *off, int64_t *start, int64_t *end,
                               tsf_error *err)
{
    const wsrc *s = ud;
    size_t r0 = j == TSF_PIX_TIME ? s->t0 : s->r0[j], n = j == TSF_PIX_TIME ? s->tn : s->rn[j];
    if (*pos >= n) return tsf_err(err, TSF_ENOTFOUND, "page index: no more chunks");
    const wpix_chunk *c = s->run[r0 + (*pos)++];
    *off = c->off;
    *start = c->start;
    *end = c->end;
    return TSF_OK;
}

static tsf_status w_pages(void *ud, uint64_t off, int64_t start, int64_t end, int times, tsf_pix_bufs *w,
                          size_t *n, int *ok, tsf_error *err)
{
    const wsrc *s = ud;
    size_t lo = 0, hi = s->p->nck; /* chunks are in file order */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->p->ck[mid].off < off) lo = mid + 1;
        else hi = mid;
    }
    *n = 0;
    *ok = 1;
    if (lo == s->p->nck || s->p->ck[lo].off != off)
        return tsf_err(err, TSF_ESTATE, "page index: no chunk written at %llu", (unsigned long long)off);
    const wpix_chunk *c = &s->p->ck[lo];
    for (size_t i = 0; i < c->np; i++) {
        const wpix_page *g = &s->p->pg[c->p0 + i];
        if (times && c->np > 1 && !g->hs) *ok = 0;
        if (tsf_pix_bufs_set(s->a, w, i, g->h, times, g->hs ? g->s : start, g->hs ? g->e : end))
            return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page index)");
    }
    *n = c->np;
    return TSF_OK;
}

static int run_cmp(const void *x, const void *y)
{
    const wpix_chunk *a = *(const wpix_chunk *const *)x, *b = *(const wpix_chunk *const *)y;
    if (a->c != b->c) return (uintptr_t)a->c < (uintptr_t)b->c ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int col_cmp(const void *x, const void *y)
{
    const wcol *a = *(const wcol *const *)x, *b = *(const wcol *const *)y;
    return tsf_mi_str_cmp(a->name, a->name_len, b->name, b->name_len);
}

/* The run of column c in run[0, n): *r0 = first chunk, *rn = count. */
static void find_run(const wpix_chunk *const *run, size_t n, const wcol *c, size_t *r0, size_t *rn)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)run[mid]->c < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    size_t e = lo;
    while (e < n && run[e]->c == c) e++;
    *r0 = lo;
    *rn = e - lo;
}

/* CRC of the finished file's tail (tsf_pix_tail_crc), read back from path. */
static tsf_status tail_crc(const tsf_writer *w, uint64_t size, uint64_t *crc, tsf_error *err)
{
    size_t len = size < PIX_TAIL ? (size_t)size : PIX_TAIL, got = 0;
    uint8_t *b = tsf_alloc(w->alloc, len ? len : 1);
    if (!b) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page index)");
    int fd = open(w->path, O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && got < len) {
        ssize_t k = pread(fd, b + got, len - got, (off_t)(size - len + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    int e = errno;
    tsf_status st = got == len ? TSF_OK
                               : tsf_err(err, TSF_EIO, "writer: cannot read back the tail of %s for its page index: %s",
                                         w->path, fd < 0 ? strerror(e) : "short read");
    if (!st) *crc = tsf_pix_tail_crc(b, len);
    if (fd >= 0) close(fd);
    tsf_free(w->alloc, b, len ? len : 1);
    return st;
}

/* Walks device d (its written columns sorted into cs) into b as columns col... */
static tsf_status walk_device(tsf_writer *w, tsf_pix_build *b, const wdevice *d, const wcol **cs, size_t ncs,
                              const wpix_chunk *const *run, size_t col, tsf_pix_bufs *pb, tsf_pix_bufs *vb,
                              uint64_t data_end, tsf_error *err)
{
    size_t *r0 = tsf_calloc(w->alloc, 2 * ncs + 2, sizeof *r0), *rn = r0 ? r0 + ncs + 1 : NULL;
    if (!r0) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (page index)");
    wsrc s = {w->pix, w->alloc, run, r0, rn, 0, 0};
    for (size_t j = 0; j < ncs; j++) find_run(run, w->pix->nck, cs[j], &r0[j], &rn[j]);
    tsf_pix_src src = {&s, w_next_chunk, w_pages, data_end};
    tsf_status st = TSF_OK;
    if (d->aligned) {
        find_run(run, w->pix->nck, &d->tcol, &s.t0, &s.tn);
        st = tsf_pix_walk_aligned(b, &src, ncs, col, pb, vb, err);
    } else {
        for (size_t j = 0; j < ncs && !st; j++) st = tsf_pix_walk_series(b, &src, j, col + j, pb, err);
    }
    tsf_free(w->alloc, r0, (2 * ncs + 2) * sizeof *r0);
    return st;
}

/* The devices with data in reader order (*nd of them), and the most columns one of them has. */
static const wdevice **sorted_devices(tsf_writer *w, size_t *nd, size_t *maxc)
{
    const wdevice **v = tsf_calloc(w->alloc, w->ndevs + 1, sizeof *v);
    *nd = *maxc = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < w->ndevs; i++) {
        const wdevice *d = w->devs[i];
        size_t k = 0;
        for (size_t j = 0; j < d->ncols; j++) k += d->cols[j].nchunks > 0;
        if (!k && !(d->aligned && d->tcol.nchunks)) continue;
        v[(*nd)++] = d;
        if (k > *maxc) *maxc = k;
    }
    if (*nd > 1) qsort(v, *nd, sizeof *v, tsf_w_device_cmp);
    return v;
}

tsf_status tsf_wpix_write(tsf_writer *w, uint64_t data_end, tsf_error *err)
{
    struct tsf_wpix *p = w->pix;
    size_t nd = 0, maxc = 0, ncols = 0, n = w->ndevs;
    const wdevice **devs = sorted_devices(w, &nd, &maxc);
    const wcol **cs = tsf_calloc(w->alloc, maxc + 1, sizeof *cs);
    const wpix_chunk **run = tsf_calloc(w->alloc, p->nck + 1, sizeof *run);
    tsf_pix_build b = {.a = w->alloc, .tw = 3};
    tsf_pix_bufs pb = {0}, vb = {0};
    char *ipath = NULL;
    size_t ilen = strlen(w->path) + 8;
    tsf_status st = TSF_OK;
    if (!devs || !cs || !run || !(ipath = tsf_alloc(w->alloc, ilen))) {
        st = tsf_err(err, TSF_ENOMEM, "writer: out of memory (page index)");
        goto done;
    }
    memcpy(ipath, w->path, ilen - 8);
    memcpy(ipath + ilen - 8, ".tsfidx", 8);
    for (size_t i = 0; i < p->nck; i++) run[i] = &p->ck[i];
    if (p->nck > 1) qsort(run, p->nck, sizeof *run, run_cmp);
    for (size_t i = 0; i < nd && !st; i++) {
        const wdevice *d = devs[i];
        size_t ncs = 0;
        for (size_t j = 0; j < d->ncols; j++)
            if (d->cols[j].nchunks) cs[ncs++] = &d->cols[j];
        if (ncs > 1) qsort(cs, ncs, sizeof *cs, col_cmp);
        st = walk_device(w, &b, d, cs, ncs, (const wpix_chunk *const *)run, ncols, &pb, &vb, data_end, err);
        ncols += ncs + (d->aligned ? 1 : 0);
    }
    uint64_t hdr[PIX_H_COUNT] = {PIX_MAGIC, w->flushed, 0, 0, 0, 0, 0, nd}, nlate = 0;
    if (!st) st = tail_crc(w, w->flushed, &hdr[PIX_H_CRC], err);
    if (!st) st = tsf_pix_write(&b, ipath, ncols, hdr, NULL, 0, &nlate, err);
done:
    tsf_pix_bufs_free(w->alloc, &pb);
    tsf_pix_bufs_free(w->alloc, &vb);
    tsf_pix_build_free(&b);
    if (ipath) tsf_free(w->alloc, ipath, ilen);
    if (run) tsf_free(w->alloc, run, (p->nck + 1) * sizeof *run);
    if (cs) tsf_free(w->alloc, cs, (maxc + 1) * sizeof *cs);
    if (devs) tsf_free(w->alloc, devs, (n + 1) * sizeof *devs);
    return st;
}
