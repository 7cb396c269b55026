/*
 * meta_index_parse.h - PARSING of the TsFile index area (spec tsfile-container-format.md §8, §9, §11):
 * TsFileMetadata (v4 table map + schemas + bloom filter + properties; v3 single root + optional
 * bloom), MetadataIndexNode and its device/measurement entries, TimeseriesMetadata and the
 * ChunkMetadata lists, and TableSchema columns. The counterpart of index.h (serialization).
 *
 * Same conventions as format.h: (p, len, base) input where base is the absolute file offset of
 * p[0]; nothing is read outside p[0..len); no allocation; strings borrow from p; TSF_ECORRUPT names
 * the structure, the field and the absolute offset.
 */
#ifndef TSF_FORMAT_META_INDEX_PARSE_H
#define TSF_FORMAT_META_INDEX_PARSE_H

#include "format.h"

/* MetadataIndexNode types (§8.3). */
enum {
    TSF_NODE_INTERNAL_DEVICE = 0,
    TSF_NODE_LEAF_DEVICE = 1,
    TSF_NODE_INTERNAL_MEASUREMENT = 2,
    TSF_NODE_LEAF_MEASUREMENT = 3,
};

/* A parsed node; entries are re-walked with tsf_mip_node_entry. */
typedef struct tsf_mip_node {
    int version;
    int device_level; /* entries are device ids (types 0, 1) rather than names (2, 3) */
    uint32_t count;   /* >= 1 */
    uint8_t type;
    uint64_t end_offset;
    const uint8_t *entries; /* first entry */
    size_t entries_len;
    uint64_t entries_base;
    size_t len; /* bytes of the whole node */
} tsf_mip_node;

/* One entry: `device` for device-level nodes, `name` for measurement-level nodes. */
typedef struct tsf_mip_entry {
    tsf_fmt_device_id device;
    tsf_fmt_str name;
    uint64_t offset;
} tsf_mip_entry;

/*
 * Parses a node whose entries are device ids (device_level = 1) or names (0). Checks the type
 * matches the level, the count is non-zero and plausible, entry offsets ascend and end_offset is
 * above the last one.
 */
tsf_status tsf_mip_parse_node(const uint8_t *p, size_t len, uint64_t base, int version, int device_level,
                              tsf_mip_node *out, size_t *used, tsf_error *err);
/* Entry i is found by walking; *pos starts at 0 and advances. */
tsf_status tsf_mip_node_entry(const tsf_mip_node *n, size_t *pos, tsf_mip_entry *out, tsf_error *err);

/* TimeseriesMetadata (§8.1). */
typedef struct tsf_mip_tsm {
    uint8_t meta_type; /* bit0: several chunks; 0x80 time column; 0x40 value column */
    tsf_fmt_str measurement;
    tsf_type data_type;
    tsf_fmt_stats stats;
    const uint8_t *chunks; /* ChunkMetadata list */
    size_t chunks_len;
    uint64_t chunks_base;
} tsf_mip_tsm;

tsf_status tsf_mip_parse_tsm(const uint8_t *p, size_t len, uint64_t base, tsf_mip_tsm *out, size_t *used,
                             tsf_error *err);
/*
 * Next ChunkMetadata of the list (*pos starts at 0; returns TSF_ENOTFOUND at the end). With a
 * single-chunk list the statistics are the series statistics.
 */
tsf_status tsf_mip_next_chunk_meta(const tsf_mip_tsm *t, size_t *pos, uint64_t *chunk_offset, tsf_fmt_stats *stats,
                                   tsf_error *err);

/* One column of a TableSchema (§8.8). */
typedef struct tsf_mip_column {
    const uint8_t *name;
    size_t name_len;
    uint8_t data_type, encoding, compression;
    int32_t category;
} tsf_mip_column;

/* TsFileMetadata (§8.6), v4 or v3. */
typedef struct tsf_mip_file_meta {
    int version;
    uint32_t ntables; /* table index roots (v3: 1, name "") */
    const uint8_t *tables;
    size_t tables_len;
    uint64_t tables_base;
    uint32_t nschemas;
    const uint8_t *schemas;
    size_t schemas_len;
    uint64_t schemas_base;
    uint64_t meta_offset;
    const uint8_t *bloom_bits; /* NULL when absent or empty */
    size_t bloom_len;
    uint32_t bloom_size, bloom_k;
    int encrypt_level; /* property encryptLevel (0 when absent) */
} tsf_mip_file_meta;

tsf_status tsf_mip_parse_file_meta(const uint8_t *p, size_t len, uint64_t base, int version,
                                   tsf_mip_file_meta *out, tsf_error *err);
/* Next table root: name and node (*pos starts at 0). v3: name "" and the single root. */
tsf_status tsf_mip_next_table(const tsf_mip_file_meta *m, size_t *pos, tsf_fmt_str *name, tsf_mip_node *root,
                              tsf_error *err);
/* Next table schema: name and column count; columns follow via tsf_mip_next_column. */
tsf_status tsf_mip_next_schema(const tsf_mip_file_meta *m, size_t *pos, tsf_fmt_str *name, uint32_t *ncolumns,
                               tsf_error *err);
tsf_status tsf_mip_next_column(const tsf_mip_file_meta *m, size_t *pos, tsf_mip_column *col, tsf_error *err);

#endif
