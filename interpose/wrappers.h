/* Defines an entry point's wrappers: the exported symbol (slot 0) and the
 * spare slots 1..3 that cuGetProcAddress may hand out (see real.h). `body`
 * is an always-inline function taking (fn, slot, return address, args...). */
#ifndef TRLAT_WRAPPERS_H
#define TRLAT_WRAPPERS_H

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#include "interpose/cuda_api.h"
#include "interpose/lifecycle.h"

#define TRLAT_WRAPPERS(name, body, PARAMS, ARGS)                            \
    TRLAT_EXPORT CUresult name(PARAMS)                                      \
    {                                                                       \
        return body(TRLAT_FN_##name, 0, __builtin_return_address(0), ARGS); \
    }                                                                       \
    CUresult name##_s1(PARAMS);                                             \
    CUresult name##_s2(PARAMS);                                             \
    CUresult name##_s3(PARAMS);                                             \
    CUresult name##_s1(PARAMS)                                              \
    {                                                                       \
        return body(TRLAT_FN_##name, 1, __builtin_return_address(0), ARGS); \
    }                                                                       \
    CUresult name##_s2(PARAMS)                                              \
    {                                                                       \
        return body(TRLAT_FN_##name, 2, __builtin_return_address(0), ARGS); \
    }                                                                       \
    CUresult name##_s3(PARAMS)                                              \
    {                                                                       \
        return body(TRLAT_FN_##name, 3, __builtin_return_address(0), ARGS); \
    }

#endif
