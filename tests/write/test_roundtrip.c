/*
 * Round trips of the writer through our own reader (src/read): every data type with every encoding
 * the codecs can write for it and every supported compression, as a non-aligned tree device, an
 * aligned tree device and a table, with nulls and several pages per chunk and several chunks per
 * series. Each file is also written with options.threads = 3 and must be byte-identical to the
 * one-thread file (parallel column encoding never changes the output).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

typedef tsf_test_membuf membuf; /* tests/test.h */

enum { ROWS = 2600, TABLET = 1300, NCOL = 3 };
enum { NONALIGNED, ALIGNED, TABLE };

static int64_t row_time(size_t r) { return -5000 + (int64_t)r * 7 + (int64_t)(r / 1000) * 100000; }

/* Column k, row r: present? (column 0 always; the others miss some rows, column 2 a whole run) */
static int present(int k, size_t r)
{
    if (k == 0) return 1;
    if (k == 1) return r % 5 != 3;
    return !(r >= 700 && r < 1500) && r % 11 != 0;
}

static char g_text[ROWS][24];

/* Value of column k at row r for type ty, written into *v. Decimal floats (2 digits) so the
 * precision encodings (TS_2DIFF/RLE on FLOAT/DOUBLE) give back close values. */
static void value(tsf_type ty, int k, size_t r, tsf_value *v)
{
    long long m = (long long)((r * 2654435761u + (unsigned)k * 97u) % 20000u) - 10000;
    if (r % 50 < 20) m = (long long)r * 3 + k; /* a smooth run (delta encodings, RLE runs) */
    v->is_null = 0;
    switch (ty) {
    case TSF_BOOLEAN: v->v.b = (m & 3) == 0; break;
    case TSF_INT32: v->v.i32 = (int32_t)(m * 1000 + k); break;
    case TSF_DATE: v->v.i32 = 20240101 + (int32_t)(r % 28); break;
    case TSF_INT64:
    case TSF_TIMESTAMP: v->v.i64 = (int64_t)m * 1000000007LL; break;
    case TSF_FLOAT: v->v.f = (float)((double)m / 100.0); break;
    case TSF_DOUBLE: v->v.d = (double)m / 100.0; break;
    default:
        snprintf(g_text[r], sizeof g_text[r], "v%lld-%d", (long long)(m % 37), k);
        v->v.bytes.data = (const uint8_t *)g_text[r];
        v->v.bytes.len = strlen(g_text[r]);
        break;
    }
}

static tsf_status set_cell(tsf_tablet *t, size_t row, size_t col, tsf_type ty, const tsf_value *v, tsf_error *err)
{
    switch (ty) {
    case TSF_BOOLEAN: return tsf_tablet_set_bool(t, row, col, v->v.b, err);
    case TSF_INT32:
    case TSF_DATE: return tsf_tablet_set_int32(t, row, col, v->v.i32, err);
    case TSF_INT64:
    case TSF_TIMESTAMP: return tsf_tablet_set_int64(t, row, col, v->v.i64, err);
    case TSF_FLOAT: return tsf_tablet_set_float(t, row, col, v->v.f, err);
    case TSF_DOUBLE: return tsf_tablet_set_double(t, row, col, v->v.d, err);
    default: return tsf_tablet_set_bytes(t, row, col, v->v.bytes.data, v->v.bytes.len, err);
    }
}

static const char *COLS[NCOL] = {"c0", "c1", "c2"};

/* Writes the file; returns its bytes in *m. */
static int write_file(int layout, tsf_type ty, tsf_encoding e, tsf_compression c, unsigned threads, membuf *m)
{
    tsf_error err = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 500;
    o.threads = threads;
    o.memory_budget = 24 << 10; /* several chunk groups */
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, m};
    tsf_writer *w = NULL;
    if (tsf_writer_open_callbacks(&w, &cb, &o, &err)) goto fail;
    tsf_column_schema sc[NCOL + 1];
    for (int k = 0; k < NCOL; k++) sc[k] = (tsf_column_schema){COLS[k], ty, e, c, TSF_COLUMN_FIELD};
    const char *target = "root.sg.d1";
    if (layout == NONALIGNED) {
        for (int k = 0; k < NCOL; k++)
            if (tsf_writer_register_series(w, target, &sc[k], &err)) goto fail;
    } else if (layout == ALIGNED) {
        if (tsf_writer_register_aligned(w, target, sc, NCOL, &err)) goto fail;
    } else {
        target = "tab";
        sc[NCOL] = (tsf_column_schema){"tag", TSF_STRING, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_TAG};
        if (tsf_writer_register_table(w, target, sc, NCOL + 1, &err)) goto fail;
    }
    const char *names[NCOL + 1] = {"c0", "c1", "c2", "tag"};
    tsf_tablet *t = NULL;
    if (tsf_tablet_new(w, target, names, layout == TABLE ? NCOL + 1 : NCOL, TABLET, &t, &err)) goto fail;
    for (size_t r0 = 0; r0 < ROWS; r0 += TABLET) {
        for (size_t i = 0; i < TABLET; i++) {
            size_t r = r0 + i;
            if (tsf_tablet_set_time(t, i, row_time(r), &err)) goto fail_t;
            for (int k = 0; k < NCOL; k++) {
                tsf_value v;
                value(ty, k, r, &v);
                if (present(k, r) && set_cell(t, i, (size_t)k, ty, &v, &err)) goto fail_t;
            }
            if (layout == TABLE && tsf_tablet_set_bytes(t, i, NCOL, "t1", 2, &err)) goto fail_t;
        }
        if (tsf_writer_write_tablet(w, t, &err)) goto fail_t;
    }
    tsf_tablet_free(t);
    if (tsf_writer_close(w, &err)) return 0;
    return 1;
fail_t:
    tsf_tablet_free(t);
fail:
    fprintf(stderr, "  write %s/%s/%s layout %d: %s\n", tsf_type_name(ty), tsf_encoding_name(e),
            tsf_compression_name(c), layout, err.message);
    tsf_writer_abort(w);
    return 0;
}

static int same_value(tsf_type ty, tsf_encoding e, const tsf_column_batch *cb, size_t i, const tsf_value *v)
{
    const uint8_t *p = cb->values;
    (void)e; /* the writer stores no value it cannot read back (test_lossless): every encoding is exact */
    switch (ty) {
    case TSF_BOOLEAN: return (((const uint8_t *)p)[i] != 0) == (v->v.b != 0);
    case TSF_INT32:
    case TSF_DATE: return ((const int32_t *)p)[i] == v->v.i32;
    case TSF_INT64:
    case TSF_TIMESTAMP: return ((const int64_t *)p)[i] == v->v.i64;
    case TSF_FLOAT: {
        float got = ((const float *)p)[i];
        return memcmp(&got, &v->v.f, 4) == 0;
    }
    case TSF_DOUBLE: {
        double got = ((const double *)p)[i];
        return memcmp(&got, &v->v.d, 8) == 0;
    }
    default: {
        const tsf_bytes *b = &((const tsf_bytes *)p)[i];
        return b->len == v->v.bytes.len && memcmp(b->data, v->v.bytes.data, b->len) == 0;
    }
    }
}

/* Reads the file back: every row (and only those) with every cell as written. */
static int check_file(int layout, tsf_type ty, tsf_encoding e, const membuf *m)
{
    tsf_error err = {0};
    tsf_reader *r = NULL;
    tsf_query *q = NULL;
    int ok = 0;
    if (tsf_reader_open_memory(&r, m->p, m->len, NULL, &err)) goto done;
    if (tsf_reader_load_index(r, &err)) goto done;
    if (tsf_reader_device_count(r) != 1) {
        snprintf(err.message, sizeof err.message, "%zu devices", tsf_reader_device_count(r));
        goto done;
    }
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.columns = COLS;
    qo.ncolumns = NCOL;
    if (tsf_query_open(r, &qo, &q, &err)) goto done;
    size_t next = 0; /* next expected row */
    const tsf_batch *b;
    for (;;) {
        if (tsf_query_next(q, &b, &err)) goto done;
        if (!b) break;
        if (b->ncolumns != NCOL) {
            snprintf(err.message, sizeof err.message, "%zu columns", b->ncolumns);
            goto done;
        }
        for (size_t i = 0; i < b->nrows; i++, next++) {
            /* every row has column 0, so every row comes back */
            if (next >= ROWS || b->times[i] != row_time(next)) {
                snprintf(err.message, sizeof err.message, "row %zu: time %lld", next, (long long)b->times[i]);
                goto done;
            }
            for (int k = 0; k < NCOL; k++) {
                const tsf_column_batch *cb = &b->columns[k];
                int got = cb->validity ? (cb->validity[i >> 3] >> (i & 7)) & 1 : 1;
                if (got != present(k, next)) {
                    snprintf(err.message, sizeof err.message, "row %zu col %d: presence %d", next, k, got);
                    goto done;
                }
                tsf_value v;
                value(ty, k, next, &v);
                if (got && !same_value(ty, e, cb, i, &v)) {
                    snprintf(err.message, sizeof err.message, "row %zu col %d: value differs (%.17g vs %.17g)", next,
                             k, ty == TSF_DOUBLE ? ((const double *)cb->values)[i] : 0.0,
                             ty == TSF_DOUBLE ? v.v.d : 0.0);
                    goto done;
                }
            }
        }
    }
    if (next != ROWS) {
        snprintf(err.message, sizeof err.message, "%zu rows read", next);
        goto done;
    }
    ok = 1;
done:
    if (!ok)
        fprintf(stderr, "  read %s/%s layout %d: %s\n", tsf_type_name(ty), tsf_encoding_name(e), layout,
                err.message);
    tsf_query_close(q);
    tsf_reader_close(r);
    (void)layout;
    return ok;
}

static void test_all_types_encodings_compressions(void)
{
    static const tsf_type types[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64, TSF_FLOAT,  TSF_DOUBLE,
                                     TSF_TEXT,    TSF_DATE,  TSF_TIMESTAMP, TSF_STRING, TSF_BLOB};
    size_t files = 0, identical = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (int e = 0; e < 32; e++) {
            if (!tsf_codec_can_encode(types[ti], (tsf_encoding)e)) continue;
            /* FLOAT/DOUBLE SPRINTZ loses the sign of negative values (spec §9): the writer refuses
               those pages (test_lossless checks the refusal) */
            if ((types[ti] == TSF_FLOAT || types[ti] == TSF_DOUBLE) && e == TSF_ENC_SPRINTZ) continue;
            for (int c = 0; c < 16; c++) {
                if (!tsf_compression_supported((tsf_compression)c) || !tsf_compression_name((tsf_compression)c))
                    continue;
                for (int layout = NONALIGNED; layout <= TABLE; layout++) {
                    membuf a = {0}, b = {0};
                    int ok = write_file(layout, types[ti], (tsf_encoding)e, (tsf_compression)c, 1, &a);
                    CHECK(ok);
                    if (ok) CHECK(check_file(layout, types[ti], (tsf_encoding)e, &a));
                    /* sanitized builds (slow on 2 cores) compare threads for two compressions only */
                    int thr = !SANITIZED || c == TSF_UNCOMPRESSED || c == TSF_LZ4;
                    if (!thr) {
                        files++;
                        free(a.p);
                        continue;
                    }
                    ok = ok && write_file(layout, types[ti], (tsf_encoding)e, (tsf_compression)c, 3, &b);
                    CHECK(ok);
                    if (ok) {
                        CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
                        identical += a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
                    }
                    files++;
                    free(a.p);
                    free(b.p);
                }
            }
        }
    printf("  %zu files read back, %zu identical with 3 threads\n", files, identical);
    CHECK(identical >= (SANITIZED ? files / 3 : files));
    CHECK(files >= 3 * 6 * 30);
}

int main(void)
{
    TSF_RUN(test_all_types_encodings_compressions);
    return tsf_test_finish();
}
