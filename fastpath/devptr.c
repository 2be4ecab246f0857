/* Which addresses are device memory, for the arguments other than torch's
 * tensors that Triton takes by their data_ptr() (FlagGems' StridedBuffer):
 * Triton's launcher asks the driver about each such pointer at every launch
 * (getPointer: cuPointerGetAttribute) and raises for memory CUDA does not
 * know, which no replay may launch. The fast path asks once per allocation
 * (its range, one cuPointerGetAttributes) and keeps what it learnt until
 * the program frees device memory in any way (interpose/memfree.c counts
 * those calls). Only device memory whose device address is the address
 * itself is kept: Triton would launch exactly that pointer. Called under
 * the GIL, which guards the table. */
#include "fastpath/fp.h"
#include "interpose/memfree.h"
#include "interpose/real.h"

#define RANGES 16

typedef CUresult (*pfn_attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

static struct {
    uint64_t lo, n;
} ranges[RANGES];
static unsigned nranges, next_slot;
static uint64_t ranges_epoch;

static int learn(uint64_t p, uint64_t epoch)
{
    static pfn_attrs get;
    static int looked;
    if (!looked) {
        get = (pfn_attrs)trlat_libcuda_sym("cuPointerGetAttributes");
        looked = 1;
    }
    if (!get)
        return 0;
    CUpointer_attribute at[4] = {CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    CUdeviceptr dev = 0, start = 0;
    unsigned type = 0;
    size_t size = 0;
    void *data[4] = {&dev, &type, &start, &size};
    /* memory CUDA does not know: success, with the answers zero */
    if (get(4, at, data, (CUdeviceptr)p) != CUDA_SUCCESS || dev != p || type != CU_MEMORYTYPE_DEVICE || !size ||
        p < start || p - start >= size)
        return 0;
    if (trlat_mem_epoch_now() != epoch)
        return 0; /* freed while asked: not kept */
    unsigned k = nranges < RANGES ? nranges++ : next_slot++ % RANGES;
    ranges[k].lo = start;
    ranges[k].n = size;
    return 1;
}

int fp_devptr_known(uint64_t p)
{
    uint64_t epoch = trlat_mem_epoch_now();
    if (epoch != ranges_epoch) {
        nranges = next_slot = 0;
        ranges_epoch = epoch;
    }
    for (unsigned i = 0; i < nranges; i++)
        if (p - ranges[i].lo < ranges[i].n)
            return 1;
    return learn(p, epoch);
}
