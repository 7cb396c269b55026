/*
 * ts2diff_wide.c - TS_2DIFF (spec tsfile-encodings.md §3.1) with wider blocks than Java's default
 * 128 deltas. Every block header records its delta count and Java's DeltaBinaryDecoder reads any
 * count (it sizes its buffers from the header; so does our decoder), so a wider block is a legal
 * stream that Java's own encoder writes when built with a larger block size. It saves a header
 * (24 bytes INT64, 16 INT32) per 129 values where the deltas' range stays the same over the wider
 * span: for 2-digit sensor readings stored as DOUBLE TS_2DIFF with a precision (8-bit deltas),
 * 1.19 B/value become 1.00. Selected by tsf_codec.ts2diff_block (AUTO in src/write/auto.c picks it
 * per column only where the sample page is smaller).
 */
#include "ts2diff_wide.h"

#include "../common/bitio.h"
#include "../common/bytes.h"
#include "../common/compiler.h"

/* Delta j of the block, wrapped like Java's long/int arithmetic and sign-extended. */
static inline int64_t wide_delta(const int64_t *v64, const int32_t *v32, int is64, size_t j)
{
    return is64 ? (int64_t)((uint64_t)v64[j] - (uint64_t)v64[j - 1])
                : (int64_t)(int32_t)((uint32_t)v32[j] - (uint32_t)v32[j - 1]);
}

/* One block: values v[0..cnt) (cnt >= 1). */
static uint8_t *wide_block(const void *values, size_t i0, size_t cnt, int is64, uint8_t *o)
{
    const int64_t *v64 = (const int64_t *)values + i0;
    const int32_t *v32 = (const int32_t *)values + i0;
    uint64_t first = is64 ? (uint64_t)v64[0] : (uint64_t)(uint32_t)v32[0];
    /* minDelta: the signed minimum; a single-value block keeps the reset value (MAX), as td_penc */
    int64_t mind = is64 ? INT64_MAX : INT32_MAX;
    for (size_t j = 1; j < cnt; j++) {
        int64_t d = wide_delta(v64, v32, is64, j);
        if (d < mind) mind = d;
    }
    uint64_t mask = is64 ? ~0ull : 0xffffffffull, span = 0;
    for (size_t j = 1; j < cnt; j++)
        span |= ((uint64_t)wide_delta(v64, v32, is64, j) - (uint64_t)mind) & mask;
    unsigned w = span ? 64u - (unsigned)TSF_CLZ64(span) : 0u; /* OR of all: same top bit as the max */
    size_t nd = cnt - 1;
    tsf_store_be32(o, (uint32_t)nd);
    tsf_store_be32(o + 4, w);
    if (is64) {
        tsf_store_be64(o + 8, (uint64_t)mind);
        tsf_store_be64(o + 16, first);
        o += 24;
    } else {
        tsf_store_be32(o + 8, (uint32_t)mind);
        tsf_store_be32(o + 12, (uint32_t)first);
        o += 16;
    }
    if (!w) return o;
    tsf_bitw bw;
    tsf_bitw_init(&bw, o, (nd * w + 7) / 8);
    for (size_t j = 1; j < cnt; j++)
        tsf_bitw_put(&bw, ((uint64_t)wide_delta(v64, v32, is64, j) - (uint64_t)mind) & mask, w);
    return tsf_bitw_flush(&bw);
}

size_t tsf_ts2diff_wide_encode(const void *values, size_t n, int is64, uint32_t block, uint8_t *dst)
{
    if (block < TSF_TS2DIFF_BLOCK_JAVA)
        block = TSF_TS2DIFF_BLOCK_JAVA; /* never more headers: the bound holds */
    if (block > TSF_TS2DIFF_BLOCK_MAX) block = TSF_TS2DIFF_BLOCK_MAX;
    uint8_t *o = dst;
    for (size_t i = 0; i < n; i += (size_t)block + 1) {
        size_t cnt = n - i < (size_t)block + 1 ? n - i : (size_t)block + 1;
        o = wide_block(values, i, cnt, is64, o);
    }
    return (size_t)(o - dst);
}
