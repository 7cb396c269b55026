/*
 * Fault injection on the writer's output (doc/writer.md "Output and failures"): a write callback that
 * fails at the N-th call for every N of a full run (one thread and with an output thread), a sync
 * callback that fails, a file size limit (EFBIG, as a full disk) at points across the file, and a
 * rename that fails at close; and the flush interval, after which a kill loses nothing written before.
 * Every case must end in an error status, never a crash and never TSF_OK
 * for a file whose data did not all arrive; a file writer leaves its temporary (for tsf_recover),
 * never a damaged file under the final name.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define ROWS 8192
#define BATCHES 64
#define NSER 3

static char dir[64];

static tsf_status register_series(tsf_writer *w, tsf_error *err)
{
    static const char *names[NSER] = {"a", "b", "c"};
    tsf_status s = TSF_OK;
    for (int i = 0; i < NSER && !s; i++) {
        tsf_column_schema c = {names[i], TSF_INT64, TSF_ENC_PLAIN, TSF_UNCOMPRESSED, TSF_COLUMN_FIELD};
        s = tsf_writer_register_series(w, "root.f.d", &c, err);
    }
    return s;
}

/* Batch b: n (<= ROWS) rows of NSER PRNG values (x is the generator's state). */
static tsf_status put_batch(tsf_writer *w, tsf_tablet *t, int b, int n, uint64_t *x, tsf_error *err)
{
    int64_t *times = malloc(ROWS * sizeof *times), *v = malloc(ROWS * sizeof *v);
    tsf_status s = times && v ? TSF_OK : TSF_ENOMEM;
    for (int r = 0; r < n && !s; r++) times[r] = (int64_t)b * n + r;
    if (!s) s = tsf_tablet_set_times(t, times, (size_t)n, err);
    for (int i = 0; i < NSER && !s; i++) {
        for (int r = 0; r < n; r++) {
            *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
            v[r] = (int64_t)*x;
        }
        s = tsf_tablet_set_column(t, (size_t)i, v, NULL, (size_t)n, err);
    }
    if (!s) s = tsf_writer_write_tablet(w, t, err);
    free(times);
    free(v);
    return s;
}

/* NSER INT64 series of PLAIN values from a PRNG (little to compress: ~12.6 MiB of output), chunk
   groups flushed every 1 MiB of buffered data. */
static tsf_status workload(tsf_writer *w, tsf_error *err)
{
    tsf_status s = register_series(w, err);
    if (s) return s;
    tsf_tablet *t = NULL;
    if ((s = tsf_tablet_new(w, "root.f.d", NULL, 0, ROWS, &t, err))) return s;
    uint64_t x = 88172645463325252ull;
    for (int b = 0; b < BATCHES && !s; b++) s = put_batch(w, t, b, ROWS, &x, err);
    tsf_tablet_free(t);
    return s;
}

static void options(tsf_writer_options *o, uint32_t threads)
{
    tsf_writer_options_init(o);
    o->memory_budget = 1 << 20; /* chunks over 256 KiB: each its own write call */
    o->threads = threads;
}

typedef struct sink {
    size_t calls, fail_at; /* fail_at: the call (1-based) that fails, and every later one; 0 = none */
    size_t bytes, failed_calls;
    int sync_fails, syncs;
} sink;

static int sink_write(void *ud, const void *data, size_t len)
{
    sink *k = ud;
    (void)data;
    k->calls++;
    if (k->fail_at && k->calls >= k->fail_at) {
        k->failed_calls++;
        return -1;
    }
    k->bytes += len;
    return 0;
}

static int sink_sync(void *ud)
{
    sink *k = ud;
    k->syncs++;
    return k->sync_fails ? -1 : 0;
}

/* One run on callbacks; returns the first error status (TSF_OK when close succeeded). */
static tsf_status run_cb(sink *k, uint32_t threads, int fsync_on, tsf_error *err)
{
    tsf_writer_options o;
    options(&o, threads);
    o.fsync = fsync_on;
    tsf_write_callbacks cb = {sizeof cb, sink_write, sink_sync, k};
    tsf_writer *w = NULL;
    tsf_status s = tsf_writer_open_callbacks(&w, &cb, &o, err);
    if (s) return s;
    s = workload(w, err);
    tsf_error e2;
    tsf_status c = tsf_writer_close(w, &e2); /* after a failed call: must fail too, and free everything */
    if (s && c == TSF_OK) return TSF_OK;     /* success reported for lost data: the caller's check fails */
    if (!s && c) *err = e2;
    return s ? s : c;
}

static void test_every_nth_write_fails(void)
{
    for (uint32_t threads = 1; threads <= 3; threads += 2) {
        sink full = {0};
        tsf_error err = {0};
        CHECK_OK(run_cb(&full, threads, 0, &err), &err);
        CHECK(full.calls >= 8);
        CHECK(full.bytes > (size_t)NSER * ROWS * BATCHES * 8);
        size_t bad = 0;
        for (size_t n = 1; n <= full.calls; n++) {
            sink k = {0};
            k.fail_at = n;
            tsf_status s = run_cb(&k, threads, 0, &err);
            if (s != TSF_EIO || k.failed_calls == 0 || k.bytes >= full.bytes) {
                fprintf(stderr, "  threads %u, fail at call %zu: status %d, %zu failed calls, %zu of %zu bytes\n",
                        threads, n, (int)s, k.failed_calls, k.bytes, full.bytes);
                bad++;
            }
            if (s == TSF_EIO) CHECK(strstr(err.message, "callback failed") || strstr(err.message, "earlier output error"));
        }
        printf("  threads %u: a failure at each of %zu write calls -> TSF_EIO\n", threads, full.calls);
        CHECK_EQ_INT(bad, 0);
    }
    /* the sync at close fails: no success */
    sink k = {0};
    k.sync_fails = 1;
    tsf_error err = {0};
    CHECK_EQ_INT(run_cb(&k, 1, 1, &err), TSF_EIO);
    CHECK_EQ_INT(k.syncs, 1);
    CHECK(strstr(err.message, "sync") != NULL);
}

static off_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* A child writes path under a file size limit; exit 0: close succeeded, 1: an I/O error was reported. */
static int child_write(const char *path, off_t limit)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 9;
    tsf_writer_options o;
    options(&o, 1);
    o.fsync = 1;
    tsf_writer *w = NULL;
    tsf_error err;
    tsf_status s = tsf_writer_open(&w, path, &o, &err);
    if (s) return s == TSF_EIO ? 1 : 2;
    s = workload(w, &err);
    tsf_status c = tsf_writer_close(w, &err);
    if (s && !c) return 3; /* success after a failed write */
    if (s || c) return (s ? s : c) == TSF_EIO ? 1 : 2;
    return 0;
}

static void test_file_size_limit(void)
{
    char path[128], ref[128], rec[128], tmp[192];
    snprintf(ref, sizeof ref, "%s/ref.tsfile", dir);
    snprintf(path, sizeof path, "%s/lim.tsfile", dir);
    snprintf(rec, sizeof rec, "%s/rec.tsfile", dir);
    CHECK_EQ_INT(child_write(ref, RLIM_INFINITY == (rlim_t)-1 ? (off_t)1 << 40 : (off_t)1 << 40), 0);
    off_t full = file_size(ref);
    CHECK(full > 4 << 20);
    for (int tenth = 0; tenth <= 11; tenth++) {
        off_t limit = full * tenth / 10;
        unlink(path);
        pid_t pid = fork();
        if (pid == 0) _exit(child_write(path, limit));
        int st = 0;
        waitpid(pid, &st, 0);
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)pid);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
        if (limit < full) {
            CHECK_EQ_INT(code, 1);
            CHECK(file_size(path) < 0); /* nothing under the final name */
            off_t left = file_size(tmp);
            CHECK(left >= 0 && left <= limit); /* the temporary stays for recovery */
            if (left >= (off_t)(full / 4)) {   /* completed chunk groups come back */
                tsf_recover_report rep;
                tsf_error err = {0};
                CHECK_OK(tsf_recover(tmp, rec, &rep, &err), &err);
                CHECK(rep.points_kept > 0 && rep.points_kept < (uint64_t)NSER * ROWS * BATCHES);
                unlink(rec);
            }
        } else {
            CHECK_EQ_INT(code, 0);
            CHECK_EQ_INT(file_size(path), full);
            CHECK(file_size(tmp) < 0);
        }
        unlink(tmp);
    }
    unlink(ref);
    unlink(path);
}

static void test_rename_fails(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/is_a_dir", dir);
    CHECK(mkdir(path, 0755) == 0);
    tsf_writer_options o;
    options(&o, 1);
    tsf_writer *w = NULL;
    tsf_error err = {0};
    CHECK_OK(tsf_writer_open(&w, path, &o, &err), &err);
    if (!w) return;
    char tmp[192];
    snprintf(tmp, sizeof tmp, "%s", tsf_writer_temp_path(w));
    CHECK_OK(workload(w, &err), &err);
    CHECK_EQ_INT(tsf_writer_close(w, &err), TSF_EIO);
    CHECK(strstr(err.message, "rename") != NULL);
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(file_size(tmp) > 0); /* the whole file, left for the caller */
    unlink(tmp);
    rmdir(path);
}

/*
 * flush_interval_ms: once the interval has passed, the next tablet's write puts every buffered chunk
 * group into the file, so a process killed right after loses nothing written before (the file is
 * recovered as it is at that moment: what a SIGKILL leaves). Without the interval, and below the
 * memory budget, nothing would be in the file yet.
 */
static void test_flush_interval(void)
{
    for (uint32_t threads = 1; threads <= 3; threads += 2) {
        char path[128], tmp[192], rec[128];
        snprintf(path, sizeof path, "%s/iv.tsfile", dir);
        snprintf(rec, sizeof rec, "%s/iv.rec.tsfile", dir);
        tsf_writer_options o;
        tsf_writer_options_init(&o);
        o.threads = threads;
        o.flush_interval_ms = 40;
        tsf_writer *w = NULL;
        tsf_tablet *t = NULL;
        tsf_error err = {0};
        CHECK_OK(tsf_writer_open(&w, path, &o, &err), &err);
        if (!w) return;
        snprintf(tmp, sizeof tmp, "%s", tsf_writer_temp_path(w));
        CHECK_OK(register_series(w, &err), &err);
        CHECK_OK(tsf_tablet_new(w, "root.f.d", NULL, 0, ROWS, &t, &err), &err);
        uint64_t x = 1;
        int batches = 0;
        for (; batches < 3; batches++) {
            usleep(60000);
            CHECK_OK(put_batch(w, t, batches, 1000, &x, &err), &err); /* small: buffered, not written direct */
        }
        (void)tsf_writer_bytes_written(w); /* the output thread's last group is out */
        tsf_recover_report rep;
        CHECK_OK(tsf_recover(tmp, rec, &rep, &err), &err);
        CHECK_EQ_INT(rep.points_kept, (uint64_t)batches * 1000 * NSER);
        CHECK_EQ_INT(rep.chunk_groups_kept, batches);
        unlink(rec);
        tsf_tablet_free(t);
        tsf_writer_abort(w);
        unlink(tmp);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tsf_faults_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    TSF_RUN(test_every_nth_write_fails);
    TSF_RUN(test_file_size_limit);
    TSF_RUN(test_rename_fails);
    TSF_RUN(test_flush_interval);
    rmdir(dir);
    return tsf_test_finish();
}
