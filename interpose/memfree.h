/* A count of the calls that may have freed device memory (memfree.c), so
 * that what was learnt about an address (the fast path's device ranges,
 * fastpath/devptr.c) is forgotten after any of them. */
#ifndef TRLAT_MEMFREE_H
#define TRLAT_MEMFREE_H

#include <stdatomic.h>
#include <stdint.h>

extern _Atomic uint64_t trlat_mem_epoch;

static inline uint64_t trlat_mem_epoch_now(void)
{
    return atomic_load_explicit(&trlat_mem_epoch, memory_order_acquire);
}

#endif
