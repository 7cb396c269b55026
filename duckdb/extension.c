/*
 * extension.c - the entrypoint of the tsfile DuckDB extension and the helpers its table functions share
 * (doc/duckdb.md).
 */
#define DUCKDB_EXTENSION_NAME tsfile
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

bool tsfile_init_c_api(duckdb_extension_info info, struct duckdb_extension_access *access);

/* DUCKDB_EXTENSION_ENTRYPOINT defines the function table (duckdb_ext_api) and tsfile_init_c_api, which
 * DuckDB calls when it loads the file: it fills the table, opens a connection and calls this body. */
DUCKDB_EXTENSION_ENTRYPOINT(duckdb_connection connection, duckdb_extension_info info,
                            struct duckdb_extension_access *access)
{
    tsfx_cache *cache = tsfx_cache_new();
    int bad = !cache || tsfx_register_read(connection, cache) || tsfx_register_metadata(connection, cache);
    tsfx_cache_unref(cache); /* the functions hold theirs */
    if (bad) {
        access->set_error(info, "tsfile: registering the table functions failed");
        return false;
    }
    return true;
}

struct tsfx_cache {
    atomic_size_t refs;
    tsf_reader_pool *pool;
};

tsfx_cache *tsfx_cache_new(void)
{
    tsfx_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (tsf_reader_pool_create(&c->pool, NULL, NULL)) {
        free(c);
        return NULL;
    }
    atomic_init(&c->refs, 1);
    return c;
}

tsf_reader_pool *tsfx_cache_pool(const tsfx_cache *c)
{
    return c ? c->pool : NULL;
}

void tsfx_cache_ref(tsfx_cache *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void tsfx_cache_unref(void *p)
{
    tsfx_cache *c = p;
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
    tsf_reader_pool_free(c->pool);
    free(c);
}

static void set_list(tsfx_paths *out, char *s)
{
    out->v[out->n++] = s;
}

int tsfx_get_paths(duckdb_bind_info info, const char *fn, tsfx_paths *out)
{
    out->v = NULL;
    out->n = 0;
    duckdb_value v = duckdb_bind_get_parameter(info, 0);
    if (!v || duckdb_is_null_value(v)) {
        tsfx_bind_error(info, fn, "the path is NULL");
        duckdb_destroy_value(&v);
        return -1;
    }
    duckdb_type t = duckdb_get_type_id(duckdb_get_value_type(v));
    int rc = -1;
    if (t == DUCKDB_TYPE_VARCHAR) {
        out->v = malloc(sizeof *out->v);
        char *s = duckdb_get_varchar(v);
        if (out->v && s) {
            set_list(out, strdup(s));
            rc = out->v[0] ? 0 : -1;
        }
        duckdb_free(s);
        if (rc) tsfx_bind_error(info, fn, "out of memory");
    } else if (t == DUCKDB_TYPE_LIST) {
        idx_t n = duckdb_get_list_size(v);
        out->v = calloc(n ? n : 1, sizeof *out->v);
        rc = out->v ? 0 : -1;
        if (rc) tsfx_bind_error(info, fn, "out of memory");
        for (idx_t i = 0; i < n && !rc; i++) {
            duckdb_value c = duckdb_get_list_child(v, i);
            if (!c || duckdb_is_null_value(c) || duckdb_get_type_id(duckdb_get_value_type(c)) != DUCKDB_TYPE_VARCHAR) {
                tsfx_bind_error(info, fn, "path %llu of the list is NULL or not a string", (unsigned long long)i);
                rc = -1;
            } else {
                char *s = duckdb_get_varchar(c);
                char *d = s ? strdup(s) : NULL;
                duckdb_free(s);
                if (!d) {
                    tsfx_bind_error(info, fn, "out of memory");
                    rc = -1;
                } else {
                    set_list(out, d);
                }
            }
            duckdb_destroy_value(&c);
        }
        if (!rc && n == 0) {
            tsfx_bind_error(info, fn, "the list of paths is empty");
            rc = -1;
        }
    } else {
        tsfx_bind_error(info, fn, "the first argument is a path (VARCHAR) or a list of paths (VARCHAR[])");
    }
    duckdb_destroy_value(&v);
    if (rc) tsfx_paths_free(out);
    return rc;
}

void tsfx_paths_free(tsfx_paths *p)
{
    for (size_t i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

duckdb_type tsfx_duck_type(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN: return DUCKDB_TYPE_BOOLEAN;
    case TSF_INT32: return DUCKDB_TYPE_INTEGER;
    case TSF_INT64: return DUCKDB_TYPE_BIGINT;
    case TSF_FLOAT: return DUCKDB_TYPE_FLOAT;
    case TSF_DOUBLE: return DUCKDB_TYPE_DOUBLE;
    case TSF_TEXT:
    case TSF_STRING: return DUCKDB_TYPE_VARCHAR;
    case TSF_BLOB: return DUCKDB_TYPE_BLOB;
    case TSF_DATE: return DUCKDB_TYPE_DATE;
    case TSF_TIMESTAMP: return DUCKDB_TYPE_BIGINT; /* the file does not say its unit */
    default: return DUCKDB_TYPE_INVALID;
    }
}

const char *tsfx_duck_type_name(duckdb_type t)
{
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_BIGINT: return "BIGINT";
    case DUCKDB_TYPE_FLOAT: return "FLOAT";
    case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
    case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
    case DUCKDB_TYPE_BLOB: return "BLOB";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
    default: return "INVALID";
    }
}

static void verror(char *buf, size_t cap, const char *fn, const char *fmt, va_list ap)
{
    int n = snprintf(buf, cap, "%s: ", fn);
    if (n < 0 || (size_t)n >= cap) n = 0;
    vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
}

void tsfx_bind_error(duckdb_bind_info info, const char *fn, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    verror(buf, sizeof buf, fn, fmt, ap);
    va_end(ap);
    duckdb_bind_set_error(info, buf);
}

void tsfx_function_error(duckdb_function_info info, const char *fn, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    verror(buf, sizeof buf, fn, fmt, ap);
    va_end(ap);
    duckdb_function_set_error(info, buf);
}
