/*
 * LZ4 pages whose values are stored as literals (writer option lz4_probe, src/write/lz4lit.c):
 * blocks built from an LZ4 prefix + literal values must follow the LZ4 block format (checked here
 * by an independent parser: tokens, length bytes, offsets inside the output, last sequence
 * literals only, last match starting >= 12 bytes and ending >= 5 bytes before the end) and
 * decompress with our LZ4 decoder to prefix + values; whole files written with the option read
 * back cell by cell, are byte-identical with 1 and 2 threads, and are byte-identical to lz4_probe 0
 * where the values compress (the probe falls back to LZ4), also when only whole-page LZ4 sees it.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "write/lz4lit.h"

typedef tsf_test_membuf membuf;

/* Validates an LZ4 block that decodes to `out_len` bytes; returns 0 when valid. */
static int lz4_block_valid(const uint8_t *z, size_t n, size_t out_len)
{
    size_t pos = 0, out = 0, last_match_start = 0, last_match_end = 0;
    int any_match = 0;
    if (n == 0) return -1;
    for (;;) {
        if (pos >= n) return -2;
        uint8_t tok = z[pos++];
        size_t l = tok >> 4;
        if (l == 15) {
            uint8_t b;
            do {
                if (pos >= n) return -3;
                b = z[pos++];
                l += b;
            } while (b == 255);
        }
        if (l > n - pos) return -4;
        pos += l;
        out += l;
        if (pos == n) { /* last sequence: literals only */
            if (tok & 15) return -5;
            break;
        }
        if (n - pos < 2) return -6;
        size_t off = (size_t)z[pos] | (size_t)z[pos + 1] << 8;
        pos += 2;
        if (off == 0 || off > out) return -7;
        size_t m = (tok & 15) + 4;
        if ((tok & 15) == 15) {
            uint8_t b;
            do {
                if (pos >= n) return -8;
                b = z[pos++];
                m += b;
            } while (b == 255);
        }
        last_match_start = out;
        out += m;
        last_match_end = out;
        any_match = 1;
    }
    if (out != out_len) return -9;
    if (any_match && (out_len - last_match_start < 12 || out_len - last_match_end < 5)) return -10;
    return 0;
}

/* Builds prefix + values the way seal_page does; returns the block length (0 on failure). */
static size_t build(const uint8_t *p, size_t plen, const uint8_t *v, size_t vlen, uint8_t *dst)
{
    size_t zb = tsf_compress_bound(TSF_LZ4, plen), zl = 0, seq = 0, lit = 0;
    uint8_t *z = malloc(zb + 1);
    tsf_error e = {0};
    CHECK_OK(tsf_compress(TSF_LZ4, p, plen, z, zb, &zl, &e), &e);
    CHECK_EQ_INT(tsf_lz4lit_split(z, zl, &seq, &lit), 0);
    CHECK(lit <= plen);
    size_t hmax = tsf_lz4lit_head_max(seq, lit, vlen), h = tsf_lz4lit_head_size(seq, lit, vlen);
    CHECK(h <= hmax);
    tsf_lz4lit_put_head(dst, z, seq, p, plen, lit, vlen);
    memcpy(dst + h, v, vlen);
    free(z);
    return h + vlen;
}

static void test_blocks(void)
{
    uint64_t rs = 7;
    enum { MAXP = 3000, MAXV = 70000 };
    uint8_t *p = malloc(MAXP), *v = malloc(MAXV), *blk = malloc(MAXP * 2 + MAXV + 1024);
    uint8_t *want = malloc(MAXP + MAXV), *got = malloc(MAXP + MAXV + 1);
    /* literal-length boundaries of the token (15) and of the length bytes (15 + 255k) */
    static const size_t plens[] = {0, 1, 4, 5, 12, 13, 14, 15, 16, 40, 269, 270, 271, 1400, 2999};
    static const size_t vlens[] = {0, 1, 2, 13, 14, 15, 16, 254, 255, 256, 269, 270, 271, 525, 4096, 69999};
    size_t cases = 0;
    for (size_t a = 0; a < sizeof plens / sizeof plens[0]; a++)
        for (size_t b = 0; b < sizeof vlens / sizeof vlens[0]; b++) {
            size_t pl = plens[a], vl = vlens[b];
            /* prefix: runs that LZ4 matches, then a random tail (the trailing literals vary) */
            for (size_t i = 0; i < pl; i++)
                p[i] = i < pl * 3 / 4 ? (uint8_t)(i % 19) : (uint8_t)tsf_test_rand(&rs);
            for (size_t i = 0; i < vl; i++) v[i] = (uint8_t)tsf_test_rand(&rs);
            size_t n = build(p, pl, v, vl, blk);
            memcpy(want, p, pl);
            memcpy(want + pl, v, vl);
            int valid = lz4_block_valid(blk, n, pl + vl);
            if (valid) fprintf(stderr, "  prefix %zu values %zu: invalid block (%d)\n", pl, vl, valid);
            CHECK_EQ_INT(valid, 0);
            tsf_error e = {0};
            CHECK_OK(tsf_decompress(TSF_LZ4, blk, n, got, pl + vl, &e), &e);
            CHECK_MEM(got, want, pl + vl);
            cases++;
        }
    CHECK(cases > 200);
    free(p);
    free(v);
    free(blk);
    free(want);
    free(got);
}

static void test_split_rejects(void)
{
    size_t seq, lit;
    static const uint8_t ok[] = {0x30, 'a', 'b', 'c'};
    CHECK_EQ_INT(tsf_lz4lit_split(ok, sizeof ok, &seq, &lit), 0);
    CHECK_EQ_INT((int)seq, 0);
    CHECK_EQ_INT((int)lit, 3);
    CHECK(tsf_lz4lit_split(ok, 3, &seq, &lit) != 0);       /* literals cut */
    static const uint8_t match_last[] = {0x14, 'a', 1, 0}; /* ends in a match */
    CHECK(tsf_lz4lit_split(match_last, sizeof match_last, &seq, &lit) != 0);
    static const uint8_t len_cut[] = {0xf0, 255}; /* length bytes cut */
    CHECK(tsf_lz4lit_split(len_cut, sizeof len_cut, &seq, &lit) != 0);
    CHECK(tsf_lz4lit_split(ok, 0, &seq, &lit) != 0);
}

static void test_probe(void)
{
    enum { N = 60000 };
    uint8_t *v = malloc(N);
    uint64_t rs = 3;
    tsf_wbuf tmp;
    tsf_wbuf_init(&tmp, NULL);
    for (size_t i = 0; i < N; i++) v[i] = (uint8_t)tsf_test_rand(&rs);
    CHECK_EQ_INT(tsf_lz4lit_incompressible(v, N, &tmp), 1);
    CHECK_EQ_INT(tsf_lz4lit_incompressible(v, N, &tmp), 1);                  /* the kept state */
    CHECK_EQ_INT(tsf_lz4lit_incompressible(v, TSF_LZ4LIT_MIN - 1, &tmp), 0); /* too short to judge */
    memset(v + N / 4, 0, N / 2);                                             /* the middle compresses */
    CHECK_EQ_INT(tsf_lz4lit_incompressible(v, N, &tmp), 0);
    for (size_t i = 0; i < N; i++) v[i] = (uint8_t)tsf_test_rand(&rs);
    memset(v, 'x', 4096); /* the start compresses */
    CHECK_EQ_INT(tsf_lz4lit_incompressible(v, N, &tmp), 0);
    tsf_wbuf_free(&tmp);
    free(v);
}

enum { NCOL = 4, ROWS = 26000, TABLET = 5000, T0 = 1000000 };

/* Column k: 0, 1 random walks (GORILLA: incompressible), 2 a walk with nulls, 3 small integers
 * (PLAIN: compressible, the probe falls back to LZ4). */
static double val(int k, size_t r, double *walk)
{
    if (k == 3) return (double)(r % 7);
    walk[k] += (double)((r * 2654435761u + (unsigned)k * 40503u) % 1000u) / 997.0 - 0.5;
    return walk[k];
}
static int present(int k, size_t r)
{
    return k != 2 || r % 9 != 4;
}

/* Writes ROWS rows of the NCOL test columns to dev in tablets of TABLET rows, then closes the writer. */
static void write_rows(tsf_writer *w, const char *dev)
{
    tsf_error e = {0};
    tsf_tablet *t = NULL;
    CHECK_OK(tsf_tablet_new(w, dev, NULL, 0, TABLET, &t, &e), &e);
    double walk[NCOL] = {0};
    int64_t times[TABLET];
    double vals[NCOL][TABLET];
    uint8_t valid[NCOL][TABLET / 8 + 1];
    for (size_t r0 = 0; r0 < ROWS; r0 += TABLET) {
        size_t n = ROWS - r0 < TABLET ? ROWS - r0 : TABLET;
        memset(valid, 0, sizeof valid);
        for (size_t i = 0; i < n; i++) {
            times[i] = T0 + (int64_t)(r0 + i) * 10;
            for (int k = 0; k < NCOL; k++) {
                vals[k][i] = val(k, r0 + i, walk);
                if (present(k, r0 + i)) valid[k][i >> 3] |= (uint8_t)(1u << (i & 7));
            }
        }
        CHECK_OK(tsf_tablet_set_times(t, times, n, &e), &e);
        for (int k = 0; k < NCOL; k++)
            CHECK_OK(tsf_tablet_set_column(t, (size_t)k, vals[k], valid[k], n, &e), &e);
        CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
    }
    tsf_tablet_free(t);
    CHECK_OK(tsf_writer_close(w, &e), &e);
}

static void write_file(membuf *m, int aligned, int probe, int threads)
{
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, m};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    CHECK_EQ_INT(o.lz4_probe, 1); /* the default */
    o.lz4_probe = probe;
    o.threads = (uint32_t)threads;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
    tsf_column_schema s[NCOL] = {{"a", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"b", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"c", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                 {"d", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD}};
    const char *dev = "root.sg.d";
    if (aligned) {
        CHECK_OK(tsf_writer_register_aligned(w, dev, s, NCOL, &e), &e);
    } else {
        for (int k = 0; k < NCOL; k++) CHECK_OK(tsf_writer_register_series(w, dev, &s[k], &e), &e);
    }
    write_rows(w, dev);
}

/* Reads every column back; returns the number of cells that differ from val()/present(). */
static size_t check_file(const membuf *m)
{
    tsf_error e = {0};
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open_memory(&r, m->p, m->len, NULL, &e), &e);
    if (!r) return 1;
    size_t di = 0, diffs = 0;
    CHECK_OK(tsf_reader_find_device(r, "root.sg.d", &di, &e), &e);
    static const char *names[NCOL] = {"a", "b", "c", "d"};
    double walk[NCOL] = {0};
    double *want = malloc(NCOL * ROWS * sizeof *want);
    for (size_t i = 0; i < ROWS; i++)
        for (int k = 0; k < NCOL; k++) want[(size_t)k * ROWS + i] = val(k, i, walk);
    for (int k = 0; k < NCOL; k++) {
        tsf_query_options o;
        tsf_query_options_init(&o);
        o.devices = &di;
        o.ndevices = 1;
        o.columns = &names[k];
        o.ncolumns = 1;
        tsf_query *q = NULL;
        CHECK_OK(tsf_query_open(r, &o, &q, &e), &e);
        const tsf_batch *b;
        size_t seen = 0;
        while (q && tsf_query_next(q, &b, &e) == TSF_OK && b) {
            const tsf_column_batch *cb = &b->columns[0];
            for (size_t i = 0; i < b->nrows; i++) {
                size_t row = (size_t)((b->times[i] - T0) / 10);
                int pres = cb->validity ? (cb->validity[i >> 3] >> (i & 7)) & 1 : 1;
                if (!pres) continue;
                seen++;
                double got = ((const double *)cb->values)[i];
                if (row >= ROWS || !present(k, row) || memcmp(&got, &want[(size_t)k * ROWS + row], 8))
                    diffs++;
            }
        }
        CHECK_EQ_INT(e.code, TSF_OK);
        size_t expect = 0;
        for (size_t i = 0; i < ROWS; i++) expect += (size_t)present(k, i);
        diffs += seen > expect ? seen - expect : expect - seen;
        tsf_query_close(q);
    }
    free(want);
    tsf_reader_close(r);
    return diffs;
}

static void test_files(void)
{
    for (int aligned = 0; aligned < 2; aligned++) {
        membuf on = {0}, off = {0}, on2 = {0};
        write_file(&on, aligned, 1, 1);
        write_file(&off, aligned, 0, 1);
        write_file(&on2, aligned, 1, 2);
        CHECK_EQ_INT(check_file(&on), 0);
        CHECK_EQ_INT(check_file(&off), 0);
        CHECK(on.len == on2.len && !memcmp(on.p, on2.p, on.len)); /* threads do not change the bytes */
        CHECK(on.len != off.len || memcmp(on.p, off.p, on.len));  /* the literal path was taken */
        /* at most 0.5% larger than LZ4 searching the values for matches */
        CHECK(on.len <= off.len + off.len / 200);
        free(on.p);
        free(off.p);
        free(on2.p);
    }
}

/* Compressible values only: the probe falls back to LZ4, the bytes are those of lz4_probe 0. */
static void test_fallback_identical(void)
{
    tsf_error e = {0};
    membuf f[2] = {{0}, {0}};
    for (int probe = 0; probe < 2; probe++) {
        tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &f[probe]};
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.lz4_probe = probe;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
        tsf_column_schema s = {"p", TSF_INT64, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.e", &s, &e), &e);
        tsf_tablet *t = NULL;
        CHECK_OK(tsf_tablet_new(w, "root.sg.e", NULL, 0, 25000, &t, &e), &e);
        for (size_t i = 0; i < 25000; i++) {
            CHECK_OK(tsf_tablet_set_time(t, i, (int64_t)i * 3, &e), &e);
            CHECK_OK(tsf_tablet_set_int64(t, i, 0, (int64_t)(i % 300) * 1000, &e), &e);
        }
        CHECK_OK(tsf_writer_write_tablet(w, t, &e), &e);
        tsf_tablet_free(t);
        CHECK_OK(tsf_writer_close(w, &e), &e);
    }
    CHECK(f[0].len > 0 && f[0].len == f[1].len && !memcmp(f[0].p, f[1].p, f[0].len));
    free(f[0].p);
    free(f[1].p);
}

/* Values whose repeats are farther apart than a probe sample: the samples look incompressible,
 * but the measured first page shows LZ4 gains, so every page goes through LZ4: the bytes equal
 * lz4_probe 0. */
static void test_long_range_matches(void)
{
    enum { N = 60000, PERIOD = 512 };
    double *v = malloc(N * sizeof *v);
    int64_t *t = malloc(N * sizeof *t);
    uint64_t rs = 11;
    for (size_t i = 0; i < N; i++) {
        t[i] = (int64_t)i;
        v[i] = i < PERIOD ? (double)(int64_t)tsf_test_rand(&rs) : v[i - PERIOD]; /* 4 KiB period */
    }
    membuf f[2] = {{0}, {0}};
    for (int probe = 0; probe < 2; probe++) {
        tsf_error e = {0};
        tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &f[probe]};
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.lz4_probe = probe;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
        tsf_column_schema sc = {"p", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.f", &sc, &e), &e);
        tsf_tablet *tb = NULL;
        CHECK_OK(tsf_tablet_new(w, "root.sg.f", NULL, 0, N, &tb, &e), &e);
        CHECK_OK(tsf_tablet_set_times(tb, t, N, &e), &e);
        CHECK_OK(tsf_tablet_set_column(tb, 0, v, NULL, N, &e), &e);
        CHECK_OK(tsf_writer_write_tablet(w, tb, &e), &e);
        tsf_tablet_free(tb);
        CHECK_OK(tsf_writer_close(w, &e), &e);
    }
    CHECK(f[0].len > 0 && f[0].len < N * 4); /* LZ4 found the repeats */
    CHECK(f[0].len == f[1].len && !memcmp(f[0].p, f[1].p, f[0].len));
    free(f[0].p);
    free(f[1].p);
    free(v);
    free(t);
}

/* Writer option gorilla_compact (the codec's window choice): the walk columns read back bit for bit
 * and the file is smaller than with the reference's window rule. */
static void test_gorilla_compact(void)
{
    membuf f[2] = {{0}, {0}};
    for (int level = 0; level < 2; level++) {
        tsf_error e = {0};
        tsf_write_callbacks cb = {sizeof cb, tsf_test_mem_write, NULL, &f[level]};
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        CHECK_EQ_INT(o.gorilla_compact, 1); /* the default */
        o.gorilla_compact = level;
        tsf_writer *w = NULL;
        CHECK_OK(tsf_writer_open_callbacks(&w, &cb, &o, &e), &e);
        tsf_column_schema sc[3] = {{"a", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                   {"b", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD},
                                   {"c", TSF_DOUBLE, TSF_ENC_GORILLA, TSF_LZ4, TSF_COLUMN_FIELD}};
        for (int k = 0; k < 3; k++) CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &sc[k], &e), &e);
        tsf_column_schema sd = {"d", TSF_DOUBLE, TSF_ENC_PLAIN, TSF_LZ4, TSF_COLUMN_FIELD};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &sd, &e), &e);
        write_rows(w, "root.sg.d");
        CHECK_EQ_INT(check_file(&f[level]), 0);
    }
    CHECK(f[1].len < f[0].len);
    free(f[0].p);
    free(f[1].p);
}

int main(void)
{
    TSF_RUN(test_blocks);
    TSF_RUN(test_split_rejects);
    TSF_RUN(test_probe);
    TSF_RUN(test_files);
    TSF_RUN(test_fallback_identical);
    TSF_RUN(test_long_range_matches);
    TSF_RUN(test_gorilla_compact);
    return tsf_test_finish();
}
