/*
 * exact.c - pages of explicit encodings that could lose a value are checked before they are stored
 * (doc/writer.md "Values an encoding cannot store").
 *
 * Checked, because the format (and the Java reference, which our decoders mirror) can give back
 * other bits than were written:
 *   SPRINTZ (every type: its residual mapping overflows for far-apart integers; floats predict on
 *     their bit patterns), RLBE (every type; its FLOAT/DOUBLE form drifts): decoded and compared;
 *   TS_2DIFF and RLE on FLOAT/DOUBLE (round(v * 10^float_precision)): the precision check AUTO uses
 *     (auto.c), one pass, decoded only to name the value read back;
 *   GORILLA_V1: what the Java reader returns (gorilla_v1.c, tsf_gorilla_v1_java_misread), which
 *     differs from the bytes after a NaN inside a page.
 * Every other encoding the writer accepts keeps every value (test write_test_lossless runs the whole
 * type x encoding x compression matrix on adversarial values) and costs nothing here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../codec/codec.h"
#include "auto.h"
#include "exact.h"

int tsf_wexact_needed(tsf_type t, tsf_encoding e)
{
    int fl = t == TSF_FLOAT || t == TSF_DOUBLE;
    return e == TSF_ENC_SPRINTZ || e == TSF_ENC_RLBE || e == TSF_ENC_GORILLA_V1 ||
           (fl && (e == TSF_ENC_TS_2DIFF || e == TSF_ENC_RLE));
}

static uint64_t bits_at(tsf_type t, const void *v, size_t i)
{
    if (t == TSF_INT32 || t == TSF_DATE || t == TSF_FLOAT) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)v + 4 * i, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, (const uint8_t *)v + 8 * i, 8);
    return u;
}

static int is_nan(tsf_type t, uint64_t b)
{
    if (t == TSF_FLOAT) return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);
    if (t == TSF_DOUBLE)
        return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull);
    return 0;
}

/* First i in [from, n) where back differs from vals (any NaN equals any NaN), or n. */
static size_t first_diff(tsf_type t, const void *vals, const void *back, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        uint64_t a = bits_at(t, vals, i), b = bits_at(t, back, i);
        if (a != b && !(is_nan(t, a) && is_nan(t, b))) return i;
    }
    return n;
}

/* "value 1.5 (0x3ff8000000000000)" / "value -2147483648" into buf. */
static void describe(tsf_type t, uint64_t b, char *buf, size_t cap)
{
    if (t == TSF_FLOAT) {
        float f;
        uint32_t u = (uint32_t)b;
        memcpy(&f, &u, 4);
        snprintf(buf, cap, "%.9g (bits 0x%08x)", (double)f, u);
    } else if (t == TSF_DOUBLE) {
        double d;
        memcpy(&d, &b, 8);
        snprintf(buf, cap, "%.17g (bits 0x%016llx)", d, (unsigned long long)b);
    } else if (t == TSF_INT32 || t == TSF_DATE) {
        snprintf(buf, cap, "%d", (int)(int32_t)(uint32_t)b);
    } else {
        snprintf(buf, cap, "%lld", (long long)(int64_t)b);
    }
}

tsf_status tsf_wexact_check(const tsf_codec *codec, const tsf_allocator *a, tsf_type t, tsf_encoding e,
                            const void *vals, size_t n, const uint8_t *src, size_t len, const int64_t *times,
                            char *why, size_t why_cap, tsf_error *err)
{
    size_t bad = n;
    uint64_t got = 0;
    why[0] = 0;
    if (e == TSF_ENC_GORILLA_V1) {
        bad = tsf_gorilla_v1_java_misread(t, vals, n, src, len, &got);
    } else {
        int prec = (t == TSF_FLOAT || t == TSF_DOUBLE) && (e == TSF_ENC_TS_2DIFF || e == TSF_ENC_RLE);
        if (prec && tsf_wauto_prec_first_bad(t, vals, n, codec->float_precision) == n) return TSF_OK;
        size_t w = t == TSF_INT32 || t == TSF_DATE || t == TSF_FLOAT ? 4 : 8, bytes = n * w;
        void *back = tsf_alloc(a, bytes ? bytes : 1);
        if (!back) return tsf_err(err, TSF_ENOMEM, "writer: out of memory (checking a %s page)", tsf_encoding_name(e));
        size_t used = 0;
        tsf_error e2 = {0};
        tsf_status s = tsf_codec_decode(codec, t, e, src, len, back, n, &used, &e2);
        if (s == TSF_ENOMEM) {
            tsf_free(a, back, bytes ? bytes : 1);
            return tsf_err(err, TSF_ENOMEM, "writer: out of memory (checking a %s page)", tsf_encoding_name(e));
        }
        bad = s ? 0 : first_diff(t, vals, back, 0, n);
        if (bad < n) got = s ? 0 : bits_at(t, back, bad);
        tsf_free(a, back, bytes ? bytes : 1);
        if (s && bad < n) {
            char v[64];
            describe(t, bits_at(t, vals, 0), v, sizeof v);
            snprintf(why, why_cap, "%s cannot store the page starting with value %s: it does not decode (%s)",
                     tsf_encoding_name(e), v, e2.message);
            return TSF_OK;
        }
    }
    if (bad == n) return TSF_OK;
    char v[64], g[64], at[48] = "";
    describe(t, bits_at(t, vals, bad), v, sizeof v);
    describe(t, got, g, sizeof g);
    if (times) snprintf(at, sizeof at, " at time %lld", (long long)times[bad]);
    snprintf(why, why_cap, "%s %s cannot store value %s%s (value %zu of its page): it reads back as %s%s",
             tsf_type_name(t), tsf_encoding_name(e), v, at, bad, g,
             e == TSF_ENC_GORILLA_V1 ? " in the Java reader" : "");
    return TSF_OK;
}
