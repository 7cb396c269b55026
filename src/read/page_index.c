/*
 * page_index.c - opening and looking up the page-time index of one TsFile (`<file>.tsfidx`, key layout in
 * src/format/page_index_file.h; built by page_index_build.c or by the writer at close): page start time ->
 * page location (chunk header offset, page header offset, page number in its chunk). Queries use it to start
 * a partly covered chunk at the page holding time_min without walking the chunk's page headers (query.c,
 * pdir_jump); a reader opened by path finds `<path>.tsfidx` by itself (tsf_rd_pix_get). The handle also
 * serves the directory index of page_index_dir.c. See doc/reader.md "Page-time index".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_index_internal.h"

void tsf_page_index_close(tsf_page_index *p)
{
    if (!p) return;
    tsf_index_close(p->ix);
    pthread_mutex_destroy(&p->lock);
    tsf_free(p->a, p->col0, (p->ndev + 1) * sizeof *p->col0);
    tsf_free(p->a, p->base, (p->ncols + 1) * sizeof *p->base);
    tsf_free(p->a, p->min, (p->ncols + 1) * sizeof *p->min);
    tsf_free(p->a, p->span, (p->ncols + 1) * sizeof *p->span);
    tsf_free(p->a, p->names, p->names_cap);
    tsf_free(p->a, p->fnames, p->fnames_cap);
    if (p->cdev) tsf_free(p->a, p->cdev, (p->ncols + 1) * sizeof *p->cdev);
    if (p->cser) tsf_free(p->a, p->cser, (p->ncols + 1) * sizeof *p->cser);
    if (p->fname) tsf_free(p->a, p->fname, (p->nfiles + 1) * sizeof *p->fname);
    tsf_free(p->a, p, sizeof *p);
}

tsf_status tsf_pix_get_u64(tsf_index *ix, uint64_t key, uint64_t *v, const char *what, tsf_error *err)
{
    tsf_status st = tsf_index_get(ix, key, v, err);
    if (st == TSF_ENOTFOUND)
        return tsf_err(err, TSF_ECORRUPT, "page index: %s (key %llu) missing", what, (unsigned long long)key);
    return st;
}

/* A handle on the index at path with its header read (h) and its magic checked. */
tsf_status tsf_pix_new(const tsf_allocator *a, const char *path, uint64_t magic, tsf_page_index **out,
                       uint64_t *h, tsf_error *err)
{
    tsf_status st;
    tsf_page_index *p = tsf_calloc(a, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    p->a = a;
    p->tw = magic == PIX_MAGIC ? 3 : 4;
    pthread_mutex_init(&p->lock, NULL);
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.flags = TSF_INDEX_READONLY;
    o.durability = TSF_INDEX_DUR_NONE;
    o.alloc = a;
    if ((st = tsf_index_open(&p->ix, path, &o, err))) goto fail;
    for (size_t i = 0; i < PIX_H_COUNT; i++)
        if ((st = tsf_pix_get_u64(p->ix, PIX_HDR + i, &h[i], "header word", err))) goto fail;
    if (h[PIX_H_MAGIC] != magic) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: bad magic", path);
        goto fail;
    }
    *out = p;
    return TSF_OK;
fail:
    tsf_page_index_close(p);
    return st;
}

/* Page table position and counts from the header, the column directory into DRAM (p->ncols set). */
tsf_status tsf_pix_load_dir(tsf_page_index *p, const char *path, const uint64_t *h, tsf_error *err)
{
    tsf_status st;
    p->tab = h[PIX_H_SPAN];
    p->npages = h[PIX_H_NPAGES];
    p->nlate = h[PIX_H_NLATE];
    if (p->tab > PIX_HDR || p->npages > (PIX_HDR - p->tab) / 8 || p->ncols > (PIX_HDR - p->tab - 4 * p->npages) / 8)
        return tsf_err(err, TSF_ECORRUPT, "page index %s: header counts out of range", path);
    p->base = tsf_calloc(p->a, p->ncols + 1, sizeof *p->base);
    p->min = tsf_calloc(p->a, p->ncols + 1, sizeof *p->min);
    p->span = tsf_calloc(p->a, p->ncols + 1, sizeof *p->span);
    if (!p->base || !p->min || !p->span) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    uint64_t dk = p->tab + p->tw * p->npages, next = 0;
    for (size_t c = 0; c < p->ncols; c++) {
        uint64_t mn;
        if ((st = tsf_pix_get_u64(p->ix, dk + 3 * c, &p->base[c], "column base", err)) ||
            (st = tsf_pix_get_u64(p->ix, dk + 3 * c + 1, &mn, "column start", err)) ||
            (st = tsf_pix_get_u64(p->ix, dk + 3 * c + 2, &p->span[c], "column span", err)))
            return st;
        p->min[c] = (int64_t)mn;
        /* columns tile [0, T) in order */
        if (p->base[c] != next || p->span[c] > p->tab - next)
            return tsf_err(err, TSF_ECORRUPT, "page index %s: column %zu range [%llu, +%llu) out of order", path,
                           c, (unsigned long long)p->base[c], (unsigned long long)p->span[c]);
        next += p->span[c];
    }
    if (next != p->tab)
        return tsf_err(err, TSF_ECORRUPT, "page index %s: columns cover %llu keys, header says %llu", path,
                       (unsigned long long)next, (unsigned long long)p->tab);
    return TSF_OK;
}

/* tsf_page_index_open once r's metadata is loaded (takes no reader lock: tsf_rd_pix_get calls it under r->lock). */
static tsf_status pix_open(tsf_reader *r, const char *path, tsf_page_index **out, tsf_error *err)
{
    uint64_t h[PIX_H_COUNT], crc = 0;
    tsf_page_index *p = NULL;
    tsf_status st = tsf_pix_new(r->a, path, PIX_MAGIC, &p, h, err);
    if (st) return st;
    p->r = r;
    p->ndev = r->ndevices;
    if ((st = tsf_pix_columns(r, r->a, &p->col0, &p->ncols, err)) || (st = tsf_pix_reader_tail_crc(r, &crc, err))) goto fail;
    if (h[PIX_H_SIZE] != r->size || h[PIX_H_CRC] != crc || h[PIX_H_NCOLS] != p->ncols || h[PIX_H_NDEV] != r->ndevices) {
        st = tsf_err(err, TSF_ESTATE,
                     "page index %s: made for another file (size %llu, %llu columns; this one "
                     "%llu bytes, %zu columns)",
                     path, (unsigned long long)h[PIX_H_SIZE], (unsigned long long)h[PIX_H_NCOLS],
                     (unsigned long long)r->size, p->ncols);
        goto fail;
    }
    if ((st = tsf_pix_load_dir(p, path, h, err))) goto fail;
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
    tsf_status st = tsf_rd_ensure_index(r, err);
    return st ? st : pix_open(r, path, out, err);
}

/* "<tsfile>.tsfidx" (allocated with a; n + 8 bytes, n = strlen(tsfile)). */
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
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    char *path = tsf_pix_idx_name(r->a, tsfile, &n);
    if (!path) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    st = pix_open_if_fit(r, path, out, err);
    tsf_free(r->a, path, n + 8);
    return st;
}

/* ---- the reader's own index (tsf_reader_options.page_index) and building at write time ------------- */

tsf_status tsf_rd_pix_set_path(tsf_reader *r, const char *tsfile, tsf_error *err)
{
    size_t n;
    if (!(r->pix_path = tsf_pix_idx_name(r->a, tsfile, &n))) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
    return TSF_OK;
}

void tsf_rd_pix_free(tsf_reader *r)
{
    tsf_page_index_close(r->pix);
    r->pix = NULL;
    if (r->pix_path) tsf_free(r->a, r->pix_path, strlen(r->pix_path) + 1);
    r->pix_path = NULL;
}

tsf_page_index *tsf_rd_pix_get(tsf_reader *r)
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
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (!st) *out = tsf_rd_pix_get(r);
    return st;
}

/* Column number of (device, series); SIZE_MAX if none. */
size_t tsf_pix_col(const tsf_page_index *p, size_t device, size_t series)
{
    if (!p->r || device >= p->ndev) return SIZE_MAX;
    size_t c0 = p->col0[device], n = p->col0[device + 1] - c0;
    int aligned = p->r->devices[device].aligned;
    if (series == TSF_PAGE_INDEX_TIME) return aligned ? c0 : SIZE_MAX;
    size_t c = series + (aligned ? 1 : 0);
    return c < n ? c0 + c : SIZE_MAX;
}

/* Lookup under the caller's lock. */
tsf_status tsf_pix_lookup_locked(tsf_page_index *p, size_t c, int64_t t, tsf_page_loc *out, size_t *file,
                                 tsf_error *err)
{
    if (!p->span[c] || t < p->min[c])
        return tsf_err(err, TSF_ENOTFOUND, "page index: no page starts at or before %lld", (long long)t);
    uint64_t off = (uint64_t)t - (uint64_t)p->min[c];
    if (off > p->span[c] - 1) off = p->span[c] - 1;
    uint64_t k, g, w[4] = {0, 0, 0, 0};
    tsf_status st = tsf_index_floor(p->ix, p->base[c] + off, &k, &g, err);
    if (st == TSF_OK && k < p->base[c]) /* cannot happen: the column's first start has the key base */
        st = tsf_err(err, TSF_ECORRUPT, "page index: column %zu has no key at its base", c);
    if (st) return st;
    if (g >= p->npages)
        return tsf_err(err, TSF_ECORRUPT, "page index: page %llu of %llu", (unsigned long long)g,
                       (unsigned long long)p->npages);
    for (unsigned i = 0; i < p->tw; i++)
        if ((st = tsf_pix_get_u64(p->ix, p->tab + p->tw * g + i, &w[i], "page table entry", err))) return st;
    if ((w[2] & PIX_CHECK_MASK) != tsf_pix_rec_check(w[3], w[0], w[1], w[2] & PIX_PAGE_MASK) ||
        (p->tw == 4 && w[3] >= p->nfiles))
        return tsf_err(err, TSF_ECORRUPT, "page index: page table record %llu damaged (key %llu)",
                       (unsigned long long)g, (unsigned long long)(p->tab + p->tw * g));
    *file = (size_t)w[3];
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
    size_t c = tsf_pix_col(p, device, series);
    if (c == SIZE_MAX)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_lookup: no series %zu in device %zu", series, device);
    size_t file;
    pthread_mutex_lock(&p->lock);
    tsf_status st = tsf_pix_lookup_locked(p, c, t, out, &file, err);
    pthread_mutex_unlock(&p->lock);
    return st;
}

void tsf_page_index_info(const tsf_page_index *p, uint64_t *npages, uint64_t *nlate)
{
    if (npages) *npages = p ? p->npages : 0;
    if (nlate) *nlate = p ? p->nlate : 0;
}

const tsf_reader *tsf_rd_page_index_reader(const tsf_page_index *p)
{
    return p ? p->r : NULL;
}
