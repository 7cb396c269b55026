/*
 * reader_pool.c - open readers kept between queries (doc/reader.md "Reader pool").
 *
 * Entries form one list, most recently used first. An entry is a reader of (path, options) with the identity
 * of the file it reads (stat before and after the open agreed) and the number of holders. Every acquire
 * compares the path's identity now with the entry's: equal -> the reader is handed out again; different ->
 * the entry is marked dead (never handed out again, closed when its last holder releases it) and a new reader
 * is opened. A reader whose file was modified or changed (mtime, ctime) within RACY_NS of its open is dead from
 * the start (used by its query, then closed): a later write within the file system's timestamp granularity
 * could leave every field of the identity unchanged. Readers are opened and closed outside the pool's lock.
 *
 * The decode buffers of closed queries go to the pool, not to their reader: a reader no one holds any more
 * hands its spare buffer sets to the pool's bank (at most BANK sets), and an acquired reader without a set
 * takes one from it. A process reading many files through one pool (a Dask worker, DuckDB) thus decodes
 * every file into the same few sets, already faulted in and warm in cache, instead of one set per kept
 * reader; a reader opened for a file it never read starts with buffers too. Queries that keep memory of
 * their own between calls (the dataset aggregation's tables) bank it here too, by kind (at most KEEP items).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "reader_internal.h"

#define RACY_NS 2000000000LL
#define DEFAULT_MAX 16
#define BANK 8
#define KEEP 8

typedef struct pool_ident {
    uint64_t size, ino, dev;
    int64_t mtime_s, ctime_s;
    long mtime_ns, ctime_ns;
} pool_ident;

typedef struct pool_ent {
    struct pool_ent *prev, *next;
    char *path;
    tsf_reader_options ro;
    pool_ident id;
    tsf_reader *r;
    size_t refs;
    int dead;
} pool_ent;

struct tsf_reader_pool {
    pthread_mutex_t mu;
    pool_ent *head, *tail;
    size_t max;
    tsf_reader_pool_stats st;
    tsf_rd_spare bank[BANK]; /* spare buffer sets of released readers (under mu) */
    size_t nbank;
    struct {
        const void *kind;
        void *mem;
        void (*drop)(void *mem);
    } keep[KEEP]; /* tsf_rd_pool_keep_give's items (under mu) */
    size_t nkeep;
};

void tsf_reader_pool_options_init(tsf_reader_pool_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->max_readers = DEFAULT_MAX;
}

tsf_status tsf_reader_pool_create(tsf_reader_pool **out, const tsf_reader_pool_options *opts, tsf_error *err)
{
    if (!out) return tsf_err(err, TSF_EINVAL, "tsf_reader_pool_create: out is required");
    *out = NULL;
    tsf_reader_pool_options o;
    tsf_reader_pool_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof o)
            return tsf_err(err, TSF_EINVAL, "tsf_reader_pool_options.struct_size %zu unknown", opts->struct_size);
        o = *opts;
    }
    tsf_reader_pool *p = tsf_calloc(NULL, 1, sizeof *p);
    if (!p) return tsf_err(err, TSF_ENOMEM, "reader pool: out of memory");
    if (pthread_mutex_init(&p->mu, NULL)) {
        tsf_free(NULL, p, sizeof *p);
        return tsf_err(err, TSF_ENOMEM, "reader pool: cannot create its lock");
    }
    p->max = o.max_readers;
    p->st.struct_size = sizeof p->st;
    *out = p;
    return TSF_OK;
}

static void unlink_ent(tsf_reader_pool *p, pool_ent *e)
{
    if (e->prev) e->prev->next = e->next;
    else p->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else p->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(tsf_reader_pool *p, pool_ent *e)
{
    e->prev = NULL;
    e->next = p->head;
    if (p->head) p->head->prev = e;
    else p->tail = e;
    p->head = e;
}

static void ent_free(pool_ent *e)
{
    if (!e) return;
    tsf_reader_close(e->r);
    tsf_free(NULL, e->path, strlen(e->path) + 1);
    tsf_free(NULL, e, sizeof *e);
}

/* Closes the entries chained through next (taken out of the pool). */
static void free_chain(pool_ent *e)
{
    while (e) {
        pool_ent *n = e->next;
        ent_free(e);
        e = n;
    }
}

/* Under the lock: takes out the entries no one holds that are dead, then the least recently used kept ones
 * beyond max (all of them with all set); returns them chained for closing outside the lock. */
static pool_ent *trim_locked(tsf_reader_pool *p, int all)
{
    size_t kept = 0;
    pool_ent *out = NULL;
    /* from the most recently used end: idle entries past the first max idle live ones, and dead ones */
    for (pool_ent *e = p->head, *n; e; e = n) {
        n = e->next;
        if (e->refs) continue;
        if (!e->dead && !all && kept < p->max) {
            kept++;
            continue;
        }
        if (!e->dead) p->st.evicted++;
        unlink_ent(p, e);
        p->st.open--;
        e->next = out;
        out = e;
    }
    p->st.kept = kept;
    return out;
}

/* Under the lock: gives r one of the bank's sets (the most recently banked one of r's allocator) if r has
 * none. */
static void bank_give_locked(tsf_reader_pool *p, tsf_reader *r)
{
    for (size_t i = p->nbank; i-- > 0;) {
        if (!tsf_rd_query_spare_give(r, &p->bank[i])) continue;
        memmove(&p->bank[i], &p->bank[i + 1], (p->nbank - i - 1) * sizeof p->bank[0]);
        p->nbank--;
        return;
    }
}

/* Frees the bank's sets and kept items (the caller holds the lock or is the pool's last user). */
static void bank_drop(tsf_reader_pool *p)
{
    for (size_t i = 0; i < p->nbank; i++) tsf_rd_query_spare_drop(&p->bank[i]);
    p->nbank = 0;
    for (size_t i = 0; i < p->nkeep; i++) p->keep[i].drop(p->keep[i].mem);
    p->nkeep = 0;
}

void *tsf_rd_pool_keep_take(tsf_reader_pool *p, const void *kind)
{
    if (!p) return NULL;
    void *mem = NULL;
    pthread_mutex_lock(&p->mu);
    for (size_t i = p->nkeep; i-- > 0;) {
        if (p->keep[i].kind != kind) continue;
        mem = p->keep[i].mem;
        memmove(&p->keep[i], &p->keep[i + 1], (p->nkeep - i - 1) * sizeof p->keep[0]);
        p->nkeep--;
        break;
    }
    pthread_mutex_unlock(&p->mu);
    return mem;
}

int tsf_rd_pool_keep_give(tsf_reader_pool *p, const void *kind, void *mem, void (*drop)(void *mem))
{
    if (!p || !mem) return -1;
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    if (p->nkeep < KEEP) {
        p->keep[p->nkeep].kind = kind;
        p->keep[p->nkeep].mem = mem;
        p->keep[p->nkeep].drop = drop;
        p->nkeep++;
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void tsf_reader_pool_free(tsf_reader_pool *p)
{
    if (!p) return;
    pool_ent *e = p->head;
    p->head = p->tail = NULL;
    free_chain(e);
    bank_drop(p);
    pthread_mutex_destroy(&p->mu);
    tsf_free(NULL, p, sizeof *p);
}

static int ident_of(const char *path, pool_ident *id)
{
    struct stat sb;
    if (stat(path, &sb) || !S_ISREG(sb.st_mode)) return -1;
    *id = (pool_ident){(uint64_t)sb.st_size,       (uint64_t)sb.st_ino,          (uint64_t)sb.st_dev,
                       (int64_t)sb.st_mtim.tv_sec, (int64_t)sb.st_ctim.tv_sec,  sb.st_mtim.tv_nsec,
                       sb.st_ctim.tv_nsec};
    return 0;
}

static int ident_eq(const pool_ident *a, const pool_ident *b)
{
    return a->size == b->size && a->ino == b->ino && a->dev == b->dev && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

/* Modified (mtime) or changed (ctime: also a write that set the mtime back, which tools such as cp -p do)
 * less than RACY_NS before now. */
static int racy(const pool_ident *id)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now)) return 1;
    int64_t m = id->mtime_s * 1000000000LL + id->mtime_ns, c = id->ctime_s * 1000000000LL + id->ctime_ns;
    int64_t t = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
    return (m > c ? m : c) > t - RACY_NS;
}

static int opts_eq(const tsf_reader_options *a, const tsf_reader_options *b)
{
    return a->path == b->path && a->allocator == b->allocator && a->use_pread == b->use_pread &&
           a->page_index == b->page_index && a->checked == b->checked;
}

tsf_status tsf_reader_pool_acquire(tsf_reader_pool *p, const char *path, const tsf_reader_options *opts,
                                   tsf_reader **out, tsf_error *err)
{
    if (!p || !path || !out) return tsf_err(err, TSF_EINVAL, "tsf_reader_pool_acquire: pool, path and out are required");
    *out = NULL;
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    if (opts) {
        if (opts->struct_size < sizeof(size_t) || opts->struct_size > sizeof ro)
            return tsf_err(err, TSF_EINVAL, "tsf_reader_options.struct_size %zu unknown", opts->struct_size);
        memcpy(&ro, opts, opts->struct_size);
        ro.struct_size = sizeof ro;
    }
    if (ro.use_pread < 0) ro.use_pread = 1;
    pool_ident id;
    int have_id = !ident_of(path, &id);
    pthread_mutex_lock(&p->mu);
    for (pool_ent *e = p->head; e && have_id; e = e->next) {
        if (e->dead || strcmp(e->path, path) || !opts_eq(&e->ro, &ro)) continue;
        if (!ident_eq(&e->id, &id)) {
            e->dead = 1; /* the file changed: never handed out again */
            p->st.stale++;
            continue;
        }
        e->refs++;
        unlink_ent(p, e);
        push_front(p, e);
        p->st.hits++;
        bank_give_locked(p, e->r);
        pool_ent *drop = trim_locked(p, 0);
        pthread_mutex_unlock(&p->mu);
        free_chain(drop);
        *out = e->r;
        return TSF_OK;
    }
    pool_ent *drop = trim_locked(p, 0);
    pthread_mutex_unlock(&p->mu);
    free_chain(drop);

    size_t plen = strlen(path) + 1;
    pool_ent *e = tsf_calloc(NULL, 1, sizeof *e);
    char *pc = tsf_alloc(NULL, plen);
    if (!e || !pc) {
        tsf_free(NULL, e, sizeof *e);
        tsf_free(NULL, pc, plen);
        return tsf_err(err, TSF_ENOMEM, "reader pool: out of memory");
    }
    memcpy(pc, path, plen);
    e->path = pc;
    e->ro = ro;
    tsf_status st = tsf_reader_open(&e->r, path, &ro, err);
    if (st) {
        e->r = NULL;
        ent_free(e);
        return st;
    }
    /* kept only when the file seen before the open is the one after it (no replacement in between) and
     * was not modified just now */
    pool_ident after;
    int same = have_id && !ident_of(path, &after) && ident_eq(&id, &after);
    int fresh = same && racy(&id);
    e->id = id;
    e->dead = !same || fresh;
    e->refs = 1;
    pthread_mutex_lock(&p->mu);
    p->st.misses++;
    p->st.racy += (uint64_t)fresh;
    p->st.open++;
    push_front(p, e);
    bank_give_locked(p, e->r);
    pthread_mutex_unlock(&p->mu);
    *out = e->r;
    return TSF_OK;
}

void tsf_reader_pool_release(tsf_reader_pool *p, tsf_reader *r)
{
    if (!p || !r) return;
    pthread_mutex_lock(&p->mu);
    pool_ent *e = p->head;
    while (e && e->r != r) e = e->next;
    if (e && e->refs) {
        e->refs--;
        if (!e->refs) {
            p->nbank += tsf_rd_query_spares_take(r, p->bank + p->nbank, BANK - p->nbank);
            if (!e->dead) { /* most recently used */
                unlink_ent(p, e);
                push_front(p, e);
            }
        }
    }
    pool_ent *drop = trim_locked(p, 0);
    pthread_mutex_unlock(&p->mu);
    free_chain(drop);
}

void tsf_reader_pool_set_max(tsf_reader_pool *p, size_t max_readers)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->max = max_readers;
    pool_ent *drop = trim_locked(p, 0);
    pthread_mutex_unlock(&p->mu);
    free_chain(drop);
}

void tsf_reader_pool_clear(tsf_reader_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    pool_ent *drop = trim_locked(p, 1);
    bank_drop(p);
    pthread_mutex_unlock(&p->mu);
    free_chain(drop);
}

tsf_status tsf_reader_pool_get_stats(tsf_reader_pool *p, tsf_reader_pool_stats *out, tsf_error *err)
{
    if (!p || !out || out->struct_size != sizeof *out)
        return tsf_err(err, TSF_EINVAL, "tsf_reader_pool_get_stats: pool and out (struct_size set) required");
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    out->kept = 0;
    for (const pool_ent *e = p->head; e; e = e->next) out->kept += !e->refs && !e->dead;
    out->max_readers = p->max;
    pthread_mutex_unlock(&p->mu);
    return TSF_OK;
}
