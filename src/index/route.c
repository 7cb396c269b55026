/*
 * route.c - the routing models of internal nodes: the multiplier that spreads a key span over a fanout,
 * the exact key range each child slot receives (build and open-time validation), and the writer's
 * routing of a key to its leaf.
 */
#include "lix_read.h"

uint64_t tsf_lix_mul_for(uint64_t f, uint64_t span)
{
    if (f <= 1) return 0;
    unsigned __int128 q = ((unsigned __int128)f << 64) / ((unsigned __int128)span + 1);
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/*
 * Range of slot i of a node (origin, mul, f) responsible for [lo, hi]: the keys the routing function
 * sends to i. slot(k) >= i  <=>  k >= origin + ceil(i * 2^64 / mul), for i >= 1. Empty -> lo=1, hi=0.
 */
void tsf_lix_child_range(uint64_t origin, uint64_t mul, uint64_t f, uint64_t lo, uint64_t hi, uint64_t i,
                         uint64_t *clo, uint64_t *chi)
{
    unsigned __int128 lim = (unsigned __int128)UINT64_MAX - origin;
    uint64_t s = lo, e = hi;
    int empty = lo > hi;
    if (i > 0) {
        if (mul == 0) {
            empty = 1;
        } else {
            unsigned __int128 t = (((unsigned __int128)i << 64) + mul - 1) / mul;
            if (t > lim)
                empty = 1;
            else if (origin + (uint64_t)t > s)
                s = origin + (uint64_t)t;
        }
    }
    if (i + 1 < f && mul != 0) {
        unsigned __int128 t = (((unsigned __int128)(i + 1) << 64) + mul - 1) / mul;
        if (t <= lim) {
            uint64_t next = origin + (uint64_t)t; /* >= 1 since t >= 1 */
            if (next - 1 < e) e = next - 1;
        }
    }
    if (empty || s > e) {
        *clo = 1;
        *chi = 0;
    } else {
        *clo = s;
        *chi = e;
    }
}

uint64_t tsf_lix_route(const tsf_index *ix, uint64_t key)
{
    return tsf_lix_route_from(ix->pm.base, ix->root_off, ix->root_origin, ix->root_mul, ix->root_fanout, key,
                         (ix->flags & TSF_INDEX_LOCAL_SEARCH) != 0);
}
