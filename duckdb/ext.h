/*
 * ext.h - shared pieces of the DuckDB extension (doc/duckdb.md): the C extension API (every file of the
 * extension reaches DuckDB through the function table the entrypoint receives), the paths argument, type
 * mapping and the registration functions of each file. Only the public tsfile-c API (tsf.h) is used.
 */
#ifndef TSF_DUCKDB_EXT_H
#define TSF_DUCKDB_EXT_H

#include <stddef.h>
#include <stdint.h>

#include <duckdb_extension.h>
#include "tsf.h"
#include "tsf_arrow.h" /* tsf_arrow_date_days: TsFile DATE (yyyyMMdd) to days since 1970-01-01 */

DUCKDB_EXTENSION_EXTERN

/* A list of path arguments (a file, directory or glob each), owned. */
typedef struct tsfx_paths {
    char **v;
    size_t n;
} tsfx_paths;

/* Reads the first positional parameter: a VARCHAR or a LIST of VARCHAR. 0, or -1 after setting the bind
 * error (prefixed with fn). */
int tsfx_get_paths(duckdb_bind_info info, const char *fn, tsfx_paths *out);
void tsfx_paths_free(tsfx_paths *p);

/* The DuckDB type a TsFile type is read as: BOOLEAN, INTEGER, BIGINT, FLOAT, DOUBLE, VARCHAR (TEXT, STRING),
 * BLOB, DATE, BIGINT (TIMESTAMP: TsFile keeps no unit); DUCKDB_TYPE_INVALID for others. */
duckdb_type tsfx_duck_type(tsf_type t);
/* SQL name of tsfx_duck_type(t) ("BIGINT", "TIMESTAMP_MS", ...). */
const char *tsfx_duck_type_name(duckdb_type t);

/* Sets a bind / init / function error "<fn>: <message>" (the library's message). */
void tsfx_bind_error(duckdb_bind_info info, const char *fn, const char *fmt, ...);
void tsfx_function_error(duckdb_function_info info, const char *fn, const char *fmt, ...);

/* The readers read_tsfile keeps open between queries (doc/duckdb.md "Reader cache"): one tsf_reader_pool per
 * database, held by the table functions that use it as their extra info (each holds a reference; the database
 * destroys its functions when it closes, and the last reference frees the pool). */
typedef struct tsfx_cache tsfx_cache;
/* A new cache with one reference (NULL when out of memory). */
tsfx_cache *tsfx_cache_new(void);
tsf_reader_pool *tsfx_cache_pool(const tsfx_cache *c);
void tsfx_cache_ref(tsfx_cache *c);
/* Drops a reference (a duckdb_delete_callback_t). */
void tsfx_cache_unref(void *c);

/* Registration (each file's table functions); 0 or -1. */
int tsfx_register_read(duckdb_connection con, tsfx_cache *cache);
int tsfx_register_metadata(duckdb_connection con, tsfx_cache *cache);

#endif
