/*
 * compress.c - page compression (spec: tsfile-encodings.md §13, tsfile-container-format.md §5.2 and §6.2)
 * through the system libraries, with exactly the framing TsFile stores:
 *   SNAPPY  raw Snappy block (its own varint length preamble, no framing)       libsnappy
 *   GZIP    one complete gzip member, header bytes as Java writes them (OS 0xff) zlib
 *   LZ4     raw LZ4 block, no size prefix (the page header carries the size)    liblz4
 *   ZSTD    one standard zstd frame with the content size, level 3              libzstd
 *   LZMA2   a .xz stream: preset 6 LZMA2 with CRC64                            liblzma
 * Decompression always runs into the caller's buffer of exactly uncompressedSize bytes; a stream that
 * yields fewer or more bytes, or is malformed, is TSF_ECORRUPT naming the codec and the input offset.
 * No size read from the input is ever used to allocate. Readers also accept what the Java readers
 * accept: concatenated gzip members (bytes after a member that do not start another member are
 * ignored, as GZIPInputStream does) and concatenated .xz streams with stream padding.
 * A tsf_compressor keeps the library contexts (zlib, zstd, liblzma) between pages.
 * Each library but zlib (the indexes need its crc32) can be left out of a build (CMake TSF_WITH_LZMA,
 * _ZSTD, _LZ4, _SNAPPY = OFF, which define TSF_WITH_<X>=0 here): its compression is then unsupported (tsf_compression_supported 0) and
 * every call naming it is TSF_ENOTSUP saying so.
 */
#include <limits.h>
#include <string.h>

#ifndef TSF_WITH_LZMA
#define TSF_WITH_LZMA 1
#endif
#ifndef TSF_WITH_ZSTD
#define TSF_WITH_ZSTD 1
#endif
#ifndef TSF_WITH_LZ4
#define TSF_WITH_LZ4 1
#endif
#ifndef TSF_WITH_SNAPPY
#define TSF_WITH_SNAPPY 1
#endif

#if TSF_WITH_LZ4
#include <lz4.h>
#endif
#if TSF_WITH_LZMA
#include <lzma.h>
#endif
#if TSF_WITH_SNAPPY
#include <snappy-c.h>
#endif
#include <zlib.h>
#if TSF_WITH_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#include "../common/internal.h"

/* Helpers some reduced builds (TSF_WITH_<X>=0) leave without a caller. */
#if defined(__GNUC__) || defined(__clang__)
#define TSF_MAYBE_UNUSED __attribute__((unused))
#else
#define TSF_MAYBE_UNUSED
#endif

#define ZSTD_LEVEL 3
#define XZ_PRESET 6
/* Decoder memory cap for .xz streams: the Java writer declares an 8 MiB dictionary (preset 6); the
 * cap admits up to preset 9 (64 MiB) and refuses streams that would make us allocate more. */
#define XZ_MEMLIMIT ((uint64_t)96 << 20)
#define XZ_MIN_DICT ((uint32_t)4096)

struct tsf_compressor {
    tsf_allocator alloc;        /* copy of the hooks; all NULL = libc */
    const tsf_allocator *hooks; /* &alloc when hooks were given, else NULL */
    z_stream inflate;
    int inflate_ready;
    z_stream deflate;
    int deflate_ready;
#if TSF_WITH_ZSTD
    ZSTD_DCtx *zdctx;
    ZSTD_CCtx *zcctx;
#endif
#if TSF_WITH_LZMA
    lzma_allocator xz_alloc;
    lzma_stream xz; /* decoder or encoder, re-initialised per call (liblzma reuses its memory) */
    int xz_used;
#endif
};

/* ---- allocator bridge: the libraries free without a size, tsf_free wants one ---------------------- */

#define BRIDGE_HDR 16

static void *bridge_alloc(const tsf_allocator *a, size_t size)
{
    if (size > SIZE_MAX - BRIDGE_HDR) return NULL;
    uint8_t *p = tsf_alloc(a, size + BRIDGE_HDR);
    if (!p) return NULL;
    size_t total = size + BRIDGE_HDR;
    memcpy(p, &total, sizeof total);
    return p + BRIDGE_HDR;
}

static void bridge_free(const tsf_allocator *a, void *q)
{
    if (!q) return;
    uint8_t *p = (uint8_t *)q - BRIDGE_HDR;
    size_t total;
    memcpy(&total, p, sizeof total);
    tsf_free(a, p, total);
}

static voidpf z_alloc_cb(voidpf opaque, uInt items, uInt size)
{
    return bridge_alloc(opaque, (size_t)items * size);
}
static void z_free_cb(voidpf opaque, voidpf address)
{
    bridge_free(opaque, address);
}

#if TSF_WITH_LZMA
static void *xz_alloc_cb(void *opaque, size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size) return NULL;
    return bridge_alloc(opaque, nmemb * size);
}
static void xz_free_cb(void *opaque, void *ptr)
{
    bridge_free(opaque, ptr);
}

#endif

static void z_stream_setup(const tsf_compressor *h, z_stream *z)
{
    memset(z, 0, sizeof *z);
    if (h && h->hooks) {
        z->zalloc = z_alloc_cb;
        z->zfree = z_free_cb;
        z->opaque = (voidpf)h->hooks;
    }
}


/* ---- common helpers ------------------------------------------------------------------------------- */

TSF_MAYBE_UNUSED static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

TSF_MAYBE_UNUSED static tsf_status too_small(tsf_error *err, const char *codec, size_t cap, size_t n)
{
    return tsf_err(err, TSF_ERANGE,
                   "%s compress: output capacity %zu too small for %zu input bytes (use "
                   "tsf_compress_bound)",
                   codec, cap, n);
}

TSF_MAYBE_UNUSED static tsf_status wrong_size(tsf_error *err, const char *codec, size_t got, size_t want)
{
    return tsf_err(err, TSF_ECORRUPT, "%s page: decompressed to %zu bytes, page header says %zu", codec, got,
                   want);
}

int tsf_compression_supported(tsf_compression c)
{
    switch (c) {
    case TSF_UNCOMPRESSED: return 1;
    case TSF_SNAPPY: return TSF_WITH_SNAPPY;
    case TSF_GZIP: return 1;
    case TSF_LZ4: return TSF_WITH_LZ4;
    case TSF_ZSTD: return TSF_WITH_ZSTD;
    case TSF_LZMA2: return TSF_WITH_LZMA;
    default: return 0;
    }
}

/* The CMake switch that leaves out the library of a TsFile compression this build lacks. */
TSF_MAYBE_UNUSED static tsf_status left_out(tsf_error *err, const char *what, tsf_compression c)
{
    static const char *const SWITCH[] = {[TSF_SNAPPY] = "SNAPPY", [TSF_LZ4] = "LZ4",
                                         [TSF_ZSTD] = "ZSTD", [TSF_LZMA2] = "LZMA"};
    return tsf_err(err, TSF_ENOTSUP, "%s: %s is not available in this build (built with TSF_WITH_%s=OFF)", what,
                   tsf_compression_name(c), SWITCH[c]);
}

size_t tsf_compress_bound(tsf_compression c, size_t n)
{
    if (n > SIZE_MAX / 4) return 0;
    switch (c) {
    case TSF_UNCOMPRESSED:
        return n;
#if TSF_WITH_SNAPPY
    case TSF_SNAPPY:
        return snappy_max_compressed_length(n);
#endif
    case TSF_GZIP:
        return (size_t)compressBound((uLong)n) + 18; /* zlib bound + gzip header/trailer */
#if TSF_WITH_LZ4
    case TSF_LZ4:
        return n > (size_t)LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)n);
#endif
#if TSF_WITH_ZSTD
    case TSF_ZSTD: {
        size_t b = ZSTD_compressBound(n);
        return ZSTD_isError(b) ? 0 : b;
    }
#endif
#if TSF_WITH_LZMA
    case TSF_LZMA2:
        return lzma_stream_buffer_bound(n);
#endif
    default:
        return 0;
    }
}

#if TSF_WITH_SNAPPY
/* ---- SNAPPY --------------------------------------------------------------------------------------- */

static tsf_status snappy_enc(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *written,
                             tsf_error *err)
{
    size_t out = cap;
    if (cap < snappy_max_compressed_length(n)) return too_small(err, "SNAPPY", cap, n);
    if (snappy_compress((const char *)src, n, (char *)dst, &out) != SNAPPY_OK)
        return tsf_err(err, TSF_EINVAL, "SNAPPY compress: libsnappy refused %zu input bytes", n);
    *written = out;
    return TSF_OK;
}

static tsf_status snappy_dec(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, tsf_error *err)
{
    size_t ulen = 0, out = dst_len;
    char dummy;
    if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK)
        return tsf_err(err, TSF_ECORRUPT, "SNAPPY page: bad length preamble at offset 0 (%zu input bytes)",
                       n);
    if (ulen != dst_len)
        return tsf_err(err, TSF_ECORRUPT,
                       "SNAPPY page: preamble at offset 0 says %zu bytes, page header says %zu", ulen,
                       dst_len);
    if (snappy_uncompress((const char *)src, n, dst_len ? (char *)dst : &dummy, &out) != SNAPPY_OK)
        return tsf_err(err, TSF_ECORRUPT, "SNAPPY page: malformed block (%zu input bytes, offset unknown)",
                       n);
    if (out != dst_len) return wrong_size(err, "SNAPPY", out, dst_len);
    return TSF_OK;
}

#endif

#if TSF_WITH_LZ4
/* ---- LZ4 ------------------------------------------------------------------------------------------ */

static tsf_status lz4_enc(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *written,
                          tsf_error *err)
{
    if (n > (size_t)LZ4_MAX_INPUT_SIZE)
        return tsf_err(err, TSF_EINVAL, "LZ4 compress: %zu input bytes exceed the LZ4 block limit", n);
    int r = LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)min_sz(cap, INT_MAX));
    if (r <= 0) return too_small(err, "LZ4", cap, n);
    *written = (size_t)r;
    return TSF_OK;
}

static tsf_status lz4_dec(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, tsf_error *err)
{
    char dummy;
    if (n > INT_MAX || dst_len > INT_MAX)
        return tsf_err(err, TSF_ECORRUPT,
                       "LZ4 page: %zu compressed / %zu uncompressed bytes exceed the LZ4 "
                       "block limit",
                       n, dst_len);
    if (n == 0) return tsf_err(err, TSF_ECORRUPT, "LZ4 page: empty block at offset 0");
    int r = LZ4_decompress_safe((const char *)src, dst_len ? (char *)dst : &dummy, (int)n, (int)dst_len);
    if (r < 0)
        return tsf_err(err, TSF_ECORRUPT, "LZ4 page: malformed block (error near input offset %lld of %zu)",
                       -(long long)r - 1, n);
    if ((size_t)r != dst_len) return wrong_size(err, "LZ4", (size_t)r, dst_len);
    return TSF_OK;
}

#endif

#if TSF_WITH_ZSTD
/* ---- ZSTD ----------------------------------------------------------------------------------------- */

static tsf_status zstd_enc(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                           size_t *written, tsf_error *err)
{
    size_t r;
    if (h) {
        if (!h->zcctx && !(h->zcctx = ZSTD_createCCtx()))
            return tsf_err(err, TSF_ENOMEM, "ZSTD compress: out of memory");
        r = ZSTD_compressCCtx(h->zcctx, dst, cap, src, n, ZSTD_LEVEL);
    } else {
        r = ZSTD_compress(dst, cap, src, n, ZSTD_LEVEL);
    }
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return too_small(err, "ZSTD", cap, n);
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
            return tsf_err(err, TSF_ENOMEM, "ZSTD compress: out of memory");
        return tsf_err(err, TSF_EINVAL, "ZSTD compress: %s", ZSTD_getErrorName(r));
    }
    *written = r;
    return TSF_OK;
}

static tsf_status zstd_dec(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                           tsf_error *err)
{
    uint8_t dummy;
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        return tsf_err(err, TSF_ECORRUPT, "ZSTD page: no valid frame header at offset 0 (%zu input bytes)",
                       n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > dst_len)
        return tsf_err(err, TSF_ECORRUPT,
                       "ZSTD page: frame header at offset 0 says %llu bytes, page header "
                       "says %zu",
                       fcs, dst_len);
    size_t r;
    if (h) {
        if (!h->zdctx && !(h->zdctx = ZSTD_createDCtx()))
            return tsf_err(err, TSF_ENOMEM, "ZSTD decompress: out of memory");
        r = ZSTD_decompressDCtx(h->zdctx, dst_len ? dst : &dummy, dst_len, src, n);
    } else {
        r = ZSTD_decompress(dst_len ? dst : &dummy, dst_len, src, n);
    }
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
            return tsf_err(err, TSF_ENOMEM, "ZSTD decompress: out of memory");
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
            return tsf_err(err, TSF_ECORRUPT,
                           "ZSTD page: frames yield more than the %zu bytes the page header "
                           "says",
                           dst_len);
        return tsf_err(err, TSF_ECORRUPT, "ZSTD page: %s (%zu input bytes, offset unknown)",
                       ZSTD_getErrorName(r), n);
    }
    if (r != dst_len) return wrong_size(err, "ZSTD", r, dst_len);
    return TSF_OK;
}

#endif

/* ---- GZIP ----------------------------------------------------------------------------------------- */

static tsf_status gzip_enc(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                           size_t *written, tsf_error *err)
{
    z_stream local, *z = &local;
    int ret;
    if (cap < 18) return too_small(err, "GZIP", cap, n);
    if (h && h->deflate_ready) {
        z = &h->deflate;
        ret = deflateReset(z);
    } else {
        if (h) z = &h->deflate;
        z_stream_setup(h, z);
        ret = deflateInit2(z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        if (ret == Z_OK && h) h->deflate_ready = 1;
    }
    if (ret != Z_OK)
        return tsf_err(err, ret == Z_MEM_ERROR ? TSF_ENOMEM : TSF_EINVAL,
                       "GZIP compress: deflateInit2 failed (%d)", ret);
    /* The Java writer's header: no flags, mtime 0, XFL 0 (level 6), OS 0xff (unknown). */
    gz_header head;
    memset(&head, 0, sizeof head);
    head.os = 255;
    deflateSetHeader(z, &head);

    size_t in_pos = 0, out_pos = 0;
    tsf_status st = TSF_OK;
    for (;;) {
        size_t in_chunk = min_sz(n - in_pos, UINT_MAX), out_chunk = min_sz(cap - out_pos, UINT_MAX);
        z->next_in = (Bytef *)(uintptr_t)(src + in_pos);
        z->avail_in = (uInt)in_chunk;
        z->next_out = dst + out_pos;
        z->avail_out = (uInt)out_chunk;
        ret = deflate(z, in_pos + in_chunk == n ? Z_FINISH : Z_NO_FLUSH);
        in_pos += in_chunk - z->avail_in;
        out_pos += out_chunk - z->avail_out;
        if (ret == Z_STREAM_END) break;
        if (ret == Z_BUF_ERROR || (ret == Z_OK && out_pos == cap)) {
            st = too_small(err, "GZIP", cap, n);
            break;
        }
        if (ret != Z_OK) {
            st = tsf_err(err, TSF_EINVAL, "GZIP compress: deflate failed (%d)", ret);
            break;
        }
    }
    if (!h) deflateEnd(z);
    if (st == TSF_OK) *written = out_pos;
    return st;
}

static tsf_status gzip_dec(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                           tsf_error *err)
{
    z_stream local, *z = &local;
    uint8_t spill[16];
    int ret;
    if (h && h->inflate_ready) {
        z = &h->inflate;
        ret = inflateReset(z);
    } else {
        if (h) z = &h->inflate;
        z_stream_setup(h, z);
        ret = inflateInit2(z, 15 + 16);
        if (ret == Z_OK && h) h->inflate_ready = 1;
    }
    if (ret != Z_OK)
        return tsf_err(err, ret == Z_MEM_ERROR ? TSF_ENOMEM : TSF_EINVAL,
                       "GZIP decompress: inflateInit2 failed "
                       "(%d)",
                       ret);

    size_t in_pos = 0, out_pos = 0;
    unsigned member = 0;
    tsf_status st = TSF_OK;
    for (;;) {
        size_t member_start = in_pos;
        for (;;) {
            int spilling = out_pos >= dst_len;
            size_t in_chunk = min_sz(n - in_pos, UINT_MAX);
            size_t out_chunk = spilling ? sizeof spill : min_sz(dst_len - out_pos, UINT_MAX);
            z->next_in = (Bytef *)(uintptr_t)(src + in_pos);
            z->avail_in = (uInt)in_chunk;
            z->next_out = spilling ? spill : dst + out_pos;
            z->avail_out = (uInt)out_chunk;
            ret = inflate(z, Z_NO_FLUSH);
            size_t made = out_chunk - z->avail_out;
            in_pos += in_chunk - z->avail_in;
            if (spilling && made) {
                st = tsf_err(err, TSF_ECORRUPT,
                             "GZIP page: member %u (offset %zu) yields more than the %zu bytes "
                             "the page header says",
                             member, member_start, dst_len);
                goto done;
            }
            out_pos += made;
            if (ret == Z_STREAM_END) break;
            if (ret == Z_OK) continue;
            if (ret == Z_MEM_ERROR) {
                st = tsf_err(err, TSF_ENOMEM, "GZIP decompress: out of memory");
            } else if (ret == Z_BUF_ERROR && in_pos == n) {
                st = tsf_err(err, TSF_ECORRUPT, "GZIP page: member %u (offset %zu) truncated at offset %zu",
                             member, member_start, in_pos);
            } else {
                st = tsf_err(err, TSF_ECORRUPT,
                             "GZIP page: member %u (offset %zu) malformed near offset %zu: %s", member,
                             member_start, in_pos, z->msg ? z->msg : "inflate error");
            }
            goto done;
        }
        member++;
        /* GZIPInputStream reads another member only when the next bytes form a gzip header. */
        if (n - in_pos < 10 || src[in_pos] != 0x1f || src[in_pos + 1] != 0x8b || src[in_pos + 2] != 8) break;
        ret = inflateReset(z);
        if (ret != Z_OK) {
            st = tsf_err(err, TSF_EINVAL, "GZIP decompress: inflateReset failed (%d)", ret);
            goto done;
        }
    }
    if (out_pos != dst_len) st = wrong_size(err, "GZIP", out_pos, dst_len);
done:
    if (!h) inflateEnd(z);
    return st;
}


#if TSF_WITH_LZMA
/* ---- LZMA2 (.xz) ---------------------------------------------------------------------------------- */

static lzma_stream *xz_stream(tsf_compressor *h, lzma_stream *local)
{
    if (!h) {
        lzma_stream init = LZMA_STREAM_INIT;
        *local = init;
        return local;
    }
    if (!h->xz_used) {
        lzma_stream init = LZMA_STREAM_INIT;
        h->xz = init;
        if (h->hooks) {
            h->xz_alloc.alloc = xz_alloc_cb;
            h->xz_alloc.free = xz_free_cb;
            h->xz_alloc.opaque = (void *)h->hooks;
            h->xz.allocator = &h->xz_alloc;
        }
        h->xz_used = 1;
    }
    return &h->xz;
}

static tsf_status xz_enc(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                         size_t *written, tsf_error *err)
{
    lzma_options_lzma opt;
    if (lzma_lzma_preset(&opt, XZ_PRESET))
        return tsf_err(err, TSF_EINVAL, "LZMA2 compress: preset unsupported");
    /* A page never needs a dictionary larger than itself: shrinking it keeps the output a valid preset-6
     * stream for this input while the encoder (and every decoder) allocates far less. */
    uint32_t dict = XZ_MIN_DICT;
    while (dict < n && dict < opt.dict_size) dict <<= 1;
    if (dict < opt.dict_size) opt.dict_size = dict;
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};

    lzma_stream local, *s = xz_stream(h, &local);
    lzma_ret r = lzma_stream_encoder(s, filters, LZMA_CHECK_CRC64);
    if (r != LZMA_OK)
        return tsf_err(err, r == LZMA_MEM_ERROR ? TSF_ENOMEM : TSF_EINVAL,
                       "LZMA2 compress: encoder init failed "
                       "(%d)",
                       (int)r);
    s->next_in = src;
    s->avail_in = n;
    s->next_out = dst;
    s->avail_out = cap;
    tsf_status st = TSF_OK;
    for (;;) {
        r = lzma_code(s, LZMA_FINISH);
        if (r == LZMA_STREAM_END) break;
        if (r == LZMA_OK && s->avail_out > 0) continue;
        if (r == LZMA_OK || r == LZMA_BUF_ERROR)
            st = too_small(err, "LZMA2", cap, n);
        else
            st = tsf_err(err, r == LZMA_MEM_ERROR ? TSF_ENOMEM : TSF_EINVAL, "LZMA2 compress: failed (%d)",
                         (int)r);
        break;
    }
    if (st == TSF_OK) *written = cap - s->avail_out;
    if (!h) lzma_end(s);
    return st;
}

static tsf_status xz_dec(tsf_compressor *h, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                         tsf_error *err)
{
    uint8_t spill[16];
    lzma_stream local, *s = xz_stream(h, &local);
    lzma_ret r = lzma_stream_decoder(s, XZ_MEMLIMIT, LZMA_CONCATENATED);
    if (r != LZMA_OK)
        return tsf_err(err, r == LZMA_MEM_ERROR ? TSF_ENOMEM : TSF_EINVAL,
                       "LZMA2 decompress: decoder init "
                       "failed (%d)",
                       (int)r);
    s->next_in = src;
    s->avail_in = n;
    size_t out_pos = 0;
    tsf_status st = TSF_OK;
    for (;;) {
        int spilling = out_pos >= dst_len;
        size_t out_chunk = spilling ? sizeof spill : dst_len - out_pos;
        s->next_out = spilling ? spill : dst + out_pos;
        s->avail_out = out_chunk;
        r = lzma_code(s, LZMA_FINISH);
        size_t made = out_chunk - s->avail_out;
        size_t off = n - s->avail_in;
        if (spilling && made) {
            st = tsf_err(err, TSF_ECORRUPT,
                         "LZMA2 page: .xz data yields more than the %zu bytes the page header "
                         "says (input offset %zu)",
                         dst_len, off);
            break;
        }
        out_pos += made;
        if (r == LZMA_STREAM_END) {
            if (out_pos != dst_len) st = wrong_size(err, "LZMA2", out_pos, dst_len);
            break;
        }
        if (r == LZMA_OK) continue; /* liblzma reports LZMA_BUF_ERROR when no progress is possible */
        switch (r) {
        case LZMA_MEM_ERROR:
            st = tsf_err(err, TSF_ENOMEM, "LZMA2 decompress: out of memory");
            break;
        case LZMA_MEMLIMIT_ERROR:
            st = tsf_err(err, TSF_ECORRUPT,
                         "LZMA2 page: block near offset %zu needs more than %llu MiB of "
                         "decoder memory",
                         off, (unsigned long long)(XZ_MEMLIMIT >> 20));
            break;
        case LZMA_FORMAT_ERROR:
            st = tsf_err(err, TSF_ECORRUPT, "LZMA2 page: no .xz stream header at offset %zu", off);
            break;
        case LZMA_BUF_ERROR:
            st = tsf_err(err, TSF_ECORRUPT, "LZMA2 page: .xz stream truncated (offset %zu of %zu)", off, n);
            break;
        default:
            st = tsf_err(err, TSF_ECORRUPT,
                         "LZMA2 page: malformed .xz stream near offset %zu (liblzma error %d)", off, (int)r);
            break;
        }
        break;
    }
    if (!h) lzma_end(s);
    return st;
}

#endif

/* ---- dispatch ------------------------------------------------------------------------------------- */

static tsf_status compress_any(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                               uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (!written || (n && !src) || (cap && !dst))
        return tsf_err(err, TSF_EINVAL, "tsf_compress: NULL argument");
    *written = 0;
    switch (c) {
    case TSF_UNCOMPRESSED:
        if (cap < n) return too_small(err, "UNCOMPRESSED", cap, n);
        if (n) memcpy(dst, src, n);
        *written = n;
        return TSF_OK;
    case TSF_SNAPPY:
#if TSF_WITH_SNAPPY
        return snappy_enc(src, n, dst, cap, written, err);
#else
        return left_out(err, "compress", c);
#endif
    case TSF_GZIP:
        return gzip_enc(h, src, n, dst, cap, written, err);
    case TSF_LZ4:
#if TSF_WITH_LZ4
        return lz4_enc(src, n, dst, cap, written, err);
#else
        return left_out(err, "compress", c);
#endif
    case TSF_ZSTD:
#if TSF_WITH_ZSTD
        return zstd_enc(h, src, n, dst, cap, written, err);
#else
        return left_out(err, "compress", c);
#endif
    case TSF_LZMA2:
#if TSF_WITH_LZMA
        return xz_enc(h, src, n, dst, cap, written, err);
#else
        return left_out(err, "compress", c);
#endif
    default: {
        const char *name = tsf_compression_name(c);
        return tsf_err(err, TSF_ENOTSUP, "compress: compression %s (%d) is not supported", name ? name : "?",
                       (int)c);
    }
    }
}

static tsf_status decompress_any(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                                 uint8_t *dst, size_t dst_len, tsf_error *err)
{
    if ((n && !src) || (dst_len && !dst)) return tsf_err(err, TSF_EINVAL, "tsf_decompress: NULL argument");
    switch (c) {
    case TSF_UNCOMPRESSED:
        if (n != dst_len)
            return tsf_err(err, TSF_ECORRUPT, "UNCOMPRESSED page: body has %zu bytes, page header says %zu",
                           n, dst_len);
        if (n) memcpy(dst, src, n);
        return TSF_OK;
    case TSF_SNAPPY:
#if TSF_WITH_SNAPPY
        return snappy_dec(src, n, dst, dst_len, err);
#else
        return left_out(err, "decompress", c);
#endif
    case TSF_GZIP:
        return gzip_dec(h, src, n, dst, dst_len, err);
    case TSF_LZ4:
#if TSF_WITH_LZ4
        return lz4_dec(src, n, dst, dst_len, err);
#else
        return left_out(err, "decompress", c);
#endif
    case TSF_ZSTD:
#if TSF_WITH_ZSTD
        return zstd_dec(h, src, n, dst, dst_len, err);
#else
        return left_out(err, "decompress", c);
#endif
    case TSF_LZMA2:
#if TSF_WITH_LZMA
        return xz_dec(h, src, n, dst, dst_len, err);
#else
        return left_out(err, "decompress", c);
#endif
    default: {
        const char *name = tsf_compression_name(c);
        return tsf_err(err, TSF_ENOTSUP, "decompress: compression %s (%d) is not supported",
                       name ? name : "?", (int)c);
    }
    }
}

tsf_status tsf_compress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                        size_t *written, tsf_error *err)
{
    return compress_any(NULL, c, src, n, dst, cap, written, err);
}

tsf_status tsf_decompress(tsf_compression c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
                          tsf_error *err)
{
    return decompress_any(NULL, c, src, n, dst, dst_len, err);
}

/* ---- reusable contexts ---------------------------------------------------------------------------- */

tsf_status tsf_compressor_open(tsf_compressor **out, const tsf_allocator *alloc, tsf_error *err)
{
    if (!out) return tsf_err(err, TSF_EINVAL, "tsf_compressor_open: out is NULL");
    *out = NULL;
    tsf_compressor *h = tsf_alloc(alloc, sizeof *h);
    if (!h) return tsf_err(err, TSF_ENOMEM, "tsf_compressor_open: out of memory");
    memset(h, 0, sizeof *h);
    if (alloc && (alloc->alloc || alloc->free)) {
        h->alloc = *alloc;
        h->hooks = &h->alloc;
    }
    *out = h;
    return TSF_OK;
}

void tsf_compressor_close(tsf_compressor *h)
{
    if (!h) return;
    if (h->inflate_ready) inflateEnd(&h->inflate);
    if (h->deflate_ready) deflateEnd(&h->deflate);
#if TSF_WITH_ZSTD
    ZSTD_freeDCtx(h->zdctx);
    ZSTD_freeCCtx(h->zcctx);
#endif
#if TSF_WITH_LZMA
    if (h->xz_used) lzma_end(&h->xz);
#endif
    tsf_allocator a = h->alloc;
    tsf_free(h->hooks ? &a : NULL, h, sizeof *h);
}

tsf_status tsf_compressor_compress(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                                   uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (!h) return tsf_err(err, TSF_EINVAL, "tsf_compressor_compress: handle is NULL");
    return compress_any(h, c, src, n, dst, cap, written, err);
}

tsf_status tsf_compressor_decompress(tsf_compressor *h, tsf_compression c, const uint8_t *src, size_t n,
                                     uint8_t *dst, size_t dst_len, tsf_error *err)
{
    if (!h) return tsf_err(err, TSF_EINVAL, "tsf_compressor_decompress: handle is NULL");
    return decompress_any(h, c, src, n, dst, dst_len, err);
}
