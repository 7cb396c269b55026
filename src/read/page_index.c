/*
 * page_index.c - the page-time index of one TsFile (issue 6 item 5): page start time -> page location
 * (chunk header offset, page header offset, page number in its chunk), kept in a sorted-mode PLTree
 * (include/tsf_index.h) stored next to the file as `<file>.tsfidx`. Built after the fact from a reader by
 * walking every series' chunks and page headers (container format §6-§7; single-page chunks take the
 * chunk's statistics); queries use it to start a partly covered chunk at the page holding time_min
 * without walking the chunk's page headers (query.c, pdir_jump). See doc/reader.md "Page-time index".
 *
 * Key layout (exact, order-preserving): the file's columns are numbered in reader order (per device:
 * an aligned device's time column, then its series). Column c whose page starts lie in [min_c, max_c]
 * owns the keys [base_c, base_c + (max_c - min_c)], base_{c+1} = base_c + (max_c - min_c) + 1, and a
 * page starting at t has the key base_c + (t - min_c). Aligned value pages take the key of the time
 * page they pair with. Above the page keys (T = their total span) lie three more regions of the same
 * index: the page table (keys T + 3g + {0,1,2}: chunk offset, page header offset, page number | check
 * | late flag of page g), the column directory (3 keys per column: base, min start, span + 1 or 0 when empty)
 * and a header at the top of the key space (magic, file size, tail CRC, counts). Files whose spans do not fit
 * are refused (TSF_ENOTSUP). Pages that start before a preceding page of their column ends (late, out of
 * order) are inserted after the bulk load (the index's overflow log); on equal keys the later page wins.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "page_index.h"
#include "reader_internal.h"
#include "tsf_index.h"

#define PIX_MAGIC UINT64_C(0x3130584950465354) /* "TSFPIX01" little-endian */
#define PIX_HDR (UINT64_MAX - 15)              /* header keys PIX_HDR + H_* */
#define PIX_TAIL (64u << 10)                   /* bytes of the TsFile's tail covered by the CRC */
#define PIX_LATE (UINT64_C(1) << 63)           /* page table flag: the page is late (out of order) */
#define PIX_PAGE_MASK ((UINT64_C(1) << 32) - 1)
#define PIX_CHECK_MASK (((UINT64_C(1) << 30) - 1) << 32) /* bits 32..61: check of the page's record */

enum { H_MAGIC, H_SIZE, H_CRC, H_NCOLS, H_NPAGES, H_SPAN, H_NLATE, H_NDEV, H_COUNT };

struct tsf_page_index {
    const tsf_allocator *a;
    tsf_reader *r;
    tsf_index *ix;
    pthread_mutex_t lock; /* a tsf_index handle serves one thread at a time */
    size_t ncols, ndev;
    size_t *col0;   /* first column of each device */
    uint64_t *base; /* per column: first key */
    int64_t *min;   /* per column: smallest page start */
    uint64_t *span; /* per column: max start - min start + 1; 0 = no page */
    uint64_t tab;   /* key of the page table (= T) */
    uint64_t npages, nlate;
};

/* ---- column numbering and file identity ------------------------------------------------------- */

/* Columns of the reader's devices; col0 gets ndev + 1 entries (col0[ndev] = ncols). */
static tsf_status pix_columns(tsf_reader *r, const tsf_allocator *a, size_t **col0, size_t *ncols,
                              tsf_error *err)
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

/* CRC-32 of the last min(size, PIX_TAIL) bytes of the TsFile, with that length in the high half. */
static tsf_status pix_tail_crc(tsf_reader *r, uint64_t *out, tsf_error *err)
{
    size_t len = r->size < PIX_TAIL ? (size_t)r->size : PIX_TAIL;
    rd_buf b = {0};
    const uint8_t *p;
    tsf_status st = rd_fetch(r, r->size - len, len, &b, &p, err);
    if (st == TSF_OK) *out = (uint64_t)len << 32 | (uint32_t)crc32(0L, p, (uInt)len);
    rd_buf_free(r->a, &b);
    return st;
}

/* 30-bit check of a page table record (chunk offset, header offset, page number): a damaged record is
 * reported instead of sending a query to a wrong page. */
static uint64_t rec_check(uint64_t coff, uint64_t hoff, uint64_t page)
{
    uint64_t h =
        (coff * 0x9E3779B97F4A7C15ull) ^ (hoff * 0xC2B2AE3D27D4EB4Full) ^ (page * 0x165667B19E3779F9ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (h << 32) & PIX_CHECK_MASK;
}

/* ---- build ----------------------------------------------------------------------------------- */

typedef struct pix_ent {
    uint64_t key; /* column number until the keys are assigned */
    int64_t start;
    uint64_t g; /* page number in the page table */
    int late;
} pix_ent;

typedef struct pix_build {
    tsf_reader *r;
    const tsf_allocator *a;
    pix_ent *e;
    size_t ne, ecap;
    uint64_t *tab; /* 3 per page: chunk offset, page header offset, page number | flags */
    size_t np, tcap;
    rd_buf buf;
    /* pages of the current time chunk (aligned devices) */
    int64_t *ts;
    int *tl;
    size_t nts, tscap;
} pix_build;

static int grow(const tsf_allocator *a, void **p, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    while (nc < need) nc *= 2;
    void *q = tsf_realloc(a, *p, *cap * esz, nc * esz);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* Adds page g (chunk coff, header hoff, number k in its chunk) of column col starting at start. */
static tsf_status add_page(pix_build *b, size_t col, int64_t start, int late, uint64_t coff, uint64_t hoff,
                           size_t k, tsf_error *err)
{
    if (grow(b->a, (void **)&b->e, &b->ecap, b->ne + 1, sizeof *b->e) ||
        grow(b->a, (void **)&b->tab, &b->tcap, 3 * (b->np + 1), sizeof *b->tab))
        return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    b->e[b->ne++] = (pix_ent){col, start, b->np, late};
    b->tab[3 * b->np] = coff;
    b->tab[3 * b->np + 1] = hoff;
    b->tab[3 * b->np + 2] =
        (uint64_t)(k & PIX_PAGE_MASK) | (late ? PIX_LATE : 0) | rec_check(coff, hoff, k & PIX_PAGE_MASK);
    b->np++;
    return TSF_OK;
}

/* Reads the page headers of the chunk at coff: their header offsets into hoffs (b->ts/tl hold starts for
 * a time or non-aligned chunk when starts != NULL). *n = pages; *ok = 0 when a page of a multi-page chunk
 * has no statistics (the chunk is then not indexed). */
static tsf_status walk_chunk(pix_build *b, uint64_t coff, const tsf_fmt_stats *cs, uint64_t **hoffs,
                             size_t *hcap, size_t *n, int64_t **starts, int64_t **ends, size_t *scap, int *ok,
                             tsf_error *err)
{
    tsf_fmt_chunk_header h;
    uint64_t dp, de, fetched = 0;
    tsf_status st = rd_read_chunk_header(b->r, coff, &b->buf, &h, &dp, &de, &fetched, err);
    if (st) return st;
    *n = 0;
    *ok = 1;
    while (dp < de) {
        tsf_fmt_page_header ph;
        if ((st = rd_read_page_header(b->r, dp, de, &h, &b->buf, &ph, &fetched, err))) return st;
        if (grow(b->a, (void **)hoffs, hcap, *n + 1, sizeof **hoffs)) goto oom;
        if (starts) {
            size_t c = *scap;
            if (grow(b->a, (void **)starts, scap, *n + 1, sizeof **starts)) goto oom;
            if (c != *scap) {
                *scap = c; /* ends grows to the same capacity */
                if (grow(b->a, (void **)ends, scap, *n + 1, sizeof **ends)) goto oom;
            }
            int multi = tsf_fmt_chunk_multi_page(h.marker);
            if (multi && !ph.has_stats) *ok = 0;
            (*starts)[*n] = ph.has_stats ? ph.stats.start_time : cs->start_time;
            (*ends)[*n] = ph.has_stats ? ph.stats.end_time : cs->end_time;
        }
        (*hoffs)[(*n)++] = dp;
        dp += ph.header_len + ph.compressed_size;
    }
    return TSF_OK;
oom:
    return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
}

typedef struct walk_bufs {
    uint64_t *h;
    size_t hcap;
    int64_t *s, *e;
    size_t scap;
} walk_bufs;

static void walk_bufs_free(const tsf_allocator *a, walk_bufs *w)
{
    tsf_free(a, w->h, w->hcap * sizeof *w->h);
    tsf_free(a, w->s, w->scap * sizeof *w->s);
    tsf_free(a, w->e, w->scap * sizeof *w->e);
}

/* Late: starts before (or at) the end of a page already seen in this column. */
static int is_late(int64_t start, int64_t end, int *seen, int64_t *max_end)
{
    int late = *seen && start <= *max_end;
    int64_t m = start > end ? start : end;
    if (!*seen || m > *max_end) *max_end = m;
    *seen = 1;
    return late;
}

static tsf_status walk_nonaligned(pix_build *b, const rd_series *s, size_t col, walk_bufs *w, tsf_error *err)
{
    size_t pos = 0, n;
    uint64_t coff;
    tsf_fmt_stats cs;
    tsf_error e;
    tsf_status st;
    int seen = 0, ok;
    int64_t max_end = 0;
    while ((st = tsf_ixp_next_chunk_meta(&s->tsm, &pos, &coff, &cs, &e)) == TSF_OK) {
        if ((st = walk_chunk(b, coff, &cs, &w->h, &w->hcap, &n, &w->s, &w->e, &w->scap, &ok, err))) return st;
        for (size_t k = 0; ok && k < n; k++) {
            int late = is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], late, coff, w->h[k], k, err))) return st;
        }
    }
    if (st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

/* Aligned device: the time chunks drive; the value chunk of a column in a chunk group is its first chunk
 * after the time chunk and before the next one (as in query.c); its pages pair with the time pages by
 * position and take their keys. */
static tsf_status walk_aligned(pix_build *b, const rd_device *d, size_t col, walk_bufs *w, walk_bufs *v,
                               tsf_error *err)
{
    tsf_reader *r = b->r;
    size_t nv = d->nseries;
    size_t *vpos = tsf_calloc(b->a, nv + 1, sizeof *vpos);
    uint64_t *voff = tsf_calloc(b->a, nv + 1, sizeof *voff);
    int *vhave = tsf_calloc(b->a, nv + 1, sizeof *vhave);
    tsf_status st = TSF_OK;
    tsf_error e;
    tsf_fmt_stats cs, vs;
    if (!vpos || !voff || !vhave) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto done;
    }
    for (size_t j = 0; j < nv; j++)
        vhave[j] =
            tsf_ixp_next_chunk_meta(&r->series[d->series0 + j].tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
    size_t pos = 0, n, nvp;
    uint64_t coff, next;
    int seen = 0, ok, vok;
    int64_t max_end = 0;
    int have = tsf_ixp_next_chunk_meta(&d->time.tsm, &pos, &coff, &cs, &e) == TSF_OK;
    while (have) {
        tsf_fmt_stats ncs;
        uint64_t noff;
        int nhave = tsf_ixp_next_chunk_meta(&d->time.tsm, &pos, &noff, &ncs, &e) == TSF_OK;
        next = nhave ? noff : r->fm.meta_offset;
        if ((st = walk_chunk(b, coff, &cs, &w->h, &w->hcap, &n, &w->s, &w->e, &w->scap, &ok, err))) goto done;
        uint64_t g0 = b->np;
        for (size_t k = 0; ok && k < n; k++) {
            int late = is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], late, coff, w->h[k], k, err))) goto done;
        }
        for (size_t j = 0; j < nv; j++) {
            const rd_series *s = &r->series[d->series0 + j];
            while (vhave[j] && voff[j] < coff)
                vhave[j] = tsf_ixp_next_chunk_meta(&s->tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
            if (!vhave[j] || voff[j] >= next) continue;
            uint64_t vc = voff[j];
            vhave[j] = tsf_ixp_next_chunk_meta(&s->tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
            if (!ok) continue;
            if ((st = walk_chunk(b, vc, &vs, &v->h, &v->hcap, &nvp, NULL, NULL, NULL, &vok, err))) goto done;
            if (nvp != n) continue; /* a mismatch (or an all-null chunk) is left to the query's checks */
            for (size_t k = 0; k < n; k++) {
                int late = (b->tab[3 * (g0 + k) + 2] & PIX_LATE) != 0;
                if ((st = add_page(b, col + 1 + j, w->s[k], late, vc, v->h[k], k, err))) goto done;
            }
        }
        coff = noff;
        cs = ncs;
        have = nhave;
    }
done:
    tsf_free(b->a, vpos, (nv + 1) * sizeof *vpos);
    tsf_free(b->a, voff, (nv + 1) * sizeof *voff);
    tsf_free(b->a, vhave, (nv + 1) * sizeof *vhave);
    return st;
}

static int ent_cmp(const void *x, const void *y)
{
    const pix_ent *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->g < b->g ? -1 : a->g > b->g;
}

static int ent_cmp_g(const void *x, const void *y)
{
    const pix_ent *a = x, *b = y;
    return a->g < b->g ? -1 : a->g > b->g;
}

/* Assigns keys (column bases from each column's page starts); fills the directory (3 per column). */
static tsf_status assign_keys(pix_build *b, size_t ncols, uint64_t *dir, uint64_t *total, tsf_error *err)
{
    int64_t *mn = tsf_alloc(b->a, (ncols + 1) * sizeof *mn), *mx = tsf_alloc(b->a, (ncols + 1) * sizeof *mx);
    uint64_t *base = tsf_calloc(b->a, ncols + 1, sizeof *base);
    tsf_status st = TSF_OK;
    if (!mn || !mx || !base) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto done;
    }
    for (size_t c = 0; c < ncols; c++) mn[c] = INT64_MAX, mx[c] = INT64_MIN;
    for (size_t i = 0; i < b->ne; i++) {
        size_t c = (size_t)b->e[i].key;
        if (b->e[i].start < mn[c]) mn[c] = b->e[i].start;
        if (b->e[i].start > mx[c]) mx[c] = b->e[i].start;
    }
    uint64_t t = 0;
    for (size_t c = 0; c < ncols; c++) {
        uint64_t span = mn[c] <= mx[c] ? (uint64_t)mx[c] - (uint64_t)mn[c] + 1 : 0;
        if (mn[c] <= mx[c] && span == 0) goto wide; /* the whole int64 range */
        base[c] = t;
        dir[3 * c] = t;
        dir[3 * c + 1] = (uint64_t)(mn[c] <= mx[c] ? mn[c] : 0);
        dir[3 * c + 2] = span;
        if (t + span < t) goto wide;
        t += span;
    }
    /* page table (3 per page), directory (3 per column) and header must fit below UINT64_MAX */
    if (b->np > (PIX_HDR - t) / 3 || ncols > (PIX_HDR - t - 3 * (uint64_t)b->np) / 3) goto wide;
    for (size_t i = 0; i < b->ne; i++) {
        size_t c = (size_t)b->e[i].key;
        b->e[i].key = base[c] + ((uint64_t)b->e[i].start - (uint64_t)mn[c]);
    }
    *total = t;
    goto done;
wide:
    st = tsf_err(err, TSF_ENOTSUP, "page index: the columns' time spans do not fit one 64-bit key space");
done:
    tsf_free(b->a, mn, (ncols + 1) * sizeof *mn);
    tsf_free(b->a, mx, (ncols + 1) * sizeof *mx);
    tsf_free(b->a, base, (ncols + 1) * sizeof *base);
    return st;
}

/* Writes the index file from the collected pages; *nlate_out = pages inserted after the bulk load. */
static tsf_status write_index(pix_build *b, const char *path, size_t ncols, uint64_t *nlate_out,
                              tsf_error *err)
{
    tsf_reader *r = b->r;
    uint64_t *dir = tsf_calloc(b->a, 3 * ncols + 1, sizeof *dir), total = 0, crc = 0;
    uint64_t *keys = NULL, *vals = NULL;
    size_t n = 0, cap = 0, nlate = 0;
    tsf_index *ix = NULL;
    tsf_status st = dir ? TSF_OK : tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (st || (st = assign_keys(b, ncols, dir, &total, err)) || (st = pix_tail_crc(r, &crc, err))) goto done;
    /* in-order pages by key; a page whose key equals an earlier one is late too */
    if (b->ne) qsort(b->e, b->ne, sizeof *b->e, ent_cmp);
    cap = b->ne + 3 * b->np + 3 * ncols + H_COUNT;
    keys = tsf_calloc(b->a, cap, sizeof *keys);
    vals = tsf_calloc(b->a, cap, sizeof *vals);
    if (!keys || !vals) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto done;
    }
    for (size_t i = 0; i < b->ne; i++) {
        if (b->e[i].late || (n && keys[n - 1] == b->e[i].key)) {
            b->e[i].late = 1;
            b->tab[3 * b->e[i].g + 2] |= PIX_LATE;
            b->e[nlate++] = b->e[i]; /* late entries collect at the front (i >= nlate) */
            continue;
        }
        keys[n] = b->e[i].key;
        vals[n++] = b->e[i].g;
    }
    for (size_t i = 0; i < 3 * b->np; i++) keys[n] = total + i, vals[n++] = b->tab[i];
    for (size_t i = 0; i < 3 * ncols; i++) keys[n] = total + 3 * (uint64_t)b->np + i, vals[n++] = dir[i];
    uint64_t hdr[H_COUNT] = {PIX_MAGIC, r->size, crc, ncols, b->np, total, nlate, r->ndevices};
    for (size_t i = 0; i < H_COUNT; i++) keys[n] = PIX_HDR + i, vals[n++] = hdr[i];
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = TSF_INDEX_SORTED;
    o.flags = TSF_INDEX_TRUNCATE;
    o.alloc = b->a;
    if ((st = tsf_index_open(path, &o, &ix, err)) || (st = tsf_index_bulk_load(ix, keys, vals, n, err)))
        goto done;
    /* late pages in file order (on an equal key the later page wins) */
    if (nlate) qsort(b->e, nlate, sizeof *b->e, ent_cmp_g);
    for (size_t i = 0; i < nlate; i++)
        if ((st = tsf_index_insert(ix, b->e[i].key, b->e[i].g, err))) goto done;
    st = tsf_index_sync(ix, err);
done:
    tsf_index_close(ix);
    tsf_free(b->a, keys, cap * sizeof *keys);
    tsf_free(b->a, vals, cap * sizeof *vals);
    tsf_free(b->a, dir, (3 * ncols + 1) * sizeof *dir);
    *nlate_out = nlate;
    return st;
}

tsf_status tsf_page_index_build(tsf_reader *r, const char *path, uint64_t *npages, tsf_error *err)
{
    if (!r || !path) return tsf_err(err, TSF_EINVAL, "tsf_page_index_build: reader and path are required");
    tsf_status st = rd_ensure_index(r, err);
    if (st) return st;
    pix_build b = {.r = r, .a = r->a};
    walk_bufs w = {0}, v = {0};
    size_t *col0 = NULL, ncols = 0;
    uint64_t nlate = 0;
    if ((st = pix_columns(r, r->a, &col0, &ncols, err))) return st;
    for (size_t d = 0; d < r->ndevices && !st; d++) {
        const rd_device *dv = &r->devices[d];
        if (dv->aligned) {
            st = walk_aligned(&b, dv, col0[d], &w, &v, err);
            continue;
        }
        for (size_t j = 0; j < dv->nseries && !st; j++)
            st = walk_nonaligned(&b, &r->series[dv->series0 + j], col0[d] + j, &w, err);
    }
    /* written under a temporary name, then renamed: a reader never sees a half-written index */
    size_t pl = strlen(path);
    char *tmp = st ? NULL : tsf_alloc(r->a, pl + 5);
    if (!st && !tmp) st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (!st) {
        memcpy(tmp, path, pl);
        memcpy(tmp + pl, ".tmp", 5);
        st = write_index(&b, tmp, ncols, &nlate, err);
        if (!st && rename(tmp, path) != 0) st = tsf_err(err, TSF_EIO, "page index: cannot rename %s", tmp);
        if (st) remove(tmp);
    }
    if (tmp) tsf_free(r->a, tmp, pl + 5);
    if (!st && npages) *npages = b.np;
    walk_bufs_free(r->a, &w);
    walk_bufs_free(r->a, &v);
    rd_buf_free(r->a, &b.buf);
    tsf_free(r->a, b.e, b.ecap * sizeof *b.e);
    tsf_free(r->a, b.tab, b.tcap * sizeof *b.tab);
    tsf_free(r->a, col0, (r->ndevices + 1) * sizeof *col0);
    return st;
}

/* ---- open and lookup ------------------------------------------------------------------------- */

void tsf_page_index_close(tsf_page_index *p)
{
    if (!p) return;
    tsf_index_close(p->ix);
    pthread_mutex_destroy(&p->lock);
    tsf_free(p->a, p->col0, (p->ndev + 1) * sizeof *p->col0);
    tsf_free(p->a, p->base, (p->ncols + 1) * sizeof *p->base);
    tsf_free(p->a, p->min, (p->ncols + 1) * sizeof *p->min);
    tsf_free(p->a, p->span, (p->ncols + 1) * sizeof *p->span);
    tsf_free(p->a, p, sizeof *p);
}

static tsf_status get_u64(tsf_index *ix, uint64_t key, uint64_t *v, const char *what, tsf_error *err)
{
    tsf_status st = tsf_index_get(ix, key, v, err);
    if (st == TSF_ENOTFOUND)
        return tsf_err(err, TSF_ECORRUPT, "page index: %s (key %llu) missing", what, (unsigned long long)key);
    return st;
}

/* tsf_page_index_open once r's metadata is loaded (takes no reader lock: rd_pix_get calls it under r->lock). */
static tsf_status pix_open(tsf_reader *r, const char *path, tsf_page_index **out, tsf_error *err)
{
    tsf_status st;
    tsf_page_index *p = tsf_calloc(r->a, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    p->a = r->a;
    p->r = r;
    pthread_mutex_init(&p->lock, NULL);
    p->ndev = r->ndevices;
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.flags = TSF_INDEX_READONLY;
    o.durability = TSF_INDEX_DUR_NONE;
    o.alloc = r->a;
    uint64_t h[H_COUNT], crc = 0;
    if ((st = pix_columns(r, r->a, &p->col0, &p->ncols, err)) || (st = tsf_index_open(path, &o, &p->ix, err)))
        goto fail;
    static const char *const names[H_COUNT] = {"magic",      "file size", "tail CRC",   "column count",
                                               "page count", "key span",  "late count", "device count"};
    for (size_t i = 0; i < H_COUNT; i++)
        if ((st = get_u64(p->ix, PIX_HDR + i, &h[i], names[i], err))) goto fail;
    if (h[H_MAGIC] != PIX_MAGIC) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: bad magic", path);
        goto fail;
    }
    if ((st = pix_tail_crc(r, &crc, err))) goto fail;
    if (h[H_SIZE] != r->size || h[H_CRC] != crc || h[H_NCOLS] != p->ncols || h[H_NDEV] != r->ndevices) {
        st = tsf_err(err, TSF_ESTATE,
                     "page index %s: made for another file (size %llu, %llu columns; this one "
                     "%llu bytes, %zu columns)",
                     path, (unsigned long long)h[H_SIZE], (unsigned long long)h[H_NCOLS],
                     (unsigned long long)r->size, p->ncols);
        goto fail;
    }
    p->tab = h[H_SPAN];
    p->npages = h[H_NPAGES];
    p->nlate = h[H_NLATE];
    if (p->tab > PIX_HDR || p->npages > (PIX_HDR - p->tab) / 3 ||
        p->ncols > (PIX_HDR - p->tab - 3 * p->npages) / 3) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: header counts out of range", path);
        goto fail;
    }
    p->base = tsf_calloc(r->a, p->ncols + 1, sizeof *p->base);
    p->min = tsf_calloc(r->a, p->ncols + 1, sizeof *p->min);
    p->span = tsf_calloc(r->a, p->ncols + 1, sizeof *p->span);
    if (!p->base || !p->min || !p->span) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto fail;
    }
    uint64_t dk = p->tab + 3 * p->npages, next = 0;
    for (size_t c = 0; c < p->ncols; c++) {
        uint64_t mn;
        if ((st = get_u64(p->ix, dk + 3 * c, &p->base[c], "column base", err)) ||
            (st = get_u64(p->ix, dk + 3 * c + 1, &mn, "column start", err)) ||
            (st = get_u64(p->ix, dk + 3 * c + 2, &p->span[c], "column span", err)))
            goto fail;
        p->min[c] = (int64_t)mn;
        /* columns tile [0, T) in order */
        if (p->base[c] != next || p->span[c] > p->tab - next) {
            st = tsf_err(err, TSF_ECORRUPT, "page index %s: column %zu range [%llu, +%llu) out of order",
                         path, c, (unsigned long long)p->base[c], (unsigned long long)p->span[c]);
            goto fail;
        }
        next += p->span[c];
    }
    if (next != p->tab) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: columns cover %llu keys, header says %llu", path,
                     (unsigned long long)next, (unsigned long long)p->tab);
        goto fail;
    }
    *out = p;
    return TSF_OK;
fail:
    tsf_page_index_close(p);
    return st;
}

tsf_status tsf_page_index_open(tsf_reader *r, const char *path, tsf_page_index **out, tsf_error *err)
{
    if (!r || !path || !out)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_open: reader, path, out required");
    *out = NULL;
    tsf_status st = rd_ensure_index(r, err);
    return st ? st : pix_open(r, path, out, err);
}

/* "<tsfile>.tsfidx" (allocated with a; n + 8 bytes, n = strlen(tsfile)). */
static char *idx_name(const tsf_allocator *a, const char *tsfile, size_t *n)
{
    *n = strlen(tsfile);
    char *path = tsf_alloc(a, *n + 8);
    if (path) {
        memcpy(path, tsfile, *n);
        memcpy(path + *n, ".tsfidx", 8);
    }
    return path;
}

/* Opens path when it exists; an absent, stale or damaged index gives TSF_OK and *out = NULL. */
static tsf_status pix_open_if_fit(tsf_reader *r, const char *path, tsf_page_index **out, tsf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return TSF_OK;
    fclose(f);
    tsf_error e;
    tsf_status st = pix_open(r, path, out, &e);
    if (st == TSF_ECORRUPT || st == TSF_ESTATE || st == TSF_EIO || st == TSF_ENOTSUP) return TSF_OK; /* ignored */
    if (st && err) *err = e;
    return st;
}

tsf_status tsf_page_index_open_auto(tsf_reader *r, const char *tsfile, tsf_page_index **out, tsf_error *err)
{
    if (!r || !tsfile || !out)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_open_auto: arguments required");
    *out = NULL;
    size_t n;
    tsf_status st = rd_ensure_index(r, err);
    if (st) return st;
    char *path = idx_name(r->a, tsfile, &n);
    if (!path) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    st = pix_open_if_fit(r, path, out, err);
    tsf_free(r->a, path, n + 8);
    return st;
}

/* ---- the reader's own index (tsf_reader_options.page_index) and building at write time ------------- */

tsf_status rd_pix_set_path(tsf_reader *r, const char *tsfile, tsf_error *err)
{
    size_t n;
    if (!(r->pix_path = idx_name(r->a, tsfile, &n))) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
    return TSF_OK;
}

void rd_pix_free(tsf_reader *r)
{
    tsf_page_index_close(r->pix);
    r->pix = NULL;
    if (r->pix_path) tsf_free(r->a, r->pix_path, strlen(r->pix_path) + 1);
    r->pix_path = NULL;
}

tsf_page_index *rd_pix_get(tsf_reader *r)
{
    pthread_mutex_lock(&r->lock);
    if (!r->pix_tried && r->loaded > 0 && r->pix_path) {
        r->pix_tried = 1;
        if (pix_open_if_fit(r, r->pix_path, &r->pix, NULL)) r->pix = NULL; /* out of memory: none */
    }
    tsf_page_index *p = r->pix;
    pthread_mutex_unlock(&r->lock);
    return p;
}

tsf_status tsf_reader_page_index(tsf_reader *r, tsf_page_index **out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_reader_page_index: reader and out are required");
    *out = NULL;
    tsf_status st = rd_ensure_index(r, err);
    if (!st) *out = rd_pix_get(r);
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
    char *path = idx_name(r->a, tsfile, &n);
    st = path ? tsf_page_index_build(r, path, npages, err) : tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (path) tsf_free(r->a, path, n + 8);
    tsf_reader_close(r);
    return st;
}

/* Column number of (device, series); SIZE_MAX if none. */
static size_t pix_col(const tsf_page_index *p, size_t device, size_t series)
{
    if (device >= p->ndev) return SIZE_MAX;
    size_t c0 = p->col0[device], n = p->col0[device + 1] - c0;
    int aligned = p->r->devices[device].aligned;
    if (series == TSF_PAGE_INDEX_TIME) return aligned ? c0 : SIZE_MAX;
    size_t c = series + (aligned ? 1 : 0);
    return c < n ? c0 + c : SIZE_MAX;
}

/* Lookup under the caller's lock. */
static tsf_status lookup_locked(tsf_page_index *p, size_t c, int64_t t, tsf_page_loc *out, tsf_error *err)
{
    if (!p->span[c] || t < p->min[c])
        return tsf_err(err, TSF_ENOTFOUND, "page index: no page starts at or before %lld", (long long)t);
    uint64_t off = (uint64_t)t - (uint64_t)p->min[c];
    if (off > p->span[c] - 1) off = p->span[c] - 1;
    uint64_t k, g, w[3];
    tsf_status st = tsf_index_floor(p->ix, p->base[c] + off, &k, &g, err);
    if (st == TSF_OK && k < p->base[c]) /* cannot happen: the column's first start has the key base */
        st = tsf_err(err, TSF_ECORRUPT, "page index: column %zu has no key at its base", c);
    if (st) return st;
    if (g >= p->npages)
        return tsf_err(err, TSF_ECORRUPT, "page index: page %llu of %llu", (unsigned long long)g,
                       (unsigned long long)p->npages);
    for (int i = 0; i < 3; i++)
        if ((st = get_u64(p->ix, p->tab + 3 * g + (uint64_t)i, &w[i], "page table entry", err))) return st;
    if ((w[2] & PIX_CHECK_MASK) != rec_check(w[0], w[1], w[2] & PIX_PAGE_MASK))
        return tsf_err(err, TSF_ECORRUPT, "page index: page table record %llu damaged (key %llu)",
                       (unsigned long long)g, (unsigned long long)(p->tab + 3 * g));
    out->chunk_offset = w[0];
    out->page_offset = w[1];
    out->page = (uint32_t)(w[2] & PIX_PAGE_MASK);
    out->late = (w[2] & PIX_LATE) != 0;
    out->start_time = (int64_t)((uint64_t)p->min[c] + (k - p->base[c]));
    return TSF_OK;
}

tsf_status tsf_page_index_lookup(tsf_page_index *p, size_t device, size_t series, int64_t t,
                                 tsf_page_loc *out, tsf_error *err)
{
    if (!p || !out) return tsf_err(err, TSF_EINVAL, "tsf_page_index_lookup: index and out required");
    size_t c = pix_col(p, device, series);
    if (c == SIZE_MAX)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_lookup: no series %zu in device %zu", series, device);
    pthread_mutex_lock(&p->lock);
    tsf_status st = lookup_locked(p, c, t, out, err);
    pthread_mutex_unlock(&p->lock);
    return st;
}

void tsf_page_index_info(const tsf_page_index *p, uint64_t *npages, uint64_t *nlate)
{
    if (npages) *npages = p ? p->npages : 0;
    if (nlate) *nlate = p ? p->nlate : 0;
}

const tsf_reader *rd_page_index_reader(const tsf_page_index *p)
{
    return p ? p->r : NULL;
}
