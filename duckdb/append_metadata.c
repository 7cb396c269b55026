/*
 * append_metadata.c - build tool: writes OUT = the shared object IN followed by the 534-byte metadata
 * footer DuckDB reads from the end of an extension file before it loads it (doc/duckdb.md, "Build"):
 * a 22-byte marker, eight NUL-padded 32-byte fields (three empty, the ABI type, the extension version, the C
 * API version, the platform, the metadata format "4") and a 256-byte signature area left zero (unsigned).
 *
 *   append_metadata IN OUT EXTENSION_VERSION C_API_VERSION PLATFORM
 */
#include <stdio.h>
#include <string.h>

#define FIELD 32

static int put_field(FILE *f, const char *s)
{
    char buf[FIELD] = {0};
    size_t n = strlen(s);
    if (n > FIELD) return -1;
    memcpy(buf, s, n);
    return fwrite(buf, 1, FIELD, f) == FIELD ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: append_metadata IN OUT EXTENSION_VERSION C_API_VERSION PLATFORM\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        fclose(in);
        return 1;
    }
    int bad = 0;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) bad = 1;
    if (ferror(in)) bad = 1;
    static const unsigned char marker[22] = {0x00, 0x93, 0x04, 0x10, 'd', 'u', 'c', 'k', 'd', 'b', '_',
                                             's',  'i',  'g',  'n',  'a', 't', 'u', 'r', 'e', 0x80, 0x04};
    if (fwrite(marker, 1, sizeof marker, out) != sizeof marker) bad = 1;
    const char *fields[8] = {"", "", "", "C_STRUCT", argv[3], argv[4], argv[5], "4"};
    for (int i = 0; i < 8; i++)
        if (put_field(out, fields[i])) bad = 1;
    static const unsigned char signature[256];
    if (fwrite(signature, 1, sizeof signature, out) != sizeof signature) bad = 1;
    fclose(in);
    if (fclose(out)) bad = 1;
    if (bad) {
        fprintf(stderr, "append_metadata: writing %s failed (a field longer than %d bytes?)\n", argv[2], FIELD);
        remove(argv[2]);
        return 1;
    }
    return 0;
}
