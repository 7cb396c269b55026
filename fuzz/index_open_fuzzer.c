/*
 * index_open_fuzzer.c - opens arbitrary bytes as a learned-index file (src/index). The input is placed
 * in an anonymous in-memory file and opened read-only, then every read operation and the invariant
 * check run; then it is opened read-write and written to. Each call must return TSF_OK,
 * TSF_ENOTFOUND or TSF_ECORRUPT (never crash, hang or touch memory outside the mapping).
 *
 * Built with -DINDEX_FUZZ_MAKE_SEEDS (and linked with libtsf) it instead writes the seed corpus of
 * valid index files into the folder given as argv[1].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tsf_index.h"
#include "fuzz_entry.h"

#ifndef INDEX_FUZZ_MAKE_SEEDS

static int visit(uint64_t k, uint64_t v, void *arg)
{
    (void)k;
    (void)v;
    return ++*(int *)arg >= 5000;
}

static void exercise(const char *path, uint32_t flags)
{
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.durability = TSF_INDEX_DUR_NONE;
    o.flags = flags;
    tsf_index *ix = NULL;
    tsf_error err;
    tsf_status s = tsf_index_open(&ix, path, &o, &err);
    if (s != TSF_OK) {
        if (s != TSF_ECORRUPT && s != TSF_EIO) abort();
        return;
    }
    uint64_t probes[] = {0, 1, 42, 1000, UINT64_C(1) << 40, UINT64_C(1) << 63, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint64_t k, v;
        tsf_status g = tsf_index_get(ix, probes[i], &v, &err);
        if (g != TSF_OK && g != TSF_ENOTFOUND && g != TSF_ECORRUPT) abort();
        g = tsf_index_lower_bound(ix, probes[i], &k, &v, &err);
        if (g != TSF_OK && g != TSF_ENOTFOUND && g != TSF_ECORRUPT) abort();
        g = tsf_index_floor(ix, probes[i], &k, &v, &err);
        if (g != TSF_OK && g != TSF_ENOTFOUND && g != TSF_ECORRUPT) abort();
    }
    int seen = 0;
    s = tsf_index_scan(ix, 0, UINT64_MAX, visit, &seen, &err);
    if (s != TSF_OK && s != TSF_ECORRUPT) abort();
    s = tsf_index_check(ix, &err);
    if (s != TSF_OK && s != TSF_ECORRUPT) abort();
    if (!(flags & TSF_INDEX_READONLY)) {
        for (uint64_t i = 0; i < 200; i++) {
            tsf_status w = tsf_index_insert(ix, i * UINT64_C(0x9E3779B97F4A7C15), i, &err);
            if (w != TSF_OK && w != TSF_ECORRUPT) abort();
        }
        tsf_status w = tsf_index_delete(ix, 0, &err);
        if (w != TSF_OK && w != TSF_ENOTFOUND && w != TSF_ECORRUPT) abort();
    }
    tsf_index_close(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("index_fuzz", 0);
    if (fd < 0) return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    exercise(path, TSF_INDEX_READONLY);
    if (ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size) exercise(path, 0);
    close(fd);
    return 0;
}

#else /* seed generator */

static int write_seed(const char *dir, const char *name, uint32_t mode, uint32_t flags, size_t n,
                      size_t inserts)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = mode;
    o.flags = flags;
    tsf_index *ix;
    tsf_error err;
    if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) return 1;
    uint64_t *k = malloc((n + 1) * 8), *v = malloc((n + 1) * 8);
    for (size_t i = 0; i < n; i++) {
        k[i] = (flags & TSF_INDEX_ALLOW_DUPLICATES) ? i / 2 * 1000 : i * i * 977 + (i % 7);
        v[i] = i;
    }
    int rc = tsf_index_bulk_load(ix, k, v, n, &err) != TSF_OK;
    for (size_t i = 0; i < inserts && !rc; i++) rc = tsf_index_insert(ix, i * 7919 + 3, i, &err) != TSF_OK;
    if (!rc && inserts) rc = tsf_index_delete(ix, 3, &err) != TSF_OK;
    if (!rc) rc = tsf_index_sync(ix, &err) != TSF_OK;
    tsf_index_close(ix);
    free(k);
    free(v);
    /* Drop the unused, zeroed tail of the file so the seed stays small. */
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len);
    size_t got = fread(b, 1, (size_t)len, f);
    fclose(f);
    size_t full = got;
    while (got > 512 && b[got - 1] == 0) got--;
    /* Grow back until the trimmed file opens and passes the invariant check. */
    for (got = (got + 255) / 256 * 256; got <= full; got += 256) {
        if (truncate(path, (off_t)got) != 0) break;
        tsf_index_options_init(&o);
        o.flags = TSF_INDEX_READONLY;
        if (tsf_index_open(&ix, path, &o, &err) != TSF_OK) continue;
        tsf_status c = tsf_index_check(ix, &err);
        tsf_index_close(ix);
        if (c == TSF_OK) break;
    }
    if (got > full) rc = 1;
    free(b);
    if (rc) fprintf(stderr, "seed %s failed: %s\n", name, err.message);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int rc = 0;
    rc |= write_seed(argv[1], "empty_sorted.ix", TSF_INDEX_SORTED, 0, 0, 0);
    rc |= write_seed(argv[1], "sorted_200.ix", TSF_INDEX_SORTED, 0, 200, 0);
    rc |= write_seed(argv[1], "sorted_overflow.ix", TSF_INDEX_SORTED, 0, 100, 120);
    rc |= write_seed(argv[1], "dynamic_150.ix", TSF_INDEX_DYNAMIC, 0, 150, 60);
    rc |= write_seed(argv[1], "dup_sorted.ix", TSF_INDEX_SORTED, TSF_INDEX_ALLOW_DUPLICATES, 64, 0);
    return rc;
}

#endif
