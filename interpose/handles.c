/* Wrappers of the calls that produce function handles, feeding the name
 * registry: cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction. */
#include "interpose/lifecycle.h"
#include "interpose/names.h"
#include "interpose/real.h"
#include "interpose/wrappers.h"

static inline __attribute__((always_inline)) CUresult module_get_function(enum trlat_fn fn, int slot, void *ret,
                                                                          CUfunction *out, CUmodule m, const char *name)
{
    pfn_cuModuleGetFunction real = (pfn_cuModuleGetFunction)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(out, m, name);
    if (rc == CUDA_SUCCESS && out && *out && trlat_active()) {
        trlat_names_add(*out, name);
        trlat_modules_kernel_loaded();
    }
    return rc;
}

static inline __attribute__((always_inline)) CUresult library_get_kernel(enum trlat_fn fn, int slot, void *ret,
                                                                         CUkernel *out, CUlibrary lib, const char *name)
{
    pfn_cuLibraryGetKernel real = (pfn_cuLibraryGetKernel)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(out, lib, name);
    if (rc == CUDA_SUCCESS && out && *out && trlat_active()) {
        trlat_names_add(*out, name);
        trlat_modules_kernel_loaded();
    }
    return rc;
}

static inline __attribute__((always_inline)) CUresult kernel_get_function(enum trlat_fn fn, int slot, void *ret,
                                                                          CUfunction *out, CUkernel k)
{
    pfn_cuKernelGetFunction real = (pfn_cuKernelGetFunction)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(out, k);
    if (rc == CUDA_SUCCESS && out && *out && trlat_active()) {
        const char *name = trlat_names_get(k);
        if (name)
            trlat_names_add(*out, name);
    }
    return rc;
}

#define MGF_PARAMS CUfunction *out, CUmodule m, const char *name
#define MGF_ARGS out, m, name
#define LGK_PARAMS CUkernel *out, CUlibrary lib, const char *name
#define LGK_ARGS out, lib, name
#define KGF_PARAMS CUfunction *out, CUkernel k
#define KGF_ARGS out, k

TRLAT_WRAPPERS(cuModuleGetFunction, module_get_function, MGF_PARAMS, MGF_ARGS)
TRLAT_WRAPPERS(cuLibraryGetKernel, library_get_kernel, LGK_PARAMS, LGK_ARGS)
TRLAT_WRAPPERS(cuKernelGetFunction, kernel_get_function, KGF_PARAMS, KGF_ARGS)
