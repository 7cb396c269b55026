/*
 * gen_open_scan_corpus.c - writes the seed files of fuzz/corpora/open_scan_fuzzer: small TsFiles made
 * by our writer (tests/read/gen_file.h: non-aligned, aligned with every type and nulls, a table),
 * never golden files. Build and run from the repository root:
 *   cc -std=c11 -O2 -D_GNU_SOURCE -Iinclude fuzz/gen_open_scan_corpus.c build/libtsf.a \
 *      -lz -llzma -lzstd -llz4 -lsnappy -lm -lpthread -o build/gen_open_scan_corpus
 *   build/gen_open_scan_corpus fuzz/corpora/open_scan_fuzzer
 */
#include "../tests/read/gen_file.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_open_scan_corpus DIR\n");
        return 2;
    }
    static const struct {
        const char *name;
        size_t rows, flush;
        uint32_t page;
    } seeds[] = {{"gen-small-multichunk", 40, 20, 10}, {"gen-pages", 150, 0, 64}, {"gen-one-page", 12, 0, 1000}};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        gen_buf b = {0};
        char why[300], path[1024];
        if (gen_file(&b, seeds[i].rows, seeds[i].page, seeds[i].flush, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s", argv[1], seeds[i].name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f)) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        printf("%s: %zu bytes\n", path, b.n);
        free(b.p);
    }
    return 0;
}
