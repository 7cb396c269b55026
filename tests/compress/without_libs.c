/*
 * without_libs.c - page compression in a build that leaves every compression library out
 * but zlib (TSF_WITH_LZMA/ZSTD/LZ4/SNAPPY = 0): compress.c is compiled here with those switches, next to
 * the few common sources it needs, so the default build checks the reduced one's behaviour. Each left-out
 * compression is unsupported, has no bound, and every call naming it is TSF_ENOTSUP with a message that
 * names the compression and the CMake switch; UNCOMPRESSED and GZIP still work.
 */
#include <stdio.h>
#include <string.h>

#include "tsf.h"

static int failures;

#define EXPECT(cond)                                                                                       \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #cond);                             \
            failures++;                                                                                    \
        }                                                                                                  \
    } while (0)

int main(void)
{
    static const struct {
        tsf_compression c;
        const char *name, *sw;
    } gone[] = {{TSF_SNAPPY, "SNAPPY", "TSF_WITH_SNAPPY=OFF"}, {TSF_LZ4, "LZ4", "TSF_WITH_LZ4=OFF"},
                {TSF_ZSTD, "ZSTD", "TSF_WITH_ZSTD=OFF"}, {TSF_LZMA2, "LZMA2", "TSF_WITH_LZMA=OFF"}};
    uint8_t src[64], dst[256], back[64];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 7);
    tsf_compressor *h = NULL;
    EXPECT(tsf_compressor_open(&h, NULL, NULL) == TSF_OK);
    for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++) {
        tsf_compression c = gone[k].c;
        EXPECT(tsf_compression_supported(c) == 0);
        EXPECT(tsf_compress_bound(c, sizeof src) == 0);
        for (int with_handle = 0; with_handle < 2; with_handle++) {
            tsf_error e;
            size_t w = 1;
            memset(&e, 0, sizeof e);
            tsf_status st = with_handle ? tsf_compressor_compress(h, c, src, sizeof src, dst, sizeof dst, &w, &e)
                                        : tsf_compress(c, src, sizeof src, dst, sizeof dst, &w, &e);
            EXPECT(st == TSF_ENOTSUP && w == 0);
            EXPECT(strstr(e.message, gone[k].name) && strstr(e.message, gone[k].sw));
            memset(&e, 0, sizeof e);
            st = with_handle ? tsf_compressor_decompress(h, c, dst, 16, back, sizeof back, &e)
                             : tsf_decompress(c, dst, 16, back, sizeof back, &e);
            EXPECT(st == TSF_ENOTSUP);
            EXPECT(strstr(e.message, gone[k].name) && strstr(e.message, gone[k].sw));
        }
    }
    /* UNCOMPRESSED needs no library; GZIP (zlib) is always there */
    const tsf_compression kept[] = {TSF_UNCOMPRESSED, TSF_GZIP};
    for (size_t k = 0; k < 2; k++) {
        size_t w = 0;
        memset(back, 0, sizeof back);
        EXPECT(tsf_compression_supported(kept[k]) == 1);
        EXPECT(tsf_compress(kept[k], src, sizeof src, dst, sizeof dst, &w, NULL) == TSF_OK && w > 0);
        EXPECT(tsf_decompress(kept[k], dst, w, back, sizeof back, NULL) == TSF_OK);
        EXPECT(memcmp(src, back, sizeof src) == 0);
    }
    tsf_compressor_close(h);
    if (failures) fprintf(stderr, "compress_without_libs: %d failed\n", failures);
    else printf("compress_without_libs: ok\n");
    return failures ? 1 : 0;
}
