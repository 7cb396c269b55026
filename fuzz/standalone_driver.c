/*
 * standalone_driver.c - runs a libFuzzer harness without libFuzzer: every file given on the
 * command line (or found in a given directory, recursively one level) is passed once to
 * LLVMFuzzerTestOneInput. ctest uses it to replay each harness's committed corpus.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_entry.h"

/* The input being replayed, named when a harness traps or crashes (driver state, not library state). */
static const char *current_input;

static void on_fatal(int sig)
{
    const char *p = current_input ? current_input : "(none)";
    static const char msg[] = "\nstandalone_driver: crashed on input ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, p, strlen(p)) < 0 || write(2, "\n", 1) < 0) {
        /* nothing more to do */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    current_input = path;
    LLVMFuzzerTestOneInput(buf, got);
    current_input = NULL;
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "missing corpus %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (!d) return 1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        snprintf(p, len, "%s/%s", path, e->d_name);
        rc |= run_path(p, count);
        free(p);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    signal(SIGILL, on_fatal);
    signal(SIGSEGV, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGFPE, on_fatal);
    signal(SIGBUS, on_fatal);
    for (int i = 1; i < argc; i++) rc |= run_path(argv[i], &count);
    printf("replayed %d inputs\n", count);
    if (count == 0) {
        fprintf(stderr, "no corpus inputs found\n");
        return 1;
    }
    return rc;
}
