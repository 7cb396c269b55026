/*
 * Tests of the shrinking-cone segmentation (src/index/pla.c) that shapes the learned index's layout:
 * on every key generator, with duplicates, for several errors and length caps, each segment must admit
 * one line through its first point within +-eps of every (distinct) key, must end only where the next key
 * leaves the cone or the length cap is reached, must never split equal keys, and must respect the cap.
 */
#include "index_ref.h"
#include "index/pla.h"

/* Checks the segments of keys[0..n); returns the number of violations (printing the first). */
static size_t check_segments(const uint64_t *keys, size_t n, uint32_t eps, size_t maxlen, const char *what)
{
    size_t *starts = malloc((n ? n : 1) * sizeof *starts);
    size_t c = tsf_pla_segments_max(keys, n, eps, maxlen, starts), bad = 0;
    if (c != tsf_pla_segments_max(keys, n, eps, maxlen, NULL)) bad++;
    if (n == 0) {
        bad += c != 0;
        free(starts);
        return bad;
    }
    if (c == 0 || starts[0] != 0) bad++;
    for (size_t i = 0; i < c && !bad; i++) {
        size_t s = starts[i], e = i + 1 < c ? starts[i + 1] : n;
        if (e <= s || (s > 0 && keys[s] == keys[s - 1])) { /* ordered, and equal keys stay together */
            fprintf(stderr, "  %s: segment %zu [%zu, %zu) bad boundary\n", what, i, s, e);
            bad++;
            break;
        }
        /* cone of slopes through (keys[s], s) keeping every first-of-equal key within eps */
        long double lo = -1e300L, hi = 1e300L;
        for (size_t j = s + 1; j < e; j++) {
            if (keys[j] == keys[j - 1] || keys[j] == keys[s]) continue;
            long double dx = (long double)(keys[j] - keys[s]), dy = (long double)(j - s);
            long double l = (dy - eps) / dx, h = (dy + eps) / dx;
            if (l > lo) lo = l;
            if (h < hi) hi = h;
        }
        if (lo > hi * (1 + 1e-12L)) {
            fprintf(stderr, "  %s: segment %zu [%zu, %zu) admits no line within %u\n", what, i, s, e, eps);
            bad++;
        }
        /* the cap: the cut comes at the first key change at or after s + maxlen */
        if (maxlen && e - s > maxlen && keys[s + maxlen - 1] != keys[e - 1]) {
            fprintf(stderr, "  %s: segment %zu [%zu, %zu) longer than %zu\n", what, i, s, e, maxlen);
            bad++;
        }
        /* greedy: a segment ends early only when the next key's slope leaves the cone */
        if (e < n && !(maxlen && e - s >= maxlen) && keys[e] != keys[s] && lo <= hi) {
            long double dx = (long double)(keys[e] - keys[s]), slope = (long double)(e - s) / dx;
            if (slope >= lo * (1 + 1e-12L) && slope <= hi * (1 - 1e-12L) && hi < 1e299L) {
                fprintf(stderr, "  %s: segment %zu [%zu, %zu) ended although key %zu fits\n", what, i, s, e, e);
                bad++;
            }
        }
    }
    free(starts);
    return bad;
}

static void test_generators(void)
{
    size_t n = 200000;
    uint64_t *k = malloc(n * 8);
    static const uint32_t eps[] = {4, 32, 128, 256};
    static const size_t caps[] = {0, 64, 4096};
    for (int g = 0; g < GEN_COUNT; g++) {
        size_t m = ref_gen(g, k, n, 5 + (uint64_t)g);
        for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++)
            for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
                char what[64];
                snprintf(what, sizeof what, "%s eps %u cap %zu", GEN_NAMES[g], eps[e], caps[c]);
                CHECK_EQ_INT(check_segments(k, m, eps[e], caps[c], what), 0);
            }
    }
    free(k);
}

/* Runs of equal keys (duplicates allowed by the index) are never split, even by the cap. */
static void test_duplicates(void)
{
    size_t n = 100000;
    uint64_t *k = malloc(n * 8), s = 3, x = 1000;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tsf_test_rand(&s);
        if (r % 4 != 0) x += 1 + r % 1000; /* a quarter repeat the previous key */
        if (r % 997 == 0) {                /* a long run of one key, longer than the cap */
            for (size_t j = 0; j < 300 && i < n; j++) k[i++] = x;
            i--;
            continue;
        }
        k[i] = x;
    }
    CHECK_EQ_INT(check_segments(k, n, 8, 0, "duplicates"), 0);
    CHECK_EQ_INT(check_segments(k, n, 8, 64, "duplicates cap 64"), 0);
    CHECK_EQ_INT(check_segments(k, n, 256, 100, "duplicates cap 100"), 0);
    free(k);
}

/* Small inputs, and the cap giving exactly ceil(n / cap) segments on a straight line. */
static void test_small_and_line(void)
{
    uint64_t k[4096] = {0};
    CHECK_EQ_INT(tsf_pla_segments_max(k, 0, 8, 0, NULL), 0);
    k[0] = 7;
    CHECK_EQ_INT(tsf_pla_segments_max(k, 1, 8, 0, NULL), 1);
    k[1] = 7;
    CHECK_EQ_INT(tsf_pla_segments_max(k, 2, 0, 1, NULL), 1); /* equal keys: one segment */
    for (size_t i = 0; i < 4096; i++) k[i] = 100 + i * 10;
    CHECK_EQ_INT(tsf_pla_segments_max(k, 4096, 0, 0, NULL), 1);
    CHECK_EQ_INT(tsf_pla_segments_max(k, 4096, 0, 1000, NULL), 5);
    CHECK_EQ_INT(tsf_pla_segments_max(k, 4096, 0, 1024, NULL), 4);
    CHECK_EQ_INT(tsf_pla_segments(k, 4096, 0, NULL), 1);
    CHECK_EQ_INT(check_segments(k, 4096, 0, 1000, "line cap 1000"), 0);
    k[2000] = k[1999] + 1; /* one key off the line by more than eps 0 */
    CHECK(tsf_pla_segments_max(k, 4096, 0, 0, NULL) >= 2);
    CHECK_EQ_INT(check_segments(k, 4096, 0, 0, "line with a kink"), 0);
}

int main(void)
{
    TSF_RUN(test_generators);
    TSF_RUN(test_duplicates);
    TSF_RUN(test_small_and_line);
    return tsf_test_finish();
}
