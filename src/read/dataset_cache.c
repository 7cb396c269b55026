/*
 * dataset_cache.c - the metadata cache of tsf_dataset_open (doc/dataset.md "Metadata cache"): a file that
 * holds, per TsFile, what the dataset takes from its tail and index (tsf_ds_sum), keyed by path and valid
 * while the file's identity (size, mtime, ctime, inode, device) is unchanged. Reopening a dataset of many
 * files then reads one small file instead of every file's tail and index.
 *
 * Layout (little-endian):
 *   header   magic "TSFDSC\n\x1a", u32 version (1), u32 flags (0), u64 entries, u64 body bytes
 *   body     the entries, ascending by path (strcmp), each: u32 length of the rest, then
 *              str path; u64 size, ino, dev; i64 mtime_s; u32 mtime_ns; i64 ctime_s; u32 ctime_ns;
 *              u32 ntables, per table: str name, u32 ncols, per column: str name, u32 type, encoding,
 *                compression, category;
 *              u32 ndevices, per device: str name, u32 table, u8 aligned, u64 time count, i64 time min,
 *                i64 time max, u32 nsegments, per segment: u8 null, (not null) str bytes; u32 nseries,
 *                per series: str name, u32 type, u64 count, i64 min, i64 max
 *   trailer  u32 CRC-32 (zlib) of header and body; the file ends there
 * A str is u32 length, the bytes and a NUL (names hold no other NUL). Every length and count is checked
 * against the bytes that remain before anything is sized by it; an image that fails any check is ignored
 * as a whole (the caller rebuilds it), so an entry is never half used.
 *
 * Racy entries: a file modified within RACY_NS of the open may change again within the file system's
 * timestamp granularity without its mtime changing, so its summary is not recorded (it is read again next
 * time, when it is old enough).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/bytes.h"
#include "../common/tmpfile.h"
#include "dataset_internal.h"

#define DSC_MAGIC "TSFDSC\n\x1a"
#define DSC_VERSION 1u
#define DSC_HEADER 32u
#define DSC_MAX_FILE ((uint64_t)1 << 30) /* a larger cache file is ignored */
#define RACY_NS 2000000000LL

/* Smallest encoding of each record: bounds every count by the bytes left. */
#define MIN_STR 5u
#define MIN_COL (MIN_STR + 16u)
#define MIN_TABLE (MIN_STR + 4u)
#define MIN_DEV (MIN_STR + 4u + 1u + 24u + 4u + 4u)
#define MIN_SEG 1u
#define MIN_SER (MIN_STR + 4u + 24u)

typedef struct dsc_entry {
    const char *path; /* in the image */
    size_t off, len;  /* the entry, its length field included */
    tsf_ds_ident id;
    size_t ntables, ncols, ndevs, nsegs, nsers;
    int used;
} dsc_entry;

/* A recorded (new) entry: its bytes in out[off, off + len). */
typedef struct dsc_new {
    size_t off, len;
} dsc_new;

struct tsf_ds_cache {
    const tsf_allocator *a;
    int64_t now_s;
    uint32_t now_ns;
    int loaded, broken;
    uint8_t *img;
    size_t img_len;
    dsc_entry *ents;
    size_t nents, entcap;
    uint8_t *out; /* recorded entries, serialised */
    size_t out_len, out_cap;
    dsc_new *news;
    size_t nnew, newcap;
    /* a looked-up entry's summary */
    tsf_ds_sum_table *tables;
    tsf_table_column *cols;
    tsf_ds_sum_dev *devs;
    tsf_fmt_str *segs;
    tsf_ds_sum_ser *sers;
    size_t cap_tables, cap_cols, cap_devs, cap_segs, cap_sers;
};

/* ---- reading an image ---- */

typedef struct cur {
    const uint8_t *p;
    size_t pos, end; /* offsets in the file */
    tsf_error *err;
} cur;

static tsf_status bad(cur *c, const char *what)
{
    return tsf_err(c->err, TSF_ECORRUPT, "dataset cache: %s at byte %zu", what, c->pos);
}

static int need(cur *c, size_t n, const char *what)
{
    if (c->end - c->pos >= n) return 0;
    bad(c, what);
    return -1;
}

static int get_u8(cur *c, uint8_t *v, const char *what)
{
    if (need(c, 1, what)) return -1;
    *v = c->p[c->pos++];
    return 0;
}

static int get_u32(cur *c, uint32_t *v, const char *what)
{
    if (need(c, 4, what)) return -1;
    *v = tsf_load_le32(c->p + c->pos);
    c->pos += 4;
    return 0;
}

static int get_u64(cur *c, uint64_t *v, const char *what)
{
    if (need(c, 8, what)) return -1;
    *v = tsf_load_le64(c->p + c->pos);
    c->pos += 8;
    return 0;
}

static int get_i64(cur *c, int64_t *v, const char *what)
{
    uint64_t u;
    if (get_u64(c, &u, what)) return -1;
    *v = (int64_t)u;
    return 0;
}

/* A str: *s points at its bytes (NUL-terminated); name: no NUL inside. */
static int get_str(cur *c, const char **s, size_t *len, int name, const char *what)
{
    uint32_t n;
    if (get_u32(c, &n, what)) return -1;
    if (c->end - c->pos <= n) {
        bad(c, what);
        return -1;
    }
    const char *b = (const char *)c->p + c->pos;
    if (b[n] != 0 || (name && memchr(b, 0, n))) {
        bad(c, what);
        return -1;
    }
    *s = b;
    if (len) *len = n;
    c->pos += (size_t)n + 1;
    return 0;
}

/* A count of records of at least min bytes each; more than the bytes left can hold is damage. */
static int get_count(cur *c, size_t *n, size_t min, const char *what)
{
    uint32_t v;
    if (get_u32(c, &v, what)) return -1;
    if (v > (c->end - c->pos) / min) {
        bad(c, what);
        return -1;
    }
    *n = v;
    return 0;
}

static int get_type(cur *c, tsf_type *t, const char *what)
{
    uint32_t v;
    if (get_u32(c, &v, what)) return -1;
    if (v > 255 || !tsf_type_name((tsf_type)v)) {
        bad(c, what);
        return -1;
    }
    *t = (tsf_type)v;
    return 0;
}

static int get_ident(cur *c, tsf_ds_ident *id)
{
    if (get_u64(c, &id->size, "file size") || get_u64(c, &id->ino, "inode") ||
        get_u64(c, &id->dev, "device") || get_i64(c, &id->mtime_s, "mtime") ||
        get_u32(c, &id->mtime_ns, "mtime") || get_i64(c, &id->ctime_s, "ctime") ||
        get_u32(c, &id->ctime_ns, "ctime"))
        return -1;
    if (id->mtime_ns >= 1000000000u || id->ctime_ns >= 1000000000u) {
        bad(c, "timestamp nanoseconds");
        return -1;
    }
    return 0;
}

/* Fill targets of walk_entry (NULL members: count only). */
typedef struct fill {
    tsf_ds_sum_table *tables;
    tsf_table_column *cols;
    tsf_ds_sum_dev *devs;
    tsf_fmt_str *segs;
    tsf_ds_sum_ser *sers;
} fill;

/* Walks one entry's body after its identity: checks it and counts its records into e; with f, fills them. */
static int walk_entry(cur *c, dsc_entry *e, const fill *f)
{
    size_t nt, nd;
    e->ncols = e->nsegs = e->nsers = 0;
    if (get_count(c, &nt, MIN_TABLE, "table count")) return -1;
    e->ntables = nt;
    for (size_t t = 0; t < nt; t++) {
        const char *name;
        size_t nc;
        if (get_str(c, &name, NULL, 1, "table name") || get_count(c, &nc, MIN_COL, "column count")) return -1;
        if (f) f->tables[t] = (tsf_ds_sum_table){name, f->cols + e->ncols, nc};
        for (size_t k = 0; k < nc; k++) {
            tsf_table_column col;
            uint32_t enc, comp, cat;
            if (get_str(c, &col.name, NULL, 1, "column name") || get_type(c, &col.type, "column type") ||
                get_u32(c, &enc, "column encoding") || get_u32(c, &comp, "column compression") ||
                get_u32(c, &cat, "column category"))
                return -1;
            col.encoding = (tsf_encoding)enc;
            col.compression = (tsf_compression)comp;
            col.category = (tsf_column_category)cat;
            if (f) f->cols[e->ncols] = col;
            e->ncols++;
        }
    }
    if (get_count(c, &nd, MIN_DEV, "device count")) return -1;
    e->ndevs = nd;
    for (size_t d = 0; d < nd; d++) {
        tsf_ds_sum_dev dv;
        uint32_t table;
        uint8_t aligned;
        size_t ns, nser;
        memset(&dv, 0, sizeof dv);
        if (get_str(c, &dv.name, NULL, 1, "device name") || get_u32(c, &table, "device table") ||
            get_u8(c, &aligned, "device aligned") || get_u64(c, &dv.tcount, "device time count") ||
            get_i64(c, &dv.tmin, "device time min") || get_i64(c, &dv.tmax, "device time max") ||
            get_count(c, &ns, MIN_SEG, "segment count"))
            return -1;
        if (table >= nt || aligned > 1) return bad(c, table >= nt ? "device table" : "device aligned"), -1;
        dv.table = table;
        dv.aligned = aligned;
        dv.segs = f ? f->segs + e->nsegs : NULL;
        dv.nsegs = ns;
        for (size_t s = 0; s < ns; s++) {
            uint8_t null;
            tsf_fmt_str sg = {NULL, 0, 1};
            if (get_u8(c, &null, "segment null")) return -1;
            if (null > 1) return bad(c, "segment null"), -1;
            if (!null) {
                const char *b;
                size_t len;
                if (get_str(c, &b, &len, 0, "segment")) return -1;
                sg = (tsf_fmt_str){(const uint8_t *)b, len, 0};
            }
            if (f) f->segs[e->nsegs] = sg;
            e->nsegs++;
        }
        if (get_count(c, &nser, MIN_SER, "series count")) return -1;
        dv.ser0 = e->nsers;
        dv.nser = nser;
        for (size_t j = 0; j < nser; j++) {
            tsf_ds_sum_ser s;
            if (get_str(c, &s.name, NULL, 1, "series name") || get_type(c, &s.type, "series type") ||
                get_u64(c, &s.count, "series count") || get_i64(c, &s.tmin, "series min") ||
                get_i64(c, &s.tmax, "series max"))
                return -1;
            if (f) f->sers[e->nsers] = s;
            e->nsers++;
        }
        if (f) f->devs[d] = dv;
    }
    if (c->pos != c->end) return bad(c, "bytes after the entry's last record"), -1;
    return 0;
}

/* Checks the image (checksum, header, every entry) and indexes its entries. */
static tsf_status parse_image(tsf_ds_cache *k, tsf_error *err)
{
    const uint8_t *p = k->img;
    size_t len = k->img_len;
    if (len < DSC_HEADER + 4 || memcmp(p, DSC_MAGIC, 8))
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: no cache header (%zu bytes)", len);
    uint32_t version = tsf_load_le32(p + 8), flags = tsf_load_le32(p + 12);
    uint64_t nent = tsf_load_le64(p + 16), body = tsf_load_le64(p + 24);
    if (version != DSC_VERSION)
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: version %u, this library writes %u", version,
                       DSC_VERSION);
    if (body != len - DSC_HEADER - 4)
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: header says %llu body bytes, the file has %zu",
                       (unsigned long long)body, len - DSC_HEADER - 4);
    uint32_t crc = (uint32_t)crc32(0L, p, (uInt)(len - 4));
    if (crc != tsf_load_le32(p + len - 4))
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: checksum mismatch over %zu bytes", len - 4);
    if (flags) return tsf_err(err, TSF_ECORRUPT, "dataset cache: unknown flags 0x%x", flags);
    if (nent > body / (4 + MIN_STR + 48 + 8))
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: %llu entries cannot fit in %llu bytes",
                       (unsigned long long)nent, (unsigned long long)body);
    if (nent && !(k->ents = tsf_calloc(k->a, (size_t)nent, sizeof *k->ents)))
        return tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    k->entcap = (size_t)nent;
    size_t pos = DSC_HEADER, end = len - 4;
    for (size_t i = 0; i < nent; i++) {
        dsc_entry *e = &k->ents[i];
        cur c = {p, pos, end, err};
        uint32_t elen;
        if (get_u32(&c, &elen, "entry length")) return TSF_ECORRUPT;
        if (elen > end - c.pos) return bad(&c, "entry length");
        c.end = c.pos + elen;
        e->off = pos;
        e->len = 4 + (size_t)elen;
        if (get_str(&c, &e->path, NULL, 1, "path") || get_ident(&c, &e->id) || walk_entry(&c, e, NULL))
            return TSF_ECORRUPT;
        if (i && strcmp(k->ents[i - 1].path, e->path) >= 0) return bad(&c, "path out of order");
        pos = c.end;
        k->nents++;
    }
    if (pos != end)
        return tsf_err(err, TSF_ECORRUPT, "dataset cache: %zu bytes after the last entry", end - pos);
    return TSF_OK;
}

static void cache_now(tsf_ds_cache *k)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts)) ts.tv_sec = 0, ts.tv_nsec = 0;
    k->now_s = (int64_t)ts.tv_sec;
    k->now_ns = (uint32_t)ts.tv_nsec;
}

static tsf_status read_file(tsf_ds_cache *k, const char *path, tsf_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) return TSF_ENOTFOUND;
        return tsf_err(err, TSF_EIO, "dataset cache %s: cannot open (%s)", path, strerror(errno));
    }
    struct stat sb;
    tsf_status st = TSF_OK;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
        st = tsf_err(err, TSF_EIO, "dataset cache %s: not a regular file", path);
    else if ((uint64_t)sb.st_size > DSC_MAX_FILE)
        st = tsf_err(err, TSF_ECORRUPT, "dataset cache %s: %lld bytes, more than a cache holds", path,
                     (long long)sb.st_size);
    else if (!(k->img = tsf_alloc(k->a, (size_t)sb.st_size + 1)))
        st = tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    else
        k->img_len = (size_t)sb.st_size;
    size_t n = 0;
    while (!st && n < (size_t)sb.st_size) {
        ssize_t r = read(fd, k->img + n, (size_t)sb.st_size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            st = tsf_err(err, TSF_EIO, "dataset cache %s: read failed", path);
        else
            n += (size_t)r;
    }
    close(fd);
    return st;
}

static void drop_image(tsf_ds_cache *k)
{
    tsf_free(k->a, k->ents, k->entcap * sizeof *k->ents);
    if (k->img) tsf_free(k->a, k->img, k->img_len + 1);
    k->ents = NULL;
    k->img = NULL;
    k->nents = k->entcap = k->img_len = 0;
}

tsf_status tsf_rd_dsc_load(tsf_ds_cache **out, const tsf_allocator *a, const char *path,
                           tsf_dataset_open_stats *st, tsf_error *err)
{
    tsf_ds_cache *k = tsf_calloc(a, 1, sizeof *k);
    *out = k;
    if (!k) return tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    k->a = a;
    cache_now(k);
    tsf_status s = read_file(k, path, &st->cache_load);
    if (!s) s = parse_image(k, &st->cache_load);
    if (s == TSF_ENOMEM) return tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    if (s) { /* ignored: rebuilt from the files (a missing file is no error) */
        if (s == TSF_ENOTFOUND) memset(&st->cache_load, 0, sizeof st->cache_load);
        drop_image(k);
        return TSF_OK;
    }
    k->loaded = 1;
    st->cache_loaded = 1;
    return TSF_OK;
}

/* ---- looking up ---- */

static int ident_eq(const tsf_ds_ident *a, const tsf_ds_ident *b)
{
    return a->size == b->size && a->ino == b->ino && a->dev == b->dev && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

/* Grows an array to hold n (n is bounded by the image's bytes); -1 on failure. */
static int reserve(const tsf_allocator *a, void **p, size_t *cap, size_t n, size_t sz)
{
    if (!n) n = 1;
    if (n <= *cap) return 0;
    if (n > SIZE_MAX / sz) return -1;
    void *q = tsf_realloc(a, *p, *cap * sz, n * sz);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Entry e's summary into the cache's arrays (valid until the next fill). */
static tsf_status fill_entry(tsf_ds_cache *k, const dsc_entry *e, tsf_ds_sum *out, tsf_error *err)
{
    if (reserve(k->a, (void **)&k->tables, &k->cap_tables, e->ntables, sizeof *k->tables) ||
        reserve(k->a, (void **)&k->cols, &k->cap_cols, e->ncols, sizeof *k->cols) ||
        reserve(k->a, (void **)&k->devs, &k->cap_devs, e->ndevs, sizeof *k->devs) ||
        reserve(k->a, (void **)&k->segs, &k->cap_segs, e->nsegs, sizeof *k->segs) ||
        reserve(k->a, (void **)&k->sers, &k->cap_sers, e->nsers, sizeof *k->sers))
        return tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    cur c = {k->img, e->off + 4, e->off + e->len, err};
    const char *path;
    tsf_ds_ident id;
    dsc_entry counted = *e;
    fill f = {k->tables, k->cols, k->devs, k->segs, k->sers};
    if (get_str(&c, &path, NULL, 1, "path") || get_ident(&c, &id) || walk_entry(&c, &counted, &f))
        return TSF_ECORRUPT;
    *out = (tsf_ds_sum){e->id.size, k->tables, e->ntables, k->devs, e->ndevs, k->sers, e->nsers};
    return TSF_OK;
}

static dsc_entry *find(tsf_ds_cache *k, const char *path)
{
    size_t lo = 0, hi = k->nents;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k->ents[mid].path, path);
        if (!c) return &k->ents[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int tsf_rd_dsc_lookup(tsf_ds_cache *k, const char *path, const tsf_ds_ident *id, tsf_ds_sum *out,
                      tsf_error *err)
{
    dsc_entry *e = find(k, path);
    if (!e || !ident_eq(&e->id, id)) return 0; /* a stale entry stays unused and drops out */
    tsf_status st = fill_entry(k, e, out, err);
    if (st) return st;
    e->used = 1;
    return 1;
}

/* ---- recording ---- */

static int put(tsf_ds_cache *k, const void *p, size_t n)
{
    if (k->out_cap - k->out_len < n) {
        size_t nc = k->out_cap ? k->out_cap : 4096;
        while (nc - k->out_len < n) {
            if (nc > SIZE_MAX / 2) return -1;
            nc *= 2;
        }
        uint8_t *g = tsf_realloc(k->a, k->out, k->out_cap, nc);
        if (!g) return -1;
        k->out = g;
        k->out_cap = nc;
    }
    if (n) memcpy(k->out + k->out_len, p, n);
    k->out_len += n;
    return 0;
}

static int put_u8(tsf_ds_cache *k, unsigned v)
{
    uint8_t b = (uint8_t)v;
    return put(k, &b, 1);
}

static int put_u32(tsf_ds_cache *k, uint64_t v)
{
    uint8_t b[4];
    if (v > UINT32_MAX) return -1;
    tsf_store_le32(b, (uint32_t)v);
    return put(k, b, 4);
}

static int put_u64(tsf_ds_cache *k, uint64_t v)
{
    uint8_t b[8];
    tsf_store_le64(b, v);
    return put(k, b, 8);
}

static int put_str(tsf_ds_cache *k, const void *s, size_t len)
{
    return put_u32(k, len) || put(k, s, len) || put_u8(k, 0);
}

static int put_name(tsf_ds_cache *k, const char *s)
{
    return put_str(k, s, strlen(s));
}

/* Appends the entry of path (identity id, summary s) to k->out; -1 when it cannot (memory, sizes past the
 * format's, a summary the parser would refuse), k->out_len then as before. */
static int encode_entry(tsf_ds_cache *k, const char *path, const tsf_ds_ident *id, const tsf_ds_sum *s)
{
    size_t start = k->out_len;
    int fail = put_u32(k, 0) || put_name(k, path) || put_u64(k, id->size) || put_u64(k, id->ino) ||
               put_u64(k, id->dev) || put_u64(k, (uint64_t)id->mtime_s) || put_u32(k, id->mtime_ns) ||
               put_u64(k, (uint64_t)id->ctime_s) || put_u32(k, id->ctime_ns) || put_u32(k, s->ntables);
    for (size_t t = 0; !fail && t < s->ntables; t++) {
        const tsf_ds_sum_table *tb = &s->tables[t];
        fail = put_name(k, tb->name) || put_u32(k, tb->ncols);
        for (size_t c = 0; !fail && c < tb->ncols; c++) {
            const tsf_table_column *col = &tb->cols[c];
            fail = put_name(k, col->name) || put_u32(k, (uint32_t)col->type) ||
                   put_u32(k, (uint32_t)col->encoding) || put_u32(k, (uint32_t)col->compression) ||
                   put_u32(k, (uint32_t)col->category);
        }
    }
    fail = fail || put_u32(k, s->ndevs);
    for (size_t d = 0; !fail && d < s->ndevs; d++) {
        const tsf_ds_sum_dev *dv = &s->devs[d];
        fail = dv->table >= s->ntables || dv->ser0 + dv->nser > s->nsers || put_name(k, dv->name) ||
               put_u32(k, dv->table) || put_u8(k, dv->aligned != 0) || put_u64(k, dv->tcount) ||
               put_u64(k, (uint64_t)dv->tmin) || put_u64(k, (uint64_t)dv->tmax) || put_u32(k, dv->nsegs);
        for (size_t g = 0; !fail && g < dv->nsegs; g++) {
            const tsf_fmt_str *sg = &dv->segs[g];
            fail = put_u8(k, sg->is_null != 0) || (!sg->is_null && put_str(k, sg->data, sg->len));
        }
        fail = fail || put_u32(k, dv->nser);
        for (size_t j = 0; !fail && j < dv->nser; j++) {
            const tsf_ds_sum_ser *sr = &s->sers[dv->ser0 + j];
            fail = put_name(k, sr->name) || put_u32(k, (uint32_t)sr->type) || put_u64(k, sr->count) ||
                   put_u64(k, (uint64_t)sr->tmin) || put_u64(k, (uint64_t)sr->tmax);
        }
    }
    size_t len = k->out_len - start - 4;
    if (fail || len > UINT32_MAX) {
        k->out_len = start;
        return -1;
    }
    tsf_store_le32(k->out + start, (uint32_t)len);
    return 0;
}

static int racy(const tsf_ds_cache *k, const tsf_ds_ident *id)
{
    int64_t ts = k->now_s - RACY_NS / 1000000000LL;
    return id->mtime_s > ts || (id->mtime_s == ts && id->mtime_ns >= k->now_ns);
}

int tsf_rd_dsc_record(tsf_ds_cache *k, const char *path, const tsf_ds_ident *id, const tsf_ds_sum *s)
{
    if (racy(k, id)) return 1;
    size_t start = k->out_len;
    if (reserve(k->a, (void **)&k->news, &k->newcap, k->nnew + 1, sizeof *k->news) ||
        encode_entry(k, path, id, s)) {
        k->broken = 1;
        return -1;
    }
    k->news[k->nnew++] = (dsc_new){start, k->out_len - start};
    return 0;
}

/* ---- writing ---- */

typedef struct ref {
    const char *path;
    const uint8_t *p;
    size_t len;
} ref;

static int ref_cmp(const void *x, const void *y)
{
    return strcmp(((const ref *)x)->path, ((const ref *)y)->path);
}

/* Writes img to a temporary beside path, synced, then renamed over path (common/tmpfile.h). */
static tsf_status replace_file(const tsf_ds_cache *k, const char *path, const uint8_t *img, size_t len,
                               tsf_error *err)
{
    tsf_tmp t;
    tsf_status st = tsf_tmp_create("dataset cache", path, k->a, 1, &t, err);
    if (st) return st;
    for (size_t done = 0; done < len;) {
        ssize_t w = write(t.fd, img + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            st = tsf_err(err, TSF_EIO, "dataset cache %s: cannot write (%s)", path, strerror(errno));
            tsf_tmp_discard(&t, k->a);
            return st;
        }
        done += (size_t)w;
    }
    return tsf_tmp_commit("dataset cache", &t, path, 1, k->a, err);
}

void tsf_rd_dsc_save(tsf_ds_cache *k, const char *path, tsf_dataset_open_stats *st)
{
    if (k->broken) {
        tsf_err(&st->cache_save, TSF_ENOMEM, "dataset cache: out of memory recording an entry");
        return;
    }
    size_t used = 0;
    for (size_t i = 0; i < k->nents; i++) used += k->ents[i].used;
    if (k->loaded && !k->nnew && used == k->nents) return;
    size_t nref = used + k->nnew, total = DSC_HEADER + 4;
    ref *refs = tsf_calloc(k->a, nref + 1, sizeof *refs);
    if (!refs) {
        tsf_err(&st->cache_save, TSF_ENOMEM, "dataset cache: out of memory");
        return;
    }
    size_t r = 0;
    for (size_t i = 0; i < k->nents; i++)
        if (k->ents[i].used) refs[r++] = (ref){k->ents[i].path, k->img + k->ents[i].off, k->ents[i].len};
    for (size_t i = 0; i < k->nnew; i++) {
        const uint8_t *p = k->out + k->news[i].off;
        refs[r++] = (ref){(const char *)p + 8, p, k->news[i].len}; /* entry length, path length, path */
    }
    for (size_t i = 0; i < nref; i++) total += refs[i].len;
    if (nref) qsort(refs, nref, sizeof *refs, ref_cmp);
    uint8_t *img = tsf_alloc(k->a, total);
    if (!img) {
        tsf_err(&st->cache_save, TSF_ENOMEM, "dataset cache: out of memory");
    } else {
        memcpy(img, DSC_MAGIC, 8);
        tsf_store_le32(img + 8, DSC_VERSION);
        tsf_store_le32(img + 12, 0);
        tsf_store_le64(img + 16, nref);
        tsf_store_le64(img + 24, total - DSC_HEADER - 4);
        size_t pos = DSC_HEADER;
        for (size_t i = 0; i < nref; i++) {
            memcpy(img + pos, refs[i].p, refs[i].len);
            pos += refs[i].len;
        }
        tsf_store_le32(img + pos, (uint32_t)crc32(0L, img, (uInt)pos));
        if (!replace_file(k, path, img, total, &st->cache_save)) st->cache_written = 1;
        tsf_free(k->a, img, total);
    }
    tsf_free(k->a, refs, (nref + 1) * sizeof *refs);
}

void tsf_rd_dsc_free(tsf_ds_cache *k)
{
    if (!k) return;
    const tsf_allocator *a = k->a;
    drop_image(k);
    tsf_free(a, k->out, k->out_cap);
    tsf_free(a, k->news, k->newcap * sizeof *k->news);
    tsf_free(a, k->tables, k->cap_tables * sizeof *k->tables);
    tsf_free(a, k->cols, k->cap_cols * sizeof *k->cols);
    tsf_free(a, k->devs, k->cap_devs * sizeof *k->devs);
    tsf_free(a, k->segs, k->cap_segs * sizeof *k->segs);
    tsf_free(a, k->sers, k->cap_sers * sizeof *k->sers);
    tsf_free(a, k, sizeof *k);
}

/* ---- the fuzz harness's entry ---- */

tsf_status tsf_rd_dsc_check_image(const tsf_allocator *a, uint8_t *img, size_t len, int fix_crc,
                                  size_t *entries, tsf_error *err)
{
    if (fix_crc && len >= DSC_HEADER + 4)
        tsf_store_le32(img + len - 4, (uint32_t)crc32(0L, img, (uInt)(len - 4)));
    tsf_ds_cache *k = tsf_calloc(a, 1, sizeof *k);
    if (!k) return tsf_err(err, TSF_ENOMEM, "dataset cache: out of memory");
    k->a = a;
    k->img = img;
    k->img_len = len;
    tsf_status st = parse_image(k, err);
    for (size_t i = 0; !st && i < k->nents; i++) {
        const dsc_entry *e = &k->ents[i];
        tsf_ds_sum s;
        st = fill_entry(k, e, &s, err);
        /* the summary encodes back to the entry's bytes */
        size_t at = k->out_len;
        if (!st && (encode_entry(k, e->path, &e->id, &s) || k->out_len - at != e->len ||
                    memcmp(k->out + at, img + e->off, e->len)))
            st = tsf_err(err, TSF_EINVAL, "dataset cache: entry %zu does not encode back to its bytes", i);
    }
    if (entries) *entries = k->nents;
    k->img = NULL; /* the caller's */
    tsf_rd_dsc_free(k);
    return st;
}
