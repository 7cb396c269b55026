/*
 * gen_file.h - header-only generator of a small TsFile through our writer (in memory), and the
 * value each cell must read back as. Used by the reader tests and by the fuzz seed generator.
 *   root.sg1.d1  non-aligned: s1 INT64 TS_2DIFF SNAPPY at every row, s2 DOUBLE GORILLA LZ4 at rows
 *                i%3==0, s3 TEXT PLAIN ZSTD at rows i%5==1 (different time sets -> merge);
 *   root.sg1.a1  aligned, GZIP: one column per type, column j null when i%(j+2)==1;
 *   table t1     tags region; fields temp FLOAT GORILLA, hum INT32 RLE; devices t1.north, t1.south.
 * Times: d1 t=i*10; a1 t=1000+i*7; t1 t=i*3 (+1 for south).
 */
#ifndef TSF_TEST_GEN_FILE_H
#define TSF_TEST_GEN_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsf.h"

typedef struct gen_buf {
    uint8_t *p;
    size_t n, cap;
} gen_buf;

static int gen_write(void *ud, const void *data, size_t len)
{
    gen_buf *b = ud;
    if (b->n + len > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 1 << 16;
        while (c < b->n + len) c *= 2;
        uint8_t *p = realloc(b->p, c);
        if (!p) return -1;
        b->p = p;
        b->cap = c;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return 0;
}

#define GEN_A1_COLS 10
static const tsf_column_schema GEN_A1[GEN_A1_COLS] = {
    {"b", TSF_BOOLEAN, TSF_ENC_RLE, TSF_GZIP, TSF_COLUMN_FIELD},
    {"blob", TSF_BLOB, TSF_ENC_PLAIN, TSF_GZIP, TSF_COLUMN_FIELD},
    {"d", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_GZIP, TSF_COLUMN_FIELD},
    {"date", TSF_DATE, TSF_ENC_PLAIN, TSF_GZIP, TSF_COLUMN_FIELD},
    {"f", TSF_FLOAT, TSF_ENC_GORILLA, TSF_GZIP, TSF_COLUMN_FIELD},
    {"i32", TSF_INT32, TSF_ENC_TS_2DIFF, TSF_GZIP, TSF_COLUMN_FIELD},
    {"i64", TSF_INT64, TSF_ENC_PLAIN, TSF_GZIP, TSF_COLUMN_FIELD},
    {"str", TSF_STRING, TSF_ENC_PLAIN, TSF_GZIP, TSF_COLUMN_FIELD},
    {"ts", TSF_TIMESTAMP, TSF_ENC_TS_2DIFF, TSF_GZIP, TSF_COLUMN_FIELD},
    {"txt", TSF_TEXT, TSF_ENC_DICTIONARY, TSF_GZIP, TSF_COLUMN_FIELD},
};

static int64_t gen_d1_time(size_t i) { return (int64_t)i * 10; }
static int64_t gen_a1_time(size_t i) { return 1000 + (int64_t)i * 7; }

/* Expected cell of device "d1" (col 0..2) or "a1" (col 0..9) at row i; returns 0 when null. */
static int gen_expect(int aligned, size_t col, size_t i, tsf_value *v, char *tmp, size_t tmpcap)
{
    memset(v, 0, sizeof *v);
    if (!aligned) {
        if (col == 0) {
            v->v.i64 = (int64_t)(i * i) - 7;
            return 1;
        }
        if (col == 1) {
            v->v.d = (double)i * 0.5;
            return i % 3 == 0;
        }
        int n = snprintf(tmp, tmpcap, "v%zu", i);
        v->v.bytes.data = (const uint8_t *)tmp;
        v->v.bytes.len = (size_t)n;
        return i % 5 == 1;
    }
    if (i % (col + 2) == 1) return 0;
    switch (GEN_A1[col].type) {
    case TSF_BOOLEAN: v->v.b = (i / 3) % 2; break;
    case TSF_INT32: v->v.i32 = (int32_t)(i * 31) - 5000; break;
    case TSF_DATE: v->v.i32 = 20240101 + (int32_t)(i % 28); break;
    case TSF_INT64: v->v.i64 = (int64_t)i * 1000003 - 77; break;
    case TSF_TIMESTAMP: v->v.i64 = 1700000000000 + (int64_t)i; break;
    case TSF_FLOAT: v->v.f = (float)i / 4.0f; break;
    case TSF_DOUBLE: v->v.d = (double)i * 1.25 - 3; break;
    default: {
        int n = snprintf(tmp, tmpcap, "%s-%zu", GEN_A1[col].name, i % 50);
        v->v.bytes.data = (const uint8_t *)tmp;
        v->v.bytes.len = (size_t)n;
    }
    }
    return 1;
}

static const tsf_column_schema GEN_D1[3] = {{"s1", TSF_INT64, TSF_ENC_TS_2DIFF, TSF_SNAPPY, TSF_COLUMN_FIELD},
                                            {"s2", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                            {"s3", TSF_TEXT, TSF_ENC_PLAIN, TSF_ZSTD, TSF_COLUMN_FIELD}};
static const tsf_column_schema GEN_T1[3] = {{"region", TSF_STRING, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_TAG},
                                            {"temp", TSF_FLOAT, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                            {"hum", TSF_INT32, TSF_ENC_RLE, TSF_LZ4, TSF_COLUMN_FIELD}};

/* Registers root.sg1.d1, root.sg1.a1 and table t1. */
static tsf_status gen_register(tsf_writer *w, tsf_error *e)
{
    tsf_status st = TSF_OK;
    for (int k = 0; k < 3 && !st; k++) st = tsf_writer_register_series(w, "root.sg1.d1", &GEN_D1[k], e);
    if (!st) st = tsf_writer_register_aligned(w, "root.sg1.a1", GEN_A1, GEN_A1_COLS, e);
    if (!st) st = tsf_writer_register_table(w, "t1", GEN_T1, 3, e);
    return st;
}

/* Writes rows [from, to) of every device. */
static tsf_status gen_rows(tsf_writer *w, size_t from, size_t to, tsf_error *e)
{
    tsf_status st = TSF_OK;
    char tmp[64];
    for (size_t i = from; i < to && !st; i++) {
        const char *names[GEN_A1_COLS];
        tsf_value vals[GEN_A1_COLS];
        size_t k = 0;
        for (size_t c = 0; c < 3; c++)
            if (gen_expect(0, c, i, &vals[k], tmp, sizeof tmp)) names[k++] = GEN_D1[c].name;
        st = tsf_writer_write_row(w, "root.sg1.d1", gen_d1_time(i), names, vals, k, e);
        if (st) break;
        char bufs[GEN_A1_COLS][64];
        for (size_t c = 0; c < GEN_A1_COLS; c++) {
            names[c] = GEN_A1[c].name;
            vals[c].is_null = !gen_expect(1, c, i, &vals[c], bufs[c], sizeof bufs[c]);
        }
        st = tsf_writer_write_row(w, "root.sg1.a1", gen_a1_time(i), names, vals, GEN_A1_COLS, e);
        for (int dev = 0; dev < 2 && !st; dev++) {
            const char *tn[3] = {"region", "temp", "hum"};
            tsf_value tv[3];
            memset(tv, 0, sizeof tv);
            tv[0].v.bytes.data = (const uint8_t *)(dev ? "south" : "north");
            tv[0].v.bytes.len = 5;
            tv[1].v.f = (float)i + (float)dev;
            tv[2].v.i32 = (int32_t)(i % 17);
            tv[2].is_null = i % 4 == 3;
            st = tsf_writer_write_row(w, "t1", (int64_t)i * 3 + dev, tn, tv, 3, e);
        }
    }
    return st;
}

/*
 * Writes the file: n rows per device, pages of page_points, a flush every flush_rows rows (several
 * chunks per series). Returns 0 and the bytes (caller frees b->p) or -1 with a message.
 */
static int gen_file(gen_buf *b, size_t n, uint32_t page_points, size_t flush_rows, char *why, size_t whycap)
{
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, b};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page_points;
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open_callbacks(&w, &cb, &o, &e);
    if (!st) st = gen_register(w, &e);
    size_t step = flush_rows ? flush_rows : (n ? n : 1);
    for (size_t i = 0; i < n && !st; i += step) {
        size_t end = i + step < n ? i + step : n;
        st = gen_rows(w, i, end, &e);
        if (!st && flush_rows && end % flush_rows == 0) st = tsf_writer_flush(w, &e);
    }
    if (st) {
        tsf_writer_abort(w);
        snprintf(why, whycap, "writer: %s %s", tsf_status_name(st), e.message);
        return -1;
    }
    if ((st = tsf_writer_close(w, &e))) {
        snprintf(why, whycap, "writer close: %s %s", tsf_status_name(st), e.message);
        return -1;
    }
    return 0;
}

#endif
