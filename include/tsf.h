/*
 * tsf.h - the public API of tsfile-c, a C11 library for the Apache TsFile format.
 *
 * Conventions (see doc/api.md):
 *  - Every fallible function returns a tsf_status (0 = TSF_OK, negative = error) and takes an
 *    optional `tsf_error *err` (may be NULL) that receives a message naming what failed and where.
 *  - Parameter order: the handle a call acts on comes first, then its inputs, then its results
 *    (pointers the call fills), then `err` last. A call that makes a new handle from no other handle
 *    (tsf_codec_open, tsf_writer_open, tsf_reader_open, tsf_index_open, tsf_filter_parse, ...) takes
 *    the address of the result first: `tsf_X_open(&x, ...)`; one made from a parent handle takes it
 *    last, before err (`tsf_query_open(reader, opts, &q, err)`).
 *  - Handles are opaque; options travel in structs whose first field, struct_size, is the size of the
 *    struct the caller was compiled with: fields are only ever added at the end, and a call accepts
 *    any size from its first published version up to its own (a smaller struct gets the defaults for
 *    the fields it lacks; a larger or too small one is TSF_EINVAL).
 *  - This header is the stable API. Switches for tests, benchmarks and comparisons of implementation
 *    choices are declared apart, in tsf_experimental.h, outside any compatibility promise.
 *  - Sizes and offsets are 64-bit (size_t / uint64_t) throughout.
 *  - The library keeps no process-global mutable state and never calls exit() or abort().
 *  - Thread safety: distinct handles may be used from distinct threads; a tsf_codec may be shared
 *    by any number of threads (it is read-only after tsf_codec_open).
 */
#ifndef TSF_H
#define TSF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------------ */

#define TSF_VERSION_MAJOR 0
#define TSF_VERSION_MINOR 1
#define TSF_VERSION_PATCH 0
#define TSF_VERSION_NUMBER (TSF_VERSION_MAJOR * 10000 + TSF_VERSION_MINOR * 100 + TSF_VERSION_PATCH)
#define TSF_VERSION_STRING "0.1.0"

/* The TsFile format version byte this library writes (TsFile 2.x = 4). Readers accept 3 and 4. */
#define TSF_FORMAT_VERSION 4

#if defined(_WIN32) && defined(TSF_SHARED_BUILD)
#define TSF_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TSF_API __attribute__((visibility("default")))
#else
#define TSF_API
#endif

/** Runtime library version, TSF_VERSION_NUMBER of the built library. */
TSF_API unsigned tsf_version_number(void);
/** Runtime library version string, e.g. "0.1.0". Static storage. */
TSF_API const char *tsf_version_string(void);

/* ---- status and errors -------------------------------------------------------------------- */

/** Status codes. Their values never change. */
typedef enum tsf_status {
    TSF_OK = 0,
    TSF_EINVAL = -1,    /**< invalid argument or API misuse (names the argument) */
    TSF_ECORRUPT = -2,  /**< malformed input bytes (names the structure and the offset) */
    TSF_ENOMEM = -3,    /**< allocation failed */
    TSF_EIO = -4,       /**< I/O error from the OS or a user callback */
    TSF_ENOTSUP = -5,   /**< valid but unsupported combination (e.g. encoding for a type) */
    TSF_ERANGE = -6,    /**< a caller buffer is too small, or a value does not fit */
    TSF_ENOTFOUND = -7, /**< lookup found nothing */
    TSF_ESTATE = -8,    /**< handle in the wrong state (closed, already finished) */
} tsf_status;

#define TSF_ERROR_MESSAGE_SIZE 256

/** Receives the detail of a failure. Caller-owned; pass NULL where the detail is not wanted. */
typedef struct tsf_error {
    tsf_status code;
    char message[TSF_ERROR_MESSAGE_SIZE];
} tsf_error;

/** Constant name of a status code ("TSF_ECORRUPT"). Never NULL. */
TSF_API const char *tsf_status_name(tsf_status s);

/* Settings outside the stable API, defined in tsf_experimental.h. */
struct tsf_codec_experimental;
struct tsf_query_experimental;

/* ---- allocator hooks ---------------------------------------------------------------------- */

/** Optional allocator; a NULL hook table (or NULL members) means the C library's malloc family. */
typedef struct tsf_allocator {
    void *(*alloc)(void *ud, size_t size);
    void *(*realloc)(void *ud, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ud, void *ptr, size_t size);
    void *ud;
} tsf_allocator;

/* ---- TsFile enumerations (values are the on-disk codes) ----------------------------------- */

/** Data types. The comment after each names the C representation of one value, as it appears in
 *  value arrays (codecs, tablets, batches); tsf_type_size() gives its size. */
typedef enum tsf_type {
    TSF_BOOLEAN = 0, /* uint8_t 0/1 */
    TSF_INT32 = 1,   /* int32_t */
    TSF_INT64 = 2,   /* int64_t */
    TSF_FLOAT = 3,   /* float */
    TSF_DOUBLE = 4,  /* double */
    TSF_TEXT = 5,    /* tsf_bytes */
    TSF_VECTOR = 6,  /* aligned time chunk marker type; never a value type */
    TSF_TIMESTAMP = 8, /* int64_t */
    TSF_DATE = 9,      /* int32_t yyyyMMdd */
    TSF_BLOB = 10,     /* tsf_bytes */
    TSF_STRING = 11,   /* tsf_bytes */
} tsf_type;

typedef enum tsf_encoding {
    TSF_ENC_PLAIN = 0,
    TSF_ENC_DICTIONARY = 1,
    TSF_ENC_RLE = 2,
    TSF_ENC_DIFF = 3, /* no implementation exists anywhere */
    TSF_ENC_TS_2DIFF = 4,
    TSF_ENC_BITMAP = 5, /* unreachable in 2.x */
    TSF_ENC_GORILLA_V1 = 6,
    TSF_ENC_REGULAR = 7,
    TSF_ENC_GORILLA = 8,
    TSF_ENC_ZIGZAG = 9,
    TSF_ENC_FREQ = 10, /* removed */
    TSF_ENC_CHIMP = 11,
    TSF_ENC_SPRINTZ = 12,
    TSF_ENC_RLBE = 13,
    /* Writer-only, never on disk: the writer picks the smallest legal encoding per column from a sample
     * of its first page (doc/writer.md "AUTO encoding"). Name "AUTO". */
    TSF_ENCODING_AUTO = 0xFE,
} tsf_encoding;

typedef enum tsf_compression {
    TSF_UNCOMPRESSED = 0,
    TSF_SNAPPY = 1,
    TSF_GZIP = 2,
    TSF_LZO = 3, /* legacy; not supported */
    TSF_LZ4 = 7,
    TSF_ZSTD = 8,
    TSF_LZMA2 = 9,
} tsf_compression;

/** "INT64", "TS_2DIFF", "LZ4", ... ; NULL for an unknown code. */
TSF_API const char *tsf_type_name(tsf_type t);
TSF_API const char *tsf_encoding_name(tsf_encoding e);
TSF_API const char *tsf_compression_name(tsf_compression c);
/** Parse a name (case-insensitive); TSF_EINVAL if unknown. */
TSF_API tsf_status tsf_type_parse(const char *name, tsf_type *out);
TSF_API tsf_status tsf_encoding_parse(const char *name, tsf_encoding *out);
TSF_API tsf_status tsf_compression_parse(const char *name, tsf_compression *out);
/** Bytes of one value of the type's C representation in value arrays: 1 (BOOLEAN), 4 (INT32, DATE,
 *  FLOAT), 8 (INT64, TIMESTAMP, DOUBLE), sizeof(tsf_bytes) (TEXT, STRING, BLOB); 0 for TSF_VECTOR
 *  (no values) and for unknown codes. */
TSF_API size_t tsf_type_size(tsf_type t);

/** A borrowed byte string (TEXT, STRING, BLOB values). */
typedef struct tsf_bytes {
    const uint8_t *data;
    size_t len;
} tsf_bytes;

/* ---- value codecs ------------------------------------------------------------------------- */

/**
 * Implementation paths of the codecs, chosen by the `path` field of the codec, reader, writer
 * and index options. AUTO picks the fastest the CPU supports. A path the CPU lacks falls back to
 * the best available below it. Results are identical on every path; the choice only changes speed.
 */
typedef enum tsf_codec_path {
    TSF_PATH_AUTO = 0,
    TSF_PATH_PER_VALUE = 1, /* one value at a time through an iterator (the reference's shape) */
    TSF_PATH_SCALAR = 2,    /* batch, portable C */
    TSF_PATH_SSE41 = 3,
    TSF_PATH_AVX2 = 4,
    TSF_PATH_AVX512 = 5,
    TSF_PATH_NEON = 6,      /* reserved: there are no NEON kernels; a request runs the SCALAR path */
} tsf_codec_path;

TSF_API const char *tsf_codec_path_name(tsf_codec_path p);

typedef struct tsf_codec_options {
    size_t struct_size;        /* sizeof(tsf_codec_options) */
    tsf_codec_path path;       /* TSF_PATH_AUTO */
    int32_t float_precision;   /* digits kept by FLOAT/DOUBLE TS_2DIFF and RLE (max_point_number); 2 */
    const tsf_allocator *allocator; /* NULL = malloc */
    /* GORILLA encoder window choice: 0 = the reference's rule (Java's bytes; default); 1 = per value
       the cheaper of reusing the stored window and opening a new one; 2 = also a lookahead of 4 values
       over 8 candidate windows (smallest, slower). Every setting writes a standard GORILLA stream. */
    int32_t gorilla_compact;
    /* Settings outside the stable API (tsf_experimental.h); NULL = none. Read during tsf_codec_open. */
    const struct tsf_codec_experimental *experimental;
} tsf_codec_options;

/** Fills the defaults. */
TSF_API void tsf_codec_options_init(tsf_codec_options *o);

/** A codec context: the resolved implementation path and settings. Immutable once open. */
typedef struct tsf_codec tsf_codec;

/** Opens a codec context. `opts` may be NULL (defaults). Caller frees with tsf_codec_close(). */
TSF_API tsf_status tsf_codec_open(tsf_codec **out, const tsf_codec_options *opts, tsf_error *err);
/** Frees; NULL is a no-op. */
TSF_API void tsf_codec_close(tsf_codec *c);
/** The path this context actually runs (never AUTO). */
TSF_API tsf_codec_path tsf_codec_get_path(const tsf_codec *c);

/** 1 if `enc` can encode (resp. decode) values of `type`, 0 otherwise. */
TSF_API int tsf_codec_can_encode(tsf_type type, tsf_encoding enc);
TSF_API int tsf_codec_can_decode(tsf_type type, tsf_encoding enc);

/**
 * Upper bound of the encoded size of n values. `var_bytes` is the total payload of TEXT/STRING/BLOB
 * values (sum of lengths; 0 for fixed-width types). Returns 0 for an illegal type/encoding.
 */
TSF_API size_t tsf_codec_encode_bound(tsf_type type, tsf_encoding enc, size_t n, size_t var_bytes);

/**
 * Encodes n values as one page stream (self-contained, flushed as the reference flushes a page).
 * `values` is an array of the type's C representation (see tsf_type). `dst` must hold at least
 * tsf_codec_encode_bound() bytes. On success *written receives the stream length.
 * @return TSF_OK, TSF_ENOTSUP (illegal type/encoding), TSF_ERANGE (dst too small), TSF_ENOMEM.
 */
TSF_API tsf_status tsf_codec_encode(const tsf_codec *c, tsf_type type, tsf_encoding enc, const void *values,
                                    size_t n, uint8_t *dst, size_t cap, size_t *written, tsf_error *err);

/**
 * Decodes exactly n values from the page stream src[0..len) into `values` (n elements of the type's
 * C representation, aligned for that type; no stricter alignment is needed). TEXT/STRING/BLOB values borrow from `src` (valid while src is). If `consumed`
 * is non-NULL it receives the bytes used. Never reads outside src or writes outside values.
 * @return TSF_OK, TSF_ECORRUPT (truncated/garbage; message names encoding and offset),
 *         TSF_ENOTSUP, TSF_ENOMEM.
 */
TSF_API tsf_status tsf_codec_decode(const tsf_codec *c, tsf_type type, tsf_encoding enc, const uint8_t *src,
                                    size_t len, void *values, size_t n, size_t *consumed, tsf_error *err);

/**
 * Counts the values in a page stream without decoding it, where the encoding allows (PLAIN,
 * TS_2DIFF, RLE, ZIGZAG, and the float precision forms); TSF_ENOTSUP for count-less streams
 * (GORILLA, CHIMP, ...).
 */
TSF_API tsf_status tsf_codec_count(tsf_type type, tsf_encoding enc, const uint8_t *src, size_t len, size_t *n,
                                   tsf_error *err);

/* ---- TS_2DIFF block walk (time filtering inside a page) ----------------------------------- */

/** One TS_2DIFF block of an INT64/TIMESTAMP stream. */
typedef struct tsf_ts2diff_block {
    size_t offset;      /* byte offset of the block header in the stream */
    uint32_t count;     /* values in the block (n + 1) */
    uint32_t width;     /* bit width of the packed deltas */
    int64_t min_delta;  /* as stored (meaningless when count == 1) */
    int64_t first;      /* exact first value */
    int64_t bound;      /* exact exclusive upper bound: the next block's first value; for the last
                           block, last value + 1 computed by decoding it (INT64_MAX if it overflows) */
    int64_t bound_conservative; /* an inclusive upper bound taken from the block header alone:
                                   first + n*(min_delta + 2^width - 1), saturated */
    size_t ordinal;     /* index of the block's first value within the page */
} tsf_ts2diff_block;

/**
 * Lists the blocks of a TS_2DIFF INT64 stream without decoding deltas (the last block is decoded
 * to bound it). Writes at most `cap` blocks; *nblocks receives the total count (call with cap 0
 * to size). TSF_ECORRUPT on a malformed stream.
 */
TSF_API tsf_status tsf_ts2diff_blocks(const uint8_t *src, size_t len, tsf_ts2diff_block *blocks, size_t cap,
                                      size_t *nblocks, tsf_error *err);

/* ---- page compression --------------------------------------------------------------------- */

/** 1 if this build can (de)compress `c`. */
TSF_API int tsf_compression_supported(tsf_compression c);
/** Upper bound of the compressed size of n bytes; 0 if unsupported. */
TSF_API size_t tsf_compress_bound(tsf_compression c, size_t n);
/**
 * Compresses src[0..n) into dst (cap >= tsf_compress_bound) with exactly the framing TsFile uses
 * (raw Snappy, gzip member, raw LZ4 block, zstd frame, xz container).
 */
TSF_API tsf_status tsf_compress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                                size_t *written, tsf_error *err);
/**
 * Decompresses src[0..n) into exactly dst_len bytes (the page header's uncompressedSize).
 * TSF_ECORRUPT if the input is malformed or does not produce exactly dst_len bytes.
 */
TSF_API tsf_status tsf_decompress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                                  tsf_error *err);

/**
 * Optional reusable (de)compression state: keeps the zlib, zstd and liblzma contexts between pages
 * instead of creating them per call. Same results as tsf_compress / tsf_decompress. A handle is
 * used by one thread at a time. `alloc` (may be NULL) also serves zlib's and liblzma's allocations.
 * After a failed decompression the content of dst is unspecified.
 */
typedef struct tsf_compressor tsf_compressor;
TSF_API tsf_status tsf_compressor_open(tsf_compressor **out, const tsf_allocator *alloc, tsf_error *err);
/** Frees; NULL is a no-op. */
TSF_API void tsf_compressor_close(tsf_compressor *h);
TSF_API tsf_status tsf_compressor_compress(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                                           uint8_t *dst, size_t cap, size_t *written, tsf_error *err);
TSF_API tsf_status tsf_compressor_decompress(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                                             uint8_t *dst, size_t dst_len, tsf_error *err);

/* ---- writer ---- */

/*
 * Writes TsFile 2.x files (format version 4) readable by the Java reference: tree-model series
 * (non-aligned and aligned devices) and table-model tables. Data arrives in tablets (column
 * batches) or rows; each column is encoded in one pass per page with its statistics. See
 * doc/writer.md.
 */

typedef struct tsf_writer tsf_writer;
typedef struct tsf_tablet tsf_tablet;

/** Column categories of the table model (on-disk codes of TableSchema). */
typedef enum tsf_column_category {
    TSF_COLUMN_TAG = 0,       /* STRING column identifying the device */
    TSF_COLUMN_FIELD = 1,     /* measured values */
    TSF_COLUMN_ATTRIBUTE = 2, /* listed in the schema; values are not stored in TsFile */
} tsf_column_category;

/** A column (table model) or a measurement (tree model). */
typedef struct tsf_column_schema {
    const char *name;
    tsf_type type;
    tsf_encoding encoding;       /* legal for the type (tsf_codec_can_encode), or TSF_ENCODING_AUTO */
    tsf_compression compression;
    tsf_column_category category; /* table model only; ignored for tree series */
} tsf_column_schema;

typedef struct tsf_writer_options {
    size_t struct_size;           /* sizeof(tsf_writer_options) */
    uint32_t page_max_points;     /* seal a page at this many points (rows when aligned); 10000 */
    size_t page_max_bytes;        /* ...or at this estimated page size; 65536 */
    size_t memory_budget;         /* flush all chunk groups when buffered data exceeds it; 32 MiB */
    int in_place;                 /* 1: write <path> directly; 0 (default): a temporary, renamed on close
                                     (tsf_writer_temp_path) */
    int fsync;                    /* 1: fsync the file (and its folder) on close */
    int sort_tablets;             /* 1: sort each tablet by time first (stable; last duplicate wins) */
    tsf_compression time_compression; /* aligned time chunks; LZ4 as the Java global compressor */
    int32_t float_precision;      /* digits kept by FLOAT/DOUBLE TS_2DIFF and RLE; 2 */
    double bloom_error_rate;      /* 0.05 */
    uint32_t max_index_degree;    /* fan-out of the metadata index tree; 256 */
    tsf_codec_path path;          /* codec implementation path; AUTO */
    const tsf_allocator *allocator; /* NULL = malloc */
    uint32_t threads;             /* columns encoded in parallel by this many threads (threads - 1 workers
                                     started at open, joined at close); 0/1 = none. Output bytes do not
                                     depend on it. With > 1, chunk groups are written by a worker while
                                     the next tablets are encoded: the write callback may then be called
                                     from a worker (never two calls at once). */
    int lz4_probe;                /* 1 (default): LZ4 pages whose values two 2 KiB samples show LZ4 cannot
                                     shrink store the values as the block's last literal run (valid LZ4,
                                     no match search, no copy); 0: every page via LZ4_compress_default,
                                     the Java writer's bytes. */
    int32_t gorilla_compact;      /* GORILLA window choice (tsf_codec_options.gorilla_compact): 1 (default)
                                     = by cost (standard streams any GORILLA decoder reads, smaller),
                                     0 = the Java writer's bytes, 2 = by cost + lookahead (slow) */
    int page_index;               /* 1: tsf_writer_close also writes the page-time index <path>.tsfidx
                                     (the bytes tsf_page_index_build_file gives; tsf_writer_open only,
                                     ignored for callbacks) */
    uint32_t flush_interval_ms;   /* also write the buffered chunk groups once this many milliseconds have
                                     passed since the last flush (checked as tablets and rows are written),
                                     so a crash loses at most that much; 0 (default) = by memory_budget
                                     only, and the bytes written do not depend on timing. Every automatic
                                     flush hands its chunk groups to the OS (or callback) at once. */
} tsf_writer_options;

/** Fills the defaults. */
TSF_API void tsf_writer_options_init(tsf_writer_options *o);

/** User output: `write` must take all `len` bytes (return 0) or fail (non-zero -> TSF_EIO). */
typedef struct tsf_write_callbacks {
    size_t struct_size; /* sizeof(tsf_write_callbacks) */
    int (*write)(void *ud, const void *data, size_t len);
    int (*sync)(void *ud); /* optional; called on close when options.fsync is set */
    void *ud;
} tsf_write_callbacks;

/** Opens a writer on a file path (see in_place). `opts` may be NULL. */
TSF_API tsf_status tsf_writer_open(tsf_writer **out, const char *path, const tsf_writer_options *opts,
                                   tsf_error *err);
/** Opens a writer on user callbacks (the callbacks see the bytes in file order). */
TSF_API tsf_status tsf_writer_open_callbacks(tsf_writer **out, const tsf_write_callbacks *cb,
                                             const tsf_writer_options *opts, tsf_error *err);

/**
 * Registers a non-aligned tree series `device`.`col->name` (device: a dotted path starting with
 * "root", e.g. "root.sg1.d1"). TSF_EINVAL for invalid names, duplicates, or an illegal
 * type/encoding/compression combination.
 */
TSF_API tsf_status tsf_writer_register_series(tsf_writer *w, const char *device, const tsf_column_schema *col,
                                              tsf_error *err);
/** Registers an aligned tree device with its columns (all written in lockstep, nulls allowed). */
TSF_API tsf_status tsf_writer_register_aligned(tsf_writer *w, const char *device, const tsf_column_schema *cols,
                                               size_t ncols, tsf_error *err);
/**
 * Registers a table: TAG columns (STRING, in the order that forms device ids), FIELD columns and
 * ATTRIBUTE columns. Table and column names are stored lower-case.
 */
TSF_API tsf_status tsf_writer_register_table(tsf_writer *w, const char *table, const tsf_column_schema *cols,
                                             size_t ncols, tsf_error *err);

/**
 * Creates a tablet for `target` (a registered tree device path, or a table name) holding up to
 * `capacity` rows of the named columns (`columns` NULL = every column in registration order; for
 * a table every TAG and FIELD column). Cells start null; times must be set for every row.
 */
TSF_API tsf_status tsf_tablet_new(tsf_writer *w, const char *target, const char *const *columns, size_t ncols,
                                  size_t capacity, tsf_tablet **out, tsf_error *err);
TSF_API void tsf_tablet_free(tsf_tablet *t);
/** Clears rows and values (keeps the columns and capacity). */
TSF_API void tsf_tablet_reset(tsf_tablet *t);
TSF_API size_t tsf_tablet_rows(const tsf_tablet *t);
/** Sets the timestamps of rows [0, n) and the row count to n (n <= capacity). */
TSF_API tsf_status tsf_tablet_set_times(tsf_tablet *t, const int64_t *times, size_t n, tsf_error *err);
/**
 * Bulk column setter: rows [0, n) of column `col` from `values` (n elements of the column type's
 * C representation, see tsf_type). `validity` (may be NULL = all present) is a bitmap, bit r at
 * byte r/8, LSB first, 1 = present (the Arrow layout). Fixed-width values are copied; TEXT/STRING/
 * BLOB tsf_bytes are borrowed until the tablet is written or reset.
 */
TSF_API tsf_status tsf_tablet_set_column(tsf_tablet *t, size_t col, const void *values, const uint8_t *validity,
                                         size_t n, tsf_error *err);
/**
 * tsf_tablet_set_column without the copy: fixed-width values (not BOOLEAN) are borrowed and must
 * stay valid and unchanged until the tablet is written, reset or freed (the validity bitmap is
 * copied). A per-value setter on the column copies the borrowed values first. BOOLEAN and
 * TEXT/STRING/BLOB columns behave as tsf_tablet_set_column.
 */
TSF_API tsf_status tsf_tablet_set_column_ref(tsf_tablet *t, size_t col, const void *values,
                                             const uint8_t *validity, size_t n, tsf_error *err);
/** Per-value setters (row < capacity; the row count grows to row + 1). Bytes are copied. */
TSF_API tsf_status tsf_tablet_set_time(tsf_tablet *t, size_t row, int64_t time, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_bool(tsf_tablet *t, size_t row, size_t col, int v, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_int32(tsf_tablet *t, size_t row, size_t col, int32_t v, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_int64(tsf_tablet *t, size_t row, size_t col, int64_t v, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_float(tsf_tablet *t, size_t row, size_t col, float v, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_double(tsf_tablet *t, size_t row, size_t col, double v, tsf_error *err);
TSF_API tsf_status tsf_tablet_set_bytes(tsf_tablet *t, size_t row, size_t col, const void *data, size_t len,
                                        tsf_error *err);
TSF_API tsf_status tsf_tablet_set_null(tsf_tablet *t, size_t row, size_t col, tsf_error *err);

/**
 * Writes the tablet's rows and resets it. Timestamps must strictly increase within a series
 * (a non-aligned series, an aligned device, a table device) across the whole file; otherwise
 * TSF_EINVAL names the device and the row and nothing of this tablet is written (everything
 * accepted earlier stays). With options.sort_tablets the rows are sorted first.
 * A page that its column's explicit encoding cannot give back bit for bit (SPRINTZ, RLBE, FLOAT/
 * DOUBLE TS_2DIFF/RLE beyond float_precision, GORILLA_V1 pages the Java reader misreads) is not
 * stored: the call that sealed it (write, flush or close; with threads, a tablet tail's refusal
 * comes with the next call) returns TSF_EINVAL naming the series, the value and the encoding, after
 * finishing its work; the writer stays usable (doc/writer.md "Values an encoding cannot store").
 */
TSF_API tsf_status tsf_writer_write_tablet(tsf_writer *w, tsf_tablet *t, tsf_error *err);

/** One cell of the row API. */
typedef struct tsf_value {
    int is_null;
    union {
        int b;
        int32_t i32;
        int64_t i64;
        float f;
        double d;
        tsf_bytes bytes;
    } v;
} tsf_value;

/**
 * Row API: writes one row of `target` (tree device or table) at `time`: values[i] goes to
 * column `columns[i]` (columns NULL = all columns as in tsf_tablet_new). Goes through the same
 * column path with a batch of one row.
 */
TSF_API tsf_status tsf_writer_write_row(tsf_writer *w, const char *target, int64_t time,
                                        const char *const *columns, const tsf_value *values, size_t n,
                                        tsf_error *err);

/** Writes every buffered chunk group to the output (a completed chunk group survives a crash). */
TSF_API tsf_status tsf_writer_flush(tsf_writer *w, tsf_error *err);
/**
 * Flushes, writes the index and tail, closes the output (renaming the temporary to <path>) and frees
 * the writer. With options.fsync the file is synced before the rename and its folder after it, so a
 * TSF_OK means the data is in <path>. On failure the writer is freed too and the temporary is left
 * for recovery (tsf_writer_temp_path names it; the caller removes it if it does not want it).
 * TSF_EINVAL for a page refused at the last flush: the file is then complete, without that page.
 */
TSF_API tsf_status tsf_writer_close(tsf_writer *w, tsf_error *err);
/** Frees a writer without finishing the file (the temporary stays). NULL is a no-op. */
TSF_API void tsf_writer_abort(tsf_writer *w);
/**
 * The file a tsf_writer_open writer writes until close renames it to <path>: <path>.<pid>.tmp,
 * created exclusively (O_EXCL), so two writers of one path never share it; <path>.<pid>-<n>.tmp when
 * a dead process with the same pid left that name. NULL for in_place and callback writers. Valid
 * until the writer is closed or aborted.
 */
TSF_API const char *tsf_writer_temp_path(const tsf_writer *w);
/** Bytes written to the output so far. */
TSF_API uint64_t tsf_writer_bytes_written(const tsf_writer *w);

/* ---- reader ---- */

/*
 * Reads TsFile files of format version 3 and 4 (tree and table model): metadata, then queries that
 * yield column batches (see doc/reader.md). A tsf_reader is read-only after open and may serve
 * queries from several threads at once; each tsf_query (and tsf_cursor) belongs to one thread.
 * Devices are numbered 0..tsf_reader_device_count()-1 in index order (tables ascending, devices
 * ascending within a table); series of a device 0..nseries-1 in measurement-name order (an
 * aligned device's time column is not listed).
 */

typedef struct tsf_reader tsf_reader;
typedef struct tsf_query tsf_query;
typedef struct tsf_cursor tsf_cursor;

typedef struct tsf_reader_options {
    size_t struct_size;             /* sizeof(tsf_reader_options) */
    tsf_codec_path path;            /* codec implementation path; AUTO */
    const tsf_allocator *allocator; /* NULL = malloc */
    int use_pread; /* tsf_reader_open: 1 = read with pread; 0 = map the file read-only (mmap) where the system
                    * allows, falling back to pread (a mapped file must not shrink while open); -1 (default) =
                    * by use: a reader opened by tsf_reader_open maps its file (queries after the first find
                    * its pages mapped), the readers a dataset opens for one query or its metadata read with
                    * pread (a new mapping's page faults cost more than the copies; doc/reader.md) */
    int page_index; /* tsf_reader_open: 1 (default) = queries use `<path>.tsfidx` when it is there and made for
                     * this file (opened on the first query with a time_min; stale or damaged = ignored);
                     * 0 = never. See tsf_reader_page_index. */
    int checked; /* 1 (default) = queries and aggregates compare every page they decode with the statistics
                  * its header (single-page chunk: its ChunkMetadata) promises, by tsf_verify's rules, and fail
                  * with TSF_ECORRUPT naming the page and what differs; 0 = trust the file. Pages skipped or
                  * answered from statistics are not decoded and so not checked (doc/reader.md "Checked
                  * reads"). tsf_query_options.checked and tsf_agg_options.checked override it per call. */
} tsf_reader_options;

TSF_API void tsf_reader_options_init(tsf_reader_options *o);

/** User input, pread-style: read exactly len bytes at offset (return 0) or fail (non-zero -> TSF_EIO).
 *  Called concurrently when queries run on several threads. */
typedef struct tsf_read_callbacks {
    size_t struct_size; /* sizeof(tsf_read_callbacks) */
    int (*pread)(void *ud, void *buf, size_t len, uint64_t offset);
    uint64_t size;      /* file size in bytes */
    void *ud;
} tsf_read_callbacks;

/** Opens a file: checks head and tail and reads TsFileMetadata; the index is read on first use. */
TSF_API tsf_status tsf_reader_open(tsf_reader **out, const char *path, const tsf_reader_options *opts,
                                   tsf_error *err);
/** Opens a file held in memory (borrowed: data must outlive the reader). */
TSF_API tsf_status tsf_reader_open_memory(tsf_reader **out, const void *data, size_t len,
                                          const tsf_reader_options *opts, tsf_error *err);
TSF_API tsf_status tsf_reader_open_callbacks(tsf_reader **out, const tsf_read_callbacks *cb,
                                             const tsf_reader_options *opts, tsf_error *err);
/** Frees; NULL is a no-op. Every query of the reader must be closed first. */
TSF_API void tsf_reader_close(tsf_reader *r);
/** Format version byte (3 or 4). */
TSF_API int tsf_reader_version(const tsf_reader *r);

/** Loads the index (devices, series, statistics); done implicitly by the calls below. Reports a
 *  damaged index once here instead of through every later call. */
TSF_API tsf_status tsf_reader_load_index(tsf_reader *r, tsf_error *err);

/** A column of a table schema (v4 table model). */
typedef struct tsf_table_column {
    const char *name;
    tsf_type type;
    tsf_encoding encoding;
    tsf_compression compression;
    tsf_column_category category;
} tsf_table_column;

typedef struct tsf_table_info {
    const char *name;
    size_t ncolumns;                 /* 0 for tree-model "tables" (no schema) */
    const tsf_table_column *columns; /* valid while the reader is open */
    size_t first_device, ndevices;   /* the table's devices: [first_device, first_device + ndevices) */
} tsf_table_info;

/** Tables of the index (tree-model files have one per path prefix; v3 files a single ""). */
TSF_API size_t tsf_reader_table_count(tsf_reader *r);
TSF_API tsf_status tsf_reader_table(tsf_reader *r, size_t i, tsf_table_info *out, tsf_error *err);
TSF_API tsf_status tsf_reader_find_table(tsf_reader *r, const char *name, size_t *index, tsf_error *err);

typedef struct tsf_device_info {
    const char *name;     /* IDeviceID.toString(): segments joined by "." (null segment -> "null") */
    size_t table;         /* index of its table */
    size_t nsegments;
    int aligned;          /* 1: aligned (time column + value columns; every table device) */
    size_t nseries;       /* value series (measurements), not counting the time column */
} tsf_device_info;

TSF_API size_t tsf_reader_device_count(tsf_reader *r);
TSF_API tsf_status tsf_reader_device(tsf_reader *r, size_t i, tsf_device_info *out, tsf_error *err);
/** Segment s of device i (NULL data = null segment). */
TSF_API tsf_status tsf_reader_device_segment(tsf_reader *r, size_t i, size_t s, tsf_bytes *out, tsf_error *err);
TSF_API tsf_status tsf_reader_find_device(tsf_reader *r, const char *name, size_t *index, tsf_error *err);

/** Statistics of a series, a chunk or a page (doc/format.md, "Statistics"). Values of TEXT/STRING/BLOB borrow from the reader. */
typedef struct tsf_stats {
    tsf_type type;
    uint64_t count; /* non-null values */
    int64_t start_time, end_time;
    int has_values; /* min/max/first/last/sum meaningful (numeric and BOOLEAN types with count > 0) */
    double min, max, first, last, sum; /* as doubles; INT64 values beyond 2^53 lose precision here */
    int64_t min_i, max_i, first_i, last_i; /* exact integer forms (BOOLEAN, INT32, DATE, INT64, TIMESTAMP) */
    tsf_bytes first_b, last_b, min_b, max_b; /* TEXT (first/last) and STRING (all four) */
    int trusted; /* 0 when the encoding is lossy (FLOAT/DOUBLE TS_2DIFF/RLE/SPRINTZ/RLBE): decode instead */
} tsf_stats;

typedef struct tsf_series_info {
    const char *measurement;
    tsf_type type;
    tsf_encoding encoding;       /* of the first chunk (tsf_reader_series_pages; else -1) */
    tsf_compression compression; /* of the first chunk (tsf_reader_series_pages; else -1) */
    size_t nchunks;
    size_t npages;               /* pages over all chunks (tsf_reader_series_pages; else 0) */
    tsf_stats stats;             /* stats.trusted is final only after tsf_reader_series_pages */
    /* -- tsf_reader_series_pages only (else 0) -- */
    uint64_t disk_bytes;         /* chunk headers + page headers + page bodies as stored in the file */
    uint64_t page_bytes;         /* page bodies as stored (compressed) */
    uint64_t page_bytes_raw;     /* page bodies after decompression (the encoded values) */
} tsf_series_info;

/** Series j of device i, from the index alone (no data-area I/O). */
TSF_API tsf_status tsf_reader_series(tsf_reader *r, size_t device, size_t j, tsf_series_info *out, tsf_error *err);
/** Same, plus encoding, compression, page count and trust, read from every chunk and page header. */
TSF_API tsf_status tsf_reader_series_pages(tsf_reader *r, size_t device, size_t j, tsf_series_info *out,
                                           tsf_error *err);
/** The encodings and compressions the chunks of series j of device i use (bit e of *encodings set for
 *  tsf_encoding e, bit c of *compressions for tsf_compression c; an AUTO writer chooses per chunk), from
 *  every chunk header (no page header is read). Either pointer may be NULL. */
TSF_API tsf_status tsf_reader_series_codecs(tsf_reader *r, size_t device, size_t j, uint64_t *encodings,
                                            uint64_t *compressions, tsf_error *err);
TSF_API tsf_status tsf_reader_find_series(tsf_reader *r, size_t device, const char *measurement, size_t *j,
                                          tsf_error *err);
/** Bloom-filter probe: 0 = certainly absent, 1 = may be present (also when the file has no filter). */
TSF_API int tsf_reader_may_contain(tsf_reader *r, const char *device, const char *measurement);

/** Counters of one query (cumulative). */
typedef struct tsf_query_stats {
    uint64_t chunks_read, chunks_skipped;
    uint64_t pages_read, pages_skipped;
    uint64_t blocks_read, blocks_skipped; /* TS_2DIFF time blocks inside pages that were read */
    uint64_t bytes_read;                  /* file bytes fetched (headers and page bodies) */
    uint64_t bytes_decompressed;          /* uncompressed bytes produced */
    uint64_t rows;                        /* rows returned */
} tsf_query_stats;

typedef struct tsf_query_options {
    size_t struct_size;          /* sizeof(tsf_query_options) */
    const char *table;           /* devices of this table (NULL = every device of the file) */
    const size_t *devices;       /* or an explicit list of device indexes (overrides table) */
    size_t ndevices;
    const char *const *columns;  /* measurement names; NULL = every series of each device */
    size_t ncolumns;
    int64_t time_min, time_max;  /* inclusive range; INT64_MIN / INT64_MAX */
    size_t batch_size;           /* most rows per batch; 4096 */
    const struct tsf_filter *where; /* value predicate (tsf_filter_*); NULL = none. Borrowed: keep it alive
                                     * until tsf_query_close. Rows where it is not TRUE are dropped. */
    unsigned threads;            /* decode chunks on this many threads (0/1 = the calling thread only);
                                  * batches come out in the same order as with one thread. The caller is
                                  * one of them; the threads - 1 others are kept by the reader across
                                  * queries (joined by tsf_reader_close) */
    struct tsf_page_index *page_index; /* page-time index of this reader's file (tsf_page_index_open); NULL =
                                        * none. Borrowed. A partly covered chunk then starts at the page
                                        * holding time_min without walking its page headers; same rows. */
    int use_page_index; /* 1 (default): with page_index NULL, the reader's own index (tsf_reader_page_index);
                         * 0: no page index (page headers walked as without one) */
    int checked; /* -1 (default) = the reader's tsf_reader_options.checked; 1 = compare every decoded page with
                  * its statistics (a partly covered page is then decoded whole: no TS_2DIFF block pruning
                  * inside it); 0 = off */
    /* Settings outside the stable API (tsf_experimental.h); NULL = none. Read during tsf_query_open. */
    const struct tsf_query_experimental *experimental;
} tsf_query_options;

TSF_API void tsf_query_options_init(tsf_query_options *o);

/** One column of a batch. `values` holds nrows elements of the type's C representation (tsf_type);
 *  null cells are zero. `validity`: bit r at byte r/8, LSB first, 1 = present (Arrow layout). A column
 *  the device does not have reads as all null with type TSF_VECTOR. */
typedef struct tsf_column_batch {
    const char *name;
    tsf_type type;
    const void *values;
    const uint8_t *validity;
} tsf_column_batch;

/** Rows of one device in ascending time order; valid until the next tsf_query_next / close. A row
 *  whose columns are all null is still returned for an aligned device (its time exists). Columns come
 *  in the order of tsf_query_options.columns, or, when that is NULL, in the device's series order
 *  (measurement names ascending, as tsf_reader_series numbers them); each carries its name. */
typedef struct tsf_batch {
    size_t device;
    size_t nrows;
    const int64_t *times;
    size_t ncolumns;
    const tsf_column_batch *columns;
} tsf_batch;

TSF_API tsf_status tsf_query_open(tsf_reader *r, const tsf_query_options *opts, tsf_query **out, tsf_error *err);
/** Next batch; *out = NULL at the end. Batches never span pages, so they may hold fewer rows. */
TSF_API tsf_status tsf_query_next(tsf_query *q, const tsf_batch **out, tsf_error *err);
TSF_API void tsf_query_get_stats(const tsf_query *q, tsf_query_stats *out);
TSF_API void tsf_query_close(tsf_query *q);

/** Decode buffers a batch pointed into, taken over from its query (tsf_query_next_owned). */
typedef struct tsf_batch_owned tsf_batch_owned;

/**
 * tsf_query_next, and when the batch's buffers can be taken from the query without a copy, *owned: then
 * b->times and the values of every column that is neither TEXT/STRING/BLOB nor all null stay valid until
 * tsf_batch_owned_free(*owned) - after later calls, tsf_query_close and tsf_reader_close, on any thread -
 * while the validity bitmaps and the rest of *b are valid until the next call as usual; the query decodes
 * its next pages into fresh buffers. *owned = NULL when the batch cannot be taken: rows of its page are
 * still to come (a batch_size below the rows of a page), a TEXT/STRING/BLOB column (values borrow the page's
 * bytes), a filter (rows compacted into the filter's buffers) or threads > 1; *b is then valid until the
 * next call only.
 */
TSF_API tsf_status tsf_query_next_owned(tsf_query *q, const tsf_batch **out, tsf_batch_owned **owned,
                                        tsf_error *err);
/** Frees the buffers; NULL is a no-op. Any thread, in any order with the query and the reader. */
TSF_API void tsf_batch_owned_free(tsf_batch_owned *o);

/* Rows gathered into arrays the caller owns (tsf_query_collect), e.g. the columns of a data frame. */
typedef struct tsf_collect_column {
    tsf_type type;     /* in: the fixed-width type the values array holds (TEXT/STRING/BLOB: TSF_ENOTSUP) */
    void *values;      /* in: room for cap values of that type; a null row holds zero */
    uint8_t *present;  /* in: room for cap bytes; written (1 = value, 0 = null) only for the rows from first_null
                        * on, so that a column without nulls never touches it */
    size_t first_null; /* in/out: SIZE_MAX until a null is met (set it so before the first call); then the first
                        * row of the batch that held it (the caller sets present[0, first_null) to 1) */
} tsf_collect_column;

typedef struct tsf_collect {
    size_t struct_size;          /* sizeof(tsf_collect) */
    size_t cap;                  /* rows every array has room for */
    size_t nrows;                /* in/out: rows filled; the next row goes there */
    int64_t *times;              /* room for cap times */
    void *devices;               /* room for cap device codes of device_width bytes each, or NULL */
    size_t ncolumns;             /* the query's tsf_query_options.ncolumns (columns must be named) */
    tsf_collect_column *columns; /* [ncolumns], in the order of tsf_query_options.columns */
    int done;                    /* out: 1 = the query has no more rows; 0 = the arrays are full (grow them, keeping
                                  * rows [0, nrows), and call again) */
    uint64_t cells_in_place;     /* in/out: cells (times and values) decoded straight into the arrays */
    uint64_t cells_copied;       /* in/out: cells copied or filled in (nulls, absent columns) */
    /* A row's device code: device_codes[tsf_batch.device] (a table the caller makes, e.g. categorical codes of
     * a tag), or with device_codes NULL the device index; stored as a signed integer of device_width bytes
     * (1, 2 or 4; 0 = 4). */
    const int32_t *device_codes; /* [the reader's device count] */
    unsigned device_width;
    int64_t time_min, time_max;  /* in/out: the least and greatest time collected (INT64_MAX / INT64_MIN before) */
} tsf_collect;

/** Zeroes *c and sets struct_size, time_min = INT64_MAX and time_max = INT64_MIN. */
TSF_API void tsf_collect_init(tsf_collect *c);

/**
 * Appends the query's next rows to the caller's arrays, until the query ends or the next batch does not fit
 * (it is then the first one of the next call). A page whose rows all go to the arrays (no time range or
 * filter cutting it, no nulls in the column, room for all of it) is decoded straight into them, with no copy
 * (doc/reader.md "Collecting into arrays"); the other rows are copied. A column of another type than its
 * array's in some device: TSF_ENOTSUP, and the query is then at no defined position (close it). The rows
 * are those tsf_query_next returns.
 */
TSF_API tsf_status tsf_query_collect(tsf_query *q, tsf_collect *c, tsf_error *err);

/* ---- page-time index (doc/reader.md "Page-time index") ---------------------------------------- */
/*
 * An index over page start times -> page locations for one TsFile, kept in a sorted-mode learned index
 * (tsf_index.h) stored next to the file as `<file>.tsfidx`. Built after the fact from a reader; records the
 * file's size and the CRC of its tail so an index of another (or a rewritten) file is not used. Lookups
 * are thread-safe (serialised on the handle).
 */
typedef struct tsf_page_index tsf_page_index;

/** Series number of an aligned device's time column in tsf_page_index_lookup. */
#define TSF_PAGE_INDEX_TIME ((size_t)-1)

/** Where a page is. */
typedef struct tsf_page_loc {
    uint64_t chunk_offset; /* the chunk header of the page */
    uint64_t page_offset;  /* the page header */
    uint32_t page;         /* number of the page in its chunk (0 = first) */
    int late;              /* 1: the page starts before a preceding page of its series ends (out of order) */
    int64_t start_time;    /* the page's start time (aligned value columns: that of their time page) */
} tsf_page_loc;

/** Walks every chunk and page header of r's file and writes the index to path (replaced atomically).
 *  *npages (may be NULL) = pages indexed. TSF_ENOTSUP when the series' time spans do not fit the key
 *  layout (their sum must stay below 2^64). */
TSF_API tsf_status tsf_page_index_build(tsf_reader *r, const char *path, uint64_t *npages, tsf_error *err);
/** Opens the index at path for r's file: TSF_ECORRUPT for a damaged index, TSF_ESTATE for an index of
 *  another file (size, tail CRC or columns differ). r must outlive the index. */
TSF_API tsf_status tsf_page_index_open(tsf_reader *r, const char *path, tsf_page_index **out, tsf_error *err);
/** Opens `<tsfile>.tsfidx` if it exists and matches r's file; *out = NULL (TSF_OK) when it is absent,
 *  stale or damaged. */
TSF_API tsf_status tsf_page_index_open_auto(tsf_reader *r, const char *tsfile, tsf_page_index **out,
                                            tsf_error *err);
TSF_API void tsf_page_index_close(tsf_page_index *p);
/** The page of series (or TSF_PAGE_INDEX_TIME) of device whose start is the last one <= t (floor);
 *  TSF_ENOTFOUND when every page starts after t or the series has none. */
TSF_API tsf_status tsf_page_index_lookup(tsf_page_index *p, size_t device, size_t series, int64_t t,
                                         tsf_page_loc *out, tsf_error *err);
/** Pages indexed and pages that went in as late (overflow) inserts. */
TSF_API void tsf_page_index_info(const tsf_page_index *p, uint64_t *npages, uint64_t *nlate);
/** Opens tsfile (allocator may be NULL), builds `<tsfile>.tsfidx` (tsf_page_index_build) and closes it. */
TSF_API tsf_status tsf_page_index_build_file(const char *tsfile, const tsf_allocator *allocator, uint64_t *npages,
                                             tsf_error *err);
/** The reader's own page-time index (tsf_reader_options.page_index; opened here on first use, owned by the
 *  reader, valid until tsf_reader_close): *out = NULL (TSF_OK) when there is none (not opened by path, option
 *  off, no `<path>.tsfidx`, or one that is stale or damaged). */
TSF_API tsf_status tsf_reader_page_index(tsf_reader *r, tsf_page_index **out, tsf_error *err);
/** One index over the `*.tsfile` files of dir (name order) at path (NULL = `<dir>/dir.tsfidx`): series are
 *  matched by (device, measurement) name across files; a page that starts before the end of an earlier
 *  one of its series (name order, then file order) is late. TSF_ENOTFOUND when dir has no TsFile. */
TSF_API tsf_status tsf_page_index_build_dir(const char *dir, const char *path, uint64_t *npages, tsf_error *err);
/** Opens a directory index (path NULL = `<dir>/dir.tsfidx`): TSF_ECORRUPT when damaged, TSF_ESTATE when a
 *  file of dir it names is missing or changed. Lookups by name (tsf_page_index_lookup_name) only. */
TSF_API tsf_status tsf_page_index_open_dir(tsf_page_index **out, const char *dir, const char *path,
                                           tsf_error *err);
/** Lookup by names (series NULL or "" = an aligned device's time column) in a one-file or directory index:
 *  the page whose start is the last <= t over all files; *file (may be NULL) = its file (0 for one file;
 *  on equal starts the later file). TSF_ENOTFOUND when no page of that series starts at or before t. */
TSF_API tsf_status tsf_page_index_lookup_name(tsf_page_index *p, const char *device, const char *series, int64_t t,
                                              size_t *file, tsf_page_loc *out, tsf_error *err);
/** Files of an index: 1 for a one-file index; name i of a directory index (NULL otherwise). */
TSF_API size_t tsf_page_index_file_count(const tsf_page_index *p);
TSF_API const char *tsf_page_index_file(const tsf_page_index *p, size_t i);

/* ---- value filters ---------------------------------------------------------------------- */
/*
 * A filter is an immutable expression tree over column values: comparisons combined with AND, OR and NOT.
 * Evaluation follows SQL's three-valued logic: a comparison with a null cell is UNKNOWN, NOT UNKNOWN is
 * UNKNOWN, and a query keeps only the rows where the whole filter is TRUE. A column named in a filter need
 * not be among the query's columns (it is read for the filter and not returned). For table-model devices a
 * TAG column compares the device's tag value (tag equality prunes whole devices without reading data).
 * A filter may be shared by concurrent queries.
 */
typedef struct tsf_filter tsf_filter;
typedef enum tsf_cmp { TSF_CMP_EQ, TSF_CMP_NE, TSF_CMP_LT, TSF_CMP_LE, TSF_CMP_GT, TSF_CMP_GE } tsf_cmp;

/** `column op value`. value->v is read as: i64 for integer literals, d for floating literals, b for
 *  booleans, bytes for strings (copied), selected by `literal_type` (TSF_INT64, TSF_DOUBLE, TSF_BOOLEAN,
 *  TSF_STRING); it is converted to the column's type when the query runs (int vs double compare exactly). */
TSF_API tsf_status tsf_filter_cmp(tsf_filter **out, const char *column, tsf_cmp op, tsf_type literal_type,
                                  const tsf_value *value, tsf_error *err);
/** Combinators; they take ownership of their operands (also on failure). */
TSF_API tsf_status tsf_filter_and(tsf_filter **out, tsf_filter *a, tsf_filter *b, tsf_error *err);
TSF_API tsf_status tsf_filter_or(tsf_filter **out, tsf_filter *a, tsf_filter *b, tsf_error *err);
TSF_API tsf_status tsf_filter_not(tsf_filter **out, tsf_filter *a, tsf_error *err);
/** `column IS NULL` (not_null = 0) or `column IS NOT NULL` (not_null = 1): TRUE or FALSE, never UNKNOWN. A
 *  series a device lacks, an ATTRIBUTE column and a null TAG value are null. */
TSF_API tsf_status tsf_filter_is_null(tsf_filter **out, const char *column, int not_null, tsf_error *err);
/** `time op t`: the row's timestamp (in the file's unit) against t; TRUE or FALSE. The time terms of the
 *  filter's top-level AND chain also narrow the query's time range (chunks and pages outside are skipped). */
TSF_API tsf_status tsf_filter_time(tsf_filter **out, tsf_cmp op, int64_t t, tsf_error *err);
/** Parses text such as `temp > 3.5 and (status = 'ok' or not humidity <= 20)`: operators = != <> < <= > >=,
 *  and/or/not (any case), parentheses, numbers, 'single-quoted' strings ('' escapes a quote), true/false,
 *  `column IS NULL`, `column IS NOT NULL`, and `time op integer` (the bare word time, any case, is the
 *  row's timestamp; a column named time is written "time"); a column name is an identifier (letters,
 *  digits, _ . $) or "double-quoted". Errors name the position. */
TSF_API tsf_status tsf_filter_parse(tsf_filter **out, const char *text, tsf_error *err);

typedef struct tsf_filter_parse_options {
    size_t struct_size; /* sizeof(tsf_filter_parse_options) */
    /* Converts a string literal compared with time (`time >= '2024-01-01T00:00:00Z'`) to the file's unit:
     * 0 and *out set, or non-zero when text is not a time (a TSF_EINVAL naming it). NULL: time compares
     * with integers only. */
    int (*parse_time)(void *ctx, const char *text, int64_t *out);
    void *parse_time_ctx;
} tsf_filter_parse_options;

TSF_API void tsf_filter_parse_options_init(tsf_filter_parse_options *o);
/** tsf_filter_parse with options (NULL = defaults). */
TSF_API tsf_status tsf_filter_parse_with(tsf_filter **out, const char *text, const tsf_filter_parse_options *opts,
                                         tsf_error *err);
/** Writes the filter back as text into buf; returns the length it needs. Only needed parentheses are
 *  written (`a = 1 and b = 2 and c = 3`, `a = 1 and (b = 2 or not c = 3)`): text from tsf_filter_parse
 *  formats to text that nests no deeper and parses back to the same filter. */
TSF_API size_t tsf_filter_format(const tsf_filter *f, char *buf, size_t cap);
/** The distinct column names the filter compares (time terms name none), in the order they first appear in its text, into
 *  names[0..cap) (borrowed from f). Returns their number when it is at most cap, else a larger number that is
 *  enough room for them (call again with an array that size). */
TSF_API size_t tsf_filter_columns(const tsf_filter *f, const char **names, size_t cap);
TSF_API void tsf_filter_free(tsf_filter *f);

/* ---- aggregates ---------------------------------------------------------------------------- */
/*
 * count, sum, min, max, first, last of one series over [time_min, time_max], optionally per time window,
 * answered from chunk and page statistics where a whole chunk/page lies inside one window and its statistics
 * are trusted, decoding only the other pages. Results equal those computed from the decoded values (sum in
 * double, accumulated in time order as the statistics are).
 */
typedef struct tsf_agg_options {
    size_t struct_size;         /* sizeof(tsf_agg_options) */
    int64_t time_min, time_max; /* inclusive; INT64_MIN / INT64_MAX */
    int64_t window;             /* 0 = one window over the whole range; else windows of this length */
    int64_t window_origin;      /* windows are [origin + k*window, origin + (k+1)*window); default 0 */
    int force_decode;           /* 1 = decode every page instead of answering from statistics (the same
                                 * results; cross-checks a file's statistics) */
    int checked;                /* -1 (default) = the reader's tsf_reader_options.checked; 1 = every decoded page
                                 * is compared with its statistics; 0 = off */
} tsf_agg_options;

TSF_API void tsf_agg_options_init(tsf_agg_options *o);

typedef struct tsf_agg_window {
    int64_t start, end;         /* [start, end): the window (one window: time_min and time_max + 1 clamped) */
    tsf_stats stats;            /* count, start_time/end_time (first/last time), min/max/first/last/sum as
                                 * tsf_stats documents; has_values = 0 when count == 0 */
} tsf_agg_window;

typedef struct tsf_agg_info {
    uint64_t chunks_from_stats, pages_from_stats; /* units answered from statistics alone */
    uint64_t pages_decoded;                       /* pages that had to be decoded */
    uint64_t points_from_stats, points_decoded;
} tsf_agg_info;

typedef struct tsf_agg_result tsf_agg_result;
/** Aggregates series `series` of device `device`. Windows with no points are omitted. */
TSF_API tsf_status tsf_aggregate(tsf_reader *r, size_t device, size_t series, const tsf_agg_options *opts,
                                 tsf_agg_result **out, tsf_error *err);
TSF_API size_t tsf_agg_result_count(const tsf_agg_result *res);
TSF_API const tsf_agg_window *tsf_agg_result_window(const tsf_agg_result *res, size_t i);
TSF_API void tsf_agg_result_info(const tsf_agg_result *res, tsf_agg_info *out);
TSF_API void tsf_agg_result_free(tsf_agg_result *res);
/** Last point of a series from metadata alone (its statistics' last value and end time) when trusted,
 *  else by decoding its last page. *found = 0 for a series without points. TEXT/STRING/BLOB bytes
 *  borrow from the reader (valid until it closes). */
TSF_API tsf_status tsf_last_value(tsf_reader *r, size_t device, size_t series, int64_t *time, tsf_value *value,
                                  int *found, tsf_error *err);

/* ---- reader pool: open readers kept between queries (doc/reader.md "Reader pool") ----------------- */
/*
 * A pool keeps readers open after their queries (with their loaded index and page directories), keyed
 * by path and reader options and validated by the file's identity (size, mtime and ctime in nanoseconds,
 * inode, device; stat before and after the open) on every acquire: a file changed or replaced under its path
 * is opened afresh, never read through the old reader. A file modified or changed (mtime or ctime) less than 2 s
 * before its open is read but its reader not kept (a later write within the file system's timestamp
 * granularity could go unseen).
 * Readers no query holds are kept up to max_readers, the least recently used closed first. The decode buffers
 * of finished queries stay with the pool (up to 8 sets), and any reader it hands out, of any file, decodes
 * into them; so do a dataset aggregation's tables (tsf_dataset_aggregate through the pool: up to 32 MiB each,
 * 8 at most), for the next aggregation. Thread-safe;
 * acquired readers may be shared by several threads (as any tsf_reader). A dataset uses one through
 * tsf_dataset_options.reader_pool.
 */
typedef struct tsf_reader_pool tsf_reader_pool;

typedef struct tsf_reader_pool_options {
    size_t struct_size; /* sizeof(tsf_reader_pool_options) */
    size_t max_readers; /* readers kept open while no query holds them (default 16; 0 = none kept) */
} tsf_reader_pool_options;

typedef struct tsf_reader_pool_stats {
    size_t struct_size; /* sizeof(tsf_reader_pool_stats), set by the caller */
    uint64_t hits;      /* acquires served by a kept, still valid reader */
    uint64_t misses;    /* acquires that opened a reader */
    uint64_t stale;     /* of misses: a kept reader of the path was dropped because the file changed */
    uint64_t racy;      /* readers not kept: the file was modified or changed less than 2 s before their open */
    uint64_t evicted;   /* kept readers closed to stay within max_readers */
    size_t open;        /* readers open now (held by queries or kept) */
    size_t kept;        /* of open: held by no query */
    size_t max_readers; /* the bound on kept */
} tsf_reader_pool_stats;

TSF_API void tsf_reader_pool_options_init(tsf_reader_pool_options *o);
TSF_API tsf_status tsf_reader_pool_create(tsf_reader_pool **out, const tsf_reader_pool_options *opts,
                                          tsf_error *err);
/** Closes every kept reader and frees the pool; NULL is a no-op. Every acquired reader must be released
 *  first (every dataset query using it closed). */
TSF_API void tsf_reader_pool_free(tsf_reader_pool *p);
/** A reader of path with options opts (NULL = defaults; use_pread -1 reads with pread): a kept one when the
 *  file is unchanged, else a new one. Release it with tsf_reader_pool_release, never tsf_reader_close. */
TSF_API tsf_status tsf_reader_pool_acquire(tsf_reader_pool *p, const char *path, const tsf_reader_options *opts,
                                           tsf_reader **out, tsf_error *err);
TSF_API void tsf_reader_pool_release(tsf_reader_pool *p, tsf_reader *r);
/** Sets max_readers (closing kept readers beyond it). */
TSF_API void tsf_reader_pool_set_max(tsf_reader_pool *p, size_t max_readers);
/** Closes the readers no query holds and frees the pool's spare decode buffers and aggregation tables. */
TSF_API void tsf_reader_pool_clear(tsf_reader_pool *p);
TSF_API tsf_status tsf_reader_pool_get_stats(tsf_reader_pool *p, tsf_reader_pool_stats *out, tsf_error *err);

/* ---- datasets: many files as one (doc/dataset.md) ------------------------------------------- */
/*
 * A dataset is an ordered list of TsFiles read as one: one schema over all files (tree-model series matched
 * by device + measurement, table-model columns by table + column), per-file and per-series time ranges and
 * counts taken from each file's index when the dataset opens, and queries that open only the files that can
 * hold selected rows. A tsf_dataset is read-only after open and may serve queries from several threads;
 * each tsf_dataset_query belongs to one thread.
 */
typedef struct tsf_dataset tsf_dataset;
typedef struct tsf_dataset_query tsf_dataset_query;

typedef struct tsf_dataset_options {
    size_t struct_size;                /* sizeof(tsf_dataset_options) */
    const tsf_reader_options *reader;  /* options of every file's reader (NULL = defaults); its allocator
                                        * also serves the dataset */
    /* Optional source of a file's bytes (e.g. a remote store): fills *cb for path and returns 0, or fails
     * (non-zero -> TSF_EIO). Paths are then not looked up on the file system (no directory or glob
     * expansion). close_source(ctx, cb.ud) is called once per successful open_source. NULL = files. */
    int (*open_source)(void *ctx, const char *path, tsf_read_callbacks *cb);
    void (*close_source)(void *ctx, void *ud);
    void *source_ctx;
    /* Metadata cache (doc/dataset.md "Metadata cache"): a file holding, per file of the dataset, what
     * tsf_dataset_open takes from its tail and index, keyed by path and validated by the file's size, mtime,
     * ctime (nanoseconds), inode and device. A file whose entry matches is not opened; the others are read
     * and their entries refreshed; the cache file is rewritten (temporary file, fsync, rename) when an entry
     * was added, refreshed or dropped (files no longer in the dataset drop out). A cache that is missing,
     * of another version or damaged is ignored (tsf_dataset_get_open_stats says why) and rebuilt; one that cannot
     * be written leaves the open successful. The dataset is the same with or without it. NULL = no cache.
     * Not with open_source (TSF_EINVAL): a source gives no identity to validate an entry with. */
    const char *cache_path;
    int cache_mode; /* TSF_DATASET_CACHE_READ_WRITE (0) or TSF_DATASET_CACHE_READ_ONLY (never written) */
    /* Readers from this pool (borrowed; must outlive the dataset) for the open's metadata reads and for queries,
     * instead of a reader opened and closed per file and query: queries after the first find the files' index
     * and page directories loaded. Not with open_source (TSF_EINVAL). Queries whose files_at_once exceeds
     * threads open their own readers (their reads go through the dataset's scheduling). NULL = none. */
    tsf_reader_pool *reader_pool;
} tsf_dataset_options;

enum { TSF_DATASET_CACHE_READ_WRITE = 0, TSF_DATASET_CACHE_READ_ONLY = 1 };

TSF_API void tsf_dataset_options_init(tsf_dataset_options *o);

/**
 * Opens the dataset of paths[0..n): each a file, a directory (its `*.tsfile` files in strcmp name order) or
 * a glob(3) pattern (characters * ? [; matches in glob's sorted order), the files in that order. Reads each
 * file's tail and index (no data area) and closes it again. TSF_ENOTFOUND for a directory without TsFiles
 * or a pattern that matches nothing; TSF_EINVAL for a file named twice; TSF_ECORRUPT naming both files,
 * the series (or table column) and both types when files disagree on a type (or a column's category).
 */
TSF_API tsf_status tsf_dataset_open(tsf_dataset **out, const char *const *paths, size_t n,
                                    const tsf_dataset_options *opts, tsf_error *err);
/** Frees; NULL is a no-op. Every query of the dataset must be closed first. */
TSF_API void tsf_dataset_close(tsf_dataset *ds);

/* What tsf_dataset_open did with the metadata cache (tsf_dataset_options.cache_path). */
typedef struct tsf_dataset_open_stats {
    size_t struct_size;   /* sizeof(tsf_dataset_open_stats), set by the caller */
    size_t files_cached;  /* files whose metadata came from the cache (not opened) */
    size_t files_read;    /* files whose tail and index were read */
    size_t files_racy;    /* of files_read: modified less than 2 s before the open, so left out of the cache
                           * (a later change within the file system's timestamp granularity could go unseen) */
    int cache_loaded;     /* 1: the cache file was there and parsed (its entries were candidates) */
    int cache_written;    /* 1: this open rewrote the cache file */
    tsf_error cache_load; /* code TSF_OK, or why the cache file was ignored: TSF_ECORRUPT (damaged, naming what
                           * and where; also another version), TSF_EIO (unreadable); a missing file is TSF_OK */
    tsf_error cache_save; /* code TSF_OK, or why the cache file could not be written (TSF_EIO, TSF_ENOMEM) */
} tsf_dataset_open_stats;

/** Fills *out (out->struct_size set) for the open of ds; all zero without a cache. */
TSF_API tsf_status tsf_dataset_get_open_stats(const tsf_dataset *ds, tsf_dataset_open_stats *out, tsf_error *err);
/** The file list tsf_dataset_open would read for paths[0..n) (the same expansion, order and errors), each
 *  file passed to each(ctx, path) without being opened; each returning non-zero stops with TSF_EIO. */
TSF_API tsf_status tsf_dataset_list_files(const char *const *paths, size_t n,
                                          int (*each)(void *ctx, const char *path), void *ctx, tsf_error *err);

typedef struct tsf_dataset_file_info {
    const char *path;
    uint64_t size;              /* bytes */
    int64_t time_min, time_max; /* over its series (INT64_MAX / INT64_MIN when it holds no point) */
    uint64_t points;            /* non-null values over all its series */
    size_t ndevices;            /* devices it holds */
} tsf_dataset_file_info;

typedef struct tsf_dataset_device_info {
    const char *name;           /* as tsf_device_info.name */
    size_t table;               /* index of its table (tsf_dataset_table) */
    int aligned;                /* 1 when aligned in every file that holds it */
    size_t nseries;             /* the union of its series over the files (measurement names ascending) */
    int64_t time_min, time_max; /* over every file (aligned: the time column) */
    size_t nfiles;              /* files that hold it */
    size_t nsegments;           /* segments of its IDeviceID (tsf_dataset_device_segment) */
} tsf_dataset_device_info;

typedef struct tsf_dataset_series_info {
    const char *measurement;
    tsf_type type;
    int64_t time_min, time_max;
    uint64_t count;             /* non-null values */
    size_t nfiles;              /* files that hold it (1 for tsf_dataset_file_series) */
} tsf_dataset_series_info;

TSF_API size_t tsf_dataset_file_count(const tsf_dataset *ds);
TSF_API tsf_status tsf_dataset_file(const tsf_dataset *ds, size_t i, tsf_dataset_file_info *out, tsf_error *err);
/** Tables ascending by name; columns: the union in the order files introduce them (0 for tree model);
 *  devices [first_device, first_device + ndevices) of the dataset's device list. */
TSF_API size_t tsf_dataset_table_count(const tsf_dataset *ds);
TSF_API tsf_status tsf_dataset_table(const tsf_dataset *ds, size_t i, tsf_table_info *out, tsf_error *err);
/** Devices by table, then by name (strcmp). */
TSF_API size_t tsf_dataset_device_count(const tsf_dataset *ds);
TSF_API tsf_status tsf_dataset_device(const tsf_dataset *ds, size_t i, tsf_dataset_device_info *out,
                                      tsf_error *err);
/** Segment s of device i (the table name first, then its tags; NULL data = null segment), as
 *  tsf_reader_device_segment gives it in the files. TSF_ENOTFOUND for s at or past the id's end: trailing
 *  null tags are dropped from device ids, so such a tag is null. */
TSF_API tsf_status tsf_dataset_device_segment(const tsf_dataset *ds, size_t i, size_t s, tsf_bytes *out,
                                              tsf_error *err);
TSF_API tsf_status tsf_dataset_find_device(const tsf_dataset *ds, const char *name, size_t *index, tsf_error *err);
/** Series j of device i over every file. */
TSF_API tsf_status tsf_dataset_series(const tsf_dataset *ds, size_t device, size_t j, tsf_dataset_series_info *out,
                                      tsf_error *err);
/** Series j of device i in file f alone; TSF_ENOTFOUND when that file does not hold it. */
TSF_API tsf_status tsf_dataset_file_series(const tsf_dataset *ds, size_t file, size_t device, size_t j,
                                           tsf_dataset_series_info *out, tsf_error *err);

/* A device as one file holds it: the device's chunk groups in that file. */
typedef struct tsf_dataset_file_device_info {
    size_t device;              /* the dataset's device index (tsf_dataset_device) */
    size_t local;               /* its index in the file's own device list (tsf_reader_device of a reader of
                                 * the file; what tsf_query_options.devices takes) */
    int64_t time_min, time_max; /* in this file, aligned: the time column (INT64_MAX / INT64_MIN: no point) */
    uint64_t points;            /* non-null values of its series in this file */
    size_t nseries;             /* its series the file holds */
} tsf_dataset_file_device_info;

/** Device k (0 .. tsf_dataset_file_info.ndevices - 1) of file f, ascending by dataset device index;
 *  TSF_EINVAL when f or k is out of range. */
TSF_API tsf_status tsf_dataset_file_device(const tsf_dataset *ds, size_t file, size_t k,
                                           tsf_dataset_file_device_info *out, tsf_error *err);

typedef struct tsf_dataset_query_options {
    size_t struct_size;          /* sizeof(tsf_dataset_query_options) */
    const char *table;           /* devices of this table (NULL = every device) */
    const char *const *devices;  /* or devices by name (overrides table); unknown names are TSF_ENOTFOUND */
    size_t ndevices;
    const char *const *columns;  /* as tsf_query_options.columns */
    size_t ncolumns;
    int64_t time_min, time_max;  /* inclusive; INT64_MIN / INT64_MAX */
    size_t batch_size;           /* 4096 */
    const struct tsf_filter *where; /* as tsf_query_options.where; TAG comparisons also skip whole files */
    unsigned threads;            /* files decoded at once (0/1 = the calling thread alone) */
    unsigned files_at_once;      /* files open with reads under way (0 = threads; raised to threads when
                                  * below): with more files than threads, a thread waiting for a read lets
                                  * another file decode */
    int checked;                 /* as tsf_query_options.checked */
} tsf_dataset_query_options;

TSF_API void tsf_dataset_query_options_init(tsf_dataset_query_options *o);

/** A batch of one file's device: rows.device is the device's index in that file (its reader); device the
 *  index in the dataset's device list. Valid until the next tsf_dataset_query_next or close. */
typedef struct tsf_dataset_batch {
    size_t file;
    size_t device;
    const char *device_name;
    tsf_batch rows;
} tsf_dataset_batch;

typedef struct tsf_dataset_query_stats {
    uint64_t files_opened;  /* files whose data a query read */
    uint64_t files_skipped; /* files left closed: no selected device and time range in their metadata */
    tsf_query_stats query;  /* summed over the files */
} tsf_dataset_query_stats;

/** Batches come in file order, then in each file's device order (tsf_query's), whatever threads and
 *  files_at_once are. */
TSF_API tsf_status tsf_dataset_query_open(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                                          tsf_dataset_query **out, tsf_error *err);
/** Next batch; *out = NULL at the end. */
TSF_API tsf_status tsf_dataset_query_next(tsf_dataset_query *q, const tsf_dataset_batch **out, tsf_error *err);
/** Counters so far (complete once tsf_dataset_query_next has returned NULL). */
TSF_API void tsf_dataset_query_get_stats(const tsf_dataset_query *q, tsf_dataset_query_stats *out);
TSF_API void tsf_dataset_query_close(tsf_dataset_query *q);

/**
 * User work on a dataset's batches. Each file gets its own accumulator (init), folded on the thread that
 * decodes the file (fold, batches in query order); the accumulators are merged into the result in file
 * order (merge(into, from), then free(from)), so the result does not depend on threads or files_at_once.
 * Calls on distinct accumulators run concurrently; merges run one at a time. A non-zero return of fold or
 * merge, or NULL from init, ends the run (TSF_EIO, resp. TSF_ENOMEM).
 */
typedef struct tsf_dataset_fold_callbacks {
    size_t struct_size; /* sizeof(tsf_dataset_fold_callbacks) */
    void *(*init)(void *ctx);
    int (*fold)(void *ctx, void *acc, const tsf_dataset_batch *b);
    int (*merge)(void *ctx, void *into, void *from);
    void (*free)(void *ctx, void *acc);
    void *ctx;
} tsf_dataset_fold_callbacks;

/** Runs the query with the fold callbacks: *result = init() with every file's accumulator merged into it in
 *  file order (the caller frees it with cb->free); stats (may be NULL) as tsf_dataset_query_get_stats. */
TSF_API tsf_status tsf_dataset_fold(tsf_dataset *ds, const tsf_dataset_query_options *opts,
                                    const tsf_dataset_fold_callbacks *cb, void **result,
                                    tsf_dataset_query_stats *stats, tsf_error *err);

/* Grouped aggregation over a dataset, on the fold API: per group (a device, or all devices) x tumbling time
 * window x column, count / sum / min / max / mean / first / last (doc/dataset.md). Without a value filter, a
 * whole chunk or page lying in one window and in the query's range is taken from its statistics when they
 * are usable (not a lossy FLOAT/DOUBLE encoding; integers only when the sum is provably exact). */
typedef struct tsf_dataset_agg_options {
    size_t struct_size;    /* sizeof(tsf_dataset_agg_options) */
    int by_device;         /* 1 (default): one group per device; 0: one group over every selected device */
    int64_t window;        /* 0 (default): one window; else windows [origin + k*window, origin + (k+1)*window) */
    int64_t window_origin; /* 0 */
    /* Group by these TAG columns' values instead (overrides by_device): one group per distinct tuple of the
     * device's values of the named columns, a device without such a column (tree model, another table) or
     * with a null value giving null there. Every name must be a TAG column of some table (TSF_ENOTFOUND). */
    const char *const *group_tags;
    size_t ngroup_tags;
    /* 1: decode every value instead of taking whole chunks and pages from their statistics (the same results,
     * bit for bit, for files whose statistics follow the writer's rule; cross-checks them). Default 0. */
    int force_decode;
} tsf_dataset_agg_options;

TSF_API void tsf_dataset_agg_options_init(tsf_dataset_agg_options *o);

typedef struct tsf_dataset_agg_row {
    size_t device;          /* dataset device; (size_t)-1 without by_device */
    int64_t window_start;   /* INT64_MIN with one window */
    const char *column;
    uint64_t count;         /* non-null values */
    /* numeric and BOOLEAN columns (as doubles; 0 for others). sum, min and max follow the rule of the writer's
     * statistics (doc/dataset.md, "The sum rule"): a page part adds the page's values in the window in row
     * order from its first value (min / max replaced only on a strict < / >), a chunk part merges its page parts
     * in order (a merge into nothing copies, else sum += and the same comparisons), a file merges its chunk
     * parts in query order (device, then time), the result merges the files in file order. Whole chunks and
     * pages answered from their statistics therefore give the same bits as decoding them, for every threads /
     * files_at_once. mean = sum / count; first / last by time (equal times: the earlier file's first, the
     * later file's last) */
    double sum, min, max, mean, first, last;
    int64_t first_time, last_time;
    size_t group;           /* the group: the device, 0 over every device, or the tag tuple (group_tags) */
    /* TEXT, STRING and BLOB columns: the least and greatest value, bytes compared as unsigned (a shorter
     * prefix first); data NULL for other columns; valid until the result is freed */
    tsf_bytes min_bytes, max_bytes;
} tsf_dataset_agg_row;

typedef struct tsf_dataset_agg_result tsf_dataset_agg_result;

/** Aggregates the query's rows; rows of the result by group (device; tag tuples ascending, null first),
 *  window start, then column name. */
TSF_API tsf_status tsf_dataset_aggregate(tsf_dataset *ds, const tsf_dataset_query_options *qopts,
                                         const tsf_dataset_agg_options *opts, tsf_dataset_agg_result **out,
                                         tsf_error *err);
TSF_API size_t tsf_dataset_agg_result_count(const tsf_dataset_agg_result *res);
/** Row i (NULL when i is out of range); valid until the result is freed. */
TSF_API const tsf_dataset_agg_row *tsf_dataset_agg_result_row(const tsf_dataset_agg_result *res, size_t i);
TSF_API void tsf_dataset_agg_result_free(tsf_dataset_agg_result *res);
/** With group_tags: the value of group_tags[k] in group `group` (data NULL for a null value); the bytes
 *  belong to the dataset (valid while it is open). Without group_tags or out of range: data NULL. */
TSF_API tsf_bytes tsf_dataset_agg_result_tag(const tsf_dataset_agg_result *res, size_t group, size_t k);

/* Where an aggregation's time went (for benchmarks): the folding threads in the order their first file
 * merged, at most 64 listed. A thread's busy time sums, over the files it folded, the time from the file's
 * start (its accumulator made, before the file opens) to the end of its last fold call: open, read, decode
 * and aggregation. */
typedef struct tsf_dataset_agg_stats {
    size_t struct_size;            /* sizeof(tsf_dataset_agg_stats), set by the caller */
    uint64_t values;               /* row x column cells handed to the fold calls */
    uint64_t fold_ns;              /* time inside the aggregation's fold calls, summed over threads */
    unsigned workers;              /* threads listed below */
    uint64_t worker_busy_ns[64];
    uint64_t worker_fold_ns[64];
    /* how the values were taken: whole chunks and pages (per column) answered from their statistics and their
     * values; chunks and pages (per column) whose values were decoded and folded, and those values */
    uint64_t chunks_from_stats, pages_from_stats, points_from_stats;
    uint64_t chunks_decoded, pages_decoded, points_decoded;
} tsf_dataset_agg_stats;

TSF_API tsf_status tsf_dataset_agg_result_stats(const tsf_dataset_agg_result *res, tsf_dataset_agg_stats *out,
                                                tsf_error *err);

/* ---- verify and recover -------------------------------------------------------------------- */
typedef struct tsf_problem {
    uint64_t offset;     /* file offset of the damaged structure */
    const char *what;    /* message naming the structure and what is wrong */
    int warning;         /* 1: an inconsistency readers tolerate (the data reads the same), not damage */
} tsf_problem;

typedef struct tsf_verify_report {
    uint64_t chunk_groups, chunks, pages, points; /* structures walked (and points decoded) */
    uint64_t problems;
    uint64_t warnings; /* tolerated inconsistencies (tsf_problem.warning), not counted in problems */
} tsf_verify_report;

/** Walks every structure of a file (head, data area, index, bloom filter, tail) and decodes every page,
 *  calling on_problem (may be NULL) for each problem and each warning found. Returns TSF_OK when the file
 *  is sound (warnings alone leave it sound), TSF_ECORRUPT when problems were found (report->problems > 0),
 *  another status for I/O failures. */
TSF_API tsf_status tsf_verify(const char *path, void (*on_problem)(void *ctx, const tsf_problem *p), void *ctx,
                              tsf_verify_report *report, tsf_error *err);

typedef struct tsf_recover_report {
    uint64_t chunk_groups_kept, chunk_groups_dropped;
    uint64_t chunks_kept, chunks_dropped;
    uint64_t points_kept, points_dropped;          /* points of dropped chunks where their headers say */
    uint64_t bytes_kept, bytes_dropped;             /* of the input's data area */
    int had_tail;                                   /* the input was a complete file */
    uint64_t chunks_filled; /* empty value chunks written where an aligned column lacked its chunk in a kept
                             * chunk group (a group cut short, or a dropped chunk): those values read as null */
    uint64_t notes;         /* notes passed to tsf_recover_options.on_note */
} tsf_recover_report;

typedef struct tsf_recover_options {
    size_t struct_size; /* sizeof(tsf_recover_options) */
    /* Called once per note (may be NULL): each names a series or chunk and what recovery did with it: a
     * chunk group the file ends inside (per series whose chunk is missing or cut), a dropped chunk and
     * why, an empty chunk written for an aligned column. tsf_problem.warning is 0. */
    void (*on_note)(void *ctx, const tsf_problem *note);
    void *ctx;
} tsf_recover_options;

TSF_API void tsf_recover_options_init(tsf_recover_options *o);

/** Makes a readable file at out_path from in_path (a crashed file without tail, or a complete file with
 *  damaged chunks): keeps every chunk whose header and pages are wholly present and decode (the last
 *  complete chunk group too, unlike Java), drops the rest, writes index, bloom filter and tail. In an
 *  aligned device every value column keeps one chunk per kept time chunk (an empty one where its chunk is
 *  missing), as readers pair them by position (doc/reader.md, "Aligned chunk lists"). The output is
 *  written to <out_path>.<pid>.tmp (as tsf_writer_temp_path), synced and renamed: out_path is whole or
 *  untouched, and a failure leaves no temporary. */
TSF_API tsf_status tsf_recover(const char *in_path, const char *out_path, tsf_recover_report *report,
                               tsf_error *err);
/** tsf_recover with options (NULL = defaults). */
TSF_API tsf_status tsf_recover_with(const char *in_path, const char *out_path, const tsf_recover_options *opts,
                                    tsf_recover_report *report, tsf_error *err);

/** Row cursor: a thin layer over a query's batches. */
TSF_API tsf_status tsf_cursor_open(tsf_reader *r, const tsf_query_options *opts, tsf_cursor **out, tsf_error *err);
/** Advances to the next row: *has_row = 0 at the end. */
TSF_API tsf_status tsf_cursor_next(tsf_cursor *c, int *has_row, tsf_error *err);
TSF_API int64_t tsf_cursor_time(const tsf_cursor *c);
TSF_API size_t tsf_cursor_device(const tsf_cursor *c);
TSF_API size_t tsf_cursor_column_count(const tsf_cursor *c);
/** Name of column `col` of the current row's batch (the query's column name, see tsf_batch), valid until
 *  the next tsf_cursor_next; NULL without a current row or for col >= tsf_cursor_column_count. */
TSF_API const char *tsf_cursor_column_name(const tsf_cursor *c, size_t col);
/** Cell `col` of the current row (type of the column in *type; v.is_null for null). */
TSF_API tsf_status tsf_cursor_value(const tsf_cursor *c, size_t col, tsf_type *type, tsf_value *v, tsf_error *err);
/** Typed fast accessors for cell `col` of the current row: 1 and *out set when the cell holds a value
 *  of a fitting type, 0 when it is null, out of range, or of another type. tsf_cursor_int64 reads
 *  INT64/TIMESTAMP/INT32/DATE/BOOLEAN cells; tsf_cursor_double reads DOUBLE/FLOAT cells and integer cells
 *  converted to double. */
TSF_API int tsf_cursor_int64(const tsf_cursor *c, size_t col, int64_t *out);
TSF_API int tsf_cursor_double(const tsf_cursor *c, size_t col, double *out);
TSF_API void tsf_cursor_get_stats(const tsf_cursor *c, tsf_query_stats *out);
TSF_API void tsf_cursor_close(tsf_cursor *c);

#ifdef __cplusplus
}
#endif
#endif /* TSF_H */
