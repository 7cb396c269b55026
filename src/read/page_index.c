/*
 * page_index.c - the page-time index of one TsFile: page start time -> page location
 * (chunk header offset, page header offset, page number in its chunk), kept in a sorted-mode PLTree
 * (include/tsf_index.h) stored next to the file as `<file>.tsfidx`. Built after the fact from a reader by
 * walking every series' chunks and page headers (container format §6-§7; single-page chunks take the
 * chunk's statistics), or at write time (tsf_writer_options.page_index -> tsf_page_index_build_file); queries
 * use it to start a partly covered chunk at the page holding time_min without walking the chunk's page
 * headers (query.c, pdir_jump), a reader opened by path finding `<path>.tsfidx` by itself (tsf_rd_pix_get). One
 * index can also cover the TsFiles of a directory (tsf_page_index_build_dir, at the end of this file). See
 * doc/reader.md "Page-time index".
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
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/tmpfile.h"
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
    unsigned tw;    /* page table words per page: 3, 4 for a directory index (+ file number) */
    /* directory index (r == NULL): column names (sorted) and the files, in name order */
    size_t nfiles;
    char *names, *fnames; /* "device\0series\0" per column; "file\0" per file */
    size_t names_cap, fnames_cap;
    const char **cdev, **cser, **fname;
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
    tsf_rd_buf b = {0};
    const uint8_t *p;
    tsf_status st = tsf_rd_fetch(r, r->size - len, len, &b, &p, err);
    if (st == TSF_OK) *out = (uint64_t)len << 32 | (uint32_t)crc32(0L, p, (uInt)len);
    tsf_rd_buf_free(r->a, &b);
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
    int64_t start, end;
    uint64_t g; /* page number in the page table */
    int late;
} pix_ent;

typedef struct pix_build {
    tsf_reader *r;
    const tsf_allocator *a;
    pix_ent *e;
    size_t ne, ecap;
    uint64_t *tab; /* tw per page: chunk offset, page header offset, page number | flags (, file) */
    size_t np, tcap;
    unsigned tw;   /* words per page: 3 (one file), 4 (directory index: + file number) */
    uint64_t file; /* directory index: the file being walked */
    tsf_rd_buf buf;
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

/* Check of a record that also names a file (directory index; file 0 = the one-file check). */
static uint64_t rec_check_f(uint64_t file, uint64_t coff, uint64_t hoff, uint64_t page)
{
    return rec_check(coff ^ (file * 0xD6E8FEB86659FD93ull), hoff, page);
}

/* Adds page g (chunk coff, header hoff, number k in its chunk) of column col covering [start, end]. */
static tsf_status add_page(pix_build *b, size_t col, int64_t start, int64_t end, int late, uint64_t coff,
                           uint64_t hoff, size_t k, tsf_error *err)
{
    if (grow(b->a, (void **)&b->e, &b->ecap, b->ne + 1, sizeof *b->e) ||
        grow(b->a, (void **)&b->tab, &b->tcap, b->tw * (b->np + 1), sizeof *b->tab))
        return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    b->e[b->ne++] = (pix_ent){col, start, end, b->np, late};
    uint64_t *t = &b->tab[b->tw * b->np];
    t[0] = coff;
    t[1] = hoff;
    t[2] = (uint64_t)(k & PIX_PAGE_MASK) | (late ? PIX_LATE : 0) | rec_check_f(b->file, coff, hoff, k & PIX_PAGE_MASK);
    if (b->tw == 4) t[3] = b->file;
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
    tsf_status st = tsf_rd_read_chunk_header(b->r, coff, &b->buf, &h, &dp, &de, &fetched, err);
    if (st) return st;
    *n = 0;
    *ok = 1;
    while (dp < de) {
        tsf_fmt_page_header ph;
        if ((st = tsf_rd_read_page_header(b->r, dp, de, &h, &b->buf, &ph, &fetched, err))) return st;
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

static tsf_status walk_nonaligned(pix_build *b, const tsf_rd_series *s, size_t col, walk_bufs *w, tsf_error *err)
{
    size_t pos = 0, n;
    uint64_t coff;
    tsf_fmt_stats cs;
    tsf_error e;
    tsf_status st;
    int seen = 0, ok;
    int64_t max_end = 0;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &coff, &cs, &e)) == TSF_OK) {
        if ((st = walk_chunk(b, coff, &cs, &w->h, &w->hcap, &n, &w->s, &w->e, &w->scap, &ok, err))) return st;
        for (size_t k = 0; ok && k < n; k++) {
            int late = is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], w->e[k], late, coff, w->h[k], k, err))) return st;
        }
    }
    if (st == TSF_ENOTFOUND) return TSF_OK;
    if (err) *err = e;
    return st;
}

/* Aligned device: the time chunks drive; the value chunk of a column in a chunk group is its first chunk
 * after the time chunk and before the next one (as in query.c); its pages pair with the time pages by
 * position and take their keys. */
static tsf_status walk_aligned(pix_build *b, const tsf_rd_device *d, size_t col, walk_bufs *w, walk_bufs *v,
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
            tsf_mip_next_chunk_meta(&r->series[d->series0 + j].tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
    size_t pos = 0, n, nvp;
    uint64_t coff, next;
    int seen = 0, ok, vok;
    int64_t max_end = 0;
    int have = tsf_mip_next_chunk_meta(&d->time.tsm, &pos, &coff, &cs, &e) == TSF_OK;
    while (have) {
        tsf_fmt_stats ncs;
        uint64_t noff;
        int nhave = tsf_mip_next_chunk_meta(&d->time.tsm, &pos, &noff, &ncs, &e) == TSF_OK;
        next = nhave ? noff : r->fm.meta_offset;
        if ((st = walk_chunk(b, coff, &cs, &w->h, &w->hcap, &n, &w->s, &w->e, &w->scap, &ok, err))) goto done;
        uint64_t g0 = b->np;
        for (size_t k = 0; ok && k < n; k++) {
            int late = is_late(w->s[k], w->e[k], &seen, &max_end);
            if ((st = add_page(b, col, w->s[k], w->e[k], late, coff, w->h[k], k, err))) goto done;
        }
        for (size_t j = 0; j < nv; j++) {
            const tsf_rd_series *s = &r->series[d->series0 + j];
            while (vhave[j] && voff[j] < coff)
                vhave[j] = tsf_mip_next_chunk_meta(&s->tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
            if (!vhave[j] || voff[j] >= next) continue;
            uint64_t vc = voff[j];
            vhave[j] = tsf_mip_next_chunk_meta(&s->tsm, &vpos[j], &voff[j], &vs, &e) == TSF_OK;
            if (!ok) continue;
            if ((st = walk_chunk(b, vc, &vs, &v->h, &v->hcap, &nvp, NULL, NULL, NULL, &vok, err))) goto done;
            if (nvp != n) continue; /* a mismatch (or an all-null chunk) is left to the query's checks */
            for (size_t k = 0; k < n; k++) {
                int late = (b->tab[b->tw * (g0 + k) + 2] & PIX_LATE) != 0;
                if ((st = add_page(b, col + 1 + j, w->s[k], w->e[k], late, vc, v->h[k], k, err))) goto done;
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

/* Assigns keys (column bases from each column's page starts); fills the directory (3 per column). nextra:
 * words stored after the directory. */
static tsf_status assign_keys(pix_build *b, size_t ncols, size_t nextra, uint64_t *dir, uint64_t *total,
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

/* Writes the index file from the collected pages; hdr: the header with the fields of the file(s) set (the
 * counts are set here); extra: words stored after the directory. *nlate_out = pages inserted after the bulk
 * load. */
static tsf_status write_index(pix_build *b, const char *path, size_t ncols, uint64_t *hdr, const uint64_t *extra,
                              size_t nextra, uint64_t *nlate_out, tsf_error *err)
{
    uint64_t *dir = tsf_calloc(b->a, 3 * ncols + 1, sizeof *dir), total = 0;
    uint64_t *keys = NULL, *vals = NULL;
    size_t n = 0, cap = 0, nlate = 0, tw = b->tw;
    tsf_index *ix = NULL;
    tsf_status st = dir ? TSF_OK : tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    if (st || (st = assign_keys(b, ncols, nextra, dir, &total, err))) goto done;
    /* in-order pages by key; a page whose key equals an earlier one is late too */
    if (b->ne) qsort(b->e, b->ne, sizeof *b->e, ent_cmp);
    cap = b->ne + tw * b->np + 3 * ncols + nextra + H_COUNT;
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
    hdr[H_NCOLS] = ncols, hdr[H_NPAGES] = b->np, hdr[H_SPAN] = total, hdr[H_NLATE] = nlate;
    for (size_t i = 0; i < H_COUNT; i++) keys[n] = PIX_HDR + i, vals[n++] = hdr[i];
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

/* write_index under a temporary name (common/tmpfile.h), then renamed: a reader never sees a half-written
   index, two builders of one path never share a file, and a failed build leaves nothing behind. */
static tsf_status write_renamed(pix_build *b, const char *path, size_t ncols, uint64_t *hdr, const uint64_t *extra,
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

tsf_status tsf_page_index_build(tsf_reader *r, const char *path, uint64_t *npages, tsf_error *err)
{
    if (!r || !path) return tsf_err(err, TSF_EINVAL, "tsf_page_index_build: reader and path are required");
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    pix_build b = {.r = r, .a = r->a, .tw = 3};
    walk_bufs w = {0}, v = {0};
    size_t *col0 = NULL, ncols = 0;
    uint64_t nlate = 0;
    if ((st = pix_columns(r, r->a, &col0, &ncols, err))) return st;
    for (size_t d = 0; d < r->ndevices && !st; d++) {
        const tsf_rd_device *dv = &r->devices[d];
        if (dv->aligned) {
            st = walk_aligned(&b, dv, col0[d], &w, &v, err);
            continue;
        }
        for (size_t j = 0; j < dv->nseries && !st; j++)
            st = walk_nonaligned(&b, &r->series[dv->series0 + j], col0[d] + j, &w, err);
    }
    uint64_t hdr[H_COUNT] = {PIX_MAGIC, r->size, 0, 0, 0, 0, 0, r->ndevices};
    if (!st) st = pix_tail_crc(r, &hdr[H_CRC], err);
    if (!st) st = write_renamed(&b, path, ncols, hdr, NULL, 0, &nlate, err);
    if (!st && npages) *npages = b.np;
    walk_bufs_free(r->a, &w);
    walk_bufs_free(r->a, &v);
    tsf_rd_buf_free(r->a, &b.buf);
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
    tsf_free(p->a, p->names, p->names_cap);
    tsf_free(p->a, p->fnames, p->fnames_cap);
    if (p->cdev) tsf_free(p->a, p->cdev, (p->ncols + 1) * sizeof *p->cdev);
    if (p->cser) tsf_free(p->a, p->cser, (p->ncols + 1) * sizeof *p->cser);
    if (p->fname) tsf_free(p->a, p->fname, (p->nfiles + 1) * sizeof *p->fname);
    tsf_free(p->a, p, sizeof *p);
}

static tsf_status get_u64(tsf_index *ix, uint64_t key, uint64_t *v, const char *what, tsf_error *err)
{
    tsf_status st = tsf_index_get(ix, key, v, err);
    if (st == TSF_ENOTFOUND)
        return tsf_err(err, TSF_ECORRUPT, "page index: %s (key %llu) missing", what, (unsigned long long)key);
    return st;
}

/* A handle on the index at path with its header read (h) and its magic checked. */
static tsf_status pix_new(const tsf_allocator *a, const char *path, uint64_t magic, tsf_page_index **out,
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
    for (size_t i = 0; i < H_COUNT; i++)
        if ((st = get_u64(p->ix, PIX_HDR + i, &h[i], "header word", err))) goto fail;
    if (h[H_MAGIC] != magic) {
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
static tsf_status pix_load_dir(tsf_page_index *p, const char *path, const uint64_t *h, tsf_error *err)
{
    tsf_status st;
    p->tab = h[H_SPAN];
    p->npages = h[H_NPAGES];
    p->nlate = h[H_NLATE];
    if (p->tab > PIX_HDR || p->npages > (PIX_HDR - p->tab) / 8 || p->ncols > (PIX_HDR - p->tab - 4 * p->npages) / 8)
        return tsf_err(err, TSF_ECORRUPT, "page index %s: header counts out of range", path);
    p->base = tsf_calloc(p->a, p->ncols + 1, sizeof *p->base);
    p->min = tsf_calloc(p->a, p->ncols + 1, sizeof *p->min);
    p->span = tsf_calloc(p->a, p->ncols + 1, sizeof *p->span);
    if (!p->base || !p->min || !p->span) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    uint64_t dk = p->tab + p->tw * p->npages, next = 0;
    for (size_t c = 0; c < p->ncols; c++) {
        uint64_t mn;
        if ((st = get_u64(p->ix, dk + 3 * c, &p->base[c], "column base", err)) ||
            (st = get_u64(p->ix, dk + 3 * c + 1, &mn, "column start", err)) ||
            (st = get_u64(p->ix, dk + 3 * c + 2, &p->span[c], "column span", err)))
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
    uint64_t h[H_COUNT], crc = 0;
    tsf_page_index *p = NULL;
    tsf_status st = pix_new(r->a, path, PIX_MAGIC, &p, h, err);
    if (st) return st;
    p->r = r;
    p->ndev = r->ndevices;
    if ((st = pix_columns(r, r->a, &p->col0, &p->ncols, err)) || (st = pix_tail_crc(r, &crc, err))) goto fail;
    if (h[H_SIZE] != r->size || h[H_CRC] != crc || h[H_NCOLS] != p->ncols || h[H_NDEV] != r->ndevices) {
        st = tsf_err(err, TSF_ESTATE,
                     "page index %s: made for another file (size %llu, %llu columns; this one "
                     "%llu bytes, %zu columns)",
                     path, (unsigned long long)h[H_SIZE], (unsigned long long)h[H_NCOLS],
                     (unsigned long long)r->size, p->ncols);
        goto fail;
    }
    if ((st = pix_load_dir(p, path, h, err))) goto fail;
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
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    char *path = idx_name(r->a, tsfile, &n);
    if (!path) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    st = pix_open_if_fit(r, path, out, err);
    tsf_free(r->a, path, n + 8);
    return st;
}

/* ---- the reader's own index (tsf_reader_options.page_index) and building at write time ------------- */

tsf_status tsf_rd_pix_set_path(tsf_reader *r, const char *tsfile, tsf_error *err)
{
    size_t n;
    if (!(r->pix_path = idx_name(r->a, tsfile, &n))) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
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
    if (!p->r || device >= p->ndev) return SIZE_MAX;
    size_t c0 = p->col0[device], n = p->col0[device + 1] - c0;
    int aligned = p->r->devices[device].aligned;
    if (series == TSF_PAGE_INDEX_TIME) return aligned ? c0 : SIZE_MAX;
    size_t c = series + (aligned ? 1 : 0);
    return c < n ? c0 + c : SIZE_MAX;
}

/* Lookup under the caller's lock. */
static tsf_status lookup_locked(tsf_page_index *p, size_t c, int64_t t, tsf_page_loc *out, size_t *file,
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
        if ((st = get_u64(p->ix, p->tab + p->tw * g + i, &w[i], "page table entry", err))) return st;
    if ((w[2] & PIX_CHECK_MASK) != rec_check_f(w[3], w[0], w[1], w[2] & PIX_PAGE_MASK) ||
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
    size_t c = pix_col(p, device, series);
    if (c == SIZE_MAX)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_lookup: no series %zu in device %zu", series, device);
    size_t file;
    pthread_mutex_lock(&p->lock);
    tsf_status st = lookup_locked(p, c, t, out, &file, err);
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

/* ---- one index over the TsFiles of a directory --------------------------------------------------- */
/*
 * Same key layout, with columns named (device, series) across files instead of numbered per reader, 4 page
 * table words per page (+ the file's number in name order) and, after the directory, the column names
 * ("device\0series\0", series "" for an aligned time column, in strcmp order), per file its size and
 * tail CRC, and the file names ("name\0"). Late: a page that starts at or before the end of a page of its
 * column seen before it (files in name order, then file order). Header: PIX_DMAGIC, name bytes, file
 * name bytes, counts, file count (H_NDEV).
 */
#define PIX_DMAGIC UINT64_C(0x3130445850465354) /* "TSFPXD01" little-endian */

typedef struct dcol {
    char *dev, *ser;
    size_t local; /* column over all files (file's first column + its own number) */
} dcol;

static int dcol_cmp(const void *x, const void *y)
{
    const dcol *a = x, *b = y;
    int c = strcmp(a->dev, b->dev);
    return c ? c : strcmp(a->ser, b->ser);
}

static int ent_cmp_col_g(const void *x, const void *y)
{
    const pix_ent *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->g < b->g ? -1 : a->g > b->g;
}

/* *.tsfile names of dir in strcmp order (malloc'ed; the caller frees them). */
static tsf_status list_tsfiles(const char *dir, char ***out, size_t *n, tsf_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return tsf_err(err, TSF_EIO, "page index: cannot open folder %s", dir);
    char **v = NULL;
    size_t k = 0, cap = 0;
    tsf_status st = TSF_OK;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".tsfile")) continue;
        if (k == cap) {
            char **g = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            if (!g) break;
            v = g;
        }
        if (!(v[k] = malloc(l + 1))) break;
        memcpy(v[k++], de->d_name, l + 1);
    }
    closedir(d);
    for (size_t i = 1; i < k; i++) /* insertion sort: directories hold few files */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *out = v;
    *n = k;
    return st;
}

/* Appends bytes to a word array (little-endian, zero-padded). */
static int put_bytes(uint64_t **w, size_t *nw, size_t *cap, size_t *nbytes, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++, (*nbytes)++) {
        size_t wi = *nbytes / 8;
        if (wi >= *nw) {
            if (wi >= *cap) {
                size_t nc = *cap ? 2 * *cap : 64;
                uint64_t *g = realloc(*w, nc * sizeof **w);
                if (!g) return -1;
                *w = g;
                *cap = nc;
            }
            (*w)[(*nw)++] = 0;
        }
        (*w)[wi] |= (uint64_t)(uint8_t)s[i] << (8 * (*nbytes % 8));
    }
    return 0;
}

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* Size and tail CRC (as pix_tail_crc) of a file read with stdio; -1 when it cannot be read. */
static int file_tail_crc(const char *path, uint64_t *size, uint64_t *crc)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int rc = -1;
    uint8_t *buf = NULL;
    if (fseeko(f, 0, SEEK_END) == 0) {
        off_t sz = ftello(f);
        size_t len = sz < (off_t)PIX_TAIL ? (size_t)sz : PIX_TAIL;
        buf = malloc(len ? len : 1);
        if (sz >= 0 && buf && fseeko(f, sz - (off_t)len, SEEK_SET) == 0 && fread(buf, 1, len, f) == len) {
            *size = (uint64_t)sz;
            *crc = (uint64_t)len << 32 | (uint32_t)crc32(0L, buf, (uInt)len);
            rc = 0;
        }
    }
    free(buf);
    fclose(f);
    return rc;
}

tsf_status tsf_page_index_build_dir(const char *dir, const char *path, uint64_t *npages, tsf_error *err)
{
    if (!dir) return tsf_err(err, TSF_EINVAL, "tsf_page_index_build_dir: dir is required");
    char **files = NULL, *def = NULL;
    size_t nf = 0, nc = 0, ccap = 0, nw = 0, wcap = 0, nb = 0, fb = 0;
    dcol *cols = NULL;
    size_t *gmap = NULL;
    uint64_t *words = NULL, *fw = NULL, nlate = 0;
    size_t nfw = 0, fwcap = 0;
    pix_build b = {.tw = 4};
    walk_bufs w = {0}, v = {0};
    tsf_status st = list_tsfiles(dir, &files, &nf, err);
    if (!st && !nf) st = tsf_err(err, TSF_ENOTFOUND, "page index: no .tsfile files in %s", dir);
    if (!path && !st && !(path = def = join_path(dir, "dir.tsfidx"))) goto oom;
    for (size_t f = 0; f < nf && !st; f++) {
        char *fp = join_path(dir, files[f]);
        if (!fp) goto oom;
        tsf_reader_options ro;
        tsf_reader_options_init(&ro);
        ro.page_index = 0;
        tsf_reader *r = NULL;
        st = tsf_reader_open(&r, fp, &ro, err);
        free(fp);
        if (!st) st = tsf_rd_ensure_index(r, err);
        b.r = r;
        b.file = f;
        size_t *col0 = NULL, ncols = 0;
        uint64_t crc = 0;
        if (!st) st = pix_columns(r, NULL, &col0, &ncols, err);
        if (!st) st = pix_tail_crc(r, &crc, err);
        if (!st && (put_bytes(&fw, &nfw, &fwcap, &fb, (const char *)&r->size, 8) ||
                    put_bytes(&fw, &nfw, &fwcap, &fb, (const char *)&crc, 8)))
            st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        /* names of this file's columns, numbered after those of the files before */
        for (size_t d = 0; !st && d < r->ndevices; d++) {
            const tsf_rd_device *dv = &r->devices[d];
            for (size_t j = 0; j < col0[d + 1] - col0[d] && !st; j++) {
                if (grow(NULL, (void **)&cols, &ccap, nc + 1, sizeof *cols)) goto oom_r;
                const char *sn = dv->aligned ? (j ? r->series[dv->series0 + j - 1].name : "")
                                             : r->series[dv->series0 + j].name;
                size_t dl = strlen(dv->name), sl = strlen(sn);
                cols[nc].dev = malloc(dl + 1);
                cols[nc].ser = malloc(sl + 1);
                cols[nc].local = nc;
                nc++;
                if (!cols[nc - 1].dev || !cols[nc - 1].ser) goto oom_r;
                memcpy(cols[nc - 1].dev, dv->name, dl + 1);
                memcpy(cols[nc - 1].ser, sn, sl + 1);
            }
            if (st) break;
            if (dv->aligned) {
                st = walk_aligned(&b, dv, nc - (col0[d + 1] - col0[d]), &w, &v, err);
                continue;
            }
            for (size_t j = 0; j < dv->nseries && !st; j++)
                st = walk_nonaligned(&b, &r->series[dv->series0 + j], nc - dv->nseries + j, &w, err);
        }
        goto next;
    oom_r:
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    next:
        if (col0) tsf_free(NULL, col0, (r->ndevices + 1) * sizeof *col0);
        tsf_rd_buf_free(r ? r->a : NULL, &b.buf);
        tsf_reader_close(r);
        b.r = NULL;
        if (st && err) { /* name the file */
            char m[TSF_ERROR_MESSAGE_SIZE];
            snprintf(m, sizeof m, "%s", err->message);
            tsf_err(err, st, "%s/%s: %s", dir, files[f], m);
        }
    }
    walk_bufs_free(NULL, &w);
    walk_bufs_free(NULL, &v);
    if (st) goto done;
    /* columns by name, equal names merged; entries renumbered; lateness over all files */
    if (nc) qsort(cols, nc, sizeof *cols, dcol_cmp);
    if (!(gmap = calloc(nc + 1, sizeof *gmap))) goto oom;
    size_t ng = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!i || dcol_cmp(&cols[i - 1], &cols[i])) {
            if (put_bytes(&words, &nw, &wcap, &nb, cols[i].dev, strlen(cols[i].dev) + 1) ||
                put_bytes(&words, &nw, &wcap, &nb, cols[i].ser, strlen(cols[i].ser) + 1))
                goto oom;
            ng++;
        }
        gmap[cols[i].local] = ng - 1;
    }
    for (size_t i = 0; i < b.ne; i++) b.e[i].key = gmap[b.e[i].key];
    if (b.ne) qsort(b.e, b.ne, sizeof *b.e, ent_cmp_col_g);
    for (size_t i = 0, j; i < b.ne; i = j) {
        int seen = 0;
        int64_t max_end = 0;
        for (j = i; j < b.ne && b.e[j].key == b.e[i].key; j++) {
            b.e[j].late = is_late(b.e[j].start, b.e[j].end, &seen, &max_end);
            uint64_t *t2 = &b.tab[4 * b.e[j].g + 2];
            *t2 = b.e[j].late ? *t2 | PIX_LATE : *t2 & ~PIX_LATE;
        }
    }
    for (size_t f = 0; f < nf; f++)
        if (put_bytes(&fw, &nfw, &fwcap, &fb, files[f], strlen(files[f]) + 1)) goto oom;
    /* extra words: names, then per file size and CRC (the first 2 * nf words of fw), then file names */
    if (grow(NULL, (void **)&words, &wcap, nw + nfw, sizeof *words)) goto oom;
    memcpy(words + nw, fw, nfw * sizeof *fw);
    uint64_t hdr[H_COUNT] = {PIX_DMAGIC, nb, fb - 16 * nf, 0, 0, 0, 0, nf};
    b.a = NULL;
    st = write_renamed(&b, path, ng, hdr, words, nw + nfw, &nlate, err);
    if (!st && npages) *npages = b.np;
    goto done;
oom:
    st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
done:
    for (size_t i = 0; i < nc; i++) free(cols[i].dev), free(cols[i].ser);
    free(cols);
    free(gmap);
    free(words);
    free(fw);
    for (size_t f = 0; f < nf; f++) free(files[f]);
    free(files);
    free(def);
    tsf_free(NULL, b.e, b.ecap * sizeof *b.e);
    tsf_free(NULL, b.tab, b.tcap * sizeof *b.tab);
    return st;
}

/* Reads nbytes of packed bytes from the words at key k0 into a new buffer (NUL-terminated). */
static tsf_status read_bytes(tsf_page_index *p, uint64_t k0, uint64_t nbytes, char **out, size_t *cap,
                             tsf_error *err)
{
    uint64_t nwords = (nbytes + 7) / 8;
    char *s = tsf_alloc(p->a, (size_t)nwords * 8 + 1);
    if (!s) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    *out = s;
    *cap = (size_t)nwords * 8 + 1;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t v;
        tsf_status st = get_u64(p->ix, k0 + i, &v, "name bytes", err);
        if (st) return st;
        for (int k = 0; k < 8; k++) s[8 * i + (uint64_t)k] = (char)(v >> (8 * k));
    }
    s[nbytes] = 0;
    return TSF_OK;
}

/* Splits n NUL-terminated strings of s[0, len) into v; -1 unless they use the bytes exactly. */
static int split_names(char *s, uint64_t len, const char **v, size_t n)
{
    uint64_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (pos >= len) return -1;
        v[i] = s + pos;
        const char *z = memchr(s + pos, 0, (size_t)(len - pos));
        if (!z) return -1;
        pos = (uint64_t)(z - s) + 1;
    }
    return pos == len ? 0 : -1;
}

tsf_status tsf_page_index_open_dir(tsf_page_index **out, const char *dir, const char *path, tsf_error *err)
{
    if (!dir || !out) return tsf_err(err, TSF_EINVAL, "tsf_page_index_open_dir: dir and out are required");
    *out = NULL;
    char *def = path ? NULL : join_path(dir, "dir.tsfidx");
    if (!path && !(path = def)) return tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    uint64_t h[H_COUNT];
    tsf_page_index *p = NULL;
    tsf_index_stats is;
    tsf_status st = pix_new(NULL, path, PIX_DMAGIC, &p, h, err);
    if (st) goto out;
    /* every count is backed by records of the index (no allocation from an unchecked length) */
    if ((st = tsf_index_stats_get(p->ix, &is))) {
        tsf_err(err, st, "page index %s: no statistics", path);
        goto fail;
    }
    uint64_t rec = is.records, nb = h[H_SIZE], fb = h[H_CRC];
    if (h[H_NCOLS] > rec / 3 || h[H_NDEV] > rec / 2 || h[H_NPAGES] > rec / 4 || nb / 8 > rec || fb / 8 > rec ||
        3 * h[H_NCOLS] + 2 * h[H_NDEV] + 4 * h[H_NPAGES] + nb / 8 + fb / 8 > rec) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: header counts beyond the index's %llu records", path,
                     (unsigned long long)rec);
        goto fail;
    }
    p->ncols = (size_t)h[H_NCOLS];
    p->nfiles = (size_t)h[H_NDEV];
    if ((st = pix_load_dir(p, path, h, err))) goto fail;
    uint64_t k = p->tab + 4 * p->npages + 3 * (uint64_t)p->ncols;
    p->cdev = tsf_calloc(p->a, p->ncols + 1, sizeof *p->cdev);
    p->cser = tsf_calloc(p->a, p->ncols + 1, sizeof *p->cser);
    p->fname = tsf_calloc(p->a, p->nfiles + 1, sizeof *p->fname);
    const char **pairs = tsf_calloc(p->a, 2 * p->ncols + 1, sizeof *pairs);
    if (!p->cdev || !p->cser || !p->fname || !pairs) {
        tsf_free(p->a, pairs, (2 * p->ncols + 1) * sizeof *pairs);
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        goto fail;
    }
    if ((st = read_bytes(p, k, nb, &p->names, &p->names_cap, err)) ||
        (st = read_bytes(p, k + (nb + 7) / 8 + 2 * p->nfiles, fb, &p->fnames, &p->fnames_cap, err))) {
        tsf_free(p->a, pairs, (2 * p->ncols + 1) * sizeof *pairs);
        goto fail;
    }
    int bad = split_names(p->names, nb, pairs, 2 * p->ncols) || split_names(p->fnames, fb, p->fname, p->nfiles);
    for (size_t c = 0; c < p->ncols; c++) {
        p->cdev[c] = pairs[2 * c], p->cser[c] = pairs[2 * c + 1];
        dcol x = {(char *)p->cdev[c], (char *)p->cser[c], 0}, y = {(char *)p->cdev[c ? c - 1 : 0],
                                                               (char *)p->cser[c ? c - 1 : 0], 0};
        if (!bad && c && dcol_cmp(&y, &x) >= 0) bad = 1; /* strictly ascending: binary search */
    }
    tsf_free(p->a, pairs, (2 * p->ncols + 1) * sizeof *pairs);
    for (size_t f = 0; !bad && f < p->nfiles; f++)
        if (!p->fname[f][0] || strchr(p->fname[f], '/')) bad = 1;
    if (bad) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: column or file names damaged", path);
        goto fail;
    }
    /* the files must be those indexed */
    uint64_t fk = k + (nb + 7) / 8;
    for (size_t f = 0; f < p->nfiles; f++) {
        uint64_t size, crc, s2 = 0, c2 = 0;
        if ((st = get_u64(p->ix, fk + 2 * f, &size, "file size", err)) ||
            (st = get_u64(p->ix, fk + 2 * f + 1, &crc, "file tail CRC", err)))
            goto fail;
        char *fp = join_path(dir, p->fname[f]);
        int rc = fp ? file_tail_crc(fp, &s2, &c2) : -1;
        free(fp);
        if (rc || s2 != size || c2 != crc) {
            st = tsf_err(err, TSF_ESTATE, "page index %s: %s/%s is %s since the index was built", path, dir,
                         p->fname[f], rc ? "missing or unreadable" : "another file");
            goto fail;
        }
    }
    *out = p;
    goto out;
fail:
    tsf_page_index_close(p);
out:
    free(def);
    return st;
}

tsf_status tsf_page_index_lookup_name(tsf_page_index *p, const char *device, const char *series, int64_t t,
                                      size_t *file, tsf_page_loc *out, tsf_error *err)
{
    if (!p || !device || !out)
        return tsf_err(err, TSF_EINVAL, "tsf_page_index_lookup_name: index, device and out required");
    size_t c = SIZE_MAX, f = 0;
    if (p->r) { /* one file: its reader's numbering */
        size_t d, j = TSF_PAGE_INDEX_TIME;
        tsf_error e;
        if (tsf_reader_find_device(p->r, device, &d, &e) == TSF_OK &&
            (!series || !*series || tsf_reader_find_series(p->r, d, series, &j, &e) == TSF_OK))
            c = pix_col(p, d, j);
    } else {
        dcol key = {(char *)device, (char *)(series ? series : ""), 0};
        size_t lo = 0, hi = p->ncols;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            dcol m = {(char *)p->cdev[mid], (char *)p->cser[mid], 0};
            int r = dcol_cmp(&m, &key);
            if (r == 0) {
                c = mid;
                break;
            }
            if (r < 0) lo = mid + 1;
            else hi = mid;
        }
    }
    if (c == SIZE_MAX)
        return tsf_err(err, TSF_ENOTFOUND, "page index: no series %s of %s", series ? series : "(time)", device);
    pthread_mutex_lock(&p->lock);
    tsf_status st = lookup_locked(p, c, t, out, &f, err);
    pthread_mutex_unlock(&p->lock);
    if (!st && file) *file = f;
    return st;
}

size_t tsf_page_index_file_count(const tsf_page_index *p)
{
    return !p ? 0 : p->r ? 1 : p->nfiles;
}

const char *tsf_page_index_file(const tsf_page_index *p, size_t i)
{
    return p && !p->r && i < p->nfiles ? p->fname[i] : NULL;
}
