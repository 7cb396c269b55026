/*
 * seal.c - the sealed fast path of point gets: after a build or open, an immutable copy of the tree
 * fields with a routing table of the internal nodes (published for fast_get.h), retired by the writer
 * before its first change.
 */
#include "index_internal.h"

/*
 * Routing table of the sealed fast path: the internal nodes in level order, root first, so that
 * a get routes through a few hot DRAM entries instead of reading a slot of every node on its path (the last
 * level's slots, 32 B per leaf, do not stay in cache: one dependent miss per get). Built from the nodes as
 * they are in the file (validated at open); 0 entries when a node's children are not all nodes or all
 * consecutive leaf ids (tsf_lix_build writes them so), the table would exceed cap entries, or memory is short:
 * the fast path then routes in the file.
 */
#define IX_RT_MAX 65536u
static uint64_t tsf_lix_rtable(const tsf_index *ix, tsf_lix_rnode *rt, uint64_t *off, uint64_t cap, uint32_t *height)
{
    if (cap == 0) return 0;
    rt[0] = (tsf_lix_rnode){ix->root_origin, ix->root_mul, ix->root_fanout, 0, 0};
    off[0] = ix->root_off;
    uint64_t lo = 0, hi = 1;
    for (uint32_t h = 1; h <= IX_MAX_HEIGHT; h++) {
        uint64_t next = hi;
        int leaves = -1;
        for (uint64_t c = lo; c < hi; c++) {
            const uint8_t *nd = tsf_lix_at(ix, off[c]);
            for (uint32_t s = 0; s < rt[c].f; s++) {
                const uint8_t *sl = nd + IX_NODE_HDR + (uint64_t)s * IX_SLOT;
                int leaf = ld32(sl + SL_O_KIND) == SL_LEAF;
                if (leaves < 0) leaves = leaf;
                if (leaf != leaves) return 0;
                uint64_t child = ld64(sl + SL_O_CHILD);
                if (leaf) {
                    if (s == 0) rt[c].first = child;
                    if (child != rt[c].first + s || child >= ix->n_leaves) return 0;
                } else {
                    if (next >= cap) return 0;
                    if (s == 0) rt[c].first = next;
                    rt[next] =
                        (tsf_lix_rnode){ld64(sl + SL_O_ORIGIN), ld64(sl + SL_O_MUL), ld32(sl + SL_O_FANOUT), 0, 0};
                    off[next++] = child;
                }
            }
        }
        if (leaves != 0) { /* (-1: a level of nodes without slots routes nowhere: no table) */
            *height = h;
            return leaves == 1 ? hi : 0;
        }
        lo = hi;
        hi = next;
    }
    return 0;
}

void tsf_lix_seal(tsf_index *ix)
{
    if (!ix->fast_on || ix->fast || ix->mode != TSF_INDEX_SORTED || ix->nometa || ix->dup ||
        (ix->flags & TSF_INDEX_LOCAL_SEARCH))
        return;
    /* the table has one entry per internal node (all of them, when it can be built) */
    uint64_t cap = ix->n_nodes < IX_RT_MAX ? ix->n_nodes : IX_RT_MAX,
             bytes = sizeof(tsf_lix_tree) + cap * sizeof(tsf_lix_rnode);
    tsf_lix_tree *t = tsf_alloc(ix->alloc, bytes);
    if (!t) return; /* no fast path: every get takes the full protocol */
    *t = (tsf_lix_tree){ix->root_off, ix->root_origin, ix->root_mul, ix->gen, ix->root_fanout,
                   ix->leaves,   ix->n_leaves,    NULL,         0,       bytes};
    uint64_t *off = cap ? tsf_alloc(ix->alloc, cap * 8) : NULL;
    tsf_lix_rnode *rt = (tsf_lix_rnode *)(void *)(t + 1);
    uint32_t h = 0;
    if (off && tsf_lix_rtable(ix, rt, off, cap, &h)) {
        t->rt = rt;
        t->rt_h = h;
    }
    tsf_free(ix->alloc, off, cap * 8);
    IX_STR(&ix->fast, t);
}

void tsf_lix_unseal(tsf_index *ix)
{
    tsf_lix_tree *t = ix->fast;
    if (!t) return;
    IX_ST(&ix->fast, NULL);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* before any change a fast reader could see */
    tsf_lix_retire(ix, t, t->bytes);              /* fast readers may still hold it */
}
