/*
 * cmd_schema.c - `tsf schema FILE [--json]`: the schema of a file: table-model tables with their
 * columns (category, type, encoding, compression; TableSchema of the index, container spec §10) and
 * tree-model devices with their series (type from TimeseriesMetadata). Encoding and compression are what
 * the chunks use (every chunk header, no page header; several joined by '+' when a writer chose per chunk,
 * as AUTO does); a table column without chunks shows its schema's.
 * Table devices are listed by `tsf info`.
 */
#include <string.h>

#include "cli.h"

static const char *HELP =
    "usage: tsf schema FILE [--json]\n"
    "Prints the tables of a file (columns with category, type, encoding, compression) and the tree-model\n"
    "devices with their series. Encodings and compressions are those the chunks use (A+B when chunks differ).\n"
    "  --json   one JSON object instead of text\n";

static const char *category_name(tsf_column_category c)
{
    return c == TSF_COLUMN_TAG ? "TAG" : c == TSF_COLUMN_FIELD ? "FIELD" : c == TSF_COLUMN_ATTRIBUTE ? "ATTRIBUTE" : "?";
}

static const char *nz(const char *s)
{
    return s ? s : "?";
}

/* The codecs a series' chunks (or a table column's, over its devices) use, as text: names joined by '+'. */
typedef struct codecs_text {
    char enc[256], comp[128];
} codecs_text;

/* Names of the set bits of mask (encodings, or compressions when comp), joined by '+'; `none` when empty. */
static void mask_names(uint64_t mask, int comp, const char *none, char *buf, size_t cap)
{
    size_t n = 0;
    for (int b = 0; b < 64; b++)
        if (mask >> b & 1) {
            const char *name = comp ? tsf_compression_name((tsf_compression)b) : tsf_encoding_name((tsf_encoding)b);
            int k = snprintf(buf + n, cap - n, "%s%s", n ? "+" : "", nz(name));
            if (k < 0 || (size_t)k >= cap - n) break;
            n += (size_t)k;
        }
    if (!n) snprintf(buf, cap, "%s", none);
}

static void codecs_describe(uint64_t enc, uint64_t comp, const char *enc_none, const char *comp_none,
                            codecs_text *out)
{
    mask_names(enc, 0, enc_none, out->enc, sizeof out->enc);
    mask_names(comp, 1, comp_none, out->comp, sizeof out->comp);
}

/* A table column: what its chunks use over the table's devices, else (no chunks) what the schema says. */
static void column_codecs(tsf_reader *r, const tsf_table_info *ti, const tsf_table_column *col, codecs_text *out)
{
    uint64_t enc = 0, comp = 0;
    for (size_t d = ti->first_device; d < ti->first_device + ti->ndevices; d++) {
        size_t j;
        uint64_t e = 0, c = 0;
        if (tsf_reader_find_series(r, d, col->name, &j, NULL) == TSF_OK &&
            tsf_reader_series_codecs(r, d, j, &e, &c, NULL) == TSF_OK)
            enc |= e, comp |= c;
    }
    codecs_describe(enc, comp, nz(tsf_encoding_name(col->encoding)), nz(tsf_compression_name(col->compression)),
                    out);
}

/* Text or JSON of the tree devices of table `ti` (ncolumns == 0). Returns an exit code. */
static int tree_devices(tsf_reader *r, const char *path, const tsf_table_info *ti, int json, int *first_dev)
{
    for (size_t d = ti->first_device; d < ti->first_device + ti->ndevices; d++) {
        tsf_device_info di;
        tsf_error e = {0};
        if (tsf_reader_device(r, d, &di, &e)) {
            cli_err("schema", "%s: %s", path, e.message);
            return cli_exit_code(e.code);
        }
        cli_table t;
        cli_table_init(&t, 4, 0);
        cli_table_add(&t, "series");
        cli_table_add(&t, "type");
        cli_table_add(&t, "encoding");
        cli_table_add(&t, "compression");
        if (json) {
            fputs(*first_dev ? "\n    {\"name\": " : ",\n    {\"name\": ", stdout);
            cli_json_str(stdout, di.name);
            printf(", \"aligned\": %s, \"series\": [", di.aligned ? "true" : "false");
        } else {
            printf("device %s (%s, %zu series)\n", di.name, di.aligned ? "aligned" : "non-aligned", di.nseries);
        }
        *first_dev = 0;
        for (size_t j = 0; j < di.nseries; j++) {
            tsf_series_info si;
            uint64_t enc = 0, comp = 0;
            if (tsf_reader_series(r, d, j, &si, &e) || tsf_reader_series_codecs(r, d, j, &enc, &comp, &e)) {
                cli_table_free(&t);
                cli_err("schema", "%s: device %s: %s", path, di.name, e.message);
                return cli_exit_code(e.code);
            }
            codecs_text ct;
            codecs_describe(enc, comp, "?", "?", &ct);
            const char *ty = nz(tsf_type_name(si.type)), *en = ct.enc, *co = ct.comp;
            if (json) {
                fputs(j ? ", {\"name\": " : "{\"name\": ", stdout);
                cli_json_str(stdout, si.measurement);
                printf(", \"type\": \"%s\", \"encoding\": \"%s\", \"compression\": \"%s\"}", ty, en, co);
            } else {
                cli_table_add(&t, "%s", si.measurement);
                cli_table_add(&t, "%s", ty);
                cli_table_add(&t, "%s", en);
                cli_table_add(&t, "%s", co);
            }
        }
        if (json)
            fputs("]}", stdout);
        else if (di.nseries && cli_table_print(&t, stdout, "  ")) {
            cli_table_free(&t);
            cli_err("schema", "out of memory");
            return CLI_IO;
        }
        cli_table_free(&t);
    }
    return CLI_OK;
}

int tsf_cmd_schema(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_is(&a, "--json"))
            json = 1;
        else if (cli_positional(&a)) {
            if (cli_one_file(&a, &path)) return CLI_USAGE;
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, path)) return CLI_USAGE;
    tsf_reader *r;
    int rc = cli_open_reader("schema", path, &r);
    if (rc) return rc;
    size_t nt = tsf_reader_table_count(r);
    if (json) {
        fputs("{\"file\": ", stdout);
        cli_json_str(stdout, path);
        printf(", \"version\": %d, \"tables\": [", tsf_reader_version(r));
    }
    /* table-model tables first, then the tree devices */
    int first = 1;
    for (size_t i = 0; i < nt && !rc; i++) {
        tsf_table_info ti;
        tsf_error e = {0};
        if (tsf_reader_table(r, i, &ti, &e)) {
            cli_err("schema", "%s: %s", path, e.message);
            rc = cli_exit_code(e.code);
            break;
        }
        if (!ti.ncolumns) continue;
        if (json) {
            fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", stdout);
            cli_json_str(stdout, ti.name);
            printf(", \"devices\": %zu, \"columns\": [", ti.ndevices);
            for (size_t c = 0; c < ti.ncolumns; c++) {
                const tsf_table_column *col = &ti.columns[c];
                fputs(c ? ", {\"name\": " : "{\"name\": ", stdout);
                cli_json_str(stdout, col->name);
                codecs_text ct;
                column_codecs(r, &ti, col, &ct);
                printf(", \"category\": \"%s\", \"type\": \"%s\", \"encoding\": \"%s\", \"compression\": \"%s\"}",
                       category_name(col->category), nz(tsf_type_name(col->type)), ct.enc, ct.comp);
            }
            fputs("]}", stdout);
        } else {
            printf("table %s (%zu devices)\n", ti.name, ti.ndevices);
            cli_table t;
            cli_table_init(&t, 5, 0);
            cli_table_add(&t, "column");
            cli_table_add(&t, "category");
            cli_table_add(&t, "type");
            cli_table_add(&t, "encoding");
            cli_table_add(&t, "compression");
            for (size_t c = 0; c < ti.ncolumns; c++) {
                const tsf_table_column *col = &ti.columns[c];
                cli_table_add(&t, "%s", col->name);
                cli_table_add(&t, "%s", category_name(col->category));
                cli_table_add(&t, "%s", nz(tsf_type_name(col->type)));
                codecs_text ct;
                column_codecs(r, &ti, col, &ct);
                cli_table_add(&t, "%s", ct.enc);
                cli_table_add(&t, "%s", ct.comp);
            }
            if (cli_table_print(&t, stdout, "  ")) rc = CLI_IO;
            cli_table_free(&t);
        }
        first = 0;
    }
    if (json) fputs(first ? "], \"devices\": [" : "\n  ], \"devices\": [", stdout);
    first = 1;
    for (size_t i = 0; i < nt && !rc; i++) {
        tsf_table_info ti;
        tsf_error e = {0};
        if (tsf_reader_table(r, i, &ti, &e) || ti.ncolumns) continue;
        rc = tree_devices(r, path, &ti, json, &first);
    }
    if (json && !rc) fputs(first ? "]}\n" : "\n  ]}\n", stdout);
    if (!json && !rc && !nt) printf("(no tables or devices)\n");
    tsf_reader_close(r);
    if (fflush(stdout)) {
        cli_err("schema", "cannot write the output");
        return CLI_IO;
    }
    return rc;
}
