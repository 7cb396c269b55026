/*
 * Byte-exact comparisons of the writer with golden files written by the Java reference
 * (tests/data/tsfile-java, tests/data/README.md states data and settings): every single-series
 * tree_nonaligned_<type>_<encoding>_uncompressed.tsfile (3000 points, 1000 per page) is rebuilt
 * from its CSV and must come out identical, index, bloom filter and statistics included.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_csv.h"
#include "test.h"

typedef tsf_test_membuf membuf; /* tests/test.h */

static char *read_text(const char *path)
{
    size_t n;
    uint8_t *b = tsf_test_read_file(path, &n);
    if (!b) return NULL;
    char *t = realloc(b, n + 1);
    t[n] = 0;
    return t;
}

static const struct {
    const char *token;
    tsf_encoding enc;
} ENCS[] = {{"plain", TSF_ENC_PLAIN},         {"rle", TSF_ENC_RLE},         {"ts2diff", TSF_ENC_TS_2DIFF},
            {"gorillav1", TSF_ENC_GORILLA_V1}, {"gorilla", TSF_ENC_GORILLA}, {"zigzag", TSF_ENC_ZIGZAG},
            {"chimp", TSF_ENC_CHIMP},         {"sprintz", TSF_ENC_SPRINTZ}, {"rlbe", TSF_ENC_RLBE},
            {"dictionary", TSF_ENC_DICTIONARY}};

/* Writes one series like the Java generator did; returns the bytes (caller frees). */
static uint8_t *write_series(const gcol *c, tsf_encoding enc, tsf_compression comp, int precision,
                             uint32_t page_points, size_t *len, int lossy)
{
    tsf_error err = {0};
    membuf m = {0};
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &m};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page_points;
    o.float_precision = precision;
    o.gorilla_compact = 0; /* GORILLA windows as Java picks them: the golden bytes */
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &err), &err);
    if (!w) return NULL;
    tsf_column_schema s = {c->name, c->type, enc, comp, TSF_COLUMN_FIELD};
    CHECK_OK(tsf_writer_register_series(w, c->device, &s, &err), &err);
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, c->device, NULL, 0, c->n, &t, &err), &err);
    if (t) {
        CHECK_OK(tsf_tablet_set_times(t, c->times, c->n, &err), &err);
        CHECK_OK(tsf_tablet_set_column(t, 0, c->vals, NULL, c->n, &err), &err);
        tsf_status st = tsf_writer_write_tablet(w, t, &err);
        if (lossy) { /* Java stored values it reads back otherwise: the writer refuses the page */
            CHECK_EQ_INT(st, TSF_EINVAL);
            CHECK(strstr(err.message, tsf_encoding_name(enc)) != NULL);
        } else {
            CHECK_OK(st, &err);
        }
        tsf_tablet_free(t);
    }
    CHECK_OK(tsf_writer_close(w, &err), &err);
    *len = m.len;
    if (lossy) {
        free(m.p);
        return NULL;
    }
    return m.p;
}

static int golden_matched, golden_tried;

static void check_file(const char *dir, const char *name)
{
    /* tree_nonaligned_<type>_<enc>[_pN]_uncompressed.tsfile */
    char type_tok[32], rest[64];
    if (sscanf(name, "tree_nonaligned_%31[a-z0-9]_%63s", type_tok, rest) != 2) return;
    tsf_type type;
    if (tsf_type_parse(type_tok, &type)) return;
    size_t ne = sizeof ENCS / sizeof ENCS[0], ei;
    int precision = 2;
    for (ei = 0; ei < ne; ei++) {
        size_t k = strlen(ENCS[ei].token);
        if (strncmp(rest, ENCS[ei].token, k)) continue;
        const char *tail = rest + k;
        if (tail[0] == '_' && tail[1] == 'p' && tail[2] >= '0' && tail[2] <= '9') {
            precision = tail[2] - '0';
            tail += 3;
        }
        if (strcmp(tail, "_uncompressed.tsfile") == 0) break;
    }
    if (ei == ne) return;
    if (!tsf_codec_can_encode(type, ENCS[ei].enc)) {
        printf("  (skip %s: encoder not available yet)\n", name);
        return;
    }
    char path[1024], csvp[1100];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        printf("  (skip %s: path too long)\n", name);
        return;
    }
    snprintf(csvp, sizeof csvp, "%s.input.csv", path); /* lossy in Java: the writer's input */
    char *text = read_text(csvp);
    int lossy = text != NULL;
    if (!text) {
        snprintf(csvp, sizeof csvp, "%s.csv", path);
        text = read_text(csvp);
    }
    size_t glen;
    uint8_t *golden = tsf_test_read_file(path, &glen);
    CHECK(text && golden);
    if (!text || !golden) {
        free(text);
        free(golden);
        return;
    }
    gcsv g;
    gcsv_parse(text, &g);
    CHECK_EQ_INT(g.ncols, 1);
    if (g.ncols == 1) {
        const gcol *c = &g.cols[0];
        CHECK_EQ_INT(c->n, 3000);
        for (size_t i = 0; i < c->n; i++) /* README: t_i = 1000 + i*1000 + (i%7) */
            if (c->times[i] != (int64_t)(1000 + i * 1000 + (i % 7))) {
                CHECK(c->times[i] == (int64_t)(1000 + i * 1000 + (i % 7)));
                break;
            }
        size_t len = 0;
        /* lossy in Java: refused (the encoder's bytes on this input are checked by the codec tests) */
        uint8_t *ours = write_series(c, ENCS[ei].enc, TSF_UNCOMPRESSED, precision, 1000, &len, lossy);
        golden_tried += !lossy;
        if (lossy) {
            printf("  (%s: lossy in Java, refused by the writer)\n", name);
        } else if (ours && len == glen && memcmp(ours, golden, len) == 0) {
            golden_matched++;
        } else {
            fprintf(stderr, "%s: %zu bytes written, golden %zu\n", name, len, glen);
            size_t m = len < glen ? len : glen, i = 0;
            while (i < m && ours[i] == golden[i]) i++;
            fprintf(stderr, "  first difference at offset %zu\n", i);
            CHECK(0);
        }
        free(ours);
    }
    gcsv_free(&g);
    free(text);
    free(golden);
}

static void test_golden_nonaligned_series(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tsfile-java", data);
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(d != NULL); /* tests/data is part of the checkout */
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "tree_nonaligned_", 16) == 0 && strstr(e->d_name, ".tsfile") &&
            !strstr(e->d_name, ".csv"))
            check_file(dir, e->d_name);
    closedir(d);
    printf("  %d of %d single-series golden files reproduced byte for byte\n", golden_matched, golden_tried);
    CHECK(golden_tried > 0);
}

int main(void)
{
    TSF_RUN(test_golden_nonaligned_series);
    return tsf_test_finish();
}
