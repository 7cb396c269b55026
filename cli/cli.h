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

#endif
