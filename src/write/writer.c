/*
 * writer.c - the writer handle (spec tsfile-container-format.md §2, §4, §10, §17, §20): options,
 * output (a file written under a temporary name, common/tmpfile.c, and renamed on close, or user
 * callbacks) through a large buffer, the device registry (v4 device ids: tree paths split as in
 * §10.2, table devices [table, tags...] with trailing nulls stripped), registration of tree series,
 * aligned devices and tables, and close: flush every chunk group, then hand the index area to src/format/index_*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../format/format.h"
#include "auto.h"
#include "../common/tmpfile.h"
#include "writer.h"

#define OUT_FLUSH_AT (1u << 20)
/* tsf_w_outv: runs from this size on (whole chunks) go to the OS in gathered writes, not copied */
#define OUT_DIRECT_AT (64u << 10)

void tsf_writer_options_init(tsf_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->page_max_points = 10000;
    o->page_max_bytes = 65536;
    o->memory_budget = (size_t)32 << 20; /* chunk data still in the CPU caches when written: ~1.7x vs 128 MiB */
    o->time_compression = tsf_compression_supported(TSF_LZ4) ? TSF_LZ4 : TSF_UNCOMPRESSED;
    o->float_precision = 2;
    o->bloom_error_rate = 0.05;
    o->max_index_degree = 256;
    o->path = TSF_PATH_AUTO;
    o->lz4_probe = 1;
    o->gorilla_compact = 1; /* standard GORILLA streams, ~6% smaller; the Java reader reads them (doc/writer.md) */
}

/* ---- output ------------------------------------------------------------------------------- */

static tsf_status raw_write(tsf_writer *w, const uint8_t *p, size_t n, tsf_error *err)
{
    if (w->use_cb) {
        if (n && w->cb.write(w->cb.ud, p, n) != 0) {
            w->failed = 1;
            return tsf_err(err, TSF_EIO, "writer: write callback failed at offset %llu",
                           (unsigned long long)w->flushed);
        }
        w->flushed += n;
        return TSF_OK;
    }
    while (n) {
        ssize_t k = write(w->fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (k < 0) {
            if (errno == EINTR) continue;
            w->failed = 1;
            return tsf_err(err, TSF_EIO, "writer: write to %s failed at offset %llu: %s",
                           w->tmp_path ? w->tmp_path : w->path, (unsigned long long)w->flushed, strerror(errno));
        }
        p += k;
        n -= (size_t)k;
        w->flushed += (uint64_t)k;
    }
    return TSF_OK;
}

static tsf_status out_flush(tsf_writer *w, tsf_error *err)
{
    if (!w->out.len) return TSF_OK;
    tsf_status s = raw_write(w, w->out.p, w->out.len, err);
    w->out.len = 0;
    return s;
}

tsf_status tsf_w_out(tsf_writer *w, const void *p, size_t n, tsf_error *err)
{
    if (w->failed) return tsf_err(err, TSF_EIO, "writer: an earlier output error stopped this writer");
    if (n >= OUT_FLUSH_AT / 4) {
        tsf_status s = out_flush(w, err);
        if (s) return s;
        return raw_write(w, p, n, err);
    }
    tsf_wbuf_put(&w->out, p, n);
    if (w->out.oom) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (output buffer)");
    if (w->out.len >= OUT_FLUSH_AT) return out_flush(w, err);
    return TSF_OK;
}

/* writev of iov[0..n), n <= IOV_MAX, retrying partial writes. */
static tsf_status raw_writev(tsf_writer *w, struct iovec *iov, int n, tsf_error *err)
{
    while (n > 0) {
        ssize_t k = writev(w->fd, iov, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            w->failed = 1;
            return tsf_err(err, TSF_EIO, "writer: write to %s failed at offset %llu: %s",
                           w->tmp_path ? w->tmp_path : w->path, (unsigned long long)w->flushed, strerror(errno));
        }
        w->flushed += (uint64_t)k;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return TSF_OK;
}

tsf_status tsf_w_outv(tsf_writer *w, const tsf_w_piece *v, size_t n, tsf_error *err)
{
    if (w->failed) return tsf_err(err, TSF_EIO, "writer: an earlier output error stopped this writer");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += v[i].n;
    tsf_status s = TSF_OK;
    if (w->use_cb || total < OUT_DIRECT_AT) { /* small runs (and callbacks) go through the buffer */
        for (size_t i = 0; i < n && !s; i++) s = tsf_w_out(w, v[i].p, v[i].n, err);
        return s;
    }
    /* the buffered bytes, then the pieces, in gathered writes */
    size_t i = 0;
    while (i < n && !s) {
        struct iovec iov[256];
        int k = 0;
        if (w->out.len) iov[k++] = (struct iovec){w->out.p, w->out.len};
        for (; i < n && k < 256; i++)
            if (v[i].n) iov[k++] = (struct iovec){(void *)v[i].p, v[i].n};
        w->out.len = 0;
        s = raw_writev(w, iov, k, err);
    }
    return s;
}

const char *tsf_writer_temp_path(const tsf_writer *w) { return w ? w->tmp_path : NULL; }

uint64_t tsf_w_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t tsf_w_pos(const tsf_writer *w) { return w->flushed + w->out.len; }

tsf_status tsf_w_out_flush(tsf_writer *w, tsf_error *err) { return out_flush(w, err); }

uint64_t tsf_writer_bytes_written(const tsf_writer *w)
{
    if (!w) return 0;
    /* the tail of the last tablet (and its budget flush), the output thread's chunk groups count; errors show later */
    tsf_error e;
    if (tsf_w_settle((tsf_writer *)w, &e) == TSF_OK) (void)tsf_w_out_wait((tsf_writer *)w, NULL);
    return tsf_w_pos(w);
}

/* ---- open --------------------------------------------------------------------------------- */

static tsf_status check_options(const tsf_writer_options *in, tsf_writer_options *o, tsf_error *err)
{
    tsf_writer_options_init(o);
    if (!in) return TSF_OK;
    if (in->struct_size < offsetof(tsf_writer_options, allocator) + sizeof(void *) || in->struct_size > sizeof *o)
        return tsf_err(err, TSF_EINVAL, "tsf_writer_open: options.struct_size %zu is not a known version",
                       in->struct_size);
    memcpy(o, in, in->struct_size);
    if (o->page_max_points == 0) return tsf_err(err, TSF_EINVAL, "tsf_writer_open: page_max_points is 0");
    if (o->page_max_points > (1u << 28))
        return tsf_err(err, TSF_EINVAL, "tsf_writer_open: page_max_points %u is too large", o->page_max_points);
    if (o->page_max_bytes == 0) return tsf_err(err, TSF_EINVAL, "tsf_writer_open: page_max_bytes is 0");
    if (o->max_index_degree < 2) return tsf_err(err, TSF_EINVAL, "tsf_writer_open: max_index_degree < 2");
    if (!tsf_compression_supported(o->time_compression))
        return tsf_err(err, TSF_ENOTSUP, "tsf_writer_open: time compression %d is not supported",
                       (int)o->time_compression);
    return TSF_OK;
}

static void writer_free(tsf_writer *w);

tsf_status tsf_wctx_init(tsf_writer *w, wctx *x, tsf_error *err)
{
    memset(x, 0, sizeof *x);
    tsf_wbuf_init(&x->scratch, w->alloc);
    tsf_wbuf_init(&x->scratch2, w->alloc);
    tsf_wbuf_init(&x->tenc, w->alloc);
    tsf_wbuf_init(&x->plz, w->alloc);
    tsf_wbuf_init(&x->plzsrc, w->alloc);
    tsf_wbuf_init(&x->lz4s, w->alloc);
    tsf_wbuf_init(&x->ghead, w->alloc);
    return tsf_compressor_open(&x->cz, w->alloc, err);
}

void tsf_wctx_free(wctx *x)
{
    tsf_wbuf_free(&x->scratch);
    tsf_wbuf_free(&x->scratch2);
    tsf_wbuf_free(&x->tenc);
    tsf_wbuf_free(&x->plz);
    tsf_wbuf_free(&x->plzsrc);
    tsf_wbuf_free(&x->lz4s);
    tsf_wbuf_free(&x->ghead);
    tsf_compressor_close(x->cz);
    x->cz = NULL;
    tsf_wauto_ctx_free(x);
}

static tsf_status writer_new(tsf_writer **out, const tsf_writer_options *opts, tsf_error *err)
{
    tsf_writer_options o;
    tsf_status s = check_options(opts, &o, err);
    if (s) return s;
    tsf_writer *w = tsf_calloc(o.allocator, 1, sizeof *w);
    if (!w) return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
    if (o.allocator) {
        w->alloc_copy = *o.allocator;
        w->alloc = &w->alloc_copy;
    }
    o.allocator = w->alloc;
    w->opt = o;
    w->fd = -1;
    if (o.flush_interval_ms) w->last_flush_ms = tsf_w_now_ms();
    tsf_wbuf_init(&w->out, w->alloc);
    tsf_wbuf_init(&w->scratch, w->alloc);
    tsf_wbuf_init(&w->scratch2, w->alloc);
    if ((s = tsf_bpool_init(&w->bodies, w->alloc, err)) || (s = tsf_wctx_init(w, &w->ctx, err))) {
        tsf_bpool_free(&w->bodies);
        tsf_free(w->alloc, w, sizeof *w);
        return s;
    }
    if (o.threads > 1) {
        size_t nk = o.threads > 64 ? 63 : o.threads - 1;
        w->wk = tsf_calloc(w->alloc, nk, sizeof *w->wk);
        s = w->wk ? TSF_OK : tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
        for (size_t i = 0; i < nk && !s; i++)
            if (!(s = tsf_wctx_init(w, &w->wk[i], err))) w->nwk = i + 1;
        if (s) {
            for (size_t i = 0; i < w->nwk; i++) tsf_wctx_free(&w->wk[i]);
            if (w->wk) tsf_free(w->alloc, w->wk, nk * sizeof *w->wk);
            tsf_wctx_free(&w->ctx);
            tsf_free(w->alloc, w, sizeof *w);
            return s;
        }
    }
    tsf_codec_options co;
    tsf_codec_options_init(&co);
    co.path = o.path;
    co.float_precision = o.float_precision;
    co.gorilla_compact = o.gorilla_compact;
    co.allocator = w->alloc;
    if ((s = tsf_codec_open(&w->codec, &co, err)) || (w->nwk && (s = tsf_w_pool_start(w, err)))) {
        writer_free(w);
        return s;
    }
    *out = w;
    return TSF_OK;
}

static char *dupstr(const tsf_allocator *a, const char *s, size_t n)
{
    char *d = tsf_alloc(a, n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static tsf_status write_head(tsf_writer *w, tsf_error *err)
{
    uint8_t head[TSF_FMT_HEAD_LEN];
    size_t n = 0;
    tsf_status s = tsf_fmt_write_head(TSF_FORMAT_VERSION, head, sizeof head, &n, err);
    return s ? s : tsf_w_out(w, head, n, err);
}

tsf_status tsf_writer_open(tsf_writer **out, const char *path, const tsf_writer_options *opts, tsf_error *err)
{
    if (!out || !path || !*path) return tsf_err(err, TSF_EINVAL, "tsf_writer_open: NULL or empty argument");
    *out = NULL;
    tsf_writer *w;
    tsf_status s = writer_new(&w, opts, err);
    if (s) return s;
    w->path = dupstr(w->alloc, path, strlen(path));
    if (!w->path) {
        tsf_writer_abort(w);
        return tsf_err(err, TSF_ENOMEM, "tsf_writer_open: out of memory");
    }
    if (w->opt.page_index && (s = tsf_wpix_init(w, err))) {
        tsf_writer_abort(w);
        return s;
    }
    if (w->opt.in_place) {
        w->fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (w->fd < 0) s = tsf_err(err, TSF_EIO, "tsf_writer_open: cannot create %s: %s", path, strerror(errno));
    } else {
        tsf_tmp t;
        s = tsf_tmp_create("tsf_writer_open", path, w->alloc, 1, &t, err);
        if (!s) {
            w->fd = t.fd;
            w->tmp_path = t.name;
            w->tmp_cap = t.cap;
        }
    }
    if (s) {
        tsf_writer_abort(w);
        return s;
    }
    if ((s = write_head(w, err))) {
        tsf_writer_abort(w);
        return s;
    }
    *out = w;
    return TSF_OK;
}

tsf_status tsf_writer_open_callbacks(tsf_writer **out, const tsf_write_callbacks *cb, const tsf_writer_options *opts,
                                     tsf_error *err)
{
    if (!out || !cb || !cb->write) return tsf_err(err, TSF_EINVAL, "tsf_writer_open_callbacks: NULL argument");
    *out = NULL;
    if (cb->struct_size < offsetof(tsf_write_callbacks, ud) + sizeof(void *) ||
        cb->struct_size > sizeof(tsf_write_callbacks))
        return tsf_err(err, TSF_EINVAL, "tsf_writer_open_callbacks: callbacks.struct_size %zu is not a known version",
                       cb->struct_size);
    tsf_writer *w;
    tsf_status s = writer_new(&w, opts, err);
    if (s) return s;
    memset(&w->cb, 0, sizeof w->cb);
    memcpy(&w->cb, cb, cb->struct_size);
    w->use_cb = 1;
    if ((s = write_head(w, err))) {
        tsf_writer_abort(w);
        return s;
    }
    *out = w;
    return TSF_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* Serialized device id into w->scratch2 (the map key). */
static const uint8_t *device_key(tsf_writer *w, const tsf_mi_seg *segs, size_t nsegs, size_t *len)
{
    w->scratch2.len = 0;
    tsf_mi_put_device(&w->scratch2, segs, nsegs);
    *len = w->scratch2.len;
    return w->scratch2.oom ? NULL : w->scratch2.p;
}

static int dev_eq(const wdevice *d, const tsf_mi_seg *segs, size_t nsegs)
{
    if (d->nsegs != nsegs) return 0;
    for (size_t i = 0; i < nsegs; i++) {
        if (!d->segs[i].data != !segs[i].data) return 0;
        if (segs[i].data && (d->segs[i].len != segs[i].len || memcmp(d->segs[i].data, segs[i].data, segs[i].len)))
            return 0;
    }
    return 1;
}

wdevice *tsf_w_find_device(tsf_writer *w, const tsf_mi_seg *segs, size_t nsegs, size_t *hash_out)
{
    size_t klen;
    const uint8_t *k = device_key(w, segs, nsegs, &klen);
    if (!k) return NULL;
    size_t h = (size_t)hash_bytes(k, klen);
    if (hash_out) *hash_out = h;
    if (!w->mapcap) return NULL;
    for (size_t i = h & (w->mapcap - 1);; i = (i + 1) & (w->mapcap - 1)) {
        size_t v = w->map[i];
        if (v == 0) return NULL;
        if (dev_eq(w->devs[v - 1], segs, nsegs)) return w->devs[v - 1];
    }
}

static tsf_status map_grow(tsf_writer *w, tsf_error *err)
{
    size_t nc = w->mapcap ? w->mapcap * 2 : 64;
    size_t *nm = tsf_calloc(w->alloc, nc, sizeof *nm);
    if (!nm) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (device map)");
    for (size_t d = 0; d < w->ndevs; d++) {
        size_t klen;
        const uint8_t *k = device_key(w, w->devs[d]->segs, w->devs[d]->nsegs, &klen);
        if (!k) {
            tsf_free(w->alloc, nm, nc * sizeof *nm);
            return tsf_err(err, TSF_ENOMEM, "writer: out of memory (device map)");
        }
        size_t i = (size_t)hash_bytes(k, klen) & (nc - 1);
        while (nm[i]) i = (i + 1) & (nc - 1);
        nm[i] = d + 1;
    }
    if (w->map) tsf_free(w->alloc, w->map, w->mapcap * sizeof *w->map);
    w->map = nm;
    w->mapcap = nc;
    return TSF_OK;
}

static void device_free(tsf_writer *w, wdevice *d)
{
    for (size_t i = 0; i < d->ncols; i++) tsf_wcol_free(w, &d->cols[i]);
    if (d->cols) tsf_free(w->alloc, d->cols, d->ccap * sizeof *d->cols);
    if (d->aligned) tsf_wcol_free(w, &d->tcol);
    if (d->dt) tsf_free(w->alloc, d->dt, d->dt_cap * sizeof *d->dt);
    for (size_t i = 0; i < d->nsegs; i++)
        if (d->segs[i].data) tsf_free(w->alloc, (void *)d->segs[i].data, d->segs[i].len + 1);
    if (d->segs) tsf_free(w->alloc, d->segs, d->nsegs * sizeof *d->segs);
    if (d->path) tsf_free(w->alloc, d->path, d->path_cap);
    tsf_free(w->alloc, d, sizeof *d);
}

tsf_status tsf_w_add_device(tsf_writer *w, const tsf_mi_seg *segs, size_t nsegs, int aligned, int table,
                            wdevice **out, tsf_error *err)
{
    tsf_status s;
    if ((w->ndevs + 1) * 2 > w->mapcap && (s = map_grow(w, err))) return s;
    if (w->ndevs == w->dcap) {
        size_t nc = w->dcap ? w->dcap * 2 : 16;
        wdevice **nd = tsf_realloc(w->alloc, w->devs, w->dcap * sizeof *nd, nc * sizeof *nd);
        if (!nd) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (devices)");
        w->devs = nd;
        w->dcap = nc;
    }
    wdevice *d = tsf_calloc(w->alloc, 1, sizeof *d);
    if (!d) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (device)");
    d->table = table;
    d->segs = tsf_calloc(w->alloc, nsegs, sizeof *d->segs);
    size_t plen = 0;
    for (size_t i = 0; i < nsegs; i++) plen += (segs[i].data ? segs[i].len : 4) + 1;
    d->path = tsf_alloc(w->alloc, plen + 1);
    d->path_cap = plen + 1;
    if (!d->segs || !d->path) goto oom;
    d->nsegs = nsegs;
    d->path_len = 0;
    for (size_t i = 0; i < nsegs; i++) {
        if (segs[i].data) {
            char *c = dupstr(w->alloc, segs[i].data, segs[i].len);
            if (!c) goto oom;
            d->segs[i].data = c;
            d->segs[i].len = segs[i].len;
        }
        if (i) d->path[d->path_len++] = '.';
        memcpy(d->path + d->path_len, segs[i].data ? segs[i].data : "null", segs[i].data ? segs[i].len : 4);
        d->path_len += segs[i].data ? segs[i].len : 4;
    }
    d->path[d->path_len] = 0;
    d->aligned = aligned;
    if (aligned && (s = tsf_wcol_init(w, &d->tcol, "", 0, TSF_VECTOR, TSF_ENC_TS_2DIFF, w->opt.time_compression,
                                      0x80, err))) {
        device_free(w, d);
        return s;
    }
    d->tcol.dev = d;
    size_t klen;
    const uint8_t *k = device_key(w, segs, nsegs, &klen);
    if (!k) {
        device_free(w, d);
        return tsf_err(err, TSF_ENOMEM, "writer: out of memory (device)");
    }
    size_t i = (size_t)hash_bytes(k, klen) & (w->mapcap - 1);
    while (w->map[i]) i = (i + 1) & (w->mapcap - 1);
    w->devs[w->ndevs++] = d;
    w->map[i] = w->ndevs;
    *out = d;
    return TSF_OK;
oom:
    device_free(w, d);
    return tsf_err(err, TSF_ENOMEM, "writer: out of memory (device)");
}

/*
 * Splits a tree device path into v4 segments (§10.2): nodes split at '.' outside back quotes;
 * 1 node -> [root]; 2-3 nodes -> [nodes 0..n-2 joined, last]; 4+ -> [nodes 0..2 joined, rest].
 * `buf` (strlen(path)+1 bytes) receives the segment text.
 */
tsf_status tsf_w_split_path(tsf_writer *w, const char *path, tsf_mi_seg *segs, size_t *nsegs, char *buf,
                            tsf_error *err)
{
    (void)w;
    size_t n = strlen(path);
    size_t starts[TSF_W_MAX_SEGS + 3], lens[TSF_W_MAX_SEGS + 3];
    size_t nn = 0, i = 0;
    while (i <= n) {
        size_t st = i;
        int q = 0;
        while (i < n && (q || path[i] != '.')) {
            if (path[i] == '`') q = !q;
            i++;
        }
        if (q) return tsf_err(err, TSF_EINVAL, "device path '%s': unbalanced back quote", path);
        if (i == st) return tsf_err(err, TSF_EINVAL, "device path '%s': empty node at byte %zu", path, st);
        if (nn == TSF_W_MAX_SEGS + 2) return tsf_err(err, TSF_EINVAL, "device path '%s': too many levels", path);
        starts[nn] = st;
        lens[nn] = i - st;
        nn++;
        i++;
    }
    if (lens[0] != 4 || memcmp(path, "root", 4) != 0)
        return tsf_err(err, TSF_EINVAL, "device path '%s': a tree path must start with 'root'", path);
    memcpy(buf, path, n + 1);
    size_t head = nn == 1 ? 1 : nn <= 3 ? nn - 1 : 3;
    segs[0].data = buf;
    segs[0].len = starts[head - 1] + lens[head - 1];
    size_t k = 1;
    for (size_t j = head; j < nn; j++, k++) {
        segs[k].data = buf + starts[j];
        segs[k].len = lens[j];
    }
    *nsegs = k;
    return TSF_OK;
}

int tsf_w_table_index(const tsf_writer *w, const char *name)
{
    for (size_t i = 0; i < w->ntables; i++)
        if (strcasecmp(w->tables[i].name, name) == 0) return (int)i;
    return -1;
}

/* ---- registration ------------------------------------------------------------------------- */

static tsf_status check_live(tsf_writer *w, const char *fn, tsf_error *err)
{
    if (!w) return tsf_err(err, TSF_EINVAL, "%s: writer is NULL", fn);
    if (w->closed) return tsf_err(err, TSF_ESTATE, "%s: writer is closed", fn);
    if (w->failed) return tsf_err(err, TSF_EIO, "%s: an earlier output error stopped this writer", fn);
    tsf_status s = tsf_w_settle(w, err); /* registration may move columns the workers use */
    return s ? s : tsf_w_out_wait(w, err);
}

static tsf_status check_column(const tsf_column_schema *c, const char *where, tsf_error *err)
{
    if (!c || !c->name || !*c->name) return tsf_err(err, TSF_EINVAL, "%s: column name is NULL or empty", where);
    for (const char *p = c->name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '.')
            return tsf_err(err, TSF_EINVAL, "%s: invalid character in column name '%s'", where, c->name);
    if (strlen(c->name) > 4096) return tsf_err(err, TSF_EINVAL, "%s: column name too long", where);
    const char *tn = tsf_type_name(c->type);
    if (!tn || c->type == TSF_VECTOR)
        return tsf_err(err, TSF_EINVAL, "%s: column '%s' has an invalid type %d", where, c->name, (int)c->type);
    if (c->encoding != TSF_ENCODING_AUTO && !tsf_codec_can_encode(c->type, c->encoding))
        return tsf_err(err, TSF_EINVAL, "%s: encoding %s is not legal (or not available) for %s column '%s'", where,
                       tsf_encoding_name(c->encoding) ? tsf_encoding_name(c->encoding) : "?", tn, c->name);
    if (!tsf_compression_supported(c->compression))
        return tsf_err(err, TSF_EINVAL, "%s: compression %d is not supported (column '%s')", where, (int)c->compression,
                       c->name);
    return TSF_OK;
}

static tsf_status device_add_col(tsf_writer *w, wdevice *d, const tsf_column_schema *c, tsf_error *err)
{
    for (size_t i = 0; i < d->ncols; i++)
        if (strcmp(d->cols[i].name, c->name) == 0)
            return tsf_err(err, TSF_EINVAL, "writer: series %s.%s is already registered", d->path, c->name);
    if (d->ncols == d->ccap) {
        size_t nc = d->ccap ? d->ccap * 2 : 4;
        wcol *ncols = tsf_realloc(w->alloc, d->cols, d->ccap * sizeof *ncols, nc * sizeof *ncols);
        if (!ncols) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
        d->cols = ncols;
        d->ccap = nc;
    }
    tsf_status s = tsf_wcol_init(w, &d->cols[d->ncols], c->name, strlen(c->name), c->type, c->encoding,
                                 c->compression, d->aligned ? 0x40 : 0, err);
    if (s) return s;
    d->cols[d->ncols++].dev = d;
    return TSF_OK;
}

static tsf_status tree_device(tsf_writer *w, const char *device, int aligned, int create, wdevice **out,
                              tsf_error *err)
{
    if (!device || !*device) return tsf_err(err, TSF_EINVAL, "writer: device path is NULL or empty");
    size_t n = strlen(device);
    char stackbuf[256];
    char *buf = n < sizeof stackbuf ? stackbuf : tsf_alloc(w->alloc, n + 1);
    if (!buf) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
    tsf_mi_seg segs[TSF_W_MAX_SEGS + 3];
    size_t ns;
    tsf_status s = tsf_w_split_path(w, device, segs, &ns, buf, err);
    if (!s) {
        wdevice *d = tsf_w_find_device(w, segs, ns, NULL);
        if (d) {
            if (d->table >= 0)
                s = tsf_err(err, TSF_EINVAL, "writer: '%s' is a table device", device);
            else if (create && d->aligned != aligned)
                s = tsf_err(err, TSF_EINVAL, "writer: device %s is already registered as %saligned", device,
                            d->aligned ? "" : "non-");
            *out = d;
        } else if (!create) {
            s = tsf_err(err, TSF_ENOTFOUND, "writer: unknown device %s", device);
        } else {
            s = tsf_w_add_device(w, segs, ns, aligned, -1, out, err);
        }
    }
    if (buf != stackbuf) tsf_free(w->alloc, buf, n + 1);
    return s;
}

tsf_status tsf_writer_register_series(tsf_writer *w, const char *device, const tsf_column_schema *col,
                                      tsf_error *err)
{
    tsf_status s = check_live(w, "tsf_writer_register_series", err);
    if (s) return s;
    if ((s = check_column(col, "tsf_writer_register_series", err))) return s;
    wdevice *d;
    if ((s = tree_device(w, device, 0, 1, &d, err))) return s;
    return device_add_col(w, d, col, err);
}

tsf_status tsf_writer_register_aligned(tsf_writer *w, const char *device, const tsf_column_schema *cols,
                                       size_t ncols, tsf_error *err)
{
    tsf_status s = check_live(w, "tsf_writer_register_aligned", err);
    if (s) return s;
    if (!cols && ncols) return tsf_err(err, TSF_EINVAL, "tsf_writer_register_aligned: cols is NULL");
    for (size_t i = 0; i < ncols; i++)
        if ((s = check_column(&cols[i], "tsf_writer_register_aligned", err))) return s;
    wdevice *d;
    if ((s = tree_device(w, device, 1, 1, &d, err))) return s;
    if (d->has_time || d->dirty)
        return tsf_err(err, TSF_ESTATE, "tsf_writer_register_aligned: device %s already has data", device);
    for (size_t i = 0; i < ncols; i++)
        if ((s = device_add_col(w, d, &cols[i], err))) return s;
    return TSF_OK;
}

static void table_free(tsf_writer *w, wtable *t)
{
    if (t->name) tsf_free(w->alloc, t->name, strlen(t->name) + 1);
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].name) tsf_free(w->alloc, (void *)t->cols[i].name, strlen(t->cols[i].name) + 1);
    if (t->cols) tsf_free(w->alloc, t->cols, t->ncols * sizeof *t->cols);
    if (t->tag_idx) tsf_free(w->alloc, t->tag_idx, t->ncols * sizeof(size_t));
    if (t->field_idx) tsf_free(w->alloc, t->field_idx, t->ncols * sizeof(size_t));
}

static char *lowerdup(const tsf_allocator *a, const char *s)
{
    size_t n = strlen(s);
    char *d = dupstr(a, s, n);
    if (d)
        for (size_t i = 0; i < n; i++)
            if (d[i] >= 'A' && d[i] <= 'Z') d[i] = (char)(d[i] - 'A' + 'a');
    return d;
}

tsf_status tsf_writer_register_table(tsf_writer *w, const char *table, const tsf_column_schema *cols, size_t ncols,
                                     tsf_error *err)
{
    tsf_status s = check_live(w, "tsf_writer_register_table", err);
    if (s) return s;
    if (!table || !*table) return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: table name is NULL or empty");
    for (const char *p = table; *p; p++)
        if ((unsigned char)*p < 0x20)
            return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: invalid character in table name");
    if (strncmp(table, "root.", 5) == 0 || strcmp(table, "root") == 0)
        return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: table name '%s' would read as a tree path", table);
    if (tsf_w_table_index(w, table) >= 0)
        return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: table '%s' is already registered", table);
    if (!cols || !ncols) return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: table '%s' has no columns", table);
    size_t nfields = 0;
    for (size_t i = 0; i < ncols; i++) {
        if ((s = check_column(&cols[i], "tsf_writer_register_table", err))) return s;
        if ((unsigned)cols[i].category > TSF_COLUMN_ATTRIBUTE)
            return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: column '%s' has an invalid category %d",
                           cols[i].name, (int)cols[i].category);
        if (cols[i].category == TSF_COLUMN_TAG && cols[i].type != TSF_STRING)
            return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: TAG column '%s' must be STRING", cols[i].name);
        if (cols[i].category == TSF_COLUMN_FIELD) nfields++;
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(cols[i].name, cols[j].name) == 0)
                return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: duplicate column '%s'", cols[i].name);
    }
    if (!nfields) return tsf_err(err, TSF_EINVAL, "tsf_writer_register_table: table '%s' has no FIELD column", table);
    if (w->ntables == w->tcap) {
        size_t nc = w->tcap ? w->tcap * 2 : 4;
        wtable *nt = tsf_realloc(w->alloc, w->tables, w->tcap * sizeof *nt, nc * sizeof *nt);
        if (!nt) return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
        w->tables = nt;
        w->tcap = nc;
    }
    wtable *t = &w->tables[w->ntables];
    memset(t, 0, sizeof *t);
    t->name = lowerdup(w->alloc, table);
    t->cols = tsf_calloc(w->alloc, ncols, sizeof *t->cols);
    t->tag_idx = tsf_calloc(w->alloc, ncols, sizeof(size_t));
    t->field_idx = tsf_calloc(w->alloc, ncols, sizeof(size_t));
    t->ncols = ncols;
    if (!t->name || !t->cols || !t->tag_idx || !t->field_idx) goto oom;
    for (size_t i = 0; i < ncols; i++) {
        t->cols[i].name = lowerdup(w->alloc, cols[i].name);
        if (!t->cols[i].name) goto oom;
        t->cols[i].data_type = (uint8_t)cols[i].type;
        t->cols[i].encoding = (uint8_t)cols[i].encoding;
        t->cols[i].compression = (uint8_t)cols[i].compression;
        t->cols[i].category = (int32_t)cols[i].category;
        if (cols[i].category == TSF_COLUMN_TAG) t->tag_idx[t->ntags++] = i;
        if (cols[i].category == TSF_COLUMN_FIELD) t->field_idx[t->nfields++] = i;
    }
    w->ntables++;
    return TSF_OK;
oom:
    table_free(w, t);
    return tsf_err(err, TSF_ENOMEM, "writer: out of memory");
}

/* ---- close -------------------------------------------------------------------------------- */

static tsf_status index_sink(void *ud, const uint8_t *data, size_t len, tsf_error *err)
{
    return tsf_w_out((tsf_writer *)ud, data, len, err);
}

static tsf_status write_index(tsf_writer *w, tsf_error *err)
{
    tsf_status s = TSF_OK;
    size_t nser = 0, ndev = 0;
    for (size_t i = 0; i < w->ndevs; i++) {
        wdevice *d = w->devs[i];
        size_t k = 0;
        for (size_t j = 0; j < d->ncols; j++) k += d->cols[j].nchunks > 0;
        if (d->aligned && d->tcol.nchunks) k++;
        nser += k;
        ndev += k > 0;
    }
    tsf_mi_device *devs = tsf_calloc(w->alloc, ndev ? ndev : 1, sizeof *devs);
    tsf_mi_series *ser = tsf_calloc(w->alloc, nser ? nser : 1, sizeof *ser);
    size_t *soff = tsf_calloc(w->alloc, nser ? nser : 1, sizeof *soff);
    tsf_mi_table *tabs = tsf_calloc(w->alloc, w->ntables ? w->ntables : 1, sizeof *tabs);
    tsf_wbuf sb;
    tsf_wbuf_init(&sb, w->alloc);
    if (!devs || !ser || !soff || !tabs) {
        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory (index)");
        goto done;
    }
    size_t si = 0, di = 0;
    for (size_t i = 0; i < w->ndevs; i++) {
        wdevice *d = w->devs[i];
        size_t first = si;
        for (size_t j = 0; j < d->ncols + (size_t)(d->aligned ? 1 : 0); j++) {
            wcol *c = j < d->ncols ? &d->cols[j] : &d->tcol;
            if (!c->nchunks) continue;
            tsf_mi_series *x = &ser[si];
            x->name = c->name;
            x->name_len = c->name_len;
            x->meta_type = (uint8_t)((c->nchunks > 1 ? 1 : 0) | c->mask);
            x->data_type = (uint8_t)c->type;
            soff[si] = sb.len;
            tsf_wstats_serialize(&c->sstat, &sb);
            x->stats_len = sb.len - soff[si];
            x->chunks = c->cmeta.p;
            x->chunks_len = c->nchunks > 1 ? c->cmeta.len : 8;
            x->nchunks = c->nchunks;
            si++;
        }
        if (si > first) {
            devs[di].segs = d->segs;
            devs[di].nsegs = d->nsegs;
            devs[di].series = &ser[first];
            devs[di].nseries = si - first;
            di++;
        }
    }
    if (sb.oom) {
        s = tsf_err(err, TSF_ENOMEM, "writer: out of memory (index)");
        goto done;
    }
    for (size_t i = 0; i < si; i++) ser[i].stats = sb.p + soff[i];
    for (size_t i = 0; i < w->ntables; i++) {
        tsf_wauto_schema(w->tables[i].cols, w->tables[i].ncols); /* AUTO is not an on-disk code */
        tabs[i].name = w->tables[i].name;
        tabs[i].columns = w->tables[i].cols;
        tabs[i].ncolumns = w->tables[i].ncols;
    }
    tsf_mi_input in = {devs, di, tabs, w->ntables, w->opt.max_index_degree, w->opt.bloom_error_rate, w->alloc};
    s = tsf_meta_index_write(&in, tsf_w_pos(w), index_sink, w, NULL, err);
done:
    if (devs) tsf_free(w->alloc, devs, (ndev ? ndev : 1) * sizeof *devs);
    if (ser) tsf_free(w->alloc, ser, (nser ? nser : 1) * sizeof *ser);
    if (soff) tsf_free(w->alloc, soff, (nser ? nser : 1) * sizeof *soff);
    if (tabs) tsf_free(w->alloc, tabs, (w->ntables ? w->ntables : 1) * sizeof *tabs);
    tsf_wbuf_free(&sb);
    return s;
}

static void writer_free(tsf_writer *w)
{
    tsf_w_pool_stop(w); /* after the pending output */
    if (w->row_tablet) tsf_tablet_free(w->row_tablet);
    if (w->row_target) tsf_free(w->alloc, w->row_target, strlen(w->row_target) + 1);
    for (size_t i = 0; i < w->ndevs; i++) device_free(w, w->devs[i]);
    if (w->devs) tsf_free(w->alloc, w->devs, w->dcap * sizeof *w->devs);
    if (w->map) tsf_free(w->alloc, w->map, w->mapcap * sizeof *w->map);
    for (size_t i = 0; i < w->ntables; i++) table_free(w, &w->tables[i]);
    if (w->tables) tsf_free(w->alloc, w->tables, w->tcap * sizeof *w->tables);
    tsf_wbuf_free(&w->out);
    tsf_wbuf_free(&w->scratch);
    tsf_wbuf_free(&w->scratch2);
    tsf_wctx_free(&w->ctx);
    for (size_t i = 0; i < w->nwk; i++) tsf_wctx_free(&w->wk[i]);
    if (w->wk) tsf_free(w->alloc, w->wk, (w->opt.threads > 64 ? 63 : w->opt.threads - 1) * sizeof *w->wk);
    if (w->codec) tsf_codec_close(w->codec);
    tsf_bpool_free(&w->bodies); /* after every column and context */
    tsf_wpix_free(w);
    if (w->fd >= 0) close(w->fd);
    if (w->path) tsf_free(w->alloc, w->path, strlen(w->path) + 1);
    if (w->tmp_path) tsf_free(w->alloc, w->tmp_path, w->tmp_cap);
    const tsf_allocator *a = w->alloc;
    tsf_allocator copy;
    if (a) {
        copy = *a;
        a = &copy;
    }
    tsf_free(a, w, sizeof *w);
}

void tsf_writer_abort(tsf_writer *w)
{
    if (!w) return;
    tsf_error e;
    (void)tsf_w_settle(w, &e);     /* the last tablet's tail and its budget flush, as one thread did them */
    (void)tsf_w_out_wait(w, NULL); /* the output thread's chunk groups, then the buffer: they stay on disk */
    if (!w->failed && !w->closed) (void)out_flush(w, NULL);
    writer_free(w);
}

tsf_status tsf_writer_close(tsf_writer *w, tsf_error *err)
{
    if (!w) return tsf_err(err, TSF_EINVAL, "tsf_writer_close: writer is NULL");
    tsf_status s = w->failed ? tsf_err(err, TSF_EIO, "tsf_writer_close: an earlier output error stopped this writer")
                             : TSF_OK;
    if (!s) s = tsf_w_settle(w, err);
    if (!s) s = tsf_w_flush_all(w, err);
    uint64_t data_end = tsf_w_pos(w);
    if (!s) s = write_index(w, err);
    if (!s) s = out_flush(w, err);
    if (!s && w->opt.fsync) {
        if (w->use_cb) {
            if (w->cb.sync && w->cb.sync(w->cb.ud) != 0) s = tsf_err(err, TSF_EIO, "tsf_writer_close: sync callback failed");
        } else if (fsync(w->fd) != 0) {
            s = tsf_err(err, TSF_EIO, "tsf_writer_close: fsync failed: %s", strerror(errno));
        }
    }
    if (!s && w->fd >= 0) {
        int r = close(w->fd);
        w->fd = -1;
        if (r != 0) s = tsf_err(err, TSF_EIO, "tsf_writer_close: close failed: %s", strerror(errno));
    }
    if (!s && w->tmp_path) {
        if (rename(w->tmp_path, w->path) != 0)
            s = tsf_err(err, TSF_EIO, "tsf_writer_close: rename %s -> %s failed: %s", w->tmp_path, w->path,
                        strerror(errno));
        else if (w->opt.fsync)
            s = tsf_sync_dir("tsf_writer_close", w->path, err);
    }
    if (!s && w->pix) { /* <path>.tsfidx of the finished file (writer_pix.c, doc/reader.md) */
        s = tsf_wpix_write(w, data_end, err);
        if (s == TSF_ENOTSUP) s = TSF_OK; /* spans too wide for the key layout: queries use the metadata */
    }
    if (!s) s = tsf_w_refusal(w, err); /* the file is complete; a page refused since the last call */
    w->closed = 1;
    writer_free(w);
    return s;
}
