/*
 * last_value.c - tsf_last_value: the value of a series at its last time, from its TimeseriesMetadata
 * statistics when they can be trusted. Lossy FLOAT/DOUBLE encodings (the encoding of the series' last
 * chunk decides) and BLOB (statistics hold no value) decode the page holding the last time instead; a
 * decoded BLOB value is kept by the reader until it closes, as the API returns borrowed bytes.
 */
#include <string.h>

#include "aggregate_internal.h"

/* Encoding of the series' last chunk (its trust). */
static tsf_status last_chunk_encoding(tsf_reader *r, const tsf_rd_device *d, const tsf_rd_series *s,
                                      tsf_encoding *enc, tsf_error *err)
{
    size_t pos = 0;
    uint64_t off = 0, o;
    tsf_fmt_stats cs;
    tsf_status st;
    tsf_error e;
    int any = 0;
    while ((st = tsf_mip_next_chunk_meta(&s->tsm, &pos, &o, &cs, &e)) == TSF_OK)
        if (cs.count) off = o, any = 1;
    if (st != TSF_ENOTFOUND) {
        if (err) *err = e;
        return st;
    }
    if (!any)
        return tsf_err(err, TSF_ECORRUPT, "series %s: statistics count points but no chunk has any", s->name);
    tsf_rd_buf b = {0};
    tsf_fmt_chunk_header h;
    uint64_t dp, de, fetched = 0;
    st = tsf_rd_read_chunk_header(r, off, &b, &h, &dp, &de, &fetched, err);
    tsf_rd_buf_free(r->a, &b);
    if (st) return st;
    if (tsf_fmt_chunk_kind(h.marker) != (d->aligned ? TSF_CHUNK_VALUE : TSF_CHUNK_NONALIGNED))
        return tsf_err(err, TSF_ECORRUPT, "chunk at %llu: marker 0x%02x is not the chunk the index lists",
                       (unsigned long long)off, h.marker);
    *enc = h.encoding;
    return TSF_OK;
}

static void set_value(tsf_type type, const tsf_stats *s, tsf_value *v)
{
    switch (type) {
    case TSF_BOOLEAN:
        v->v.b = (int)s->last_i;
        break;
    case TSF_INT32:
    case TSF_DATE:
        v->v.i32 = (int32_t)s->last_i;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        v->v.i64 = s->last_i;
        break;
    case TSF_FLOAT:
        v->v.f = (float)s->last;
        break;
    case TSF_DOUBLE:
        v->v.d = s->last;
        break;
    default:
        v->v.bytes = s->last_b;
    }
}

/* Decoded BLOB last values, one per series of the reader, kept until it closes (the API returns borrowed
 * bytes). Filled under r->lock; a value once set never changes. */
struct tsf_rd_lastv {
    uint8_t *p;
    size_t len;
    int set;
};

void tsf_rd_lastv_free(tsf_reader *r)
{
    if (!r->lastv) return;
    for (size_t i = 0; i < r->nseries; i++)
        if (r->lastv[i].set) tsf_free(r->a, r->lastv[i].p, r->lastv[i].len ? r->lastv[i].len : 1);
    tsf_free(r->a, r->lastv, r->nseries * sizeof *r->lastv);
    r->lastv = NULL;
}

static tsf_status last_blob(tsf_reader *r, size_t device, size_t series, int64_t t, tsf_value *value,
                            tsf_error *err)
{
    size_t gi = r->devices[device].series0 + series;
    int have = 0;
    pthread_mutex_lock(&r->lock);
    if (r->lastv && r->lastv[gi].set) {
        value->v.bytes.data = r->lastv[gi].p;
        value->v.bytes.len = r->lastv[gi].len;
        have = 1;
    }
    pthread_mutex_unlock(&r->lock);
    if (have) return TSF_OK;
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.time_min = o.time_max = t;
    o.force_decode = 1;
    tsf_agg_result *res;
    tsf_status st = tsf_aggregate(r, device, series, &o, &res, err);
    if (st) return st;
    if (res->n != 1) {
        tsf_agg_result_free(res);
        return tsf_err(err, TSF_ECORRUPT,
                       "BLOB series %zu of device %zu: statistics end at time %lld, no page holds it", series,
                       device, (long long)t);
    }
    tsf_bytes b = res->out[0].stats.last_b;
    pthread_mutex_lock(&r->lock);
    if (!r->lastv) r->lastv = tsf_calloc(r->a, r->nseries, sizeof *r->lastv);
    if (!r->lastv) {
        st = tsf_err(err, TSF_ENOMEM, "tsf_last_value: out of memory");
    } else if (!r->lastv[gi].set) {
        uint8_t *p = tsf_alloc(r->a, b.len ? b.len : 1);
        if (!p) {
            st = tsf_err(err, TSF_ENOMEM, "tsf_last_value: out of memory");
        } else {
            if (b.len) memcpy(p, b.data, b.len);
            r->lastv[gi].p = p;
            r->lastv[gi].len = b.len;
            r->lastv[gi].set = 1;
        }
    }
    if (!st) {
        value->v.bytes.data = r->lastv[gi].p;
        value->v.bytes.len = r->lastv[gi].len;
    }
    pthread_mutex_unlock(&r->lock);
    tsf_agg_result_free(res);
    return st;
}

tsf_status tsf_last_value(tsf_reader *r, size_t device, size_t series, int64_t *time, tsf_value *value,
                          int *found, tsf_error *err)
{
    if (!r || !time || !value || !found)
        return tsf_err(err, TSF_EINVAL, "tsf_last_value: reader, time, value and found are required");
    *found = 0;
    memset(value, 0, sizeof *value);
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    if (device >= r->ndevices || series >= r->devices[device].nseries)
        return tsf_err(err, TSF_EINVAL, "tsf_last_value: series %zu of device %zu does not exist", series,
                       device);
    const tsf_rd_device *d = &r->devices[device];
    const tsf_rd_series *s = &r->series[d->series0 + series];
    const tsf_fmt_stats *ss = &s->tsm.stats;
    tsf_type type = s->tsm.data_type;
    if (!ss->count) return TSF_OK;
    if (type == TSF_BLOB) { /* statistics hold no BLOB value: decode the page holding the end time */
        if ((st = last_blob(r, device, series, ss->end_time, value, err))) return st;
        *time = ss->end_time;
        *found = 1;
        return TSF_OK;
    }
    int trusted = 1;
    if (type == TSF_FLOAT || type == TSF_DOUBLE) {
        tsf_encoding enc = TSF_ENC_PLAIN;
        if ((st = last_chunk_encoding(r, d, s, &enc, err))) return st;
        trusted = !tsf_rd_lossy(type, enc);
    }
    tsf_stats out;
    if (trusted) {
        acc x;
        tsf_rd_acc_from_stats(&x, ss);
        tsf_rd_acc_fill_stats(type, &x, &out);
        *time = ss->end_time;
        set_value(type, &out, value);
        *found = 1;
        return TSF_OK;
    }
    /* lossy FLOAT/DOUBLE: decode the page(s) holding the last time */
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.time_min = o.time_max = ss->end_time;
    o.force_decode = 1;
    tsf_agg_result *res;
    if ((st = tsf_aggregate(r, device, series, &o, &res, err))) return st;
    if (res->n) {
        *time = res->out[0].stats.end_time;
        set_value(type, &res->out[0].stats, value);
        *found = 1;
    }
    tsf_agg_result_free(res);
    return TSF_OK;
}
