/*
 * Tests of the windowed TS_2DIFF block walk (src/codec/ts2diff_walk.c, tsf_td_window_select): for streams
 * of Java-sized, short and wide blocks with and without jitter, every window edge at and around each
 * block's first and last value, both plans and both walk modes, the selection equals the full listing
 * (tsf_ts2diff_blocks + tsf_rd_blocks_select) and a brute-force reference over the values: every block with a
 * value in the window is selected, the exact bound decodes at most one phantom block at the lower edge and none at
 * the upper one, the walk stops at the first block after the window, and the selected bytes decode to
 * the reference values. Hostile input: every byte cut and random garbage give the same status as the full
 * listing (or a clean stop before the damage), never an access outside the buffer (ASan).
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/ts2diff_walk.h"
#include "codec/ts2diff_wide.h"
#include "common/bytes.h"
#include "read/filter.h"
#include "test.h"

/* A stream of n timestamps made of runs encoded with different block sizes (each run starts a block). */
typedef struct wstream {
    int64_t *t;
    size_t n;
    uint8_t *b;
    size_t len;
} wstream;

static void ws_make(wstream *s, uint64_t *seed, size_t n, int64_t step, unsigned jbits, int mixed)
{
    s->n = n;
    s->t = malloc(n * sizeof *s->t);
    s->t[0] = 1600000000000LL + (int64_t)(tsf_test_rand(seed) % 1000);
    for (size_t i = 1; i < n; i++)
        s->t[i] = s->t[i - 1] + step + (jbits ? (int64_t)(tsf_test_rand(seed) & ((1ull << jbits) - 1)) : 0);
    uint8_t *buf = malloc(tsf_ts2diff_bound_n(n, 1) + 64);
    size_t len = 0, i = 0;
    while (i < n) {
        size_t run = n - i;
        uint32_t block = 128;
        if (mixed) { /* runs of random length: short last blocks, and some 1024-delta blocks */
            run = 1 + (size_t)(tsf_test_rand(seed) % 700);
            if (run > n - i) run = n - i;
            block = tsf_test_rand(seed) % 3 == 0 ? 1024 : 128;
        }
        len += tsf_ts2diff_wide_encode(s->t + i, run, 1, block, buf + len);
        i += run;
    }
    s->b = malloc(len ? len : 1);
    memcpy(s->b, buf, len);
    s->len = len;
    free(buf);
}

static void ws_free(wstream *s)
{
    free(s->t);
    free(s->b);
}

/* One window against the full listing and the values. */
static void check_window(const wstream *s, const tsf_ts2diff_block *blk, size_t nb, int64_t tmin,
                         int64_t tmax, int conservative, int to_end, tsf_codec *codec, int64_t *scratch)
{
    tsf_td_window w;
    tsf_error err;
    CHECK_OK(tsf_td_window_select(s->b, s->len, tmin, tmax, conservative, to_end, &w, &err), &err);
    size_t r0, r1;
    tsf_rd_blocks_select(blk, nb, tmin, tmax, conservative, &r0, &r1);
    /* the walk's extent: every block, or up to the first one starting after tmax */
    size_t stop = nb;
    for (size_t k = 0; k < nb && !to_end; k++)
        if (blk[k].first > tmax) {
            stop = k + 1;
            break;
        }
    CHECK_EQ_INT(w.nlisted, stop);
    CHECK_EQ_INT(w.complete, stop == nb && (to_end || nb == 0 || blk[nb - 1].first <= tmax));
    CHECK_EQ_INT(w.nvalues, stop ? blk[stop - 1].ordinal + blk[stop - 1].count : 0);
    if (r0 == nb) {
        CHECK_EQ_INT(w.b0, w.nlisted);
    } else {
        CHECK_EQ_INT(w.b0, r0);
        CHECK_EQ_INT(w.b1, r1);
        CHECK_EQ_INT(w.off0, blk[r0].offset);
        CHECK_EQ_INT(w.off1, r1 + 1 < nb ? blk[r1 + 1].offset : s->len);
        CHECK_EQ_INT(w.ord0, blk[r0].ordinal);
        CHECK_EQ_INT(w.ndec, blk[r1].ordinal + blk[r1].count - blk[r0].ordinal);
    }
    /* brute force over the values: blocks with a value in the window, phantoms at each edge */
    size_t first_hit = SIZE_MAX, last_hit = 0;
    for (size_t k = 0; k < nb; k++) {
        const int64_t *v0 = s->t + blk[k].ordinal;
        if (v0[0] > tmax || v0[blk[k].count - 1] < tmin) continue; /* values ascend */
        for (uint32_t i = 0; i < blk[k].count; i++) {
            int64_t v = v0[i];
            if (v >= tmin && v <= tmax) {
                if (first_hit == SIZE_MAX) first_hit = k;
                last_hit = k;
                break;
            }
        }
    }
    int sel = w.b0 < w.nlisted;
    if (first_hit != SIZE_MAX) {
        CHECK(sel && w.b0 <= first_hit && w.b1 >= last_hit);
        if (sel && !conservative) {
            CHECK(first_hit - w.b0 <= 1); /* the gap after a block's last value is not stored */
            CHECK_EQ_INT(w.b1, last_hit); /* a block's first value is exact */
        }
    } else if (sel && !conservative) {
        CHECK_EQ_INT(w.b1, w.b0); /* a window in a gap: one phantom at most */
    }
    /* blocks wholly outside the window are skipped (exact bound) but for that one phantom */
    if (sel && !conservative)
        for (size_t k = w.b0 + 1; k <= w.b1; k++) CHECK(blk[k].first <= tmax && blk[k - 1].bound > tmin);
    if (sel) { /* the selected bytes decode to the reference values */
        CHECK_OK(tsf_codec_decode(codec, TSF_INT64, TSF_ENC_TS_2DIFF, s->b + w.off0, w.off1 - w.off0, scratch,
                                  w.ndec, NULL, &err),
                 &err);
        CHECK_MEM(scratch, s->t + w.ord0, w.ndec * sizeof(int64_t));
    }
}

static int64_t sat_inc(int64_t v)
{
    return v == INT64_MAX ? v : v + 1;
}

/* Every window with edges at and around each block's first and last value (and the extremes). */
static void check_stream(const wstream *s, tsf_codec *codec, uint64_t *seed)
{
    size_t nb = 0;
    tsf_error err;
    CHECK_OK(tsf_ts2diff_blocks(s->b, s->len, NULL, 0, &nb, &err), &err);
    tsf_ts2diff_block *blk = malloc((nb ? nb : 1) * sizeof *blk);
    CHECK_OK(tsf_ts2diff_blocks(s->b, s->len, blk, nb, &nb, &err), &err);
    int64_t *scratch = malloc((s->n ? s->n : 1) * sizeof *scratch);
    size_t ne = 0, cap = 8 * nb + 8;
    int64_t *edges = malloc(cap * sizeof *edges);
    edges[ne++] = INT64_MIN;
    edges[ne++] = INT64_MAX;
    edges[ne++] = s->t[0] - 1;
    edges[ne++] = sat_inc(s->t[s->n - 1]);
    for (size_t k = 0; k < nb; k++) {
        int64_t f = blk[k].first, l = s->t[blk[k].ordinal + blk[k].count - 1];
        edges[ne++] = f - 1, edges[ne++] = f, edges[ne++] = f + 1;
        edges[ne++] = l - 1, edges[ne++] = l, edges[ne++] = sat_inc(l);
    }
    /* all pairs on small streams; otherwise every edge as tmin and as tmax with random partners */
    for (size_t i = 0; i < ne; i++) {
        size_t partners = ne <= 64 ? ne : 12;
        for (size_t j = 0; j < partners; j++) {
            int64_t a = edges[i], b = edges[ne <= 64 ? j : (size_t)(tsf_test_rand(seed) % ne)];
            for (int swap = 0; swap < 2; swap++) {
                int64_t tmin = swap ? b : a, tmax = swap ? a : b; /* includes empty windows */
                for (int plan = 0; plan < 2; plan++)
                    for (int to_end = 0; to_end < 2; to_end++)
                        check_window(s, blk, nb, tmin, tmax, plan, to_end, codec, scratch);
            }
        }
    }
    free(edges);
    free(scratch);
    free(blk);
}

static void test_windows(void)
{
    tsf_codec *codec = NULL;
    tsf_error err;
    CHECK_OK(tsf_codec_open(&codec, NULL, &err), &err);
    uint64_t seed = 77;
    static const unsigned jitter[] = {0, 4, 8, 12};
    for (int it = 0; it < 24; it++) {
        wstream s;
        size_t n = it < 4 ? (size_t)1 + (size_t)it * 128 : 1 + (size_t)(tsf_test_rand(&seed) % 6000);
        ws_make(&s, &seed, n, it % 5 == 4 ? 1 : 1000, jitter[it % 4], it % 3 == 2);
        check_stream(&s, codec, &seed);
        ws_free(&s);
    }
    tsf_codec_close(codec);
}

/* The last value INT64_MAX: the exact last bound saturates and still meets a window reaching it. */
static void test_saturated_end(void)
{
    tsf_codec *codec = NULL;
    tsf_error err;
    CHECK_OK(tsf_codec_open(&codec, NULL, &err), &err);
    uint64_t seed = 5;
    wstream s;
    ws_make(&s, &seed, 300, 1000, 3, 0);
    s.t[299] = INT64_MAX;
    free(s.b);
    uint8_t *buf = malloc(tsf_ts2diff_bound_n(300, 1));
    s.len = tsf_ts2diff_wide_encode(s.t, 300, 1, 128, buf);
    s.b = buf;
    check_stream(&s, codec, &seed);
    tsf_td_window w;
    CHECK_OK(tsf_td_window_select(s.b, s.len, INT64_MAX, INT64_MAX, 0, 0, &w, &err), &err);
    CHECK(w.b0 < w.nlisted && w.ord0 + w.ndec == 300 && w.complete);
    ws_free(&s);
    tsf_codec_close(codec);
}

/* Every byte cut and random damage: the status of the full listing when the walk reads every header
 * (to_end or a window past the end), a clean result or ECORRUPT otherwise. */
static void test_hostile(void)
{
    uint64_t seed = 99;
    wstream s;
    ws_make(&s, &seed, 2000, 1000, 6, 1);
    tsf_error err;
    for (size_t cut = 0; cut <= s.len; cut++) {
        uint8_t *g = malloc(cut ? cut : 1);
        memcpy(g, s.b, cut);
        size_t nb;
        tsf_status full = tsf_ts2diff_blocks(g, cut, NULL, 0, &nb, &err);
        tsf_td_window w;
        CHECK_EQ_INT(tsf_td_window_select(g, cut, INT64_MIN, INT64_MAX, 0, 0, &w, &err), full);
        CHECK_EQ_INT(tsf_td_window_select(g, cut, s.t[1000], s.t[1100], 1, 1, &w, &err), full);
        tsf_status early = tsf_td_window_select(g, cut, s.t[10], s.t[20], 0, 0, &w, &err);
        CHECK(early == full || (early == TSF_OK && !w.complete));
        free(g);
    }
    for (int it = 0; it < 4000; it++) {
        size_t len = (size_t)(tsf_test_rand(&seed) % 120);
        uint8_t *g = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++) g[i] = (uint8_t)tsf_test_rand(&seed);
        for (size_t p = 0; p + 24 <= len && (it & 1); p += 24 + (size_t)(tsf_test_rand(&seed) % 8)) {
            tsf_store_be32(g + p, (uint32_t)(tsf_test_rand(&seed) % 40)); /* plausible headers */
            tsf_store_be32(g + p + 4, (uint32_t)(tsf_test_rand(&seed) % 66));
        }
        size_t nb;
        tsf_status full = tsf_ts2diff_blocks(g, len, NULL, 0, &nb, &err);
        tsf_td_window w;
        int64_t a = (int64_t)tsf_test_rand(&seed), b = (int64_t)tsf_test_rand(&seed);
        CHECK_EQ_INT(tsf_td_window_select(g, len, a, b, it & 2, 1, &w, &err), full);
        tsf_status s2 = tsf_td_window_select(g, len, a, b, it & 2, 0, &w, &err);
        CHECK(s2 == TSF_OK || s2 == TSF_ECORRUPT);
        if (s2 == TSF_OK) CHECK(w.b0 == w.nlisted || (w.off0 < w.off1 && w.off1 <= len));
        free(g);
    }
    ws_free(&s);
}

int main(void)
{
    TSF_RUN(test_windows);
    TSF_RUN(test_saturated_end);
    TSF_RUN(test_hostile);
    return tsf_test_finish();
}
