/* cuTensorMapEncodeTiled's inputs, as the wrapper (tmap.c) hands a
 * successful call to the modules that ask (lifecycle.h's tmap_encoded: the
 * fast path learns from them where a host TMA descriptor holds its
 * address, fastpath/tmap_learn.c). */
#ifndef TRLAT_TMAP_H
#define TRLAT_TMAP_H

#include "interpose/cuda_api.h"

#include <stdint.h>

#define TRLAT_TMAP_MAX_RANK 5 /* the driver's limit */

typedef CUresult (*pfn_cuTensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct trlat_tmap_call {
    pfn_cuTensorMapEncodeTiled encode; /* the driver's, which made it: to encode again */
    uint64_t addr;
    uint32_t rank;
    int dtype, interleave, swizzle, l2, oob;
    uint64_t dims[TRLAT_TMAP_MAX_RANK], strides[TRLAT_TMAP_MAX_RANK]; /* rank, rank - 1 */
    uint32_t box[TRLAT_TMAP_MAX_RANK], estrides[TRLAT_TMAP_MAX_RANK];
};

/* The call again, into map (64-byte aligned), at another address. */
static inline CUresult trlat_tmap_encode_at(const struct trlat_tmap_call *c, void *map, uint64_t addr)
{
    return c->encode((CUtensorMap *)map, (CUtensorMapDataType)c->dtype, c->rank, (void *)(uintptr_t)addr, c->dims,
                     c->strides, c->box, c->estrides, (CUtensorMapInterleave)c->interleave,
                     (CUtensorMapSwizzle)c->swizzle, (CUtensorMapL2promotion)c->l2, (CUtensorMapFloatOOBfill)c->oob);
}

#endif
