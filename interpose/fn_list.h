/* The driver entry points trlat wraps (no cuda.h needed). */
#ifndef TRLAT_FN_LIST_H
#define TRLAT_FN_LIST_H

/* Every entry point trlat wraps, by the name libcuda exports: the launches,
 * the lookups that hand out kernels and entry points, and the calls that
 * free device memory (memfree.c: what the fast path knows of addresses),
 * and the host TMA descriptors' encoder (tmap.c). */
#define TRLAT_WRAPPED(X)              \
    X(cuLaunchKernel)                 \
    X(cuLaunchKernel_ptsz)            \
    X(cuLaunchKernelEx)               \
    X(cuLaunchKernelEx_ptsz)          \
    X(cuLaunchCooperativeKernel)      \
    X(cuLaunchCooperativeKernel_ptsz) \
    X(cuModuleGetFunction)            \
    X(cuLibraryGetKernel)             \
    X(cuKernelGetFunction)            \
    X(cuGetProcAddress)               \
    X(cuGetProcAddress_v2)            \
    X(cuMemFree_v2)                   \
    X(cuMemFreeAsync)                 \
    X(cuMemFreeAsync_ptsz)            \
    X(cuMemUnmap)                     \
    X(cuMemAddressFree)               \
    X(cuMemPoolTrimTo)                \
    X(cuMemPoolDestroy)               \
    X(cuCtxDestroy_v2)                \
    X(cuDevicePrimaryCtxRelease_v2)   \
    X(cuDevicePrimaryCtxReset_v2)     \
    X(cuTensorMapEncodeTiled)

enum trlat_fn {
#define X(n) TRLAT_FN_##n,
    TRLAT_WRAPPED(X)
#undef X
        TRLAT_FN_COUNT
};

/* Real pointers (and wrappers) per entry point: see real.h. */
#define TRLAT_SLOTS 4

#endif
