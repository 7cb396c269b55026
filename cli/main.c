/*
 * main.c - entry point of the `tsf` command-line tool: dispatches `tsf <subcommand> ...` to the
 * subcommand's function (cli.h; one file per subcommand). Exit codes: args.h.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} cmd;

/* One line per subcommand; `tsf CMD --help` gives the details. */
static const cmd CMDS[] = {
    {"demo", tsf_cmd_demo, "demo [--rows N]                   write, query and aggregate sample sensor data"},
    {"import", tsf_cmd_import, "import CSV... -o FILE             CSV (wide or long) to TsFile"},
    {"cat", tsf_cmd_cat, "cat FILE [--format csv|jsonl|golden] [--where ..]  print rows"},
    {"head", tsf_cmd_head, "head FILE [-n N]                  print the first rows"},
    {"convert", tsf_cmd_convert, "convert IN -o OUT [--encoding ..]  rewrite with other encodings/compression"},
    {"schema", tsf_cmd_schema, "schema FILE [--json]              tables with their columns, devices with their series"},
    {"info", tsf_cmd_info, "info FILE [--json]                version, model, series, points, time range, bytes"},
    {"stats", tsf_cmd_stats, "stats FILE [--series ..] [--window 1h]  count/min/max/first/last/sum from statistics"},
    {"sketch", tsf_cmd_sketch, "sketch FILE                       byte layout, offset by offset"},
    {"verify", tsf_cmd_verify, "verify FILE...                    check every structure; exit 2 if a file is damaged"},
    {"recover", tsf_cmd_recover, "recover FILE -o OUT               keep every sound chunk of a damaged file"},
    {"index", tsf_cmd_index, "index FILE|DIR... [-o OUT]        page-time index FILE.tsfidx (queries start at their page)"},
};

static void usage(FILE *f)
{
    fprintf(f, "tsf %s - TsFile tool\nusage: tsf <command> [args]   (tsf <command> --help for details)\n"
               "commands:\n", tsf_version_string());
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) fprintf(f, "  %s\n", CMDS[i].help);
    fputs("exit codes: 0 success, 1 usage error, 2 damaged file, 3 I/O error, 4 query matched nothing\n", f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tsf %s\n", tsf_version_string());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++)
        if (!strcmp(argv[1], CMDS[i].name)) return CMDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tsf: unknown command \"%s\" (see tsf --help)\n", argv[1]);
    return CLI_USAGE;
}
