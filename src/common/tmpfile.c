/*
 * tmpfile.c - output files written under a temporary name and renamed into place (the writer, recovery,
 * the page-time index). The temporary is <path>.<pid>.tmp, created with O_EXCL: two processes writing
 * the same path never share one, and a process that knows a path it asked for knows the temporary's
 * name too (the CLI removes it from a signal handler). A name left by a dead process with the same pid
 * is not reused: the next free <path>.<pid>-<n>.tmp is taken instead. Committing syncs the file when
 * asked, renames it (atomic: a reader sees the old file or the whole new one) and syncs the folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tmpfile.h"

tsf_status tsf_tmp_create(const char *what, const char *path, const tsf_allocator *a, int keep_open, tsf_tmp *t,
                          tsf_error *err)
{
    t->fd = -1;
    t->name = NULL;
    size_t cap = strlen(path) + 48;
    t->cap = cap;
    t->name = tsf_alloc(a, cap);
    if (!t->name) return tsf_err(err, TSF_ENOMEM, "%s: out of memory", what);
    long pid = (long)getpid();
    for (unsigned n = 0; n < 1000; n++) {
        if (n == 0)
            snprintf(t->name, cap, "%s.%ld.tmp", path, pid);
        else
            snprintf(t->name, cap, "%s.%ld-%u.tmp", path, pid, n);
        int fd = open(t->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (keep_open) {
                t->fd = fd;
            } else if (close(fd) != 0) {
                tsf_status s = tsf_err(err, TSF_EIO, "%s: cannot create %s: %s", what, t->name, strerror(errno));
                tsf_tmp_discard(t, a);
                return s;
            }
            return TSF_OK;
        }
        if (errno != EEXIST) break;
    }
    tsf_status s = tsf_err(err, TSF_EIO, "%s: cannot create %s: %s", what, t->name, strerror(errno));
    tsf_free(a, t->name, cap);
    t->name = NULL;
    return s;
}

void tsf_tmp_discard(tsf_tmp *t, const tsf_allocator *a)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    if (t->name) {
        unlink(t->name);
        tsf_free(a, t->name, t->cap);
    }
    t->name = NULL;
}

tsf_status tsf_sync_dir(const char *what, const char *path, tsf_error *err)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        dir[0] = '.';
        dir[1] = 0;
    } else {
        size_t n = (size_t)(slash - path);
        if (n == 0) n = 1;
        if (n >= sizeof dir) return TSF_OK;
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return TSF_OK;
    int r = fsync(fd);
    int e = errno;
    close(fd);
    if (r != 0 && e != EINVAL) return tsf_err(err, TSF_EIO, "%s: fsync of folder %s failed: %s", what, dir, strerror(e));
    return TSF_OK;
}

tsf_status tsf_tmp_commit(const char *what, tsf_tmp *t, const char *path, int sync, const tsf_allocator *a,
                          tsf_error *err)
{
    tsf_status s = TSF_OK;
    if (t->fd >= 0) {
        if (sync && fsync(t->fd) != 0) s = tsf_err(err, TSF_EIO, "%s: fsync of %s failed: %s", what, t->name, strerror(errno));
        int r = close(t->fd);
        t->fd = -1;
        if (!s && r != 0) s = tsf_err(err, TSF_EIO, "%s: close of %s failed: %s", what, t->name, strerror(errno));
    }
    if (!s && rename(t->name, path) != 0)
        s = tsf_err(err, TSF_EIO, "%s: rename %s -> %s failed: %s", what, t->name, path, strerror(errno));
    if (s) {
        tsf_tmp_discard(t, a);
        return s;
    }
    tsf_free(a, t->name, t->cap);
    t->name = NULL;
    return sync ? tsf_sync_dir(what, path, err) : TSF_OK;
}
