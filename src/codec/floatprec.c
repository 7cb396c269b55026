/* PLACEHOLDER: replaced by the real codec. */
#include <math.h>
#include "codec.h"
tsf_status tsf_floatprec_encode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const void *values,
                                size_t n, uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{ (void)c; (void)inner; (void)type; (void)values; (void)n; (void)dst; (void)cap; (void)written; return tsf_err(err, TSF_ENOTSUP, "todo"); }
tsf_status tsf_floatprec_decode(const tsf_codec *c, tsf_encoding inner, tsf_type type, const uint8_t *src,
                                size_t len, void *values, size_t n, size_t *consumed, tsf_error *err)
{ (void)c; (void)inner; (void)type; (void)values; (void)n; (void)src; (void)len; (void)consumed; return tsf_err(err, TSF_ENOTSUP, "todo"); }
size_t tsf_floatprec_bound(tsf_encoding inner, tsf_type type, size_t n) { (void)inner; (void)type; (void)n; return 0; }
tsf_status tsf_floatprec_count(tsf_encoding inner, tsf_type type, const uint8_t *src, size_t len, size_t *n,
                               tsf_error *err)
{ (void)inner; (void)type; (void)src; (void)len; (void)n; return tsf_err(err, TSF_ENOTSUP, "todo"); }
int64_t tsf_java_round(double x) { return (int64_t)floor(x + 0.5); }
