/*
 * exact.h - checks that a page of an explicit encoding reads back bit for bit before it is stored
 * (exact.c; doc/writer.md "Values an encoding cannot store").
 */
#ifndef TSF_WRITE_EXACT_H
#define TSF_WRITE_EXACT_H

#include "../common/internal.h"

/* 1 when pages of type t in encoding e can lose a value and are checked. */
int tsf_wexact_needed(tsf_type t, tsf_encoding e);

/*
 * Checks the n values `vals` against their encoded stream [src, src + len): TSF_OK with why[0] = 0
 * when every value reads back the same (any NaN as any NaN; GORILLA_V1: in the Java reader), else
 * TSF_OK with `why` naming the type, encoding, first value lost (its time when `times` is given)
 * and what is read instead. Other statuses: out of memory.
 */
tsf_status tsf_wexact_check(const tsf_codec *codec, const tsf_allocator *a, tsf_type t, tsf_encoding e,
                            const void *vals, size_t n, const uint8_t *src, size_t len, const int64_t *times,
                            char *why, size_t why_cap, tsf_error *err);

#endif
