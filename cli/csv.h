/* csv.h - CSV reading and writing for the `tsf` tool: a streaming RFC-4180 record reader, strict value
 * parsers, value printers whose text reads back to the same bits, and ISO-8601 time parse/print in the
 * file's time unit (s, ms, us, ns). Used by import, cat/head, convert and demo. */
#ifndef TSF_CLI_CSV_H
#define TSF_CLI_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "tsf.h"

/* ---- reading -------------------------------------------------------------------------------- */

typedef struct csv_reader {
    FILE *f;
    const char *path;
    char delim;
    char *in;                   /* read buffer */
    size_t in_len, in_pos;
    int eof;
    char *rec;                  /* field text of the current record, each field NUL-terminated */
    size_t rec_cap;
    size_t *off;                /* field starts in rec */
    size_t *len;                /* field lengths (a field may hold NUL bytes) */
    uint8_t *quoted;            /* 1: the field was quoted ("" is an empty string, not a null) */
    size_t nfields, fcap;
    uint64_t line;              /* line of the current record's first character (1-based) */
    uint64_t next_line;
    uint64_t bytes;             /* bytes consumed so far */
} csv_reader;

/* Opens path ("-" = stdin). Returns 0, or -1 with errno set. */
int csv_open(csv_reader *r, const char *path);
void csv_close(csv_reader *r);
/* The delimiter of the first line (the header): of ',', ';', TAB and '|' outside quotes, the most frequent
   (',' on a tie or when none occurs). Reads ahead without consuming; call before the first csv_next. */
char csv_detect_delim(csv_reader *r);
/* Next record: 1 = a record, 0 = end of input, -1 = error (message in msg: unterminated quote, I/O). */
int csv_next(csv_reader *r, char *msg, size_t msgcap);
static inline const char *csv_field(const csv_reader *r, size_t i)
{
    return r->rec + r->off[i];
}

/* ---- values --------------------------------------------------------------------------------- */

/* Strict parsers of a whole field (surrounding blanks allowed): 0 ok, -1 not that kind of value. */
int csv_parse_i64(const char *s, int64_t *out);
/* A decimal for a FLOAT (is_float) or DOUBLE column; also NaN, Infinity, -Infinity, inf. The value stored
 * must be the text's number: 0 ok; -1 not a number; -2 beyond the type's range (overflows to infinity, or
 * a non-zero number that rounds to zero); -3 not held exactly: the nearest value, printed with as many
 * significant digits as the text has, gives other digits (any text of up to 15 significant digits (FLOAT:
 * 6) in the normal range passes; %.17g output of a double passes; 9007199254740993 does not). */
int csv_parse_real(const char *s, int is_float, double *out);
int csv_parse_bool(const char *s, int *out);      /* true/false, any case */
int csv_parse_date(const char *s, int32_t *out);  /* yyyy-MM-dd -> yyyyMMdd */
int csv_is_blank(const char *s);

/* Shortest %.Ng that reads back to the same float/double; NaN, Infinity, -Infinity, "-0.0". */
void csv_format_real(char *buf, size_t cap, double x, int is_float);

/* The texts `tsf import` reads as null by default (--null-values), and a test for them. */
#define CSV_DEFAULT_NULLS "NA,N/A,null,NULL,None"
#define CSV_DEFAULT_NULLS_MAXLEN 4 /* the longest of them */
int csv_is_default_null(const char *s, size_t len);
/* Writes a field quoted per RFC 4180 when it holds the delimiter, a quote, CR/LF, leading/trailing
 * blanks, or is empty or a default null text (an empty string prints as "", a string NA as "NA", so that
 * neither reads back as a null). Bytes a
 * terminal or a text tool must not see raw (csv_unsafe_len) are written as \xHH, and a backslash is
 * doubled where it would otherwise start such an escape, so csv_unescape gives the bytes back and text
 * without such bytes prints unchanged. */
void csv_put_field(FILE *f, const char *s, size_t len);
/* Reverses csv_put_field's escapes in place (\\ -> \, \xHH -> the byte); returns the new length. */
size_t csv_unescape(char *s, size_t len);
/* Length of the well-formed UTF-8 sequence at p (n > 0 bytes there): 1-4, or 0 when none starts at p
 * (overlong forms, surrogates and code points beyond U+10FFFF are not well formed). */
size_t csv_utf8_len(const uint8_t *p, size_t n);
/* How many bytes at p are escaped on output (0: none): NUL and the other C0 controls but TAB, LF and CR;
 * DEL; both bytes of a C1 control (U+0080-U+009F, e.g. CSI); a byte that starts no well-formed UTF-8. */
size_t csv_unsafe_len(const uint8_t *p, size_t n);

/* ---- per-column option lists (--schema, --encoding, --compression: "X" or "col=X", comma lists) -- */

typedef struct csv_kv {
    char *key; /* NULL: the default for every column */
    char *val;
} csv_kv;

typedef struct csv_kvlist {
    csv_kv *e;
    size_t n;
} csv_kvlist;

/* Adds "X" / "col=X" / "col:X" entries of a comma-separated spec. 0 ok, -1 out of memory. */
int csv_kv_add(csv_kvlist *l, const char *spec);
void csv_kv_free(csv_kvlist *l);
/* The value for column `name` (a per-column entry beats the default); NULL if none. *per_column = 1
 * when a per-column entry matched. */
const char *csv_kv_lookup(const csv_kvlist *l, const char *name, int *per_column);
/* The encoding TsFile's Java writer uses by default for a type (RLE, TS_2DIFF, GORILLA, PLAIN). */
tsf_encoding csv_default_encoding(tsf_type t);
/* Encoding and compression of a column from --encoding/--compression lists over the given defaults.
 * A default encoding that cannot encode the type is ignored; a per-column one is an error. 0 ok, else -1
 * with a message in msg. */
int csv_column_codec(const csv_kvlist *enc, const csv_kvlist *comp, const char *name, tsf_type type,
                     tsf_encoding *e, tsf_compression *c, char *msg, size_t msgcap);

/* Checks that every --encoding / --compression value names a known (and built) codec; prints
 * "tsf CMD: ..." and returns -1 otherwise. */
int csv_codec_lists_valid(const char *cmd, const csv_kvlist *enc, const csv_kvlist *comp);

/* ---- time (units as "per second": 1 = s, 1000 = ms, 1000000 = us, 1000000000 = ns; args.h) ----- */

/* Converts v from one unit to another: 0 ok, -1 overflow, -2 not exact (a finer unit into a coarser one). */
int csv_time_convert(int64_t v, int64_t from_per_second, int64_t to_per_second, int64_t *out);
/* Parses a fixed UTC offset: "UTC", "Z", "+08:00", "-0530", "+8", "UTC+1". Seconds east of UTC. */
int csv_tz_parse(const char *s, int32_t *offset_s);
/* Looks like ISO-8601 (starts with yyyy-). */
int csv_time_is_iso(const char *s);
/* ISO-8601 text (cli_parse_time's forms); a time without a zone is at tz_offset_s east of UTC.
 * 0 ok, -1 malformed, -2 out of range, -3 a fraction finer than the unit (not exact). */
int csv_time_parse_iso(const char *s, int32_t tz_offset_s, int64_t per_second, int64_t *out);

#endif
