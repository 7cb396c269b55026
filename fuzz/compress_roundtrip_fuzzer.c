/*
 * compress_roundtrip_fuzzer.c - libFuzzer harness for page compression (spec: tsfile-encodings.md §13):
 * [codec selector][bytes]. Compresses within tsf_compress_bound, with the context-free call and with a
 * reused tsf_compressor (identical bytes required), decompresses to exactly the input, and checks that
 * a claimed size one byte off is TSF_ECORRUPT.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    tsf_compression c = fz_pick_codec(fz_u8(&r));
    size_t n = r.n;
    size_t cap = tsf_compress_bound(c, n), w1 = 0, w2 = 0;
    if (!tsf_compression_supported(c)) {
        uint8_t dst[8];
        FZ_CHECK(cap == 0);
        FZ_CHECK(tsf_compress(c, r.p, n, dst, sizeof dst, &w1, NULL) == TSF_ENOTSUP);
        return 0;
    }
    FZ_CHECK(cap >= 1 || (c == TSF_UNCOMPRESSED && n == 0));
    uint8_t *z1 = malloc(cap ? cap : 1), *z2 = malloc(cap ? cap : 1), *out = malloc(n + 1);
    FZ_CHECK(z1 && z2 && out);
    FZ_CHECK(tsf_compress(c, r.p, n, z1, cap, &w1, NULL) == TSF_OK);
    FZ_CHECK(tsf_compressor_compress(fz_get_compressor(), c, r.p, n, z2, cap, &w2, NULL) == TSF_OK);
    FZ_CHECK(w1 <= cap && w1 == w2 && memcmp(z1, z2, w1) == 0);

    uint8_t *exact = malloc(w1 ? w1 : 1); /* exact-size copy for ASan */
    FZ_CHECK(exact);
    if (w1) memcpy(exact, z1, w1);
    FZ_CHECK(tsf_decompress(c, exact, w1, out, n, NULL) == TSF_OK);
    FZ_CHECK(n == 0 || memcmp(out, r.p, n) == 0);
    FZ_CHECK(tsf_compressor_decompress(fz_get_compressor(), c, exact, w1, out, n, NULL) == TSF_OK);
    FZ_CHECK(n == 0 || memcmp(out, r.p, n) == 0);
    FZ_CHECK(tsf_decompress(c, exact, w1, out, n + 1, NULL) == TSF_ECORRUPT);
    if (n) FZ_CHECK(tsf_decompress(c, exact, w1, out, n - 1, NULL) == TSF_ECORRUPT);
    free(exact);
    free(z1);
    free(z2);
    free(out);
    return 0;
}
