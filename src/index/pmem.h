/*
 * pmem.h - the persistence layer of the learned index: a growable memory-mapped file with explicit
 * persist points, dirty-page tracking for group commit, and a shadow test mode (power-cut simulation).
 */
#ifndef TSF_INDEX_PMEM_H
#define TSF_INDEX_PMEM_H

#include <stddef.h>
#include <stdint.h>

#include "../common/internal.h"
#include "tsf_index.h"

#define PM_PAGE 4096u

typedef struct pmem {
    int fd;
    uint32_t dur; /* tsf_index_durability */
    int readonly;
    uint8_t *base;    /* start of the reserved address range */
    uint64_t reserve; /* bytes of address space reserved */
    uint64_t size;    /* mapped = file size */
    uint64_t *dirty;  /* one bit per page not yet persisted */
    uint64_t dirty_words;
    const tsf_allocator *alloc;
    uint64_t persists;      /* persist operations so far */
    uint64_t persist_limit; /* SHADOW: drop persists after this many (0 = never) */
    uint64_t shadow_seed;   /* SHADOW: random writeback of dirty pages at the power cut */
    int dead;               /* SHADOW: the power is gone; nothing reaches the file any more */
    uint64_t dead_bytes;    /* file bytes no longer referenced since the last build (rebuilt leaves, logs) */
    uint64_t prefaults;     /* prefault threads started (tsf_pm_prefault_start; tests) */
    uint64_t grow_limit;    /* test hook: growing the file beyond this many bytes fails with ENOSPC (0 = none) */
} pmem;

/* Opens (creating when needed) path, or anonymous memory when path is NULL. */
tsf_status tsf_pm_open(pmem *pm, const char *path, uint32_t dur, int readonly, int truncate,
                   const tsf_allocator *alloc, tsf_error *err);
/* Unmaps; in SHADOW mode unsynced pages are dropped (or kept at random with shadow_seed). */
void tsf_pm_close(pmem *pm);
/* Grows the file (and mapping) to at least new_size bytes. */
tsf_status tsf_pm_grow(pmem *pm, uint64_t new_size, tsf_error *err);
/* Shrinks the file to new_size (after compaction moved everything below it). */
tsf_status tsf_pm_shrink(pmem *pm, uint64_t new_size, tsf_error *err);
/* Records that [off, off+len) was written. */
void tsf_pm_dirty(pmem *pm, uint64_t off, uint64_t len);
/* Makes [off, off+len) durable now (ordering point). */
tsf_status tsf_pm_persist(pmem *pm, uint64_t off, uint64_t len, tsf_error *err);
/* Makes every dirty page durable. */
tsf_status tsf_pm_persist_all(pmem *pm, tsf_error *err);

/*
 * Prefault of a fresh range while the caller fills it (bulk builds): a helper thread faults
 * [off, off+len) in writable, 2 MiB at a time, ahead of the caller's stores, so the kernel's page-cache
 * allocation and zeroing of a new file range runs beside the build instead of inside its stores. Best
 * effort: NULL (nothing started) where it does not apply (no MADV_POPULATE_WRITE, not a shared file
 * mapping, no thread); stop joins the thread.
 */
typedef struct tsf_pm_prefault tsf_pm_prefault;
tsf_pm_prefault *tsf_pm_prefault_start(pmem *pm, uint64_t off, uint64_t len);
void tsf_pm_prefault_stop(tsf_pm_prefault *pf);

#endif
