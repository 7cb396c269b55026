/*
 * cmd_index.c - `tsf index FILE|DIR... [-o OUT]`: builds the page-time index of each
 * TsFile (tsf_page_index_build: page start times -> page locations in a sorted-mode learned index) next to
 * it as FILE.tsfidx, which queries then use to start at the page holding their first time (doc/reader.md).
 * A directory stands for its *.tsfile files (one index per file), or with --merged gets one index over all
 * of them, DIR/dir.tsfidx (tsf_page_index_build_dir: series matched by name, lookups give the file too).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "outfile.h"

static const char *HELP =
    "usage: tsf index FILE|DIR... [-o OUT] [--merged]\n"
    "Builds the page-time index of each FILE (every series' page start times -> chunk and page offsets, "
    "late\n"
    "out-of-order pages included) and writes it to FILE.tsfidx, replacing an older one; a DIR stands for "
    "its\n"
    "*.tsfile files. Readers use it for queries that start inside a chunk; an index whose file changed "
    "since\n"
    "is ignored.\n"
    "  -o, --output OUT   write the index to OUT instead (one FILE or DIR only)\n"
    "  --merged           one index over the *.tsfile files of each DIR, DIR/dir.tsfidx: series matched by\n"
    "                     device and measurement names, lookups give the file too\n"
    "Prints the pages indexed per file. Exit code 2 when a file is damaged, 3 when one cannot be read or an\n"
    "index written (the other files are still indexed).\n";

/* Indexes one file; returns its exit code. */
static int index_one(const char *path, const char *out)
{
    tsf_reader *r;
    int rc = cli_open_reader("index", path, &r);
    if (rc) return rc;
    size_t n = strlen(path);
    char *def = out ? NULL : malloc(n + 8);
    if (!out && !def) {
        tsf_reader_close(r);
        cli_err("index", "out of memory");
        return CLI_IO;
    }
    if (def) snprintf(def, n + 8, "%s.tsfidx", path);
    const char *ipath = out ? out : def;
    tsf_error e = {0};
    uint64_t np = 0, nlate = 0;
    tsf_page_index *pix = NULL;
    int slot = cli_out_track_temp_of(ipath); /* the build writes <ipath>.<pid>.tmp, then renames it */
    tsf_status st = tsf_page_index_build(r, ipath, &np, &e);
    cli_out_untrack(slot);
    if (!st) st = tsf_page_index_open(r, ipath, &pix, &e); /* read back: counts as stored */
    if (!st) {
        tsf_page_index_info(pix, &np, &nlate);
        printf("%s: %" PRIu64 " pages indexed (%" PRIu64 " late)\n", ipath, np, nlate);
    } else {
        cli_err_file("index", path, e.message);
        rc = cli_exit_code(st);
    }
    tsf_page_index_close(pix);
    tsf_reader_close(r);
    free(def);
    return rc;
}

/* One index over the *.tsfile files of dir. */
static int index_merged(const char *dir, const char *out)
{
    tsf_error e = {0};
    uint64_t np = 0, nlate = 0;
    tsf_page_index *pix = NULL;
    size_t n = strlen(dir);
    char *def = out ? NULL : malloc(n + 12);
    if (def) snprintf(def, n + 12, "%s/dir.tsfidx", dir);
    const char *ipath = out ? out : def;
    int slot = ipath ? cli_out_track_temp_of(ipath) : -1;
    tsf_status st = ipath ? tsf_page_index_build_dir(dir, ipath, &np, &e) : TSF_ENOMEM;
    cli_out_untrack(slot);
    if (!st) st = tsf_page_index_open_dir(&pix, dir, ipath, &e); /* read back: counts as stored */
    int rc = CLI_OK;
    if (!st) {
        tsf_page_index_info(pix, &np, &nlate);
        printf("%s: %" PRIu64 " pages of %zu files indexed (%" PRIu64 " late)\n", ipath, np,
               tsf_page_index_file_count(pix), nlate);
    } else if (st == TSF_ENOTFOUND) {
        printf("%s: no .tsfile files\n", dir);
    } else {
        cli_err_file("index", dir, st == TSF_ENOMEM && !ipath ? "out of memory" : e.message);
        rc = cli_exit_code(st);
    }
    tsf_page_index_close(pix);
    free(def);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Indexes the *.tsfile files of a directory in name order; the worst exit code. */
static int index_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_err("index", "%s: cannot open: %s", dir, strerror(errno));
        return CLI_IO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = CLI_OK;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".tsfile")) continue;
        if (n == cap) {
            char **g = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
            if (!g) break;
            names = g;
        }
        size_t pl = strlen(dir) + l + 2;
        if (!(names[n] = malloc(pl))) break;
        snprintf(names[n++], pl, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        int k = index_one(names[i], NULL);
        if (k > rc) rc = k;
        free(names[i]);
    }
    free(names);
    if (!n) printf("%s: no .tsfile files\n", dir);
    return rc;
}

int tsf_cmd_index(int argc, char **argv)
{
    const char *out = NULL;
    int nfiles = 0, merged = 0;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_value(&a, "-o|--output")) {
            out = a.val;
        } else if (cli_is(&a, "--merged")) {
            merged = 1;
        } else if (cli_positional(&a))
            nfiles++;
        else
            return cli_unknown(&a);
    }
    if (a.bad) return CLI_USAGE;
    if (!nfiles) {
        cli_err("index", "FILE missing (see tsf index --help)");
        return CLI_USAGE;
    }
    if (out && nfiles > 1) {
        cli_err("index", "-o takes one FILE (%d given)", nfiles);
        return CLI_USAGE;
    }
    int rc = CLI_OK;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_value(&a, "-o|--output") || !cli_positional(&a)) continue;
        struct stat sb;
        int isdir = stat(a.arg, &sb) == 0 && S_ISDIR(sb.st_mode), k;
        if (merged && !isdir) {
            cli_err("index", "--merged takes folders ('%s' is not one)", a.arg);
            k = CLI_USAGE;
        } else if (merged) {
            k = index_merged(a.arg, out);
        } else {
            k = isdir && !out ? index_dir(a.arg) : index_one(a.arg, out);
        }
        if (k > rc) rc = k;
    }
    return rc;
}
