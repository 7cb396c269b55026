/*
 * args.h - small helpers shared by the `tsf` subcommands: option iteration (--name VALUE, --name=VALUE,
 * short aliases), the exit codes, error printing that names the command, number / time-unit /
 * time / duration parsing (the --time-unit convention), JSON string output, and opening a reader with
 * the error mapped to an exit code.
 */
#ifndef TSF_CLI_ARGS_H
#define TSF_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "tsf.h"

/* Exit codes of the tool. */
enum {
    CLI_OK = 0,      /* success */
    CLI_USAGE = 1,   /* usage error (unknown command/option, bad option value) */
    CLI_DAMAGED = 2, /* a file is damaged */
    CLI_IO = 3,      /* I/O error (missing file, unwritable output) */
    CLI_EMPTY = 4,   /* a query (cat, head, stats) matched nothing */
};

/*
 * Option iteration. Usage:
 *   cli_args a; cli_args_init(&a, argc, argv);   // argv[0] = the subcommand name
 *   while (cli_next(&a)) {
 *       if (cli_is(&a, "-h|--help")) ...
 *       else if (cli_value(&a, "-o|--output")) out = a.val;   // takes "-o X", "--output X", "--output=X"
 *       else if (cli_positional(&a)) files[n++] = a.arg;
 *       else return cli_unknown(&a);
 *   }
 *   if (a.bad) return CLI_USAGE;
 * A lone "--" ends the options (everything after it is positional); "-" alone is positional.
 */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;           /* index of the current argument */
    const char *cmd; /* subcommand name, for messages */
    const char *arg; /* the current argument */
    const char *val; /* value taken by cli_value */
    int only_pos;    /* after "--" */
    int bad;         /* a usage error was printed */
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv);
/* Advances to the next argument; 0 when there is none left (or after a usage error). */
int cli_next(cli_args *a);
/* 1 if the current argument is one of the '|'-separated names (a flag without value). */
int cli_is(const cli_args *a, const char *names);
/* 1 if the current argument is one of the names and takes a value (a->val); prints an error and sets
 * a->bad when the value is missing. */
int cli_value(cli_args *a, const char *names);
/* 1 if the current argument is positional (a->arg). */
int cli_positional(const cli_args *a);
/* Prints "tsf CMD: unknown option X (see tsf CMD --help)", sets bad, returns CLI_USAGE. */
int cli_unknown(cli_args *a);
/* The single FILE operand of a command: the first positional argument goes to *path; a second one is a
 * usage error (message printed, CLI_USAGE returned). */
int cli_one_file(cli_args *a, const char **path);
/* After the option loop: CLI_USAGE when an option was bad or FILE is missing (message printed). */
int cli_file_given(const cli_args *a, const char *path);

/* "tsf CMD: ..." on stderr. Returns nothing; callers return the exit code. */
void cli_err(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* "tsf CMD: PATH: MSG", leaving out "PATH: " when the library message names the file already. */
void cli_err_file(const char *cmd, const char *path, const char *msg);
/* Exit code for a library status: ECORRUPT/ENOTSUP -> 2 (damaged/unreadable file), EIO/ENOTFOUND -> 3,
 * EINVAL -> 1, else 3. */
int cli_exit_code(tsf_status st);

/* Opens a reader and loads its index; on failure prints "tsf CMD: FILE: message" and returns the exit
 * code (0 on success). A missing or unreadable file -> CLI_IO. */
int cli_open_reader(const char *cmd, const char *path, tsf_reader **out);
/* The same with tsf_reader_options.checked = `checked` (cli_open_reader: 1; `--no-check`: 0). */
int cli_open_reader_checked(const char *cmd, const char *path, int checked, tsf_reader **out);

/* Whether the operands name a dataset rather than one file: several of them, a directory, or a pattern
 * (* ? [) that is no existing file. */
int cli_is_dataset(const char *const *paths, size_t n);
/* Opens the dataset of the operands (tsf_dataset_open) with the metadata cache file `cache` (--cache; NULL =
 * none); on failure prints "tsf CMD: ..." and returns the exit code (0 on success). A cache that was ignored
 * (damaged) or could not be written is said on stderr; the open still succeeds. */
int cli_open_dataset(const char *cmd, const char *const *paths, size_t n, const char *cache, tsf_dataset **out);

/* Parses a non-negative / signed decimal integer (whole string). 0 on success, -1 otherwise. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_i64(const char *s, int64_t *out);

/* --time-unit: "s", "ms", "us", "ns" -> units per second (1, 1000, 1e6, 1e9). 0 on success. */
int cli_parse_time_unit(const char *s, int64_t *per_second);
/* A time for --from/--to: an integer in the file's unit, or ISO-8601 UTC text
 * (yyyy-MM-dd, yyyy-MM-ddTHH:mm[:ss[.fraction]] with 'T' or ' ', optional Z or +hh:mm/-hh:mm),
 * converted to the unit. 0 on success, -1 on bad text or overflow. */
int cli_parse_time(const char *s, int64_t per_second, int64_t *out);
/* A duration for --window: "500ms", "10s", "5m", "1h", "1d", "250us", "10ns", or a plain positive
 * integer in the file's unit. Must be > 0 and exact in the unit (1ms in a second-unit file fails).
 * 0 on success. */
int cli_parse_duration(const char *s, int64_t per_second, int64_t *out);
/* Days since 1970-01-01 of a proleptic Gregorian date (civil calendar arithmetic on 400-year eras), and back. */
int64_t cli_days_from_civil(int64_t y, int64_t m, int64_t d);
void cli_civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d);
/* Formats a time in the unit as ISO-8601 UTC ("2024-01-02T03:04:05.123Z"; fraction digits by unit). */
void cli_format_time(char *buf, size_t cap, int64_t t, int64_t per_second);

/* Shortest decimal that reads back to the same double (float when is_float); whole numbers below 1e17
 * without exponent; NaN, Infinity, -Infinity as Java prints them. */
void cli_fmt_real(char *buf, size_t cap, double x, int is_float);

/* Writes s as a JSON string (quoted, escaped); NULL -> null. Controls (C0, DEL, C1) are \u escapes; a byte
 * that starts no well-formed UTF-8 is written as the lone surrogate \udcXX (Python's surrogateescape). */
void cli_json_str(FILE *f, const char *s);
void cli_json_bytes(FILE *f, const uint8_t *p, size_t n);
/* A double as JSON: shortest %.17g form that reads back; NaN/Inf -> null. */
void cli_json_num(FILE *f, double x);

/* A text table with aligned columns: cells added row by row, printed with two spaces between columns.
 * Columns whose bit is set in `right` are right-aligned (numbers). Allocation failure prints nothing
 * more and makes cli_table_print return -1. */
typedef struct cli_table {
    size_t ncols, ncells, cap;
    char **cells;
    unsigned right;
    int oom;
} cli_table;

void cli_table_init(cli_table *t, size_t ncols, unsigned right);
void cli_table_add(cli_table *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int cli_table_print(const cli_table *t, FILE *f, const char *indent);
void cli_table_free(cli_table *t);

#endif
