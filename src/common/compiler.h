/* compiler.h - portability macros shared by every module (inline, likely, target attributes). */
#ifndef TSF_COMPILER_H
#define TSF_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define TSF_LIKELY(x) __builtin_expect(!!(x), 1)
#define TSF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TSF_INLINE static inline __attribute__((always_inline))
#define TSF_NOINLINE __attribute__((noinline))
#define TSF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TSF_TARGET(t) __attribute__((target(t)))
#else
#define TSF_LIKELY(x) (x)
#define TSF_UNLIKELY(x) (x)
#define TSF_INLINE static inline
#define TSF_NOINLINE
#define TSF_PRINTF(a, b)
#define TSF_TARGET(t)
#endif

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(TSF_NO_SIMD)
#define TSF_X86 1
#endif
#if (defined(__aarch64__) || defined(_M_ARM64)) && !defined(TSF_NO_SIMD)
#define TSF_ARM64 1
#endif

/* Number of leading / trailing zeros; x must be non-zero. */
#define TSF_CLZ32(x) __builtin_clz(x)
#define TSF_CLZ64(x) __builtin_clzll(x)
#define TSF_CTZ32(x) __builtin_ctz(x)
#define TSF_CTZ64(x) __builtin_ctzll(x)

#endif
