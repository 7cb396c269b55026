/*
 * import_sink.c - the row buffers of `tsf import` (one sink per target: times, values, validity and an
 * arena of binary bytes, one tablet's worth or everything with --sort) and the writer side that turns
 * them into tablets.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

/* ---- per-target row buffers (one tablet's worth, or everything with --sort) -------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Finds key; with create, inserts it (key copied). NULL when absent (or out of memory). */
hentry *imp_hmap_get(hmap *m, const char *key, int create, int *created)
{
    if (created) *created = 0;
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        hentry *ne = calloc(nc, sizeof *ne);
        if (!ne) return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].key) continue;
            size_t j = hash_str(m->e[i].key) & (nc - 1);
            while (ne[j].key) j = (j + 1) & (nc - 1);
            ne[j] = m->e[i];
        }
        free(m->e);
        m->e = ne;
        m->cap = nc;
    }
    if (!m->cap) return NULL;
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->e[j].key) {
        if (!strcmp(m->e[j].key, key)) return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!create) return NULL;
    if (!(m->e[j].key = strdup(key))) return NULL;
    m->n++;
    if (created) *created = 1;
    return &m->e[j];
}

void imp_hmap_free(hmap *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->e[i].key);
    free(m->e);
}

int imp_is_bytes(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
}

void imp_sink_free(sink *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ncols; i++) {
        free(s->names[i]);
        if (s->vals) free(s->vals[i]);
        if (s->valid) free(s->valid[i]);
    }
    free(s->names);
    free(s->types);
    free(s->encs);
    free(s->comps);
    free(s->vals);
    free(s->valid);
    free(s->times);
    free(s->lines);
    free(s->arena);
    free(s->target);
    free(s->key);
    tsf_tablet_free(s->tab);
    free(s);
}

sink *imp_sink_new(const char *target, size_t ncols)
{
    sink *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->target = strdup(target);
    s->ncols = ncols;
    s->names = calloc(ncols, sizeof *s->names);
    s->types = calloc(ncols, sizeof *s->types);
    s->encs = calloc(ncols, sizeof *s->encs);
    s->comps = calloc(ncols, sizeof *s->comps);
    s->vals = calloc(ncols, sizeof *s->vals);
    s->valid = calloc(ncols, sizeof *s->valid);
    if (!s->target || !s->names || !s->types || !s->encs || !s->comps || !s->vals || !s->valid) {
        imp_sink_free(s);
        return NULL;
    }
    return s;
}

static int sink_reserve(sink *s, size_t need)
{
    if (need <= s->cap) return 0;
    size_t nc = s->cap ? s->cap : 1024;
    while (nc < need) nc *= 2;
    int64_t *t = realloc(s->times, nc * sizeof *t);
    if (!t) return -1;
    s->times = t;
    uint64_t *l = realloc(s->lines, nc * sizeof *l);
    if (!l) return -1;
    s->lines = l;
    for (size_t i = 0; i < s->ncols; i++) {
        void *v = realloc(s->vals[i], nc * tsf_type_size(s->types[i]));
        if (!v) return -1;
        s->vals[i] = v;
        uint8_t *b = realloc(s->valid[i], nc / 8 + 1);
        if (!b) return -1;
        memset(b + (s->cap + 7) / 8, 0, nc / 8 + 1 - (s->cap + 7) / 8);
        s->valid[i] = b;
    }
    s->cap = nc;
    return 0;
}

static int arena_put(sink *s, const void *p, size_t n, size_t *off)
{
    if (s->alen + n > s->acap) {
        size_t nc = s->acap ? s->acap : 4096;
        while (nc < s->alen + n) nc *= 2;
        char *a = realloc(s->arena, nc);
        if (!a) return -1;
        s->arena = a;
        s->acap = nc;
    }
    if (n) memcpy(s->arena + s->alen, p, n);
    *off = s->alen;
    s->alen += n;
    return 0;
}

/* Appends one row; cells[i] in the C representation of types[i] (bytes borrowed, copied here). */
int imp_sink_add(sink *s, int64_t t, uint64_t line, const tsf_value *cells)
{
    if (sink_reserve(s, s->n + 1)) return -1;
    size_t r = s->n;
    s->times[r] = t;
    s->lines[r] = line;
    for (size_t i = 0; i < s->ncols; i++) {
        uint8_t *v = s->valid[i];
        char *dst = (char *)s->vals[i] + r * tsf_type_size(s->types[i]);
        if (cells[i].is_null) {
            v[r >> 3] &= (uint8_t) ~(1u << (r & 7));
            memset(dst, 0, tsf_type_size(s->types[i]));
            continue;
        }
        v[r >> 3] |= (uint8_t)(1u << (r & 7));
        switch (s->types[i]) {
        case TSF_BOOLEAN: *(uint8_t *)dst = (uint8_t)cells[i].v.b; break;
        case TSF_INT32:
        case TSF_DATE: memcpy(dst, &cells[i].v.i32, 4); break;
        case TSF_FLOAT: memcpy(dst, &cells[i].v.f, 4); break;
        case TSF_INT64:
        case TSF_TIMESTAMP: memcpy(dst, &cells[i].v.i64, 8); break;
        case TSF_DOUBLE: memcpy(dst, &cells[i].v.d, 8); break;
        default: {
            size_t off;
            if (arena_put(s, cells[i].v.bytes.data, cells[i].v.bytes.len, &off)) return -1;
            tsf_bytes b = {(const uint8_t *)(uintptr_t)off, cells[i].v.bytes.len};
            memcpy(dst, &b, sizeof b);
        }
        }
    }
    s->n++;
    return 0;
}

/* ---- writer side -------------------------------------------------------------------------------- */

int imp_fail(imp *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->msg, sizeof m->msg, fmt, ap);
    va_end(ap);
    if (!m->failed) {
        cli_err("import", "%s", m->msg);
        m->failed = code;
    }
    return code;
}

int imp_oom(imp *m)
{
    return imp_fail(m, CLI_IO, "out of memory");
}

/* Writes rows [a, b) of a sink (a multiple of 8) as one tablet. */
static int sink_write(imp *m, sink *s, size_t a, size_t b)
{
    tsf_error e = {0};
    if (!s->tab) {
        const char **names = (const char **)s->names;
        if (tsf_tablet_new(m->w, s->target, names, s->ncols, TABLET_ROWS, &s->tab, &e))
            return imp_fail(m, CLI_USAGE, "%s: %s", m->o->out, e.message);
    }
    size_t n = b - a;
    if (tsf_tablet_set_times(s->tab, s->times + a, n, &e)) goto bad;
    for (size_t i = 0; i < s->ncols; i++) {
        size_t w = tsf_type_size(s->types[i]);
        void *vals = (char *)s->vals[i] + a * w;
        if (imp_is_bytes(s->types[i])) {
            tsf_bytes *bv = vals;
            /* offsets into the arena; with only empty values there is no arena and every offset is 0 */
            const uint8_t *base = s->arena ? (const uint8_t *)s->arena : (const uint8_t *)"";
            for (size_t r = 0; r < n; r++) bv[r].data = base + (uintptr_t)bv[r].data;
        }
        if (tsf_tablet_set_column(s->tab, i, vals, s->valid[i] + a / 8, n, &e)) goto bad;
        if (i >= s->ntags)
            for (size_t r = a; r < b; r++) m->values += (s->valid[i][r >> 3] >> (r & 7)) & 1;
    }
    if (tsf_writer_write_tablet(m->w, s->tab, &e)) goto bad;
    return 0;
bad:
    return imp_fail(m, e.code == TSF_EIO ? CLI_IO : CLI_DAMAGED, "%s: %s", m->o->out, e.message);
}

/* Streaming: writes the whole buffer and empties it. */
int imp_sink_flush(imp *m, sink *s)
{
    for (size_t a = 0; a < s->n; a += TABLET_ROWS) {
        size_t b = a + TABLET_ROWS < s->n ? a + TABLET_ROWS : s->n;
        int rc = sink_write(m, s, a, b);
        if (rc) return rc;
    }
    s->n = 0;
    s->alen = 0;
    return 0;
}

/* --sort: order rows by (tags, time, line); of equal (tags, time) the last row wins (--duplicates). */
static const sink *g_sort_sink; /* qsort has no context argument; the CLI is single-threaded */
static size_t g_sort_ntags;

static int cmp_bytes_cell(const sink *s, size_t col, size_t a, size_t b)
{
    int va = (s->valid[col][a >> 3] >> (a & 7)) & 1, vb = (s->valid[col][b >> 3] >> (b & 7)) & 1;
    if (va != vb) return va - vb; /* null tags first */
    if (!va) return 0;
    const tsf_bytes *x = (const tsf_bytes *)s->vals[col] + a, *y = (const tsf_bytes *)s->vals[col] + b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(s->arena + (uintptr_t)x->data, s->arena + (uintptr_t)y->data, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_rows(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const sink *s = g_sort_sink;
    for (size_t t = 0; t < g_sort_ntags; t++) {
        int c = cmp_bytes_cell(s, t, a, b);
        if (c) return c;
    }
    if (s->times[a] != s->times[b]) return s->times[a] < s->times[b] ? -1 : 1;
    return (a > b) - (a < b);
}

static int same_key(const sink *s, size_t ntags, size_t a, size_t b)
{
    if (s->times[a] != s->times[b]) return 0;
    for (size_t t = 0; t < ntags; t++)
        if (cmp_bytes_cell(s, t, a, b)) return 0;
    return 1;
}

int imp_sink_sort_write(imp *m, sink *s, size_t ntags)
{
    if (!s->n) return 0;
    size_t *perm = malloc(s->n * sizeof *perm);
    if (!perm) return imp_oom(m);
    for (size_t i = 0; i < s->n; i++) perm[i] = i;
    g_sort_sink = s;
    g_sort_ntags = ntags;
    qsort(perm, s->n, sizeof *perm, cmp_rows);
    size_t k = 0; /* keep the last (or first) of each run of equal keys */
    int first = m->o->dup_policy == IMP_DUP_FIRST, run_start = 1;
    for (size_t i = 0; i < s->n; i++) {
        int run_end = i + 1 == s->n || !same_key(s, ntags, perm[i], perm[i + 1]);
        if (first ? run_start : run_end) perm[k++] = perm[i];
        if (!run_end && !m->dup_rows++) m->dup_time = s->times[perm[i]];
        run_start = run_end;
    }
    if (k < s->n && m->o->dup_policy == IMP_DUP_ERROR) {
        free(perm);
        return imp_fail(m, CLI_DAMAGED,
                        "%s: %zu rows repeat the time of another row of their device (e.g. time %" PRId64
                        "); --duplicates error",
                        s->target, s->n - k, m->dup_time);
    }
    /* gather into new arrays */
    int64_t *t = malloc(k * sizeof *t + 1);
    if (!t) {
        free(perm);
        return imp_oom(m);
    }
    for (size_t i = 0; i < k; i++) t[i] = s->times[perm[i]];
    free(s->times);
    s->times = t;
    for (size_t c = 0; c < s->ncols; c++) {
        size_t w = tsf_type_size(s->types[c]);
        char *v = malloc(k * w + 1);
        uint8_t *b = calloc(k / 8 + 1, 1);
        if (!v || !b) {
            free(v);
            free(b);
            free(perm);
            return imp_oom(m);
        }
        for (size_t i = 0; i < k; i++) {
            size_t p = perm[i];
            memcpy(v + i * w, (char *)s->vals[c] + p * w, w);
            if ((s->valid[c][p >> 3] >> (p & 7)) & 1) b[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        free(s->vals[c]);
        free(s->valid[c]);
        s->vals[c] = v;
        s->valid[c] = b;
    }
    free(perm);
    m->rows -= s->n - k;
    s->n = k;
    s->cap = k;
    return imp_sink_flush(m, s);
}
