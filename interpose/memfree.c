/* The driver calls that free device memory or the address space it lives
 * in (cuMemFree, stream-ordered frees and pool trims, virtual memory
 * unmapped or released, contexts destroyed or reset): each passes straight
 * through and then bumps trlat_mem_epoch. Bumped after the call, so that
 * an address checked while it ran is checked again (devptr.c re-reads the
 * count after asking the driver). */
#include "interpose/memfree.h"
#include "interpose/real.h"
#include "interpose/wrappers.h"

_Atomic uint64_t trlat_mem_epoch;

static inline void freed(void)
{
    atomic_fetch_add_explicit(&trlat_mem_epoch, 1, memory_order_acq_rel);
}

/* Each wrapper's body: the call, then the count bumped. */
#define FREE_BODY(name, PARAMS, ARGS)                                                                                \
    typedef CUresult (*pfn_##name)(PARAMS);                                                                          \
    static inline __attribute__((always_inline)) CUresult name##_body(enum trlat_fn fn, int slot, void *ret, PARAMS) \
    {                                                                                                                \
        (void)ret;                                                                                                   \
        pfn_##name real = (pfn_##name)trlat_real_get(fn, slot);                                                      \
        if (UNLIKELY(!real))                                                                                         \
            return CUDA_ERROR_NOT_INITIALIZED;                                                                       \
        CUresult rc = real(ARGS);                                                                                    \
        freed();                                                                                                     \
        return rc;                                                                                                   \
    }
/* (each used at the top level: a list of parameters passed on from one
 * macro to another would be split at its commas) */

#define PTR_P CUdeviceptr p
#define PTR_A p
#define PTR_STREAM_P CUdeviceptr p, CUstream s
#define PTR_STREAM_A p, s
#define PTR_SIZE_P CUdeviceptr p, size_t n
#define PTR_SIZE_A p, n
#define POOL_SIZE_P CUmemoryPool pool, size_t keep
#define POOL_SIZE_A pool, keep
#define POOL_P CUmemoryPool pool
#define POOL_A pool
#define CTX_P CUcontext ctx
#define CTX_A ctx
#define DEV_P CUdevice dev
#define DEV_A dev

CUresult cuMemFreeAsync_ptsz(PTR_STREAM_P);

FREE_BODY(cuMemFree_v2, PTR_P, PTR_A)
TRLAT_WRAPPERS(cuMemFree_v2, cuMemFree_v2_body, PTR_P, PTR_A)
FREE_BODY(cuMemFreeAsync, PTR_STREAM_P, PTR_STREAM_A)
TRLAT_WRAPPERS(cuMemFreeAsync, cuMemFreeAsync_body, PTR_STREAM_P, PTR_STREAM_A)
FREE_BODY(cuMemFreeAsync_ptsz, PTR_STREAM_P, PTR_STREAM_A)
TRLAT_WRAPPERS(cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz_body, PTR_STREAM_P, PTR_STREAM_A)
FREE_BODY(cuMemUnmap, PTR_SIZE_P, PTR_SIZE_A)
TRLAT_WRAPPERS(cuMemUnmap, cuMemUnmap_body, PTR_SIZE_P, PTR_SIZE_A)
FREE_BODY(cuMemAddressFree, PTR_SIZE_P, PTR_SIZE_A)
TRLAT_WRAPPERS(cuMemAddressFree, cuMemAddressFree_body, PTR_SIZE_P, PTR_SIZE_A)
FREE_BODY(cuMemPoolTrimTo, POOL_SIZE_P, POOL_SIZE_A)
TRLAT_WRAPPERS(cuMemPoolTrimTo, cuMemPoolTrimTo_body, POOL_SIZE_P, POOL_SIZE_A)
FREE_BODY(cuMemPoolDestroy, POOL_P, POOL_A)
TRLAT_WRAPPERS(cuMemPoolDestroy, cuMemPoolDestroy_body, POOL_P, POOL_A)
FREE_BODY(cuCtxDestroy_v2, CTX_P, CTX_A)
TRLAT_WRAPPERS(cuCtxDestroy_v2, cuCtxDestroy_v2_body, CTX_P, CTX_A)
FREE_BODY(cuDevicePrimaryCtxRelease_v2, DEV_P, DEV_A)
TRLAT_WRAPPERS(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2_body, DEV_P, DEV_A)
FREE_BODY(cuDevicePrimaryCtxReset_v2, DEV_P, DEV_A)
TRLAT_WRAPPERS(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset_v2_body, DEV_P, DEV_A)
