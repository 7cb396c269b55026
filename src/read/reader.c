/*
 * reader.c - opening a TsFile (path, memory or pread callbacks), checking head and tail, parsing
 * TsFileMetadata (tsfile-container-format.md §2, §8.6, §11), loading the index tree once on first
 * use (§8.3-§8.5: table roots -> device nodes -> measurement nodes -> TimeseriesMetadata runs) and
 * the metadata API (tables, devices, series, statistics, bloom-filter probe §9).
 *
 * Hostile input: every offset from the index is checked to lie in the index area before it is
 * followed, every node range strictly inside its parent's bounds, a visit budget proportional to the
 * index size stops loops and fan-out bombs, and every count is checked against the bytes present.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/meta_index.h"
#include "page_index.h"
#include "reader_internal.h"

#define RD_MAX_DEPTH 64

tsf_status tsf_rd_buf_reserve(const tsf_allocator *a, tsf_rd_buf *b, size_t n, tsf_error *err)
{
    if (n <= b->cap) return TSF_OK;
    size_t c = b->cap ? b->cap : 256;
    while (c < n) c = c > SIZE_MAX / 2 ? n : c * 2;
    uint8_t *p = tsf_realloc(a, b->p, b->cap, c);
    if (!p) return tsf_err(err, TSF_ENOMEM, "reader: cannot allocate %zu bytes", c);
    b->p = p;
    b->cap = c;
    return TSF_OK;
}

void tsf_rd_buf_free(const tsf_allocator *a, tsf_rd_buf *b)
{
    tsf_free(a, b->p, b->cap);
    b->p = NULL;
    b->cap = 0;
}

int tsf_rd_lossy(tsf_type type, tsf_encoding enc)
{
    if (type != TSF_FLOAT && type != TSF_DOUBLE) return 0;
    return enc == TSF_ENC_TS_2DIFF || enc == TSF_ENC_RLE || enc == TSF_ENC_SPRINTZ || enc == TSF_ENC_RLBE;
}

/* ---- I/O ---------------------------------------------------------------------------------- */

tsf_status tsf_rd_fetch(const tsf_reader *r, uint64_t off, size_t len, tsf_rd_buf *buf, const uint8_t **out, tsf_error *err)
{
    if (off > r->size || len > r->size - off)
        return tsf_err(err, TSF_ECORRUPT, "read of %zu bytes at offset %llu: beyond the end of the file (%llu bytes)",
                       len, (unsigned long long)off, (unsigned long long)r->size);
    if (r->src == RD_SRC_MEMORY) {
        *out = r->mem + off;
        return TSF_OK;
    }
    if (buf->wlen && off >= buf->woff && off - buf->woff <= buf->wlen && len <= buf->wlen - (off - buf->woff)) {
        *out = buf->wp + (off - buf->woff);
        return TSF_OK;
    }
    tsf_status st = tsf_rd_buf_reserve(r->a, buf, len ? len : 1, err);
    if (st) return st;
    if (r->src == RD_SRC_CALLBACKS) {
        if (len && r->cb.pread(r->cb.ud, buf->p, len, off) != 0)
            return tsf_err(err, TSF_EIO, "read callback failed for %zu bytes at offset %llu", len,
                           (unsigned long long)off);
    } else {
        size_t got = 0;
        while (got < len) {
            ssize_t k = pread(r->fd, buf->p + got, len - got, (off_t)(off + got));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0)
                return tsf_err(err, TSF_EIO, "pread of %zu bytes at offset %llu: %s", len - got,
                               (unsigned long long)(off + got), k < 0 ? strerror(errno) : "unexpected end of file");
            got += (size_t)k;
        }
    }
    *out = buf->p;
    return TSF_OK;
}

/* Fetches into an owned copy (or borrows memory). */
static tsf_status fetch_owned(tsf_reader *r, uint64_t off, size_t len, uint8_t **owned, const uint8_t **out,
                              tsf_error *err)
{
    *owned = NULL;
    if (r->src == RD_SRC_MEMORY) return tsf_rd_fetch(r, off, len, NULL, out, err);
    tsf_rd_buf b = {0};
    tsf_status st = tsf_rd_fetch(r, off, len, &b, out, err);
    if (st) {
        tsf_rd_buf_free(r->a, &b);
        return st;
    }
    *owned = b.p;
    return TSF_OK;
}

/* ---- open --------------------------------------------------------------------------------- */

void tsf_reader_options_init(tsf_reader_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->path = TSF_PATH_AUTO;
    o->page_index = 1;
    o->checked = 1;
    o->use_pread = -1;
}

static tsf_status reader_new(tsf_reader **out, const tsf_reader_options *opts, tsf_error *err)
{
    tsf_reader_options o;
    tsf_reader_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_reader_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    if (o.checked != 0 && o.checked != 1)
        return tsf_err(err, TSF_EINVAL, "tsf_reader_options.checked %d: 0 or 1", o.checked);
    tsf_reader *r = tsf_calloc(o.allocator, 1, sizeof *r);
    if (!r) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
    r->a = o.allocator;
    r->checked = o.checked;
    r->fd = -1;
    r->use_pread = o.use_pread;
    r->pix_tried = !o.page_index; /* tsf_reader_open sets pix_path (page_index.c) */
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        tsf_free(r->a, r, sizeof *r);
        return tsf_err(err, TSF_ENOMEM, "reader: cannot create a mutex");
    }
    tsf_codec_options co;
    tsf_codec_options_init(&co);
    co.path = o.path;
    co.allocator = o.allocator;
    tsf_status st = tsf_codec_open(&r->codec, &co, err);
    if (st) {
        pthread_mutex_destroy(&r->lock);
        tsf_free(r->a, r, sizeof *r);
        return st;
    }
    *out = r;
    return TSF_OK;
}

/* Head, tail and TsFileMetadata. */
static tsf_status reader_init(tsf_reader *r, tsf_error *err)
{
    tsf_rd_buf b = {0};
    const uint8_t *p;
    tsf_status st;
    if (r->size < TSF_FMT_HEAD_LEN)
        return tsf_err(err, TSF_ECORRUPT, "file of %llu bytes: too short for the head (7 bytes)",
                       (unsigned long long)r->size);
    if ((st = tsf_rd_fetch(r, 0, r->size >= 8 ? 8 : 7, &b, &p, err))) goto out;
    if ((st = tsf_fmt_parse_head(p, 7, &r->version, err))) goto out;
    if (r->size >= 8 && p[7] == TSF_MARKER_ENCRYPTION_HEADER) {
        st = tsf_err(err, TSF_ENOTSUP, "offset 7: encryption header (0x06): encrypted files are not supported");
        goto out;
    }
    if (r->size < TSF_FMT_MIN_COMPLETE) {
        st = tsf_err(err, TSF_ECORRUPT, "file of %llu bytes has no tail: incomplete (crashed writer?); recover it first",
                     (unsigned long long)r->size);
        goto out;
    }
    if ((st = tsf_rd_fetch(r, r->size - TSF_FMT_TAIL_LEN, TSF_FMT_TAIL_LEN, &b, &p, err))) goto out;
    if (memcmp(p + 4, TSF_FMT_MAGIC, TSF_FMT_MAGIC_LEN) != 0) {
        st = tsf_err(err, TSF_ECORRUPT, "tail at offset %llu: no \"TsFile\" magic: incomplete file (crashed writer?)",
                     (unsigned long long)(r->size - 6));
        goto out;
    }
    tsf_fmt_tail tail;
    if ((st = tsf_fmt_parse_tail(p, TSF_FMT_TAIL_LEN, r->size, &tail, err))) goto out;
    r->meta_pos = tail.meta_pos;
    const uint8_t *m;
    if ((st = fetch_owned(r, tail.meta_pos, tail.meta_size, &r->meta, &m, err))) goto out;
    r->meta_len = tail.meta_size;
    st = tsf_mip_parse_file_meta(m, r->meta_len, r->meta_pos, r->version, &r->fm, err);
    if (st && r->version == 3) {
        /* C++ writers put 0x03 on files with the v4 layout (§21 #12) */
        tsf_error e4;
        if (tsf_mip_parse_file_meta(m, r->meta_len, r->meta_pos, 4, &r->fm, &e4) == TSF_OK) {
            r->version = 4;
            st = TSF_OK;
        }
    }
    if (st) goto out;
    if (r->fm.meta_offset >= r->meta_pos) {
        st = tsf_err(err, TSF_ECORRUPT, "TsFileMetadata at %llu: metaOffset %llu not before it",
                     (unsigned long long)r->meta_pos, (unsigned long long)r->fm.meta_offset);
        goto out;
    }
    if (r->fm.encrypt_level != 0) {
        st = tsf_err(err, TSF_ENOTSUP, "TsFileMetadata at %llu: encryptLevel %d: encrypted files are not supported",
                     (unsigned long long)r->meta_pos, r->fm.encrypt_level);
        goto out;
    }
    if ((st = tsf_rd_fetch(r, r->fm.meta_offset, 1, &b, &p, err))) goto out;
    if (p[0] != TSF_MARKER_SEPARATOR) {
        st = tsf_err(err, TSF_ECORRUPT, "metaOffset %llu: byte 0x%02x where the separator 0x02 belongs",
                     (unsigned long long)r->fm.meta_offset, p[0]);
        goto out;
    }
    if (r->fm.bloom_bits) {
        size_t n = ((size_t)r->fm.bloom_size + 7) / 8;
        r->bloom = tsf_calloc(r->a, n, 1);
        if (!r->bloom) {
            st = tsf_err(err, TSF_ENOMEM, "reader: out of memory");
            goto out;
        }
        memcpy(r->bloom, r->fm.bloom_bits, r->fm.bloom_len);
    }
out:
    tsf_rd_buf_free(r->a, &b);
    return st;
}

static tsf_status reader_finish_open(tsf_reader *r, tsf_reader **out, tsf_error *err)
{
    tsf_status st = reader_init(r, err);
    if (st) {
        tsf_reader_close(r);
        return st;
    }
    *out = r;
    return TSF_OK;
}

tsf_status tsf_reader_open(tsf_reader **out, const char *path, const tsf_reader_options *opts, tsf_error *err)
{
    if (!out || !path) return tsf_err(err, TSF_EINVAL, "tsf_reader_open: out and path are required");
    *out = NULL;
    tsf_reader *r;
    tsf_status st = reader_new(&r, opts, err);
    if (st) return st;
    r->src = RD_SRC_FD;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (r->fd < 0 || fstat(r->fd, &sb) != 0) {
        st = tsf_err(err, TSF_EIO, "cannot open %s: %s", path, strerror(errno));
        tsf_reader_close(r);
        return st;
    }
    r->size = (uint64_t)sb.st_size;
    if (r->use_pread <= 0 && sb.st_size > 0 && (uint64_t)sb.st_size <= SIZE_MAX) {
        /* a mapping serves every read without a system call or a copy (warm page cache) */
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, r->fd, 0);
        if (m != MAP_FAILED) {
            r->map = m;
            r->map_len = (size_t)sb.st_size;
            r->mem = m;
            r->src = RD_SRC_MEMORY;
        }
    }
    if (!r->pix_tried && (st = tsf_rd_pix_set_path(r, path, err))) {
        tsf_reader_close(r);
        return st;
    }
    return reader_finish_open(r, out, err);
}

tsf_status tsf_reader_open_memory(tsf_reader **out, const void *data, size_t len, const tsf_reader_options *opts,
                                  tsf_error *err)
{
    if (!out || (!data && len)) return tsf_err(err, TSF_EINVAL, "tsf_reader_open_memory: out and data are required");
    *out = NULL;
    tsf_reader *r;
    tsf_status st = reader_new(&r, opts, err);
    if (st) return st;
    r->src = RD_SRC_MEMORY;
    r->mem = data ? data : (const uint8_t *)"";
    r->size = len;
    return reader_finish_open(r, out, err);
}

tsf_status tsf_reader_open_callbacks(tsf_reader **out, const tsf_read_callbacks *cb, const tsf_reader_options *opts,
                                     tsf_error *err)
{
    if (!out || !cb || !cb->pread || cb->struct_size < sizeof *cb)
        return tsf_err(err, TSF_EINVAL, "tsf_reader_open_callbacks: out and cb (with pread, struct_size) required");
    *out = NULL;
    tsf_reader *r;
    tsf_status st = reader_new(&r, opts, err);
    if (st) return st;
    r->src = RD_SRC_CALLBACKS;
    r->cb = *cb;
    r->size = cb->size;
    return reader_finish_open(r, out, err);
}

void tsf_reader_close(tsf_reader *r)
{
    if (!r) return;
    tsf_rd_pix_free(r);
    if (r->fd >= 0) close(r->fd);
    if (r->src != RD_SRC_MEMORY) {
        tsf_free(r->a, r->meta, r->meta_len);
        tsf_free(r->a, r->index, r->index_len);
    }
    if (r->bloom) tsf_free(r->a, r->bloom, ((size_t)r->fm.bloom_size + 7) / 8);
    for (size_t i = 0; i < r->ntables; i++)
        tsf_free(r->a, r->tables[i].columns, r->tables[i].ncolumns * sizeof(tsf_table_column));
    tsf_free(r->a, r->tables, ((size_t)r->fm.ntables + r->fm.nschemas + 1) * sizeof *r->tables);
    tsf_free(r->a, r->devices, r->devices_cap * sizeof *r->devices);
    tsf_free(r->a, r->series, r->series_cap * sizeof *r->series);
    tsf_free(r->a, r->pool, r->pool_cap);
    tsf_codec_close(r->codec);
    tsf_rd_lastv_free(r);
    tsf_rd_workers_free(r);
    tsf_rd_pdir_free(r);
    tsf_rd_query_spares_free(r);
    if (r->map) munmap(r->map, r->map_len);
    pthread_mutex_destroy(&r->lock);
    tsf_free(r->a, r, sizeof *r);
}

int tsf_reader_version(const tsf_reader *r)
{
    return r ? r->version : 0;
}

/* ---- index load --------------------------------------------------------------------------- */

typedef struct load_ctx {
    tsf_reader *r;
    size_t budget; /* nodes and runs that may still be visited */
    tsf_error *err;
    size_t table;
} load_ctx;

/* Appends s[0..n) + NUL to the pool; *off receives its offset (pointers are fixed up at the end). */
static tsf_status pool_add(tsf_reader *r, const void *s, size_t n, size_t *off, tsf_error *err)
{
    if (r->pool_len + n + 1 > r->pool_cap) {
        size_t c = r->pool_cap ? r->pool_cap : 1024;
        while (c < r->pool_len + n + 1) c *= 2;
        char *p = tsf_realloc(r->a, r->pool, r->pool_cap, c);
        if (!p) return tsf_err(err, TSF_ENOMEM, "reader: out of memory for names");
        r->pool = p;
        r->pool_cap = c;
    }
    *off = r->pool_len;
    if (n && s) memcpy(r->pool + r->pool_len, s, n); /* s NULL: reserve only */
    r->pool[r->pool_len + n] = '\0';
    r->pool_len += n + 1;
    return TSF_OK;
}

static tsf_status grow(const tsf_allocator *a, void **p, size_t *cap, size_t need, size_t elem, tsf_error *err)
{
    if (need <= *cap) return TSF_OK;
    size_t c = *cap ? *cap * 2 : 16;
    if (c < need) c = need;
    void *q = tsf_realloc(a, *p, *cap * elem, c * elem);
    if (!q) return tsf_err(err, TSF_ENOMEM, "reader: out of memory for the index");
    *p = q;
    *cap = c;
    return TSF_OK;
}

/* Checks [off, end) lies in the index area and spends one unit of the visit budget. */
static tsf_status index_range(load_ctx *c, uint64_t off, uint64_t end, const char *what, const uint8_t **p)
{
    tsf_reader *r = c->r;
    if (off < r->index_base || end > r->index_base + r->index_len || off >= end)
        return tsf_err(c->err, TSF_ECORRUPT, "%s: range [%llu, %llu) outside the index area [%llu, %llu)", what,
                       (unsigned long long)off, (unsigned long long)end, (unsigned long long)r->index_base,
                       (unsigned long long)(r->index_base + r->index_len));
    if (c->budget == 0)
        return tsf_err(c->err, TSF_ECORRUPT, "%s at %llu: index visits more nodes than the index area can hold (loop?)",
                       what, (unsigned long long)off);
    c->budget--;
    *p = r->index + (off - r->index_base);
    return TSF_OK;
}

static tsf_status add_series(load_ctx *c, tsf_rd_device *d, const tsf_mip_tsm *t, uint64_t at)
{
    tsf_reader *r = c->r;
    tsf_rd_series s;
    memset(&s, 0, sizeof s);
    s.tsm = *t;
    size_t pos = 0, off;
    uint64_t coff;
    tsf_fmt_stats cs;
    tsf_status st;
    uint64_t data_end = r->fm.meta_offset;
    tsf_error e;
    while ((st = tsf_mip_next_chunk_meta(t, &pos, &coff, &cs, &e)) == TSF_OK) {
        if (coff < TSF_FMT_HEAD_LEN || coff >= data_end)
            return tsf_err(c->err, TSF_ECORRUPT, "ChunkMetadata of TimeseriesMetadata at %llu: chunk offset %llu outside the data area",
                           (unsigned long long)at, (unsigned long long)coff);
        s.nchunks++;
    }
    if (st != TSF_ENOTFOUND) {
        if (c->err) *c->err = e;
        return st;
    }
    if ((st = pool_add(r, t->measurement.data, t->measurement.len, &off, c->err))) return st;
    s.name = (const char *)(uintptr_t)off;
    /* Column roles as the reference assigns them: a device whose first series is named "" is aligned and
     * that series is its time column; every other series of it is a value column. The type byte's role
     * bits are not consulted (the reference's recovery writes them as 0). */
    int first = !d->aligned && d->nseries == 0;
    if (first && t->measurement.len == 0) {
        if (t->data_type != TSF_VECTOR)
            return tsf_err(c->err, TSF_ECORRUPT, "TimeseriesMetadata at %llu: time column (named \"\") of type %d, not VECTOR",
                           (unsigned long long)at, (int)t->data_type);
        d->aligned = 1;
        d->time = s;
        return TSF_OK;
    }
    if (t->data_type == TSF_VECTOR)
        return tsf_err(c->err, TSF_ECORRUPT, "TimeseriesMetadata at %llu: VECTOR series %s",
                       (unsigned long long)at, first ? "not named \"\"" : "not first in its device");
    if ((st = grow(r->a, (void **)&r->series, &r->series_cap, r->nseries + 1, sizeof *r->series, c->err))) return st;
    r->series[r->nseries++] = s;
    d->nseries++;
    return TSF_OK;
}

static tsf_status walk_meas(load_ctx *c, tsf_rd_device *d, const tsf_mip_node *n, int depth)
{
    if (depth > RD_MAX_DEPTH)
        return tsf_err(c->err, TSF_ECORRUPT, "measurement index at %llu: deeper than %d levels",
                       (unsigned long long)n->entries_base, RD_MAX_DEPTH);
    size_t pos = 0;
    tsf_mip_entry e, next;
    memset(&next, 0, sizeof next);
    tsf_status st = tsf_mip_node_entry(n, &pos, &e, c->err);
    if (st) return st;
    for (uint32_t i = 0; i < n->count; i++) {
        uint64_t end = n->end_offset;
        if (i + 1 < n->count) {
            if ((st = tsf_mip_node_entry(n, &pos, &next, c->err))) return st;
            end = next.offset;
        }
        const uint8_t *p = NULL;
        if ((st = index_range(c, e.offset, end, "measurement index entry", &p))) return st;
        size_t len = (size_t)(end - e.offset);
        if (n->type == TSF_NODE_LEAF_MEASUREMENT) {
            size_t at = 0;
            while (at < len) {
                tsf_mip_tsm t;
                size_t used = 0;
                if ((st = tsf_mip_parse_tsm(p + at, len - at, e.offset + at, &t, &used, c->err))) return st;
                if ((st = add_series(c, d, &t, e.offset + at))) return st;
                at += used;
            }
        } else {
            tsf_mip_node child;
            size_t used = 0;
            if ((st = tsf_mip_parse_node(p, len, e.offset, c->r->version, 0, &child, &used, c->err))) return st;
            if ((st = walk_meas(c, d, &child, depth + 1))) return st;
        }
        e = next;
    }
    return TSF_OK;
}

static tsf_status add_device(load_ctx *c, const tsf_fmt_device_id *id, uint64_t off, uint64_t end)
{
    tsf_reader *r = c->r;
    const uint8_t *p = NULL;
    tsf_status st = index_range(c, off, end, "device index entry", &p);
    if (st) return st;
    tsf_mip_node root;
    size_t used = 0;
    if ((st = tsf_mip_parse_node(p, (size_t)(end - off), off, r->version, 0, &root, &used, c->err))) return st;
    if ((st = grow(r->a, (void **)&r->devices, &r->devices_cap, r->ndevices + 1, sizeof *r->devices, c->err)))
        return st;
    tsf_rd_device *d = &r->devices[r->ndevices];
    memset(d, 0, sizeof *d);
    d->id = *id;
    d->table = c->table;
    d->series0 = r->nseries;
    size_t n = tsf_fmt_device_to_string(id, NULL, 0), noff;
    if ((st = pool_add(r, NULL, n, &noff, c->err))) return st;
    tsf_fmt_device_to_string(id, r->pool + noff, n + 1);
    d->name = (const char *)(uintptr_t)noff;
    r->ndevices++;
    st = walk_meas(c, d, &root, 0);
    if (st) return st;
    if (d->aligned == 0 && d->nseries == 0)
        return tsf_err(c->err, TSF_ECORRUPT, "device index at %llu: device without series", (unsigned long long)off);
    return TSF_OK;
}

static tsf_status walk_devices(load_ctx *c, const tsf_mip_node *n, int depth)
{
    if (depth > RD_MAX_DEPTH)
        return tsf_err(c->err, TSF_ECORRUPT, "device index at %llu: deeper than %d levels",
                       (unsigned long long)n->entries_base, RD_MAX_DEPTH);
    size_t pos = 0;
    tsf_mip_entry e, next;
    memset(&next, 0, sizeof next);
    tsf_status st = tsf_mip_node_entry(n, &pos, &e, c->err);
    if (st) return st;
    for (uint32_t i = 0; i < n->count; i++) {
        uint64_t end = n->end_offset;
        if (i + 1 < n->count) {
            if ((st = tsf_mip_node_entry(n, &pos, &next, c->err))) return st;
            end = next.offset;
        }
        if (n->type == TSF_NODE_LEAF_DEVICE) {
            if ((st = add_device(c, &e.device, e.offset, end))) return st;
        } else {
            const uint8_t *p;
            tsf_mip_node child;
            size_t used = 0;
            if ((st = index_range(c, e.offset, end, "device index entry", &p))) return st;
            if ((st = tsf_mip_parse_node(p, (size_t)(end - e.offset), e.offset, c->r->version, 1, &child, &used,
                                         c->err)))
                return st;
            if ((st = walk_devices(c, &child, depth + 1))) return st;
        }
        e = next;
    }
    return TSF_OK;
}

static int name_eq_ci(const uint8_t *a, size_t na, const char *b)
{
    return strlen(b) == na && strncasecmp((const char *)a, b, na) == 0;
}

static tsf_status load_schemas(tsf_reader *r, tsf_error *err)
{
    size_t pos = 0;
    tsf_status st;
    for (uint32_t i = 0; i < r->fm.nschemas; i++) {
        tsf_fmt_str name;
        uint32_t ncol;
        if ((st = tsf_mip_next_schema(&r->fm, &pos, &name, &ncol, err))) return st;
        tsf_rd_table *t = NULL;
        for (size_t k = 0; k < r->ntables; k++)
            if (name_eq_ci(name.data, name.len, r->pool + (uintptr_t)r->tables[k].name)) t = &r->tables[k];
        if (!t) { /* a schema without devices; room was reserved for it */
            t = &r->tables[r->ntables++];
            memset(t, 0, sizeof *t);
            size_t off;
            if ((st = pool_add(r, name.data, name.len, &off, err))) return st;
            t->name = (const char *)(uintptr_t)off;
            t->first_device = r->ndevices;
        }
        if (t->columns) return tsf_err(err, TSF_ECORRUPT, "TsFileMetadata: two schemas for one table");
        t->columns = tsf_calloc(r->a, ncol ? ncol : 1, sizeof *t->columns);
        if (!t->columns) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
        t->ncolumns = ncol;
        for (uint32_t k = 0; k < ncol; k++) {
            tsf_mip_column col;
            size_t off;
            if ((st = tsf_mip_next_column(&r->fm, &pos, &col, err))) return st;
            if ((st = pool_add(r, col.name, col.name_len, &off, err))) return st;
            tsf_table_column *tc = &t->columns[k];
            tc->name = (const char *)(uintptr_t)off;
            tc->type = (tsf_type)col.data_type;
            tc->encoding = (tsf_encoding)col.encoding;
            tc->compression = (tsf_compression)col.compression;
            tc->category = (tsf_column_category)col.category;
        }
    }
    return TSF_OK;
}

static tsf_status load_index(tsf_reader *r, tsf_error *err)
{
    tsf_status st;
    const uint8_t *p;
    r->index_base = r->fm.meta_offset + 1;
    r->index_len = (size_t)(r->meta_pos - r->index_base);
    uint8_t *owned = NULL;
    if ((st = fetch_owned(r, r->index_base, r->index_len, &owned, &p, err))) return st;
    r->index = owned ? owned : (uint8_t *)(uintptr_t)p;
    load_ctx c = {r, r->index_len / 10 + 4, err, 0};
    r->tables = tsf_calloc(r->a, (size_t)r->fm.ntables + r->fm.nschemas + 1, sizeof *r->tables);
    if (!r->tables) return tsf_err(err, TSF_ENOMEM, "reader: out of memory");
    size_t pos = 0;
    for (uint32_t i = 0; i < r->fm.ntables; i++) {
        tsf_fmt_str name;
        tsf_mip_node root;
        if ((st = tsf_mip_next_table(&r->fm, &pos, &name, &root, err))) return st;
        tsf_rd_table *t = &r->tables[r->ntables++];
        size_t off;
        if ((st = pool_add(r, name.data, name.len, &off, err))) return st;
        t->name = (const char *)(uintptr_t)off;
        t->first_device = r->ndevices;
        c.table = i;
        if (root.end_offset > r->meta_pos)
            return tsf_err(err, TSF_ECORRUPT, "table %u root: endOffset %llu beyond TsFileMetadata at %llu", i,
                           (unsigned long long)root.end_offset, (unsigned long long)r->meta_pos);
        if ((st = walk_devices(&c, &root, 0))) return st;
        t->ndevices = r->ndevices - t->first_device;
    }
    if ((st = load_schemas(r, err))) return st;
    /* offsets -> pointers now that the pool no longer moves */
    for (size_t i = 0; i < r->ntables; i++) {
        r->tables[i].name = r->pool + (uintptr_t)r->tables[i].name;
        for (size_t k = 0; k < r->tables[i].ncolumns; k++)
            r->tables[i].columns[k].name = r->pool + (uintptr_t)r->tables[i].columns[k].name;
    }
    for (size_t i = 0; i < r->ndevices; i++) {
        r->devices[i].name = r->pool + (uintptr_t)r->devices[i].name;
        if (r->devices[i].aligned) r->devices[i].time.name = r->pool + (uintptr_t)r->devices[i].time.name;
    }
    for (size_t i = 0; i < r->nseries; i++) r->series[i].name = r->pool + (uintptr_t)r->series[i].name;
    return TSF_OK;
}

tsf_status tsf_rd_ensure_index(tsf_reader *r, tsf_error *err)
{
    pthread_mutex_lock(&r->lock);
    if (r->loaded == 0) {
        tsf_status st = load_index(r, &r->load_err);
        r->loaded = st ? -1 : 1;
        if (st) r->load_err.code = st;
    }
    int ok = r->loaded;
    pthread_mutex_unlock(&r->lock);
    if (ok > 0) return TSF_OK;
    if (err) *err = r->load_err;
    return r->load_err.code;
}

tsf_status tsf_reader_load_index(tsf_reader *r, tsf_error *err)
{
    if (!r) return tsf_err(err, TSF_EINVAL, "tsf_reader_load_index: reader is NULL");
    return tsf_rd_ensure_index(r, err);
}

/* ---- metadata API ------------------------------------------------------------------------- */

size_t tsf_reader_table_count(tsf_reader *r)
{
    return r && tsf_rd_ensure_index(r, NULL) == TSF_OK ? r->ntables : 0;
}

tsf_status tsf_reader_table(tsf_reader *r, size_t i, tsf_table_info *out, tsf_error *err)
{
    tsf_status st = r ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader is NULL");
    if (st) return st;
    if (i >= r->ntables) return tsf_err(err, TSF_EINVAL, "table %zu: the file has %zu", i, r->ntables);
    const tsf_rd_table *t = &r->tables[i];
    out->name = t->name;
    out->ncolumns = t->ncolumns;
    out->columns = t->columns;
    out->first_device = t->first_device;
    out->ndevices = t->ndevices;
    return TSF_OK;
}

tsf_status tsf_reader_find_table(tsf_reader *r, const char *name, size_t *index, tsf_error *err)
{
    tsf_status st = r && name ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader and name required");
    if (st) return st;
    for (size_t i = 0; i < r->ntables; i++)
        if (!strcasecmp(r->tables[i].name, name)) {
            *index = i;
            return TSF_OK;
        }
    return tsf_err(err, TSF_ENOTFOUND, "no table named \"%.200s\"", name);
}

size_t tsf_reader_device_count(tsf_reader *r)
{
    return r && tsf_rd_ensure_index(r, NULL) == TSF_OK ? r->ndevices : 0;
}

tsf_status tsf_reader_device(tsf_reader *r, size_t i, tsf_device_info *out, tsf_error *err)
{
    tsf_status st = r ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader is NULL");
    if (st) return st;
    if (i >= r->ndevices) return tsf_err(err, TSF_EINVAL, "device %zu: the file has %zu", i, r->ndevices);
    const tsf_rd_device *d = &r->devices[i];
    out->name = d->name;
    out->table = d->table;
    out->nsegments = d->id.nseg;
    out->aligned = d->aligned;
    out->nseries = d->nseries;
    return TSF_OK;
}

tsf_status tsf_reader_device_segment(tsf_reader *r, size_t i, size_t s, tsf_bytes *out, tsf_error *err)
{
    tsf_status st = r ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader is NULL");
    if (st) return st;
    if (i >= r->ndevices || s >= r->devices[i].id.nseg)
        return tsf_err(err, TSF_EINVAL, "device %zu segment %zu does not exist", i, s);
    tsf_fmt_str seg = tsf_fmt_device_segment(&r->devices[i].id, (uint32_t)s);
    out->data = seg.is_null ? NULL : seg.data;
    out->len = seg.is_null ? 0 : seg.len;
    return TSF_OK;
}

tsf_status tsf_reader_find_device(tsf_reader *r, const char *name, size_t *index, tsf_error *err)
{
    tsf_status st = r && name ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader and name required");
    if (st) return st;
    for (size_t i = 0; i < r->ndevices; i++)
        if (!strcmp(r->devices[i].name, name)) {
            *index = i;
            return TSF_OK;
        }
    return tsf_err(err, TSF_ENOTFOUND, "no device named \"%.200s\"", name);
}

static void stats_convert(const tsf_fmt_stats *s, tsf_stats *o)
{
    memset(o, 0, sizeof *o);
    o->type = s->type;
    o->count = s->count;
    o->start_time = s->start_time;
    o->end_time = s->end_time;
    o->trusted = 1;
    if (s->count == 0) return;
    switch (s->type) {
    case TSF_BOOLEAN:
        o->has_values = 1;
        o->first_i = s->v.b.first != 0;
        o->last_i = s->v.b.last != 0;
        o->sum = (double)s->v.b.sum;
        o->min_i = o->max_i = 0;
        o->first = (double)o->first_i;
        o->last = (double)o->last_i;
        break;
    case TSF_INT32:
    case TSF_DATE:
        o->has_values = 1;
        o->min_i = s->v.i32.min;
        o->max_i = s->v.i32.max;
        o->first_i = s->v.i32.first;
        o->last_i = s->v.i32.last;
        o->sum = (double)s->v.i32.sum;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        o->has_values = 1;
        o->min_i = s->v.i64.min;
        o->max_i = s->v.i64.max;
        o->first_i = s->v.i64.first;
        o->last_i = s->v.i64.last;
        o->sum = s->v.i64.sum;
        break;
    case TSF_FLOAT:
        o->has_values = 1;
        o->min = s->v.f32.min;
        o->max = s->v.f32.max;
        o->first = s->v.f32.first;
        o->last = s->v.f32.last;
        o->sum = s->v.f32.sum;
        return;
    case TSF_DOUBLE:
        o->has_values = 1;
        o->min = s->v.f64.min;
        o->max = s->v.f64.max;
        o->first = s->v.f64.first;
        o->last = s->v.f64.last;
        o->sum = s->v.f64.sum;
        return;
    case TSF_TEXT:
    case TSF_STRING:
        o->first_b = s->v.bin.first;
        o->last_b = s->v.bin.last;
        o->min_b = s->v.bin.min;
        o->max_b = s->v.bin.max;
        return;
    default: return;
    }
    if (s->type != TSF_BOOLEAN) {
        o->min = (double)o->min_i;
        o->max = (double)o->max_i;
    }
    o->first = (double)o->first_i;
    o->last = (double)o->last_i;
}

tsf_status tsf_rd_read_chunk_header(const tsf_reader *r, uint64_t off, tsf_rd_buf *buf, tsf_fmt_chunk_header *h,
                                uint64_t *data_pos, uint64_t *data_end, uint64_t *fetched, tsf_error *err)
{
    uint64_t limit = r->fm.meta_offset;
    if (off < TSF_FMT_HEAD_LEN || off >= limit)
        return tsf_err(err, TSF_ECORRUPT, "chunk offset %llu outside the data area [7, %llu)", (unsigned long long)off,
                       (unsigned long long)limit);
    size_t avail = (size_t)(limit - off), win = avail < 128 ? avail : 128;
    const uint8_t *p;
    size_t used = 0;
    tsf_status st = tsf_rd_fetch(r, off, win, buf, &p, err);
    if (st) return st;
    *fetched += win;
    st = tsf_fmt_parse_chunk_header(p, win, off, h, &used, err);
    if (st == TSF_ECORRUPT && win < avail) { /* a long measurement name: retry with a larger window */
        win = avail < (1u << 20) ? avail : (1u << 20);
        if ((st = tsf_rd_fetch(r, off, win, buf, &p, err))) return st;
        *fetched += win;
        st = tsf_fmt_parse_chunk_header(p, win, off, h, &used, err);
    }
    if (st) return st;
    if (!tsf_fmt_is_chunk_marker(h->marker))
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: marker 0x%02x is not a chunk marker", (unsigned long long)off,
                       h->marker);
    *data_pos = off + used;
    *data_end = *data_pos + h->data_size;
    if (*data_end > limit)
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: dataSize %u runs past the data area end %llu",
                       (unsigned long long)off, h->data_size, (unsigned long long)limit);
    return TSF_OK;
}

tsf_status tsf_rd_read_page_header(const tsf_reader *r, uint64_t pos, uint64_t end, const tsf_fmt_chunk_header *h,
                               tsf_rd_buf *buf, tsf_fmt_page_header *ph, uint64_t *fetched, tsf_error *err)
{
    if (pos >= end) return tsf_err(err, TSF_ECORRUPT, "page header at %llu: chunk data ends", (unsigned long long)pos);
    size_t avail = (size_t)(end - pos), win = avail < 96 ? avail : 96, used = 0;
    const uint8_t *p;
    int multi = tsf_fmt_chunk_multi_page(h->marker);
    tsf_type t = h->data_type;
    tsf_status st = tsf_rd_fetch(r, pos, win, buf, &p, err);
    if (st) return st;
    *fetched += win;
    st = tsf_fmt_parse_page_header(p, win, pos, t, multi, ph, &used, err);
    if (st == TSF_ECORRUPT && win < avail) { /* large STRING statistics */
        win = avail;
        if ((st = tsf_rd_fetch(r, pos, win, buf, &p, err))) return st;
        *fetched += win;
        st = tsf_fmt_parse_page_header(p, win, pos, t, multi, ph, &used, err);
    }
    if (st) return st;
    if (ph->compressed_size > avail - used)
        return tsf_err(err, TSF_ECORRUPT, "page header at %llu: compressedSize %u runs past the chunk end %llu",
                       (unsigned long long)pos, ph->compressed_size, (unsigned long long)end);
    if (h->compression == TSF_UNCOMPRESSED && ph->compressed_size != ph->uncompressed_size)
        return tsf_err(err, TSF_ECORRUPT, "page header at %llu: UNCOMPRESSED page with sizes %u != %u",
                       (unsigned long long)pos, ph->uncompressed_size, ph->compressed_size);
    ph->header_len = used;
    return TSF_OK;
}

tsf_status tsf_reader_series(tsf_reader *r, size_t device, size_t j, tsf_series_info *out, tsf_error *err)
{
    tsf_status st = r && out ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader and out are required");
    if (st) return st;
    if (device >= r->ndevices || j >= r->devices[device].nseries)
        return tsf_err(err, TSF_EINVAL, "series %zu of device %zu does not exist", j, device);
    const tsf_rd_series *s = &r->series[r->devices[device].series0 + j];
    memset(out, 0, sizeof *out);
    out->measurement = s->name;
    out->type = s->tsm.data_type;
    out->nchunks = s->nchunks;
    out->encoding = (tsf_encoding)-1;
    out->compression = (tsf_compression)-1;
    stats_convert(&s->tsm.stats, &out->stats);
    return TSF_OK;
}

/* Walks the chunk headers of series j of device `device` (its index entry already checked): the encodings
 * and compressions they use into *enc / *comp, and with `pages` what tsf_reader_series_pages adds (the first
 * chunk's codecs, trust, disk bytes, and every page header's sizes). */
static tsf_status walk_chunks(tsf_reader *r, size_t device, size_t j, tsf_series_info *pages, uint64_t *enc,
                              uint64_t *comp, tsf_error *err)
{
    const tsf_rd_series *s = &r->series[r->devices[device].series0 + j];
    tsf_rd_buf b = {0};
    size_t pos = 0;
    uint64_t coff, fetched = 0;
    tsf_fmt_stats cs;
    int first = 1;
    tsf_error e = {0};
    tsf_status st;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &coff, &cs, &e)) == TSF_OK) {
        tsf_fmt_chunk_header h;
        uint64_t dp, de;
        if ((st = tsf_rd_read_chunk_header(r, coff, &b, &h, &dp, &de, &fetched, err))) break;
        if ((unsigned)h.encoding < 64) *enc |= UINT64_C(1) << h.encoding;
        if ((unsigned)h.compression < 64) *comp |= UINT64_C(1) << h.compression;
        if (!pages) continue;
        pages->disk_bytes += de - coff;
        if (first) {
            pages->encoding = h.encoding;
            pages->compression = h.compression;
            first = 0;
        }
        if (tsf_rd_lossy(h.data_type, h.encoding)) pages->stats.trusted = 0;
        while (dp < de) {
            tsf_fmt_page_header ph;
            if ((st = tsf_rd_read_page_header(r, dp, de, &h, &b, &ph, &fetched, err))) break;
            dp += ph.header_len + ph.compressed_size;
            pages->npages++;
            pages->page_bytes += ph.compressed_size;
            pages->page_bytes_raw += ph.uncompressed_size;
        }
        if (st) break;
    }
    tsf_rd_buf_free(r->a, &b);
    if (st == TSF_ENOTFOUND) return TSF_OK;
    if (err && e.code == st) *err = e;
    return st;
}

tsf_status tsf_reader_series_pages(tsf_reader *r, size_t device, size_t j, tsf_series_info *out, tsf_error *err)
{
    uint64_t enc = 0, comp = 0;
    tsf_status st = tsf_reader_series(r, device, j, out, err);
    return st ? st : walk_chunks(r, device, j, out, &enc, &comp, err);
}

tsf_status tsf_reader_series_codecs(tsf_reader *r, size_t device, size_t j, uint64_t *encodings,
                                    uint64_t *compressions, tsf_error *err)
{
    tsf_series_info si;
    uint64_t enc = 0, comp = 0;
    tsf_status st = tsf_reader_series(r, device, j, &si, err); /* checks r, device and j */
    if (!st) st = walk_chunks(r, device, j, NULL, &enc, &comp, err);
    if (st) return st;
    if (encodings) *encodings = enc;
    if (compressions) *compressions = comp;
    return TSF_OK;
}

tsf_status tsf_reader_find_series(tsf_reader *r, size_t device, const char *measurement, size_t *j, tsf_error *err)
{
    tsf_status st = r && measurement ? tsf_rd_ensure_index(r, err) : tsf_err(err, TSF_EINVAL, "reader and name required");
    if (st) return st;
    if (device >= r->ndevices) return tsf_err(err, TSF_EINVAL, "device %zu does not exist", device);
    const tsf_rd_device *d = &r->devices[device];
    for (size_t k = 0; k < d->nseries; k++)
        if (!strcmp(r->series[d->series0 + k].name, measurement)) {
            *j = k;
            return TSF_OK;
        }
    return tsf_err(err, TSF_ENOTFOUND, "device %s has no series \"%.200s\"", d->name, measurement);
}

int tsf_reader_may_contain(tsf_reader *r, const char *device, const char *measurement)
{
    if (!r || !r->bloom) return 1;
    size_t nd = strlen(device), nm = strlen(measurement);
    char stackbuf[512];
    char *key = nd + nm + 1 <= sizeof stackbuf ? stackbuf : tsf_alloc(r->a, nd + nm + 1);
    if (!key) return 1;
    memcpy(key, device, nd);
    key[nd] = '.';
    memcpy(key + nd + 1, measurement, nm);
    tsf_bloom bf = {r->fm.bloom_size, r->fm.bloom_k, r->bloom, r->a};
    int hit = tsf_bloom_may_contain(&bf, (const uint8_t *)key, nd + nm + 1);
    if (key != stackbuf) tsf_free(r->a, key, nd + nm + 1);
    return hit;
}
