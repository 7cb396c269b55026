/*
 * codec.c - E1 (../shared/BENCHMARKS.md): TS_2DIFF encode/decode for INT32 and INT64 on W0 data,
 * per-value vs batch (scalar) vs batch+SIMD, plus GORILLA DOUBLE (walk and mixed data) and two copy
 * ceilings (glibc memcpy and the best copy the machine offers: rep movsb or non-temporal stores).
 *
 * Streams are written page by page (--page values per page, 10,000 by default) as a writer does.
 * Decoding runs two ways: page by page into one reused buffer (as the reader does) and the whole
 * array at once (all rows encoded as one stream, decoded by one call into one large array: bounded by
 * store bandwidth).
 * Every path's bytes and decoded values are compared with the scalar path and with the input; the
 * benchmark aborts on any difference. p50/p90 are over the per-run times (p90 = the slower rate).
 *
 * usage: tsf-bench codec [--rows N] [--reps R] [--page P] [--json]
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct cfg {
    size_t rows, reps, page;
    int json;
} cfg;

typedef struct result {
    const char *type, *enc, *op, *path, *mode, *data, *unit;
    double p50, p90, bits, speedup;
    int available;
} result;

static void emit(const cfg *c, const result *r)
{
    if (c->json) {
        if (!r->available) {
            printf("{\"bench\":\"codec\",\"type\":\"%s\",\"encoding\":\"%s\",\"op\":\"%s\",\"path\":\"%s\","
                   "\"mode\":\"%s\",\"data\":\"%s\",\"p50\":null,\"p90\":null,\"unit\":\"%s\",\"available\":"
                   "false}\n",
                   r->type, r->enc, r->op, r->path, r->mode, r->data, r->unit);
            return;
        }
        printf("{\"bench\":\"codec\",\"type\":\"%s\",\"encoding\":\"%s\",\"op\":\"%s\",\"path\":\"%s\","
               "\"mode\":\"%s\","
               "\"data\":\"%s\",\"p50\":%.2f,\"p90\":%.2f,\"unit\":\"%s\",\"bits_per_value\":%.3f,"
               "\"speedup_vs_per_value\":%.2f,\"rows\":%zu,\"reps\":%zu}\n",
               r->type, r->enc, r->op, r->path, r->mode, r->data, r->p50, r->p90, r->unit, r->bits,
               r->speedup, c->rows, c->reps);
        return;
    }
    if (!r->available) {
        printf("%-7s %-9s %-9s %-10s %-6s %-6s %12s %12s  %-11s\n", r->type, r->enc, r->op, r->path, r->mode,
               r->data, "unavailable", "", r->unit);
        return;
    }
    char sp[32] = "";
    if (r->speedup > 0) snprintf(sp, sizeof sp, "%.2fx", r->speedup);
    char bits[32] = "";
    if (r->bits > 0) snprintf(bits, sizeof bits, "%.3f", r->bits);
    printf("%-7s %-9s %-9s %-10s %-6s %-6s %12.1f %12.1f  %-11s %9s %8s\n", r->type, r->enc, r->op, r->path,
           r->mode, r->data, r->p50, r->p90, r->unit, bits, sp);
}

/* ---- timing ---------------------------------------------------------------------------------- */

typedef int (*bench_fn)(void *ctx); /* returns 0 on success */

/* Runs fn reps times (after one warm-up) and stores per-run seconds; returns 0 or the failure. */
static int time_runs(bench_fn fn, void *ctx, size_t reps, double *secs)
{
    if (fn(ctx)) return 1;
    for (size_t r = 0; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        if (fn(ctx)) return 1;
        secs[r] = (double)(bench_now_ns() - t0) * 1e-9;
    }
    return 0;
}

/* rate = amount / time; p90 of the rate is the p90 (slower) time. */
static void rates(const double *secs, size_t reps, double amount, double *p50, double *p90)
{
    *p50 = amount / bench_percentile(secs, reps, 50);
    *p90 = amount / bench_percentile(secs, reps, 90);
}

/* ---- a paged stream ----------------------------------------------------------------------------- */

typedef struct paged {
    uint8_t *buf; /* all pages back to back */
    size_t cap;
    size_t *off; /* npages + 1 offsets */
    size_t npages;
} paged;

typedef struct job {
    const cfg *c;
    tsf_codec *codec;
    tsf_type type;
    tsf_encoding enc;
    size_t vsize;
    const void *values;
    paged *st;
    uint8_t *out;         /* decoded array (array mode) */
    uint8_t *page;        /* one page (page mode) */
    const uint8_t *whole; /* the whole array as one stream (array mode) */
    size_t whole_len;
    int array_mode;
    tsf_error err;
} job;

static int do_encode(void *p)
{
    job *j = (job *)p;
    size_t pos = 0, np = 0;
    const uint8_t *v = (const uint8_t *)j->values;
    j->st->off[0] = 0;
    for (size_t i = 0; i < j->c->rows; i += j->c->page, np++) {
        size_t n = j->c->rows - i < j->c->page ? j->c->rows - i : j->c->page, w = 0;
        tsf_status s = tsf_codec_encode(j->codec, j->type, j->enc, v + i * j->vsize, n, j->st->buf + pos,
                                        j->st->cap - pos, &w, &j->err);
        if (s != TSF_OK) return 1;
        pos += w;
        j->st->off[np + 1] = pos;
    }
    j->st->npages = np;
    return 0;
}

static int do_decode(void *p)
{
    job *j = (job *)p;
    if (j->array_mode)
        return tsf_codec_decode(j->codec, j->type, j->enc, j->whole, j->whole_len, j->out, j->c->rows, NULL,
                                &j->err) != TSF_OK;
    for (size_t k = 0, i = 0; k < j->st->npages; k++, i += j->c->page) {
        size_t n = j->c->rows - i < j->c->page ? j->c->rows - i : j->c->page;
        tsf_status s = tsf_codec_decode(j->codec, j->type, j->enc, j->st->buf + j->st->off[k],
                                        j->st->off[k + 1] - j->st->off[k], j->page, n, NULL, &j->err);
        if (s != TSF_OK) return 1;
    }
    return 0;
}

/* ---- copies ------------------------------------------------------------------------------------------ */

typedef struct copyjob {
    uint8_t *dst;
    const uint8_t *src;
    size_t n;
    int kind; /* 0 memcpy, 1 rep movsb, 2 non-temporal stores */
} copyjob;

#if defined(__x86_64__)
static void copy_movsb(uint8_t *d, const uint8_t *s, size_t n)
{
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

__attribute__((target("avx512f"))) static void copy_nt512(uint8_t *d, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (((uintptr_t)(d + i) & 63) && i < n) d[i] = s[i], i++;
    for (; i + 256 <= n; i += 256) {
        __m512i a = _mm512_loadu_si512((const void *)(s + i)),
                b = _mm512_loadu_si512((const void *)(s + i + 64));
        __m512i c = _mm512_loadu_si512((const void *)(s + i + 128)),
                e = _mm512_loadu_si512((const void *)(s + i + 192));
        _mm512_stream_si512((void *)(d + i), a);
        _mm512_stream_si512((void *)(d + i + 64), b);
        _mm512_stream_si512((void *)(d + i + 128), c);
        _mm512_stream_si512((void *)(d + i + 192), e);
    }
    _mm_sfence();
    for (; i < n; i++) d[i] = s[i];
}

__attribute__((target("avx2"))) static void copy_nt256(uint8_t *d, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (((uintptr_t)(d + i) & 31) && i < n) d[i] = s[i], i++;
    for (; i + 128 <= n; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i)),
                b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64)),
                e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 32), b);
        _mm256_stream_si256((__m256i *)(d + i + 64), c);
        _mm256_stream_si256((__m256i *)(d + i + 96), e);
    }
    _mm_sfence();
    for (; i < n; i++) d[i] = s[i];
}
#endif

static int do_copy(void *p)
{
    copyjob *j = (copyjob *)p;
#if defined(__x86_64__)
    if (j->kind == 1) {
        copy_movsb(j->dst, j->src, j->n);
        return 0;
    }
    if (j->kind == 2) {
        if (__builtin_cpu_supports("avx512f"))
            copy_nt512(j->dst, j->src, j->n);
        else
            copy_nt256(j->dst, j->src, j->n);
        return 0;
    }
#endif
    memcpy(j->dst, j->src, j->n);
    return 0;
}

/* ---- one type, one encoding, one data set -------------------------------------------------------- */

typedef struct pathdef {
    const char *label;
    tsf_codec_path path;
} pathdef;

static const pathdef PATHDEFS[] = {
    {"per_value", TSF_PATH_PER_VALUE}, {"batch", TSF_PATH_SCALAR}, {"simd", TSF_PATH_AUTO}};

/* The "simd" row's path: the one the environment variable TSF_CODEC_PATH names (per_value, scalar,
   sse41, avx2, avx512), else AUTO (the best the CPU has). */
static tsf_codec_path simd_path(void)
{
    const char *env = getenv("TSF_CODEC_PATH");
    for (int p = TSF_PATH_PER_VALUE; env && p <= TSF_PATH_AVX512; p++)
        if (strcmp(env, tsf_codec_path_name((tsf_codec_path)p)) == 0) return (tsf_codec_path)p;
    return TSF_PATH_AUTO;
}

static void *xmalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p) {
        fprintf(stderr, "codec bench: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    memset(p, 0, n); /* fault the pages in before timing */
    return p;
}

static int run_set(const cfg *c, const char *tname, tsf_type type, tsf_encoding enc, const char *data,
                   const void *values, size_t vsize, int with_copies)
{
    const char *ename = tsf_encoding_name(enc);
    size_t n = c->rows, bytes = n * vsize, npages = (n + c->page - 1) / c->page;
    size_t cap = tsf_codec_encode_bound(type, enc, c->page, 0) * npages + 64;
    double *secs = calloc(c->reps, sizeof *secs);
    paged st[3];
    uint8_t *out = xmalloc(bytes), *page = xmalloc(c->page * vsize);
    double enc_pv = 0, dec_pv[2] = {0, 0};
    int ok = 1, have_ref = 0;
    size_t ref = 0, whole_cap = 0, whole_len = 0;
    uint8_t *whole = NULL;
    for (size_t pi = 0; pi < 3; pi++) {
        st[pi].buf = xmalloc(cap);
        st[pi].cap = cap;
        st[pi].off = calloc(npages + 1, sizeof(size_t));
        st[pi].npages = 0;
    }
    for (size_t pi = 0; pi < 3; pi++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.path = PATHDEFS[pi].path == TSF_PATH_AUTO ? simd_path() : PATHDEFS[pi].path;
        tsf_codec *codec = NULL;
        tsf_codec_open(&codec, &o, NULL);
        job j = {c, codec, type, enc, vsize, values, &st[pi], out, page, whole, whole_len, 0, {0}};
        result r = {tname, ename, "encode", PATHDEFS[pi].label, "page", data, "M values/s", 0, 0, 0, 0, 1};
        if (time_runs(do_encode, &j, c->reps, secs)) {
            if (j.err.code == TSF_ENOTSUP) {
                r.available = 0;
                emit(c, &r);
                r.op = "decode";
                emit(c, &r);
                r.mode = "array";
                emit(c, &r);
                tsf_codec_close(codec);
                continue;
            }
            fprintf(stderr, "codec bench: %s %s encode failed: %s\n", tname, ename, j.err.message);
            exit(1);
        }
        size_t total = st[pi].off[st[pi].npages];
        /* every path writes the same bytes as the first one that ran */
        if (have_ref) {
            size_t rt = st[ref].off[st[ref].npages];
            if (total != rt || memcmp(st[pi].buf, st[ref].buf, total) != 0) {
                fprintf(stderr, "codec bench: %s %s path %s wrote different bytes than path %s\n", tname,
                        ename, PATHDEFS[pi].label, PATHDEFS[ref].label);
                exit(1);
            }
        } else {
            have_ref = 1;
            ref = pi;
            /* the array-mode input: all rows as one stream (not timed) */
            whole_cap = tsf_codec_encode_bound(type, enc, n, 0);
            whole = xmalloc(whole_cap);
            if (tsf_codec_encode(codec, type, enc, values, n, whole, whole_cap, &whole_len, &j.err) !=
                TSF_OK) {
                fprintf(stderr, "codec bench: %s %s whole-array encode failed: %s\n", tname, ename,
                        j.err.message);
                exit(1);
            }
            j.whole = whole;
            j.whole_len = whole_len;
        }
        rates(secs, c->reps, (double)n / 1e6, &r.p50, &r.p90);
        r.bits = (double)total * 8.0 / (double)n;
        if (pi == 0) enc_pv = r.p50;
        r.speedup = enc_pv > 0 ? r.p50 / enc_pv : 0;
        emit(c, &r);
        /* decode: page by page, then the whole array */
        for (int am = 0; am < 2; am++) {
            j.array_mode = am;
            r.op = "decode";
            r.mode = am ? "array" : "page";
            if (time_runs(do_decode, &j, c->reps, secs)) {
                fprintf(stderr, "codec bench: %s %s decode failed: %s\n", tname, ename, j.err.message);
                exit(1);
            }
            rates(secs, c->reps, (double)n / 1e6, &r.p50, &r.p90);
            if (pi == 0) dec_pv[am] = r.p50;
            r.speedup = dec_pv[am] > 0 ? r.p50 / dec_pv[am] : 0;
            emit(c, &r);
        }
        /* the decoded array must equal the input, bit for bit (lossless inputs only) */
        if (memcmp(out, values, bytes) != 0) {
            fprintf(stderr, "codec bench: %s %s path %s decoded values differ from the input\n", tname, ename,
                    PATHDEFS[pi].label);
            exit(1);
        }
        memset(out, 0, bytes);
        tsf_codec_close(codec);
    }
    if (with_copies) {
        const uint8_t *src = (const uint8_t *)values;
        copyjob cj = {out, src, bytes, 0};
        result r = {tname, ename, "memcpy", "glibc", "array", data, "GB/s", 0, 0, 0, 0, 1};
        time_runs(do_copy, &cj, c->reps, secs);
        rates(secs, c->reps, (double)bytes / 1e9, &r.p50, &r.p90);
        double mv = (double)n / 1e6 / bench_percentile(secs, c->reps, 50);
        emit(c, &r);
        if (!c->json) printf("%46s(= %.1f M values/s)\n", "", mv);
        double best50 = 0, best90 = 0;
        const char *bestname = "rep_movsb";
#if defined(__x86_64__)
        for (int k = 1; k <= 2; k++) {
            cj.kind = k;
            double p50, p90;
            time_runs(do_copy, &cj, c->reps, secs);
            rates(secs, c->reps, (double)bytes / 1e9, &p50, &p90);
            if (p50 > best50) {
                best50 = p50;
                best90 = p90;
                bestname = k == 1 ? "rep_movsb" : "nt_stores";
            }
        }
#endif
        if (best50 > 0) {
            result b = {tname, ename, "copy_best", bestname, "array", data, "GB/s", best50, best90, 0, 0, 1};
            emit(c, &b);
            if (!c->json)
                printf("%46s(= %.1f M values/s; decode array needs >= %.1f M values/s for 90%%)\n", "",
                       best50 * 1e9 / (double)vsize / 1e6, 0.9 * best50 * 1e9 / (double)vsize / 1e6);
        }
        if (memcmp(out, src, bytes) != 0) {
            fprintf(stderr, "codec bench: copy check failed\n");
            exit(1);
        }
    }
    for (size_t pi = 0; pi < 3; pi++) {
        free(st[pi].buf);
        free(st[pi].off);
    }
    free(out);
    free(page);
    free(whole);
    free(secs);
    return ok ? 0 : 1;
}

/* GORILLA "mixed" doubles: each value repeats the previous one, reuses its leading/trailing window
 * (flip a bit inside the previous XOR window), or needs a new window, with probability 1/3 each. */
static void gen_mixed(double *v, size_t n, uint64_t seed)
{
    bench_rng r = {seed};
    uint64_t prev;
    double x = 1000.0;
    memcpy(&prev, &x, 8);
    int lead = 12, trail = 30; /* current window: bits [trail, 64 - lead) */
    for (size_t i = 0; i < n; i++) {
        uint64_t u = bench_rng_next(&r), cur = prev;
        switch (u % 3) {
        case 0:
            break; /* repeat */
        case 1: {  /* inside the previous window: flip its top and bottom bits, plus random middle bits */
            int width = 64 - lead - trail;
            uint64_t mid = width > 2 ? (bench_rng_next(&r) & ((1ull << (width - 2)) - 1)) << 1 : 0;
            uint64_t x2 = (1ull << (width - 1)) | 1ull | mid;
            cur = prev ^ (x2 << trail);
            break;
        }
        default: { /* a new window */
            lead = 12 + (int)(bench_rng_next(&r) % 8);
            trail = (int)(bench_rng_next(&r) % 40);
            int width = 64 - lead - trail;
            uint64_t mid = width > 2 ? (bench_rng_next(&r) & ((1ull << (width - 2)) - 1)) << 1 : 0;
            uint64_t x2 = (1ull << (width - 1)) | 1ull | mid;
            cur = prev ^ (x2 << trail);
        }
        }
        /* keep it a finite, non-NaN double (sign 0, exponent not all ones) */
        cur &= ~(1ull << 63);
        if (((cur >> 52) & 0x7ff) == 0x7ff) cur ^= 1ull << 60;
        memcpy(&v[i], &cur, 8);
        prev = cur;
    }
}

int bench_codec(int argc, char **argv)
{
    cfg c;
    c.rows = (size_t)bench_opt_ll(argc, argv, "--rows", 20000000);
    c.reps = (size_t)bench_opt_ll(argc, argv, "--reps", 5);
    c.page = (size_t)bench_opt_ll(argc, argv, "--page", 10000);
    c.json = bench_flag(argc, argv, "--json");
    if (c.rows == 0 || c.reps == 0 || c.page == 0) {
        fprintf(stderr, "usage: tsf-bench codec [--rows N] [--reps R] [--page P] [--json]\n");
        return 1;
    }
    tsf_codec *probe = NULL;
    tsf_codec_options po;
    tsf_codec_options_init(&po);
    po.path = simd_path();
    tsf_codec_open(&probe, &po, NULL);
    const char *simd = tsf_codec_path_name(tsf_codec_get_path(probe));
    tsf_codec_close(probe);
    FILE *hdr = c.json ? stderr : stdout;
    fprintf(hdr, "# E1 codec: rows %zu per type, reps %zu, page %zu values, W0 data (seed 42)\n", c.rows,
            c.reps, c.page);
    bench_print_machine(hdr);
    fprintf(hdr,
            "# paths: per_value = iterator, one value per call; batch = scalar block kernels; simd = %s%s\n",
            simd, getenv("TSF_CODEC_PATH") ? " (from TSF_CODEC_PATH)" : "");
    fprintf(hdr, "# p50/p90 over per-run times (p90 = slower rate); speed-up vs per_value at p50\n");
    if (!c.json)
        printf("%-7s %-9s %-9s %-10s %-6s %-6s %12s %12s  %-11s %9s %8s\n", "type", "encoding", "op", "path",
               "mode", "data", "p50", "p90", "unit", "bits/val", "speedup");
    int32_t *i32 = xmalloc(c.rows * 4);
    bench_w0_int32(i32, c.rows, 42);
    int rc = run_set(&c, "int32", TSF_INT32, TSF_ENC_TS_2DIFF, "w0", i32, 4, 1);
    free(i32);
    int64_t *i64 = xmalloc(c.rows * 8);
    bench_w0_int64(i64, c.rows, 42);
    rc |= run_set(&c, "int64", TSF_INT64, TSF_ENC_TS_2DIFF, "w0", i64, 8, 1);
    free(i64);
    double *d = xmalloc(c.rows * 8);
    bench_w0_double(d, c.rows, 42);
    rc |= run_set(&c, "double", TSF_DOUBLE, TSF_ENC_GORILLA, "walk", d, 8, 0);
    gen_mixed(d, c.rows, 42);
    rc |= run_set(&c, "double", TSF_DOUBLE, TSF_ENC_GORILLA, "mixed", d, 8, 0);
    free(d);
    return rc;
}
