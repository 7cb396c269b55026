/* cli.h - the subcommands of the `tsf` tool (one file per subcommand, dispatched by main.c). */
#ifndef TSF_CLI_H
#define TSF_CLI_H

#include <stdio.h>

#include "args.h"
#include "tsf.h"

/*
 * Each takes (argc, argv) with argv[0] = the subcommand name and returns the process exit code
 * (args.h): 0 success, 1 usage error, 2 a file is damaged, 3 I/O error, 4 a query matched nothing.
 */
int tsf_cmd_cat(int argc, char **argv);
int tsf_cmd_head(int argc, char **argv);
int tsf_cmd_import(int argc, char **argv);
int tsf_cmd_convert(int argc, char **argv);
int tsf_cmd_demo(int argc, char **argv);
int tsf_cmd_schema(int argc, char **argv);
int tsf_cmd_info(int argc, char **argv);
int tsf_cmd_stats(int argc, char **argv);
int tsf_cmd_sketch(int argc, char **argv);
int tsf_cmd_verify(int argc, char **argv);
int tsf_cmd_recover(int argc, char **argv);
int tsf_cmd_index(int argc, char **argv);

/* Copies the rows of r (file `in`) with times in [tmin, tmax] into a new file `out` (cmd_convert.c's copy:
 * same tables, devices, series, types, encodings and compressions); *rows / *points copied. Returns an exit
 * code (messages name cmd). */
int cli_copy_range(const char *cmd, tsf_reader *r, const char *in, const char *out, int64_t tmin, int64_t tmax,
                   tsf_writer_options *wo, uint64_t *rows, uint64_t *points);

#endif
