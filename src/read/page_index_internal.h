/*
 * page_index_internal.h - what the page-time index files of src/read share: the open handle, and the walk
 * of a reader's file into a builder (the key layout and the builder are src/format/page_index_file.h).
 * page_index_build.c builds the index of one file, page_index.c opens and looks it up, page_index_dir.c
 * builds and opens one index over the TsFiles of a directory.
 */
#ifndef TSF_READ_PAGE_INDEX_INTERNAL_H
#define TSF_READ_PAGE_INDEX_INTERNAL_H

#include <pthread.h>

#include "../format/page_index_file.h"
#include "page_index.h"
#include "reader_internal.h"
#include "tsf_index.h"

struct tsf_page_index {
    const tsf_allocator *a;
    tsf_reader *r;
    tsf_index *ix;
    pthread_mutex_t lock; /* a tsf_index handle serves one thread at a time */
    size_t ncols, ndev;
    size_t *col0;   /* first column of each device */
    uint64_t *base; /* per column: first key */
    int64_t *min;   /* per column: smallest page start */
    uint64_t *span; /* per column: max start - min start + 1; 0 = no page */
    uint64_t tab;   /* key of the page table (= T) */
    uint64_t npages, nlate;
    unsigned tw;    /* page table words per page: 3, 4 for a directory index (+ file number) */
    /* directory index (r == NULL): column names (sorted) and the files, in name order */
    size_t nfiles;
    char *names, *fnames; /* "device\0series\0" per column; "file\0" per file */
    size_t names_cap, fnames_cap;
    const char **cdev, **cser, **fname;
};

/* ---- page_index_build.c ---- */

/* Columns of the reader's devices; col0 gets ndev + 1 entries (col0[ndev] = ncols). */
tsf_status tsf_pix_columns(tsf_reader *r, const tsf_allocator *a, size_t **col0, size_t *ncols, tsf_error *err);
/* The header's tail check of r's file (tsf_pix_tail_crc). */
tsf_status tsf_pix_reader_tail_crc(tsf_reader *r, uint64_t *out, tsf_error *err);
/* Adds the pages of device d of r to b as columns col, col + 1, ... (aligned: the time column first); buf:
 * the read buffer (tsf_rd_buf_free it after), w and v: page buffers of b->a. */
tsf_status tsf_pix_walk_device(tsf_pix_build *b, tsf_reader *r, size_t d, size_t col, tsf_rd_buf *buf,
                               tsf_pix_bufs *w, tsf_pix_bufs *v, tsf_error *err);
/* "<tsfile>.tsfidx" (allocated with a; n + 8 bytes, n = strlen(tsfile)). */
char *tsf_pix_idx_name(const tsf_allocator *a, const char *tsfile, size_t *n);

/* ---- page_index.c ---- */

/* A handle on the index at path with its header read (h, PIX_H_COUNT words) and its magic checked. */
tsf_status tsf_pix_new(const tsf_allocator *a, const char *path, uint64_t magic, tsf_page_index **out, uint64_t *h,
                       tsf_error *err);
/* Page table position and counts from the header, the column directory into DRAM (p->ncols set). */
tsf_status tsf_pix_load_dir(tsf_page_index *p, const char *path, const uint64_t *h, tsf_error *err);
/* The value at key, TSF_ECORRUPT naming `what` when it is missing. */
tsf_status tsf_pix_get_u64(tsf_index *ix, uint64_t key, uint64_t *v, const char *what, tsf_error *err);
/* Column number of (device, series) of a one-file index; SIZE_MAX if none. */
size_t tsf_pix_col(const tsf_page_index *p, size_t device, size_t series);
/* The page of column c holding time t (under p->lock); *file: its file (directory index). */
tsf_status tsf_pix_lookup_locked(tsf_page_index *p, size_t c, int64_t t, tsf_page_loc *out, size_t *file,
                                 tsf_error *err);

#endif
