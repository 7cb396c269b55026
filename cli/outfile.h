/*
 * outfile.h - output files of the CLI commands (import, convert, demo, recover, index): written under
 * the library's temporary name <path>.<pid>.tmp (tsf_writer_temp_path), synced and renamed on success;
 * on any error, and on SIGINT, SIGTERM or SIGHUP, the temporary is removed (a signal handler that only
 * calls unlink; see doc/cli.md "Output files").
 */
#ifndef TSF_CLI_OUTFILE_H
#define TSF_CLI_OUTFILE_H

#include "tsf.h"

/* Removes `name` if this process is killed by SIGINT, SIGTERM or SIGHUP before cli_out_untrack(slot).
   Returns the slot (-1: no free slot, nothing tracked). */
int cli_out_track(const char *name);
/* The same for the library's temporary of `path` (<path>.<pid>.tmp: recovery, the page-time index). */
int cli_out_track_temp_of(const char *path);
void cli_out_untrack(int slot);

/* 0 when path does not exist yet, or force is set; else prints "<cmd>: OUT exists" with the --force hint
   and returns CLI_USAGE (CLI_IO, whatever force says, when path is a directory). Commands call it before they read their input, so nothing is replaced unasked. */
int cli_out_refuse_existing(const char *cmd, const char *path, int force);

/* Opens a writer on path with options.fsync set; its temporary (and with options.page_index that of
   <path>.tsfidx) is tracked. Prints the error and returns the exit code on failure (*w NULL), else 0. */
int cli_writer_open(const char *cmd, const char *path, tsf_writer_options *wo, tsf_writer **w);
/* Closes the writer: 0 once the data is in path; else prints the error, removes the temporary and
   returns CLI_IO. */
int cli_writer_close(const char *cmd, tsf_writer *w, const char *path);
/* Abandons the writer after an error: frees it and removes its temporary. NULL is a no-op. */
void cli_writer_discard(tsf_writer *w);

#endif
