/*
 * fast_get.h - the sealed fast path of point gets (lookup.c), compiled once per kernel path: lookup.c
 * includes it with
 *   IX_FG_NAME           the function's name,
 *   IX_FG_ATTR           its target attribute (empty for the portable twin),
 *   IX_FG_SEPS(s, two, q) bit i set when the 32-bit separator s[i] <= q, for i < 16, and for i < 32 when
 *                        two is set (the second 16-entry line is only read then),
 *   IX_FG_EQ(blk, x)     bit 2 + 2 i set when key slot i of the 256-byte block equals x,
 * so that the kernels inline into one small function (the instructions of a get decide how many
 * consecutive gets' misses overlap; doc/index.md "Sealed fast path").
 *
 * While no write happened since the last build or open (ix->fast set), the tree fields are an immutable
 * copy and a ready leaf without an overflow log changes only when a writer starts, which first clears
 * ix->fast (seqlock style: the lookup re-checks it at the end). So: route (in the sealed copy's routing
 * table: no node slot is read), the leaf's fields, then
 *  - a leaf with a radix table takes its bucket [t[j], t[j + 1]] as the candidate blocks (the table's
 *    invariant holds them exactly; its model window is wide by construction) and guesses the position by
 *    interpolation in the bucket; other leaves take the model's error window and position;
 *  - the guessed block and the candidates' bloom words are requested at once;
 *  - a window within two separator lines picks its block with one or two 16-entry compares; a wider one
 *    walks the separator levels out of line (tsf_lix_fast_wide);
 *  - the bloom word, then the block.
 * The reader registers here, around the lookup, and the function returns the get's status: when the path
 * does not apply (not sealed, leaf not ready, has an overflow log, or a writer started meanwhile), by a
 * tail call of the full protocol (tsf_lix_get_slow). One call level per get, nothing kept across it.
 */
IX_FG_ATTR static tsf_status IX_FG_NAME(tsf_index *ix, tsf_lix_rdslot *rs, uint64_t key, uint64_t *val,
                                        tsf_error *err)
{
    uint32_t rt = tsf_lix_enter(ix, rs);
    int r = -1;
    const tsf_lix_tree *ft = IX_LDA(&ix->fast);
    if (TSF_UNLIKELY(!ft)) goto done;
    const tsf_lix_leaf *L = &ft->leaves[ft->rt ? tsf_lix_rt_route(ft->rt, ft->rt_h, key)
                                          : tsf_lix_route_from(ix->pm.base, ft->root_off, ft->root_origin,
                                                          ft->root_mul, ft->root_fanout, key, 0)];
    if (TSF_UNLIKELY(!IX_LDA(&L->ready) || IX_LD(&L->w) != &ix->w0)) goto done;
    uint64_t off = IX_LD(&L->off), origin = IX_LD(&L->origin), mul = IX_LD(&L->mul), nbase = IX_LD(&L->nbase);
    const uint8_t *meta = IX_LD(&L->meta);
    uint64_t nb = IX_LD(&L->nblocks), elo = IX_LD(&L->err_lo), ehi = IX_LD(&L->err_hi);
    uint32_t shift = IX_LD(&L->shift), rsh = IX_LD(&L->rsh);
    uint64_t out = 0;
    r = IX_MISS;
    if (TSF_LIKELY(nbase != 0)) {
        const uint8_t *blocks = ix->pm.base + off + IX_BLOCK;
        const uint32_t *s0 = (const uint32_t *)(const void *)meta;
        const uint8_t *bl = meta + tsf_lix_meta_bloom_off(nb);
        uint32_t q = tsf_lix_sep(origin, shift, key);
        uint64_t b0, b1, p;
        if (rsh) {
            p = tsf_lix_radix_bucket(meta, nb, rsh, q, &b0, &b1);
        } else {
            uint64_t a, e;
            p = tsf_lix_window(key, origin, mul, nbase, elo, ehi, &a, &e);
            b0 = a / IX_SLOTS;
            b1 = (e - 1) / IX_SLOTS;
        }
        const uint8_t *pb = blocks + (p < nbase ? p : nbase - 1) / IX_SLOTS * IX_BLOCK;
        __builtin_prefetch(pb);
        __builtin_prefetch(pb + 64);
        __builtin_prefetch(pb + 128);
        __builtin_prefetch(pb + 192);
        __builtin_prefetch(bl + b0 * 8); /* the candidates' bloom words: 1-2 lines (absent keys) */
        __builtin_prefetch(bl + b1 * 8);
        uint64_t g = b0 & ~(uint64_t)(IX_SEP_FAN - 1), b;
        if (TSF_UNLIKELY(b1 - g >= 2 * IX_SEP_FAN)) {
            b = tsf_lix_fast_wide(ix, L, key, b0, b1, q);
        } else {
            uint64_t m = IX_FG_SEPS(s0 + g, b1 - g >= IX_SEP_FAN, q);
            uint64_t run = (m & ((UINT64_C(2) << (b1 - g)) - 1)) >> (b0 - g + 1);
            b = b0 + (uint64_t)TSF_CTZ64(~run);
            if (TSF_UNLIKELY(b > b0 && s0[b] == q)) b = tsf_lix_fast_tie(ix, L, key, b, b0, q);
        }
        uint64_t bits = tsf_lix_bloom_bits(key);
        if ((mld64(bl + b * 8) & bits) == bits) {
            const uint8_t *blk = blocks + b * IX_BLOCK;
            uint64_t cnt = nbase - b * IX_SLOTS < IX_SLOTS ? nbase - b * IX_SLOTS : IX_SLOTS;
            uint64_t hit = IX_FG_EQ(blk, key) & ((UINT64_C(1) << (2 + 2 * cnt)) - 1);
            if (hit) {
                out = ld64(blk + 8 + 8 * (uint64_t)TSF_CTZ64(hit));
                r = IX_HIT;
            }
        }
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (TSF_UNLIKELY(IX_LD(&ix->fast) != ft))
        r = -1;
    else if (r == IX_HIT)
        *val = out;
done:
    tsf_lix_exit(ix, rs, rt);
    if (TSF_LIKELY(r >= 0)) return r == IX_HIT ? TSF_OK : TSF_ENOTFOUND;
    return tsf_lix_get_slow(ix, rs, key, val, err); /* (a tail call: no registers kept across the lookup) */
}
