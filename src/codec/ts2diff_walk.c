/*
 * ts2diff_walk.c - block listings of TS_2DIFF INT64 time streams for time filtering (spec
 * tsfile-encodings.md §3.1 block layout, §14 block-level filtering).
 *
 * A block header (n, w, minDelta, first) gives the block's exact first value and, with its packed size
 * ceil(n * w / 8), where the next block starts: a time window can be mapped to a run of blocks by reading
 * headers only. tsf_ts2diff_blocks lists every block (public API, the reference listing);
 * tsf_td_window_select is what the reader runs on a partly covered page: it selects the run of blocks
 * that can meet [tmin, tmax] on the fly and stops at the first block starting after tmax, so a window
 * early in a page does not pay for the headers after it. Its walk keeps the position update off the load
 * chain: a header equal to the previous one (same n and w, the usual case) reuses the checked block size,
 * so the next position is known from a predicted branch instead of the loaded bytes.
 */
#include <string.h>

#include "../common/bitio.h"
#include "../common/bytes.h"
#include "../common/compiler.h"
#include "../common/internal.h"
#include "ts2diff_kern.h"
#include "ts2diff_walk.h"

__extension__ typedef __int128 td_i128;

static int64_t td_sat64(td_i128 x)
{
    if (x > (td_i128)INT64_MAX) return INT64_MAX;
    if (x < (td_i128)INT64_MIN) return INT64_MIN;
    return (int64_t)x;
}

/* Conservative bound: first + n * (minDelta + 2^w - 1), saturated; a single-value block is bounded by its value. */
static int64_t td_bound_conservative(uint32_t nd, unsigned w, uint64_t mind, uint64_t first)
{
    if (nd == 0) return (int64_t)first;
    td_i128 span = (td_i128)(int64_t)mind + (td_i128)((w == 64) ? ~0ull : (1ull << w) - 1);
    return td_sat64((td_i128)(int64_t)first + (td_i128)nd * span);
}

/* Exact bound of a stream's last block: its last value + 1 (INT64_MAX if that overflows), decoded in the
 * decoder's wrapping arithmetic from the checked header h. */
static int64_t td_last_bound(const uint8_t *src, const td_hdr *h)
{
    uint64_t v = h->first;
    if (h->w == 0) {
        v = h->first + (uint64_t)h->nd * h->mind;
    } else {
        tsf_bitr br;
        tsf_bitr_init(&br, src + h->data, h->nbytes);
        for (uint32_t i = 0; i < h->nd; i++) v += h->mind + tsf_bitr_read(&br, h->w);
    }
    return (int64_t)v == INT64_MAX ? INT64_MAX : (int64_t)v + 1;
}

tsf_status tsf_ts2diff_blocks(const uint8_t *src, size_t len, tsf_ts2diff_block *blocks, size_t cap,
                              size_t *nblocks, tsf_error *err)
{
    if (!nblocks || (len && !src) || (cap && !blocks))
        return tsf_err(err, TSF_EINVAL, "tsf_ts2diff_blocks: NULL argument");
    *nblocks = 0;
    size_t pos = 0, nb = 0, ordinal = 0;
    td_hdr h = {0}, last = {0};
    while (pos < len) {
        tsf_status s = tsf_td_header(src, len, pos, 1, &h, err);
        if (s != TSF_OK) return s;
        if (nb > 0 && nb - 1 < cap) blocks[nb - 1].bound = (int64_t)h.first; /* exact lookahead bound */
        if (nb < cap) {
            tsf_ts2diff_block *b = &blocks[nb];
            b->offset = pos;
            b->count = h.nd + 1;
            b->width = h.w;
            b->min_delta = (int64_t)h.mind;
            b->first = (int64_t)h.first;
            b->ordinal = ordinal;
            b->bound_conservative = td_bound_conservative(h.nd, h.w, h.mind, h.first);
            b->bound = INT64_MAX;
        }
        last = h;
        ordinal += (size_t)h.nd + 1;
        pos = h.data + h.nbytes;
        nb++;
    }
    /* The last block has no successor: decode it and bound it by its last value + 1 (saturated). */
    if (nb > 0 && nb - 1 < cap) blocks[nb - 1].bound = td_last_bound(src, &last);
    *nblocks = nb;
    return TSF_OK;
}

tsf_status tsf_td_window_select(const uint8_t *src, size_t len, int64_t tmin, int64_t tmax, int conservative,
                                int to_end, tsf_td_window *win, tsf_error *err)
{
    memset(win, 0, sizeof *win);
    if (len && !src) return tsf_err(err, TSF_EINVAL, "tsf_td_window_select: NULL argument");
    size_t pos = 0, k = 0, vals = 0;
    size_t b0 = SIZE_MAX, b1 = 0, off0 = 0, off1 = 0, ord0 = 0, vend = 0;
    /* the block before the current one, decided once its successor's first value (its bound) is known */
    int have = 0;
    int64_t pfirst = 0, pbc = 0;
    size_t ppos = 0, pvals = 0, pcnt = 0;
    /* the cached header words (n, w as stored) and what they imply; ~0 never matches a valid header */
    uint64_t pword = ~0ull;
    size_t step = 0, cnt = 0;
    uint32_t nd = 0;
    unsigned w = 0;
    td_hdr h;
    tsf_status st;
    while (pos < len) {
        if (TSF_UNLIKELY(len - pos < TD_HDR64)) return tsf_td_header(src, len, pos, 1, &h, err);
        uint64_t word;
        memcpy(&word, src + pos, 8);
        if (TSF_UNLIKELY(word != pword)) {
            if ((st = tsf_td_header(src, len, pos, 1, &h, err))) return st;
            pword = word;
            nd = h.nd;
            w = h.w;
            cnt = (size_t)h.nd + 1;
            step = TD_HDR64 + h.nbytes;
        } else if (TSF_UNLIKELY(step > len - pos)) {
            return tsf_td_header(src, len, pos, 1, &h, err); /* the block does not fit: its error */
        }
        int64_t first = (int64_t)tsf_load_be64(src + pos + 16);
        if (have) { /* the previous block's bound is this first value */
            int meets = conservative ? pbc >= tmin : (first > tmin || first == INT64_MAX);
            if (meets && pfirst <= tmax) {
                if (b0 == SIZE_MAX) b0 = k - 1, off0 = ppos, ord0 = pvals;
                b1 = k - 1, off1 = pos, vend = pvals + pcnt;
            }
        }
        if (!to_end && first > tmax) { /* ascending: neither this block nor a later one meets */
            win->nlisted = k + 1;
            win->nvalues = vals + cnt;
            win->complete = 0;
            goto done;
        }
        have = 1;
        pfirst = first;
        if (conservative) pbc = td_bound_conservative(nd, w, tsf_load_be64(src + pos + 8), (uint64_t)first);
        ppos = pos, pvals = vals, pcnt = cnt;
        vals += cnt;
        pos += step;
        k++;
    }
    if (have && pfirst <= tmax) { /* the last block: the exact bound decodes it */
        int meets;
        if (conservative) {
            meets = pbc >= tmin;
        } else {
            if ((st = tsf_td_header(src, len, ppos, 1, &h, err))) return st;
            int64_t bound = td_last_bound(src, &h);
            meets = bound > tmin || bound == INT64_MAX;
        }
        if (meets) {
            if (b0 == SIZE_MAX) b0 = k - 1, off0 = ppos, ord0 = pvals;
            b1 = k - 1, off1 = len, vend = pvals + pcnt;
        }
    }
    win->nlisted = k;
    win->nvalues = vals;
    win->complete = 1;
done:
    if (b0 == SIZE_MAX) {
        win->b0 = win->nlisted;
        return TSF_OK;
    }
    win->b0 = b0;
    win->b1 = b1;
    win->off0 = off0;
    win->off1 = off1;
    win->ord0 = ord0;
    win->ndec = vend - ord0;
    return TSF_OK;
}
