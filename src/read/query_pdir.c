/*
 * query_pdir.c - entering a partly covered chunk at the first page that can match.
 *
 * Reaching the pages of a partly covered chunk means walking its page headers one by one (TsFile has
 * no page index), a chain of dependent loads that dominates narrow queries on large chunks. Two ways
 * around it: the page-time index of the file (page_index.c) when the query has one and it places the
 * page in this chunk, else a page directory. The first query that reads a chunk in part records where
 * each page starts and its time range; later queries (from any thread) jump to the first page that can
 * match by binary search. Directories live in the reader (under its lock) until it closes; a chunk with
 * a page without statistics gets none.
 */
#include <string.h>

#include "page_index.h"
#include "query_internal.h"

typedef struct tsf_rd_pdir_page {
    uint64_t hdr; /* offset of the page header */
    int64_t end;  /* the page's end time */
} tsf_rd_pdir_page;

typedef struct tsf_rd_pdir {
    uint64_t chunk_off;
    size_t npages;
    tsf_rd_pdir_page *pg;
} tsf_rd_pdir;

static void pdir_destroy(const tsf_allocator *a, tsf_rd_pdir *d)
{
    if (!d) return;
    tsf_free(a, d->pg, d->npages * sizeof *d->pg);
    tsf_free(a, d, sizeof *d);
}

void tsf_rd_pdir_free(tsf_reader *r)
{
    for (size_t i = 0; i < r->pdirs_cap; i++) pdir_destroy(r->a, r->pdirs[i]);
    tsf_free(r->a, r->pdirs, r->pdirs_cap * sizeof *r->pdirs);
    r->pdirs = NULL;
    r->pdirs_cap = r->npdirs = 0;
}

static size_t pdir_slot(const tsf_reader *r, uint64_t off)
{
    size_t i = (size_t)((off * 0x9E3779B97F4A7C15ull) >> 20) & (r->pdirs_cap - 1);
    while (r->pdirs[i] && r->pdirs[i]->chunk_off != off) i = (i + 1) & (r->pdirs_cap - 1);
    return i;
}

/* Puts nd into the reader's table (or frees it if there is no room or another query was first). */
static const tsf_rd_pdir *pdir_insert(tsf_reader *r, const tsf_allocator *a, tsf_rd_pdir *nd)
{
    const tsf_rd_pdir *d = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->npdirs * 2 + 2 > r->pdirs_cap) {
        size_t ncap = r->pdirs_cap ? r->pdirs_cap * 2 : 64;
        tsf_rd_pdir **t = tsf_calloc(a, ncap, sizeof *t);
        if (t) {
            tsf_rd_pdir **old = r->pdirs;
            size_t ocap = r->pdirs_cap;
            r->pdirs = t;
            r->pdirs_cap = ncap;
            for (size_t i = 0; i < ocap; i++)
                if (old[i]) r->pdirs[pdir_slot(r, old[i]->chunk_off)] = old[i];
            tsf_free(a, old, ocap * sizeof *old);
        }
    }
    if (r->npdirs * 2 + 2 <= r->pdirs_cap) {
        size_t i = pdir_slot(r, nd->chunk_off);
        if (!r->pdirs[i]) {
            r->pdirs[i] = nd;
            r->npdirs++;
            nd = NULL;
        }
        d = r->pdirs[i];
    }
    pthread_mutex_unlock(&r->lock);
    pdir_destroy(a, nd);
    return d;
}

/* Directory of c's open chunk: looked up, or built by walking its headers once. NULL if none (a damaged
 * header is then reported when the query walks to it). */
static const tsf_rd_pdir *pdir_get(tsf_query *q, qcol *c)
{
    tsf_reader *r = q->r;
    const tsf_rd_pdir *d = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->pdirs_cap) d = r->pdirs[pdir_slot(r, c->chunk_off)];
    pthread_mutex_unlock(&r->lock);
    if (d) return d;
    size_t n = 0, cap = 64;
    tsf_rd_pdir *nd = tsf_calloc(q->a, 1, sizeof *nd);
    tsf_rd_pdir_page *pg = tsf_alloc(q->a, cap * sizeof *pg);
    uint64_t pos = c->dpos, fetched = 0;
    int ok = nd && pg;
    while (ok && pos < c->dend) {
        tsf_fmt_page_header ph;
        tsf_error e;
        if (tsf_rd_read_page_header(r, pos, c->dend, &c->ch, &c->hdr, &ph, &fetched, &e) || !ph.has_stats) {
            ok = 0;
            break;
        }
        if (n == cap) {
            tsf_rd_pdir_page *g = tsf_realloc(q->a, pg, cap * sizeof *pg, 2 * cap * sizeof *pg);
            if (!g) {
                ok = 0;
                break;
            }
            pg = g;
            cap *= 2;
        }
        pg[n].hdr = pos;
        pg[n].end = ph.stats.end_time;
        n++;
        pos += ph.header_len + ph.compressed_size;
    }
    tsf_rd_pdir_page *fit = ok && n ? tsf_realloc(q->a, pg, cap * sizeof *pg, n * sizeof *pg) : NULL;
    if (!fit) {
        tsf_free(q->a, pg, cap * sizeof *pg);
        tsf_free(q->a, nd, sizeof *nd);
        return NULL;
    }
    nd->chunk_off = c->chunk_off;
    nd->npages = n;
    nd->pg = fit;
    return pdir_insert(r, q->a, nd);
}

/*
 * The jump from the page-time index (page_index.c): the page holding tmin (last start <= tmin) of the
 * driving column, when the index places it in this chunk, it is in order (every earlier page of the column
 * ends before it starts) and its header there has that start time, and the value pages paired with it.
 * 0: not usable here (pdir instead).
 */
static int pix_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals)
{
    size_t dev = (size_t)(q->dev - q->r->devices);
    size_t sj = vals ? TSF_PAGE_INDEX_TIME : (size_t)(drv->s - q->r->series) - q->dev->series0;
    tsf_page_loc loc, vl[64];
    if (tsf_page_index_lookup(q->pix, dev, sj, q->tmin, &loc, NULL) || loc.late ||
        loc.chunk_offset != drv->chunk_off || loc.page_offset < drv->dpos || loc.page_offset >= drv->dend)
        return 0;
    tsf_fmt_page_header ph; /* a damaged index must not skip rows: the page there starts where it says */
    uint64_t fetched = 0;
    if (tsf_rd_read_page_header(q->r, loc.page_offset, drv->dend, &drv->ch, &drv->hdr, &ph, &fetched, NULL) ||
        !ph.has_stats || ph.stats.start_time != loc.start_time)
        return 0;
    for (size_t i = 0; i < nvals; i++) {
        vl[i].page = loc.page;
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        size_t j = (size_t)(vals[i].s - q->r->series) - q->dev->series0;
        if (tsf_page_index_lookup(q->pix, dev, j, q->tmin, &vl[i], NULL) || vl[i].page != loc.page ||
            vl[i].chunk_offset != vals[i].chunk_off || vl[i].page_offset < vals[i].dpos ||
            vl[i].page_offset >= vals[i].dend)
            return 0;
    }
    drv->dpos = loc.page_offset;
    q->st.pages_skipped += loc.page;
    for (size_t i = 0; i < nvals; i++) {
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        vals[i].dpos = vl[i].page_offset;
        q->st.pages_skipped += loc.page;
    }
    return 1;
}

/* The page-time index first, else the chunk's page directory: the first page ending at or after tmin. */
void tsf_rd_pdir_jump(tsf_query *q, qcol *drv, qcol *vals, size_t nvals)
{
    if (!tsf_fmt_chunk_multi_page(drv->ch.marker) || drv->dpos >= drv->dend || nvals > 64) return;
    if (q->pix && pix_jump(q, drv, vals, nvals)) return;
    const tsf_rd_pdir *d = pdir_get(q, drv);
    if (!d) return;
    size_t a = 0, z = d->npages;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (d->pg[m].end < q->tmin) a = m + 1; else z = m;
    }
    if (a == d->npages) a = d->npages - 1; /* the walk checks the last page (and the chunk's end) */
    if (a == 0) return;
    const tsf_rd_pdir *vd[64];
    for (size_t i = 0; i < nvals; i++) {
        vd[i] = NULL;
        if (!vals[i].in_chunk || vals[i].dpos >= vals[i].dend) continue;
        vd[i] = pdir_get(q, &vals[i]);
        if (!vd[i] || vd[i]->npages != d->npages) return; /* a mismatch is reported by the walk */
    }
    drv->dpos = d->pg[a].hdr;
    q->st.pages_skipped += a;
    for (size_t i = 0; i < nvals; i++) {
        if (!vd[i]) continue;
        vals[i].dpos = vd[i]->pg[a].hdr;
        q->st.pages_skipped += a;
    }
}

