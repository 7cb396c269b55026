/*
 * codec.c - the public codec entry points: open a context (resolving the implementation path
 * once), check the (type, encoding) pair against the table of legal pairs, dispatch once per page.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static const tsf_codec_vt *const VTABLES[] = {
    [TSF_ENC_PLAIN] = &tsf_codec_plain,
    [TSF_ENC_DICTIONARY] = &tsf_codec_dictionary,
    [TSF_ENC_RLE] = &tsf_codec_rle,
    [TSF_ENC_TS_2DIFF] = &tsf_codec_ts2diff,
    [TSF_ENC_GORILLA_V1] = &tsf_codec_gorilla_v1,
    [TSF_ENC_REGULAR] = &tsf_codec_regular,
    [TSF_ENC_GORILLA] = &tsf_codec_gorilla,
    [TSF_ENC_ZIGZAG] = &tsf_codec_zigzag,
    [TSF_ENC_CHIMP] = &tsf_codec_chimp,
    [TSF_ENC_SPRINTZ] = &tsf_codec_sprintz,
    [TSF_ENC_RLBE] = &tsf_codec_rlbe,
};

static const tsf_codec_vt *vt_of(tsf_encoding e)
{
    if ((unsigned)e >= sizeof VTABLES / sizeof VTABLES[0]) return NULL;
    return VTABLES[e];
}

static int type_ok(tsf_type t)
{
    return (unsigned)t <= TSF_STRING && (TSF_TYPES_ALL & TSF_TYPE_BIT(t));
}

void tsf_codec_options_init(tsf_codec_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->path = TSF_PATH_AUTO;
    o->float_precision = 2;
}

tsf_status tsf_codec_open(tsf_codec **out, const tsf_codec_options *opts, tsf_error *err)
{
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    if (!out) return tsf_err(err, TSF_EINVAL, "tsf_codec_open: out is NULL");
    *out = NULL;
    if (opts) {
        if (opts->struct_size < offsetof(tsf_codec_options, allocator) + sizeof(void *) ||
            opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_codec_open: options.struct_size %zu is not a known version",
                           opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    if ((unsigned)o.path > TSF_PATH_NEON)
        return tsf_err(err, TSF_EINVAL, "tsf_codec_open: unknown path %d", (int)o.path);
    if ((uint32_t)o.gorilla_compact > 2)
        return tsf_err(err, TSF_EINVAL, "tsf_codec_open: gorilla_compact %d is not 0, 1 or 2",
                       (int)o.gorilla_compact);
    tsf_codec *c = tsf_alloc(o.allocator, sizeof *c);
    if (!c) return tsf_err(err, TSF_ENOMEM, "tsf_codec_open: out of memory");
    memset(c, 0, sizeof *c);
    c->path = tsf_path_resolve(o.path);
    c->float_precision = o.float_precision;
    c->gorilla_compact = o.gorilla_compact;
    c->nt_stores = o.experimental && o.experimental->nt_stores > 0 ? 1 : -1;
    if (o.allocator) c->alloc = *o.allocator;
    *out = c;
    return TSF_OK;
}

void tsf_codec_close(tsf_codec *c)
{
    if (!c) return;
    tsf_allocator a = c->alloc;
    tsf_free(&a, c, sizeof *c);
}

tsf_codec_path tsf_codec_get_path(const tsf_codec *c)
{
    return c->path;
}

int tsf_codec_can_encode(tsf_type type, tsf_encoding enc)
{
    const tsf_codec_vt *vt = vt_of(enc);
    return vt && type_ok(type) && (vt->encode_types & TSF_TYPE_BIT(type)) != 0;
}

int tsf_codec_can_decode(tsf_type type, tsf_encoding enc)
{
    const tsf_codec_vt *vt = vt_of(enc);
    return vt && type_ok(type) && (vt->decode_types & TSF_TYPE_BIT(type)) != 0;
}

size_t tsf_codec_encode_bound(tsf_type type, tsf_encoding enc, size_t n, size_t var_bytes)
{
    if (!tsf_codec_can_encode(type, enc)) return 0;
    return vt_of(enc)->bound(type, n, var_bytes);
}

static tsf_status unsupported(tsf_error *err, const char *what, tsf_type type, tsf_encoding enc)
{
    const char *tn = type_ok(type) ? tsf_type_name(type) : NULL;
    const char *en = tsf_encoding_name(enc);
    return tsf_err(err, TSF_ENOTSUP, "%s: encoding %s (%d) is not supported for type %s (%d)", what,
                   en ? en : "?", (int)enc, tn ? tn : "?", (int)type);
}

tsf_status tsf_codec_encode(const tsf_codec *c, tsf_type type, tsf_encoding enc, const void *values, size_t n,
                            uint8_t *dst, size_t cap, size_t *written, tsf_error *err)
{
    if (!c || !written || (n && (!values || !dst)))
        return tsf_err(err, TSF_EINVAL, "tsf_codec_encode: NULL argument");
    *written = 0;
    if (!tsf_codec_can_encode(type, enc)) return unsupported(err, "encode", type, enc);
    return vt_of(enc)->encode(c, type, values, n, dst, cap, written, err);
}

tsf_status tsf_codec_decode(const tsf_codec *c, tsf_type type, tsf_encoding enc, const uint8_t *src, size_t len,
                            void *values, size_t n, size_t *consumed, tsf_error *err)
{
    size_t used = 0;
    if (!c || (n && !values) || (len && !src)) return tsf_err(err, TSF_EINVAL, "tsf_codec_decode: NULL argument");
    if (!tsf_codec_can_decode(type, enc)) return unsupported(err, "decode", type, enc);
    tsf_status s = vt_of(enc)->decode(c, type, src, len, values, n, &used, err);
    if (consumed) *consumed = used;
    return s;
}

tsf_status tsf_codec_count(tsf_type type, tsf_encoding enc, const uint8_t *src, size_t len, size_t *n,
                           tsf_error *err)
{
    if (!n || (len && !src)) return tsf_err(err, TSF_EINVAL, "tsf_codec_count: NULL argument");
    if (!tsf_codec_can_decode(type, enc)) return unsupported(err, "count", type, enc);
    const tsf_codec_vt *vt = vt_of(enc);
    if (!vt->count)
        return tsf_err(err, TSF_ENOTSUP, "count: %s streams carry no value count", tsf_encoding_name(enc));
    return vt->count(type, src, len, n, err);
}
