/*
 * index_baselines.c - building the static B+-tree and inserting into the dynamic B+-tree of the index
 * benchmark's baselines (index_baselines.h).
 */
#include <stdlib.h>
#include <string.h>

#include "index_baselines.h"

void bt_build(btree *t, const uint64_t *k, const uint64_t *v, size_t n)
{
    t->nleaf = (n + 15) / 16;
    if (t->nleaf == 0) t->nleaf = 1;
    t->leaf = aligned_alloc(256, t->nleaf * 256);
    for (size_t l = 0; l < t->nleaf; l++)
        for (size_t s = 0; s < 16; s++) {
            size_t i = l * 16 + s;
            t->leaf[l * 32 + s] = i < n ? k[i] : UINT64_MAX;
            t->leaf[l * 32 + 16 + s] = i < n ? v[i] : 0;
        }
    size_t cap = t->nleaf, total = 0;
    for (size_t c = cap; c > 1; c = (c + 15) / 16) total += (c + 15) / 16;
    t->inner = aligned_alloc(256, (total ? total : 1) * 256);
    /* level 0 children are leaves (ids), higher levels inner ids */
    size_t count = t->nleaf, first = 0, h = 0, at = 0;
    uint64_t *maxk = malloc(count * 8);
    for (size_t l = 0; l < count; l++)
        maxk[l] = t->leaf[l * 32 + 15] != UINT64_MAX ? t->leaf[l * 32 + 15] : UINT64_MAX;
    while (count > 1) {
        size_t parents = (count + 15) / 16;
        uint64_t *pk = malloc(parents * 8);
        for (size_t p = 0; p < parents; p++) {
            uint64_t *nd = t->inner + (at + p) * 32;
            for (size_t s = 0; s < 16; s++) {
                size_t c = p * 16 + s;
                nd[s] = c < count ? maxk[c] : UINT64_MAX;
                nd[16 + s] = c < count ? first + c : first + count - 1;
            }
            pk[p] = maxk[p * 16 + 15 < count ? p * 16 + 15 : count - 1];
        }
        free(maxk);
        maxk = pk;
        first = at;
        at += parents;
        count = parents;
        h++;
    }
    free(maxk);
    t->ninner = at;
    t->root = at ? at - 1 : 0;
    t->height = h;
}

static uint32_t dbt_new(dbt *t)
{
    if (t->nn == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        dnode *q = aligned_alloc(256, nc * sizeof *q);
        if (t->nn) memcpy(q, t->nd, t->nn * sizeof *q);
        free(t->nd);
        t->nd = q;
        t->cap = nc;
    }
    memset(&t->nd[t->nn], 0, sizeof *t->nd);
    return (uint32_t)t->nn++;
}

void dbt_init(dbt *t)
{
    memset(t, 0, sizeof *t);
    t->root = dbt_new(t);
    t->nd[t->root].l.next = UINT32_MAX;
}

/* Inserts below node at depth h; on a split returns 1 with the new right sibling and its first key. */
static int dbt_ins(dbt *t, uint32_t node, int h, uint64_t k, uint64_t v, uint64_t *sep, uint32_t *right)
{
    if (h == 0) {
        dnode *d = &t->nd[node];
        uint32_t p = 0;
        while (p < d->l.n && d->l.key[p] < k) p++;
        if (p < d->l.n && d->l.key[p] == k) {
            d->l.val[p] = v;
            return 0;
        }
        uint64_t kk[16], vv[16];
        memcpy(kk, d->l.key, p * 8);
        memcpy(vv, d->l.val, p * 8);
        kk[p] = k, vv[p] = v;
        memcpy(kk + p + 1, d->l.key + p, (d->l.n - p) * 8);
        memcpy(vv + p + 1, d->l.val + p, (d->l.n - p) * 8);
        uint32_t n = d->l.n + 1;
        if (n <= 15) {
            memcpy(d->l.key, kk, n * 8);
            memcpy(d->l.val, vv, n * 8);
            d->l.n = n;
            return 0;
        }
        uint32_t r = dbt_new(t);
        d = &t->nd[node];
        dnode *e = &t->nd[r];
        memcpy(d->l.key, kk, 8 * 8), memcpy(d->l.val, vv, 8 * 8), d->l.n = 8;
        memcpy(e->l.key, kk + 8, 8 * 8), memcpy(e->l.val, vv + 8, 8 * 8), e->l.n = 8;
        e->l.next = d->l.next;
        d->l.next = r;
        *sep = kk[8], *right = r;
        return 1;
    }
    dnode *d = &t->nd[node];
    uint32_t s = 0;
    for (uint32_t i = 0; i + 1 < d->in.n; i++) s += d->in.key[i] <= k;
    uint64_t cs;
    uint32_t cr;
    if (!dbt_ins(t, d->in.child[s], h - 1, k, v, &cs, &cr)) return 0;
    d = &t->nd[node];
    uint64_t kk[16];
    uint32_t cc[17], n = d->in.n;
    memcpy(kk, d->in.key, s * 8), memcpy(cc, d->in.child, (s + 1) * 4);
    kk[s] = cs, cc[s + 1] = cr;
    memcpy(kk + s + 1, d->in.key + s, (n - 1 - s) * 8),
        memcpy(cc + s + 2, d->in.child + s + 1, (n - 1 - s) * 4);
    n++;
    if (n <= 16) {
        memcpy(d->in.key, kk, (n - 1) * 8), memcpy(d->in.child, cc, n * 4), d->in.n = n;
        return 0;
    }
    uint32_t r = dbt_new(t); /* 17 children: 9 left, 8 right, key 8 goes up */
    d = &t->nd[node];
    dnode *e = &t->nd[r];
    memcpy(d->in.key, kk, 8 * 8), memcpy(d->in.child, cc, 9 * 4), d->in.n = 9;
    memcpy(e->in.key, kk + 9, 7 * 8), memcpy(e->in.child, cc + 9, 8 * 4), e->in.n = 8;
    *sep = kk[8], *right = r;
    return 1;
}

void dbt_insert(dbt *t, uint64_t k, uint64_t v)
{
    uint64_t sep;
    uint32_t r;
    if (!dbt_ins(t, t->root, t->height, k, v, &sep, &r)) return;
    uint32_t nr = dbt_new(t);
    t->nd[nr].in.key[0] = sep;
    t->nd[nr].in.child[0] = t->root;
    t->nd[nr].in.child[1] = r;
    t->nd[nr].in.n = 2;
    t->root = nr;
    t->height++;
}

size_t dbt_scan(const dbt *t, uint64_t x, uint64_t *k, uint64_t *v, size_t max)
{
    uint32_t node = dbt_leaf(t, x);
    size_t n = 0;
    while (node != UINT32_MAX && n < max) {
        const dnode *d = &t->nd[node];
        for (uint32_t i = 0; i < d->l.n && n < max; i++)
            if (d->l.key[i] >= x) k[n] = d->l.key[i], v[n++] = d->l.val[i];
        node = d->l.next;
    }
    return n;
}
