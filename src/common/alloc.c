/* alloc.c - allocation through the optional tsf_allocator hooks. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void *tsf_alloc(const tsf_allocator *a, size_t size)
{
    if (size == 0) size = 1;
    if (a && a->alloc) return a->alloc(a->ud, size);
    return malloc(size);
}

void *tsf_calloc(const tsf_allocator *a, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    void *p = tsf_alloc(a, n * size);
    if (p && n * size != 0) memset(p, 0, n * size);
    return p;
}

void *tsf_realloc(const tsf_allocator *a, void *p, size_t old_size, size_t new_size)
{
    if (new_size == 0) new_size = 1;
    if (a && a->realloc) return a->realloc(a->ud, p, old_size, new_size);
    if (a && a->alloc) {
        void *q = a->alloc(a->ud, new_size);
        if (!q) return NULL;
        if (p) {
            memcpy(q, p, old_size < new_size ? old_size : new_size);
            if (a->free) a->free(a->ud, p, old_size);
        }
        return q;
    }
    return realloc(p, new_size);
}

void tsf_free(const tsf_allocator *a, void *p, size_t size)
{
    if (!p) return;
    if (a && a->free) {
        a->free(a->ud, p, size);
        return;
    }
    if (a && a->alloc) return; /* alloc without free: the caller owns the arena */
    free(p);
}
