/*
 * lz4lit.c - LZ4 page bodies whose values are stored as literals (writer option lz4_probe; spec
 * tsfile-encodings.md §13: a TsFile LZ4 page is one raw LZ4 block, any valid block decodes).
 * GORILLA/CHIMP output of noisy data is incompressible: LZ4_compress_default searches it for
 * matches in vain and copies it byte by byte into the block's last literal run. Here the page's
 * prefix (non-aligned: uvarint + TS_2DIFF times; aligned: row count + bitmap) goes through LZ4 as
 * usual, and the values extend the prefix block's last literal run: the block is the prefix's
 * sequences, a new last token with the longer literal length, the prefix's trailing literals and
 * the value bytes as encoded, in place. Block rules (lz4 Block_format.md): the last sequence is
 * literals only, the last match starts >= 12 bytes and ends >= 5 bytes before the end; the prefix
 * block already keeps them and appending literals keeps them.
 */
#include <string.h>

#ifndef TSF_WITH_LZ4
#define TSF_WITH_LZ4 1
#endif
#if TSF_WITH_LZ4
#include <lz4.h>
#endif

#include "lz4lit.h"

/* Bytes of one probe sample. */
#define PROBE_BYTES (TSF_LZ4LIT_MIN / 2)

int tsf_lz4lit_split(const uint8_t *z, size_t zlen, size_t *seq_len, size_t *lit)
{
    size_t pos = 0;
    while (pos < zlen) {
        size_t start = pos;
        uint8_t tok = z[pos++];
        size_t l = tok >> 4;
        if (l == 15) {
            uint8_t b;
            do {
                if (pos >= zlen) return -1;
                b = z[pos++];
                l += b;
            } while (b == 255);
        }
        if (l > zlen - pos) return -1;
        pos += l;
        if (pos == zlen) {
            if (tok & 15) return -1;
            *seq_len = start;
            *lit = l;
            return 0;
        }
        if (zlen - pos < 2) return -1;
        pos += 2;
        if ((tok & 15) == 15) {
            uint8_t b;
            do {
                if (pos >= zlen) return -1;
                b = z[pos++];
            } while (b == 255);
        }
    }
    return -1;
}

size_t tsf_lz4lit_head_max(size_t seq_len, size_t lit, size_t vmax)
{
    return seq_len + 1 + (lit + vmax) / 255 + 1 + lit;
}

size_t tsf_lz4lit_head_size(size_t seq_len, size_t lit, size_t vlen)
{
    size_t t = lit + vlen;
    return seq_len + 1 + (t >= 15 ? (t - 15) / 255 + 1 : 0) + lit;
}

void tsf_lz4lit_put_head(uint8_t *dst, const uint8_t *z, size_t seq_len, const uint8_t *prefix, size_t plen,
                         size_t lit, size_t vlen)
{
    size_t t = lit + vlen, o = 0;
    memcpy(dst, z, seq_len);
    o = seq_len;
    dst[o++] = (uint8_t)((t >= 15 ? 15 : t) << 4);
    if (t >= 15) {
        size_t r = t - 15;
        size_t k = r / 255;
        memset(dst + o, 255, k);
        o += k;
        dst[o++] = (uint8_t)(r - k * 255);
    }
    memcpy(dst + o, prefix + plen - lit, lit);
}

#if TSF_WITH_LZ4
/* 1 if LZ4 shrinks a PROBE_BYTES sample at `p` at all (random bytes grow by the block framing). */
static int sample_shrinks(LZ4_stream_t *st, const uint8_t *p, uint8_t *out, size_t cap)
{
    int r;
    if (st) { /* a kept state: no 16 KiB table clear per sample */
        LZ4_resetStream_fast(st);
        r = LZ4_compress_fast_continue(st, (const char *)p, (char *)out, PROBE_BYTES, (int)cap, 1);
    } else {
        r = LZ4_compress_default((const char *)p, (char *)out, PROBE_BYTES, (int)cap);
    }
    return r > 0 && (size_t)r < PROBE_BYTES;
}

int tsf_lz4lit_incompressible(const uint8_t *v, size_t n, tsf_wbuf *tmp)
{
    if (n < 2 * PROBE_BYTES) return 0;
    size_t cap = (size_t)LZ4_compressBound(PROBE_BYTES), ss = sizeof(LZ4_stream_t);
    LZ4_stream_t *st = NULL;
    if (tmp->len == ss) { /* [LZ4 state][sample output], set up by an earlier call */
        st = (LZ4_stream_t *)(void *)tmp->p;
    } else {
        tmp->len = 0;
        if (!tsf_wbuf_reserve(tmp, ss + cap)) return 0;
        st = LZ4_initStream(tmp->p, ss); /* NULL if misaligned: one-shot calls then */
        tmp->len = st ? ss : 0;
    }
    uint8_t *out = tmp->p + ss;
    /* the start and the middle of the stream: both must be incompressible */
    return !sample_shrinks(st, v, out, cap) && !sample_shrinks(st, v + n / 2 - PROBE_BYTES / 2, out, cap);
}
#else
/* A build without LZ4 writes no LZ4 page (tsf_compression_supported refuses it): never called. */
int tsf_lz4lit_incompressible(const uint8_t *v, size_t n, tsf_wbuf *tmp)
{
    (void)v, (void)n, (void)tmp;
    return 0;
}
#endif
