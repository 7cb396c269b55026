/*
 * meta_index.h - serialization of the TsFile INDEX AREA (spec tsfile-container-format.md §8, §9, §2):
 * TimeseriesMetadata runs, MetadataIndexNode trees (measurement and device level), TsFileMetadata
 * with table schemas, the bloom filter, the properties map and the tail. The writer hands over
 * per-series pre-serialized statistics and chunk-metadata lists; this module sorts nothing but
 * what it must (tables, devices, measurements) and lays the bytes out exactly as the Java
 * reference does (TsFileIOWriter.readChunkMetadataAndConstructIndexTree).
 *
 * Also home of a small growable byte buffer (tsf_wbuf) with the container's primitive writers
 * (§1: big-endian ints, uvarint, zig-zag varint, varstr, istr) used by the writer.
 */
#ifndef TSF_FORMAT_META_INDEX_H
#define TSF_FORMAT_META_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../common/internal.h"

/* ---- growable output buffer ------------------------------------------------------------- */

typedef struct tsf_wbuf {
    uint8_t *p;
    size_t len, cap;
    const tsf_allocator *a;
    int oom; /* sticky: an allocation failed; later puts are no-ops */
} tsf_wbuf;

void tsf_wbuf_init(tsf_wbuf *b, const tsf_allocator *a);
void tsf_wbuf_free(tsf_wbuf *b);
/* Ensures room for `extra` more bytes; returns a pointer to p + len or NULL (oom set). */
uint8_t *tsf_wbuf_reserve(tsf_wbuf *b, size_t extra);
void tsf_wbuf_put(tsf_wbuf *b, const void *src, size_t n);
void tsf_wbuf_u8(tsf_wbuf *b, uint8_t v);
void tsf_wbuf_be32(tsf_wbuf *b, uint32_t v);
void tsf_wbuf_be64(tsf_wbuf *b, uint64_t v);
void tsf_wbuf_uvarint(tsf_wbuf *b, uint32_t v);
void tsf_wbuf_varint(tsf_wbuf *b, int32_t v);            /* zig-zag */
void tsf_wbuf_varstr(tsf_wbuf *b, const char *s, size_t n); /* s NULL = null string (0x01) */
void tsf_wbuf_istr(tsf_wbuf *b, const char *s, size_t n);   /* i32 length + bytes */

/* ---- device ids (§4.1) -------------------------------------------------------------------- */

/* One segment of a v4 device id; data NULL = null segment. */
typedef struct tsf_mi_seg {
    const char *data;
    size_t len;
} tsf_mi_seg;

/* uvarint count + varstr segments (trailing null segments must already be stripped). */
void tsf_mi_put_device(tsf_wbuf *b, const tsf_mi_seg *segs, size_t nsegs);
/* A chunk group header (§4.1): the 0x00 marker, then the device id as tsf_mi_put_device writes it. */
void tsf_fmt_put_chunk_group_header(tsf_wbuf *b, const tsf_mi_seg *segs, size_t nsegs);
/* IDeviceID.compareTo: segment-wise, null first, bytes (UTF-8) order, shorter prefix first. */
int tsf_mi_device_cmp(const tsf_mi_seg *a, size_t na, const tsf_mi_seg *b, size_t nb);
/* Byte-wise comparison of two strings (shorter prefix first). */
int tsf_mi_str_cmp(const char *a, size_t na, const char *b, size_t nb);

/* ---- index input -------------------------------------------------------------------------- */

/* One series of a device, everything pre-serialized by the writer. */
typedef struct tsf_mi_series {
    const char *name; /* "" for the aligned time column */
    size_t name_len;
    uint8_t meta_type;      /* §8.1 type byte: chunk-count bit | 0x80 time | 0x40 value */
    uint8_t data_type;      /* VECTOR for the time column */
    const uint8_t *stats;   /* merged statistics, serialized (§7) */
    size_t stats_len;
    const uint8_t *chunks;  /* ChunkMetadata list, serialized (§8.2) */
    size_t chunks_len;
    uint32_t nchunks;       /* chunk metadata count (bloom filter sizing) */
} tsf_mi_series;

typedef struct tsf_mi_device {
    const tsf_mi_seg *segs; /* segs[0] = table name */
    size_t nsegs;
    tsf_mi_series *series; /* sorted by tsf_meta_index_write */
    size_t nseries;
} tsf_mi_device;

typedef enum tsf_mi_category { TSF_IX_TAG = 0, TSF_IX_FIELD = 1, TSF_IX_ATTRIBUTE = 2 } tsf_mi_category;

typedef struct tsf_mi_column {
    const char *name;
    uint8_t data_type, encoding, compression;
    int32_t category;
} tsf_mi_column;

typedef struct tsf_mi_table {
    const char *name;
    const tsf_mi_column *columns;
    size_t ncolumns;
} tsf_mi_table;

/* Streams the index bytes out as they are produced. */
typedef tsf_status (*tsf_mi_sink)(void *ud, const uint8_t *data, size_t len, tsf_error *err);

typedef struct tsf_mi_input {
    tsf_mi_device *devices; /* sorted in place by tsf_meta_index_write */
    size_t ndevices;
    const tsf_mi_table *tables; /* schemas, serialized in Java HashMap order */
    size_t ntables;
    uint32_t max_degree;     /* 256 */
    double bloom_error_rate; /* 0.05 */
    const tsf_allocator *alloc;
} tsf_mi_input;

/*
 * Writes everything from the SEPARATOR (at absolute offset meta_offset) to the tail magic:
 * 0x02, TimeseriesMetadata runs, index nodes, TsFileMetadata, metaSize, "TsFile".
 * *end_offset receives the file size after the tail.
 */
tsf_status tsf_meta_index_write(tsf_mi_input *in, uint64_t meta_offset, tsf_mi_sink sink, void *ud,
                           uint64_t *end_offset, tsf_error *err);

/* ---- bloom filter (§9) -------------------------------------------------------------------- */

typedef struct tsf_bloom {
    uint32_t size; /* bits */
    uint32_t k;    /* hash functions */
    uint8_t *bits; /* ceil(size/8) bytes, bit j at byte j/8, LSB first */
    const tsf_allocator *a;
} tsf_bloom;

/* Java getEmptyBloomFilter(errorRate, n). */
tsf_status tsf_bloom_init(tsf_bloom *bf, double error_rate, uint64_t n, const tsf_allocator *a);
void tsf_bloom_free(tsf_bloom *bf);
void tsf_bloom_add(tsf_bloom *bf, const uint8_t *key, size_t len);
int tsf_bloom_may_contain(const tsf_bloom *bf, const uint8_t *key, size_t len);
/* uvarint byteLength (trailing zero bytes dropped) + bytes + uvarint size + uvarint k. */
void tsf_bloom_serialize(const tsf_bloom *bf, tsf_wbuf *b);
/* Java Murmur128Hash.hash(key, seed) as the bloom filter uses it (h1 + h2). */
uint64_t tsf_murmur128_java(const uint8_t *key, size_t len, uint32_t seed);

/* Java HashMap iteration order of n String keys (ASCII/BMP): fills order[0..n). */
void tsf_java_hashmap_order(const char *const *keys, size_t n, size_t *order);

#endif
