/*
 * epoch.c - the writer's side of one writer and many readers: the wait for every reader registered
 * under the old epoch (membarrier for reader handles where the kernel has it), deferred reclamation of
 * retired memory, and the leaf lock. Readers register in lix_read.h.
 */
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "index_internal.h"

/*
 * membarrier(2): the writer makes every running thread of the process execute a full barrier, so reader
 * handles need none. Registration is per process and idempotent (kernel state, nothing in this library).
 */
static int tsf_lix_membarrier(int cmd)
{
#if defined(__linux__) && defined(SYS_membarrier)
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
#else
    (void)cmd;
    return -1;
#endif
}
#define IX_MB_PRIVATE_EXPEDITED (1 << 3)
#define IX_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

int tsf_lix_asym_register(void)
{
    return tsf_lix_membarrier(IX_MB_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void tsf_lix_synchronize(tsf_index *ix)
{
    uint64_t e = __atomic_load_n(&ix->tsf_rd_epoch, __ATOMIC_RELAXED);
    __atomic_store_n(&ix->tsf_rd_epoch, e + 1, __ATOMIC_SEQ_CST);
    if (ix->asym && tsf_lix_membarrier(IX_MB_PRIVATE_EXPEDITED) != 0) __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (uint32_t s = 0; s < IX_RSLOTS; s++)
        for (uint32_t spin = 0; __atomic_load_n(&ix->rd[s].n[e & 1], __ATOMIC_ACQUIRE) != 0; spin++) {
            if (spin < 64)
                tsf_lix_pause();
            else
                sched_yield();
        }
    /* Reader handles inside a lookup that started under an older epoch (a state from before the flip, or
       published late: then the barrier above guarantees it sees what the writer unlinked). */
    for (uint32_t s = 0; ix->rslots && s < IX_READERS; s++)
        for (uint32_t spin = 0;; spin++) {
            uint64_t st = __atomic_load_n(&ix->rslots[s].state, __ATOMIC_ACQUIRE);
            if (!(st & 1) || st >> 1 == e + 1) break;
            if (spin < 64)
                tsf_lix_pause();
            else
                sched_yield();
        }
}

void tsf_lix_retire(tsf_index *ix, void *p, uint64_t bytes)
{
    if (!p) return;
    if (ix->nret == ix->capret) {
        uint64_t nc = ix->capret ? ix->capret * 2 : 16;
        tsf_lix_retired *r = tsf_realloc(ix->alloc, ix->ret, ix->capret * sizeof *r, nc * sizeof *r);
        if (!r) { /* no room to defer: wait for the readers now */
            tsf_lix_synchronize(ix);
            tsf_free(ix->alloc, p, bytes);
            return;
        }
        ix->ret = r;
        ix->capret = nc;
    }
    ix->ret[ix->nret++] = (tsf_lix_retired){p, bytes};
}

void tsf_lix_reclaim(tsf_index *ix)
{
    if (ix->nret == 0) return;
    tsf_lix_synchronize(ix);
    for (uint64_t i = 0; i < ix->nret; i++) tsf_free(ix->alloc, ix->ret[i].p, ix->ret[i].bytes);
    ix->nret = 0;
}

void tsf_lix_view_retire(tsf_index *ix, tsf_lix_view *v)
{
    if (!v) return;
    tsf_lix_retire(ix, v->k, v->cap * 8);
    tsf_lix_retire(ix, v->v, v->cap * 8);
    tsf_lix_retire(ix, v, sizeof *v);
}

void tsf_lix_leaf_lock(tsf_lix_leaf *L)
{
    for (uint32_t spin = 0; __atomic_exchange_n(&L->lock, 1, __ATOMIC_ACQUIRE); spin++) {
        if (spin < 64)
            tsf_lix_pause();
        else
            sched_yield();
    }
}
