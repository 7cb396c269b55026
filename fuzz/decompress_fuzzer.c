/*
 * decompress_fuzzer.c - libFuzzer harness for page decompression (spec: tsfile-encodings.md §13):
 * [codec selector][claimed uncompressedSize u32 LE][compressed bytes]. Decompresses into a buffer of
 * exactly the claimed size (ASan sees any overrun) with the context-free call and with a reused
 * tsf_compressor; both must agree. Only TSF_OK / TSF_ECORRUPT (ENOTSUP for unsupported codes,
 * ENOMEM) may come back, and TSF_OK means the bytes round-trip through compression again.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    tsf_compression c = fz_pick_codec(fz_u8(&r));
    size_t dst_len = fz_u32(&r) % (FZ_MAX_DECOMPRESSED + 1);
    uint8_t *src = malloc(r.n ? r.n : 1), *a = malloc(dst_len ? dst_len : 1),
            *b = malloc(dst_len ? dst_len : 1);
    FZ_CHECK(src && a && b);
    if (r.n) memcpy(src, r.p, r.n);

    tsf_error err;
    tsf_status s1 = tsf_decompress(c, src, r.n, a, dst_len, &err);
    FZ_CHECK(s1 == TSF_OK || s1 == TSF_ECORRUPT || s1 == TSF_ENOTSUP || s1 == TSF_ENOMEM);
    if (s1 == TSF_ECORRUPT) FZ_CHECK(err.message[0] != '\0');
    FZ_CHECK((s1 == TSF_ENOTSUP) == !tsf_compression_supported(c));
    tsf_status s2 = tsf_compressor_decompress(fz_get_compressor(), c, src, r.n, b, dst_len, NULL);
    FZ_CHECK(s1 == s2);
    if (s1 == TSF_OK) {
        FZ_CHECK(dst_len == 0 || memcmp(a, b, dst_len) == 0);
        /* what decompressed must compress and come back */
        size_t cap = tsf_compress_bound(c, dst_len), w = 0;
        uint8_t *z = malloc(cap ? cap : 1);
        FZ_CHECK(z);
        FZ_CHECK(tsf_compress(c, a, dst_len, z, cap, &w, NULL) == TSF_OK);
        FZ_CHECK(tsf_decompress(c, z, w, b, dst_len, NULL) == TSF_OK);
        FZ_CHECK(dst_len == 0 || memcmp(a, b, dst_len) == 0);
        free(z);
    }
    free(src);
    free(a);
    free(b);
    return 0;
}
