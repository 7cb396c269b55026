/*
 * import.h - what `tsf import` shares between its CSV side (cmd_import.c) and its row buffers and writer
 * side (import_sink.c): options, per-target row buffers (sinks), the key maps and the command state.
 */
#ifndef TSF_CLI_IMPORT_H
#define TSF_CLI_IMPORT_H

#include <stdint.h>
#include <time.h>

#include "cli.h"
#include "csv.h"

#define TABLET_ROWS 65536 /* a multiple of 8: ranges of rows start on validity-byte boundaries */

/* ---- options ---------------------------------------------------------------------------------- */

typedef struct imp_opts {
    const char **files;
    size_t nfiles;
    const char *out;
    const char *table, *tags, *device, *time_col, *input_unit;
    char delim; /* --delimiter; 0 = detected from each file's header */
    /* --null-values: unquoted cells with exactly this text are null, as empty ones are */
    char null_buf[256];
    const char *null_tok[16];
    size_t null_len[16], nnull;
    int64_t per_second; /* the file's time unit */
    int32_t tz;
    csv_kvlist schema, enc, comp;
    int sort, skip_bad, quiet, progress, page_index, unescape, force;
    int dup_policy; /* --duplicates (with --sort): IMP_DUP_LAST (default), IMP_DUP_FIRST, IMP_DUP_ERROR */
    uint64_t infer_rows, page_points;
    uint64_t flush_ms; /* --flush-interval: rows reach the file at least this often (0 = at the end) */
    int partition;      /* --partition: IMP_PART_* (0 = one file) */
    uint64_t part_rows; /* --partition rows=N */
} imp_opts;

enum { IMP_PART_NONE = 0, IMP_PART_DAY, IMP_PART_HOUR, IMP_PART_ROWS };

enum { IMP_DUP_LAST = 0, IMP_DUP_FIRST = 1, IMP_DUP_ERROR = 2 };

/* Type inference of a column (or long-CSV series): which types every value seen so far fits. */
typedef struct inference {
    int seen, b, in, num;
    int lex;               /* every value reads as a number (exactly or not) */
    uint64_t inexact_line; /* the first number that no numeric type holds exactly */
    char inexact[48];
    uint64_t values, words;  /* cells seen (not null), and those that are no number at all */
    uint64_t word_line;      /* the first of those */
    char word[48];
} inference;

/* ---- per-target row buffers (one tablet's worth, or everything with --sort) -------------------- */


typedef struct sink {
    char *target;       /* tree device path or table name */
    char *key;          /* long CSV: "device\nmeasurement"; table: NULL */
    size_t ncols, ntags; /* table model: the first ntags columns are the TAG columns */
    char **names;
    tsf_type *types;
    tsf_encoding *encs;
    tsf_compression *comps;
    size_t n, cap;
    int64_t *times;
    uint64_t *lines; /* --sort: the line of each row (the last duplicate wins) */
    void **vals;
    uint8_t **valid;
    char *arena; /* TEXT/STRING/BLOB bytes; tsf_bytes.data holds an offset until the flush */
    size_t alen, acap;
    tsf_tablet *tab;
    int registered;
    int64_t last_time;
    uint64_t last_line;
    int has_last;
    inference inf; /* long CSV: type inference of this series */
} sink;

typedef struct hentry {
    char *key;
    int64_t time;
    uint64_t line;
    size_t sink; /* long CSV */
} hentry;

typedef struct hmap {
    hentry *e;
    size_t cap, n;
} hmap;

typedef struct imp {
    imp_opts *o;
    tsf_writer *w;
    sink **sinks;
    size_t nsinks;
    hmap order;  /* table model: last time per tag combination */
    hmap series; /* long CSV: sink per device/measurement */
    uint64_t rows, skipped, values, csv_bytes;
    uint64_t dup_rows; /* --sort: rows dropped because an earlier or later row has the same device and time */
    int64_t dup_time;  /* one such time, for the message */
    const char *path; /* current CSV */
    time_t progress_at;
    uint64_t flushed_at; /* ms (CLOCK_MONOTONIC) of the last periodic flush */
    char msg[512];
    int failed; /* exit code of the first error */
} imp;

/* Key maps (open addressing, keys copied): finds key; with create, inserts it. NULL when absent or out of
 * memory. */
hentry *imp_hmap_get(hmap *m, const char *key, int create, int *created);
void imp_hmap_free(hmap *m);

int imp_is_bytes(tsf_type t);

/* Row buffers of one target (tree device, table or long-CSV series) of ncols columns. */
sink *imp_sink_new(const char *target, size_t ncols);
void imp_sink_free(sink *s);
/* Appends a row (cells: one per column, TSF_NULL for a null); -1 when out of memory. */
int imp_sink_add(sink *s, int64_t t, uint64_t line, const tsf_value *cells);
/* Streaming: writes the buffered rows as tablets and empties the buffer. */
int imp_sink_flush(imp *m, sink *s);
/* --sort: sorts the held rows by (tags, time), keeps the last (or first, --duplicates) of equal keys, and
   writes them; --duplicates error fails on the first. */
int imp_sink_sort_write(imp *m, sink *s, size_t ntags);

/* Records the first error (message printed once) and returns its exit code. */
int imp_fail(imp *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int imp_oom(imp *m);

/* ---- one record (import_cells.c) ------------------------------------------------------------- */

/* A record: field texts (NUL-terminated, mutable), lengths, quoted flags. */
typedef struct rec {
    char *text;
    size_t *off, *len;
    uint8_t *q;
    size_t n;
    uint64_t line;
} rec;

/* Parses field text into *v for `type`. Returns NULL or a reason. BLOB hex decodes in place. */
const char *imp_parse_cell(imp *m, tsf_type type, char *s, size_t len, int quoted, tsf_value *v);
/* Type inference of one value: clears the types that cannot hold it (see import_cells.c). */
void imp_infer(inference *f, const char *s, size_t len, int quoted, uint64_t line);
tsf_type imp_inferred(const inference *f);
/* Says why a column of numbers became STRING (stderr, unless --quiet). */
void imp_inferred_note(const imp *m, const char *column, const inference *f);
/* Encoding and compression of a column from --encoding / --compression (AUTO and LZ4 otherwise). */
int imp_column_codec(imp *m, const char *name, tsf_type type, tsf_encoding *enc, tsf_compression *comp);
/* --schema's type of a column: 1 (in *t), 0 when not given, negative exit code for an unknown type. */
int imp_given_type(imp *m, const char *name, tsf_type *t);
/* --unescape: reverses tsf cat's escapes (\xHH, a doubled backslash) in every field, in place. */
void imp_rec_unescape(csv_reader *r);
/* --null-values: an unquoted cell that is one of the null texts becomes empty (a null, as a blank cell). */
void imp_rec_nulls(const imp_opts *o, csv_reader *r);
/* Splits a comma-separated --null-values list into o's tokens; -1 when the list is too long. */
int imp_parse_nulls(imp_opts *o, const char *list);
/* The reader's current record (borrowed), a copy of one (-1: out of memory), and the copy's release. */
void imp_rec_view(const csv_reader *r, rec *v);
int imp_rec_copy(const rec *src, rec *dst);
void imp_rec_free(rec *r);
/* A line with nothing on it. */
int imp_blank_record(const rec *r);
/* Field i holds a NUL byte (text that C strings would cut there). */
int imp_has_nul(const rec *r, size_t i);

#endif
