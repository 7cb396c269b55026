/*
 * Persistence tests of the learned index: reopen after sync, simulated power cuts in the shadow mode
 * (unsynced pages dropped, or written back at random, or the power lost in the middle of a sync), a
 * fork-and-kill crash test at random points during inserts and syncs, TSF_ECORRUPT (never a crash)
 * on damaged files, and TSF_EIO (never SIGBUS) when the disk fills while the file grows.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "index_ref.h"
#include "tsf_experimental.h"

static char dir[64];

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

static tsf_index *open_file(const char *path, uint32_t mode, uint32_t dur, uint32_t flags, uint64_t seed,
                            uint64_t limit, tsf_status *st)
{
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.mode = mode;
    o.durability = dur;
    o.flags = flags;
    struct tsf_index_experimental x = {.shadow_seed = seed, .shadow_persist_limit = limit};
    o.experimental = &x;
    tsf_index *ix = NULL;
    tsf_error err;
    *st = tsf_index_open(&ix, path, &o, &err);
    if (*st != TSF_OK && *st != TSF_ECORRUPT) fprintf(stderr, "open: %s\n", err.message);
    return ix;
}

/* Every key of ref must be found with its value; returns the number of mismatches. */
static size_t verify_ref(tsf_index *ix, const ref_map *r)
{
    size_t bad = 0;
    tsf_error err;
    for (size_t i = 0; i < r->cap; i++) {
        if (r->used[i] != 1) continue;
        uint64_t v = 0;
        if (tsf_index_get(ix, r->k[i], &v, &err) != TSF_OK || v != r->v[i]) bad++;
    }
    return bad;
}

static void test_reopen(void)
{
    char p[128];
    for (uint32_t mode = 0; mode < 2; mode++) {
        path_of(p, sizeof p, mode ? "reopen_d.ix" : "reopen_s.ix");
        tsf_status st;
        tsf_index *ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, TSF_INDEX_TRUNCATE, 0, 0, &st);
        CHECK_OK(st, (tsf_error *)NULL);
        if (!ix) continue;
        tsf_error err;
        size_t n = 20000;
        uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
        n = ref_gen(GEN_TIMESTAMPS, k, n, 4);
        for (size_t i = 0; i < n; i++) v[i] = i;
        CHECK_OK(tsf_index_bulk_load(ix, k, v, n, &err), &err);
        ref_map r;
        ref_init(&r, n + 5000);
        for (size_t i = 0; i < n; i++) ref_put(&r, k[i], v[i]);
        uint64_t s = 8;
        for (int i = 0; i < 5000; i++) {
            uint64_t x = tsf_test_rand(&s);
            CHECK_OK(tsf_index_insert(ix, x, (uint64_t)i, &err), &err);
            ref_put(&r, x, (uint64_t)i);
            if (i % 3 == 0) {
                CHECK_OK(tsf_index_delete(ix, k[(size_t)i * 3 % n], &err) == TSF_ENOTFOUND ? TSF_OK : TSF_OK,
                         &err);
                ref_del(&r, k[(size_t)i * 3 % n]);
            }
        }
        CHECK_OK(tsf_index_sync(ix, &err), &err);
        tsf_index_stats before, after;
        CHECK_OK(tsf_index_stats_get(ix, &before), (tsf_error *)NULL);
        tsf_index_close(ix);
        ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
        CHECK_OK(st, (tsf_error *)NULL);
        if (ix) {
            CHECK_EQ_INT(verify_ref(ix, &r), 0);
            CHECK_OK(tsf_index_check(ix, &err), &err);
            CHECK_OK(tsf_index_stats_get(ix, &after), (tsf_error *)NULL);
            CHECK_EQ_INT(after.records, before.records);
            CHECK_EQ_INT(after.mode, mode);
            /* compaction, reopen read-only */
            CHECK_OK(tsf_index_compact(ix, &err), &err);
            tsf_index_close(ix);
            ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, TSF_INDEX_READONLY, 0, 0, &st);
            CHECK_OK(st, (tsf_error *)NULL);
            if (ix) {
                CHECK_EQ_INT(verify_ref(ix, &r), 0);
                CHECK_OK(tsf_index_check(ix, &err), &err);
                CHECK_EQ_INT(tsf_index_insert(ix, 1, 1, &err), TSF_ESTATE);
                tsf_index_close(ix);
            }
        }
        ref_free(&r);
        free(k);
        free(v);
    }
}

/*
 * Shadow mode: inserts with syncs at random points; the power goes at a random persist operation
 * (everything after it is lost) and, at close, every still-dirty page survives with probability 1/2.
 * Reopening must find every insert acknowledged by a sync that completed before the cut.
 */
static void power_cut_round(uint32_t mode, uint64_t seed)
{
    char p[128];
    path_of(p, sizeof p, "shadow.ix");
    unlink(p);
    tsf_status st;
    uint64_t s = seed;
    /* a base created with full durability */
    tsf_index *ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (!ix) return;
    tsf_error err;
    size_t n = 3000;
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    n = ref_gen(GEN_UNIFORM, k, n, seed);
    for (size_t i = 0; i < n; i++) v[i] = k[i] ^ 5;
    CHECK_OK(tsf_index_bulk_load(ix, k, v, n, &err), &err);
    tsf_index_close(ix);
    uint64_t limit = 1 + tsf_test_rand(&s) % 400;
    ix = open_file(p, mode, TSF_INDEX_DUR_SHADOW, 0, seed | 1, limit, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (!ix) return;
    ref_map acked, cur;
    ref_init(&acked, n + 20000);
    ref_init(&cur, n + 20000);
    for (size_t i = 0; i < n; i++) {
        ref_put(&acked, k[i], v[i]);
        ref_put(&cur, k[i], v[i]);
    }
    enum { WRITES = 8000 };
    uint64_t *wk = malloc(WRITES * 8), *wv = malloc(WRITES * 8);
    size_t acked_upto = 0; /* writes [0, acked_upto) were acknowledged by a completed sync */
    for (int i = 0; i < WRITES; i++) {
        uint64_t x = tsf_test_rand(&s), key = (x & 3) ? x : k[x % n];
        CHECK_OK(tsf_index_insert(ix, key, x >> 3, &err), &err);
        ref_put(&cur, key, x >> 3);
        wk[i] = key;
        wv[i] = x >> 3;
        if (x % 97 == 0) {
            CHECK_OK(tsf_index_sync(ix, &err), &err);
            tsf_index_stats sst;
            tsf_index_stats_get(ix, &sst);
            if (sst.persist_ops <= limit) { /* this sync completed before the power went */
                for (size_t j = 0; j < cur.cap; j++)
                    if (cur.used[j] == 1) ref_put(&acked, cur.k[j], cur.v[j]);
                acked_upto = (size_t)i + 1;
            }
        }
    }
    tsf_index_close(ix); /* power cut */
    ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (ix) {
        /* An acknowledged key holds its acknowledged value or one written later; never older or none. */
        size_t bad = 0;
        for (size_t j = 0; j < acked.cap; j++) {
            if (acked.used[j] != 1) continue;
            uint64_t val;
            if (tsf_index_get(ix, acked.k[j], &val, &err) != TSF_OK) {
                bad++;
                continue;
            }
            int ok = val == acked.v[j];
            for (size_t w = acked_upto; w < WRITES && !ok; w++) ok = wk[w] == acked.k[j] && wv[w] == val;
            bad += !ok;
        }
        if (bad)
            fprintf(stderr, "  mode %u seed %llu limit %llu: %zu acknowledged keys lost\n", mode,
                    (unsigned long long)seed, (unsigned long long)limit, bad);
        CHECK_EQ_INT(bad, 0);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        tsf_index_close(ix);
    }
    ref_free(&acked);
    ref_free(&cur);
    free(wk);
    free(wv);
    free(k);
    free(v);
}

static void test_power_cut(void)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        power_cut_round(TSF_INDEX_SORTED, seed);
        power_cut_round(TSF_INDEX_DYNAMIC, seed * 7919);
    }
}

/*
 * Without any sync after the load, a power cut must give back the loaded content; in sorted mode the
 * unsynced inserts (new overflow chunks never linked durably) must be gone entirely.
 */
static void test_power_cut_unsynced(void)
{
    char p[128];
    path_of(p, sizeof p, "unsynced.ix");
    unlink(p);
    tsf_status st;
    tsf_index *ix = open_file(p, TSF_INDEX_SORTED, TSF_INDEX_DUR_SHADOW, 0, 0, 0, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (!ix) return;
    tsf_error err;
    uint64_t k[100], v[100];
    for (int i = 0; i < 100; i++) {
        k[i] = (uint64_t)i * 1000;
        v[i] = (uint64_t)i;
    }
    CHECK_OK(tsf_index_bulk_load(ix, k, v, 100, &err), &err);
    for (int i = 0; i < 1000; i++) CHECK_OK(tsf_index_insert(ix, (uint64_t)i * 1000 + 1, 1, &err), &err);
    tsf_index_close(ix);
    ix = open_file(p, TSF_INDEX_SORTED, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (!ix) return;
    uint64_t val;
    CHECK_EQ_INT(tsf_index_get(ix, 1001, &val, &err), TSF_ENOTFOUND); /* never synced: gone */
    CHECK_OK(tsf_index_get(ix, 99000, &val, &err), &err);
    CHECK(val == 99);
    tsf_index_stats sst;
    CHECK_OK(tsf_index_stats_get(ix, &sst), (tsf_error *)NULL);
    CHECK_EQ_INT(sst.records, 100);
    CHECK_OK(tsf_index_check(ix, &err), &err);
    tsf_index_close(ix);
}

/*
 * Fork and kill: the child inserts keys 0,1,2,... (value = key*3) in batches and syncs; after each
 * sync it reports the count through a pipe. The parent kills it at a random moment, reopens and
 * checks every reported key.
 */
static void test_fork_kill(void)
{
    char p[128];
    srand((unsigned)time(NULL));
    for (int round = 0; round < 6; round++) {
        uint32_t mode = (uint32_t)(round & 1);
        path_of(p, sizeof p, "forkkill.ix");
        unlink(p);
        tsf_status st;
        tsf_index *ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
        CHECK_OK(st, (tsf_error *)NULL);
        if (!ix) return;
        tsf_index_close(ix);
        int fds[2];
        if (pipe(fds) != 0) return;
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
            if (!ix) _exit(2);
            tsf_error err;
            uint64_t key = 0;
            for (;;) {
                uint64_t batch = 1 + key % 300;
                for (uint64_t i = 0; i < batch; i++, key++)
                    if (tsf_index_insert(ix, key * UINT64_C(0x9E3779B97F4A7C15), key * 3, &err) != TSF_OK)
                        _exit(3);
                if (tsf_index_sync(ix, &err) != TSF_OK) _exit(4);
                if (write(fds[1], &key, 8) != 8) _exit(5);
            }
        }
        close(fds[1]);
        uint64_t acked = 0, x;
        if (read(fds[0], &x, 8) == 8) acked = x; /* at least one completed sync, then a random moment */
        usleep((useconds_t)(rand() % 200000));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        while (read(fds[0], &x, 8) == 8) acked = x;
        close(fds[0]);
        CHECK(WIFSIGNALED(status));
        ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
        CHECK_OK(st, (tsf_error *)NULL);
        if (!ix) continue;
        tsf_error err;
        size_t bad = 0;
        for (uint64_t key = 0; key < acked; key++) {
            uint64_t v;
            if (tsf_index_get(ix, key * UINT64_C(0x9E3779B97F4A7C15), &v, &err) != TSF_OK || v != key * 3)
                bad++;
        }
        CHECK_EQ_INT(bad, 0);
        CHECK_OK(tsf_index_check(ix, &err), &err);
        CHECK(acked > 0);
        tsf_index_close(ix);
    }
}

/* Damaged files: every single-byte change, truncation or garbage must give TSF_OK or TSF_ECORRUPT. */
static void test_corrupt(void)
{
    char p[128], q[128];
    path_of(p, sizeof p, "good.ix");
    path_of(q, sizeof q, "bad.ix");
    for (uint32_t mode = 0; mode < 2; mode++) {
        unlink(p);
        tsf_status st;
        tsf_index *ix = open_file(p, mode, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
        if (!ix) return;
        tsf_error err;
        uint64_t k[600], v[600];
        uint64_t s = 3;
        size_t n = ref_gen(GEN_CLUSTERED, k, 600, 9);
        for (size_t i = 0; i < n; i++) v[i] = i;
        CHECK_OK(tsf_index_bulk_load(ix, k, v, n, &err), &err);
        for (int i = 0; i < 300; i++) CHECK_OK(tsf_index_insert(ix, tsf_test_rand(&s), 1, &err), &err);
        CHECK_OK(tsf_index_sync(ix, &err), &err);
        tsf_index_close(ix);
        size_t len;
        uint8_t *good = tsf_test_read_file(p, &len);
        if (!good) return;
        int opened = 0, refused = 0;
        for (int t = 0; t < 400; t++) {
            uint8_t *b = malloc(len);
            memcpy(b, good, len);
            size_t blen = len;
            uint64_t r = tsf_test_rand(&s);
            if (t == 0)
                memset(b, 0xA5, len); /* garbage */
            else if (t == 1)
                blen = 300; /* cut inside the superblocks */
            else if (t % 10 == 0)
                blen = r % len; /* truncation */
            else if (t % 3 == 0)
                b[r % 4096 % len] ^= (uint8_t)(1u << (r >> 32) % 8); /* metadata bytes */
            else
                b[r % len] = (uint8_t)(r >> 40);
            FILE *f = fopen(q, "wb");
            fwrite(b, 1, blen, f);
            fclose(f);
            ix = open_file(q, mode, TSF_INDEX_DUR_NONE, 0, 0, 0, &st);
            CHECK(st == TSF_OK || st == TSF_ECORRUPT);
            if (ix) {
                opened++;
                uint64_t kk, vv;
                for (size_t i = 0; i < n; i += 7) {
                    tsf_status g = tsf_index_get(ix, k[i], &vv, &err);
                    CHECK(g == TSF_OK || g == TSF_ENOTFOUND || g == TSF_ECORRUPT);
                    g = tsf_index_lower_bound(ix, k[i] + 1, &kk, &vv, &err);
                    CHECK(g == TSF_OK || g == TSF_ENOTFOUND || g == TSF_ECORRUPT);
                }
                tsf_status c = tsf_index_check(ix, &err);
                CHECK(c == TSF_OK || c == TSF_ECORRUPT);
                tsf_index_close(ix);
            } else {
                refused++;
            }
            free(b);
        }
        CHECK(refused > 0 && opened > 0);
        free(good);
    }
}

/* Keys for a file of several MiB; a failed load reports TSF_EIO naming the full disk. */
static tsf_status load_big(const char *p, uint64_t grow_limit, tsf_error *err)
{
    enum { N = 400000 };
    uint64_t *k = malloc(N * sizeof *k), *v = malloc(N * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return TSF_ENOMEM;
    }
    for (uint64_t i = 0; i < N; i++) k[i] = i * 7919, v[i] = i;
    tsf_index_options o;
    tsf_index_options_init(&o);
    o.flags = TSF_INDEX_TRUNCATE;
    struct tsf_index_experimental x = {.grow_limit = grow_limit};
    o.experimental = &x;
    tsf_index *ix = NULL;
    tsf_status st = tsf_index_open(&ix, p, &o, err);
    if (!st) st = tsf_index_bulk_load(ix, k, v, N, err);
    tsf_index_close(ix);
    free(k);
    free(v);
    return st;
}

/* A full disk while the file grows is TSF_EIO with the reason, and the file stays a valid index. */
static void test_full_disk(void)
{
    char p[128];
    path_of(p, sizeof p, "full.ix");
    tsf_error err = {0};
    /* injected: the reservation fails as on a full disk */
    CHECK_EQ_INT(load_big(p, UINT64_C(1) << 20, &err), TSF_EIO);
    CHECK(strstr(err.message, strerror(ENOSPC)) != NULL);
    tsf_status st;
    tsf_index *ix = open_file(p, TSF_INDEX_SORTED, TSF_INDEX_DUR_MSYNC, 0, 0, 0, &st);
    CHECK_OK(st, (tsf_error *)NULL);
    if (ix) CHECK_OK(tsf_index_check(ix, &err), &err);
    tsf_index_close(ix);
    /* a real 1 MiB filesystem (root: a tmpfs in a private mount namespace of a child process) */
    if (geteuid() != 0) {
        tsf_test_skip("not root: no tiny filesystem to fill (the injected case ran)");
        return;
    }
    char mnt[96];
    path_of(mnt, sizeof mnt, "tiny");
    CHECK(mkdir(mnt, 0755) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0)
            _exit(77);
        snprintf(p, sizeof p, "%s/full.ix", mnt);
        tsf_error e = {0};
        tsf_status s = load_big(p, 0, &e);
        if (s != TSF_EIO) _exit(10 + (int)s);
        if (!strstr(e.message, strerror(ENOSPC))) _exit(5);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(!WIFSIGNALED(status)); /* SIGBUS before the space was reserved */
    if (WIFSIGNALED(status)) fprintf(stderr, "  child died of signal %d\n", WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        tsf_test_skip("cannot mount a tmpfs here (the injected case ran)");
        return;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status)) fprintf(stderr, "  child exit %d\n", WEXITSTATUS(status));
}

/* Optional argument: run only the tests whose name contains it. */
#define RUN(fn)                                                                                              \
    if (argc < 2 || strstr(#fn, argv[1])) TSF_RUN(fn)

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "/tmp/tsf_index_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_reopen);
    RUN(test_power_cut_unsynced);
    RUN(test_power_cut);
    RUN(test_fork_kill);
    RUN(test_corrupt);
    RUN(test_full_disk);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
    return tsf_test_finish();
}
