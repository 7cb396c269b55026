/* internal.h - helpers every module uses: error reporting, allocation through the hooks, CPU paths. */
#ifndef TSF_INTERNAL_H
#define TSF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tsf.h"
#include "tsf_experimental.h"
#include "compiler.h"

/* Records code + formatted message in err (if non-NULL) and returns code. */
tsf_status tsf_err(tsf_error *err, tsf_status code, const char *fmt, ...) TSF_PRINTF(3, 4);
/* Clears err (code TSF_OK, empty message). */
void tsf_err_clear(tsf_error *err);

/* Allocation through an optional hook table (NULL = libc). */
void *tsf_alloc(const tsf_allocator *a, size_t size);
void *tsf_calloc(const tsf_allocator *a, size_t n, size_t size); /* overflow-checked, zeroed */
void *tsf_realloc(const tsf_allocator *a, void *p, size_t old_size, size_t new_size);
void tsf_free(const tsf_allocator *a, void *p, size_t size);

/* CPU features (queried on each call; callers resolve once per handle). */
enum {
    TSF_CPU_SSE41 = 1u << 0,
    TSF_CPU_AVX2 = 1u << 1,
    TSF_CPU_BMI2 = 1u << 2,
    TSF_CPU_AVX512 = 1u << 3, /* F + BW + VL + DQ with OS support */
    TSF_CPU_AVX512VBMI = 1u << 4,
};
unsigned tsf_cpu_features(void);

/*
 * Resolves a requested path: AUTO -> the best the CPU has. A SIMD path the CPU lacks degrades to
 * the best available below it.
 */
tsf_codec_path tsf_path_resolve(tsf_codec_path requested);

#endif
