/* main.c - tsf-bench: runs one experiment of ../shared/BENCHMARKS.md by name. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} experiment;

static const experiment EXPERIMENTS[] = {
    {"codec", bench_codec, "E1: TS_2DIFF and GORILLA encode/decode, per-value vs batch vs SIMD"},
    {"write", bench_write, "E4: the writer, column-wise tablets vs row by row"},
    {"filter", bench_filter, "E3: time filtering inside a TS_2DIFF page, conservative vs exact block bound"},
    {"read", bench_read, "E2: reads (row, batch, SIMD, scan floor), time windows, threads; --case A"},
    {"index", bench_index, "E5: PLTree learned index vs binary search, interpolation, B+-tree"},
    {"compress", bench_compress, "bytes/point of every real series: Java defaults vs AUTO vs each encoding"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tsf-bench <experiment> [options] [--json]\n\nexperiments:\n");
    for (size_t i = 0; i < sizeof EXPERIMENTS / sizeof EXPERIMENTS[0]; i++)
        fprintf(out, "  %-10s %s\n", EXPERIMENTS[i].name, EXPERIMENTS[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    for (size_t i = 0; i < sizeof EXPERIMENTS / sizeof EXPERIMENTS[0]; i++) {
        if (strcmp(argv[1], EXPERIMENTS[i].name) != 0) continue;
        for (int a = 2; a < argc; a++) /* `tsf-bench EXP --help`: usage, never a run */
            if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                printf("usage: tsf-bench %s [options] [--json]\n  %s\n", EXPERIMENTS[i].name, EXPERIMENTS[i].help);
                printf("(options: the comment at the top of bench/%s.c)\n", EXPERIMENTS[i].name);
                return 0;
            }
        return EXPERIMENTS[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "tsf-bench: unknown experiment '%s'\n", argv[1]);
    usage(stderr);
    return 1;
}
