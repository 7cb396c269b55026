/*
 * data_walk.c - iterate the data area (spec §0, §3-§6): from offset 7, chunk group headers (0x00),
 * chunks (six markers) with their pages, and 0x04 operation-index records, up to the 0x02 separator
 * or, for a truncated file, the end of the bytes. Each page is yielded with its header and the span
 * of its (still compressed) body; nothing is decoded. Every size is checked against the chunk's
 * dataSize and the bytes available, so a damaged file yields TSF_ECORRUPT at a precise offset.
 */
#include "fmt_io.h"

static void walker_reset(tsf_walker *w, const uint8_t *file, size_t len, int version, uint64_t pos)
{
    memset(w, 0, sizeof *w);
    w->file = file;
    w->len = len;
    w->version = version;
    w->pos = pos;
}

tsf_status tsf_walk_init(tsf_walker *w, const uint8_t *file, size_t len, tsf_error *err)
{
    int version = 0;
    walker_reset(w, file, len, 4, 0);
    tsf_status st = tsf_fmt_parse_head(file, len, &version, err);
    if (st) {
        w->done = -1;
        return st;
    }
    walker_reset(w, file, len, version, TSF_FMT_HEAD_LEN);
    if (len > TSF_FMT_HEAD_LEN && file[TSF_FMT_HEAD_LEN] == TSF_MARKER_ENCRYPTION_HEADER) {
        w->done = -1;
        return tsf_err(err, TSF_ENOTSUP, "data area at offset 7: encryption header (0x06) is not supported");
    }
    return TSF_OK;
}

void tsf_walk_init_at(tsf_walker *w, const uint8_t *file, size_t len, int version, uint64_t pos)
{
    walker_reset(w, file, len, version, pos);
    w->in_group = 1;
}

static tsf_status walk_fail(tsf_walker *w, tsf_status st)
{
    w->done = -1;
    return st;
}

/* Next page of the current chunk. */
static tsf_status next_page(tsf_walker *w, tsf_walk_item *it, tsf_error *err)
{
    uint64_t at = w->pos;
    size_t n;
    tsf_status st =
        tsf_fmt_parse_page_header(w->file + at, (size_t)(w->chunk_end - at), at, w->chunk.data_type,
                                  tsf_fmt_chunk_multi_page(w->chunk.marker), &it->page, &n, err);
    if (st) return walk_fail(w, st);
    uint64_t body = at + n;
    /* an uncompressed body is stored as is (§6.2): both sizes must agree */
    if (w->chunk.compression == TSF_UNCOMPRESSED && it->page.compressed_size != it->page.uncompressed_size)
        return walk_fail(w, tsf_err(err, TSF_ECORRUPT,
                                    "page header at offset %llu (chunk at %llu): UNCOMPRESSED page with "
                                    "uncompressedSize %u != compressedSize %u",
                                    (unsigned long long)at, (unsigned long long)w->chunk_offset,
                                    it->page.uncompressed_size, it->page.compressed_size));
    if (it->page.compressed_size > w->chunk_end - body)
        return walk_fail(w,
                         tsf_err(err, TSF_ECORRUPT,
                                 "page header at offset %llu (chunk at %llu): compressedSize %u exceeds the "
                                 "%llu bytes left in the chunk",
                                 (unsigned long long)at, (unsigned long long)w->chunk_offset,
                                 it->page.compressed_size, (unsigned long long)(w->chunk_end - body)));
    it->kind = TSF_WALK_PAGE;
    it->offset = at;
    it->chunk = w->chunk;
    it->chunk_offset = w->chunk_offset;
    it->chunk_index = w->chunk_index;
    it->page_index = w->page_index++;
    it->body = w->file + body;
    it->body_len = it->page.compressed_size;
    it->body_offset = body;
    w->pos = body + it->page.compressed_size;
    if (w->pos == w->chunk_end) w->in_chunk = 0;
    return TSF_OK;
}

tsf_status tsf_walk_next(tsf_walker *w, tsf_walk_item *it, tsf_error *err)
{
    tsf_status st;
    size_t n;
    if (w->done < 0)
        return tsf_err(err, TSF_ECORRUPT, "data area at offset %llu: walk already failed",
                       (unsigned long long)w->pos);
    if (w->done > 0) {
        it->kind = TSF_WALK_END;
        it->offset = w->pos;
        return TSF_OK;
    }
    if (w->in_chunk) return next_page(w, it, err);

    uint64_t at = w->pos;
    if (at >= w->len) { /* data ended at a structure boundary: a truncated (incomplete) file */
        w->done = 1;
        w->truncated = 1;
        it->kind = TSF_WALK_END;
        it->offset = at;
        return TSF_OK;
    }
    const uint8_t *p = w->file + at;
    size_t left = (size_t)(w->len - at);
    uint8_t m = p[0];
    if (m == TSF_MARKER_SEPARATOR) {
        w->done = 1;
        it->kind = TSF_WALK_END;
        it->offset = at;
        return TSF_OK;
    }
    if (m == TSF_MARKER_CHUNK_GROUP_HEADER) {
        if ((st = tsf_fmt_parse_chunk_group_header(p, left, at, w->version, &it->device, &n, err)))
            return walk_fail(w, st);
        it->kind = TSF_WALK_CHUNK_GROUP;
        it->offset = at;
        w->in_group = 1;
        w->chunk_index = 0;
        w->pos = at + n;
        return TSF_OK;
    }
    if (m == TSF_MARKER_OPERATION_INDEX_RANGE) {
        if ((st = tsf_fmt_parse_op_index(p, left, at, &it->op_index, &n, err))) return walk_fail(w, st);
        it->kind = TSF_WALK_OP_INDEX;
        it->offset = at;
        w->pos = at + n;
        return TSF_OK;
    }
    if (!tsf_fmt_is_chunk_marker(m))
        return walk_fail(w, tsf_err(err, TSF_ECORRUPT, "data area at offset %llu: unknown marker 0x%02x",
                                    (unsigned long long)at, m));
    if (!w->in_group)
        return walk_fail(w, tsf_err(err, TSF_ECORRUPT,
                                    "chunk header at offset %llu: no chunk group header before it",
                                    (unsigned long long)at));
    if ((st = tsf_fmt_parse_chunk_header(p, left, at, &w->chunk, &n, err))) return walk_fail(w, st);
    if (w->chunk.data_size > left - n)
        return walk_fail(
            w, tsf_err(err, TSF_ECORRUPT,
                       "chunk header at offset %llu: dataSize %u exceeds the %zu bytes left in the file",
                       (unsigned long long)at, w->chunk.data_size, left - n));
    w->chunk_offset = at;
    w->chunk_end = at + n + w->chunk.data_size;
    w->page_index = 0;
    w->in_chunk = w->chunk.data_size > 0;
    w->pos = at + n;
    it->kind = TSF_WALK_CHUNK;
    it->offset = at;
    it->chunk = w->chunk;
    it->chunk_offset = at;
    it->chunk_index = w->chunk_index++;
    return TSF_OK;
}
