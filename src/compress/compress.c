/* PLACEHOLDER: replaced by the real compression module. */
#include "../common/internal.h"
int tsf_compression_supported(tsf_compression c) { return c == TSF_UNCOMPRESSED; }
size_t tsf_compress_bound(tsf_compression c, size_t n) { return c == TSF_UNCOMPRESSED ? n : 0; }
tsf_status tsf_compress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                        size_t *written, tsf_error *err)
{ (void)c; (void)src; (void)n; (void)dst; (void)cap; (void)written; return tsf_err(err, TSF_ENOTSUP, "todo"); }
tsf_status tsf_decompress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                          tsf_error *err)
{ (void)c; (void)src; (void)n; (void)dst; (void)dst_len; return tsf_err(err, TSF_ENOTSUP, "todo"); }
