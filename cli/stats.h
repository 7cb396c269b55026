/* stats.h - what `tsf stats` shares between one file (cmd_stats.c) and a dataset (stats_dataset.c). */
#ifndef TSF_CLI_STATS_H
#define TSF_CLI_STATS_H

#include <stddef.h>
#include <stdint.h>

enum { FMT_TEXT, FMT_CSV, FMT_JSON };

#define MAX_CALENDAR_WINDOWS 100000
#define MAX_STATS_PATHS 1024

typedef struct stats_opts {
    const char *path, *series;
    const char *paths[MAX_STATS_PATHS]; /* every FILE / DIR / PATTERN operand; path = paths[0] */
    size_t npaths;
    const char *group_by; /* --group-by (NULL: one file as before, a dataset by device) */
    const char *cache;    /* --cache: the dataset's metadata cache file */
    unsigned threads, files_at_once;
    int64_t from, to, unit;
    int64_t window;  /* fixed windows: length in the file's unit (0 = one window over the range) */
    int64_t origin;  /* fixed windows: where they start (midnight 1970-01-01 in --tz; weeks: a Monday) */
    int months;      /* calendar windows of this many months (years: 12 per year); 0 = fixed */
    int32_t tz;      /* --tz: seconds east of UTC */
    int format, iso, decode, no_check;
} stats_opts;

/* A TEXT / STRING value for the output: quoted, '"' and '\\' escaped, controls as \\u00XX; at most 40 bytes
 * then "..." unless json. */
void stats_fmt_text(char *buf, size_t cap, const uint8_t *data, size_t len, int json);

/* Calendar windows: the start (file unit, UTC) of the window of o->months months holding time t, and the
 * start of the next one; -1 when the times leave the calendar's range. */
int stats_month_window(const stats_opts *o, int64_t t, int64_t *start, int64_t *next);

/* `tsf stats` over a dataset (several operands, a directory, a pattern or --group-by). Returns the exit code. */
int stats_dataset(const stats_opts *o);

#endif
