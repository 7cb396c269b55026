/*
 * page_index_file.c - builds the bytes of a page-time index (page_index_file.h): walks the chunks of a device
 * through a tsf_pix_src, collects every page (column, start, end, location, late), assigns the keys of the
 * layout, and writes page keys, page table, column directory and header as one sorted-mode learned index
 * (include/tsf_index.h) under a temporary name that is renamed over the index's path.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/tmpfile.h"
#include "page_index_file.h"
#include "tsf_index.h"

uint64_t tsf_pix_rec_check(uint64_t file, uint64_t coff, uint64_t hoff, uint64_t page)
{
    coff ^= file * 0xD6E8FEB86659FD93ull;
    uint64_t h =
        (coff * 0x9E3779B97F4A7C15ull) ^ (hoff * 0xC2B2AE3D27D4EB4Full) ^ (page * 0x165667B19E3779F9ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (h << 32) & PIX_CHECK_MASK;
}

uint64_t tsf_pix_tail_crc(const uint8_t *tail, size_t len)
{
    return (uint64_t)len << 32 | (uint32_t)crc32(0L, tail, (uInt)len);
}

void tsf_pix_build_free(tsf_pix_build *b)
{
    tsf_free(b->a, b->e, b->ecap * sizeof *b->e);
    tsf_free(b->a, b->tab, b->tcap * sizeof *b->tab);
    b->e = NULL;
    b->tab = NULL;
    b->ecap = b->tcap = b->ne = b->np = 0;
}

int tsf_pix_grow(const tsf_allocator *a, void **p, size_t *cap, size_t need, size_t esz)
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

int tsf_pix_is_late(int64_t start, int64_t end, int *seen, int64_t *max_end)
{
    int late = *seen && start <= *max_end;
    int64_t m = start > end ? start : end;
    if (!*seen || m > *max_end) *max_end = m;
    *seen = 1;
    return late;
}

void tsf_pix_bufs_free(const tsf_allocator *a, tsf_pix_bufs *w)
{
    tsf_free(a, w->h, w->hcap * sizeof *w->h);
    tsf_free(a, w->s, w->scap * sizeof *w->s);
    tsf_free(a, w->e, w->scap * sizeof *w->e);
}

int tsf_pix_bufs_set(const tsf_allocator *a, tsf_pix_bufs *w, size_t n, uint64_t h, int times, int64_t s,
                     int64_t e)
{
    if (tsf_pix_grow(a, (void **)&w->h, &w->hcap, n + 1, sizeof *w->h)) return -1;
    w->h[n] = h;
    if (!times) return 0;
    size_t c = w->scap;
    if (tsf_pix_grow(a, (void **)&w->s, &w->scap, n + 1, sizeof *w->s)) return -1;
    if (c != w->scap) {
        w->scap = c; /* e grows to the same capacity */
        if (tsf_pix_grow(a, (void **)&w->e, &w->scap, n + 1, sizeof *w->e)) return -1;
    }
    w->s[n] = s;
    w->e[n] = e;
    return 0;
}

/* Adds page g (chunk coff, header hoff, number k in its chunk) of column col covering [start, end]. */
static tsf_status add_page(tsf_pix_build *b, size_t col, int64_t start, int64_t end, int late, uint64_t coff,
                           uint64_t hoff, size_t k, tsf_error *err)
{
    if (tsf_pix_grow(b->a, (void **)&b->e, &b->ecap, b->ne + 1, sizeof *b->e) ||
        tsf_pix_grow(b->a, (void **)&b->tab, &b->tcap, b->tw * (b->np + 1), sizeof *b->tab))
        return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    b->e[b->ne++] = (tsf_pix_ent){col, start, end, b->np, late};
    uint64_t *t = &b->tab[b->tw * b->np];
    t[0] = coff;
    t[1] = hoff;
    t[2] = (uint64_t)(k & PIX_PAGE_MASK) | (late ? PIX_LATE : 0) |
           tsf_pix_rec_check(b->file, coff, hoff, k & PIX_PAGE_MASK);
    if (b->tw == 4) t[3] = b->file;
    b->np++;
    return TSF_OK;
}

tsf_status tsf_pix_walk_series(tsf_pix_build *b, const tsf_pix_src *src, size_t j, size_t col, tsf_pix_bufs *w,
                               tsf_error *err)
{
    size_t pos = 0, n;
    uint64_t coff;
    int64_t cs0, cs1;
    tsf_error e;
    tsf_status st;
    int seen = 0, ok;
    int64_t max_end = 0;
    while ((st = src->next_chunk(src->ud, j, &pos, &coff, &cs0, &cs1, &e)) == TSF_OK) {
        if ((st = src->pages(src->ud, coff, cs0, cs1, 1, w, &n, &ok, err))) return st;
        for (size_t k = 0; ok && k < n; k++) {
            int late = tsf_pix_is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], w->e[k], late, coff, w->h[k], k, err))) return st;
        }
    }
    if (st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

/* The value chunks of the chunk group of time chunk coff (next: the next time chunk or the data's end). */
static tsf_status walk_values(tsf_pix_build *b, const tsf_pix_src *src, size_t nv, size_t col, uint64_t coff,
                              uint64_t next, size_t *vpos, uint64_t *voff, int *vhave, int ok, size_t n,
                              uint64_t g0, const tsf_pix_bufs *w, tsf_pix_bufs *v, tsf_error *err)
{
    tsf_error e;
    tsf_status st;
    int64_t vs0, vs1;
    size_t nvp;
    int vok;
    for (size_t j = 0; j < nv; j++) {
        while (vhave[j] && voff[j] < coff)
            vhave[j] = src->next_chunk(src->ud, j, &vpos[j], &voff[j], &vs0, &vs1, &e) == TSF_OK;
        if (!vhave[j] || voff[j] >= next) continue;
        uint64_t vc = voff[j];
        vhave[j] = src->next_chunk(src->ud, j, &vpos[j], &voff[j], &vs0, &vs1, &e) == TSF_OK;
        if (!ok) continue;
        if ((st = src->pages(src->ud, vc, vs0, vs1, 0, v, &nvp, &vok, err))) return st;
        if (nvp != n) continue; /* a mismatch (or an all-null chunk) is left to the query's checks */
        for (size_t k = 0; k < n; k++) {
            int late = (b->tab[b->tw * (g0 + k) + 2] & PIX_LATE) != 0;
            if ((st = add_page(b, col + 1 + j, w->s[k], w->e[k], late, vc, v->h[k], k, err))) return st;
        }
    }
    return TSF_OK;
}

tsf_status tsf_pix_walk_aligned(tsf_pix_build *b, const tsf_pix_src *src, size_t nv, size_t col, tsf_pix_bufs *w,
                                tsf_pix_bufs *v, tsf_error *err)
{
    size_t *vpos = tsf_calloc(b->a, nv + 1, sizeof *vpos);
    uint64_t *voff = tsf_calloc(b->a, nv + 1, sizeof *voff);
    int *vhave = tsf_calloc(b->a, nv + 1, sizeof *vhave);
    tsf_status st = TSF_OK;
    tsf_error e;
    int64_t cs0, cs1, vs0, vs1;
    if (!vpos || !voff || !vhave) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto done;
    }
    for (size_t j = 0; j < nv; j++)
        vhave[j] = src->next_chunk(src->ud, j, &vpos[j], &voff[j], &vs0, &vs1, &e) == TSF_OK;
    size_t pos = 0, n;
    uint64_t coff;
    int seen = 0, ok;
    int64_t max_end = 0;
    int have = src->next_chunk(src->ud, TSF_PIX_TIME, &pos, &coff, &cs0, &cs1, &e) == TSF_OK;
    while (have) {
        int64_t ncs0, ncs1;
        uint64_t noff;
        int nhave = src->next_chunk(src->ud, TSF_PIX_TIME, &pos, &noff, &ncs0, &ncs1, &e) == TSF_OK;
        if ((st = src->pages(src->ud, coff, cs0, cs1, 1, w, &n, &ok, err))) goto done;
        uint64_t g0 = b->np;
        for (size_t k = 0; ok && k < n; k++) {
            int late = tsf_pix_is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], w->e[k], late, coff, w->h[k], k, err))) goto done;
        }
        if ((st = walk_values(b, src, nv, col, coff, nhave ? noff : src->data_end, vpos, voff, vhave, ok, n, g0, w,
                              v, err)))
            goto done;
        coff = noff;
        cs0 = ncs0;
        cs1 = ncs1;
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
    const tsf_pix_ent *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->g < b->g ? -1 : a->g > b->g;
}

static int ent_cmp_g(const void *x, const void *y)
{
    const tsf_pix_ent *a = x, *b = y;
    return a->g < b->g ? -1 : a->g > b->g;
}

/* Assigns keys (column bases from each column's page starts); fills the directory (3 per column). nextra:
 * words stored after the directory. */
static tsf_status assign_keys(tsf_pix_build *b, size_t ncols, size_t nextra, uint64_t *dir, uint64_t *total,
                              tsf_error *err)
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
    /* page table (tw per page), directory (3 per column), extra words and header fit below UINT64_MAX */
    if (b->np > (PIX_HDR - t) / 8 || ncols > (PIX_HDR - t - 4 * (uint64_t)b->np) / 8 ||
        nextra > PIX_HDR - t - 4 * (uint64_t)b->np - 3 * (uint64_t)ncols)
        goto wide;
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

/* Writes the index file at path (tsf_pix_write without the temporary). */
static tsf_status write_index(tsf_pix_build *b, const char *path, size_t ncols, uint64_t *hdr,
                              const uint64_t *extra, size_t nextra, uint64_t *nlate_out, tsf_error *err)
{
    uint64_t *dir = tsf_calloc(b->a, 3 * ncols + 1, sizeof *dir), total = 0;
    uint64_t *keys = NULL, *vals = NULL;
    size_t n = 0, cap = 0, nlate = 0, tw = b->tw;
    tsf_index *ix = NULL;
    tsf_status st = dir ? TSF_OK : tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (st || (st = assign_keys(b, ncols, nextra, dir, &total, err))) goto done;
    /* in-order pages by key; a page whose key equals an earlier one is late too */
    if (b->ne) qsort(b->e, b->ne, sizeof *b->e, ent_cmp);
    cap = b->ne + tw * b->np + 3 * ncols + nextra + PIX_H_COUNT;
    keys = tsf_calloc(b->a, cap, sizeof *keys);
    vals = tsf_calloc(b->a, cap, sizeof *vals);
    if (!keys || !vals) {
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto done;
    }
    for (size_t i = 0; i < b->ne; i++) {
        if (b->e[i].late || (n && keys[n - 1] == b->e[i].key)) {
            b->e[i].late = 1;
            b->tab[tw * b->e[i].g + 2] |= PIX_LATE;
            b->e[nlate++] = b->e[i]; /* late entries collect at the front (i >= nlate) */
            continue;
        }
        keys[n] = b->e[i].key;
        vals[n++] = b->e[i].g;
    }
    uint64_t k0 = total;
    for (size_t i = 0; i < tw * b->np; i++) keys[n] = k0++, vals[n++] = b->tab[i];
    for (size_t i = 0; i < 3 * ncols; i++) keys[n] = k0++, vals[n++] = dir[i];
    for (size_t i = 0; i < nextra; i++) keys[n] = k0++, vals[n++] = extra[i];
    hdr[PIX_H_NCOLS] = ncols, hdr[PIX_H_NPAGES] = b->np, hdr[PIX_H_SPAN] = total, hdr[PIX_H_NLATE] = nlate;
    for (size_t i = 0; i < PIX_H_COUNT; i++) keys[n] = PIX_HDR + i, vals[n++] = hdr[i];
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = TSF_INDEX_SORTED;
    o.flags = TSF_INDEX_TRUNCATE;
    o.alloc = b->a;
    if ((st = tsf_index_open(&ix, path, &o, err)) || (st = tsf_index_bulk_load(ix, keys, vals, n, err)))
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

tsf_status tsf_pix_write(tsf_pix_build *b, const char *path, size_t ncols, uint64_t *hdr, const uint64_t *extra,
                         size_t nextra, uint64_t *nlate, tsf_error *err)
{
    tsf_tmp t;
    tsf_status st = tsf_tmp_create("page index", path, b->a, 0, &t, err);
    if (st) return st;
    st = write_index(b, t.name, ncols, hdr, extra, nextra, nlate, err);
    if (st) {
        tsf_tmp_discard(&t, b->a);
        return st;
    }
    return tsf_tmp_commit("page index", &t, path, 1, b->a, err);
}
