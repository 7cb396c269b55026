/*
 * cli_import_fuzzer.c - libFuzzer harness for `tsf import` (cli/cmd_import.c, cli/csv.c). Input:
 * [option bits][CSV bytes]. The bits choose --sort, --skip-bad, --infer-rows 2, the table model
 * (--table t --tags a), --unescape, --time-unit us, a --schema with every non-text type, and
 * --time-column none. Oracles: the import exits 0-3; a file it wrote verifies and reads back (cat csv
 * and jsonl exit 0 or 4). On the first line of the CSV: an accepted DOUBLE/FLOAT/INT64 text prints
 * (csv_format_real, %lld) to text that parses back to the same bits. On all the CSV bytes: csv_put_field
 * writes no byte that must be escaped, and un-quoting plus csv_unescape gives the bytes back.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_fuzz.h"
#include "csv.h"

static void check_numbers(const uint8_t *p, size_t n)
{
    char s[128];
    size_t k = 0;
    while (k < n && k < sizeof s - 1 && p[k] && p[k] != '\n' && p[k] != ',') k++;
    memcpy(s, p, k);
    s[k] = '\0';
    for (int is_float = 0; is_float < 2; is_float++) {
        double d, back;
        if (csv_parse_real(s, is_float, &d)) continue;
        char buf[64];
        csv_format_real(buf, sizeof buf, d, is_float);
        if (csv_parse_real(buf, is_float, &back)) __builtin_trap();
        if (isnan(d) ? !isnan(back) : memcmp(&d, &back, sizeof d) != 0) __builtin_trap();
    }
    int64_t i, j;
    if (!csv_parse_i64(s, &i)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)i);
        if (csv_parse_i64(buf, &j) || i != j) __builtin_trap();
    }
}

static void check_escape(const uint8_t *p, size_t n)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) return;
    csv_put_field(f, (const char *)p, n);
    if (fclose(f)) {
        free(out);
        return;
    }
    const uint8_t *o = (const uint8_t *)out;
    for (size_t i = 0; i < len;) {
        if (csv_unsafe_len(o + i, len - i)) __builtin_trap(); /* nothing unsafe reaches the output */
        size_t k = csv_utf8_len(o + i, len - i);
        i += k ? k : 1;
    }
    size_t m = 0;
    if (len && out[0] == '"') { /* RFC-4180 quoting: "" inside is one quote */
        if (len < 2 || out[len - 1] != '"') __builtin_trap();
        for (size_t i = 1; i + 1 < len; i++) {
            if (out[i] == '"' && out[++i] != '"') __builtin_trap();
            out[m++] = out[i];
        }
    } else {
        m = len;
    }
    m = csv_unescape(out, m);
    if (m != n || (n && memcmp(out, p, n) != 0)) __builtin_trap();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536 || cli_fuzz_scratch()) return 0;
    uint8_t bits = data[0];
    check_numbers(data + 1, size - 1);
    check_escape(data + 1, size - 1);
    static const char *const keep[] = {NULL};
    cli_fuzz_clean(keep);
    FILE *f = fopen("in.csv", "wb");
    if (!f) return 0;
    size_t w = fwrite(data + 1, 1, size - 1, f);
    if (fclose(f) || w != size - 1) return 0;
    char *argv[32];
    int argc = 0;
    argv[argc++] = "import";
    argv[argc++] = "in.csv";
    argv[argc++] = "-o";
    argv[argc++] = "out.tsfile";
    argv[argc++] = "-q";
    if (bits & 1) argv[argc++] = "--sort";
    if (bits & 2) argv[argc++] = "--skip-bad";
    if (bits & 4) argv[argc++] = "--infer-rows", argv[argc++] = "2";
    if (bits & 8) argv[argc++] = "--table", argv[argc++] = "t", argv[argc++] = "--tags", argv[argc++] = "a";
    if (bits & 16) argv[argc++] = "--unescape";
    if (bits & 32) argv[argc++] = "--time-unit", argv[argc++] = "us";
    if (bits & 64) argv[argc++] = "--schema", argv[argc++] = "b=FLOAT,c=DATE,d=BLOB,e=INT32,f=TIMESTAMP,g=TEXT";
    if (bits & 128) argv[argc++] = "--time-column", argv[argc++] = "none";
    argv[argc] = NULL;
    int rc = tsf_cmd_import(argc, argv);
    if (rc < 0 || rc > 3) __builtin_trap();
    if (rc != 0) return 0;
    char *verify[] = {"verify", "out.tsfile", NULL};
    if (tsf_cmd_verify(2, verify) != 0) __builtin_trap(); /* what import wrote is sound */
    char *cat[] = {"cat", "out.tsfile", NULL};
    rc = tsf_cmd_cat(2, cat);
    if (rc != 0 && rc != 4) __builtin_trap();
    char *jsonl[] = {"cat", "out.tsfile", "--format", "jsonl", NULL};
    rc = tsf_cmd_cat(4, jsonl);
    if (rc != 0 && rc != 4) __builtin_trap();
    return 0;
}
