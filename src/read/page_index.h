/*
 * page_index.h - what the query code needs of the page-time index (page_index.c) beyond tsf.h.
 */
#ifndef TSF_READ_PAGE_INDEX_H
#define TSF_READ_PAGE_INDEX_H

#include "tsf.h"

/* The reader the index was opened for (a query ignores an index of another reader). */
const tsf_reader *tsf_rd_page_index_reader(const tsf_page_index *p);

/* The reader's own index (tsf_reader_options.page_index): tsf_reader_open records "<path>.tsfidx"; queries
 * get it with tsf_rd_pix_get (opened on the first call, once the metadata is loaded; NULL when absent, stale
 * or damaged); tsf_reader_close frees it. */
tsf_status tsf_rd_pix_set_path(tsf_reader *r, const char *tsfile, tsf_error *err);
tsf_page_index *tsf_rd_pix_get(tsf_reader *r);
void tsf_rd_pix_free(tsf_reader *r);

#endif
