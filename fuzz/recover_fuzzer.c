/*
 * recover_fuzzer.c - libFuzzer harness for tsf_verify and tsf_recover: any bytes are
 * written to a private temporary file, verified, and recovered into a second file. Seeds: small files our
 * writer makes, complete and cut (fuzz/corpora/recover_fuzzer). Oracles (a failure traps):
 *  - verify returns TSF_OK only with no problem reported (warnings aside), else TSF_ECORRUPT (or ENOTSUP)
 *    with problems, and every problem and warning carries a message;
 *  - recover returns OK, ECORRUPT or ENOTSUP, every note with a message; when OK, its output verifies
 *    clean without warnings, opens with the reader and scans without error to exactly report.points_kept
 *    values, and recovering it again keeps all of them, drops nothing and fills nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsf.h"
#include "fuzz_entry.h"

#define RF_CHECK(cond)                                                                                       \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "recover_fuzzer.c:%d: check failed: %s\n", __LINE__, #cond);                      \
            __builtin_trap();                                                                                \
        }                                                                                                    \
    } while (0)

/* ctx: uint64_t[2], problems and warnings seen */
static void count_problem(void *ctx, const tsf_problem *p)
{
    RF_CHECK(p->what && p->what[0]);
    ((uint64_t *)ctx)[p->warning ? 1 : 0]++;
}

static void count_note(void *ctx, const tsf_problem *p)
{
    RF_CHECK(p->what && p->what[0] && !p->warning);
    (*(uint64_t *)ctx)++;
}

static int put(const char *path, const uint8_t *data, size_t size)
{
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && w == size ? 0 : -1;
}

/* Non-null values of every series, through a query. */
static uint64_t scan_points(const char *path)
{
    tsf_reader *r = NULL;
    tsf_error e = {0};
    RF_CHECK(tsf_reader_open(&r, path, NULL, &e) == TSF_OK);
    tsf_query *q = NULL;
    RF_CHECK(tsf_query_open(r, NULL, &q, &e) == TSF_OK);
    const tsf_batch *b;
    tsf_status st;
    uint64_t n = 0;
    while ((st = tsf_query_next(q, &b, &e)) == TSF_OK && b)
        for (size_t c = 0; c < b->ncolumns; c++)
            for (size_t k = 0; k < b->nrows; k++) n += b->columns[c].validity[k >> 3] >> (k & 7) & 1;
    RF_CHECK(st == TSF_OK);
    tsf_query_close(q);
    tsf_reader_close(r);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[64], out[64], again[64];
    snprintf(in, sizeof in, "/tmp/tsf_recover_fuzz_%ld.in", (long)getpid());
    snprintf(out, sizeof out, "/tmp/tsf_recover_fuzz_%ld.out", (long)getpid());
    snprintf(again, sizeof again, "/tmp/tsf_recover_fuzz_%ld.again", (long)getpid());
    if (put(in, data, size)) return 0;

    uint64_t seen[2] = {0, 0}, notes = 0;
    tsf_verify_report vr;
    tsf_error e = {0};
    tsf_status st = tsf_verify(in, count_problem, seen, &vr, &e);
    RF_CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ENOTSUP);
    RF_CHECK(vr.problems == seen[0] && vr.warnings == seen[1]);
    RF_CHECK((st == TSF_OK) == (seen[0] == 0));

    tsf_recover_report rep;
    tsf_recover_options ro;
    tsf_recover_options_init(&ro);
    ro.on_note = count_note;
    ro.ctx = &notes;
    unlink(out);
    st = tsf_recover_with(in, out, &ro, &rep, &e);
    RF_CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ENOTSUP);
    RF_CHECK(st == TSF_OK || e.message[0]);
    if (st == TSF_OK) {
        RF_CHECK(rep.notes == notes);
        seen[0] = seen[1] = 0;
        RF_CHECK(tsf_verify(out, count_problem, seen, &vr, &e) == TSF_OK && seen[1] == 0);
        RF_CHECK(vr.points == rep.points_kept);
        RF_CHECK(scan_points(out) == rep.points_kept);
        tsf_recover_report rep2;
        unlink(again);
        RF_CHECK(tsf_recover(out, again, &rep2, &e) == TSF_OK);
        RF_CHECK(rep2.had_tail && rep2.chunks_dropped == 0 && rep2.chunks_filled == 0 &&
                 rep2.points_kept == rep.points_kept);
        RF_CHECK(rep2.chunk_groups_kept == rep.chunk_groups_kept);
    }
    unlink(in);
    unlink(out);
    unlink(again);
    return 0;
}
