/*
 * golden_csv.h - test-only reader of the golden expected-content CSVs
 * (tests/data/README.md: device,measurement,time,type,value; FLOAT/DOUBLE
 * carry their raw bits, TEXT/STRING are quoted with "" and \\ and \uXXXX escapes, DATE is
 * yyyy-MM-dd, BLOB is base64). Rows of one (device, measurement) become one column.
 */
#ifndef TSF_TEST_GOLDEN_CSV_H
#define TSF_TEST_GOLDEN_CSV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsf.h"

typedef struct gcol {
    char device[128], name[64];
    tsf_type type;
    size_t n, cap;
    int64_t *times;
    uint8_t *vals; /* C representation; bytes point into `heap` */
    char *heap;
    size_t heap_len, heap_cap;
} gcol;

typedef struct gcsv {
    gcol *cols;
    size_t ncols;
} gcsv;

static size_t gcsv_heap_put(gcol *c, const void *p, size_t n)
{
    if (c->heap_len + n > c->heap_cap || !c->heap) {
        size_t nc = c->heap_cap ? c->heap_cap * 2 : 4096;
        while (nc < c->heap_len + n) nc *= 2;
        c->heap = realloc(c->heap, nc);
        c->heap_cap = nc;
    }
    if (n) memcpy(c->heap + c->heap_len, p, n);
    c->heap_len += n;
    return c->heap_len - n;
}

/* Parses one field starting at *pp (quoted or not); writes the unescaped bytes to out. */
static size_t gcsv_field(const char **pp, char *out)
{
    const char *p = *pp;
    size_t n = 0;
    if (*p == '"') {
        p++;
        for (;;) {
            if (*p == '"' && p[1] == '"') {
                out[n++] = '"';
                p += 2;
            } else if (*p == '"') {
                p++;
                break;
            } else if (*p == '\\' && p[1] == '\\') {
                out[n++] = '\\';
                p += 2;
            } else if (*p == '\\' && p[1] == 'u') {
                unsigned cp = (unsigned)strtoul((char[5]){p[2], p[3], p[4], p[5], 0}, NULL, 16);
                if (cp < 0x80) {
                    out[n++] = (char)cp;
                } else if (cp < 0x800) {
                    out[n++] = (char)(0xc0 | (cp >> 6));
                    out[n++] = (char)(0x80 | (cp & 0x3f));
                } else {
                    out[n++] = (char)(0xe0 | (cp >> 12));
                    out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                    out[n++] = (char)(0x80 | (cp & 0x3f));
                }
                p += 6;
            } else {
                out[n++] = *p++;
            }
        }
    } else {
        while (*p && *p != ',' && *p != '\n' && *p != '\r') out[n++] = *p++;
    }
    *pp = p;
    return n;
}

static int gcsv_b64(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static void gcsv_free(gcsv *g)
{
    for (size_t i = 0; i < g->ncols; i++) {
        free(g->cols[i].times);
        free(g->cols[i].vals);
        free(g->cols[i].heap);
    }
    free(g->cols);
    memset(g, 0, sizeof *g);
}

/* Loads text (NUL-terminated) into columns; returns 0 on success. */
static int gcsv_parse(const char *text, gcsv *g)
{
    memset(g, 0, sizeof *g);
    const char *p = strchr(text, '\n');
    if (!p) return -1;
    p++;
    char *field = malloc(1 << 20);
    while (*p) {
        char dev[128], meas[64], ty[16];
        size_t n = gcsv_field(&p, field);
        if (n >= sizeof dev) break;
        memcpy(dev, field, n);
        dev[n] = 0;
        p++;
        n = gcsv_field(&p, field);
        memcpy(meas, field, n);
        meas[n] = 0;
        p++;
        long long t = strtoll(p, (char **)&p, 10);
        p++;
        n = gcsv_field(&p, field);
        memcpy(ty, field, n);
        ty[n] = 0;
        p++;
        size_t vn = gcsv_field(&p, field);
        field[vn] = 0;
        while (*p == '\r' || *p == '\n') p++;
        tsf_type type;
        if (tsf_type_parse(ty, &type)) break;
        gcol *c = g->ncols ? &g->cols[g->ncols - 1] : NULL;
        if (!c || strcmp(c->device, dev) || strcmp(c->name, meas)) {
            g->cols = realloc(g->cols, (g->ncols + 1) * sizeof *g->cols);
            c = &g->cols[g->ncols++];
            memset(c, 0, sizeof *c);
            strcpy(c->device, dev);
            strcpy(c->name, meas);
            c->type = type;
        }
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 1024;
            c->times = realloc(c->times, c->cap * 8);
            c->vals = realloc(c->vals, c->cap * tsf_type_size(type));
        }
        c->times[c->n] = t;
        uint8_t *v = c->vals + c->n * tsf_type_size(type);
        switch (type) {
        case TSF_BOOLEAN: *v = field[0] == 't'; break;
        case TSF_INT32: {
            int32_t x = (int32_t)strtol(field, NULL, 10);
            memcpy(v, &x, 4);
            break;
        }
        case TSF_DATE: {
            int y = 0, m = 0, d = 0;
            sscanf(field, "%d-%d-%d", &y, &m, &d);
            int32_t x = y * 10000 + m * 100 + d;
            memcpy(v, &x, 4);
            break;
        }
        case TSF_FLOAT: {
            uint32_t x = (uint32_t)strtoul(strchr(field, '|') + 3, NULL, 16);
            memcpy(v, &x, 4);
            break;
        }
        case TSF_DOUBLE: {
            uint64_t x = strtoull(strchr(field, '|') + 3, NULL, 16);
            memcpy(v, &x, 8);
            break;
        }
        case TSF_TEXT:
        case TSF_STRING: {
            tsf_bytes b = {(const uint8_t *)(uintptr_t)gcsv_heap_put(c, field, vn), vn};
            memcpy(v, &b, sizeof b);
            break;
        }
        case TSF_BLOB: {
            size_t o = c->heap_len, k = 0;
            unsigned acc = 0;
            int bits = 0;
            for (size_t i = 0; i < vn; i++) {
                int d = gcsv_b64(field[i]);
                if (d < 0) continue;
                acc = (acc << 6) | (unsigned)d;
                bits += 6;
                if (bits >= 8) {
                    bits -= 8;
                    uint8_t byte = (uint8_t)(acc >> bits);
                    gcsv_heap_put(c, &byte, 1);
                    k++;
                }
            }
            tsf_bytes b = {(const uint8_t *)(uintptr_t)o, k};
            memcpy(v, &b, sizeof b);
            break;
        }
        default: {
            int64_t x = strtoll(field, NULL, 10);
            memcpy(v, &x, 8);
            break;
        }
        }
        c->n++;
    }
    free(field);
    /* heap offsets -> pointers */
    for (size_t i = 0; i < g->ncols; i++) {
        gcol *c = &g->cols[i];
        if (c->type != TSF_TEXT && c->type != TSF_STRING && c->type != TSF_BLOB) continue;
        tsf_bytes *b = (tsf_bytes *)c->vals;
        for (size_t k = 0; k < c->n; k++) b[k].data = (const uint8_t *)c->heap + (uintptr_t)b[k].data;
    }
    return 0;
}

#endif
