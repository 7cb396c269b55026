/*
 * autobest.c - real series from CSV files and the per-chunk check of TSF_ENCODING_AUTO
 * (autobest.h): AUTO's chunks are found by walking the file's data area; each chunk's rows are
 * written again with every fixed encoding, and the smallest lossless one is the chunk's best.
 */
#include "autobest.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/bytes.h"
#include "format/format.h"
#include "write/auto.h"

int ab_buf_write(void *ud, const void *data, size_t len)
{
    ab_buf *m = ud;
    if (m->n + len > m->cap) {
        size_t nc = m->cap ? m->cap : 1 << 16;
        while (nc < m->n + len) nc *= 2;
        uint8_t *np = realloc(m->p, nc);
        if (!np) return 1;
        m->p = np;
        m->cap = nc;
    }
    memcpy(m->p + m->n, data, len);
    m->n += len;
    return 0;
}

/* The whole file, gunzipped when it is gzip (zlib reads plain files as they are). */
static char *read_all(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *p = malloc(cap + 1);
    for (;;) {
        if (!p) break;
        if (n == cap) {
            char *q = realloc(p, cap * 2 + 1);
            if (!q) {
                free(p);
                p = NULL;
                break;
            }
            p = q;
            cap *= 2;
        }
        int k = gzread(f, p + n, (unsigned)(cap - n));
        if (k < 0) {
            free(p);
            p = NULL;
            break;
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    gzclose(f);
    if (p) {
        p[n] = 0;
        *len = n;
    }
    return p;
}

/* 1 when every value cell of the text after the header is an integer (or empty). */
static int all_integers(const char *body)
{
    for (const char *p = body; *p; p++) {
        if (*p == '\n') {
            const char *c = strchr(p + 1, ','); /* skip the time cell */
            if (!c) break;
            p = c;
            continue;
        }
        if (*p == '.' || *p == 'e' || *p == 'E' || *p == 'n' || *p == 'N' || *p == 'i' || *p == 'I') return 0;
    }
    return 1;
}

/* Splits a CSV file "time,c1,..." into one series per value column (appended to *out). type
 * TSF_VECTOR: inferred (all_integers). */
static int load_csv(const char *dir, const char *rel, tsf_type type, ab_series **out, size_t *nout)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text || !len) {
        fprintf(stderr, "autobest: cannot read %s\n", path);
        free(text);
        return 1;
    }
    char *line = text, *eol = strchr(line, '\n');
    if (!eol) {
        free(text);
        return 1;
    }
    *eol = 0;
    if (type == TSF_VECTOR) type = all_integers(eol + 1) ? TSF_INT64 : TSF_DOUBLE;
    size_t ncol = 0;
    char *names[64];
    for (char *tok = strtok(line, ",\r"); tok && ncol < 65; tok = strtok(NULL, ",\r"))
        if (ncol++ > 0 && ncol - 2 < 64) names[ncol - 2] = tok;
    ncol = ncol > 0 ? ncol - 1 : 0; /* value columns */
    if (ncol == 0 || ncol > 64) {
        free(text);
        return 1;
    }
    size_t rows = 0;
    for (char *p = eol + 1; *p; p++) rows += *p == '\n';
    if (text[len - 1] != '\n') rows++;
    ab_series *s = realloc(*out, (*nout + ncol) * sizeof *s);
    if (!s) {
        free(text);
        return 1;
    }
    *out = s;
    s += *nout;
    for (size_t c = 0; c < ncol; c++) {
        memset(&s[c], 0, sizeof s[c]);
        snprintf(s[c].name, sizeof s[c].name, "%s:%s", rel, names[c]);
        s[c].type = type;
        s[c].times = malloc((rows ? rows : 1) * sizeof(int64_t));
        s[c].vals = calloc(rows ? rows : 1, 8);
        s[c].valid = calloc(rows / 8 + 1, 1);
        s[c].csv_bpp = (double)len / ((double)(rows ? rows : 1) * (double)ncol);
    }
    size_t r = 0;
    char *p = eol + 1;
    while (*p && r < rows) {
        char *end;
        int64_t t = strtoll(p, &end, 10);
        p = end;
        for (size_t c = 0; c < ncol; c++) {
            s[c].times[r] = t;
            if (*p == ',') p++;
            if (*p == ',' || *p == '\n' || *p == '\r' || !*p) continue; /* empty cell: null */
            if (type == TSF_DOUBLE)
                ((double *)s[c].vals)[r] = strtod(p, &end);
            else
                ((int64_t *)s[c].vals)[r] = strtoll(p, &end, 10);
            if (end != p) {
                s[c].valid[r >> 3] |= (uint8_t)(1u << (r & 7));
                s[c].present++;
            }
            p = end;
            while (*p && *p != ',' && *p != '\n') p++;
        }
        while (*p && *p != '\n') p++;
        if (*p) p++;
        r++;
    }
    for (size_t c = 0; c < ncol; c++) s[c].n = r;
    *nout += ncol;
    free(text);
    return 0;
}

/* MANIFEST.md rows "| `file` | ... | double (...) | ..." or "int (...)". 1 when there is none. */
static int load_manifest(const char *dir, ab_series **out, size_t *nout, int *rc)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/MANIFEST.md", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    fclose(f);
    size_t len = 0;
    char *text = read_all(path, &len);
    *rc = !text;
    char *next = text;
    while (next && *next && !*rc) {
        char *line = next, *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        next = nl ? nl + 1 : NULL;
        if (strncmp(line, "| `", 3) != 0) continue;
        char *q = strchr(line + 3, '`');
        if (!q) continue;
        char rel[512];
        size_t k = (size_t)(q - (line + 3));
        if (k >= sizeof rel) continue;
        memcpy(rel, line + 3, k);
        rel[k] = 0;
        tsf_type type = strstr(q, "| double (") ? TSF_DOUBLE : strstr(q, "| int (") ? TSF_INT64 : TSF_VECTOR;
        if (type != TSF_VECTOR) *rc = load_csv(dir, rel, type, out, nout);
    }
    free(text);
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.csv / *.csv.gz below dir/rel, sorted, loaded with inferred types. */
static int load_tree(const char *dir, const char *rel, ab_series **out, size_t *nout)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return 1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn) break;
        names = nn;
        size_t l = strlen(rel) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (!names[n]) break;
        snprintf(names[n], l, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc) {
            if (ends_with(names[i], ".csv") || ends_with(names[i], ".csv.gz"))
                rc = load_csv(dir, names[i], TSF_VECTOR, out, nout);
            else if (!strchr(names[i] + strlen(rel), '.'))
                (void)load_tree(dir, names[i], out, nout); /* a folder; anything else is skipped */
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int ab_load_dir(const char *dir, ab_series **out, size_t *nout)
{
    int rc = 0;
    if (load_manifest(dir, out, nout, &rc) == 0) return rc;
    return load_tree(dir, "", out, nout);
}

void ab_free(ab_series *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(s[i].times);
        free(s[i].vals);
        free(s[i].valid);
    }
    free(s);
}

static int is_valid(const ab_series *s, size_t r)
{
    return (s->valid[r >> 3] >> (r & 7)) & 1;
}

size_t ab_write_only(const ab_series *s, size_t lo, size_t hi, tsf_encoding enc, tsf_compression comp,
                     const tsf_writer_options *o, ab_buf *out)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_write_callbacks cb = {sizeof cb, ab_buf_write, NULL, out};
    out->n = 0;
    size_t n = hi - lo;
    tsf_column_schema sc = {"v", s->type, enc, comp, TSF_COLUMN_FIELD};
    tsf_tablet *t = NULL;
    tsf_writer_options wo;
    if (o)
        wo = *o;
    else
        tsf_writer_options_init(&wo);
    uint8_t *valid = calloc(n / 8 + 1, 1);
    for (size_t r = 0; valid && r < n; r++)
        if (is_valid(s, lo + r)) valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    if (!valid || tsf_writer_open_callbacks(&w, &cb, &wo, &e) ||
        tsf_writer_register_series(w, "root.ds.d", &sc, &e) ||
        tsf_tablet_new(w, "root.ds.d", NULL, 0, n ? n : 1, &t, &e) ||
        tsf_tablet_set_times(t, s->times + lo, n, &e) ||
        tsf_tablet_set_column(t, 0, (const uint64_t *)s->vals + lo, valid, n, &e) ||
        tsf_writer_write_tablet(w, t, &e)) {
        tsf_tablet_free(t); /* before its writer */
        t = NULL;
        tsf_writer_abort(w);
        w = NULL;
    }
    tsf_tablet_free(t);
    free(valid);
    if (!w || tsf_writer_close(w, &e)) { /* a refused page (explicit encodings) counts as a failure */
        if (enc == TSF_ENCODING_AUTO) fprintf(stderr, "autobest: %s: %s\n", s->name, e.message);
        return 0;
    }
    return out->n;
}

size_t ab_write(const ab_series *s, size_t lo, size_t hi, tsf_encoding enc, tsf_compression comp,
                const tsf_writer_options *o, ab_buf *out, int *lossless, tsf_encoding *picked, size_t *nchunks)
{
    tsf_error e = {0};
    *lossless = 0;
    if (!ab_write_only(s, lo, hi, enc, comp, o, out)) return 0;
    /* read back: every present value bit for bit (one canonical NaN, as every float encoding) */
    tsf_reader *r = NULL;
    if (tsf_reader_open_memory(&r, out->p, out->n, NULL, &e)) return out->n;
    size_t di = 0, j = 0;
    tsf_series_info si;
    if (!tsf_reader_find_device(r, "root.ds.d", &di, &e) && !tsf_reader_find_series(r, di, "v", &j, &e) &&
        !tsf_reader_series_pages(r, di, j, &si, &e)) {
        if (picked) *picked = si.encoding;
        if (nchunks) *nchunks = si.nchunks;
    }
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    tsf_query *q = NULL;
    size_t row = lo, bad = 0;
    if (!tsf_query_open(r, &qo, &q, &e)) {
        const tsf_batch *b;
        while (tsf_query_next(q, &b, &e) == TSF_OK && b) {
            const tsf_column_batch *c = &b->columns[0];
            for (size_t k = 0; k < b->nrows; k++) {
                while (row < hi && !is_valid(s, row)) row++;
                if (row >= hi || b->times[k] != s->times[row]) {
                    bad++;
                    continue;
                }
                const uint64_t *got = (const uint64_t *)c->values + k, *want = (const uint64_t *)s->vals + row;
                if (*got != *want &&
                    !(s->type == TSF_DOUBLE && isnan(*(const double *)got) && isnan(*(const double *)want)))
                    bad++;
                row++;
            }
        }
        while (row < hi && !is_valid(s, row)) row++;
        *lossless = bad == 0 && row == hi && e.code == TSF_OK;
        tsf_query_close(q);
    }
    tsf_reader_close(r);
    return out->n;
}

/* Chunk bytes (header + pages) of a one-series file. */
static uint64_t chunk_bytes(const ab_buf *f)
{
    tsf_walker wk;
    tsf_walk_item it;
    tsf_error e = {0};
    uint64_t sum = 0;
    if (tsf_walk_init(&wk, f->p, f->n, &e)) return 0;
    while (!tsf_walk_next(&wk, &it, &e) && it.kind != TSF_WALK_END)
        if (it.kind == TSF_WALK_CHUNK) sum += it.chunk.header_len + it.chunk.data_size;
    return sum;
}

typedef struct ab_chunk {
    uint64_t bytes;
    size_t points;
} ab_chunk;

/* AUTO's chunks in file order: bytes and points (page bodies decompressed, their times counted). */
static int list_chunks(const ab_buf *f, ab_chunk **out, size_t *n)
{
    tsf_walker wk;
    tsf_walk_item it;
    tsf_error e = {0};
    *n = 0;
    *out = NULL;
    if (tsf_walk_init(&wk, f->p, f->n, &e)) return 1;
    uint8_t *plain = NULL;
    size_t cap = 0;
    int rc = 0;
    while (!rc && !tsf_walk_next(&wk, &it, &e) && it.kind != TSF_WALK_END) {
        if (it.kind == TSF_WALK_CHUNK) {
            ab_chunk *nc = realloc(*out, (*n + 1) * sizeof *nc);
            if (!nc) return 1;
            *out = nc;
            nc[*n] = (ab_chunk){it.chunk.header_len + it.chunk.data_size, 0};
            ++*n;
        } else if (it.kind == TSF_WALK_PAGE && *n) {
            size_t us = it.page.uncompressed_size;
            if (us > cap) {
                uint8_t *np = realloc(plain, us);
                if (!np) {
                    rc = 1;
                    break;
                }
                plain = np;
                cap = us;
            }
            uint32_t tlen = 0;
            size_t h, cnt = 0;
            if (tsf_decompress(it.chunk.compression, it.body, it.body_len, plain, us, &e) ||
                !(h = tsf_get_uvarint32(plain, us, &tlen)) || h + tlen > us ||
                tsf_codec_count(TSF_INT64, TSF_ENC_TS_2DIFF, plain + h, tlen, &cnt, &e))
                rc = 1;
            (*out)[*n - 1].points += cnt;
        }
    }
    free(plain);
    return rc || e.code;
}

/* Smallest digits at which every present value of rows [lo, hi) survives a precision stream, or -1. */
static int32_t window_digits(const ab_series *s, size_t lo, size_t hi)
{
    size_t n = 0;
    double *v = malloc((hi - lo + 1) * sizeof *v);
    if (!v) return -1;
    for (size_t r = lo; r < hi; r++)
        if (is_valid(s, r)) v[n++] = ((const double *)s->vals)[r];
    int32_t d = 0;
    while (d <= 18 && tsf_wauto_prec_first_bad(TSF_DOUBLE, v, n, d) != n) d++;
    free(v);
    return d <= 18 ? d : -1;
}

int ab_check(const ab_series *s, tsf_compression comp, const tsf_writer_options *o, ab_result *res)
{
    memset(res, 0, sizeof *res);
    tsf_writer_options wo;
    if (o)
        wo = *o;
    else
        tsf_writer_options_init(&wo);
    ab_buf fa = {0}, fb = {0};
    int ok = 0, rc = 0;
    if (!ab_write(s, 0, s->n, TSF_ENCODING_AUTO, comp, &wo, &fa, &res->lossless, NULL, NULL)) {
        free(fa.p);
        return 1;
    }
    ab_chunk *ch = NULL;
    size_t nch = 0;
    if (list_chunks(&fa, &ch, &nch)) rc = 1;
    res->nchunks = nch;
    size_t row = 0;
    for (size_t i = 0; i < nch && !rc; i++) {
        size_t lo = row, seen = 0;
        while (row < s->n && seen < ch[i].points) seen += is_valid(s, row++);
        while (row < s->n && !is_valid(s, row)) row++;
        uint64_t best = UINT64_MAX;
        tsf_encoding be = (tsf_encoding)-1;
        for (int e = 0; e <= TSF_ENC_RLBE; e++) {
            if (!tsf_codec_can_encode(s->type, (tsf_encoding)e)) continue;
            tsf_writer_options fo = wo;
            fo.memory_budget = (size_t)1 << 30; /* the chunk's rows as one chunk */
            if (s->type == TSF_DOUBLE && (e == TSF_ENC_TS_2DIFF || e == TSF_ENC_RLE)) {
                fo.float_precision = window_digits(s, lo, row);
                if (fo.float_precision < 0) continue;
            }
            if (!ab_write(s, lo, row, (tsf_encoding)e, comp, &fo, &fb, &ok, NULL, NULL) || !ok) continue;
            uint64_t b = chunk_bytes(&fb);
            if (b && b < best) best = b, be = (tsf_encoding)e;
        }
        if (best == UINT64_MAX) {
            rc = 1;
            break;
        }
        res->auto_bytes += ch[i].bytes;
        res->best_bytes += best;
        double over = (double)ch[i].bytes / (double)best - 1.0;
        if (i == 0 || over > res->worst) {
            res->worst = over;
            res->worst_chunk = i;
            res->worst_best = be;
        }
    }
    free(ch);
    free(fa.p);
    free(fb.p);
    return rc;
}
