/*
 * suggest.h - "did you mean" for names a user typed: of the names offered, the three closest by edit
 * distance (insertions, deletions, substitutions; ASCII case counts as no difference), kept when the
 * distance is at most a fifth of the typed name's length (at least 2), or when a name ends with
 * ".<typed>" (a device given without its table or path prefix).
 */
#ifndef TSF_CLI_SUGGEST_H
#define TSF_CLI_SUGGEST_H

#include <stddef.h>

#define CLI_SUGGEST_MAX 3
#define CLI_SUGGEST_LEN 256

typedef struct cli_suggest {
    const char *want;
    size_t n;
    size_t dist[CLI_SUGGEST_MAX];
    char name[CLI_SUGGEST_MAX][CLI_SUGGEST_LEN];
} cli_suggest;

void cli_suggest_init(cli_suggest *s, const char *want);
/* Offers one candidate (copied when kept; names of CLI_SUGGEST_LEN bytes or more are skipped). */
void cli_suggest_offer(cli_suggest *s, const char *name);
/* Prints "tsf CMD: did you mean A, B?" to stderr when a candidate was kept. */
void cli_suggest_print(const cli_suggest *s, const char *cmd);

#endif
