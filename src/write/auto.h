/*
 * auto.h - TSF_ENCODING_AUTO: the writer picks each chunk's encoding from the sizes its pages take,
 * compressed, under every candidate encoding, and keeps the chunk's encoding within 1/64 of the best
 * single one over the chunk, cutting the chunk otherwise (doc/writer.md "AUTO encoding").
 */
#ifndef TSF_WRITE_AUTO_H
#define TSF_WRITE_AUTO_H

#include "writer.h"

typedef struct tsf_wauto tsf_wauto;

/* wcol.autoc states */
enum {
    TSF_AUTO_OFF = 0,       /* the column has a fixed encoding */
    TSF_AUTO_UNDECIDED = 1, /* c->enc is a placeholder (the type's default) until the first page */
    TSF_AUTO_DECIDED = 2,   /* c->enc is a lossless encoding */
    TSF_AUTO_PRECISION = 3, /* c->enc is FLOAT/DOUBLE TS_2DIFF or RLE; c->auto_prec = digits | block << 8 */
};

/* The Java 2.x default encoding of a type (placeholder before the decision, table schemas). */
tsf_encoding tsf_wauto_default(tsf_type t);
/* Marks a column registered with TSF_ENCODING_AUTO. */
void tsf_wauto_init(wcol *c);
/* Frees the column's AUTO state. */
void tsf_wauto_free(tsf_writer *w, wcol *c);
/*
 * Called by tsf_wcol_seal for a non-empty page of an AUTO column (binary values already point at
 * their arena copies; `times` = the page's times when non-aligned, else NULL; `rows` = the aligned
 * page's rows, else 0), on the calling thread's context x: encodes and compresses the page with the
 * chunk's encoding (tsf_wauto_body then gives it), and with the other candidates as needed; a
 * non-aligned column whose chunk must end first writes it as a chunk group of its own and starts
 * its next chunk with this page. An aligned column's page was prepared by tsf_wauto_seal_device.
 */
tsf_status tsf_wauto_seal(tsf_writer *w, wctx *x, wcol *c, const int64_t *times, size_t rows, tsf_error *err);
/* The page body tsf_wauto_seal committed to the body pool (block blk): usize bytes before
 * compression, csize stored. */
void tsf_wauto_body(const wcol *c, const uint8_t **body, tsf_bblock **blk, size_t *usize, size_t *csize);
/* Frees the AUTO buffers of an encoding context. */
void tsf_wauto_ctx_free(wctx *x);
/*
 * Called by tsf_w_seal_device for an aligned device before its page is sealed: prepares the page of
 * every AUTO column; when one of them must end its chunk, writes the device's chunks built so far as
 * one chunk group (time and value chunks stay paired) and every AUTO column starts a chunk.
 */
tsf_status tsf_wauto_seal_device(tsf_writer *w, wdevice *d, tsf_error *err);
/* Pages prepared and candidate trials made so far by an AUTO column (tests, benchmark). */
void tsf_wauto_counters(const wcol *c, uint64_t *pages, uint64_t *trials);
/* The codec to encode c's pages with: w->codec, or a copy at c's precision in *tmp. */
const tsf_codec *tsf_wauto_codec(const tsf_writer *w, const wcol *c, tsf_codec *tmp);
/* Replaces TSF_ENCODING_AUTO in a table schema by the type's default (the schema is on disk). */
void tsf_wauto_schema(tsf_mi_column *cols, size_t n);

/*
 * Index of the first of n FLOAT/DOUBLE values that a TS_2DIFF/RLE precision stream at `digits`
 * does not give back bit for bit (as Java's FloatDecoder computes it), or n. For tests.
 */
size_t tsf_wauto_prec_first_bad(tsf_type t, const void *vals, size_t n, int32_t digits);

#endif
