/*
 * index_baselines.h - the structures the learned index is compared against in the index benchmark:
 * branchless binary search, interpolation search, a static B+-tree and a dynamic B+-tree of 256-byte
 * nodes. Their lookups are inline (they are what is timed); building and inserting are in
 * index_baselines.c.
 */
#ifndef TSF_BENCH_INDEX_BASELINES_H
#define TSF_BENCH_INDEX_BASELINES_H

#include <stddef.h>
#include <stdint.h>

static inline size_t bs_lower(const uint64_t *a, size_t n, uint64_t x)
{
    const uint64_t *base = a;
    if (n == 0) return 0;
    while (n > 1) {
        size_t half = n / 2;
        base = base[half] < x ? base + half : base;
        n -= half;
    }
    return (size_t)(base - a) + (*base < x);
}

static inline size_t interp_lower(const uint64_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n; /* the answer lies in [lo, hi] */
    for (int it = 0; it < 16 && hi - lo > 16; it++) {
        uint64_t kl = a[lo], kh = a[hi - 1];
        if (x <= kl) return lo;
        if (x > kh) return hi;
        size_t p = lo + (size_t)((double)(x - kl) / (double)(kh - kl) * (double)(hi - 1 - lo));
        if (p >= hi) p = hi - 1;
        if (a[p] < x)
            lo = p + 1;
        else
            hi = p;
    }
    return lo + bs_lower(a + lo, hi - lo, x);
}

/* Static B+-tree, 256-byte nodes: inner = 16 keys + 16 child ids; leaves = 16 keys then 16 values. */
typedef struct btree {
    uint64_t *inner; /* nodes of 32 words: keys[16] (max key of each child), children[16] */
    uint64_t *leaf;  /* nodes of 32 words: keys[16], vals[16]; unused keys = UINT64_MAX */
    size_t ninner, nleaf, root, height;
} btree;

/* Builds the static B+-tree of n sorted pairs. */
void bt_build(btree *t, const uint64_t *k, const uint64_t *v, size_t n);

/* Position (leaf*16+slot) of the first key >= x. */
static inline size_t bt_lower(const btree *t, uint64_t x, const uint64_t **leafp)
{
    size_t node = t->root;
    for (size_t h = t->height; h > 0; h--) {
        const uint64_t *nd = t->inner + node * 32;
        size_t s = 0;
        for (int i = 0; i < 15; i++) s += nd[i] < x;
        node = nd[16 + s];
    }
    const uint64_t *lf = t->leaf + node * 32;
    size_t s = 0;
    for (int i = 0; i < 16; i++) s += lf[i] < x;
    *leafp = lf;
    return s;
}

/* Dynamic B+-tree (the pltree_btoverflow ablation's overflow): 256-byte nodes, leaves 15 pairs + next,
 * inner nodes 16 children (15 separators = the first key of children 1..); all leaves at one depth. */
typedef union dnode {
    struct {
        uint64_t key[15], val[15];
        uint32_t n, next, pad[2];
    } l;
    struct {
        uint64_t key[15];
        uint32_t child[16], n, pad[15];
    } in;
} dnode;

typedef struct dbt {
    dnode *nd;
    size_t nn, cap;
    uint32_t root;
    int height; /* inner levels */
} dbt;

/* An empty dynamic B+-tree; inserting a pair (an existing key's value is replaced); up to max pairs
   with key >= x in order. */
void dbt_init(dbt *t);
void dbt_insert(dbt *t, uint64_t k, uint64_t v);
size_t dbt_scan(const dbt *t, uint64_t x, uint64_t *k, uint64_t *v, size_t max);

static inline uint32_t dbt_leaf(const dbt *t, uint64_t x)
{
    uint32_t node = t->root;
    for (int h = t->height; h > 0; h--) {
        const dnode *d = &t->nd[node];
        uint32_t s = 0;
        for (uint32_t i = 0; i + 1 < d->in.n; i++) s += d->in.key[i] <= x;
        node = d->in.child[s];
    }
    return node;
}

static inline int dbt_get(const dbt *t, uint64_t x, uint64_t *v)
{
    const dnode *d = &t->nd[dbt_leaf(t, x)];
    for (uint32_t i = 0; i < d->l.n; i++)
        if (d->l.key[i] == x) {
            *v = d->l.val[i];
            return 1;
        }
    return 0;
}

#endif
