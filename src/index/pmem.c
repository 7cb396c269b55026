/*
 * pmem.c - persistence layer of the learned index (doc/index.md "Persistence"; design note
 * learned-index.md section 4.1 point 4). The file is mapped into a large reserved address range so it
 * can grow without moving. Durability back-ends:
 *   MSYNC  - MAP_SHARED; persist = msync(MS_SYNC) of the page range.
 *   DAX    - MAP_SHARED_VALIDATE|MAP_SYNC; persist = clflush per 64-byte line + sfence.
 *   SHADOW - MAP_PRIVATE: stores land in a private copy (the "shadow"); persist = pwrite of the pages
 *            to the file. Closing drops what was never persisted, which is a power cut. With a seed,
 *            each still-dirty page is written back or dropped at random, like an OS page cache that
 *            flushed some pages on its own before the power went.
 *   NONE   - MAP_SHARED, no flushes.
 * Dirty pages are tracked in a bitmap so that a sync (group commit) persists exactly what changed.
 */
#include "pmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define PM_RESERVE_MIN (UINT64_C(64) << 30)
#define PM_HUGE (UINT64_C(2) << 20)

static int tsf_pm_map_flags(const pmem *pm)
{
    if (pm->dur == TSF_INDEX_DUR_SHADOW) return MAP_PRIVATE | MAP_FIXED;
    if (pm->dur == TSF_INDEX_DUR_DAX) return MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED;
    return MAP_SHARED | MAP_FIXED;
}

/* Maps file bytes [from, to) at base + from. */
static tsf_status tsf_pm_map_range(pmem *pm, uint64_t from, uint64_t to, tsf_error *err)
{
    if (to <= from) return TSF_OK;
    int prot = pm->readonly ? PROT_READ : PROT_READ | PROT_WRITE;
    void *p = mmap(pm->base + from, to - from, prot, tsf_pm_map_flags(pm), pm->fd, (off_t)from);
    if (p == MAP_FAILED) {
        if (pm->dur == TSF_INDEX_DUR_DAX)
            return tsf_err(err, TSF_ENOTSUP, "index: DAX mapping (MAP_SYNC) not supported here: %s",
                           strerror(errno));
        return tsf_err(err, TSF_EIO, "index: mmap of %llu bytes failed: %s", (unsigned long long)(to - from),
                       strerror(errno));
    }
#ifdef MADV_HUGEPAGE
    /* 2 MiB page-cache folios mapped by one PMD entry where the kernel allows it (fewer TLB misses per
       lookup; base is 2 MiB aligned, so file offsets and addresses agree modulo 2 MiB). A hint only. */
    madvise(p, to - from, MADV_HUGEPAGE);
#endif
    return TSF_OK;
}

static tsf_status tsf_pm_dirty_resize(pmem *pm, uint64_t size, tsf_error *err)
{
    uint64_t words = (size / PM_PAGE + 64) / 64;
    if (words <= pm->dirty_words) return TSF_OK;
    uint64_t nw = words + words / 2;
    uint64_t *d = tsf_realloc(pm->alloc, pm->dirty, pm->dirty_words * 8, nw * 8);
    if (!d) return tsf_err(err, TSF_ENOMEM, "index: dirty bitmap of %llu words", (unsigned long long)nw);
    memset(d + pm->dirty_words, 0, (nw - pm->dirty_words) * 8);
    pm->dirty = d;
    pm->dirty_words = nw;
    return TSF_OK;
}

tsf_status tsf_pm_open(pmem *pm, const char *path, uint32_t dur, int readonly, int truncate,
                   const tsf_allocator *alloc, tsf_error *err)
{
    memset(pm, 0, sizeof *pm);
    pm->fd = -1;
    pm->alloc = alloc;
    pm->dur = dur;
    pm->readonly = readonly;
    if (path == NULL) {
        pm->fd = memfd_create("tsf_index", MFD_CLOEXEC);
        pm->dur = TSF_INDEX_DUR_NONE;
    } else {
        int fl = readonly ? O_RDONLY : O_RDWR | O_CREAT;
        if (truncate && !readonly) fl |= O_TRUNC;
        pm->fd = open(path, fl | O_CLOEXEC, 0644);
    }
    if (pm->fd < 0)
        return tsf_err(err, TSF_EIO, "index: cannot open %s: %s", path ? path : "(memfd)", strerror(errno));
    struct stat st;
    if (fstat(pm->fd, &st) != 0) {
        tsf_status s = tsf_err(err, TSF_EIO, "index: fstat: %s", strerror(errno));
        tsf_pm_close(pm);
        return s;
    }
    uint64_t size = (uint64_t)st.st_size;
    pm->reserve = PM_RESERVE_MIN;
    while (pm->reserve < size * 4) pm->reserve *= 2;
    void *b = mmap(NULL, pm->reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* Address-space limits (ulimit -v, valgrind): settle for less room to grow, down to 1 GiB. */
    while (b == MAP_FAILED && pm->reserve / 2 >= (UINT64_C(1) << 30) && pm->reserve / 2 >= size * 2) {
        pm->reserve /= 2;
        b = mmap(NULL, pm->reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (b == MAP_FAILED) {
        tsf_pm_close(pm);
        return tsf_err(err, TSF_ENOMEM, "index: cannot reserve %llu bytes of address space",
                       (unsigned long long)pm->reserve);
    }
    /* Start the reservation at a 2 MiB boundary (huge page mappings of the file need addresses and file
       offsets to agree modulo 2 MiB): give back the unaligned head; the range stays far above size. */
    uintptr_t ub = (uintptr_t)b, ab = (ub + PM_HUGE - 1) & ~(uintptr_t)(PM_HUGE - 1);
    if (ab > ub && pm->reserve - (ab - ub) >= size + PM_HUGE) {
        munmap(b, ab - ub);
        pm->reserve -= ab - ub;
        b = (void *)ab;
    }
    pm->base = b;
    tsf_status s = tsf_pm_dirty_resize(pm, size, err);
    if (s == TSF_OK) {
        /* A partial trailing page is mapped too; callers only use whole 256-byte units below size. */
        s = tsf_pm_map_range(pm, 0, size, err);
    }
    if (s != TSF_OK) {
        tsf_pm_close(pm);
        return s;
    }
    pm->size = size;
    return TSF_OK;
}

static uint64_t tsf_pm_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void tsf_pm_write_back(pmem *pm, uint64_t off, uint64_t len)
{
    if (off >= pm->size) return;
    if (off + len > pm->size) len = pm->size - off;
    while (len > 0) {
        ssize_t w = pwrite(pm->fd, pm->base + off, len, (off_t)off);
        if (w <= 0) return;
        off += (uint64_t)w;
        len -= (uint64_t)w;
    }
}

/* The power cut: a page cache may have written any subset of the dirty pages back on its own. */
static void tsf_pm_power_cut(pmem *pm)
{
    if (pm->dead || pm->dur != TSF_INDEX_DUR_SHADOW) return;
    if (pm->shadow_seed && pm->dirty) {
        uint64_t s = pm->shadow_seed;
        for (uint64_t p = 0; p * PM_PAGE < pm->size; p++)
            if ((pm->dirty[p / 64] >> (p % 64) & 1) && (tsf_pm_rand(&s) & 1))
                tsf_pm_write_back(pm, p * PM_PAGE, PM_PAGE);
    }
    pm->dead = 1;
}

void tsf_pm_close(pmem *pm)
{
    if (pm->base) tsf_pm_power_cut(pm);
    if (pm->base) munmap(pm->base, pm->reserve);
    if (pm->fd >= 0) close(pm->fd);
    tsf_free(pm->alloc, pm->dirty, pm->dirty_words * 8);
    memset(pm, 0, sizeof *pm);
    pm->fd = -1;
}

/*
 * Extends the file from old_size to new_size with its blocks allocated, so that the stores into the
 * mapping never meet a full disk (a store into a file hole the filesystem cannot back raises SIGBUS).
 * posix_fallocate first; where the filesystem has no fallocate, the size is set and the new range
 * written with zeros, which allocates it just the same. Returns 0 or an errno value (ENOSPC, EFBIG, ...);
 * on failure the file keeps old_size.
 */
static void tsf_pm_give_back(int fd, uint64_t size)
{
    if (ftruncate(fd, (off_t)size) != 0) return; /* best effort: the caller reports the first error */
}

static int tsf_pm_reserve(pmem *pm, uint64_t old_size, uint64_t new_size)
{
    if (pm->grow_limit && new_size > pm->grow_limit) return ENOSPC;
    int e;
    do
        e = posix_fallocate(pm->fd, (off_t)old_size, (off_t)(new_size - old_size));
    while (e == EINTR);
    if (e != EOPNOTSUPP && e != ENOSYS && e != EINVAL) {
        if (e) tsf_pm_give_back(pm->fd, old_size); /* a partial reservation */
        return e;
    }
    if (ftruncate(pm->fd, (off_t)new_size) != 0) return errno;
    static const uint8_t zero[16384];
    for (uint64_t off = old_size; off < new_size;) {
        size_t n = new_size - off < sizeof zero ? (size_t)(new_size - off) : sizeof zero;
        ssize_t w = pwrite(pm->fd, zero, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            tsf_pm_give_back(pm->fd, old_size);
            return e;
        }
        off += (uint64_t)w;
    }
    return 0;
}

tsf_status tsf_pm_grow(pmem *pm, uint64_t new_size, tsf_error *err)
{
    if (new_size <= pm->size) return TSF_OK;
    if (pm->readonly) return tsf_err(err, TSF_ESTATE, "index: read-only handle cannot grow the file");
    if (new_size > pm->reserve)
        return tsf_err(err, TSF_ENOMEM, "index: file would exceed the reserved %llu bytes of address space",
                       (unsigned long long)pm->reserve);
    tsf_status s = tsf_pm_dirty_resize(pm, new_size, err);
    if (s != TSF_OK) return s;
    int e = tsf_pm_reserve(pm, pm->size, new_size);
    if (e)
        return tsf_err(err, TSF_EIO, "index: cannot grow file to %llu bytes: %s",
                       (unsigned long long)new_size, strerror(e));
    /* Remap from the page holding the old end (it may have been partial). */
    uint64_t from = pm->size / PM_PAGE * PM_PAGE;
    if (pm->dur == TSF_INDEX_DUR_SHADOW && from < pm->size) {
        /* A private page that was already written must keep its contents: persist it to the file
           first would break the power-cut model, so copy it back after remapping instead. */
        uint8_t keep[PM_PAGE];
        uint64_t n = pm->size - from;
        memcpy(keep, pm->base + from, n);
        s = tsf_pm_map_range(pm, from, new_size, err);
        if (s == TSF_OK) memcpy(pm->base + from, keep, n);
    } else {
        s = tsf_pm_map_range(pm, from, new_size, err);
    }
    if (s != TSF_OK) return s;
    __atomic_store_n(&pm->size, new_size, __ATOMIC_RELAXED); /* readers validating chains load it */
    return TSF_OK;
}

tsf_status tsf_pm_shrink(pmem *pm, uint64_t new_size, tsf_error *err)
{
    if (new_size >= pm->size || pm->readonly) return TSF_OK;
    uint64_t keep = (new_size + PM_PAGE - 1) / PM_PAGE * PM_PAGE;
    if (keep < pm->size)
        mmap(pm->base + keep, pm->reserve - keep, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    if (ftruncate(pm->fd, (off_t)new_size) != 0)
        return tsf_err(err, TSF_EIO, "index: cannot shrink file: %s", strerror(errno));
    for (uint64_t p = keep / PM_PAGE; p < pm->dirty_words * 64; p++)
        pm->dirty[p / 64] &= ~(UINT64_C(1) << (p % 64));
    __atomic_store_n(&pm->size, new_size, __ATOMIC_RELAXED);
    return TSF_OK;
}

void tsf_pm_dirty(pmem *pm, uint64_t off, uint64_t len)
{
    if (pm->dur == TSF_INDEX_DUR_NONE || len == 0) return;
    for (uint64_t p = off / PM_PAGE, e = (off + len - 1) / PM_PAGE; p <= e; p++)
        pm->dirty[p / 64] |= UINT64_C(1) << (p % 64);
}

/* Persists whole pages [p0, p1] (inclusive page numbers) and clears their dirty bits. */
static tsf_status tsf_pm_persist_pages(pmem *pm, uint64_t p0, uint64_t p1, tsf_error *err)
{
    uint64_t off = p0 * PM_PAGE, len = (p1 - p0 + 1) * PM_PAGE;
    if (off >= pm->size) return TSF_OK;
    if (off + len > pm->size) len = pm->size - off;
    for (uint64_t p = p0; p <= p1; p++) pm->dirty[p / 64] &= ~(UINT64_C(1) << (p % 64));
    pm->persists++;
    if (pm->persist_limit && pm->persists > pm->persist_limit) tsf_pm_power_cut(pm);
    if (pm->dead) return TSF_OK; /* the power is gone: the program runs on, nothing reaches the file */
    switch (pm->dur) {
    case TSF_INDEX_DUR_MSYNC:
        if (msync(pm->base + off, len, MS_SYNC) != 0)
            return tsf_err(err, TSF_EIO, "index: msync at %llu: %s", (unsigned long long)off,
                           strerror(errno));
        break;
    case TSF_INDEX_DUR_SHADOW:
        tsf_pm_write_back(pm, off, len);
        break;
    case TSF_INDEX_DUR_DAX:
#if defined(__x86_64__)
        for (uint64_t o = 0; o < len; o += 64) _mm_clflush(pm->base + off + o);
        _mm_sfence();
#else
        if (msync(pm->base + off, len, MS_SYNC) != 0)
            return tsf_err(err, TSF_EIO, "index: msync at %llu: %s", (unsigned long long)off,
                           strerror(errno));
#endif
        break;
    default:
        break;
    }
    return TSF_OK;
}

tsf_status tsf_pm_persist(pmem *pm, uint64_t off, uint64_t len, tsf_error *err)
{
    if (pm->dur == TSF_INDEX_DUR_NONE || len == 0) return TSF_OK;
    return tsf_pm_persist_pages(pm, off / PM_PAGE, (off + len - 1) / PM_PAGE, err);
}

tsf_status tsf_pm_persist_all(pmem *pm, tsf_error *err)
{
    if (pm->dur == TSF_INDEX_DUR_NONE) return TSF_OK;
    uint64_t pages = (pm->size + PM_PAGE - 1) / PM_PAGE;
    for (uint64_t p = 0; p < pages;) {
        if (!(pm->dirty[p / 64] >> (p % 64) & 1)) {
            p++;
            continue;
        }
        uint64_t q = p;
        while (q + 1 < pages && (pm->dirty[(q + 1) / 64] >> ((q + 1) % 64) & 1)) q++;
        tsf_status s = tsf_pm_persist_pages(pm, p, q, err);
        if (s != TSF_OK) return s;
        p = q + 1;
    }
    return TSF_OK;
}

/* ---- prefault of a fresh range (bulk builds) ------------------------------------------------- */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct tsf_pm_prefault {
    pthread_t th;
    uint8_t *p;
    uint64_t len;
    int stop; /* atomic: the caller is done, the rest is not worth faulting */
    const tsf_allocator *alloc;
};

static void *tsf_pm_prefault_run(void *arg)
{
    tsf_pm_prefault *pf = arg;
    const uint64_t step = PM_HUGE;
    for (uint64_t at = 0; at < pf->len && !__atomic_load_n(&pf->stop, __ATOMIC_RELAXED); at += step) {
        uint64_t n = pf->len - at < step ? pf->len - at : step;
        if (madvise(pf->p + at, n, MADV_POPULATE_WRITE) != 0 && errno != EINTR) break; /* unsupported */
    }
    return NULL;
}

tsf_pm_prefault *tsf_pm_prefault_start(pmem *pm, uint64_t off, uint64_t len)
{
#if defined(__linux__)
    if (pm->readonly || pm->dur == TSF_INDEX_DUR_SHADOW || pm->dur == TSF_INDEX_DUR_DAX ||
        len < 2 * PM_HUGE || off + len > pm->size)
        return NULL;
    tsf_pm_prefault *pf = tsf_calloc(pm->alloc, 1, sizeof *pf);
    if (!pf) return NULL;
    /* whole pages inside the range: the caller's neighbours are not touched */
    uint64_t a = (off + PM_PAGE - 1) & ~(uint64_t)(PM_PAGE - 1), e = (off + len) & ~(uint64_t)(PM_PAGE - 1);
    pf->p = pm->base + a;
    pf->len = e > a ? e - a : 0;
    pf->alloc = pm->alloc;
    if (pthread_create(&pf->th, NULL, tsf_pm_prefault_run, pf) != 0) {
        tsf_free(pm->alloc, pf, sizeof *pf);
        return NULL;
    }
    pm->prefaults++;
    return pf;
#else
    (void)pm;
    (void)off;
    (void)len;
    return NULL;
#endif
}

void tsf_pm_prefault_stop(tsf_pm_prefault *pf)
{
    if (!pf) return;
    __atomic_store_n(&pf->stop, 1, __ATOMIC_RELAXED);
    pthread_join(pf->th, NULL);
    tsf_free(pf->alloc, pf, sizeof *pf);
}
