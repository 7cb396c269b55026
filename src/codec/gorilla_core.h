/*
 * gorilla_core.h - the GORILLA (spec §4.2) bit-stream primitives shared by gorilla.c and the
 * codecs that embed a GORILLA stream (SPRINTZ's FLOAT/DOUBLE tail, spec §9): a value-at-a-time
 * encoder and iterator over raw 32/64-bit patterns, and the whole-page entry points.
 */
#ifndef TSF_GORILLA_CORE_H
#define TSF_GORILLA_CORE_H

#include "../common/bitio.h"
#include "codec.h"

typedef struct tsf_gorilla_enc {
    tsf_bitw w;
    unsigned W;      /* 32 or 64 */
    int first;       /* no value written yet */
    uint64_t prev;   /* stored value */
    unsigned lz, tz; /* stored window (lz 65 = none yet) */
} tsf_gorilla_enc;

typedef struct tsf_gorilla_iter {
    tsf_bitr r;
    unsigned W;
    int started;
    uint64_t prev;
    unsigned lz, len; /* stored window; lz + len > W means none yet */
} tsf_gorilla_iter;

/* End marker bits of a type: Integer/Long.MIN_VALUE, or Float/Double.NaN canonical bits. */
uint64_t tsf_gorilla_marker(tsf_type type);

void tsf_gorilla_enc_init(tsf_gorilla_enc *e, unsigned W, uint8_t *dst, size_t cap);
void tsf_gorilla_enc_put(tsf_gorilla_enc *e, uint64_t v);
/* Encodes the marker, writes the flush byte; returns the stream length from `start`. */
size_t tsf_gorilla_enc_finish(tsf_gorilla_enc *e, uint64_t marker, uint8_t *start);

void tsf_gorilla_iter_init(tsf_gorilla_iter *it, unsigned W, const uint8_t *src, size_t len);
/* Next value's raw bits; -1 on truncation or an invalid window. */
int tsf_gorilla_iter_next(tsf_gorilla_iter *it, uint64_t *out);

/* Encoded-size bound of n values of width W (includes 8 bytes of writer slack). */
size_t tsf_gorilla_bound_n(size_t n, unsigned W);
/* Whole-page GORILLA stream of n values of `type` (numeric), as the vtable entries. */
tsf_status tsf_gorilla_encode_bits(const tsf_codec *c, tsf_type type, const void *values, size_t n,
                                   uint8_t *dst, size_t cap, size_t *written, tsf_error *err);
/*
 * Whether tsf_gorilla_encode_two serves this codec and type: 64-bit types at level 0 or 1, not the
 * per-value path at level 0 (it runs the reference-shaped encoder).
 */
int tsf_gorilla_two_spans(const tsf_codec *c, tsf_type type);
/* The page stream of a[0..na) followed by b[0..nb) (c->gorilla_compact's level): the same bytes as
   encoding the concatenation. cap >= tsf_gorilla_bound_n(na + nb, 64). */
tsf_status tsf_gorilla_encode_two(const tsf_codec *c, tsf_type type, const void *a, size_t na, const void *b,
                                  size_t nb, uint8_t *dst, size_t cap, size_t *written, tsf_error *err);
tsf_status tsf_gorilla_decode_bits(const tsf_codec *c, tsf_type type, const uint8_t *src, size_t len,
                                   void *values, size_t n, size_t *consumed, tsf_error *err);

#endif
