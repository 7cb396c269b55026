/*
 * main.c - entry point of the `tsf` command-line tool: dispatches `tsf <subcommand> ...` to the
 * subcommand's function (cli.h). Later sessions add subcommands (info, verify, recover, ...).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} cmd;

static const cmd CMDS[] = {
    {"cat", tsf_cmd_cat, "cat [--format golden] FILE   print every value of a file"},
};

static void usage(FILE *f)
{
    fprintf(f, "tsf %s - TsFile tool\nusage: tsf <command> [args]\ncommands:\n", tsf_version_string());
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) fprintf(f, "  %s\n", CMDS[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tsf %s\n", tsf_version_string());
        return 0;
    }
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++)
        if (!strcmp(argv[1], CMDS[i].name)) return CMDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tsf: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
