/*
 * meta_index_tree.c - writes the index area (spec tsfile-container-format.md §8): TimeseriesMetadata
 * runs per device (devices in IDeviceID order, series by name), the measurement-level
 * MetadataIndexNode tree of every device, the device-level tree of every table (§8.4, the Java
 * TsFileIOWriter/MetadataIndexConstructor algorithm with maxDegree fan-out), TsFileMetadata (§8.6:
 * table roots, table schemas §8.8, metaOffset, bloom filter §9, properties §8.7) and the tail (§2).
 * All offsets are absolute; bytes stream out through a sink in large pieces.
 */
#include <stdlib.h>
#include <string.h>

#include "meta_index.h"

enum { NODE_INTERNAL_DEVICE = 0, NODE_LEAF_DEVICE = 1, NODE_INTERNAL_MEASUREMENT = 2, NODE_LEAF_MEASUREMENT = 3 };

typedef struct tsf_lix_key {
    const char *s; /* measurement-level key */
    size_t len;
    const tsf_mi_device *dev; /* device-level key */
} tsf_lix_key;

typedef struct tsf_lix_entry {
    tsf_lix_key key;
    uint64_t off;
} tsf_lix_entry;

typedef struct tsf_lix_node {
    tsf_lix_entry *e;
    size_t n, cap;
    uint64_t end;
    uint8_t type;
} tsf_lix_node;

typedef struct tsf_lix_out {
    tsf_wbuf buf;
    uint64_t base; /* file offset of buf.p[0] */
    tsf_mi_sink sink;
    void *ud;
    tsf_error *err;
    const tsf_allocator *a;
    uint32_t degree;
} tsf_lix_out;

#define IX_FLUSH_AT (1u << 20)

static uint64_t pos(const tsf_lix_out *o) { return o->base + o->buf.len; }

static tsf_status out_check(tsf_lix_out *o)
{
    if (o->buf.oom) return tsf_err(o->err, TSF_ENOMEM, "index: out of memory");
    if (o->buf.len >= IX_FLUSH_AT) {
        tsf_status s = o->sink(o->ud, o->buf.p, o->buf.len, o->err);
        if (s) return s;
        o->base += o->buf.len;
        o->buf.len = 0;
    }
    return TSF_OK;
}

static void node_free(tsf_lix_out *o, tsf_lix_node *nd)
{
    if (nd->e) tsf_free(o->a, nd->e, nd->cap * sizeof *nd->e);
    nd->e = NULL;
    nd->n = nd->cap = 0;
}

static tsf_status node_add(tsf_lix_out *o, tsf_lix_node *nd, tsf_lix_key key, uint64_t off)
{
    if (nd->n == nd->cap) {
        size_t nc = nd->cap ? nd->cap * 2 : 4;
        tsf_lix_entry *ne = tsf_realloc(o->a, nd->e, nd->cap * sizeof *ne, nc * sizeof *ne);
        if (!ne) return tsf_err(o->err, TSF_ENOMEM, "index: out of memory");
        nd->e = ne;
        nd->cap = nc;
    }
    nd->e[nd->n].key = key;
    nd->e[nd->n].off = off;
    nd->n++;
    return TSF_OK;
}

/* MetadataIndexNode.serializeTo (§8.3). */
static tsf_status node_write(tsf_lix_out *o, const tsf_lix_node *nd)
{
    tsf_wbuf *b = &o->buf;
    tsf_wbuf_uvarint(b, (uint32_t)nd->n);
    for (size_t i = 0; i < nd->n; i++) {
        const tsf_lix_key *k = &nd->e[i].key;
        if (nd->type <= NODE_LEAF_DEVICE)
            tsf_mi_put_device(b, k->dev->segs, k->dev->nsegs);
        else
            tsf_wbuf_varstr(b, k->s, k->len);
        tsf_wbuf_be64(b, nd->e[i].off);
    }
    tsf_wbuf_be64(b, nd->end);
    tsf_wbuf_u8(b, nd->type);
    return out_check(o);
}

typedef struct tsf_lix_queue {
    tsf_lix_node *v;
    size_t n, cap;
} tsf_lix_queue;

static tsf_status queue_push(tsf_lix_out *o, tsf_lix_queue *q, tsf_lix_node *nd)
{
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 4;
        tsf_lix_node *nv = tsf_realloc(o->a, q->v, q->cap * sizeof *nv, nc * sizeof *nv);
        if (!nv) return tsf_err(o->err, TSF_ENOMEM, "index: out of memory");
        q->v = nv;
        q->cap = nc;
    }
    q->v[q->n++] = *nd;
    memset(nd, 0, sizeof *nd);
    return TSF_OK;
}

static void queue_free(tsf_lix_out *o, tsf_lix_queue *q)
{
    for (size_t i = 0; i < q->n; i++) node_free(o, &q->v[i]);
    if (q->v) tsf_free(o->a, q->v, q->cap * sizeof *q->v);
    memset(q, 0, sizeof *q);
}

/* Java generateRootNode: writes every level but the last; *root receives the top node. */
static tsf_status gen_root(tsf_lix_out *o, tsf_lix_queue *q, uint8_t type, tsf_lix_node *root)
{
    tsf_status s = TSF_OK;
    while (q->n > 1) {
        tsf_lix_queue next = {0};
        tsf_lix_node cur = {.type = type};
        for (size_t i = 0; i < q->n && !s; i++) {
            if (cur.n >= o->degree) {
                cur.end = pos(o);
                if ((s = queue_push(o, &next, &cur))) break;
                cur.type = type;
            }
            if ((s = node_add(o, &cur, q->v[i].e[0].key, pos(o)))) break;
            s = node_write(o, &q->v[i]);
        }
        if (!s) {
            cur.end = pos(o);
            s = queue_push(o, &next, &cur);
        }
        node_free(o, &cur);
        queue_free(o, q);
        *q = next;
        if (s) return s;
    }
    *root = q->v[0];
    q->n = 0;
    queue_free(o, q);
    return TSF_OK;
}

/* TimeseriesMetadata (§8.1). */
static tsf_status write_tsm(tsf_lix_out *o, const tsf_mi_series *s)
{
    tsf_wbuf *b = &o->buf;
    tsf_wbuf_u8(b, s->meta_type);
    tsf_wbuf_varstr(b, s->name, s->name_len);
    tsf_wbuf_u8(b, s->data_type);
    tsf_wbuf_uvarint(b, (uint32_t)s->chunks_len);
    tsf_wbuf_put(b, s->stats, s->stats_len);
    tsf_wbuf_put(b, s->chunks, s->chunks_len);
    return out_check(o);
}

/* Measurement-level index of one device: writes its TimeseriesMetadata and internal nodes. */
static tsf_status build_device(tsf_lix_out *o, const tsf_mi_device *d, tsf_lix_node *root)
{
    tsf_lix_queue q = {0};
    tsf_lix_node leaf = {.type = NODE_LEAF_MEASUREMENT};
    tsf_status s = TSF_OK;
    for (size_t i = 0; i < d->nseries && !s; i++) {
        const tsf_mi_series *se = &d->series[i];
        if (i % o->degree == 0) {
            if (leaf.n >= o->degree) {
                leaf.end = pos(o);
                if ((s = queue_push(o, &q, &leaf))) break;
                leaf.type = NODE_LEAF_MEASUREMENT;
            }
            tsf_lix_key k = {se->name, se->name_len, NULL};
            if ((s = node_add(o, &leaf, k, pos(o)))) break;
        }
        s = write_tsm(o, se);
    }
    if (!s) {
        leaf.end = pos(o);
        s = queue_push(o, &q, &leaf);
    }
    node_free(o, &leaf);
    if (s) {
        queue_free(o, &q);
        return s;
    }
    return gen_root(o, &q, NODE_INTERNAL_MEASUREMENT, root);
}

/* Device-level index of one table (Java checkAndBuildLevelIndex). */
static tsf_status build_table(tsf_lix_out *o, tsf_mi_device *devs, tsf_lix_node *roots, size_t n, tsf_lix_node *root)
{
    tsf_status s = TSF_OK;
    tsf_lix_queue q = {0};
    tsf_lix_node cur = {.type = NODE_LEAF_DEVICE};
    for (size_t i = 0; i < n && !s; i++) {
        if (n > o->degree && cur.n >= o->degree) {
            cur.end = pos(o);
            if ((s = queue_push(o, &q, &cur))) break;
            cur.type = NODE_LEAF_DEVICE;
        }
        tsf_lix_key k = {NULL, 0, &devs[i]};
        if ((s = node_add(o, &cur, k, pos(o)))) break;
        s = node_write(o, &roots[i]);
    }
    cur.end = pos(o);
    if (s || n <= o->degree) {
        queue_free(o, &q);
        if (s) {
            node_free(o, &cur);
            return s;
        }
        *root = cur;
        return TSF_OK;
    }
    if ((s = queue_push(o, &q, &cur))) {
        node_free(o, &cur);
        queue_free(o, &q);
        return s;
    }
    if ((s = gen_root(o, &q, NODE_INTERNAL_DEVICE, root))) return s;
    root->end = pos(o);
    return TSF_OK;
}

static int cmp_series(const void *a, const void *b)
{
    const tsf_mi_series *x = a, *y = b;
    return tsf_mi_str_cmp(x->name, x->name_len, y->name, y->name_len);
}

static int cmp_device(const void *a, const void *b)
{
    const tsf_mi_device *x = a, *y = b;
    return tsf_mi_device_cmp(x->segs, x->nsegs, y->segs, y->nsegs);
}

/* Bloom key: segments joined by '.', null as "null", then '.' + measurement. */
static tsf_status bloom_add_series(tsf_lix_out *o, tsf_bloom *bf, tsf_wbuf *key, const tsf_mi_device *d,
                                   const tsf_mi_series *se)
{
    key->len = 0;
    for (size_t i = 0; i < d->nsegs; i++) {
        if (i) tsf_wbuf_u8(key, '.');
        if (d->segs[i].data)
            tsf_wbuf_put(key, d->segs[i].data, d->segs[i].len);
        else
            tsf_wbuf_put(key, "null", 4);
    }
    tsf_wbuf_u8(key, '.');
    tsf_wbuf_put(key, se->name, se->name_len);
    if (key->oom) return tsf_err(o->err, TSF_ENOMEM, "index: out of memory");
    tsf_bloom_add(bf, key->p, key->len);
    return TSF_OK;
}

static void write_table_schema(tsf_wbuf *b, const tsf_mi_table *t)
{
    tsf_wbuf_uvarint(b, (uint32_t)t->ncolumns);
    for (size_t i = 0; i < t->ncolumns; i++) {
        const tsf_mi_column *c = &t->columns[i];
        tsf_wbuf_istr(b, c->name, strlen(c->name));
        tsf_wbuf_u8(b, c->data_type);
        tsf_wbuf_u8(b, c->encoding);
        tsf_wbuf_u8(b, c->compression);
        tsf_wbuf_be32(b, 0); /* no props */
        tsf_wbuf_be32(b, (uint32_t)c->category);
    }
}

tsf_status tsf_meta_index_write(tsf_mi_input *in, uint64_t meta_offset, tsf_mi_sink sink, void *ud,
                           uint64_t *end_offset, tsf_error *err)
{
    tsf_lix_out o;
    memset(&o, 0, sizeof o);
    tsf_wbuf_init(&o.buf, in->alloc);
    o.base = meta_offset;
    o.sink = sink;
    o.ud = ud;
    o.err = err;
    o.a = in->alloc;
    o.degree = in->max_degree >= 2 ? in->max_degree : 256;

    tsf_status s = TSF_OK;
    tsf_lix_node *roots = NULL;
    size_t nd = in->ndevices;
    tsf_bloom bf;
    memset(&bf, 0, sizeof bf);
    tsf_wbuf key;
    tsf_wbuf_init(&key, in->alloc);
    size_t *order = NULL;

    tsf_wbuf_u8(&o.buf, 0x02); /* SEPARATOR */
    if (nd) qsort(in->devices, nd, sizeof *in->devices, cmp_device);
    uint64_t nchunks = 0;
    for (size_t i = 0; i < nd; i++) {
        if (in->devices[i].nseries > 1)
            qsort(in->devices[i].series, in->devices[i].nseries, sizeof(tsf_mi_series), cmp_series);
        for (size_t j = 0; j < in->devices[i].nseries; j++) nchunks += in->devices[i].series[j].nchunks;
    }
    roots = tsf_calloc(o.a, nd ? nd : 1, sizeof *roots);
    if (!roots) {
        s = tsf_err(err, TSF_ENOMEM, "index: out of memory");
        goto done;
    }
    /* 1. TimeseriesMetadata runs and measurement-level nodes, device by device */
    for (size_t i = 0; i < nd && !s; i++) s = build_device(&o, &in->devices[i], &roots[i]);
    if (s) goto done;

    /* 2. per table: device roots and device-level nodes; table roots stay in memory */
    size_t ntab = 0;
    for (size_t i = 0; i < nd; i++)
        if (i == 0 || tsf_mi_str_cmp(in->devices[i].segs[0].data, in->devices[i].segs[0].len,
                                     in->devices[i - 1].segs[0].data, in->devices[i - 1].segs[0].len))
            ntab++;
    tsf_lix_node *troots = tsf_calloc(o.a, ntab ? ntab : 1, sizeof *troots);
    size_t *tfirst = tsf_calloc(o.a, ntab ? ntab : 1, sizeof *tfirst);
    if (!troots || !tfirst) {
        if (troots) tsf_free(o.a, troots, (ntab ? ntab : 1) * sizeof *troots);
        if (tfirst) tsf_free(o.a, tfirst, (ntab ? ntab : 1) * sizeof *tfirst);
        s = tsf_err(err, TSF_ENOMEM, "index: out of memory");
        goto done;
    }
    size_t t = 0;
    for (size_t i = 0; i < nd && !s;) {
        size_t j = i + 1;
        while (j < nd && !tsf_mi_str_cmp(in->devices[j].segs[0].data, in->devices[j].segs[0].len,
                                         in->devices[i].segs[0].data, in->devices[i].segs[0].len))
            j++;
        tfirst[t] = i;
        s = build_table(&o, &in->devices[i], &roots[i], j - i, &troots[t]);
        t++;
        i = j;
    }

    /* 3. TsFileMetadata */
    uint64_t meta_pos = pos(&o);
    size_t meta_start = o.buf.len;
    tsf_wbuf *b = &o.buf;
    if (!s) {
        tsf_wbuf_uvarint(b, (uint32_t)ntab);
        for (size_t k = 0; k < ntab; k++) {
            const tsf_mi_seg *tn = &in->devices[tfirst[k]].segs[0];
            tsf_wbuf_varstr(b, tn->data, tn->len);
            tsf_lix_node tmp = troots[k];
            /* node_write may flush: keep TsFileMetadata in one buffer by writing directly */
            tsf_wbuf_uvarint(b, (uint32_t)tmp.n);
            for (size_t e = 0; e < tmp.n; e++) {
                const tsf_lix_key *kk = &tmp.e[e].key;
                if (tmp.type <= NODE_LEAF_DEVICE)
                    tsf_mi_put_device(b, kk->dev->segs, kk->dev->nsegs);
                else
                    tsf_wbuf_varstr(b, kk->s, kk->len);
                tsf_wbuf_be64(b, tmp.e[e].off);
            }
            tsf_wbuf_be64(b, tmp.end);
            tsf_wbuf_u8(b, tmp.type);
        }
        tsf_wbuf_uvarint(b, (uint32_t)in->ntables);
        if (in->ntables) {
            const char **names = tsf_calloc(o.a, in->ntables, sizeof *names);
            order = tsf_calloc(o.a, in->ntables, sizeof *order);
            if (!names || !order) {
                if (names) tsf_free(o.a, names, in->ntables * sizeof *names);
                s = tsf_err(err, TSF_ENOMEM, "index: out of memory");
            } else {
                for (size_t k = 0; k < in->ntables; k++) names[k] = in->tables[k].name;
                tsf_java_hashmap_order(names, in->ntables, order);
                tsf_free(o.a, names, in->ntables * sizeof *names);
                for (size_t k = 0; k < in->ntables; k++) {
                    const tsf_mi_table *tb = &in->tables[order[k]];
                    tsf_wbuf_varstr(b, tb->name, strlen(tb->name));
                    write_table_schema(b, tb);
                }
            }
        }
        tsf_wbuf_be64(b, meta_offset);
        if (!s) s = tsf_bloom_init(&bf, in->bloom_error_rate, nchunks, o.a);
        if (s) {
            if (s == TSF_ENOMEM) s = tsf_err(err, TSF_ENOMEM, "index: out of memory (bloom filter)");
        } else {
            for (size_t i = 0; i < nd && !s; i++)
                for (size_t j = 0; j < in->devices[i].nseries && !s; j++)
                    s = bloom_add_series(&o, &bf, &key, &in->devices[i], &in->devices[i].series[j]);
            tsf_bloom_serialize(&bf, b);
            /* properties (§8.7): zig-zag count, the three keys in Java HashMap order */
            tsf_wbuf_varint(b, 3);
            tsf_wbuf_varstr(b, "encryptLevel", 12);
            tsf_wbuf_varstr(b, "0", 1);
            tsf_wbuf_varstr(b, "encryptKey", 10);
            tsf_wbuf_varstr(b, "", 0);
            tsf_wbuf_varstr(b, "encryptType", 11);
            tsf_wbuf_varstr(b, "UNENCRYPTED", 11);
        }
    }
    if (!s) {
        size_t meta_size = o.buf.len - meta_start;
        (void)meta_pos;
        tsf_wbuf_be32(b, (uint32_t)meta_size);
        tsf_wbuf_put(b, "TsFile", 6);
        if (b->oom) s = tsf_err(err, TSF_ENOMEM, "index: out of memory");
    }
    if (!s && o.buf.len) {
        s = sink(ud, o.buf.p, o.buf.len, err);
        o.base += o.buf.len;
        o.buf.len = 0;
    }
    if (!s && end_offset) *end_offset = o.base;
    for (size_t k = 0; k < ntab; k++) node_free(&o, &troots[k]);
    tsf_free(o.a, troots, (ntab ? ntab : 1) * sizeof *troots);
    tsf_free(o.a, tfirst, (ntab ? ntab : 1) * sizeof *tfirst);
done:
    if (roots) {
        for (size_t i = 0; i < nd; i++) node_free(&o, &roots[i]);
        tsf_free(o.a, roots, (nd ? nd : 1) * sizeof *roots);
    }
    if (order) tsf_free(o.a, order, in->ntables * sizeof *order);
    tsf_bloom_free(&bf);
    tsf_wbuf_free(&key);
    tsf_wbuf_free(&o.buf);
    return s;
}
