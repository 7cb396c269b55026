/*
 * cmd_sketch.c - `tsf sketch FILE`: the byte layout of a TsFile, offset by offset, for a person to read
 * (in the spirit of IoTDB's TsFileSketchTool): head (container spec §2), the data area as the format
 * walker sees it (chunk groups §4, chunk headers §5, pages with their statistics §6-§7, operation index
 * records), then the index area sorted by offset (TimeseriesMetadata with their ChunkMetadata §8.1-§8.2,
 * MetadataIndexNodes §8.3, TsFileMetadata §8.6 with table roots and the bloom filter §9) and the tail.
 * Only parse functions of src/format are used, each bounded by the file length; on a damaged file it
 * prints what it could read, then the error, and exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "format/format.h"
#include "format/meta_index_parse.h"

static const char *HELP =
    "usage: tsf sketch FILE\n"
    "Prints the byte layout of FILE offset by offset: head, chunk groups, chunk headers, pages with their\n"
    "statistics, the index area (TimeseriesMetadata, ChunkMetadata, index nodes, TsFileMetadata, bloom\n"
    "filter) and the tail. On a damaged file prints what it could read, then the error (exit 2).\n";

#define SK_MAX_DEPTH 64

/* One line of the index area, printed after sorting by offset. */
typedef struct sk_line {
    uint64_t off;
    size_t seq;
    int depth;
    char *text;
} sk_line;

typedef struct sk {
    const uint8_t *f;
    size_t len;
    int version;
    uint64_t index_lo, index_hi; /* index area [metaOffset + 1, TsFileMetadata) */
    sk_line *lines;
    size_t n, cap;
    uint64_t budget; /* index structures still allowed (stops loops and fan-out bombs) */
    int oom;
    tsf_error err;
} sk;

static void out_line(uint64_t off, int depth, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%10" PRIu64 "  %*s", off, depth * 2, "");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

static void add_line(sk *s, uint64_t off, int depth, const char *fmt, ...)
{
    if (s->oom) return;
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 256;
        sk_line *p = realloc(s->lines, c * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->lines = p;
        s->cap = c;
    }
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *t = strdup(buf);
    if (!t) {
        s->oom = 1;
        return;
    }
    s->lines[s->n] = (sk_line){off, s->n, depth, t};
    s->n++;
}

static int cmp_line(const void *a, const void *b)
{
    const sk_line *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A short, escaped, quoted rendering of bytes (at most 24 shown). */
static void fmt_bytes(char *buf, size_t cap, const uint8_t *p, size_t n)
{
    size_t k = 0;
    buf[k++] = '"';
    for (size_t i = 0; i < n && k + 8 < cap; i++) {
        if (i == 24) {
            k += (size_t)snprintf(buf + k, cap - k, "...");
            break;
        }
        uint8_t c = p[i];
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
        else
            buf[k++] = (char)c;
    }
    snprintf(buf + k, cap - k, "\"");
}

/* "count 3, time 0..20, min .., max .., first .., last .., sum .." */
static void fmt_stats(char *buf, size_t cap, const tsf_fmt_stats *st)
{
    int n = snprintf(buf, cap, "count %" PRIu64, st->count);
    if (st->count == 0 || n < 0 || (size_t)n >= cap) return;
    n += snprintf(buf + n, cap - (size_t)n, ", time %" PRId64 "..%" PRId64, st->start_time, st->end_time);
    char a[5][80];
    switch ((int)st->type) {
    case TSF_BOOLEAN:
        snprintf(buf + n, cap - (size_t)n, ", first %s, last %s, trues %" PRId64, st->v.b.first ? "true" : "false",
                 st->v.b.last ? "true" : "false", st->v.b.sum);
        return;
    case TSF_INT32:
    case TSF_DATE:
        snprintf(buf + n, cap - (size_t)n,
                 ", min %" PRId32 ", max %" PRId32 ", first %" PRId32 ", last %" PRId32 ", sum %" PRId64,
                 st->v.i32.min, st->v.i32.max, st->v.i32.first, st->v.i32.last, st->v.i32.sum);
        return;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        cli_fmt_real(a[0], sizeof a[0], st->v.i64.sum, 0);
        snprintf(buf + n, cap - (size_t)n,
                 ", min %" PRId64 ", max %" PRId64 ", first %" PRId64 ", last %" PRId64 ", sum %s", st->v.i64.min,
                 st->v.i64.max, st->v.i64.first, st->v.i64.last, a[0]);
        return;
    case TSF_FLOAT:
        cli_fmt_real(a[0], sizeof a[0], st->v.f32.min, 1);
        cli_fmt_real(a[1], sizeof a[1], st->v.f32.max, 1);
        cli_fmt_real(a[2], sizeof a[2], st->v.f32.first, 1);
        cli_fmt_real(a[3], sizeof a[3], st->v.f32.last, 1);
        cli_fmt_real(a[4], sizeof a[4], st->v.f32.sum, 0);
        break;
    case TSF_DOUBLE:
        cli_fmt_real(a[0], sizeof a[0], st->v.f64.min, 0);
        cli_fmt_real(a[1], sizeof a[1], st->v.f64.max, 0);
        cli_fmt_real(a[2], sizeof a[2], st->v.f64.first, 0);
        cli_fmt_real(a[3], sizeof a[3], st->v.f64.last, 0);
        cli_fmt_real(a[4], sizeof a[4], st->v.f64.sum, 0);
        break;
    case TSF_TEXT:
    case TSF_STRING:
        fmt_bytes(a[2], sizeof a[2], st->v.bin.first.data, st->v.bin.first.len);
        fmt_bytes(a[3], sizeof a[3], st->v.bin.last.data, st->v.bin.last.len);
        if (st->type == TSF_TEXT) {
            snprintf(buf + n, cap - (size_t)n, ", first %s, last %s", a[2], a[3]);
            return;
        }
        fmt_bytes(a[0], sizeof a[0], st->v.bin.min.data, st->v.bin.min.len);
        fmt_bytes(a[1], sizeof a[1], st->v.bin.max.data, st->v.bin.max.len);
        snprintf(buf + n, cap - (size_t)n, ", min %s, max %s, first %s, last %s", a[0], a[1], a[2], a[3]);
        return;
    default: return;
    }
    snprintf(buf + n, cap - (size_t)n, ", min %s, max %s, first %s, last %s, sum %s", a[0], a[1], a[2], a[3], a[4]);
}

static const char *nz(const char *s)
{
    return s ? s : "?";
}

static const char *kind_name(uint8_t marker)
{
    switch (tsf_fmt_chunk_kind(marker)) {
    case TSF_CHUNK_TIME: return "aligned time column";
    case TSF_CHUNK_VALUE: return "aligned value column";
    default: return "non-aligned";
    }
}

/* The data area (walker). Returns 0, or 2 after printing the error. */
static int sketch_data(const sk *s, uint64_t *end_out, int *truncated)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e = {0};
    if (tsf_walk_init(&w, s->f, s->len, &e)) {
        printf("error: %s\n", e.message);
        return CLI_DAMAGED;
    }
    uint64_t groups = 0, chunks_in_group = 0;
    char dev[512], sbuf[512];
    for (;;) {
        tsf_status st = tsf_walk_next(&w, &it, &e);
        if (st) {
            printf("error: %s\n", e.message);
            return CLI_DAMAGED;
        }
        switch (it.kind) {
        case TSF_WALK_CHUNK_GROUP:
            if (groups) out_line(it.offset, 1, "(end of chunk group: %" PRIu64 " chunks)", chunks_in_group);
            tsf_fmt_device_to_string(&it.device, dev, sizeof dev);
            out_line(it.offset, 1, "chunk group header: marker 0x00, device %s", dev);
            groups++;
            chunks_in_group = 0;
            break;
        case TSF_WALK_CHUNK:
            chunks_in_group++;
            out_line(it.offset, 2, "chunk header: marker 0x%02x (%s, %s), measurement \"%.*s\", %s, %s, %s, dataSize %" PRIu32
                     ", header %zu bytes",
                     it.chunk.marker, kind_name(it.chunk.marker),
                     tsf_fmt_chunk_multi_page(it.chunk.marker) ? "pages with statistics" : "one page",
                     (int)(it.chunk.measurement.len > 200 ? 200 : it.chunk.measurement.len),
                     it.chunk.measurement.data ? (const char *)it.chunk.measurement.data : "",
                     nz(tsf_type_name(it.chunk.data_type)), nz(tsf_encoding_name(it.chunk.encoding)),
                     nz(tsf_compression_name(it.chunk.compression)), it.chunk.data_size, it.chunk.header_len);
            break;
        case TSF_WALK_PAGE:
            if (it.page.has_stats) fmt_stats(sbuf, sizeof sbuf, &it.page.stats);
            out_line(it.offset, 3, "page %" PRIu32 ": header %zu bytes, body %" PRIu32 " bytes stored, %" PRIu32
                     " raw%s%s",
                     it.page_index, it.page.header_len, it.page.compressed_size, it.page.uncompressed_size,
                     it.page.has_stats ? "; " : it.page.uncompressed_size ? "" : " (empty page)",
                     it.page.has_stats ? sbuf : "");
            break;
        case TSF_WALK_OP_INDEX:
            out_line(it.offset, 1, "operation index: marker 0x04, plan index %" PRId64 "..%" PRId64,
                     it.op_index.min_plan_index, it.op_index.max_plan_index);
            break;
        case TSF_WALK_END:
            if (groups) out_line(it.offset, 1, "(end of chunk group: %" PRIu64 " chunks)", chunks_in_group);
            *end_out = it.offset;
            *truncated = w.truncated;
            if (!w.truncated) out_line(it.offset, 0, "separator: marker 0x02, the index area follows (metaOffset)");
            return CLI_OK;
        }
    }
}

static int spend(sk *s, uint64_t off)
{
    if (s->budget == 0) {
        tsf_err(&s->err, TSF_ECORRUPT, "index area at %" PRIu64 ": more structures than its size allows", off);
        return -1;
    }
    s->budget--;
    return 0;
}

/* Bounds-checked view of [off, end) inside the index area. */
static int index_view(sk *s, uint64_t off, uint64_t end, const char *what, const uint8_t **p)
{
    if (off < s->index_lo || end > s->index_hi || off >= end) {
        tsf_err(&s->err, TSF_ECORRUPT, "%s: range [%" PRIu64 ", %" PRIu64 ") outside the index area [%" PRIu64
                ", %" PRIu64 ")", what, off, end, s->index_lo, s->index_hi);
        return -1;
    }
    *p = s->f + off;
    return 0;
}

static const char *node_name(uint8_t t)
{
    switch (t) {
    case TSF_NODE_INTERNAL_DEVICE: return "INTERNAL_DEVICE";
    case TSF_NODE_LEAF_DEVICE: return "LEAF_DEVICE";
    case TSF_NODE_INTERNAL_MEASUREMENT: return "INTERNAL_MEASUREMENT";
    default: return "LEAF_MEASUREMENT";
    }
}

static int walk_node(sk *s, const tsf_mip_node *n, uint64_t node_off, int device_level, int depth, const char *dev);

/* Entries of a node: children (nodes or TimeseriesMetadata runs). */
static int walk_entries(sk *s, const tsf_mip_node *n, int depth, const char *dev)
{
    size_t pos = 0;
    tsf_mip_entry e, next;
    memset(&next, 0, sizeof next);
    if (tsf_mip_node_entry(n, &pos, &e, &s->err)) return -1;
    for (uint32_t i = 0; i < n->count; i++) {
        uint64_t end = n->end_offset;
        if (i + 1 < n->count) {
            if (tsf_mip_node_entry(n, &pos, &next, &s->err)) return -1;
            end = next.offset;
        }
        const uint8_t *p;
        if (index_view(s, e.offset, end, "index entry", &p)) return -1;
        size_t len = (size_t)(end - e.offset);
        char name[512];
        if (n->type == TSF_NODE_LEAF_DEVICE || n->type == TSF_NODE_INTERNAL_DEVICE) {
            tsf_fmt_device_to_string(&e.device, name, sizeof name);
            tsf_mip_node child;
            size_t used;
            int leaf = n->type == TSF_NODE_LEAF_DEVICE;
            if (tsf_mip_parse_node(p, len, e.offset, s->version, !leaf, &child, &used, &s->err)) return -1;
            if (walk_node(s, &child, e.offset, !leaf, depth + 1, leaf ? name : dev)) return -1;
        } else if (n->type == TSF_NODE_LEAF_MEASUREMENT) {
            size_t at = 0;
            while (at < len) {
                tsf_mip_tsm t;
                size_t used = 0;
                if (spend(s, e.offset + at)) return -1;
                if (tsf_mip_parse_tsm(p + at, len - at, e.offset + at, &t, &used, &s->err)) return -1;
                char sb[512];
                fmt_stats(sb, sizeof sb, &t.stats);
                add_line(s, e.offset + at, 1, "TimeseriesMetadata %s.%.*s: %s, type byte 0x%02x, %s", dev,
                         (int)(t.measurement.len > 200 ? 200 : t.measurement.len),
                         t.measurement.data ? (const char *)t.measurement.data : "", nz(tsf_type_name(t.data_type)),
                         t.meta_type, sb);
                size_t cpos = 0;
                for (;;) {
                    uint64_t coff, at_c = t.chunks_base + cpos;
                    tsf_fmt_stats cs;
                    tsf_status st = tsf_mip_next_chunk_meta(&t, &cpos, &coff, &cs, &s->err);
                    if (st == TSF_ENOTFOUND) break;
                    if (st || spend(s, at_c)) return -1;
                    if (t.meta_type & 1) {
                        fmt_stats(sb, sizeof sb, &cs);
                        add_line(s, at_c, 2, "ChunkMetadata: chunk at %" PRIu64 ", %s", coff, sb);
                    } else {
                        add_line(s, at_c, 2, "ChunkMetadata: chunk at %" PRIu64 " (statistics as above)", coff);
                    }
                }
                at += used;
            }
        } else {
            tsf_mip_node child;
            size_t used;
            if (tsf_mip_parse_node(p, len, e.offset, s->version, 0, &child, &used, &s->err)) return -1;
            if (walk_node(s, &child, e.offset, 0, depth + 1, dev)) return -1;
        }
        e = next;
    }
    return 0;
}

static int walk_node(sk *s, const tsf_mip_node *n, uint64_t node_off, int device_level, int depth, const char *dev)
{
    if (depth > SK_MAX_DEPTH) {
        tsf_err(&s->err, TSF_ECORRUPT, "index node at %" PRIu64 ": deeper than %d levels", node_off, SK_MAX_DEPTH);
        return -1;
    }
    if (spend(s, node_off)) return -1;
    size_t pos = 0;
    tsf_mip_entry e;
    char first[512] = "";
    if (tsf_mip_node_entry(n, &pos, &e, &s->err)) return -1;
    if (device_level || n->type == TSF_NODE_LEAF_DEVICE)
        tsf_fmt_device_to_string(&e.device, first, sizeof first);
    else
        snprintf(first, sizeof first, "%.*s", (int)(e.name.len > 200 ? 200 : e.name.len),
                 e.name.data ? (const char *)e.name.data : "");
    add_line(s, node_off, 1, "MetadataIndexNode %s%s%s: %" PRIu32 " entries from \"%s\", endOffset %" PRIu64,
             node_name(n->type), device_level ? "" : " of ", device_level ? "" : dev, n->count, first, n->end_offset);
    return walk_entries(s, n, depth, dev);
}

/* The index area and tail; lines collected, sorted, printed. Returns 0, or 2 after printing the error. */
static int sketch_index(sk *s)
{
    tsf_fmt_tail tail;
    tsf_mip_file_meta fm;
    int rc = CLI_OK;
    if (tsf_fmt_parse_tail(s->f + s->len - TSF_FMT_TAIL_LEN, TSF_FMT_TAIL_LEN, s->len, &tail, &s->err)) goto fail;
    const uint8_t *m = s->f + tail.meta_pos;
    tsf_error e4;
    if (tsf_mip_parse_file_meta(m, tail.meta_size, tail.meta_pos, s->version, &fm, &s->err)) {
        /* version-3 files of the C++ writer use the v4 layout (container spec §21) */
        if (s->version != 3 || tsf_mip_parse_file_meta(m, tail.meta_size, tail.meta_pos, 4, &fm, &e4)) goto fail;
        s->version = 4;
    }
    if (fm.meta_offset >= tail.meta_pos) {
        tsf_err(&s->err, TSF_ECORRUPT, "TsFileMetadata at %" PRIu64 ": metaOffset %" PRIu64 " not before it",
                tail.meta_pos, fm.meta_offset);
        goto fail;
    }
    s->index_lo = fm.meta_offset + 1;
    s->index_hi = tail.meta_pos;
    s->budget = (s->index_hi - s->index_lo) / 4 + 64;
    add_line(s, tail.meta_pos, 0, "TsFileMetadata (%" PRIu32 " bytes): %" PRIu32 " table index root%s, %" PRIu32
             " table schema%s, metaOffset %" PRIu64,
             tail.meta_size, fm.ntables, fm.ntables == 1 ? "" : "s", fm.nschemas, fm.nschemas == 1 ? "" : "s",
             fm.meta_offset);
    if (fm.bloom_bits)
        add_line(s, (uint64_t)(fm.bloom_bits - s->f), 1, "bloom filter: %zu bytes of bits, size %" PRIu32
                 ", %" PRIu32 " hash functions", fm.bloom_len, fm.bloom_size, fm.bloom_k);
    size_t pos = 0;
    for (uint32_t i = 0; i < fm.ntables; i++) {
        tsf_fmt_str name;
        tsf_mip_node root;
        if (tsf_mip_next_table(&fm, &pos, &name, &root, &s->err)) goto fail;
        add_line(s, root.entries_base, 1, "table \"%.*s\" index root: %s, %" PRIu32 " entries, endOffset %" PRIu64,
                 (int)(name.len > 200 ? 200 : name.len), name.data ? (const char *)name.data : "",
                 node_name(root.type), root.count, root.end_offset);
        if (walk_entries(s, &root, 0, "")) goto fail;
    }
    pos = 0;
    for (uint32_t i = 0; i < fm.nschemas; i++) {
        tsf_fmt_str name;
        uint32_t ncol;
        uint64_t at = fm.schemas_base + pos;
        if (tsf_mip_next_schema(&fm, &pos, &name, &ncol, &s->err)) goto fail;
        add_line(s, at, 1, "TableSchema \"%.*s\": %" PRIu32 " columns", (int)(name.len > 200 ? 200 : name.len),
                 name.data ? (const char *)name.data : "", ncol);
        for (uint32_t k = 0; k < ncol; k++) {
            tsf_mip_column col;
            at = fm.schemas_base + pos;
            if (tsf_mip_next_column(&fm, &pos, &col, &s->err)) goto fail;
            add_line(s, at, 2, "column \"%.*s\": %s, %s, %s, category %" PRId32,
                     (int)(col.name_len > 200 ? 200 : col.name_len), col.name ? (const char *)col.name : "",
                     nz(tsf_type_name((tsf_type)col.data_type)), nz(tsf_encoding_name((tsf_encoding)col.encoding)),
                     nz(tsf_compression_name((tsf_compression)col.compression)), col.category);
        }
    }
    add_line(s, s->len - TSF_FMT_TAIL_LEN, 0, "tail: TsFileMetadata size %" PRIu32 ", magic \"TsFile\"",
             tail.meta_size);
    goto print;
fail:
    rc = CLI_DAMAGED;
print:
    if (s->n) qsort(s->lines, s->n, sizeof *s->lines, cmp_line);
    for (size_t i = 0; i < s->n; i++) out_line(s->lines[i].off, s->lines[i].depth, "%s", s->lines[i].text);
    if (s->oom) {
        printf("error: out of memory\n");
        return CLI_IO;
    }
    if (rc) printf("error: %s\n", s->err.message);
    return rc;
}

int tsf_cmd_sketch(int argc, char **argv)
{
    const char *path = NULL;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_positional(&a)) {
            if (cli_one_file(&a, &path)) return CLI_USAGE;
        } else
            return cli_unknown(&a);
    }
    if (cli_file_given(&a, path)) return CLI_USAGE;
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        cli_err("sketch", "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return CLI_IO;
    }
    size_t len = (size_t)sb.st_size;
    const uint8_t *f = NULL;
    if (len) {
        void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            cli_err("sketch", "%s: cannot read: %s", path, strerror(errno));
            close(fd);
            return CLI_IO;
        }
        f = p;
    }
    close(fd);
    sk s;
    memset(&s, 0, sizeof s);
    s.f = f;
    s.len = len;
    printf("%s: %zu bytes\n    offset  structure\n", path, len);
    int rc = CLI_OK, version = 0;
    tsf_error e = {0};
    if (tsf_fmt_parse_head(f, len, &version, &e)) {
        printf("error: %s\n", e.message);
        rc = CLI_DAMAGED;
    } else {
        s.version = version;
        out_line(0, 0, "head: magic \"TsFile\", format version %d", version);
        uint64_t end = 0;
        int truncated = 0;
        rc = sketch_data(&s, &end, &truncated);
        if (!rc && truncated) {
            printf("error: %s: the data ends at %" PRIu64 " without the index and tail (a crashed writer?); "
                   "tsf recover can repair it\n", path, end);
            rc = CLI_DAMAGED;
        }
        if (!rc) rc = sketch_index(&s);
    }
    for (size_t i = 0; i < s.n; i++) free(s.lines[i].text);
    free(s.lines);
    if (f) munmap((void *)(uintptr_t)f, len);
    if (fflush(stdout)) return CLI_IO;
    if (rc == CLI_DAMAGED) cli_err("sketch", "%s: damaged (see the error above)", path);
    return rc;
}
