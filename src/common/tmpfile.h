/* tmpfile.h - output under a temporary name, renamed into place (tmpfile.c). */
#ifndef TSF_TMPFILE_H
#define TSF_TMPFILE_H

#include "internal.h"

typedef struct tsf_tmp {
    char *name; /* <path>.<pid>.tmp (or <path>.<pid>-<n>.tmp when that was taken) */
    size_t cap; /* allocated bytes of name */
    int fd;     /* open for writing (keep_open), else -1 */
} tsf_tmp;

/* Creates the temporary of path exclusively; keep_open: leave it open in t->fd (else closed, the
   caller reopens it by name). `what` starts the error messages. */
tsf_status tsf_tmp_create(const char *what, const char *path, const tsf_allocator *a, int keep_open, tsf_tmp *t,
                          tsf_error *err);
/* Closes (after fsync when sync) and renames the temporary to path, then syncs the folder when sync.
   On failure the temporary is removed. */
tsf_status tsf_tmp_commit(const char *what, tsf_tmp *t, const char *path, int sync, const tsf_allocator *a,
                          tsf_error *err);
/* Closes and removes the temporary (no-op when there is none). */
void tsf_tmp_discard(tsf_tmp *t, const tsf_allocator *a);
/* fsync of the folder holding path (EINVAL, a folder that cannot be synced, is not an error). */
tsf_status tsf_sync_dir(const char *what, const char *path, tsf_error *err);

#endif
