/* cli.h - the subcommands of the `tsf` tool (one file per subcommand, dispatched by main.c). */
#ifndef TSF_CLI_H
#define TSF_CLI_H

#include <stdio.h>

#include "tsf.h"

/* Each returns the process exit code: 0 success, 1 failure, 2 usage error. */
int tsf_cmd_cat(int argc, char **argv);

#endif
