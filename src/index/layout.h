/*
 * layout.h - on-file layout of the learned index (doc/index.md "File format"). Every structure sits at
 * a byte offset (never a pointer); 8-byte aligned words marked "commit" are the atomic commit points.
 */
#ifndef TSF_INDEX_LAYOUT_H
#define TSF_INDEX_LAYOUT_H

#include <stdint.h>
#include <string.h>

#define IX_BLOCK 256u /* leaf block: 16 B header + 15 x 16 B pairs */
#define IX_SLOTS 15u
#define IX_CHUNK 768u /* overflow chunk: 16 B header + 47 x 16 B records */
#define IX_CHUNK_SLOTS 47u
#define IX_SB 256u      /* superblock A at 0, B at 256 */
#define IX_REGION0 512u /* first byte after the superblocks */
#define IX_ROOT_MAX 7u  /* root = 32 B header + 7 slots = 256 B */
#define IX_MAX_HEIGHT 24u
#define IX_NODE_HDR 32u
#define IX_SLOT 32u

/* Superblock (256 B, CRC-32 over bytes [0, 124)). */
#define SB_MAGIC UINT64_C(0x0158444946535401) /* "\x01TSFIDX\x01" little-endian-ish tag */
#define SB_VERSION 1u
enum {
    SB_O_MAGIC = 0,
    SB_O_VERSION = 8,
    SB_O_SIZE = 12,
    SB_O_EPOCH = 16,
    SB_O_MODE = 24,
    SB_O_FLAGS = 28,
    SB_O_LEAF_EPS = 32,
    SB_O_INNER_EPS = 36,
    SB_O_HEIGHT = 40,
    SB_O_ROOT_FANOUT = 44,
    SB_O_ROOT_OFF = 48,
    SB_O_ROOT_ORIGIN = 56,
    SB_O_ROOT_MUL = 64,
    SB_O_LEAF_TABLE = 72,
    SB_O_NLEAVES = 80,
    SB_O_REGION_START = 88,
    SB_O_REGION_END = 96,
    SB_O_NKEYS = 104,
    SB_O_NNODES = 112,
    SB_O_OVF_PCT = 120,
    SB_O_CRC = 124,
};

/* Internal node: 32 B header then `fanout` slots of 32 B (64-byte aligned). */
#define ND_MAGIC 0x314e4454u /* "TDN1" */
enum { ND_O_MAGIC = 0, ND_O_LEVEL = 4, ND_O_FANOUT = 8, ND_O_LO = 16, ND_O_HI = 24 };
/* Slot: the child's model (origin, mul, fanout), kind, child (node offset or leaf id). */
enum { SL_O_ORIGIN = 0, SL_O_MUL = 8, SL_O_FANOUT = 16, SL_O_KIND = 20, SL_O_CHILD = 24 };
#define SL_NODE 0u
#define SL_LEAF 1u

/* Leaf: a 256 B header block, nblocks data blocks, then (at build) its overflow chunks. */
#define LF_MAGIC 0x31464c54u /* "TLF1" */
enum {
    LF_O_MAGIC = 0,
    LF_O_MODE = 4,
    LF_O_ID = 8,
    LF_O_LO = 16,
    LF_O_HI = 24,
    LF_O_ORIGIN = 32,
    LF_O_MUL = 40,
    LF_O_NBASE = 48,
    LF_O_NBLOCKS = 56,
    LF_O_ERRLO = 60,
    LF_O_ERRHI = 64,
    LF_O_CRC = 68,
    LF_O_OVF_HEAD = 128, /* commit word: newest overflow chunk (0 = none) */
};
/* Block header word (commit): bits 0-7 count of used slots (a prefix), bits 8-22 tombstone mask. */
/* Chunk header: word 0 (commit) bits 0-7 count, bits 8-54 tombstone mask; word 1 = older chunk. */

/*
 * Loads and stores of file words: aligned, single-copy atomic (relaxed), so that readers may run while
 * the one writer changes a leaf (they validate with the leaf's seqlock version afterwards).
 */
static inline uint64_t ld64(const uint8_t *p)
{
    return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_RELAXED);
}
static inline uint32_t ld32(const uint8_t *p)
{
    return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_RELAXED);
}
static inline void st64(uint8_t *p, uint64_t v)
{
    __atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELAXED);
}
static inline void st32(uint8_t *p, uint32_t v)
{
    __atomic_store_n((uint32_t *)(void *)p, v, __ATOMIC_RELAXED);
}
/* Unaligned loads/stores of DRAM metadata that is immutable once published (sorted block metadata). */
static inline uint64_t mld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint32_t mld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline void mst64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static inline void mst32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
/* An 8-byte aligned commit store, single-copy atomic. */
static inline void commit64(uint8_t *p, uint64_t v)
{
    __atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELEASE);
}

#endif
