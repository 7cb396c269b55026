/*
 * test_format.c - the container structures of src/format: the worked examples of the container
 * spec (§4, §5, §6.4, §7, §13a) parsed from the golden files, byte-exact parse/write round trips of
 * every structure (synthetic, every statistics type, and every header of every golden file),
 * truncation at every byte and random garbage (TSF_ECORRUPT, never a crash; run under ASan+UBSan),
 * and the walker on the deliberately damaged golden files.
 */
#include <dirent.h>
#include <stdlib.h>

#include "format/format.h"
#include "test.h"

/* ---- helpers ---- */

static uint8_t *golden(const char *name, size_t *len)
{
    const char *data = tsf_test_data_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data, name);
    return tsf_test_read_file(path, len);
}

static int str_is(tsf_fmt_str s, const char *want)
{
    return !s.is_null && s.len == strlen(want) && memcmp(s.data, want, s.len) == 0;
}

static int bytes_is(tsf_bytes b, const char *want)
{
    return b.len == strlen(want) && memcmp(b.data, want, b.len) == 0;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Advances the walker to the next item of `kind`; 0 if the data area ends first. */
static int walk_to(tsf_walker *w, tsf_walk_item *it, tsf_walk_kind kind)
{
    tsf_error e;
    for (;;) {
        if (tsf_walk_next(w, it, &e) != TSF_OK) {
            fprintf(stderr, "walk: %s\n", e.message);
            return 0;
        }
        if (it->kind == kind) return 1;
        if (it->kind == TSF_WALK_END) return 0;
    }
}

/* ---- head and tail (§2, §13a.1) ---- */

static void test_head_tail(void)
{
    tsf_error e;
    int v = 0;
    uint8_t buf[16];
    size_t n;
    CHECK_OK(tsf_fmt_write_head(4, buf, sizeof buf, &n, &e), &e);
    CHECK_EQ_INT(n, 7);
    CHECK_MEM(buf, "TsFile\x04", 7);
    CHECK_OK(tsf_fmt_parse_head(buf, n, &v, &e), &e);
    CHECK_EQ_INT(v, 4);
    CHECK_EQ_INT(tsf_fmt_write_head(4, buf, 6, &n, &e), TSF_ERANGE);
    CHECK_EQ_INT(tsf_fmt_write_head(5, buf, sizeof buf, &n, &e), TSF_EINVAL);
    CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFile\x03", 7, &v, &e), TSF_OK);
    CHECK_EQ_INT(v, 3);
    CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFile\x05", 7, &v, &e), TSF_ENOTSUP);
    CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFile000002", 12, &v, &e), TSF_ENOTSUP);
    CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFilE\x04", 7, &v, &e), TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFile\x00", 7, &v, &e), TSF_ECORRUPT);
    for (size_t k = 0; k < 7; k++)
        CHECK_EQ_INT(tsf_fmt_parse_head((const uint8_t *)"TsFile\x04", k, &v, &e), TSF_ECORRUPT);

    /* tail round trip */
    tsf_fmt_tail t;
    CHECK_OK(tsf_fmt_write_tail(63, buf, sizeof buf, &n, &e), &e);
    CHECK_EQ_INT(n, 10);
    CHECK_MEM(buf, "\0\0\0\x3fTsFile", 10);
    CHECK_OK(tsf_fmt_parse_tail(buf, 10, 81, &t, &e), &e);
    CHECK_EQ_INT(t.meta_size, 63);
    CHECK_EQ_INT(t.meta_pos, 8);
    CHECK_EQ_INT(tsf_fmt_parse_tail(buf, 10, 80, &t, &e),
                 TSF_ECORRUPT); /* metaSize would reach the separator */
    CHECK(strstr(e.message, "metaSize") != NULL);
    buf[9] = 'x';
    CHECK_EQ_INT(tsf_fmt_parse_tail(buf, 10, 81, &t, &e), TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_fmt_parse_tail(buf, 10, 12, &t, &e), TSF_ECORRUPT);
    /* files of 13..17 bytes have no room for a separator: never a position before the head */
    memcpy(buf, "\0\0\0\0TsFile", 10);
    for (uint64_t size = 13; size < 18; size++)
        CHECK_EQ_INT(tsf_fmt_parse_tail(buf, 10, size, &t, &e), TSF_ECORRUPT);
    CHECK_OK(tsf_fmt_parse_tail(buf, 10, 18, &t, &e), &e);
    CHECK_EQ_INT(t.meta_pos, 8);

    size_t len;
    uint8_t *f = golden("tsfile-java/empty_no_data.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    CHECK_EQ_INT(len, 81);
    CHECK(tsf_fmt_is_complete(f, len));
    CHECK(!tsf_fmt_is_complete(f, len - 1));
    CHECK_OK(tsf_fmt_parse_head(f, len, &v, &e), &e);
    CHECK_EQ_INT(v, 4);
    CHECK_OK(tsf_fmt_parse_tail(f + len - 10, 10, len, &t, &e), &e);
    CHECK_EQ_INT(t.meta_size, 63);
    CHECK_EQ_INT(t.meta_pos, 8);
    /* §13a.1: the data area is empty, the separator sits at offset 7 */
    tsf_walker w;
    tsf_walk_item it;
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_END);
    CHECK_EQ_INT(it.offset, 7);
    CHECK_EQ_INT(w.truncated, 0);
    free(f);
}

/* ---- §13a.2: tree_nonaligned_time_edges.tsfile, item by item ---- */

static void test_worked_time_edges(void)
{
    size_t len;
    tsf_error e;
    uint8_t *f = golden("tsfile-java/tree_nonaligned_time_edges.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    CHECK_EQ_INT(len, 724);
    tsf_walker w;
    tsf_walk_item it;
    char dev[64];
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    CHECK_EQ_INT(w.version, 4);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_CHUNK_GROUP);
    CHECK_EQ_INT(it.offset, 7);
    CHECK_EQ_INT(it.device.nseg, 2);
    CHECK(str_is(it.device.seg[0], "root.sg1") && str_is(it.device.seg[1], "d1"));
    CHECK_EQ_INT(tsf_fmt_device_to_string(&it.device, dev, sizeof dev), 11);
    CHECK(strcmp(dev, "root.sg1.d1") == 0);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_CHUNK);
    CHECK_EQ_INT(it.offset, 0x15);
    CHECK_EQ_INT(it.chunk.marker, 0x05);
    CHECK(str_is(it.chunk.measurement, "s1"));
    CHECK_EQ_INT(it.chunk.data_size, 163);
    CHECK_EQ_INT(it.chunk.data_type, TSF_INT64);
    CHECK_EQ_INT(it.chunk.compression, TSF_UNCOMPRESSED);
    CHECK_EQ_INT(it.chunk.encoding, TSF_ENC_PLAIN);
    CHECK_EQ_INT(it.chunk.header_len, 9);
    CHECK_EQ_INT(tsf_fmt_chunk_kind(it.chunk.marker), TSF_CHUNK_NONALIGNED);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_PAGE);
    CHECK_EQ_INT(it.offset, 0x1e);
    CHECK_EQ_INT(it.page.uncompressed_size, 159);
    CHECK_EQ_INT(it.page.compressed_size, 159);
    CHECK_EQ_INT(it.page.has_stats, 0);
    CHECK_EQ_INT(it.body_offset, 0x22);
    tsf_fmt_nonaligned_page np;
    CHECK_OK(tsf_fmt_parse_nonaligned_page(it.body, it.body_len, it.body_offset, &np, &e), &e);
    CHECK_EQ_INT(np.time_len, 86);
    CHECK_EQ_INT(np.time - f, 0x23);
    CHECK_MEM(np.time, "\x00\x00\x00\x08\x00\x00\x00\x3e", 8); /* TS_2DIFF block: n 8, width 62 */
    CHECK_EQ_INT(np.values_len, 72);                           /* 9 PLAIN int64 */
    CHECK_EQ_INT(np.values - f, 0x79);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_CHUNK_GROUP);
    CHECK_EQ_INT(it.offset, 0xc1);
    CHECK(str_is(it.device.seg[1], "a1"));

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_CHUNK);
    CHECK_EQ_INT(it.offset, 0xcf);
    CHECK_EQ_INT(it.chunk.marker, 0x85);
    CHECK_EQ_INT(tsf_fmt_chunk_kind(it.chunk.marker), TSF_CHUNK_TIME);
    CHECK(str_is(it.chunk.measurement, ""));
    CHECK_EQ_INT(it.chunk.data_size, 45);
    CHECK_EQ_INT(it.chunk.data_type, TSF_VECTOR);
    CHECK_EQ_INT(it.chunk.compression, TSF_LZ4);
    CHECK_EQ_INT(it.chunk.encoding, TSF_ENC_TS_2DIFF);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_PAGE);
    CHECK_EQ_INT(it.offset, 0xd5);
    CHECK_EQ_INT(it.page.uncompressed_size, 86);
    CHECK_EQ_INT(it.page.compressed_size, 43);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_CHUNK);
    CHECK_EQ_INT(it.offset, 0x102);
    CHECK_EQ_INT(it.chunk.marker, 0x45);
    CHECK_EQ_INT(tsf_fmt_chunk_kind(it.chunk.marker), TSF_CHUNK_VALUE);
    CHECK_EQ_INT(it.chunk.data_size, 80);
    CHECK_EQ_INT(it.chunk_index, 1);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_PAGE);
    CHECK_EQ_INT(it.offset, 0x10a);
    CHECK_EQ_INT(it.page.uncompressed_size, 78);
    tsf_fmt_value_page vp;
    CHECK_OK(tsf_fmt_parse_value_page(it.body, it.body_len, it.body_offset, &vp, &e), &e);
    CHECK_EQ_INT(vp.row_count, 9);
    CHECK_EQ_INT(vp.bitmap_len, 2);
    CHECK_MEM(vp.bitmap, "\xff\x80", 2);
    CHECK_EQ_INT(vp.present, 9);
    CHECK_EQ_INT(vp.values_len, 72);

    CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
    CHECK_EQ_INT(it.kind, TSF_WALK_END);
    CHECK_EQ_INT(it.offset, 0x15a); /* metaOffset 346 */
    CHECK_EQ_INT(w.truncated, 0);
    CHECK_OK(tsf_walk_next(&w, &it, &e), &e); /* stays at the end */
    CHECK_EQ_INT(it.kind, TSF_WALK_END);

    tsf_fmt_tail t;
    CHECK_OK(tsf_fmt_parse_tail(f + len - 10, 10, len, &t, &e), &e);
    CHECK_EQ_INT(t.meta_size, 156);
    CHECK_EQ_INT(t.meta_pos, 0x22e);
    free(f);
}

/* ---- §4: device ids (table model, null tags, deep tree paths, v3) ---- */

static void check_group_at(const uint8_t *f, size_t len, size_t off, const char *want, uint32_t nseg,
                           size_t want_len)
{
    tsf_fmt_device_id d;
    tsf_error e;
    size_t used = 0, n = 0;
    char s[128];
    uint8_t out[128];
    CHECK_OK(tsf_fmt_parse_chunk_group_header(f + off, len - off, off, 4, &d, &used, &e), &e);
    CHECK_EQ_INT(d.nseg, nseg);
    CHECK_EQ_INT(used, want_len);
    tsf_fmt_device_to_string(&d, s, sizeof s);
    if (strcmp(s, want) != 0) fprintf(stderr, "device at %zu: '%s' != '%s'\n", off, s, want);
    CHECK(strcmp(s, want) == 0);
    /* re-serialised from the segments, the header is the same bytes */
    CHECK_OK(tsf_fmt_write_chunk_group_header(d.seg, d.nseg, 4, out, sizeof out, &n, &e), &e);
    CHECK_EQ_INT(n, used);
    CHECK_MEM(out, f + off, n < used ? n : used);
}

static void test_worked_device_ids(void)
{
    size_t len;
    uint8_t *f = golden("tsfile-java/table_two_tables_nulls_lz4.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    check_group_at(f, len, 3012, "weather.east,x.s\"q", 3, 21);
    check_group_at(f, len, 2030,
                   "power.\xe6\xa4\x8d\xe7\x89\xa9"
                   "3",
                   2, 16);
    free(f);

    f = golden("tsfile-java/table_null_tags_uncompressed.tsfile", &len);
    CHECK(f != NULL);
    if (!f) return;
    check_group_at(f, len, 414, "sensors.null.s1", 3, 14);
    check_group_at(f, len, 7, "sensors", 1, 10);
    {
        tsf_fmt_device_id d;
        tsf_error e;
        CHECK_OK(tsf_fmt_parse_device_id(f + 415, len - 415, 415, 4, &d, NULL, &e), &e);
        CHECK(d.seg[1].is_null);
        CHECK(str_is(d.seg[2], "s1"));
    }
    /* all five devices in data-area order (§4.1) */
    const char *want[] = {"sensors", "sensors.null.s1", "sensors.north", "sensors.north.s1",
                          "sensors.south.s2"};
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    size_t k = 0;
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    while (walk_to(&w, &it, TSF_WALK_CHUNK_GROUP)) {
        char s[64];
        tsf_fmt_device_to_string(&it.device, s, sizeof s);
        CHECK(k < 5 && strcmp(s, want[k]) == 0);
        k++;
    }
    CHECK_EQ_INT(k, 5);
    free(f);

    /* §10.2: tree paths of 3..6 levels */
    f = golden("tsfile-java/tree_deep_paths_4_5_levels.tsfile", &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    int seen3 = 0, seen4 = 0;
    while (walk_to(&w, &it, TSF_WALK_CHUNK_GROUP)) {
        char s[64];
        tsf_fmt_device_to_string(&it.device, s, sizeof s);
        if (!strcmp(s, "root.a.b.c.d")) {
            seen3++;
            CHECK_EQ_INT(it.device.nseg, 3);
            CHECK(str_is(it.device.seg[0], "root.a.b") && str_is(it.device.seg[1], "c") &&
                  str_is(it.device.seg[2], "d"));
            CHECK_MEM(f + it.offset,
                      "\x00\x03\x10root.a.b\x02"
                      "c\x02"
                      "d",
                      15);
        }
        if (!strcmp(s, "root.a.b.c.d.e")) {
            seen4++;
            CHECK_EQ_INT(it.device.nseg, 4);
        }
    }
    CHECK_EQ_INT(seen3, 1);
    CHECK_EQ_INT(seen4, 1);
    free(f);

    /* v3 (C++ writer): one plain path string */
    f = golden("tsfile-cpp/tree_regular_time_UNCOMPRESSED.tsfile", &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    CHECK_EQ_INT(w.version, 3);
    CHECK(walk_to(&w, &it, TSF_WALK_CHUNK_GROUP));
    CHECK_EQ_INT(it.device.version, 3);
    CHECK_EQ_INT(it.device.nseg, 1);
    CHECK(str_is(it.device.seg[0], "root.testdata.regular.d0"));
    int chunks = 0;
    while (walk_to(&w, &it, TSF_WALK_CHUNK)) chunks++;
    CHECK_EQ_INT(chunks, 2);
    free(f);
}

/* ---- §5 / §7: chunk headers and page statistics of page 0 ---- */

static int first_page(const char *name, uint8_t **file, tsf_walk_item *it)
{
    size_t len;
    tsf_walker w;
    tsf_error e;
    *file = golden(name, &len);
    if (!*file) return 0;
    CHECK_OK(tsf_walk_init(&w, *file, len, &e), &e);
    return walk_to(&w, it, TSF_WALK_PAGE);
}

/* The page header re-serialised from the parsed struct equals the file's bytes. */
static void check_page_header_bytes(const uint8_t *f, const tsf_walk_item *it)
{
    uint8_t out[256];
    size_t n = 0;
    tsf_error e;
    CHECK_OK(tsf_fmt_write_page_header(&it->page, out, sizeof out, &n, &e), &e);
    CHECK_EQ_INT(n, it->page.header_len);
    CHECK_MEM(out, f + it->offset, n);
}

static void test_worked_statistics(void)
{
    uint8_t *f;
    tsf_walk_item it;
    if (!first_page("tsfile-java/tree_nonaligned_int64_ts2diff_uncompressed.tsfile", &f, &it)) {
        free(f);
        CHECK(!"tests/data/tsfile-java/tree_nonaligned_int64_ts2diff_uncompressed.tsfile unreadable");
        return;
    }
    /* §5: 01 | 04 73 31 | 8c cd 01 | 02 | 00 | 04 */
    CHECK_EQ_INT(it.chunk_offset, 21);
    CHECK_EQ_INT(it.chunk.marker, 0x01);
    CHECK_EQ_INT(it.chunk.data_size, 26252);
    CHECK_EQ_INT(it.chunk.data_type, TSF_INT64);
    CHECK_EQ_INT(it.chunk.encoding, TSF_ENC_TS_2DIFF);
    CHECK(it.page.has_stats);
    CHECK_EQ_INT(it.page.stats.count, 1000);
    CHECK_EQ_INT(it.page.stats.start_time, 1000);
    CHECK_EQ_INT(it.page.stats.end_time, 1000005);
    CHECK(f64_bits(it.page.stats.v.i64.sum) == 0x44057f87c163f3eaull);
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_nonaligned_boolean_plain_uncompressed.tsfile", &f, &it));
    CHECK_EQ_INT(it.page.stats.v.b.first, 1);
    CHECK_EQ_INT(it.page.stats.v.b.last, 1);
    CHECK_EQ_INT(it.page.stats.v.b.sum, 657);
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_nonaligned_int32_plain_uncompressed.tsfile", &f, &it));
    CHECK_EQ_INT(it.page.stats.v.i32.min, INT32_MIN);
    CHECK_EQ_INT(it.page.stats.v.i32.max, INT32_MAX);
    CHECK_EQ_INT(it.page.stats.v.i32.first, INT32_MIN);
    CHECK_EQ_INT(it.page.stats.v.i32.last, 0x0041e565);
    CHECK((uint64_t)it.page.stats.v.i32.sum == 0xfffffffe0cad206aull);
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_nonaligned_float_plain_uncompressed.tsfile", &f, &it));
    CHECK(f32_bits(it.page.stats.v.f32.min) == 0x7fc00000u);
    CHECK(f32_bits(it.page.stats.v.f32.max) == 0x7fc00000u);
    CHECK(f32_bits(it.page.stats.v.f32.first) == 0x7fc00000u);
    CHECK(f32_bits(it.page.stats.v.f32.last) == 0x131e2d5du);
    CHECK(f64_bits(it.page.stats.v.f32.sum) == 0x7ff8000000000000ull);
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_nonaligned_text_plain_uncompressed.tsfile", &f, &it));
    CHECK_EQ_INT(it.chunk.data_type, TSF_TEXT);
    CHECK(bytes_is(it.page.stats.v.bin.first, ""));
    CHECK(bytes_is(it.page.stats.v.bin.last, "r57422_\xc3\xb1"));
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_nonaligned_string_plain_uncompressed.tsfile", &f, &it));
    CHECK_EQ_INT(it.chunk.data_type, TSF_STRING);
    CHECK(bytes_is(it.page.stats.v.bin.first, ""));
    CHECK_EQ_INT(it.page.stats.v.bin.last.len, 9);
    CHECK(bytes_is(it.page.stats.v.bin.min, ""));
    CHECK_EQ_INT(it.page.stats.v.bin.max.len, 21);
    CHECK(it.page.stats.v.bin.max.len >= 3 && memcmp(it.page.stats.v.bin.max.data, "\xe6\x97\xa5", 3) == 0);
    check_page_header_bytes(f, &it);
    free(f);

    CHECK(first_page("tsfile-java/tree_aligned_multichunk_100k_zstd.tsfile", &f, &it));
    /* §5: 81 | 00 | b4 0a | 06 | 07 | 04 */
    CHECK_EQ_INT(it.chunk_offset, 21);
    CHECK_EQ_INT(it.chunk.marker, 0x81);
    CHECK_EQ_INT(it.chunk.data_size, 1332);
    CHECK_EQ_INT(it.chunk.data_type, TSF_VECTOR);
    CHECK_EQ_INT(it.chunk.compression, TSF_LZ4);
    CHECK(it.page.has_stats); /* time column statistics: the prefix only */
    CHECK_EQ_INT(it.page.stats.count, 10000);
    CHECK_EQ_INT(tsf_fmt_stats_size(&it.page.stats), 2 + 16);
    check_page_header_bytes(f, &it);
    free(f);
}

/* ---- §6.4: empty value pages and 0-byte value chunks ---- */

static void test_worked_empty_value_pages(void)
{
    size_t len;
    tsf_error e;
    uint8_t *f = golden("tsfile-java/tree_aligned_empty_value_pages_lz4.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    /* page pattern per column: 'P' = page with values, 'e' = empty page (single byte 0x00) */
    char pattern[4][8] = {{0}};
    const char *cols[4] = {"c_int", "c_text", "c_bool", "c_none"};
    int none_chunks = 0;
    tsf_walker w;
    tsf_walk_item it;
    int col = -1;
    CHECK_OK(tsf_walk_init(&w, f, len, &e), &e);
    for (;;) {
        CHECK_OK(tsf_walk_next(&w, &it, &e), &e);
        if (it.kind == TSF_WALK_END) break;
        if (it.kind == TSF_WALK_CHUNK) {
            col = -1;
            for (int i = 0; i < 4; i++)
                if (str_is(it.chunk.measurement, cols[i])) col = i;
            if (col == 3) {
                none_chunks++;
                CHECK_EQ_INT(it.chunk.marker, 0x45);
                CHECK_EQ_INT(it.chunk.data_size, 0);
            }
            if (col == 3 &&
                none_chunks == 1) /* spec §6.4 (its hex has a typo; the bytes are DOUBLE LZ4 GORILLA) */
                CHECK_MEM(f + it.offset,
                          "\x45\x0c"
                          "c_none\x00\x04\x07\x08",
                          12);
        }
        if (it.kind == TSF_WALK_PAGE && col >= 0 && col < 3) {
            size_t k = strlen(pattern[col]);
            if (k < 7) pattern[col][k] = it.page.uncompressed_size == 0 ? 'e' : 'P';
            if (it.page.uncompressed_size == 0) {
                CHECK_EQ_INT(it.page.header_len, 1);
                CHECK_EQ_INT(it.body_len, 0);
                CHECK_EQ_INT(it.page.has_stats, 0);
            } else {
                CHECK(it.page.has_stats); /* multi-page value chunk (0x41) */
            }
        }
        if (it.kind == TSF_WALK_PAGE && col == 3) CHECK(0); /* a 0-byte chunk has no page */
    }
    CHECK(strcmp(pattern[0], "PePe") == 0);
    CHECK(strcmp(pattern[1], "ePee") == 0);
    CHECK(strcmp(pattern[2], "eeeP") == 0);
    CHECK_EQ_INT(none_chunks, 2); /* a1.c_none and a2.c_none */
    free(f);
}

/* ---- synthetic round trips ---- */

static const tsf_type ALL_STATS_TYPES[] = {TSF_BOOLEAN, TSF_INT32, TSF_INT64,  TSF_FLOAT,
                                           TSF_DOUBLE,  TSF_TEXT,  TSF_VECTOR, TSF_TIMESTAMP,
                                           TSF_DATE,    TSF_BLOB,  TSF_STRING, (tsf_type)TSF_FMT_TYPE_OBJECT};

static void random_stats(tsf_fmt_stats *s, tsf_type t, uint64_t *rng, uint8_t *pool)
{
    tsf_fmt_stats_init(s, t);
    s->count = (uint32_t)(tsf_test_rand(rng) >> (tsf_test_rand(rng) % 64));
    s->start_time = (int64_t)tsf_test_rand(rng);
    s->end_time = (int64_t)tsf_test_rand(rng);
    uint64_t r[5];
    for (int i = 0; i < 5; i++) r[i] = tsf_test_rand(rng);
    switch (t) {
    case TSF_BOOLEAN:
        s->v.b.first = (uint8_t)(r[0] & 1);
        s->v.b.last = (uint8_t)(r[1] & 1);
        s->v.b.sum = (int64_t)r[2];
        break;
    case TSF_INT32:
    case TSF_DATE:
        s->v.i32.min = (int32_t)r[0];
        s->v.i32.max = (int32_t)r[1];
        s->v.i32.first = (int32_t)r[2];
        s->v.i32.last = (int32_t)r[3];
        s->v.i32.sum = (int64_t)r[4];
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        s->v.i64.min = (int64_t)r[0];
        s->v.i64.max = (int64_t)r[1];
        s->v.i64.first = (int64_t)r[2];
        s->v.i64.last = (int64_t)r[3];
        memcpy(&s->v.i64.sum, &r[4], 8); /* any bit pattern, NaN payloads included */
        break;
    case TSF_FLOAT: {
        uint32_t b[4] = {(uint32_t)r[0], (uint32_t)r[1], 0x7fc00000u, (uint32_t)r[3]};
        memcpy(&s->v.f32.min, &b[0], 4);
        memcpy(&s->v.f32.max, &b[1], 4);
        memcpy(&s->v.f32.first, &b[2], 4);
        memcpy(&s->v.f32.last, &b[3], 4);
        memcpy(&s->v.f32.sum, &r[4], 8);
        break;
    }
    case TSF_DOUBLE:
        memcpy(&s->v.f64.min, &r[0], 8);
        memcpy(&s->v.f64.max, &r[1], 8);
        memcpy(&s->v.f64.first, &r[2], 8);
        memcpy(&s->v.f64.last, &r[3], 8);
        memcpy(&s->v.f64.sum, &r[4], 8);
        break;
    case TSF_TEXT:
    case TSF_STRING: {
        tsf_bytes *b[4] = {&s->v.bin.first, &s->v.bin.last, &s->v.bin.min, &s->v.bin.max};
        int k = t == TSF_STRING ? 4 : 2;
        for (int i = 0; i < k; i++) {
            b[i]->data = pool + (r[i] % 64);
            b[i]->len = (size_t)(r[i] >> 32) % 40; /* 0 included */
        }
        break;
    }
    default:
        break;
    }
}

/* Parses every strict prefix of buf[0..n) from an exactly sized heap copy: each must be ECORRUPT. */
typedef tsf_status (*parse_fn)(const uint8_t *p, size_t len, void *arg, tsf_error *err);

static void check_truncations(const uint8_t *buf, size_t n, parse_fn fn, void *arg, const char *what)
{
    for (size_t k = 0; k < n; k++) {
        uint8_t *copy = malloc(k ? k : 1);
        memcpy(copy, buf, k);
        tsf_error e;
        e.message[0] = 0;
        tsf_status st = fn(copy, k, arg, &e);
        if (st != TSF_ECORRUPT)
            fprintf(stderr, "%s truncated to %zu of %zu: %s\n", what, k, n, tsf_status_name(st));
        CHECK_EQ_INT(st, TSF_ECORRUPT);
        CHECK(strstr(e.message, "offset") != NULL);
        free(copy);
    }
}

static tsf_status parse_stats_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    tsf_fmt_stats s;
    return tsf_fmt_parse_stats(p, len, 1000, *(tsf_type *)arg, &s, NULL, err);
}

static void test_stats_roundtrip(void)
{
    uint64_t rng = 42;
    uint8_t pool[128], a[512], b[512];
    for (size_t i = 0; i < sizeof pool; i++) pool[i] = (uint8_t)tsf_test_rand(&rng);
    for (size_t ti = 0; ti < sizeof ALL_STATS_TYPES / sizeof ALL_STATS_TYPES[0]; ti++) {
        tsf_type t = ALL_STATS_TYPES[ti];
        for (int iter = 0; iter < 50; iter++) {
            tsf_fmt_stats s, s2;
            tsf_error e;
            size_t n = 0, n2 = 0, used = 0;
            random_stats(&s, t, &rng, pool);
            CHECK_OK(tsf_fmt_write_stats(&s, a, sizeof a, &n, &e), &e);
            CHECK_EQ_INT(n, tsf_fmt_stats_size(&s));
            CHECK_OK(tsf_fmt_parse_stats(a, n, 0, t, &s2, &used, &e), &e);
            CHECK_EQ_INT(used, n);
            CHECK_EQ_INT(s2.count, s.count);
            CHECK_EQ_INT(s2.start_time, s.start_time);
            CHECK_EQ_INT(s2.end_time, s.end_time);
            if (t == TSF_INT32 || t == TSF_DATE) {
                CHECK_EQ_INT(s2.v.i32.min, s.v.i32.min);
                CHECK_EQ_INT(s2.v.i32.last, s.v.i32.last);
                CHECK_EQ_INT(s2.v.i32.sum, s.v.i32.sum);
            }
            if (t == TSF_INT64 || t == TSF_TIMESTAMP) {
                CHECK_EQ_INT(s2.v.i64.max, s.v.i64.max);
                CHECK_EQ_INT(s2.v.i64.first, s.v.i64.first);
            }
            if (t == TSF_BOOLEAN) CHECK_EQ_INT(s2.v.b.sum, s.v.b.sum);
            if (t == TSF_STRING) {
                CHECK_EQ_INT(s2.v.bin.max.len, s.v.bin.max.len);
                CHECK(s2.v.bin.max.len == 0 || !memcmp(s2.v.bin.max.data, s.v.bin.max.data, s.v.bin.max.len));
            }
            CHECK_OK(tsf_fmt_write_stats(&s2, b, sizeof b, &n2, &e), &e);
            CHECK_EQ_INT(n2, n);
            CHECK_MEM(a, b, n); /* byte-exact (a NaN is written as the canonical one both times) */
            /* a buffer one byte short: ERANGE, nothing written past the bound */
            memset(b, 0xAB, sizeof b);
            CHECK_EQ_INT(tsf_fmt_write_stats(&s, b, n - 1, &n2, &e), TSF_ERANGE);
            CHECK_EQ_INT(b[n - 1], 0xAB);
            if (iter < 3) check_truncations(a, n, parse_stats_fn, &t, "statistics");
        }
    }
    /* fixed sizes of §7 (count < 128 -> 1-byte uvarint) */
    tsf_fmt_stats s;
    int sizes[][2] = {{TSF_BOOLEAN, 27},   {TSF_INT32, 41}, {TSF_DATE, 41},   {TSF_INT64, 57},
                      {TSF_TIMESTAMP, 57}, {TSF_FLOAT, 41}, {TSF_DOUBLE, 57}, {TSF_TEXT, 25},
                      {TSF_STRING, 33},    {TSF_BLOB, 17},  {TSF_VECTOR, 17}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tsf_fmt_stats_init(&s, (tsf_type)sizes[i][0]);
        s.count = 5;
        CHECK_EQ_INT(tsf_fmt_stats_size(&s), sizes[i][1]);
    }
    /* empty statistics as Java writes them (§7): start INT64_MAX, end INT64_MIN */
    tsf_fmt_stats_init(&s, TSF_DOUBLE);
    uint8_t out[64];
    size_t n;
    tsf_error e;
    CHECK_OK(tsf_fmt_write_stats(&s, out, sizeof out, &n, &e), &e);
    CHECK_MEM(out, "\x00\x7f\xff\xff\xff\xff\xff\xff\xff\x80\x00\x00\x00\x00\x00\x00\x00", 17);
    /* every NaN is stored as Java's floatToIntBits / doubleToLongBits store it: the canonical NaN */
    {
        uint64_t nan64 = 0xfff0000000000001ull; /* a negative signalling NaN */
        uint32_t nan32 = 0xffc00001u;
        tsf_fmt_stats_init(&s, TSF_DOUBLE);
        s.count = 1;
        memcpy(&s.v.f64.min, &nan64, 8);
        CHECK_OK(tsf_fmt_write_stats(&s, out, sizeof out, &n, &e), &e);
        CHECK_MEM(out + 17, "\x7f\xf8\x00\x00\x00\x00\x00\x00", 8);
        tsf_fmt_stats_init(&s, TSF_FLOAT);
        s.count = 1;
        memcpy(&s.v.f32.last, &nan32, 4);
        CHECK_OK(tsf_fmt_write_stats(&s, out, sizeof out, &n, &e), &e);
        CHECK_MEM(out + 17 + 12, "\x7f\xc0\x00\x00", 4);
    }
    /* unknown type 7 and negative binary lengths are rejected */
    CHECK_EQ_INT(tsf_fmt_parse_stats(out, n, 0, (tsf_type)7, &s, NULL, &e), TSF_ECORRUPT);
    uint8_t neg[] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
    CHECK_EQ_INT(tsf_fmt_parse_stats(neg, sizeof neg, 0, TSF_TEXT, &s, NULL, &e), TSF_ECORRUPT);
    CHECK(strstr(e.message, "offset 17") != NULL);
}

static tsf_status parse_dev_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    tsf_fmt_device_id d;
    return tsf_fmt_parse_chunk_group_header(p, len, 500, *(int *)arg, &d, NULL, err);
}

static void test_device_roundtrip(void)
{
    tsf_error e;
    uint8_t a[4096], b[4096];
    size_t n, n2, used;
    tsf_fmt_device_id d;
    /* nulls inside, trailing nulls stripped */
    tsf_fmt_str segs[5] = {{(const uint8_t *)"t1", 2, 0},
                           {NULL, 0, 1},
                           {(const uint8_t *)"", 0, 0},
                           {(const uint8_t *)"x", 1, 0},
                           {NULL, 0, 1}};
    CHECK_OK(tsf_fmt_write_chunk_group_header(segs, 5, 4, a, sizeof a, &n, &e), &e);
    CHECK_EQ_INT(n, 9);
    CHECK_MEM(a, "\x00\x04\x04t1\x01\x00\x02x", 9);
    CHECK_OK(tsf_fmt_parse_chunk_group_header(a, n, 0, 4, &d, &used, &e), &e);
    CHECK_EQ_INT(used, n);
    CHECK_EQ_INT(d.nseg, 4);
    char s[64];
    CHECK_EQ_INT(tsf_fmt_device_to_string(&d, s, sizeof s), 10);
    CHECK(strcmp(s, "t1.null..x") == 0);
    CHECK_EQ_INT(tsf_fmt_device_to_string(&d, s, 4), 10); /* truncating like snprintf */
    CHECK(strcmp(s, "t1.") == 0);
    int v4 = 4, v3 = 3;
    check_truncations(a, n, parse_dev_fn, &v4, "chunk group header");
    CHECK_EQ_INT(tsf_fmt_write_device_id(segs + 1, 1, 4, a, sizeof a, &n, &e), TSF_EINVAL); /* all null */

    /* a stored count of 0 reads as [""] */
    CHECK_OK(tsf_fmt_parse_device_id((const uint8_t *)"\x00", 1, 0, 4, &d, &used, &e), &e);
    CHECK_EQ_INT(d.nseg, 1);
    CHECK(str_is(d.seg[0], ""));

    /* more segments than the inline cache */
    tsf_fmt_str many[40];
    char names[40][8];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "s%d", i);
        many[i].data = (const uint8_t *)names[i];
        many[i].len = strlen(names[i]);
        many[i].is_null = (i % 7 == 3);
    }
    CHECK_OK(tsf_fmt_write_device_id(many, 40, 4, a, sizeof a, &n, &e), &e);
    CHECK_OK(tsf_fmt_parse_device_id(a, n, 0, 4, &d, &used, &e), &e);
    CHECK_EQ_INT(d.nseg, 40);
    CHECK_EQ_INT(used, n);
    tsf_fmt_str back[40];
    for (uint32_t i = 0; i < 40; i++) {
        back[i] = tsf_fmt_device_segment(&d, i);
        CHECK_EQ_INT(back[i].is_null, many[i].is_null);
        if (!many[i].is_null) CHECK(str_is(back[i], names[i]));
    }
    CHECK_OK(tsf_fmt_write_device_id(back, 40, 4, b, sizeof b, &n2, &e), &e);
    CHECK_EQ_INT(n2, n);
    CHECK_MEM(a, b, n);
    CHECK_EQ_INT(tsf_fmt_write_device_id(many, 40, 4, b, n - 1, &n2, &e), TSF_ERANGE);

    /* v3: one path */
    tsf_fmt_str path = {(const uint8_t *)"root.sg.d1", 10, 0};
    CHECK_OK(tsf_fmt_write_chunk_group_header(&path, 1, 3, a, sizeof a, &n, &e), &e);
    CHECK_MEM(a, "\x00\x14root.sg.d1", 12);
    CHECK_OK(tsf_fmt_parse_chunk_group_header(a, n, 0, 3, &d, &used, &e), &e);
    CHECK(str_is(d.seg[0], "root.sg.d1"));
    check_truncations(a, n, parse_dev_fn, &v3, "v3 chunk group header");
    CHECK_EQ_INT(tsf_fmt_write_chunk_group_header(&path, 1, 3, a, 0, &n, &e), TSF_ERANGE);
    /* hostile: a huge segment count with few bytes, a negative length */
    CHECK_EQ_INT(tsf_fmt_parse_device_id((const uint8_t *)"\xff\xff\xff\xff\x07\x02", 6, 0, 4, &d, &used, &e),
                 TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_fmt_parse_device_id((const uint8_t *)"\x01\x03", 2, 0, 4, &d, &used, &e), TSF_ECORRUPT);
}

typedef struct hdr_arg {
    tsf_type type;
    int with_stats;
} hdr_arg;

static tsf_status parse_chunk_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    tsf_fmt_chunk_header h;
    return tsf_fmt_parse_chunk_header(p, len, 77, &h, NULL, err);
}

static tsf_status parse_page_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    hdr_arg *a = arg;
    tsf_fmt_page_header h;
    return tsf_fmt_parse_page_header(p, len, 77, a->type, a->with_stats, &h, NULL, err);
}

static tsf_status parse_op_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    tsf_fmt_op_index o;
    return tsf_fmt_parse_op_index(p, len, 77, &o, NULL, err);
}

static tsf_status parse_value_page_fn(const uint8_t *p, size_t len, void *arg, tsf_error *err)
{
    tsf_fmt_value_page v;
    tsf_status st = tsf_fmt_parse_value_page(p, len, 77, &v, err);
    /* a prefix that still holds rowCount + bitmap is a valid page with fewer value bytes */
    if (st == TSF_OK && len < *(size_t *)arg) return tsf_err(err, TSF_ECORRUPT, "prefix ok at offset 77");
    return st;
}

static void test_headers_roundtrip(void)
{
    static const uint8_t markers[] = {0x01, 0x05, 0x81, 0x85, 0x41, 0x45};
    uint64_t rng = 7;
    uint8_t a[1024], b[1024];
    size_t n, n2, used;
    tsf_error e;
    for (size_t mi = 0; mi < sizeof markers; mi++) {
        tsf_fmt_chunk_header h = {0}, h2;
        h.marker = markers[mi];
        h.measurement.data = (const uint8_t *)"temperature_\xc3\xa4";
        h.measurement.len = mi == 2 ? 0 : 14;
        h.data_size = (uint32_t)(tsf_test_rand(&rng) >> (33 + mi * 4));
        h.data_type = mi == 2 || mi == 3 ? TSF_VECTOR : TSF_DOUBLE;
        h.compression = TSF_ZSTD;
        h.encoding = TSF_ENC_GORILLA;
        CHECK(tsf_fmt_is_chunk_marker(h.marker));
        CHECK_OK(tsf_fmt_write_chunk_header(&h, a, sizeof a, &n, &e), &e);
        CHECK_OK(tsf_fmt_parse_chunk_header(a, n, 0, &h2, &used, &e), &e);
        CHECK_EQ_INT(used, n);
        CHECK_EQ_INT(h2.header_len, n);
        CHECK_EQ_INT(h2.marker, h.marker);
        CHECK_EQ_INT(h2.data_size, h.data_size);
        CHECK_EQ_INT(h2.data_type, h.data_type);
        CHECK_EQ_INT(h2.compression, TSF_ZSTD);
        CHECK_EQ_INT(h2.encoding, TSF_ENC_GORILLA);
        CHECK_EQ_INT(h2.measurement.len, h.measurement.len);
        CHECK_OK(tsf_fmt_write_chunk_header(&h2, b, sizeof b, &n2, &e), &e);
        CHECK_EQ_INT(n2, n);
        CHECK_MEM(a, b, n);
        check_truncations(a, n, parse_chunk_fn, NULL, "chunk header");
        CHECK_EQ_INT(tsf_fmt_chunk_multi_page(h.marker), (h.marker & 0x3f) == 1);
    }
    CHECK_EQ_INT(tsf_fmt_chunk_marker(TSF_CHUNK_NONALIGNED, 1), 0x05);
    CHECK_EQ_INT(tsf_fmt_chunk_marker(TSF_CHUNK_NONALIGNED, 2), 0x01);
    CHECK_EQ_INT(tsf_fmt_chunk_marker(TSF_CHUNK_TIME, 3), 0x81);
    CHECK_EQ_INT(tsf_fmt_chunk_marker(TSF_CHUNK_VALUE, 0), 0x45);
    for (int m = 0; m < 256; m++) {
        int want = m == 0x01 || m == 0x05 || m == 0x81 || m == 0x85 || m == 0x41 || m == 0x45;
        CHECK_EQ_INT(tsf_fmt_is_chunk_marker((uint8_t)m), want);
    }
    /* bad codes */
    memcpy(a, "\x05\x04s1\x10\x07\x00\x00", 8); /* data type 7 */
    CHECK_EQ_INT(tsf_fmt_parse_chunk_header(a, 8, 0, &(tsf_fmt_chunk_header){0}, NULL, &e), TSF_ECORRUPT);
    CHECK(strstr(e.message, "data type") != NULL);
    memcpy(a, "\x05\x04s1\x10\x02\x0a\x00", 8); /* compression 10 */
    CHECK_EQ_INT(tsf_fmt_parse_chunk_header(a, 8, 0, &(tsf_fmt_chunk_header){0}, NULL, &e), TSF_ECORRUPT);
    memcpy(a, "\x05\x01\x10\x02\x00\x00", 6); /* null measurement */
    CHECK_EQ_INT(tsf_fmt_parse_chunk_header(a, 6, 0, &(tsf_fmt_chunk_header){0}, NULL, &e), TSF_ECORRUPT);
    memcpy(a, "\x05\x04s1\xff\xff\xff\xff\x0f\x02\x00\x00", 12); /* dataSize > INT32_MAX */
    CHECK_EQ_INT(tsf_fmt_parse_chunk_header(a, 12, 0, &(tsf_fmt_chunk_header){0}, NULL, &e), TSF_ECORRUPT);

    /* page headers: with statistics of every type, without, and the empty page */
    uint8_t pool[128]; /* random_stats takes up to 39 bytes from offsets below 64 */
    for (size_t i = 0; i < sizeof pool; i++) pool[i] = (uint8_t)i;
    for (size_t ti = 0; ti < sizeof ALL_STATS_TYPES / sizeof ALL_STATS_TYPES[0]; ti++) {
        for (int ws = 0; ws < 2; ws++) {
            tsf_fmt_page_header p = {0}, p2;
            p.uncompressed_size = (uint32_t)(tsf_test_rand(&rng) % 100000) + 1;
            p.compressed_size = (uint32_t)(tsf_test_rand(&rng) % 100000);
            p.has_stats = ws;
            if (ws) random_stats(&p.stats, ALL_STATS_TYPES[ti], &rng, pool);
            CHECK_OK(tsf_fmt_write_page_header(&p, a, sizeof a, &n, &e), &e);
            CHECK_EQ_INT(tsf_fmt_page_header_size(p.uncompressed_size, p.compressed_size,
                                                  ws ? tsf_fmt_stats_size(&p.stats) : 0),
                         n);
            CHECK_OK(tsf_fmt_parse_page_header(a, n, 0, ALL_STATS_TYPES[ti], ws, &p2, &used, &e), &e);
            CHECK_EQ_INT(used, n);
            CHECK_EQ_INT(p2.header_len, n);
            CHECK_EQ_INT(p2.uncompressed_size, p.uncompressed_size);
            CHECK_EQ_INT(p2.compressed_size, p.compressed_size);
            CHECK_EQ_INT(p2.has_stats, ws);
            CHECK_OK(tsf_fmt_write_page_header(&p2, b, sizeof b, &n2, &e), &e);
            CHECK_EQ_INT(n2, n);
            CHECK_MEM(a, b, n);
            hdr_arg ha = {ALL_STATS_TYPES[ti], ws};
            check_truncations(a, n, parse_page_fn, &ha, "page header");
        }
    }
    tsf_fmt_page_header empty = {0}, p2;
    empty.has_stats = 1; /* ignored: an empty page never carries statistics */
    CHECK_OK(tsf_fmt_write_page_header(&empty, a, sizeof a, &n, &e), &e);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(tsf_fmt_page_header_size(0, 0, 0), 1);
    CHECK_EQ_INT(a[0], 0);
    CHECK_OK(tsf_fmt_parse_page_header(a, 1, 0, TSF_INT32, 1, &p2, &used, &e), &e);
    CHECK_EQ_INT(used, 1);
    CHECK_EQ_INT(p2.uncompressed_size, 0);
    CHECK_EQ_INT(p2.has_stats, 0);

    /* sizing: a NULL buffer gives TSF_ERANGE and the size needed, for every writer */
    {
        tsf_fmt_chunk_header h = {0x05, {(const uint8_t *)"s1", 2, 0}, 300, TSF_INT64, TSF_LZ4, TSF_ENC_PLAIN,
                                  0};
        tsf_fmt_page_header p = {0};
        tsf_fmt_str seg[2] = {{(const uint8_t *)"root.sg1", 8, 0}, {(const uint8_t *)"d1", 2, 0}};
        tsf_fmt_op_index op0 = {1, 2};
        p.uncompressed_size = 200;
        p.compressed_size = 100;
        p.has_stats = 1;
        tsf_fmt_stats_init(&p.stats, TSF_STRING);
        size_t need = 0;
        CHECK_EQ_INT(tsf_fmt_write_chunk_header(&h, NULL, 0, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 9);
        CHECK_EQ_INT(tsf_fmt_write_page_header(&p, NULL, 0, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 2 + 1 + 33); /* uvarint 200, uvarint 100, empty STRING statistics */
        CHECK_EQ_INT(tsf_fmt_write_chunk_group_header(seg, 2, 4, NULL, 0, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 14);
        CHECK_EQ_INT(tsf_fmt_write_chunk_group_header(seg, 2, 4, a, 5, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 14);
        CHECK_EQ_INT(tsf_fmt_write_op_index(&op0, NULL, 0, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 17);
        CHECK_EQ_INT(tsf_fmt_write_head(4, NULL, 0, &need, &e), TSF_ERANGE);
        CHECK_EQ_INT(need, 7);
    }

    /* operation index record */
    tsf_fmt_op_index op = {-5, INT64_MAX}, op2;
    CHECK_OK(tsf_fmt_write_op_index(&op, a, sizeof a, &n, &e), &e);
    CHECK_EQ_INT(n, 17);
    CHECK_OK(tsf_fmt_parse_op_index(a, n, 0, &op2, &used, &e), &e);
    CHECK_EQ_INT(op2.min_plan_index, -5);
    CHECK_EQ_INT(op2.max_plan_index, INT64_MAX);
    check_truncations(a, n, parse_op_fn, NULL, "operation index");

    /* non-aligned body prefix */
    CHECK_OK(tsf_fmt_write_nonaligned_prefix(300, a, sizeof a, &n, &e), &e);
    CHECK_EQ_INT(n, 2);
    CHECK_MEM(a, "\xac\x02", 2);
    memset(a + 2, 0x11, 300);
    memset(a + 302, 0x22, 5);
    tsf_fmt_nonaligned_page np;
    CHECK_OK(tsf_fmt_parse_nonaligned_page(a, 307, 0, &np, &e), &e);
    CHECK_EQ_INT(np.time_len, 300);
    CHECK_EQ_INT(np.values_len, 5);
    CHECK(np.values == a + 302);
    CHECK_EQ_INT(tsf_fmt_parse_nonaligned_page(a, 301, 0, &np, &e), TSF_ECORRUPT);

    /* aligned value page prefix: 13 rows, MSB-first bitmap */
    uint8_t bm[2] = {0};
    int present[13] = {1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1};
    for (int r = 0; r < 13; r++)
        if (present[r]) tsf_fmt_bitmap_set(bm, (size_t)r);
    CHECK_EQ_INT(bm[0], 0x9d);
    CHECK_EQ_INT(bm[1], 0x18);
    CHECK_OK(tsf_fmt_write_value_page_prefix(13, bm, a, sizeof a, &n, &e), &e);
    CHECK_EQ_INT(n, 6);
    CHECK_MEM(a, "\x00\x00\x00\x0d\x9d\x18", 6);
    memset(a + 6, 0x33, 7);
    tsf_fmt_value_page vp;
    CHECK_OK(tsf_fmt_parse_value_page(a, 13, 0, &vp, &e), &e);
    CHECK_EQ_INT(vp.row_count, 13);
    CHECK_EQ_INT(vp.present, 7);
    CHECK_EQ_INT(vp.values_len, 7);
    for (int r = 0; r < 13; r++) CHECK_EQ_INT(tsf_fmt_bitmap_get(vp.bitmap, (size_t)r), present[r]);
    a[5] |= 0x07; /* bits past rowCount do not count */
    CHECK_OK(tsf_fmt_parse_value_page(a, 13, 0, &vp, &e), &e);
    CHECK_EQ_INT(vp.present, 7);
    size_t full = 6;
    check_truncations(a, 6, parse_value_page_fn, &full, "value page");
    CHECK_EQ_INT(tsf_fmt_parse_value_page((const uint8_t *)"\x80\x00\x00\x00", 4, 0, &vp, &e), TSF_ECORRUPT);
    CHECK_EQ_INT(tsf_fmt_parse_value_page((const uint8_t *)"\x7f\xff\xff\xff\x00", 5, 0, &vp, &e),
                 TSF_ECORRUPT);
}

/* ---- every header of every golden file survives parse -> write byte for byte ---- */

static int g_items, g_op_index;

static void roundtrip_file(const uint8_t *f, size_t len, const char *name)
{
    tsf_walker w;
    tsf_walk_item it;
    tsf_error e;
    uint8_t out[4096];
    size_t n = 0;
    if (tsf_walk_init(&w, f, len, &e) != TSF_OK) {
        fprintf(stderr, "%s: %s\n", name, e.message);
        CHECK(0);
        return;
    }
    for (;;) {
        tsf_status st = tsf_walk_next(&w, &it, &e);
        if (st) {
            fprintf(stderr, "%s: %s\n", name, e.message);
            CHECK(0);
            return;
        }
        if (it.kind == TSF_WALK_END) break;
        g_items++;
        size_t want = 0;
        st = TSF_OK;
        if (it.kind == TSF_WALK_CHUNK_GROUP) {
            tsf_fmt_str segs[TSF_FMT_DEVICE_INLINE];
            CHECK(it.device.nseg <= TSF_FMT_DEVICE_INLINE);
            for (uint32_t i = 0; i < it.device.nseg && i < TSF_FMT_DEVICE_INLINE; i++)
                segs[i] = tsf_fmt_device_segment(&it.device, i);
            st = tsf_fmt_write_chunk_group_header(segs, it.device.nseg, w.version, out, sizeof out, &n, &e);
            want = it.device.raw_len + 1;
        } else if (it.kind == TSF_WALK_CHUNK) {
            st = tsf_fmt_write_chunk_header(&it.chunk, out, sizeof out, &n, &e);
            want = it.chunk.header_len;
        } else if (it.kind == TSF_WALK_PAGE) {
            st = tsf_fmt_write_page_header(&it.page, out, sizeof out, &n, &e);
            want = it.page.header_len;
            CHECK_EQ_INT(it.page.has_stats,
                         tsf_fmt_chunk_multi_page(it.chunk.marker) && it.page.uncompressed_size);
        } else if (it.kind == TSF_WALK_OP_INDEX) { /* the C++ writer's 0x04 record before the separator */
            st = tsf_fmt_write_op_index(&it.op_index, out, sizeof out, &n, &e);
            want = 17;
            g_op_index++;
        }
        CHECK_OK(st, &e);
        CHECK_EQ_INT(n, want);
        if (n != want || memcmp(out, f + it.offset, n) != 0) {
            fprintf(stderr, "%s: item %d at %llu does not round-trip\n", name, (int)it.kind,
                    (unsigned long long)it.offset);
            CHECK(0);
            return;
        }
    }
    CHECK_EQ_INT(w.truncated, 0);
}

static void test_golden_roundtrip(void)
{
    const char *data = tsf_test_data_dir();
    char dir[1024], path[1500];
    const char *sub[] = {"tsfile-java", "tsfile-cpp"};
    int files = 0;
    g_items = g_op_index = 0;
    for (int s = 0; s < 2; s++) {
        snprintf(dir, sizeof dir, "%s/%s", data, sub[s]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            size_t l = strlen(de->d_name);
            if (l < 7 || strcmp(de->d_name + l - 7, ".tsfile") != 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            size_t len;
            uint8_t *f = tsf_test_read_file(path, &len);
            CHECK(f != NULL);
            if (!f) continue;
            roundtrip_file(f, len, de->d_name);
            free(f);
            files++;
        }
        closedir(d);
    }
    printf("  %d golden files, %d headers re-serialised byte for byte (%d operation-index records)\n", files,
           g_items, g_op_index);
    CHECK_EQ_INT(g_op_index, 1);
    CHECK(files >= 88);
}

/* ---- hostile input: truncated, mutated and random files through the walker ---- */

/* Walks to the end; returns the final status. Checks termination and the item bound. */
static tsf_status walk_all(const uint8_t *f, size_t len, size_t *items, tsf_walker *w, tsf_error *e)
{
    tsf_walk_item it;
    tsf_status st = tsf_walk_init(w, f, len, e);
    *items = 0;
    if (st) return st;
    for (;;) {
        st = tsf_walk_next(w, &it, e);
        if (st) return st;
        if (it.kind == TSF_WALK_END) return TSF_OK;
        if (it.kind == TSF_WALK_PAGE) CHECK(it.body_offset + it.body_len <= len);
        if (++*items > len + 1) {
            CHECK(0); /* every item consumes at least one byte */
            return TSF_ECORRUPT;
        }
    }
}

static void test_hostile_walk(void)
{
    size_t len, items, full_items;
    tsf_walker w;
    tsf_error e;
    uint8_t *f = golden("tsfile-java/tree_nonaligned_time_edges.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    CHECK_OK(walk_all(f, len, &full_items, &w, &e), &e);
    CHECK_EQ_INT(full_items, 8); /* 2 groups, 3 chunks, 3 pages */
    /* every truncation: a clean end at a structure boundary, or ECORRUPT naming an offset */
    int clean = 0;
    for (size_t k = 0; k < 0x15a; k++) {
        uint8_t *copy = malloc(k ? k : 1);
        memcpy(copy, f, k);
        tsf_status st = walk_all(copy, k, &items, &w, &e);
        if (st == TSF_OK) {
            CHECK(w.truncated);
            clean++;
        } else {
            CHECK_EQ_INT(st, TSF_ECORRUPT);
            CHECK(strstr(e.message, "offset") != NULL);
        }
        free(copy);
    }
    /* structure boundaries below the separator: 7 (head only), 21 (after a group header), 193 (after
       chunk d1.s1), 207 (after group a1's header), 258 (after the time chunk) -> exactly five */
    CHECK_EQ_INT(clean, 5);
    /* every single-byte mutation: terminates, stays in bounds */
    uint64_t rng = 99;
    for (size_t k = 0; k < len; k++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, f, len);
        copy[k] ^= (uint8_t)(1u << (tsf_test_rand(&rng) % 8));
        tsf_status st = walk_all(copy, len, &items, &w, &e);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ENOTSUP);
        free(copy);
    }
    free(f);

    /* random garbage after a valid head, and random bytes into every parser */
    uint8_t *g = malloc(4096);
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)(tsf_test_rand(&rng) % 4096);
        for (size_t i = 0; i < n; i++) g[i] = (uint8_t)tsf_test_rand(&rng);
        /* bias towards plausible markers so the parsers get exercised past the first byte */
        if (n > 8) {
            memcpy(g, "TsFile\x04", 7);
            static const uint8_t m[] = {0x00, 0x01, 0x05, 0x81, 0x85, 0x41, 0x45, 0x04, 0x02};
            g[7] = m[tsf_test_rand(&rng) % sizeof m];
        }
        tsf_status st = walk_all(g, n, &items, &w, &e);
        CHECK(st == TSF_OK || st == TSF_ECORRUPT || st == TSF_ENOTSUP);
        size_t used = 0;
        tsf_fmt_stats s;
        tsf_fmt_chunk_header ch;
        tsf_fmt_page_header ph;
        tsf_fmt_device_id d;
        tsf_fmt_value_page vp;
        tsf_fmt_nonaligned_page np;
        tsf_type t = ALL_STATS_TYPES[iter % (sizeof ALL_STATS_TYPES / sizeof ALL_STATS_TYPES[0])];
        st = tsf_fmt_parse_stats(g, n, 0, t, &s, &used, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && used <= n));
        st = tsf_fmt_parse_chunk_header(g, n, 0, &ch, &used, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && used <= n));
        st = tsf_fmt_parse_page_header(g, n, 0, t, iter & 1, &ph, &used, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && used <= n));
        st = tsf_fmt_parse_device_id(g, n, 0, 3 + (iter & 1), &d, &used, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && used <= n));
        if (st == TSF_OK && d.nseg > 0) (void)tsf_fmt_device_segment(&d, d.nseg - 1);
        st = tsf_fmt_parse_value_page(g, n, 0, &vp, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && vp.values + vp.values_len == g + n));
        st = tsf_fmt_parse_nonaligned_page(g, n, 0, &np, &e);
        CHECK(st == TSF_ECORRUPT || (st == TSF_OK && np.values + np.values_len == g + n));
    }
    free(g);
}

/* ---- the deliberately damaged golden files (README corrupt/) ---- */

static void test_corrupt_files(void)
{
    size_t len, items;
    tsf_walker w;
    tsf_error e;
    uint8_t *f = golden("tsfile-java/corrupt/cut_mid_chunk.tsfile", &len);
    if (!f) {
        CHECK(f != NULL); /* tests/data is part of the checkout */
        return;
    }
    CHECK_EQ_INT(len, 150035);
    CHECK(!tsf_fmt_is_complete(f, len));
    CHECK_EQ_INT(walk_all(f, len, &items, &w, &e), TSF_ECORRUPT);
    CHECK_EQ_INT(w.pos, 139623); /* the s_blob chunk whose dataSize runs past the end */
    CHECK(strstr(e.message, "139623") != NULL);
    free(f);

    f = golden("tsfile-java/corrupt/tail_metadata_missing.tsfile", &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(!tsf_fmt_is_complete(f, len));
    CHECK_OK(walk_all(f, len, &items, &w, &e), &e);
    CHECK(w.truncated);
    CHECK_EQ_INT(w.pos, 172488);
    free(f);

    f = golden("tsfile-java/corrupt/flipped_byte_page_header.tsfile", &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(tsf_fmt_is_complete(f, len));
    tsf_status st = walk_all(f, len, &items, &w, &e);
    CHECK_EQ_INT(st, TSF_ECORRUPT);
    CHECK_EQ_INT(w.pos, 102871); /* compressedSize of that page no longer fits its chunk */
    CHECK(strstr(e.message, "102871") != NULL);
    free(f);
}

int main(void)
{
    TSF_RUN(test_head_tail);
    TSF_RUN(test_worked_time_edges);
    TSF_RUN(test_worked_device_ids);
    TSF_RUN(test_worked_statistics);
    TSF_RUN(test_worked_empty_value_pages);
    TSF_RUN(test_stats_roundtrip);
    TSF_RUN(test_device_roundtrip);
    TSF_RUN(test_headers_roundtrip);
    TSF_RUN(test_golden_roundtrip);
    TSF_RUN(test_hostile_walk);
    TSF_RUN(test_corrupt_files);
    return tsf_test_finish();
}
