/*
 * meta_index_buf.c - the growable output buffer and the container's primitive writers (spec
 * tsfile-container-format.md §1), v4 device ids and their ordering (§4.1), and Java HashMap
 * iteration order (the table-schema map of TsFileMetadata is a HashMap, §8.6/§8.8).
 */
#include <string.h>

#include "../common/bytes.h"
#include "format.h"
#include "meta_index.h"

void tsf_wbuf_init(tsf_wbuf *b, const tsf_allocator *a)
{
    memset(b, 0, sizeof *b);
    b->a = a;
}

void tsf_wbuf_free(tsf_wbuf *b)
{
    if (b->p) tsf_free(b->a, b->p, b->cap);
    b->p = NULL;
    b->len = b->cap = 0;
}

uint8_t *tsf_wbuf_reserve(tsf_wbuf *b, size_t extra)
{
    if (b->oom) return NULL;
    if (extra > SIZE_MAX - b->len) {
        b->oom = 1;
        return NULL;
    }
    size_t need = b->len + extra;
    if (need > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < need) nc = nc > SIZE_MAX / 2 ? need : nc * 2;
        uint8_t *np = tsf_realloc(b->a, b->p, b->cap, nc);
        if (!np) {
            b->oom = 1;
            return NULL;
        }
        b->p = np;
        b->cap = nc;
    }
    return b->p + b->len;
}

void tsf_wbuf_put(tsf_wbuf *b, const void *src, size_t n)
{
    if (!n) return;
    uint8_t *d = tsf_wbuf_reserve(b, n);
    if (!d) return;
    memcpy(d, src, n);
    b->len += n;
}

void tsf_wbuf_u8(tsf_wbuf *b, uint8_t v)
{
    uint8_t *d = tsf_wbuf_reserve(b, 1);
    if (!d) return;
    *d = v;
    b->len++;
}

void tsf_wbuf_be32(tsf_wbuf *b, uint32_t v)
{
    uint8_t *d = tsf_wbuf_reserve(b, 4);
    if (!d) return;
    tsf_store_be32(d, v);
    b->len += 4;
}

void tsf_wbuf_be64(tsf_wbuf *b, uint64_t v)
{
    uint8_t *d = tsf_wbuf_reserve(b, 8);
    if (!d) return;
    tsf_store_be64(d, v);
    b->len += 8;
}

void tsf_wbuf_uvarint(tsf_wbuf *b, uint32_t v)
{
    uint8_t *d = tsf_wbuf_reserve(b, TSF_UVARINT32_MAX);
    if (!d) return;
    b->len += tsf_put_uvarint32(d, v);
}

void tsf_wbuf_varint(tsf_wbuf *b, int32_t v)
{
    tsf_wbuf_uvarint(b, tsf_zigzag32(v));
}

void tsf_wbuf_varstr(tsf_wbuf *b, const char *s, size_t n)
{
    if (!s) {
        tsf_wbuf_varint(b, -1);
        return;
    }
    tsf_wbuf_varint(b, (int32_t)n);
    tsf_wbuf_put(b, s, n);
}

void tsf_wbuf_istr(tsf_wbuf *b, const char *s, size_t n)
{
    if (!s) {
        tsf_wbuf_be32(b, 0xffffffffu);
        return;
    }
    tsf_wbuf_be32(b, (uint32_t)n);
    tsf_wbuf_put(b, s, n);
}

void tsf_mi_put_device(tsf_wbuf *b, const tsf_mi_seg *segs, size_t nsegs)
{
    tsf_wbuf_uvarint(b, (uint32_t)nsegs);
    for (size_t i = 0; i < nsegs; i++) tsf_wbuf_varstr(b, segs[i].data, segs[i].len);
}

void tsf_fmt_put_chunk_group_header(tsf_wbuf *b, const tsf_mi_seg *segs, size_t nsegs)
{
    tsf_wbuf_u8(b, TSF_MARKER_CHUNK_GROUP_HEADER);
    tsf_mi_put_device(b, segs, nsegs);
}

int tsf_mi_str_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return na < nb ? -1 : na > nb;
}

int tsf_mi_device_cmp(const tsf_mi_seg *a, size_t na, const tsf_mi_seg *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    for (size_t i = 0; i < m; i++) {
        if (!a[i].data || !b[i].data) {
            if (!a[i].data && !b[i].data) continue;
            return a[i].data ? 1 : -1; /* null sorts first */
        }
        int c = tsf_mi_str_cmp(a[i].data, a[i].len, b[i].data, b[i].len);
        if (c) return c;
    }
    return na < nb ? -1 : na > nb;
}

/* Java String.hashCode over the UTF-16 code units of a UTF-8 string. */
static uint32_t java_string_hash(const char *s)
{
    const uint8_t *p = (const uint8_t *)s;
    uint32_t h = 0;
    while (*p) {
        uint32_t cp;
        if (p[0] < 0x80) {
            cp = *p++;
        } else if ((p[0] & 0xe0) == 0xc0 && p[1]) {
            cp = ((uint32_t)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
            p += 2;
        } else if ((p[0] & 0xf0) == 0xe0 && p[1] && p[2]) {
            cp = ((uint32_t)(p[0] & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
            p += 3;
        } else if ((p[0] & 0xf8) == 0xf0 && p[1] && p[2] && p[3]) {
            cp = ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
                 ((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
            p += 4;
        } else {
            cp = 0xfffd; /* malformed: Java's decoder substitutes U+FFFD */
            p++;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = 31 * h + (0xd800 + (cp >> 10));
            h = 31 * h + (0xdc00 + (cp & 0x3ff));
        } else {
            h = 31 * h + cp;
        }
    }
    return h;
}

/*
 * HashMap<String,...> iterates buckets in index order, and within a bucket in insertion order
 * (resizes split buckets keeping relative order). Capacity starts at 16 and doubles while
 * size > 0.75 * capacity. Treeified buckets (8+ collisions) are not modelled.
 */
void tsf_java_hashmap_order(const char *const *keys, size_t n, size_t *order)
{
    size_t cap = 16;
    while ((double)n > 0.75 * (double)cap) cap *= 2;
    /* insertion sort by (bucket, insertion index): n is the number of tables, small */
    for (size_t i = 0; i < n; i++) {
        uint32_t h = java_string_hash(keys[i]);
        size_t bi = (h ^ (h >> 16)) & (cap - 1);
        size_t j = i;
        while (j > 0) {
            uint32_t hp = java_string_hash(keys[order[j - 1]]);
            size_t bp = (hp ^ (hp >> 16)) & (cap - 1);
            if (bp <= bi) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}
