/*
 * format.h - the low-level on-disk structures of a TsFile (spec: tsfile-container-format.md §0-§7):
 * head/tail, markers, chunk group headers with their device ids, chunk headers, page headers,
 * statistics, aligned page bodies, and a walker over the data area. No I/O: everything works on
 * caller-provided memory.
 *
 * Conventions
 *  - Parse functions take (p, len, base, ..., out, used, err): p[0..len) holds the bytes starting at
 *    absolute file offset `base` (used only in messages). They never read outside p[0..len), never
 *    allocate, and on bad input return TSF_ECORRUPT with a message naming the structure, the field
 *    and the absolute offset. On success *used (if non-NULL) receives the bytes consumed.
 *  - Parsed strings and binaries borrow from p (tsf_fmt_str / tsf_bytes), valid while p is.
 *  - Write functions take (in, dst, cap, written, err) and write only dst[0..cap). If cap is too
 *    small they return TSF_ERANGE with *written = the size needed, so a call with dst NULL and cap 0
 *    sizes a structure (tsf_fmt_stats_size() does exactly that).
 *  - File offsets and sizes are 64-bit.
 */
#ifndef TSF_FORMAT_H
#define TSF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/internal.h"

/* ---- head, tail, markers (§2, §3) ----------------------------------------------------------- */

#define TSF_FMT_MAGIC "TsFile"
#define TSF_FMT_MAGIC_LEN 6
#define TSF_FMT_HEAD_LEN 7  /* magic + version byte */
#define TSF_FMT_TAIL_LEN 10 /* i32 metaSize + magic */
#define TSF_FMT_MIN_COMPLETE 13

enum {
    TSF_MARKER_CHUNK_GROUP_HEADER = 0x00,
    TSF_MARKER_CHUNK_HEADER = 0x01, /* non-aligned, more than one page (pages carry statistics) */
    TSF_MARKER_SEPARATOR = 0x02,    /* end of the data area */
    TSF_MARKER_VERSION = 0x03,      /* v2 only; never accepted */
    TSF_MARKER_OPERATION_INDEX_RANGE = 0x04,
    TSF_MARKER_ONLY_ONE_PAGE_CHUNK_HEADER = 0x05,
    TSF_MARKER_ENCRYPTION_HEADER = 0x06, /* unreleased 2.x snapshot (§21 #5); reported as unsupported */
    TSF_MARKER_TIME_MASK = 0x80,
    TSF_MARKER_VALUE_MASK = 0x40,
    TSF_MARKER_TIME_CHUNK_HEADER = 0x81,
    TSF_MARKER_VALUE_CHUNK_HEADER = 0x41,
    TSF_MARKER_ONLY_ONE_PAGE_TIME_CHUNK_HEADER = 0x85,
    TSF_MARKER_ONLY_ONE_PAGE_VALUE_CHUNK_HEADER = 0x45,
};

/* What a chunk holds, from its marker. */
typedef enum tsf_chunk_kind {
    TSF_CHUNK_NONALIGNED = 0, /* ordinary series: pages hold time + values */
    TSF_CHUNK_TIME = 1,       /* time column of an aligned group */
    TSF_CHUNK_VALUE = 2,      /* value column of an aligned group */
} tsf_chunk_kind;

/* 1 if m is one of the six chunk markers (0x01/0x05 with no mask, the 0x80 mask or the 0x40 mask). */
int tsf_fmt_is_chunk_marker(uint8_t m);
/* Kind of a chunk marker (m must satisfy tsf_fmt_is_chunk_marker). */
tsf_chunk_kind tsf_fmt_chunk_kind(uint8_t m);
/* 1 if the chunk marker announces several pages (base 0x01: page headers carry statistics). */
int tsf_fmt_chunk_multi_page(uint8_t m);
/* The marker for a kind and page count (writer rule §3: base 0x05 when pages <= 1). */
uint8_t tsf_fmt_chunk_marker(tsf_chunk_kind kind, uint64_t pages);

/* Checks "TsFile" + version (3 or 4) at p[0..len); *version receives it. TSF_ENOTSUP for the old
 * 12-byte magic of v1/v2 files or a version above 4, TSF_ECORRUPT for anything else. */
tsf_status tsf_fmt_parse_head(const uint8_t *p, size_t len, int *version, tsf_error *err);
tsf_status tsf_fmt_write_head(int version, uint8_t *dst, size_t cap, size_t *written, tsf_error *err);

/* 1 if the whole file p[0..len) is complete: >= 13 bytes and ends with the magic (§2). */
int tsf_fmt_is_complete(const uint8_t *p, size_t len);

typedef struct tsf_fmt_tail {
    uint32_t meta_size; /* bytes of TsFileMetadata */
    uint64_t meta_pos;  /* file offset of TsFileMetadata = file_size - 10 - meta_size */
} tsf_fmt_tail;

/* Parses the tail of a file of `file_size` bytes whose last `len` bytes (len >= 10) are at p.
 * TSF_ECORRUPT if the magic is missing or metaSize does not fit between the head and the tail. */
tsf_status tsf_fmt_parse_tail(const uint8_t *p, size_t len, uint64_t file_size, tsf_fmt_tail *out,
                              tsf_error *err);
/* Writes i32 metaSize + magic (10 bytes). */
tsf_status tsf_fmt_write_tail(uint32_t meta_size, uint8_t *dst, size_t cap, size_t *written, tsf_error *err);

/* 0x04 record: marker, i64 minPlanIndex, i64 maxPlanIndex (17 bytes). */
typedef struct tsf_fmt_op_index {
    int64_t min_plan_index, max_plan_index;
} tsf_fmt_op_index;

tsf_status tsf_fmt_parse_op_index(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_op_index *out,
                                  size_t *used, tsf_error *err);
tsf_status tsf_fmt_write_op_index(const tsf_fmt_op_index *in, uint8_t *dst, size_t cap, size_t *written,
                                  tsf_error *err);

/* ---- strings and device ids (§1, §4) ------------------------------------------------------- */

/* A borrowed string that may be null (varstr length -1). */
typedef struct tsf_fmt_str {
    const uint8_t *data;
    size_t len;
    int is_null;
} tsf_fmt_str;

/* Segments kept inline in a parsed device id; further ones are found by re-walking `raw`. */
#define TSF_FMT_DEVICE_INLINE 16

/*
 * A device id as stored in a chunk group header or a device index entry.
 * v4 (StringArrayDeviceID): uvarint segment count, then one varstr per segment (null -> 0x01);
 * a stored count of 0 reads as the single segment "" (§4.1). v3 (PlainDeviceID): one varstr with
 * the whole dotted path, kept as a single segment.
 */
typedef struct tsf_fmt_device_id {
    int version;        /* 3 or 4: which layout `raw` uses */
    uint32_t nseg;      /* number of segments (>= 1) */
    const uint8_t *raw; /* the serialized bytes */
    size_t raw_len;
    tsf_fmt_str seg[TSF_FMT_DEVICE_INLINE]; /* the first min(nseg, 16) segments */
} tsf_fmt_device_id;

tsf_status tsf_fmt_parse_device_id(const uint8_t *p, size_t len, uint64_t base, int version,
                                   tsf_fmt_device_id *out, size_t *used, tsf_error *err);
/* Segment i (< nseg). */
tsf_fmt_str tsf_fmt_device_segment(const tsf_fmt_device_id *d, uint32_t i);
/*
 * Writes the v4 layout of the given segments, stripping trailing null segments as the Java writer
 * does (formalize); TSF_EINVAL if every segment is null or nseg is 0. For version 3 exactly one
 * non-null segment (the path) is required.
 */
tsf_status tsf_fmt_write_device_id(const tsf_fmt_str *segs, uint32_t nseg, int version, uint8_t *dst,
                                   size_t cap, size_t *written, tsf_error *err);
/*
 * IDeviceID.toString(): segments joined by "." with null printed as "null" (§4.1). Writes at most
 * cap-1 bytes plus a NUL; returns the full length (snprintf semantics).
 */
size_t tsf_fmt_device_to_string(const tsf_fmt_device_id *d, char *buf, size_t cap);

/* ---- chunk group header and chunk header (§4, §5) ------------------------------------------ */

/* 0x00 marker + device id. */
tsf_status tsf_fmt_parse_chunk_group_header(const uint8_t *p, size_t len, uint64_t base, int version,
                                            tsf_fmt_device_id *out, size_t *used, tsf_error *err);
tsf_status tsf_fmt_write_chunk_group_header(const tsf_fmt_str *segs, uint32_t nseg, int version, uint8_t *dst,
                                            size_t cap, size_t *written, tsf_error *err);

typedef struct tsf_fmt_chunk_header {
    uint8_t marker;          /* one of the six chunk markers */
    tsf_fmt_str measurement; /* never null; "" for an aligned time chunk */
    uint32_t data_size;      /* bytes of all pages (headers + bodies) that follow the header */
    tsf_type data_type;      /* VECTOR for an aligned time chunk */
    tsf_compression compression;
    tsf_encoding encoding;
    size_t header_len; /* bytes of this header */
} tsf_fmt_chunk_header;

/* Parses a chunk header. Codes are range-checked (known data type incl. OBJECT=12 and VECTOR,
 * compression 0..9, encoding 0..17); whether they are supported is for the caller to decide. */
tsf_status tsf_fmt_parse_chunk_header(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_chunk_header *out,
                                      size_t *used, tsf_error *err);
tsf_status tsf_fmt_write_chunk_header(const tsf_fmt_chunk_header *in, uint8_t *dst, size_t cap,
                                      size_t *written, tsf_error *err);

/* ---- statistics (§7) ------------------------------------------------------------------------ */

/* Data type code OBJECT (12) exists only in unreleased 2.x; its statistics are the prefix only. */
#define TSF_FMT_TYPE_OBJECT 12

typedef struct tsf_fmt_stats {
    tsf_type type;  /* selects the suffix layout */
    uint64_t count; /* non-null points (stored as a 32-bit uvarint by Java; a larger count is written as it is) */
    int64_t start_time, end_time;
    union {
        struct {
            uint8_t first, last; /* raw bytes as stored (1 = true) */
            int64_t sum;         /* number of true values */
        } b;                     /* BOOLEAN */
        struct {
            int32_t min, max, first, last;
            int64_t sum;
        } i32; /* INT32, DATE */
        struct {
            int64_t min, max, first, last;
            double sum; /* a double even for INT64 */
        } i64;          /* INT64, TIMESTAMP */
        struct {
            float min, max, first, last;
            double sum;
        } f32; /* FLOAT */
        struct {
            double min, max, first, last, sum;
        } f64; /* DOUBLE */
        struct {
            tsf_bytes first, last, min, max; /* TEXT: first/last only; STRING all four */
        } bin;
    } v;
} tsf_fmt_stats;

/* Empty statistics as the Java writer stores them (count 0, start INT64_MAX, end INT64_MIN, 0s). */
void tsf_fmt_stats_init(tsf_fmt_stats *s, tsf_type type);
/* 1 if `type` has a statistics layout (every data type except 7 UNKNOWN). */
int tsf_fmt_stats_type_ok(int type);
tsf_status tsf_fmt_parse_stats(const uint8_t *p, size_t len, uint64_t base, tsf_type type, tsf_fmt_stats *out,
                               size_t *used, tsf_error *err);
tsf_status tsf_fmt_write_stats(const tsf_fmt_stats *in, uint8_t *dst, size_t cap, size_t *written,
                               tsf_error *err);
/* Serialized size (0 for an unknown type). */
size_t tsf_fmt_stats_size(const tsf_fmt_stats *in);

/* ---- pages (§6) ----------------------------------------------------------------------------- */

typedef struct tsf_fmt_page_header {
    uint32_t uncompressed_size; /* 0: empty page (aligned value chunks), header is the byte 0x00 */
    uint32_t compressed_size;   /* bytes of body that follow the header */
    int has_stats;              /* multi-page chunks only */
    tsf_fmt_stats stats;
    size_t header_len;
} tsf_fmt_page_header;

/*
 * Parses a page header; `with_stats` = tsf_fmt_chunk_multi_page(marker) of its chunk, `type` = the
 * chunk's data type (statistics layout). The body (compressed_size bytes) is not checked here.
 */
tsf_status tsf_fmt_parse_page_header(const uint8_t *p, size_t len, uint64_t base, tsf_type type,
                                     int with_stats, tsf_fmt_page_header *out, size_t *used, tsf_error *err);
/* Bytes of a page header whose sizes are usize/csize and whose statistics take stats_len bytes (0 = a header
 * without statistics); an empty page (usize 0) is 1 byte. */
size_t tsf_fmt_page_header_size(uint32_t usize, uint32_t csize, size_t stats_len);
/* Writes uncompressed/compressed sizes and, if in->has_stats, the statistics; an empty page
 * (uncompressed_size 0) is the single byte 0x00. */
tsf_status tsf_fmt_write_page_header(const tsf_fmt_page_header *in, uint8_t *dst, size_t cap, size_t *written,
                                     tsf_error *err);

/* Non-aligned page body after decompression (§6.3): uvarint timeLen, time bytes, value bytes. */
typedef struct tsf_fmt_nonaligned_page {
    const uint8_t *time;
    size_t time_len;
    const uint8_t *values;
    size_t values_len;
} tsf_fmt_nonaligned_page;

/* `base` = file offset the body is reported at (bodies are decompressed, so this is the page body's
 * position in the file; offsets in messages are relative to the uncompressed body from there). */
tsf_status tsf_fmt_parse_nonaligned_page(const uint8_t *p, size_t len, uint64_t base,
                                         tsf_fmt_nonaligned_page *out, tsf_error *err);
/* Writes the uvarint(time_len) prefix (the caller appends the time and value bytes). */
tsf_status tsf_fmt_write_nonaligned_prefix(size_t time_len, uint8_t *dst, size_t cap, size_t *written,
                                           tsf_error *err);

/*
 * Aligned value page body after decompression (§6.4): i32 rowCount, ceil(rowCount/8) bitmap bytes
 * (row r present iff bitmap[r/8] & (0x80 >> r%8)), then the encoded non-null values.
 * (An aligned time page body is just the encoded timestamps: no structure to parse.)
 */
typedef struct tsf_fmt_value_page {
    uint32_t row_count;
    const uint8_t *bitmap;
    size_t bitmap_len;
    uint32_t present; /* set bits among the first row_count */
    const uint8_t *values;
    size_t values_len;
} tsf_fmt_value_page;

tsf_status tsf_fmt_parse_value_page(const uint8_t *p, size_t len, uint64_t base, tsf_fmt_value_page *out,
                                    tsf_error *err);
/* Writes i32 row_count + the bitmap (bitmap must hold (row_count+7)/8 bytes; bits past row_count
 * are written as given). The caller appends the values. */
tsf_status tsf_fmt_write_value_page_prefix(uint32_t row_count, const uint8_t *bitmap, uint8_t *dst,
                                           size_t cap, size_t *written, tsf_error *err);

static inline int tsf_fmt_bitmap_get(const uint8_t *bitmap, size_t r)
{
    return (bitmap[r >> 3] >> (7 - (r & 7))) & 1;
}
static inline void tsf_fmt_bitmap_set(uint8_t *bitmap, size_t r)
{
    bitmap[r >> 3] |= (uint8_t)(0x80u >> (r & 7));
}
/* Number of set bits among the first n of an MSB-first bitmap. */
uint32_t tsf_fmt_bitmap_count(const uint8_t *bitmap, size_t n);

/* ---- data-area walker (§0, §4-§6) ----------------------------------------------------------- */

typedef enum tsf_walk_kind {
    TSF_WALK_CHUNK_GROUP = 1, /* item.device, item.offset = the 0x00 marker */
    TSF_WALK_CHUNK,           /* item.chunk, item.offset = the chunk marker */
    TSF_WALK_PAGE,            /* item.page + item.body/body_len/body_offset; item.offset = page header */
    TSF_WALK_OP_INDEX,        /* item.op_index */
    TSF_WALK_END,             /* separator reached (item.offset = metaOffset) or, in a truncated file,
                                 the end of the bytes at a structure boundary (walker.truncated = 1) */
} tsf_walk_kind;

typedef struct tsf_walk_item {
    tsf_walk_kind kind;
    uint64_t offset;
    tsf_fmt_device_id device;   /* CHUNK_GROUP */
    tsf_fmt_chunk_header chunk; /* CHUNK, and the enclosing chunk for PAGE */
    uint64_t chunk_offset;      /* CHUNK, PAGE */
    uint32_t chunk_index;       /* CHUNK, PAGE: index of the chunk within its group */
    tsf_fmt_page_header page;   /* PAGE */
    uint32_t page_index;        /* PAGE: index within its chunk */
    const uint8_t *body;        /* PAGE: compressed body (compressed_size bytes), borrowed */
    size_t body_len;
    uint64_t body_offset;
    tsf_fmt_op_index op_index; /* OP_INDEX */
} tsf_walk_item;

/* Walks the data area of a file held in memory, without decoding pages. Plain state, no allocation. */
typedef struct tsf_walker {
    const uint8_t *file; /* the file from offset 0 */
    size_t len;
    int version;
    uint64_t pos; /* offset of the next structure; on error, of the one that failed */
    int in_group; /* a chunk group header has been seen */
    int in_chunk; /* pages of `chunk` remain */
    tsf_fmt_chunk_header chunk;
    uint64_t chunk_offset, chunk_end;
    uint32_t chunk_index, page_index;
    int done;
    int truncated; /* the data ended at a structure boundary before a separator */
} tsf_walker;

/* Starts at offset 7 after checking the head. */
tsf_status tsf_walk_init(tsf_walker *w, const uint8_t *file, size_t len, tsf_error *err);
/* Starts at `pos` (e.g. a chunk offset from the index) of a file with a known version; the walker
 * then behaves as if inside a chunk group. */
void tsf_walk_init_at(tsf_walker *w, const uint8_t *file, size_t len, int version, uint64_t pos);
/* Next item. After TSF_WALK_END every further call returns TSF_WALK_END again; after an error,
 * TSF_ECORRUPT (w->pos stays at the structure that failed). */
tsf_status tsf_walk_next(tsf_walker *w, tsf_walk_item *item, tsf_error *err);

#endif
