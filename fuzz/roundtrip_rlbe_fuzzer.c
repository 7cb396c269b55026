/*
 * roundtrip_rlbe_fuzzer.c - libFuzzer harness for the RLBE encoder: bytes -> values of a chosen type
 * -> encode on every path (identical bytes) -> decode on every path -> the values again (lossy forms
 * as documented in fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_roundtrip_harness(TSF_ENC_RLBE, data, size);
}
