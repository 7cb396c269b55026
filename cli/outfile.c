/*
 * outfile.c - output files of the CLI commands (outfile.h). A few slots hold the names of the
 * temporaries being written; the handler of SIGINT, SIGTERM and SIGHUP unlinks the names of the slots
 * in use (unlink is async-signal-safe), restores the default action and raises the signal again, so the
 * process still ends as killed by it. A slot's name is written while the signals are blocked and only
 * then marked in use.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

#define NSLOTS 4
static char slot_name[NSLOTS][4096];
static volatile sig_atomic_t slot_used[NSLOTS];
static const int SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
    for (int i = 0; i < NSLOTS; i++)
        if (slot_used[i]) unlink(slot_name[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    for (size_t i = 0; i < sizeof SIGNALS / sizeof *SIGNALS; i++) sigaddset(&s, SIGNALS[i]);
    sigprocmask(SIG_BLOCK, &s, old);
}

int cli_out_track(const char *name)
{
    static int installed;
    if (!installed) {
        installed = 1;
        for (size_t i = 0; i < sizeof SIGNALS / sizeof *SIGNALS; i++) {
            struct sigaction sa, old;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            for (size_t j = 0; j < sizeof SIGNALS / sizeof *SIGNALS; j++) sigaddset(&sa.sa_mask, SIGNALS[j]);
            /* a signal ignored when the process started (nohup, a background job of a shell) stays ignored */
            if (sigaction(SIGNALS[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
            sigaction(SIGNALS[i], &sa, NULL);
        }
    }
    if (!name || strlen(name) >= sizeof slot_name[0]) return -1;
    sigset_t old;
    block(&old);
    int slot = -1;
    for (int i = 0; i < NSLOTS && slot < 0; i++)
        if (!slot_used[i]) {
            memcpy(slot_name[i], name, strlen(name) + 1);
            slot_used[i] = 1;
            slot = i;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return slot;
}

int cli_out_track_temp_of(const char *path)
{
    char name[4096];
    if ((size_t)snprintf(name, sizeof name, "%s.%ld.tmp", path, (long)getpid()) >= sizeof name) return -1;
    return cli_out_track(name);
}

void cli_out_untrack(int slot)
{
    if (slot >= 0 && slot < NSLOTS) slot_used[slot] = 0;
}

/* The writer's tracked slots, by writer (one output per command at a time). */
int cli_out_refuse_existing(const char *cmd, const char *path, int force)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli_err(cmd, "%s is a directory; -o names the file to write", path);
        return CLI_IO;
    }
    if (force || lstat(path, &sb) != 0) return 0;
    cli_err(cmd, "%s exists; give --force to replace it", path);
    return CLI_USAGE;
}

static const tsf_writer *cur_writer;
static int cur_slot = -1, cur_pix_slot = -1;

int cli_writer_open(const char *cmd, const char *path, tsf_writer_options *wo, tsf_writer **w)
{
    tsf_error e = {0};
    wo->fsync = 1; /* success is reported only for data on disk under its final name */
    sigset_t old;
    block(&old); /* the temporary exists from here: tracked before a signal can end the process */
    tsf_status st = tsf_writer_open(w, path, wo, &e);
    if (!st) {
        cur_writer = *w;
        cur_slot = cli_out_track(tsf_writer_temp_path(*w));
        if (wo->page_index) {
            char pix[4096];
            if ((size_t)snprintf(pix, sizeof pix, "%s.tsfidx", path) < sizeof pix)
                cur_pix_slot = cli_out_track_temp_of(pix);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (st) {
        cli_err(cmd, "%s: %s", path, e.message);
        return cli_exit_code(st) == CLI_DAMAGED ? CLI_IO : cli_exit_code(st);
    }
    return 0;
}

static void forget(const tsf_writer *w)
{
    if (w != cur_writer) return;
    cli_out_untrack(cur_slot);
    cli_out_untrack(cur_pix_slot);
    cur_writer = NULL;
    cur_slot = cur_pix_slot = -1;
}

int cli_writer_close(const char *cmd, tsf_writer *w, const char *path)
{
    char tmp[4096];
    const char *t = tsf_writer_temp_path(w);
    snprintf(tmp, sizeof tmp, "%s", t ? t : "");
    tsf_error e = {0};
    tsf_status st = tsf_writer_close(w, &e);
    if (st && tmp[0]) unlink(tmp);
    forget(w);
    if (st) {
        cli_err(cmd, "%s: %s", path, e.message);
        return CLI_IO;
    }
    return 0;
}

void cli_writer_discard(tsf_writer *w)
{
    if (!w) return;
    char tmp[4096];
    const char *t = tsf_writer_temp_path(w);
    snprintf(tmp, sizeof tmp, "%s", t ? t : "");
    tsf_writer_abort(w);
    if (tmp[0]) unlink(tmp);
    forget(w);
}
