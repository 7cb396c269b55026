/*
 * test_verify.c - tsf_verify: a file our writer makes verifies clean with every structure counted (points
 * against an independent count from gen_file.h's expectations); every golden file of tests/data verifies
 * clean; a byte flipped inside a page is reported at that page (or, for a single-page chunk whose
 * statistics live only in the index, at its chunk); a damaged bloom filter, every truncation and the
 * three corrupt/ golden files are reported with their offsets, without crashing. A hand-made file whose
 * aligned value column lists fewer chunks than its time column is damage (the reference pairs them by
 * position) and recovers into one that keeps them in step; the files the Java recovery wrote (type
 * bytes without their column-role bits) verify with warnings only.
 */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/format.h"
#include "format/meta_index.h"
#include "format/meta_index_parse.h"
#include "gen_file.h"
#include "read/reader_internal.h"
#include "test.h"

#define MAXP 64

typedef struct problems {
    size_t n;
    uint64_t off[MAXP];
    char what[MAXP][160];
} problems;

static void collect(void *ctx, const tsf_problem *p)
{
    problems *ps = ctx;
    if (ps->n < MAXP) {
        ps->off[ps->n] = p->offset;
        snprintf(ps->what[ps->n], sizeof ps->what[0], "%s", p->what);
    }
    ps->n++;
}

static int has_offset(const problems *ps, uint64_t off)
{
    for (size_t i = 0; i < ps->n && i < MAXP; i++)
        if (ps->off[i] == off) return 1;
    return 0;
}

static char g_path[64];

static const char *write_tmp(const uint8_t *p, size_t n)
{
    if (!g_path[0]) {
        snprintf(g_path, sizeof g_path, "/tmp/tsf_verify_XXXXXX");
        int fd = mkstemp(g_path);
        if (fd < 0) {
            perror("mkstemp");
            exit(1);
        }
        close(fd);
    }
    unlink(g_path); /* a fresh file each time (no write-back of a truncated one) */
    FILE *f = fopen(g_path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n)) {
        perror("write");
        exit(1);
    }
    fclose(f);
    return g_path;
}

static gen_buf g_file;
#define N_ROWS 600
#define FLUSH 200

static const gen_buf *file(void)
{
    if (!g_file.p) {
        char why[300];
        if (gen_file(&g_file, N_ROWS, 64, FLUSH, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            exit(1);
        }
    }
    return &g_file;
}

static void test_clean(void)
{
    const gen_buf *b = file();
    problems ps = {0};
    tsf_verify_report rep;
    tsf_error e = {0};
    CHECK_OK(tsf_verify(write_tmp(b->p, b->n), collect, &ps, &rep, &e), &e);
    CHECK_EQ_INT(ps.n, 0);
    CHECK_EQ_INT(rep.problems, 0);
    /* independent count of the non-null values gen_file wrote */
    uint64_t expect = 0;
    char tmp[64];
    tsf_value v;
    for (size_t i = 0; i < N_ROWS; i++) {
        for (size_t c = 0; c < 3; c++) expect += gen_expect(0, c, i, &v, tmp, sizeof tmp) != 0;
        for (size_t c = 0; c < GEN_A1_COLS; c++) expect += gen_expect(1, c, i, &v, tmp, sizeof tmp) != 0;
        expect += 2 * (1 + (i % 4 != 3)); /* t1: temp always, hum unless i%4==3, two devices */
    }
    CHECK_EQ_INT(rep.points, expect);
    CHECK_EQ_INT(rep.chunk_groups, (N_ROWS / FLUSH) * 4); /* d1, a1, t1.north, t1.south per flush */
    CHECK(rep.chunks > rep.chunk_groups);
    CHECK(rep.pages > rep.chunks);
    /* without callback and report */
    CHECK_OK(tsf_verify(g_path, NULL, NULL, NULL, &e), &e);
}

static void test_args(void)
{
    tsf_error e = {0};
    CHECK_EQ_INT(tsf_verify(NULL, NULL, NULL, NULL, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_verify("/nonexistent/tsf_verify.tsfile", NULL, NULL, NULL, &e), TSF_EIO);
    problems ps = {0};
    tsf_verify_report rep;
    CHECK_EQ_INT(tsf_verify(write_tmp((const uint8_t *)"", 0), collect, &ps, &rep, &e), TSF_ECORRUPT);
    CHECK(ps.n >= 1 && rep.problems == ps.n);
    if (ps.n) CHECK_EQ_INT(ps.off[0], 0);
}

/* The first page of every chunk, with its chunk. */
typedef struct page_at {
    uint64_t chunk, page, body, body_len;
    tsf_type type;
} page_at;

static size_t list_pages(const uint8_t *p, size_t n, page_at *out, size_t cap)
{
    tsf_walker w;
    tsf_walk_item it;
    size_t k = 0;
    if (tsf_walk_init(&w, p, n, NULL)) return 0;
    while (!tsf_walk_next(&w, &it, NULL) && it.kind != TSF_WALK_END)
        if (it.kind == TSF_WALK_PAGE && it.page_index == 0 && it.body_len && k < cap)
            out[k++] = (page_at){it.chunk_offset, it.offset, it.body_offset, it.body_len, it.chunk.data_type};
    return k;
}

static void test_flipped_page(void)
{
    const gen_buf *b = file();
    static page_at pg[512];
    size_t np = list_pages(b->p, b->n, pg, 512);
    CHECK(np > 30);
    uint8_t *copy = malloc(b->n);
    size_t undetected = 0;
    for (size_t k = 0; k < np; k++) {
        memcpy(copy, b->p, b->n);
        copy[pg[k].body + pg[k].body_len / 2] ^= 0x5a;
        problems ps = {0};
        tsf_verify_report rep;
        tsf_error e = {0};
        tsf_status st = tsf_verify(write_tmp(copy, b->n), collect, &ps, &rep, &e);
        int binary = pg[k].type == TSF_TEXT || pg[k].type == TSF_STRING || pg[k].type == TSF_BLOB;
        if (st == TSF_OK && binary) { /* a changed inner string value: no checksum can tell */
            undetected++;
            continue;
        }
        CHECK_EQ_INT(st, TSF_ECORRUPT);
        CHECK(rep.problems > 0);
        if (!has_offset(&ps, pg[k].page) && !has_offset(&ps, pg[k].chunk)) {
            fprintf(stderr, "flip in page at %llu (chunk %llu): first problem at %llu: %s\n",
                    (unsigned long long)pg[k].page, (unsigned long long)pg[k].chunk,
                    (unsigned long long)(ps.n ? ps.off[0] : 0), ps.n ? ps.what[0] : "");
            CHECK(!"the damaged page is not named");
        }
    }
    CHECK(undetected * 4 < np);
    free(copy);
}

/* Every bloom filter bit cleared: each series is reported missing. */
static void test_bloom_damage(void)
{
    const gen_buf *b = file();
    uint8_t *copy = malloc(b->n);
    memcpy(copy, b->p, b->n);
    tsf_fmt_tail tail;
    tsf_mip_file_meta fm;
    tsf_error e = {0};
    CHECK_OK(tsf_fmt_parse_tail(copy + b->n - 10, 10, b->n, &tail, &e), &e);
    CHECK_OK(tsf_mip_parse_file_meta(copy + tail.meta_pos, tail.meta_size, tail.meta_pos, 4, &fm, &e), &e);
    CHECK(fm.bloom_bits != NULL);
    if (fm.bloom_bits) memset(copy + (fm.bloom_bits - copy), 0, fm.bloom_len);
    problems ps = {0};
    tsf_verify_report rep;
    CHECK_EQ_INT(tsf_verify(write_tmp(copy, b->n), collect, &ps, &rep, &e), TSF_ECORRUPT);
    size_t bloom = 0;
    for (size_t i = 0; i < ps.n && i < MAXP; i++) bloom += strstr(ps.what[i], "bloom filter") != NULL;
    /* d1: 3 series; a1: time + 10; t1 north/south: time + 2 each */
    CHECK_EQ_INT(bloom, 3 + 11 + 3 + 3);
    CHECK_EQ_INT(rep.problems, bloom);
    free(copy);
}

/* Cut anywhere: reported (no tail, or a torn structure at the cut), never a crash. */
static void test_truncated(void)
{
    const gen_buf *b = file();
    size_t step = b->n / 700 + 1;
    for (size_t len = 0; len < b->n; len += step) {
        problems ps = {0};
        tsf_verify_report rep;
        tsf_error e = {0};
        tsf_status st = tsf_verify(write_tmp(b->p, len), collect, &ps, &rep, &e);
        CHECK_EQ_INT(st, TSF_ECORRUPT);
        CHECK(ps.n >= 1);
        if (len >= TSF_FMT_HEAD_LEN) CHECK(has_offset(&ps, len)); /* "no tail at <len>" */
    }
}

/* The corrupt/ golden files, and every golden file clean. */
static void test_golden(void)
{
    const char *dir = tsf_test_data_dir();
    static const struct {
        const char *name;
        uint64_t off; /* where the damage is (README) */
    } bad[] = {
        {"cut_mid_chunk", 139623},            /* the torn root.sg2.d2.s_blob chunk */
        {"flipped_byte_page_header", 102871}, /* the page header with the flipped compressedSize */
        {"tail_metadata_missing", 172488},    /* no tail */
    };
    char path[1024];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(path, sizeof path, "%s/tsfile-java/corrupt/%s.tsfile", dir, bad[k].name);
        problems ps = {0};
        tsf_verify_report rep;
        tsf_error e = {0};
        CHECK_EQ_INT(tsf_verify(path, collect, &ps, &rep, &e), TSF_ECORRUPT);
        CHECK(has_offset(&ps, bad[k].off));
        CHECK_EQ_INT(rep.chunk_groups, 2);
    }
    static const char *const sub[] = {"tsfile-java", "tsfile-cpp"};
    size_t files = 0;
    for (size_t s = 0; s < 2; s++) {
        char d[480];
        snprintf(d, sizeof d, "%s/%s", dir, sub[s]);
        DIR *dp = opendir(d);
        if (!dp) continue;
        struct dirent *de;
        while ((de = readdir(dp))) {
            size_t l = strlen(de->d_name);
            if (l < 7 || strcmp(de->d_name + l - 7, ".tsfile")) continue;
            snprintf(path, sizeof path, "%s/%s", d, de->d_name);
            problems ps = {0};
            tsf_verify_report rep;
            tsf_error e = {0};
            tsf_status st = tsf_verify(path, collect, &ps, &rep, &e);
            if (st) fprintf(stderr, "%s: %s\n", de->d_name, ps.n ? ps.what[0] : e.message);
            CHECK_OK(st, &e);
            CHECK_EQ_INT(rep.problems, 0);
            files++;
        }
        closedir(dp);
    }
    CHECK(files > 80);
}

/* ---- aligned chunk lists out of step ------------------------------------------------------ */

static tsf_status sink_buf(void *ud, const uint8_t *data, size_t len, tsf_error *err)
{
    (void)err;
    tsf_wbuf_put(ud, data, len);
    return TSF_OK;
}

/* Index input for series se of a file the reader loaded: its TimeseriesMetadata fields as stored
 * (statistics bytes: between the list size and the list). */
static void tsf_lix_series_of(const tsf_rd_series *se, tsf_mi_series *x)
{
    const tsf_mip_tsm *t = &se->tsm;
    memset(x, 0, sizeof *x);
    x->name = (const char *)t->measurement.data;
    x->name_len = t->measurement.len;
    x->meta_type = t->meta_type;
    x->data_type = (uint8_t)t->data_type;
    size_t lsz = 1;
    for (uint32_t v = t->chunks_len; v >= 0x80; v >>= 7) lsz++;
    x->stats = t->measurement.data + t->measurement.len + 1 + lsz;
    x->stats_len = (size_t)(t->chunks - x->stats);
    x->chunks = t->chunks;
    x->chunks_len = t->chunks_len;
    x->nchunks = se->nchunks;
}

/* Aligned device root.sg.d (a INT32, b INT64) in two chunk groups, b all null in the second (an empty
 * chunk, the last of the data area). The hand-made file ends its data area before that empty chunk and
 * lists b with its first chunk only: every chunk present is listed, every statistic holds, so only the
 * chunk-list rule catches it. */
static void test_aligned_out_of_step(void)
{
    char path[96], bad[96], rec[96];
    snprintf(path, sizeof path, "%s.steps.tsfile", g_path);
    snprintf(bad, sizeof bad, "%s.steps.bad.tsfile", g_path);
    snprintf(rec, sizeof rec, "%s.steps.rec.tsfile", g_path);
    tsf_error e = {0};
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, NULL, &e), &e);
    tsf_column_schema cols[2] = {{"a", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, 0},
                                 {"b", TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, 0}};
    CHECK_OK(tsf_writer_register_aligned(w, "root.sg.d", cols, 2, &e), &e);
    for (int64_t t = 1; t <= 4; t++) {
        tsf_value v[2] = {{0, {.i32 = (int32_t)t}}, {t > 2, {.i64 = 10 * t}}};
        CHECK_OK(tsf_writer_write_row(w, "root.sg.d", t, NULL, v, 2, &e), &e);
        if (t == 2) CHECK_OK(tsf_writer_flush(w, &e), &e);
    }
    CHECK_OK(tsf_writer_close(w, &e), &e);
    size_t len = 0;
    uint8_t *f = tsf_test_read_file(path, &len);
    CHECK(f != NULL);
    if (!f) return;
    /* the last chunk of the data area: b's empty chunk of the second group */
    tsf_walker wk;
    tsf_walk_item it;
    uint64_t last = 0;
    char last_name[8] = "";
    CHECK(tsf_walk_init(&wk, f, len, NULL) == TSF_OK);
    while (tsf_walk_next(&wk, &it, NULL) == TSF_OK && it.kind != TSF_WALK_END)
        if (it.kind == TSF_WALK_CHUNK) {
            last = it.offset;
            snprintf(last_name, sizeof last_name, "%.*s", (int)it.chunk.measurement.len,
                     (const char *)it.chunk.measurement.data);
            CHECK(!strcmp(last_name, "b") || it.chunk.data_size > 0);
        }
    CHECK(!strcmp(last_name, "b"));
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, f, len, NULL, &e), &e);
    CHECK_OK(tsf_rd_ensure_index(r, &e), &e);
    CHECK(r->ndevices == 1 && r->devices[0].aligned && r->devices[0].nseries == 2);
    tsf_mi_series ser[3];
    tsf_lix_series_of(&r->devices[0].time, &ser[0]);
    tsf_lix_series_of(&r->series[0], &ser[1]);
    tsf_lix_series_of(&r->series[1], &ser[2]);
    CHECK(ser[0].nchunks == 2 && ser[2].nchunks == 2 && ser[2].chunks_len > 8);
    ser[2].nchunks = 1; /* b: its first ChunkMetadata only (an offset: single-chunk layout) */
    ser[2].meta_type = 0x40;
    ser[2].chunks_len = 8;
    tsf_mi_seg segs[2] = {{"root.sg", 7}, {"d", 1}};
    tsf_mi_device dev = {segs, 2, ser, 3};
    tsf_mi_input in = {&dev, 1, NULL, 0, 256, 0.05, NULL};
    tsf_wbuf out;
    tsf_wbuf_init(&out, NULL);
    tsf_wbuf_put(&out, f, (size_t)last);
    CHECK_OK(tsf_meta_index_write(&in, last, sink_buf, &out, NULL, &e), &e);
    tsf_reader_close(r);
    FILE *fp = fopen(bad, "wb");
    CHECK(fp && fwrite(out.p, 1, out.len, fp) == out.len);
    if (fp) fclose(fp);
    /* our reader reads it (it pairs by offset); verify calls it damaged: the reference cannot read it */
    tsf_reader *rb = NULL;
    CHECK_OK(tsf_reader_open(&rb, bad, NULL, &e), &e);
    tsf_reader_close(rb);
    problems ps = {0};
    tsf_verify_report rep;
    CHECK_EQ_INT(tsf_verify(bad, collect, &ps, &rep, &e), TSF_ECORRUPT);
    CHECK_EQ_INT(rep.problems, 1);
    CHECK(ps.n >= 1 && strstr(ps.what[0], "value column b lists 1 chunks but the time column 2"));
    /* recover puts b back in step (an empty chunk in the second group) and keeps every value */
    tsf_recover_report rr;
    unlink(rec);
    CHECK_OK(tsf_recover(bad, rec, &rr, &e), &e);
    CHECK_EQ_INT(rr.chunks_filled, 1);
    CHECK_EQ_INT(rr.points_kept, 6);
    memset(&ps, 0, sizeof ps);
    CHECK_OK(tsf_verify(rec, collect, &ps, &rep, &e), &e);
    CHECK_EQ_INT(rep.warnings, 0);
    CHECK_EQ_INT(rep.points, 6);
    tsf_wbuf_free(&out);
    free(f);
    unlink(path);
    unlink(bad);
    unlink(rec);
}

/* The Java recovery's files: type bytes 0x00/0x01 for time and value columns: warnings, not damage. */
static void test_java_recovered_warnings(void)
{
    static const char *const names[] = {"table_BOOLEAN_LZMA2.cut1_11590", "tree_many_chunks_20_groups_lz4.cut4_2020",
                                        "tree_aligned_multichunk_100k_zstd.cut1_11813"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%.900s/tsfile-java/recovered/%s.java-recovered.tsfile", tsf_test_data_dir(),
                 names[i]);
        problems ps = {0};
        tsf_verify_report rep;
        tsf_error e = {0};
        CHECK_OK(tsf_verify(path, collect, &ps, &rep, &e), &e);
        CHECK_EQ_INT(rep.problems, 0);
        CHECK(rep.warnings > 0);
        CHECK_EQ_INT(ps.n, rep.warnings);
        CHECK(ps.n > 0 && strstr(ps.what[0], "type byte 0x0"));
    }
}

int main(void)
{
    TSF_RUN(test_clean);
    TSF_RUN(test_args);
    TSF_RUN(test_flipped_page);
    TSF_RUN(test_bloom_damage);
    TSF_RUN(test_truncated);
    TSF_RUN(test_golden);
    TSF_RUN(test_aligned_out_of_step);
    TSF_RUN(test_java_recovered_warnings);
    free(g_file.p);
    if (g_path[0]) unlink(g_path);
    return tsf_test_finish();
}
