/*
 * test_golden_pages.c - the compatibility suite for the codecs and decompressors: every golden file
 * written by the Java reference (tests/data/tsfile-java, corrupt/ excluded) and the version-3 file of
 * the C++ writer (tests/data/tsfile-cpp) is walked with the format module, every page is decompressed
 * (tsf_decompress with the header's uncompressedSize), split (non-aligned: uvarint timeLen + TS_2DIFF
 * times + values; aligned: time pages + value pages with null bitmaps) and decoded with
 * tsf_codec_decode, count-driven by the time column. The resulting (device, measurement, time,
 * value) rows must equal the file's CSV exactly (FLOAT/DOUBLE by raw bits, nulls by absence).
 *
 * A file is "pending" (not failed) while a codec or compression it needs is still a placeholder,
 * i.e. TSF_ENOTSUP from an encoding whose tsf_codec_can_decode() is 0 or a compression whose
 * tsf_compression_supported() is 0. Every other error or mismatch fails the test. Each file is
 * decoded once per distinct codec path the CPU offers (per_value, scalar, sse41, avx2, avx512).
 */
#include <dirent.h>
#include <stdlib.h>

#include "format/format.h"
#include "golden_csv.h"
#include "test.h"

enum { GR_OK = 0, GR_PENDING = 1, GR_FAIL = 2 };

typedef struct series_info {
    size_t dev, meas; /* offsets in the row table's pool */
    tsf_type type;
    tsf_encoding enc;
    tsf_compression comp;
} series_info;

typedef struct ctx {
    const tsf_codec *codec;
    int java; /* CSV conventions */
    gcsv rows;
    gcsv_buf fmt;
    int result;
    char msg[600];
    /* current chunk group / chunk */
    size_t dev_off;
    char *devname;
    size_t devcap;
    size_t meas_off;
    tsf_fmt_chunk_header chunk;
    int chunk_skip; /* pending: pages of this chunk are not decoded */
    /* aligned group: times of the current time chunk, per page */
    int have_time_chunk;
    int64_t *times;
    size_t ntimes, times_cap;
    size_t *tp_start, *tp_n;
    size_t ntp, tp_cap, tp_ncap;
    /* scratch */
    uint8_t *page;
    size_t page_cap;
    void *vals;
    size_t vals_cap;
    int64_t *tvals;
    size_t tvals_cap;
    series_info *series;
    size_t nseries, series_cap;
} ctx;

static void set_result(ctx *c, int r, const char *fmt, ...) TSF_PRINTF(3, 4);
static void set_result(ctx *c, int r, const char *fmt, ...)
{
    if (c->result >= r) return; /* keep the first message of the worst kind */
    c->result = r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    return gcsv_grow(p, cap, need ? need : 1, elem);
}

/* Classifies a failed call: ENOTSUP of a placeholder is pending, anything else fails. */
static int failed(ctx *c, tsf_status st, const tsf_error *e, int placeholder, const char *what, uint64_t off)
{
    if (st == TSF_ENOTSUP && placeholder) {
        set_result(c, GR_PENDING, "%s at %llu: %s", what, (unsigned long long)off, e->message);
        return GR_PENDING;
    }
    set_result(c, GR_FAIL, "%s at %llu (%s.%s): %s %s", what, (unsigned long long)off, c->devname,
               gcsv_s(&c->rows, c->meas_off), tsf_status_name(st), e->message);
    return GR_FAIL;
}

/* Decompressed body of a page into c->page (or the body itself when UNCOMPRESSED). */
static const uint8_t *page_bytes(ctx *c, const tsf_walk_item *it)
{
    tsf_error e = {0};
    if (it->chunk.compression == TSF_UNCOMPRESSED) {
        if (it->page.compressed_size != it->page.uncompressed_size) {
            set_result(c, GR_FAIL, "page at %llu: UNCOMPRESSED but sizes %u != %u",
                       (unsigned long long)it->offset, it->page.uncompressed_size, it->page.compressed_size);
            return NULL;
        }
        return it->body;
    }
    c->page = grow(c->page, &c->page_cap, it->page.uncompressed_size, 1);
    tsf_status st = tsf_decompress(it->chunk.compression, it->body, it->body_len, c->page,
                                   it->page.uncompressed_size, &e);
    if (st) {
        failed(c, st, &e, !tsf_compression_supported(it->chunk.compression), "decompress page", it->offset);
        return NULL;
    }
    return c->page;
}

/* Number of timestamps in a time stream: from the codec, else from the page statistics. */
static int time_count(ctx *c, const tsf_walk_item *it, tsf_encoding enc, const uint8_t *p, size_t len,
                      size_t *n)
{
    tsf_error e = {0};
    tsf_status st = tsf_codec_count(TSF_INT64, enc, p, len, n, &e);
    if (st == TSF_ENOTSUP && tsf_codec_can_decode(TSF_INT64, enc) && it->page.has_stats) {
        *n = it->page.stats.count;
        return GR_OK;
    }
    if (st) return failed(c, st, &e, !tsf_codec_can_decode(TSF_INT64, enc), "count timestamps", it->offset);
    if (*n > (size_t)len * 8 + 64) {
        set_result(c, GR_FAIL, "page at %llu: implausible time count %zu", (unsigned long long)it->offset,
                   *n);
        return GR_FAIL;
    }
    return GR_OK;
}

static int decode_times(ctx *c, const tsf_walk_item *it, tsf_encoding enc, const uint8_t *p, size_t len,
                        size_t *n)
{
    tsf_error e = {0};
    int r = time_count(c, it, enc, p, len, n);
    if (r) return r;
    c->tvals = grow(c->tvals, &c->tvals_cap, *n, sizeof(int64_t));
    tsf_status st = tsf_codec_decode(c->codec, TSF_INT64, enc, p, len, c->tvals, *n, NULL, &e);
    if (st) return failed(c, st, &e, !tsf_codec_can_decode(TSF_INT64, enc), "decode timestamps", it->offset);
    for (size_t i = 1; i < *n; i++)
        if (c->tvals[i] <= c->tvals[i - 1]) {
            set_result(c, GR_FAIL,
                       "page at %llu: timestamps not increasing at %zu (%" PRId64 " after %" PRId64 ")",
                       (unsigned long long)it->offset, i, c->tvals[i], c->tvals[i - 1]);
            return GR_FAIL;
        }
    if (it->page.has_stats && *n &&
        (it->page.stats.count != *n || it->page.stats.start_time != c->tvals[0] ||
         it->page.stats.end_time != c->tvals[*n - 1])) {
        set_result(c, GR_FAIL,
                   "page at %llu: statistics count/start/end %" PRIu64 "/%" PRId64 "/%" PRId64
                   " disagree with the time stream %zu/%" PRId64 "/%" PRId64,
                   (unsigned long long)it->offset, it->page.stats.count, it->page.stats.start_time,
                   it->page.stats.end_time, *n, c->tvals[0], c->tvals[*n - 1]);
        return GR_FAIL;
    }
    return GR_OK;
}

static int decode_values(ctx *c, const tsf_walk_item *it, const uint8_t *p, size_t len, size_t n)
{
    tsf_error e = {0};
    tsf_type t = it->chunk.data_type;
    c->vals = grow(c->vals, &c->vals_cap, n * tsf_type_size(t), 1);
    tsf_status st = tsf_codec_decode(c->codec, t, it->chunk.encoding, p, len, c->vals, n, NULL, &e);
    if (st)
        return failed(c, st, &e, !tsf_codec_can_decode(t, it->chunk.encoding), "decode values", it->offset);
    return GR_OK;
}

static void emit(ctx *c, tsf_type t, size_t i, int64_t time)
{
    gcsv_format(&c->fmt, t, c->vals, i, c->java);
    gcsv_row *r = gcsv_add(&c->rows);
    r->dev = c->dev_off;
    r->meas = c->meas_off;
    r->time = time;
    r->type = gcsv_str(&c->rows, c->java ? tsf_type_name(t) : "", c->java ? strlen(tsf_type_name(t)) : 0);
    r->val = gcsv_str(&c->rows, c->fmt.p, c->fmt.len);
}

static void page_nonaligned(ctx *c, const tsf_walk_item *it)
{
    const uint8_t *p = page_bytes(c, it);
    if (!p) return;
    tsf_fmt_nonaligned_page pg;
    tsf_error e = {0};
    size_t n;
    if (tsf_fmt_parse_nonaligned_page(p, it->page.uncompressed_size, it->body_offset, &pg, &e)) {
        set_result(c, GR_FAIL, "%s", e.message);
        return;
    }
    if (decode_times(c, it, TSF_ENC_TS_2DIFF, pg.time, pg.time_len, &n)) return;
    if (decode_values(c, it, pg.values, pg.values_len, n)) return;
    for (size_t i = 0; i < n; i++) emit(c, it->chunk.data_type, i, c->tvals[i]);
}

static void page_time(ctx *c, const tsf_walk_item *it)
{
    size_t n = 0;
    const uint8_t *p = page_bytes(c, it);
    /* keep page numbering even when this page cannot be decoded */
    c->tp_start = grow(c->tp_start, &c->tp_cap, c->ntp + 1, sizeof(size_t));
    c->tp_n = grow(c->tp_n, &c->tp_ncap, c->ntp + 1, sizeof(size_t));
    c->tp_start[c->ntp] = c->ntimes;
    c->tp_n[c->ntp] = 0;
    c->ntp++;
    if (!p) return;
    if (decode_times(c, it, it->chunk.encoding, p, it->page.uncompressed_size, &n)) return;
    c->times = grow(c->times, &c->times_cap, c->ntimes + n, sizeof(int64_t));
    memcpy(c->times + c->ntimes, c->tvals, n * sizeof(int64_t));
    c->ntimes += n;
    c->tp_n[c->ntp - 1] = n;
}

static void page_value(ctx *c, const tsf_walk_item *it)
{
    if (!c->have_time_chunk || it->page_index >= c->ntp) {
        set_result(c, GR_FAIL, "value page at %llu: no time page %u in this chunk group",
                   (unsigned long long)it->offset, it->page_index);
        return;
    }
    if (c->result == GR_PENDING && c->tp_n[it->page_index] == 0) return; /* its time page is pending */
    size_t rows = c->tp_n[it->page_index];
    const int64_t *t = c->times + c->tp_start[it->page_index];
    if (it->page.uncompressed_size == 0) return; /* empty value page: every row null */
    const uint8_t *p = page_bytes(c, it);
    if (!p) return;
    tsf_fmt_value_page vp;
    tsf_error e = {0};
    if (tsf_fmt_parse_value_page(p, it->page.uncompressed_size, it->body_offset, &vp, &e)) {
        set_result(c, GR_FAIL, "%s", e.message);
        return;
    }
    if (vp.row_count != rows) {
        set_result(c, GR_FAIL, "value page at %llu: rowCount %u but the time page has %zu rows",
                   (unsigned long long)it->offset, vp.row_count, rows);
        return;
    }
    if (it->page.has_stats && it->page.stats.count != vp.present) {
        set_result(c, GR_FAIL, "value page at %llu: statistics count %" PRIu64 " but %u rows present",
                   (unsigned long long)it->offset, it->page.stats.count, vp.present);
        return;
    }
    if (decode_values(c, it, vp.values, vp.values_len, vp.present)) return;
    size_t k = 0;
    for (size_t r = 0; r < rows; r++)
        if (tsf_fmt_bitmap_get(vp.bitmap, r)) emit(c, it->chunk.data_type, k++, t[r]);
}

static void on_chunk(ctx *c, const tsf_walk_item *it)
{
    c->chunk = it->chunk;
    c->meas_off = gcsv_str(&c->rows, (const char *)it->chunk.measurement.data, it->chunk.measurement.len);
    tsf_chunk_kind k = tsf_fmt_chunk_kind(it->chunk.marker);
    if (k == TSF_CHUNK_TIME) {
        c->have_time_chunk = 1;
        c->ntimes = 0;
        c->ntp = 0;
        return;
    }
    c->series = grow(c->series, &c->series_cap, c->nseries + 1, sizeof *c->series);
    series_info *s = &c->series[c->nseries++];
    s->dev = c->dev_off;
    s->meas = c->meas_off;
    s->type = it->chunk.data_type;
    s->enc = it->chunk.encoding;
    s->comp = it->chunk.compression;
    if (k == TSF_CHUNK_VALUE && !c->have_time_chunk)
        set_result(c, GR_FAIL, "value chunk at %llu: no time chunk before it in its group",
                   (unsigned long long)it->offset);
}

/* Walks one file and appends its decoded rows to c->rows. */
static void decode_file(ctx *c, const uint8_t *file, size_t len)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e = {0};
    if (tsf_walk_init(&w, file, len, &e)) {
        set_result(c, GR_FAIL, "head: %s", e.message);
        return;
    }
    for (;;) {
        if (tsf_walk_next(&w, &it, &e)) {
            set_result(c, GR_FAIL, "walk: %s", e.message);
            return;
        }
        if (it.kind == TSF_WALK_END) break;
        switch (it.kind) {
        case TSF_WALK_CHUNK_GROUP: {
            size_t n = tsf_fmt_device_to_string(&it.device, NULL, 0);
            c->devname = grow(c->devname, &c->devcap, n + 1, 1);
            tsf_fmt_device_to_string(&it.device, c->devname, n + 1);
            c->dev_off = gcsv_str(&c->rows, c->devname, n);
            c->have_time_chunk = 0;
            break;
        }
        case TSF_WALK_CHUNK:
            on_chunk(c, &it);
            break;
        case TSF_WALK_PAGE:
            switch (tsf_fmt_chunk_kind(it.chunk.marker)) {
            case TSF_CHUNK_NONALIGNED:
                page_nonaligned(c, &it);
                break;
            case TSF_CHUNK_TIME:
                page_time(c, &it);
                break;
            case TSF_CHUNK_VALUE:
                page_value(c, &it);
                break;
            }
            break;
        default:
            break;
        }
        if (c->result == GR_FAIL) return;
    }
    if (w.truncated)
        set_result(c, GR_FAIL, "no separator: data area ends at %llu", (unsigned long long)it.offset);
}

static const series_info *find_series(const ctx *c, const char *dev, const char *meas)
{
    for (size_t i = 0; i < c->nseries; i++)
        if (!strcmp(gcsv_s(&c->rows, c->series[i].dev), dev) &&
            !strcmp(gcsv_s(&c->rows, c->series[i].meas), meas))
            return &c->series[i];
    return NULL;
}

static int row_eq(const gcsv *a, const gcsv_row *x, const gcsv *b, const gcsv_row *y)
{
    return x->time == y->time && !strcmp(gcsv_s(a, x->dev), gcsv_s(b, y->dev)) &&
           !strcmp(gcsv_s(a, x->meas), gcsv_s(b, y->meas)) &&
           !strcmp(gcsv_s(a, x->type), gcsv_s(b, y->type)) && !strcmp(gcsv_s(a, x->val), gcsv_s(b, y->val));
}

/* Compares sorted decoded rows with sorted expected rows; fills the first mismatch. */
static void compare(ctx *c, const gcsv *want)
{
    const gcsv *got = &c->rows;
    size_t n = got->n < want->n ? got->n : want->n;
    for (size_t i = 0; i <= n; i++) {
        if (i == n) {
            if (got->n != want->n)
                set_result(c, GR_FAIL, "%zu rows decoded, %zu expected (all of the first %zu equal)", got->n,
                           want->n, n);
            return;
        }
        const gcsv_row *x = &got->rows[i], *y = &want->rows[i];
        if (row_eq(got, x, want, y)) continue;
        const series_info *s = find_series(c, gcsv_s(want, y->dev), gcsv_s(want, y->meas));
        char lim[2][80];
        snprintf(lim[0], sizeof lim[0], "%.70s", gcsv_s(want, y->val));
        snprintf(lim[1], sizeof lim[1], "%.70s", gcsv_s(got, x->val));
        set_result(c, GR_FAIL,
                   "row %zu: expected %s,%s,%" PRId64 ",%s,%s got %s,%s,%" PRId64 ",%s,%s [series %s %s %s]",
                   i, gcsv_s(want, y->dev), gcsv_s(want, y->meas), y->time, gcsv_s(want, y->type), lim[0],
                   gcsv_s(got, x->dev), gcsv_s(got, x->meas), x->time, gcsv_s(got, x->type), lim[1],
                   s ? tsf_type_name(s->type) : "?", s ? tsf_encoding_name(s->enc) : "?",
                   s ? tsf_compression_name(s->comp) : "?");
        return;
    }
}

static void ctx_free(ctx *c)
{
    gcsv_free(&c->rows);
    free(c->fmt.p);
    free(c->devname);
    free(c->times);
    free(c->tp_start);
    free(c->tp_n);
    free(c->page);
    free(c->vals);
    free(c->tvals);
    free(c->series);
}

static int g_ok, g_pending, g_fail;
static unsigned g_paths; /* codec paths the files were decoded on (bit per tsf_codec_path) */

/* Checks one golden file on every distinct codec path. Prints one line. */
static void check_file(const char *dir, const char *name, const char *csv_name, int java)
{
    char path[1024], csv[1024], why[400] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    uint8_t *file = tsf_test_read_file(path, &len);
    gcsv want = {0};
    int result = GR_OK;
    char msg[700] = "";
    size_t rows = 0;
    snprintf(csv, sizeof csv, "%s/%s", dir, csv_name);
    FILE *probe = fopen(csv, "rb");
    if (!probe) snprintf(csv, sizeof csv, "%s/%s.gz", dir, csv_name);
    if (probe) fclose(probe);
    if (!file) {
        result = GR_FAIL;
        snprintf(msg, sizeof msg, "cannot read %.300s", path);
    } else if (gcsv_load(&want, csv, java, why, sizeof why)) {
        result = GR_FAIL;
        snprintf(msg, sizeof msg, "%s", why);
    } else {
        gcsv_sort(&want);
        rows = want.n;
        static const tsf_codec_path paths[] = {TSF_PATH_PER_VALUE, TSF_PATH_SCALAR, TSF_PATH_SSE41,
                                               TSF_PATH_AVX2,      TSF_PATH_AVX512, TSF_PATH_NEON};
        unsigned seen = 0;
        for (size_t pi = 0; pi < sizeof paths / sizeof paths[0] && result != GR_FAIL; pi++) {
            tsf_codec_options o;
            tsf_codec_options_init(&o);
            o.path = paths[pi];
            tsf_codec *codec = NULL;
            tsf_error e = {0};
            if (tsf_codec_open(&codec, &o, &e)) {
                result = GR_FAIL;
                snprintf(msg, sizeof msg, "tsf_codec_open: %s", e.message);
                break;
            }
            tsf_codec_path real = tsf_codec_get_path(codec);
            if (seen & (1u << real)) {
                tsf_codec_close(codec);
                continue;
            }
            seen |= 1u << real;
            g_paths |= 1u << real;
            ctx c;
            memset(&c, 0, sizeof c);
            c.codec = codec;
            c.java = java;
            decode_file(&c, file, len);
            if (c.result == GR_OK) {
                gcsv_sort(&c.rows);
                compare(&c, &want);
            }
            if (c.result > result) {
                result = c.result;
                snprintf(msg, sizeof msg, "[path %s] %s", tsf_codec_path_name(real), c.msg);
            }
            ctx_free(&c);
            tsf_codec_close(codec);
            if (result == GR_PENDING) break; /* the same placeholder on every path */
        }
    }
    if (result == GR_OK) {
        g_ok++;
        printf("  ok      %s (%zu rows)\n", name, rows);
    } else if (result == GR_PENDING) {
        g_pending++;
        printf("  pending %s: %s\n", name, msg);
    } else {
        g_fail++;
        printf("  FAIL    %s: %s\n", name, msg);
        tsf_test_failures++;
    }
    fflush(stdout);
    gcsv_free(&want);
    free(file);
}

static void test_golden_java(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tsfile-java", data);
    size_t n = 0;
    char **names = gcsv_list_tsfiles(dir, &n);
    if (!names) {
        CHECK(names != NULL); /* tests/data is part of the checkout */
        return;
    }
    g_ok = g_pending = g_fail = 0;
    g_paths = 0;
    for (size_t i = 0; i < n; i++) {
        char csv[600];
        snprintf(csv, sizeof csv, "%s.csv", names[i]);
        check_file(dir, names[i], csv, 1);
        free(names[i]);
    }
    free(names);
    printf(
        "golden tsfile-java: %zu files: %d ok, %d pending (codec/compression not yet implemented), %d FAIL\n",
        n, g_ok, g_pending, g_fail);
    printf("decoded on paths:");
    for (int p = 0; p < 8; p++)
        if (g_paths & (1u << p)) printf(" %s", tsf_codec_path_name((tsf_codec_path)p));
    printf("\n");
    CHECK(n > 0);
}

static void test_golden_cpp_v3(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tsfile-cpp", data);
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    closedir(d);
    g_ok = g_pending = g_fail = 0;
    check_file(dir, "tree_regular_time_UNCOMPRESSED.tsfile", "tree_regular_time_UNCOMPRESSED.csv", 0);
    printf("golden tsfile-cpp: %d ok, %d pending, %d FAIL\n", g_ok, g_pending, g_fail);
}

int main(void)
{
    TSF_RUN(test_golden_java);
    TSF_RUN(test_golden_cpp_v3);
    return tsf_test_finish();
}
