/* cuTensorMapEncodeTiled (host TMA descriptors: Triton's
 * fill_tma_descriptor, from dlsym) passes straight through; a successful
 * call's inputs then go to each module that asks (the fast path, during a
 * call it captures: fastpath/capture.c). Not a launch: nothing recorded. */
#include "interpose/lifecycle.h"
#include "interpose/real.h"
#include "interpose/tmap.h"
#include "interpose/wrappers.h"

#include <string.h>

static void tell_modules(pfn_cuTensorMapEncodeTiled real, CUtensorMapDataType dtype, cuuint32_t rank, void *addr,
                         const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                         const cuuint32_t *estrides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                         CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    int n;
    const struct trlat_module *const *m = trlat_modules(&n);
    struct trlat_tmap_call c;
    int made = 0;
    for (int i = 0; i < n; i++) {
        if (!m[i]->tmap_encoded)
            continue;
        if (!made) {
            c = (struct trlat_tmap_call){.encode = real,
                                         .addr = (uint64_t)(uintptr_t)addr,
                                         .rank = rank,
                                         .dtype = (int)dtype,
                                         .interleave = (int)il,
                                         .swizzle = (int)sw,
                                         .l2 = (int)l2,
                                         .oob = (int)oob};
            memcpy(c.dims, dims, rank * sizeof *dims);
            memcpy(c.box, box, rank * sizeof *box);
            memcpy(c.estrides, estrides, rank * sizeof *estrides);
            if (rank > 1)
                memcpy(c.strides, strides, (rank - 1) * sizeof *strides);
            made = 1;
        }
        m[i]->tmap_encoded(&c);
    }
}

#define TMAP_P                                                                                                  \
    CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *addr, const cuuint64_t *dims,           \
        const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *estrides, CUtensorMapInterleave il, \
        CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob
#define TMAP_A map, dtype, rank, addr, dims, strides, box, estrides, il, sw, l2, oob

CUresult cuTensorMapEncodeTiled(TMAP_P);

static inline __attribute__((always_inline)) CUresult encode_body(enum trlat_fn fn, int slot, void *ret, TMAP_P)
{
    (void)ret;
    pfn_cuTensorMapEncodeTiled real = (pfn_cuTensorMapEncodeTiled)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real(TMAP_A);
    /* the driver checked the arrays' rank entries: they are readable */
    if (rc == CUDA_SUCCESS && rank >= 1 && rank <= TRLAT_TMAP_MAX_RANK && dims && box && estrides &&
        (rank == 1 || strides))
        tell_modules(real, dtype, rank, addr, dims, strides, box, estrides, il, sw, l2, oob);
    return rc;
}

TRLAT_WRAPPERS(cuTensorMapEncodeTiled, encode_body, TMAP_P, TMAP_A)
