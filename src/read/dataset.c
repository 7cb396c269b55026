/*
 * dataset.c - tsf_dataset_open and the dataset's metadata (doc/dataset.md). The paths expand to an ordered
 * file list (a directory: its `*.tsfile` names in strcmp order; a pattern: glob(3)'s sorted matches; else the
 * path itself). Each file is opened, its index loaded (tail and index area only, no chunk) and closed again;
 * what the dataset keeps of it: size, per device (by name) the time range (aligned: the time column's) and
 * per series (by measurement) type, time range and count. Tables merge by name, their columns by name
 * (types and categories must agree); devices merge by name, series by device and measurement (types must
 * agree). After the last file, tables are sorted by name and devices by table then name (strcmp).
 * What a file contributes is first gathered into a summary (tsf_ds_sum) and then merged; with a metadata
 * cache (dataset_cache.c) an unchanged file's summary comes from its cache entry instead of the file, so a
 * dataset is the same with or without the cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_internal.h"

/* ---- names: an arena of blocks freed together ---- */

typedef struct tsf_ds_arena {
    struct tsf_ds_arena *next;
    size_t used, cap;
    char data[];
} tsf_ds_arena;

static void *arena_get(tsf_dataset *ds, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    tsf_ds_arena *b = ds->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = tsf_alloc(ds->a, sizeof *b + cap);
        if (!b) return NULL;
        b->next = ds->arena;
        b->used = 0;
        b->cap = cap;
        ds->arena = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static const char *arena_str(tsf_dataset *ds, const char *s, size_t len)
{
    char *p = arena_get(ds, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

/* Grows *p (elements of size sz, capacity *cap) to hold n; -1 on overflow or failure. */
static int grow(const tsf_allocator *a, void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap) return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < n) {
        if (nc > SIZE_MAX / 2 / sz) return -1;
        nc *= 2;
    }
    void *g = tsf_realloc(a, *p, *cap * sz, nc * sz);
    if (!g) return -1;
    *p = g;
    *cap = nc;
    return 0;
}

void tsf_dataset_options_init(tsf_dataset_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

/* ---- sources ---- */

static int fd_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    int fd = (int)(intptr_t)ud;
    for (uint8_t *p = buf; len;) {
        ssize_t k = pread(fd, p, len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k, len -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

tsf_status tsf_rd_ds_open_file(const tsf_dataset *ds, const char *path, const tsf_reader_options *ro,
                               const tsf_read_callbacks *(*wrap)(void *wctx, const tsf_read_callbacks *base),
                               void *wctx, tsf_ds_src *src, tsf_reader **r, tsf_error *err)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    *r = NULL;
    if (ds->open_source) {
        tsf_read_callbacks cb = {sizeof cb, NULL, 0, NULL};
        if (ds->open_source(ds->source_ctx, path, &cb) || !cb.pread)
            return tsf_err(err, TSF_EIO, "%s: the dataset's source cannot open it", path);
        src->cb = cb;
        src->user = 1;
    } else if (!wrap && ds->pool) {
        tsf_status st = tsf_reader_pool_acquire(ds->pool, path, ro, r, err);
        src->pooled = !st;
        return st;
    } else if (!wrap) {
        tsf_reader_options o; /* by use: a reader for one query or one metadata read reads with pread */
        if (ro) o = *ro;
        else tsf_reader_options_init(&o);
        if (o.use_pread < 0) o.use_pread = 1;
        return tsf_reader_open(r, path, &o, err);
    } else {
        struct stat sb;
        src->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (src->fd < 0 || fstat(src->fd, &sb)) {
            tsf_status st = tsf_err(err, TSF_EIO, "%s: cannot open (%s)", path, strerror(errno));
            tsf_rd_ds_close_file(ds, src, NULL);
            return st;
        }
        src->cb =
            (tsf_read_callbacks){sizeof src->cb, fd_pread, (uint64_t)sb.st_size, (void *)(intptr_t)src->fd};
    }
    const tsf_read_callbacks *cb = wrap ? wrap(wctx, &src->cb) : &src->cb;
    tsf_status st = tsf_reader_open_callbacks(r, cb, ro, err);
    if (st) {
        tsf_rd_ds_close_file(ds, src, NULL);
        *r = NULL;
    }
    return st;
}

void tsf_rd_ds_close_file(const tsf_dataset *ds, tsf_ds_src *src, tsf_reader *r)
{
    if (src->pooled) tsf_reader_pool_release(ds->pool, r);
    else tsf_reader_close(r);
    src->pooled = 0;
    if (src->user && ds->close_source) ds->close_source(ds->source_ctx, src->cb.ud);
    if (src->fd >= 0) close(src->fd);
    src->user = 0;
    src->fd = -1;
}

tsf_status tsf_rd_ds_name_file(tsf_status st, const char *path, tsf_error *err)
{
    if (st && err && strncmp(err->message, path, strlen(path))) {
        char m[TSF_ERROR_MESSAGE_SIZE];
        snprintf(m, sizeof m, "%s", err->message);
        tsf_err(err, st, "%s: %s", path, m);
    }
    return st;
}

/* ---- path expansion ---- */

static tsf_status add_path(tsf_dataset *ds, const char *path, size_t len, tsf_error *err)
{
    for (size_t i = 0; i < ds->nfiles; i++)
        if (strlen(ds->files[i].path) == len && !memcmp(ds->files[i].path, path, len))
            return tsf_err(err, TSF_EINVAL, "dataset: %s is named twice", ds->files[i].path);
    if (grow(ds->a, (void **)&ds->files, &ds->filecap, ds->nfiles + 1, sizeof *ds->files))
        return tsf_err(err, TSF_ENOMEM, "dataset: out of memory");
    tsf_ds_file *f = &ds->files[ds->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->path = arena_str(ds, path, len))) return tsf_err(err, TSF_ENOMEM, "dataset: out of memory");
    f->tmin = INT64_MAX;
    f->tmax = INT64_MIN;
    ds->nfiles++;
    return TSF_OK;
}

static tsf_status expand(tsf_dataset *ds, const char *path, tsf_error *err)
{
    struct stat sb;
    if (ds->open_source) return add_path(ds, path, strlen(path), err);
    if (strpbrk(path, "*?[")) {
        glob_t g;
        int rc = glob(path, 0, NULL, &g);
        tsf_status st = TSF_OK;
        if (rc == GLOB_NOMATCH)
            st = tsf_err(err, TSF_ENOTFOUND, "dataset: no file matches %s", path);
        else if (rc == GLOB_NOSPACE)
            st = tsf_err(err, TSF_ENOMEM, "dataset: out of memory expanding %s", path);
        else if (rc)
            st = tsf_err(err, TSF_EIO, "dataset: cannot expand %s", path);
        for (size_t i = 0; !rc && !st && i < g.gl_pathc; i++)
            st = add_path(ds, g.gl_pathv[i], strlen(g.gl_pathv[i]), err);
        if (rc != GLOB_NOMATCH && rc != GLOB_NOSPACE) globfree(&g);
        return st;
    }
    if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) return add_path(ds, path, strlen(path), err);
    char **names = NULL;
    size_t n = 0;
    tsf_status st = tsf_rd_list_tsfiles(path, &names, &n, err);
    if (!st && !n) st = tsf_err(err, TSF_ENOTFOUND, "dataset: no .tsfile files in %s", path);
    size_t dl = strlen(path);
    while (dl > 1 && path[dl - 1] == '/') dl--;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        char *p = st ? NULL : malloc(dl + nl + 2);
        if (!st && !p) st = tsf_err(err, TSF_ENOMEM, "dataset: out of memory");
        if (p) {
            memcpy(p, path, dl);
            p[dl] = '/';
            memcpy(p + dl + 1, names[i], nl + 1);
            st = add_path(ds, p, dl + nl + 1, err);
            free(p);
        }
        free(names[i]);
    }
    free(names);
    return st;
}

/* ---- the schema union ---- */

static size_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return (size_t)h;
}

size_t tsf_rd_ds_find(const tsf_dataset *ds, const char *name)
{
    if (!ds->hcap) return (size_t)-1;
    for (size_t i = hash_name(name) & (ds->hcap - 1);; i = (i + 1) & (ds->hcap - 1)) {
        if (!ds->hash[i]) return (size_t)-1;
        if (!strcmp(ds->devs[ds->hash[i] - 1].name, name)) return ds->hash[i] - 1;
    }
}

static int hash_insert(tsf_dataset *ds, size_t idx)
{
    if (2 * (ds->ndevs + 1) > ds->hcap) {
        size_t nc = ds->hcap ? 2 * ds->hcap : 64;
        size_t *h = tsf_calloc(ds->a, nc, sizeof *h);
        if (!h) return -1;
        tsf_free(ds->a, ds->hash, ds->hcap * sizeof *ds->hash);
        ds->hash = h;
        ds->hcap = nc;
        for (size_t d = 0; d < ds->ndevs; d++) {
            if (d == idx) continue;
            size_t i = hash_name(ds->devs[d].name) & (nc - 1);
            while (h[i]) i = (i + 1) & (nc - 1);
            h[i] = d + 1;
        }
    }
    size_t i = hash_name(ds->devs[idx].name) & (ds->hcap - 1);
    while (ds->hash[i]) i = (i + 1) & (ds->hcap - 1);
    ds->hash[i] = idx + 1;
    return 0;
}

static tsf_status oom(tsf_error *err)
{
    return tsf_err(err, TSF_ENOMEM, "dataset: out of memory");
}

/* The dataset table named like file table t (added when new), its columns merged. */
static tsf_status merge_table(tsf_dataset *ds, size_t f, const tsf_ds_sum_table *t, size_t *out, tsf_error *err)
{
    size_t k = 0;
    while (k < ds->ntables && strcmp(ds->tables[k].name, t->name)) k++;
    if (k == ds->ntables) {
        if (grow(ds->a, (void **)&ds->tables, &ds->tablecap, k + 1, sizeof *ds->tables)) return oom(err);
        memset(&ds->tables[k], 0, sizeof ds->tables[k]);
        if (!(ds->tables[k].name = arena_str(ds, t->name, strlen(t->name)))) return oom(err);
        ds->ntables++;
    }
    tsf_ds_table *dt = &ds->tables[k];
    for (size_t c = 0; c < t->ncols; c++) {
        const tsf_table_column *col = &t->cols[c];
        size_t j = 0;
        while (j < dt->ncols && strcmp(dt->cols[j].name, col->name)) j++;
        if (j < dt->ncols) {
            const tsf_table_column *have = &dt->cols[j];
            if (have->type != col->type || have->category != col->category)
                return tsf_err(
                    err, TSF_ECORRUPT, "dataset: table %s column %s is %s %s in %s but %s %s in %s", dt->name,
                    col->name, have->category == TSF_COLUMN_TAG ? "TAG" : "FIELD", tsf_type_name(have->type),
                    ds->files[dt->col_file[j]].path, col->category == TSF_COLUMN_TAG ? "TAG" : "FIELD",
                    tsf_type_name(col->type), ds->files[f].path);
            continue;
        }
        size_t cap = dt->colcap;
        if (grow(ds->a, (void **)&dt->cols, &dt->colcap, j + 1, sizeof *dt->cols)) return oom(err);
        if (cap != dt->colcap) {
            size_t *g = tsf_realloc(ds->a, dt->col_file, cap * sizeof *g, dt->colcap * sizeof *g);
            if (!g) {
                dt->colcap = cap; /* keep the two arrays' capacity equal */
                return oom(err);
            }
            dt->col_file = g;
        }
        dt->cols[j] = *col;
        if (!(dt->cols[j].name = arena_str(ds, col->name, strlen(col->name)))) return oom(err);
        dt->col_file[j] = f;
        dt->ncols++;
    }
    *out = k;
    return TSF_OK;
}

/* The dataset device named like file device rd (added when new); *dev its index. */
static tsf_status merge_device(tsf_dataset *ds, size_t f, const tsf_ds_sum_dev *rd, size_t table, size_t *dev,
                               tsf_error *err)
{
    size_t k = tsf_rd_ds_find(ds, rd->name);
    if (k == (size_t)-1) {
        if (grow(ds->a, (void **)&ds->devs, &ds->devcap, ds->ndevs + 1, sizeof *ds->devs)) return oom(err);
        k = ds->ndevs;
        tsf_ds_device *d = &ds->devs[k];
        memset(d, 0, sizeof *d);
        d->table = table;
        d->aligned = rd->aligned;
        d->tmin = INT64_MAX;
        d->tmax = INT64_MIN;
        d->first_file = f;
        if (!(d->name = arena_str(ds, rd->name, strlen(rd->name)))) return oom(err);
        d->nsegs = rd->nsegs;
        if (d->nsegs && !(d->segs = arena_get(ds, d->nsegs * sizeof *d->segs))) return oom(err);
        for (size_t s = 0; s < d->nsegs; s++) {
            tsf_fmt_str sg = rd->segs[s];
            d->segs[s].data = NULL;
            d->segs[s].len = 0;
            if (sg.is_null) continue;
            const char *c = arena_str(ds, (const char *)sg.data, sg.len);
            if (!c) return oom(err);
            d->segs[s].data = (const uint8_t *)c;
            d->segs[s].len = sg.len;
        }
        if (hash_insert(ds, k)) return oom(err);
        ds->ndevs++;
    }
    ds->devs[k].aligned &= rd->aligned;
    ds->devs[k].nfiles++;
    *dev = k;
    return TSF_OK;
}

/* Position of measurement name in device d's sorted series (*found = 1 when there). */
static size_t series_pos(const tsf_ds_device *d, const char *name, int *found)
{
    size_t lo = 0, hi = d->nser;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(d->sers[mid].name, name);
        if (!c) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static void widen(int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
    if (a < *lo) *lo = a;
    if (b > *hi) *hi = b;
}

/* Adds file f's summary to the dataset. fser.ser holds the name until the union is complete. */
static tsf_status add_file(tsf_dataset *ds, size_t f, const tsf_ds_sum *sm, tsf_error *err)
{
    tsf_status st = TSF_OK;
    tsf_ds_file *fl = &ds->files[f];
    fl->size = sm->size;
    size_t nd = sm->ndevs, ns = sm->nsers;
    if (nd && !(fl->devs = tsf_calloc(ds->a, nd, sizeof *fl->devs))) return oom(err);
    if (ns && !(fl->sers = tsf_calloc(ds->a, ns, sizeof *fl->sers))) return oom(err);
    fl->ndevs = nd;
    fl->nsers = ns;
    size_t *tmap = tsf_calloc(ds->a, sm->ntables + 1, sizeof *tmap);
    if (!tmap) return oom(err);
    for (size_t t = 0; t < sm->ntables && !st; t++) st = merge_table(ds, f, &sm->tables[t], &tmap[t], err);
    for (size_t d = 0, s0 = 0; d < nd && !st; d++) {
        const tsf_ds_sum_dev *rd = &sm->devs[d];
        tsf_ds_fdev *fd = &fl->devs[d];
        st = merge_device(ds, f, rd, tmap[rd->table], &fd->dev, err);
        if (st) break;
        fd->local = d;
        fd->tmin = INT64_MAX;
        fd->tmax = INT64_MIN;
        fd->ser0 = s0;
        fd->nser = rd->nser;
        if (rd->aligned && rd->tcount) widen(&fd->tmin, &fd->tmax, rd->tmin, rd->tmax);
        for (size_t j = 0; j < rd->nser && !st; j++, s0++) {
            const tsf_ds_sum_ser *si = &sm->sers[rd->ser0 + j];
            tsf_ds_device *dd = &ds->devs[fd->dev];
            int found;
            size_t pos = series_pos(dd, si->name, &found);
            if (!found) {
                if (grow(ds->a, (void **)&dd->sers, &dd->sercap, dd->nser + 1, sizeof *dd->sers)) {
                    st = oom(err);
                    break;
                }
                memmove(&dd->sers[pos + 1], &dd->sers[pos], (dd->nser - pos) * sizeof *dd->sers);
                dd->nser++;
                tsf_ds_series *ser = &dd->sers[pos];
                memset(ser, 0, sizeof *ser);
                ser->type = si->type;
                ser->tmin = INT64_MAX;
                ser->tmax = INT64_MIN;
                ser->first_file = f;
                if (!(ser->name = arena_str(ds, si->name, strlen(si->name)))) {
                    st = oom(err);
                    break;
                }
            }
            tsf_ds_series *ser = &dd->sers[pos];
            if (ser->type != si->type) {
                st = tsf_err(err, TSF_ECORRUPT, "dataset: series %s.%s is %s in %s but %s in %s", dd->name,
                             ser->name, tsf_type_name(ser->type), ds->files[ser->first_file].path,
                             tsf_type_name(si->type), fl->path);
                break;
            }
            tsf_ds_fser *fs = &fl->sers[s0];
            fs->ser = (size_t)(uintptr_t)ser->name;
            fs->count = si->count;
            fs->tmin = INT64_MAX;
            fs->tmax = INT64_MIN;
            ser->nfiles++;
            if (si->count) {
                fs->tmin = si->tmin;
                fs->tmax = si->tmax;
                widen(&ser->tmin, &ser->tmax, fs->tmin, fs->tmax);
                widen(&fd->tmin, &fd->tmax, fs->tmin, fs->tmax);
                ser->count += si->count;
                fl->points += si->count;
            }
        }
        if (!st && fd->tmin <= fd->tmax) {
            widen(&fl->tmin, &fl->tmax, fd->tmin, fd->tmax);
            widen(&ds->devs[fd->dev].tmin, &ds->devs[fd->dev].tmax, fd->tmin, fd->tmax);
        }
    }
    tsf_free(ds->a, tmap, (sm->ntables + 1) * sizeof *tmap);
    return st;
}

/* Scratch arrays of a summary read from a reader, reused from file to file. */
typedef struct sum_buf {
    tsf_ds_sum_table *tables;
    tsf_ds_sum_dev *devs;
    tsf_ds_sum_ser *sers;
    tsf_fmt_str *segs;
    size_t cap_tables, cap_devs, cap_sers, cap_segs;
} sum_buf;

static void sum_buf_free(const tsf_allocator *a, sum_buf *b)
{
    tsf_free(a, b->tables, b->cap_tables * sizeof *b->tables);
    tsf_free(a, b->devs, b->cap_devs * sizeof *b->devs);
    tsf_free(a, b->sers, b->cap_sers * sizeof *b->sers);
    tsf_free(a, b->segs, b->cap_segs * sizeof *b->segs);
}

/* The summary of reader r's file (borrowing its names: valid while r is open). */
static tsf_status summarize(tsf_dataset *ds, tsf_reader *r, sum_buf *b, tsf_ds_sum *out, tsf_error *err)
{
    tsf_status st = tsf_reader_load_index(r, err);
    if (st) return st;
    size_t nd = r->ndevices, ns = 0, ng = 0;
    for (size_t d = 0; d < nd; d++) ns += r->devices[d].nseries, ng += r->devices[d].id.nseg;
    if (grow(ds->a, (void **)&b->tables, &b->cap_tables, r->ntables, sizeof *b->tables) ||
        grow(ds->a, (void **)&b->devs, &b->cap_devs, nd, sizeof *b->devs) ||
        grow(ds->a, (void **)&b->sers, &b->cap_sers, ns, sizeof *b->sers) ||
        grow(ds->a, (void **)&b->segs, &b->cap_segs, ng, sizeof *b->segs))
        return oom(err);
    for (size_t t = 0; t < r->ntables; t++) {
        tsf_table_info ti;
        if ((st = tsf_reader_table(r, t, &ti, err))) return st;
        b->tables[t] = (tsf_ds_sum_table){ti.name, ti.columns, ti.ncolumns};
    }
    for (size_t d = 0, s0 = 0, g0 = 0; d < nd; d++) {
        const tsf_rd_device *rd = &r->devices[d];
        const tsf_fmt_stats *ts = &rd->time.tsm.stats;
        for (uint32_t g = 0; g < rd->id.nseg; g++) b->segs[g0 + g] = tsf_fmt_device_segment(&rd->id, g);
        b->devs[d] = (tsf_ds_sum_dev){rd->name, rd->table,      rd->aligned, ts->count, ts->start_time,
                                      ts->end_time, b->segs ? b->segs + g0 : NULL, rd->id.nseg, s0,        rd->nseries};
        g0 += rd->id.nseg;
        for (size_t j = 0; j < rd->nseries; j++, s0++) {
            tsf_series_info si;
            if ((st = tsf_reader_series(r, d, j, &si, err))) return st;
            b->sers[s0] = (tsf_ds_sum_ser){si.measurement, si.type, si.stats.count, si.stats.start_time,
                                           si.stats.end_time};
        }
    }
    *out = (tsf_ds_sum){r->size, b->tables, r->ntables, b->devs, nd, b->sers, ns};
    return TSF_OK;
}

typedef struct dev_key {
    const char *table, *name;
    size_t old;
} dev_key;

static int dev_key_cmp(const void *x, const void *y)
{
    const dev_key *a = x, *b = y;
    int c = strcmp(a->table, b->table);
    return c ? c : strcmp(a->name, b->name);
}

static int fdev_cmp(const void *x, const void *y)
{
    const tsf_ds_fdev *a = x, *b = y;
    return a->dev < b->dev ? -1 : a->dev > b->dev;
}

/* Sorts tables by name and devices by table then name, renumbering what refers to them; resolves each
 * file series to its index in the device's series. */
static tsf_status finish(tsf_dataset *ds, tsf_error *err)
{
    size_t nt = ds->ntables, nd = ds->ndevs;
    dev_key *k = tsf_calloc(ds->a, (nt > nd ? nt : nd) + 1, sizeof *k);
    size_t *map = tsf_calloc(ds->a, (nt > nd ? nt : nd) + 1, sizeof *map);
    tsf_status st = TSF_OK;
    if (!k || !map) {
        st = oom(err);
        goto done;
    }
    for (size_t t = 0; t < nt; t++) k[t] = (dev_key){"", ds->tables[t].name, t};
    if (nt) qsort(k, nt, sizeof *k, dev_key_cmp);
    tsf_ds_table *tabs = tsf_calloc(ds->a, nt + 1, sizeof *tabs);
    if (!tabs) {
        st = oom(err);
        goto done;
    }
    for (size_t t = 0; t < nt; t++) tabs[t] = ds->tables[k[t].old], map[k[t].old] = t;
    tsf_free(ds->a, ds->tables, ds->tablecap * sizeof *ds->tables);
    ds->tables = tabs;
    ds->tablecap = nt + 1;
    for (size_t d = 0; d < nd; d++) {
        ds->devs[d].table = map[ds->devs[d].table];
        k[d] = (dev_key){ds->tables[ds->devs[d].table].name, ds->devs[d].name, d};
    }
    if (nd) qsort(k, nd, sizeof *k, dev_key_cmp);
    tsf_ds_device *devs = tsf_calloc(ds->a, nd + 1, sizeof *devs);
    if (!devs) {
        st = oom(err);
        goto done;
    }
    for (size_t d = 0; d < nd; d++) devs[d] = ds->devs[k[d].old], map[k[d].old] = d;
    tsf_free(ds->a, ds->devs, ds->devcap * sizeof *ds->devs);
    ds->devs = devs;
    ds->devcap = nd + 1;
    if (ds->hash) memset(ds->hash, 0, ds->hcap * sizeof *ds->hash); /* NULL for a dataset without devices */
    for (size_t d = 0; d < nd; d++) {
        size_t i = hash_name(devs[d].name) & (ds->hcap - 1);
        while (ds->hash[i]) i = (i + 1) & (ds->hcap - 1);
        ds->hash[i] = d + 1;
        tsf_ds_table *t = &ds->tables[devs[d].table];
        if (!t->ndevices) t->first_device = d;
        t->ndevices++;
    }
    for (size_t f = 0; f < ds->nfiles; f++) {
        tsf_ds_file *fl = &ds->files[f];
        for (size_t i = 0; i < fl->ndevs; i++) {
            tsf_ds_fdev *fd = &fl->devs[i];
            fd->dev = map[fd->dev];
            for (size_t j = fd->ser0; j < fd->ser0 + fd->nser; j++) {
                int found;
                fl->sers[j].ser =
                    series_pos(&devs[fd->dev], (const char *)(uintptr_t)fl->sers[j].ser, &found);
            }
        }
        if (fl->ndevs) qsort(fl->devs, fl->ndevs, sizeof *fl->devs, fdev_cmp);
    }
done:
    tsf_free(ds->a, k, ((nt > nd ? nt : nd) + 1) * sizeof *k);
    tsf_free(ds->a, map, ((nt > nd ? nt : nd) + 1) * sizeof *map);
    return st;
}

static void ident_of(const struct stat *sb, tsf_ds_ident *id)
{
    *id = (tsf_ds_ident){(uint64_t)sb->st_size,         (uint64_t)sb->st_ino,          (uint64_t)sb->st_dev,
                         (int64_t)sb->st_mtim.tv_sec,    (int64_t)sb->st_ctim.tv_sec,   (uint32_t)sb->st_mtim.tv_nsec,
                         (uint32_t)sb->st_ctim.tv_nsec};
}

/* Adds file f: from its cache entry when the file is unchanged, else from its tail and index (recording its
 * entry when write is set). */
static tsf_status open_file(tsf_dataset *ds, size_t f, const tsf_reader_options *meta, tsf_ds_cache *cache,
                            int write, sum_buf *sb, tsf_error *err)
{
    const char *path = ds->files[f].path;
    tsf_ds_sum sum;
    tsf_ds_ident id;
    struct stat fst;
    int have_id = cache && !stat(path, &fst) && S_ISREG(fst.st_mode);
    if (have_id) {
        ident_of(&fst, &id);
        int hit = tsf_rd_dsc_lookup(cache, path, &id, &sum, err);
        if (hit < 0) return (tsf_status)hit;
        if (hit) {
            ds->ostats.files_cached++;
            return add_file(ds, f, &sum, err);
        }
    }
    tsf_ds_src src;
    tsf_reader *r = NULL;
    /* a pooled reader is the one later queries use: opened with the queries' options (the page-time index is
     * only looked for by a query) */
    tsf_status st = tsf_rd_ds_open_file(ds, path, ds->pool ? &ds->ropts : meta, NULL, NULL, &src, &r, err);
    if (!st) st = summarize(ds, r, sb, &sum, err);
    if (!st) st = add_file(ds, f, &sum, err);
    /* a file whose size changed since the stat is left out: it is being written */
    if (!st && have_id && write && sum.size == id.size && tsf_rd_dsc_record(cache, path, &id, &sum) == 1)
        ds->ostats.files_racy++;
    if (r) tsf_rd_ds_close_file(ds, &src, r);
    if (st && err && strncmp(err->message, "dataset:", 8)) tsf_rd_ds_name_file(st, path, err);
    ds->ostats.files_read++;
    return st;
}

tsf_status tsf_dataset_open(tsf_dataset **out, const char *const *paths, size_t n,
                            const tsf_dataset_options *opts, tsf_error *err)
{
    if (!out || (!paths && n))
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_open: out and paths are required");
    *out = NULL;
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof o && opts->struct_size != offsetof(tsf_dataset_options, cache_path) &&
            opts->struct_size != offsetof(tsf_dataset_options, reader_pool))
            return tsf_err(err, TSF_EINVAL, "tsf_dataset_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
        o.struct_size = sizeof o;
    }
    if (o.cache_path && o.open_source)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_options: cache_path needs files, not open_source");
    if (o.reader_pool && o.open_source)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_options: reader_pool needs files, not open_source");
    if (o.cache_mode != TSF_DATASET_CACHE_READ_WRITE && o.cache_mode != TSF_DATASET_CACHE_READ_ONLY)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_options.cache_mode %d unknown", o.cache_mode);
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    if (o.reader) {
        if (o.reader->struct_size < sizeof(size_t) || o.reader->struct_size > sizeof ro)
            return tsf_err(err, TSF_EINVAL, "tsf_reader_options.struct_size %zu unknown",
                           o.reader->struct_size);
        memcpy(&ro, o.reader, o.reader->struct_size);
        ro.struct_size = sizeof ro;
    }
    tsf_dataset *ds = tsf_calloc(ro.allocator, 1, sizeof *ds);
    if (!ds) return oom(err);
    ds->a = ro.allocator;
    ds->ropts = ro;
    ds->open_source = o.open_source;
    ds->close_source = o.close_source;
    ds->source_ctx = o.source_ctx;
    ds->pool = o.reader_pool;
    tsf_status st = TSF_OK;
    for (size_t i = 0; i < n && !st; i++) {
        if (!paths[i])
            st = tsf_err(err, TSF_EINVAL, "tsf_dataset_open: paths[%zu] is NULL", i);
        else
            st = expand(ds, paths[i], err);
    }
    tsf_ds_cache *cache = NULL;
    ds->ostats.struct_size = sizeof ds->ostats;
    if (!st && o.cache_path) st = tsf_rd_dsc_load(&cache, ds->a, o.cache_path, &ds->ostats, err);
    tsf_reader_options meta = ro;
    meta.page_index = 0;
    sum_buf sb = {0};
    for (size_t f = 0; f < ds->nfiles && !st; f++)
        st = open_file(ds, f, &meta, cache, o.cache_mode == TSF_DATASET_CACHE_READ_WRITE, &sb, err);
    sum_buf_free(ds->a, &sb);
    if (!st) st = finish(ds, err);
    if (!st && cache && o.cache_mode == TSF_DATASET_CACHE_READ_WRITE) tsf_rd_dsc_save(cache, o.cache_path, &ds->ostats);
    tsf_rd_dsc_free(cache);
    if (st) {
        tsf_dataset_close(ds);
        return st;
    }
    *out = ds;
    return TSF_OK;
}

tsf_status tsf_dataset_get_open_stats(const tsf_dataset *ds, tsf_dataset_open_stats *out, tsf_error *err)
{
    if (!ds || !out || out->struct_size != sizeof *out)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_get_open_stats: dataset and out (struct_size set) required");
    *out = ds->ostats;
    return TSF_OK;
}

tsf_status tsf_dataset_list_files(const char *const *paths, size_t n,
                                  int (*each)(void *ctx, const char *path), void *ctx, tsf_error *err)
{
    if ((!paths && n) || !each)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_list_files: paths and each are required");
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    tsf_dataset *ds = tsf_calloc(ro.allocator, 1, sizeof *ds);
    if (!ds) return oom(err);
    ds->a = ro.allocator;
    tsf_status st = TSF_OK;
    for (size_t i = 0; i < n && !st; i++)
        st = paths[i] ? expand(ds, paths[i], err)
                      : tsf_err(err, TSF_EINVAL, "tsf_dataset_list_files: paths[%zu] is NULL", i);
    for (size_t f = 0; f < ds->nfiles && !st; f++)
        if (each(ctx, ds->files[f].path)) st = tsf_err(err, TSF_EIO, "tsf_dataset_list_files: stopped at %s", ds->files[f].path);
    tsf_dataset_close(ds);
    return st;
}

void tsf_dataset_close(tsf_dataset *ds)
{
    if (!ds) return;
    const tsf_allocator *a = ds->a;
    for (size_t f = 0; f < ds->nfiles; f++) {
        tsf_free(a, ds->files[f].devs, ds->files[f].ndevs * sizeof *ds->files[f].devs);
        tsf_free(a, ds->files[f].sers, ds->files[f].nsers * sizeof *ds->files[f].sers);
    }
    tsf_free(a, ds->files, ds->filecap * sizeof *ds->files);
    for (size_t t = 0; t < ds->ntables; t++) {
        tsf_free(a, ds->tables[t].cols, ds->tables[t].colcap * sizeof *ds->tables[t].cols);
        tsf_free(a, ds->tables[t].col_file, ds->tables[t].colcap * sizeof *ds->tables[t].col_file);
    }
    tsf_free(a, ds->tables, ds->tablecap * sizeof *ds->tables);
    for (size_t d = 0; d < ds->ndevs; d++)
        tsf_free(a, ds->devs[d].sers, ds->devs[d].sercap * sizeof *ds->devs[d].sers);
    tsf_free(a, ds->devs, ds->devcap * sizeof *ds->devs);
    tsf_free(a, ds->hash, ds->hcap * sizeof *ds->hash);
    while (ds->arena) {
        tsf_ds_arena *b = ds->arena;
        ds->arena = b->next;
        tsf_free(a, b, sizeof *b + b->cap);
    }
    tsf_free(a, ds, sizeof *ds);
}

/* ---- accessors ---- */

size_t tsf_dataset_file_count(const tsf_dataset *ds)
{
    return ds ? ds->nfiles : 0;
}
size_t tsf_dataset_table_count(const tsf_dataset *ds)
{
    return ds ? ds->ntables : 0;
}
size_t tsf_dataset_device_count(const tsf_dataset *ds)
{
    return ds ? ds->ndevs : 0;
}

tsf_status tsf_dataset_file(const tsf_dataset *ds, size_t i, tsf_dataset_file_info *out, tsf_error *err)
{
    if (!ds || !out || i >= ds->nfiles)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_file: file %zu of %zu", i, ds ? ds->nfiles : 0);
    const tsf_ds_file *f = &ds->files[i];
    *out = (tsf_dataset_file_info){f->path, f->size, f->tmin, f->tmax, f->points, f->ndevs};
    return TSF_OK;
}

tsf_status tsf_dataset_table(const tsf_dataset *ds, size_t i, tsf_table_info *out, tsf_error *err)
{
    if (!ds || !out || i >= ds->ntables)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_table: table %zu of %zu", i, ds ? ds->ntables : 0);
    const tsf_ds_table *t = &ds->tables[i];
    *out = (tsf_table_info){t->name, t->ncols, t->cols, t->first_device, t->ndevices};
    return TSF_OK;
}

tsf_status tsf_dataset_device(const tsf_dataset *ds, size_t i, tsf_dataset_device_info *out, tsf_error *err)
{
    if (!ds || !out || i >= ds->ndevs)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_device: device %zu of %zu", i, ds ? ds->ndevs : 0);
    const tsf_ds_device *d = &ds->devs[i];
    *out = (tsf_dataset_device_info){d->name, d->table, d->aligned, d->nser, d->tmin, d->tmax, d->nfiles, d->nsegs};
    return TSF_OK;
}

tsf_status tsf_dataset_device_segment(const tsf_dataset *ds, size_t i, size_t s, tsf_bytes *out, tsf_error *err)
{
    if (!ds || !out || i >= ds->ndevs)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_device_segment: device %zu of %zu", i, ds ? ds->ndevs : 0);
    const tsf_ds_device *d = &ds->devs[i];
    if (s >= d->nsegs)
        return tsf_err(err, TSF_ENOTFOUND, "device %.200s has %zu segments, not %zu", d->name, d->nsegs, s + 1);
    *out = d->segs[s];
    return TSF_OK;
}

tsf_status tsf_dataset_find_device(const tsf_dataset *ds, const char *name, size_t *index, tsf_error *err)
{
    if (!ds || !name || !index)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_find_device: arguments required");
    size_t d = tsf_rd_ds_find(ds, name);
    if (d == (size_t)-1) return tsf_err(err, TSF_ENOTFOUND, "dataset: no device %s", name);
    *index = d;
    return TSF_OK;
}

tsf_status tsf_dataset_series(const tsf_dataset *ds, size_t device, size_t j, tsf_dataset_series_info *out,
                              tsf_error *err)
{
    if (!ds || !out || device >= ds->ndevs || j >= ds->devs[device].nser)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_series: device %zu series %zu out of range", device, j);
    const tsf_ds_series *s = &ds->devs[device].sers[j];
    *out = (tsf_dataset_series_info){s->name, s->type, s->tmin, s->tmax, s->count, s->nfiles};
    return TSF_OK;
}

tsf_status tsf_dataset_file_device(const tsf_dataset *ds, size_t file, size_t k,
                                   tsf_dataset_file_device_info *out, tsf_error *err)
{
    if (!ds || !out || file >= ds->nfiles || k >= ds->files[file].ndevs)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_file_device: file %zu device %zu out of range", file, k);
    const tsf_ds_file *f = &ds->files[file];
    const tsf_ds_fdev *fd = &f->devs[k];
    uint64_t points = 0;
    for (size_t j = fd->ser0; j < fd->ser0 + fd->nser; j++) points += f->sers[j].count;
    *out = (tsf_dataset_file_device_info){fd->dev, fd->local, fd->tmin, fd->tmax, points, fd->nser};
    return TSF_OK;
}

tsf_status tsf_dataset_file_series(const tsf_dataset *ds, size_t file, size_t device, size_t j,
                                   tsf_dataset_series_info *out, tsf_error *err)
{
    if (!ds || !out || file >= ds->nfiles || device >= ds->ndevs || j >= ds->devs[device].nser)
        return tsf_err(err, TSF_EINVAL,
                       "tsf_dataset_file_series: file %zu device %zu series %zu out of range", file, device,
                       j);
    const tsf_ds_file *f = &ds->files[file];
    tsf_ds_fdev key = {.dev = device};
    const tsf_ds_fdev *fd = f->ndevs ? bsearch(&key, f->devs, f->ndevs, sizeof *f->devs, fdev_cmp) : NULL;
    const tsf_ds_series *s = &ds->devs[device].sers[j];
    for (size_t i = 0; fd && i < fd->nser; i++) {
        const tsf_ds_fser *fs = &f->sers[fd->ser0 + i];
        if (fs->ser != j) continue;
        *out = (tsf_dataset_series_info){s->name, s->type, fs->tmin, fs->tmax, fs->count, 1};
        return TSF_OK;
    }
    return tsf_err(err, TSF_ENOTFOUND, "dataset: %s has no series %s.%s", f->path, ds->devs[device].name,
                   s->name);
}
