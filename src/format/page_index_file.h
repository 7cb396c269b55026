/*
 * page_index_file.h - the page-time index file (`<file>.tsfidx`, doc/reader.md "Page-time index"): its key
 * layout and the one builder of its bytes, shared by the reader side (src/read/page_index_build.c walks an
 * existing file) and the writer (src/write/writer_pix.c walks the chunks it has just written). Both hand the
 * builder the same chunks through a tsf_pix_src, so a file gets the same index bytes either way.
 *
 * Key layout (exact, order-preserving): the file's columns are numbered in reader order (per device, in
 * metadata order: an aligned device's time column, then its series). Column c whose page starts lie in
 * [min_c, max_c] owns the keys [base_c, base_c + (max_c - min_c)], base_{c+1} = base_c + (max_c - min_c) + 1,
 * and a page starting at t has the key base_c + (t - min_c). Aligned value pages take the key of the time
 * page they pair with. Above the page keys (T = their total span) lie three more regions of the same index:
 * the page table (keys T + 3g + {0,1,2}: chunk offset, page header offset, page number | check | late flag of
 * page g), the column directory (3 keys per column: base, min start, span + 1 or 0 when empty) and a header
 * at the top of the key space (magic, file size, tail CRC, counts). Files whose spans do not fit are refused
 * (TSF_ENOTSUP). Pages that start before a preceding page of their column ends (late, out of order) are
 * inserted after the bulk load (the index's overflow log); on equal keys the later page wins.
 */
#ifndef TSF_FORMAT_PAGE_INDEX_FILE_H
#define TSF_FORMAT_PAGE_INDEX_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tsf.h"

#define PIX_MAGIC UINT64_C(0x3130584950465354)  /* "TSFPIX01" little-endian: the index of one file */
#define PIX_DMAGIC UINT64_C(0x3130445850465354) /* "TSFPXD01" little-endian: the index of a directory */
#define PIX_HDR (UINT64_MAX - 15)               /* header keys PIX_HDR + PIX_H_* */
#define PIX_TAIL (64u << 10)                    /* bytes of the TsFile's tail covered by the CRC */
#define PIX_LATE (UINT64_C(1) << 63)            /* page table flag: the page is late (out of order) */
#define PIX_PAGE_MASK ((UINT64_C(1) << 32) - 1)
#define PIX_CHECK_MASK (((UINT64_C(1) << 30) - 1) << 32) /* bits 32..61: check of the page's record */

/* Header words. A directory index stores name bytes in SIZE, file name bytes in CRC, files in NDEV. */
enum { PIX_H_MAGIC, PIX_H_SIZE, PIX_H_CRC, PIX_H_NCOLS, PIX_H_NPAGES, PIX_H_SPAN, PIX_H_NLATE, PIX_H_NDEV, PIX_H_COUNT };

/* 30-bit check of a page table record (file number, 0 for one file; chunk offset, header offset, page
 * number): a damaged record is reported instead of sending a query to a wrong page. */
uint64_t tsf_pix_rec_check(uint64_t file, uint64_t coff, uint64_t hoff, uint64_t page);
/* The header's tail check: CRC-32 of the file's last len = min(size, PIX_TAIL) bytes, len in the high half. */
uint64_t tsf_pix_tail_crc(const uint8_t *tail, size_t len);

/* One page while building. */
typedef struct tsf_pix_ent {
    uint64_t key; /* column number until the keys are assigned */
    int64_t start, end;
    uint64_t g; /* page number in the page table */
    int late;
} tsf_pix_ent;

/* The pages collected so far (zero it, set a and tw; tsf_pix_build_free). */
typedef struct tsf_pix_build {
    const tsf_allocator *a;
    tsf_pix_ent *e;
    size_t ne, ecap;
    uint64_t *tab; /* tw per page: chunk offset, page header offset, page number | flags (, file) */
    size_t np, tcap;
    unsigned tw;   /* words per page: 3 (one file), 4 (directory index: + file number) */
    uint64_t file; /* directory index: the file being walked */
} tsf_pix_build;

void tsf_pix_build_free(tsf_pix_build *b);
/* Grows *p (esz-byte elements, capacity *cap) to hold need; -1 when out of memory. */
int tsf_pix_grow(const tsf_allocator *a, void **p, size_t *cap, size_t need, size_t esz);
/* Late: starts before (or at) the end of a page already seen in this column (seen, max_end: the column's). */
int tsf_pix_is_late(int64_t start, int64_t end, int *seen, int64_t *max_end);

/* The pages of one chunk, as a source reports them. */
typedef struct tsf_pix_bufs {
    uint64_t *h; /* page header offsets */
    size_t hcap;
    int64_t *s, *e; /* page start and end times (when asked for) */
    size_t scap;
} tsf_pix_bufs;

void tsf_pix_bufs_free(const tsf_allocator *a, tsf_pix_bufs *w);
/* Sets page n of w (grown as needed): header offset h, and with times its start s and end e. -1 = no memory. */
int tsf_pix_bufs_set(const tsf_allocator *a, tsf_pix_bufs *w, size_t n, uint64_t h, int times, int64_t s,
                     int64_t e);

#define TSF_PIX_TIME SIZE_MAX /* tsf_pix_src column: the aligned device's time column */

/* Where the chunks of the device being walked come from (a file being read, or the writer's memory). */
typedef struct tsf_pix_src {
    void *ud;
    /* Next chunk of column j of the device (TSF_PIX_TIME: the time column of an aligned device), in file order
     * (*pos starts at 0): its offset and its statistics' start and end time; TSF_ENOTFOUND after the last. */
    tsf_status (*next_chunk)(void *ud, size_t j, size_t *pos, uint64_t *off, int64_t *start, int64_t *end,
                             tsf_error *err);
    /* The pages of the chunk at off: *n header offsets into w->h and, when times, their start and end times
     * into w->s, w->e (the chunk's start and end for a page without statistics); *ok = 0 when times and a page
     * of a multi-page chunk has no statistics (the chunk is then not indexed). */
    tsf_status (*pages)(void *ud, uint64_t off, int64_t start, int64_t end, int times, tsf_pix_bufs *w, size_t *n,
                        int *ok, tsf_error *err);
    uint64_t data_end; /* offset after the last chunk (the metadata's) */
} tsf_pix_src;

/* Adds the pages of column j of a non-aligned device as column col. */
tsf_status tsf_pix_walk_series(tsf_pix_build *b, const tsf_pix_src *src, size_t j, size_t col, tsf_pix_bufs *w,
                               tsf_error *err);
/* Adds the pages of an aligned device with nv value columns as columns col (time), col + 1 + j (values): the
 * time chunks drive; the value chunk of a column in a chunk group is its first chunk after the time chunk and
 * before the next one (as the query does); its pages pair with the time pages by position and take their keys. */
tsf_status tsf_pix_walk_aligned(tsf_pix_build *b, const tsf_pix_src *src, size_t nv, size_t col, tsf_pix_bufs *w,
                                tsf_pix_bufs *v, tsf_error *err);

/* Writes the index of the collected pages to path (under a temporary name, then renamed: a reader never sees a
 * half-written index, two builders of one path never share a file, a failed build leaves nothing behind).
 * hdr: the header with the fields of the file(s) set (the counts are set here); extra: nextra words stored
 * after the directory. *nlate = pages inserted after the bulk load. TSF_ENOTSUP when the spans do not fit. */
tsf_status tsf_pix_write(tsf_pix_build *b, const char *path, size_t ncols, uint64_t *hdr, const uint64_t *extra,
                         size_t nextra, uint64_t *nlate, tsf_error *err);

#endif
