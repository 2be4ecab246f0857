/* The slot map: where this call's pointers and scalars go in a memoized
 * parameter block. Derived from the compiled kernel's signature (the wants,
 * in Triton's parameter order: driver.py make_launcher's `params` lists the
 * non-constexpr arguments, then &global_scratch, &profile_scratch) and
 * checked byte for byte against the block the call actually launched. */
#include "fastpath/fp.h"

int fp_slotmap_build(const struct fp_want *w, unsigned nwant, const uint32_t *off, const uint32_t *size,
                     unsigned nparams, const unsigned char *blob, uint32_t blob_len, struct fp_slot *slots,
                     unsigned *nslots)
{
    *nslots = 0;
    if (nparams != nwant + 2)
        return FP_MAP_BAD;
    for (unsigned i = 0; i < nparams; i++)
        if ((uint64_t)off[i] + size[i] > blob_len)
            return FP_MAP_BAD;
    /* The two scratch pointers: CudaLauncher.__call__ allocates them on
     * every launch when the kernel needs them (global_scratch_size,
     * profile_scratch_size > 0); a replay would reuse a stale allocation. */
    for (unsigned i = nwant; i < nparams; i++) {
        if (size[i] != 8)
            return FP_MAP_BAD;
        uint64_t p;
        memcpy(&p, blob + off[i], 8);
        if (p)
            return FP_MAP_SCRATCH;
    }
    int ident = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < nwant; i++) {
        if (w[i].spec == FP_S_FIXED)
            continue; /* the value is in the key: nothing to write */
        unsigned width = fp_spec_width(w[i].spec);
        uint32_t at = off[i];
        if (w[i].spec == FP_S_TMADDR) {
            /* a tensor map: the address where its encoder keeps it (tmap_learn.c) */
            width = 8;
            if (w[i].sub == FP_TMAP_UNKNOWN || size[i] != 128 || w[i].sub > 120) {
                ident = 1;
                continue;
            }
            at += w[i].sub;
        } else if (!width || size[i] != width) {
            ident = 1;
            continue;
        }
        uint64_t got = 0;
        memcpy(&got, blob + at, width);
        uint64_t want = width == 8 ? w[i].val : w[i].val & (((uint64_t)1 << (8 * width)) - 1);
        if (got != want) {
            ident = 1; /* e.g. a pointer cuPointerGetAttribute translated */
            continue;
        }
        slots[n++] = (struct fp_slot){.off = at, .want = (uint16_t)i, .width = (uint8_t)width};
    }
    /* 8-byte slots first, then 4, then 1, each in parameter order:
     * fp_slots_patch writes a run without asking each slot its width */
    for (unsigned i = 1; i < n; i++) {
        struct fp_slot x = slots[i];
        unsigned j = i;
        for (; j > 0 && slots[j - 1].width < x.width; j--)
            slots[j] = slots[j - 1];
        slots[j] = x;
    }
    *nslots = n;
    return ident ? FP_MAP_IDENT : FP_MAP_VALUE;
}
