/*
 * cli_fuzz.h - a scratch folder for the harnesses that run `tsf` subcommands (cli_*_fuzzer.c): created
 * once per process under $TMPDIR (or /tmp) and made the working directory, with stdout and stdin on
 * /dev/null, so commands that write files write them there and nothing reads the terminal.
 */
#ifndef TSF_CLI_FUZZ_H
#define TSF_CLI_FUZZ_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_entry.h"

static char cli_fuzz_dir[512];

/* Removes the files of the scratch folder except those named in keep (NULL-terminated). */
static void cli_fuzz_clean(const char *const *keep)
{
    DIR *d = opendir(".");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int k = e->d_name[0] == '.';
        for (size_t i = 0; keep && keep[i] && !k; i++) k = !strcmp(e->d_name, keep[i]);
        if (!k) unlink(e->d_name);
    }
    closedir(d);
}

static void cli_fuzz_remove(void)
{
    cli_fuzz_clean(NULL);
    if (chdir("/") == 0) rmdir(cli_fuzz_dir);
}

/* Returns 0 once the scratch folder is the working directory (the same one for every later call); it
 * is removed at exit. */
static int cli_fuzz_scratch(void)
{
    static int ready = -1;
    if (ready >= 0) return ready;
    const char *t = getenv("TMPDIR");
    snprintf(cli_fuzz_dir, sizeof cli_fuzz_dir, "%s/tsf-cli-fuzz.XXXXXX", t && *t ? t : "/tmp");
    ready = mkdtemp(cli_fuzz_dir) && chdir(cli_fuzz_dir) == 0 && freopen("/dev/null", "w", stdout) &&
                    freopen("/dev/null", "r", stdin)
                ? 0
                : 1;
    if (!ready) atexit(cli_fuzz_remove);
    return ready;
}

#endif
