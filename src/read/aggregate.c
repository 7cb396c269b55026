/*
 * aggregate.c - tsf_aggregate: count, sum, min, max, first, last of one series over a time range and
 * optional windows (tsfile-container-format.md §7), and the result it returns.
 *
 * The series is walked by aggregate_scan.c, which answers whole chunks and pages from their statistics
 * and decodes the rest; aggregate_acc.c accumulates the units into windows as Java's statistics would.
 * BLOB statistics give count and times only: the first and last values of a window answered from them
 * are decoded afterwards, from the page holding that time alone.
 */
#include <string.h>

#include "aggregate_internal.h"
#include "check.h"

void tsf_agg_options_init(tsf_agg_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->time_min = INT64_MIN;
    o->time_max = INT64_MAX;
    o->checked = -1;
}

void tsf_agg_result_free(tsf_agg_result *res)
{
    if (!res) return;
    for (size_t i = 0; i < res->n; i++) tsf_rd_acc_free(res->a, &res->w[i].a);
    tsf_free(res->a, res->w, res->cap * sizeof *res->w);
    tsf_free(res->a, res->out, res->nout * sizeof *res->out);
    tsf_free(res->a, res, sizeof *res);
}

size_t tsf_agg_result_count(const tsf_agg_result *res)
{
    return res ? res->n : 0;
}

const tsf_agg_window *tsf_agg_result_window(const tsf_agg_result *res, size_t i)
{
    return res && i < res->n ? &res->out[i] : NULL;
}

void tsf_agg_result_info(const tsf_agg_result *res, tsf_agg_info *out)
{
    if (!out) return;
    if (res)
        *out = res->info;
    else
        memset(out, 0, sizeof *out);
}

static void ctx_free(agg_ctx *c)
{
    tsf_rd_buf *bufs[] = {&c->hdr,    &c->thdr,  &c->body, &c->plain, &c->tbody,
                      &c->tplain, &c->times, &c->vals, &c->ptimes};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tsf_rd_buf_free(c->a, bufs[i]);
    tsf_rd_acc_free(c->a, &c->cp);
    tsf_compressor_close(c->comp);
}

/* BLOB statistics give count and times only: the value at time t of a window answered from them is
 * decoded afterwards, from the page(s) holding t alone. */
static tsf_status blob_at(tsf_reader *r, size_t device, size_t series, int64_t t, int checked, acc *x, int k,
                          tsf_agg_info *info, tsf_error *err)
{
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    o.checked = checked;
    o.time_min = o.time_max = t;
    o.force_decode = 1;
    tsf_agg_result *one;
    tsf_status st = tsf_aggregate(r, device, series, &o, &one, err);
    if (st) return st;
    info->pages_decoded += one->info.pages_decoded;
    if (one->n != 1)
        st = tsf_err(err, TSF_ECORRUPT,
                     "BLOB series %zu of device %zu: statistics list a point at time %lld, no page "
                     "holds it",
                     series, device, (long long)t);
    else
        st = tsf_rd_acc_own_bytes(r->a, x, k, k == B_FIRST ? one->out[0].stats.first_b : one->out[0].stats.last_b, err);
    if (k == B_FIRST)
        x->unk_first = 0;
    else
        x->unk_last = 0;
    tsf_agg_result_free(one);
    return st;
}

tsf_status tsf_aggregate(tsf_reader *r, size_t device, size_t series, const tsf_agg_options *opts,
                         tsf_agg_result **out, tsf_error *err)
{
    if (!r || !out) return tsf_err(err, TSF_EINVAL, "tsf_aggregate: reader and out are required");
    *out = NULL;
    tsf_agg_options o;
    tsf_agg_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_agg_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
    }
    if (o.window < 0) return tsf_err(err, TSF_EINVAL, "tsf_aggregate: window %lld < 0", (long long)o.window);
    tsf_status st = tsf_rd_ensure_index(r, err);
    if (st) return st;
    if (device >= r->ndevices || series >= r->devices[device].nseries)
        return tsf_err(err, TSF_EINVAL, "tsf_aggregate: series %zu of device %zu does not exist", series,
                       device);
    const tsf_rd_device *d = &r->devices[device];
    const tsf_rd_series *s = &r->series[d->series0 + series];
    agg_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.a = r->a;
    c.type = s->tsm.data_type;
    c.esz = tsf_rd_cell_size(c.type);
    c.tmin = o.time_min;
    c.tmax = o.time_max;
    c.w = o.window;
    c.origin = o.window_origin;
    c.force = o.force_decode;
    c.lossy_type = c.type == TSF_FLOAT || c.type == TSF_DOUBLE;
    if ((c.checked = tsf_rd_checked_of(r, o.checked)) < 0)
        return tsf_err(err, TSF_EINVAL, "tsf_aggregate: checked %d: -1, 0 or 1", o.checked);
    c.level = tsf_rd_check_level(tsf_codec_get_path(r->codec));
    if (!tsf_fmt_stats_type_ok(c.type) || c.type == TSF_VECTOR)
        return tsf_err(err, TSF_ENOTSUP, "tsf_aggregate: series %s has type %d", s->name, (int)c.type);
    tsf_agg_result *res = tsf_calloc(r->a, 1, sizeof *res);
    if (!res) return tsf_err(err, TSF_ENOMEM, "aggregate: out of memory");
    res->a = r->a;
    c.res = res;
    if ((st = tsf_compressor_open(&c.comp, r->a, err))) goto fail;
    if (c.checked && tsf_rd_check_range(&s->tsm.stats, c.why, sizeof c.why)) {
        st = tsf_err(err, TSF_ECORRUPT, "TimeseriesMetadata of %s.%s: %s", d->name, s->name, c.why);
        goto fail;
    }
    if (o.time_min <= o.time_max && !out_of_range(&c, s->tsm.stats.start_time, s->tsm.stats.end_time)) {
        st = d->aligned ? tsf_rd_agg_aligned(&c, d, s, err) : tsf_rd_agg_nonaligned(&c, s, err);
        if (st) goto fail;
    }
    if ((st = tsf_rd_agg_chunk_flush(&c, err))) goto fail;
    for (size_t i = 0; i < res->n && !st; i++) {
        acc *x = &res->w[i].a;
        if (x->unk_first) st = blob_at(r, device, series, x->t0, c.checked, x, B_FIRST, &res->info, err);
        if (!st && x->unk_last) st = blob_at(r, device, series, x->t1, c.checked, x, B_LAST, &res->info, err);
    }
    if (st) goto fail;
    res->out = tsf_calloc(r->a, res->n ? res->n : 1, sizeof *res->out);
    res->nout = res->n ? res->n : 1;
    if (!res->out) {
        res->nout = 0;
        st = tsf_err(err, TSF_ENOMEM, "aggregate: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < res->n; i++) {
        res->out[i].start = res->w[i].start;
        res->out[i].end = res->w[i].last == INT64_MAX ? INT64_MAX : res->w[i].last + 1;
        tsf_rd_acc_fill_stats(c.type, &res->w[i].a, &res->out[i].stats);
    }
    ctx_free(&c);
    *out = res;
    return TSF_OK;
fail:
    ctx_free(&c);
    tsf_agg_result_free(res);
    return st;
}
