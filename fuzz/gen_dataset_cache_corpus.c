/*
 * gen_dataset_cache_corpus.c - writes the seed files of fuzz/corpora/dataset_cache_fuzzer: the metadata
 * caches of small datasets of TsFiles made by our writer (tests/read/gen_file.h), each as [mode][cache
 * bytes] with mode 0 and 1 (recompute the checksum), plus an empty cache. Build and run from the repository
 * root:
 *   cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude fuzz/gen_dataset_cache_corpus.c build/libtsf.a \
 *      -lz -llzma -lzstd -llz4 -lsnappy -lm -lpthread -o build/gen_dataset_cache_corpus
 *   build/gen_dataset_cache_corpus fuzz/corpora/dataset_cache_fuzzer
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tests/read/gen_file.h"

static int put(const char *dir, const char *name, int mode, const uint8_t *b, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    uint8_t m = (uint8_t)mode;
    if (!f || fwrite(&m, 1, 1, f) != 1 || fwrite(b, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    printf("%s: %zu bytes\n", path, n + 1);
    return 0;
}

/* The cache of a dataset of nfiles generated files (rows each), as seeds gen-<name>-0 / -1. */
static int seed(const char *out, const char *name, size_t nfiles, size_t rows)
{
    char dir[] = "/tmp/tsf_dscseed_XXXXXX", cache[256], paths[8][256];
    const char *pp[8];
    if (!mkdtemp(dir)) return 1;
    for (size_t i = 0; i < nfiles; i++) {
        gen_buf b = {0};
        char why[300];
        if (gen_file(&b, rows + i * 7, 16, 0, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            return 1;
        }
        snprintf(paths[i], sizeof paths[i], "%s/f%zu.tsfile", dir, i);
        pp[i] = paths[i];
        FILE *f = fopen(paths[i], "wb");
        if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f)) return 1;
        free(b.p);
        struct timespec t[2] = {{1600000000, 0}, {1600000000, 0}}; /* old enough to be cached */
        if (utimensat(AT_FDCWD, paths[i], t, 0)) return 1;
    }
    snprintf(cache, sizeof cache, "%s/cache", dir);
    tsf_dataset_options o;
    tsf_dataset_options_init(&o);
    o.cache_path = cache;
    tsf_dataset *ds = NULL;
    tsf_error e;
    if (tsf_dataset_open(&ds, pp, nfiles, &o, &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    tsf_dataset_close(ds);
    FILE *f = fopen(cache, "rb");
    uint8_t buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    char nm[64];
    int rc = !n;
    for (int m = 0; m < 2 && !rc; m++) {
        snprintf(nm, sizeof nm, "gen-%s-%d", name, m);
        rc = put(out, nm, m, buf, n);
    }
    for (size_t i = 0; i < nfiles; i++) unlink(paths[i]);
    unlink(cache);
    rmdir(dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_dataset_cache_corpus DIR\n");
        return 2;
    }
    return seed(argv[1], "one", 1, 12) || seed(argv[1], "three", 3, 40) || seed(argv[1], "empty", 0, 0);
}
