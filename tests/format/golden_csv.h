/*
 * golden_csv.h - header-only helpers for the golden-file tests: a table of (device, measurement,
 * time, type, value) rows held as offsets into one string pool, a loader for the expected CSVs
 * (tests/data/README.md: `device,measurement,time,type,value`, RFC-4180 quoting, .csv or
 * .csv.gz read through zlib; tsfile-cpp: `device,measurement,time,value`), and the formatter that
 * renders a decoded value exactly as the CSV writes it, so rows compare as strings.
 */
#ifndef TSF_GOLDEN_CSV_H
#define TSF_GOLDEN_CSV_H

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tsf.h"

typedef struct gcsv_row {
    size_t dev, meas, type, val; /* offsets of NUL-terminated strings in the pool */
    int64_t time;
} gcsv_row;

typedef struct gcsv {
    char *pool;
    size_t pool_len, pool_cap;
    gcsv_row *rows;
    size_t n, cap;
} gcsv;

static inline void gcsv_free(gcsv *t)
{
    free(t->pool);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

static inline void *gcsv_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    if (!q) {
        fprintf(stderr, "golden_csv: out of memory\n");
        exit(2);
    }
    *cap = c;
    return q;
}

/* Appends s[0..len) + NUL to the pool; returns its offset. */
static inline size_t gcsv_str(gcsv *t, const char *s, size_t len)
{
    t->pool = gcsv_grow(t->pool, &t->pool_cap, t->pool_len + len + 1, 1);
    size_t off = t->pool_len;
    if (len) memcpy(t->pool + off, s, len);
    t->pool[off + len] = '\0';
    t->pool_len += len + 1;
    return off;
}

static inline gcsv_row *gcsv_add(gcsv *t)
{
    t->rows = gcsv_grow(t->rows, &t->cap, t->n + 1, sizeof *t->rows);
    return &t->rows[t->n++];
}

static inline const char *gcsv_s(const gcsv *t, size_t off)
{
    return t->pool + off;
}

/* ---- sorting: by device, measurement (bytewise), time ---- */

static const char *gcsv_sort_pool; /* qsort has no context argument; test binaries are single-threaded */

static inline int gcsv_cmp(const void *a, const void *b)
{
    const gcsv_row *x = a, *y = b;
    int c = strcmp(gcsv_sort_pool + x->dev, gcsv_sort_pool + y->dev);
    if (c) return c;
    c = strcmp(gcsv_sort_pool + x->meas, gcsv_sort_pool + y->meas);
    if (c) return c;
    return (x->time > y->time) - (x->time < y->time);
}

static inline void gcsv_sort(gcsv *t)
{
    gcsv_sort_pool = t->pool;
    if (t->n) qsort(t->rows, t->n, sizeof *t->rows, gcsv_cmp);
}

/* ---- loading ---- */

/* Reads a whole file through zlib (plain files pass through gzread unchanged). NULL on failure. */
static inline char *gcsv_slurp(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (cap - n < (1 << 15)) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n - 1));
        if (got < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    gzclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Reads one RFC-4180 field starting at *pp; unquotes into out (tmp buffer). Returns the terminator
 * (',' '\n' or '\0'). */
static inline char gcsv_field(const char **pp, const char *end, char **out, size_t *outcap, size_t *outlen)
{
    const char *p = *pp;
    size_t n = 0;
    if (p < end && *p == '"') {
        p++;
        while (p < end) {
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') {
                    p += 2;
                    *out = gcsv_grow(*out, outcap, n + 1, 1);
                    (*out)[n++] = '"';
                    continue;
                }
                p++;
                break;
            }
            *out = gcsv_grow(*out, outcap, n + 1, 1);
            (*out)[n++] = *p++;
        }
    } else {
        while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
            *out = gcsv_grow(*out, outcap, n + 1, 1);
            (*out)[n++] = *p++;
        }
    }
    char term = '\0';
    if (p < end && *p == '\r') p++;
    if (p < end) term = *p++;
    *pp = p;
    *outlen = n;
    return term;
}

/*
 * Loads an expected CSV. with_type: the Java layout (5 columns; FLOAT/DOUBLE values keep only the
 * "0x..." raw bits after '|'); otherwise the C++ layout (4 columns, type left empty).
 * Returns 0, or -1 with a message in why.
 */
static inline int gcsv_load(gcsv *t, const char *path, int with_type, char *why, size_t whycap)
{
    size_t len = 0;
    char *text = gcsv_slurp(path, &len);
    if (!text) {
        snprintf(why, whycap, "cannot read %.300s", path);
        return -1;
    }
    const char *p = text, *end = text + len;
    char *f[5] = {0};
    size_t fcap[5] = {0}, flen[5] = {0};
    int ncol = with_type ? 5 : 4, line = 0, rc = 0;
    while (p < end) {
        int k = 0;
        char term = ',';
        while (term == ',' && k < 5) term = gcsv_field(&p, end, &f[k], &fcap[k], &flen[k]), k++;
        line++;
        if (k != ncol || term == ',') {
            snprintf(why, whycap, "%.300s line %d: %d fields, expected %d", path, line, k, ncol);
            rc = -1;
            break;
        }
        if (line == 1) continue; /* header */
        gcsv_row *r = gcsv_add(t);
        r->dev = gcsv_str(t, f[0], flen[0]);
        r->meas = gcsv_str(t, f[1], flen[1]);
        f[2] = gcsv_grow(f[2], &fcap[2], flen[2] + 1, 1);
        f[2][flen[2]] = '\0';
        r->time = strtoll(f[2], NULL, 10);
        const char *v = f[ncol - 1];
        size_t vl = flen[ncol - 1];
        if (with_type) {
            r->type = gcsv_str(t, f[3], flen[3]);
            if ((flen[3] == 5 && !memcmp(f[3], "FLOAT", 5)) || (flen[3] == 6 && !memcmp(f[3], "DOUBLE", 6))) {
                const char *bar = memchr(v, '|', vl);
                if (bar) {
                    vl -= (size_t)(bar + 1 - v);
                    v = bar + 1;
                }
            }
        } else {
            r->type = gcsv_str(t, "", 0);
        }
        r->val = gcsv_str(t, v, vl);
    }
    for (int i = 0; i < 5; i++) free(f[i]);
    free(text);
    return rc;
}

/* ---- rendering a decoded value like the CSV ---- */

typedef struct gcsv_buf {
    char *p;
    size_t len, cap;
} gcsv_buf;

static inline void gcsv_put(gcsv_buf *b, const char *s, size_t n)
{
    b->p = gcsv_grow(b->p, &b->cap, b->len + n + 1, 1);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static inline void gcsv_putf(gcsv_buf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    gcsv_put(b, tmp, (size_t)n);
}

static inline void gcsv_base64(gcsv_buf *b, const uint8_t *s, size_t n)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) v |= s[i + 2];
        char q[4] = {A[(v >> 18) & 63], A[(v >> 12) & 63], i + 1 < n ? A[(v >> 6) & 63] : '=',
                     i + 2 < n ? A[v & 63] : '='};
        gcsv_put(b, q, 4);
    }
}

/* Java LocalDate.toString of an int yyyyMMdd. */
static inline void gcsv_date(gcsv_buf *b, int32_t v)
{
    int32_t y = v / 10000, m = (v / 100) % 100, d = v % 100;
    if (v < 0) {
        y = -((-v) / 10000);
        m = ((-v) / 100) % 100;
        d = (-v) % 100;
    }
    if (y > 9999)
        gcsv_putf(b, "+%d-%02d-%02d", (int)y, (int)m, (int)d);
    else if (y < 0)
        gcsv_putf(b, "-%04d-%02d-%02d", (int)-y, (int)m, (int)d);
    else
        gcsv_putf(b, "%04d-%02d-%02d", (int)y, (int)m, (int)d);
}

/*
 * Renders value i of an array of the type's C representation (tsf.h) into b (cleared first).
 * java: the Java CSV conventions (floats as raw bits "0x..", text escaped); else the C++ ones
 * (%.9g / %.17g).
 */
static inline void gcsv_format(gcsv_buf *b, tsf_type type, const void *vals, size_t i, int java)
{
    b->len = 0;
    gcsv_put(b, "", 0);
    switch (type) {
    case TSF_BOOLEAN:
        gcsv_putf(b, "%s", ((const uint8_t *)vals)[i] ? "true" : "false");
        break;
    case TSF_INT32:
        gcsv_putf(b, "%" PRId32, ((const int32_t *)vals)[i]);
        break;
    case TSF_DATE:
        gcsv_date(b, ((const int32_t *)vals)[i]);
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        gcsv_putf(b, "%" PRId64, ((const int64_t *)vals)[i]);
        break;
    case TSF_FLOAT: {
        float f = ((const float *)vals)[i];
        uint32_t u;
        memcpy(&u, &f, 4);
        if (java)
            gcsv_putf(b, "0x%08" PRIx32, u);
        else
            gcsv_putf(b, "%.9g", (double)f);
        break;
    }
    case TSF_DOUBLE: {
        double d = ((const double *)vals)[i];
        uint64_t u;
        memcpy(&u, &d, 8);
        if (java)
            gcsv_putf(b, "0x%016" PRIx64, u);
        else
            gcsv_putf(b, "%.17g", d);
        break;
    }
    case TSF_TEXT:
    case TSF_STRING: {
        tsf_bytes s = ((const tsf_bytes *)vals)[i];
        for (size_t k = 0; k < s.len; k++) {
            uint8_t c = s.data[k];
            if (c == '\\')
                gcsv_put(b, "\\\\", 2);
            else if (c < 0x20 || c == 0x7f)
                gcsv_putf(b, "\\u%04x", c);
            else
                gcsv_put(b, (const char *)&c, 1);
        }
        break;
    }
    case TSF_BLOB: {
        tsf_bytes s = ((const tsf_bytes *)vals)[i];
        gcsv_base64(b, s.data, s.len);
        break;
    }
    default:
        gcsv_putf(b, "<type %d>", (int)type);
        break;
    }
}

static inline int gcsv_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Sorted names of the *.tsfile files in dir (caller frees each name and the array); NULL if dir
 * cannot be opened.
 */
static inline char **gcsv_list_tsfiles(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    size_t n = 0, cap = 0;
    char **names = gcsv_grow(NULL, &cap, 1, sizeof *names);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 7 || strcmp(de->d_name + len - 7, ".tsfile") != 0) continue;
        names = gcsv_grow(names, &cap, n + 1, sizeof *names);
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, gcsv_cmp_names);
    *count = n;
    return names;
}

#endif
