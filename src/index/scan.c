/*
 * scan.c - ordered access: a leaf's merged, sorted view of its live pairs (base, overflow log and
 * dynamic blocks, newest record deciding), lower bound, floor and range scan across leaves.
 */
#include <stdlib.h>

#include "lix_read.h"
#include "lix_search.h"

typedef struct tsf_lix_rec {
    uint64_t k, v;
    uint64_t seq; /* bit 0: tombstone; higher bits: age */
} tsf_lix_rec;

static int tsf_lix_rec_cmp(const void *a, const void *b)
{
    const tsf_lix_rec *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int tsf_lix_view_push(tsf_index *ix, tsf_lix_view *w, uint64_t k, uint64_t v)
{
    if (w->n == w->cap) {
        uint64_t nc = w->cap ? w->cap * 2 : 64;
        uint64_t *a = tsf_realloc(ix->alloc, w->k, w->cap * 8, nc * 8);
        if (!a) return -1;
        w->k = a;
        uint64_t *b = tsf_realloc(ix->alloc, w->v, w->cap * 8, nc * 8);
        if (!b) {
            /* keep k and v the same size so that one free size fits both */
            uint64_t *c = tsf_realloc(ix->alloc, w->k, nc * 8, w->cap * 8);
            if (c) w->k = c;
            return -1;
        }
        w->v = b;
        w->cap = nc;
    }
    w->k[w->n] = k;
    w->v[w->n] = v;
    w->n++;
    return 0;
}

tsf_status tsf_lix_leaf_view_locked(tsf_index *ix, tsf_lix_leaf *L, const tsf_lix_view **out, tsf_error *err)
{
    tsf_status s = tsf_lix_leaf_ready_locked(ix, L, err);
    if (s != TSF_OK) return s;
    if (L->w->view) {
        *out = L->w->view;
        return TSF_OK;
    }
    s = tsf_lix_leaf_own(ix, L, err);
    if (s != TSF_OK) return s;
    tsf_lix_view *vw = tsf_calloc(ix->alloc, 1, sizeof *vw);
    if (!vw) return tsf_err(err, TSF_ENOMEM, "index: leaf view");
    /* Newer-than-base records: chunks oldest to newest, then dynamic blocks (the newest tier). */
    uint64_t nr = L->w->ovf_records + (ix->mode == TSF_INDEX_DYNAMIC ? (uint64_t)L->nblocks * IX_SLOTS : 0);
    tsf_lix_rec *r = tsf_alloc(ix->alloc, (nr ? nr : 1) * sizeof(tsf_lix_rec));
    if (!r) {
        tsf_free(ix->alloc, vw, sizeof *vw);
        return tsf_err(err, TSF_ENOMEM, "index: leaf view of %llu records", (unsigned long long)nr);
    }
    uint64_t n = 0, age = 0;
    for (uint32_t c = 0; c < L->w->nchunks; c++) {
        const uint8_t *p = tsf_lix_at(ix, L->w->chunks[c].off);
        uint64_t w = ld64(p), cnt = w & 0xff;
        for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
            r[n] = (tsf_lix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
    }
    if (ix->mode == TSF_INDEX_DYNAMIC)
        for (uint64_t b = 0; b < L->nblocks; b++) {
            const uint8_t *p = tsf_lix_block(ix, L, b);
            uint64_t w = ld64(p), cnt = w & 0xff;
            for (uint64_t i = 0; i < cnt && n < nr; i++, n++)
                r[n] =
                    (tsf_lix_rec){ld64(p + 16 + i * 16), ld64(p + 24 + i * 16), (++age << 1) | (w >> (8 + i) & 1)};
        }
    qsort(r, n, sizeof *r, tsf_lix_rec_cmp);
    const uint8_t *leaf = tsf_lix_at(ix, L->off);
    uint64_t i = 0, j = 0, nb = ix->mode == TSF_INDEX_SORTED ? L->nbase : 0;
    int oom = 0;
    while (!oom && (i < nb || j < n)) {
        uint64_t k = j >= n || (i < nb && tsf_lix_base_key(leaf, i) <= r[j].k) ? tsf_lix_base_key(leaf, i) : r[j].k;
        uint64_t i2 = i, j2 = j;
        while (i2 < nb && tsf_lix_base_key(leaf, i2) == k) i2++;
        while (j2 < n && r[j2].k == k) j2++;
        if (!ix->dup) {
            if (j2 > j) {
                if (!(r[j2 - 1].seq & 1)) oom = tsf_lix_view_push(ix, vw, k, r[j2 - 1].v);
            } else {
                oom = tsf_lix_view_push(
                    ix, vw, k,
                    ld64(leaf + IX_BLOCK + (i2 - 1) / IX_SLOTS * IX_BLOCK + 24 + (i2 - 1) % IX_SLOTS * 16));
            }
        } else {
            uint64_t t = j2; /* last tombstone */
            for (uint64_t q = j; q < j2; q++)
                if (r[q].seq & 1) t = q;
            if (t == j2)
                for (uint64_t q = i; q < i2 && !oom; q++)
                    oom = tsf_lix_view_push(
                        ix, vw, k, ld64(leaf + IX_BLOCK + q / IX_SLOTS * IX_BLOCK + 24 + q % IX_SLOTS * 16));
            for (uint64_t q = t == j2 ? j : t + 1; q < j2 && !oom; q++) oom = tsf_lix_view_push(ix, vw, k, r[q].v);
        }
        i = i2;
        j = j2;
    }
    tsf_free(ix->alloc, r, (nr ? nr : 1) * sizeof(tsf_lix_rec));
    if (oom) {
        tsf_lix_view_free(ix, vw);
        return tsf_err(err, TSF_ENOMEM, "index: leaf view");
    }
    IX_STR(&L->w->view, vw);
    *out = vw;
    return TSF_OK;
}

/* A leaf prepared for ordered access: its entry copy, and its view (NULL: read the sorted base). */
typedef struct tsf_lix_ord {
    tsf_lix_leaf S;
    const tsf_lix_view *v;
    uint64_t n;
} tsf_lix_ord;

static tsf_status tsf_lix_leaf_ordered(tsf_index *ix, tsf_lix_leaf *L, tsf_lix_ord *o, tsf_error *err)
{
    for (;;) {
        uint32_t ver = tsf_lix_leaf_snap(L, &o->S);
        if (!o->S.ready) {
            tsf_status s = tsf_lix_leaf_ready(ix, L, err);
            if (s != TSF_OK) return s;
            continue;
        }
        if (ix->mode == TSF_INDEX_SORTED && IX_LDA(&o->S.w->nchunks) == 0) {
            o->v = NULL; /* the sorted base never changes in place */
            o->n = o->S.nbase;
            if (tsf_lix_leaf_valid(L, ver)) return TSF_OK;
            continue;
        }
        const tsf_lix_view *v = IX_LDA(&o->S.w->view);
        if (!v) {
            tsf_lix_leaf_lock(L);
            tsf_status s = tsf_lix_leaf_view_locked(ix, L, &v, err);
            tsf_lix_leaf_unlock(L);
            if (s != TSF_OK) return s;
        }
        o->v = v;
        o->n = v->n;
        return TSF_OK;
    }
}

static inline uint64_t tsf_lix_vkey(const tsf_index *ix, const tsf_lix_ord *o, uint64_t i)
{
    return o->v ? o->v->k[i] : tsf_lix_base_key(tsf_lix_at(ix, o->S.off), i);
}
static inline uint64_t tsf_lix_vval(const tsf_index *ix, const tsf_lix_ord *o, uint64_t i)
{
    if (o->v) return o->v->v[i];
    return ld64(tsf_lix_at(ix, o->S.off) + IX_BLOCK + i / IX_SLOTS * IX_BLOCK + 24 + i % IX_SLOTS * 16);
}

/* First position in the leaf's ordered view with key >= x (> x when strict). */
TSF_INLINE uint64_t tsf_lix_leaf_pos(const tsf_index *ix, const tsf_lix_ord *o, uint64_t x, int strict)
{
    if (!o->v) return o->n == 0 ? 0 : tsf_lix_base_pos(ix, &o->S, x, strict);
    uint64_t a = 0, len = o->n;
    while (len > 0) {
        uint64_t half = len / 2;
        uint64_t k = o->v->k[a + half];
        if (strict ? k <= x : k < x) {
            a += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return a;
}

static tsf_status tsf_lix_lower_bound(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t x, uint64_t *key, uint64_t *val,
                                 tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_ENOTFOUND;
    for (uint64_t id = tsf_lix_route_in(ix, &t, x), first = 1; id < t.n_leaves; id++, first = 0) {
        tsf_lix_ord o;
        tsf_status st = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (st != TSF_OK) {
            s = st;
            break;
        }
        uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, x, 0) : 0;
        if (p < o.n) {
            *key = tsf_lix_vkey(ix, &o, p);
            *val = tsf_lix_vval(ix, &o, p);
            s = TSF_OK;
            break;
        }
    }
    tsf_lix_exit(ix, rs, rt);
    return s;
}

tsf_status tsf_index_lower_bound(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_lower_bound");
    return tsf_lix_lower_bound(ix, NULL, x, key, val, err);
}

tsf_status tsf_index_reader_lower_bound(tsf_index_reader *rd, uint64_t x, uint64_t *key, uint64_t *val,
                                        tsf_error *err)
{
    if (!rd || !key || !val)
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_lower_bound");
    return tsf_lix_lower_bound(rd->ix, rd->slot, x, key, val, err);
}

static tsf_status tsf_lix_floor(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t x, uint64_t *key, uint64_t *val,
                           tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_ENOTFOUND;
    uint64_t id = tsf_lix_route_in(ix, &t, x);
    for (int first = 1;; first = 0) {
        tsf_lix_ord o;
        tsf_status st = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (st != TSF_OK) {
            s = st;
            break;
        }
        uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, x, 1) : o.n;
        if (p > 0) {
            *key = tsf_lix_vkey(ix, &o, p - 1);
            *val = tsf_lix_vval(ix, &o, p - 1);
            s = TSF_OK;
            break;
        }
        if (id == 0) break;
        id--;
    }
    tsf_lix_exit(ix, rs, rt);
    return s;
}

tsf_status tsf_index_floor(tsf_index *ix, uint64_t x, uint64_t *key, uint64_t *val, tsf_error *err)
{
    if (!ix || !key || !val) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_floor");
    return tsf_lix_floor(ix, NULL, x, key, val, err);
}

tsf_status tsf_index_reader_floor(tsf_index_reader *rd, uint64_t x, uint64_t *key, uint64_t *val,
                                  tsf_error *err)
{
    if (!rd || !key || !val)
        return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_reader_floor");
    return tsf_lix_floor(rd->ix, rd->slot, x, key, val, err);
}

tsf_status tsf_index_scan(tsf_index *ix, uint64_t lo, uint64_t hi, tsf_index_visit fn, void *arg,
                          tsf_error *err)
{
    if (!ix || !fn) return tsf_err(err, TSF_EINVAL, "index: NULL argument to tsf_index_scan");
    if (lo > hi) return TSF_OK;
    uint32_t rt = tsf_lix_rd_enter(ix);
    tsf_lix_tree t;
    tsf_lix_tree_snap(ix, &t);
    tsf_status s = TSF_OK;
    int stop = 0;
    for (uint64_t id = tsf_lix_route_in(ix, &t, lo), first = 1; !stop && id < t.n_leaves; id++, first = 0) {
        tsf_lix_ord o;
        s = tsf_lix_leaf_ordered(ix, &t.leaves[id], &o, err);
        if (s != TSF_OK) break;
        for (uint64_t p = first ? tsf_lix_leaf_pos(ix, &o, lo, 0) : 0; p < o.n; p++) {
            uint64_t k = tsf_lix_vkey(ix, &o, p);
            if (k > hi || fn(k, tsf_lix_vval(ix, &o, p), arg)) {
                stop = 1;
                break;
            }
        }
    }
    tsf_lix_rd_exit(ix, rt);
    return s;
}
