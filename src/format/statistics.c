/*
 * statistics.c - page/chunk/series statistics (spec §7): uvarint count, i64 startTime, i64 endTime,
 * then a per-type suffix: BOOLEAN first,last,i64 sum; INT32/DATE i32 min,max,first,last + i64 sum;
 * INT64/TIMESTAMP i64 x4 + f64 sum; FLOAT f32 x4 + f64 sum; DOUBLE f64 x5; TEXT binary first,last;
 * STRING binary first,last,min,max; BLOB, VECTOR (time column) and OBJECT: prefix only.
 * Floats travel as raw bits so a parse/write round trip is byte-exact (NaN payloads included).
 */
#include "fmt_io.h"

int tsf_fmt_stats_type_ok(int type)
{
    return type >= TSF_BOOLEAN && type <= TSF_FMT_TYPE_OBJECT && type != 7;
}

void tsf_fmt_stats_init(tsf_fmt_stats *s, tsf_type type)
{
    memset(s, 0, sizeof *s);
    s->type = type;
    s->start_time = INT64_MAX;
    s->end_time = INT64_MIN;
}

static float f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static double f64_of(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
/* Java's floatToIntBits / doubleToLongBits: every NaN is stored as the canonical one. */
static uint32_t bits32(float f)
{
    uint32_t b;
    if (f != f) return 0x7fc00000u;
    memcpy(&b, &f, 4);
    return b;
}
static uint64_t bits64(double d)
{
    uint64_t b;
    if (d != d) return 0x7ff8000000000000ull;
    memcpy(&b, &d, 8);
    return b;
}

tsf_status tsf_fmt_parse_stats(const uint8_t *p, size_t len, uint64_t base, tsf_type type, tsf_fmt_stats *out,
                               size_t *used, tsf_error *err)
{
    fmt_rd r = fmt_rd_make(p, len, base);
    tsf_status st;
    uint32_t u32[4];
    uint64_t u64[5];
    if (!tsf_fmt_stats_type_ok((int)type))
        return tsf_err(err, TSF_ECORRUPT, "statistics at offset %llu: unknown data type %d",
                       (unsigned long long)base, (int)type);
    tsf_fmt_stats_init(out, type);
    if ((st = tsf_fmt_rd_uvarint(&r, "statistics count", &u32[0], err))) return st;
    out->count = u32[0];
    if ((st = tsf_fmt_rd_be64(&r, "statistics startTime", &u64[0], err))) return st;
    if ((st = tsf_fmt_rd_be64(&r, "statistics endTime", &u64[1], err))) return st;
    out->start_time = (int64_t)u64[0];
    out->end_time = (int64_t)u64[1];

    switch ((int)type) {
    case TSF_BOOLEAN:
        if ((st = tsf_fmt_rd_u8(&r, "BOOLEAN statistics first", &out->v.b.first, err))) return st;
        if ((st = tsf_fmt_rd_u8(&r, "BOOLEAN statistics last", &out->v.b.last, err))) return st;
        if ((st = tsf_fmt_rd_be64(&r, "BOOLEAN statistics sum", &u64[0], err))) return st;
        out->v.b.sum = (int64_t)u64[0];
        break;
    case TSF_INT32:
    case TSF_DATE:
    case TSF_FLOAT:
        for (int i = 0; i < 4; i++)
            if ((st = tsf_fmt_rd_be32(&r, "statistics min/max/first/last", &u32[i], err))) return st;
        if ((st = tsf_fmt_rd_be64(&r, "statistics sum", &u64[0], err))) return st;
        if (type == TSF_FLOAT) {
            out->v.f32.min = f32_of(u32[0]);
            out->v.f32.max = f32_of(u32[1]);
            out->v.f32.first = f32_of(u32[2]);
            out->v.f32.last = f32_of(u32[3]);
            out->v.f32.sum = f64_of(u64[0]);
        } else {
            out->v.i32.min = (int32_t)u32[0];
            out->v.i32.max = (int32_t)u32[1];
            out->v.i32.first = (int32_t)u32[2];
            out->v.i32.last = (int32_t)u32[3];
            out->v.i32.sum = (int64_t)u64[0];
        }
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
    case TSF_DOUBLE:
        for (int i = 0; i < 5; i++)
            if ((st = tsf_fmt_rd_be64(&r, "statistics min/max/first/last/sum", &u64[i], err))) return st;
        if (type == TSF_DOUBLE) {
            out->v.f64.min = f64_of(u64[0]);
            out->v.f64.max = f64_of(u64[1]);
            out->v.f64.first = f64_of(u64[2]);
            out->v.f64.last = f64_of(u64[3]);
            out->v.f64.sum = f64_of(u64[4]);
        } else {
            out->v.i64.min = (int64_t)u64[0];
            out->v.i64.max = (int64_t)u64[1];
            out->v.i64.first = (int64_t)u64[2];
            out->v.i64.last = (int64_t)u64[3];
            out->v.i64.sum = f64_of(u64[4]);
        }
        break;
    case TSF_TEXT:
    case TSF_STRING:
        if ((st = tsf_fmt_rd_binary(&r, "statistics first", &out->v.bin.first, err))) return st;
        if ((st = tsf_fmt_rd_binary(&r, "statistics last", &out->v.bin.last, err))) return st;
        if (type == TSF_STRING) {
            if ((st = tsf_fmt_rd_binary(&r, "STRING statistics min", &out->v.bin.min, err))) return st;
            if ((st = tsf_fmt_rd_binary(&r, "STRING statistics max", &out->v.bin.max, err))) return st;
        }
        break;
    default: /* BLOB, VECTOR, OBJECT: the common prefix only */
        break;
    }
    if (used) *used = r.pos;
    return TSF_OK;
}

/* Emits the statistics into w (which may be a sizing writer without a buffer). */
static tsf_status stats_emit(fmt_wr *w, const tsf_fmt_stats *in, tsf_error *err)
{
    tsf_status st;
    if (!tsf_fmt_stats_type_ok((int)in->type))
        return tsf_err(err, TSF_EINVAL, "statistics: unknown data type %d", (int)in->type);
    fmt_wr_uvarint64(w, in->count);
    fmt_wr_be64(w, (uint64_t)in->start_time);
    fmt_wr_be64(w, (uint64_t)in->end_time);
    switch ((int)in->type) {
    case TSF_BOOLEAN:
        fmt_wr_u8(w, in->v.b.first);
        fmt_wr_u8(w, in->v.b.last);
        fmt_wr_be64(w, (uint64_t)in->v.b.sum);
        break;
    case TSF_INT32:
    case TSF_DATE:
        fmt_wr_be32(w, (uint32_t)in->v.i32.min);
        fmt_wr_be32(w, (uint32_t)in->v.i32.max);
        fmt_wr_be32(w, (uint32_t)in->v.i32.first);
        fmt_wr_be32(w, (uint32_t)in->v.i32.last);
        fmt_wr_be64(w, (uint64_t)in->v.i32.sum);
        break;
    case TSF_FLOAT:
        fmt_wr_be32(w, bits32(in->v.f32.min));
        fmt_wr_be32(w, bits32(in->v.f32.max));
        fmt_wr_be32(w, bits32(in->v.f32.first));
        fmt_wr_be32(w, bits32(in->v.f32.last));
        fmt_wr_be64(w, bits64(in->v.f32.sum));
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        fmt_wr_be64(w, (uint64_t)in->v.i64.min);
        fmt_wr_be64(w, (uint64_t)in->v.i64.max);
        fmt_wr_be64(w, (uint64_t)in->v.i64.first);
        fmt_wr_be64(w, (uint64_t)in->v.i64.last);
        fmt_wr_be64(w, bits64(in->v.i64.sum));
        break;
    case TSF_DOUBLE:
        fmt_wr_be64(w, bits64(in->v.f64.min));
        fmt_wr_be64(w, bits64(in->v.f64.max));
        fmt_wr_be64(w, bits64(in->v.f64.first));
        fmt_wr_be64(w, bits64(in->v.f64.last));
        fmt_wr_be64(w, bits64(in->v.f64.sum));
        break;
    case TSF_TEXT:
    case TSF_STRING:
        if ((st = tsf_fmt_wr_binary(w, in->v.bin.first, err))) return st;
        if ((st = tsf_fmt_wr_binary(w, in->v.bin.last, err))) return st;
        if (in->type == TSF_STRING) {
            if ((st = tsf_fmt_wr_binary(w, in->v.bin.min, err))) return st;
            if ((st = tsf_fmt_wr_binary(w, in->v.bin.max, err))) return st;
        }
        break;
    default:
        break;
    }
    return TSF_OK;
}

tsf_status tsf_fmt_write_stats(const tsf_fmt_stats *in, uint8_t *dst, size_t cap, size_t *written,
                               tsf_error *err)
{
    fmt_wr w = fmt_wr_make(dst, cap);
    tsf_status st = stats_emit(&w, in, err);
    if (st) return st;
    return tsf_fmt_wr_finish(&w, "statistics", written, err);
}

size_t tsf_fmt_stats_size(const tsf_fmt_stats *in)
{
    fmt_wr w = fmt_wr_make(NULL, 0);
    return stats_emit(&w, in, NULL) == TSF_OK ? w.pos : 0;
}

/* Used by the page header writer: statistics into an ongoing writer. */
tsf_status tsf_fmt_wr_stats(fmt_wr *w, const tsf_fmt_stats *in, tsf_error *err)
{
    return stats_emit(w, in, err);
}
