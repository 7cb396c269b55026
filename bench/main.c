/* main.c - tsf-bench: runs one experiment of ../shared/BENCHMARKS.md by name. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
    const char *options; /* what the experiment reads: "--name=" takes a value, "--name" is a flag */
} experiment;

static const experiment EXPERIMENTS[] = {
    {"codec", bench_codec, "E1: TS_2DIFF and GORILLA encode/decode, per-value vs batch vs SIMD",
     "--rows= --reps= --page= --json"},
    {"write", bench_write, "E4: the writer, column-wise tablets vs row by row",
     "--case= --data= --aligned --compression= --encoding= --rows= --reps= --threads= --out= --json --budget-mb= "
     "--lz4-probe= --gorilla-compact= --path= --setter= --sink= --pregen --each"},
    {"filter", bench_filter, "E3: time filtering inside a TS_2DIFF page, conservative vs exact block bound",
     "--blocks= --runs= --listing= --json"},
    {"read", bench_read, "E2: reads (row, batch, SIMD, scan floor), time windows, threads; --case A",
     "--case= --rows= --threads= --reps= --json --keep= --select= --paths= --clock= --check="},
    {"arrow", bench_arrow, "the E2 file exported as an Arrow C stream vs the plain simd query, same run",
     "--rows= --threads= --reps= --select= --keep= --clock= --copy --json"},
    {"index", bench_index, "E5: PLTree learned index vs binary search, interpolation, B+-tree",
     "--keys= --dataset= --threads= --ops= --reps= --only= --json"},
    {"dataset", bench_dataset, "grouped aggregation over 16 files (tsf_dataset_aggregate) vs the scan, threads, sources",
     "--files= --rows= --reps= --slow-reps= --dir= --queries= --sources= --latency-ms= --mbps= --pread --mmap --json"},
    {"dataset-open", bench_dataset_open, "tsf_dataset_open of 1000 small files: no cache, cold cache, warm cache",
     "--files= --rows= --reps= --dir= --json"},
    {"compress", bench_compress, "bytes/point of every real series: Java defaults vs AUTO vs each encoding",
     "--data= --compression= --lz4-probe= --reps= --page-points= --budget-kb= --json"},
};

/* How `arg` appears in an options list: 0 = not there, 1 = a flag, 2 = takes a value. */
static int option_kind(const char *options, const char *arg)
{
    size_t n = strlen(arg);
    for (const char *p = options; (p = strstr(p, arg)) != NULL; p += n) {
        if (p != options && p[-1] != ' ') continue;
        if (p[n] == ' ' || p[n] == '\0') return 1;
        if (p[n] == '=' && (p[n + 1] == ' ' || p[n + 1] == '\0')) return 2;
    }
    return 0;
}

/* Every argument is an option of the experiment (with its value): a misspelt option is an error, never a
 * run on the defaults. */
static int check_args(const experiment *e, int argc, char **argv)
{
    for (int a = 2; a < argc; a++) {
        int k = strncmp(argv[a], "--", 2) == 0 ? option_kind(e->options, argv[a]) : 0;
        if (k == 2 && a + 1 < argc) {
            a++;
            continue;
        }
        if (k == 1) continue;
        if (k == 2)
            fprintf(stderr, "tsf-bench %s: %s needs a value\n", e->name, argv[a]);
        else
            fprintf(stderr, "tsf-bench %s: unknown argument '%s' (options: %s)\n", e->name, argv[a], e->options);
        return 1;
    }
    return 0;
}

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
                char file[32];
                snprintf(file, sizeof file, "%s", EXPERIMENTS[i].name);
                for (char *p = file; *p; p++)
                    if (*p == '-') *p = '_';
                printf("options: %s\n(what they do: the comment at the top of bench/%s.c)\n", EXPERIMENTS[i].options,
                       file);
                return 0;
            }
        if (check_args(&EXPERIMENTS[i], argc, argv)) return 2;
        return EXPERIMENTS[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "tsf-bench: unknown experiment '%s'\n", argv[1]);
    usage(stderr);
    return 1;
}
