/* util.c - timing, percentiles, generators and option parsing for tsf-bench. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_percentile(const double *x, size_t n, double p)
{
    if (n == 0) return 0;
    double *s = malloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    double v = s[rank - 1];
    free(s);
    return v;
}

uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t bench_rng_int(bench_rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(bench_rng_next(r) % span);
}

double bench_rng_double(bench_rng *r, double lo, double hi)
{
    double u = (double)(bench_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return lo + (hi - lo) * u;
}

void bench_w0_int32(int32_t *v, size_t n, uint64_t seed)
{
    bench_rng r = {seed};
    int32_t x = 0;
    for (size_t i = 0; i < n; i++) {
        x += (int32_t)bench_rng_int(&r, -100, 100);
        v[i] = x;
    }
}

void bench_w0_int64(int64_t *v, size_t n, uint64_t seed)
{
    bench_rng r = {seed};
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        x += bench_rng_int(&r, -100, 100);
        v[i] = x;
    }
}

void bench_w0_float(float *v, size_t n, uint64_t seed)
{
    bench_rng r = {seed};
    float x = 0;
    for (size_t i = 0; i < n; i++) {
        x += (float)bench_rng_double(&r, -5.0, 5.0);
        v[i] = x;
    }
}

void bench_w0_double(double *v, size_t n, uint64_t seed)
{
    bench_rng r = {seed};
    double x = 0;
    for (size_t i = 0; i < n; i++) {
        x += bench_rng_double(&r, -0.5, 0.5);
        v[i] = x;
    }
}

void bench_timestamps(int64_t *t, size_t n, int64_t jitter, uint64_t seed)
{
    bench_rng r = {seed};
    int64_t base = 1600000000000ll;
    for (size_t i = 0; i < n; i++)
        t[i] = base + (int64_t)i * 1000 + (jitter ? bench_rng_int(&r, -jitter, jitter) : 0);
}

const char *bench_opt(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return NULL;
}

int bench_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

long long bench_opt_ll(int argc, char **argv, const char *name, long long def)
{
    const char *s = bench_opt(argc, argv, name);
    if (!s) return def;
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K') v *= 1e3;
    else if (*end == 'm' || *end == 'M') v *= 1e6;
    else if (*end == 'g' || *end == 'G') v *= 1e9;
    return (long long)v;
}

void bench_flush_caches(void)
{
    size_t n = 256u << 20;
    volatile uint8_t *p = malloc(n);
    if (!p) return;
    for (size_t i = 0; i < n; i += 64) p[i] = (uint8_t)i;
    uint8_t s = 0;
    for (size_t i = 0; i < n; i += 64) s ^= p[i];
    (void)s;
    free((void *)p);
}

void bench_drop_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
    (void)fdatasync(fd);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

void bench_print_machine(FILE *out)
{
    char model[256] = "unknown cpu";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    fprintf(out, "# machine: %s, %ld cpus, tsfile-c %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
            tsf_version_string());
}
