/*
 * bloom.c - the TsFileMetadata bloom filter (spec tsfile-container-format.md §9): Java's
 * BloomFilter sizing, its Murmur128Hash variant (sign-extended tail bytes, h1 + h2 truncated to
 * int), the seeds {5,7,11,19,31,37,43,59}, and BitSet.toByteArray serialization (LSB first,
 * trailing zero bytes dropped).
 */
#include <math.h>
#include <string.h>

#include "../common/bytes.h"
#include "meta_index.h"

static const uint32_t SEEDS[8] = {5, 7, 11, 19, 31, 37, 43, 59};

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

uint64_t tsf_murmur128_java(const uint8_t *key, size_t len, uint32_t seed)
{
    const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
    uint64_t h1 = seed, h2 = seed;
    size_t nblocks = len >> 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = tsf_load_le64(key + i * 16), k2 = tsf_load_le64(key + i * 16 + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *t = key + nblocks * 16;
    size_t rem = len & 15;
    uint64_t k1 = 0, k2 = 0;
    /* Java widens signed bytes: (long) key[i] << shift sign-extends bytes >= 0x80. */
#define SB(i) ((uint64_t)(int64_t)(int8_t)t[i])
    for (size_t i = rem; i > 8; i--) k2 ^= SB(i - 1) << (8 * (i - 9));
    if (rem > 8) {
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (size_t i = rem < 8 ? rem : 8; i > 0; i--) k1 ^= SB(i - 1) << (8 * (i - 1));
    if (rem > 0) {
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
#undef SB
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    return h1 + h2;
}

tsf_status tsf_bloom_init(tsf_bloom *bf, double error_rate, uint64_t n, const tsf_allocator *a)
{
    memset(bf, 0, sizeof *bf);
    if (!(error_rate >= 0.01)) error_rate = 0.01; /* also catches NaN */
    if (error_rate > 0.1) error_rate = 0.1;
    double ln2 = log(2.0);
    double sz = -(double)n * log(error_rate) / ln2 / ln2;
    uint64_t size = (sz >= 2147483647.0 ? 2147483647u : (uint64_t)sz) + 1;
    uint32_t k = (uint32_t)(-log(error_rate) / ln2) + 1;
    bf->size = size < 256 ? 256 : (uint32_t)(size > 0x7fffffffu ? 0x7fffffffu : size);
    bf->k = k > 8 ? 8 : k;
    bf->a = a;
    bf->bits = tsf_calloc(a, ((size_t)bf->size + 7) / 8, 1);
    return bf->bits ? TSF_OK : TSF_ENOMEM;
}

void tsf_bloom_free(tsf_bloom *bf)
{
    if (bf->bits) tsf_free(bf->a, bf->bits, ((size_t)bf->size + 7) / 8);
    bf->bits = NULL;
}

static uint32_t bloom_bit(const tsf_bloom *bf, const uint8_t *key, size_t len, uint32_t seed)
{
    int32_t r = (int32_t)(uint32_t)tsf_murmur128_java(key, len, seed);
    if (r == INT32_MIN) r = 0;
    if (r < 0) r = -r;
    return (uint32_t)r % bf->size;
}

void tsf_bloom_add(tsf_bloom *bf, const uint8_t *key, size_t len)
{
    for (uint32_t i = 0; i < bf->k; i++) {
        uint32_t bit = bloom_bit(bf, key, len, SEEDS[i]);
        bf->bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    }
}

int tsf_bloom_may_contain(const tsf_bloom *bf, const uint8_t *key, size_t len)
{
    for (uint32_t i = 0; i < bf->k; i++) {
        uint32_t bit = bloom_bit(bf, key, len, SEEDS[i]);
        if (!(bf->bits[bit >> 3] & (1u << (bit & 7)))) return 0;
    }
    return 1;
}

void tsf_bloom_serialize(const tsf_bloom *bf, tsf_wbuf *b)
{
    size_t n = ((size_t)bf->size + 7) / 8;
    while (n > 0 && bf->bits[n - 1] == 0) n--;
    tsf_wbuf_uvarint(b, (uint32_t)n);
    if (n == 0) return; /* the empty filter is the single byte 0x00 (empty_no_data.tsfile) */
    tsf_wbuf_put(b, bf->bits, n);
    tsf_wbuf_uvarint(b, bf->size);
    tsf_wbuf_uvarint(b, bf->k);
}
