/*
 * pla.c - one-pass shrinking-cone segmentation (learned-index.md sections 1.3 and 4.4: the layout of the
 * two-phase build, and the hardness numbers PLA-32/256/4096 of the benchmark). A segment starts at a
 * point (x0, y0); every later point narrows the cone of slopes that keep all points within +-eps of the
 * line through (x0, y0); a point whose own slope leaves the cone starts the next segment. Equal keys
 * stay in the current segment. With a maximum length, a segment is also cut at the first key change once
 * it holds that many keys (the learned index bounds its leaves so that a leaf rebuild stays cheap).
 * Doubles are fine here: the layout only shapes the partition, exact
 * routing comes from the integer models built afterwards.
 */
#include "pla.h"

size_t tsf_pla_segments(const uint64_t *keys, size_t n, uint32_t eps, size_t *starts)
{
    return tsf_pla_segments_max(keys, n, eps, 0, starts);
}

size_t tsf_pla_segments_max(const uint64_t *keys, size_t n, uint32_t eps, size_t maxlen, size_t *starts)
{
    if (n == 0) return 0;
    size_t count = 0, s = 0;
    double lo = 0.0, hi = 0.0;
    int open = 0; /* cone initialised by a second distinct key */
    if (starts) starts[count] = 0;
    count++;
    for (size_t j = 1; j < n; j++) {
        if (keys[j] == keys[j - 1]) continue;
        if (maxlen && j - s >= maxlen) { /* long enough: cut at this key change */
            s = j;
            open = 0;
            if (starts) starts[count] = j;
            count++;
            continue;
        }
        double dx = (double)(keys[j] - keys[s]);
        double dy = (double)(j - s);
        if (dx <= 0.0) continue; /* equal to the segment's first key */
        double slope = dy / dx;
        if (open && (slope < lo || slope > hi)) {
            s = j;
            open = 0;
            if (starts) starts[count] = j;
            count++;
            continue;
        }
        double nhi = (dy + eps) / dx, nlo = (dy - eps) / dx;
        if (!open) {
            hi = nhi;
            lo = nlo;
            open = 1;
        } else {
            if (nhi < hi) hi = nhi;
            if (nlo > lo) lo = nlo;
        }
    }
    return count;
}
