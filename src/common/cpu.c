/*
 * cpu.c - which SIMD paths this CPU runs. Nothing is cached in globals: handles resolve their
 * path once when they are opened (tsf_path_resolve) and keep it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(TSF_X86)
#include <cpuid.h>
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

unsigned tsf_cpu_features(void)
{
    unsigned f = 0;
#if defined(TSF_X86)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (c & bit_SSE4_1) f |= TSF_CPU_SSE41;
    int movbe = (c & bit_MOVBE) != 0;
    int osxsave = (c & bit_OSXSAVE) != 0;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int ymm = (xcr0 & 0x6) == 0x6;
    int zmm = (xcr0 & 0xe6) == 0xe6;
    /* The AVX2 and AVX-512 paths also run scalar kernels compiled for BMI1/BMI2/LZCNT/MOVBE (e.g. the
     * GORILLA encoder): every such CPU has them, but a hypervisor may hide one, so both paths need all. */
    int lzcnt = 0;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) lzcnt = (c & bit_LZCNT) != 0;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        int bits = movbe && lzcnt && (b & bit_BMI) && (b & bit_BMI2);
        if (ymm && bits && (b & bit_AVX2)) f |= TSF_CPU_AVX2;
        if (b & bit_BMI2) f |= TSF_CPU_BMI2;
        const unsigned need = bit_AVX512F | bit_AVX512BW | bit_AVX512VL | bit_AVX512DQ;
        if (zmm && bits && (b & need) == need) {
            f |= TSF_CPU_AVX512;
            if (c & bit_AVX512VBMI) f |= TSF_CPU_AVX512VBMI;
        }
    }
#endif
    return f;
}

static const char *const PATH_NAMES[] = {"auto", "per_value", "scalar", "sse41", "avx2", "avx512", "neon"};

const char *tsf_codec_path_name(tsf_codec_path p)
{
    if ((unsigned)p < sizeof PATH_NAMES / sizeof PATH_NAMES[0]) return PATH_NAMES[p];
    return "unknown";
}

static tsf_codec_path best_path(unsigned f)
{
    if (f & TSF_CPU_AVX512) return TSF_PATH_AVX512;
    if (f & TSF_CPU_AVX2) return TSF_PATH_AVX2;
    if (f & TSF_CPU_SSE41) return TSF_PATH_SSE41;
    return TSF_PATH_SCALAR;
}

static int path_available(tsf_codec_path p, unsigned f)
{
    switch (p) {
    case TSF_PATH_PER_VALUE:
    case TSF_PATH_SCALAR: return 1;
    case TSF_PATH_SSE41: return (f & TSF_CPU_SSE41) != 0;
    case TSF_PATH_AVX2: return (f & TSF_CPU_AVX2) != 0;
    case TSF_PATH_AVX512: return (f & TSF_CPU_AVX512) != 0;
    default: return 0;
    }
}

tsf_codec_path tsf_path_resolve(tsf_codec_path req)
{
    unsigned f = tsf_cpu_features();
    if (req == TSF_PATH_AUTO) return best_path(f);
    /* degrade a missing SIMD path to the best one below it (NEON has no kernels: SCALAR) */
    while (!path_available(req, f)) {
        if (req == TSF_PATH_AVX512) req = TSF_PATH_AVX2;
        else if (req == TSF_PATH_AVX2) req = TSF_PATH_SSE41;
        else req = TSF_PATH_SCALAR;
    }
    return req;
}
