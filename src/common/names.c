/* names.c - names of the on-disk enumerations, and parsing them back (case-insensitive). */
#include <strings.h>

#include "internal.h"

const char *tsf_type_name(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN: return "BOOLEAN";
    case TSF_INT32: return "INT32";
    case TSF_INT64: return "INT64";
    case TSF_FLOAT: return "FLOAT";
    case TSF_DOUBLE: return "DOUBLE";
    case TSF_TEXT: return "TEXT";
    case TSF_VECTOR: return "VECTOR";
    case TSF_TIMESTAMP: return "TIMESTAMP";
    case TSF_DATE: return "DATE";
    case TSF_BLOB: return "BLOB";
    case TSF_STRING: return "STRING";
    }
    return NULL;
}

size_t tsf_type_size(tsf_type t)
{
    switch (t) {
    case TSF_BOOLEAN: return sizeof(uint8_t);
    case TSF_INT32:
    case TSF_DATE: return sizeof(int32_t);
    case TSF_FLOAT: return sizeof(float);
    case TSF_INT64:
    case TSF_TIMESTAMP: return sizeof(int64_t);
    case TSF_DOUBLE: return sizeof(double);
    case TSF_TEXT:
    case TSF_STRING:
    case TSF_BLOB: return sizeof(tsf_bytes);
    case TSF_VECTOR: return 0;
    }
    return 0;
}

const char *tsf_encoding_name(tsf_encoding e)
{
    switch (e) {
    case TSF_ENC_PLAIN: return "PLAIN";
    case TSF_ENC_DICTIONARY: return "DICTIONARY";
    case TSF_ENC_RLE: return "RLE";
    case TSF_ENC_DIFF: return "DIFF";
    case TSF_ENC_TS_2DIFF: return "TS_2DIFF";
    case TSF_ENC_BITMAP: return "BITMAP";
    case TSF_ENC_GORILLA_V1: return "GORILLA_V1";
    case TSF_ENC_REGULAR: return "REGULAR";
    case TSF_ENC_GORILLA: return "GORILLA";
    case TSF_ENC_ZIGZAG: return "ZIGZAG";
    case TSF_ENC_FREQ: return "FREQ";
    case TSF_ENC_CHIMP: return "CHIMP";
    case TSF_ENC_SPRINTZ: return "SPRINTZ";
    case TSF_ENC_RLBE: return "RLBE";
    case TSF_ENCODING_AUTO: return "AUTO";
    }
    return NULL;
}

const char *tsf_compression_name(tsf_compression c)
{
    switch (c) {
    case TSF_UNCOMPRESSED: return "UNCOMPRESSED";
    case TSF_SNAPPY: return "SNAPPY";
    case TSF_GZIP: return "GZIP";
    case TSF_LZO: return "LZO";
    case TSF_LZ4: return "LZ4";
    case TSF_ZSTD: return "ZSTD";
    case TSF_LZMA2: return "LZMA2";
    }
    return NULL;
}

tsf_status tsf_type_parse(const char *name, tsf_type *out)
{
    for (int i = 0; i <= TSF_STRING; i++) {
        const char *n = tsf_type_name((tsf_type)i);
        if (n && name && strcasecmp(n, name) == 0) {
            *out = (tsf_type)i;
            return TSF_OK;
        }
    }
    return TSF_EINVAL;
}

tsf_status tsf_encoding_parse(const char *name, tsf_encoding *out)
{
    for (int i = 0; i <= TSF_ENC_RLBE; i++) {
        const char *n = tsf_encoding_name((tsf_encoding)i);
        if (n && name && strcasecmp(n, name) == 0) {
            *out = (tsf_encoding)i;
            return TSF_OK;
        }
    }
    if (name && strcasecmp(name, "AUTO") == 0) {
        *out = TSF_ENCODING_AUTO;
        return TSF_OK;
    }
    return TSF_EINVAL;
}

tsf_status tsf_compression_parse(const char *name, tsf_compression *out)
{
    for (int i = 0; i <= TSF_LZMA2; i++) {
        const char *n = tsf_compression_name((tsf_compression)i);
        if (n && name && strcasecmp(n, name) == 0) {
            *out = (tsf_compression)i;
            return TSF_OK;
        }
    }
    if (name && strcasecmp(name, "NONE") == 0) {
        *out = TSF_UNCOMPRESSED;
        return TSF_OK;
    }
    return TSF_EINVAL;
}
