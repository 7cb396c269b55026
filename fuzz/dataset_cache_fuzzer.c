/*
 * dataset_cache_fuzzer.c - libFuzzer harness for the parser of the dataset metadata cache
 * (src/read/dataset_cache.c, doc/dataset.md "Metadata cache"). Input: [mode][cache file bytes]; mode bit 0
 * recomputes the trailing CRC-32 first, so mutations reach the entries behind the checksum. Oracles: the
 * parser returns only TSF_OK, TSF_ECORRUPT (with a message) or TSF_ENOMEM, never reads outside the image or
 * allocates by an unchecked count; every entry it accepts fills a summary that encodes back to the entry's
 * bytes exactly (TSF_EINVAL otherwise).
 *
 * Seeds: fuzz/gen_dataset_cache_corpus.c (caches of datasets our writer made).
 */
#include <stdlib.h>
#include <string.h>

#include "read/dataset_internal.h"
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20)) return 0;
    uint8_t *img = malloc(size);
    if (!img) return 0;
    memcpy(img, data + 1, size - 1);
    tsf_error err;
    memset(&err, 0, sizeof err);
    size_t entries = 0;
    tsf_status st = tsf_rd_dsc_check_image(NULL, img, size - 1, data[0] & 1, &entries, &err);
    if (st != TSF_OK && st != TSF_ECORRUPT && st != TSF_ENOMEM) __builtin_trap();
    if (st == TSF_ECORRUPT && !err.message[0]) __builtin_trap();
    free(img);
    return 0;
}
