/*
 * test_recover.c - tsf_recover on files our writer makes (gen_file.h values: a non-aligned device, an
 * aligned device with every type and nulls, a table with two devices; several pages per chunk and a
 * flush every few rows, so several chunk groups per device):
 *  - a complete file recovers to the same content (and verifies clean);
 *  - cut at every byte: the result opens with tsf_reader, every point it holds equals the original, and
 *    every chunk group wholly present before the cut is kept (prefix property, from the writer's byte
 *    count after each flush);
 *  - a byte flipped inside a page of a complete file: that chunk is dropped, the others are kept;
 *  - a writer freed without close (tsf_writer_abort) and one killed by a signal (fork + SIGKILL) after
 *    flushes: every flushed group comes back;
 *  - the three corrupt/ golden files: every complete chunk group is kept;
 *  - every cut file of testdata/tsfile-java/recovered: the result verifies clean (aligned chunk lists in
 *    step, so the Java reader reads it) and holds every row the Java recovery kept, with the same value
 *    (GORILLA_V1 after a NaN aside: the reference decodes NaN there, doc/reader.md), the series of a cut
 *    chunk group named in notes;
 *  - a file cut exactly between two chunks of its last chunk group (2 of 3 columns written, nothing
 *    torn): a note names each series without its chunk there (non-aligned and aligned devices); cut
 *    right after the aligned time chunk, that time chunk (no value left to pair with) is dropped;
 *  - a SPRINTZ column whose page statistics disagree with its values (as a writer that computed them
 *    from values SPRINTZ cannot return leaves them) is kept as decoded, statistics rewritten.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/format.h"
#include "gen_file.h"
#include "golden_rows.h"
#include "test.h"

#define MAXROWS 4096

static char g_dir[64];

static const char *tmp_path(const char *name, char *buf, size_t cap)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/tsf_recover_XXXXXX");
        if (!mkdtemp(g_dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    snprintf(buf, cap, "%s/%s", g_dir, name);
    return buf;
}

/* Writes a fresh file (unlinked first: rewriting a truncated file makes ext4 write it back on close). */
static int put_file(const char *path, const uint8_t *p, size_t n)
{
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* ---- a file with known flush boundaries ------------------------------------------------------ */

/* n rows per device, a flush every `flush` rows; bounds[k] = bytes written after flush k. */
static int make_file(gen_buf *b, size_t n, uint32_t page, size_t flush, uint64_t *bounds, size_t *nb)
{
    tsf_error e = {0};
    tsf_write_callbacks cb = {sizeof cb, gen_write, NULL, b};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = page;
    tsf_writer *w = NULL;
    tsf_status st = tsf_writer_open_callbacks(&w, &cb, &o, &e);
    if (!st) st = gen_register(w, &e);
    *nb = 0;
    for (size_t i = 0; i < n && !st; i += flush) {
        st = gen_rows(w, i, i + flush < n ? i + flush : n, &e);
        if (!st) st = tsf_writer_flush(w, &e);
        if (!st) bounds[(*nb)++] = tsf_writer_bytes_written(w);
    }
    if (!st)
        st = tsf_writer_close(w, &e);
    else
        tsf_writer_abort(w);
    if (st) fprintf(stderr, "writer: %s %s\n", tsf_status_name(st), e.message);
    return st ? -1 : 0;
}

/* ---- content check -------------------------------------------------------------------------- */

enum { DEV_D1, DEV_A1, DEV_N, DEV_S, NDEV };

typedef struct seen {
    uint8_t cell[NDEV][GEN_A1_COLS][MAXROWS];
    uint64_t points;
    int bad;
} seen;

/* Expected cell (dev, column name) at row i; returns 0 when null; *col receives the column number. */
static int expect(int dev, const char *name, size_t i, tsf_type *type, tsf_value *v, char *tmp, size_t cap,
                  size_t *col)
{
    memset(v, 0, sizeof *v);
    if (dev == DEV_D1) {
        for (size_t c = 0; c < 3; c++)
            if (!strcmp(name, GEN_D1[c].name)) {
                *col = c;
                *type = GEN_D1[c].type;
                return gen_expect(0, c, i, v, tmp, cap);
            }
        return -1;
    }
    if (dev == DEV_A1) {
        for (size_t c = 0; c < GEN_A1_COLS; c++)
            if (!strcmp(name, GEN_A1[c].name)) {
                *col = c;
                *type = GEN_A1[c].type;
                return gen_expect(1, c, i, v, tmp, cap);
            }
        return -1;
    }
    if (!strcmp(name, "temp")) {
        *col = 0;
        *type = TSF_FLOAT;
        v->v.f = (float)i + (float)(dev == DEV_S);
        return 1;
    }
    if (!strcmp(name, "hum")) {
        *col = 1;
        *type = TSF_INT32;
        v->v.i32 = (int32_t)(i % 17);
        return i % 4 != 3;
    }
    return -1;
}

static int64_t dev_time(int dev, size_t i)
{
    return dev == DEV_D1 ? gen_d1_time(i) : dev == DEV_A1 ? gen_a1_time(i) : (int64_t)i * 3 + (dev == DEV_S);
}

static int dev_of(const char *name)
{
    if (!strcmp(name, "root.sg1.d1")) return DEV_D1;
    if (!strcmp(name, "root.sg1.a1")) return DEV_A1;
    if (!strcmp(name, "t1.north")) return DEV_N;
    if (!strcmp(name, "t1.south")) return DEV_S;
    return -1;
}

static int same_value(tsf_type t, const void *cell, const tsf_value *v)
{
    switch (t) {
    case TSF_BOOLEAN:
        return *(const uint8_t *)cell == (uint8_t)v->v.b;
    case TSF_INT32:
    case TSF_DATE:
        return !memcmp(cell, &v->v.i32, 4);
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return !memcmp(cell, &v->v.i64, 8);
    case TSF_FLOAT:
        return !memcmp(cell, &v->v.f, 4);
    case TSF_DOUBLE:
        return !memcmp(cell, &v->v.d, 8);
    default: {
        const tsf_bytes *b = cell;
        return b->len == v->v.bytes.len && !memcmp(b->data, v->v.bytes.data, b->len);
    }
    }
}

/* Reads every point of the file at path into sn, checking each equals the original. */
static int read_content(const char *path, size_t nrows, seen *sn)
{
    memset(sn, 0, sizeof *sn);
    tsf_reader *r = NULL;
    tsf_error e = {0};
    size_t flen = 0;
    uint8_t *fdata =
        tsf_test_read_file(path, &flen); /* in memory: the path reader issues a pread per header */
    if (!fdata || tsf_reader_open_memory(&r, fdata, flen, NULL, &e)) {
        fprintf(stderr, "open %s: %s\n", path, fdata ? e.message : "cannot read");
        free(fdata);
        return -1;
    }
    tsf_query *q = NULL;
    if (tsf_query_open(r, NULL, &q, &e)) {
        fprintf(stderr, "query %s: %s\n", path, e.message);
        tsf_reader_close(r);
        free(fdata);
        return -1;
    }
    const tsf_batch *b;
    tsf_status st;
    char tmp[64];
    while ((st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        tsf_device_info di;
        tsf_reader_device(r, b->device, &di, &e);
        int dev = dev_of(di.name);
        if (dev < 0) {
            fprintf(stderr, "unexpected device %s\n", di.name);
            sn->bad++;
            continue;
        }
        for (size_t c = 0; c < b->ncolumns; c++) {
            const tsf_column_batch *cb = &b->columns[c];
            size_t esz = cb->type == TSF_BOOLEAN                                                    ? 1
                         : (cb->type == TSF_INT32 || cb->type == TSF_DATE || cb->type == TSF_FLOAT) ? 4
                         : (cb->type == TSF_TEXT || cb->type == TSF_STRING || cb->type == TSF_BLOB)
                             ? sizeof(tsf_bytes)
                             : 8;
            for (size_t k = 0; k < b->nrows; k++) {
                if (!(cb->validity[k >> 3] >> (k & 7) & 1)) continue;
                int64_t t = b->times[k];
                int64_t base = dev == DEV_A1  ? 1000
                               : dev == DEV_S ? 1
                                              : 0,
                        step = dev == DEV_D1   ? 10
                               : dev == DEV_A1 ? 7
                                               : 3;
                size_t i = t >= base ? (size_t)((t - base) / step) : nrows;
                tsf_value v;
                tsf_type type;
                size_t col = 0;
                int ex = i < nrows && dev_time(dev, i) == t
                             ? expect(dev, cb->name, i, &type, &v, tmp, sizeof tmp, &col)
                             : -1;
                if (ex != 1 || type != cb->type ||
                    !same_value(type, (const uint8_t *)cb->values + k * esz, &v)) {
                    if (sn->bad++ < 5)
                        fprintf(stderr, "%s: %s.%s at time %lld differs from the original\n", path, di.name,
                                cb->name, (long long)t);
                    continue;
                }
                if (sn->cell[dev][col][i]++) sn->bad++; /* twice */
                sn->points++;
            }
        }
    }
    if (st) {
        fprintf(stderr, "scan %s: %s\n", path, e.message);
        sn->bad++;
    }
    tsf_query_close(q);
    tsf_reader_close(r);
    free(fdata);
    return 0;
}

/* Expected cells of rows [0, rows) missing from sn. */
static uint64_t missing_below(const seen *sn, size_t rows)
{
    static const char *const d1n[3] = {"s1", "s2", "s3"};
    static const char *const tn[2] = {"temp", "hum"};
    uint64_t miss = 0;
    char tmp[64];
    for (int dev = 0; dev < NDEV; dev++) {
        size_t nc = dev == DEV_D1 ? 3 : dev == DEV_A1 ? GEN_A1_COLS : 2;
        for (size_t c = 0; c < nc; c++)
            for (size_t i = 0; i < rows; i++) {
                const char *name = dev == DEV_D1 ? d1n[c] : dev == DEV_A1 ? GEN_A1[c].name : tn[c];
                tsf_value v;
                tsf_type t;
                size_t col;
                if (expect(dev, name, i, &t, &v, tmp, sizeof tmp, &col) == 1 && !sn->cell[dev][col][i])
                    miss++;
            }
    }
    return miss;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_clean_file(void)
{
    gen_buf b = {0};
    uint64_t bounds[64];
    size_t nb;
    const size_t n = 500;
    CHECK(make_file(&b, n, 64, 150, bounds, &nb) == 0);
    char in[128], out[128];
    tmp_path("clean.tsfile", in, sizeof in);
    tmp_path("clean.rec.tsfile", out, sizeof out);
    CHECK(put_file(in, b.p, b.n) == 0);
    tsf_recover_report rep;
    tsf_error e = {0};
    CHECK_OK(tsf_recover(in, out, &rep, &e), &e);
    CHECK_EQ_INT(rep.had_tail, 1);
    CHECK_EQ_INT(rep.chunk_groups_dropped, 0);
    CHECK_EQ_INT(rep.chunks_dropped, 0);
    CHECK_EQ_INT(rep.points_dropped, 0);
    CHECK_EQ_INT(rep.bytes_dropped, 0);
    CHECK_EQ_INT(rep.chunk_groups_kept, nb * 4); /* one group per device and flush */
    static seen orig, rec;
    CHECK(read_content(in, n, &orig) == 0);
    CHECK(read_content(out, n, &rec) == 0);
    CHECK_EQ_INT(orig.bad, 0);
    CHECK_EQ_INT(rec.bad, 0);
    CHECK_EQ_INT(missing_below(&rec, n), 0);
    CHECK_EQ_INT(rec.points, orig.points);
    CHECK_EQ_INT(rep.points_kept, rec.points);
    /* the recovered file is sound, keeps the table schema, and recovering it again changes nothing */
    tsf_verify_report vr;
    CHECK_OK(tsf_verify(out, NULL, NULL, &vr, &e), &e);
    CHECK_EQ_INT(vr.problems, 0);
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, out, NULL, &e), &e);
    size_t ti = 0;
    tsf_table_info info;
    if (r && !tsf_reader_find_table(r, "t1", &ti, &e) && !tsf_reader_table(r, ti, &info, &e))
        CHECK_EQ_INT(info.ncolumns, 3);
    else
        CHECK(!"table t1 lost");
    tsf_reader_close(r);
    free(b.p);
}

/* Cut at every byte (step 1) of a small file: the prefix property and exact values. */
static void test_truncate_everywhere(void)
{
    gen_buf b = {0};
    uint64_t bounds[64];
    size_t nb;
    const size_t n = 30, flush = 10;
    CHECK(make_file(&b, n, 4, flush, bounds, &nb) == 0);
    fprintf(stderr, "cutting a %zu-byte file at every byte\n", b.n);
    char in[128], out[128];
    tmp_path("cut.tsfile", in, sizeof in);
    tmp_path("cut.rec.tsfile", out, sizeof out);
    static seen sn;
    size_t fails = 0, checked = 0;
    uint64_t prev_points = 0;
    for (size_t len = 0; len <= b.n && fails < 5; len++) {
        if (put_file(in, b.p, len)) {
            CHECK(!"write");
            break;
        }
        tsf_recover_report rep;
        tsf_error e = {0};
        unlink(out);
        tsf_status st = tsf_recover(in, out, &rep, &e);
        if (len < TSF_FMT_HEAD_LEN) {
            if (st != TSF_ECORRUPT) fails++;
            CHECK_EQ_INT(st, TSF_ECORRUPT);
            continue;
        }
        if (st) {
            fprintf(stderr, "cut at %zu: %s\n", len, e.message);
            fails++;
            CHECK_OK(st, &e);
            continue;
        }
        if (read_content(out, n, &sn)) {
            fails++;
            CHECK(!"recovered file does not open");
            continue;
        }
        size_t rows = 0; /* rows of every flush wholly before the cut */
        for (size_t k = 0; k < nb; k++)
            if (bounds[k] <= len) rows = (k + 1) * flush;
        uint64_t miss = missing_below(&sn, rows);
        if (sn.bad || miss || rep.points_kept != sn.points || sn.points < prev_points) {
            fprintf(stderr, "cut at %zu: bad %d, missing %llu of rows < %zu, kept %llu read %llu prev %llu\n",
                    len, sn.bad, (unsigned long long)miss, rows, (unsigned long long)rep.points_kept,
                    (unsigned long long)sn.points, (unsigned long long)prev_points);
            fails++;
        }
        CHECK_EQ_INT(sn.bad, 0);
        CHECK_EQ_INT(miss, 0);
        CHECK_EQ_INT(rep.points_kept, sn.points);
        CHECK(sn.points >= prev_points); /* a longer prefix never loses points */
        CHECK_EQ_INT(rep.had_tail, len == b.n);
        prev_points = sn.points;
        checked++;
    }
    CHECK(checked > 1000);
    CHECK_EQ_INT(missing_below(&sn, n), 0); /* the whole file at the end */
    free(b.p);
}

/* Finds the chunks of a complete file (offset, first page body span, measurement). */
typedef struct chunk_at {
    uint64_t off, body, body_len;
    char name[32];
    int dev;
    tsf_type type;
} chunk_at;

static size_t list_chunks(const uint8_t *p, size_t n, chunk_at *out, size_t cap)
{
    tsf_walker w;
    tsf_walk_item it;
    size_t k = 0;
    int dev = -1;
    if (tsf_walk_init(&w, p, n, NULL)) return 0;
    while (!tsf_walk_next(&w, &it, NULL) && it.kind != TSF_WALK_END) {
        if (it.kind == TSF_WALK_CHUNK_GROUP) {
            char name[64];
            tsf_fmt_device_to_string(&it.device, name, sizeof name);
            dev = dev_of(name);
        }
        if (it.kind == TSF_WALK_PAGE && it.page_index == 0 && k < cap) {
            chunk_at *c = &out[k++];
            c->off = it.chunk_offset;
            c->body = it.body_offset;
            c->body_len = it.body_len;
            snprintf(c->name, sizeof c->name, "%.*s", (int)it.chunk.measurement.len,
                     (const char *)it.chunk.measurement.data);
            c->dev = dev;
            c->type = it.chunk.data_type;
        }
    }
    return k;
}

/* A byte flipped in the middle of the first page of each chunk in turn: recover drops that chunk (and, for
 * a time chunk, its group's value chunks) and keeps every other. TsFile has no checksums: a changed TEXT,
 * STRING or BLOB value that is not first/last/min/max of its chunk decodes and passes every check, so
 * only those chunks may go undetected (then only that series differs). */
static void test_flipped_page(void)
{
    gen_buf b = {0};
    uint64_t bounds[64];
    size_t nb;
    const size_t n = 200;
    CHECK(make_file(&b, n, 40, 100, bounds, &nb) == 0);
    static chunk_at ch[256];
    size_t nch = list_chunks(b.p, b.n, ch, 256);
    CHECK(nch > 20);
    char in[128], out[128];
    tmp_path("flip.tsfile", in, sizeof in);
    tmp_path("flip.rec.tsfile", out, sizeof out);
    static seen full, sn;
    CHECK(put_file(in, b.p, b.n) == 0);
    CHECK(read_content(in, n, &full) == 0);
    uint8_t *copy = malloc(b.n);
    size_t undetected = 0;
    for (size_t k = 0; k < nch; k++) {
        memcpy(copy, b.p, b.n);
        copy[ch[k].body + ch[k].body_len / 2] ^= 0x5a;
        CHECK(put_file(in, copy, b.n) == 0);
        tsf_recover_report rep;
        tsf_error e = {0};
        unlink(out);
        CHECK_OK(tsf_recover(in, out, &rep, &e), &e);
        CHECK_EQ_INT(rep.had_tail, 1);
        CHECK(read_content(out, n, &sn) == 0);
        int binary = ch[k].type == TSF_TEXT || ch[k].type == TSF_STRING || ch[k].type == TSF_BLOB;
        if (rep.chunks_dropped == 0 && binary) { /* undetectable: only values of this series may differ */
            undetected++;
            CHECK(sn.bad <= 1);
            CHECK_EQ_INT(sn.points + (uint64_t)sn.bad, full.points);
            continue;
        }
        CHECK(rep.chunks_dropped >= 1);
        CHECK_EQ_INT(sn.bad, 0);
        /* every point is kept except those of the damaged series (time chunk: of its device) */
        uint64_t lost = full.points - sn.points;
        CHECK(lost > 0);
        CHECK_EQ_INT(rep.points_kept, sn.points);
        tsf_verify_report vr;
        CHECK_EQ_INT(tsf_verify(in, NULL, NULL, &vr, &e), TSF_ECORRUPT);
        CHECK(vr.problems > 0);
        for (int dev = 0; dev < NDEV; dev++)
            for (size_t c = 0; c < GEN_A1_COLS; c++)
                for (size_t i = 0; i < n; i++)
                    if (full.cell[dev][c][i] && !sn.cell[dev][c][i]) {
                        int same_dev = dev == ch[k].dev;
                        const char *name = dev == DEV_D1   ? GEN_D1[c].name
                                           : dev == DEV_A1 ? GEN_A1[c].name
                                                           : (c ? "hum" : "temp");
                        if (!same_dev || (ch[k].name[0] && strcmp(name, ch[k].name))) {
                            fprintf(stderr, "flip in %s chunk at %llu lost %s row %zu of device %d\n",
                                    ch[k].name, (unsigned long long)ch[k].off, name, i, dev);
                            CHECK(!"a point of another series was lost");
                            dev = NDEV;
                            c = GEN_A1_COLS;
                            break;
                        }
                    }
    }
    CHECK(undetected * 4 < nch);
    free(copy);
    free(b.p);
}

/* Rows up to the last flush survive a writer freed without close. */
static void test_writer_abort(void)
{
    char path[128], tmpf[160], out[128];
    tmp_path("abort.tsfile", path, sizeof path);
    snprintf(tmpf, sizeof tmpf, "%s.%ld.tmp", path, (long)getpid()); /* tsf_writer_temp_path */
    tmp_path("abort.rec.tsfile", out, sizeof out);
    tsf_error e = {0};
    tsf_writer_options o;
    tsf_writer_options_init(&o);
    o.page_max_points = 16;
    tsf_writer *w = NULL;
    CHECK_OK(tsf_writer_open(&w, path, &o, &e), &e);
    if (!w) return;
    CHECK_OK(gen_register(w, &e), &e);
    CHECK_OK(gen_rows(w, 0, 70, &e), &e);
    CHECK_OK(tsf_writer_flush(w, &e), &e);
    CHECK_OK(gen_rows(w, 70, 100, &e), &e); /* never flushed */
    tsf_writer_abort(w);
    tsf_recover_report rep;
    CHECK_OK(tsf_recover(tmpf, out, &rep, &e), &e);
    CHECK_EQ_INT(rep.had_tail, 0);
    static seen sn;
    CHECK(read_content(out, 100, &sn) == 0);
    CHECK_EQ_INT(sn.bad, 0);
    CHECK_EQ_INT(missing_below(&sn, 70), 0);
    CHECK_EQ_INT(rep.chunk_groups_kept, 4);
    unlink(tmpf);
}

/* A writer process killed (SIGKILL) while writing: every group flushed before the kill comes back. */
static void test_killed_writer(void)
{
    char path[128], tmpf[160], out[128];
    tmp_path("killed.tsfile", path, sizeof path);
    tmp_path("killed.rec.tsfile", out, sizeof out);
    int fds[2];
    CHECK(pipe(fds) == 0);
    const size_t flush = 25, total = MAXROWS;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        tsf_error e;
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.page_max_points = 16;
        tsf_writer *w = NULL;
        if (tsf_writer_open(&w, path, &o, &e) || gen_register(w, &e)) _exit(2);
        for (size_t i = 0; i < total; i += flush) {
            if (gen_rows(w, i, i + flush, &e) || tsf_writer_flush(w, &e)) _exit(3);
            uint32_t done = (uint32_t)(i + flush);
            if (write(fds[1], &done, sizeof done) != sizeof done) _exit(4);
        }
        for (;;) pause(); /* never closes */
    }
    snprintf(tmpf, sizeof tmpf, "%s.%ld.tmp", path, (long)pid); /* the child's tsf_writer_temp_path */
    close(fds[1]);
    uint32_t flushed = 0, v;
    while (flushed < 10 * flush && read(fds[0], &v, sizeof v) == sizeof v) flushed = v;
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    close(fds[0]);
    CHECK(flushed >= 10 * flush);
    tsf_recover_report rep;
    tsf_error e = {0};
    CHECK_OK(tsf_recover(tmpf, out, &rep, &e), &e);
    static seen sn;
    CHECK(read_content(out, total, &sn) == 0);
    CHECK_EQ_INT(sn.bad, 0);
    CHECK_EQ_INT(missing_below(&sn, flushed), 0);
    CHECK(rep.chunk_groups_kept >= 4 * (flushed / flush));
    unlink(tmpf);
}

/* The corrupt/ golden files: every complete chunk group is kept (README: root.sg1.d1 15000 values in 10
 * series; tail_metadata_missing also root.sg2.d2 whole; cut_mid_chunk keeps d2's chunks before the cut). */
static void test_corrupt_golden(void)
{
    const char *dir = tsf_test_data_dir();
    static const struct {
        const char *name;
        int had_tail, groups;
        uint64_t dropped;
    } cases[] = {
        {"cut_mid_chunk", 0, 2, 1},
        {"flipped_byte_page_header", 1, 2, 1},
        {"tail_metadata_missing", 0, 2, 0},
    };
    char in[512], out[128], orig[512];
    snprintf(orig, sizeof orig, "%s/tsfile-java/tree_nonaligned_mixed_uncompressed.tsfile", dir);
    tsf_verify_report vr;
    tsf_error e = {0};
    CHECK_OK(tsf_verify(orig, NULL, NULL, &vr, &e), &e);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(in, sizeof in, "%s/tsfile-java/corrupt/%s.tsfile", dir, cases[k].name);
        tmp_path("golden.rec.tsfile", out, sizeof out);
        tsf_recover_report rep;
        CHECK_OK(tsf_recover(in, out, &rep, &e), &e);
        CHECK_EQ_INT(rep.had_tail, cases[k].had_tail);
        CHECK_EQ_INT(rep.chunk_groups_kept, cases[k].groups);
        CHECK_EQ_INT(rep.chunks_dropped, cases[k].dropped);
        tsf_verify_report rr;
        CHECK_OK(tsf_verify(out, NULL, NULL, &rr, &e), &e);
        /* root.sg1.d1 whole: 10 series x 1500 values; root.sg2.d2 as far as its chunks are whole */
        tsf_reader *r = NULL;
        CHECK_OK(tsf_reader_open(&r, out, NULL, &e), &e);
        if (!r) continue;
        size_t d;
        tsf_device_info di;
        CHECK_OK(tsf_reader_find_device(r, "root.sg1.d1", &d, &e), &e);
        CHECK_OK(tsf_reader_device(r, d, &di, &e), &e);
        CHECK_EQ_INT(di.nseries, 10);
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            CHECK_OK(tsf_reader_series(r, d, j, &si, &e), &e);
            CHECK_EQ_INT(si.stats.count, 1500);
        }
        tsf_reader_close(r);
        if (k == 2)
            CHECK_EQ_INT(rr.points, vr.points); /* everything */
        else
            CHECK(rr.points < vr.points && rr.points >= 15000);
    }
}

static void count_note(void *ctx, const tsf_problem *p)
{
    size_t *n = ctx;
    n[0]++;
    if (strstr(p->what, "no whole chunk in the chunk group")) n[1]++;
}


static void test_java_cut_superset(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%.900s/tsfile-java/recovered", tsf_test_data_dir());
    size_t n = 0, files = 0, filled = 0, cut_notes = 0;
    char **names = gcsv_list_tsfiles(dir, &n);
    CHECK(names != NULL); /* tests/data is part of the checkout */
    if (!names) return;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(names[i]), sl = strlen(".cut.tsfile");
        if (l <= sl || strcmp(names[i] + l - sl, ".cut.tsfile")) {
            free(names[i]);
            continue;
        }
        char in[1100], csv[1100], out[128], why[600] = "";
        snprintf(in, sizeof in, "%s/%s", dir, names[i]);
        snprintf(csv, sizeof csv, "%s/%.*s.java-recovered.csv", dir, (int)(l - sl), names[i]);
        if (access(csv, R_OK)) strcat(csv, ".gz");
        tmp_path("java_cut.rec.tsfile", out, sizeof out);
        unlink(out);
        size_t nn[2] = {0, 0};
        tsf_recover_options ro;
        tsf_recover_options_init(&ro);
        ro.on_note = count_note;
        ro.ctx = nn;
        tsf_recover_report rep;
        tsf_error e = {0};
        CHECK_OK(tsf_recover_with(in, out, &ro, &rep, &e), &e);
        CHECK_EQ_INT(rep.notes, nn[0]);
        filled += rep.chunks_filled;
        cut_notes += nn[1];
        tsf_verify_report vr;
        CHECK_OK(tsf_verify(out, NULL, NULL, &vr, &e), &e);
        CHECK_EQ_INT(vr.warnings, 0);
        gcsv want = {0}, got = {0};
        CHECK(gcsv_load(&want, csv, 1, why, sizeof why) == 0);
        CHECK(gcsv_read_rows(out, NULL, 0, 0, TSF_PATH_AUTO, 4096, 1, -1, NULL, &got, why, sizeof why) == 0);
        gcsv_sort(&want);
        gcsv_sort(&got);
        size_t g = 0, missing = 0, differ = 0, nan_latched = 0;
        const char *nan_dev = "", *nan_meas = "";
        for (size_t k = 0; k < want.n; k++) {
            const gcsv_row *y = &want.rows[k];
            const char *wd = gcsv_s(&want, y->dev), *wm = gcsv_s(&want, y->meas);
            int c = 1;
            while (g < got.n) {
                const gcsv_row *x = &got.rows[g];
                c = strcmp(gcsv_s(&got, x->dev), wd);
                if (!c) c = strcmp(gcsv_s(&got, x->meas), wm);
                if (!c) c = (x->time > y->time) - (x->time < y->time);
                if (c >= 0) break;
                const char *gv = gcsv_s(&got, x->val);
                if (gcsv_nan_cell(gv)) nan_dev = gcsv_s(&got, x->dev), nan_meas = gcsv_s(&got, x->meas);
                g++;
            }
            if (g == got.n || c) {
                missing++;
                continue;
            }
            const char *gv = gcsv_s(&got, got.rows[g].val), *wv = gcsv_s(&want, y->val);
            if (gcsv_nan_cell(gv)) nan_dev = wd, nan_meas = wm;
            if (strcmp(gv, wv) || strcmp(gcsv_s(&got, got.rows[g].type), gcsv_s(&want, y->type))) {
                if (gcsv_nan_cell(wv) && !strcmp(nan_dev, wd) && !strcmp(nan_meas, wm))
                    nan_latched++; /* GORILLA_V1 after a NaN: the reference reads NaN */
                else
                    differ++;
            }
        }
        printf("  %s: Java kept %zu rows, we %zu; missing %zu, different %zu (NaN-latched %zu); %zu empty chunks, %zu notes\n",
               names[i], want.n, got.n, missing, differ, nan_latched, (size_t)rep.chunks_filled, nn[0]);
        CHECK_EQ_INT(missing, 0);
        CHECK_EQ_INT(differ, 0);
        CHECK(got.n >= want.n);
        gcsv_free(&want);
        gcsv_free(&got);
        unlink(out);
        files++;
        free(names[i]);
    }
    free(names);
    CHECK(files >= 8);
    CHECK(filled > 0);
    CHECK(cut_notes >= filled);
}

/* Page statistics that disagree with SPRINTZ values: a file written with SPRINTZ, its first page's
 * statistics sum patched (as a writer leaves it that computed the sum from values SPRINTZ returns
 * differently). recover keeps every value, with statistics that verify; another encoding's chunk with
 * such a sum is dropped, also when only the sum's last bit differs (an INT64 sum of small values is an
 * exact integer in a double, so that too is damage, not rounding). */
static void test_sprintz_statistics(void)
{
    for (int enc = 0; enc < 3; enc++) {
        char path[128], out[128];
        tmp_path("sprintz.tsfile", path, sizeof path);
        tmp_path("sprintz.rec.tsfile", out, sizeof out);
        tsf_error e = {0};
        tsf_writer *w = NULL;
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.page_max_points = 50;
        unlink(path);
        CHECK_OK(tsf_writer_open(&w, path, &o, &e), &e);
        tsf_column_schema col = {"s", TSF_INT64, enc ? TSF_ENC_TS_2DIFF : TSF_ENC_SPRINTZ, TSF_UNCOMPRESSED, 0};
        CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &col, &e), &e);
        for (int64_t t = 0; t < 200; t++) {
            tsf_value v = {0, {.i64 = (t * 7) % 13 - 6}};
            CHECK_OK(tsf_writer_write_row(w, "root.sg.d", t, NULL, &v, 1, &e), &e);
        }
        CHECK_OK(tsf_writer_close(w, &e), &e);
        size_t len = 0;
        uint8_t *f = tsf_test_read_file(path, &len);
        CHECK(f != NULL);
        if (!f) return;
        /* first page with statistics: INT64 statistics are count (uvarint), start, end, min, max, first,
         * last (i64 each), sum (double): flip the sum's sign bit */
        tsf_walker wk;
        tsf_walk_item it;
        uint64_t sum_at = 0;
        CHECK(tsf_walk_init(&wk, f, len, NULL) == TSF_OK);
        while (!sum_at && tsf_walk_next(&wk, &it, NULL) == TSF_OK && it.kind != TSF_WALK_END)
            if (it.kind == TSF_WALK_PAGE && it.page.has_stats) sum_at = it.body_offset - 8;
        CHECK(sum_at > 0);
        if (enc == 2)
            f[sum_at + 7] ^= 0x01; /* the lowest mantissa bit */
        else
            f[sum_at] ^= 0x80;
        CHECK(put_file(path, f, len) == 0);
        tsf_verify_report vr;
        CHECK_EQ_INT(tsf_verify(path, NULL, NULL, &vr, &e), TSF_ECORRUPT);
        tsf_recover_report rep;
        unlink(out);
        CHECK_OK(tsf_recover(path, out, &rep, &e), &e);
        if (enc == 0) {
            CHECK_EQ_INT(rep.points_kept, 200);
            CHECK_EQ_INT(rep.chunks_dropped, 0);
            CHECK_OK(tsf_verify(out, NULL, NULL, &vr, &e), &e);
            CHECK_EQ_INT(vr.points, 200);
        } else {
            CHECK_EQ_INT(rep.points_kept, 0);
            CHECK_EQ_INT(rep.chunks_dropped, 1);
            CHECK_OK(tsf_verify(out, NULL, NULL, &vr, &e), &e);
        }
        free(f);
        unlink(path);
        unlink(out);
    }
}

typedef struct notes_seen {
    size_t n;
    char text[8][400];
} notes_seen;

static void keep_note(void *ctx, const tsf_problem *p)
{
    notes_seen *ns = ctx;
    if (ns->n < 8) snprintf(ns->text[ns->n], sizeof ns->text[0], "%s", p->what);
    ns->n++;
}

/* Two chunk groups of a device with columns s1, s2, s3; the file cut at the start of s3's chunk in the
 * second group (a chunk boundary: no chunk is torn, so the chunk counts alone show no loss), or for the
 * aligned device also at s1's (only the time chunk of that group is whole). */
static void test_cut_group_notes(void)
{
    for (int variant = 0; variant < 3; variant++) {
        int aligned = variant > 0;
        const char *at = variant == 2 ? "s1" : "s3";
        char path[128], cut[128], out[128];
        tmp_path("cutnote.tsfile", path, sizeof path);
        tmp_path("cutnote.cut.tsfile", cut, sizeof cut);
        tmp_path("cutnote.rec.tsfile", out, sizeof out);
        tsf_error e = {0};
        tsf_writer *w = NULL;
        unlink(path);
        CHECK_OK(tsf_writer_open(&w, path, NULL, &e), &e);
        tsf_column_schema cols[3] = {{"s1", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, 0},
                                     {"s2", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, 0},
                                     {"s3", TSF_INT32, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, 0}};
        if (aligned)
            CHECK_OK(tsf_writer_register_aligned(w, "root.sg.d", cols, 3, &e), &e);
        else
            for (int c = 0; c < 3; c++) CHECK_OK(tsf_writer_register_series(w, "root.sg.d", &cols[c], &e), &e);
        for (int64_t t = 1; t <= 20; t++) {
            tsf_value v[3] = {{0, {.i32 = (int32_t)t}}, {0, {.i32 = (int32_t)t * 2}}, {0, {.i32 = (int32_t)t * 3}}};
            CHECK_OK(tsf_writer_write_row(w, "root.sg.d", t, NULL, v, 3, &e), &e);
            if (t == 10) CHECK_OK(tsf_writer_flush(w, &e), &e);
        }
        CHECK_OK(tsf_writer_close(w, &e), &e);
        size_t len = 0;
        uint8_t *f = tsf_test_read_file(path, &len);
        CHECK(f != NULL);
        if (!f) return;
        tsf_walker wk;
        tsf_walk_item it;
        uint64_t s3 = 0;
        int groups = 0;
        CHECK(tsf_walk_init(&wk, f, len, NULL) == TSF_OK);
        while (tsf_walk_next(&wk, &it, NULL) == TSF_OK && it.kind != TSF_WALK_END) {
            groups += it.kind == TSF_WALK_CHUNK_GROUP;
            if (groups == 2 && it.kind == TSF_WALK_CHUNK && it.chunk.measurement.len == 2 &&
                !memcmp(it.chunk.measurement.data, at, 2))
                s3 = it.offset;
        }
        CHECK(s3 > 0);
        CHECK(put_file(cut, f, (size_t)s3) == 0);
        notes_seen ns = {0};
        tsf_recover_options ro;
        tsf_recover_options_init(&ro);
        ro.on_note = keep_note;
        ro.ctx = &ns;
        tsf_recover_report rep;
        unlink(out);
        CHECK_OK(tsf_recover_with(cut, out, &ro, &rep, &e), &e);
        uint64_t points = variant == 2 ? 30 : 50;
        CHECK_EQ_INT(rep.chunks_dropped, (uint64_t)(variant == 2));
        CHECK_EQ_INT(rep.points_kept, points);
        CHECK_EQ_INT(rep.chunks_filled, (uint64_t)(variant == 1));
        CHECK_EQ_INT(rep.chunk_groups_kept, (uint64_t)(variant == 2 ? 1 : 2));
        CHECK_EQ_INT(ns.n, 1);
        CHECK(strstr(ns.text[0], variant == 2 ? "root.sg.d: time chunk at" : "root.sg.d.s3: no whole chunk in the chunk group at") != NULL);
        tsf_verify_report vr;
        CHECK_OK(tsf_verify(out, NULL, NULL, &vr, &e), &e);
        CHECK_EQ_INT(vr.points, points);
        free(f);
        unlink(path);
        unlink(cut);
        unlink(out);
    }
}

static void test_bad_input(void)
{
    char in[128], out[128];
    tmp_path("bad.tsfile", in, sizeof in);
    tmp_path("bad.rec.tsfile", out, sizeof out);
    tsf_error e = {0};
    CHECK(put_file(in, (const uint8_t *)"NotATsFileAtAll", 15) == 0);
    CHECK_EQ_INT(tsf_recover(in, out, NULL, &e), TSF_ECORRUPT);
    CHECK(access(out, F_OK) != 0); /* nothing written */
    CHECK_EQ_INT(tsf_recover(in, in, NULL, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_recover(NULL, out, NULL, &e), TSF_EINVAL);
    tmp_path("absent.tsfile", in, sizeof in);
    CHECK_EQ_INT(tsf_recover(in, out, NULL, &e), TSF_EIO);
    /* only the head: an empty but readable file */
    tmp_path("head.tsfile", in, sizeof in);
    CHECK(put_file(in, (const uint8_t *)"TsFile\x04", 7) == 0);
    tsf_recover_report rep;
    CHECK_OK(tsf_recover(in, out, &rep, &e), &e);
    CHECK_EQ_INT(rep.chunk_groups_kept, 0);
    tsf_reader *r = NULL;
    CHECK_OK(tsf_reader_open(&r, out, NULL, &e), &e);
    if (r) CHECK_EQ_INT(tsf_reader_device_count(r), 0);
    tsf_reader_close(r);
}

int main(void)
{
    (void)gen_file;
    TSF_RUN(test_clean_file);
    TSF_RUN(test_truncate_everywhere);
    TSF_RUN(test_flipped_page);
    TSF_RUN(test_writer_abort);
    TSF_RUN(test_killed_writer);
    TSF_RUN(test_corrupt_golden);
    TSF_RUN(test_bad_input);
    TSF_RUN(test_java_cut_superset);
    TSF_RUN(test_cut_group_notes);
    TSF_RUN(test_sprintz_statistics);
    if (g_dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return tsf_test_finish();
}
