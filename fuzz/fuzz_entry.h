/*
 * fuzz_entry.h - the entry point every harness defines: libFuzzer calls it once per input, and the
 * standalone replay driver (standalone_driver.c) once per corpus file under ctest.
 */
#ifndef TSF_FUZZ_ENTRY_H
#define TSF_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
