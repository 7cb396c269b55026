/*
 * test_page_index.c - the page-time index (src/read/page_index*.c, src/format/page_index_file.c,
 * src/write/writer_pix.c; doc/reader.md "Page-time index").
 * Files written by our writer (aligned, non-aligned, table devices, many chunks, chunk groups out of order)
 * and the golden files of tests/data: every page's start looked up gives that page (the reference
 * walks the metadata's chunk lists and the pages with the data-area walker, not the reader's page code),
 * floors of other times give the last page starting before them, and queries with the index give exactly
 * the rows of queries without it, while reading fewer bytes where chunks are large. Stale indexes
 * (another file) give TSF_ESTATE and are ignored by tsf_page_index_open_auto; damaged ones give
 * TSF_ECORRUPT (or TSF_ESTATE, or open when the damage hit unused bytes) and never crash.
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "gen_file.h"
#include "read/reader_internal.h"
#include "test.h"
#include "tsf_index.h"

static char g_dir[64];

static const char *tmpdir(void)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/tsf_pix_XXXXXX");
        if (!mkdtemp(g_dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return g_dir;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

/* ---- reference: pages of every column from the metadata and the data-area walker ---------------- */

typedef struct rpage {
    uint64_t coff, hoff;
    uint32_t k;
    int64_t start, end;
    int late;
} rpage;

typedef struct rcol {
    size_t device, series; /* series: TSF_PAGE_INDEX_TIME for a time column */
    rpage *p;
    size_t n, cap;
    int64_t max_end;
    int seen;
} rcol;

typedef struct ref {
    rcol *c;
    size_t n;
    uint8_t *file;
    size_t len;
} ref;

static void rcol_add(rcol *c, const rpage *pg)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->p = realloc(c->p, c->cap * sizeof *c->p);
    }
    c->p[c->n++] = *pg;
}

/* Pages of the chunk at coff: header offsets, starts and ends (chunk statistics for single-page chunks).
 * Returns the count, or -1 when a page of a multi-page chunk has no statistics. */
static long chunk_pages(const ref *f, int version, uint64_t coff, const tsf_fmt_stats *cs, rpage *out,
                        size_t cap)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    tsf_walk_init_at(&w, f->file, f->len, version, coff);
    long n = 0;
    int bad = 0;
    while (tsf_walk_next(&w, &it, &e) == TSF_OK) {
        if (it.kind == TSF_WALK_CHUNK && it.offset == coff) continue;
        if (it.kind != TSF_WALK_PAGE || it.chunk_offset != coff) break;
        if ((size_t)n == cap) return -2;
        /* value pages take their time page's start: only time and non-aligned pages need statistics */
        if (tsf_fmt_chunk_kind(it.chunk.marker) != TSF_CHUNK_VALUE &&
            tsf_fmt_chunk_multi_page(it.chunk.marker) && !it.page.has_stats)
            bad = 1;
        out[n] = (rpage){coff,
                         it.offset,
                         it.page_index,
                         it.page.has_stats ? it.page.stats.start_time : cs->start_time,
                         it.page.has_stats ? it.page.stats.end_time : cs->end_time,
                         0};
        n++;
    }
    return bad ? -1 : n;
}

static void mark_late(rcol *c, rpage *pg)
{
    int64_t m = pg->start > pg->end ? pg->start : pg->end;
    pg->late = c->seen && pg->start <= c->max_end;
    if (!c->seen || m > c->max_end) c->max_end = m;
    c->seen = 1;
}

#define MAXP 200000
static rpage g_tp[MAXP], g_vp[MAXP];

static void build_ref(tsf_reader *r, ref *f)
{
    size_t n = 0;
    for (size_t d = 0; d < r->ndevices; d++) n += r->devices[d].nseries + (r->devices[d].aligned ? 1 : 0);
    f->c = calloc(n + 1, sizeof *f->c);
    f->n = n;
    size_t c = 0;
    tsf_error e;
    for (size_t d = 0; d < r->ndevices; d++) {
        const tsf_rd_device *dv = &r->devices[d];
        if (!dv->aligned) {
            for (size_t j = 0; j < dv->nseries; j++, c++) {
                rcol *col = &f->c[c];
                col->device = d, col->series = j;
                size_t pos = 0;
                uint64_t coff;
                tsf_fmt_stats cs;
                while (tsf_mip_next_chunk_meta(&r->series[dv->series0 + j].tsm, &pos, &coff, &cs, &e) ==
                       TSF_OK) {
                    long np = chunk_pages(f, r->version, coff, &cs, g_tp, MAXP);
                    for (long k = 0; k < np; k++) {
                        mark_late(col, &g_tp[k]);
                        rcol_add(col, &g_tp[k]);
                    }
                }
            }
            continue;
        }
        rcol *tc = &f->c[c];
        tc->device = d, tc->series = TSF_PAGE_INDEX_TIME;
        for (size_t j = 0; j < dv->nseries; j++) f->c[c + 1 + j].device = d, f->c[c + 1 + j].series = j;
        /* time chunks in list order, with the next one's offset */
        uint64_t toff[4096];
        tsf_fmt_stats tcs[4096];
        size_t nt = 0, pos = 0;
        while (nt < 4096 && tsf_mip_next_chunk_meta(&dv->time.tsm, &pos, &toff[nt], &tcs[nt], &e) == TSF_OK)
            nt++;
        for (size_t i = 0; i < nt; i++) {
            uint64_t next = i + 1 < nt ? toff[i + 1] : r->fm.meta_offset;
            long np = chunk_pages(f, r->version, toff[i], &tcs[i], g_tp, MAXP);
            for (long k = 0; k < np; k++) {
                mark_late(tc, &g_tp[k]);
                rcol_add(tc, &g_tp[k]);
            }
            if (np <= 0) continue;
            for (size_t j = 0; j < dv->nseries; j++) {
                size_t vpos = 0;
                uint64_t voff;
                tsf_fmt_stats vs;
                while (tsf_mip_next_chunk_meta(&r->series[dv->series0 + j].tsm, &vpos, &voff, &vs, &e) ==
                       TSF_OK) {
                    if (voff < toff[i] || voff >= next) continue;
                    long nv = chunk_pages(f, r->version, voff, &vs, g_vp, MAXP);
                    if (nv == np)
                        for (long k = 0; k < nv; k++) {
                            g_vp[k].start = g_tp[k].start;
                            g_vp[k].late = g_tp[k].late;
                            rcol_add(&f->c[c + 1 + j], &g_vp[k]);
                        }
                    break;
                }
            }
        }
        c += 1 + dv->nseries;
    }
}

static void free_ref(ref *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->c[i].p);
    free(f->c);
    free(f->file);
}

/* Pages of col starting at t. */
static size_t count_start(const rcol *c, int64_t t)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += c->p[i].start == t;
    return n;
}

/* Largest start <= t; 0 if none. */
static int ref_floor(const rcol *c, int64_t t, int64_t *out)
{
    int have = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->p[i].start <= t && (!have || c->p[i].start > *out)) *out = c->p[i].start, have = 1;
    return have;
}

/* Every page start looked up gives that page; floors of other times match the reference. Returns pages. */
static size_t check_lookups(tsf_page_index *pix, const ref *f, uint64_t *seed)
{
    size_t pages = 0;
    tsf_error e = {0};
    for (size_t ci = 0; ci < f->n; ci++) {
        const rcol *c = &f->c[ci];
        pages += c->n;
        for (size_t i = 0; i < c->n; i++) {
            const rpage *pg = &c->p[i];
            tsf_page_loc loc;
            tsf_status st = tsf_page_index_lookup(pix, c->device, c->series, pg->start, &loc, &e);
            CHECK_OK(st, &e);
            if (st) return pages;
            CHECK(loc.start_time == pg->start);
            if (count_start(c, pg->start) == 1) {
                if (loc.chunk_offset != pg->coff || loc.page_offset != pg->hoff || loc.page != pg->k ||
                    loc.late != pg->late) {
                    fprintf(
                        stderr,
                        "device %zu series %zu page at %llu (start %lld): index says %llu/%llu #%u late %d\n",
                        c->device, c->series, (unsigned long long)pg->hoff, (long long)pg->start,
                        (unsigned long long)loc.chunk_offset, (unsigned long long)loc.page_offset, loc.page,
                        loc.late);
                    CHECK(0);
                    return pages;
                }
            }
        }
        if (!c->n) {
            tsf_page_loc loc;
            CHECK_EQ_INT(tsf_page_index_lookup(pix, c->device, c->series, 0, &loc, NULL), TSF_ENOTFOUND);
            continue;
        }
        int64_t lo = c->p[0].start, hi = c->p[0].start;
        for (size_t i = 0; i < c->n; i++) {
            if (c->p[i].start < lo) lo = c->p[i].start;
            if (c->p[i].start > hi) hi = c->p[i].start;
        }
        /* before the first start: nothing; beyond the last: the last; random times and start +- 1 */
        tsf_page_loc loc;
        if (lo > INT64_MIN)
            CHECK_EQ_INT(tsf_page_index_lookup(pix, c->device, c->series, lo - 1, &loc, NULL), TSF_ENOTFOUND);
        CHECK_OK(tsf_page_index_lookup(pix, c->device, c->series, INT64_MAX, &loc, &e), &e);
        CHECK(loc.start_time == hi);
        for (int k = 0; k < 200; k++) {
            uint64_t span = (uint64_t)hi - (uint64_t)lo;
            uint64_t u = k & 1 ? (uint64_t)c->p[tsf_test_rand(seed) % c->n].start + (k & 2 ? 1 : UINT64_MAX)
                               : (uint64_t)lo + (span == UINT64_MAX ? tsf_test_rand(seed)
                                                 : span             ? tsf_test_rand(seed) % (span + 1)
                                                                    : 0);
            int64_t t = (int64_t)u; /* start +- 1 wraps at the int64 ends (also a valid probe) */
            int64_t want = 0;
            int have = ref_floor(c, t, &want);
            tsf_status st = tsf_page_index_lookup(pix, c->device, c->series, t, &loc, &e);
            if (!have) {
                CHECK_EQ_INT(st, TSF_ENOTFOUND);
            } else {
                CHECK_OK(st, &e);
                if (loc.start_time != want) {
                    fprintf(stderr, "floor(%lld): %lld, want %lld\n", (long long)t, (long long)loc.start_time,
                            (long long)want);
                    CHECK(0);
                    return pages;
                }
            }
        }
    }
    return pages;
}

/* ---- queries with and without the index ------------------------------------------------------- */

/* A reader of path; auto_index = tsf_reader_options.page_index (0: never looks for <path>.tsfidx). */
static tsf_reader *open_path(const char *path, int auto_index, int use_pread)
{
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.page_index = auto_index;
    ro.use_pread = use_pread;
    tsf_reader *r = NULL;
    tsf_error e = {0};
    CHECK_OK(tsf_reader_open(&r, path, &ro, &e), &e);
    return r;
}

typedef struct qsum {
    uint64_t h, rows;
} qsum;

static void mix(qsum *s, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) s->h = (s->h ^ b[i]) * 0x100000001b3ull;
}

/* FNV-1a over every row (device, time, column names, validity, values). */
static tsf_status run_query(tsf_reader *r, tsf_page_index *pix, size_t dev, int64_t lo, int64_t hi,
                            unsigned threads, qsum *s, tsf_error *e)
{
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.time_min = lo;
    o.time_max = hi;
    o.threads = threads;
    o.page_index = pix;
    o.batch_size = 100;
    tsf_query *q = NULL;
    const tsf_batch *b;
    s->h = 0xcbf29ce484222325ull;
    s->rows = 0;
    tsf_status st = tsf_query_open(r, &o, &q, e);
    while (!st && !(st = tsf_query_next(q, &b, e)) && b) {
        for (size_t i = 0; i < b->nrows; i++) {
            mix(s, &b->device, sizeof b->device);
            mix(s, &b->times[i], 8);
            for (size_t k = 0; k < b->ncolumns; k++) {
                const tsf_column_batch *c = &b->columns[k];
                uint8_t v = (c->validity[i >> 3] >> (i & 7)) & 1;
                mix(s, c->name, strlen(c->name));
                mix(s, &v, 1);
                if (!v) continue;
                size_t esz = tsf_type_size(c->type);
                if (c->type == TSF_TEXT || c->type == TSF_STRING || c->type == TSF_BLOB) {
                    tsf_bytes x = ((const tsf_bytes *)c->values)[i];
                    mix(s, x.data, x.len);
                } else if (esz) {
                    mix(s, (const uint8_t *)c->values + i * esz, esz);
                }
            }
        }
        s->rows += b->nrows;
    }
    tsf_query_close(q);
    return st;
}

/* Queries starting at page starts, inside pages and in gaps give the same rows with and without pix. */
static void check_queries(tsf_reader *plain, tsf_reader *r, tsf_page_index *pix, const ref *f, uint64_t *seed,
                          int rounds)
{
    tsf_error e = {0}, e2 = {0};
    for (size_t ci = 0; ci < f->n; ci++) {
        const rcol *c = &f->c[ci];
        if (!c->n ||
            (ci && f->c[ci - 1].device == c->device && c->series != 0 && c->series != TSF_PAGE_INDEX_TIME))
            continue; /* one round per device (all its columns) */
        for (int k = 0; k < rounds; k++) {
            const rpage *pg = &c->p[tsf_test_rand(seed) % c->n];
            int64_t lo = (int64_t)((uint64_t)pg->start + tsf_test_rand(seed) % 3 - 1); /* wraps at the ends */
            int64_t hi =
                k % 4 == 0 || lo > INT64_MAX - 1000 ? INT64_MAX : lo + (int64_t)(tsf_test_rand(seed) % 1000);
            qsum a, b, c3;
            unsigned th = k % 5 == 4 ? 3 : 1; /* same threads both ways (see doc/reader.md on late chunks) */
            tsf_status sa = run_query(plain, NULL, c->device, lo, hi, th, &a, &e);
            tsf_status sb = run_query(r, pix, c->device, lo, hi, th, &b, &e2);
            tsf_status sc = run_query(r, NULL, c->device, lo, hi, th, &c3, &e2); /* r's own index */
            CHECK_EQ_INT(sb, sa);
            CHECK_EQ_INT(sc, sa);
            if (a.rows != c3.rows || a.h != c3.h) b = c3;
            if (a.rows != b.rows || a.h != b.h) {
                fprintf(stderr, "device %zu [%lld, %lld]: %llu rows without the index, %llu with (%s)\n",
                        c->device, (long long)lo, (long long)hi, (unsigned long long)a.rows,
                        (unsigned long long)b.rows, a.h == b.h ? "same hash" : "rows differ");
                CHECK(0);
                return;
            }
        }
    }
}

/* Builds the index of path, checks lookups and queries; returns pages indexed (0 on failure). */
static uint64_t check_file(const char *path, int rounds, uint64_t *nlate)
{
    tsf_error e = {0};
    tsf_reader *r = NULL, *plain = NULL;
    tsf_page_index *pix = NULL;
    char ipath[1100];
    snprintf(ipath, sizeof ipath, "%.1000s.tsfidx", path);
    uint64_t np = 0, seed = 42;
    int failures = tsf_test_failures;
    r = open_path(path, 1, 0);     /* finds the index built below on its first query with a time_min */
    plain = open_path(path, 0, 0); /* never uses one */
    if (!r || !plain) goto out;
    tsf_status st = tsf_page_index_build(r, ipath, &np, &e);
    if (st == TSF_ENOTSUP) { /* spans that do not fit: nothing indexed, the reader still works */
        printf("  %s: %s\n", path, e.message);
        np = 1;
        goto out;
    }
    CHECK_OK(st, &e);
    CHECK_OK(tsf_page_index_open_auto(r, path, &pix, &e), &e);
    CHECK(pix != NULL);
    if (!pix) goto out;
    tsf_page_index *own = NULL, *none = pix;
    CHECK_OK(tsf_reader_page_index(r, &own, &e), &e);
    CHECK_OK(tsf_reader_page_index(plain, &none, &e), &e);
    CHECK(own != NULL && own != pix && none == NULL);
    ref f = {0};
    f.file = tsf_test_read_file(path, &f.len);
    CHECK(f.file != NULL);
    build_ref(r, &f);
    uint64_t n, nl;
    tsf_page_index_info(pix, &n, &nl);
    CHECK(n == np);
    size_t pages = check_lookups(pix, &f, &seed);
    CHECK(pages == np);
    check_queries(plain, r, pix, &f, &seed, rounds);
    if (nlate) *nlate = nl;
    free_ref(&f);
out:
    tsf_page_index_close(pix);
    tsf_reader_close(r);
    tsf_reader_close(plain);
    remove(ipath);
    if (tsf_test_failures != failures) fprintf(stderr, "  in %s\n", path);
    return np;
}

/* ---- writer files ----------------------------------------------------------------------------- */

static void gen_to(const char *name, size_t n, uint32_t page_points, size_t flush_rows, char *path,
                   size_t cap)
{
    gen_buf b = {0};
    char why[300];
    snprintf(path, cap, "%s/%s", tmpdir(), name);
    if (gen_file(&b, n, page_points, flush_rows, why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        CHECK(0);
        return;
    }
    write_file(path, b.p, b.n);
    free(b.p);
}

/* Aligned, non-aligned and table devices; single-page chunks, multi-page chunks, many chunks. */
static void test_writer_files(void)
{
    static const struct {
        size_t rows;
        uint32_t page;
        size_t flush;
    } C[] = {{50, 1000, 0}, {3000, 64, 700}, {20000, 100, 0}, {5000, 17, 333}};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        char path[200], name[32];
        snprintf(name, sizeof name, "w%zu.tsfile", i);
        gen_to(name, C[i].rows, C[i].page, C[i].flush, path, sizeof path);
        uint64_t np = check_file(path, 30, NULL);
        CHECK(np > 0);
        printf("  %s: %llu pages\n", name, (unsigned long long)np);
        remove(path);
    }
}

/* Data area [7, separator) of a file in memory; 0 if the walk fails. */
static size_t data_end(const gen_buf *b)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    if (tsf_walk_init(&w, b->p, b->n, &e)) return 0;
    while (tsf_walk_next(&w, &it, &e) == TSF_OK)
        if (it.kind == TSF_WALK_END) return (size_t)it.offset;
    return 0;
}

/*
 * Chunk groups out of order (later groups hold earlier and overlapping times: late pages). Our writer
 * refuses them, so the data areas of several writer files are concatenated behind one head (a crashed
 * file) and tsf_recover writes the index and tail.
 */
static void test_out_of_order(void)
{
    static const size_t R[][2] = {{2000, 3000}, {0, 1000}, {500, 1500}, {3000, 3400}, {2900, 2950}};
    gen_buf cat = {0};
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
        gen_buf b = {0};
        tsf_error e = {0};
        tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, &b};
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.page_max_points = 50;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
        CHECK_OK(gen_register(w, &e), &e);
        CHECK_OK(gen_rows(w, R[i][0], R[i][1], &e), &e);
        CHECK_OK(tsf_writer_close(w, &e), &e);
        size_t end = data_end(&b);
        CHECK(end > 7);
        if (end > 7) gen_write(&cat, i ? b.p + 7 : b.p, i ? end - 7 : end);
        free(b.p);
    }
    char crashed[200], path[200];
    snprintf(crashed, sizeof crashed, "%s/crashed.tsfile", tmpdir());
    snprintf(path, sizeof path, "%s/late.tsfile", tmpdir());
    write_file(crashed, cat.p, cat.n);
    free(cat.p);
    tsf_recover_report rep;
    tsf_error e = {0};
    CHECK_OK(tsf_recover(crashed, path, &rep, &e), &e);
    CHECK(rep.chunk_groups_kept >= 10);
    uint64_t nlate = 0;
    uint64_t np = check_file(path, 60, &nlate);
    printf("  late.tsfile: %llu chunk groups, %llu pages, %llu late\n",
           (unsigned long long)rep.chunk_groups_kept, (unsigned long long)np, (unsigned long long)nlate);
    CHECK(np > 0);
    CHECK(nlate > 0);
    remove(crashed);
    remove(path);
}

/* ---- golden files ------------------------------------------------------------------------------ */

static void test_golden(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/tsfile-java", data);
    size_t n = 0, done = 0;
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        if (nl < 8 || strcmp(de->d_name + nl - 7, ".tsfile")) continue;
        n++;
        /* the index goes next to a copy (tests/data stays untouched) */
        char src[1200], path[1200];
        snprintf(src, sizeof src, "%.900s/%.200s", dir, de->d_name);
        snprintf(path, sizeof path, "%s/golden.tsfile", tmpdir());
        size_t len;
        uint8_t *p = tsf_test_read_file(src, &len);
        CHECK(p != NULL);
        if (!p) continue;
        write_file(path, p, len);
        free(p);
        int before = tsf_test_failures;
        check_file(path, 8, NULL);
        if (tsf_test_failures == before)
            done++;
        else
            fprintf(stderr, "golden %s failed\n", de->d_name);
        remove(path);
    }
    closedir(d);
    printf("  golden tsfile-java: %zu of %zu files indexed and checked\n", done, n);
    CHECK(done == n && n > 0);
}

/* ---- the reader uses the index; stale and damaged indexes -------------------------------------- */

typedef struct counted {
    const uint8_t *p;
    size_t len;
    uint64_t calls, bytes;
} counted;

static int counted_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    counted *c = ud;
    if (off > c->len || len > c->len - off) return -1;
    memcpy(buf, c->p + off, len);
    c->calls++;
    c->bytes += len;
    return 0;
}

/* Large chunks (no flush, small pages): a narrow query in the middle of a chunk reads its page headers to
 * find the page without the index, and one page with it. */
static void test_reader_uses_index(void)
{
    char path[200], ipath[220];
    gen_to("big.tsfile", 60000, 32, 0, path, sizeof path);
    snprintf(ipath, sizeof ipath, "%s.tsfidx", path);
    tsf_error e = {0};
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, path, NULL, &e), &e);
    CHECK_OK(tsf_page_index_build(r, ipath, NULL, &e), &e);
    size_t dev;
    CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &dev, &e), &e);
    tsf_reader_close(r);
    counted cnt = {0};
    cnt.p = tsf_test_read_file(path, &cnt.len);
    CHECK(cnt.p != NULL);
    if (!cnt.p) return;
    uint64_t calls[2], bytes[2], rows[2], hash[2];
    for (int with = 0; with < 2; with++) {
        tsf_read_callbacks cb = {sizeof cb, counted_pread, cnt.len, &cnt};
        tsf_page_index *pix = NULL;
        CHECK_OK(tsf_reader_open_callbacks(&r, &cb, NULL, &e), &e);
        CHECK_OK(tsf_reader_load_index(r, &e), &e);
        if (with) CHECK_OK(tsf_page_index_open(r, ipath, &pix, &e), &e);
        cnt.calls = cnt.bytes = 0;
        qsum s;
        CHECK_OK(run_query(r, pix, dev, 400000, 400100, 1, &s, &e), &e);
        calls[with] = cnt.calls, bytes[with] = cnt.bytes, rows[with] = s.rows, hash[with] = s.h;
        tsf_page_index_close(pix);
        tsf_reader_close(r);
    }
    printf("  narrow query: %llu reads / %llu bytes without the index, %llu / %llu with\n",
           (unsigned long long)calls[0], (unsigned long long)bytes[0], (unsigned long long)calls[1],
           (unsigned long long)bytes[1]);
    CHECK(rows[0] == rows[1] && hash[0] == hash[1] && rows[0] > 0);
    CHECK(calls[1] * 20 < calls[0] && bytes[1] < bytes[0]);
    free((void *)cnt.p);
    remove(path);
    remove(ipath);
}

/* Read system calls of this process so far (Linux /proc/self/io); -1 where unavailable. */
static long long read_calls(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "syscr: %lld", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

/* One narrow query with default options (the reader's own index unless use = 0): rows, hash, read calls,
 * page directories the reader built (each = the page headers of a chunk walked). */
static void auto_query(tsf_reader *r, size_t dev, int use, qsum *s, long long *calls, size_t *pdirs)
{
    tsf_error e = {0};
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &dev;
    o.ndevices = 1;
    o.time_min = 400000;
    o.time_max = 400100;
    o.use_page_index = use;
    tsf_query *q = NULL;
    const tsf_batch *b;
    CHECK_OK(tsf_reader_load_index(r, &e), &e);
    long long c0 = read_calls();
    s->rows = 0;
    s->h = 0xcbf29ce484222325ull;
    CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
    while (q && tsf_query_next(q, &b, &e) == TSF_OK && b) {
        mix(s, b->times, b->nrows * 8);
        for (size_t k = 0; k < b->ncolumns; k++) mix(s, b->columns[k].validity, (b->nrows + 7) / 8);
        s->rows += b->nrows;
    }
    tsf_query_close(q);
    *calls = read_calls() - c0;
    *pdirs = r->npdirs;
}

/* tsf_reader_open finds <path>.tsfidx by itself and queries use it (fewer reads, same rows); option off,
 * use_page_index 0, no index, a stale one (the file rewritten) and a damaged one give the rows of a reader
 * without an index. */
static void test_auto_index(void)
{
    char path[200], ipath[220];
    gen_to("auto.tsfile", 60000, 32, 0, path, sizeof path);
    snprintf(ipath, sizeof ipath, "%s.tsfidx", path);
    tsf_error e = {0};
    uint64_t np = 0;
    CHECK_OK(tsf_page_index_build_file(path, NULL, &np, &e), &e);
    CHECK(np > 1000);
    qsum s[6];
    long long calls[6];
    size_t pdirs[6], dev = 0;
    tsf_page_index *own = NULL;
    /* 0: own index, 1: option off, 2: use_page_index = 0, 3: no index file, 4: stale, 5: damaged */
    for (int k = 0; k < 6; k++) {
        if (k == 3) CHECK(remove(ipath) == 0);
        if (k == 4) { /* another file of the same shape at the same path: the index made before is stale */
            CHECK_OK(tsf_page_index_build_file(path, NULL, NULL, &e), &e);
            gen_to("auto.tsfile", 60001, 32, 0, path, sizeof path);
        }
        if (k == 5) write_file(ipath, "TSFPIX01 and then nothing that could be an index", 48);
        tsf_reader *r = open_path(path, k != 1, 1);
        if (!r) return;
        CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &dev, &e), &e);
        auto_query(r, dev, k != 2, &s[k], &calls[k], &pdirs[k]);
        CHECK_OK(tsf_reader_page_index(r, &own, &e), &e);
        CHECK((own != NULL) == (k == 0 || k == 2));
        tsf_reader_close(r);
    }
    printf("  narrow query (pread): %lld read calls with the reader's own index, %lld without (%zu page "
           "directories built)\n",
           calls[0], calls[1], pdirs[1]);
    CHECK(pdirs[0] == 0 && pdirs[1] > 0 && pdirs[2] > 0 && pdirs[3] > 0 && pdirs[4] > 0 && pdirs[5] > 0);
    if (calls[0] >= 0) CHECK(calls[0] * 20 < calls[1] && calls[0] * 20 < calls[2]);
    for (int k = 1; k < 6; k++) CHECK(s[k].rows == s[0].rows && s[k].h == s[0].h);
    CHECK(s[0].rows > 0);
    /* readers without a path have no index of their own */
    size_t len;
    uint8_t *m = tsf_test_read_file(path, &len);
    tsf_reader *r = NULL;
    CHECK(m != NULL);
    CHECK_OK(tsf_reader_open_memory(&r, m, len, NULL, &e), &e);
    own = (tsf_page_index *)m;
    CHECK_OK(tsf_reader_page_index(r, &own, &e), &e);
    CHECK(own == NULL);
    tsf_reader_close(r);
    free(m);
    remove(path);
    remove(ipath);
}

/* tsf_writer_options.page_index: the index written at close (from the writer's own record of its chunks and
 * pages) has the bytes of one built afterwards from the file (in place and renamed; one thread and three),
 * looks up the same locations (every page start, +-1, random times), and a reader opened on the file uses it. */
static void test_write_time(void)
{
    char path[200], ipath[220], later[220];
    snprintf(path, sizeof path, "%s/wt.tsfile", tmpdir());
    snprintf(ipath, sizeof ipath, "%s.tsfidx", path);
    snprintf(later, sizeof later, "%s/later.tsfidx", tmpdir());
    tsf_error e = {0};
    for (int in_place = 0; in_place < 2; in_place++) {
        remove(ipath);
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.page_max_points = 40;
        o.page_index = 1;
        o.in_place = in_place;
        o.threads = in_place ? 1 : 3;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open(&w, path, &o, &e), &e);
        if (!w) return;
        CHECK_OK(gen_register(w, &e), &e);
        for (size_t i = 0; i < 6000; i += 1500) {
            CHECK_OK(gen_rows(w, i, i + 1500, &e), &e);
            CHECK_OK(tsf_writer_flush(w, &e), &e);
        }
        CHECK_OK(tsf_writer_close(w, &e), &e);
        tsf_reader *r = open_path(path, 1, 0);
        if (!r) return;
        tsf_page_index *own = NULL, *built = NULL;
        uint64_t np = 0, n2 = 0;
        CHECK_OK(tsf_reader_page_index(r, &own, &e), &e); /* the one the writer left */
        CHECK(own != NULL);
        CHECK_OK(tsf_page_index_build(r, later, &np, &e), &e);
        CHECK_OK(tsf_page_index_open(r, later, &built, &e), &e);
        if (!own || !built) return;
        tsf_page_index_info(own, &n2, NULL);
        CHECK(n2 == np && np > 100);
        size_t l1 = 0, l2 = 0;
        uint8_t *b1 = tsf_test_read_file(ipath, &l1), *b2 = tsf_test_read_file(later, &l2);
        CHECK(b1 && b2 && l1 == l2 && l1 > 0 && memcmp(b1, b2, l1) == 0);
        printf("  index written at close: %zu bytes, %s the %zu built afterwards\n", l1,
               b1 && b2 && l1 == l2 && !memcmp(b1, b2, l1) ? "the same bytes as" : "NOT the bytes of", l2);
        free(b1);
        free(b2);
        ref f = {0};
        f.file = tsf_test_read_file(path, &f.len);
        CHECK(f.file != NULL);
        build_ref(r, &f);
        uint64_t seed = 99;
        size_t same = 0, asked = 0;
        for (size_t ci = 0; ci < f.n; ci++) {
            const rcol *c = &f.c[ci];
            for (size_t i = 0; i < c->n; i++) {
                int64_t ts[4] = {c->p[i].start, c->p[i].start - 1, c->p[i].start + 1,
                                 (int64_t)(tsf_test_rand(&seed) % 40000) - 100};
                for (int k = 0; k < 4; k++) {
                    tsf_page_loc a, b;
                    memset(&a, 0, sizeof a);
                    memset(&b, 0, sizeof b);
                    tsf_status sa = tsf_page_index_lookup(own, c->device, c->series, ts[k], &a, NULL);
                    tsf_status sb = tsf_page_index_lookup(built, c->device, c->series, ts[k], &b, NULL);
                    asked++;
                    same += sa == sb && a.chunk_offset == b.chunk_offset && a.page_offset == b.page_offset &&
                            a.page == b.page && a.late == b.late && a.start_time == b.start_time;
                }
            }
        }
        printf("  written at close (in_place %d): %llu pages, %zu of %zu lookups equal to a later build\n",
               in_place, (unsigned long long)np, same, asked);
        CHECK(same == asked && asked > 400);
        free_ref(&f);
        tsf_page_index_close(built);
        tsf_reader_close(r);
    }
    /* a writer on callbacks has no path: the option is ignored */
    gen_buf b = {0};
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, &b};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_index = 1;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
    CHECK_OK(gen_register(w, &e), &e);
    CHECK_OK(gen_rows(w, 0, 100, &e), &e);
    CHECK_OK(tsf_writer_close(w, &e), &e);
    free(b.p);
    remove(path);
    remove(ipath);
    remove(later);
}

/* ---- one index over a directory ---------------------------------------------------------------- */

/* Writes rows [from, to) of every generator device to path (flush every 700 rows, pages of 40 points). */
static void write_rows_file(const char *path, size_t from, size_t to)
{
    tsf_error e = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 40;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, &o, &e), &e);
    if (!w) return;
    CHECK_OK(gen_register(w, &e), &e);
    for (size_t i = from; i < to; i += 700) {
        CHECK_OK(gen_rows(w, i, i + 700 < to ? i + 700 : to, &e), &e);
        CHECK_OK(tsf_writer_flush(w, &e), &e);
    }
    CHECK_OK(tsf_writer_close(w, &e), &e);
}

typedef struct dpage {
    char dev[64], ser[32];
    size_t file;
    rpage p;
} dpage;

/* Three files (two overlapping in time, one disjoint): every page start, start +- 1 and random times of every
 * series give, over all files, the page with the last start <= t (on equal starts the later file), with its
 * file; page counts add up; overlapping pages are late; a changed or missing file makes the index stale;
 * garbage and bit flips never crash. */
static void test_dir_index(void)
{
    static const size_t R[3][2] = {{0, 3000}, {2000, 5000}, {8000, 9000}};
    char dir[128], path[3][200], ipath[200];
    snprintf(dir, sizeof dir, "%s/dx", tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    for (int f = 0; f < 3; f++) {
        snprintf(path[f], sizeof path[f], "%s/%c.tsfile", dir, 'a' + f);
        write_rows_file(path[f], R[f][0], R[f][1]);
    }
    snprintf(ipath, sizeof ipath, "%s/dir.tsfidx", dir);
    tsf_error e = {0};
    uint64_t np = 0, sum = 0, nlate = 0;
    CHECK_OK(tsf_page_index_build_dir(dir, NULL, &np, &e), &e);
    /* the reference: every page of every file with its names */
    dpage *all = NULL;
    size_t n = 0, cap = 0;
    for (int f = 0; f < 3; f++) {
        tsf_reader *r = open_path(path[f], 0, 0);
        if (!r) return;
        ref rf = {0};
        rf.file = tsf_test_read_file(path[f], &rf.len);
        CHECK_OK(tsf_reader_load_index(r, &e), &e);
        build_ref(r, &rf);
        uint64_t one = 0;
        char tmp[220];
        snprintf(tmp, sizeof tmp, "%s/one.idx", tmpdir());
        CHECK_OK(tsf_page_index_build(r, tmp, &one, &e), &e);
        remove(tmp);
        sum += one;
        for (size_t ci = 0; ci < rf.n; ci++) {
            const rcol *c = &rf.c[ci];
            tsf_device_info di;
            tsf_series_info si;
            CHECK_OK(tsf_reader_device(r, c->device, &di, &e), &e);
            const char *sn = "";
            if (c->series != TSF_PAGE_INDEX_TIME) {
                CHECK_OK(tsf_reader_series(r, c->device, c->series, &si, &e), &e);
                sn = si.measurement;
            }
            for (size_t i = 0; i < c->n; i++) {
                if (n == cap) all = realloc(all, (cap = cap ? 2 * cap : 1024) * sizeof *all);
                snprintf(all[n].dev, sizeof all[n].dev, "%s", di.name);
                snprintf(all[n].ser, sizeof all[n].ser, "%s", sn);
                all[n].file = (size_t)f;
                all[n++].p = c->p[i];
            }
        }
        free_ref(&rf);
        tsf_reader_close(r);
    }
    if (np != sum || np != n) fprintf(stderr, "  dir index: %llu pages, files %llu, reference %zu\n", (unsigned long long)np, (unsigned long long)sum, n);
    CHECK(np == sum && np == n && n > 100);
    tsf_page_index *p = NULL;
    CHECK_OK(tsf_page_index_open_dir(&p, dir, NULL, &e), &e);
    if (!p) return;
    tsf_page_index_info(p, NULL, &nlate);
    CHECK(tsf_page_index_file_count(p) == 3 && tsf_page_index_file(p, 3) == NULL);
    CHECK(tsf_page_index_file(p, 0) && strcmp(tsf_page_index_file(p, 0), "a.tsfile") == 0);
    CHECK(tsf_page_index_file(p, 2) && strcmp(tsf_page_index_file(p, 2), "c.tsfile") == 0);
    uint64_t seed = 5;
    size_t asked = 0, right = 0, found = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t ts[4] = {all[i].p.start, all[i].p.start - 1, all[i].p.start + 1,
                         (int64_t)(tsf_test_rand(&seed) % 40000) - 100};
        for (int k = 0; k < 4; k++) {
            const dpage *best = NULL; /* last start <= t; equal starts: the later file (then later page) */
            for (size_t j = 0; j < n; j++)
                if (!strcmp(all[j].dev, all[i].dev) && !strcmp(all[j].ser, all[i].ser) && all[j].p.start <= ts[k] &&
                    (!best || all[j].p.start >= best->p.start))
                    best = &all[j];
            tsf_page_loc loc;
            size_t file = 99;
            tsf_status st = tsf_page_index_lookup_name(p, all[i].dev, all[i].ser, ts[k], &file, &loc, NULL);
            asked++;
            if (!best) {
                right += st == TSF_ENOTFOUND;
                continue;
            }
            found++;
            right += st == TSF_OK && file == best->file && loc.chunk_offset == best->p.coff &&
                     loc.page_offset == best->p.hoff && loc.page == best->p.k && loc.start_time == best->p.start;
        }
    }
    fprintf(stderr, "  directory of 3 files: %llu pages (%llu late), %zu of %zu lookups right (%zu found)\n",
           (unsigned long long)np, (unsigned long long)nlate, right, asked, found);
    CHECK(right == asked && found > asked / 2);
    CHECK(nlate > 0);
    tsf_page_loc loc;
    CHECK_EQ_INT(tsf_page_index_lookup_name(p, "root.sg1.nope", "s1", 5, NULL, &loc, NULL), TSF_ENOTFOUND);
    CHECK_EQ_INT(tsf_page_index_lookup(p, 0, 0, 5, &loc, NULL), TSF_EINVAL); /* numbers need a reader */
    tsf_page_index_close(p);
    /* damaged: garbage, bit flips (any status of the three, lookups safe) */
    size_t len;
    uint8_t *orig = tsf_test_read_file(ipath, &len), *m = malloc(len);
    int counts[3] = {0, 0, 0};
    for (int round = 0; orig && m && round < 60; round++) {
        memcpy(m, orig, len);
        for (int k = 0; k < 1 + round % 3; k++)
            m[tsf_test_rand(&seed) % len] ^= (uint8_t)(1u << (tsf_test_rand(&seed) % 8));
        write_file(ipath, m, len);
        tsf_status st = tsf_page_index_open_dir(&p, dir, NULL, &e);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ESTATE);
        counts[st == TSF_OK ? 0 : st == TSF_ECORRUPT ? 1 : 2]++;
        for (size_t k = 0; !st && k < 40; k++) {
            const dpage *q = &all[tsf_test_rand(&seed) % n];
            (void)tsf_page_index_lookup_name(p, q->dev, q->ser, q->p.start, NULL, &loc, NULL);
        }
        if (!st) tsf_page_index_close(p);
        p = NULL;
    }
    printf("  damaged directory indexes: %d opened, %d ECORRUPT, %d ESTATE\n", counts[0], counts[1], counts[2]);
    CHECK(counts[1] > 0);
    write_file(ipath, "TSFPXD01 garbage", 16);
    CHECK_EQ_INT(tsf_page_index_open_dir(&p, dir, NULL, &e), TSF_ECORRUPT);
    /* stale: a file rewritten, a file removed */
    if (orig) write_file(ipath, orig, len);
    CHECK_OK(tsf_page_index_open_dir(&p, dir, NULL, &e), &e);
    tsf_page_index_close(p);
    write_rows_file(path[2], 8000, 9001);
    CHECK_EQ_INT(tsf_page_index_open_dir(&p, dir, NULL, &e), TSF_ESTATE);
    remove(path[2]);
    CHECK_EQ_INT(tsf_page_index_open_dir(&p, dir, NULL, &e), TSF_ESTATE);
    CHECK(p == NULL);
    free(orig);
    free(m);
    free(all);
    for (int f = 0; f < 2; f++) remove(path[f]);
    remove(ipath);
    CHECK_EQ_INT(tsf_page_index_build_dir(dir, NULL, NULL, &e), TSF_ENOTFOUND);
    rmdir(dir);
}

static void test_stale_and_damaged(void)
{
    char a[200], b[200], ia[220], junk[220];
    gen_to("a.tsfile", 3000, 64, 700, a, sizeof a);
    gen_to("b.tsfile", 3001, 64, 700, b, sizeof b);
    snprintf(ia, sizeof ia, "%s.tsfidx", a);
    tsf_error e = {0};
    tsf_reader *ra = NULL, *rb = NULL;
    tsf_page_index *pix = NULL;
    ra = open_path(a, 0, 0); /* "without the index" below means without any */
    rb = open_path(b, 0, 0);
    if (!ra || !rb) return;
    CHECK_OK(tsf_page_index_build(ra, ia, NULL, &e), &e);
    /* another file: ESTATE on an explicit open, ignored by auto-detection */
    CHECK_EQ_INT(tsf_page_index_open(rb, ia, &pix, &e), TSF_ESTATE);
    CHECK(pix == NULL);
    char bidx[220];
    snprintf(bidx, sizeof bidx, "%s.tsfidx", b);
    CHECK(rename(ia, bidx) == 0);
    CHECK_OK(tsf_page_index_open_auto(rb, b, &pix, &e), &e);
    CHECK(pix == NULL);
    CHECK(rename(bidx, ia) == 0);
    /* an index of another reader is not used by a query (same rows either way) */
    CHECK_OK(tsf_page_index_open(ra, ia, &pix, &e), &e);
    qsum s1, s2;
    CHECK_OK(run_query(rb, pix, 0, 100, 2000, 1, &s1, &e), &e);
    CHECK_OK(run_query(rb, NULL, 0, 100, 2000, 1, &s2, &e), &e);
    CHECK(s1.h == s2.h && s1.rows == s2.rows);
    tsf_page_index_close(pix);
    pix = NULL;
    /* absent: auto gives NULL; damaged: ECORRUPT/ESTATE or open, never a crash, and queries stay right */
    CHECK_OK(tsf_page_index_open_auto(ra, b, &pix, &e), &e);
    CHECK(pix == NULL);
    size_t len;
    uint8_t *orig = tsf_test_read_file(ia, &len);
    CHECK(orig != NULL);
    if (!orig) return;
    snprintf(junk, sizeof junk, "%s/junk.tsfidx", tmpdir());
    write_file(junk, "not an index at all, just text", 30);
    CHECK_EQ_INT(tsf_page_index_open(ra, junk, &pix, &e), TSF_ECORRUPT);
    write_file(junk, orig, len / 2);
    CHECK_EQ_INT(tsf_page_index_open(ra, junk, &pix, &e), TSF_ECORRUPT);
    uint64_t seed = 7;
    int counts[3] = {0, 0, 0};
    uint8_t *m = malloc(len);
    for (int round = 0; round < 150; round++) {
        memcpy(m, orig, len);
        int flips = 1 + (int)(tsf_test_rand(&seed) % 4);
        for (int k = 0; k < flips; k++)
            m[tsf_test_rand(&seed) % len] ^= (uint8_t)(1u << (tsf_test_rand(&seed) % 8));
        write_file(junk, m, len);
        tsf_status st = tsf_page_index_open(ra, junk, &pix, &e);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ESTATE);
        counts[st == TSF_OK ? 0 : st == TSF_ECORRUPT ? 1 : 2]++;
        if (st) continue;
        tsf_page_loc loc;
        for (int k = 0; k < 50; k++) /* any answer, but a safe one */
            (void)tsf_page_index_lookup(pix, tsf_test_rand(&seed) % 4, k % 3,
                                        (int64_t)(tsf_test_rand(&seed) % 40000), &loc, NULL);
        for (size_t dev = 0; dev < tsf_reader_device_count(ra); dev++) { /* same rows as without it */
            int64_t lo = (int64_t)(tsf_test_rand(&seed) % 30000);
            qsum t1, t2;
            tsf_status q1 = run_query(ra, pix, dev, lo, INT64_MAX, 1, &t1, &e);
            tsf_status q2 = run_query(ra, NULL, dev, lo, INT64_MAX, 1, &t2, &e);
            CHECK(q1 == q2 && t1.rows == t2.rows && t1.h == t2.h);
        }
        tsf_page_index_close(pix);
        pix = NULL;
    }
    printf("  damaged indexes: %d opened, %d ECORRUPT, %d ESTATE\n", counts[0], counts[1], counts[2]);
    /* a page table record changed through the PLTree API (its page header offset moved by one byte): the
     * lookups of that page report ECORRUPT and the queries keep their rows */
    {
        tsf_index_options io;
        tsf_index_options_init(&io);
        tsf_index *ix = NULL;
        uint64_t span = 0, hoff = 0;
        const uint64_t hdr = UINT64_MAX - 15;
        write_file(junk, orig, len);
        CHECK_OK(tsf_index_open(&ix, junk, &io, &e), &e);
        CHECK_OK(tsf_index_get(ix, hdr + 5, &span, &e), &e); /* the page table starts at the key span T */
        uint64_t g = 7;
        CHECK_OK(tsf_index_get(ix, span + 3 * g + 1, &hoff, &e), &e);
        CHECK_OK(tsf_index_insert(ix, span + 3 * g + 1, hoff + 1, &e), &e);
        CHECK_OK(tsf_index_sync(ix, &e), &e);
        tsf_index_close(ix);
        CHECK_OK(tsf_page_index_open(ra, junk, &pix, &e), &e);
        int bad = 0;
        for (size_t dev = 0; dev < tsf_reader_device_count(ra); dev++) {
            tsf_device_info di;
            CHECK_OK(tsf_reader_device(ra, dev, &di, &e), &e);
            for (size_t j = 0; j <= di.nseries; j++) {
                size_t sj = j == di.nseries ? TSF_PAGE_INDEX_TIME : j;
                if (sj == TSF_PAGE_INDEX_TIME && !di.aligned) continue;
                for (int64_t t = 0; t < 30000; t += 7) {
                    tsf_page_loc loc;
                    tsf_status st = tsf_page_index_lookup(pix, dev, sj, t, &loc, &e);
                    CHECK(st == TSF_OK || st == TSF_ENOTFOUND || st == TSF_ECORRUPT);
                    bad += st == TSF_ECORRUPT;
                }
            }
            qsum t1, t2;
            CHECK_OK(run_query(ra, pix, dev, 1500, INT64_MAX, 1, &t1, &e), &e);
            CHECK_OK(run_query(ra, NULL, dev, 1500, INT64_MAX, 1, &t2, &e), &e);
            CHECK(t1.rows == t2.rows && t1.h == t2.h);
        }
        CHECK(bad > 0);
        tsf_page_index_close(pix);
        pix = NULL;
    }
    CHECK(counts[1] > 0);
    free(m);
    free(orig);
    tsf_reader_close(ra);
    tsf_reader_close(rb);
    remove(a);
    remove(b);
    remove(ia);
    remove(junk);
}

int main(void)
{
    TSF_RUN(test_writer_files);
    TSF_RUN(test_out_of_order);
    TSF_RUN(test_reader_uses_index);
    TSF_RUN(test_stale_and_damaged);
    TSF_RUN(test_auto_index);
    TSF_RUN(test_write_time);
    TSF_RUN(test_dir_index);
    TSF_RUN(test_golden);
    int rc = tsf_test_finish();
    rmdir(tmpdir());
    return rc;
}
