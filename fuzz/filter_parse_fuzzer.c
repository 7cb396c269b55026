/*
 * filter_parse_fuzzer.c - libFuzzer harness for the value-filter parser (tsf.h "value filters",
 * src/read/filter.c): any bytes, up to the first NUL, as filter text. Oracles: the parser returns only
 * TSF_OK, TSF_EINVAL (with a message naming the offset) or TSF_ENOMEM; it never crashes or recurses
 * without bound; an accepted filter formats to text that parses back and formats identically. String
 * literals of time terms go through a parse_time callback that takes decimal digits.
 */
#include <stdlib.h>
#include <string.h>

#include "tsf.h"
#include "fuzz_entry.h"

static int digits_time(void *ctx, const char *text, int64_t *out)
{
    (void)ctx;
    if (*text < '0' || *text > '9') return 1;
    char *end;
    *out = strtoll(text, &end, 10);
    return *end != '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    tsf_filter *f = NULL;
    tsf_error e;
    memset(&e, 0, sizeof e);
    tsf_filter_parse_options po;
    tsf_filter_parse_options_init(&po);
    po.parse_time = digits_time;
    tsf_status st = tsf_filter_parse_with(&f, text, &po, &e);
    if (st != TSF_OK && st != TSF_EINVAL && st != TSF_ENOMEM) __builtin_trap();
    if (st == TSF_EINVAL && (f || strncmp(e.message, "filter", 6) != 0)) __builtin_trap();
    if (st == TSF_OK) {
        size_t n = tsf_filter_format(f, NULL, 0);
        char *a = malloc(n + 1), *b = malloc(n + 1);
        if (!a || !b) __builtin_trap();
        if (tsf_filter_format(f, a, n + 1) != n || strlen(a) != n) __builtin_trap();
        tsf_filter *g = NULL;
        if (tsf_filter_parse(&g, a, &e) != TSF_OK) __builtin_trap(); /* formatted text always parses */
        if (tsf_filter_format(g, b, n + 1) != n || memcmp(a, b, n + 1) != 0) __builtin_trap();
        tsf_filter_free(g);
        free(a);
        free(b);
    }
    tsf_filter_free(f);
    free(text);
    return 0;
}
