/*
 * page_index_dir.c - one page-time index over the TsFiles of a directory (tsf_page_index_build_dir,
 * tsf_page_index_open_dir, lookups by name). Same key layout as the index of one file
 * (src/format/page_index_file.h), with columns named (device, series) across files instead of numbered per
 * reader, 4 page table words per page (+ the file's number in name order) and, after the directory, the
 * column names ("device\0series\0", series "" for an aligned time column, in strcmp order), per file its size
 * and tail CRC, and the file names ("name\0"). Late: a page that starts at or before the end of a page of its
 * column seen before it (files in name order, then file order). Header: PIX_DMAGIC, name bytes, file name
 * bytes, counts, file count (PIX_H_NDEV).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_index_internal.h"

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
    const tsf_pix_ent *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->g < b->g ? -1 : a->g > b->g;
}

tsf_status tsf_rd_list_tsfiles(const char *dir, char ***out, size_t *n, tsf_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return tsf_err(err, TSF_EIO, "cannot open folder %s", dir);
    char **v = NULL;
    size_t k = 0, cap = 0;
    tsf_status st = TSF_OK;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".tsfile")) continue;
        if (k == cap) {
            char **g = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            if (!g) goto oom;
            v = g;
        }
        if (!(v[k] = malloc(l + 1))) goto oom;
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
oom:
    closedir(d);
    for (size_t i = 0; i < k; i++) free(v[i]);
    free(v);
    return tsf_err(err, TSF_ENOMEM, "out of memory listing folder %s", dir);
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

/* Size and tail CRC (tsf_pix_tail_crc) of a file read with stdio; -1 when it cannot be read. */
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
            *crc = tsf_pix_tail_crc(buf, len);
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
    tsf_pix_build b = {.tw = 4};
    tsf_pix_bufs w = {0}, v = {0};
    tsf_rd_buf buf = {0};
    tsf_status st = tsf_rd_list_tsfiles(dir, &files, &nf, err);
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
        b.file = f;
        size_t *col0 = NULL, ncols = 0;
        uint64_t crc = 0;
        if (!st) st = tsf_pix_columns(r, NULL, &col0, &ncols, err);
        if (!st) st = tsf_pix_reader_tail_crc(r, &crc, err);
        if (!st && (put_bytes(&fw, &nfw, &fwcap, &fb, (const char *)&r->size, 8) ||
                    put_bytes(&fw, &nfw, &fwcap, &fb, (const char *)&crc, 8)))
            st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
        /* names of this file's columns, numbered after those of the files before */
        for (size_t d = 0; !st && d < r->ndevices; d++) {
            const tsf_rd_device *dv = &r->devices[d];
            for (size_t j = 0; j < col0[d + 1] - col0[d] && !st; j++) {
                if (tsf_pix_grow(NULL, (void **)&cols, &ccap, nc + 1, sizeof *cols)) goto oom_r;
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
            if (!st) st = tsf_pix_walk_device(&b, r, d, nc - (col0[d + 1] - col0[d]), &buf, &w, &v, err);
        }
        goto next;
    oom_r:
        st = tsf_err(err, TSF_ENOMEM, "page index: out of memory");
    next:
        if (col0) tsf_free(NULL, col0, (r->ndevices + 1) * sizeof *col0);
        tsf_rd_buf_free(r ? r->a : NULL, &buf);
        tsf_reader_close(r);
        if (st && err) { /* name the file */
            char m[TSF_ERROR_MESSAGE_SIZE];
            snprintf(m, sizeof m, "%s", err->message);
            tsf_err(err, st, "%s/%s: %s", dir, files[f], m);
        }
    }
    tsf_pix_bufs_free(NULL, &w);
    tsf_pix_bufs_free(NULL, &v);
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
            b.e[j].late = tsf_pix_is_late(b.e[j].start, b.e[j].end, &seen, &max_end);
            uint64_t *t2 = &b.tab[4 * b.e[j].g + 2];
            *t2 = b.e[j].late ? *t2 | PIX_LATE : *t2 & ~PIX_LATE;
        }
    }
    for (size_t f = 0; f < nf; f++)
        if (put_bytes(&fw, &nfw, &fwcap, &fb, files[f], strlen(files[f]) + 1)) goto oom;
    /* extra words: names, then per file size and CRC (the first 2 * nf words of fw), then file names */
    if (tsf_pix_grow(NULL, (void **)&words, &wcap, nw + nfw, sizeof *words)) goto oom;
    memcpy(words + nw, fw, nfw * sizeof *fw);
    uint64_t hdr[PIX_H_COUNT] = {PIX_DMAGIC, nb, fb - 16 * nf, 0, 0, 0, 0, nf};
    st = tsf_pix_write(&b, path, ng, hdr, words, nw + nfw, &nlate, err);
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
    tsf_pix_build_free(&b);
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
        tsf_status st = tsf_pix_get_u64(p->ix, k0 + i, &v, "name bytes", err);
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
    uint64_t h[PIX_H_COUNT];
    tsf_page_index *p = NULL;
    tsf_index_stats is;
    tsf_status st = tsf_pix_new(NULL, path, PIX_DMAGIC, &p, h, err);
    if (st) goto out;
    /* every count is backed by records of the index (no allocation from an unchecked length) */
    if ((st = tsf_index_stats_get(p->ix, &is))) {
        tsf_err(err, st, "page index %s: no statistics", path);
        goto fail;
    }
    uint64_t rec = is.records, nb = h[PIX_H_SIZE], fb = h[PIX_H_CRC];
    if (h[PIX_H_NCOLS] > rec / 3 || h[PIX_H_NDEV] > rec / 2 || h[PIX_H_NPAGES] > rec / 4 || nb / 8 > rec || fb / 8 > rec ||
        3 * h[PIX_H_NCOLS] + 2 * h[PIX_H_NDEV] + 4 * h[PIX_H_NPAGES] + nb / 8 + fb / 8 > rec) {
        st = tsf_err(err, TSF_ECORRUPT, "page index %s: header counts beyond the index's %llu records", path,
                     (unsigned long long)rec);
        goto fail;
    }
    p->ncols = (size_t)h[PIX_H_NCOLS];
    p->nfiles = (size_t)h[PIX_H_NDEV];
    if ((st = tsf_pix_load_dir(p, path, h, err))) goto fail;
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
        if ((st = tsf_pix_get_u64(p->ix, fk + 2 * f, &size, "file size", err)) ||
            (st = tsf_pix_get_u64(p->ix, fk + 2 * f + 1, &crc, "file tail CRC", err)))
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
            c = tsf_pix_col(p, d, j);
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
    tsf_status st = tsf_pix_lookup_locked(p, c, t, out, &f, err);
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
