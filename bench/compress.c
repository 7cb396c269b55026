/*
 * compress.c - `tsf-bench compress`: every series of the real-data collection
 * (../shared/datasets, listed in its MANIFEST.md) written as a one-series TsFile with the Java
 * defaults (GORILLA for DOUBLE, TS_2DIFF for integers), with TSF_ENCODING_AUTO, and with each legal
 * encoding, all with one compression (LZ4 unless --compression). Reports file bytes per point per
 * series and in total next to the CSV's bytes per point, and whether each file reads back bit for
 * bit (FLOAT/DOUBLE TS_2DIFF/RLE at the default precision 2, SPRINTZ and RLBE may not: marked '*').
 *
 * usage: tsf-bench compress [--data DIR] [--compression C] [--lz4-probe 0|1] [--json]
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
} obuf;

static int obuf_write(void *ud, const void *data, size_t len)
{
    obuf *m = ud;
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

/* One series: a value column of a CSV file. */
typedef struct series {
    char name[640];
    tsf_type type; /* TSF_DOUBLE or TSF_INT64 */
    size_t n;      /* rows */
    int64_t *times;
    void *vals;     /* double or int64_t */
    uint8_t *valid; /* LSB-first; empty CSV cells are null */
    size_t present; /* non-null points */
    double csv_bpp; /* CSV file bytes / (rows x value columns) */
} series;

static const char *find_dir(int argc, char **argv)
{
    static char buf[1024];
    /* --data, $TSF_SHARED_DIR/datasets, or ../shared/datasets seen from the repo or a build folder */
    const char *d = bench_opt(argc, argv, "--data");
    if (d) return d;
    const char *env = getenv("TSF_SHARED_DIR");
    const char *cand[] = {"../shared/datasets", "../../shared/datasets", "../../../shared/datasets"};
    struct stat st;
    if (env) {
        snprintf(buf, sizeof buf, "%s/datasets", env);
        if (stat(buf, &st) == 0) return buf;
    }
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
        if (stat(cand[i], &st) == 0) return cand[i];
    return NULL;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[sz] = 0;
        *len = (size_t)sz;
    }
    return p;
}

/* Splits a CSV file "time,c1,..." into one series per value column (appended to *out). */
static int load_csv(const char *dir, const char *rel, tsf_type type, series **out, size_t *nout)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text) {
        fprintf(stderr, "compress bench: cannot read %s\n", path);
        return 1;
    }
    char *line = text, *eol = strchr(line, '\n');
    if (!eol) {
        free(text);
        return 1;
    }
    *eol = 0;
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
    series *s = realloc(*out, (*nout + ncol) * sizeof *s);
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

/* Reads MANIFEST.md: table rows "| `file` | ... | double (...) | ..." or "int (...)". */
static int load_manifest(const char *dir, series **out, size_t *nout)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/MANIFEST.md", dir);
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text) {
        fprintf(stderr, "compress bench: cannot read %s\n", path);
        return 1;
    }
    int rc = 0;
    char *next = text;
    while (next && *next && !rc) {
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
        if (type != TSF_VECTOR) rc = load_csv(dir, rel, type, out, nout);
    }
    free(text);
    return rc;
}

/* Writes one series; returns the file size (0 on failure) and, for AUTO, what was picked. */
static int g_lz4_probe = 1; /* writer option lz4_probe (--lz4-probe 0|1); set once before any write */

static size_t write_series(const series *s, tsf_encoding enc, tsf_compression comp, obuf *out, int *lossless,
                           tsf_encoding *picked, size_t *nchunks)
{
    tsf_error e = {0};
    tsf_writer *w = NULL;
    tsf_write_callbacks cb = {sizeof cb, obuf_write, NULL, out};
    out->n = 0;
    tsf_column_schema sc = {"v", s->type, enc, comp, TSF_COLUMN_FIELD};
    tsf_tablet *t = NULL;
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    wo.lz4_probe = g_lz4_probe;
    wo.gorilla_compact = 0; /* the Java defaults' bytes (GORILLA windows as Java picks them) */
    if (tsf_writer_open_callbacks(&w, &cb, &wo, &e) || tsf_writer_register_series(w, "root.ds.d", &sc, &e) ||
        tsf_tablet_new(w, "root.ds.d", NULL, 0, s->n ? s->n : 1, &t, &e) ||
        tsf_tablet_set_times(t, s->times, s->n, &e) ||
        tsf_tablet_set_column(t, 0, s->vals, s->valid, s->n, &e) || tsf_writer_write_tablet(w, t, &e)) {
        fprintf(stderr, "compress bench: %s: %s\n", s->name, e.message);
        tsf_tablet_free(t);
        tsf_writer_abort(w);
        return 0;
    }
    tsf_tablet_free(t);
    if (tsf_writer_close(w, &e)) {
        fprintf(stderr, "compress bench: %s: %s\n", s->name, e.message);
        return 0;
    }
    /* read back: every present value bit for bit (one canonical NaN, as every float encoding) */
    tsf_reader *r = NULL;
    *lossless = 0;
    if (tsf_reader_open_memory(&r, out->p, out->n, NULL, &e)) return out->n;
    size_t di = 0, j = 0;
    tsf_series_info si;
    if (!tsf_reader_find_device(r, "root.ds.d", &di, &e) && !tsf_reader_find_series(r, di, "v", &j, &e) &&
        !tsf_reader_series_pages(r, di, j, &si, &e)) {
        *picked = si.encoding;
        *nchunks = si.nchunks;
    }
    tsf_query_options o;
    tsf_query_options_init(&o);
    tsf_query *q = NULL;
    size_t row = 0, bad = 0;
    if (!tsf_query_open(r, &o, &q, &e)) {
        const tsf_batch *b;
        while (tsf_query_next(q, &b, &e) == TSF_OK && b) {
            const tsf_column_batch *c = &b->columns[0];
            for (size_t k = 0; k < b->nrows; k++) {
                while (row < s->n && !((s->valid[row >> 3] >> (row & 7)) & 1)) row++;
                if (row >= s->n || b->times[k] != s->times[row]) {
                    bad++;
                    continue;
                }
                const uint64_t *got = (const uint64_t *)c->values + k,
                               *want = (const uint64_t *)s->vals + row;
                if (*got != *want &&
                    !(s->type == TSF_DOUBLE && isnan(*(const double *)got) && isnan(*(const double *)want)))
                    bad++;
                row++;
            }
        }
        while (row < s->n && !((s->valid[row >> 3] >> (row & 7)) & 1)) row++;
        *lossless = bad == 0 && row == s->n && e.code == TSF_OK;
        tsf_query_close(q);
    }
    tsf_reader_close(r);
    return out->n;
}

#define NCFG (2 + TSF_ENC_RLBE + 1)

int bench_compress(int argc, char **argv)
{
    int json = bench_flag(argc, argv, "--json");
    g_lz4_probe = (int)bench_opt_ll(argc, argv, "--lz4-probe", 1);
    tsf_compression comp = TSF_LZ4;
    const char *cs = bench_opt(argc, argv, "--compression");
    if (cs && tsf_compression_parse(cs, &comp)) {
        fprintf(stderr, "compress bench: unknown compression %s\n", cs);
        return 1;
    }
    const char *dir = find_dir(argc, argv);
    if (!dir) {
        fprintf(stderr, "compress bench: ../shared/datasets not found (use --data DIR)\n");
        return 1;
    }
    series *ss = NULL;
    size_t ns = 0;
    if (load_manifest(dir, &ss, &ns) || ns == 0) {
        fprintf(stderr, "compress bench: no series loaded from %s\n", dir);
        return 1;
    }
    /* configurations: 0 = Java default, 1 = AUTO, 2 + e = encoding e */
    double tot_bytes[NCFG] = {0}, tot_pts[NCFG] = {0}, tot_csv = 0, all_pts = 0;
    int tot_lossy[NCFG] = {0}, tot_all[NCFG];
    for (int k = 0; k < NCFG; k++) tot_all[k] = 1;
    size_t auto_worse = 0;
    obuf out = {0};
    if (!json) {
        bench_print_machine(stdout);
        printf("compress: %zu series from %s, %s; bytes/point of the whole file ('*' = does not read back "
               "bit for bit, '-' = illegal)\n",
               ns, dir, tsf_compression_name(comp));
        printf("%-58s %5s %6s %7s %7s %-9s", "series", "type", "csv", "default", "auto", "picked");
        for (int e = 0; e <= TSF_ENC_RLBE; e++)
            if (tsf_encoding_name((tsf_encoding)e) && (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) ||
                                                       tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e)))
                printf(" %9.9s", tsf_encoding_name((tsf_encoding)e));
        printf("\n");
    }
    int rc = 0;
    for (size_t i = 0; i < ns && !rc; i++) {
        series *s = &ss[i];
        double pts = (double)(s->present ? s->present : 1);
        double bpp[NCFG];
        int ok[NCFG];
        tsf_encoding picked = (tsf_encoding)-1;
        size_t nch = 0;
        for (int k = 0; k < NCFG; k++) {
            bpp[k] = -1;
            tsf_encoding enc = k == 0   ? (s->type == TSF_DOUBLE ? TSF_ENC_GORILLA : TSF_ENC_TS_2DIFF)
                               : k == 1 ? TSF_ENCODING_AUTO
                                        : (tsf_encoding)(k - 2);
            if (k >= 2 && !tsf_codec_can_encode(s->type, enc)) {
                tot_all[k] = 0;
                continue;
            }
            tsf_encoding pk = enc;
            size_t nc = 0;
            size_t bytes = write_series(s, enc, comp, &out, &ok[k], &pk, &nc);
            if (!bytes) {
                rc = 1;
                break;
            }
            if (k == 1) {
                picked = pk;
                nch = nc;
            }
            bpp[k] = (double)bytes / pts;
            tot_bytes[k] += (double)bytes;
            tot_pts[k] += pts;
            tot_lossy[k] += !ok[k];
            if (json) {
                printf("{\"bench\":\"compress\",\"series\":\"%s\",\"type\":\"%s\",\"encoding\":\"%s\","
                       "\"compression\":\"%s\",\"bytes_per_point\":%.4f,\"csv_bytes_per_point\":%.4f,"
                       "\"lossless\":%s,\"points\":%zu,\"file_bytes\":%zu",
                       s->name, tsf_type_name(s->type),
                       k == 0   ? "default"
                       : k == 1 ? "auto"
                                : tsf_encoding_name(enc),
                       tsf_compression_name(comp), bpp[k], s->csv_bpp, ok[k] ? "true" : "false", s->present,
                       bytes);
                if (k == 1)
                    printf(",\"picked\":\"%s\",\"chunks\":%zu",
                           tsf_encoding_name(pk) ? tsf_encoding_name(pk) : "?", nc);
                printf("}\n");
            }
        }
        if (rc) break;
        if (bpp[1] > bpp[0]) auto_worse++;
        if (!ok[1]) fprintf(stderr, "compress bench: %s: AUTO did not read back bit for bit\n", s->name);
        tot_csv += s->csv_bpp * pts;
        all_pts += pts;
        if (!json) {
            const char *nm = s->name;
            size_t l = strlen(nm);
            printf("%-58s %5s %6.2f %6.3f%s %6.3f%s %-9s", l > 58 ? nm + l - 58 : nm,
                   s->type == TSF_DOUBLE ? "dbl" : "int", s->csv_bpp, bpp[0], ok[0] ? " " : "*", bpp[1],
                   ok[1] ? " " : "*", tsf_encoding_name(picked) ? tsf_encoding_name(picked) : "?");
            for (int e = 0; e <= TSF_ENC_RLBE; e++)
                if (tsf_encoding_name((tsf_encoding)e) &&
                    (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) ||
                     tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e))) {
                    if (bpp[2 + e] < 0)
                        printf(" %9s", "-");
                    else
                        printf(" %8.3f%s", bpp[2 + e], ok[2 + e] ? " " : "*");
                }
            if (nch > 1) printf("  (AUTO: %zu chunks)", nch);
            printf("\n");
        }
    }
    if (!rc) {
        if (json) {
            for (int k = 0; k < NCFG; k++) {
                if (!tot_pts[k]) continue;
                printf(
                    "{\"bench\":\"compress\",\"series\":\"TOTAL%s\",\"encoding\":\"%s\",\"compression\":\"%"
                    "s\","
                    "\"bytes_per_point\":%.4f,\"csv_bytes_per_point\":%.4f,\"lossless\":%s,\"points\":%.0f",
                    tot_all[k] ? "" : " (series where legal)",
                    k == 0   ? "default"
                    : k == 1 ? "auto"
                             : tsf_encoding_name((tsf_encoding)(k - 2)),
                    tsf_compression_name(comp), tot_bytes[k] / tot_pts[k], tot_csv / all_pts,
                    tot_lossy[k] ? "false" : "true", tot_pts[k]);
                if (k == 1) printf(",\"auto_larger_than_default\":%zu", auto_worse);
                printf("}\n");
            }
        } else {
            printf("%-58s %5s %6.2f %6.3f%s %6.3f%s %-9s", "TOTAL (bytes / points)", "", tot_csv / all_pts,
                   tot_bytes[0] / tot_pts[0], tot_lossy[0] ? "*" : " ", tot_bytes[1] / tot_pts[1],
                   tot_lossy[1] ? "*" : " ", "");
            for (int e = 0; e <= TSF_ENC_RLBE; e++)
                if (tsf_encoding_name((tsf_encoding)e) &&
                    (tsf_codec_can_encode(TSF_DOUBLE, (tsf_encoding)e) ||
                     tsf_codec_can_encode(TSF_INT64, (tsf_encoding)e))) {
                    if (!tot_pts[2 + e])
                        printf(" %9s", "-");
                    else
                        printf(" %8.3f%s", tot_bytes[2 + e] / tot_pts[2 + e], tot_lossy[2 + e] ? "*" : " ");
                }
            printf("\n(encodings legal for one type only total over the series of that type)\n");
            printf("AUTO larger than the Java default on %zu of %zu series; AUTO lossy on %d series\n",
                   auto_worse, ns, tot_lossy[1]);
        }
    }
    for (size_t i = 0; i < ns; i++) {
        free(ss[i].times);
        free(ss[i].vals);
        free(ss[i].valid);
    }
    free(ss);
    free(out.p);
    return rc;
}
