/*
 * decode_gorilla_fuzzer.c - libFuzzer harness for GORILLA decoding (spec: tsfile-encodings.md): any
 * bytes as a GORILLA page stream of a chosen type and value count, decoded on every codec path, which
 * must agree. Input layout and oracles: fuzz_common.h.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_decode_harness(TSF_ENC_GORILLA, data, size);
}
