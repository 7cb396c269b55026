/*
 * recover.c - tsf_recover: makes a readable TsFile out of a crashed one (no index,
 * no tail: a killed writer's temporary, cut at any byte) or a complete one with damaged chunks.
 *
 * The data area is scanned as tsf_verify scans it (verify_scan.h): every chunk whose header and pages
 * are wholly present and decode is kept (an aligned value chunk also needs its group's time chunk);
 * chunk groups are kept with their good chunks. Unlike the Java reference, which keeps a chunk group
 * only once a later marker follows it, the last complete group is kept too. The kept bytes are copied
 * unchanged into a new file (head, chunk group headers, chunks) and the index area is written by the
 * writer's own index writer (src/format/index.h: TimeseriesMetadata, index tree, bloom filter,
 * TsFileMetadata, tail; format version 4, tsfile-container-format.md §8-§9, §2) from ChunkMetadata
 * whose statistics are recomputed from the decoded values and merged as the writer merges them.
 * Table schemas are kept when the input still has a readable TsFileMetadata; a crashed table-model
 * file has none left, so its devices come back as tree-model devices of the same names.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/meta_index.h"
#include "../common/bytes.h"
#include "../common/tmpfile.h"
#include "verify_scan.h"

/* Buffered output file. */
typedef struct rc_out {
    int fd;
    const char *path;
    tsf_wbuf buf;
    uint64_t pos;
} rc_out;

static tsf_status rc_flush(rc_out *o, tsf_error *err)
{
    size_t done = 0;
    while (done < o->buf.len) {
        ssize_t n = write(o->fd, o->buf.p + done, o->buf.len - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return tsf_err(err, TSF_EIO, "recover: write to %s failed: %s", o->path, strerror(errno));
        }
        done += (size_t)n;
    }
    o->buf.len = 0;
    return TSF_OK;
}

static tsf_status rc_put(rc_out *o, const void *p, size_t n, tsf_error *err)
{
    tsf_status st;
    if (o->buf.len + n > (1u << 20) && (st = rc_flush(o, err))) return st;
    o->pos += n;
    if (n >= (1u << 20)) { /* large chunks go straight out */
        size_t done = 0;
        while (done < n) {
            ssize_t k = write(o->fd, (const uint8_t *)p + done, n - done);
            if (k < 0) {
                if (errno == EINTR) continue;
                return tsf_err(err, TSF_EIO, "recover: write to %s failed: %s", o->path, strerror(errno));
            }
            done += (size_t)k;
        }
        return TSF_OK;
    }
    tsf_wbuf_put(&o->buf, p, n);
    return o->buf.oom ? tsf_err(err, TSF_ENOMEM, "recover: out of memory") : TSF_OK;
}

static tsf_status rc_sink(void *ud, const uint8_t *data, size_t len, tsf_error *err)
{
    return rc_put(ud, data, len, err);
}

/* ---- devices -------------------------------------------------------------------------------- */

typedef struct rc_dev {
    const uint8_t *raw; /* serialized device id (from a chunk group header) */
    size_t raw_len;
    size_t group; /* first group of the device */
} rc_dev;

static uint64_t rc_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Numbers the devices of the chunks (c->dev); *ndev receives the count. */
static tsf_status rc_devices(const tsf_allocator *a, tsf_vs_scan *s, rc_dev **out,
                             size_t *ndev, tsf_error *err)
{
    size_t cap = 16;
    while (cap < s->ngroups * 2) cap *= 2;
    size_t *map = tsf_alloc(a, cap * sizeof *map);
    rc_dev *devs = tsf_calloc(a, s->ngroups ? s->ngroups : 1, sizeof *devs);
    if (!map || !devs) {
        tsf_free(a, map, cap * sizeof *map);
        tsf_free(a, devs, (s->ngroups ? s->ngroups : 1) * sizeof *devs);
        return tsf_err(err, TSF_ENOMEM, "recover: out of memory");
    }
    for (size_t i = 0; i < cap; i++) map[i] = SIZE_MAX;
    size_t n = 0;
    for (size_t g = 0; g < s->ngroups; g++) {
        const tsf_vs_group *gr = &s->groups[g];
        size_t h = (size_t)rc_hash(gr->dev.raw, gr->dev.raw_len) & (cap - 1);
        while (map[h] != SIZE_MAX) {
            const rc_dev *d = &devs[map[h]];
            if (d->raw_len == gr->dev.raw_len && !memcmp(d->raw, gr->dev.raw, d->raw_len)) break;
            h = (h + 1) & (cap - 1);
        }
        if (map[h] == SIZE_MAX) {
            map[h] = n;
            devs[n].raw = gr->dev.raw;
            devs[n].raw_len = gr->dev.raw_len;
            devs[n].group = g;
            n++;
        }
        for (size_t k = 0; k < gr->nchunks; k++) s->chunks[gr->chunk0 + k].dev = map[h];
    }
    tsf_free(a, map, cap * sizeof *map);
    *out = devs;
    *ndev = n;
    return TSF_OK;
}

/* Sort order of kept chunks: device, measurement, file offset (qsort context through a static-free
 * wrapper: the chunk array pointer travels in each element). */
typedef struct rc_ref {
    const tsf_vs_chunk *c;
    size_t idx;
} rc_ref;

static int rc_ref_cmp(const void *x, const void *y)
{
    const tsf_vs_chunk *a = ((const rc_ref *)x)->c, *b = ((const rc_ref *)y)->c;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    int c = tsf_mi_str_cmp((const char *)a->h.measurement.data, a->h.measurement.len,
                           (const char *)b->h.measurement.data, b->h.measurement.len);
    if (c) return c;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int same_series(const tsf_vs_chunk *a, const tsf_vs_chunk *b)
{
    return a->dev == b->dev && a->h.measurement.len == b->h.measurement.len &&
           !memcmp(a->h.measurement.data, b->h.measurement.data, a->h.measurement.len);
}

/* Table schemas of the input's TsFileMetadata (names copied NUL-terminated into pool). */
typedef struct rc_tables {
    tsf_mi_table *t;
    size_t n;
    tsf_mi_column *cols;
    size_t ncols;
    char *pool;
    size_t pool_len;
} rc_tables;

static void rc_tables_free(const tsf_allocator *a, rc_tables *t)
{
    tsf_free(a, t->t, (t->n ? t->n : 1) * sizeof *t->t);
    tsf_free(a, t->cols, (t->ncols ? t->ncols : 1) * sizeof *t->cols);
    tsf_free(a, t->pool, t->pool_len ? t->pool_len : 1);
    memset(t, 0, sizeof *t);
}

/* Reads the schemas; any damage there just means no schemas (the data stays readable). */
static tsf_status rc_schemas(const tsf_allocator *a, const tsf_mip_file_meta *fm, rc_tables *out,
                             tsf_error *err)
{
    memset(out, 0, sizeof *out);
    size_t pos = 0, ncols = 0, pool = 0;
    tsf_fmt_str name;
    uint32_t nc;
    for (uint32_t i = 0; i < fm->nschemas; i++) { /* sizing pass */
        if (tsf_mip_next_schema(fm, &pos, &name, &nc, NULL)) return TSF_OK;
        pool += name.len + 1;
        for (uint32_t k = 0; k < nc; k++) {
            tsf_mip_column col;
            if (tsf_mip_next_column(fm, &pos, &col, NULL)) return TSF_OK;
            pool += col.name_len + 1;
        }
        ncols += nc;
    }
    out->t = tsf_calloc(a, fm->nschemas ? fm->nschemas : 1, sizeof *out->t);
    out->cols = tsf_calloc(a, ncols ? ncols : 1, sizeof *out->cols);
    out->pool = tsf_alloc(a, pool ? pool : 1);
    out->ncols = ncols;
    out->pool_len = pool;
    out->n = fm->nschemas;
    if (!out->t || !out->cols || !out->pool) {
        rc_tables_free(a, out);
        return tsf_err(err, TSF_ENOMEM, "recover: out of memory");
    }
    pos = 0;
    size_t pp = 0, ci = 0;
    for (uint32_t i = 0; i < fm->nschemas; i++) {
        tsf_mip_next_schema(fm, &pos, &name, &nc, NULL);
        memcpy(out->pool + pp, name.data, name.len);
        out->pool[pp + name.len] = 0;
        out->t[i].name = out->pool + pp;
        pp += name.len + 1;
        out->t[i].columns = out->cols + ci;
        out->t[i].ncolumns = nc;
        for (uint32_t k = 0; k < nc; k++, ci++) {
            tsf_mip_column col;
            tsf_mip_next_column(fm, &pos, &col, NULL);
            memcpy(out->pool + pp, col.name, col.name_len);
            out->pool[pp + col.name_len] = 0;
            out->cols[ci].name = out->pool + pp;
            out->cols[ci].data_type = col.data_type;
            out->cols[ci].encoding = col.encoding;
            out->cols[ci].compression = col.compression;
            out->cols[ci].category = col.category;
            pp += col.name_len + 1;
        }
    }
    return TSF_OK;
}

/* ---- index ---------------------------------------------------------------------------------- */

/* Builds the index input from the kept chunks (refs sorted by device, measurement, offset) and writes it. */
static tsf_status rc_index(const tsf_allocator *a, tsf_vs_scan *s, const rc_ref *refs, size_t nrefs,
                           const rc_dev *devs, size_t ndev, const rc_tables *tabs, rc_out *o, tsf_error *err)
{
    tsf_status st = TSF_OK;
    size_t nser = 0;
    for (size_t i = 0; i < nrefs; i++) nser += i == 0 || !same_series(refs[i - 1].c, refs[i].c);
    size_t nsegs_all = 0;
    for (size_t d = 0; d < ndev; d++) nsegs_all += s->groups[devs[d].group].dev.nseg;
    tsf_mi_series *ser = tsf_calloc(a, nser ? nser : 1, sizeof *ser);
    tsf_mi_device *ixd = tsf_calloc(a, ndev ? ndev : 1, sizeof *ixd);
    tsf_mi_seg *segs = tsf_calloc(a, nsegs_all ? nsegs_all : 1, sizeof *segs);
    size_t *soff = tsf_calloc(a, nser ? nser : 1, 2 * sizeof *soff);
    tsf_wbuf sb, cb;
    tsf_wbuf_init(&sb, a);
    tsf_wbuf_init(&cb, a);
    tsf_wstats sum;
    memset(&sum, 0, sizeof sum);
    if (!ser || !ixd || !segs || !soff) {
        st = tsf_err(err, TSF_ENOMEM, "recover: out of memory");
        goto done;
    }
    size_t si = 0, di = 0, gi = 0;
    for (size_t i = 0; i < nrefs;) {
        const tsf_vs_chunk *c0 = refs[i].c;
        size_t j = i;
        while (j < nrefs && same_series(c0, refs[j].c)) j++;
        /* series [i, j) */
        tsf_mi_series *x = &ser[si];
        x->name = (const char *)c0->h.measurement.data;
        x->name_len = c0->h.measurement.len;
        x->nchunks = (uint32_t)(j - i);
        x->meta_type = (uint8_t)((j - i > 1 ? 1 : 0) | (c0->kind == TSF_CHUNK_TIME    ? 0x80
                                                        : c0->kind == TSF_CHUNK_VALUE ? 0x40
                                                                                      : 0));
        x->data_type = (uint8_t)c0->h.data_type;
        tsf_wstats_free(&sum, a);
        tsf_wstats_init(&sum, c0->h.data_type);
        soff[2 * si + 1] = cb.len;
        for (size_t k = i; k < j; k++) {
            const tsf_vs_chunk *c = refs[k].c;
            tsf_fmt_put_chunk_meta(&cb, c->new_off, &c->stats);
            tsf_wstats_merge(&sum, &c->stats, a);
        }
        x->chunks_len = j - i > 1 ? cb.len - soff[2 * si + 1] : 8;
        soff[2 * si] = sb.len;
        tsf_wstats_serialize(&sum, &sb);
        x->stats_len = sb.len - soff[2 * si];
        if (sum.oom || sb.oom || cb.oom) {
            st = tsf_err(err, TSF_ENOMEM, "recover: out of memory");
            goto done;
        }
        if (i == 0 || refs[i - 1].c->dev != c0->dev) { /* a new device */
            const tsf_fmt_device_id *id = &s->groups[devs[c0->dev].group].dev;
            tsf_mi_device *dv = &ixd[di++];
            dv->segs = segs + gi;
            dv->nsegs = id->nseg;
            for (uint32_t q = 0; q < id->nseg; q++) {
                tsf_fmt_str sg = tsf_fmt_device_segment(id, q);
                segs[gi].data = sg.is_null ? NULL : (const char *)sg.data;
                segs[gi].len = sg.len;
                gi++;
            }
            dv->series = x;
        }
        ixd[di - 1].nseries++;
        si++;
        i = j;
    }
    for (size_t k = 0; k < si; k++) {
        ser[k].stats = sb.p + soff[2 * k];
        ser[k].chunks = cb.p + soff[2 * k + 1];
    }
    tsf_mi_input in = {ixd, di, tabs->t, tabs->n, 256, 0.05, a};
    st = tsf_meta_index_write(&in, o->pos, rc_sink, o, NULL, err);
done:
    tsf_wstats_free(&sum, a);
    tsf_wbuf_free(&sb);
    tsf_wbuf_free(&cb);
    tsf_free(a, ser, (nser ? nser : 1) * sizeof *ser);
    tsf_free(a, ixd, (ndev ? ndev : 1) * sizeof *ixd);
    tsf_free(a, segs, (nsegs_all ? nsegs_all : 1) * sizeof *segs);
    tsf_free(a, soff, (nser ? nser : 1) * 2 * sizeof *soff);
    return st;
}

/* ---- notes ---------------------------------------------------------------------------------- */

typedef struct rc_notes {
    void (*fn)(void *ctx, const tsf_problem *note);
    void *ctx;
    uint64_t n;
} rc_notes;

static void rc_note(rc_notes *nt, uint64_t off, const char *fmt, ...) TSF_PRINTF(3, 4);
static void rc_note(rc_notes *nt, uint64_t off, const char *fmt, ...)
{
    nt->n++;
    if (!nt->fn) return;
    char msg[TSF_ERROR_MESSAGE_SIZE * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tsf_problem p = {off, msg, 0};
    nt->fn(nt->ctx, &p);
}

/* What the scan finds wrong (why a chunk is dropped) becomes a note; warnings do not concern recovery. */
static void rc_scan_problem(void *ctx, uint64_t off, const char *msg, int warning)
{
    if (!warning) rc_note(ctx, off, "%s", msg);
}

/* "<device>.<measurement>" of chunk c into buf. */
static const char *rc_name(const tsf_vs_scan *s, const tsf_vs_chunk *c, char *buf, size_t cap)
{
    size_t n = tsf_fmt_device_to_string(&s->groups[c->group].dev, buf, cap);
    if (n + 1 < cap)
        snprintf(buf + n, cap - n, ".%.*s", (int)c->h.measurement.len, (const char *)c->h.measurement.data);
    return buf;
}

/* ---- output chunks -------------------------------------------------------------------------- */

static tsf_status rc_put_header(rc_out *o, const tsf_fmt_chunk_header *h, tsf_error *err)
{
    size_t cap = h->measurement.len + 32, used = 0;
    uint8_t *b = tsf_alloc(NULL, cap);
    if (!b) return tsf_err(err, TSF_ENOMEM, "recover: out of memory");
    tsf_status st = tsf_fmt_write_chunk_header(h, b, cap, &used, err);
    if (!st) st = rc_put(o, b, used, err);
    tsf_free(NULL, b, cap);
    return st;
}

/* Writes chunk c with its pages' statistics replaced by those recomputed from their values (s->pstats). */
static tsf_status rc_put_restat(rc_out *o, const tsf_vs_scan *s, const tsf_vs_chunk *c, tsf_error *err)
{
    tsf_wbuf pages;
    tsf_wbuf_init(&pages, NULL);
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    tsf_status st;
    size_t sp = c->pstats_off;
    tsf_walk_init_at(&w, s->file, (size_t)c->end, s->version, c->offset);
    while ((st = tsf_walk_next(&w, &it, &e)) == TSF_OK && it.kind != TSF_WALK_END) {
        if (it.kind != TSF_WALK_PAGE) continue;
        tsf_fmt_page_header ph = {.uncompressed_size = it.page.uncompressed_size,
                                  .compressed_size = it.page.compressed_size};
        uint8_t hb[2 * TSF_UVARINT32_MAX];
        size_t hl = 0;
        if ((st = tsf_fmt_write_page_header(&ph, hb, sizeof hb, &hl, &e))) break;
        tsf_wbuf_put(&pages, hb, hl);
        if (it.page.uncompressed_size) {
            if (it.page.has_stats) {
                if (sp + 4 > s->pstats.len) break;
                const uint8_t *q = s->pstats.p + sp;
                size_t n = (size_t)q[0] << 24 | (size_t)q[1] << 16 | (size_t)q[2] << 8 | q[3];
                if (n > s->pstats.len - sp - 4) break;
                tsf_wbuf_put(&pages, q + 4, n);
                sp += 4 + n;
            }
            tsf_wbuf_put(&pages, it.body, it.body_len);
        }
        if (!w.in_chunk) break;
    }
    if (st == TSF_OK && (w.in_chunk || it.kind != TSF_WALK_PAGE))
        st = tsf_err(err, TSF_ECORRUPT, "recover: chunk at %llu changed while it was rewritten",
                     (unsigned long long)c->offset);
    else if (st)
        st = tsf_err(err, st, "recover: chunk at %llu: %s", (unsigned long long)c->offset, e.message);
    if (!st && pages.oom) st = tsf_err(err, TSF_ENOMEM, "recover: out of memory");
    if (!st && pages.len > INT32_MAX)
        st = tsf_err(err, TSF_ERANGE, "recover: chunk at %llu grows past 2 GiB", (unsigned long long)c->offset);
    if (!st) {
        tsf_fmt_chunk_header h = c->h;
        h.data_size = (uint32_t)pages.len;
        st = rc_put_header(o, &h, err);
    }
    if (!st) st = rc_put(o, pages.p, pages.len, err);
    tsf_wbuf_free(&pages);
    return st;
}

/* ---- aligned columns in step ---------------------------------------------------------------- */

/* Empty value chunks for the aligned columns that lack a chunk after a kept time chunk. */
typedef struct rc_fill {
    tsf_vs_chunk *c;
    size_t n, cap;
} rc_fill;

static tsf_status rc_fill_add(const tsf_allocator *a, rc_fill *f, const tsf_vs_chunk *tmpl, const tsf_vs_chunk *tc,
                              tsf_error *err)
{
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 16;
        tsf_vs_chunk *p = tsf_realloc(a, f->c, f->cap * sizeof *p, nc * sizeof *p);
        if (!p) return tsf_err(err, TSF_ENOMEM, "recover: out of memory");
        f->c = p;
        f->cap = nc;
    }
    tsf_vs_chunk *c = &f->c[f->n++];
    memset(c, 0, sizeof *c);
    c->group = tc->group;
    c->offset = c->end = tc->offset; /* sorts with its time chunk; written after that chunk's group part */
    c->h = tmpl->h;
    c->h.marker = (uint8_t)(0x05 | TSF_MARKER_VALUE_MASK);
    c->h.data_size = 0;
    c->kind = TSF_CHUNK_VALUE;
    c->ok = 1;
    c->dev = tc->dev;
    tsf_wstats_init(&c->stats, tmpl->h.data_type);
    return TSF_OK;
}

static int rc_fill_cmp(const void *x, const void *y)
{
    const tsf_vs_chunk *a = x, *b = y;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* ---- tsf_recover ---------------------------------------------------------------------------- */

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

void tsf_recover_options_init(tsf_recover_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

tsf_status tsf_recover(const char *in_path, const char *out_path, tsf_recover_report *report, tsf_error *err)
{
    return tsf_recover_with(in_path, out_path, NULL, report, err);
}

tsf_status tsf_recover_with(const char *in_path, const char *out_path, const tsf_recover_options *opts,
                            tsf_recover_report *report, tsf_error *err)
{
    if (!in_path || !out_path)
        return tsf_err(err, TSF_EINVAL, "tsf_recover: in_path and out_path are required");
    tsf_recover_options ro;
    tsf_recover_options_init(&ro);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof ro)
            return tsf_err(err, TSF_EINVAL, "tsf_recover_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&ro, opts, opts->struct_size);
    }
    if (same_file(in_path, out_path))
        return tsf_err(err, TSF_EINVAL, "tsf_recover: %s and %s are the same file", in_path, out_path);
    tsf_recover_report rep;
    memset(&rep, 0, sizeof rep);
    if (report) *report = rep;
    rc_notes notes = {ro.on_note, ro.ctx, 0};
    const tsf_allocator *a = NULL;
    const uint8_t *file;
    size_t len;
    tsf_status st = tsf_vs_map_file(in_path, &file, &len, err);
    if (st) return st;
    tsf_vs_scan s;
    tsf_reader *r = NULL;
    uint8_t *keep = NULL;
    size_t *seg = NULL;
    uint32_t *segvals = NULL;
    uint8_t *devval = NULL;
    rc_dev *devs = NULL;
    size_t ndev = 0;
    rc_ref *refs = NULL;
    size_t nrefs = 0, refs_cap = 0;
    rc_fill fill = {0};
    rc_tables tabs;
    memset(&tabs, 0, sizeof tabs);
    char nm[768];
    rc_out o = {-1, out_path, {0}, 0};
    tsf_tmp tmp = {NULL, 0, -1};
    tsf_wbuf_init(&o.buf, a);
    if ((st = tsf_vs_scan_init(&s, file, len, rc_scan_problem, &notes, err))) goto out;
    s.restat = 1;
    int version = 0;
    tsf_error e;
    if ((st = tsf_fmt_parse_head(file, len, &version, &e))) {
        st = tsf_err(err, st, "%s: cannot recover: %s", in_path, e.message);
        goto out;
    }
    if (version != TSF_FORMAT_VERSION) {
        st = tsf_err(err, TSF_ENOTSUP, "%s: recover supports format version 4 only (the file has %d)",
                     in_path, version);
        goto out;
    }
    size_t limit = len;
    rep.had_tail = tsf_fmt_is_complete(file, len);
    if (rep.had_tail && tsf_reader_open_memory(&r, file, len, NULL, NULL) == TSF_OK) {
        if (r->fm.meta_offset < len) limit = (size_t)r->fm.meta_offset + 1;
        if ((st = rc_schemas(a, &r->fm, &tabs, err))) goto out;
    }
    if ((st = tsf_vs_scan_run(&s, limit, err))) goto out;
    if (r && (st = tsf_vs_check_index(&s, r, err))) goto out; /* drops chunks that disagree with their metadata */
    uint64_t data_end = s.separator ? s.end : len;
    /* what to keep */
    keep = tsf_calloc(a, s.nchunks ? s.nchunks : 1, 1);
    seg = tsf_calloc(a, s.nchunks ? s.nchunks : 1, sizeof *seg);
    segvals = tsf_calloc(a, s.nchunks ? s.nchunks : 1, sizeof *segvals);
    if (!keep || !seg || !segvals) goto oom;
    for (size_t i = 0; i < s.nchunks; i++) keep[i] = (uint8_t)s.chunks[i].ok;
    if ((st = rc_devices(a, &s, &devs, &ndev, err))) goto out;
    /* an aligned value chunk belongs to the time chunk before it in its group (seg) and needs it kept */
    for (size_t g = 0; g < s.ngroups; g++) {
        size_t tc = SIZE_MAX;
        for (size_t k = s.groups[g].chunk0; k < s.groups[g].chunk0 + s.groups[g].nchunks; k++) {
            if (s.chunks[k].kind == TSF_CHUNK_TIME) tc = k;
            seg[k] = tc;
            if (s.chunks[k].kind == TSF_CHUNK_VALUE && keep[k] && (tc == SIZE_MAX || !keep[tc])) {
                keep[k] = 0;
                rc_note(&notes, s.chunks[k].offset, "%s: chunk at %llu dropped: its time chunk%s",
                        rc_name(&s, &s.chunks[k], nm, sizeof nm), (unsigned long long)s.chunks[k].offset,
                        tc == SIZE_MAX ? " is missing" : " is damaged");
            }
        }
    }
    /* a device stays aligned or not as its first kept chunk says (the reader cannot mix them) */
    devval = tsf_calloc(a, ndev ? ndev : 1, 1);
    if (!devval) goto oom;
    for (size_t i = 0; i < s.nchunks; i++) {
        if (!keep[i]) continue;
        uint8_t k = s.chunks[i].kind == TSF_CHUNK_NONALIGNED ? 1 : 2;
        if (!devval[s.chunks[i].dev]) devval[s.chunks[i].dev] = k;
        if (devval[s.chunks[i].dev] != k) {
            keep[i] = 0;
            rc_note(&notes, s.chunks[i].offset, "%s: chunk at %llu dropped: its device was %saligned before",
                    rc_name(&s, &s.chunks[i], nm, sizeof nm), (unsigned long long)s.chunks[i].offset,
                    k == 1 ? "" : "not ");
        }
    }
    for (size_t i = 0; i < s.nchunks; i++) nrefs += keep[i];
    refs_cap = nrefs ? nrefs : 1;
    refs = tsf_calloc(a, refs_cap, sizeof *refs);
    if (!refs) goto oom;
    nrefs = 0;
    for (size_t i = 0; i < s.nchunks; i++)
        if (keep[i]) refs[nrefs++] = (rc_ref){&s.chunks[i], i};
    qsort(refs, nrefs, sizeof *refs, rc_ref_cmp);
    /* a series keeps the kind and type of its first chunk (a later change is dropped, §21 #11), and an
     * aligned column one value chunk per time chunk (readers pair only the first with it) */
    size_t w = 0;
    memset(devval, 0, ndev ? ndev : 1);
    for (size_t i = 0, first = 0; i < nrefs; i++) {
        if (i == 0 || !same_series(refs[first].c, refs[i].c)) first = i;
        const tsf_vs_chunk *f = refs[first].c, *c = refs[i].c;
        int dup = w > 0 && i > first && c->kind == TSF_CHUNK_VALUE && seg[refs[w - 1].idx] == seg[refs[i].idx] &&
                  same_series(refs[w - 1].c, c);
        if (c->kind != f->kind || c->h.data_type != f->h.data_type || dup) {
            keep[refs[i].idx] = 0;
            rc_note(&notes, c->offset, "%s: chunk at %llu dropped: %s", rc_name(&s, c, nm, sizeof nm),
                    (unsigned long long)c->offset,
                    dup                    ? "a second chunk of the column for the same time chunk"
                    : c->kind != f->kind   ? "the series was a column of another kind before"
                                           : "the series had another data type before");
        } else {
            refs[w++] = refs[i];
            if (c->kind == TSF_CHUNK_VALUE) {
                segvals[seg[refs[i].idx]]++;
                devval[c->dev] = 1;
            }
        }
    }
    nrefs = w;
    /* a time chunk none of whose values were kept adds no row: dropped (an aligned device with columns) */
    w = 0;
    for (size_t i = 0; i < nrefs; i++) {
        const tsf_vs_chunk *c = refs[i].c;
        if (c->kind == TSF_CHUNK_TIME && devval[c->dev] && !segvals[refs[i].idx]) {
            keep[refs[i].idx] = 0;
            tsf_fmt_device_to_string(&s.groups[c->group].dev, nm, sizeof nm);
            rc_note(&notes, c->offset, "%s: time chunk at %llu dropped: none of its value chunks is whole (%llu rows)",
                    nm, (unsigned long long)c->offset, (unsigned long long)c->points);
        } else {
            refs[w++] = refs[i];
        }
    }
    nrefs = w;
    /* every value column of an aligned device gets one chunk per kept time chunk, an empty one where it has
     * none (readers pair the i-th ChunkMetadata of each column with the i-th of the time column) */
    for (size_t i = 0; i < nrefs;) {
        size_t t0 = i, t1 = i;
        while (t1 < nrefs && refs[t1].c->dev == refs[t0].c->dev && refs[t1].c->kind == TSF_CHUNK_TIME) t1++;
        size_t j = t1;
        while (j < nrefs && refs[j].c->dev == refs[t0].c->dev) {
            size_t v0 = j;
            while (j < nrefs && same_series(refs[v0].c, refs[j].c)) j++;
            if (refs[v0].c->kind != TSF_CHUNK_VALUE) continue;
            size_t p = v0;
            for (size_t k = t0; k < t1; k++) {
                while (p < j && s.chunks[seg[refs[p].idx]].offset < refs[k].c->offset) p++; /* none expected */
                if (p < j && seg[refs[p].idx] == refs[k].idx) {
                    p++;
                    continue;
                }
                const tsf_vs_chunk *tc = refs[k].c;
                if ((st = rc_fill_add(a, &fill, refs[v0].c, tc, err))) goto out;
                rc_note(&notes, tc->offset,
                        "%s: no whole chunk in the chunk group at %llu (%s); written as an empty chunk, so its "
                        "values of the %llu rows of the time chunk at %llu read as null",
                        rc_name(&s, refs[v0].c, nm, sizeof nm), (unsigned long long)s.groups[tc->group].offset,
                        tc->group + 1 == s.ngroups && !s.separator ? "the file ends inside it" : "dropped",
                        (unsigned long long)tc->points, (unsigned long long)tc->offset);
            }
        }
        i = j > i ? j : i + 1;
    }
    /* the file ends inside its last chunk group: name the non-aligned series of that device, seen in its
     * earlier groups, that have no chunk there */
    if (!s.separator && s.ngroups) {
        const tsf_vs_group *lg = &s.groups[s.ngroups - 1];
        size_t ldev = lg->nchunks ? s.chunks[lg->chunk0].dev : SIZE_MAX;
        for (size_t i = 0; i < nrefs && ldev != SIZE_MAX; i++) {
            const tsf_vs_chunk *c = refs[i].c;
            if (c->dev != ldev || c->kind != TSF_CHUNK_NONALIGNED || (i > 0 && same_series(refs[i - 1].c, c)))
                continue;
            int there = 0;
            for (size_t k = i; k < nrefs && same_series(refs[k].c, c); k++) there |= refs[k].c->group == s.ngroups - 1;
            if (!there)
                rc_note(&notes, lg->offset,
                        "%s: no whole chunk in the chunk group at %llu, which the file ends inside (the series "
                        "has chunks in earlier groups)",
                        rc_name(&s, c, nm, sizeof nm), (unsigned long long)lg->offset);
        }
    }
    if (fill.n) {
        qsort(fill.c, fill.n, sizeof *fill.c, rc_fill_cmp);
        rc_ref *nr = tsf_realloc(a, refs, refs_cap * sizeof *refs, (nrefs + fill.n) * sizeof *refs);
        if (!nr) goto oom;
        refs = nr;
        refs_cap = nrefs + fill.n;
        for (size_t k = 0; k < fill.n; k++) refs[nrefs++] = (rc_ref){&fill.c[k], SIZE_MAX};
        qsort(refs, nrefs, sizeof *refs, rc_ref_cmp);
    }
    rep.chunks_filled = fill.n;
    /* the data area */
    if ((st = tsf_tmp_create("recover", out_path, a, 1, &tmp, err))) goto out;
    o.fd = tmp.fd;
    o.path = tmp.name;
    uint8_t head[TSF_FMT_HEAD_LEN];
    size_t head_len = 0;
    if ((st = tsf_fmt_write_head(TSF_FORMAT_VERSION, head, sizeof head, &head_len, err)) ||
        (st = rc_put(&o, head, head_len, err)))
        goto out;
    size_t fi = 0;
    for (size_t g = 0; g < s.ngroups; g++) {
        const tsf_vs_group *gr = &s.groups[g];
        size_t kept = 0;
        for (size_t k = 0; k < gr->nchunks; k++) kept += keep[gr->chunk0 + k];
        if (!kept) {
            rep.chunk_groups_dropped++;
            continue;
        }
        rep.chunk_groups_kept++;
        if ((st = rc_put(&o, file + gr->offset, (size_t)(gr->hdr_end - gr->offset), err))) goto out;
        rep.bytes_kept += gr->hdr_end - gr->offset;
        uint64_t seg_at = UINT64_MAX; /* the kept time chunk whose empty value chunks are due */
        for (size_t k = 0; k <= gr->nchunks; k++) {
            tsf_vs_chunk *c = k < gr->nchunks ? &s.chunks[gr->chunk0 + k] : NULL;
            if (c && !keep[gr->chunk0 + k]) continue;
            if (!c || c->kind == TSF_CHUNK_TIME) { /* a segment ends: its empty chunks */
                for (; fi < fill.n && fill.c[fi].offset == seg_at; fi++) {
                    fill.c[fi].new_off = o.pos;
                    if ((st = rc_put_header(&o, &fill.c[fi].h, err))) goto out;
                }
                if (c) seg_at = c->offset;
            }
            if (!c) break;
            c->new_off = o.pos;
            if (c->restat) {
                rc_note(&notes, c->offset,
                        "%s: chunk at %llu kept with its page statistics recomputed (they disagreed with the "
                        "decoded values)",
                        rc_name(&s, c, nm, sizeof nm), (unsigned long long)c->offset);
                st = rc_put_restat(&o, &s, c, err);
            } else {
                st = rc_put(&o, file + c->offset, (size_t)(c->end - c->offset), err);
            }
            if (st) goto out;
            rep.bytes_kept += c->end - c->offset;
        }
    }
    if (fi != fill.n) {
        st = tsf_err(err, TSF_ECORRUPT, "recover: %zu empty chunks left unplaced", fill.n - fi);
        goto out;
    }
    for (size_t i = 0; i < s.nchunks; i++) {
        const tsf_vs_chunk *c = &s.chunks[i];
        if (keep[i]) {
            rep.chunks_kept++;
            if (c->kind != TSF_CHUNK_TIME) rep.points_kept += c->points;
        } else {
            rep.chunks_dropped++;
            if (c->kind != TSF_CHUNK_TIME) rep.points_dropped += c->claimed;
        }
    }
    rep.chunks_dropped += s.torn_chunks;
    rep.bytes_dropped =
        data_end > TSF_FMT_HEAD_LEN + rep.bytes_kept ? data_end - TSF_FMT_HEAD_LEN - rep.bytes_kept : 0;
    /* the index and tail */
    if ((st = rc_index(a, &s, refs, nrefs, devs, ndev, &tabs, &o, err))) goto out;
    if ((st = rc_flush(&o, err))) goto out;
    o.fd = -1; /* closed by the commit: synced, renamed to out_path, folder synced */
    if ((st = tsf_tmp_commit("recover", &tmp, out_path, 1, a, err))) goto out;
    rep.notes = notes.n;
    if (report) *report = rep;
    goto out;
oom:
    st = tsf_err(err, TSF_ENOMEM, "recover: out of memory");
out:
    tsf_tmp_discard(&tmp, a); /* a failed recovery leaves no output and no temporary */
    tsf_wbuf_free(&o.buf);
    for (size_t k = 0; k < fill.n; k++) tsf_wstats_free(&fill.c[k].stats, a);
    tsf_free(a, fill.c, fill.cap * sizeof *fill.c);
    tsf_free(a, refs, refs_cap * sizeof *refs);
    tsf_free(a, devs, (s.ngroups ? s.ngroups : 1) * sizeof *devs);
    tsf_free(a, keep, s.nchunks ? s.nchunks : 1);
    tsf_free(a, seg, (s.nchunks ? s.nchunks : 1) * sizeof *seg);
    tsf_free(a, segvals, (s.nchunks ? s.nchunks : 1) * sizeof *segvals);
    tsf_free(a, devval, ndev ? ndev : 1);
    rc_tables_free(a, &tabs);
    tsf_reader_close(r);
    tsf_vs_scan_free(&s);
    tsf_vs_unmap_file(file, len);
    return st;
}
