/* The driver API as trlat sees it. cuda.h renames many entry points with
 * macros (cuGetProcAddress -> cuGetProcAddress_v2, cuLaunchKernel ->
 * cuLaunchKernel_ptsz under per-thread default stream), so trlat includes it
 * for types only and declares every entry point it wraps itself, by its
 * exported (binary) name. */
#ifndef TRLAT_CUDA_API_H
#define TRLAT_CUDA_API_H

#include <cuda.h>

#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuLaunchCooperativeKernel

typedef CUresult (*pfn_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       CUstream, void **, void **);
typedef CUresult (*pfn_cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*pfn_cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                                  unsigned, unsigned, CUstream, void **);
typedef CUresult (*pfn_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_cuLibraryGetKernel)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*pfn_cuKernelGetFunction)(CUfunction *, CUkernel);
typedef CUresult (*pfn_cuGetProcAddress)(const char *, void **, int, cuuint64_t);
typedef CUresult (*pfn_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*pfn_cuFuncGetName)(const char **, CUfunction);
typedef CUresult (*pfn_cuKernelGetName)(const char **, CUkernel);

#include "interpose/fn_list.h"

#endif
