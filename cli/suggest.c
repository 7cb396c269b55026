/* suggest.c - see suggest.h. */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void cli_suggest_init(cli_suggest *s, const char *want)
{
    memset(s, 0, sizeof *s);
    s->want = want;
}

/* Levenshtein distance of a[0..na) and b[0..nb), both shorter than CLI_SUGGEST_LEN, in two rows. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t prev[CLI_SUGGEST_LEN + 1], cur[CLI_SUGGEST_LEN + 1];
    for (size_t j = 0; j <= nb; j++) prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (nb + 1) * sizeof *prev);
    }
    return prev[nb];
}

void cli_suggest_offer(cli_suggest *s, const char *name)
{
    size_t nw = strlen(s->want), nn = strlen(name);
    if (nw >= CLI_SUGGEST_LEN || nn >= CLI_SUGGEST_LEN || !strcmp(name, s->want)) return;
    size_t d;
    if (nn > nw && name[nn - nw - 1] == '.' && !strcmp(name + nn - nw, s->want))
        d = 1; /* the typed name lacks a prefix */
    else {
        d = edit_distance(s->want, nw, name, nn);
        size_t limit = nw / 5 > 2 ? nw / 5 : 2;
        if (d > limit) return;
    }
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name)) return;
    size_t at = s->n; /* insertion point: ascending distance, first offered first among equals */
    while (at > 0 && s->dist[at - 1] > d) at--;
    if (at >= CLI_SUGGEST_MAX) return;
    size_t last = s->n < CLI_SUGGEST_MAX ? s->n : CLI_SUGGEST_MAX - 1;
    for (size_t i = last; i > at; i--) {
        s->dist[i] = s->dist[i - 1];
        memcpy(s->name[i], s->name[i - 1], CLI_SUGGEST_LEN);
    }
    s->dist[at] = d;
    memcpy(s->name[at], name, nn + 1);
    if (s->n < CLI_SUGGEST_MAX) s->n++;
}

void cli_suggest_print(const cli_suggest *s, const char *cmd)
{
    if (!s->n) return;
    fprintf(stderr, "tsf %s: did you mean ", cmd);
    for (size_t i = 0; i < s->n; i++) fprintf(stderr, "%s%s", i ? ", " : "", s->name[i]);
    fprintf(stderr, "?\n");
}
