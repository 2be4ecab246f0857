/* cuGetProcAddress (the v1 ABI of CUDA 11.3) and cuGetProcAddress_v2 (12.0+):
 * the driver answers first; when it hands out a wrapped entry point, the
 * caller gets trlat's wrapper for exactly that pointer instead (per-thread
 * stream variants map to the _ptsz wrappers). Asking for "cuGetProcAddress"
 * itself returns the wrapper of the ABI that cudaVersion selects. */
#include "interpose/real.h"
#include "interpose/wrappers.h"

#include <string.h>

/* The frees (memfree.c), each by the base name and the version from which
 * the driver hands out the _v2 that trlat wraps (older ABIs: not wrapped). */
static int free_for_symbol(const char *sym, int cuda_version, int ptds)
{
    static const struct {
        const char *name;
        int since;
        enum trlat_fn fn;
    } T[] = {{"cuMemFree", 3020, TRLAT_FN_cuMemFree_v2},
             {"cuMemUnmap", 0, TRLAT_FN_cuMemUnmap},
             {"cuMemAddressFree", 0, TRLAT_FN_cuMemAddressFree},
             {"cuMemPoolTrimTo", 0, TRLAT_FN_cuMemPoolTrimTo},
             {"cuMemPoolDestroy", 0, TRLAT_FN_cuMemPoolDestroy},
             {"cuCtxDestroy", 4000, TRLAT_FN_cuCtxDestroy_v2},
             {"cuDevicePrimaryCtxRelease", 11000, TRLAT_FN_cuDevicePrimaryCtxRelease_v2},
             {"cuDevicePrimaryCtxReset", 11000, TRLAT_FN_cuDevicePrimaryCtxReset_v2}};
    if (strcmp(sym, "cuMemFreeAsync") == 0)
        return ptds ? TRLAT_FN_cuMemFreeAsync_ptsz : TRLAT_FN_cuMemFreeAsync;
    for (unsigned i = 0; i < sizeof T / sizeof T[0]; i++)
        if (strcmp(sym, T[i].name) == 0)
            return cuda_version >= T[i].since ? (int)T[i].fn : -1;
    return -1;
}

static int fn_for_symbol(const char *sym, int cuda_version, cuuint64_t flags)
{
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (!sym || sym[0] != 'c' || sym[1] != 'u')
        return -1;
    if (strcmp(sym, "cuLaunchKernel") == 0)
        return ptds ? TRLAT_FN_cuLaunchKernel_ptsz : TRLAT_FN_cuLaunchKernel;
    if (strcmp(sym, "cuLaunchKernelEx") == 0)
        return ptds ? TRLAT_FN_cuLaunchKernelEx_ptsz : TRLAT_FN_cuLaunchKernelEx;
    if (strcmp(sym, "cuLaunchCooperativeKernel") == 0)
        return ptds ? TRLAT_FN_cuLaunchCooperativeKernel_ptsz : TRLAT_FN_cuLaunchCooperativeKernel;
    if (strcmp(sym, "cuModuleGetFunction") == 0)
        return TRLAT_FN_cuModuleGetFunction;
    if (strcmp(sym, "cuLibraryGetKernel") == 0)
        return TRLAT_FN_cuLibraryGetKernel;
    if (strcmp(sym, "cuKernelGetFunction") == 0)
        return TRLAT_FN_cuKernelGetFunction;
    if (strcmp(sym, "cuGetProcAddress") == 0)
        return cuda_version >= 12000 ? TRLAT_FN_cuGetProcAddress_v2 : TRLAT_FN_cuGetProcAddress;
    if (strcmp(sym, "cuTensorMapEncodeTiled") == 0)
        return TRLAT_FN_cuTensorMapEncodeTiled;
    return free_for_symbol(sym, cuda_version, ptds);
}

static void wrap_result(CUresult rc, const char *sym, void **pfn, int cuda_version, cuuint64_t flags)
{
    if (rc != CUDA_SUCCESS || !pfn || !*pfn)
        return;
    int fn = fn_for_symbol(sym, cuda_version, flags);
    if (fn >= 0 && trlat_active())
        *pfn = trlat_wrap_pointer((enum trlat_fn)fn, *pfn);
}

static inline __attribute__((always_inline)) CUresult
get_proc_address(enum trlat_fn fn, int slot, void *ret, const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    pfn_cuGetProcAddress real = (pfn_cuGetProcAddress)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(sym, pfn, ver, flags);
    wrap_result(rc, sym, pfn, ver, flags);
    return rc;
}

static inline __attribute__((always_inline)) CUresult get_proc_address_v2(enum trlat_fn fn, int slot, void *ret,
                                                                          const char *sym, void **pfn, int ver,
                                                                          cuuint64_t flags,
                                                                          CUdriverProcAddressQueryResult *status)
{
    pfn_cuGetProcAddress_v2 real = (pfn_cuGetProcAddress_v2)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(sym, pfn, ver, flags, status);
    wrap_result(rc, sym, pfn, ver, flags);
    return rc;
}

#define GPA_PARAMS const char *sym, void **pfn, int ver, cuuint64_t flags
#define GPA_ARGS sym, pfn, ver, flags
#define GPA2_PARAMS const char *sym, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *status
#define GPA2_ARGS sym, pfn, ver, flags, status

CUresult cuGetProcAddress(GPA_PARAMS);
TRLAT_WRAPPERS(cuGetProcAddress, get_proc_address, GPA_PARAMS, GPA_ARGS)
TRLAT_WRAPPERS(cuGetProcAddress_v2, get_proc_address_v2, GPA2_PARAMS, GPA2_ARGS)
