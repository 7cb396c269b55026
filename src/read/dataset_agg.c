/*
 * dataset_agg.c - grouped aggregation over a dataset (tsf_dataset_aggregate), built on tsf_dataset_fold.
 *
 * Key: (group, window number, column id). Column ids number the distinct column names the query can return
 * (its column list, else every series and table column name of the dataset), sorted, so a batch column maps
 * to its id by one binary search per batch. An accumulator is an array of slots, one per key, each holding
 * all of the key's aggregates (count, sum, min, max, first, last), found through an open-addressing table;
 * consecutive rows of one column mostly stay in one window, so the last slot is tried first. Each file folds
 * into its own accumulator and the accumulators are merged in file order (tsf_dataset_fold), which fixes
 * every floating-point addition: results do not depend on threads or files_at_once. The merge does not look
 * keys up in a table of the result: it closes the file's open parts and writes the keys' aggregates, ordered
 * by key, as a compact run (the file's slots go back to a free list for the next file); the rows come from
 * one k-way merge of the runs, equal keys combined in file order (the same additions as merging file by
 * file), written straight in row order. With group_tags the
 * group of a device is fixed before the fold: devices are sorted by their tuple of tag values and equal
 * tuples share one group number, so the fold looks the group up per batch. The free lists (slots and tables,
 * runs' arrays) outlive the call in the dataset's reader pool, if it has one (agg_keep).
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/codec.h"
#include "dataset_internal.h"
#include "query_internal.h"

/* TEXT / STRING / BLOB: the least and greatest value so far (owned copies; bhas: one was seen). */
typedef struct agg_bytes {
    uint8_t *bmin, *bmax;
    size_t bmin_n, bmax_n, bmin_cap, bmax_cap;
    uint8_t bhas;
} agg_bytes;

typedef struct agg_slot {
    uint64_t group;
    int64_t win;
    uint64_t col;
    uint64_t count;
    double sum, min, max, first, last; /* sum, min, max: of the closed chunk parts (has: one was merged) */
    int64_t first_t, last_t;
    /* the open parts of the sum rule: the page part (phas) of page pid in chunk cid and the chunk part (chas)
     * of chunk cid; file offsets of the page's body and of the chunk's header (pid 0: no page) */
    uint64_t cid, pid;
    double psum, pmin, pmax, csum, cmin, cmax;
    uint8_t has, chas, phas;
    agg_bytes b;
} agg_slot;

/* A key's aggregate over one file, closed (a run of the result): its bytes, if any, are bytes[bi - 1] of the
 * run. */
typedef struct agg_out {
    uint64_t group;
    int64_t win;
    uint64_t col;
    uint64_t count;
    double sum, min, max, first, last;
    int64_t first_t, last_t;
    uint32_t bi;
    uint8_t has;
} agg_out;

/* A file's aggregates ordered by key (the result's runs; see acc_merge). */
typedef struct agg_part {
    agg_out *outs;
    size_t n, cap;
    agg_bytes *bytes;
    size_t nbytes;
} agg_part;

/* The memory of a file's accumulator, kept for the next file's (page faults of new memory rival the fold). */
typedef struct agg_mem {
    agg_slot *slots;
    size_t cap;
    size_t *tab;
    size_t tcap;
    const agg_slot **order;
    size_t ocap;
} agg_mem;

/* An array of runs kept for a later file's (capacity in agg_out). */
typedef struct agg_outs {
    agg_out *p;
    size_t cap;
} agg_outs;

#define AGG_KEEP_MEM 4
#define AGG_KEEP_OUTS 4
#define AGG_KEEP_BYTES ((size_t)32 << 20)

/* What an aggregation leaves in the dataset's reader pool for the next one (tsf_rd_pool_keep_give): memory of
 * finished accumulators and runs, at most AGG_KEEP_BYTES. A Dask worker aggregates one file per call; without
 * it every call faults its tables in again (and allocators that return freed memory at once make that
 * certain). */
typedef struct agg_keep {
    const tsf_allocator *a;
    agg_mem mem[AGG_KEEP_MEM];
    size_t nmem;
    agg_outs outs[AGG_KEEP_OUTS];
    size_t nouts;
} agg_keep;

static const char agg_keep_kind = 0;

typedef struct agg_acc {
    agg_slot *slots;
    size_t n, cap;
    agg_part *parts; /* the result: the files' runs in file order */
    size_t nparts, parts_cap;
    const agg_slot **order; /* acc_merge's ordering of the slots */
    size_t ocap;
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
    /* how values were taken (tsf_dataset_agg_stats): units from statistics, and the chunk and page each
     * column's values were last decoded from (per column id: a new one counts) */
    uint64_t chunks_stats, pages_stats, points_stats, chunks_dec, pages_dec;
    uint64_t *dec_cid, *dec_pid;
    size_t ndec;
    int failed; /* out of memory in a statistics answer: the file's fold fails */
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
    size_t hint; /* most slots a file's accumulator took so far (atomic): the next ones start that large */
    pthread_mutex_t mem_mu;
    agg_mem mem[AGG_WORKERS_MAX]; /* accumulators' memory to reuse, tables cleared (under mem_mu) */
    size_t nmem;
    agg_outs outs[AGG_KEEP_OUTS]; /* runs' arrays to reuse (under mem_mu) */
    size_t nouts;
    int by_device;
    int64_t window, origin;
    /* per folding thread, filled as file accumulators merge (one merge at a time) */
    tsf_dataset_agg_stats stats;
    pthread_t thr[AGG_WORKERS_MAX];
    const size_t *dev_group; /* group_tags: group of each dataset device (NULL otherwise) */
    tsf_codec_path path;     /* the INT64 kernels' (the dataset's reader option, resolved) */
    int force;               /* tsf_dataset_agg_options.force_decode */
    int64_t tmin, tmax;      /* the query's time range */
} agg_ctx;

struct tsf_dataset_agg_result {
    const tsf_allocator *a;
    tsf_dataset_agg_row *rows;
    size_t n, rows_cap;
    const char **names;
    size_t nnames, names_cap;
    tsf_dataset_agg_stats stats;
    tsf_bytes *tags; /* group_tags: ngroups x ntags values */
    size_t ngroups, ntags, tags_cap;
    uint8_t *bytes; /* the rows' min_bytes / max_bytes */
    size_t bytes_cap;
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

static void acc_free(void *ctx, void *p);

static void *acc_init(void *ctx)
{
    agg_ctx *c = ctx;
    agg_acc *acc = tsf_calloc(c->a, 1, sizeof(agg_acc));
    if (!acc) return NULL;
    acc->thr = pthread_self();
    acc->t_init = acc->t_end = now_ns();
    acc->ndec = c->nnames + 1;
    acc->dec_cid = tsf_calloc(c->a, acc->ndec, sizeof *acc->dec_cid);
    acc->dec_pid = tsf_calloc(c->a, acc->ndec, sizeof *acc->dec_pid);
    if (!acc->dec_cid || !acc->dec_pid) {
        acc_free(ctx, acc);
        return NULL;
    }
    return acc;
}

/* At an accumulator's first key: the memory a finished one left, if any (the result's accumulator, which
 * holds no keys, takes none). */
static void acc_mem_take(agg_ctx *c, agg_acc *acc)
{
    agg_mem m = {0};
    pthread_mutex_lock(&c->mem_mu);
    if (c->nmem) m = c->mem[--c->nmem];
    pthread_mutex_unlock(&c->mem_mu);
    acc->slots = m.slots, acc->cap = m.cap;
    acc->tab = m.tab, acc->tcap = m.tcap;
    acc->order = m.order, acc->ocap = m.ocap;
}

static void bytes_free(const agg_ctx *c, agg_bytes *b)
{
    tsf_free(c->a, b->bmin, b->bmin_cap);
    tsf_free(c->a, b->bmax, b->bmax_cap);
    memset(b, 0, sizeof *b);
}

static size_t mem_bytes(const agg_mem *m)
{
    return m->cap * sizeof *m->slots + m->tcap * sizeof *m->tab + m->ocap * sizeof *m->order;
}

static void mem_free(const tsf_allocator *a, agg_mem *m)
{
    tsf_free(a, m->slots, m->cap * sizeof *m->slots);
    tsf_free(a, m->tab, m->tcap * sizeof *m->tab);
    tsf_free(a, m->order, m->ocap * sizeof *m->order);
    memset(m, 0, sizeof *m);
}

static void keep_drop(void *p)
{
    agg_keep *k = p;
    for (size_t i = 0; i < k->nmem; i++) mem_free(k->a, &k->mem[i]);
    for (size_t i = 0; i < k->nouts; i++) tsf_free(k->a, k->outs[i].p, k->outs[i].cap * sizeof *k->outs[i].p);
    tsf_free(k->a, k, sizeof *k);
}

/* Empties an accumulator's table for the next file: only the entries of its n slots when they are few. */
static void tab_clear(agg_acc *acc)
{
    if (!acc->tab) return;
    if (acc->n * 8 > acc->tcap) {
        memset(acc->tab, 0, acc->tcap * sizeof *acc->tab);
        return;
    }
    for (size_t i = 0; i < acc->n; i++) {
        const agg_slot *s = &acc->slots[i];
        size_t h = key_hash(s->group, s->win, s->col) & (acc->tcap - 1);
        while (acc->tab[h] != i + 1) h = (h + 1) & (acc->tcap - 1);
        acc->tab[h] = 0;
    }
}

/* Gives a run's array back for reuse (freed when AGG_KEEP_OUTS are kept; the smallest is replaced). */
static void outs_leave(agg_ctx *c, agg_out *p, size_t cap)
{
    if (!p) return;
    pthread_mutex_lock(&c->mem_mu);
    if (c->nouts < AGG_KEEP_OUTS) {
        c->outs[c->nouts++] = (agg_outs){p, cap};
        p = NULL;
    } else {
        size_t m = 0;
        for (size_t i = 1; i < c->nouts; i++)
            if (c->outs[i].cap < c->outs[m].cap) m = i;
        if (c->outs[m].cap < cap) {
            agg_outs o = c->outs[m];
            c->outs[m] = (agg_outs){p, cap};
            p = o.p, cap = o.cap;
        }
    }
    pthread_mutex_unlock(&c->mem_mu);
    tsf_free(c->a, p, cap * sizeof *p);
}

/* A run's array for n aggregates: a kept one large enough (the smallest such), else a new one. */
static agg_out *outs_take(agg_ctx *c, size_t n, size_t *cap)
{
    agg_out *p = NULL;
    pthread_mutex_lock(&c->mem_mu);
    size_t best = c->nouts;
    for (size_t i = 0; i < c->nouts; i++)
        if (c->outs[i].cap >= n && (best == c->nouts || c->outs[i].cap < c->outs[best].cap)) best = i;
    if (best < c->nouts) {
        p = c->outs[best].p;
        *cap = c->outs[best].cap;
        c->outs[best] = c->outs[--c->nouts];
    }
    pthread_mutex_unlock(&c->mem_mu);
    if (!p) {
        p = tsf_alloc(c->a, n * sizeof *p);
        *cap = n;
    }
    return p;
}

static void acc_free(void *ctx, void *p)
{
    agg_ctx *c = ctx;
    agg_acc *acc = p;
    if (!acc) return;
    for (size_t i = 0; i < acc->n; i++) bytes_free(c, &acc->slots[i].b);
    for (size_t i = 0; i < acc->nparts; i++) {
        agg_part *t = &acc->parts[i];
        for (size_t k = 0; k < t->nbytes; k++) bytes_free(c, &t->bytes[k]);
        tsf_free(c->a, t->bytes, t->nbytes * sizeof *t->bytes);
        outs_leave(c, t->outs, t->cap);
    }
    tsf_free(c->a, acc->parts, acc->parts_cap * sizeof *acc->parts);
    tab_clear(acc);
    agg_mem m = {acc->slots, acc->cap, acc->tab, acc->tcap, acc->order, acc->ocap};
    if (m.slots || m.tab || m.order) {
        pthread_mutex_lock(&c->mem_mu);
        if (c->nmem < AGG_WORKERS_MAX) {
            c->mem[c->nmem++] = m;
            m = (agg_mem){0};
        }
        pthread_mutex_unlock(&c->mem_mu);
        mem_free(c->a, &m);
    }
    tsf_free(c->a, acc->runs, acc->runs_cap * sizeof *acc->runs);
    tsf_free(c->a, acc->dec_cid, acc->ndec * sizeof *acc->dec_cid);
    tsf_free(c->a, acc->dec_pid, acc->ndec * sizeof *acc->dec_pid);
    tsf_free(c->a, acc, sizeof *acc);
}

/* The slot of a key, added (zeroed aggregates) when new; NULL on out of memory. */
static agg_slot *slot_of(agg_ctx *c, agg_acc *acc, uint64_t g, int64_t w, uint64_t col)
{
    if (acc->last) {
        agg_slot *s = &acc->slots[acc->last - 1];
        if (s->group == g && s->win == w && s->col == col) return s;
    }
    if (!acc->tcap && !acc->cap) acc_mem_take(c, acc);
    if (2 * (acc->n + 1) > acc->tcap) {
        size_t nc = acc->tcap ? 2 * acc->tcap : 64;
        if (!acc->tcap) /* a file's first key: room for as many as the largest file so far */
            while (nc < 2 * __atomic_load_n(&c->hint, __ATOMIC_RELAXED) && nc < ((size_t)1 << 40)) nc *= 2;
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
        size_t nc = acc->cap ? 2 * acc->cap : acc->tcap / 2;
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

/* ---- the sum rule: page parts, chunk parts, files ----
 * A key's sum, min and max are built as the writer builds statistics: a page part starts from its first
 * value and takes the next values in row order (sum += v; min / max replaced on a strict < / >); a chunk
 * part merges its page parts in order, the file's aggregate its chunk parts in order (a merge into an empty
 * part copies, else sum += and the strict comparisons), and the result the files' aggregates in file order
 * (acc_merge). So a page or chunk answered from its statistics and the same unit decoded give the same bits. */

/* Merges the aggregates (sum, mn, mx) of a unit into a part (*has: the part holds values). */
static inline void part_merge(uint8_t *has, double *sum, double *mn, double *mx, double usum, double umn,
                              double umx)
{
    if (!*has) {
        *sum = usum, *mn = umn, *mx = umx, *has = 1;
        return;
    }
    *sum += usum;
    if (umn < *mn) *mn = umn;
    if (umx > *mx) *mx = umx;
}

static void close_page(agg_slot *s)
{
    if (s->phas) part_merge(&s->chas, &s->csum, &s->cmin, &s->cmax, s->psum, s->pmin, s->pmax);
    s->phas = 0;
}

static void close_chunk(agg_slot *s)
{
    close_page(s);
    if (s->chas) part_merge(&s->has, &s->sum, &s->min, &s->max, s->csum, s->cmin, s->cmax);
    s->chas = 0;
}

/* Values of page pid of chunk cid follow: the open parts of other units close. */
static inline void slot_enter(agg_slot *s, uint64_t cid, uint64_t pid)
{
    if (s->pid == pid && s->cid == cid) return;
    if (s->cid != cid)
        close_chunk(s);
    else
        close_page(s);
    s->cid = cid, s->pid = pid;
}

/* first / last and the count of n values at times t0 .. t1 (first value vf, last vl). */
static inline void slot_ends(agg_slot *s, uint64_t n, int64_t t0, double vf, int64_t t1, double vl)
{
    if (!s->count) {
        s->first_t = t0, s->first = vf;
        s->last_t = t1, s->last = vl;
    } else {
        if (t0 < s->first_t) s->first_t = t0, s->first = vf;
        if (t1 >= s->last_t) s->last_t = t1, s->last = vl;
    }
    s->count += n;
}

/* Adds one value (or, with has = 0, one non-numeric value: count only) at time t to the page part. */
static void slot_add(agg_slot *s, int has, double v, int64_t t)
{
    slot_ends(s, 1, t, has ? v : 0, t, has ? v : 0);
    if (!has) return;
    if (!s->phas) {
        s->psum = s->pmin = s->pmax = v, s->phas = 1;
        return;
    }
    s->psum += v;
    if (v < s->pmin) s->pmin = v;
    if (v > s->pmax) s->pmax = v;
}

/* Rows [a, b) of a run: strictly ascending times in one window and one page, every value present. The first
 * and last row carry the run's first and last time, so first / last are updated once; the page part's sum, min
 * and max go value by value in row order (the same additions and comparisons as slot_add, without a branch). */
#define RUN_KERNEL(NAME, T)                                                                                    \
    static void NAME(agg_slot *s, const T *v, const int64_t *t, size_t a, size_t b)                           \
    {                                                                                                          \
        slot_ends(s, b - a, t[a], (double)v[a], t[b - 1], (double)v[b - 1]);                                   \
        if (!s->phas) {                                                                                        \
            s->psum = s->pmin = s->pmax = (double)v[a], s->phas = 1;                                           \
            a++;                                                                                               \
        }                                                                                                      \
        double sum = s->psum, mn = s->pmin, mx = s->pmax;                                                      \
        for (size_t i = a; i < b; i++) {                                                                       \
            double x = (double)v[i];                                                                           \
            sum += x;                                                                                          \
            mn = x < mn ? x : mn;                                                                              \
            mx = x > mx ? x : mx;                                                                              \
        }                                                                                                      \
        s->psum = sum, s->pmin = mn, s->pmax = mx;                                                             \
    }
RUN_KERNEL(run_f64, double)
RUN_KERNEL(run_i64_seq, int64_t)
RUN_KERNEL(run_i32, int32_t)
RUN_KERNEL(run_f32, float)
RUN_KERNEL(run_u8, uint8_t)
#undef RUN_KERNEL

/* INT64 rows [a, b) of a run. When |page part so far| + (b - a) * max |v| <= 2^52 (a bound), every partial sum
 * of the row-by-row rule is an integer a double holds exactly, so it equals the exact integer sum, which is then
 * added in integers (no floating-point latency chain); min / max in integers convert to the same doubles,
 * since the conversion is monotonic. Otherwise the row-by-row kernel. The integer min, max and sum (mod 2^64)
 * come from the codec's summary kernels of path p (SIMD or their portable twin). */
static void run_i64(agg_slot *s, tsf_codec_path p, const int64_t *v, const int64_t *t, size_t a, size_t b)
{
    if (!s->phas) {
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
    if (fabs(s->psum) + (double)(b - a) * (double)big > lim / 2) { /* margin for the rounding of the bound */
        run_i64_seq(s, v, t, a, b);
        return;
    }
    slot_ends(s, b - a, t[a], (double)v[a], t[b - 1], (double)v[b - 1]);
    s->psum += (double)(int64_t)sm.sum;
    if ((double)mn < s->pmin) s->pmin = (double)mn;
    if ((double)mx > s->pmax) s->pmax = (double)mx;
}

/* Rows [a, b) of a run for DOUBLE columns without nulls, AGG_LANES columns at once (s[j] over values v[j]): each
 * column's page part goes row by row in row order exactly as run_f64, so every result is the same to the bit;
 * the columns' addition chains are independent, so one core overlaps their latencies instead of waiting on one
 * chain. */
#define AGG_LANES 4
static void run_f64_lanes(agg_slot *const *s, const double *const *v, const int64_t *t, size_t a, size_t b)
{
    int fresh = 0; /* a page part starts here: row a goes first, value by value (slot_add's first value) */
    for (int j = 0; j < AGG_LANES; j++) {
        slot_ends(s[j], b - a, t[a], v[j][a], t[b - 1], v[j][b - 1]);
        fresh |= !s[j]->phas;
    }
    if (fresh) {
        for (int j = 0; j < AGG_LANES; j++) {
            agg_slot *o = s[j];
            double x = v[j][a];
            if (!o->phas) {
                o->psum = o->pmin = o->pmax = x, o->phas = 1;
                continue;
            }
            o->psum += x;
            o->pmin = x < o->pmin ? x : o->pmin;
            o->pmax = x > o->pmax ? x : o->pmax;
        }
        a++;
    }
    double sum[AGG_LANES], mn[AGG_LANES], mx[AGG_LANES];
    for (int j = 0; j < AGG_LANES; j++) sum[j] = s[j]->psum, mn[j] = s[j]->pmin, mx[j] = s[j]->pmax;
    for (size_t i = a; i < b; i++) {
        for (int j = 0; j < AGG_LANES; j++) {
            double x = v[j][i];
            sum[j] += x;
            mn[j] = x < mn[j] ? x : mn[j];
            mx[j] = x > mx[j] ? x : mx[j];
        }
    }
    for (int j = 0; j < AGG_LANES; j++) s[j]->psum = sum[j], s[j]->pmin = mn[j], s[j]->pmax = mx[j];
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
    for (; a + 64 <= b; a += 64) { /* 64 rows a word */
        uint64_t w;
        memcpy(&w, v + a / 8, sizeof w);
        if (w != UINT64_MAX) return 0;
    }
    for (; a + 8 <= b; a += 8)
        if (v[a / 8] != 0xFF) return 0;
    for (; a < b; a++)
        if (!((v[a / 8] >> (a % 8)) & 1)) return 0;
    return 1;
}

/* Bytes in unsigned order, a prefix first (null data: first; the aggregate's values and the tag tuples). */
static int bytes_cmp(tsf_bytes x, tsf_bytes y)
{
    if (!x.data || !y.data) return !!x.data - !!y.data; /* null first */
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.data, y.data, n) : 0;
    return c ? c : (x.len > y.len) - (x.len < y.len);
}

/* *buf (capacity *cap) := the n bytes at v; -1 out of memory. */
static int bytes_set(const tsf_allocator *a, uint8_t **buf, size_t *len, size_t *cap, const uint8_t *v, size_t n)
{
    if (n > *cap) {
        size_t nc = *cap ? *cap : 16;
        while (nc < n) nc = nc > SIZE_MAX / 2 ? n : nc * 2;
        uint8_t *p = tsf_realloc(a, *buf, *cap, nc);
        if (!p) return -1;
        *buf = p;
        *cap = nc;
    }
    if (n) memcpy(*buf, v, n);
    *len = n;
    return 0;
}

/* Value v of n bytes into the slot's least and greatest values; -1 out of memory. */
static int bytes_put(const tsf_allocator *a, agg_bytes *s, const uint8_t *v, size_t n)
{
    if (!s->bhas || bytes_cmp((tsf_bytes){v, n}, (tsf_bytes){s->bmin, s->bmin_n}) < 0)
        if (bytes_set(a, &s->bmin, &s->bmin_n, &s->bmin_cap, v, n)) return -1;
    if (!s->bhas || bytes_cmp((tsf_bytes){v, n}, (tsf_bytes){s->bmax, s->bmax_n}) > 0)
        if (bytes_set(a, &s->bmax, &s->bmax_n, &s->bmax_cap, v, n)) return -1;
    s->bhas = 1;
    return 0;
}

/* The valid values of rows [a, b) of a TEXT / STRING / BLOB column into the slot; -1 out of memory. */
static int run_bytes(const tsf_allocator *al, agg_slot *s, const tsf_column_batch *cb, size_t a, size_t b)
{
    const tsf_bytes *v = cb->values;
    for (size_t r = a; r < b; r++) {
        if (cb->validity && !((cb->validity[r / 8] >> (r % 8)) & 1)) continue;
        if (bytes_put(al, &s->b, v[r].data, v[r].len)) return -1;
    }
    return 0;
}

static int is_bytes(tsf_type t)
{
    return t == TSF_TEXT || t == TSF_STRING || t == TSF_BLOB;
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

/* The runs of AGG_LANES DOUBLE columns (ids col[], values v[], from pages pid[] of chunks cid[]) of one batch;
 * non-zero on out of memory. */
static int fold_lanes(agg_ctx *c, agg_acc *acc, uint64_t g, const int64_t *t, size_t nruns,
                      const uint64_t *col, const double *const *v, const uint64_t *cid, const uint64_t *pid)
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
        for (int j = 0; j < AGG_LANES; j++) {
            s[j] = &acc->slots[at[j]];
            slot_enter(s[j], cid[j], pid[j]);
        }
        run_f64_lanes(s, v, t, ru->a, ru->b);
    }
    return 0;
}

/* 1 when some row of [0, n) is valid. */
static int any_valid(const uint8_t *v, size_t n)
{
    if (!v) return n > 0;
    size_t i = 0;
    for (; i + 8 <= n / 8; i += 8) { /* 64 rows a word */
        uint64_t w;
        memcpy(&w, v + i, sizeof w);
        if (w) return 1;
    }
    for (; i < n / 8; i++)
        if (v[i]) return 1;
    for (size_t r = n & ~(size_t)7; r < n; r++)
        if ((v[r / 8] >> (r % 8)) & 1) return 1;
    return 0;
}

static int acc_fold(void *ctx, void *p, const tsf_dataset_batch *b, const tsf_query *q)
{
    agg_ctx *c = ctx;
    agg_acc *acc = p;
    if (acc->failed) goto oom;
    uint64_t t0 = now_ns();
    uint64_t g = c->dev_group ? (uint64_t)c->dev_group[b->device] : c->by_device ? (uint64_t)b->device : 0;
    const int64_t *t = b->rows.times;
    size_t n = b->rows.nrows, nruns = batch_runs(c, acc, t, n);
    if (nruns == (size_t)-1) goto oom;
    /* DOUBLE columns without nulls go AGG_LANES at a time through run_f64_lanes; the others one by one */
    uint64_t lane_col[AGG_LANES], lane_cid[AGG_LANES], lane_pid[AGG_LANES];
    const double *lane_v[AGG_LANES];
    int lanes = 0;
    for (size_t k = 0; k < b->rows.ncolumns; k++) {
        const tsf_column_batch *cb = &b->rows.columns[k];
        if (cb->type == TSF_VECTOR) continue; /* a column the device lacks: all null */
        const char **at = bsearch(&cb->name, c->names, c->nnames, sizeof *c->names, name_cmp);
        if (!at) continue;
        uint64_t col = (uint64_t)(at - c->names), cid, pid;
        tsf_rd_query_col_unit(q, k, &cid, &pid); /* a batch never spans pages */
        if ((cid != acc->dec_cid[col] || pid != acc->dec_pid[col]) && any_valid(cb->validity, n)) {
            acc->chunks_dec += cid != acc->dec_cid[col];
            acc->pages_dec++;
            acc->dec_cid[col] = cid, acc->dec_pid[col] = pid;
        }
        if (cb->type == TSF_DOUBLE && all_valid(cb->validity, 0, n)) {
            lane_col[lanes] = col, lane_cid[lanes] = cid, lane_pid[lanes] = pid;
            lane_v[lanes++] = cb->values;
            if (lanes == AGG_LANES && fold_lanes(c, acc, g, t, nruns, lane_col, lane_v, lane_cid, lane_pid))
                goto oom;
            lanes %= AGG_LANES;
            continue;
        }
        int num = numeric(cb->type);
        for (size_t i = 0; i < nruns; i++) {
            const agg_run *ru = &acc->runs[i];
            agg_slot *s = slot_of(c, acc, g, ru->win, col);
            if (!s) goto oom;
            slot_enter(s, cid, pid);
            run_add(s, c->path, cb, t, ru->a, ru->b, num);
            if (is_bytes(cb->type) && run_bytes(c->a, s, cb, ru->a, ru->b)) goto oom;
        }
    }
    for (int j = 0; j < lanes; j++) { /* the last columns alone */
        for (size_t i = 0; i < nruns; i++) {
            const agg_run *ru = &acc->runs[i];
            agg_slot *s = slot_of(c, acc, g, ru->win, lane_col[j]);
            if (!s) goto oom;
            slot_enter(s, lane_cid[j], lane_pid[j]);
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

static int acc_fold_plain(void *ctx, void *p, const tsf_dataset_batch *b)
{
    (void)ctx, (void)p, (void)b;
    return -1; /* the aggregation folds through tsf_rd_ds_fold's fold_q */
}

/* Magnitude bound of a unit's integer values: n * max(|min|, |max|) < 2^53 makes every partial sum of the
 * sum rule exact, so the statistics sum (however the writer added it) is the decoded sum. */
static int int_exact(uint64_t n, int64_t mn, int64_t mx)
{
    uint64_t amn = mn < 0 ? 0 - (uint64_t)mn : (uint64_t)mn, amx = mx < 0 ? 0 - (uint64_t)mx : (uint64_t)mx;
    uint64_t big = amn > amx ? amn : amx;
    return (double)n * (double)big < 9007199254740992.0;
}

/* A whole chunk (page_off 0) or page of `column` of dataset device dev offered by the file's query before it
 * is read (query_internal.h): taken from its statistics when they are usable (see doc/dataset.md). */
static int acc_unit(void *ctx, void *p, size_t dev, const char *column, tsf_type type, const tsf_fmt_stats *st,
                    int enc, uint64_t cid, uint64_t pid)
{
    agg_ctx *c = ctx;
    agg_acc *acc = p;
    if (c->force || acc->failed || !numeric(type) || st->type != type || !st->count) return TSF_RD_UNIT_DECODE;
    if (st->start_time > st->end_time || st->start_time < c->tmin || st->end_time > c->tmax)
        return TSF_RD_UNIT_DECODE;
    int64_t w = window_of(c, st->start_time);
    if (w != window_of(c, st->end_time)) return TSF_RD_UNIT_DECODE;
    double sum, mn, mx, first, last;
    switch (type) {
    case TSF_BOOLEAN:
        if (st->v.b.sum < 0 || (uint64_t)st->v.b.sum > st->count) return TSF_RD_UNIT_DECODE;
        sum = (double)st->v.b.sum;
        mn = (uint64_t)st->v.b.sum < st->count ? 0 : 1;
        mx = st->v.b.sum > 0;
        first = st->v.b.first != 0, last = st->v.b.last != 0;
        break;
    case TSF_INT32:
    case TSF_DATE:
        if (!int_exact(st->count, st->v.i32.min, st->v.i32.max)) return TSF_RD_UNIT_DECODE;
        sum = (double)st->v.i32.sum, mn = st->v.i32.min, mx = st->v.i32.max;
        first = st->v.i32.first, last = st->v.i32.last;
        break;
    case TSF_INT64:
    case TSF_TIMESTAMP:
        if (!int_exact(st->count, st->v.i64.min, st->v.i64.max)) return TSF_RD_UNIT_DECODE;
        sum = st->v.i64.sum, mn = (double)st->v.i64.min, mx = (double)st->v.i64.max;
        first = (double)st->v.i64.first, last = (double)st->v.i64.last;
        break;
    case TSF_FLOAT:
    case TSF_DOUBLE:
        /* statistics of lossy encodings describe the writer's input, not what decodes */
        if (enc == TSF_RD_ENC_UNKNOWN) return TSF_RD_UNIT_NEED_ENC;
        if (tsf_rd_lossy(type, (tsf_encoding)enc)) return TSF_RD_UNIT_DECODE;
        if (type == TSF_FLOAT) {
            sum = st->v.f32.sum, mn = st->v.f32.min, mx = st->v.f32.max;
            first = st->v.f32.first, last = st->v.f32.last;
        } else {
            sum = st->v.f64.sum, mn = st->v.f64.min, mx = st->v.f64.max;
            first = st->v.f64.first, last = st->v.f64.last;
        }
        break;
    default:
        return TSF_RD_UNIT_DECODE;
    }
    const char **at = bsearch(&column, c->names, c->nnames, sizeof *c->names, name_cmp);
    if (!at) return TSF_RD_UNIT_DECODE;
    uint64_t g = c->dev_group ? (uint64_t)c->dev_group[dev] : c->by_device ? (uint64_t)dev : 0;
    agg_slot *s = slot_of(c, acc, g, w, (uint64_t)(at - c->names));
    if (!s) { /* the next fold call or the merge reports it */
        acc->failed = 1;
        __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
        return TSF_RD_UNIT_TAKEN;
    }
    slot_enter(s, cid, pid);
    if (pid) {
        part_merge(&s->phas, &s->psum, &s->pmin, &s->pmax, sum, mn, mx);
        acc->pages_stats++;
    } else {
        close_page(s);
        part_merge(&s->chas, &s->csum, &s->cmin, &s->cmax, sum, mn, mx);
        acc->chunks_stats++;
    }
    slot_ends(s, st->count, st->start_time, first, st->end_time, last);
    acc->points_stats += st->count;
    acc->folded = 1;
    acc->t_end = now_ns();
    return TSF_RD_UNIT_TAKEN;
}

/* A file's accumulator's timing and counters join the result's (merges run one at a time). */
static void stats_merge(agg_ctx *c, const agg_acc *f, uint64_t points)
{
    tsf_dataset_agg_stats *st = &c->stats;
    st->chunks_from_stats += f->chunks_stats;
    st->pages_from_stats += f->pages_stats;
    st->points_from_stats += f->points_stats;
    st->chunks_decoded += f->chunks_dec;
    st->pages_decoded += f->pages_dec;
    st->points_decoded += points - f->points_stats;
    if (!f->folded) return; /* the result's accumulator, or a file without batches */
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

static int key_cmp(const agg_slot *a, const agg_slot *b)
{
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->win != b->win) return a->win < b->win ? -1 : 1;
    return a->col < b->col ? -1 : a->col > b->col;
}

static int order_cmp(const void *x, const void *y)
{
    return key_cmp(*(const agg_slot *const *)x, *(const agg_slot *const *)y);
}

/* A file's accumulator into the result: each key's open parts close (its file aggregate is complete) and the
 * keys' aggregates, ordered by key, become the result's next run; the runs combine in file order when the
 * rows are made (agg_rows). The file's slots stay with it, for the next file's accumulator. */
static int acc_merge(void *ctx, void *into, void *from)
{
    agg_ctx *c = ctx;
    agg_acc *a = into, *f = from;
    if (f->failed) return -1;
    uint64_t points = 0;
    size_t nb = 0;
    int sorted = 1;
    for (size_t i = 0; i < f->n; i++) {
        close_chunk(&f->slots[i]);
        points += f->slots[i].count;
        nb += f->slots[i].b.bhas;
        if (i && key_cmp(&f->slots[i - 1], &f->slots[i]) > 0) sorted = 0;
    }
    size_t h = __atomic_load_n(&c->hint, __ATOMIC_RELAXED);
    if (f->n > h) __atomic_store_n(&c->hint, f->n, __ATOMIC_RELAXED);
    stats_merge(c, f, points);
    if (!f->n) return 0;
    if (a->nparts == a->parts_cap) {
        size_t nc = a->parts_cap ? 2 * a->parts_cap : 16;
        agg_part *p = tsf_realloc(c->a, a->parts, a->parts_cap * sizeof *p, nc * sizeof *p);
        if (!p) goto oom;
        a->parts = p;
        a->parts_cap = nc;
    }
    if (!sorted && f->n > f->ocap) {
        const agg_slot **o = tsf_realloc(c->a, f->order, f->ocap * sizeof *o, f->n * sizeof *o);
        if (!o) goto oom;
        f->order = o;
        f->ocap = f->n;
    }
    agg_part t = {NULL, f->n, 0, nb ? tsf_calloc(c->a, nb, sizeof *t.bytes) : NULL, 0};
    t.outs = outs_take(c, f->n, &t.cap);
    if (!t.outs || (nb && !t.bytes)) {
        tsf_free(c->a, t.outs, t.cap * sizeof *t.outs);
        tsf_free(c->a, t.bytes, nb * sizeof *t.bytes);
        goto oom;
    }
    if (!sorted) {
        for (size_t i = 0; i < f->n; i++) f->order[i] = &f->slots[i];
        qsort(f->order, f->n, sizeof *f->order, order_cmp);
    }
    for (size_t i = 0; i < f->n; i++) {
        agg_slot *s = sorted ? &f->slots[i] : (agg_slot *)f->order[i];
        agg_out *o = &t.outs[i];
        *o = (agg_out){s->group, s->win,   s->col,     s->count, s->sum, s->min, s->max,
                       s->first, s->last, s->first_t, s->last_t, 0,      s->has};
        if (s->b.bhas) {
            t.bytes[t.nbytes] = s->b; /* moved */
            memset(&s->b, 0, sizeof s->b);
            o->bi = (uint32_t)++t.nbytes;
        }
    }
    a->parts[a->nparts++] = t;
    return 0;
oom:
    __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
    return -1;
}

/* Folds the next file's aggregate of a key (src, its bytes sb) into m / mb, the key's aggregate over the
 * files before (the file-by-file merge rule; bytes are copied, or moved when src is the first to count). */
static int out_merge(const agg_ctx *c, agg_out *m, agg_bytes *mb, const agg_out *src, agg_bytes *sb)
{
    if (!m->count) {
        bytes_free(c, mb);
        *m = *src;
        if (sb) {
            *mb = *sb;
            memset(sb, 0, sizeof *sb);
        }
        return 0;
    }
    if (!src->count) return 0; /* a key without values in that file (a column null there): nothing */
    if (sb && sb->bhas && (bytes_put(c->a, mb, sb->bmin, sb->bmin_n) || bytes_put(c->a, mb, sb->bmax, sb->bmax_n)))
        return -1;
    if (src->has) part_merge(&m->has, &m->sum, &m->min, &m->max, src->sum, src->min, src->max);
    if (src->first_t < m->first_t) m->first_t = src->first_t, m->first = src->first;
    if (src->last_t >= m->last_t) m->last_t = src->last_t, m->last = src->last;
    m->count += src->count;
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

/* The k-way merge of the result's runs: run x's head sorts before run y's (equal keys: the earlier file). */
static int head_before(const agg_acc *acc, const size_t *pos, size_t x, size_t y)
{
    const agg_out *a = &acc->parts[x].outs[pos[x]], *b = &acc->parts[y].outs[pos[y]];
    if (a->group != b->group) return a->group < b->group;
    if (a->win != b->win) return a->win < b->win;
    if (a->col != b->col) return a->col < b->col;
    return x < y;
}

static void heap_down(const agg_acc *acc, const size_t *pos, size_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && head_before(acc, pos, heap[l], heap[m])) m = l;
        if (l + 1 < n && head_before(acc, pos, heap[l + 1], heap[m])) m = l + 1;
        if (m == i) return;
        size_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

/* Appends n bytes to the result's block (offsets: the rows point into it once it stops moving). */
static int blob_put(const tsf_allocator *a, tsf_dataset_agg_result *r, size_t *len, const uint8_t *v, size_t n)
{
    if (!r->bytes || n > r->bytes_cap - *len) {
        size_t nc = r->bytes_cap ? r->bytes_cap : 256;
        while (nc - *len < n) {
            if (nc > SIZE_MAX / 2) return -1;
            nc *= 2;
        }
        uint8_t *p = tsf_realloc(a, r->bytes, r->bytes_cap, nc);
        if (!p) return -1;
        r->bytes = p;
        r->bytes_cap = nc;
    }
    if (n) memcpy(r->bytes + *len, v, n);
    *len += n;
    return 0;
}

/* The rows of the result: the runs merged by key (group, window, column), each key's slots combined in file
 * order (slot_merge), keys without values left out. */
static tsf_status agg_rows(const agg_ctx *c, agg_acc *acc, const tsf_dataset_agg_options *o,
                           tsf_dataset_agg_result *r, tsf_error *err)
{
    const tsf_allocator *al = c->a;
    size_t total = 0, nh = acc->nparts, blen = 0;
    for (size_t i = 0; i < acc->nparts; i++) total += acc->parts[i].n;
    size_t *pos = tsf_calloc(al, nh + 1, sizeof *pos), *heap = tsf_calloc(al, nh + 1, sizeof *heap);
    size_t *boff = NULL; /* per row: 1 + its min and max bytes' offsets in the block, 0 = none (made at the
                          * first bytes) */
    r->rows = tsf_calloc(al, total + 1, sizeof *r->rows);
    r->rows_cap = total + 1;
    tsf_status st = TSF_OK;
    if (!pos || !heap || !r->rows) st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    for (size_t i = 0; !st && i < nh; i++) heap[i] = i;
    for (size_t i = nh / 2; !st && i-- > 0;) heap_down(acc, pos, heap, nh, i);
    while (!st && nh) {
        agg_out m;
        agg_bytes mb;
        memset(&m, 0, sizeof m);
        memset(&mb, 0, sizeof mb);
        const agg_out *key = &acc->parts[heap[0]].outs[pos[heap[0]]];
        uint64_t g = key->group, col = key->col;
        int64_t w = key->win;
        while (nh) {
            size_t x = heap[0];
            const agg_out *src = &acc->parts[x].outs[pos[x]];
            if (src->group != g || src->win != w || src->col != col) break;
            if (out_merge(c, &m, &mb, src, src->bi ? &acc->parts[x].bytes[src->bi - 1] : NULL)) {
                st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
                break;
            }
            if (++pos[x] == acc->parts[x].n) heap[0] = heap[--nh];
            heap_down(acc, pos, heap, nh, 0);
        }
        if (!st && m.count) {
            tsf_dataset_agg_row *row = &r->rows[r->n];
            row->device = o->by_device && !o->ngroup_tags ? (size_t)m.group : (size_t)-1;
            row->group = (size_t)m.group;
            row->window_start =
                o->window ? (int64_t)((uint64_t)o->window_origin + (uint64_t)m.win * (uint64_t)o->window)
                          : INT64_MIN;
            row->column = r->names[m.col];
            row->count = m.count;
            row->sum = m.sum;
            row->min = m.min;
            row->max = m.max;
            row->mean = m.sum / (double)m.count;
            row->first = m.first;
            row->last = m.last;
            row->first_time = m.first_t;
            row->last_time = m.last_t;
            if (mb.bhas) {
                if (!boff && !(boff = tsf_calloc(al, 2 * (total + 1), sizeof *boff)))
                    st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
                if (!st) {
                    boff[2 * r->n] = blen + 1;
                    row->min_bytes.len = mb.bmin_n;
                    boff[2 * r->n + 1] = blen + mb.bmin_n + 1;
                    row->max_bytes.len = mb.bmax_n;
                    if (blob_put(al, r, &blen, mb.bmin, mb.bmin_n) || blob_put(al, r, &blen, mb.bmax, mb.bmax_n))
                        st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
                }
            }
            r->n++;
        }
        bytes_free(c, &mb);
    }
    if (!st && boff)
        for (size_t i = 0; i < r->n; i++)
            if (boff[2 * i]) {
                r->rows[i].min_bytes.data = r->bytes + boff[2 * i] - 1;
                r->rows[i].max_bytes.data = r->bytes + boff[2 * i + 1] - 1;
            }
    tsf_free(al, boff, boff ? 2 * (total + 1) * sizeof *boff : 0);
    tsf_free(al, pos, (acc->nparts + 1) * sizeof *pos);
    tsf_free(al, heap, (acc->nparts + 1) * sizeof *heap);
    return st;
}

/* The memory an earlier aggregation left in the dataset's reader pool, into c's free lists. */
static void keep_take(tsf_dataset *ds, agg_ctx *c)
{
    agg_keep *k = tsf_rd_pool_keep_take(ds->pool, &agg_keep_kind);
    if (!k) return;
    if (k->a == c->a) {
        for (; k->nmem && c->nmem < AGG_WORKERS_MAX; c->nmem++) c->mem[c->nmem] = k->mem[--k->nmem];
        for (; k->nouts && c->nouts < AGG_KEEP_OUTS; c->nouts++) c->outs[c->nouts] = k->outs[--k->nouts];
    }
    keep_drop(k);
}

/* c's free lists into the dataset's reader pool for the next aggregation (up to AGG_KEEP_BYTES; the rest, and
 * all of it without a pool, freed). */
static void keep_leave(tsf_dataset *ds, agg_ctx *c)
{
    agg_keep *k = ds->pool ? tsf_calloc(c->a, 1, sizeof *k) : NULL;
    size_t bytes = 0;
    if (k) k->a = c->a;
    for (size_t i = 0; i < c->nmem; i++) {
        size_t b = mem_bytes(&c->mem[i]);
        if (k && k->nmem < AGG_KEEP_MEM && bytes + b <= AGG_KEEP_BYTES) {
            k->mem[k->nmem++] = c->mem[i];
            bytes += b;
        } else {
            mem_free(c->a, &c->mem[i]);
        }
    }
    for (size_t i = 0; i < c->nouts; i++) {
        size_t b = c->outs[i].cap * sizeof *c->outs[i].p;
        if (k && k->nouts < AGG_KEEP_OUTS && bytes + b <= AGG_KEEP_BYTES) {
            k->outs[k->nouts++] = c->outs[i];
            bytes += b;
        } else {
            tsf_free(c->a, c->outs[i].p, b);
        }
    }
    c->nmem = c->nouts = 0;
    if (!k) return;
    if ((!k->nmem && !k->nouts) || tsf_rd_pool_keep_give(ds->pool, &agg_keep_kind, k, keep_drop)) keep_drop(k);
}

tsf_status tsf_dataset_aggregate(tsf_dataset *ds, const tsf_dataset_query_options *qopts,
                                 const tsf_dataset_agg_options *opts, tsf_dataset_agg_result **out,
                                 tsf_error *err)
{
    if (!ds || !out) return tsf_err(err, TSF_EINVAL, "tsf_dataset_aggregate: dataset and out are required");
    *out = NULL;
    tsf_dataset_agg_options o;
    tsf_dataset_agg_options_init(&o);
    if (opts) { /* earlier published sizes end before group_tags, before force_decode */
        if (opts->struct_size != sizeof o && opts->struct_size != offsetof(tsf_dataset_agg_options, group_tags) &&
            opts->struct_size != offsetof(tsf_dataset_agg_options, force_decode))
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
    c.force = o.force_decode != 0;
    c.tmin = qopts ? qopts->time_min : INT64_MIN;
    c.tmax = qopts ? qopts->time_max : INT64_MAX;
    if (pthread_mutex_init(&c.mem_mu, NULL)) return tsf_err(err, TSF_ENOMEM, "dataset aggregate: cannot create a lock");
    keep_take(ds, &c);
    tsf_dataset_agg_result *r = tsf_calloc(ds->a, 1, sizeof *r);
    size_t *dev_group = NULL;
    if (!r) {
        keep_leave(ds, &c);
        pthread_mutex_destroy(&c.mem_mu);
        return tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    }
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
        tsf_dataset_fold_callbacks cb = {sizeof cb, acc_init, acc_fold_plain, acc_merge, acc_free, &c};
        tsf_rd_ds_fold_ext ext = {acc_fold, acc_unit};
        st = tsf_rd_ds_fold(ds, qopts, &cb, &ext, &res, NULL, err);
        if (st == TSF_EIO && __atomic_load_n(&c.oom, __ATOMIC_RELAXED))
            st = tsf_err(err, TSF_ENOMEM, "dataset aggregate: out of memory");
    }
    agg_acc *acc = res;
    if (!st) {
        r->names = c.names;
        r->nnames = c.nnames;
        r->names_cap = c.names_cap;
        c.names = NULL;
        st = agg_rows(&c, acc, &o, r, err);
        r->stats = c.stats;
    }
    if (st)
        tsf_dataset_agg_result_free(r);
    else
        *out = r;
    if (acc) acc_free(&c, acc);
    keep_leave(ds, &c);
    pthread_mutex_destroy(&c.mem_mu);
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
    /* the first published size ends before chunks_from_stats */
    size_t old = offsetof(tsf_dataset_agg_stats, chunks_from_stats);
    if (!res || !out || (out->struct_size != sizeof *out && out->struct_size != old))
        return tsf_err(err, TSF_EINVAL, "tsf_dataset_agg_result_stats: result and out (struct_size set) required");
    size_t n = out->struct_size;
    memcpy(out, &res->stats, n);
    out->struct_size = n;
    return TSF_OK;
}

void tsf_dataset_agg_result_free(tsf_dataset_agg_result *res)
{
    if (!res) return;
    tsf_free(res->a, res->rows, res->rows_cap * sizeof *res->rows);
    tsf_free(res->a, (void *)res->names, res->names_cap * sizeof *res->names);
    tsf_free(res->a, res->tags, res->tags_cap * sizeof *res->tags);
    tsf_free(res->a, res->bytes, res->bytes_cap);
    tsf_free(res->a, res, sizeof *res);
}

tsf_bytes tsf_dataset_agg_result_tag(const tsf_dataset_agg_result *res, size_t group, size_t k)
{
    tsf_bytes none = {NULL, 0};
    if (!res || !res->tags || group >= res->ngroups || k >= res->ntags) return none;
    return res->tags[group * res->ntags + k];
}
