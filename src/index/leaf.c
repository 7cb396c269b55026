/*
 * leaf.c - leaves in the file: the size a leaf of given pairs takes, writing it (sorted base, or
 * dynamic blocks placed by the leaf model with the spill in an overflow chain), loading its header into
 * the DRAM directory, and validating a header against the range routing gives the leaf.
 */
#include <string.h>
#include <zlib.h>

#include "index_internal.h"

uint32_t tsf_lix_crc(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

static uint64_t tsf_lix_dyn_blocks(uint64_t n)
{
    return n * 2 / IX_SLOTS + 1; /* 50 % initial fill, as PLTree */
}

/* Dynamic leaf: records that do not fit their predicted block (they start in the overflow log). */
static uint64_t tsf_lix_dyn_spill(const uint64_t *keys, uint64_t n, uint64_t origin, uint64_t mul, uint64_t nb)
{
    uint64_t spill = 0, run = 0, prev = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = tsf_lix_model(keys[i], origin, mul, nb);
        run = b == prev ? run + 1 : 1;
        prev = b;
        if (run > IX_SLOTS) spill++;
    }
    return spill;
}

/*
 * Dynamic leaf plan: 50 % fill as PLTree, but twice the blocks when over 1/8 of the keys would spill
 * out of their predicted block (locally dense data); capped so DRAM metadata stays under 4.5 B/key.
 */
static void tsf_lix_dyn_plan(const uint64_t *keys, uint64_t n, uint64_t *nb, uint64_t *mul, uint64_t *spill)
{
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    *nb = tsf_lix_dyn_blocks(n);
    for (int t = 0;; t++) {
        *mul = tsf_lix_mul_for(*nb, span);
        *spill = n ? tsf_lix_dyn_spill(keys, n, keys[0], *mul, *nb) : 0;
        if (*spill * 8 <= n || t == 1 || *nb > UINT32_MAX / 4) break;
        *nb *= 2;
    }
}

uint64_t tsf_lix_leaf_bytes(const tsf_index *ix, const uint64_t *keys, uint64_t n)
{
    if (ix->mode == TSF_INDEX_SORTED) return IX_BLOCK + (n + IX_SLOTS - 1) / IX_SLOTS * IX_BLOCK;
    uint64_t nb, mul, spill;
    tsf_lix_dyn_plan(keys, n, &nb, &mul, &spill);
    return IX_BLOCK + nb * IX_BLOCK + (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS * IX_CHUNK;
}

void tsf_lix_leaf_write(tsf_index *ix, uint64_t off, uint64_t id, uint64_t lo, uint64_t hi, const uint64_t *keys,
                   const uint64_t *vals, uint64_t n)
{
    uint8_t *h = tsf_lix_at(ix, off);
    uint64_t origin = n ? keys[0] : (lo <= hi ? lo : 0);
    uint64_t span = n ? keys[n - 1] - keys[0] : 0;
    uint64_t nb, mul, nbase = 0, errlo = 0, errhi = 0, ovf_head = 0;
    if (ix->mode == TSF_INDEX_SORTED) {
        nb = (n + IX_SLOTS - 1) / IX_SLOTS;
        mul = tsf_lix_mul_for(n, span);
        nbase = n;
        for (uint64_t b = 0; b < nb; b++) {
            uint8_t *blk = h + IX_BLOCK + b * IX_BLOCK;
            uint64_t cnt = n - b * IX_SLOTS < IX_SLOTS ? n - b * IX_SLOTS : IX_SLOTS;
            memset(blk, 0, IX_BLOCK);
            st64(blk, cnt);
            for (uint64_t s = 0; s < cnt; s++) {
                uint64_t i = b * IX_SLOTS + s;
                st64(blk + 16 + s * 16, keys[i]);
                st64(blk + 24 + s * 16, vals[i]);
                uint64_t p = tsf_lix_model(keys[i], origin, mul, n);
                if (p > i && p - i > errlo) errlo = p - i;
                if (i > p && i - p > errhi) errhi = i - p;
            }
        }
    } else {
        uint64_t spill;
        tsf_lix_dyn_plan(keys, n, &nb, &mul, &spill);
        uint64_t nchunks = (spill + IX_CHUNK_SLOTS - 1) / IX_CHUNK_SLOTS;
        uint8_t *chunks = h + IX_BLOCK + nb * IX_BLOCK;
        memset(h + IX_BLOCK, 0, nb * IX_BLOCK + nchunks * IX_CHUNK);
        uint64_t run = 0, prev = UINT64_MAX, r = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t b = tsf_lix_model(keys[i], origin, mul, nb);
            run = b == prev ? run + 1 : 1;
            prev = b;
            if (run <= IX_SLOTS) {
                uint8_t *blk = h + IX_BLOCK + b * IX_BLOCK;
                st64(blk + 16 + (run - 1) * 16, keys[i]);
                st64(blk + 24 + (run - 1) * 16, vals[i]);
                st64(blk, run);
            } else {
                uint8_t *c = chunks + r / IX_CHUNK_SLOTS * IX_CHUNK;
                uint64_t s = r % IX_CHUNK_SLOTS;
                st64(c + 16 + s * 16, keys[i]);
                st64(c + 24 + s * 16, vals[i]);
                st64(c, s + 1);
                r++;
            }
        }
        for (uint64_t c = 0; c < nchunks; c++) {
            uint64_t coff = off + IX_BLOCK + nb * IX_BLOCK + c * IX_CHUNK;
            st64(tsf_lix_at(ix, coff) + 8, c ? coff - IX_CHUNK : 0);
            ovf_head = coff;
        }
    }
    memset(h, 0, IX_BLOCK);
    st32(h + LF_O_MAGIC, LF_MAGIC);
    h[LF_O_MODE] = (uint8_t)ix->mode;
    st64(h + LF_O_ID, id);
    st64(h + LF_O_LO, lo);
    st64(h + LF_O_HI, hi);
    st64(h + LF_O_ORIGIN, origin);
    st64(h + LF_O_MUL, mul);
    st64(h + LF_O_NBASE, nbase);
    st32(h + LF_O_NBLOCKS, (uint32_t)nb);
    st32(h + LF_O_ERRLO, (uint32_t)(errlo > UINT32_MAX ? UINT32_MAX : errlo));
    st32(h + LF_O_ERRHI, (uint32_t)(errhi > UINT32_MAX ? UINT32_MAX : errhi));
    st32(h + LF_O_CRC, tsf_lix_crc(h, LF_O_CRC));
    st64(h + LF_O_OVF_HEAD, ovf_head);
}

void tsf_lix_leaf_load(tsf_index *ix, tsf_lix_leaf *L, uint64_t off)
{
    const uint8_t *h = tsf_lix_at(ix, off);
    uint32_t el = ld32(h + LF_O_ERRLO), eh = ld32(h + LF_O_ERRHI);
    IX_ST(&L->off, off);
    IX_ST(&L->origin, ld64(h + LF_O_ORIGIN));
    IX_ST(&L->mul, ld64(h + LF_O_MUL));
    IX_ST(&L->nbase, ld64(h + LF_O_NBASE));
    IX_ST(&L->nblocks, ld32(h + LF_O_NBLOCKS));
    IX_ST(&L->err_lo, (uint16_t)(el < IX_ERR_WIDE ? el : IX_ERR_WIDE));
    IX_ST(&L->err_hi, (uint16_t)(eh < IX_ERR_WIDE ? eh : IX_ERR_WIDE));
    IX_ST(&L->ready, 0);
    if (!L->w) IX_ST(&L->w, &ix->w0);
}

tsf_status tsf_lix_leaf_own(tsf_index *ix, tsf_lix_leaf *L, tsf_error *err)
{
    if (L->w != &ix->w0) return TSF_OK;
    tsf_lix_leafw *w = tsf_calloc(ix->alloc, 1, sizeof *w);
    if (!w) return tsf_err(err, TSF_ENOMEM, "index: leaf overflow state");
    IX_STR(&L->w, w);
    return TSF_OK;
}

tsf_status tsf_lix_leaf_check_header(tsf_index *ix, uint64_t id, uint64_t off, uint64_t lo, uint64_t hi,
                                     tsf_error *err)
{
    uint64_t size = ix->pm.size;
    if (off % IX_BLOCK != 0 || off < IX_REGION0 || off > size || size - off < IX_BLOCK)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf %llu offset %llu out of the file",
                       (unsigned long long)id, (unsigned long long)off);
    const uint8_t *h = tsf_lix_at(ix, off);
    if (ld32(h + LF_O_MAGIC) != LF_MAGIC || ld32(h + LF_O_CRC) != tsf_lix_crc(h, LF_O_CRC))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: bad magic or CRC",
                       (unsigned long long)off);
    uint64_t nb = ld32(h + LF_O_NBLOCKS), nbase = ld64(h + LF_O_NBASE);
    if (h[LF_O_MODE] != ix->mode || ld64(h + LF_O_ID) != id || ld64(h + LF_O_LO) != lo ||
        ld64(h + LF_O_HI) != hi)
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: mode, id or range mismatch",
                       (unsigned long long)off);
    if (nb > (size - off) / IX_BLOCK - 1 ||
        (ix->mode == TSF_INDEX_SORTED && (nbase + IX_SLOTS - 1) / IX_SLOTS != nb) ||
        (ix->mode == TSF_INDEX_DYNAMIC && (nbase != 0 || nb == 0)))
        return tsf_err(err, TSF_ECORRUPT, "index: leaf header at byte %llu: %llu blocks do not fit",
                       (unsigned long long)off, (unsigned long long)nb);
    return TSF_OK;
}
