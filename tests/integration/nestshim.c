/* A driver shim whose launch entry point forwards by calling another
 * exported launch entry point by name, as a shim that runs per-thread-stream
 * launches as legacy ones does: with NEST_PTSZ, cuLaunchKernel_ptsz calls
 * cuLaunchKernel; without, the reverse. The call by name binds in the
 * global scope, to trlat's wrapper when trlat is preloaded, from inside
 * trlat's wrapper of the shim's entry point. Built two ways
 * (tests/tests.mk): preloaded after trlat, and as the process's
 * libcuda.so.1 in front of the fake driver (renamed libfakecuda.so), as a
 * driver replacement installed in libcuda's place is. Counts the launches
 * it forwarded and says so at exit. */
#include <cuda.h>
#undef cuLaunchKernel

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define LK_PARAMS                                                                                            \
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, \
        CUstream s, void **p, void **e
#define LK_ARGS f, gx, gy, gz, bx, by, bz, sh, s, p, e

CUresult cuLaunchKernel(LK_PARAMS);
CUresult cuLaunchKernel_ptsz(LK_PARAMS);

static atomic_ulong forwarded;

#ifdef NEST_PTSZ
__attribute__((visibility("default"))) CUresult cuLaunchKernel_ptsz(LK_PARAMS)
{
    atomic_fetch_add(&forwarded, 1);
    return cuLaunchKernel(LK_ARGS);
}
#else
__attribute__((visibility("default"))) CUresult cuLaunchKernel(LK_PARAMS)
{
    atomic_fetch_add(&forwarded, 1);
    return cuLaunchKernel_ptsz(LK_ARGS);
}
#endif

__attribute__((destructor)) static void report(void)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "nestshim: %lu launches\n", (unsigned long)atomic_load(&forwarded));
    if (write(2, buf, (size_t)n) < 0)
        return;
}
