/* PLACEHOLDER: replaced by the real codec. */
#include "codec.h"
const tsf_codec_vt tsf_codec_rle = {.encoding = TSF_ENC_RLE};
tsf_status tsf_rle_encode_i32(const tsf_codec *c, const int32_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err)
{ (void)c; (void)v; (void)n; (void)dst; (void)cap; (void)written; return tsf_err(err, TSF_ENOTSUP, "todo"); }
tsf_status tsf_rle_encode_i64(const tsf_codec *c, const int64_t *v, size_t n, uint8_t *dst, size_t cap,
                              size_t *written, tsf_error *err)
{ (void)c; (void)v; (void)n; (void)dst; (void)cap; (void)written; return tsf_err(err, TSF_ENOTSUP, "todo"); }
tsf_status tsf_rle_decode_i32(const tsf_codec *c, const uint8_t *src, size_t len, int32_t *v, size_t n,
                              size_t *consumed, tsf_error *err)
{ (void)c; (void)v; (void)n; (void)src; (void)len; (void)consumed; return tsf_err(err, TSF_ENOTSUP, "todo"); }
tsf_status tsf_rle_decode_i64(const tsf_codec *c, const uint8_t *src, size_t len, int64_t *v, size_t n,
                              size_t *consumed, tsf_error *err)
{ (void)c; (void)v; (void)n; (void)src; (void)len; (void)consumed; return tsf_err(err, TSF_ENOTSUP, "todo"); }
size_t tsf_rle_bound_n(size_t n, int is64) { (void)n; (void)is64; return 0; }
