/*
 * page_index.h - what the query code needs of the page-time index (page_index.c) beyond tsf.h.
 */
#ifndef TSF_READ_PAGE_INDEX_H
#define TSF_READ_PAGE_INDEX_H

#include "tsf.h"

/* The reader the index was opened for (a query ignores an index of another reader). */
const tsf_reader *rd_page_index_reader(const tsf_page_index *p);

#endif
