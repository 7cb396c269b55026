/*
 * cli_args_fuzzer.c - libFuzzer harness for the `tsf` subcommands' option parsing (cli/args.c and each
 * command's option loop, --where filters, times, durations, units, column and codec lists). Input:
 * [command selector][arguments separated by NUL or newline]. Commands: cat, head, info, schema, stats,
 * sketch, verify, import, convert, recover, index (not demo: its row count sets its run time). They run
 * in a scratch folder holding a small tree-model file f.tsfile, a table-model file t.tsfile and the CSV
 * c.csv, restored before every input; '/' in an argument becomes '_', and the second dot of "..", so
 * nothing outside it is read or written.
 * Oracle: exit code 0-4, no crash, leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_fuzz.h"

typedef struct seed_file {
    const char *name;
    char *bytes;
    size_t len;
} seed_file;

static seed_file seeds[] = {{"c.csv", NULL, 0}, {"f.tsfile", NULL, 0}, {"t.tsfile", NULL, 0}};
enum { NSEEDS = sizeof seeds / sizeof seeds[0] };

static const char CSV[] = "time,a,b,c,d\n"
                          "1700000000000,x,1.5,true,10\n"
                          "1700000001000,y,-2.25,false,20\n"
                          "1700000002000,x,,true,30\n"
                          "1700000003000,\"q,\"\"z\"\"\",3e10,false,\n";

static int slurp(seed_file *s)
{
    FILE *f = fopen(s->name, "rb");
    if (!f) return -1;
    s->bytes = malloc(1 << 20);
    s->len = s->bytes ? fread(s->bytes, 1, 1 << 20, f) : 0;
    fclose(f);
    return s->len ? 0 : -1;
}

/* Writes the seed files once (through tsf import) and keeps their bytes. */
static int setup(void)
{
    static int done = -1;
    if (done >= 0) return done;
    done = 1;
    if (cli_fuzz_scratch()) return 1;
    FILE *f = fopen("c.csv", "wb");
    if (!f || fwrite(CSV, 1, sizeof CSV - 1, f) != sizeof CSV - 1 || fclose(f)) return 1;
    char *tree[] = {"import", "c.csv", "-o", "f.tsfile", "-q", NULL};
    char *table[] = {"import", "c.csv", "-o", "t.tsfile", "-q", "--table", "t", "--tags", "a", NULL};
    if (tsf_cmd_import(5, tree) || tsf_cmd_import(9, table)) return 1;
    for (size_t i = 0; i < NSEEDS; i++)
        if (slurp(&seeds[i])) return 1;
    done = 0;
    return 0;
}

static void restore(void)
{
    cli_fuzz_clean(NULL);
    for (size_t i = 0; i < NSEEDS; i++) {
        FILE *f = fopen(seeds[i].name, "wb");
        if (!f) continue;
        fwrite(seeds[i].bytes, 1, seeds[i].len, f);
        fclose(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } cmds[] = {{"cat", tsf_cmd_cat},         {"head", tsf_cmd_head},       {"info", tsf_cmd_info},
                {"schema", tsf_cmd_schema},   {"stats", tsf_cmd_stats},     {"sketch", tsf_cmd_sketch},
                {"verify", tsf_cmd_verify},   {"import", tsf_cmd_import},   {"convert", tsf_cmd_convert},
                {"recover", tsf_cmd_recover}, {"index", tsf_cmd_index}};
    enum { MAXARGS = 32 };
    if (size < 1 || size > 4096 || setup()) return 0;
    restore();
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)cmds[data[0] % (sizeof cmds / sizeof cmds[0])].name;
    for (char *p = text; argc <= MAXARGS && p < text + size - 1;) {
        char *e = p;
        while (e < text + size - 1 && *e && *e != '\n') {
            if (*e == '/' || (*e == '.' && e > p && e[-1] == '.')) *e = '_';
            e++;
        }
        *e = '\0';
        argv[argc++] = p;
        p = e + 1;
    }
    argv[argc] = NULL;
    int rc = cmds[data[0] % (sizeof cmds / sizeof cmds[0])].run(argc, argv);
    if (rc < 0 || rc > 4) __builtin_trap();
    free(text);
    return 0;
}
