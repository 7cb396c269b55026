/*
 * auto.h - TSF_ENCODING_AUTO: the writer picks each column's encoding from a sample (its first
 * page) and keeps precision-based FLOAT/DOUBLE encodings only while they are lossless
 * (doc/writer.md "AUTO encoding").
 */
#ifndef TSF_WRITE_AUTO_H
#define TSF_WRITE_AUTO_H

#include "writer.h"

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
/*
 * Called by tsf_wcol_seal for a non-empty page of an AUTO column (binary values already point at
 * their arena copies; `times` = the page's times when non-aligned, else NULL; `rows` = the aligned
 * page's rows, else 0): decides the encoding from this page if undecided; for a non-aligned
 * precision column whose page does not survive the precision, writes the chunk built so far as a
 * chunk group of its own and decides again among lossless encodings.
 */
tsf_status tsf_wauto_seal(tsf_writer *w, wcol *c, const int64_t *times, size_t rows, tsf_error *err);
/*
 * Called by tsf_w_seal_device for an aligned device before its page is sealed: when a precision
 * column's pending values do not survive the precision, writes the device's chunks built so far
 * as one chunk group (time and value chunks stay paired) and moves those columns to lossless
 * encodings.
 */
tsf_status tsf_wauto_seal_device(tsf_writer *w, wdevice *d, tsf_error *err);
/* The codec to encode c's pages with: w->codec, or a copy at c's precision in *tmp. */
const tsf_codec *tsf_wauto_codec(const tsf_writer *w, const wcol *c, tsf_codec *tmp);
/* Replaces TSF_ENCODING_AUTO in a table schema by the type's default (the schema is on disk). */
void tsf_wauto_schema(tsf_ix_column *cols, size_t n);

/*
 * Index of the first of n FLOAT/DOUBLE values that a TS_2DIFF/RLE precision stream at `digits`
 * does not give back bit for bit (as Java's FloatDecoder computes it), or n. For tests.
 */
size_t tsf_wauto_prec_first_bad(tsf_type t, const void *vals, size_t n, int32_t digits);

#endif
