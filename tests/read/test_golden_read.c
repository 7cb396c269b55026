/*
 * test_golden_read.c - the reader's compatibility suite: every golden file written by the Java
 * reference (tests/data/tsfile-java, corrupt/ excluded) and the version-3 file of the C++ writer
 * (tests/data/tsfile-cpp) is read through the READER API (tsf_reader_open*, tsf_query with every
 * series of every device in one query, so aligned devices and the multi-column merge of
 * non-aligned devices are both exercised) and compared with its CSV row by row (FLOAT/DOUBLE by
 * raw bits, nulls by absence). Each file runs on every distinct codec path, rotating the three
 * ways of opening (path, memory, pread callbacks) and a few batch sizes.
 */
#include <dirent.h>
#include <stdlib.h>

#include "../format/golden_csv.h"
#include "test.h"

typedef struct mem_src {
    const uint8_t *p;
    size_t n;
} mem_src;

static int mem_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    const mem_src *m = ud;
    if (off > m->n || len > m->n - off) return -1;
    memcpy(buf, m->p + off, len);
    return 0;
}

/* Reads the whole file into rows; returns 0 or -1 with why. */
static int read_rows(const char *path, const uint8_t *file, size_t len, int mode, tsf_codec_path cp, size_t batch,
                     int java, gcsv *rows, char *why, size_t whycap)
{
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.path = cp;
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_status st;
    mem_src ms = {file, len};
    if (mode == 0) {
        st = tsf_reader_open(&r, path, &ro, &e);
    } else if (mode == 1) {
        st = tsf_reader_open_memory(&r, file, len, &ro, &e);
    } else {
        tsf_read_callbacks cb = {sizeof cb, mem_pread, len, &ms};
        st = tsf_reader_open_callbacks(&r, &cb, &ro, &e);
    }
    if (st) {
        snprintf(why, whycap, "open: %s %s", tsf_status_name(st), e.message);
        return -1;
    }
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.batch_size = batch;
    tsf_query *q = NULL;
    const tsf_batch *b;
    gcsv_buf fmt = {0};
    size_t *dev_off = NULL, nd = tsf_reader_device_count(r);
    if ((st = tsf_query_open(r, &qo, &q, &e))) goto out;
    dev_off = calloc(nd ? nd : 1, sizeof *dev_off);
    for (size_t i = 0; i < nd; i++) {
        tsf_device_info di;
        tsf_reader_device(r, i, &di, NULL);
        dev_off[i] = gcsv_str(rows, di.name, strlen(di.name));
    }
    int64_t last_time = 0;
    size_t last_dev = (size_t)-1;
    while ((st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        if (b->nrows == 0 || b->nrows > batch) {
            st = TSF_ECORRUPT;
            snprintf(e.message, sizeof e.message, "batch of %zu rows (batch size %zu)", b->nrows, batch);
            break;
        }
        for (size_t c = 0; c < b->ncolumns; c++) {
            const tsf_column_batch *col = &b->columns[c];
            size_t meas = gcsv_str(rows, col->name, strlen(col->name));
            const char *tn = tsf_type_name(col->type);
            for (size_t i = 0; i < b->nrows; i++) {
                if (b->device == last_dev && c == 0 && i == 0 && b->times[0] <= last_time) {
                    st = TSF_ECORRUPT;
                    snprintf(e.message, sizeof e.message, "times of device %zu not ascending across batches", b->device);
                }
                if (!((col->validity[i >> 3] >> (i & 7)) & 1)) continue;
                gcsv_format(&fmt, col->type, col->values, i, java);
                gcsv_row *row = gcsv_add(rows);
                row->dev = dev_off[b->device];
                row->meas = meas;
                row->time = b->times[i];
                row->type = gcsv_str(rows, java ? tn : "", java ? strlen(tn) : 0);
                row->val = gcsv_str(rows, fmt.p, fmt.len);
            }
        }
        last_dev = b->device;
        last_time = b->times[b->nrows - 1];
        if (st) break;
    }
out:
    if (st) snprintf(why, whycap, "%s %s", tsf_status_name(st), e.message);
    tsf_query_close(q);
    tsf_reader_close(r);
    free(dev_off);
    free(fmt.p);
    return st ? -1 : 0;
}

static int compare(const gcsv *got, const gcsv *want, char *why, size_t whycap)
{
    size_t n = got->n < want->n ? got->n : want->n;
    for (size_t i = 0; i < n; i++) {
        const gcsv_row *x = &got->rows[i], *y = &want->rows[i];
        if (x->time == y->time && !strcmp(gcsv_s(got, x->dev), gcsv_s(want, y->dev)) &&
            !strcmp(gcsv_s(got, x->meas), gcsv_s(want, y->meas)) && !strcmp(gcsv_s(got, x->type), gcsv_s(want, y->type)) &&
            !strcmp(gcsv_s(got, x->val), gcsv_s(want, y->val)))
            continue;
        snprintf(why, whycap, "row %zu: expected %s,%s,%" PRId64 ",%.60s got %s,%s,%" PRId64 ",%.60s", i,
                 gcsv_s(want, y->dev), gcsv_s(want, y->meas), y->time, gcsv_s(want, y->val), gcsv_s(got, x->dev),
                 gcsv_s(got, x->meas), x->time, gcsv_s(got, x->val));
        return -1;
    }
    if (got->n != want->n) {
        snprintf(why, whycap, "%zu rows read, %zu expected", got->n, want->n);
        return -1;
    }
    return 0;
}

static int g_files;

/* golden_csv.h helpers this suite does not need */
static void unused_helpers(void) __attribute__((unused));
static void unused_helpers(void)
{
    (void)gcsv_value_size;
}

static void check_file(const char *dir, const char *name, const char *csv_name, int java)
{
    char path[1024], csv[1100], why[600] = "";
    snprintf(path, sizeof path, "%.500s/%.400s", dir, name);
    snprintf(csv, sizeof csv, "%.500s/%.400s", dir, csv_name);
    FILE *probe = fopen(csv, "rb");
    if (probe)
        fclose(probe);
    else
        snprintf(csv, sizeof csv, "%.500s/%.400s.gz", dir, csv_name);
    size_t len = 0;
    uint8_t *file = tsf_test_read_file(path, &len);
    gcsv want = {0};
    int fail = 0;
    if (!file || gcsv_load(&want, csv, java, why, sizeof why)) {
        fail = 1;
        if (!file) snprintf(why, sizeof why, "cannot read %.500s", path);
    }
    gcsv_sort(&want);
    static const tsf_codec_path paths[] = {TSF_PATH_PER_VALUE, TSF_PATH_SCALAR, TSF_PATH_SSE41, TSF_PATH_AVX2,
                                           TSF_PATH_AVX512, TSF_PATH_NEON};
    static const size_t batches[] = {4096, 1000, 37};
    unsigned seen = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof paths[0] && !fail; pi++) {
        tsf_codec *probe_codec = NULL;
        tsf_codec_options co;
        tsf_codec_options_init(&co);
        co.path = paths[pi];
        if (tsf_codec_open(&probe_codec, &co, NULL)) continue;
        tsf_codec_path real = tsf_codec_get_path(probe_codec);
        tsf_codec_close(probe_codec);
        if (seen & (1u << real)) continue;
        seen |= 1u << real;
        int mode = (int)((g_files + pi) % 3);
        size_t batch = batches[(g_files + pi) % 3];
        gcsv got = {0};
        if (read_rows(path, file, len, mode, paths[pi], batch, java, &got, why, sizeof why) == 0) {
            gcsv_sort(&got);
            if (compare(&got, &want, why, sizeof why)) fail = 1;
        } else {
            fail = 1;
        }
        if (fail) {
            char tmp[600];
            snprintf(tmp, sizeof tmp, "%s", why);
            snprintf(why, sizeof why, "[path %s, open mode %d, batch %zu] %.500s", tsf_codec_path_name(real), mode,
                     batch, tmp);
        }
        gcsv_free(&got);
    }
    if (fail) {
        printf("  FAIL %s: %s\n", name, why);
        tsf_test_failures++;
    } else {
        printf("  ok   %s (%zu rows)\n", name, want.n);
    }
    g_files++;
    gcsv_free(&want);
    free(file);
}

static void test_golden_java(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/tsfile-java", data);
    size_t n = 0;
    char **names = gcsv_list_tsfiles(dir, &n);
    if (!names) {
        CHECK(names != NULL); /* tests/data is part of the checkout */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char csv[600];
        snprintf(csv, sizeof csv, "%.500s.csv", names[i]);
        check_file(dir, names[i], csv, 1);
        free(names[i]);
    }
    free(names);
    printf("golden tsfile-java: %zu files read through the reader API\n", n);
    CHECK(n >= 87);
}

static void test_golden_cpp_v3(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/tsfile-cpp", data);
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    closedir(d);
    check_file(dir, "tree_regular_time_UNCOMPRESSED.tsfile", "tree_regular_time_UNCOMPRESSED.csv", 0);
}

int main(void)
{
    TSF_RUN(test_golden_java);
    TSF_RUN(test_golden_cpp_v3);
    return tsf_test_finish();
}
