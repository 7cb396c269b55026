/*
 * gorilla_golden.h - test helper for the XOR/predictive codec tests: finds the value stream of the
 * first page of a single-series, non-aligned golden file (container spec §4-§7: chunk-group header,
 * chunk header, page header with statistics, uvarint time length, time bytes, value bytes) and the
 * expected values of that page from the file's CSV (raw bits for FLOAT/DOUBLE).
 */
#ifndef TSF_GORILLA_GOLDEN_H
#define TSF_GORILLA_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "test.h"

typedef struct golden_page {
    uint8_t *file;       /* whole file (caller frees via golden_page_free) */
    const uint8_t *vals; /* value stream of page 0 */
    size_t vals_len;
    size_t count; /* values in page 0 */
    tsf_type type;
    int encoding;
    uint64_t *expect; /* raw bits (FLOAT/INT32/DATE in the low 32 bits) */
} golden_page;

static void golden_page_free(golden_page *g)
{
    free(g->file);
    free(g->expect);
    memset(g, 0, sizeof *g);
}

static int golden_uv(const uint8_t *b, size_t len, size_t *off, uint32_t *v)
{
    size_t k = tsf_get_uvarint32(b + *off, len - *off, v);
    if (!k) return -1;
    *off += k;
    return 0;
}

static int golden_varstr(const uint8_t *b, size_t len, size_t *off)
{
    uint32_t u;
    if (golden_uv(b, len, off, &u)) return -1;
    int32_t l = tsf_unzigzag32(u);
    if (l > 0) *off += (size_t)l;
    return *off <= len ? 0 : -1;
}

static size_t golden_stats_suffix(tsf_type t)
{
    switch (t) {
    case TSF_INT32:
    case TSF_DATE:
    case TSF_FLOAT:
        return 24;
    case TSF_INT64:
    case TSF_TIMESTAMP:
    case TSF_DOUBLE:
        return 40;
    default:
        return 0;
    }
}

/* 1 = loaded, 0 = golden file unreadable, -1 = parse error. Expected values come from
   name + csv_suffix (".csv", or ".input.csv" for the writer's input of the lossy files). */
static int golden_page_load_ex(const char *name, const char *csv_suffix, golden_page *g)
{
    memset(g, 0, sizeof *g);
    const char *dir = tsf_test_data_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/tsfile-java/%s", dir, name);
    size_t len;
    uint8_t *b = tsf_test_read_file(path, &len);
    if (!b) return 0;
    g->file = b;
    size_t off = 7;
    uint32_t u, nseg, count;
    if (len < 32 || b[off++] != 0x00 || golden_uv(b, len, &off, &nseg)) return -1;
    for (uint32_t s = 0; s < nseg; s++)
        if (golden_varstr(b, len, &off)) return -1;
    uint8_t marker = b[off++];
    if (golden_varstr(b, len, &off) || golden_uv(b, len, &off, &u) || off + 3 > len) return -1;
    g->type = (tsf_type)b[off];
    if (b[off + 1] != 0) return -1; /* uncompressed only */
    g->encoding = b[off + 2];
    off += 3;
    uint32_t usize, csize;
    if (golden_uv(b, len, &off, &usize) || golden_uv(b, len, &off, &csize)) return -1;
    if ((marker & 0x3f) != 0x01) return -1; /* multi-page chunks: page 0 carries statistics */
    if (golden_uv(b, len, &off, &count)) return -1;
    off += 16 + golden_stats_suffix(g->type);
    size_t body = off;
    uint32_t tlen;
    if (golden_uv(b, len, &off, &tlen)) return -1;
    off += tlen;
    if (body + csize > len || off > body + csize) return -1;
    g->vals = b + off;
    g->vals_len = body + csize - off;
    g->count = count;

    /* expected values: the first `count` rows of the CSV (same series, time order) */
    snprintf(path, sizeof path, "%s/tsfile-java/%s%s", dir, name, csv_suffix);
    size_t clen;
    char *csv = (char *)tsf_test_read_file(path, &clen);
    if (!csv) return -1;
    g->expect = (uint64_t *)calloc(count ? count : 1, sizeof(uint64_t));
    char *line = strchr(csv, '\n');
    size_t got = 0;
    while (line && got < count) {
        line++;
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        char *val = line;
        for (int k = 0; k < 4 && val; k++) {
            val = strchr(val, ',');
            if (val) val++;
        }
        if (!val) break;
        char *bar = strchr(val, '|');
        uint64_t x;
        if (g->type == TSF_FLOAT || g->type == TSF_DOUBLE) {
            if (!bar) break;
            x = strtoull(bar + 3, NULL, 16);
        } else if (g->type == TSF_DATE) {
            int y, m, d;
            if (sscanf(val, "%d-%d-%d", &y, &m, &d) != 3) break;
            x = (uint32_t)(y * 10000 + m * 100 + d);
        } else if (g->type == TSF_INT32) {
            x = (uint32_t)(int32_t)strtoll(val, NULL, 10);
        } else {
            x = (uint64_t)strtoll(val, NULL, 10);
        }
        g->expect[got++] = x;
        line = end;
    }
    free(csv);
    return got == count ? 1 : -1;
}

static int golden_page_load(const char *name, golden_page *g)
{
    return golden_page_load_ex(name, ".csv", g);
}

/* Bits of value i of a decoded array of `type`. */
static uint64_t golden_bits(tsf_type type, const void *values, size_t i)
{
    if (type == TSF_INT32 || type == TSF_DATE || type == TSF_FLOAT) {
        uint32_t v;
        memcpy(&v, (const uint8_t *)values + 4 * i, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, (const uint8_t *)values + 8 * i, 8);
    return v;
}

/* ---- shared by the XOR/predictive codec tests ------------------------------------------------ */

static inline tsf_codec *xor_open_default(void)
{
    tsf_codec *c = NULL;
    tsf_codec_open(&c, NULL, NULL);
    return c;
}

/* Bytes per value of a numeric type. */
static inline size_t xor_esize(tsf_type t)
{
    return (t == TSF_INT32 || t == TSF_DATE || t == TSF_FLOAT) ? 4 : 8;
}

/*
 * Encodes n values with `enc`, decodes them back (all bytes used, same bits) and, if `truncate`,
 * checks that every shorter prefix of the stream gives TSF_ECORRUPT naming the encoding and an offset.
 */
static inline void xor_roundtrip(tsf_encoding enc, tsf_type t, const void *v, size_t n, int truncate)
{
    const char *name = tsf_encoding_name(enc);
    tsf_codec *c = xor_open_default();
    size_t cap = tsf_codec_encode_bound(t, enc, n, 0), w = 0, used = 0;
    uint8_t *b = malloc(cap);
    void *out = malloc(n * 8 + 8);
    tsf_error err;
    CHECK_OK(tsf_codec_encode(c, t, enc, v, n, b, cap, &w, &err), &err);
    CHECK_OK(tsf_codec_decode(c, t, enc, b, w, out, n, &used, &err), &err);
    CHECK_EQ_INT(used, w);
    CHECK_MEM(out, v, n * xor_esize(t));
    /* zero values from zero bytes is a valid page, so the empty prefix is only corrupt when n > 0 */
    for (size_t cut = n ? 0 : 1; truncate && cut < w; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b, cut);
        tsf_status s = tsf_codec_decode(c, t, enc, p, cut, out, n, NULL, &err);
        CHECK_EQ_INT(s, TSF_ECORRUPT);
        if (s == TSF_ECORRUPT) CHECK(strstr(err.message, name) && strstr(err.message, "offset"));
        free(p);
    }
    free(b);
    free(out);
    tsf_codec_close(c);
}

#endif
