/*
 * gen.c - tsf-cli-gen: writes the deterministic writer-made test file of tests/read/gen_file.h (a
 * non-aligned tree device, an aligned device with every type and nulls, a two-device table) for the
 * CLI test cases. Usage: tsf-cli-gen OUT [ROWS [PAGE_POINTS [FLUSH_ROWS]]] (defaults 300 100 150).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../read/gen_file.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: tsf-cli-gen OUT [ROWS [PAGE_POINTS [FLUSH_ROWS]]]\n");
        return 1;
    }
    size_t rows = argc > 2 ? strtoul(argv[2], NULL, 10) : 300;
    uint32_t page = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 100;
    size_t flush = argc > 4 ? strtoul(argv[4], NULL, 10) : 150;
    gen_buf b = {0};
    char why[512];
    if (gen_file(&b, rows, page, flush, why, sizeof why)) {
        fprintf(stderr, "tsf-cli-gen: %s\n", why);
        free(b.p);
        return 1;
    }
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f)) {
        fprintf(stderr, "tsf-cli-gen: cannot write %s\n", argv[1]);
        free(b.p);
        return 1;
    }
    free(b.p);
    return 0;
}
