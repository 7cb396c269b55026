/*
 * cmd_convert.c - `tsf convert IN -o OUT [--encoding ...] [--compression ...] [--page-points N]`:
 * rewrites a file through the reader (one query per device) and the writer (one tablet per batch), keeping
 * the model, devices, series, types and column categories. Encodings become AUTO (the writer picks the
 * smallest lossless one per chunk) unless --encoding overrides (default or per column) or --keep-encodings
 * keeps the input's, except that FLOAT/DOUBLE columns in a lossy precision form (TS_2DIFF, RLE, SPRINTZ,
 * RLBE) become GORILLA so that every value keeps its bits. Compressions are kept unless overridden.
 * Reports the size change.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "outfile.h"

typedef struct conv {
    const char *cmd; /* for messages: convert, or the command copying time ranges (cli_copy_range) */
    const char *in, *out;
    int64_t tmin, tmax; /* the rows copied */
    csv_kvlist enc, comp;
    tsf_reader *r;
    tsf_writer *w;
    uint64_t rows, points;
    int keep_enc; /* --keep-encodings */
    int progress; /* a progress line on stderr: on a terminal for large files, or --progress */
    uint64_t total; /* points of IN (its index), for the progress line */
    time_t shown;   /* when the progress line was last written */
} conv;

/* The progress line (\r-rewritten, at most once a second; `last` forces the final one). */
static void show_progress(conv *c, int last)
{
    time_t now = time(NULL);
    if (!c->progress || (!last && now == c->shown)) return;
    c->shown = now;
    fprintf(stderr, "\rconvert %s: %3d%% %" PRIu64 " of %" PRIu64 " points%s", c->in,
            (int)(c->total ? (c->points >= c->total ? 100 : c->points * 100 / c->total) : 100), c->points, c->total,
            last ? "\n" : "");
}

/* Points of every series of IN, from its index. */
static uint64_t count_points(tsf_reader *r)
{
    uint64_t n = 0;
    for (size_t d = 0, nd = tsf_reader_device_count(r); d < nd; d++) {
        tsf_device_info di;
        if (tsf_reader_device(r, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            if (!tsf_reader_series(r, d, j, &si, NULL)) n += si.stats.count;
        }
    }
    return n;
}

static int werr(conv *c, const tsf_error *e)
{
    cli_err(c->cmd, "%s: %s", c->out, e->message);
    return e->code == TSF_EIO ? CLI_IO : e->code == TSF_EINVAL ? CLI_USAGE : CLI_DAMAGED;
}

static int rerr(conv *c, const tsf_error *e)
{
    cli_err(c->cmd, "%s: %s", c->in, e->message);
    return cli_exit_code(e->code);
}

/* Encoding/compression of a column: the overrides, else what the input used. */
static int codec(conv *c, const char *name, tsf_type t, tsf_encoding *e, tsf_compression *k)
{
    char msg[256];
    int lossy = (t == TSF_FLOAT || t == TSF_DOUBLE) && (*e == TSF_ENC_TS_2DIFF || *e == TSF_ENC_RLE ||
                                                       *e == TSF_ENC_SPRINTZ || *e == TSF_ENC_RLBE);
    /* the float forms of these encodings keep a precision the file does not record: re-encoding them at
     * the writer's precision would change values, so such columns become GORILLA (lossless) */
    if (!c->keep_enc)
        *e = TSF_ENCODING_AUTO;
    else if (lossy || (int)*e < 0 || !tsf_codec_can_encode(t, *e))
        *e = csv_default_encoding(t);
    if ((int)*k < 0 || !tsf_compression_supported(*k)) *k = TSF_LZ4;
    if (csv_column_codec(&c->enc, &c->comp, name, t, e, k, msg, sizeof msg)) {
        cli_err(c->cmd, "%s", msg);
        return CLI_USAGE;
    }
    return 0;
}

/* Copies the rows of device d: one query, one tablet per batch (table devices get their tag values). */
static int copy_device(conv *c, size_t d, const char *target, const char **names, size_t ncols, size_t ntags)
{
    tsf_error e = {0};
    tsf_query_options o;
    tsf_query_options_init(&o);
    o.devices = &d;
    o.ndevices = 1;
    o.time_min = c->tmin;
    o.time_max = c->tmax;
    o.columns = names + ntags;
    o.ncolumns = ncols - ntags;
    tsf_tablet *t = NULL;
    tsf_query *q = NULL;
    tsf_bytes *tags = NULL;
    uint8_t *tag_valid = NULL;
    int rc = 0;
    if (tsf_tablet_new(c->w, target, names, ncols, o.batch_size, &t, &e)) {
        rc = werr(c, &e);
        goto done;
    }
    if (ntags) {
        tags = calloc(ntags * o.batch_size, sizeof *tags);
        tag_valid = calloc(ntags, (o.batch_size + 7) / 8);
        if (!tags || !tag_valid) {
            rc = CLI_IO;
            goto done;
        }
        for (size_t k = 0; k < ntags; k++) {
            tsf_bytes seg = {0};
            tsf_reader_device_segment(c->r, d, k + 1, &seg, NULL);
            for (size_t i = 0; i < o.batch_size; i++) tags[k * o.batch_size + i] = seg;
            if (seg.data) memset(tag_valid + k * ((o.batch_size + 7) / 8), 0xff, (o.batch_size + 7) / 8);
        }
    }
    const tsf_batch *b;
    if (tsf_query_open(c->r, &o, &q, &e)) {
        rc = rerr(c, &e);
        goto done;
    }
    for (;;) {
        if (tsf_query_next(q, &b, &e)) {
            rc = rerr(c, &e);
            goto done;
        }
        if (!b) break;
        if (tsf_tablet_set_times(t, b->times, b->nrows, &e)) goto wbad;
        for (size_t k = 0; k < ntags; k++)
            if (tsf_tablet_set_column(t, k, tags + k * o.batch_size, tag_valid + k * ((o.batch_size + 7) / 8),
                                      b->nrows, &e))
                goto wbad;
        for (size_t j = 0; j < b->ncolumns; j++) {
            const tsf_column_batch *cb = &b->columns[j];
            if (tsf_tablet_set_column(t, ntags + j, cb->values, cb->validity, b->nrows, &e)) goto wbad;
            for (size_t i = 0; i < b->nrows; i++) c->points += (cb->validity[i >> 3] >> (i & 7)) & 1;
        }
        c->rows += b->nrows;
        if (tsf_writer_write_tablet(c->w, t, &e)) goto wbad;
        show_progress(c, 0);
    }
    goto done;
wbad:
    rc = werr(c, &e);
done:
    tsf_query_close(q);
    tsf_tablet_free(t);
    free(tags);
    free(tag_valid);
    return rc;
}

/* Table model: registers every table with its schema, then copies its devices. */
static int copy_table(conv *c, const tsf_table_info *ti)
{
    tsf_column_schema *cs = calloc(ti->ncolumns, sizeof *cs);
    const char **names = calloc(ti->ncolumns, sizeof *names);
    size_t ntags = 0, n = 0;
    int rc = CLI_IO;
    if (!cs || !names) goto done;
    for (int pass = 0; pass < 2; pass++) /* tags first: the tablet's column order */
        for (size_t i = 0; i < ti->ncolumns; i++) {
            const tsf_table_column *tc = &ti->columns[i];
            if ((pass == 0) != (tc->category == TSF_COLUMN_TAG)) continue;
            cs[n] = (tsf_column_schema){tc->name, tc->type, tc->encoding, tc->compression, tc->category};
            if (tc->category == TSF_COLUMN_FIELD && (rc = codec(c, tc->name, tc->type, &cs[n].encoding,
                                                                &cs[n].compression)))
                goto done;
            if (tc->category != TSF_COLUMN_ATTRIBUTE) names[n] = tc->name;
            ntags += tc->category == TSF_COLUMN_TAG;
            n++;
        }
    tsf_error e = {0};
    if (tsf_writer_register_table(c->w, ti->name, cs, n, &e)) {
        rc = werr(c, &e);
        goto done;
    }
    size_t nn = 0; /* tablet columns: tags and fields (attributes are not stored) */
    for (size_t i = 0; i < n; i++)
        if (names[i]) names[nn++] = names[i];
    rc = 0;
    for (size_t d = ti->first_device; d < ti->first_device + ti->ndevices && !rc; d++)
        rc = copy_device(c, d, ti->name, names, nn, ntags);
done:
    free(cs);
    free(names);
    return rc;
}

/* Tree model: registers the device's series (aligned or not) and copies it. */
static int copy_tree_device(conv *c, size_t d)
{
    tsf_error e = {0};
    tsf_device_info di;
    if (tsf_reader_device(c->r, d, &di, &e)) return rerr(c, &e);
    if (!di.nseries) return 0;
    tsf_column_schema *cs = calloc(di.nseries, sizeof *cs);
    const char **names = calloc(di.nseries, sizeof *names);
    int rc = CLI_IO;
    if (!cs || !names) goto done;
    for (size_t j = 0; j < di.nseries; j++) {
        tsf_series_info si;
        if (tsf_reader_series_pages(c->r, d, j, &si, &e)) {
            rc = rerr(c, &e);
            goto done;
        }
        cs[j] = (tsf_column_schema){si.measurement, si.type, si.encoding, si.compression, TSF_COLUMN_FIELD};
        if ((rc = codec(c, si.measurement, si.type, &cs[j].encoding, &cs[j].compression))) goto done;
        names[j] = si.measurement;
    }
    rc = 0;
    if (di.aligned) {
        if (tsf_writer_register_aligned(c->w, di.name, cs, di.nseries, &e)) rc = werr(c, &e);
    } else {
        for (size_t j = 0; j < di.nseries && !rc; j++)
            if (tsf_writer_register_series(c->w, di.name, &cs[j], &e)) rc = werr(c, &e);
    }
    if (!rc) rc = copy_device(c, d, di.name, names, di.nseries, 0);
done:
    free(cs);
    free(names);
    return rc;
}

/* Every table and tree device of c->r into c->w. */
static int copy_all(conv *c)
{
    tsf_error e = {0};
    int rc = 0;
    size_t nt = tsf_reader_table_count(c->r);
    for (size_t t = 0; t < nt && !rc; t++) {
        tsf_table_info ti;
        if (tsf_reader_table(c->r, t, &ti, &e)) return rerr(c, &e);
        if (ti.ncolumns)
            rc = copy_table(c, &ti);
        else
            for (size_t d = ti.first_device; d < ti.first_device + ti.ndevices && !rc; d++)
                rc = copy_tree_device(c, d);
    }
    return rc;
}

int cli_copy_range(const char *cmd, tsf_reader *r, const char *in, const char *out, int64_t tmin, int64_t tmax,
                   tsf_writer_options *wo, uint64_t *rows, uint64_t *points)
{
    conv c = {0};
    c.cmd = cmd;
    c.in = in;
    c.out = out;
    c.r = r;
    c.tmin = tmin;
    c.tmax = tmax;
    c.keep_enc = 1;
    int rc = cli_writer_open(cmd, out, wo, &c.w);
    if (rc) return rc;
    if ((rc = copy_all(&c))) {
        cli_writer_discard(c.w);
        return rc;
    }
    *rows = c.rows;
    *points = c.points;
    return cli_writer_close(cmd, c.w, out);
}

static void usage(FILE *f)
{
    fputs("usage: tsf convert IN -o OUT [options]\n"
          "  rewrites IN (same devices, series, types) and reports the size change\n"
          "  --encoding ENC|col=ENC   new encoding for every column it can encode, or for one column\n"
          "                           (default AUTO: the smallest lossless encoding per chunk)\n"
          "  --keep-encodings         keep IN's encodings (lossy FLOAT/DOUBLE forms become GORILLA)\n"
          "  --compression C|col=C    new compression (UNCOMPRESSED, SNAPPY, GZIP, LZ4, ZSTD, LZMA2)\n"
          "  --page-points N          points per page (default 10000)\n"
          "  --page-index             also write the page-time index OUT.tsfidx (see tsf index)\n"
          "  --no-check               trust IN: do not compare decoded pages with their statistics\n"
          "  --flush-interval MS      write complete chunk groups at least every MS milliseconds\n"
          "                           (default 1000; 0 = by memory only)\n"
          "  -f, --force              replace OUT when it exists (default: refuse)\n"
          "  -q, --quiet              no report, no progress line\n"
          "  --progress               a progress line on stderr also when it is not a terminal (by\n"
          "                           default only a terminal shows one, for inputs over 1M points)\n"
          "exit codes: 0 ok, 1 usage, 2 damaged input, 3 I/O error\n",
          f);
}

int tsf_cmd_convert(int argc, char **argv)
{
    conv c = {0};
    c.cmd = "convert";
    c.tmin = INT64_MIN;
    c.tmax = INT64_MAX;
    uint64_t page_points = 0, flush_ms = 1000;
    int quiet = 0, page_index = 0, checked = 1, force = 0, progress = 0, rc = CLI_USAGE;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            usage(stdout);
            rc = CLI_OK;
            goto out;
        } else if (cli_value(&a, "-o|--output")) {
            c.out = a.val;
        } else if (cli_value(&a, "--encoding")) {
            if (!a.bad && csv_kv_add(&c.enc, a.val)) goto out;
        } else if (cli_value(&a, "--compression")) {
            if (!a.bad && csv_kv_add(&c.comp, a.val)) goto out;
        } else if (cli_value(&a, "--page-points")) {
            if (!a.bad && (cli_parse_u64(a.val, &page_points) || !page_points || page_points > 100000000)) {
                cli_err("convert", "--page-points: a point count, not '%s'", a.val);
                goto out;
            }
        } else if (cli_is(&a, "-q|--quiet")) {
            quiet = 1;
        } else if (cli_is(&a, "--progress")) {
            progress = 1;
        } else if (cli_is(&a, "--page-index")) {
            page_index = 1;
        } else if (cli_is(&a, "--keep-encodings")) {
            c.keep_enc = 1;
        } else if (cli_is(&a, "--no-check")) {
            checked = 0;
        } else if (cli_is(&a, "-f|--force")) {
            force = 1;
        } else if (cli_value(&a, "--flush-interval")) {
            if (!a.bad && (cli_parse_u64(a.val, &flush_ms) || flush_ms > 86400000)) {
                cli_err("convert", "--flush-interval: milliseconds from 0 to 86400000, not '%s'", a.val);
                goto out;
            }
        } else if (cli_positional(&a) && !c.in) {
            c.in = a.arg;
        } else if (cli_positional(&a)) {
            cli_err("convert", "one input file expected (got '%s' and '%s')", c.in, a.arg);
            goto out;
        } else {
            cli_unknown(&a);
            goto out;
        }
    }
    if (a.bad) goto out;
    if (!c.in || !c.out) {
        cli_err("convert", "give IN and -o OUT (see tsf convert --help)");
        goto out;
    }
    if (csv_codec_lists_valid("convert", &c.enc, &c.comp)) goto out;
    if ((rc = cli_out_refuse_existing("convert", c.out, force))) goto out;
    if ((rc = cli_open_reader_checked("convert", c.in, checked, &c.r))) goto out;
    c.total = count_points(c.r);
    c.progress = !quiet && (progress || (isatty(2) && c.total > 1000000));
    c.shown = time(NULL);
    tsf_writer_options wo;
    tsf_writer_options_init(&wo);
    if (page_points) wo.page_max_points = (uint32_t)page_points;
    wo.page_index = page_index;
    wo.flush_interval_ms = (uint32_t)flush_ms;
    if ((rc = cli_writer_open("convert", c.out, &wo, &c.w))) goto out;
    rc = copy_all(&c);
    if (rc) {
        if (c.progress) fputc('\n', stderr);
        cli_writer_discard(c.w);
        goto out;
    }
    if ((rc = cli_writer_close("convert", c.w, c.out))) goto out;
    show_progress(&c, 1);
    if (!quiet) {
        struct stat si, so;
        uint64_t a_sz = stat(c.in, &si) ? 0 : (uint64_t)si.st_size, b_sz = stat(c.out, &so) ? 0 : (uint64_t)so.st_size;
        printf("%s: %" PRIu64 " bytes -> %s: %" PRIu64 " bytes (%+.1f%%), %" PRIu64 " rows, %" PRIu64 " points\n", c.in,
               a_sz, c.out, b_sz, a_sz ? 100.0 * ((double)b_sz - (double)a_sz) / (double)a_sz : 0.0, c.rows, c.points);
    }
out:
    tsf_reader_close(c.r);
    csv_kv_free(&c.enc);
    csv_kv_free(&c.comp);
    return rc;
}
