/*
 * dataset_agg.c - grouped aggregation over a dataset (tsf_dataset_aggregate), built on tsf_dataset_fold.
 *
 * Key: (group, window number, column id). Column ids number the distinct column names the query can return
 * (its column list, else every series and table column name of the dataset), sorted, so a batch column maps
 * to its id by one binary search per batch. An accumulator is an array of slots, one per key, each holding
 * all of the key's aggregates (count, sum, min, max, first, last), found through an open-addressing table;
 * consecutive rows of one column mostly stay in one window, so the last slot is tried first. Each file folds
 * into its own accumulator and the accumulators are merged in file order (tsf_dataset_fold), which fixes
 * every floating-point addition: results do not depend on threads or files_at_once. With group_tags the
 * group of a device is fixed before the fold: devices are sorted by their tuple of tag values and equal
 * tuples share one group number, so the fold looks the group up per batch.
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/codec.h"
#include "dataset_internal.h"

typedef struct agg_slot {
    uint64_t group;
    int64_t win;
    uint64_t col;
    uint64_t count;
    double sum, min, max, first, last;
    int64_t first_t, last_t;
} agg_slot;

typedef struct agg_acc {
    agg_slot *slots;
    size_t n, cap;
    size_t *tab; /* slot index + 1, 0 = empty */
    size_t tcap;
    size_t last; /* slot of the previous row + 1 */
    /* timing of a file's accumulator (tsf_dataset_agg_stats): the thread that made it, when, the end of its
     * last fold call, and the time inside its fold calls */
    pthread_t thr;
    uint64_t t_init, t_end, fold_ns, values;
    int folded; /* a fold call ran on it */
    struct agg_run *runs; /* the current batch's runs (acc_fold) */
    size_t runs_cap;
} agg_acc;

/* Rows [a, b) of a batch: strictly ascending times in window win. */
typedef struct agg_run {
    size_t a, b;
    int64_t win;
} agg_run;

#define AGG_WORKERS_MAX 64

typedef struct agg_ctx {
    const tsf_allocator *a;
    const char **names; /* column names, sorted */
    size_t nnames, names_cap;
    int oom; /* a callback ran out of memory (set atomically: callbacks run on several workers) */
    int by_device;
    int64_t window, origin;
    /* per folding thread, filled as file accumulators merge (one merge at a time) */
    tsf_dataset_agg_stats stats;
    pthread_t thr[AGG_WORKERS_MAX];
    const size_t *dev_group; /* group_tags: group of each dataset device (NULL otherwise) */
    tsf_codec_path path;     /* the INT64 kernels' (the dataset's reader option, resolved) */
} agg_ctx;

struct tsf_dataset_agg_result {
    const tsf_allocator *a;
    tsf_dataset_agg_row *rows;
    size_t n;
    const char **names;
    size_t nnames, names_cap;
    tsf_dataset_agg_stats stats;
    tsf_bytes *tags; /* group_tags: ngroups x ntags values */
    size_t ngroups, ntags, tags_cap;
};

void tsf_dataset_agg_options_init(tsf_dataset_agg_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->by_device = 1;
}

static size_t key_hash(uint64_t g, int64_t w, uint64_t c)
{
    uint64_t h =
        (g * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)w * 0xC2B2AE3D27D4EB4Full) ^ (c * 0x165667B19E3779F9ull);
    return (size_t)(h ^ (h >> 29));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *acc_init(void *ctx)
{
    agg_ctx *c = ctx;
    agg_acc *acc = tsf_calloc(c->a, 1, sizeof(agg_acc));
    if (acc) {
        acc->thr = pthread_self();
        acc->t_init = acc->t_end = now_ns();
    }
    return acc;
}

static void acc_free(void *ctx, void *p)
{
    agg_ctx *c = ctx;
    agg_acc *acc = p;
    if (!acc) return;
    tsf_free(c->a, acc->slots, acc->cap * sizeof *acc->slots);
    tsf_free(c->a, acc->tab, acc->tcap * sizeof *acc->tab);
    tsf_free(c->a, acc->runs, acc->runs_cap * sizeof *acc->runs);
    tsf_free(c->a, acc, sizeof *acc);
}

/* The slot of a key, added (zeroed aggregates) when new; NULL on out of memory. */
static agg_slot *slot_of(const agg_ctx *c, agg_acc *acc, uint64_t g, int64_t w, uint64_t col)
{
    if (acc->last) {
        agg_slot *s = &acc->slots[acc->last - 1];
        if (s->group == g && s->win == w && s->col == col) return s;
    }
    if (2 * (acc->n + 1) > acc->tcap) {
        size_t nc = acc->tcap ? 2 * acc->tcap : 64;
        size_t *t = tsf_calloc(c->a, nc, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < acc->n; i++) {
            const agg_slot *s = &acc->slots[i];
            size_t h = key_hash(s->group, s->win, s->col) & (nc - 1);
            while (t[h]) h = (h + 1) & (nc - 1);
            t[h] = i + 1;
        }
        tsf_free(c->a, acc->tab, acc->tcap * sizeof *acc->tab);
        acc->tab = t;
        acc->tcap = nc;
    }
    size_t h = key_hash(g, w, col) & (acc->tcap - 1);
    for (; acc->tab[h]; h = (h + 1) & (acc->tcap - 1)) {
        agg_slot *s = &acc->slots[acc->tab[h] - 1];
        if (s->group == g && s->win == w && s->col == col) {
            acc->last = acc->tab[h];
            return s;
        }
    }
    if (acc->n == acc->cap) {
        size_t nc = acc->cap ? 2 * acc->cap : 64;
        agg_slot *g2 = tsf_realloc(c->a, acc->slots, acc->cap * sizeof *g2, nc * sizeof *g2);
        if (!g2) return NULL;
        acc->slots = g2;
        acc->cap = nc;
    }
    agg_slot *s = &acc->slots[acc->n];
    memset(s, 0, sizeof *s);
    s->group = g;
    s->win = w;
    s->col = col;
    acc->tab[h] = ++acc->n;
    acc->last = acc->n;
    return s;
}

/* Window number of t: floor((t - origin) / window), without overflow. */
static int64_t window_of(const agg_ctx *c, int64_t t)
{
    if (!c->window) return 0;
    uint64_t w = (uint64_t)c->window;
    if (t >= c->origin) return (int64_t)(((uint64_t)t - (uint64_t)c->origin) / w);
    return -(int64_t)(((uint64_t)c->origin - (uint64_t)t + w - 1) / w);
}

static int numeric(tsf_type t)
{
    return t == TSF_BOOLEAN || t == TSF_INT32 || t == TSF_DATE || t == TSF_INT64 || t == TSF_TIMESTAMP ||
           t == TSF_FLOAT || t == TSF_DOUBLE;
}

static double value_at(tsf_type t, const void *v, size_t r)
{
    switch (t) {
    case TSF_BOOLEAN:
        return ((const uint8_t *)v)[r];
    case TSF_INT32:
    case TSF_DATE:
        return ((const int32_t *)v)[r];
    case TSF_INT64:
    case TSF_TIMESTAMP:
        return (double)((const int64_t *)v)[r];
    case TSF_FLOAT:
        return ((const float *)v)[r];
    case TSF_DOUBLE:
        return ((const double *)v)[r];
    default:
        return 0;
    }
}

static int name_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Adds one value (or, with has = 0, one non-numeric value: count only) at time t. */
static void slot_add(agg_slot *s, int has, double v, int64_t t)
{
    if (!s->count) {
        s->min = s->max = s->first = s->last = has ? v : 0;
        s->first_t = s->last_t = t;
    } else {
        if (has && v < s->min) s->min = v;
        if (has && v > s->max) s->max = v;
        if (t < s->first_t) s->first_t = t, s->first = has ? v : 0;
        if (t >= s->last_t) s->last_t = t, s->last = has ? v : 0;
    }
    s->count++;
    if (has) s->sum += v;
}

/* Rows [a, b) of a run: strictly ascending times in one window, every value present. The first and last row
 * carry the run's first and last time, so the slot's first / last are updated once; sum, min and max go
 * value by value in row order (the same additions and comparisons as slot_add, without a branch). */
#define RUN_KERNEL(NAME, T)                                                                                    \
    static void NAME(agg_slot *s, const T *v, const int64_t *t, size_t a, size_t b)                           \
    {                                                                                                          \
        if (!s->count) {                                                                                       \
            slot_add(s, 1, (double)v[a], t[a]);                                                                \
            a++;                                                                                               \
        }                                                                                                      \
        if (a == b) return;                                                                                    \
        double sum = s->sum, mn = s->min, mx = s->max;                                                         \
        for (size_t i = a; i < b; i++) {                                                                       \
            double x = (double)v[i];                                                                           \
            sum += x;                                                                                          \
            mn = x < mn ? x : mn;                                                                              \
            mx = x > mx ? x : mx;                                                                              \
        }                                                                                                      \
        s->sum = sum, s->min = mn, s->max = mx;                                                                \
        if (t[a] < s->first_t) s->first_t = t[a], s->first = (double)v[a];                                     \
        if (t[b - 1] >= s->last_t) s->last_t = t[b - 1], s->last = (double)v[b - 1];                           \
        s->count += b - a;                                                                                     \
    }
RUN_KERNEL(run_f64, double)
RUN_KERNEL(run_i64_seq, int64_t)
RUN_KERNEL(run_i32, int32_t)
RUN_KERNEL(run_f32, float)
RUN_KERNEL(run_u8, uint8_t)
#undef RUN_KERNEL

/* INT64 rows [a, b) of a run. When |sum so far| + (b - a) * max |v| <= 2^52 (a bound), every partial sum of the
 * row-by-row rule is an integer a double holds exactly, so it equals the exact integer sum, which is then
 * added in integers (no floating-point latency chain); min / max in integers convert to the same doubles,
 * since the conversion is monotonic. Otherwise the row-by-row kernel. The integer min, max and sum (mod 2^64)
 * come from the codec's summary kernels of path p (SIMD or their portable twin). */
static void run_i64(agg_slot *s, tsf_codec_path p, const int64_t *v, const int64_t *t, size_t a, size_t b)
{
    if (!s->count) {
        slot_add(s, 1, (double)v[a], t[a]);
        a++;
    }
    if (a == b) return;
    tsf_dec_summary sm;
    tsf_i64_summary(p, v + a, b - a, &sm);
    int64_t mn = sm.min, mx = sm.max;
    /* every |v[i]| <= max(|mn|, |mx|) (2^63 for INT64_MIN) */
    uint64_t amn = mn < 0 ? 0 - (uint64_t)mn : (uint64_t)mn, amx = mx < 0 ? 0 - (uint64_t)mx : (uint64_t)mx;
    uint64_t big = amn > amx ? amn : amx;
    const double lim = 9007199254740992.0; /* 2^53 */
    if (fabs(s->sum) + (double)(b - a) * (double)big > lim / 2) { /* margin for the rounding of the bound */
        run_i64_seq(s, v, t, a, b);
        return;
    }
    s->sum += (double)(int64_t)sm.sum;
    if ((double)mn < s->min) s->min = (double)mn;
    if ((double)mx > s->max) s->max = (double)mx;
    if (t[a] < s->first_t) s->first_t = t[a], s->first = (double)v[a];
    if (t[b - 1] >= s->last_t) s->last_t = t[b - 1], s->last = (double)v[b - 1];
    s->count += b - a;
}

/* Rows [a, b) of a run for DOUBLE columns without nulls, AGG_LANES columns at once (s[j] over values v[j]): each
 * column's sum, min and max go row by row in row order exactly as run_f64 (row a as slot_add, then the rest),
 * so every result is the same to the bit; the columns' addition chains are independent, so one core overlaps
 * their latencies instead of waiting on one chain. */
#define AGG_LANES 4
static void run_f64_lanes(agg_slot *const *s, const double *const *v, const int64_t *t, size_t a, size_t b)
{
    for (int j = 0; j < AGG_LANES; j++) slot_add(s[j], 1, v[j][a], t[a]);
    if (++a == b) return;
    double sum[AGG_LANES], mn[AGG_LANES], mx[AGG_LANES];
    for (int j = 0; j < AGG_LANES; j++) sum[j] = s[j]->sum, mn[j] = s[j]->min, mx[j] = s[j]->max;
    for (size_t i = a; i < b; i++) {
        for (int j = 0; j < AGG_LANES; j++) {
            double x = v[j][i];
            sum[j] += x;
            mn[j] = x < mn[j] ? x : mn[j];
            mx[j] = x > mx[j] ? x : mx[j];
        }
    }
    for (int j = 0; j < AGG_LANES; j++) {
        agg_slot *o = s[j];
        o->sum = sum[j], o->min = mn[j], o->max = mx[j];
        if (t[b - 1] >= o->last_t) o->last_t = t[b - 1], o->last = v[j][b - 1];
        o->count += b - a;
    }
}

/* Rows [a, b) of a run, with a validity bitmap or a non-numeric type: row by row. */
static void run_rows(agg_slot *s, const tsf_column_batch *cb, const int64_t *t, size_t a, size_t b, int num)
{
    for (size_t r = a; r < b; r++) {
        if (cb->validity && !((cb->validity[r / 8] >> (r % 8)) & 1)) continue;
        slot_add(s, num, num ? value_at(cb->type, cb->values, r) : 0, t[r]);
    }
}

/* 1 when rows [a, b) are all valid. */
static int all_valid(const uint8_t *v, size_t a, size_t b)
{
    if (!v) return 1;
    for (; a < b && (a & 7); a++)
        if (!((v[a / 8] >> (a % 8)) & 1)) return 0;
    for (; a + 8 <= b; a += 8)
        if (v[a / 8] != 0xFF) return 0;
    for (; a < b; a++)
        if (!((v[a / 8] >> (a % 8)) & 1)) return 0;
    return 1;
}

static void run_add(agg_slot *s, tsf_codec_path p, const tsf_column_batch *cb, const int64_t *t, size_t a, size_t b,
                    int num)
{
    if (!num || !all_valid(cb->validity, a, b)) {
        run_rows(s, cb, t, a, b, num);
        return;
    }
    switch (cb->type) {
    case TSF_DOUBLE:
        run_f64(s, cb->values, t, a, b);
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        run_i64(s, p, cb->values, t, a, b);
        break;
    case TSF_INT32:
    case TSF_DATE:
        run_i32(s, cb->values, t, a, b);
        break;
    case TSF_FLOAT:
        run_f32(s, cb->values, t, a, b);
        break;
    default:
        run_u8(s, cb->values, t, a, b);
        break;
    }
}

/* End of the run starting at row a: rows with strictly ascending times inside the window [ws, ws + window)
 * of row a (window 0: one window). Rows are split where times do not ascend, so a run's first and last rows
 * hold its first and last times. */
static size_t run_end(const agg_ctx *c, const int64_t *t, size_t a, size_t n, int64_t ws)
{
    size_t r = a + 1;
    if (c->window) {
        uint64_t w = (uint64_t)c->window;
        while (r < n && t[r] > t[r - 1] && (uint64_t)t[r] - (uint64_t)ws < w) r++;
    } else {
        while (r < n && t[r] > t[r - 1]) r++;
    }
    return r;
}

/* Splits the batch's rows into runs (run_end) in acc->runs; their number, or (size_t)-1 on out of memory. */
static size_t batch_runs(const agg_ctx *c, agg_acc *acc, const int64_t *t, size_t n)
{
    size_t k = 0;
    for (size_t r = 0, e; r < n; r = e, k++) {
        int64_t w = window_of(c, t[r]);
        e = run_end(c, t, r, n, (int64_t)((uint64_t)c->origin + (uint64_t)w * (uint64_t)c->window));
        if (k == acc->runs_cap) {
            size_t nc = acc->runs_cap ? 2 * acc->runs_cap : 16;
            agg_run *g = tsf_realloc(c->a, acc->runs, acc->runs_cap * sizeof *g, nc * sizeof *g);
            if (!g) return (size_t)-1;
            acc->runs = g;
            acc->runs_cap = nc;
        }
        acc->runs[k] = (agg_run){r, e, w};
    }
    return k;
}

/* The runs of AGG_LANES DOUBLE columns (ids col[], values v[]) of one batch; non-zero on out of memory. */
static int fold_lanes(const agg_ctx *c, agg_acc *acc, uint64_t g, const int64_t *t, size_t nruns,
                      const uint64_t *col, const double *const *v)
{
    for (size_t i = 0; i < nruns; i++) {
        const agg_run *ru = &acc->runs[i];
        size_t at[AGG_LANES];
        for (int j = 0; j < AGG_LANES; j++) { /* indexes: a new slot may move the array */
            agg_slot *s = slot_of(c, acc, g, ru->win, col[j]);
            if (!s) return -1;
            at[j] = (size_t)(s - acc->slots);
        }
        agg_slot *s[AGG_LANES];
        for (int j = 0; j < AGG_LANES; j++) s[j] = &acc->slots[at[j]];
        run_f64_lanes(s, v, t, ru->a, ru->b);
    }
    return 0;
}

static int acc_fold(void *ctx, void *p, const tsf_dataset_batch *b)
{
    agg_ctx *c = ctx;
    agg_acc *acc = p;
    uint64_t t0 = now_ns();
    uint64_t g = c->dev_group ? (uint64_t)c->dev_group[b->device] : c->by_device ? (uint64_t)b->device : 0;
    const int64_t *t = b->rows.times;
    size_t n = b->rows.nrows, nruns = batch_runs(c, acc, t, n);
    if (nruns == (size_t)-1) goto oom;
    /* DOUBLE columns without nulls go AGG_LANES at a time through run_f64_lanes; the others one by one */
    uint64_t lane_col[AGG_LANES];
    const double *lane_v[AGG_LANES];
    int lanes = 0;
    for (size_t k = 0; k < b->rows.ncolumns; k++) {
        const tsf_column_batch *cb = &b->rows.columns[k];
        if (cb->type == TSF_VECTOR) continue; /* a column the device lacks: all null */
        const char **at = bsearch(&cb->name, c->names, c->nnames, sizeof *c->names, name_cmp);
        if (!at) continue;
        uint64_t col = (uint64_t)(at - c->names);
        if (cb->type == TSF_DOUBLE && all_valid(cb->validity, 0, n)) {
            lane_col[lanes] = col;
            lane_v[lanes++] = cb->values;
            if (lanes == AGG_LANES && fold_lanes(c, acc, g, t, nruns, lane_col, lane_v)) goto oom;
            lanes %= AGG_LANES;
            continue;
        }
        int num = numeric(cb->type);
        for (size_t i = 0; i < nruns; i++) {
            const agg_run *ru = &acc->runs[i];
            agg_slot *s = slot_of(c, acc, g, ru->win, col);
            if (!s) goto oom;
            run_add(s, c->path, cb, t, ru->a, ru->b, num);
        }
    }
    for (int j = 0; j < lanes; j++) { /* the last columns alone */
        for (size_t i = 0; i < nruns; i++) {
            const agg_run *ru = &acc->runs[i];
            agg_slot *s = slot_of(c, acc, g, ru->win, lane_col[j]);
            if (!s) goto oom;
            run_f64(s, lane_v[j], t, ru->a, ru->b);
        }
    }
    acc->values += n * b->rows.ncolumns;
    acc->folded = 1;
    acc->t_end = now_ns();
    acc->fold_ns += acc->t_end - t0;
    return 0;
oom:
    __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
    return -1;
}

/* A file's accumulator's timing joins its thread's (merges run one at a time). */
static void stats_merge(agg_ctx *c, const agg_acc *f)
{
    if (!f->folded) return; /* the result's accumulator, or a file without batches */
    tsf_dataset_agg_stats *st = &c->stats;
    st->fold_ns += f->fold_ns;
    st->values += f->values;
    unsigned i = 0;
    while (i < st->workers && !pthread_equal(c->thr[i], f->thr)) i++;
    if (i == st->workers) {
        if (i == AGG_WORKERS_MAX) return;
        c->thr[st->workers++] = f->thr;
    }
    st->worker_busy_ns[i] += f->t_end - f->t_init;
    st->worker_fold_ns[i] += f->fold_ns;
}

static int acc_merge(void *ctx, void *into, void *from)
{
    agg_ctx *c = ctx;
    agg_acc *a = into, *f = from;
    stats_merge(c, f);
    for (size_t i = 0; i < f->n; i++) {
        const agg_slot *src = &f->slots[i];
        agg_slot *s = slot_of(c, a, src->group, src->win, src->col);
        if (!s) {
            __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
            return -1;
        }
        if (!s->count) {
            *s = *src;
            continue;
        }
        if (!src->count) continue; /* a key without values in that file (a column null there): nothing */
        s->count += src->count;
        s->sum += src->sum;
        if (src->min < s->min) s->min = src->min;
        if (src->max > s->max) s->max = src->max;
        if (src->first_t < s->first_t) s->first_t = src->first_t, s->first = src->first;
        if (src->last_t >= s->last_t) s->last_t = src->last_t, s->last = src->last;
    }
    return 0;
}

/* Distinct column names the query may return, sorted (borrowed from the dataset or the options). */
static tsf_status column_names(tsf_dataset *ds, const tsf_dataset_query_options *q, agg_ctx *c,
                               tsf_error *err)
{
    size_t n = 0;
    if (q && q->columns)
        n = q->ncolumns;
    else {
        for (size_t d = 0; d < ds->ndevs; d++) n += ds->devs[d].nser;
        for (size_t t = 0; t < ds->ntables; t++) n += ds->tables[t].ncols;
    }
    c->names = tsf_calloc(ds->a, n + 1, sizeof *c->names);
    c->names_cap = n + 1;
    if (!c->names) return tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    size_t k = 0;
    if (q && q->columns) {
        for (size_t i = 0; i < n; i++)
            if (q->columns[i]) c->names[k++] = q->columns[i];
    } else {
        for (size_t d = 0; d < ds->ndevs; d++)
            for (size_t j = 0; j < ds->devs[d].nser; j++) c->names[k++] = ds->devs[d].sers[j].name;
        for (size_t t = 0; t < ds->ntables; t++)
            for (size_t j = 0; j < ds->tables[t].ncols; j++) c->names[k++] = ds->tables[t].cols[j].name;
    }
    if (k) qsort(c->names, k, sizeof *c->names, name_cmp);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || strcmp(c->names[u - 1], c->names[i])) c->names[u++] = c->names[i];
    c->nnames = u;
    return TSF_OK;
}

/* ---- groups by TAG values ---- */

/* The value of TAG column `name` in device d (data NULL: null, or no such TAG column in its table). */
static tsf_bytes tag_value(const tsf_dataset *ds, size_t d, const char *name)
{
    tsf_bytes none = {NULL, 0};
    const tsf_ds_device *dev = &ds->devs[d];
    if (dev->table >= ds->ntables) return none;
    const tsf_ds_table *t = &ds->tables[dev->table];
    size_t seg = 1;
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->cols[i].category != TSF_COLUMN_TAG) continue;
        if (!strcmp(t->cols[i].name, name)) return seg < dev->nsegs ? dev->segs[seg] : none;
        seg++;
    }
    return none;
}

static int bytes_cmp(tsf_bytes x, tsf_bytes y)
{
    if (!x.data || !y.data) return !!x.data - !!y.data; /* null first */
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.data, y.data, n) : 0;
    return c ? c : (x.len > y.len) - (x.len < y.len);
}

typedef struct tuple_sort {
    const tsf_bytes *v; /* ntags values */
    size_t ntags, dev;
} tuple_sort;

static int tuple_cmp(const void *x, const void *y)
{
    const tuple_sort *a = x, *b = y;
    for (size_t k = 0; k < a->ntags; k++) {
        int c = bytes_cmp(a->v[k], b->v[k]);
        if (c) return c;
    }
    return (a->dev > b->dev) - (a->dev < b->dev);
}

/* dev_group[d] for every device and the groups' tag tuples (r->tags, ascending). */
static tsf_status tag_groups(tsf_dataset *ds, const tsf_dataset_agg_options *o, size_t *dev_group,
                             tsf_dataset_agg_result *r, tsf_error *err)
{
    for (size_t k = 0; k < o->ngroup_tags; k++) {
        const char *name = o->group_tags[k];
        int found = 0;
        for (size_t t = 0; name && t < ds->ntables && !found; t++)
            for (size_t i = 0; i < ds->tables[t].ncols && !found; i++)
                found = ds->tables[t].cols[i].category == TSF_COLUMN_TAG && !strcmp(ds->tables[t].cols[i].name, name);
        if (!found)
            return tsf_err(err, TSF_ENOTFOUND, "dataset aggregate: group_tags[%zu] (%s) is no TAG column", k,
                           name ? name : "NULL");
    }
    size_t n = ds->ndevs, nt = o->ngroup_tags;
    tsf_bytes *vals = tsf_calloc(ds->a, n * nt + 1, sizeof *vals);
    tuple_sort *ts = tsf_calloc(ds->a, n + 1, sizeof *ts);
    r->tags = tsf_calloc(ds->a, n * nt + 1, sizeof *r->tags);
    r->tags_cap = n * nt + 1;
    tsf_status st = vals && ts && r->tags ? TSF_OK : tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    for (size_t d = 0; !st && d < n; d++) {
        for (size_t k = 0; k < nt; k++) vals[d * nt + k] = tag_value(ds, d, o->group_tags[k]);
        ts[d] = (tuple_sort){&vals[d * nt], nt, d};
    }
    if (!st && n) qsort(ts, n, sizeof *ts, tuple_cmp);
    for (size_t i = 0; !st && i < n; i++) {
        int same = i > 0;
        for (size_t k = 0; same && k < nt; k++) same = !bytes_cmp(ts[i].v[k], ts[i - 1].v[k]);
        if (!same) memcpy(&r->tags[r->ngroups++ * nt], ts[i].v, nt * sizeof *vals);
        dev_group[ts[i].dev] = r->ngroups - 1;
    }
    r->ntags = nt;
    tsf_free(ds->a, vals, (n * nt + 1) * sizeof *vals);
    tsf_free(ds->a, ts, (n + 1) * sizeof *ts);
    return st;
}

typedef struct row_key {
    const agg_slot *s;
    const char *name;
} row_key;

static int row_cmp(const void *x, const void *y)
{
    const agg_slot *a = ((const row_key *)x)->s, *b = ((const row_key *)y)->s;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->win != b->win) return a->win < b->win ? -1 : 1;
    return a->col < b->col ? -1 : a->col > b->col;
}

tsf_status tsf_dataset_aggregate(tsf_dataset *ds, const tsf_dataset_query_options *qopts,
                                 const tsf_dataset_agg_options *opts, tsf_dataset_agg_result **out,
                                 tsf_error *err)
{
    if (!ds || !out) return tsf_err(err, TSF_EINVAL, "tsf_dataset_aggregate: dataset and out are required");
    *out = NULL;
    tsf_dataset_agg_options o;
    tsf_dataset_agg_options_init(&o);
    if (opts) { /* the first published size ends before group_tags */
        if (opts->struct_size != sizeof o && opts->struct_size != offsetof(tsf_dataset_agg_options, group_tags))
            return tsf_err(err, TSF_EINVAL, "tsf_dataset_agg_options.struct_size %zu unknown",
                           opts->struct_size);
        memcpy(&o, opts, opts->struct_size);
        o.struct_size = sizeof o;
    }
    if (o.window < 0)
        return tsf_err(err, TSF_EINVAL, "dataset aggregate: window %lld < 0", (long long)o.window);
    if (o.ngroup_tags && !o.group_tags)
        return tsf_err(err, TSF_EINVAL, "dataset aggregate: ngroup_tags without group_tags");
    agg_ctx c;
    memset(&c, 0, sizeof c);
    c.a = ds->a;
    c.by_device = o.by_device != 0;
    c.window = o.window;
    c.origin = o.window_origin;
    c.path = tsf_path_resolve(ds->ropts.path);
    c.stats.struct_size = sizeof c.stats;
    tsf_dataset_agg_result *r = tsf_calloc(ds->a, 1, sizeof *r);
    size_t *dev_group = NULL;
    if (!r) return tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    r->a = ds->a;
    tsf_status st = TSF_OK;
    if (o.ngroup_tags) {
        if (!(dev_group = tsf_calloc(ds->a, ds->ndevs + 1, sizeof *dev_group)))
            st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
        if (!st) st = tag_groups(ds, &o, dev_group, r, err);
        c.dev_group = dev_group;
    }
    if (!st) st = column_names(ds, qopts, &c, err);
    void *res = NULL;
    if (!st) {
        tsf_dataset_fold_callbacks cb = {sizeof cb, acc_init, acc_fold, acc_merge, acc_free, &c};
        st = tsf_dataset_fold(ds, qopts, &cb, &res, NULL, err);
        if (st == TSF_EIO && __atomic_load_n(&c.oom, __ATOMIC_RELAXED))
            st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    }
    agg_acc *acc = res;
    row_key *keys = NULL;
    if (!st && (!(keys = tsf_calloc(ds->a, acc->n + 1, sizeof *keys)) ||
                !(r->rows = tsf_calloc(ds->a, acc->n + 1, sizeof *r->rows))))
        st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    if (!st) {
        r->names = c.names;
        r->nnames = c.nnames;
        r->names_cap = c.names_cap;
        c.names = NULL;
        for (size_t i = 0; i < acc->n; i++) keys[i].s = &acc->slots[i];
        if (acc->n) qsort(keys, acc->n, sizeof *keys, row_cmp);
        for (size_t i = 0; i < acc->n; i++) {
            const agg_slot *s = keys[i].s;
            tsf_dataset_agg_row *row = &r->rows[i];
            row->device = o.by_device && !o.ngroup_tags ? (size_t)s->group : (size_t)-1;
            row->group = (size_t)s->group;
            row->window_start =
                o.window ? (int64_t)((uint64_t)o.window_origin + (uint64_t)s->win * (uint64_t)o.window)
                         : INT64_MIN;
            row->column = r->names[s->col];
            row->count = s->count;
            row->sum = s->sum;
            row->min = s->min;
            row->max = s->max;
            row->mean = s->count ? s->sum / (double)s->count : 0;
            row->first = s->first;
            row->last = s->last;
            row->first_time = s->first_t;
            row->last_time = s->last_t;
        }
        r->n = acc->n;
        r->stats = c.stats;
        *out = r;
    } else {
        r->n = acc ? acc->n : 0;
        tsf_dataset_agg_result_free(r);
    }
    tsf_free(ds->a, keys, ((acc ? acc->n : 0) + 1) * sizeof *keys);
    if (acc) acc_free(&c, acc);
    tsf_free(ds->a, c.names, c.names_cap * sizeof *c.names);
    tsf_free(ds->a, dev_group, (ds->ndevs + 1) * sizeof *dev_group);
    return st;
}

size_t tsf_dataset_agg_result_count(const tsf_dataset_agg_result *res)
{
    return res ? res->n : 0;
}

const tsf_dataset_agg_row *tsf_dataset_agg_result_row(const tsf_dataset_agg_result *res, size_t i)
{
    return res && i < res->n ? &res->rows[i] : NULL;
}

tsf_status tsf_dataset_agg_result_stats(const tsf_dataset_agg_result *res, tsf_dataset_agg_stats *out,
                                        tsf_error *err)
{
    if (!res || !out || out->struct_size != sizeof *out)
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_agg_result_stats: result and out (struct_size set) required");
    *out = res->stats;
    return TSF_OK;
}

void tsf_dataset_agg_result_free(tsf_dataset_agg_result *res)
{
    if (!res) return;
    tsf_free(res->a, res->rows, (res->n + 1) * sizeof *res->rows);
    tsf_free(res->a, (void *)res->names, res->names_cap * sizeof *res->names);
    tsf_free(res->a, res->tags, res->tags_cap * sizeof *res->tags);
    tsf_free(res->a, res, sizeof *res);
}

tsf_bytes tsf_dataset_agg_result_tag(const tsf_dataset_agg_result *res, size_t group, size_t k)
{
    tsf_bytes none = {NULL, 0};
    if (!res || !res->tags || group >= res->ngroups || k >= res->ntags) return none;
    return res->tags[group * res->ntags + k];
}
