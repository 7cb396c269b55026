/*
 * meta_index_parse.c - parsing of the index area (tsfile-container-format.md §8.1-§8.8, §9, §11):
 * MetadataIndexNode, TimeseriesMetadata, ChunkMetadata lists, TsFileMetadata (v4 and v3 layouts),
 * TableSchema columns, the bloom filter and the properties map. Every count is checked against the
 * bytes that remain before anything trusts it, so no caller allocates from an unchecked field.
 */
#include "meta_index_parse.h"

#include "fmt_io.h"

#define NODE_ENTRY_MIN 9 /* smallest entry: 1-byte key + i64 offset */

static tsf_status tsf_rd_i64(fmt_rd *r, const char *what, int64_t *v, tsf_error *err)
{
    uint64_t u;
    tsf_status st = tsf_fmt_rd_be64(r, what, &u, err);
    *v = (int64_t)u;
    return st;
}

/* Reads one entry key + offset at r. */
static tsf_status tsf_rd_entry(fmt_rd *r, int version, int device_level, tsf_mip_entry *e, tsf_error *err)
{
    tsf_status st;
    if (device_level) {
        size_t used = 0;
        st = tsf_fmt_parse_device_id(r->p + r->pos, r->len - r->pos, fmt_rd_off(r), version, &e->device, &used,
                                     err);
        if (st) return st;
        r->pos += used;
    } else {
        st = tsf_fmt_rd_varstr(r, "MetadataIndexEntry.name", &e->name, err);
        if (st) return st;
        if (e->name.is_null)
            return tsf_err(err, TSF_ECORRUPT, "MetadataIndexEntry.name at %llu: null", (unsigned long long)fmt_rd_off(r));
    }
    int64_t off;
    st = tsf_rd_i64(r, "MetadataIndexEntry.offset", &off, err);
    if (st) return st;
    e->offset = (uint64_t)off;
    if (off < 0)
        return tsf_err(err, TSF_ECORRUPT, "MetadataIndexEntry.offset at %llu: negative %lld",
                       (unsigned long long)(fmt_rd_off(r) - 8), (long long)off);
    return TSF_OK;
}

tsf_status tsf_mip_parse_node(const uint8_t *p, size_t len, uint64_t base, int version, int device_level,
                              tsf_mip_node *out, size_t *used, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    uint32_t count;
    tsf_status st = tsf_fmt_rd_uvarint(&r, "MetadataIndexNode.childCount", &count, err);
    if (st) return st;
    if (count == 0 || count > fmt_rd_left(&r) / NODE_ENTRY_MIN)
        return tsf_err(err, TSF_ECORRUPT, "MetadataIndexNode at %llu: childCount %u impossible in %zu bytes",
                       (unsigned long long)base, count, fmt_rd_left(&r));
    out->version = version;
    out->device_level = device_level;
    out->count = count;
    out->entries = p + r.pos;
    out->entries_base = fmt_rd_off(&r);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        tsf_mip_entry e;
        uint64_t at = fmt_rd_off(&r);
        if ((st = tsf_rd_entry(&r, version, device_level, &e, err))) return st;
        if (i > 0 && e.offset <= prev)
            return tsf_err(err, TSF_ECORRUPT, "MetadataIndexNode entry %u at %llu: offset %llu not above %llu", i,
                           (unsigned long long)at, (unsigned long long)e.offset, (unsigned long long)prev);
        prev = e.offset;
    }
    out->entries_len = r.pos - (size_t)(out->entries - p);
    int64_t end;
    if ((st = tsf_rd_i64(&r, "MetadataIndexNode.endOffset", &end, err))) return st;
    if (end < 0 || (uint64_t)end <= prev)
        return tsf_err(err, TSF_ECORRUPT, "MetadataIndexNode.endOffset at %llu: %lld not above the last entry %llu",
                       (unsigned long long)(fmt_rd_off(&r) - 8), (long long)end, (unsigned long long)prev);
    out->end_offset = (uint64_t)end;
    if ((st = tsf_fmt_rd_u8(&r, "MetadataIndexNode.nodeType", &out->type, err))) return st;
    int type_dev = out->type == TSF_NODE_INTERNAL_DEVICE || out->type == TSF_NODE_LEAF_DEVICE;
    int type_meas = out->type == TSF_NODE_INTERNAL_MEASUREMENT || out->type == TSF_NODE_LEAF_MEASUREMENT;
    if ((device_level && !type_dev) || (!device_level && !type_meas))
        return tsf_err(err, TSF_ECORRUPT, "MetadataIndexNode.nodeType at %llu: %u where a %s-level node belongs",
                       (unsigned long long)(fmt_rd_off(&r) - 1), out->type, device_level ? "device" : "measurement");
    out->len = r.pos;
    if (used) *used = r.pos;
    return TSF_OK;
}

tsf_status tsf_mip_node_entry(const tsf_mip_node *n, size_t *pos, tsf_mip_entry *out, tsf_error *err)
{
    if (*pos >= n->entries_len) return tsf_err(err, TSF_ENOTFOUND, "no more index entries");
    fmt_rd r = fmt_rd_make(n->entries, n->entries_len, n->entries_base);
    r.pos = *pos;
    tsf_status st = tsf_rd_entry(&r, n->version, n->device_level, out, err);
    if (st) return st;
    *pos = r.pos;
    return TSF_OK;
}

tsf_status tsf_mip_parse_tsm(const uint8_t *p, size_t len, uint64_t base, tsf_mip_tsm *out, size_t *used,
                             tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    uint8_t dt;
    uint32_t list_len;
    /* The type byte is read as the reference reads it: only "low six bits non-zero" (every ChunkMetadata
     * carries statistics) has a meaning; the 0x80/0x40 column-role bits are informational (the device's
     * first series named "" is its time column) and tsf_verify reports values the writer would not use. */
    if ((st = tsf_fmt_rd_u8(&r, "TimeseriesMetadata.type", &out->meta_type, err))) return st;
    if ((st = tsf_fmt_rd_varstr(&r, "TimeseriesMetadata.measurementId", &out->measurement, err))) return st;
    if (out->measurement.is_null)
        return tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata.measurementId at %llu: null", (unsigned long long)base + 1);
    uint64_t at = fmt_rd_off(&r);
    if ((st = tsf_fmt_rd_u8(&r, "TimeseriesMetadata.dataType", &dt, err))) return st;
    if (!tsf_fmt_stats_type_ok(dt))
        return tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata.dataType at %llu: unknown code %u", (unsigned long long)at,
                       dt);
    out->data_type = (tsf_type)dt;
    if ((st = tsf_fmt_rd_uvarint(&r, "TimeseriesMetadata.chunkMetaDataListSize", &list_len, err))) return st;
    size_t su = 0;
    st = tsf_fmt_parse_stats(p + r.pos, len - r.pos, fmt_rd_off(&r), out->data_type, &out->stats, &su, err);
    if (st) return st;
    r.pos += su;
    if (list_len > fmt_rd_left(&r) || list_len < 8)
        return tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata at %llu: chunk metadata list of %u bytes, %zu left",
                       (unsigned long long)base, list_len, fmt_rd_left(&r));
    out->chunks = p + r.pos;
    out->chunks_len = list_len;
    out->chunks_base = fmt_rd_off(&r);
    r.pos += list_len;
    if ((out->meta_type & 0x3f) == 0 && list_len != 8)
        return tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata at %llu: single-chunk series with a %u-byte list",
                       (unsigned long long)base, list_len);
    if (used) *used = r.pos;
    return TSF_OK;
}

tsf_status tsf_mip_next_chunk_meta(const tsf_mip_tsm *t, size_t *pos, uint64_t *chunk_offset, tsf_fmt_stats *stats,
                                   tsf_error *err)
{
    if (*pos >= t->chunks_len) return tsf_err(err, TSF_ENOTFOUND, "no more chunk metadata");
    fmt_rd r = fmt_rd_make(t->chunks, t->chunks_len, t->chunks_base);
    r.pos = *pos;
    int64_t off;
    tsf_status st = tsf_rd_i64(&r, "ChunkMetadata.offsetOfChunkHeader", &off, err);
    if (st) return st;
    if (off < 0)
        return tsf_err(err, TSF_ECORRUPT, "ChunkMetadata.offsetOfChunkHeader at %llu: negative",
                       (unsigned long long)(fmt_rd_off(&r) - 8));
    *chunk_offset = (uint64_t)off;
    if (t->meta_type & 0x3f) {
        size_t su = 0;
        st = tsf_fmt_parse_stats(r.p + r.pos, r.len - r.pos, fmt_rd_off(&r), t->data_type, stats, &su, err);
        if (st) return st;
        r.pos += su;
    } else {
        *stats = t->stats;
    }
    *pos = r.pos;
    return TSF_OK;
}

/* Bloom filter (§9): uvarint byteLength [bytes, uvarint size, uvarint k]. */
static tsf_status tsf_rd_bloom(fmt_rd *r, tsf_mip_file_meta *m, tsf_error *err)
{
    uint32_t n;
    uint64_t at = fmt_rd_off(r);
    tsf_status st = tsf_fmt_rd_uvarint(r, "BloomFilter.byteLength", &n, err);
    if (st) return st;
    if (n == 0) return TSF_OK;
    if (n > fmt_rd_left(r)) return tsf_fmt_truncated(r, "BloomFilter.bits", n, err);
    m->bloom_bits = r->p + r->pos;
    m->bloom_len = n;
    r->pos += n;
    if ((st = tsf_fmt_rd_uvarint(r, "BloomFilter.size", &m->bloom_size, err))) return st;
    if ((st = tsf_fmt_rd_uvarint(r, "BloomFilter.hashFunctionSize", &m->bloom_k, err))) return st;
    if (m->bloom_size == 0 || (uint64_t)n * 8 > (uint64_t)m->bloom_size + 7 || m->bloom_k == 0 || m->bloom_k > 8)
        return tsf_err(err, TSF_ECORRUPT, "BloomFilter at %llu: %u bytes, size %u, %u hash functions inconsistent",
                       (unsigned long long)at, n, m->bloom_size, m->bloom_k);
    return TSF_OK;
}

/* Properties (§8.7): zig-zag count treated as a hint, pairs read until the buffer ends. */
static tsf_status tsf_rd_props(fmt_rd *r, tsf_mip_file_meta *m, tsf_error *err)
{
    uint32_t zz;
    if (fmt_rd_left(r) == 0) return TSF_OK;
    tsf_status st = tsf_fmt_rd_uvarint(r, "TsFileMetadata.properties.count", &zz, err);
    if (st) return st;
    int32_t count = (int32_t)((zz >> 1) ^ (0u - (zz & 1)));
    for (int32_t i = 0; i < count && fmt_rd_left(r) > 0; i++) {
        tsf_fmt_str k, v;
        if ((st = tsf_fmt_rd_varstr(r, "TsFileMetadata.properties.key", &k, err))) return st;
        if ((st = tsf_fmt_rd_varstr(r, "TsFileMetadata.properties.value", &v, err))) return st;
        if (!k.is_null && k.len == 12 && !memcmp(k.data, "encryptLevel", 12) && !v.is_null) {
            if (v.len == 1 && v.data[0] >= '0' && v.data[0] <= '9')
                m->encrypt_level = v.data[0] - '0';
            else
                m->encrypt_level = 99;
        }
    }
    return TSF_OK;
}

static tsf_status skip_schema(fmt_rd *r, tsf_error *err)
{
    uint32_t ncol;
    tsf_status st = tsf_fmt_rd_uvarint(r, "TableSchema.columnCount", &ncol, err);
    if (st) return st;
    if (ncol > fmt_rd_left(r) / 15)
        return tsf_err(err, TSF_ECORRUPT, "TableSchema.columnCount at %llu: %u columns impossible in %zu bytes",
                       (unsigned long long)fmt_rd_off(r), ncol, fmt_rd_left(r));
    for (uint32_t c = 0; c < ncol; c++) {
        tsf_mip_column col;
        size_t p = r->pos;
        tsf_mip_file_meta fm = {0};
        fm.schemas = r->p;
        fm.schemas_len = r->len;
        fm.schemas_base = r->base;
        if ((st = tsf_mip_next_column(&fm, &p, &col, err))) return st;
        r->pos = p;
    }
    return TSF_OK;
}

tsf_status tsf_mip_parse_file_meta(const uint8_t *p, size_t len, uint64_t base, int version,
                                   tsf_mip_file_meta *out, tsf_error *err)
{
    memset(out, 0, sizeof *out);
    out->version = version;
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    int64_t mo;
    if (version == 3) {
        tsf_mip_node root;
        size_t used = 0;
        out->ntables = 1;
        out->tables = p;
        out->tables_base = base;
        if ((st = tsf_mip_parse_node(p, len, base, 3, 1, &root, &used, err))) return st;
        r.pos = used;
        out->tables_len = used;
    } else {
        if ((st = tsf_fmt_rd_uvarint(&r, "TsFileMetadata.tableIndexCount", &out->ntables, err))) return st;
        if (out->ntables > fmt_rd_left(&r) / 12)
            return tsf_err(err, TSF_ECORRUPT, "TsFileMetadata.tableIndexCount at %llu: %u impossible",
                           (unsigned long long)base, out->ntables);
        out->tables = p + r.pos;
        out->tables_base = fmt_rd_off(&r);
        for (uint32_t i = 0; i < out->ntables; i++) {
            tsf_fmt_str name;
            tsf_mip_node node;
            size_t used = 0;
            if ((st = tsf_fmt_rd_varstr(&r, "TsFileMetadata.tableName", &name, err))) return st;
            if ((st = tsf_mip_parse_node(p + r.pos, len - r.pos, fmt_rd_off(&r), 4, 1, &node, &used, err))) return st;
            r.pos += used;
        }
        out->tables_len = (size_t)(fmt_rd_off(&r) - out->tables_base);
        if ((st = tsf_fmt_rd_uvarint(&r, "TsFileMetadata.tableSchemaCount", &out->nschemas, err))) return st;
        if (out->nschemas > fmt_rd_left(&r))
            return tsf_err(err, TSF_ECORRUPT, "TsFileMetadata.tableSchemaCount at %llu: %u impossible",
                           (unsigned long long)fmt_rd_off(&r), out->nschemas);
        out->schemas = p + r.pos;
        out->schemas_base = fmt_rd_off(&r);
        for (uint32_t i = 0; i < out->nschemas; i++) {
            tsf_fmt_str name;
            if ((st = tsf_fmt_rd_varstr(&r, "TsFileMetadata.schema.tableName", &name, err))) return st;
            if ((st = skip_schema(&r, err))) return st;
        }
        out->schemas_len = (size_t)(fmt_rd_off(&r) - out->schemas_base);
    }
    if ((st = tsf_rd_i64(&r, "TsFileMetadata.metaOffset", &mo, err))) return st;
    if (mo < 7)
        return tsf_err(err, TSF_ECORRUPT, "TsFileMetadata.metaOffset at %llu: %lld before the data area",
                       (unsigned long long)(fmt_rd_off(&r) - 8), (long long)mo);
    out->meta_offset = (uint64_t)mo;
    if (version == 3 && fmt_rd_left(&r) == 0) return TSF_OK;
    if ((st = tsf_rd_bloom(&r, out, err))) return st;
    if (version == 3) return TSF_OK;
    return tsf_rd_props(&r, out, err);
}

tsf_status tsf_mip_next_table(const tsf_mip_file_meta *m, size_t *pos, tsf_fmt_str *name, tsf_mip_node *root,
                              tsf_error *err)
{
    if (*pos >= m->tables_len) return tsf_err(err, TSF_ENOTFOUND, "no more tables");
    fmt_rd r = fmt_rd_make(m->tables, m->tables_len, m->tables_base);
    r.pos = *pos;
    tsf_status st;
    if (m->version == 3) {
        name->data = (const uint8_t *)"";
        name->len = 0;
        name->is_null = 0;
    } else if ((st = tsf_fmt_rd_varstr(&r, "TsFileMetadata.tableName", name, err))) {
        return st;
    }
    size_t used = 0;
    st = tsf_mip_parse_node(r.p + r.pos, r.len - r.pos, fmt_rd_off(&r), m->version, 1, root, &used, err);
    if (st) return st;
    *pos = r.pos + used;
    return TSF_OK;
}

tsf_status tsf_mip_next_schema(const tsf_mip_file_meta *m, size_t *pos, tsf_fmt_str *name, uint32_t *ncolumns,
                               tsf_error *err)
{
    if (*pos >= m->schemas_len) return tsf_err(err, TSF_ENOTFOUND, "no more table schemas");
    fmt_rd r = fmt_rd_make(m->schemas, m->schemas_len, m->schemas_base);
    r.pos = *pos;
    tsf_status st = tsf_fmt_rd_varstr(&r, "TsFileMetadata.schema.tableName", name, err);
    if (st) return st;
    if ((st = tsf_fmt_rd_uvarint(&r, "TableSchema.columnCount", ncolumns, err))) return st;
    if (*ncolumns > fmt_rd_left(&r) / 15)
        return tsf_err(err, TSF_ECORRUPT, "TableSchema.columnCount at %llu: %u impossible", (unsigned long long)fmt_rd_off(&r),
                       *ncolumns);
    *pos = r.pos;
    return TSF_OK;
}

tsf_status tsf_mip_next_column(const tsf_mip_file_meta *m, size_t *pos, tsf_mip_column *col, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(m->schemas, m->schemas_len, m->schemas_base);
    r.pos = *pos;
    tsf_bytes nm;
    uint32_t nprops, cat;
    tsf_status st = tsf_fmt_rd_binary(&r, "MeasurementSchema.columnName", &nm, err);
    if (st) return st;
    col->name = nm.data;
    col->name_len = nm.len;
    if ((st = tsf_fmt_rd_u8(&r, "MeasurementSchema.dataType", &col->data_type, err))) return st;
    if ((st = tsf_fmt_rd_u8(&r, "MeasurementSchema.encoding", &col->encoding, err))) return st;
    if ((st = tsf_fmt_rd_u8(&r, "MeasurementSchema.compression", &col->compression, err))) return st;
    if ((st = tsf_fmt_rd_be32(&r, "MeasurementSchema.propsCount", &nprops, err))) return st;
    if (nprops > fmt_rd_left(&r) / 8)
        return tsf_err(err, TSF_ECORRUPT, "MeasurementSchema.propsCount at %llu: %u impossible",
                       (unsigned long long)(fmt_rd_off(&r) - 4), nprops);
    for (uint32_t i = 0; i < nprops; i++) {
        tsf_bytes k, v;
        if ((st = tsf_fmt_rd_binary(&r, "MeasurementSchema.props.key", &k, err))) return st;
        if ((st = tsf_fmt_rd_binary(&r, "MeasurementSchema.props.value", &v, err))) return st;
    }
    if ((st = tsf_fmt_rd_be32(&r, "TableSchema.columnCategory", &cat, err))) return st;
    col->category = (int32_t)cat;
    *pos = r.pos;
    return TSF_OK;
}
