/*
 * roundtrip_gorilla_fuzzer.c - libFuzzer harness for the GORILLA encoder: bytes -> values of a chosen
 * type -> encode on every path (identical bytes) -> decode on every path -> the values again (lossy
 * forms as documented in fuzz_common.h). Then the same values through the compact encoder
 * (tsf_codec_options.gorilla_compact 1 and 2): the stream fits the bound, decodes on every path to the
 * same raw bits and is consumed exactly.
 */
#include "fuzz_common.h"

static void fz_compact(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    int legal;
    tsf_type t = fz_pick_type(TSF_ENC_GORILLA, 1, fz_u8(&r), &legal);
    if (!legal) return;
    size_t wid = tsf_type_size(t), payload;
    void *values = calloc(FZ_MAX_VALUES, wid), *back = calloc(FZ_MAX_VALUES, wid);
    FZ_CHECK(values && back);
    size_t n = fz_make_values(t, &r, values, &payload);
    size_t cap = tsf_codec_encode_bound(t, TSF_ENC_GORILLA, n, payload);
    uint8_t *dst = malloc(cap);
    FZ_CHECK(dst);
    for (int level = 1; level <= 2; level++) {
        tsf_codec_options o;
        tsf_codec_options_init(&o);
        o.gorilla_compact = level;
        tsf_codec *c = NULL;
        FZ_CHECK(tsf_codec_open(&c, &o, NULL) == TSF_OK);
        size_t len = 0, used = 0;
        FZ_CHECK(tsf_codec_encode(c, t, TSF_ENC_GORILLA, values, n, dst, cap, &len, NULL) == TSF_OK);
        FZ_CHECK(len <= cap);
        uint8_t *copy = malloc(len ? len : 1); /* exact-size buffer for ASan */
        FZ_CHECK(copy);
        if (len) memcpy(copy, dst, len);
        FZ_CHECK(fz_decode_all_paths(t, TSF_ENC_GORILLA, copy, len, n, back, &used) == TSF_OK);
        FZ_CHECK(used == len);
        FZ_CHECK(n == 0 || memcmp(values, back, n * wid) == 0); /* raw bits, NaN payloads included */
        free(copy);
        tsf_codec_close(c);
    }
    free(dst);
    free(values);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = fz_roundtrip_harness(TSF_ENC_GORILLA, data, size);
    fz_compact(data, size);
    return rc;
}
