/*
 * cmd_index.c - `tsf index FILE [-o OUT]` (issue 6 item 5): builds the page-time index of a TsFile
 * (tsf_page_index_build: page start times -> page locations in a sorted-mode learned index) next to it as
 * FILE.tsfidx, which queries then use to start at the page holding their first time (doc/reader.md).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *HELP =
    "usage: tsf index FILE [-o OUT]\n"
    "Builds the page-time index of FILE (every series' page start times -> chunk and page offsets, late\n"
    "out-of-order pages included) and writes it to FILE.tsfidx, replacing an older one. Readers use it for\n"
    "queries that start inside a chunk; an index whose file changed since is ignored.\n"
    "  -o, --output OUT   write the index to OUT instead\n"
    "Prints the pages indexed. Exit code 2 when FILE is damaged, 3 when it cannot be read or OUT written.\n";

int tsf_cmd_index(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_value(&a, "-o|--output")) {
            out = a.val;
        } else if (cli_positional(&a)) {
            if (cli_one_file(&a, &path)) return CLI_USAGE;
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, path)) return CLI_USAGE;
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
    tsf_status st = tsf_page_index_build(r, ipath, &np, &e);
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
