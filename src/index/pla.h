/*
 * pla.h - error-bounded piecewise linear segmentation (shrinking cone) of sorted uint64 keys. It shapes
 * the learned index's layout and measures data hardness (PLA-eps segment counts) for benchmarks.
 */
#ifndef TSF_INDEX_PLA_H
#define TSF_INDEX_PLA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Segments keys[0..n) (sorted, duplicates allowed) so that within each segment a line through its first
 * point predicts every position within +-eps. Writes the start index of each segment into starts (room
 * for n entries; may be NULL to only count) and returns the number of segments (0 when n == 0).
 */
size_t tsf_pla_segments(const uint64_t *keys, size_t n, uint32_t eps, size_t *starts);
/* Same, and a segment also ends at the first key change once it holds maxlen keys (0 = no limit). */
size_t tsf_pla_segments_max(const uint64_t *keys, size_t n, uint32_t eps, size_t maxlen, size_t *starts);

#endif
