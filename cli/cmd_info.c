/*
 * cmd_info.c - `tsf info FILE [--json]`: what a file holds and what it costs: format version, model
 * (tree / table), tables, devices and series with type, encoding, compression, time range, point count,
 * chunks, pages, bytes per series (page bodies compressed and uncompressed, chunk bytes on disk) and the
 * compression ratio. Counts and time ranges come from the index (TimeseriesMetadata statistics, spec
 * §7-§9); encoding, compression, pages and bytes from the chunk and page headers
 * (tsf_reader_series_pages), so page bodies are never read. Several files, a directory or a pattern: the
 * dataset's files and series from tsf_dataset_open's metadata.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *HELP =
    "usage: tsf info FILE [--json]\n"
    "       tsf info FILE|DIR|PATTERN... [--json]   (several files, a directory, a quoted pattern: a dataset)\n"
    "Prints the format version, the model, the tables, and per series: type, encoding, compression,\n"
    "points, time range, chunks, pages, bytes (page bodies as stored), raw bytes (after decompression)\n"
    "and the compression ratio raw/bytes. Reads only the index and the chunk and page headers.\n"
    "A dataset prints its files (bytes, points, time range, devices) and its series over the files (type,\n"
    "points, time range, files holding it), from each file's index only.\n"
    "  --json         one JSON object instead of text\n"
    "  --cache FILE   datasets: metadata cache of the files (made when missing, refreshed for changed\n"
    "                 files; doc/dataset.md)\n";

typedef struct totals {
    uint64_t series, points, chunks, pages, disk, bytes, raw;
    int64_t tmin, tmax;
    int any_time;
} totals;

static const char *nz(const char *s)
{
    return s ? s : "?";
}

/* raw / stored; NaN (JSON null) without stored bytes */
static double ratio(uint64_t raw, uint64_t bytes)
{
    return bytes ? (double)raw / (double)bytes : NAN;
}

static void json_series(const tsf_device_info *di, const tsf_series_info *si, int first)
{
    fputs(first ? "\n    {\"device\": " : ",\n    {\"device\": ", stdout);
    cli_json_str(stdout, di->name);
    fputs(", \"series\": ", stdout);
    cli_json_str(stdout, si->measurement);
    printf(", \"aligned\": %s, \"type\": \"%s\", \"encoding\": \"%s\", \"compression\": \"%s\", \"points\": %" PRIu64,
           di->aligned ? "true" : "false", nz(tsf_type_name(si->type)), nz(tsf_encoding_name(si->encoding)),
           nz(tsf_compression_name(si->compression)), si->stats.count);
    if (si->stats.count)
        printf(", \"start_time\": %" PRId64 ", \"end_time\": %" PRId64, si->stats.start_time, si->stats.end_time);
    else
        fputs(", \"start_time\": null, \"end_time\": null", stdout);
    printf(", \"chunks\": %zu, \"pages\": %zu, \"disk_bytes\": %" PRIu64 ", \"bytes\": %" PRIu64
           ", \"raw_bytes\": %" PRIu64 ", \"ratio\": ",
           si->nchunks, si->npages, si->disk_bytes, si->page_bytes, si->page_bytes_raw);
    cli_json_num(stdout, ratio(si->page_bytes_raw, si->page_bytes));
    fputc('}', stdout);
}

/* Collects every series (text rows into t, or JSON) and the totals. Returns an exit code. */
static int walk(tsf_reader *r, const char *path, int json, cli_table *t, totals *tot)
{
    size_t nd = tsf_reader_device_count(r);
    for (size_t d = 0; d < nd; d++) {
        tsf_device_info di;
        tsf_error e = {0};
        if (tsf_reader_device(r, d, &di, &e)) {
            cli_err("info", "%s: %s", path, e.message);
            return cli_exit_code(e.code);
        }
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            if (tsf_reader_series_pages(r, d, j, &si, &e)) {
                cli_err("info", "%s: device %s: %s", path, di.name, e.message);
                return cli_exit_code(e.code);
            }
            tot->series++;
            tot->points += si.stats.count;
            tot->chunks += si.nchunks;
            tot->pages += si.npages;
            tot->disk += si.disk_bytes;
            tot->bytes += si.page_bytes;
            tot->raw += si.page_bytes_raw;
            if (si.stats.count) {
                if (!tot->any_time || si.stats.start_time < tot->tmin) tot->tmin = si.stats.start_time;
                if (!tot->any_time || si.stats.end_time > tot->tmax) tot->tmax = si.stats.end_time;
                tot->any_time = 1;
            }
            if (json) {
                json_series(&di, &si, tot->series == 1);
                continue;
            }
            cli_table_add(t, "%s", di.name);
            cli_table_add(t, "%s", si.measurement);
            cli_table_add(t, "%s", nz(tsf_type_name(si.type)));
            cli_table_add(t, "%s", nz(tsf_encoding_name(si.encoding)));
            cli_table_add(t, "%s", nz(tsf_compression_name(si.compression)));
            cli_table_add(t, "%" PRIu64, si.stats.count);
            if (si.stats.count) {
                cli_table_add(t, "%" PRId64, si.stats.start_time);
                cli_table_add(t, "%" PRId64, si.stats.end_time);
            } else {
                cli_table_add(t, "-");
                cli_table_add(t, "-");
            }
            cli_table_add(t, "%zu", si.nchunks);
            cli_table_add(t, "%zu", si.npages);
            cli_table_add(t, "%" PRIu64, si.page_bytes);
            cli_table_add(t, "%" PRIu64, si.page_bytes_raw);
            if (si.page_bytes)
                cli_table_add(t, "%.2f", ratio(si.page_bytes_raw, si.page_bytes));
            else
                cli_table_add(t, "-");
        }
    }
    return CLI_OK;
}

static const char *model_name(tsf_reader *r, size_t *ntables_out)
{
    size_t nt = tsf_reader_table_count(r), ntab = 0, ntree = 0;
    for (size_t i = 0; i < nt; i++) {
        tsf_table_info ti;
        if (tsf_reader_table(r, i, &ti, NULL)) continue;
        if (ti.ncolumns)
            ntab++;
        else if (ti.ndevices)
            ntree++;
    }
    *ntables_out = ntab;
    return ntab && ntree ? "tree and table" : ntab ? "table" : ntree ? "tree" : "empty";
}

/* ---- datasets: what tsf_dataset_open read from the files' metadata ---- */

static void put_range(cli_table *t, int64_t lo, int64_t hi)
{
    if (lo > hi) {
        cli_table_add(t, "-");
        cli_table_add(t, "-");
    } else {
        cli_table_add(t, "%" PRId64, lo);
        cli_table_add(t, "%" PRId64, hi);
    }
}

static void json_range(int64_t lo, int64_t hi)
{
    if (lo > hi) fputs(", \"start_time\": null, \"end_time\": null", stdout);
    else printf(", \"start_time\": %" PRId64 ", \"end_time\": %" PRId64, lo, hi);
}

/* `tsf info DATASET`: the files (size, points, time range, devices), then every series over the files
 * (type, points, time range, files holding it); no chunk or page header is read. */
static int info_dataset(const char *const *paths, size_t n, const char *cache, int json)
{
    tsf_dataset *ds = NULL;
    int rc = cli_open_dataset("info", paths, n, cache, &ds);
    if (rc) return rc;
    size_t nf = tsf_dataset_file_count(ds), nd = tsf_dataset_device_count(ds), ntab = 0, nser = 0;
    uint64_t size = 0, points = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0, nt = tsf_dataset_table_count(ds); i < nt; i++) {
        tsf_table_info ti;
        if (!tsf_dataset_table(ds, i, &ti, NULL) && ti.ncolumns) ntab++;
    }
    cli_table ft, st;
    cli_table_init(&ft, 6, 0x3Eu);
    cli_table_init(&st, 7, 0x78u);
    const char *fh[6] = {"file", "bytes", "points", "first", "last", "devices"};
    const char *sh[7] = {"device", "series", "type", "points", "first", "last", "files"};
    for (int i = 0; i < 6; i++) cli_table_add(&ft, "%s", fh[i]);
    for (int i = 0; i < 7; i++) cli_table_add(&st, "%s", sh[i]);
    if (json) fputs("{\"files\": [", stdout);
    for (size_t f = 0; f < nf; f++) {
        tsf_dataset_file_info fi;
        if (tsf_dataset_file(ds, f, &fi, NULL)) continue;
        size += fi.size;
        points += fi.points;
        if (fi.time_min < lo) lo = fi.time_min;
        if (fi.time_max > hi) hi = fi.time_max;
        if (json) {
            fputs(f ? ",\n    {\"path\": " : "\n    {\"path\": ", stdout);
            cli_json_str(stdout, fi.path);
            printf(", \"size\": %" PRIu64 ", \"points\": %" PRIu64, fi.size, fi.points);
            json_range(fi.time_min, fi.time_max);
            printf(", \"devices\": %zu}", fi.ndevices);
            continue;
        }
        cli_table_add(&ft, "%s", fi.path);
        cli_table_add(&ft, "%" PRIu64, fi.size);
        cli_table_add(&ft, "%" PRIu64, fi.points);
        put_range(&ft, fi.time_min, fi.time_max);
        cli_table_add(&ft, "%zu", fi.ndevices);
    }
    if (json) fputs(nf ? "\n  ], \"series\": [" : "], \"series\": [", stdout);
    for (size_t d = 0; d < nd; d++) {
        tsf_dataset_device_info di;
        if (tsf_dataset_device(ds, d, &di, NULL)) continue;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_dataset_series_info si;
            if (tsf_dataset_series(ds, d, j, &si, NULL)) continue;
            const char *type = nz(tsf_type_name(si.type));
            if (json) {
                fputs(nser++ ? ",\n    {\"device\": " : "\n    {\"device\": ", stdout);
                cli_json_str(stdout, di.name);
                fputs(", \"series\": ", stdout);
                cli_json_str(stdout, si.measurement);
                printf(", \"type\": \"%s\", \"points\": %" PRIu64, type, si.count);
                json_range(si.time_min, si.time_max);
                printf(", \"files\": %zu}", si.nfiles);
                continue;
            }
            nser++;
            cli_table_add(&st, "%s", di.name);
            cli_table_add(&st, "%s", si.measurement);
            cli_table_add(&st, "%s", type);
            cli_table_add(&st, "%" PRIu64, si.count);
            put_range(&st, si.time_min, si.time_max);
            cli_table_add(&st, "%zu", si.nfiles);
        }
    }
    if (json) {
        printf("%s], \"totals\": {\"files\": %zu, \"size\": %" PRIu64 ", \"tables\": %zu, \"devices\": %zu"
               ", \"series\": %zu, \"points\": %" PRIu64,
               nser ? "\n  " : "", nf, size, ntab, nd, nser, points);
        json_range(lo, hi);
        fputs("}}\n", stdout);
    } else {
        printf("files       %zu\n", nf);
        printf("size        %" PRIu64 " bytes\n", size);
        printf("tables      %zu\n", ntab);
        printf("devices     %zu\n", nd);
        printf("series      %zu\n", nser);
        printf("points      %" PRIu64 "\n", points);
        if (lo <= hi) printf("time range  %" PRId64 " .. %" PRId64 "\n", lo, hi);
        else printf("time range  -\n");
        fputc('\n', stdout);
        if (cli_table_print(&ft, stdout, "")) rc = CLI_IO;
        if (nser) {
            fputc('\n', stdout);
            if (cli_table_print(&st, stdout, "")) rc = CLI_IO;
        }
    }
    cli_table_free(&ft);
    cli_table_free(&st);
    tsf_dataset_close(ds);
    if (fflush(stdout)) {
        cli_err("info", "cannot write the output");
        return CLI_IO;
    }
    return rc;
}

#define MAX_INFO_PATHS 1024

int tsf_cmd_info(int argc, char **argv)
{
    const char *path = NULL, *paths[MAX_INFO_PATHS], *cache = NULL;
    size_t npaths = 0;
    int json = 0;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_is(&a, "--json"))
            json = 1;
        else if (cli_value(&a, "--cache"))
            cache = a.val;
        else if (cli_positional(&a)) {
            if (npaths == MAX_INFO_PATHS) {
                cli_err("info", "more than %d paths (name a directory or a pattern instead)", MAX_INFO_PATHS);
                return CLI_USAGE;
            }
            path = paths[npaths++] = a.arg;
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, path)) return CLI_USAGE;
    if (cli_is_dataset(paths, npaths)) return info_dataset(paths, npaths, cache, json);
    tsf_reader *r;
    int rc = cli_open_reader("info", path, &r);
    if (rc) return rc;
    struct stat sb;
    uint64_t size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    size_t ntab;
    const char *model = model_name(r, &ntab);
    totals tot = {0};
    cli_table t;
    cli_table_init(&t, 13, 0x1FE0u);
    const char *hdr[13] = {"device", "series", "type", "encoding", "compression", "points", "first",
                           "last", "chunks", "pages", "bytes", "raw", "ratio"};
    for (int i = 0; i < 13; i++) cli_table_add(&t, "%s", hdr[i]);
    if (json) {
        fputs("{\"file\": ", stdout);
        cli_json_str(stdout, path);
        printf(", \"size\": %" PRIu64 ", \"version\": %d, \"model\": \"%s\", \"series\": [", size,
               tsf_reader_version(r), model);
    }
    rc = walk(r, path, json, &t, &tot);
    if (!rc && json) {
        printf("%s], \"totals\": {\"tables\": %zu, \"devices\": %zu, \"series\": %" PRIu64 ", \"points\": %" PRIu64,
               tot.series ? "\n  " : "", ntab, tsf_reader_device_count(r), tot.series, tot.points);
        if (tot.any_time)
            printf(", \"start_time\": %" PRId64 ", \"end_time\": %" PRId64, tot.tmin, tot.tmax);
        printf(", \"chunks\": %" PRIu64 ", \"pages\": %" PRIu64 ", \"disk_bytes\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"raw_bytes\": %" PRIu64 ", \"ratio\": ",
               tot.chunks, tot.pages, tot.disk, tot.bytes, tot.raw);
        cli_json_num(stdout, ratio(tot.raw, tot.bytes));
        fputs("}}\n", stdout);
    } else if (!rc) {
        printf("file        %s\n", path);
        printf("size        %" PRIu64 " bytes\n", size);
        printf("version     %d\n", tsf_reader_version(r));
        printf("model       %s\n", model);
        printf("tables      %zu\n", ntab);
        printf("devices     %zu\n", tsf_reader_device_count(r));
        printf("series      %" PRIu64 "\n", tot.series);
        printf("points      %" PRIu64 "\n", tot.points);
        if (tot.any_time)
            printf("time range  %" PRId64 " .. %" PRId64 "\n", tot.tmin, tot.tmax);
        else
            printf("time range  -\n");
        printf("chunks      %" PRIu64 " (value series; aligned time columns not counted)\n", tot.chunks);
        printf("pages       %" PRIu64 "\n", tot.pages);
        printf("data        %" PRIu64 " bytes in value chunks, pages %" PRIu64 " bytes stored / %" PRIu64
               " raw (ratio %.2f)\n",
               tot.disk, tot.bytes, tot.raw, tot.bytes ? ratio(tot.raw, tot.bytes) : 0.0);
        printf("other       %" PRIu64 " bytes (head, time columns, index, bloom filter, tail)\n",
               size > tot.disk ? size - tot.disk : 0);
        if (tot.series) {
            fputc('\n', stdout);
            if (cli_table_print(&t, stdout, "")) rc = CLI_IO;
        }
    }
    cli_table_free(&t);
    tsf_reader_close(r);
    if (fflush(stdout)) {
        cli_err("info", "cannot write the output");
        return CLI_IO;
    }
    return rc;
}
